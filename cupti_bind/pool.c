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
	if (!p->free_list)
		return -ENOMEM;
	if (pthread_mutex_init(&p->mu, NULL) != 0) {
		free(p->free_list);
		p->free_list = NULL;
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
	if (!buf) {
		pthread_mutex_lock(&p->mu);
		p->allocated--;
		p->declined++;
		pthread_mutex_unlock(&p->mu);
	}
	return buf;
}

void lin_cupti_pool_put(struct lin_cupti_pool *p, uint8_t *buf)
{
	if (!buf)
		return;
	pthread_mutex_lock(&p->mu);
	/* n_free < allocated <= max_bufs always holds for a buffer that was lent out. */
	if (p->n_free < p->max_bufs) {
		p->free_list[p->n_free++] = buf;
		buf = NULL;
	}
	pthread_mutex_unlock(&p->mu);
	free(buf); /* only reached for a buffer the pool never lent: do not keep it */
}

void lin_cupti_pool_put_used(struct lin_cupti_pool *p, uint8_t *buf, size_t used)
{
	if (!buf)
		return;
	memset(buf, 0, used < p->buf_size ? used : p->buf_size);
	lin_cupti_pool_put(p, buf);
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

size_t lin_cupti_pool_trim(struct lin_cupti_pool *p)
{
	size_t lent;

	pthread_mutex_lock(&p->mu);
	for (size_t i = 0; i < p->n_free; i++)
		free(p->free_list[i]);
	p->allocated -= p->n_free;
	p->n_free = 0;
	lent = p->allocated;
	pthread_mutex_unlock(&p->mu);
	return lent;
}

size_t lin_cupti_pool_destroy(struct lin_cupti_pool *p)
{
	size_t lent;

	if (!p || !p->free_list)
		return 0;
	for (size_t i = 0; i < p->n_free; i++)
		free(p->free_list[i]);
	lent = p->allocated - p->n_free;
	free(p->free_list);
	p->free_list = NULL;
	pthread_mutex_destroy(&p->mu);
	return lent;
}
