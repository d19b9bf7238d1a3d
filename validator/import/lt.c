/* SPDX-License-Identifier: MIT */
/*
 * lt.c - lineage traces into the import model, for the Perfetto export: request slices
 * (request_begin..request_end), handoff slices (token_adopt..scope_close), launch records,
 * GPU records (device time mapped to host time through the clock map of every clock
 * record, trace/clockmap.h, as the validator maps it), linked request -> handoff -> launch
 * -> GPU record (docs/importers.md).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clockmap.h"
#include "imp.h"
#include "lineage/trace_format.h"
#include "reader.h"

#define MAX_OPEN 4096 /* open handoff scopes tracked at once */

struct pair {
	uint64_t key, val, aux;
}; /* sorted lookup tables */

struct lctx {
	struct lin_imp m;
	struct pair *req, *epreq, *ext, *api; /* request -> ev; epoch -> request; */
	size_t nreq, nepreq, next, napi, creq, cepreq, cext, capi; /* corr -> epoch; corr -> api */
	size_t open[MAX_OPEN];
	size_t nopen;
	int64_t last_host;
	struct lin_clockmap clk; /* the clock records; finished after the read */
	bool dev_host;           /* header device_clock "host": device time is host time */
};

static bool add(struct pair **v, size_t *n, size_t *cap, uint64_t k, uint64_t val, uint64_t aux)
{
	if (*n == *cap) {
		size_t nc = *cap ? *cap * 2 : 1024;
		struct pair *p = realloc(*v, nc * sizeof(*p));
		if (!p)
			return false;
		*v = p;
		*cap = nc;
	}
	(*v)[(*n)++] = (struct pair){ k, val, aux };
	return true;
}

static void sort(void *v, size_t n, size_t sz, int (*cmp)(const void *, const void *))
{
	if (n > 1) /* qsort's pointer must not be NULL, even for 0 elements */
		qsort(v, n, sz, cmp);
}

static int cmp_pair(const void *a, const void *b)
{
	const struct pair *x = a, *y = b;
	return x->key < y->key ? -1 : x->key > y->key;
}

static const struct pair *find(const struct pair *v, size_t n, uint64_t k)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (v[mid].key < k)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && v[lo].key == k ? &v[lo] : NULL;
}

/* The name of an adopt (field 8) or launch (field 9) event: late work says so. */
static const char *late_fmt(const struct lin_rec *r, unsigned field, const char *fmt)
{
	uint64_t late = LIN_REC_NIL(r, field) ? 0 : r->f[field];
	bool adopt = r->type == LIN_REC_TOKEN_ADOPT;
	if (late == LIN_LATE_ENDED)
		return adopt ? "late handoff %llu (after retire)"
			     : "late launch epoch %llu (after retire)";
	if (late == LIN_LATE_REISSUED)
		return adopt ? "late handoff %llu (after reissue)"
			     : "late launch epoch %llu (after reissue)";
	return fmt;
}

static struct lin_imp_ev *ev(struct lctx *c, int kind, uint64_t tid, uint64_t ts, const char *fmt,
			     uint64_t a)
{
	struct lin_imp_ev *e = lin_imp_push(&c->m);
	if (!e)
		return NULL;
	char name[64];
	snprintf(name, sizeof(name), fmt, (unsigned long long)a);
	e->kind = (uint8_t)kind;
	e->tid = tid;
	e->ts = e->end = (int64_t)ts;
	e->name = lin_imp_name(&c->m, name, strlen(name));
	return e;
}

/* A device time on the host clock: through the clock map; as it is with device_clock
 * "host", or where the map has no pair for it (no clock record). */
static int64_t to_host(const struct lctx *c, uint64_t dev)
{
	uint64_t h;
	if (c->dev_host || !lin_cm_to_host(&c->clk, dev, &h, NULL))
		return (int64_t)dev;
	return (int64_t)h;
}

