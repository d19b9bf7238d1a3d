# SPDX-License-Identifier: MIT
"""Every API, each error path once where it fires and once where it stays silent."""
import copy
import os
import pickle

import pytest

import lineage


def test_runtime_options_and_stats(trace):
    with lineage.Runtime(trace_path=trace, backend="none", no_writer_thread=True,
                         lean_timestamps=True, thread_buffer_events=1024,
                         flush_interval_ms=5) as rt:
        assert not rt.closed and rt.now_ns() > 0
        st = rt.stats()
        assert st["live_requests"] == 0 and st["misuse"] == 0
        rt.flush()
    assert rt.closed and os.path.getsize(trace) > 0


@pytest.mark.parametrize("kw", [{"backend": "bogus"}, {"thread_buffer_events": 100},
                                {"cupti_buffer_kib": 1}])
def test_runtime_bad_options_raise(kw, trace):
    with pytest.raises(lineage.InvalidArgument):
        lineage.Runtime(trace_path=trace, **kw)


def test_runtime_streams_otlp_spans(tmp_path):
    otlp = tmp_path / "run.otlp.json"
    with lineage.Runtime(otlp_path=str(otlp)) as rt:
        with rt.request("r"):
            pass
    assert b"resourceSpans" in otlp.read_bytes()


def test_runtime_unwritable_trace_raises(tmp_path):
    with pytest.raises(lineage.Error) as ei:
        lineage.Runtime(trace_path=str(tmp_path / "no" / "such" / "dir" / "t.lt"))
    assert ei.value.name == "ENOENT"


def test_closed_runtime_raises_not_crashes(trace):
    rt = lineage.Runtime(trace_path=trace)
    req = rt.request("r")
    la = rt.launch("k")
    rt.close()
    rt.close()  # twice is fine
    for call in (rt.flush, rt.stats, lambda: rt.request("x"), lambda: rt.launch("k"),
                 lambda: req.__enter__(), la.__enter__, lambda: rt.token_for(1)):
        with pytest.raises(lineage.InvalidArgument):
            call()


def test_request_epoch_launch(rt):
    assert lineage.current() is None
    with rt.request("r", user_id=7) as r:
        assert lineage.current() == r.token and r.token.kind == "request"
        with rt.epoch(name="e") as e:
            assert rt.lookup(e.id)["requests"] == [r.id]
            with rt.launch("k") as la:
                assert rt.thread_current() == ("epoch", e.id, 1)
                assert la.ext_id == 0   # backend none pushes nothing
            assert rt.thread_current() is None   # the bracket's scope closed
            with rt.epoch(name="child") as c:   # from the current epoch: its child
                info = rt.lookup(c.id)
                assert info["parent"] == e.id and info["requests"] == [r.id]
        assert lineage.current() == r.token
    assert lineage.current() is None
    assert rt.stats()["misuse"] == 0
    with pytest.raises(lineage.NotFound):
        rt.lookup(r.id)   # ended at the block's end


def test_epoch_fan_in_and_no_requests(rt):
    with rt.request("a") as a, rt.request("b") as b:
        with rt.epoch(a, b.id, name="batch") as e:
            assert sorted(rt.lookup(e.id)["requests"]) == sorted([a.id, b.id])
    with rt.epoch(no_requests=True) as e:
        assert rt.lookup(e.id)["n_requests"] == 0
        with rt.launch("k"):
            pass


def test_epoch_errors(rt):
    with pytest.raises(lineage.NoContext):
        rt.epoch()                       # no requests and none current
    with pytest.raises(lineage.NotFound):
        rt.epoch(12345)                  # not a live request
    with pytest.raises(lineage.InvalidArgument):
        with rt.request() as r:
            rt.epoch(r, no_requests=True)


def test_launch_without_context_raises_and_records_misuse(rt):
    with pytest.raises(lineage.NoContext):
        with rt.launch("k"):
            pytest.fail("the body must not run")
    with rt.request():
        with pytest.raises(lineage.NoContext):   # a request is not an epoch
            with rt.launch("k"):
                pass
    assert rt.stats()["misuse"] == 2


def test_launch_misuse(rt):
    with rt.request(), rt.epoch():
        la = rt.launch("k")
        with pytest.raises(lineage.InvalidArgument):
            la.__exit__(None, None, None)     # exit without enter
        with la:
            with pytest.raises(lineage.InvalidArgument):
                la.__enter__()                # entered twice
        with la:                              # re-usable after exit
            pass
        with pytest.raises(TypeError):
            rt.launch(b"bytes")
        with rt.launch(None):                 # a nameless launch is allowed
            pass


