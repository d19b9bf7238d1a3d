/* SPDX-License-Identifier: MIT */
/*
 * threads_main.c - the concurrent paths of cupti_bind/ and graph/ in one plain process
 * (no Criterion), so ThreadSanitizer can check them: Criterion 2.4.1's workers do not start
 * under TSan on Debian 12. Exit status 0 when every check holds.
 */
#include <cupti.h>
#include <pthread.h>
#include <stdio.h>

#include "pool.h"
#include "tr_helpers.h"
#include "lineage/cupti.h"
#include "lineage/graph.h"
#include "lineage/runtime.h"
#include "lineage/trace_format.h"

#define CHECK(c) \
	do { \
		if (!(c)) { \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #c); \
			exit(1); \
		} \
	} while (0)

static struct lin_cupti_pool pool;
static lin_runtime *rt;
static lin_graph_tracker *gt;
static struct tr_buf bufs[4];

static void *pool_worker(void *arg)
{
	(void)arg;
	for (int i = 0; i < 5000; i++) {
		uint8_t *b = lin_cupti_pool_get(&pool);
		if (b) {
			memset(b, i, pool.buf_size);
			lin_cupti_pool_put(&pool, b);
		}
	}
	return NULL;
}

static void *attach_worker(void *arg)
{
	struct tr_buf *b = arg;

	for (int i = 0; i < 200; i++)
		CHECK(lin_cupti_attach_decode(rt, b->data, b->used, NULL) == 0);
	return NULL;
}

static void *graph_worker(void *arg)
{
	uint64_t req = 0, ep = 0;
	struct lin_request_opts ro = { .sz = sizeof(ro) };
	lin_scope sc;

	(void)arg;
	CHECK(lin_request_begin(rt, &ro, &req) == 0);
	struct lin_epoch_opts eo = { .sz = sizeof(eo), .requests = &req, .n_requests = 1 };
	CHECK(lin_epoch_declare(rt, &eo, &ep) == 0);
	CHECK(lin_scope_enter(rt, ep, &sc) == 0);
	for (int i = 0; i < 200; i++) {
		lin_graph_launch gl;
		CHECK(lin_graph_launch_begin(gt, 50, "replay", &gl) == 0);
		CHECK(lin_graph_launch_end(gt, &gl) == 0);
		CHECK(lin_graph_node_created(gt, 5, ((uint64_t)ep << 16) + (uint64_t)i + 1) == 0);
	}
	CHECK(lin_scope_exit(rt, &sc) == 0);
	return NULL;
}

static void run(void *(*fn)(void *), void **args, int n)
{
	pthread_t th[8];

	for (int i = 0; i < n; i++)
		CHECK(pthread_create(&th[i], NULL, fn, args ? args[i] : NULL) == 0);
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
}

int main(void)
{
	static const char *names[4] = { "k0", "k1", "k2", "k3" };
	struct tr_sink sink;
	struct tr_trace *tr = calloc(1, sizeof(*tr));
	void *args[4];
	uint64_t ord = 0;
	size_t kernels = 0;

	CHECK(tr != NULL);
	CHECK(lin_cupti_pool_init(&pool, 512, 3) == 0);
	run(pool_worker, NULL, 4);
	CHECK(lin_cupti_pool_destroy(&pool) == 0);

	tr_sink_init(&sink);
	struct lin_runtime_opts o = { .sz = sizeof(o), .trace_write = tr_sink_write, .trace_user = &sink };
	CHECK(lin_runtime_create(&o, &rt) == 0); /* with the writer thread, flushing concurrently */
	CHECK(lin_graph_tracker_create(rt, NULL, &gt) == 0);
	CHECK(lin_graph_exec_instantiated(gt, 5, 50) == 0);
	for (int t = 0; t < 4; t++) {
		for (int i = 0; i < 5; i++) {
			CUpti_ActivityKernel10 k;
			memset(&k, 0, sizeof(k));
			k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
			k.correlationId = (uint32_t)(t * 100 + i + 1);
			k.name = names[t];
			tr_put(&bufs[t], &k, sizeof(k));
		}
		args[t] = &bufs[t];
	}
	run(attach_worker, args, 4);
	run(graph_worker, NULL, 3);
	CHECK(lin_graph_exec_ordinal(gt, 50, &ord) == 0 && ord == 600);
	lin_graph_tracker_free(gt);
	lin_runtime_free(rt);

	tr_load(tr, sink.data, sink.len);
	CHECK(tr->truncated_at == 0);
	for (size_t i = 0; i < tr->n; i++)
		kernels += tr_type(tr, i) == LIN_REC_KERNEL;
	CHECK(kernels == 4 * 5 * 200);
	CHECK(tr_count(tr, LIN_REC_GRAPH_LAUNCH) == 600);
	CHECK(tr_count(tr, LIN_REC_GRAPH_NODE) == 600);
	tr_free(tr);
	free(tr);
	tr_sink_fini(&sink);
	printf("threads: ok\n");
	return 0;
}
