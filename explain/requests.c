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
}

void lin_x_rq_free(struct lin_explain *x)
{
	lin_vtab_free(&x->rq);
	lin_vtab_free(&x->steps);
	lin_vec_free(&x->rqorder);
	free(x->split_w);
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
				       .arrival = LIN_NIL };
		struct lin_xrqkey *k = lin_vec_push(&x->rqorder);
		if (!k) {
			x->oom = true;
			return NULL;
		}
		*k = (struct lin_xrqkey){ .req = req, .proc = proc };
	}
	return q;
}

/* The first-token steps: every epoch whose shares (that held) give a request its first
 * token; the earliest declared of them is the request's. */
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
			if (!(LIN_SHARE_FLAGS(sh[k]) & LIN_SHARE_FIRST_TOKEN))
				continue;
			struct lin_xrq *q = lin_x_rq(x, reqs[k], d->proc);
			if (!q)
				return false;
			if (q->ft_decl == LIN_NIL || d->host_ns < q->ft_decl) {
				q->ft_epoch = d->epoch;
				q->ft_decl = d->host_ns;
			}
			bool fresh;
			struct lin_xstep *s =
				lin_vtab_get(&x->steps, d->epoch, (uint64_t)d->proc << 32, &fresh);
			if (!s)
				return false;
			if (fresh)
				*s = (struct lin_xstep){ .first_start = LIN_NIL,
							 .last_end = LIN_NIL,
							 .decl = d->host_ns };
		}
	}
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

static int cmp_rem(const void *pa, const void *pb)
{
	const struct lin_xsplit *a = pa, *b = pb;
	if (a->rem != b->rem)
		return a->rem < b->rem ? 1 : -1;
	return a->idx < b->idx ? -1 : a->idx > b->idx;
}

/* Split @d ns among @n weights (sum @w > 0) by largest remainder into x->split_w[].ns. */
static void split(struct lin_xsplit *s, uint32_t n, uint64_t d, uint64_t w)
{
	uint64_t given = 0;
	for (uint32_t k = 0; k < n; k++) {
		unsigned __int128 p = (unsigned __int128)d * s[k].w;
		s[k].ns = (uint64_t)(p / w);
		s[k].rem = (uint64_t)(p % w);
		s[k].idx = k;
		given += s[k].ns;
	}
	uint64_t left = d - given; /* < n */
	if (!left)
		return;
	qsort(s, n, sizeof(*s), cmp_rem);
	for (uint32_t k = 0; k < left; k++)
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

/* One GPU record as the build loop classified it: @joined, the ledger @l (X_OK), else
 * the join layer's verdict (@epoch_only: joined to an epoch that names no request). */
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
	if (g->start == LIN_NIL || g->end == LIN_NIL || g->end < g->start) {
		p->untimed++;
		return true;
	}
	uint64_t d = g->end - g->start;
	p->records++;
	p->total_ns += d;
	if (res != LIN_XRES_OK || g->proc == LIN_XPROC_IMPORTED || !l->nreq) {
		p->unattributed_ns += d;
		p->unattributed_records++;
		if (res == LIN_XRES_EPOCH_ONLY)
			p->epoch_only_ns += d;
		return true;
	}
	const uint64_t *reqs = lin_explain_reqs(x, l);
	uint32_t n = l->nreq, sn = 0;
	const uint64_t *sreqs = NULL, *sh = NULL;
	uint64_t step = LIN_NIL;
	if (!grow_split(x, n))
		return false;
	struct lin_xsplit *s = x->split_w;
	sh = shares_of(x, b->v, l->proc, l->epoch, &sreqs, &sn, &step);
	uint64_t w = 0;
	bool by_tokens = sh && !x->o.split_equal;
	bool same = by_tokens && sn == n && !memcmp(sreqs, reqs, n * sizeof(*reqs));
	for (uint32_t k = 0; k < n && by_tokens; k++) {
		uint32_t at = k;
		if (!same)
			for (at = 0; at < sn && sreqs[at] != reqs[k]; at++)
				;
		if (at == sn) {
			by_tokens = false; /* a request the shares do not name */
			p->shares_incomplete++;
			break;
		}
		s[k].w = LIN_SHARE_TOKENS(sh[at]);
		s[k].flags = (uint32_t)LIN_SHARE_FLAGS(sh[at]);
		w += s[k].w;
	}
	if (by_tokens && !w) {
		by_tokens = false;
		p->zero_tokens++;
	}
	if (!by_tokens) {
		/* Equal shares; the phase still comes from the shares where they name it. */
		for (uint32_t k = 0; k < n; k++) {
			s[k].w = 1;
			s[k].flags = 0;
			for (uint32_t at = 0; sh && at < sn; at++)
				if (sreqs[at] == reqs[k]) {
					s[k].flags = (uint32_t)LIN_SHARE_FLAGS(sh[at]);
					break;
				}
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
		q->records++;
		if (by_tokens)
			q->by_tokens++;
		else
			q->by_equal++;
	}
	p->attributed_ns += d;
	if (by_tokens)
		p->split_tokens++;
	else
		p->split_equal++;
	/* The first-token step's device span and its first-starting record's ledger. */
	struct lin_xstep *st =
		step == LIN_NIL ? NULL : lin_vtab_find(&x->steps, step, (uint64_t)l->proc << 32);
	if (st && b->hs[i] != LIN_NIL && b->he[i] != LIN_NIL) {
		if (st->first_start == LIN_NIL || b->hs[i] < st->first_start) {
			st->first_start = b->hs[i];
			st->first = *l;
			st->have_first = true;
		}
		if (st->last_end == LIN_NIL || b->he[i] > st->last_end)
			st->last_end = b->he[i];
		if (b->herr[i] > st->err)
			st->err = b->herr[i];
		st->n++;
	}
	return true;
}

/* The arrival of request @q of process @proc: its begin, or the begin of the request of
 * another process of this run it was sent by (its request_link's trace id names the
 * sender's process key and request id, docs/fleet.md; the sender may be this process),
 * when that process is on the same host (the same CLOCK_MONOTONIC) and began it no later. */
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
	for (unsigned p = 0; p < 0xffffu; p++) {
		if (!lin_joiner_proc_id(v, (uint16_t)p, &pid, &host))
			break;
		if (lin_w3c_proc_key(host, pid) != q->link_hi)
			continue;
		if (!host || !myhost || strcmp(host, myhost)) {
			q->arrival_how = LIN_XARR_OTHER_HOST;
			return;
		}
		const struct lin_xrq *s = lin_vtab_find(&x->rq, q->link_lo, (uint64_t)p << 32);
		if (s == q) /* a link to itself: its own begin */
			return;
		if (!s || s->begin == LIN_NIL) {
			q->arrival_how = LIN_XARR_SENDER_UNKNOWN;
			return;
		}
		if (q->begin != LIN_NIL && s->begin > q->begin) {
			q->arrival_how = LIN_XARR_SENDER_LATER;
			return;
		}
		q->arrival = s->begin;
		q->arrival_how = LIN_XARR_LINKED;
		return;
	}
}