def test_launch_order_misuse_raises(rt):
    with rt.request(), rt.epoch():
        outer, inner = rt.launch("outer"), rt.launch("inner")
        outer.__enter__()
        inner.__enter__()
        with pytest.raises(lineage.LaunchOrder):
            outer.__exit__(None, None, None)
        inner.__exit__(None, None, None)
        outer.__exit__(None, None, None)   # refused before, nothing changed: ends now
        with pytest.raises(lineage.InvalidArgument):
            outer.__exit__(None, None, None)   # ended twice


def test_tokens_text_pickle_copy(rt):
    with rt.request() as r, rt.epoch() as e:
        t = lineage.capture()
        assert t == e.token and t.runtime is rt and t.kind == "epoch"
        text = str(t)
        assert text.startswith("lin1.") and len(text) < lineage._lineage.TOKEN_TEXT_MAX
        back = lineage.Token.parse(text)
        assert back == t and back.runtime is None and hash(back) == hash(t)
        assert pickle.loads(pickle.dumps(t)) == t
        assert copy.copy(t) is t and copy.deepcopy(t) is t
        assert t != r.token
        with rt.adopt(back) as adopted:      # the text form adopts
            assert adopted is back and lineage.current() is back
            with rt.launch("k"):
                pass
        assert lineage.current() is t


def test_token_parse_errors():
    with pytest.raises(lineage.InvalidArgument):
        lineage.Token.parse("not a token")
    with pytest.raises(TypeError):
        lineage.Token.parse(5)
    good = "lin1.0000000000000001.1.1.b918.1.593852b4"
    lineage.Token.parse(good)
    with pytest.raises(lineage.BadToken):
        lineage.Token.parse(good[:-1] + ("5" if good[-1] != "5" else "6"))
    # A NUL inside is damaged text, not the token before it.
    with pytest.raises(lineage.InvalidArgument):
        lineage.Token.parse(good + "\0junk")
    # Text that cannot be encoded (a header decoded with surrogateescape) is damaged too.
    with pytest.raises(lineage.InvalidArgument):
        lineage.Token.parse("\udcff" + good)


def test_capture_without_context_raises():
    with pytest.raises(lineage.NoContext):
        lineage.capture()
    assert lineage.current() is None


def test_stale_token(rt):
    with rt.request() as r:
        tok = lineage.capture()
        with rt.adopt(tok):
            pass
    # Its request ended: late work, adopted (no error, even strict), counted.
    with rt.adopt(tok) as t:
        assert t == tok and lineage.current() == tok
    with lineage.adopt(tok):
        assert lineage.current() == tok
    assert rt.stats()["late_adopts"] == 2 and rt.stats()["misuse"] == 0
    # The same token as text may come from another process: not adopted (strict: raised).
    parsed = lineage.Token.parse(str(tok))
    with pytest.raises(lineage.StaleToken) as ei:
        with rt.adopt(parsed):
            pass
    assert isinstance(ei.value, lineage.Error) and ei.value.name == "LIN_ESTALE_TOKEN"
    assert ei.value.code == 4001
    assert r.id == tok.id


def test_reissue_makes_tokens_stale(rt):
    with rt.request(), rt.epoch() as e:
        old = lineage.capture()
        v = e.reissue(lineage.REISSUE_RETRY)
        assert v == 2 and lineage.current().version == 2
        with rt.adopt(old):                # the old attempt's work: adopted late
            assert lineage.current().version == 1
            with rt.launch("straggler"):
                pass
        assert rt.stats()["late_launches"] == 1
        with rt.launch("k"):           # the block's current token follows the new version
            pass
        assert rt.epoch_reissue(e.id) == 3


def test_foreign_token(trace, tmp_path):
    with lineage.Runtime(trace_path=str(tmp_path / "other.lt")) as other, \
            lineage.Runtime(trace_path=trace) as rt:
        with other.request():
            tok = lineage.capture()
            with pytest.raises(lineage.ForeignToken):
                with rt.adopt(tok):
                    pass
            with other.adopt(tok):
                pass


def test_adopt_errors(rt):
    with pytest.raises(TypeError):
        rt.adopt(b"lin1.x")
    with pytest.raises(lineage.BadToken):  # text is parsed when the block is entered
        with rt.adopt("lin1.x"):
            pass
    with pytest.raises(lineage.InvalidArgument):
        lineage.adopt(lineage.Token.parse("lin1.0000000000000001.1.1.b918.1.593852b4"))
    with rt.request():
        a = rt.adopt(lineage.capture())
        with pytest.raises(lineage.InvalidArgument):
            a.__exit__(None, None, None)
        with a:
            with pytest.raises(lineage.InvalidArgument):
                a.__enter__()


