/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <pthread.h>

#include "rt_fixture.h"
#include "tracefmt.h"

/* Every runtime record type, written by the runtime itself, read back. */
Test(trace, runtime_round_trip_of_every_record_type)
{
	struct rtfix f;
	rtfix_open(&f, LIN_RT_NO_WRITER_THREAD, NULL);
	lin_scope rs, es, bad;
	uint64_t req = rtfix_request(&f, &rs), ep;
	cr_assert_eq(lin_epoch_declare(f.rt, NULL, &ep), 0);
	cr_assert_eq(lin_scope_enter(f.rt, ep, &es), 0);
	lin_token tok;
	cr_assert_eq(lin_token_capture(f.rt, &tok), 0);
	lin_launch l;
	lin_launch_begin(f.rt, "k", &l);
	lin_launch_end(f.rt, &l);
	lin_epoch_reissue(f.rt, ep, LIN_REISSUE_RETRY, NULL);
	/* A stale token from text cannot be adopted late: a misuse record. */
	char text[LIN_TOKEN_TEXT_MAX];
	lin_token parsed;
	cr_assert_eq(lin_token_format(&tok, text, sizeof(text)), 0);
	cr_assert_eq(lin_token_parse(text, &parsed), 0);
	cr_assert_eq(lin_token_adopt(f.rt, &parsed, &bad), -LIN_ESTALE_TOKEN);
	lin_scope_exit(f.rt, &es);
	lin_scope_exit(f.rt, &rs);
	lin_epoch_retire(f.rt, ep);
	lin_request_end(f.rt, req);
	struct trace *t = rtfix_close(&f);
	static const struct {
		uint64_t type;
		size_t nfields;
	} want[] = {
		{ LIN_REC_REQUEST_BEGIN, LIN_REC_NFIELDS_REQUEST_BEGIN },
		{ LIN_REC_REQUEST_END, LIN_REC_NFIELDS_REQUEST_END },
		{ LIN_REC_EPOCH_DECLARE, LIN_REC_NFIELDS_EPOCH_DECLARE },
		{ LIN_REC_EPOCH_REISSUE, LIN_REC_NFIELDS_EPOCH_REISSUE },
		{ LIN_REC_EPOCH_RETIRE, LIN_REC_NFIELDS_EPOCH_RETIRE },
		{ LIN_REC_TOKEN_CAPTURE, LIN_REC_NFIELDS_TOKEN_CAPTURE },
		{ LIN_REC_TOKEN_ADOPT, LIN_REC_NFIELDS_TOKEN_ADOPT },
		{ LIN_REC_SCOPE_CLOSE, LIN_REC_NFIELDS_SCOPE_CLOSE },
		{ LIN_REC_MISUSE, LIN_REC_NFIELDS_MISUSE },
		{ LIN_REC_LAUNCH, LIN_REC_NFIELDS_LAUNCH },
		{ LIN_REC_LAUNCH_END, LIN_REC_NFIELDS_LAUNCH_END },
		{ LIN_REC_STRING, LIN_REC_NFIELDS_STRING },
		{ LIN_REC_TRACE_END, LIN_REC_NFIELDS_TRACE_END },
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const msgpack_object *r = trace_nth(t, want[i].type, 0);
		cr_assert_not_null(r, "record type %llu written", (unsigned long long)want[i].type);
		cr_assert_eq(r->via.array.size, want[i].nfields + 1, "type %llu field count",
			     (unsigned long long)want[i].type);
	}
	/* Host timestamps are monotonic per thread, and within the run. */
	uint64_t prev = 0;
	const msgpack_object *hs = trace_hdr(t, "start_host_ns");
	for (size_t i = 0; i < t->n; i++) {
		uint64_t ty = rec_type(&t->rec[i]);
		if (ty == LIN_REC_STRING)
			continue;
		uint64_t ns = rec_u(&t->rec[i], 1);
		cr_assert_geq(ns, hs->via.u64, "record %zu before the trace start", i);
		cr_assert_geq(ns, prev, "record %zu goes back in time", i);
		prev = ns;
	}
	rtfix_fini(&f);
	LIN_TEST_CHECK_LEAKS();
}

