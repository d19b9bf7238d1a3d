/* SPDX-License-Identifier: MIT */
/*
 * otlp_json.c - write the span model as OTLP/JSON ExportTraceServiceRequest documents,
 * one per line (the JSON Lines layout of the collector's file exporter). Ids are lowercase
 * hex, 64-bit integers and times are decimal strings, enums are integers, as the OTLP
 * JSON encoding asks. Attribute names: docs/fleet.md.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "lineage/trace_format.h"
#include "lineage/version.h"
#include "lineage/w3c.h"
#include "otlp.h"
#include "otlp_jstr.h"
#include "otlp_model.h"

enum { KIND_INTERNAL = 1, KIND_SERVER = 2 };

struct jw {
	FILE *f;
	const struct xmodel *m;
	struct lin_otlp_stats *st;
	bool in_doc, res_in_doc, first_span, first_item;
	int proc;
	size_t nspans;
};

/*
 * The length of the well-formed UTF-8 sequence at @s[0..@n) (n > 0), or minus the length
 * of its maximal ill-formed subpart: a lead byte and the continuation bytes that still fit
 * a well-formed sequence (Unicode Table 3-7), at least one byte.
 */
static int utf8_len(const unsigned char *s, size_t n)
{
	unsigned char c = s[0], lo = 0x80, hi = 0xbf;
	if (c < 0x80)
		return 1;
	if (c < 0xc2 || c > 0xf4) /* continuation, overlong lead C0/C1, above U+10FFFF */
		return -1;
	int len = c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;
	if (c == 0xe0)
		lo = 0xa0;          /* overlong */
	else if (c == 0xed)
		hi = 0x9f;          /* surrogates D800..DFFF */
	else if (c == 0xf0)
		lo = 0x90;          /* overlong */
	else if (c == 0xf4)
		hi = 0x8f;          /* above U+10FFFF */
	for (int i = 1; i < len; i++, lo = 0x80, hi = 0xbf)
		if ((size_t)i >= n || s[i] < lo || s[i] > hi)
			return -i;
	return len;
}

void lin_otlp_jstr(FILE *f, const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	fputc('"', f);
	for (size_t i = 0; i < n;) {
		unsigned char c = u[i];
		int len = utf8_len(u + i, n - i);
		if (len < 0) {
			fputs("\\ufffd", f);
			i += (size_t)-len;
			continue;
		}
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fwrite(u + i, 1, (size_t)len, f);
		i += (size_t)len;
	}
	fputc('"', f);
}

static void jcstr(FILE *f, const char *s)
{
	lin_otlp_jstr(f, s, strlen(s));
}

static void hex(FILE *f, const uint8_t *p, size_t n)
{
	fputc('"', f);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%02x", p[i]);
	fputc('"', f);
}

static void hex64(FILE *f, uint64_t v)
{
	uint8_t b[8];
	lin_w3c_put64(b, v);
	hex(f, b, 8);
}

/* ---------------------------------------------------------------- attributes */

static void item(struct jw *w)
{
	if (!w->first_item)
		fputc(',', w->f);
	w->first_item = false;
}

static void akey(struct jw *w, const char *key)
{
	item(w);
	fputs("{\"key\":", w->f);
	jcstr(w->f, key);
	fputs(",\"value\":", w->f);
}

static void astr(struct jw *w, const char *key, const char *s, size_t n)
{
	akey(w, key);
	fputs("{\"stringValue\":", w->f);
	lin_otlp_jstr(w->f, s, n);
	fputs("}}", w->f);
}

static void acstr(struct jw *w, const char *key, const char *s)
{
	astr(w, key, s, strlen(s));
}

static void aint(struct jw *w, const char *key, uint64_t v)
{
	if (v == XNIL)
		return; /* unknown is left out, never written as a number */
	akey(w, key);
	fprintf(w->f, "{\"intValue\":\"%" PRId64 "\"}}", (int64_t)v);
}

static void abool(struct jw *w, const char *key, bool v)
{
	akey(w, key);
	fprintf(w->f, "{\"boolValue\":%s}}", v ? "true" : "false");
}

static void aints(struct jw *w, const char *key, const uint64_t *v, size_t n)
{
	akey(w, key);
	fputs("{\"arrayValue\":{\"values\":[", w->f);
	for (size_t i = 0; i < n; i++)
		fprintf(w->f, "%s{\"intValue\":\"%" PRId64 "\"}", i ? "," : "", (int64_t)v[i]);
	fputs("]}}}", w->f);
}

