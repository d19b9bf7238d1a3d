/* SPDX-License-Identifier: MIT */
/*
 * collect.c - what the ledger keeps of the records the validator reads (lin_vopts.on_rec),
 * of its verdicts (on_gpu) and of the importers' joined models (on_model). Nothing here
 * joins: a GPU record's request is the validator's verdict, an imported kernel's launch and
 * op are the importer's links.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "imp.h"
#include "lineage/trace_format.h"
#include "reader.h"
#include "xstate.h"

#define NIL(r, i) (((r)->nil >> (i)) & 1u)
#define OPT(r, i) (NIL(r, i) ? LIN_NIL : (r)->f[i])

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

static void on_gpu_rec(struct lin_explain *x, uint32_t file, uint16_t proc, const struct lin_rec *r)
{
	struct lin_xgpu *g = push(x, &x->gpus);
	if (!g)
		return;
	g->offset = r->offset;
	g->vkey = r->offset;
	g->file = file;
	g->proc = proc;
	g->kind = (uint8_t)r->type;
	g->corr = OPT(r, 0);
	g->start = OPT(r, 1);
	g->end = OPT(r, 2);
	g->dev = (uint32_t)r->f[3];
	g->ctx = (uint32_t)r->f[4];
	g->stream = r->f[5];
	g->queued = g->submitted = g->graph_id = g->name_sid = g->key = g->node = LIN_NIL;
	g->api_s = g->api_e = g->api_tid = g->group = g->iproc = LIN_NIL;
	if (r->type == LIN_REC_KERNEL) {
		g->key = OPT(r, 6); /* grid_id */
		g->graph_id = OPT(r, 7);
		g->node = OPT(r, 8);
		g->name_sid = OPT(r, 9);
		g->queued = OPT(r, 10);
		g->submitted = OPT(r, 11);
	} else if (r->type == LIN_REC_GRAPH_TRACE) {
		g->graph_id = r->f[6]; /* the whole replay: stream order holds for it */
		return;
	} else {
		g->key = g->start; /* start_dev as written */
		g->graph_id = OPT(r, 8);
		g->node = OPT(r, 9);
	}
	/* A node of a replay: its dependencies are graph edges (graph_edge records, if any). */
	if (g->graph_id != LIN_NIL && g->graph_id)
		g->flags |= LIN_XG_GRAPH;
}

