/* SPDX-License-Identifier: MIT */
/* main.c - the lineage-explain command line. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "explain.h"
#include "imp.h"
#include "score.h"
#include "lineage/version.h"

#define EXIT_NOTHING 1
#define EXIT_BAD_FILE 2
#define EXIT_NOMEM 3
#define EXIT_USAGE 64

static const char usage_text[] =
	"NAME\n"
	"    lineage-explain - why did each request's kernel start when it did\n"
	"\n"
	"SYNOPSIS\n"
	"    lineage-explain [--json] [--request ID] [--top N] [--export-perfetto OUT.json]\n"
	"                    [--from kineto|nsys] [--slow-factor F] [--without EVIDENCE]\n"
	"                    [--verdicts OUT.tsv]\n"
	"                    TRACE...\n"
	"    lineage-explain --per-request [--split tokens|equal] [--json]\n"
	"                    [--export-perfetto OUT.json] [--export-otlp OUT.json] TRACE...\n"
	"    lineage-explain --score CAUSE_TRUTH [--without EVIDENCE] [--peer-labels NAME=FILE]\n"
	"                    TRACE...\n"
	"    lineage-explain --help | --version\n"
	"\n"
	"DESCRIPTION\n"
	"    Builds a launch-state ledger for every GPU record (kernel, memcpy, memset, a graph\n"
	"    replay) that lineage-validate's join engine ties to a request (observed, or inferred\n"
	"    with its rule, as lineage-validate says; a record it calls lost or ambiguous gets\n"
	"    no ledger and is counted with its cause): request_ready, declared,\n"
	"    captured, adopted, api_enter, api_exit, queued, submitted, dependency_ready,\n"
	"    kernel_start, kernel_end. Each mark is observed (its source named), inferred (its\n"
	"    rule named: stream_order, event_wait, graph_edge), unknown (why named) or absent\n"
	"    (the step did not happen). The time from the first known mark to the kernel's\n"
	"    start is cut into statements at the known marks: before_declare, before_handoff,\n"
	"    handoff_wait, thread_delay, descheduled, api_call, submit_delay, dependency,\n"
	"    device_busy (other streams held the device until right before the start), and\n"
	"    unresolved where no evidence says why (a readiness that cannot be observed is\n"
	"    bounded, never invented). The cause is that of the longest statement, or unknown\n"
	"    when the device was as busy over it (competing causes). kernel_slow compares a\n"
	"    kernel with the median of its name. Per request it shows the critical launch\n"
	"    (the one that ended last) with its marks and\n"
	"    statements; for the run, the time by cause and the fraction left unresolved.\n"
	"    docs/ledger.md has the schema and every rule.\n"
	"\n"
	"    Each TRACE is a lineage trace, or a PyTorch profiler / Kineto JSON trace or an\n"
	"    Nsight Systems SQLite export (read by lineage-validate's importers, kind from the\n"
	"    first bytes, or all as --from says). Imported traces carry no handoff and no\n"
	"    latency timestamps: those marks are unknown (not_in_format) and their work is\n"
	"    grouped by the framework op around each launch instead of by request.\n"
	"\n"
	"OPTIONS\n"
	"    --json              one JSON object on stdout (schema: docs/ledger.md)\n"
	"    --request ID        only request ID (imported: the op's event index), with every\n"
	"                        launch of it, not only the critical one\n"
	"    --top N             list the N requests that took longest (default 10; 0: all)\n"
	"    --export-perfetto OUT.json\n"
	"                        also write Chrome/Perfetto trace-event JSON: a track per\n"
	"                        listed request, its critical launch's statements as slices\n"
	"                        (unknown ones named \"unknown: ...\") and the kernel\n"
	"    --from FMT          read every TRACE as FMT: kineto or nsys\n"
	"    --slow-factor F     kernel_slow above F times the median (default 1.5; F > 1)\n"
	"    --without EVIDENCE  build the ledgers as if the trace lacked some evidence, a\n"
	"                        comma-separated list of: latency (queued and submitted),\n"
	"                        stream-order and event-wait (those dependency rules), handoff\n"
	"                        (token capture and adopt records), host-sched (off-CPU\n"
	"                        records), occupancy (the device_occupied rule and the\n"
	"                        competing-causes check), graph-edge (the graph_edge rule):\n"
	"                        what each piece of evidence buys\n"
	"    --peer-labels NAME=FILE\n"
	"                        with --score: also score the labels a peer tool gave, one GPU\n"
	"                        record a line (gpu_kind, key, correlation, label, start_ns,\n"
	"                        end_ns; tab-separated), as method NAME (docs/attribution.md,\n"
	"                        \"Peer labels\")\n"
	"    --score CAUSE_TRUTH score the explanation against a cause-truth file (written by\n"
	"                        lineage-synth --cause-truth or examples/attrib_causes.cu;\n"
	"                        docs/attribution.md): every launch with a label gets one from\n"
	"                        lineage (its ledger's dominant cause), from a reading of\n"
	"                        Nsight Systems' reports (API time against queue time, the\n"
	"                        queue read beside the stream's previous work and the event\n"
	"                        waits: method nsys) and from a model of Holistic Trace\n"
	"                        Analysis (idle-time class, launch delay: method hta-model);\n"
	"                        prints a table and SUMMARY lines (per cause and\n"
	"                        method: recall, precision, the host/dependency/device side,\n"
	"                        unknown, interval error; ambiguous launches: calibration, the\n"
	"                        fraction reported unknown) instead of the report\n"
	"    --per-request       report per request instead (docs/serving.md): its GPU time,\n"
	"                        every GPU record joined to requests split among them by the\n"
	"                        tokens each contributed (the epoch's shares, lin_epoch_opts\n"
	"                        .shares, or its nearest ancestor's; equal shares where none\n"
	"                        hold), in whole ns by largest remainder, prefill and decode\n"
	"                        apart, with the time joined to no request on a line of its\n"
	"                        own: requests + unattributed = total, exactly; and its time\n"
	"                        to first token (arrival, or the sender's arrival through a\n"
	"                        request_link, to the end of the step whose shares give its\n"
	"                        first token) cut into queue, prefill_before, host,\n"
	"                        launch_to_start and execution, each with its evidence and\n"
	"                        cause (the ledger's for host and launch_to_start), and the\n"
	"                        dominant one. With --export-perfetto: a track per request\n"
	"    --split RULE        with --per-request: tokens (default) or equal (every record\n"
	"                        split equally among its requests)\n"
	"    --export-otlp OUT.json\n"
	"                        with --per-request: also write it as OpenTelemetry spans,\n"
	"                        OTLP/JSON, one ExportTraceServiceRequest per line (the\n"
	"                        layout of lineage-validate --export-otlp, docs/fleet.md \"Per\n"
	"                        request\"): a span lineage.request.gpu per listed request,\n"
	"                        in the trace the validator's export gives that request and\n"
	"                        under its span there, from its arrival (else its first GPU\n"
	"                        record) to its first token (else its last GPU record's end),\n"
	"                        with its GPU time, prefill, decode, other, records, split\n"
	"                        counts, time to first token and dominant stretch as\n"
	"                        attributes and each stretch as an event; and a span\n"
	"                        lineage.unattributed per process (its records joined to no\n"
	"                        request, and the run's totals). Concatenated with\n"
	"                        lineage-validate --export-otlp of the same traces, every\n"
	"                        parent span id resolves\n"
	"    --verdicts OUT.tsv  also write the validator's verdict each GPU record's ledger\n"
	"                        rests on, one line each (file, key, class, rule or cause,\n"
	"                        requests or op:INDEX): the lines lineage-validate\n"
	"                        --verdicts writes for the same input\n"
	"    -h, --help          show this help and exit\n"
	"    -V, --version       show the version and exit\n"
	"\n"
	"EXIT STATUS\n"
	"    0   at least one GPU record was explained with a known stretch before its start,\n"
	"        and every file was read whole\n"
	"    1   nothing to explain: no GPU record, none joined to a request (lineage-validate\n"
	"        says why), none with a known start or a known stretch before it, or --request\n"
	"        names no request with one; with --score: no label matched a launch; with\n"
	"        --per-request: no GPU record joined to a request, or the split did not\n"
	"        conserve the total (a bug: the message says by how much)\n"
	"    2   a file (TRACE or CAUSE_TRUTH) is missing, unreadable, malformed, truncated or\n"
	"        of an unsupported version (the message names the file, the byte offset and\n"
	"        what was expected);\n"
	"        what was read before is still reported; or the report (standard output,\n"
	"        --export-perfetto or --export-otlp: the message names the path) could not be\n"
	"        written, or a TRACE changed before --export-otlp read it again. A file given\n"
	"        twice is read once.\n"
	"    3   out of memory\n"
	"    64  usage error (an output that is one of the inputs, by any path, included:\n"
	"        refused before anything is written)\n"
	"\n"
	"EXAMPLES\n"
	"    lineage-explain run.lt\n"
	"    lineage-explain --json --request 17 run.lt > r17.json\n"
	"    lineage-explain --from kineto --export-perfetto why.json rank0.pt.trace.json\n"
	"    lineage-explain --score run.cause run.lt run.sched\n"
	"    lineage-explain --score run.cause --without latency run.lt\n"
	"    lineage-explain --per-request --json engine.lt frontend.lt > per-request.json\n"
	"    lineage-explain --per-request --export-otlp rq.otlp.json engine.lt frontend.lt\n";

static int usage_error(const char *msg)
{
	fprintf(stderr, "lineage-explain: %s\nTry 'lineage-explain --help'.\n", msg);
	return EXIT_USAGE;
}

static bool parse_u64(const char *s, uint64_t *out)
{
	char *end;
	errno = 0;
	if (!*s || *s == '-')
		return false;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || *end)
		return false;
	*out = v;
	return true;
}

/* --without's list into lin_xopts.without; -1 for a word it does not know. */
static int parse_without(const char *list, unsigned *out)
{
	static const struct {
		const char *name;
		unsigned flag;
	} words[] = {
		{ "latency", LIN_XW_LATENCY },       { "stream-order", LIN_XW_STREAM_ORDER },
		{ "event-wait", LIN_XW_EVENT_WAIT }, { "handoff", LIN_XW_HANDOFF },
		{ "host-sched", LIN_XW_HOST_SCHED }, { "occupancy", LIN_XW_OCCUPANCY },
		{ "graph-edge", LIN_XW_GRAPH_EDGE },
	};
	*out = 0;
	for (const char *p = list;;) {
		size_t len = strcspn(p, ",");
		size_t i = 0;
		while (i < sizeof(words) / sizeof(words[0]) &&
		       (strlen(words[i].name) != len || strncmp(words[i].name, p, len) != 0))
			i++;
		if (i == sizeof(words) / sizeof(words[0]))
			return -1;
		*out |= words[i].flag;
		if (!p[len])
			return 0;
		p += len + 1;
	}
}

