/* SPDX-License-Identifier: MIT */
/*
 * ingest.c - reading trace and truth files into the join layer's state (a truth file's
 * labels are handed to the judge, struct lin_join_judge, which compares them).
 *
 * Every record updates compact per-id state (hash tables of fixed-size entries); GPU
 * records are resolved as soon as their chain is complete and the closed correlation is
 * evicted, so memory follows the joins still open, not the trace length.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "lineage/trace_format.h"
#include "dispatch.h"
#include "misuse.h"
#include "pages.h"
#include "jstate.h"

static void string_ref(struct lin_joiner *v, uint16_t proc, uint32_t file, const struct lin_rec *r,
		       int field)
{
	if (LIN_IS_NIL_AT(r, field) || lin_vtab_find(&v->strings, r->f[field], lin_k1(proc, 0)))
		return;
	bool fresh;
	struct lin_ref_ent *e = lin_vtab_get(&v->undef, r->f[field], lin_k1(proc, 0), &fresh);
	if (!e) {
		v->oom = true;
		return;
	}
	if (fresh) {
		e->offset = r->offset;
		e->index = r->index;
		e->file = file;
	}
}

static void on_string(struct lin_joiner *v, uint16_t proc, uint32_t file, const struct lin_rec *r)
{
	bool fresh;
	if (!lin_vtab_get(&v->strings, LIN_GET(r, STRING, SID), lin_k1(proc, 0), &fresh)) {
		v->oom = true;
		return;
	}
	if (!fresh) {
		static const char *const n[] = { "sid" };
		lin_j_structural(v, "duplicate_string_id", file, r, 1, n, &LIN_GET(r, STRING, SID));
	}
	void *u = lin_vtab_find(&v->undef, LIN_GET(r, STRING, SID), lin_k1(proc, 0));
	if (u)
		lin_vtab_del(&v->undef, u);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/* An id @ids holds twice, or LIN_NIL: the runtime never names a request twice in one
 * epoch, and a list that does is no set (the truth comparison is by sets). */
static uint64_t repeated_id(const uint64_t *ids, uint32_t n)
{
	uint64_t tmp[LIN_READER_MAX_REQS];
	if (n < 2 || n > LIN_READER_MAX_REQS)
		return LIN_NIL;
	memcpy(tmp, ids, n * sizeof(*tmp));
	qsort(tmp, n, sizeof(*tmp), cmp_u64);
	for (uint32_t i = 1; i < n; i++)
		if (tmp[i] == tmp[i - 1])
			return tmp[i];
	return LIN_NIL;
}

static void on_epoch_declare(struct lin_joiner *v, uint16_t proc, uint32_t file, const struct lin_rec *r)
{
	bool fresh;
	struct lin_epoch_ent *e =
		lin_vtab_get(&v->epochs, LIN_GET(r, EPOCH_DECLARE, EPOCH), lin_k1(proc, 0), &fresh);
	if (!e) {
		v->oom = true;
		return;
	}
	if ((e->flags & LIN_EP_DECLARED) ||
	    lin_vtab_find(&v->requests, LIN_GET(r, EPOCH_DECLARE, EPOCH), lin_k1(proc, 0))) {
		static const char *const n[] = { "epoch" };
		lin_j_structural(v, "duplicate_epoch_id", file, r, 1, n,
				 &LIN_GET(r, EPOCH_DECLARE, EPOCH));
		return;
	}
	e->flags |= LIN_EP_DECLARED;
	lin_j_inv_declare(v, proc, file, r);
	uint64_t dup = repeated_id(r->reqs, r->nreqs);
	if (dup != LIN_NIL) {
		static const char *const n[] = { "epoch", "request" };
		uint64_t ids[] = { LIN_GET(r, EPOCH_DECLARE, EPOCH), dup };
		lin_j_structural(v, "duplicate_epoch_request", file, r, 2, n, ids);
	}
	e->nreq = r->nreqs;
	if (r->nreqs == 1) {
		e->req = r->reqs[0];
	} else if (r->nreqs > 1) {
		e->req = v->reqpool.n;
		for (uint32_t i = 0; i < r->nreqs; i++) {
			uint64_t *q = lin_vec_push(&v->reqpool);
			if (!q) {
				v->oom = true;
				return;
			}
			*q = r->reqs[i];
		}
	}
	string_ref(v, proc, file, r, LIN_F_EPOCH_DECLARE_NAME_SID);
}

/*
 * epoch_share (format 1.5): the writer writes it right after its epoch's declaration, one
 * share per request in the declaration's order. Shares that contradict the declaration
 * (another count, another version, an undeclared epoch, a second record, an unknown flag,
 * prefill and decode at once) are structural findings and are not used; a request given
 * its first token by two epochs is one too (the first stays).
 */
