/* SPDX-License-Identifier: MIT */
/*
 * clockmap.c - the device-to-host clock map (clockmap.h; docs/validator.md, "Clocks").
 */
#include "clockmap.h"

#include <stdlib.h>
#include <string.h>

void lin_cm_init(struct lin_clockmap *m)
{
	memset(m, 0, sizeof(*m));
	m->sorted = true;
}

void lin_cm_free(struct lin_clockmap *m)
{
	free(m->p);
	lin_cm_init(m);
}

static int pair_cmp(const void *a, const void *b)
{
	const struct lin_cm_pair *x = a, *y = b;
	if (x->device_ns != y->device_ns)
		return x->device_ns < y->device_ns ? -1 : 1;
	return x->host_ns < y->host_ns ? -1 : x->host_ns > y->host_ns;
}

bool lin_cm_add(struct lin_clockmap *m, uint64_t host_ns, uint64_t device_ns, uint64_t host_after_ns)
{
	if (m->n == m->cap) {
		size_t nc = m->cap ? m->cap * 2 : 16;
		struct lin_cm_pair *np =
			nc > SIZE_MAX / sizeof(*np) ? NULL : realloc(m->p, nc * sizeof(*np));
		if (!np) {
			m->oom = true;
			return false;
		}
		m->p = np;
		m->cap = nc;
	}
	struct lin_cm_pair c = { host_ns, device_ns,
				 host_after_ns == LIN_CM_NIL || host_after_ns < host_ns
					 ? LIN_CM_NIL
					 : host_after_ns - host_ns,
				 0, 0 };
	if (m->n && pair_cmp(&m->p[m->n - 1], &c) > 0)
		m->sorted = false;
	m->p[m->n++] = c;
	/* The pair's width bounds how far off the device reading can be placed. */
	if (host_after_ns == LIN_CM_NIL || host_after_ns < host_ns) {
		m->width = LIN_CM_NIL;
		m->width_known = false;
		m->width_lost = true;
	} else if (!m->width_lost && (!m->width_known || host_after_ns - host_ns > m->width)) {
		m->width = host_after_ns - host_ns;
		m->width_known = true;
	}
	return true;
}

#define CM_SAT (UINT64_MAX / 4)

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return b >= CM_SAT || a > CM_SAT - b ? CM_SAT : a + b;
}

static uint64_t max3(uint64_t a, uint64_t b, uint64_t c)
{
	uint64_t m = a > b ? a : b;
	return m > c ? m : c;
}

/* The bend at interior pair c between a and b: how far c lies off the chord a-b, beyond
 * what the pairs' widths allow (each device reading was taken somewhere within its pair's
 * width after host_ns, so with a constant rate c lies within the widest of the three of the
 * chord; 2 ns more for rounding). One rate change at device time t inside a-c (lengths L1 =
 * c-a, L2 = b-c) puts c off the chord by t L2 (r1-r2) / (L1+L2) and the interpolation
 * inside a-c off by at most t (L1-t) (r1-r2) / L1: at most the bend times (L1+L2) / L2;
 * inside c-b, symmetrically, times (L1+L2) / L1. */
static void measure_bend(struct lin_clockmap *m, size_t i)
{
	struct lin_cm_pair *a = &m->p[i - 1], *c = &m->p[i], *b = &m->p[i + 1];
	if (c->bend_l || c->bend_r)
		m->bends--;
	c->bend_l = c->bend_r = 0;
	if (!(a->device_ns < c->device_ns && c->device_ns < b->device_ns &&
	      a->host_ns <= c->host_ns && c->host_ns <= b->host_ns) ||
	    a->width == LIN_CM_NIL || b->width == LIN_CM_NIL || c->width == LIN_CM_NIL)
		return; /* no segments to interpolate in, or no bound to widen */
	long double l1 = (long double)(c->device_ns - a->device_ns);
	long double l2 = (long double)(b->device_ns - c->device_ns);
	long double chord =
		(long double)a->host_ns + (long double)(b->host_ns - a->host_ns) * l1 / (l1 + l2);
	long double off = (long double)c->host_ns - chord;
	if (off < 0)
		off = -off;
	long double excess = off - (long double)sat_add(max3(a->width, b->width, c->width), 2);
	if (excess <= 0)
		return;
	long double l = off * (l1 + l2) / l2 + 1, r = off * (l1 + l2) / l1 + 1;
	c->bend_l = l >= (long double)CM_SAT ? CM_SAT : (uint64_t)l;
	c->bend_r = r >= (long double)CM_SAT ? CM_SAT : (uint64_t)r;
	m->bends++;
}

void lin_cm_finish(struct lin_clockmap *m)
{
	size_t from = m->bent > 1 ? m->bent - 1 : 1;
	if (!m->sorted && m->n > 1) {
		qsort(m->p, m->n, sizeof(*m->p), pair_cmp);
		for (size_t i = 0; i < m->n; i++)
			m->p[i].bend_l = m->p[i].bend_r = 0;
		m->bends = 0;
		from = 1;
	}
	m->sorted = true;
	for (size_t i = from; i + 1 < m->n; i++)
		measure_bend(m, i);
	m->bent = m->n;
}

