/* SPDX-License-Identifier: MIT */
/*
 * statements.c - a ledger's statements (docs/ledger.md, "Statements"): the time from its
 * first known mark to the start cut at the known marks, each stretch with its cause; the
 * rules that cut a stretch (host_sched: descheduled; device_occupied: device_busy) or
 * withdraw the dominant cause (competing causes) are the rows on in the build (rule.h).
 */
#include "rule.h"

static bool add_seg_ns(struct lin_xlaunch *l, uint64_t s, uint64_t e, uint64_t ns,
		       enum lin_xcause c, enum lin_evidence ev, enum lin_how how)
{
	if (l->nseg >= LIN_XSEG_MAX)
		return false; /* not reached: at most 19 (LIN_XSEG_MAX) */
	l->seg[l->nseg++] = (struct lin_xseg){
		.start = s, .end = e, .ns = ns, .cause = (uint8_t)c, .ev = (uint8_t)ev, .how = (uint8_t)how
	};
	return true;
}

void lin_x_add_seg(struct lin_xlaunch *l, uint64_t s, uint64_t e, enum lin_xcause c,
		   enum lin_evidence ev, enum lin_how how)
{
	if (e > s)
		add_seg_ns(l, s, e, e - s, c, ev, how);
}

/* [s, e] of cause @c on thread @tid; the time the host_sched row says the thread was not
 * running in it is a descheduled statement (observed) per state, preempted, blocked or
 * unknown, nested in it, and is taken out of its ns. A thread whose context switches
 * were lost or refused keeps the stretch marked (gap): what no record covers may still
 * have been off-CPU. */
static void add_thread_seg(const struct lin_xbuild *b, struct lin_xlaunch *l, uint16_t proc,
			   uint64_t tid, uint64_t s, uint64_t e, enum lin_xcause c,
			   enum lin_evidence ev, enum lin_how how)
{
	if (e <= s)
		return;
	static const uint32_t states[] = { LIN_SCHED_PREEMPTED, LIN_SCHED_BLOCKED, LIN_SCHED_UNKNOWN };
	uint64_t off[3] = { 0 }, first[3] = { 0 }, last[3] = { 0 }, total = 0;
	bool gap = false;
	const struct lin_xrule *rule = NULL;
	if (tid != LIN_NIL && proc != LIN_XPROC_IMPORTED)
		for (size_t r = 0; r < b->non && !rule; r++)
			if (b->on[r]->off_cpu)
				rule = b->on[r];
	if (rule) {
		for (int k = 0; k < 3; k++) {
			off[k] = rule->off_cpu(b, proc, tid, states[k], s, e, &first[k], &last[k]);
			total += off[k];
		}
		gap = rule->sched_gap && rule->sched_gap(b, proc, tid);
	}
	if (total > e - s)
		total = e - s; /* not reached: the records of a thread are made disjoint */
	if (add_seg_ns(l, s, e, e - s - total, c, ev, how))
		l->seg[l->nseg - 1].gap = gap;
	for (int k = 0; k < 3; k++)
		if (off[k] && add_seg_ns(l, first[k], last[k], off[k], LIN_X_DESCHEDULED,
					 LIN_EV_OBSERVED, LIN_HOW_HOST_SCHED))
			l->seg[l->nseg - 1].state = (uint8_t)states[k];
}

/* The statement a stretch ending at mark @m is; the marks it spans without a value are
 * @skipped (a bit per mark). A stretch over an unknown mark is unresolved, except over the
 * capture (the whole handoff) and submission (a dependency holds whatever the
 * submission did). */
static enum lin_xcause cause_of(enum lin_mark m, uint32_t skipped)
{
	uint32_t ok = 0;
	enum lin_xcause c = LIN_X_UNRESOLVED;
	switch (m) {
	case LIN_M_DECLARED: c = LIN_X_BEFORE_DECLARE; break;
	case LIN_M_CAPTURED: c = LIN_X_BEFORE_HANDOFF; break;
	case LIN_M_ADOPTED:
		c = LIN_X_HANDOFF_WAIT;
		ok = 1u << LIN_M_CAPTURED;
		break;
	case LIN_M_API_ENTER: c = LIN_X_THREAD_DELAY; break;
	case LIN_M_API_EXIT: c = LIN_X_API_CALL; break;
	case LIN_M_SUBMITTED: c = LIN_X_SUBMIT_DELAY; break;
	case LIN_M_DEP_READY:
		c = LIN_X_DEPENDENCY;
		ok = 1u << LIN_M_SUBMITTED;
		break;
	default: return LIN_X_UNRESOLVED;
	}
	return (skipped & ~ok) ? LIN_X_UNRESOLVED : c;
}

/* The statements, their dominant cause, and whether a competing cause withdraws it. @raw:
 * the marks as written on the device clock (LIN_NIL: a host-clock mark). */