static bool on_rec(struct lctx *c, const struct lin_rec *r)
{
	const uint64_t *f = r->f;
	struct lin_imp_ev *e;
	if (r->type < LIN_REC_EXT_CORRELATION && r->nfields && !LIN_REC_NIL(r, 0) &&
	    (int64_t)f[0] > c->last_host)
		c->last_host = (int64_t)f[0]; /* runtime records start with host_ns */
	switch (r->type) {
	case LIN_REC_CLOCK: /* pairs may follow the records they map: mapped after the read */
		return lin_cm_add(&c->clk, f[0], f[1], LIN_REC_NIL(r, 2) ? LIN_NIL : f[2]);
	case LIN_REC_REQUEST_BEGIN:
		if (!(e = ev(c, LIN_IMP_REQUEST, f[1], f[0], "request %llu", f[2])))
			return false;
		e->ext = f[2];
		return add(&c->req, &c->nreq, &c->creq, f[2], c->m.n - 1, 0);
	case LIN_REC_REQUEST_END: /* resolved after the read: the begin may not be sorted */
		return add(&c->req, &c->nreq, &c->creq, f[2], UINT64_MAX, f[0]);
	case LIN_REC_EPOCH_DECLARE:
		return r->nreqs == 0 || add(&c->epreq, &c->nepreq, &c->cepreq, f[2], r->reqs[0], 0);
	case LIN_REC_TOKEN_ADOPT: /* late work says so in its name (docs/trace-format.md) */
		if (!(e = ev(c, LIN_IMP_HANDOFF, f[1], f[0], late_fmt(r, 8, "handoff %llu"), f[3])))
			return false;
		e->ext = f[3];
		e->corr = f[2];          /* target kind */
		e->dev = (uint16_t)f[7]; /* depth */
		if (c->nopen < MAX_OPEN)
			c->open[c->nopen++] = c->m.n - 1;
		return true;
	case LIN_REC_SCOPE_CLOSE:
		for (size_t i = c->nopen; i-- > 0;) {
			struct lin_imp_ev *h = &c->m.ev[c->open[i]];
			if (h->tid == f[1] && h->ext == f[3]) {
				if (!LIN_REC_NIL(r, 0)) /* untimed close (lean timestamps): keep the start */
					h->end = (int64_t)f[0];
				c->open[i] = c->open[--c->nopen];
				break;
			}
		}
		return true;
	case LIN_REC_LAUNCH:
		if (!(e = ev(c, LIN_IMP_LAUNCH, f[1], f[0], late_fmt(r, 9, "launch epoch %llu"),
			     LIN_REC_NIL(r, 2) ? 0 : f[2])))
			return false;
		e->end = e->ts + 1000;
		e->ext = LIN_REC_NIL(r, 2) ? 0 : f[2];
		e->flags = LIN_REC_NIL(r, 2) ? 0 : LIN_IMP_HAS_EXT;
		if (!LIN_REC_NIL(r, 7)) {
			e->corr = f[7];
			e->flags |= LIN_IMP_HAS_CORR;
		}
		return true;
	case LIN_REC_GRAPH_LAUNCH: /* a graph replay: its kernels join to it */
		if (!(e = ev(c, LIN_IMP_LAUNCH, f[1], f[0], "graph launch, replay epoch %llu", f[3])))
			return false;
		e->end = e->ts + 1000;
		e->ext = f[3];
		e->flags = LIN_IMP_HAS_EXT | LIN_IMP_GRAPH;
		return true;
	case LIN_REC_EXT_CORRELATION: /* a late launch's id carries a late bit: the epoch */
		return add(&c->ext, &c->next, &c->cext, f[2], f[1] & LIN_EXT_ID_MASK, 0);
	case LIN_REC_API:
		return LIN_REC_NIL(r, 3) || add(&c->api, &c->napi, &c->capi, f[2], f[6], f[3]);
	case LIN_REC_KERNEL:
	case LIN_REC_MEMCPY:
	case LIN_REC_MEMSET:
		if (LIN_REC_NIL(r, 1) || LIN_REC_NIL(r, 0))
			return true;
		if (!(e = ev(c, LIN_IMP_KERNEL + (int)(r->type - LIN_REC_KERNEL), f[5], f[1],
			     "correlation %llu", f[0])))
			return false;
		e->ts = (int64_t)f[1]; /* device times until the read is done (to_host) */
		e->end = LIN_REC_NIL(r, 2) ? e->ts : (int64_t)f[2];
		e->corr = f[0];
		e->dev = (uint16_t)f[3];
		e->flags = LIN_IMP_HAS_CORR;
		return true;
	default: return true;
	}
}