static void ahex(struct jw *w, const char *key, uint64_t v)
{
	akey(w, key);
	fputs("{\"stringValue\":", w->f);
	hex64(w->f, v);
	fputs("}}", w->f);
}

/* ---------------------------------------------------------------- documents */

static void resource_close(struct jw *w)
{
	if (w->proc >= 0)
		fputs("]}]}", w->f);
	w->proc = -1;
}

static void doc_close(struct jw *w)
{
	if (!w->in_doc)
		return;
	resource_close(w);
	fputs("]}\n", w->f);
	w->in_doc = false;
}

static void resource_open(struct jw *w, int proc)
{
	const struct xproc *p = &w->m->procs[proc];
	fprintf(w->f, "%s{\"resource\":{\"attributes\":[", w->res_in_doc ? "," : "");
	w->res_in_doc = true;
	w->first_item = true;
	acstr(w, "service.name", "lineage");
	acstr(w, "host.name", p->host);
	aint(w, "process.pid", p->pid);
	acstr(w, "lineage.backend", p->backend);
	acstr(w, "lineage.host_clock", p->have_clock ? "CLOCK_MONOTONIC+clock_record"
						      : "CLOCK_MONOTONIC");
	uint64_t dev[8];
	for (uint32_t i = 0; i < p->ndev; i++)
		dev[i] = p->dev[i];
	if (p->ndev)
		aints(w, "lineage.device.ids", dev, p->ndev);
	fprintf(w->f, "]},\"scopeSpans\":[{\"scope\":{\"name\":\"lineage-validate\","
		      "\"version\":\"%d.%d.%d\"},\"spans\":[",
		LIN_VERSION_MAJOR, LIN_VERSION_MINOR, LIN_VERSION_PATCH);
	w->proc = proc;
	w->first_span = true;
}

/* Open a span of @proc: new document or resource when needed. */
static void span_open(struct jw *w, int proc, const uint8_t trace[16], uint64_t span,
		      uint64_t parent, const char *name, size_t nlen, int kind, uint64_t t0,
		      uint64_t t1)
{
	if (w->in_doc && w->nspans >= LIN_OTLP_SPANS_PER_DOC)
		doc_close(w);
	if (!w->in_doc) {
		fputs("{\"resourceSpans\":[", w->f);
		w->in_doc = true;
		w->res_in_doc = false;
		w->nspans = 0;
		w->st->documents++;
	}
	if (w->proc != proc) {
		resource_close(w);
		resource_open(w, proc);
	}
	if (t1 < t0)
		t1 = t0;
	fprintf(w->f, "%s{\"traceId\":", w->first_span ? "" : ",");
	hex(w->f, trace, 16);
	fputs(",\"spanId\":", w->f);
	hex64(w->f, span);
	if (parent) {
		fputs(",\"parentSpanId\":", w->f);
		hex64(w->f, parent);
	}
	fputs(",\"name\":", w->f);
	lin_otlp_jstr(w->f, name, nlen);
	fprintf(w->f, ",\"kind\":%d,\"startTimeUnixNano\":\"%" PRIu64 "\",\"endTimeUnixNano\":\"%"
		      PRIu64 "\",\"attributes\":[", kind, t0, t1);
	w->first_span = false;
	w->first_item = true;
	w->nspans++;
	w->st->spans++;
}

static void span_events(struct jw *w)
{
	fputs("],\"events\":[", w->f);
	w->first_item = true;
}

static void span_links(struct jw *w)
{
	fputs("],\"links\":[", w->f);
	w->first_item = true;
}

static void span_close(struct jw *w, const char *error)
{
	fputc(']', w->f);
	if (error) {
		fputs(",\"status\":{\"code\":2,\"message\":", w->f);
		jcstr(w->f, error);
		fputc('}', w->f);
	}
	fputc('}', w->f);
}

static void event(struct jw *w, const struct xfind *x, uint64_t t)
{
	item(w);
	char name[64];
	snprintf(name, sizeof(name), "lineage.%s", x->kind);
	fprintf(w->f, "{\"timeUnixNano\":\"%" PRIu64 "\",\"name\":", t);
	jcstr(w->f, name);
	fputs(",\"attributes\":[", w->f);
	w->first_item = true;
	acstr(w, "lineage.cause", x->cause);
	aint(w, "lineage.trace.offset", x->offset);
	if (x->ncand)
		aints(w, "lineage.candidates", x->cand, x->ncand);
	fputs("]}", w->f);
	w->first_item = false;
	w->st->events++;
}

