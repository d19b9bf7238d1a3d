/* SPDX-License-Identifier: MIT */
/*
 * score.c - lineage-explain --score: every ledger with a cause-truth label gets a label from
 * each method, and the labels are scored per injected cause (docs/attribution.md).
 *
 * The baselines are computed from the same ledgers' observed marks, so they see exactly
 * what the tools they model see in a trace with the same records:
 *   nsys  Nsight Systems' reports at their richest: CUDA kernel launch & execution trace
 *         (cuda_kern_exec_trace): API time = api_exit - api_enter, queue time =
 *         kernel_start - api_exit (0 when the kernel starts first); the larger is read as
 *         the cause: api_call, or the queue time, which cuda_gpu_trace (the previous
 *         operation on the kernel's stream) and the CUDA event / synchronization rows (a
 *         cudaStreamWaitEvent on the stream, the work its event recorded) explain when the
 *         kernel started right as that work ended (event_dependency, stream_dependency);
 *         else queue (the kernel waited on the device side).
 *   hta   Holistic Trace Analysis: its kernel launch statistics first (get_cuda_kernel_
 *         launch_stats: a runtime outlier, the call longer than runtime_cutoff = 50 us, reads
 *         as api_call; a launch-delay outlier, kernel_start - runtime end longer than
 *         launch_delay_cutoff = 100 us, as the kernel waiting to be scheduled: queue; both:
 *         the larger), else the idle-time class of the gap before the kernel on its stream
 *         (get_idle_time_breakdown: host_wait when its runtime call began after the
 *         previous kernel on the stream ended; else kernel_wait when the gap is under
 *         consecutive_kernel_delay, 30 ns; else other: unknown).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "lineage/trace_format.h"
#include "reader.h"
#include "records.h"
#include "score.h"

static const char *const label_names[] = {
#define LIN_SLABEL_NAME(e, s) s,
	LIN_SLABELS(LIN_SLABEL_NAME)
#undef LIN_SLABEL_NAME
};
static const char *const method_names[] = { "lineage", "nsys", "hta-model", "peer" };
static const char *const cause_names[] = {
#define LIN_TC_NAME(e, v, s) s,
	LIN_TRUTH_CAUSES(LIN_TC_NAME)
#undef LIN_TC_NAME
};

const char *lin_slabel_name(enum lin_slabel l) { return l < LIN_SL_N ? label_names[l] : "?"; }
const char *lin_smethod_name(enum lin_smethod m) { return m < LIN_SM_N ? method_names[m] : "?"; }

struct tlabel {
	uint64_t key, corr, start, end, mag; /* corr: the launch's correlation, or LIN_NIL (any) */
	uint32_t kind, cause, alt;
	bool conflict, matched, twice; /* twice: two ledgers carry its key */
	uint8_t label[LIN_SM_N];
	uint64_t ls[LIN_SM_N], le[LIN_SM_N]; /* the stretch each method blamed */
};

struct plabel { /* a peer's label of one GPU record */
	uint64_t key, corr, start, end;
	uint32_t kind;
	uint8_t label;
};

struct lin_score {
	struct plabel *peer;
	size_t npeer, cpeer;
	char peer_name[16]; /* "" when no peer labels were loaded */
	struct tlabel *v;
	size_t n, cap;
	size_t matched, conflicts;
	size_t in_proc; /* explained launches of the truth's process */
	uint64_t pid;   /* the process the cause truth describes (its header) */
	char host[256];
};

static const char *method_name(const struct lin_score *s, int m)
{
	return m == LIN_SM_PEER && s->peer_name[0] ? s->peer_name : method_names[m];
}

struct lin_score *lin_score_create(void) { return calloc(1, sizeof(struct lin_score)); }

void lin_score_free(struct lin_score *s)
{
	if (s) {
		free(s->v);
		free(s->peer);
	}
	free(s);
}

size_t lin_score_matched(const struct lin_score *s) { return s->matched; }
size_t lin_score_labels(const struct lin_score *s) { return s->n; }
size_t lin_score_in_process(const struct lin_score *s) { return s->in_proc; }

/* ------------------------------------------------------------------ the truth */

static int cmp_label(const void *pa, const void *pb)
{
	const struct tlabel *a = pa, *b = pb;
	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	return a->corr < b->corr ? -1 : a->corr > b->corr;
}

