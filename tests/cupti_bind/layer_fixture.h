/* SPDX-License-Identifier: MIT */
/*
 * layer_fixture.h - the live binding under the test CUPTI layer: a runtime with
 * LIN_BACKEND_CUPTI writing into memory, CUDA calls made as the layer's program side,
 * and the trace read back or validated. Each Criterion test is a process of its own, so
 * CUPTI's process-wide state (the layer's, the binding's) starts fresh in every test.
 */
#ifndef LIN_TEST_LAYER_FIXTURE_H
#define LIN_TEST_LAYER_FIXTURE_H

#include <cupti.h>
#include <stdio.h>
#include <string.h>

#include "cupti_layer.h"
#include "lin_test.h"
#include "tr_helpers.h"
#include "join.h"
#include "report.h"
#include "lineage/runtime.h"
#include "lineage/trace_format.h"

/* cbids of the calls the program makes (cupti_runtime_cbid.h, cupti_driver_cbid.h). */
#define LF_RT_LAUNCH CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000
#define LF_DRV_LAUNCH CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel
#define LF_RT_MEMCPY CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020
#define LF_DRV_MEMCPY CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoDAsync_v2
#define LF_RT_MEMSET CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020
#define LF_DRV_MEMSET CUPTI_DRIVER_TRACE_CBID_cuMemsetD8Async

static struct tr_sink lf_sink;
static struct tr_trace *lf_tr;
static char lf_log[4096];
static pthread_mutex_t lf_log_mu = PTHREAD_MUTEX_INITIALIZER;

static void lf_on_log(enum lin_log_level level, const char *msg, void *user)
{
	(void)user;
	if (level > LIN_LOG_WARN)
		return;
	pthread_mutex_lock(&lf_log_mu);
	size_t n = strlen(lf_log);
	snprintf(lf_log + n, sizeof(lf_log) - n, "%s\n", msg);
	pthread_mutex_unlock(&lf_log_mu);
}

static inline void lf_setup(void)
{
	/* The binding calls the layer through its table, not libcupti (cupti_layer.h). */
	cr_assert_eq(lin_cupti_use_api(lin_cl_cupti_api()), 0);
	tr_sink_init(&lf_sink);
	lf_tr = calloc(1, sizeof(*lf_tr));
	lf_log[0] = '\0';
}

static inline void lf_teardown(void)
{
	tr_free(lf_tr);
	free(lf_tr);
	tr_sink_fini(&lf_sink);
}

/* Configure the layer (NULL: defaults) before anything else touches it. */
static inline void lf_layer(const struct lin_cl_config *c)
{
	struct lin_cl_config d = { .sz = sizeof(d) };

	cr_assert_eq(lin_cl_configure(c ? c : &d), 0);
}

static inline lin_runtime *lf_runtime_opts(struct lin_runtime_opts *o)
{
	lin_runtime *rt = NULL;

	o->sz = sizeof(*o);
	o->trace_write = tr_sink_write;
	o->trace_user = &lf_sink;
	o->backend = LIN_BACKEND_CUPTI;
	o->log = lf_on_log;
	cr_assert_eq(lin_runtime_create(o, &rt), 0);
	return rt;
}

static inline lin_runtime *lf_runtime(void)
{
	struct lin_runtime_opts o;

	memset(&o, 0, sizeof(o));
	return lf_runtime_opts(&o);
}

static inline void lf_load(void)
{
	tr_free(lf_tr);
	tr_load(lf_tr, lf_sink.data, lf_sink.len);
	cr_assert_eq(lf_tr->truncated_at, 0);
}

static inline void lf_header_cupti(char *buf, size_t cap)
{
	cr_assert(tr_header_str(lf_tr, "cupti", buf, cap), "header has a cupti status");
}

/* Enter a fresh request and epoch on this thread. */
static inline uint64_t lf_epoch(lin_runtime *rt, lin_scope *sc)
{
	uint64_t req, ep;
	struct lin_request_opts ro = { .sz = sizeof(ro) };

	cr_assert_eq(lin_request_begin(rt, &ro, &req), 0);
	struct lin_epoch_opts eo = { .sz = sizeof(eo), .requests = &req, .n_requests = 1 };
	cr_assert_eq(lin_epoch_declare(rt, &eo, &ep), 0);
	cr_assert_eq(lin_scope_enter(rt, ep, sc), 0);
	return ep;
}

