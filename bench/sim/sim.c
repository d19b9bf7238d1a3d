/* SPDX-License-Identifier: MIT */
/*
 * sim.c - the simulator's CUPTI side: per-thread per-kind external-correlation stacks,
 * correlation ids, activity buffers, and their out-of-order delivery to
 * lin_cupti_attach_decode. docs/simulator.md has the semantics and their sources.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <cupti.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

#include "lineage/cupti.h"
#include "lineage/trace_format.h"
#include "sim_internal.h"

/* The simulator is a bench tool: running out of memory ends the process with a message. */
static void oom(const char *what)
{
	fprintf(stderr, "lin_sim: out of memory (%s)\n", what);
	exit(1);
}

static _Thread_local struct sim_thread *tls_thr;
static _Thread_local const lin_sim *tls_owner;

uint64_t lin_sim_mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

uint64_t lin_sim_mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t realtime_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The layer's device clock: the simulator's (docs/simulator.md, "Clocks"). */
static uint64_t sim_now(const lin_sim *s);
static uint64_t layer_clock(void *user)
{
	const lin_sim *s = user;
	return sim_now(s) + s->clock_off;
}

static int layer_setup(lin_sim *s)
{
	struct lin_cl_config c = {
		.sz = sizeof(c),
		.buffer_use = s->o.buffer_bytes,
		.seed = s->o.seed,
		.driver = s->o.driver == LIN_SIM_DRIVER_SHARED ? LIN_CL_DRIVER_SHARED
							       : LIN_CL_DRIVER_DISTINCT,
		.clock = layer_clock,
		.clock_user = s,
	};
	int err = lin_cl_configure(&c);
	/* The live binding calls the layer through its table (cupti_layer.h); a runtime made
	 * before this (attach mode) never opens the binding, and a second simulator in the
	 * process hands over the same table. */
	return err ? err : lin_cupti_use_api(lin_cl_cupti_api());
}

int lin_sim_create(lin_runtime *rt, const struct lin_sim_opts *opts, lin_sim **out)
{
	if (!out || (opts && opts->sz < sizeof(*opts)) || (opts && opts->drop_permille > 1000))
		return -EINVAL;
	if (opts && (opts->cupti > LIN_SIM_LAYER || opts->driver > LIN_SIM_DRIVER_SHARED))
		return -EINVAL;
	lin_sim *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	if (opts)
		s->o = *opts;
	if (!s->o.buffer_bytes)
		s->o.buffer_bytes = 4096;
	if (!s->o.ext_kind)
		s->o.ext_kind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2;
	s->o.buffer_bytes = (s->o.buffer_bytes + 7u) & ~7u;
	s->rt = rt;
	/* Device timestamps look like CUPTI's (CLOCK_REALTIME ns) but are the host clock
	 * shifted by a constant, so the trace's clock record is exact. */
	s->clock_off = s->o.host_clock ? 0 : realtime_ns() - lin_sim_mono_ns();
	atomic_init(&s->next_corr, 1);
	atomic_init(&s->next_grid, 1);
	atomic_init(&s->next_node, 1);
	pthread_mutex_init(&s->mu, NULL);
	if (s->o.cupti == LIN_SIM_LAYER && layer_setup(s)) {
		lin_sim_free(s);
		return -EINVAL;
	}
	*out = s;
	return 0;
}

void lin_sim_set_runtime(lin_sim *s, lin_runtime *rt) { s->rt = rt; }

uint64_t lin_sim_clock_offset(const lin_sim *s) { return s->clock_off; }

void lin_sim_get_stats(const lin_sim *s, struct lin_sim_stats *st)
{
	pthread_mutex_lock((pthread_mutex_t *)&s->mu);
	*st = s->st;
	pthread_mutex_unlock((pthread_mutex_t *)&s->mu);
}

static void free_bufs(struct sim_bufvec *bv)
{
	for (size_t i = 0; i < bv->n; i++)
		free(bv->v[i].data);
	free(bv->v);
	memset(bv, 0, sizeof(*bv));
}

