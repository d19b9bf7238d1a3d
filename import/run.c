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

static int add_file(struct lin_joiner *v, const char *name)
{
	struct lin_jfile *nf = realloc(v->files, (v->nfiles + 1) * sizeof(*nf));
	if (!nf)
		return -1;
	v->files = nf;
	memset(&nf[v->nfiles], 0, sizeof(*nf));
	nf[v->nfiles].name = strdup(name);
	if (!nf[v->nfiles].name)
		return -1;
	v->sum.files++;
	return (int)v->nfiles++;
}

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

static int read_one(struct lin_joiner *v, const char *fmt, const char *path, bool export,
		    const char *perfetto, struct fstat *st)
{
	struct lin_imp m;
	memset(&m, 0, sizeof(m));
	int fi = add_file(v, path);
	if (fi < 0) {
		v->oom = true;
		return -1;
	}
	struct lin_jfile *f = &v->files[fi];
	bool kineto = !strcmp(fmt, "kineto");
	int r = kineto ? lin_imp_kineto(&m, path, f) : lin_imp_nsys(&m, path, f);
	f->records = m.records;
	v->sum.records += m.records;
	v->sum.bytes += f->size;
	if (r < 0) {
		f->failed = true;
		v->sum.file_errors++;
	}
	lin_imp_join(v, &m, (uint32_t)fi); /* what was read before an error counts */
	if (v->opts.tool.model)
		v->opts.tool.model(v->opts.tool.arg, (uint32_t)fi, &m);
	count(&m, st);
	(kineto ? why_kineto : why_nsys)(&m, st, st->why, sizeof(st->why));
	if (export) {
		lin_imp_meta_sort(&m);
		if (lin_imp_perfetto(&m, perfetto) < 0) {
			snprintf(f->err, sizeof(f->err), "cannot write %s: %s", perfetto,
				 strerror(errno));
			if (!f->failed) {
				f->failed = true;
				f->err_off = 0;
				v->sum.file_errors++;
			}
			r = -1;
		}
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
	if (v->opts.allow_empty)
		return;
	if (!v->sum.gpu_records) {
		if (n == 1)
			snprintf(v->empty_why, sizeof(v->empty_why), "%s", st[0].why);
		else
			snprintf(v->empty_why, sizeof(v->empty_why),
				 "none in %d files; the first: %.150s", n, st[0].why);
		return;
	}
	static const char *const nm[] = { "launches" };
	for (int i = 0; i < n; i++) {
		const struct lin_jfile *f = &v->files[first_file + (unsigned)i];
		if (f->failed || !st[i].launches || st[i].gpu)
			continue;
		size_t before = v->findings.n;
		v->sum.structural++;
		lin_j_finding(v, "structural", "no_gpu_records", first_file + (unsigned)i, 0, 0, 1,
			      nm, &st[i].launches);
		if (v->findings.n > before) {
			struct lin_finding *fd = lin_vec_at(&v->findings, before);
			snprintf(fd->detail, sizeof(fd->detail), "%s", st[i].why);
		}
	}
}

int lin_imp_run(struct lin_joiner *v, const char *const *fmts, char *const *paths, int n,
		const char *perfetto)
{
	for (int i = 0; i < n; i++) {
		const char *lacks = NULL;
		if ((strcmp(fmts[i], "kineto") && strcmp(fmts[i], "nsys")) ||
		    !lin_imp_have(fmts[i], &lacks))
			return 64;
	}
	struct fstat *st = calloc((size_t)n + 1, sizeof(*st));
	if (!st) {
		v->oom = true;
		return -1;
	}
	unsigned first = v->nfiles;
	int rc = 0;
	for (int i = 0; i < n; i++)
		if (read_one(v, fmts[i], paths[i], perfetto && i == n - 1, perfetto, &st[i]) < 0)
			rc = -1;
	if (!v->oom && (int)(v->nfiles - first) == n)
		no_gpu(v, st, n, first);
	free(st);
	return rc;
}
