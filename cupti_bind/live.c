/* SPDX-License-Identifier: MIT */
/*
 * live.c - the live CUPTI binding: one-time probe, external-correlation push/pop, activity
 * collection through a buffer pool, periodic and final flushes, clock pairs, loss
 * accounting, and living beside another CUPTI client (docs/cupti.md, "Live mode").
 *
 * CUPTI's buffer callbacks carry no user pointer and only one party per process may
 * register them, so one runtime at a time owns the activity collection (g_cupti.owner).
 * libcupti is not linked: its entry points are called through a table (cupti_api.h),
 * loaded when the backend first opens; the runtime reaches this file only through the
 * table lin_cupti_live.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cupti.h>

#include "cupti_api.h"
#include "decode.h"
#include "live.h"
#include "pool.h"
#include "rt_internal.h"

#define LIN_CUPTI_BUF_KIB 1024u /* 1 MiB: about 4,800 kernel records */
#define LIN_CUPTI_MAX_BUFS 512u /* one per thread that makes CUDA calls between flushes */
#define LIN_CUPTI_FLUSH_MS 500u

/*
 * The binding's process-wide state, all of it. CUPTI forces it to be the process's: its
 * buffer and timestamp callbacks carry no user pointer, one party per process registers
 * them, the timestamp callback cannot be unregistered, and the activity kinds, flush period
 * and external-correlation stacks are CUPTI's, not a runtime's. So one runtime at a time
 * owns the activity collection (owner), and what CUPTI's callbacks read is here.
 *
 * Locks: probe_mu guards the probe; owner_mu serialises open, started, close and at_exit;
 * cb_lock guards what the callbacks read (owner, pool, pool_alive, closing): its read side
 * inside a callback, its write side to change them; stats are written under the owner's
 * trace output lock; fl_mu and fl_cv run the flush thread; ts_* is a sequence lock the
 * timestamp callback reads (publish_clock). CUPTI's entry points come from cupti() (the
 * table of cupti_api.h), which is loaded before the first call here and never changes.
 */
static struct {
	/* The runtime that owns activity collection, and what the callbacks use for it. */
	pthread_rwlock_t cb_lock;
	pthread_mutex_t owner_mu;
	lin_runtime *owner;
	struct lin_cupti_pool pool; /* buffers are lent under cb_lock's read side */
	int pool_alive;
	int closing; /* close has begun: buffer requests are declined (cb_lock) */
	struct lin_cupti_decode_stats stats;
	CUpti_ActivityKind enabled[16]; /* what lineage enabled, to disable at close */
	size_t n_enabled;
	char open_status[256];
	atomic_int warned_loss, warned_foreign;
	atomic_uint early_bufs; /* buffers completed before the owner's trace was open */
	/* lineage's own flush thread: CUPTI's periodic flush returns only full buffers. */
	pthread_mutex_t fl_mu;
	pthread_cond_t fl_cv;
	pthread_t flusher;
	bool fl_running, fl_stop;
	int forked; /* this process is a fork child of one whose lineage owned CUPTI */
	pthread_once_t hooks_once;
	/* The owner's host clock, for CUPTI's timestamp callback (publish_clock). */
	_Atomic uint64_t ts_seq, ts_npt, ts_tsc0, ts_ns0, ts_tsc;
	_Atomic int ts_registered;
} g_cupti = {
	.cb_lock = PTHREAD_RWLOCK_INITIALIZER,
	.owner_mu = PTHREAD_MUTEX_INITIALIZER,
	.fl_mu = PTHREAD_MUTEX_INITIALIZER,
	.fl_cv = PTHREAD_COND_INITIALIZER,
	.hooks_once = PTHREAD_ONCE_INIT,
};

/* CUPTI's entry points: libcupti's, loaded at the first open, or a test's (cupti_api.h). */
static inline const struct lin_cupti_api *cupti(void) { return lin_cupti_api(NULL); }

/* ------------------------------------------------------------------ buffers */

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
	uint8_t *b;

	*max_records = 0; /* fill the buffer */
	pthread_rwlock_rdlock(&g_cupti.cb_lock);
	b = g_cupti.pool_alive && !g_cupti.closing ? lin_cupti_pool_get(&g_cupti.pool) : NULL;
	*buffer = b;
	*size = b ? g_cupti.pool.buf_size : 0;
	if (!b && g_cupti.owner)
		lin_rt_count_dropped(g_cupti.owner, LIN_DROP_CUPTI_BUFFER, 1);
	pthread_rwlock_unlock(&g_cupti.cb_lock);
}

static uint64_t intern_kernel_name(void *user, const char *s)
{
	return lin_rt_intern_locked(user, s);
}

