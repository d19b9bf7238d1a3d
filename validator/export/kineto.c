/* SPDX-License-Identifier: MIT */
/*
 * kineto.c - lineage-validate --export-kineto: a lineage trace as PyTorch-profiler (Kineto)
 * trace-event JSON (docs/validator.md, "Kineto export").
 *
 * What maps to what (Kineto's own categories and argument names, as its
 * CuptiActivityProfiler writes them):
 *   request_begin..request_end     user_annotation "request[rN]" on the declaring thread
 *   token_adopt..scope_close       user_annotation "task[eN]" (a worker's task: the
 *                                  outermost scope on its thread, adopted from another
 *                                  thread's capture) or "scope[eN]" (any other scope)
 *   launch..launch_end             cpu_op (the launch site), "External id" unique per op
 *   api (runtime, driver)          cuda_runtime / cuda_driver, "correlation", "cbid", and
 *                                  the "External id" of the launch that made the call
 *   kernel, memcpy, memset         kernel / gpu_memcpy / gpu_memset on pid = device,
 *                                  tid = stream, args "device", "stream", "correlation",
 *                                  "External id", "context" (+ "lineage key": the key a
 *                                  cause-truth or truth file names the record by)
 *   sync (+ the cuda_event record  cuda_sync ("Event Sync", "Stream Wait Event", "Stream
 *   it waits for)                  Sync", "Context Sync") with "wait_on_stream",
 *                                  "wait_on_cuda_event_record_corr_id",
 *                                  "wait_on_cuda_event_id" where an event is named
 *   runtime call -> its GPU record ac2g flow ("s" at the call, "f" at the GPU record)
 * Lost: host_sched records, graph topology (graph_node, graph_edge), token captures,
 * epoch reissues, misuse and drop records, the clock pairs themselves (times are mapped).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clockmap.h"
#include "dispatch.h"
#include "kineto.h"
#include "lineage/trace_format.h"
#include "otlp_emit.h"
#include "reader.h"

struct kapi {
	uint64_t corr, start, end, pid, tid;
	uint32_t domain, cbid;
	uint64_t ext; /* the launch op's External id, or 0 */
};
struct kgpu {
	uint64_t corr, start, end, device, context, stream, key, name_sid, graph, node;
	uint32_t type;
};
struct kevent {
	uint64_t event, corr, device, stream, sync_id; /* event first: the sort key (lower) */
};
struct ksync {
	uint64_t corr, type, start, end, context, stream, event, sync_id;
};
struct kspan { /* annotations and ops: host times */
	uint64_t tid, start, end, id, name_sid, corr, ext;
	uint64_t ext_id;      /* 'o': the launch record's ext_id (late bits cleared), or LIN_NIL */
	bool ended;           /* 'o': a launch_end closed it */
	uint32_t depth, what; /* what: 'r' request, 'h' handoff scope, 'o' launch op */
	bool handed;          /* 'h': adopted from another thread's capture (a worker's task) */
	bool open;
};
struct kstr {
	uint64_t sid;
	char *text;
};
struct kxc { /* ext_correlation: a call's correlation -> the external id pushed around it */
	uint64_t corr, ext_id;
};
struct kreq { /* an epoch's requests (epoch_declare) */
	uint64_t epoch, req;
};

#define VEC(T, name) \
	T *name; \
	size_t n_##name, cap_##name

struct kctx {
	VEC(struct kapi, api);
	VEC(struct kgpu, gpu);
	VEC(struct kevent, ev);
	VEC(struct ksync, sync);
	VEC(struct kspan, span);
	VEC(struct kstr, str);
	VEC(struct kreq, req);
	VEC(struct kxc, xc);
	struct lin_clockmap clk;
	uint64_t max_corr;
	bool dev_host, oom;
};

