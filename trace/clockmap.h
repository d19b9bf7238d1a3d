/* SPDX-License-Identifier: MIT */
/*
 * clockmap.h - the one device-to-host clock map of a process: every reader of a lineage
 * trace that places device times on the host clock goes through it (lineage-validate and
 * lineage-explain through the validator, lineage-validate --export-otlp, the runtime's OTLP
 * stream, the lineage-trace importer behind --export-perfetto). docs/validator.md, "Clocks",
 * says what it does and why.
 *
 * Pairs come from the trace's clock records (host_ns, device_ns, host_after_ns): the
 * device clock read between two host readings, host_after_ns - host_ns apart (the pair's
 * width: how far off the device reading can be placed; unknown when host_after_ns is nil).
 * A device time between two pairs is interpolated between them (the clocks may run at
 * slightly different rates); before the first pair or after the last it takes the nearest
 * pair's offset, and the two clocks may have drifted apart since by up to
 * LIN_CLOCK_RATE_ERR of the distance to that pair (the widening). The error bound of a
 * placement is the width of the pairs that place it plus that widening; one pair of unknown
 * width makes the bound unknown.
 *
 * Interpolation is exact while the rate between the clocks is constant from one pair to the
 * next. Where it changed (a clock slewed, or stepped), a pair lies off the chord of pairs on
 * either side: lin_cm_finish measures that bend at every interior pair (against its
 * nearest pairs, and against a chord whose short side reaches as far as the long one) and,
 * where it exceeds what the pairs' widths allow, gives it a widening (what one change
 * there could put a placement off by) and a zone of device times it holds for. A device
 * clock that stepped back shows as pairs out of order against the host clock: the pairs
 * split into runs, and a device time read on both sides of a step, or placed across one,
 * has no bound (UINT64_MAX / 4). A pair read twice is one pair. Limits: what no pair shows
 * (a change that reverses within one segment, bends that cancel, a span of two pairs, a
 * change beside only close pairs at the end of the run) is not seen. docs/validator.md,
 * "Clocks".
 *
 * Use: lin_cm_add every pair (in any order), lin_cm_finish (sorts by device time), then
 * map. A map that keeps taking pairs while it is used (the OTLP stream) calls
 * lin_cm_finish after each add; each finish measures all pairs anew (O(n log n)).
 * Context: single-threaded per map. Internal: not part of the public API.
 */
#ifndef LIN_CLOCKMAP_H
#define LIN_CLOCKMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "records.h"

/* The largest relative rate error assumed between the host clock and CUPTI's clock outside
 * the span of the clock pairs: 500 ppm, the most Linux's NTP discipline slews a clock
 * (CUPTI's default clock is CLOCK_REALTIME-based); docs/validator.md, "Clocks". As a
 * divisor: the widening is distance / 2000, rounded up. */
#define LIN_CLOCK_RATE_ERR_DIV 2000u

struct lin_cm_pair {
	uint64_t host_ns, device_ns;
	uint64_t width; /* host_after_ns - host_ns; LIN_NIL: unknown */
	/* The widening a bend at this pair adds to the placement of device times in its zone
	 * [zlo, zhi]; 0 where no bend was seen (lin_cm_finish). */
	uint64_t bend, zlo, zhi;
	uint32_t run; /* the stretch of one device clock it belongs to (steps back split them) */
};

/* Device times read both before and after a step back of the device clock. */
struct lin_cm_span {
	uint64_t lo, hi;
};

/* Steps back kept apart; past that, no placement is bounded. */
#define LIN_CM_MAX_RUNS 32
/* How far (in pairs) lin_cm_map looks for a bend whose zone holds a device time; a zone
 * that reaches further leaves its device times without a bound. */
#define LIN_CM_NEAR 3

