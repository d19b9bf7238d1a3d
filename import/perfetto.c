/* SPDX-License-Identifier: MIT */
/*
 * perfetto.c - write the imported model as Chrome/Perfetto trace-event JSON: one slice
 * per op (or request and handoff), launch and GPU record, flow arrows op -> launch -> GPU
 * record (request -> handoff -> launch -> GPU record for lineage traces), and names for
 * every process and thread track. Perfetto flows cannot fork, so every edge has its own
 * flow id; slices that overlap without nesting on one track (GPU records on one stream
 * can) go to an extra lane of that track, so the nesting a viewer builds never breaks
 * (docs/importers.md, "Perfetto export").
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "imp.h"
#include "otlp_emit.h"

#define GPU_PID_BASE 0x40000000ull /* device tracks: pid = base + device */
#define LANE_SHIFT 40              /* lane k of thread t: tid t + (k << 40) */
#define MAX_LANES 256              /* past these, a slice gets a lane of its own */

struct lane {
	int64_t *end;
	size_t n, cap;
}; /* ends of the open slices, a stack */

struct pctx {
	FILE *o;
	const struct lin_imp *m;
	uint64_t *tid_out; /* per event: the track's tid */
	uint32_t *order;   /* events by (pid, tid, ts, -end) */
	struct lane lanes[MAX_LANES];
};

/* A JSON string: valid UTF-8 as it is, U+FFFD for each maximal ill-formed subsequence
 * (the OTLP writer's encoder). */
static void jstr(FILE *o, const char *s) { lin_oj_fstr(o, s, strlen(s)); }

static void ts(FILE *o, const char *key, int64_t ns)
{
	uint64_t a = ns < 0 ? 0 - (uint64_t)ns : (uint64_t)ns;
	fprintf(o, ",\"%s\":%s%" PRIu64 ".%03d", key, ns < 0 ? "-" : "", a / 1000, (int)(a % 1000));
}

static uint64_t pid_of(const struct lin_imp_ev *e)
{
	return e->kind >= LIN_IMP_KERNEL ? GPU_PID_BASE + e->dev : e->proc;
}

static const struct lin_imp_ev *g_ev; /* qsort has no context argument */

