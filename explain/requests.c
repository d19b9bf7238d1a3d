/* SPDX-License-Identifier: MIT */
/*
 * requests.c - lineage-explain --per-request (docs/serving.md, "The report"): every GPU
 * record's time split among the requests it served, and each request's time to first
 * token cut into stretches, on the join layer's verdicts and the ledger.
 *
 * The split. A record joined to a request set is split among those requests by the tokens
 * each contributed to the launch: the shares of the nearest epoch on its epoch's parent
 * chain (itself first) that has shares that held (lin_joiner_epoch_shares), or equally when
 * none does, when a request of the record is missing from those shares, or when their
 * tokens add up to 0 (--split equal: always equally). The record's duration (end - start as
 * the device wrote them, ns) is divided in whole ns by largest remainder: each request gets
 * floor(d * w / W), and the ns left over go one each to the largest remainders (ties: the
 * earlier request in the record's list). So the requests' sums plus the unattributed
 * line (records lost, ambiguous, joined to an epoch with no request) equal the total of
 * every timed record exactly. A duplicate record (read twice) counts once; a record with no
 * start or end counts nowhere and is counted as untimed.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "lineage/trace_format.h"
#include "lineage/w3c.h"
#include "lineage/version.h"
#include "otlp_emit.h"
#include "rule.h"
#include "xstate.h"

/* The epochs walked up a parent chain looking for shares, at most. */
#define SHARE_HOPS 16

void lin_x_rq_init(struct lin_explain *x)
{
	lin_vtab_init(&x->rq, sizeof(struct lin_xrq));
	lin_vtab_init(&x->steps, sizeof(struct lin_xstep));
	lin_vec_init(&x->rqorder, sizeof(struct lin_xrqkey));
	lin_vec_init(&x->unat, sizeof(struct lin_xunat));
	lin_vtab_init(&x->nodecorrs, 0);
	x->sidx_epoch = LIN_NIL;
	lin_vtab_init(&x->rqproc, sizeof(struct lin_xrqproc));
}

void lin_x_rq_free(struct lin_explain *x)
{
	for (size_t i = 0; i < x->rqorder.n; i++) {
		const struct lin_xrqkey *k = lin_vec_at(&x->rqorder, i);
		struct lin_xrq *q = lin_vtab_find(&x->rq, k->req, (uint64_t)k->proc << 32);
		if (q)
			free(q->ft_led);
	}
	lin_vtab_free(&x->rq);
	lin_vtab_free(&x->steps);
	lin_vec_free(&x->rqorder);
	lin_vec_free(&x->unat);
	lin_vtab_free(&x->nodecorrs);
	lin_vtab_free(&x->rqproc);
	free(x->split_w);
	free(x->sidx);
}

struct lin_xrq *lin_x_rq(struct lin_explain *x, uint64_t req, uint16_t proc)
{
	bool fresh;
	struct lin_xrq *q = lin_vtab_get(&x->rq, req, (uint64_t)proc << 32, &fresh);
	if (!q) {
		x->oom = true;
		return NULL;
	}
	if (fresh) {
		*q = (struct lin_xrq){ .begin = LIN_NIL,
				       .user_id = LIN_NIL,
				       .sched = LIN_NIL,
				       .ft_epoch = LIN_NIL,
				       .ft_decl = LIN_NIL,
				       .arrival = LIN_NIL,
				       .first_token = LIN_NIL,
				       .ft_start = LIN_NIL,
				       .ft_end = LIN_NIL,
				       .gpu_first = LIN_NIL,
				       .gpu_last = LIN_NIL };
		struct lin_xrqkey *k = lin_vec_push(&x->rqorder);
		if (!k) {
			x->oom = true;
			return NULL;
		}
		*k = (struct lin_xrqkey){ .req = req, .proc = proc };
	}
	return q;
}

/* Each request's first-token step: the epoch the join layer says gave it its first token
 * (the first in file order whose shares held; a second is a duplicate_first_token finding). */
