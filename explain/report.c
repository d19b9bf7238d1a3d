/* SPDX-License-Identifier: MIT */
/* report.c - lineage-explain's text and JSON reports (docs/ledger.md) and Perfetto export. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "lineage/trace_format.h"
#include "lineage/version.h"
#include "otlp_emit.h"
#include "xstate.h"

static const char *kind_name(uint8_t k)
{
	switch (k) {
	case LIN_REC_KERNEL: return "kernel";
	case LIN_REC_MEMCPY: return "memcpy";
	case LIN_REC_MEMSET: return "memset";
	default: return "graph";
	}
}

#define us lin_x_json_us

static const char *fmt_ns(char *b, size_t n, uint64_t ns)
{
	if (ns < 10000)
		snprintf(b, n, "%" PRIu64 " ns", ns);
	else if (ns < 10000000)
		snprintf(b, n, "%.1f us", (double)ns / 1e3);
	else if (ns < 10000000000ULL)
		snprintf(b, n, "%.2f ms", (double)ns / 1e6);
	else
		snprintf(b, n, "%.2f s", (double)ns / 1e9);
	return b;
}

static bool is_known(const struct lin_xmark *m)
{
	return m->ev == LIN_EV_OBSERVED || m->ev == LIN_EV_INFERRED;
}

/* A name in the text report: quoted, control characters, quotes, backslashes and bytes
 * outside ASCII escaped (a name cannot fake a line of the report), at most 200 bytes;
 * "(no name)" when there is none. */
static void text_name(FILE *out, const char *s)
{
	if (!s) {
		fputs("(no name)", out);
		return;
	}
	fputc('"', out);
	size_t n = 0;
	for (; *s && n < 200; s++, n++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c >= 0x20 && c < 0x7f)
			fputc(c, out);
		else if (c == '\n')
			fputs("\\n", out);
		else if (c == '\t')
			fputs("\\t", out);
		else
			fprintf(out, "\\x%02x", c);
	}
	fputs(*s ? "\"..." : "\"", out);
}

static uint64_t origin(const struct lin_xgroup *g, const struct lin_xlaunch *l)
{
	if (g->ready != LIN_NIL)
		return g->ready;
	for (int m = 0; m < LIN_M_N; m++)
		if (is_known(&l->m[m]))
			return l->m[m].t;
	return 0;
}

/* A descheduled statement's state (LIN_SCHED_*). */
static const char *sched_state_name(uint8_t s)
{
	return s == LIN_SCHED_PREEMPTED ? "preempted"
	       : s == LIN_SCHED_BLOCKED ? "blocked"
					: "unknown";
}

static void text_launch(const struct lin_explain *x, const struct lin_xlaunch *l, uint64_t t0, FILE *out)
{
	char b1[32], b2[32], b3[32];
	const char *nm = lin_explain_name(x, l);
	fprintf(out, "    %s ", kind_name(l->kind));
	text_name(out, nm);
	fprintf(out, " correlation %" PRId64 " stream %" PRIu64 " (file %u, %s %" PRIu64 ")\n",
		l->corr == LIN_NIL ? (int64_t)-1 : (int64_t)l->corr, l->stream, l->file,
		l->imported ? "at" : "byte", l->offset);
	if (l->join == LIN_JOIN_INFERRED)
		fprintf(out, "      joined by inference (%s): its host marks are as good as that join\n",
			l->join_rule ? l->join_rule : "?");
	for (int m = 0; m < LIN_M_N; m++) {
		const struct lin_xmark *k = &l->m[m];
		if (is_known(k))
			fprintf(out, "      %-17s %12s  %-8s %s\n", lin_mark_name((enum lin_mark)m),
				k->t >= t0 ? fmt_ns(b1, sizeof(b1), k->t - t0) : "(before)",
				lin_evidence_name((enum lin_evidence)k->ev),
				lin_how_name((enum lin_how)k->how));
		else
			fprintf(out, "      %-17s %12s  %-8s %s\n", lin_mark_name((enum lin_mark)m),
				"-", lin_evidence_name((enum lin_evidence)k->ev),
				lin_how_name((enum lin_how)k->how));
	}
	for (uint8_t s = 0; s < l->nseg; s++) {
		const struct lin_xseg *g = &l->seg[s];
		const char *how = lin_how_name((enum lin_how)g->how);
		fprintf(out, "      => %-13s %10s  [%s, %s]  %s%s%s%s%s%s\n",
			lin_xcause_name((enum lin_xcause)g->cause), fmt_ns(b1, sizeof(b1), g->ns),
			g->start >= t0 ? fmt_ns(b2, sizeof(b2), g->start - t0) : "?",
			g->end >= t0 ? fmt_ns(b3, sizeof(b3), g->end - t0) : "?",
			lin_evidence_name((enum lin_evidence)g->ev), *how ? " (" : "", how,
			*how ? ")" : "", g->cause == LIN_X_DESCHEDULED ? " " : "",
			g->cause == LIN_X_DESCHEDULED ? sched_state_name(g->state)
			: g->gap                      ? " [off-CPU evidence lost]"
						      : "");
	}
	if (l->alt < LIN_X_N)
		fprintf(out, "      cause: %s (%s: %s, or the device busy with other streams)\n",
			lin_xcause_name((enum lin_xcause)l->dominant),
			lin_how_name((enum lin_how)l->dominant_how),
			lin_xcause_name((enum lin_xcause)l->alt));
	else if (l->dominant < LIN_X_N)
		fprintf(out, "      cause: %s\n", lin_xcause_name((enum lin_xcause)l->dominant));
	else
		fprintf(out, "      cause: none (no stretch before the start is known)\n");
}

