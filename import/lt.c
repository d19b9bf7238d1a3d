/* SPDX-License-Identifier: MIT */
/*
 * lt.c - lineage traces into the import model, for the Perfetto export: request slices
 * (request_begin..request_end), handoff slices (token_adopt..scope_close), launch records,
 * GPU records (device time mapped to host time through the clock map of every clock
 * record, trace/clockmap.h, as the join layer maps it), linked request -> handoff -> launch
 * -> GPU record (docs/importers.md).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clockmap.h"
#include "dispatch.h"
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
	bool oom;                /* a handler ran out of memory: the read stops */
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

/* The name of an adopt or launch event whose late field is @late: late work says so. */
static const char *late_fmt(uint64_t late, bool adopt, const char *fmt)
{
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

static void need(struct lctx *c, bool ok)
{
	if (!ok)
		c->oom = true;
}

/* A host time seen: requests and scopes still open at the end last until the latest. */
static void seen_host(struct lctx *c, bool nil, uint64_t t)
{
	if (!nil && (int64_t)t > c->last_host)
		c->last_host = (int64_t)t;
}

static void seen_host_rec(struct lctx *c, const struct lin_rec *r)
{
	seen_host(c, LIN_IS_NIL(r, HOST, HOST_NS), LIN_GET(r, HOST, HOST_NS));
}

/* A runtime record this export draws nothing from: its host time only. */
static void on_host(void *arg, const struct lin_rec *r) { seen_host_rec(arg, r); }

/* Pairs may follow the records they map: mapped after the read. */
static void on_clock(void *arg, const struct lin_rec *r)
{
	struct lctx *c = arg;
	need(c, lin_cm_add(&c->clk, LIN_GET(r, CLOCK, HOST_NS), LIN_GET(r, CLOCK, DEVICE_NS),
			   LIN_OPT(r, CLOCK, HOST_AFTER_NS)));
}

static void on_request_begin(void *arg, const struct lin_rec *r)
{
	struct lctx *c = arg;
	struct lin_imp_ev *e;
	uint64_t req = LIN_GET(r, REQUEST_BEGIN, REQUEST);
	seen_host_rec(c, r);
	if (!(e = ev(c, LIN_IMP_REQUEST, LIN_GET(r, REQUEST_BEGIN, TID),
		     LIN_GET(r, REQUEST_BEGIN, HOST_NS), "request %llu", req))) {
		c->oom = true;
		return;
	}
	e->ext = req;
	need(c, add(&c->req, &c->nreq, &c->creq, req, c->m.n - 1, 0));
}

/* Resolved after the read: the begin may not be sorted. */
static void on_request_end(void *arg, const struct lin_rec *r)
{
	struct lctx *c = arg;
	seen_host_rec(c, r);
	need(c, add(&c->req, &c->nreq, &c->creq, LIN_GET(r, REQUEST_END, REQUEST), UINT64_MAX,
		    LIN_GET(r, REQUEST_END, HOST_NS)));
}

static void on_epoch_declare(void *arg, const struct lin_rec *r)
{
	struct lctx *c = arg;
	seen_host_rec(c, r);
	need(c, r->nreqs == 0 || add(&c->epreq, &c->nepreq, &c->cepreq,
				     LIN_GET(r, EPOCH_DECLARE, EPOCH), r->reqs[0], 0));
}

/* Late work says so in its name (docs/trace-format.md). */
static void on_adopt(void *arg, const struct lin_rec *r)
{
	struct lctx *c = arg;
	struct lin_imp_ev *e;
	uint64_t target = LIN_GET(r, TOKEN_ADOPT, TARGET);
	seen_host_rec(c, r);
	if (!(e = ev(c, LIN_IMP_HANDOFF, LIN_GET(r, TOKEN_ADOPT, TID), LIN_GET(r, TOKEN_ADOPT, HOST_NS),
		     late_fmt(LIN_OPT(r, TOKEN_ADOPT, LATE), true, "handoff %llu"), target))) {
		c->oom = true;
		return;
	}
	e->ext = target;
	e->corr = LIN_GET(r, TOKEN_ADOPT, TARGET_KIND);
	e->dev = (uint16_t)LIN_GET(r, TOKEN_ADOPT, DEPTH);
	if (c->nopen < MAX_OPEN)
		c->open[c->nopen++] = c->m.n - 1;
}

static void on_scope_close(void *arg, const struct lin_rec *r)
{
	struct lctx *c = arg;
	seen_host_rec(c, r);
	for (size_t i = c->nopen; i-- > 0;) {
		struct lin_imp_ev *h = &c->m.ev[c->open[i]];
		if (h->tid == LIN_GET(r, SCOPE_CLOSE, TID) && h->ext == LIN_GET(r, SCOPE_CLOSE, TARGET)) {
			/* untimed close (lean timestamps): keep the start */
			if (!LIN_IS_NIL(r, SCOPE_CLOSE, HOST_NS))
				h->end = (int64_t)LIN_GET(r, SCOPE_CLOSE, HOST_NS);
			c->open[i] = c->open[--c->nopen];
			break;
		}
	}
}

static void on_launch(void *arg, const struct lin_rec *r)
{
	struct lctx *c = arg;
	struct lin_imp_ev *e;
	bool no_epoch = LIN_IS_NIL(r, LAUNCH, EPOCH);
	uint64_t epoch = no_epoch ? 0 : LIN_GET(r, LAUNCH, EPOCH);
	seen_host_rec(c, r);
	if (!(e = ev(c, LIN_IMP_LAUNCH, LIN_GET(r, LAUNCH, TID), LIN_GET(r, LAUNCH, HOST_NS),
		     late_fmt(LIN_OPT(r, LAUNCH, LATE), false, "launch epoch %llu"), epoch))) {
		c->oom = true;
		return;
	}
	e->end = e->ts + 1000;
	e->ext = epoch;
	e->flags = no_epoch ? 0 : LIN_IMP_HAS_EXT;
	if (!LIN_IS_NIL(r, LAUNCH, CORRELATION)) {
		e->corr = LIN_GET(r, LAUNCH, CORRELATION);
		e->flags |= LIN_IMP_HAS_CORR;
	}
}

/* A graph replay: its kernels join to it. */
static void on_graph_launch(void *arg, const struct lin_rec *r)
{
	struct lctx *c = arg;
	struct lin_imp_ev *e;
	uint64_t replay = LIN_GET(r, GRAPH_LAUNCH, REPLAY_EPOCH);
	if (!(e = ev(c, LIN_IMP_LAUNCH, LIN_GET(r, GRAPH_LAUNCH, TID),
		     LIN_GET(r, GRAPH_LAUNCH, HOST_NS), "graph launch, replay epoch %llu", replay))) {
		c->oom = true;
		return;
	}
	e->end = e->ts + 1000;
	e->ext = replay;
	e->flags = LIN_IMP_HAS_EXT | LIN_IMP_GRAPH;
}

/* A late launch's id carries a late bit: the epoch. */
static void on_ext(void *arg, const struct lin_rec *r)
{
	struct lctx *c = arg;
	need(c, add(&c->ext, &c->next, &c->cext, LIN_GET(r, EXT_CORRELATION, CORRELATION),
		    LIN_GET(r, EXT_CORRELATION, EXTERNAL_ID) & LIN_EXT_ID_MASK, 0));
}

static void on_api(void *arg, const struct lin_rec *r)
{
	struct lctx *c = arg;
	need(c, LIN_IS_NIL(r, API, START_DEV) ||
			add(&c->api, &c->napi, &c->capi, LIN_GET(r, API, CORRELATION),
			    LIN_GET(r, API, TID), LIN_GET(r, API, START_DEV)));
}

/* Kernel, memcpy, memset. */
static void on_gpu(void *arg, const struct lin_rec *r)
{
	struct lctx *c = arg;
	struct lin_imp_ev *e;
	if (LIN_IS_NIL(r, GPU, START_DEV) || LIN_IS_NIL(r, GPU, CORRELATION))
		return;
	if (!(e = ev(c, LIN_IMP_KERNEL + (int)(r->type - LIN_REC_KERNEL), LIN_GET(r, GPU, STREAM),
		     LIN_GET(r, GPU, START_DEV), "correlation %llu", LIN_GET(r, GPU, CORRELATION)))) {
		c->oom = true;
		return;
	}
	e->ts = (int64_t)LIN_GET(r, GPU, START_DEV); /* device times until the read is done (to_host) */
	e->end = LIN_IS_NIL(r, GPU, END_DEV) ? e->ts : (int64_t)LIN_GET(r, GPU, END_DEV);
	e->corr = LIN_GET(r, GPU, CORRELATION);
	e->dev = (uint16_t)LIN_GET(r, GPU, DEVICE);
	e->flags = LIN_IMP_HAS_CORR;
}

static const struct lin_rec_ops lt_ops = {
	.on = {
		[LIN_REC_REQUEST_BEGIN] = on_request_begin,
		[LIN_REC_REQUEST_END] = on_request_end,
		[LIN_REC_EPOCH_DECLARE] = on_epoch_declare,
		[LIN_REC_EPOCH_REISSUE] = on_host,
		[LIN_REC_EPOCH_RETIRE] = on_host,
		[LIN_REC_TOKEN_CAPTURE] = on_host,
		[LIN_REC_TOKEN_ADOPT] = on_adopt,
		[LIN_REC_SCOPE_CLOSE] = on_scope_close,
		[LIN_REC_MISUSE] = on_host,
		[LIN_REC_LAUNCH] = on_launch,
		[LIN_REC_REQUEST_LINK] = on_host,
		[LIN_REC_LAUNCH_END] = on_host,
		[LIN_REC_EXT_CORRELATION] = on_ext,
		[LIN_REC_API] = on_api,
		[LIN_REC_KERNEL] = on_gpu,
		[LIN_REC_MEMCPY] = on_gpu,
		[LIN_REC_MEMSET] = on_gpu,
		[LIN_REC_GRAPH_LAUNCH] = on_graph_launch,
		[LIN_REC_CLOCK] = on_clock,
	},
};

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
	while (!c.oom && lin_reader_next(rd, rec) == LIN_READ_RECORD)
		lin_rec_dispatch(&lt_ops, &c, rec);
	if (c.oom) {
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