bool lin_x_rq_prepare(struct lin_explain *x, const struct lin_joiner *v)
{
	if (!x->o.per_request)
		return true;
	for (size_t i = 0; i < x->decls.n; i++) {
		const struct lin_xdecl *d = lin_vec_at(&x->decls, i);
		const uint64_t *reqs;
		uint32_t n;
		const uint64_t *sh = lin_joiner_epoch_shares(v, d->proc, d->epoch, &reqs, &n);
		for (uint32_t k = 0; sh && k < n; k++) {
			if (!(LIN_SHARE_FLAGS(sh[k]) & LIN_SHARE_FIRST_TOKEN) ||
			    lin_joiner_first_token(v, d->proc, reqs[k]) != d->epoch)
				continue;
			struct lin_xrq *q = lin_x_rq(x, reqs[k], d->proc);
			if (!q)
				return false;
			q->ft_epoch = d->epoch;
			q->ft_decl = d->host_ns;
			bool fresh;
			struct lin_xstep *s =
				lin_vtab_get(&x->steps, d->epoch, (uint64_t)d->proc << 32, &fresh);
			if (!s)
				return false;
			if (fresh)
				*s = (struct lin_xstep){ .decl = d->host_ns };
		}
	}
	/* Replays with node records: a graph_trace record of the same launch is that time again
	 * (the validator's graph_trace_and_node_records), counted once, by its nodes. */
	for (size_t i = 0; i < x->gpus.n; i++) {
		const struct lin_xgpu *g = lin_vec_at(&x->gpus, i);
		bool fresh;
		if (g->proc != LIN_XPROC_IMPORTED && g->kind != LIN_REC_GRAPH_TRACE &&
		    g->node != LIN_NIL && g->corr != LIN_NIL && g->corr &&
		    !lin_vtab_get(&x->nodecorrs, g->corr, (uint64_t)g->proc << 32, &fresh))
			return false;
	}
	const struct lin_join_summary *js = lin_joiner_summary(v);
	x->per.dropped = js->dropped;
	x->per.launches_missing = js->lost_by_cause[LIN_CAUSE_NO_GPU_RECORD] +
				  js->lost_by_cause[LIN_CAUSE_MAYBE_CAPTURED] +
				  js->lost_by_cause[LIN_CAUSE_DROPPED_RECORDS];
	return true;
}

/* The shares record @i's requests take: its epoch's, or the nearest ancestor's with some;
 * *@step the epoch they come from. NULL: none on the chain. */
static const uint64_t *shares_of(const struct lin_explain *x, const struct lin_joiner *v, uint16_t proc,
				 uint64_t epoch, const uint64_t **sreqs, uint32_t *sn, uint64_t *step)
{
	for (int hop = 0; hop < SHARE_HOPS && epoch != LIN_NIL; hop++) {
		const uint64_t *sh = lin_joiner_epoch_shares(v, proc, epoch, sreqs, sn);
		if (sh) {
			*step = epoch;
			return sh;
		}
		const struct lin_xdecl *d = lin_x_declaration(x, proc, epoch);
		epoch = d ? d->parent : LIN_NIL;
	}
	*step = LIN_NIL;
	return NULL;
}

static int cmp_sidx(const void *pa, const void *pb)
{
	const struct lin_xsidx *a = pa, *b = pb;
	return a->req < b->req ? -1 : a->req > b->req;
}

/* Request @req's index in the shares of @step (@sreqs, @sn), or UINT32_MAX: by a sorted
 * index of the last step asked about (records of one step come together). */
static uint32_t share_index(struct lin_explain *x, uint16_t proc, uint64_t step,
			    const uint64_t *sreqs, uint32_t sn, uint64_t req)
{
	if (x->sidx_epoch != step || x->sidx_proc != proc) {
		if (sn > x->sidx_cap) {
			struct lin_xsidx *p = realloc(x->sidx, sn * sizeof(*p));
			if (!p)
				return UINT32_MAX - 1;
			x->sidx = p;
			x->sidx_cap = sn;
		}
		for (uint32_t k = 0; k < sn; k++)
			x->sidx[k] = (struct lin_xsidx){ .req = sreqs[k], .idx = k };
		qsort(x->sidx, sn, sizeof(*x->sidx), cmp_sidx);
		x->sidx_n = sn;
		x->sidx_epoch = step;
		x->sidx_proc = proc;
	}
	size_t lo = 0, hi = x->sidx_n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (x->sidx[mid].req < req)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < x->sidx_n && x->sidx[lo].req == req ? x->sidx[lo].idx : UINT32_MAX;
}

static int cmp_rem(const void *pa, const void *pb)
{
	const struct lin_xsplit *a = pa, *b = pb;
	if (a->rem != b->rem)
		return a->rem < b->rem ? 1 : -1;
	return a->idx < b->idx ? -1 : a->idx > b->idx;
}

/* Split @d ns among @n weights (sum @w > 0) by largest remainder into s[].ns. Weights are
 * 32-bit (the runtime's and the validator's limit), so @w < 2^42 and d * w fits 128 bits. */
static void split(struct lin_xsplit *s, uint32_t n, uint64_t d, unsigned __int128 w)
{
	unsigned __int128 given = 0;
	for (uint32_t k = 0; k < n; k++) {
		unsigned __int128 p = (unsigned __int128)d * s[k].w;
		s[k].ns = (uint64_t)(p / w);
		s[k].rem = (uint64_t)(p % w);
		s[k].idx = k;
		given += s[k].ns;
	}
	/* Each part is at most d * w_k / w, so given <= d, and d - given < n. */
	uint64_t left = given <= d ? d - (uint64_t)given : 0;
	if (!left)
		return;
	qsort(s, n, sizeof(*s), cmp_rem);
	for (uint32_t k = 0; k < left && k < n; k++)
		s[k].ns++;
}

static bool grow_split(struct lin_explain *x, uint32_t n)
{
	if (n <= x->split_cap)
		return true;
	struct lin_xsplit *p = realloc(x->split_w, n * sizeof(*p));
	if (!p)
		return false;
	x->split_w = p;
	x->split_cap = n;
	return true;
}