static int fail(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
	return -1;
}

/* One record's fields, as the schema guarantees their types (reader.h). */
static int take(struct lin_score *s, const struct lin_rec *r, const char *path, char *err, size_t len)
{
	if (r->type != LIN_REC_LAUNCH_CAUSE)
		return fail(err, len,
			    "%s: byte %" PRIu64 ": record #%" PRIu64 ": a %s record in a "
			    "cause-truth file (only launch_cause, type %d)",
			    path, r->offset, r->index,
			    r->known ? lin_rec_name(r->type) : "unknown-type", LIN_REC_LAUNCH_CAUSE);
	uint64_t kind = LIN_GET(r, LAUNCH_CAUSE, GPU_KIND), cause = LIN_GET(r, LAUNCH_CAUSE, CAUSE);
	uint64_t alt = LIN_GET(r, LAUNCH_CAUSE, ALT);
	if (kind != LIN_REC_KERNEL && kind != LIN_REC_MEMCPY && kind != LIN_REC_MEMSET)
		return fail(err, len,
			    "%s: byte %" PRIu64 ": record #%" PRIu64 ": gpu_kind %" PRIu64
			    " is not a kernel (22), memcpy (23) or memset (24)",
			    path, r->offset, r->index, kind);
	if (cause == LIN_TC_NONE || cause >= LIN_TC_N)
		return fail(err, len,
			    "%s: byte %" PRIu64 ": record #%" PRIu64 ": cause %" PRIu64
			    " is not one of 1..%d (docs/trace-format.md)",
			    path, r->offset, r->index, cause, LIN_TC_N - 1);
	uint64_t causes = ((1ull << LIN_TC_N) - 1) & ~(1ull << LIN_TC_NONE | 1ull << LIN_TC_AMBIGUOUS);
	if ((cause == LIN_TC_AMBIGUOUS) != (alt != 0) || (alt & ~causes) ||
	    (cause == LIN_TC_AMBIGUOUS && !(alt & (alt - 1))))
		return fail(err, len,
			    "%s: byte %" PRIu64 ": record #%" PRIu64 ": alt %#" PRIx64
			    ": an ambiguous label names two or more causes (bits 1..9), any other none",
			    path, r->offset, r->index, alt);
	uint64_t start = LIN_OPT(r, LAUNCH_CAUSE, START_NS), end = LIN_OPT(r, LAUNCH_CAUSE, END_NS);
	bool nil_s = LIN_IS_NIL(r, LAUNCH_CAUSE, START_NS), nil_e = LIN_IS_NIL(r, LAUNCH_CAUSE, END_NS);
	if (!nil_s && !nil_e && end < start)
		return fail(err, len,
			    "%s: byte %" PRIu64 ": record #%" PRIu64 ": end_ns %" PRIu64
			    " before start_ns %" PRIu64,
			    path, r->offset, r->index, end, start);
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 256;
		struct tlabel *v = realloc(s->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n++] = (struct tlabel){
		.kind = (uint32_t)kind,
		.key = LIN_GET(r, LAUNCH_CAUSE, KEY),
		.cause = (uint32_t)cause,
		.alt = (uint32_t)alt,
		.start = start,
		.end = end,
		.mag = LIN_OPT(r, LAUNCH_CAUSE, MAGNITUDE_NS),
		.corr = LIN_OPT(r, LAUNCH_CAUSE, CORRELATION),
	};
	return 0;
}

