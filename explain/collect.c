/* SPDX-License-Identifier: MIT */
/*
 * collect.c - the ledger as a tool on the join layer (struct lin_join_tool): what it keeps
 * of the records the joiner reads (rec), of its verdicts (gpu) and of the importers' joined
 * models (model). Nothing here joins: a GPU record's request is the join layer's verdict, an imported kernel's launch and
 * op are the importer's links.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch.h"
#include "imp.h"
#include "lineage/trace_format.h"
#include "reader.h"
#include "xstate.h"

/* What a record handler is given (lin_join_tool.rec): the ledger, the file, the process. */
struct cctx {
	struct lin_explain *x;
	uint32_t file;
	uint16_t proc;
};

static uint64_t pk1(uint16_t proc, uint64_t aux)
{
	return ((uint64_t)proc << 32) | (aux & 0xffffffffu);
}

uint32_t lin_x_intern(struct lin_explain *x, const char *s, size_t len)
{
	uint64_t h = 1469598103934665603ULL; /* FNV-1a */
	for (size_t i = 0; i < len; i++)
		h = (h ^ (uint8_t)s[i]) * 1099511628211ULL;
	bool fresh;
	uint64_t *slot = lin_vtab_get(&x->names, h, len, &fresh);
	if (slot && !fresh && *slot && !memcmp(x->pool + *slot - 1, s, len) && !x->pool[*slot - 1 + len])
		return (uint32_t)*slot;
	if (x->pool_n + len + 1 > x->pool_cap) {
		size_t cap = x->pool_cap ? x->pool_cap * 2 : 4096;
		while (cap < x->pool_n + len + 1)
			cap *= 2;
		char *p = realloc(x->pool, cap);
		if (!p) {
			x->oom = true;
			return 0;
		}
		x->pool = p;
		x->pool_cap = cap;
	}
	uint32_t off = (uint32_t)x->pool_n;
	memcpy(x->pool + off, s, len);
	x->pool[off + len] = 0;
	x->pool_n += len + 1;
	if (slot && fresh)
		*slot = off + 1; /* a hash collision keeps the first name's slot */
	return off + 1;
}

struct lin_explain *lin_explain_create(const struct lin_xopts *o)
{
	struct lin_explain *x = calloc(1, sizeof(*x));
	if (!x)
		return NULL;
	if (o)
		x->o = *o;
	if (x->o.slow_factor <= 1.0)
		x->o.slow_factor = 1.5;
	if (!x->o.min_samples)
		x->o.min_samples = 5;
	if (!x->o.tie_ns)
		x->o.tie_ns = 2000;
	lin_vec_init(&x->gpus, sizeof(struct lin_xgpu));
	lin_vtab_init(&x->verd, sizeof(struct lin_xverdict));
	lin_vec_init(&x->reqs, sizeof(uint64_t));
	lin_vtab_init(&x->reqsets, sizeof(struct lin_xreqset));
	lin_vtab_init(&x->begins, sizeof(struct lin_xbegin));
	lin_vec_init(&x->decls, sizeof(struct lin_xdecl));
	lin_vtab_init(&x->caps, sizeof(uint64_t));
	lin_vec_init(&x->adopts, sizeof(struct lin_xadopt));
	lin_vtab_init(&x->apis, sizeof(struct lin_xapi));
	lin_vtab_init(&x->events, sizeof(struct lin_xevent));
	lin_vec_init(&x->waits, sizeof(struct lin_xwait));
	lin_vec_init(&x->scheds, sizeof(struct lin_xsched));
	lin_vec_init(&x->schedgaps, sizeof(struct lin_xschedgap));
	lin_vec_init(&x->edges, sizeof(struct lin_xedge));
	lin_vtab_init(&x->clone_of, sizeof(uint64_t));
	lin_vtab_init(&x->node_graph, sizeof(uint64_t));
	lin_vtab_init(&x->topo, sizeof(struct lin_xtopo));
	lin_vtab_init(&x->clone_at, sizeof(uint64_t));
	lin_vtab_init(&x->bynode, sizeof(size_t));
	lin_vtab_init(&x->sids, sizeof(uint64_t));
	lin_vtab_init(&x->names, sizeof(uint64_t));
	lin_vec_init(&x->launches, sizeof(struct lin_xlaunch));
	lin_vec_init(&x->crits, sizeof(struct lin_xlaunch));
	lin_vec_init(&x->groups, sizeof(struct lin_xgroup));
	lin_x_rq_init(x);
	return x;
}

