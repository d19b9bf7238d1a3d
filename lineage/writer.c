/* SPDX-License-Identifier: MIT */
/*
 * writer.c - drains the per-thread event buffers, encodes them as msgpack (msgpack-c's
 * packer into our own buffer) and writes them out with write(2) or the user's callback.
 *
 * Runs on the runtime's writer thread every flush interval, and on the caller's thread in
 * lin_runtime_flush/free. Everything here holds out_lock; the launch path never does.
 * Records are written whole: a process killed mid-write leaves a file readable up to its
 * last complete record.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "lineage/w3c.h"
#include "rt.h"
#include "taps.h"
#include "tracefmt_fast.h"

#define OBUF_FLUSH (64u * 1024u)
#define PCACHE_SIZE 512u

/* String table: content hash -> sid, plus a pointer cache in front for launch names. */
struct lin_strtab {
	uint64_t *hash; /* 0 = empty slot */
	uint64_t *sid;
	size_t cap, n;
	uint64_t next_sid;
	const void *pc_ptr[PCACHE_SIZE];
	uint64_t pc_sid[PCACHE_SIZE];
};

static int out_write_cb(void *data, const char *buf, size_t len)
{
	lin_runtime *rt = data;
	/* msgpack-c hands over each primitive on its own: 1, 2, 3, 5 or 9 bytes for the
	 * integers and headers of an event. Copy those with fixed-size copies (inlined)
	 * rather than a call to memcpy for a few bytes: the writer's cost per event. */
	if (LIN_LIKELY(rt->olen + 16 <= rt->ocap)) {
		char *d = rt->obuf + rt->olen;
		switch (len) {
		case 1:
			d[0] = buf[0];
			rt->olen += 1;
			return 0;
		case 2:
			memcpy(d, buf, 2);
			rt->olen += 2;
			return 0;
		case 3:
			memcpy(d, buf, 3);
			rt->olen += 3;
			return 0;
		case 5:
			memcpy(d, buf, 5);
			rt->olen += 5;
			return 0;
		case 9:
			memcpy(d, buf, 9);
			rt->olen += 9;
			return 0;
		default: break;
		}
	}
	if (rt->olen + len > rt->ocap) {
		size_t cap = rt->ocap * 2;
		while (cap < rt->olen + len)
			cap *= 2;
		char *nb = realloc(rt->obuf, cap);
		if (!nb)
			return -1;
		rt->obuf = nb;
		rt->ocap = cap;
	}
	memcpy(rt->obuf + rt->olen, buf, len);
	rt->olen += len;
	return 0;
}

/* Hand the buffered bytes to the file or callback. Called with out_lock held. */
static int out_flush_locked(lin_runtime *rt)
{
	if (!rt->olen)
		return 0;
	lin_taps_feed(&rt->taps, rt->obuf, rt->olen);
	int err = 0;
	if (!rt->out_failed && rt->have_sink) {
		if (rt->write_cb)
			err = rt->write_cb(rt->obuf, rt->olen, rt->write_user);
		else
			err = lin_write_all(rt->fd, rt->obuf, rt->olen);
		if (err) {
			rt->out_failed = true;
			lin_logger_log(&rt->logger, LIN_LOG_ERROR,
				       "trace output failed: %s; further output is discarded",
				       lin_strerror(err));
		} else {
			atomic_fetch_add_explicit(&rt->bytes_written, rt->olen, memory_order_relaxed);
		}
	}
	rt->olen = 0;
	return rt->out_failed ? -LIN_ETRACE : 0;
}

static void maybe_flush_locked(lin_runtime *rt)
{
	if (rt->olen >= OBUF_FLUSH)
		out_flush_locked(rt);
}

