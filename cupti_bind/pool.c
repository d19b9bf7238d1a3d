/* SPDX-License-Identifier: MIT */
/* pool.c - bounded, recycling pool of CUPTI activity buffers (pool.h). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pool.h"

int lin_cupti_pool_init(struct lin_cupti_pool *p, size_t buf_size, size_t max_bufs)
{
	if (!p || buf_size == 0 || max_bufs == 0 || buf_size > SIZE_MAX - 7)
		return -EINVAL;
	memset(p, 0, sizeof(*p));
	p->free_list = calloc(max_bufs, sizeof(*p->free_list));
	p->owned = calloc(max_bufs, sizeof(*p->owned));
	if (!p->free_list || !p->owned || pthread_mutex_init(&p->mu, NULL) != 0) {
		free(p->free_list);
		free(p->owned);
		p->free_list = p->owned = NULL;
		return -ENOMEM;
	}
	p->buf_size = (buf_size + 7) & ~(size_t)7;
	p->max_bufs = max_bufs;
	return 0;
}

uint8_t *lin_cupti_pool_get(struct lin_cupti_pool *p)
{
	uint8_t *buf = NULL;
	int grow = 0;

	pthread_mutex_lock(&p->mu);
	if (p->n_free > 0) {
		buf = p->free_list[--p->n_free];
	} else if (p->allocated < p->max_bufs) {
		p->allocated++; /* reserve the slot; allocate outside the lock */
		grow = 1;
	} else {
		p->declined++;
	}
	pthread_mutex_unlock(&p->mu);
	if (!grow)
		return buf;
	/* Zeroed (calloc: fresh pages cost no memset) and 8-aligned (malloc's alignment is at
	 * least 16 on the platforms lineage builds for; checked below). */
	buf = calloc(1, p->buf_size);
	if (buf && ((uintptr_t)buf & 7u)) {
		free(buf);
		buf = NULL;
	}
	pthread_mutex_lock(&p->mu);
	if (buf) {
		p->owned[p->n_owned++] = buf; /* n_owned < allocated <= max_bufs */
	} else {
		p->allocated--;
		p->declined++;
	}
	pthread_mutex_unlock(&p->mu);
	return buf;
}

/* Index of @buf in p->owned, or SIZE_MAX. At most max_bufs (512 by default) compares, once
 * per completed buffer of up to a MiB. p->mu held. */
static size_t owned_at(const struct lin_cupti_pool *p, const uint8_t *buf)
{
	for (size_t i = 0; i < p->n_owned; i++)
		if (p->owned[i] == buf)
			return i;
	return SIZE_MAX;
}

bool lin_cupti_pool_owns(struct lin_cupti_pool *p, const uint8_t *buf)
{
	pthread_mutex_lock(&p->mu);
	bool r = buf && owned_at(p, buf) != SIZE_MAX;
	pthread_mutex_unlock(&p->mu);
	return r;
}

bool lin_cupti_pool_put(struct lin_cupti_pool *p, uint8_t *buf)
{
	bool mine;

	if (!buf)
		return false;
	pthread_mutex_lock(&p->mu);
	mine = owned_at(p, buf) != SIZE_MAX;
	if (mine) /* n_free < n_owned <= max_bufs for a buffer that was lent out */
		p->free_list[p->n_free++] = buf;
	pthread_mutex_unlock(&p->mu);
	return mine;
}

bool lin_cupti_pool_put_used(struct lin_cupti_pool *p, uint8_t *buf, size_t used)
{
	/* A lent buffer cannot leave the pool between the two calls (trim frees free ones). */
	if (!buf || !lin_cupti_pool_owns(p, buf))
		return false;
	memset(buf, 0, used < p->buf_size ? used : p->buf_size);
	return lin_cupti_pool_put(p, buf);
}

size_t lin_cupti_pool_lent(struct lin_cupti_pool *p)
{
	size_t n;

	pthread_mutex_lock(&p->mu);
	n = p->allocated - p->n_free;
	pthread_mutex_unlock(&p->mu);
	return n;
}

uint64_t lin_cupti_pool_declined(struct lin_cupti_pool *p)
{
	uint64_t n;

	pthread_mutex_lock(&p->mu);
	n = p->declined;
	pthread_mutex_unlock(&p->mu);
	return n;
}

/* Free the buffers on the free list and forget them. p->mu held. */
static void free_idle(struct lin_cupti_pool *p)
{
	for (size_t i = 0; i < p->n_free; i++) {
		size_t at = owned_at(p, p->free_list[i]);
		if (at != SIZE_MAX)
			p->owned[at] = p->owned[--p->n_owned];
		free(p->free_list[i]);
	}
	p->allocated -= p->n_free;
	p->n_free = 0;
}

size_t lin_cupti_pool_trim(struct lin_cupti_pool *p)
{
	size_t lent;

	pthread_mutex_lock(&p->mu);
	free_idle(p);
	lent = p->allocated;
	pthread_mutex_unlock(&p->mu);
	return lent;
}

size_t lin_cupti_pool_destroy(struct lin_cupti_pool *p)
{
	size_t lent;

	if (!p || !p->free_list)
		return 0;
	free_idle(p);
	lent = p->allocated;
	free(p->free_list);
	free(p->owned);
	p->free_list = p->owned = NULL;
	pthread_mutex_destroy(&p->mu);
	return lent;
}
