/* SPDX-License-Identifier: MIT */
/* main.c - the lineage-validate command line. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <inttypes.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lineage/version.h"
#include "join.h"
#include "report.h"
#include "truth.h"
#include "imp.h"
#include "export/kineto.h"
#include "export/otlp.h"

#define EXIT_USAGE 64
#define EXIT_BAD_FILE 2
#define DEFAULT_MAX_FINDINGS 20

static const char usage_text[] =
	"NAME\n"
	"    lineage-validate - rebuild and check every lineage join in lineage trace files\n"
	"\n"
	"SYNOPSIS\n"
	"    lineage-validate [--json] [--expect TRUTH]... [--max-findings N] [--allow-empty]\n"
	"                     [--verdicts OUT.tsv] TRACE...\n"
	"    lineage-validate [--from kineto|nsys] [--json] [--export-perfetto OUT.json] FILE|DIR...\n"
	"    lineage-validate --export-otlp OUT.json [--json] [--max-findings N] TRACE...\n"
	"    lineage-validate --export-kineto OUT.json [--json] TRACE...\n"
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
	"    Each file's kind is read from its first bytes: a lineage trace (MessagePack), a\n"
	"    PyTorch profiler / Kineto trace-event JSON file (.json or .json.gz) or an Nsight\n"
	"    Systems SQLite export (docs/importers.md). A directory stands for every file in\n"
	"    it that is recognisably a trace (one file per rank, as PyTorch writes them), read\n"
	"    as one run; other files are named on stderr (skipped).\n"
	"\n"
	"OPTIONS\n"
	"    --json              print one JSON object on stdout (schema: docs/validator.md)\n"
	"    --expect TRUTH      compare the joins with a truth file (may be repeated, one per\n"
	"                        process); adds truth_records and matched to the report\n"
	"    --max-findings N    list at most N findings (default 20; all are counted, and the\n"
	"                        report says how many more there are)\n"
	"    --allow-empty       let a run without any GPU record exit 0 when nothing else is\n"
	"                        wrong (by default it is the finding no_gpu_records, exit 1:\n"
	"                        an empty trace proves no join)\n"
	"    --from FMT          read every file as FMT, not by its content: kineto (PyTorch\n"
	"                        profiler JSON, .json or .json.gz) or nsys (Nsight Systems\n"
	"                        SQLite export); same report and exit status\n"
	"    --export-perfetto OUT.json\n"
	"                        also write the last trace as Chrome/Perfetto JSON with flow\n"
	"                        arrows request -> handoff -> launch -> kernel (with --from:\n"
	"                        op -> launch -> kernel)\n"
	"    --export-otlp OUT.json\n"
	"                        also write the traces as OpenTelemetry spans: OTLP/JSON\n"
	"                        ExportTraceServiceRequest documents, one per line, for an\n"
	"                        OpenTelemetry collector (docs/fleet.md); counts go to stderr\n"
	"    --export-kineto OUT.json\n"
	"                        also write the last trace as PyTorch-profiler (Kineto)\n"
	"                        trace-event JSON, for Holistic Trace Analysis, TraceLens or\n"
	"                        TensorBoard (docs/validator.md, \"Kineto export\"); a\n"
	"                        lineage trace's counts go to stderr (with --from: the\n"
	"                        imported model, written back)\n"
	"    --verdicts OUT.tsv  also write the verdict on every GPU record, one line each:\n"
	"                        file, key (byte offset; --from: event index), class\n"
	"                        (observed, inferred, lost, ambiguous), rule or cause, and\n"
	"                        the requests (--from: op:INDEX), tab-separated; the same\n"
	"                        lines as lineage-explain --verdicts (docs/validator.md)\n"
	"    -h, --help          show this help and exit\n"
	"    -V, --version       show the version and exit\n"
	"\n"
	"EXIT STATUS\n"
	"    0   at least one GPU record was read, every GPU record is joined (observed or\n"
	"        inferred), every launch is accounted for, nothing is incorrect and there are no\n"
	"        structural findings\n"
	"    1   lost, ambiguous or incorrect joins, or structural findings\n"
	"    2   a file is missing, unreadable, malformed, truncated, of an unsupported version\n"
	"        or (imported) holds no event of a category the importer reads (the message\n"
	"        names the file, the byte offset and what was expected)\n"
	"    64  usage error (an output that is one of the inputs, by any path, included:\n"
	"        refused before anything is written)\n"
	"\n"
	"EXAMPLES\n"
	"    lineage-validate rank0.lt rank1.lt\n"
	"    lineage-validate --json --max-findings 10 run.lt | jq .lost_by_cause\n"
	"    lineage-validate --expect run.truth run.lt\n"
	"    lineage-validate worker0.pt.trace.json.gz report.sqlite\n"
	"    lineage-validate --export-perfetto lineage.json ./profiler_traces/\n";

/* --export-kineto: write the last trace's export and its counts (stderr). Return 0 or -1. */
static int export_kineto(const char *out, const char *trace)
{
	struct lin_kineto_stats st;
	char err[PATH_MAX + 256];
	if (lin_kineto_export(trace, out, &st, err, sizeof(err)) != 0) {
		fprintf(stderr, "lineage-validate: --export-kineto: %s\n", err);
		return -1;
	}
	fprintf(stderr,
		"lineage-validate: kineto: %s: annotations=%llu cpu_ops=%llu runtime=%llu "
		"gpu=%llu cuda_sync=%llu event_waits=%llu ac2g=%llu gpu_untimed=%llu\n",
		out, (unsigned long long)st.annotations, (unsigned long long)st.ops,
		(unsigned long long)st.runtime, (unsigned long long)st.gpu,
		(unsigned long long)st.syncs, (unsigned long long)st.event_waits,
		(unsigned long long)st.flows, (unsigned long long)st.unmapped);
	return 0;
}

