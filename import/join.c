/* SPDX-License-Identifier: MIT */
/*
 * join.c - the joins of an imported trace: GPU record -> launch (correlation, per process)
 * -> enclosing op (same thread), each GPU record classified into the joiner's summary,
 * findings and join levels (docs/importers.md, "Joins").
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "imp.h"

struct jctx {
	struct lin_joiner *v;
	struct lin_join_summary *sum; /* v's */
	struct lin_imp *m;
	uint32_t fi;
	uint32_t *launch; /* launches by (corr, proc, ts) */
	size_t nl;
	uint32_t *op;     /* ops by (proc, tid, ts, -end) */
	uint32_t *parent; /* per op position: enclosing op position + 1 */
	size_t nop;
	uint32_t *ext; /* ops by (proc, ext) */
	size_t next;
	struct pinfo {
		uint64_t proc, min_corr;
		bool ops;
	} * procs;
	size_t np;
	uint32_t *graph_n;  /* per event: GPU records joined through this graph launch */
	uint32_t *graph_op; /* ... and the op (index + 1) they joined */
	uint8_t *graph_obs; /* ... observed (the launch's External id), else inferred */
};

static const struct lin_imp_ev *g_ev; /* qsort has no context argument */

static int cmp_u64(uint64_t a, uint64_t b) { return a < b ? -1 : a > b; }

static int cmp_launch(const void *a, const void *b)
{
	const struct lin_imp_ev *x = &g_ev[*(const uint32_t *)a], *y = &g_ev[*(const uint32_t *)b];
	int c = cmp_u64(x->corr, y->corr);
	if (!c)
		c = cmp_u64(x->proc, y->proc);
	if (!c)
		c = x->ts < y->ts ? -1 : x->ts > y->ts;
	return c ? c : cmp_u64(x->index, y->index);
}

static int cmp_op(const void *a, const void *b)
{
	const struct lin_imp_ev *x = &g_ev[*(const uint32_t *)a], *y = &g_ev[*(const uint32_t *)b];
	int c = cmp_u64(x->proc, y->proc);
	if (!c)
		c = cmp_u64(x->tid, y->tid);
	if (!c)
		c = x->ts < y->ts ? -1 : x->ts > y->ts;
	if (!c)
		c = x->end > y->end ? -1 : x->end < y->end;
	return c ? c : cmp_u64(x->index, y->index);
}

static int cmp_ext(const void *a, const void *b)
{
	const struct lin_imp_ev *x = &g_ev[*(const uint32_t *)a], *y = &g_ev[*(const uint32_t *)b];
	int c = cmp_u64(x->proc, y->proc);
	if (!c)
		c = cmp_u64(x->ext, y->ext);
	return c ? c : cmp_u64(x->index, y->index);
}

static int cmp_proc(const void *a, const void *b)
{
	return cmp_u64(((const struct pinfo *)a)->proc, ((const struct pinfo *)b)->proc);
}

