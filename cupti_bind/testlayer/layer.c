/* SPDX-License-Identifier: MIT */
/*
 * layer.c - the test layer's CUPTI entry points (cupti_layer.h): enabling kinds, the
 * buffer callbacks, external-correlation stacks, the subscriber, the thread-id type,
 * version, timestamps and loss counts; and the program's side, lin_cl_api and lin_cl_gpu.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

#include "layer_internal.h"

struct cl_state cl = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };
static pthread_once_t cl_once = PTHREAD_ONCE_INIT;
static _Thread_local struct cl_thread *tls_thread;

static void cl_init_once(void)
{
	cl.queue_tail = &cl.queue;
	cl.tid_type = CUPTI_ACTIVITY_THREAD_ID_TYPE_DEFAULT;
	atomic_init(&cl.next_corr, 1);
}

void cl_init(void) { pthread_once(&cl_once, cl_init_once); }

int lin_cl_configure(const struct lin_cl_config *c)
{
	if (!c || c->sz < sizeof(*c) || (c->buffer_use && c->buffer_use < 256))
		return -EINVAL;
	cl_init();
	pthread_mutex_lock(&cl.mu);
	cl.cfg = *c;
	cl.rng = c->seed;
	pthread_mutex_unlock(&cl.mu);
	return 0;
}

/* The device clock; cl.mu not held. */
uint64_t cl_now(void)
{
	struct timespec ts;
	CUpti_TimestampCallbackFunc cb;
	uint64_t (*clock)(void *);
	void *user;

	pthread_mutex_lock(&cl.mu);
	cb = cl.ts_cb;
	clock = cl.cfg.clock;
	user = cl.cfg.clock_user;
	pthread_mutex_unlock(&cl.mu);
	if (cb)
		return cb();
	if (clock)
		return clock(user);
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The calling thread's state; cl.mu held. */
struct cl_thread *cl_thread_self(void)
{
	struct cl_thread *t = tls_thread;

	if (t)
		return t;
	t = calloc(1, sizeof(*t));
	if (!t)
		abort(); /* a test double: no memory is the end of the test */
	t->tid = (uint32_t)syscall(SYS_gettid);
	t->self = (uint32_t)(uintptr_t)pthread_self();
	t->next = cl.threads;
	cl.threads = t;
	tls_thread = t;
	return t;
}

static bool kind_ok(uint32_t kind)
{
	return kind > CUPTI_ACTIVITY_KIND_INVALID && kind < CUPTI_ACTIVITY_KIND_COUNT;
}

/* ------------------------------------------------------------- enabling, callbacks */

CL_API CUptiResult CUPTIAPI cuptiActivityEnable(CUpti_ActivityKind kind)
{
	CUptiResult r = CUPTI_SUCCESS;

	cl_init();
	if (!kind_ok(kind))
		return CUPTI_ERROR_INVALID_KIND;
	pthread_mutex_lock(&cl.mu);
	cl.in_use = true;
	if (cl.cfg.refuse_kinds & (1ull << kind))
		r = CUPTI_ERROR_NOT_COMPATIBLE;
	else
		cl.enabled[kind] = true;
	pthread_mutex_unlock(&cl.mu);
	return r;
}

CL_API CUptiResult CUPTIAPI cuptiActivityDisable(CUpti_ActivityKind kind)
{
	cl_init();
	if (!kind_ok(kind))
		return CUPTI_ERROR_INVALID_KIND;
	pthread_mutex_lock(&cl.mu);
	cl.enabled[kind] = false;
	pthread_mutex_unlock(&cl.mu);
	return CUPTI_SUCCESS;
}

CL_API CUptiResult CUPTIAPI cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc req,
							   CUpti_BuffersCallbackCompleteFunc done)
{
	cl_init();
	if (!req || !done)
		return CUPTI_ERROR_INVALID_PARAMETER;
	pthread_mutex_lock(&cl.mu);
	cl.in_use = true;
	cl.req = req; /* one set per process: the last registration wins */
	cl.done = done;
	cl_worker_start();
	pthread_mutex_unlock(&cl.mu);
	return CUPTI_SUCCESS;
}

CL_API CUptiResult CUPTIAPI cuptiActivityFlushAll(uint32_t flag)
{
	cl_init();
	return cl_flush((flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) != 0);
}

