/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer harness for the W3C Trace Context headers a serving process receives from the
 * network: traceparent and tracestate parsing, the lin member, extract, and the tracestate
 * update. The input is "traceparent\ntracestate". Whatever the bytes: no crash, no read
 * past a header, and what parses formats back to itself; an update of a valid tracestate
 * is itself valid and within the specification's limits.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <lineage.h>
#include <lineage/w3c.h>

#define HDR_MAX 1024 /* longer than any valid header: exercises limits */

/* Split @data at the first newline into two NUL-terminated header values. */
static void split(const uint8_t *data, size_t size, char *tp, char *ts)
{
	const uint8_t *nl = memchr(data, '\n', size);
	size_t a = nl ? (size_t)(nl - data) : size;
	size_t b = nl ? size - a - 1 : 0;
	if (a >= HDR_MAX)
		a = HDR_MAX - 1;
	if (b >= HDR_MAX)
		b = HDR_MAX - 1;
	memcpy(tp, data, a);
	tp[a] = 0;
	if (nl)
		memcpy(ts, nl + 1, b);
	ts[b] = 0;
}

static void check_traceparent(const char *s)
{
	struct lin_w3c_traceparent tp, again;
	if (lin_w3c_traceparent_parse(s, &tp) != 0)
		return;
	char buf[LIN_W3C_TRACEPARENT_MAX];
	if (lin_w3c_traceparent_format(&tp, buf, sizeof(buf)) != 0 ||
	    lin_w3c_traceparent_parse(buf, &again) != 0 || memcmp(again.trace_id, tp.trace_id, 16) ||
	    memcmp(again.parent_id, tp.parent_id, 8) || again.flags != tp.flags)
		abort(); /* a parsed traceparent formats (as 00) and parses back */
}

static void check_tracestate(const char *ts, const char *tp_s)
{
	char val[LIN_W3C_LIN_VALUE_MAX];
	int r = lin_w3c_tracestate_find(ts, "lin", val, sizeof(val));
	if (r < 0)
		return;
	struct lin_w3c_traceparent tp;
	if (r == 1 && lin_w3c_traceparent_parse(tp_s, &tp) == 0) {
		lin_token tok;
		(void)lin_w3c_lin_parse(val, tp.trace_id, &tok);
	}
	/* the update rule on a valid tracestate gives a valid one, with lin first */
	char out[LIN_W3C_TRACESTATE_MAX], got[LIN_W3C_LIN_VALUE_MAX];
	if (lin_w3c_tracestate_put(ts, "lin", "x", out, sizeof(out)) != 0)
		abort();
	if (strlen(out) > 512 || lin_w3c_tracestate_find(out, "lin", got, sizeof(got)) != 1 ||
	    strcmp(got, "x") || strncmp(out, "lin=x", 5))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char tp[HDR_MAX], ts[HDR_MAX];
	split(data, size, tp, ts);
	check_traceparent(tp);
	check_tracestate(ts, tp);
	struct lin_w3c_context ctx;
	if (lin_w3c_extract(tp, ts[0] ? ts : NULL, &ctx) == 0 && ctx.has_token != 0 && ctx.has_token != 1)
		abort();
	/* The same bytes as one header each, with no terminator inside the buffer. */
	char *copy = malloc(size + 1);
	if (copy) {
		memcpy(copy, data, size);
		copy[size] = 0;
		struct lin_w3c_traceparent p;
		(void)lin_w3c_traceparent_parse(copy, &p);
		char v[LIN_W3C_LIN_VALUE_MAX];
		(void)lin_w3c_tracestate_find(copy, "lin", v, sizeof(v));
		free(copy);
	}
	return 0;
}