void lin_sim_free(lin_sim *s)
{
	if (!s)
		return;
	if (tls_owner == s) {
		tls_owner = NULL;
		tls_thr = NULL;
	}
	struct sim_thread *t = s->threads;
	while (t) {
		struct sim_thread *n = t->next;
		free(t->cur.data);
		free(t);
		t = n;
	}
	free(s->dev.data);
	free_bufs(&s->done);
	pthread_mutex_destroy(&s->mu);
	free(s);
}

struct sim_thread *lin_sim_thread(lin_sim *s)
{
	if (tls_owner == s && tls_thr)
		return tls_thr;
	struct sim_thread *t = calloc(1, sizeof(*t));
	if (!t)
		oom("thread state");
	t->tid = (uint32_t)syscall(SYS_gettid);
	pthread_mutex_lock(&s->mu);
	t->next = s->threads;
	s->threads = t;
	pthread_mutex_unlock(&s->mu);
	tls_owner = s;
	tls_thr = t;
	return t;
}

/* Move @b into the completed list (caller holds s->mu). */
static void complete_locked(lin_sim *s, struct sim_buf *b)
{
	if (!b->data || !b->used)
		return;
	if (s->done.n == s->done.cap) {
		size_t cap = s->done.cap ? s->done.cap * 2 : 64;
		struct sim_buf *v = realloc(s->done.v, cap * sizeof(*v));
		if (!v)
			oom("buffer list");
		s->done.v = v;
		s->done.cap = cap;
	}
	s->done.v[s->done.n++] = *b;
	s->st.buffers++;
	b->data = NULL;
	b->used = 0;
}

void lin_sim_put(lin_sim *s, struct sim_buf *b, const void *rec, size_t len, bool locked)
{
	if (b->data && b->used + len > s->o.buffer_bytes) {
		if (!locked)
			pthread_mutex_lock(&s->mu);
		complete_locked(s, b);
		if (!locked)
			pthread_mutex_unlock(&s->mu);
	}
	if (!b->data) {
		/* A fresh 8-aligned buffer per request, as CUPTI needs (docs/simulator.md,
		 * row 15). */
		b->data = aligned_alloc(8, s->o.buffer_bytes);
		if (!b->data)
			oom("activity buffer");
		b->used = 0;
	}
	memcpy(b->data + b->used, rec, len);
	b->used += len;
}

/* ------------------------------------------------------------- external correlation */

static bool kind_ok(uint32_t kind)
{
	return kind >= CUPTI_EXTERNAL_CORRELATION_KIND_UNKNOWN &&
	       kind <= CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2;
}

static int cupti_errno(CUptiResult r)
{
	return r == CUPTI_SUCCESS ? 0 : r == CUPTI_ERROR_QUEUE_EMPTY ? -ENOENT : -EINVAL;
}

int lin_sim_ext_push(lin_sim *s, uint32_t kind, uint64_t id)
{
	if (!kind_ok(kind))
		return -EINVAL;
	if (s->o.cupti == LIN_SIM_LAYER)
		return cupti_errno(cuptiActivityPushExternalCorrelationId(
			(CUpti_ExternalCorrelationKind)kind, id));
	struct sim_thread *t = lin_sim_thread(s);
	if (t->depth[kind] >= SIM_STACK)
		return -ENOSPC;
	t->stack[kind][t->depth[kind]++] = id;
	return 0;
}

int lin_sim_ext_pop(lin_sim *s, uint32_t kind, uint64_t *id)
{
	if (!kind_ok(kind))
		return -EINVAL;
	if (s->o.cupti == LIN_SIM_LAYER) {
		uint64_t v = 0;
		int r = cupti_errno(cuptiActivityPopExternalCorrelationId(
			(CUpti_ExternalCorrelationKind)kind, &v));
		if (!r && id)
			*id = v;
		return r;
	}
	struct sim_thread *t = lin_sim_thread(s);
	if (!t->depth[kind])
		return -ENOENT;
	uint64_t v = t->stack[kind][--t->depth[kind]];
	if (id)
		*id = v;
	return 0;
}

static int be_push(void *ctx, uint32_t kind, uint64_t id)
{
	return lin_sim_ext_push(ctx, kind, id);
}

