/* SPDX-License-Identifier: MIT */
/*
 * test_graph.c - graph identity through a real runtime: node origin under epochs, the
 * clone map, replay epochs with per-exec ordinals launched from several threads, updates,
 * and forgetting destroyed graphs and execs. No GPU, no CUPTI.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>

#include "lin_test.h"
#include "tests/cupti_bind/tr_helpers.h"
#include "lineage/graph.h"
#include "lineage/runtime.h"
#include "lineage/trace_format.h"

static struct tr_sink sink;
static struct tr_trace *tr;
static lin_runtime *rt;
static lin_graph_tracker *gt;

/* A backend that remembers the last id pushed on any thread. */
static _Atomic uint64_t last_push;
static atomic_int pushes;

static _Thread_local uint64_t t_stack[8];
static _Thread_local int t_depth;

static int rec_push(void *ctx, uint32_t kind, uint64_t id)
{
	(void)ctx;
	(void)kind;
	if (t_depth == 8)
		return -ENOSPC;
	t_stack[t_depth++] = id;
	atomic_store(&last_push, id);
	atomic_fetch_add(&pushes, 1);
	return 0;
}

static int rec_pop(void *ctx, uint32_t kind, uint64_t *id)
{
	(void)ctx;
	(void)kind;
	if (t_depth == 0)
		return -ENOENT;
	t_depth--;
	if (id)
		*id = t_stack[t_depth];
	return 0;
}

static const struct lin_backend_ops rec_ops = {
	.sz = sizeof(rec_ops),
	.name = "test",
	.push = rec_push,
	.pop = rec_pop,
};

static void setup(void)
{
	struct lin_runtime_opts o = {
		.sz = sizeof(o),
		.trace_write = tr_sink_write,
		.trace_user = &sink,
		.backend = LIN_BACKEND_CUSTOM,
		.backend_ops = &rec_ops,
		.flags = LIN_RT_NO_WRITER_THREAD,
	};

	tr_sink_init(&sink);
	tr = calloc(1, sizeof(*tr));
	atomic_store(&pushes, 0);
	cr_assert_eq(lin_runtime_create(&o, &rt), 0);
	cr_assert_eq(lin_graph_tracker_create(rt, NULL, &gt), 0);
}

static void teardown(void)
{
	lin_graph_tracker_free(gt);
	lin_runtime_free(rt);
	tr_free(tr);
	free(tr);
	tr_sink_fini(&sink);
}

/* Flush and parse what the trace holds so far. */
static void load(void)
{
	cr_assert_eq(lin_runtime_flush(rt), 0);
	tr_free(tr);
	tr_load(tr, sink.data, sink.len);
	cr_assert_eq(tr->truncated_at, 0);
}

static uint64_t new_request(void)
{
	struct lin_request_opts ro = { .sz = sizeof(ro) };
	uint64_t id;

	cr_assert_eq(lin_request_begin(rt, &ro, &id), 0);
	return id;
}

static uint64_t new_epoch(uint64_t req)
{
	struct lin_epoch_opts eo = { .sz = sizeof(eo), .requests = &req, .n_requests = 1 };
	uint64_t id;

	cr_assert_eq(lin_epoch_declare(rt, &eo, &id), 0);
	return id;
}

/* graph_node fields */
enum { N_HOST = 1, N_TID, N_GRAPH, N_NODE, N_EPOCH, N_VERSION, N_ORIGIN };
/* graph_launch fields */
enum { L_HOST = 1, L_TID, L_EXEC, L_REPLAY, L_ORDINAL, L_EPOCH, L_VERSION, L_CORR };

TestSuite(graph, .init = setup, .fini = teardown);

