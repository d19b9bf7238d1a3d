/* SPDX-License-Identifier: MIT */
/*
 * spans.c - the OTLP stream's driver of the span model (trace/span_model.h): host records
 * put back in host-time order (a heap, processed up to each tick's watermark) and handed
 * to their handlers (a struct lin_rec_ops), the request, epoch, handoff and GPU span values
 * they fill, and the document writer. See otlp_stream.c for the rest.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch.h"
#include "ostate.h"
#include "span_model.h"
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

/* ---------------------------------------------------------------- the span model's values */

/* The stream's differences from the export (span_model.h, docs/fleet.md). */
#define STREAM_FLAGS (LIN_SP_GPU_OFFSET | LIN_SP_EPOCH_REQS_CAP | LIN_SP_EMPTY_AT_HOST_ZERO)

/* The process, as the span model sees it. */
static void sp_proc(struct lin_ostream *s, struct lin_sp_proc *p)
{
	*p = (struct lin_sp_proc){ .w = &s->w,
				   .clk = &s->clk,
				   .res = 0,
				   .key = s->key,
				   .tmin = s->tmin,
				   .tmax = s->tmax,
				   .host = s->host,
				   .backend = s->backend,
				   .service = s->service,
				   .host_clock = "CLOCK_MONOTONIC+CLOCK_REALTIME_offset",
				   .pid = s->pid,
				   .flags = STREAM_FLAGS };
}

void lin_os_seen(struct lin_ostream *s, uint64_t t)
{
	if (t == LIN_NIL)
		return;
	if (t < s->tmin)
		s->tmin = t;
	if (t > s->tmax)
		s->tmax = t;
}

/* The string @sid names, or NULL (*len 0). */
static const char *name_of(const struct lin_ostream *s, uint64_t sid, size_t *len)
{
	char *const *p = sid == LIN_NIL ? NULL : lin_vtab_find(&s->strs, sid, 0);
	*len = p && *p ? strlen(*p) : 0;
	return p ? *p : NULL;
}

void lin_os_resource(struct lin_oj *w, int res, void *user)
{
	(void)w;
	(void)res;
	struct lin_sp_proc p;
	sp_proc(user, &p);
	lin_sp_resource(&p);
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
	struct lin_sp_proc p;
	sp_proc(s, &p);
	struct lin_sp_request v = { .id = id,
				    .begin = q->begin,
				    .end = end,
				    .user_id = q->user_id,
				    .tid = q->tid,
				    .parent = q->parent,
				    .rparent = q->rparent,
				    .trace = q->trace,
				    .open = open,
				    .remote = q->remote };
	v.name = name_of(s, q->name_sid, &v.nlen);
	lin_sp_request(&p, &v);
}

static void req_trace(const void *user, uint32_t i, uint8_t out[16])
{
	const struct sepoch *e = user;
	memcpy(out, e->rtrace[i], 16);
}

/* A graph launch's replay epoch: the graph tracker writes graph_launch itself, so it may
 * come before or after the epoch's declaration; it is taken as it is decoded (always
 * before the epoch's retire, which the launching thread records after the launch) and the
 * span takes it when it is written, whenever that is: at its retire, at the close, or
 * when it is evicted open. */
static void replay_info(struct lin_ostream *s, uint64_t id, struct sepoch *e)
{
	uint64_t *rp = e->exec == LIN_NIL ? lin_vtab_find(&s->replays, id, 0) : NULL;
	if (!rp)
		return;
	e->exec = rp[0];
	e->ordinal = rp[1];
	lin_vtab_del(&s->replays, rp);
}

void lin_os_write_epoch(struct lin_ostream *s, uint64_t id, struct sepoch *e, uint64_t end, bool open)
{
	replay_info(s, id, e);
	if (!doc_begin(s))
		return;
	struct lin_sp_proc p;
	sp_proc(s, &p);
	struct lin_sp_epoch v = { .id = id,
				  .begin = e->begin,
				  .end = end,
				  .version = e->version,
				  .reissues = e->reissues,
				  .tid = e->tid,
				  .exec = e->exec,
				  .ordinal = e->ordinal,
				  .parent_epoch = e->parent_epoch,
				  .first_req = e->first_req,
				  .trace = e->trace,
				  .reqs = e->reqs,
				  .nreq = e->nreq,
				  .req_trace = req_trace,
				  .user = e,
				  .open = open };
	v.name = name_of(s, e->name_sid, &v.nlen);
	lin_sp_epoch(&p, &v);
}

