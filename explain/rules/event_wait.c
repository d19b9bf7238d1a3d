/* SPDX-License-Identifier: MIT */
/*
 * event_wait.c - the event_wait rule (docs/ledger.md, "Rules"): a stream wait event on stream
 * B naming the sync id of a cuda_event recorded on stream A (device, context, stream) makes
 * every record launched on B after the wait (a larger correlation id) ready no earlier than
 * the end of the last record launched on A before the recording. Its prepare sorts the waits
 * and finds each one's producer; device_occupied asks it what a launch waits for
 * (lin_x_wait_producers).
 */
#include "rule.h"

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

/* The last record on (proc, dev, ctx, stream) with a correlation below @corr. */
static size_t before_corr(const struct lin_xbuild *b, uint16_t proc, uint32_t dev, uint32_t ctx,
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
static bool wait_bounds(struct lin_xbuild *b)
{
	struct lin_explain *x = b->x;
	lin_x_vsort(&x->waits, cmp_wait);
	struct lin_xwait *w = (struct lin_xwait *)x->waits.data;
	for (size_t i = 0; i < x->waits.n; i++) {
		w[i].best = SIZE_MAX;
		const struct lin_xevent *e = lin_vtab_find(&x->events, w[i].sync_id, pk1(w[i].proc, 0));
		if (e && e->corr != LIN_NIL && e->corr < w[i].corr) {
			size_t p = before_corr(b, w[i].proc, e->dev, e->ctx, e->stream, e->corr);
			if (p != SIZE_MAX && b->he[p] != LIN_NIL)
				w[i].best = p;
		}
		if (i && w[i - 1].proc == w[i].proc && w[i - 1].ctx == w[i].ctx &&
		    w[i - 1].stream == w[i].stream && w[i - 1].best != SIZE_MAX &&
		    (w[i].best == SIZE_MAX || b->he[w[i - 1].best] > b->he[w[i].best]))
			w[i].best = w[i - 1].best;
	}
	return true;
}

/* The index past the waits before @g (by correlation) on its stream: the waits of @g's stream
 * before it end there (0: none; an imported record or one without a correlation has none). */
static size_t waits_before(const struct lin_xbuild *b, const struct lin_xgpu *g)
{
	const struct lin_explain *x = b->x;
	if (g->proc == LIN_XPROC_IMPORTED || g->corr == LIN_NIL)
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
static size_t event_producer(const struct lin_xbuild *b, const struct lin_xgpu *g)
{
	const struct lin_xwait *w = (const struct lin_xwait *)b->x->waits.data;
	size_t lo = waits_before(b, g);
	if (!lo || w[lo - 1].proc != g->proc || w[lo - 1].ctx != g->ctx || w[lo - 1].stream != g->stream)
		return SIZE_MAX;
	return w[lo - 1].best;
}

size_t lin_x_wait_producers(const struct lin_xbuild *b, const struct lin_xgpu *g, size_t *deps)
{
	const struct lin_explain *x = b->x;
	/* Without the event_wait row the events' dependencies are not known: what @g waited for
	 * through them is then other work like any. */
	if (!lin_xbuild_on(b, &lin_xrule_event_wait))
		return 0;
	const struct lin_xwait *w = (const struct lin_xwait *)x->waits.data;
	size_t lo = waits_before(b, g), n = 0;
	size_t best = event_producer(b, g);
	while (lo-- > 0 && n < LIN_X_WAIT_DEPS && w[lo].proc == g->proc && w[lo].ctx == g->ctx &&
	       w[lo].stream == g->stream) {
		const struct lin_xevent *e =
			lin_vtab_find(&x->events, w[lo].sync_id, pk1(w[lo].proc, 0));
		if (!e || e->corr == LIN_NIL)
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

size_t lin_x_event_producer(const struct lin_xbuild *b, size_t i)
{
	if (!lin_xbuild_on(b, &lin_xrule_event_wait))
		return SIZE_MAX; /* the waits were not prepared */
	return event_producer(b, gpu_at(b, i));
}

static size_t event_bound(const struct lin_xbuild *b, size_t i)
{
	return event_producer(b, gpu_at(b, i));
}

const struct lin_xrule lin_xrule_event_wait = {
	.name = "event_wait",
	.without = LIN_XW_EVENT_WAIT,
	.how = LIN_HOW_EVENT_WAIT,
	.prepare = wait_bounds,
	.bound = event_bound,
};
