/* SPDX-License-Identifier: MIT */
/* findings.c - the findings the join engine lists (the bottom of the join layer: it calls
 * nothing of it). */
#include <string.h>

#include "jstate.h"

struct lin_finding *lin_j_finding(struct lin_joiner *v, const char *kind, const char *cause,
				  uint32_t file, uint64_t offset, uint64_t index, int nids,
				  const char *const *names, const uint64_t *ids)
{
	v->sum.findings++;
	if (v->findings.n >= v->opts.max_findings)
		return NULL;
	struct lin_finding *f = lin_vec_push(&v->findings);
	if (!f) {
		v->oom = true;
		return NULL;
	}
	f->kind = kind;
	f->cause = cause;
	f->file = file;
	f->offset = offset;
	f->index = index;
	f->detail[0] = 0;
	f->nids = nids > LIN_MAX_IDS ? LIN_MAX_IDS : nids;
	for (int i = 0; i < f->nids; i++) {
		f->idname[i] = names[i];
		f->id[i] = ids[i];
	}
	return f;
}

void lin_j_structural(struct lin_joiner *v, const char *cause, uint32_t file, const struct lin_rec *r,
		      int nids, const char *const *names, const uint64_t *ids)
{
	v->sum.structural++;
	lin_j_finding(v, "structural", cause, file, r->offset, r->index, nids, names, ids);
}
