/* SPDX-License-Identifier: MIT */
/*
 * test_decode.c - the CUPTI decoder on buffers of real CUPTI 13 record structs, walked by
 * cuptiActivityGetNextRecord (which needs no driver). No runtime, no GPU.
 */
#include <cupti.h>
#include <errno.h>
#include <stdio.h>

#include "lin_test.h"
#include "decode.h"
#include "tr_helpers.h"
#include "tracefmt.h"
#include "lineage/trace_format.h"

#define EPOCH_KIND CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2

/* ------------------------------------------------------------------ fixture */

static msgpack_sbuffer sbuf;
static msgpack_packer pk;
static struct tr_trace *tr;
static struct lin_cupti_decode_stats st;
static const char *interned[64];
static size_t n_interned;

static uint64_t test_intern(void *user, const char *s)
{
	(void)user;
	for (size_t i = 0; i < n_interned; i++)
		if (strcmp(interned[i], s) == 0)
			return i + 1;
	if (n_interned == 64)
		return 0;
	interned[n_interned++] = s;
	lin_tf_string(&pk, n_interned, s, strlen(s));
	return n_interned;
}

static struct lin_cupti_decoder dec = { .pk = &pk, .intern = test_intern };

static void setup(void)
{
	msgpack_sbuffer_init(&sbuf);
	msgpack_packer_init(&pk, &sbuf, msgpack_sbuffer_write);
	tr = calloc(1, sizeof(*tr));
	cr_assert_not_null(tr);
	memset(&st, 0, sizeof(st));
	st.sz = sizeof(st);
	n_interned = 0;
}

static void teardown(void)
{
	tr_free(tr);
	free(tr);
	msgpack_sbuffer_destroy(&sbuf);
}

static void decode(struct tr_buf *b, int expect)
{
	cr_assert_eq(lin_cupti_decode_buffer(&dec, b->data, b->used, &st), expect);
}

static void load(void)
{
	tr_free(tr);
	tr_load(tr, sbuf.data, sbuf.size);
	cr_assert_eq(tr->truncated_at, 0, "output must hold only complete objects");
}

/* ------------------------------------------------------------------ record makers */

static void add_ext(struct tr_buf *b, uint32_t kind, uint64_t ext, uint32_t corr)
{
	CUpti_ActivityExternalCorrelation e;

	memset(&e, 0, sizeof(e));
	e.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
	e.externalKind = (CUpti_ExternalCorrelationKind)kind;
	e.externalId = ext;
	e.correlationId = corr;
	tr_put(b, &e, sizeof(e));
}

static void add_api(struct tr_buf *b, CUpti_ActivityKind kind, uint32_t cbid, uint32_t corr,
		    uint32_t pid, uint32_t tid)
{
	CUpti_ActivityAPI a;

	memset(&a, 0, sizeof(a));
	a.kind = kind;
	a.cbid = cbid;
	a.start = 1000 + corr;
	a.end = 2000 + corr;
	a.processId = pid;
	a.threadId = tid;
	a.correlationId = corr;
	tr_put(b, &a, sizeof(a));
}

static void add_kernel(struct tr_buf *b, uint32_t corr, int64_t grid, uint32_t graph, uint64_t node,
		       const char *name)
{
	CUpti_ActivityKernel10 k;

	memset(&k, 0, sizeof(k));
	k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	k.correlationId = corr;
	k.start = 5000 + (uint64_t)grid;
	k.end = 6000 + (uint64_t)grid;
	k.deviceId = 0;
	k.contextId = 1;
	k.streamId = 7;
	k.gridId = grid;
	k.graphId = graph;
	k.graphNodeId = node;
	k.name = name;
	k.channelID = CUPTI_INVALID_CHANNEL_ID;
	tr_put(b, &k, sizeof(k));
}

/* A cudaEventRecord's record: event @event recorded on @stream, sync id @sync. */
static void add_event(struct tr_buf *b, uint32_t corr, uint32_t stream, uint32_t event, uint64_t sync)
{
	CUpti_ActivityCudaEvent2 e;

	memset(&e, 0, sizeof(e));
	e.kind = CUPTI_ACTIVITY_KIND_CUDA_EVENT;
	e.correlationId = corr;
	e.contextId = 1;
	e.streamId = stream;
	e.eventId = event;
	e.deviceId = 2;
	e.cudaEventSyncId = sync;
	tr_put(b, &e, sizeof(e));
}

/* A synchronization record of @type on @stream naming event @event, sync id @sync. */
static void add_sync(struct tr_buf *b, uint32_t type, uint32_t corr, uint32_t stream,
		     uint32_t event, uint64_t sync)
{
	CUpti_ActivitySynchronization2 s;

	memset(&s, 0, sizeof(s));
	s.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
	s.type = (CUpti_ActivitySynchronizationType)type;
	s.start = 7000 + corr;
	s.end = 7500 + corr;
	s.correlationId = corr;
	s.contextId = 1;
	s.streamId = stream;
	s.cudaEventId = event;
	s.cudaEventSyncId = sync;
	tr_put(b, &s, sizeof(s));
}

/* Kernel record fields (1-based). */
enum {
	K_CORR = 1,
	K_START,
	K_END,
	K_DEV,
	K_CTX,
	K_STREAM,
	K_GRID,
	K_GRAPH,
	K_NODE,
	K_NAME,
	K_QUEUED,
	K_SUBMITTED,
	K_DEVLAUNCH
};
/* API record fields. */
enum { A_DOMAIN = 1, A_CBID, A_CORR, A_START, A_END, A_PID, A_TID, A_RET };
/* cuda_event and sync record fields. */
enum { E_CORR = 1, E_DEV, E_CTX, E_STREAM, E_EVENT, E_SYNC_ID };
enum { S_CORR = 1, S_TYPE, S_START, S_END, S_CTX, S_STREAM, S_EVENT, S_SYNC_ID };

/* Map correlation -> external id through the decoded ext_correlation records (kind 5). */
static uint64_t ext_of(uint64_t corr)
{
	uint64_t found = 0;

	for (size_t i = 0; i < tr->n; i++)
		if (tr_type(tr, i) == LIN_REC_EXT_CORRELATION && tr_u(tr, i, 1) == EPOCH_KIND &&
		    tr_u(tr, i, 3) == corr) {
			cr_assert_eq(found, 0, "one ext record per correlation expected");
			found = tr_u(tr, i, 2);
		}
	return found;
}

TestSuite(cupti_decode, .init = setup, .fini = teardown);

/* ------------------------------------------------------------------ tests */