/*
 * A clock pair: the host clock before and after one CUPTI reading; their gap bounds the
 * pair's error (the validator's mapping error: docs/validator.md). As clock
 * synchronisation protocols keep the exchange with the smallest round trip, the pair is
 * the narrowest of LIN_CLOCK_PAIR_READS reads taken back to back (docs/cupti.md, "Clocks").
 * false: CUPTI gave no timestamp (no pair is written).
 */
#define LIN_CLOCK_PAIR_READS 8

static bool read_clock(lin_runtime *rt, uint64_t *host, uint64_t *dev, uint64_t *host_after)
{
	uint64_t best = UINT64_MAX;

	for (int i = 0; i < LIN_CLOCK_PAIR_READS; i++) {
		/* Fenced: the first host read completes before CUPTI's starts, the second starts
		 * after CUPTI's completed, so the gap holds the device reading. */
		uint64_t h = lin_rt_now_ns(rt), d = 0;
		lin_clock_order();
		bool ok = cupti()->cuptiGetTimestamp(&d) == CUPTI_SUCCESS;
		lin_clock_order();
		uint64_t a = lin_rt_now_ns(rt);

		if (!ok)
			break;
		if (a >= h && a - h < best) {
			best = a - h;
			*host = h;
			*dev = d;
			*host_after = a;
		}
	}
	return best != UINT64_MAX;
}

/*
 * Decode @valid bytes into @rt's trace. Shared by the live callback and attach mode. With
 * @clock, a clock record read just before the lock precedes the buffer's records (the
 * live binding pairs the clocks at every completed buffer: docs/cupti.md, "Clocks").
 */
static int decode_into(lin_runtime *rt, const uint8_t *buf, size_t valid, bool clock,
		       struct lin_cupti_decode_stats *st)
{
	uint64_t host = 0, dev = 0, after = 0;
	bool have_clock = clock && read_clock(rt, &host, &dev, &after);
	msgpack_packer *pk = lin_rt_out_lock(rt);
	struct lin_cupti_decoder d = { .pk = pk, .intern = intern_kernel_name, .intern_user = rt };
	int err;

	if (!pk)
		return -LIN_ETRACE;
	if (have_clock)
		lin_tf_clock(pk, host, dev, after);
	err = lin_cupti_decode_buffer(&d, buf, valid, st);
	lin_rt_out_unlock(rt);
	return err;
}

/*
 * Buffers CUPTI completed between the owner's enabling of the kinds and the opening of its
 * trace (CUDA was already busy when the runtime was created) could be decoded into nothing:
 * their records are a loss of unknown size, written once the trace is open (dropped source
 * 7), never silently recycled.
 */
static void report_early(lin_runtime *rt)
{
	unsigned n = atomic_exchange(&g_cupti.early_bufs, 0);
	msgpack_packer *pk;

	if (!n)
		return;
	pk = lin_rt_out_lock(rt);
	if (!pk) {
		atomic_fetch_add(&g_cupti.early_bufs, n);
		return;
	}
	char why[128];
	snprintf(why, sizeof(why),
		 "completed_before_trace_open: %u activity buffers completed "
		 "before the trace was open",
		 n);
	lin_tf_dropped(pk, LIN_DROP_CUPTI_UNDELIVERED, n, LIN_NIL, why);
	lin_rt_out_unlock(rt);
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buf, size_t size,
				      size_t valid)
{
	size_t dropped = 0;

	(void)size;
	pthread_rwlock_rdlock(&g_cupti.cb_lock);
	if (g_cupti.owner) {
		int err = decode_into(g_cupti.owner, buf, valid, true, &g_cupti.stats);

		if (err == -LIN_ETRACE) /* the owner's trace is not open yet */
			atomic_fetch_add(&g_cupti.early_bufs, 1);
		else
			report_early(g_cupti.owner);
		if (err == -LIN_EBACKEND && !atomic_exchange(&g_cupti.warned_loss, 1))
			lin_rt_log(g_cupti.owner, LIN_LOG_WARN,
				   "cupti: an activity buffer held records that could not be decoded; "
				   "the loss is in the trace as dropped records (sources 4-6)");
		/* context and stream are deprecated (NULL, 0): the global count, reset on read. */
		if (cupti()->cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS &&
		    dropped > 0)
			lin_rt_count_dropped(g_cupti.owner, LIN_DROP_CUPTI_RECORDS, dropped);
	}
	/* Zeroed before it is lent again: a record CUPTI leaves incomplete in a later use
	 * must not show this use's bytes (docs/cupti.md, "Buffers"). A buffer lineage never
	 * lent (a client that registered CUPTI's callbacks before lineage had it in flight)
	 * is decoded above and left alone: never pooled, lent again or freed. */
	bool foreign = !g_cupti.pool_alive || !lin_cupti_pool_put_used(&g_cupti.pool, buf, valid);
	if (foreign && g_cupti.owner && !atomic_exchange(&g_cupti.warned_foreign, 1))
		lin_rt_log(g_cupti.owner, LIN_LOG_WARN,
			   "cupti: CUPTI completed a buffer lineage did not lend (another client "
			   "registered activity callbacks before lineage); its records are in the "
			   "trace, the buffer is left to its owner");
	pthread_rwlock_unlock(&g_cupti.cb_lock);
}

