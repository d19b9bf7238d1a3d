/* SPDX-License-Identifier: MIT */
/*
 * pages.h - the join layer's dense paged tables: a bitmap of closed correlations, and the
 * host time of each capture. Inline: the join engine reads them for nearly every record.
 */
#ifndef LIN_JOIN_PAGES_H
#define LIN_JOIN_PAGES_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "jstate.h"

#define LIN_J_PAGE_BITS \
	9 /* 64-byte bitmap pages: a hostile file of sparse ids costs ~4x its size */
#define LIN_J_CAPTURE_PAGE_SHIFT 3 /* 8 host_ns per page (64 B), for the same reason */

/*
 * A zeroed page of @bytes stored in @tab under (@page, @k1), allocated on first use when
 * @create; NULL when absent (and not @create) or out of memory (v->oom is then set).
 */
static inline void *lin_j_page_get(struct lin_joiner *v, struct lin_vtab *tab, uint64_t page,
				   uint64_t k1, size_t bytes, bool create)
{
	bool fresh;
	void **p = create ? lin_vtab_get(tab, page, k1, &fresh) : lin_vtab_find(tab, page, k1);
	if (!p) {
		v->oom |= create;
		return NULL;
	}
	if (!*p && !(*p = calloc(1, bytes)))
		v->oom = true;
	return *p;
}

/* Dense paged bitmap of @id under @k1: was the bit set? Set it when @set. */
static inline bool lin_j_page_bit(struct lin_joiner *v, struct lin_vtab *tab, uint64_t k1,
				  uint64_t id, bool set)
{
	uint64_t bit = id & ((1u << LIN_J_PAGE_BITS) - 1);
	uint8_t *bits =
		lin_j_page_get(v, tab, id >> LIN_J_PAGE_BITS, k1, (1u << LIN_J_PAGE_BITS) / 8, set);
	if (!bits)
		return false;
	bool was = bits[bit >> 3] & (1u << (bit & 7));
	if (set)
		bits[bit >> 3] |= (uint8_t)(1u << (bit & 7));
	return was;
}

/* Per process: correlations whose join was closed and evicted. */
static inline bool lin_j_closed(struct lin_joiner *v, uint16_t proc, uint64_t corr, bool set)
{
	return lin_j_page_bit(v, &v->closed, lin_k1(proc, 0), corr, set);
}

/* Host time (+1) of capture (tid, seq); per-thread capture counters are dense. */
static inline uint64_t *lin_j_capture_slot(struct lin_joiner *v, uint16_t proc, uint64_t tid,
					   uint64_t seq, bool create)
{
	uint64_t *times =
		lin_j_page_get(v, &v->captures, seq >> LIN_J_CAPTURE_PAGE_SHIFT, lin_k1(proc, tid),
			       (1u << LIN_J_CAPTURE_PAGE_SHIFT) * sizeof(uint64_t), create);
	return times ? &times[seq & ((1u << LIN_J_CAPTURE_PAGE_SHIFT) - 1)] : NULL;
}

#endif