static struct pinfo *proc_info(struct jctx *j, uint64_t proc)
{
	size_t lo = 0, hi = j->np;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (j->procs[mid].proc < proc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < j->np && j->procs[lo].proc == proc ? &j->procs[lo] : NULL;
}

static bool build(struct jctx *j)
{
	struct lin_imp *m = j->m;
	size_t nl = 0, nop = 0, next = 0;
	for (size_t i = 0; i < m->n; i++) {
		nl += m->ev[i].kind == LIN_IMP_LAUNCH;
		nop += m->ev[i].kind == LIN_IMP_OP;
		next += m->ev[i].kind == LIN_IMP_OP && (m->ev[i].flags & LIN_IMP_HAS_EXT);
	}
	j->launch = malloc((nl + 1) * sizeof(uint32_t));
	j->op = malloc((nop + 1) * sizeof(uint32_t));
	j->parent = malloc((nop + 1) * sizeof(uint32_t));
	j->ext = malloc((next + 1) * sizeof(uint32_t));
	j->procs = malloc((nl + nop + 1) * sizeof(*j->procs));
	if (!j->launch || !j->op || !j->parent || !j->ext || !j->procs)
		return false;
	for (size_t i = 0; i < m->n; i++) {
		const struct lin_imp_ev *e = &m->ev[i];
		if (e->kind == LIN_IMP_LAUNCH) {
			j->launch[j->nl++] = (uint32_t)i;
			j->procs[j->np++] = (struct pinfo){ e->proc, e->corr, false };
		} else if (e->kind == LIN_IMP_OP) {
			j->op[j->nop++] = (uint32_t)i;
			j->procs[j->np++] = (struct pinfo){ e->proc, UINT64_MAX, true };
			if (e->flags & LIN_IMP_HAS_EXT)
				j->ext[j->next++] = (uint32_t)i;
		}
	}
	g_ev = m->ev;
	qsort(j->launch, j->nl, sizeof(uint32_t), cmp_launch);
	qsort(j->op, j->nop, sizeof(uint32_t), cmp_op);
	qsort(j->ext, j->next, sizeof(uint32_t), cmp_ext);
	qsort(j->procs, j->np, sizeof(*j->procs), cmp_proc);
	size_t w = 0; /* merge per process: min correlation, any op */
	uint64_t file_min = UINT64_MAX;
	for (size_t i = 0; i < j->np; i++) {
		struct pinfo p = j->procs[i];
		if (p.min_corr < file_min)
			file_min = p.min_corr;
		if (w && j->procs[w - 1].proc == p.proc) {
			struct pinfo *q = &j->procs[w - 1];
			q->ops |= p.ops;
			if (p.min_corr < q->min_corr)
				q->min_corr = p.min_corr;
		} else {
			j->procs[w++] = p;
		}
	}
	j->np = w;
	if (m->gpu_proc_is_file) /* one correlation space per file */
		for (size_t i = 0; i < j->np; i++)
			j->procs[i].min_corr = file_min;
	/* Enclosing op of each op (same thread), from a stack of open ops. */
	size_t *stack = malloc((j->nop + 1) * sizeof(size_t)), sp = 0;
	if (!stack)
		return false;
	for (size_t i = 0; i < j->nop; i++) {
		const struct lin_imp_ev *e = &m->ev[j->op[i]];
		if (sp) {
			const struct lin_imp_ev *t = &m->ev[j->op[stack[sp - 1]]];
			if (t->proc != e->proc || t->tid != e->tid)
				sp = 0;
		}
		while (sp && m->ev[j->op[stack[sp - 1]]].end < e->ts)
			sp--;
		j->parent[i] = sp ? (uint32_t)stack[sp - 1] + 1 : 0;
		stack[sp++] = i;
	}
	free(stack);
	return true;
}

/* The innermost op on (proc, tid) whose [ts, end] holds t. */
static const struct lin_imp_ev *enclosing(const struct jctx *j, uint64_t proc, uint64_t tid, int64_t t)
{
	const struct lin_imp_ev *ev = j->m->ev;
	size_t lo = 0, hi = j->nop; /* first op > (proc, tid, t) */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		const struct lin_imp_ev *e = &ev[j->op[mid]];
		int c = cmp_u64(e->proc, proc);
		if (!c)
			c = cmp_u64(e->tid, tid);
		if (!c)
			c = e->ts > t;
		if (c <= 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i > 0;) {
		const struct lin_imp_ev *e = &ev[j->op[i - 1]];
		if (e->proc != proc || e->tid != tid)
			return NULL;
		if (e->end >= t)
			return e;
		i = j->parent[i - 1];
	}
	return NULL;
}

static const struct lin_imp_ev *op_by_ext(const struct jctx *j, uint64_t proc, uint64_t ext)
{
	const struct lin_imp_ev *ev = j->m->ev;
	size_t lo = 0, hi = j->next;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		const struct lin_imp_ev *e = &ev[j->ext[mid]];
		int c = cmp_u64(e->proc, proc);
		if (!c)
			c = cmp_u64(e->ext, ext);
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < j->next && ev[j->ext[lo]].proc == proc && ev[j->ext[lo]].ext == ext)
		return &ev[j->ext[lo]];
	return NULL;
}

/* The launch for a GPU record: first of its correlation in its process (Kineto: in the
 * file; *nproc counts the processes holding that correlation; *threads is set when the
 * launches of the first process with it lie on more than one thread). */
static const struct lin_imp_ev *launch_of(const struct jctx *j, const struct lin_imp_ev *g,
					  unsigned *nproc, bool *threads)
{
	const struct lin_imp_ev *ev = j->m->ev;
	size_t lo = 0, hi = j->nl;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		const struct lin_imp_ev *e = &ev[j->launch[mid]];
		int c = cmp_u64(e->corr, g->corr);
		if (!c && !j->m->gpu_proc_is_file)
			c = cmp_u64(e->proc, g->proc);
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	*nproc = 0;
	*threads = false;
	const struct lin_imp_ev *first = NULL;
	uint64_t last_proc = 0;
	for (size_t i = lo; i < j->nl; i++) {
		const struct lin_imp_ev *e = &ev[j->launch[i]];
		if (e->corr != g->corr || (!j->m->gpu_proc_is_file && e->proc != g->proc))
			break;
		if (!first || e->proc != last_proc)
			(*nproc)++;
		if (!first)
			first = e;
		else if (e->proc == first->proc && e->tid != first->tid)
			*threads = true; /* a nested driver call shares its runtime call's */
		last_proc = e->proc;
	}
	return first;
}

