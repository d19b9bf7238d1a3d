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

#include "lineage/trace_format.h"
#include "lineage/w3c.h"
#include "otlp_emit.h"
#include "otlp_stream.h"
#include "reader.h"
#include "sys.h"
#include "schema.h"
#include "vtab.h"

#define NIL LIN_OJ_NIL

struct sreq {
	uint64_t begin, parent, user_id, name_sid, rparent;
	uint8_t trace[16];
	uint32_t tid;
	bool remote;
};

struct sreqref {
	uint64_t id;
	uint8_t trace[16];
};

struct sepoch {
	uint64_t begin, parent_span, name_sid, exec, ordinal;
	uint8_t trace[16];
	struct sreqref *reqs;        /* [nreq], owned */
	uint32_t nreq, version, reissues, tid;
};

struct sadopt {
	uint64_t begin, target, capture_tid, parent;
	uint8_t trace[16];
	uint32_t kind;
};

struct scorr {                   /* external correlation -> epoch */
	uint64_t epoch, seen;        /* epoch NIL: several epochs (ambiguous) */
};

struct sdone {                   /* a retired epoch, for GPU records that come later */
	uint64_t t;
	uint8_t trace[16];
};

/* A host record waiting for its turn: host records are processed in host-time order
 * (the writer drains thread by thread, so the byte stream is ordered per thread only). */
struct srec {
	uint64_t t, seq;             /* ordering key: host time, then decode order */
	uint64_t f[8];               /* fields 1..8; NIL when nil or absent */
	uint64_t *reqs;              /* epoch_declare: its requests, owned */
	uint32_t nreq;
	uint8_t type;
	char str[40];                /* misuse: its cause */
};

struct snode {                   /* graph node -> the epoch it was created under */
	uint64_t epoch;
	uint8_t trace[16];
};

struct sgpu {
	uint64_t offset, corr, start, end, graph, node, name_sid, bytes, arrived;
	uint32_t device, context, stream;
	uint8_t kind;
	bool devl;
};

struct sevent {
	uint64_t t, a, b, c;
	const char *name;            /* static */
	char cause[40];
	uint8_t what;                /* EV_MISUSE, EV_LOSS */
};

enum { EV_MISUSE, EV_LOSS };

struct lin_ostream {
	const lin_runtime *rt;
	int fd;
	lin_trace_write_fn write;
	void *user;
	char service[128];
	int64_t unix_off;
	_Atomic int failed;
	/* bytes fed (under the runtime's output lock), taken by the next tick; in_mu also
	 * guards the stream thread's hand-over fields below */
	pthread_mutex_t in_mu;
	uint8_t *in;
	size_t ilen, icap, ioff;     /* in[ioff..ilen) waits */
	uint64_t in_pos;             /* trace offset of in[ioff] */
	bool resync;                 /* bytes were skipped: decoding restarts at in_pos */
	uint64_t dropped_bytes;      /* fed while the backlog was full: not decoded */
	/* the stream's own thread (threaded streams) */
	pthread_t thr;
	pthread_cond_t work_cv, done_cv;
	bool threaded, running, stop;
	uint64_t want_wm, kicks, done_kicks;
	/* decoding: one tick at a time */
	pthread_mutex_t tick_mu;
	uint8_t *pend;
	size_t plen, pcap;
	uint64_t base;               /* trace offset of pend[0] */
	struct lin_reader *rd;       /* trace/'s reader, in stream mode */
	struct lin_rec *rec;         /* the record it decodes into (large: on the heap) */
	bool have_header;
	/* the process */
	char host[256], backend[32];
	uint64_t pid, key, ext_kind, tmin, tmax;
	uint64_t now;                /* the latest tick's watermark (host ns) */
	/* open state */
	struct lin_vtab reqs, epochs, adopts, strs, corrs, nodes, clones, replays, done, lastt;
	struct lin_vec pending, events, heap;
	uint64_t seq;
	uint64_t events_over;
	struct lin_oj w;             /* the document being built */
	struct lin_ostream_stats st;
};

/* ---------------------------------------------------------------- output */

static void fail(struct lin_ostream *s, int err, const char *what)
{
	if (s->failed)
		return;
	s->failed = err;
	lin_runtime_log(s->rt, LIN_LOG_ERROR, "otlp stream: %s: %s; the stream stops (the trace goes on)",
		   what, lin_strerror(err));
}

/* The writer's sink: one whole document to the file or the callback. */
static int sink(const char *doc, size_t len, void *user)
{
	struct lin_ostream *s = user;
	int err = s->write ? s->write(doc, len, s->user) : lin_write_all(s->fd, doc, len);
	if (!err)
		s->st.bytes += len;
	return err;
}

static void doc_flush(struct lin_ostream *s)
{
	int err = lin_oj_doc_close(&s->w);
	if (err)
		fail(s, err, "writing a document");
}

/* Ready to write a span (full documents go out on their own: LIN_OJ_SPANS_PER_DOC). */
static bool doc_begin(struct lin_ostream *s)
{
	if (s->w.err)
		fail(s, s->w.err, "writing a document");
	return !s->failed;
}

/* ---------------------------------------------------------------- ids and names */

static uint64_t unix_ns(const struct lin_ostream *s, uint64_t host_ns)
{
	return host_ns == NIL ? 0 : host_ns + (uint64_t)s->unix_off;
}

static uint64_t proc_span(const struct lin_ostream *s)
{
	return lin_w3c_span_id(s->key, 0);
}

