/* SPDX-License-Identifier: MIT */
/*
 * marks.c - a ledger's marks (docs/ledger.md, "Marks"): the device's and the launch call's
 * (observed, or unknown with why), the host's (request_ready, declared, captured, adopted),
 * dependency_ready from the dependency rules on in the build (rule.h: stream_order and
 * event_wait, or graph_edge for a graph node), and the order check.
 *
 * When both dependency rules bound a launch at the same end (one device clock), the
 * readiness is known and which of the two held it is not: tied_dependencies.
 *
 * Neither dependency rule invents a readiness: each gives a lower bound, and a readiness
 * above the launch's frontier (api_exit; submitted only without it) only when the bound is
 * above it. What no rule bounds stays unknown: the stretch up to the start is unresolved.
 *
 * Two ablations stay tests here rather than rows left out: they take evidence out of the
 * trace, not a rule. LIN_XW_LATENCY makes queued and submitted no_latency_timestamps only
 * where the record would have had them (non-kernels and graph nodes keep their own
 * reasons); LIN_XW_HANDOFF makes captured and adopted not_recorded, where the adopt search
 * would otherwise find no adopt and say "no handoff" (absent) or unrecorded_handoff.
 */
#include "lineage/trace_format.h"
#include "rule.h"

static int cmp_decl(const void *pa, const void *pb)
{
	const struct lin_xdecl *a = pa, *b = pb;
	int c = cmp_u64(a->proc, b->proc);
	if (!c)
		c = cmp_u64(a->epoch, b->epoch);
	return c ? c : cmp_u64(a->host_ns, b->host_ns);
}

static int cmp_adopt(const void *pa, const void *pb)
{
	const struct lin_xadopt *a = pa, *b = pb;
	int c = cmp_u64(a->proc, b->proc);
	if (!c)
		c = cmp_u64(a->tid, b->tid);
	if (!c)
		c = cmp_u64(a->kind, b->kind);
	if (!c)
		c = cmp_u64(a->target, b->target);
	return c ? c : cmp_u64(a->host_ns, b->host_ns);
}

void lin_x_marks_index(struct lin_explain *x)
{
	lin_x_vsort(&x->decls, cmp_decl);
	lin_x_vsort(&x->adopts, cmp_adopt);
}

