#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""hta-labels.py KINETO.json LABELS.tsv [--workdir DIR]

Runs Holistic Trace Analysis (HTA, ../shared/peers/hta) on one Kineto trace written by
lineage-validate --export-kineto, and writes the label HTA's own output gives each GPU
record, in the peer-label format lineage-explain --score --peer-labels reads
(docs/attribution.md, "Peer labels"): gpu_kind, key, correlation, label, start_ns, end_ns.

HTA's analyses run as shipped, on the defaults a user gets:
  get_idle_time_breakdown      (consecutive_kernel_delay = 30 ns)
  get_cuda_kernel_launch_stats (runtime_cutoff = 50 us, launch_delay_cutoff = 100 us)
  get_queue_length_summary
  critical_path_analysis       one per worker task (annotation "task[...]", instance 0),
                               HTA_DISABLE_NS_ROUNDING=1
How a record's label is read from them (docs/attribution.md, "Real HTA"):
  1. the edge into the kernel's start node on its task's critical path, else in HTA's
     critical-path graph: a sync edge from another kernel (cudaStreamWaitEvent matched to
     its cudaEventRecord through cuda_sync) -> event_dependency; a kernel-kernel edge
     (the previous kernel on its stream) -> stream_dependency; a launch-delay edge -> 2.
  2. the launch statistics: a runtime outlier longer than its launch delay -> api_call; a
     launch-delay outlier -> queue; else 3.
  3. the idle-time class of the gap before the kernel on its stream (HTA's rule, per kernel;
     checked against the per-stream totals HTA reports): host_wait, kernel_wait, else
     unknown.