/* Feed one path: a lineage trace to the joiner, a foreign one to its importer. */
static int add(struct lin_joiner *v, const char *path, const char *from)
{
	const char *fmt = from;
	if (!fmt) {
		char err[256];
		int f = lin_imp_detect(path, err, sizeof(err), NULL);
		fmt = f < 0 ? NULL : lin_imp_fmt_name((enum lin_imp_fmt)f);
	}
	if (!fmt) {
		lin_joiner_add_file(v, path); /* its reader says what is wrong */
		return 0;
	}
	const char *lacks = NULL;
	if (!lin_imp_have(fmt, &lacks)) {
		fprintf(stderr, "lineage-explain: %s: %s traces: this build lacks %s\n", path, fmt, lacks);
		return EXIT_USAGE;
	}
	const char *fmts[1] = { fmt };
	char *paths[1] = { (char *)path };
	lin_imp_run(v, fmts, paths, 1, NULL, NULL);
	return 0;
}

/* --peer-labels NAME=FILE (with --score): set once by main, read by score(). */
static const char *peer_name, *peer_path;

/* --score: load the cause truth, label the ledgers, print the scores. */
static int score(const char *truth, const struct lin_explain *x, const struct lin_joiner *v,
		 const char *without)
{
	char err[512];
	struct lin_score *s = lin_score_create();
	int r = s ? lin_score_load(s, truth, err, sizeof(err)) : -ENOMEM;
	if (!r && peer_path)
		r = lin_score_load_peer(s, peer_name, peer_path, err, sizeof(err));
	if (r == -ENOMEM || (!r && lin_score_add(s, x, v) < 0)) {
		lin_score_free(s);
		fprintf(stderr, "lineage-explain: out of memory\n");
		return EXIT_NOMEM;
	}
	if (r) {
		lin_score_free(s);
		fprintf(stderr, "lineage-explain: --score %s\n", err);
		return EXIT_BAD_FILE;
	}
	int rc = lin_score_report(s, stdout, without) < 0 ? EXIT_BAD_FILE : 0;
	size_t m = lin_score_matched(s), n = lin_score_labels(s);
	if (!rc && !lin_score_in_process(s)) {
		fprintf(stderr,
			"lineage-explain: --score %s: the traces hold no explained launch of "
			"the process its header names (pid and host)\n",
			truth);
		rc = EXIT_NOTHING;
	} else if (!rc && !m) {
		fprintf(stderr,
			"lineage-explain: --score %s: none of its labels matched an explained "
			"launch of the traces (their kernels' grid ids, memcpys' and memsets' "
			"start times)\n",
			truth);
		rc = EXIT_NOTHING;
	} else if (!rc && m < n) {
		fprintf(stderr,
			"lineage-explain: --score %s: %zu of %zu labels matched no explained "
			"launch (not joined, or a key twice): scored as unknown or left out "
			"(unmatched=, conflicting= in the SUMMARY lines)\n",
			truth, n - m, n);
	}
	lin_score_free(s);
	return rc;
}

