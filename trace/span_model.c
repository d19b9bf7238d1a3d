/* SPDX-License-Identifier: MIT */
/*
 * span_model.c - the spans of lineage's OpenTelemetry output, written once for the stream
 * and the export; see span_model.h. Attribute names and span shapes: docs/fleet.md.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "lineage/trace_format.h"
#include "lineage/w3c.h"
#include "records.h"
#include "span_model.h"

/* ---------------------------------------------------------------- ids, names, times */

uint64_t lin_sp_host_unix(const struct lin_sp_proc *p, uint64_t host_ns)
{
	return lin_oj_host_unix(p->clk, host_ns);
}

static uint64_t dev_unix(const struct lin_sp_proc *p, uint64_t dev_ns)
{
	return lin_oj_dev_unix(p->clk, dev_ns);
}

/* The process's first (@last false) or last host time on the Unix clock. */
static uint64_t proc_time(const struct lin_sp_proc *p, bool last)
{
	if (p->tmin == LIN_NIL)
		return p->flags & LIN_SP_EMPTY_AT_HOST_ZERO ? lin_sp_host_unix(p, 0) : 0;
	return lin_sp_host_unix(p, last ? p->tmax : p->tmin);
}

static uint64_t span_of(const struct lin_sp_proc *p, uint64_t id)
{
	return lin_w3c_span_id(p->key, id);
}

static uint64_t proc_span(const struct lin_sp_proc *p) { return span_of(p, 0); }

/* An id mixed from the process key, never 0 (0 is "no parent"). */
static uint64_t mixed_id(const struct lin_sp_proc *p, uint64_t v)
{
	uint64_t span = lin_w3c_mix64(p->key ^ lin_w3c_mix64(v));
	return span ? span : 1;
}

static void name_or(const char **name, size_t *nlen, const char *dflt)
{
	if (!*name || !*nlen) {
		*name = dflt;
		*nlen = strlen(dflt);
	}
}

static void span_open(const struct lin_sp_proc *p, const uint8_t trace[16], uint64_t span,
		      uint64_t parent, const char *name, size_t nlen, int kind, uint64_t t0, uint64_t t1)
{
	lin_oj_span_open(p->w, p->res, trace, span, parent, name, nlen, kind, t0, t1);
}

/* Events (the driver's), links (none) and the status. */
static void span_close(const struct lin_sp_proc *p, lin_sp_events_fn events, void *user,
		       uint64_t t0, uint64_t t1, const char *status)
{
	lin_oj_events(p->w);
	if (events)
		events(user, p->w, t0, t1);
	lin_oj_links(p->w);
	lin_oj_span_close(p->w, status);
}

static int hexbyte(const char *s, uint8_t *out)
{
	int v = 0;
	for (int i = 0; i < 2; i++) {
		char c = s[i];
		int d = (c >= '0' && c <= '9')   ? c - '0'
			: (c >= 'a' && c <= 'f') ? c - 'a' + 10
						 : -1;
		if (d < 0)
			return -1;
		v = v << 4 | d;
	}
	*out = (uint8_t)v;
	return 0;
}

bool lin_sp_w3c_name(const char *s, size_t len, uint8_t trace[16], uint64_t *parent)
{
	const size_t pl = sizeof(LIN_W3C_NAME_PREFIX) - 1;
	if (len < pl + 55 || memcmp(s, LIN_W3C_NAME_PREFIX, pl) || (len > pl + 55 && s[pl + 55] != ' '))
		return false;
	s += pl;
	uint8_t t[16], b[8], v, fl, zero = 0, tz = 0;
	if (hexbyte(s, &v) || v == 0xff || s[2] != '-' || s[35] != '-' || s[52] != '-' ||
	    hexbyte(s + 53, &fl))
		return false;
	for (int i = 0; i < 16; i++) {
		if (hexbyte(s + 3 + 2 * i, &t[i]))
			return false;
		tz |= t[i];
	}
	for (int i = 0; i < 8; i++) {
		if (hexbyte(s + 36 + 2 * i, &b[i]))
			return false;
		zero |= b[i];
	}
	if (!zero || !tz)
		return false;
	memcpy(trace, t, 16);
	*parent = lin_w3c_get64(b);
	return true;
}

/* ---------------------------------------------------------------- spans */

