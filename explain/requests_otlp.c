/* SPDX-License-Identifier: MIT */
/*
 * requests_otlp.c - lineage-explain --per-request --export-otlp (docs/fleet.md, "Per
 * request"): the per-request report as OTLP/JSON, one ExportTraceServiceRequest per line,
 * through the writer and span model the validator's export uses (trace/otlp_emit.h,
 * trace/span_model.h).
 *
 * One span per listed request, "lineage.request.gpu", in the trace the validator's export
 * gives that request's span and parented to it: a request begun from a traceparent keeps
 * the remote trace id (its first valid request_link, or a format-1.0 "w3c:" name), a child
 * request its root's, else (process key, request id) (include/lineage/w3c.h). A request
 * with no request_begin in the input has no span in the export: its span goes in the
 * process's trace, under the process span. One span per process, "lineage.unattributed",
 * in the process's trace under the process span: the time of its records joined to no
 * request, with the run's totals.
 *
 * Span ids: own_span() below. mix64 (lin_w3c_mix64) is a bijection, so within one process
 * two requests never share a span id; against the export's ids (mix64(key ^ id * C) for
 * processes, requests and epochs, mix64(key ^ mix64(v)) for handoffs and GPU records) an
 * equality needs the pre-images to meet, a 2^-64 event per pair, as for any two of the
 * export's own ids: collisions are as unlikely as the export's own.
 *
 * Times, on the Unix clock as the export converts them (lin_oj_host_unix, lin_oj_dev_unix
 * with each process's lin_oj_clock: its first trace header's start_unix_ns and every clock
 * record, read again here as otlp_model.c reads them).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch.h"
#include "lineage/trace_format.h"
#include "lineage/w3c.h"
#include "reader.h"
#include "span_model.h"
#include "xstate.h"

#define MAX_CHAIN 64 /* parent requests followed, as the export */

/* Domains of the span ids this file makes ("lin.rgpu", "lin.unat"). */
#define DOMAIN_REQUEST 0x6c696e2e72677075ULL
#define DOMAIN_UNATTRIBUTED 0x6c696e2e756e6174ULL

static uint64_t own_span(uint64_t key, uint64_t domain, uint64_t id)
{
	uint64_t s = lin_w3c_mix64(lin_w3c_mix64(key ^ domain) ^ lin_w3c_mix64(id ^ domain));
	return s ? s : 1;
}

/* ---------------------------------------------------------------- the re-read */

/* A process as the export sees it (joiner index). */
struct oproc {
	struct lin_oj_clock clk;
	struct lin_sp_proc sp;
	char backend[32];
	uint64_t start_host; /* its first header's start_host_ns */
	bool traced;         /* a lineage trace header named it */
};

/* A request with a request_begin, as the export keeps it. */
struct orq {
	uint64_t id, parent, name_sid, rparent;
	uint8_t rtrace[16];
	uint16_t proc;
	bool remote;
};

struct otlp {
	const struct lin_explain *x;
	struct oproc *procs;
	unsigned nprocs;
	struct lin_vtab rqs;  /* (proc, id) -> struct orq */
	struct lin_vtab strs; /* (proc, sid) -> offset << 24 | length in chars (LIN_NIL: not
			       * a "w3c:" name) */
	struct lin_vec chars;
	uint16_t proc; /* of the file being read */
	bool oom;
};

static void on_begin(void *arg, const struct lin_rec *r)
{
	struct otlp *o = arg;
	uint64_t id = LIN_GET(r, REQUEST_BEGIN, REQUEST);
	bool fresh;
	struct orq *q = lin_vtab_get(&o->rqs, o->proc, id, &fresh);
	if (!q) {
		o->oom = true;
		return;
	}
	if (fresh) /* a duplicate: the first declaration stands */
		*q = (struct orq){ .id = id,
				   .parent = LIN_OPT(r, REQUEST_BEGIN, PARENT_REQUEST),
				   .name_sid = LIN_OPT(r, REQUEST_BEGIN, NAME_SID),
				   .proc = o->proc };
}