static int run_with(char **paths, int n, const char *from, const struct lin_xopts *xo, bool json,
		    const char *perfetto, const char *otlp, const char *truth, const char *without,
		    const char **names, size_t *nadded);

/* Every input opens as a regular file, checked before --verdicts is opened and before any
 * report (no report of zeros, as lineage-validate): a missing or unreadable file, a
 * directory or a FIFO (never opened: it would block) is one error naming it
 * (EXIT_BAD_FILE). An output (--verdicts, --export-perfetto) that is an input (a trace,
 * the --score file) would overwrite it, and two outputs that are one path each other:
 * refused (EXIT_USAGE). Return 0 or the exit status. */
static int check_paths(char **paths, int n, const char *truth, const char *verdicts,
		       const char *perfetto, const char *otlp)
{
	for (int i = 0; i < n; i++) {
		char err[256];
		if (lin_imp_detect(paths[i], err, sizeof(err), NULL) < 0) {
			fprintf(stderr, "lineage-explain: %s: %s\n", paths[i], err);
			return EXIT_BAD_FILE;
		}
	}
	const char *out[] = { verdicts, perfetto, otlp };
	const char *opt[] = { "--verdicts", "--export-perfetto", "--export-otlp" };
	char msg[PATH_MAX + 128];
	for (int i = 0; i < 3; i++) {
		if (!out[i])
			continue;
		const char *hit = lin_imp_output_clash(out[i], (const char *const *)paths, (size_t)n);
		if (!hit)
			hit = lin_imp_output_clash(out[i], &truth, truth ? 1 : 0);
		if (hit) {
			snprintf(msg, sizeof(msg), "%s %s is the input %s: it would be overwritten",
				 opt[i], out[i], hit);
			return usage_error(msg);
		}
	}
	for (int i = 0; i < 3; i++)
		for (int j = i + 1; j < 3; j++)
			if (out[i] && out[j] && !strcmp(out[i], out[j])) {
				snprintf(msg, sizeof(msg), "%s and %s are one file", opt[i], opt[j]);
				return usage_error(msg);
			}
	return 0;
}

