/* SPDX-License-Identifier: MIT */
/*
 * test_layer_live.c - cupti_bind/live.c as CUPTI delivers, under the test CUPTI layer:
 * per-thread buffers, records split across buffers and delivered out of order, periodic,
 * normal and forced flushes, incomplete records, buffers for many threads, clock pairs,
 * CUPTI's own losses and latency timestamps (the flush at process exit: layer_exit_main.c).
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>
#include <unistd.h>

#include "layer_fixture.h"

TestSuite(layer_live, .init = lf_setup, .fini = lf_teardown);

/* The simplest run: one thread, a few launches; everything joins, the header says ok. */
Test(layer_live, collects_through_the_layer)
{
	char cupti[256];
	lin_scope sc;
	struct lf_verdict vd;

	lf_layer(NULL);
	lin_runtime *rt = lf_runtime();
	uint64_t ep = lf_epoch(rt, &sc);
	for (int i = 1; i <= 5; i++)
		lf_kernel(rt, i);
	cr_assert_eq(lin_scope_exit(rt, &sc), 0);
	lin_runtime_free(rt);

	lf_load();
	lf_header_cupti(cupti, sizeof(cupti));
	cr_assert_str_eq(cupti, "ok");
	cr_assert_eq(lf_count(LIN_REC_KERNEL), 5);
	cr_assert_eq(lf_count(LIN_REC_API), 10, "runtime and nested driver records");
	cr_assert(lin_cl_thread_id_type() == CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
	size_t e = tr_find(lf_tr, LIN_REC_EXT_CORRELATION, 0);
	cr_assert_neq(e, SIZE_MAX);
	cr_assert_eq(tr_u(lf_tr, e, 2), ep);
	char clk[32];
	cr_assert(tr_header_str(lf_tr, "device_clock", clk, sizeof(clk)));
	cr_assert_str_eq(clk, "host", "CUPTI's timestamps are on lineage's clock");
	lf_validate(&vd);
	cr_assert_eq(vd.s.gpu_records, 5);
	cr_assert_eq(vd.s.observed, 5, "%s", vd.text);
	cr_assert_eq(vd.s.bracket_checked, 10,
		     "each launch's runtime and driver call placed in its bracket: %llu\n%s",
		     (unsigned long long)vd.s.bracket_checked, vd.text);
	cr_assert_eq(vd.exit_code, 0, "%s", vd.text);
	cr_assert_not(lin_cl_enabled(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL),
		      "the kinds lineage enabled are disabled at close");
	LIN_TEST_CHECK_LEAKS();
}

/* An API record stamped before its launch bracket opened, on the shared host clock: the
 * bracket check fires (ext_outside_bracket); the same launch stamped inside stays silent
 * (collects_through_the_layer). */
Test(layer_live, api_call_outside_its_bracket_is_caught)
{
	lin_scope sc;
	struct lf_verdict vd;

	lf_layer(NULL);
	lin_runtime *rt = lf_runtime();
	lf_epoch(rt, &sc);
	/* CUPTI stamps the call two milliseconds before lineage's bracket opened (as a
	 * clock that is not lineage's would). */
	uint64_t t = 0;
	cr_assert_eq(cuptiGetTimestamp(&t), CUPTI_SUCCESS);
	struct timespec d = { 0, 2000000 };
	nanosleep(&d, NULL);
	lin_launch l;
	cr_assert_eq(lin_launch_begin(rt, "k", &l), 0);
	struct lin_cl_call c = {
		.cbid = LF_RT_LAUNCH, .driver_cbid = LF_DRV_LAUNCH, .start = t, .end = t + 100
	};
	struct lin_cl_corr corr = lin_cl_api(&c);
	cr_assert_eq(lin_launch_end(rt, &l), 0);
	CUpti_ActivityKernel10 k;
	memset(&k, 0, sizeof(k));
	k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	k.start = t + 2000;
	k.end = t + 3000;
	k.contextId = 1;
	k.streamId = 7;
	k.gridId = 1;
	k.name = "k_layer";
	lin_cl_gpu(&k, sizeof(k), corr);
	cr_assert_eq(lin_scope_exit(rt, &sc), 0);
	lin_runtime_free(rt);

	lf_load();
	lf_validate(&vd);
	cr_assert_eq(vd.exit_code, 1, "%s", vd.text);
	cr_assert(strstr(vd.text, "ext_outside_bracket"), "%s", vd.text);
	LIN_TEST_CHECK_LEAKS();
}

/* LIN_CUPTI_OWN_CLOCK leaves CUPTI's timestamps alone: no callback, header device_clock
 * "cupti", the joins still hold. */
Test(layer_live, own_clock_keeps_cuptis_timestamps)
{
	char clk[32];
	lin_scope sc;
	struct lf_verdict vd;
	struct lin_runtime_opts o;

	lf_layer(NULL);
	memset(&o, 0, sizeof(o));
	o.cupti_flags = LIN_CUPTI_OWN_CLOCK;
	lin_runtime *rt = lf_runtime_opts(&o);
	lf_epoch(rt, &sc);
	for (int i = 1; i <= 3; i++)
		lf_kernel(rt, i);
	cr_assert_eq(lin_scope_exit(rt, &sc), 0);
	lin_runtime_free(rt);

	cr_assert_not(lin_cl_timestamp_callback_registered());
	lf_load();
	cr_assert(tr_header_str(lf_tr, "device_clock", clk, sizeof(clk)));
	cr_assert_str_eq(clk, "cupti");
	lf_validate(&vd);
	cr_assert_eq(vd.s.observed, 3, "%s", vd.text);
	cr_assert_eq(vd.exit_code, 0, "%s", vd.text);
	LIN_TEST_CHECK_LEAKS();
}

/* A device clock whose reads are slow (1 ms) except one in four: a pair taken from one
 * read would be 1 ms wide three times in four. */
static uint64_t slow_clock(void *user)
{
	static atomic_uint seq; /* read from the layer's delivery thread and the closing one */
	struct timespec t0, t;

	(void)user;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if ((atomic_fetch_add(&seq, 1) + 1) % 4 != 0)
		do
			clock_gettime(CLOCK_MONOTONIC, &t);
		while ((uint64_t)(t.tv_sec - t0.tv_sec) * 1000000000u + (uint64_t)t.tv_nsec -
			       (uint64_t)t0.tv_nsec <
		       1000000u);
	clock_gettime(CLOCK_REALTIME, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Under CUPTI's own clock every clock pair is the narrowest of several reads (docs/cupti.md,
 * "Clocks"): no pair is as wide as a slow read (with one read per pair, three in four are). */
Test(layer_live, clock_pairs_keep_the_narrowest_read)
{
	struct lin_cl_config c = { .sz = sizeof(c), .clock = slow_clock };
	lin_scope sc;
	struct lf_verdict vd;
	struct lin_runtime_opts o;

	lf_layer(&c);
	memset(&o, 0, sizeof(o));
	o.cupti_flags = LIN_CUPTI_OWN_CLOCK;
	lin_runtime *rt = lf_runtime_opts(&o);
	lf_epoch(rt, &sc);
	for (int i = 1; i <= 3; i++)
		lf_kernel(rt, i);
	cr_assert_eq(lin_scope_exit(rt, &sc), 0);
	lin_runtime_free(rt);

	lf_load();
	size_t pairs = 0;
	for (size_t i = 0; i < lf_tr->n; i++) {
		if (tr_type(lf_tr, i) != LIN_REC_CLOCK)
			continue;
		pairs++;
		uint64_t width = tr_u(lf_tr, i, 3) - tr_u(lf_tr, i, 1);
		cr_assert_lt(width, 1000000u, "pair %zu is %llu ns wide: a slow read was kept",
			     pairs, (unsigned long long)width);
	}
	cr_assert_geq(pairs, 2, "a pair at open and one at close at least");
	lf_validate(&vd);
	cr_assert_eq(vd.s.observed, 3, "%s", vd.text);
	cr_assert_eq(vd.exit_code, 0, "%s", vd.text);
	LIN_TEST_CHECK_LEAKS();
}

struct worker_arg {
	lin_runtime *rt;
	int first, n;
};

static void *launcher(void *p)
{
	struct worker_arg *a = p;
	lin_scope sc;

	lf_epoch(a->rt, &sc);
	for (int i = 0; i < a->n; i++)
		lf_kernel(a->rt, a->first + i);
	cr_assert_eq(lin_scope_exit(a->rt, &sc), 0);
	return NULL;
}

static void run_threads(lin_runtime *rt, int threads, int per_thread)
{
	pthread_t th[128];
	struct worker_arg a[128];

	cr_assert_leq(threads, 128);
	for (int t = 0; t < threads; t++) {
		a[t] = (struct worker_arg){ rt, 1 + t * per_thread, per_thread };
		cr_assert_eq(pthread_create(&th[t], NULL, launcher, &a[t]), 0);
	}
	for (int t = 0; t < threads; t++)
		pthread_join(th[t], NULL);
}

/* Small buffers (a launch's records split across them), per-thread and device buffers
 * delivered in a shuffled order, full buffers completed by the layer's thread while the
 * program runs: every kernel still joins its epoch. */
Test(layer_live, split_buffers_out_of_order_still_join)
{
	struct lin_cl_config c = { .sz = sizeof(c), .buffer_use = 512, .seed = 42 };
	struct lf_verdict vd;
	struct lin_cl_stats ls;

	lf_layer(&c);
	lin_runtime *rt = lf_runtime();
	run_threads(rt, 4, 50);
	lin_runtime_free(rt);
	lin_cl_get_stats(&ls);
	cr_assert_gt(ls.delivered, 100, "records of one launch lie in several buffers");
	lf_validate(&vd);
	cr_assert_eq(vd.s.gpu_records, 200);
	cr_assert_eq(vd.s.observed, 200, "%s", vd.text);
	cr_assert_eq(vd.exit_code, 0, "%s", vd.text);
	LIN_TEST_CHECK_LEAKS();
}

/* CUPTI asks one buffer per thread. 100 threads with a launch each must not run the
 * pool dry (it once held at most 64 buffers, and 36 requests were declined). */
Test(layer_live, a_hundred_threads_get_buffers)
{
	struct lf_verdict vd;
	struct lin_cl_stats ls;

	lf_layer(NULL);
	lin_runtime *rt = lf_runtime();
	/* No periodic flush: every thread holds its buffer until close, all at once. */
	cr_assert_eq(cuptiActivityFlushPeriod(0), CUPTI_SUCCESS);
	run_threads(rt, 100, 1);
	lin_runtime_free(rt);
	lin_cl_get_stats(&ls);
	cr_assert_eq(ls.declined, 0, "%llu requests declined", (unsigned long long)ls.declined);
	cr_assert_geq(ls.max_outstanding, 100);
	lf_load();
	cr_assert_eq(lf_dropped(LIN_DROP_CUPTI_BUFFER), 0);
	lf_validate(&vd);
	cr_assert_eq(vd.s.observed, 100, "%s", vd.text);
	cr_assert_eq(vd.exit_code, 0, "%s", vd.text);
}

/* The cap still holds, and what it costs is reported: declines (source 3) and the records
 * CUPTI lost for them (source 2). */
Test(layer_live, buffers_past_the_cap_are_declined_and_reported)
{
	struct lin_runtime_opts o;
	struct lf_verdict vd;
	struct lin_cl_stats ls;

	lf_layer(NULL);
	memset(&o, 0, sizeof(o));
	o.cupti_buffers_max = 4;
	o.cupti_buffer_kib = 64;
	lin_runtime *rt = lf_runtime_opts(&o);
	run_threads(rt, 8, 1);
	lin_runtime_free(rt);
	lin_cl_get_stats(&ls);
	cr_assert_gt(ls.declined, 0);
	lf_load();
	cr_assert_eq(lf_dropped(LIN_DROP_CUPTI_BUFFER), ls.declined);
	cr_assert_eq(lf_dropped(LIN_DROP_CUPTI_RECORDS), ls.dropped);
	lf_validate(&vd);
	cr_assert_eq(vd.exit_code, 1, "losses are never a clean pass: %s", vd.text);
}

/* Device records are complete only once post-processed, which a normal flush does and a
 * forced one does not: closing with a forced flush alone lost every kernel. */
Test(layer_live, close_flushes_normally_before_forcing)
{
	lin_scope sc;
	struct lf_verdict vd;
	struct lin_cl_stats ls;

	lf_layer(NULL);
	lin_runtime *rt = lf_runtime();
	lf_epoch(rt, &sc);
	for (int i = 1; i <= 20; i++)
		lf_kernel(rt, i);
	cr_assert_eq(lin_scope_exit(rt, &sc), 0);
	lin_runtime_free(rt);
	lin_cl_get_stats(&ls);
	cr_assert_gt(ls.flushes, 0, "a normal flush at close");
	cr_assert_eq(ls.delivered_incomplete, 0);
	lf_validate(&vd);
	cr_assert_eq(vd.s.observed, 20, "%s", vd.text);
	cr_assert_eq(vd.exit_code, 0, "%s", vd.text);
}

/* Work still running at close: the forced flush delivers its records incomplete. They are
 * reported lost, and a recycled buffer's old bytes are never read in their place (the
 * pool zeroes buffers it lends again; without it the first run's kinds showed through). */
Test(layer_live, incomplete_records_are_losses_never_stale_bytes)
{
	lin_scope sc;
	struct lf_verdict vd;
	struct lin_cl_stats ls;

	lf_layer(NULL);
	lin_runtime *rt = lf_runtime();
	lf_epoch(rt, &sc);
	for (int i = 1; i <= 10; i++)
		lf_kernel(rt, i);
	cr_assert_eq(cuptiActivityFlushAll(0), CUPTI_SUCCESS); /* buffers back to the pool */
	lin_cl_gpu_hold(true);
	for (int i = 11; i <= 20; i++)
		lf_kernel(rt, i);
	cr_assert_eq(lin_scope_exit(rt, &sc), 0);
	lin_runtime_free(rt);
	lin_cl_get_stats(&ls);
	cr_assert_gt(ls.delivered_incomplete, 0);
	lf_load();
	cr_assert_eq(lf_count(LIN_REC_KERNEL), 10, "only the completed kernels");
	/* Each launch: a runtime and a driver API record, each after its ext record. Stale
	 * bytes read as records would add to these. */
	cr_assert_eq(lf_count(LIN_REC_EXT_CORRELATION), 40);
	cr_assert_eq(lf_count(LIN_REC_API), 40);
	cr_assert_eq(lf_count(LIN_REC_MEMCPY) + lf_count(LIN_REC_MEMSET), 0);
	for (size_t i = 0; i < lf_tr->n; i++)
		if (tr_type(lf_tr, i) == LIN_REC_KERNEL)
			cr_assert_leq(tr_u(lf_tr, i, 7), 10, "grid %llu was never completed",
				      (unsigned long long)tr_u(lf_tr, i, 7));
	cr_assert_geq(lf_dropped(LIN_DROP_CUPTI_REST), 1);
	lf_validate(&vd);
	cr_assert_eq(vd.exit_code, 1, "%s", vd.text);
}

/* Partial buffers reach the trace while the program runs, before any flush of its own:
 * CUPTI's periodic flush returns only full buffers (the layer models that), so the binding's
 * own flush thread makes a normal flush every period. Without it this test failed. Waits
 * for the period (500 ms), never times. */
Test(layer_live, periodic_flush_delivers_partial_buffers)
{
	lin_scope sc;
	struct lin_cl_stats ls;

	lf_layer(NULL);
	lin_runtime *rt = lf_runtime();
	cr_assert_eq(lin_cl_flush_period(), 500);
	lf_epoch(rt, &sc);
	lf_kernel(rt, 1);
	for (int i = 0; i < 200; i++) { /* up to 20 s on a loaded machine */
		lin_cl_get_stats(&ls);
		if (ls.returned >= 2) /* delivered, and decoded by the binding's callback */
			break;
		usleep(100000);
	}
	cr_assert_geq(ls.delivered, 2, "thread and device buffers, partly filled");
	cr_assert_eq(lin_runtime_flush(rt), 0);
	lf_load();
	cr_assert_eq(lf_count(LIN_REC_KERNEL), 1, "decoded before close");
	cr_assert_eq(lin_scope_exit(rt, &sc), 0);
	lin_runtime_free(rt);
}

/* A clock pair when the trace opens, with every completed buffer and at close, so device
 * times map to host times between two recent pairs (the first buffer's calls used to come
 * before any pair: the validator widens its error bound there). */
Test(layer_live, a_clock_pair_per_buffer)
{
	struct lin_cl_config c = { .sz = sizeof(c), .buffer_use = 512 };
	struct lin_cl_stats ls;

	lf_layer(&c);
	lin_runtime *rt = lf_runtime();
	run_threads(rt, 2, 20);
	lin_runtime_free(rt);
	lin_cl_get_stats(&ls);
	lf_load();
	cr_assert_eq(lf_count(LIN_REC_CLOCK), ls.delivered + 2,
		     "one at open, one per buffer and one at close");
	size_t k = tr_find(lf_tr, LIN_REC_CLOCK, 0);
	size_t first_gpu = tr_find(lf_tr, LIN_REC_EXT_CORRELATION, 0);
	cr_assert(k != SIZE_MAX && first_gpu != SIZE_MAX);
	cr_assert_lt(k, first_gpu, "a pair precedes the records of its buffer");
	cr_assert_eq(k, tr_find(lf_tr, LIN_REC_CLOCK, 0));
	size_t k2 = SIZE_MAX;
	for (size_t i = k + 1; i < lf_tr->n && k2 == SIZE_MAX; i++)
		if (tr_type(lf_tr, i) == LIN_REC_CLOCK)
			k2 = i;
	cr_assert(k2 != SIZE_MAX && k2 < first_gpu, "the pair at open, then the first buffer's");
	cr_assert_lt(tr_u(lf_tr, k, 1), tr_u(lf_tr, k2, 1));
	cr_assert_gt(tr_u(lf_tr, k, 2), tr_u(lf_tr, k, 1), "CUPTI's clock is CLOCK_REALTIME");
}

/* CUPTI's own losses (cuptiActivityGetNumDroppedRecords) reach the trace, and the kernel
 * whose API records were lost is lost with that cause. */
Test(layer_live, cupti_losses_reach_the_trace)
{
	lin_scope sc;
	struct lf_verdict vd;

	lf_layer(NULL);
	lin_runtime *rt = lf_runtime();
	lf_epoch(rt, &sc);
	lf_kernel(rt, 1);
	lf_kernel_drop(rt, 2, true);
	cr_assert_eq(lin_scope_exit(rt, &sc), 0);
	lin_runtime_free(rt);
	lf_load();
	cr_assert_eq(lf_dropped(LIN_DROP_CUPTI_RECORDS), 4, "2 API records and their 2 ext records");
	lf_validate(&vd);
	cr_assert_eq(vd.s.observed, 1, "%s", vd.text);
	cr_assert_eq(vd.s.lost_by_cause[LIN_CAUSE_DROPPED_RECORDS], 1, "%s", vd.text);
}

/* Latency timestamps are opt-in: without the flag queued/submitted stay unknown (nil),
 * with it they are CUPTI's values, observed. */
static void latency_run(uint32_t flags, bool expect)
{
	struct lin_runtime_opts o;
	lin_scope sc;

	lf_layer(NULL);
	memset(&o, 0, sizeof(o));
	o.cupti_flags = flags;
	lin_runtime *rt = lf_runtime_opts(&o);
	cr_assert_eq(lin_cl_latency_enabled(), expect);
	lf_epoch(rt, &sc);
	lf_kernel(rt, 1);
	cr_assert_eq(lin_scope_exit(rt, &sc), 0);
	lin_runtime_free(rt);
	lf_load();
	size_t k = tr_find(lf_tr, LIN_REC_KERNEL, 0);
	cr_assert_neq(k, SIZE_MAX);
	if (!expect) {
		cr_assert(tr_is_nil(lf_tr, k, 11) && tr_is_nil(lf_tr, k, 12));
		return;
	}
	uint64_t q = tr_u(lf_tr, k, 11), s = tr_u(lf_tr, k, 12), start = tr_u(lf_tr, k, 2);
	cr_assert(q != UINT64_MAX && s != UINT64_MAX);
	cr_assert_eq(s - q, 500);
	cr_assert_eq(start - s, 1000);
}

Test(layer_live, latency_timestamps_off_by_default) { latency_run(0, false); }

Test(layer_live, latency_timestamps_on_request) { latency_run(LIN_CUPTI_LATENCY_TIMESTAMPS, true); }

Test(layer_live, latency_timestamps_refused_are_logged)
{
	struct lin_cl_config c = { .sz = sizeof(c), .latency_fails = true };
	struct lin_runtime_opts o;

	lf_layer(&c);
	memset(&o, 0, sizeof(o));
	o.cupti_flags = LIN_CUPTI_LATENCY_TIMESTAMPS;
	lin_runtime *rt = lf_runtime_opts(&o);
	cr_assert(strstr(lf_log, "latency timestamps unavailable") != NULL, "log: %s", lf_log);
	lin_runtime_free(rt);
}

Test(layer_live, bad_cupti_options_are_refused)
{
	struct lin_runtime_opts o = { .sz = sizeof(o), .cupti_flags = 1u << 7 };
	lin_runtime *rt = NULL;

	cr_assert_eq(lin_runtime_create(&o, &rt), -EINVAL);
	o.cupti_flags = 0;
	o.cupti_buffer_kib = 2;
	cr_assert_eq(lin_runtime_create(&o, &rt), -EINVAL);
	cr_assert_null(rt);
}

/* CUPTI wants latency timestamps asked for before CUDA is initialised: lineage asks before
 * any other CUPTI call of its own (it used to ask after its probe's push and its
 * subscription, when CUPTI was already in use). */
Test(layer_live, latency_timestamps_asked_before_cupti_is_in_use)
{
	struct lin_runtime_opts o;

	lf_layer(NULL);
	memset(&o, 0, sizeof(o));
	o.cupti_flags = LIN_CUPTI_LATENCY_TIMESTAMPS;
	lin_runtime *rt = lf_runtime_opts(&o);
	cr_assert(lin_cl_latency_enabled());
	cr_assert_not(lin_cl_latency_late(), "asked after CUPTI was already in use");
	lin_runtime_free(rt);
}

/* The pool lends zeroed buffers, so CUPTI is told not to zero each one on the thread that
 * asked for it (CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER); without a runtime nothing
 * sets it. */
Test(layer_live, cupti_is_told_the_buffers_come_zeroed)
{
	lf_layer(NULL);
	cr_assert_not(lin_cl_zeroed_attr());
	lin_runtime *rt = lf_runtime();
	cr_assert(lin_cl_zeroed_attr());
	lin_runtime_free(rt);
}

/* Close ends the session before its final flush: no forced flush is made while a kind
 * lineage enabled is still on (else a thread still making CUDA calls fills a buffer after
 * the flush, and close reports it undelivered). A program that closes with the kinds of a
 * later client still on is test_layer_hazards' (no forced flush at all there). */
Test(layer_live, close_disables_the_kinds_before_the_final_flush)
{
	lin_scope sc;
	struct lin_cl_stats ls;
	struct lf_verdict vd;

	lf_layer(NULL);
	lin_runtime *rt = lf_runtime();
	lf_epoch(rt, &sc);
	for (int i = 1; i <= 5; i++)
		lf_kernel(rt, i);
	cr_assert_eq(lin_scope_exit(rt, &sc), 0);
	lin_runtime_free(rt);
	lin_cl_get_stats(&ls);
	cr_assert_geq(ls.forced_flushes, 1);
	cr_assert_eq(ls.forced_while_enabled, 0, "a forced flush while kinds were still enabled");
	lf_validate(&vd);
	cr_assert_eq(vd.s.observed, 5, "%s", vd.text);
	cr_assert_eq(vd.exit_code, 0, "%s", vd.text);
}

/* What CUPTI's stack of lineage's kind holds on this thread: the ids still pushed. */
static int pushed_left(uint64_t *top)
{
	int n = 0;
	uint64_t v;

	while (cuptiActivityPopExternalCorrelationId(
		       (CUpti_ExternalCorrelationKind)LIN_DEFAULT_EXT_KIND, &v) == CUPTI_SUCCESS) {
		if (!n && top)
			*top = v;
		n++;
	}
	return n;
}

/* A bracket ended out of order is refused (misuse) and stays open; the program then ends
 * the inner one and never the outer: the outer's id used to stay on CUPTI's stack after
 * the runtime was freed, so every later call on the thread carried the closed epoch. */
Test(layer_live, an_out_of_order_end_leaves_no_id_pushed)
{
	lin_scope sc;
	lin_launch outer, inner;
	struct lf_verdict vd;

	lf_layer(NULL);
	lin_runtime *rt = lf_runtime();
	lf_epoch(rt, &sc);
	cr_assert_eq(lin_launch_begin(rt, "outer", &outer), 0);
	cr_assert_eq(lin_launch_begin(rt, "inner", &inner), 0);
	cr_assert_eq(lin_launch_end(rt, &outer), -LIN_ELAUNCH_ORDER);
	cr_assert_eq(lin_launch_end(rt, &inner), 0);
	cr_assert_eq(lin_scope_exit(rt, &sc), 0);
	lin_runtime_free(rt);
	cr_assert_eq(pushed_left(NULL), 0, "ids left on CUPTI's stack after free");
	lf_validate(&vd);
	cr_assert_eq(vd.exit_code, 1, "the misuse is reported: %s", vd.text);
}

/* The same in order pops exactly its own ids (silent case). */
Test(layer_live, in_order_ends_pop_their_ids)
{
	lin_scope sc;
	lin_launch outer, inner;

	lf_layer(NULL);
	lin_runtime *rt = lf_runtime();
	lf_epoch(rt, &sc);
	cr_assert_eq(cuptiActivityPushExternalCorrelationId(
			     (CUpti_ExternalCorrelationKind)LIN_DEFAULT_EXT_KIND, 77),
		     CUPTI_SUCCESS);
	cr_assert_eq(lin_launch_begin(rt, "outer", &outer), 0);
	cr_assert_eq(lin_launch_begin(rt, "inner", &inner), 0);
	cr_assert_eq(lin_launch_end(rt, &inner), 0);
	cr_assert_eq(lin_launch_end(rt, &outer), 0);
	uint64_t top = 0;
	cr_assert_eq(pushed_left(&top), 1, "the program's own push stays");
	cr_assert_eq(top, 77);
	cr_assert_eq(lin_scope_exit(rt, &sc), 0);
	lin_runtime_free(rt);
}

/* A bracket still open on the freeing thread when the runtime is freed takes its id off
 * CUPTI's stack. */
Test(layer_live, free_pops_the_open_brackets_of_its_thread)
{
	lin_scope sc;
	lin_launch l;

	lf_layer(NULL);
	lin_runtime *rt = lf_runtime();
	lf_epoch(rt, &sc);
	cr_assert_eq(lin_launch_begin(rt, "left open", &l), 0);
	lin_runtime_free(rt);
	cr_assert_eq(pushed_left(NULL), 0, "ids left on CUPTI's stack after free");
}

/* Another tool pushed onto lineage's kind inside a bracket and did not pop: lineage's id
 * comes out from under it, the other's stays, and the misuse is recorded. */
Test(layer_live, a_foreign_push_on_top_keeps_its_place)
{
	lin_scope sc;
	lin_launch l;

	lf_layer(NULL);
	lin_runtime *rt = lf_runtime();
	lf_epoch(rt, &sc);
	cr_assert_eq(lin_launch_begin(rt, "k", &l), 0);
	cr_assert_eq(cuptiActivityPushExternalCorrelationId(
			     (CUpti_ExternalCorrelationKind)LIN_DEFAULT_EXT_KIND, 99),
		     CUPTI_SUCCESS);
	cr_assert_eq(lin_launch_end(rt, &l), -LIN_EBACKEND);
	uint64_t top = 0;
	cr_assert_eq(pushed_left(&top), 1);
	cr_assert_eq(top, 99, "the other tool's id is back on top");
	cr_assert_eq(lin_scope_exit(rt, &sc), 0);
	lin_runtime_free(rt);
}

/* ------------------------------------------------------------- events and syncs */

/* cudaEventRecord on stream 3 after a kernel there, then cudaStreamWaitEvent on stream 4
 * naming it, as the program makes them: each call's records, as CUPTI writes them. */
static void event_and_wait(lin_runtime *rt, struct lin_cl_corr *rec, struct lin_cl_corr *wait)
{
	struct lin_cl_call er = { .cbid = CUPTI_RUNTIME_TRACE_CBID_cudaEventRecord_v3020,
				  .driver_cbid = CUPTI_DRIVER_TRACE_CBID_cuEventRecord };
	struct lin_cl_call sw = { .cbid = CUPTI_RUNTIME_TRACE_CBID_cudaStreamWaitEvent_v3020,
				  .driver_cbid = CUPTI_DRIVER_TRACE_CBID_cuStreamWaitEvent };
	CUpti_ActivityCudaEvent2 e;
	CUpti_ActivitySynchronization2 s;
	uint64_t now = 0;

	lf_kernel(rt, 1);
	*rec = lin_cl_api(&er);
	memset(&e, 0, sizeof(e));
	e.kind = CUPTI_ACTIVITY_KIND_CUDA_EVENT;
	e.contextId = 1;
	e.streamId = 3;
	e.eventId = 9;
	e.cudaEventSyncId = 1001;
	lin_cl_gpu(&e, sizeof(e), *rec);
	(void)cuptiGetTimestamp(&now);
	*wait = lin_cl_api(&sw);
	memset(&s, 0, sizeof(s));
	s.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
	s.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT;
	s.start = now;
	s.end = now + 100;
	s.contextId = 1;
	s.streamId = 4;
	s.cudaEventId = 9;
	s.cudaEventSyncId = 1001;
	lin_cl_gpu(&s, sizeof(s), *wait);
}

/* By default the binding enables CUDA_EVENT and SYNCHRONIZATION: the recording and the wait
 * reach the trace with their calls' correlation ids and the one sync id; nothing is logged;
 * close disables both. */
Test(layer_live, event_and_sync_records_by_default)
{
	struct lin_cl_corr rec, wait;
	lin_scope sc;

	lf_layer(NULL);
	lin_runtime *rt = lf_runtime();
	cr_assert(lin_cl_enabled(CUPTI_ACTIVITY_KIND_CUDA_EVENT));
	cr_assert(lin_cl_enabled(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION));
	lf_epoch(rt, &sc);
	event_and_wait(rt, &rec, &wait);
	cr_assert_eq(lin_scope_exit(rt, &sc), 0);
	lin_runtime_free(rt);
	cr_assert_not(lin_cl_enabled(CUPTI_ACTIVITY_KIND_CUDA_EVENT));
	cr_assert_not(lin_cl_enabled(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION));
	cr_assert(strstr(lf_log, "not enabled") == NULL, "log: %s", lf_log);

	lf_load();
	cr_assert_eq(lf_count(LIN_REC_CUDA_EVENT), 1);
	cr_assert_eq(lf_count(LIN_REC_SYNC), 1);
	size_t e = tr_find(lf_tr, LIN_REC_CUDA_EVENT, 0);
	size_t w = tr_find(lf_tr, LIN_REC_SYNC, 0);
	cr_assert_eq(tr_u(lf_tr, e, 1), rec.runtime);
	cr_assert_eq(tr_u(lf_tr, e, 4), 3);
	cr_assert_eq(tr_u(lf_tr, e, 5), 9);
	cr_assert_eq(tr_u(lf_tr, e, 6), 1001);
	cr_assert_eq(tr_u(lf_tr, w, 1), wait.runtime);
	cr_assert_eq(tr_u(lf_tr, w, 2), LIN_SYNC_STREAM_WAIT_EVENT);
	cr_assert_eq(tr_u(lf_tr, w, 6), 4);
	cr_assert_eq(tr_u(lf_tr, w, 7), 9);
	cr_assert_eq(tr_u(lf_tr, w, 8), 1001);
	cr_assert_lt(tr_u(lf_tr, w, 3), tr_u(lf_tr, w, 4));
	char cupti[64];
	lf_header_cupti(cupti, sizeof(cupti));
	cr_assert_str_eq(cupti, "ok");
	struct lf_verdict vd;
	lf_validate(&vd);
	cr_assert_eq(vd.exit_code, 0, "a trace with event and sync records validates: %s", vd.text);
}

/* CUPTI refuses one kind, or both: each refusal is logged, collection goes on (the runtime
 * is created, its status ok, kernels collected), and the refused kind's records never come. */
static void refused_run(uint64_t refuse, bool events_expected, bool syncs_expected)
{
	struct lin_cl_config c = { .sz = sizeof(c), .refuse_kinds = refuse };
	struct lin_cl_corr rec, wait;
	char cupti[64];

	lf_layer(&c);
	lin_runtime *rt = lf_runtime();
	cr_assert_eq(lin_cl_enabled(CUPTI_ACTIVITY_KIND_CUDA_EVENT), events_expected);
	cr_assert_eq(lin_cl_enabled(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION), syncs_expected);
	event_and_wait(rt, &rec, &wait);
	lin_runtime_free(rt);
	cr_assert_eq(strstr(lf_log, "activity kind CUDA_EVENT not enabled") == NULL,
		     events_expected, "log: %s", lf_log);
	cr_assert_eq(strstr(lf_log, "activity kind SYNCHRONIZATION not enabled") == NULL,
		     syncs_expected, "log: %s", lf_log);
	lf_load();
	lf_header_cupti(cupti, sizeof(cupti));
	cr_assert_str_eq(cupti, "ok");
	cr_assert_eq(lf_count(LIN_REC_KERNEL), 1);
	cr_assert_eq(lf_count(LIN_REC_CUDA_EVENT), events_expected ? 1 : 0);
	cr_assert_eq(lf_count(LIN_REC_SYNC), syncs_expected ? 1 : 0);
}

Test(layer_live, event_and_sync_kinds_refused_are_logged)
{
	refused_run((1ull << CUPTI_ACTIVITY_KIND_CUDA_EVENT) |
			    (1ull << CUPTI_ACTIVITY_KIND_SYNCHRONIZATION),
		    false, false);
}

Test(layer_live, sync_kind_refused_alone_keeps_events)
{
	refused_run(1ull << CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, true, false);
}

/* LIN_CUPTI_NO_SYNC_RECORDS leaves both kinds off, silently: nothing was refused. */
Test(layer_live, no_sync_records_flag_leaves_both_off)
{
	struct lin_runtime_opts o;
	struct lin_cl_corr rec, wait;

	lf_layer(NULL);
	memset(&o, 0, sizeof(o));
	o.cupti_flags = LIN_CUPTI_NO_SYNC_RECORDS;
	lin_runtime *rt = lf_runtime_opts(&o);
	cr_assert_not(lin_cl_enabled(CUPTI_ACTIVITY_KIND_CUDA_EVENT));
	cr_assert_not(lin_cl_enabled(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION));
	cr_assert(lin_cl_enabled(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
	event_and_wait(rt, &rec, &wait);
	lin_runtime_free(rt);
	cr_assert(strstr(lf_log, "not enabled") == NULL, "log: %s", lf_log);
	lf_load();
	cr_assert_eq(lf_count(LIN_REC_KERNEL), 1);
	cr_assert_eq(lf_count(LIN_REC_CUDA_EVENT), 0);
	cr_assert_eq(lf_count(LIN_REC_SYNC), 0);
}