static void on_epoch_share(struct lin_joiner *v, uint16_t proc, uint32_t file, const struct lin_rec *r)
{
	uint64_t epoch = LIN_GET(r, EPOCH_SHARE, EPOCH);
	struct lin_epoch_ent *e = lin_vtab_find(&v->epochs, epoch, lin_k1(proc, 0));
	static const char *const n1[] = { "epoch" };
	if (!e || !(e->flags & LIN_EP_DECLARED)) {
		lin_j_structural(v, "epoch_share_unknown_epoch", file, r, 1, n1, &epoch);
		return;
	}
	if (e->flags & LIN_EP_SHARE_SEEN) {
		lin_j_structural(v, "duplicate_epoch_share", file, r, 1, n1, &epoch);
		e->flags &= (uint16_t)~LIN_EP_SHARED; /* in doubt: neither is used */
		return;
	}
	e->flags |= LIN_EP_SHARE_SEEN;
	if (r->nreqs != e->nreq || LIN_GET(r, EPOCH_SHARE, VERSION) != 1) {
		static const char *const n[] = { "epoch", "shares", "requests", "version" };
		uint64_t ids[] = { epoch, r->nreqs, e->nreq, LIN_GET(r, EPOCH_SHARE, VERSION) };
		lin_j_structural(v, "epoch_share_mismatch", file, r, 4, n, ids);
		return;
	}
	for (uint32_t i = 0; i < r->nreqs; i++) {
		uint64_t f = LIN_SHARE_FLAGS(r->reqs[i]);
		/* The runtime's limits: 32-bit tokens; prefill or decode; a first token comes
		 * from the step that completes a prefill, never from a decode step. */
		if ((f & ~(uint64_t)LIN_SHARE_FLAGS_ALL) || LIN_SHARE_TOKENS(r->reqs[i]) > UINT32_MAX ||
		    ((f & LIN_SHARE_PREFILL) && (f & LIN_SHARE_DECODE)) ||
		    ((f & LIN_SHARE_DECODE) && (f & LIN_SHARE_FIRST_TOKEN))) {
			static const char *const n[] = { "epoch", "index", "share" };
			uint64_t ids[] = { epoch, i, r->reqs[i] };
			lin_j_structural(v, "bad_epoch_share", file, r, 3, n, ids);
			return;
		}
	}
	uint32_t nreq;
	const uint64_t *reqs = lin_j_epoch_reqs(v, e, &nreq);
	for (uint32_t i = 0; i < nreq; i++) {
		if (LIN_SHARE_FLAGS(r->reqs[i]) & LIN_SHARE_DECODE) {
			/* Its earliest decode: held to its first token at the end (finish_shares). */
			bool fresh;
			struct lin_decode_ent *d =
				lin_vtab_get(&v->decodes, reqs[i], lin_k1(proc, 0), &fresh);
			if (!d) {
				v->oom = true;
				return;
			}
			if (fresh || e->decl_ns < d->decl_ns)
				*d = (struct lin_decode_ent){ .decl_ns = e->decl_ns,
							      .epoch = epoch,
							      .off = r->offset,
							      .index = r->index,
							      .file = file };
		}
		if (!(LIN_SHARE_FLAGS(r->reqs[i]) & LIN_SHARE_FIRST_TOKEN))
			continue;
		bool fresh;
		uint64_t *ft = lin_vtab_get(&v->firsttok, reqs[i], lin_k1(proc, 0), &fresh);
		if (!ft) {
			v->oom = true;
			return;
		}
		if (fresh) {
			*ft = epoch;
		} else {
			static const char *const n[] = { "request", "epoch", "first_epoch" };
			uint64_t ids[] = { reqs[i], epoch, *ft };
			lin_j_structural(v, "duplicate_first_token", file, r, 3, n, ids);
		}
	}
	if (v->sharepool.n > UINT32_MAX - r->nreqs) {
		v->oom = true;
		return;
	}
	e->share0 = (uint32_t)v->sharepool.n;
	for (uint32_t i = 0; i < r->nreqs; i++) {
		uint64_t *q = lin_vec_push(&v->sharepool);
		if (!q) {
			v->oom = true;
			return;
		}
		*q = r->reqs[i];
	}
	e->flags |= LIN_EP_SHARED;
}

static void on_adopt(struct lin_joiner *v, uint16_t proc, uint32_t file, const struct lin_rec *r)
{
	/* A late adopt (format 1.4): the token's version had ended; its work is joined late. */
	if (!LIN_IS_NIL(r, TOKEN_ADOPT, LATE) && LIN_GET(r, TOKEN_ADOPT, LATE) != LIN_LATE_NONE) {
		bool request = LIN_GET(r, TOKEN_ADOPT, TARGET_KIND) == LIN_TARGET_REQUEST;
		if (LIN_GET(r, TOKEN_ADOPT, LATE) > LIN_LATE_REISSUED ||
		    (request && LIN_GET(r, TOKEN_ADOPT, LATE) != LIN_LATE_ENDED) ||
		    (!request && !LIN_GET(r, TOKEN_ADOPT, VERSION))) {
			/* A request is never re-issued; an epoch version starts at 1. */
			static const char *const n[] = { "tid", "late" };
			uint64_t ids[] = { LIN_GET(r, TOKEN_ADOPT, TID), LIN_GET(r, TOKEN_ADOPT, LATE) };
			lin_j_structural(v, "late_invalid", file, r, 2, n, ids);
		} else {
			v->sum.late_adopts++;
			/* Its version must end in the trace (finish_versions: late_without_end). */
			lin_j_late_claim(v, proc, file, r, LIN_GET(r, TOKEN_ADOPT, TARGET),
					 request ? 0 : LIN_GET(r, TOKEN_ADOPT, VERSION),
					 (uint8_t)LIN_GET(r, TOKEN_ADOPT, LATE));
		}
	}
	if (LIN_IS_NIL(r, TOKEN_ADOPT, CAPTURE_TID) || LIN_IS_NIL(r, TOKEN_ADOPT, CAPTURE_SEQ))
		return; /* token parsed from text: no capture to match */
	uint64_t *s = lin_j_capture_slot(v, proc, LIN_GET(r, TOKEN_ADOPT, CAPTURE_TID),
					 LIN_GET(r, TOKEN_ADOPT, CAPTURE_SEQ), false);
	if (s && *s) {
		if (*s != LIN_J_CAPTURE_UNTIMED && LIN_GET(r, TOKEN_ADOPT, HOST_NS) < *s - 1) {
			static const char *const n[] = { "tid", "capture_tid", "capture_seq" };
			uint64_t ids[] = { LIN_GET(r, TOKEN_ADOPT, TID),
					   LIN_GET(r, TOKEN_ADOPT, CAPTURE_TID),
					   LIN_GET(r, TOKEN_ADOPT, CAPTURE_SEQ) };
			lin_j_structural(v, "adopt_before_capture", file, r, 3, n, ids);
		}
		return;
	}
	struct lin_adopt *a = lin_vec_push(&v->adopts);
	if (!a) {
		v->oom = true;
		return;
	}
	*a = (struct lin_adopt){ LIN_GET(r, TOKEN_ADOPT, HOST_NS),
				 LIN_GET(r, TOKEN_ADOPT, CAPTURE_SEQ),
				 r->offset,
				 r->index,
				 (uint32_t)LIN_GET(r, TOKEN_ADOPT, CAPTURE_TID),
				 file,
				 proc };
}

