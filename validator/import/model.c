/* SPDX-License-Identifier: MIT */
/*
 * model.c - the imported event model: storage, interned names, the joins
 * GPU record -> launch (correlation, per process) -> enclosing op (same thread), and the
 * classification into the validator's summary and findings (docs/importers.md).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "imp.h"

#define NAME_MAX_LEN 4096

struct lin_imp_ev *lin_imp_push(struct lin_imp *m)
{
	if (m->n == m->cap) {
		size_t nc = m->cap ? m->cap * 2 : 4096;
		if (nc > UINT32_MAX - 1)
			return NULL;
		struct lin_imp_ev *e = realloc(m->ev, nc * sizeof(*e));
		if (!e)
			return NULL;
		m->ev = e;
		m->cap = nc;
	}
	struct lin_imp_ev *e = &m->ev[m->n++];
	memset(e, 0, sizeof(*e));
	e->index = m->n - 1;
	return e;
}

static uint64_t fnv(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
	return h;
}

static bool rehash(struct lin_imp *m)
{
	size_t nc = m->hash_cap ? m->hash_cap * 2 : 1024;
	uint32_t *h = calloc(nc, sizeof(*h));
	if (!h)
		return false;
	for (size_t i = 0; i < m->hash_cap; i++) {
		uint32_t o = m->hash[i];
		if (!o)
			continue;
		const char *s = m->pool + o - 1;
		size_t j = fnv(s, strlen(s)) & (nc - 1);
		while (h[j])
			j = (j + 1) & (nc - 1);
		h[j] = o;
	}
	free(m->hash);
	m->hash = h;
	m->hash_cap = nc;
	return true;
}

uint32_t lin_imp_name(struct lin_imp *m, const char *s, size_t len)
{
	if (len > NAME_MAX_LEN)
		len = NAME_MAX_LEN;
	if (memchr(s, 0, len))
		len = strlen(s);
	if ((m->hash_n + 1) * 2 > m->hash_cap && !rehash(m))
		return 0;
	size_t j = fnv(s, len) & (m->hash_cap - 1);
	for (; m->hash[j]; j = (j + 1) & (m->hash_cap - 1)) {
		const char *t = m->pool + m->hash[j] - 1;
		if (strncmp(t, s, len) == 0 && t[len] == 0)
			return m->hash[j];
	}
	if (m->pool_n + len + 1 > m->pool_cap) {
		size_t nc = m->pool_cap ? m->pool_cap : 65536;
		while (nc < m->pool_n + len + 1)
			nc *= 2;
		if (nc > UINT32_MAX - 1)
			return 0;
		char *p = realloc(m->pool, nc);
		if (!p)
			return 0;
		m->pool = p;
		m->pool_cap = nc;
	}
	uint32_t o = (uint32_t)m->pool_n + 1;
	memcpy(m->pool + m->pool_n, s, len);
	m->pool[m->pool_n + len] = 0;
	m->pool_n += len + 1;
	m->hash[j] = o;
	m->hash_n++;
	return o;
}

const char *lin_imp_str(const struct lin_imp *m, uint32_t name)
{
	return name ? m->pool + name - 1 : "";
}

void lin_imp_free(struct lin_imp *m)
{
	free(m->ev);
	free(m->pool);
	free(m->hash);
	memset(m, 0, sizeof(*m));
}

/* ---- the join ---- */

struct jctx {
	struct lin_validator *v;
	struct lin_imp *m;
	uint32_t fi;
	uint32_t *launch;           /* launches by (corr, proc, ts) */
	size_t nl;
	uint32_t *op;               /* ops by (proc, tid, ts, -end) */
	uint32_t *parent;           /* per op position: enclosing op position + 1 */
	size_t nop;
	uint32_t *ext;              /* ops by (proc, ext) */
	size_t next;
	struct pinfo { uint64_t proc, min_corr; bool ops; } *procs;
	size_t np;
};