/* A record of @d ns that joins no request, on its process's line (the OTLP export). */
static bool proc_unattributed(struct lin_explain *x, const struct lin_xgpu *g, uint64_t d, bool epoch_only)
{
	if (g->proc == LIN_XPROC_IMPORTED)
		return true; /* no process of the export: the run's totals only */
	bool fresh;
	struct lin_xrqproc *p = lin_vtab_get(&x->rqproc, g->proc, 0, &fresh);
	if (!p)
		return false;
	if (fresh)
		*p = (struct lin_xrqproc){ .first = LIN_NIL, .last = LIN_NIL };
	p->ns += d;
	p->records++;
	if (epoch_only)
		p->epoch_only_ns += d;
	if (p->first == LIN_NIL || g->start < p->first)
		p->first = g->start;
	if (p->last == LIN_NIL || g->end > p->last)
		p->last = g->end;
	return true;
}

/* A record no request is given: counted, and kept (timed) as a place a first token might be. */
static bool unattributed(struct lin_xbuild *b, size_t i, int res, const struct lin_xgpu *g, uint64_t d)
{
	struct lin_xper *p = &b->x->per;
	p->unattributed_ns += d;
	p->unattributed_records++;
	if (res == LIN_XRES_EPOCH_ONLY)
		p->epoch_only_ns += d;
	if (!proc_unattributed(b->x, g, d, res == LIN_XRES_EPOCH_ONLY))
		return false;
	if (g->proc == LIN_XPROC_IMPORTED)
		return true;
	struct lin_xunat *u = lin_vec_push(&b->x->unat);
	if (!u)
		return false;
	*u = (struct lin_xunat){ .hs = b->hs[i], .he = b->he[i], .proc = g->proc };
	return true;
}

/* One GPU record as the build loop classified it (@res, enum lin_xres), with its ledger @l
 * when joined (LIN_XRES_OK). */
bool lin_x_rq_record(struct lin_xbuild *b, size_t i, int res, const struct lin_xlaunch *l)
{
	struct lin_explain *x = b->x;
	struct lin_xper *p = &x->per;
	const struct lin_xgpu *g = lin_vec_at(&x->gpus, i);
	if (!x->o.per_request)
		return true;
	if (res == LIN_XRES_DUP) {
		p->duplicates++;
		return true;
	}
	if (g->kind == LIN_REC_GRAPH_TRACE && g->proc != LIN_XPROC_IMPORTED && g->corr &&
	    lin_vtab_find(&x->nodecorrs, g->corr, (uint64_t)g->proc << 32)) {
		p->graph_twice++;
		return true;
	}
	if (g->start == LIN_NIL || g->end == LIN_NIL || g->end < g->start) {
		p->untimed++;
		return true;
	}
	uint64_t d = g->end - g->start;
	if (d > UINT64_MAX - p->total_ns) {
		p->overflow++;
		return true;
	}
	p->records++;
	p->total_ns += d;
	if (res != LIN_XRES_OK || g->proc == LIN_XPROC_IMPORTED || !l->nreq)
		return unattributed(b, i, res, g, d);
	const uint64_t *reqs = lin_explain_reqs(x, l);
	uint32_t n = l->nreq, sn = 0;
	const uint64_t *sreqs = NULL, *sh = NULL;
	uint64_t step = LIN_NIL;
	if (!grow_split(x, n))
		return false;
	struct lin_xsplit *s = x->split_w;
	sh = shares_of(x, b->v, l->proc, l->epoch, &sreqs, &sn, &step);
	unsigned __int128 w = 0;
	bool same = sh && sn == n && !memcmp(sreqs, reqs, n * sizeof(*reqs));
	bool complete = sh != NULL; /* the shares name every request of the record */
	for (uint32_t k = 0; k < n && sh; k++) {
		uint32_t at = same ? k : share_index(x, l->proc, step, sreqs, sn, reqs[k]);
		if (at == UINT32_MAX - 1)
			return false;
		if (at == UINT32_MAX) {
			complete = false;
			s[k].w = 0;
			s[k].flags = 0;
			continue;
		}
		s[k].w = LIN_SHARE_TOKENS(sh[at]);
		s[k].flags = (uint32_t)LIN_SHARE_FLAGS(sh[at]);
		w += s[k].w;
	}
	bool by_tokens = complete && !x->o.split_equal;
	if (sh && !complete)
		p->shares_incomplete++;
	if (by_tokens && !w) {
		by_tokens = false;
		p->zero_tokens++;
	}
	if (!by_tokens) { /* equal shares; the phase still from the shares that name it */
		for (uint32_t k = 0; k < n; k++) {
			s[k].w = 1;
			if (!sh)
				s[k].flags = 0;
		}
		w = n;
	}
	split(s, n, d, w);
	for (uint32_t k = 0; k < n; k++) {
		struct lin_xrq *q = lin_x_rq(x, reqs[s[k].idx], l->proc);
		if (!q)
			return false;
		q->gpu_ns += s[k].ns;
		if (s[k].flags & LIN_SHARE_PREFILL)
			q->prefill_ns += s[k].ns;
		else if (s[k].flags & LIN_SHARE_DECODE)
			q->decode_ns += s[k].ns;
		else
			q->other_ns += s[k].ns;
		if (q->last_rec == i + 1)
			continue; /* an epoch that names it twice: one record all the same */
		q->last_rec = i + 1;
		q->records++;
		if (q->gpu_first == LIN_NIL || g->start < q->gpu_first)
			q->gpu_first = g->start;
		if (q->gpu_last == LIN_NIL || g->end > q->gpu_last)
			q->gpu_last = g->end;
		if (by_tokens)
			q->by_tokens++;
		else
			q->by_equal++;
		/* Its first-token step's records that serve it (shares that name it). */
		if (step == LIN_NIL || step != q->ft_epoch || !(s[k].flags & LIN_SHARE_FIRST_TOKEN) ||
		    b->hs[i] == LIN_NIL || b->he[i] == LIN_NIL)
			continue;
		if (q->ft_start == LIN_NIL || b->hs[i] < q->ft_start) {
			if (!q->ft_led && !(q->ft_led = malloc(sizeof(*q->ft_led))))
				return false;
			q->ft_start = b->hs[i];
			*q->ft_led = *l;
		}
		if (q->ft_end == LIN_NIL || b->he[i] > q->ft_end)
			q->ft_end = b->he[i];
		if (b->herr[i] > q->ft_err)
			q->ft_err = b->herr[i];
	}
	p->attributed_ns += d;
	p->attributed_records++;
	if (by_tokens)
		p->split_tokens++;
	else
		p->split_equal++;
	return true;
}