static int load(struct lin_score *s, struct lin_reader *rd, const char *path, char *err, size_t errlen)
{
	struct lin_header h;
	struct lin_rec *r = malloc(sizeof(*r));
	int rc = 0;
	if (!rd || !r) {
		lin_reader_free(rd);
		free(r);
		return -ENOMEM;
	}
	if (lin_reader_header(rd, LIN_CAUSE_TRUTH_FORMAT_NAME, &h) != 0) {
		rc = fail(err, errlen, "%s: byte %" PRIu64 ": %s", path,
			  lin_reader_error_offset(rd), lin_reader_error(rd));
	} else { /* h is filled only when the header was read */
		s->pid = h.pid;
		snprintf(s->host, sizeof(s->host), "%s", h.host);
	}
	while (!rc) {
		enum lin_read_status st = lin_reader_next(rd, r);
		if (st == LIN_READ_EOF)
			break;
		if (st != LIN_READ_RECORD) {
			rc = fail(err, errlen, "%s: byte %" PRIu64 ": %s", path,
				  lin_reader_error_offset(rd), lin_reader_error(rd));
			break;
		}
		rc = take(s, r, path, err, errlen);
	}
	free(r);
	lin_reader_free(rd);
	if (rc)
		return rc;
	if (!s->n)
		return fail(err, errlen, "%s: no launch_cause record: nothing to score against", path);
	qsort(s->v, s->n, sizeof(*s->v), cmp_label);
	s->conflicts = 0;
	for (size_t i = 1; i < s->n; i++)
		if (!cmp_label(&s->v[i - 1], &s->v[i]))
			s->v[i - 1].conflict = s->v[i].conflict = true;
	for (size_t i = 0; i < s->n; i++)
		s->conflicts += s->v[i].conflict;
	return 0;
}

int lin_score_load(struct lin_score *s, const char *path, char *err, size_t errlen)
{
	return load(s, lin_reader_open(path), path, err, errlen);
}

int lin_score_load_mem(struct lin_score *s, const char *name, const void *data, size_t size,
		       char *err, size_t errlen)
{
	return load(s, lin_reader_open_mem(name, data, size), name, err, errlen);
}

/* ------------------------------------------------------------------ peer labels */

static int cmp_peer(const void *pa, const void *pb)
{
	const struct plabel *a = pa, *b = pb;
	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	return a->corr < b->corr ? -1 : a->corr > b->corr;
}

/* A field: a decimal uint64, or "-" (nil) when @nil_ok. */
static bool peer_u64(const char *f, bool nil_ok, uint64_t *out)
{
	if (nil_ok && !strcmp(f, "-")) {
		*out = LIN_NIL;
		return true;
	}
	if (!*f || *f < '0' || *f > '9')
		return false;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(f, &end, 10);
	if (errno || *end || v == LIN_NIL)
		return false;
	*out = v;
	return true;
}

int lin_score_load_peer(struct lin_score *s, const char *name, const char *path, char *err, size_t errlen)
{
	size_t nl = strlen(name);
	if (!nl || nl >= sizeof(s->peer_name) ||
	    strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789_-") != nl)
		return fail(err, errlen, "%s: the method name '%s' is not 1 to 15 of [a-z0-9_-]",
			    path, name);
	for (int m = 0; m < LIN_SM_PEER; m++)
		if (!strcmp(name, method_names[m]))
			return fail(err, errlen, "%s: the method name '%s' is a built-in method's",
				    path, name);
	FILE *f = fopen(path, "r");
	if (!f)
		return fail(err, errlen, "%s: %s", path, strerror(errno));
	char line[1024];
	unsigned long ln = 0;
	int rc = 0;
	while (!rc && fgets(line, sizeof(line), f)) {
		ln++;
		size_t len = strlen(line);
		if (len && line[len - 1] == '\n')
			line[--len] = 0;
		else if (!feof(f)) {
			rc = fail(err, errlen, "%s:%lu: a line longer than %zu bytes", path, ln,
				  sizeof(line) - 2);
			break;
		}
		if (!len || line[0] == '#')
			continue;
		char *fld[7], *save = NULL;
		int n = 0;
		for (char *t = strtok_r(line, "\t", &save); t && n < 7; t = strtok_r(NULL, "\t", &save))
			fld[n++] = t;
		struct plabel p = { 0 };
		uint64_t kind;
		int lab = -1;
		for (int i = 0; n == 6 && i < LIN_SL_N; i++)
			if (!strcmp(fld[3], label_names[i]))
				lab = i;
		if (n != 6 || !peer_u64(fld[0], false, &kind) ||
		    (kind != LIN_REC_KERNEL && kind != LIN_REC_MEMCPY && kind != LIN_REC_MEMSET) ||
		    !peer_u64(fld[1], false, &p.key) || !peer_u64(fld[2], true, &p.corr) ||
		    lab < 0 || !peer_u64(fld[4], true, &p.start) || !peer_u64(fld[5], true, &p.end)) {
			rc = fail(err, errlen,
				  "%s:%lu: expected 6 tab-separated fields: gpu_kind (22, 23, 24), "
				  "key, correlation or -, a label (unknown, api_call, queue, "
				  "stream_dependency, ...: docs/attribution.md), start_ns or -, "
				  "end_ns or -",
				  path, ln);
			break;
		}
		p.kind = (uint32_t)kind;
		p.label = (uint8_t)lab;
		if (s->npeer == s->cpeer) {
			size_t cap = s->cpeer ? s->cpeer * 2 : 256;
			struct plabel *v = realloc(s->peer, cap * sizeof(*v));
			if (!v) {
				rc = -ENOMEM;
				break;
			}
			s->peer = v;
			s->cpeer = cap;
		}
		s->peer[s->npeer++] = p;
	}
	if (!rc && ferror(f))
		rc = fail(err, errlen, "%s: read error", path);
	fclose(f);
	if (rc)
		return rc;
	if (s->npeer > 1)
		qsort(s->peer, s->npeer, sizeof(*s->peer), cmp_peer);
	snprintf(s->peer_name, sizeof(s->peer_name), "%s", name);
	return 0;
}

/* The peer's label of the GPU record (kind, key, corr): the line of that correlation, or,
 * for a truth label without one, the only line of that key (several: which one is not
 * known, unknown). */
static enum lin_slabel peer_label(const struct lin_score *s, const struct tlabel *t, uint64_t *st,
				  uint64_t *en)
{
	size_t lo = 0, hi = s->npeer;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		const struct plabel *p = &s->peer[mid];
		if (p->kind < t->kind || (p->kind == t->kind && p->key < t->key))
			lo = mid + 1;
		else
			hi = mid;
	}
	const struct plabel *hit = NULL;
	size_t n = 0;
	for (size_t i = lo; i < s->npeer && s->peer[i].kind == t->kind && s->peer[i].key == t->key; i++) {
		if (t->corr != LIN_NIL && s->peer[i].corr == t->corr) {
			hit = &s->peer[i];
			n = 1;
			break;
		}
		if (t->corr == LIN_NIL) {
			hit = &s->peer[i];
			n++;
		}
	}
	if (!hit || n != 1)
		return LIN_SL_UNKNOWN;
	*st = hit->start;
	*en = hit->end;
	return (enum lin_slabel)hit->label;
}