/* The export's rule (otlp_model.c): the first valid link of a request already begun. */
static void on_link(void *arg, const struct lin_rec *r)
{
	struct otlp *o = arg;
	uint64_t hi = LIN_GET(r, REQUEST_LINK, TRACE_HI), lo = LIN_GET(r, REQUEST_LINK, TRACE_LO);
	uint64_t parent = LIN_GET(r, REQUEST_LINK, PARENT_SPAN);
	struct orq *q = lin_vtab_find(&o->rqs, o->proc, LIN_GET(r, REQUEST_LINK, REQUEST));
	if (!q || q->remote || !LIN_LINK_VALID(r))
		return;
	lin_w3c_put64(q->rtrace, hi);
	lin_w3c_put64(q->rtrace + 8, lo);
	q->rparent = parent;
	q->remote = true;
}

/* The first string of each id, as the export keeps it; only a "w3c:" name is copied (the
 * others: LIN_NIL). */
static void on_string(void *arg, const struct lin_rec *r)
{
	struct otlp *o = arg;
	const size_t pl = sizeof(LIN_W3C_NAME_PREFIX) - 1;
	bool fresh;
	uint64_t *v = lin_vtab_get(&o->strs, o->proc, LIN_GET(r, STRING, SID), &fresh);
	if (!v) {
		o->oom = true;
		return;
	}
	if (!fresh)
		return;
	*v = LIN_NIL;
	if (r->str_len < pl || memcmp(r->str, LIN_W3C_NAME_PREFIX, pl))
		return;
	uint64_t off = o->chars.n;
	for (uint32_t i = 0; i < r->str_len; i++) {
		char *c = lin_vec_push(&o->chars);
		if (!c) {
			o->oom = true;
			return;
		}
		*c = r->str[i];
	}
	*v = off << 24 | (r->str_len & 0xffffffu);
}

static void on_clock(void *arg, const struct lin_rec *r)
{
	struct otlp *o = arg;
	if (!lin_cm_add(&o->procs[o->proc].clk.map, LIN_GET(r, CLOCK, HOST_NS),
			LIN_GET(r, CLOCK, DEVICE_NS), LIN_OPT(r, CLOCK, HOST_AFTER_NS)))
		o->oom = true;
}

static const struct lin_rec_ops reread_ops = {
	.on = {
		[LIN_REC_REQUEST_BEGIN] = on_begin,
		[LIN_REC_REQUEST_LINK] = on_link,
		[LIN_REC_STRING] = on_string,
		[LIN_REC_CLOCK] = on_clock,
	},
};

/* The joiner's index of the process @h names; -1: none. */
static int proc_index(const struct otlp *o, const struct lin_joiner *v, const struct lin_header *h)
{
	for (unsigned i = 0; i < o->nprocs; i++) {
		uint64_t pid;
		const char *host;
		if (lin_joiner_proc_id(v, (uint16_t)i, &pid, &host) && pid == h->pid &&
		    !strcmp(host, h->host))
			return (int)i;
	}
	return -1;
}

/* Read lineage trace file @jf again; a file that is not one (an importer's) is skipped.
 * A read error where the joiner met none (the file changed since): -1 with @err set;
 * where it met one (reported, exit 2), what was read before counts. Else 0. */
