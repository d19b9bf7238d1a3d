/* SPDX-License-Identifier: MIT */
/*
 * jstate.h - the join layer's state, shared by its files and private to join/ (tests
 * aside): its tools read the joined run through join.h's getters, the importers feed it
 * through feed.h.
 */
#ifndef LIN_JOIN_JSTATE_H
#define LIN_JOIN_JSTATE_H

#include "clockmap.h"
#include "reader.h"
#include "feed.h"
#include "join.h"
#include "vtab.h"

#define LIN_MAX_PROCS 65535
#define LIN_MAX_CANDS 4096 /* extra ambiguous candidates remembered in all */

struct lin_jproc {
	char host[256];
	char backend[32]; /* the header's backend ("" when absent) */
	char cupti[128];  /* the header's cupti status ("" when nil or absent) */
	bool cupti_tids;  /* its status says API records carry CUPTI's default thread ids */
	uint64_t pid;
	uint64_t ext_kind;
	uint64_t minor;        /* the trace's format minor version */
	uint64_t min_api_corr; /* UINT64_MAX: no API record */
	uint64_t api_records, gpu_records, launches;
	uint64_t gpu_called;  /* GPU records that name an API call (a correlation) */
	uint64_t unpushed;    /* launch brackets that pushed nothing */
	uint64_t ext_records; /* ext correlation records of its ext kind */
	bool xcheck_unmarked; /* a tagged call could not mark its bracket: count instead */
	uint32_t file;        /* the first file of this process */
	bool dropped_host, dropped_cupti;
	uint64_t host_dropped;          /* events the dropped records of source 1 count */
	uint64_t end_dropped;           /* events its trace_end records say were dropped, summed;
				     * LIN_NIL: none read */
	uint64_t end_offset, end_index; /* where that trace_end is */
	uint32_t end_file;
	bool runtime_api;       /* an api record of the runtime domain was read */
	bool host_clock;        /* header device_clock "host": device time is host time */
	bool pushes;            /* its runtime pushed the ids (backend cupti, custom, attach):
				     * an ext record of its kind comes from a lineage bracket */
	bool traced;            /* a trace file (not only a truth file) named it */
	struct lin_vec capwin;  /* struct lin_capture: stream-capture windows */
	struct lin_vec capopen; /* uint64_t: indexes in capwin of the windows opened, in
				     * order; closed ones are dropped from the top as met */
	struct lin_vec capthr;  /* struct lin_capthr: after the run, the closed windows by
				     * thread, then begin */

	/* Its clock records (trace/clockmap.h), finished with the brackets;
	 * clocks.width_known: the mapping error is bounded. */
	struct lin_clockmap clocks;
};

/* Correlations [begin, end] of a stream capture opened and closed on one thread; every API
 * call in between was made while it was open (correlation ids follow call order). */
/* end LIN_NIL: never closed (at the end: UINT64_MAX and open set). aux: while the trace is
 * read, 1 + the index of the window open on its thread before it (0: none), so a close
 * finds its thread's last open window at once; once sorted by begin, the latest end of the
 * windows up to it, so a lookup need not walk back over every earlier window. */
struct lin_capture {
	uint64_t begin, end;
	uint32_t tid, open;
	uint64_t aux;
};
/* A closed window of a thread; pmax: the latest end of its thread's windows up to it. */
struct lin_capthr {
	uint64_t begin, pmax;
	uint32_t tid, pad;
};

/* A GPU record waiting for its joins. */
struct lin_gpu {
	uint64_t corr, node, key, offset, index;
	uint64_t t0; /* first known device time (queued..start), or LIN_NIL */
	uint32_t file;
	uint16_t proc;
	uint8_t kind;
	uint8_t flags; /* LIN_G_* */
};
#define LIN_G_DEVLAUNCH 1
#define LIN_G_GRAPH 2
#define LIN_G_KEY 4
#define LIN_G_COUNTED 8 /* counted in its correlation's ngpu */