/* ------------------------------------------------------------------ labels */

/* Only what a record says: the baselines do not use lineage's inferences. */
static bool seen(const struct lin_xlaunch *l, enum lin_mark m)
{
	return l->m[m].ev == LIN_EV_OBSERVED;
}

static enum lin_slabel lineage_label(const struct lin_xlaunch *l, uint64_t *s, uint64_t *e)
{
	if (l->dominant >= LIN_X_N)
		return LIN_SL_UNKNOWN;
	uint64_t best = 0;
	for (uint8_t i = 0; i < l->nseg; i++)
		if (l->seg[i].cause == l->dominant && l->seg[i].ns >= best) {
			best = l->seg[i].ns;
			*s = l->seg[i].start;
			*e = l->seg[i].end;
		}
	switch ((enum lin_xcause)l->dominant) {
	case LIN_X_BEFORE_DECLARE: return LIN_SL_BEFORE_DECLARE;
	case LIN_X_BEFORE_HANDOFF: return LIN_SL_BEFORE_HANDOFF;
	case LIN_X_HANDOFF_WAIT: return LIN_SL_HANDOFF_WAIT;
	case LIN_X_THREAD_DELAY: return LIN_SL_THREAD_DELAY;
	case LIN_X_DESCHEDULED: return LIN_SL_DESCHEDULED;
	case LIN_X_API_CALL: return LIN_SL_API_CALL;
	case LIN_X_SUBMIT_DELAY: return LIN_SL_SUBMIT_DELAY;
	case LIN_X_DEVICE_BUSY: return LIN_SL_DEVICE_BUSY;
	case LIN_X_DEPENDENCY:
		if (l->dominant_how == LIN_HOW_STREAM_ORDER)
			return LIN_SL_STREAM_DEPENDENCY;
		if (l->dominant_how == LIN_HOW_EVENT_WAIT)
			return LIN_SL_EVENT_DEPENDENCY;
		if (l->dominant_how == LIN_HOW_GRAPH_EDGE)
			return LIN_SL_GRAPH_DEPENDENCY;
		return LIN_SL_DEPENDENCY; /* tied_dependencies: which one is not known */
	default: return LIN_SL_UNKNOWN;   /* unresolved, competing causes */
	}
}

