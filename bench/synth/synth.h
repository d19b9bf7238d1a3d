/* SPDX-License-Identifier: MIT */
/*
 * synth.h - lineage-synth: synthetic handoff workloads on the CUPTI-semantics simulator,
 * each runnable under lineage's epochs and under models of what today's tools do
 * (docs/comparison.md), with ground truth from the workload's own bookkeeping. Internal
 * to bench/synth/.
 */
#ifndef LIN_SYNTH_H
#define LIN_SYNTH_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lineage/graph.h"
#include "lineage/runtime.h"
#include "sim.h"

/* The correlation strategies (strategy.c; docs/comparison.md cites what each models). */
enum synth_strategy {
	SYNTH_EPOCH,        /* lineage: tokens, epochs pushed at launch, the graph tracker */
	SYNTH_KINETO,       /* PyTorch profiler + Kineto: op ids (CUSTOM0) on every thread */
	SYNTH_NVTX,         /* Nsight Systems: NVTX ranges of the launching thread */
	SYNTH_CUDA_ONLY,    /* correlationId + same-thread time containment */
	SYNTH_MANUAL,       /* the request id re-pushed by hand before each launch */
	SYNTH_MANUAL_BATCH, /* manual, and a batch id logged with the batch's requests */
	SYNTH_N_STRATEGIES
};
extern const char *const synth_strategy_names[SYNTH_N_STRATEGIES];

#define SYNTH_MAX_BATCH 64
#define SYNTH_MAX_THREADS 64

struct synth_opts {
	const char *scenario;
	enum synth_strategy strategy;
	uint64_t seed;
	uint32_t threads, requests, hops, replays, batch, streams;
	uint32_t lanes; /* independent copies of the workload run concurrently */
	const char *trace, *truth;
	const char *otlp;           /* also stream OTLP/JSON spans here (runtime option), or NULL */
	enum lin_sim_cupti cupti;   /* attach decoding (default) or the test CUPTI layer */
	enum lin_sim_driver driver; /* layer: nested driver calls */
	bool latency;               /* kernel records carry queued/submitted (sim mode) */
	uint32_t api_enter_ns, api_exit_ns; /* lin_sim_opts: the call's work around CUPTI's stamps */
	bool own_clock; /* layer mode: LIN_CUPTI_OWN_CLOCK (device times on CUPTI's clock) */
	/* attr-* scenarios (docs/attribution.md): where the cause truth and the simulated
	 * scheduler collector's host_sched records go (NULL: not written), and the injected
	 * delay's size */
	const char *cause_truth, *sched_trace;
	uint64_t delay_ns;
};

/* ------------------------------------------------------------- thread pool (pool.c) */

/* A deterministic pool: every step runs on a chosen pool thread, one step at a time, in
 * the order the scenario issues them; data crosses threads only through the scenario's
 * task structs (a real handoff: captured on one thread, adopted on another). */
struct synth_pool;
typedef void (*synth_step_fn)(void *arg);
int synth_pool_start(struct synth_pool **out, uint32_t n);
void synth_pool_exec(struct synth_pool *p, uint32_t thread, synth_step_fn fn, void *arg);
void synth_pool_stop(struct synth_pool *p);

/* ------------------------------------------------------------- truth (truth.c) */

struct synth_label {
	uint32_t gpu_kind; /* LIN_REC_KERNEL / MEMCPY / MEMSET */
	uint64_t key;      /* grid_id or start_dev */
	uint32_t n;
	uint64_t req[SYNTH_MAX_BATCH];
};

struct synth_truth {
	struct synth_label *v;
	size_t n, cap;
};

void synth_truth_add(struct synth_truth *t, uint32_t kind, uint64_t key, const uint64_t *req, uint32_t n);
int synth_truth_write(const struct synth_truth *t, const char *path);
void synth_truth_free(struct synth_truth *t);

/* Cause truth (truth.c): why a launch started late, from the workload's own bookkeeping. */
struct synth_cause {
	uint64_t key, start, end, mag;
	uint32_t kind, cause, alt;
};
struct synth_causes {
	struct synth_cause *v;
	size_t n, cap;
};
/* A thread's off-CPU interval the simulated scheduler collector reports. */
struct synth_off {
	uint64_t tid, start, end;
};
struct synth_offs {
	struct synth_off *v;
	size_t n, cap;
};
int synth_causes_write(const struct synth_causes *c, const char *path);
/* A trace of the same process holding only host_sched records (docs/attribution.md). */
int synth_offs_write(const struct synth_offs *o, const char *path);

/* ------------------------------------------------------------- one run (strategy.c) */