static void seen(struct lin_ostream *s, uint64_t t)
{
	if (t == NIL)
		return;
	if (t < s->tmin)
		s->tmin = t;
	if (t > s->tmax)
		s->tmax = t;
}

static const char *name_or(const struct lin_ostream *s, uint64_t sid, const char *dflt,
			   size_t *len)
{
	char *const *p = sid == NIL ? NULL : lin_vtab_find(&s->strs, sid, 0);
	if (!p || !*p || !**p) {
		*len = strlen(dflt);
		return dflt;
	}
	*len = strlen(*p);
	return *p;
}

static void resource(struct lin_oj *w, int res, void *user)
{
	(void)res;
	struct lin_ostream *s = user;
	lin_oj_acstr(w, "service.name", s->service);
	lin_oj_acstr(w, "host.name", s->host);
	lin_oj_aint(w, "process.pid", s->pid);
	lin_oj_acstr(w, "lineage.backend", s->backend);
	lin_oj_acstr(w, "lineage.host_clock", "CLOCK_MONOTONIC+CLOCK_REALTIME_offset");
}

static void *get(struct lin_ostream *s, struct lin_vtab *t, uint64_t k0, uint64_t k1)
{
	bool fresh;
	void *p = lin_vtab_get(t, k0, k1, &fresh);
	if (!p)
		fail(s, -ENOMEM, "out of memory");
	return p;
}

/* ---------------------------------------------------------------- spans */

static void write_request(struct lin_ostream *s, uint64_t id, const struct sreq *q, uint64_t end,
			  bool open)
{
	if (!doc_begin(s))
		return;
	struct lin_oj *w = &s->w;
	uint64_t parent = q->remote ? q->rparent
			  : q->parent != NIL ? lin_w3c_span_id(s->key, q->parent) : 0;
	size_t nlen;
	const char *name = name_or(s, q->name_sid, "request", &nlen);
	lin_oj_span_open(w, 0, q->trace, lin_w3c_span_id(s->key, id), parent, name, nlen,
			 q->remote ? LIN_OJ_KIND_SERVER : LIN_OJ_KIND_INTERNAL, unix_ns(s, q->begin),
			 unix_ns(s, end));
	lin_oj_acstr(w, "lineage.span", "request");
	lin_oj_aint(w, "lineage.request.id", id);
	lin_oj_aint(w, "lineage.request.user_id", q->user_id);
	lin_oj_aint(w, "thread.id", q->tid);
	if (open)
		lin_oj_abool(w, "lineage.open", true);
	if (q->remote)
		lin_oj_ahex(w, "lineage.remote.parent_span_id", q->rparent);
	lin_oj_events(w);
	lin_oj_links(w);
	lin_oj_span_close(w, NULL);
}

static void write_epoch(struct lin_ostream *s, uint64_t id, const struct sepoch *e, uint64_t end,
			bool open)
{
	if (!doc_begin(s))
		return;
	struct lin_oj *w = &s->w;
	bool replay = e->exec != NIL;
	size_t nlen;
	const char *name = name_or(s, e->name_sid, replay ? "graph replay" : "epoch", &nlen);
	lin_oj_span_open(w, 0, e->trace, lin_w3c_span_id(s->key, id), e->parent_span, name, nlen,
			 LIN_OJ_KIND_INTERNAL, unix_ns(s, e->begin), unix_ns(s, end));
	lin_oj_acstr(w, "lineage.span", replay ? "graph_replay" : "epoch");
	lin_oj_aint(w, "lineage.epoch.id", id);
	lin_oj_aint(w, "lineage.epoch.version", e->version);
	lin_oj_aint(w, "lineage.epoch.reissues", e->reissues);
	uint64_t ids[64];
	uint32_t n = e->nreq < 64 ? e->nreq : 64;
	for (uint32_t i = 0; i < n; i++)
		ids[i] = e->reqs[i].id;
	lin_oj_aints(w, "lineage.epoch.requests", ids, n);
	lin_oj_aint(w, "thread.id", e->tid);
	lin_oj_aint(w, "lineage.graph.exec_id", e->exec);
	lin_oj_aint(w, "lineage.graph.replay_ordinal", e->ordinal);
	if (open)
		lin_oj_abool(w, "lineage.open", true);
	lin_oj_events(w);
	lin_oj_links(w);
	for (uint32_t i = 1; i < e->nreq; i++) /* fan-in: the other requests it serves */
		lin_oj_link(w, e->reqs[i].trace, lin_w3c_span_id(s->key, e->reqs[i].id), "fan_in");
	lin_oj_span_close(w, NULL);
}

static void write_adopt(struct lin_ostream *s, uint64_t tid, uint64_t depth,
			const struct sadopt *a, uint64_t end, bool closed)
{
	if (!doc_begin(s))
		return;
	struct lin_oj *w = &s->w;
	uint64_t span = lin_w3c_mix64(s->key ^ lin_w3c_mix64(a->begin ^ tid << 40));
	const char *what = a->capture_tid != NIL ? "handoff" : "scope";
	lin_oj_span_open(w, 0, a->trace, span ? span : 1, a->parent, what, strlen(what),
			 LIN_OJ_KIND_INTERNAL, unix_ns(s, a->begin), unix_ns(s, end));
	lin_oj_acstr(w, "lineage.span", what);
	lin_oj_aint(w, "thread.id", tid);
	lin_oj_aint(w, "lineage.capture.thread_id", a->capture_tid);
	lin_oj_aint(w, "lineage.scope.depth", depth);
	lin_oj_acstr(w, "lineage.target.kind", a->kind == LIN_TARGET_REQUEST ? "request" : "epoch");
	lin_oj_aint(w, "lineage.target.id", a->target);
	lin_oj_abool(w, "lineage.scope.closed", closed);
	lin_oj_events(w);
	lin_oj_links(w);
	lin_oj_span_close(w, NULL);
}