/* A dependency's end the kernel followed: it started within LIN_NSYS_FOLLOW_NS of it, after
 * the call returned (what the reports show side by side; docs/attribution.md). */
static bool followed(const struct lin_xlaunch *l, uint64_t dep_end, uint64_t ex, uint64_t st)
{
	return dep_end != UINT64_MAX && dep_end > ex && st >= dep_end &&
	       st - dep_end <= LIN_NSYS_FOLLOW_NS && l->kind == LIN_REC_KERNEL;
}

static enum lin_slabel nsys_label(const struct lin_xlaunch *l, uint64_t *s, uint64_t *e)
{
	if (!seen(l, LIN_M_API_ENTER) || !seen(l, LIN_M_API_EXIT) || !seen(l, LIN_M_KERNEL_START))
		return LIN_SL_UNKNOWN;
	uint64_t en = l->m[LIN_M_API_ENTER].t, ex = l->m[LIN_M_API_EXIT].t;
	uint64_t st = l->m[LIN_M_KERNEL_START].t;
	uint64_t api = ex > en ? ex - en : 0, queue = st > ex ? st - ex : 0;
	if (!api && !queue)
		return LIN_SL_UNKNOWN;
	if (api >= queue) {
		*s = en, *e = ex;
		return LIN_SL_API_CALL;
	}
	/* The queue time, read beside cuda_gpu_trace (the previous operation on the stream)
	 * and the CUDA event and synchronization rows (a cudaStreamWaitEvent on the stream and
	 * the work its event recorded): a kernel that started right as that work ended waited
	 * for it. The event first: a wait names the other stream's work; with both ending
	 * together a reader of the reports has no reason to prefer the stream. */
	*s = ex;
	if (followed(l, l->wait_end, ex, st) &&
	    (l->pred_end == UINT64_MAX || l->wait_end >= l->pred_end)) {
		*e = l->wait_end;
		return LIN_SL_EVENT_DEPENDENCY;
	}
	if (followed(l, l->pred_end, ex, st)) {
		*e = l->pred_end;
		return LIN_SL_STREAM_DEPENDENCY;
	}
	*e = st;
	return LIN_SL_QUEUE;
}

/* HTA's launch statistics: a runtime outlier (the call longer than runtime_cutoff) or a
 * launch-delay outlier (start - runtime end longer than launch_delay_cutoff); both: the
 * larger. LIN_SL_N: neither. */
static enum lin_slabel hta_outlier(const struct lin_xlaunch *l, uint64_t *s, uint64_t *e)
{
	if (!seen(l, LIN_M_API_ENTER) || !seen(l, LIN_M_API_EXIT))
		return LIN_SL_N;
	uint64_t en = l->m[LIN_M_API_ENTER].t, ex = l->m[LIN_M_API_EXIT].t;
	uint64_t st = l->m[LIN_M_KERNEL_START].t;
	uint64_t rt = ex > en ? ex - en : 0, delay = st > ex ? st - ex : 0;
	bool r_out = rt > LIN_HTA_RUNTIME_CUTOFF_NS, d_out = delay > LIN_HTA_LAUNCH_DELAY_CUTOFF_NS;
	if (r_out && (!d_out || rt >= delay)) {
		*s = en, *e = ex;
		return LIN_SL_API_CALL;
	}
	if (d_out) {
		*s = ex, *e = st;
		return LIN_SL_QUEUE;
	}
	return LIN_SL_N;
}

static enum lin_slabel hta_label(const struct lin_xlaunch *l, uint64_t *s, uint64_t *e)
{
	if (!seen(l, LIN_M_KERNEL_START))
		return LIN_SL_UNKNOWN;
	enum lin_slabel o = hta_outlier(l, s, e);
	if (o != LIN_SL_N)
		return o;
	uint64_t st = l->m[LIN_M_KERNEL_START].t;
	if (l->pred_end != UINT64_MAX && st > l->pred_end) {
		/* An idle gap before the kernel on its stream: HTA classifies it. */
		*s = l->pred_end, *e = st;
		if (seen(l, LIN_M_API_ENTER) && l->m[LIN_M_API_ENTER].t > l->pred_end)
			return LIN_SL_HOST_WAIT;
		if (st - l->pred_end < LIN_HTA_KERNEL_WAIT_NS)
			return LIN_SL_KERNEL_WAIT;
	}
	*s = *e = LIN_NIL;
	return LIN_SL_UNKNOWN; /* other, or no gap and no outlier: HTA says nothing */
}

