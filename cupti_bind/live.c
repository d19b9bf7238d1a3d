/* SPDX-License-Identifier: MIT */
/*
 * live.c - the live CUPTI binding: one-time probe, external-correlation push/pop, activity
 * collection through a buffer pool, periodic and final flush, loss accounting.
 *
 * CUPTI's buffer callbacks carry no user pointer and only one party per process may
 * register them, so one runtime at a time owns the activity collection (g_owner).
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cupti.h>

#include "decode.h"
#include "pool.h"
#include "rt_internal.h"

#define LIN_CUPTI_BUF_SIZE (2u << 20)  /* 2 MiB: about 9,000 kernel records */
#define LIN_CUPTI_MAX_BUFS 64u         /* 128 MiB at most in flight */
#define LIN_CUPTI_FLUSH_MS 500u

/* The probe: -1 not run, 0 failed, 1 works. Guarded by g_probe_mu. */
static pthread_mutex_t g_probe_mu = PTHREAD_MUTEX_INITIALIZER;
static int g_probe = -1;
static char g_probe_status[192];

/* The runtime that owns activity collection; read by CUPTI's callbacks under g_cb_lock. */
static pthread_rwlock_t g_cb_lock = PTHREAD_RWLOCK_INITIALIZER;
static pthread_mutex_t g_owner_mu = PTHREAD_MUTEX_INITIALIZER;
static lin_runtime *g_owner;
static struct lin_cupti_pool g_pool;
static int g_pool_alive;
static struct lin_cupti_decode_stats g_stats; /* under the runtime's output lock */
static CUpti_ActivityKind g_enabled[8];
static size_t g_n_enabled;
static char g_open_status[192];
static atomic_int g_clock_pending; /* a clock record is due with the next decoded buffer */

static const char *result_name(CUptiResult r)
{
	const char *s = NULL;

	if (cuptiGetResultString(r, &s) != CUPTI_SUCCESS || !s)
		return "CUPTI_ERROR_?";
	return s;
}

/*
 * probe - push and pop one id of @kind on this thread, once per process. Without a driver
 * each CUPTI call costs tens of microseconds and fails; after a failed probe nothing in
 * this file calls push/pop again.
 */
static int probe(uint32_t kind, const char **status)
{
	int ok;

	pthread_mutex_lock(&g_probe_mu);
	if (g_probe < 0) {
		uint64_t last = 0;
		CUptiResult r = cuptiActivityPushExternalCorrelationId(
			(CUpti_ExternalCorrelationKind)kind, 0);

		if (r == CUPTI_SUCCESS) {
			r = cuptiActivityPopExternalCorrelationId((CUpti_ExternalCorrelationKind)kind,
								  &last);
			snprintf(g_probe_status, sizeof(g_probe_status),
				 r == CUPTI_SUCCESS ? "ok"
						    : "unavailable: cuptiActivityPopExternalCorrelationId: %s",
				 result_name(r));
		} else {
			snprintf(g_probe_status, sizeof(g_probe_status),
				 "unavailable: cuptiActivityPushExternalCorrelationId: %s",
				 result_name(r));
		}
		g_probe = r == CUPTI_SUCCESS;
	}
	ok = g_probe;
	if (status)
		*status = g_probe_status;
	pthread_mutex_unlock(&g_probe_mu);
	return ok ? 0 : -LIN_ENOCUPTI;
}

static int cupti_push(void *ctx, uint32_t ext_kind, uint64_t id)
{
	(void)ctx;
	return cuptiActivityPushExternalCorrelationId((CUpti_ExternalCorrelationKind)ext_kind,
						      id) == CUPTI_SUCCESS
		       ? 0
		       : -LIN_EBACKEND;
}

static int cupti_pop(void *ctx, uint32_t ext_kind, uint64_t *id)
{
	uint64_t last = 0;

	(void)ctx;
	if (cuptiActivityPopExternalCorrelationId((CUpti_ExternalCorrelationKind)ext_kind,
						  &last) != CUPTI_SUCCESS)
		return -LIN_EBACKEND;
	if (id)
		*id = last;
	return 0;
}

static int valid_kind(uint32_t kind)
{
	return kind > CUPTI_EXTERNAL_CORRELATION_KIND_INVALID &&
	       kind < CUPTI_EXTERNAL_CORRELATION_KIND_SIZE;
}

LIN_API int lin_cupti_push_ops(uint32_t ext_kind, struct lin_backend_ops *ops,
			       const char **status)
{
	int err;

	if (ext_kind == 0)
		ext_kind = LIN_DEFAULT_EXT_KIND;
	if (!ops || !valid_kind(ext_kind))
		return -EINVAL;
	err = probe(ext_kind, status);
	if (err)
		return err;
	memset(ops, 0, sizeof(*ops));
	ops->sz = sizeof(*ops);
	ops->name = "cupti-push";
	ops->push = cupti_push;
	ops->pop = cupti_pop;
	return 0;
}

/* ------------------------------------------------------------------ buffers */

