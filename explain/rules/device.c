/* SPDX-License-Identifier: MIT */
/*
 * device.c - the device_occupied rule and the competing-causes check (docs/ledger.md,
 * "Rules"), one row (LIN_XW_OCCUPANCY leaves both out).
 *
 * - device_occupied: a stretch left unresolved for want of any known dependency (from the
 *   frontier to the start) was the device being busy when records of other streams of the
 *   same device and process ran without a gap from the frontier to tie_ns before the start
 *   and one of them ended in the last tie_ns before it (the device freed, then the work
 *   started). Precondition: the process's trace has sync or cuda_event records (sync
 *   collection was on, so a cross-stream dependency would be in the trace); without them
 *   the stretch stays unresolved (no_sync_records).
 * - competing causes: a dominant cause other than device_busy, unresolved or kernel_slow
 *   whose stretch the same device occupancy spans (from its start) was not the only
 *   sufficient cause: it is withdrawn (the ledger's dominant is unresolved, competing_causes,
 *   and alt names it); the statements stay.
 */
#include <stdlib.h>

#include "lineage/trace_format.h"
#include "rule.h"

/* What can occupy a device: a kernel, copy or memset with its times and stream. */
static bool occupies(const struct lin_xgpu *g)
{
	return ordered(g) && g->kind != LIN_REC_GRAPH_TRACE;
}

static int cmp_by_dev_start(const void *pa, const void *pb, void *arg)
{
	const struct lin_xbuild *bd = arg;
	const struct lin_xgpu *a = gpu_at(bd, *(const size_t *)pa);
	const struct lin_xgpu *b = gpu_at(bd, *(const size_t *)pb);
	int c = cmp_dev_key(a, b);
	return c ? c : cmp_u64(a->start, b->start);
}

static bool occupancy(struct lin_xbuild *b)
{
	size_t *idx = malloc((b->n + 1) * sizeof(*idx));
	b->dmax = malloc((b->n + 1) * sizeof(uint64_t));
	b->hmax = malloc((b->n + 1) * sizeof(uint64_t));
	b->bydev = idx;
	if (!idx || !b->dmax || !b->hmax)
		return false;
	size_t k = 0;
	for (size_t i = 0; i < b->n; i++)
		if (occupies(gpu_at(b, i)))
			idx[k++] = i;
	lin_x_sort_idx(b, idx, k, cmp_by_dev_start);
	for (size_t j = 0; j < k; j++) {
		bool first = !j || cmp_dev_key(gpu_at(b, idx[j - 1]), gpu_at(b, idx[j]));
		uint64_t d = gpu_at(b, idx[j])->end, h = b->he[idx[j]] == LIN_NIL ? 0 : b->he[idx[j]];
		b->dmax[j] = first || d > b->dmax[j - 1] ? d : b->dmax[j - 1];
		b->hmax[j] = first || h > b->hmax[j - 1] ? h : b->hmax[j - 1];
	}
	b->nbydev = k;
	return true;
}

/* The longest walk device_occupied makes over a device's records from the front; past it
 * the rule does not apply (docs/ledger.md, "Limits"). */
#define OCC_WALK_MAX 4096

/* The device's records in bydev: [*lo, *hi) of @g's device. */
static void dev_range(const struct lin_xbuild *b, const struct lin_xgpu *g, size_t *lo, size_t *hi)
{
	size_t a = 0, z = b->nbydev;
	while (a < z) { /* first entry of the device */
		size_t mid = (a + z) / 2;
		if (cmp_dev_key(gpu_at(b, b->bydev[mid]), g) < 0)
			a = mid + 1;
		else
			z = mid;
	}
	*lo = a;
	z = b->nbydev;
	while (a < z) { /* first entry past it */
		size_t mid = (a + z) / 2;
		if (cmp_dev_key(gpu_at(b, b->bydev[mid]), g) <= 0)
			a = mid + 1;
		else
			z = mid;
	}
	*hi = a;
}

/* Whether record @p is one @g waits for: a producer, or work before it on its stream. */
static bool waited_for(const struct lin_xbuild *b, const struct lin_xgpu *p, const size_t *deps, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct lin_xgpu *d = gpu_at(b, deps[i]);
		if (!cmp_stream_key(p, d) && p->start <= d->start)
			return true;
	}
	return false;
}

/*
 * The device-occupancy premise for a launch @g that started at @s: records of other streams
 * of its device (kernels only, for a kernel: copies run on copy engines) ran without a gap
 * from @from to @s - tie_ns, one of them ended within [@s - tie_ns, @s], and no other one
 * started at or after that end and before @s (the device freed, and @g was what took it: a
 * device that kept taking other work had room). What @g waits for through events (the
 * producers and the work before them on their streams) is not other work: it is @g's
 * dependency, whatever it occupied. The latest-ending such record (index in gpus), or
 * SIZE_MAX when the premise does not hold or the walk would pass OCC_WALK_MAX records.
 * @host: @from, @s and the records' times on the host clock; else as written on the device
 * clock (one process's clock: no mapping error between them).
 */