static int reread(struct otlp *o, const struct lin_joiner *v, const struct lin_jfile *jf,
		  struct lin_rec *rec, char *err, size_t n)
{
	const char *path = jf->name;
	struct lin_reader *r = lin_reader_open(path);
	if (!r) {
		o->oom = true;
		return 0;
	}
	struct lin_header h;
	int p = lin_reader_header(r, LIN_TRACE_FORMAT_NAME, &h) == 0 ? proc_index(o, v, &h) : -1;
	int rc = 0;
	if (p >= 0) {
		struct oproc *op = &o->procs[p];
		if (!op->traced) { /* the first header of the process, as the export */
			op->traced = true;
			op->clk.dev_host = h.device_clock_host;
			op->clk.have_unix = h.start_unix_ns != 0;
			op->clk.unix_off = (int64_t)(h.start_unix_ns - h.start_host_ns);
			op->start_host = h.start_host_ns;
			snprintf(op->backend, sizeof(op->backend), "%s", h.backend);
		}
		o->proc = (uint16_t)p;
		enum lin_read_status s = LIN_READ_EOF;
		while (!o->oom && (s = lin_reader_next(r, rec)) == LIN_READ_RECORD)
			lin_rec_dispatch(&reread_ops, o, rec);
		if (!o->oom && s == LIN_READ_ERROR && !jf->err[0] && !jf->truncated) {
			snprintf(err, n, "%s: byte %llu: %s (read again for --export-otlp)", path,
				 (unsigned long long)lin_reader_error_offset(r), lin_reader_error(r));
			errno = EIO;
			rc = -1;
		}
	}
	lin_reader_free(r);
	return rc;
}

/* A format-1.0 "w3c:" name of a request not linked otherwise (the export's remote_name). */
static void legacy_names(struct otlp *o)
{
	size_t it = 0;
	struct lin_vkey k;
	struct orq *q;
	while ((q = lin_vtab_next(&o->rqs, &it, &k))) {
		const uint64_t *s = q->remote || q->name_sid == LIN_NIL
					    ? NULL
					    : lin_vtab_find(&o->strs, q->proc, q->name_sid);
		if (s && *s != LIN_NIL &&
		    lin_sp_w3c_name((const char *)o->chars.data + (*s >> 24), *s & 0xffffffu,
				    q->rtrace, &q->rparent))
			q->remote = true;
	}
}

/* The trace id the export gives request @q's span (lin_xmodel_req_trace). */
static void req_trace(const struct otlp *o, const struct orq *q, uint8_t out[16])
{
	for (int i = 0; i < MAX_CHAIN && q->parent != LIN_NIL && !q->remote; i++) {
		const struct orq *p = lin_vtab_find(&o->rqs, q->proc, q->parent);
		if (!p)
			break;
		q = p;
	}
	if (q->remote)
		memcpy(out, q->rtrace, 16);
	else
		lin_w3c_trace_id(o->procs[q->proc].sp.key, q->id, out);
}

/* ---------------------------------------------------------------- the spans */

static uint64_t host_unix(const struct oproc *p, uint64_t t)
{
	return t == LIN_NIL ? LIN_NIL : lin_oj_host_unix(&p->clk, t);
}

static void resource(struct lin_oj *w, int res, void *user)
{
	(void)w;
	const struct otlp *o = user;
	lin_sp_resource(&o->procs[res].sp);
}

static void stretch_event(struct lin_oj *w, const struct oproc *p, const struct lin_xstretch *s,
			  uint64_t t0)
{
	char name[64];
	const char *sn = lin_x_rq_stretch_name(s->name);
	snprintf(name, sizeof(name), "lineage.ttft.%s", sn);
	uint64_t at = host_unix(p, s->start);
	lin_oj_event_open(w, at == LIN_NIL ? t0 : at, name);
	lin_oj_acstr(w, "lineage.stretch", sn);
	if (at == LIN_NIL)
		lin_oj_abool(w, "lineage.stretch.start_unknown", true);
	lin_oj_aint(w, "lineage.stretch.end_unix_nano", host_unix(p, s->end));
	if (s->ev != LIN_EV_UNKNOWN) /* an unknown stretch has no length (the reports' 0) */
		lin_oj_aint(w, "lineage.stretch.ns", s->ns);
	lin_oj_acstr(w, "lineage.stretch.cause", lin_x_rq_cause_name(s->cause));
	lin_oj_acstr(w, "lineage.evidence", lin_evidence_name((enum lin_evidence)s->ev));
	lin_oj_event_close(w);
}