Test(cupti_decode, direct_launch)
{
	static struct tr_buf b;

	b.used = 0;
	add_ext(&b, EPOCH_KIND, 7, 100);
	add_api(&b, CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000,
		100, 4242, 77);
	add_kernel(&b, 100, 11, 0, 0, "k_direct");
	decode(&b, 0);
	load();

	cr_assert_eq(st.records, 3);
	cr_assert_eq(st.ext_correlation, 1);
	cr_assert_eq(st.api, 1);
	cr_assert_eq(st.launch_api, 1);
	cr_assert_eq(st.kernels, 1);
	cr_assert_eq(tr_count(tr, LIN_REC_STRING), 1);

	size_t e = tr_find(tr, LIN_REC_EXT_CORRELATION, 0);
	cr_assert_eq(tr_nfields(tr, e), LIN_REC_NFIELDS_EXT_CORRELATION);
	cr_assert_eq(tr_u(tr, e, 1), EPOCH_KIND);
	cr_assert_eq(tr_u(tr, e, 2), 7);
	cr_assert_eq(tr_u(tr, e, 3), 100);

	size_t a = tr_find(tr, LIN_REC_API, 0);
	cr_assert_eq(tr_nfields(tr, a), LIN_REC_NFIELDS_API);
	cr_assert_eq(tr_u(tr, a, A_DOMAIN), LIN_API_RUNTIME);
	cr_assert_eq(tr_u(tr, a, A_CBID), 505);
	cr_assert_eq(tr_u(tr, a, A_CORR), 100);
	cr_assert_eq(tr_u(tr, a, A_START), 1100);
	cr_assert_eq(tr_u(tr, a, A_END), 2100);
	cr_assert_eq(tr_u(tr, a, A_PID), 4242);
	cr_assert_eq(tr_u(tr, a, A_TID), 77);
	cr_assert_eq(tr_i(tr, a, A_RET), 0);

	size_t k = tr_find(tr, LIN_REC_KERNEL, 0);
	cr_assert_eq(tr_nfields(tr, k), LIN_REC_NFIELDS_KERNEL);
	cr_assert_eq(tr_u(tr, k, K_CORR), 100);
	cr_assert_eq(tr_u(tr, k, K_START), 5011);
	cr_assert_eq(tr_u(tr, k, K_END), 6011);
	cr_assert_eq(tr_u(tr, k, K_DEV), 0);
	cr_assert_eq(tr_u(tr, k, K_CTX), 1);
	cr_assert_eq(tr_u(tr, k, K_STREAM), 7);
	cr_assert_eq(tr_u(tr, k, K_GRID), 11);
	cr_assert(tr_is_nil(tr, k, K_GRAPH));
	cr_assert(tr_is_nil(tr, k, K_NODE));
	cr_assert(tr_is_nil(tr, k, K_QUEUED), "queued not collected must be nil, not 0");
	cr_assert(tr_is_nil(tr, k, K_SUBMITTED));
	cr_assert_eq(tr_field(tr, k, K_DEVLAUNCH)->type, MSGPACK_OBJECT_BOOLEAN);
	cr_assert_not(tr_field(tr, k, K_DEVLAUNCH)->via.boolean);

	/* The name's string record precedes the kernel that refers to it. */
	size_t s = tr_find(tr, LIN_REC_STRING, 0);
	char name[64];
	cr_assert_lt(s, k);
	cr_assert(tr_string(tr, tr_u(tr, k, K_NAME), name, sizeof(name)));
	cr_assert_str_eq(name, "k_direct");
	cr_assert_eq(ext_of(tr_u(tr, k, K_CORR)), 7);
}

Test(cupti_decode, unknown_values_stay_nil)
{
	static struct tr_buf b;
	CUpti_ActivityKernel10 k;

	b.used = 0;
	memset(&k, 0, sizeof(k));
	k.kind = CUPTI_ACTIVITY_KIND_KERNEL; /* the serialized kind uses the same struct */
	k.correlationId = CUPTI_CORRELATION_ID_UNKNOWN;
	k.start = CUPTI_TIMESTAMP_UNKNOWN;
	k.end = CUPTI_TIMESTAMP_UNKNOWN;
	k.gridId = CUPTI_GRID_ID_UNKNOWN;
	tr_put(&b, &k, sizeof(k));
	decode(&b, 0);
	load();

	size_t i = tr_find(tr, LIN_REC_KERNEL, 0);
	cr_assert_neq(i, SIZE_MAX);
	for (int f = K_CORR; f <= K_SUBMITTED; f++) {
		if (f == K_DEV || f == K_CTX || f == K_STREAM)
			continue;
		cr_assert(tr_is_nil(tr, i, (size_t)f), "field %d must be nil", f);
	}
	cr_assert_eq(tr_count(tr, LIN_REC_STRING), 0, "no name: no string record");
}

Test(cupti_decode, latency_timestamps_when_collected)
{
	static struct tr_buf b;
	CUpti_ActivityKernel10 k;

	b.used = 0;
	memset(&k, 0, sizeof(k));
	k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	k.correlationId = 9;
	k.queued = 111;
	k.submitted = 222;
	tr_put(&b, &k, sizeof(k));
	decode(&b, 0);
	load();
	size_t i = tr_find(tr, LIN_REC_KERNEL, 0);
	cr_assert_eq(tr_u(tr, i, K_QUEUED), 111);
	cr_assert_eq(tr_u(tr, i, K_SUBMITTED), 222);
}

Test(cupti_decode, pool_thread_without_and_with_repush)
{
	static struct tr_buf b;

	b.used = 0;
	/* Worker that did not re-push: API + kernel, no ext record. */
	add_api(&b, CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
		300, 1, 2001);
	add_kernel(&b, 300, 30, 0, 0, "k_pool");
	/* Worker that re-pushed epoch 2002 around its launch. */
	add_ext(&b, EPOCH_KIND, 2002, 301);
	add_api(&b, CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
		301, 1, 2001);
	add_kernel(&b, 301, 31, 0, 0, "k_pool");
	decode(&b, 0);
	load();

	cr_assert_eq(st.kernels, 2, "a kernel with no ext record is still decoded");
	cr_assert_eq(tr_count(tr, LIN_REC_STRING), 1, "one name, interned once");
	cr_assert_eq(ext_of(300), 0);
	cr_assert_eq(ext_of(301), 2002);
	size_t k0 = tr_find(tr, LIN_REC_KERNEL, 0), k1 = tr_find(tr, LIN_REC_KERNEL, 1);
	cr_assert_eq(tr_u(tr, k0, K_NAME), tr_u(tr, k1, K_NAME));
}