A task whose critical path HTA cannot compute (it asserts on graph launches: upstream
issue #290) names nothing for its kernels: their label is unknown, and the reason is
printed (HTA_CP_FAILED lines), never dropped.

Exit: 0 labels written; 2 bad input; 3 HTA cannot run here (its dependencies missing).
"""
import argparse
import json
import logging
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
HTA_ROOT = os.environ.get("LIN_HTA_ROOT", os.path.join(HERE, "..", "..", "..", "shared", "peers", "hta"))
KIND = {"kernel": 22, "gpu_memcpy": 23, "gpu_memset": 24}
# HTA knows launches by name (hta/common/trace_symbol_table.py, get_runtime_launch_events_
# mask); its list predates CUDA 13's __cudaLaunchKernel (cbid 505/506, what <<<>>> compiles
# to): renamed so that HTA sees the launches at all.
RENAME = {"__cudaLaunchKernel": "cudaLaunchKernel", "__cudaLaunchKernel_ptsz": "cudaLaunchKernel"}


def die(code, msg):
    print(f"hta-labels.py: {msg}", file=sys.stderr)
    sys.exit(code)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("trace")
    ap.add_argument("labels")
    ap.add_argument("--workdir")
    a = ap.parse_args()
    os.environ["HTA_DISABLE_NS_ROUNDING"] = "1"  # else sub-us calls vanish from the path
    if not os.path.isfile(os.path.join(HTA_ROOT, "hta", "trace_analysis.py")):
        die(3, f"HTA is not at {HTA_ROOT} (LIN_HTA_ROOT; ../shared/peers/README.md)")
    sys.path.insert(0, HTA_ROOT)
    try:
        logging.disable(logging.WARNING)  # HTA logs every kernel it cannot place
        from hta.trace_analysis import TraceAnalysis
        from hta.analyzers.critical_path_analysis import CPEdgeType
    except ImportError as e:
        die(3, f"HTA cannot run: {e} (Debian: python3-pandas python3-numpy python3-networkx "
               "python3-plotly python3-pydot python3-psutil; .ci/lib.sh)")
    try:
        with open(a.trace) as f:
            doc = json.load(f)
        events = doc["traceEvents"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        die(2, f"{a.trace}: not a Kineto trace-event JSON document: {e}")

    # Every GPU record of the export: (correlation, stream) -> [(ts_ns, kind, key)].
    gpu = {}
    renamed = 0
    for e in events:
        if e.get("cat") == "cuda_runtime" and e.get("name") in RENAME:
            e["name"] = RENAME[e["name"]]
            renamed += 1
        if e.get("cat") in KIND and e.get("ph") == "X":
            ar = e.get("args", {})
            if "lineage key" not in ar or "correlation" not in ar:
                continue
            ts = round(float(e["ts"]) * 1000)
            gpu.setdefault((ar["correlation"], ar.get("stream", e["tid"])), []).append(
                (ts, KIND[e["cat"]], ar["lineage key"]))
    if not gpu:
        die(2, f"{a.trace}: no GPU record with a lineage key (write it with lineage-validate --export-kineto)")
    tasks = sorted({e["name"] for e in events if e.get("cat") == "user_annotation"
                    and str(e.get("name", "")).startswith("task[")})

    work = a.workdir or tempfile.mkdtemp(prefix="hta-labels.")
    os.makedirs(work, exist_ok=True)
    with open(os.path.join(work, "rank0.json"), "w") as f:
        json.dump(doc, f)
    t = TraceAnalysis(trace_dir=work)
    df = t.t.get_trace(0)
    sym = t.t.symbol_table.get_sym_id_map()
    base = t.t.min_ts

    def ns(us):
        return round((float(us) + base) * 1000)

    # ---- the analyses, as shipped
    idle, _ = t.get_idle_time_breakdown(visualize=False, show_idle_interval_stats=True)
    stats = t.get_cuda_kernel_launch_stats(visualize=False)[0]
    qsum = t.get_queue_length_summary(ranks=[0])
    print(f"HTA renamed={renamed} tasks={len(tasks)} gpu_records={sum(map(len, gpu.values()))}")
    print("HTA idle_time_breakdown\n" + idle.to_string())
    print("HTA queue_length_summary\n" + (qsum.to_string() if qsum is not None else "none"))
    runtime_cutoff, delay_cutoff = 50, 100
    by_corr = {int(r.correlation): r for r in stats.itertuples()}

    # ---- per-kernel idle class: HTA's rule (breakdown_analysis.py,
    # _analyze_idle_time_for_stream), reported there per stream only; checked against it.
    kcats = [sym.get(c, -1000) for c in ("kernel", "gpu_memcpy", "gpu_memset")]
    k = df[df["stream"].ne(-1) & df["cat"].isin(kcats)].copy()
    k = k.join(df[["ts"]], on="index_correlation", rsuffix="_runtime")
    idle_of = {}
    sums = {}
    for stream, ks in k.groupby("stream"):
        ks = ks.sort_values(by="ts")
        prev_end = (ks.ts + ks.dur).shift(1)
        for (idx, row), pe in zip(ks.iterrows(), prev_end):
            if pe != pe:  # NaN: the first kernel of the stream
                continue
            gap = row.ts - pe
            cat = "host_wait" if row.ts_runtime > pe else ("kernel_wait" if gap < 30 else "other")
            idle_of[idx] = (cat, pe)
            sums[(stream, cat)] = sums.get((stream, cat), 0.0) + gap
    for r in idle.itertuples():
        got = sums.get((r.stream, r.idle_category), 0.0)
        if abs(got - r.idle_time) > 1e-3 * max(1.0, abs(r.idle_time)):
            die(1, f"per-kernel idle classes do not add up to HTA's: stream {r.stream} "
                   f"{r.idle_category} {got} against {r.idle_time}")

    k_rt = {i: r for i, r in k["index_correlation"].items() if r >= 0 and r in df.index}

    # ---- critical paths, one per worker task
    cp_label = {}
    failed = {}
    for name in tasks:
        try:
            cp, ok = t.critical_path_analysis(rank=0, annotation=name, instance_id=0)
        except AssertionError as e:
            failed[name] = f"AssertionError: {e}"
            continue
        if not ok:
            failed[name] = "critical_path() returned False"
            continue
        on_path = {e.end: e for e in cp.critical_path_edges_set}
        clipped = cp.trace_df
        for idx in clipped.index[clipped["stream"].ne(-1) & clipped["cat"].isin(kcats)]:
            start, _ = cp.get_nodes_for_event(idx)
            if start is None:
                continue
            e = on_path.get(start.idx)
            where = "path"
            if e is None:  # off the critical path: the edges HTA's graph has into it
                ins = [cp.edges[u, start.idx]["object"] for u in cp.predecessors(start.idx)]
                order = [CPEdgeType.SYNC_DEPENDENCY, CPEdgeType.KERNEL_KERNEL_DELAY,
                         CPEdgeType.KERNEL_LAUNCH_DELAY]
                ins = [x for x in ins if x.type in order and x.weight >= 0]
                ins.sort(key=lambda x: order.index(x.type))
                e = ins[0] if ins else None
                where = "graph"
            if e is None:
                continue
            src = cp.node_list[e.begin]
            src_gpu = df.stream.loc[src.ev_idx] != -1 if src.ev_idx in df.index else False
            # A dependency blames the wait from the call's return to the awaited kernel's end.
            ready = ns(df.ts.loc[k_rt[idx]] + df.dur.loc[k_rt[idx]]) if idx in k_rt else None
            if e.type == CPEdgeType.SYNC_DEPENDENCY and src_gpu:
                cp_label.setdefault(idx, ("event_dependency", ready, ns(src.ts), where))
            elif e.type == CPEdgeType.KERNEL_KERNEL_DELAY:
                cp_label.setdefault(idx, ("stream_dependency", ready, ns(src.ts), where))
            elif e.type == CPEdgeType.KERNEL_LAUNCH_DELAY:
                cp_label.setdefault(idx, ("launch_delay", ns(src.ts), ns(start.ts), where))
    task_of_failed = set()
    if failed:
        reasons = sorted(set(failed.values()))
        print(f"HTA_CP_FAILED tasks={len(failed)} of {len(tasks)}: " + " | ".join(reasons))
        # the kernels launched inside a failed task name nothing
        ann = df[df["name"].isin([sym[n] for n in failed if n in sym])]
        for r in ann.itertuples():
            win = k[(k.ts_runtime >= r.ts) & (k.ts_runtime <= r.ts + r.dur)]
            task_of_failed.update(win.index)

    # ---- one label per GPU record
    out = []
    counts = {}
    fallback = {}  # what the launch statistics and idle classes alone say where the path failed
    for idx, row in k.iterrows():
        ts = ns(row.ts)
        cands = gpu.get((int(row.correlation), int(row.stream)), [])
        if not cands:
            continue
        kind, key = min(cands, key=lambda c: abs(c[0] - ts))[1:]
        lab, s, e = "unknown", None, None
        if idx in cp_label and cp_label[idx][0] != "launch_delay" and idx not in task_of_failed:
            lab, s, e, _ = cp_label[idx]
        else:
            st = by_corr.get(int(row.correlation))
            if st is not None and st.cpu_duration > runtime_cutoff and st.cpu_duration >= st.launch_delay:
                rt = df.loc[row.index_correlation]
                lab, s, e = "api_call", ns(rt.ts), ns(rt.ts + rt.dur)
            elif st is not None and st.launch_delay > delay_cutoff:
                rt = df.loc[row.index_correlation]
                lab, s, e = "queue", ns(rt.ts + rt.dur), ts
            elif idx in idle_of and idle_of[idx][0] in ("host_wait", "kernel_wait"):
                lab, s, e = idle_of[idx][0], ns(idle_of[idx][1]), ts
        if idx in task_of_failed:  # the critical path names nothing: not scored, said
            fallback[lab] = fallback.get(lab, 0) + 1
            lab, s, e = "unknown", None, None
        counts[lab] = counts.get(lab, 0) + 1
        out.append((kind, key, int(row.correlation), lab, s, e))
    with open(a.labels, "w") as f:
        f.write("# gpu_kind\tkey\tcorrelation\tlabel\tstart_ns\tend_ns (hta-labels.py: real HTA)\n")
        for kind, key, corr, lab, s, e in out:
            f.write(f"{kind}\t{key}\t{corr}\t{lab}\t{'-' if s is None else s}\t{'-' if e is None else e}\n")
    if fallback:
        print("HTA_CP_FAILED_FALLBACK (not scored: what the launch statistics and idle classes "
              "alone say of those kernels) " + " ".join(f"{l}={n}" for l, n in sorted(fallback.items())))
    print("HTA labels " + " ".join(f"{l}={n}" for l, n in sorted(counts.items())))
    if not a.workdir:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