void lin_explain_free(struct lin_explain *x)
{
	if (!x)
		return;
	lin_vec_free(&x->gpus);
	lin_vtab_free(&x->verd);
	lin_vec_free(&x->reqs);
	lin_vtab_free(&x->reqsets);
	lin_vtab_free(&x->begins);
	lin_vec_free(&x->decls);
	lin_vtab_free(&x->caps);
	lin_vec_free(&x->adopts);
	lin_vtab_free(&x->apis);
	lin_vtab_free(&x->events);
	lin_vec_free(&x->waits);
	lin_vec_free(&x->scheds);
	lin_vec_free(&x->schedgaps);
	lin_vec_free(&x->edges);
	lin_vtab_free(&x->clone_of);
	lin_vtab_free(&x->node_graph);
	lin_vtab_free(&x->topo);
	lin_vtab_free(&x->clone_at);
	lin_vtab_free(&x->bynode);
	lin_vtab_free(&x->sids);
	lin_vtab_free(&x->names);
	lin_vec_free(&x->launches);
	lin_vec_free(&x->crits);
	lin_vec_free(&x->groups);
	lin_x_rq_free(x);
	free(x->pool);
	free(x);
}

static void *push(struct lin_explain *x, struct lin_vec *v)
{
	void *p = lin_vec_push(v);
	if (!p)
		x->oom = true;
	return p;
}

static void *get(struct lin_explain *x, struct lin_vtab *t, uint64_t k0, uint64_t k1, bool *fresh)
{
	void *p = lin_vtab_get(t, k0, k1, fresh);
	if (!p)
		x->oom = true;
	return p;
}

/* A GPU record: the fields kernel, memcpy, memset and graph_trace share (the GPU view). */
static struct lin_xgpu *gpu_rec(const struct cctx *c, const struct lin_rec *r)
{
	struct lin_xgpu *g = push(c->x, &c->x->gpus);
	if (!g)
		return NULL;
	g->offset = r->offset;
	g->vkey = r->offset;
	g->file = c->file;
	g->proc = c->proc;
	g->kind = (uint8_t)r->type;
	g->corr = LIN_OPT(r, GPU, CORRELATION);
	g->start = LIN_OPT(r, GPU, START_DEV);
	g->end = LIN_OPT(r, GPU, END_DEV);
	g->dev = (uint32_t)LIN_GET(r, GPU, DEVICE);
	g->ctx = (uint32_t)LIN_GET(r, GPU, CONTEXT);
	g->stream = LIN_GET(r, GPU, STREAM);
	g->queued = g->submitted = g->graph_id = g->name_sid = g->key = g->node = LIN_NIL;
	g->api_s = g->api_e = g->api_tid = g->group = g->iproc = LIN_NIL;
	return g;
}

/* A node of a replay: its dependencies are graph edges (graph_edge records, if any). */
static void mark_graph(struct lin_xgpu *g)
{
	if (g->graph_id != LIN_NIL && g->graph_id)
		g->flags |= LIN_XG_GRAPH;
}

static void on_kernel(void *arg, const struct lin_rec *r)
{
	struct lin_xgpu *g = gpu_rec(arg, r);
	if (!g)
		return;
	g->key = LIN_OPT(r, KERNEL, GRID_ID);
	g->graph_id = LIN_OPT(r, KERNEL, GRAPH_ID);
	g->node = LIN_OPT(r, KERNEL, GRAPH_NODE_ID);
	g->name_sid = LIN_OPT(r, KERNEL, NAME_SID);
	g->queued = LIN_OPT(r, KERNEL, QUEUED_DEV);
	g->submitted = LIN_OPT(r, KERNEL, SUBMITTED_DEV);
	mark_graph(g);
}