/* The encoders for GPU, graph, loss and truth records produce the documented arity. */
Test(trace, encoders_write_documented_field_counts)
{
	msgpack_sbuffer sb;
	msgpack_sbuffer_init(&sb);
	msgpack_packer pk;
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	struct lin_tf_header h = { .format = LIN_TRACE_FORMAT_NAME,
				   .writer = "t",
				   .host = "h",
				   .pid = 1,
				   .host_clock_source = "tsc",
				   .backend = "none" };
	lin_tf_header(&pk, &h);
	struct lin_tf_kernel k = { .correlation = 7, .start_dev = 10, .end_dev = 20, .grid_id = 3 };
	struct lin_tf_memop m = { .correlation = 8, .bytes = 4096 };
	struct lin_tf_api a = { .domain = LIN_API_RUNTIME, .cbid = 505, .correlation = 7 };
	uint64_t reqs[2] = { 1, 2 };
	lin_tf_ext_correlation(&pk, 5, 99, 7);
	lin_tf_api(&pk, &a);
	lin_tf_kernel(&pk, &k);
	lin_tf_memcpy(&pk, &m);
	lin_tf_memset(&pk, &m);
	lin_tf_graph_trace(&pk, 7, 1, 2, 0, 1, 2, 3);
	lin_tf_graph_node(&pk, LIN_NIL, LIN_NIL, 1, 2, 99, 1, LIN_NODE_ORIGIN_CAPTURE);
	lin_tf_graph_node_clone(&pk, 2, 3, 1, 4);
	lin_tf_graph_exec(&pk, 5, 6, 1, 4);
	lin_tf_graph_launch(&pk, 5, 6, 4, 100, 1, 99, 1, 7);
	lin_tf_dropped(&pk, LIN_DROP_CUPTI_RECORDS, 12, LIN_NIL, "x");
	lin_tf_clock(&pk, 1, 2, 1);
	lin_tf_graph_node_update(&pk, 5, 6, 2, 99, 2);
	lin_tf_truth(&pk, LIN_REC_KERNEL, 3, reqs, 2, LIN_NIL);
	lin_tf_graph_edge(&pk, 5, 501, 502);
	lin_tf_launch_cause(&pk, LIN_REC_KERNEL, 3, LIN_TC_AMBIGUOUS,
			    1u << LIN_TC_SUBMIT_DELAY | 1u << LIN_TC_DEVICE_BUSY, 10, LIN_NIL, 5,
			    LIN_NIL);
	struct trace t;
	cr_assert_eq(trace_load_mem(&t, sb.data, sb.size), 0);
	static const size_t want[][2] = {
		{ LIN_REC_EXT_CORRELATION, LIN_REC_NFIELDS_EXT_CORRELATION },
		{ LIN_REC_API, LIN_REC_NFIELDS_API },
		{ LIN_REC_KERNEL, LIN_REC_NFIELDS_KERNEL },
		{ LIN_REC_MEMCPY, LIN_REC_NFIELDS_MEMCPY },
		{ LIN_REC_MEMSET, LIN_REC_NFIELDS_MEMSET },
		{ LIN_REC_GRAPH_TRACE, LIN_REC_NFIELDS_GRAPH_TRACE },
		{ LIN_REC_GRAPH_NODE, LIN_REC_NFIELDS_GRAPH_NODE },
		{ LIN_REC_GRAPH_NODE_CLONE, LIN_REC_NFIELDS_GRAPH_NODE_CLONE },
		{ LIN_REC_GRAPH_EXEC, LIN_REC_NFIELDS_GRAPH_EXEC },
		{ LIN_REC_GRAPH_LAUNCH, LIN_REC_NFIELDS_GRAPH_LAUNCH },
		{ LIN_REC_DROPPED, LIN_REC_NFIELDS_DROPPED },
		{ LIN_REC_CLOCK, LIN_REC_NFIELDS_CLOCK },
		{ LIN_REC_GRAPH_NODE_UPDATE, LIN_REC_NFIELDS_GRAPH_NODE_UPDATE },
		{ LIN_REC_TRUTH, LIN_REC_NFIELDS_TRUTH },
		{ LIN_REC_GRAPH_EDGE, LIN_REC_NFIELDS_GRAPH_EDGE },
		{ LIN_REC_LAUNCH_CAUSE, LIN_REC_NFIELDS_LAUNCH_CAUSE },
	};
	cr_assert_eq(t.n, sizeof(want) / sizeof(want[0]));
	for (size_t i = 0; i < t.n; i++) {
		cr_assert_eq(rec_type(&t.rec[i]), want[i][0]);
		cr_assert_eq(t.rec[i].via.array.size, want[i][1] + 1, "type %zu", want[i][0]);
	}
	const msgpack_object *kr = trace_nth(&t, LIN_REC_KERNEL, 0);
	cr_assert(rec_nil(kr, 8) && rec_nil(kr, 9), "not a graph kernel: graph ids are nil");
	cr_assert(rec_nil(kr, 11) && rec_nil(kr, 12), "queued/submitted not collected: nil");
	const msgpack_object *lc = trace_nth(&t, LIN_REC_LAUNCH_CAUSE, 0);
	cr_assert(!rec_nil(lc, 5) && rec_nil(lc, 6) && !rec_nil(lc, 7), "end_ns nil, the rest not");
	trace_free(&t);
	msgpack_sbuffer_destroy(&sb);
}

