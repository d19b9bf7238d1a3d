/* SPDX-License-Identifier: MIT */
/* report.c - the JSON and human reports of lineage-validate (docs/validator.md). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lineage/trace_format.h"
#include "lineage/version.h"
#include "otlp_emit.h"
#include "report.h"

/* A JSON string: valid UTF-8 as it is, U+FFFD for each maximal ill-formed subsequence
 * (the OTLP writer's encoder). */
static void json_str(FILE *out, const char *s) { lin_oj_fstr(out, s, strlen(s)); }

static double bytes_per_launch(const struct lin_join_summary *s)
{
	uint64_t n = s->launches ? s->launches : s->gpu_records;
	return n ? (double)s->bytes / (double)n : 0.0;
}

/* The name of file @fi, or @none. */
static const char *file_name(const struct lin_joiner *v, uint32_t fi, const char *none)
{
	const struct lin_jfile *f = lin_joiner_file(v, fi);
	return f ? f->name : none;
}

static void json_finding(const struct lin_joiner *v, const struct lin_finding *f, FILE *out)
{
	fputs("{\"kind\":", out);
	json_str(out, f->kind);
	fputs(",\"cause\":", out);
	json_str(out, f->cause);
	fputs(",\"file\":", out);
	json_str(out, file_name(v, f->file, ""));
	fprintf(out, ",\"offset\":%" PRIu64 ",\"record\":%" PRIu64 ",\"ids\":{", f->offset, f->index);
	int first = 1;
	for (int i = 0; i < f->nids; i++) {
		if (f->id[i] == LIN_NIL)
			continue;
		fprintf(out, "%s\"%s\":%" PRIu64, first ? "" : ",", f->idname[i], f->id[i]);
		first = 0;
	}
	fputc('}', out);
	if (f->detail[0]) {
		fputs(",\"detail\":", out);
		json_str(out, f->detail);
	}
	if (f->ncand) {
		fputs(",\"candidates\":[", out);
		for (int i = 0; i < f->ncand; i++)
			fprintf(out, "%s%" PRIu64, i ? "," : "", f->cand[i]);
		fputc(']', out);
	}
	fputc('}', out);
}

static void json_files(const struct lin_joiner *v, FILE *out)
{
	fputs("\"files\":[", out);
	for (unsigned i = 0; i < lin_joiner_nfiles(v); i++) {
		const struct lin_jfile *f = lin_joiner_file(v, i);
		fprintf(out, "%s{\"name\":", i ? "," : "");
		json_str(out, f->name);
		fprintf(out, ",\"truth\":%s,\"bytes\":%" PRIu64 ",\"records\":%" PRIu64,
			f->truth ? "true" : "false", f->size, f->records);
		if (f->failed) {
			fprintf(out, ",\"error\":{\"offset\":%" PRIu64 ",\"truncated\":%s,\"message\":",
				f->err_off, f->truncated ? "true" : "false");
			json_str(out, f->err);
			fputc('}', out);
		}
		fputc('}', out);
	}
	fputs("],", out);
}

/* "KEY":{"none":N,...,"request":N}, and a comma. */
static void json_levels(FILE *out, const char *key, const uint64_t *by_level)
{
	fprintf(out, "\"%s\":{", key);
	for (int i = 0; i < LIN_LEVEL_N; i++)
		fprintf(out, "%s\"%s\":%" PRIu64, i ? "," : "", lin_level_name(i), by_level[i]);
	fputs("},", out);
}

