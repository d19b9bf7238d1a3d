/* SPDX-License-Identifier: MIT */
/*
 * graph_edge.c - the graph_edge rule (docs/ledger.md, "Rules"): a graph node's kernel in a
 * replay is ready when every predecessor of its node has run in the same replay. Its
 * prepare sorts the graph_edge records and indexes the replays' GPU records by the
 * application's node; left out (LIN_XW_GRAPH_EDGE), a graph node's readiness is
 * graph_dependency_unknown, as without edge records (marks.c).
 */
#include "rule.h"

static int cmp_edge(const void *pa, const void *pb)
{
	const struct lin_xedge *a = pa, *b = pb;
	int k = cmp_u64(a->proc, b->proc);
	return k ? k : cmp_u64(a->to, b->to);
}

/* The GPU records of graph nodes by (the application's node their clone was made from, the
 * replay's correlation, process): a replay runs each node once, so two records under one
 * key (or a clone of two originals) leave it unusable. One lookup per edge, however many
 * times the graph was instantiated. */
static bool graph_index(struct lin_xbuild *b)
{
	struct lin_explain *x = b->x;
	lin_x_vsort(&x->edges, cmp_edge);
	for (size_t i = 0; i < b->n; i++) {
		const struct lin_xgpu *g = gpu_at(b, i);
		if (!(g->flags & LIN_XG_GRAPH) || g->proc == LIN_XPROC_IMPORTED ||
		    g->node == LIN_NIL || g->corr == LIN_NIL || (g->flags & LIN_XG_DUP))
			continue;
		const uint64_t *orig = lin_vtab_find(&x->clone_of, g->node, pk1(g->proc, 0));
		if (!orig || *orig == UINT64_MAX)
			continue;
		bool fresh;
		size_t *e = lin_vtab_get(&x->bynode, *orig, pk1(g->proc, g->corr), &fresh);
		if (!e)
			return false;
		*e = fresh ? i : SIZE_MAX;
	}
	return true;
}

/*
 * The graph_edge rule: a node's kernel in a replay is ready when every predecessor of its
 * node (graph_edge records of its graph, through graph_node_clone to the application's
 * node and back to the predecessors' clones) has run in the same replay (same
 * correlation). Premise, checked: the graph's topology is recorded, the clone maps to one
 * node, and every predecessor's GPU record of that replay is in the trace and ended before
 * record @i (@g) started. On success *@t, *@err: the latest predecessor end (host), *@by its record;
 * else the how of the unknown.
 */
static enum lin_how graph_ready(const struct lin_xbuild *b, size_t i, uint64_t *t, uint64_t *err,
				size_t *by)
{
	const struct lin_xgpu *g = gpu_at(b, i);
	const struct lin_explain *x = b->x;
	const uint64_t *orig = g->node == LIN_NIL || g->corr == LIN_NIL
				       ? NULL
				       : lin_vtab_find(&x->clone_of, g->node, pk1(g->proc, 0));
	const uint64_t *graph = orig && *orig != UINT64_MAX
					? lin_vtab_find(&x->node_graph, *orig, pk1(g->proc, 0))
					: NULL;
	const struct lin_xtopo *topo = graph ? lin_vtab_find(&x->topo, *graph, pk1(g->proc, 0)) : NULL;
	const uint64_t *at = topo ? lin_vtab_find(&x->clone_at, g->node, pk1(g->proc, 0)) : NULL;
	/* The exec took its graph's topology when it was instantiated: edges recorded after its
	 * clones (or in another file, order unknown) may not be its own; a topology recorded
	 * as both "no edge" and edges is in doubt. */
	if (!topo || !at || (topo->nil && topo->edges) || (*at >> 40) != (topo->last >> 40) ||
	    *at < topo->last)
		return LIN_HOW_GRAPH_DEPENDENCY_UNKNOWN;
	const struct lin_xedge *e = (const struct lin_xedge *)x->edges.data;
	struct lin_xedge key = { .to = *orig, .proc = g->proc };
	size_t lo = 0, hi = x->edges.n, npred = 0;
	while (lo < hi) { /* the first edge into the node */
		size_t mid = (lo + hi) / 2;
		if (cmp_edge(&e[mid], &key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	*t = LIN_NIL;
	for (; lo < x->edges.n && !cmp_edge(&e[lo], &key); lo++, npred++) {
		/* The predecessor's record in this replay; an edge of another graph (the node's
		 * id named in two graphs) leaves the topology in doubt. */
		if (e[lo].graph != *graph)
			return LIN_HOW_GRAPH_DEPENDENCY_UNKNOWN;
		const size_t *r = lin_vtab_find(&x->bynode, e[lo].from, pk1(g->proc, g->corr));
		size_t found = r ? *r : SIZE_MAX;
		if (found == SIZE_MAX || b->he[found] == LIN_NIL || gpu_at(b, found) == g)
			return LIN_HOW_GRAPH_DEPENDENCY_UNKNOWN; /* a node without a record (or its own) */
		if (overlaps(gpu_at(b, found), g))
			return LIN_HOW_OVERLAPPING_PREDECESSOR;
		if (*t == LIN_NIL || b->he[found] > *t)
			*t = b->he[found], *err = b->herr[found], *by = found;
	}
	return npred ? LIN_HOW_GRAPH_EDGE : LIN_HOW_GRAPH_ROOT;
}

const struct lin_xrule lin_xrule_graph_edge = {
	.name = "graph_edge",
	.without = LIN_XW_GRAPH_EDGE,
	.how = LIN_HOW_GRAPH_EDGE,
	.prepare = graph_index,
	.graph_bound = graph_ready,
};