#define PUSH(c, name) \
	((c)->n_##name == (c)->cap_##name && \
			 !grow((void **)&(c)->name, &(c)->cap_##name, sizeof(*(c)->name)) \
		 ? (c->oom = true, (void *)NULL) \
		 : (void *)memset(&(c)->name[(c)->n_##name++], 0, sizeof(*(c)->name)))

static bool grow(void **v, size_t *cap, size_t sz)
{
	size_t nc = *cap ? *cap * 2 : 256;
	void *p = realloc(*v, nc * sz);
	if (!p)
		return false;
	*v = p;
	*cap = nc;
	return true;
}

/* ------------------------------------------------------------------ the read */

static void on_clock(void *arg, const struct lin_rec *r)
{
	struct kctx *c = arg;
	if (!lin_cm_add(&c->clk, LIN_GET(r, CLOCK, HOST_NS), LIN_GET(r, CLOCK, DEVICE_NS),
			LIN_OPT(r, CLOCK, HOST_AFTER_NS)))
		c->oom = true;
}

static void on_string(void *arg, const struct lin_rec *r)
{
	struct kctx *c = arg;
	struct kstr *s = PUSH(c, str);
	if (!s)
		return;
	s->sid = LIN_GET(r, STRING, SID);
	s->text = strndup(r->str, r->str_len);
	if (!s->text)
		c->oom = true;
}

static void on_request_begin(void *arg, const struct lin_rec *r)
{
	struct kctx *c = arg;
	struct kspan *s = PUSH(c, span);
	if (!s)
		return;
	s->what = 'r';
	s->tid = LIN_GET(r, REQUEST_BEGIN, TID);
	s->start = s->end = LIN_GET(r, REQUEST_BEGIN, HOST_NS);
	s->id = LIN_GET(r, REQUEST_BEGIN, REQUEST);
	s->name_sid = LIN_OPT(r, REQUEST_BEGIN, NAME_SID);
	s->open = true;
}

static void on_request_end(void *arg, const struct lin_rec *r)
{
	struct kctx *c = arg;
	uint64_t req = LIN_GET(r, REQUEST_END, REQUEST);
	for (size_t i = c->n_span; i-- > 0;) {
		struct kspan *s = &c->span[i];
		if (s->what == 'r' && s->open && s->id == req) {
			s->end = LIN_GET(r, REQUEST_END, HOST_NS);
			s->open = false;
			return;
		}
	}
}

static void on_epoch_declare(void *arg, const struct lin_rec *r)
{
	struct kctx *c = arg;
	for (uint32_t i = 0; i < r->nreqs; i++) {
		struct kreq *q = PUSH(c, req);
		if (!q)
			return;
		q->epoch = LIN_GET(r, EPOCH_DECLARE, EPOCH);
		q->req = r->reqs[i];
	}
}

static void on_adopt(void *arg, const struct lin_rec *r)
{
	struct kctx *c = arg;
	struct kspan *s = PUSH(c, span);
	if (!s)
		return;
	s->what = 'h';
	s->tid = LIN_GET(r, TOKEN_ADOPT, TID);
	s->start = s->end = LIN_GET(r, TOKEN_ADOPT, HOST_NS);
	s->id = LIN_GET(r, TOKEN_ADOPT, TARGET);
	s->corr = LIN_GET(r, TOKEN_ADOPT, TARGET_KIND);
	s->depth = (uint32_t)LIN_GET(r, TOKEN_ADOPT, DEPTH);
	s->handed = !LIN_IS_NIL(r, TOKEN_ADOPT, CAPTURE_TID) &&
		    LIN_GET(r, TOKEN_ADOPT, CAPTURE_TID) != s->tid;
	s->open = true;
}

static void on_scope_close(void *arg, const struct lin_rec *r)
{
	struct kctx *c = arg;
	uint64_t tid = LIN_GET(r, SCOPE_CLOSE, TID), target = LIN_GET(r, SCOPE_CLOSE, TARGET);
	for (size_t i = c->n_span; i-- > 0;) {
		struct kspan *s = &c->span[i];
		if (s->what == 'h' && s->open && s->tid == tid && s->id == target) {
			if (!LIN_IS_NIL(r, SCOPE_CLOSE, HOST_NS))
				s->end = LIN_GET(r, SCOPE_CLOSE, HOST_NS);
			s->open = false;
			return;
		}
	}
}

static void on_launch(void *arg, const struct lin_rec *r)
{
	struct kctx *c = arg;
	struct kspan *s = PUSH(c, span);
	if (!s)
		return;
	s->what = 'o';
	s->tid = LIN_GET(r, LAUNCH, TID);
	s->start = s->end = LIN_GET(r, LAUNCH, HOST_NS);
	s->id = LIN_OPT(r, LAUNCH, EPOCH);
	s->name_sid = LIN_OPT(r, LAUNCH, NAME_SID);
	s->corr = LIN_OPT(r, LAUNCH, CORRELATION);
	s->ext_id = LIN_IS_NIL(r, LAUNCH, EXT_ID) ? LIN_NIL
						  : LIN_GET(r, LAUNCH, EXT_ID) & LIN_EXT_ID_MASK;
	s->depth = LIN_IS_NIL(r, LAUNCH, DEPTH) ? 0 : (uint32_t)LIN_GET(r, LAUNCH, DEPTH);
	s->open = true;
}

static void on_launch_end(void *arg, const struct lin_rec *r)
{
	struct kctx *c = arg;
	uint64_t tid = LIN_GET(r, LAUNCH_END, TID);
	uint32_t depth = (uint32_t)LIN_GET(r, LAUNCH_END, DEPTH);
	for (size_t i = c->n_span; i-- > 0;) {
		struct kspan *s = &c->span[i];
		if (s->what == 'o' && s->open && s->tid == tid && s->depth == depth) {
			if (!LIN_IS_NIL(r, LAUNCH_END, HOST_NS)) {
				s->end = LIN_GET(r, LAUNCH_END, HOST_NS);
				s->ended = true;
			}
			s->open = false;
			return;
		}
	}
}

static void on_ext(void *arg, const struct lin_rec *r)
{
	struct kctx *c = arg;
	if (LIN_IS_NIL(r, EXT_CORRELATION, CORRELATION))
		return;
	struct kxc *x = PUSH(c, xc);
	if (!x)
		return;
	x->corr = LIN_GET(r, EXT_CORRELATION, CORRELATION);
	x->ext_id = LIN_GET(r, EXT_CORRELATION, EXTERNAL_ID) & LIN_EXT_ID_MASK;
}

static void on_api(void *arg, const struct lin_rec *r)
{
	struct kctx *c = arg;
	if (LIN_IS_NIL(r, API, START_DEV) || LIN_IS_NIL(r, API, CBID))
		return; /* no time, or no call named: nothing to draw */
	struct kapi *a = PUSH(c, api);
	if (!a)
		return;
	a->corr = LIN_GET(r, API, CORRELATION);
	if (a->corr != LIN_NIL && a->corr > c->max_corr)
		c->max_corr = a->corr;
	a->domain = (uint32_t)LIN_GET(r, API, DOMAIN);
	a->cbid = (uint32_t)LIN_GET(r, API, CBID);
	a->start = LIN_GET(r, API, START_DEV);
	a->end = LIN_IS_NIL(r, API, END_DEV) ? a->start : LIN_GET(r, API, END_DEV);
	a->pid = LIN_GET(r, API, PID);
	a->tid = LIN_GET(r, API, TID);
}

static void on_gpu(void *arg, const struct lin_rec *r)
{
	struct kctx *c = arg;
	struct kgpu *g = PUSH(c, gpu);
	if (!g)
		return;
	g->type = r->type;
	g->corr = LIN_OPT(r, GPU, CORRELATION);
	if (g->corr != LIN_NIL && g->corr > c->max_corr)
		c->max_corr = g->corr;
	g->start = LIN_OPT(r, GPU, START_DEV);
	g->end = LIN_IS_NIL(r, GPU, END_DEV) ? g->start : LIN_GET(r, GPU, END_DEV);
	g->device = LIN_GET(r, GPU, DEVICE);
	g->context = LIN_GET(r, GPU, CONTEXT);
	g->stream = LIN_GET(r, GPU, STREAM);
	g->graph = g->node = g->name_sid = LIN_NIL;
	if (r->type == LIN_REC_KERNEL) {
		g->key = LIN_OPT(r, KERNEL, GRID_ID);
		g->name_sid = LIN_OPT(r, KERNEL, NAME_SID);
		g->graph = LIN_OPT(r, KERNEL, GRAPH_ID);
		g->node = LIN_OPT(r, KERNEL, GRAPH_NODE_ID);
	} else {
		g->key = g->start; /* as the truth files name memcpy and memset: start_dev */
	}
}

static void on_cuda_event(void *arg, const struct lin_rec *r)
{
	struct kctx *c = arg;
	struct kevent *e = PUSH(c, ev);
	if (!e)
		return;
	e->corr = LIN_OPT(r, CUDA_EVENT, CORRELATION);
	e->device = LIN_GET(r, CUDA_EVENT, DEVICE);
	e->stream = LIN_GET(r, CUDA_EVENT, STREAM);
	e->event = LIN_GET(r, CUDA_EVENT, EVENT);
	e->sync_id = LIN_OPT(r, CUDA_EVENT, SYNC_ID);
}

static void on_sync(void *arg, const struct lin_rec *r)
{
	struct kctx *c = arg;
	if (LIN_IS_NIL(r, SYNC, START_DEV))
		return;
	struct ksync *s = PUSH(c, sync);
	if (!s)
		return;
	s->corr = LIN_OPT(r, SYNC, CORRELATION);
	s->type = LIN_GET(r, SYNC, SYNC_TYPE);
	s->start = LIN_GET(r, SYNC, START_DEV);
	s->end = LIN_IS_NIL(r, SYNC, END_DEV) ? s->start : LIN_GET(r, SYNC, END_DEV);
	s->context = LIN_GET(r, SYNC, CONTEXT);
	s->stream = LIN_OPT(r, SYNC, STREAM);
	s->event = LIN_OPT(r, SYNC, EVENT);
	s->sync_id = LIN_OPT(r, SYNC, SYNC_ID);
}

static const struct lin_rec_ops kineto_ops = {
	.on = {
		[LIN_REC_CLOCK] = on_clock,
		[LIN_REC_STRING] = on_string,
		[LIN_REC_REQUEST_BEGIN] = on_request_begin,
		[LIN_REC_REQUEST_END] = on_request_end,
		[LIN_REC_EPOCH_DECLARE] = on_epoch_declare,
		[LIN_REC_TOKEN_ADOPT] = on_adopt,
		[LIN_REC_SCOPE_CLOSE] = on_scope_close,
		[LIN_REC_LAUNCH] = on_launch,
		[LIN_REC_LAUNCH_END] = on_launch_end,
		[LIN_REC_API] = on_api,
		[LIN_REC_EXT_CORRELATION] = on_ext,
		[LIN_REC_KERNEL] = on_gpu,
		[LIN_REC_MEMCPY] = on_gpu,
		[LIN_REC_MEMSET] = on_gpu,
		[LIN_REC_CUDA_EVENT] = on_cuda_event,
		[LIN_REC_SYNC] = on_sync,
	},
};

/* ------------------------------------------------------------------ lookups */

static int cmp_u64(uint64_t a, uint64_t b) { return a < b ? -1 : a > b; }
static int cmp_api(const void *a, const void *b)
{
	return cmp_u64(((const struct kapi *)a)->corr, ((const struct kapi *)b)->corr);
}
static int cmp_gpu(const void *a, const void *b)
{
	return cmp_u64(((const struct kgpu *)a)->corr, ((const struct kgpu *)b)->corr);
}
static int cmp_ev(const void *pa, const void *pb)
{
	const struct kevent *a = pa, *b = pb;
	int c = cmp_u64(a->event, b->event);
	return c ? c : cmp_u64(a->corr, b->corr);
}
static int cmp_xc(const void *a, const void *b)
{
	return cmp_u64(((const struct kxc *)a)->corr, ((const struct kxc *)b)->corr);
}
static int cmp_req(const void *pa, const void *pb)
{
	const struct kreq *a = pa, *b = pb;
	int c = cmp_u64(a->epoch, b->epoch);
	return c ? c : cmp_u64(a->req, b->req);
}
static int cmp_str(const void *a, const void *b)
{
	return cmp_u64(((const struct kstr *)a)->sid, ((const struct kstr *)b)->sid);
}

/* The first element of sorted @v (@n of @sz bytes) whose u64 at offset 0 is >= @k. */
static size_t lower(const void *v, size_t n, size_t sz, uint64_t k)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (*(const uint64_t *)((const char *)v + mid * sz) < k)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static struct kapi *api_of(struct kctx *c, uint64_t corr)
{
	size_t i = lower(c->api, c->n_api, sizeof(*c->api), corr);
	return i < c->n_api && c->api[i].corr == corr ? &c->api[i] : NULL;
}

static const char *str_of(const struct kctx *c, uint64_t sid)
{
	if (sid == LIN_NIL)
		return NULL;
	size_t i = lower(c->str, c->n_str, sizeof(*c->str), sid);
	return i < c->n_str && c->str[i].sid == sid ? c->str[i].text : NULL;
}

/* The recording a wait names: the cuda_event record of its sync id, else the latest
 * recording of its event before the wait's call (by correlation). */
static const struct kevent *recording_of(const struct kctx *c, const struct ksync *s)
{
	if (s->event == LIN_NIL)
		return NULL;
	size_t i = lower(c->ev, c->n_ev, sizeof(*c->ev), s->event);
	const struct kevent *best = NULL;
	for (; i < c->n_ev && c->ev[i].event == s->event; i++) {
		const struct kevent *e = &c->ev[i];
		if (s->sync_id != LIN_NIL && e->sync_id == s->sync_id)
			return e;
		if (e->corr < s->corr)
			best = e;
	}
	return s->sync_id != LIN_NIL && best && best->sync_id != LIN_NIL ? NULL : best;
}

static int64_t to_host(const struct kctx *c, uint64_t dev)
{
	uint64_t h;
	if (c->dev_host || !lin_cm_to_host(&c->clk, dev, &h, NULL))
		return (int64_t)dev;
	return (int64_t)h;
}

/* ------------------------------------------------------------------ the write */

/* CUPTI callback names, as Kineto writes them (the version suffix dropped); the numbers
 * are CUDA 13.0's cupti_runtime_cbid.h and cupti_driver_cbid.h (cupti_bind checks the
 * launch table against them at build time; these few synchronisation calls are named so
 * that Kineto's readers find them: HTA matches cudaEventRecord and cudaStreamWaitEvent by
 * name). Any other call: "cudaRuntime cbid N" / "cuDriver cbid N". */
static const char *api_name(uint32_t domain, uint32_t cbid, char *buf, size_t n)
{
	static const struct {
		uint32_t domain, cbid;
		const char *name;
	} other[] = {
		{ 1, 131, "cudaStreamSynchronize" },  { 1, 135, "cudaEventRecord" },
		{ 1, 137, "cudaEventSynchronize" },   { 1, 147, "cudaStreamWaitEvent" },
		{ 1, 165, "cudaDeviceSynchronize" },  { 1, 310, "cudaGraphInstantiate" },
		{ 1, 315, "cudaStreamBeginCapture" }, { 1, 319, "cudaStreamEndCapture" },
		{ 2, 119, "cuEventRecord" },          { 2, 120, "cuEventQuery" },
		{ 2, 121, "cuEventSynchronize" },     { 2, 295, "cuStreamWaitEvent" },
		{ 2, 126, "cuStreamSynchronize" },    { 2, 17, "cuCtxSynchronize" },
	};
#define LIN_KN_(d, cb, kind, nm) { d, cb, #nm },
	static const struct {
		uint32_t domain, cbid;
		const char *name;
	} launch[] = { LIN_LAUNCH_APIS(LIN_KN_) };
#undef LIN_KN_
	for (size_t i = 0; i < sizeof(other) / sizeof(other[0]); i++)
		if (other[i].domain == domain && other[i].cbid == cbid)
			return other[i].name;
	for (size_t i = 0; i < sizeof(launch) / sizeof(launch[0]); i++) {
		if (launch[i].domain != domain || launch[i].cbid != cbid)
			continue;
		const char *s = strstr(launch[i].name, "TRACE_CBID_");
		s = s ? s + 11 : launch[i].name;
		snprintf(buf, n, "%s", s);
		char *v = strrchr(buf, '_'); /* "_v7000" */
		if (v && v[1] == 'v' && v[2] >= '0' && v[2] <= '9')
			*v = 0;
		return buf;
	}
	snprintf(buf, n, "%s cbid %u", domain == LIN_API_DRIVER ? "cuDriver" : "cudaRuntime", cbid);
	return buf;
}

/* A JSON string, as every lineage JSON writer encodes one (UTF-8 kept, ill-formed bytes
 * U+FFFD: trace/otlp_emit.h). */
static void jstr(FILE *f, const char *s) { lin_oj_fstr(f, s, strlen(s)); }

/* A time in microseconds with its nanoseconds: Kineto's "ts": 1234.567. */
static void jus(FILE *f, const char *key, int64_t ns)
{
	if (ns < 0)
		ns = 0;
	fprintf(f, ", \"%s\": %" PRId64 ".%03" PRId64, key, ns / 1000, ns % 1000);
}

struct wctx {
	FILE *f;
	bool first;
	uint64_t pid;
	struct lin_kineto_stats *st;
};

static void ev_begin(struct wctx *w, const char *ph, const char *cat, const char *name,
		     uint64_t pid, uint64_t tid, int64_t ts)
{
	fprintf(w->f, "%s\n  {\"ph\": \"%s\", \"cat\": \"%s\", \"name\": ", w->first ? "" : ",", ph, cat);
	w->first = false;
	jstr(w->f, name);
	fprintf(w->f, ", \"pid\": %" PRIu64 ", \"tid\": %" PRIu64, pid, tid);
	jus(w->f, "ts", ts);
}

/* Unique per op and above every correlation id: an External id equal to its launch's
 * correlation reads as a known writer bug to Kineto's readers (docs/importers.md). */
static void assign_ext(struct kctx *c)
{
	uint64_t ext = c->max_corr;
	for (size_t i = 0; i < c->n_span; i++)
		if (c->span[i].what == 'o')
			c->span[i].ext = ++ext;
}

static void write_spans(struct kctx *c, struct wctx *w)
{
	char name[128];
	for (size_t i = 0; i < c->n_span; i++) {
		struct kspan *s = &c->span[i];
		const char *nm = str_of(c, s->name_sid);
		if (s->what == 'r') {
			snprintf(name, sizeof(name), "request[r%" PRIu64 "]%s%s", s->id,
				 nm ? " " : "", nm ? nm : "");
		} else if (s->what == 'h') {
			snprintf(name, sizeof(name), "%s[%c%" PRIu64 "]",
				 s->depth <= 1 && s->handed ? "task" : "scope",
				 s->corr == 2 ? 'e' : 'r', s->id);
		} else {
			snprintf(name, sizeof(name), "%s", nm ? nm : "launch");
		}
		const char *cat = s->what == 'o' ? "cpu_op" : "user_annotation";
		ev_begin(w, "X", cat, name, w->pid, s->tid, (int64_t)s->start);
		jus(w->f, "dur", (int64_t)(s->end > s->start ? s->end - s->start : 0));
		if (s->what == 'o') {
			fprintf(w->f, ", \"args\": {\"External id\": %" PRIu64, s->ext);
			if (s->id != LIN_NIL) {
				fprintf(w->f, ", \"lineage epoch\": %" PRIu64 ", \"lineage requests\": [",
					s->id);
				size_t k = lower(c->req, c->n_req, sizeof(*c->req), s->id);
				for (size_t j = k; j < c->n_req && c->req[j].epoch == s->id; j++)
					fprintf(w->f, "%s%" PRIu64, j > k ? ", " : "", c->req[j].req);
				fprintf(w->f, "]");
			}
			fprintf(w->f, "}}");
			w->st->ops++;
		} else {
			fprintf(w->f, ", \"args\": {\"External id\": 0}}");
			w->st->annotations++;
		}
	}
}

/* Each call gets the External id of the launch op that made it: its launch record's
 * correlation; else the external id pushed around the call (ext_correlation) names the
 * launch on the call's thread with that ext_id, the latest begun before the call (else the
 * first after it: clocks apart); else the innermost op open on its thread at the call's
 * start (as Kineto gives a call the id of the op around it). The search looks LINK_WALK
 * ops of the thread either way. An op without a launch_end lasts until the last call it
 * made returns (a launch site holds its call; Kineto's readers join a call to the op that
 * holds it). */
static void link_one(struct kctx *c, struct kapi *a, struct kspan *s)
{
	a->ext = s->ext;
	int64_t e = to_host(c, a->end);
	if (!s->ended && e > (int64_t)s->end && (int64_t)s->start <= to_host(c, a->start))
		s->end = (uint64_t)e;
}

static const struct kspan *g_span; /* qsort has no context argument */
static int cmp_op(const void *pa, const void *pb)
{
	const struct kspan *a = &g_span[*(const size_t *)pa], *b = &g_span[*(const size_t *)pb];
	int c = cmp_u64(a->tid, b->tid);
	return c ? c : cmp_u64(a->start, b->start);
}

#define LINK_WALK 64

static int link_ops(struct kctx *c)
{
	size_t n = 0, *op = malloc((c->n_span + 1) * sizeof(*op));
	if (!op)
		return -1;
	for (size_t i = 0; i < c->n_span; i++) {
		struct kspan *s = &c->span[i];
		struct kapi *a = s->what == 'o' && s->corr != LIN_NIL ? api_of(c, s->corr) : NULL;
		if (a)
			link_one(c, a, s);
		if (s->what == 'o')
			op[n++] = i;
	}
	g_span = c->span;
	if (n > 1)
		qsort(op, n, sizeof(*op), cmp_op);
	for (size_t k = 0; k < c->n_api; k++) {
		struct kapi *a = &c->api[k];
		if (a->ext)
			continue;
		int64_t t = to_host(c, a->start);
		size_t xi = lower(c->xc, c->n_xc, sizeof(*c->xc), a->corr);
		uint64_t want = xi < c->n_xc && c->xc[xi].corr == a->corr ? c->xc[xi].ext_id : LIN_NIL;
		size_t lo = 0, hi = n; /* the first op of the thread begun after the call */
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;
			const struct kspan *s = &c->span[op[mid]];
			if (s->tid < a->tid || (s->tid == a->tid && (int64_t)s->start <= t))
				lo = mid + 1;
			else
				hi = mid;
		}
		struct kspan *best = NULL, *after = NULL, *open = NULL;
		for (size_t j = lo, w = 0; j-- > 0 && w < LINK_WALK; w++) {
			struct kspan *s = &c->span[op[j]];
			if (s->tid != a->tid)
				break;
			if (!best && want != LIN_NIL && s->ext_id == want)
				best = s;
			if (!open && (int64_t)s->end >= t)
				open = s;
		}
		for (size_t j = lo, w = 0; !best && want != LIN_NIL && j < n && w < LINK_WALK; j++, w++) {
			struct kspan *s = &c->span[op[j]];
			if (s->tid != a->tid)
				break;
			if (s->ext_id == want) {
				after = s;
				break;
			}
		}
		struct kspan *s = best ? best : after ? after : open;
		if (s)
			link_one(c, a, s);
	}
	free(op);
	return 0;
}

static void write_api(struct kctx *c, struct wctx *w)
{
	char buf[96];
	for (size_t i = 0; i < c->n_api; i++) {
		const struct kapi *a = &c->api[i];
		int64_t s = to_host(c, a->start), e = to_host(c, a->end);
		ev_begin(w, "X", a->domain == LIN_API_DRIVER ? "cuda_driver" : "cuda_runtime",
			 api_name(a->domain, a->cbid, buf, sizeof(buf)), a->pid, a->tid, s);
		jus(w->f, "dur", e > s ? e - s : 0);
		fprintf(w->f,
			", \"args\": {\"External id\": %" PRIu64 ", \"cbid\": %u, "
			"\"correlation\": %" PRIu64 "}}",
			a->ext, a->cbid, a->corr);
		w->st->runtime++;
	}
}

static void write_gpu(struct kctx *c, struct wctx *w)
{
	for (size_t i = 0; i < c->n_gpu; i++) {
		const struct kgpu *g = &c->gpu[i];
		if (g->start == LIN_NIL) {
			w->st->unmapped++;
			continue;
		}
		int64_t s = to_host(c, g->start), e = to_host(c, g->end);
		const char *nm = g->type == LIN_REC_KERNEL   ? str_of(c, g->name_sid)
				 : g->type == LIN_REC_MEMCPY ? "Memcpy"
							     : "Memset (Device)";
		const char *cat = g->type == LIN_REC_KERNEL   ? "kernel"
				  : g->type == LIN_REC_MEMCPY ? "gpu_memcpy"
							      : "gpu_memset";
		const struct kapi *a = g->corr != LIN_NIL ? api_of(c, g->corr) : NULL;
		ev_begin(w, "X", cat, nm ? nm : "kernel", g->device, g->stream, s);
		jus(w->f, "dur", e > s ? e - s : 0);
		fprintf(w->f,
			", \"args\": {\"External id\": %" PRIu64 ", \"device\": %" PRIu64
			", \"context\": %" PRIu64 ", \"stream\": %" PRIu64,
			a ? a->ext : 0, g->device, g->context, g->stream);
		if (g->corr != LIN_NIL)
			fprintf(w->f, ", \"correlation\": %" PRIu64, g->corr);
		if (g->graph != LIN_NIL)
			fprintf(w->f, ", \"graph id\": %" PRIu64, g->graph);
		if (g->node != LIN_NIL)
			fprintf(w->f, ", \"graph node id\": %" PRIu64, g->node);
		if (g->key != LIN_NIL)
			fprintf(w->f, ", \"lineage key\": %" PRIu64, g->key);
		fprintf(w->f, "}}");
		w->st->gpu++;
		if (!a)
			continue;
		/* ac2g: the call -> the GPU record it launched (Kineto's flow) */
		ev_begin(w, "s", "ac2g", "ac2g", a->pid, a->tid, to_host(c, a->start));
		fprintf(w->f, ", \"id\": %" PRIu64 "}", g->corr);
		ev_begin(w, "f", "ac2g", "ac2g", g->device, g->stream, s);
		fprintf(w->f, ", \"id\": %" PRIu64 ", \"bp\": \"e\"}", g->corr);
		w->st->flows++;
	}
}

/* CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_*, as Kineto names them. */
static const char *sync_name(uint64_t t)
{
	static const char *const n[] = { "Unknown", "Event Sync", "Stream Wait Event",
					 "Stream Sync", "Context Sync" };
	return t < sizeof(n) / sizeof(n[0]) ? n[t] : "Unknown";
}

static void write_sync(struct kctx *c, struct wctx *w)
{
	for (size_t i = 0; i < c->n_sync; i++) {
		const struct ksync *s = &c->sync[i];
		const struct kevent *rec = recording_of(c, s);
		/* The device: of the recording, else of a GPU record on the context. */
		uint64_t dev = rec ? rec->device : 0;
		for (size_t k = 0; !rec && k < c->n_gpu; k++)
			if (c->gpu[k].context == s->context) {
				dev = c->gpu[k].device;
				break;
			}
		/* Kineto writes -1 for a sync without a stream (context, event sync): the
		 * stream field of CUpti_ActivitySynchronization is CUPTI_SYNCHRONIZATION_
		 * INVALID_VALUE there. */
		int64_t stream = s->stream == LIN_NIL ? -1 : (int64_t)s->stream;
		int64_t t0 = to_host(c, s->start), t1 = to_host(c, s->end);
		fprintf(w->f,
			"%s\n  {\"ph\": \"X\", \"cat\": \"cuda_sync\", \"name\": \"%s\", "
			"\"pid\": %" PRIu64 ", \"tid\": %" PRId64,
			w->first ? "" : ",", sync_name(s->type), dev, stream);
		w->first = false;
		jus(w->f, "ts", t0);
		jus(w->f, "dur", t1 > t0 ? t1 - t0 : 0);
		fprintf(w->f,
			", \"args\": {\"cuda_sync_kind\": \"%s\", \"stream\": %" PRId64
			", \"correlation\": %" PRIu64 ", \"device\": %" PRIu64 ", \"context\": %" PRIu64,
			sync_name(s->type), stream, s->corr == LIN_NIL ? 0 : s->corr, dev, s->context);
		if (rec) {
			fprintf(w->f,
				", \"wait_on_stream\": %" PRIu64
				", \"wait_on_cuda_event_record_corr_id\": %" PRIu64
				", \"wait_on_cuda_event_id\": %" PRIu64,
				rec->stream, rec->corr, rec->event);
			w->st->event_waits++;
		}
		fprintf(w->f, "}}");
		w->st->syncs++;
	}
}

static void free_ctx(struct kctx *c)
{
	for (size_t i = 0; i < c->n_str; i++)
		free(c->str[i].text);
	free(c->api);
	free(c->gpu);
	free(c->ev);
	free(c->sync);
	free(c->span);
	free(c->str);
	free(c->req);
	free(c->xc);
	lin_cm_free(&c->clk);
}

int lin_kineto_export(const char *trace, const char *out_path, struct lin_kineto_stats *st,
		      char *err, size_t errlen)
{
	struct kctx c;
	memset(&c, 0, sizeof(c));
	memset(st, 0, sizeof(*st));
	lin_cm_init(&c.clk);
	struct lin_reader *rd = lin_reader_open(trace);
	struct lin_rec *rec = malloc(sizeof(*rec));
	struct lin_header h;
	int rc = -2;
	if (!rd || !rec) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	if (lin_reader_header(rd, LIN_TRACE_FORMAT_NAME, &h) != 0) {
		snprintf(err, errlen, "%s: %s", trace, lin_reader_error(rd));
		rc = -1;
		goto out;
	}
	c.dev_host = h.device_clock_host;
	while (!c.oom && lin_reader_next(rd, rec) == LIN_READ_RECORD)
		lin_rec_dispatch(&kineto_ops, &c, rec);
	if (c.oom) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	lin_cm_finish(&c.clk);
	if (c.n_api > 1)
		qsort(c.api, c.n_api, sizeof(*c.api), cmp_api);
	if (c.n_gpu > 1)
		qsort(c.gpu, c.n_gpu, sizeof(*c.gpu), cmp_gpu);
	if (c.n_ev > 1)
		qsort(c.ev, c.n_ev, sizeof(*c.ev), cmp_ev);
	if (c.n_str > 1)
		qsort(c.str, c.n_str, sizeof(*c.str), cmp_str);
	if (c.n_req > 1)
		qsort(c.req, c.n_req, sizeof(*c.req), cmp_req);
	if (c.n_xc > 1)
		qsort(c.xc, c.n_xc, sizeof(*c.xc), cmp_xc);
	assign_ext(&c);
	if (link_ops(&c) < 0) { /* before the ops are written: it may lengthen them */
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	FILE *f = fopen(out_path, "w");
	if (!f) {
		snprintf(err, errlen, "cannot write %s: %s", out_path, strerror(errno));
		rc = -1;
		goto out;
	}
	struct wctx w = { f, true, h.pid, st };
	fprintf(f, "{\n\"schemaVersion\": 1,\n\"distributedInfo\": {\"rank\": 0, \"world_size\": 1},\n"
		   "\"traceName\": ");
	jstr(f, trace);
	fprintf(f, ",\n\"displayTimeUnit\": \"ms\",\n\"traceEvents\": [");
	write_spans(&c, &w);
	write_api(&c, &w);
	write_gpu(&c, &w);
	write_sync(&c, &w);
	/* process and thread names, as Kineto writes them */
	fprintf(f,
		"%s\n  {\"ph\": \"M\", \"name\": \"process_name\", \"pid\": %" PRIu64
		", \"tid\": 0, \"args\": {\"name\": ",
		w.first ? "" : ",", h.pid);
	jstr(f, h.host);
	fprintf(f, "}}\n]\n}\n");
	rc = 0;
	if ((ferror(f) | fclose(f)) != 0) {
		snprintf(err, errlen, "cannot write %s: %s", out_path, strerror(errno));
		rc = -1;
	}
out:
	free(rec);
	lin_reader_free(rd);
	free_ctx(&c);
	return rc;
}
