/* SPDX-License-Identifier: MIT */
/*
 * index.c - the ledger build's shared indexes (rule.h): every GPU record's host start and
 * end, its predecessor on its stream (stream_order; every ledger's pred_end), and the lineage
 * records by stream and correlation (event_wait, device_occupied). The sorts get the build as
 * qsort_r's argument: nothing global.
 */
#include <stdlib.h>

#include "rule.h"

void lin_x_vsort(struct lin_vec *v, int (*cmp)(const void *, const void *))
{
	if (v->n > 1)
		qsort(v->data, v->n, v->esz, cmp);
}

void lin_x_sort_idx(struct lin_xbuild *b, size_t *idx, size_t k,
		    int (*cmp)(const void *, const void *, void *))
{
	if (k > 1)
		qsort_r(idx, k, sizeof(*idx), cmp, b);
}

static int cmp_by_start(const void *pa, const void *pb, void *arg)
{
	const struct lin_xbuild *bd = arg;
	const struct lin_xgpu *a = gpu_at(bd, *(const size_t *)pa);
	const struct lin_xgpu *b = gpu_at(bd, *(const size_t *)pb);
	int c = cmp_stream_key(a, b);
	return c ? c : cmp_u64(a->start, b->start);
}

static int cmp_by_corr(const void *pa, const void *pb, void *arg)
{
	const struct lin_xbuild *bd = arg;
	return cmp_corr_key(gpu_at(bd, *(const size_t *)pa), gpu_at(bd, *(const size_t *)pb));
}

bool lin_x_to_host(const struct lin_xbuild *b, const struct lin_xgpu *g, uint64_t dev, uint64_t *h,
		   uint64_t *err)
{
	*err = 0;
	if (dev == LIN_NIL)
		return false;
	if (g->proc == LIN_XPROC_IMPORTED) {
		*h = dev;
		return true;
	}
	return lin_joiner_dev_to_host(b->v, g->proc, dev, h, err);
}

static void host_times(struct lin_xbuild *b)
{
	for (size_t i = 0; i < b->n; i++) {
		const struct lin_xgpu *g = gpu_at(b, i);
		uint64_t e1 = 0, e2 = 0;
		b->hs[i] = b->he[i] = LIN_NIL;
		if (g->start == LIN_NIL || g->end == LIN_NIL || g->end < g->start)
			continue;
		if (!lin_x_to_host(b, g, g->start, &b->hs[i], &e1) ||
		    !lin_x_to_host(b, g, g->end, &b->he[i], &e2)) {
			b->hs[i] = b->he[i] = LIN_NIL;
			continue;
		}
		b->herr[i] = e1 > e2 ? e1 : e2;
	}
}

static bool streams(struct lin_xbuild *b)
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
	lin_x_sort_idx(b, idx, k, cmp_by_start);
	for (size_t j = 1; j < k; j++)
		if (!cmp_stream_key(gpu_at(b, idx[j - 1]), gpu_at(b, idx[j])))
			b->pred[idx[j]] = idx[j - 1];
	/* By correlation, for event_wait: lineage records that name their call. */
	k = 0;
	for (size_t i = 0; i < b->n; i++)
		if (gpu_at(b, i)->proc != LIN_XPROC_IMPORTED && gpu_at(b, i)->corr != LIN_NIL &&
		    ordered(gpu_at(b, i)))
			idx[k++] = i;
	lin_x_sort_idx(b, idx, k, cmp_by_corr);
	b->bycorr = idx;
	b->nbycorr = k;
	return true;
}

bool lin_x_index(struct lin_xbuild *b)
{
	host_times(b);
	return streams(b);
}