static const char *const id_names[] = { "correlation",    "pid",   "tid", "external_id",
					"op_external_id", "device" };

static struct lin_finding *report(struct jctx *j, const struct lin_imp_ev *g, const char *kind,
				  const char *cause, const struct lin_imp_ev *l, uint64_t ext,
				  const struct lin_imp_ev *op)
{
	uint64_t ids[6] = { g->corr,
			    l ? l->proc : (j->m->gpu_proc_is_file ? LIN_NIL : g->proc),
			    l ? l->tid : LIN_NIL,
			    ext,
			    op && (op->flags & LIN_IMP_HAS_EXT) ? op->ext : LIN_NIL,
			    g->dev };
	if (!(g->flags & LIN_IMP_HAS_CORR))
		ids[0] = LIN_NIL;
	return lin_joiner_feed_finding(j->v, kind, cause, j->fi, g->off, g->index, 6, id_names, ids);
}

static void level(struct jctx *j, enum lin_level l) { j->sum->joined_by_level[l]++; }

/* lin_join_tool.gpu for imported GPU record @g: keyed by its file and its event index (an
 * Nsight export's row ids repeat across tables); epoch: the op's event index. */
static void hand_over(struct jctx *j, const struct lin_imp_ev *g, enum lin_join join,
		      const char *why, enum lin_level lvl, const struct lin_imp_ev *op)
{
	struct lin_gpu_verdict vd = { .offset = g->index,
				      .epoch = op ? (uint64_t)(op - j->m->ev) : LIN_NIL,
				      .why = why,
				      .file = j->fi,
				      .join = join,
				      .level = lvl,
				      .proc = LIN_VPROC_IMPORTED };
	lin_joiner_feed_verdict(j->v, &vd);
}

static void lost(struct jctx *j, const struct lin_imp_ev *g, enum lin_cause c, const struct lin_imp_ev *l)
{
	j->sum->lost++;
	j->sum->lost_by_cause[c]++;
	level(j, l ? LIN_LEVEL_API_CALL : LIN_LEVEL_NONE);
	report(j, g, "lost", lin_cause_name(c), l, LIN_NIL, NULL);
	hand_over(j, g, LIN_JOIN_LOST, lin_cause_name(c), l ? LIN_LEVEL_API_CALL : LIN_LEVEL_NONE, NULL);
}

/* The finding kept (for its detail), or NULL. */
static struct lin_finding *ambiguous(struct jctx *j, const struct lin_imp_ev *g, const char *cause,
				     const struct lin_imp_ev *l, uint64_t ext,
				     const struct lin_imp_ev *op)
{
	j->sum->ambiguous++;
	bool no_launch = !strcmp(cause, "correlation_collision") ||
			 !strcmp(cause, "correlation_on_two_threads");
	level(j, l && !no_launch ? LIN_LEVEL_API_CALL : LIN_LEVEL_NONE);
	struct lin_finding *f = report(j, g, "ambiguous", cause, l, ext, op);
	hand_over(j, g, LIN_JOIN_AMBIGUOUS, cause,
		  l && !no_launch ? LIN_LEVEL_API_CALL : LIN_LEVEL_NONE, NULL);
	return f;
}

/* @g joined to @op through launch @l: observed (rule < 0) or inferred under @rule; the level
 * is op. */
static void joined(struct jctx *j, const struct lin_imp_ev *g, const struct lin_imp_ev *l,
		   const struct lin_imp_ev *op, int rule)
{
	struct lin_join_summary *s = j->sum;
	if (rule < 0) {
		s->observed++;
	} else {
		s->inferred++;
		s->inferred_by_rule[rule]++;
	}
	level(j, LIN_LEVEL_OP);
	((struct lin_imp_ev *)l)->link = (uint32_t)(op - j->m->ev) + 1;
	hand_over(j, g, rule < 0 ? LIN_JOIN_OBSERVED : LIN_JOIN_INFERRED,
		  rule < 0 ? NULL : lin_rule_name((enum lin_rule)rule), LIN_LEVEL_OP, op);
}

