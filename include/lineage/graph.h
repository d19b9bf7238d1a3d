/* SPDX-License-Identifier: MIT */
/*
 * lineage/graph.h - CUDA graph identity for applications that bind it themselves (no CUPTI
 * callbacks): which epoch created each node, which exec node is a clone of which, and one
 * replay epoch per graph launch. docs/graphs.md explains the model.
 *
 * Ids are the caller's: use CUPTI's ids (cuptiGetGraphNodeId, cuptiGetGraphId,
 * cuptiGetGraphExecId) so that kernel records' graphId/graphNodeId join with them; any
 * other stable non-zero 64-bit ids still give a consistent host-side graph record.
 *
 * Every call writes its record into the runtime's trace at once (under the output lock);
 * the tracker keeps bounded maps (nodes, clones, execs) so origins can be looked up and
 * replay ordinals counted, and forgets what a destroyed graph or exec owned.
 */
#ifndef LINEAGE_GRAPH_H
#define LINEAGE_GRAPH_H

#include <stddef.h>
#include <stdint.h>

#include "lineage/common.h"
#include "lineage/runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct lin_graph_tracker lin_graph_tracker;

/* Creation options; NULL = defaults. Set sz = sizeof(struct lin_graph_tracker_opts). */
struct lin_graph_tracker_opts {
	size_t sz;
	uint32_t max_nodes; /* nodes and clones remembered; 0 = 1 << 20 */
	uint32_t max_execs; /* execs remembered; 0 = 1 << 16 */
};

/*
 * lin_graph_tracker_create - a graph tracker writing into @rt's trace.
 * Return: 0; -EINVAL (NULL @rt/@out, bad opts); -ENOMEM.
 * Ownership: free with lin_graph_tracker_free before lin_runtime_free(@rt).
 * Context: any thread. Since: 0.1
 */
LIN_API int lin_graph_tracker_create(lin_runtime *rt, const struct lin_graph_tracker_opts *opts,
				     lin_graph_tracker **out);

/*
 * lin_graph_tracker_free - forget everything. NULL accepted.
 * Context: any thread, once no other call on @gt is in flight or can start; before
 * lin_runtime_free of its runtime. Since: 0.1
 */
LIN_API void lin_graph_tracker_free(lin_graph_tracker *gt);

/*
 * struct lin_graph_capture - an open stream capture: the epoch current on the capturing
 * thread when it began. A value; pass it to lin_graph_capture_end.
 */
typedef struct lin_graph_capture {
	uint64_t epoch; /* 0: capture began outside any epoch */
	uint32_t version;
	uint32_t tid;
	uint64_t host_ns;
} lin_graph_capture;

/*
 * lin_graph_capture_begin - call around cudaStreamBeginCapture: remembers the calling
 * thread's current epoch; the captured nodes will belong to it.
 * Return: 0; -LIN_ENOCONTEXT (no current epoch: *@cap is still valid, its nodes get a nil
 * epoch); -EINVAL. Context: the capturing thread; no allocation. Since: 0.1
 */
LIN_API int lin_graph_capture_begin(lin_graph_tracker *gt, lin_graph_capture *cap);

/*
 * lin_graph_capture_end - after cudaStreamEndCapture: record the @n nodes of graph
 * @graph_id (e.g. from cudaGraphGetNodes + cuptiGetGraphNodeId) as captured under @cap.
 * Return: 0; -EINVAL (NULL, zero ids); -ENOSPC (node map full: records are still written,
 * lin_graph_node_origin will not find the excess). -LIN_ETRACE (no trace).
 * Context: any thread. Since: 0.1
 */
LIN_API int lin_graph_capture_end(lin_graph_tracker *gt, const lin_graph_capture *cap,
				  uint64_t graph_id, const uint64_t *nodes, size_t n);

/*
 * lin_graph_edges - graph @graph_id's dependencies: node @to[i] runs after node @from[i]
 * (the application's node ids, as given to capture_end or node_created: e.g. from
 * cudaGraphGetEdges + cuptiGetGraphNodeId), @n of them; one graph_edge record each, or, for
 * @n = 0, one saying the graph has no edge. Call once per graph, when it is complete and
 * before instantiating it (after capture_end, or after the last cudaGraphAddDependencies):
 * an exec has the topology its graph had when instantiated, so lineage-explain applies
 * edges only to execs instantiated after them, and none of a graph whose topology was
 * recorded as both "no edge" and edges. It then knows what each node's kernel waited for
 * inside a replay (docs/ledger.md, "graph_edge"); a graph whose edges are not given stays
 * graph_dependency_unknown there.
 * Return: 0; -EINVAL (NULL arrays with @n > 0, a zero id, a node its own predecessor:
 * nothing written); -LIN_ETRACE. Context: any thread; takes the output lock; no
 * allocation. Since: 0.5
 */
LIN_API int lin_graph_edges(lin_graph_tracker *gt, uint64_t graph_id, const uint64_t *from,
			    const uint64_t *to, size_t n);

/*
 * lin_graph_node_created - a node was added explicitly (cudaGraphAdd*Node) by the calling
 * thread: it belongs to that thread's current epoch (nil if none).
 * Return: 0; -EINVAL; -ENOSPC (as capture_end); -LIN_ETRACE. Context: creating thread.
 * Since: 0.1
 */
LIN_API int lin_graph_node_created(lin_graph_tracker *gt, uint64_t graph_id, uint64_t node_id);

