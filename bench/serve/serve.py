#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""serve.py: a serving-shaped reference workload (docs/serving.md).

A front end (asyncio, this process) accepts --requests requests with Poisson arrivals at
--rate per second, traces each with its own lineage Runtime (host only) and hands it to an
engine process as one line of text (its fields and the W3C traceparent). The engine
(``serve.py --engine``, a child process) runs a continuous-batching scheduler thread (a
token budget per step, chunked prefill, requests joining and leaving between steps,
preemption by swap or by recompute when the KV cache is full) and a model-runner worker
pool: eager kernels for steps with prefill, one CUDA graph per decode batch-size bucket
(captured once, replayed), KV-cache swap copies on a side stream, the next step prepared
while the device still runs the last. The GPU is the CUPTI-semantics simulator
(bench/sim, through the test-only module _lineage_sim); kernel counts and durations come
from bench/serve/kernels.json (a real vLLM decode step, bench/serve/derive_kernels.py).

Writes into --out: engine.lt and frontend.lt (the traces), truth.lt (lineage-validate
--expect), truth.json (the workload's own bookkeeping), annotations.json (what an
engine's per-step NVTX ranges give: the baseline) and run.json (CPU and wall time).
--no-lineage runs the same code with tracing off (no Runtime), for the overhead figure.

A fixed --seed fixes everything but wall-clock times: the scheduler admits a request when
the step clock (the modelled device time of the steps so far) passes its arrival time, so
batches, tokens, preemptions and kernel durations do not depend on timing.
"""
import argparse
import asyncio
import contextlib
import hashlib
import json
import os
import queue
import random
import resource
import sys
import threading
import time

import lineage  # the share flags and the pool; a Runtime only without --no-lineage
import lineage.futures

HERE = os.path.dirname(os.path.abspath(__file__))
MAIN_STREAM, SIDE_STREAM = 7, 13
KV_BYTES_PER_TOKEN = 16 * 1024    # a modelled KV cache row (bytes per token)
SWAP_BYTES_PER_NS = 25            # host link: 25 GB/s
KERNEL, MEMCPY = 22, 23           # LIN_REC_KERNEL, LIN_REC_MEMCPY (truth gpu_kind)
SHARE_PREFILL, SHARE_DECODE = lineage.SHARE_PREFILL, lineage.SHARE_DECODE
SHARE_FIRST_TOKEN = lineage.SHARE_FIRST_TOKEN


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--requests", type=int, default=200)
    p.add_argument("--rate", type=float, default=200.0, help="arrivals per second (Poisson)")
    p.add_argument("--prompt-len", type=int, default=256, help="mean prompt tokens")
    p.add_argument("--output-len", type=int, default=32, help="mean output tokens")
    p.add_argument("--budget", type=int, default=2048, help="tokens per step")
    p.add_argument("--kv-tokens", type=int, default=32768,
                   help="KV cache capacity in tokens (full: preemption)")
    p.add_argument("--max-batch", type=int, default=256, help="requests per step at most")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--workers", type=int, default=2, help="model-runner pool threads")
    p.add_argument("--out", required=True, help="output directory")
    p.add_argument("--inject-host-delay-us", type=int, default=0,
                   help="a host delay in the model runner before the first step of every "
                        "--inject-every-th request (the truth names it)")
    p.add_argument("--inject-every", type=int, default=10)
    p.add_argument("--no-lineage", action="store_true", help="tracing off (overhead baseline)")
    p.add_argument("--engine", action="store_true", help=argparse.SUPPRESS)
    # tests only: a truth made wrong on purpose (the first step of two requests or more
    # credited to its first request alone), so the check must fail
    p.add_argument("--fault-truth", action="store_true", help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    if a.inject_host_delay_us < 0:
        p.error("--inject-host-delay-us must be >= 0")
    for k in ("requests", "prompt_len", "output_len", "budget", "kv_tokens", "max_batch",
              "workers", "inject_every"):
        if getattr(a, k) < 1:
            p.error(f"--{k.replace('_', '-')} must be >= 1 (got {getattr(a, k)})")
    if not a.rate > 0:
        p.error(f"--rate must be > 0 (got {a.rate})")
    if a.kv_tokens < a.prompt_len * 2 + a.output_len * 2:
        p.error(f"--kv-tokens {a.kv_tokens} cannot hold one request of up to "
                f"{2 * a.prompt_len} + {2 * a.output_len} tokens")
    return a


def workload(a):
    """The requests a seed gives: (n, arrival offset ns, prompt tokens, output tokens)."""
    rng = random.Random(a.seed)
    t, out = 0.0, []
    for n in range(a.requests):
        t += rng.expovariate(a.rate)
        prompt = rng.randint(max(1, a.prompt_len // 2), a.prompt_len * 3 // 2)
        output = rng.randint(max(1, a.output_len // 2), a.output_len * 3 // 2)
        out.append((n, int(t * 1e9), prompt, output))
    return out


# ----------------------------------------------------------------------------- kernels

class Kernels:
    """The kernel table (kernels.json): a decode step's graph and the eager kernels after
    it, durations drawn from each position's recorded spread."""

    def __init__(self, path=os.path.join(HERE, "kernels.json")):
        with open(path) as f:
            t = json.load(f)
        self.table = t
        self.prologue = t["prologue"]
        self.layers = [t["layer_shapes"][i]["kernels"] for i in t["layer_order"]]
        self.epilogue = t["epilogue"]
        self.after = t["after_graph"]

    def forward(self, rng):
        """[(name, base duration ns)] of one forward pass (graph order)."""
        seq = []
        for k in self.prologue:
            seq.append((k["name"], rng.choice(k["dur_ns"])))
        for layer in self.layers:
            for k in layer:
                seq.append((k["name"], rng.choice(k["dur_ns"])))
        for k in self.epilogue:
            seq.append((k["name"], rng.choice(k["dur_ns"])))
        return seq

    def sample(self, rng):
        return [(k["name"], rng.choice(k["dur_ns"])) for k in self.after]


def decode_scale(batch):
    """Modelled: a decode kernel's time grows with the batch (the trace's step ran a
    small batch): x1 at 1 request, x2 at 256."""
    return 1.0 + (batch - 1) / 255.0


def prefill_scale(tokens):
    """Modelled: an eager step's kernel time grows with its tokens, x1 up to 64, then
    linearly (x5 at 2,048 tokens)."""
    return max(1.0, 1.0 + (tokens - 64) / 496.0)


def buckets(max_batch):
    b, out = 1, []
    while b < max_batch:
        out.append(b)
        b *= 2
    out.append(max_batch)
    return out


# ----------------------------------------------------------------------------- no tracing

class _NoTrace:
    """The Runtime calls the engine makes, with tracing off (--no-lineage): same code
    path, nothing recorded."""
    _ids = 0

    def _id(self):
        _NoTrace._ids += 1
        return _NoTrace._ids

    def request_begin(self, *a, **k):
        return self._id()

    def request_end(self, *a):
        pass

    def epoch_declare(self, *a, **k):
        return self._id()

    def epoch_retire(self, *a):
        pass

    def token_for(self, i):
        return None

    def adopt(self, tok):
        return contextlib.nullcontext()

    def launch(self, name):
        return contextlib.nullcontext()

    def request(self, *a, **k):
        return contextlib.nullcontext()

    def inject(self):
        return {"traceparent": ""}


class _NoGraphs:
    def capture_begin(self):
        return None

    def capture_end(self, *a):
        pass

    def exec_instantiated(self, *a):
        pass

    def node_cloned(self, *a):
        pass

    def launch(self, *a):
        return contextlib.nullcontext()


# ----------------------------------------------------------------------------- engine

class Req:
    __slots__ = ("n", "arrival_off", "prompt", "output", "lid", "recv_ns", "computed",
                 "generated", "first_done", "done", "swapped", "admitted", "steps",
                 "preemptions", "scheduled_ns", "first_step", "last_step", "preempted_at")

    def __init__(self, n, arrival_off, prompt, output):
        self.n, self.arrival_off, self.prompt, self.output = n, arrival_off, prompt, output
        self.lid = None
        self.recv_ns = None
        self.computed = 0        # tokens whose KV is in the cache
        self.generated = 0       # output tokens produced
        self.first_done = False  # first token produced
        self.done = False
        self.swapped = False
        self.admitted = -1
        self.steps = []
        self.preemptions = []
        self.preempted_at = -1
        self.scheduled_ns = None
        self.first_step = None
        self.last_step = None

    def target(self):
        """Tokens to compute before the next token: the prompt, plus what was generated
        (a request preempted by recompute computes those again)."""
        return self.prompt + max(0, self.generated - 1) if self.first_done else self.prompt

    def kv(self):
        return self.computed


class Step:
    __slots__ = ("k", "entries", "kind", "bucket", "swaps", "eid", "t_plan", "t_submit",
                 "kernels", "records", "end_ns", "rng_seed", "plan", "injected", "vclock")

    def __init__(self, k):
        self.k = k
        self.entries = []    # (req, tokens, flags, produces_token, first_token)
        self.kind = None     # "decode" (graph replay) or "mixed" (eager)
        self.bucket = None
        self.swaps = []      # (req, "out"|"in", tokens)
        self.eid = None
        self.records = []    # (gpu_kind, key, stream, start, end, owner n or None)
        self.injected = []
        self.end_ns = 0


class Engine:
    def __init__(self, a, rt, sim, lin):
        self.a, self.rt, self.sim, self.lin = a, rt, sim, lin
        self.kernels = Kernels()
        self.gt = rt.graph_tracker(max_nodes=16384) if lin else _NoGraphs()
        self.inbox = queue.Queue()
        self.out_lock = threading.Lock()
        self.reqs = {}
        self.waiting = []     # admitted order: FCFS; preempted-by-recompute go first
        self.swapped = []
        self.running = []
        self.steps = []
        self.preemptions = 0
        self.graphs = {}      # bucket -> (exec id, [(name, dur)])
        self.vclock = 0       # modelled device time of the steps so far (ns)
        w = workload(a)
        self.arrivals = [(off, n) for n, off, _, _ in w]   # not yet admitted, in order
        self.arrival_of = {n: (off, p, o) for n, off, p, o in w}
        self.closed = False
        self.prev_end = 0     # device end of the step before the one in flight
        self.annotations = []

    # --- input: the front end's lines, on a reader thread
    def reader(self, stream):
        for line in stream:
            msg = json.loads(line)
            if msg.get("end"):
                self.inbox.put(("end", msg["count"]))
                return
            recv = time.monotonic_ns()
            r = Req(msg["n"], msg["arrival_off"], msg["prompt"], msg["output"])
            r.recv_ns = recv
            remote = self.lin.extract(msg["traceparent"]) if self.lin else None
            r.lid = self.rt.request_begin(f"req{r.n}", user_id=r.n, remote=remote)
            self.inbox.put(("req", r))
        self.inbox.put(("end", None))

    def reply(self, obj):
        with self.out_lock:
            sys.stdout.write(json.dumps(obj) + "\n")
            sys.stdout.flush()

    # --- CUDA graphs: one per decode bucket, captured at start-up under a warm-up epoch
    def capture_graphs(self):
        wid = self.rt.request_begin("engine_warmup")
        eid = self.rt.epoch_declare(wid, name="cudagraph_capture")
        rng = random.Random(self.a.seed * 7919 + 1)
        fwd = self.kernels.forward(rng)
        with self.rt.adopt(self.rt.token_for(eid)):
            for b in buckets(self.a.max_batch):
                seq = [(nm, max(1, int(d * decode_scale(b)))) for nm, d in fwd]
                cap = self.gt.capture_begin()
                self.sim.capture_begin(MAIN_STREAM)
                for nm, d in seq:
                    with self.rt.launch(nm):
                        if self.sim.launch_kernel(MAIN_STREAM, nm, d) != 0:
                            raise RuntimeError("a captured launch ran")
                graph, nodes = self.sim.capture_end(MAIN_STREAM)
                if len(nodes) != len(seq):
                    raise RuntimeError(f"graph of bucket {b}: {len(nodes)} nodes captured, "
                                       f"{len(seq)} launched (simulator node limit?)")
                self.gt.capture_end(cap, graph, nodes)
                exec_id, pairs = self.sim.graph_instantiate(graph)
                self.gt.exec_instantiated(graph, exec_id)
                for orig, clone in pairs:
                    self.gt.node_cloned(orig, clone, graph, exec_id)
                self.graphs[b] = (exec_id, seq)
        self.rt.epoch_retire(eid)
        self.rt.request_end(wid)

    # --- the scheduler (host work of one step): who runs, with how many tokens
    def admit_arrivals(self):
        """Move the requests whose arrival time the step clock passed into waiting, in
        arrival order; wait for one that has not reached the engine yet (the front end
        sends on wall-clock time, the engine knows the seed's arrival times)."""
        while self.arrivals and self.arrivals[0][0] <= self.vclock:
            off, n = self.arrivals[0]
            while n not in self.reqs:
                if self.closed:
                    raise RuntimeError(f"engine: the front end ended without request {n}")
                self.pump(block=True)
            self.arrivals.pop(0)
            r = self.reqs[n]
            r.admitted = len(self.steps)
            self.waiting.append(r)

    def pump(self, block):
        """Take one message from the reader; False when none was there (non-blocking)."""
        try:
            kind, v = self.inbox.get(block=block, timeout=60 if block else None)
        except queue.Empty:
            if block:
                raise RuntimeError("engine: no message from the front end for 60 s")
            return False
        if kind == "end":
            if v is not None and v != len(self.reqs):
                raise RuntimeError(f"engine: the front end sent {len(self.reqs)} requests, "
                                   f"its END line says {v}")
            self.closed = True
        else:
            if v.n in self.reqs or v.n not in self.arrival_of:
                raise RuntimeError(f"engine: request {v.n} unexpected (twice, or not one "
                                   f"of this seed's {len(self.arrival_of)})")
            if (v.arrival_off, v.prompt, v.output) != self.arrival_of[v.n]:
                raise RuntimeError(f"engine: request {v.n}'s fields differ from the seed's")
            self.reqs[v.n] = v
        return True

    def schedule(self, k):
        a = self.a
        st = Step(k)
        budget = a.budget
        kv_used = sum(r.kv() for r in self.running)
        # 1. running requests: decodes (1 token) and unfinished prefill chunks, in
        # admission order; when the KV cache cannot take this step's tokens, preempt the
        # latest admitted (by swap and by recompute in turn).
        need = [(r, 1 if r.computed >= r.target() else min(r.target() - r.computed, budget))
                for r in self.running]
        while len(self.running) > 1 and kv_used + sum(t for _, t in need) > a.kv_tokens:
            victim = self.running.pop()
            need.pop()
            kv_used -= victim.kv()
            self.preemptions += 1
            if self.preemptions % 2 == 1:
                victim.swapped = True
                st.swaps.append((victim, "out", victim.computed))
                self.swapped.append(victim)
                victim.preemptions.append({"step": k, "mode": "swap"})
            else:
                victim.computed = 0
                victim.preempted_at = k   # not back in this step
                self.waiting.insert(0, victim)
                victim.preemptions.append({"step": k, "mode": "recompute"})
        for r, t in need:
            if budget <= 0 or len(st.entries) >= a.max_batch:
                break
            t = min(t, budget)
            st.entries.append(self.entry(r, t, kv_used))
            budget -= t
        # 2. swapped-out requests back first, then waiting ones (chunked prefill)
        while self.swapped and len(st.entries) < a.max_batch and budget > 0:
            r = self.swapped[0]
            t = 1 if r.computed >= r.target() else min(r.target() - r.computed, budget)
            if kv_used + sum(e[1] for e in st.entries) + r.kv() + t > a.kv_tokens:
                break
            self.swapped.pop(0)
            r.swapped = False
            st.swaps.append((r, "in", r.computed))
            kv_used += r.kv()
            self.running.append(r)
            st.entries.append(self.entry(r, t, kv_used))
            budget -= t
        while self.waiting and len(st.entries) < a.max_batch and budget > 0:
            r = self.waiting[0]
            if r.preempted_at == k:
                break
            t = min(r.target() - r.computed, budget)
            if kv_used + sum(e[1] for e in st.entries) + t > a.kv_tokens:
                break
            self.waiting.pop(0)
            self.running.append(r)
            st.entries.append(self.entry(r, t, kv_used))
            budget -= t
        if not st.entries:
            return None
        decode_only = st.entries and all(e[2] == SHARE_DECODE for e in st.entries)
        st.kind = "decode" if decode_only else "mixed"
        if decode_only:
            st.bucket = min(b for b in buckets(a.max_batch) if b >= len(st.entries))
        # the step's outcome (known to the scheduler: it schedules the next step on it)
        for r, t, flags, produces, first in st.entries:
            r.computed += t
            if produces:
                r.generated += 1
                if first:
                    r.first_done = True
                    r.first_step = k
            if r.scheduled_ns is None:
                r.scheduled_ns = time.monotonic_ns()
            r.steps.append(k)
            if r.generated >= r.output:
                r.done = True
                r.last_step = k
        self.running = [r for r in self.running if not r.done]
        # modelled device time: the step clock advances by the step's kernels
        rng = random.Random((self.a.seed << 20) ^ k)
        st.rng_seed = rng.random()
        st.kernels = self.step_kernels(st, rng)
        self.vclock += sum(d for _, d in st.kernels) + sum(
            self.swap_ns(t) for _, _, t in st.swaps)
        if self.injected_in(st):
            # the runner will stall this long: the step clock counts it, so the requests
            # behind are admitted when they would be (not queued behind the stall)
            self.vclock += a.inject_host_delay_us * 1000
        st.plan = [[e[0].n, e[1], e[2]] for e in st.entries]
        st.vclock = self.vclock
        return st

    def entry(self, r, t, kv_used):
        if r.computed >= r.target():
            return (r, 1, SHARE_DECODE, True, False)
        completes = r.computed + t >= r.target()
        first = completes and not r.first_done
        flags = SHARE_PREFILL | (SHARE_FIRST_TOKEN if first else 0)
        return (r, t, flags, completes, first)

    def step_kernels(self, st, rng):
        if st.kind == "decode":
            return list(self.graphs[st.bucket][1]) + [
                (nm, max(1, int(d * decode_scale(len(st.entries))))) for nm, d in
                self.kernels.sample(rng)]
        tokens = sum(e[1] for e in st.entries)
        return [(nm, max(1, int(d * prefill_scale(tokens)))) for nm, d in
                self.kernels.forward(rng) + self.kernels.sample(rng)]

    def injected_in(self, st):
        """The requests whose first step st is and that get the injected delay."""
        a = self.a
        if not a.inject_host_delay_us:
            return []
        return [e[0].n for e in st.entries if e[0].steps[0] == st.k and
                e[0].n % a.inject_every == a.inject_every // 2]

    @staticmethod
    def swap_ns(tokens):
        return max(1000, tokens * KV_BYTES_PER_TOKEN // SWAP_BYTES_PER_NS)

    # --- the model runner (a pool worker): one step's launches
    def run_step(self, st):
        rt, sim = self.rt, self.sim
        recs = st.records
        delayed = self.injected_in(st)
        if delayed:
            # the injected cause: the runner's host work of these requests' first step
            # stalls (as a page fault, a GC pause or a slow tokenizer would)
            t0 = time.monotonic_ns()
            time.sleep(self.a.inject_host_delay_us / 1e6)
            t1 = time.monotonic_ns()
            st.injected = [{"request": n, "step": st.k, "stretch": "host", "cause":
                            "host_delay", "start_ns": t0, "end_ns": t1, "ns": t1 - t0}
                           for n in delayed]
        for r, way, tokens in st.swaps:
            # a copy serving the one request it moves, on the side stream
            sid = self.rt.epoch_declare(r.lid, name=f"kv_swap_{way}", parent=st.eid,
                                        shares=[(tokens, 0)])
            with rt.adopt(rt.token_for(sid)):
                with rt.launch("cudaMemcpyAsync"):
                    s, e = sim.memcpy(SIDE_STREAM, max(1, tokens) * KV_BYTES_PER_TOKEN,
                                      dur_ns=self.swap_ns(tokens))
            rt.epoch_retire(sid)
            recs.append((MEMCPY, s, SIDE_STREAM, s, e, r.n))
        if st.kind == "decode":
            exec_id, seq = self.graphs[st.bucket]
            with self.gt.launch(exec_id, "cudaGraphLaunch"):
                nodes = sim.graph_launch_ex(exec_id, MAIN_STREAM)
            if len(nodes) != len(seq):
                raise RuntimeError(f"step {st.k}: replay ran {len(nodes)} of {len(seq)} nodes")
            for g, s, e in nodes:
                recs.append((KERNEL, g, MAIN_STREAM, s, e, None))
            eager = st.kernels[len(seq):]
        else:
            eager = st.kernels
        # One launch bracket around the step's eager kernels, as an engine brackets its
        # forward pass (docs/python.md): every call inside carries the step's epoch.
        if eager:
            with rt.launch("forward"):
                for nm, d in eager:
                    g, s, e = sim.launch_kernel_ex(MAIN_STREAM, nm, dur_ns=d)
                    recs.append((KERNEL, g, MAIN_STREAM, s, e, None))
        st.end_ns = max(e for _, _, _, _, e, _ in recs)
        # one step in flight on the device: wait for the step before this one to end
        # (what an engine's output transfer does), while the scheduler plans the next.
        wait_until(self.prev_end)
        self.prev_end = st.end_ns
        return st

    def finish(self, st):
        """After the worker ran step st: retire its epoch; reply for requests done."""
        self.rt.epoch_retire(st.eid)
        for r, t, flags, produces, first in st.entries:
            if r.done and r.last_step == st.k:
                self.rt.request_end(r.lid)
                self.reply({"n": r.n, "done": True})

    def run(self):
        a = self.a
        self.capture_graphs()
        self.reply({"ready": True})   # the front end starts its clock now
        # the lineage pool with tracing off too: with no context it runs tasks as the
        # standard one does (the same code path)
        pool = lineage.futures.ThreadPoolExecutor(a.workers)
        inflight = None
        k = 0
        while True:
            while self.pump(block=False):
                pass
            # idle engine: jump the step clock to the next arrival
            if not self.running and not self.waiting and not self.swapped:
                if not self.arrivals:
                    break
                self.vclock = max(self.vclock, self.arrivals[0][0])
            self.admit_arrivals()
            t_plan = time.monotonic_ns()
            st = self.schedule(k)
            if st is None:
                raise RuntimeError(f"step {k}: nothing schedulable (KV cache too small?)")
            st.t_plan = t_plan
            shares = [(t, f) for _, t, f, _, _ in st.entries]
            st.eid = self.rt.epoch_declare(*[e[0].lid for e in st.entries], name="step",
                                           shares=shares)
            if inflight is not None:
                done = inflight.result()
                self.finish(done)
            with self.rt.adopt(self.rt.token_for(st.eid)):
                inflight = pool.submit(self.run_step, st)
            st.t_submit = time.monotonic_ns()
            self.steps.append(st)
            self.annotations.append({"step": k, "start_ns": t_plan, "end_ns": st.t_submit,
                                     "requests": [e[0].n for e in st.entries],
                                     "tokens": [e[1] for e in st.entries]})
            k += 1
        if inflight is not None:
            self.finish(inflight.result())
        pool.shutdown()
        wait_until(self.prev_end)

    def truth(self):
        """The workload's bookkeeping (truth.json) and the validate truth labels."""
        kernels, labels = [], []
        lid_of = {r.n: r.lid for r in self.reqs.values()}
        if self.a.fault_truth:
            st = next(st for st in self.steps if len(st.entries) >= 2)
            st.entries = st.entries[:1]
        for st in self.steps:
            for kind, key, stream, s, e, owner in st.records:
                kernels.append([kind, key, st.k, stream, s, e, owner])
                reqs = [lid_of[owner]] if owner is not None else \
                    [e_[0].lid for e_ in st.entries]
                labels.append((kind, key, reqs))
        steps = [{"step": st.k, "kind": st.kind, "bucket": st.bucket,
                  "entries": [[e[0].n, e[1], e[2]] for e in st.entries],
                  "swaps": [[r.n, way, t] for r, way, t in st.swaps],
                  "plan_ns": st.t_plan, "submit_ns": st.t_submit,
                  "step_clock_ns": st.vclock,
                  "first_start_ns": min((rec[3] for rec in st.records), default=None),
                  "end_ns": st.end_ns} for st in self.steps]
        end_of = {st.k: st.end_ns for st in self.steps}
        reqs = {}
        for r in sorted(self.reqs.values(), key=lambda r: r.n):
            reqs[str(r.n)] = {
                "n": r.n, "arrival_off_ns": r.arrival_off, "prompt": r.prompt,
                "output": r.output, "engine_recv_ns": r.recv_ns,
                "scheduled_ns": r.scheduled_ns, "steps": r.steps,
                "first_step": r.first_step, "last_step": r.last_step,
                "first_token_ns": end_of.get(r.first_step),
                "last_token_ns": end_of.get(r.last_step),
                "preemptions": r.preemptions}
        return {"kernel_columns": ["gpu_kind", "key", "step", "stream", "start_ns", "end_ns",
                                   "owner"],
                "kernels": kernels, "steps": steps, "requests": reqs,
                "injected_delays": [d for st in self.steps for d in st.injected]}, labels

    def plan_digest(self):
        h = hashlib.sha256()
        for st in self.steps:
            h.update(json.dumps([st.k, st.kind, st.bucket, st.plan,
                                 [[r.n, w, t] for r, w, t in st.swaps],
                                 st.kernels]).encode())
        return h.hexdigest()


def clock_probe(rt):
    """The trace's host clock against CLOCK_MONOTONIC now: [monotonic ns, offset ns,
    half the width of the two monotonic reads around the runtime's]. lineage reads
    CLOCK_MONOTONIC through a TSC calibrated at start-up (docs/trace-format.md), so the
    offset grows with its rate error; the probes bound it (the TTFT check's clock error)."""
    best = None
    for _ in range(20):   # the narrowest of 20 (a thread descheduled between reads)
        m1 = time.monotonic_ns()
        t = rt.now_ns()
        m2 = time.monotonic_ns()
        if best is None or m2 - m1 < best[1] - best[0]:
            best = (m1, m2, t)
    m1, m2, t = best
    return [(m1 + m2) // 2, t - (m1 + m2) // 2, (m2 - m1) // 2 + 1]


def wait_until(t_ns):
    """Sleep until CLOCK_MONOTONIC reaches t_ns (the simulated device's clock)."""
    while True:
        left = t_ns - time.monotonic_ns()
        if left <= 0:
            return
        time.sleep(min(left / 1e9, 0.05))


def engine_main(a):
    sys.path.insert(0, os.path.join(HERE, "..", "..", "python", "tests"))
    import _lineage_sim
    lin = None if a.no_lineage else lineage
    sim = _lineage_sim.Sim(seed=a.seed, host_clock=True)
    probes = []
    if lin:
        rt = lin.Runtime(trace_path=os.path.join(a.out, "engine.lt"), backend=sim)
        probes.append(clock_probe(rt))
    else:
        rt = _NoTrace()
    eng = Engine(a, rt, sim, lin)
    rd = threading.Thread(target=eng.reader, args=(sys.stdin,), daemon=True)
    rd.start()
    err = []

    def guarded():
        try:
            eng.run()
        except BaseException as e:  # reported to the front end, then exit 1
            err.append(e)
    sched = threading.Thread(target=guarded, name="scheduler")
    sched.start()
    sched.join()
    if lin:
        probes.append(clock_probe(rt))
        st = rt.stats()
        rt.close()
        # the workload uses the API as documented: nothing absorbed, no misuse, nothing
        # dropped (a share refused would be split equally by the report, silently)
        bad = {k: st[k] for k in ("absorbed", "misuse", "events_dropped") if st.get(k)}
        if bad and not err:
            err.append(RuntimeError(f"lineage runtime stats: {bad}"))
    # the workload's CPU time (every thread), before the truth is written (bookkeeping)
    ru = resource.getrusage(resource.RUSAGE_SELF)
    cpu = ru.ru_utime + ru.ru_stime
    if err:
        print(f"serve.py engine: {err[0]!r}", file=sys.stderr)
        return 1
    truth, labels = eng.truth()
    truth["plan_sha256"] = eng.plan_digest()
    truth["engine_pid"] = os.getpid()
    truth["engine_cpu_s"] = cpu
    truth["clock_probes"] = {"engine": probes}
    if lin:
        import _truth
        _truth.write(os.path.join(a.out, "truth.lt"), labels)
    with open(os.path.join(a.out, "engine-truth.json"), "w") as f:
        json.dump(truth, f)
    with open(os.path.join(a.out, "annotations.json"), "w") as f:
        json.dump({"rule": "one range per step on the scheduler thread: from the step's "
                           "planning to its hand-off to the model runner",
                   "steps": eng.annotations}, f)
    return 0


# ----------------------------------------------------------------------------- front end

async def front_main(a):
    lin = None if a.no_lineage else lineage
    reqs = workload(a)
    rt = lin.Runtime(trace_path=os.path.join(a.out, "frontend.lt")) if lin else _NoTrace()
    probes = [clock_probe(rt)] if lin else []
    proc = await asyncio.create_subprocess_exec(
        sys.executable, os.path.abspath(__file__), "--engine", "--out", a.out,
        *engine_argv(a), stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE)
    ready = await proc.stdout.readline()   # after the engine captured its graphs
    if not ready or not json.loads(ready).get("ready"):
        await proc.wait()
        return proc.returncode or 1, {}, 0, probes
    t0 = time.monotonic_ns()
    pending = {}
    arrivals = {}
    gone = []

    async def read_replies():
        while True:
            line = await proc.stdout.readline()
            if not line:   # the engine ended: nothing more will be answered
                for fut in pending.values():
                    fut.set_exception(RuntimeError("the engine exited"))
                gone.append(True)
                return
            msg = json.loads(line)
            fut = pending.pop(msg["n"], None)
            if fut is not None:
                fut.set_result(msg)

    async def one(n, off, prompt, output):
        await asyncio.sleep(max(0.0, (t0 + off - time.monotonic_ns()) / 1e9))
        if gone:
            raise RuntimeError("the engine exited")
        fut = asyncio.get_running_loop().create_future()
        pending[n] = fut
        before = time.monotonic_ns()
        with rt.request(f"req{n}"):
            after = time.monotonic_ns()
            tp = rt.inject()["traceparent"]
            arrivals[n] = (before, after)
            proc.stdin.write((json.dumps({"n": n, "arrival_off": off, "prompt": prompt,
                                          "output": output, "traceparent": tp}) +
                              "\n").encode())
            await proc.stdin.drain()
            await fut

    reader = asyncio.ensure_future(read_replies())
    await asyncio.gather(*(one(*r) for r in reqs))
    proc.stdin.write((json.dumps({"end": True, "count": len(reqs)}) + "\n").encode())
    await proc.stdin.drain()
    proc.stdin.close()
    rc = await proc.wait()
    await reader
    if lin:
        probes.append(clock_probe(rt))
        rt.close()
    return rc, arrivals, t0, probes


def engine_argv(a):
    return ["--requests", str(a.requests), "--rate", str(a.rate), "--prompt-len",
            str(a.prompt_len), "--output-len", str(a.output_len), "--budget", str(a.budget),
            "--kv-tokens", str(a.kv_tokens), "--max-batch", str(a.max_batch), "--seed",
            str(a.seed), "--workers", str(a.workers), "--inject-host-delay-us",
            str(a.inject_host_delay_us), "--inject-every", str(a.inject_every)] + (
                ["--fault-truth"] if a.fault_truth else []) + (["--no-lineage"] if a.no_lineage
                                                         else [])


def main(argv=None):
    a = parse_args(sys.argv[1:] if argv is None else argv)
    os.makedirs(a.out, exist_ok=True)
    if a.engine:
        return engine_main(a)
    wall0 = time.monotonic()
    ru0 = resource.getrusage(resource.RUSAGE_SELF)
    rc, arrivals, t0, probes = asyncio.run(front_main(a))
    wall = time.monotonic() - wall0
    self_ru = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu_front = (self_ru.ru_utime + self_ru.ru_stime) - (ru0.ru_utime + ru0.ru_stime)
    if rc != 0:
        print(f"serve.py: the engine exited {rc}", file=sys.stderr)
        return 1
    with open(os.path.join(a.out, "engine-truth.json")) as f:
        truth = json.load(f)
    os.unlink(os.path.join(a.out, "engine-truth.json"))
    # the engine's own figure (all its threads, up to its trace closed; not the truth
    # writing after), beside the whole child's (RUSAGE_CHILDREN) for reference
    cpu_engine = truth["engine_cpu_s"]
    cpu_engine_all = kids.ru_utime + kids.ru_stime
    for n, (before, after) in arrivals.items():
        r = truth["requests"][str(n)]
        r["arrival_ns"] = (before + after) // 2
        r["arrival_bracket_ns"] = [before, after]
    truth["params"] = {k: v for k, v in vars(a).items() if k not in ("engine", "out",
                                                                      "fault_truth")}
    truth["t0_ns"] = t0
    truth["clock_probes"]["frontend"] = probes
    with open(os.path.join(a.out, "truth.json"), "w") as f:
        json.dump(truth, f)
    run = {"lineage": not a.no_lineage, "requests": a.requests, "wall_s": wall,
           "cpu_s": cpu_front + cpu_engine, "cpu_frontend_s": cpu_front,
           "cpu_engine_s": cpu_engine, "cpu_engine_with_truth_s": cpu_engine_all, "steps": len(truth["steps"]),
           "gpu_records": len(truth["kernels"]), "plan_sha256": truth["plan_sha256"]}
    with open(os.path.join(a.out, "run.json"), "w") as f:
        json.dump(run, f, indent=1)
    print(f"serve.py: {a.requests} requests, {run['steps']} steps, {run['gpu_records']} GPU "
          f"records, wall {wall:.2f} s, CPU {run['cpu_s']:.2f} s "
          f"({'lineage' if run['lineage'] else 'no lineage'}) -> {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
