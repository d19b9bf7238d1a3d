/* SPDX-License-Identifier: MIT */
/*
 * pool.h - a bounded pool of CUPTI activity buffers. CUPTI asks for a buffer per thread
 * and hands each back once, full; the pool gives out a fresh (not in use) buffer each time,
 * recycles returned ones (zeroed), and allocates only when its free list is empty, never
 * per record.
 * Internal; never installed.
 */
#ifndef LIN_CUPTI_POOL_H
#define LIN_CUPTI_POOL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct lin_cupti_pool {
	pthread_mutex_t mu;
	uint8_t **free_list; /* capacity max_bufs, so put never allocates */
	size_t n_free;
	uint8_t **owned; /* every buffer that exists (free or lent), capacity max_bufs */
	size_t n_owned;
	size_t buf_size;
	size_t max_bufs;
	size_t allocated;  /* buffers that exist (free or lent) */
	uint64_t declined; /* requests answered with no buffer */
};

/*
 * lin_cupti_pool_init - set up an empty pool of at most @max_bufs buffers of @buf_size
 * bytes (rounded up to a multiple of 8; buffers are 8-aligned as CUPTI's records need, and
 * zeroed).
 * Return: 0; -EINVAL (zero size or count); -ENOMEM.
 */
int lin_cupti_pool_init(struct lin_cupti_pool *p, size_t buf_size, size_t max_bufs);

/*
 * lin_cupti_pool_get - a buffer no one else holds, or NULL when @max_bufs are all lent
 * (or allocation failed): the request is then declined and counted.
 * Context: any thread (CUPTI's buffer-request callback); takes the pool mutex briefly.
 */
uint8_t *lin_cupti_pool_get(struct lin_cupti_pool *p);

/*
 * lin_cupti_pool_put - give a buffer from lin_cupti_pool_get back. NULL is ignored.
 * Return: true if the pool took it; false for a buffer it never lent (another CUPTI
 * client's, handed to lineage's completion callback), which is left alone: neither kept,
 * zeroed, lent again nor freed.
 */
bool lin_cupti_pool_put(struct lin_cupti_pool *p, uint8_t *buf);

/* lin_cupti_pool_owns - whether @buf is one of the pool's buffers (free or lent). */
bool lin_cupti_pool_owns(struct lin_cupti_pool *p, const uint8_t *buf);

/*
 * lin_cupti_pool_put_used - zero the first @used bytes of @buf, then give it back: every
 * buffer the pool lends is all zero (new ones come from calloc), so a record CUPTI leaves
 * unfinished never shows the bytes of an earlier use. A buffer the pool never lent is not
 * touched. Return: as lin_cupti_pool_put.
 * Context: any thread (CUPTI's completion callback); the memset runs outside the mutex.
 */
bool lin_cupti_pool_put_used(struct lin_cupti_pool *p, uint8_t *buf, size_t used);

/* lin_cupti_pool_lent - buffers currently lent out. */
size_t lin_cupti_pool_lent(struct lin_cupti_pool *p);

/* lin_cupti_pool_declined - requests declined since init. */
uint64_t lin_cupti_pool_declined(struct lin_cupti_pool *p);

/*
 * lin_cupti_pool_trim - free the buffers on the free list; the pool stays usable (buffers
 * still lent may come back, and later requests allocate again).
 * Return: the number of buffers still lent out.
 */
size_t lin_cupti_pool_trim(struct lin_cupti_pool *p);

/*
 * lin_cupti_pool_destroy - free every buffer on the free list.
 * Return: the number of buffers still lent out (they are not freed; 0 when all came back).
 */
size_t lin_cupti_pool_destroy(struct lin_cupti_pool *p);

#endif