static void write_clock(lin_runtime *rt);

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
	uint8_t *b = lin_cupti_pool_get(&g_pool);

	*max_records = 0; /* fill the buffer */
	*buffer = b;
	*size = b ? g_pool.buf_size : 0;
	if (!b) {
		pthread_rwlock_rdlock(&g_cb_lock);
		if (g_owner)
			lin_rt_count_dropped(g_owner, LIN_DROP_CUPTI_BUFFER, 1);
		pthread_rwlock_unlock(&g_cb_lock);
	}
}

static uint64_t intern_kernel_name(void *user, const char *s)
{
	return lin_rt_intern_locked(user, s);
}

/* Decode @valid bytes into @rt's trace. Shared by the live callback and attach mode. */
static int decode_into(lin_runtime *rt, const uint8_t *buf, size_t valid,
		       struct lin_cupti_decode_stats *st)
{
	msgpack_packer *pk = lin_rt_out_lock(rt);
	struct lin_cupti_decoder d = { .pk = pk, .intern = intern_kernel_name, .intern_user = rt };
	int err;

	if (!pk)
		return -LIN_ETRACE;
	err = lin_cupti_decode_buffer(&d, buf, valid, st);
	lin_rt_out_unlock(rt);
	return err;
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buf, size_t size,
				      size_t valid)
{
	size_t dropped = 0;

	(void)size;
	pthread_rwlock_rdlock(&g_cb_lock);
	if (g_owner) {
		/* The trace is not open yet while the backend opens: pair the clocks here. */
		if (atomic_exchange(&g_clock_pending, 0))
			write_clock(g_owner);
		if (decode_into(g_owner, buf, valid, &g_stats) == -LIN_EBACKEND)
			lin_rt_log(g_owner, LIN_LOG_WARN,
				   "cupti: an activity buffer held an undecodable record; "
				   "the rest of that buffer was dropped");
		if (cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS &&
		    dropped > 0)
			lin_rt_count_dropped(g_owner, LIN_DROP_CUPTI_RECORDS, dropped);
	}
	pthread_rwlock_unlock(&g_cb_lock);
	lin_cupti_pool_put(&g_pool, buf);
}

/* ------------------------------------------------------------------ open / close */

static void write_clock(lin_runtime *rt)
{
	uint64_t dev = 0;
	msgpack_packer *pk;

	/* Host before and after the device read: their gap bounds the pair's error. */
	uint64_t h0 = lin_rt_now_ns(rt);
	if (cuptiGetTimestamp(&dev) != CUPTI_SUCCESS)
		return;
	uint64_t h1 = lin_rt_now_ns(rt);
	pk = lin_rt_out_lock(rt);
	if (!pk)
		return;
	lin_tf_clock(pk, h0, dev, h1);
	lin_rt_out_unlock(rt);
}

static int env_flag(const char *name)
{
	const char *v = getenv(name);

	return v && *v && strcmp(v, "0") != 0;
}

static void disable_all(void)
{
	while (g_n_enabled > 0)
		(void)cuptiActivityDisable(g_enabled[--g_n_enabled]);
}

/* Enable @kind; remember it for close. Return the CUPTI result. */
static CUptiResult enable(CUpti_ActivityKind kind)
{
	CUptiResult r = cuptiActivityEnable(kind);

	if (r == CUPTI_SUCCESS && g_n_enabled < sizeof(g_enabled) / sizeof(g_enabled[0]))
		g_enabled[g_n_enabled++] = kind;
	return r;
}

static int enable_kinds(lin_runtime *rt, const char **status)
{
	static const struct { CUpti_ActivityKind kind; const char *name; int required; } kinds[] = {
		{ CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION, "EXTERNAL_CORRELATION", 1 },
		{ CUPTI_ACTIVITY_KIND_RUNTIME, "RUNTIME", 1 },
		{ CUPTI_ACTIVITY_KIND_DRIVER, "DRIVER", 0 },
		{ CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, "CONCURRENT_KERNEL", 1 },
		{ CUPTI_ACTIVITY_KIND_MEMCPY, "MEMCPY", 0 },
		{ CUPTI_ACTIVITY_KIND_MEMSET, "MEMSET", 0 },
		{ CUPTI_ACTIVITY_KIND_INTERNAL_LAUNCH_API, "INTERNAL_LAUNCH_API", 0 },
	};

	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		CUptiResult r = enable(kinds[i].kind);

		if (r == CUPTI_SUCCESS)
			continue;
		if (kinds[i].required) {
			snprintf(g_open_status, sizeof(g_open_status),
				 "unavailable: cuptiActivityEnable(%s): %s", kinds[i].name,
				 result_name(r));
			*status = g_open_status;
			disable_all();
			return -LIN_ENOCUPTI;
		}
		lin_rt_log(rt, LIN_LOG_WARN, "cupti: activity kind %s not enabled: %s",
			   kinds[i].name, result_name(r));
	}
	/* GRAPH_TRACE hides the per-node kernel records of graph launches: only on request. */
	if (env_flag("LINEAGE_CUPTI_GRAPH_TRACE") && enable(CUPTI_ACTIVITY_KIND_GRAPH_TRACE) !=
							     CUPTI_SUCCESS)
		lin_rt_log(rt, LIN_LOG_WARN, "cupti: GRAPH_TRACE could not be enabled");
	return 0;
}