void lin_os_write_adopt(struct lin_ostream *s, uint64_t tid, uint64_t depth, const struct sadopt *a,
			uint64_t end, bool closed)
{
	if (!doc_begin(s))
		return;
	struct lin_sp_proc p;
	sp_proc(s, &p);
	lin_sp_adopt(&p, &(struct lin_sp_adopt){ .begin = a->begin,
						 .end = end,
						 .tid = tid,
						 .depth = depth,
						 .capture_tid = a->capture_tid,
						 .target = a->target,
						 .kind = a->kind,
						 .trace = a->known ? a->trace : NULL,
						 .closed = closed });
}

/* @join: "observed", "ambiguous" (several epochs for its correlation) or "lost"
 * (no epoch within the retention time; lineage-validate on the trace names the cause).
 * @epoch: the epoch or request joined, with its @trace (NULL, LIN_NIL: none). */
void lin_os_write_gpu(struct lin_ostream *s, const struct sgpu *g, const uint8_t *trace,
		      uint64_t epoch, const char *join)
{
	if (!doc_begin(s))
		return;
	struct lin_sp_proc p;
	sp_proc(s, &p);
	bool ok = epoch != LIN_NIL;
	struct lin_sp_gpu v = {
		.offset = g->offset,
		.kind = g->kind,
		.start = g->start,
		.end = g->end,
		.parent = epoch,
		.trace = ok ? trace : NULL,
		.join = join,
		.status = ok                           ? NULL
			  : !strcmp(join, "ambiguous") ? "multiple_epochs" /* the validator's cause */
						       : "not_joined_in_stream",
		.device = g->device,
		.context = g->context,
		.stream = g->stream,
		.corr = g->corr,
		.graph = g->graph,
		.node = g->node,
		.bytes = g->bytes,
	};
	v.name = name_of(s, g->name_sid, &v.nlen);
	lin_sp_gpu(&p, &v);
	if (ok)
		s->st.gpu_joined++;
	else
		s->st.gpu_unjoined++;
}

/* ---------------------------------------------------------------- host records */

static void own_trace(const struct lin_ostream *s, uint64_t req, uint8_t out[16])
{
	lin_w3c_trace_id(s->key, req, out);
}

static void on_request_begin(void *arg, const struct lin_rec *r)
{
	struct lin_ostream *s = arg;
	uint64_t id = LIN_OPT(r, REQUEST_BEGIN, REQUEST);
	if (id == LIN_NIL || lin_vtab_find(&s->reqs, id, 0))
		return;
	struct sreq *q = lin_os_get(s, &s->reqs, id, 0);
	if (!q)
		return;
	*q = (struct sreq){ .begin = LIN_OPT(r, REQUEST_BEGIN, HOST_NS),
			    .tid = (uint32_t)LIN_OPT(r, REQUEST_BEGIN, TID),
			    .user_id = LIN_OPT(r, REQUEST_BEGIN, USER_ID),
			    .name_sid = LIN_OPT(r, REQUEST_BEGIN, NAME_SID),
			    .parent = LIN_OPT(r, REQUEST_BEGIN, PARENT_REQUEST),
			    .rparent = LIN_NIL };
	const struct sreq *p = q->parent == LIN_NIL ? NULL : lin_vtab_find(&s->reqs, q->parent, 0);
	if (p) {
		memcpy(q->trace, p->trace, 16);
	} else {
		own_trace(s, id, q->trace);
		q->parent = LIN_NIL; /* not a span of this stream */
	}
}