Test(graph, node_belongs_to_creating_epoch)
{
	uint64_t ep = new_epoch(new_request()), got = 0;
	uint32_t ver = 0;
	lin_scope sc;

	cr_assert_eq(lin_scope_enter(rt, ep, &sc), 0);
	cr_assert_eq(lin_graph_node_created(gt, 5, 0x500000001ull), 0);
	cr_assert_eq(lin_scope_exit(rt, &sc), 0);
	cr_assert_eq(lin_graph_node_created(gt, 5, 0x500000002ull), 0, "outside any epoch");

	cr_assert_eq(lin_graph_node_origin(gt, 0x500000001ull, &got, &ver), 0);
	cr_assert_eq(got, ep);
	cr_assert_eq(ver, 1);
	cr_assert_eq(lin_graph_node_origin(gt, 0x500000002ull, &got, NULL), 0);
	cr_assert_eq(got, 0);

	load();
	cr_assert_eq(tr_count(tr, LIN_REC_GRAPH_NODE), 2);
	size_t n = tr_find(tr, LIN_REC_GRAPH_NODE, 0);
	cr_assert_eq(tr_nfields(tr, n), LIN_REC_NFIELDS_GRAPH_NODE);
	cr_assert_eq(tr_u(tr, n, N_GRAPH), 5);
	cr_assert_eq(tr_u(tr, n, N_NODE), 0x500000001ull);
	cr_assert_eq(tr_u(tr, n, N_EPOCH), ep);
	cr_assert_eq(tr_u(tr, n, N_VERSION), 1);
	cr_assert_eq(tr_u(tr, n, N_ORIGIN), LIN_NODE_ORIGIN_EXPLICIT);
	cr_assert_neq(tr_u(tr, n, N_TID), UINT64_MAX);
	n = tr_find(tr, LIN_REC_GRAPH_NODE, 1);
	cr_assert(tr_is_nil(tr, n, N_EPOCH));
	cr_assert(tr_is_nil(tr, n, N_VERSION));
}

struct cap_arg {
	lin_graph_capture cap;
	uint64_t graph;
};

static void *finish_capture(void *p)
{
	struct cap_arg *a = p;
	const uint64_t nodes[3] = { 0x700000001ull, 0x700000002ull, 0x700000003ull };

	cr_assert_eq(lin_graph_capture_end(gt, &a->cap, a->graph, nodes, 3), 0);
	return NULL;
}

/* Capture begun under one request's epoch; the node list is recorded by another thread. */
Test(graph, captured_nodes_belong_to_capturing_epoch)
{
	uint64_t ep = new_epoch(new_request()), got;
	struct cap_arg a = { .graph = 7 };
	lin_scope sc;
	pthread_t th;

	cr_assert_eq(lin_scope_enter(rt, ep, &sc), 0);
	cr_assert_eq(lin_graph_capture_begin(gt, &a.cap), 0);
	cr_assert_eq(lin_scope_exit(rt, &sc), 0);
	cr_assert_eq(pthread_create(&th, NULL, finish_capture, &a), 0);
	pthread_join(th, NULL);
	for (uint64_t i = 1; i <= 3; i++) {
		cr_assert_eq(lin_graph_node_origin(gt, 0x700000000ull + i, &got, NULL), 0);
		cr_assert_eq(got, ep);
	}
	load();
	cr_assert_eq(tr_count(tr, LIN_REC_GRAPH_NODE), 3);
	for (size_t k = 0; k < 3; k++) {
		size_t n = tr_find(tr, LIN_REC_GRAPH_NODE, k);
		cr_assert_eq(tr_u(tr, n, N_ORIGIN), LIN_NODE_ORIGIN_CAPTURE);
		cr_assert_eq(tr_u(tr, n, N_EPOCH), ep);
		cr_assert_eq(tr_u(tr, n, N_GRAPH), 7);
	}
}

Test(graph, capture_without_epoch)
{
	lin_graph_capture cap;
	const uint64_t node = 0x800000001ull;
	uint64_t got = 1;

	cr_assert_eq(lin_graph_capture_begin(gt, &cap), -LIN_ENOCONTEXT);
	cr_assert_eq(lin_graph_capture_end(gt, &cap, 8, &node, 1), 0);
	cr_assert_eq(lin_graph_node_origin(gt, node, &got, NULL), 0);
	cr_assert_eq(got, 0);
	load();
	cr_assert(tr_is_nil(tr, tr_find(tr, LIN_REC_GRAPH_NODE, 0), N_EPOCH));
}

