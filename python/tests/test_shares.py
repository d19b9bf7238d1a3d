# SPDX-License-Identifier: MIT
"""Epoch shares (rt.epoch(*requests, shares=...), format 1.5): what each request of a batch
contributes, the errors a bad share raises under a strict runtime and absorbs under a lenient
one (the epoch is declared without them: the work and its joins stay), and lineage-explain
--per-request on a two-process run: the engine's request linked to the front end's, its GPU
time split by tokens, its time to first token in contiguous stretches (docs/serving.md)."""
import json
import os
import subprocess
import sys

import pytest

import lineage
from conftest import validator_or_skip

P, D, F = lineage.SHARE_PREFILL, lineage.SHARE_DECODE, lineage.SHARE_FIRST_TOKEN


def explain_exe():
    exe = validator_or_skip()
    x = os.path.join(os.path.dirname(os.path.dirname(exe)), "explain", "lineage-explain")
    if not os.path.exists(x):
        pytest.skip(f"no lineage-explain beside {exe}")
    return x


def test_constants():
    assert (P, D, F) == (1, 2, 4)


@pytest.mark.parametrize("shares", [
    [(1, P)],                       # one share for two requests
    [(1, P), (1, P | D)],           # prefill and decode at once
    [(1, P), (1, D | F)],           # a first token from a decode step
    [(1, P), (1, 8)],               # an unknown flag
    [(1, P), (-1, P)],              # negative tokens
    [(1, P), (1 << 32, P)],         # tokens past 32 bits
    [(1, P), (1 << 70, P)],         # past 64 bits
    [(1, P), [1, P]],               # not a tuple
    [(1, P), (1, P, 0)],            # three members
    "ab",                           # not pairs at all
    5,                              # not a sequence
])
def test_bad_shares_raise_when_strict(trace, shares):
    with lineage.Runtime(trace_path=trace) as rt:
        with rt.request("a") as a, rt.request("b") as b:
            with pytest.raises(lineage.InvalidArgument):
                rt.epoch_declare(a, b, shares=shares)
            with pytest.raises(lineage.InvalidArgument):
                with rt.epoch(a, b, shares=shares):
                    pass


def test_shares_need_the_requests(trace):
    with lineage.Runtime(trace_path=trace) as rt:
        with rt.request("a"):
            with pytest.raises(lineage.InvalidArgument, match="shares need the requests"):
                rt.epoch_declare(shares=[(1, P)])