/* The request of process @p that a request_link's trace id (@hi: the sender's process key,
 * @lo: its request id, docs/fleet.md) names, and *@host its host; NULL: none in the input. */
static struct lin_xrq *sender(struct lin_explain *x, const struct lin_joiner *v, uint64_t hi,
			      uint64_t lo, const char **host)
{
	uint64_t pid;
	for (unsigned p = 0; p < 0xffffu; p++) {
		if (!lin_joiner_proc_id(v, (uint16_t)p, &pid, host))
			break;
		if (lin_w3c_proc_key(*host, pid) == hi)
			return lin_vtab_find(&x->rq, lo, (uint64_t)p << 32);
	}
	*host = NULL;
	return NULL;
}

/* The arrival of request @q of process @proc: its begin, or the begin of the request of a
 * process of this run it was sent by (its request_link's trace id names the sender's
 * process key and request id; the sender may be this process), when that process is on
 * the same host (the same CLOCK_MONOTONIC), began it no later, and sent no other request
 * of the run: a trace id is shared by every call made for it, so a sender linked to two
 * requests cannot say which one arrived when it began. */
static void arrival(struct lin_explain *x, const struct lin_joiner *v, struct lin_xrq *q, uint16_t proc)
{
	q->arrival = q->begin;
	q->arrival_how = LIN_XARR_BEGIN;
	if (!q->linked)
		return;
	uint64_t pid;
	const char *host, *myhost;
	if (!lin_joiner_proc_id(v, proc, &pid, &myhost))
		return;
	struct lin_xrq *s = sender(x, v, q->link_hi, q->link_lo, &host);
	if (!host) {
		q->arrival_how = LIN_XARR_SENDER_UNKNOWN;
		return;
	}
	if (!myhost || strcmp(host, myhost)) {
		q->arrival_how = LIN_XARR_OTHER_HOST;
		return;
	}
	if (s == q) /* a link to itself: its own begin */
		return;
	if (!s || s->begin == LIN_NIL) {
		q->arrival_how = LIN_XARR_SENDER_UNKNOWN;
		return;
	}
	if (s->linked_by > 1) {
		q->arrival_how = LIN_XARR_SENDER_SHARED;
		return;
	}
	if (q->begin != LIN_NIL && s->begin > q->begin) {
		q->arrival_how = LIN_XARR_SENDER_LATER;
		return;
	}
	q->arrival = s->begin;
	q->arrival_how = LIN_XARR_LINKED;
}

/* The stretch from @a to @b_ (either unknown: unknown). */
static void stretch(struct lin_xrq *q, uint8_t name, uint64_t a, uint64_t b_, uint8_t cause, uint8_t ev)
{
	struct lin_xstretch *s = &q->st[q->nst++];
	s->name = name;
	s->cause = cause;
	s->start = a;
	s->end = b_;
	if (a == LIN_NIL || b_ == LIN_NIL || b_ < a) {
		s->ns = 0;
		s->ev = LIN_EV_UNKNOWN;
		return;
	}
	s->ns = b_ - a;
	s->ev = ev;
}