static void on_memcpy(void *arg, const struct lin_rec *r)
{
	struct lin_xgpu *g = gpu_rec(arg, r);
	if (!g)
		return;
	g->key = g->start; /* start_dev as written */
	g->graph_id = LIN_OPT(r, MEMCPY, GRAPH_ID);
	g->node = LIN_OPT(r, MEMCPY, GRAPH_NODE_ID);
	mark_graph(g);
}

static void on_memset(void *arg, const struct lin_rec *r)
{
	struct lin_xgpu *g = gpu_rec(arg, r);
	if (!g)
		return;
	g->key = g->start; /* start_dev as written */
	g->graph_id = LIN_OPT(r, MEMSET, GRAPH_ID);
	g->node = LIN_OPT(r, MEMSET, GRAPH_NODE_ID);
	mark_graph(g);
}

/* The whole replay: stream order holds for it. */
static void on_graph_trace(void *arg, const struct lin_rec *r)
{
	struct lin_xgpu *g = gpu_rec(arg, r);
	if (g)
		g->graph_id = LIN_GET(r, GRAPH_TRACE, GRAPH_ID);
}

static void on_request_begin(void *arg, const struct lin_rec *r)
{
	const struct cctx *c = arg;
	bool fresh;
	struct lin_xbegin *t =
		get(c->x, &c->x->begins, LIN_GET(r, REQUEST_BEGIN, REQUEST), pk1(c->proc, 0), &fresh);
	if (t && fresh)
		*t = (struct lin_xbegin){ .host_ns = LIN_GET(r, REQUEST_BEGIN, HOST_NS),
					  .tid = LIN_GET(r, REQUEST_BEGIN, TID) };
	if (!c->x->o.per_request || !fresh)
		return;
	struct lin_xrq *q = lin_x_rq(c->x, LIN_GET(r, REQUEST_BEGIN, REQUEST), c->proc);
	if (q) {
		q->begin = LIN_GET(r, REQUEST_BEGIN, HOST_NS);
		q->user_id = LIN_OPT(r, REQUEST_BEGIN, USER_ID);
	}
}

/* --per-request: the context a request arrived with, to find its sender's begin. */
static void on_request_link(void *arg, const struct lin_rec *r)
{
	const struct cctx *c = arg;
	if (!c->x->o.per_request || !LIN_LINK_VALID(r))
		return;
	struct lin_xrq *q = lin_x_rq(c->x, LIN_GET(r, REQUEST_LINK, REQUEST), c->proc);
	if (q && !q->linked) {
		q->link_hi = LIN_GET(r, REQUEST_LINK, TRACE_HI);
		q->link_lo = LIN_GET(r, REQUEST_LINK, TRACE_LO);
		q->linked = true;
	}
}

/* A reissue (a retry) is not a declaration: the work was declared once, and a retry's
 * launches count from there (docs/ledger.md, "Marks"). */
static void on_epoch_declare(void *arg, const struct lin_rec *r)
{
	const struct cctx *c = arg;
	struct lin_xdecl *d = push(c->x, &c->x->decls);
	if (d)
		*d = (struct lin_xdecl){ .epoch = LIN_GET(r, EPOCH_DECLARE, EPOCH),
					 .host_ns = LIN_GET(r, EPOCH_DECLARE, HOST_NS),
					 .tid = LIN_GET(r, EPOCH_DECLARE, TID),
					 .parent = LIN_OPT(r, EPOCH_DECLARE, PARENT_EPOCH),
					 .proc = c->proc };
	/* --per-request: a request is scheduled at the first declaration naming it. */
	for (uint32_t i = 0; c->x->o.per_request && i < r->nreqs; i++) {
		struct lin_xrq *q = lin_x_rq(c->x, r->reqs[i], c->proc);
		if (!q)
			return;
		q->named = true;
		uint64_t t = LIN_GET(r, EPOCH_DECLARE, HOST_NS);
		if (q->sched == LIN_NIL || t < q->sched)
			q->sched = t;
	}
}

