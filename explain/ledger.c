/* SPDX-License-Identifier: MIT */
/*
 * ledger.c - one ledger per explained GPU record: its marks with their evidence, the
 * inferred dependency readiness, and the statements (docs/ledger.md). The rules:
 *
 * - stream_order: a record is ready no earlier than the end of the GPU record before it on
 *   the same (process, device, context, stream), by start time. Not applied to kernels of a
 *   graph replay (the trace has no graph edges: graph_dependency_unknown), nor where that
 *   record ended after this one started (overlapping_predecessor: programmatic dependent
 *   launch, or the premise is broken).
 * - event_wait: a stream wait event on stream B naming the sync id of a cuda_event recorded
 *   on stream A (device, context, stream) makes every record launched on B after the wait
 *   (a larger correlation id) ready no earlier than the end of the last record launched on
 *   A before the recording.
 * - kernel_median: a kernel is slow when it ran longer than slow_factor times the median of
 *   the kernels of its name in its process (at least min_samples of them).
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
 *
 * When both dependency rules bound a launch at the same end (one device clock), the
 * readiness is known and which of the two held it is not: tied_dependencies.
 *
 * Neither dependency rule invents a readiness: each gives a lower bound, and a readiness
 * above the launch's frontier (api_exit; submitted only without it) only when the bound is
 * above it. What no rule bounds stays unknown: the stretch up to the start is unresolved.
 * A dependency that ended before the submission time comes first in the statements: on a
 * GPU the device takes a command (CUPTI's submitted) only after what it waited for.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lineage/trace_format.h"
#include "xstate.h"

static const char *const mark_names[] = {
#define N(e, s) s,
	LIN_MARKS(N)
#undef N
};
static const char *const how_names[] = {
#define N(e, s) s,
	LIN_HOWS(N)
#undef N
};
static const char *const cause_names[] = {
#define N(e, s) s,
	LIN_XCAUSES(N)
#undef N
};
static const char *const ev_names[] = { "unknown", "observed", "inferred", "absent" };

const char *lin_mark_name(enum lin_mark m) { return m < LIN_M_N ? mark_names[m] : "?"; }
const char *lin_how_name(enum lin_how h) { return h < LIN_HOW_N ? how_names[h] : "?"; }
const char *lin_xcause_name(enum lin_xcause c) { return c < LIN_X_N ? cause_names[c] : "?"; }
const char *lin_evidence_name(enum lin_evidence e)
{
	return e <= LIN_EV_ABSENT ? ev_names[e] : "?";
}

static uint64_t pk1(uint16_t proc, uint64_t aux)
{
	return ((uint64_t)proc << 32) | (aux & 0xffffffffu);
}

/* ------------------------------------------------------------------ sorting */

static int cmp_u64(uint64_t a, uint64_t b) { return a < b ? -1 : a > b; }

/* qsort of a vector (an empty one has no data pointer, which qsort must not get). */
static void vsort(struct lin_vec *v, int (*cmp)(const void *, const void *))
{
	if (v->n > 1)
		qsort(v->data, v->n, v->esz, cmp);
}

static int cmp_decl(const void *pa, const void *pb)
{
	const struct lin_xdecl *a = pa, *b = pb;
	int c = cmp_u64(a->proc, b->proc);
	if (!c)
		c = cmp_u64(a->epoch, b->epoch);
	return c ? c : cmp_u64(a->host_ns, b->host_ns);
}

static int cmp_adopt(const void *pa, const void *pb)
{
	const struct lin_xadopt *a = pa, *b = pb;
	int c = cmp_u64(a->proc, b->proc);
	if (!c)
		c = cmp_u64(a->tid, b->tid);
	if (!c)
		c = cmp_u64(a->kind, b->kind);
	if (!c)
		c = cmp_u64(a->target, b->target);
	return c ? c : cmp_u64(a->host_ns, b->host_ns);
}

static int cmp_sched(const void *pa, const void *pb)
{
	const struct lin_xsched *a = pa, *b = pb;
	int c = cmp_u64(a->proc, b->proc);
	if (!c)
		c = cmp_u64(a->tid, b->tid);
	return c ? c : cmp_u64(a->start, b->start);
}

static int cmp_wait(const void *pa, const void *pb)
{
	const struct lin_xwait *a = pa, *b = pb;
	int c = cmp_u64(a->proc, b->proc);
	if (!c)
		c = cmp_u64(a->ctx, b->ctx);
	if (!c)
		c = cmp_u64(a->stream, b->stream);
	return c ? c : cmp_u64(a->corr, b->corr);
}

/* The device a record ran on: its process (imported: file and process) and device. */
static int cmp_dev_key(const struct lin_xgpu *a, const struct lin_xgpu *b)
{
	int c = cmp_u64(a->proc, b->proc);
	if (!c && a->proc == LIN_XPROC_IMPORTED) {
		c = cmp_u64(a->file, b->file);
		if (!c)
			c = cmp_u64(a->iproc, b->iproc);
	}
	return c ? c : cmp_u64(a->dev, b->dev);
}

/* The stream a record ran on: its device, context and stream. */
static int cmp_stream_key(const struct lin_xgpu *a, const struct lin_xgpu *b)
{
	int c = cmp_dev_key(a, b);
	if (!c)
		c = cmp_u64(a->ctx, b->ctx);
	return c ? c : cmp_u64(a->stream, b->stream);
}

/* GPU record @i of @gpus (the explain's vector: the argument of the index sorts below). */
static const struct lin_xgpu *gpu_of(const struct lin_vec *gpus, size_t i)
{
	return lin_vec_at(gpus, i);
}

/* qsort_r of @k GPU record indexes by @cmp, which gets the explain's gpus vector: nothing
 * global, so ledgers of two struct lin_explain may be built at once. */
static void sort_idx(struct lin_explain *x, size_t *idx, size_t k,
		     int (*cmp)(const void *, const void *, void *))
{
	if (k > 1)
		qsort_r(idx, k, sizeof(*idx), cmp, &x->gpus);
}

static int cmp_by_start(const void *pa, const void *pb, void *gpus)
{
	const struct lin_xgpu *a = gpu_of(gpus, *(const size_t *)pa);
	const struct lin_xgpu *b = gpu_of(gpus, *(const size_t *)pb);
	int c = cmp_stream_key(a, b);
	return c ? c : cmp_u64(a->start, b->start);
}

/* By stream, then correlation: the order bycorr is sorted in and searched by. */
static int cmp_corr_key(const struct lin_xgpu *a, const struct lin_xgpu *b)
{
	int c = cmp_stream_key(a, b);
	return c ? c : cmp_u64(a->corr, b->corr);
}

static int cmp_by_dev_start(const void *pa, const void *pb, void *gpus)
{
	const struct lin_xgpu *a = gpu_of(gpus, *(const size_t *)pa);
	const struct lin_xgpu *b = gpu_of(gpus, *(const size_t *)pb);
	int c = cmp_dev_key(a, b);
	return c ? c : cmp_u64(a->start, b->start);
}

static int cmp_by_corr(const void *pa, const void *pb, void *gpus)
{
	return cmp_corr_key(gpu_of(gpus, *(const size_t *)pa), gpu_of(gpus, *(const size_t *)pb));
}

/* Kernels by (process or file, name, duration). */
static int cmp_by_name(const void *pa, const void *pb, void *gpus)
{
	const struct lin_xgpu *a = gpu_of(gpus, *(const size_t *)pa);
	const struct lin_xgpu *b = gpu_of(gpus, *(const size_t *)pb);
	int c = cmp_u64(a->proc, b->proc);
	if (!c && a->proc == LIN_XPROC_IMPORTED)
		c = cmp_u64(a->file, b->file);
	if (!c)
		c = cmp_u64(a->name, b->name);
	return c ? c : cmp_u64(a->end - a->start, b->end - b->start);
}

/* ------------------------------------------------------------------ build state */

struct bctx {
	struct lin_explain *x;
	const struct lin_validator *v;
	size_t n;
	uint64_t *hs, *he, *herr; /* host start, end (LIN_XNIL: unknown), mapping error */
	size_t *pred;             /* the record before on its stream, or SIZE_MAX */
	size_t *bycorr;           /* lineage records with a correlation, by stream and corr */
	size_t nbycorr;
	uint64_t *median; /* by record: its name's median duration (0: unknown) */
	/* device_occupied: kernels, copies and memsets by device, then start; the latest end
	 * of each device's records up to each one, as written (dmax) and on the host clock
	 * (hmax; unknown host ends count as none). */
	size_t *bydev;
	uint64_t *dmax, *hmax;
	size_t nbydev;
};

/* GPU record @i of the build. */
static const struct lin_xgpu *gpu_at(const struct bctx *b, size_t i)
{
	return gpu_of(&b->x->gpus, i);
}

static uint64_t sat_add(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }

static bool to_host(struct bctx *b, const struct lin_xgpu *g, uint64_t dev, uint64_t *h, uint64_t *err)
{
	*err = 0;
	if (dev == LIN_XNIL)
		return false;
	if (g->proc == LIN_XPROC_IMPORTED) {
		*h = dev;
		return true;
	}
	return lin_validator_dev_to_host(b->v, g->proc, dev, h, err);
}

static void host_times(struct bctx *b)
{
	for (size_t i = 0; i < b->n; i++) {
		const struct lin_xgpu *g = gpu_at(b, i);
		uint64_t e1 = 0, e2 = 0;
		b->hs[i] = b->he[i] = LIN_XNIL;
		if (g->start == LIN_XNIL || g->end == LIN_XNIL || g->end < g->start)
			continue;
		if (!to_host(b, g, g->start, &b->hs[i], &e1) || !to_host(b, g, g->end, &b->he[i], &e2)) {
			b->hs[i] = b->he[i] = LIN_XNIL;
			continue;
		}
		b->herr[i] = e1 > e2 ? e1 : e2;
	}
}