/* --export-otlp: write the export and its counts (stderr). Return 0 or -1. */
static int export_otlp(const char *out, char **files, int n)
{
	struct lin_otlp_stats st;
	char err[512];
	if (lin_otlp_export((const char *const *)files, n, out, &st, err, sizeof(err)) != 0) {
		fprintf(stderr, "lineage-validate: --export-otlp: %s\n", err);
		return -1;
	}
	fprintf(stderr,
		"lineage-validate: otlp: %s: documents=%llu resources=%llu spans=%llu "
		"links=%llu events=%llu remote_requests=%llu remote_joined=%llu "
		"cross_process_gpu=%llu\n",
		out, (unsigned long long)st.documents, (unsigned long long)st.resources,
		(unsigned long long)st.spans, (unsigned long long)st.links,
		(unsigned long long)st.events, (unsigned long long)st.remote_requests,
		(unsigned long long)st.remote_joined, (unsigned long long)st.cross_gpu);
	return 0;
}

static int usage_error(const char *msg)
{
	fprintf(stderr, "lineage-validate: %s\nTry 'lineage-validate --help'.\n", msg);
	return EXIT_USAGE;
}

/* The files a run reads: each argument, a directory's entries in name order. */
struct inputs {
	char **path;
	int *fmt; /* enum lin_imp_fmt */
	int n, cap;
};

static int inputs_add(struct inputs *in, const char *path, int fmt)
{
	if (in->n == in->cap) {
		int nc = in->cap ? in->cap * 2 : 16;
		char **p = realloc(in->path, (size_t)nc * sizeof(*p));
		if (!p)
			return -1;
		in->path = p;
		int *f = realloc(in->fmt, (size_t)nc * sizeof(*f));
		if (!f)
			return -1;
		in->fmt = f;
		in->cap = nc;
	}
	in->path[in->n] = strdup(path);
	if (!in->path[in->n])
		return -1;
	in->fmt[in->n++] = fmt;
	return 0;
}