/* Graph captured under one request; four replays launched from four threads. */
Test(cupti_decode, graph_replayed_from_other_threads)
{
	static struct tr_buf b;
	const uint64_t node[2] = { 0x500000001ull, 0x500000002ull };

	b.used = 0;
	for (uint32_t r = 0; r < 4; r++) {
		add_ext(&b, EPOCH_KIND, 4001 + r, 400 + r);
		add_api(&b, CUPTI_ACTIVITY_KIND_RUNTIME,
			CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000, 400 + r, 1, 3000 + r);
		add_api(&b, CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch,
			900 + r, 1, 3000 + r);
		for (int n = 0; n < 2; n++)
			add_kernel(&b, 400 + r, 40 + 2 * r + n, 5, node[n], "k_graph");
	}
	decode(&b, 0);
	load();

	cr_assert_eq(st.kernels, 8);
	cr_assert_eq(st.graph_kernels, 8);
	cr_assert_eq(st.launch_api, 8, "cudaGraphLaunch and cuGraphLaunch are launch APIs");
	size_t per_node[2] = { 0, 0 };
	for (size_t i = 0; i < tr->n; i++) {
		if (tr_type(tr, i) != LIN_REC_KERNEL)
			continue;
		uint64_t corr = tr_u(tr, i, K_CORR);
		cr_assert_eq(ext_of(corr), 4001 + (corr - 400), "replay epoch via correlation");
		cr_assert_eq(tr_u(tr, i, K_GRAPH), 5);
		per_node[tr_u(tr, i, K_NODE) == node[1]]++;
	}
	cr_assert_eq(per_node[0], 4);
	cr_assert_eq(per_node[1], 4);
	/* Each API record keeps its launching thread. */
	for (uint32_t r = 0; r < 4; r++)
		cr_assert_eq(tr_u(tr, tr_find(tr, LIN_REC_API, 2 * r), A_TID), 3000 + r);
}

Test(cupti_decode, one_replay_many_kernels)
{
	static struct tr_buf b;

	b.used = 0;
	add_ext(&b, EPOCH_KIND, 77, 500);
	add_api(&b, CUPTI_ACTIVITY_KIND_RUNTIME,
		CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_ptsz_v10000, 500, 1, 1);
	for (int n = 0; n < 64; n++)
		add_kernel(&b, 500, 100 + n, 9, 0x900000000ull + (uint64_t)n, "k_fan");
	decode(&b, 0);
	load();
	cr_assert_eq(tr_count(tr, LIN_REC_KERNEL), 64);
	for (size_t i = 0; i < tr->n; i++)
		if (tr_type(tr, i) == LIN_REC_KERNEL)
			cr_assert_eq(ext_of(tr_u(tr, i, K_CORR)), 77);
}

/* Kernels delivered in a buffer before the ext/API records of their launches. */
Test(cupti_decode, kernels_first)
{
	static struct tr_buf kb, ab;

	kb.used = ab.used = 0;
	add_kernel(&kb, 100, 1, 0, 0, "k_a");
	add_kernel(&kb, 200, 2, 5, 0x500000001ull, "k_b");
	add_kernel(&kb, 200, 3, 5, 0x500000002ull, "k_b");
	add_ext(&ab, EPOCH_KIND, 7, 100);
	add_api(&ab, CUPTI_ACTIVITY_KIND_RUNTIME, 505, 100, 1, 1);
	add_ext(&ab, EPOCH_KIND, (1ull << 40) + 1, 200);
	add_api(&ab, CUPTI_ACTIVITY_KIND_RUNTIME, 311, 200, 1, 1);
	decode(&kb, 0);
	decode(&ab, 0);
	load();

	cr_assert_eq(st.buffers, 2);
	cr_assert_lt(tr_find(tr, LIN_REC_KERNEL, 2), tr_find(tr, LIN_REC_EXT_CORRELATION, 0),
		     "records are written in arrival order");
	cr_assert_eq(ext_of(100), 7);
	cr_assert_eq(ext_of(200), (1ull << 40) + 1, "64-bit external ids survive");
	size_t joined = 0;
	for (size_t i = 0; i < tr->n; i++)
		if (tr_type(tr, i) == LIN_REC_KERNEL && ext_of(tr_u(tr, i, K_CORR)) != 0)
			joined++;
	cr_assert_eq(joined, 3);
}

/* A record CUPTI cannot step over ends the walk; the loss is written, nothing crashes. */
/* The n-th dropped record of @source, or SIZE_MAX. */
static size_t dropped_of(uint64_t source, size_t nth)
{
	for (size_t i = 0; i < tr->n; i++)
		if (tr_type(tr, i) == LIN_REC_DROPPED && tr_u(tr, i, 1) == source && nth-- == 0)
			return i;
	return SIZE_MAX;
}

static bool reason_has(size_t d, const char *text)
{
	const msgpack_object *o = tr_field(tr, d, 4);
	char buf[256];

	if (o->type != MSGPACK_OBJECT_STR || o->via.str.size >= sizeof(buf))
		return false;
	memcpy(buf, o->via.str.ptr, o->via.str.size);
	buf[o->via.str.size] = '\0';
	return strstr(buf, text) != NULL;
}

/* One unknown record followed by five kernels: nothing can step over it, so the rest of
 * the buffer is lost, and said to be: count 1 (sound: the unknown record), the bytes and
 * the most records they could hold in the reason. */
Test(cupti_decode, unknown_kind_loses_the_rest_and_says_so)
{
	static struct tr_buf b;
	uint64_t bogus[4] = { 0x1234, 0, 0, 0 };

	b.used = 0;
	add_kernel(&b, 1, 1, 0, 0, "k_before");
	tr_put(&b, bogus, sizeof(bogus));
	for (int i = 0; i < 5; i++)
		add_kernel(&b, 2 + (uint32_t)i, 2 + i, 0, 0, "k_after");
	decode(&b, -LIN_EBACKEND);
	load();
	cr_assert_eq(st.invalid, 1);
	cr_assert_eq(st.lost_bytes, sizeof(bogus) + 5 * sizeof(CUpti_ActivityKernel10));
	cr_assert_eq(tr_count(tr, LIN_REC_KERNEL), 1);
	size_t d = dropped_of(LIN_DROP_CUPTI_REST, 0);
	cr_assert_neq(d, SIZE_MAX);
	cr_assert_eq(tr_u(tr, d, 2), 1, "at least one record: the unknown one");
	cr_assert(tr_is_nil(tr, d, 3));
	cr_assert(reason_has(d, "kind 4660 at byte 216, 1112 bytes, up to 46 records"),
		  "1112 bytes / 24 (the smallest record) = 46");
	cr_assert_eq(tr_count(tr, LIN_REC_DROPPED), 1);
}

/* CUPTI ends its walk without an error at a kind past its table (MAX_LIMIT_REACHED, not
 * INVALID_KIND): the bytes after the last record still count. */