static void on_misuse(struct lin_joiner *v, uint16_t proc, uint32_t file, const struct lin_rec *r)
{
	enum lin_misuse_cause c = lin_misuse_lookup(r->str, r->str_len);
	const char *cause = c == LIN_MISUSE_COUNT ? "other" : lin_misuse_names[c];
	if (c == LIN_MISUSE_STALE_TOKEN) {
		bool fresh;
		if (!lin_vtab_get(&v->stale, LIN_GET(r, MISUSE, TID), lin_k1(proc, 0), &fresh))
			v->oom = true;
	}
	static const char *const n[] = { "tid", "target", "version" };
	uint64_t ids[] = { LIN_GET(r, MISUSE, TID), LIN_GET(r, MISUSE, TARGET),
			   LIN_GET(r, MISUSE, VERSION) };
	v->sum.structural++;
	lin_j_finding(v, "misuse", cause, file, r->offset, r->index,
		      LIN_IS_NIL(r, MISUSE, TARGET) ? 1 : 3, n, ids);
}

static void on_launch(struct lin_joiner *v, uint16_t proc, uint32_t file, const struct lin_rec *r)
{
	string_ref(v, proc, file, r, LIN_F_LAUNCH_NAME_SID);
	string_ref(v, proc, file, r, LIN_F_LAUNCH_API);
	lin_j_on_launch(v, proc, file, r);
}

/* A request is a joinable id too: an external id that names it joins straight to it. */
static void on_request_begin(struct lin_joiner *v, uint16_t proc, uint32_t file, const struct lin_rec *r)
{
	string_ref(v, proc, file, r, LIN_F_REQUEST_BEGIN_NAME_SID);
	bool fresh;
	const struct lin_epoch_ent *e =
		lin_vtab_find(&v->epochs, LIN_GET(r, REQUEST_BEGIN, REQUEST), lin_k1(proc, 0));
	uint64_t *begun = lin_vtab_get(&v->requests, LIN_GET(r, REQUEST_BEGIN, REQUEST),
				       lin_k1(proc, 0), &fresh);
	if (!begun) {
		v->oom = true;
		return;
	}
	if (fresh)
		*begun = LIN_GET(r, REQUEST_BEGIN, HOST_NS) ? LIN_GET(r, REQUEST_BEGIN, HOST_NS) : 1;
	if (!fresh || (e && (e->flags & LIN_EP_DECLARED))) {
		static const char *const n[] = { "request" };
		lin_j_structural(v, "duplicate_request_id", file, r, 1, n,
				 &LIN_GET(r, REQUEST_BEGIN, REQUEST));
	}
}

/* Check queued <= submitted <= start <= end where known. */
static void gpu_times(struct lin_joiner *v, uint32_t file, const struct lin_rec *r, uint64_t *t0)
{
	static const char *const kn[] = { "queued_dev", "submitted_dev", "start_dev", "end_dev" };
	uint64_t t[4] = { LIN_NIL, LIN_NIL, LIN_OPT(r, GPU, START_DEV), LIN_OPT(r, GPU, END_DEV) };
	if (r->type == LIN_REC_KERNEL) {
		t[0] = LIN_OPT(r, KERNEL, QUEUED_DEV);
		t[1] = LIN_OPT(r, KERNEL, SUBMITTED_DEV);
	}
	int prev = -1;
	*t0 = LIN_NIL;
	for (int i = 0; i < 3 && *t0 == LIN_NIL; i++)
		*t0 = t[i];
	for (int i = 0; i < 4; i++) {
		if (t[i] == LIN_NIL)
			continue;
		if (prev >= 0 && t[i] < t[prev]) {
			const char *n[] = { "correlation", kn[prev], kn[i] };
			uint64_t ids[] = { LIN_GET(r, GPU, CORRELATION), t[prev], t[i] };
			lin_j_structural(v, "time_order", file, r, 3, n, ids);
			return;
		}
		prev = i;
	}
}

