/* SPDX-License-Identifier: MIT */
/* getters.c - what a built ledger holds, read through getters (explain.h), the names of its
 * marks, evidence, hows and causes, and the output helpers both reports share. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "xstate.h"

size_t lin_explain_count(const struct lin_explain *x) { return x->launches.n; }

size_t lin_explain_listed(const struct lin_explain *x) { return x->crits.n; }

const struct lin_xlaunch *lin_explain_at(const struct lin_explain *x, size_t i)
{
	return i < x->launches.n ? lin_vec_at(&x->launches, i) : NULL;
}

const uint64_t *lin_explain_reqs(const struct lin_explain *x, const struct lin_xlaunch *l)
{
	return l->nreq ? lin_vec_at(&x->reqs, (size_t)l->req0) : NULL;
}

const char *lin_explain_name(const struct lin_explain *x, const struct lin_xlaunch *l)
{
	return l->name ? x->pool + l->name - 1 : NULL;
}

const struct lin_xsummary *lin_explain_summary(const struct lin_explain *x) { return &x->sum; }

static const char *const mark_names[] = {
#define N(e, s) s,
	LIN_MARKS(N)
#undef N
};
static const char *const how_names[] = {
#define N(e, s) s,
	LIN_HOWS(N)
#undef N
};
static const char *const cause_names[] = {
#define N(e, s) s,
	LIN_XCAUSES(N)
#undef N
};
static const char *const ev_names[] = { "unknown", "observed", "inferred", "absent" };

const char *lin_mark_name(enum lin_mark m) { return m < LIN_M_N ? mark_names[m] : "?"; }
const char *lin_how_name(enum lin_how h) { return h < LIN_HOW_N ? how_names[h] : "?"; }
const char *lin_xcause_name(enum lin_xcause c) { return c < LIN_X_N ? cause_names[c] : "?"; }
const char *lin_evidence_name(enum lin_evidence e)
{
	return e <= LIN_EV_ABSENT ? ev_names[e] : "?";
}

/* ns as JSON microseconds, exactly: the integer part and three decimals. */
void lin_x_json_us(FILE *f, uint64_t ns)
{
	fprintf(f, "%" PRIu64 ".%03u", ns / 1000, (unsigned)(ns % 1000));
}

FILE *lin_x_perfetto_open(const char *path, const char *title)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return NULL;
	fprintf(f, "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[");
	fprintf(f,
		"{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":1,\"tid\":0,\"args\":{\"name\":"
		"\"%s\"}}",
		title);
	return f;
}

int lin_x_perfetto_close(FILE *f)
{
	fprintf(f, "]}\n");
	if (ferror(f)) {
		int e = errno ? errno : EIO;
		fclose(f);
		errno = e;
		return -1;
	}
	return fclose(f) ? -1 : 0;
}