void lin_explain_report_text(const struct lin_explain *x, FILE *out)
{
	const struct lin_xsummary *s = &x->sum;
	char b1[32], b2[32];
	fprintf(out,
		"lineage-explain: %" PRIu64 " GPU records; %" PRIu64 " explained, %" PRIu64
		" not joined to a request (lost or ambiguous: see lineage-validate)",
		s->gpu_records, s->explained, s->unjoined);
	if (s->unjoined) {
		fprintf(out, " [");
		for (uint32_t k = 0; k < s->n_unjoined_by; k++)
			fprintf(out, "%s%s%s %" PRIu64, k ? ", " : "",
				s->unjoined_by[k].ambiguous ? "ambiguous " : "lost ",
				s->unjoined_by[k].cause, s->unjoined_by[k].n);
		if (s->unjoined_other)
			fprintf(out, "%sother %" PRIu64, s->n_unjoined_by ? ", " : "", s->unjoined_other);
		fprintf(out, "]");
	}
	if (s->epoch_only)
		fprintf(out, ", %" PRIu64 " joined to an epoch that names no request", s->epoch_only);
	if (s->duplicates)
		fprintf(out, ", %" PRIu64 " duplicates", s->duplicates);
	if (s->join_inferred)
		fprintf(out, "; %" PRIu64 " explained through an inferred join", s->join_inferred);
	if (s->no_start)
		fprintf(out, "; %" PRIu64 " explained without a known start", s->no_start);
	fprintf(out, "\n");
	uint64_t unres = s->by_cause_ns[LIN_X_UNRESOLVED];
	fprintf(out, "%" PRIu64 " requests; time before the start %s, of which unresolved %s (%.1f %%)\n\n",
		s->groups, fmt_ns(b1, sizeof(b1), s->prestart_ns), fmt_ns(b2, sizeof(b2), unres),
		s->prestart_ns ? 100.0 * (double)unres / (double)s->prestart_ns : 0.0);
	fprintf(out, "  %-14s %12s %8s %10s\n", "cause", "time", "share", "dominant");
	for (int c = 0; c < LIN_X_N; c++) {
		if (!s->by_cause_ns[c] && !s->dominant[c])
			continue;
		fprintf(out, "  %-14s %12s %7.1f%% %10" PRIu64 "\n",
			lin_xcause_name((enum lin_xcause)c), fmt_ns(b1, sizeof(b1), s->by_cause_ns[c]),
			c == LIN_X_KERNEL_SLOW || !s->prestart_ns
				? 0.0
				: 100.0 * (double)s->by_cause_ns[c] / (double)s->prestart_ns,
			s->dominant[c]);
	}
	fprintf(out, "\n  %-17s %9s %9s %9s %9s\n", "mark", "observed", "inferred", "unknown", "absent");
	for (int m = 0; m < LIN_M_N; m++)
		fprintf(out, "  %-17s %9" PRIu64 " %9" PRIu64 " %9" PRIu64 " %9" PRIu64 "\n",
			lin_mark_name((enum lin_mark)m), s->marks[m][LIN_EV_OBSERVED],
			s->marks[m][LIN_EV_INFERRED], s->marks[m][LIN_EV_UNKNOWN],
			s->marks[m][LIN_EV_ABSENT]);
	size_t shown = 0;
	for (size_t i = 0; i < x->groups.n; i++) {
		const struct lin_xgroup *g = lin_vec_at(&x->groups, i);
		if (g->crit == SIZE_MAX)
			continue;
		const struct lin_xlaunch *cl = lin_vec_at(&x->crits, g->crit);
		uint64_t t0 = origin(g, cl);
		/* With --request every launch is printed: times from the earliest of them. */
		for (size_t li = 0; x->o.have_request && li < x->launches.n; li++) {
			const struct lin_xlaunch *l = lin_vec_at(&x->launches, li);
			if (lin_x_serves(x, l, g->id, g->imported, g->proc, g->file)) {
				uint64_t o = origin(g, l);
				t0 = o < t0 ? o : t0;
			}
		}
		if (g->imported) {
			fprintf(out, "\nop %" PRIu64 " ", g->id);
			text_name(out, g->name ? x->pool + g->name - 1 : NULL);
			fprintf(out, " (file %u): %u launches, to the last end %s\n", g->file, g->nlaunch,
				g->last_end >= t0 ? fmt_ns(b1, sizeof(b1), g->last_end - t0) : "unknown");
		} else {
			fprintf(out, "\nrequest %" PRIu64 " (file %u): %u launches, ready to the last end %s\n",
				g->id, g->file, g->nlaunch,
				g->ready == LIN_NIL || g->last_end < t0
					? "unknown"
					: fmt_ns(b1, sizeof(b1), g->last_end - t0));
		}
		fprintf(out, "  critical launch (times from %s):\n",
			g->ready != LIN_NIL && t0 == g->ready ? "request_ready" : "the first known mark");
		text_launch(x, cl, t0, out);
		if (x->o.have_request) {
			for (size_t li = 0; li < x->launches.n; li++) {
				const struct lin_xlaunch *l = lin_vec_at(&x->launches, li);
				if (!lin_x_serves(x, l, g->id, g->imported, g->proc, g->file) ||
				    l->id == cl->id)
					continue;
				fprintf(out, "  launch:\n");
				text_launch(x, l, t0, out);
			}
		}
		shown++;
	}
	if (x->o.have_request && !shown)
		fprintf(out, "\nno launch of request %" PRIu64 " was explained\n", x->o.request);
}

