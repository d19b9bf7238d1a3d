# SPDX-License-Identifier: MIT
"""The serving workload's own invariants (bench/serve, docs/serving.md): its truth
conserves GPU time and matches what lineage-validate sees; a seed fixes the plan; the
comparison and the baseline rule fire on a wrong report and stay silent on a right one.
Needs the build's package and _lineage_sim on PYTHONPATH and LINEAGE_VALIDATE (ctest)."""
import copy
import importlib
import json
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
SERVE = os.path.join(HERE, "..", "serve.py")
sys.path.insert(0, os.path.join(HERE, ".."))
import compare  # noqa: E402

# small, with a KV cache small enough that both kinds of preemption happen
ARGS = ["--requests", "30", "--rate", "600", "--prompt-len", "96", "--output-len", "12",
        "--kv-tokens", "600", "--budget", "512", "--max-batch", "16"]


def have_sim():
    try:
        importlib.import_module("_lineage_sim")
    except ImportError as e:
        pytest.skip(f"_lineage_sim not built (needs CUPTI's headers and libcupti): {e}")


def serve(out, *extra):
    have_sim()
    p = subprocess.run([sys.executable, SERVE, "--out", str(out), *ARGS, *extra],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    with open(os.path.join(out, "truth.json")) as f:
        truth = json.load(f)
    with open(os.path.join(out, "run.json")) as f:
        run = json.load(f)
    return truth, run


@pytest.fixture(scope="module")
def run1(tmp_path_factory):
    out = tmp_path_factory.mktemp("serve1")
    truth, run = serve(out, "--seed", "3")
    return out, truth, run


def test_truth_invariants(run1):
    out, truth, run = run1
    steps, reqs = truth["steps"], truth["requests"]
    assert len(reqs) == 30 and run["steps"] == len(steps) > 0
    kinds = {s["kind"] for s in steps}
    assert kinds == {"decode", "mixed"}, kinds          # graph replays and eager steps
    modes = {p["mode"] for r in reqs.values() for p in r["preemptions"]}
    assert modes == {"swap", "recompute"}, modes        # both preemptions exercised
    first = {int(n): [] for n in reqs}
    for s in steps:
        assert sum(t for _, t, _ in s["entries"]) <= 512
        assert len(s["entries"]) <= 16
        assert len({n for n, _, _ in s["entries"]}) == len(s["entries"])
        for n, t, f in s["entries"]:
            assert t >= 1 and f in (1, 2, 5)
            if f == 2:
                assert t == 1
            if f & 4:
                first[n].append(s["step"])
    for n, r in reqs.items():
        n = int(n)
        assert first[n] == [r["first_step"]], (n, first[n])
        assert r["first_token_ns"] == steps[r["first_step"]]["end_ns"]
        assert r["arrival_bracket_ns"][0] <= r["arrival_ns"] <= r["arrival_bracket_ns"][1]
        assert r["first_token_ns"] > r["arrival_ns"]
        assert r["last_step"] == max(r["steps"])
        for p in r["preemptions"]:
            swaps = [w for m, w, _ in (sw for st in steps for sw in
                     [tuple(x) for x in st["swaps"]]) if m == n]
            if p["mode"] == "swap":
                assert swaps.count("out") >= 1 and swaps.count("in") >= 1
    # conservation: every record's time goes to requests, whole, under either rule
    total = sum(e - s for _, _, _, _, s, e, _ in truth["kernels"])
    for split in ("tokens", "equal"):
        per, t = compare.truth_gpu(truth, split)
        assert t == total
        assert abs(sum(v["gpu"] for v in per.values()) - total) < 1e-6 * total
        for v in per.values():
            assert abs(v["prefill"] + v["decode"] + v["other"] - v["gpu"]) < 1e-6 * total
    # copies belong to one request; kernels to their step's requests
    owners = [k for k in truth["kernels"] if k[6] is not None]
    assert owners and all(k[0] == 23 for k in owners)


def test_truth_matches_what_validate_sees(run1):
    out, truth, _ = run1
    exe = os.environ.get("LINEAGE_VALIDATE")
    if not exe:
        pytest.skip("LINEAGE_VALIDATE unset (ctest sets it)")
    p = subprocess.run([exe, "--json", "--expect", str(out / "truth.lt"), str(out / "engine.lt"),
                        str(out / "frontend.lt")], stdout=subprocess.PIPE, text=True)
    res = json.loads(p.stdout)
    assert p.returncode == 0, res.get("findings")
    assert res["truth_records"] == res["matched"] == res["gpu_records"] == len(truth["kernels"])
    assert res["incorrect"] == res["lost"] == res["ambiguous"] == 0


def test_seed_fixes_the_plan(run1, tmp_path):
    _, truth, run = run1
    t2, r2 = serve(tmp_path / "same", "--seed", "3", "--no-lineage")
    assert r2["plan_sha256"] == run["plan_sha256"]          # tracing off: the same plan
    assert [s["entries"] for s in t2["steps"]] == [s["entries"] for s in truth["steps"]]
    assert not os.path.exists(tmp_path / "same" / "engine.lt")
    t3, r3 = serve(tmp_path / "other", "--seed", "4", "--no-lineage")
    assert r3["plan_sha256"] != run["plan_sha256"]


def test_bad_arguments_are_named(tmp_path):
    p = subprocess.run([sys.executable, SERVE, "--out", str(tmp_path), "--requests", "0"],
                       stderr=subprocess.PIPE, text=True)
    assert p.returncode == 2 and "--requests must be >= 1" in p.stderr


# ---------------------------------------------------------------------- compare.py

def perfect_report(truth, split="tokens"):
    """What a right per-request report says about this truth (integer ns)."""
    per, total = compare.truth_gpu(truth, split)
    rows, s = [], 0
    for n, v in per.items():
        g = int(round(v["gpu"]))
        s += g
        tr = truth["requests"][str(n)]
        arr = tr["arrival_ns"]
        rows.append({"request": 100 + n, "proc": 2, "user_id": n, "gpu_ns": g,
                     "prefill_ns": 0, "decode_ns": 0, "other_ns": 0, "records": 1,
                     "split_rule": {"tokens": 1, "equal": 0},
                     "ttft": {"arrival_ns": arr, "scheduled_ns": None,
                              "first_token_ns": tr["first_token_ns"],
                              "ttft_ns": tr["first_token_ns"] - arr, "stretches": [],
                              "dominant": "queue"}, "extra_member": 1})
    return {"per_request": {"split": split, "total_gpu_ns": total, "attributed_ns": s,
                            "unattributed_ns": total - s, "unattributed_records": 0,
                            "conservation_residual_ns": 0, "records": 1, "requests": rows}}


def run_compare(tmp_path, truth, report, validate=None, ann=False):
    paths = {}
    for name, obj in (("truth", truth), ("explain", report)):
        paths[name] = tmp_path / f"{name}.json"
        paths[name].write_text(json.dumps(obj))
    v = validate or {"incorrect": 0, "lost": 0, "ambiguous": 0, "gpu_records":
                     len(truth["kernels"]), "matched": len(truth["kernels"]),
                     "truth_records": len(truth["kernels"])}
    paths["validate"] = tmp_path / "validate.json"
    paths["validate"].write_text(json.dumps(v))
    argv = [sys.executable, os.path.join(HERE, "..", "compare.py"), "--truth", str(paths["truth"]),
            "--explain", str(paths["explain"]), "--validate", str(paths["validate"])]
    if ann:
        argv += ["--annotations", str(ann)]
    return subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_compare_silent_on_a_right_report(run1, tmp_path):
    out, truth, _ = run1
    for split in ("tokens", "equal"):
        p = run_compare(tmp_path, truth, perfect_report(truth, split),
                        ann=out / "annotations.json")
        assert p.returncode == 0, p.stderr
        assert "SERVE requests=30 " in p.stdout and "incorrect=0" in p.stdout
        assert p.stdout.count("BASELINE ") == 2


def test_compare_fires(run1, tmp_path):
    _, truth, _ = run1
    good = perfect_report(truth)
    bad = copy.deepcopy(good)                 # 2 % moved from one request to another
    a, b = bad["per_request"]["requests"][:2]
    d = a["gpu_ns"] // 50
    a["gpu_ns"] -= d
    b["gpu_ns"] += d
    p = run_compare(tmp_path, truth, bad)
    assert p.returncode == 1 and f"request {a['user_id']}" in p.stderr, p.stderr
    bad = copy.deepcopy(good)
    bad["per_request"]["conservation_residual_ns"] = 5
    p = run_compare(tmp_path, truth, bad)
    assert p.returncode == 1 and "residual is 5" in p.stderr
    bad = copy.deepcopy(good)
    bad["per_request"]["unattributed_ns"] += 1
    p = run_compare(tmp_path, truth, bad)
    assert p.returncode == 1 and "conservation" in p.stderr
    bad = copy.deepcopy(good)
    bad["per_request"]["requests"][3]["ttft"]["ttft_ns"] += 10_000_000
    p = run_compare(tmp_path, truth, bad)
    assert p.returncode == 1 and "TTFT: request" in p.stderr
    bad = copy.deepcopy(good)
    del bad["per_request"]["requests"][0]
    p = run_compare(tmp_path, truth, bad)
    assert p.returncode == 1 and "not in the report" in p.stderr
    v = {"incorrect": 2, "lost": 0, "ambiguous": 0, "gpu_records": 1, "matched": 1,
         "truth_records": len(truth["kernels"])}
    p = run_compare(tmp_path, truth, good, validate=v)
    assert p.returncode == 1 and "2 incorrect" in p.stderr
    bad = copy.deepcopy(good)
    del bad["per_request"]["total_gpu_ns"]
    p = run_compare(tmp_path, truth, bad)
    assert p.returncode == 2 and 'no member "total_gpu_ns"' in p.stderr


def synthetic(overlap):
    """Two steps of two requests; with overlap, step 0's last kernel starts inside step 1's
    range (asynchronous scheduling)."""
    truth = {"steps": [{"step": 0, "entries": [[0, 3, 1], [1, 1, 2]]},
                       {"step": 1, "entries": [[0, 1, 2], [1, 1, 2]]}],
             "requests": {"0": {}, "1": {}},
             "kernels": [[22, 1, 0, 7, 100, 200, None], [22, 2, 0, 7, 200, 400, None],
                         [22, 3, 1, 7, 600, 700, None], [23, 500, 1, 13, 650, 660, 1]]}
    if overlap:
        truth["kernels"][1] = [22, 2, 0, 7, 550, 750, None]
    ann = {"steps": [{"step": 0, "start_ns": 50, "end_ns": 90, "requests": [0, 1],
                      "tokens": [3, 1]},
                     {"step": 1, "start_ns": 500, "end_ns": 520, "requests": [0, 1],
                      "tokens": [1, 1]}]}
    return truth, ann


def test_baseline_rule():
    truth, ann = synthetic(False)
    per, _ = compare.truth_gpu(truth, "tokens")
    base, wrong, before, spread = compare.baseline(truth, ann, "tokens")
    assert wrong == 0 and before == 0
    assert spread == 10          # the copy: one request's, spread over the step's two
    assert base[0] == pytest.approx(per[0]["gpu"] + 5) and base[1] == pytest.approx(per[1]["gpu"] - 5)
    truth["kernels"].pop()       # no side-stream copy: the baseline is exact
    per, _ = compare.truth_gpu(truth, "tokens")
    base, *_ = compare.baseline(truth, ann, "tokens")
    assert base == pytest.approx({n: v["gpu"] for n, v in per.items()})
    truth, ann = synthetic(True)  # a kernel of step 0 started in step 1's range
    truth["kernels"].pop()
    per, _ = compare.truth_gpu(truth, "tokens")
    base, wrong, _, _ = compare.baseline(truth, ann, "tokens")
    assert wrong == 200 and base[0] != pytest.approx(per[0]["gpu"])


def test_compare_injected_delay(run1, tmp_path):
    _, truth, _ = run1
    truth = copy.deepcopy(truth)
    n = 7
    tr = truth["requests"][str(n)]
    ft = [s for s in truth["steps"] if s["step"] == tr["first_step"]][0]
    big = 1 + max(tr["scheduled_ns"] - tr["arrival_ns"], ft["end_ns"] - ft["first_start_ns"])
    truth["injected_delays"] = [{"request": n, "step": 0, "stretch": "host",
                                 "cause": "host_delay", "start_ns": 0, "end_ns": big,
                                 "ns": big}]
    good = perfect_report(truth)
    row = [r for r in good["per_request"]["requests"] if r["user_id"] == n][0]
    row["ttft"]["stretches"] = [
        {"name": "queue", "start_ns": 0, "end_ns": 1, "ns": 1, "cause": "queueing",
         "evidence": "observed"},
        {"name": "host", "start_ns": 1, "end_ns": big + 1, "ns": big,
         "cause": "thread_delay", "evidence": "observed"}]
    row["ttft"]["dominant"] = {"stretch": "host", "cause": "thread_delay"}
    p = run_compare(tmp_path, truth, good)
    assert p.returncode == 0 and "INJECTED delays=1 dominant_in_truth=1 named=1" in p.stdout, \
        p.stderr
    row["ttft"]["dominant"] = {"stretch": "execution", "cause": "execution"}
    p = run_compare(tmp_path, truth, good)
    assert p.returncode == 1 and "dominant is {'stretch': 'execution'" in p.stderr, p.stderr
    row["ttft"]["dominant"] = "host"       # a bare name is read too
    row["ttft"]["stretches"][1]["ns"] = big // 2
    p = run_compare(tmp_path, truth, good)
    assert p.returncode == 1 and f"{big} ns were injected" in p.stderr
    # a delay shorter than the request's queueing or execution is not its cause: unscored,
    # and a run whose every delay is unscored checked nothing
    truth["injected_delays"][0]["ns"] = 1
    p = run_compare(tmp_path, truth, good)
    assert p.returncode == 1 and "nothing was scored" in p.stderr


def test_compare_overhead_from_medians(run1, tmp_path):
    _, truth, run = run1
    good = perfect_report(truth)
    files = []
    for i, (mode, cpu) in enumerate([("on", 1.1), ("on", 9.0), ("on", 1.2), ("off", 1.0),
                                     ("off", 0.1), ("off", 1.0)]):
        f = tmp_path / f"run-{i}.json"
        f.write_text(json.dumps({"cpu_s": cpu, "plan_sha256": run["plan_sha256"]}))
        files += [f"--run-{mode}", str(f)]
    p = run_compare(tmp_path, truth, good)
    argv = p.args + files
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert p.returncode == 0, p.stderr
    assert "overhead_cpu_frac=0.2000" in p.stdout and "OVERHEAD runs=3+3" in p.stdout
    (tmp_path / "run-5.json").write_text(json.dumps({"cpu_s": 1.0, "plan_sha256": "x"}))
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert p.returncode == 1 and "did not run the same plan" in p.stderr


def test_run_serving_usage_errors(tmp_path):
    run = os.path.join(HERE, "..", "run-serving.sh")
    p = subprocess.run(["bash", run, str(tmp_path / "nobuild"), str(tmp_path / "o")],
                       stderr=subprocess.PIPE, text=True)
    assert p.returncode == 2 and "is not there (build BUILD_DIR first)" in p.stderr