static void on_token_capture(void *arg, const struct lin_rec *r)
{
	const struct cctx *c = arg;
	bool fresh;
	uint64_t *t = get(c->x, &c->x->caps, LIN_GET(r, TOKEN_CAPTURE, CAPTURE_SEQ),
			  pk1(c->proc, LIN_GET(r, TOKEN_CAPTURE, TID)), &fresh);
	if (t && fresh)
		*t = LIN_IS_NIL(r, TOKEN_CAPTURE, HOST_NS) ? 0 : LIN_GET(r, TOKEN_CAPTURE, HOST_NS) + 1;
}

static void on_token_adopt(void *arg, const struct lin_rec *r)
{
	const struct cctx *c = arg;
	struct lin_xadopt *a = push(c->x, &c->x->adopts);
	if (a)
		*a = (struct lin_xadopt){ .tid = LIN_GET(r, TOKEN_ADOPT, TID),
					  .host_ns = LIN_GET(r, TOKEN_ADOPT, HOST_NS),
					  .target = LIN_GET(r, TOKEN_ADOPT, TARGET),
					  .ctid = LIN_OPT(r, TOKEN_ADOPT, CAPTURE_TID),
					  .cseq = LIN_OPT(r, TOKEN_ADOPT, CAPTURE_SEQ),
					  .proc = c->proc,
					  .kind = (uint8_t)LIN_GET(r, TOKEN_ADOPT, TARGET_KIND) };
}

static void on_api(void *arg, const struct lin_rec *r)
{
	const struct cctx *c = arg;
	bool fresh;
	if (LIN_IS_NIL(r, API, CORRELATION))
		return;
	struct lin_xapi *a =
		get(c->x, &c->x->apis, LIN_GET(r, API, CORRELATION), pk1(c->proc, 0), &fresh);
	if (!a)
		return;
	struct lin_xapi n = { .start = LIN_OPT(r, API, START_DEV),
			      .end = LIN_OPT(r, API, END_DEV),
			      .tid = LIN_GET(r, API, TID),
			      .domain = (uint8_t)LIN_GET(r, API, DOMAIN) };
	if (fresh) {
		*a = n;
	} else if (a->tid == n.tid && a->start != LIN_NIL && n.start != LIN_NIL &&
		   a->end != LIN_NIL && n.end != LIN_NIL &&
		   ((n.start >= a->start && n.end <= a->end) || (a->start >= n.start && a->end <= n.end))) {
		/* A runtime call and the driver call nested in it under one correlation
		 * (docs/validator.md): one call, the outer one. */
		if (n.start < a->start)
			*a = n;
	} else if (n.domain == LIN_API_RUNTIME && a->domain != LIN_API_RUNTIME) {
		*a = n; /* not nested: the runtime call is the launch */
	}
}

static void on_string(void *arg, const struct lin_rec *r)
{
	const struct cctx *c = arg;
	bool fresh;
	uint64_t *t = get(c->x, &c->x->sids, LIN_GET(r, STRING, SID), pk1(c->proc, 0), &fresh);
	if (t && fresh)
		*t = lin_x_intern(c->x, r->str ? r->str : "", r->str ? r->str_len : 0);
}

/* The process has a sync or cuda_event record: its synchronization was collected. */
static void mark_synced(const struct cctx *c)
{
	c->x->synced[c->proc / 8] |= (uint8_t)(1u << (c->proc % 8));
}

