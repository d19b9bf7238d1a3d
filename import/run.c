/* SPDX-License-Identifier: MIT */
/*
 * run.c - the command-line entry of the importers: read each file with its reader, join,
 * report into the joiner, and say why when a file or the run holds no GPU record
 * (docs/importers.md, "No vacuous pass").
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "imp.h"

#define DETAIL 192 /* struct lin_finding.detail */

/* What one file held, for the no-GPU-record messages. */
struct fstat {
	uint64_t launches, gpu;
	char why[DETAIL];
};

static void count(const struct lin_imp *m, struct fstat *st)
{
	for (size_t i = 0; i < m->n; i++) {
		st->launches += m->ev[i].kind == LIN_IMP_LAUNCH;
		st->gpu += m->ev[i].kind >= LIN_IMP_KERNEL;
	}
}

/* Why a Kineto file has no GPU record, in words. */
static void why_kineto(const struct lin_imp *m, const struct fstat *st, char *buf, size_t n)
{
	if (st->launches && m->profiler_ranges) {
		snprintf(buf, n,
			 "%llu launch API events, no kernel/memcpy/memset event; %llu "
			 "cuda_profiler_range events: CUPTI range-profiler mode records counters, not "
			 "GPU activity",
			 (unsigned long long)st->launches, (unsigned long long)m->profiler_ranges);
		return;
	}
	if (st->launches) {
		snprintf(buf, n,
			 "%llu launch API events (cuda_runtime/cuda_driver) and no kernel, "
			 "memcpy or memset event: GPU activity was not collected",
			 (unsigned long long)st->launches);
		return;
	}
	size_t w = (size_t)snprintf(buf, n, "no GPU activity among categories:");
	for (unsigned i = 0; i < m->ncats && w < n; i++)
		w += (size_t)snprintf(buf + w, n - w, "%s %s", i ? "," : "", m->cats[i].name);
	if (m->cats_other && w < n)
		snprintf(buf + w, n - w, ", and more");
}

static void why_nsys(const struct lin_imp *m, const struct fstat *st, char *buf, size_t n)
{
	static const char *const t[] = { "KERNEL", "MEMCPY", "MEMSET" };
	size_t w = (size_t)snprintf(buf, n, "%llu CUDA API rows and no GPU activity row (",
				    (unsigned long long)st->launches);
	for (int i = 0; i < 3 && w < n; i++)
		w += (size_t)snprintf(buf + w, n - w, "%sCUPTI_ACTIVITY_KIND_%s %s", i ? ", " : "",
				      t[i], m->gpu_tables[i] ? "empty" : "absent");
	if (w < n)
		snprintf(buf + w, n - w, ")");
}

/* Write the model to @out with @fn; on failure the file's error says so. */
static int export_one(struct lin_jfile *f, struct lin_join_summary *sum,
		      int (*fn)(const struct lin_imp *, const char *), const struct lin_imp *m,
		      const char *out)
{
	if (fn(m, out) == 0)
		return 0;
	snprintf(f->err, sizeof(f->err), "cannot write %s: %s", out, strerror(errno));
	if (!f->failed) {
		f->failed = true;
		f->err_off = 0;
		sum->file_errors++;
	}
	return -1;
}

static int read_one(struct lin_joiner *v, const char *fmt, const char *path, bool export,
		    const char *perfetto, const char *kineto_json, struct fstat *st)
{
	struct lin_imp m;
	memset(&m, 0, sizeof(m));
	int fi = lin_joiner_feed_file(v, path);
	if (fi < 0)
		return -1;
	struct lin_jfile *f = lin_joiner_feed_fileat(v, (unsigned)fi);
	struct lin_join_summary *sum = lin_joiner_feed_summary(v);
	bool kineto = !strcmp(fmt, "kineto");
	int r = kineto ? lin_imp_kineto(&m, path, f) : lin_imp_nsys(&m, path, f);
	f->records = m.records;
	sum->records += m.records;
	sum->bytes += f->size;
	if (r < 0) {
		f->failed = true;
		sum->file_errors++;
	}
	lin_imp_join(v, &m, (uint32_t)fi); /* what was read before an error counts */
	lin_joiner_feed_model(v, (uint32_t)fi, &m);
	count(&m, st);
	(kineto ? why_kineto : why_nsys)(&m, st, st->why, sizeof(st->why));
	if (export) {
		lin_imp_meta_sort(&m);
		if (perfetto && export_one(f, sum, lin_imp_perfetto, &m, perfetto) < 0)
			r = -1;
		if (kineto_json && export_one(f, sum, lin_imp_kineto_out, &m, kineto_json) < 0)
			r = -1;
	}
	lin_imp_free(&m);
	return r;
}

/*
 * No vacuous pass. A run without any GPU record gets the join layer's no_gpu_records
 * finding (lin_joiner_finish); here its detail says why. In a run that has GPU records,
 * each file that launched and got none gets its own finding.
 */
static void no_gpu(struct lin_joiner *v, const struct fstat *st, int n, unsigned first_file)
{
	if (lin_joiner_allow_empty(v))
		return;
	struct lin_join_summary *sum = lin_joiner_feed_summary(v);
	if (!sum->gpu_records) {
		char why[DETAIL];
		if (n == 1)
			snprintf(why, sizeof(why), "%s", st[0].why);
		else
			snprintf(why, sizeof(why), "none in %d files; the first: %.150s", n, st[0].why);
		lin_joiner_feed_empty_why(v, why);
		return;
	}
	static const char *const nm[] = { "launches" };
	for (int i = 0; i < n; i++) {
		const struct lin_jfile *f = lin_joiner_file(v, first_file + (unsigned)i);
		if (f->failed || !st[i].launches || st[i].gpu)
			continue;
		sum->structural++;
		struct lin_finding *fd = lin_joiner_feed_finding(v, "structural", "no_gpu_records",
								 first_file + (unsigned)i, 0, 0, 1,
								 nm, &st[i].launches);
		if (fd)
			snprintf(fd->detail, sizeof(fd->detail), "%s", st[i].why);
	}
}

int lin_imp_run(struct lin_joiner *v, const char *const *fmts, char *const *paths, int n,
		const char *perfetto, const char *kineto)
{
	for (int i = 0; i < n; i++) {
		const char *lacks = NULL;
		if ((strcmp(fmts[i], "kineto") && strcmp(fmts[i], "nsys")) ||
		    !lin_imp_have(fmts[i], &lacks))
			return 64;
	}
	struct fstat *st = calloc((size_t)n + 1, sizeof(*st));
	if (!st) {
		lin_joiner_feed_oom(v);
		return -1;
	}
	unsigned first = lin_joiner_nfiles(v);
	int rc = 0;
	for (int i = 0; i < n; i++)
		if (read_one(v, fmts[i], paths[i], (perfetto || kineto) && i == n - 1, perfetto,
			     kineto, &st[i]) < 0)
			rc = -1;
	if (!lin_joiner_oom(v) && (int)(lin_joiner_nfiles(v) - first) == n)
		no_gpu(v, st, n, first);
	free(st);
	return rc;
}