/* The same GPU record read twice: a kernel's grid id is unique in its context; any other
 * record by its correlation and what places it (start, end, device, stream, and for a
 * graph record its node: a replay's nodes share its correlation, and two may start in the
 * same tick of the GPU's timer). */
static uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	return x ^ (x >> 33);
}

/* The graph id and node id of a GPU record; a graph_trace record (a whole replay, when
 * graph-level tracing is on) has a graph id and no node. */
struct graph_ids {
	bool has_graph, has_node;
	uint64_t node; /* LIN_NIL when nil */
};

static struct graph_ids graph_ids(const struct lin_rec *r)
{
	switch (r->type) {
	case LIN_REC_KERNEL:
		return (struct graph_ids){ !LIN_IS_NIL(r, KERNEL, GRAPH_ID),
					   !LIN_IS_NIL(r, KERNEL, GRAPH_NODE_ID),
					   LIN_OPT(r, KERNEL, GRAPH_NODE_ID) };
	case LIN_REC_GRAPH_TRACE:
		return (struct graph_ids){ !LIN_IS_NIL(r, GRAPH_TRACE, GRAPH_ID), false, LIN_NIL };
	case LIN_REC_MEMCPY:
		return (struct graph_ids){ !LIN_IS_NIL(r, MEMCPY, GRAPH_ID),
					   !LIN_IS_NIL(r, MEMCPY, GRAPH_NODE_ID),
					   LIN_OPT(r, MEMCPY, GRAPH_NODE_ID) };
	default:
		return (struct graph_ids){ !LIN_IS_NIL(r, MEMSET, GRAPH_ID),
					   !LIN_IS_NIL(r, MEMSET, GRAPH_NODE_ID),
					   LIN_OPT(r, MEMSET, GRAPH_NODE_ID) };
	}
}

static bool duplicate(struct lin_joiner *v, uint16_t proc, uint32_t file, const struct lin_rec *r,
		      struct graph_ids gi)
{
	bool dup = false;
	uint64_t key = LIN_NIL;
	bool graph = r->type == LIN_REC_GRAPH_TRACE || gi.has_graph || gi.has_node;
	bool grid = r->type == LIN_REC_KERNEL && !LIN_IS_NIL(r, KERNEL, GRID_ID);
	if (grid && !graph) {
		key = LIN_GET(r, KERNEL, GRID_ID);
		dup = lin_j_page_bit(v, &v->grids, lin_k1(proc, LIN_GET(r, KERNEL, CONTEXT)), key, true);
	} else if (grid && !LIN_IS_NIL(r, KERNEL, CORRELATION)) {
		/* A graph node's kernel has the same grid id in every replay (seen on an H200):
		 * one record per replay, by the replay's correlation, the grid id and the node. */
		bool fresh;
		key = LIN_GET(r, KERNEL, GRID_ID);
		uint64_t h = mix64(key ^ 0x27d4eb2f165667c5ull) ^ mix64(gi.node);
		if (!lin_vtab_get(&v->gmemops, h, lin_k1(proc, LIN_GET(r, KERNEL, CORRELATION)), &fresh))
			v->oom = true;
		else
			dup = !fresh;
	} else if (!LIN_IS_NIL(r, GPU, CORRELATION) && !LIN_IS_NIL(r, GPU, START_DEV)) {
		/* No grid id: a graph record by its replay's correlation and its start; any other
		 * (a memcpy or memset, possibly one of several of a batched call, which share one
		 * correlation) by its correlation and everything that places it: start, end,
		 * device, stream. Two real records never agree on all of them. */
		bool fresh;
		key = mix64(LIN_GET(r, GPU, START_DEV)) ^
		      mix64(LIN_OPT(r, GPU, END_DEV) + 0x9e3779b97f4a7c15ull) ^
		      mix64((LIN_GET(r, GPU, DEVICE) << 32) ^ LIN_GET(r, GPU, STREAM) ^
			    0xc2b2ae3d27d4eb4full);
		if (graph) /* two nodes of one replay may start in the same timer tick */
			key ^= mix64((r->type == LIN_REC_GRAPH_TRACE ? LIN_GET(r, GRAPH_TRACE, GRAPH_ID)
								     : gi.node) ^
				     0x165667b19e3779f9ull);
		if (!lin_vtab_get(&v->gmemops, key, lin_k1(proc, LIN_GET(r, GPU, CORRELATION)), &fresh))
			v->oom = true;
		else
			dup = !fresh;
	}
	if (!dup)
		return false;
	static const char *const n[] = { "correlation", "key" };
	uint64_t ids[] = { LIN_OPT(r, GPU, CORRELATION), key };
	v->sum.duplicates++;
	lin_j_structural(v, "duplicate_gpu_record", file, r, 2, n, ids);
	return true;
}

/* CUPTI writes a graph replay as one graph_trace record (graph-level tracing) or one record
 * per node, never both: both for one launch is the same GPU time twice (merged traces, a
 * writer bug), a structural finding once per launch. false: out of memory. */
