/* SPDX-License-Identifier: MIT */
/*
 * writer.c - the trace writer, an object of its own (struct lin_writer, writer.h) that the
 * runtime holds: drains the per-thread event buffers, encodes them as msgpack (msgpack-c's
 * packer into our own buffer) and writes them out with write(2) or the user's callback,
 * and hands the same bytes to its taps (taps.h).
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
#include "writer.h"
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

struct lin_writer {
	lin_runtime *rt;             /* its threads, clock, log and what the header says */
	const struct lin_clock *clk; /* &rt->clock */
	pthread_mutex_t out_lock;    /* output buffer, packer, string table */
	int fd;
	lin_trace_write_fn write_cb;
	void *write_user;
	bool have_output;
	bool have_sink; /* a trace file or callback (not only taps) */
	bool out_failed;
	struct lin_taps taps; /* attached to the writer (lineage/tap.h; taps.h) */
	char *obuf;
	size_t olen, ocap;
	msgpack_packer pk;
	struct lin_strtab *strtab;
	_Atomic uint64_t bytes_written;
	_Atomic uint64_t ext_dropped[4];
	uint64_t ext_dropped_reported[4];

	/* the writer thread */
	struct lin_doorbell bell;
	pthread_t thread;
	_Atomic uint64_t backlog; /* most events one thread had waiting at the last drain */
	bool bell_init;
	bool stop;
};

static int out_write_cb(void *data, const char *buf, size_t len)
{
	struct lin_writer *w = data;
	/* msgpack-c hands over each primitive on its own: 1, 2, 3, 5 or 9 bytes for the
	 * integers and headers of an event. Copy those with fixed-size copies (inlined)
	 * rather than a call to memcpy for a few bytes: the writer's cost per event. */
	if (LIN_LIKELY(w->olen + 16 <= w->ocap)) {
		char *d = w->obuf + w->olen;
		switch (len) {
		case 1:
			d[0] = buf[0];
			w->olen += 1;
			return 0;
		case 2:
			memcpy(d, buf, 2);
			w->olen += 2;
			return 0;
		case 3:
			memcpy(d, buf, 3);
			w->olen += 3;
			return 0;
		case 5:
			memcpy(d, buf, 5);
			w->olen += 5;
			return 0;
		case 9:
			memcpy(d, buf, 9);
			w->olen += 9;
			return 0;
		default: break;
		}
	}
	if (w->olen + len > w->ocap) {
		size_t cap = w->ocap * 2;
		while (cap < w->olen + len)
			cap *= 2;
		char *nb = realloc(w->obuf, cap);
		if (!nb)
			return -1;
		w->obuf = nb;
		w->ocap = cap;
	}
	memcpy(w->obuf + w->olen, buf, len);
	w->olen += len;
	return 0;
}

/* Hand the buffered bytes to the file or callback. Called with out_lock held. */
static int out_flush_locked(struct lin_writer *w)
{
	if (!w->olen)
		return 0;
	lin_taps_feed(&w->taps, w->obuf, w->olen);
	int err = 0;
	if (!w->out_failed && w->have_sink) {
		if (w->write_cb)
			err = w->write_cb(w->obuf, w->olen, w->write_user);
		else
			err = lin_write_all(w->fd, w->obuf, w->olen);
		if (err) {
			w->out_failed = true;
			lin_logger_log(&w->rt->logger, LIN_LOG_ERROR,
				       "trace output failed: %s; further output is discarded",
				       lin_strerror(err));
		} else {
			atomic_fetch_add_explicit(&w->bytes_written, w->olen, memory_order_relaxed);
		}
	}
	w->olen = 0;
	return w->out_failed ? -LIN_ETRACE : 0;
}

static void maybe_flush_locked(struct lin_writer *w)
{
	if (w->olen >= OBUF_FLUSH)
		out_flush_locked(w);
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
static uint64_t intern_locked(struct lin_writer *w, const char *s)
{
	if (!s || !w->strtab)
		return 0;
	struct lin_strtab *st = w->strtab;
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
		lin_tf_string(&w->pk, st->sid[j], s, len);
	}
	/* Only literal-like names are cached by address; see lin_launch_begin's contract. */
	st->pc_ptr[pc] = s;
	st->pc_sid[pc] = st->sid[j];
	return st->sid[j];
}

uint64_t lin_rt_intern_locked(lin_runtime *rt, const char *s) { return intern_locked(rt->w, s); }

static void strtab_reset_ptrcache(struct lin_strtab *st)
{
	memset(st->pc_ptr, 0, sizeof(st->pc_ptr));
}

