/* SPDX-License-Identifier: MIT */
/*
 * resolve.c - classification of GPU records (observed / inferred / lost / ambiguous),
 * truth comparison and the end-of-run checks.
 */
#include <stdlib.h>
#include <string.h>

#include "lineage/trace_format.h"
#include "vstate.h"

enum cls { CLS_PENDING, CLS_OBSERVED, CLS_INFERRED, CLS_LOST, CLS_AMBIGUOUS };

struct verdict {
	enum cls cls;
	int why;                    /* enum lin_cause or enum lin_rule */
	uint64_t epoch;             /* the joined epoch (observed or inferred) */
	uint64_t node_epoch;        /* node-origin epoch, or LIN_NIL */
};

#define CAUSE_NAME(e, s) s,
static const char *const cause_names[] = { LIN_CAUSES(CAUSE_NAME) };
static const char *const rule_names[] = { "graph_node_origin", "same_thread_time_containment" };
#define AMBIGUOUS_CAUSE "multiple_epochs"

const char *lin_cause_name(enum lin_cause c) { return cause_names[c]; }
const char *lin_rule_name(enum lin_rule r) { return rule_names[r]; }

const uint64_t *lin_v_epoch_reqs(const struct lin_validator *v, const struct lin_epoch_ent *e,
				 uint32_t *n)
{
	*n = e->nreq;
	if (e->nreq <= 1)
		return &e->req;
	return lin_vec_at(&v->reqpool, (size_t)e->req);
}

static const struct lin_epoch_ent *declared(const struct lin_validator *v, uint16_t proc,
					    uint64_t epoch)
{
	const struct lin_epoch_ent *e = lin_vtab_find(&v->epochs, epoch, lin_k1(proc, 0));
	return (e && (e->flags & LIN_EP_DECLARED)) ? e : NULL;
}

/* Node origin: clone -> original -> graph_node(epoch) -> declared epoch. */
static bool node_origin(const struct lin_validator *v, const struct lin_gpu *g, uint64_t *epoch)
{
	const uint64_t *orig = lin_vtab_find(&v->clones, g->node, lin_k1(g->proc, 0));
	const struct lin_node_ent *n = lin_vtab_find(&v->nodes, orig ? *orig : g->node,
						     lin_k1(g->proc, 0));
	if (!n || !n->has_epoch || !declared(v, g->proc, n->epoch))
		return false;
	*epoch = n->epoch;
	return true;
}

static int launch_cmp(const void *a, const void *b)
{
	const struct lin_launch *x = a, *y = b;
	if (x->proc != y->proc)
		return x->proc < y->proc ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->host_ns < y->host_ns ? -1 : x->host_ns > y->host_ns;
}

/* cuda-only rule: the latest ext-less launch record on the API record's thread at or
 * before the API call (device time mapped to host time through a clock record). */
