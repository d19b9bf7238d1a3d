/* SPDX-License-Identifier: MIT */
/*
 * xcheck.c - the bracket check: an API call that CUPTI tagged with a pushed external id
 * must lie inside a launch bracket of its thread that pushed that id (docs/validator.md,
 * "The bracket check").
 *
 * Precondition: device time is host time (header device_clock "host": the runtime made
 * CUPTI time its records with the runtime's own clock). Without it, comparing an API
 * call's device interval with a bracket's host interval would trust a clock mapping whose
 * error can exceed the gap between a bracket and the call inside it, so the check is not
 * made and every such call is counted as unchecked.
 *
 * Brackets of a thread arrive in begin order. A call can be decided once a bracket that
 * begins after it has arrived on its thread; until then it waits (bounded), and at the
 * end of the run every waiting call is decided. Once a thread holds LIN_PBR_KEEP brackets,
 * the oldest ones that already held a call are dropped when room is needed; at most
 * LIN_PBR_CAP are kept: past that the older half goes. Calls before what is kept are
 * unchecked.
 */
#include <stdlib.h>
#include <string.h>

#include "lineage/trace_format.h"
#include "vstate.h"

static struct lin_pthread *pthread_of(struct lin_validator *v, uint16_t proc, uint64_t tid,
				      bool create)
{
	bool fresh;
	if (!create)
		return lin_vtab_find(&v->pthreads, tid, lin_k1(proc, 0));
	struct lin_pthread *t = lin_vtab_get(&v->pthreads, tid, lin_k1(proc, 0), &fresh);
	if (!t)
		v->oom = true;
	return t;
}

/* Drop the oldest closed brackets that already held a call: their calls were checked. A
 * later call that may lie in one of them (before the latest end dropped: the horizon) is
 * counted as unchecked, never judged against the brackets left. */
static void drop_checked(struct lin_pthread *t)
{
	uint32_t k = 0;
	uint64_t horizon = t->horizon;
	for (; k < t->n && t->b[k].apis && t->b[k].end < LIN_END_UNTIMED; k++)
		if (t->b[k].end > horizon)
			horizon = t->b[k].end;  /* an outer bracket may end after inner ones */
	if (!k)
		return;
	memmove(t->b, t->b + k, (t->n - k) * sizeof(*t->b));
	t->n -= k;
	t->base += k;
	t->horizon = horizon;
}

/* Make room for one more bracket: drop the checked ones, grow, or drop the older half
 * once at the cap. */
static bool room(struct lin_validator *v, struct lin_pthread *t)
{
	if (t->n >= LIN_PBR_KEEP && t->n == t->cap)
		drop_checked(t);
	if (t->n < t->cap)
		return true;
	if (t->cap >= LIN_PBR_CAP) {
		uint32_t drop = t->n / 2;
		for (uint32_t i = 0; i < drop; i++)
			if (!t->b[i].apis)
				v->sum.bracket_unchecked++;   /* cannot tell any more */
		uint64_t horizon = t->b[drop].begin;
		for (uint32_t i = 0; i < drop; i++)
			if (t->b[i].end < LIN_END_UNTIMED && t->b[i].end > horizon)
				horizon = t->b[i].end;
		memmove(t->b, t->b + drop, (t->n - drop) * sizeof(*t->b));
		t->n -= drop;
		t->base += drop;
		t->horizon = horizon > t->horizon ? horizon : t->horizon;
		return true;
	}
	uint32_t cap = t->cap ? t->cap * 2 : 64;
	struct lin_pbr *b = realloc(t->b, cap * sizeof(*b));
	if (!b) {
		v->oom = true;
		return false;
	}
	t->b = b;
	t->cap = cap;
	return true;
}

static bool decide(struct lin_validator *v, const struct lin_xdefer *d, bool final);

/* A bracket beginning at @begin arrived on @t: the calls waiting before it can be decided. */
static void wake(struct lin_validator *v, struct lin_pthread *t, uint64_t begin)
{
	uint32_t k = 0;
	for (uint32_t i = 0; i < t->nd; i++) {
		if (t->d[i].s < begin && decide(v, &t->d[i], false)) {
			v->xdefer--;
			continue;
		}
		t->d[k++] = t->d[i];
	}
	t->nd = k;
}

uint64_t lin_v_pbr_open(struct lin_validator *v, uint16_t proc, uint32_t file,
			const struct lin_rec *r)
{
	struct lin_pthread *t = pthread_of(v, proc, r->f[1], true);
	if (!t || !room(v, t))
		return LIN_NIL;
	bool depth = !((r->nil >> 8) & 1u) && r->f[8] <= LIN_OPEN_DEPTH;
	t->b[t->n] = (struct lin_pbr){ r->f[0], LIN_NIL, r->f[4], r->offset, r->index, 0, file,
				       (uint16_t)(depth ? r->f[8] : 0), { 0, 0, 0 } };
	uint64_t seq = t->base + t->n++;
	if (t->nd)
		wake(v, t, r->f[0]);
	return seq;
}

void lin_v_pbr_close(struct lin_validator *v, uint16_t proc, uint64_t tid, uint64_t seq,
		     uint64_t end)
{
	struct lin_pthread *t = pthread_of(v, proc, tid, false);
	if (t && seq >= t->base && seq - t->base < t->n)
		t->b[seq - t->base].end = end;
}