def test_adopt_scope_order(rt):
    with rt.request() as r, rt.epoch() as e:
        outer, inner = rt.adopt(r.token), rt.adopt(e.token)
        outer.__enter__()
        inner.__enter__()
        with pytest.raises(lineage.ScopeOrder):
            outer.__exit__(None, None, None)
        inner.__exit__(None, None, None)
        outer.__exit__(None, None, None)


def test_plain_calls(rt):
    rid = rt.request_begin(name="plain")
    eid = rt.epoch_declare(rid, name="e")
    assert rt.token_for(eid).kind == "epoch"
    rt.epoch_retire(eid)
    rt.request_end(rid)
    for call in (rt.request_end, rt.epoch_retire, rt.token_for):
        with pytest.raises(lineage.NotFound):
            call(rid)
    with pytest.raises(lineage.NotFound):
        rt.epoch_reissue(eid)


def test_block_entered_again_raises(rt):
    r = rt.request()
    with r:
        pass
    with pytest.raises(lineage.InvalidArgument):
        with r:               # ended: a block cannot be entered twice
            pass


def test_block_ended_in_another_context_still_ends_the_request(rt):
    import contextvars
    r = rt.request()
    r.__enter__()
    with pytest.raises(ValueError):   # the variable's reset belongs to the other context
        contextvars.copy_context().run(r.__exit__, None, None, None)
    lineage.context.set(None)
    with pytest.raises(lineage.NotFound):
        rt.lookup(r.id)               # ended all the same


def test_block_end_reports_an_already_ended_request(rt):
    with pytest.raises(lineage.NotFound):
        with rt.request() as r:
            rt.request_end(r.id)


def test_w3c_roundtrip(rt):
    with rt.request("client") as r:
        h = rt.inject()
        assert h["traceparent"].startswith("00-") and "lin=" in h["tracestate"]
        ctx = lineage.extract(h["traceparent"], h["tracestate"])
        assert ctx.token == r.token and ctx.flags == lineage.W3C_FLAG_SAMPLED
        assert len(ctx.trace_id) == 32 and len(ctx.parent_id) == 16
        with rt.adopt_remote(ctx):            # it came back to its issuer
            assert lineage.current() == r.token
        with rt.request("server", remote=ctx) as s:
            h2 = rt.inject(remote=ctx)
            assert h2["traceparent"][3:35] == ctx.trace_id
            assert lineage.extract(h2["traceparent"], h2["tracestate"]).token == s.token


