/* SPDX-License-Identifier: MIT */
/* test_pool.c - the CUPTI activity buffer pool: fresh buffers, bounds, recycling, threads. */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lin_test.h"
#include "pool.h"

Test(cupti_pool, fresh_aligned_buffers)
{
	struct lin_cupti_pool p;
	uint8_t *a, *b;

	cr_assert_eq(lin_cupti_pool_init(&p, 1001, 4), 0);
	cr_assert_eq(p.buf_size, 1008, "size rounded up to a multiple of 8");
	a = lin_cupti_pool_get(&p);
	b = lin_cupti_pool_get(&p);
	cr_assert_not_null(a);
	cr_assert_not_null(b);
	cr_assert_neq(a, b, "a buffer still lent is never handed out again");
	cr_assert_eq((uintptr_t)a % 8, 0);
	cr_assert_eq((uintptr_t)b % 8, 0);
	a[1007] = 1; /* whole buffer is usable (ASan checks) */
	cr_assert_eq(lin_cupti_pool_lent(&p), 2);
	lin_cupti_pool_put(&p, a);
	lin_cupti_pool_put(&p, b);
	cr_assert_eq(lin_cupti_pool_destroy(&p), 0);
	LIN_TEST_CHECK_LEAKS();
}

Test(cupti_pool, recycles_without_allocating)
{
	struct lin_cupti_pool p;
	uint8_t *a;

	cr_assert_eq(lin_cupti_pool_init(&p, 64, 2), 0);
	a = lin_cupti_pool_get(&p);
	lin_cupti_pool_put(&p, a);
	for (int i = 0; i < 100; i++) {
		uint8_t *b = lin_cupti_pool_get(&p);
		cr_assert_eq(b, a, "a returned buffer is reused");
		lin_cupti_pool_put(&p, b);
	}
	cr_assert_eq(p.allocated, 1);
	cr_assert_eq(lin_cupti_pool_destroy(&p), 0);
	LIN_TEST_CHECK_LEAKS();
}

Test(cupti_pool, declines_past_bound)
{
	struct lin_cupti_pool p;
	uint8_t *a, *b;

	cr_assert_eq(lin_cupti_pool_init(&p, 64, 2), 0);
	a = lin_cupti_pool_get(&p);
	b = lin_cupti_pool_get(&p);
	cr_assert_null(lin_cupti_pool_get(&p));
	cr_assert_null(lin_cupti_pool_get(&p));
	cr_assert_eq(lin_cupti_pool_declined(&p), 2);
	lin_cupti_pool_put(&p, a);
	cr_assert_eq(lin_cupti_pool_get(&p), a);
	cr_assert_eq(lin_cupti_pool_destroy(&p), 2, "two buffers still lent");
	free(a);
	free(b);
	LIN_TEST_CHECK_LEAKS();
}

Test(cupti_pool, bad_arguments)
{
	struct lin_cupti_pool p;

	cr_assert_eq(lin_cupti_pool_init(&p, 0, 2), -EINVAL);
	cr_assert_eq(lin_cupti_pool_init(&p, 64, 0), -EINVAL);
	cr_assert_eq(lin_cupti_pool_init(NULL, 64, 2), -EINVAL);
	cr_assert_eq(lin_cupti_pool_destroy(NULL), 0);
}

struct worker_arg {
	struct lin_cupti_pool *p;
	int got;
};

static void *worker(void *arg)
{
	struct worker_arg *w = arg;

	for (int i = 0; i < 2000; i++) {
		uint8_t *b = lin_cupti_pool_get(w->p);
		if (!b)
			continue;
		/* Owning the buffer exclusively: write it whole, as CUPTI would. */
		memset(b, i & 0xff, w->p->buf_size);
		w->got++;
		lin_cupti_pool_put(w->p, b);
	}
	return NULL;
}

Test(cupti_pool, concurrent_request_and_complete)
{
	struct lin_cupti_pool p;
	pthread_t th[4];
	struct worker_arg args[4];
	int total = 0;

	cr_assert_eq(lin_cupti_pool_init(&p, 256, 3), 0);
	for (int i = 0; i < 4; i++) {
		args[i] = (struct worker_arg){ .p = &p };
		cr_assert_eq(pthread_create(&th[i], NULL, worker, &args[i]), 0);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		total += args[i].got;
	}
	cr_assert_eq((uint64_t)total + lin_cupti_pool_declined(&p), 8000);
	cr_assert_leq(p.allocated, 3);
	cr_assert_eq(lin_cupti_pool_destroy(&p), 0);
	LIN_TEST_CHECK_LEAKS();
}

Test(cupti_pool, trim_keeps_pool_usable)
{
	struct lin_cupti_pool p;
	uint8_t *a, *b, *c;

	cr_assert_eq(lin_cupti_pool_init(&p, 64, 2), 0);
	a = lin_cupti_pool_get(&p);
	b = lin_cupti_pool_get(&p);
	lin_cupti_pool_put(&p, a);
	cr_assert_eq(lin_cupti_pool_trim(&p), 1, "b is still lent");
	cr_assert_eq(p.allocated, 1);
	c = lin_cupti_pool_get(&p); /* allocates again: room for one more */
	cr_assert_not_null(c);
	cr_assert_null(lin_cupti_pool_get(&p));
	lin_cupti_pool_put(&p, b); /* a late return after trim */
	lin_cupti_pool_put(&p, c);
	cr_assert_eq(lin_cupti_pool_destroy(&p), 0);
	LIN_TEST_CHECK_LEAKS();
}