/* The longest statement of ledger @l inside [@a, @b_]: its cause (LIN_X_N: none). */
static uint8_t longest_in(const struct lin_xlaunch *l, uint64_t a, uint64_t b_)
{
	uint64_t best = 0;
	uint8_t c = LIN_X_N;
	for (uint8_t k = 0; k < l->nseg; k++) {
		const struct lin_xseg *s = &l->seg[k];
		if (s->cause == LIN_X_KERNEL_SLOW || s->end <= a || s->start >= b_)
			continue;
		uint64_t lo = s->start > a ? s->start : a, hi = s->end < b_ ? s->end : b_;
		if (hi - lo > best) {
			best = hi - lo;
			c = s->cause;
		}
	}
	return c;
}

static bool mark_is(const struct lin_xlaunch *l, enum lin_mark m)
{
	return l->m[m].ev == LIN_EV_OBSERVED || l->m[m].ev == LIN_EV_INFERRED;
}

/* Whether request @q's first token may be later than its first-token step's last record
 * that serves it: a GPU record of its process that no request was given (lost, ambiguous,
 * joined to no request) ending later and starting after the step was declared might be
 * the step's; a GPU record the input says is missing might be too. */
static uint8_t first_token_doubt(const struct lin_explain *x, const struct lin_xrq *q, uint16_t proc)
{
	if (x->per.dropped || x->per.launches_missing || x->per.untimed || x->per.overflow)
		return LIN_XFT_GPU_MISSING;
	for (size_t i = 0; i < x->unat.n; i++) {
		const struct lin_xunat *u = lin_vec_at(&x->unat, i);
		if (u->proc != proc)
			continue;
		if (u->he == LIN_NIL || u->hs == LIN_NIL || (u->he > q->ft_end && u->hs >= q->ft_decl))
			return LIN_XFT_UNATTRIBUTED;
	}
	return LIN_XFT_KNOWN;
}

/* Each request's time to first token, in stretches (docs/serving.md). */
void lin_x_rq_finish(struct lin_explain *x, const struct lin_joiner *v)
{
	if (!x->o.per_request)
		return;
	/* How many requests of the run each sender's request was linked to. */
	for (size_t i = 0; i < x->rqorder.n; i++) {
		const struct lin_xrqkey *k = lin_vec_at(&x->rqorder, i);
		struct lin_xrq *q = lin_vtab_find(&x->rq, k->req, (uint64_t)k->proc << 32);
		const char *host;
		struct lin_xrq *s = q->linked ? sender(x, v, q->link_hi, q->link_lo, &host) : NULL;
		if (s && s != q)
			s->linked_by++;
	}
	for (size_t i = 0; i < x->rqorder.n; i++) {
		const struct lin_xrqkey *k = lin_vec_at(&x->rqorder, i);
		struct lin_xrq *q = lin_vtab_find(&x->rq, k->req, (uint64_t)k->proc << 32);
		arrival(x, v, q, k->proc);
		q->nst = 0;
		q->dominant = LIN_XS_N;
		if (q->ft_epoch == LIN_NIL)
			continue;
		q->first_token = q->ft_end;
		q->ft_unknown = q->ft_end == LIN_NIL ? LIN_XFT_GPU_MISSING
						     : first_token_doubt(x, q, k->proc);
		uint64_t api = LIN_NIL, start = q->ft_start;
		uint8_t host_cause = LIN_X_N, dev_cause = LIN_X_N;
		if (q->ft_led) {
			const struct lin_xlaunch *l = q->ft_led;
			if (mark_is(l, LIN_M_API_ENTER))
				api = l->m[LIN_M_API_ENTER].t;
			if (api != LIN_NIL) {
				host_cause = longest_in(l, q->ft_decl, api);
				if (start != LIN_NIL)
					dev_cause = longest_in(l, api, start);
			}
		}
		uint64_t sched = q->sched;
		stretch(q, LIN_XS_QUEUE, q->arrival, sched, LIN_XSC_QUEUED, LIN_EV_OBSERVED);
		if (sched != LIN_NIL && q->ft_decl > sched)
			stretch(q, LIN_XS_PREFILL_BEFORE, sched, q->ft_decl, LIN_XSC_EARLIER_STEPS,
				LIN_EV_OBSERVED);
		stretch(q, LIN_XS_HOST, q->ft_decl, api,
			host_cause == LIN_X_N ? LIN_XSC_HOST_WORK : LIN_XSC_LEDGER + host_cause,
			LIN_EV_OBSERVED);
		stretch(q, LIN_XS_LAUNCH_TO_START, api, start,
			dev_cause == LIN_X_N ? LIN_XSC_LAUNCH : LIN_XSC_LEDGER + dev_cause,
			LIN_EV_OBSERVED);
		/* A first token in doubt: the execution stretch is only a lower bound. */
		stretch(q, LIN_XS_EXECUTION, start, q->ft_unknown ? LIN_NIL : q->first_token,
			LIN_XSC_EXECUTION, LIN_EV_OBSERVED);
		q->clock_err = q->ft_err;
		/* The dominant stretch, when every stretch is known: the longest (the first of
		 * equals). With one unknown, none is named. */
		uint64_t best = 0;
		bool all = true;
		for (uint8_t s = 0; s < q->nst; s++)
			all = all && q->st[s].ev != LIN_EV_UNKNOWN;
		for (uint8_t s = 0; all && s < q->nst; s++)
			if (q->dominant == LIN_XS_N || q->st[s].ns > best) {
				best = q->st[s].ns;
				q->dominant = s;
			}
	}
}