CL_API CUptiResult CUPTIAPI cuptiActivitySetAttribute(CUpti_ActivityAttribute attr,
						      size_t *valueSize, void *value)
{
	cl_init();
	if (!valueSize || !value)
		return CUPTI_ERROR_INVALID_PARAMETER;
	if (attr != CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER)
		return CUPTI_SUCCESS; /* the others change nothing the layer models */
	if (*valueSize != sizeof(uint8_t))
		return CUPTI_ERROR_PARAMETER_SIZE_NOT_SUFFICIENT;
	pthread_mutex_lock(&cl.mu);
	cl.zeroed_attr = *(const uint8_t *)value != 0;
	pthread_mutex_unlock(&cl.mu);
	return CUPTI_SUCCESS;
}

CL_API CUptiResult CUPTIAPI cuptiActivityFlushPeriod(uint32_t ms)
{
	cl_init();
	pthread_mutex_lock(&cl.mu);
	cl.flush_ms = ms;
	pthread_cond_broadcast(&cl.cv);
	pthread_mutex_unlock(&cl.mu);
	return CUPTI_SUCCESS;
}

CL_API CUptiResult CUPTIAPI cuptiActivityGetNumDroppedRecords(CUcontext ctx, uint32_t stream,
							      size_t *dropped)
{
	(void)ctx;
	(void)stream;
	cl_init();
	if (!dropped)
		return CUPTI_ERROR_INVALID_PARAMETER;
	pthread_mutex_lock(&cl.mu);
	*dropped = (size_t)cl.dropped; /* "reset to zero when this function is called" */
	cl.dropped = 0;
	pthread_mutex_unlock(&cl.mu);
	return CUPTI_SUCCESS;
}

CL_API CUptiResult CUPTIAPI cuptiActivityEnableLatencyTimestamps(uint8_t enable)
{
	CUptiResult r = CUPTI_SUCCESS;

	cl_init();
	pthread_mutex_lock(&cl.mu);
	cl.latency_late |= cl.in_use;
	if (cl.cfg.latency_fails)
		r = CUPTI_ERROR_NOT_SUPPORTED;
	else
		cl.latency = enable != 0;
	pthread_mutex_unlock(&cl.mu);
	return r;
}

CL_API CUptiResult CUPTIAPI cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc f)
{
	cl_init();
	if (!f)
		return CUPTI_ERROR_INVALID_PARAMETER;
	pthread_mutex_lock(&cl.mu);
	cl.ts_cb = f;
	pthread_mutex_unlock(&cl.mu);
	return CUPTI_SUCCESS;
}

bool lin_cl_timestamp_callback_registered(void)
{
	cl_init();
	pthread_mutex_lock(&cl.mu);
	bool r = cl.ts_cb != NULL;
	pthread_mutex_unlock(&cl.mu);
	return r;
}

CL_API CUptiResult CUPTIAPI cuptiGetTimestamp(uint64_t *timestamp)
{
	cl_init();
	if (!timestamp)
		return CUPTI_ERROR_INVALID_PARAMETER;
	*timestamp = cl_now();
	return CUPTI_SUCCESS;
}

CL_API CUptiResult CUPTIAPI cuptiGetVersion(uint32_t *version)
{
	cl_init();
	if (!version)
		return CUPTI_ERROR_INVALID_PARAMETER;
	*version = cl.cfg.version ? cl.cfg.version : CUPTI_API_VERSION;
	return CUPTI_SUCCESS;
}

/* ------------------------------------------------------------- subscriber, thread ids */

CL_API CUptiResult CUPTIAPI cuptiSubscribe(CUpti_SubscriberHandle *subscriber,
					   CUpti_CallbackFunc callback, void *userdata)
{
	CUptiResult r = CUPTI_SUCCESS;

	(void)callback;
	(void)userdata;
	cl_init();
	if (!subscriber)
		return CUPTI_ERROR_INVALID_PARAMETER;
	pthread_mutex_lock(&cl.mu);
	cl.in_use = true;
	if (cl.cfg.other_subscriber || cl.subscribed) {
		r = CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
	} else {
		cl.subscribed = true;
		*subscriber = (CUpti_SubscriberHandle)&cl;
	}
	pthread_mutex_unlock(&cl.mu);
	return r;
}

