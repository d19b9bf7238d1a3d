/* SPDX-License-Identifier: MIT */
/*
 * test_sim.c - the simulator's event recordings, stream waits and latency timestamps
 * (bench/sim, docs/simulator.md rows 18-20), read back from the trace its buffers were
 * decoded into: attach mode (lin_cupti_attach_decode), and layer mode (the live binding
 * under the test CUPTI layer). Each Test is a process of its own.
 */
#include <cupti.h>
#include <errno.h>

#include "lin_test.h"
#include "sim.h"
#include "tr_helpers.h"
#include "lineage/runtime.h"
#include "lineage/trace_format.h"

static struct tr_sink sink;
static struct tr_trace *tr;

static void setup(void)
{
	tr_sink_init(&sink);
	tr = calloc(1, sizeof(*tr));
	cr_assert_not_null(tr);
}

static void teardown(void)
{
	tr_free(tr);
	free(tr);
	tr_sink_fini(&sink);
}

TestSuite(sim, .init = setup, .fini = teardown);

/* Record fields (1-based, docs/trace-format.md). */
enum { K_CORR = 1, K_START, K_END, K_DEV, K_CTX, K_STREAM, K_GRID };
#define K_QUEUED 11
#define K_SUBMITTED 12
enum { A_DOMAIN = 1, A_CBID, A_CORR, A_START, A_END };
enum { E_CORR = 1, E_DEV, E_CTX, E_STREAM, E_EVENT, E_SYNC_ID };
enum { S_CORR = 1, S_TYPE, S_START, S_END, S_CTX, S_STREAM, S_EVENT, S_SYNC_ID };

static lin_runtime *runtime(enum lin_backend_kind backend, uint32_t cupti_flags)
{
	struct lin_runtime_opts o = { .sz = sizeof(o) };
	lin_runtime *rt = NULL;

	o.trace_write = tr_sink_write;
	o.trace_user = &sink;
	o.backend = backend;
	o.cupti_flags = cupti_flags;
	cr_assert_eq(lin_runtime_create(&o, &rt), 0);
	return rt;
}

/* An attach-mode simulator writing into a fresh runtime's trace. */
static lin_sim *sim_attach(lin_runtime **rt, uint64_t seed, bool latency)
{
	struct lin_sim_opts so = { .sz = sizeof(so), .seed = seed, .latency_timestamps = latency };
	lin_sim *s = NULL;

	*rt = runtime(LIN_BACKEND_NONE, 0);
	cr_assert_eq(lin_sim_create(*rt, &so, &s), 0);
	return s;
}

static void finish(lin_sim *s, lin_runtime *rt)
{
	cr_assert_eq(lin_sim_flush(s), 0);
	lin_runtime_free(rt);
	lin_sim_free(s);
	tr_free(tr);
	tr_load(tr, sink.data, sink.len);
	cr_assert_eq(tr->truncated_at, 0);
}

static size_t kernel_of(int64_t grid)
{
	for (size_t i = 0; i < tr->n; i++)
		if (tr_type(tr, i) == LIN_REC_KERNEL && tr_u(tr, i, K_GRID) == (uint64_t)grid)
			return i;
	cr_assert_fail("no kernel record of grid %lld", (long long)grid);
	return SIZE_MAX;
}

/* The runtime-domain API record of correlation @corr. */
static size_t api_of(uint64_t corr)
{
	for (size_t i = 0; i < tr->n; i++)
		if (tr_type(tr, i) == LIN_REC_API && tr_u(tr, i, A_DOMAIN) == LIN_API_RUNTIME &&
		    tr_u(tr, i, A_CORR) == corr)
			return i;
	cr_assert_fail("no API record of correlation %llu", (unsigned long long)corr);
	return SIZE_MAX;
}

/* ------------------------------------------------------------- events and waits */

#define BUSY 64 /* kernels on stream 1 before the recording */

/*
 * 64 kernels on stream 1, a control kernel on stream 3, a recording on stream 1, a wait
 * on stream 2 naming it, then a kernel and a memset on stream 2. The records carry the
 * calls' ids and the one sync id; the work after the wait starts after the recorded work.
 */