static int strtab_grow(struct lin_strtab *st)
{
	size_t cap = st->cap ? st->cap * 2 : 1024;
	uint64_t *h = calloc(cap, sizeof(uint64_t)), *s = calloc(cap, sizeof(uint64_t));
	if (!h || !s) {
		free(h);
		free(s);
		return -ENOMEM;
	}
	for (size_t i = 0; i < st->cap; i++) {
		if (!st->hash[i])
			continue;
		size_t j = st->hash[i] & (cap - 1);
		while (h[j])
			j = (j + 1) & (cap - 1);
		h[j] = st->hash[i];
		s[j] = st->sid[i];
	}
	free(st->hash);
	free(st->sid);
	st->hash = h;
	st->sid = s;
	st->cap = cap;
	return 0;
}

/*
 * Strings are keyed by a 64-bit XXH3 of their bytes; two different names colliding on 64
 * bits would share an id (probability ~n^2/2^65, negligible for the names of one process).
 */
uint64_t lin_rt_intern_locked(lin_runtime *rt, const char *s)
{
	if (!s || !rt->strtab)
		return 0;
	struct lin_strtab *st = rt->strtab;
	size_t pc = ((uintptr_t)s >> 3) & (PCACHE_SIZE - 1);
	if (st->pc_ptr[pc] == s)
		return st->pc_sid[pc];
	size_t len = strlen(s);
	uint64_t h = XXH3_64bits(s, len) | 1;
	if ((st->n + 1) * 2 > st->cap && strtab_grow(st))
		return 0;
	size_t j = h & (st->cap - 1);
	while (st->hash[j] && st->hash[j] != h)
		j = (j + 1) & (st->cap - 1);
	if (!st->hash[j]) {
		st->hash[j] = h;
		st->sid[j] = ++st->next_sid;
		st->n++;
		lin_tf_string(&rt->pk, st->sid[j], s, len);
	}
	/* Only literal-like names are cached by address; see lin_launch_begin's contract. */
	st->pc_ptr[pc] = s;
	st->pc_sid[pc] = st->sid[j];
	return st->sid[j];
}

static void strtab_reset_ptrcache(struct lin_strtab *st)
{
	memset(st->pc_ptr, 0, sizeof(st->pc_ptr));
}

static uint64_t intern_owned(lin_runtime *rt, const char *s)
{
	/* Owned names are freed after encoding: their address may be reused by another
	 * string, so they bypass the pointer cache. */
	if (!s)
		return 0;
	struct lin_strtab *st = rt->strtab;
	size_t pc = ((uintptr_t)s >> 3) & (PCACHE_SIZE - 1);
	uint64_t sid = lin_rt_intern_locked(rt, s);
	st->pc_ptr[pc] = NULL;
	return sid;
}

static void encode_link(msgpack_packer *pk, uint64_t ns, uint64_t tid, uint64_t request,
			const struct lin_w3c_context *c)
{
	char lin[LIN_W3C_LIN_VALUE_MAX];
	bool has = c->has_token && !lin_w3c_lin_format(&c->token, c->tp.trace_id, lin, sizeof(lin));
	lin_tf_request_link(pk, ns, tid, request, lin_w3c_get64(c->tp.trace_id),
			    lin_w3c_get64(c->tp.trace_id + 8), lin_w3c_get64(c->tp.parent_id),
			    c->tp.flags, has ? lin : NULL);
}

/* A cursor into the output buffer with room for one fast record (tracefmt_fast.h). The
 * buffer holds at least 2 * OBUF_FLUSH and is handed over past OBUF_FLUSH, so there is
 * room unless a record just before was huge (a long name); then it is handed over now. */
static struct lin_tfast fast_begin(lin_runtime *rt)
{
	if (LIN_UNLIKELY(rt->olen + LIN_TFAST_MAX > rt->ocap))
		out_flush_locked(rt);
	return (struct lin_tfast){ rt->obuf + rt->olen };
}

static void fast_end(lin_runtime *rt, const struct lin_tfast *f)
{
	rt->olen = (size_t)(f->p - rt->obuf);
}

