/* SPDX-License-Identifier: MIT */
/*
 * kernel_slow.c - the kernel_median rule (docs/ledger.md, "Rules"): a kernel is slow when it
 * ran longer than slow_factor times the median of the kernels of its name in its process (at
 * least min_samples of them); the excess is a kernel_slow statement inside the kernel, never
 * the dominant one. Its prepare finds every name's median; every ledger gets its median.
 */
#include <stdlib.h>

#include "lineage/trace_format.h"
#include "rule.h"

/* Kernels by (process or file, name, duration). */
static int cmp_by_name(const void *pa, const void *pb, void *arg)
{
	const struct lin_xbuild *bd = arg;
	const struct lin_xgpu *a = gpu_at(bd, *(const size_t *)pa);
	const struct lin_xgpu *b = gpu_at(bd, *(const size_t *)pb);
	int c = cmp_u64(a->proc, b->proc);
	if (!c && a->proc == LIN_XPROC_IMPORTED)
		c = cmp_u64(a->file, b->file);
	if (!c)
		c = cmp_u64(a->name, b->name);
	return c ? c : cmp_u64(a->end - a->start, b->end - b->start);
}

/* The median of a sorted run of durations, without overflow. */
static uint64_t mid2(uint64_t a, uint64_t b) { return a / 2 + b / 2 + (a & b & 1); }

static bool medians(struct lin_xbuild *b)
{
	b->median = malloc((b->n + 1) * sizeof(uint64_t));
	size_t *idx = malloc((b->n + 1) * sizeof(*idx));
	if (!idx || !b->median) {
		free(idx);
		return false;
	}
	size_t k = 0;
	for (size_t i = 0; i < b->n; i++) {
		const struct lin_xgpu *g = gpu_at(b, i);
		b->median[i] = 0;
		if (g->kind == LIN_REC_KERNEL && g->name && ordered(g))
			idx[k++] = i;
	}
	lin_x_sort_idx(b, idx, k, cmp_by_name);
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

static void slow(const struct lin_xbuild *b, struct lin_xlaunch *l, size_t i)
{
	l->median = b->median[i];
	if (!l->median || !mark_known(l, LIN_M_KERNEL_START))
		return;
	uint64_t s = l->m[LIN_M_KERNEL_START].t, e = l->m[LIN_M_KERNEL_END].t;
	if (e > s && (double)(e - s) > b->x->o.slow_factor * (double)l->median && e - s > l->median) {
		l->slow_excess = e - s - l->median;
		/* Inside the kernel, not before its start: never the dominant statement. */
		lin_x_add_seg(l, s + l->median, e, LIN_X_KERNEL_SLOW, LIN_EV_INFERRED,
			      LIN_HOW_KERNEL_MEDIAN);
	}
}

const struct lin_xrule lin_xrule_kernel_median = {
	.name = "kernel_median",
	.how = LIN_HOW_KERNEL_MEDIAN,
	.prepare = medians,
	.after = slow,
};
