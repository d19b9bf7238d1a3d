/* SPDX-License-Identifier: MIT */
/*
 * otlp_json.c - the export's driver of the span model (trace/span_model.h): each request,
 * epoch, handoff and GPU record of the exporter's model of the trace files (otlp_model.c),
 * with the validator's verdicts and findings (otlp_find.c), as OTLP/JSON
 * ExportTraceServiceRequest documents, one per line (the JSON Lines layout of the
 * collector's file exporter). Attribute names: docs/fleet.md.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lineage/trace_format.h"
#include "lineage/version.h"
#include "lineage/w3c.h"
#include "otlp.h"
#include "otlp_emit.h"
#include "otlp_model.h"
#include "span_model.h"

struct jw {
	struct lin_oj oj;
	FILE *f;
	const struct xmodel *m;
	struct lin_otlp_stats *st;
	struct lin_sp_proc *procs; /* the span model's view of each process */
};

static int sink(const char *doc, size_t len, void *user)
{
	return fwrite(doc, 1, len, user) == len ? 0 : -EIO;
}

static void resource(struct lin_oj *oj, int proc, void *user)
{
	(void)oj;
	const struct jw *w = user;
	lin_sp_resource(&w->procs[proc]);
}

/* The span model's process @i: the export sees every input process (remote joins). */
static void sp_proc(struct jw *w, unsigned i, struct lin_sp_proc *sp)
{
	const struct xproc *p = &w->m->procs[i];
	*sp = (struct lin_sp_proc){
		.w = &w->oj,
		.clk = &p->clk,
		.res = (int)i,
		.key = p->key,
		.tmin = p->tmin,
		.tmax = p->tmax,
		.host = p->host,
		.backend = p->backend,
		.service = "lineage",
		.host_clock = !lin_cm_empty(&p->clk.map) ? "CLOCK_MONOTONIC+clock_record" : "CLOCK_MONOTONIC",
		.pid = p->pid,
		.dev = p->dev,
		.ndev = p->ndev,
		.flags = LIN_SP_REMOTE_JOINED,
	};
}

static void event(struct lin_oj *oj, const struct xfind *x, uint64_t t)
{
	char name[64];
	snprintf(name, sizeof(name), "lineage.%s", x->kind);
	lin_oj_event_open(oj, t, name);
	lin_oj_acstr(oj, "lineage.cause", x->cause);
	lin_oj_aint(oj, "lineage.trace.offset", x->offset);
	if (x->ncand)
		lin_oj_aints(oj, "lineage.candidates", x->cand, x->ncand);
	lin_oj_event_close(oj);
}

/* ---------------------------------------------------------------- spans */

/* A span's events: the findings of a process (not about a GPU record), or from one on. */
struct finds {
	const struct xmodel *m;
	int proc;      /* the process's findings, or -1: */
	uint64_t from; /* ... the chain of one record's */
};

static void find_events(void *user, struct lin_oj *oj, uint64_t t0, uint64_t t1)
{
	(void)t1;
	const struct finds *f = user;
	const struct xmodel *m = f->m;
	if (f->proc >= 0) {
		for (size_t i = 0; i < m->finds.n; i++) {
			const struct xfind *x = lin_vec_at(&m->finds, i);
			if (!x->on_gpu && m->file_proc[x->file] == f->proc)
				event(oj, x, t0);
		}
		return;
	}
	for (uint64_t i = f->from; i != LIN_NIL;) {
		const struct xfind *x = lin_vec_at(&m->finds, i);
		event(oj, x, t0);
		i = x->next;
	}
}

static void write_process(struct jw *w, int proc)
{
	struct finds f = { .m = w->m, .proc = proc, .from = LIN_NIL };
	lin_sp_process(&w->procs[proc], &(struct lin_sp_process){ .events = find_events, .user = &f });
}

/* Its name; format 1.0 wrote a remote request's as "w3c:<traceparent>[ name]". */
static void request_name(const struct xmodel *m, const struct xreq *q, struct lin_sp_request *v)
{
	uint32_t n = 0;
	const char *s = lin_xmodel_str(m, q->proc, q->name_sid, &n);
	size_t skip = sizeof(LIN_W3C_NAME_PREFIX) - 1 + 55 + 1;
	if (s && q->rname) {
		s += n > skip ? skip : 0;
		n = n > skip ? (uint32_t)(n - skip) : 0; /* none left: the default */
	}
	v->name = s;
	v->nlen = s ? n : 0;
}

static void write_request(struct jw *w, const struct xreq *q)
{
	const struct xmodel *m = w->m;
	uint8_t trace[16];
	lin_xmodel_req_trace(m, q, trace);
	const struct xreq *par = q->parent == LIN_NIL ? NULL : lin_xmodel_req(m, q->proc, q->parent);
	struct lin_sp_request v = { .id = q->id,
				    .begin = q->begin,
				    .end = q->has_end ? q->end : m->procs[q->proc].tmax,
				    .user_id = q->user_id,
				    .tid = q->tid,
				    .parent = par ? par->id : LIN_NIL,
				    .rparent = q->rparent,
				    .trace = trace,
				    .open = !q->has_end,
				    .remote = q->remote,
				    .joined = q->joined };
	request_name(m, q, &v);
	lin_sp_request(&w->procs[q->proc], &v);
	if (q->remote) {
		w->st->remote_requests++;
		w->st->remote_joined += q->joined;
	}
}

struct fan_in {
	const struct xmodel *m;
	const struct xepoch *e;
	const uint64_t *reqs;
};