static void on_cuda_event(void *arg, const struct lin_rec *r)
{
	const struct cctx *c = arg;
	bool fresh;
	mark_synced(c);
	if (LIN_IS_NIL(r, CUDA_EVENT, SYNC_ID))
		return; /* no sync id: no wait can name it */
	struct lin_xevent *e =
		get(c->x, &c->x->events, LIN_GET(r, CUDA_EVENT, SYNC_ID), pk1(c->proc, 0), &fresh);
	if (e && fresh)
		*e = (struct lin_xevent){ .corr = LIN_OPT(r, CUDA_EVENT, CORRELATION),
					  .stream = LIN_GET(r, CUDA_EVENT, STREAM),
					  .ctx = (uint32_t)LIN_GET(r, CUDA_EVENT, CONTEXT),
					  .dev = (uint32_t)LIN_GET(r, CUDA_EVENT, DEVICE) };
}

static void on_sync(void *arg, const struct lin_rec *r)
{
	const struct cctx *c = arg;
	mark_synced(c);
	if (LIN_GET(r, SYNC, SYNC_TYPE) != LIN_SYNC_STREAM_WAIT_EVENT || LIN_IS_NIL(r, SYNC, STREAM) ||
	    LIN_IS_NIL(r, SYNC, SYNC_ID) || LIN_IS_NIL(r, SYNC, CORRELATION))
		return;
	struct lin_xwait *w = push(c->x, &c->x->waits);
	if (w)
		*w = (struct lin_xwait){ .corr = LIN_GET(r, SYNC, CORRELATION),
					 .stream = LIN_GET(r, SYNC, STREAM),
					 .sync_id = LIN_GET(r, SYNC, SYNC_ID),
					 .best = SIZE_MAX,
					 .ctx = (uint32_t)LIN_GET(r, SYNC, CONTEXT),
					 .proc = c->proc };
}

static void on_graph_node(void *arg, const struct lin_rec *r)
{
	const struct cctx *c = arg;
	bool fresh;
	uint64_t *t = get(c->x, &c->x->node_graph, LIN_GET(r, GRAPH_NODE, NODE_ID), pk1(c->proc, 0),
			  &fresh);
	if (t && fresh)
		*t = LIN_GET(r, GRAPH_NODE, GRAPH_ID);
}

static void on_graph_node_clone(void *arg, const struct lin_rec *r)
{
	const struct cctx *c = arg;
	bool fresh;
	uint64_t clone = LIN_GET(r, GRAPH_NODE_CLONE, CLONE_NODE_ID);
	uint64_t orig = LIN_GET(r, GRAPH_NODE_CLONE, ORIGINAL_NODE_ID);
	uint64_t *t = get(c->x, &c->x->clone_of, clone, pk1(c->proc, 0), &fresh);
	if (t && (fresh || *t != orig))
		*t = fresh ? orig : UINT64_MAX; /* two originals: which one is not known */
	uint64_t *at = get(c->x, &c->x->clone_at, clone, pk1(c->proc, 0), &fresh);
	if (at && fresh)
		*at = lin_xpos(c->file, r->index); /* when the exec was instantiated */
}

static void on_graph_edge(void *arg, const struct lin_rec *r)
{
	const struct cctx *c = arg;
	bool fresh;
	uint64_t graph = LIN_GET(r, GRAPH_EDGE, GRAPH_ID);
	struct lin_xtopo *t = get(c->x, &c->x->topo, graph, pk1(c->proc, 0), &fresh);
	if (!t)
		return;
	if (fresh)
		*t = (struct lin_xtopo){ 0 };
	t->last = lin_xpos(c->file, r->index);
	if (LIN_IS_NIL(r, GRAPH_EDGE, FROM_NODE_ID) || LIN_IS_NIL(r, GRAPH_EDGE, TO_NODE_ID)) {
		t->nil = true; /* the graph has no edge: its topology is known all the same */
		return;
	}
	t->edges = true;
	struct lin_xedge *e = push(c->x, &c->x->edges);
	if (e)
		*e = (struct lin_xedge){ .to = LIN_GET(r, GRAPH_EDGE, TO_NODE_ID),
					 .from = LIN_GET(r, GRAPH_EDGE, FROM_NODE_ID),
					 .graph = graph,
					 .proc = c->proc };
}