/* Explain @paths; --verdicts is opened and closed here. Return the exit status. */
static int run(char **paths, int n, const char *from, const struct lin_xopts *xo_in, bool json,
	       const char *perfetto, const char *otlp, const char *truth, const char *without,
	       const char *verdicts)
{
	int bad = check_paths(paths, n, truth, verdicts, perfetto, otlp);
	if (bad)
		return bad;
	struct lin_xopts xo2 = *xo_in;
	const struct lin_xopts *xo = &xo2;
	/* --verdicts names files by the joiner's index: the order they are added. */
	const char **names = calloc((size_t)n + 1, sizeof(*names));
	if (!names) {
		fprintf(stderr, "lineage-explain: out of memory\n");
		return EXIT_NOMEM;
	}
	size_t nadded = 0;
	if (verdicts) {
		xo2.verdicts = fopen(verdicts, "w");
		if (!xo2.verdicts) {
			fprintf(stderr, "lineage-explain: --verdicts: %s: %s\n", verdicts,
				strerror(errno));
			free(names);
			return EXIT_BAD_FILE;
		}
		xo2.names = names;
		xo2.nnames = (size_t)n;
	}
	int rc = run_with(paths, n, from, xo, json, perfetto, otlp, truth, without, names, &nadded);
	if (xo2.verdicts && (ferror(xo2.verdicts) | fclose(xo2.verdicts)) != 0) {
		fprintf(stderr, "lineage-explain: --verdicts: %s: %s\n", verdicts, strerror(errno));
		if (!rc || rc == EXIT_NOTHING)
			rc = EXIT_BAD_FILE;
	}
	free(names);
	return rc;
}