CL_API CUptiResult CUPTIAPI cuptiUnsubscribe(CUpti_SubscriberHandle subscriber)
{
	CUptiResult r = CUPTI_SUCCESS;

	cl_init();
	pthread_mutex_lock(&cl.mu);
	if (subscriber != (CUpti_SubscriberHandle)&cl || !cl.subscribed)
		r = CUPTI_ERROR_INVALID_PARAMETER;
	else
		cl.subscribed = false;
	pthread_mutex_unlock(&cl.mu);
	return r;
}

CL_API CUptiResult CUPTIAPI cuptiGetThreadIdType(CUpti_ActivityThreadIdType *type)
{
	cl_init();
	if (!type)
		return CUPTI_ERROR_INVALID_PARAMETER;
	pthread_mutex_lock(&cl.mu);
	*type = cl.tid_type;
	pthread_mutex_unlock(&cl.mu);
	return CUPTI_SUCCESS;
}

CL_API CUptiResult CUPTIAPI cuptiSetThreadIdType(CUpti_ActivityThreadIdType type)
{
	CUptiResult r = CUPTI_SUCCESS;

	cl_init();
	if (type != CUPTI_ACTIVITY_THREAD_ID_TYPE_DEFAULT && type != CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM)
		return CUPTI_ERROR_INVALID_PARAMETER;
	pthread_mutex_lock(&cl.mu);
	if (cl.cfg.thread_id_type_fails)
		r = CUPTI_ERROR_NOT_SUPPORTED;
	else
		cl.tid_type = type;
	pthread_mutex_unlock(&cl.mu);
	return r;
}

/* ------------------------------------------------------------- external correlation */

static bool ext_kind_ok(uint32_t kind)
{
	return kind > CUPTI_EXTERNAL_CORRELATION_KIND_INVALID &&
	       kind < CUPTI_EXTERNAL_CORRELATION_KIND_SIZE;
}

CL_API CUptiResult CUPTIAPI cuptiActivityPushExternalCorrelationId(CUpti_ExternalCorrelationKind kind,
								   uint64_t id)
{
	CUptiResult r = CUPTI_SUCCESS;

	cl_init();
	if (!ext_kind_ok(kind))
		return CUPTI_ERROR_INVALID_PARAMETER;
	pthread_mutex_lock(&cl.mu);
	cl.in_use = true;
	struct cl_thread *t = cl_thread_self();
	if (t->depth[kind] >= CL_STACK)
		r = CUPTI_ERROR_OUT_OF_MEMORY;
	else
		t->stack[kind][t->depth[kind]++] = id;
	pthread_mutex_unlock(&cl.mu);
	return r;
}

CL_API CUptiResult CUPTIAPI cuptiActivityPopExternalCorrelationId(CUpti_ExternalCorrelationKind kind,
								  uint64_t *last)
{
	CUptiResult r = CUPTI_SUCCESS;

	cl_init();
	if (!ext_kind_ok(kind))
		return CUPTI_ERROR_INVALID_PARAMETER;
	pthread_mutex_lock(&cl.mu);
	struct cl_thread *t = cl_thread_self();
	if (!t->depth[kind]) {
		r = CUPTI_ERROR_QUEUE_EMPTY;
	} else {
		uint64_t v = t->stack[kind][--t->depth[kind]];
		if (last)
			*last = v;
	}
	pthread_mutex_unlock(&cl.mu);
	return r;
}

/* ------------------------------------------------------------- the program's calls */

/* One API record of @kind, preceded by its external correlations; cl.mu held. */
static void put_api(struct cl_thread *t, CUpti_ActivityKind kind, uint32_t cbid, uint32_t corr,
		    uint64_t start, uint64_t end, bool drop)
{
	uint32_t n_ext = 0;

	if (!cl.enabled[kind])
		return;
	if (cl.enabled[CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION])
		for (uint32_t k = 0; k < CL_EXT_KINDS; k++)
			n_ext += t->depth[k] != 0;
	if (drop) {
		cl.dropped += n_ext + 1;
		cl.st.dropped += n_ext + 1;
		return;
	}
	for (uint32_t k = 0; n_ext && k < CL_EXT_KINDS; k++) {
		CUpti_ActivityExternalCorrelation e;

		if (!t->depth[k])
			continue;
		memset(&e, 0, sizeof(e));
		e.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
		e.externalKind = (CUpti_ExternalCorrelationKind)k;
		e.externalId = t->stack[k][t->depth[k] - 1];
		e.correlationId = corr;
		cl_put_thread(t, &e, sizeof(e));
	}
	CUpti_ActivityAPI a;
	memset(&a, 0, sizeof(a));
	a.kind = kind;
	a.cbid = cbid;
	a.start = start;
	a.end = end;
	a.processId = (uint32_t)getpid();
	a.threadId = cl.tid_type == CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM ? t->tid : t->self;
	a.correlationId = corr;
	cl_put_thread(t, &a, sizeof(a));
}