/*
 * lin_graph_exec_instantiated - @exec_id was instantiated from @graph_id; its replay
 * ordinals start at 1. Instantiating again under an id already known restarts nothing: the
 * ordinals go on. Return: 0; -EINVAL; -ENOSPC (exec map full); -LIN_ETRACE.
 * Context: any thread (no epoch is read); may allocate; takes the tracker's lock, then the
 * output lock. Since: 0.1
 */
LIN_API int lin_graph_exec_instantiated(lin_graph_tracker *gt, uint64_t graph_id, uint64_t exec_id);

/*
 * lin_graph_node_cloned - instantiation cloned @original (a node the application created)
 * into @clone (the node kernel records of @exec_id name). @graph_id, @exec_id: 0 if unknown.
 * Return: 0; -EINVAL; -ENOSPC; -LIN_ETRACE.
 * Context: any thread (no epoch is read); may allocate; takes the tracker's lock, then the
 * output lock. Since: 0.1
 */
LIN_API int lin_graph_node_cloned(lin_graph_tracker *gt, uint64_t original, uint64_t clone,
				  uint64_t graph_id, uint64_t exec_id);

/*
 * lin_graph_node_updated - a node's parameters were changed (cudaGraphExecKernelNodeSetParams,
 * cudaGraphExecUpdate, ...) by the calling thread: the node's work now belongs to its
 * current epoch; written as a graph_node_update record; lookups see the new epoch.
 * Return: 0; -EINVAL; -LIN_ETRACE.
 * Context: the updating thread (its current epoch is read); takes the tracker's lock, then
 * the output lock; no allocation. Since: 0.1
 */
LIN_API int lin_graph_node_updated(lin_graph_tracker *gt, uint64_t node_id);

/*
 * lin_graph_exec_destroyed / lin_graph_destroyed - forget an exec (with its clones) or a
 * graph (with its nodes). No record is written. Return: 0; -LIN_ENOTFOUND; -EINVAL (NULL).
 * Context: any thread; takes the tracker's lock and frees. Since: 0.1
 */
LIN_API int lin_graph_exec_destroyed(lin_graph_tracker *gt, uint64_t exec_id);
LIN_API int lin_graph_destroyed(lin_graph_tracker *gt, uint64_t graph_id);

/* An open graph launch. A value; pass it to lin_graph_launch_end on the same thread. */
typedef struct lin_graph_launch {
	uint64_t replay_epoch; /* 0 when no replay epoch was minted */
	uint64_t ordinal;      /* 1, 2, ... per exec; 0 when none */
	lin_scope scope;
	lin_launch launch;
	uint32_t flags;
} lin_graph_launch;

/*
 * lin_graph_launch_begin - call right before cudaGraphLaunch(@exec_id): mints a replay
 * epoch (parent: the current epoch, serving its requests) with the exec's next ordinal,
 * enters it and brackets the launch with lin_launch_begin, so the replay epoch is what the
 * backend pushes. Writes a graph_launch record. Under a late scope (the current epoch
 * retired or was re-issued since it was adopted: docs/trace-format.md, "Late work") no
 * replay epoch is minted: a plain lin_launch_begin is made, which pushes the epoch with its
 * late bit, and 0 is returned.
 * @name: as for lin_launch_begin (not copied). @gl: receives the open launch.
 * Return: 0; -LIN_ENOCONTEXT (no current epoch: a plain lin_launch_begin is made);
 * -ENOSPC (exec map full: likewise); -LIN_ENOTFOUND and other errors of lin_epoch_declare
 * and lin_scope_enter (the replay epoch could not be minted: likewise); -LIN_EBACKEND (push
 * failed; replay still recorded); -EINVAL. In every case but -EINVAL, @gl is valid for
 * lin_graph_launch_end, and a bracket is open unless lin_launch_begin refused it.
 * Context: launching thread. Allocates (the replay epoch) and takes the output lock: a
 * graph launch costs more than lin_launch_begin. Since: 0.1
 */
LIN_API int lin_graph_launch_begin(lin_graph_tracker *gt, uint64_t exec_id, const char *name,
				   lin_graph_launch *gl);

/*
 * lin_graph_launch_end - right after cudaGraphLaunch returns: ends the launch, leaves the
 * replay epoch and retires it (its kernels still join through the trace).
 * Return: 0; errors of lin_launch_end / lin_scope_exit; -EINVAL.
 * Context: the thread that called lin_graph_launch_begin for @gl (the launch bracket and
 * the replay epoch's scope are that thread's). Since: 0.1
 */
LIN_API int lin_graph_launch_end(lin_graph_tracker *gt, lin_graph_launch *gl);

/*
 * lin_graph_node_origin - the epoch a node (or the node a clone came from) belongs to.
 * @epoch, @version: set (0 if the node was created outside any epoch); may be NULL.
 * Return: 0; -LIN_ENOTFOUND (unknown, forgotten, or past the map's bound); -EINVAL.
 * Context: any thread. Since: 0.1
 */
LIN_API int lin_graph_node_origin(lin_graph_tracker *gt, uint64_t node_id, uint64_t *epoch,
				  uint32_t *version);

/*
 * lin_graph_exec_ordinal - the last replay ordinal minted for @exec_id (0 before the first).
 * Return: 0; -LIN_ENOTFOUND; -EINVAL. Context: any thread. Since: 0.1
 */
LIN_API int lin_graph_exec_ordinal(lin_graph_tracker *gt, uint64_t exec_id, uint64_t *ordinal);

#ifdef __cplusplus
}
#endif
#endif
