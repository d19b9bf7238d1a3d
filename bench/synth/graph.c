/* SPDX-License-Identifier: MIT */
/*
 * graph.c - stream capture, instantiation and graph launch under each strategy. Only the
 * epoch strategy tells lineage's graph tracker (node origins, clone map, replay epochs).
 * The others see graphNodeId and correlationId, and put around the graph launch what they
 * have there (synth_replay_begin): every kernel of a replay shares the graph launch's
 * correlationId, so it joins whatever the replay site joins. kineto and nvtx have no op
 * or range of their own around a replay (PyTorch's CUDAGraph::replay makes none): where
 * no request is open, nothing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "lineage/trace_format.h"
#include "synth.h"

#define MAX_NODES 64

static inline uint64_t ticks(void)
{
#if defined(__x86_64__) || defined(__i386__)
	return __builtin_ia32_rdtsc();
#else
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
#endif
}

static void check(int r, const char *what)
{
	if (r) {
		fprintf(stderr, "lineage-synth: %s failed: %d\n", what, r);
		exit(1);
	}
}

static void track_instantiate(struct synth *sx, uint32_t graph, uint32_t exec,
			      const struct lin_sim_node *map, size_t n)
{
	check(lin_graph_exec_instantiated(sx->gt, graph, exec), "lin_graph_exec_instantiated");
	for (size_t i = 0; i < n; i++)
		check(lin_graph_node_cloned(sx->gt, map[i].original, map[i].clone, graph, exec),
		      "lin_graph_node_cloned");
}

uint32_t synth_graph_build(struct synth *sx, struct synth_task *t, const char *const *names, size_t n)
{
	return synth_graph_build_ex(sx, t, names, NULL, n);
}

uint32_t synth_graph_build_ex(struct synth *sx, struct synth_task *t, const char *const *names,
			      const uint64_t *durs, size_t n)
{
	bool track = sx->o.strategy == SYNTH_EPOCH;
	lin_graph_capture cap;
	if (track)
		check(lin_graph_capture_begin(sx->gt, &cap), "lin_graph_capture_begin");
	check(lin_sim_capture_begin(sx->sim, t->stream), "capture begin");
	for (size_t i = 0; i < n; i++) {
		struct synth_call c;
		synth_call_begin(sx, t, names[i], &c, false);
		struct lin_sim_launch l = { .dur_ns = durs ? durs[i] : 0 };
		(void)lin_sim_launch_kernel_ex(sx->sim, t->stream, names[i], &l); /* becomes a node */
		synth_call_end(sx, t, &c);
	}
	uint64_t nodes[MAX_NODES];
	size_t nn = 0;
	uint32_t graph = lin_sim_capture_end(sx->sim, t->stream, nodes, MAX_NODES, &nn);
	if (!graph || nn != n) {
		fprintf(stderr, "lineage-synth: capture gave %zu nodes, want %zu\n", nn, n);
		exit(1);
	}
	if (track) {
		check(lin_graph_capture_end(sx->gt, &cap, graph, nodes, nn), "lin_graph_capture_end");
		/* One stream captured in order: each node runs after the one before it (what
		 * cudaGraphGetEdges returns for such a capture). */
		check(lin_graph_edges(sx->gt, graph, nodes, nodes + 1, nn ? nn - 1 : 0),
		      "lin_graph_edges");
	}
	struct lin_sim_node map[MAX_NODES];
	uint32_t exec = lin_sim_graph_instantiate(sx->sim, graph, map, MAX_NODES, &nn);
	if (!exec) {
		fprintf(stderr, "lineage-synth: instantiate failed (graph %u)\n", graph);
		exit(1);
	}
	if (track)
		track_instantiate(sx, graph, exec, map, nn);
	return exec;
}

void synth_graph_launch(struct synth *sx, struct synth_task *t, uint32_t exec)
{
	synth_graph_launch_ex(sx, t, exec, NULL, 0);
}

void synth_graph_launch_ex(struct synth *sx, struct synth_task *t, uint32_t exec,
			   struct lin_sim_launch *nodes, size_t cap)
{
	int64_t grids[MAX_NODES];
	size_t n;
	bool open = synth_request_open();
	if (sx->o.strategy == SYNTH_EPOCH) {
		lin_graph_launch gl;
		uint64_t t0 = ticks();
		(void)lin_graph_launch_begin(sx->gt, exec, "cudaGraphLaunch", &gl);
		uint64_t t1 = ticks();
		n = lin_sim_graph_launch_ex(sx->sim, exec, t->stream, grids, MAX_NODES, nodes, cap);
		uint64_t t2 = ticks();
		check(lin_graph_launch_end(sx->gt, &gl), "lin_graph_launch_end");
		uint64_t t3 = ticks();
		atomic_fetch_add_explicit(&sx->strategy_ticks, (t1 - t0) + (t3 - t2),
					  memory_order_relaxed);
		atomic_fetch_add_explicit(&sx->measures, 2, memory_order_relaxed);
		atomic_fetch_add_explicit(&sx->launches, 1, memory_order_relaxed);
		t->cost_ticks += (t1 - t0) + (t3 - t2);
		t->cost_measures += 2;
		t->cost_launches++;
	} else {
		struct synth_call c;
		synth_replay_begin(sx, t, &c);
		n = lin_sim_graph_launch_ex(sx->sim, exec, t->stream, grids, MAX_NODES, nodes, cap);
		synth_call_end(sx, t, &c);
	}
	bool dropped = lin_sim_last_call_dropped(sx->sim);
	if (!open && !dropped)
		atomic_fetch_add(&sx->bare_replays, n < MAX_NODES ? n : MAX_NODES);
	pthread_mutex_lock(&sx->truth_mu);
	for (size_t i = 0; i < n && i < MAX_NODES; i++)
		synth_truth_add(&sx->truth, LIN_REC_KERNEL, (uint64_t)grids[i], t->req, t->nreq);
	pthread_mutex_unlock(&sx->truth_mu);
	synth_count(sx, t, n, dropped);
}
