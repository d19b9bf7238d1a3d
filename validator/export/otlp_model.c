/* SPDX-License-Identifier: MIT */
/*
 * otlp_model.c - read lineage trace files into the exporter's span model: requests,
 * epochs, handoffs (token adopt .. scope close) and GPU records, plus every finding of a
 * validator run over the same files and its verdict on each GPU record (otlp_find.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch.h"
#include "lineage/trace_format.h"
#include "lineage/w3c.h"
#include "otlp_model.h"
#include "reader.h"
#include "span_model.h"

#define MAX_CHAIN 64

/* What a record handler is given: the model, and the process and file being read. */
struct mctx {
	struct xmodel *m;
	uint16_t proc;
	uint32_t file;
};

static void *push(struct xmodel *m, struct lin_vec *v)
{
	void *p = lin_vec_push(v);
	if (!p)
		m->oom = true;
	return p;
}

static void ix_put(struct xmodel *m, struct lin_vtab *t, uint64_t k0, uint64_t k1, uint64_t val,
		   bool keep_first)
{
	bool fresh;
	uint64_t *p = lin_vtab_get(t, k0, k1, &fresh);
	if (!p) {
		m->oom = true;
		return;
	}
	if (fresh || !keep_first)
		*p = val;
}

static uint64_t ix_get(const struct lin_vtab *t, uint64_t k0, uint64_t k1)
{
	const uint64_t *p = lin_vtab_find(t, k0, k1);
	return p ? *p : LIN_NIL;
}

static int proc_of(struct xmodel *m, const struct lin_header *h)
{
	for (unsigned i = 0; i < m->nprocs; i++)
		if (m->procs[i].pid == h->pid && !strcmp(m->procs[i].host, h->host))
			return (int)i;
	if (m->nprocs >= 65535u)
		return -1;
	struct xproc *np = realloc(m->procs, (m->nprocs + 1) * sizeof(*np));
	if (!np) {
		m->oom = true;
		return -1;
	}
	m->procs = np;
	struct xproc *p = &np[m->nprocs];
	memset(p, 0, sizeof(*p));
	snprintf(p->host, sizeof(p->host), "%s", h->host);
	snprintf(p->backend, sizeof(p->backend), "%s", h->backend);
	p->pid = h->pid;
	p->key = lin_w3c_proc_key(h->host, h->pid);
	lin_oj_clock_init(&p->clk);
	p->clk.dev_host = h->device_clock_host;
	p->clk.have_unix = h->start_unix_ns != 0;
	p->clk.unix_off = (int64_t)(h->start_unix_ns - h->start_host_ns);
	p->tmin = LIN_NIL;
	p->tmax = 0;
	return (int)m->nprocs++;
}

static void seen_time(struct xproc *p, uint64_t t)
{
	if (t == LIN_NIL)
		return;
	if (t < p->tmin)
		p->tmin = t;
	if (t > p->tmax)
		p->tmax = t;
}

/*
 * The writer drains thread by thread, so a request's end (or an epoch's retire or reissue)
 * written by one thread can come before its begin, written by another, in the file. Such a
 * record is kept and applied once every file is read.
 */
static void defer(const struct mctx *c, uint32_t type, uint64_t t, uint64_t id, uint64_t version)
{
	struct xlate *l = push(c->m, &c->m->late);
	if (l)
		*l = (struct xlate){ .t = t, .id = id, .version = version, .type = type, .proc = c->proc };
}

static bool end_request(struct xmodel *m, uint16_t proc, uint64_t id, uint64_t t)
{
	struct xreq *q = lin_xmodel_req(m, proc, id);
	if (q && !q->has_end) {
		q->end = t;
		q->has_end = true;
	}
	return q != NULL;
}

static bool end_epoch(struct xmodel *m, uint16_t proc, uint32_t type, uint64_t id, uint64_t t,
		      uint64_t version)
{
	struct xepoch *e = lin_xmodel_epoch(m, proc, id);
	if (!e)
		return false;
	if (version > e->version) /* deferred records arrive out of order */
		e->version = (uint32_t)version;
	if (type == LIN_REC_EPOCH_REISSUE)
		e->reissues++;
	else if (!e->has_end) {
		e->end = t;
		e->has_end = true;
	}
	return true;
}