/* ---------------------------------------------------------------- report */

static const char *const stretch_names[LIN_XS_N] = {
	[LIN_XS_QUEUE] = "queue",         [LIN_XS_PREFILL_BEFORE] = "prefill_before",
	[LIN_XS_HOST] = "host",           [LIN_XS_LAUNCH_TO_START] = "launch_to_start",
	[LIN_XS_EXECUTION] = "execution",
};

static const char *sc_name(uint8_t c)
{
	switch (c) {
	case LIN_XSC_QUEUED: return "queued";
	case LIN_XSC_EARLIER_STEPS: return "earlier_steps";
	case LIN_XSC_HOST_WORK: return "host_work";
	case LIN_XSC_LAUNCH: return "launch";
	case LIN_XSC_EXECUTION: return "execution";
	default:
		return c >= LIN_XSC_LEDGER && c < LIN_XSC_LEDGER + LIN_X_N
			       ? lin_xcause_name((enum lin_xcause)(c - LIN_XSC_LEDGER))
			       : "?";
	}
}

/* Why a first token is only bounded below: a JSON value. */
static const char *ft_why(uint8_t u)
{
	switch (u) {
	case LIN_XFT_UNATTRIBUTED: return "\"unattributed_records\"";
	case LIN_XFT_GPU_MISSING: return "\"gpu_records_missing\"";
	default: return "null";
	}
}

/* A request's time to first token, LIN_NIL when either end is not known. */
static uint64_t ttft(const struct lin_xrq *q)
{
	return q->ft_epoch != LIN_NIL && !q->ft_unknown && q->arrival != LIN_NIL &&
			       q->first_token != LIN_NIL && q->first_token >= q->arrival
		       ? q->first_token - q->arrival
		       : LIN_NIL;
}

static const char *arrival_name(uint8_t h)
{
	switch (h) {
	case LIN_XARR_LINKED: return "request_link";
	case LIN_XARR_OTHER_HOST: return "request_begin (sender on another host)";
	case LIN_XARR_SENDER_UNKNOWN: return "request_begin (sender's request not in the input)";
	case LIN_XARR_SENDER_LATER: return "request_begin (sender's begin later: not used)";
	case LIN_XARR_SENDER_SHARED:
		return "request_begin (sender linked to several requests: not used)";
	default: return "request_begin";
	}
}

/* Listed: a request an epoch named or a GPU record served (a sender's request is not). */
bool lin_x_rq_listed(const struct lin_xrq *q) { return q->named || q->records; }

static int64_t residual(const struct lin_explain *x)
{
	uint64_t sum = 0;
	for (size_t i = 0; i < x->rqorder.n; i++) {
		const struct lin_xrqkey *k = lin_vec_at(&x->rqorder, i);
		const struct lin_xrq *q = lin_vtab_find(&x->rq, k->req, (uint64_t)k->proc << 32);
		sum += q->gpu_ns;
	}
	return (int64_t)(sum + x->per.unattributed_ns) - (int64_t)x->per.total_ns;
}

size_t lin_explain_rq_listed(const struct lin_explain *x)
{
	size_t n = 0;
	for (size_t i = 0; i < x->rqorder.n; i++) {
		const struct lin_xrqkey *k = lin_vec_at(&x->rqorder, i);
		n += lin_x_rq_listed(lin_vtab_find(&x->rq, k->req, (uint64_t)k->proc << 32));
	}
	return n;
}

int64_t lin_explain_rq_residual(const struct lin_explain *x) { return residual(x); }

void lin_explain_rq_missing(const struct lin_explain *x, uint64_t *dropped, uint64_t *launches,
			    uint64_t *untimed)
{
	*dropped = x->per.dropped;
	*launches = x->per.launches_missing;
	*untimed = x->per.untimed + x->per.overflow;
}

uint64_t lin_explain_rq_attributed(const struct lin_explain *x)
{
	return x->per.attributed_records;
}

static void opt_u64(FILE *f, uint64_t v)
{
	if (v == LIN_NIL)
		fputs("null", f);
	else
		fprintf(f, "%" PRIu64, v);
}

