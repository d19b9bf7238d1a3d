/* SPDX-License-Identifier: MIT */
/*
 * strategy.c - the correlation strategies, on identical work. Each expresses, in
 * lineage's own trace vocabulary, what one tool knows, so that one validator scores them
 * all (docs/comparison.md cites the behaviour each one models):
 *
 *   epoch      lineage: the declaring thread captures a token, the worker adopts it and
 *              lin_launch_begin pushes the epoch (CUSTOM2) through the simulator's
 *              backend on the thread that launches; graphs go through the graph tracker.
 *   kineto     PyTorch profiler + Kineto: every op pushes its id as CUSTOM0 on the thread
 *              that runs it (each GPU call runs inside an op); the op is declared with the
 *              requests of the request annotation open on that thread (record_function,
 *              also pushed as CUSTOM1), and with none where no annotation is open: the op
 *              tree does not cross threads. The trace header names CUSTOM0.
 *   nvtx       Nsight Systems: the NVTX ranges of the launching thread. Where the request
 *              is open, its range (a scope on an epoch naming it); elsewhere each call runs
 *              in an op's range that names no request. Launch brackets mark the calls, the
 *              validator joins them by same-thread time containment; nothing is pushed.
 *   cuda-only  correlationId + same-thread time containment in the request's host range
 *              where it is open; nothing at all on other threads.
 *   manual     a careful developer without lineage: the request id carried in the task
 *              and pushed as CUSTOM2 before each GPU call, popped after (one id: for a
 *              batch, its first request's).
 *   manual-batch  the same developer who also logs batches: a batched launch pushes a
 *              fresh batch id, written with the batch's requests (in lineage's vocabulary
 *              an epoch declared with those requests).
 * Graph launches get no op or range of their own in kineto and nvtx: PyTorch's
 * CUDAGraph::replay makes no RecordFunction, and emit_nvtx ranges come from RecordFunction
 * (docs/comparison.md).
 *
 * The host-side cost of each strategy's calls on the launch path is timed here (TSC
 * ticks); declaring requests, epochs, ops and ranges is not timed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lineage/trace_format.h"
#include "synth.h"

#define KIND_CUSTOM0 3
#define KIND_CUSTOM1 4
#define KIND_CUSTOM2 5

const char *const synth_strategy_names[SYNTH_N_STRATEGIES] = {
	[SYNTH_EPOCH] = "epoch",   [SYNTH_KINETO] = "kineto",
	[SYNTH_NVTX] = "nvtx",     [SYNTH_CUDA_ONLY] = "cuda-only",
	[SYNTH_MANUAL] = "manual", [SYNTH_MANUAL_BATCH] = "manual-batch",
};

/* The request open on this thread (synth_op_begin .. synth_op_end): the annotation,
 * range or host span the application has open where it handles the request. */
static _Thread_local const struct synth_task *open_req;

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

void synth_strategy_runtime(const struct synth *sx, struct lin_runtime_opts *ro,
			    const struct lin_backend_ops *sim_ops)
{
	bool epoch = sx->o.strategy == SYNTH_EPOCH;
	ro->backend = epoch ? LIN_BACKEND_CUSTOM : LIN_BACKEND_NONE;
	ro->backend_ops = epoch ? sim_ops : NULL;
	ro->ext_kind = sx->o.strategy == SYNTH_KINETO ? KIND_CUSTOM0 : KIND_CUSTOM2;
}

static void push(struct synth *sx, uint32_t kind, uint64_t id)
{
	int r = lin_sim_ext_push(sx->sim, kind, id);
	if (r)
		fatal("ext push", r);
}

static void pop(struct synth *sx, uint32_t kind)
{
	int r = lin_sim_ext_pop(sx->sim, kind, NULL);
	if (r)
		fatal("ext pop", r);
}

/* An epoch for @reqs; @n 0: one that serves no request (an op, a range). */
static uint64_t declare(struct synth *sx, const uint64_t *reqs, uint32_t n)
{
	struct lin_epoch_opts eo = { .sz = sizeof(eo),
				     .requests = n ? reqs : NULL,
				     .n_requests = n,
				     .flags = n ? 0 : LIN_EPOCH_NO_REQUESTS };
	uint64_t id = 0;
	int r = lin_epoch_declare(sx->rt, &eo, &id);
	if (r)
		fatal("lin_epoch_declare", r);
	return id;
}

