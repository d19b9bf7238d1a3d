/* SPDX-License-Identifier: MIT */
/*
 * test_clockmap.c - the device-to-host clock map (trace/clockmap.h) every reader places
 * device times with: interpolation between pairs, the nearest pair's offset outside them
 * widened by LIN_CLOCK_RATE_ERR, the error bound (the widest pair, unknown once a pair of
 * unknown width is read), pairs in any order, the inverse, trimming; and the validator's
 * placement is the map's.
 */
#include <stdio.h>
#include <stdlib.h>

#include <msgpack.h>

#include "clockmap.h"
#include "lin_test.h"
#include "tracefmt.h"
#include "join.h"
#include "jstate.h"

static uint64_t to_host(const struct lin_clockmap *m, uint64_t dev, uint64_t *widen)
{
	uint64_t h = 0;
	cr_assert(lin_cm_to_host(m, dev, &h, widen), "no mapping for %llu", (unsigned long long)dev);
	return h;
}

/* Place device time @dev, read at host time @truth: its bound holds the truth. Return how
 * far off it was placed. */
static uint64_t held(const struct lin_clockmap *m, uint64_t dev, uint64_t truth, const char *what)
{
	uint64_t h, err;
	cr_assert(lin_cm_map(m, dev, &h, &err), "%s: no mapping", what);
	uint64_t off = h > truth ? h - truth : truth - h;
	cr_assert_leq(off, err, "%s, read at host %llu (device %llu): placed %llu, bound %llu",
		      what, (unsigned long long)truth, (unsigned long long)dev,
		      (unsigned long long)h, (unsigned long long)err);
	return off;
}

Test(clockmap, between_two_pairs_the_time_is_interpolated)
{
	struct lin_clockmap m;
	lin_cm_init(&m);
	/* The device clock runs 20 % fast between these pairs, and starts 1000 ns ahead. */
	cr_assert(lin_cm_add(&m, 0, 1000, 10));
	cr_assert(lin_cm_add(&m, 1000000, 1201000, 1000020));
	lin_cm_finish(&m);
	uint64_t w = 99;
	cr_assert_eq(to_host(&m, 1000, &w), 0);
	cr_assert_eq(w, 0);
	cr_assert_eq(to_host(&m, 601000, &w), 500000, "half way in device time is half way in host time");
	cr_assert_eq(w, 0, "no widening between two pairs");
	cr_assert_eq(to_host(&m, 121000, NULL), 100000);
	/* The bound: the widest pair's width (20), nothing more inside the span. */
	uint64_t h, err;
	cr_assert(lin_cm_map(&m, 601000, &h, &err));
	cr_assert_eq(h, 500000);
	cr_assert_eq(err, 20);
	lin_cm_free(&m);
}

Test(clockmap, outside_the_pairs_the_nearest_offset_is_widened_by_the_rate_error)
{
	struct lin_clockmap m;
	lin_cm_init(&m);
	cr_assert(lin_cm_add(&m, 1000000, 1001000, 1000100));
	cr_assert(lin_cm_add(&m, 2000000, 2002000, 2000100));
	lin_cm_finish(&m);
	uint64_t w;
	/* After the last pair: its offset (2000), widened by distance / 2000, rounded up. */
	cr_assert_eq(to_host(&m, 2002000 + 4000, &w), 2000000 + 4000);
	cr_assert_eq(w, 2);
	cr_assert_eq(to_host(&m, 2002000 + 4001, &w), 2000000 + 4001);
	cr_assert_eq(w, 3);
	/* Before the first: the first pair's offset (1000). */
	cr_assert_eq(to_host(&m, 1001000 - 10000, &w), 1000000 - 10000);
	cr_assert_eq(w, 5);
	uint64_t h, err;
	cr_assert(lin_cm_map(&m, 1001000 - 10000, &h, &err));
	cr_assert_eq(err, 100 + 5, "the widest width plus the widening");
	/* One pair only: every time is outside the span. */
	struct lin_clockmap one;
	lin_cm_init(&one);
	cr_assert(lin_cm_add(&one, 500, 700, 500));
	lin_cm_finish(&one);
	cr_assert_eq(to_host(&one, 700 + 20000, &w), 500 + 20000);
	cr_assert_eq(w, 10);
	cr_assert(lin_cm_map(&one, 700, &h, &err));
	cr_assert_eq(err, 0, "an exact pair, read at its own time");
	/* Times the host clock cannot hold are no mapping, not a wrapped time. */
	cr_assert_not(lin_cm_to_host(&one, 100, &h, &w), "before host time 0");
	cr_assert_not(lin_cm_to_host(&one, LIN_NIL, &h, &w));
	lin_cm_free(&one);
	lin_cm_free(&m);
}

