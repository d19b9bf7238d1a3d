/* SPDX-License-Identifier: MIT */
/* main.c - the lineage-validate command line. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lineage/version.h"
#include "validate.h"
#include "import/imp.h"
#include "export/otlp.h"

#define EXIT_USAGE 64

static const char usage_text[] =
"NAME\n"
"    lineage-validate - rebuild and check every lineage join in lineage trace files\n"
"\n"
"SYNOPSIS\n"
"    lineage-validate [--json] [--expect TRUTH]... [--max-findings N] [--allow-empty] TRACE...\n"
"    lineage-validate --from kineto|nsys [--json] [--export-perfetto OUT.json] FILE...\n"
"    lineage-validate --export-otlp OUT.json [--json] [--max-findings N] TRACE...\n"
"    lineage-validate --help | --version\n"
"\n"
"DESCRIPTION\n"
"    Streams each TRACE (trace format %d.x, docs/trace-format.md), rebuilds the chain\n"
"    GPU record -> correlation -> external correlation -> epoch -> requests (and, for\n"
"    graph kernels, clone -> graph node -> epoch), and classifies every kernel, memcpy\n"
"    and memset record as observed, inferred (rule named), lost (cause named) or\n"
"    ambiguous (candidates listed). It also checks token and scope discipline, time\n"
"    order where known, duplicate and undefined ids, and reused correlation ids.\n"
"    Several files are one run; ids are keyed by the (host, pid) of each file's header.\n"
"\n"
"OPTIONS\n"
"    --json              print one JSON object on stdout (schema: docs/validator.md)\n"
"    --expect TRUTH      compare the joins with a truth file (may be repeated, one per\n"
"                        process); adds truth_records and matched to the report\n"
"    --max-findings N    list at most N findings (default 100; all are counted)\n"
"    --allow-empty       let a run without any GPU record exit 0 when nothing else is\n"
"                        wrong (by default it is the finding no_gpu_records, exit 1:\n"
"                        an empty trace proves no join)\n"
"    --from FMT          read foreign traces instead: kineto (PyTorch profiler JSON,\n"
"                        .json or .json.gz) or nsys (Nsight Systems SQLite export);\n"
"                        same report and exit status (docs/importers.md)\n"
"    --export-perfetto OUT.json\n"
"                        also write the last trace as Chrome/Perfetto JSON with flow\n"
"                        arrows request -> handoff -> launch -> kernel (with --from:\n"
"                        op -> launch -> kernel)\n"
"    --export-otlp OUT.json\n"
"                        also write the traces as OpenTelemetry spans: OTLP/JSON\n"
"                        ExportTraceServiceRequest documents, one per line, for an\n"
"                        OpenTelemetry collector (docs/fleet.md); counts go to stderr\n"
"    -h, --help          show this help and exit\n"
"    -V, --version       show the version and exit\n"
"\n"
"EXIT STATUS\n"
"    0   at least one GPU record was read, every GPU record is joined (observed or\n"
"        inferred), every launch is accounted for, nothing is incorrect and there are no\n"
"        structural findings\n"
"    1   lost, ambiguous or incorrect joins, or structural findings\n"
"    2   a file is unreadable, malformed, truncated or of an unsupported version (the\n"
"        message names the file, the byte offset and what was expected)\n"
"    64  usage error\n"
"\n"
"EXAMPLES\n"
"    lineage-validate rank0.lt rank1.lt\n"
"    lineage-validate --json --max-findings 10 run.lt | jq .lost_by_cause\n"
"    lineage-validate --expect run.truth run.lt\n";

/* --export-otlp: write the export and its counts (stderr). Return 0 or -1. */
static int export_otlp(const char *out, char **files, int n)
{
	struct lin_otlp_stats st;
	char err[512];
	if (lin_otlp_export((const char *const *)files, n, out, &st, err, sizeof(err)) != 0) {
		fprintf(stderr, "lineage-validate: --export-otlp: %s\n", err);
		return -1;
	}
	fprintf(stderr, "lineage-validate: otlp: %s: documents=%llu resources=%llu spans=%llu "
		"links=%llu events=%llu remote_requests=%llu remote_joined=%llu "
		"cross_process_gpu=%llu\n", out, (unsigned long long)st.documents,
		(unsigned long long)st.resources, (unsigned long long)st.spans,
		(unsigned long long)st.links, (unsigned long long)st.events,
		(unsigned long long)st.remote_requests, (unsigned long long)st.remote_joined,
		(unsigned long long)st.cross_gpu);
	return 0;
}