static int be_pop(void *ctx, uint32_t kind, uint64_t *id) { return lin_sim_ext_pop(ctx, kind, id); }

void lin_sim_backend_ops(lin_sim *s, struct lin_backend_ops *ops)
{
	memset(ops, 0, sizeof(*ops));
	ops->sz = sizeof(*ops);
	ops->name = "sim";
	ops->push = be_push;
	ops->pop = be_pop;
	ops->ctx = s;
	ops->flags = s->o.host_clock ? LIN_BACKEND_F_HOST_CLOCK : 0;
}

bool lin_sim_last_call_dropped(lin_sim *s) { return lin_sim_thread(s)->last_dropped; }

void lin_sim_observer(const struct lin_launch_info *info, void *user)
{
	lin_sim_thread(user)->launch_host_ns = info->host_ns;
}

/* ------------------------------------------------------------- one API call */

static bool dropped(const lin_sim *s, uint32_t corr)
{
	return s->o.drop_permille &&
	       lin_sim_mix(s->o.seed ^ ((uint64_t)corr << 20)) % 1000 < s->o.drop_permille;
}

/* The host clock the runtime writes (the device clock is it plus clock_off). */
static uint64_t sim_now(const lin_sim *s)
{
	/* The process's trace clock, before the runtime is set as after (every runtime of the
	 * process shares it): one device clock for the whole run. */
	return lin_runtime_now_ns(s->rt);
}

/* Layer mode: the layer records the call as CUPTI would (its correlation ids, its ext
 * and API records, its loss count); the drop decision is the one attach mode makes for
 * the same call, so both modes lose the same calls. The call ends now, as in attach mode. */
static uint32_t layer_api_call(lin_sim *s, struct sim_thread *t, uint32_t cbid,
			       uint32_t driver_cbid, uint64_t start, bool drop)
{
	struct lin_cl_call c = {
		.cbid = cbid,
		.driver_cbid = s->o.driver == LIN_SIM_DRIVER_NONE ? 0 : driver_cbid,
		.start = start,
		.end = sim_now(s) + s->clock_off,
		.drop = drop,
	};
	if (c.end <= c.start)
		c.end = c.start + 1;
	t->api_end = c.end;
	t->corr = lin_cl_api(&c);
	pthread_mutex_lock(&s->mu);
	s->st.api_calls++;
	pthread_mutex_unlock(&s->mu);
	return t->corr.runtime;
}

/* The runtime's own work after CUPTI stamped the call's end, before it returns. */
static void api_exit(const lin_sim *s, const struct sim_thread *t)
{
	if (!s->o.api_exit_ns)
		return;
	uint64_t until = t->api_end - s->clock_off + s->o.api_exit_ns;
	while (sim_now(s) < until)
		;
}