static void apply_late(struct xmodel *m)
{
	for (size_t i = 0; i < m->late.n; i++) {
		const struct xlate *l = lin_vec_at(&m->late, i);
		if (l->type == LIN_REC_REQUEST_END)
			(void)end_request(m, l->proc, l->id, l->t);
		else
			(void)end_epoch(m, l->proc, l->type, l->id, l->t, l->version);
	}
}

/* The process's time range: every host record's host time. */
static void seen(const struct mctx *c, uint64_t t) { seen_time(&c->m->procs[c->proc], t); }

/* Misuse, launch, token capture: their host time only. */
static void on_host(void *arg, const struct lin_rec *r) { seen(arg, LIN_OPT(r, HOST, HOST_NS)); }

static void on_trace_end(void *arg, const struct lin_rec *r)
{
	seen(arg, LIN_OPT(r, TRACE_END, HOST_NS));
}

static void on_request_begin(void *arg, const struct lin_rec *r)
{
	const struct mctx *c = arg;
	struct xmodel *m = c->m;
	uint64_t id = LIN_GET(r, REQUEST_BEGIN, REQUEST);
	seen(c, LIN_GET(r, REQUEST_BEGIN, HOST_NS));
	if (lin_xmodel_req(m, c->proc, id))
		return; /* a duplicate: the first declaration stands */
	struct xreq *q = push(m, &m->reqs);
	if (!q)
		return;
	*q = (struct xreq){ .id = id,
			    .begin = LIN_GET(r, REQUEST_BEGIN, HOST_NS),
			    .parent = LIN_OPT(r, REQUEST_BEGIN, PARENT_REQUEST),
			    .user_id = LIN_OPT(r, REQUEST_BEGIN, USER_ID),
			    .name_sid = LIN_OPT(r, REQUEST_BEGIN, NAME_SID),
			    .tid = (uint32_t)LIN_GET(r, REQUEST_BEGIN, TID),
			    .proc = c->proc };
	ix_put(m, &m->req_ix, c->proc, id, m->reqs.n - 1, true);
}

static void on_request_end(void *arg, const struct lin_rec *r)
{
	const struct mctx *c = arg;
	uint64_t t = LIN_GET(r, REQUEST_END, HOST_NS), id = LIN_GET(r, REQUEST_END, REQUEST);
	seen(c, t);
	if (!end_request(c->m, c->proc, id, t))
		defer(c, r->type, t, id, 0);
}

static void on_epoch_declare(void *arg, const struct lin_rec *r)
{
	const struct mctx *c = arg;
	struct xmodel *m = c->m;
	uint64_t id = LIN_GET(r, EPOCH_DECLARE, EPOCH);
	seen(c, LIN_GET(r, EPOCH_DECLARE, HOST_NS));
	struct xepoch *e = lin_xmodel_epoch(m, c->proc, id);
	if (e)
		return;
	e = push(m, &m->epochs);
	if (!e)
		return;
	*e = (struct xepoch){ .id = id,
			      .begin = LIN_GET(r, EPOCH_DECLARE, HOST_NS),
			      .parent = LIN_OPT(r, EPOCH_DECLARE, PARENT_EPOCH),
			      .name_sid = LIN_OPT(r, EPOCH_DECLARE, NAME_SID),
			      .reqs = m->reqpool.n,
			      .exec = LIN_NIL,
			      .ordinal = LIN_NIL,
			      .version = (uint32_t)LIN_GET(r, EPOCH_DECLARE, VERSION),
			      .nreq = r->nreqs,
			      .tid = (uint32_t)LIN_GET(r, EPOCH_DECLARE, TID),
			      .proc = c->proc };
	ix_put(m, &m->ep_ix, c->proc, id, m->epochs.n - 1, true);
	for (uint32_t i = 0; i < r->nreqs; i++) {
		uint64_t *p = push(m, &m->reqpool);
		if (p)
			*p = r->reqs[i];
	}
}

/* A reissue or a retire of epoch @id at @t. */
static void epoch_end(const struct mctx *c, uint32_t type, uint64_t t, uint64_t id, uint64_t version)
{
	seen(c, t);
	if (!end_epoch(c->m, c->proc, type, id, t, version))
		defer(c, type, t, id, version);
}

static void on_epoch_reissue(void *arg, const struct lin_rec *r)
{
	epoch_end(arg, r->type, LIN_GET(r, EPOCH_REISSUE, HOST_NS),
		  LIN_GET(r, EPOCH_REISSUE, EPOCH), LIN_GET(r, EPOCH_REISSUE, VERSION));
}