static size_t occupier(const struct lin_xbuild *b, const struct lin_xgpu *g, uint64_t from,
		       uint64_t s, bool host)
{
	size_t lo, end;
	dev_range(b, g, &lo, &end);
	const uint64_t *mx = host ? b->hmax : b->dmax;
	size_t hi = end;
	while (lo < hi) { /* the first record of the device with a record ending after @from
			   * at or before it: none earlier can be running at @from */
		size_t mid = (lo + hi) / 2;
		if (mx[mid] <= from)
			lo = mid + 1;
		else
			hi = mid;
	}
	size_t deps[LIN_X_WAIT_DEPS + 1], ndeps = lin_x_wait_producers(b, g, deps);
	if (ndeps == SIZE_MAX)
		return SIZE_MAX; /* it waited for something the trace does not hold */
	uint64_t tie = b->x->o.tie_ns, win = s > tie ? s - tie : 0, reach = from, bend = 0;
	uint64_t last_start = 0; /* the latest start of other work before @s */
	size_t best = SIZE_MAX;
	for (size_t k = lo; k < end; k++) {
		if (k - lo >= OCC_WALK_MAX)
			return SIZE_MAX;
		size_t r = b->bydev[k];
		const struct lin_xgpu *p = gpu_at(b, r);
		uint64_t ps = host ? b->hs[r] : p->start, pe = host ? b->he[r] : p->end;
		if (ps >= s)
			break; /* records by start: none later started before @g */
		if (!cmp_stream_key(p, g))
			continue; /* its own stream */
		bool dep = waited_for(b, p, deps, ndeps);
		if (g->kind == LIN_REC_KERNEL && p->kind != LIN_REC_KERNEL && !dep)
			continue; /* a copy beside a kernel (not one it waits for) */
		if (ps > last_start)
			last_start = ps; /* what it waits for, of any kind, started after: it held it */
		if (pe <= from || dep)
			continue; /* done before @from, or what it waits for */
		if (ps > reach && reach < win)
			return SIZE_MAX; /* a gap before the window */
		if (pe > reach)
			reach = pe;
		if (pe >= win && pe <= s && (best == SIZE_MAX || pe > bend))
			best = r, bend = pe;
	}
	if (reach < win || best == SIZE_MAX || last_start >= bend)
		return SIZE_MAX;
	return best;
}

/* Whether @g's process has synchronization records (imported traces have none). */
static bool synced(const struct lin_explain *x, const struct lin_xgpu *g)
{
	return g->proc != LIN_XPROC_IMPORTED && ((x->synced[g->proc / 8] >> (g->proc % 8)) & 1u);
}

/*
 * device_occupied, on the stretch from the frontier @front (@fdev as written) to the start
 * @start that no known dependency explains: the device_busy statement up to when the device
 * freed, when the premise holds and the precondition too (else *why says what is missing).
 * Returns where the unresolved rest starts.
 */
static uint64_t device_busy(const struct lin_xbuild *b, struct lin_xlaunch *l, size_t i,
			    uint64_t front, uint64_t fdev, uint64_t start, enum lin_how *why)
{
	const struct lin_xgpu *g = gpu_at(b, i);
	size_t o = occupier(b, g, fdev, g->start, false);
	if (o == SIZE_MAX || b->he[o] == LIN_NIL)
		return front;
	if (!synced(b->x, g)) {
		/* Without sync records an event dependency on a busy stream would not be in the
		 * trace: the device was busy, but that it held this work is not established. */
		*why = LIN_HOW_NO_SYNC_RECORDS;
		return front;
	}
	if (!mark_known(l, LIN_M_SUBMITTED)) {
		/* Without the submission time the command may have reached the device only when
		 * it started: a submission delay looks the same (docs/attribution.md). */
		*why = (enum lin_how)l->m[LIN_M_SUBMITTED].how;
		return front;
	}
	uint64_t e = b->he[o] < start ? b->he[o] : start;
	if (e <= front)
		return front;
	lin_x_add_seg(l, front, e, LIN_X_DEVICE_BUSY, LIN_EV_INFERRED, LIN_HOW_DEVICE_OCCUPIED);
	return e;
}

/*
 * Competing causes: the dominant statement @d (its start @ddev as written, LIN_NIL for a
 * host-clock time) is withdrawn when the device was busy with other streams' work from its
 * start until it freed right before the start: that was as sufficient a cause. A host-clock
 * start is compared with the records' host times, moved back by the start's mapping error
 * so the occupancy is not claimed from later than it is known.
 */
static void competing(const struct lin_xbuild *b, struct lin_xlaunch *l, size_t i,
		      const struct lin_xseg *d, uint64_t ddev)
{
	const struct lin_xgpu *g = gpu_at(b, i);
	if (l->dominant == LIN_X_DEVICE_BUSY || l->dominant == LIN_X_UNRESOLVED ||
	    l->dominant == LIN_X_KERNEL_SLOW)
		return;
	size_t o;
	if (ddev != LIN_NIL) {
		o = occupier(b, g, ddev, g->start, false);
	} else {
		const struct lin_xmark *ks = &l->m[LIN_M_KERNEL_START];
		o = occupier(b, g, d->start > ks->err ? d->start - ks->err : 0, ks->t, true);
	}
	if (o == SIZE_MAX)
		return;
	l->alt = l->dominant;
	l->dominant = LIN_X_UNRESOLVED;
	l->dominant_how = LIN_HOW_COMPETING_CAUSES;
}

const struct lin_xrule lin_xrule_device = {
	.name = "device_occupied",
	.without = LIN_XW_OCCUPANCY,
	.how = LIN_HOW_DEVICE_OCCUPIED,
	.prepare = occupancy,
	.busy = device_busy,
	.withdraw = competing,
};