static const char *gpu_kind(uint8_t k)
{
	return k == LIN_REC_KERNEL ? "kernel" : k == LIN_REC_MEMCPY ? "memcpy" : "memset";
}

/* @join: "observed", "inferred", "ambiguous" (several epochs for its correlation) or "lost"
 * (no epoch within the retention time; lineage-validate on the trace names the cause). */
static void write_gpu(struct lin_ostream *s, const struct sgpu *g, const uint8_t *trace,
		      uint64_t epoch, const char *join)
{
	if (!doc_begin(s))
		return;
	struct lin_oj *w = &s->w;
	uint8_t own[16];
	uint64_t parent = epoch != NIL ? lin_w3c_span_id(s->key, epoch) : proc_span(s);
	if (!trace) {
		lin_w3c_trace_id(s->key, 0, own);
		trace = own;
	}
	uint64_t t0 = g->start != NIL ? g->start : g->end;
	uint64_t t1 = g->end != NIL ? g->end : t0;
	bool unknown = t0 == NIL;
	if (unknown)
		t0 = t1 = unix_ns(s, s->tmin == NIL ? 0 : s->tmin);
	size_t nlen;
	const char *name = name_or(s, g->name_sid, gpu_kind(g->kind), &nlen);
	uint64_t span = lin_w3c_mix64(s->key ^ lin_w3c_mix64(g->offset));
	lin_oj_span_open(w, 0, trace, span ? span : 1, parent, name, nlen, LIN_OJ_KIND_INTERNAL,
			 t0, t1);
	lin_oj_acstr(w, "lineage.span", gpu_kind(g->kind));
	lin_oj_acstr(w, "lineage.join", join);
	if (!strcmp(join, "inferred"))
		lin_oj_acstr(w, "lineage.join.rule", "graph_node_origin");
	lin_oj_aint(w, "lineage.device.id", g->device);
	lin_oj_aint(w, "lineage.device.context", g->context);
	lin_oj_aint(w, "lineage.device.stream", g->stream);
	lin_oj_aint(w, "lineage.cuda.correlation_id", g->corr);
	lin_oj_aint(w, "lineage.graph.id", g->graph);
	lin_oj_aint(w, "lineage.graph.node_id", g->node);
	lin_oj_aint(w, "lineage.bytes", g->bytes);
	lin_oj_aint(w, "lineage.trace.offset", g->offset);
	if (unknown)
		lin_oj_abool(w, "lineage.time.unknown", true);
	lin_oj_events(w);
	lin_oj_links(w);
	bool ok = epoch != NIL;
	lin_oj_span_close(w, !ok ? (strcmp(join, "lost") ? join : "not_joined_in_stream") : NULL);
	if (ok)
		s->st.gpu_joined++;
	else
		s->st.gpu_unjoined++;
}

/* ---------------------------------------------------------------- host records */

#define F(r, i) ((r)->f[(i) - 1])

static void own_trace(const struct lin_ostream *s, uint64_t req, uint8_t out[16])
{
	lin_w3c_trace_id(s->key, req, out);
}

static void on_request_begin(struct lin_ostream *s, const struct srec *r)
{
	uint64_t id = F(r, 3);
	if (id == NIL || lin_vtab_find(&s->reqs, id, 0))
		return;
	struct sreq *q = get(s, &s->reqs, id, 0);
	if (!q)
		return;
	*q = (struct sreq){.begin = F(r, 1), .tid = (uint32_t)F(r, 2), .user_id = F(r, 4),
			   .name_sid = F(r, 5), .parent = F(r, 6), .rparent = NIL};
	const struct sreq *p = q->parent == NIL ? NULL : lin_vtab_find(&s->reqs, q->parent, 0);
	if (p) {
		memcpy(q->trace, p->trace, 16);
	} else {
		own_trace(s, id, q->trace);
		q->parent = NIL; /* not a span of this stream */
	}
}

static void on_request_link(struct lin_ostream *s, const struct srec *r)
{
	struct sreq *q = lin_vtab_find(&s->reqs, F(r, 3), 0);
	uint64_t hi = F(r, 4), lo = F(r, 5), ps = F(r, 6), fl = F(r, 7);
	if (!q || hi == NIL || lo == NIL || !(hi | lo) || !ps || ps == NIL || fl > 255)
		return;
	lin_w3c_put64(q->trace, hi);
	lin_w3c_put64(q->trace + 8, lo);
	q->rparent = ps;
	q->remote = true;
}

static void on_request_end(struct lin_ostream *s, const struct srec *r)
{
	uint64_t id = F(r, 3);
	struct sreq *q = lin_vtab_find(&s->reqs, id, 0);
	if (!q)
		return;
	write_request(s, id, q, F(r, 1), false);
	lin_vtab_del(&s->reqs, q);
}

