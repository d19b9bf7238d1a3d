/* SPDX-License-Identifier: MIT */
/*
 * test_layer_coexist.c - the live binding beside another CUPTI client, under the test CUPTI
 * layer: a subscriber that was there first (lineage falls back to attach mode and touches
 * nothing), one that comes later (lineage leaves its kinds enabled), the thread-id type,
 * the run-time version check, and the joins of nested driver calls and memcpys.
 */
#include <pthread.h>
#include <stdatomic.h>

#include "layer_fixture.h"

TestSuite(layer_coexist, .init = lf_setup, .fini = lf_teardown);

/* ------------------------------------------------------------- another client */

/* Completion callbacks run on the layer's thread and on a flushing one, concurrently. */
static atomic_size_t other_buffers, other_records;

static void CUPTIAPI other_request(uint8_t **buffer, size_t *size, size_t *max_records)
{
	*buffer = calloc(1, 1 << 16);
	*size = *buffer ? 1 << 16 : 0;
	*max_records = 0;
}

static void CUPTIAPI other_complete(CUcontext ctx, uint32_t stream, uint8_t *buf, size_t size, size_t valid)
{
	CUpti_Activity *r = NULL;

	(void)ctx;
	(void)stream;
	(void)size;
	atomic_fetch_add(&other_buffers, 1);
	while (cuptiActivityGetNextRecord(buf, valid, &r) == CUPTI_SUCCESS)
		atomic_fetch_add(&other_records, 1);
	free(buf);
}

/* A profiler that owns CUPTI: subscribed, its buffer callbacks, its kinds. */
static CUpti_SubscriberHandle other_start(void)
{
	CUpti_SubscriberHandle h = NULL;

	cr_assert_eq(cuptiSubscribe(&h, NULL, NULL), CUPTI_SUCCESS);
	cr_assert_eq(cuptiActivityRegisterCallbacks(other_request, other_complete), CUPTI_SUCCESS);
	cr_assert_eq(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), CUPTI_SUCCESS);
	cr_assert_eq(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME), CUPTI_SUCCESS);
	cr_assert_eq(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION), CUPTI_SUCCESS);
	return h;
}

/* The other client came first: lineage must not take its buffers (CUPTI has one set of
 * callbacks: registering would have replaced the other's), must not disable its kinds at
 * close, must not change the thread-id type; it pushes its ids and says so. */
Test(layer_coexist, subscriber_first_means_attach_mode)
{
	char cupti[256];
	lin_scope sc;

	lf_layer(NULL);
	CUpti_SubscriberHandle h = other_start();
	lin_runtime *rt = lf_runtime();
	cr_assert(lin_cl_callbacks_are(other_request, other_complete), "lineage took the callbacks");
	uint64_t ep = lf_epoch(rt, &sc);
	lf_kernel(rt, 1);
	cr_assert_eq(lin_scope_exit(rt, &sc), 0);
	lin_runtime_free(rt);
	cr_assert(lin_cl_enabled(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), "the other's kind disabled");
	cr_assert(lin_cl_enabled(CUPTI_ACTIVITY_KIND_RUNTIME));
	cr_assert(lin_cl_callbacks_are(other_request, other_complete));
	cr_assert_eq(lin_cl_thread_id_type(), CUPTI_ACTIVITY_THREAD_ID_TYPE_DEFAULT);
	cr_assert_eq(lin_cl_flush_period(), 0, "the flush period is the other's too");

	lf_load();
	lf_header_cupti(cupti, sizeof(cupti));
	cr_assert(strncmp(cupti, "attach: another CUPTI client is subscribed", 42) == 0, "%s", cupti);
	cr_assert(strstr(cupti, "not gettid()") != NULL, "the thread-id type is said: %s", cupti);
	cr_assert(strstr(lf_log, "attach:") != NULL, "log: %s", lf_log);
	size_t l = tr_find(lf_tr, LIN_REC_LAUNCH, 0);
	cr_assert_neq(l, SIZE_MAX);
	cr_assert_eq(tr_u(lf_tr, l, 5), ep, "lineage still pushes its epoch");
	cr_assert_eq(lf_count(LIN_REC_KERNEL), 0, "the GPU records are the other client's");
	cr_assert_eq(cuptiActivityFlushAll(0), CUPTI_SUCCESS);
	cr_assert_gt(atomic_load(&other_records), 0, "and they reach it");
	cr_assert_eq(cuptiUnsubscribe(h), CUPTI_SUCCESS);
}

/* A subscriber lineage cannot see otherwise (Nsight Systems): the same fallback. */
Test(layer_coexist, invisible_subscriber_means_attach_mode)
{
	struct lin_cl_config c = { .sz = sizeof(c), .other_subscriber = true };
	char cupti[256];

	lf_layer(&c);
	lin_runtime *rt = lf_runtime();
	lin_runtime_free(rt);
	lf_load();
	lf_header_cupti(cupti, sizeof(cupti));
	cr_assert(strncmp(cupti, "attach: ", 8) == 0, "%s", cupti);
	cr_assert_not(lin_cl_enabled(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), "lineage enabled nothing");
}

