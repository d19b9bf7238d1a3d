/* SPDX-License-Identifier: MIT */
/*
 * brackets.c - launch brackets, epoch versions and clocks: what the inference rule and the
 * launch checks of docs/validator.md stand on.
 *
 * Brackets that pushed an external id are only counted (per pushed id: launch accounting);
 * brackets that pushed nothing are kept with their begin and end, because the time
 * containment rule and the join levels place API calls inside them. Versions are kept per
 * (epoch, version): the latest launch made under it and when it stopped being current, so a
 * launch under a re-issued or retired version is found whatever order the threads' records
 * arrive in. Clock records pair host and device time; every one is kept.
 */
#include <stdlib.h>
#include <string.h>

#include "lineage/trace_format.h"
#include "vstate.h"

#define NIL(r, i) (((r)->nil >> (i)) & 1u)

static void structural(struct lin_validator *v, const char *cause, uint32_t file,
		       uint64_t offset, uint64_t index, int nids, const char *const *names,
		       const uint64_t *ids)
{
	v->sum.structural++;
	lin_v_finding(v, "structural", cause, file, offset, index, nids, names, ids);
}

static struct lin_open_ent *open_slots(struct lin_validator *v, uint16_t proc, uint64_t tid)
{
	bool fresh;
	struct lin_open_ent *o = lin_vtab_get(&v->open, tid, lin_k1(proc, 0), &fresh);
	if (!o)
		v->oom = true;
	return o;
}

static struct lin_vers_ent *version(struct lin_validator *v, uint16_t proc, uint64_t epoch,
				    uint64_t ver)
{
	bool fresh;
	struct lin_vers_ent *e = lin_vtab_get(&v->vers, epoch, lin_k1(proc, ver), &fresh);
	if (!e)
		v->oom = true;
	return e;
}

/* A pushed bracket: counted against the id it pushed (launch accounting). */
static void count_pushed(struct lin_validator *v, uint16_t proc, uint32_t file,
			 const struct lin_rec *r)
{
	bool fresh;
	struct lin_epoch_ent *e = lin_vtab_get(&v->epochs, r->f[4], lin_k1(proc, 0), &fresh);
	if (!e) {
		v->oom = true;
		return;
	}
	(void)file;                 /* a process's records are in its one trace file */
	if (!e->pushed++) {
		e->bracket_off = r->offset;
		e->bracket_index = r->index;
	}
}

void lin_v_on_launch(struct lin_validator *v, uint16_t proc, uint32_t file, const struct lin_rec *r)
{
	v->sum.launches++;
	v->procs[proc].launches++;
	if (!NIL(r, 2) && !NIL(r, 3)) {
		struct lin_vers_ent *ve = version(v, proc, r->f[2], r->f[3]);
		if (ve && (!ve->launched || r->f[0] >= ve->launch_ns)) {
			*ve = (struct lin_vers_ent){ r->f[0], ve->changed_ns, r->offset, r->index, file,
						     1, ve->changed, { 0, 0 } };
		}
	}
	uint32_t slot = LIN_OPEN_PUSHED;
	uint64_t seq = LIN_NIL;
	if (!NIL(r, 4)) {
		count_pushed(v, proc, file, r);
		if (v->procs[proc].host_clock)
			seq = lin_v_pbr_open(v, proc, file, r);
	} else {
		struct lin_bracket *b = lin_vec_push(&v->brackets);
		if (!b) {
			v->oom = true;
			return;
		}
		*b = (struct lin_bracket){ r->f[0], LIN_NIL, NIL(r, 2) ? LIN_NIL : r->f[2], r->offset,
					   r->index, (uint32_t)r->f[1], file, proc,
					   (uint16_t)(NIL(r, 8) || r->f[8] > LIN_OPEN_DEPTH ? 0 : r->f[8]) };
		slot = (uint32_t)v->brackets.n;
		v->procs[proc].unpushed++;
	}
	if (NIL(r, 8) || r->f[8] == 0 || r->f[8] > LIN_OPEN_DEPTH)
		return;                 /* format 1.1, or a depth the runtime never writes */
	struct lin_open_ent *o = open_slots(v, proc, r->f[1]);
	if (!o)
		return;
	o->idx[r->f[8] - 1] = slot;
	o->pseq[r->f[8] - 1] = seq;
	o->offset[r->f[8] - 1] = r->offset;
	o->index[r->f[8] - 1] = r->index;
	o->file = file;
}