/* ------------------------------------------------------------------ open / close */

static void write_clock(lin_runtime *rt)
{
	uint64_t host, dev, after;
	msgpack_packer *pk;

	if (!read_clock(rt, &host, &dev, &after))
		return;
	pk = lin_rt_out_lock(rt);
	if (!pk)
		return;
	lin_tf_clock(pk, host, dev, after);
	lin_rt_out_unlock(rt);
}

static int env_flag(const char *name)
{
	const char *v = getenv(name);

	return v && *v && strcmp(v, "0") != 0;
}

static void disable_ours(void)
{
	while (g_cupti.n_enabled > 0)
		(void)cupti()->cuptiActivityDisable(g_cupti.enabled[--g_cupti.n_enabled]);
}

/* Enable @kind; remember it for close. Return the CUPTI result. */
static CUptiResult enable(CUpti_ActivityKind kind)
{
	CUptiResult r = cupti()->cuptiActivityEnable(kind);

	if (r == CUPTI_SUCCESS &&
	    g_cupti.n_enabled < sizeof(g_cupti.enabled) / sizeof(g_cupti.enabled[0]))
		g_cupti.enabled[g_cupti.n_enabled++] = kind;
	return r;
}

static int enable_kinds(lin_runtime *rt, uint32_t cupti_flags, const char **status)
{
	static const struct {
		CUpti_ActivityKind kind;
		const char *name;
		int required;
		const char *without;
		uint32_t unless; /* LIN_CUPTI_* flag that leaves the kind off */
	} kinds[] = {
		{ CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION, "EXTERNAL_CORRELATION", 1, NULL },
		{ CUPTI_ACTIVITY_KIND_RUNTIME, "RUNTIME", 1, NULL },
		{ CUPTI_ACTIVITY_KIND_DRIVER, "DRIVER", 0,
		  "driver-API calls, and GPU records that carry a driver call's correlation id, "
		  "cannot join" },
		{ CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, "CONCURRENT_KERNEL", 1, NULL },
		{ CUPTI_ACTIVITY_KIND_MEMCPY, "MEMCPY", 0, "no memcpy records" },
		{ CUPTI_ACTIVITY_KIND_MEMCPY2, "MEMCPY2", 0, "no peer-to-peer copy records" },
		{ CUPTI_ACTIVITY_KIND_MEMSET, "MEMSET", 0, "no memset records" },
		{ CUPTI_ACTIVITY_KIND_INTERNAL_LAUNCH_API, "INTERNAL_LAUNCH_API", 0,
		  "kernels of internal launches have no API record" },
		/* Since CUDA 12.9 CUDA_EVENT is a kind of its own: a wait names a recording
		 * only if both are collected (docs/cupti.md, "Live mode" step 6). */
		{ CUPTI_ACTIVITY_KIND_CUDA_EVENT, "CUDA_EVENT", 0,
		  "no cuda_event records: a stream wait event names no recording",
		  LIN_CUPTI_NO_SYNC_RECORDS },
		{ CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, "SYNCHRONIZATION", 0,
		  "no sync records: stream waits and synchronizations are not in the trace",
		  LIN_CUPTI_NO_SYNC_RECORDS },
	};

	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		if (cupti_flags & kinds[i].unless)
			continue;
		CUptiResult r = enable(kinds[i].kind);

		if (r == CUPTI_SUCCESS)
			continue;
		if (kinds[i].required) {
			snprintf(g_cupti.open_status, sizeof(g_cupti.open_status),
				 "unavailable: cuptiActivityEnable(%s): %s", kinds[i].name,
				 lin_cupti_result_name(r));
			*status = g_cupti.open_status;
			disable_ours();
			return -LIN_ENOCUPTI;
		}
		lin_rt_log(rt, LIN_LOG_WARN, "cupti: activity kind %s not enabled (%s): %s",
			   kinds[i].name, lin_cupti_result_name(r), kinds[i].without);
	}
	/* GRAPH_TRACE hides the per-node kernel records of graph launches: only on request. */
	if (env_flag("LINEAGE_CUPTI_GRAPH_TRACE") && enable(CUPTI_ACTIVITY_KIND_GRAPH_TRACE) != CUPTI_SUCCESS)
		lin_rt_log(rt, LIN_LOG_WARN, "cupti: GRAPH_TRACE could not be enabled");
	return 0;
}