static bool holds(const struct lin_imp_ev *op, const struct lin_imp_ev *l)
{
	return op->proc == l->proc && op->tid == l->tid && op->ts <= l->ts && l->ts <= op->end;
}

/* A graph launch's GPU record joined op @op: counted for the launch's note. */
static void graph_joined(struct jctx *j, const struct lin_imp_ev *l, const struct lin_imp_ev *op,
			 bool observed)
{
	if (!j->graph_n) {
		j->graph_n = calloc(j->m->n, sizeof(uint32_t));
		j->graph_op = calloc(j->m->n, sizeof(uint32_t));
		j->graph_obs = calloc(j->m->n, 1);
		if (!j->graph_n || !j->graph_op || !j->graph_obs) {
			lin_joiner_feed_oom(j->v);
			return;
		}
	}
	size_t li = (size_t)(l - j->m->ev);
	j->graph_n[li]++;
	j->graph_op[li] = (uint32_t)(op - j->m->ev) + 1;
	j->graph_obs[li] = observed;
}

/*
 * After the launch is known: the op, through the External id or by time
 * (docs/importers.md, "Joins"). A GPU record of a graph launch is a replayed node, with
 * or without an External id of its own: it joins the op that launched the graph (the
 * launch's External id, or by time under graph_launch_enclosing_op, also when that id is
 * the correlation), which names the step that replayed the graph, not the op inside the
 * graph that captured the node; the node level stays unknown and one note per graph
 * launch says so.
 */
static void classify_op(struct jctx *j, const struct lin_imp_ev *g, const struct lin_imp_ev *l)
{
	bool graph = l->flags & LIN_IMP_GRAPH;
	const struct pinfo *p = proc_info(j, l->proc);
	if (!p || !p->ops) {
		lost(j, g, LIN_CAUSE_NO_OP_LAYER, l);
		return;
	}
	if ((l->flags & LIN_IMP_HAS_EXT) && (g->flags & LIN_IMP_HAS_EXT) && l->ext != g->ext) {
		/* The launch and its GPU record name different ops: neither is trusted. */
		struct lin_finding *f = ambiguous(j, g, "external_id_conflict", l, g->ext, NULL);
		if (f) {
			snprintf(f->detail, sizeof(f->detail),
				 "the launch's External id is %llu, "
				 "the GPU record's %llu",
				 (unsigned long long)l->ext, (unsigned long long)g->ext);
		}
		return;
	}
	const struct lin_imp_ev *cont = enclosing(j, l->proc, l->tid, l->ts);
	/* A graph launch's GPU record: only the launch's External id names the op (a copy on
	 * the record, as CUDA Kineto writes, is the same id; any other would name an op inside
	 * the graph, which a replay does not run under). */
	bool has_ext = l->flags & LIN_IMP_HAS_EXT;
	uint64_t ext = has_ext ? l->ext : g->ext;
	has_ext = has_ext || (!graph && (g->flags & LIN_IMP_HAS_EXT));
	const struct lin_imp_ev *x = has_ext ? op_by_ext(j, l->proc, ext) : NULL;
	int time_rule = graph ? LIN_RULE_GRAPH_LAUNCH_ENCLOSING_OP : LIN_RULE_TIME_CONTAINMENT;
	if (has_ext && ext == g->corr) {
		/* The writer bug: the External id is the correlation id and names no op of this
		 * launch. Trust time only: external_id_is_correlation_fallback when the op it
		 * names does not hold the launch; ambiguous when it holds it too. */
		if (x && x != cont && holds(x, l)) {
			ambiguous(j, g, "external_id_is_correlation", l, ext, x);
			return;
		}
		if (x && x != cont && cont && !graph)
			time_rule = LIN_RULE_EXTERNAL_ID_IS_CORRELATION;
		x = NULL;
	}
	if (x && (x->proc != l->proc || x->tid != l->tid)) {
		ambiguous(j, g, "external_id_other_thread", l, ext, x);
		return;
	}
	if (x && !holds(x, l)) {
		ambiguous(j, g, "external_id_outside_launch", l, ext, x);
		return;
	}
	const struct lin_imp_ev *op = x ? x : cont;
	if (!op) {
		lost(j, g, graph ? LIN_CAUSE_GRAPH_REPLAY : LIN_CAUSE_NO_ENCLOSING_OP, l);
		return;
	}
	joined(j, g, l, op, x ? -1 : time_rule);
	if (graph)
		graph_joined(j, l, op, x != NULL);
}

