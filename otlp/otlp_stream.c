/* SPDX-License-Identifier: MIT */
/*
 * otlp_stream.c - OpenTelemetry spans from the runtime while it runs; see otlp_stream.h.
 *
 * The writer feeds the stream the bytes it writes to the trace, so the stream sees every
 * record a trace reader sees, GPU records from CUPTI included, at the same byte offsets.
 * The writer drains thread by thread, so host records are put back in host-time order (a
 * heap, processed up to the tick's watermark) before they make spans; GPU records are
 * joined at the tick after they arrive, or later when their epoch is not known yet. Spans
 * follow docs/fleet.md; ids are computed as lineage-validate --export-otlp computes them
 * from the trace file.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pthread.h>

#include "dispatch.h"
#include "ostate.h"
#include "reader.h"
#include "sys.h"
#include "vtab.h"

/* ---------------------------------------------------------------- decoding */

/* The record's str field (a record type has at most one), or NULL (*len 0). */
static const char *fstr(const struct lin_rec *r, size_t *len)
{
	*len = r->str ? r->str_len : 0;
	return r->str;
}

static void on_string(void *arg, const struct lin_rec *r)
{
	struct lin_ostream *s = arg;
	uint64_t sid = LIN_OPT(r, STRING, SID);
	size_t len;
	const char *t = fstr(r, &len);
	if (sid == LIN_NIL || !t || lin_vtab_find(&s->strs, sid, 0))
		return;
	char *c = malloc(len + 1);
	char **p = c ? lin_os_get(s, &s->strs, sid, 0) : NULL;
	if (!p) {
		free(c);
		lin_os_fail(s, -ENOMEM, "out of memory");
		return;
	}
	memcpy(c, t, len);
	c[len] = 0;
	*p = c;
}

static void on_ext(void *arg, const struct lin_rec *r)
{
	struct lin_ostream *s = arg;
	/* A late launch's pushed id carries a late bit (docs/trace-format.md, "Late work"). */
	uint64_t epoch = LIN_OPT(r, EXT_CORRELATION, EXTERNAL_ID);
	uint64_t corr = LIN_OPT(r, EXT_CORRELATION, CORRELATION);
	if (LIN_OPT(r, EXT_CORRELATION, EXT_KIND) != s->ext_kind || corr == LIN_NIL)
		return;
	if (epoch != LIN_NIL)
		epoch &= LIN_EXT_ID_MASK;
	bool fresh;
	struct scorr *c = lin_vtab_get(&s->corrs, corr, 0, &fresh);
	if (!c) {
		lin_os_fail(s, -ENOMEM, "out of memory");
		return;
	}
	c->seen = 0; /* set by the next tick */
	if (fresh)
		c->epoch = epoch;
	else if (c->epoch != epoch)
		c->epoch = LIN_NIL; /* several epochs: ambiguous, joined to none */
}

/* The trace of epoch @id — or of request @id: an external correlation may name a request
 * (a hand-written adapter), as the validator's join allows — live, or retired or ended
 * within the retention time. Requests and epochs share one id space. */
static const uint8_t *epoch_trace(const struct lin_ostream *s, uint64_t id)
{
	const struct sepoch *e = lin_vtab_find(&s->epochs, id, 0);
	if (e)
		return e->trace;
	const struct sreq *q = lin_vtab_find(&s->reqs, id, 0);
	if (q)
		return q->trace;
	const struct sdone *d = lin_vtab_find(&s->done, id, 0);
	return d ? d->trace : NULL;
}

/* Try to join @g now; @last: write it even unjoined. Return: true when written. */
static bool gpu_try(struct lin_ostream *s, const struct sgpu *g, bool last)
{
	const struct scorr *c = g->corr == LIN_NIL ? NULL : lin_vtab_find(&s->corrs, g->corr, 0);
	if (c && c->epoch == LIN_NIL) {
		lin_os_write_gpu(s, g, NULL, LIN_NIL, "ambiguous");
		return true;
	}
	const uint8_t *trace = c ? epoch_trace(s, c->epoch) : NULL;
	if (trace) {
		lin_os_write_gpu(s, g, trace, c->epoch, "observed");
		return true;
	}
	if (!last)
		return false;
	lin_os_write_gpu(s, g, NULL, LIN_NIL, "lost");
	return true;
}