/* A kernel's graphNodeId names the clone; the clone map leads back to the creating epoch. */
Test(graph, clone_leads_to_original_epoch)
{
	uint64_t ep = new_epoch(new_request()), got = 0, ord = 9;
	lin_scope sc;

	cr_assert_eq(lin_scope_enter(rt, ep, &sc), 0);
	cr_assert_eq(lin_graph_node_created(gt, 5, 0x500000001ull), 0);
	cr_assert_eq(lin_scope_exit(rt, &sc), 0);
	cr_assert_eq(lin_graph_node_cloned(gt, 0x500000001ull, 0x500000101ull, 5, 50), 0);
	cr_assert_eq(lin_graph_exec_instantiated(gt, 5, 50), 0);
	cr_assert_eq(lin_graph_node_origin(gt, 0x500000101ull, &got, NULL), 0);
	cr_assert_eq(got, ep);
	cr_assert_eq(lin_graph_exec_ordinal(gt, 50, &ord), 0);
	cr_assert_eq(ord, 0);

	load();
	size_t c = tr_find(tr, LIN_REC_GRAPH_NODE_CLONE, 0);
	cr_assert_eq(tr_nfields(tr, c), LIN_REC_NFIELDS_GRAPH_NODE_CLONE);
	cr_assert_eq(tr_u(tr, c, 1), 0x500000001ull);
	cr_assert_eq(tr_u(tr, c, 2), 0x500000101ull);
	cr_assert_eq(tr_u(tr, c, 3), 5);
	cr_assert_eq(tr_u(tr, c, 4), 50);
	size_t x = tr_find(tr, LIN_REC_GRAPH_EXEC, 0);
	cr_assert_eq(tr_u(tr, x, 3), 5);
	cr_assert_eq(tr_u(tr, x, 4), 50);
}

/* Edges become graph_edge records, one each; a graph without edges gets one nil record;
 * bad arguments write nothing. */
Test(graph, edges_are_recorded)
{
	const uint64_t from[] = { 0x700000001ull, 0x700000002ull },
		       to[] = { 0x700000002ull, 0x700000003ull };
	const uint64_t self[] = { 0x700000001ull }, zero[] = { 0 };

	cr_assert_eq(lin_graph_edges(gt, 7, from, to, 2), 0);
	cr_assert_eq(lin_graph_edges(gt, 8, NULL, NULL, 0), 0);
	cr_assert_eq(lin_graph_edges(gt, 9, self, self, 1), -EINVAL);
	cr_assert_eq(lin_graph_edges(gt, 9, zero, to, 1), -EINVAL);
	cr_assert_eq(lin_graph_edges(gt, 0, from, to, 2), -EINVAL);
	cr_assert_eq(lin_graph_edges(gt, 9, NULL, to, 1), -EINVAL);
	cr_assert_eq(lin_graph_edges(NULL, 9, from, to, 2), -EINVAL);

	load();
	cr_assert_eq(tr_count(tr, LIN_REC_GRAPH_EDGE), 3, "nothing written for the bad calls");
	size_t e = tr_find(tr, LIN_REC_GRAPH_EDGE, 0);
	cr_assert_eq(tr_nfields(tr, e), LIN_REC_NFIELDS_GRAPH_EDGE);
	cr_assert_eq(tr_u(tr, e, 1), 7);
	cr_assert_eq(tr_u(tr, e, 2), 0x700000001ull);
	cr_assert_eq(tr_u(tr, e, 3), 0x700000002ull);
	e = tr_find(tr, LIN_REC_GRAPH_EDGE, 2);
	cr_assert_eq(tr_u(tr, e, 1), 8);
	cr_assert(tr_is_nil(tr, e, 2) && tr_is_nil(tr, e, 3), "no edge: both ends nil");
}

struct launcher {
	uint64_t epoch;
	int n;
	uint64_t replays[32];
	uint64_t ordinals[32];
	uint64_t pushed[32];
};

static void *launch_replays(void *p)
{
	struct launcher *l = p;
	lin_scope sc;

	cr_assert_eq(lin_scope_enter(rt, l->epoch, &sc), 0);
	for (int i = 0; i < l->n; i++) {
		lin_graph_launch gl;
		cr_assert_eq(lin_graph_launch_begin(gt, 50, "replay", &gl), 0);
		l->replays[i] = gl.replay_epoch;
		l->ordinals[i] = gl.ordinal;
		l->pushed[i] = gl.launch.ext_id;
		cr_assert_eq(lin_graph_launch_end(gt, &gl), 0);
	}
	cr_assert_eq(lin_scope_exit(rt, &sc), 0);
	return NULL;
}