void lin_explain_per_request_json(const struct lin_explain *x, FILE *f)
{
	const struct lin_xper *p = &x->per;
	fprintf(f,
		"{\"tool\":\"lineage-explain\",\"version\":\"%s\",\"per_request\":{\"split\":\"%s\","
		"\"total_gpu_ns\":%" PRIu64 ",\"attributed_ns\":%" PRIu64 ",\"unattributed_ns\":%" PRIu64
		",\"unattributed_records\":%" PRIu64 ",\"epoch_only_ns\":%" PRIu64
		",\"conservation_residual_ns\":%" PRId64 ",\"records\":%" PRIu64 ",\"duplicates\":%" PRIu64
		",\"untimed\":%" PRIu64 ",\"overflow\":%" PRIu64 ",\"graph_twice\":%" PRIu64
		",\"missing\":{\"dropped\":%" PRIu64 ",\"launches_without_gpu_record\":%" PRIu64 "}"
		",\"split_records\":{\"tokens\":%" PRIu64 ",\"equal\":%" PRIu64
		",\"shares_incomplete\":%" PRIu64 ",\"zero_tokens\":%" PRIu64 "},\"requests\":[",
		LIN_STRINGIFY_VERSION, x->o.split_equal ? "equal" : "tokens", p->total_ns,
		p->attributed_ns, p->unattributed_ns, p->unattributed_records, p->epoch_only_ns,
		residual(x), p->records, p->duplicates, p->untimed, p->overflow, p->graph_twice,
		p->dropped, p->launches_missing, p->split_tokens, p->split_equal,
		p->shares_incomplete, p->zero_tokens);
	bool first = true;
	for (size_t i = 0; i < x->rqorder.n; i++) {
		const struct lin_xrqkey *k = lin_vec_at(&x->rqorder, i);
		const struct lin_xrq *q = lin_vtab_find(&x->rq, k->req, (uint64_t)k->proc << 32);
		if (!lin_x_rq_listed(q))
			continue;
		fprintf(f, "%s{\"request\":%" PRIu64 ",\"proc\":%u,\"user_id\":", first ? "" : ",",
			k->req, k->proc);
		first = false;
		opt_u64(f, q->user_id);
		fprintf(f,
			",\"gpu_ns\":%" PRIu64 ",\"prefill_ns\":%" PRIu64 ",\"decode_ns\":%" PRIu64
			",\"other_ns\":%" PRIu64 ",\"records\":%" PRIu64
			",\"split_rule\":{\"tokens\":%" PRIu64 ",\"equal\":%" PRIu64 "},\"ttft\":",
			q->gpu_ns, q->prefill_ns, q->decode_ns, q->other_ns, q->records,
			q->by_tokens, q->by_equal);
		if (q->ft_epoch == LIN_NIL) {
			fputs("null}", f);
			continue;
		}
		fputs("{\"arrival_ns\":", f);
		opt_u64(f, q->arrival);
		fputs(",\"arrival_from\":", f);
		lin_oj_fstr(f, arrival_name(q->arrival_how), strlen(arrival_name(q->arrival_how)));
		fputs(",\"scheduled_ns\":", f);
		opt_u64(f, q->sched);
		fprintf(f, ",\"first_token_epoch\":%" PRIu64 ",\"first_token_ns\":", q->ft_epoch);
		opt_u64(f, q->first_token);
		fprintf(f, ",\"first_token_unknown\":%s", ft_why(q->ft_unknown));
		fputs(",\"ttft_ns\":", f);
		opt_u64(f, ttft(q));
		fprintf(f, ",\"clock_err_ns\":%" PRIu64 ",\"stretches\":[", q->clock_err);
		for (uint8_t s = 0; s < q->nst; s++) {
			const struct lin_xstretch *t = &q->st[s];
			fprintf(f, "%s{\"name\":\"%s\",\"start_ns\":", s ? "," : "",
				stretch_names[t->name]);
			opt_u64(f, t->start);
			fputs(",\"end_ns\":", f);
			opt_u64(f, t->end);
			fprintf(f, ",\"ns\":%" PRIu64 ",\"cause\":\"%s\",\"evidence\":\"%s\"}", t->ns,
				sc_name(t->cause), lin_evidence_name((enum lin_evidence)t->ev));
		}
		fputs("],\"dominant\":", f);
		if (q->dominant == LIN_XS_N)
			fputs("null", f);
		else
			fprintf(f, "{\"stretch\":\"%s\",\"cause\":\"%s\"}",
				stretch_names[q->st[q->dominant].name],
				sc_name(q->st[q->dominant].cause));
		fputs("}}", f);
	}
	fputs("]}}\n", f);
}

static void ms(FILE *f, uint64_t ns) { fprintf(f, "%10.1f", (double)ns / 1e3); }

