/* SPDX-License-Identifier: MIT */
/*
 * host_sched.c - host_sched evidence (docs/ledger.md, "Statements"): the time host_sched
 * records say a thread was off-CPU inside a handoff_wait, thread_delay or api_call stretch
 * is a descheduled statement per state (preempted, blocked, unknown) nested in it
 * (statements.c), and is taken out of the stretch's ns; a thread whose context switches
 * were lost or refused (dropped sources 8, 9) has a gap. Its prepare makes each thread's
 * records disjoint; left out (LIN_XW_HOST_SCHED), the thread stretches keep their whole
 * length.
 */
#include "rule.h"

static int cmp_thread_start(const void *pa, const void *pb)
{
	const struct lin_xsched *a = pa, *b = pb;
	int c = cmp_u64(a->proc, b->proc);
	if (!c)
		c = cmp_u64(a->tid, b->tid);
	return c ? c : cmp_u64(a->start, b->start);
}

static int cmp_sched(const void *pa, const void *pb)
{
	const struct lin_xsched *a = pa, *b = pb;
	int c = cmp_u64(a->proc, b->proc);
	if (!c)
		c = cmp_u64(a->tid, b->tid);
	if (!c)
		c = cmp_u64(a->state, b->state);
	return c ? c : cmp_u64(a->start, b->start);
}

/* Make each thread's off-CPU records disjoint (sorted by start): overlapping ones of one
 * state merge; a record overlapping an earlier one of another state keeps only what lies
 * past it (the earlier record's state holds the overlap: counted once). Then group them
 * by state and sum them up. */
static bool sched_bounds(struct lin_xbuild *b)
{
	struct lin_explain *x = b->x;
	lin_x_vsort(&x->scheds, cmp_thread_start);
	struct lin_xsched *d = (struct lin_xsched *)x->scheds.data;
	size_t n = 0;
	uint64_t hi = 0; /* the latest end of the thread's records kept so far */
	for (size_t i = 0; i < x->scheds.n; i++) {
		struct lin_xsched *p = n ? &d[n - 1] : NULL;
		struct lin_xsched r = d[i];
		bool same = p && p->proc == r.proc && p->tid == r.tid;
		if (same && r.start <= hi) {
			if (r.state == p->state && p->end == hi) {
				if (r.end > p->end)
					p->end = hi = r.end;
				continue;
			}
			if (r.end <= hi)
				continue;
			r.start = hi;
		}
		d[n++] = r;
		hi = r.end;
	}
	x->scheds.n = n;
	lin_x_vsort(&x->scheds, cmp_sched);
	for (size_t i = 0; i < n; i++) {
		struct lin_xsched *p = i ? &d[i - 1] : NULL;
		d[i].cum = p && p->proc == d[i].proc && p->tid == d[i].tid && p->state == d[i].state
				   ? sat_add(p->cum, p->end - p->start)
				   : 0;
	}
	return true;
}

/* The first merged off-CPU record of (@proc, @tid, @state) with end > @t, or the index past
 * them. */
static size_t sched_from(const struct lin_explain *x, uint16_t proc, uint64_t tid, uint32_t state,
			 uint64_t t)
{
	const struct lin_xsched *d = (const struct lin_xsched *)x->scheds.data;
	size_t lo = 0, hi = x->scheds.n;
	while (lo < hi) { /* a thread's records of a state are disjoint: their ends increase */
		size_t mid = (lo + hi) / 2;
		int k = cmp_u64(d[mid].proc, proc);
		if (!k)
			k = cmp_u64(d[mid].tid, tid);
		if (!k)
			k = cmp_u64(d[mid].state, state);
		if (k < 0 || (!k && d[mid].end <= t))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* [s, e] on thread @tid: the off-CPU time of @state in it. Two binary searches and a
 * difference of sums, however many records. */
static uint64_t off_cpu(const struct lin_xbuild *b, uint16_t proc, uint64_t tid, uint32_t state,
			uint64_t s, uint64_t e, uint64_t *first, uint64_t *last)
{
	const struct lin_explain *x = b->x;
	const struct lin_xsched *d = (const struct lin_xsched *)x->scheds.data;
	uint64_t off = 0;
	if (!x->scheds.n)
		return 0;
	size_t lo = sched_from(x, proc, tid, state, s), hi = sched_from(x, proc, tid, state, e);
	/* Records lo..hi-1 end inside (s, e]; hi may still start before e. */
	if (hi < x->scheds.n && d[hi].proc == proc && d[hi].tid == tid && d[hi].state == state &&
	    d[hi].start < e)
		hi++;
	if (lo < hi) {
		const struct lin_xsched *fa = &d[lo], *lb = &d[hi - 1];
		off = lb->cum + (lb->end - lb->start) - fa->cum;
		*first = fa->start > s ? fa->start : s;
		*last = lb->end < e ? lb->end : e;
		off -= *first - fa->start;
		off -= lb->end - *last;
	}
	return off;
}

static bool sched_gap(const struct lin_xbuild *b, uint16_t proc, uint64_t tid)
{
	const struct lin_vec *v = &b->x->schedgaps;
	const struct lin_xschedgap *g = (const struct lin_xschedgap *)v->data;
	for (size_t i = 0; i < v->n; i++)
		if (g[i].proc == proc && g[i].tid == tid)
			return true;
	return false;
}

const struct lin_xrule lin_xrule_host_sched = {
	.name = "host_sched",
	.without = LIN_XW_HOST_SCHED,
	.how = LIN_HOW_HOST_SCHED,
	.prepare = sched_bounds,
	.off_cpu = off_cpu,
	.sched_gap = sched_gap,
};