void lin_v_on_launch_end(struct lin_validator *v, uint16_t proc, uint32_t file,
			 const struct lin_rec *r)
{
	uint64_t depth = r->f[2];
	uint64_t end = NIL(r, 0) ? LIN_END_UNTIMED : r->f[0];
	struct lin_open_ent *o = depth && depth <= LIN_OPEN_DEPTH ? open_slots(v, proc, r->f[1]) : NULL;
	uint32_t slot = o ? o->idx[depth - 1] : 0;
	if (!slot) {
		static const char *const n[] = { "tid", "depth" };
		uint64_t ids[] = { r->f[1], depth };
		if (o || depth == 0 || depth > LIN_OPEN_DEPTH)
			structural(v, "unpaired_launch_end", file, r->offset, r->index, 2, n, ids);
		return;
	}
	/* Brackets nest: ending this one ends any deeper one left open (those keep no end). */
	for (uint64_t d = depth - 1; d < LIN_OPEN_DEPTH; d++)
		o->idx[d] = 0;
	if (slot == LIN_OPEN_PUSHED) {
		if (o->pseq[depth - 1] != LIN_NIL)
			lin_v_pbr_close(v, proc, r->f[1], o->pseq[depth - 1], end);
		return;
	}
	struct lin_bracket *b = lin_vec_at(&v->brackets, slot - 1);
	b->end = end;
	if (end != LIN_END_UNTIMED && b->end < b->begin) {
		static const char *const n[] = { "tid", "begin_ns", "end_ns" };
		uint64_t ids[] = { b->tid, b->begin, b->end };
		structural(v, "time_order", file, r->offset, r->index, 3, n, ids);
	}
}

/* epoch_reissue (fields: host_ns, tid, epoch, new version, reason): the previous version
 * stopped being current then; epoch_retire (host_ns, tid, epoch, version): that one did. */
void lin_v_on_version_change(struct lin_validator *v, uint16_t proc, const struct lin_rec *r)
{
	uint64_t ver = r->type == LIN_REC_EPOCH_REISSUE ? r->f[3] - 1 : r->f[3];
	if (r->type == LIN_REC_EPOCH_REISSUE && r->f[3] == 0)
		return;
	struct lin_vers_ent *ve = version(v, proc, r->f[2], ver);
	if (ve && (!ve->changed || r->f[0] < ve->changed_ns)) {
		ve->changed = 1;
		ve->changed_ns = r->f[0];
	}
}

void lin_v_on_clock(struct lin_validator *v, uint16_t proc, const struct lin_rec *r)
{
	struct lin_clock_pair *c = lin_vec_push(&v->procs[proc].clocks);
	if (!c) {
		v->oom = true;
		return;
	}
	*c = (struct lin_clock_pair){ r->f[0], r->f[1] };
}

/* ---------------------------------------------------------------- at the end of the run */

static int clock_cmp(const void *a, const void *b)
{
	const struct lin_clock_pair *x = a, *y = b;
	return x->device_ns < y->device_ns ? -1 : x->device_ns > y->device_ns;
}

static int bracket_cmp(const void *a, const void *b)
{
	const struct lin_bracket *x = a, *y = b;
	if (x->proc != y->proc)
		return x->proc < y->proc ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->begin != y->begin)
		return x->begin < y->begin ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

bool lin_v_to_host(const struct lin_validator *v, uint16_t proc, uint64_t dev, uint64_t *host)
{
	const struct lin_vec *cl = &v->procs[proc].clocks;
	if (!cl->n || dev == LIN_NIL)
		return false;
	size_t lo = 0, hi = cl->n;              /* first pair with device_ns > dev */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (((const struct lin_clock_pair *)lin_vec_at(cl, mid))->device_ns <= dev)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Between two pairs: interpolate (the clocks may run at slightly different rates);
	 * before the first or after the last: the nearest pair's offset. */
	const struct lin_clock_pair *a = lin_vec_at(cl, lo ? lo - 1 : 0);
	const struct lin_clock_pair *b = lo && lo < cl->n ? lin_vec_at(cl, lo) : NULL;
	if (b && b->device_ns > a->device_ns && b->host_ns >= a->host_ns) {
		long double f = (long double)(dev - a->device_ns) / (long double)(b->device_ns - a->device_ns);
		*host = a->host_ns + (uint64_t)(f * (long double)(b->host_ns - a->host_ns) + 0.5L);
		return true;
	}
	*host = dev - a->device_ns + a->host_ns;
	return true;
}