static void on_host_sched(void *arg, const struct lin_rec *r)
{
	const struct cctx *c = arg;
	uint64_t start = LIN_GET(r, HOST_SCHED, START_NS), end = LIN_GET(r, HOST_SCHED, END_NS);
	if (end <= start)
		return;
	struct lin_xsched *s = push(c->x, &c->x->scheds);
	if (s)
		*s = (struct lin_xsched){ .tid = LIN_GET(r, HOST_SCHED, TID),
					  .start = start,
					  .end = end,
					  .proc = c->proc,
					  .state = LIN_GET(r, HOST_SCHED, STATE) <= LIN_SCHED_BLOCKED
							   ? (uint16_t)LIN_GET(r, HOST_SCHED, STATE)
							   : LIN_SCHED_UNKNOWN };
}

/* A thread's context switches lost or refused: its off-CPU evidence has a gap. */
static void on_dropped(void *arg, const struct lin_rec *r)
{
	const struct cctx *c = arg;
	uint64_t src = LIN_GET(r, DROPPED, SOURCE);
	if ((src != LIN_DROP_HOST_SCHED && src != LIN_DROP_HOST_SCHED_REFUSED) ||
	    LIN_IS_NIL(r, DROPPED, TID) || !LIN_GET(r, DROPPED, COUNT))
		return;
	struct lin_xschedgap *g = push(c->x, &c->x->schedgaps);
	if (g)
		*g = (struct lin_xschedgap){ .tid = LIN_GET(r, DROPPED, TID), .proc = c->proc };
}

static const struct lin_rec_ops collect_ops = {
	.on = {
		[LIN_REC_REQUEST_BEGIN] = on_request_begin,
		[LIN_REC_REQUEST_LINK] = on_request_link,
		[LIN_REC_EPOCH_DECLARE] = on_epoch_declare,
		[LIN_REC_TOKEN_CAPTURE] = on_token_capture,
		[LIN_REC_TOKEN_ADOPT] = on_token_adopt,
		[LIN_REC_API] = on_api,
		[LIN_REC_KERNEL] = on_kernel,
		[LIN_REC_MEMCPY] = on_memcpy,
		[LIN_REC_MEMSET] = on_memset,
		[LIN_REC_GRAPH_TRACE] = on_graph_trace,
		[LIN_REC_STRING] = on_string,
		[LIN_REC_CUDA_EVENT] = on_cuda_event,
		[LIN_REC_SYNC] = on_sync,
		[LIN_REC_GRAPH_NODE] = on_graph_node,
		[LIN_REC_GRAPH_NODE_CLONE] = on_graph_node_clone,
		[LIN_REC_GRAPH_EDGE] = on_graph_edge,
		[LIN_REC_HOST_SCHED] = on_host_sched,
		[LIN_REC_DROPPED] = on_dropped,
	},
};

static void on_rec(void *arg, uint32_t file, uint16_t proc, const struct lin_rec *r)
{
	struct cctx c = { .x = arg, .file = file, .proc = proc };
	lin_rec_dispatch(&collect_ops, &c, r);
}

/* The requests of a verdict, kept once per (epoch, process): a batch epoch naming a thousand
 * requests costs its list once, not once per GPU record. */
static bool keep_reqs(struct lin_explain *x, const struct lin_gpu_verdict *vd, struct lin_xverdict *e)
{
	bool fresh;
	e->req0 = x->reqs.n;
	e->nreq = 0;
	if (!vd->nreqs)
		return true;
	struct lin_xreqset *rs = get(x, &x->reqsets, vd->epoch, pk1(vd->proc, 0), &fresh);
	if (!rs)
		return false;
	if (!fresh && rs->nreq == vd->nreqs &&
	    !memcmp(lin_vec_at(&x->reqs, (size_t)rs->req0), vd->reqs, vd->nreqs * sizeof(uint64_t))) {
		e->req0 = rs->req0;
		e->nreq = rs->nreq;
		return true;
	}
	uint64_t req0 = x->reqs.n;
	for (uint32_t i = 0; i < vd->nreqs; i++) {
		uint64_t *q = push(x, &x->reqs);
		if (!q)
			return false;
		*q = vd->reqs[i];
	}
	e->req0 = req0;
	e->nreq = vd->nreqs;
	if (fresh) {
		rs->req0 = req0;
		rs->nreq = vd->nreqs;
	}
	return true;
}