Test(sim, event_record_and_stream_wait_event)
{
	lin_runtime *rt;
	lin_sim *s = sim_attach(&rt, 7, false);
	int64_t busy[BUSY];

	for (int i = 0; i < BUSY; i++)
		busy[i] = lin_sim_launch_kernel(s, 1, "producer");
	int64_t control = lin_sim_launch_kernel(s, 3, "unrelated");
	uint32_t ev = lin_sim_event_record(s, 1);
	cr_assert_neq(ev, 0);
	cr_assert_eq(lin_sim_stream_wait_event(s, 2, ev), 0);
	int64_t after = lin_sim_launch_kernel(s, 2, "consumer");
	uint64_t set_start = lin_sim_memset(s, 2, 64, 0);
	struct lin_sim_stats st;
	lin_sim_get_stats(s, &st);
	cr_assert_eq(st.events, 1);
	cr_assert_eq(st.syncs, 1);
	finish(s, rt);

	cr_assert_eq(tr_count(tr, LIN_REC_CUDA_EVENT), 1);
	cr_assert_eq(tr_count(tr, LIN_REC_SYNC), 1);
	size_t e = tr_find(tr, LIN_REC_CUDA_EVENT, 0);
	size_t w = tr_find(tr, LIN_REC_SYNC, 0);
	cr_assert_eq(tr_u(tr, e, E_STREAM), 1);
	cr_assert_eq(tr_u(tr, e, E_EVENT), ev);
	cr_assert_eq(tr_u(tr, e, E_DEV), 0);
	cr_assert_eq(tr_u(tr, e, E_CTX), 1);
	uint64_t sync_id = tr_u(tr, e, E_SYNC_ID);
	cr_assert(sync_id != UINT64_MAX && sync_id != ev, "a sync id of its own");
	cr_assert_eq(tr_u(tr, api_of(tr_u(tr, e, E_CORR)), A_CBID),
		     CUPTI_RUNTIME_TRACE_CBID_cudaEventRecord_v3020);
	cr_assert_eq(tr_u(tr, w, S_TYPE), LIN_SYNC_STREAM_WAIT_EVENT);
	cr_assert_eq(tr_u(tr, w, S_STREAM), 2);
	cr_assert_eq(tr_u(tr, w, S_EVENT), ev);
	cr_assert_eq(tr_u(tr, w, S_SYNC_ID), sync_id);
	cr_assert_eq(tr_u(tr, w, S_CTX), 1);
	size_t wa = api_of(tr_u(tr, w, S_CORR));
	cr_assert_eq(tr_u(tr, wa, A_CBID), CUPTI_RUNTIME_TRACE_CBID_cudaStreamWaitEvent_v3020);
	cr_assert_eq(tr_u(tr, w, S_START), tr_u(tr, wa, A_START), "the call's own times");
	cr_assert_eq(tr_u(tr, w, S_END), tr_u(tr, wa, A_END));
	cr_assert_neq(tr_u(tr, w, S_CORR), tr_u(tr, e, E_CORR));

	uint64_t recorded_end = 0;
	for (int i = 0; i < BUSY; i++) {
		size_t k = kernel_of(busy[i]);
		if (tr_u(tr, k, K_END) > recorded_end)
			recorded_end = tr_u(tr, k, K_END);
	}
	size_t k = kernel_of(after);
	cr_assert_geq(tr_u(tr, k, K_START), recorded_end,
		      "the kernel after the wait started before the recorded work ended");
	cr_assert_geq(set_start, recorded_end);
	/* Without a wait, work on another stream does not wait: the control kernel starts
	 * before stream 1's work ends, whenever the host launched faster than the device ran
	 * (its call came before stream 1's end, less the 2 µs launch latency). */
	size_t c = kernel_of(control);
	if (tr_u(tr, api_of(tr_u(tr, c, K_CORR)), A_START) + 2000 < recorded_end)
		cr_assert_lt(tr_u(tr, c, K_START), recorded_end, "unrelated work was serialised");
	else
		cr_log_warn("host slower than the simulated device: the control is not checked");
	LIN_TEST_CHECK_LEAKS();
}

/* A wait on an event never recorded, or into a capturing stream, and a recording on a
 * capturing stream, write no record (the calls' API records only). */
