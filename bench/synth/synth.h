/* SPDX-License-Identifier: MIT */
/*
 * synth.h - lineage-synth: synthetic handoff workloads on the CUPTI-semantics simulator,
 * each runnable under three correlation strategies, with ground truth from the workload's
 * own bookkeeping. Internal to bench/synth/.
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

enum synth_strategy { SYNTH_EPOCH = 0, SYNTH_THREAD_LOCAL = 1, SYNTH_CUDA_ONLY = 2 };

#define SYNTH_MAX_BATCH 64
#define SYNTH_MAX_THREADS 64

struct synth_opts {
	const char *scenario;
	enum synth_strategy strategy;
	uint64_t seed;
	uint32_t threads, requests, hops, replays, batch, streams;
	uint32_t lanes;              /* independent copies of the workload run concurrently */
	const char *trace, *truth;
	const char *otlp;            /* also stream OTLP/JSON spans here (runtime option), or NULL */
	enum lin_sim_cupti cupti;    /* attach decoding (default) or the test CUPTI layer */
	enum lin_sim_driver driver;  /* layer: nested driver calls */
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
	uint32_t gpu_kind;           /* LIN_REC_KERNEL / MEMCPY / MEMSET */
	uint64_t key;                /* grid_id or start_dev */
	uint32_t n;
	uint64_t req[SYNTH_MAX_BATCH];
};

struct synth_truth {
	struct synth_label *v;
	size_t n, cap;
};

void synth_truth_add(struct synth_truth *t, uint32_t kind, uint64_t key, const uint64_t *req,
		     uint32_t n);
int synth_truth_write(const struct synth_truth *t, const char *path);
void synth_truth_free(struct synth_truth *t);

/* ------------------------------------------------------------- one run (strategy.c) */

/* What a unit of work knows about itself: the workload's own bookkeeping. */
struct synth_task {
	uint64_t req[SYNTH_MAX_BATCH];   /* requests the work truly serves */
	uint32_t nreq;
	uint64_t epoch;                  /* declared for it (every strategy declares) */
	lin_token tok;                   /* epoch strategy: carried across the handoff */
	lin_scope op;                    /* the declaring thread's op scope */
	lin_scope adopted;               /* the worker's scope (epoch strategy) */
	uint32_t stream;
	bool stale;                      /* the scenario retired the epoch before the handoff */
	uint64_t cost_ticks;             /* host-side strategy cost spent on this task */
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
	atomic_uint_fast64_t strategy_ticks;  /* host-side strategy cost, TSC ticks */
	atomic_uint_fast64_t measures;        /* timed intervals (timer cost is subtracted) */
	atomic_uint_fast64_t launches;
	atomic_uint_fast64_t expect_stale;    /* GPU records the workload knows are stale */
	atomic_uint_fast64_t expect_dropped;  /* ... whose API records the simulator dropped */
	bool kineto;                          /* also push CUSTOM0 (another profiler) on ops */
	uint32_t stream_base;                 /* this lane's streams: base .. base + 15 */
	double ns_per_tick, empty_ticks;      /* TSC calibration; cost of an empty interval */
	double *samples;                      /* per task: strategy ns per launch */
	size_t n_samples, cap_samples;
	pthread_mutex_t truth_mu;
};

uint64_t synth_rand(struct synth *sx);
void *synth_alloc(size_t n);                                    /* calloc or exit */
uint32_t synth_pick(struct synth *sx, uint32_t lo, uint32_t hi); /* [lo, hi) */

/* Declaring thread: begin a request (returns its id). */
uint64_t synth_request(struct synth *sx);
/* Declaring thread: declare @t's epoch for t->req and open the op region (scope, and the
 * thread-local strategy's ext push). */
void synth_op_begin(struct synth *sx, struct synth_task *t);
/* Epoch strategy: capture the token for the handoff (others: nothing). */
void synth_handoff(struct synth *sx, struct synth_task *t);
void synth_op_end(struct synth *sx, struct synth_task *t);
/* Worker: adopt the handoff (epoch strategy) / close it. */
void synth_adopt(struct synth *sx, struct synth_task *t);
void synth_release(struct synth *sx, struct synth_task *t);
/* Work inside whatever context the calling thread has; each records its truth label. */
void synth_kernel(struct synth *sx, struct synth_task *t, const char *name);
void synth_memcpy(struct synth *sx, struct synth_task *t, uint64_t bytes);
void synth_memset(struct synth *sx, struct synth_task *t, uint64_t bytes);
void synth_retire(struct synth *sx, struct synth_task *t);
/* The task is over: its strategy cost per launch becomes one sample (synth_retire does
 * this; call it for a task that declares no epoch). */
void synth_task_done(struct synth *sx, struct synth_task *t);

/* Graphs: capture @n kernels under @t on the calling thread and instantiate: returns the
 * exec id. Launch it as @t's work on the calling thread. */
uint32_t synth_graph_build(struct synth *sx, struct synth_task *t, const char *const *names,
			   size_t n);
void synth_graph_launch(struct synth *sx, struct synth_task *t, uint32_t exec);

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
void synth_run_graph(struct synth *sx, uint32_t n);
void synth_run_batching(struct synth *sx, uint32_t n);
void synth_run_fanout(struct synth *sx, uint32_t n);
void synth_run_stale(struct synth *sx, uint32_t n);

/* --cupti layer, thread-local and cuda-only (owner.c): the workload is the CUPTI client
 * and hands its buffers to lin_cupti_attach_decode. Return 0 or -1. */
int synth_owner_start(lin_runtime *rt, size_t buffer_bytes);
int synth_owner_stop(void);

/* Run one process's workload (run.c): runtime + simulator + pool; write the trace (with
 * its clock record) and the truth. @tag: printed in the SYNTH line. Return 0 or 1. */
int synth_run_process(const struct synth_opts *o, const struct synth_scenario *sc,
		      const char *trace, const char *truth, uint32_t drop_permille);

#endif
