/* SPDX-License-Identifier: MIT */
/*
 * ledger.c - one ledger per explained GPU record: its marks with their evidence, the
 * inferred dependency readiness, and the statements (docs/ledger.md); the groups (requests,
 * ops), the summary and the --verdicts lines.
 *
 * lin_explain_build takes the rows of the rule table below that the ablations leave on
 * (rule.h), builds the shared indexes (index.c) and each row's own, then makes each ledger:
 * the marks (marks.c), the statements (statements.c), each with the rules of its kind.
 * The rules, one file each under rules/ (docs/ledger.md, "Rules"):
 *
 * - stream_order (rules/stream_order.c): ready no earlier than the end of the record before
 *   it on its stream, by start time.
 * - event_wait (rules/event_wait.c): ready no earlier than the end of the last record
 *   launched before the recording of an event its stream waited for.
 * - graph_edge (rules/graph_edge.c): a graph node's kernel is ready when its predecessor
 *   nodes have run in the same replay.
 * - device_occupied and competing causes (rules/device.c): a stretch no dependency explains
 *   was the device busy with other streams' work; a dominant cause the same occupancy spans
 *   is withdrawn.
 * - kernel_median (rules/kernel_slow.c): kernel_slow against the median of its name.
 * - host_sched (rules/host_sched.c): the descheduled time inside a thread's stretches.
 *
 * A dependency that ended before the submission time comes first in the statements: on a
 * GPU the device takes a command (CUPTI's submitted) only after what it waited for.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rule.h"

/* The rules, in the order the ledger consults them: of two dependency bounds that end
 * together on the host clock, stream_order's names the readiness. */
static const struct lin_xrule *const rules[] = {
	&lin_xrule_stream_order, &lin_xrule_event_wait,    &lin_xrule_graph_edge,
	&lin_xrule_device,       &lin_xrule_kernel_median, &lin_xrule_host_sched,
};
_Static_assert(sizeof(rules) / sizeof(rules[0]) <= LIN_XRULES_MAX, "LIN_XRULES_MAX");

/* ------------------------------------------------------------------ groups and summary */

static uint64_t first_mark(const struct lin_xlaunch *l)
{
	for (int m = 0; m < LIN_M_N; m++)
		if (mark_known(l, (enum lin_mark)m))
			return l->m[m].t;
	return LIN_NIL;
}

static bool group_add(struct lin_explain *x, struct lin_vtab *gt, const struct lin_xlaunch *l,
		      size_t gi, uint64_t id)
{
	bool fresh;
	uint64_t k1 = l->imported ? (1ULL << 40) | l->file : pk1(l->proc, 0);
	uint64_t *slot = lin_vtab_get(gt, id, k1, &fresh);
	if (!slot)
		return false;
	if (fresh) {
		struct lin_xgroup *g = lin_vec_push(&x->groups);
		if (!g)
			return false;
		*slot = x->groups.n - 1;
		g->id = id;
		g->file = l->file;
		g->proc = l->proc;
		g->imported = l->imported;
		g->critical = g->crit = SIZE_MAX;
		g->ready = LIN_NIL;
		g->name = l->gname;
		if (!l->imported) {
			/* Its begin, unless that is after the launch's start: out of order. */
			const struct lin_xbegin *t = lin_vtab_find(&x->begins, id, k1);
			const struct lin_xmark *ks = &l->m[LIN_M_KERNEL_START];
			if (t && (!mark_known(l, LIN_M_KERNEL_START) ||
				  t->host_ns <= sat_add(ks->t, ks->err)))
				g->ready = t->host_ns;
		}
	}
	struct lin_xgroup *g = lin_vec_at(&x->groups, (size_t)*slot);
	g->nlaunch++;
	if (mark_known(l, LIN_M_KERNEL_END) &&
	    (g->critical == SIZE_MAX || l->m[LIN_M_KERNEL_END].t > g->last_end)) {
		g->last_end = l->m[LIN_M_KERNEL_END].t;
		g->critical = gi;
		g->first = first_mark(l);
	}
	return true;
}

static uint64_t group_span(const struct lin_xgroup *g)
{
	if (g->critical == SIZE_MAX)
		return 0;
	uint64_t from = g->ready != LIN_NIL ? g->ready : g->first;
	return from != LIN_NIL && g->last_end > from ? g->last_end - from : 0;
}

static int cmp_group(const void *pa, const void *pb)
{
	const struct lin_xgroup *a = pa, *b = pb;
	uint64_t sa = group_span(a), sb = group_span(b);
	if (sa != sb)
		return sa > sb ? -1 : 1;
	int c = cmp_u64(a->proc, b->proc);
	if (!c)
		c = cmp_u64(a->file, b->file);
	return c ? c : cmp_u64(a->id, b->id);
}