enum lin_slabel lin_score_label(enum lin_smethod m, const struct lin_xlaunch *l, uint64_t *start,
				uint64_t *end)
{
	*start = *end = LIN_NIL;
	switch (m) {
	case LIN_SM_LINEAGE: return lineage_label(l, start, end);
	case LIN_SM_NSYS: return nsys_label(l, start, end);
	case LIN_SM_HTA: return hta_label(l, start, end);
	default: return LIN_SL_UNKNOWN;
	}
}

static bool t_ok(const struct tlabel *t) { return t->matched && !t->conflict && !t->twice; }

int lin_score_add(struct lin_score *s, const struct lin_explain *x, const struct lin_joiner *v)
{
	size_t n = lin_explain_count(x);
	for (size_t i = 0; i < n; i++) {
		const struct lin_xlaunch *l = lin_explain_at(x, i);
		uint64_t pid;
		const char *host;
		if (l->key == UINT64_MAX || l->imported || !lin_joiner_proc_id(v, l->proc, &pid, &host) ||
		    pid != s->pid || strcmp(host, s->host) != 0)
			continue; /* a label names a GPU record of one process (host, pid, kind, key) */
		s->in_proc++;
		/* A label naming this launch's correlation first (a graph node's kernel has the
		 * same grid id in every replay), then one for the key alone. */
		struct tlabel probe = { .kind = l->kind, .key = l->key, .corr = l->corr };
		struct tlabel *t = l->corr != LIN_NIL
					   ? bsearch(&probe, s->v, s->n, sizeof(*s->v), cmp_label)
					   : NULL;
		if (!t) {
			probe.corr = LIN_NIL;
			t = bsearch(&probe, s->v, s->n, sizeof(*s->v), cmp_label);
		}
		if (!t)
			continue;
		while (t > s->v && !cmp_label(t - 1, &probe))
			t--; /* the first of equal keys (a conflict) */
		if (t->matched) {
			t->twice = true; /* two GPU records with one key: which one is not known */
			continue;
		}
		t->matched = true;
		for (int m = 0; m < LIN_SM_PEER; m++)
			t->label[m] = (uint8_t)lin_score_label((enum lin_smethod)m, l, &t->ls[m],
							       &t->le[m]);
		t->ls[LIN_SM_PEER] = t->le[LIN_SM_PEER] = LIN_NIL;
		t->label[LIN_SM_PEER] =
			(uint8_t)peer_label(s, t, &t->ls[LIN_SM_PEER], &t->le[LIN_SM_PEER]);
	}
	s->matched = 0;
	for (size_t i = 0; i < s->n; i++)
		s->matched += t_ok(&s->v[i]);
	return 0;
}

/* ------------------------------------------------------------------ scores */

enum side { SIDE_NONE = 0, SIDE_HOST = 1, SIDE_DEP = 2, SIDE_DEVICE = 4 };

static unsigned label_side(enum lin_slabel l)
{
	switch (l) {
	case LIN_SL_BEFORE_DECLARE:
	case LIN_SL_BEFORE_HANDOFF:
	case LIN_SL_HANDOFF_WAIT:
	case LIN_SL_THREAD_DELAY:
	case LIN_SL_DESCHEDULED:
	case LIN_SL_API_CALL:
	case LIN_SL_SUBMIT_DELAY:
	case LIN_SL_HOST_WAIT: return SIDE_HOST;
	case LIN_SL_STREAM_DEPENDENCY:
	case LIN_SL_EVENT_DEPENDENCY:
	case LIN_SL_GRAPH_DEPENDENCY:
	case LIN_SL_DEPENDENCY: return SIDE_DEP;
	case LIN_SL_DEVICE_BUSY:
	case LIN_SL_QUEUE:
	case LIN_SL_KERNEL_WAIT: return SIDE_DEVICE;
	default: return SIDE_NONE;
	}
}