static void on_request_link(void *arg, const struct lin_rec *r)
{
	struct lin_ostream *s = arg;
	struct sreq *q = lin_vtab_find(&s->reqs, LIN_OPT(r, REQUEST_LINK, REQUEST), 0);
	uint64_t hi = LIN_OPT(r, REQUEST_LINK, TRACE_HI), lo = LIN_OPT(r, REQUEST_LINK, TRACE_LO);
	uint64_t ps = LIN_OPT(r, REQUEST_LINK, PARENT_SPAN), fl = LIN_OPT(r, REQUEST_LINK, TRACE_FLAGS);
	if (!q || hi == LIN_NIL || lo == LIN_NIL || !(hi | lo) || !ps || ps == LIN_NIL || fl > 255)
		return;
	lin_w3c_put64(q->trace, hi);
	lin_w3c_put64(q->trace + 8, lo);
	q->rparent = ps;
	q->remote = true;
}

static void on_request_end(void *arg, const struct lin_rec *r)
{
	struct lin_ostream *s = arg;
	uint64_t id = LIN_OPT(r, REQUEST_END, REQUEST), t = LIN_OPT(r, REQUEST_END, HOST_NS);
	struct sreq *q = lin_vtab_find(&s->reqs, id, 0);
	if (!q)
		return;
	lin_os_write_request(s, id, q, t, false);
	struct sdone *d = lin_os_get(s, &s->done, id, 0);
	if (d) { /* GPU records whose external correlation names it may still come */
		d->t = t;
		memcpy(d->trace, q->trace, 16);
	}
	lin_vtab_del(&s->reqs, q); /* still valid: only another table was written */
}

/* The requests @r serves, their ids and traces (one allocation: free(ids)); NULL when it
 * serves none or on failure (*@fail). */
static uint64_t *epoch_reqs(struct lin_ostream *s, const struct lin_rec *r, bool *fail)
{
	uint32_t n = r->nreqs;
	*fail = false;
	if (!n)
		return NULL;
	uint64_t *ids = calloc(n, sizeof(uint64_t) + 16);
	if (!ids) {
		lin_os_fail(s, -ENOMEM, "out of memory");
		*fail = true;
		return NULL;
	}
	uint8_t(*traces)[16] = (uint8_t(*)[16])(ids + n);
	for (uint32_t i = 0; i < n; i++) {
		ids[i] = r->reqs[i];
		const struct sreq *q = lin_vtab_find(&s->reqs, ids[i], 0);
		if (q)
			memcpy(traces[i], q->trace, 16);
		else
			own_trace(s, ids[i], traces[i]);
	}
	return ids;
}

/* Its trace and parent: the parent epoch's, else the first request's (that request's
 * trace and span, whether its span is open here, written already, or still to come: a
 * parent is always in its child's trace), else the process's. */
static void epoch_parent(struct lin_ostream *s, struct sepoch *e, uint64_t pid)
{
	const struct sepoch *pe = pid == LIN_NIL ? NULL : lin_vtab_find(&s->epochs, pid, 0);
	e->parent_epoch = e->first_req = LIN_NIL;
	if (pe) {
		memcpy(e->trace, pe->trace, 16);
		e->parent_epoch = pid;
	} else if (e->nreq) {
		memcpy(e->trace, e->rtrace[0], 16);
		e->first_req = e->reqs[0];
	} else {
		own_trace(s, 0, e->trace);
	}
}

static void on_epoch_declare(void *arg, const struct lin_rec *r)
{
	struct lin_ostream *s = arg;
	uint64_t id = LIN_OPT(r, EPOCH_DECLARE, EPOCH);
	if (id == LIN_NIL || lin_vtab_find(&s->epochs, id, 0))
		return;
	bool fail;
	uint64_t *reqs = epoch_reqs(s, r, &fail);
	if (fail)
		return;
	struct sepoch *e = lin_os_get(s, &s->epochs, id, 0);
	if (!e) {
		free(reqs);
		return;
	}
	*e = (struct sepoch){ .begin = LIN_OPT(r, EPOCH_DECLARE, HOST_NS),
			      .tid = (uint32_t)LIN_OPT(r, EPOCH_DECLARE, TID),
			      .version = (uint32_t)LIN_OPT(r, EPOCH_DECLARE, VERSION),
			      .name_sid = LIN_OPT(r, EPOCH_DECLARE, NAME_SID),
			      .reqs = reqs,
			      .rtrace = reqs ? (uint8_t(*)[16])(reqs + r->nreqs) : NULL,
			      .nreq = reqs ? r->nreqs : 0,
			      .exec = LIN_NIL,
			      .ordinal = LIN_NIL };
	epoch_parent(s, e, LIN_OPT(r, EPOCH_DECLARE, PARENT_EPOCH));
	replay_info(s, id, e); /* its graph_launch came first */
}

