/* SPDX-License-Identifier: MIT */
/*
 * fuzz_explain.c - libFuzzer harness: arbitrary bytes as a lineage trace through the
 * validator's joins and the ledger (marks, rules, statements), then all three reports.
 * Built with -DLIN_BUILD_FUZZ=ON and CC=clang; run by run-explain-fuzz.sh.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "explain.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *sink;
	if (!sink)
		sink = fopen("/dev/null", "w");
	struct lin_xopts xo = { 0, 1.5, 5, 0, false, 0, true };
	struct lin_explain *x = lin_explain_create(&xo);
	if (!x)
		return 0;
	struct lin_vopts o = { 0 };
	o.allow_empty = true;
	lin_explain_hook(x, &o);
	struct lin_validator *v = lin_validator_create(&o);
	if (v) {
		lin_validator_add_mem(v, "trace", data, size);
		lin_validator_finish(v);
		if (lin_explain_build(x, v) == 0) {
			lin_explain_report_text(x, sink);
			lin_explain_report_json(x, sink);
			lin_explain_perfetto(x, "/dev/null");
		}
		lin_validator_free(v);
	}
	lin_explain_free(x);
	return 0;
}