/* One graph captured under one request, replayed from three threads serving three others. */
Test(graph, replays_from_other_threads)
{
	uint64_t cap_ep = new_epoch(new_request());
	struct launcher L[3];
	pthread_t th[3];
	int seen[31] = { 0 };
	lin_scope sc;

	cr_assert_eq(lin_scope_enter(rt, cap_ep, &sc), 0);
	cr_assert_eq(lin_graph_node_created(gt, 5, 0x500000001ull), 0);
	cr_assert_eq(lin_scope_exit(rt, &sc), 0);
	cr_assert_eq(lin_graph_node_cloned(gt, 0x500000001ull, 0x500000101ull, 5, 50), 0);
	cr_assert_eq(lin_graph_exec_instantiated(gt, 5, 50), 0);
	for (int t = 0; t < 3; t++) {
		memset(&L[t], 0, sizeof(L[t]));
		L[t].epoch = new_epoch(new_request());
		L[t].n = 10;
		cr_assert_eq(pthread_create(&th[t], NULL, launch_replays, &L[t]), 0);
	}
	for (int t = 0; t < 3; t++)
		pthread_join(th[t], NULL);

	for (int t = 0; t < 3; t++) {
		for (int i = 0; i < 10; i++) {
			cr_assert_neq(L[t].replays[i], 0);
			cr_assert_eq(L[t].pushed[i], L[t].replays[i],
				     "the replay epoch is what is pushed");
			cr_assert(L[t].ordinals[i] >= 1 && L[t].ordinals[i] <= 30);
			cr_assert_eq(seen[L[t].ordinals[i]]++, 0, "ordinal %llu minted twice",
				     (unsigned long long)L[t].ordinals[i]);
		}
	}
	uint64_t last;
	cr_assert_eq(lin_graph_exec_ordinal(gt, 50, &last), 0);
	cr_assert_eq(last, 30);

	load();
	cr_assert_eq(tr_count(tr, LIN_REC_GRAPH_LAUNCH), 30);
	for (size_t k = 0; k < 30; k++) {
		size_t g = tr_find(tr, LIN_REC_GRAPH_LAUNCH, k);
		uint64_t replay = tr_u(tr, g, L_REPLAY), parent = tr_u(tr, g, L_EPOCH);
		int owner = -1;
		cr_assert_eq(tr_nfields(tr, g), LIN_REC_NFIELDS_GRAPH_LAUNCH);
		cr_assert_eq(tr_u(tr, g, L_EXEC), 50);
		cr_assert(tr_is_nil(tr, g, L_CORR));
		for (int t = 0; t < 3; t++)
			if (L[t].epoch == parent)
				owner = t;
		cr_assert_neq(owner, -1, "launching epoch recorded");
		/* The replay epoch is declared with the launching epoch as parent. */
		bool declared = false;
		for (size_t i = 0; i < tr->n; i++)
			if (tr_type(tr, i) == LIN_REC_EPOCH_DECLARE && tr_u(tr, i, 3) == replay) {
				cr_assert_eq(tr_u(tr, i, 6), parent);
				declared = true;
			}
		cr_assert(declared, "replay epoch %llu declared", (unsigned long long)replay);
	}
	/* Two joins stay separate: the node still belongs to the capturing epoch. */
	uint64_t origin;
	cr_assert_eq(lin_graph_node_origin(gt, 0x500000101ull, &origin, NULL), 0);
	cr_assert_eq(origin, cap_ep);
}

