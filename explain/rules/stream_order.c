/* SPDX-License-Identifier: MIT */
/*
 * stream_order.c - the stream_order rule (docs/ledger.md, "Rules"): a record is ready no
 * earlier than the end of the GPU record before it on the same (process, device, context,
 * stream), by start time. The predecessors are the shared index's (index.c: every ledger's
 * pred_end is filled from them whether or not this row is on). Graph replays' kernels and
 * records without a stream never reach it (marks.c); a predecessor that ended after the
 * record started is no bound (overlapping_predecessor, marks.c).
 */
#include "rule.h"

static size_t stream_bound(const struct lin_xbuild *b, size_t i) { return b->pred[i]; }

const struct lin_xrule lin_xrule_stream_order = {
	.name = "stream_order",
	.without = LIN_XW_STREAM_ORDER,
	.how = LIN_HOW_STREAM_ORDER,
	.bound = stream_bound,
};