/* A kernel, memcpy or memset: the fields they share (the GPU view), and in @g its own,
 * filled by the caller. */
static void on_gpu(struct lin_ostream *s, const struct lin_rec *r, struct sgpu g)
{
	g.offset = r->offset;
	g.corr = LIN_OPT(r, GPU, CORRELATION);
	g.start = LIN_OPT(r, GPU, START_DEV);
	g.end = LIN_OPT(r, GPU, END_DEV);
	g.device = (uint32_t)LIN_OPT(r, GPU, DEVICE);
	g.context = (uint32_t)LIN_OPT(r, GPU, CONTEXT);
	g.stream = (uint32_t)LIN_OPT(r, GPU, STREAM);
	g.kind = (uint8_t)r->type;
	g.arrived = 0; /* set by the next tick */
	/* joined at the next tick, once the host records before it are processed */
	struct sgpu *p = s->pending.n < LIN_OSTREAM_MAX_PENDING ? lin_vec_push(&s->pending) : NULL;
	if (p)
		*p = g;
	else
		gpu_try(s, &g, true);
}

static void on_kernel(void *arg, const struct lin_rec *r)
{
	on_gpu(arg, r,
	       (struct sgpu){ .graph = LIN_OPT(r, KERNEL, GRAPH_ID),
			      .node = LIN_OPT(r, KERNEL, GRAPH_NODE_ID),
			      .name_sid = LIN_OPT(r, KERNEL, NAME_SID),
			      .bytes = LIN_NIL });
}

static void on_memcpy(void *arg, const struct lin_rec *r)
{
	on_gpu(arg, r,
	       (struct sgpu){ .graph = LIN_OPT(r, MEMCPY, GRAPH_ID),
			      .node = LIN_OPT(r, MEMCPY, GRAPH_NODE_ID),
			      .name_sid = LIN_NIL,
			      .bytes = LIN_OPT(r, MEMCPY, BYTES) });
}

static void on_memset(void *arg, const struct lin_rec *r)
{
	on_gpu(arg, r,
	       (struct sgpu){ .graph = LIN_OPT(r, MEMSET, GRAPH_ID),
			      .node = LIN_OPT(r, MEMSET, GRAPH_NODE_ID),
			      .name_sid = LIN_NIL,
			      .bytes = LIN_OPT(r, MEMSET, BYTES) });
}

/* A host record into the heap. Untimed ones (lean timestamps, graph records) take the time
 * of their thread's previous record, so they stay after it. */
static void queue_host(struct lin_ostream *s, const struct lin_rec *r)
{
	struct srec q = { .type = (uint8_t)r->type,
			  .seq = s->seq++,
			  .nil = r->nil,
			  .nfields = r->nfields < LIN_OS_HOST_FIELDS ? r->nfields : LIN_OS_HOST_FIELDS };
	memcpy(q.f, r->f, q.nfields * sizeof(q.f[0]));
	uint64_t tid = LIN_OPT(r, HOST, TID), host_ns = LIN_OPT(r, HOST, HOST_NS);
	uint64_t *last = tid == LIN_NIL ? NULL : lin_os_get(s, &s->lastt, tid, 0);
	q.t = host_ns != LIN_NIL ? host_ns : last && *last ? *last : s->tmax;
	if (q.t == LIN_NIL)
		q.t = 0;
	if (last)
		*last = q.t;
	size_t clen;
	const char *c = fstr(r, &clen); /* misuse: its cause */
	if (c)
		memcpy(q.str, c, clen < sizeof(q.str) - 1 ? clen : sizeof(q.str) - 1);
	if (r->nreqs) { /* epoch_declare: its requests */
		q.reqs = malloc(r->nreqs * sizeof(uint64_t));
		if (!q.reqs) {
			lin_os_fail(s, -ENOMEM, "out of memory");
			return;
		}
		memcpy(q.reqs, r->reqs, r->nreqs * sizeof(uint64_t));
		q.nreq = r->nreqs;
	}
	lin_os_heap_push(s, &q);
}

/* A host record that makes spans: into the heap. */
static void on_timed(void *arg, const struct lin_rec *r)
{
	struct lin_ostream *s = arg;
	lin_os_seen(s, LIN_OPT(r, HOST, HOST_NS));
	queue_host(s, r);
}