/* Request @q (@k) of process @p: its span; *@lo, *@hi widened to its times. */
static void request_span(struct otlp *o, struct lin_oj *w, const struct lin_xrqkey *k,
			 const struct lin_xrq *q, uint64_t *lo, uint64_t *hi)
{
	const struct oproc *p = &o->procs[k->proc];
	const struct orq *b = lin_vtab_find(&o->rqs, k->proc, k->req);
	uint8_t trace[16];
	uint64_t parent;
	if (b) {
		req_trace(o, b, trace);
		parent = lin_w3c_span_id(p->sp.key, k->req);
	} else { /* no request span in the export: under the process span */
		lin_w3c_trace_id(p->sp.key, 0, trace);
		parent = lin_w3c_span_id(p->sp.key, 0);
	}
	/* first_token: where a first-token step is known, and only a lower bound when
	 * ft_unknown says why */
	uint64_t t0 = host_unix(p, q->arrival);
	uint64_t t1 = q->ft_epoch != LIN_NIL && !q->ft_unknown ? host_unix(p, q->first_token) : LIN_NIL;
	const char *from = "arrival", *to = "first_token";
	if (t0 == LIN_NIL) {
		t0 = lin_oj_dev_unix(&p->clk, q->gpu_first);
		from = t0 == LIN_NIL ? "unknown" : "first_gpu_record";
	}
	if (t1 == LIN_NIL) {
		t1 = lin_oj_dev_unix(&p->clk, q->gpu_last);
		to = t1 == LIN_NIL ? "unknown" : "last_gpu_record";
	}
	if (t0 == LIN_NIL) /* nothing known: at its trace's start */
		t0 = t1 != LIN_NIL ? t1 : lin_oj_host_unix(&p->clk, p->start_host);
	if (t1 == LIN_NIL || t1 < t0)
		t1 = t0;
	*lo = t0 < *lo ? t0 : *lo;
	*hi = t1 > *hi || *hi == LIN_NIL ? t1 : *hi;
	static const char name[] = "lineage.request.gpu";
	lin_oj_span_open(w, k->proc, trace, own_span(p->sp.key, DOMAIN_REQUEST, k->req), parent,
			 name, sizeof(name) - 1, LIN_OJ_KIND_INTERNAL, t0, t1);
	lin_oj_acstr(w, "lineage.span", "request_gpu");
	lin_oj_aint(w, "lineage.request.id", k->req);
	lin_oj_aint(w, "lineage.request.user_id", q->user_id);
	if (!b)
		lin_oj_abool(w, "lineage.request.begun", false);
	lin_oj_acstr(w, "lineage.split", o->x->o.split_equal ? "equal" : "tokens");
	lin_oj_aint(w, "lineage.gpu.time_ns", q->gpu_ns);
	lin_oj_aint(w, "lineage.gpu.prefill_ns", q->prefill_ns);
	lin_oj_aint(w, "lineage.gpu.decode_ns", q->decode_ns);
	lin_oj_aint(w, "lineage.gpu.other_ns", q->other_ns);
	lin_oj_aint(w, "lineage.gpu.records", q->records);
	lin_oj_aint(w, "lineage.split.by_tokens", q->by_tokens);
	lin_oj_aint(w, "lineage.split.by_equal", q->by_equal);
	lin_oj_acstr(w, "lineage.time.start_from", from);
	lin_oj_acstr(w, "lineage.time.end_from", to);
	if (q->arrival != LIN_NIL)
		lin_oj_acstr(w, "lineage.arrival.source", lin_x_rq_arrival_name(q->arrival_how));
	if (q->ft_epoch != LIN_NIL) {
		lin_oj_aint(w, "lineage.ttft.first_token_epoch", q->ft_epoch);
		lin_oj_aint(w, "lineage.ttft_ns", lin_x_rq_ttft(q)); /* LIN_NIL: left out */
		lin_oj_aint(w, "lineage.ttft.clock_error_ns", q->clock_err);
		if (q->ft_unknown)
			lin_oj_acstr(w, "lineage.ttft.first_token_unknown",
				     q->ft_unknown == LIN_XFT_UNATTRIBUTED ? "unattributed_records"
									   : "gpu_records_missing");
	}
	if (q->dominant != LIN_XS_N) {
		lin_oj_acstr(w, "lineage.ttft.dominant.stretch",
			     lin_x_rq_stretch_name(q->st[q->dominant].name));
		lin_oj_acstr(w, "lineage.ttft.dominant.cause",
			     lin_x_rq_cause_name(q->st[q->dominant].cause));
	}
	lin_oj_events(w);
	for (uint8_t s = 0; s < q->nst; s++)
		stretch_event(w, p, &q->st[s], t0);
	lin_oj_links(w);
	lin_oj_span_close(w, NULL);
}