static bool graph_record_kinds(struct lin_joiner *v, uint16_t proc, uint32_t file,
			       const struct lin_rec *r, uint64_t corr, bool whole)
{
	bool fresh;
	uint64_t *bits = lin_vtab_get(&v->graphcorr, corr, lin_k1(proc, 0), &fresh);
	if (!bits) {
		v->oom = true;
		return false;
	}
	if (fresh)
		*bits = 0;
	*bits |= whole ? 1u : 2u;
	if ((*bits & 3u) == 3u && !(*bits & 4u)) {
		*bits |= 4u;
		static const char *const n[] = { "correlation" };
		lin_j_structural(v, "graph_trace_and_node_records", file, r, 1, n, &corr);
	}
	return true;
}

static void on_gpu(struct lin_joiner *v, uint16_t proc, uint32_t file, const struct lin_rec *r)
{
	struct lin_gpu g = { 0 };
	v->sum.gpu_records++;
	v->procs[proc].gpu_records++;
	struct graph_ids gi = graph_ids(r);
	if (duplicate(v, proc, file, r, gi))
		return;
	gpu_times(v, file, r, &g.t0);
	g.corr = LIN_IS_NIL(r, GPU, CORRELATION) ? 0 : LIN_GET(r, GPU, CORRELATION);
	v->procs[proc].gpu_called += g.corr != 0;
	g.kind = (uint8_t)r->type;
	g.proc = proc;
	g.file = file;
	g.offset = r->offset;
	g.index = r->index;
	bool whole = r->type == LIN_REC_GRAPH_TRACE;
	if (whole || gi.has_graph || gi.has_node)
		g.flags |= LIN_G_GRAPH;
	if ((whole || gi.has_node) && g.corr && !graph_record_kinds(v, proc, file, r, g.corr, whole))
		return;
	g.node = whole || !gi.has_node ? 0 : gi.node;
	if (r->type == LIN_REC_KERNEL) {
		if (LIN_GET(r, KERNEL, DEVICE_LAUNCHED))
			g.flags |= LIN_G_DEVLAUNCH;
		if (!LIN_IS_NIL(r, KERNEL, GRID_ID)) {
			g.key = LIN_GET(r, KERNEL, GRID_ID);
			g.flags |= LIN_G_KEY;
		}
		string_ref(v, proc, file, r, LIN_F_KERNEL_NAME_SID);
	} else if (!LIN_IS_NIL(r, GPU, START_DEV)) {
		g.key = LIN_GET(r, GPU, START_DEV);
		g.flags |= LIN_G_KEY;
	}
	lin_j_gpu(v, &g);
}

/* A dropped record is explicit loss: counted, reported as a finding, exit status 1. */
static void on_dropped(struct lin_joiner *v, uint16_t proc, uint32_t file, const struct lin_rec *r)
{
	if (LIN_GET(r, DROPPED, COUNT) == 0)
		return;
	static const char *const n[] = { "source", "count", "tid" };
	uint64_t ids[] = { LIN_GET(r, DROPPED, SOURCE), LIN_GET(r, DROPPED, COUNT),
			   LIN_GET(r, DROPPED, TID) };
	v->sum.dropped += LIN_GET(r, DROPPED, COUNT);
	v->sum.structural++;
	size_t before = v->findings.n;
	lin_j_finding(v, "loss", "dropped_records", file, r->offset, r->index,
		      LIN_IS_NIL(r, DROPPED, TID) ? 2 : 3, n, ids);
	/* The writer's reason, as the detail (printable ASCII only: it is the trace's text). */
	if (v->findings.n > before && r->str && !LIN_IS_NIL(r, DROPPED, REASON)) {
		struct lin_finding *f = lin_vec_at(&v->findings, before);
		size_t k = r->str_len < sizeof(f->detail) - 1 ? r->str_len : sizeof(f->detail) - 1;
		for (size_t i = 0; i < k; i++)
			f->detail[i] = r->str[i] >= 0x20 && r->str[i] < 0x7f ? r->str[i] : '?';
		f->detail[k] = 0;
	}
	uint64_t src = LIN_GET(r, DROPPED, SOURCE);
	if (src == LIN_DROP_HOST_EVENTS) {
		v->procs[proc].dropped_host = true;
		v->procs[proc].host_dropped += LIN_GET(r, DROPPED, COUNT);
	} else if (src != LIN_DROP_HOST_SCHED && src != LIN_DROP_HOST_SCHED_REFUSED)
		v->procs[proc].dropped_cupti = true;
	/* Lost or refused context switches (sources 8, 9) lose no lineage: a loss all the
	 * same (the finding above), and lineage-explain's gap in that thread's off-CPU
	 * evidence (docs/ledger.md), but no join is less certain for them. */
}