/* Launch, token capture: their host time only. */
static void on_host(void *arg, const struct lin_rec *r)
{
	lin_os_seen(arg, LIN_OPT(r, HOST, HOST_NS));
}

/* trace_end counts every host event the runtime dropped; the dropped records of source 1
 * count them thread by thread. What the end counts beyond the records (a dropped record
 * that never made it out) is one more loss event, as the validator's dropped_records
 * finding at the trace_end (docs/validator.md, "Findings"). */
#define END_LOSS_WHY "trace_end beyond dropped records"
static void on_trace_end(void *arg, const struct lin_rec *r)
{
	struct lin_ostream *s = arg;
	lin_os_seen(s, LIN_OPT(r, TRACE_END, HOST_NS));
	uint64_t n = LIN_OPT(r, TRACE_END, EVENTS_DROPPED);
	if (n == LIN_NIL)
		return;
	s->end_dropped += n; /* each runtime of the process ends its own trace */
	uint64_t shown = s->host_dropped + s->end_shown;
	if (s->end_dropped > shown) {
		lin_os_add_event(s, EV_LOSS, s->tmax, END_LOSS_WHY, sizeof(END_LOSS_WHY) - 1, 1,
				 s->end_dropped - shown, LIN_NIL);
		s->end_shown += s->end_dropped - shown;
	}
}

/* Taken now: it precedes its replay epoch's retire. An epoch declared already takes it at
 * once; one not declared yet finds it in s->replays when it is (which forgets it after the
 * retention time, if it never is). */
static void on_graph_launch(void *arg, const struct lin_rec *r)
{
	struct lin_ostream *s = arg;
	lin_os_seen(s, LIN_OPT(r, GRAPH_LAUNCH, HOST_NS));
	uint64_t id = LIN_OPT(r, GRAPH_LAUNCH, REPLAY_EPOCH);
	struct sepoch *e = lin_vtab_find(&s->epochs, id, 0);
	if (e) { /* the first graph_launch naming it is its replay, as in the export */
		if (e->exec == LIN_NIL) {
			e->exec = LIN_OPT(r, GRAPH_LAUNCH, EXEC_ID);
			e->ordinal = LIN_OPT(r, GRAPH_LAUNCH, REPLAY_ORDINAL);
		}
		return;
	}
	if (lin_vtab_find(&s->replays, id, 0))
		return; /* likewise before its declaration */
	uint64_t *rp = lin_os_get(s, &s->replays, id, 0);
	if (rp) {
		rp[0] = LIN_OPT(r, GRAPH_LAUNCH, EXEC_ID);
		rp[1] = LIN_OPT(r, GRAPH_LAUNCH, REPLAY_ORDINAL);
		rp[2] = 0; /* kept for the retention time, set by the next tick */
	}
}

static void on_dropped(void *arg, const struct lin_rec *r)
{
	struct lin_ostream *s = arg;
	size_t wlen;
	const char *why = fstr(r, &wlen);
	uint64_t count = LIN_OPT(r, DROPPED, COUNT);
	if (count && count != LIN_NIL && LIN_OPT(r, DROPPED, SOURCE) == 1)
		s->host_dropped += count;
	if (count && count != LIN_NIL)
		lin_os_add_event(s, EV_LOSS, s->tmax, why ? why : "", wlen,
				 LIN_OPT(r, DROPPED, SOURCE), count, LIN_OPT(r, DROPPED, TID));
}

/* Every pair goes into the clock map, as in the export and the validator; a GPU span is
 * placed through the pairs read before it is written (docs/fleet.md, "Time"). A pair the
 * map cannot keep is lost: the others still map. */
static void on_clock(void *arg, const struct lin_rec *r)
{
	struct lin_ostream *s = arg;
	uint64_t host = LIN_OPT(r, CLOCK, HOST_NS), dev = LIN_OPT(r, CLOCK, DEVICE_NS);
	if (host != LIN_NIL && dev != LIN_NIL &&
	    lin_cm_add(&s->clk.map, host, dev, LIN_OPT(r, CLOCK, HOST_AFTER_NS))) {
		lin_cm_finish(&s->clk.map);
		if (s->clk.map.n > LIN_OSTREAM_MAX_CLOCKS)
			lin_cm_trim(&s->clk.map, LIN_OSTREAM_MAX_CLOCKS / 2);
	}
}