/* The stretch from @a to @b_ (either unknown: unknown). */
static void stretch(struct lin_xrq *q, uint8_t name, uint64_t a, uint64_t b_, uint8_t cause, uint8_t ev)
{
	struct lin_xstretch *s = &q->st[q->nst++];
	s->name = name;
	s->cause = cause;
	if (a == LIN_NIL || b_ == LIN_NIL || b_ < a) {
		s->start = a;
		s->end = b_;
		s->ns = 0;
		s->ev = LIN_EV_UNKNOWN;
		return;
	}
	s->start = a;
	s->end = b_;
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

/* Each request's time to first token, in stretches (docs/serving.md). */
void lin_x_rq_finish(struct lin_explain *x, const struct lin_joiner *v)
{
	if (!x->o.per_request)
		return;
	for (size_t i = 0; i < x->rqorder.n; i++) {
		const struct lin_xrqkey *k = lin_vec_at(&x->rqorder, i);
		struct lin_xrq *q = lin_vtab_find(&x->rq, k->req, (uint64_t)k->proc << 32);
		arrival(x, v, q, k->proc);
		q->nst = 0;
		q->dominant = LIN_XS_N;
		if (q->ft_epoch == LIN_NIL)
			continue;
		const struct lin_xstep *st =
			lin_vtab_find(&x->steps, q->ft_epoch, (uint64_t)k->proc << 32);
		q->first_token = st ? st->last_end : LIN_NIL;
		uint64_t api = LIN_NIL, start = st ? st->first_start : LIN_NIL;
		uint8_t host_cause = LIN_X_N, dev_cause = LIN_X_N;
		if (st && st->have_first) {
			const struct lin_xlaunch *l = &st->first;
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
		stretch(q, LIN_XS_EXECUTION, start, q->first_token, LIN_XSC_EXECUTION, LIN_EV_OBSERVED);
		q->clock_err = st ? st->err : 0;
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

static const char *arrival_name(uint8_t h)
{
	switch (h) {
	case LIN_XARR_LINKED: return "request_link";
	case LIN_XARR_OTHER_HOST: return "request_begin (sender on another host)";
	case LIN_XARR_SENDER_UNKNOWN: return "request_begin (sender's request not in the input)";
	case LIN_XARR_SENDER_LATER: return "request_begin (sender's begin later: not used)";
	default: return "request_begin";
	}
}

/* Listed: a request an epoch named or a GPU record served (a sender's request is not). */
static bool listed(const struct lin_xrq *q) { return q->named || q->records; }

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
		n += listed(lin_vtab_find(&x->rq, k->req, (uint64_t)k->proc << 32));
	}
	return n;
}

int64_t lin_explain_rq_residual(const struct lin_explain *x) { return residual(x); }

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
		"\"total_gpu_ns\":%" PRIu64 ",\"attributed_ns\":%" PRIu64
		",\"unattributed_ns\":%" PRIu64 ",\"unattributed_records\":%" PRIu64
		",\"epoch_only_ns\":%" PRIu64 ",\"conservation_residual_ns\":%" PRId64
		",\"records\":%" PRIu64 ",\"duplicates\":%" PRIu64 ",\"untimed\":%" PRIu64
		",\"split_records\":{\"tokens\":%" PRIu64 ",\"equal\":%" PRIu64
		",\"shares_incomplete\":%" PRIu64 ",\"zero_tokens\":%" PRIu64 "},\"requests\":[",
		LIN_STRINGIFY_VERSION, x->o.split_equal ? "equal" : "tokens", p->total_ns,
		p->attributed_ns, p->unattributed_ns, p->unattributed_records, p->epoch_only_ns,
		residual(x), p->records, p->duplicates, p->untimed, p->split_tokens, p->split_equal,
		p->shares_incomplete, p->zero_tokens);
	bool first = true;
	for (size_t i = 0; i < x->rqorder.n; i++) {
		const struct lin_xrqkey *k = lin_vec_at(&x->rqorder, i);
		const struct lin_xrq *q = lin_vtab_find(&x->rq, k->req, (uint64_t)k->proc << 32);
		if (!listed(q))
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
		fputs(",\"ttft_ns\":", f);
		opt_u64(f, q->arrival != LIN_NIL && q->first_token != LIN_NIL && q->first_token >= q->arrival
				   ? q->first_token - q->arrival
				   : LIN_NIL);
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
		if (!listed(q))
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
		bool have = q->ft_epoch != LIN_NIL && q->arrival != LIN_NIL &&
			    q->first_token != LIN_NIL && q->first_token >= q->arrival;
		if (have)
			ms(f, q->first_token - q->arrival);
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
		" duplicate, %" PRIu64 " untimed.\n",
		residual(x), p->split_tokens, p->split_equal, p->shares_incomplete, p->zero_tokens,
		p->duplicates, p->untimed);
}