static void on_epoch_retire(void *arg, const struct lin_rec *r)
{
	epoch_end(arg, r->type, LIN_GET(r, EPOCH_RETIRE, HOST_NS), LIN_GET(r, EPOCH_RETIRE, EPOCH),
		  LIN_GET(r, EPOCH_RETIRE, VERSION));
}

/* The context a request arrived with (format 1.1). Invalid ids leave the request local;
 * the validator reports them as bad_request_link. */
static void on_link(void *arg, const struct lin_rec *r)
{
	const struct mctx *c = arg;
	uint64_t hi = LIN_GET(r, REQUEST_LINK, TRACE_HI), lo = LIN_GET(r, REQUEST_LINK, TRACE_LO);
	uint64_t parent = LIN_GET(r, REQUEST_LINK, PARENT_SPAN);
	seen(c, LIN_GET(r, REQUEST_LINK, HOST_NS));
	struct xreq *q = lin_xmodel_req(c->m, c->proc, LIN_GET(r, REQUEST_LINK, REQUEST));
	if (!q || q->remote || !LIN_LINK_VALID(r))
		return;
	lin_w3c_put64(q->rtrace, hi);
	lin_w3c_put64(q->rtrace + 8, lo);
	q->rparent = parent;
	q->remote = true;
}

static void on_adopt(void *arg, const struct lin_rec *r)
{
	const struct mctx *c = arg;
	seen(c, LIN_GET(r, TOKEN_ADOPT, HOST_NS));
	struct xadopt *a = push(c->m, &c->m->adopts);
	if (a)
		*a = (struct xadopt){ .begin = LIN_GET(r, TOKEN_ADOPT, HOST_NS),
				      .end = LIN_GET(r, TOKEN_ADOPT, HOST_NS),
				      .target = LIN_GET(r, TOKEN_ADOPT, TARGET),
				      .capture_tid = LIN_OPT(r, TOKEN_ADOPT, CAPTURE_TID),
				      .tid = (uint32_t)LIN_GET(r, TOKEN_ADOPT, TID),
				      .depth = (uint32_t)LIN_GET(r, TOKEN_ADOPT, DEPTH),
				      .kind = (uint32_t)LIN_GET(r, TOKEN_ADOPT, TARGET_KIND),
				      .proc = c->proc };
}

/* The latest open adopt of this thread, depth and target, closes. */
static void on_scope_close(void *arg, const struct lin_rec *r)
{
	const struct mctx *c = arg;
	struct xmodel *m = c->m;
	seen(c, LIN_OPT(r, SCOPE_CLOSE, HOST_NS));
	size_t lo = m->adopts.n > 65536 ? m->adopts.n - 65536 : 0;
	for (size_t i = m->adopts.n; i-- > lo;) {
		struct xadopt *a = lin_vec_at(&m->adopts, i);
		if (a->proc == c->proc && a->tid == LIN_GET(r, SCOPE_CLOSE, TID) && !a->closed &&
		    a->depth == LIN_GET(r, SCOPE_CLOSE, DEPTH) &&
		    a->target == LIN_GET(r, SCOPE_CLOSE, TARGET)) {
			/* untimed close (lean timestamps): the span ends at its adopt */
			if (!LIN_IS_NIL(r, SCOPE_CLOSE, HOST_NS))
				a->end = LIN_GET(r, SCOPE_CLOSE, HOST_NS);
			a->closed = true;
			return;
		}
	}
}

/* A kernel, memcpy or memset: the fields they share (the GPU view), and @graph, @node,
 * @name_sid, @bytes of its own. */
static void gpu(const struct mctx *c, const struct lin_rec *r, uint64_t graph, uint64_t node,
		uint64_t name_sid, uint64_t bytes)
{
	struct xmodel *m = c->m;
	struct xgpu *g = push(m, &m->gpus);
	if (!g)
		return;
	*g = (struct xgpu){ .corr = LIN_OPT(r, GPU, CORRELATION),
			    .start = LIN_OPT(r, GPU, START_DEV),
			    .end = LIN_OPT(r, GPU, END_DEV),
			    .graph = graph,
			    .node = node,
			    .name_sid = name_sid,
			    .offset = r->offset,
			    .bytes = bytes,
			    .device = (uint32_t)LIN_GET(r, GPU, DEVICE),
			    .epoch = LIN_NIL,
			    .context = (uint32_t)LIN_GET(r, GPU, CONTEXT),
			    .stream = (uint32_t)LIN_GET(r, GPU, STREAM),
			    .file = c->file,
			    .proc = c->proc,
			    .kind = (uint8_t)r->type };
	struct xproc *p = &m->procs[c->proc];
	bool known = false;
	for (uint32_t i = 0; i < p->ndev && i < 8; i++)
		known |= p->dev[i] == g->device;
	if (!known && p->ndev < 8)
		p->dev[p->ndev++] = g->device;
}