static int cmp_track(const void *a, const void *b)
{
	const struct lin_imp_ev *x = &g_ev[*(const uint32_t *)a], *y = &g_ev[*(const uint32_t *)b];
	uint64_t px = pid_of(x), py = pid_of(y);
	if (px != py)
		return px < py ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	if (x->end != y->end)
		return x->end > y->end ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

/* Does a slice [ts, end] nest on lane l (after the slices that ended before it close)? */
static bool fits(struct lane *l, int64_t t0, int64_t t1)
{
	while (l->n && l->end[l->n - 1] <= t0)
		l->n--;
	return !l->n || l->end[l->n - 1] >= t1;
}

static bool push(struct lane *l, int64_t end)
{
	if (l->n == l->cap) {
		size_t nc = l->cap ? l->cap * 2 : 16;
		int64_t *p = realloc(l->end, nc * sizeof(*p));
		if (!p)
			return false;
		l->end = p;
		l->cap = nc;
	}
	l->end[l->n++] = end;
	return true;
}

/* Lanes: each slice on the first lane of its track where it nests. */
static bool assign_lanes(struct pctx *c)
{
	const struct lin_imp *m = c->m;
	size_t used = 0, spill = MAX_LANES;
	for (size_t i = 0; i < m->n; i++) {
		const struct lin_imp_ev *e = &m->ev[c->order[i]];
		if (i) {
			const struct lin_imp_ev *p = &m->ev[c->order[i - 1]];
			if (pid_of(p) != pid_of(e) || p->tid != e->tid) {
				for (size_t k = 0; k < used; k++)
					c->lanes[k].n = 0;
				used = 0;
				spill = MAX_LANES;
			}
		}
		size_t k = 0;
		while (k < used && !fits(&c->lanes[k], e->ts, e->end))
			k++;
		if (k == MAX_LANES) {
			c->tid_out[c->order[i]] = e->tid + ((uint64_t)spill++ << LANE_SHIFT);
			continue;
		}
		if (k == used)
			c->lanes[used++].n = 0;
		if (!push(&c->lanes[k], e->end))
			return false;
		c->tid_out[c->order[i]] = e->tid + ((uint64_t)k << LANE_SHIFT);
	}
	return true;
}

static void slice(struct pctx *c, size_t i, bool *first)
{
	static const char *const cat[] = { "op",     "launch", "request", "handoff",
					   "kernel", "memcpy", "memset" };
	const struct lin_imp_ev *e = &c->m->ev[i];
	FILE *o = c->o;
	fprintf(o, "%s\n{\"ph\":\"X\",\"cat\":\"%s\",\"name\":", *first ? "" : ",", cat[e->kind]);
	*first = false;
	jstr(o, e->name ? lin_imp_str(c->m, e->name) : cat[e->kind]);
	fprintf(o, ",\"pid\":%" PRIu64 ",\"tid\":%" PRIu64, pid_of(e), c->tid_out[i]);
	ts(o, "ts", e->ts);
	ts(o, "dur", e->end - e->ts);
	fputs(",\"args\":{", o);
	if (e->flags & LIN_IMP_HAS_CORR)
		fprintf(o, "\"correlation\":%" PRIu64 "%s", e->corr,
			(e->flags & LIN_IMP_HAS_EXT) ? "," : "");
	if (e->flags & LIN_IMP_HAS_EXT)
		fprintf(o, "\"external_id\":%" PRIu64, e->ext);
	fputs("}}", o);
}

static void flow(struct pctx *c, uint64_t id, const char *name, size_t from, size_t to)
{
	const struct lin_imp_ev *f = &c->m->ev[from], *t = &c->m->ev[to];
	fprintf(c->o,
		",\n{\"ph\":\"s\",\"cat\":\"lineage\",\"name\":\"%s\",\"id\":%" PRIu64
		",\"pid\":%" PRIu64 ",\"tid\":%" PRIu64,
		name, id, pid_of(f), c->tid_out[from]);
	ts(c->o, "ts", f->ts);
	fprintf(c->o,
		"},\n{\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"lineage\",\"name\":\"%s\",\"id\":%" PRIu64
		",\"pid\":%" PRIu64 ",\"tid\":%" PRIu64,
		name, id, pid_of(t), c->tid_out[to]);
	ts(c->o, "ts", t->ts);
	fputc('}', c->o);
}

static void meta(FILE *o, const char *what, uint64_t pid, uint64_t tid, const char *name)
{
	fprintf(o, ",\n{\"ph\":\"M\",\"name\":\"%s\",\"pid\":%" PRIu64 ",\"tid\":%" PRIu64 ",\"args\":{\"name\":",
		what, pid, tid);
	jstr(o, name);
	fputs("}}", o);
}

struct track {
	uint64_t pid, tid, base;
	uint32_t ev;
};

static int cmp_tr(const void *a, const void *b)
{
	const struct track *x = a, *y = b;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static void track_name(const struct pctx *c, const struct track *t, char *buf, size_t n)
{
	const struct lin_imp_ev *e = &c->m->ev[t->ev];
	const char *nm = e->kind >= LIN_IMP_KERNEL ? NULL : lin_imp_meta_name(c->m, e->proc, e->tid);
	int w;
	if (e->kind >= LIN_IMP_KERNEL)
		w = snprintf(buf, n, "stream %" PRIu64, t->base);
	else if (nm)
		w = snprintf(buf, n, "%.256s", nm);
	else
		w = snprintf(buf, n, "thread %" PRIu64, t->base);
	uint64_t lane = (t->tid - t->base) >> LANE_SHIFT;
	if (lane && w > 0 && (size_t)w < n)
		snprintf(buf + w, n - (size_t)w, " (overlap %" PRIu64 ")", lane);
}

static void proc_name(const struct pctx *c, const struct track *t, char *buf, size_t n)
{
	const struct lin_imp_ev *e = &c->m->ev[t->ev];
	const char *nm = e->kind >= LIN_IMP_KERNEL ? NULL : lin_imp_meta_name(c->m, e->proc, LIN_NIL);
	if (e->kind >= LIN_IMP_KERNEL)
		snprintf(buf, n, "GPU %u", (unsigned)e->dev);
	else if (nm)
		snprintf(buf, n, "%.256s", nm);
	else
		snprintf(buf, n, "process %" PRIu64, e->proc);
}

/* A name for each process and each thread track (a lane's name says which it extends). */
static bool names(struct pctx *c)
{
	const struct lin_imp *m = c->m;
	size_t nt = 0;
	struct track *t = malloc((m->n + 1) * sizeof(*t));
	if (!t)
		return false;
	for (size_t i = 0; i < m->n; i++) {
		uint32_t k = c->order[i];
		struct track x = { pid_of(&m->ev[k]), c->tid_out[k], m->ev[k].tid, k };
		if (!nt || t[nt - 1].pid != x.pid || t[nt - 1].tid != x.tid)
			t[nt++] = x;
	}
	if (nt > 1)
		qsort(t, nt, sizeof(*t), cmp_tr);
	char buf[300];
	for (size_t i = 0; i < nt; i++) {
		if (i && t[i].pid == t[i - 1].pid && t[i].tid == t[i - 1].tid)
			continue;
		if (!i || t[i].pid != t[i - 1].pid) {
			proc_name(c, &t[i], buf, sizeof(buf));
			meta(c->o, "process_name", t[i].pid, 0, buf);
		}
		track_name(c, &t[i], buf, sizeof(buf));
		meta(c->o, "thread_name", t[i].pid, t[i].tid, buf);
	}
	free(t);
	return true;
}

static bool write_all(struct pctx *c)
{
	const struct lin_imp *m = c->m;
	bool first = true;
	fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[", c->o);
	for (size_t i = 0; i < m->n; i++)
		slice(c, i, &first);
	static const char *const edge[] = { "op",  "launch", "request", "handoff",
					    "gpu", "gpu",    "gpu" };
	for (size_t i = 0; i < m->n; i++) {
		const struct lin_imp_ev *e = &m->ev[i];
		if (!e->link)
			continue;
		/* One flow per edge, id = index of the edge's target + 1 (each event has at most
		 * one incoming edge): from the source slice's start to the target's start. */
		size_t src = e->link - 1;
		char name[32];
		snprintf(name, sizeof(name), "%s->%s", edge[m->ev[src].kind], edge[e->kind]);
		flow(c, i + 1, name, src, i);
	}
	bool ok = names(c);
	fputs("\n]}\n", c->o);
	return ok;
}

int lin_imp_perfetto(const struct lin_imp *m, const char *out_path)
{
	struct pctx c = { NULL, m, NULL, NULL, { { NULL, 0, 0 } } };
	c.tid_out = malloc((m->n + 1) * sizeof(*c.tid_out));
	c.order = malloc((m->n + 1) * sizeof(*c.order));
	int rc = -1;
	if (!c.tid_out || !c.order) {
		errno = ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < m->n; i++)
		c.order[i] = (uint32_t)i;
	g_ev = m->ev;
	if (m->n > 1)
		qsort(c.order, m->n, sizeof(*c.order), cmp_track);
	if (!assign_lanes(&c)) {
		errno = ENOMEM;
		goto out;
	}
	c.o = fopen(out_path, "w");
	if (!c.o)
		goto out;
	bool ok = write_all(&c);
	int err = ferror(c.o) || !ok;
	if (fclose(c.o) != 0 || err) {
		errno = errno ? errno : EIO;
		goto out;
	}
	rc = 0;
out:
	for (size_t k = 0; k < MAX_LANES; k++)
		free(c.lanes[k].end);
	free(c.tid_out);
	free(c.order);
	return rc;
}