uint32_t lin_sim_api_call(lin_sim *s, uint32_t cbid, uint32_t driver_cbid, uint64_t *start)
{
	struct sim_thread *t = lin_sim_thread(s);
	uint32_t corr = (uint32_t)atomic_fetch_add(&s->next_corr, 1);
	uint64_t host = t->launch_host_ns ? t->launch_host_ns + 1 : sim_now(s);
	if (s->o.api_enter_ns) {
		/* The runtime's own work before CUPTI stamps the call's start. */
		uint64_t until = (t->launch_host_ns ? t->launch_host_ns : sim_now(s)) + s->o.api_enter_ns;
		while ((host = sim_now(s)) < until)
			;
	}
	t->launch_host_ns = 0;
	*start = host + s->clock_off;
	if (t->api_work_ns) {
		/* Deliberate CPU work inside the call (lin_sim_launch.api_work_ns): it spins, as an
		 * expensive API path would, so the call's record spans it. */
		uint64_t until = host + t->api_work_ns;
		t->api_work_ns = 0;
		while (sim_now(s) < until)
			;
	}
	uint64_t n_ext = 0;
	bool drop = dropped(s, corr);
	t->last_dropped = drop;
	if (s->o.cupti == LIN_SIM_LAYER) {
		uint32_t c = layer_api_call(s, t, cbid, driver_cbid, *start, drop);
		api_exit(s, t);
		return c;
	}
	for (uint32_t k = 0; k < SIM_KINDS; k++) {
		if (!t->depth[k])
			continue;
		n_ext++;
		if (drop)
			continue;
		CUpti_ActivityExternalCorrelation e;
		memset(&e, 0, sizeof(e));
		e.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
		e.externalKind = (CUpti_ExternalCorrelationKind)k;
		e.externalId = t->stack[k][t->depth[k] - 1];
		e.correlationId = corr;
		lin_sim_put(s, &t->cur, &e, sizeof(e), false);
	}
	if (drop) {
		/* No record, but the call still took its time. */
		t->api_end = sim_now(s) + s->clock_off;
		if (t->api_end <= *start)
			t->api_end = *start + 1;
	} else {
		CUpti_ActivityAPI a;
		memset(&a, 0, sizeof(a));
		a.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
		a.cbid = cbid;
		a.start = *start;
		/* The call returns now: its end is read on the runtime's clock, so a launch
		 * bracket around it (lin_launch_end comes after) holds the whole call. */
		a.end = sim_now(s) + s->clock_off;
		if (a.end <= a.start)
			a.end = a.start + 1;
		t->api_end = a.end;
		a.processId = (uint32_t)getpid();
		a.threadId = t->tid;
		a.correlationId = corr;
		lin_sim_put(s, &t->cur, &a, sizeof(a), false);
	}
	pthread_mutex_lock(&s->mu);
	s->st.api_calls++;
	s->st.ext_records += drop ? 0 : n_ext;
	s->st.dropped_records += drop ? n_ext + 1 : 0;
	pthread_mutex_unlock(&s->mu);
	api_exit(s, t);
	return corr;
}

uint64_t lin_sim_api_end(lin_sim *s) { return lin_sim_thread(s)->api_end; }

/* ------------------------------------------------------------- delivery */

static void shuffle(struct sim_bufvec *bv, uint64_t seed)
{
	uint64_t x = seed;
	for (size_t i = bv->n; i > 1; i--) {
		x = lin_sim_mix(x);
		size_t j = (size_t)(x % i);
		struct sim_buf tmp = bv->v[i - 1];
		bv->v[i - 1] = bv->v[j];
		bv->v[j] = tmp;
	}
}

void lin_sim_put_gpu(lin_sim *s, const void *rec, size_t len)
{
	if (s->o.cupti == LIN_SIM_LAYER)
		lin_cl_gpu(rec, len, lin_sim_thread(s)->corr);
	else
		lin_sim_put(s, &s->dev, rec, len, true);
}

int lin_sim_flush(lin_sim *s)
{
	if (s->o.cupti == LIN_SIM_LAYER) {
		/* CUPTI's losses are counted by the layer and read by whoever owns it. */
		CUptiResult a = cuptiActivityFlushAll(0);
		CUptiResult b = cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
		return a == CUPTI_SUCCESS && b == CUPTI_SUCCESS ? 0 : -EIO;
	}
	pthread_mutex_lock(&s->mu);
	for (struct sim_thread *t = s->threads; t; t = t->next)
		complete_locked(s, &t->cur);
	complete_locked(s, &s->dev);
	struct sim_bufvec bv = s->done;
	memset(&s->done, 0, sizeof(s->done));
	uint64_t drops = s->st.dropped_records - s->drops_reported;
	s->drops_reported = s->st.dropped_records;
	pthread_mutex_unlock(&s->mu);

	shuffle(&bv, s->o.seed);
	int ret = 0;
	for (size_t i = 0; i < bv.n; i++) {
		int r = lin_cupti_attach_decode(s->rt, bv.v[i].data, bv.v[i].used, NULL);
		if (r && !ret)
			ret = r;
	}
	free_bufs(&bv);
	if (drops) {
		int r = lin_cupti_attach_dropped(s->rt, LIN_DROP_CUPTI_RECORDS, drops);
		if (r && !ret)
			ret = r;
	}
	return ret;
}
