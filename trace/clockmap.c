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
	free(m->amb);
	free(m->rix);
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
	struct lin_cm_pair c = { host_ns,
				 device_ns,
				 host_after_ns == LIN_NIL || host_after_ns < host_ns
					 ? LIN_NIL
					 : host_after_ns - host_ns,
				 0,
				 0,
				 0,
				 0 };
	if (m->n && pair_cmp(&m->p[m->n - 1], &c) > 0)
		m->sorted = false;
	m->p[m->n++] = c;
	/* The pair's width bounds how far off the device reading can be placed. */
	if (host_after_ns == LIN_NIL || host_after_ns < host_ns) {
		m->width = LIN_NIL;
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

/* A pair's width as a tolerance (0 where unknown: such a map has no bound anyway). */
static uint64_t wid(const struct lin_cm_pair *p) { return p->width == LIN_NIL ? 0 : p->width; }

static bool same_pair(const struct lin_cm_pair *x, const struct lin_cm_pair *y)
{
	return x->host_ns == y->host_ns && x->device_ns == y->device_ns && x->width == y->width;
}

/* The first of the pairs @ix[lo..hi) (@ix NULL: p[lo..hi)), in device order, whose device
 * time is after @d (at or after it, with @at): hi when none. */
static size_t search(const struct lin_clockmap *m, const size_t *ix, size_t lo, size_t hi,
		     uint64_t d, bool at)
{
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t v = m->p[ix ? ix[mid] : mid].device_ns;
		if (at ? v < d : v <= d)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Over the pairs @ix[0..k) of one run, in device order: the last at or before device time
 * @d among those before @j (@j when none). */
static size_t last_at_or_before(const struct lin_clockmap *m, const size_t *ix, size_t j, uint64_t d)
{
	size_t lo = search(m, ix, 0, j, d, false);
	return lo ? lo - 1 : j;
}

/* The first at or after device time @d among those after @j (@j when none). */
static size_t first_at_or_after(const struct lin_clockmap *m, const size_t *ix, size_t k, size_t j,
				uint64_t d)
{
	size_t lo = search(m, ix, j + 1, k, d, true);
	return lo < k ? lo : j;
}

/*
 * The bend of pair @ic off the chord of pairs @ia and @ib of its run (c, a, b below),
 * taken into its widening and zone: how far c lies off the chord a-b. With a constant rate,
 * c lies within the widest of the three widths of the chord (each device reading was taken
 * somewhere within its pair's width after host_ns; 2 ns more for rounding): that is the
 * noise, and only a larger offset is a bend. The true offset is at most the measured one plus the noise. One rate change at
 * device time t inside a-c (lengths L1 = c-a, L2 = b-c) puts c off the chord by
 * t L2 (r1-r2) / (L1+L2) and the interpolation inside a-c off by at most
 * t (L1-t) (r1-r2) / L1, at most the true offset times (L1+L2) / L2; inside c-b, times
 * (L1+L2) / L1. A step of the device clock inside a-b (a change of rate that reverses at
 * once) of S puts c off the chord by at most S and records off by S, and records read
 * near the step may carry device times up to S beyond a or b. So the bend's widening W is
 * the larger of the two factors times the true offset, and it holds for device times from
 * a - W to b + W (its zone).
 */
static void bend_on(struct lin_clockmap *m, size_t ic, size_t ia, size_t ib)
{
	struct lin_cm_pair *c = &m->p[ic];
	const struct lin_cm_pair *a = &m->p[ia], *b = &m->p[ib];
	if (!(a->device_ns < c->device_ns && c->device_ns < b->device_ns &&
	      a->host_ns <= c->host_ns && c->host_ns <= b->host_ns) ||
	    a->width == LIN_NIL || b->width == LIN_NIL || c->width == LIN_NIL)
		return; /* no segments to interpolate in, or no bound to widen */
	long double l1 = (long double)(c->device_ns - a->device_ns);
	long double l2 = (long double)(b->device_ns - c->device_ns);
	long double chord =
		(long double)a->host_ns + (long double)(b->host_ns - a->host_ns) * l1 / (l1 + l2);
	long double off = (long double)c->host_ns - chord;
	if (off < 0)
		off = -off;
	long double noise = (long double)sat_add(max3(a->width, b->width, c->width), 2);
	if (off <= noise)
		return;
	long double w = (off + noise) * (l1 + l2) / (l1 < l2 ? l1 : l2) + 1;
	uint64_t bend = w >= (long double)CM_SAT ? CM_SAT : (uint64_t)w;
	uint64_t zlo = a->device_ns > bend ? a->device_ns - bend : 0;
	uint64_t zhi = b->device_ns > UINT64_MAX - bend ? UINT64_MAX : b->device_ns + bend;
	if (!c->bend) {
		c->zlo = zlo;
		c->zhi = zhi;
		m->bends++;
	}
	c->bend = bend > c->bend ? bend : c->bend;
	c->zlo = zlo < c->zlo ? zlo : c->zlo;
	c->zhi = zhi > c->zhi ? zhi : c->zhi;
}

/*
 * The bends of one run's pairs @ix[0..k), in device order (a run is one stretch of the
 * device clock: its device order is its host order). Each pair against the chord of its
 * nearest pairs of other device times and, where one side is much shorter than the other,
 * against a chord whose short side reaches as far as the long one (or to the run's end): a
 * rate change inside a long segment beside a short one barely moves the pair off the short
 * chord (the live binding writes a pair per buffer, so an idle stretch and a burst sit side
 * by side). Pairs of one device time are walked as a group, once.
 */
static void measure_run(struct lin_clockmap *m, const size_t *ix, size_t k)
{
	for (size_t g = 0, ge; g < k; g = ge) {
		uint64_t d = m->p[ix[g]].device_ns;
		for (ge = g + 1; ge < k && m->p[ix[ge]].device_ns == d;)
			ge++;
		if (!g || ge >= k)
			continue; /* the first or last device time: no chord around it */
		size_t a = g - 1, b = ge;
		uint64_t l1 = d - m->p[ix[a]].device_ns, l2 = m->p[ix[b]].device_ns - d;
		size_t fa = a, fb = b;
		if (l2 > l1)
			fa = d - m->p[ix[0]].device_ns >= l2 ? last_at_or_before(m, ix, a, d - l2) : 0;
		else if (l1 > l2)
			fb = m->p[ix[k - 1]].device_ns - d >= l1
				     ? first_at_or_after(m, ix, k, b, d + l1)
				     : k - 1;
		for (size_t i = g; i < ge; i++) {
			bend_on(m, ix[i], ix[a], ix[b]);
			if (fa < a || fb > b)
				bend_on(m, ix[i], ix[fa], ix[fb]);
		}
	}
}

/* Is the zone of the bend at @c near enough to be found from any device time in it?
 * lin_cm_map looks at the pairs from LIN_CM_NEAR before to LIN_CM_NEAR + 1 after the last
 * pair at or before the time (ia): a zone from p[c - NEAR - 1] on puts ia at c - NEAR - 1
 * or later, one ending before p[c + NEAR + 1] at c + NEAR or earlier. A zone wider than
 * that goes into the spans without a bound. */
static bool bend_near(const struct lin_clockmap *m, size_t c)
{
	const struct lin_cm_pair *p = &m->p[c];
	return (c <= LIN_CM_NEAR || p->zlo >= m->p[c - LIN_CM_NEAR - 1].device_ns) &&
	       (c + LIN_CM_NEAR + 1 >= m->n || p->zhi < m->p[c + LIN_CM_NEAR + 1].device_ns);
}

struct cm_ord {
	uint64_t host, dev, width;
	size_t pos;
};

static int ord_cmp(const void *a, const void *b)
{
	const struct cm_ord *x = a, *y = b;
	if (x->host != y->host)
		return x->host < y->host ? -1 : 1;
	return x->dev < y->dev ? -1 : x->dev > y->dev;
}

/* One more span of device times without a bound (kept unsorted until amb_settle). */
static void amb_add(struct lin_clockmap *m, uint64_t lo, uint64_t hi)
{
	if (m->amb_all)
		return;
	if (m->namb == m->camb) {
		size_t nc = m->camb ? m->camb * 2 : 8;
		struct lin_cm_span *na =
			nc > SIZE_MAX / sizeof(*na) ? NULL : realloc(m->amb, nc * sizeof(*na));
		if (!na) {
			m->amb_all = true; /* cannot keep them apart: nothing is bounded */
			return;
		}
		m->amb = na;
		m->camb = nc;
	}
	m->amb[m->namb++] = (struct lin_cm_span){ lo, hi };
}

static int span_cmp(const void *a, const void *b)
{
	const struct lin_cm_span *x = a, *y = b;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Sort the spans and merge those that overlap (lin_cm_ambiguous searches them). */
static void amb_settle(struct lin_clockmap *m)
{
	if (m->namb < 2)
		return;
	qsort(m->amb, m->namb, sizeof(*m->amb), span_cmp);
	size_t k = 0;
	for (size_t i = 1; i < m->namb; i++) {
		if (m->amb[i].lo <= m->amb[k].hi || m->amb[k].hi == UINT64_MAX ||
		    m->amb[i].lo == m->amb[k].hi + 1) {
			if (m->amb[i].hi > m->amb[k].hi)
				m->amb[k].hi = m->amb[i].hi;
		} else {
			m->amb[++k] = m->amb[i];
		}
	}
	m->namb = k + 1;
}

/* The device time a run's records may reach beyond its pairs, @gap of host time away from
 * the other run's pair: the gap at up to 500 ppm, both pairs' widths, and 1 ns. */
static uint64_t reach(uint64_t gap, uint64_t w1, uint64_t w2)
{
	return sat_add(sat_add(gap, gap / LIN_CLOCK_RATE_ERR_DIV + 1), sat_add(w1, w2));
}

/*
 * Steps back of the device clock (docs/validator.md, "Clocks"). Read in host order (the
 * host clock only runs forward), a pair whose device time is not after the one before it,
 * though its host time is past that pair's width, shows the device clock went back (or
 * stood): the pairs split into runs, each a stretch of one device clock. A run's records
 * reach from its pairs' device times back and forth by the host time to the next run's
 * pairs (nothing at the ends of the run); a device time two runs reach is ambiguous (it
 * was read before the step and again after it): no placement of it can be bounded.
 */
static void find_steps(struct lin_clockmap *m)
{
	m->namb = 0;
	m->amb_all = false;
	m->runs = 1;
	for (size_t i = 0; i < m->n; i++)
		m->p[i].run = 0;
	bool step = false;
	for (size_t k = 0; k + 1 < m->n && !step; k++) {
		const struct lin_cm_pair *x = &m->p[k], *y = &m->p[k + 1]; /* device order */
		step = sat_add(y->host_ns, wid(y)) < x->host_ns ||
		       (x->device_ns == y->device_ns && y->host_ns > sat_add(x->host_ns, wid(x)));
	}
	if (!step)
		return;
	struct cm_ord *o = malloc(m->n * sizeof(*o));
	struct {
		uint64_t lo, hi, first_host, last_host, first_w, last_w;
	} run[LIN_CM_MAX_RUNS];
	if (!o) {
		m->amb_all = true;
		return;
	}
	for (size_t i = 0; i < m->n; i++)
		o[i] = (struct cm_ord){ m->p[i].host_ns, m->p[i].device_ns, wid(&m->p[i]), i };
	qsort(o, m->n, sizeof(*o), ord_cmp);
	size_t r = 0;
	for (size_t j = 0; j < m->n; j++) {
		if (j && o[j].dev <= o[j - 1].dev && o[j].host > sat_add(o[j - 1].host, o[j - 1].width)) {
			if (++r == LIN_CM_MAX_RUNS) {
				m->amb_all = true; /* too many steps to keep apart */
				m->runs = LIN_CM_MAX_RUNS + 1;
				free(o);
				return;
			}
		}
		if (!j || r != m->p[o[j - 1].pos].run) {
			run[r].lo = run[r].hi = o[j].dev;
			run[r].first_host = o[j].host;
			run[r].first_w = o[j].width;
		}
		run[r].lo = o[j].dev < run[r].lo ? o[j].dev : run[r].lo;
		run[r].hi = o[j].dev > run[r].hi ? o[j].dev : run[r].hi;
		run[r].last_host = o[j].host;
		run[r].last_w = o[j].width;
		m->p[o[j].pos].run = (uint32_t)r;
	}
	free(o);
	size_t nr = r + 1;
	m->runs = nr;
	if (nr == 1)
		return;
	uint64_t *lo = m->rlo, *hi = m->rhi;
	for (size_t k = 0; k < nr; k++) {
		uint64_t back = k ? reach(run[k].first_host - run[k - 1].last_host, run[k].first_w,
					  run[k - 1].last_w)
				  : UINT64_MAX;
		uint64_t fwd = k + 1 < nr ? reach(run[k + 1].first_host - run[k].last_host,
						  run[k].last_w, run[k + 1].first_w)
					  : UINT64_MAX;
		lo[k] = run[k].lo > back ? run[k].lo - back : 0;
		hi[k] = run[k].hi > UINT64_MAX - fwd ? UINT64_MAX : run[k].hi + fwd;
	}
	for (size_t a = 0; a < nr; a++)
		for (size_t b = a + 1; b < nr; b++) {
			uint64_t l = lo[a] > lo[b] ? lo[a] : lo[b], h = hi[a] < hi[b] ? hi[a] : hi[b];
			if (l <= h)
				amb_add(m, l, h);
		}
}

/* Measure every pair anew: the runs and the spans of the steps, the bends, and the zones
 * of bends too wide to be found near (spans too). */
static void remeasure(struct lin_clockmap *m)
{
	find_steps(m);
	for (size_t i = 0; i < m->n; i++)
		m->p[i].bend = m->p[i].zlo = m->p[i].zhi = 0;
	m->bends = 0;
	m->rix_ok = false;
	if (m->amb_all || !m->n)
		return; /* nothing is bounded, or no pair */
	size_t *ix = realloc(m->rix, m->n * sizeof(*ix));
	if (!ix) {
		m->amb_all = true; /* the bends cannot be measured: nothing is bounded */
		return;
	}
	m->rix = ix;
	/* Each run's pairs in device order, one run after the other (lin_cm_to_host places a
	 * time by the pairs of its own run). */
	size_t k = 0;
	for (uint32_t r = 0; r < m->runs; r++) {
		m->roff[r] = k;
		for (size_t i = 0; i < m->n; i++)
			if (m->p[i].run == r)
				ix[k++] = i;
		measure_run(m, ix + m->roff[r], k - m->roff[r]);
	}
	m->roff[m->runs] = k;
	m->rix_ok = true;
	for (size_t c = 0; c < m->n && m->bends; c++)
		if (m->p[c].bend && !bend_near(m, c))
			amb_add(m, m->p[c].zlo, m->p[c].zhi);
	amb_settle(m);
}

void lin_cm_finish(struct lin_clockmap *m)
{
	if (!m->sorted && m->n > 1)
		qsort(m->p, m->n, sizeof(*m->p), pair_cmp);
	m->sorted = true;
	/* A pair read twice (a file passed twice) is one pair. */
	size_t k = 0;
	for (size_t i = 0; i < m->n; i++)
		if (!k || !same_pair(&m->p[k - 1], &m->p[i]))
			m->p[k++] = m->p[i];
	m->n = k;
	remeasure(m);
}

void lin_cm_trim(struct lin_clockmap *m, size_t keep)
{
	if (!m->sorted || m->n <= keep)
		return;
	memmove(m->p, m->p + (m->n - keep), keep * sizeof(*m->p));
	m->n = keep;
	remeasure(m); /* the steps and bends may have gone with the pairs */
}

/* The pairs around @dev: *@ia the last at or before it (else the first), *@ib the first
 * after it (m->n: none). */
static bool around(const struct lin_clockmap *m, uint64_t dev, size_t *ia, size_t *ib)
{
	if (dev == LIN_NIL || !m->n || !m->sorted)
		return false;
	size_t lo = search(m, NULL, 0, m->n, dev, false);
	*ia = lo ? lo - 1 : 0;
	*ib = lo;
	return true;
}

/* The one run whose records may reach device time @dev; -1 when none or more than one. */
static int run_of(const struct lin_clockmap *m, uint64_t dev)
{
	int r = -1;
	for (size_t k = 0; k < m->runs && k < LIN_CM_MAX_RUNS; k++)
		if (m->rlo[k] <= dev && dev <= m->rhi[k]) {
			if (r >= 0)
				return -1;
			r = (int)k;
		}
	return r;
}

/* The pairs that place @dev: *@a, and *@b when it lies between two (else NULL). The pairs
 * around it in device order (@ia, @ib), unless the device clock stepped back and they are
 * of another run than the one @dev was read in: then the pairs of that run around it. */
static void placers(const struct lin_clockmap *m, uint64_t dev, size_t ia, size_t ib,
		    const struct lin_cm_pair **a, const struct lin_cm_pair **b)
{
	*a = &m->p[ia];
	*b = ib && ib < m->n ? &m->p[ib] : NULL;
	int r = m->runs > 1 && !m->amb_all && m->rix_ok ? run_of(m, dev) : -1;
	if (r < 0 || ((*a)->run == (uint32_t)r && (!*b || (*b)->run == (uint32_t)r)))
		return;
	const size_t *rx = m->rix + m->roff[r];
	size_t k = m->roff[r + 1] - m->roff[r], lo = search(m, rx, 0, k, dev, false);
	*a = &m->p[rx[lo ? lo - 1 : 0]];
	*b = lo && lo < k ? &m->p[rx[lo]] : NULL;
}

/* Place @dev: the pairs that place it (*@a, and *@b when between two), the last pair at or
 * before it in device order (*@ia), its host time and the drift widening (lin_cm_to_host). */
static bool place(const struct lin_clockmap *m, uint64_t dev, size_t *ia, const struct lin_cm_pair **a,
		  const struct lin_cm_pair **b, uint64_t *host, uint64_t *widen)
{
	*widen = 0;
	size_t ib;
	if (!around(m, dev, ia, &ib))
		return false;
	/* Between two pairs: interpolate (the clocks may run at slightly different rates);
	 * before the first or after the last: the nearest pair's offset, and the clocks may
	 * have drifted apart by up to LIN_CLOCK_RATE_ERR of the distance to it since. */
	placers(m, dev, *ia, ib, a, b);
	const struct lin_cm_pair *x = *a, *y = *b;
	if (y && y->device_ns > x->device_ns && y->host_ns >= x->host_ns) {
		long double f = (long double)(dev - x->device_ns) /
				(long double)(y->device_ns - x->device_ns);
		*host = x->host_ns + (uint64_t)(f * (long double)(y->host_ns - x->host_ns) + 0.5L);
		return true;
	}
	uint64_t dist = dev >= x->device_ns ? dev - x->device_ns : x->device_ns - dev;
	*widen = dist / LIN_CLOCK_RATE_ERR_DIV + (dist % LIN_CLOCK_RATE_ERR_DIV != 0);
	if ((dev < x->device_ns && x->device_ns - dev > x->host_ns) ||
	    (dev >= x->device_ns && dev - x->device_ns > UINT64_MAX - x->host_ns))
		return false; /* outside the host clock's range: no mapping, not a wrapped time */
	*host = dev - x->device_ns + x->host_ns;
	return true;
}

bool lin_cm_to_host(const struct lin_clockmap *m, uint64_t dev, uint64_t *host, uint64_t *widen)
{
	size_t ia;
	const struct lin_cm_pair *a, *b;
	uint64_t w;
	bool ok = place(m, dev, &ia, &a, &b, host, &w);
	if (widen)
		*widen = ok ? w : 0;
	return ok;
}

uint64_t lin_cm_err(const struct lin_clockmap *m, uint64_t widen)
{
	if (!m->width_known)
		return LIN_NIL;
	return sat_add(m->width, widen);
}

bool lin_cm_ambiguous(const struct lin_clockmap *m, uint64_t dev)
{
	if (m->amb_all)
		return true;
	size_t lo = 0, hi = m->namb; /* the first span starting after dev */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (m->amb[mid].lo <= dev)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && dev <= m->amb[lo - 1].hi;
}

bool lin_cm_map(const struct lin_clockmap *m, uint64_t dev, uint64_t *host, uint64_t *err)
{
	uint64_t w;
	size_t ia;
	const struct lin_cm_pair *a, *b;
	if (!place(m, dev, &ia, &a, &b, host, &w))
		return false;
	uint64_t width = a->width;
	if (b && (b->width == LIN_NIL || (width != LIN_NIL && b->width > width)))
		width = b->width;
	if (width == LIN_NIL) {
		*err = LIN_NIL;
		return true;
	}
	/* Read before and after a step back, placed across one, or in a bend's zone too wide
	 * to find near: no bound. */
	if (lin_cm_ambiguous(m, dev) || (b && b->run != a->run)) {
		*err = CM_SAT;
		return true;
	}
	/* w: the drift widening where the time was not interpolated (outside the span, or
	 * beside a pair whose host time runs back within its width), 0 where it was. */
	/* Plus the widest bend whose zone holds @dev, of the pairs near it (a zone that
	 * reaches further is in the spans above). */
	uint64_t bw = 0;
	size_t lo = ia >= LIN_CM_NEAR ? ia - LIN_CM_NEAR : 0;
	size_t hi = ia + LIN_CM_NEAR + 2 < m->n ? ia + LIN_CM_NEAR + 2 : m->n;
	for (size_t c = lo; c < hi && m->bends; c++) {
		const struct lin_cm_pair *p = &m->p[c];
		if (p->bend > bw && p->zlo <= dev && dev <= p->zhi)
			bw = p->bend;
	}
	*err = sat_add(width, sat_add(w, bw));
	return true;
}

bool lin_cm_to_device(const struct lin_clockmap *m, uint64_t host, uint64_t *dev)
{
	if (host == LIN_NIL || !m->n || !m->sorted)
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