/* A pair preempted between its reads widens the bound of the times it places, and of no
 * other: with the run's widest width, one such pair would leave every call of the run
 * undecided. */
Test(clockmap, a_wide_pair_widens_only_the_times_it_places)
{
	struct lin_clockmap m;
	lin_cm_init(&m);
	cr_assert(lin_cm_add(&m, 0, 0, 40));
	cr_assert(lin_cm_add(&m, 1000000, 1000000, 1000040));
	cr_assert(lin_cm_add(&m, 2000000, 2000000, 2050000)); /* 50 us wide */
	cr_assert(lin_cm_add(&m, 3000000, 3000000, 3000040));
	lin_cm_finish(&m);
	uint64_t h, err;
	cr_assert(lin_cm_map(&m, 500000, &h, &err));
	cr_assert_eq(err, 40, "between two narrow pairs");
	cr_assert(lin_cm_map(&m, 1500000, &h, &err));
	cr_assert_eq(err, 50000, "next to the wide one: its width");
	cr_assert(lin_cm_map(&m, 2500000, &h, &err));
	cr_assert_eq(err, 50000);
	cr_assert(lin_cm_map(&m, 3000000 + 4000, &h, &err));
	cr_assert_eq(err, 40 + 2, "after the last: its own width and the widening");
	cr_assert_eq(lin_cm_err(&m, 0), 50000, "the run's widest, for what needs one bound");
	lin_cm_free(&m);
}

Test(clockmap, a_pair_of_unknown_width_makes_the_bound_unknown)
{
	struct lin_clockmap m;
	lin_cm_init(&m);
	cr_assert_not(m.width_known);
	cr_assert_eq(lin_cm_err(&m, 0), LIN_NIL, "no pair: no bound");
	cr_assert(lin_cm_add(&m, 0, 0, 30));
	cr_assert(lin_cm_add(&m, 1000, 1000, 1050));
	cr_assert(m.width_known);
	cr_assert_eq(m.width, 50, "the widest pair");
	cr_assert(lin_cm_add(&m, 2000, 2000, LIN_NIL)); /* host_after_ns nil */
	cr_assert_not(m.width_known);
	cr_assert(m.width_lost);
	cr_assert(lin_cm_add(&m, 3000, 3000, 3001)); /* a known width later does not restore it */
	cr_assert_not(m.width_known);
	lin_cm_finish(&m);
	uint64_t h, err;
	cr_assert(lin_cm_map(&m, 1500, &h, &err), "the pair still maps");
	cr_assert_eq(h, 1500);
	cr_assert_eq(err, LIN_NIL);
	/* host_after_ns before host_ns: unknown too. */
	struct lin_clockmap b;
	lin_cm_init(&b);
	cr_assert(lin_cm_add(&b, 100, 100, 99));
	cr_assert_not(b.width_known);
	cr_assert(b.width_lost);
	lin_cm_free(&b);
	lin_cm_free(&m);
}

Test(clockmap, pairs_in_any_order_map_as_sorted_once_finished)
{
	static const uint64_t p[][3] = { { 3000000, 3000900, 3000010 },
					 { 0, 0, 5 },
					 { 2000000, 2000600, 2000005 },
					 { 1000000, 1000300, 1000020 } };
	struct lin_clockmap a, s;
	lin_cm_init(&a);
	lin_cm_init(&s);
	for (int i = 0; i < 4; i++)
		cr_assert(lin_cm_add(&a, p[i][0], p[i][1], p[i][2]));
	cr_assert_not(a.sorted);
	uint64_t h, w;
	cr_assert_not(lin_cm_to_host(&a, 1500, &h, &w), "not finished: no lookup on unsorted pairs");
	lin_cm_finish(&a);
	cr_assert(a.sorted);
	static const int order[] = { 1, 3, 2, 0 };
	for (int i = 0; i < 4; i++)
		cr_assert(lin_cm_add(&s, p[order[i]][0], p[order[i]][1], p[order[i]][2]));
	cr_assert(s.sorted, "pairs in device order need no sort");
	lin_cm_finish(&s);
	for (uint64_t d = 0; d < 4000000; d += 99991) {
		uint64_t ha, wa, hs, ws;
		cr_assert(lin_cm_to_host(&a, d, &ha, &wa));
		cr_assert(lin_cm_to_host(&s, d, &hs, &ws));
		cr_assert_eq(ha, hs);
		cr_assert_eq(wa, ws);
	}
	cr_assert_eq(to_host(&a, 1500450, NULL), 1500000);
	cr_assert_eq(a.width, 20);
	lin_cm_free(&a);
	lin_cm_free(&s);
}