static void on_kernel(void *arg, const struct lin_rec *r)
{
	gpu(arg, r, LIN_OPT(r, KERNEL, GRAPH_ID), LIN_OPT(r, KERNEL, GRAPH_NODE_ID),
	    LIN_OPT(r, KERNEL, NAME_SID), LIN_NIL);
}

static void on_memcpy(void *arg, const struct lin_rec *r)
{
	gpu(arg, r, LIN_OPT(r, MEMCPY, GRAPH_ID), LIN_OPT(r, MEMCPY, GRAPH_NODE_ID), LIN_NIL,
	    LIN_GET(r, MEMCPY, BYTES));
}

static void on_memset(void *arg, const struct lin_rec *r)
{
	gpu(arg, r, LIN_OPT(r, MEMSET, GRAPH_ID), LIN_OPT(r, MEMSET, GRAPH_NODE_ID), LIN_NIL,
	    LIN_GET(r, MEMSET, BYTES));
}

static void on_string(void *arg, const struct lin_rec *r)
{
	const struct mctx *c = arg;
	struct xmodel *m = c->m;
	uint64_t sid = LIN_GET(r, STRING, SID);
	if (lin_vtab_find(&m->str_ix, c->proc, sid))
		return;
	uint64_t off = m->chars.n;
	for (uint32_t i = 0; i < r->str_len; i++) {
		char *ch = push(m, &m->chars);
		if (!ch)
			return;
		*ch = r->str[i];
	}
	ix_put(m, &m->str_ix, c->proc, sid, off << 24 | (r->str_len & 0xffffffu), true);
}

/* Its replay epoch is declared just after. */
static void on_graph_launch(void *arg, const struct lin_rec *r)
{
	const struct mctx *c = arg;
	uint64_t replay = LIN_GET(r, GRAPH_LAUNCH, REPLAY_EPOCH);
	seen(c, LIN_GET(r, GRAPH_LAUNCH, HOST_NS));
	ix_put(c->m, &c->m->rep_exec_ix, c->proc, replay, LIN_GET(r, GRAPH_LAUNCH, EXEC_ID), true);
	ix_put(c->m, &c->m->rep_ord_ix, c->proc, replay, LIN_GET(r, GRAPH_LAUNCH, REPLAY_ORDINAL), true);
}

/* Every pair, as the validator maps (trace/clockmap.h). */
static void on_clock(void *arg, const struct lin_rec *r)
{
	const struct mctx *c = arg;
	if (!lin_cm_add(&c->m->procs[c->proc].clk.map, LIN_GET(r, CLOCK, HOST_NS),
			LIN_GET(r, CLOCK, DEVICE_NS), LIN_OPT(r, CLOCK, HOST_AFTER_NS)))
		c->m->oom = true;
}

static const struct lin_rec_ops model_ops = {
	.on = {
		[LIN_REC_REQUEST_BEGIN] = on_request_begin,
		[LIN_REC_REQUEST_END] = on_request_end,
		[LIN_REC_EPOCH_DECLARE] = on_epoch_declare,
		[LIN_REC_EPOCH_REISSUE] = on_epoch_reissue,
		[LIN_REC_EPOCH_RETIRE] = on_epoch_retire,
		[LIN_REC_TOKEN_CAPTURE] = on_host,
		[LIN_REC_TOKEN_ADOPT] = on_adopt,
		[LIN_REC_SCOPE_CLOSE] = on_scope_close,
		[LIN_REC_MISUSE] = on_host,
		[LIN_REC_LAUNCH] = on_host,
		[LIN_REC_STRING] = on_string,
		[LIN_REC_REQUEST_LINK] = on_link,
		[LIN_REC_KERNEL] = on_kernel,
		[LIN_REC_MEMCPY] = on_memcpy,
		[LIN_REC_MEMSET] = on_memset,
		[LIN_REC_GRAPH_LAUNCH] = on_graph_launch,
		[LIN_REC_CLOCK] = on_clock,
		[LIN_REC_TRACE_END] = on_trace_end,
	},
};