const struct lin_xdecl *lin_x_declaration(const struct lin_explain *x, uint16_t proc, uint64_t epoch)
{
	const struct lin_xdecl *d = (const struct lin_xdecl *)x->decls.data;
	size_t lo = 0, hi = x->decls.n;
	struct lin_xdecl key = { .epoch = epoch, .host_ns = 0, .proc = proc };
	while (lo < hi) { /* first entry >= key */
		size_t mid = (lo + hi) / 2;
		if (cmp_decl(&d[mid], &key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < x->decls.n && d[lo].proc == proc && d[lo].epoch == epoch ? &d[lo] : NULL;
}

/* The latest adopt of (@kind, @target) on thread @tid at or before @before (NULL: none). */
static const struct lin_xadopt *adopt_at(const struct lin_explain *x, uint16_t proc, uint64_t tid,
					 uint8_t kind, uint64_t target, uint64_t before)
{
	const struct lin_xadopt *a = (const struct lin_xadopt *)x->adopts.data;
	size_t lo = 0, hi = x->adopts.n;
	struct lin_xadopt key = { .tid = tid, .host_ns = before, .target = target, .proc = proc, .kind = kind };
	while (lo < hi) { /* first entry > key */
		size_t mid = (lo + hi) / 2;
		if (cmp_adopt(&a[mid], &key) <= 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	const struct lin_xadopt *c = &a[lo - 1];
	return c->proc == proc && c->tid == tid && c->kind == kind && c->target == target ? c : NULL;
}

/* Whether thread @tid has any adopt of a request. */
static bool adopts_requests(const struct lin_explain *x, uint16_t proc, uint64_t tid)
{
	const struct lin_xadopt *a = (const struct lin_xadopt *)x->adopts.data;
	size_t lo = 0, hi = x->adopts.n;
	struct lin_xadopt key = { .tid = tid, .proc = proc, .kind = LIN_TARGET_REQUEST };
	while (lo < hi) { /* first entry >= (proc, tid, REQUEST, 0, 0) */
		size_t mid = (lo + hi) / 2;
		if (cmp_adopt(&a[mid], &key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < x->adopts.n && a[lo].proc == proc && a[lo].tid == tid &&
	       a[lo].kind == LIN_TARGET_REQUEST;
}

/* The latest adopt of the launch's work on thread @tid at or before @before: of its epoch,
 * or of one of its requests (or, joined to a request itself, of that request). */
static const struct lin_xadopt *adopt_of(const struct lin_explain *x, const struct lin_xlaunch *l,
					 uint64_t tid, uint64_t before, bool to_request)
{
	const struct lin_xadopt *best = NULL, *c;
	if (!to_request)
		best = adopt_at(x, l->proc, tid, LIN_TARGET_EPOCH, l->epoch, before);
	if (!adopts_requests(x, l->proc, tid))
		return best;
	if (to_request) {
		c = adopt_at(x, l->proc, tid, LIN_TARGET_REQUEST, l->epoch, before);
		if (c && (!best || c->host_ns > best->host_ns))
			best = c;
	}
	const uint64_t *r = lin_explain_reqs(x, l);
	for (uint32_t q = 0; q < l->nreq; q++) {
		c = adopt_at(x, l->proc, tid, LIN_TARGET_REQUEST, r[q], before);
		if (c && (!best || c->host_ns > best->host_ns))
			best = c;
	}
	return best;
}

void lin_x_host_marks(const struct lin_xbuild *b, struct lin_xlaunch *l, size_t i, uint64_t tid)
{
	const struct lin_xgpu *g = gpu_at(b, i);
	struct lin_explain *x = b->x;
	if (g->proc == LIN_XPROC_IMPORTED) {
		for (enum lin_mark m = LIN_M_REQUEST_READY; m <= LIN_M_ADOPTED; m++)
			mark_unknown(l, m, LIN_HOW_NOT_IN_FORMAT);
		return;
	}
	unsigned losses = lin_joiner_proc_losses(b->v, g->proc);
	/* The call's start, and how far the clock mapping may have moved it. */
	uint64_t anchor = UINT64_MAX - 1, aerr = 0;
	if (mark_known(l, LIN_M_API_ENTER))
		anchor = l->m[LIN_M_API_ENTER].t, aerr = l->m[LIN_M_API_ENTER].err;
	else if (mark_known(l, LIN_M_KERNEL_START))
		anchor = l->m[LIN_M_KERNEL_START].t, aerr = l->m[LIN_M_KERNEL_START].err;
	uint64_t hi = sat_add(anchor, aerr), lo = anchor > aerr ? anchor - aerr : 0;
	mark_unknown(l, LIN_M_REQUEST_READY, LIN_HOW_NOT_RECORDED);
	if (l->nreq) {
		const struct lin_xbegin *t = lin_vtab_find(&x->begins, l->group, pk1(g->proc, 0));
		if (t)
			mark_set(l, LIN_M_REQUEST_READY, t->host_ns, 0, LIN_EV_OBSERVED,
				 LIN_HOW_RUNTIME_HOOK);
	}
	/* Where the work was declared (or, joined to a request, where that began). */
	uint64_t origin_tid = LIN_NIL, after = 0;
	const struct lin_xdecl *d = lin_x_declaration(x, g->proc, l->epoch);
	const struct lin_xbegin *rq = d ? NULL : lin_vtab_find(&x->begins, l->epoch, pk1(g->proc, 0));
	if (d && d->host_ns <= hi) {
		mark_set(l, LIN_M_DECLARED, d->host_ns, 0, LIN_EV_OBSERVED, LIN_HOW_RUNTIME_HOOK);
		origin_tid = d->tid;
		after = d->host_ns;
	} else if (d) {
		mark_unknown(l, LIN_M_DECLARED, LIN_HOW_OUT_OF_ORDER); /* declared after its launch */
	} else if (rq) {
		mark_set(l, LIN_M_DECLARED, 0, 0, LIN_EV_ABSENT, LIN_HOW_JOINED_TO_REQUEST);
		origin_tid = rq->tid;
		after = rq->host_ns;
	} else {
		mark_unknown(l, LIN_M_DECLARED, LIN_HOW_NOT_RECORDED);
	}
	if (tid == LIN_NIL) {
		mark_unknown(l, LIN_M_CAPTURED, LIN_HOW_NO_API_RECORD);
		mark_unknown(l, LIN_M_ADOPTED, LIN_HOW_NO_API_RECORD);
		return;
	}
	if (x->o.without & LIN_XW_HANDOFF) {
		/* Left out: whether the work was handed off is then not known either (an absent
		 * handoff rests on the adopt records too), so the stretch to the call is
		 * unresolved, not thread_delay. */
		mark_unknown(l, LIN_M_CAPTURED, LIN_HOW_NOT_RECORDED);
		mark_unknown(l, LIN_M_ADOPTED, LIN_HOW_NOT_RECORDED);
		return;
	}
	const struct lin_xadopt *a = adopt_of(x, l, tid, hi, !d && rq);
	if (a && a->host_ns < after)
		a = NULL; /* an adopt of an earlier declaration's work */
	if (a && a->host_ns > lo) {
		/* Within the clock error of the call's start: before it or after, unknown. */
		mark_unknown(l, LIN_M_CAPTURED, LIN_HOW_CLOCK_UNCERTAINTY);
		mark_unknown(l, LIN_M_ADOPTED, LIN_HOW_CLOCK_UNCERTAINTY);
		return;
	}
	if (!a) {
		/* No adopt: the step did not happen only when nothing was lost and the work was
		 * launched on the thread that declared it. */
		enum lin_how h = LIN_HOW_NO_HANDOFF;
		if (losses & LIN_LOST_HOST)
			h = LIN_HOW_DROPPED_RECORDS;
		else if (origin_tid == LIN_NIL)
			h = LIN_HOW_NOT_RECORDED;
		else if (origin_tid != tid)
			h = LIN_HOW_UNRECORDED_HANDOFF;
		enum lin_evidence ev = h == LIN_HOW_NO_HANDOFF ? LIN_EV_ABSENT : LIN_EV_UNKNOWN;
		mark_set(l, LIN_M_CAPTURED, 0, 0, ev, h);
		mark_set(l, LIN_M_ADOPTED, 0, 0, ev, h);
		return;
	}
	mark_set(l, LIN_M_ADOPTED, a->host_ns, 0, LIN_EV_OBSERVED, LIN_HOW_RUNTIME_HOOK);
	const uint64_t *c = a->ctid == LIN_NIL || a->cseq == LIN_NIL
				    ? NULL
				    : lin_vtab_find(&x->caps, a->cseq, pk1(g->proc, a->ctid));
	if (!c)
		mark_unknown(l, LIN_M_CAPTURED,
			     (losses & LIN_LOST_HOST) ? LIN_HOW_DROPPED_RECORDS : LIN_HOW_NOT_RECORDED);
	else if (!*c)
		mark_unknown(l, LIN_M_CAPTURED, LIN_HOW_LEAN_TIMESTAMPS);
	else
		mark_set(l, LIN_M_CAPTURED, *c - 1, 0, LIN_EV_OBSERVED, LIN_HOW_RUNTIME_HOOK);
}

/* The device marks, and in @raw each one's time as written (imported: the file's clock). */
void lin_x_device_marks(const struct lin_xbuild *b, struct lin_xlaunch *l, size_t i, uint64_t *tid,
			uint64_t *raw)
{
	const struct lin_xgpu *g = gpu_at(b, i);
	struct lin_explain *x = b->x;
	enum lin_how act = g->proc == LIN_XPROC_IMPORTED ? LIN_HOW_IMPORT_ACTIVITY
							 : LIN_HOW_CUPTI_ACTIVITY;
	if (b->hs[i] != LIN_NIL) {
		mark_set(l, LIN_M_KERNEL_START, b->hs[i], b->herr[i], LIN_EV_OBSERVED, act);
		mark_set(l, LIN_M_KERNEL_END, b->he[i], b->herr[i], LIN_EV_OBSERVED, act);
		raw[LIN_M_KERNEL_START] = g->start;
		raw[LIN_M_KERNEL_END] = g->end;
	} else {
		enum lin_how h = g->start == LIN_NIL || g->end == LIN_NIL || g->end < g->start
					 ? LIN_HOW_NOT_RECORDED
					 : LIN_HOW_NO_CLOCK;
		mark_unknown(l, LIN_M_KERNEL_START, h);
		mark_unknown(l, LIN_M_KERNEL_END, h);
	}
	*tid = LIN_NIL;
	if (g->proc == LIN_XPROC_IMPORTED) {
		mark_unknown(l, LIN_M_QUEUED, LIN_HOW_NOT_IN_FORMAT);
		mark_unknown(l, LIN_M_SUBMITTED, LIN_HOW_NOT_IN_FORMAT);
		if (g->api_s != LIN_NIL && g->api_e != LIN_NIL) {
			mark_set(l, LIN_M_API_ENTER, g->api_s, 0, LIN_EV_OBSERVED, LIN_HOW_IMPORT_API);
			mark_set(l, LIN_M_API_EXIT, g->api_e, 0, LIN_EV_OBSERVED, LIN_HOW_IMPORT_API);
			raw[LIN_M_API_ENTER] = g->api_s;
			raw[LIN_M_API_EXIT] = g->api_e;
		} else {
			mark_unknown(l, LIN_M_API_ENTER, LIN_HOW_NO_API_RECORD);
			mark_unknown(l, LIN_M_API_EXIT, LIN_HOW_NO_API_RECORD);
		}
		*tid = g->api_tid;
		return;
	}
	uint64_t h, err;
	static const enum lin_mark lat[] = { LIN_M_QUEUED, LIN_M_SUBMITTED };
	uint64_t lv[] = { g->queued, g->submitted };
	for (int k = 0; k < 2; k++) {
		if (g->kind != LIN_REC_KERNEL)
			mark_unknown(l, lat[k], LIN_HOW_NOT_RECORDED);
		else if (g->flags & LIN_XG_GRAPH)
			/* A graph node's kernel: CUPTI gives no submitted and a queued that is not
			 * its replay's (seen on an H200: up to 100 ms before the replay's call). */
			mark_unknown(l, lat[k], LIN_HOW_GRAPH_LATENCY);
		else if (lv[k] == LIN_NIL || (x->o.without & LIN_XW_LATENCY))
			mark_unknown(l, lat[k], LIN_HOW_NO_LATENCY_TIMESTAMPS);
		else if (!lin_x_to_host(b, g, lv[k], &h, &err))
			mark_unknown(l, lat[k], LIN_HOW_NO_CLOCK);
		else
			mark_set(l, lat[k], h, err, LIN_EV_OBSERVED, LIN_HOW_CUPTI_LATENCY);
		if (mark_known(l, lat[k]))
			raw[lat[k]] = lv[k];
	}
	const struct lin_xapi *a =
		g->corr == LIN_NIL ? NULL : lin_vtab_find(&x->apis, g->corr, pk1(g->proc, 0));
	uint64_t hs, he, es, ee;
	if (!a) {
		mark_unknown(l, LIN_M_API_ENTER, LIN_HOW_NO_API_RECORD);
		mark_unknown(l, LIN_M_API_EXIT, LIN_HOW_NO_API_RECORD);
		return;
	}
	*tid = a->tid;
	if (a->start == LIN_NIL || a->end == LIN_NIL || a->end < a->start) {
		mark_unknown(l, LIN_M_API_ENTER, LIN_HOW_NOT_RECORDED);
		mark_unknown(l, LIN_M_API_EXIT, LIN_HOW_NOT_RECORDED);
		return;
	}
	if (!lin_x_to_host(b, g, a->start, &hs, &es) || !lin_x_to_host(b, g, a->end, &he, &ee)) {
		mark_unknown(l, LIN_M_API_ENTER, LIN_HOW_NO_CLOCK);
		mark_unknown(l, LIN_M_API_EXIT, LIN_HOW_NO_CLOCK);
		return;
	}
	mark_set(l, LIN_M_API_ENTER, hs, es, LIN_EV_OBSERVED, LIN_HOW_CUPTI_API);
	mark_set(l, LIN_M_API_EXIT, he, ee, LIN_EV_OBSERVED, LIN_HOW_CUPTI_API);
	raw[LIN_M_API_ENTER] = a->start;
	raw[LIN_M_API_EXIT] = a->end;
}

/* A launch joined by inference: what its host marks say of it is as good as that join. */
void lin_x_inferred_join(struct lin_xlaunch *l)
{
	for (enum lin_mark m = LIN_M_REQUEST_READY; m <= LIN_M_ADOPTED; m++)
		if (l->m[m].ev == LIN_EV_OBSERVED) {
			l->m[m].ev = LIN_EV_INFERRED;
			l->m[m].how = LIN_HOW_INFERRED_JOIN;
		} else if (l->m[m].ev == LIN_EV_ABSENT) {
			mark_unknown(l, m, LIN_HOW_INFERRED_JOIN); /* "did not happen" rests on the join */
		}
}

/*
 * The marks' order: request_ready <= declared <= captured <= adopted <= api_enter <= queued
 * <= submitted <= kernel_start, and api_enter <= api_exit (a kernel may start before its
 * launch call returns: api_exit is not held to the start). A mark later than a known mark
 * that must follow it, by more than both times' errors, cannot be; it is unknown
 * (out_of_order). Walked from the start backwards, so the marks nearer the GPU record
 * (observed with it) are the ones kept.
 */
void lin_x_out_of_order(struct lin_xlaunch *l)
{
	static const enum lin_mark chain[] = { LIN_M_REQUEST_READY, LIN_M_DECLARED,
					       LIN_M_CAPTURED,      LIN_M_ADOPTED,
					       LIN_M_API_ENTER,     LIN_M_QUEUED,
					       LIN_M_SUBMITTED,     LIN_M_KERNEL_START };
	uint64_t bound = UINT64_MAX, berr = 0;
	for (size_t i = sizeof(chain) / sizeof(chain[0]); i-- > 0;) {
		enum lin_mark m = chain[i];
		if (!mark_known(l, m))
			continue;
		if (bound != UINT64_MAX && l->m[m].t > sat_add(bound, sat_add(berr, l->m[m].err))) {
			mark_unknown(l, m, LIN_HOW_OUT_OF_ORDER);
			continue;
		}
		bound = l->m[m].t;
		berr = l->m[m].err;
	}
	const struct lin_xmark *en = &l->m[LIN_M_API_ENTER], *ex = &l->m[LIN_M_API_EXIT];
	if (mark_known(l, LIN_M_API_EXIT) &&
	    ((mark_known(l, LIN_M_API_ENTER) && en->t > sat_add(ex->t, sat_add(en->err, ex->err))) ||
	     (!mark_known(l, LIN_M_API_ENTER) && en->how == LIN_HOW_OUT_OF_ORDER)))
		mark_unknown(l, LIN_M_API_EXIT, LIN_HOW_OUT_OF_ORDER); /* the call's record is in doubt */
}

/* Whether the two candidates @p and @q of a launch's readiness end together. Both are of
 * the launch's process (its stream; a recording in it): one device clock, compared as
 * written, where equal ends are the only tie. */
static bool tied(const struct lin_xbuild *b, size_t p, size_t q)
{
	return gpu_at(b, p)->end == gpu_at(b, q)->end;
}

/* dependency_ready of launch @i from the dependency rules on. @raw: the launch's
 * device-clock marks; dependency_ready's, when inferred, is the end of the record that
 * bounds it, as written. */
void lin_x_dep_mark(const struct lin_xbuild *b, struct lin_xlaunch *l, size_t i, uint64_t *raw)
{
	const struct lin_xgpu *g = gpu_at(b, i);
	uint64_t front = 0, ferr = 0;
	bool have = false;
	/* The frontier is the launch call's return (the submission time only without it): on
	 * a GPU, CUPTI's submitted is when the device took the command, after the work it
	 * waited for (seen on an H200: 0.5 to 1.2 us after a stream or event predecessor's
	 * end, however long the wait), so it cannot bound a dependency from below. */
	if (mark_known(l, LIN_M_API_EXIT))
		front = l->m[LIN_M_API_EXIT].t, ferr = l->m[LIN_M_API_EXIT].err, have = true;
	else if (mark_known(l, LIN_M_SUBMITTED))
		front = l->m[LIN_M_SUBMITTED].t, ferr = l->m[LIN_M_SUBMITTED].err, have = true;
	if (g->flags & LIN_XG_GRAPH) {
		/* A graph node: the graph rule's bound (none on: as without edge records). */
		uint64_t t = LIN_NIL, err = 0;
		size_t by = SIZE_MAX;
		enum lin_how h = LIN_HOW_GRAPH_DEPENDENCY_UNKNOWN;
		for (size_t r = 0; r < b->non; r++)
			if (b->on[r]->graph_bound) {
				h = b->on[r]->graph_bound(b, i, &t, &err, &by);
				break;
			}
		if (h != LIN_HOW_GRAPH_EDGE) {
			mark_unknown(l, LIN_M_DEP_READY, h);
		} else if (have && t > front && t - front > err + ferr) {
			mark_set(l, LIN_M_DEP_READY, t, err, LIN_EV_INFERRED, LIN_HOW_GRAPH_EDGE);
			raw[LIN_M_DEP_READY] = gpu_at(b, by)->end;
		} else {
			mark_unknown(l, LIN_M_DEP_READY, LIN_HOW_NO_KNOWN_DEPENDENCY);
		}
		return;
	}
	if (g->flags & LIN_XG_NOSTREAM) {
		mark_unknown(l, LIN_M_DEP_READY, LIN_HOW_NO_STREAM);
		return;
	}
	/* Each dependency rule's bound, in table order: the latest-ending one holds it (the
	 * first of those ending together on the host clock names it). */
	uint64_t t = LIN_NIL, err = 0;
	enum lin_how rule = LIN_HOW_NONE;
	bool overlap = false;
	size_t use[LIN_XRULES_MAX], nuse = 0, by = SIZE_MAX;
	for (size_t r = 0; r < b->non; r++) {
		if (!b->on[r]->bound)
			continue;
		size_t p = b->on[r]->bound(b, i);
		if (p == SIZE_MAX || b->he[p] == LIN_NIL)
			continue;
		if (overlaps(gpu_at(b, p), g)) {
			overlap = true; /* the rule's premise does not hold here */
			continue;
		}
		use[nuse++] = p;
		if (t == LIN_NIL || b->he[p] > t) {
			t = b->he[p];
			err = b->herr[p];
			rule = b->on[r]->how;
			by = p;
		}
	}
	/* Two records that end together: the work was ready then, held by either one. */
	for (size_t k = 0; k < nuse; k++)
		if (use[k] != by && tied(b, use[k], by))
			rule = LIN_HOW_TIED_DEPENDENCIES;
	/* A bound at or below the frontier says nothing: the launch was not held by it; nor
	 * does one above it by less than the two times' mapping errors. */
	if (t != LIN_NIL && have && t > front && t - front > err + ferr) {
		mark_set(l, LIN_M_DEP_READY, t, err, LIN_EV_INFERRED, rule);
		raw[LIN_M_DEP_READY] = gpu_at(b, by)->end;
		return;
	}
	bool lost = g->proc != LIN_XPROC_IMPORTED &&
		    (lin_joiner_proc_losses(b->v, g->proc) & LIN_LOST_CUPTI);
	mark_unknown(l, LIN_M_DEP_READY,
		     overlap ? LIN_HOW_OVERLAPPING_PREDECESSOR
		     : lost  ? LIN_HOW_DROPPED_RECORDS
			     : LIN_HOW_NO_KNOWN_DEPENDENCY);
}