static int usage_error(const char *msg)
{
	fprintf(stderr, "lineage-validate: %s\nTry 'lineage-validate --help'.\n", msg);
	return EXIT_USAGE;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "expect", required_argument, NULL, 'e' },
		{ "max-findings", required_argument, NULL, 'm' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ "from", required_argument, NULL, 'F' },
		{ "export-perfetto", required_argument, NULL, 'P' },
		{ "export-otlp", required_argument, NULL, 'O' },
		{ "allow-empty", no_argument, NULL, 'A' },
		{ NULL, 0, NULL, 0 },
	};
	bool json = false;
	struct lin_vopts opts = { 100 };
	const char *truths[64];
	int ntruth = 0, c;
	const char *from = NULL, *perfetto = NULL;
	const char *otlp = NULL;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "hV", longopts, NULL)) != -1) {
		switch (c) {
		case 'j': json = true; break;
		case 'F': from = optarg; break;
		case 'P': perfetto = optarg; break;
		case 'O': otlp = optarg; break;
		case 'A': opts.allow_empty = true; break;
		case 'e':
			if (ntruth == 64)
				return usage_error("too many --expect files (limit 64)");
			truths[ntruth++] = optarg;
			break;
		case 'm': {
			char *end;
			errno = 0;
			unsigned long long n = strtoull(optarg, &end, 10);
			if (errno || *end || !*optarg || optarg[0] == '-' || n > 1000000)
				return usage_error("--max-findings takes an integer 0..1000000");
			opts.max_findings = (size_t)n;
			break;
		}
		case 'h': printf(usage_text, 1); return 0;
		case 'V':
			printf("lineage-validate %d.%d.%d (trace format %d.%d)\n", LIN_VERSION_MAJOR,
			       LIN_VERSION_MINOR, LIN_VERSION_PATCH, LIN_TRACE_FORMAT_MAJOR,
			       LIN_TRACE_FORMAT_MINOR);
			return 0;
		default: return usage_error("unknown option or missing argument");
		}
	}
	if (optind >= argc)
		return usage_error("no trace file given");
	struct lin_validator *v = lin_validator_create(&opts);
	if (!v) {
		fprintf(stderr, "lineage-validate: out of memory\n");
		return 2;
	}
	for (int i = 0; i < ntruth; i++)
		lin_validator_add_truth(v, truths[i]);
	const char *lacks = NULL;
	if (from && strcmp(from, "kineto") && strcmp(from, "nsys")) {
		lin_validator_free(v);
		return usage_error("--from takes kineto or nsys");
	}
	if (from && !lin_imp_have(from, &lacks)) {
		lin_validator_free(v);
		fprintf(stderr, "lineage-validate: --from %s: this build lacks %s\n", from, lacks);
		return EXIT_USAGE;
	}
	if (otlp && from) {
		lin_validator_free(v);
		return usage_error("--export-otlp reads lineage traces, not --from");
	}
	if (from)
		lin_imp_run(v, from, argv + optind, argc - optind, perfetto);
	for (int i = optind; i < argc && !from; i++)
		lin_validator_add_file(v, argv[i]);
	lin_validator_finish(v);
	if (json)
		lin_validator_report_json(v, stdout);
	else
		lin_validator_report_text(v, stdout);
	int rc = lin_validator_exit_code(v);
	if (rc == 2) {
		uint64_t off = 0;
		const char *file = "";
		const char *msg = lin_validator_error(v, &off, &file);
		if (msg[0])
			fprintf(stderr, "lineage-validate: %s: byte %llu: %s\n", file,
				(unsigned long long)off, msg);
		else
			fprintf(stderr, "lineage-validate: out of memory\n");
	}
	char perr[300];
	if (perfetto && !from &&
	    lin_imp_lineage_perfetto(argv[argc - 1], perfetto, perr, sizeof(perr)) != 0) {
		fprintf(stderr, "lineage-validate: --export-perfetto: %s: %s\n", argv[argc - 1], perr);
		rc = 2;
	}
	if (otlp && export_otlp(otlp, argv + optind, argc - optind) != 0)
		rc = 2;
	lin_validator_free(v);
	return rc;
}
