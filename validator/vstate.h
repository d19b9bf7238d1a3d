/* SPDX-License-Identifier: MIT */
/* vstate.h - the validator's state, shared by ingest.c, resolve.c and report.c. */
#ifndef LIN_VALIDATOR_VSTATE_H
#define LIN_VALIDATOR_VSTATE_H

#include "reader.h"
#include "validate.h"
#include "vtab.h"

#define LIN_MAX_PROCS 65535
#define LIN_MAX_IDS 6
#define LIN_MAX_CAND 8
#define LIN_MAX_CANDS 4096          /* extra ambiguous candidates remembered in all */
#define LIN_NIL UINT64_MAX

struct lin_vfile {
	char *name;
	uint64_t size, records;
	char err[512];
	uint64_t err_off;
	bool failed, truncated, truth;
	bool ended;                /* a trace_end record was read */
};

struct lin_vproc {
	char host[256];
	char backend[32];           /* the header's backend ("" when absent) */
	char cupti[128];            /* the header's cupti status ("" when nil or absent) */
	uint64_t pid;
	uint64_t ext_kind;
	uint64_t minor;             /* the trace's format minor version */
	uint64_t min_api_corr;      /* UINT64_MAX: no API record */
	uint64_t api_records, gpu_records, launches;
	uint64_t unpushed;          /* launch brackets that pushed nothing */
	uint32_t file;              /* the first file of this process */
	bool dropped_host, dropped_cupti;
	bool runtime_api;           /* an api record of the runtime domain was read */
	bool host_clock;            /* header device_clock "host": device time is host time */
	bool traced;                /* a trace file (not only a truth file) named it */
	struct lin_vec clocks;      /* struct lin_clock_pair, sorted by device time at finish */
	struct lin_vec capwin;      /* struct lin_capture: stream-capture windows */
};

/* Correlations [begin, end] of a stream capture opened and closed on one thread; every API
 * call in between was made while it was open (correlation ids follow call order). */
struct lin_capture { uint64_t begin, end; uint32_t tid, pad; };

struct lin_clock_pair { uint64_t host_ns, device_ns; };

struct lin_finding {
	const char *kind, *cause;
	uint32_t file;
	uint64_t offset, index;
	int nids, ncand;
	const char *idname[LIN_MAX_IDS];
	uint64_t id[LIN_MAX_IDS];
	uint64_t cand[LIN_MAX_CAND];
	char detail[192];           /* why, in words ("" when the cause says it all) */
};

/* A GPU record waiting for its joins. */
struct lin_gpu {
	uint64_t corr, node, key, offset, index;
	uint64_t t0;                /* first known device time (queued..start), or LIN_NIL */
	uint32_t file;
	uint16_t proc;
	uint8_t kind;
	uint8_t flags;              /* LIN_G_* */
};
#define LIN_G_DEVLAUNCH 1
#define LIN_G_GRAPH 2
#define LIN_G_KEY 4
#define LIN_G_COUNTED 8             /* counted in its correlation's ngpu */

/*
 * A declared epoch (or an id that was pushed or named by ext records before, or without,
 * its declaration). pushed/ext_n: launch brackets that pushed this id, and ext correlation
 * records naming it (docs/validator.md, "Launch accounting"). Begun requests are a set of
 * their own (lin_validator.requests): an external id that names one joins straight to it.
 */
struct lin_epoch_ent {
	uint64_t req;
	uint32_t nreq;
	uint16_t flags;
	uint16_t pad;
	uint32_t pushed, ext_n;
	uint64_t bracket_off, bracket_index;   /* the first bracket that pushed it (its
						* process's file) */
};
#define LIN_EP_DECLARED 1

