# SPDX-License-Identifier: MIT
"""lineage-explain --per-request --export-otlp on the two-process run of test_shares.py (a
front end, and an engine whose request "generate" began from the front end's traceparent):
that request's span lands in the front end's trace, under the engine's request span of the
validator's export; the engine's local requests stay in their own traces; the attributes
and events are the --json report's, on the Unix clock; the two exports, concatenated,
decode with the OpenTelemetry packages where they are installed (docs/fleet.md, "Per
request")."""
import json
import os
import shutil
import subprocess
import sys

import pytest

import lineage
from test_shares import ENGINE, ENGINE2, explain_exe

OTLP_SRC = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "tests", "otlp")


def spans(path):
    def val(v):
        if "intValue" in v:
            return int(v["intValue"])
        return next(iter(v.values()))
    out = []
    for line in open(path):
        for rs in json.loads(line)["resourceSpans"]:
            ra = {a["key"]: val(a["value"]) for a in rs["resource"]["attributes"]}
            for ss in rs["scopeSpans"]:
                for s in ss["spans"]:
                    out.append(dict(s, a={a["key"]: val(a["value"]) for a in s["attributes"]},
                                    pid=ra["process.pid"],
                                    ev=[dict(e, a={a["key"]: val(a["value"])
                                                   for a in e["attributes"]})
                                        for e in s.get("events", [])]))
    return out


@pytest.fixture
def two_processes(sim_module, tmp_path):
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
    xo, vo = str(tmp_path / "explain.otlp.json"), str(tmp_path / "validate.otlp.json")
    out = subprocess.run([x, "--per-request", "--json", "--export-otlp", xo, engine, front],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)["per_request"]
    v = subprocess.run([os.environ["LINEAGE_VALIDATE"], "--export-otlp", vo, engine, front],
                       capture_output=True, text=True)
    assert v.returncode == 0, v.stderr
    return dict(front_trace=hdr["traceparent"].split("-")[1], report=report, xo=xo, vo=vo,
                tmp=tmp_path)


