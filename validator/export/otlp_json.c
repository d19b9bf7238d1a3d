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
#include "otlp_emit.h"
#include "otlp_model.h"

enum { KIND_INTERNAL = LIN_OJ_KIND_INTERNAL, KIND_SERVER = LIN_OJ_KIND_SERVER };

struct jw {
	struct lin_oj oj;
	FILE *f;
	const struct xmodel *m;
	struct lin_otlp_stats *st;
};

static int sink(const char *doc, size_t len, void *user)
{
	return fwrite(doc, 1, len, user) == len ? 0 : -EIO;
}

static void resource(struct lin_oj *oj, int proc, void *user)
{
	const struct jw *w = user;
	const struct xproc *p = &w->m->procs[proc];
	lin_oj_acstr(oj, "service.name", "lineage");
	lin_oj_acstr(oj, "host.name", p->host);
	lin_oj_aint(oj, "process.pid", p->pid);
	lin_oj_acstr(oj, "lineage.backend", p->backend);
	lin_oj_acstr(oj, "lineage.host_clock",
		     !lin_cm_empty(&p->clk.map) ? "CLOCK_MONOTONIC+clock_record" : "CLOCK_MONOTONIC");
	uint64_t dev[8];
	for (uint32_t i = 0; i < p->ndev; i++)
		dev[i] = p->dev[i];
	if (p->ndev)
		lin_oj_aints(oj, "lineage.device.ids", dev, p->ndev);
}

static void event(struct jw *w, const struct xfind *x, uint64_t t)
{
	char name[64];
	snprintf(name, sizeof(name), "lineage.%s", x->kind);
	lin_oj_event_open(&w->oj, t, name);
	lin_oj_acstr(&w->oj, "lineage.cause", x->cause);
	lin_oj_aint(&w->oj, "lineage.trace.offset", x->offset);
	if (x->ncand)
		lin_oj_aints(&w->oj, "lineage.candidates", x->cand, x->ncand);
	lin_oj_event_close(&w->oj);
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
	uint64_t t0 = p->tmin == LIN_NIL ? 0 : lin_xmodel_unix(m, (uint16_t)proc, p->tmin);
	uint64_t t1 = p->tmin == LIN_NIL ? 0 : lin_xmodel_unix(m, (uint16_t)proc, p->tmax);
	lin_oj_span_open(&w->oj, proc, trace, proc_span(m, proc), 0, name, (size_t)n, KIND_INTERNAL,
			 t0, t1);
	lin_oj_acstr(&w->oj, "lineage.span", "process");
	lin_oj_events(&w->oj);
	for (size_t i = 0; i < m->finds.n; i++) {
		const struct xfind *x = lin_vec_at(&m->finds, i);
		if (!x->on_gpu && m->file_proc[x->file] == proc)
			event(w, x, t0);
	}
	lin_oj_links(&w->oj);
	lin_oj_span_close(&w->oj, NULL);
}