static void CUPTIAPI no_callback(void *user, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
				 const void *data)
{
	(void)user;
	(void)domain;
	(void)cbid;
	(void)data;
}

/*
 * another_client - whether another CUPTI client is present: it holds CUPTI's only
 * subscriber (Nsight Systems and Compute, profilers that use the callback API). lineage
 * subscribes for an instant to find out and unsubscribes at once, so a client that comes
 * later can still subscribe. @why gets CUPTI's answer when it is neither.
 */
static bool another_client(CUptiResult *why)
{
	CUpti_SubscriberHandle h = NULL;
	CUptiResult r = cupti()->cuptiSubscribe(&h, (CUpti_CallbackFunc)no_callback, NULL);

	*why = r;
	if (r == CUPTI_SUCCESS) {
		(void)cupti()->cuptiUnsubscribe(h);
		return false;
	}
	return r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
}

/* Whether API records carry gettid(); when not, say why into @note. */
static bool thread_ids_system(bool may_set, char *note, size_t cap)
{
	CUpti_ActivityThreadIdType t = CUPTI_ACTIVITY_THREAD_ID_TYPE_DEFAULT;
	CUptiResult r = cupti()->cuptiGetThreadIdType(&t);

	if (r == CUPTI_SUCCESS && t == CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM)
		return true;
	if (may_set) {
		r = cupti()->cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
		if (r == CUPTI_SUCCESS)
			return true;
		snprintf(note, cap,
			 "API records carry CUPTI's default thread ids, not gettid() "
			 "(cuptiSetThreadIdType: %s)",
			 lin_cupti_result_name(r));
	} else {
		snprintf(note, cap,
			 "API records carry the other client's thread-id type, not "
			 "gettid()");
	}
	return false;
}

/* The other client owns CUPTI: push external ids only (attach mode), touch nothing else. */
static int open_attached(lin_runtime *rt, struct lin_backend_ops *ops, const char **status)
{
	char note[160] = "";
	bool sys = thread_ids_system(false, note, sizeof(note));

	snprintf(g_cupti.open_status, sizeof(g_cupti.open_status),
		 "attach: another CUPTI client is subscribed (%s); lineage pushes external ids "
		 "only, GPU records come through lin_cupti_attach_decode%s%s",
		 lin_cupti_result_name(CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED),
		 sys ? "" : "; ", note);
	*status = g_cupti.open_status;
	lin_rt_log(rt, LIN_LOG_WARN, "cupti: %s", g_cupti.open_status);
	lin_cupti_fill_ops(ops, "cupti-push");
	return 0;
}

static int pool_ready(uint32_t kib, uint32_t max)
{
	size_t bytes = (size_t)(kib ? kib : LIN_CUPTI_BUF_KIB) * 1024u;
	size_t n = max ? max : LIN_CUPTI_MAX_BUFS;
	int err = 0;

	pthread_rwlock_wrlock(&g_cupti.cb_lock);
	if (g_cupti.pool_alive && (g_cupti.pool.buf_size != bytes || g_cupti.pool.max_bufs != n) &&
	    lin_cupti_pool_lent(&g_cupti.pool) == 0) {
		lin_cupti_pool_destroy(&g_cupti.pool);
		g_cupti.pool_alive = 0;
	}
	if (!g_cupti.pool_alive) {
		err = lin_cupti_pool_init(&g_cupti.pool, bytes, n);
		g_cupti.pool_alive = err == 0;
	}
	pthread_rwlock_unlock(&g_cupti.cb_lock);
	return err;
}

static void at_exit(void);
static void at_fork_child(void);

static void hooks_once(void)
{
	atexit(at_exit);
	pthread_atfork(NULL, NULL, at_fork_child);
}

/* The status of a live binding that owns CUPTI: "ok", or "ok, " and what it lacks. */
static const char *owner_status(const struct lin_cupti_layouts *l, const char *tid_note)
{
	char lay[96] = "";

	if (l->n_refused)
		snprintf(lay, sizeof(lay), "libcupti %u: %u record layouts not read (dropped source 6)",
			 l->version, l->n_refused);
	if (!lay[0] && !tid_note[0])
		return "ok";
	snprintf(g_cupti.open_status, sizeof(g_cupti.open_status), "ok, %s%s%s", lay,
		 lay[0] && tid_note[0] ? "; " : "", tid_note);
	return g_cupti.open_status;
}

/*
 * CUPTI's timestamps on the owner's host clock. The callback is process-wide, has no user
 * pointer and cannot be unregistered, so it reads a copy of the current owner's clock
 * (each runtime calibrates its own), published under a sequence lock: never a freed
 * runtime, never a torn copy.
 */