static void encode_event(lin_runtime *rt, const struct lin_tstate *ts, struct lin_event *e)
{
	msgpack_packer *pk = &rt->pk;
	uint64_t ns = lin_clock_ticks_to_ns(&rt->clock, e->ticks);
	const struct lin_blob *b = (const struct lin_blob *)(uintptr_t)e->b;
	switch (e->type) {
	case LIN_REC_REQUEST_BEGIN:
		if (b) {
			lin_tf_request_begin(pk, ns, ts->tid, e->a, b->user_id,
					     intern_owned(rt, b->name), b->parent);
			if (b->remote)
				encode_link(pk, ns, ts->tid, e->a, b->remote);
		} else
			lin_tf_request_begin(pk, ns, ts->tid, e->a, LIN_NIL, 0, LIN_NIL);
		break;
	case LIN_REC_REQUEST_END: lin_tf_request_end(pk, ns, ts->tid, e->a); break;
	case LIN_REC_EPOCH_DECLARE:
		lin_tf_epoch_declare(pk, ns, ts->tid, e->a, e->version, b->req, b->n, b->parent,
				     intern_owned(rt, b->name));
		break;
	case LIN_REC_EPOCH_REISSUE:
		lin_tf_epoch_reissue(pk, ns, ts->tid, e->a, e->version, (uint32_t)e->b);
		break;
	case LIN_REC_EPOCH_RETIRE: lin_tf_epoch_retire(pk, ns, ts->tid, e->a, e->version); break;
	case LIN_REC_TOKEN_CAPTURE: {
		struct lin_tfast f = fast_begin(rt);
		lin_tfast_token_capture(&f, e->ticks ? ns : LIN_NIL, ts->tid, e->kind, e->a,
					e->version, e->b);
		fast_end(rt, &f);
		break;
	}
	case LIN_REC_TOKEN_ADOPT: {
		struct lin_tfast f = fast_begin(rt);
		/* kind: the target kind, and enum lin_late shifted by 4 */
		lin_tfast_token_adopt(&f, ns, ts->tid, e->kind & 0x0fu, e->a, e->version,
				      e->b == LIN_NIL ? LIN_NIL : e->b >> 32,
				      e->b == LIN_NIL ? LIN_NIL : (e->b & 0xffffffffu), e->depth,
				      e->kind >> 4);
		fast_end(rt, &f);
		break;
	}
	case LIN_REC_SCOPE_CLOSE: {
		struct lin_tfast f = fast_begin(rt);
		lin_tfast_scope_close(&f, e->ticks ? ns : LIN_NIL, ts->tid, e->kind, e->a, e->depth);
		fast_end(rt, &f);
		break;
	}
	case LIN_REC_MISUSE:
		lin_tf_misuse(pk, ns, ts->tid,
			      e->depth < LIN_MISUSE_COUNT ? lin_misuse_names[e->depth] : "unknown",
			      e->kind, e->a, e->version ? e->version : LIN_NIL, e->b);
		break;
	case LIN_REC_LAUNCH: {
		/* The name first: a new one writes its string record through the packer. */
		uint64_t sid = lin_rt_intern_locked(rt, (const char *)(uintptr_t)e->b);
		struct lin_tfast f = fast_begin(rt);
		/* The pushed id is the epoch with the late bits (lin_launch_begin). */
		uint32_t late = (uint32_t)(e->kind >> LIN_EV_LATE_SHIFT) & 3u;
		uint64_t ext = !(e->kind & LIN_EV_LAUNCH_PUSHED) ? LIN_NIL
			       : late == LIN_LATE_ENDED          ? e->a | LIN_EXT_LATE_ENDED
			       : late == LIN_LATE_REISSUED       ? e->a | LIN_EXT_LATE_REISSUED
								 : e->a;
		lin_tfast_launch(&f, ns, ts->tid, e->a, e->a == LIN_NIL ? LIN_NIL : e->version, ext,
				 sid, 0, LIN_NIL, e->depth ? e->depth : LIN_NIL, late);
		fast_end(rt, &f);
		break;
	}
	case LIN_REC_LAUNCH_END: {
		struct lin_tfast f = fast_begin(rt);
		lin_tfast_launch_end(&f, e->ticks ? ns : LIN_NIL, ts->tid, e->depth);
		fast_end(rt, &f);
		break;
	}
	default: break;
	}
	lin_event_drop_owned(e);
	maybe_flush_locked(rt);
}