Test(clockmap, the_inverse_takes_host_times_back_to_the_device_clock)
{
	struct lin_clockmap m;
	lin_cm_init(&m);
	cr_assert(lin_cm_add(&m, 1000, 5000, 1000));
	cr_assert(lin_cm_add(&m, 11000, 15010, 11000));
	lin_cm_finish(&m);
	uint64_t d;
	cr_assert(lin_cm_to_device(&m, 6000, &d));
	cr_assert_eq(d, 10005, "interpolated");
	cr_assert(lin_cm_to_device(&m, 21000, &d));
	cr_assert_eq(d, 25010, "after the last: its offset");
	cr_assert(lin_cm_to_device(&m, 0, &d));
	cr_assert_eq(d, 4000, "before the first: its offset");
	for (uint64_t h = 0; h < 30000; h += 777) {
		uint64_t back;
		cr_assert(lin_cm_to_device(&m, h, &d));
		cr_assert(lin_cm_to_host(&m, d, &back, NULL));
		cr_assert(back + 1 >= h && back <= h + 1, "host %llu -> %llu -> %llu",
			  (unsigned long long)h, (unsigned long long)d, (unsigned long long)back);
	}
	lin_cm_free(&m);
}

Test(clockmap, trimming_keeps_the_latest_pairs)
{
	struct lin_clockmap m;
	lin_cm_init(&m);
	for (uint64_t i = 0; i < 10; i++)
		cr_assert(lin_cm_add(&m, i * 1000, i * 1001, i * 1000 + 7));
	lin_cm_finish(&m);
	lin_cm_trim(&m, 4);
	cr_assert_eq(m.n, 4);
	cr_assert_eq(m.p[0].host_ns, 6000);
	cr_assert_eq(m.width, 7, "the bound is kept");
	uint64_t w;
	cr_assert_eq(to_host(&m, 6006 + 7007 - 6006, &w), 7000, "still interpolated among the kept");
	cr_assert_eq(w, 0);
	cr_assert_eq(to_host(&m, 5005, &w), 5005 - 6006 + 6000, "before them: extrapolated");
	cr_assert_eq(w, 1);
	lin_cm_free(&m);
}

/* Host time of device time @x under a clock that runs at rate 1 until @t, then @r. */
static uint64_t slewed(uint64_t x, uint64_t t, double r)
{
	return x <= t ? x : t + (uint64_t)((double)(x - t) * r + 0.5);
}

/* The rate changes inside a segment: interpolation is off there, the pair after the change
 * lies off its neighbours' chord, and the bound of the segments beside it covers the error. */
Test(clockmap, a_rate_change_between_pairs_widens_the_segments_beside_its_bend)
{
	static const uint64_t changes[] = { 1000000, 1250000, 1500000, 1999000, 2500000 };
	for (size_t k = 0; k < sizeof(changes) / sizeof(*changes); k++) {
		uint64_t t = changes[k];
		struct lin_clockmap m;
		lin_cm_init(&m);
		for (uint64_t i = 0; i <= 4; i++) {
			uint64_t d = i * 1000000;
			cr_assert(lin_cm_add(&m, slewed(d, t, 1.001), d, slewed(d, t, 1.001) + 50));
		}
		lin_cm_finish(&m);
		cr_assert_geq(m.bends, 1, "change at %llu: a bend", (unsigned long long)t);
		uint64_t worst = 0;
		char what[64];
		snprintf(what, sizeof(what), "change at %llu", (unsigned long long)t);
		for (uint64_t d = 0; d <= 4000000; d += 1000) {
			uint64_t off = held(&m, d, slewed(d, t, 1.001), what);
			worst = off > worst ? off : worst;
		}
		if (t % 1000000 >= 250000 && t % 1000000 <= 750000)
			cr_assert_gt(worst, 50, "the interpolation is off by more than the widths");
		lin_cm_free(&m);
	}
}

/* A constant rate (200 ppm apart) read through pairs whose device reading fell anywhere in
 * their width bends nothing: the bound stays the pairs' width. */