Test(cupti_decode, silent_end_of_walk_is_still_a_loss)
{
	static struct tr_buf b;
	uint64_t huge[4] = { 0x7fffffff, 0, 0, 0 };

	b.used = 0;
	add_kernel(&b, 1, 1, 0, 0, "k");
	tr_put(&b, huge, sizeof(huge));
	add_kernel(&b, 2, 2, 0, 0, "k");
	decode(&b, -LIN_EBACKEND);
	load();
	cr_assert_eq(tr_count(tr, LIN_REC_KERNEL), 1);
	cr_assert_neq(dropped_of(LIN_DROP_CUPTI_REST, 0), SIZE_MAX);
}

/* A slot whose kind was never written (CUPTI_ACTIVITY_KIND_INVALID) before complete
 * records ends the walk the same way. */
Test(cupti_decode, unwritten_record_loses_the_rest)
{
	static struct tr_buf b;
	CUpti_ActivityKernel10 k;

	b.used = 0;
	add_kernel(&b, 1, 1, 0, 0, "k");
	memset(&k, 0, sizeof(k));
	k.correlationId = 2; /* written, all but its kind */
	tr_put(&b, &k, sizeof(k));
	add_kernel(&b, 3, 3, 0, 0, "k");
	decode(&b, -LIN_EBACKEND);
	load();
	cr_assert_eq(tr_count(tr, LIN_REC_KERNEL), 1);
	size_t d = dropped_of(LIN_DROP_CUPTI_REST, 0);
	cr_assert_neq(d, SIZE_MAX);
	cr_assert(reason_has(d, "kind 0 at byte 216"));
}

/* A valid size that ends inside a record: CUPTI stops before it without an error; the cut
 * record is counted (source 4), the records before it decoded. */
Test(cupti_decode, truncated_record_is_counted)
{
	static struct tr_buf b;

	b.used = 0;
	add_kernel(&b, 1, 1, 0, 0, "k");
	add_kernel(&b, 2, 2, 0, 0, "k");
	b.used -= 40;
	decode(&b, -LIN_EBACKEND);
	load();
	cr_assert_eq(tr_count(tr, LIN_REC_KERNEL), 1);
	cr_assert_eq(st.undecodable, 1);
	cr_assert_eq(st.lost_bytes, sizeof(CUpti_ActivityKernel10) - 40);
	size_t d = dropped_of(LIN_DROP_CUPTI_UNDECODABLE, 0);
	cr_assert_neq(d, SIZE_MAX);
	cr_assert_eq(tr_u(tr, d, 2), 1);
	cr_assert(reason_has(d, "truncated_record"));
	cr_assert_eq(dropped_of(LIN_DROP_CUPTI_REST, 0), SIZE_MAX);
}

/* Silent where nothing is lost: a zero fill after the last record, a valid size at a record
 * boundary. */
Test(cupti_decode, zero_fill_and_exact_end_are_not_losses)
{
	static struct tr_buf b;
	uint64_t zero[6] = { 0 };

	b.used = 0;
	add_kernel(&b, 1, 1, 0, 0, "k");
	decode(&b, 0);
	tr_put(&b, zero, sizeof(zero));
	decode(&b, 0);
	load();
	cr_assert_eq(tr_count(tr, LIN_REC_KERNEL), 2);
	cr_assert_eq(tr_count(tr, LIN_REC_DROPPED), 0);
	cr_assert_eq(st.lost_bytes + st.invalid + st.undecodable, 0);
}

/* A stride table for tests: the real library's, with one kind changed. */
static struct lin_cupti_layouts fake;
static size_t fake_stride(uint32_t kind, void *user)
{
	const size_t *over = user;

	if (over && kind == over[0])
		return over[1];
	return lin_cupti_stride_probe(kind, NULL);
}

/* A record of a size known to the table that CUPTI refuses (the model of an incomplete
 * record of a known kind) is stepped over, and the walk resumes after it. The real
 * libcupti walks every kind it knows, so the table says kind 6 (deprecated) is 64 bytes. */
Test(cupti_decode, refused_record_of_known_size_is_stepped_over)
{
	static struct tr_buf b;
	size_t over[2] = { 6, 64 };
	uint64_t six[8] = { 6, 0, 0, 0, 0, 0, 0, 0 };
	struct lin_cupti_decoder d6 = dec;

	lin_cupti_layouts_eval(&fake, CUPTI_API_VERSION, fake_stride, over);
	d6.layouts = &fake;
	b.used = 0;
	add_kernel(&b, 1, 1, 0, 0, "k");
	tr_put(&b, six, sizeof(six));
	add_kernel(&b, 2, 2, 0, 0, "k");
	add_kernel(&b, 3, 3, 0, 0, "k");
	cr_assert_eq(lin_cupti_decode_buffer(&d6, b.data, b.used, &st), -LIN_EBACKEND);
	load();
	cr_assert_eq(tr_count(tr, LIN_REC_KERNEL), 3, "the walk resumed after the refused record");
	size_t d = dropped_of(LIN_DROP_CUPTI_UNDECODABLE, 0);
	cr_assert_neq(d, SIZE_MAX);
	cr_assert_eq(tr_u(tr, d, 2), 1);
	cr_assert(reason_has(d, "refused_record"));
}

Test(cupti_layouts, the_loaded_libcupti_is_the_one_built_for)
{
	const struct lin_cupti_layouts *l = lin_cupti_layouts();

	cr_assert_eq(l->version, CUPTI_API_VERSION, "libcupti %u", l->version);
	cr_assert_eq(l->n_refused, 0);
	cr_assert_eq(l->stride[CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL], sizeof(CUpti_ActivityKernel10));
	cr_assert_eq(l->stride[CUPTI_ACTIVITY_KIND_RUNTIME], sizeof(CUpti_ActivityAPI));
	cr_assert_eq(l->stride[CUPTI_ACTIVITY_KIND_MEMCPY], sizeof(CUpti_ActivityMemcpy6));
	cr_assert_eq(l->stride[CUPTI_ACTIVITY_KIND_CUDA_EVENT], sizeof(CUpti_ActivityCudaEvent2));
	cr_assert_eq(l->stride[CUPTI_ACTIVITY_KIND_SYNCHRONIZATION],
		     sizeof(CUpti_ActivitySynchronization2));
	cr_assert(l->ok[CUPTI_ACTIVITY_KIND_CUDA_EVENT] && l->ok[CUPTI_ACTIVITY_KIND_SYNCHRONIZATION]);
	cr_assert_eq(l->stride[CUPTI_ACTIVITY_KIND_INVALID], 0);
	cr_assert_eq(l->min_stride, 24);
	cr_assert_eq(lin_cupti_stride_probe(CUPTI_ACTIVITY_KIND_COUNT, NULL), 0);
}