/* Drain one thread's buffer. Returns true when the state may be freed. */
static bool drain_thread(lin_runtime *rt, struct lin_tstate *ts)
{
	bool exited = atomic_load_explicit(&ts->exited, memory_order_acquire);
	uint64_t h = atomic_load_explicit(&ts->pub_head, memory_order_acquire);
	uint64_t t = atomic_load_explicit(&ts->tail, memory_order_relaxed);
	if (h - t > atomic_load_explicit(&rt->backlog, memory_order_relaxed))
		atomic_store_explicit(&rt->backlog, h - t, memory_order_relaxed);
	for (; t != h; t++) {
		encode_event(rt, ts, &ts->ev[t & ts->mask]);
		/* Release slots as we go so a busy producer drops as little as possible. */
		if ((t & 255) == 255)
			atomic_store_explicit(&ts->tail, t + 1, memory_order_release);
	}
	atomic_store_explicit(&ts->tail, h, memory_order_release);
	uint64_t d = atomic_load_explicit(&ts->dropped, memory_order_relaxed);
	if (d != ts->dropped_reported) {
		lin_tf_dropped(&rt->pk, LIN_DROP_HOST_EVENTS, d - ts->dropped_reported, ts->tid,
			       "thread_buffer_full");
		ts->dropped_reported = d;
	}
	return exited;
}

/* Events are timed before they are published: the periodic drain tells the taps (an
 * exporter's stream) only of events older than this, so that one published late (a thread
 * preempted between the two) still reaches them in time order. lin_runtime_flush/free hand
 * over everything: the caller's own events precede the call. */
#define TAP_MARGIN_NS (10u * 1000000u)

int lin_writer_drain(lin_runtime *rt, bool exact)
{
	uint64_t drain_start = lin_clock_ticks_to_ns(&rt->clock, lin_clock_ticks(&rt->clock));
	pthread_mutex_lock(&rt->out_lock);
	atomic_store_explicit(&rt->backlog, 0, memory_order_relaxed);
	if (rt->have_output) {
		/* The pointer cache trusts launch names to live until a flush completes. */
		strtab_reset_ptrcache(rt->strtab);
	}
	pthread_mutex_lock(&rt->threads_lock);
	struct lin_tstate **pp = &rt->threads;
	while (*pp) {
		struct lin_tstate *ts = *pp;
		bool exited;
		if (rt->have_output) {
			exited = drain_thread(rt, ts);
		} else {
			/* No trace: discard events, still free exited threads. */
			exited = atomic_load_explicit(&ts->exited, memory_order_acquire);
			uint64_t h = atomic_load_explicit(&ts->pub_head, memory_order_acquire);
			for (uint64_t t = atomic_load(&ts->tail); t != h; t++)
				lin_event_drop_owned(&ts->ev[t & ts->mask]);
			atomic_store_explicit(&ts->tail, h, memory_order_release);
		}
		if (exited) {
			*pp = ts->next;
			atomic_fetch_add(&rt->events_retired, atomic_load(&ts->pub_head));
			atomic_fetch_add(&rt->dropped_retired, atomic_load(&ts->dropped));
			lin_tstate_free(ts);
		} else {
			pp = &ts->next;
		}
	}
	pthread_mutex_unlock(&rt->threads_lock);
	int err = 0;
	if (rt->have_output) {
		for (uint32_t s = 1; s < 4; s++) {
			uint64_t d = atomic_load(&rt->ext_dropped[s]);
			if (d != rt->ext_dropped_reported[s]) {
				lin_tf_dropped(&rt->pk, s, d - rt->ext_dropped_reported[s], LIN_NIL,
					       s == LIN_DROP_CUPTI_RECORDS ? "cupti_dropped"
									   : "cupti_buffer");
				rt->ext_dropped_reported[s] = d;
			}
		}
		err = out_flush_locked(rt);
	}
	pthread_mutex_unlock(&rt->out_lock);
	/* decoded and written outside the output lock */
	lin_taps_tick(&rt->taps, exact ? drain_start : drain_start - TAP_MARGIN_NS, exact);
	return err;
}

