# SPDX-License-Identifier: MIT
"""The simulator module's timed calls (launch_kernel_ex, memcpy, per-node durations at
capture, graph_launch_ex, device_idle): what the serving workload (bench/serve) builds
its truth from. Their records validate against a truth made from what the calls return."""
import lineage
from conftest import validator_or_skip
import _truth


def test_launch_kernel_ex_times(sim_module):
    sim = sim_module.Sim(seed=5)
    g1, s1, e1 = sim.launch_kernel_ex(1, "a", dur_ns=7000)
    g2, s2, e2 = sim.launch_kernel_ex(1, "b", dur_ns=3000)
    assert g1 > 0 and g2 == g1 + 1
    assert e1 - s1 == 7000 and e2 - s2 == 3000
    assert s2 >= e1                       # one stream runs its work in order
    assert sim.device_idle() == e2
    assert sim.clock_offset() == 0        # host_clock=True: the host clock itself
    # dur_ns 0: the seed's 1 to 10 us, as launch_kernel always did
    g3, s3, e3 = sim.launch_kernel_ex(2, "c")
    assert 1000 <= e3 - s3 < 10000
    # launch_kernel keeps its result (a grid id) and takes a duration too
    g4 = sim.launch_kernel(1, "d", 2500)
    assert g4 == g3 + 1 and sim.device_idle() >= e2 + 2500


def test_memcpy_times(sim_module):
    sim = sim_module.Sim(seed=5)
    s, e = sim.memcpy(3, 4096, dur_ns=12345)
    assert e - s == 12345
    s2, e2 = sim.memcpy(3, 4096)
    assert s2 >= e and 1000 <= e2 - s2 < 10000
    assert sim.stats()["kernels"] == 0


def test_capture_durations_and_graph_launch_ex(sim_module):
    sim = sim_module.Sim(seed=5)
    assert sim.capture_begin(4) == 0
    durs = [1000 + 37 * i for i in range(300)]   # past the former 64-node limit
    for i, d in enumerate(durs):
        assert sim.launch_kernel_ex(4, f"n{i % 7}", dur_ns=d) == (0, 0, 0)
    graph, nodes = sim.capture_end(4)
    assert graph and len(nodes) == len(durs)
    exec_id, pairs = sim.graph_instantiate(graph)
    assert len(pairs) == len(durs)
    for _ in range(2):
        got = sim.graph_launch_ex(exec_id, 4)
        assert [e - s for _, s, e in got] == durs
        assert all(b[1] >= a[2] for a, b in zip(got, got[1:]))
    assert len({g for g, _, _ in got}) == len(durs)
    assert sim.graph_launch_ex(exec_id + 99, 4) == []   # unknown exec: nothing runs


def test_timed_records_validate_against_truth(sim_module, tmp_path):
    """Labels keyed by what the calls return (grid ids, the copy's start) match the
    trace's records; a label with a wrong key is reported (the check can fail)."""
    validator_or_skip()
    trace, truth = str(tmp_path / "t.lt"), str(tmp_path / "t.truth")
    sim = sim_module.Sim(seed=9)
    labels = []
    with lineage.Runtime(trace_path=trace, backend=sim) as rt:
        gt = rt.graph_tracker()
        with rt.request("a") as a, rt.epoch(name="e"):
            with rt.launch("k"):
                g, _, _ = sim.launch_kernel_ex(1, "k", dur_ns=4000)
            labels.append((_truth.KERNEL, g, [a.id]))
            with rt.launch("cudaMemcpyAsync"):
                s, _ = sim.memcpy(2, 1 << 20, dur_ns=9000)
            labels.append((23, s, [a.id]))
            cap = gt.capture_begin()
            sim.capture_begin(3)
            for n in ("x", "y"):
                with rt.launch(n):
                    sim.launch_kernel(3, n, 5000)
            graph, nodes = sim.capture_end(3)
            gt.capture_end(cap, graph, nodes)
            exec_id, pairs = sim.graph_instantiate(graph)
            gt.exec_instantiated(graph, exec_id)
            for o, c in pairs:
                gt.node_cloned(o, c, graph, exec_id)
            with gt.launch(exec_id, "cudaGraphLaunch"):
                got = sim.graph_launch_ex(exec_id, 3)
            labels += [(_truth.KERNEL, g, [a.id]) for g, _, _ in got]
    _truth.write(truth, labels)
    res = lineage.validate(trace, expect=truth)
    assert res["matched"] == len(labels) == 4 and res["exit_code"] == 0, res
    kind, key, reqs = labels[1]
    _truth.write(truth, labels[:1] + [(kind, key + 1, reqs)] + labels[2:])
    res = lineage.validate(trace, expect=truth)
    assert res["matched"] == 3 and res["exit_code"] == 1, res
