/* SPDX-License-Identifier: MIT */
/*
 * spans.c - the OTLP stream's spans: host records put back in host-time order (a heap,
 * processed up to each tick's watermark), the request, epoch, handoff and GPU spans they
 * make (docs/fleet.md), and the document writer. See otlp_stream.c for the rest.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ostate.h"
#include "sys.h"

/* ---------------------------------------------------------------- output */

void lin_os_fail(struct lin_ostream *s, int err, const char *what)
{
	if (s->failed)
		return;
	s->failed = err;
	lin_runtime_log(s->rt, LIN_LOG_ERROR, "otlp stream: %s: %s; the stream stops (the trace goes on)",
			what, lin_strerror(err));
}

/* The writer's sink: one whole document to the file or the callback. */
int lin_os_sink(const char *doc, size_t len, void *user)
{
	struct lin_ostream *s = user;
	int err = s->write ? s->write(doc, len, s->user) : lin_write_all(s->fd, doc, len);
	if (!err)
		s->st.bytes += len;
	return err;
}

void lin_os_doc_flush(struct lin_ostream *s)
{
	int err = lin_oj_doc_close(&s->w);
	if (err)
		lin_os_fail(s, err, "writing a document");
}

/* Ready to write a span (full documents go out on their own: LIN_OJ_SPANS_PER_DOC). */
static bool doc_begin(struct lin_ostream *s)
{
	if (s->w.err)
		lin_os_fail(s, s->w.err, "writing a document");
	return !s->failed;
}

/* ---------------------------------------------------------------- ids and names */

static uint64_t unix_ns(const struct lin_ostream *s, uint64_t host_ns)
{
	return lin_oj_host_unix(&s->clk, host_ns);
}

static uint64_t proc_span(const struct lin_ostream *s) { return lin_w3c_span_id(s->key, 0); }

void lin_os_seen(struct lin_ostream *s, uint64_t t)
{
	if (t == LIN_NIL)
		return;
	if (t < s->tmin)
		s->tmin = t;
	if (t > s->tmax)
		s->tmax = t;
}

static const char *name_or(const struct lin_ostream *s, uint64_t sid, const char *dflt, size_t *len)
{
	char *const *p = sid == LIN_NIL ? NULL : lin_vtab_find(&s->strs, sid, 0);
	if (!p || !*p || !**p) {
		*len = strlen(dflt);
		return dflt;
	}
	*len = strlen(*p);
	return *p;
}

void lin_os_resource(struct lin_oj *w, int res, void *user)
{
	(void)res;
	struct lin_ostream *s = user;
	lin_oj_acstr(w, "service.name", s->service);
	lin_oj_acstr(w, "host.name", s->host);
	lin_oj_aint(w, "process.pid", s->pid);
	lin_oj_acstr(w, "lineage.backend", s->backend);
	lin_oj_acstr(w, "lineage.host_clock", "CLOCK_MONOTONIC+CLOCK_REALTIME_offset");
}

void *lin_os_get(struct lin_ostream *s, struct lin_vtab *t, uint64_t k0, uint64_t k1)
{
	bool fresh;
	void *p = lin_vtab_get(t, k0, k1, &fresh);
	if (!p)
		lin_os_fail(s, -ENOMEM, "out of memory");
	return p;
}

/* ---------------------------------------------------------------- spans */