void lin_validator_report_json(const struct lin_joiner *v, FILE *out)
{
	const struct lin_join_summary *s = lin_joiner_summary(v);
	fprintf(out, "{\"format_version\":\"%d.%d\",\"validator\":\"%d.%d.%d\",\"exit_code\":%d,",
		LIN_TRACE_FORMAT_MAJOR, LIN_TRACE_FORMAT_MINOR, LIN_VERSION_MAJOR,
		LIN_VERSION_MINOR, LIN_VERSION_PATCH, lin_joiner_exit_code(v));
	json_files(v, out);
	fprintf(out,
		"\"records\":%" PRIu64 ",\"gpu_records\":%" PRIu64 ",\"joined_observed\":%" PRIu64
		",\"joined_inferred\":%" PRIu64 ",\"inferred_by_rule\":{",
		s->records, s->gpu_records, s->observed, s->inferred);
	for (int i = 0; i < LIN_RULE_N; i++)
		fprintf(out, "%s\"%s\":%" PRIu64, i ? "," : "", lin_rule_name(i),
			s->inferred_by_rule[i]);
	fputs("},\"joined_by_level\":{", out);
	for (int i = 0; i < LIN_LEVEL_N; i++)
		fprintf(out, "%s\"%s\":%" PRIu64, i ? "," : "", lin_level_name(i),
			s->joined_by_level[i]);
	fprintf(out,
		"},\"duplicates\":%" PRIu64 ",\"captured_launches\":%" PRIu64
		",\"bracket_checked\":%" PRIu64 ",\"bracket_unchecked\":%" PRIu64,
		s->duplicates, s->captured_launches, s->bracket_checked, s->bracket_unchecked);
	fprintf(out, ",\"bracket_unchecked_by\":{");
	for (int i = 0, first = 1; i < LIN_UNCHK_N; i++)
		if (s->bracket_unchecked_by[i]) {
			fprintf(out, "%s\"%s\":%" PRIu64, first ? "" : ",",
				lin_unchecked_name((enum lin_unchecked)i), s->bracket_unchecked_by[i]);
			first = 0;
		}
	fprintf(out, "}");
	fprintf(out, ",\"lost\":%" PRIu64 ",\"lost_by_cause\":{", s->lost);
	int first = 1;
	for (int i = 0; i < LIN_CAUSE_N; i++) {
		if (!s->lost_by_cause[i])
			continue;
		fprintf(out, "%s\"%s\":%" PRIu64, first ? "" : ",", lin_cause_name(i),
			s->lost_by_cause[i]);
		first = 0;
	}
	fprintf(out, "},\"dropped\":%" PRIu64, s->dropped);
	fprintf(out,
		",\"ambiguous\":%" PRIu64 ",\"incorrect\":%" PRIu64 ",\"structural\":%" PRIu64
		",\"notes\":%" PRIu64 ",\"file_errors\":%u,\"bytes\":%" PRIu64
		",\"launches\":%" PRIu64 ",\"bytes_per_launch\":%.2f,",
		s->ambiguous, s->incorrect, s->structural, s->notes, s->file_errors, s->bytes,
		s->launches, bytes_per_launch(s));
	fprintf(out,
		"\"late\":{\"adopts\":%" PRIu64 ",\"launches_after_retire\":%" PRIu64
		",\"launches_after_reissue\":%" PRIu64 ",\"joined_after_retire\":%" PRIu64
		",\"joined_after_reissue\":%" PRIu64 "},",
		s->late_adopts, s->late_launches[LIN_LATE_ENDED], s->late_launches[LIN_LATE_REISSUED],
		s->joined_late[LIN_LATE_ENDED], s->joined_late[LIN_LATE_REISSUED]);
	if (s->have_truth) {
		fprintf(out, "\"truth_records\":%" PRIu64 ",\"matched\":%" PRIu64 ",",
			s->truth_records, s->matched);
		json_levels(out, "matched_by_level", s->matched_by_level);
		json_levels(out, "incorrect_by_level", s->incorrect_by_level);
	}
	fprintf(out, "\"findings_total\":%" PRIu64 ",\"findings\":[", s->findings);
	for (size_t i = 0; i < lin_joiner_nfindings(v); i++) {
		if (i)
			fputc(',', out);
		json_finding(v, lin_joiner_finding(v, i), out);
	}
	fputs("]}\n", out);
}

static void text_finding(const struct lin_joiner *v, const struct lin_finding *f, FILE *out)
{
	fprintf(out, "  %s:%" PRIu64 ": record #%" PRIu64 ": %s %s", file_name(v, f->file, "?"),
		f->offset, f->index, f->kind, f->cause);
	for (int i = 0; i < f->nids; i++)
		if (f->id[i] != LIN_NIL)
			fprintf(out, " %s=%" PRIu64, f->idname[i], f->id[i]);
	for (int i = 0; i < f->ncand; i++)
		fprintf(out, "%s%" PRIu64, i ? "," : " candidates=", f->cand[i]);
	if (f->detail[0])
		fprintf(out, ": %s", f->detail);
	fputc('\n', out);
}

/* "1 trace, 1 truth file": what the files read were. */
static void text_files(const struct lin_joiner *v, FILE *out)
{
	unsigned truth = 0;
	for (unsigned i = 0; i < lin_joiner_nfiles(v); i++)
		truth += lin_joiner_file(v, i)->truth != 0;
	unsigned traces = lin_joiner_nfiles(v) - truth;
	fprintf(out, "%u trace%s", traces, traces == 1 ? "" : "s");
	if (truth)
		fprintf(out, ", %u truth file%s", truth, truth == 1 ? "" : "s");
}

