/* SPDX-License-Identifier: MIT */
/*
 * fuzz_validate.c - libFuzzer harness: arbitrary bytes through the reader, the joins, the
 * truth comparison and both reports. Built with -DLIN_BUILD_FUZZ=ON and CC=clang; run by
 * run-fuzz.sh.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "join.h"
#include "report.h"
#include "truth.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *sink;
	if (!sink)
		sink = fopen("/dev/null", "w");
	struct lin_truth *t = lin_truth_create();
	if (!t)
		return 0;
	struct lin_joiner_opts o = { .max_findings = 16, .judge = lin_truth_judge(t) };
	struct lin_joiner *v = lin_joiner_create(&o);
	if (!v) {
		lin_truth_free(t);
		return 0;
	}
	/* The same bytes as a truth file and as a trace, so both paths see them. */
	lin_joiner_add_truth_mem(v, "truth", data, size);
	lin_joiner_add_mem(v, "trace", data, size);
	lin_joiner_finish(v);
	lin_validator_report_json(v, sink);
	lin_validator_report_text(v, sink);
	(void)lin_joiner_exit_code(v);
	lin_joiner_free(v);
	lin_truth_free(t);
	return 0;
}
