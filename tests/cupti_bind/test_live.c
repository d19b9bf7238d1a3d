/* SPDX-License-Identifier: MIT */
/*
 * test_live.c - the CUPTI binding through a real runtime, without a GPU: the one-time probe
 * and host-side fallback when no driver is present, and attach mode (buffers decoded into
 * the runtime's trace).
 */
#include <cupti.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>

#include "lin_test.h"
#include "tr_helpers.h"
#include "lineage/cupti.h"
#include "lineage/runtime.h"
#include "lineage/trace_format.h"

static struct tr_sink sink;
static struct tr_trace *tr;
static atomic_int n_logs;
static char last_log[256];

static void on_log(enum lin_log_level level, const char *msg, void *user)
{
	(void)user;
	if (level <= LIN_LOG_WARN && strstr(msg, "CUPTI")) {
		atomic_fetch_add(&n_logs, 1);
		snprintf(last_log, sizeof(last_log), "%s", msg);
	}
}

static lin_runtime *make_rt(enum lin_backend_kind backend)
{
	struct lin_runtime_opts o = {
		.sz = sizeof(o),
		.trace_write = tr_sink_write,
		.trace_user = &sink,
		.backend = backend,
		.flags = LIN_RT_NO_WRITER_THREAD,
		.log = on_log,
	};
	lin_runtime *rt = NULL;

	cr_assert_eq(lin_runtime_create(&o, &rt), 0);
	return rt;
}

static void setup(void)
{
	tr_sink_init(&sink);
	tr = calloc(1, sizeof(*tr));
	atomic_store(&n_logs, 0);
}

static void teardown(void)
{
	tr_free(tr);
	free(tr);
	tr_sink_fini(&sink);
}