static const struct lin_imp_ev *g_ev;      /* qsort has no context argument */

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
	size_t w = 0;                       /* merge per process: min correlation, any op */
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
	if (m->gpu_proc_is_file)          /* one correlation space per file */
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
static const struct lin_imp_ev *enclosing(const struct jctx *j, uint64_t proc, uint64_t tid,
					  int64_t t)
{
	const struct lin_imp_ev *ev = j->m->ev;
	size_t lo = 0, hi = j->nop;         /* first op > (proc, tid, t) */
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
 * file; *nproc counts the processes holding that correlation). */
static const struct lin_imp_ev *launch_of(const struct jctx *j, const struct lin_imp_ev *g,
					  unsigned *nproc)
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
		last_proc = e->proc;
	}
	return first;
}

static const char *const id_names[] = { "correlation", "pid", "tid", "external_id", "op_external_id",
					 "device" };

static void report(struct jctx *j, const struct lin_imp_ev *g, const char *kind,
		   const char *cause, const struct lin_imp_ev *l, uint64_t ext,
		   const struct lin_imp_ev *op)
{
	uint64_t ids[6] = { g->corr, l ? l->proc : (j->m->gpu_proc_is_file ? LIN_NIL : g->proc),
			    l ? l->tid : LIN_NIL, ext, op && (op->flags & LIN_IMP_HAS_EXT) ? op->ext : LIN_NIL,
			    g->dev };
	if (!(g->flags & LIN_IMP_HAS_CORR))
		ids[0] = LIN_NIL;
	lin_v_finding(j->v, kind, cause, j->fi, g->off, g->index, 6, id_names, ids);
}

static void lost(struct jctx *j, const struct lin_imp_ev *g, enum lin_cause c,
		 const struct lin_imp_ev *l)
{
	j->v->sum.lost++;
	j->v->sum.lost_by_cause[c]++;
	report(j, g, "lost", lin_cause_name(c), l, LIN_NIL, NULL);
}

static void ambiguous(struct jctx *j, const struct lin_imp_ev *g, const char *cause,
		      const struct lin_imp_ev *l, uint64_t ext, const struct lin_imp_ev *op)
{
	j->v->sum.ambiguous++;
	report(j, g, "ambiguous", cause, l, ext, op);
}

static bool holds(const struct lin_imp_ev *op, const struct lin_imp_ev *l)
{
	return op->ts <= l->ts && l->ts <= op->end;
}

static void classify(struct jctx *j, struct lin_imp_ev *g)
{
	struct lin_vsummary *s = &j->v->sum;
	s->gpu_records++;
	if (!(g->flags & LIN_IMP_HAS_CORR)) {
		lost(j, g, LIN_CAUSE_NO_CORRELATION, NULL);
		return;
	}
	unsigned np;
	const struct lin_imp_ev *l = launch_of(j, g, &np);
	if (!l) {
		const struct pinfo *p = j->np ? (j->m->gpu_proc_is_file ? &j->procs[0]
						 : proc_info(j, g->proc)) : NULL;
		bool before = p && p->min_corr != UINT64_MAX && g->corr < p->min_corr;
		lost(j, g, before ? LIN_CAUSE_BEFORE_TRACE_START : LIN_CAUSE_NO_API_RECORD, NULL);
		return;
	}
	if (np > 1) {                       /* Kineto file holding several processes */
		ambiguous(j, g, "correlation_collision", l, LIN_NIL, NULL);
		return;
	}
	g->link = (uint32_t)(l - j->m->ev) + 1;
	if ((l->flags & LIN_IMP_GRAPH) && !(g->flags & LIN_IMP_HAS_EXT)) {
		lost(j, g, LIN_CAUSE_GRAPH_REPLAY, l);
		return;
	}
	const struct pinfo *p = proc_info(j, l->proc);
	if (!p || !p->ops) {
		lost(j, g, LIN_CAUSE_NO_OP_LAYER, l);
		return;
	}
	const struct lin_imp_ev *cont = enclosing(j, l->proc, l->tid, l->ts);
	bool has_ext = l->flags & LIN_IMP_HAS_EXT;
	uint64_t ext = has_ext ? l->ext : g->ext;
	has_ext = has_ext || (g->flags & LIN_IMP_HAS_EXT);
	const struct lin_imp_ev *x = has_ext ? op_by_ext(j, l->proc, ext) : NULL;
	if (has_ext && ext == g->corr) {
		/* Writer bug: the External id is the correlation id; trust time only. */
		if (x && x != cont) {
			ambiguous(j, g, "external_id_is_correlation", l, ext, x);
			return;
		}
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
	if (x) {
		s->observed++;
		((struct lin_imp_ev *)l)->link = (uint32_t)(x - j->m->ev) + 1;
		return;
	}
	if (cont) {
		s->inferred++;
		s->inferred_by_rule[LIN_RULE_TIME_CONTAINMENT]++;
		((struct lin_imp_ev *)l)->link = (uint32_t)(cont - j->m->ev) + 1;
		return;
	}
	lost(j, g, LIN_CAUSE_NO_ENCLOSING_OP, l);
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
		j->v->sum.notes++;
		j->m->collisions++;
		lin_v_finding(j->v, "note", "correlation_collision", j->fi, b->off, b->index, 3, nm,
			      ids);
	}
}