/* The sides a true cause lies on (queueing: behind the stream's own work, on the device). */
static unsigned truth_side(uint32_t c)
{
	switch (c) {
	case LIN_TC_HANDOFF_WAIT:
	case LIN_TC_DESCHEDULED:
	case LIN_TC_API_CALL:
	case LIN_TC_SUBMIT_DELAY: return SIDE_HOST;
	case LIN_TC_STREAM_DEPENDENCY:
	case LIN_TC_EVENT_DEPENDENCY:
	case LIN_TC_GRAPH_DEPENDENCY: return SIDE_DEP;
	case LIN_TC_DEVICE_BUSY: return SIDE_DEVICE;
	case LIN_TC_QUEUEING: return SIDE_DEP | SIDE_DEVICE;
	default: return SIDE_NONE;
	}
}

/* Whether label @l names true cause @c (docs/attribution.md, "Scoring"). */
static bool names(uint32_t c, enum lin_slabel l)
{
	switch (c) {
	case LIN_TC_HANDOFF_WAIT: return l == LIN_SL_HANDOFF_WAIT;
	case LIN_TC_DESCHEDULED: return l == LIN_SL_DESCHEDULED;
	case LIN_TC_API_CALL: return l == LIN_SL_API_CALL;
	case LIN_TC_SUBMIT_DELAY: return l == LIN_SL_SUBMIT_DELAY;
	case LIN_TC_STREAM_DEPENDENCY: return l == LIN_SL_STREAM_DEPENDENCY;
	case LIN_TC_EVENT_DEPENDENCY: return l == LIN_SL_EVENT_DEPENDENCY;
	case LIN_TC_GRAPH_DEPENDENCY: return l == LIN_SL_GRAPH_DEPENDENCY;
	case LIN_TC_DEVICE_BUSY: return l == LIN_SL_DEVICE_BUSY || l == LIN_SL_QUEUE;
	case LIN_TC_QUEUEING: return l == LIN_SL_STREAM_DEPENDENCY || l == LIN_SL_QUEUE;
	default: return false;
	}
}

/* An ambiguous launch is calibrated when the label commits to none of its candidates:
 * unknown, or a label that covers them all (dependency, when every candidate is one). */
static bool calibrated(uint32_t alt, enum lin_slabel l)
{
	if (l == LIN_SL_UNKNOWN)
		return true;
	uint32_t deps = 1u << LIN_TC_STREAM_DEPENDENCY | 1u << LIN_TC_EVENT_DEPENDENCY |
			1u << LIN_TC_GRAPH_DEPENDENCY;
	return l == LIN_SL_DEPENDENCY && !(alt & ~deps);
}

struct row {
	uint64_t n, correct, side, unknown, device, claimed, claimed_right;
	uint64_t nerr; /* correct labels with both intervals known */
	double err_ns, err_rel;
};

static uint64_t absdiff(uint64_t a, uint64_t b) { return a > b ? a - b : b - a; }

static void tally(const struct lin_score *s, enum lin_smethod m, struct row *rows)
{
	memset(rows, 0, LIN_TC_N * sizeof(*rows));
	for (size_t i = 0; i < s->n; i++) {
		const struct tlabel *t = &s->v[i];
		if (t->conflict || t->twice)
			continue; /* which GPU record it names is not known: not scored */
		/* A label no explained launch matched counts, as unknown for every method. */
		enum lin_slabel l = t->matched ? (enum lin_slabel)t->label[m] : LIN_SL_UNKNOWN;
		struct row *r = &rows[t->cause];
		r->n++;
		r->unknown += l == LIN_SL_UNKNOWN;
		r->device += label_side(l) == SIDE_DEVICE;
		if (t->cause == LIN_TC_AMBIGUOUS) {
			r->correct += calibrated(t->alt, l);
			continue;
		}
		r->side += (label_side(l) & truth_side(t->cause)) != 0;
		for (uint32_t c = 1; c < LIN_TC_AMBIGUOUS; c++)
			if (names(c, l)) {
				rows[c].claimed++;
				rows[c].claimed_right += c == t->cause;
			}
		if (!names(t->cause, l))
			continue;
		r->correct++;
		if (t->start != LIN_NIL && t->end != LIN_NIL && t->ls[m] != LIN_NIL &&
		    t->le[m] != LIN_NIL) {
			double e = (double)absdiff(t->ls[m], t->start) +
				   (double)absdiff(t->le[m], t->end);
			r->nerr++;
			r->err_ns += e;
			r->err_rel += t->end > t->start ? e / (double)(t->end - t->start) : 0;
		}
	}
}