bool lin_x_serves(const struct lin_explain *x, const struct lin_xlaunch *l, uint64_t id,
		  bool imported, uint16_t proc, uint32_t file)
{
	if (imported)
		return l->imported && l->file == file && l->group == id;
	if (l->imported || l->proc != proc || !l->nreq)
		return false;
	const uint64_t *r = lin_vec_at(&x->reqs, (size_t)l->req0);
	for (uint32_t q = 0; q < l->nreq; q++)
		if (r[q] == id)
			return true;
	return false;
}

/* Whether the reports keep ledger @l (lin_xopts). */
static bool kept(const struct lin_explain *x, const struct lin_xlaunch *l)
{
	if (x->o.keep_all)
		return true;
	if (!x->o.have_request)
		return false;
	if (l->imported)
		return l->group == x->o.request;
	const uint64_t *r = lin_explain_reqs(x, l);
	for (uint32_t q = 0; q < l->nreq; q++)
		if (r[q] == x->o.request)
			return true;
	return false;
}

static bool listed(const struct lin_explain *x, const struct lin_xgroup *g, size_t rank)
{
	if (x->o.have_request)
		return g->id == x->o.request;
	return !x->o.top || rank < x->o.top;
}

static void summarise(struct lin_explain *x, const struct lin_xlaunch *l)
{
	struct lin_xsummary *s = &x->sum;
	for (int m = 0; m < LIN_M_N; m++)
		s->marks[m][l->m[m].ev]++;
	if (l->join == LIN_JOIN_INFERRED)
		s->join_inferred++;
	if (!mark_known(l, LIN_M_KERNEL_START)) {
		s->no_start++;
		return;
	}
	bool any = false;
	for (uint8_t i = 0; i < l->nseg; i++) {
		const struct lin_xseg *g = &l->seg[i];
		s->by_cause_ns[g->cause] = sat_add(s->by_cause_ns[g->cause], g->ns);
		if (g->cause != LIN_X_KERNEL_SLOW) {
			s->prestart_ns = sat_add(s->prestart_ns, g->ns);
			any = true;
		}
	}
	s->with_statements += any;
	if (l->dominant < LIN_X_N)
		s->dominant[l->dominant]++;
}

/* ------------------------------------------------------------------ build */

enum xres {
	X_OK = LIN_XRES_OK,
	X_UNJOINED = LIN_XRES_UNJOINED,
	X_EPOCH_ONLY = LIN_XRES_EPOCH_ONLY,
	X_DUP = LIN_XRES_DUP
};

/* Not joined: the join layer's verdict @vd (NULL: none) says how and why. */
static enum xres unjoined(const struct lin_xverdict *vd, const struct lin_xverdict **out)
{
	*out = vd;
	return X_UNJOINED;
}

/*
 * The ledger of GPU record @i, on the join layer's verdict on it: a record the join layer lost
 * or found ambiguous gets none (X_UNJOINED, *@why its verdict); an inferred join is
 * inferred here too, with its rule (docs/ledger.md, "Joins").
 */