/* One kernel launch as the program makes it: bracketed, a runtime call with its nested
 * driver call, the kernel record. @drop: CUPTI loses the call's API records. */
static inline struct lin_cl_corr lf_kernel_drop(lin_runtime *rt, int64_t grid, bool drop)
{
	lin_launch l;
	CUpti_ActivityKernel10 k;
	struct lin_cl_call c = { .cbid = LF_RT_LAUNCH, .driver_cbid = LF_DRV_LAUNCH, .drop = drop };
	uint64_t now = 0;

	(void)lin_launch_begin(rt, "k", &l);
	struct lin_cl_corr corr = lin_cl_api(&c);
	(void)lin_launch_end(rt, &l);
	(void)cuptiGetTimestamp(&now);
	memset(&k, 0, sizeof(k));
	k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	k.start = now + 2000;
	k.end = now + 3000;
	k.queued = now + 500;
	k.submitted = now + 1000;
	k.contextId = 1;
	k.streamId = 7;
	k.gridId = grid;
	k.name = "k_layer";
	lin_cl_gpu(&k, sizeof(k), corr);
	return corr;
}

static inline struct lin_cl_corr lf_kernel(lin_runtime *rt, int64_t grid)
{
	return lf_kernel_drop(rt, grid, false);
}

/* A memcpy (@set false) or memset as the program makes it. */
static inline struct lin_cl_corr lf_memop(lin_runtime *rt, bool set)
{
	lin_launch l;
	struct lin_cl_call c = { .cbid = set ? LF_RT_MEMSET : LF_RT_MEMCPY,
				 .driver_cbid = set ? LF_DRV_MEMSET : LF_DRV_MEMCPY };
	uint64_t now = 0;

	(void)lin_launch_begin(rt, set ? "memset" : "memcpy", &l);
	struct lin_cl_corr corr = lin_cl_api(&c);
	(void)lin_launch_end(rt, &l);
	(void)cuptiGetTimestamp(&now);
	if (set) {
		CUpti_ActivityMemset4 m;
		memset(&m, 0, sizeof(m));
		m.kind = CUPTI_ACTIVITY_KIND_MEMSET;
		m.bytes = 64;
		m.start = now + 2000;
		m.end = now + 2500;
		lin_cl_gpu(&m, sizeof(m), corr);
	} else {
		CUpti_ActivityMemcpy6 m;
		memset(&m, 0, sizeof(m));
		m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
		m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
		m.bytes = 4096;
		m.start = now + 2000;
		m.end = now + 2500;
		lin_cl_gpu(&m, sizeof(m), corr);
	}
	return corr;
}

/* The validator's verdict on the trace in lf_sink; *@text gets its text report. */
struct lf_verdict {
	struct lin_join_summary s;
	int exit_code;
	char text[8192];
};

static inline void lf_validate(struct lf_verdict *vd)
{
	struct lin_joiner *v = lin_joiner_create(NULL);
	FILE *f = fmemopen(vd->text, sizeof(vd->text) - 1, "w");

	cr_assert_not_null(v);
	cr_assert_not_null(f);
	memset(vd->text, 0, sizeof(vd->text));
	cr_assert_eq(lin_joiner_add_mem(v, "trace", lf_sink.data, lf_sink.len), 0);
	lin_joiner_finish(v);
	vd->s = *lin_joiner_summary(v);
	vd->exit_code = lin_joiner_exit_code(v);
	lin_validator_report_text(v, f);
	fclose(f);
	lin_joiner_free(v);
}

/* Records of @type in the trace. */
static inline size_t lf_count(uint64_t type) { return tr_count(lf_tr, type); }

/* Sum of dropped counts of @source. */
static inline uint64_t lf_dropped(uint64_t source)
{
	uint64_t n = 0;

	for (size_t i = 0; i < lf_tr->n; i++)
		if (tr_type(lf_tr, i) == LIN_REC_DROPPED && tr_u(lf_tr, i, 1) == source)
			n += tr_u(lf_tr, i, 2);
	return n;
}

#endif