static void write_request(struct jw *w, const struct xreq *q)
{
	const struct xmodel *m = w->m;
	const struct xproc *p = &m->procs[q->proc];
	uint8_t trace[16];
	lin_xmodel_req_trace(m, q, trace);
	const struct xreq *par = q->parent == LIN_NIL ? NULL : lin_xmodel_req(m, q->proc, q->parent);
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
	lin_oj_span_open(&w->oj, q->proc, trace, lin_w3c_span_id(p->key, q->id), parent, name, nlen,
			 q->remote ? KIND_SERVER : KIND_INTERNAL,
			 lin_xmodel_unix(m, q->proc, q->begin), lin_xmodel_unix(m, q->proc, t1));
	lin_oj_acstr(&w->oj, "lineage.span", "request");
	lin_oj_aint(&w->oj, "lineage.request.id", q->id);
	lin_oj_aint(&w->oj, "lineage.request.user_id", q->user_id);
	lin_oj_aint(&w->oj, "thread.id", q->tid);
	if (!q->has_end)
		lin_oj_abool(&w->oj, "lineage.open", true);
	if (q->remote) {
		lin_oj_ahex(&w->oj, "lineage.remote.parent_span_id", q->rparent);
		lin_oj_abool(&w->oj, "lineage.remote.joined", q->joined);
		w->st->remote_requests++;
		w->st->remote_joined += q->joined;
	}
	lin_oj_events(&w->oj);
	lin_oj_links(&w->oj);
	lin_oj_span_close(&w->oj, NULL);
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
			  : e->nreq && lin_xmodel_req(m, e->proc, reqs[0])
				  ? lin_w3c_span_id(p->key, reqs[0])
				  : proc_span(m, e->proc);
	bool replay = e->exec != LIN_NIL;
	size_t nlen;
	const char *name = name_or(m, e->proc, e->name_sid, replay ? "graph replay" : "epoch", &nlen);
	uint64_t t1 = e->has_end ? e->end : p->tmax;
	lin_oj_span_open(&w->oj, e->proc, trace, lin_w3c_span_id(p->key, e->id), parent, name, nlen,
			 KIND_INTERNAL, lin_xmodel_unix(m, e->proc, e->begin),
			 lin_xmodel_unix(m, e->proc, t1));
	lin_oj_acstr(&w->oj, "lineage.span", replay ? "graph_replay" : "epoch");
	lin_oj_aint(&w->oj, "lineage.epoch.id", e->id);
	lin_oj_aint(&w->oj, "lineage.epoch.version", e->version);
	lin_oj_aint(&w->oj, "lineage.epoch.reissues", e->reissues);
	lin_oj_aints(&w->oj, "lineage.epoch.requests", reqs, e->nreq);
	lin_oj_aint(&w->oj, "thread.id", e->tid);
	lin_oj_aint(&w->oj, "lineage.graph.exec_id", e->exec);
	lin_oj_aint(&w->oj, "lineage.graph.replay_ordinal", e->ordinal);
	if (!e->has_end)
		lin_oj_abool(&w->oj, "lineage.open", true);
	lin_oj_events(&w->oj);
	lin_oj_links(&w->oj);
	for (uint32_t i = 1; i < e->nreq; i++) { /* fan-in: the other requests it serves */
		const struct xreq *q = lin_xmodel_req(m, e->proc, reqs[i]);
		uint8_t t[16];
		if (q)
			lin_xmodel_req_trace(m, q, t);
		else
			lin_w3c_trace_id(p->key, reqs[i], t);
		lin_oj_link(&w->oj, t, lin_w3c_span_id(p->key, reqs[i]), "fan_in");
	}
	lin_oj_span_close(&w->oj, NULL);
}

static void write_adopt(struct jw *w, const struct xadopt *a)
{
	const struct xmodel *m = w->m;
	const struct xproc *p = &m->procs[a->proc];
	uint8_t trace[16];
	uint64_t parent = lin_w3c_span_id(p->key, a->target);
	const struct xreq *q = a->kind == LIN_TARGET_REQUEST ? lin_xmodel_req(m, a->proc, a->target)
							     : NULL;
	const struct xepoch *e =
		a->kind == LIN_TARGET_EPOCH ? lin_xmodel_epoch(m, a->proc, a->target) : NULL;
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
	const char *what = a->capture_tid != LIN_NIL ? "handoff" : "scope";
	lin_oj_span_open(&w->oj, a->proc, trace, span ? span : 1, parent, what, strlen(what),
			 KIND_INTERNAL, lin_xmodel_unix(m, a->proc, a->begin),
			 lin_xmodel_unix(m, a->proc, a->end));
	lin_oj_acstr(&w->oj, "lineage.span", what);
	lin_oj_aint(&w->oj, "thread.id", a->tid);
	lin_oj_aint(&w->oj, "lineage.capture.thread_id", a->capture_tid);
	lin_oj_aint(&w->oj, "lineage.scope.depth", a->depth);
	lin_oj_acstr(&w->oj, "lineage.target.kind", a->kind == LIN_TARGET_REQUEST ? "request" : "epoch");
	lin_oj_aint(&w->oj, "lineage.target.id", a->target);
	lin_oj_abool(&w->oj, "lineage.scope.closed", a->closed);
	lin_oj_events(&w->oj);
	lin_oj_links(&w->oj);
	lin_oj_span_close(&w->oj, NULL);
}