static void on_epoch_declare(struct lin_ostream *s, struct srec *r)
{
	uint64_t id = F(r, 3);
	if (id == NIL || lin_vtab_find(&s->epochs, id, 0))
		return;
	uint32_t n = r->nreq;
	struct sreqref *refs = n ? calloc(n, sizeof(*refs)) : NULL;
	if (n && !refs) {
		fail(s, -ENOMEM, "out of memory");
		return;
	}
	for (uint32_t i = 0; i < n; i++) {
		refs[i].id = r->reqs[i];
		const struct sreq *q = lin_vtab_find(&s->reqs, refs[i].id, 0);
		if (q)
			memcpy(refs[i].trace, q->trace, 16);
		else
			own_trace(s, refs[i].id, refs[i].trace);
	}
	struct sepoch *e = get(s, &s->epochs, id, 0);
	if (!e) {
		free(refs);
		return;
	}
	*e = (struct sepoch){.begin = F(r, 1), .tid = (uint32_t)F(r, 2),
			     .version = (uint32_t)F(r, 4), .name_sid = F(r, 7), .reqs = refs,
			     .nreq = n, .exec = NIL, .ordinal = NIL};
	uint64_t pid = F(r, 6);
	const struct sepoch *pe = pid == NIL ? NULL : lin_vtab_find(&s->epochs, pid, 0);
	const struct sreq *q0 = n ? lin_vtab_find(&s->reqs, refs[0].id, 0) : NULL;
	if (pe) {
		memcpy(e->trace, pe->trace, 16);
		e->parent_span = lin_w3c_span_id(s->key, pid);
	} else if (n) {
		memcpy(e->trace, refs[0].trace, 16);
		e->parent_span = q0 ? lin_w3c_span_id(s->key, refs[0].id) : proc_span(s);
	} else {
		own_trace(s, 0, e->trace);
		e->parent_span = proc_span(s);
	}
}

/* A graph launch's replay epoch: the graph tracker writes graph_launch itself, so it may
 * come before or after the epoch's declaration; it is taken as it is decoded (always
 * before the epoch's retire, which the launching thread records after the launch) and the
 * span takes it when it is written. */
static void replay_info(struct lin_ostream *s, uint64_t id, struct sepoch *e)
{
	uint64_t *rp = e->exec == NIL ? lin_vtab_find(&s->replays, id, 0) : NULL;
	if (!rp)
		return;
	e->exec = rp[0];
	e->ordinal = rp[1];
	lin_vtab_del(&s->replays, rp);
}

static void on_epoch(struct lin_ostream *s, const struct srec *r)
{
	uint64_t id = F(r, 3);
	struct sepoch *e = lin_vtab_find(&s->epochs, id, 0);
	if (!e)
		return;
	e->version = (uint32_t)F(r, 4);
	if (r->type == LIN_REC_EPOCH_REISSUE) {
		e->reissues++;
		return;
	}
	replay_info(s, id, e);
	write_epoch(s, id, e, F(r, 1), false);
	struct sdone *d = get(s, &s->done, id, 0);
	if (d) { /* its GPU records may still be on their way */
		d->t = F(r, 1);
		memcpy(d->trace, e->trace, 16);
	}
	free(e->reqs); /* e is still valid: only another table was written */
	lin_vtab_del(&s->epochs, e);
}

static void target_trace(const struct lin_ostream *s, uint32_t kind, uint64_t id,
			 uint8_t trace[16], uint64_t *parent)
{
	const struct sreq *q = kind == LIN_TARGET_REQUEST ? lin_vtab_find(&s->reqs, id, 0) : NULL;
	const struct sepoch *e = kind == LIN_TARGET_EPOCH ? lin_vtab_find(&s->epochs, id, 0) : NULL;
	*parent = lin_w3c_span_id(s->key, id);
	if (q) {
		memcpy(trace, q->trace, 16);
	} else if (e) {
		memcpy(trace, e->trace, 16);
	} else {
		own_trace(s, 0, trace);
		*parent = proc_span(s);
	}
}

static void on_adopt(struct lin_ostream *s, const struct srec *r)
{
	uint64_t tid = F(r, 2), depth = F(r, 8);
	bool fresh;
	struct sadopt *a = lin_vtab_get(&s->adopts, tid, depth, &fresh);
	if (!a) {
		fail(s, -ENOMEM, "out of memory");
		return;
	}
	if (!fresh) /* never closed (the thread exited with it open): written as it was */
		write_adopt(s, tid, depth, a, a->begin, false);
	*a = (struct sadopt){.begin = F(r, 1), .kind = (uint32_t)F(r, 3), .target = F(r, 4),
			     .capture_tid = F(r, 6)};
	target_trace(s, a->kind, a->target, a->trace, &a->parent);
}

static void on_scope_close(struct lin_ostream *s, const struct srec *r)
{
	uint64_t tid = F(r, 2), depth = F(r, 5);
	struct sadopt *a = lin_vtab_find(&s->adopts, tid, depth);
	if (!a || a->target != F(r, 4))
		return;
	uint64_t t = F(r, 1);
	write_adopt(s, tid, depth, a, t == NIL ? a->begin : t, true); /* untimed: ends at adopt */
	lin_vtab_del(&s->adopts, a);
}

static void on_graph(struct lin_ostream *s, const struct srec *r)
{
	/* graph_node (node 4, epoch 5) or graph_node_update (node 3, epoch 4) */
	bool node_rec = r->type == LIN_REC_GRAPH_NODE;
	uint64_t node = F(r, node_rec ? 4 : 3), epoch = F(r, node_rec ? 5 : 4);
	const struct sepoch *e = epoch == NIL ? NULL : lin_vtab_find(&s->epochs, epoch, 0);
	if (!e)
		return;
	uint8_t trace[16];
	memcpy(trace, e->trace, 16);
	struct snode *n = get(s, &s->nodes, node, 0);
	if (n) {
		n->epoch = epoch;
		memcpy(n->trace, trace, 16);
	}
}