/*
 * A declared epoch (or an id that was pushed or named by ext records before, or without,
 * its declaration). pushed/ext_n: launch brackets that pushed this id, and ext correlation
 * records naming it (docs/validator.md, "Launch accounting"). Begun requests are a set of
 * their own (lin_joiner.requests): an external id that names one joins straight to it.
 */
struct lin_epoch_ent {
	uint64_t req;
	uint32_t nreq;
	uint16_t flags;
	/* Bit k (enum lin_late): a bracket pushed it with late k; an ext record named it so. */
	uint8_t push_late, ext_late;
	uint32_t pushed, ext_n;
	/* Invariants (invariants.c): its declaration's time and record, its highest version,
	 * the earliest adopt or launch under it (0: none yet). */
	uint64_t decl_ns, use_ns, decl_off, decl_index;
	uint32_t decl_file, max_ver;
	uint64_t where_off, where_index; /* the first bracket that pushed it, or until
						* one did, the first ext record naming it */
	uint32_t where_file;
	uint32_t share0; /* LIN_EP_SHARED: its shares' index in sharepool (nreq of them) */
	uint32_t paired; /* its ext records that are not calls of their own: a
				     * runtime launch and the driver launch nested in it, each with
				     * its own correlation and ext record, are one call (ingest.c,
				     * count_pair) */
};
#define LIN_EP_DECLARED 1
#define LIN_EP_PUSHED 2  /* a launch bracket pushed it (pushed may drop back to 0) */
#define LIN_EP_RETIRED 4 /* an epoch_retire names it */
/* A request's earliest-declared epoch whose shares say it decoded, and where they are. */
struct lin_decode_ent {
	uint64_t decl_ns, epoch, off, index;
	uint32_t file, pad;
};
#define LIN_EP_SHARED 8      /* an epoch_share record gave its shares, and they held */
#define LIN_EP_SHARE_SEEN 16 /* an epoch_share record named it (held or not) */

struct lin_corr_ent {
	uint64_t epoch, api_start, api_end;
	uint64_t api_offset, api_index; /* where the API record is (until it arrives: the
					   * first ext record, api_file too) */
	uint32_t api_tid, api_file;
	uint16_t flags;
	uint8_t domain, ngpu;
	uint8_t lkind; /* enum lin_launch_kind of the API (LIN_LAUNCH_NONE: not one) */
	uint8_t pad[3];
	uint32_t partner; /* the launch of the other domain nested with it (0: none) */
	uint32_t pad2;
};
/* The last launch API records of a thread, to pair a runtime launch with the driver launch
 * nested in it (whichever record comes first). */
#define LIN_APIRING 16
/* epoch: its ext id (LIN_NIL: none yet); partner: the record paired with it (0: none). Kept
 * for a partner whose correlation was joined and evicted before the pair was complete. */
struct lin_apirec {
	uint64_t start, end, epoch;
	uint32_t corr, partner;
	uint8_t domain, pad[7];
};
struct lin_apiring {
	struct lin_apirec r[LIN_APIRING];
	uint32_t n, head;
};
#define LIN_C_EXT 1
#define LIN_C_AMBIG 2
#define LIN_C_API 4
#define LIN_C_LAUNCH 8         /* the API record is a launch API that returned 0 */
#define LIN_C_LATE_ENDED 16    /* its ext id carries LIN_EXT_LATE_ENDED */
#define LIN_C_LATE_REISSUED 32 /* ... LIN_EXT_LATE_REISSUED */
#define LIN_C_FOREIGN 64       /* its API record names another process than its file's header */
/* enum lin_late of a correlation's ext id. */
static inline uint8_t lin_c_late(uint16_t flags)
{
	return (flags & LIN_C_LATE_ENDED) ? 1 : (flags & LIN_C_LATE_REISSUED) ? 2 : 0;
}