Test(clockmap, a_constant_rate_read_within_the_widths_bends_nothing)
{
	static const uint64_t jitter[] = { 0, 40, 7, 33, 0, 40, 21, 3, 39 };
	struct lin_clockmap m;
	lin_cm_init(&m);
	for (uint64_t i = 0; i < 9; i++) {
		uint64_t d = i * 1000000, h = d + d / 5000;
		/* The device was read jitter ns after the first host read. */
		cr_assert(lin_cm_add(&m, h - jitter[i], d, h - jitter[i] + 40));
	}
	lin_cm_finish(&m);
	cr_assert_eq(m.bends, 0);
	for (size_t i = 0; i < m.n; i++)
		cr_assert_eq(m.p[i].bend, 0);
	uint64_t h, err;
	cr_assert(lin_cm_map(&m, 4500000, &h, &err));
	cr_assert_eq(err, 40);
	lin_cm_free(&m);
}

/* Pairs added one at a time, finished after each (the OTLP stream), bend as a whole run
 * does; trimming forgets the bends of the pairs it drops. */
Test(clockmap, bends_measured_as_pairs_arrive_are_the_whole_runs)
{
	struct lin_clockmap a, s;
	lin_cm_init(&a);
	lin_cm_init(&s);
	for (uint64_t i = 0; i < 12; i++) {
		uint64_t d = i * 1000000, h = i == 5 || i == 9 ? d + 5000 : d;
		cr_assert(lin_cm_add(&a, h, d, h + 30));
		cr_assert(lin_cm_add(&s, h, d, h + 30));
		lin_cm_finish(&s);
	}
	lin_cm_finish(&a);
	cr_assert_eq(a.bends, 6, "two displaced pairs bend themselves and both neighbours");
	cr_assert_eq(s.bends, a.bends);
	for (size_t i = 0; i < a.n; i++) {
		cr_assert_eq(s.p[i].bend, a.p[i].bend, "pair %zu", i);
		cr_assert_eq(s.p[i].zlo, a.p[i].zlo, "pair %zu", i);
		cr_assert_eq(s.p[i].zhi, a.p[i].zhi, "pair %zu", i);
	}
	lin_cm_trim(&s, 4);
	cr_assert_eq(s.bends, 2, "the kept pairs 8..11, measured anew: 9 and 10 bend (8 is the first)");
	lin_cm_free(&a);
	lin_cm_free(&s);
}

/* Device time at host time @x for a device clock equal to the host clock until host time
 * @t, then @back ns behind it (a step back: CUPTI's clock is CLOCK_REALTIME). */
static uint64_t stepped(uint64_t x, uint64_t t, uint64_t back)
{
	return x < t ? x + 10000000 : x + 10000000 - back;
}

/* A step back of the device clock, of less than the pairs' spacing (the pairs stay in
 * order: a bend at the pairs beside it) and of more (the pairs' order turns: runs), at
 * several places: every placement's bound holds the host time the device time was read at,
 * including device times read twice (before and after the step). */
Test(clockmap, a_step_back_of_the_device_clock_is_held_in_the_bound)
{
	static const uint64_t back[] = { 300000, 500000, 1500000, 2500000 };
	/* At 0.3 ms, a device time read after a step of 0.5 ms lies before the first pair's. */
	static const uint64_t at[] = { 300000, 1300000, 2300000, 2900000, 4600000, 5700000 };
	for (size_t i = 0; i < 4; i++)
		for (size_t j = 0; j < 6; j++) {
			struct lin_clockmap m;
			lin_cm_init(&m);
			/* Host times from 5 ms: a device time read after the step may lie
			 * before the first pair's, and still on the host clock. */
			for (uint64_t k = 0; k <= 6; k++) {
				uint64_t h = 5000000 + k * 1000000;
				cr_assert(lin_cm_add(&m, h, stepped(h, 5000000 + at[j], back[i]), h + 50));
			}
			lin_cm_finish(&m);
			cr_assert(m.bends || m.runs > 1, "back %llu at %llu: seen",
				  (unsigned long long)back[i], (unsigned long long)at[j]);
			char what[64];
			snprintf(what, sizeof(what), "back %llu at %llu",
				 (unsigned long long)back[i], (unsigned long long)at[j]);
			for (uint64_t x = 5000000; x <= 11000000; x += 1000)
				held(&m, stepped(x, 5000000 + at[j], back[i]), x, what);
			lin_cm_free(&m);
		}
}

