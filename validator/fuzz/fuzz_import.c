/* SPDX-License-Identifier: MIT */
/*
 * fuzz_import.c - libFuzzer harness for the trace-event JSON reader (Kineto): arbitrary
 * bytes through the streaming reader, the joins, the Perfetto export and both reports;
 * the same bytes through the decimal time conversion. Built with -DLIN_BUILD_FUZZ=ON and
 * CC=clang; run by run-import-fuzz.sh.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "imp.h"
#include "join.h"
#include "report.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The decimal time conversion: a number that converts converts to the same value with
 * "e0" appended (when it has no exponent) and with a leading zero (when it starts with a
 * digit): the parser reads the digits, not a double. */
static void decimal(const uint8_t *data, size_t size)
{
	int64_t ns, again;
	if (size > 64 || !lin_imp_us_to_ns((const char *)data, size, &ns))
		return;
	char buf[80];
	if (!memchr(data, 'e', size) && !memchr(data, 'E', size)) {
		memcpy(buf, data, size);
		memcpy(buf + size, "e0", 2);
		if (!lin_imp_us_to_ns(buf, size + 2, &again) || again != ns)
			abort();
	}
	if (data[0] >= '0' && data[0] <= '9') {
		buf[0] = '0';
		memcpy(buf + 1, data, size);
		if (!lin_imp_us_to_ns(buf, size + 1, &again) || again != ns)
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *sink;
	if (!sink)
		sink = fopen("/dev/null", "w");
	decimal(data, size);
	struct lin_joiner_opts o = { 16 };
	struct lin_joiner *v = lin_joiner_create(&o);
	if (!v)
		return 0;
	struct lin_jfile *f = calloc(1, sizeof(*f));
	struct lin_imp m;
	memset(&m, 0, sizeof(m));
	if (f) {
		(void)lin_imp_kineto_mem(&m, data, size, f);
		lin_imp_join(v, &m, 0);
		lin_imp_meta_sort(&m);
		(void)lin_imp_perfetto(&m, "/dev/null");
	}
	lin_imp_free(&m);
	free(f);
	lin_joiner_finish(v);
	lin_validator_report_json(v, sink);
	lin_validator_report_text(v, sink);
	(void)lin_joiner_exit_code(v);
	lin_joiner_free(v);
	return 0;
}