/* Records that take part in stream order: timed, and not duplicates. */
static bool ordered(const struct lin_xgpu *g)
{
	return g->start != LIN_XNIL && g->end != LIN_XNIL && g->end >= g->start &&
	       !(g->flags & (LIN_XG_DUP | LIN_XG_NOSTREAM));
}

static bool streams(struct bctx *b)
{
	size_t *idx = malloc((b->n + 1) * sizeof(*idx));
	if (!idx)
		return false;
	size_t k = 0;
	for (size_t i = 0; i < b->n; i++) {
		b->pred[i] = SIZE_MAX;
		if (ordered(gpu_at(b, i)))
			idx[k++] = i;
	}
	sort_idx(b->x, idx, k, cmp_by_start);
	for (size_t j = 1; j < k; j++)
		if (!cmp_stream_key(gpu_at(b, idx[j - 1]), gpu_at(b, idx[j])))
			b->pred[idx[j]] = idx[j - 1];
	/* By correlation, for event_wait: lineage records that name their call. */
	k = 0;
	for (size_t i = 0; i < b->n; i++)
		if (gpu_at(b, i)->proc != LIN_XPROC_IMPORTED && gpu_at(b, i)->corr != LIN_XNIL &&
		    ordered(gpu_at(b, i)))
			idx[k++] = i;
	sort_idx(b->x, idx, k, cmp_by_corr);
	b->bycorr = idx;
	b->nbycorr = k;
	return true;
}

/* What can occupy a device: a kernel, copy or memset with its times and stream. */
static bool occupies(const struct lin_xgpu *g)
{
	return ordered(g) && g->kind != LIN_REC_GRAPH_TRACE;
}

static bool occupancy(struct bctx *b)
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
	sort_idx(b->x, idx, k, cmp_by_dev_start);
	for (size_t j = 0; j < k; j++) {
		bool first = !j || cmp_dev_key(gpu_at(b, idx[j - 1]), gpu_at(b, idx[j]));
		uint64_t d = gpu_at(b, idx[j])->end, h = b->he[idx[j]] == LIN_XNIL ? 0 : b->he[idx[j]];
		b->dmax[j] = first || d > b->dmax[j - 1] ? d : b->dmax[j - 1];
		b->hmax[j] = first || h > b->hmax[j - 1] ? h : b->hmax[j - 1];
	}
	b->nbydev = k;
	return true;
}

static int cmp_edge(const void *pa, const void *pb)
{
	const struct lin_xedge *a = pa, *b = pb;
	int k = cmp_u64(a->proc, b->proc);
	return k ? k : cmp_u64(a->to, b->to);
}

/* The GPU records of graph nodes by (the application's node their clone was made from, the
 * replay's correlation, process): a replay runs each node once, so two records under one
 * key (or a clone of two originals) leave it unusable. One lookup per edge, however many
 * times the graph was instantiated. */
static bool graph_index(struct bctx *b)
{
	struct lin_explain *x = b->x;
	vsort(&x->edges, cmp_edge);
	for (size_t i = 0; i < b->n; i++) {
		const struct lin_xgpu *g = gpu_at(b, i);
		if (!(g->flags & LIN_XG_GRAPH) || g->proc == LIN_XPROC_IMPORTED ||
		    g->node == LIN_XNIL || g->corr == LIN_XNIL || (g->flags & LIN_XG_DUP))
			continue;
		const uint64_t *orig = lin_vtab_find(&x->clone_of, g->node, pk1(g->proc, 0));
		if (!orig || *orig == UINT64_MAX)
			continue;
		bool fresh;
		size_t *e = lin_vtab_get(&x->bynode, *orig, pk1(g->proc, g->corr), &fresh);
		if (!e)
			return false;
		*e = fresh ? i : SIZE_MAX;
	}
	return true;
}

/* The median of a sorted run of durations, without overflow. */
static uint64_t mid2(uint64_t a, uint64_t b) { return a / 2 + b / 2 + (a & b & 1); }

static bool medians(struct bctx *b)
{
	size_t *idx = malloc((b->n + 1) * sizeof(*idx));
	if (!idx)
		return false;
	size_t k = 0;
	for (size_t i = 0; i < b->n; i++) {
		const struct lin_xgpu *g = gpu_at(b, i);
		b->median[i] = 0;
		if (g->kind == LIN_REC_KERNEL && g->name && ordered(g))
			idx[k++] = i;
	}
	sort_idx(b->x, idx, k, cmp_by_name);
	for (size_t j = 0; j < k;) {
		size_t e = j + 1;
		const struct lin_xgpu *a = gpu_at(b, idx[j]);
		while (e < k && gpu_at(b, idx[e])->proc == a->proc && gpu_at(b, idx[e])->name == a->name &&
		       (a->proc != LIN_XPROC_IMPORTED || gpu_at(b, idx[e])->file == a->file))
			e++;
		size_t cnt = e - j;
		const struct lin_xgpu *mid = gpu_at(b, idx[j + cnt / 2]);
		uint64_t med = mid->end - mid->start;
		if (!(cnt & 1)) {
			const struct lin_xgpu *lo = gpu_at(b, idx[j + cnt / 2 - 1]);
			med = mid2(lo->end - lo->start, med);
		}
		for (size_t q = j; q < e; q++)
			b->median[idx[q]] = cnt >= b->x->o.min_samples ? med : 0;
		j = e;
	}
	free(idx);
	return true;
}

