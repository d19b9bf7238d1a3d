/* SPDX-License-Identifier: MIT */
/*
 * otlp_find.c - a validator run over the exported files: its findings, indexed by the
 * (file, offset) of the record they are about, and its verdict on every GPU record. A
 * separate unit: it sees the validator's state (vstate.h), which the span model does not
 * need.
 */
#include <string.h>

#include "otlp_model.h"
#include "join.h"

/* The GPU record at (@file, @offset): m->gpus is in file order, then offset order. */
static struct xgpu *gpu_at(const struct xmodel *m, uint32_t file, uint64_t offset)
{
	size_t lo = 0, hi = m->gpus.n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		struct xgpu *g = lin_vec_at(&m->gpus, mid);
		if (g->file == file && g->offset == offset)
			return g;
		if (g->file < file || (g->file == file && g->offset < offset))
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static void on_verdict(void *arg, const struct lin_gpu_verdict *vd)
{
	struct xgpu *g = gpu_at(arg, vd->file, vd->offset);
	if (!g)
		return;
	g->join = (uint8_t)vd->join;
	g->epoch = vd->epoch;
	g->why = vd->why;
}

void lin_xmodel_load_findings(struct xmodel *m, const char *const *files, int n)
{
	struct lin_joiner_opts o = { .max_findings = (size_t)-1,
				     .tool = { .gpu = on_verdict, .arg = m } };
	struct lin_joiner *v = lin_joiner_create(&o);
	if (!v) {
		m->oom = true;
		return;
	}
	for (int i = 0; i < n; i++)
		lin_joiner_add_file(v, files[i]);
	lin_joiner_finish(v);
	for (size_t i = 0; i < lin_joiner_nfindings(v) && !m->oom; i++) {
		const struct lin_finding *f = lin_joiner_finding(v, i);
		if (!strcmp(f->kind, "note"))
			continue;
		struct xfind *x = lin_vec_push(&m->finds);
		if (!x)
			break;
		*x = (struct xfind){ .kind = f->kind,
				     .cause = f->cause,
				     .offset = f->offset,
				     .next = LIN_NIL,
				     .file = f->file };
		x->ncand = f->ncand < 4 ? (uint32_t)f->ncand : 4;
		memcpy(x->cand, f->cand, x->ncand * sizeof(uint64_t));
		uint64_t *head;
		bool fresh;
		if (!(head = lin_vtab_get(&m->find_ix, f->file, f->offset, &fresh))) {
			m->oom = true;
			break;
		}
		if (fresh) {
			*head = m->finds.n - 1;
			continue;
		}
		struct xfind *t = lin_vec_at(&m->finds, *head);
		while (t->next != LIN_NIL)
			t = lin_vec_at(&m->finds, t->next);
		t->next = m->finds.n - 1;
	}
	lin_joiner_free(v);
}