struct lin_cl_corr lin_cl_api(const struct lin_cl_call *c)
{
	struct lin_cl_corr corr = { 0, 0 };
	uint64_t start = c->start, end = c->end;

	cl_init();
	if (!start) {
		/* The call as the caller made it: from now to the record's return, at least
		 * 2 ns so that a nested driver call fits inside. */
		start = cl_now();
		end = cl_now();
		if (end < start + 2)
			end = start + 2;
	}
	pthread_mutex_lock(&cl.mu);
	struct cl_thread *t = cl_thread_self();
	if (c->cbid)
		corr.runtime = atomic_fetch_add(&cl.next_corr, 1);
	if (c->driver_cbid)
		corr.driver = corr.runtime && cl.cfg.driver == LIN_CL_DRIVER_SHARED
				      ? corr.runtime
				      : atomic_fetch_add(&cl.next_corr, 1);
	/* The nested driver call ends first: its record comes first, inside the runtime's. */
	bool inside = c->cbid && end - start >= 2;
	if (c->driver_cbid)
		put_api(t, CUPTI_ACTIVITY_KIND_DRIVER, c->driver_cbid, corr.driver,
			inside ? start + 1 : start, inside ? end - 1 : end, c->drop);
	if (c->cbid)
		put_api(t, CUPTI_ACTIVITY_KIND_RUNTIME, c->cbid, corr.runtime, start, end, c->drop);
	pthread_mutex_unlock(&cl.mu);
	return corr;
}

void lin_cl_gpu(const void *rec, size_t len, struct lin_cl_corr corr)
{
	_Alignas(8) uint8_t r[256];
	CUpti_Activity *a = (CUpti_Activity *)r;
	uint32_t main_corr = corr.driver ? corr.driver : corr.runtime;

	if (len > sizeof(r) || len < sizeof(CUpti_Activity))
		abort();
	cl_init();
	memcpy(r, rec, len);
	pthread_mutex_lock(&cl.mu);
	if (a->kind == CUPTI_ACTIVITY_KIND_KERNEL || a->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
		CUpti_ActivityKernel10 *k = (CUpti_ActivityKernel10 *)r;
		k->correlationId = cl.cfg.kernel_driver_corr && corr.driver ? corr.driver
				   : corr.runtime                           ? corr.runtime
									    : corr.driver;
		if (!cl.latency)
			k->queued = k->submitted = 0; /* CUPTI_TIMESTAMP_UNKNOWN */
	} else if (a->kind == CUPTI_ACTIVITY_KIND_MEMCPY) {
		CUpti_ActivityMemcpy6 *m = (CUpti_ActivityMemcpy6 *)r;
		m->correlationId = main_corr;
		m->runtimeCorrelationId = corr.runtime;
	} else if (a->kind == CUPTI_ACTIVITY_KIND_MEMCPY2) {
		/* A peer copy has one id, "identical to the correlation ID in the driver and
		 * runtime API activity record": the driver call's when there is one (the case
		 * that needs the validator's runtime/driver pairing). */
		((CUpti_ActivityMemcpyPtoP4 *)r)->correlationId = main_corr;
	} else if (a->kind == CUPTI_ACTIVITY_KIND_MEMSET) {
		/* The header says the driver call's; the traces the project tests on show a
		 * cudaMemsetAsync's memset carrying the runtime call's (cupti_layer.h). */
		((CUpti_ActivityMemset4 *)r)->correlationId = corr.runtime ? corr.runtime : corr.driver;
	} else if (a->kind == CUPTI_ACTIVITY_KIND_CUDA_EVENT) {
		/* "The correlation ID of the API to which this result is associated": the
		 * header does not say which of the two calls; the one the program made. */
		((CUpti_ActivityCudaEvent2 *)r)->correlationId = corr.runtime ? corr.runtime
									      : corr.driver;
	} else if (a->kind == CUPTI_ACTIVITY_KIND_SYNCHRONIZATION) {
		((CUpti_ActivitySynchronization2 *)r)->correlationId = corr.runtime ? corr.runtime
										    : corr.driver;
	}
	if (kind_ok(a->kind) && cl.enabled[a->kind])
		cl_put_device(r, len);
	pthread_mutex_unlock(&cl.mu);
}