struct lin_cand {
	uint64_t epoch;
	uint32_t corr;
	uint32_t proc;
};
struct lin_node_ent {
	uint64_t epoch;
	uint32_t has_epoch;
	uint32_t pad;
};
/* A clone made at instantiation: its original node and the exec it belongs to (or LIN_NIL). */
struct lin_clone_ent {
	uint64_t original, exec;
};
struct lin_ref_ent {
	uint64_t offset, index;
	uint32_t file;
	uint32_t pad;
};
struct lin_adopt {
	uint64_t host_ns, seq, offset, index;
	uint32_t tid, file;
	uint16_t proc;
};
/*
 * Launch brackets, per thread, in begin order (brackets.c). A thread's records arrive in
 * the order it wrote them, so appending keeps the order; a bracket that begins before its
 * predecessor marks the thread unordered and no time check is made on it.
 */
#define LIN_OPEN_DEPTH 16
#define LIN_END_UNTIMED (UINT64_MAX - 1) /* a launch_end without a time: closed, end unknown */
struct lin_br {
	uint64_t begin, end; /* host ns; end LIN_NIL: no launch_end (yet); LIN_END_UNTIMED */
	uint64_t id;         /* pushed: the id pushed; else the epoch (LIN_NIL: none) */
	uint64_t offset, index;
	uint64_t parent;         /* sequence number of the enclosing bracket, or LIN_NIL */
	uint32_t apis, file;     /* apis: API calls found inside it (or inside a child) */
	uint16_t depth;          /* 0: unknown (format 1.0/1.1) */
	uint8_t pushed, nonleaf; /* nonleaf: a pushed bracket opened inside this pushed one */
	uint8_t late;            /* enum lin_late: opened after its version ended */
	uint8_t pad[3];
};
/* An API call whose bracket may not have arrived yet, or waits for the end of the run. */
struct lin_xdefer {
	uint64_t s, e, ext, corr, offset, index;
	uint32_t tid, file;
	uint16_t proc;
	uint8_t late, pad[5]; /* late: enum lin_late of the ext id's late bits */
};
struct lin_bthread {
	struct lin_br *b;
	uint64_t base;                 /* sequence number of b[0] */
	uint64_t horizon;              /* calls before it may lie in a dropped bracket; 0: none */
	uint64_t open[LIN_OPEN_DEPTH]; /* the bracket open at each depth, or LIN_NIL */
	struct lin_xdefer *d;          /* its tagged calls waiting for a decision */
	uint32_t n, cap, nd, capd;
	uint32_t unpushed; /* brackets that pushed nothing (never dropped) */
	bool unordered;
	bool unmarked;    /* a tagged call went unchecked without marking its bracket */
	bool uncheckable; /* its process has no bound on the clock mapping (yet) */
	bool orphan;      /* bracket_without_parent was reported on it */
};
#define LIN_PBR_CAP 65536         /* brackets kept on a thread of pushed brackets only */
#define LIN_PBR_KEEP 1024         /* ... past which checked ones are dropped */
#define LIN_XDEFER_CAP (1u << 20) /* waiting calls, all threads */

/* One version of one epoch: the latest launch made under it and when it stopped being
 * current (re-issued or retired). */
struct lin_vers_ent {
	uint64_t launch_ns, changed_ns;
	uint64_t offset, index; /* that launch */
	uint32_t file;
	uint8_t launched, changed;
	uint8_t reissued;                 /* changed by an epoch_reissue (not only a retire) */
	uint8_t late;                     /* enum lin_late: the first launch marked late under it */
	uint64_t late_offset, late_index; /* that launch */
	uint32_t late_file, pad;
	uint64_t issued_ns, first_ns; /* invariants.c: its issue, its first use (0: none) */
};