static void link(struct jw *w, const uint8_t trace[16], uint64_t span, const char *why)
{
	item(w);
	fputs("{\"traceId\":", w->f);
	hex(w->f, trace, 16);
	fputs(",\"spanId\":", w->f);
	hex64(w->f, span);
	fputs(",\"attributes\":[", w->f);
	w->first_item = true;
	acstr(w, "lineage.link", why);
	fputs("]}", w->f);
	w->first_item = false;
	w->st->links++;
}

/* ---------------------------------------------------------------- spans */

static const char *name_or(const struct xmodel *m, uint16_t proc, uint64_t sid, const char *dflt,
			   size_t *len)
{
	uint32_t n;
	const char *s = lin_xmodel_str(m, proc, sid, &n);
	if (!s || !n) {
		*len = strlen(dflt);
		return dflt;
	}
	*len = n;
	return s;
}

static uint64_t proc_span(const struct xmodel *m, int proc)
{
	return lin_w3c_span_id(m->procs[proc].key, 0);
}

static void write_process(struct jw *w, int proc)
{
	const struct xmodel *m = w->m;
	const struct xproc *p = &m->procs[proc];
	uint8_t trace[16];
	lin_w3c_trace_id(p->key, 0, trace);
	char name[300];
	int n = snprintf(name, sizeof(name), "process %s:%" PRIu64, p->host, p->pid);
	uint64_t t0 = p->tmin == XNIL ? 0 : lin_xmodel_unix(m, (uint16_t)proc, p->tmin);
	uint64_t t1 = p->tmin == XNIL ? 0 : lin_xmodel_unix(m, (uint16_t)proc, p->tmax);
	span_open(w, proc, trace, proc_span(m, proc), 0, name, (size_t)n, KIND_INTERNAL, t0, t1);
	acstr(w, "lineage.span", "process");
	span_events(w);
	for (size_t i = 0; i < m->finds.n; i++) {
		const struct xfind *x = lin_vec_at(&m->finds, i);
		if (!x->on_gpu && m->file_proc[x->file] == proc)
			event(w, x, t0);
	}
	span_links(w);
	span_close(w, NULL);
}

static void write_request(struct jw *w, const struct xreq *q)
{
	const struct xmodel *m = w->m;
	const struct xproc *p = &m->procs[q->proc];
	uint8_t trace[16];
	lin_xmodel_req_trace(m, q, trace);
	const struct xreq *par = q->parent == XNIL ? NULL : lin_xmodel_req(m, q->proc, q->parent);
	uint64_t parent = q->remote ? q->rparent : par ? lin_w3c_span_id(p->key, par->id) : 0;
	size_t nlen;
	const char *name = name_or(m, q->proc, q->name_sid, "request", &nlen);
	if (q->rname) { /* format 1.0: "w3c:<traceparent>[ name]" */
		size_t skip = sizeof(LIN_W3C_NAME_PREFIX) - 1 + 55 + 1;
		if (nlen > skip) {
			name += skip;
			nlen -= skip;
		} else {
			name = "request";
			nlen = 7;
		}
	}
	uint64_t t1 = q->has_end ? q->end : p->tmax;
	span_open(w, q->proc, trace, lin_w3c_span_id(p->key, q->id), parent, name, nlen,
		  q->remote ? KIND_SERVER : KIND_INTERNAL, lin_xmodel_unix(m, q->proc, q->begin),
		  lin_xmodel_unix(m, q->proc, t1));
	acstr(w, "lineage.span", "request");
	aint(w, "lineage.request.id", q->id);
	aint(w, "lineage.request.user_id", q->user_id);
	aint(w, "thread.id", q->tid);
	if (!q->has_end)
		abool(w, "lineage.open", true);
	if (q->remote) {
		ahex(w, "lineage.remote.parent_span_id", q->rparent);
		abool(w, "lineage.remote.joined", q->joined);
		w->st->remote_requests++;
		w->st->remote_joined += q->joined;
	}
	span_events(w);
	span_links(w);
	span_close(w, NULL);
}