void lin_rt_count_dropped(lin_runtime *rt, uint32_t source, uint64_t n)
{
	if (source > 0 && source < 4)
		atomic_fetch_add(&rt->ext_dropped[source], n);
}

msgpack_packer *lin_rt_out_lock(lin_runtime *rt)
{
	if (!rt->have_output)
		return NULL;
	pthread_mutex_lock(&rt->out_lock);
	return &rt->pk;
}

void lin_rt_out_unlock(lin_runtime *rt)
{
	maybe_flush_locked(rt);
	pthread_mutex_unlock(&rt->out_lock);
}

static void get_host(char *buf, size_t len)
{
	if (gethostname(buf, len) != 0)
		snprintf(buf, len, "unknown");
	buf[len - 1] = 0;
}

int lin_writer_open(lin_runtime *rt, const struct lin_runtime_opts *o)
{
	rt->fd = -1;
	if (pthread_mutex_init(&rt->out_lock, NULL))
		return -ENOMEM;
	rt->out_lock_init = true;
	if (!o->trace_path && !o->trace_write && !o->ntaps)
		return 0;
	rt->strtab = calloc(1, sizeof(*rt->strtab));
	rt->ocap = OBUF_FLUSH * 2;
	rt->obuf = malloc(rt->ocap);
	if (!rt->strtab || !rt->obuf)
		return -ENOMEM;
	int terr = lin_taps_open(&rt->taps, o, rt, !(rt->flags & LIN_RT_NO_WRITER_THREAD), &rt->logger);
	if (terr)
		return terr;
	rt->have_sink = o->trace_path || o->trace_write;
	if (o->trace_write) {
		rt->write_cb = o->trace_write;
		rt->write_user = o->trace_user;
	} else if (o->trace_path) {
		rt->fd = open(o->trace_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (rt->fd < 0) {
			int err = -errno;
			lin_logger_log(&rt->logger, LIN_LOG_ERROR, "cannot open trace '%s': %s",
				       o->trace_path, lin_strerror(err));
			return err;
		}
	}
	rt->have_output = true;
	msgpack_packer_init(&rt->pk, rt, out_write_cb);
	char host[256];
	get_host(host, sizeof(host));
	static const char *backend_names[] = { "none", "cupti", "custom" };
	/* The Unix time of start_host_ns, for exporters: CLOCK_REALTIME now, less the
	 * monotonic time since then. */
	struct timespec real;
	clock_gettime(CLOCK_REALTIME, &real);
	uint64_t since = lin_clock_mono_ns() - rt->clock.ns0;
	struct lin_tf_header h = {
		.format = LIN_TRACE_FORMAT_NAME,
		.writer = "liblineage " LIN_STRINGIFY_VERSION,
		.host = host,
		.pid = (uint64_t)getpid(),
		.start_host_ns = rt->clock.ns0,
		.host_clock_source = rt->clock.use_tsc ? "tsc" : "clock_gettime",
		.tsc_hz = rt->clock.tsc_hz,
		.ext_kind = rt->ext_kind,
		.backend = backend_names[rt->backend_kind],
		.cupti = rt->cupti_status,
		.device_clock = rt->device_clock_host ? "host" : "cupti",
		.start_unix_ns = (uint64_t)real.tv_sec * 1000000000u + (uint64_t)real.tv_nsec - since,
	};
	pthread_mutex_lock(&rt->out_lock);
	lin_tf_header(&rt->pk, &h);
	int err = out_flush_locked(rt);
	pthread_mutex_unlock(&rt->out_lock);
	return err == -LIN_ETRACE ? -EIO : err;
}

/*
 * A producer's buffer is half full before the writer came round: wake the writer now. The
 * writer's own polling (writer_main) keeps up with steady high rates; this is the backstop
 * for bursts, called from lin_event_commit once per quarter of the buffer, so its cost (a
 * futex wake) is spread over thousands of events. At most one wake is pending at a time;
 * the writer clears the flag before it drains. Without a writer thread
 * (LIN_RT_NO_WRITER_THREAD, a fork child) nothing is done: lin_runtime_flush drains.
 */
static void *writer_main(void *arg)
{
	lin_runtime *rt = arg;
	pthread_mutex_lock(&rt->wlock);
	while (!rt->stop) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		/* Busy: a thread had an eighth of its buffer waiting at the last drain. Then come
		 * round every millisecond, not every period, so a steady high rate is drained
		 * before the producers' buffers fill, without their having to wake the writer. */
		uint64_t backlog = atomic_load_explicit(&rt->backlog, memory_order_relaxed);
		uint32_t ms = backlog >= rt->ring_events / 8 && rt->flush_ms > 1 ? 1 : rt->flush_ms;
		uint64_t ns = (uint64_t)ts.tv_nsec + (uint64_t)ms * 1000000u;
		ts.tv_sec += (time_t)(ns / 1000000000u);
		ts.tv_nsec = (long)(ns % 1000000000u);
		if (!atomic_load_explicit(&rt->kicked, memory_order_acquire))
			pthread_cond_timedwait(&rt->wcond, &rt->wlock, &ts);
		atomic_store_explicit(&rt->kicked, 0, memory_order_release);
		if (rt->stop)
			break;
		pthread_mutex_unlock(&rt->wlock);
		lin_writer_drain(rt, false);
		pthread_mutex_lock(&rt->wlock);
	}
	pthread_mutex_unlock(&rt->wlock);
	return NULL;
}