static void load_file(struct xmodel *m, const char *path, uint32_t file, struct lin_rec *rec)
{
	struct lin_reader *r = lin_reader_open(path);
	if (!r) {
		m->oom = true;
		return;
	}
	struct lin_header h;
	int proc = -1;
	if (lin_reader_header(r, LIN_TRACE_FORMAT_NAME, &h) == 0)
		proc = proc_of(m, &h);
	m->file_proc[file] = proc;
	struct mctx c = { .m = m, .proc = (uint16_t)proc, .file = file };
	while (proc >= 0 && !m->oom && lin_reader_next(r, rec) == LIN_READ_RECORD)
		lin_rec_dispatch(&model_ops, &c, rec);
	lin_reader_free(r);
}

/* A request begun from a received traceparent, as writers of format 1.0 recorded it in its
 * name (1.1 writes a request_link record): lin_sp_w3c_name. */
static void remote_name(struct xmodel *m, struct xreq *q)
{
	uint32_t len;
	const char *s = lin_xmodel_str(m, q->proc, q->name_sid, &len);
	if (!s || !lin_sp_w3c_name(s, len, q->rtrace, &q->rparent))
		return;
	q->remote = true;
	q->rname = true;
}

static void index_spans(struct xmodel *m)
{
	for (size_t i = 0; i < m->gpus.n; i++) {
		const struct xgpu *g = lin_vec_at(&m->gpus, i);
		for (uint64_t f = ix_get(&m->find_ix, g->file, g->offset); f != LIN_NIL;) {
			struct xfind *x = lin_vec_at(&m->finds, f);
			x->on_gpu = true;
			f = x->next;
		}
	}
	for (size_t i = 0; i < m->reqs.n; i++) {
		const struct xreq *q = lin_vec_at(&m->reqs, i);
		ix_put(m, &m->span_ix, lin_w3c_span_id(m->procs[q->proc].key, q->id), 0,
		       (uint64_t)q->proc << 33 | i, true);
	}
	for (size_t i = 0; i < m->epochs.n; i++) {
		struct xepoch *e = lin_vec_at(&m->epochs, i);
		e->exec = ix_get(&m->rep_exec_ix, e->proc, e->id);
		e->ordinal = ix_get(&m->rep_ord_ix, e->proc, e->id);
		ix_put(m, &m->span_ix, lin_w3c_span_id(m->procs[e->proc].key, e->id), 0,
		       (uint64_t)e->proc << 33 | 1ull << 32 | i, true);
	}
	for (size_t i = 0; i < m->reqs.n; i++) {
		struct xreq *q = lin_vec_at(&m->reqs, i);
		if (!q->remote)
			remote_name(m, q);
		uint64_t at = q->remote ? ix_get(&m->span_ix, q->rparent, 0) : LIN_NIL;
		q->joined = at != LIN_NIL && (at >> 33) != q->proc;
	}
}

int lin_xmodel_load(struct xmodel *m, const char *const *files, int n)
{
	memset(m, 0, sizeof(*m));
	struct lin_vec *vecs[] = { &m->reqs,    &m->epochs, &m->adopts, &m->gpus,
				   &m->reqpool, &m->chars,  &m->finds,  &m->late };
	size_t sizes[] = { sizeof(struct xreq),  sizeof(struct xepoch), sizeof(struct xadopt),
			   sizeof(struct xgpu),  sizeof(uint64_t),      1,
			   sizeof(struct xfind), sizeof(struct xlate) };
	for (size_t i = 0; i < 8; i++)
		lin_vec_init(vecs[i], sizes[i]);
	struct lin_vtab *tabs[] = { &m->req_ix,  &m->ep_ix,       &m->str_ix,    &m->find_ix,
				    &m->span_ix, &m->rep_exec_ix, &m->rep_ord_ix };
	for (size_t i = 0; i < 7; i++)
		lin_vtab_init(tabs[i], sizeof(uint64_t));
	struct lin_rec *rec = malloc(sizeof(*rec));
	m->file_proc = calloc(n ? (size_t)n : 1, sizeof(int));
	if (!rec || !m->file_proc) {
		free(rec);
		return -2;
	}
	for (int i = 0; i < n && !m->oom; i++)
		load_file(m, files[i], (uint32_t)i, rec);
	free(rec);
	for (unsigned i = 0; i < m->nprocs; i++)
		lin_cm_finish(&m->procs[i].clk.map);
	apply_late(m);
	if (!m->oom)
		lin_xmodel_load_findings(m, files, n);
	if (!m->oom)
		index_spans(m);
	return m->oom ? -2 : 0;
}