Test(graph, replay_epochs_are_retired)
{
	uint64_t ep = new_epoch(new_request());
	struct lin_runtime_stats st = { .sz = sizeof(st) };
	uint64_t before;
	lin_scope sc;

	cr_assert_eq(lin_graph_exec_instantiated(gt, 5, 60), 0);
	cr_assert_eq(lin_runtime_get_stats(rt, &st), 0);
	before = st.live_epochs;
	cr_assert_eq(lin_scope_enter(rt, ep, &sc), 0);
	for (int i = 0; i < 500; i++) {
		lin_graph_launch gl;
		cr_assert_eq(lin_graph_launch_begin(gt, 60, NULL, &gl), 0);
		cr_assert_eq(gl.ordinal, (uint64_t)i + 1);
		cr_assert_eq(lin_graph_launch_end(gt, &gl), 0);
	}
	cr_assert_eq(lin_scope_exit(rt, &sc), 0);
	cr_assert_eq(lin_runtime_get_stats(rt, &st), 0);
	cr_assert_eq(st.live_epochs, before, "every replay epoch was retired");
	LIN_TEST_CHECK_LEAKS();
}

Test(graph, launch_without_context_still_brackets)
{
	lin_graph_launch gl;

	cr_assert_eq(lin_graph_exec_instantiated(gt, 5, 70), 0);
	cr_assert_eq(lin_graph_launch_begin(gt, 70, "k", &gl), -LIN_ENOCONTEXT);
	cr_assert_eq(gl.replay_epoch, 0);
	cr_assert_eq(lin_graph_launch_end(gt, &gl), 0);
	load();
	cr_assert_eq(tr_count(tr, LIN_REC_GRAPH_LAUNCH), 0);
	cr_assert_eq(tr_count(tr, LIN_REC_LAUNCH), 1, "the launch itself is recorded");
}

/* Late work (docs/trace-format.md, "Late work"): a replay by a task whose epoch was
 * re-issued, or retired, since its token was captured mints no replay epoch: a plain
 * bracket pushes the epoch with its late bit, and it is no error. On time: a replay epoch. */
static void late_replay(bool reissue, uint64_t bit)
{
	uint64_t ep = new_epoch(new_request());
	lin_scope es, late;
	lin_token tok;
	lin_graph_launch gl;

	cr_assert_eq(lin_graph_exec_instantiated(gt, 5, 72), 0);
	cr_assert_eq(lin_scope_enter(rt, ep, &es), 0);
	cr_assert_eq(lin_token_capture(rt, &tok), 0);
	cr_assert_eq(lin_graph_launch_begin(gt, 72, NULL, &gl), 0);
	cr_assert_neq(gl.replay_epoch, 0, "on time: a replay epoch");
	cr_assert_eq(lin_graph_launch_end(gt, &gl), 0);
	cr_assert_eq(lin_scope_exit(rt, &es), 0);
	if (reissue)
		cr_assert_eq(lin_epoch_reissue(rt, ep, LIN_REISSUE_RETRY, NULL), 0);
	else
		cr_assert_eq(lin_epoch_retire(rt, ep), 0);
	cr_assert_eq(lin_token_adopt(rt, &tok, &late), 0);
	cr_assert_eq(lin_graph_launch_begin(gt, 72, NULL, &gl), 0, "late work is no error");
	cr_assert_eq(gl.replay_epoch, 0, "no replay epoch under an ended version");
	cr_assert_eq(atomic_load(&last_push), ep | bit, "the epoch, with its late bit");
	cr_assert_eq(lin_graph_launch_end(gt, &gl), 0);
	cr_assert_eq(lin_scope_exit(rt, &late), 0);
	load();
	cr_assert_eq(tr_count(tr, LIN_REC_GRAPH_LAUNCH), 1, "only the on-time replay's");
}

Test(graph, a_late_replay_pushes_its_epoch_late_after_reissue)
{
	late_replay(true, LIN_EXT_LATE_REISSUED);
}

Test(graph, a_late_replay_pushes_its_epoch_late_after_retire)
{
	late_replay(false, LIN_EXT_LATE_ENDED);
}

