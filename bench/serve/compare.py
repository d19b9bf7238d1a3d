#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""compare.py: a serving run (bench/serve/serve.py) scored against its own truth.

    compare.py --truth OUT/truth.json --explain EXPLAIN.json --validate VALIDATE.json
               [--annotations OUT/annotations.json] [--run-on RUN.json --run-off RUN.json]

--explain: `lineage-explain --per-request --json` of the run's traces (its "per_request"
member); --validate: `lineage-validate --expect OUT/truth.lt --json` of the same traces.

The truth's GPU time per request comes from the truth's own bookkeeping (every GPU record's
step and duration, every step's requests and tokens) by the rule the report names in its
"split" member (docs/serving.md, "The truth"): a record of a step is split among the
step's requests by the tokens each contributed ("tokens") or equally ("equal"); a KV swap
copy serves the one request it moves. Prints one line

    SERVE requests= gpu_records= incorrect= gpu_time_err_max= gpu_time_err_mean=
          conservation_residual_ns= ttft_err_max_ns= overhead_cpu_frac=

(errors relative, 0.01 = 1 %), then BASELINE lines (--annotations: what the per-step
annotations give, docs/serving.md "The baseline") and a NOTE per goal that failed.

Exit status: 0 every goal held (per-request GPU time within 1 % of the truth for every
request, conservation exact, the report's total equal to the truth's, 0 incorrect and 0
lost records with every truth label matched, every TTFT within the clock error, every
injected delay's stretch the dominant one of its request's TTFT and at least as long);
1 a goal failed (each named on stderr); 2 an input is unreadable or lacks a member
(named, with the file).
"""
import argparse
import json
import sys

GOAL_REL_ERR = 0.01
SHARE_PREFILL, SHARE_DECODE = 1, 2
MEMCPY = 23


class InputError(Exception):
    pass


def load(path, what):
    try:
        with open(path) as f:
            return json.load(f)
    except OSError as e:
        raise InputError(f"{what} {path}: {e.strerror}") from None
    except ValueError as e:
        raise InputError(f"{what} {path}: not JSON ({e})") from None


def member(obj, key, where):
    if not isinstance(obj, dict) or key not in obj:
        raise InputError(f"{where}: no member \"{key}\"")
    return obj[key]


def truth_gpu(truth, split, where="truth"):
    """Per request number: {gpu, prefill, decode, other} ns by @split; and the total."""
    steps = {s["step"]: s for s in member(truth, "steps", where)}
    per = {int(n): {"gpu": 0.0, "prefill": 0.0, "decode": 0.0, "other": 0.0}
           for n in member(truth, "requests", where)}
    total = 0
    for rec in member(truth, "kernels", where):
        kind, key, step, stream, start, end, owner = rec
        dur = end - start
        total += dur
        if owner is not None:
            per[owner]["gpu"] += dur
            per[owner]["other"] += dur
            continue
        entries = steps[step]["entries"]   # [n, tokens, flags]
        if split == "tokens":
            tok = sum(t for _, t, _ in entries)
            weights = [(n, t / tok, f) for n, t, f in entries]
        else:
            weights = [(n, 1.0 / len(entries), f) for n, _, f in entries]
        for n, w, f in weights:
            per[n]["gpu"] += dur * w
            part = "prefill" if f & SHARE_PREFILL else "decode" if f & SHARE_DECODE else "other"
            per[n][part] += dur * w
    return per, total


def rel(a, b):
    return abs(a - b) / b if b else (0.0 if a == b else float("inf"))


def baseline(truth, ann, split):
    """Per request GPU time from the step annotations and the kernels' times as a profiler
    records them. Rule (the most generous a user can apply): a record belongs to the last
    annotated step whose range began at or before the record's start (each range
    stretched to the next one's beginning: no kernel runs before its launch); its time is
    split among that step's annotated requests (by their tokens, or equally). Returns the
    per-request times, the time assigned to another step than the true one, the time
    before any range, and the swap copies' time spread over a batch."""
    steps = sorted(member(ann, "steps", "annotations"), key=lambda s: s["start_ns"])
    starts = [s["start_ns"] for s in steps]
    per = {int(n): 0.0 for n in truth["requests"]}
    import bisect
    wrong = before = spread = 0
    for kind, key, step, stream, start, end, owner in truth["kernels"]:
        dur = end - start
        i = bisect.bisect_right(starts, start) - 1
        if i < 0:
            before += dur
            continue
        s = steps[i]
        if s["step"] != step:
            wrong += dur
        if owner is not None:
            spread += dur
        reqs, toks = s["requests"], s["tokens"]
        tot = sum(toks) if split == "tokens" else len(reqs)
        for n, t in zip(reqs, toks):
            per[n] += dur * ((t if split == "tokens" else 1) / tot)
    return per, wrong, before, spread


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--truth", required=True)
    p.add_argument("--explain", required=True)
    p.add_argument("--validate", required=True)
    p.add_argument("--annotations")
    p.add_argument("--run-on", action="append", default=[],
                   help="run.json of a run with lineage (repeatable: the median is used)")
    p.add_argument("--run-off", action="append", default=[],
                   help="run.json of a run without lineage (repeatable)")
    a = p.parse_args(argv)
    try:
        return compare(a)
    except InputError as e:
        print(f"compare.py: {e}", file=sys.stderr)
        return 2


def compare(a):
    truth = load(a.truth, "truth")
    ex = load(a.explain, "lineage-explain output")
    val = load(a.validate, "lineage-validate output")
    where = f"lineage-explain output {a.explain}"
    pr = member(ex, "per_request", where)
    split = member(pr, "split", where + ": per_request")
    if split not in ("tokens", "equal"):
        raise InputError(f"{where}: per_request.split is {split!r}, not tokens or equal")
    per, total = truth_gpu(truth, split, f"truth {a.truth}")
    failed = []

    # --- GPU time per request
    rows = {}
    for r in member(pr, "requests", where + ": per_request"):
        uid = r.get("user_id")
        if uid is None:
            continue
        if uid in rows:
            raise InputError(f"{where}: two requests with user_id {uid}")
        rows[uid] = r
    errs, over = [], []
    for n, t in sorted(per.items()):
        r = rows.get(n)
        if r is None:
            failed.append(f"request {n} (user_id) is not in the report")
            continue
        e = rel(member(r, "gpu_ns", f"{where}: request user_id {n}"), t["gpu"])
        errs.append(e)
        if e > GOAL_REL_ERR:
            over.append((e, n))
    err_max = max(errs) if errs else float("nan")
    err_mean = sum(errs) / len(errs) if errs else float("nan")
    for e, n in sorted(over, reverse=True)[:10]:
        failed.append(f"per-request GPU time: request {n} is {e:.4f} off the truth "
                      f"({rows[n]['gpu_ns']} ns against {per[n]['gpu']:.0f} ns; goal "
                      f"<= {GOAL_REL_ERR})")
    if len(over) > 10:
        failed.append(f"per-request GPU time: {len(over) - 10} more requests over "
                      f"{GOAL_REL_ERR}")
    extra = sorted(set(rows) - set(per))
    if extra:
        failed.append(f"the report has requests the truth has not (user_id {extra[:5]})")

    # --- conservation and totals
    resid = member(pr, "conservation_residual_ns", where)
    attributed = member(pr, "attributed_ns", where)
    unattributed = member(pr, "unattributed_ns", where)
    rep_total = member(pr, "total_gpu_ns", where)
    summed = sum(member(r, "gpu_ns", where) for r in pr["requests"])
    if resid != 0:
        failed.append(f"conservation: the report's residual is {resid} ns")
    if summed + unattributed != rep_total:
        failed.append(f"conservation: the requests' sum {summed} + unattributed "
                      f"{unattributed} != total {rep_total} ns")
    if attributed != summed:
        failed.append(f"conservation: attributed_ns {attributed} != the requests' sum {summed}")
    if rep_total != total:
        failed.append(f"total GPU time: the report says {rep_total} ns, the truth "
                      f"{total} ns")

    # --- joins (lineage-validate against the truth labels)
    vwhere = f"lineage-validate output {a.validate}"
    incorrect = member(val, "incorrect", vwhere)
    gpu_records = member(val, "gpu_records", vwhere)
    for k in ("incorrect", "lost", "ambiguous"):
        if member(val, k, vwhere):
            failed.append(f"lineage-validate: {val[k]} {k} GPU records")
    if member(val, "matched", vwhere) != member(val, "truth_records", vwhere):
        failed.append(f"lineage-validate: {val['matched']} of {val['truth_records']} truth "
                      "labels matched")
    if len(truth["kernels"]) != val["truth_records"]:
        failed.append(f"the truth file has {val['truth_records']} labels, truth.json "
                      f"{len(truth['kernels'])} records")

    # --- TTFT: the truth's first token is exact on the engine trace's clock (the simulated
    # device runs on it); its arrival is bracketed by two CLOCK_MONOTONIC reads around the
    # front end's request begin. The clock error: half that bracket, plus how far each
    # process's trace clock was seen from CLOCK_MONOTONIC (its probes, width included).
    probes = truth.get("clock_probes") or {}
    drift = 0
    for proc in ("engine", "frontend"):
        ps = probes.get(proc) or []
        if not ps:
            raise InputError(f"truth {a.truth}: no clock probes of the {proc} (a run "
                             "without lineage?)")
        drift += max(abs(off) + w for _, off, w in ps)
    ttft_errs = []
    for n, tr in truth["requests"].items():
        n = int(n)
        r = rows.get(n)
        if r is None or tr.get("first_token_ns") is None:
            continue
        tt = r.get("ttft")
        if not tt or tt.get("ttft_ns") is None:
            failed.append(f"TTFT: request {n} has none in the report")
            continue
        lo, hi = tr["arrival_bracket_ns"]
        true_ttft = tr["first_token_ns"] - (lo + hi) // 2
        err = abs(tt["ttft_ns"] - true_ttft)
        bound = (hi - lo + 1) // 2 + 1 + drift
        ttft_errs.append(err)
        if err > bound:
            failed.append(f"TTFT: request {n}: {tt['ttft_ns']} ns against the truth's "
                          f"{true_ttft} ns (error {err} ns, clock error {bound} ns; "
                          f"first token {tt.get('first_token_ns')} against "
                          f"{tr['first_token_ns']}, arrival {tt.get('arrival_ns')} against "
                          f"[{lo}, {hi}])")
    ttft_max = max(ttft_errs) if ttft_errs else None

    # --- injected delays: the report's TTFT names the stretch the truth says was delayed,
    # as the dominant one, and that stretch holds the delay (less the clock error)
    injected = truth.get("injected_delays") or []
    named = dominant_in_truth = 0
    steps_by_k = {st["step"]: st for st in truth["steps"]}
    for d in injected:
        n = d["request"]
        tr = truth["requests"][str(n)]
        # Scored only where the truth's own stretches make the delay the dominant one:
        # longer than the request's queueing (arrival to first scheduling) and than its
        # first-token step's device time (first start to first token). Behind an earlier
        # delay, a request's queueing can be longer: then the delay is not its cause.
        queue = tr["scheduled_ns"] - tr["arrival_ns"]
        ft = steps_by_k[tr["first_step"]]
        execution = ft["end_ns"] - ft["first_start_ns"]
        if d["ns"] <= max(queue, execution):
            continue
        dominant_in_truth += 1
        r = rows.get(n)
        tt = (r or {}).get("ttft") or {}
        st = [x for x in tt.get("stretches") or () if x.get("name") == d["stretch"]]
        lo, hi = tr["arrival_bracket_ns"]
        bound = (hi - lo + 1) // 2 + 1 + drift
        if not st:
            failed.append(f"injected delay: request {n} has no {d['stretch']} stretch")
            continue
        got = sum(x["ns"] for x in st)
        dom = tt.get("dominant")
        # {"stretch": name, "cause": cause}, or a bare name
        names = {dom.get("stretch"), dom.get("cause")} if isinstance(dom, dict) else {dom}
        if d["stretch"] not in names:
            failed.append(f"injected delay: request {n}'s dominant is {dom!r}, not its "
                          f"{d['stretch']} stretch ({d['ns']} ns injected)")
        elif got + bound < d["ns"]:
            failed.append(f"injected delay: request {n}'s {d['stretch']} stretch is {got} ns, "
                          f"{d['ns']} ns were injected")
        else:
            named += 1
    if injected and not dominant_in_truth:
        failed.append(f"injected delay: none of the {len(injected)} delays is its request's "
                      "dominant stretch in the truth (queueing or execution longer): nothing "
                      "was scored; lower the rate or raise the delay")

    # --- overhead (reported, not a goal here: docs/serving.md, "Results")
    over = "n/a"
    if a.run_on and a.run_off:
        runs = {"on": [load(x, "run") for x in a.run_on],
                "off": [load(x, "run") for x in a.run_off]}
        plans = {r.get("plan_sha256") for rs in runs.values() for r in rs}
        if len(plans) != 1:
            failed.append("the runs with and without lineage did not run the same plan "
                          "(plan_sha256 differs)")
        cpu = {}
        for k, rs in runs.items():
            xs = sorted(member(r, "cpu_s", f"run ({k})") for r in rs)
            cpu[k] = xs[len(xs) // 2] if len(xs) % 2 else (xs[len(xs) // 2 - 1] +
                                                           xs[len(xs) // 2]) / 2
        over = f"{(cpu['on'] - cpu['off']) / cpu['off']:.4f}" if cpu["off"] > 0 else "n/a"
        overhead_line = (f"OVERHEAD runs={len(runs['on'])}+{len(runs['off'])} "
                         f"cpu_on_median_s={cpu['on']:.3f} cpu_off_median_s={cpu['off']:.3f} "
                         f"cpu_on_s={[round(r['cpu_s'], 3) for r in runs['on']]} "
                         f"cpu_off_s={[round(r['cpu_s'], 3) for r in runs['off']]} "
                         f"per_request_us={(cpu['on'] - cpu['off']) / len(per) * 1e6:.1f}")
    else:
        overhead_line = None

    print(f"SERVE requests={len(per)} gpu_records={gpu_records} incorrect={incorrect} "
          f"gpu_time_err_max={err_max:.6f} gpu_time_err_mean={err_mean:.6f} "
          f"conservation_residual_ns={resid} "
          f"ttft_err_max_ns={ttft_max if ttft_max is not None else 'n/a'} "
          f"overhead_cpu_frac={over}")
    med = sorted(ttft_errs)[len(ttft_errs) // 2] if ttft_errs else "n/a"
    print(f"CLOCK error_bound_ns={drift} ttft_err_median_ns={med} (the traces' host clocks "
          "against CLOCK_MONOTONIC in both processes, probed at start and end; each "
          "request's bound adds half its arrival bracket)")
    if overhead_line:
        print(overhead_line)
    if injected:
        print(f"INJECTED delays={len(injected)} dominant_in_truth={dominant_in_truth} "
              f"named={named}")

    if a.annotations:
        ann = load(a.annotations, "annotations")
        for sp in ("tokens", "equal"):
            tper, _ = truth_gpu(truth, sp)
            bper, wrong, before, spread = baseline(truth, ann, sp)
            be = [rel(bper[n], tper[n]["gpu"]) for n in tper]
            over1 = sum(1 for e in be if e > GOAL_REL_ERR)
            print(f"BASELINE split={sp} gpu_time_err_max={max(be):.6f} "
                  f"gpu_time_err_mean={sum(be) / len(be):.6f} requests_over_1pct={over1} "
                  f"wrong_step_frac={wrong / total:.4f} before_first_step_ns={before} "
                  f"swap_copy_ns_spread={spread}")
    for f in failed:
        print(f"NOTE goal failed: {f}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