def test_otlp_request_spans_two_processes(two_processes):
    t = two_processes
    S, V = spans(t["xo"]), spans(t["vo"])
    rq = {s["a"]["lineage.request.user_id"]: s for s in S
          if s["a"]["lineage.span"] == "request_gpu"}
    assert sorted(rq) == [1, 2, 3], S    # the front end's request is not listed
    r = {q["user_id"]: q for q in t["report"]["requests"]}
    vreq = {(s["pid"], s["a"]["lineage.request.id"]): s for s in V
            if s["a"]["lineage.span"] == "request"}
    a, b, c = rq[1], rq[2], rq[3]
    # a began from the front end's traceparent: the front end's trace, under the engine's
    # span of a (itself a SERVER span under the front end's request span)
    assert a["traceId"] == t["front_trace"], a
    va = vreq[(a["pid"], a["a"]["lineage.request.id"])]
    assert (va["traceId"], va["spanId"]) == (a["traceId"], a["parentSpanId"]), (va, a)
    front = [s for s in V if s["a"]["lineage.span"] == "request" and s["pid"] != a["pid"]]
    assert len(front) == 1 and front[0]["traceId"] == a["traceId"], front
    for s in (b, c):    # local: the engine's own trace (process key, request id)
        vs = vreq[(s["pid"], s["a"]["lineage.request.id"])]
        assert s["traceId"] != t["front_trace"] and s["traceId"] == vs["traceId"], s
        assert s["traceId"].endswith("%016x" % s["a"]["lineage.request.id"]), s
        assert s["parentSpanId"] == vs["spanId"], s
    for u, s in rq.items():
        q, at = r[u], s["a"]
        assert (at["lineage.gpu.time_ns"], at["lineage.gpu.prefill_ns"],
                at["lineage.gpu.decode_ns"], at["lineage.gpu.other_ns"],
                at["lineage.gpu.records"], at["lineage.split.by_tokens"],
                at["lineage.split.by_equal"]) == (
            q["gpu_ns"], q["prefill_ns"], q["decode_ns"], q["other_ns"], q["records"],
            q["split_rule"]["tokens"], q["split_rule"]["equal"]), (at, q)
    assert b["ev"] == [] and "lineage.ttft_ns" not in b["a"], b
    assert b["a"]["lineage.time.end_from"] == "last_gpu_record", b
    for s, q in ((a, r[1]), (c, r[3])):
        tt, at = q["ttft"], s["a"]
        assert at["lineage.ttft_ns"] == tt["ttft_ns"] > 0, (at, tt)
        assert at["lineage.arrival.source"] == tt["arrival_from"], at
        assert (at["lineage.ttft.dominant.stretch"], at["lineage.ttft.dominant.cause"]) == (
            tt["dominant"]["stretch"], tt["dominant"]["cause"]), at
        assert (at["lineage.time.start_from"], at["lineage.time.end_from"]) == (
            "arrival", "first_token"), at
        # the span runs arrival -> first token, the events are the stretches, contiguous
        assert int(s["endTimeUnixNano"]) - int(s["startTimeUnixNano"]) == tt["ttft_ns"], s
        assert [e["name"] for e in s["ev"]] == ["lineage.ttft." + x["name"]
                                                for x in tt["stretches"]], s["ev"]
        assert int(s["ev"][0]["timeUnixNano"]) == int(s["startTimeUnixNano"]), s
        for e, x in zip(s["ev"], tt["stretches"]):
            assert (e["a"]["lineage.stretch.ns"], e["a"]["lineage.stretch.cause"],
                    e["a"]["lineage.evidence"]) == (x["ns"], x["cause"], x["evidence"]), (e, x)
            assert (e["a"]["lineage.stretch.end_unix_nano"] - int(e["timeUnixNano"])
                    == x["ns"]), e
        assert s["ev"][-1]["a"]["lineage.stretch.end_unix_nano"] == int(s["endTimeUnixNano"])
    assert at["lineage.arrival.source"] == "request_begin" and \
        a["a"]["lineage.arrival.source"] == "request_link"
    # on the Unix clock: a begins (in the front end) before c (in the engine)
    assert int(a["startTimeUnixNano"]) < int(c["startTimeUnixNano"]) and \
        int(a["startTimeUnixNano"]) > 10**18, (a, c)
    un = [s for s in S if s["a"]["lineage.span"] == "unattributed"]
    assert len(un) == 2 and all(s["a"]["lineage.gpu.time_ns"] == 0 for s in un), un
    ids = [s["spanId"] for s in S + V]
    assert len(ids) == len(set(ids)), "a span id twice over both exports"


def test_otlp_two_processes_decode(two_processes):
    """OpenTelemetry's own decoder (tests/otlp/decode.mjs): every parent resolves."""
    if not shutil.which("node") or not os.path.exists(os.path.join(
            OTLP_SRC, "node_modules", "@opentelemetry", "otlp-transformer", "package.json")):
        pytest.skip("node or the OpenTelemetry packages (tests/otlp/otel-packages.sh) missing")
    t = two_processes
    both = t["tmp"] / "both.json"
    both.write_text(open(t["vo"]).read() + open(t["xo"]).read())
    out = subprocess.run(["node", os.path.join(OTLP_SRC, "decode.mjs"), str(both), "-"],
                         capture_output=True, text=True)
    assert out.returncode == 0 and "failed_checks=0" in out.stdout, out.stdout + out.stderr


@pytest.mark.parametrize("lose", [False, True])
def test_otlp_first_token_a_lower_bound(sim_module, tmp_path, lose):
    """A GPU record no request was given, ending after the first-token step: the first
    token is only a lower bound, so the span ends at the request's last GPU record and
    says why (lineage.ttft.first_token_unknown), with no lineage.ttft_ns."""
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
    xo = str(tmp_path / "x.json")
    out = subprocess.run([x, "--per-request", "--export-otlp", xo, engine, front],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    rq = [s for s in spans(xo) if s["a"]["lineage.span"] == "request_gpu"]
    assert len(rq) == 2, rq
    for s in rq:
        a = s["a"]
        if lose:
            assert a["lineage.ttft.first_token_unknown"] == "unattributed_records", a
            assert "lineage.ttft_ns" not in a and a["lineage.time.end_from"] == "last_gpu_record", a
        else:
            assert "lineage.ttft.first_token_unknown" not in a, a
            assert a["lineage.time.end_from"] == "first_token", a
            assert int(s["endTimeUnixNano"]) - int(s["startTimeUnixNano"]) == a["lineage.ttft_ns"]
