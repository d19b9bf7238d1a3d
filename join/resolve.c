/* SPDX-License-Identifier: MIT */
/*
 * resolve.c - classification of GPU records (observed / inferred / lost / ambiguous), each
 * verdict handed to the tool and the judge (the truth comparison is the judge's:
 * validator/truth.c), and the end-of-run checks.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lineage/trace_format.h"
#include "pages.h"
#include "jstate.h"

enum cls { CLS_PENDING, CLS_OBSERVED, CLS_INFERRED, CLS_LOST, CLS_AMBIGUOUS };

struct verdict {
	enum cls cls;
	int why;             /* enum lin_cause or enum lin_rule */
	uint64_t epoch;      /* the joined epoch or request (observed or inferred) */
	uint64_t node_epoch; /* node-origin epoch (provenance), or LIN_NIL */
	enum lin_level level;
	uint8_t late; /* enum lin_late of the launch it joined through (observed, inferred) */
};

#define CAUSE_NAME(e, s) s,
static const char *const cause_names[] = { LIN_CAUSES(CAUSE_NAME) };
static const char *const rule_names[] = { "same_thread_time_containment",
					  "external_id_is_correlation_fallback",
					  "graph_launch_enclosing_op" };
#define LEVEL_NAME(e, s) s,
static const char *const level_names[] = { LIN_LEVELS(LEVEL_NAME) };
#define AMBIGUOUS_CAUSE "multiple_epochs"

const char *lin_cause_name(enum lin_cause c) { return cause_names[c]; }
const char *lin_rule_name(enum lin_rule r) { return rule_names[r]; }
const char *lin_level_name(enum lin_level l) { return level_names[l]; }

/* What a join may end on: a declared epoch (its requests) or a begun request (itself).
 * Use it where it is: req may point into it. */
struct target {
	const uint64_t *req;
	uint32_t nreq;
	uint64_t one;
};

static bool declared(const struct lin_joiner *v, uint16_t proc, uint64_t id, struct target *t)
{
	const struct lin_epoch_ent *e = lin_vtab_find(&v->epochs, id, lin_k1(proc, 0));
	if (e && (e->flags & LIN_EP_DECLARED)) {
		if (t)
			t->req = lin_j_epoch_reqs(v, e, &t->nreq);
		return true;
	}
	if (!lin_vtab_find(&v->requests, id, lin_k1(proc, 0)))
		return false;
	if (t) {
		t->one = id;
		t->req = &t->one;
		t->nreq = 1;
	}
	return true;
}

/* A join reaches the request level when its target names one request or more. */
static enum lin_level target_level(const struct target *t)
{
	return t->nreq ? LIN_LEVEL_REQUEST : LIN_LEVEL_EPOCH;
}

/* Node origin: clone -> original -> graph_node(epoch) -> declared epoch. */
static bool node_origin(const struct lin_joiner *v, const struct lin_gpu *g, uint64_t *epoch)
{
	const struct lin_clone_ent *cl = lin_vtab_find(&v->clones, g->node, lin_k1(g->proc, 0));
	const struct lin_node_ent *n =
		lin_vtab_find(&v->nodes, cl ? cl->original : g->node, lin_k1(g->proc, 0));
	if (!n || !n->has_epoch || !declared(v, g->proc, n->epoch, NULL))
		return false;
	*epoch = n->epoch;
	return true;
}

/*
 * same_thread_time_containment (docs/validator.md): the API call pushed nothing, and its
 * whole interval, mapped to host time through the process's clock records, lies inside a
 * launch bracket that pushed nothing, on the same thread, with a known end. The innermost
 * such bracket names the epoch. Returns the bracket search's result; *b is the bracket.
 */
static enum lin_bracket_find containment(const struct lin_joiner *v, const struct lin_gpu *g,
					 const struct lin_corr_ent *c, const struct lin_br **b)
{
	*b = NULL;
	if (!c || !(c->flags & LIN_C_API))
		return LIN_BF_NONE;
	return lin_j_bracket_find(v, g->proc, c, b);
}

