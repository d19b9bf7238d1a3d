/* SPDX-License-Identifier: MIT */
/*
 * access.c - the join layer's edges: the getters its tools read the joined run through
 * (join.h) and the calls its feeders, the importers, make (feed.h). Nothing in join/ calls
 * them.
 */
#include <stdio.h>

#include "jstate.h"

unsigned lin_joiner_nfiles(const struct lin_joiner *v) { return v->nfiles; }

const struct lin_jfile *lin_joiner_file(const struct lin_joiner *v, unsigned i)
{
	return i < v->nfiles ? &v->files[i] : NULL;
}

size_t lin_joiner_nfindings(const struct lin_joiner *v) { return v->findings.n; }

const struct lin_finding *lin_joiner_finding(const struct lin_joiner *v, size_t i)
{
	return i < v->findings.n ? lin_vec_at(&v->findings, i) : NULL;
}

int lin_joiner_feed_file(struct lin_joiner *v, const char *name)
{
	int fi = lin_j_new_file(v, name, false);
	if (fi < 0) {
		v->oom = true;
		return -1;
	}
	v->sum.files++;
	return fi;
}

struct lin_jfile *lin_joiner_feed_fileat(struct lin_joiner *v, unsigned fi)
{
	return fi < v->nfiles ? &v->files[fi] : NULL;
}

struct lin_join_summary *lin_joiner_feed_summary(struct lin_joiner *v) { return &v->sum; }

struct lin_finding *lin_joiner_feed_finding(struct lin_joiner *v, const char *kind, const char *cause,
					    uint32_t file, uint64_t offset, uint64_t index,
					    int nids, const char *const *names, const uint64_t *ids)
{
	return lin_j_finding(v, kind, cause, file, offset, index, nids, names, ids);
}

void lin_joiner_feed_verdict(struct lin_joiner *v, const struct lin_gpu_verdict *vd)
{
	if (v->opts.tool.gpu)
		v->opts.tool.gpu(v->opts.tool.arg, vd);
}

void lin_joiner_feed_model(struct lin_joiner *v, uint32_t fi, const struct lin_imp *m)
{
	if (v->opts.tool.model)
		v->opts.tool.model(v->opts.tool.arg, fi, m);
}

void lin_joiner_feed_oom(struct lin_joiner *v) { v->oom = true; }

bool lin_joiner_allow_empty(const struct lin_joiner *v) { return v->opts.allow_empty; }

void lin_joiner_feed_empty_why(struct lin_joiner *v, const char *why)
{
	snprintf(v->empty_why, sizeof(v->empty_why), "%s", why);
}