struct lin_clockmap {
	struct lin_cm_pair *p; /* sorted by device time (then host time) once finished */
	size_t n, cap;
	uint64_t width;   /* the widest pair's width, ns (valid when width_known) */
	bool width_known; /* a pair of known width was added, and none of unknown width */
	bool width_lost;  /* a pair of unknown width was added: the bound is unknown */
	bool sorted;      /* p[] is in order (no add since the last lin_cm_finish broke it) */
	bool oom;         /* a pair could not be kept */
	size_t bends;     /* interior pairs with a bend beyond their widths */
	size_t runs;      /* stretches of one device clock: 1 + the steps back seen */
	struct lin_cm_span *amb; /* device times without a bound, sorted, apart (namb) */
	size_t namb, camb;
	bool amb_all; /* too many steps, or no memory to keep them: nothing is bounded */
	/* With steps (runs > 1): each run's pairs in device order, run r at rix[roff[r]] up to
	 * rix[roff[r + 1]], and the device times its records may reach, rlo[r]..rhi[r]. */
	size_t *rix;
	bool rix_ok; /* rix and roff are those of the pairs as last finished */
	size_t roff[LIN_CM_MAX_RUNS + 1];
	uint64_t rlo[LIN_CM_MAX_RUNS], rhi[LIN_CM_MAX_RUNS];
};

void lin_cm_init(struct lin_clockmap *m);
void lin_cm_free(struct lin_clockmap *m);
/* Add the pair of a clock record; @host_after_ns LIN_NIL (or before @host_ns): of
 * unknown width (a record whose host_ns or device_ns is nil is no pair: not added).
 * Return: false when out of memory (the pair is lost, oom is set). */
bool lin_cm_add(struct lin_clockmap *m, uint64_t host_ns, uint64_t device_ns, uint64_t host_after_ns);
/* Sort the pairs by device time (nothing to do when they came in order), drop pairs read
 * twice, and measure the steps and bends of all of them. */
void lin_cm_finish(struct lin_clockmap *m);
/* Keep only the @keep pairs latest in device time (a finished map), measured anew: a map
 * that lives as long as its process (the OTLP stream) stays bounded. The width bound is left
 * as it was. */
void lin_cm_trim(struct lin_clockmap *m, size_t keep);
static inline bool lin_cm_empty(const struct lin_clockmap *m) { return m->n == 0; }

/* Was @dev read both before and after a step back of the device clock (a finished map)? */
bool lin_cm_ambiguous(const struct lin_clockmap *m, uint64_t dev);
/* Device time @dev -> host time *@host. *@widen (when not NULL): 0 between two pairs,
 * else the drift allowed for the distance to the nearest pair (LIN_CLOCK_RATE_ERR).
 * Return: false when there is no pair, @dev is LIN_NIL, the map is not finished, or
 * the time falls outside the host clock's range. */
bool lin_cm_to_host(const struct lin_clockmap *m, uint64_t dev, uint64_t *host, uint64_t *widen);
/* The error bound of a placement widened by @widen: the widest pair's width plus @widen
 * (saturating at UINT64_MAX / 4); LIN_NIL when the width is not known. */
uint64_t lin_cm_err(const struct lin_clockmap *m, uint64_t widen);
/* lin_cm_to_host and the error bound of that placement: the width of the pairs it is placed
 * by (between two: the wider of them, plus the widening of a bend beside the segment;
 * outside the span: the nearest's, plus the widening), LIN_NIL when one of them has no
 * known width. A pair preempted between its reads so widens only the times placed by it,
 * not the whole run's. */
bool lin_cm_map(const struct lin_clockmap *m, uint64_t dev, uint64_t *host, uint64_t *err);
/* The inverse: host time @host -> device time *@dev by the same pairs (interpolated between
 * the two around it, else the nearest pair's offset), for a writer that puts host times on
 * the device clock. Return: false as lin_cm_to_host. */
bool lin_cm_to_device(const struct lin_clockmap *m, uint64_t host, uint64_t *dev);

#endif