static uint64_t intern_owned(struct lin_writer *w, const char *s)
{
	/* Owned names are freed after encoding: their address may be reused by another
	 * string, so they bypass the pointer cache. */
	if (!s)
		return 0;
	struct lin_strtab *st = w->strtab;
	size_t pc = ((uintptr_t)s >> 3) & (PCACHE_SIZE - 1);
	uint64_t sid = intern_locked(w, s);
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
static struct lin_tfast fast_begin(struct lin_writer *w)
{
	if (LIN_UNLIKELY(w->olen + LIN_TFAST_MAX > w->ocap))
		out_flush_locked(w);
	return (struct lin_tfast){ w->obuf + w->olen };
}

static void fast_end(struct lin_writer *w, const struct lin_tfast *f)
{
	w->olen = (size_t)(f->p - w->obuf);
}

static void encode_event(struct lin_writer *w, const struct lin_tstate *ts, struct lin_event *e)
{
	msgpack_packer *pk = &w->pk;
	uint64_t ns = lin_clock_ticks_to_ns(w->clk, e->ticks);
	const struct lin_blob *b = (const struct lin_blob *)(uintptr_t)e->b;
	switch (e->type) {
	case LIN_REC_REQUEST_BEGIN:
		if (b) {
			lin_tf_request_begin(pk, ns, ts->tid, e->a, b->user_id,
					     intern_owned(w, b->name), b->parent);
			if (b->remote)
				encode_link(pk, ns, ts->tid, e->a, b->remote);
		} else
			lin_tf_request_begin(pk, ns, ts->tid, e->a, LIN_NIL, 0, LIN_NIL);
		break;
	case LIN_REC_REQUEST_END: lin_tf_request_end(pk, ns, ts->tid, e->a); break;
	case LIN_REC_EPOCH_DECLARE:
		lin_tf_epoch_declare(pk, ns, ts->tid, e->a, e->version, b->req, b->n, b->parent,
				     intern_owned(w, b->name));
		if (b->shares)
			lin_tf_epoch_share(pk, e->a, e->version, b->shares, b->n);
		break;
	case LIN_REC_EPOCH_REISSUE:
		lin_tf_epoch_reissue(pk, ns, ts->tid, e->a, e->version, (uint32_t)e->b);
		break;
	case LIN_REC_EPOCH_RETIRE: lin_tf_epoch_retire(pk, ns, ts->tid, e->a, e->version); break;
	case LIN_REC_TOKEN_CAPTURE: {
		struct lin_tfast f = fast_begin(w);
		lin_tfast_token_capture(&f, e->ticks ? ns : LIN_NIL, ts->tid, e->kind, e->a,
					e->version, e->b);
		fast_end(w, &f);
		break;
	}
	case LIN_REC_TOKEN_ADOPT: {
		struct lin_tfast f = fast_begin(w);
		/* kind: the target kind, and enum lin_late shifted by 4 */
		lin_tfast_token_adopt(&f, ns, ts->tid, e->kind & 0x0fu, e->a, e->version,
				      e->b == LIN_NIL ? LIN_NIL : e->b >> 32,
				      e->b == LIN_NIL ? LIN_NIL : (e->b & 0xffffffffu), e->depth,
				      e->kind >> 4);
		fast_end(w, &f);
		break;
	}
	case LIN_REC_SCOPE_CLOSE: {
		struct lin_tfast f = fast_begin(w);
		lin_tfast_scope_close(&f, e->ticks ? ns : LIN_NIL, ts->tid, e->kind, e->a, e->depth);
		fast_end(w, &f);
		break;
	}
	case LIN_REC_MISUSE:
		lin_tf_misuse(pk, ns, ts->tid,
			      e->depth < LIN_MISUSE_COUNT ? lin_misuse_names[e->depth] : "unknown",
			      e->kind, e->a, e->version ? e->version : LIN_NIL, e->b);
		break;
	case LIN_REC_LAUNCH: {
		/* The name first: a new one writes its string record through the packer. */
		uint64_t sid = intern_locked(w, (const char *)(uintptr_t)e->b);
		struct lin_tfast f = fast_begin(w);
		/* The pushed id is the epoch with the late bits (lin_launch_begin). */
		uint32_t late = (uint32_t)(e->kind >> LIN_EV_LATE_SHIFT) & 3u;
		uint64_t ext = !(e->kind & LIN_EV_LAUNCH_PUSHED) ? LIN_NIL
			       : late == LIN_LATE_ENDED          ? e->a | LIN_EXT_LATE_ENDED
			       : late == LIN_LATE_REISSUED       ? e->a | LIN_EXT_LATE_REISSUED
								 : e->a;
		lin_tfast_launch(&f, ns, ts->tid, e->a, e->a == LIN_NIL ? LIN_NIL : e->version, ext,
				 sid, 0, LIN_NIL, e->depth ? e->depth : LIN_NIL, late);
		fast_end(w, &f);
		break;
	}
	case LIN_REC_LAUNCH_END: {
		struct lin_tfast f = fast_begin(w);
		lin_tfast_launch_end(&f, e->ticks ? ns : LIN_NIL, ts->tid, e->depth);
		fast_end(w, &f);
		break;
	}
	default: break;
	}
	lin_event_drop_owned(e);
	maybe_flush_locked(w);
}

/* Drain one thread's buffer. Returns true when the state may be freed. */
static bool drain_thread(struct lin_writer *w, struct lin_tstate *ts)
{
	bool exited = atomic_load_explicit(&ts->exited, memory_order_acquire);
	uint64_t h = atomic_load_explicit(&ts->pub_head, memory_order_acquire);
	uint64_t t = atomic_load_explicit(&ts->tail, memory_order_relaxed);
	if (h - t > atomic_load_explicit(&w->backlog, memory_order_relaxed))
		atomic_store_explicit(&w->backlog, h - t, memory_order_relaxed);
	for (; t != h; t++) {
		encode_event(w, ts, &ts->ev[t & ts->mask]);
		/* Release slots as we go so a busy producer drops as little as possible. */
		if ((t & 255) == 255)
			atomic_store_explicit(&ts->tail, t + 1, memory_order_release);
	}
	atomic_store_explicit(&ts->tail, h, memory_order_release);
	uint64_t d = atomic_load_explicit(&ts->dropped, memory_order_relaxed);
	if (d != ts->dropped_reported) {
		lin_tf_dropped(&w->pk, LIN_DROP_HOST_EVENTS, d - ts->dropped_reported, ts->tid,
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

int lin_writer_drain(struct lin_writer *w, bool exact)
{
	uint64_t drain_start = lin_clock_ticks_to_ns(w->clk, lin_clock_ticks(w->clk));
	pthread_mutex_lock(&w->out_lock);
	atomic_store_explicit(&w->backlog, 0, memory_order_relaxed);
	if (w->have_output) {
		/* The pointer cache trusts launch names to live until a flush completes. */
		strtab_reset_ptrcache(w->strtab);
	}
	pthread_mutex_lock(&w->rt->threads_lock);
	struct lin_tstate **pp = &w->rt->threads;
	while (*pp) {
		struct lin_tstate *ts = *pp;
		bool exited;
		if (w->have_output) {
			exited = drain_thread(w, ts);
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
			atomic_fetch_add(&w->rt->events_retired, atomic_load(&ts->pub_head));
			atomic_fetch_add(&w->rt->dropped_retired, atomic_load(&ts->dropped));
			lin_tstate_free(ts);
		} else {
			pp = &ts->next;
		}
	}
	pthread_mutex_unlock(&w->rt->threads_lock);
	int err = 0;
	if (w->have_output) {
		for (uint32_t s = 1; s < 4; s++) {
			uint64_t d = atomic_load(&w->ext_dropped[s]);
			if (d != w->ext_dropped_reported[s]) {
				lin_tf_dropped(&w->pk, s, d - w->ext_dropped_reported[s], LIN_NIL,
					       s == LIN_DROP_CUPTI_RECORDS ? "cupti_dropped"
									   : "cupti_buffer");
				w->ext_dropped_reported[s] = d;
			}
		}
		err = out_flush_locked(w);
	}
	pthread_mutex_unlock(&w->out_lock);
	/* decoded and written outside the output lock */
	lin_taps_tick(&w->taps, exact ? drain_start : drain_start - TAP_MARGIN_NS, exact);
	return err;
}

void lin_rt_count_dropped(lin_runtime *rt, uint32_t source, uint64_t n)
{
	if (rt->w && source > 0 && source < 4)
		atomic_fetch_add(&rt->w->ext_dropped[source], n);
}

msgpack_packer *lin_rt_out_lock(lin_runtime *rt)
{
	struct lin_writer *w = rt->w;
	if (!w || !w->have_output)
		return NULL;
	pthread_mutex_lock(&w->out_lock);
	return &w->pk;
}

void lin_rt_out_unlock(lin_runtime *rt)
{
	maybe_flush_locked(rt->w);
	pthread_mutex_unlock(&rt->w->out_lock);
}

uint64_t lin_writer_bytes_written(const struct lin_writer *w)
{
	return atomic_load(&w->bytes_written);
}

struct lin_doorbell *lin_writer_bell(struct lin_writer *w) { return &w->bell; }

static void get_host(char *buf, size_t len)
{
	if (gethostname(buf, len) != 0)
		snprintf(buf, len, "unknown");
	buf[len - 1] = 0;
}

struct lin_writer *lin_writer_new(lin_runtime *rt)
{
	struct lin_writer *w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	if (pthread_mutex_init(&w->out_lock, NULL)) {
		free(w);
		return NULL;
	}
	w->rt = rt;
	w->clk = &rt->clock;
	w->fd = -1;
	return w;
}

/* The trace file or callback, when the options name one. */
static int open_sink(struct lin_writer *w, const struct lin_runtime_opts *o)
{
	w->have_sink = o->trace_path || o->trace_write;
	if (o->trace_write) {
		w->write_cb = o->trace_write;
		w->write_user = o->trace_user;
	} else if (o->trace_path) {
		w->fd = open(o->trace_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (w->fd < 0) {
			int err = -errno;
			lin_logger_log(&w->rt->logger, LIN_LOG_ERROR, "cannot open trace '%s': %s",
				       o->trace_path, lin_strerror(err));
			return err;
		}
	}
	return 0;
}

/* The trace's first record: what the runtime is and its clocks. */
static int write_header(struct lin_writer *w)
{
	const lin_runtime *rt = w->rt;
	char host[256];
	get_host(host, sizeof(host));
	static const char *backend_names[] = { "none", "cupti", "custom" };
	/* The Unix time of start_host_ns, for exporters: CLOCK_REALTIME now, less the
	 * monotonic time since then. */
	struct timespec real;
	clock_gettime(CLOCK_REALTIME, &real);
	uint64_t since = lin_clock_mono_ns() - w->clk->ns0;
	struct lin_tf_header h = {
		.format = LIN_TRACE_FORMAT_NAME,
		.writer = "liblineage " LIN_STRINGIFY_VERSION,
		.host = host,
		.pid = (uint64_t)getpid(),
		.start_host_ns = w->clk->ns0,
		.host_clock_source = w->clk->use_tsc ? "tsc" : "clock_gettime",
		.tsc_hz = w->clk->tsc_hz,
		.ext_kind = rt->ext_kind,
		.backend = backend_names[rt->backend_kind],
		.cupti = rt->cupti_status,
		.device_clock = rt->device_clock_host ? "host" : "cupti",
		.start_unix_ns = (uint64_t)real.tv_sec * 1000000000u + (uint64_t)real.tv_nsec - since,
	};
	pthread_mutex_lock(&w->out_lock);
	lin_tf_header(&w->pk, &h);
	int err = out_flush_locked(w);
	pthread_mutex_unlock(&w->out_lock);
	return err == -LIN_ETRACE ? -EIO : err;
}

int lin_writer_open(struct lin_writer *w, const struct lin_runtime_opts *o)
{
	if (!o->trace_path && !o->trace_write && !o->ntaps)
		return 0;
	w->strtab = calloc(1, sizeof(*w->strtab));
	w->ocap = OBUF_FLUSH * 2;
	w->obuf = malloc(w->ocap);
	if (!w->strtab || !w->obuf)
		return -ENOMEM;
	bool threaded = !(w->rt->flags & LIN_RT_NO_WRITER_THREAD);
	int err = lin_taps_open(&w->taps, o, w->rt, threaded, &w->rt->logger);
	if (!err)
		err = open_sink(w, o);
	if (err)
		return err;
	w->have_output = true;
	msgpack_packer_init(&w->pk, w, out_write_cb);
	return write_header(w);
}

/*
 * A producer's buffer is half full before the writer came round: it rings the doorbell
 * (lin_tstate_kick) to wake the writer now. The writer's own polling (writer_main) keeps
 * up with steady high rates; this is the backstop for bursts, called from lin_event_commit
 * once per quarter of the buffer, so its cost (a futex wake) is spread over thousands of
 * events. At most one wake is pending at a time; the writer clears the flag before it
 * drains. Without a writer thread (LIN_RT_NO_WRITER_THREAD, a fork child) nothing is
 * done: lin_runtime_flush drains.
 */
static void *writer_main(void *arg)
{
	struct lin_writer *w = arg;
	struct lin_doorbell *b = &w->bell;
	pthread_mutex_lock(&b->lock);
	while (!w->stop) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		/* Busy: a thread had an eighth of its buffer waiting at the last drain. Then come
		 * round every millisecond, not every period, so a steady high rate is drained
		 * before the producers' buffers fill, without their having to wake the writer. */
		uint64_t backlog = atomic_load_explicit(&w->backlog, memory_order_relaxed);
		uint32_t period = w->rt->flush_ms;
		uint32_t ms = backlog >= w->rt->ring_events / 8 && period > 1 ? 1 : period;
		uint64_t ns = (uint64_t)ts.tv_nsec + (uint64_t)ms * 1000000u;
		ts.tv_sec += (time_t)(ns / 1000000000u);
		ts.tv_nsec = (long)(ns % 1000000000u);
		if (!atomic_load_explicit(&b->rung, memory_order_acquire))
			pthread_cond_timedwait(&b->cond, &b->lock, &ts);
		atomic_store_explicit(&b->rung, 0, memory_order_release);
		if (w->stop)
			break;
		pthread_mutex_unlock(&b->lock);
		lin_writer_drain(w, false);
		pthread_mutex_lock(&b->lock);
	}
	pthread_mutex_unlock(&b->lock);
	return NULL;
}

int lin_writer_start(struct lin_writer *w)
{
	struct lin_doorbell *b = &w->bell;
	if (pthread_mutex_init(&b->lock, NULL))
		return -ENOMEM;
	if (pthread_cond_init(&b->cond, NULL)) {
		pthread_mutex_destroy(&b->lock);
		return -ENOMEM;
	}
	w->bell_init = true;
	if (w->rt->flags & LIN_RT_NO_WRITER_THREAD)
		return 0;
	int err = lin_thread_start(&w->thread, writer_main, w);
	if (err)
		return err;
	b->armed = true;
	return 0;
}

void lin_writer_stop(struct lin_writer *w)
{
	if (!w || !w->bell.armed)
		return;
	pthread_mutex_lock(&w->bell.lock);
	w->stop = true;
	pthread_cond_signal(&w->bell.cond);
	pthread_mutex_unlock(&w->bell.lock);
	pthread_join(w->thread, NULL);
	w->bell.armed = false;
}

/* Mark the trace closed: the validator treats a trace without this record as cut short. */
static void write_trace_end(struct lin_writer *w)
{
	pthread_mutex_lock(&w->out_lock);
	if (w->have_output) {
		uint64_t dropped = atomic_load(&w->rt->dropped_retired);
		for (struct lin_tstate *ts = w->rt->threads; ts; ts = ts->next)
			dropped += atomic_load(&ts->dropped);
		lin_tf_trace_end(&w->pk, lin_clock_ticks_to_ns(w->clk, lin_clock_ticks(w->clk)), dropped);
		out_flush_locked(w);
	}
	pthread_mutex_unlock(&w->out_lock);
}

void lin_writer_free(struct lin_writer *w)
{
	if (!w)
		return;
	write_trace_end(w);
	lin_taps_close(&w->taps);
	if (w->fd >= 0)
		close(w->fd);
	if (w->strtab) {
		free(w->strtab->hash);
		free(w->strtab->sid);
		free(w->strtab);
	}
	free(w->obuf);
	pthread_mutex_destroy(&w->out_lock);
	if (w->bell_init) {
		pthread_mutex_destroy(&w->bell.lock);
		pthread_cond_destroy(&w->bell.cond);
	}
	free(w);
}

/*
 * fork() (runtime.c's handlers): the output and doorbell locks first, then the runtime's
 * own, then the taps'; released in the reverse order. The child's copy is detached: no
 * output, no thread (it was not copied), and a fresh condition variable (the parent's
 * writer was waiting on it: the child's copy still counts it as a waiter and would block
 * pthread_cond_destroy).
 */
void lin_writer_fork_lock(struct lin_writer *w)
{
	pthread_mutex_lock(&w->bell.lock);
	pthread_mutex_lock(&w->out_lock);
}

void lin_writer_fork_taps_lock(struct lin_writer *w) { lin_taps_fork_prepare(&w->taps); }

void lin_writer_fork_taps_unlock(struct lin_writer *w, bool child)
{
	if (child)
		lin_taps_fork_child(&w->taps);
	else
		lin_taps_fork_parent(&w->taps);
}

void lin_writer_fork_detach(struct lin_writer *w)
{
	w->have_output = false;
	w->bell.armed = false;
	pthread_cond_init(&w->bell.cond, NULL);
}

void lin_writer_fork_unlock(struct lin_writer *w)
{
	pthread_mutex_unlock(&w->out_lock);
	pthread_mutex_unlock(&w->bell.lock);
}