static void inputs_free(struct inputs *in)
{
	for (int i = 0; i < in->n; i++)
		free(in->path[i]);
	free(in->path);
	free(in->fmt);
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every regular, non-hidden file of @dir that is recognisably a trace (lin_imp_detect), in
 * name order; others
 * (FIFOs, devices, sockets, subdirectories, dangling links, files of another kind) are
 * named on stderr and skipped, never opened when not regular. Return 0, or 2 (reported) when none is a trace. */
static int add_dir(struct inputs *in, const char *dir)
{
	DIR *d = opendir(dir);
	if (!d) {
		fprintf(stderr, "lineage-validate: %s: cannot open: %s\n", dir, strerror(errno));
		return EXIT_BAD_FILE;
	}
	char **names = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	int rc = 0;
	while ((de = readdir(d)) && !rc) {
		if (de->d_name[0] == '.')
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 32;
			char **p = realloc(names, cap * sizeof(*p));
			rc = p ? 0 : -1;
			names = p ? p : names;
		}
		if (!rc && !(names[n++] = strdup(de->d_name)))
			rc = -1;
	}
	closedir(d);
	if (n > 1)
		qsort(names, n, sizeof(*names), cmp_name);
	int found = 0;
	for (size_t i = 0; i < n && !rc; i++) {
		char path[4096], err[256];
		struct stat st;
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		if (stat(path, &st) != 0) {
			int e = errno;
			struct stat lst;
			bool dangling = e == ENOENT && lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode);
			fprintf(stderr, "lineage-validate: %s: skipped (%s)\n", path,
				dangling ? "a symbolic link to nothing" : strerror(e));
			continue;
		}
		if (!S_ISREG(st.st_mode)) {
			fprintf(stderr, "lineage-validate: %s: skipped (%s)\n", path,
				S_ISDIR(st.st_mode) ? "a directory: directories are not read "
						      "recursively"
						    : lin_imp_not_regular(st.st_mode));
			continue;
		}
		const char *why_not = NULL;
		int f = lin_imp_detect(path, err, sizeof(err), &why_not);
		if (f < 0 || why_not) { /* not recognisably a trace: left out, not an error */
			fprintf(stderr, "lineage-validate: %s: skipped (%s)\n", path,
				f < 0 ? err : why_not);
			continue;
		}
		rc = inputs_add(in, path, f);
		found++;
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	if (rc) {
		fprintf(stderr, "lineage-validate: out of memory\n");
		return EXIT_BAD_FILE;
	}
	if (!found) {
		fprintf(stderr, "lineage-validate: %s: no trace file in this directory\n", dir);
		return EXIT_BAD_FILE;
	}
	return 0;
}

/* Each argument: a file (its kind from its content) or a directory. A file that cannot be
 * opened, or is not a regular file (a FIFO, a device: never opened), is one error, before
 * any report (no report of zeros). Return 0 or 2. */
static int collect(struct inputs *in, char **args, int n)
{
	for (int i = 0; i < n; i++) {
		struct stat st;
		char err[256];
		if (stat(args[i], &st) != 0) {
			fprintf(stderr, "lineage-validate: %s: cannot open: %s\n", args[i],
				strerror(errno));
			return EXIT_BAD_FILE;
		}
		if (S_ISDIR(st.st_mode)) {
			int rc = add_dir(in, args[i]);
			if (rc)
				return rc;
			continue;
		}
		const char *why = lin_imp_not_regular(st.st_mode);
		if (why) { /* never opened: a FIFO would block the run */
			fprintf(stderr, "lineage-validate: %s: %s\n", args[i], why);
			return EXIT_BAD_FILE;
		}
		int f = lin_imp_detect(args[i], err, sizeof(err), NULL);
		if (f < 0) {
			fprintf(stderr, "lineage-validate: %s: %s\n", args[i], err);
			return EXIT_BAD_FILE;
		}
		if (inputs_add(in, args[i], f)) {
			fprintf(stderr, "lineage-validate: out of memory\n");
			return EXIT_BAD_FILE;
		}
	}
	return 0;
}

/* The importer of each input (--from for all, else by content); NULL: lineage traces.
 * Return 0, or 64 when lineage traces and imported ones are mixed. */
static int choose(const struct inputs *in, const char *from, const char **fmts, bool *import)
{
	int lineage = 0;
	for (int i = 0; i < in->n; i++) {
		fmts[i] = from ? from : lin_imp_fmt_name((enum lin_imp_fmt)in->fmt[i]);
		lineage += fmts[i] == NULL;
	}
	*import = lineage == 0;
	if (lineage && lineage != in->n)
		return usage_error("lineage traces and imported traces (Kineto JSON, Nsight "
				   "SQLite) cannot be validated in one run");
	return 0;
}

static int check_import_opts(const char *fmt, int ntruth, const char *otlp)
{
	const char *lacks = NULL;
	if (!lin_imp_have(fmt, &lacks)) {
		fprintf(stderr, "lineage-validate: %s traces: this build lacks %s\n", fmt, lacks);
		return EXIT_USAGE;
	}
	if (ntruth)
		return usage_error("--expect compares joins with the truth file of a lineage run "
				   "(its records carry the keys the truth file labels); an imported "
				   "trace has no such keys, so there is nothing to compare");
	if (otlp)
		return usage_error("--export-otlp reads lineage traces, not imported ones");
	return 0;
}

/* The report, and on exit 2 the first file error on stderr: FILE: byte N: MESSAGE (an
 * SQLite file's message names its table and rowid instead). */