/* --per-request: something was attributed, and the split conserved the total. */
static int per_request_status(const struct lin_explain *x)
{
	uint64_t dropped, missing, untimed;
	lin_explain_rq_missing(x, &dropped, &missing, &untimed);
	if (dropped || missing || untimed) {
		fprintf(stderr,
			"lineage-explain: --per-request: the GPU time is incomplete: %" PRIu64
			" records were dropped, %" PRIu64 " launches have no GPU record and %" PRIu64
			" records have no duration that counts (no start or end, or past 2^64 ns "
			"in all; lineage-validate says where)\n",
			dropped, missing, untimed);
		return EXIT_NOTHING;
	}
	int64_t res = lin_explain_rq_residual(x);
	if (res) {
		fprintf(stderr,
			"lineage-explain: --per-request: the requests' GPU time and the unattributed "
			"line differ from the total by %" PRId64 " ns\n",
			res);
		return EXIT_NOTHING;
	}
	if (!lin_explain_rq_attributed(x)) {
		fprintf(stderr, "lineage-explain: --per-request: no GPU record is joined to a request "
				"(run lineage-validate for why; an imported trace names ops, not "
				"requests)\n");
		return EXIT_NOTHING;
	}
	return 0;
}

static int run_with(char **paths, int n, const char *from, const struct lin_xopts *xo, bool json,
		    const char *perfetto, const char *otlp, const char *truth, const char *without,
		    const char **names, size_t *nadded)
{
	struct lin_explain *x = lin_explain_create(xo);
	struct lin_joiner_opts vo = { 0 };
	vo.allow_empty = true;
	if (x)
		vo.tool = lin_explain_tool(x);
	struct lin_joiner *v = x ? lin_joiner_create(&vo) : NULL;
	if (!v) {
		lin_explain_free(x);
		fprintf(stderr, "lineage-explain: out of memory\n");
		return EXIT_NOMEM;
	}
	int rc = 0;
	struct stat *seen = calloc((size_t)n, sizeof(*seen));
	if (!seen) {
		lin_joiner_free(v);
		lin_explain_free(x);
		fprintf(stderr, "lineage-explain: out of memory\n");
		return EXIT_NOMEM;
	}
	for (int i = 0; i < n && !rc; i++) {
		/* A file given twice (by any path) is read once: its records are the same. */
		bool again = false;
		if (stat(paths[i], &seen[i]) == 0 && S_ISREG(seen[i].st_mode))
			for (int j = 0; j < i && !again; j++)
				again = seen[j].st_dev == seen[i].st_dev &&
					seen[j].st_ino == seen[i].st_ino && S_ISREG(seen[j].st_mode);
		if (again) {
			fprintf(stderr, "lineage-explain: %s: given twice, read once\n", paths[i]);
			memset(&seen[i], 0, sizeof(seen[i]));
			continue;
		}
		names[(*nadded)++] = paths[i];
		rc = add(v, paths[i], from);
	}
	free(seen);
	if (rc) {
		lin_joiner_free(v);
		lin_explain_free(x);
		return rc;
	}
	lin_joiner_finish(v);
	const struct lin_join_summary *vs = lin_joiner_summary(v);
	if (lin_joiner_oom(v) || lin_explain_build(x, v) < 0) {
		fprintf(stderr, "lineage-explain: out of memory\n");
		lin_joiner_free(v);
		lin_explain_free(x);
		return EXIT_NOMEM;
	}
	int score_rc = 0;
	if (xo->per_request)
		(json ? lin_explain_per_request_json : lin_explain_per_request_text)(x, stdout);
	else if (truth)
		score_rc = score(truth, x, v, without);
	else if (json)
		lin_explain_report_json(x, stdout);
	else
		lin_explain_report_text(x, stdout);
	bool out_failed = fflush(stdout) != 0 || ferror(stdout);
	const struct lin_xsummary *s = lin_explain_summary(x);
	if (vs->file_errors) {
		uint64_t off = 0;
		const char *file = "";
		const char *msg = lin_joiner_error(v, &off, &file);
		fprintf(stderr, "lineage-explain: %s: byte %" PRIu64 ": %s\n", file, off,
			msg[0] ? msg : "out of memory");
		rc = EXIT_BAD_FILE;
	} else if (!s->gpu_records) {
		fprintf(stderr, "lineage-explain: no GPU record in the input: nothing to explain\n");
		rc = EXIT_NOTHING;
	} else if (xo->per_request) {
		rc = per_request_status(x);
	} else if (!s->explained && s->epoch_only) {
		fprintf(stderr,
			"lineage-explain: none of the %" PRIu64
			" GPU records is joined to a request: %" PRIu64
			" are joined to epochs that name none\n",
			s->gpu_records, s->epoch_only);
		rc = EXIT_NOTHING;
	} else if (!s->explained) {
		fprintf(stderr,
			"lineage-explain: none of the %" PRIu64 " GPU records is joined to a request "
			"(run lineage-validate for why)\n",
			s->gpu_records);
		rc = EXIT_NOTHING;
	} else if (s->explained == s->no_start) {
		fprintf(stderr, "lineage-explain: no explained GPU record has a known start (no "
				"timestamps or no clock record)\n");
		rc = EXIT_NOTHING;
	} else if (!s->with_statements) {
		fprintf(stderr, "lineage-explain: no explained GPU record has a known stretch before its "
				"start (its marks are unknown or out of order)\n");
		rc = EXIT_NOTHING;
	}
	if (!rc && xo->have_request && !lin_explain_listed(x)) {
		fprintf(stderr, "lineage-explain: no explained launch of request %" PRIu64 "\n",
			xo->request);
		rc = EXIT_NOTHING;
	}
	if (!rc || (score_rc && score_rc != EXIT_NOTHING))
		rc = score_rc ? score_rc : rc;
	if (out_failed) {
		fprintf(stderr, "lineage-explain: writing the report to standard output failed\n");
		rc = EXIT_BAD_FILE;
	}
	if (perfetto && (xo->per_request ? lin_explain_per_request_perfetto(x, perfetto)
					 : lin_explain_perfetto(x, perfetto)) < 0) {
		fprintf(stderr, "lineage-explain: --export-perfetto %s: %s\n", perfetto, strerror(errno));
		rc = EXIT_BAD_FILE;
	}
	char err[PATH_MAX + 256];
	if (otlp && lin_explain_per_request_otlp(x, v, otlp, err, sizeof(err)) < 0) {
		fprintf(stderr, "lineage-explain: --export-otlp: %s\n", err);
		rc = errno == ENOMEM ? EXIT_NOMEM : EXIT_BAD_FILE;
	}
	lin_joiner_free(v);
	lin_explain_free(x);
	return rc;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "request", required_argument, NULL, 'r' },
		{ "top", required_argument, NULL, 't' },
		{ "export-perfetto", required_argument, NULL, 'P' },
		{ "export-otlp", required_argument, NULL, 'O' },
		{ "from", required_argument, NULL, 'F' },
		{ "slow-factor", required_argument, NULL, 's' },
		{ "score", required_argument, NULL, 'S' },
		{ "without", required_argument, NULL, 'W' },
		{ "peer-labels", required_argument, NULL, 'B' },
		{ "verdicts", required_argument, NULL, 'D' },
		{ "per-request", no_argument, NULL, 'Q' },
		{ "split", required_argument, NULL, 'L' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	bool json = false;
	const char *from = NULL, *perfetto = NULL, *truth = NULL, *without = "", *verdicts = NULL;
	const char *otlp = NULL;
	struct lin_xopts xo = { .slow_factor = 1.5, .min_samples = 5, .top = 10 };
	bool split = false;
	int c;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "hV", longopts, NULL)) != -1) {
		switch (c) {
		case 'j': json = true; break;
		case 'P': perfetto = optarg; break;
		case 'O': otlp = optarg; break;
		case 'F': from = optarg; break;
		case 'r':
			if (!parse_u64(optarg, &xo.request))
				return usage_error("--request takes a request id (an unsigned integer)");
			xo.have_request = true;
			break;
		case 't': {
			uint64_t t;
			if (!parse_u64(optarg, &t) || t > 1000000000)
				return usage_error("--top takes an integer 0..1000000000");
			xo.top = (size_t)t;
			break;
		}
		case 's': {
			char *end;
			errno = 0;
			double f = strtod(optarg, &end);
			if (errno || *end || !*optarg || !(f > 1.0) || f > 1e6)
				return usage_error("--slow-factor takes a number above 1");
			xo.slow_factor = f;
			break;
		}
		case 'S': truth = optarg; break;
		case 'B': {
			char *eq = strchr(optarg, '=');
			if (!eq || eq == optarg || !eq[1])
				return usage_error("--peer-labels takes NAME=FILE");
			*eq = 0;
			peer_name = optarg;
			peer_path = eq + 1;
			break;
		}
		case 'Q': xo.per_request = true; break;
		case 'L':
			if (!strcmp(optarg, "equal"))
				xo.split_equal = true;
			else if (strcmp(optarg, "tokens"))
				return usage_error("--split takes tokens or equal");
			split = true;
			break;
		case 'D': verdicts = optarg; break;
		case 'W':
			if (parse_without(optarg, &xo.without) < 0)
				return usage_error(
					"--without takes a comma-separated list of latency, "
					"stream-order, event-wait, handoff, host-sched, occupancy, graph-edge");
			without = optarg;
			break;
		case 'h': fputs(usage_text, stdout); return 0;
		case 'V':
			printf("lineage-explain %d.%d.%d (trace format %d.%d)\n", LIN_VERSION_MAJOR,
			       LIN_VERSION_MINOR, LIN_VERSION_PATCH, LIN_TRACE_FORMAT_MAJOR,
			       LIN_TRACE_FORMAT_MINOR);
			return 0;
		default: return usage_error("unknown option or missing argument");
		}
	}
	if (optind >= argc)
		return usage_error("no trace file given");
	if (from && strcmp(from, "kineto") && strcmp(from, "nsys"))
		return usage_error("--from takes kineto or nsys");
	if (truth && (json || perfetto || xo.have_request))
		return usage_error("--score prints the scores: it takes no --json, --export-perfetto or "
				   "--request");
	if (peer_path && !truth)
		return usage_error("--peer-labels is scored against a cause truth: it needs --score");
	if (split && !xo.per_request)
		return usage_error("--split goes with --per-request");
	if (otlp && !xo.per_request)
		return usage_error("--export-otlp goes with --per-request");
	if (xo.per_request && (truth || xo.have_request))
		return usage_error("--per-request lists every request: it takes no --score or --request");
	if (xo.per_request)
		xo.top = 1; /* the ledgers' own report is not printed */
	if (truth)
		xo.keep_all = true; /* every launch with a label is scored */
	return run(argv + optind, argc - optind, from, &xo, json, perfetto, otlp, truth, without,
		   verdicts);
}