/* A library that lays kernels out as Kernel9 (208 bytes): kernels are refused, the rest read. */
Test(cupti_layouts, a_different_stride_refuses_that_kind)
{
	size_t over[2] = { CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, 208 };

	lin_cupti_layouts_eval(&fake, CUPTI_API_VERSION + 100, fake_stride, over);
	cr_assert_not(fake.ok[CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL]);
	cr_assert(fake.ok[CUPTI_ACTIVITY_KIND_KERNEL], "same major, same stride: read");
	cr_assert(fake.ok[CUPTI_ACTIVITY_KIND_RUNTIME]);
	cr_assert_eq(fake.n_refused, 1);
}

Test(cupti_layouts, another_major_version_refuses_every_kind)
{
	lin_cupti_layouts_eval(&fake, 120000 + 900, fake_stride, NULL);
	cr_assert_eq(fake.n_refused, 12);
	lin_cupti_layouts_eval(&fake, 28, fake_stride, NULL); /* CUDA 12.9's API version */
	cr_assert_eq(fake.n_refused, 12);
	lin_cupti_layouts_eval(&fake, 0, fake_stride, NULL); /* cuptiGetVersion failed */
	cr_assert_eq(fake.n_refused, 12);
	lin_cupti_layouts_eval(&fake, 130000, fake_stride, NULL);
	cr_assert_eq(fake.n_refused, 0, "13.0 and 13.0 Update 1 lay records out alike");
}

/* Records of a refused layout are counted and reported, never read. */
Test(cupti_decode, refused_layout_is_reported_never_read)
{
	static struct tr_buf b;
	struct lin_cupti_decoder d12 = dec;
	size_t over[2] = { CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, 208 };

	lin_cupti_layouts_eval(&fake, CUPTI_API_VERSION, fake_stride, over);
	d12.layouts = &fake;
	b.used = 0;
	add_ext(&b, EPOCH_KIND, 7, 100);
	add_kernel(&b, 100, 1, 0, 0, "k");
	add_kernel(&b, 101, 2, 0, 0, "k");
	/* The real walker steps 216 bytes; this table's library would step 208 and the
	 * decoder would read isDeviceLaunched from the next record: it reads neither. */
	cr_assert_eq(lin_cupti_decode_buffer(&d12, b.data, b.used, &st), -LIN_EBACKEND);
	load();
	cr_assert_eq(tr_count(tr, LIN_REC_KERNEL), 0);
	cr_assert_eq(tr_count(tr, LIN_REC_EXT_CORRELATION), 1, "other kinds are still read");
	cr_assert_eq(st.unsupported, 2);
	size_t d = dropped_of(LIN_DROP_CUPTI_LAYOUT, 0);
	cr_assert_neq(d, SIZE_MAX);
	cr_assert_eq(tr_u(tr, d, 2), 2);
	cr_assert(reason_has(d, "kind 10, 208 bytes"));
	cr_assert_eq(tr_count(tr, LIN_REC_DROPPED), 1);
}

Test(cupti_decode, stats_reach_only_as_far_as_the_callers_struct)
{
	struct lin_cupti_decode_stats from = { .sz = sizeof(from), .kernels = 3, .lost_bytes = 9 };
	struct lin_cupti_decode_stats to;

	memset(&to, 0, sizeof(to));
	to.sz = LIN_CUPTI_DECODE_STATS_SIZE_V1;
	lin_cupti_stats_add(&to, &from);
	cr_assert_eq(to.kernels, 3);
	cr_assert_eq(to.lost_bytes, 0, "a 0.2 caller's struct ends before lost_bytes");
	to.sz = sizeof(to);
	lin_cupti_stats_add(&to, &from);
	cr_assert_eq(to.kernels, 6);
	cr_assert_eq(to.lost_bytes, 9);
}

/* A runtime memcpy carries the runtime call's correlation (runtimeCorrelationId), not the
 * driver call's (correlationId), which has no API record unless DRIVER is enabled. */
Test(cupti_decode, memcpy_joins_the_runtime_call)
{
	static struct tr_buf b;
	CUpti_ActivityMemcpy6 c;

	b.used = 0;
	memset(&c, 0, sizeof(c));
	c.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
	c.correlationId = 41;        /* cuMemcpyHtoDAsync, nested */
	c.runtimeCorrelationId = 40; /* cudaMemcpyAsync */
	tr_put(&b, &c, sizeof(c));
	decode(&b, 0);
	load();
	cr_assert_eq(tr_u(tr, tr_find(tr, LIN_REC_MEMCPY, 0), 1), 40);
}

Test(cupti_decode, unrecognised_launch_api_still_decodes_kernel)
{
	static struct tr_buf b;

	b.used = 0;
	add_api(&b, CUPTI_ACTIVITY_KIND_DRIVER, 9999, 600, 1, 1);
	add_kernel(&b, 600, 60, 0, 0, "k_odd");
	decode(&b, 0);
	load();
	cr_assert_eq(st.api, 1);
	cr_assert_eq(st.launch_api, 0);
	cr_assert_eq(st.kernels, 1);
	size_t a = tr_find(tr, LIN_REC_API, 0);
	cr_assert_eq(tr_u(tr, a, A_DOMAIN), LIN_API_DRIVER);
	cr_assert_eq(tr_u(tr, a, A_CBID), 9999, "unknown cbid is written as is");
	cr_assert_eq(tr_u(tr, tr_find(tr, LIN_REC_KERNEL, 0), K_CORR), 600);
}

Test(cupti_decode, internal_launch_api_has_nil_cbid)
{
	static struct tr_buf b;

	b.used = 0;
	add_api(&b, CUPTI_ACTIVITY_KIND_INTERNAL_LAUNCH_API, 1234, 700, 1, 1);
	decode(&b, 0);
	load();
	size_t a = tr_find(tr, LIN_REC_API, 0);
	cr_assert_eq(tr_u(tr, a, A_DOMAIN), LIN_API_INTERNAL_LAUNCH);
	cr_assert(tr_is_nil(tr, a, A_CBID));
	cr_assert_eq(st.launch_api, 1);
}

/* Two processes reuse correlation 42: each API record keeps its pid. */
Test(cupti_decode, correlation_reused_across_processes)
{
	static struct tr_buf b1, b2;

	b1.used = b2.used = 0;
	add_ext(&b1, EPOCH_KIND, 10, 42);
	add_api(&b1, CUPTI_ACTIVITY_KIND_RUNTIME, 505, 42, 100, 1);
	add_kernel(&b1, 42, 1, 0, 0, "k");
	add_ext(&b2, EPOCH_KIND, 20, 42);
	add_api(&b2, CUPTI_ACTIVITY_KIND_RUNTIME, 505, 42, 200, 1);
	add_kernel(&b2, 42, 1, 0, 0, "k");
	decode(&b1, 0);
	decode(&b2, 0);
	load();
	cr_assert_eq(tr_count(tr, LIN_REC_KERNEL), 2);
	cr_assert_eq(tr_u(tr, tr_find(tr, LIN_REC_API, 0), A_PID), 100);
	cr_assert_eq(tr_u(tr, tr_find(tr, LIN_REC_API, 1), A_PID), 200);
	cr_assert_eq(tr_u(tr, tr_find(tr, LIN_REC_EXT_CORRELATION, 1), 2), 20);
}

