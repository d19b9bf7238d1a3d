/* SPDX-License-Identifier: MIT */
/*
 * host_sched.c - host_sched evidence (docs/ledger.md, "Statements"): the time host_sched
 * records say a thread was off-CPU inside a thread_delay or api_call stretch is a
 * descheduled statement nested in it (statements.c), and is taken out of the stretch's ns.
 * Its prepare sorts the records and merges each thread's overlapping ones; left out
 * (LIN_XW_HOST_SCHED), the thread stretches keep their whole length.
 */
#include "rule.h"

static int cmp_sched(const void *pa, const void *pb)
{
	const struct lin_xsched *a = pa, *b = pb;
	int c = cmp_u64(a->proc, b->proc);
	if (!c)
		c = cmp_u64(a->tid, b->tid);
	return c ? c : cmp_u64(a->start, b->start);
}

/* Merge each thread's overlapping off-CPU records (sorted by start) and sum them up. */
static bool sched_bounds(struct lin_xbuild *b)
{
	struct lin_explain *x = b->x;
	lin_x_vsort(&x->scheds, cmp_sched);
	struct lin_xsched *d = (struct lin_xsched *)x->scheds.data;
	size_t n = 0;
	for (size_t i = 0; i < x->scheds.n; i++) {
		struct lin_xsched *p = n ? &d[n - 1] : NULL;
		if (p && p->proc == d[i].proc && p->tid == d[i].tid && d[i].start <= p->end) {
			if (d[i].end > p->end)
				p->end = d[i].end;
			continue;
		}
		d[n++] = d[i];
	}
	x->scheds.n = n;
	for (size_t i = 0; i < n; i++) {
		struct lin_xsched *p = i ? &d[i - 1] : NULL;
		d[i].cum = p && p->proc == d[i].proc && p->tid == d[i].tid
				   ? sat_add(p->cum, p->end - p->start)
				   : 0;
	}
	return true;
}

/* The first merged off-CPU record of (@proc, @tid) with end > @t, or the index past them. */
static size_t sched_from(const struct lin_explain *x, uint16_t proc, uint64_t tid, uint64_t t)
{
	const struct lin_xsched *d = (const struct lin_xsched *)x->scheds.data;
	size_t lo = 0, hi = x->scheds.n;
	while (lo < hi) { /* merged records of a thread are disjoint: their ends increase */
		size_t mid = (lo + hi) / 2;
		int k = cmp_u64(d[mid].proc, proc);
		if (!k)
			k = cmp_u64(d[mid].tid, tid);
		if (k < 0 || (!k && d[mid].end <= t))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* [s, e] on thread @tid: the off-CPU time in it. Two binary searches and a difference of
 * sums, however many records. */
static uint64_t off_cpu(const struct lin_xbuild *b, uint16_t proc, uint64_t tid, uint64_t s,
			uint64_t e, uint64_t *first, uint64_t *last)
{
	const struct lin_explain *x = b->x;
	const struct lin_xsched *d = (const struct lin_xsched *)x->scheds.data;
	uint64_t off = 0;
	if (!x->scheds.n)
		return 0;
	size_t lo = sched_from(x, proc, tid, s), hi = sched_from(x, proc, tid, e);
	/* Records lo..hi-1 end inside (s, e]; hi may still start before e. */
	if (hi < x->scheds.n && d[hi].proc == proc && d[hi].tid == tid && d[hi].start < e)
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

const struct lin_xrule lin_xrule_host_sched = {
	.name = "host_sched",
	.without = LIN_XW_HOST_SCHED,
	.how = LIN_HOW_HOST_SCHED,
	.prepare = sched_bounds,
	.off_cpu = off_cpu,
};