static uint64_t CUPTIAPI host_timestamp(void)
{
	struct lin_rt_clock c;
	uint64_t s0, npt;
	do {
		s0 = atomic_load_explicit(&g_cupti.ts_seq, memory_order_acquire);
		npt = atomic_load_explicit(&g_cupti.ts_npt, memory_order_relaxed);
		c.tsc0 = atomic_load_explicit(&g_cupti.ts_tsc0, memory_order_relaxed);
		c.ns0 = atomic_load_explicit(&g_cupti.ts_ns0, memory_order_relaxed);
		c.use_tsc = atomic_load_explicit(&g_cupti.ts_tsc, memory_order_relaxed);
		atomic_thread_fence(memory_order_acquire);
	} while ((s0 & 1) || s0 != atomic_load_explicit(&g_cupti.ts_seq, memory_order_relaxed));
	memcpy(&c.ns_per_tick, &npt, sizeof(npt));
	return lin_rt_clock_ns(&c);
}

static void publish_clock(lin_runtime *rt)
{
	struct lin_rt_clock c;
	uint64_t npt;
	lin_rt_clock_get(rt, &c);
	memcpy(&npt, &c.ns_per_tick, sizeof(npt));
	atomic_fetch_add_explicit(&g_cupti.ts_seq, 1, memory_order_relaxed); /* odd: writing */
	atomic_thread_fence(memory_order_release);
	atomic_store_explicit(&g_cupti.ts_npt, npt, memory_order_relaxed);
	atomic_store_explicit(&g_cupti.ts_tsc0, c.tsc0, memory_order_relaxed);
	atomic_store_explicit(&g_cupti.ts_ns0, c.ns0, memory_order_relaxed);
	atomic_store_explicit(&g_cupti.ts_tsc, c.use_tsc, memory_order_relaxed);
	atomic_fetch_add_explicit(&g_cupti.ts_seq, 1, memory_order_release); /* even: done */
}

/* Put CUPTI's timestamps on @rt's clock (registered once per process; CUPTI keeps it).
 * true: CUPTI's records are on this runtime's clock. */
static bool host_clock(lin_runtime *rt)
{
	publish_clock(rt);
	if (atomic_load(&g_cupti.ts_registered))
		return true;
	CUptiResult r = cupti()->cuptiActivityRegisterTimestampCallback(host_timestamp);
	if (r != CUPTI_SUCCESS) {
		lin_rt_log(rt, LIN_LOG_WARN,
			   "cupti: timestamp callback refused (%s): device times "
			   "stay on CUPTI's clock",
			   lin_cupti_result_name(r));
		return false;
	}
	atomic_store(&g_cupti.ts_registered, 1);
	return true;
}

/*
 * lineage's flush thread. CUPTI's periodic flush (cuptiActivityFlushPeriod) returns only
 * buffers that are full and complete, and a per-thread buffer of 1 MiB may take a long run
 * to fill; a normal flush (cuptiActivityFlushAll(0)) returns every buffer whose records are
 * complete, full or not, and may be called "at a regular interval in a separate thread"
 * (cupti_activity.h). So GPU records reach the trace every LIN_CUPTI_FLUSH_MS while the
 * program runs, not only at close, and a killed process loses one period at most.
 */
static void *flusher(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&g_cupti.fl_mu);
	while (!g_cupti.fl_stop) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += LIN_CUPTI_FLUSH_MS / 1000;
		ts.tv_nsec += (long)(LIN_CUPTI_FLUSH_MS % 1000) * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		if (pthread_cond_timedwait(&g_cupti.fl_cv, &g_cupti.fl_mu, &ts) != ETIMEDOUT ||
		    g_cupti.fl_stop)
			continue;
		pthread_mutex_unlock(&g_cupti.fl_mu);
		(void)cupti()->cuptiActivityFlushAll(0);
		pthread_mutex_lock(&g_cupti.fl_mu);
	}
	pthread_mutex_unlock(&g_cupti.fl_mu);
	return NULL;
}

static void flusher_start(lin_runtime *rt)
{
	pthread_mutex_lock(&g_cupti.fl_mu);
	g_cupti.fl_stop = false;
	g_cupti.fl_running = lin_thread_start(&g_cupti.flusher, flusher, NULL) == 0;
	pthread_mutex_unlock(&g_cupti.fl_mu);
	if (!g_cupti.fl_running)
		lin_rt_log(rt, LIN_LOG_WARN,
			   "cupti: no flush thread; buffers reach the trace when "
			   "full and at close");
}