Test(cupti_decode, other_external_kinds_are_kept)
{
	static struct tr_buf b;

	b.used = 0;
	add_ext(&b, CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, 55, 800);
	add_ext(&b, EPOCH_KIND, 56, 800);
	decode(&b, 0);
	load();
	cr_assert_eq(tr_count(tr, LIN_REC_EXT_CORRELATION), 2);
	cr_assert_eq(tr_u(tr, tr_find(tr, LIN_REC_EXT_CORRELATION, 0), 1), 3);
	cr_assert_eq(ext_of(800), 56);
}

Test(cupti_decode, memcpy_memset_graph_trace)
{
	static struct tr_buf b;
	CUpti_ActivityMemcpy6 c;
	CUpti_ActivityMemset4 s;
	CUpti_ActivityGraphTrace2 g;

	b.used = 0;
	memset(&c, 0, sizeof(c));
	c.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
	c.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
	c.bytes = 4096;
	c.start = 10;
	c.end = 20;
	c.streamId = 3;
	c.correlationId = 900;
	c.runtimeCorrelationId = 0; /* a copy made through the driver API alone */
	c.graphId = 4;
	c.graphNodeId = 0x400000003ull;
	tr_put(&b, &c, sizeof(c));
	memset(&s, 0, sizeof(s));
	s.kind = CUPTI_ACTIVITY_KIND_MEMSET;
	s.value = 0xab;
	s.bytes = 512;
	s.correlationId = 901;
	tr_put(&b, &s, sizeof(s));
	memset(&g, 0, sizeof(g));
	g.kind = CUPTI_ACTIVITY_KIND_GRAPH_TRACE;
	g.correlationId = 902;
	g.start = 30;
	g.end = 40;
	g.graphId = 4;
	g.streamId = 3;
	tr_put(&b, &g, sizeof(g));
	decode(&b, 0);
	load();

	size_t i = tr_find(tr, LIN_REC_MEMCPY, 0);
	cr_assert_eq(tr_nfields(tr, i), LIN_REC_NFIELDS_MEMCPY);
	cr_assert_eq(tr_u(tr, i, 1), 900);
	cr_assert_eq(tr_u(tr, i, 2), 10);
	cr_assert_eq(tr_u(tr, i, 6), 3);
	cr_assert_eq(tr_u(tr, i, 7), 4096);
	cr_assert_eq(tr_u(tr, i, 8), CUPTI_ACTIVITY_MEMCPY_KIND_HTOD);
	cr_assert_eq(tr_u(tr, i, 9), 4);
	cr_assert_eq(tr_u(tr, i, 10), 0x400000003ull);
	i = tr_find(tr, LIN_REC_MEMSET, 0);
	cr_assert_eq(tr_u(tr, i, 1), 901);
	cr_assert(tr_is_nil(tr, i, 2));
	cr_assert_eq(tr_u(tr, i, 7), 512);
	cr_assert_eq(tr_u(tr, i, 8), 0xab);
	cr_assert(tr_is_nil(tr, i, 9));
	i = tr_find(tr, LIN_REC_GRAPH_TRACE, 0);
	cr_assert_eq(tr_nfields(tr, i), LIN_REC_NFIELDS_GRAPH_TRACE);
	cr_assert_eq(tr_u(tr, i, 1), 902);
	cr_assert_eq(tr_u(tr, i, 7), 4);
	cr_assert_eq(st.memcpy + st.memset + st.graph_trace, 3);
}

Test(cupti_decode, device_launched_kernel)
{
	static struct tr_buf b;
	CUpti_ActivityKernel10 k;

	b.used = 0;
	memset(&k, 0, sizeof(k));
	k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	k.graphId = 6;
	k.graphNodeId = 0x600000001ull;
	k.isDeviceLaunched = 1;
	tr_put(&b, &k, sizeof(k));
	decode(&b, 0);
	load();
	size_t i = tr_find(tr, LIN_REC_KERNEL, 0);
	cr_assert(tr_is_nil(tr, i, K_CORR), "device-launched graphs have no correlation");
	cr_assert(tr_field(tr, i, K_DEVLAUNCH)->via.boolean);
	cr_assert_eq(st.device_launched, 1);
}

Test(cupti_decode, kinds_without_trace_record_are_skipped)
{
	static struct tr_buf b;
	CUpti_ActivityStream s;

	b.used = 0;
	memset(&s, 0, sizeof(s));
	s.kind = CUPTI_ACTIVITY_KIND_STREAM;
	tr_put(&b, &s, sizeof(s));
	add_kernel(&b, 1, 1, 0, 0, "k");
	decode(&b, 0);
	load();
	cr_assert_eq(st.skipped, 1);
	cr_assert_eq(st.kernels, 1);
	cr_assert_eq(tr->n, 2, "string + kernel only");
}

Test(cupti_decode, bad_arguments)
{
	struct lin_cupti_decoder none = { 0 };
	uint8_t one[8] = { 0 };

	cr_assert_eq(lin_cupti_decode_buffer(NULL, one, 8, &st), -EINVAL);
	cr_assert_eq(lin_cupti_decode_buffer(&none, one, 8, &st), -EINVAL);
	cr_assert_eq(lin_cupti_decode_buffer(&dec, NULL, 8, &st), -EINVAL);
	cr_assert_eq(lin_cupti_decode_buffer(&dec, NULL, 0, NULL), 0);
	cr_assert_eq(sbuf.size, 0);
}

Test(cupti_decode, no_intern_callback_gives_nil_name)
{
	static struct tr_buf b;
	struct lin_cupti_decoder d = { .pk = &pk };

	b.used = 0;
	add_kernel(&b, 1, 1, 0, 0, "k");
	cr_assert_eq(lin_cupti_decode_buffer(&d, b.data, b.used, NULL), 0);
	load();
	cr_assert_eq(tr->n, 1);
	cr_assert(tr_is_nil(tr, 0, K_NAME));
}