/* A trace cut at any byte keeps every record before the cut. */
Test(trace, cut_at_any_byte_keeps_complete_records)
{
	struct rtfix f;
	rtfix_open(&f, LIN_RT_NO_WRITER_THREAD, NULL);
	lin_scope rs;
	rtfix_request(&f, &rs);
	for (int i = 0; i < 20; i++) {
		uint64_t ep;
		lin_epoch_declare(f.rt, NULL, &ep);
	}
	lin_scope_exit(f.rt, &rs);
	struct trace *full = rtfix_close(&f);
	size_t prev = 0;
	for (size_t cut = 1; cut < f.out.n; cut++) {
		struct trace t;
		if (trace_load_mem(&t, f.out.p, cut) != 0)
			continue; /* cut inside the header */
		cr_assert_geq(t.n, prev, "fewer records at a longer cut");
		cr_assert_leq(t.n, full->n);
		for (size_t i = 0; i < t.n; i++)
			cr_assert(msgpack_object_equal(t.rec[i], full->rec[i]), "record %zu differs", i);
		prev = t.n;
		trace_free(&t);
	}
	cr_assert_eq(prev + 1, full->n, "the last cut loses only the last record");
	rtfix_fini(&f);
}

/* With a tiny buffer and no writer, overflow is counted and written as loss. */
Test(trace, full_thread_buffer_drops_and_reports)
{
	struct membuf m = { 0 };
	lin_runtime *rt;
	struct lin_runtime_opts o = { .sz = sizeof(o),
				      .trace_write = membuf_write,
				      .trace_user = &m,
				      .flags = LIN_RT_NO_WRITER_THREAD,
				      .thread_buffer_events = 64 };
	cr_assert_eq(lin_runtime_create(&o, &rt), 0);
	uint64_t req;
	lin_request_begin(rt, NULL, &req);
	lin_scope s;
	for (int i = 0; i < 100; i++) {
		lin_scope_enter(rt, req, &s); /* adopt + close: 2 events each */
		lin_scope_exit(rt, &s);
	}
	struct lin_runtime_stats st = { .sz = sizeof(st) };
	lin_runtime_get_stats(rt, &st);
	cr_assert_eq(st.events, 201);
	cr_assert_eq(st.events_dropped, 201 - 64, "the buffer holds 64 events");
	lin_runtime_free(rt);
	struct trace t;
	cr_assert_eq(trace_load_mem(&t, m.p, m.n), 0);
	const msgpack_object *d = trace_nth(&t, LIN_REC_DROPPED, 0);
	cr_assert_not_null(d, "the loss is in the trace");
	cr_assert_eq(rec_u(d, 1), LIN_DROP_HOST_EVENTS);
	cr_assert_eq(rec_u(d, 2), 201 - 64);
	cr_assert_eq(t.n, 64 + 2, "the kept events, one dropped record and the end");
	const msgpack_object *end = &t.rec[t.n - 1];
	cr_assert_eq(rec_type(end), LIN_REC_TRACE_END, "the trace is closed");
	cr_assert_eq(rec_u(end, 2), 201 - 64, "the end record counts the drops");
	trace_free(&t);
	free(m.p);
	LIN_TEST_CHECK_LEAKS();
}

static int failing_write(const void *buf, size_t len, void *user)
{
	(void)buf;
	(void)len;
	int *calls = user;
	return ++*calls > 1 ? -ENOSPC : 0;
}

Test(trace, output_failure_is_reported_and_never_crashes)
{
	int calls = 0;
	lin_runtime *rt;
	struct lin_runtime_opts o = { .sz = sizeof(o),
				      .trace_write = failing_write,
				      .trace_user = &calls,
				      .flags = LIN_RT_NO_WRITER_THREAD };
	cr_assert_eq(lin_runtime_create(&o, &rt), 0, "the header was accepted");
	uint64_t req;
	lin_request_begin(
		rt, &(struct lin_request_opts){ .sz = sizeof(struct lin_request_opts), .name = "n" },
		&req);
	cr_assert_eq(lin_runtime_flush(rt), -LIN_ETRACE);
	lin_request_begin(rt, NULL, &req);
	cr_assert_eq(lin_runtime_flush(rt), -LIN_ETRACE, "stays failed");
	cr_assert_eq(calls, 2, "no writes after the failure");
	lin_runtime_free(rt);
	LIN_TEST_CHECK_LEAKS();
}