/* Process @i's unattributed line; @lo, @hi: its request spans' times (LIN_NIL: none). */
static void unattributed_span(struct otlp *o, struct lin_oj *w, unsigned i, uint64_t lo, uint64_t hi)
{
	const struct oproc *p = &o->procs[i];
	const struct lin_xper *run = &o->x->per;
	const struct lin_xrqproc *u = lin_vtab_find(&o->x->rqproc, i, 0);
	uint64_t t0 = u ? lin_oj_dev_unix(&p->clk, u->first) : LIN_NIL;
	uint64_t t1 = u ? lin_oj_dev_unix(&p->clk, u->last) : LIN_NIL;
	if (t0 == LIN_NIL || t1 == LIN_NIL) {
		t0 = lo != LIN_NIL ? lo : lin_oj_host_unix(&p->clk, p->start_host);
		t1 = hi != LIN_NIL ? hi : t0;
	}
	uint8_t trace[16];
	lin_w3c_trace_id(p->sp.key, 0, trace);
	static const char name[] = "lineage.unattributed";
	lin_oj_span_open(w, (int)i, trace, own_span(p->sp.key, DOMAIN_UNATTRIBUTED, 0),
			 lin_w3c_span_id(p->sp.key, 0), name, sizeof(name) - 1,
			 LIN_OJ_KIND_INTERNAL, t0, t1);
	lin_oj_acstr(w, "lineage.span", "unattributed");
	lin_oj_acstr(w, "lineage.split", o->x->o.split_equal ? "equal" : "tokens");
	lin_oj_aint(w, "lineage.gpu.time_ns", u ? u->ns : 0);
	lin_oj_aint(w, "lineage.gpu.records", u ? u->records : 0);
	lin_oj_aint(w, "lineage.gpu.epoch_only_ns", u ? u->epoch_only_ns : 0);
	lin_oj_aint(w, "lineage.run.gpu_ns", run->total_ns);
	lin_oj_aint(w, "lineage.run.attributed_ns", run->attributed_ns);
	lin_oj_aint(w, "lineage.run.unattributed_ns", run->unattributed_ns);
	lin_oj_aint(w, "lineage.run.gpu_records", run->records);
	lin_oj_events(w);
	lin_oj_links(w);
	lin_oj_span_close(w, NULL);
}

static void write_spans(struct otlp *o, struct lin_oj *w)
{
	const struct lin_explain *x = o->x;
	for (unsigned i = 0; i < o->nprocs; i++) {
		if (!o->procs[i].traced)
			continue;
		uint64_t lo = LIN_NIL, hi = LIN_NIL;
		for (size_t r = 0; r < x->rqorder.n; r++) {
			const struct lin_xrqkey *k = lin_vec_at(&x->rqorder, r);
			const struct lin_xrq *q =
				k->proc == i ? lin_vtab_find(&x->rq, k->req, (uint64_t)k->proc << 32)
					     : NULL;
			if (q && lin_x_rq_listed(q))
				request_span(o, w, k, q, &lo, &hi);
		}
		unattributed_span(o, w, i, lo, hi);
	}
}

static int sink(const char *doc, size_t len, void *user)
{
	return fwrite(doc, 1, len, user) == len ? 0 : -EIO;
}