Test(cupti_launch_api, recognises_launch_cbids)
{
	const uint32_t rt_kernel[] = { 211, 214, 269, 270, 430, 431, 505, 506 };
	const uint32_t drv_kernel[] = { 307, 442, 652, 653, 477, 478 };

	for (size_t i = 0; i < sizeof(rt_kernel) / sizeof(rt_kernel[0]); i++)
		cr_assert_eq(lin_cupti_launch_api(LIN_API_RUNTIME, rt_kernel[i]),
			     LIN_CUPTI_LAUNCH_KERNEL, "runtime cbid %u", rt_kernel[i]);
	for (size_t i = 0; i < sizeof(drv_kernel) / sizeof(drv_kernel[0]); i++)
		cr_assert_eq(lin_cupti_launch_api(LIN_API_DRIVER, drv_kernel[i]),
			     LIN_CUPTI_LAUNCH_KERNEL, "driver cbid %u", drv_kernel[i]);
	cr_assert_eq(lin_cupti_launch_api(LIN_API_RUNTIME, 311), LIN_CUPTI_LAUNCH_GRAPH);
	cr_assert_eq(lin_cupti_launch_api(LIN_API_RUNTIME, 312), LIN_CUPTI_LAUNCH_GRAPH);
	cr_assert_eq(lin_cupti_launch_api(LIN_API_DRIVER, 514), LIN_CUPTI_LAUNCH_GRAPH);
	cr_assert_eq(lin_cupti_launch_api(LIN_API_DRIVER, 515), LIN_CUPTI_LAUNCH_GRAPH);
	/* Not launches: cudaLaunchHostFunc, cudaMemcpy; a driver cbid in the runtime domain. */
	cr_assert_eq(lin_cupti_launch_api(LIN_API_RUNTIME, 284), LIN_CUPTI_LAUNCH_NONE);
	cr_assert_eq(lin_cupti_launch_api(LIN_API_RUNTIME, 31), LIN_CUPTI_LAUNCH_NONE);
	cr_assert_eq(lin_cupti_launch_api(LIN_API_RUNTIME, 514), LIN_CUPTI_LAUNCH_NONE);
	cr_assert_eq(lin_cupti_launch_api(LIN_API_INTERNAL_LAUNCH, 505), LIN_CUPTI_LAUNCH_NONE);
}

/* The library's idea of each record's size is libcupti's: the walk lands on every record. */
Test(cupti_decode, walk_matches_struct_sizes)
{
	static struct tr_buf b;
	CUpti_Activity *r = NULL;
	size_t offs[8], n = 0;

	b.used = 0;
	add_ext(&b, EPOCH_KIND, 1, 1);
	offs[n++] = 0;
	offs[n++] = b.used;
	add_api(&b, CUPTI_ACTIVITY_KIND_RUNTIME, 505, 1, 1, 1);
	offs[n++] = b.used;
	add_kernel(&b, 1, 1, 0, 0, "k");
	offs[n++] = b.used;
	add_event(&b, 2, 3, 4, 5);
	offs[n++] = b.used;
	add_sync(&b, CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT, 6, 8, 4, 5);
	for (size_t i = 0; i < n; i++) {
		cr_assert_eq(cuptiActivityGetNextRecord(b.data, b.used, &r), CUPTI_SUCCESS);
		cr_assert_eq((uint8_t *)r - b.data, (ptrdiff_t)offs[i]);
	}
	cr_assert_eq(cuptiActivityGetNextRecord(b.data, b.used, &r), CUPTI_ERROR_MAX_LIMIT_REACHED);
}

/* ------------------------------------------------------------------ events and syncs */

#define NO_VALUE CUPTI_SYNCHRONIZATION_INVALID_VALUE

/* A recording on stream 3 and the wait on stream 4 that names it: every field as CUPTI
 * wrote it, and the wait's sync id equal to the recording's. */
Test(cupti_decode, cuda_event_and_stream_wait_event_fields)
{
	static struct tr_buf b;

	b.used = 0;
	add_event(&b, 300, 3, 17, 0x1234567890ull);
	add_sync(&b, CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT, 301, 4, 17, 0x1234567890ull);
	decode(&b, 0);
	load();
	cr_assert_eq(st.records, 2);
	cr_assert_eq(st.cuda_event, 1);
	cr_assert_eq(st.sync, 1);
	cr_assert_eq(st.skipped, 0);

	size_t e = tr_find(tr, LIN_REC_CUDA_EVENT, 0);
	cr_assert_neq(e, SIZE_MAX);
	cr_assert_eq(tr_nfields(tr, e), LIN_REC_NFIELDS_CUDA_EVENT);
	cr_assert_eq(tr_u(tr, e, E_CORR), 300);
	cr_assert_eq(tr_u(tr, e, E_DEV), 2);
	cr_assert_eq(tr_u(tr, e, E_CTX), 1);
	cr_assert_eq(tr_u(tr, e, E_STREAM), 3);
	cr_assert_eq(tr_u(tr, e, E_EVENT), 17);
	cr_assert_eq(tr_u(tr, e, E_SYNC_ID), 0x1234567890ull);

	size_t w = tr_find(tr, LIN_REC_SYNC, 0);
	cr_assert_neq(w, SIZE_MAX);
	cr_assert_eq(tr_nfields(tr, w), LIN_REC_NFIELDS_SYNC);
	cr_assert_eq(tr_u(tr, w, S_CORR), 301);
	cr_assert_eq(tr_u(tr, w, S_TYPE), LIN_SYNC_STREAM_WAIT_EVENT);
	cr_assert_eq(tr_u(tr, w, S_START), 7301);
	cr_assert_eq(tr_u(tr, w, S_END), 7801);
	cr_assert_eq(tr_u(tr, w, S_CTX), 1);
	cr_assert_eq(tr_u(tr, w, S_STREAM), 4);
	cr_assert_eq(tr_u(tr, w, S_EVENT), 17);
	cr_assert_eq(tr_u(tr, w, S_SYNC_ID), tr_u(tr, e, E_SYNC_ID));
}

/* CUPTI's "unknown" and "not applicable" values become nil: correlation 0, times 0, an
 * invalid stream, event or sync id (the 32-bit marker, and its 64-bit all-ones). */