Test(trace, lean_timestamps_leave_capture_and_close_untimed)
{
	struct rtfix f;
	rtfix_open(&f, LIN_RT_NO_WRITER_THREAD | LIN_RT_LEAN_TIMESTAMPS, NULL);
	lin_scope rs, s;
	rtfix_request(&f, &rs);
	lin_token tok;
	cr_assert_eq(lin_token_capture(f.rt, &tok), 0);
	cr_assert_eq(lin_token_adopt(f.rt, &tok, &s), 0);
	cr_assert_eq(lin_scope_exit(f.rt, &s), 0);
	lin_scope_exit(f.rt, &rs);
	struct trace *t = rtfix_close(&f);
	cr_assert(rec_nil(trace_nth(t, LIN_REC_TOKEN_CAPTURE, 0), 1), "capture time is nil");
	cr_assert(rec_nil(trace_nth(t, LIN_REC_SCOPE_CLOSE, 0), 1), "close time is nil");
	cr_assert(!rec_nil(trace_nth(t, LIN_REC_TOKEN_ADOPT, 0), 1), "adopts keep their time");
	rtfix_fini(&f);
}

/* ------------------------------------------------------------------ the writer's fast path */

#include "tracefmt_fast.h"

/* Values at every msgpack width edge, nil and zero included. */
static uint64_t edge(uint64_t *x)
{
	static const uint64_t v[] = { 0,           1,      127,   128,           255,
				      256,         65535,  65536, 0xffffffffull, 0x100000000ull,
				      LIN_NIL - 1, LIN_NIL };
	*x = *x * 6364136223846793005ull + 1442695040888963407ull;
	uint64_t r = *x >> 33;
	return (r & 1) ? v[(r >> 1) % (sizeof(v) / sizeof(v[0]))] : *x;
}

/* Each fast encoder writes exactly the bytes of its lin_tf_* namesake (msgpack-c's packer
 * through its callback), for values at every width edge: the trace format has one
 * encoding, whichever path writes it. */
Test(trace, fast_encoders_write_the_same_bytes)
{
	uint64_t x = 42;
	for (int i = 0; i < 20000; i++) {
		uint64_t a[9];
		for (int k = 0; k < 9; k++)
			a[k] = edge(&x);
		uint32_t u = (uint32_t)a[2], d = (uint32_t)a[8];
		msgpack_sbuffer sb;
		msgpack_packer pk;
		msgpack_sbuffer_init(&sb);
		msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
		char fast[5 * LIN_TFAST_MAX];
		struct lin_tfast f = { fast };
		switch (i % 5) {
		case 0:
			lin_tf_token_capture(&pk, a[0], a[1], u, a[3], a[4], a[5]);
			lin_tfast_token_capture(&f, a[0], a[1], u, a[3], a[4], a[5]);
			break;
		case 1:
			lin_tf_token_adopt_late(&pk, a[0], a[1], u, a[3], a[4], a[5], a[6], d,
						(uint32_t)a[7]);
			lin_tfast_token_adopt(&f, a[0], a[1], u, a[3], a[4], a[5], a[6], d,
					      (uint32_t)a[7]);
			break;
		case 2:
			lin_tf_scope_close(&pk, a[0], a[1], u, a[3], d);
			lin_tfast_scope_close(&f, a[0], a[1], u, a[3], d);
			break;
		case 3:
			lin_tf_launch_late(&pk, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], u);
			lin_tfast_launch(&f, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], u);
			break;
		default:
			lin_tf_launch_end(&pk, a[0], a[1], a[2]);
			lin_tfast_launch_end(&f, a[0], a[1], a[2]);
			break;
		}
		size_t n = (size_t)(f.p - fast);
		cr_assert_leq(n, LIN_TFAST_MAX);
		cr_assert_eq(n, sb.size, "record %d: %zu bytes, packer %zu", i % 5, n, sb.size);
		cr_assert_eq(memcmp(fast, sb.data, n), 0, "record %d differs", i % 5);
		msgpack_sbuffer_destroy(&sb);
	}
}