static void add_event(struct lin_ostream *s, uint8_t what, uint64_t t, const char *cause,
		      size_t clen, uint64_t a, uint64_t b, uint64_t c)
{
	if (s->events.n >= LIN_OSTREAM_MAX_EVENTS) {
		s->events_over++;
		return;
	}
	struct sevent *e = lin_vec_push(&s->events);
	if (!e) {
		s->events_over++;
		return;
	}
	*e = (struct sevent){.t = t, .a = a, .b = b, .c = c, .what = what,
			     .name = what == EV_MISUSE ? "lineage.misuse" : "lineage.loss"};
	memcpy(e->cause, cause, clen < sizeof(e->cause) - 1 ? clen : sizeof(e->cause) - 1);
}

static void process(struct lin_ostream *s, struct srec *r)
{
	switch (r->type) {
	case LIN_REC_REQUEST_BEGIN: on_request_begin(s, r); break;
	case LIN_REC_REQUEST_LINK: on_request_link(s, r); break;
	case LIN_REC_REQUEST_END: on_request_end(s, r); break;
	case LIN_REC_EPOCH_DECLARE: on_epoch_declare(s, r); break;
	case LIN_REC_EPOCH_REISSUE: case LIN_REC_EPOCH_RETIRE: on_epoch(s, r); break;
	case LIN_REC_TOKEN_ADOPT: on_adopt(s, r); break;
	case LIN_REC_SCOPE_CLOSE: on_scope_close(s, r); break;
	case LIN_REC_GRAPH_NODE: case LIN_REC_GRAPH_NODE_UPDATE:
		on_graph(s, r);
		break;
	case LIN_REC_MISUSE:
		add_event(s, EV_MISUSE, F(r, 1), r->str, strlen(r->str), F(r, 2), F(r, 5), F(r, 7));
		break;
	default:
		break;
	}
	free(r->reqs);
	r->reqs = NULL;
}

/* ---------------------------------------------------------------- the time-ordered heap */

static bool rec_before(const struct srec *a, const struct srec *b)
{
	return a->t != b->t ? a->t < b->t : a->seq < b->seq;
}

static void heap_swap(struct lin_ostream *s, size_t i, size_t j)
{
	struct srec t = *(struct srec *)lin_vec_at(&s->heap, i);
	*(struct srec *)lin_vec_at(&s->heap, i) = *(struct srec *)lin_vec_at(&s->heap, j);
	*(struct srec *)lin_vec_at(&s->heap, j) = t;
}

static void heap_push(struct lin_ostream *s, const struct srec *r)
{
	struct srec *p = lin_vec_push(&s->heap);
	if (!p) {
		free(r->reqs);
		fail(s, -ENOMEM, "out of memory");
		return;
	}
	*p = *r;
	for (size_t i = s->heap.n - 1; i;) {
		size_t up = (i - 1) / 2;
		if (!rec_before(lin_vec_at(&s->heap, i), lin_vec_at(&s->heap, up)))
			break;
		heap_swap(s, i, up);
		i = up;
	}
}

static void heap_pop(struct lin_ostream *s, struct srec *out)
{
	*out = *(struct srec *)lin_vec_at(&s->heap, 0);
	heap_swap(s, 0, --s->heap.n);
	for (size_t i = 0;;) {
		size_t l = 2 * i + 1, m = i;
		if (l < s->heap.n && rec_before(lin_vec_at(&s->heap, l), lin_vec_at(&s->heap, m)))
			m = l;
		if (l + 1 < s->heap.n &&
		    rec_before(lin_vec_at(&s->heap, l + 1), lin_vec_at(&s->heap, m)))
			m = l + 1;
		if (m == i)
			break;
		heap_swap(s, i, m);
		i = m;
	}
}

/* Process the host records at or before @watermark, in host-time order; and the oldest
 * beyond LIN_OSTREAM_MAX_HEAP, which bounds what a writer that drains for long (an
 * overloaded one) makes the stream hold, at the price of order for those records. */
static void drain_heap(struct lin_ostream *s, uint64_t watermark)
{
	while (s->heap.n && !s->failed) {
		const struct srec *top = lin_vec_at(&s->heap, 0);
		if (top->t > watermark && s->heap.n <= LIN_OSTREAM_MAX_HEAP)
			break;
		struct srec r;
		heap_pop(s, &r);
		process(s, &r);
	}
}

/* ---------------------------------------------------------------- decoding */

/* Field @i of @r, counting the type as field 0 (the format's numbering): NIL when nil,
 * absent, or a str or array field (those are read with fstr and r->reqs). */
static uint64_t fu(const struct lin_rec *r, uint32_t i)
{
	if (i == 0)
		return r->type;
	i--;
	if (i >= r->nfields || (r->nil >> i & 1))
		return NIL;
	const struct lin_schema *sc = lin_schema_get(r->type);
	const char *bar = strchr(sc->types, '|');
	size_t need = bar ? (size_t)(bar - sc->types) : strlen(sc->types);
	char code = sc->types[i < need ? i : i + 1];
	return code == 's' || code == 'n' || code == 'a' ? NIL : r->f[i];
}

/* The record's str field (a record type has at most one), or NULL (*len 0). */
static const char *fstr(const struct lin_rec *r, size_t *len)
{
	*len = r->str ? r->str_len : 0;
	return r->str;
}