/* Index of the latest event of kind on tid with ts <= t (and ext == ext when want_ext),
 * among idx[] sorted by (tid, ts); SIZE_MAX if none. */
static int cmp_tid_ts(const void *a, const void *b, const struct lin_imp_ev *v)
{
	const struct lin_imp_ev *x = &v[*(const uint32_t *)a], *y = &v[*(const uint32_t *)b];
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->ts < y->ts ? -1 : x->ts > y->ts;
}
static const struct lin_imp_ev *g_v;
static int cmp_idx(const void *a, const void *b) { return cmp_tid_ts(a, b, g_v); }

static size_t last_before(const struct lin_imp_ev *v, const uint32_t *idx, size_t n, uint64_t tid,
			  int64_t t)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		const struct lin_imp_ev *e = &v[idx[mid]];
		if (e->tid < tid || (e->tid == tid && e->ts <= t))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && v[idx[lo - 1]].tid == tid ? lo - 1 : SIZE_MAX;
}

static void link_all(struct lctx *c, uint32_t *hand, size_t nh, uint32_t *lau, size_t nl)
{
	struct lin_imp_ev *v = c->m.ev;
	for (size_t i = 0; i < c->m.n; i++) {
		struct lin_imp_ev *e = &v[i];
		if (e->kind == LIN_IMP_HANDOFF) {
			uint64_t req = e->ext;
			const struct pair *p = e->corr == 2 ? find(c->epreq, c->nepreq, e->ext) : NULL;
			if (e->corr == 2)
				req = p ? p->val : UINT64_MAX;
			const struct pair *q = find(c->req, c->nreq, req);
			if (q && q->val != UINT64_MAX)
				e->link = (uint32_t)q->val + 1;
		} else if (e->kind == LIN_IMP_LAUNCH) {
			/* no handoff open on the thread: straight from the epoch's request */
			const struct pair *p = find(c->epreq, c->nepreq, e->ext);
			const struct pair *q = p ? find(c->req, c->nreq, p->val) : NULL;
			if ((e->flags & LIN_IMP_HAS_EXT) && q && q->val != UINT64_MAX)
				e->link = (uint32_t)q->val + 1;
			size_t k = last_before(v, hand, nh, e->tid, e->ts);
			while (k != SIZE_MAX && v[hand[k]].tid == e->tid) {
				if (v[hand[k]].end >= e->ts) {
					e->link = hand[k] + 1;
					break;
				}
				k = k ? k - 1 : SIZE_MAX;
				if (k != SIZE_MAX && e->ts - v[hand[k]].ts > 60000000000ll)
					break; /* bound the walk: 60 s back */
			}
		} else if (e->kind >= LIN_IMP_KERNEL) {
			const struct pair *x = find(c->ext, c->next, e->corr);
			const struct pair *a = find(c->api, c->napi, e->corr);
			if (!a)
				continue; /* no API record: no thread to look on */
			int64_t t = to_host(c, a->aux);
			for (size_t k = last_before(v, lau, nl, a->val, t); k != SIZE_MAX;
			     k = k ? k - 1 : SIZE_MAX) {
				const struct lin_imp_ev *l = &v[lau[k]];
				if (l->tid != a->val || t - l->ts > 60000000000ll)
					break;
				/* with an ext correlation: the launch of that epoch; without
				 * (cuda-only): the latest launch on the API thread */
				if (!x || ((l->flags & LIN_IMP_HAS_EXT) && l->ext == x->val)) {
					e->link = lau[k] + 1;
					break;
				}
			}
		}
	}
}