void lin_sp_resource(const struct lin_sp_proc *p)
{
	struct lin_oj *w = p->w;
	lin_oj_acstr(w, "service.name", p->service);
	lin_oj_acstr(w, "host.name", p->host);
	lin_oj_aint(w, "process.pid", p->pid);
	lin_oj_acstr(w, "lineage.backend", p->backend);
	lin_oj_acstr(w, "lineage.host_clock", p->host_clock);
	uint64_t dev[8];
	uint32_t n = p->ndev < 8 ? p->ndev : 8;
	for (uint32_t i = 0; i < n; i++)
		dev[i] = p->dev[i];
	if (n)
		lin_oj_aints(w, "lineage.device.ids", dev, n);
}

void lin_sp_process(const struct lin_sp_proc *p, const struct lin_sp_process *v)
{
	uint8_t trace[16];
	lin_w3c_trace_id(p->key, 0, trace);
	char name[300];
	int n = snprintf(name, sizeof(name), "process %s:%" PRIu64, p->host, p->pid);
	uint64_t t0 = proc_time(p, false), t1 = proc_time(p, true);
	span_open(p, trace, proc_span(p), 0, name, (size_t)n, LIN_OJ_KIND_INTERNAL, t0, t1);
	lin_oj_acstr(p->w, "lineage.span", "process");
	if (v->events_dropped)
		lin_oj_aint(p->w, "lineage.events.dropped", v->events_dropped);
	if (v->skipped_bytes) /* the stream fell behind: spans of these bytes are missing */
		lin_oj_aint(p->w, "lineage.stream.skipped_bytes", v->skipped_bytes);
	span_close(p, v->events, v->user, t0, t1, NULL);
}

void lin_sp_request(const struct lin_sp_proc *p, const struct lin_sp_request *v)
{
	struct lin_oj *w = p->w;
	uint64_t parent = v->remote ? v->rparent : v->parent != LIN_NIL ? span_of(p, v->parent) : 0;
	const char *name = v->name;
	size_t nlen = v->nlen;
	name_or(&name, &nlen, "request");
	uint64_t t0 = lin_sp_host_unix(p, v->begin), t1 = lin_sp_host_unix(p, v->end);
	span_open(p, v->trace, span_of(p, v->id), parent, name, nlen,
		  v->remote ? LIN_OJ_KIND_SERVER : LIN_OJ_KIND_INTERNAL, t0, t1);
	lin_oj_acstr(w, "lineage.span", "request");
	lin_oj_aint(w, "lineage.request.id", v->id);
	lin_oj_aint(w, "lineage.request.user_id", v->user_id);
	lin_oj_aint(w, "thread.id", v->tid);
	if (v->open)
		lin_oj_abool(w, "lineage.open", true);
	if (v->remote) {
		lin_oj_ahex(w, "lineage.remote.parent_span_id", v->rparent);
		if (p->flags & LIN_SP_REMOTE_JOINED)
			lin_oj_abool(w, "lineage.remote.joined", v->joined);
	}
	span_close(p, NULL, NULL, t0, t1, NULL);
}

static uint64_t epoch_parent(const struct lin_sp_proc *p, const struct lin_sp_epoch *v)
{
	return v->parent_epoch != LIN_NIL ? span_of(p, v->parent_epoch)
	       : v->first_req != LIN_NIL  ? span_of(p, v->first_req)
					  : proc_span(p);
}

static void epoch_attrs(const struct lin_sp_proc *p, const struct lin_sp_epoch *v, bool replay)
{
	struct lin_oj *w = p->w;
	lin_oj_acstr(w, "lineage.span", replay ? "graph_replay" : "epoch");
	lin_oj_aint(w, "lineage.epoch.id", v->id);
	lin_oj_aint(w, "lineage.epoch.version", v->version);
	lin_oj_aint(w, "lineage.epoch.reissues", v->reissues);
	uint32_t n = v->nreq;
	if (p->flags & LIN_SP_EPOCH_REQS_CAP && n > LIN_SP_STREAM_EPOCH_REQS)
		n = LIN_SP_STREAM_EPOCH_REQS;
	lin_oj_aints(w, "lineage.epoch.requests", v->reqs, n);
	lin_oj_aint(w, "thread.id", v->tid);
	lin_oj_aint(w, "lineage.graph.exec_id", v->exec);
	lin_oj_aint(w, "lineage.graph.replay_ordinal", v->ordinal);
	if (v->open)
		lin_oj_abool(w, "lineage.open", true);
}