/* Every process of @v with its span model view. */
static int procs_init(struct otlp *o, const struct lin_joiner *v)
{
	uint64_t pid;
	const char *host;
	while (o->nprocs < LIN_XPROC_IMPORTED && lin_joiner_proc_id(v, (uint16_t)o->nprocs, &pid, &host))
		o->nprocs++;
	o->procs = calloc(o->nprocs ? o->nprocs : 1, sizeof(*o->procs));
	if (!o->procs)
		return -1;
	for (unsigned i = 0; i < o->nprocs; i++) {
		lin_joiner_proc_id(v, (uint16_t)i, &pid, &host);
		lin_oj_clock_init(&o->procs[i].clk);
		o->procs[i].sp = (struct lin_sp_proc){ .res = (int)i,
						       .key = lin_w3c_proc_key(host, pid),
						       .tmin = LIN_NIL,
						       .host = host,
						       .service = "lineage",
						       .pid = pid };
	}
	return 0;
}

static void procs_free(struct otlp *o)
{
	for (unsigned i = 0; o->procs && i < o->nprocs; i++)
		lin_oj_clock_free(&o->procs[i].clk);
	free(o->procs);
}

/* Read the files again; the processes' clocks finished and their span views filled. */
static int load(struct otlp *o, const struct lin_joiner *v, struct lin_oj *w, char *err, size_t n)
{
	struct lin_rec *rec = malloc(sizeof(*rec));
	if (!rec)
		return -1;
	int rc = 0;
	for (unsigned f = 0; !rc && !o->oom && f < lin_joiner_nfiles(v); f++) {
		const struct lin_jfile *jf = lin_joiner_file(v, f);
		if (jf && !jf->truth)
			rc = reread(o, v, jf, rec, err, n);
	}
	free(rec);
	if (rc || o->oom)
		return -1;
	legacy_names(o);
	for (unsigned i = 0; i < o->nprocs; i++) {
		struct oproc *p = &o->procs[i];
		lin_cm_finish(&p->clk.map);
		p->sp.w = w;
		p->sp.clk = &p->clk;
		p->sp.backend = p->backend;
		p->sp.host_clock = !lin_cm_empty(&p->clk.map) ? "CLOCK_MONOTONIC+clock_record"
							      : "CLOCK_MONOTONIC";
	}
	return 0;
}

int lin_explain_per_request_otlp(const struct lin_explain *x, const struct lin_joiner *v,
				 const char *path, char *err, size_t n)
{
	struct otlp o = { .x = x };
	lin_vtab_init(&o.rqs, sizeof(struct orq));
	lin_vtab_init(&o.strs, sizeof(uint64_t));
	lin_vec_init(&o.chars, 1);
	struct lin_oj w;
	FILE *f = NULL;
	int rc = -1, e = ENOMEM;
	snprintf(err, n, "out of memory");
	if (procs_init(&o, v) < 0)
		goto out;
	f = fopen(path, "w");
	if (!f) {
		e = errno;
		snprintf(err, n, "%s: %s", path, strerror(e));
		goto out;
	}
	lin_oj_init(&w, sink, f, "lineage-explain", resource, &o);
	if (load(&o, v, &w, err, n) < 0) {
		e = o.oom ? ENOMEM : errno;
		lin_oj_free(&w);
		goto out;
	}
	write_spans(&o, &w);
	int r = lin_oj_doc_close(&w);
	lin_oj_free(&w);
	if (r == -ENOMEM) {
		snprintf(err, n, "out of memory");
	} else if (r < 0 || ferror(f)) {
		e = r < 0 ? -r : EIO;
		snprintf(err, n, "%s: %s", path, strerror(e));
	} else {
		rc = 0;
	}
out:
	if (f && fclose(f) && !rc) {
		e = errno;
		snprintf(err, n, "%s: %s", path, strerror(e));
		rc = -1;
	}
	procs_free(&o);
	lin_vtab_free(&o.rqs);
	lin_vtab_free(&o.strs);
	lin_vec_free(&o.chars);
	if (rc)
		errno = e;
	return rc;
}