static enum lin_cause lost_cause(const struct lin_joiner *v, const struct lin_gpu *g,
				 const struct lin_corr_ent *c, bool node_missing, bool node_ok,
				 enum lin_bracket_find bf)
{
	const struct lin_jproc *p = &v->procs[g->proc];
	if (g->flags & LIN_G_DEVLAUNCH)
		return LIN_CAUSE_DEVICE_LAUNCHED_GRAPH;
	if (c && (c->flags & LIN_C_EXT))
		return p->dropped_host ? LIN_CAUSE_DROPPED_RECORDS : LIN_CAUSE_UNKNOWN_EPOCH;
	if (node_missing && (!c || !(c->flags & LIN_C_API)))
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
	if (bf == LIN_BF_UNCLOSED)
		return LIN_CAUSE_BRACKET_END_UNKNOWN;
	if (bf == LIN_BF_NO_CLOCK)
		return LIN_CAUSE_NO_CLOCK_RECORD;
	if (bf == LIN_BF_UNCERTAIN)
		return LIN_CAUSE_CLOCK_UNCERTAINTY;
	if (node_ok || node_missing)
		return node_ok ? LIN_CAUSE_REPLAY_OUTSIDE_LINEAGE : LIN_CAUSE_UNKNOWN_GRAPH_NODE;
	return LIN_CAUSE_NO_EXTERNAL_CORRELATION;
}

/* The level a record reaches without a join: its API call, and a bracket around it. */
static enum lin_level partial_level(const struct lin_corr_ent *c, enum lin_bracket_find bf)
{
	if (!c || !(c->flags & LIN_C_API))
		return LIN_LEVEL_NONE;
	return bf == LIN_BF_FOUND ? LIN_LEVEL_OP : LIN_LEVEL_API_CALL;
}

/*
 * Could the API call of @c have launched @g? A graph launch makes only graph records, a
 * kernel, memcpy or memset launch only its own kind of record and never a graph one, and
 * a graph record's clone belongs to the exec its replay epoch replayed.
 */
/* May the API call of @c make several GPU records (a graph, a multi-device launch, a batch of
 * copies)? Then a second one is no reuse, and its join stays open for the others. */
static bool many(const struct lin_gpu *g, const struct lin_corr_ent *c)
{
	return (g->flags & LIN_G_GRAPH) ||
	       (c && (c->lkind == LIN_LAUNCH_KERNEL_MULTI || c->lkind == LIN_LAUNCH_MEMCPY_BATCH));
}

static bool mismatched(const struct lin_joiner *v, const struct lin_gpu *g, const struct lin_corr_ent *c)
{
	if (!c || !(c->flags & LIN_C_API) || !c->lkind)
		return false;
	bool graph = g->flags & LIN_G_GRAPH;
	if (c->lkind == LIN_LAUNCH_GRAPH) {
		if (!graph)
			return true;
	} else {
		static const uint8_t kind_of[] = { [LIN_LAUNCH_KERNEL] = LIN_REC_KERNEL,
						   [LIN_LAUNCH_MEMCPY] = LIN_REC_MEMCPY,
						   [LIN_LAUNCH_MEMSET] = LIN_REC_MEMSET,
						   [LIN_LAUNCH_KERNEL_MULTI] = LIN_REC_KERNEL,
						   [LIN_LAUNCH_MEMCPY_BATCH] = LIN_REC_MEMCPY };
		return graph || c->lkind > LIN_LAUNCH_MEMCPY_BATCH || kind_of[c->lkind] != g->kind;
	}
	if (!g->node || !(c->flags & LIN_C_EXT))
		return false;
	const struct lin_clone_ent *cl = lin_vtab_find(&v->clones, g->node, lin_k1(g->proc, 0));
	const uint64_t *x = lin_vtab_find(&v->replays, c->epoch, lin_k1(g->proc, 0));
	return cl && x && cl->exec != LIN_NIL && cl->exec != *x;
}