static void fan_in_trace(const void *user, uint32_t i, uint8_t out[16])
{
	const struct fan_in *f = user;
	const struct xreq *q = lin_xmodel_req(f->m, f->e->proc, f->reqs[i]);
	if (q)
		lin_xmodel_req_trace(f->m, q, out);
	else
		lin_w3c_trace_id(f->m->procs[f->e->proc].key, f->reqs[i], out);
}

static void write_epoch(struct jw *w, const struct xepoch *e)
{
	const struct xmodel *m = w->m;
	const uint64_t *reqs = lin_xmodel_reqs(m, e);
	uint8_t trace[16];
	lin_xmodel_epoch_trace(m, e, trace);
	const struct xepoch *pe = lin_xmodel_epoch(m, e->proc, e->parent);
	uint32_t nlen = 0;
	const char *name = lin_xmodel_str(m, e->proc, e->name_sid, &nlen);
	struct fan_in f = { m, e, reqs };
	struct lin_sp_epoch v = {
		.id = e->id,
		.begin = e->begin,
		.end = e->has_end ? e->end : m->procs[e->proc].tmax,
		.version = e->version,
		.reissues = e->reissues,
		.tid = e->tid,
		.exec = e->exec,
		.ordinal = e->ordinal,
		.parent_epoch = pe ? pe->id : LIN_NIL,
		.first_req = e->nreq && lin_xmodel_req(m, e->proc, reqs[0]) ? reqs[0] : LIN_NIL,
		.trace = trace,
		.name = name,
		.nlen = name ? nlen : 0,
		.reqs = reqs,
		.nreq = e->nreq,
		.req_trace = fan_in_trace,
		.user = &f,
		.open = !e->has_end,
	};
	lin_sp_epoch(&w->procs[e->proc], &v);
}

static void write_adopt(struct jw *w, const struct xadopt *a)
{
	const struct xmodel *m = w->m;
	uint8_t trace[16];
	const struct xreq *q = a->kind == LIN_TARGET_REQUEST ? lin_xmodel_req(m, a->proc, a->target)
							     : NULL;
	const struct xepoch *e =
		a->kind == LIN_TARGET_EPOCH ? lin_xmodel_epoch(m, a->proc, a->target) : NULL;
	if (q)
		lin_xmodel_req_trace(m, q, trace);
	else if (e)
		lin_xmodel_epoch_trace(m, e, trace);
	lin_sp_adopt(&w->procs[a->proc], &(struct lin_sp_adopt){ .begin = a->begin,
								 .end = a->end,
								 .tid = a->tid,
								 .depth = a->depth,
								 .capture_tid = a->capture_tid,
								 .target = a->target,
								 .kind = a->kind,
								 .trace = q || e ? trace : NULL,
								 .closed = a->closed });
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

/* What @g joins, by the validator's verdict: its epoch, or the request its external
 * correlation named itself; the trace, parent id and the request at the chain's root. */
static const struct xreq *gpu_parent(const struct xmodel *m, const struct xgpu *g,
				     struct lin_sp_gpu *v, uint8_t trace[16])
{
	const struct xepoch *e = lin_xmodel_gpu_epoch(m, g);
	const struct xreq *q = e || !(g->join == LIN_JOIN_OBSERVED || g->join == LIN_JOIN_INFERRED)
				       ? NULL
				       : lin_xmodel_req(m, g->proc, g->epoch);
	if (e) {
		lin_xmodel_epoch_trace(m, e, trace);
		v->parent = e->id;
		v->trace = trace;
		return lin_xmodel_epoch_root(m, e);
	}
	if (q) {
		lin_xmodel_req_trace(m, q, trace);
		v->parent = q->id;
		v->trace = trace;
	}
	return q;
}

static void write_gpu(struct jw *w, const struct xgpu *g)
{
	const struct xmodel *m = w->m;
	bool bad = g->join == LIN_JOIN_LOST || g->join == LIN_JOIN_AMBIGUOUS;
	struct finds f = { .m = m, .proc = -1, .from = lin_xmodel_find(m, g->file, g->offset) };
	uint32_t nlen = 0;
	const char *name = lin_xmodel_str(m, g->proc, g->name_sid, &nlen);
	struct lin_sp_gpu v = {
		.offset = g->offset,
		.file = g->file,
		.kind = g->kind,
		.start = g->start,
		.end = g->end,
		.parent = LIN_NIL,
		.name = name,
		.nlen = name ? nlen : 0,
		.join = join_name(g->join),
		.rule = g->join == LIN_JOIN_INFERRED ? g->why : NULL,
		.status = bad ? (g->why ? g->why : join_name(g->join)) : NULL,
		.device = g->device,
		.context = g->context,
		.stream = g->stream,
		.corr = g->corr,
		.graph = g->graph,
		.node = g->node,
		.bytes = g->bytes,
		.events = find_events,
		.user = &f,
	};
	uint8_t trace[16];
	const struct xreq *root = gpu_parent(m, g, &v, trace);
	v.cross_process = root && root->remote && root->joined;
	w->st->cross_gpu += v.cross_process;
	lin_sp_gpu(&w->procs[g->proc], &v);
}

int lin_xmodel_write(const struct xmodel *m, FILE *out, struct lin_otlp_stats *st)
{
	struct jw w = { .f = out, .m = m, .st = st };
	memset(st, 0, sizeof(*st));
	w.procs = calloc(m->nprocs ? m->nprocs : 1, sizeof(*w.procs));
	if (!w.procs)
		return -1;
	lin_oj_init(&w.oj, sink, out, "lineage-validate", resource, &w);
	for (unsigned i = 0; i < m->nprocs; i++)
		sp_proc(&w, i, &w.procs[i]);
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
	free(w.procs);
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