/* Epoch reissue or retire (the EPOCH_CHANGE view): its epoch, now at the record's version. */
static struct sepoch *epoch_change(struct lin_ostream *s, const struct lin_rec *r)
{
	struct sepoch *e = lin_vtab_find(&s->epochs, LIN_OPT(r, EPOCH_CHANGE, EPOCH), 0);
	if (e)
		e->version = (uint32_t)LIN_OPT(r, EPOCH_CHANGE, VERSION);
	return e;
}

static void on_epoch_reissue(void *arg, const struct lin_rec *r)
{
	struct sepoch *e = epoch_change(arg, r);
	if (e)
		e->reissues++;
}

static void on_epoch_retire(void *arg, const struct lin_rec *r)
{
	struct lin_ostream *s = arg;
	struct sepoch *e = epoch_change(s, r);
	if (!e)
		return;
	uint64_t id = LIN_OPT(r, EPOCH_RETIRE, EPOCH), t = LIN_OPT(r, EPOCH_RETIRE, HOST_NS);
	lin_os_write_epoch(s, id, e, t, false);
	struct sdone *d = lin_os_get(s, &s->done, id, 0);
	if (d) { /* its GPU records may still be on their way */
		d->t = t;
		memcpy(d->trace, e->trace, 16);
	}
	free(e->reqs); /* e is still valid: only another table was written */
	lin_vtab_del(&s->epochs, e);
}

/* The trace of the request or epoch @id an adopt targets: open, or retired (ended) within
 * the retention time (late work adopted after it). Requests and epochs share one id
 * space. Return: false when it is none of these (the process's). */
static bool target_trace(const struct lin_ostream *s, uint32_t kind, uint64_t id, uint8_t trace[16])
{
	const struct sreq *q = kind == LIN_TARGET_REQUEST ? lin_vtab_find(&s->reqs, id, 0) : NULL;
	const struct sepoch *e = kind == LIN_TARGET_EPOCH ? lin_vtab_find(&s->epochs, id, 0) : NULL;
	const struct sdone *d = !q && !e ? lin_vtab_find(&s->done, id, 0) : NULL;
	const uint8_t *t = q ? q->trace : e ? e->trace : d ? d->trace : NULL;
	if (t)
		memcpy(trace, t, 16);
	return t != NULL;
}

static void on_adopt(void *arg, const struct lin_rec *r)
{
	struct lin_ostream *s = arg;
	uint64_t tid = LIN_OPT(r, TOKEN_ADOPT, TID), depth = LIN_OPT(r, TOKEN_ADOPT, DEPTH);
	bool fresh;
	struct sadopt *a = lin_vtab_get(&s->adopts, tid, depth, &fresh);
	if (!a) {
		lin_os_fail(s, -ENOMEM, "out of memory");
		return;
	}
	if (!fresh) /* never closed (the thread exited with it open): written as it was */
		lin_os_write_adopt(s, tid, depth, a, a->begin, false);
	*a = (struct sadopt){ .begin = LIN_OPT(r, TOKEN_ADOPT, HOST_NS),
			      .kind = (uint32_t)LIN_OPT(r, TOKEN_ADOPT, TARGET_KIND),
			      .target = LIN_OPT(r, TOKEN_ADOPT, TARGET),
			      .capture_tid = LIN_OPT(r, TOKEN_ADOPT, CAPTURE_TID) };
	a->known = target_trace(s, a->kind, a->target, a->trace);
}

static void on_scope_close(void *arg, const struct lin_rec *r)
{
	struct lin_ostream *s = arg;
	uint64_t tid = LIN_OPT(r, SCOPE_CLOSE, TID), depth = LIN_OPT(r, SCOPE_CLOSE, DEPTH);
	struct sadopt *a = lin_vtab_find(&s->adopts, tid, depth);
	if (!a || a->target != LIN_OPT(r, SCOPE_CLOSE, TARGET))
		return;
	uint64_t t = LIN_OPT(r, SCOPE_CLOSE, HOST_NS);
	lin_os_write_adopt(s, tid, depth, a, t == LIN_NIL ? a->begin : t, true); /* untimed: ends at adopt */
	lin_vtab_del(&s->adopts, a);
}