void synth_op_begin(struct synth *sx, struct synth_task *t)
{
	enum synth_strategy st = sx->o.strategy;
	if (st == SYNTH_EPOCH || st == SYNTH_NVTX || st == SYNTH_CUDA_ONLY) {
		t->epoch = declare(sx, t->req, t->nreq);
		t->declared = true;
		int r = lin_scope_enter(sx->rt, t->epoch, &t->op);
		if (r)
			fatal("lin_scope_enter", r);
	}
	if (sx->other_profiler && st != SYNTH_KINETO)
		push(sx, KIND_CUSTOM0, t->req[0]);
	if (st == SYNTH_KINETO) { /* record_function: a user annotation, CUSTOM1 */
		uint64_t t0 = ticks();
		int r = lin_sim_ext_push(sx->sim, KIND_CUSTOM1, t->req[0]);
		cost(sx, t, t0, ticks());
		if (r)
			fatal("ext push", r);
	}
	t->outer = open_req;
	open_req = t;
}

void synth_op_end(struct synth *sx, struct synth_task *t)
{
	enum synth_strategy st = sx->o.strategy;
	open_req = t->outer;
	if (st == SYNTH_KINETO) {
		uint64_t t0 = ticks();
		int r = lin_sim_ext_pop(sx->sim, KIND_CUSTOM1, NULL);
		cost(sx, t, t0, ticks());
		if (r)
			fatal("ext pop", r);
	}
	if (sx->other_profiler && st != SYNTH_KINETO)
		pop(sx, KIND_CUSTOM0);
	if (t->declared) {
		int r = lin_scope_exit(sx->rt, &t->op);
		if (r)
			fatal("lin_scope_exit (op)", r);
	}
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

/* Declare what the call runs in before the timed part: Kineto's op (with the open
 * request's requests, or none), or the range of an op that names no request (nvtx, where
 * no request is open on this thread). */
static void call_declare(struct synth *sx, const struct synth_task *t, struct synth_call *c, bool replay)
{
	enum synth_strategy st = sx->o.strategy;
	if (st == SYNTH_KINETO && !(replay && !open_req))
		c->op = open_req ? declare(sx, open_req->req, open_req->nreq) : declare(sx, NULL, 0);
	else if (st == SYNTH_NVTX && !open_req && !replay)
		c->op = declare(sx, NULL, 0);
	else if (st == SYNTH_MANUAL_BATCH && t->nreq > 1)
		c->op = declare(sx, t->req, t->nreq); /* the batch id and its requests */
}

static void call_begin(struct synth *sx, struct synth_task *t, const char *name,
		       struct synth_call *c, bool launch, bool replay)
{
	memset(c, 0, sizeof(*c));
	c->launch = launch;
	call_declare(sx, t, c, replay);
	bool bare = replay && !open_req; /* a graph launch with no op or range around it */
	uint64_t t0 = ticks();
	int r = 0;
	switch (sx->o.strategy) {
	case SYNTH_EPOCH: c->bracket = true; break;
	case SYNTH_KINETO:
		if (bare)
			break;
		c->kind = KIND_CUSTOM0;
		r = lin_sim_ext_push(sx->sim, c->kind, c->op);
		break;
	case SYNTH_NVTX:
		if (c->op && !(r = lin_scope_enter(sx->rt, c->op, &c->range)))
			c->ranged = true;
		c->bracket = !bare;
		break;
	case SYNTH_CUDA_ONLY: c->bracket = open_req != NULL; break;
	case SYNTH_MANUAL:
	case SYNTH_MANUAL_BATCH:
		c->kind = KIND_CUSTOM2;
		r = lin_sim_ext_push(sx->sim, c->kind, c->op ? c->op : t->req[0]);
		break;
	default: break;
	}
	/* Errors from begin are expected under epoch (a stale token: no context) and are
	 * recorded by the runtime itself. */
	if (!r && c->bracket)
		(void)lin_launch_begin(sx->rt, name, &c->l);
	if (launch)
		cost(sx, t, t0, ticks());
	if (r)
		fatal("call begin", r);
}

void synth_call_begin(struct synth *sx, struct synth_task *t, const char *name,
		      struct synth_call *c, bool launch)
{
	call_begin(sx, t, name, c, launch, false);
}

bool synth_request_open(void) { return open_req != NULL; }

bool synth_replay_begin(struct synth *sx, struct synth_task *t, struct synth_call *c)
{
	call_begin(sx, t, "cudaGraphLaunch", c, true, true);
	return open_req != NULL;
}

void synth_call_end(struct synth *sx, struct synth_task *t, struct synth_call *c)
{
	uint64_t t0 = ticks();
	int r = c->bracket ? lin_launch_end(sx->rt, &c->l) : 0;
	if (!r && c->ranged)
		r = lin_scope_exit(sx->rt, &c->range);
	if (!r && c->kind)
		r = lin_sim_ext_pop(sx->sim, c->kind, NULL);
	if (c->launch) {
		cost(sx, t, t0, ticks());
		atomic_fetch_add_explicit(&sx->launches, 1, memory_order_relaxed);
		t->cost_launches++;
	}
	if (r)
		fatal("call end", r);
	if (c->op && (r = lin_epoch_retire(sx->rt, c->op)))
		fatal("lin_epoch_retire (op)", r);
}

void synth_count(struct synth *sx, const struct synth_task *t, uint64_t n, bool dropped)
{
	if (dropped) {
		atomic_fetch_add(&sx->expect_dropped, n);
		return;
	}
	if (t->stale && sx->o.strategy == SYNTH_EPOCH)
		atomic_fetch_add(&sx->expect_late, n);
	if (t->nreq > 1) /* a batch: its fan-in region (epoch only) is no request's */
		atomic_fetch_add(&sx->batched_records, n);
	else if (open_req == t)
		atomic_fetch_add(&sx->open_records, n);
}

static void label(struct synth *sx, struct synth_task *t, uint32_t kind, uint64_t key, bool dropped)
{
	pthread_mutex_lock(&sx->truth_mu);
	synth_truth_add(&sx->truth, kind, key, t->req, t->nreq);
	pthread_mutex_unlock(&sx->truth_mu);
	synth_count(sx, t, 1, dropped);
}

void synth_kernel(struct synth *sx, struct synth_task *t, const char *name)
{
	synth_kernel_ex(sx, t, name, NULL);
}

void synth_kernel_ex(struct synth *sx, struct synth_task *t, const char *name, struct lin_sim_launch *l)
{
	struct synth_call c;
	synth_call_begin(sx, t, name, &c, true);
	int64_t grid = lin_sim_launch_kernel_ex(sx->sim, t->stream, name, l);
	bool dropped = lin_sim_last_call_dropped(sx->sim);
	synth_call_end(sx, t, &c);
	if (grid > 0)
		label(sx, t, LIN_REC_KERNEL, (uint64_t)grid, dropped);
}

void synth_memcpy(struct synth *sx, struct synth_task *t, uint64_t bytes)
{
	struct synth_call c;
	synth_call_begin(sx, t, "cudaMemcpyAsync", &c, true);
	uint64_t start = lin_sim_memcpy(sx->sim, t->stream, bytes);
	bool dropped = lin_sim_last_call_dropped(sx->sim);
	synth_call_end(sx, t, &c);
	label(sx, t, LIN_REC_MEMCPY, start, dropped);
}

void synth_memset(struct synth *sx, struct synth_task *t, uint64_t bytes)
{
	struct synth_call c;
	synth_call_begin(sx, t, "cudaMemsetAsync", &c, true);
	uint64_t start = lin_sim_memset(sx->sim, t->stream, bytes, 0);
	bool dropped = lin_sim_last_call_dropped(sx->sim);
	synth_call_end(sx, t, &c);
	label(sx, t, LIN_REC_MEMSET, start, dropped);
}

void synth_retire(struct synth *sx, struct synth_task *t)
{
	int r = t->declared ? lin_epoch_retire(sx->rt, t->epoch) : 0;
	if (r && !t->stale)
		fatal("lin_epoch_retire", r);
	synth_task_done(sx, t);
}