void lin_sp_epoch(const struct lin_sp_proc *p, const struct lin_sp_epoch *v)
{
	struct lin_oj *w = p->w;
	bool replay = v->exec != LIN_NIL;
	const char *name = v->name;
	size_t nlen = v->nlen;
	name_or(&name, &nlen, replay ? "graph replay" : "epoch");
	span_open(p, v->trace, span_of(p, v->id), epoch_parent(p, v), name, nlen,
		  LIN_OJ_KIND_INTERNAL, lin_sp_host_unix(p, v->begin), lin_sp_host_unix(p, v->end));
	epoch_attrs(p, v, replay);
	lin_oj_events(w);
	lin_oj_links(w);
	for (uint32_t i = 1; i < v->nreq; i++) { /* fan-in: the other requests it serves */
		uint8_t t[16];
		v->req_trace(v->user, i, t);
		lin_oj_link(w, t, span_of(p, v->reqs[i]), "fan_in");
	}
	lin_oj_span_close(w, NULL);
}

void lin_sp_adopt(const struct lin_sp_proc *p, const struct lin_sp_adopt *v)
{
	struct lin_oj *w = p->w;
	uint8_t own[16];
	const uint8_t *trace = v->trace;
	uint64_t parent = span_of(p, v->target);
	if (!trace) {
		lin_w3c_trace_id(p->key, 0, own);
		trace = own;
		parent = proc_span(p);
	}
	/* a token captured on a thread and adopted: a handoff; no capture: a scope entered */
	const char *what = v->capture_tid != LIN_NIL ? "handoff" : "scope";
	uint64_t t0 = lin_sp_host_unix(p, v->begin), t1 = lin_sp_host_unix(p, v->end);
	span_open(p, trace, mixed_id(p, v->begin ^ v->tid << 40), parent, what, strlen(what),
		  LIN_OJ_KIND_INTERNAL, t0, t1);
	lin_oj_acstr(w, "lineage.span", what);
	lin_oj_aint(w, "thread.id", v->tid);
	lin_oj_aint(w, "lineage.capture.thread_id", v->capture_tid);
	lin_oj_aint(w, "lineage.scope.depth", v->depth);
	lin_oj_acstr(w, "lineage.target.kind", v->kind == LIN_TARGET_REQUEST ? "request" : "epoch");
	lin_oj_aint(w, "lineage.target.id", v->target);
	lin_oj_abool(w, "lineage.scope.closed", v->closed);
	span_close(p, NULL, NULL, t0, t1, NULL);
}

static const char *gpu_kind(uint8_t k)
{
	return k == LIN_REC_KERNEL ? "kernel" : k == LIN_REC_MEMCPY ? "memcpy" : "memset";
}

/* A GPU record's identity attributes. */
static void gpu_ids(struct lin_oj *w, const struct lin_sp_gpu *v)
{
	lin_oj_aint(w, "lineage.device.id", v->device);
	lin_oj_aint(w, "lineage.device.context", v->context);
	lin_oj_aint(w, "lineage.device.stream", v->stream);
	lin_oj_aint(w, "lineage.cuda.correlation_id", v->corr);
	lin_oj_aint(w, "lineage.graph.id", v->graph);
	lin_oj_aint(w, "lineage.graph.node_id", v->node);
	lin_oj_aint(w, "lineage.bytes", v->bytes);
}

void lin_sp_gpu(const struct lin_sp_proc *p, const struct lin_sp_gpu *v)
{
	struct lin_oj *w = p->w;
	uint8_t own[16];
	const uint8_t *trace = v->trace;
	uint64_t parent = span_of(p, v->parent);
	if (!trace) {
		lin_w3c_trace_id(p->key, 0, own);
		trace = own;
		parent = proc_span(p);
	}
	uint64_t start = dev_unix(p, v->start), end = dev_unix(p, v->end);
	uint64_t t0 = start != LIN_NIL ? start : end;
	uint64_t t1 = end != LIN_NIL ? end : t0;
	bool unknown = t0 == LIN_NIL;
	if (unknown) /* placed at the process's start */
		t0 = t1 = proc_time(p, false);
	const char *name = v->name;
	size_t nlen = v->nlen;
	name_or(&name, &nlen, gpu_kind(v->kind));
	span_open(p, trace, mixed_id(p, v->offset ^ (uint64_t)v->file << 48), parent, name, nlen,
		  LIN_OJ_KIND_INTERNAL, t0, t1);
	lin_oj_acstr(w, "lineage.span", gpu_kind(v->kind));
	if (v->join)
		lin_oj_acstr(w, "lineage.join", v->join);
	if (v->rule)
		lin_oj_acstr(w, "lineage.join.rule", v->rule);
	gpu_ids(w, v);
	if (p->flags & LIN_SP_GPU_OFFSET)
		lin_oj_aint(w, "lineage.trace.offset", v->offset);
	if (unknown)
		lin_oj_abool(w, "lineage.time.unknown", true);
	if (v->cross_process)
		lin_oj_abool(w, "lineage.cross_process", true);
	span_close(p, v->events, v->user, t0, t1, v->status);
}
