/* SPDX-License-Identifier: MIT */
/*
 * verdict.c - the names and the verdict line every tool on the join layer prints
 * (lineage-validate and lineage-explain --verdicts; docs/validator.md, "Verdicts").
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "jstate.h"

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

void lin_verdict_line(FILE *out, const char *file, uint64_t key, enum lin_join join,
		      const char *why, uint64_t op, const uint64_t *reqs, uint32_t nreqs)
{
	static const char *const names[] = { "none", "observed", "inferred", "lost", "ambiguous" };
	fprintf(out, "%s\t%" PRIu64 "\t%s\t%s\t", file, key,
		(unsigned)join < sizeof(names) / sizeof(names[0]) ? names[join] : "none",
		why ? why : "-");
	if (op != LIN_NIL) {
		fprintf(out, "op:%" PRIu64 "\n", op);
		return;
	}
	uint64_t *s = nreqs ? malloc(nreqs * sizeof(*s)) : NULL;
	if (s) {
		memcpy(s, reqs, nreqs * sizeof(*s));
		qsort(s, nreqs, sizeof(*s), cmp_u64);
		reqs = s;
	}
	for (uint32_t i = 0; i < nreqs; i++)
		fprintf(out, "%s%" PRIu64, i ? "," : "", reqs[i]);
	fprintf(out, "%s\n", nreqs ? "" : "-");
	free(s);
}

const char *lin_unchecked_name(enum lin_unchecked u)
{
	static const char *const names[LIN_UNCHK_N] = {
		[LIN_UNCHK_NO_CLOCK_BOUND] = "no_clock_bound",
		[LIN_UNCHK_NO_CLOCK_RECORD] = "no_clock_record",
		[LIN_UNCHK_NO_API_TIMES] = "no_api_times",
		[LIN_UNCHK_DROPPED_BRACKETS] = "dropped_brackets",
		[LIN_UNCHK_CLOCK_UNCERTAINTY] = "clock_uncertainty",
		[LIN_UNCHK_BRACKET_UNCLOSED] = "bracket_unclosed",
		[LIN_UNCHK_LIMIT] = "limit",
		[LIN_UNCHK_NO_THREAD_IDS] = "no_thread_ids",
	};
	return (unsigned)u < LIN_UNCHK_N ? names[u] : "unknown";
}