int lin_imp_lineage_perfetto(const char *trace, const char *out_path, char *err, size_t n)
{
	struct lctx c;
	memset(&c, 0, sizeof(c));
	lin_cm_init(&c.clk);
	struct lin_reader *rd = lin_reader_open(trace);
	struct lin_header h;
	struct lin_rec *rec = malloc(sizeof(*rec));
	uint32_t *hand = NULL, *lau = NULL;
	int rc = -1;
	if (!rd || !rec) {
		snprintf(err, n, "out of memory");
		goto out;
	}
	if (lin_reader_header(rd, LIN_TRACE_FORMAT_NAME, &h) != 0) {
		snprintf(err, n, "%s", lin_reader_error(rd));
		goto out;
	}
	c.dev_host = h.device_clock_host;
	enum lin_read_status st;
	while ((st = lin_reader_next(rd, rec)) == LIN_READ_RECORD)
		if (rec->known && !on_rec(&c, rec)) {
			snprintf(err, n, "out of memory");
			goto out;
		}
	/* A damaged trace is reported by the validation; export what was read. Scopes and
	 * requests still open at the end last until the last host time seen. */
	lin_cm_finish(&c.clk);
	for (size_t i = 0; i < c.m.n; i++) {
		struct lin_imp_ev *e = &c.m.ev[i];
		e->proc = h.pid;
		if (e->kind >= LIN_IMP_KERNEL) {
			bool point = e->end == e->ts;
			e->ts = to_host(&c, (uint64_t)e->ts);
			e->end = point ? e->ts : to_host(&c, (uint64_t)e->end);
		}
		if ((e->kind == LIN_IMP_HANDOFF || e->kind == LIN_IMP_REQUEST) && e->end == e->ts)
			e->end = c.last_host > e->ts ? c.last_host : e->ts;
	}
	sort(c.req, c.nreq, sizeof(*c.req), cmp_pair);
	for (size_t i = 0; i + 1 < c.nreq; i++) /* begin (ev index) + end (time) */
		if (c.req[i].key == c.req[i + 1].key && c.req[i].val != UINT64_MAX &&
		    c.req[i + 1].val == UINT64_MAX)
			c.m.ev[c.req[i].val].end = (int64_t)c.req[i + 1].aux;
	size_t w = 0;
	for (size_t i = 0; i < c.nreq; i++)
		if (c.req[i].val != UINT64_MAX)
			c.req[w++] = c.req[i];
	c.nreq = w;
	sort(c.epreq, c.nepreq, sizeof(*c.epreq), cmp_pair);
	sort(c.ext, c.next, sizeof(*c.ext), cmp_pair);
	sort(c.api, c.napi, sizeof(*c.api), cmp_pair);
	hand = malloc((c.m.n + 1) * sizeof(uint32_t));
	lau = malloc((c.m.n + 1) * sizeof(uint32_t));
	if (!hand || !lau) {
		snprintf(err, n, "out of memory");
		goto out;
	}
	size_t nh = 0, nl = 0;
	for (size_t i = 0; i < c.m.n; i++) {
		if (c.m.ev[i].kind == LIN_IMP_HANDOFF)
			hand[nh++] = (uint32_t)i;
		else if (c.m.ev[i].kind == LIN_IMP_LAUNCH)
			lau[nl++] = (uint32_t)i;
	}
	g_v = c.m.ev;
	sort(hand, nh, sizeof(uint32_t), cmp_idx);
	sort(lau, nl, sizeof(uint32_t), cmp_idx);
	link_all(&c, hand, nh, lau, nl);
	rc = lin_imp_perfetto(&c.m, out_path);
	if (rc < 0)
		snprintf(err, n, "cannot write %s", out_path);
out:
	free(hand);
	free(lau);
	free(rec);
	free(c.req);
	free(c.epreq);
	free(c.ext);
	free(c.api);
	lin_cm_free(&c.clk);
	lin_imp_free(&c.m);
	lin_reader_free(rd);
	return rc;
}