void lin_x_statements(const struct lin_xbuild *b, struct lin_xlaunch *l, size_t i, uint64_t tid,
		      const uint64_t *raw)
{
	enum lin_mark order[] = { LIN_M_REQUEST_READY, LIN_M_DECLARED,  LIN_M_CAPTURED,
				  LIN_M_ADOPTED,       LIN_M_API_ENTER, LIN_M_API_EXIT,
				  LIN_M_SUBMITTED,     LIN_M_DEP_READY, LIN_M_KERNEL_START };
	const size_t n = sizeof(order) / sizeof(order[0]);
	/* A dependency that ended before the submission: held from the call's return to its
	 * end, then the command reached the device (a GPU's submitted follows the wait). */
	if (mark_known(l, LIN_M_SUBMITTED) && mark_known(l, LIN_M_DEP_READY) &&
	    l->m[LIN_M_DEP_READY].t < l->m[LIN_M_SUBMITTED].t) {
		order[6] = LIN_M_DEP_READY;
		order[7] = LIN_M_SUBMITTED;
	}
	l->nseg = 0;
	l->dominant = LIN_X_N;
	l->dominant_how = LIN_HOW_NONE;
	size_t k = 0;
	while (k < n && !mark_known(l, order[k]))
		k++;
	if (k >= n - 1 || !mark_known(l, LIN_M_KERNEL_START))
		return;
	/* Stretches end at the start at the latest (the call may return after it). */
	uint64_t start = l->m[LIN_M_KERNEL_START].t;
	uint64_t front = l->m[order[k]].t, fdev = raw[order[k]];
	if (front > start)
		front = start, fdev = raw[LIN_M_KERNEL_START];
	/* Each statement's start as written on the device clock (LIN_NIL: a host time). */
	uint64_t sdev[LIN_XSEG_MAX] = { 0 };
	enum lin_mark from = order[k]; /* the mark the stretch starts at */
	uint32_t skipped = 0;
	enum lin_how skipped_how = LIN_HOW_NONE;
	for (size_t j = k + 1; j < n; j++) {
		enum lin_mark m = order[j];
		if (!mark_known(l, m)) {
			if (l->m[m].ev == LIN_EV_UNKNOWN) {
				skipped |= 1u << m;
				if (m != LIN_M_CAPTURED && m != LIN_M_SUBMITTED)
					skipped_how = (enum lin_how)l->m[m].how;
			}
			continue;
		}
		uint64_t t = l->m[m].t, tdev = raw[m];
		if (t < front)
			t = front, tdev = fdev;
		if (t > start)
			t = start, tdev = raw[LIN_M_KERNEL_START];
		uint8_t n0 = l->nseg;
		if (m == LIN_M_KERNEL_START) {
			/* Whatever held it after the last mark is not in the trace. */
			enum lin_how why = l->m[LIN_M_DEP_READY].ev == LIN_EV_UNKNOWN
						   ? (enum lin_how)l->m[LIN_M_DEP_READY].how
						   : LIN_HOW_AFTER_DEPENDENCY;
			if ((skipped & ~(1u << LIN_M_SUBMITTED | 1u << LIN_M_DEP_READY)) && skipped_how)
				why = skipped_how;
			/* From the frontier, with no dependency known: a busy device, perhaps. */
			if (why == LIN_HOW_NO_KNOWN_DEPENDENCY && fdev != LIN_NIL &&
			    (from == LIN_M_API_EXIT || from == LIN_M_SUBMITTED)) {
				for (size_t r = 0; r < b->non; r++) {
					if (!b->on[r]->busy)
						continue;
					uint64_t e = b->on[r]->busy(b, l, i, front, fdev, t, &why);
					if (l->nseg > n0)
						sdev[n0++] = fdev;
					front = e;
				}
			}
			lin_x_add_seg(l, front, t, LIN_X_UNRESOLVED, LIN_EV_UNKNOWN, why);
			if (l->nseg > n0)
				sdev[n0] = LIN_NIL; /* unresolved: never withdrawn */
			break;
		}
		enum lin_xcause c = cause_of(m, skipped);
		enum lin_evidence ev = l->m[m].ev;
		enum lin_how how = (enum lin_how)l->m[m].how;
		if (l->m[from].ev == LIN_EV_INFERRED && ev == LIN_EV_OBSERVED) {
			/* As good as the weaker of the two marks that bound it. */
			ev = LIN_EV_INFERRED;
			how = (enum lin_how)l->m[from].how;
		}
		if (c == LIN_X_UNRESOLVED) {
			ev = LIN_EV_UNKNOWN;
			how = skipped_how;
		}
		if (c == LIN_X_THREAD_DELAY || c == LIN_X_API_CALL || c == LIN_X_HANDOFF_WAIT)
			add_thread_seg(b, l, l->proc, tid, front, t, c, ev, how);
		else
			lin_x_add_seg(l, front, t, c, ev, how);
		/* The stretch starts at the front; a descheduled one nested in it at a host time. */
		for (uint8_t q = n0; q < l->nseg; q++)
			sdev[q] = q == n0 ? fdev : LIN_NIL;
		front = t;
		fdev = tdev;
		from = m;
		skipped = 0;
		skipped_how = LIN_HOW_NONE;
	}
	uint64_t best = 0;
	uint8_t d = 0;
	for (uint8_t s = 0; s < l->nseg; s++)
		if (l->seg[s].ns > best) {
			best = l->seg[s].ns;
			d = s;
		}
	if (!best)
		return;
	l->dominant = l->seg[d].cause;
	l->dominant_how = l->seg[d].how;
	l->dominant_state = l->seg[d].state;
	for (size_t r = 0; r < b->non; r++)
		if (b->on[r]->withdraw)
			b->on[r]->withdraw(b, l, i, &l->seg[d], sdev[d]);
}
