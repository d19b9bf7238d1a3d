/* SPDX-License-Identifier: MIT */
/*
 * ingest_gpu.c - the validator's reading of GPU activity records (kernel, memcpy, memset,
 * graph_trace): time order, duplicates, and the record the join layer resolves.
 */
#include <stdlib.h>

#include "lineage/trace_format.h"
#include "vstate.h"

static void gpu_times(struct lin_validator *v, uint32_t file, const struct lin_rec *r, uint64_t *t0)
{
	static const char *const kn[] = { "queued_dev", "submitted_dev", "start_dev", "end_dev" };
	uint64_t t[4] = { LIN_NIL, LIN_NIL, LIN_OPT(r, GPU, START_DEV), LIN_OPT(r, GPU, END_DEV) };
	if (r->type == LIN_REC_KERNEL) {
		t[0] = LIN_OPT(r, KERNEL, QUEUED_DEV);
		t[1] = LIN_OPT(r, KERNEL, SUBMITTED_DEV);
	}
	int prev = -1;
	*t0 = LIN_NIL;
	for (int i = 0; i < 3 && *t0 == LIN_NIL; i++)
		*t0 = t[i];
	for (int i = 0; i < 4; i++) {
		if (t[i] == LIN_NIL)
			continue;
		if (prev >= 0 && t[i] < t[prev]) {
			const char *n[] = { "correlation", kn[prev], kn[i] };
			uint64_t ids[] = { LIN_GET(r, GPU, CORRELATION), t[prev], t[i] };
			lin_v_structural(v, "time_order", file, r, 3, n, ids);
			return;
		}
		prev = i;
	}
}

/* The same GPU record read twice: a kernel's grid id is unique in its context; any other
 * record by its correlation and what places it (start, end, device, stream, and for a
 * graph record its node: a replay's nodes share its correlation, and two may start in the
 * same tick of the GPU's timer). */
static uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	return x ^ (x >> 33);
}

/* The graph id and node id of a GPU record; a graph_trace record (a whole replay, when
 * graph-level tracing is on) has a graph id and no node. */
struct graph_ids {
	bool has_graph, has_node;
	uint64_t node; /* LIN_NIL when nil */
};

static struct graph_ids graph_ids(const struct lin_rec *r)
{
	switch (r->type) {
	case LIN_REC_KERNEL:
		return (struct graph_ids){ !LIN_IS_NIL(r, KERNEL, GRAPH_ID),
					   !LIN_IS_NIL(r, KERNEL, GRAPH_NODE_ID),
					   LIN_OPT(r, KERNEL, GRAPH_NODE_ID) };
	case LIN_REC_GRAPH_TRACE:
		return (struct graph_ids){ !LIN_IS_NIL(r, GRAPH_TRACE, GRAPH_ID), false, LIN_NIL };
	case LIN_REC_MEMCPY:
		return (struct graph_ids){ !LIN_IS_NIL(r, MEMCPY, GRAPH_ID),
					   !LIN_IS_NIL(r, MEMCPY, GRAPH_NODE_ID),
					   LIN_OPT(r, MEMCPY, GRAPH_NODE_ID) };
	default:
		return (struct graph_ids){ !LIN_IS_NIL(r, MEMSET, GRAPH_ID),
					   !LIN_IS_NIL(r, MEMSET, GRAPH_NODE_ID),
					   LIN_OPT(r, MEMSET, GRAPH_NODE_ID) };
	}
}