void lin_os_write_request(struct lin_ostream *s, uint64_t id, const struct sreq *q, uint64_t end, bool open)
{
	if (!doc_begin(s))
		return;
	struct lin_oj *w = &s->w;
	uint64_t parent = q->remote              ? q->rparent
			  : q->parent != LIN_NIL ? lin_w3c_span_id(s->key, q->parent)
						 : 0;
	size_t nlen;
	const char *name = name_or(s, q->name_sid, "request", &nlen);
	lin_oj_span_open(w, 0, q->trace, lin_w3c_span_id(s->key, id), parent, name, nlen,
			 q->remote ? LIN_OJ_KIND_SERVER : LIN_OJ_KIND_INTERNAL,
			 unix_ns(s, q->begin), unix_ns(s, end));
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

void lin_os_write_epoch(struct lin_ostream *s, uint64_t id, const struct sepoch *e, uint64_t end, bool open)
{
	if (!doc_begin(s))
		return;
	struct lin_oj *w = &s->w;
	bool replay = e->exec != LIN_NIL;
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

void lin_os_write_adopt(struct lin_ostream *s, uint64_t tid, uint64_t depth, const struct sadopt *a,
			uint64_t end, bool closed)
{
	if (!doc_begin(s))
		return;
	struct lin_oj *w = &s->w;
	uint64_t span = lin_w3c_mix64(s->key ^ lin_w3c_mix64(a->begin ^ tid << 40));
	const char *what = a->capture_tid != LIN_NIL ? "handoff" : "scope";
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
void lin_os_write_gpu(struct lin_ostream *s, const struct sgpu *g, const uint8_t *trace,
		      uint64_t epoch, const char *join)
{
	if (!doc_begin(s))
		return;
	struct lin_oj *w = &s->w;
	uint8_t own[16];
	uint64_t parent = epoch != LIN_NIL ? lin_w3c_span_id(s->key, epoch) : proc_span(s);
	if (!trace) {
		lin_w3c_trace_id(s->key, 0, own);
		trace = own;
	}
	uint64_t start = lin_oj_dev_unix(&s->clk, g->start), end = lin_oj_dev_unix(&s->clk, g->end);
	uint64_t t0 = start != LIN_NIL ? start : end;
	uint64_t t1 = end != LIN_NIL ? end : t0;
	bool unknown = t0 == LIN_NIL;
	if (unknown)
		t0 = t1 = unix_ns(s, s->tmin == LIN_NIL ? 0 : s->tmin);
	size_t nlen;
	const char *name = name_or(s, g->name_sid, gpu_kind(g->kind), &nlen);
	uint64_t span = lin_w3c_mix64(s->key ^ lin_w3c_mix64(g->offset));
	lin_oj_span_open(w, 0, trace, span ? span : 1, parent, name, nlen, LIN_OJ_KIND_INTERNAL, t0, t1);
	lin_oj_acstr(w, "lineage.span", gpu_kind(g->kind));
	lin_oj_acstr(w, "lineage.join", join);
	if (!strcmp(join, "inferred"))
		lin_oj_acstr(w, "lineage.join.rule", "graph_node_origin");
	lin_oj_gpu_ids(w, g->device, g->context, g->stream, g->corr, g->graph, g->node, g->bytes);
	lin_oj_aint(w, "lineage.trace.offset", g->offset);
	if (unknown)
		lin_oj_abool(w, "lineage.time.unknown", true);
	lin_oj_events(w);
	lin_oj_links(w);
	bool ok = epoch != LIN_NIL;
	lin_oj_span_close(w, !ok ? (strcmp(join, "lost") ? join : "not_joined_in_stream") : NULL);
	if (ok)
		s->st.gpu_joined++;
	else
		s->st.gpu_unjoined++;
}

/* ---------------------------------------------------------------- host records */

#define F(r, i) ((r)->f[(i)-1])

static void own_trace(const struct lin_ostream *s, uint64_t req, uint8_t out[16])
{
	lin_w3c_trace_id(s->key, req, out);
}

static void on_request_begin(struct lin_ostream *s, const struct srec *r)
{
	uint64_t id = F(r, 3);
	if (id == LIN_NIL || lin_vtab_find(&s->reqs, id, 0))
		return;
	struct sreq *q = lin_os_get(s, &s->reqs, id, 0);
	if (!q)
		return;
	*q = (struct sreq){ .begin = F(r, 1),
			    .tid = (uint32_t)F(r, 2),
			    .user_id = F(r, 4),
			    .name_sid = F(r, 5),
			    .parent = F(r, 6),
			    .rparent = LIN_NIL };
	const struct sreq *p = q->parent == LIN_NIL ? NULL : lin_vtab_find(&s->reqs, q->parent, 0);
	if (p) {
		memcpy(q->trace, p->trace, 16);
	} else {
		own_trace(s, id, q->trace);
		q->parent = LIN_NIL; /* not a span of this stream */
	}
}

static void on_request_link(struct lin_ostream *s, const struct srec *r)
{
	struct sreq *q = lin_vtab_find(&s->reqs, F(r, 3), 0);
	uint64_t hi = F(r, 4), lo = F(r, 5), ps = F(r, 6), fl = F(r, 7);
	if (!q || hi == LIN_NIL || lo == LIN_NIL || !(hi | lo) || !ps || ps == LIN_NIL || fl > 255)
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
	lin_os_write_request(s, id, q, F(r, 1), false);
	struct sdone *d = lin_os_get(s, &s->done, id, 0);
	if (d) { /* GPU records whose external correlation names it may still come */
		d->t = F(r, 1);
		memcpy(d->trace, q->trace, 16);
	}
	lin_vtab_del(&s->reqs, q); /* still valid: only another table was written */
}

static void on_epoch_declare(struct lin_ostream *s, struct srec *r)
{
	uint64_t id = F(r, 3);
	if (id == LIN_NIL || lin_vtab_find(&s->epochs, id, 0))
		return;
	uint32_t n = r->nreq;
	struct sreqref *refs = n ? calloc(n, sizeof(*refs)) : NULL;
	if (n && !refs) {
		lin_os_fail(s, -ENOMEM, "out of memory");
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
	struct sepoch *e = lin_os_get(s, &s->epochs, id, 0);
	if (!e) {
		free(refs);
		return;
	}
	*e = (struct sepoch){ .begin = F(r, 1),
			      .tid = (uint32_t)F(r, 2),
			      .version = (uint32_t)F(r, 4),
			      .name_sid = F(r, 7),
			      .reqs = refs,
			      .nreq = n,
			      .exec = LIN_NIL,
			      .ordinal = LIN_NIL };
	uint64_t pid = F(r, 6);
	const struct sepoch *pe = pid == LIN_NIL ? NULL : lin_vtab_find(&s->epochs, pid, 0);
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
	uint64_t *rp = e->exec == LIN_NIL ? lin_vtab_find(&s->replays, id, 0) : NULL;
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
	lin_os_write_epoch(s, id, e, F(r, 1), false);
	struct sdone *d = lin_os_get(s, &s->done, id, 0);
	if (d) { /* its GPU records may still be on their way */
		d->t = F(r, 1);
		memcpy(d->trace, e->trace, 16);
	}
	free(e->reqs); /* e is still valid: only another table was written */
	lin_vtab_del(&s->epochs, e);
}

static void target_trace(const struct lin_ostream *s, uint32_t kind, uint64_t id, uint8_t trace[16],
			 uint64_t *parent)
{
	const struct sreq *q = kind == LIN_TARGET_REQUEST ? lin_vtab_find(&s->reqs, id, 0) : NULL;
	const struct sepoch *e = kind == LIN_TARGET_EPOCH ? lin_vtab_find(&s->epochs, id, 0) : NULL;
	/* An epoch retired (a request ended) within the retention time: late work adopted
	 * after it. Requests and epochs share one id space. */
	const struct sdone *d = !q && !e ? lin_vtab_find(&s->done, id, 0) : NULL;
	*parent = lin_w3c_span_id(s->key, id);
	if (q) {
		memcpy(trace, q->trace, 16);
	} else if (e) {
		memcpy(trace, e->trace, 16);
	} else if (d) {
		memcpy(trace, d->trace, 16);
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
		lin_os_fail(s, -ENOMEM, "out of memory");
		return;
	}
	if (!fresh) /* never closed (the thread exited with it open): written as it was */
		lin_os_write_adopt(s, tid, depth, a, a->begin, false);
	*a = (struct sadopt){
		.begin = F(r, 1), .kind = (uint32_t)F(r, 3), .target = F(r, 4), .capture_tid = F(r, 6)
	};
	target_trace(s, a->kind, a->target, a->trace, &a->parent);
}

static void on_scope_close(struct lin_ostream *s, const struct srec *r)
{
	uint64_t tid = F(r, 2), depth = F(r, 5);
	struct sadopt *a = lin_vtab_find(&s->adopts, tid, depth);
	if (!a || a->target != F(r, 4))
		return;
	uint64_t t = F(r, 1);
	lin_os_write_adopt(s, tid, depth, a, t == LIN_NIL ? a->begin : t, true); /* untimed: ends at adopt */
	lin_vtab_del(&s->adopts, a);
}

static void on_graph(struct lin_ostream *s, const struct srec *r)
{
	/* graph_node (node 4, epoch 5) or graph_node_update (node 3, epoch 4) */
	bool node_rec = r->type == LIN_REC_GRAPH_NODE;
	uint64_t node = F(r, node_rec ? 4 : 3), epoch = F(r, node_rec ? 5 : 4);
	const struct sepoch *e = epoch == LIN_NIL ? NULL : lin_vtab_find(&s->epochs, epoch, 0);
	if (!e)
		return;
	uint8_t trace[16];
	memcpy(trace, e->trace, 16);
	struct snode *n = lin_os_get(s, &s->nodes, node, 0);
	if (n) {
		n->epoch = epoch;
		memcpy(n->trace, trace, 16);
	}
}

void lin_os_add_event(struct lin_ostream *s, uint8_t what, uint64_t t, const char *cause,
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
	*e = (struct sevent){ .t = t,
			      .a = a,
			      .b = b,
			      .c = c,
			      .what = what,
			      .name = what == EV_MISUSE ? "lineage.misuse" : "lineage.loss" };
	memcpy(e->cause, cause, clen < sizeof(e->cause) - 1 ? clen : sizeof(e->cause) - 1);
}

void lin_os_process(struct lin_ostream *s, struct srec *r)
{
	switch (r->type) {
	case LIN_REC_REQUEST_BEGIN: on_request_begin(s, r); break;
	case LIN_REC_REQUEST_LINK: on_request_link(s, r); break;
	case LIN_REC_REQUEST_END: on_request_end(s, r); break;
	case LIN_REC_EPOCH_DECLARE: on_epoch_declare(s, r); break;
	case LIN_REC_EPOCH_REISSUE:
	case LIN_REC_EPOCH_RETIRE: on_epoch(s, r); break;
	case LIN_REC_TOKEN_ADOPT: on_adopt(s, r); break;
	case LIN_REC_SCOPE_CLOSE: on_scope_close(s, r); break;
	case LIN_REC_GRAPH_NODE:
	case LIN_REC_GRAPH_NODE_UPDATE: on_graph(s, r); break;
	case LIN_REC_MISUSE:
		lin_os_add_event(s, EV_MISUSE, F(r, 1), r->str, strlen(r->str), F(r, 2), F(r, 5),
				 F(r, 7));
		break;
	default: break;
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

void lin_os_heap_push(struct lin_ostream *s, const struct srec *r)
{
	struct srec *p = lin_vec_push(&s->heap);
	if (!p) {
		free(r->reqs);
		lin_os_fail(s, -ENOMEM, "out of memory");
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
		if (l + 1 < s->heap.n && rec_before(lin_vec_at(&s->heap, l + 1), lin_vec_at(&s->heap, m)))
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
void lin_os_drain_heap(struct lin_ostream *s, uint64_t watermark)
{
	while (s->heap.n && !s->failed) {
		const struct srec *top = lin_vec_at(&s->heap, 0);
		if (top->t > watermark && s->heap.n <= LIN_OSTREAM_MAX_HEAP)
			break;
		struct srec r;
		heap_pop(s, &r);
		lin_os_process(s, &r);
	}
}

void lin_os_write_process(struct lin_ostream *s)
{
	if (!doc_begin(s))
		return;
	struct lin_oj *w = &s->w;
	uint8_t trace[16];
	own_trace(s, 0, trace);
	char name[300];
	int n = snprintf(name, sizeof(name), "process %s:%llu", s->host, (unsigned long long)s->pid);
	uint64_t t0 = unix_ns(s, s->tmin == LIN_NIL ? 0 : s->tmin), t1 = unix_ns(s, s->tmax);
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

void lin_os_write_open(struct lin_ostream *s)
{
	size_t it = 0;
	struct lin_vkey k;
	uint64_t end = s->tmax;
	for (struct sadopt *a; (a = lin_vtab_next(&s->adopts, &it, &k));)
		lin_os_write_adopt(s, k.k0, k.k1, a, a->begin, false);
	it = 0;
	for (struct sepoch *e; (e = lin_vtab_next(&s->epochs, &it, &k));) {
		replay_info(s, k.k0, e);
		lin_os_write_epoch(s, k.k0, e, end, true);
	}
	it = 0;
	for (struct sreq *q; (q = lin_vtab_next(&s->reqs, &it, &k));)
		lin_os_write_request(s, k.k0, q, end, true);
}