struct lin_joiner {
	struct lin_joiner_opts opts;
	struct lin_join_summary sum;
	struct lin_jfile *files;
	unsigned nfiles;
	struct lin_jproc *procs;
	unsigned nprocs;
	struct lin_vec findings; /* struct lin_finding, capped */
	struct lin_vtab epochs, corrs, closed, captures, nodes, clones, strings, undef, stale, vers,
		grids, gmemops, bthreads, replays, requests, apiring, scopes,
		firsttok,  /* (request, proc): the epoch whose shares gave its first token */
		decodes,   /* (request, proc): struct lin_decode_ent, its earliest decode share */
		graphcorr, /* (corr, proc): uint64_t bits, a replay's GPU records: 1 a graph_trace
			    * record, 2 a node's record, 4 both reported */
		capheads;  /* (tid, proc): 1 + capwin index of its last open
					    * window (0: none) */
	struct lin_vec reqpool, cands, pending, adopts;
	struct lin_vec sharepool; /* uint64_t: packed shares (LIN_SHARE_PACK) of LIN_EP_SHARED */
	uint64_t xdefer;          /* calls waiting for their bracket, all threads */
	uint8_t unknown_seen[256 / 8 + 1];
	bool oom;
	char empty_why[192]; /* why the run has no GPU record, when an importer
					    * knows ("": the generic reason) */
	struct lin_rec rec;
};

/* A capture slot's value: host time + 1, 0 = no capture, or this when the capture's time
 * is not known (LIN_RT_LEAN_TIMESTAMPS). */
#define LIN_J_CAPTURE_UNTIMED UINT64_MAX

/* ingest.c */
/* Count a finding and keep it (up to max_findings): the one kept, or NULL. */
struct lin_finding *lin_j_finding(struct lin_joiner *v, const char *kind, const char *cause,
				  uint32_t file, uint64_t offset, uint64_t index, int nids,
				  const char *const *names, const uint64_t *ids);
int lin_j_proc(struct lin_joiner *v, const struct lin_header *h, uint32_t file, bool truth);
/* state.c: add a file named @name (copied) to the run: its index, or -1 (out of memory). */
int lin_j_new_file(struct lin_joiner *v, const char *name, bool truth);
void lin_j_structural(struct lin_joiner *v, const char *cause, uint32_t file, const struct lin_rec *r,
		      int nids, const char *const *names, const uint64_t *ids);
/* ingest_api.c */
void lin_j_on_ext(struct lin_joiner *v, uint16_t proc, uint32_t file, const struct lin_rec *r);
void lin_j_on_api(struct lin_joiner *v, uint16_t proc, uint32_t file, const struct lin_rec *r);
/* brackets.c */
void lin_j_on_launch(struct lin_joiner *v, uint16_t proc, uint32_t file, const struct lin_rec *r);
void lin_j_on_launch_end(struct lin_joiner *v, uint16_t proc, uint32_t file, const struct lin_rec *r);
/* A launch (or graph launch) under (@epoch, @version) at @host_ns, for the stale check. */
void lin_j_inv_declare(struct lin_joiner *v, uint16_t proc, uint32_t file, const struct lin_rec *r);
void lin_j_inv_reissue(struct lin_joiner *v, uint16_t proc, const struct lin_rec *r);
void lin_j_inv_use(struct lin_joiner *v, uint16_t proc, uint64_t epoch, uint64_t ver, uint64_t t);
void lin_j_inv_adopt(struct lin_joiner *v, uint16_t proc, const struct lin_rec *r);
void lin_j_inv_scope_close(struct lin_joiner *v, uint16_t proc, uint32_t file, const struct lin_rec *r);
void lin_j_inv_finish(struct lin_joiner *v);
void lin_j_late_claim(struct lin_joiner *v, uint16_t proc, uint32_t file, const struct lin_rec *r,
		      uint64_t epoch, uint64_t ver, uint8_t late);
void lin_j_on_request_end(struct lin_joiner *v, uint16_t proc, const struct lin_rec *r);
void lin_j_launched_under(struct lin_joiner *v, uint16_t proc, uint32_t file, const struct lin_rec *r,
			  uint64_t epoch, uint64_t version, uint64_t host_ns);
void lin_j_on_version_change(struct lin_joiner *v, uint16_t proc, const struct lin_rec *r);
void lin_j_on_clock(struct lin_joiner *v, uint16_t proc, const struct lin_rec *r);
/* Finish each process's clock map (its pairs sorted); report unclosed brackets and stale
 * launches. Before any lookup by time. */