static bool containment(const struct lin_validator *v, const struct lin_gpu *g,
			const struct lin_corr_ent *c, uint64_t *epoch)
{
	const struct lin_vproc *p = &v->procs[g->proc];
	if (!p->have_clock || !(c->flags & LIN_C_API) || c->api_start == LIN_NIL || !v->launches.n)
		return false;
	uint64_t t = c->api_start - (uint64_t)p->clock_off;
	struct lin_launch key = { t, 0, c->api_tid, g->proc, 0 };
	size_t lo = 0, hi = v->launches.n;          /* first launch > key */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (launch_cmp(lin_vec_at(&v->launches, mid), &key) <= 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return false;
	const struct lin_launch *l = lin_vec_at(&v->launches, lo - 1);
	if (l->proc != g->proc || l->tid != c->api_tid || !l->has_epoch ||
	    !declared(v, g->proc, l->epoch))
		return false;
	*epoch = l->epoch;
	return true;
}

static enum lin_cause lost_cause(const struct lin_validator *v, const struct lin_gpu *g,
				 const struct lin_corr_ent *c, bool node_missing)
{
	const struct lin_vproc *p = &v->procs[g->proc];
	if (g->flags & LIN_G_DEVLAUNCH)
		return LIN_CAUSE_DEVICE_LAUNCHED_GRAPH;
	if (c && (c->flags & LIN_C_EXT))
		return p->dropped_host ? LIN_CAUSE_DROPPED_RECORDS : LIN_CAUSE_UNKNOWN_EPOCH;
	if (node_missing)
		return LIN_CAUSE_UNKNOWN_GRAPH_NODE;
	if (!g->corr)
		return LIN_CAUSE_NO_CORRELATION;
	if (!c || !(c->flags & LIN_C_API)) {
		/* Dropped CUPTI records explain a missing API record better than the
		 * correlation order does: the first API records may be the dropped ones. */
		if (p->dropped_cupti)
			return LIN_CAUSE_DROPPED_RECORDS;
		if (p->min_api_corr != UINT64_MAX && g->corr < p->min_api_corr)
			return LIN_CAUSE_BEFORE_TRACE_START;
		return LIN_CAUSE_NO_API_RECORD;
	}
	if (lin_vtab_find(&v->stale, c->api_tid, lin_k1(g->proc, 0)))
		return LIN_CAUSE_STALE_TOKEN;
	if (c->domain == LIN_API_INTERNAL_LAUNCH)
		return LIN_CAUSE_UNKNOWN_LAUNCH_API;
	if (p->dropped_host || p->dropped_cupti)
		return LIN_CAUSE_DROPPED_RECORDS;
	return LIN_CAUSE_NO_EXTERNAL_CORRELATION;
}

static struct verdict classify(const struct lin_validator *v, const struct lin_gpu *g,
			       const struct lin_corr_ent *c, bool final)
{
	struct verdict r = { CLS_PENDING, 0, LIN_NIL, LIN_NIL };
	uint64_t ne;
	bool node_ok = g->node && node_origin(v, g, &ne);
	if (node_ok)
		r.node_epoch = ne;
	bool ext = c && (c->flags & LIN_C_EXT);
	bool settled = c && (c->flags & LIN_C_API) && (!g->node || node_ok);
	if (ext && (c->flags & LIN_C_AMBIG) && (final || settled)) {
		r.cls = CLS_AMBIGUOUS;
		return r;
	}
	if (ext && declared(v, g->proc, c->epoch) && (final || settled)) {
		r.cls = CLS_OBSERVED;
		r.epoch = c->epoch;
		return r;
	}
	if (!final)
		return r;
	if (node_ok && !ext) {
		r.cls = CLS_INFERRED;
		r.why = LIN_RULE_GRAPH_NODE_ORIGIN;
		r.epoch = ne;
		return r;
	}
	if (!ext && c && containment(v, g, c, &r.epoch)) {
		r.cls = CLS_INFERRED;
		r.why = LIN_RULE_TIME_CONTAINMENT;
		return r;
	}
	r.cls = CLS_LOST;
	r.why = (int)lost_cause(v, g, c, g->node && !node_ok);
	return r;
}

static bool same_set(const uint64_t *a, uint32_t na, const uint64_t *b, uint32_t nb)
{
	if (na != nb)
		return false;
	for (uint32_t i = 0; i < na; i++) {
		bool found = false;
		for (uint32_t j = 0; j < nb && !found; j++)
			found = a[i] == b[j];
		if (!found)
			return false;
	}
	return true;
}

static void check_truth(struct lin_validator *v, const struct lin_gpu *g, const struct verdict *r)
{
	if (!(g->flags & LIN_G_KEY))
		return;
	struct lin_truth_ent *t = lin_vtab_find(&v->truth, g->key, lin_k1(g->proc, g->kind));
	if (!t)
		return;
	t->seen = 1;
	if (r->cls != CLS_OBSERVED && r->cls != CLS_INFERRED)
		return;
	uint32_t n;
	const uint64_t *got = lin_v_epoch_reqs(v, declared(v, g->proc, r->epoch), &n);
	const uint64_t *want = lin_vec_at(&v->truthpool, (size_t)t->req);
	if (same_set(got, n, want, t->nreq)) {
		v->sum.matched++;
		return;
	}
	v->sum.incorrect++;
	static const char *const nm[] = { "key", "epoch", "joined_request", "true_request" };
	uint64_t ids[] = { g->key, r->epoch, n ? got[0] : LIN_NIL, t->nreq ? want[0] : LIN_NIL };
	lin_v_finding(v, "incorrect", "request_mismatch", g->file, g->offset, g->index, 4, nm, ids);
}

/* lin_vopts.on_gpu: the verdict on @g, keyed by its file and offset. */
static void hand_over(const struct lin_validator *v, const struct lin_gpu *g,
		      const struct verdict *r)
{
	static const enum lin_join join[] = {
		[CLS_OBSERVED] = LIN_JOIN_OBSERVED, [CLS_INFERRED] = LIN_JOIN_INFERRED,
		[CLS_LOST] = LIN_JOIN_LOST, [CLS_AMBIGUOUS] = LIN_JOIN_AMBIGUOUS,
	};
	struct lin_gpu_verdict vd = { g->offset, LIN_NIL, NULL, g->file, join[r->cls] };
	if (r->cls == CLS_OBSERVED || r->cls == CLS_INFERRED)
		vd.epoch = r->epoch;
	if (r->cls == CLS_INFERRED)
		vd.why = rule_names[r->why];
	else if (r->cls == CLS_LOST)
		vd.why = cause_names[r->why];
	else if (r->cls == CLS_AMBIGUOUS)
		vd.why = AMBIGUOUS_CAUSE;
	v->opts.on_gpu(v->opts.on_gpu_arg, &vd);
}

static void account(struct lin_validator *v, const struct lin_gpu *g, const struct verdict *r)
{
	if (v->opts.on_gpu)
		hand_over(v, g, r);
	static const char *const nm[] = { "correlation", "epoch", "graph_node_id", "node_epoch",
					  "pid" };
	uint64_t ids[] = { g->corr ? g->corr : LIN_NIL, r->epoch, g->node ? g->node : LIN_NIL,
			  r->node_epoch, v->procs[g->proc].pid };
	switch (r->cls) {
	case CLS_OBSERVED: v->sum.observed++; break;
	case CLS_INFERRED: v->sum.inferred++; v->sum.inferred_by_rule[r->why]++; break;
	case CLS_LOST:
		v->sum.lost++;
		v->sum.lost_by_cause[r->why]++;
		lin_v_finding(v, "lost", cause_names[r->why], g->file, g->offset, g->index, 5, nm, ids);
		break;
	case CLS_AMBIGUOUS: {
		v->sum.ambiguous++;
		size_t before = v->findings.n;
		lin_v_finding(v, "ambiguous", AMBIGUOUS_CAUSE, g->file, g->offset, g->index, 1,
			      nm, ids);
		if (v->findings.n == before)
			break;
		struct lin_finding *f = lin_vec_at(&v->findings, before);
		const struct lin_corr_ent *c = lin_vtab_find(&v->corrs, g->corr, lin_k1(g->proc, 0));
		if (c)
			f->cand[f->ncand++] = c->epoch;
		for (size_t i = 0; i < v->cands.n && f->ncand < LIN_MAX_CAND; i++) {
			const struct lin_cand *cd = lin_vec_at(&v->cands, i);
			if (cd->proc == g->proc && cd->corr == g->corr)
				f->cand[f->ncand++] = cd->epoch;
		}
		break;
	}
	default: break;
	}
	check_truth(v, g, r);
}

static void api_before_gpu(struct lin_validator *v, const struct lin_gpu *g,
			   const struct lin_corr_ent *c)
{
	if (!c || !(c->flags & LIN_C_API) || c->api_start == LIN_NIL || g->t0 == LIN_NIL ||
	    g->t0 >= c->api_start)
		return;
	static const char *const n[] = { "correlation", "api_start_dev", "gpu_dev" };
	uint64_t ids[] = { g->corr, c->api_start, g->t0 };
	v->sum.structural++;
	lin_v_finding(v, "structural", "time_order", g->file, g->offset, g->index, 3, n, ids);
}

void lin_v_gpu(struct lin_validator *v, struct lin_gpu *g)
{
	struct lin_corr_ent *c = NULL;
	if (g->corr) {
		c = lin_vtab_find(&v->corrs, g->corr, lin_k1(g->proc, 0));
		if (!c && lin_v_closed(v, g->proc, g->corr, false)) {
			static const char *const n[] = { "correlation" };
			v->sum.structural++;
			lin_v_finding(v, "structural", "correlation_reused", g->file, g->offset,
				      g->index, 1, n, &g->corr);
			struct verdict r = { CLS_LOST, LIN_CAUSE_CORRELATION_REUSED, LIN_NIL, LIN_NIL };
			account(v, g, &r);
			return;
		}
		if (c && c->ngpu && !(g->flags & LIN_G_GRAPH)) {
			static const char *const n[] = { "correlation" };
			v->sum.structural++;
			lin_v_finding(v, "structural", "correlation_reused", g->file, g->offset,
				      g->index, 1, n, &g->corr);
		}
		if (c && c->ngpu < 255)
			c->ngpu++;
		api_before_gpu(v, g, c);
	}
	struct verdict r = classify(v, g, c, false);
	if (r.cls == CLS_PENDING) {
		struct lin_gpu *p = lin_vec_push(&v->pending);
		if (p)
			*p = *g;
		else
			v->oom = true;
		return;
	}
	account(v, g, &r);
	if (r.cls == CLS_OBSERVED && !(g->flags & LIN_G_GRAPH) && c) {
		lin_v_closed(v, g->proc, g->corr, true);
		lin_vtab_del(&v->corrs, c);
	}
}

static void finish_adopts(struct lin_validator *v)
{
	static const char *const n[] = { "capture_tid", "capture_seq" };
	for (size_t i = 0; i < v->adopts.n; i++) {
		const struct lin_adopt *a = lin_vec_at(&v->adopts, i);
		const uint64_t *s = lin_v_capture_slot(v, a->proc, a->tid, a->seq, false);
		uint64_t ids[] = { a->tid, a->seq };
		const char *cause = NULL;
		if (!s || !*s)
			cause = "adopt_without_capture";
		else if (*s != LIN_V_CAPTURE_UNTIMED && a->host_ns < *s - 1)
			cause = "adopt_before_capture";
		if (!cause)
			continue;
		v->sum.structural++;
		lin_v_finding(v, "structural", cause, a->file, a->offset, a->index, 2, n, ids);
	}
}

static void finish_strings_truth(struct lin_validator *v)
{
	size_t it = 0;
	struct lin_vkey k;
	struct lin_ref_ent *u;
	static const char *const n[] = { "sid" };
	while ((u = lin_vtab_next(&v->undef, &it, &k))) {
		v->sum.structural++;
		lin_v_finding(v, "structural", "undefined_string_id", u->file, u->offset, u->index,
			      1, n, &k.k0);
	}
	static const char *const tn[] = { "gpu_kind", "key", "pid" };
	struct lin_truth_ent *t;
	it = 0;
	while ((t = lin_vtab_next(&v->truth, &it, &k))) {
		if (t->seen)
			continue;
		uint16_t proc = (uint16_t)(k.k1 >> 32);
		uint64_t ids[] = { k.k1 & 0xffffffffu, k.k0, v->procs[proc].pid };
		v->sum.lost++;
		v->sum.lost_by_cause[LIN_CAUSE_NO_GPU_RECORD]++;
		lin_v_finding(v, "lost", cause_names[LIN_CAUSE_NO_GPU_RECORD], 0, 0, 0, 3, tn, ids);
	}
}

void lin_v_resolve_all(struct lin_validator *v)
{
	if (v->launches.n)
		qsort(v->launches.data, v->launches.n, v->launches.esz, launch_cmp);
	for (size_t i = 0; i < v->pending.n; i++) {
		const struct lin_gpu *g = lin_vec_at(&v->pending, i);
		const struct lin_corr_ent *c =
			g->corr ? lin_vtab_find(&v->corrs, g->corr, lin_k1(g->proc, 0)) : NULL;
		struct verdict r = classify(v, g, c, true);
		account(v, g, &r);
	}
	finish_adopts(v);
	finish_strings_truth(v);
}

void lin_validator_finish(struct lin_validator *v)
{
	lin_v_resolve_all(v);
}

const struct lin_vsummary *lin_validator_summary(const struct lin_validator *v)
{
	return &v->sum;
}

int lin_validator_exit_code(const struct lin_validator *v)
{
	const struct lin_vsummary *s = &v->sum;
	if (s->file_errors || v->oom)
		return 2;
	if (s->lost || s->ambiguous || s->incorrect || s->structural)
		return 1;
	return 0;
}

const char *lin_validator_error(const struct lin_validator *v, uint64_t *offset,
				const char **file)
{
	for (unsigned i = 0; i < v->nfiles; i++) {
		if (v->files[i].failed) {
			if (offset)
				*offset = v->files[i].err_off;
			if (file)
				*file = v->files[i].name;
			return v->files[i].err;
		}
	}
	return "";
}