static void load(void)
{
	tr_free(tr);
	tr_load(tr, sink.data, sink.len);
	cr_assert_eq(tr->truncated_at, 0);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* True when this process has a working CUPTI (a GPU machine): the no-driver tests skip,
 * and say so; the success path with a driver is test_cupti_gpu_live's (label gpu). */
static bool cupti_works(void)
{
	struct lin_backend_ops ops;

	return lin_cupti_push_ops(0, &ops, NULL) == 0;
}

TestSuite(cupti_live, .init = setup, .fini = teardown);

Test(cupti_live, probe_fails_cleanly_without_driver)
{
	const char *status = NULL;
	struct lin_backend_ops ops;
	uint64_t t0, t1;

	if (cupti_works())
		cr_skip_test("CUPTI works here (a driver is present): the fallback without one "
			     "cannot be observed; test_cupti_gpu_live (ctest -L gpu) covers this case");
	t0 = now_ns();
	cr_assert_eq(lin_cupti_push_ops(0, &ops, &status), -LIN_ENOCUPTI);
	t1 = now_ns();
	cr_assert_not_null(status);
	cr_assert(strncmp(status, "unavailable: ", 13) == 0, "status: %s", status);
	cr_assert_lt(t1 - t0, 1000000ull, "a cached probe answers without calling CUPTI");
	cr_assert_eq(lin_cupti_push_ops(0, NULL, NULL), -EINVAL);
	cr_assert_eq(lin_cupti_push_ops(6, &ops, NULL), -EINVAL, "CUPTI_EXTERNAL_CORRELATION_KIND_SIZE");
}

Test(cupti_live, runtime_falls_back_to_host_lineage)
{
	lin_runtime *rt;
	uint64_t req, ep, t0, t1;
	lin_scope sc;
	char cupti[128], backend[32];
	const int n = 2000;

	if (cupti_works())
		cr_skip_test("CUPTI works here (a driver is present): the fallback without one "
			     "cannot be observed; test_cupti_gpu_live (ctest -L gpu) covers this case");
	rt = make_rt(LIN_BACKEND_CUPTI);
	cr_assert_eq(atomic_load(&n_logs), 1, "the fallback is logged once");
	cr_assert(strstr(last_log, "unavailable") != NULL, "log: %s", last_log);

	struct lin_request_opts ro = { .sz = sizeof(ro), .name = "r" };
	cr_assert_eq(lin_request_begin(rt, &ro, &req), 0);
	struct lin_epoch_opts eo = { .sz = sizeof(eo), .requests = &req, .n_requests = 1 };
	cr_assert_eq(lin_epoch_declare(rt, &eo, &ep), 0);
	cr_assert_eq(lin_scope_enter(rt, ep, &sc), 0);
	t0 = now_ns();
	for (int i = 0; i < n; i++) {
		lin_launch l;
		cr_assert_eq(lin_launch_begin(rt, "k", &l), 0);
		cr_assert_eq(l.ext_id, 0, "nothing is pushed after a failed probe");
		cr_assert_eq(lin_launch_end(rt, &l), 0);
	}
	t1 = now_ns();
	/* A failing CUPTI push+pop costs 37-190 us; the fallback launch path must not pay it. */
	cr_assert_lt((t1 - t0) / n, 20000ull, "%llu ns per launch", (unsigned long long)((t1 - t0) / n));
	cr_assert_eq(lin_scope_exit(rt, &sc), 0);
	cr_assert_eq(lin_runtime_flush(rt), 0);
	cr_assert_eq(atomic_load(&n_logs), 1, "no log per launch");
	lin_runtime_free(rt);

	load();
	cr_assert(tr_header_str(tr, "cupti", cupti, sizeof(cupti)));
	cr_assert(strncmp(cupti, "unavailable: ", 13) == 0, "header cupti: %s", cupti);
	cr_assert(tr_header_str(tr, "backend", backend, sizeof(backend)));
	cr_assert_str_eq(backend, "cupti");
	cr_assert_eq(tr_count(tr, LIN_REC_LAUNCH), (size_t)n, "host-side lineage still recorded");
	size_t l0 = tr_find(tr, LIN_REC_LAUNCH, 0);
	cr_assert_eq(tr_u(tr, l0, 3), ep);
	cr_assert(tr_is_nil(tr, l0, 5), "ext_id nil: nothing pushed");
	cr_assert_eq(tr_count(tr, LIN_REC_KERNEL), 0);
	LIN_TEST_CHECK_LEAKS();
}

/* ------------------------------------------------------------------ attach mode */

static void add_ext(struct tr_buf *b, uint64_t ext, uint32_t corr)
{
	CUpti_ActivityExternalCorrelation e;

	memset(&e, 0, sizeof(e));
	e.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
	e.externalKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2;
	e.externalId = ext;
	e.correlationId = corr;
	tr_put(b, &e, sizeof(e));
}

static void add_kernel(struct tr_buf *b, uint32_t corr, int64_t grid, const char *name)
{
	CUpti_ActivityKernel10 k;

	memset(&k, 0, sizeof(k));
	k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	k.correlationId = corr;
	k.start = 10;
	k.end = 20;
	k.gridId = grid;
	k.name = name;
	tr_put(b, &k, sizeof(k));
}

static const char *const names[4] = { "k_attach_0", "k_attach_1", "k_attach_2", "k_attach_3" };

Test(cupti_live, attach_decodes_into_the_trace)
{
	lin_runtime *rt = make_rt(LIN_BACKEND_NONE);
	static struct tr_buf kb, eb;
	struct lin_cupti_decode_stats st = { .sz = sizeof(st) };
	char name[64], backend[32];

	kb.used = eb.used = 0;
	for (int i = 0; i < 8; i++)
		add_kernel(&kb, 100 + (uint32_t)i, i + 1, names[i % 2]);
	for (int i = 0; i < 8; i++)
		add_ext(&eb, 7000 + (uint64_t)i, 100 + (uint32_t)i);
	/* Kernels first, then their external correlations. */
	cr_assert_eq(lin_cupti_attach_decode(rt, kb.data, kb.used, &st), 0);
	cr_assert_eq(lin_cupti_attach_decode(rt, eb.data, eb.used, &st), 0);
	cr_assert_eq(lin_cupti_attach_decode(rt, NULL, 0, &st), 0);
	cr_assert_eq(st.kernels, 8);
	cr_assert_eq(st.ext_correlation, 8);
	cr_assert_eq(st.buffers, 3);
	cr_assert_eq(lin_cupti_attach_dropped(rt, LIN_DROP_CUPTI_RECORDS, 5), 0);
	cr_assert_eq(lin_cupti_attach_dropped(rt, LIN_DROP_CUPTI_BUFFER, 0), 0);
	cr_assert_eq(lin_runtime_flush(rt), 0);
	lin_runtime_free(rt);

	load();
	cr_assert(tr_header_str(tr, "backend", backend, sizeof(backend)));
	cr_assert_str_eq(backend, "none");
	cr_assert_eq(tr_count(tr, LIN_REC_KERNEL), 8);
	cr_assert_eq(tr_count(tr, LIN_REC_EXT_CORRELATION), 8);
	for (size_t i = 0; i < tr->n; i++) {
		if (tr_type(tr, i) != LIN_REC_KERNEL)
			continue;
		cr_assert(tr_string(tr, tr_u(tr, i, 10), name, sizeof(name)), "name sid defined");
		cr_assert(strcmp(name, names[0]) == 0 || strcmp(name, names[1]) == 0);
	}
	size_t d = tr_find(tr, LIN_REC_DROPPED, 0);
	cr_assert_neq(d, SIZE_MAX, "the owner's loss is written");
	cr_assert_eq(tr_u(tr, d, 1), LIN_DROP_CUPTI_RECORDS);
	cr_assert_eq(tr_u(tr, d, 2), 5);
	cr_assert_eq(tr_count(tr, LIN_REC_DROPPED), 1, "a zero count writes nothing");
	LIN_TEST_CHECK_LEAKS();
}

Test(cupti_live, attach_bad_arguments)
{
	lin_runtime *rt = make_rt(LIN_BACKEND_NONE);
	struct lin_cupti_decode_stats small = { .sz = 8 };
	uint8_t b[8] = { 0 };

	cr_assert_eq(lin_cupti_attach_decode(NULL, b, 8, NULL), -EINVAL);
	cr_assert_eq(lin_cupti_attach_decode(rt, NULL, 8, NULL), -EINVAL);
	cr_assert_eq(lin_cupti_attach_decode(rt, b, 8, &small), -EINVAL);
	cr_assert_eq(lin_cupti_attach_dropped(rt, LIN_DROP_HOST_EVENTS, 1), -EINVAL);
	cr_assert_eq(lin_cupti_attach_dropped(NULL, LIN_DROP_CUPTI_RECORDS, 1), -EINVAL);
	lin_runtime_free(rt);
}

Test(cupti_live, attach_without_trace)
{
	struct lin_runtime_opts o = { .sz = sizeof(o) };
	lin_runtime *rt = NULL;
	static struct tr_buf b;

	b.used = 0;
	add_kernel(&b, 1, 1, "k");
	cr_assert_eq(lin_runtime_create(&o, &rt), 0);
	cr_assert_eq(lin_cupti_attach_decode(rt, b.data, b.used, NULL), -LIN_ETRACE);
	lin_runtime_free(rt);
}

struct attach_arg {
	lin_runtime *rt;
	int idx;
	struct tr_buf buf;
};

static void *attach_worker(void *p)
{
	struct attach_arg *a = p;

	for (int round = 0; round < 50; round++)
		cr_assert_eq(lin_cupti_attach_decode(a->rt, a->buf.data, a->buf.used, NULL), 0);
	return NULL;
}

/* Per-thread buffers handed over concurrently, as CUPTI's completion callbacks do. */
Test(cupti_live, attach_from_many_threads)
{
	lin_runtime *rt = make_rt(LIN_BACKEND_NONE);
	struct attach_arg *args = calloc(4, sizeof(*args));
	pthread_t th[4];
	size_t kernels = 0;
	char name[64];

	for (int t = 0; t < 4; t++) {
		args[t].rt = rt;
		args[t].idx = t;
		for (int i = 0; i < 10; i++)
			add_kernel(&args[t].buf, (uint32_t)(t * 100 + i + 1), t * 100 + i + 1, names[t]);
		cr_assert_eq(pthread_create(&th[t], NULL, attach_worker, &args[t]), 0);
	}
	for (int t = 0; t < 4; t++)
		pthread_join(th[t], NULL);
	cr_assert_eq(lin_runtime_flush(rt), 0);
	lin_runtime_free(rt);
	free(args);

	load();
	for (size_t i = 0; i < tr->n; i++) {
		if (tr_type(tr, i) != LIN_REC_KERNEL)
			continue;
		kernels++;
		uint64_t t = (tr_u(tr, i, 1) - 1) / 100;
		cr_assert_lt(t, 4);
		cr_assert(tr_string(tr, tr_u(tr, i, 10), name, sizeof(name)));
		cr_assert_str_eq(name, names[t], "name of thread %llu's kernels", (unsigned long long)t);
	}
	cr_assert_eq(kernels, 4 * 10 * 50);
	cr_assert_eq(tr_count(tr, LIN_REC_STRING) >= 4, 1);
	LIN_TEST_CHECK_LEAKS();
}