static void on_verdict(void *arg, const struct lin_gpu_verdict *vd)
{
	struct lin_explain *x = arg;
	bool fresh;
	struct lin_xverdict *e = get(x, &x->verd, vd->offset, vd->file, &fresh);
	if (!e)
		return;
	e->join = (uint8_t)vd->join;
	e->epoch = vd->epoch;
	e->why = vd->why;
	if (!keep_reqs(x, vd, e))
		e->nreq = 0;
}

static void on_model(void *arg, uint32_t file, const struct lin_imp *m)
{
	struct lin_explain *x = arg;
	for (size_t i = 0; i < m->n; i++) {
		const struct lin_imp_ev *ev = &m->ev[i];
		if (ev->kind < LIN_IMP_KERNEL)
			continue;
		struct lin_xgpu *g = push(x, &x->gpus);
		if (!g)
			return;
		static const uint8_t kinds[] = {
			[LIN_IMP_KERNEL] = LIN_REC_KERNEL, [LIN_IMP_MEMCPY] = LIN_REC_MEMCPY, [LIN_IMP_MEMSET] = LIN_REC_MEMSET
		};
		g->kind = kinds[ev->kind];
		g->flags = LIN_XG_IMPORTED;
		g->offset = ev->off;
		g->vkey = ev->index;
		g->file = file;
		g->proc = LIN_XPROC_IMPORTED;
		g->iproc = ev->proc;
		g->dev = ev->dev;
		g->stream = ev->tid;
		if (ev->flags & LIN_IMP_NO_STREAM)
			g->flags |= LIN_XG_NOSTREAM;
		g->corr = (ev->flags & LIN_IMP_HAS_CORR) ? ev->corr : LIN_NIL;
		g->start = ev->ts >= 0 ? (uint64_t)ev->ts : LIN_NIL;
		g->end = ev->end >= ev->ts && ev->ts >= 0 ? (uint64_t)ev->end : LIN_NIL;
		/* No truth key: the importers' files have no grid id, and their times are not
		 * the device clock as written. */
		g->queued = g->submitted = g->graph_id = g->name_sid = g->key = LIN_NIL;
		g->api_s = g->api_e = g->api_tid = g->group = LIN_NIL;
		const char *nm = lin_imp_str(m, ev->name);
		g->name = nm ? lin_x_intern(x, nm, strlen(nm)) : 0;
		if (!ev->link)
			continue;
		const struct lin_imp_ev *l = &m->ev[ev->link - 1];
		g->flags |= LIN_XG_LAUNCH;
		if (l->flags & LIN_IMP_GRAPH)
			g->flags |= LIN_XG_GRAPH;
		g->api_s = l->ts >= 0 ? (uint64_t)l->ts : LIN_NIL;
		g->api_e = l->end >= l->ts && l->ts >= 0 ? (uint64_t)l->end : LIN_NIL;
		g->api_tid = l->tid;
		if (l->kind == LIN_IMP_LAUNCH && l->link) {
			const struct lin_imp_ev *op = &m->ev[l->link - 1];
			g->group = l->link - 1;
			const char *on = lin_imp_str(m, op->name);
			g->gname = on ? lin_x_intern(x, on, strlen(on)) : 0;
		}
	}
}

struct lin_join_tool lin_explain_tool(struct lin_explain *x)
{
	return (struct lin_join_tool){ .arg = x, .gpu = on_verdict, .rec = on_rec, .model = on_model };
}