void lin_cl_gpu_hold(bool hold)
{
	cl_init();
	pthread_mutex_lock(&cl.mu);
	cl.hold = hold;
	if (!hold)
		for (size_t i = 0; i < cl.n_pend; i++)
			cl.pend[i].done = true;
	pthread_mutex_unlock(&cl.mu);
}

/* ------------------------------------------------------------- inspection */

void lin_cl_get_stats(struct lin_cl_stats *st)
{
	cl_init();
	pthread_mutex_lock(&cl.mu);
	*st = cl.st;
	pthread_mutex_unlock(&cl.mu);
}

bool lin_cl_enabled(uint32_t kind)
{
	bool e;

	cl_init();
	pthread_mutex_lock(&cl.mu);
	e = kind < CL_KINDS && cl.enabled[kind];
	pthread_mutex_unlock(&cl.mu);
	return e;
}

/* Read one field of the state under its lock. */
#define CL_READ(type, expr) \
	do { \
		type v_; \
		cl_init(); \
		pthread_mutex_lock(&cl.mu); \
		v_ = (expr); \
		pthread_mutex_unlock(&cl.mu); \
		return v_; \
	} while (0)

uint32_t lin_cl_thread_id_type(void) { CL_READ(uint32_t, (uint32_t)cl.tid_type); }

bool lin_cl_latency_enabled(void) { CL_READ(bool, cl.latency); }

uint32_t lin_cl_flush_period(void) { CL_READ(uint32_t, cl.flush_ms); }

bool lin_cl_latency_late(void) { CL_READ(bool, cl.latency_late); }

bool lin_cl_zeroed_attr(void) { CL_READ(bool, cl.zeroed_attr); }

bool lin_cl_subscribed(void) { CL_READ(bool, cl.subscribed); }

bool lin_cl_callbacks_are(CUpti_BuffersCallbackRequestFunc request,
			  CUpti_BuffersCallbackCompleteFunc complete)
{
	CL_READ(bool, cl.req == request && cl.done == complete);
}

/*
 * The layer as the binding sees it: its own entry points, and libcupti's record walker and
 * result strings (the real libcupti walks the buffers the layer fills).
 */
static const struct lin_cupti_api cl_api = {
	.sz = sizeof(cl_api),
	.name = "test layer",
	.cuptiGetResultString = cuptiGetResultString,
	.cuptiGetVersion = cuptiGetVersion,
	.cuptiGetTimestamp = cuptiGetTimestamp,
	.cuptiActivityPushExternalCorrelationId = cuptiActivityPushExternalCorrelationId,
	.cuptiActivityPopExternalCorrelationId = cuptiActivityPopExternalCorrelationId,
	.cuptiActivityEnable = cuptiActivityEnable,
	.cuptiActivityDisable = cuptiActivityDisable,
	.cuptiActivityEnableLatencyTimestamps = cuptiActivityEnableLatencyTimestamps,
	.cuptiActivitySetAttribute = cuptiActivitySetAttribute,
	.cuptiActivityRegisterCallbacks = cuptiActivityRegisterCallbacks,
	.cuptiActivityRegisterTimestampCallback = cuptiActivityRegisterTimestampCallback,
	.cuptiActivityFlushAll = cuptiActivityFlushAll,
	.cuptiActivityFlushPeriod = cuptiActivityFlushPeriod,
	.cuptiActivityGetNextRecord = cuptiActivityGetNextRecord,
	.cuptiActivityGetNumDroppedRecords = cuptiActivityGetNumDroppedRecords,
	.cuptiSubscribe = cuptiSubscribe,
	.cuptiUnsubscribe = cuptiUnsubscribe,
	.cuptiGetThreadIdType = cuptiGetThreadIdType,
	.cuptiSetThreadIdType = cuptiSetThreadIdType,
};

const struct lin_cupti_api *lin_cl_cupti_api(void) { return &cl_api; }