static struct verdict classify(const struct lin_joiner *v, const struct lin_gpu *g,
			       const struct lin_corr_ent *c, bool final)
{
	struct verdict r = { CLS_PENDING, 0, LIN_NIL, LIN_NIL, LIN_LEVEL_NONE };
	if (c && (c->flags & LIN_C_FOREIGN)) {
		/* Its API record contradicts its file's process (api_pid_mismatch). */
		r.cls = CLS_LOST;
		r.why = LIN_CAUSE_FOREIGN_PROCESS;
		r.level = LIN_LEVEL_API_CALL;
		return r;
	}
	if (c && (c->flags & LIN_C_API) && mismatched(v, g, c)) {
		r.cls = CLS_LOST;
		r.why = LIN_CAUSE_CORRELATION_MISMATCH;
		r.level = LIN_LEVEL_API_CALL;
		return r;
	}
	uint64_t ne;
	bool node_ok = g->node && node_origin(v, g, &ne);
	if (node_ok)
		r.node_epoch = ne;
	bool ext = c && (c->flags & LIN_C_EXT);
	bool api = c && (c->flags & LIN_C_API);
	bool settled = api && (!g->node || node_ok);
	if (ext && (c->flags & LIN_C_AMBIG) && (final || settled)) {
		r.cls = CLS_AMBIGUOUS;
		r.level = api ? LIN_LEVEL_API_CALL : LIN_LEVEL_NONE;
		return r;
	}
	struct target t;
	if (ext && declared(v, g->proc, c->epoch, &t) && (final || settled)) {
		r.cls = CLS_OBSERVED;
		r.epoch = c->epoch;
		r.level = target_level(&t);
		r.late = lin_c_late(c->flags);
		return r;
	}
	if (!final)
		return r;
	/* Node origin is provenance (r.node_epoch), never a join: a replay that pushed nothing
	 * joins only through the launch bracket around its graph launch, if any. */
	const struct lin_br *b = NULL;
	enum lin_bracket_find bf = ext ? LIN_BF_NONE : containment(v, g, c, &b);
	/* Only a bracket that pushed nothing is evidence by time: inside a pushed one, the
	 * call's missing ext record is the loss. */
	bool bare = bf == LIN_BF_FOUND && !b->pushed;
	if (bare && b->id != LIN_NIL && declared(v, g->proc, b->id, &t)) {
		r.cls = CLS_INFERRED;
		r.why = LIN_RULE_TIME_CONTAINMENT;
		r.epoch = b->id;
		r.level = target_level(&t);
		r.late = b->late;
		return r;
	}
	r.cls = CLS_LOST;
	r.level = partial_level(c, bf);
	if (bare && b->id != LIN_NIL)
		r.why = v->procs[g->proc].dropped_host ? LIN_CAUSE_DROPPED_RECORDS
						       : LIN_CAUSE_UNKNOWN_EPOCH;
	else
		r.why = (int)lost_cause(v, g, c, g->node && !node_ok, node_ok, bf);
	return r;
}

/* The verdict on @g, for the tool (lin_join_tool.gpu) and the judge (lin_join_judge.judge):
 * keyed by its file and offset; @tg holds its requests (reqs may point into it). */
static void verdict_of(const struct lin_joiner *v, const struct lin_gpu *g, const struct verdict *r,
		       struct target *tg, struct lin_gpu_verdict *vd)
{
	static const enum lin_join join[] = {
		[CLS_OBSERVED] = LIN_JOIN_OBSERVED,
		[CLS_INFERRED] = LIN_JOIN_INFERRED,
		[CLS_LOST] = LIN_JOIN_LOST,
		[CLS_AMBIGUOUS] = LIN_JOIN_AMBIGUOUS,
	};
	*vd = (struct lin_gpu_verdict){ .offset = g->offset,
					.epoch = LIN_NIL,
					.file = g->file,
					.join = join[r->cls],
					.level = r->level,
					.proc = g->proc,
					.late = r->late,
					.key = g->key,
					.corr = g->corr,
					.index = g->index,
					.kind = g->kind,
					.keyed = (g->flags & LIN_G_KEY) != 0 };
	*tg = (struct target){ NULL, 0, 0 };
	if (r->cls == CLS_OBSERVED || r->cls == CLS_INFERRED) {
		vd->epoch = r->epoch;
		if (declared(v, g->proc, r->epoch, tg)) {
			vd->reqs = tg->req;
			vd->nreqs = tg->nreq;
		}
	}
	if (r->cls == CLS_INFERRED)
		vd->why = rule_names[r->why];
	else if (r->cls == CLS_LOST)
		vd->why = cause_names[r->why];
	else if (r->cls == CLS_AMBIGUOUS)
		vd->why = AMBIGUOUS_CAUSE;
}