/* What a unit of work knows about itself: the workload's own bookkeeping. */
struct synth_task {
	uint64_t req[SYNTH_MAX_BATCH]; /* requests the work truly serves */
	uint32_t nreq;
	uint64_t epoch;                 /* declared for it (every strategy declares) */
	lin_token tok;                  /* epoch strategy: carried across the handoff */
	lin_scope op;                   /* the declaring thread's op scope */
	lin_scope adopted;              /* the worker's scope (epoch strategy) */
	const struct synth_task *outer; /* the request open on this thread before this one */
	uint32_t stream;
	bool declared;       /* t->epoch was declared (epoch, nvtx, cuda-only) */
	bool stale;          /* the scenario retired the epoch before the handoff */
	uint64_t cost_ticks; /* host-side strategy cost spent on this task */
	uint32_t cost_measures, cost_launches;
};

struct synth {
	struct synth_opts o;
	lin_runtime *rt;
	lin_sim *sim;
	lin_graph_tracker *gt;
	struct synth_pool *pool;
	struct synth_truth truth;
	uint64_t rng;
	atomic_uint_fast64_t strategy_ticks; /* host-side strategy cost, TSC ticks */
	atomic_uint_fast64_t measures;       /* timed intervals (timer cost is subtracted) */
	atomic_uint_fast64_t launches;
	atomic_uint_fast64_t expect_late;    /* GPU records launched under a retired epoch */
	atomic_uint_fast64_t expect_dropped; /* ... whose API records the simulator dropped */
	/* Of the GPU records not dropped: those that serve several requests (a batch), and
	 * those of one request launched on a thread where it was open (synth_op_begin). */
	atomic_uint_fast64_t open_records, batched_records;
	/* Graph-replay records launched where no request is open: PyTorch puts no op around
	 * a replay, so the kineto and nvtx models have nothing there. */
	atomic_uint_fast64_t bare_replays;
	atomic_uint_fast64_t attr_skipped; /* attr-*: targets left unlabelled (scen_attr.c) */
	bool other_profiler;               /* another profiler's CUSTOM0 ids on every op */
	uint32_t stream_base;              /* this lane's streams: base .. base + 15 */
	double ns_per_tick, empty_ticks;   /* TSC calibration; cost of an empty interval */
	double *samples;                   /* per task: strategy ns per launch */
	size_t n_samples, cap_samples;
	pthread_mutex_t truth_mu;
	struct synth_causes causes; /* under truth_mu */
	struct synth_offs offs;     /* under truth_mu */
};

/* Record a cause-truth label / an off-CPU interval of the calling thread. */
void synth_cause(struct synth *sx, uint32_t kind, uint64_t key, uint32_t cause, uint32_t alt,
		 uint64_t start, uint64_t end, uint64_t mag);
void synth_off_cpu(struct synth *sx, uint64_t start, uint64_t end);

uint64_t synth_rand(struct synth *sx);
void *synth_alloc(size_t n);                                     /* calloc or exit */
uint32_t synth_pick(struct synth *sx, uint32_t lo, uint32_t hi); /* [lo, hi) */

/* Declaring thread: begin a request (returns its id). */
uint64_t synth_request(struct synth *sx);
/* Declaring thread: open the region where the application handles @t's requests (the
 * request is "open" on this thread until synth_op_end): what each strategy marks there,
 * e.g. the epoch and its scope, Kineto's record_function, the request's NVTX range. */
void synth_op_begin(struct synth *sx, struct synth_task *t);
/* Epoch strategy: capture the token for the handoff (others: nothing). */
void synth_handoff(struct synth *sx, struct synth_task *t);
void synth_op_end(struct synth *sx, struct synth_task *t);
/* Worker: adopt the handoff (epoch strategy) / close it. */
void synth_adopt(struct synth *sx, struct synth_task *t);
void synth_release(struct synth *sx, struct synth_task *t);
/* Work inside whatever context the calling thread has; each records its truth label. */
void synth_kernel(struct synth *sx, struct synth_task *t, const char *name);
/* The same with @l's injections (lin_sim_launch_kernel_ex); @l may be NULL. */
void synth_kernel_ex(struct synth *sx, struct synth_task *t, const char *name, struct lin_sim_launch *l);
void synth_memcpy(struct synth *sx, struct synth_task *t, uint64_t bytes);
void synth_memset(struct synth *sx, struct synth_task *t, uint64_t bytes);
void synth_retire(struct synth *sx, struct synth_task *t);
/* The workload's bookkeeping of @n GPU records @t caused with the call just made on this
 * thread (@dropped: the simulator dropped its API records): expect_late, expect_dropped,
 * open_records, batched_records. */