/* ------------------------------------------------------------------ JSON */

/* A JSON string, or null for NULL. */
static void json_str(FILE *out, const char *s)
{
	if (s)
		lin_oj_fstr(out, s, strlen(s));
	else
		fputs("null", out);
}

/* Where a mark's or statement's value comes from: its source (observed), rule (inferred) or,
 * named @unknown_key, why it is unknown; nothing when there is no such name. */
static void json_how(FILE *out, uint8_t ev, uint8_t how, const char *unknown_key)
{
	if (!how)
		return;
	const char *key = ev == LIN_EV_OBSERVED   ? "source"
			  : ev == LIN_EV_INFERRED ? "rule"
						  : unknown_key;
	fprintf(out, ",\"%s\":\"%s\"", key, lin_how_name((enum lin_how)how));
}

static void json_launch(const struct lin_explain *x, const struct lin_xlaunch *l, FILE *out)
{
	fprintf(out, "{\"file\":%u,\"offset\":%" PRIu64 ",\"kind\":\"%s\",\"name\":", l->file,
		l->offset, kind_name(l->kind));
	json_str(out, lin_explain_name(x, l));
	if (l->corr != LIN_NIL)
		fprintf(out, ",\"correlation\":%" PRIu64, l->corr);
	fprintf(out, ",\"device\":%u,\"context\":%u,\"stream\":%" PRIu64, l->dev, l->ctx, l->stream);
	if (l->graph_id != LIN_NIL)
		fprintf(out, ",\"graph_id\":%" PRIu64, l->graph_id);
	if (l->key != LIN_NIL)
		fprintf(out, ",\"key\":%" PRIu64, l->key);
	if (l->epoch != LIN_NIL)
		fprintf(out, ",\"epoch\":%" PRIu64, l->epoch);
	fprintf(out, ",\"requests\":[");
	const uint64_t *r = lin_explain_reqs(x, l);
	for (uint32_t i = 0; i < l->nreq; i++)
		fprintf(out, "%s%" PRIu64, i ? "," : "", r[i]);
	fprintf(out, "],\"join\":\"%s\"", l->join == LIN_JOIN_INFERRED ? "inferred" : "observed");
	if (l->join_rule)
		fprintf(out, ",\"join_rule\":\"%s\"", l->join_rule);
	fprintf(out, ",\"marks\":{");
	for (int m = 0; m < LIN_M_N; m++) {
		const struct lin_xmark *k = &l->m[m];
		fprintf(out, "%s\"%s\":{\"evidence\":\"%s\"", m ? "," : "",
			lin_mark_name((enum lin_mark)m), lin_evidence_name((enum lin_evidence)k->ev));
		if (is_known(k))
			fprintf(out, ",\"t\":%" PRIu64 ",\"error_ns\":%" PRIu64, k->t, k->err);
		json_how(out, k->ev, k->how, "cause");
		fprintf(out, "}");
	}
	fprintf(out, "},\"statements\":[");
	for (uint8_t s = 0; s < l->nseg; s++) {
		const struct lin_xseg *g = &l->seg[s];
		fprintf(out,
			"%s{\"cause\":\"%s\",\"start\":%" PRIu64 ",\"end\":%" PRIu64
			",\"ns\":%" PRIu64 ",\"evidence\":\"%s\"",
			s ? "," : "", lin_xcause_name((enum lin_xcause)g->cause), g->start, g->end,
			g->ns, lin_evidence_name((enum lin_evidence)g->ev));
		json_how(out, g->ev, g->how, "cause_unknown");
		if (g->cause == LIN_X_DESCHEDULED)
			fprintf(out, ",\"state\":\"%s\"", sched_state_name(g->state));
		if (g->gap)
			fputs(",\"off_cpu_evidence\":\"lost\"", out);
		fprintf(out, "}");
	}
	fprintf(out, "],\"cause\":");
	if (l->dominant < LIN_X_N)
		fprintf(out, "\"%s\"", lin_xcause_name((enum lin_xcause)l->dominant));
	else
		fprintf(out, "null");
	if (l->dominant == LIN_X_DESCHEDULED)
		fprintf(out, ",\"cause_state\":\"%s\"", sched_state_name(l->dominant_state));
	if (l->alt < LIN_X_N)
		fprintf(out, ",\"alt\":\"%s\"", lin_xcause_name((enum lin_xcause)l->alt));
	if (l->median)
		fprintf(out, ",\"median_ns\":%" PRIu64, l->median);
	fprintf(out, "}");
}