int lin_writer_start(lin_runtime *rt)
{
	if (pthread_mutex_init(&rt->wlock, NULL))
		return -ENOMEM;
	if (pthread_cond_init(&rt->wcond, NULL)) {
		pthread_mutex_destroy(&rt->wlock);
		return -ENOMEM;
	}
	rt->wlock_init = true;
	if (rt->flags & LIN_RT_NO_WRITER_THREAD)
		return 0;
	int err = lin_thread_start(&rt->writer, writer_main, rt);
	if (err)
		return err;
	rt->writer_running = true;
	return 0;
}

void lin_writer_stop(lin_runtime *rt)
{
	if (!rt->writer_running)
		return;
	pthread_mutex_lock(&rt->wlock);
	rt->stop = true;
	pthread_cond_signal(&rt->wcond);
	pthread_mutex_unlock(&rt->wlock);
	pthread_join(rt->writer, NULL);
	rt->writer_running = false;
}

/* Mark the trace closed: the validator treats a trace without this record as cut short. */
static void write_trace_end(lin_runtime *rt)
{
	pthread_mutex_lock(&rt->out_lock);
	if (rt->have_output) {
		uint64_t dropped = atomic_load(&rt->dropped_retired);
		for (struct lin_tstate *ts = rt->threads; ts; ts = ts->next)
			dropped += atomic_load(&ts->dropped);
		lin_tf_trace_end(&rt->pk,
				 lin_clock_ticks_to_ns(&rt->clock, lin_clock_ticks(&rt->clock)),
				 dropped);
		out_flush_locked(rt);
	}
	pthread_mutex_unlock(&rt->out_lock);
}

void lin_writer_close(lin_runtime *rt)
{
	if (rt->out_lock_init)
		write_trace_end(rt);
	lin_taps_close(&rt->taps);
	if (rt->fd >= 0)
		close(rt->fd);
	rt->fd = -1;
	if (rt->strtab) {
		free(rt->strtab->hash);
		free(rt->strtab->sid);
		free(rt->strtab);
		rt->strtab = NULL;
	}
	free(rt->obuf);
	rt->obuf = NULL;
}
