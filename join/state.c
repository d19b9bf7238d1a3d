/* SPDX-License-Identifier: MIT */
/*
 * state.c - the joiner object: its creation and release, the processes its files
 * belong to (keyed by each header's host and pid), and the findings it lists.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lineage/trace_format.h"
#include "jstate.h"

struct lin_joiner *lin_joiner_create(const struct lin_joiner_opts *opts)
{
	struct lin_joiner *v = calloc(1, sizeof(*v));
	if (!v)
		return NULL;
	if (opts)
		v->opts = *opts;
	else
		v->opts.max_findings = 100;
	lin_vec_init(&v->findings, sizeof(struct lin_finding));
	lin_vtab_init(&v->epochs, sizeof(struct lin_epoch_ent));
	lin_vtab_init(&v->corrs, sizeof(struct lin_corr_ent));
	lin_vtab_init(&v->closed, sizeof(void *));
	lin_vtab_init(&v->captures, sizeof(void *));
	lin_vtab_init(&v->nodes, sizeof(struct lin_node_ent));
	lin_vtab_init(&v->clones, sizeof(struct lin_clone_ent));
	lin_vtab_init(&v->replays, sizeof(uint64_t));
	lin_vtab_init(&v->requests, sizeof(uint64_t)); /* its begin's host time (0: unknown) */
	lin_vtab_init(&v->scopes, sizeof(uint64_t));   /* (tid, proc|depth): target + 1 */
	lin_vtab_init(&v->apiring, sizeof(struct lin_apiring));
	lin_vtab_init(&v->capheads, sizeof(uint64_t));
	lin_vtab_init(&v->firsttok, sizeof(uint64_t));
	lin_vtab_init(&v->decodes, sizeof(struct lin_decode_ent));
	lin_vtab_init(&v->graphcorr, sizeof(uint64_t));
	lin_vtab_init(&v->strings, 0);
	lin_vtab_init(&v->undef, sizeof(struct lin_ref_ent));
	lin_vtab_init(&v->stale, 0);
	lin_vtab_init(&v->bthreads, sizeof(struct lin_bthread));
	lin_vtab_init(&v->vers, sizeof(struct lin_vers_ent));
	lin_vtab_init(&v->grids, sizeof(void *));
	lin_vtab_init(&v->gmemops, 0);
	lin_vec_init(&v->reqpool, sizeof(uint64_t));
	lin_vec_init(&v->sharepool, sizeof(uint64_t));
	lin_vec_init(&v->cands, sizeof(struct lin_cand));
	lin_vec_init(&v->pending, sizeof(struct lin_gpu));
	lin_vec_init(&v->adopts, sizeof(struct lin_adopt));
	return v;
}

static void free_pages(struct lin_vtab *t)
{
	size_t it = 0;
	void **p;
	while ((p = lin_vtab_next(t, &it, NULL)))
		free(*p);
	lin_vtab_free(t);
}

void lin_joiner_free(struct lin_joiner *v)
{
	if (!v)
		return;
	for (unsigned i = 0; i < v->nfiles; i++)
		free(v->files[i].name);
	free(v->files);
	for (unsigned i = 0; i < v->nprocs; i++) {
		lin_cm_free(&v->procs[i].clocks);
		lin_vec_free(&v->procs[i].capwin);
		lin_vec_free(&v->procs[i].capopen);
		lin_vec_free(&v->procs[i].capthr);
	}
	free(v->procs);
	free_pages(&v->closed);
	free_pages(&v->captures);
	free_pages(&v->grids);
	lin_j_bthreads_free(v);
	struct lin_vtab *tabs[] = { &v->epochs,   &v->corrs,   &v->nodes,    &v->clones,
				    &v->strings,  &v->undef,   &v->stale,    &v->vers,
				    &v->gmemops,  &v->replays, &v->requests, &v->apiring,
				    &v->capheads, &v->scopes,  &v->firsttok, &v->decodes,
				    &v->graphcorr };
	for (size_t i = 0; i < sizeof(tabs) / sizeof(tabs[0]); i++)
		lin_vtab_free(tabs[i]);
	struct lin_vec *vecs[] = { &v->findings, &v->reqpool, &v->cands,
				   &v->pending,  &v->adopts,  &v->sharepool };
	for (size_t i = 0; i < sizeof(vecs) / sizeof(vecs[0]); i++)
		lin_vec_free(vecs[i]);
	free(v);
}

/* What a process's trace header says of it (its truth file's header says none of it). */
static void proc_from_trace(struct lin_jproc *p, const struct lin_header *h, uint32_t file)
{
	snprintf(p->backend, sizeof(p->backend), "%s", h->backend);
	snprintf(p->cupti, sizeof(p->cupti), "%s", h->cupti);
	p->cupti_tids = strstr(h->cupti, "default thread ids") != NULL;
	p->ext_kind = h->ext_kind;
	p->minor = h->minor;
	p->host_clock = h->device_clock_host;
	p->pushes = !strcmp(h->backend, "cupti") || !strcmp(h->backend, "custom") ||
		    !strcmp(h->backend, "attach");
	p->file = file;
	p->traced = true;
}

int lin_j_proc(struct lin_joiner *v, const struct lin_header *h, uint32_t file, bool truth)
{
	struct lin_jproc *p = NULL;
	for (unsigned i = 0; i < v->nprocs && !p; i++)
		if (v->procs[i].pid == h->pid && strcmp(v->procs[i].host, h->host) == 0)
			p = &v->procs[i];
	if (!p) {
		if (v->nprocs >= LIN_MAX_PROCS)
			return -1;
		struct lin_jproc *np = realloc(v->procs, (v->nprocs + 1) * sizeof(*np));
		if (!np)
			return -1;
		v->procs = np;
		p = &np[v->nprocs++];
		memset(p, 0, sizeof(*p));
		snprintf(p->host, sizeof(p->host), "%s", h->host);
		p->pid = h->pid;
		p->ext_kind = h->ext_kind;
		p->min_api_corr = UINT64_MAX;
		p->end_dropped = LIN_NIL;
		lin_cm_init(&p->clocks);
		lin_vec_init(&p->capwin, sizeof(struct lin_capture));
		lin_vec_init(&p->capopen, sizeof(uint64_t));
		lin_vec_init(&p->capthr, sizeof(struct lin_capthr));
	}
	if (!truth && !p->traced)
		proc_from_trace(p, h, file);
	return (int)(p - v->procs);
}

unsigned lin_joiner_proc_losses(const struct lin_joiner *v, uint16_t proc)
{
	if (proc >= v->nprocs)
		return 0;
	return (v->procs[proc].dropped_host ? LIN_LOST_HOST : 0u) |
	       (v->procs[proc].dropped_cupti ? LIN_LOST_CUPTI : 0u);
}

bool lin_joiner_proc_id(const struct lin_joiner *v, uint16_t proc, uint64_t *pid, const char **host)
{
	if (proc >= v->nprocs)
		return false;
	*pid = v->procs[proc].pid;
	*host = v->procs[proc].host;
	return true;
}

bool lin_joiner_oom(const struct lin_joiner *v) { return v->oom; }

int lin_j_new_file(struct lin_joiner *v, const char *name, bool truth)
{
	struct lin_jfile *nf = realloc(v->files, (v->nfiles + 1) * sizeof(*nf));
	if (!nf)
		return -1;
	v->files = nf;
	memset(&nf[v->nfiles], 0, sizeof(*nf));
	nf[v->nfiles].name = strdup(name);
	nf[v->nfiles].truth = truth;
	if (!nf[v->nfiles].name)
		return -1;
	return (int)v->nfiles++;
}