void lin_imp_join(struct lin_validator *v, struct lin_imp *m, uint32_t fi)
{
	struct jctx j = { v, m, fi, NULL, 0, NULL, NULL, 0, NULL, 0, NULL, 0 };
	if (!build(&j)) {
		v->oom = true;
	} else {
		if (!m->gpu_proc_is_file)
			collisions(&j);
		for (size_t i = 0; i < m->n; i++) {
			struct lin_imp_ev *e = &m->ev[i];
			if (e->kind == LIN_IMP_LAUNCH)
				v->sum.launches++;
			else if (e->kind >= LIN_IMP_KERNEL)
				classify(&j, e);
		}
	}
	free(j.launch);
	free(j.op);
	free(j.parent);
	free(j.ext);
	free(j.procs);
}

/* ---- the CLI entry ---- */

static int add_file(struct lin_validator *v, const char *name)
{
	struct lin_vfile *nf = realloc(v->files, (v->nfiles + 1) * sizeof(*nf));
	if (!nf)
		return -1;
	v->files = nf;
	memset(&nf[v->nfiles], 0, sizeof(*nf));
	nf[v->nfiles].name = strdup(name);
	if (!nf[v->nfiles].name)
		return -1;
	v->sum.files++;
	return (int)v->nfiles++;
}

int lin_imp_run(struct lin_validator *v, const char *fmt, char *const *paths, int n,
		const char *perfetto)
{
	bool kineto = strcmp(fmt, "kineto") == 0;
	if (!kineto && strcmp(fmt, "nsys") != 0)
		return 64;
	const char *lacks = NULL;
	if (!lin_imp_have(fmt, &lacks))
		return 64;
	int rc = 0;
	for (int i = 0; i < n; i++) {
		struct lin_imp m;
		memset(&m, 0, sizeof(m));
		int fi = add_file(v, paths[i]);
		if (fi < 0) {
			v->oom = true;
			return -1;
		}
		struct lin_vfile *f = &v->files[fi];
		int r = kineto ? lin_imp_kineto(&m, paths[i], f) : lin_imp_nsys(&m, paths[i], f);
		f->records = m.records;
		v->sum.records += m.records;
		v->sum.bytes += f->size;
		if (r < 0) {
			f->failed = true;
			v->sum.file_errors++;
			rc = -1;
		}
		lin_imp_join(v, &m, (uint32_t)fi);     /* what was read before an error counts */
		if (perfetto && i == n - 1 && lin_imp_perfetto(&m, perfetto) < 0) {
			snprintf(f->err, sizeof(f->err), "cannot write %s: %s", perfetto,
				 strerror(errno));
			if (!f->failed) {
				f->failed = true;
				f->err_off = 0;
				v->sum.file_errors++;
			}
			rc = -1;
		}
		lin_imp_free(&m);
	}
	return rc;
}