/* Stop the flush thread; it is never inside a callback lineage holds a lock for. */
static void flusher_stop(void)
{
	pthread_mutex_lock(&g_cupti.fl_mu);
	bool join = g_cupti.fl_running;
	g_cupti.fl_running = false;
	g_cupti.fl_stop = true;
	pthread_cond_broadcast(&g_cupti.fl_cv);
	pthread_mutex_unlock(&g_cupti.fl_mu);
	if (join)
		pthread_join(g_cupti.flusher, NULL);
}

/* Own CUPTI's activity collection: callbacks, kinds, thread ids, flush period. */
static int open_owner(lin_runtime *rt, const struct lin_runtime_opts *o, CUptiResult latency,
		      struct lin_backend_ops *ops, const char **status)
{
	const struct lin_cupti_layouts *l = lin_cupti_layouts();
	char tid_note[160] = "";
	CUptiResult r;
	int err;

	if (pool_ready(o->cupti_buffer_kib, o->cupti_buffers_max)) {
		*status = "unavailable: no memory for the activity buffer pool";
		return -ENOMEM;
	}
	if (l->n_refused)
		lin_rt_log(rt, LIN_LOG_WARN,
			   "cupti: libcupti %u, built for %u: %u record layouts are not read; their "
			   "records are reported lost",
			   l->version, l->built_for, l->n_refused);
	(void)thread_ids_system(true, tid_note, sizeof(tid_note));
	if (tid_note[0])
		lin_rt_log(rt, LIN_LOG_WARN, "cupti: %s", tid_note);
	if (latency != CUPTI_SUCCESS)
		lin_rt_log(rt, LIN_LOG_WARN,
			   "cupti: latency timestamps unavailable (%s): queued and "
			   "submitted stay unknown",
			   lin_cupti_result_name(latency));
	/* "Before any of the CUPTI activity kinds are enabled." Once registered the callback
	 * cannot be taken back, so a later owner asking for CUPTI's clock still gets its own
	 * host clock, and is told. */
	if (atomic_load(&g_cupti.ts_registered) && (o->cupti_flags & LIN_CUPTI_OWN_CLOCK))
		lin_rt_log(rt, LIN_LOG_WARN,
			   "cupti: LIN_CUPTI_OWN_CLOCK ignored: an earlier runtime "
			   "in this process registered the timestamp callback");
	if ((!(o->cupti_flags & LIN_CUPTI_OWN_CLOCK) || atomic_load(&g_cupti.ts_registered)) &&
	    host_clock(rt))
		lin_rt_set_device_clock_host(rt);
	/* The pool lends zeroed buffers (pool.c): CUPTI need not zero each one on the thread
	 * that asked for it, inside a CUDA call. */
	uint8_t zeroed = 1;
	size_t zsz = sizeof(zeroed);
	if ((r = cupti()->cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER,
						    &zsz, &zeroed)) != CUPTI_SUCCESS)
		lin_rt_log(rt, LIN_LOG_INFO,
			   "cupti: zeroed-buffer attribute not set (%s): CUPTI "
			   "zeroes each buffer itself",
			   lin_cupti_result_name(r));
	r = cupti()->cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
	if (r != CUPTI_SUCCESS) {
		snprintf(g_cupti.open_status, sizeof(g_cupti.open_status),
			 "unavailable: cuptiActivityRegisterCallbacks: %s", lin_cupti_result_name(r));
		*status = g_cupti.open_status;
		return -LIN_ENOCUPTI;
	}
	pthread_rwlock_wrlock(&g_cupti.cb_lock);
	memset(&g_cupti.stats, 0, sizeof(g_cupti.stats));
	g_cupti.stats.sz = sizeof(g_cupti.stats);
	g_cupti.closing = 0;
	g_cupti.owner = rt;
	pthread_rwlock_unlock(&g_cupti.cb_lock);
	err = enable_kinds(rt, o->cupti_flags, status);
	if (err) {
		pthread_rwlock_wrlock(&g_cupti.cb_lock);
		g_cupti.owner = NULL;
		pthread_rwlock_unlock(&g_cupti.cb_lock);
		return err;
	}
	if (cupti()->cuptiActivityFlushPeriod(LIN_CUPTI_FLUSH_MS) != CUPTI_SUCCESS)
		lin_rt_log(rt, LIN_LOG_WARN,
			   "cupti: periodic flush unavailable; buffers are decoded when full and at close");
	pthread_once(&g_cupti.hooks_once, hooks_once);
	flusher_start(rt);
	atomic_store(&g_cupti.warned_loss, 0);
	atomic_store(&g_cupti.warned_foreign, 0);
	lin_cupti_fill_ops(ops, "cupti");
	*status = owner_status(l, tid_note);
	return 0;
}