/* Under a request (no epoch) the replay serves that request. */
Test(graph, launch_under_request)
{
	uint64_t req = new_request();
	lin_graph_launch gl;
	lin_scope sc;

	cr_assert_eq(lin_scope_enter(rt, req, &sc), 0);
	cr_assert_eq(lin_graph_launch_begin(gt, 71, NULL, &gl), 0);
	cr_assert_neq(gl.replay_epoch, 0);
	cr_assert_eq(gl.ordinal, 1);
	cr_assert_eq(lin_graph_launch_end(gt, &gl), 0);
	cr_assert_eq(lin_scope_exit(rt, &sc), 0);
	load();
	size_t g = tr_find(tr, LIN_REC_GRAPH_LAUNCH, 0);
	cr_assert(tr_is_nil(tr, g, L_EPOCH));
	for (size_t i = 0; i < tr->n; i++)
		if (tr_type(tr, i) == LIN_REC_EPOCH_DECLARE && tr_u(tr, i, 3) == gl.replay_epoch) {
			const msgpack_object *reqs = tr_field(tr, i, 5);
			cr_assert_eq(reqs->via.array.size, 1);
			cr_assert_eq(reqs->via.array.ptr[0].via.u64, req);
		}
}

Test(graph, update_rebinds_node)
{
	uint64_t e1 = new_epoch(new_request()), e2 = new_epoch(new_request()), got;
	lin_scope sc;

	cr_assert_eq(lin_scope_enter(rt, e1, &sc), 0);
	cr_assert_eq(lin_graph_node_created(gt, 5, 0x500000001ull), 0);
	cr_assert_eq(lin_scope_exit(rt, &sc), 0);
	cr_assert_eq(lin_graph_node_cloned(gt, 0x500000001ull, 0x500000101ull, 5, 50), 0);
	cr_assert_eq(lin_scope_enter(rt, e2, &sc), 0);
	cr_assert_eq(lin_graph_node_updated(gt, 0x500000101ull), 0);
	cr_assert_eq(lin_scope_exit(rt, &sc), 0);
	cr_assert_eq(lin_graph_node_origin(gt, 0x500000101ull, &got, NULL), 0);
	cr_assert_eq(got, e2, "the updated exec node belongs to the updating epoch");
	cr_assert_eq(lin_graph_node_origin(gt, 0x500000001ull, &got, NULL), 0);
	cr_assert_eq(got, e1, "the application's node is unchanged");
	load();
	size_t u = tr_find(tr, LIN_REC_GRAPH_NODE_UPDATE, 0);
	cr_assert_eq(tr_nfields(tr, u), LIN_REC_NFIELDS_GRAPH_NODE_UPDATE);
	cr_assert_eq(tr_u(tr, u, 3), 0x500000101ull);
	cr_assert_eq(tr_u(tr, u, 4), e2);
}

Test(graph, destroy_forgets)
{
	uint64_t got, ord;

	cr_assert_eq(lin_graph_node_created(gt, 5, 0x500000001ull), 0);
	cr_assert_eq(lin_graph_node_cloned(gt, 0x500000001ull, 0x500000101ull, 5, 50), 0);
	cr_assert_eq(lin_graph_exec_instantiated(gt, 5, 50), 0);
	cr_assert_eq(lin_graph_exec_destroyed(gt, 50), 0);
	cr_assert_eq(lin_graph_exec_ordinal(gt, 50, &ord), -LIN_ENOTFOUND);
	cr_assert_eq(lin_graph_node_origin(gt, 0x500000101ull, &got, NULL), -LIN_ENOTFOUND);
	cr_assert_eq(lin_graph_node_origin(gt, 0x500000001ull, &got, NULL), 0);
	cr_assert_eq(lin_graph_destroyed(gt, 5), 0);
	cr_assert_eq(lin_graph_node_origin(gt, 0x500000001ull, &got, NULL), -LIN_ENOTFOUND);
	cr_assert_eq(lin_graph_destroyed(gt, 5), -LIN_ENOTFOUND);
	cr_assert_eq(lin_graph_exec_destroyed(gt, 50), -LIN_ENOTFOUND);
	LIN_TEST_CHECK_LEAKS();
}