void lin_validator_report_text(const struct lin_joiner *v, FILE *out)
{
	const struct lin_join_summary *s = lin_joiner_summary(v);
	for (unsigned i = 0; i < lin_joiner_nfiles(v); i++)
		if (lin_joiner_file(v, i)->failed)
			fprintf(out, "error: %s: byte %" PRIu64 ": %s\n", lin_joiner_file(v, i)->name,
				lin_joiner_file(v, i)->err_off, lin_joiner_file(v, i)->err);
	fprintf(out, "lineage-validate %s (trace format %d.%d): ", LIN_STRINGIFY_VERSION,
		LIN_TRACE_FORMAT_MAJOR, LIN_TRACE_FORMAT_MINOR);
	text_files(v, out);
	fputc('\n', out);
	fprintf(out, "  %-28s %12" PRIu64 "\n", "records", s->records);
	fprintf(out, "  %-28s %12" PRIu64 "\n", "GPU records", s->gpu_records);
	fprintf(out, "  %-28s %12" PRIu64 "\n", "joined, observed", s->observed);
	fprintf(out, "  %-28s %12" PRIu64 "\n", "joined, inferred", s->inferred);
	for (int i = 0; i < LIN_RULE_N; i++)
		if (s->inferred_by_rule[i])
			fprintf(out, "    rule %-23s %12" PRIu64 "\n", lin_rule_name(i),
				s->inferred_by_rule[i]);
	if (s->joined_late[LIN_LATE_ENDED] || s->joined_late[LIN_LATE_REISSUED])
		fprintf(out,
			"    %-26s %12" PRIu64 " (after retire %" PRIu64 ", after reissue %" PRIu64 ")\n",
			"of them late work",
			s->joined_late[LIN_LATE_ENDED] + s->joined_late[LIN_LATE_REISSUED],
			s->joined_late[LIN_LATE_ENDED], s->joined_late[LIN_LATE_REISSUED]);
	if (s->late_adopts || s->late_launches[LIN_LATE_ENDED] || s->late_launches[LIN_LATE_REISSUED])
		fprintf(out, "  %-28s %12" PRIu64 " (late adopts %" PRIu64 ")\n", "late launches",
			s->late_launches[LIN_LATE_ENDED] + s->late_launches[LIN_LATE_REISSUED],
			s->late_adopts);
	fprintf(out, "  %-28s %12" PRIu64 "\n", "lost", s->lost);
	for (int i = 0; i < LIN_CAUSE_N; i++)
		if (s->lost_by_cause[i])
			fprintf(out, "    %-26s %12" PRIu64 "\n", lin_cause_name(i),
				s->lost_by_cause[i]);
	fprintf(out, "  %-28s %12" PRIu64 "\n", "ambiguous", s->ambiguous);
	if (s->duplicates)
		fprintf(out, "  %-28s %12" PRIu64 "\n", "duplicate GPU records", s->duplicates);
	if (s->captured_launches)
		fprintf(out, "  %-28s %12" PRIu64 "\n", "launches in stream capture",
			s->captured_launches);
	if (s->bracket_checked || s->bracket_unchecked) {
		fprintf(out, "  %-28s %12" PRIu64 " (%" PRIu64 " not checked",
			"calls inside their bracket", s->bracket_checked, s->bracket_unchecked);
		for (int i = 0; i < LIN_UNCHK_N; i++)
			if (s->bracket_unchecked_by[i])
				fprintf(out, ", %s %" PRIu64, lin_unchecked_name((enum lin_unchecked)i),
					s->bracket_unchecked_by[i]);
		fprintf(out, ")\n");
	}
	fprintf(out, "  %-28s %12" PRIu64 "\n", "incorrect", s->incorrect);
	fprintf(out, "  %-28s %12" PRIu64 "\n", "structural findings", s->structural);
	if (s->dropped)
		fprintf(out, "  %-28s %12" PRIu64 "\n", "records dropped (loss)", s->dropped);
	if (s->have_truth)
		fprintf(out, "  %-28s %12" PRIu64 " of %" PRIu64 "\n", "matched truth labels",
			s->matched, s->truth_records);
	fprintf(out, "  %-28s %12.2f\n", "bytes per launch", bytes_per_launch(s));
	/* The levels in words a Kineto or Nsight Systems user knows (docs/validator.md, "Join
	 * levels"): an epoch naming no request and a bracket, range or imported op are both an
	 * op that names no request. The JSON keeps the five levels apart. */
	const uint64_t *jl = s->joined_by_level;
	fprintf(out,
		"  deepest join reached        request %" PRIu64 ", op without request %" PRIu64
		", API call only %" PRIu64 ", none %" PRIu64 "\n",
		jl[LIN_LEVEL_REQUEST], jl[LIN_LEVEL_EPOCH] + jl[LIN_LEVEL_OP],
		jl[LIN_LEVEL_API_CALL], jl[LIN_LEVEL_NONE]);
	if (lin_joiner_nfindings(v))
		fprintf(out, "findings (first %zu of %" PRIu64 "):\n", lin_joiner_nfindings(v),
			s->findings);
	for (size_t i = 0; i < lin_joiner_nfindings(v); i++)
		text_finding(v, lin_joiner_finding(v, i), out);
	if (s->findings > lin_joiner_nfindings(v))
		fprintf(out,
			"  ... %" PRIu64 " more finding(s) not listed (--max-findings %" PRIu64
			" lists them all)\n",
			s->findings - (uint64_t)lin_joiner_nfindings(v), s->findings);
	fprintf(out, "exit status %d\n", lin_joiner_exit_code(v));
}
