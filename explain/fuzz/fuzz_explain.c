/* SPDX-License-Identifier: MIT */
/*
 * fuzz_explain.c - libFuzzer harness: arbitrary bytes as a lineage trace through the
 * validator's joins and the ledger (marks, rules, statements), then all three reports,
 * and the same bytes as a cause-truth file scored against the ledgers (--score); the
 * per-request report (--per-request: shares, splits, time to first token) on the same
 * joins, its residual held to 0 (the split conserves every record's time).
 * Built with -DLIN_BUILD_FUZZ=ON and CC=clang; run by run-explain-fuzz.sh.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "explain.h"
#include "score.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *sink;
	if (!sink)
		sink = fopen("/dev/null", "w");
	struct lin_xopts xo = { .slow_factor = 1.5, .min_samples = 5, .keep_all = true, .per_request = true };
	struct lin_explain *x = lin_explain_create(&xo);
	if (!x)
		return 0;
	struct lin_joiner_opts o = { 0 };
	o.allow_empty = true;
	o.tool = lin_explain_tool(x);
	struct lin_joiner *v = lin_joiner_create(&o);
	if (v) {
		lin_joiner_add_mem(v, "trace", data, size);
		lin_joiner_finish(v);
		if (lin_explain_build(x, v) == 0) {
			lin_explain_report_text(x, sink);
			lin_explain_report_json(x, sink);
			lin_explain_perfetto(x, "/dev/null");
			lin_explain_per_request_text(x, sink);
			lin_explain_per_request_json(x, sink);
			lin_explain_per_request_perfetto(x, "/dev/null");
			if (lin_explain_rq_residual(x) != 0)
				__builtin_trap(); /* requests + unattributed != total */
			/* The same bytes as a cause-truth file, scored against these ledgers. */
			char err[256];
			struct lin_score *s = lin_score_create();
			if (s && lin_score_load_mem(s, "truth", data, size, err, sizeof(err)) == 0 &&
			    lin_score_add(s, x, v) == 0)
				lin_score_report(s, sink, "");
			lin_score_free(s);
		}
		lin_joiner_free(v);
	}
	lin_explain_free(x);
	return 0;
}