/* Pairs out of device order by more than their widths split into runs; a device time read
 * on both sides of the step has no bound; one read on one side only keeps its own. */
Test(clockmap, device_times_read_on_both_sides_of_a_step_have_no_bound)
{
	struct lin_clockmap m;
	lin_cm_init(&m);
	/* Device = host until host 2.1 ms, then 1.5 ms behind. */
	static const uint64_t p[][2] = { { 0, 0 },
					 { 1000000, 1000000 },
					 { 2000000, 2000000 },
					 { 3000000, 1500000 },
					 { 4000000, 2500000 } };
	for (int i = 0; i < 5; i++)
		cr_assert(lin_cm_add(&m, p[i][0], p[i][1], p[i][0] + 40));
	lin_cm_finish(&m);
	cr_assert_eq(m.runs, 2);
	uint64_t h, err;
	cr_assert(lin_cm_ambiguous(&m, 1700000), "read at host 1.7 and 3.2 ms");
	cr_assert(lin_cm_map(&m, 1700000, &h, &err));
	cr_assert_eq(err, UINT64_MAX / 4);
	cr_assert_not(lin_cm_ambiguous(&m, 200000), "before the step only");
	cr_assert(lin_cm_map(&m, 200000, &h, &err));
	cr_assert_eq(h, 200000);
	cr_assert_eq(err, 40);
	cr_assert_not(lin_cm_ambiguous(&m, 3600000), "after the step only");
	cr_assert(lin_cm_map(&m, 3600000, &h, &err));
	cr_assert_eq(h, 5100000);
	/* Silent: the same pairs on a steady clock. */
	struct lin_clockmap s;
	lin_cm_init(&s);
	for (uint64_t i = 0; i < 5; i++)
		cr_assert(lin_cm_add(&s, i * 1000000, i * 1000000, i * 1000000 + 40));
	lin_cm_finish(&s);
	cr_assert_eq(s.runs, 1);
	cr_assert_eq(s.namb, 0);
	cr_assert_not(lin_cm_ambiguous(&s, 1700000));
	cr_assert(lin_cm_map(&s, 1700000, &h, &err));
	cr_assert_eq(err, 40);
	lin_cm_free(&s);
	lin_cm_free(&m);
}

/* Device time at host time @h: the host clock until 1.25 s, then 499 ms behind it, and
 * from 2.25 s 999.5 ms behind (two steps back; review 27, round 2). */
static uint64_t two_steps(uint64_t h)
{
	return h < 1250000000u ? h : h < 2250000000u ? h - 499000000u : h - 999500000u;
}

/* The second step splits the pairs into runs; the first, within run 0, still bends its
 * pairs (the bends are measured run by run, not across the runs' interleaved pairs), and
 * every placement inside the pairs' span keeps the host time it was read at in its bound
 * (or has none). A time read once places by its own run's pairs, not by another run's that
 * happen to lie nearer in device time. */
Test(clockmap, two_steps_back_each_held_in_the_bound)
{
	struct lin_clockmap m;
	lin_cm_init(&m);
	for (uint64_t h = 1000000000u; h <= 3500000000u; h += 500000000u)
		cr_assert(lin_cm_add(&m, h, two_steps(h), h + 1000));
	lin_cm_finish(&m);
	cr_assert_eq(m.runs, 2);
	cr_assert_geq(m.bends, 1, "the first step bends run 0");
	for (uint64_t x = 1000000000u; x <= 3500000000u; x += 1000000)
		held(&m, two_steps(x), x, "two steps");
	lin_cm_free(&m);
}

/* Between two pairs whose host times run back (within their widths: no step), the time is
 * placed from the first by its offset, and keeps the drift widening of that placement. */
Test(clockmap, between_pairs_out_of_host_order_the_drift_widening_stays)
{
	struct lin_clockmap m;
	lin_cm_init(&m);
	cr_assert(lin_cm_add(&m, 1000000, 0, 1000050));
	cr_assert(lin_cm_add(&m, 999990, 1000000, 1000040));
	lin_cm_finish(&m);
	cr_assert_eq(m.runs, 1);
	uint64_t h, err, w;
	cr_assert(lin_cm_to_host(&m, 400000, &h, &w));
	cr_assert_eq(h, 1400000, "the first pair's offset");
	cr_assert_eq(w, 200);
	cr_assert(lin_cm_map(&m, 400000, &h, &err));
	cr_assert_eq(err, 50 + 200);
	lin_cm_free(&m);
}