static void write_epoch(struct jw *w, const struct xepoch *e)
{
	const struct xmodel *m = w->m;
	const struct xproc *p = &m->procs[e->proc];
	const uint64_t *reqs = lin_xmodel_reqs(m, e);
	uint8_t trace[16];
	lin_xmodel_epoch_trace(m, e, trace);
	const struct xepoch *pe = lin_xmodel_epoch(m, e->proc, e->parent);
	uint64_t parent = pe ? lin_w3c_span_id(p->key, pe->id)
		     : e->nreq && lin_xmodel_req(m, e->proc, reqs[0]) ? lin_w3c_span_id(p->key, reqs[0])
		     : proc_span(m, e->proc);
	bool replay = e->exec != XNIL;
	size_t nlen;
	const char *name = name_or(m, e->proc, e->name_sid, replay ? "graph replay" : "epoch", &nlen);
	uint64_t t1 = e->has_end ? e->end : p->tmax;
	span_open(w, e->proc, trace, lin_w3c_span_id(p->key, e->id), parent, name, nlen,
		  KIND_INTERNAL, lin_xmodel_unix(m, e->proc, e->begin),
		  lin_xmodel_unix(m, e->proc, t1));
	acstr(w, "lineage.span", replay ? "graph_replay" : "epoch");
	aint(w, "lineage.epoch.id", e->id);
	aint(w, "lineage.epoch.version", e->version);
	aint(w, "lineage.epoch.reissues", e->reissues);
	aints(w, "lineage.epoch.requests", reqs, e->nreq);
	aint(w, "thread.id", e->tid);
	aint(w, "lineage.graph.exec_id", e->exec);
	aint(w, "lineage.graph.replay_ordinal", e->ordinal);
	if (!e->has_end)
		abool(w, "lineage.open", true);
	span_events(w);
	span_links(w);
	for (uint32_t i = 1; i < e->nreq; i++) { /* fan-in: the other requests it serves */
		const struct xreq *q = lin_xmodel_req(m, e->proc, reqs[i]);
		uint8_t t[16];
		if (q)
			lin_xmodel_req_trace(m, q, t);
		else
			lin_w3c_trace_id(p->key, reqs[i], t);
		link(w, t, lin_w3c_span_id(p->key, reqs[i]), "fan_in");
	}
	span_close(w, NULL);
}

static void write_adopt(struct jw *w, const struct xadopt *a)
{
	const struct xmodel *m = w->m;
	const struct xproc *p = &m->procs[a->proc];
	uint8_t trace[16];
	uint64_t parent = lin_w3c_span_id(p->key, a->target);
	const struct xreq *q = a->kind == LIN_TARGET_REQUEST ? lin_xmodel_req(m, a->proc, a->target)
							     : NULL;
	const struct xepoch *e = a->kind == LIN_TARGET_EPOCH
					 ? lin_xmodel_epoch(m, a->proc, a->target) : NULL;
	if (q) {
		lin_xmodel_req_trace(m, q, trace);
	} else if (e) {
		lin_xmodel_epoch_trace(m, e, trace);
	} else {
		lin_w3c_trace_id(p->key, 0, trace);
		parent = proc_span(m, a->proc);
	}
	uint64_t span = lin_w3c_mix64(p->key ^ lin_w3c_mix64(a->begin ^ (uint64_t)a->tid << 40));
	/* a token captured on a thread and adopted: a handoff; no capture: a scope entered */
	const char *what = a->capture_tid != XNIL ? "handoff" : "scope";
	span_open(w, a->proc, trace, span ? span : 1, parent, what, strlen(what), KIND_INTERNAL,
		  lin_xmodel_unix(m, a->proc, a->begin), lin_xmodel_unix(m, a->proc, a->end));
	acstr(w, "lineage.span", what);
	aint(w, "thread.id", a->tid);
	aint(w, "lineage.capture.thread_id", a->capture_tid);
	aint(w, "lineage.scope.depth", a->depth);
	acstr(w, "lineage.target.kind", a->kind == LIN_TARGET_REQUEST ? "request" : "epoch");
	aint(w, "lineage.target.id", a->target);
	abool(w, "lineage.scope.closed", a->closed);
	span_events(w);
	span_links(w);
	span_close(w, NULL);
}

static const char *gpu_kind(uint8_t k)
{
	return k == LIN_REC_KERNEL ? "kernel" : k == LIN_REC_MEMCPY ? "memcpy" : "memset";
}

static const char *join_name(uint8_t join)
{
	static const char *const names[] = {
		[LIN_JOIN_OBSERVED] = "observed", [LIN_JOIN_INFERRED] = "inferred",
		[LIN_JOIN_LOST] = "lost", [LIN_JOIN_AMBIGUOUS] = "ambiguous",
	};
	return join < sizeof(names) / sizeof(names[0]) ? names[join] : NULL;
}