static void on_string(struct lin_ostream *s, const struct lin_rec *r)
{
	uint64_t sid = fu(r, 1);
	size_t len;
	const char *t = fstr(r, &len);
	if (sid == NIL || !t || lin_vtab_find(&s->strs, sid, 0))
		return;
	char *c = malloc(len + 1);
	char **p = c ? get(s, &s->strs, sid, 0) : NULL;
	if (!p) {
		free(c);
		fail(s, -ENOMEM, "out of memory");
		return;
	}
	memcpy(c, t, len);
	c[len] = 0;
	*p = c;
}

static void on_ext(struct lin_ostream *s, const struct lin_rec *r)
{
	uint64_t epoch = fu(r, 2), corr = fu(r, 3);
	if (fu(r, 1) != s->ext_kind || corr == NIL)
		return;
	bool fresh;
	struct scorr *c = lin_vtab_get(&s->corrs, corr, 0, &fresh);
	if (!c) {
		fail(s, -ENOMEM, "out of memory");
		return;
	}
	c->seen = 0; /* set by the next tick */
	if (fresh)
		c->epoch = epoch;
	else if (c->epoch != epoch)
		c->epoch = NIL; /* several epochs: ambiguous, joined to none */
}

/* The trace of epoch @id: live, or retired within the retention time. */
static const uint8_t *epoch_trace(const struct lin_ostream *s, uint64_t id)
{
	const struct sepoch *e = lin_vtab_find(&s->epochs, id, 0);
	if (e)
		return e->trace;
	const struct sdone *d = lin_vtab_find(&s->done, id, 0);
	return d ? d->trace : NULL;
}

/* Try to join @g now; @last: write it even unjoined. Return: true when written. */
static bool gpu_try(struct lin_ostream *s, const struct sgpu *g, bool last)
{
	const struct scorr *c = g->corr == NIL ? NULL : lin_vtab_find(&s->corrs, g->corr, 0);
	if (c && c->epoch == NIL) {
		write_gpu(s, g, NULL, NIL, "ambiguous");
		return true;
	}
	const uint8_t *trace = c ? epoch_trace(s, c->epoch) : NULL;
	if (trace) {
		write_gpu(s, g, trace, c->epoch, "observed");
		return true;
	}
	if (!c && g->node != NIL && !g->devl && (g->corr == NIL || last)) {
		const uint64_t *orig = lin_vtab_find(&s->clones, g->node, 0);
		const struct snode *n = lin_vtab_find(&s->nodes, orig ? *orig : g->node, 0);
		if (n) {
			write_gpu(s, g, n->trace, n->epoch, "inferred");
			return true;
		}
	}
	if (!last)
		return false;
	write_gpu(s, g, NULL, NIL, "lost");
	return true;
}

static void on_gpu(struct lin_ostream *s, const struct lin_rec *r, uint64_t type, uint64_t off)
{
	bool k = type == LIN_REC_KERNEL;
	struct sgpu g = {.offset = off, .corr = fu(r, 1), .start = fu(r, 2), .end = fu(r, 3),
			 .device = (uint32_t)fu(r, 4), .context = (uint32_t)fu(r, 5),
			 .stream = (uint32_t)fu(r, 6), .graph = fu(r, k ? 8 : 9),
			 .node = fu(r, k ? 9 : 10), .name_sid = k ? fu(r, 10) : NIL,
			 .bytes = k ? NIL : fu(r, 7), .kind = (uint8_t)type,
			 .devl = k && fu(r, 13) == 1, .arrived = 0 /* set by the next tick */};
	/* joined at the next tick, once the host records before it are processed */
	struct sgpu *p = s->pending.n < LIN_OSTREAM_MAX_PENDING ? lin_vec_push(&s->pending) : NULL;
	if (p)
		*p = g;
	else
		gpu_try(s, &g, true);
}

static bool timed(uint64_t type)
{
	switch (type) {
	case LIN_REC_REQUEST_BEGIN: case LIN_REC_REQUEST_END: case LIN_REC_REQUEST_LINK:
	case LIN_REC_EPOCH_DECLARE: case LIN_REC_EPOCH_REISSUE: case LIN_REC_EPOCH_RETIRE:
	case LIN_REC_TOKEN_ADOPT: case LIN_REC_SCOPE_CLOSE: case LIN_REC_MISUSE:
	case LIN_REC_GRAPH_NODE: case LIN_REC_GRAPH_NODE_UPDATE:
		return true;
	default:
		return false;
	}
}

/* A host record into the heap. Untimed ones (lean timestamps, graph records) take the time
 * of their thread's previous record, so they stay after it. */
static void queue_host(struct lin_ostream *s, const struct lin_rec *r, uint64_t type)
{
	struct srec q = {.type = (uint8_t)type, .seq = s->seq++};
	for (uint32_t i = 0; i < 8; i++)
		q.f[i] = fu(r, i + 1);
	uint64_t tid = q.f[1];
	uint64_t *last = tid == NIL ? NULL : get(s, &s->lastt, tid, 0);
	q.t = q.f[0] != NIL ? q.f[0] : last && *last ? *last : s->tmax;
	if (q.t == NIL)
		q.t = 0;
	if (last)
		*last = q.t;
	size_t clen;
	const char *c = type == LIN_REC_MISUSE ? fstr(r, &clen) : NULL;
	if (c)
		memcpy(q.str, c, clen < sizeof(q.str) - 1 ? clen : sizeof(q.str) - 1);
	if (type == LIN_REC_EPOCH_DECLARE && r->nreqs) {
		q.reqs = malloc(r->nreqs * sizeof(uint64_t));
		if (!q.reqs) {
			fail(s, -ENOMEM, "out of memory");
			return;
		}
		memcpy(q.reqs, r->reqs, r->nreqs * sizeof(uint64_t));
		q.nreq = r->nreqs;
	}
	heap_push(s, &q);
}