static void on_graph(struct lin_joiner *v, uint16_t proc, uint32_t file, const struct lin_rec *r)
{
	bool fresh;
	if (r->type == LIN_REC_GRAPH_NODE_CLONE) {
		struct lin_clone_ent *o = lin_vtab_get(&v->clones,
						       LIN_GET(r, GRAPH_NODE_CLONE, CLONE_NODE_ID),
						       lin_k1(proc, 0), &fresh);
		if (o)
			*o = (struct lin_clone_ent){ LIN_GET(r, GRAPH_NODE_CLONE, ORIGINAL_NODE_ID),
						     LIN_IS_NIL(r, GRAPH_NODE_CLONE, EXEC_ID)
							     ? LIN_NIL
							     : LIN_GET(r, GRAPH_NODE_CLONE, EXEC_ID) };
		else
			v->oom = true;
		return;
	}
	if (r->type == LIN_REC_GRAPH_LAUNCH) {
		/* The replay epoch names the exec it replayed; the launching epoch's version is
		 * held to the stale check like any launch's. */
		v->sum.launches++;
		if (!LIN_IS_NIL(r, GRAPH_LAUNCH, EPOCH) && !LIN_IS_NIL(r, GRAPH_LAUNCH, VERSION))
			lin_j_launched_under(v, proc, file, r, LIN_GET(r, GRAPH_LAUNCH, EPOCH),
					     LIN_GET(r, GRAPH_LAUNCH, VERSION),
					     LIN_GET(r, GRAPH_LAUNCH, HOST_NS));
		if (!LIN_IS_NIL(r, GRAPH_LAUNCH, EPOCH))
			lin_j_inv_use(v, proc, LIN_GET(r, GRAPH_LAUNCH, EPOCH),
				      LIN_IS_NIL(r, GRAPH_LAUNCH, VERSION)
					      ? 0
					      : LIN_GET(r, GRAPH_LAUNCH, VERSION),
				      LIN_GET(r, GRAPH_LAUNCH, HOST_NS));
		uint64_t *x = lin_vtab_get(&v->replays, LIN_GET(r, GRAPH_LAUNCH, REPLAY_EPOCH),
					   lin_k1(proc, 0), &fresh);
		if (x)
			*x = LIN_GET(r, GRAPH_LAUNCH, EXEC_ID);
		else
			v->oom = true;
		return;
	}
	bool node = r->type == LIN_REC_GRAPH_NODE;
	uint64_t id = node ? LIN_GET(r, GRAPH_NODE, NODE_ID) : LIN_GET(r, GRAPH_NODE_UPDATE, NODE_ID);
	struct lin_node_ent *n = lin_vtab_get(&v->nodes, id, lin_k1(proc, 0), &fresh);
	if (!n) {
		v->oom = true;
		return;
	}
	n->has_epoch = node ? !LIN_IS_NIL(r, GRAPH_NODE, EPOCH)
			    : !LIN_IS_NIL(r, GRAPH_NODE_UPDATE, EPOCH);
	n->epoch = node ? LIN_GET(r, GRAPH_NODE, EPOCH) : LIN_GET(r, GRAPH_NODE_UPDATE, EPOCH);
}

static void on_unknown(struct lin_joiner *v, uint32_t file, const struct lin_rec *r)
{
	uint32_t t = r->type < 256 ? r->type : 256;
	if (v->unknown_seen[t / 8] & (1u << (t % 8)))
		return;
	v->unknown_seen[t / 8] |= (uint8_t)(1u << (t % 8));
	v->sum.notes++;
	static const char *const n[] = { "type" };
	uint64_t id = r->type;
	lin_j_finding(v, "note", "unknown_record_type", file, r->offset, r->index, 1, n, &id);
}

/* request_link: a W3C trace id and parent span id are never all zero; flags are one byte. */
static void on_link(struct lin_joiner *v, uint32_t file, const struct lin_rec *r)
{
	if (LIN_LINK_VALID(r))
		return;
	static const char *const n[] = { "request" };
	uint64_t ids[] = { LIN_GET(r, REQUEST_LINK, REQUEST) };
	v->sum.structural++;
	lin_j_finding(v, "structural", "bad_request_link", file, r->offset, r->index, 1, n, ids);
}

/* Where a record was read: the handlers' context (lin_rec_dispatch). */
struct at {
	struct lin_joiner *v;
	uint16_t proc;
	uint32_t file;
};

static void h_request_begin(void *c, const struct lin_rec *r)
{
	const struct at *a = c;
	on_request_begin(a->v, a->proc, a->file, r);
}

static void h_request_end(void *c, const struct lin_rec *r)
{
	const struct at *a = c;
	lin_j_on_request_end(a->v, a->proc, r);
}

static void h_request_link(void *c, const struct lin_rec *r)
{
	const struct at *a = c;
	on_link(a->v, a->file, r);
}

static void h_epoch_declare(void *c, const struct lin_rec *r)
{
	const struct at *a = c;
	on_epoch_declare(a->v, a->proc, a->file, r);
}

static void h_epoch_share(void *c, const struct lin_rec *r)
{
	const struct at *a = c;
	on_epoch_share(a->v, a->proc, a->file, r);
}

static void h_token_capture(void *c, const struct lin_rec *r)
{
	const struct at *a = c;
	uint64_t *s = lin_j_capture_slot(a->v, a->proc, LIN_GET(r, TOKEN_CAPTURE, TID),
					 LIN_GET(r, TOKEN_CAPTURE, CAPTURE_SEQ), true);
	if (s)
		*s = LIN_IS_NIL(r, TOKEN_CAPTURE, HOST_NS) ? LIN_J_CAPTURE_UNTIMED
							   : LIN_GET(r, TOKEN_CAPTURE, HOST_NS) + 1;
}

static void h_token_adopt(void *c, const struct lin_rec *r)
{
	const struct at *a = c;
	on_adopt(a->v, a->proc, a->file, r);
	lin_j_inv_adopt(a->v, a->proc, r);
}

static void h_scope_close(void *c, const struct lin_rec *r)
{
	const struct at *a = c;
	lin_j_inv_scope_close(a->v, a->proc, a->file, r);
}

