/* SPDX-License-Identifier: MIT */
/*
 * xcheck.c - the bracket check: an API call that CUPTI tagged with a pushed external id
 * must lie inside a launch bracket of its thread that pushed that id, the innermost pushed
 * one (docs/validator.md, "The bracket check").
 *
 * Precondition: a bound on the error of placing the call's device interval in host time.
 * With device_clock "host" (the runtime made CUPTI time its records with its own clock)
 * the error is 0 and calls are decided as they stream: once a bracket that begins after
 * the call has arrived on its thread (brackets of a thread arrive in order), every bracket
 * that may hold it is known. With CUPTI's own clock, the bound is the widest clock pair
 * (host read before and after the device read), known only at the end of the run, so the
 * calls wait for it (at most LIN_XDEFER_CAP). A call within the error of a bracket's edge,
 * or under a bracket without an end, is not decided: it counts as unchecked. Without any
 * bound (clock records without their second host read, or none) nothing is decided.
 *
 * On a thread of pushed brackets only, once it holds LIN_PBR_KEEP brackets the oldest
 * closed ones that already held a call are dropped when room is needed, and at most
 * LIN_PBR_CAP are kept (past that the older half goes); a call that may lie in a dropped
 * bracket is counted unchecked, never judged against the brackets left.
 */
#include <stdlib.h>
#include <string.h>

#include "lineage/trace_format.h"
#include "jstate.h"

/* One more tagged call the bracket check could not check, and why. */
static void unchecked(struct lin_joiner *v, enum lin_unchecked why)
{
	v->sum.bracket_unchecked++;
	v->sum.bracket_unchecked_by[why]++;
}

/* Drop the oldest closed brackets that already held a call; the horizon is the latest end
 * dropped (an outer bracket may end after inner ones). */
static void drop_checked(struct lin_bthread *t)
{
	uint32_t k = 0;
	uint64_t horizon = t->horizon;
	/* Where no call can be checked, closed brackets are dropped whether they held one. */
	for (; k < t->n && (t->b[k].apis || t->uncheckable) && t->b[k].end < LIN_END_UNTIMED; k++)
		if (t->b[k].end > horizon)
			horizon = t->b[k].end;
	if (!k)
		return;
	memmove(t->b, t->b + k, (t->n - k) * sizeof(*t->b));
	t->n -= k;
	t->base += k;
	t->horizon = horizon;
}

bool lin_j_bracket_room(struct lin_joiner *v, struct lin_bthread *t)
{
	if (!t->unpushed && t->n >= LIN_PBR_KEEP && t->n == t->cap)
		drop_checked(t);
	if (t->n < t->cap)
		return true;
	if (!t->unpushed && t->cap >= LIN_PBR_CAP) {
		uint32_t drop = t->n / 2;
		uint64_t horizon = t->b[drop].begin;
		for (uint32_t i = 0; i < drop; i++) {
			if (!t->b[i].apis)
				unchecked(v, LIN_UNCHK_LIMIT); /* cannot tell any more */
			if (t->b[i].end < LIN_END_UNTIMED && t->b[i].end > horizon)
				horizon = t->b[i].end;
		}
		memmove(t->b, t->b + drop, (t->n - drop) * sizeof(*t->b));
		t->n -= drop;
		t->base += drop;
		t->horizon = horizon > t->horizon ? horizon : t->horizon;
		return true;
	}
	uint32_t cap = t->cap ? t->cap * 2 : 2; /* memory in proportion to the input */
	struct lin_br *b = realloc(t->b, cap * sizeof(*b));
	if (!b) {
		v->oom = true;
		return false;
	}
	t->b = b;
	t->cap = cap;
	return true;
}

static void outside(struct lin_joiner *v, const struct lin_xdefer *d, const struct lin_br *b)
{
	static const char *const n[] = { "correlation", "epoch", "bracket_epoch", "tid" };
	uint64_t ids[] = { d->corr, d->ext, b ? b->id : LIN_NIL, d->tid };
	v->sum.structural++;
	lin_j_finding(v, "structural", "ext_outside_bracket", d->file, d->offset, d->index, 4, n, ids);
}

/* The call's bracket and its pushed ancestors held a call. */
static void mark(struct lin_bthread *t, struct lin_br *b)
{
	for (int depth = 0; b && depth < LIN_OPEN_DEPTH + 1; depth++) {
		b->apis++;
		uint64_t p = b->parent;
		b = p != LIN_NIL && p >= t->base && p - t->base < t->n ? &t->b[p - t->base] : NULL;
	}
}

/*
 * A process where lineage pushed nothing (backend none), at the end of the run: the call
 * tagged by another tool's id marks the brackets that hold it (launch accounting of
 * brackets that pushed nothing, brackets.c), and an id that names a declared epoch other
 * than the epoch of the closed bracket that holds the call for certain is a conflict.
 */