Test(sim, unknown_events_and_captures_write_no_record)
{
	lin_runtime *rt;
	lin_sim *s = sim_attach(&rt, 7, false);

	lin_sim_launch_kernel(s, 1, "k");
	cr_assert_eq(lin_sim_stream_wait_event(s, 2, 1), -EINVAL, "no event 1 yet");
	cr_assert_eq(lin_sim_capture_begin(s, 5), 0);
	cr_assert_eq(lin_sim_event_record(s, 5), 0);
	uint32_t ev = lin_sim_event_record(s, 1);
	cr_assert_eq(ev, 1);
	cr_assert_eq(lin_sim_stream_wait_event(s, 5, ev), -EINVAL);
	cr_assert_eq(lin_sim_stream_wait_event(s, 2, ev + 1), -EINVAL);
	size_t n;
	lin_sim_capture_end(s, 5, NULL, 0, &n);
	finish(s, rt);
	cr_assert_eq(tr_count(tr, LIN_REC_CUDA_EVENT), 1);
	cr_assert_eq(tr_count(tr, LIN_REC_SYNC), 0);
	cr_assert_eq(tr_count(tr, LIN_REC_API), 8, "every call still made its API record");
}

/* ------------------------------------------------------------- latency timestamps */

/* Kernels of direct launches and of a graph launch. */
static void some_kernels(lin_sim *s)
{
	uint64_t nodes[4];
	struct lin_sim_node map[4];
	size_t n;
	int64_t grids[4];

	for (int i = 0; i < 8; i++)
		lin_sim_launch_kernel(s, (uint32_t)(i % 3), "k");
	cr_assert_eq(lin_sim_capture_begin(s, 9), 0);
	lin_sim_launch_kernel(s, 9, "g0");
	lin_sim_launch_kernel(s, 9, "g1");
	uint32_t g = lin_sim_capture_end(s, 9, nodes, 4, &n);
	uint32_t x = lin_sim_graph_instantiate(s, g, map, 4, &n);
	cr_assert_eq(lin_sim_graph_launch(s, x, 9, grids, 4), 2);
}

Test(sim, latency_timestamps_off_by_default)
{
	lin_runtime *rt;
	lin_sim *s = sim_attach(&rt, 11, false);

	some_kernels(s);
	finish(s, rt);
	cr_assert_eq(tr_count(tr, LIN_REC_KERNEL), 10);
	for (size_t i = 0; i < tr->n; i++)
		if (tr_type(tr, i) == LIN_REC_KERNEL)
			cr_assert(tr_is_nil(tr, i, K_QUEUED) && tr_is_nil(tr, i, K_SUBMITTED),
				  "CUPTI writes no latency timestamps unless asked");
}

/* With the option: queued inside the launch call, submitted after it, both before the
 * kernel starts; for graph kernels too. */
Test(sim, latency_timestamps_inside_the_call_and_before_start)
{
	lin_runtime *rt;
	lin_sim *s = sim_attach(&rt, 11, true);

	some_kernels(s);
	finish(s, rt);
	cr_assert_eq(tr_count(tr, LIN_REC_KERNEL), 10);
	for (size_t i = 0; i < tr->n; i++) {
		if (tr_type(tr, i) != LIN_REC_KERNEL)
			continue;
		uint64_t q = tr_u(tr, i, K_QUEUED), sub = tr_u(tr, i, K_SUBMITTED);
		uint64_t start = tr_u(tr, i, K_START);
		size_t a = api_of(tr_u(tr, i, K_CORR));
		cr_assert(q != UINT64_MAX && sub != UINT64_MAX);
		cr_assert_geq(q, tr_u(tr, a, A_START), "queued before its launch call");
		cr_assert_leq(q, tr_u(tr, a, A_END), "queued after its launch call returned");
		cr_assert_leq(q, sub);
		cr_assert_leq(sub, start, "submitted after the kernel started");
	}
}

/* The gap from queued to submitted is chosen by the seed, per kernel: the same seed gives
 * the same gaps, another seed others. */
static void gaps(uint64_t seed, uint64_t *out, size_t n)
{
	lin_runtime *rt;
	lin_sim *s = sim_attach(&rt, seed, true);

	for (size_t i = 0; i < n; i++)
		lin_sim_launch_kernel(s, 1, "k");
	finish(s, rt);
	for (size_t i = 0; i < n; i++) {
		size_t k = kernel_of((int64_t)i + 1);
		out[i] = tr_u(tr, k, K_SUBMITTED) - tr_u(tr, k, K_QUEUED);
	}
	tr_free(tr);
	sink.len = 0;
}

Test(sim, latency_gaps_follow_the_seed)
{
	uint64_t a[16], b[16], c[16];

	gaps(21, a, 16);
	gaps(21, b, 16);
	gaps(22, c, 16);
	cr_assert_arr_eq(a, b, sizeof(a), "one seed, two runs");
	cr_assert(memcmp(a, c, sizeof(a)) != 0, "two seeds, the same gaps");
	bool varied = false;
	for (int i = 1; i < 16; i++)
		varied |= a[i] != a[0];
	cr_assert(varied, "one gap for every kernel");
}