static void on_record(struct lin_ostream *s, const struct lin_rec *r, uint64_t off)
{
	uint64_t type = fu(r, 0);
	if (timed(type)) {
		seen(s, fu(r, 1));
		queue_host(s, r, type);
		return;
	}
	switch (type) {
	case LIN_REC_STRING: on_string(s, r); break;
	case LIN_REC_EXT_CORRELATION: on_ext(s, r); break;
	case LIN_REC_KERNEL: case LIN_REC_MEMCPY: case LIN_REC_MEMSET: on_gpu(s, r, type, off); break;
	case LIN_REC_GRAPH_NODE_CLONE: {
		uint64_t *c = get(s, &s->clones, fu(r, 2), 0);
		if (c)
			*c = fu(r, 1);
		break;
	}
	case LIN_REC_GRAPH_LAUNCH: { /* taken now: it precedes its replay epoch's retire */
		seen(s, fu(r, 1));
		uint64_t *rp = get(s, &s->replays, fu(r, 4), 0);
		if (rp) {
			rp[0] = fu(r, 3);
			rp[1] = fu(r, 5);
			rp[2] = 0; /* kept for the retention time, set by the next tick */
		}
		break;
	}
	case LIN_REC_DROPPED: {
		size_t wlen;
		const char *why = fstr(r, &wlen);
		if (fu(r, 2) && fu(r, 2) != NIL)
			add_event(s, EV_LOSS, s->tmax, why ? why : "", wlen, fu(r, 1), fu(r, 2),
				  fu(r, 3));
		break;
	}
	case LIN_REC_LAUNCH: case LIN_REC_TOKEN_CAPTURE: case LIN_REC_TRACE_END:
		seen(s, fu(r, 1));
		break;
	default:
		break;
	}
}

/* The header: host, pid, backend, ext_kind. */
static void on_header(struct lin_ostream *s, const struct lin_header *h)
{
	snprintf(s->host, sizeof(s->host), "%s", h->host);
	snprintf(s->backend, sizeof(s->backend), "%s", h->backend);
	s->pid = h->pid;
	s->ext_kind = h->ext_kind;
	s->key = lin_w3c_proc_key(s->host, s->pid);
	s->have_header = true;
}