static void write_gpu(struct jw *w, const struct xgpu *g)
{
	const struct xmodel *m = w->m;
	const struct xproc *p = &m->procs[g->proc];
	uint64_t fi = lin_xmodel_find(m, g->file, g->offset);
	bool bad = g->join == LIN_JOIN_LOST || g->join == LIN_JOIN_AMBIGUOUS;
	const struct xepoch *e = lin_xmodel_gpu_epoch(m, g);
	uint8_t trace[16];
	uint64_t parent;
	const struct xreq *root = NULL;
	if (e) {
		lin_xmodel_epoch_trace(m, e, trace);
		parent = lin_w3c_span_id(p->key, e->id);
		root = lin_xmodel_epoch_root(m, e);
	} else {
		lin_w3c_trace_id(p->key, 0, trace);
		parent = proc_span(m, g->proc);
	}
	uint64_t t0 = g->start != XNIL ? g->start : g->end;
	uint64_t t1 = g->end != XNIL ? g->end : t0;
	bool unknown = t0 == XNIL;
	if (unknown)
		t0 = t1 = p->tmin == XNIL ? 0 : lin_xmodel_unix(m, g->proc, p->tmin);
	size_t nlen;
	const char *name = name_or(m, g->proc, g->name_sid, gpu_kind(g->kind), &nlen);
	uint64_t span = lin_w3c_mix64(p->key ^ lin_w3c_mix64(g->offset ^ (uint64_t)g->file << 48));
	span_open(w, g->proc, trace, span ? span : 1, parent, name, nlen, KIND_INTERNAL, t0, t1);
	acstr(w, "lineage.span", gpu_kind(g->kind));
	if (join_name(g->join))
		acstr(w, "lineage.join", join_name(g->join));
	if (g->join == LIN_JOIN_INFERRED && g->why)
		acstr(w, "lineage.join.rule", g->why);
	aint(w, "lineage.device.id", g->device);
	aint(w, "lineage.device.context", g->context);
	aint(w, "lineage.device.stream", g->stream);
	aint(w, "lineage.cuda.correlation_id", g->corr);
	aint(w, "lineage.graph.id", g->graph);
	aint(w, "lineage.graph.node_id", g->node);
	aint(w, "lineage.bytes", g->bytes);
	if (unknown)
		abool(w, "lineage.time.unknown", true);
	if (root && root->remote && root->joined) {
		abool(w, "lineage.cross_process", true);
		w->st->cross_gpu++;
	}
	span_events(w);
	for (uint64_t f = fi; f != XNIL;) {
		const struct xfind *x = lin_vec_at(&m->finds, f);
		event(w, x, t0);
		f = x->next;
	}
	span_links(w);
	span_close(w, bad ? (g->why ? g->why : join_name(g->join)) : NULL);
}

int lin_xmodel_write(const struct xmodel *m, FILE *out, struct lin_otlp_stats *st)
{
	struct jw w = {.f = out, .m = m, .st = st, .proc = -1};
	memset(st, 0, sizeof(*st));
	st->resources = m->nprocs;
	for (unsigned i = 0; i < m->nprocs; i++)
		write_process(&w, (int)i);
	for (size_t i = 0; i < m->reqs.n; i++)
		write_request(&w, lin_vec_at(&m->reqs, i));
	for (size_t i = 0; i < m->epochs.n; i++)
		write_epoch(&w, lin_vec_at(&m->epochs, i));
	for (size_t i = 0; i < m->adopts.n; i++)
		write_adopt(&w, lin_vec_at(&m->adopts, i));
	for (size_t i = 0; i < m->gpus.n; i++)
		write_gpu(&w, lin_vec_at(&m->gpus, i));
	doc_close(&w);
	if (!st->documents) { /* no process at all: one empty request */
		fputs("{\"resourceSpans\":[]}\n", out);
		st->documents = 1;
	}
	return ferror(out) ? -1 : 0;
}

int lin_otlp_export(const char *const *files, int n, const char *out_path,
		    struct lin_otlp_stats *st, char *err, size_t errlen)
{
	struct xmodel m;
	int rc = lin_xmodel_load(&m, files, n);
	if (rc) {
		lin_xmodel_free(&m);
		snprintf(err, errlen, "out of memory");
		return rc;
	}
	FILE *f = fopen(out_path, "w");
	if (!f) {
		snprintf(err, errlen, "%s: %s", out_path, strerror(errno));
		lin_xmodel_free(&m);
		return -1;
	}
	rc = lin_xmodel_write(&m, f, st);
	if (fclose(f) != 0 || rc) {
		snprintf(err, errlen, "%s: write failed", out_path);
		rc = -1;
	}
	lin_xmodel_free(&m);
	return rc;
}
