/* SPDX-License-Identifier: MIT */
/*
 * strategy.c - the three correlation strategies, on identical work:
 *
 *   epoch         lineage: the declaring thread captures a token, the worker adopts it
 *                 and lin_launch_begin pushes the epoch through the simulator's backend
 *                 on the thread that launches; graphs go through the graph tracker.
 *   thread-local  what profilers do today: the epoch id is pushed as CUSTOM2 on the
 *                 declaring thread only, around its op; a handoff carries nothing.
 *   cuda-only     no external ids at all: correlationId plus same-thread time
 *                 containment of the launch records (the runtime's backend is NONE).
 *
 * Every strategy declares the same requests and epochs and brackets every GPU API call
 * with lin_launch_begin/end, so the trace's host records are comparable. The host-side
 * cost a strategy adds per launch is timed here (TSC ticks around its calls).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lineage/trace_format.h"
#include "synth.h"

#define KIND_CUSTOM0 3
#define KIND_CUSTOM2 5

static inline uint64_t ticks(void)
{
#if defined(__x86_64__) || defined(__i386__)
	return __builtin_ia32_rdtsc();
#else
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
#endif
}

static void fatal(const char *what, int err)
{
	fprintf(stderr, "lineage-synth: %s failed: %d\n", what, err);
	exit(1);
}

static void cost(struct synth *sx, struct synth_task *t, uint64_t t0, uint64_t t1)
{
	atomic_fetch_add_explicit(&sx->strategy_ticks, t1 - t0, memory_order_relaxed);
	atomic_fetch_add_explicit(&sx->measures, 1, memory_order_relaxed);
	t->cost_ticks += t1 - t0;
	t->cost_measures++;
}

void synth_task_done(struct synth *sx, struct synth_task *t)
{
	if (!t->cost_launches)
		return;
	double ticks = (double)t->cost_ticks - sx->empty_ticks * t->cost_measures;
	double ns = (ticks > 0 ? ticks : 0) * sx->ns_per_tick / t->cost_launches;
	t->cost_ticks = 0;
	t->cost_measures = t->cost_launches = 0;
	pthread_mutex_lock(&sx->truth_mu);
	if (sx->n_samples == sx->cap_samples) {
		size_t cap = sx->cap_samples ? sx->cap_samples * 2 : 256;
		double *v = realloc(sx->samples, cap * sizeof(*v));
		if (!v)
			fatal("realloc (samples)", -12);
		sx->samples = v;
		sx->cap_samples = cap;
	}
	sx->samples[sx->n_samples++] = ns;
	pthread_mutex_unlock(&sx->truth_mu);
}

void *synth_alloc(size_t n)
{
	void *p = calloc(1, n);
	if (!p)
		fatal("calloc", -12);
	return p;
}

uint64_t synth_rand(struct synth *sx)
{
	sx->rng = lin_sim_mix(sx->rng);
	return sx->rng;
}

uint32_t synth_pick(struct synth *sx, uint32_t lo, uint32_t hi)
{
	return hi <= lo ? lo : lo + (uint32_t)(synth_rand(sx) % (hi - lo));
}

uint64_t synth_request(struct synth *sx)
{
	uint64_t id = 0;
	int r = lin_request_begin(sx->rt, NULL, &id);
	if (r)
		fatal("lin_request_begin", r);
	return id;
}

void synth_op_begin(struct synth *sx, struct synth_task *t)
{
	struct lin_epoch_opts eo = { .sz = sizeof(eo), .requests = t->req, .n_requests = t->nreq };
	int r = lin_epoch_declare(sx->rt, &eo, &t->epoch);
	if (r)
		fatal("lin_epoch_declare", r);
	if ((r = lin_scope_enter(sx->rt, t->epoch, &t->op)))
		fatal("lin_scope_enter", r);
	if (sx->kineto)
		(void)lin_sim_ext_push(sx->sim, KIND_CUSTOM0, t->req[0]);
	if (sx->o.strategy == SYNTH_THREAD_LOCAL) {
		uint64_t t0 = ticks();
		r = lin_sim_ext_push(sx->sim, KIND_CUSTOM2, t->epoch);
		cost(sx, t, t0, ticks());
		if (r)
			fatal("ext push", r);
	}
}

void synth_op_end(struct synth *sx, struct synth_task *t)
{
	if (sx->o.strategy == SYNTH_THREAD_LOCAL) {
		uint64_t t0 = ticks();
		int r = lin_sim_ext_pop(sx->sim, KIND_CUSTOM2, NULL);
		cost(sx, t, t0, ticks());
		if (r)
			fatal("ext pop", r);
	}
	if (sx->kineto)
		(void)lin_sim_ext_pop(sx->sim, KIND_CUSTOM0, NULL);
	int r = lin_scope_exit(sx->rt, &t->op);
	if (r)
		fatal("lin_scope_exit (op)", r);
}

void synth_handoff(struct synth *sx, struct synth_task *t)
{
	if (sx->o.strategy != SYNTH_EPOCH)
		return;
	uint64_t t0 = ticks();
	int r = lin_token_capture(sx->rt, &t->tok);
	cost(sx, t, t0, ticks());
	if (r)
		fatal("lin_token_capture", r);
}

void synth_adopt(struct synth *sx, struct synth_task *t)
{
	memset(&t->adopted, 0, sizeof(t->adopted));
	if (sx->o.strategy != SYNTH_EPOCH)
		return;
	uint64_t t0 = ticks();
	int r = lin_token_adopt(sx->rt, &t->tok, &t->adopted);
	cost(sx, t, t0, ticks());
	if (r && !t->stale)
		fatal("lin_token_adopt", r);
	if (r)
		memset(&t->adopted, 0, sizeof(t->adopted));
}

void synth_release(struct synth *sx, struct synth_task *t)
{
	if (sx->o.strategy != SYNTH_EPOCH || !t->adopted.cookie)
		return;
	uint64_t t0 = ticks();
	int r = lin_scope_exit(sx->rt, &t->adopted);
	cost(sx, t, t0, ticks());
	if (r)
		fatal("lin_scope_exit", r);
}

/* The launch bracket every strategy puts around a GPU API call. Errors from begin are
 * expected (no context on a worker under thread-local/cuda-only, a stale token) and are
 * recorded by the runtime itself. */