/* The last record on (proc, dev, ctx, stream) with a correlation below @corr. */
static size_t before_corr(const struct bctx *b, uint16_t proc, uint32_t dev, uint32_t ctx,
			  uint64_t stream, uint64_t corr)
{
	const struct lin_xgpu key = { .proc = proc, .dev = dev, .ctx = ctx, .stream = stream, .corr = corr };
	size_t lo = 0, hi = b->nbycorr;
	while (lo < hi) { /* first entry >= key */
		size_t mid = (lo + hi) / 2;
		if (cmp_corr_key(gpu_at(b, b->bycorr[mid]), &key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return SIZE_MAX;
	const struct lin_xgpu *p = gpu_at(b, b->bycorr[lo - 1]);
	return cmp_stream_key(p, &key) ? SIZE_MAX : b->bycorr[lo - 1];
}

/* Each wait's producer (the last record launched on the recording's stream before the
 * recording), then the latest-ending producer over each stream's waits up to each one. */
static void wait_bounds(struct bctx *b)
{
	struct lin_explain *x = b->x;
	struct lin_xwait *w = (struct lin_xwait *)x->waits.data;
	for (size_t i = 0; i < x->waits.n; i++) {
		w[i].best = SIZE_MAX;
		const struct lin_xevent *e = lin_vtab_find(&x->events, w[i].sync_id, pk1(w[i].proc, 0));
		if (e && e->corr != LIN_XNIL && e->corr < w[i].corr) {
			size_t p = before_corr(b, w[i].proc, e->dev, e->ctx, e->stream, e->corr);
			if (p != SIZE_MAX && b->he[p] != LIN_XNIL)
				w[i].best = p;
		}
		if (i && w[i - 1].proc == w[i].proc && w[i - 1].ctx == w[i].ctx &&
		    w[i - 1].stream == w[i].stream && w[i - 1].best != SIZE_MAX &&
		    (w[i].best == SIZE_MAX || b->he[w[i - 1].best] > b->he[w[i].best]))
			w[i].best = w[i - 1].best;
	}
}

/* The index past the waits before @g (by correlation) on its stream: the waits of @g's stream
 * before it end there (0: none; an imported record or one without a correlation has none). */
static size_t waits_before(const struct bctx *b, const struct lin_xgpu *g)
{
	const struct lin_explain *x = b->x;
	if (g->proc == LIN_XPROC_IMPORTED || g->corr == LIN_XNIL)
		return 0;
	const struct lin_xwait *w = (const struct lin_xwait *)x->waits.data;
	size_t lo = 0, hi = x->waits.n;
	struct lin_xwait key = { .corr = g->corr, .stream = g->stream, .ctx = g->ctx, .proc = g->proc };
	while (lo < hi) { /* first wait >= key */
		size_t mid = (lo + hi) / 2;
		if (cmp_wait(&w[mid], &key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* event_wait: the producer bounding @g through the waits before it on its stream. */
static size_t event_producer(const struct bctx *b, const struct lin_xgpu *g)
{
	const struct lin_xwait *w = (const struct lin_xwait *)b->x->waits.data;
	size_t lo = waits_before(b, g);
	if (!lo || w[lo - 1].proc != g->proc || w[lo - 1].ctx != g->ctx || w[lo - 1].stream != g->stream)
		return SIZE_MAX;
	return w[lo - 1].best;
}

/* Merge each thread's overlapping off-CPU records (sorted by start) and sum them up. */
static void sched_bounds(struct lin_explain *x)
{
	struct lin_xsched *d = (struct lin_xsched *)x->scheds.data;
	size_t n = 0;
	for (size_t i = 0; i < x->scheds.n; i++) {
		struct lin_xsched *p = n ? &d[n - 1] : NULL;
		if (p && p->proc == d[i].proc && p->tid == d[i].tid && d[i].start <= p->end) {
			if (d[i].end > p->end)
				p->end = d[i].end;
			continue;
		}
		d[n++] = d[i];
	}
	x->scheds.n = n;
	for (size_t i = 0; i < n; i++) {
		struct lin_xsched *p = i ? &d[i - 1] : NULL;
		d[i].cum = p && p->proc == d[i].proc && p->tid == d[i].tid
				   ? sat_add(p->cum, p->end - p->start)
				   : 0;
	}
}

/* The longest walk device_occupied makes over a device's records from the front; past it
 * the rule does not apply (docs/ledger.md, "Limits"). */
#define OCC_WALK_MAX 4096

/* The device's records in bydev: [*lo, *hi) of @g's device. */
static void dev_range(const struct bctx *b, const struct lin_xgpu *g, size_t *lo, size_t *hi)
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

/* The records @g waits for through events: the producer of each wait on its stream before
 * it (up to OCC_DEPS, the latest waits; and the latest-ending producer of them all, the one
 * the event_wait rule bounds @g with), into @deps (OCC_DEPS + 1 entries); their count, or
 * SIZE_MAX when one of those waits names an event the trace has no record of (what @g
 * waited for is not in the trace). */
#define OCC_DEPS 16
static size_t wait_producers(const struct bctx *b, const struct lin_xgpu *g, size_t *deps)
{
	const struct lin_explain *x = b->x;
	if (x->o.without & LIN_XW_EVENT_WAIT)
		return 0;
	const struct lin_xwait *w = (const struct lin_xwait *)x->waits.data;
	size_t lo = waits_before(b, g), n = 0;
	size_t best = event_producer(b, g);
	while (lo-- > 0 && n < OCC_DEPS && w[lo].proc == g->proc && w[lo].ctx == g->ctx &&
	       w[lo].stream == g->stream) {
		const struct lin_xevent *e =
			lin_vtab_find(&x->events, w[lo].sync_id, pk1(w[lo].proc, 0));
		if (!e || e->corr == LIN_XNIL)
			return SIZE_MAX; /* a wait on an event not in the trace */
		if (e->corr >= w[lo].corr)
			continue;
		size_t p = before_corr(b, w[lo].proc, e->dev, e->ctx, e->stream, e->corr);
		if (p != SIZE_MAX)
			deps[n++] = p;
		if (p == best)
			best = SIZE_MAX;
	}
	if (best != SIZE_MAX)
		deps[n++] = best;
	return n;
}

/* Whether record @p is one @g waits for: a producer, or work before it on its stream. */
static bool waited_for(const struct bctx *b, const struct lin_xgpu *p, const size_t *deps, size_t n)
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
static size_t occupier(const struct bctx *b, const struct lin_xgpu *g, uint64_t from, uint64_t s, bool host)
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
	size_t deps[OCC_DEPS + 1], ndeps = wait_producers(b, g, deps);
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

/* ------------------------------------------------------------------ marks */

static void set(struct lin_xlaunch *l, enum lin_mark m, uint64_t t, uint64_t err,
		enum lin_evidence ev, enum lin_how how)
{
	l->m[m] = (struct lin_xmark){ .t = t, .err = err, .ev = (uint8_t)ev, .how = (uint8_t)how };
}

static void unknown(struct lin_xlaunch *l, enum lin_mark m, enum lin_how how)
{
	set(l, m, 0, 0, LIN_EV_UNKNOWN, how);
}

static bool known(const struct lin_xlaunch *l, enum lin_mark m)
{
	return l->m[m].ev == LIN_EV_OBSERVED || l->m[m].ev == LIN_EV_INFERRED;
}

/* The first declaration of @epoch (NULL: none). */
static const struct lin_xdecl *declaration(const struct lin_explain *x, uint16_t proc, uint64_t epoch)
{
	const struct lin_xdecl *d = (const struct lin_xdecl *)x->decls.data;
	size_t lo = 0, hi = x->decls.n;
	struct lin_xdecl key = { .epoch = epoch, .host_ns = 0, .proc = proc };
	while (lo < hi) { /* first entry >= key */
		size_t mid = (lo + hi) / 2;
		if (cmp_decl(&d[mid], &key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < x->decls.n && d[lo].proc == proc && d[lo].epoch == epoch ? &d[lo] : NULL;
}

/* The latest adopt of (@kind, @target) on thread @tid at or before @before (NULL: none). */
static const struct lin_xadopt *adopt_at(const struct lin_explain *x, uint16_t proc, uint64_t tid,
					 uint8_t kind, uint64_t target, uint64_t before)
{
	const struct lin_xadopt *a = (const struct lin_xadopt *)x->adopts.data;
	size_t lo = 0, hi = x->adopts.n;
	struct lin_xadopt key = { .tid = tid, .host_ns = before, .target = target, .proc = proc, .kind = kind };
	while (lo < hi) { /* first entry > key */
		size_t mid = (lo + hi) / 2;
		if (cmp_adopt(&a[mid], &key) <= 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	const struct lin_xadopt *c = &a[lo - 1];
	return c->proc == proc && c->tid == tid && c->kind == kind && c->target == target ? c : NULL;
}

/* Whether thread @tid has any adopt of a request. */
static bool adopts_requests(const struct lin_explain *x, uint16_t proc, uint64_t tid)
{
	const struct lin_xadopt *a = (const struct lin_xadopt *)x->adopts.data;
	size_t lo = 0, hi = x->adopts.n;
	struct lin_xadopt key = { .tid = tid, .proc = proc, .kind = LIN_TARGET_REQUEST };
	while (lo < hi) { /* first entry >= (proc, tid, REQUEST, 0, 0) */
		size_t mid = (lo + hi) / 2;
		if (cmp_adopt(&a[mid], &key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < x->adopts.n && a[lo].proc == proc && a[lo].tid == tid &&
	       a[lo].kind == LIN_TARGET_REQUEST;
}

/* The latest adopt of the launch's work on thread @tid at or before @before: of its epoch,
 * or of one of its requests (or, joined to a request itself, of that request). */
static const struct lin_xadopt *adopt_of(const struct lin_explain *x, const struct lin_xlaunch *l,
					 uint64_t tid, uint64_t before, bool to_request)
{
	const struct lin_xadopt *best = NULL, *c;
	if (!to_request)
		best = adopt_at(x, l->proc, tid, LIN_TARGET_EPOCH, l->epoch, before);
	if (!adopts_requests(x, l->proc, tid))
		return best;
	if (to_request) {
		c = adopt_at(x, l->proc, tid, LIN_TARGET_REQUEST, l->epoch, before);
		if (c && (!best || c->host_ns > best->host_ns))
			best = c;
	}
	const uint64_t *r = lin_explain_reqs(x, l);
	for (uint32_t q = 0; q < l->nreq; q++) {
		c = adopt_at(x, l->proc, tid, LIN_TARGET_REQUEST, r[q], before);
		if (c && (!best || c->host_ns > best->host_ns))
			best = c;
	}
	return best;
}

static void host_marks(struct bctx *b, struct lin_xlaunch *l, const struct lin_xgpu *g, uint64_t tid)
{
	struct lin_explain *x = b->x;
	if (g->proc == LIN_XPROC_IMPORTED) {
		for (enum lin_mark m = LIN_M_REQUEST_READY; m <= LIN_M_ADOPTED; m++)
			unknown(l, m, LIN_HOW_NOT_IN_FORMAT);
		return;
	}
	unsigned losses = lin_validator_proc_losses(b->v, g->proc);
	/* The call's start, and how far the clock mapping may have moved it. */
	uint64_t anchor = UINT64_MAX - 1, aerr = 0;
	if (known(l, LIN_M_API_ENTER))
		anchor = l->m[LIN_M_API_ENTER].t, aerr = l->m[LIN_M_API_ENTER].err;
	else if (known(l, LIN_M_KERNEL_START))
		anchor = l->m[LIN_M_KERNEL_START].t, aerr = l->m[LIN_M_KERNEL_START].err;
	uint64_t hi = sat_add(anchor, aerr), lo = anchor > aerr ? anchor - aerr : 0;
	unknown(l, LIN_M_REQUEST_READY, LIN_HOW_NOT_RECORDED);
	if (l->nreq) {
		const struct lin_xbegin *t = lin_vtab_find(&x->begins, l->group, pk1(g->proc, 0));
		if (t)
			set(l, LIN_M_REQUEST_READY, t->host_ns, 0, LIN_EV_OBSERVED, LIN_HOW_RUNTIME_HOOK);
	}
	/* Where the work was declared (or, joined to a request, where that began). */
	uint64_t origin_tid = LIN_XNIL, after = 0;
	const struct lin_xdecl *d = declaration(x, g->proc, l->epoch);
	const struct lin_xbegin *rq = d ? NULL : lin_vtab_find(&x->begins, l->epoch, pk1(g->proc, 0));
	if (d && d->host_ns <= hi) {
		set(l, LIN_M_DECLARED, d->host_ns, 0, LIN_EV_OBSERVED, LIN_HOW_RUNTIME_HOOK);
		origin_tid = d->tid;
		after = d->host_ns;
	} else if (d) {
		unknown(l, LIN_M_DECLARED, LIN_HOW_OUT_OF_ORDER); /* declared after its launch */
	} else if (rq) {
		set(l, LIN_M_DECLARED, 0, 0, LIN_EV_ABSENT, LIN_HOW_JOINED_TO_REQUEST);
		origin_tid = rq->tid;
		after = rq->host_ns;
	} else {
		unknown(l, LIN_M_DECLARED, LIN_HOW_NOT_RECORDED);
	}
	if (tid == LIN_XNIL) {
		unknown(l, LIN_M_CAPTURED, LIN_HOW_NO_API_RECORD);
		unknown(l, LIN_M_ADOPTED, LIN_HOW_NO_API_RECORD);
		return;
	}
	if (x->o.without & LIN_XW_HANDOFF) {
		/* Left out: whether the work was handed off is then not known either (an absent
		 * handoff rests on the adopt records too), so the stretch to the call is
		 * unresolved, not thread_delay. */
		unknown(l, LIN_M_CAPTURED, LIN_HOW_NOT_RECORDED);
		unknown(l, LIN_M_ADOPTED, LIN_HOW_NOT_RECORDED);
		return;
	}
	const struct lin_xadopt *a = adopt_of(x, l, tid, hi, !d && rq);
	if (a && a->host_ns < after)
		a = NULL; /* an adopt of an earlier declaration's work */
	if (a && a->host_ns > lo) {
		/* Within the clock error of the call's start: before it or after, unknown. */
		unknown(l, LIN_M_CAPTURED, LIN_HOW_CLOCK_UNCERTAINTY);
		unknown(l, LIN_M_ADOPTED, LIN_HOW_CLOCK_UNCERTAINTY);
		return;
	}
	if (!a) {
		/* No adopt: the step did not happen only when nothing was lost and the work was
		 * launched on the thread that declared it. */
		enum lin_how h = LIN_HOW_NO_HANDOFF;
		if (losses & LIN_LOST_HOST)
			h = LIN_HOW_DROPPED_RECORDS;
		else if (origin_tid == LIN_XNIL)
			h = LIN_HOW_NOT_RECORDED;
		else if (origin_tid != tid)
			h = LIN_HOW_UNRECORDED_HANDOFF;
		enum lin_evidence ev = h == LIN_HOW_NO_HANDOFF ? LIN_EV_ABSENT : LIN_EV_UNKNOWN;
		set(l, LIN_M_CAPTURED, 0, 0, ev, h);
		set(l, LIN_M_ADOPTED, 0, 0, ev, h);
		return;
	}
	set(l, LIN_M_ADOPTED, a->host_ns, 0, LIN_EV_OBSERVED, LIN_HOW_RUNTIME_HOOK);
	const uint64_t *c = a->ctid == LIN_XNIL || a->cseq == LIN_XNIL
				    ? NULL
				    : lin_vtab_find(&x->caps, a->cseq, pk1(g->proc, a->ctid));
	if (!c)
		unknown(l, LIN_M_CAPTURED,
			(losses & LIN_LOST_HOST) ? LIN_HOW_DROPPED_RECORDS : LIN_HOW_NOT_RECORDED);
	else if (!*c)
		unknown(l, LIN_M_CAPTURED, LIN_HOW_LEAN_TIMESTAMPS);
	else
		set(l, LIN_M_CAPTURED, *c - 1, 0, LIN_EV_OBSERVED, LIN_HOW_RUNTIME_HOOK);
}

/* Whether record @p, a candidate predecessor of @g, ended after @g started (one process's
 * device clock: compared as written, no mapping). */
static bool overlaps(const struct lin_xgpu *p, const struct lin_xgpu *g)
{
	return p->end > g->start;
}

/* Whether the two candidates @p and @q of a launch's readiness end together. Both are of
 * the launch's process (its stream; a recording in it): one device clock, compared as
 * written, where equal ends are the only tie. */
static bool tied(const struct bctx *b, size_t p, size_t q)
{
	return gpu_at(b, p)->end == gpu_at(b, q)->end;
}

/* @raw: the launch's device-clock marks; dependency_ready's, when inferred, is the end of
 * the record that bounds it, as written. */
/*
 * The graph_edge rule: a node's kernel in a replay is ready when every predecessor of its
 * node (graph_edge records of its graph, through graph_node_clone to the application's
 * node and back to the predecessors' clones) has run in the same replay (same
 * correlation). Premise, checked: the graph's topology is recorded, the clone maps to one
 * node, and every predecessor's GPU record of that replay is in the trace and ended before
 * @g started. On success *@t, *@err: the latest predecessor end (host), *@by its record;
 * else the how of the unknown.
 */
static enum lin_how graph_ready(struct bctx *b, const struct lin_xgpu *g, uint64_t *t,
				uint64_t *err, size_t *by)
{
	const struct lin_explain *x = b->x;
	const uint64_t *orig = g->node == LIN_XNIL || g->corr == LIN_XNIL
				       ? NULL
				       : lin_vtab_find(&x->clone_of, g->node, pk1(g->proc, 0));
	const uint64_t *graph = orig && *orig != UINT64_MAX
					? lin_vtab_find(&x->node_graph, *orig, pk1(g->proc, 0))
					: NULL;
	const struct lin_xtopo *topo = graph ? lin_vtab_find(&x->topo, *graph, pk1(g->proc, 0)) : NULL;
	const uint64_t *at = topo ? lin_vtab_find(&x->clone_at, g->node, pk1(g->proc, 0)) : NULL;
	/* The exec took its graph's topology when it was instantiated: edges recorded after its
	 * clones (or in another file, order unknown) may not be its own; a topology recorded
	 * as both "no edge" and edges is in doubt. */
	if (!topo || !at || (topo->nil && topo->edges) || (*at >> 40) != (topo->last >> 40) ||
	    *at < topo->last)
		return LIN_HOW_GRAPH_DEPENDENCY_UNKNOWN;
	const struct lin_xedge *e = (const struct lin_xedge *)x->edges.data;
	struct lin_xedge key = { .to = *orig, .proc = g->proc };
	size_t lo = 0, hi = x->edges.n, npred = 0;
	while (lo < hi) { /* the first edge into the node */
		size_t mid = (lo + hi) / 2;
		if (cmp_edge(&e[mid], &key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	*t = LIN_XNIL;
	for (; lo < x->edges.n && !cmp_edge(&e[lo], &key); lo++, npred++) {
		/* The predecessor's record in this replay; an edge of another graph (the node's
		 * id named in two graphs) leaves the topology in doubt. */
		if (e[lo].graph != *graph)
			return LIN_HOW_GRAPH_DEPENDENCY_UNKNOWN;
		const size_t *r = lin_vtab_find(&x->bynode, e[lo].from, pk1(g->proc, g->corr));
		size_t found = r ? *r : SIZE_MAX;
		if (found == SIZE_MAX || b->he[found] == LIN_XNIL || gpu_at(b, found) == g)
			return LIN_HOW_GRAPH_DEPENDENCY_UNKNOWN; /* a node without a record (or its own) */
		if (overlaps(gpu_at(b, found), g))
			return LIN_HOW_OVERLAPPING_PREDECESSOR;
		if (*t == LIN_XNIL || b->he[found] > *t)
			*t = b->he[found], *err = b->herr[found], *by = found;
	}
	return npred ? LIN_HOW_GRAPH_EDGE : LIN_HOW_GRAPH_ROOT;
}

static void dep_mark(struct bctx *b, struct lin_xlaunch *l, size_t i, const struct lin_xgpu *g,
		     uint64_t *raw)
{
	unsigned without = b->x->o.without;
	uint64_t front = 0, ferr = 0;
	bool have = false;
	/* The frontier is the launch call's return (the submission time only without it): on
	 * a GPU, CUPTI's submitted is when the device took the command, after the work it
	 * waited for (seen on an H200: 0.5 to 1.2 us after a stream or event predecessor's
	 * end, however long the wait), so it cannot bound a dependency from below. */
	if (known(l, LIN_M_API_EXIT))
		front = l->m[LIN_M_API_EXIT].t, ferr = l->m[LIN_M_API_EXIT].err, have = true;
	else if (known(l, LIN_M_SUBMITTED))
		front = l->m[LIN_M_SUBMITTED].t, ferr = l->m[LIN_M_SUBMITTED].err, have = true;
	if (g->flags & LIN_XG_GRAPH) {
		uint64_t t = LIN_XNIL, err = 0;
		size_t by = SIZE_MAX;
		enum lin_how h = (without & LIN_XW_GRAPH_EDGE) ? LIN_HOW_GRAPH_DEPENDENCY_UNKNOWN
							       : graph_ready(b, g, &t, &err, &by);
		if (h != LIN_HOW_GRAPH_EDGE) {
			unknown(l, LIN_M_DEP_READY, h);
		} else if (have && t > front && t - front > err + ferr) {
			set(l, LIN_M_DEP_READY, t, err, LIN_EV_INFERRED, LIN_HOW_GRAPH_EDGE);
			raw[LIN_M_DEP_READY] = gpu_at(b, by)->end;
		} else {
			unknown(l, LIN_M_DEP_READY, LIN_HOW_NO_KNOWN_DEPENDENCY);
		}
		return;
	}
	if (g->flags & LIN_XG_NOSTREAM) {
		unknown(l, LIN_M_DEP_READY, LIN_HOW_NO_STREAM);
		return;
	}
	size_t cand[2] = { (without & LIN_XW_STREAM_ORDER) ? SIZE_MAX : b->pred[i],
			   (without & LIN_XW_EVENT_WAIT) ? SIZE_MAX : event_producer(b, g) };
	static const enum lin_how rules[2] = { LIN_HOW_STREAM_ORDER, LIN_HOW_EVENT_WAIT };
	uint64_t t = LIN_XNIL, err = 0;
	enum lin_how rule = LIN_HOW_NONE;
	bool overlap = false;
	size_t use[2], nuse = 0, by = SIZE_MAX;
	for (int k = 0; k < 2; k++) {
		size_t p = cand[k];
		if (p == SIZE_MAX || b->he[p] == LIN_XNIL)
			continue;
		if (overlaps(gpu_at(b, p), g)) {
			overlap = true; /* the rule's premise does not hold here */
			continue;
		}
		use[nuse++] = p;
		if (t == LIN_XNIL || b->he[p] > t) {
			t = b->he[p];
			err = b->herr[p];
			rule = rules[k];
			by = p;
		}
	}
	/* Two records that end together: the work was ready then, held by either one. */
	if (nuse == 2 && use[0] != use[1] && tied(b, use[0], use[1]))
		rule = LIN_HOW_TIED_DEPENDENCIES;
	/* A bound at or below the frontier says nothing: the launch was not held by it; nor
	 * does one above it by less than the two times' mapping errors. */
	if (t != LIN_XNIL && have && t > front && t - front > err + ferr) {
		set(l, LIN_M_DEP_READY, t, err, LIN_EV_INFERRED, rule);
		raw[LIN_M_DEP_READY] = gpu_at(b, by)->end;
		return;
	}
	bool lost = g->proc != LIN_XPROC_IMPORTED &&
		    (lin_validator_proc_losses(b->v, g->proc) & LIN_LOST_CUPTI);
	unknown(l, LIN_M_DEP_READY,
		overlap ? LIN_HOW_OVERLAPPING_PREDECESSOR
		: lost  ? LIN_HOW_DROPPED_RECORDS
			: LIN_HOW_NO_KNOWN_DEPENDENCY);
}

/* The device marks, and in @raw each one's time as written (imported: the file's clock). */
static void device_marks(struct bctx *b, struct lin_xlaunch *l, size_t i, const struct lin_xgpu *g,
			 uint64_t *tid, uint64_t *raw)
{
	struct lin_explain *x = b->x;
	enum lin_how act = g->proc == LIN_XPROC_IMPORTED ? LIN_HOW_IMPORT_ACTIVITY
							 : LIN_HOW_CUPTI_ACTIVITY;
	if (b->hs[i] != LIN_XNIL) {
		set(l, LIN_M_KERNEL_START, b->hs[i], b->herr[i], LIN_EV_OBSERVED, act);
		set(l, LIN_M_KERNEL_END, b->he[i], b->herr[i], LIN_EV_OBSERVED, act);
		raw[LIN_M_KERNEL_START] = g->start;
		raw[LIN_M_KERNEL_END] = g->end;
	} else {
		enum lin_how h = g->start == LIN_XNIL || g->end == LIN_XNIL || g->end < g->start
					 ? LIN_HOW_NOT_RECORDED
					 : LIN_HOW_NO_CLOCK;
		unknown(l, LIN_M_KERNEL_START, h);
		unknown(l, LIN_M_KERNEL_END, h);
	}
	*tid = LIN_XNIL;
	if (g->proc == LIN_XPROC_IMPORTED) {
		unknown(l, LIN_M_QUEUED, LIN_HOW_NOT_IN_FORMAT);
		unknown(l, LIN_M_SUBMITTED, LIN_HOW_NOT_IN_FORMAT);
		if (g->api_s != LIN_XNIL && g->api_e != LIN_XNIL) {
			set(l, LIN_M_API_ENTER, g->api_s, 0, LIN_EV_OBSERVED, LIN_HOW_IMPORT_API);
			set(l, LIN_M_API_EXIT, g->api_e, 0, LIN_EV_OBSERVED, LIN_HOW_IMPORT_API);
			raw[LIN_M_API_ENTER] = g->api_s;
			raw[LIN_M_API_EXIT] = g->api_e;
		} else {
			unknown(l, LIN_M_API_ENTER, LIN_HOW_NO_API_RECORD);
			unknown(l, LIN_M_API_EXIT, LIN_HOW_NO_API_RECORD);
		}
		*tid = g->api_tid;
		return;
	}
	uint64_t h, err;
	static const enum lin_mark lat[] = { LIN_M_QUEUED, LIN_M_SUBMITTED };
	uint64_t lv[] = { g->queued, g->submitted };
	for (int k = 0; k < 2; k++) {
		if (g->kind != LIN_REC_KERNEL)
			unknown(l, lat[k], LIN_HOW_NOT_RECORDED);
		else if (g->flags & LIN_XG_GRAPH)
			/* A graph node's kernel: CUPTI gives no submitted and a queued that is not
			 * its replay's (seen on an H200: up to 100 ms before the replay's call). */
			unknown(l, lat[k], LIN_HOW_GRAPH_LATENCY);
		else if (lv[k] == LIN_XNIL || (x->o.without & LIN_XW_LATENCY))
			unknown(l, lat[k], LIN_HOW_NO_LATENCY_TIMESTAMPS);
		else if (!to_host(b, g, lv[k], &h, &err))
			unknown(l, lat[k], LIN_HOW_NO_CLOCK);
		else
			set(l, lat[k], h, err, LIN_EV_OBSERVED, LIN_HOW_CUPTI_LATENCY);
		if (known(l, lat[k]))
			raw[lat[k]] = lv[k];
	}
	const struct lin_xapi *a =
		g->corr == LIN_XNIL ? NULL : lin_vtab_find(&x->apis, g->corr, pk1(g->proc, 0));
	uint64_t hs, he, es, ee;
	if (!a) {
		unknown(l, LIN_M_API_ENTER, LIN_HOW_NO_API_RECORD);
		unknown(l, LIN_M_API_EXIT, LIN_HOW_NO_API_RECORD);
		return;
	}
	*tid = a->tid;
	if (a->start == LIN_XNIL || a->end == LIN_XNIL || a->end < a->start) {
		unknown(l, LIN_M_API_ENTER, LIN_HOW_NOT_RECORDED);
		unknown(l, LIN_M_API_EXIT, LIN_HOW_NOT_RECORDED);
		return;
	}
	if (!to_host(b, g, a->start, &hs, &es) || !to_host(b, g, a->end, &he, &ee)) {
		unknown(l, LIN_M_API_ENTER, LIN_HOW_NO_CLOCK);
		unknown(l, LIN_M_API_EXIT, LIN_HOW_NO_CLOCK);
		return;
	}
	set(l, LIN_M_API_ENTER, hs, es, LIN_EV_OBSERVED, LIN_HOW_CUPTI_API);
	set(l, LIN_M_API_EXIT, he, ee, LIN_EV_OBSERVED, LIN_HOW_CUPTI_API);
	raw[LIN_M_API_ENTER] = a->start;
	raw[LIN_M_API_EXIT] = a->end;
}

/* A launch joined by inference: what its host marks say of it is as good as that join. */
static void inferred_join(struct lin_xlaunch *l)
{
	for (enum lin_mark m = LIN_M_REQUEST_READY; m <= LIN_M_ADOPTED; m++)
		if (l->m[m].ev == LIN_EV_OBSERVED) {
			l->m[m].ev = LIN_EV_INFERRED;
			l->m[m].how = LIN_HOW_INFERRED_JOIN;
		} else if (l->m[m].ev == LIN_EV_ABSENT) {
			unknown(l, m, LIN_HOW_INFERRED_JOIN); /* "did not happen" rests on the join */
		}
}

/*
 * The marks' order: request_ready <= declared <= captured <= adopted <= api_enter <= queued
 * <= submitted <= kernel_start, and api_enter <= api_exit (a kernel may start before its
 * launch call returns: api_exit is not held to the start). A mark later than a known mark
 * that must follow it, by more than both times' errors, cannot be; it is unknown
 * (out_of_order). Walked from the start backwards, so the marks nearer the GPU record
 * (observed with it) are the ones kept.
 */
static void out_of_order(struct lin_xlaunch *l)
{
	static const enum lin_mark chain[] = { LIN_M_REQUEST_READY, LIN_M_DECLARED,
					       LIN_M_CAPTURED,      LIN_M_ADOPTED,
					       LIN_M_API_ENTER,     LIN_M_QUEUED,
					       LIN_M_SUBMITTED,     LIN_M_KERNEL_START };
	uint64_t bound = UINT64_MAX, berr = 0;
	for (size_t i = sizeof(chain) / sizeof(chain[0]); i-- > 0;) {
		enum lin_mark m = chain[i];
		if (!known(l, m))
			continue;
		if (bound != UINT64_MAX && l->m[m].t > sat_add(bound, sat_add(berr, l->m[m].err))) {
			unknown(l, m, LIN_HOW_OUT_OF_ORDER);
			continue;
		}
		bound = l->m[m].t;
		berr = l->m[m].err;
	}
	const struct lin_xmark *en = &l->m[LIN_M_API_ENTER], *ex = &l->m[LIN_M_API_EXIT];
	if (known(l, LIN_M_API_EXIT) &&
	    ((known(l, LIN_M_API_ENTER) && en->t > sat_add(ex->t, sat_add(en->err, ex->err))) ||
	     (!known(l, LIN_M_API_ENTER) && en->how == LIN_HOW_OUT_OF_ORDER)))
		unknown(l, LIN_M_API_EXIT, LIN_HOW_OUT_OF_ORDER); /* the call's record is in doubt */
}

/* ------------------------------------------------------------------ statements */

static bool add_seg_ns(struct lin_xlaunch *l, uint64_t s, uint64_t e, uint64_t ns,
		       enum lin_xcause c, enum lin_evidence ev, enum lin_how how)
{
	if (l->nseg >= LIN_XSEG_MAX)
		return false; /* not reached: at most 12 (LIN_XSEG_MAX) */
	l->seg[l->nseg++] = (struct lin_xseg){
		.start = s, .end = e, .ns = ns, .cause = (uint8_t)c, .ev = (uint8_t)ev, .how = (uint8_t)how
	};
	return true;
}

static void add_seg(struct lin_xlaunch *l, uint64_t s, uint64_t e, enum lin_xcause c,
		    enum lin_evidence ev, enum lin_how how)
{
	if (e > s)
		add_seg_ns(l, s, e, e - s, c, ev, how);
}

/* The first merged off-CPU record of (@proc, @tid) with end > @t, or the index past them. */
static size_t sched_from(const struct lin_explain *x, uint16_t proc, uint64_t tid, uint64_t t)
{
	const struct lin_xsched *d = (const struct lin_xsched *)x->scheds.data;
	size_t lo = 0, hi = x->scheds.n;
	while (lo < hi) { /* merged records of a thread are disjoint: their ends increase */
		size_t mid = (lo + hi) / 2;
		int k = cmp_u64(d[mid].proc, proc);
		if (!k)
			k = cmp_u64(d[mid].tid, tid);
		if (k < 0 || (!k && d[mid].end <= t))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* [s, e] of cause @c on thread @tid; the time host_sched records say the thread was not
 * running in it is a descheduled statement (observed) nested in it, and is taken out of
 * its ns. Two binary searches and a difference of sums, however many records. */
static void add_thread_seg(const struct lin_explain *x, struct lin_xlaunch *l, uint16_t proc,
			   uint64_t tid, uint64_t s, uint64_t e, enum lin_xcause c,
			   enum lin_evidence ev, enum lin_how how)
{
	if (e <= s)
		return;
	const struct lin_xsched *d = (const struct lin_xsched *)x->scheds.data;
	uint64_t off = 0, first = 0, last = 0;
	if (tid != LIN_XNIL && proc != LIN_XPROC_IMPORTED && x->scheds.n &&
	    !(x->o.without & LIN_XW_HOST_SCHED)) {
		size_t a = sched_from(x, proc, tid, s), b = sched_from(x, proc, tid, e);
		/* Records a..b-1 end inside (s, e]; b may still start before e. */
		if (b < x->scheds.n && d[b].proc == proc && d[b].tid == tid && d[b].start < e)
			b++;
		if (a < b) {
			const struct lin_xsched *fa = &d[a], *lb = &d[b - 1];
			off = lb->cum + (lb->end - lb->start) - fa->cum;
			first = fa->start > s ? fa->start : s;
			last = lb->end < e ? lb->end : e;
			off -= first - fa->start;
			off -= lb->end - last;
		}
	}
	add_seg_ns(l, s, e, e - s - off, c, ev, how);
	if (off)
		add_seg_ns(l, first, last, off, LIN_X_DESCHEDULED, LIN_EV_OBSERVED, LIN_HOW_HOST_SCHED);
}

/* The statement a stretch ending at mark @m is; the marks it spans without a value are
 * @skipped (a bit per mark). A stretch over an unknown mark is unresolved, except over the
 * capture (the whole handoff) and submission (a dependency holds whatever the
 * submission did). */
static enum lin_xcause cause_of(enum lin_mark m, uint32_t skipped)
{
	uint32_t ok = 0;
	enum lin_xcause c = LIN_X_UNRESOLVED;
	switch (m) {
	case LIN_M_DECLARED: c = LIN_X_BEFORE_DECLARE; break;
	case LIN_M_CAPTURED: c = LIN_X_BEFORE_HANDOFF; break;
	case LIN_M_ADOPTED:
		c = LIN_X_HANDOFF_WAIT;
		ok = 1u << LIN_M_CAPTURED;
		break;
	case LIN_M_API_ENTER: c = LIN_X_THREAD_DELAY; break;
	case LIN_M_API_EXIT: c = LIN_X_API_CALL; break;
	case LIN_M_SUBMITTED: c = LIN_X_SUBMIT_DELAY; break;
	case LIN_M_DEP_READY:
		c = LIN_X_DEPENDENCY;
		ok = 1u << LIN_M_SUBMITTED;
		break;
	default: return LIN_X_UNRESOLVED;
	}
	return (skipped & ~ok) ? LIN_X_UNRESOLVED : c;
}

/*
 * device_occupied, on the stretch from the frontier @front (@fdev as written) to the start
 * @start that no known dependency explains: the device_busy statement up to when the device
 * freed, when the premise holds and the precondition too (else *why says what is missing).
 * Returns where the unresolved rest starts.
 */
static uint64_t device_busy(struct bctx *b, struct lin_xlaunch *l, const struct lin_xgpu *g,
			    uint64_t front, uint64_t fdev, uint64_t start, enum lin_how *why)
{
	size_t o = occupier(b, g, fdev, g->start, false);
	if (o == SIZE_MAX || b->he[o] == LIN_XNIL)
		return front;
	if (!synced(b->x, g)) {
		/* Without sync records an event dependency on a busy stream would not be in the
		 * trace: the device was busy, but that it held this work is not established. */
		*why = LIN_HOW_NO_SYNC_RECORDS;
		return front;
	}
	if (!known(l, LIN_M_SUBMITTED)) {
		/* Without the submission time the command may have reached the device only when
		 * it started: a submission delay looks the same (docs/attribution.md). */
		*why = (enum lin_how)l->m[LIN_M_SUBMITTED].how;
		return front;
	}
	uint64_t e = b->he[o] < start ? b->he[o] : start;
	if (e <= front)
		return front;
	add_seg(l, front, e, LIN_X_DEVICE_BUSY, LIN_EV_INFERRED, LIN_HOW_DEVICE_OCCUPIED);
	return e;
}

/*
 * Competing causes: the dominant statement @d (its start @ddev as written, LIN_XNIL for a
 * host-clock time) is withdrawn when the device was busy with other streams' work from its
 * start until it freed right before the start: that was as sufficient a cause. A host-clock
 * start is compared with the records' host times, moved back by the start's mapping error
 * so the occupancy is not claimed from later than it is known.
 */
static void competing(struct bctx *b, struct lin_xlaunch *l, const struct lin_xgpu *g,
		      const struct lin_xseg *d, uint64_t ddev)
{
	if ((b->x->o.without & LIN_XW_OCCUPANCY) || l->dominant == LIN_X_DEVICE_BUSY ||
	    l->dominant == LIN_X_UNRESOLVED || l->dominant == LIN_X_KERNEL_SLOW)
		return;
	size_t o;
	if (ddev != LIN_XNIL) {
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

/* The statements, their dominant cause, and whether a competing cause withdraws it. @raw:
 * the marks as written on the device clock (LIN_XNIL: a host-clock mark). */
static void statements(struct bctx *b, struct lin_xlaunch *l, const struct lin_xgpu *g,
		       uint64_t tid, const uint64_t *raw)
{
	enum lin_mark order[] = { LIN_M_REQUEST_READY, LIN_M_DECLARED,  LIN_M_CAPTURED,
				  LIN_M_ADOPTED,       LIN_M_API_ENTER, LIN_M_API_EXIT,
				  LIN_M_SUBMITTED,     LIN_M_DEP_READY, LIN_M_KERNEL_START };
	const size_t n = sizeof(order) / sizeof(order[0]);
	/* A dependency that ended before the submission: held from the call's return to its
	 * end, then the command reached the device (a GPU's submitted follows the wait). */
	if (known(l, LIN_M_SUBMITTED) && known(l, LIN_M_DEP_READY) &&
	    l->m[LIN_M_DEP_READY].t < l->m[LIN_M_SUBMITTED].t) {
		order[6] = LIN_M_DEP_READY;
		order[7] = LIN_M_SUBMITTED;
	}
	l->nseg = 0;
	l->dominant = LIN_X_N;
	l->dominant_how = LIN_HOW_NONE;
	size_t k = 0;
	while (k < n && !known(l, order[k]))
		k++;
	if (k >= n - 1 || !known(l, LIN_M_KERNEL_START))
		return;
	/* Stretches end at the start at the latest (the call may return after it). */
	uint64_t start = l->m[LIN_M_KERNEL_START].t;
	uint64_t front = l->m[order[k]].t, fdev = raw[order[k]];
	if (front > start)
		front = start, fdev = raw[LIN_M_KERNEL_START];
	/* Each statement's start as written on the device clock (LIN_XNIL: a host time). */
	uint64_t sdev[LIN_XSEG_MAX] = { 0 };
	enum lin_mark from = order[k]; /* the mark the stretch starts at */
	uint32_t skipped = 0;
	enum lin_how skipped_how = LIN_HOW_NONE;
	for (size_t j = k + 1; j < n; j++) {
		enum lin_mark m = order[j];
		if (!known(l, m)) {
			if (l->m[m].ev == LIN_EV_UNKNOWN) {
				skipped |= 1u << m;
				if (m != LIN_M_CAPTURED && m != LIN_M_SUBMITTED)
					skipped_how = (enum lin_how)l->m[m].how;
			}
			continue;
		}
		uint64_t t = l->m[m].t, tdev = raw[m];
		if (t < front)
			t = front, tdev = fdev;
		if (t > start)
			t = start, tdev = raw[LIN_M_KERNEL_START];
		uint8_t n0 = l->nseg;
		if (m == LIN_M_KERNEL_START) {
			/* Whatever held it after the last mark is not in the trace. */
			enum lin_how why = l->m[LIN_M_DEP_READY].ev == LIN_EV_UNKNOWN
						   ? (enum lin_how)l->m[LIN_M_DEP_READY].how
						   : LIN_HOW_AFTER_DEPENDENCY;
			if ((skipped & ~(1u << LIN_M_SUBMITTED | 1u << LIN_M_DEP_READY)) && skipped_how)
				why = skipped_how;
			/* From the frontier, with no dependency known: a busy device, perhaps. */
			if (why == LIN_HOW_NO_KNOWN_DEPENDENCY && fdev != LIN_XNIL &&
			    (from == LIN_M_API_EXIT || from == LIN_M_SUBMITTED) &&
			    !(b->x->o.without & LIN_XW_OCCUPANCY)) {
				uint64_t e = device_busy(b, l, g, front, fdev, t, &why);
				if (l->nseg > n0)
					sdev[n0++] = fdev;
				front = e;
			}
			add_seg(l, front, t, LIN_X_UNRESOLVED, LIN_EV_UNKNOWN, why);
			if (l->nseg > n0)
				sdev[n0] = LIN_XNIL; /* unresolved: never withdrawn */
			break;
		}
		enum lin_xcause c = cause_of(m, skipped);
		enum lin_evidence ev = l->m[m].ev;
		enum lin_how how = (enum lin_how)l->m[m].how;
		if (l->m[from].ev == LIN_EV_INFERRED && ev == LIN_EV_OBSERVED) {
			/* As good as the weaker of the two marks that bound it. */
			ev = LIN_EV_INFERRED;
			how = (enum lin_how)l->m[from].how;
		}
		if (c == LIN_X_UNRESOLVED) {
			ev = LIN_EV_UNKNOWN;
			how = skipped_how;
		}
		if (c == LIN_X_THREAD_DELAY || c == LIN_X_API_CALL)
			add_thread_seg(b->x, l, l->proc, tid, front, t, c, ev, how);
		else
			add_seg(l, front, t, c, ev, how);
		/* The stretch starts at the front; a descheduled one nested in it at a host time. */
		for (uint8_t q = n0; q < l->nseg; q++)
			sdev[q] = q == n0 ? fdev : LIN_XNIL;
		front = t;
		fdev = tdev;
		from = m;
		skipped = 0;
		skipped_how = LIN_HOW_NONE;
	}
	uint64_t best = 0;
	uint8_t d = 0;
	for (uint8_t s = 0; s < l->nseg; s++)
		if (l->seg[s].ns > best) {
			best = l->seg[s].ns;
			d = s;
		}
	if (!best)
		return;
	l->dominant = l->seg[d].cause;
	l->dominant_how = l->seg[d].how;
	competing(b, l, g, &l->seg[d], sdev[d]);
}

static void slow(struct bctx *b, struct lin_xlaunch *l, size_t i)
{
	l->median = b->median[i];
	if (!l->median || !known(l, LIN_M_KERNEL_START))
		return;
	uint64_t s = l->m[LIN_M_KERNEL_START].t, e = l->m[LIN_M_KERNEL_END].t;
	if (e > s && (double)(e - s) > b->x->o.slow_factor * (double)l->median && e - s > l->median) {
		l->slow_excess = e - s - l->median;
		/* Inside the kernel, not before its start: never the dominant statement. */
		add_seg(l, s + l->median, e, LIN_X_KERNEL_SLOW, LIN_EV_INFERRED, LIN_HOW_KERNEL_MEDIAN);
	}
}

/* ------------------------------------------------------------------ groups and summary */

static uint64_t first_mark(const struct lin_xlaunch *l)
{
	for (int m = 0; m < LIN_M_N; m++)
		if (known(l, (enum lin_mark)m))
			return l->m[m].t;
	return LIN_XNIL;
}

static bool group_add(struct lin_explain *x, struct lin_vtab *gt, const struct lin_xlaunch *l,
		      size_t gi, uint64_t id)
{
	bool fresh;
	uint64_t k1 = l->imported ? (1ULL << 40) | l->file : pk1(l->proc, 0);
	uint64_t *slot = lin_vtab_get(gt, id, k1, &fresh);
	if (!slot)
		return false;
	if (fresh) {
		struct lin_xgroup *g = lin_vec_push(&x->groups);
		if (!g)
			return false;
		*slot = x->groups.n - 1;
		g->id = id;
		g->file = l->file;
		g->proc = l->proc;
		g->imported = l->imported;
		g->critical = g->crit = SIZE_MAX;
		g->ready = LIN_XNIL;
		g->name = l->gname;
		if (!l->imported) {
			/* Its begin, unless that is after the launch's start: out of order. */
			const struct lin_xbegin *t = lin_vtab_find(&x->begins, id, k1);
			const struct lin_xmark *ks = &l->m[LIN_M_KERNEL_START];
			if (t && (!known(l, LIN_M_KERNEL_START) || t->host_ns <= sat_add(ks->t, ks->err)))
				g->ready = t->host_ns;
		}
	}
	struct lin_xgroup *g = lin_vec_at(&x->groups, (size_t)*slot);
	g->nlaunch++;
	if (known(l, LIN_M_KERNEL_END) &&
	    (g->critical == SIZE_MAX || l->m[LIN_M_KERNEL_END].t > g->last_end)) {
		g->last_end = l->m[LIN_M_KERNEL_END].t;
		g->critical = gi;
		g->first = first_mark(l);
	}
	return true;
}

static uint64_t group_span(const struct lin_xgroup *g)
{
	if (g->critical == SIZE_MAX)
		return 0;
	uint64_t from = g->ready != LIN_XNIL ? g->ready : g->first;
	return from != LIN_XNIL && g->last_end > from ? g->last_end - from : 0;
}

static int cmp_group(const void *pa, const void *pb)
{
	const struct lin_xgroup *a = pa, *b = pb;
	uint64_t sa = group_span(a), sb = group_span(b);
	if (sa != sb)
		return sa > sb ? -1 : 1;
	int c = cmp_u64(a->proc, b->proc);
	if (!c)
		c = cmp_u64(a->file, b->file);
	return c ? c : cmp_u64(a->id, b->id);
}

bool lin_x_serves(const struct lin_explain *x, const struct lin_xlaunch *l, uint64_t id,
		  bool imported, uint16_t proc, uint32_t file)
{
	if (imported)
		return l->imported && l->file == file && l->group == id;
	if (l->imported || l->proc != proc || !l->nreq)
		return false;
	const uint64_t *r = lin_vec_at(&x->reqs, (size_t)l->req0);
	for (uint32_t q = 0; q < l->nreq; q++)
		if (r[q] == id)
			return true;
	return false;
}

/* Whether the reports keep ledger @l (lin_xopts). */
static bool kept(const struct lin_explain *x, const struct lin_xlaunch *l)
{
	if (x->o.keep_all)
		return true;
	if (!x->o.have_request)
		return false;
	if (l->imported)
		return l->group == x->o.request;
	const uint64_t *r = lin_explain_reqs(x, l);
	for (uint32_t q = 0; q < l->nreq; q++)
		if (r[q] == x->o.request)
			return true;
	return false;
}

static bool listed(const struct lin_explain *x, const struct lin_xgroup *g, size_t rank)
{
	if (x->o.have_request)
		return g->id == x->o.request;
	return !x->o.top || rank < x->o.top;
}

static void summarise(struct lin_explain *x, const struct lin_xlaunch *l)
{
	struct lin_xsummary *s = &x->sum;
	for (int m = 0; m < LIN_M_N; m++)
		s->marks[m][l->m[m].ev]++;
	if (l->join == LIN_JOIN_INFERRED)
		s->join_inferred++;
	if (!known(l, LIN_M_KERNEL_START)) {
		s->no_start++;
		return;
	}
	bool any = false;
	for (uint8_t i = 0; i < l->nseg; i++) {
		const struct lin_xseg *g = &l->seg[i];
		s->by_cause_ns[g->cause] = sat_add(s->by_cause_ns[g->cause], g->ns);
		if (g->cause != LIN_X_KERNEL_SLOW) {
			s->prestart_ns = sat_add(s->prestart_ns, g->ns);
			any = true;
		}
	}
	s->with_statements += any;
	if (l->dominant < LIN_X_N)
		s->dominant[l->dominant]++;
}

/* ------------------------------------------------------------------ build */

enum xres { X_OK, X_UNJOINED, X_EPOCH_ONLY, X_DUP };

/* Not joined: the validator's verdict @vd (NULL: none) says how and why. */
static enum xres unjoined(const struct lin_xverdict *vd, const struct lin_xverdict **out)
{
	*out = vd;
	return X_UNJOINED;
}

/*
 * The ledger of GPU record @i, on the validator's verdict on it: a record the validator lost
 * or found ambiguous gets none (X_UNJOINED, *@why its verdict); an inferred join is
 * inferred here too, with its rule (docs/ledger.md, "Joins").
 */
static enum xres explain_one(struct bctx *b, size_t i, struct lin_xlaunch *l,
			     const struct lin_xverdict **why)
{
	struct lin_explain *x = b->x;
	const struct lin_xgpu *g = gpu_at(b, i);
	memset(l, 0, sizeof(*l));
	l->offset = g->offset;
	l->id = i;
	l->file = g->file;
	l->proc = g->proc;
	l->kind = g->kind;
	l->corr = g->corr;
	l->stream = g->stream;
	l->dev = g->dev;
	l->ctx = g->ctx;
	l->graph_id = g->graph_id;
	l->name = g->name;
	l->gname = g->gname;
	l->imported = g->proc == LIN_XPROC_IMPORTED;
	l->epoch = l->group = LIN_XNIL;
	l->dominant = l->alt = LIN_X_N;
	l->key = g->key;
	/* Raw, for baselines: whether or not stream_order used it. */
	l->pred_end = b->pred[i] == SIZE_MAX ? LIN_XNIL : b->he[b->pred[i]];
	*why = NULL;
	if (l->imported) {
		const struct lin_xverdict *vd = lin_vtab_find(&x->verd, g->vkey, g->file);
		if (!vd || (vd->join != LIN_JOIN_OBSERVED && vd->join != LIN_JOIN_INFERRED) ||
		    !(g->flags & LIN_XG_LAUNCH))
			return unjoined(vd, why);
		l->join = vd->join;
		l->join_rule = vd->join == LIN_JOIN_INFERRED ? vd->why : NULL;
		l->group = g->group;
	} else {
		if (g->flags & LIN_XG_DUP)
			return X_DUP;
		const struct lin_xverdict *vd = lin_vtab_find(&x->verd, g->vkey, g->file);
		if (!vd)
			return X_DUP;
		if (vd->join != LIN_JOIN_OBSERVED && vd->join != LIN_JOIN_INFERRED)
			return unjoined(vd, why);
		if (!vd->nreq) {
			*why = vd;
			return X_EPOCH_ONLY;
		}
		l->join = vd->join;
		l->join_rule = vd->join == LIN_JOIN_INFERRED ? vd->why : NULL;
		l->epoch = vd->epoch;
		l->req0 = vd->req0;
		l->nreq = vd->nreq;
		l->group = *(const uint64_t *)lin_vec_at(&x->reqs, (size_t)vd->req0);
	}
	uint64_t tid, raw[LIN_M_N];
	for (int m = 0; m < LIN_M_N; m++)
		raw[m] = LIN_XNIL;
	device_marks(b, l, i, g, &tid, raw);
	host_marks(b, l, g, tid);
	if (l->join == LIN_JOIN_INFERRED)
		inferred_join(l);
	dep_mark(b, l, i, g, raw);
	out_of_order(l);
	statements(b, l, g, tid, raw);
	slow(b, l, i);
	return X_OK;
}

/* --verdicts: the verdict the ledger of GPU record @i rests on (none for a duplicate). */
static void write_verdict(const struct lin_explain *x, size_t i, enum xres res,
			  const struct lin_xlaunch *l, const struct lin_xverdict *vd)
{
	const struct lin_xgpu *g = gpu_of(&x->gpus, i);
	const char *name = g->file < x->o.nnames ? x->o.names[g->file] : "?";
	bool imp = g->proc == LIN_XPROC_IMPORTED;
	switch (res) {
	case X_DUP: return;
	case X_OK:
		lin_verdict_line(x->o.verdicts, name, g->vkey, (enum lin_join)l->join, l->join_rule,
				 imp ? l->group : LIN_XNIL, imp ? NULL : lin_explain_reqs(x, l),
				 imp ? 0 : l->nreq);
		return;
	case X_EPOCH_ONLY:
	case X_UNJOINED:
		lin_verdict_line(x->o.verdicts, name, g->vkey,
				 vd ? (enum lin_join)vd->join : LIN_JOIN_NONE,
				 vd ? vd->why : "no_verdict", LIN_XNIL, NULL, 0);
		return;
	}
}

/* One more record with no ledger for the validator's verdict @vd: lost or ambiguous, and
 * why. A record with no verdict at all (an imported record no importer classified) is
 * counted as lost, cause "no_verdict". */
static void count_unjoined(struct lin_xsummary *s, const struct lin_xverdict *vd)
{
	s->unjoined++;
	bool amb = vd && vd->join == LIN_JOIN_AMBIGUOUS;
	if (amb)
		s->unjoined_ambiguous++;
	else
		s->unjoined_lost++;
	const char *cause = vd && vd->why ? vd->why : "no_verdict";
	for (uint32_t k = 0; k < s->n_unjoined_by; k++)
		if (s->unjoined_by[k].ambiguous == amb && !strcmp(s->unjoined_by[k].cause, cause)) {
			s->unjoined_by[k].n++;
			return;
		}
	if (s->n_unjoined_by == LIN_X_CAUSES_MAX) {
		s->unjoined_other++;
		return;
	}
	s->unjoined_by[s->n_unjoined_by].cause = cause;
	s->unjoined_by[s->n_unjoined_by].ambiguous = amb;
	s->unjoined_by[s->n_unjoined_by++].n = 1;
}

int lin_explain_build(struct lin_explain *x, const struct lin_validator *v)
{
	if (x->oom)
		return -ENOMEM;
	vsort(&x->decls, cmp_decl);
	vsort(&x->adopts, cmp_adopt);
	vsort(&x->scheds, cmp_sched);
	vsort(&x->waits, cmp_wait);
	sched_bounds(x);
	/* Kernel names of lineage traces (their string records), and the records the validator
	 * gave no verdict: duplicates, which take no part in stream order either. */
	for (size_t i = 0; i < x->gpus.n; i++) {
		struct lin_xgpu *g = lin_vec_at(&x->gpus, i);
		if (g->proc == LIN_XPROC_IMPORTED)
			continue;
		if (g->name_sid != LIN_XNIL) {
			const uint64_t *o = lin_vtab_find(&x->sids, g->name_sid, pk1(g->proc, 0));
			g->name = o ? (uint32_t)*o : 0;
		}
		if (!lin_vtab_find(&x->verd, g->offset, g->file))
			g->flags |= LIN_XG_DUP;
	}
	struct bctx b = { .x = x, .v = v, .n = x->gpus.n };
	size_t n = b.n + 1;
	b.hs = malloc(n * sizeof(uint64_t));
	b.he = malloc(n * sizeof(uint64_t));
	b.herr = calloc(n, sizeof(uint64_t));
	b.pred = malloc(n * sizeof(size_t));
	b.median = malloc(n * sizeof(uint64_t));
	int rc = -ENOMEM;
	struct lin_vtab gt;
	lin_vtab_init(&gt, sizeof(uint64_t));
	if (!b.hs || !b.he || !b.herr || !b.pred || !b.median)
		goto out;
	host_times(&b);
	if (!streams(&b) || !medians(&b) || !occupancy(&b) || !graph_index(&b))
		goto out;
	wait_bounds(&b);
	x->sum.gpu_records = b.n;
	/* Every ledger counts; only those the reports list are kept. */
	for (size_t i = 0; i < b.n; i++) {
		struct lin_xlaunch l;
		const struct lin_xverdict *why;
		enum xres res = explain_one(&b, i, &l, &why);
		if (x->o.verdicts)
			write_verdict(x, i, res, &l, why);
		switch (res) {
		case X_UNJOINED: count_unjoined(&x->sum, why); continue;
		case X_EPOCH_ONLY: x->sum.epoch_only++; continue;
		case X_DUP: x->sum.duplicates++; continue;
		case X_OK: break;
		}
		x->sum.explained++;
		summarise(x, &l);
		if (kept(x, &l)) {
			struct lin_xlaunch *k = lin_vec_push(&x->launches);
			if (!k)
				goto out;
			*k = l;
		}
		if (l.imported) {
			if (l.group != LIN_XNIL && !group_add(x, &gt, &l, i, l.group))
				goto out;
			continue;
		}
		const uint64_t *r = lin_explain_reqs(x, &l);
		for (uint32_t q = 0; q < l.nreq; q++)
			if (!group_add(x, &gt, &l, i, r[q]))
				goto out;
	}
	x->sum.groups = x->groups.n;
	vsort(&x->groups, cmp_group);
	/* The listed requests' critical ledgers, made again (a ledger is a function of the
	 * records): one per listed request, not one per GPU record. */
	for (size_t gi = 0; gi < x->groups.n; gi++) {
		struct lin_xgroup *g = lin_vec_at(&x->groups, gi);
		if (g->critical == SIZE_MAX || !listed(x, g, gi))
			continue;
		struct lin_xlaunch *k = lin_vec_push(&x->crits);
		if (!k)
			goto out;
		const struct lin_xverdict *why;
		explain_one(&b, g->critical, k, &why); /* X_OK: it was explained above */
		g->crit = x->crits.n - 1;
		/* The request's ready, as its critical ledger has it: not when that ledger finds it
		 * out of order (the ledger's own request_ready), nor after any of its marks. */
		uint64_t fm = LIN_XNIL;
		for (int m = LIN_M_DECLARED; m < LIN_M_N && fm == LIN_XNIL; m++)
			if (known(k, (enum lin_mark)m))
				fm = k->m[m].t;
		if (!k->imported && k->group == g->id)
			g->ready = known(k, LIN_M_REQUEST_READY) ? k->m[LIN_M_REQUEST_READY].t : LIN_XNIL;
		else if (g->ready != LIN_XNIL && fm != LIN_XNIL && g->ready > fm)
			g->ready = LIN_XNIL;
	}
	rc = 0;
out:
	lin_vtab_free(&gt);
	free(b.hs);
	free(b.he);
	free(b.herr);
	free(b.pred);
	free(b.bycorr);
	free(b.median);
	free(b.bydev);
	free(b.dmax);
	free(b.hmax);
	if (rc)
		x->oom = true;
	return rc;
}

size_t lin_explain_count(const struct lin_explain *x) { return x->launches.n; }

size_t lin_explain_listed(const struct lin_explain *x) { return x->crits.n; }

const struct lin_xlaunch *lin_explain_at(const struct lin_explain *x, size_t i)
{
	return i < x->launches.n ? lin_vec_at(&x->launches, i) : NULL;
}

const uint64_t *lin_explain_reqs(const struct lin_explain *x, const struct lin_xlaunch *l)
{
	return l->nreq ? lin_vec_at(&x->reqs, (size_t)l->req0) : NULL;
}

const char *lin_explain_name(const struct lin_explain *x, const struct lin_xlaunch *l)
{
	return l->name ? x->pool + l->name - 1 : NULL;
}

const struct lin_xsummary *lin_explain_summary(const struct lin_explain *x) { return &x->sum; }