void lin_xmodel_free(struct xmodel *m)
{
	struct lin_vec *vecs[] = { &m->reqs,    &m->epochs, &m->adopts, &m->gpus,
				   &m->reqpool, &m->chars,  &m->finds,  &m->late };
	for (size_t i = 0; i < 8; i++)
		lin_vec_free(vecs[i]);
	struct lin_vtab *tabs[] = { &m->req_ix,  &m->ep_ix,       &m->str_ix,    &m->find_ix,
				    &m->span_ix, &m->rep_exec_ix, &m->rep_ord_ix };
	for (size_t i = 0; i < 7; i++)
		lin_vtab_free(tabs[i]);
	for (unsigned i = 0; i < m->nprocs; i++)
		lin_oj_clock_free(&m->procs[i].clk);
	free(m->procs);
	free(m->file_proc);
}

const char *lin_xmodel_str(const struct xmodel *m, uint16_t proc, uint64_t sid, uint32_t *len)
{
	uint64_t v = sid == LIN_NIL ? LIN_NIL : ix_get(&m->str_ix, proc, sid);
	if (v == LIN_NIL)
		return NULL;
	*len = (uint32_t)(v & 0xffffffu);
	return (const char *)m->chars.data + (v >> 24);
}

struct xreq *lin_xmodel_req(const struct xmodel *m, uint16_t proc, uint64_t id)
{
	uint64_t i = ix_get(&m->req_ix, proc, id);
	return i == LIN_NIL ? NULL : lin_vec_at(&m->reqs, i);
}

struct xepoch *lin_xmodel_epoch(const struct xmodel *m, uint16_t proc, uint64_t id)
{
	uint64_t i = id == LIN_NIL ? LIN_NIL : ix_get(&m->ep_ix, proc, id);
	return i == LIN_NIL ? NULL : lin_vec_at(&m->epochs, i);
}

const uint64_t *lin_xmodel_reqs(const struct xmodel *m, const struct xepoch *e)
{
	return e->nreq ? lin_vec_at(&m->reqpool, e->reqs) : NULL;
}

struct xepoch *lin_xmodel_gpu_epoch(const struct xmodel *m, const struct xgpu *g)
{
	if (g->join != LIN_JOIN_OBSERVED && g->join != LIN_JOIN_INFERRED)
		return NULL;
	return lin_xmodel_epoch(m, g->proc, g->epoch);
}

void lin_xmodel_req_trace(const struct xmodel *m, const struct xreq *r, uint8_t out[16])
{
	for (int i = 0; i < MAX_CHAIN && r->parent != LIN_NIL; i++) {
		if (r->remote)
			break;
		const struct xreq *p = lin_xmodel_req(m, r->proc, r->parent);
		if (!p)
			break;
		r = p;
	}
	if (r->remote)
		memcpy(out, r->rtrace, 16);
	else
		lin_w3c_trace_id(m->procs[r->proc].key, r->id, out);
}

struct xreq *lin_xmodel_epoch_root(const struct xmodel *m, const struct xepoch *e)
{
	for (int i = 0; i < MAX_CHAIN && e->parent != LIN_NIL; i++) {
		const struct xepoch *p = lin_xmodel_epoch(m, e->proc, e->parent);
		if (!p)
			break;
		e = p;
	}
	return e->nreq ? lin_xmodel_req(m, e->proc, lin_xmodel_reqs(m, e)[0]) : NULL;
}

void lin_xmodel_epoch_trace(const struct xmodel *m, const struct xepoch *e, uint8_t out[16])
{
	const struct xreq *r = lin_xmodel_epoch_root(m, e);
	if (r)
		lin_xmodel_req_trace(m, r, out);
	else /* the process's own trace */
		lin_w3c_trace_id(m->procs[e->proc].key, 0, out);
}

uint64_t lin_xmodel_find(const struct xmodel *m, uint32_t file, uint64_t offset)
{
	return ix_get(&m->find_ix, file, offset);
}
