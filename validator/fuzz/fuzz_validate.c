/* SPDX-License-Identifier: MIT */
/*
 * fuzz_validate.c - libFuzzer harness: arbitrary bytes through the reader, the joins, the
 * truth comparison and both reports. Built with -DLIN_BUILD_FUZZ=ON and CC=clang; run by
 * run-fuzz.sh.
 *
 * An input that begins with 'T' and a 4-byte little-endian length N (at most what follows)
 * is a truth file of those N bytes and a trace of the rest, so labels and GPU records meet
 * and the comparison itself runs (run-fuzz.sh seeds such pairs from the fixtures). Any other
 * input is given both as a truth file and as a trace: the reader refuses one of the two.
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
	const uint8_t *truth = data, *trace = data;
	size_t ntruth = size, ntrace = size;
	if (size >= 5 && data[0] == 'T') {
		size_t n = (size_t)data[1] | (size_t)data[2] << 8 | (size_t)data[3] << 16 |
			   (size_t)data[4] << 24;
		if (n <= size - 5) {
			truth = data + 5;
			ntruth = n;
			trace = truth + n;
			ntrace = size - 5 - n;
		}
	}
	struct lin_truth *t = lin_truth_create();
	if (!t)
		return 0;
	struct lin_joiner_opts o = { .max_findings = 16, .judge = lin_truth_judge(t) };
	struct lin_joiner *v = lin_joiner_create(&o);
	if (!v) {
		lin_truth_free(t);
		return 0;
	}
	lin_joiner_add_truth_mem(v, "truth", truth, ntruth);
	lin_joiner_add_mem(v, "trace", trace, ntrace);
	lin_joiner_finish(v);
	lin_validator_report_json(v, sink);
	lin_validator_report_text(v, sink);
	(void)lin_joiner_exit_code(v);
	lin_joiner_free(v);
	lin_truth_free(t);
	return 0;
}
