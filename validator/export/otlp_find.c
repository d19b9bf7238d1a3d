/* SPDX-License-Identifier: MIT */
/*
 * otlp_find.c - the findings of a validator run over the exported files, indexed by the
 * (file, offset) of the record they are about. A separate unit: it sees the validator's
 * state (vstate.h), which the span model does not need.
 */
#include <string.h>

#include "otlp_model.h"
#include "validate.h"
#include "vstate.h"

void lin_xmodel_load_findings(struct xmodel *m, const char *const *files, int n)
{
	struct lin_vopts o = {(size_t)-1};
	struct lin_validator *v = lin_validator_create(&o);
	if (!v) {
		m->oom = true;
		return;
	}
	for (int i = 0; i < n; i++)
		lin_validator_add_file(v, files[i]);
	lin_validator_finish(v);
	for (size_t i = 0; i < v->findings.n && !m->oom; i++) {
		const struct lin_finding *f = lin_vec_at(&v->findings, i);
		if (!strcmp(f->kind, "note"))
			continue;
		struct xfind *x = lin_vec_push(&m->finds);
		if (!x)
			break;
		*x = (struct xfind){.kind = f->kind, .cause = f->cause, .offset = f->offset,
				    .next = XNIL, .file = f->file};
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
		while (t->next != XNIL)
			t = lin_vec_at(&m->finds, t->next);
		t->next = m->finds.n - 1;
	}
	lin_validator_free(v);
}