static void on_rec(void *arg, uint32_t file, uint16_t proc, const struct lin_rec *r)
{
	struct lin_explain *x = arg;
	bool fresh;
	if (!r->known)
		return;
	switch (r->type) {
	case LIN_REC_REQUEST_BEGIN: {
		struct lin_xbegin *t = get(x, &x->begins, r->f[2], pk1(proc, 0), &fresh);
		if (t && fresh)
			*t = (struct lin_xbegin){ .host_ns = r->f[0], .tid = r->f[1] };
		break;
	}
	case LIN_REC_EPOCH_DECLARE: {
		/* A reissue (a retry) is not a declaration: the work was declared once, and a
		 * retry's launches count from there (docs/ledger.md, "Marks"). */
		struct lin_xdecl *d = push(x, &x->decls);
		if (d)
			*d = (struct lin_xdecl){
				.epoch = r->f[2], .host_ns = r->f[0], .tid = r->f[1], .proc = proc
			};
		break;
	}
	case LIN_REC_TOKEN_CAPTURE: {
		uint64_t *t = get(x, &x->caps, r->f[5], pk1(proc, r->f[1]), &fresh);
		if (t && fresh)
			*t = NIL(r, 0) ? 0 : r->f[0] + 1;
		break;
	}
	case LIN_REC_TOKEN_ADOPT: {
		struct lin_xadopt *a = push(x, &x->adopts);
		if (a)
			*a = (struct lin_xadopt){ .tid = r->f[1],
						  .host_ns = r->f[0],
						  .target = r->f[3],
						  .ctid = OPT(r, 5),
						  .cseq = OPT(r, 6),
						  .proc = proc,
						  .kind = (uint8_t)r->f[2] };
		break;
	}
	case LIN_REC_API: {
		if (NIL(r, 2))
			break;
		struct lin_xapi *a = get(x, &x->apis, r->f[2], pk1(proc, 0), &fresh);
		if (!a)
			break;
		struct lin_xapi n = { .start = OPT(r, 3),
				      .end = OPT(r, 4),
				      .tid = r->f[6],
				      .domain = (uint8_t)r->f[0] };
		if (fresh) {
			*a = n;
		} else if (a->tid == n.tid && a->start != LIN_NIL && n.start != LIN_NIL &&
			   a->end != LIN_NIL && n.end != LIN_NIL &&
			   ((n.start >= a->start && n.end <= a->end) ||
			    (a->start >= n.start && a->end <= n.end))) {
			/* A runtime call and the driver call nested in it under one correlation
			 * (docs/validator.md): one call, the outer one. */
			if (n.start < a->start)
				*a = n;
		} else if (n.domain == LIN_API_RUNTIME && a->domain != LIN_API_RUNTIME) {
			*a = n; /* not nested: the runtime call is the launch */
		}
		break;
	}
	case LIN_REC_KERNEL:
	case LIN_REC_MEMCPY:
	case LIN_REC_MEMSET:
	case LIN_REC_GRAPH_TRACE: on_gpu_rec(x, file, proc, r); break;
	case LIN_REC_STRING: {
		uint64_t *t = get(x, &x->sids, r->f[0], pk1(proc, 0), &fresh);
		if (t && fresh)
			*t = lin_x_intern(x, r->str ? r->str : "", r->str ? r->str_len : 0);
		break;
	}
	case LIN_REC_CUDA_EVENT: {
		x->synced[proc / 8] |= (uint8_t)(1u << (proc % 8));
		if (NIL(r, 5))
			break; /* no sync id: no wait can name it */
		struct lin_xevent *e = get(x, &x->events, r->f[5], pk1(proc, 0), &fresh);
		if (e && fresh)
			*e = (struct lin_xevent){ .corr = OPT(r, 0),
						  .stream = r->f[3],
						  .ctx = (uint32_t)r->f[2],
						  .dev = (uint32_t)r->f[1] };
		break;
	}
	case LIN_REC_SYNC: {
		x->synced[proc / 8] |= (uint8_t)(1u << (proc % 8));
		if (r->f[1] != LIN_SYNC_STREAM_WAIT_EVENT || NIL(r, 5) || NIL(r, 7) || NIL(r, 0))
			break;
		struct lin_xwait *w = push(x, &x->waits);
		if (w)
			*w = (struct lin_xwait){ .corr = r->f[0],
						 .stream = r->f[5],
						 .sync_id = r->f[7],
						 .best = SIZE_MAX,
						 .ctx = (uint32_t)r->f[4],
						 .proc = proc };
		break;
	}
	case LIN_REC_GRAPH_NODE: {
		uint64_t *t = get(x, &x->node_graph, r->f[3], pk1(proc, 0), &fresh);
		if (t && fresh)
			*t = r->f[2];
		break;
	}
	case LIN_REC_GRAPH_NODE_CLONE: {
		uint64_t *t = get(x, &x->clone_of, r->f[1], pk1(proc, 0), &fresh);
		if (t && (fresh || *t != r->f[0]))
			*t = fresh ? r->f[0] : UINT64_MAX; /* two originals: which one is not known */
		uint64_t *at = get(x, &x->clone_at, r->f[1], pk1(proc, 0), &fresh);
		if (at && fresh)
			*at = lin_xpos(file, r->index); /* when the exec was instantiated */
		break;
	}
	case LIN_REC_GRAPH_EDGE: {
		struct lin_xtopo *t = get(x, &x->topo, r->f[0], pk1(proc, 0), &fresh);
		if (!t)
			break;
		if (fresh)
			*t = (struct lin_xtopo){ 0 };
		t->last = lin_xpos(file, r->index);
		if (NIL(r, 1) || NIL(r, 2)) {
			t->nil = true; /* the graph has no edge: its topology is known all the same */
			break;
		}
		t->edges = true;
		struct lin_xedge *e = push(x, &x->edges);
		if (e)
			*e = (struct lin_xedge){
				.to = r->f[2], .from = r->f[1], .graph = r->f[0], .proc = proc
			};
		break;
	}
	case LIN_REC_HOST_SCHED: {
		if (r->f[2] <= r->f[1])
			break;
		struct lin_xsched *s = push(x, &x->scheds);
		if (s)
			*s = (struct lin_xsched){
				.tid = r->f[0], .start = r->f[1], .end = r->f[2], .proc = proc
			};
		break;
	}
	default: break;
	}
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

void lin_explain_hook(struct lin_explain *x, struct lin_vopts *vo)
{
	vo->on_rec = on_rec;
	vo->on_gpu = on_verdict;
	vo->on_model = on_model;
	vo->on_gpu_arg = x;
}