/* ------------------------------------------------------------- layer mode */

/*
 * Through the test CUPTI layer and the live binding (lineage-synth --cupti layer, epoch):
 * the recording and the wait reach the trace with the runtime calls' ids; latency
 * timestamps only when the binding asked CUPTI for them (@flags).
 */
static void layer_run(uint32_t flags)
{
	struct lin_sim_opts so = { .sz = sizeof(so),
				   .seed = 3,
				   .cupti = LIN_SIM_LAYER,
				   .driver = LIN_SIM_DRIVER_DISTINCT,
				   .latency_timestamps = true };
	lin_sim *s = NULL;

	cr_assert_eq(lin_sim_create(NULL, &so, &s), 0); /* configures the layer first */
	lin_runtime *rt = runtime(LIN_BACKEND_CUPTI, flags);
	lin_sim_set_runtime(s, rt);
	int64_t k1 = lin_sim_launch_kernel(s, 1, "producer");
	uint32_t ev = lin_sim_event_record(s, 1);
	cr_assert_eq(lin_sim_stream_wait_event(s, 2, ev), 0);
	int64_t k2 = lin_sim_launch_kernel(s, 2, "consumer");
	finish(s, rt);

	size_t e = tr_find(tr, LIN_REC_CUDA_EVENT, 0);
	size_t w = tr_find(tr, LIN_REC_SYNC, 0);
	cr_assert_neq(e, SIZE_MAX);
	cr_assert_neq(w, SIZE_MAX);
	cr_assert_eq(tr_u(tr, api_of(tr_u(tr, e, E_CORR)), A_CBID),
		     CUPTI_RUNTIME_TRACE_CBID_cudaEventRecord_v3020);
	cr_assert_eq(tr_u(tr, api_of(tr_u(tr, w, S_CORR)), A_CBID),
		     CUPTI_RUNTIME_TRACE_CBID_cudaStreamWaitEvent_v3020);
	cr_assert_eq(tr_u(tr, w, S_SYNC_ID), tr_u(tr, e, E_SYNC_ID));
	cr_assert_geq(tr_u(tr, kernel_of(k2), K_START), tr_u(tr, kernel_of(k1), K_END));
	size_t k = kernel_of(k2);
	if (flags & LIN_CUPTI_LATENCY_TIMESTAMPS)
		cr_assert(!tr_is_nil(tr, k, K_QUEUED) && !tr_is_nil(tr, k, K_SUBMITTED));
	else
		cr_assert(tr_is_nil(tr, k, K_QUEUED) && tr_is_nil(tr, k, K_SUBMITTED),
			  "CUPTI keeps them only when its client asked");
}

Test(sim, layer_mode_without_latency_timestamps) { layer_run(0); }

Test(sim, layer_mode_with_latency_timestamps) { layer_run(LIN_CUPTI_LATENCY_TIMESTAMPS); }

/* ------------------------------------------------------------- injected delays */

/* A duration, an end time and CPU work inside the call do what they say, and what the
 * simulator reports of the launch is what its records say; a plain launch is untouched. */
Test(sim, injected_duration_until_and_api_work)
{
	lin_runtime *rt;
	lin_sim *s = sim_attach(&rt, 5, true);
	struct lin_sim_launch a = { .dur_ns = 3000000 }, b = { .until_dev = 0 },
			      c = { .api_work_ns = 2000000 };

	lin_sim_launch_kernel_ex(s, 1, "long", &a);
	b.until_dev = a.end + 500000;
	lin_sim_launch_kernel_ex(s, 2, "until", &b);
	lin_sim_launch_kernel_ex(s, 3, "work", &c);
	struct lin_sim_launch d = { 0 };
	lin_sim_launch_kernel_ex(s, 4, "plain", &d);
	finish(s, rt);
	cr_assert_eq(a.end - a.start, 3000000, "dur_ns is the device duration");
	cr_assert_eq(b.end, a.end + 500000, "until_dev is the end");
	cr_assert_geq(c.api_end - c.api_start, 2000000, "the call spans its CPU work");
	cr_assert(c.queued + 500 > c.api_end && c.queued <= c.api_end, "queued after the work");
	cr_assert_eq(c.start, c.submitted + 200, "the kernel waits for the command");
	cr_assert_lt(d.queued, d.api_start + 500, "a plain call queues early");
	cr_assert_lt(d.api_end - d.api_start, 2000000, "a plain call does no work");
	cr_assert_leq(d.end - d.start, 10000, "the default duration: 1 to 10 us");
	struct lin_sim_launch *all[] = { &a, &b, &c, &d };
	for (size_t i = 0; i < 4; i++) {
		size_t k = kernel_of(all[i]->grid);
		cr_assert_eq(tr_u(tr, k, K_START), all[i]->start);
		cr_assert_eq(tr_u(tr, k, K_END), all[i]->end);
		cr_assert_eq(tr_u(tr, k, K_SUBMITTED), all[i]->submitted);
	}
	size_t ak = api_of(tr_u(tr, kernel_of(c.grid), K_CORR));
	cr_assert_eq(tr_u(tr, ak, A_END), c.api_end, "the API record ends where the work did");
}