int lin_cupti_backend_open(lin_runtime *rt, struct lin_backend_ops *ops, const char **status)
{
	uint32_t kind = lin_rt_ext_kind(rt);
	const char *st = NULL;
	CUptiResult r;
	int err;

	if (!status)
		status = &st;
	if (!ops || !valid_kind(kind)) {
		*status = "unavailable: invalid external correlation kind";
		return -EINVAL;
	}
	err = probe(kind, status);
	if (err)
		return err;
	pthread_mutex_lock(&g_owner_mu);
	if (g_owner) {
		*status = "unavailable: another runtime in this process owns CUPTI activity collection";
		err = -EBUSY;
		goto out;
	}
	if (!g_pool_alive) {
		err = lin_cupti_pool_init(&g_pool, LIN_CUPTI_BUF_SIZE, LIN_CUPTI_MAX_BUFS);
		if (err) {
			*status = "unavailable: no memory for the activity buffer pool";
			goto out;
		}
		g_pool_alive = 1;
	}
	(void)cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM); /* gettid() in API records */
	r = cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
	if (r != CUPTI_SUCCESS) {
		snprintf(g_open_status, sizeof(g_open_status),
			 "unavailable: cuptiActivityRegisterCallbacks: %s", result_name(r));
		*status = g_open_status;
		err = -LIN_ENOCUPTI;
		goto out;
	}
	pthread_rwlock_wrlock(&g_cb_lock);
	memset(&g_stats, 0, sizeof(g_stats));
	g_stats.sz = sizeof(g_stats);
	g_owner = rt;
	pthread_rwlock_unlock(&g_cb_lock);
	err = enable_kinds(rt, status);
	if (err) {
		pthread_rwlock_wrlock(&g_cb_lock);
		g_owner = NULL;
		pthread_rwlock_unlock(&g_cb_lock);
		goto out;
	}
	if (cuptiActivityFlushPeriod(LIN_CUPTI_FLUSH_MS) != CUPTI_SUCCESS)
		lin_rt_log(rt, LIN_LOG_WARN,
			   "cupti: periodic flush unavailable; buffers are decoded when full and at close");
	atomic_store(&g_clock_pending, 1);
	memset(ops, 0, sizeof(*ops));
	ops->sz = sizeof(*ops);
	ops->name = "cupti";
	ops->push = cupti_push;
	ops->pop = cupti_pop;
	*status = "ok";
out:
	pthread_mutex_unlock(&g_owner_mu);
	return err;
}

void lin_cupti_backend_close(lin_runtime *rt)
{
	size_t lent;

	pthread_mutex_lock(&g_owner_mu);
	if (!rt || g_owner != rt) {
		pthread_mutex_unlock(&g_owner_mu);
		return;
	}
	/* Completion callbacks run during the flush: g_cb_lock must not be held here. */
	(void)cuptiActivityFlushPeriod(0);
	(void)cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	disable_all();
	(void)cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	write_clock(rt);
	pthread_rwlock_wrlock(&g_cb_lock);
	g_owner = NULL;
	pthread_rwlock_unlock(&g_cb_lock);
	if (g_stats.invalid || g_stats.skipped)
		lin_rt_log(rt, LIN_LOG_INFO,
			   "cupti: %llu records decoded, %llu of kinds not traced, %llu undecodable",
			   (unsigned long long)g_stats.records, (unsigned long long)g_stats.skipped,
			   (unsigned long long)g_stats.invalid);
	/* The pool itself stays: CUPTI keeps the callbacks registered, and buffers it still
	 * holds come back later. Only idle buffers are freed. */
	lent = lin_cupti_pool_trim(&g_pool);
	if (lent)
		lin_rt_log(rt, LIN_LOG_WARN, "cupti: %zu activity buffers not returned at close", lent);
	pthread_mutex_unlock(&g_owner_mu);
}

/* ------------------------------------------------------------------ attach mode */

LIN_API int lin_cupti_attach_decode(lin_runtime *rt, const void *buf, size_t valid,
				    struct lin_cupti_decode_stats *st)
{
	if (!rt || (!buf && valid > 0) || (st && st->sz < sizeof(*st)))
		return -EINVAL;
	return decode_into(rt, buf, valid, st);
}

LIN_API int lin_cupti_attach_dropped(lin_runtime *rt, uint32_t source, uint64_t count)
{
	if (!rt || (source != LIN_DROP_CUPTI_RECORDS && source != LIN_DROP_CUPTI_BUFFER))
		return -EINVAL;
	if (count > 0)
		lin_rt_count_dropped(rt, source, count);
	return 0;
}