static void h_misuse(void *c, const struct lin_rec *r)
{
	const struct at *a = c;
	on_misuse(a->v, a->proc, a->file, r);
}

static void h_launch(void *c, const struct lin_rec *r)
{
	const struct at *a = c;
	on_launch(a->v, a->proc, a->file, r);
}

static void h_launch_end(void *c, const struct lin_rec *r)
{
	const struct at *a = c;
	lin_j_on_launch_end(a->v, a->proc, a->file, r);
}

static void h_epoch_reissue(void *c, const struct lin_rec *r)
{
	const struct at *a = c;
	lin_j_inv_reissue(a->v, a->proc, r);
	lin_j_on_version_change(a->v, a->proc, r);
}

static void h_epoch_retire(void *c, const struct lin_rec *r)
{
	const struct at *a = c;
	lin_j_on_version_change(a->v, a->proc, r);
}

static void h_trace_end(void *c, const struct lin_rec *r)
{
	const struct at *a = c;
	struct lin_jproc *p = &a->v->procs[a->proc];
	a->v->files[a->file].ended = true;
	if (LIN_IS_NIL(r, TRACE_END, EVENTS_DROPPED))
		return;
	/* Each runtime of the process closes its own trace: their counts add up, as their
	 * dropped records do. */
	p->end_dropped = (p->end_dropped == LIN_NIL ? 0 : p->end_dropped) +
			 LIN_GET(r, TRACE_END, EVENTS_DROPPED);
	p->end_offset = r->offset;
	p->end_index = r->index;
	p->end_file = a->file;
}

static void h_string(void *c, const struct lin_rec *r)
{
	const struct at *a = c;
	on_string(a->v, a->proc, a->file, r);
}

static void h_ext_correlation(void *c, const struct lin_rec *r)
{
	const struct at *a = c;
	lin_j_on_ext(a->v, a->proc, a->file, r);
}

static void h_api(void *c, const struct lin_rec *r)
{
	const struct at *a = c;
	lin_j_on_api(a->v, a->proc, a->file, r);
}

static void h_gpu(void *c, const struct lin_rec *r)
{
	const struct at *a = c;
	on_gpu(a->v, a->proc, a->file, r);
}

static void h_graph(void *c, const struct lin_rec *r)
{
	const struct at *a = c;
	on_graph(a->v, a->proc, a->file, r);
}

static void h_dropped(void *c, const struct lin_rec *r)
{
	const struct at *a = c;
	on_dropped(a->v, a->proc, a->file, r);
}

static void h_clock(void *c, const struct lin_rec *r)
{
	const struct at *a = c;
	lin_j_on_clock(a->v, a->proc, r);
}

static void h_unknown(void *c, const struct lin_rec *r)
{
	const struct at *a = c;
	on_unknown(a->v, a->file, r);
}

/* What the joiner does with each record of a trace (truth files: on_truth). */
static const struct lin_rec_ops trace_ops = {
	.on = {
		[LIN_REC_REQUEST_BEGIN] = h_request_begin,
		[LIN_REC_REQUEST_END] = h_request_end,
		[LIN_REC_REQUEST_LINK] = h_request_link,
		[LIN_REC_EPOCH_DECLARE] = h_epoch_declare,
		[LIN_REC_EPOCH_SHARE] = h_epoch_share,
		[LIN_REC_TOKEN_CAPTURE] = h_token_capture,
		[LIN_REC_TOKEN_ADOPT] = h_token_adopt,
		[LIN_REC_SCOPE_CLOSE] = h_scope_close,
		[LIN_REC_MISUSE] = h_misuse,
		[LIN_REC_LAUNCH] = h_launch,
		[LIN_REC_LAUNCH_END] = h_launch_end,
		[LIN_REC_EPOCH_REISSUE] = h_epoch_reissue,
		[LIN_REC_EPOCH_RETIRE] = h_epoch_retire,
		[LIN_REC_TRACE_END] = h_trace_end,
		[LIN_REC_STRING] = h_string,
		[LIN_REC_EXT_CORRELATION] = h_ext_correlation,
		[LIN_REC_API] = h_api,
		[LIN_REC_KERNEL] = h_gpu,
		[LIN_REC_MEMCPY] = h_gpu,
		[LIN_REC_MEMSET] = h_gpu,
		[LIN_REC_GRAPH_TRACE] = h_gpu,
		[LIN_REC_GRAPH_NODE] = h_graph,
		[LIN_REC_GRAPH_NODE_CLONE] = h_graph,
		[LIN_REC_GRAPH_NODE_UPDATE] = h_graph,
		[LIN_REC_GRAPH_LAUNCH] = h_graph,
		[LIN_REC_DROPPED] = h_dropped,
		[LIN_REC_CLOCK] = h_clock,
	},
	.unknown = h_unknown,
};

static void on_record(struct lin_joiner *v, uint16_t proc, uint32_t file, const struct lin_rec *r)
{
	if (v->files[file].ended) {
		/* trace_end is the last record a writer writes: anything after it was appended
		 * by something else (or two traces were concatenated). */
		static const char *const n[] = { "type" };
		uint64_t ids[] = { r->type };
		v->sum.structural++;
		lin_j_finding(v, "structural", "record_after_trace_end", file, r->offset, r->index,
			      1, n, ids);
	}
	struct at a = { v, proc, file };
	lin_rec_dispatch(&trace_ops, &a, r);
}