static double ratio(uint64_t a, uint64_t b) { return b ? (double)a / (double)b : 0; }

int lin_score_report(const struct lin_score *s, FILE *out, const char *tag)
{
	struct row rows[LIN_TC_N];
	int bad = 0;
	uint64_t unmatched = 0;
	for (size_t i = 0; i < s->n; i++)
		unmatched += !s->v[i].matched && !s->v[i].conflict;
	const char *w = tag && *tag ? tag : "-";
	bad |= fprintf(out, "%-8s %-18s %6s %8s %9s %9s %6s %8s %9s %12s %8s\n", "method", "cause",
		       "n", "correct", "accuracy", "precision", "side", "unknown", "as_device",
		       "interval_ns", "rel") < 0;
	for (int m = 0; m < LIN_SM_N; m++) {
		if (m == LIN_SM_PEER && !s->peer_name[0])
			continue; /* no peer labels loaded */
		tally(s, (enum lin_smethod)m, rows);
		uint64_t n = 0, ok = 0, side = 0, dep_dev = 0;
		for (uint32_t c = 1; c < LIN_TC_N; c++) {
			const struct row *r = &rows[c];
			if (!r->n)
				continue;
			bool amb = c == LIN_TC_AMBIGUOUS;
			char prec[16] = "-", sd[16] = "-", ie[24] = "-", rel[16] = "-";
			if (!amb) {
				snprintf(prec, sizeof(prec), "%.3f", ratio(r->claimed_right, r->claimed));
				snprintf(sd, sizeof(sd), "%.3f", ratio(r->side, r->n));
				n += r->n, ok += r->correct, side += r->side;
			}
			if (c == LIN_TC_STREAM_DEPENDENCY || c == LIN_TC_EVENT_DEPENDENCY ||
			    c == LIN_TC_GRAPH_DEPENDENCY)
				dep_dev += r->device;
			if (r->nerr) {
				snprintf(ie, sizeof(ie), "%.0f", r->err_ns / (double)r->nerr);
				snprintf(rel, sizeof(rel), "%.4f", r->err_rel / (double)r->nerr);
			}
			bad |= fprintf(out,
				       "%-8s %-18s %6" PRIu64 " %8" PRIu64
				       " %9.3f %9s %6s %8" PRIu64 " %9" PRIu64 " %12s %8s\n",
				       method_name(s, m), cause_names[c], r->n, r->correct,
				       ratio(r->correct, r->n), prec, sd, r->unknown, r->device, ie,
				       rel) < 0;
			if (amb)
				bad |= fprintf(out,
					       "SUMMARY method=%s without=%s cause=ambiguous n=%" PRIu64
					       " calibrated=%" PRIu64 " calibration=%.3f confident=%" PRIu64
					       " as_device=%" PRIu64 "\n",
					       method_name(s, m), w, r->n, r->correct,
					       ratio(r->correct, r->n), r->n - r->correct,
					       r->device) < 0;
			else
				bad |= fprintf(out,
					       "SUMMARY method=%s without=%s cause=%s n=%" PRIu64
					       " correct=%" PRIu64 " recall=%.3f precision=%s side=%s"
					       " unknown=%" PRIu64 " as_device=%" PRIu64
					       " interval_err_ns=%s interval_err_rel=%s\n",
					       method_name(s, m), w, cause_names[c], r->n,
					       r->correct, ratio(r->correct, r->n), prec, sd,
					       r->unknown, r->device, ie, rel) < 0;
		}
		const struct row *a = &rows[LIN_TC_AMBIGUOUS];
		bad |= fprintf(out,
			       "SUMMARY method=%s without=%s cause=all single=%" PRIu64 " correct=%" PRIu64
			       " accuracy=%.3f side=%.3f dependency_as_device=%" PRIu64 " ambiguous=%" PRIu64
			       " calibration=%.3f unmatched=%" PRIu64 " conflicting=%zu\n",
			       method_name(s, m), w, n, ok, ratio(ok, n), ratio(side, n), dep_dev,
			       a->n, ratio(a->correct, a->n), unmatched, s->conflicts) < 0;
	}
	return bad ? -1 : 0;
}