static void report(struct lin_joiner *v, bool json, const struct inputs *in, const char *const *fmts)
{
	if (json)
		lin_validator_report_json(v, stdout);
	else
		lin_validator_report_text(v, stdout);
	const struct lin_join_summary *s = lin_joiner_summary(v);
	if (s->bracket_unchecked > s->bracket_checked) {
		/* Most tagged calls went unchecked: say so where a pipeline sees it. */
		fprintf(stderr,
			"lineage-validate: the bracket check could not check %" PRIu64
			" of %" PRIu64 " tagged calls (",
			s->bracket_unchecked, s->bracket_checked + s->bracket_unchecked);
		for (int i = 0, first = 1; i < LIN_UNCHK_N; i++)
			if (s->bracket_unchecked_by[i]) {
				fprintf(stderr, "%s%s %" PRIu64, first ? "" : ", ",
					lin_unchecked_name((enum lin_unchecked)i),
					s->bracket_unchecked_by[i]);
				first = 0;
			}
		fprintf(stderr, "): an external id cross-wired near a bracket's edge would go unseen "
				"there (docs/validator.md, \"The bracket check\")\n");
	}
	if (lin_joiner_exit_code(v) != 2)
		return;
	uint64_t off = 0;
	const char *file = "";
	const char *msg = lin_joiner_error(v, &off, &file);
	bool sqlite = false;
	for (int i = 0; i < in->n && !sqlite; i++)
		sqlite = fmts[i] && !strcmp(fmts[i], "nsys") && !strcmp(in->path[i], file);
	if (msg[0] && sqlite)
		fprintf(stderr, "lineage-validate: %s: %s\n", file, msg);
	else if (msg[0])
		fprintf(stderr, "lineage-validate: %s: byte %llu: %s\n", file,
			(unsigned long long)off, msg);
	else
		fprintf(stderr, "lineage-validate: out of memory\n");
}

/* --verdicts: one line per GPU record (lin_verdict_line); files by their index in the order
 * read (the --expect files first). */
struct vlist {
	FILE *out;
	const char **truths;
	int ntruth;
	const struct inputs *in;
};

static void on_verdict(void *arg, const struct lin_gpu_verdict *vd)
{
	const struct vlist *l = arg;
	int fi = (int)vd->file;
	const char *name = fi < l->ntruth              ? l->truths[fi]
			   : fi - l->ntruth < l->in->n ? l->in->path[fi - l->ntruth]
						       : "?";
	bool imp = vd->proc == LIN_VPROC_IMPORTED;
	bool joined = vd->join == LIN_JOIN_OBSERVED || vd->join == LIN_JOIN_INFERRED;
	lin_verdict_line(l->out, name, vd->offset, vd->join, vd->why,
			 imp && joined ? vd->epoch : LIN_NIL, vd->reqs, joined ? vd->nreqs : 0);
}

/* An output (--verdicts, --export-perfetto, --export-otlp, --export-kineto) that names an input (a trace, a
 * file of a directory given, an --expect file) would overwrite it, and two outputs that
 * are one path would overwrite each other: refused before anything is read or written.
 * Return 0 or EXIT_USAGE. */
static int outputs_clash(const struct inputs *in, const char **truths, int ntruth, const char *perfetto,
			 const char *otlp, const char *verdicts, const char *kineto)
{
	const char *out[] = { verdicts, perfetto, otlp, kineto };
	const char *opt[] = { "--verdicts", "--export-perfetto", "--export-otlp", "--export-kineto" };
	for (int i = 0; i < 4; i++) {
		if (!out[i])
			continue;
		const char *hit =
			lin_imp_output_clash(out[i], (const char *const *)in->path, (size_t)in->n);
		if (!hit)
			hit = lin_imp_output_clash(out[i], truths, (size_t)ntruth);
		char msg[PATH_MAX + 128];
		if (hit) {
			snprintf(msg, sizeof(msg), "%s %s is the input %s: it would be overwritten",
				 opt[i], out[i], hit);
			return usage_error(msg);
		}
		for (int j = 0; j < i; j++) {
			if (out[j] && !strcmp(out[i], out[j])) {
				snprintf(msg, sizeof(msg), "%s and %s are one file, %s", opt[j],
					 opt[i], out[i]);
				return usage_error(msg);
			}
		}
	}
	return 0;
}