def test_w3c_errors(rt):
    with pytest.raises(lineage.InvalidArgument):
        lineage.extract("garbage")
    plain = lineage.extract("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
    assert plain.token is None and plain.tracestate is None
    with pytest.raises(lineage.NoContext):
        rt.adopt_remote(plain)
    with pytest.raises(lineage.NoContext):
        rt.inject()                            # no token, none current
    with pytest.raises(TypeError):
        rt.request(remote="x")


def test_graph_capture_and_replay(rt):
    gt = rt.graph_tracker()
    with rt.request() as r, rt.epoch(name="capture") as e:
        cap = gt.capture_begin()
        assert cap.epoch == (e.id, 1)
        gt.capture_end(cap, 100, [1, 2])
        gt.edges(100, [1], [2])
        gt.edges(101, [], [])
        with pytest.raises(ValueError):
            gt.edges(100, [1, 2], [2])
        with pytest.raises(ValueError):
            gt.edges(100, [1], [1])
        with pytest.raises(OverflowError):
            gt.edges(-1, [1], [2])
        with pytest.raises(OverflowError):
            gt.edges(2**64 + 100, [1], [2])
        with pytest.raises(TypeError):
            gt.edges(100, [1, "x"], [2, 3])
        gt.node_created(100, 3)
        gt.exec_instantiated(100, 200)
        gt.node_cloned(1, 11, 100, 200)
        assert gt.node_origin(11) == (e.id, 1)
        assert gt.exec_ordinal(200) == 0
    with rt.request() as r2, rt.epoch(name="replay") as e2:
        with gt.launch(200, "cudaGraphLaunch") as gl:
            replay, ordinal = gl.replay
            assert ordinal == 1 and rt.lookup(replay)["requests"] == [r2.id]
            assert rt.lookup(replay)["parent"] == e2.id
        gt.node_updated(3)
        assert gt.node_origin(3) == (e2.id, 1)
    assert gt.exec_ordinal(200) == 1
    gt.exec_destroyed(200)
    gt.destroyed(100)
    with pytest.raises(lineage.NotFound):
        gt.exec_ordinal(200)
    with pytest.raises(lineage.NotFound):
        gt.destroyed(100)
    with pytest.raises(lineage.NoContext):
        gt.capture_begin()                            # no current epoch
    with rt.request(), rt.epoch():
        with pytest.raises(lineage.InvalidArgument):
            gt.capture_end(gt.capture_begin(), 0, [])   # a zero graph id
    with pytest.raises(lineage.NoContext):
        with gt.launch(5, "cudaGraphLaunch"):         # no current epoch
            pass
    gt.close()
    with pytest.raises(lineage.InvalidArgument):
        gt.exec_ordinal(1)


def test_graph_tracker_closed_with_runtime(trace):
    rt = lineage.Runtime(trace_path=trace)
    gt = rt.graph_tracker()
    rt.close()
    with pytest.raises(lineage.InvalidArgument):
        gt.destroyed(1)


def test_validate(trace, monkeypatch, tmp_path):
    from conftest import validator_or_skip
    validator_or_skip()
    with lineage.Runtime(trace_path=trace) as rt, rt.request(), rt.epoch(), rt.launch("k"):
        pass
    res = lineage.validate(trace)
    assert res["exit_code"] == 1 and res["gpu_records"] == 0   # no GPU records: not clean
    assert lineage.validate([trace], allow_empty=True)["exit_code"] == 0
    bad = tmp_path / "bad.lt"
    bad.write_bytes(b"\x91\x01")
    assert lineage.validate(str(bad))["exit_code"] == 2
    with pytest.raises(lineage.InvalidArgument):
        lineage.validate([])
    monkeypatch.setenv("LINEAGE_VALIDATE", "")
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(lineage._build, "VALIDATE", None)
    monkeypatch.setattr(lineage._build, "VALIDATE_LOOKED", None)
    with pytest.raises(lineage.ValidatorNotFound):
        lineage.validate(trace)


def test_validate_finds_the_validator_of_its_build(trace, monkeypatch, tmp_path):
    """LINEAGE_VALIDATE unset and nothing on PATH: the lineage-validate recorded when the
    package was built is run; where it is gone, the error says where it looked and how to
    point LINEAGE_VALIDATE at one; a LINEAGE_VALIDATE that is no executable is refused."""
    from conftest import validator_or_skip
    exe = validator_or_skip()
    with lineage.Runtime(trace_path=trace) as rt, rt.request(), rt.epoch(), rt.launch("k"):
        pass
    assert lineage._build is not None, "the build wrote lineage/_build.py"
    monkeypatch.delenv("LINEAGE_VALIDATE")
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(lineage._build, "VALIDATE", exe)
    assert lineage.validate(trace, allow_empty=True)["exit_code"] == 0
    gone = str(tmp_path / "build" / "validator" / "lineage-validate")
    monkeypatch.setattr(lineage._build, "VALIDATE", None)
    monkeypatch.setattr(lineage._build, "VALIDATE_LOOKED", gone)
    with pytest.raises(lineage.ValidatorNotFound) as e:
        lineage.validate(trace)
    msg = str(e.value)
    assert gone in msg and "LINEAGE_VALIDATE" in msg and "validator/lineage-validate" in msg, msg
    plain = tmp_path / "not-a-program"
    plain.write_text("")
    monkeypatch.setenv("LINEAGE_VALIDATE", str(plain))
    monkeypatch.setattr(lineage._build, "VALIDATE", exe)
    with pytest.raises(lineage.ValidatorNotFound, match="not an executable file"):
        lineage.validate(trace)


def test_strerror_and_versions():
    assert lineage.strerror(-4001)[0] == "LIN_ESTALE_TOKEN"
    assert lineage.library_version().count(".") == 2
    assert lineage.__version__ == lineage.library_version(), "one release: package and library"
    assert issubclass(lineage.StaleToken, lineage.Error)
    e = pickle.loads(pickle.dumps(lineage.StaleToken("x", 4001, "LIN_ESTALE_TOKEN")))
    assert isinstance(e, lineage.StaleToken) and e.code == 4001


@pytest.mark.parametrize("on", [True, False])
def test_runtime_sched_events_refused_is_stated_not_raised(on, trace, monkeypatch):
    # The kernel's refusal, injected (lineage/hostsched.c's test hook): never raised; the
    # header says it. Off (the default): the header has no host_sched key.
    monkeypatch.setenv("LINEAGE_TEST_SCHED_FAULT", "EACCES")
    monkeypatch.setenv("LINEAGE_LOG", "off")
    with lineage.Runtime(trace_path=trace, sched_events=on) as rt:
        with rt.request():
            pass
    data = open(trace, "rb").read()
    assert (b"host_sched" in data) == on
    assert (b"refused: perf_event_open" in data) == on