static enum xres explain_one(struct lin_xbuild *b, size_t i, struct lin_xlaunch *l,
			     const struct lin_xverdict **why)
{
	struct lin_explain *x = b->x;
	const struct lin_xgpu *g = gpu_at(b, i);
	memset(l, 0, sizeof(*l));
	l->offset = g->offset;
	l->id = i;
	l->file = g->file;
	l->proc = g->proc;
	l->kind = g->kind;
	l->corr = g->corr;
	l->stream = g->stream;
	l->dev = g->dev;
	l->ctx = g->ctx;
	l->graph_id = g->graph_id;
	l->name = g->name;
	l->gname = g->gname;
	l->imported = g->proc == LIN_XPROC_IMPORTED;
	l->epoch = l->group = LIN_NIL;
	l->dominant = l->alt = LIN_X_N;
	l->key = g->key;
	/* Raw, for baselines: whether or not stream_order used it. */
	l->pred_end = b->pred[i] == SIZE_MAX ? LIN_NIL : b->he[b->pred[i]];
	size_t wp = lin_x_event_producer(b, i);
	l->wait_end = wp == SIZE_MAX ? LIN_NIL : b->he[wp];
	*why = NULL;
	if (l->imported) {
		const struct lin_xverdict *vd = lin_vtab_find(&x->verd, g->vkey, g->file);
		if (!vd || (vd->join != LIN_JOIN_OBSERVED && vd->join != LIN_JOIN_INFERRED) ||
		    !(g->flags & LIN_XG_LAUNCH))
			return unjoined(vd, why);
		l->join = vd->join;
		l->join_rule = vd->join == LIN_JOIN_INFERRED ? vd->why : NULL;
		l->group = g->group;
	} else {
		if (g->flags & LIN_XG_DUP)
			return X_DUP;
		const struct lin_xverdict *vd = lin_vtab_find(&x->verd, g->vkey, g->file);
		if (!vd)
			return X_DUP;
		if (vd->join != LIN_JOIN_OBSERVED && vd->join != LIN_JOIN_INFERRED)
			return unjoined(vd, why);
		if (!vd->nreq) {
			*why = vd;
			return X_EPOCH_ONLY;
		}
		l->join = vd->join;
		l->join_rule = vd->join == LIN_JOIN_INFERRED ? vd->why : NULL;
		l->epoch = vd->epoch;
		l->req0 = vd->req0;
		l->nreq = vd->nreq;
		l->group = *(const uint64_t *)lin_vec_at(&x->reqs, (size_t)vd->req0);
	}
	uint64_t tid, raw[LIN_M_N];
	for (int m = 0; m < LIN_M_N; m++)
		raw[m] = LIN_NIL;
	lin_x_device_marks(b, l, i, &tid, raw);
	lin_x_host_marks(b, l, i, tid);
	if (l->join == LIN_JOIN_INFERRED)
		lin_x_inferred_join(l);
	lin_x_dep_mark(b, l, i, raw);
	lin_x_out_of_order(l);
	lin_x_statements(b, l, i, tid, raw);
	for (size_t r = 0; r < b->non; r++)
		if (b->on[r]->after)
			b->on[r]->after(b, l, i);
	return X_OK;
}

/* --verdicts: the verdict the ledger of GPU record @i rests on (none for a duplicate). */
static void write_verdict(const struct lin_explain *x, size_t i, enum xres res,
			  const struct lin_xlaunch *l, const struct lin_xverdict *vd)
{
	const struct lin_xgpu *g = lin_vec_at(&x->gpus, i);
	const char *name = g->file < x->o.nnames ? x->o.names[g->file] : "?";
	bool imp = g->proc == LIN_XPROC_IMPORTED;
	switch (res) {
	case X_DUP: return;
	case X_OK:
		lin_verdict_line(x->o.verdicts, name, g->vkey, (enum lin_join)l->join, l->join_rule,
				 imp ? l->group : LIN_NIL, imp ? NULL : lin_explain_reqs(x, l),
				 imp ? 0 : l->nreq);
		return;
	case X_EPOCH_ONLY:
	case X_UNJOINED:
		lin_verdict_line(x->o.verdicts, name, g->vkey,
				 vd ? (enum lin_join)vd->join : LIN_JOIN_NONE,
				 vd ? vd->why : "no_verdict", LIN_NIL, NULL, 0);
		return;
	}
}

/* One more record with no ledger for the join layer's verdict @vd: lost or ambiguous, and
 * why. A record with no verdict at all (an imported record no importer classified) is
 * counted as lost, cause "no_verdict". */
static void count_unjoined(struct lin_xsummary *s, const struct lin_xverdict *vd)
{
	s->unjoined++;
	bool amb = vd && vd->join == LIN_JOIN_AMBIGUOUS;
	if (amb)
		s->unjoined_ambiguous++;
	else
		s->unjoined_lost++;
	const char *cause = vd && vd->why ? vd->why : "no_verdict";
	for (uint32_t k = 0; k < s->n_unjoined_by; k++)
		if (s->unjoined_by[k].ambiguous == amb && !strcmp(s->unjoined_by[k].cause, cause)) {
			s->unjoined_by[k].n++;
			return;
		}
	if (s->n_unjoined_by == LIN_X_CAUSES_MAX) {
		s->unjoined_other++;
		return;
	}
	s->unjoined_by[s->n_unjoined_by].cause = cause;
	s->unjoined_by[s->n_unjoined_by].ambiguous = amb;
	s->unjoined_by[s->n_unjoined_by++].n = 1;
}