static void decide_unpushed(struct lin_joiner *v, const struct lin_xdefer *d)
{
	const struct lin_jproc *p = &v->procs[d->proc];
	struct lin_bthread *t = lin_j_bthread(v, d->proc, d->tid, false);
	uint64_t s, e, u;
	if (!t || t->unordered || (!p->host_clock && !p->clocks.width_known) ||
	    !lin_j_call_to_host(v, d->proc, d->s, d->e, &s, &e, &u))
		return;
	struct lin_hold h;
	lin_j_holders(t, s, e, u, false, true, true, &h);
	const struct lin_br *b = h.inner;
	if (!b || b->pushed || b->id == LIN_NIL || b->id == d->ext || h.ambiguous || h.unclosed)
		return;
	if (lin_vtab_find(&v->requests, d->ext, lin_k1(d->proc, 0))) {
		/* The id names a request (a developer's own push): a conflict when the bracket's
		 * epoch names requests and not that one. */
		const struct lin_epoch_ent *be = lin_vtab_find(&v->epochs, b->id, lin_k1(d->proc, 0));
		uint32_t nr = 0;
		const uint64_t *reqs =
			be && (be->flags & LIN_EP_DECLARED) ? lin_j_epoch_reqs(v, be, &nr) : NULL;
		bool named = !nr;
		for (uint32_t i = 0; i < nr && !named; i++)
			named = reqs[i] == d->ext;
		if (named)
			return;
	} else {
		const struct lin_epoch_ent *ep = lin_vtab_find(&v->epochs, d->ext, lin_k1(d->proc, 0));
		if (!ep || !(ep->flags & LIN_EP_DECLARED))
			return;
	}
	static const char *const n[] = { "correlation", "epoch", "bracket_epoch", "tid" };
	uint64_t ids[] = { d->corr, d->ext, b->id, d->tid };
	v->sum.structural++;
	lin_j_finding(v, "structural", "ext_bracket_conflict", d->file, d->offset, d->index, 4, n, ids);
}

/* Decide @d; false: it has to wait. */
static bool decide(struct lin_joiner *v, const struct lin_xdefer *d, bool final)
{
	const struct lin_jproc *p = &v->procs[d->proc];
	if (!p->pushes) {
		if (!final)
			return false;
		decide_unpushed(v, d);
		return true;
	}
	if (!p->host_clock && (!final || !p->clocks.width_known)) {
		if (!final && p->clocks.width_known)
			return false; /* the bound is known at the end of the run */
		unchecked(v, LIN_UNCHK_NO_CLOCK_BOUND);
		return true;
	}
	struct lin_bthread *t = lin_j_bthread(v, d->proc, d->tid, false);
	uint64_t s, e, u;
	if (!lin_j_call_to_host(v, d->proc, d->s, d->e, &s, &e, &u)) {
		unchecked(v, LIN_UNCHK_NO_CLOCK_RECORD);
		return true;
	}
	if (t && (t->unordered || (t->horizon && s < t->horizon + u))) {
		unchecked(v, LIN_UNCHK_DROPPED_BRACKETS);
		t->unmarked = true;
		v->procs[d->proc].xcheck_unmarked = true;
		return true;
	}
	struct lin_hold h = { NULL, false, false, false };
	if (t)
		lin_j_holders(t, s, e, u, true, final, false, &h);
	else if (!final)
		h.later = true;
	if (h.later || (h.unclosed && !final))
		return false; /* a bracket may still arrive, or still end */
	if (h.unclosed || h.ambiguous) {
		/* Not decided; every bracket that may hold it has held a call. That credit is
		 * a guess: its process is also held to launch accounting by count. */
		lin_j_holders(t, s, e, u, true, true, true, &h);
		unchecked(v, h.unclosed ? LIN_UNCHK_BRACKET_UNCLOSED : LIN_UNCHK_CLOCK_UNCERTAINTY);
		v->procs[d->proc].xcheck_unmarked = true;
		return true;
	}
	if (h.inner && h.inner->id == d->ext) {
		mark(t, h.inner);
		v->sum.bracket_checked++;
		if (h.inner->late != d->late) {
			/* Its bracket pushed this epoch late, or not late, and the ext record says
			 * otherwise: one of them was damaged. */
			static const char *const n[] = { "correlation", "epoch", "late", "bracket_late" };
			uint64_t ids[] = { d->corr, d->ext, d->late, h.inner->late };
			v->sum.structural++;
			lin_j_finding(v, "structural", "late_mismatch", d->file, d->offset,
				      d->index, 4, n, ids);
		}
		return true;
	}
	outside(v, d, h.inner);
	return true;
}

static bool defer(struct lin_joiner *v, const struct lin_xdefer *d)
{
	struct lin_bthread *t = lin_j_bthread(v, d->proc, d->tid, true);
	if (!t || v->xdefer >= LIN_XDEFER_CAP)
		return false;
	if (t->nd == t->capd) {
		uint32_t cap = t->capd ? t->capd * 2 : 2;
		struct lin_xdefer *nd = realloc(t->d, cap * sizeof(*nd));
		if (!nd) {
			v->oom = true;
			return false;
		}
		t->d = nd;
		t->capd = cap;
	}
	t->d[t->nd++] = *d;
	v->xdefer++;
	return true;
}

