/* SPDX-License-Identifier: MIT */
/*
 * e2e_trace.c - write a trace as a GPU run would produce it, without a GPU: the runtime
 * records requests, epochs, tokens and launches (a recording backend stands in for CUPTI's
 * push/pop), graph calls go through the graph tracker, and the CUPTI activity CUPTI would
 * have written for those launches is built from the real structs and decoded in attach
 * mode. lineage-validate then checks the joins (tests/cupti_bind/CMakeLists.txt).
 *
 * Usage: e2e_trace OUT.lintrace. Exit: 0, or 1 with a message.
 */
#include <cupti.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tr_helpers.h"
#include "lineage/cupti.h"
#include "lineage/graph.h"
#include "lineage/runtime.h"

#define CHECK(c) \
	do { \
		if (!(c)) { \
			fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, #c); \
			exit(1); \
		} \
	} while (0)

static lin_runtime *rt;
static lin_graph_tracker *gt;
static _Thread_local uint64_t pushed[8];
static _Thread_local int depth;
static struct tr_buf act; /* activity "CUPTI" wrote */
static pthread_mutex_t act_mu = PTHREAD_MUTEX_INITIALIZER;
static uint32_t next_corr = 1;
static int64_t next_grid = 1;

static int rec_push(void *c, uint32_t k, uint64_t id)
{
	(void)c;
	(void)k;
	pushed[depth++] = id;
	return 0;
}

static int rec_pop(void *c, uint32_t k, uint64_t *id)
{
	(void)c;
	(void)k;
	if (id)
		*id = pushed[depth - 1];
	depth--;
	return 0;
}

/* What CUPTI records for one launch API call on this thread: the ext record when an id is
 * pushed, the API record, and @n kernels (graph nodes when @nodes). */
static void cupti_launch(uint32_t cbid, int n, const uint64_t *nodes, uint32_t graph_id)
{
	CUpti_ActivityExternalCorrelation e;
	CUpti_ActivityAPI a;
	CUpti_ActivityKernel10 k;

	pthread_mutex_lock(&act_mu);
	uint32_t corr = next_corr++;
	if (depth > 0) {
		memset(&e, 0, sizeof(e));
		e.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
		e.externalKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2;
		e.externalId = pushed[depth - 1];
		e.correlationId = corr;
		tr_put(&act, &e, sizeof(e));
	}
	memset(&a, 0, sizeof(a));
	a.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
	a.cbid = cbid;
	a.start = 1000 * corr;
	a.end = a.start + 10;
	a.processId = (uint32_t)getpid();
	a.threadId = lin_cupti_launch_api(1, cbid) ? (uint32_t)gettid() : 0;
	a.correlationId = corr;
	tr_put(&act, &a, sizeof(a));
	for (int i = 0; i < n; i++) {
		memset(&k, 0, sizeof(k));
		k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
		k.correlationId = corr;
		k.start = a.start + 100 + (uint64_t)i;
		k.end = k.start + 50;
		k.streamId = 7;
		k.gridId = next_grid++;
		k.name = nodes ? "k_graph" : "k_direct";
		if (nodes) {
			k.graphId = graph_id;
			k.graphNodeId = nodes[i];
		}
		tr_put(&act, &k, sizeof(k));
	}
	pthread_mutex_unlock(&act_mu);
}

struct job {
	lin_token tok;
	int graph;
};

static void *worker(void *p)
{
	struct job *j = p;
	const uint64_t clones[2] = { 0x500000101ull, 0x500000102ull };
	lin_scope sc;

	CHECK(lin_token_adopt(rt, &j->tok, &sc) == 0);
	if (j->graph) {
		lin_graph_launch gl;
		CHECK(lin_graph_launch_begin(gt, 50, "graph", &gl) == 0);
		cupti_launch(CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000, 2, clones, 5);
		CHECK(lin_graph_launch_end(gt, &gl) == 0);
	} else {
		lin_launch l;
		CHECK(lin_launch_begin(rt, "k_direct", &l) == 0);
		cupti_launch(CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000, 1, NULL, 0);
		CHECK(lin_launch_end(rt, &l) == 0);
	}
	CHECK(lin_scope_exit(rt, &sc) == 0);
	return NULL;
}

int main(int argc, char **argv)
{
	const struct lin_backend_ops ops = { sizeof(ops), "recording", rec_push, rec_pop, NULL };
	struct lin_runtime_opts o = { .sz = sizeof(o), .backend = LIN_BACKEND_CUSTOM, .backend_ops = &ops };
	const uint64_t nodes[2] = { 0x500000001ull, 0x500000002ull };
	struct job jobs[8];
	pthread_t th[8];
	uint64_t setup_req, setup_ep;
	lin_graph_capture cap;
	lin_scope sc;

	CHECK(argc == 2);
	o.trace_path = argv[1];
	CHECK(lin_runtime_create(&o, &rt) == 0);
	CHECK(lin_graph_tracker_create(rt, NULL, &gt) == 0);

	/* A graph captured once under a setup request. */
	struct lin_request_opts ro = { .sz = sizeof(ro), .name = "setup" };
	CHECK(lin_request_begin(rt, &ro, &setup_req) == 0);
	struct lin_epoch_opts eo = { .sz = sizeof(eo), .requests = &setup_req, .n_requests = 1 };
	CHECK(lin_epoch_declare(rt, &eo, &setup_ep) == 0);
	CHECK(lin_scope_enter(rt, setup_ep, &sc) == 0);
	CHECK(lin_graph_capture_begin(gt, &cap) == 0);
	CHECK(lin_scope_exit(rt, &sc) == 0);
	CHECK(lin_graph_capture_end(gt, &cap, 5, nodes, 2) == 0);
	CHECK(lin_graph_node_cloned(gt, nodes[0], 0x500000101ull, 5, 50) == 0);
	CHECK(lin_graph_node_cloned(gt, nodes[1], 0x500000102ull, 5, 50) == 0);
	CHECK(lin_graph_exec_instantiated(gt, 5, 50) == 0);

	/* Eight requests prepared here, launched by workers: four direct, four graph replays. */
	for (int i = 0; i < 8; i++) {
		uint64_t req, ep;
		struct lin_request_opts r = { .sz = sizeof(r), .user_id = (uint64_t)i, .has_user_id = 1 };
		CHECK(lin_request_begin(rt, &r, &req) == 0);
		struct lin_epoch_opts e = { .sz = sizeof(e), .requests = &req, .n_requests = 1 };
		CHECK(lin_epoch_declare(rt, &e, &ep) == 0);
		CHECK(lin_token_make(rt, ep, &jobs[i].tok) == 0);
		jobs[i].graph = i % 2;
	}
	for (int i = 0; i < 8; i++)
		CHECK(pthread_create(&th[i], NULL, worker, &jobs[i]) == 0);
	for (int i = 0; i < 8; i++)
		pthread_join(th[i], NULL);

	/* CUPTI delivers the activity afterwards, in one buffer. */
	CHECK(lin_cupti_attach_decode(rt, act.data, act.used, NULL) == 0);
	lin_graph_tracker_free(gt);
	lin_runtime_free(rt);
	return 0;
}