struct lin_corr_ent {
	uint64_t epoch, api_start, api_end;
	uint64_t api_offset, api_index;   /* where the API record is */
	uint32_t api_tid, api_file;
	uint16_t flags;
	uint8_t domain, ngpu;
	uint8_t lkind;              /* enum lin_launch_kind of the API (LIN_LAUNCH_NONE: not one) */
	uint8_t pad[3];
};
#define LIN_C_EXT 1
#define LIN_C_AMBIG 2
#define LIN_C_API 4
#define LIN_C_LAUNCH 8              /* the API record is a launch API that returned 0 */

struct lin_cand { uint64_t epoch; uint32_t corr; uint32_t proc; };
struct lin_node_ent { uint64_t epoch; uint32_t has_epoch; uint32_t pad; };
/* A clone made at instantiation: its original node and the exec it belongs to (or LIN_NIL). */
struct lin_clone_ent { uint64_t original, exec; };
struct lin_ref_ent { uint64_t offset, index; uint32_t file; uint32_t pad; };
struct lin_truth_ent { uint64_t req, corr; uint32_t nreq; uint32_t seen; };   /* corr: LIN_NIL unknown */
struct lin_adopt { uint64_t host_ns, seq, offset, index; uint32_t tid, file; uint16_t proc; };
/* A launch bracket that pushed no external id (the only ones time containment uses). */
struct lin_bracket {
	uint64_t begin, end;        /* host ns; end LIN_NIL: no launch_end (yet); LIN_END_UNTIMED */
	uint64_t epoch;             /* LIN_NIL: launched outside any epoch */
	uint64_t offset, index;
	uint32_t tid, file;
	uint16_t proc;
	uint16_t depth;             /* 0: unknown (format 1.1) */
};
/* A launch_end without a time (LIN_RT_LEAN_TIMESTAMPS): closed, end unknown. */
#define LIN_END_UNTIMED (UINT64_MAX - 1)
/* Per thread: the bracket open at each depth (index + 1; LIN_OPEN_PUSHED: a pushed one,
 * not stored). */
#define LIN_OPEN_DEPTH 16
#define LIN_OPEN_PUSHED UINT32_MAX
struct lin_open_ent {
	uint32_t idx[LIN_OPEN_DEPTH];
	uint64_t offset[LIN_OPEN_DEPTH], index[LIN_OPEN_DEPTH];   /* of a pushed one */
	uint64_t pseq[LIN_OPEN_DEPTH];     /* a pushed one's place in its thread's store */
	uint32_t file;
	uint32_t pad;
};
/*
 * Pushed brackets of one thread, in begin order, for the bracket check (xcheck.c): every
 * API call made under a pushed id lies inside a bracket that pushed it. Bounded: past
 * LIN_PBR_CAP the older half is dropped and calls before `horizon` go unchecked.
 */
struct lin_pbr { uint64_t begin, end, ext, offset, index; uint32_t apis, file; uint16_t depth,
		 pad[3]; };
/* An API call whose bracket may not have arrived yet. */
struct lin_xdefer { uint64_t s, e, ext, corr, offset, index; uint32_t tid, file; uint16_t proc,
		    pad[3]; };
struct lin_pthread {
	struct lin_pbr *b;
	uint64_t base;              /* sequence number of b[0] */
	uint64_t horizon;           /* calls before it may lie in a dropped bracket; 0: none */
	uint32_t n, cap;
	struct lin_xdefer *d;       /* its calls waiting for a bracket that begins after them */
	uint32_t nd, capd;
};
#define LIN_PBR_CAP 65536
#define LIN_PBR_KEEP 1024
#define LIN_XDEFER_CAP (1u << 20)

/* One version of one epoch: the latest launch made under it and when it stopped being
 * current (re-issued or retired). */
struct lin_vers_ent {
	uint64_t launch_ns, changed_ns;
	uint64_t offset, index;     /* that launch */
	uint32_t file;
	uint8_t launched, changed, pad[2];
};