static const struct lin_rec_ops stream_ops = {
	.on = {
		[LIN_REC_REQUEST_BEGIN] = on_timed,
		[LIN_REC_REQUEST_END] = on_timed,
		[LIN_REC_REQUEST_LINK] = on_timed,
		[LIN_REC_EPOCH_DECLARE] = on_timed,
		[LIN_REC_EPOCH_REISSUE] = on_timed,
		[LIN_REC_EPOCH_RETIRE] = on_timed,
		[LIN_REC_TOKEN_ADOPT] = on_timed,
		[LIN_REC_SCOPE_CLOSE] = on_timed,
		[LIN_REC_MISUSE] = on_timed,
		[LIN_REC_STRING] = on_string,
		[LIN_REC_EXT_CORRELATION] = on_ext,
		[LIN_REC_KERNEL] = on_kernel,
		[LIN_REC_MEMCPY] = on_memcpy,
		[LIN_REC_MEMSET] = on_memset,
		[LIN_REC_GRAPH_LAUNCH] = on_graph_launch,
		[LIN_REC_DROPPED] = on_dropped,
		[LIN_REC_CLOCK] = on_clock,
		[LIN_REC_LAUNCH] = on_host,
		[LIN_REC_TOKEN_CAPTURE] = on_host,
		[LIN_REC_TRACE_END] = on_trace_end,
	},
};

/* The header: host, pid, backend, ext_kind. */
static void on_header(struct lin_ostream *s, const struct lin_header *h)
{
	snprintf(s->host, sizeof(s->host), "%s", h->host);
	snprintf(s->backend, sizeof(s->backend), "%s", h->backend);
	s->pid = h->pid;
	s->ext_kind = h->ext_kind;
	s->clk.dev_host = h->device_clock_host;
	if (h->start_unix_ns) { /* the anchor the export uses too: the same times */
		s->clk.unix_off = (int64_t)(h->start_unix_ns - h->start_host_ns);
	}
	s->key = lin_w3c_proc_key(s->host, s->pid);
	s->have_header = true;
}

/* The reader stopped on bytes it cannot decode: say where and why, once. */
static void fail_decode(struct lin_ostream *s)
{
	if (s->failed)
		return;
	s->failed = -EINVAL;
	lin_runtime_log(s->rt, LIN_LOG_ERROR,
			"otlp stream: undecodable trace bytes at byte %llu: %s; "
			"the stream stops (the trace goes on)",
			(unsigned long long)lin_reader_error_offset(s->rd), lin_reader_error(s->rd));
}

/* ---------------------------------------------------------------- public */

static void tick_locked(struct lin_ostream *s, uint64_t watermark);

/* The stream thread: one tick per kick, up to the latest watermark asked for. */
static void *stream_main(void *arg)
{
	struct lin_ostream *s = arg;
	pthread_mutex_lock(&s->in_mu);
	for (;;) {
		while (!s->stop && s->done_kicks == s->kicks)
			pthread_cond_wait(&s->work_cv, &s->in_mu);
		if (s->done_kicks == s->kicks)
			break; /* stopped, nothing left asked for */
		uint64_t k = s->kicks, wm = s->want_wm;
		pthread_mutex_unlock(&s->in_mu);
		tick_locked(s, wm);
		pthread_mutex_lock(&s->in_mu);
		s->done_kicks = k;
		pthread_cond_broadcast(&s->done_cv);
	}
	pthread_mutex_unlock(&s->in_mu);
	return NULL;
}

static int start_thread(struct lin_ostream *s)
{
	int err = lin_thread_start(&s->thr, stream_main, s);
	if (err)
		return err;
	s->threaded = s->running = true;
	return 0;
}

static void stop_thread(struct lin_ostream *s)
{
	if (!s->running)
		return;
	pthread_mutex_lock(&s->in_mu);
	s->stop = true;
	pthread_cond_signal(&s->work_cv);
	pthread_mutex_unlock(&s->in_mu);
	pthread_join(s->thr, NULL);
	s->running = false;
}