static void classify(struct jctx *j, struct lin_imp_ev *g)
{
	j->sum->gpu_records++;
	if (g->flags & LIN_IMP_NO_PROC) { /* no process: joins nothing, not even pid 0 */
		lost(j, g, LIN_CAUSE_NO_PID, NULL);
		return;
	}
	if (!(g->flags & LIN_IMP_HAS_CORR)) {
		lost(j, g, LIN_CAUSE_NO_CORRELATION, NULL);
		return;
	}
	unsigned np;
	bool threads;
	const struct lin_imp_ev *l = launch_of(j, g, &np, &threads);
	if (!l) {
		const struct pinfo *p =
			j->np ? (j->m->gpu_proc_is_file ? &j->procs[0] : proc_info(j, g->proc)) : NULL;
		bool before = p && p->min_corr != UINT64_MAX && g->corr < p->min_corr;
		lost(j, g, before ? LIN_CAUSE_BEFORE_TRACE_START : LIN_CAUSE_NO_API_RECORD, NULL);
		return;
	}
	if (np > 1) { /* Kineto file holding several processes */
		ambiguous(j, g, "correlation_collision", l, LIN_NIL, NULL);
		return;
	}
	if (threads) { /* which of the calls launched it is unknown */
		ambiguous(j, g, "correlation_on_two_threads", l, LIN_NIL, NULL);
		return;
	}
	g->link = (uint32_t)(l - j->m->ev) + 1;
	classify_op(j, g, l);
}

/* One note per graph launch whose kernels joined the op around it: the step, not a node. */
static void graph_notes(struct jctx *j)
{
	static const char *const nm[] = { "correlation", "pid", "tid", "gpu_records", "op_external_id" };
	if (!j->graph_n || !j->graph_op || !j->graph_obs)
		return;
	for (size_t i = 0; i < j->m->n; i++) {
		if (!j->graph_n[i])
			continue;
		const struct lin_imp_ev *l = &j->m->ev[i], *op = &j->m->ev[j->graph_op[i] - 1];
		uint64_t ids[5] = { l->corr, l->proc, l->tid, j->graph_n[i],
				    (op->flags & LIN_IMP_HAS_EXT) ? op->ext : LIN_NIL };
		j->sum->notes++;
		struct lin_finding *f = lin_joiner_feed_finding(j->v, "note", "graph_node_unknown",
								j->fi, l->off, l->index, 5, nm, ids);
		if (!f)
			continue;
		snprintf(f->detail, sizeof(f->detail),
			 "joined to the step, not to an op inside the "
			 "graph (%s): op '%.64s'",
			 j->graph_obs[i] ? "observed, the launch's External id"
					 : "rule graph_launch_enclosing_op",
			 lin_imp_str(j->m, op->name));
	}
}

/* Correlation ids used by several processes: reported, never joined across them. */
static void collisions(struct jctx *j)
{
	static const char *const nm[] = { "correlation", "pid", "other_pid" };
	const struct lin_imp_ev *ev = j->m->ev;
	for (size_t i = 1; i < j->nl; i++) {
		const struct lin_imp_ev *a = &ev[j->launch[i - 1]], *b = &ev[j->launch[i]];
		if (a->corr != b->corr || a->proc == b->proc)
			continue;
		uint64_t ids[3] = { b->corr, a->proc, b->proc };
		j->sum->notes++;
		j->m->collisions++;
		lin_joiner_feed_finding(j->v, "note", "correlation_collision", j->fi, b->off,
					b->index, 3, nm, ids);
	}
}

void lin_imp_join(struct lin_joiner *v, struct lin_imp *m, uint32_t fi)
{
	struct jctx j = { v,    lin_joiner_feed_summary(v),
			  m,    fi,
			  NULL, 0,
			  NULL, NULL,
			  0,    NULL,
			  0,    NULL,
			  0,    NULL,
			  NULL, NULL };
	if (!build(&j)) {
		lin_joiner_feed_oom(v);
	} else {
		if (!m->gpu_proc_is_file)
			collisions(&j);
		for (size_t i = 0; i < m->n; i++) {
			struct lin_imp_ev *e = &m->ev[i];
			if (e->kind == LIN_IMP_LAUNCH)
				j.sum->launches++;
			else if (e->kind >= LIN_IMP_KERNEL)
				classify(&j, e);
		}
		graph_notes(&j);
	}
	free(j.launch);
	free(j.op);
	free(j.parent);
	free(j.ext);
	free(j.procs);
	free(j.graph_n);
	free(j.graph_op);
	free(j.graph_obs);
}