/* The unjoined records by the join layer's cause, lost or @ambiguous ones. */
static void unjoined_json(const struct lin_xsummary *s, FILE *out, bool ambiguous)
{
	bool first = true;
	for (uint32_t k = 0; k < s->n_unjoined_by; k++) {
		if (s->unjoined_by[k].ambiguous != ambiguous)
			continue;
		fprintf(out, "%s\"%s\":%" PRIu64, first ? "" : ",", s->unjoined_by[k].cause,
			s->unjoined_by[k].n);
		first = false;
	}
}

void lin_explain_report_json(const struct lin_explain *x, FILE *out)
{
	const struct lin_xsummary *s = &x->sum;
	fprintf(out, "{\"tool\":\"lineage-explain\",\"version\":\"%s\",\"summary\":{",
		LIN_STRINGIFY_VERSION);
	fprintf(out,
		"\"gpu_records\":%" PRIu64 ",\"explained\":%" PRIu64 ",\"unjoined\":%" PRIu64
		",\"epoch_only\":%" PRIu64 ",\"duplicates\":%" PRIu64 ",\"join_inferred\":%" PRIu64
		",\"no_start\":%" PRIu64 ",\"with_statements\":%" PRIu64 ",\"requests\":%" PRIu64
		",\"prestart_ns\":%" PRIu64 ",\"unresolved_ns\":%" PRIu64
		",\"unresolved_fraction\":%.6f,\"by_cause\":{",
		s->gpu_records, s->explained, s->unjoined, s->epoch_only, s->duplicates,
		s->join_inferred, s->no_start, s->with_statements, s->groups, s->prestart_ns,
		s->by_cause_ns[LIN_X_UNRESOLVED],
		s->prestart_ns ? (double)s->by_cause_ns[LIN_X_UNRESOLVED] / (double)s->prestart_ns : 0.0);
	for (int c = 0; c < LIN_X_N; c++)
		fprintf(out, "%s\"%s\":{\"ns\":%" PRIu64 ",\"dominant\":%" PRIu64 "}", c ? "," : "",
			lin_xcause_name((enum lin_xcause)c), s->by_cause_ns[c], s->dominant[c]);
	fprintf(out, "},\"not_joined\":{\"lost\":%" PRIu64 ",\"ambiguous\":%" PRIu64 ",\"lost_by_cause\":{",
		s->unjoined_lost, s->unjoined_ambiguous);
	unjoined_json(s, out, false);
	fprintf(out, "},\"ambiguous_by_cause\":{");
	unjoined_json(s, out, true);
	fprintf(out, "},\"other\":%" PRIu64 "},\"marks\":{", s->unjoined_other);
	for (int m = 0; m < LIN_M_N; m++)
		fprintf(out,
			"%s\"%s\":{\"observed\":%" PRIu64 ",\"inferred\":%" PRIu64
			",\"unknown\":%" PRIu64 ",\"absent\":%" PRIu64 "}",
			m ? "," : "", lin_mark_name((enum lin_mark)m), s->marks[m][LIN_EV_OBSERVED],
			s->marks[m][LIN_EV_INFERRED], s->marks[m][LIN_EV_UNKNOWN],
			s->marks[m][LIN_EV_ABSENT]);
	fprintf(out, "}},\"requests\":[");
	bool first = true;
	for (size_t i = 0; i < x->groups.n; i++) {
		const struct lin_xgroup *g = lin_vec_at(&x->groups, i);
		if (g->crit == SIZE_MAX)
			continue;
		fprintf(out, "%s{\"%s\":%" PRIu64 ",\"file\":%u", first ? "" : ",",
			g->imported ? "op" : "request", g->id, g->file);
		first = false;
		if (g->imported) {
			fprintf(out, ",\"name\":");
			json_str(out, g->name ? x->pool + g->name - 1 : NULL);
		}
		if (g->ready != LIN_NIL)
			fprintf(out, ",\"ready\":%" PRIu64, g->ready);
		fprintf(out, ",\"last_end\":%" PRIu64 ",\"launches\":%u,\"critical\":", g->last_end,
			g->nlaunch);
		json_launch(x, lin_vec_at(&x->crits, g->crit), out);
		if (x->o.have_request) {
			fprintf(out, ",\"all\":[");
			bool f2 = true;
			for (size_t li = 0; li < x->launches.n; li++) {
				const struct lin_xlaunch *l = lin_vec_at(&x->launches, li);
				if (!lin_x_serves(x, l, g->id, g->imported, g->proc, g->file))
					continue;
				fprintf(out, "%s", f2 ? "" : ",");
				f2 = false;
				json_launch(x, l, out);
			}
			fprintf(out, "]");
		}
		fprintf(out, "}");
	}
	fprintf(out, "]}\n");
}