Test(cupti_decode, odd_event_and_sync_values_are_nil)
{
	static struct tr_buf b;
	CUpti_ActivitySynchronization2 s;

	b.used = 0;
	add_event(&b, 0, 3, 17, 0);
	add_event(&b, 302, 3, 18, NO_VALUE);
	add_event(&b, 303, 3, 19, UINT64_MAX);
	memset(&s, 0, sizeof(s)); /* correlation 0, times 0 */
	s.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
	s.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT;
	s.contextId = 1;
	s.streamId = CUPTI_INVALID_STREAM_ID;
	s.cudaEventId = NO_VALUE;
	s.cudaEventSyncId = NO_VALUE;
	tr_put(&b, &s, sizeof(s));
	decode(&b, 0);
	load();

	size_t e = tr_find(tr, LIN_REC_CUDA_EVENT, 0);
	cr_assert(tr_is_nil(tr, e, E_CORR));
	cr_assert(tr_is_nil(tr, e, E_SYNC_ID), "sync id 0 names no recording");
	cr_assert_eq(tr_u(tr, e, E_EVENT), 17);
	cr_assert(tr_is_nil(tr, tr_find(tr, LIN_REC_CUDA_EVENT, 1), E_SYNC_ID));
	cr_assert(tr_is_nil(tr, tr_find(tr, LIN_REC_CUDA_EVENT, 2), E_SYNC_ID));
	cr_assert_eq(tr_u(tr, tr_find(tr, LIN_REC_CUDA_EVENT, 2), E_CORR), 303);

	size_t w = tr_find(tr, LIN_REC_SYNC, 0);
	cr_assert(tr_is_nil(tr, w, S_CORR));
	cr_assert(tr_is_nil(tr, w, S_START));
	cr_assert(tr_is_nil(tr, w, S_END));
	cr_assert(tr_is_nil(tr, w, S_STREAM));
	cr_assert(tr_is_nil(tr, w, S_EVENT));
	cr_assert(tr_is_nil(tr, w, S_SYNC_ID));
	cr_assert_eq(tr_u(tr, w, S_TYPE), LIN_SYNC_STREAM_WAIT_EVENT);
	cr_assert_eq(tr_u(tr, w, S_CTX), 1);
	cr_assert_eq(st.cuda_event, 3);
	cr_assert_eq(st.sync, 1);
}

/* Which fields each type carries (the header's comments on CUpti_ActivitySynchronization2):
 * a value where the field does not apply is not written, one where it does is. */
Test(cupti_decode, sync_fields_by_type)
{
	static struct tr_buf b;

	b.used = 0;
	/* Values everywhere, valid or not for the type. */
	add_sync(&b, CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE, 401, 5, 21, 99);
	add_sync(&b, CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE, 402, 5, 21, 99);
	add_sync(&b, CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE, 403, 5, 21, 99);
	add_sync(&b, 9 /* a type newer than this build */, 404, 5, 21, 99);
	add_sync(&b, CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_UNKNOWN, 405, 5, NO_VALUE, NO_VALUE);
	decode(&b, 0);
	load();
	cr_assert_eq(tr_count(tr, LIN_REC_SYNC), 5);

	size_t i = tr_find(tr, LIN_REC_SYNC, 0); /* cuEventSynchronize: no stream */
	cr_assert_eq(tr_u(tr, i, S_TYPE), LIN_SYNC_EVENT_SYNCHRONIZE);
	cr_assert(tr_is_nil(tr, i, S_STREAM));
	cr_assert_eq(tr_u(tr, i, S_EVENT), 21);
	cr_assert_eq(tr_u(tr, i, S_SYNC_ID), 99);
	i = tr_find(tr, LIN_REC_SYNC, 1); /* cuStreamSynchronize: no event */
	cr_assert_eq(tr_u(tr, i, S_TYPE), LIN_SYNC_STREAM_SYNCHRONIZE);
	cr_assert_eq(tr_u(tr, i, S_STREAM), 5);
	cr_assert(tr_is_nil(tr, i, S_EVENT));
	cr_assert(tr_is_nil(tr, i, S_SYNC_ID));
	i = tr_find(tr, LIN_REC_SYNC, 2); /* cuCtxSynchronize: neither */
	cr_assert_eq(tr_u(tr, i, S_TYPE), LIN_SYNC_CONTEXT_SYNCHRONIZE);
	cr_assert(tr_is_nil(tr, i, S_STREAM));
	cr_assert(tr_is_nil(tr, i, S_EVENT));
	cr_assert(tr_is_nil(tr, i, S_SYNC_ID));
	cr_assert_eq(tr_u(tr, i, S_CORR), 403);
	i = tr_find(tr, LIN_REC_SYNC, 3); /* unknown to this build: kept as CUPTI gave it */
	cr_assert_eq(tr_u(tr, i, S_TYPE), 9);
	cr_assert_eq(tr_u(tr, i, S_STREAM), 5);
	cr_assert_eq(tr_u(tr, i, S_EVENT), 21);
	cr_assert_eq(tr_u(tr, i, S_SYNC_ID), 99);
	i = tr_find(tr, LIN_REC_SYNC, 4); /* type 0: the markers still mean "none" */
	cr_assert_eq(tr_u(tr, i, S_TYPE), LIN_SYNC_UNKNOWN);
	cr_assert_eq(tr_u(tr, i, S_STREAM), 5);
	cr_assert(tr_is_nil(tr, i, S_EVENT));
	cr_assert(tr_is_nil(tr, i, S_SYNC_ID));
}

/* A libcupti whose CUDA_EVENT or SYNCHRONIZATION records are not the size this build reads:
 * counted and reported as source 6, never read; the other kind is still read. */
Test(cupti_decode, event_and_sync_layouts_are_checked)
{
	static struct tr_buf b;
	struct lin_cupti_decoder dl = dec;
	size_t over[2] = { CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, 48 };

	lin_cupti_layouts_eval(&fake, CUPTI_API_VERSION, fake_stride, over);
	cr_assert_not(fake.ok[CUPTI_ACTIVITY_KIND_SYNCHRONIZATION]);
	cr_assert(fake.ok[CUPTI_ACTIVITY_KIND_CUDA_EVENT]);
	cr_assert_eq(fake.n_refused, 1);
	dl.layouts = &fake;
	b.used = 0;
	add_event(&b, 500, 3, 1, 77);
	add_sync(&b, CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT, 501, 4, 1, 77);
	add_sync(&b, CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT, 502, 4, 1, 77);
	cr_assert_eq(lin_cupti_decode_buffer(&dl, b.data, b.used, &st), -LIN_EBACKEND);
	load();
	cr_assert_eq(tr_count(tr, LIN_REC_SYNC), 0);
	cr_assert_eq(tr_count(tr, LIN_REC_CUDA_EVENT), 1);
	cr_assert_eq(st.unsupported, 2);
	cr_assert_eq(st.sync, 0);
	size_t d = dropped_of(LIN_DROP_CUPTI_LAYOUT, 0);
	cr_assert_neq(d, SIZE_MAX);
	cr_assert_eq(tr_u(tr, d, 2), 2);
	cr_assert(reason_has(d, "kind 38, 48 bytes"));

	over[0] = CUPTI_ACTIVITY_KIND_CUDA_EVENT;
	lin_cupti_layouts_eval(&fake, CUPTI_API_VERSION, fake_stride, over);
	cr_assert_not(fake.ok[CUPTI_ACTIVITY_KIND_CUDA_EVENT]);
	cr_assert(fake.ok[CUPTI_ACTIVITY_KIND_SYNCHRONIZATION]);
}