enum found { F_FOUND, F_NONE, F_UNCLOSED, F_LATER };

/* The innermost pushed bracket of @t holding [s, e]. F_LATER: one may still arrive. */
static enum found innermost(const struct lin_pthread *t, uint64_t s, uint64_t e, bool final,
			    struct lin_pbr **out)
{
	size_t lo = 0, hi = t->n;               /* first bracket beginning after s */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (t->b[mid].begin <= s)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == t->n && !final)
		return F_LATER;                 /* no bracket after the call yet */
	unsigned maxdepth = UINT16_MAX;
	for (size_t i = lo; i-- > 0;) {
		struct lin_pbr *b = &t->b[i];
		if (b->depth && b->depth >= maxdepth)
			continue;
		if (b->end == LIN_END_UNTIMED)
			return F_UNCLOSED;
		if (b->end == LIN_NIL)
			return final ? F_UNCLOSED : F_LATER;
		if (b->end >= e) {
			*out = b;
			return F_FOUND;
		}
		if (!b->depth || b->depth <= 1)
			return F_NONE;
		maxdepth = b->depth;
	}
	return F_NONE;
}

static void outside(struct lin_validator *v, const struct lin_xdefer *d, const struct lin_pbr *b)
{
	static const char *const n[] = { "correlation", "epoch", "bracket_epoch", "tid" };
	uint64_t ids[] = { d->corr, d->ext, b ? b->ext : LIN_NIL, d->tid };
	v->sum.structural++;
	lin_v_finding(v, "structural", "ext_outside_bracket", d->file, d->offset, d->index, 4, n,
		      ids);
}

/* Decide @d; false: it has to wait. */
static bool decide(struct lin_validator *v, const struct lin_xdefer *d, bool final)
{
	const struct lin_pthread *t = pthread_of(v, d->proc, d->tid, false);
	if (t && t->horizon && d->s < t->horizon) {
		v->sum.bracket_unchecked++;
		return true;
	}
	struct lin_pbr *b = NULL;
	enum found f = t ? innermost(t, d->s, d->e, final, &b) : (final ? F_NONE : F_LATER);
	switch (f) {
	case F_LATER:
		return false;
	case F_UNCLOSED:
		v->sum.bracket_unchecked++;
		return true;
	case F_FOUND:
		if (b->ext == d->ext) {
			b->apis++;
			v->sum.bracket_checked++;
			return true;
		}
		outside(v, d, b);
		return true;
	default:
		outside(v, d, NULL);
		return true;
	}
}

void lin_v_xcheck(struct lin_validator *v, uint16_t proc, uint64_t corr,
		  const struct lin_corr_ent *c)
{
	if (!v->procs[proc].host_clock || c->api_start == LIN_NIL || c->api_end == LIN_NIL ||
	    (c->flags & LIN_C_AMBIG)) {
		v->sum.bracket_unchecked++;
		return;
	}
	struct lin_xdefer d = { c->api_start, c->api_end, c->epoch, corr, c->api_offset,
				c->api_index, c->api_tid, c->api_file, proc, { 0, 0, 0 } };
	if (decide(v, &d, false))
		return;
	struct lin_pthread *t = pthread_of(v, proc, c->api_tid, true);
	if (!t || v->xdefer >= LIN_XDEFER_CAP) {
		v->sum.bracket_unchecked++;
		return;
	}
	if (t->nd == t->capd) {
		uint32_t cap = t->capd ? t->capd * 2 : 16;
		struct lin_xdefer *nd = realloc(t->d, cap * sizeof(*nd));
		if (!nd) {
			v->oom = true;
			return;
		}
		t->d = nd;
		t->capd = cap;
	}
	t->d[t->nd++] = d;
	v->xdefer++;
}

void lin_v_xcheck_finish(struct lin_validator *v)
{
	static const char *const n[] = { "tid", "epoch", "depth" };
	size_t it = 0;
	struct lin_vkey k;
	struct lin_pthread *t;
	while ((t = lin_vtab_next(&v->pthreads, &it, NULL))) {
		for (uint32_t i = 0; i < t->nd; i++)
			decide(v, &t->d[i], true);
		t->nd = 0;
	}
	it = 0;
	while ((t = lin_vtab_next(&v->pthreads, &it, &k))) {
		for (uint32_t i = 0; i < t->n; i++) {
			const struct lin_pbr *b = &t->b[i];
			if (b->apis || b->end == LIN_NIL || b->end == LIN_END_UNTIMED)
				continue;
			uint64_t ids[] = { k.k0, b->ext, b->depth };
			v->sum.structural++;
			lin_v_finding(v, "structural", "launch_without_api_record", b->file, b->offset,
				      b->index, 3, n, ids);
		}
	}
}

void lin_v_xcheck_free(struct lin_validator *v)
{
	size_t it = 0;
	struct lin_pthread *t;
	while ((t = lin_vtab_next(&v->pthreads, &it, NULL))) {
		free(t->b);
		free(t->d);
	}
	lin_vtab_free(&v->pthreads);
}