enum lin_bracket_find lin_v_bracket_find(const struct lin_validator *v, uint16_t proc,
					 const struct lin_corr_ent *c,
					 const struct lin_bracket **out)
{
	*out = NULL;
	uint64_t s, e;
	if (!(c->flags & LIN_C_API) || !v->procs[proc].unpushed)
		return LIN_BF_NONE;
	if (!lin_v_to_host(v, proc, c->api_start, &s) || !lin_v_to_host(v, proc, c->api_end, &e))
		return c->api_start == LIN_NIL || c->api_end == LIN_NIL ? LIN_BF_NONE
									: LIN_BF_NO_CLOCK;
	size_t lo = 0, hi = v->brackets.n;      /* first bracket after (proc, tid, s) */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		const struct lin_bracket *b = lin_vec_at(&v->brackets, mid);
		if (b->proc < proc || (b->proc == proc && (b->tid < c->api_tid ||
							   (b->tid == c->api_tid && b->begin <= s))))
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Walk back through the brackets that began before the call: the innermost one that
	 * holds [s, e] is the answer. A bracket that ended before s rules out every deeper
	 * one begun before it, so only shallower ones are looked at after it. */
	unsigned maxdepth = UINT16_MAX;
	for (size_t i = lo; i-- > 0;) {
		const struct lin_bracket *b = lin_vec_at(&v->brackets, i);
		if (b->proc != proc || b->tid != c->api_tid)
			break;
		if (b->depth && b->depth >= maxdepth)
			continue;
		if (b->end == LIN_NIL || b->end == LIN_END_UNTIMED)
			return LIN_BF_UNCLOSED;         /* it may hold the call: cannot tell */
		if (b->end >= e) {
			*out = b;
			return LIN_BF_FOUND;
		}
		if (!b->depth)
			return LIN_BF_NONE;             /* no nesting known: nothing more to say */
		maxdepth = b->depth;
		if (maxdepth <= 1)
			return LIN_BF_NONE;
	}
	return LIN_BF_NONE;
}

static void finish_unclosed(struct lin_validator *v)
{
	static const char *const n[] = { "tid", "depth", "epoch" };
	for (size_t i = 0; i < v->brackets.n; i++) {
		const struct lin_bracket *b = lin_vec_at(&v->brackets, i);
		if (b->end != LIN_NIL || !b->depth)
			continue;
		uint64_t ids[] = { b->tid, b->depth, b->epoch };
		structural(v, "launch_bracket_unclosed", b->file, b->offset, b->index, 3, n, ids);
	}
	size_t it = 0;
	struct lin_vkey k;
	const struct lin_open_ent *o;
	while ((o = lin_vtab_next(&v->open, &it, &k))) {
		for (unsigned d = 0; d < LIN_OPEN_DEPTH; d++) {
			if (o->idx[d] != LIN_OPEN_PUSHED)
				continue;
			uint64_t ids[] = { k.k0, d + 1, LIN_NIL };
			structural(v, "launch_bracket_unclosed", o->file, o->offset[d], o->index[d], 2,
				   n, ids);
		}
	}
}

static void finish_versions(struct lin_validator *v)
{
	static const char *const n[] = { "epoch", "version", "launch_ns", "changed_ns" };
	size_t it = 0;
	struct lin_vkey k;
	const struct lin_vers_ent *ve;
	while ((ve = lin_vtab_next(&v->vers, &it, &k))) {
		if (!ve->launched || !ve->changed || ve->launch_ns < ve->changed_ns)
			continue;
		uint64_t ids[] = { k.k0, k.k1 & 0xffffffffu, ve->launch_ns, ve->changed_ns };
		structural(v, "stale_launch", ve->file, ve->offset, ve->index, 4, n, ids);
	}
}

/* Every bracket that pushed an id holds at least one API call, and CUPTI writes one ext
 * correlation record for each API call made under a pushed id. */
static void finish_accounting(struct lin_validator *v)
{
	static const char *const n[] = { "epoch", "brackets", "ext_records" };
	size_t it = 0;
	struct lin_vkey k;
	const struct lin_epoch_ent *e;
	while ((e = lin_vtab_next(&v->epochs, &it, &k))) {
		uint16_t proc = (uint16_t)((k.k1 & ~LIN_VTAB_USED) >> 32);
		/* With host-clock device times each bracket is checked on its own (xcheck.c). */
		if (e->pushed <= e->ext_n || !v->procs[proc].api_records || v->procs[proc].host_clock)
			continue;
		uint64_t ids[] = { k.k0, e->pushed, e->ext_n };
		structural(v, "launch_without_api_record", v->procs[proc].file, e->bracket_off,
			   e->bracket_index, 3, n, ids);
	}
}

void lin_v_brackets_finish(struct lin_validator *v)
{
	for (unsigned i = 0; i < v->nprocs; i++) {
		struct lin_vec *cl = &v->procs[i].clocks;
		if (cl->n > 1)
			qsort(cl->data, cl->n, cl->esz, clock_cmp);
	}
	if (v->brackets.n > 1)
		qsort(v->brackets.data, v->brackets.n, v->brackets.esz, bracket_cmp);
	finish_unclosed(v);
	finish_versions(v);
	finish_accounting(v);
}