void lin_explain_per_request_text(const struct lin_explain *x, FILE *f)
{
	const struct lin_xper *p = &x->per;
	fprintf(f, "lineage-explain %s: GPU time per request (split: %s; docs/serving.md)\n\n",
		LIN_STRINGIFY_VERSION, x->o.split_equal ? "equal shares" : "by tokens");
	fprintf(f, "%10s %10s %10s %10s %10s %8s %10s  %s\n", "request", "user_id", "gpu_us",
		"prefill_us", "decode_us", "records", "ttft_us", "ttft dominated by");
	for (size_t i = 0; i < x->rqorder.n; i++) {
		const struct lin_xrqkey *k = lin_vec_at(&x->rqorder, i);
		const struct lin_xrq *q = lin_vtab_find(&x->rq, k->req, (uint64_t)k->proc << 32);
		if (!lin_x_rq_listed(q))
			continue;
		fprintf(f, "%10" PRIu64 " ", k->req);
		if (q->user_id == LIN_NIL)
			fprintf(f, "%10s ", "-");
		else
			fprintf(f, "%10" PRIu64 " ", q->user_id);
		ms(f, q->gpu_ns);
		fputc(' ', f);
		ms(f, q->prefill_ns);
		fputc(' ', f);
		ms(f, q->decode_ns);
		fprintf(f, " %8" PRIu64 " ", q->records);
		if (ttft(q) != LIN_NIL)
			ms(f, ttft(q));
		else
			fprintf(f, "%10s", "unknown");
		if (q->dominant != LIN_XS_N)
			fprintf(f, "  %s (%s)", stretch_names[q->st[q->dominant].name],
				sc_name(q->st[q->dominant].cause));
		fputc('\n', f);
	}
	fprintf(f, "\n%10s %10s ", "unattrib.", "-");
	ms(f, p->unattributed_ns);
	fprintf(f, " %10s %10s %8" PRIu64 "   lost, ambiguous or joined to no request\n", "", "",
		p->unattributed_records);
	fprintf(f, "%10s %10s ", "total", "-");
	ms(f, p->total_ns);
	fprintf(f, " %10s %10s %8" PRIu64 "\n", "", "", p->records);
	fprintf(f,
		"\nconservation: requests + unattributed - total = %" PRId64 " ns. Split by tokens: "
		"%" PRIu64 " records, equally: %" PRIu64 " (no shares, or %" PRIu64
		" naming too few requests, %" PRIu64 " with no tokens). Not counted: %" PRIu64
		" duplicate, %" PRIu64 " untimed, %" PRIu64 " past 2^64 ns, %" PRIu64
		" graph_trace records of replays whose nodes are read.\n",
		residual(x), p->split_tokens, p->split_equal, p->shares_incomplete, p->zero_tokens,
		p->duplicates, p->untimed, p->overflow, p->graph_twice);
	if (p->dropped || p->launches_missing)
		fprintf(f,
			"incomplete: the input says %" PRIu64 " records were dropped and %" PRIu64
			" launches have no GPU record: their time is in no line above, and no first "
			"token is known (lineage-validate says where).\n",
			p->dropped, p->launches_missing);
}

int lin_explain_per_request_perfetto(const struct lin_explain *x, const char *path)
{
	FILE *f = lin_x_perfetto_open(path, "lineage-explain: time to first token per request");
	if (!f)
		return -1;
	uint64_t tid = 0;
	for (size_t i = 0; i < x->rqorder.n; i++) {
		const struct lin_xrqkey *k = lin_vec_at(&x->rqorder, i);
		const struct lin_xrq *q = lin_vtab_find(&x->rq, k->req, (uint64_t)k->proc << 32);
		if (!lin_x_rq_listed(q))
			continue;
		tid++;
		fprintf(f,
			",\n{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":1,\"tid\":%" PRIu64
			",\"args\":{\"name\":\"request %" PRIu64 " (process %u)\"}}",
			tid, k->req, k->proc);
		for (uint8_t s = 0; s < q->nst; s++) {
			const struct lin_xstretch *t = &q->st[s];
			if (t->ev == LIN_EV_UNKNOWN || t->start == LIN_NIL)
				continue;
			fprintf(f,
				",\n{\"ph\":\"X\",\"pid\":1,\"tid\":%" PRIu64 ",\"name\":\"%s: %s\","
				"\"cat\":\"%s\",\"ts\":",
				tid, stretch_names[t->name], sc_name(t->cause),
				lin_evidence_name((enum lin_evidence)t->ev));
			lin_x_json_us(f, t->start);
			fputs(",\"dur\":", f);
			lin_x_json_us(f, t->ns);
			fprintf(f, ",\"args\":{\"ns\":%" PRIu64 "}}", t->ns);
		}
		fprintf(f,
			",\n{\"ph\":\"C\",\"pid\":1,\"tid\":%" PRIu64
			",\"name\":\"gpu_ns request %" PRIu64 "\",\"ts\":0,\"args\":{\"gpu_ns\":%" PRIu64
			",\"prefill_ns\":%" PRIu64 ",\"decode_ns\":%" PRIu64 "}}",
			tid, k->req, q->gpu_ns, q->prefill_ns, q->decode_ns);
	}
	return lin_x_perfetto_close(f);
}

/* The names the reports use, for the OTLP export (requests_otlp.c). */
const char *lin_x_rq_stretch_name(uint8_t s) { return s < LIN_XS_N ? stretch_names[s] : "?"; }
const char *lin_x_rq_cause_name(uint8_t c) { return sc_name(c); }
const char *lin_x_rq_arrival_name(uint8_t h) { return arrival_name(h); }
uint64_t lin_x_rq_ttft(const struct lin_xrq *q) { return ttft(q); }