/* ------------------------------------------------------------------ Perfetto */

int lin_explain_perfetto(const struct lin_explain *x, const char *path)
{
	FILE *f = lin_x_perfetto_open(path, "lineage-explain: requests");
	if (!f)
		return -1;
	for (size_t i = 0; i < x->groups.n; i++) {
		const struct lin_xgroup *g = lin_vec_at(&x->groups, i);
		if (g->crit == SIZE_MAX)
			continue;
		uint64_t tid = i + 1;
		fprintf(f,
			",\n{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":1,\"tid\":%" PRIu64
			",\"args\":{\"name\":\"%s %" PRIu64 " (file %u)\"}}",
			tid, g->imported ? "op" : "request", g->id, g->file);
		const struct lin_xlaunch *l = lin_vec_at(&x->crits, g->crit);
		for (uint8_t s = 0; s < l->nseg; s++) {
			const struct lin_xseg *sg = &l->seg[s];
			bool unk = sg->ev == LIN_EV_UNKNOWN;
			fprintf(f,
				",\n{\"ph\":\"X\",\"pid\":1,\"tid\":%" PRIu64 ",\"name\":\"%s%s\",\"cat\":\"%s\","
				"\"ts\":",
				tid, unk ? "unknown: " : "", lin_xcause_name((enum lin_xcause)sg->cause),
				lin_evidence_name((enum lin_evidence)sg->ev));
			us(f, sg->start);
			fprintf(f, ",\"dur\":");
			us(f, sg->end - sg->start);
			fprintf(f, ",\"args\":{\"evidence\":\"%s\",\"how\":\"%s\",\"ns\":%" PRIu64 "}}",
				lin_evidence_name((enum lin_evidence)sg->ev),
				lin_how_name((enum lin_how)sg->how), sg->ns);
		}
		if (is_known(&l->m[LIN_M_KERNEL_START]) && is_known(&l->m[LIN_M_KERNEL_END])) {
			fprintf(f, ",\n{\"ph\":\"X\",\"pid\":1,\"tid\":%" PRIu64 ",\"name\":", tid);
			json_str(f, lin_explain_name(x, l) ? lin_explain_name(x, l) : kind_name(l->kind));
			fprintf(f, ",\"cat\":\"gpu\",\"ts\":");
			us(f, l->m[LIN_M_KERNEL_START].t);
			fprintf(f, ",\"dur\":");
			us(f, l->m[LIN_M_KERNEL_END].t - l->m[LIN_M_KERNEL_START].t);
			fprintf(f, "}");
		}
	}
	return lin_x_perfetto_close(f);
}