void synth_count(struct synth *sx, const struct synth_task *t, uint64_t n, bool dropped);
/* The task is over: its strategy cost per launch becomes one sample (synth_retire does
 * this; call it for a task that declares no epoch). */
void synth_task_done(struct synth *sx, struct synth_task *t);

/* What a strategy puts around one GPU API call of @t on the calling thread (its op, range,
 * pushed id or launch bracket). @launch: a launch (timed and counted) rather than a call
 * captured into a graph. */
struct synth_call {
	lin_launch l;
	lin_scope range;
	uint64_t op;   /* op or range declared for the call, or 0 */
	uint32_t kind; /* external-correlation kind pushed, or 0 */
	bool bracket, ranged, launch;
};
void synth_call_begin(struct synth *sx, struct synth_task *t, const char *name,
		      struct synth_call *c, bool launch);
/* The same for a graph launch (cudaGraphLaunch): no op or range of its own where no
 * request is open (kineto, nvtx); returns whether one is open here. */
bool synth_replay_begin(struct synth *sx, struct synth_task *t, struct synth_call *c);
/* Whether a request is open on the calling thread (synth_op_begin .. synth_op_end). */
bool synth_request_open(void);
void synth_call_end(struct synth *sx, struct synth_task *t, struct synth_call *c);

/* The runtime options the strategy runs under: backend (@sim_ops for epoch) and the
 * external-correlation kind its trace header names. */
void synth_strategy_runtime(const struct synth *sx, struct lin_runtime_opts *ro,
			    const struct lin_backend_ops *sim_ops);

/* Graphs: capture @n kernels under @t on the calling thread and instantiate: returns the
 * exec id. Launch it as @t's work on the calling thread. */
uint32_t synth_graph_build(struct synth *sx, struct synth_task *t, const char *const *names, size_t n);
void synth_graph_launch(struct synth *sx, struct synth_task *t, uint32_t exec);
/* With each node's device duration (@durs may be NULL) / each node kernel's times (@nodes,
 * up to @cap, may be NULL). */
uint32_t synth_graph_build_ex(struct synth *sx, struct synth_task *t, const char *const *names,
			      const uint64_t *durs, size_t n);
void synth_graph_launch_ex(struct synth *sx, struct synth_task *t, uint32_t exec,
			   struct lin_sim_launch *nodes, size_t cap);

/* ------------------------------------------------------------- scenarios (scen_*.c) */

struct synth_scenario {
	const char *name;
	const char *summary;
	void (*run)(struct synth *sx);
};

extern const struct synth_scenario synth_scenarios[];
extern const size_t synth_n_scenarios;
const struct synth_scenario *synth_find_scenario(const char *name);

/* Building blocks the scenarios (and mixed) share, each for @n requests. */
void synth_run_direct(struct synth *sx, uint32_t n);
void synth_run_pool(struct synth *sx, uint32_t n);
void synth_run_chain(struct synth *sx, uint32_t n);
void synth_run_graph(struct synth *sx, uint32_t n, bool on_worker);
void synth_run_batching(struct synth *sx, uint32_t n);
void synth_run_fanout(struct synth *sx, uint32_t n);
void synth_run_stale(struct synth *sx, uint32_t n);

/* The attribution scenarios (scen_attr.c), --requests of them each. */
void synth_run_attr_handoff(struct synth *sx);
void synth_run_attr_blocked(struct synth *sx);
void synth_run_attr_preempted(struct synth *sx);
void synth_run_attr_api(struct synth *sx);
void synth_run_attr_submit(struct synth *sx);
void synth_run_attr_stream(struct synth *sx);
void synth_run_attr_event(struct synth *sx);
void synth_run_attr_graph(struct synth *sx);
void synth_run_attr_device(struct synth *sx);
void synth_run_attr_queueing(struct synth *sx);
void synth_run_attr_amb_submit(struct synth *sx);
void synth_run_attr_amb_deps(struct synth *sx);

/* --cupti layer, every strategy but epoch (owner.c): the workload is the CUPTI client
 * and hands its buffers to lin_cupti_attach_decode. Return 0 or -1. */
int synth_owner_start(lin_runtime *rt, size_t buffer_bytes);
int synth_owner_stop(void);

/* Run one process's workload (run.c): runtime + simulator + pool; write the trace (with
 * its clock record) and the truth. @tag: printed in the SYNTH line. Return 0 or 1. */
int synth_run_process(const struct synth_opts *o, const struct synth_scenario *sc,
		      const char *trace, const char *truth, uint32_t drop_permille);

#endif