static int live_open(lin_runtime *rt, const struct lin_runtime_opts *o, struct lin_backend_ops *ops,
		     const char **status)
{
	uint32_t kind = lin_rt_ext_kind(rt);
	const char *st = NULL;
	CUptiResult why;
	int err;

	if (!status)
		status = &st;
	if (g_cupti.forked) {
		*status = "unavailable: this process is a fork child of a process whose lineage "
			  "owned CUPTI; CUPTI's threads and buffers do not survive fork (create the "
			  "runtime after exec)";
		return -LIN_ENOCUPTI;
	}
	if (!ops || !o || !lin_cupti_valid_kind(kind)) {
		*status = "unavailable: invalid external correlation kind";
		return -EINVAL;
	}
	if (!lin_cupti_api(status)) /* libcupti not loaded: *status has dlopen's error */
		return -LIN_ENOCUPTI;
	/* "Needs to be called before initialization of CUDA": so before any other CUPTI call
	 * of lineage's (the probe's push initialises CUPTI). Beside another client it turns
	 * the timestamps on for that client's kernel records too (docs/cupti.md). */
	CUptiResult latency = CUPTI_SUCCESS;
	if (o->cupti_flags & LIN_CUPTI_LATENCY_TIMESTAMPS)
		latency = cupti()->cuptiActivityEnableLatencyTimestamps(1);
	err = lin_cupti_probe(kind, status);
	if (err)
		return err;
	pthread_mutex_lock(&g_cupti.owner_mu);
	if (g_cupti.owner) {
		*status = "unavailable: another runtime in this process owns CUPTI activity collection";
		err = -EBUSY;
	} else if (another_client(&why)) {
		err = open_attached(rt, ops, status);
	} else {
		if (why != CUPTI_SUCCESS)
			lin_rt_log(rt, LIN_LOG_INFO,
				   "cupti: cuptiSubscribe: %s; taking CUPTI as if "
				   "no other client were present",
				   lin_cupti_result_name(why));
		err = open_owner(rt, o, latency, ops, status);
	}
	pthread_mutex_unlock(&g_cupti.owner_mu);
	return err;
}

/* Deliver what CUPTI holds: complete buffers first, then the rest (incomplete records). */
static void flush_both(void)
{
	(void)cupti()->cuptiActivityFlushAll(0);
	(void)cupti()->cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
}

/*
 * Buffers CUPTI still holds once the runtime stops owning it: their records, if any, reach
 * no trace. Written as a loss (dropped source 7, one per buffer: how many records each held
 * is unknown), never only logged, so the validator cannot pass the trace.
 */
static void report_undelivered(lin_runtime *rt, bool beside)
{
	size_t lent = lin_cupti_pool_lent(&g_cupti.pool);
	char why[160];
	msgpack_packer *pk;

	if (!lent)
		return;
	snprintf(why, sizeof(why),
		 "undelivered_at_close: %zu activity buffers still held by "
		 "CUPTI%s",
		 lent, beside ? " (no forced flush: another CUPTI client is present)" : "");
	lin_rt_log(rt, LIN_LOG_WARN, "cupti: %s; their records are reported lost", why);
	pk = lin_rt_out_lock(rt);
	if (!pk)
		return;
	lin_tf_dropped(pk, LIN_DROP_CUPTI_UNDELIVERED, lent, LIN_NIL, why);
	lin_rt_out_unlock(rt);
}