/* The reader stopped on bytes it cannot decode: say where and why, once. */
static void fail_decode(struct lin_ostream *s)
{
	if (s->failed)
		return;
	s->failed = -EINVAL;
	lin_runtime_log(s->rt, LIN_LOG_ERROR, "otlp stream: undecodable trace bytes at byte %llu: %s; "
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
	s->unix_off = o->unix_offset_ns;
	s->ext_kind = 5;
	s->tmin = NIL;
	const char *svc = o->service ? o->service : getenv("OTEL_SERVICE_NAME");
	snprintf(s->service, sizeof(s->service), "%s", svc && *svc ? svc : "lineage");
	lin_vtab_init(&s->reqs, sizeof(struct sreq));
	lin_vtab_init(&s->epochs, sizeof(struct sepoch));
	lin_vtab_init(&s->adopts, sizeof(struct sadopt));
	lin_vtab_init(&s->strs, sizeof(char *));
	lin_vtab_init(&s->corrs, sizeof(struct scorr));
	lin_vtab_init(&s->nodes, sizeof(struct snode));
	lin_vtab_init(&s->clones, sizeof(uint64_t));
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
	lin_oj_init(&s->w, sink, s, "liblineage", resource, s);
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
			lin_runtime_log(s->rt, LIN_LOG_ERROR, "cannot open OTLP stream '%s': %s", o->path,
				   lin_strerror(err));
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
	if (s->threaded && waiting + len > LIN_OSTREAM_MAX_BACKLOG) {
		/* The stream thread is behind: what waits and this piece are skipped, and
		 * decoding restarts at the next piece (the writer hands out whole records), so
		 * the trace never waits for the stream. */
		if (!s->dropped_bytes)
			lin_runtime_log(s->rt, LIN_LOG_WARN, "otlp stream: more than %u MiB waiting; "
				   "trace bytes are skipped until it catches up",
				   LIN_OSTREAM_MAX_BACKLOG >> 20);
		s->dropped_bytes += waiting + len;
		s->in_pos += waiting + len;
		s->ilen = s->ioff = 0;
		s->resync = true;
	} else if (grow(&s->in, &s->icap, s->ilen + len)) {
		fail(s, -ENOMEM, "out of memory");
	} else {
		memcpy(s->in + s->ilen, buf, len);
		s->ilen += len;
	}
	pthread_mutex_unlock(&s->in_mu);
}

/* Decode up to DECODE_SLICE more of the bytes fed (a record cut at the end waits for the
 * rest). Return: true when more bytes wait. Slices keep what one tick holds in memory
 * (decoded records wait in the heap only until the watermark) small. */
#define DECODE_SLICE (1u << 20)

static bool decode(struct lin_ostream *s)
{
	pthread_mutex_lock(&s->in_mu);
	if (s->resync) { /* what was cut at the skip will never be completed */
		s->plen = 0;
		s->base = s->in_pos;
		s->resync = false;
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
		fail(s, err, "out of memory");
		return false;
	}
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
		else if (s->rec->known)
			on_record(s, s->rec, s->rec->offset);
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
		keys[m++] = (struct ekey){when, k.k0, k.k1};
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
	expire_tab(s, &s->replays, 2 * sizeof(uint64_t), all); /* replay epoch never declared */
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
			write_request(s, keys[i].k0, p, s->tmax, true);
		} else if (what == OPEN_EPOCH) {
			struct sepoch *e = p;
			write_epoch(s, keys[i].k0, e, s->tmax, true);
			free(e->reqs);
		} else {
			const struct sadopt *a = p;
			write_adopt(s, keys[i].k0, keys[i].k1, a, a->begin, false);
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
			drain_heap(s, watermark);
		}
		expire(s, false);
		evict_open(s, &s->reqs, OPEN_REQ);
		evict_open(s, &s->epochs, OPEN_EPOCH);
		evict_open(s, &s->adopts, OPEN_ADOPT);
		doc_flush(s);
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

static void write_process(struct lin_ostream *s)
{
	if (!doc_begin(s))
		return;
	struct lin_oj *w = &s->w;
	uint8_t trace[16];
	own_trace(s, 0, trace);
	char name[300];
	int n = snprintf(name, sizeof(name), "process %s:%llu", s->host, (unsigned long long)s->pid);
	uint64_t t0 = unix_ns(s, s->tmin == NIL ? 0 : s->tmin), t1 = unix_ns(s, s->tmax);
	lin_oj_span_open(w, 0, trace, proc_span(s), 0, name, (size_t)n, LIN_OJ_KIND_INTERNAL, t0, t1);
	lin_oj_acstr(w, "lineage.span", "process");
	if (s->events_over)
		lin_oj_aint(w, "lineage.events.dropped", s->events_over);
	if (s->dropped_bytes) /* the stream fell behind: spans of these bytes are missing */
		lin_oj_aint(w, "lineage.stream.skipped_bytes", s->dropped_bytes);
	lin_oj_events(w);
	for (size_t i = 0; i < s->events.n; i++) {
		const struct sevent *e = lin_vec_at(&s->events, i);
		lin_oj_event_open(w, e->what == EV_MISUSE ? unix_ns(s, e->t) : t1, e->name);
		lin_oj_acstr(w, "lineage.cause", e->what == EV_LOSS ? "dropped_records" : e->cause);
		if (e->what == EV_MISUSE) {
			lin_oj_aint(w, "thread.id", e->a);
			lin_oj_aint(w, "lineage.target.id", e->b);
			lin_oj_aint(w, "lineage.misuse.detail", e->c);
		} else {
			lin_oj_aint(w, "lineage.loss.source", e->a);
			lin_oj_aint(w, "lineage.loss.count", e->b);
			lin_oj_aint(w, "thread.id", e->c);
			if (e->cause[0])
				lin_oj_acstr(w, "lineage.loss.reason", e->cause);
		}
		lin_oj_event_close(w);
	}
	lin_oj_links(w);
	lin_oj_span_close(w, NULL);
}

static void write_open(struct lin_ostream *s)
{
	size_t it = 0;
	struct lin_vkey k;
	uint64_t end = s->tmax;
	for (struct sadopt *a; (a = lin_vtab_next(&s->adopts, &it, &k));)
		write_adopt(s, k.k0, k.k1, a, a->begin, false);
	it = 0;
	for (struct sepoch *e; (e = lin_vtab_next(&s->epochs, &it, &k));) {
		replay_info(s, k.k0, e);
		write_epoch(s, k.k0, e, end, true);
	}
	it = 0;
	for (struct sreq *q; (q = lin_vtab_next(&s->reqs, &it, &k));)
		write_request(s, k.k0, q, end, true);
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
	s->running = false;  /* the thread is not in the child */
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
		   "in=%zu pend=%zu heap=%zu json=%zu tables=%zu; evicted=%llu", s->reqs.n,
		   s->epochs.n, s->adopts.n, s->done.n, s->corrs.n, s->replays.n, s->pending.n,
		   s->heap.n, s->icap, s->pcap, s->heap.cap * s->heap.esz, s->w.cap,
		   lin_vtab_bytes(&s->reqs) + lin_vtab_bytes(&s->epochs) +
		   lin_vtab_bytes(&s->adopts) + lin_vtab_bytes(&s->done) +
		   lin_vtab_bytes(&s->corrs) + lin_vtab_bytes(&s->replays) +
		   lin_vtab_bytes(&s->nodes) + lin_vtab_bytes(&s->clones) +
		   lin_vtab_bytes(&s->strs) + lin_vtab_bytes(&s->lastt),
		   (unsigned long long)s->st.evicted);
	while (!s->failed && decode(s))
		drain_heap(s, UINT64_MAX);
	if (!s->failed && s->have_header) {
		drain_heap(s, UINT64_MAX);
		expire(s, true);
		write_open(s);
		write_process(s);
		doc_flush(s);
	}
free_all:
	lin_oj_free(&s->w);
	size_t it = 0;
	struct lin_vkey k;
	for (struct sepoch *e; (e = lin_vtab_next(&s->epochs, &it, &k));)
		free(e->reqs);
	it = 0;
	for (char **p; (p = lin_vtab_next(&s->strs, &it, &k));)
		free(*p);
	struct lin_vtab *tabs[] = {&s->reqs, &s->epochs, &s->adopts, &s->strs, &s->corrs,
				   &s->nodes, &s->clones, &s->replays, &s->done, &s->lastt};
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