struct lin_validator {
	struct lin_vopts opts;
	struct lin_vsummary sum;
	struct lin_vfile *files;
	unsigned nfiles;
	struct lin_vproc *procs;
	unsigned nprocs;
	struct lin_vec findings;           /* struct lin_finding, capped */
	struct lin_vtab epochs, corrs, closed, captures, nodes, clones, strings, undef, stale,
		truth, open, vers, grids, gmemops, pthreads, replays, requests;
	struct lin_vec reqpool, truthpool, cands, pending, adopts, brackets;
	uint64_t xdefer;                   /* calls waiting for their bracket, all threads */
	uint8_t unknown_seen[256 / 8 + 1];
	bool oom;
	char empty_why[192];               /* why the run has no GPU record, when an importer
					    * knows ("": the generic reason) */
	struct lin_rec rec;
};

/* A capture slot's value: host time + 1, 0 = no capture, or this when the capture's time
 * is not known (LIN_RT_LEAN_TIMESTAMPS). */
#define LIN_V_CAPTURE_UNTIMED UINT64_MAX

/* ingest.c */
void lin_v_finding(struct lin_validator *v, const char *kind, const char *cause, uint32_t file,
		   uint64_t offset, uint64_t index, int nids, const char *const *names,
		   const uint64_t *ids);
bool lin_v_closed(struct lin_validator *v, uint16_t proc, uint64_t corr, bool set);
uint64_t *lin_v_capture_slot(struct lin_validator *v, uint16_t proc, uint64_t tid, uint64_t seq,
			     bool create);
int lin_v_proc(struct lin_validator *v, const struct lin_header *h, uint32_t file, bool truth);
/* brackets.c */
void lin_v_on_launch(struct lin_validator *v, uint16_t proc, uint32_t file, const struct lin_rec *r);
void lin_v_on_launch_end(struct lin_validator *v, uint16_t proc, uint32_t file,
			 const struct lin_rec *r);
void lin_v_on_version_change(struct lin_validator *v, uint16_t proc, const struct lin_rec *r);
void lin_v_on_clock(struct lin_validator *v, uint16_t proc, const struct lin_rec *r);
/* Sort brackets and clocks; report unclosed brackets, stale launches and launch accounting. */
void lin_v_brackets_finish(struct lin_validator *v);
/* Device time -> host time through the clock record nearest before it (false: no clock). */
bool lin_v_to_host(const struct lin_validator *v, uint16_t proc, uint64_t dev, uint64_t *host);
enum lin_bracket_find { LIN_BF_NONE, LIN_BF_FOUND, LIN_BF_UNCLOSED, LIN_BF_NO_CLOCK };
/* The innermost un-pushed bracket on the API call's thread that holds the whole call
 * (after lin_v_brackets_finish). */
enum lin_bracket_find lin_v_bracket_find(const struct lin_validator *v, uint16_t proc,
					 const struct lin_corr_ent *c,
					 const struct lin_bracket **out);
/* xcheck.c */
/* A pushed bracket opened (returns its sequence number on the thread) or closed. */
uint64_t lin_v_pbr_open(struct lin_validator *v, uint16_t proc, uint32_t file,
			const struct lin_rec *r);
void lin_v_pbr_close(struct lin_validator *v, uint16_t proc, uint64_t tid, uint64_t seq,
		     uint64_t end);
/* Correlation @corr now has both its API record and its ext record: check the bracket. */
void lin_v_xcheck(struct lin_validator *v, uint16_t proc, uint64_t corr,
		  const struct lin_corr_ent *c);
/* Deferred checks, and the pushed brackets that held no API call. */
void lin_v_xcheck_finish(struct lin_validator *v);
void lin_v_xcheck_free(struct lin_validator *v);
/* resolve.c */
void lin_v_gpu(struct lin_validator *v, struct lin_gpu *g);
void lin_v_resolve_all(struct lin_validator *v);
const uint64_t *lin_v_epoch_reqs(const struct lin_validator *v, const struct lin_epoch_ent *e,
				 uint32_t *n);

static inline uint64_t lin_k1(uint16_t proc, uint64_t aux)
{
	return ((uint64_t)proc << 32) | (aux & 0xffffffffu);
}

#endif