static void on_misuse(void *arg, const struct lin_rec *r)
{
	lin_os_add_event(arg, EV_MISUSE, LIN_OPT(r, MISUSE, HOST_NS), r->str, r->str_len,
			 LIN_OPT(r, MISUSE, TID), LIN_OPT(r, MISUSE, TARGET),
			 LIN_OPT(r, MISUSE, DETAIL));
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

/* The host records that make spans, in host-time order (the heap's); struct srec keeps
 * each one's fields. */
#define FITS(R) (LIN_F_##R##__N <= LIN_OS_HOST_FIELDS)
_Static_assert(FITS(REQUEST_BEGIN) && FITS(REQUEST_LINK) && FITS(REQUEST_END) &&
		       FITS(EPOCH_DECLARE) && FITS(EPOCH_REISSUE) && FITS(EPOCH_RETIRE) &&
		       FITS(TOKEN_ADOPT) && FITS(SCOPE_CLOSE) && FITS(MISUSE),
	       "a host record's fields do not fit struct srec");
static const struct lin_rec_ops host_ops = {
	.on = {
		[LIN_REC_REQUEST_BEGIN] = on_request_begin,
		[LIN_REC_REQUEST_LINK] = on_request_link,
		[LIN_REC_REQUEST_END] = on_request_end,
		[LIN_REC_EPOCH_DECLARE] = on_epoch_declare,
		[LIN_REC_EPOCH_REISSUE] = on_epoch_reissue,
		[LIN_REC_EPOCH_RETIRE] = on_epoch_retire,
		[LIN_REC_TOKEN_ADOPT] = on_adopt,
		[LIN_REC_SCOPE_CLOSE] = on_scope_close,
		[LIN_REC_MISUSE] = on_misuse,
	},
};

/* The record @q keeps, as the reader decoded it, into @r (reqs: taken and freed). */
static void heap_rec(struct srec *q, struct lin_rec *r)
{
	r->type = q->type;
	r->known = true;
	r->nfields = q->nfields;
	r->nil = q->nil;
	memcpy(r->f, q->f, sizeof(q->f));
	r->str = q->str;
	r->str_len = (uint32_t)strlen(q->str);
	r->nreqs = q->nreq;
	if (q->nreq)
		memcpy(r->reqs, q->reqs, q->nreq * sizeof(uint64_t));
	r->offset = r->index = 0;
	free(q->reqs);
	q->reqs = NULL;
}

/* One host record, in its turn. The decoder's record is free between decode calls (the
 * heap is drained after decoding, never during it): the record is rebuilt there. */
void lin_os_process(struct lin_ostream *s, struct srec *q)
{
	heap_rec(q, s->rec);
	lin_rec_dispatch(&host_ops, s, s->rec);
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

/* The process span's events: misuse records and dropped-record losses (at its end). */
struct proc_events {
	struct lin_ostream *s;
	const struct lin_sp_proc *p;
};

static void write_events(void *user, struct lin_oj *w, uint64_t t0, uint64_t t1)
{
	(void)t0;
	const struct proc_events *pe = user;
	struct lin_ostream *s = pe->s;
	for (size_t i = 0; i < s->events.n; i++) {
		const struct sevent *e = lin_vec_at(&s->events, i);
		lin_oj_event_open(w, e->what == EV_MISUSE ? lin_sp_host_unix(pe->p, e->t) : t1, e->name);
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
}

void lin_os_write_process(struct lin_ostream *s)
{
	if (!doc_begin(s))
		return;
	struct lin_sp_proc p;
	sp_proc(s, &p);
	struct proc_events pe = { s, &p };
	lin_sp_process(&p, &(struct lin_sp_process){ .events_dropped = s->events_over,
						     .skipped_bytes = s->dropped_bytes,
						     .events = write_events,
						     .user = &pe });
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
		lin_os_write_epoch(s, k.k0, e, end, true);
	}
	it = 0;
	for (struct sreq *q; (q = lin_vtab_next(&s->reqs, &it, &k));)
		lin_os_write_request(s, k.k0, q, end, true);
}