/* Without another client lineage subscribes for an instant only: a profiler started later
 * can still subscribe. */
Test(layer_coexist, no_subscription_is_kept)
{
	CUpti_SubscriberHandle h = NULL;

	lf_layer(NULL);
	lin_runtime *rt = lf_runtime();
	cr_assert_not(lin_cl_subscribed());
	cr_assert_eq(cuptiSubscribe(&h, NULL, NULL), CUPTI_SUCCESS);
	cr_assert_eq(cuptiUnsubscribe(h), CUPTI_SUCCESS);
	lin_runtime_free(rt);
}

/* A client that subscribes and enables kinds after lineage took CUPTI: at close lineage
 * leaves every kind enabled (it cannot tell which the other needs) and does not force a
 * flush into the other's hands. Before, it disabled them all. */
Test(layer_coexist, a_later_client_keeps_its_kinds)
{
	CUpti_SubscriberHandle h = NULL;
	lin_scope sc;
	struct lf_verdict vd;

	lf_layer(NULL);
	lin_runtime *rt = lf_runtime();
	lf_epoch(rt, &sc);
	lf_kernel(rt, 1);
	cr_assert_eq(cuptiSubscribe(&h, NULL, NULL), CUPTI_SUCCESS);
	cr_assert_eq(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), CUPTI_SUCCESS);
	cr_assert_eq(lin_scope_exit(rt, &sc), 0);
	lin_runtime_free(rt);
	cr_assert(lin_cl_enabled(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
	cr_assert(lin_cl_enabled(CUPTI_ACTIVITY_KIND_RUNTIME));
	cr_assert(strstr(lf_log, "another CUPTI client is present at close") != NULL, "%s", lf_log);
	lf_validate(&vd);
	cr_assert_eq(vd.s.observed, 1, "what was complete was still delivered: %s", vd.text);
	cr_assert_eq(cuptiUnsubscribe(h), CUPTI_SUCCESS);
}

/* ------------------------------------------------------------- thread ids, version */

/* Attach mode, the stale_token cause and time containment need API records to carry
 * gettid(); if CUPTI will not switch, the header says so. Before, the call was unchecked
 * and the header said "ok". */
Test(layer_coexist, thread_id_type_refused_is_reported)
{
	struct lin_cl_config c = { .sz = sizeof(c), .thread_id_type_fails = true };
	char cupti[256];

	lf_layer(&c);
	lin_runtime *rt = lf_runtime();
	lin_runtime_free(rt);
	lf_load();
	lf_header_cupti(cupti, sizeof(cupti));
	cr_assert(strncmp(cupti, "ok, API records carry CUPTI's default thread ids", 48) == 0, "%s",
		  cupti);
	cr_assert(strstr(lf_log, "not gettid()") != NULL, "%s", lf_log);
}

Test(layer_coexist, api_records_carry_gettid)
{
	lin_scope sc;

	lf_layer(NULL);
	lin_runtime *rt = lf_runtime();
	lf_epoch(rt, &sc);
	lf_kernel(rt, 1);
	cr_assert_eq(lin_scope_exit(rt, &sc), 0);
	lin_runtime_free(rt);
	lf_load();
	size_t a = tr_find(lf_tr, LIN_REC_API, 0), l = tr_find(lf_tr, LIN_REC_LAUNCH, 0);
	cr_assert(a != SIZE_MAX && l != SIZE_MAX);
	cr_assert_eq(tr_u(lf_tr, a, 7), tr_u(lf_tr, l, 2), "the API record's tid is the launch's");
}

/* A libcupti of another major version: its layouts are not read, and its records are
 * reported lost with the cause, never misread. */
Test(layer_coexist, another_cupti_major_is_refused_and_reported)
{
	struct lin_cl_config c = { .sz = sizeof(c), .version = 28 }; /* CUDA 12.9 Update 1 */
	char cupti[256];
	lin_scope sc;
	struct lf_verdict vd;

	lf_layer(&c);
	lin_runtime *rt = lf_runtime();
	lf_epoch(rt, &sc);
	lf_kernel(rt, 1);
	lf_kernel(rt, 2);
	cr_assert_eq(lin_scope_exit(rt, &sc), 0);
	lin_runtime_free(rt);
	lf_load();
	lf_header_cupti(cupti, sizeof(cupti));
	cr_assert_str_eq(cupti, "ok, libcupti 28: 12 record layouts not read (dropped source 6)");
	cr_assert_eq(lf_count(LIN_REC_KERNEL) + lf_count(LIN_REC_API), 0, "nothing read");
	cr_assert_eq(lf_dropped(LIN_DROP_CUPTI_LAYOUT), 10, "2 kernels, 4 API, 4 ext records");
	lf_validate(&vd);
	cr_assert_eq(vd.exit_code, 1, "%s", vd.text);
}

/* ------------------------------------------------------------- nested calls, memcpy */

/* A runtime call's nested driver call with a correlation id of its own (the layer's
 * default): both have ext records, the kernel and the memcpy join either way. */
static void nested_run(const struct lin_cl_config *c, int expect_exit)
{
	lin_scope sc;
	struct lf_verdict vd;

	lf_layer(c);
	lin_runtime *rt = lf_runtime();
	lf_epoch(rt, &sc);
	lf_kernel(rt, 1);
	lf_memop(rt, false);
	lf_memop(rt, true);
	cr_assert_eq(lin_scope_exit(rt, &sc), 0);
	lin_runtime_free(rt);
	lf_load();
	cr_assert_eq(lf_count(LIN_REC_API), 6);
	lf_validate(&vd);
	cr_assert_eq(vd.s.gpu_records, 3);
	cr_assert_eq(vd.s.observed, 3, "%s", vd.text);
	cr_assert_eq(vd.exit_code, expect_exit, "%s", vd.text);
}

Test(layer_coexist, nested_driver_calls_with_their_own_ids_join)
{
	struct lin_cl_config c = { .sz = sizeof(c), .driver = LIN_CL_DRIVER_DISTINCT };

	nested_run(&c, 0);
}

/* The nested driver call shares the runtime call's id (CUPTI does not say which it does):
 * two API records of one id, one per domain, are one call, not a correlation_reused. */
Test(layer_coexist, nested_driver_calls_sharing_the_id_join)
{
	struct lin_cl_config c = { .sz = sizeof(c), .driver = LIN_CL_DRIVER_SHARED };

	nested_run(&c, 0);
}

/*
 * Kernels that carry the nested driver call's id (the traces the project tests on show the
 * runtime call's; CUPTI's header allows either): they still join, through the driver
 * call's ext record, and launch accounting pairs the runtime launch with the driver launch
 * nested in it, so the pair owes one GPU record between them and has it: exit 0.
 */
Test(layer_coexist, kernels_carrying_the_driver_id_join_and_the_runtime_call_is_paired)
{
	struct lin_cl_config c = { .sz = sizeof(c), .kernel_driver_corr = true };
	lin_scope sc;
	struct lf_verdict vd;

	lf_layer(&c);
	lin_runtime *rt = lf_runtime();
	lf_epoch(rt, &sc);
	lf_kernel(rt, 1);
	cr_assert_eq(lin_scope_exit(rt, &sc), 0);
	lin_runtime_free(rt);
	lf_validate(&vd);
	cr_assert_eq(vd.s.gpu_records, 1);
	cr_assert_eq(vd.s.observed, 1, "the kernel joins: %s", vd.text);
	cr_assert_eq(vd.s.lost_by_cause[LIN_CAUSE_NO_GPU_RECORD], 0, "%s", vd.text);
	cr_assert_eq(vd.exit_code, 0, "%s", vd.text);
}

/* Without DRIVER records (an owner that enables RUNTIME only, or DRIVER refused), a memcpy
 * joins through its runtimeCorrelationId (before, through correlationId, the driver
 * call's: lost), a memset through its correlation id, the runtime call's as the layer
 * models it (cupti_layer.h); the refusal is logged. */
Test(layer_coexist, memcpy_joins_without_driver_records)
{
	struct lin_cl_config c = { .sz = sizeof(c), .refuse_kinds = 1ull << CUPTI_ACTIVITY_KIND_DRIVER };
	lin_scope sc;
	struct lf_verdict vd;

	lf_layer(&c);
	lin_runtime *rt = lf_runtime();
	cr_assert(strstr(lf_log, "DRIVER not enabled") != NULL, "%s", lf_log);
	lf_epoch(rt, &sc);
	struct lin_cl_corr cp = lf_memop(rt, false);
	lf_memop(rt, true);
	cr_assert_eq(lin_scope_exit(rt, &sc), 0);
	lin_runtime_free(rt);
	cr_assert_neq(cp.runtime, cp.driver);
	lf_load();
	size_t m = tr_find(lf_tr, LIN_REC_MEMCPY, 0);
	cr_assert_neq(m, SIZE_MAX);
	cr_assert_eq(tr_u(lf_tr, m, 1), cp.runtime);
	lf_validate(&vd);
	cr_assert_eq(vd.s.gpu_records, 2);
	cr_assert_eq(vd.s.observed, 2, "%s", vd.text);
	cr_assert_eq(vd.exit_code, 0, "%s", vd.text);
}