int lin_explain_build(struct lin_explain *x, const struct lin_joiner *v)
{
	if (x->oom)
		return -ENOMEM;
	lin_x_marks_index(x);
	/* Kernel names of lineage traces (their string records), and the records the joiner
	 * gave no verdict: duplicates, which take no part in stream order either. */
	for (size_t i = 0; i < x->gpus.n; i++) {
		struct lin_xgpu *g = lin_vec_at(&x->gpus, i);
		if (g->proc == LIN_XPROC_IMPORTED)
			continue;
		if (g->name_sid != LIN_NIL) {
			const uint64_t *o = lin_vtab_find(&x->sids, g->name_sid, pk1(g->proc, 0));
			g->name = o ? (uint32_t)*o : 0;
		}
		if (!lin_vtab_find(&x->verd, g->offset, g->file))
			g->flags |= LIN_XG_DUP;
	}
	struct lin_xbuild b = { .x = x, .v = v, .n = x->gpus.n };
	/* An ablation leaves its rows out, and their indexes with them. */
	for (size_t r = 0; r < sizeof(rules) / sizeof(rules[0]); r++)
		if (!(rules[r]->without & x->o.without))
			b.on[b.non++] = rules[r];
	size_t n = b.n + 1;
	b.hs = malloc(n * sizeof(uint64_t));
	b.he = malloc(n * sizeof(uint64_t));
	b.herr = calloc(n, sizeof(uint64_t));
	b.pred = malloc(n * sizeof(size_t));
	int rc = -ENOMEM;
	struct lin_vtab gt;
	lin_vtab_init(&gt, sizeof(uint64_t));
	if (!b.hs || !b.he || !b.herr || !b.pred || !lin_x_index(&b))
		goto out;
	for (size_t r = 0; r < b.non; r++)
		if (b.on[r]->prepare && !b.on[r]->prepare(&b))
			goto out;
	if (!lin_x_rq_prepare(x, v))
		goto out;
	x->sum.gpu_records = b.n;
	/* Every ledger counts; only those the reports list are kept. */
	for (size_t i = 0; i < b.n; i++) {
		struct lin_xlaunch l;
		const struct lin_xverdict *why;
		enum xres res = explain_one(&b, i, &l, &why);
		if (x->o.verdicts)
			write_verdict(x, i, res, &l, why);
		if (!lin_x_rq_record(&b, i, (int)res, &l))
			goto out;
		switch (res) {
		case X_UNJOINED: count_unjoined(&x->sum, why); continue;
		case X_EPOCH_ONLY: x->sum.epoch_only++; continue;
		case X_DUP: x->sum.duplicates++; continue;
		case X_OK: break;
		}
		x->sum.explained++;
		summarise(x, &l);
		if (kept(x, &l)) {
			struct lin_xlaunch *k = lin_vec_push(&x->launches);
			if (!k)
				goto out;
			*k = l;
		}
		if (l.imported) {
			if (l.group != LIN_NIL && !group_add(x, &gt, &l, i, l.group))
				goto out;
			continue;
		}
		const uint64_t *r = lin_explain_reqs(x, &l);
		for (uint32_t q = 0; q < l.nreq; q++)
			if (!group_add(x, &gt, &l, i, r[q]))
				goto out;
	}
	x->sum.groups = x->groups.n;
	lin_x_vsort(&x->groups, cmp_group);
	/* The listed requests' critical ledgers, made again (a ledger is a function of the
	 * records): one per listed request, not one per GPU record. */
	for (size_t gi = 0; gi < x->groups.n; gi++) {
		struct lin_xgroup *g = lin_vec_at(&x->groups, gi);
		if (g->critical == SIZE_MAX || !listed(x, g, gi))
			continue;
		struct lin_xlaunch *k = lin_vec_push(&x->crits);
		if (!k)
			goto out;
		const struct lin_xverdict *why;
		explain_one(&b, g->critical, k, &why); /* X_OK: it was explained above */
		g->crit = x->crits.n - 1;
		/* The request's ready, as its critical ledger has it: not when that ledger finds it
		 * out of order (the ledger's own request_ready), nor after any of its marks. */
		uint64_t fm = LIN_NIL;
		for (int m = LIN_M_DECLARED; m < LIN_M_N && fm == LIN_NIL; m++)
			if (mark_known(k, (enum lin_mark)m))
				fm = k->m[m].t;
		if (!k->imported && k->group == g->id)
			g->ready = mark_known(k, LIN_M_REQUEST_READY) ? k->m[LIN_M_REQUEST_READY].t
								      : LIN_NIL;
		else if (g->ready != LIN_NIL && fm != LIN_NIL && g->ready > fm)
			g->ready = LIN_NIL;
	}
	lin_x_rq_finish(x, v);
	rc = 0;
out:
	lin_vtab_free(&gt);
	free(b.hs);
	free(b.he);
	free(b.herr);
	free(b.pred);
	free(b.bycorr);
	free(b.median);
	free(b.bydev);
	free(b.dmax);
	free(b.hmax);
	if (rc)
		x->oom = true;
	return rc;
}