/* JSON microseconds, exactly. */
static void us3(FILE *f, uint64_t ns)
{
	fprintf(f, "%" PRIu64 ".%03u", ns / 1000, (unsigned)(ns % 1000));
}

int lin_explain_per_request_perfetto(const struct lin_explain *x, const char *path)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return -1;
	fprintf(f, "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[");
	fprintf(f, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":1,\"tid\":0,\"args\":{\"name\":"
		   "\"lineage-explain: time to first token per request\"}}");
	uint64_t tid = 0;
	for (size_t i = 0; i < x->rqorder.n; i++) {
		const struct lin_xrqkey *k = lin_vec_at(&x->rqorder, i);
		const struct lin_xrq *q = lin_vtab_find(&x->rq, k->req, (uint64_t)k->proc << 32);
		if (!listed(q))
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
			us3(f, t->start);
			fputs(",\"dur\":", f);
			us3(f, t->ns);
			fprintf(f, ",\"args\":{\"ns\":%" PRIu64 "}}", t->ns);
		}
		fprintf(f,
			",\n{\"ph\":\"C\",\"pid\":1,\"tid\":%" PRIu64
			",\"name\":\"gpu_ns request %" PRIu64 "\",\"ts\":0,\"args\":{\"gpu_ns\":%" PRIu64
			",\"prefill_ns\":%" PRIu64 ",\"decode_ns\":%" PRIu64 "}}",
			tid, k->req, q->gpu_ns, q->prefill_ns, q->decode_ns);
	}
	fprintf(f, "]}\n");
	if (ferror(f)) {
		int e = errno ? errno : EIO;
		fclose(f);
		errno = e;
		return -1;
	}
	return fclose(f) ? -1 : 0;
}