static bool duplicate(struct lin_validator *v, uint16_t proc, uint32_t file,
		      const struct lin_rec *r, struct graph_ids gi)
{
	bool dup = false;
	uint64_t key = LIN_NIL;
	bool graph = r->type == LIN_REC_GRAPH_TRACE || gi.has_graph || gi.has_node;
	bool grid = r->type == LIN_REC_KERNEL && !LIN_IS_NIL(r, KERNEL, GRID_ID);
	if (grid && !graph) {
		key = LIN_GET(r, KERNEL, GRID_ID);
		dup = lin_v_page_bit(v, &v->grids, lin_k1(proc, LIN_GET(r, KERNEL, CONTEXT)), key, true);
	} else if (grid && !LIN_IS_NIL(r, KERNEL, CORRELATION)) {
		/* A graph node's kernel has the same grid id in every replay (seen on an H200):
		 * one record per replay, by the replay's correlation, the grid id and the node. */
		bool fresh;
		key = LIN_GET(r, KERNEL, GRID_ID);
		uint64_t h = mix64(key ^ 0x27d4eb2f165667c5ull) ^ mix64(gi.node);
		if (!lin_vtab_get(&v->gmemops, h, lin_k1(proc, LIN_GET(r, KERNEL, CORRELATION)), &fresh))
			v->oom = true;
		else
			dup = !fresh;
	} else if (!LIN_IS_NIL(r, GPU, CORRELATION) && !LIN_IS_NIL(r, GPU, START_DEV)) {
		/* No grid id: a graph record by its replay's correlation and its start; any other
		 * (a memcpy or memset, possibly one of several of a batched call, which share one
		 * correlation) by its correlation and everything that places it: start, end,
		 * device, stream. Two real records never agree on all of them. */
		bool fresh;
		key = mix64(LIN_GET(r, GPU, START_DEV)) ^
		      mix64(LIN_OPT(r, GPU, END_DEV) + 0x9e3779b97f4a7c15ull) ^
		      mix64((LIN_GET(r, GPU, DEVICE) << 32) ^ LIN_GET(r, GPU, STREAM) ^
			    0xc2b2ae3d27d4eb4full);
		if (graph) /* two nodes of one replay may start in the same timer tick */
			key ^= mix64((r->type == LIN_REC_GRAPH_TRACE ? LIN_GET(r, GRAPH_TRACE, GRAPH_ID)
								     : gi.node) ^
				     0x165667b19e3779f9ull);
		if (!lin_vtab_get(&v->gmemops, key, lin_k1(proc, LIN_GET(r, GPU, CORRELATION)), &fresh))
			v->oom = true;
		else
			dup = !fresh;
	}
	if (!dup)
		return false;
	static const char *const n[] = { "correlation", "key" };
	uint64_t ids[] = { LIN_OPT(r, GPU, CORRELATION), key };
	v->sum.duplicates++;
	lin_v_structural(v, "duplicate_gpu_record", file, r, 2, n, ids);
	return true;
}

void lin_v_on_gpu(struct lin_validator *v, uint16_t proc, uint32_t file, const struct lin_rec *r)
{
	struct lin_gpu g = { 0 };
	v->sum.gpu_records++;
	v->procs[proc].gpu_records++;
	struct graph_ids gi = graph_ids(r);
	if (duplicate(v, proc, file, r, gi))
		return;
	gpu_times(v, file, r, &g.t0);
	g.corr = LIN_IS_NIL(r, GPU, CORRELATION) ? 0 : LIN_GET(r, GPU, CORRELATION);
	v->procs[proc].gpu_called += g.corr != 0;
	g.kind = (uint8_t)r->type;
	g.proc = proc;
	g.file = file;
	g.offset = r->offset;
	g.index = r->index;
	bool whole = r->type == LIN_REC_GRAPH_TRACE;
	if (whole || gi.has_graph || gi.has_node)
		g.flags |= LIN_G_GRAPH;
	g.node = whole || !gi.has_node ? 0 : gi.node;
	if (r->type == LIN_REC_KERNEL) {
		if (LIN_GET(r, KERNEL, DEVICE_LAUNCHED))
			g.flags |= LIN_G_DEVLAUNCH;
		if (!LIN_IS_NIL(r, KERNEL, GRID_ID)) {
			g.key = LIN_GET(r, KERNEL, GRID_ID);
			g.flags |= LIN_G_KEY;
		}
		lin_v_string_ref(v, proc, file, r, LIN_F_KERNEL_NAME_SID);
	} else if (!LIN_IS_NIL(r, GPU, START_DEV)) {
		g.key = LIN_GET(r, GPU, START_DEV);
		g.flags |= LIN_G_KEY;
	}
	lin_v_gpu(v, &g);
}