@pytest.mark.lenient
def test_bad_shares_never_refuse_the_work(sim_module, tmp_path):
    """Lenient: the epoch is declared without its shares; its kernels still join."""
    trace = str(tmp_path / "lenient.lt")
    sim = sim_module.Sim(seed=2)
    ran = []
    with lineage.Runtime(trace_path=trace, backend=sim) as rt:
        with rt.request("a") as a, rt.request("b") as b:
            with rt.epoch(a, b, shares=[(1, P | D), (1, D)]) as e:
                assert e.id != 0
                with rt.launch("k"):
                    sim.launch_kernel(1, "k")
                ran.append(1)
            assert rt.epoch_declare(a, b, shares=[(1, P)]) != 0
        assert rt.stats()["absorbed"] == 2
    assert ran == [1]
    res = lineage.validate(trace)
    assert res["exit_code"] == 0 and res["joined_observed"] == 1, res
    out = subprocess.run([explain_exe(), "--per-request", "--json", trace],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    d = json.loads(out.stdout)["per_request"]
    assert d["split_records"]["tokens"] == 0 and d["split_records"]["equal"] == 1, d


ENGINE = r"""
import sys, lineage, _lineage_sim
trace, tp, ts = sys.argv[1], sys.argv[2], sys.argv[3]
P, D, F = lineage.SHARE_PREFILL, lineage.SHARE_DECODE, lineage.SHARE_FIRST_TOKEN
sim = _lineage_sim.Sim(seed=7)
with lineage.Runtime(trace_path=trace, backend=sim) as rt:
    remote = lineage.extract(tp, ts)
    with rt.request("generate", user_id=1, remote=remote) as a, \
         rt.request("local", user_id=2) as b, rt.request("local", user_id=3) as c:
        # step 1: a's first prefill chunk; step 2: a's last chunk (its first token),
        # b decoding, c's whole prompt (its first token)
        with rt.epoch(a, name="step1", shares=[(16, P)]):
            for _ in range(3):
                with rt.launch("k"): sim.launch_kernel(1, "k")
        with rt.epoch(a, b, c, name="step2", shares=[(8, P | F), (1, D), (3, P | F)]):
            for _ in range(6):
                with rt.launch("k"): sim.launch_kernel(1, "k")
"""


def test_per_request_two_processes(sim_module, tmp_path):
    x = explain_exe()
    front, engine = str(tmp_path / "front.lt"), str(tmp_path / "engine.lt")
    script = tmp_path / "engine.py"
    script.write_text(ENGINE)
    with lineage.Runtime(trace_path=front) as rt:
        with rt.request("frontend", user_id=1):
            hdr = rt.inject()
            env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
            subprocess.run([sys.executable, str(script), engine, hdr["traceparent"],
                            hdr["tracestate"]], check=True, env=env)
    out = subprocess.run([x, "--per-request", "--json", engine, front],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    d = json.loads(out.stdout)["per_request"]
    assert d["conservation_residual_ns"] == 0 and d["unattributed_ns"] == 0, d
    r = {q["user_id"]: q for q in d["requests"]}
    assert sorted(r) == [1, 2, 3], d    # the front end's request is not listed
    a, b, c = r[1], r[2], r[3]
    # a: all of step 1, 8/12 of step 2; b: 1/12; c: 3/12 (each record's split within 1 ns
    # of exact, largest remainder)
    assert a["records"] == 9 and b["records"] == 6 and c["records"] == 6, d
    assert abs(b["gpu_ns"] * 3 - c["gpu_ns"]) <= 3 * 6 + 6, (b, c)
    assert b["decode_ns"] == b["gpu_ns"] and c["prefill_ns"] == c["gpu_ns"], (b, c)
    assert a["prefill_ns"] == a["gpu_ns"], a
    assert b["ttft"] is None
    ta, tc = a["ttft"], c["ttft"]
    assert ta["arrival_from"] == "request_link" and tc["arrival_from"] == "request_begin", ta
    assert ta["arrival_ns"] < tc["arrival_ns"], "the front end began a before the engine did"
    assert ta["first_token_ns"] == tc["first_token_ns"], "one step gives both first tokens"
    for t in (ta, tc):
        st = t["stretches"]
        assert all(s["evidence"] != "unknown" for s in st), st
        for s0, s1 in zip(st, st[1:]):
            assert s0["end_ns"] == s1["start_ns"], st
        assert st[0]["start_ns"] == t["arrival_ns"] and st[-1]["end_ns"] == t["first_token_ns"]
        assert sum(s["ns"] for s in st) == t["ttft_ns"], t
        assert t["dominant"] is not None
    names = [s["name"] for s in ta["stretches"]]
    assert names == ["queue", "prefill_before", "host", "launch_to_start", "execution"], names
    assert "prefill_before" not in [s["name"] for s in tc["stretches"]]


ENGINE2 = r"""
import sys, lineage, _lineage_sim
trace, tp, ts, lose = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4] == "1"
P, D, F = lineage.SHARE_PREFILL, lineage.SHARE_DECODE, lineage.SHARE_FIRST_TOKEN
sim = _lineage_sim.Sim(seed=9)
with lineage.Runtime(trace_path=trace, backend=sim) as rt:
    remote = lineage.extract(tp, ts)
    # two engine requests sent under one front-end request: one trace id for both
    with rt.request("a", user_id=1, remote=remote) as a, \
         rt.request("b", user_id=2, remote=remote) as b:
        with rt.epoch(a, b, name="step", shares=[(4, P | F), (4, P | F)]):
            with rt.launch("k"): sim.launch_kernel(1, "k")
        if lose:   # a kernel launched with no context after the step: lost, unattributed
            sim.launch_kernel(1, "stray")
"""


@pytest.mark.parametrize("lose", [False, True])
def test_arrival_and_first_token_stay_unknown_when_in_doubt(sim_module, tmp_path, lose):
    """A sender linked to two requests gives neither its arrival; a GPU record no request
    was given, ending after the first-token step, leaves the first token a lower bound."""
    x = explain_exe()
    front, engine = str(tmp_path / "front.lt"), str(tmp_path / "engine.lt")
    script = tmp_path / "engine2.py"
    script.write_text(ENGINE2)
    with lineage.Runtime(trace_path=front) as rt:
        with rt.request("frontend"):
            hdr = rt.inject()
            env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
            subprocess.run([sys.executable, str(script), engine, hdr["traceparent"],
                            hdr["tracestate"], "1" if lose else "0"], check=True, env=env)
    out = subprocess.run([x, "--per-request", "--json", engine, front],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    d = json.loads(out.stdout)["per_request"]
    for q in d["requests"]:
        t = q["ttft"]
        assert t["arrival_from"].startswith("request_begin (sender linked to several"), t
        if lose:
            assert d["unattributed_records"] == 1, d
            assert t["first_token_unknown"] == "unattributed_records", t
            assert t["ttft_ns"] is None and t["dominant"] is None, t
            assert t["stretches"][-1]["evidence"] == "unknown", t
        else:
            assert t["first_token_unknown"] is None and t["ttft_ns"] is not None, t


class _Interrupting:
    """A shares argument whose iteration is interrupted (Ctrl-C while reading it)."""
    def __iter__(self):
        raise KeyboardInterrupt


def _exiting():
    yield (1, P)
    raise SystemExit(3)


@pytest.mark.lenient
@pytest.mark.parametrize("shares", [_Interrupting, _exiting])
def test_the_programs_own_exceptions_pass_through(trace, shares):
    """Lenient absorbs lineage's errors only: KeyboardInterrupt and SystemExit raised while
    the shares are read are the program's and reach it unchanged."""
    with lineage.Runtime(trace_path=trace) as rt:
        with rt.request("a") as a, rt.request("b") as b:
            with pytest.raises((KeyboardInterrupt, SystemExit)):
                rt.epoch_declare(a, b, shares=shares())
            assert rt.stats()["absorbed"] == 0