/* A record of a truth file: a truth record is a label, the judge's (lin_join_judge.truth:
 * the joiner only reads it); any other type is noted as in a trace. */
static void on_truth(struct lin_joiner *v, uint16_t proc, uint32_t file, const struct lin_rec *r)
{
	if (r->type != LIN_REC_TRUTH) {
		on_unknown(v, file, r);
		return;
	}
	if (v->opts.judge.truth)
		v->opts.judge.truth(v->opts.judge.arg, v, file, proc, r);
}

static int ingest(struct lin_joiner *v, struct lin_reader *rd, const char *name, bool truth)
{
	struct lin_header h;
	int fi = rd ? lin_j_new_file(v, name, truth) : -1;
	if (fi < 0) {
		lin_reader_free(rd);
		v->oom = true;
		return -2;
	}
	struct lin_jfile *f = &v->files[fi];
	v->sum.files++;
	int rc = lin_reader_header(rd, truth ? LIN_TRUTH_FORMAT_NAME : LIN_TRACE_FORMAT_NAME, &h);
	int proc = rc == 0 ? lin_j_proc(v, &h, (uint32_t)fi, truth) : 0;
	if (rc == 0 && proc < 0) {
		rc = -1;
		snprintf(f->err, sizeof(f->err), "too many processes or out of memory");
	}
	enum lin_read_status st = LIN_READ_EOF;
	while (rc == 0 && (st = lin_reader_next(rd, &v->rec)) == LIN_READ_RECORD) {
		if (truth)
			on_truth(v, (uint16_t)proc, (uint32_t)fi, &v->rec);
		else {
			if (v->opts.tool.rec)
				v->opts.tool.rec(v->opts.tool.arg, (uint32_t)fi, (uint16_t)proc, &v->rec);
			on_record(v, (uint16_t)proc, (uint32_t)fi, &v->rec);
		}
	}
	f->size = lin_reader_size(rd);
	f->records = lin_reader_records(rd);
	if (!truth) {
		v->sum.records += f->records;
		v->sum.bytes += f->size;
	}
	if (!truth && rc == 0 && st == LIN_READ_EOF && !f->ended) {
		/* Every record before is kept; the trace just was not closed. */
		f->failed = true;
		f->truncated = true;
		f->err_off = f->size;
		snprintf(f->err, sizeof(f->err),
			 "truncated: no trace_end record after %" PRIu64 " records (the writing "
			 "process did not close the trace: killed, crashed or still running)",
			 f->records);
		v->sum.file_errors++;
		lin_reader_free(rd);
		return -1;
	}
	if (rc != 0 || st == LIN_READ_ERROR) {
		f->failed = true;
		f->truncated = lin_reader_truncated(rd);
		if (!f->err[0])
			snprintf(f->err, sizeof(f->err), "%s", lin_reader_error(rd));
		f->err_off = lin_reader_error_offset(rd);
		v->sum.file_errors++;
		rc = -1;
	}
	lin_reader_free(rd);
	return rc;
}

int lin_joiner_add_file(struct lin_joiner *v, const char *path)
{
	return ingest(v, lin_reader_open(path), path, false);
}

int lin_joiner_add_mem(struct lin_joiner *v, const char *name, const void *data, size_t n)
{
	return ingest(v, lin_reader_open_mem(name, data, n), name, false);
}

/* Refuse truth file @name, recorded as a file error (exit 2), nothing read from it. */
static int refuse_truth(struct lin_joiner *v, const char *name, const char *why, const char *other)
{
	int fi = lin_j_new_file(v, name, true);
	if (fi < 0) {
		v->oom = true;
		return -2;
	}
	struct lin_jfile *f = &v->files[fi];
	v->sum.files++;
	f->failed = true;
	snprintf(f->err, sizeof(f->err), why, other);
	v->sum.file_errors++;
	return -1;
}

/*
 * A truth file with no judge to compare it (lin_joiner_opts.judge.judge NULL) would be read
 * and compared with nothing: a comparison claimed and never made. A truth file after a
 * trace is a caller's mistake too: labels are compared as GPU records resolve, so the
 * records already read would be judged without them. Either is refused.
 */
static int truth_refused(struct lin_joiner *v, const char *name)
{
	if (!v->opts.judge.judge || !v->opts.judge.truth)
		return refuse_truth(v, name,
				    "truth file given with no judge to compare it with%s "
				    "(lin_joiner_opts.judge: validator/truth.h)",
				    "");
	for (unsigned i = 0; i < v->nfiles; i++)
		if (!v->files[i].truth)
			return refuse_truth(v, name,
					    "truth file added after the trace %s: truth files "
					    "must come before the traces they describe",
					    v->files[i].name);
	return 0;
}

int lin_joiner_add_truth(struct lin_joiner *v, const char *path)
{
	int late = truth_refused(v, path);
	if (late)
		return late;
	v->sum.have_truth = true;
	return ingest(v, lin_reader_open(path), path, true);
}

int lin_joiner_add_truth_mem(struct lin_joiner *v, const char *name, const void *data, size_t n)
{
	int late = truth_refused(v, name);
	if (late)
		return late;
	v->sum.have_truth = true;
	return ingest(v, lin_reader_open_mem(name, data, n), name, true);
}