static const char *gpu_kind(uint8_t k)
{
	return k == LIN_REC_KERNEL ? "kernel" : k == LIN_REC_MEMCPY ? "memcpy" : "memset";
}

static const char *join_name(uint8_t join)
{
	static const char *const names[] = {
		[LIN_JOIN_OBSERVED] = "observed",
		[LIN_JOIN_INFERRED] = "inferred",
		[LIN_JOIN_LOST] = "lost",
		[LIN_JOIN_AMBIGUOUS] = "ambiguous",
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
	/* joined to a request: its external correlation named the request itself */
	const struct xreq *q = e || !(g->join == LIN_JOIN_OBSERVED || g->join == LIN_JOIN_INFERRED)
				       ? NULL
				       : lin_xmodel_req(m, g->proc, g->epoch);
	if (e) {
		lin_xmodel_epoch_trace(m, e, trace);
		parent = lin_w3c_span_id(p->key, e->id);
		root = lin_xmodel_epoch_root(m, e);
	} else if (q) {
		lin_xmodel_req_trace(m, q, trace);
		parent = lin_w3c_span_id(p->key, q->id);
		root = q;
	} else {
		lin_w3c_trace_id(p->key, 0, trace);
		parent = proc_span(m, g->proc);
	}
	uint64_t start = lin_xmodel_dev_unix(m, g->proc, g->start);
	uint64_t end = lin_xmodel_dev_unix(m, g->proc, g->end);
	uint64_t t0 = start != LIN_NIL ? start : end;
	uint64_t t1 = end != LIN_NIL ? end : t0;
	bool unknown = t0 == LIN_NIL;
	if (unknown)
		t0 = t1 = p->tmin == LIN_NIL ? 0 : lin_xmodel_unix(m, g->proc, p->tmin);
	size_t nlen;
	const char *name = name_or(m, g->proc, g->name_sid, gpu_kind(g->kind), &nlen);
	uint64_t span = lin_w3c_mix64(p->key ^ lin_w3c_mix64(g->offset ^ (uint64_t)g->file << 48));
	lin_oj_span_open(&w->oj, g->proc, trace, span ? span : 1, parent, name, nlen, KIND_INTERNAL,
			 t0, t1);
	lin_oj_acstr(&w->oj, "lineage.span", gpu_kind(g->kind));
	if (join_name(g->join))
		lin_oj_acstr(&w->oj, "lineage.join", join_name(g->join));
	if (g->join == LIN_JOIN_INFERRED && g->why)
		lin_oj_acstr(&w->oj, "lineage.join.rule", g->why);
	lin_oj_gpu_ids(&w->oj, g->device, g->context, g->stream, g->corr, g->graph, g->node, g->bytes);
	if (unknown)
		lin_oj_abool(&w->oj, "lineage.time.unknown", true);
	if (root && root->remote && root->joined) {
		lin_oj_abool(&w->oj, "lineage.cross_process", true);
		w->st->cross_gpu++;
	}
	lin_oj_events(&w->oj);
	for (uint64_t f = fi; f != LIN_NIL;) {
		const struct xfind *x = lin_vec_at(&m->finds, f);
		event(w, x, t0);
		f = x->next;
	}
	lin_oj_links(&w->oj);
	lin_oj_span_close(&w->oj, bad ? (g->why ? g->why : join_name(g->join)) : NULL);
}

int lin_xmodel_write(const struct xmodel *m, FILE *out, struct lin_otlp_stats *st)
{
	struct jw w = { .f = out, .m = m, .st = st };
	memset(st, 0, sizeof(*st));
	lin_oj_init(&w.oj, sink, out, "lineage-validate", resource, &w);
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
	int err = lin_oj_doc_close(&w.oj);
	lin_oj_free(&w.oj);
	st->documents = w.oj.documents;
	st->spans = w.oj.spans;
	st->links = w.oj.links;
	st->events = w.oj.events;
	if (!st->documents) { /* no process at all: one empty request */
		fputs("{\"resourceSpans\":[]}\n", out);
		st->documents = 1;
	}
	return err || ferror(out) ? -1 : 0;
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