/* Validate the collected inputs: lineage traces, or imported ones. Return the exit code. */
static int run(const struct lin_joiner_opts *opts_in, const struct inputs *in, const char *from,
	       const char **truths, int ntruth, bool json, const char *perfetto, const char *otlp,
	       const char *verdicts, const char *kineto)
{
	struct lin_joiner_opts o = *opts_in;
	const struct lin_joiner_opts *opts = &o;
	struct vlist vl = { NULL, truths, ntruth, in };
	if (verdicts) {
		vl.out = fopen(verdicts, "w");
		if (!vl.out) {
			fprintf(stderr, "lineage-validate: --verdicts: %s: %s\n", verdicts,
				strerror(errno));
			return EXIT_BAD_FILE;
		}
		o.tool.gpu = on_verdict;
		o.tool.arg = &vl;
	}
	const char **fmts = calloc((size_t)in->n + 1, sizeof(*fmts));
	if (!fmts) {
		fprintf(stderr, "lineage-validate: out of memory\n");
		return EXIT_BAD_FILE;
	}
	bool import;
	int rc = choose(in, from, fmts, &import);
	for (int i = 0; i < in->n && import && !rc; i++)
		rc = check_import_opts(fmts[i], ntruth, otlp);
	/* --expect: the truth comparison judges the joins (truth.h). */
	struct lin_truth *truth = !rc && ntruth ? lin_truth_create() : NULL;
	if (truth)
		o.judge = lin_truth_judge(truth);
	struct lin_joiner *v = rc || (ntruth && !truth) ? NULL : lin_joiner_create(opts);
	if (!rc && !v) {
		fprintf(stderr, "lineage-validate: out of memory\n");
		rc = EXIT_BAD_FILE;
	}
	if (rc) {
		if (vl.out)
			fclose(vl.out);
		lin_truth_free(truth);
		free(fmts);
		return rc;
	}
	for (int i = 0; i < ntruth; i++)
		lin_joiner_add_truth(v, truths[i]);
	if (import)
		lin_imp_run(v, fmts, in->path, in->n, perfetto, kineto);
	for (int i = 0; i < in->n && !import; i++)
		lin_joiner_add_file(v, in->path[i]);
	lin_joiner_finish(v);
	report(v, json, in, fmts);
	rc = lin_joiner_exit_code(v);
	char perr[300];
	const char *last = in->path[in->n - 1];
	if (perfetto && !import && lin_imp_lineage_perfetto(last, perfetto, perr, sizeof(perr))) {
		fprintf(stderr, "lineage-validate: --export-perfetto: %s: %s\n", last, perr);
		rc = EXIT_BAD_FILE;
	}
	if (otlp && export_otlp(otlp, in->path, in->n) != 0)
		rc = EXIT_BAD_FILE;
	if (kineto && !import && export_kineto(kineto, last) != 0)
		rc = EXIT_BAD_FILE;
	if (vl.out && (ferror(vl.out) | fclose(vl.out)) != 0) {
		fprintf(stderr, "lineage-validate: --verdicts: %s: %s\n", verdicts, strerror(errno));
		rc = EXIT_BAD_FILE;
	}
	vl.out = NULL;
	lin_joiner_free(v);
	lin_truth_free(truth);
	free(fmts);
	return rc;
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
		{ "export-kineto", required_argument, NULL, 'K' },
		{ "allow-empty", no_argument, NULL, 'A' },
		{ "verdicts", required_argument, NULL, 'D' },
		{ NULL, 0, NULL, 0 },
	};
	bool json = false;
	struct lin_joiner_opts opts = { DEFAULT_MAX_FINDINGS };
	const char *truths[64];
	int ntruth = 0, c;
	const char *from = NULL, *perfetto = NULL;
	const char *otlp = NULL, *verdicts = NULL, *kineto = NULL;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "hV", longopts, NULL)) != -1) {
		switch (c) {
		case 'j': json = true; break;
		case 'F': from = optarg; break;
		case 'P': perfetto = optarg; break;
		case 'O': otlp = optarg; break;
		case 'K': kineto = optarg; break;
		case 'A': opts.allow_empty = true; break;
		case 'D': verdicts = optarg; break;
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
			printf("lineage-validate %d.%d.%d (trace format %d.%d)\n",
			       LIN_VERSION_MAJOR, LIN_VERSION_MINOR, LIN_VERSION_PATCH,
			       LIN_TRACE_FORMAT_MAJOR, LIN_TRACE_FORMAT_MINOR);
			return 0;
		default: return usage_error("unknown option or missing argument");
		}
	}
	if (optind >= argc)
		return usage_error("no trace file given");
	if (from && strcmp(from, "kineto") && strcmp(from, "nsys"))
		return usage_error("--from takes kineto or nsys");
	struct inputs in = { NULL, NULL, 0, 0 };
	int rc = collect(&in, argv + optind, argc - optind);
	if (!rc)
		rc = outputs_clash(&in, truths, ntruth, perfetto, otlp, verdicts, kineto);
	if (!rc)
		rc = run(&opts, &in, from, truths, ntruth, json, perfetto, otlp, verdicts, kineto);
	inputs_free(&in);
	return rc;
}