/* Before the first pair, a bend whose zone holds the time adds to the drift widening (it
 * replaced it). */
Test(clockmap, outside_the_span_a_bend_adds_to_the_drift)
{
	struct lin_clockmap m;
	lin_cm_init(&m);
	cr_assert(lin_cm_add(&m, 10000000, 10000000, 10000050));
	cr_assert(lin_cm_add(&m, 11000000, 11000000, 11000050));
	cr_assert(lin_cm_add(&m, 12000000, 12500000, 12000050)); /* 0.5 ms jump: a bend at 2 */
	lin_cm_finish(&m);
	cr_assert_eq(m.bends, 1);
	uint64_t h, err, w;
	cr_assert(lin_cm_to_host(&m, 9800000, &h, &w));
	cr_assert_eq(w, 100, "0.2 ms before the first pair: 500 ppm of it");
	cr_assert(lin_cm_map(&m, 9800000, &h, &err));
	cr_assert_eq(err, 50 + 100 + m.p[1].bend);
	lin_cm_free(&m);
}

/* A pair read twice (the same file given twice) is one pair: it neither hides a bend nor
 * makes one. */
Test(clockmap, a_pair_read_twice_is_one_pair)
{
	struct lin_clockmap once, twice;
	lin_cm_init(&once);
	lin_cm_init(&twice);
	static const uint64_t p[][2] = { { 1000000, 1000000 }, { 2000000, 2000000 }, { 3000000, 3000400 } };
	for (int i = 0; i < 3; i++) {
		cr_assert(lin_cm_add(&once, p[i][0], p[i][1], p[i][0] + 100));
		for (int k = 0; k < (i == 1 ? 2 : 1); k++)
			cr_assert(lin_cm_add(&twice, p[i][0], p[i][1], p[i][0] + 100));
	}
	lin_cm_finish(&once);
	lin_cm_finish(&twice);
	cr_assert_eq(twice.n, 3);
	cr_assert_eq(once.bends, 1, "pair 2 is 200 ns off the chord, beyond the widths");
	cr_assert_eq(twice.bends, 1);
	uint64_t h1, e1, h2, e2;
	cr_assert(lin_cm_map(&once, 1500000, &h1, &e1));
	cr_assert(lin_cm_map(&twice, 1500000, &h2, &e2));
	cr_assert_eq(h1, h2);
	cr_assert_eq(e1, e2);
	cr_assert_gt(e1, 100);
	lin_cm_free(&once);
	lin_cm_free(&twice);
}

/* The validator places a device time where the map does, with the map's bound. */
Test(clockmap, the_validator_maps_through_it)
{
	msgpack_sbuffer sb;
	msgpack_packer pk;
	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	struct lin_tf_header hd = {
		LIN_TRACE_FORMAT_NAME, "t", "h", 1, 0, "tsc", 1e9, 5, "none", "ok", NULL
	};
	lin_tf_header(&pk, &hd);
	struct lin_clockmap m;
	lin_cm_init(&m);
	static const uint64_t p[][3] = { { 2000000, 2000900, 2000040 },
					 { 1000, 1000, 1010 },
					 { 1000000, 1000300, 1000020 } };
	for (int i = 0; i < 3; i++) {
		lin_tf_clock(&pk, p[i][0], p[i][1], p[i][2]);
		cr_assert(lin_cm_add(&m, p[i][0], p[i][1], p[i][2]));
	}
	lin_cm_finish(&m);
	lin_tf_trace_end(&pk, 3000000, 0);
	struct lin_joiner_opts vo = { 0 };
	vo.allow_empty = true;
	struct lin_joiner *v = lin_joiner_create(&vo);
	cr_assert_not_null(v);
	cr_assert_eq(lin_joiner_add_mem(v, "trace", sb.data, sb.size), 0);
	msgpack_sbuffer_destroy(&sb);
	lin_joiner_finish(v);
	for (uint64_t d = 0; d < 3000000; d += 12345) {
		uint64_t vh, ve, mh, me;
		cr_assert(lin_joiner_dev_to_host(v, 0, d, &vh, &ve));
		cr_assert(lin_cm_map(&m, d, &mh, &me));
		cr_assert_eq(vh, mh, "at device %llu", (unsigned long long)d);
		cr_assert_eq(ve, me, "at device %llu", (unsigned long long)d);
	}
	lin_joiner_free(v);
	lin_cm_free(&m);
	LIN_TEST_CHECK_LEAKS();
}