Test(graph, maps_are_bounded)
{
	struct lin_graph_tracker_opts o = { .sz = sizeof(o), .max_nodes = 4, .max_execs = 2 };
	lin_graph_tracker *small;
	uint64_t got;

	cr_assert_eq(lin_graph_tracker_create(rt, &o, &small), 0);
	for (uint64_t i = 1; i <= 4; i++)
		cr_assert_eq(lin_graph_node_created(small, 9, i), 0);
	cr_assert_eq(lin_graph_node_created(small, 9, 5), -ENOSPC);
	cr_assert_eq(lin_graph_node_origin(small, 5, &got, NULL), -LIN_ENOTFOUND);
	cr_assert_eq(lin_graph_exec_instantiated(small, 9, 90), 0);
	cr_assert_eq(lin_graph_exec_instantiated(small, 9, 91), 0);
	cr_assert_eq(lin_graph_exec_instantiated(small, 9, 92), -ENOSPC);
	lin_graph_launch gl;
	cr_assert_eq(lin_graph_launch_begin(small, 93, NULL, &gl), -LIN_ENOCONTEXT);
	cr_assert_eq(lin_graph_launch_end(small, &gl), 0);
	cr_assert_eq(lin_graph_exec_destroyed(small, 90), 0);
	cr_assert_eq(lin_graph_exec_instantiated(small, 9, 92), 0, "room again after destroy");
	lin_graph_tracker_free(small);
	load();
	cr_assert_eq(tr_count(tr, LIN_REC_GRAPH_NODE), 5, "records are written past the bound");
	LIN_TEST_CHECK_LEAKS();
}

/* An sz that ends inside max_nodes (or max_execs) leaves that bound at its default: a
 * field is read only when the caller's struct holds all of it. */
Test(graph, partial_size_reads_whole_fields_only)
{
	static const size_t szs[] = { offsetof(struct lin_graph_tracker_opts, max_nodes) + 2,
				      offsetof(struct lin_graph_tracker_opts, max_execs) + 2,
				      sizeof(struct lin_graph_tracker_opts) };
	for (size_t k = 0; k < 3; k++) {
		struct lin_graph_tracker_opts o = { .sz = szs[k], .max_nodes = 0x10003, .max_execs = 0x10002 };
		lin_graph_tracker *g;
		int nodes = 0, execs = 0;
		cr_assert_eq(lin_graph_tracker_create(rt, &o, &g), 0);
		for (uint64_t i = 1; i <= 6; i++) {
			nodes += lin_graph_node_created(g, 9, i) == 0;
			execs += lin_graph_exec_instantiated(g, 9, 100 + i) == 0;
		}
		/* Whole max_nodes read (sz past it): 0x10003 nodes; cut inside: the default. */
		cr_assert_eq(nodes, 6, "sz %zu: max_nodes cut to its low bytes", szs[k]);
		cr_assert_eq(execs, 6, "sz %zu: max_execs cut to its low bytes", szs[k]);
		lin_graph_tracker_free(g);
	}
	LIN_TEST_CHECK_LEAKS();
}

Test(graph, bad_arguments)
{
	struct lin_graph_tracker_opts bad[2];
	lin_graph_tracker *g2;
	lin_graph_capture cap;
	lin_graph_launch gl;

	memset(bad, 0, sizeof(bad));
	bad[0].sz = sizeof(bad);
	((unsigned char *)bad)[sizeof(bad[0])] = 1;
	cr_assert_eq(lin_graph_tracker_create(rt, &bad[0], &g2), -EINVAL, "unknown trailing bytes");
	cr_assert_eq(lin_graph_tracker_create(NULL, NULL, &g2), -EINVAL);
	cr_assert_eq(lin_graph_node_created(gt, 0, 1), -EINVAL);
	cr_assert_eq(lin_graph_node_created(gt, 1, 0), -EINVAL);
	cr_assert_eq(lin_graph_node_cloned(gt, 1, 1, 0, 0), -EINVAL);
	cr_assert_eq(lin_graph_capture_begin(NULL, &cap), -EINVAL);
	cr_assert_eq(lin_graph_capture_end(gt, NULL, 1, NULL, 0), -EINVAL);
	cr_assert_eq(lin_graph_launch_begin(gt, 0, NULL, &gl), -EINVAL);
	cr_assert_eq(lin_graph_launch_end(NULL, &gl), -EINVAL);
	cr_assert_eq(lin_graph_node_origin(gt, 0, NULL, NULL), -EINVAL);
	lin_graph_tracker_free(NULL);
}
