/* SPDX-License-Identifier: MIT */
/*
 * LTTng-UST tracepoint provider for lineage-bench's peer_lttng_ust case: one event with the
 * fields of lineage's launch record (struct lin_event in lineage/rt.h, LIN_REC_LAUNCH):
 * epoch id, version, bracket depth, whether the epoch was pushed, and the kernel name as a
 * pointer (lineage too stores the pointer and interns the string on its writer thread).
 * LTTng timestamps each event itself; the thread id comes from the vtid context, which the
 * bench adds to the channel (lineage's per-thread buffers carry it implicitly).
 *
 * Built into a separate module (liblineage-bench-lttng-tp.so, linked with liblttng-ust) that
 * the bench dlopens only inside the LTTng case, so liblttng-ust never loads into the rest of
 * the run (LTTNG_UST_TRACEPOINT_PROBE_DYNAMIC_LINKAGE on the caller's side).
 */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER lineage_bench

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "./lttng_tp.h"

#if !defined(LIN_BENCH_LTTNG_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define LIN_BENCH_LTTNG_TP_H

#include <stdint.h>
#include <lttng/tracepoint.h>

LTTNG_UST_TRACEPOINT_EVENT(
	lineage_bench, launch,
	LTTNG_UST_TP_ARGS(uint64_t, epoch, uint32_t, version, uint16_t, depth, uint8_t, pushed,
			  const char *, name),
	LTTNG_UST_TP_FIELDS(lttng_ust_field_integer(uint64_t, epoch, epoch) lttng_ust_field_integer(
		uint32_t, version, version) lttng_ust_field_integer(uint16_t, depth, depth)
				    lttng_ust_field_integer(uint8_t, pushed, pushed)
					    lttng_ust_field_integer_hex(uintptr_t, name, (uintptr_t)name)))

#endif /* LIN_BENCH_LTTNG_TP_H */

#include <lttng/tracepoint-event.h>