static void live_close(lin_runtime *rt)
{
	CUptiResult why;

	if (g_cupti.forked) /* a fork child's runtimes never own CUPTI; its locks are not touched */
		return;
	pthread_mutex_lock(&g_cupti.owner_mu);
	if (!rt || g_cupti.owner != rt) { /* attached, or never owned */
		pthread_mutex_unlock(&g_cupti.owner_mu);
		return;
	}
	/* Completion callbacks run during the flushes: g_cupti.cb_lock must not be held here. */
	flusher_stop();
	bool beside = another_client(&why);
	if (beside) {
		/* A client came after lineage: its kinds, flush period and buffers are not
		 * lineage's to end. A normal flush hands over what is complete, no more. */
		(void)cupti()->cuptiActivityFlushAll(0);
		lin_rt_log(rt, LIN_LOG_WARN,
			   "cupti: another CUPTI client is present at close: "
			   "activity kinds stay enabled, no forced flush");
		g_cupti.n_enabled = 0;
	} else {
		/* End the session, then flush (as cupti_activity.h suggests, and as Kineto's
		 * stop does): disabling first means no thread still making CUDA calls can fill a
		 * buffer after the final flush; requests from here on are declined (CUPTI counts
		 * what it then drops, read below). */
		(void)cupti()->cuptiActivityFlushPeriod(0);
		disable_ours();
		pthread_rwlock_wrlock(&g_cupti.cb_lock);
		g_cupti.closing = 1;
		pthread_rwlock_unlock(&g_cupti.cb_lock);
		flush_both();
	}
	report_early(rt);
	write_clock(rt);
	pthread_rwlock_wrlock(&g_cupti.cb_lock);
	/* Drops CUPTI counted since the last delivered buffer (reset on read). */
	size_t dropped = 0;
	if (cupti()->cuptiActivityGetNumDroppedRecords(NULL, 0, &dropped) == CUPTI_SUCCESS && dropped > 0)
		lin_rt_count_dropped(rt, LIN_DROP_CUPTI_RECORDS, dropped);
	g_cupti.owner = NULL;
	pthread_rwlock_unlock(&g_cupti.cb_lock);
	report_undelivered(rt, beside);
	if (g_cupti.stats.invalid || g_cupti.stats.skipped || g_cupti.stats.undecodable ||
	    g_cupti.stats.unsupported)
		lin_rt_log(rt, LIN_LOG_INFO,
			   "cupti: %llu records decoded, %llu of kinds not traced, %llu stepped over, "
			   "%llu of unread layouts, %llu buffers cut short",
			   (unsigned long long)g_cupti.stats.records,
			   (unsigned long long)g_cupti.stats.skipped,
			   (unsigned long long)g_cupti.stats.undecodable,
			   (unsigned long long)g_cupti.stats.unsupported,
			   (unsigned long long)g_cupti.stats.invalid);
	/* The pool itself stays: CUPTI keeps the callbacks registered, and buffers it still
	 * holds come back later (decoded into no trace). Only idle buffers are freed. */
	(void)lin_cupti_pool_trim(&g_cupti.pool);
	pthread_mutex_unlock(&g_cupti.owner_mu);
}

/*
 * The owner's trace is open: a clock pair now, so the calls of the first buffer (made
 * before it is completed and paired) lie between two pairs: outside the pairs' span the
 * validator widens its mapping error with the distance (docs/validator.md). Buffers
 * completed before this are reported too.
 */
static void live_started(lin_runtime *rt)
{
	pthread_mutex_lock(&g_cupti.owner_mu);
	if (rt && g_cupti.owner == rt) {
		write_clock(rt);
		report_early(rt);
	}
	pthread_mutex_unlock(&g_cupti.owner_mu);
}

const struct lin_cupti_backend lin_cupti_live = {
	.name = "cupti",
	.open = live_open,
	.started = live_started,
	.close = live_close,
};

/*
 * At process exit without lin_runtime_free: deliver CUPTI's buffers into the trace and
 * write it out, so the GPU records of the run are not lost with the process. The trace
 * still has no trace_end record (the runtime was not closed). trylock: exit() from inside
 * an open or close must not wait on itself.
 */
static void at_exit(void)
{
	lin_runtime *rt;
	CUptiResult why;

	if (pthread_mutex_trylock(&g_cupti.owner_mu) != 0)
		return;
	rt = g_cupti.owner;
	if (rt) {
		flusher_stop();
		if (another_client(&why))
			(void)cupti()->cuptiActivityFlushAll(0);
		else
			flush_both();
		write_clock(rt);
		(void)lin_runtime_flush(rt);
	}
	pthread_mutex_unlock(&g_cupti.owner_mu);
}

/*
 * A forked child owns nothing: its runtimes are detached copies (docs/architecture.md).
 * Its copies of the binding's locks may be held by threads that do not exist in it (CUPTI's
 * thread decoding a buffer), and CUPTI's own threads and state do not survive a fork, so
 * the child never touches them: a CUPTI runtime created in it is refused with a status
 * that says why (docs/cupti.md, "fork").
 */
static void at_fork_child(void)
{
	g_cupti.forked = 1;
	g_cupti.fl_running = false; /* the flush thread does not exist in the child */
	g_cupti.owner = NULL;
	g_cupti.n_enabled = 0;
}

/* ------------------------------------------------------------------ attach mode */

LIN_API int lin_cupti_attach_decode(lin_runtime *rt, const void *buf, size_t valid,
				    struct lin_cupti_decode_stats *st)
{
	struct lin_cupti_decode_stats local = { .sz = sizeof(local) };
	int err;

	if (!rt || (!buf && valid > 0) || (st && st->sz < LIN_CUPTI_DECODE_STATS_SIZE_V1))
		return -EINVAL;
	err = decode_into(rt, buf, valid, false, &local);
	if (st && err != -LIN_ETRACE)
		lin_cupti_stats_add(st, &local);
	return err;
}

LIN_API int lin_cupti_attach_dropped(lin_runtime *rt, uint32_t source, uint64_t count)
{
	if (!rt || (source != LIN_DROP_CUPTI_RECORDS && source != LIN_DROP_CUPTI_BUFFER))
		return -EINVAL;
	if (count > 0)
		lin_rt_count_dropped(rt, source, count);
	return 0;
}