static void account(struct lin_joiner *v, const struct lin_gpu *g, const struct verdict *r)
{
	struct lin_gpu_verdict vd;
	struct target tg;
	bool judge = v->opts.judge.judge != NULL;
	if (v->opts.tool.gpu || judge)
		verdict_of(v, g, r, &tg, &vd);
	if (v->opts.tool.gpu)
		v->opts.tool.gpu(v->opts.tool.arg, &vd);
	static const char *const nm[] = { "correlation", "epoch", "graph_node_id", "node_epoch", "pid" };
	uint64_t ids[] = { g->corr ? g->corr : LIN_NIL, r->epoch, g->node ? g->node : LIN_NIL,
			   r->node_epoch, v->procs[g->proc].pid };
	v->sum.joined_by_level[r->level]++;
	if ((r->cls == CLS_OBSERVED || r->cls == CLS_INFERRED) && r->late)
		v->sum.joined_late[r->late]++;
	switch (r->cls) {
	case CLS_OBSERVED: v->sum.observed++; break;
	case CLS_INFERRED:
		v->sum.inferred++;
		v->sum.inferred_by_rule[r->why]++;
		break;
	case CLS_LOST:
		v->sum.lost++;
		v->sum.lost_by_cause[r->why]++;
		lin_j_finding(v, "lost", cause_names[r->why], g->file, g->offset, g->index, 5, nm, ids);
		break;
	case CLS_AMBIGUOUS: {
		v->sum.ambiguous++;
		size_t before = v->findings.n;
		lin_j_finding(v, "ambiguous", AMBIGUOUS_CAUSE, g->file, g->offset, g->index, 1, nm, ids);
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
	/* After the joiner's own findings on the record, as the truth comparison always was. */
	if (judge)
		v->opts.judge.judge(v->opts.judge.arg, v, &vd);
}

static void api_before_gpu(struct lin_joiner *v, const struct lin_gpu *g, const struct lin_corr_ent *c)
{
	if (!c || !(c->flags & LIN_C_API) || c->api_start == LIN_NIL || g->t0 == LIN_NIL ||
	    g->t0 >= c->api_start)
		return;
	static const char *const n[] = { "correlation", "api_start_dev", "gpu_dev" };
	uint64_t ids[] = { g->corr, c->api_start, g->t0 };
	v->sum.structural++;
	lin_j_finding(v, "structural", "time_order", g->file, g->offset, g->index, 3, n, ids);
}

void lin_j_gpu(struct lin_joiner *v, struct lin_gpu *g)
{
	struct lin_corr_ent *c = NULL;
	if (g->corr) {
		c = lin_vtab_find(&v->corrs, g->corr, lin_k1(g->proc, 0));
		if (!c && lin_j_closed(v, g->proc, g->corr, false)) {
			static const char *const n[] = { "correlation" };
			v->sum.structural++;
			lin_j_finding(v, "structural", "correlation_reused", g->file, g->offset,
				      g->index, 1, n, &g->corr);
			struct verdict r = { CLS_LOST, LIN_CAUSE_CORRELATION_REUSED, LIN_NIL,
					     LIN_NIL, LIN_LEVEL_NONE };
			account(v, g, &r);
			return;
		}
		if (c && c->ngpu && !many(g, c)) {
			static const char *const n[] = { "correlation" };
			v->sum.structural++;
			lin_j_finding(v, "structural", "correlation_reused", g->file, g->offset,
				      g->index, 1, n, &g->corr);
		}
		if (c && c->ngpu < 255) {
			c->ngpu++;
			g->flags |= LIN_G_COUNTED;
		}
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
	if (r.cls == CLS_OBSERVED && !many(g, c) && c) {
		lin_j_closed(v, g->proc, g->corr, true);
		lin_vtab_del(&v->corrs, c);
	}
}

static void finish_adopts(struct lin_joiner *v)
{
	static const char *const n[] = { "capture_tid", "capture_seq" };
	for (size_t i = 0; i < v->adopts.n; i++) {
		const struct lin_adopt *a = lin_vec_at(&v->adopts, i);
		const uint64_t *s = lin_j_capture_slot(v, a->proc, a->tid, a->seq, false);
		uint64_t ids[] = { a->tid, a->seq };
		const char *cause = NULL;
		if (!s || !*s)
			cause = "adopt_without_capture";
		else if (*s != LIN_J_CAPTURE_UNTIMED && a->host_ns < *s - 1)
			cause = "adopt_before_capture";
		if (!cause)
			continue;
		v->sum.structural++;
		lin_j_finding(v, "structural", cause, a->file, a->offset, a->index, 2, n, ids);
	}
}

/*
 * Does the launch API record for @corr expect a GPU record it never got? Driver launches
 * are held to it only in processes that traced no runtime API: inside a runtime launch,
 * the driver call is its implementation and the GPU record carries one of the two ids.
 */
static bool missing_gpu(const struct lin_joiner *v, uint16_t proc, uint64_t corr)
{
	const struct lin_corr_ent *c = lin_vtab_find(&v->corrs, corr, lin_k1(proc, 0));
	if (!c || !(c->flags & LIN_C_LAUNCH) || c->ngpu)
		return false;
	if (!c->partner)
		return true;
	/* Its nested partner got the record: joined and evicted, or still open with one. */
	const struct lin_corr_ent *p = lin_vtab_find(&v->corrs, c->partner, lin_k1(proc, 0));
	return p ? !p->ngpu : !lin_j_closed((struct lin_joiner *)v, proc, c->partner, false);
}

static int capture_cmp(const void *a, const void *b)
{
	const struct lin_capture *x = a, *y = b;
	return x->begin < y->begin ? -1 : x->begin > y->begin;
}

static int capthr_cmp(const void *a, const void *b)
{
	const struct lin_capthr *x = a, *y = b;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->begin < y->begin ? -1 : x->begin > y->begin;
}

/* Sort each process's capture windows, an open one ending at the end of the run; each
 * window's aux becomes the latest end up to it. The closed ones are listed again by thread
 * (capthr), each with the latest end of its thread's windows up to it. */
static void sort_captures(struct lin_joiner *v)
{
	for (unsigned i = 0; i < v->nprocs; i++) {
		struct lin_jproc *p = &v->procs[i];
		struct lin_vec *w = &p->capwin;
		for (size_t k = 0; k < w->n; k++) {
			struct lin_capture *c = lin_vec_at(w, k);
			if (c->end == LIN_NIL) {
				c->end = UINT64_MAX;
				c->open = 1;
			}
		}
		if (w->n > 1)
			qsort(w->data, w->n, w->esz, capture_cmp);
		uint64_t pmax = 0;
		for (size_t k = 0; k < w->n; k++) {
			struct lin_capture *c = lin_vec_at(w, k);
			pmax = c->end > pmax ? c->end : pmax;
			c->aux = pmax;
			struct lin_capthr *t = c->open ? NULL : lin_vec_push(&p->capthr);
			if (t)
				*t = (struct lin_capthr){ c->begin, c->end, c->tid, 0 };
			else if (!c->open)
				v->oom = true;
		}
		struct lin_vec *th = &p->capthr;
		if (th->n > 1)
			qsort(th->data, th->n, th->esz, capthr_cmp);
		for (size_t k = 1; k < th->n; k++) {
			struct lin_capthr *a = lin_vec_at(th, k - 1), *b = lin_vec_at(th, k);
			if (a->tid == b->tid && a->pmax > b->pmax)
				b->pmax = a->pmax;
		}
	}
}

/*
 * Was @corr (on @tid) called while a stream capture was open in its process? A launch on
 * the capturing thread may have been captured into a graph rather than run, and owes no
 * GPU record (1). One on another thread may have been captured too (relaxed capture lets
 * any thread launch into the capturing stream) or lost: the trace cannot tell (2). A
 * window holds corr when it began before it and ended after it; one that never closed in
 * the trace holds nothing for sure. Two binary searches: the windows that began before
 * corr and the latest end among them (aux), then the closed ones of its thread alike.
 */
static int in_capture(const struct lin_joiner *v, uint16_t proc, uint64_t corr, uint32_t tid)
{
	const struct lin_jproc *p = &v->procs[proc];
	const struct lin_vec *w = &p->capwin;
	size_t lo = 0, hi = w->n; /* windows opened before corr */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (((const struct lin_capture *)lin_vec_at(w, mid))->begin < corr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || ((const struct lin_capture *)lin_vec_at(w, lo - 1))->aux <= corr)
		return 0;
	const struct lin_vec *th = &p->capthr;
	lo = 0, hi = th->n; /* the first at or after (tid, corr) */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		const struct lin_capthr *t = lin_vec_at(th, mid);
		if (t->tid < tid || (t->tid == tid && t->begin < corr))
			lo = mid + 1;
		else
			hi = mid;
	}
	const struct lin_capthr *t = lo ? lin_vec_at(th, lo - 1) : NULL;
	return t && t->tid == tid && t->pmax > corr ? 1 : 2;
}

/* Launch accounting: every launch API that returned success is owed a GPU record. */
static void finish_launches(struct lin_joiner *v)
{
	static const char *const n[] = { "correlation", "pid", "tid" };
	size_t it = 0;
	struct lin_vkey k;
	const struct lin_corr_ent *c;
	while ((c = lin_vtab_next(&v->corrs, &it, &k))) {
		uint16_t proc = lin_k1_proc(k.k1);
		if (!missing_gpu(v, proc, k.k0))
			continue;
		int cap = in_capture(v, proc, k.k0, c->api_tid);
		if (cap == 1) {
			v->sum.captured_launches++;
			continue;
		}
		enum lin_cause cause = v->procs[proc].dropped_cupti ? LIN_CAUSE_DROPPED_RECORDS
				       : cap                        ? LIN_CAUSE_MAYBE_CAPTURED
								    : LIN_CAUSE_NO_GPU_RECORD;
		uint64_t ids[] = { k.k0, v->procs[proc].pid, c->api_tid };
		v->sum.lost++;
		v->sum.lost_by_cause[cause]++;
		lin_j_finding(v, "lost", cause_names[cause], c->api_file, c->api_offset,
			      c->api_index, 3, n, ids);
	}
}

static void finish_strings(struct lin_joiner *v)
{
	size_t it = 0;
	struct lin_vkey k;
	struct lin_ref_ent *u;
	static const char *const n[] = { "sid" };
	while ((u = lin_vtab_next(&v->undef, &it, &k))) {
		v->sum.structural++;
		lin_j_finding(v, "structural", "undefined_string_id", u->file, u->offset, u->index,
			      1, n, &k.k0);
	}
}

bool lin_joiner_launch_counted_lost(const struct lin_joiner *v, uint16_t proc, uint64_t corr)
{
	const struct lin_corr_ent *c =
		proc < v->nprocs ? lin_vtab_find(&v->corrs, corr, lin_k1(proc, 0)) : NULL;
	return c && missing_gpu(v, proc, corr) && in_capture(v, proc, corr, c->api_tid) != 1;
}

const uint64_t *lin_joiner_epoch_shares(const struct lin_joiner *v, uint16_t proc, uint64_t epoch,
					const uint64_t **reqs, uint32_t *n)
{
	const struct lin_epoch_ent *e =
		proc < v->nprocs ? lin_vtab_find(&v->epochs, epoch, lin_k1(proc, 0)) : NULL;
	*n = 0;
	if (reqs)
		*reqs = NULL;
	if (!e || !(e->flags & LIN_EP_SHARED) || !e->nreq)
		return NULL;
	uint32_t nreq;
	const uint64_t *r = lin_j_epoch_reqs(v, e, &nreq);
	if (reqs)
		*reqs = r;
	*n = nreq;
	return lin_vec_at(&v->sharepool, e->share0);
}

uint64_t lin_joiner_first_token(const struct lin_joiner *v, uint16_t proc, uint64_t req)
{
	const uint64_t *e = proc < v->nprocs ? lin_vtab_find(&v->firsttok, req, lin_k1(proc, 0)) : NULL;
	return e ? *e : UINT64_MAX;
}

/* Why a process (or the run, when @p is NULL) has launches and no GPU record, in words. */
static void why_empty(const struct lin_joiner *v, const struct lin_jproc *p, char *buf, size_t n)
{
	if (!p && v->empty_why[0]) { /* an importer knows why */
		snprintf(buf, n, "%s", v->empty_why);
		return;
	}
	if (!p && v->nprocs)
		p = &v->procs[0];
	if (!p) {
		snprintf(buf, n, "no GPU record was read");
		return;
	}
	/* What to do, where the trace says: a host-only trace is the first trace of most users
	 * (docs/validator.md, "A trace without GPU records"). */
	if (!strcmp(p->backend, "none"))
		snprintf(buf, n,
			 "the runtime ran with backend none: no CUPTI activity was collected; "
			 "create it with the CUPTI backend (LIN_BACKEND_CUPTI, Python "
			 "backend=\"cupti\") to record GPU work, or check the host-side records "
			 "alone with --allow-empty");
	else if (p->cupti[0] && strcmp(p->cupti, "ok"))
		snprintf(buf, n,
			 "CUPTI was not usable: %s; the program recorded host-side lineage only. "
			 "Run it where an NVIDIA GPU and its driver are visible (nvidia-smi lists "
			 "one) to record GPU work, or check the host-side records alone with "
			 "--allow-empty",
			 p->cupti);
	else if (p->dropped_cupti)
		snprintf(buf, n, "CUPTI records were dropped (see the loss findings)");
	else if (p->launches && !p->api_records)
		snprintf(buf, n,
			 "%llu launch brackets but no CUPTI activity record: CUPTI was never "
			 "enabled or its buffers were never flushed",
			 (unsigned long long)p->launches);
	else if (p->launches)
		snprintf(buf, n,
			 "%llu launch brackets and %llu API records but no kernel, memcpy or "
			 "memset record",
			 (unsigned long long)p->launches, (unsigned long long)p->api_records);
	else
		snprintf(buf, n, "the trace holds no launch and no GPU record");
}

static void empty_finding(struct lin_joiner *v, const struct lin_jproc *p)
{
	static const char *const n[] = { "pid", "launches" };
	uint64_t ids[] = { p ? p->pid : LIN_NIL, p ? p->launches : v->sum.launches };
	size_t before = v->findings.n;
	v->sum.structural++;
	lin_j_finding(v, "structural", "no_gpu_records", p ? p->file : 0, 0, 0, 2, n, ids);
	if (v->findings.n > before) {
		struct lin_finding *f = lin_vec_at(&v->findings, before);
		why_empty(v, p, f->detail, sizeof(f->detail));
	}
}

/* No vacuous pass: a run without GPU records, or a process that launched and got none,
 * proves nothing about its joins (unless the caller allows an empty run). */
static void finish_empty(struct lin_joiner *v)
{
	if (v->sum.file_errors)
		return;
	if (!v->sum.gpu_records) {
		if (!v->opts.allow_empty)
			empty_finding(v, NULL);
		return;
	}
	/* A run with GPU records: --allow-empty says nothing of a process in it. */
	static const char *const n[] = { "pid", "gpu_records" };
	for (unsigned i = 0; i < v->nprocs; i++) {
		struct lin_jproc *p = &v->procs[i];
		if (p->launches && !p->gpu_records)
			empty_finding(v, p);
		if (!p->gpu_called || p->api_records)
			continue;
		/* GPU records and no API record: launches cannot be accounted for. */
		uint64_t ids[] = { p->pid, p->gpu_records };
		size_t before = v->findings.n;
		v->sum.structural++;
		lin_j_finding(v, "structural", "no_api_records", p->file, 0, 0, 2, n, ids);
		if (v->findings.n > before)
			snprintf(((struct lin_finding *)lin_vec_at(&v->findings, before))->detail,
				 sizeof(((struct lin_finding *)NULL)->detail),
				 "GPU records but no runtime or driver API record: API activity was "
				 "not collected, so no launch can be accounted for");
	}
}

/*
 * trace_end counts every host event the runtime dropped; the dropped records of source 1
 * count them thread by thread. Fewer in the records than at the end is a loss the records
 * do not show (a dropped record removed, or a writer that failed to write one).
 */
static void finish_end_counts(struct lin_joiner *v)
{
	for (unsigned p = 0; p < v->nprocs; p++) {
		const struct lin_jproc *pr = &v->procs[p];
		if (pr->end_dropped == LIN_NIL || pr->end_dropped <= pr->host_dropped)
			continue;
		static const char *const n[] = { "pid", "trace_end_dropped", "recorded" };
		uint64_t ids[] = { pr->pid, pr->end_dropped, pr->host_dropped };
		v->sum.dropped += pr->end_dropped - pr->host_dropped;
		v->sum.structural++;
		size_t before = v->findings.n;
		lin_j_finding(v, "loss", "dropped_records", pr->end_file, pr->end_offset,
			      pr->end_index, 3, n, ids);
		if (v->findings.n > before)
			snprintf(((struct lin_finding *)lin_vec_at(&v->findings, before))->detail,
				 sizeof(((struct lin_finding *)0)->detail),
				 "trace_end counts more dropped host events than the dropped records");
	}
}

/* A decode share declared before the request's first token (the step that completes its
 * prefill produces it; decode steps come after): the shares contradict each other. */
static void finish_shares(struct lin_joiner *v)
{
	size_t it = 0;
	struct lin_vkey k;
	const struct lin_decode_ent *d;
	while ((d = lin_vtab_next(&v->decodes, &it, &k))) {
		const uint64_t *ft = lin_vtab_find(&v->firsttok, k.k0, k.k1);
		const struct lin_epoch_ent *e = ft ? lin_vtab_find(&v->epochs, *ft, k.k1) : NULL;
		if (!e || d->decl_ns >= e->decl_ns)
			continue;
		static const char *const n[] = { "request", "decode_epoch", "first_token_epoch" };
		uint64_t ids[] = { k.k0, d->epoch, *ft };
		v->sum.structural++;
		lin_j_finding(v, "structural", "decode_before_first_token", d->file, d->off,
			      d->index, 3, n, ids);
	}
}

void lin_j_resolve_all(struct lin_joiner *v)
{
	lin_j_brackets_finish(v);
	lin_j_xcheck_finish(v);
	for (size_t i = 0; i < v->pending.n; i++) {
		const struct lin_gpu *g = lin_vec_at(&v->pending, i);
		struct lin_corr_ent *c =
			g->corr ? lin_vtab_find(&v->corrs, g->corr, lin_k1(g->proc, 0)) : NULL;
		if (c && !(g->flags & LIN_G_COUNTED)) {
			/* It arrived before its API record: count it now, and a second non-graph
			 * record of one correlation is the same finding as at arrival. */
			if (c->ngpu && !many(g, c)) {
				static const char *const n[] = { "correlation" };
				v->sum.structural++;
				lin_j_finding(v, "structural", "correlation_reused", g->file,
					      g->offset, g->index, 1, n, &g->corr);
			}
			if (c->ngpu < 255)
				c->ngpu++;
		}
		struct verdict r = classify(v, g, c, true);
		account(v, g, &r);
	}
	lin_j_accounting_finish(v);
	lin_j_inv_finish(v);
	sort_captures(v);
	finish_launches(v);
	finish_adopts(v);
	finish_strings(v);
	finish_shares(v);
	if (v->opts.judge.finish) /* where the unseen truth labels were always reported */
		v->opts.judge.finish(v->opts.judge.arg, v);
	finish_empty(v);
	finish_end_counts(v);
}

void lin_joiner_finish(struct lin_joiner *v) { lin_j_resolve_all(v); }

const struct lin_join_summary *lin_joiner_summary(const struct lin_joiner *v) { return &v->sum; }

int lin_joiner_exit_code(const struct lin_joiner *v)
{
	const struct lin_join_summary *s = &v->sum;
	if (s->file_errors || v->oom)
		return 2;
	if (s->lost || s->ambiguous || s->incorrect || s->structural)
		return 1;
	return 0;
}

const char *lin_joiner_error(const struct lin_joiner *v, uint64_t *offset, const char **file)
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