int lin_ostream_open(const struct lin_ostream_opts *o, struct lin_ostream **out)
{
	struct lin_ostream *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->rt = o->rt;
	s->fd = -1;
	s->write = o->write;
	s->user = o->user;
	lin_oj_clock_init(&s->clk);
	s->clk.unix_off = o->unix_offset_ns;
	s->clk.have_unix = true;
	s->ext_kind = 5;
	s->tmin = LIN_NIL;
	const char *svc = o->service ? o->service : getenv("OTEL_SERVICE_NAME");
	snprintf(s->service, sizeof(s->service), "%s", svc && *svc ? svc : "lineage");
	lin_vtab_init(&s->reqs, sizeof(struct sreq));
	lin_vtab_init(&s->epochs, sizeof(struct sepoch));
	lin_vtab_init(&s->adopts, sizeof(struct sadopt));
	lin_vtab_init(&s->strs, sizeof(char *));
	lin_vtab_init(&s->corrs, sizeof(struct scorr));
	lin_vtab_init(&s->replays, 3 * sizeof(uint64_t)); /* exec, ordinal, time */
	lin_vtab_init(&s->done, sizeof(struct sdone));
	lin_vtab_init(&s->lastt, sizeof(uint64_t));
	lin_vec_init(&s->pending, sizeof(struct sgpu));
	lin_vec_init(&s->events, sizeof(struct sevent));
	lin_vec_init(&s->heap, sizeof(struct srec));
	pthread_mutex_init(&s->in_mu, NULL);
	pthread_mutex_init(&s->tick_mu, NULL);
	pthread_cond_init(&s->work_cv, NULL);
	pthread_cond_init(&s->done_cv, NULL);
	lin_oj_init(&s->w, lin_os_sink, s, "liblineage", lin_os_resource, s);
	s->rd = lin_reader_open_stream();
	s->rec = malloc(sizeof(*s->rec));
	if (!s->rd || !s->rec) {
		s->failed = -ENOMEM;
		lin_ostream_close(s);
		return -ENOMEM;
	}
	if (!s->write) {
		s->fd = open(o->path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (s->fd < 0) {
			int err = -errno;
			lin_runtime_log(s->rt, LIN_LOG_ERROR, "cannot open OTLP stream '%s': %s",
					o->path, lin_strerror(err));
			s->failed = err;
			lin_ostream_close(s);
			return err;
		}
	}
	if (o->threaded) {
		int err = start_thread(s);
		if (err) {
			lin_ostream_close(s);
			return err;
		}
	}
	*out = s;
	return 0;
}

static int grow(uint8_t **p, size_t *cap, size_t need)
{
	if (need <= *cap)
		return 0;
	size_t c = *cap ? *cap : 65536;
	while (c < need)
		c *= 2;
	uint8_t *np = realloc(*p, c);
	if (!np)
		return -ENOMEM;
	*p = np;
	*cap = c;
	return 0;
}

void lin_ostream_feed(struct lin_ostream *s, const void *buf, size_t len)
{
	if (s->failed || !len)
		return;
	pthread_mutex_lock(&s->in_mu);
	size_t waiting = s->ilen - s->ioff;
	if (!s->in_pos && !s->ilen && !s->hdr && (s->hdr = malloc(len))) {
		/* The writer's first piece is the header: kept, so that a skip of the backlog
		 * before the stream thread decoded it does not stop the stream. */
		memcpy(s->hdr, buf, len);
		s->hlen = len;
	}
	if (s->threaded && waiting + len > LIN_OSTREAM_MAX_BACKLOG) {
		/* The stream thread is behind: what waits and this piece are skipped, and
		 * decoding restarts at the next piece (the writer hands out whole records), so
		 * the trace never waits for the stream. */
		if (!s->dropped_bytes)
			lin_runtime_log(s->rt, LIN_LOG_WARN,
					"otlp stream: more than %u MiB waiting; "
					"trace bytes are skipped until it catches up",
					LIN_OSTREAM_MAX_BACKLOG >> 20);
		s->dropped_bytes += waiting + len;
		s->in_pos += waiting + len;
		s->ilen = s->ioff = 0;
		s->resync = true;
	} else if (grow(&s->in, &s->icap, s->ilen + len)) {
		lin_os_fail(s, -ENOMEM, "out of memory");
	} else {
		memcpy(s->in + s->ilen, buf, len);
		s->ilen += len;
	}
	pthread_mutex_unlock(&s->in_mu);
}

/* The skip took the header before it was decoded: decode it from the copy of the first
 * piece (the rest of that piece was skipped with the backlog). */
static void header_from_copy(struct lin_ostream *s)
{
	struct lin_header h;
	if (!s->hdr) {
		lin_os_fail(s, -ENOMEM, "the trace header was skipped and not kept");
		return;
	}
	lin_reader_stream_span(s->rd, s->hdr, s->hlen, 0);
	if (lin_reader_header(s->rd, LIN_TRACE_FORMAT_NAME, &h) == 0)
		on_header(s, &h);
	else
		fail_decode(s);
}

/* Decode up to DECODE_SLICE more of the bytes fed (a record cut at the end waits for the
 * rest). Return: true when more bytes wait. Slices keep what one tick holds in memory
 * (decoded records wait in the heap only until the watermark) small. */
#define DECODE_SLICE (1u << 20)

static bool decode(struct lin_ostream *s)
{
	pthread_mutex_lock(&s->in_mu);
	bool header_skipped = false;
	if (s->resync) { /* what was cut at the skip will never be completed */
		s->plen = 0;
		s->base = s->in_pos;
		s->resync = false;
		header_skipped = !s->have_header;
	}
	size_t n = s->ilen - s->ioff < DECODE_SLICE ? s->ilen - s->ioff : DECODE_SLICE;
	int err = grow(&s->pend, &s->pcap, s->plen + n);
	if (!err) {
		memcpy(s->pend + s->plen, s->in + s->ioff, n);
		s->plen += n;
		s->ioff += n;
		s->in_pos += n;
		if (s->ioff == s->ilen) {
			s->ioff = s->ilen = 0;
		} else if (s->ioff > s->ilen / 2) {
			memmove(s->in, s->in + s->ioff, s->ilen - s->ioff);
			s->ilen -= s->ioff;
			s->ioff = 0;
		}
	}
	bool more = s->ilen > s->ioff;
	pthread_mutex_unlock(&s->in_mu);
	if (err) {
		lin_os_fail(s, err, "out of memory");
		return false;
	}
	if (header_skipped)
		header_from_copy(s);
	lin_reader_stream_span(s->rd, s->pend, s->plen, s->base);
	while (!s->failed) {
		if (!s->have_header) {
			struct lin_header h;
			int rc = lin_reader_header(s->rd, LIN_TRACE_FORMAT_NAME, &h);
			if (rc == 1)
				break;
			if (rc)
				fail_decode(s);
			else
				on_header(s, &h);
			continue;
		}
		enum lin_read_status st = lin_reader_next(s->rd, s->rec);
		if (st == LIN_READ_MORE)
			break;
		if (st != LIN_READ_RECORD)
			fail_decode(s);
		else
			lin_rec_dispatch(&stream_ops, s, s->rec);
	}
	size_t used = lin_reader_consumed(s->rd);
	memmove(s->pend, s->pend + used, s->plen - used);
	s->plen -= used;
	s->base += used;
	return more;
}

struct ekey {
	uint64_t when, k0, k1;
};

static int ekey_cmp(const void *a, const void *b)
{
	const struct ekey *x = a, *y = b;
	return x->when < y->when ? -1 : x->when > y->when;
}

/*
 * The entries of @t to let go: those whose time (the uint64 at byte @at of the payload) is
 * older than the retention time (@retain; all of them with @all), and, when more than @cap
 * remain, the older ones down to @cap / 2. Returned sorted oldest first in *@out (malloc'd;
 * the caller frees), *@n of them. Entries new since the last tick (time 0) start now.
 */
static void pick_old(struct lin_ostream *s, struct lin_vtab *t, size_t at, bool retain, bool all,
		     size_t cap, struct ekey **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	if (!t->n || (!retain && !all && t->n <= cap))
		return;
	struct ekey *keys = malloc(t->n * sizeof(*keys));
	if (!keys)
		return; /* tried again at the next tick */
	size_t it = 0, m = 0;
	struct lin_vkey k;
	for (uint8_t *p; (p = lin_vtab_next(t, &it, &k));) {
		uint64_t when;
		memcpy(&when, p + at, sizeof(when));
		if (!when) {
			memcpy(p + at, &s->now, sizeof(s->now));
			when = s->now;
		}
		keys[m++] = (struct ekey){ when, k.k0, k.k1 };
	}
	qsort(keys, m, sizeof(*keys), ekey_cmp);
	size_t old = 0;
	while (old < m && (all || (retain && s->now > keys[old].when + LIN_OSTREAM_RETAIN_NS)))
		old++;
	if (m - old > cap)
		old = m - cap / 2;
	*out = keys;
	*n = old;
}

static void expire_tab(struct lin_ostream *s, struct lin_vtab *t, size_t at, bool all)
{
	struct ekey *keys;
	size_t n;
	pick_old(s, t, at, true, all, LIN_OSTREAM_MAX_RETAIN, &keys, &n);
	for (size_t i = 0; i < n; i++)
		lin_vtab_del(t, lin_vtab_find(t, keys[i].k0, keys[i].k1));
	free(keys);
}

/* Join the GPU records that wait; write those waiting longer than the retention time (or
 * all, at the close) unjoined; forget old correlations and retired epochs. */
static void expire(struct lin_ostream *s, bool all)
{
	size_t kept = 0;
	for (size_t i = 0; i < s->pending.n; i++) {
		struct sgpu *g = lin_vec_at(&s->pending, i);
		if (!g->arrived)
			g->arrived = s->now;
		bool old = all || s->now > g->arrived + LIN_OSTREAM_RETAIN_NS;
		if (!gpu_try(s, g, old))
			*(struct sgpu *)lin_vec_at(&s->pending, kept++) = *g;
	}
	s->pending.n = kept;
	expire_tab(s, &s->corrs, offsetof(struct scorr, seen), all);
	expire_tab(s, &s->done, offsetof(struct sdone, t), all);
	/* A replay whose epoch was never declared; at the close the open epochs take theirs
	 * first (lin_os_write_open), and the table is freed after. */
	if (!all)
		expire_tab(s, &s->replays, 2 * sizeof(uint64_t), false);
}

enum { OPEN_REQ, OPEN_EPOCH, OPEN_ADOPT };

/* More than LIN_OSTREAM_MAX_OPEN open spans of one kind (ends lost to dropped events, or
 * work that never ends): the older half is written as it is, marked open, and forgotten. */
static void evict_open(struct lin_ostream *s, struct lin_vtab *t, int what)
{
	struct ekey *keys;
	size_t n;
	/* begin is the first member of sreq, sepoch and sadopt */
	pick_old(s, t, 0, false, false, LIN_OSTREAM_MAX_OPEN, &keys, &n);
	for (size_t i = 0; i < n; i++) {
		void *p = lin_vtab_find(t, keys[i].k0, keys[i].k1);
		if (what == OPEN_REQ) {
			lin_os_write_request(s, keys[i].k0, p, s->tmax, true);
		} else if (what == OPEN_EPOCH) {
			struct sepoch *e = p;
			lin_os_write_epoch(s, keys[i].k0, e, s->tmax, true);
			free(e->reqs);
		} else {
			const struct sadopt *a = p;
			lin_os_write_adopt(s, keys[i].k0, keys[i].k1, a, a->begin, false);
		}
		lin_vtab_del(t, p);
		s->st.evicted++;
	}
	free(keys);
}

static void tick_locked(struct lin_ostream *s, uint64_t watermark)
{
	pthread_mutex_lock(&s->tick_mu);
	if (!s->failed) {
		if (watermark > s->now)
			s->now = watermark;
		for (bool more = true; more && !s->failed;) {
			more = decode(s);
			lin_os_drain_heap(s, watermark);
		}
		expire(s, false);
		evict_open(s, &s->reqs, OPEN_REQ);
		evict_open(s, &s->epochs, OPEN_EPOCH);
		evict_open(s, &s->adopts, OPEN_ADOPT);
		lin_os_doc_flush(s);
	}
	pthread_mutex_unlock(&s->tick_mu);
}

void lin_ostream_tick(struct lin_ostream *s, uint64_t watermark, bool wait)
{
	if (!s->threaded) {
		tick_locked(s, watermark);
		return;
	}
	pthread_mutex_lock(&s->in_mu);
	if (watermark > s->want_wm)
		s->want_wm = watermark;
	uint64_t k = ++s->kicks;
	pthread_cond_signal(&s->work_cv);
	while (wait && s->done_kicks < k)
		pthread_cond_wait(&s->done_cv, &s->in_mu);
	pthread_mutex_unlock(&s->in_mu);
}

void lin_ostream_fork_lock(struct lin_ostream *s)
{
	pthread_mutex_lock(&s->tick_mu);
	pthread_mutex_lock(&s->in_mu);
}

void lin_ostream_fork_unlock(struct lin_ostream *s)
{
	pthread_mutex_unlock(&s->in_mu);
	pthread_mutex_unlock(&s->tick_mu);
}

void lin_ostream_discard(struct lin_ostream *s)
{
	s->failed = -ECHILD; /* lin_ostream_close writes nothing */
	s->rt = NULL;
	s->running = false; /* the thread is not in the child */
	/* its condition variables may count the parent's waiters: start them afresh */
	pthread_cond_init(&s->work_cv, NULL);
	pthread_cond_init(&s->done_cv, NULL);
	lin_ostream_close(s);
}

void lin_ostream_close(struct lin_ostream *s)
{
	if (!s)
		return;
	if (s->failed == -ECHILD)
		goto free_all;
	stop_thread(s); /* it has done every tick asked for */
	lin_runtime_log(s->rt, LIN_LOG_DEBUG,
			"otlp stream: at close: open requests=%zu epochs=%zu scopes=%zu; retired "
			"epochs=%zu correlations=%zu replays=%zu waiting gpu=%zu heap=%zu; buffers "
			"in=%zu pend=%zu heap=%zu json=%zu tables=%zu; evicted=%llu",
			s->reqs.n, s->epochs.n, s->adopts.n, s->done.n, s->corrs.n, s->replays.n,
			s->pending.n, s->heap.n, s->icap, s->pcap, s->heap.cap * s->heap.esz, s->w.cap,
			lin_vtab_bytes(&s->reqs) + lin_vtab_bytes(&s->epochs) +
				lin_vtab_bytes(&s->adopts) + lin_vtab_bytes(&s->done) +
				lin_vtab_bytes(&s->corrs) + lin_vtab_bytes(&s->replays) +
				lin_vtab_bytes(&s->strs) + lin_vtab_bytes(&s->lastt),
			(unsigned long long)s->st.evicted);
	while (!s->failed && decode(s))
		lin_os_drain_heap(s, UINT64_MAX);
	if (!s->failed && s->have_header) {
		lin_os_drain_heap(s, UINT64_MAX);
		expire(s, true);
		lin_os_write_open(s);
		lin_os_write_process(s);
		lin_os_doc_flush(s);
	}
free_all:
	lin_oj_free(&s->w);
	lin_oj_clock_free(&s->clk);
	size_t it = 0;
	struct lin_vkey k;
	for (struct sepoch *e; (e = lin_vtab_next(&s->epochs, &it, &k));)
		free(e->reqs);
	it = 0;
	for (char **p; (p = lin_vtab_next(&s->strs, &it, &k));)
		free(*p);
	struct lin_vtab *tabs[] = { &s->reqs,  &s->epochs,  &s->adopts, &s->strs,
				    &s->corrs, &s->replays, &s->done,   &s->lastt };
	for (size_t i = 0; i < sizeof(tabs) / sizeof(tabs[0]); i++)
		lin_vtab_free(tabs[i]);
	for (size_t i = 0; i < s->heap.n; i++)
		free(((struct srec *)lin_vec_at(&s->heap, i))->reqs);
	lin_vec_free(&s->pending);
	lin_vec_free(&s->events);
	lin_vec_free(&s->heap);
	free(s->pend);
	free(s->in);
	lin_reader_free(s->rd);
	free(s->rec);
	free(s->hdr);
	pthread_mutex_destroy(&s->in_mu);
	pthread_mutex_destroy(&s->tick_mu);
	pthread_cond_destroy(&s->work_cv);
	pthread_cond_destroy(&s->done_cv);
	if (s->fd >= 0)
		close(s->fd);
	free(s);
}

void lin_ostream_stats(struct lin_ostream *s, struct lin_ostream_stats *st)
{
	pthread_mutex_lock(&s->tick_mu);
	*st = s->st;
	st->documents = s->w.documents;
	st->spans = s->w.spans;
	st->links = s->w.links;
	st->events = s->w.events;
	st->failed = s->failed;
	pthread_mutex_unlock(&s->tick_mu);
	pthread_mutex_lock(&s->in_mu);
	st->dropped_bytes = s->dropped_bytes;
	pthread_mutex_unlock(&s->in_mu);
}