void lin_cm_trim(struct lin_clockmap *m, size_t keep)
{
	if (!m->sorted || m->n <= keep)
		return;
	for (size_t i = 0; i < m->n - keep; i++)
		if (m->p[i].bend_l || m->p[i].bend_r)
			m->bends--;
	memmove(m->p, m->p + (m->n - keep), keep * sizeof(*m->p));
	m->n = keep;
	m->bent = m->n;
}

/* The pairs @dev is placed by: *@a, and *@b when it lies between two (else NULL). */
static bool locate(const struct lin_clockmap *m, uint64_t dev, const struct lin_cm_pair **a,
		   const struct lin_cm_pair **b)
{
	if (dev == LIN_CM_NIL || !m->n || !m->sorted)
		return false;
	size_t lo = 0, hi = m->n; /* first pair with device_ns > dev */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (m->p[mid].device_ns <= dev)
			lo = mid + 1;
		else
			hi = mid;
	}
	*a = &m->p[lo ? lo - 1 : 0];
	*b = lo && lo < m->n ? &m->p[lo] : NULL;
	if (*b && !((*b)->device_ns > (*a)->device_ns && (*b)->host_ns >= (*a)->host_ns))
		*b = NULL;
	return true;
}

bool lin_cm_to_host(const struct lin_clockmap *m, uint64_t dev, uint64_t *host, uint64_t *widen)
{
	if (widen)
		*widen = 0;
	if (dev == LIN_CM_NIL || !m->n || !m->sorted)
		return false;
	size_t lo = 0, hi = m->n; /* first pair with device_ns > dev */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (m->p[mid].device_ns <= dev)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Between two pairs: interpolate (the clocks may run at slightly different rates);
	 * before the first or after the last: the nearest pair's offset, and the clocks may
	 * have drifted apart by up to LIN_CLOCK_RATE_ERR of the distance to it since. */
	const struct lin_cm_pair *a = &m->p[lo ? lo - 1 : 0];
	const struct lin_cm_pair *b = lo && lo < m->n ? &m->p[lo] : NULL;
	if (b && b->device_ns > a->device_ns && b->host_ns >= a->host_ns) {
		long double f = (long double)(dev - a->device_ns) /
				(long double)(b->device_ns - a->device_ns);
		*host = a->host_ns + (uint64_t)(f * (long double)(b->host_ns - a->host_ns) + 0.5L);
		return true;
	}
	if (widen) {
		uint64_t dist = dev >= a->device_ns ? dev - a->device_ns : a->device_ns - dev;
		*widen = dist / LIN_CLOCK_RATE_ERR_DIV + (dist % LIN_CLOCK_RATE_ERR_DIV != 0);
	}
	if ((dev < a->device_ns && a->device_ns - dev > a->host_ns) ||
	    (dev >= a->device_ns && dev - a->device_ns > UINT64_MAX - a->host_ns))
		return false; /* outside the host clock's range: no mapping, not a wrapped time */
	*host = dev - a->device_ns + a->host_ns;
	return true;
}

uint64_t lin_cm_err(const struct lin_clockmap *m, uint64_t widen)
{
	if (!m->width_known)
		return LIN_CM_NIL;
	return sat_add(m->width, widen);
}

bool lin_cm_map(const struct lin_clockmap *m, uint64_t dev, uint64_t *host, uint64_t *err)
{
	uint64_t w;
	const struct lin_cm_pair *a, *b;
	if (!lin_cm_to_host(m, dev, host, &w) || !locate(m, dev, &a, &b))
		return false;
	uint64_t width = a->width;
	if (b && (b->width == LIN_CM_NIL || (width != LIN_CM_NIL && b->width > width)))
		width = b->width;
	if (b) /* a rate change seen at either end of the segment */
		w = a->bend_r > b->bend_l ? a->bend_r : b->bend_l;
	if (width == LIN_CM_NIL)
		*err = LIN_CM_NIL;
	else
		*err = sat_add(width, w);
	return true;
}

bool lin_cm_to_device(const struct lin_clockmap *m, uint64_t host, uint64_t *dev)
{
	if (host == LIN_CM_NIL || !m->n || !m->sorted)
		return false;
	/* First pair with host_ns > host: the pairs are in host order too while both clocks
	 * run forward; where they are not, the pair found is still one of them. */
	size_t lo = 0, hi = m->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (m->p[mid].host_ns <= host)
			lo = mid + 1;
		else
			hi = mid;
	}
	const struct lin_cm_pair *a = &m->p[lo ? lo - 1 : 0];
	const struct lin_cm_pair *b = lo && lo < m->n ? &m->p[lo] : NULL;
	if (b && b->host_ns > a->host_ns && b->device_ns >= a->device_ns && host >= a->host_ns) {
		long double f = (long double)(host - a->host_ns) / (long double)(b->host_ns - a->host_ns);
		*dev = a->device_ns + (uint64_t)(f * (long double)(b->device_ns - a->device_ns) + 0.5L);
		return true;
	}
	if ((host < a->host_ns && a->host_ns - host > a->device_ns) ||
	    (host >= a->host_ns && host - a->host_ns > UINT64_MAX - a->device_ns))
		return false;
	*dev = host - a->host_ns + a->device_ns;
	return true;
}