static void bracket_begin(struct synth *sx, struct synth_task *t, const char *name,
			  lin_launch *l)
{
	uint64_t t0 = ticks();
	(void)lin_launch_begin(sx->rt, name, l);
	cost(sx, t, t0, ticks());
}

static void bracket_end(struct synth *sx, struct synth_task *t, lin_launch *l)
{
	uint64_t t0 = ticks();
	int r = lin_launch_end(sx->rt, l);
	cost(sx, t, t0, ticks());
	if (r)
		fatal("lin_launch_end", r);
	atomic_fetch_add_explicit(&sx->launches, 1, memory_order_relaxed);
	t->cost_launches++;
}

static void label(struct synth *sx, struct synth_task *t, uint32_t kind, uint64_t key,
		  bool dropped)
{
	pthread_mutex_lock(&sx->truth_mu);
	synth_truth_add(&sx->truth, kind, key, t->req, t->nreq);
	pthread_mutex_unlock(&sx->truth_mu);
	if (dropped)
		atomic_fetch_add(&sx->expect_dropped, 1);
	else if (t->stale && sx->o.strategy == SYNTH_EPOCH)
		atomic_fetch_add(&sx->expect_stale, 1);
}

void synth_kernel(struct synth *sx, struct synth_task *t, const char *name)
{
	lin_launch l;
	bracket_begin(sx, t, name, &l);
	int64_t grid = lin_sim_launch_kernel(sx->sim, t->stream, name);
	bool dropped = lin_sim_last_call_dropped(sx->sim);
	bracket_end(sx, t, &l);
	if (grid > 0)
		label(sx, t, LIN_REC_KERNEL, (uint64_t)grid, dropped);
}

void synth_memcpy(struct synth *sx, struct synth_task *t, uint64_t bytes)
{
	lin_launch l;
	bracket_begin(sx, t, "cudaMemcpyAsync", &l);
	uint64_t start = lin_sim_memcpy(sx->sim, t->stream, bytes);
	bool dropped = lin_sim_last_call_dropped(sx->sim);
	bracket_end(sx, t, &l);
	label(sx, t, LIN_REC_MEMCPY, start, dropped);
}

void synth_memset(struct synth *sx, struct synth_task *t, uint64_t bytes)
{
	lin_launch l;
	bracket_begin(sx, t, "cudaMemsetAsync", &l);
	uint64_t start = lin_sim_memset(sx->sim, t->stream, bytes, 0);
	bool dropped = lin_sim_last_call_dropped(sx->sim);
	bracket_end(sx, t, &l);
	label(sx, t, LIN_REC_MEMSET, start, dropped);
}

void synth_retire(struct synth *sx, struct synth_task *t)
{
	int r = lin_epoch_retire(sx->rt, t->epoch);
	if (r && !t->stale)
		fatal("lin_epoch_retire", r);
	synth_task_done(sx, t);
}