void lin_j_brackets_finish(struct lin_joiner *v);
/* Launch accounting by count and of brackets that pushed nothing (after the lookups). */
void lin_j_accounting_finish(struct lin_joiner *v);
/* Device time -> host time through the process's clock map (trace/clockmap.h; false: no
 * clock). Outside the span of the clock pairs the mapping extrapolates the nearest pair's
 * offset, and *widen (when not NULL) is how far the two clocks may have drifted apart
 * since: the distance to that pair times LIN_CLOCK_RATE_ERR (0 inside the span, and with
 * device_clock "host"). */
bool lin_j_to_host(const struct lin_joiner *v, uint16_t proc, uint64_t dev, uint64_t *host,
		   uint64_t *widen);
/* A call's device interval [@ds, @de] in host time [*s, *e], and the bound *u on the error
 * of that placement: the widest pair's width plus the widening of either end (0 with
 * device_clock "host", or where the process has no bound at all). false: no clock. */
bool lin_j_call_to_host(const struct lin_joiner *v, uint16_t proc, uint64_t ds, uint64_t de,
			uint64_t *s, uint64_t *e, uint64_t *u);
struct lin_bthread *lin_j_bthread(struct lin_joiner *v, uint16_t proc, uint64_t tid, bool create);
/* What the brackets of a thread say of a call whose host interval is [s, e] give or take
 * u (the mapping error): the deepest bracket that holds it for certain (of those that
 * pushed, with @pushed_only), whether another one may hold it instead (ambiguous), whether
 * one without a known end may (unclosed), and, before the end of the run, whether a
 * bracket that may hold it can still arrive (later). With @mark, every bracket that holds
 * or may hold the call counts it (apis). */
struct lin_hold {
	struct lin_br *inner;
	bool ambiguous, unclosed, later;
};
void lin_j_holders(struct lin_bthread *t, uint64_t s, uint64_t e, uint64_t u, bool pushed_only,
		   bool final, bool mark, struct lin_hold *h);
enum lin_bracket_find {
	LIN_BF_NONE,
	LIN_BF_FOUND,
	LIN_BF_UNCLOSED,
	LIN_BF_NO_CLOCK,
	LIN_BF_UNCERTAIN
};
/* Time containment's lookup for the API call of @c (after lin_j_brackets_finish): the
 * innermost bracket that holds it for certain (*out), or why there is none. */
enum lin_bracket_find lin_j_bracket_find(const struct lin_joiner *v, uint16_t proc,
					 const struct lin_corr_ent *c, const struct lin_br **out);
/* xcheck.c */
/* Correlation @corr now has both its API record and its ext record: check the bracket. */
void lin_j_xcheck(struct lin_joiner *v, uint16_t proc, uint64_t corr, const struct lin_corr_ent *c);
/* A bracket opened on @t: decide the calls that waited for one to begin after them. */
void lin_j_xcheck_wake(struct lin_joiner *v, struct lin_bthread *t, uint64_t begin);
/* Make room on @t for one more bracket (drops checked pushed ones; false: ENOMEM). */
bool lin_j_bracket_room(struct lin_joiner *v, struct lin_bthread *t);
/* Deferred checks, and the pushed brackets that held no API call. */
void lin_j_xcheck_finish(struct lin_joiner *v);
void lin_j_bthreads_free(struct lin_joiner *v);
/* resolve.c */
void lin_j_gpu(struct lin_joiner *v, struct lin_gpu *g);
void lin_j_resolve_all(struct lin_joiner *v);
static inline const uint64_t *lin_j_epoch_reqs(const struct lin_joiner *v,
					       const struct lin_epoch_ent *e, uint32_t *n)
{
	*n = e->nreq;
	if (e->nreq <= 1)
		return &e->req;
	return lin_vec_at(&v->reqpool, (size_t)e->req);
}

static inline uint64_t lin_k1(uint16_t proc, uint64_t aux)
{
	return ((uint64_t)proc << 32) | (aux & 0xffffffffu);
}

/* The process of a table key's k1 as lin_vtab_next returns it (lin_k1's inverse). */
static inline uint16_t lin_k1_proc(uint64_t k1) { return (uint16_t)((k1 & ~LIN_VTAB_USED) >> 32); }

#endif