void lin_j_xcheck(struct lin_joiner *v, uint16_t proc, uint64_t corr, const struct lin_corr_ent *c)
{
	const struct lin_jproc *p = &v->procs[proc];
	if (!p->pushes) {
		/* Its ext records come from another tool, not brackets: not checked, but the
		 * brackets around the call are marked at the end (decide_unpushed). */
		/* Deferred to the end of the run whatever was read so far: the brackets and the
		 * clock records may come after the calls in the file. */
		if (c->api_start == LIN_NIL || c->api_end == LIN_NIL || (c->flags & LIN_C_AMBIG))
			return;
		struct lin_xdefer d = { c->api_start, c->api_end, c->epoch,    corr, c->api_offset,
					c->api_index, c->api_tid, c->api_file, proc, 0,
					{ 0 } };
		if (!defer(v, &d))
			v->procs[proc].xcheck_unmarked = true;
		return;
	}
	if (p->cupti_tids) {
		/* Its API records' thread ids are CUPTI's, not the brackets' (the header says
		 * so): no call can be found in its thread's brackets. Checked by count. */
		unchecked(v, LIN_UNCHK_NO_THREAD_IDS);
		v->procs[proc].xcheck_unmarked = true;
		return;
	}
	if (c->api_start == LIN_NIL || c->api_end == LIN_NIL || (c->flags & LIN_C_AMBIG)) {
		unchecked(v, LIN_UNCHK_NO_API_TIMES);
		return;
	}
	if (!p->host_clock && !p->clocks.width_known) {
		unchecked(v, LIN_UNCHK_NO_CLOCK_BOUND);
		return;
	}
	struct lin_xdefer d = { c->api_start,  c->api_end,           c->epoch,   corr,
				c->api_offset, c->api_index,         c->api_tid, c->api_file,
				proc,          lin_c_late(c->flags), { 0 } };
	if (!decide(v, &d, false) && !defer(v, &d)) {
		unchecked(v, LIN_UNCHK_LIMIT);
		struct lin_bthread *t = lin_j_bthread(v, proc, c->api_tid, false);
		if (t)
			t->unmarked = true;
		v->procs[proc].xcheck_unmarked = true;
	}
}

void lin_j_xcheck_wake(struct lin_joiner *v, struct lin_bthread *t, uint64_t begin)
{
	uint32_t k = 0;
	for (uint32_t i = 0; i < t->nd; i++) {
		if (v->procs[t->d[i].proc].host_clock && t->d[i].s < begin && decide(v, &t->d[i], false)) {
			v->xdefer--;
			continue;
		}
		t->d[k++] = t->d[i];
	}
	t->nd = k;
}

/*
 * CUPTI writes one ext record immediately before each API record made under a pushed id:
 * a correlation with an ext record of the trace's kind and no API record lost its API
 * record (its GPU record, if any, still joins by the ext record). Not where API activity
 * was not collected (no_api_records) or CUPTI dropped records (the drop is the finding).
 * Before the final joins: a correlation is only evicted once it has both records.
 */
static void ext_without_api(struct lin_joiner *v)
{
	static const char *const n[] = { "correlation", "epoch" };
	size_t it = 0;
	struct lin_vkey k;
	const struct lin_corr_ent *c;
	while ((c = lin_vtab_next(&v->corrs, &it, &k))) {
		uint16_t proc = lin_k1_proc(k.k1);
		const struct lin_jproc *p = &v->procs[proc];
		if (!(c->flags & LIN_C_EXT) || (c->flags & LIN_C_API) || !p->api_records || p->dropped_cupti)
			continue;
		uint64_t ids[] = { k.k0, c->epoch };
		v->sum.structural++;
		lin_j_finding(v, "structural", "ext_without_api_record", c->api_file, c->api_offset,
			      c->api_index, 2, n, ids);
	}
}

void lin_j_xcheck_finish(struct lin_joiner *v)
{
	static const char *const n[] = { "tid", "epoch", "depth" };
	size_t it = 0;
	struct lin_vkey k;
	struct lin_bthread *t;
	ext_without_api(v);
	while ((t = lin_vtab_next(&v->bthreads, &it, NULL))) {
		for (uint32_t i = 0; i < t->nd; i++)
			decide(v, &t->d[i], true);
		v->xdefer -= t->nd;
		t->nd = 0;
	}
	it = 0;
	while ((t = lin_vtab_next(&v->bthreads, &it, &k))) {
		uint16_t proc = lin_k1_proc(k.k1);
		const struct lin_jproc *p = &v->procs[proc];
		if ((!p->host_clock && !p->clocks.width_known) || t->unordered || t->unmarked ||
		    p->cupti_tids)
			continue; /* checked by count instead (brackets.c) */
		for (uint32_t i = 0; i < t->n; i++) {
			const struct lin_br *b = &t->b[i];
			if (!b->pushed || b->apis || b->end >= LIN_END_UNTIMED)
				continue;
			uint64_t ids[] = { k.k0, b->id, b->depth };
			v->sum.structural++;
			lin_j_finding(v, "structural", "launch_without_api_record", b->file,
				      b->offset, b->index, 3, n, ids);
		}
	}
}
