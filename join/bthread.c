/* SPDX-License-Identifier: MIT */
/*
 * bthread.c - the launch brackets kept per thread, and the lookups by time on them: which
 * bracket holds a call (placed on the host clock by the process's clock map). brackets.c
 * fills the store; xcheck.c and resolve.c read it.
 */
#include <stdlib.h>

#include "jstate.h"

struct lin_bthread *lin_j_bthread(struct lin_joiner *v, uint16_t proc, uint64_t tid, bool create)
{
	if (!create)
		return lin_vtab_find(&v->bthreads, tid, lin_k1(proc, 0));
	bool fresh;
	struct lin_bthread *t = lin_vtab_get(&v->bthreads, tid, lin_k1(proc, 0), &fresh);
	if (!t) {
		v->oom = true;
		return NULL;
	}
	if (fresh)
		for (unsigned d = 0; d < LIN_OPEN_DEPTH; d++)
			t->open[d] = LIN_NIL;
	return t;
}

/* ---------------------------------------------------------------- lookups by time */

bool lin_j_to_host(const struct lin_joiner *v, uint16_t proc, uint64_t dev, uint64_t *host, uint64_t *widen)
{
	const struct lin_jproc *p = &v->procs[proc];
	if (widen)
		*widen = 0;
	if (dev == LIN_NIL)
		return false;
	if (p->host_clock) {
		*host = dev;
		return true;
	}
	return lin_cm_to_host(&p->clocks, dev, host, widen);
}

bool lin_j_call_to_host(const struct lin_joiner *v, uint16_t proc, uint64_t ds, uint64_t de,
			uint64_t *s, uint64_t *e, uint64_t *u)
{
	const struct lin_jproc *p = &v->procs[proc];
	uint64_t ws, we;
	if (!lin_j_to_host(v, proc, ds, s, &ws) || !lin_j_to_host(v, proc, de, e, &we))
		return false;
	if (p->host_clock || !p->clocks.width_known) {
		*u = 0;
		return true;
	}
	/* The bound of this call's placement: the pairs around it, not the run's widest. */
	uint64_t hs, he, us, ue;
	if (!lin_cm_map(&p->clocks, ds, &hs, &us) || !lin_cm_map(&p->clocks, de, &he, &ue) ||
	    us == LIN_NIL || ue == LIN_NIL) {
		*u = lin_cm_err(&p->clocks, ws > we ? ws : we);
		return true;
	}
	*u = us > ue ? us : ue;
	return true;
}

/* Does @b hold [s, e] +- u for certain (2), maybe (1), or not (0)? */
static int holds(const struct lin_br *b, uint64_t s, uint64_t e, uint64_t u)
{
	if (b->begin > s + u)
		return 0;
	if (b->end == LIN_NIL || b->end == LIN_END_UNTIMED)
		return 1;
	if (b->end + u < e)
		return 0;
	return b->begin + u <= s && e + u <= b->end ? 2 : 1;
}

void lin_j_holders(struct lin_bthread *t, uint64_t s, uint64_t e, uint64_t u, bool pushed_only,
		   bool final, bool mark, struct lin_hold *h)
{
	*h = (struct lin_hold){ NULL, false, false, false };
	size_t lo = 0, hi = t->n; /* first bracket beginning after s + u */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (t->b[mid].begin <= s + u)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == t->n && !final) {
		h->later = true; /* one may still begin before the call */
		return;
	}
	for (size_t i = lo; i-- > 0;) {
		struct lin_br *b = &t->b[i];
		int k = holds(b, s, e, u);
		if (k && (!pushed_only || b->pushed)) {
			if (mark)
				b->apis++;
			if (k == 2 && !h->inner)
				h->inner = b;
			else if (k == 1 && !h->inner) {
				if (b->end == LIN_NIL || b->end == LIN_END_UNTIMED)
					h->unclosed = true;
				else
					h->ambiguous = true;
			}
		}
		if (!b->depth && k == 1 && (b->end == LIN_NIL || b->end == LIN_END_UNTIMED))
			return; /* no nesting known and no end: nothing more to say */
		/* Every earlier bracket that is not an ancestor of b ended before b began; if
		 * that is before the call can have ended, only b's ancestors are left. */
		if (b->depth && (b->begin + u <= e ||
				 (b->end != LIN_NIL && b->end < LIN_END_UNTIMED && b->end + u < e))) {
			/* An outermost bracket has no ancestor; nor has one opened with no bracket
			 * open above it (bracket_without_parent): every earlier one had ended when
			 * it began. */
			if (b->depth == 1 || b->parent == LIN_NIL)
				return;
			if (b->parent < t->base)
				return;
			i = b->parent - t->base + 1; /* the loop's i-- lands on it */
		}
	}
}

enum lin_bracket_find lin_j_bracket_find(const struct lin_joiner *v, uint16_t proc,
					 const struct lin_corr_ent *c, const struct lin_br **out)
{
	*out = NULL;
	const struct lin_jproc *p = &v->procs[proc];
	if (!(c->flags & LIN_C_API) || !p->unpushed)
		return LIN_BF_NONE;
	/* A lookup without marking changes nothing: the table's entry is only read. */
	struct lin_bthread *t = lin_vtab_find(&v->bthreads, c->api_tid, lin_k1(proc, 0));
	if (!t || !t->n)
		return LIN_BF_NONE;
	uint64_t s, e, u;
	if (c->api_start == LIN_NIL || c->api_end == LIN_NIL)
		return LIN_BF_NONE;
	if (!lin_j_call_to_host(v, proc, c->api_start, c->api_end, &s, &e, &u))
		return LIN_BF_NO_CLOCK;
	if (t->unordered)
		return LIN_BF_UNCERTAIN;
	bool bounded = p->host_clock || p->clocks.width_known;
	struct lin_hold h;
	lin_j_holders(t, s, e, u, false, true, false, &h);
	if (h.unclosed)
		return LIN_BF_UNCLOSED; /* one without an end may hold it: cannot tell */
	if (!bounded)
		return LIN_BF_UNCERTAIN; /* no bound on the mapping error */
	if (h.ambiguous)
		return LIN_BF_UNCERTAIN; /* the call is within the error of an edge */
	if (!h.inner)
		return LIN_BF_NONE;
	*out = h.inner;
	return LIN_BF_FOUND;
}

void lin_j_bthreads_free(struct lin_joiner *v)
{
	size_t it = 0;
	struct lin_bthread *t;
	while ((t = lin_vtab_next(&v->bthreads, &it, NULL))) {
		free(t->b);
		free(t->d);
	}
	lin_vtab_free(&v->bthreads);
}

bool lin_joiner_dev_to_host(const struct lin_joiner *v, uint16_t proc, uint64_t dev, uint64_t *host,
			    uint64_t *err)
{
	uint64_t s, e, u;
	if (proc >= v->nprocs || !lin_j_call_to_host(v, proc, dev, dev, &s, &e, &u))
		return false;
	*host = s;
	*err = u;
	return true;
}