/* A submission delay holds the kernel until 200 ns after submission; without one the
 * kernel starts 2 us after its call and submitted is held to the start. */
Test(sim, injected_submission_delay_holds_the_start)
{
	lin_runtime *rt;
	lin_sim *s = sim_attach(&rt, 5, true);
	struct lin_sim_launch a = { .submit_delay_ns = 4000000 }, b = { 0 };

	lin_sim_launch_kernel_ex(s, 1, "late", &a);
	lin_sim_launch_kernel_ex(s, 2, "plain", &b);
	finish(s, rt);
	cr_assert_geq(a.submitted - a.queued, 4000000);
	cr_assert_eq(a.start, a.submitted + 200);
	cr_assert_leq(b.submitted, b.start);
	cr_assert_lt(b.start - b.api_start, 4000000, "the other launch is not held");
}

/* With one device slot, work on another stream waits for the slot to free; submit_at_free
 * submits exactly when it frees. Without slots, streams run side by side. */
Test(sim, device_slots_serialise_streams)
{
	lin_runtime *rt;
	lin_sim *s = sim_attach(&rt, 5, true);
	struct lin_sim_launch bg = { .dur_ns = 5000000 }, t = { 0 }, u = { .submit_at_free = true };

	cr_assert_eq(lin_sim_device_free(s), 0, "no slots: no free time");
	lin_sim_set_device_slots(s, 1);
	lin_sim_launch_kernel_ex(s, 1, "bg", &bg);
	cr_assert_eq(lin_sim_device_free(s), bg.end);
	lin_sim_launch_kernel_ex(s, 2, "held", &t);
	cr_assert_eq(t.start, bg.end + 200, "the device was busy on another stream");
	bg = (struct lin_sim_launch){ .dur_ns = 5000000 };
	lin_sim_launch_kernel_ex(s, 1, "bg2", &bg);
	lin_sim_launch_kernel_ex(s, 2, "at_free", &u);
	cr_assert_eq(u.submitted, bg.end, "submitted when the slot freed");
	lin_sim_set_device_slots(s, 0);
	struct lin_sim_launch v = { .dur_ns = 5000000 }, w = { 0 };
	lin_sim_launch_kernel_ex(s, 5, "free1", &v);
	lin_sim_launch_kernel_ex(s, 6, "free2", &w);
	cr_assert_lt(w.start, v.end, "no limit: the second stream does not wait");
	finish(s, rt);
}

/* A node captured with a duration runs that long in every replay. */
Test(sim, graph_node_durations)
{
	lin_runtime *rt;
	lin_sim *s = sim_attach(&rt, 5, false);
	struct lin_sim_launch n0 = { .dur_ns = 7000000 }, n1 = { 0 };
	struct lin_sim_node map[2];
	struct lin_sim_launch out[2] = { 0 };
	uint64_t nodes[2];
	size_t n;

	lin_sim_capture_begin(s, 1);
	lin_sim_launch_kernel_ex(s, 1, "n0", &n0);
	lin_sim_launch_kernel_ex(s, 1, "n1", &n1);
	uint32_t g = lin_sim_capture_end(s, 1, nodes, 2, &n);
	uint32_t x = lin_sim_graph_instantiate(s, g, map, 2, &n);
	cr_assert_eq(lin_sim_graph_launch_ex(s, x, 1, NULL, 0, out, 2), 2);
	finish(s, rt);
	cr_assert_eq(out[0].end - out[0].start, 7000000);
	cr_assert_leq(out[1].end - out[1].start, 10000);
	cr_assert_eq(out[1].start, out[0].end + 200, "the second node waits for the first");
}
