/* SPDX-License-Identifier: MIT */
/* xstate.h - lineage-explain's state, shared by collect.c, report.c and the ledger (rule.h). */
#ifndef LIN_EXPLAIN_XSTATE_H
#define LIN_EXPLAIN_XSTATE_H

#include "explain.h"
#include "records.h"
#include "vtab.h"

#define LIN_XPROC_IMPORTED 0xffffu

/* A GPU record as read (device clock), or an imported one (host clock, joined already). */
struct lin_xgpu {
	uint64_t offset, corr, start, end, queued, submitted, stream, graph_id;
	uint64_t api_s, api_e;         /* imported: its launch's times; else LIN_NIL */
	uint64_t api_tid;              /* imported: the launching thread; else LIN_NIL */
	uint64_t group;                /* imported: the op's event index; else LIN_NIL */
	uint64_t iproc;                /* imported: its process (or device) id */
	uint64_t name_sid;             /* lineage: the name's string id (LIN_NIL: none) */
	uint64_t node;                 /* graph_node_id (the clone), LIN_NIL: none */
	uint64_t key;                  /* truth key: grid_id, or start_dev (LIN_NIL: none) */
	uint64_t vkey;                 /* the join layer's verdict key: offset, imported: index */
	uint32_t file, dev, ctx, name; /* name: pool offset + 1 (0: none, or by sid) */
	uint32_t gname;                /* imported: the op's name (pool offset + 1) */
	uint16_t proc;                 /* joiner's process index; LIN_XPROC_IMPORTED */
	uint8_t kind, flags;
};
#define LIN_XG_IMPORTED 1
#define LIN_XG_GRAPH 2
#define LIN_XG_LAUNCH 4    /* imported: linked to its launch */
#define LIN_XG_DUP 8       /* lineage: no verdict, a duplicate the join layer did not classify */
#define LIN_XG_NOSTREAM 16 /* imported: the file does not say its stream */

/* A verdict kept for (file, offset). */
struct lin_xverdict {
	uint64_t epoch, req0;
	const char *why; /* inferred: the rule; lost, ambiguous: the cause (static strings) */
	uint32_t nreq;
	uint8_t join, pad[3];
};

struct lin_xreqset {
	uint64_t req0;
	uint32_t nreq, pad;
};

struct lin_xapi {
	uint64_t start, end, tid;
	uint8_t domain, pad[7];
};

/* A request's begin. */
struct lin_xbegin {
	uint64_t host_ns, tid;
};

/* An epoch's declaration. */
struct lin_xdecl {
	uint64_t epoch, host_ns, tid;
	uint64_t parent; /* its parent epoch (LIN_NIL: none) */
	uint16_t proc, pad[3];
};

/* How the build loop classified a GPU record (ledger.c). */
enum lin_xres { LIN_XRES_OK, LIN_XRES_UNJOINED, LIN_XRES_EPOCH_ONLY, LIN_XRES_DUP };

/* --per-request (requests.c): a time-to-first-token stretch. */
enum {
	LIN_XS_QUEUE,
	LIN_XS_PREFILL_BEFORE,
	LIN_XS_HOST,
	LIN_XS_LAUNCH_TO_START,
	LIN_XS_EXECUTION,
	LIN_XS_N
};
/* A stretch's cause: its own, or LIN_XSC_LEDGER + the ledger's enum lin_xcause. */
enum {
	LIN_XSC_QUEUED,
	LIN_XSC_EARLIER_STEPS,
	LIN_XSC_HOST_WORK,
	LIN_XSC_LAUNCH,
	LIN_XSC_EXECUTION,
	LIN_XSC_LEDGER
};
/* Where a request's arrival comes from. */
enum {
	LIN_XARR_BEGIN,
	LIN_XARR_LINKED,
	LIN_XARR_OTHER_HOST,
	LIN_XARR_SENDER_UNKNOWN,
	LIN_XARR_SENDER_LATER,
	LIN_XARR_SENDER_SHARED
};

struct lin_xstretch {
	uint64_t start, end, ns;
	uint8_t name, cause, ev, pad[5];
};

/* One request of --per-request, per (request, proc). */
struct lin_xrq {
	uint64_t gpu_ns, prefill_ns, decode_ns, other_ns, records, by_tokens, by_equal;
	uint64_t begin, user_id;    /* its request_begin (LIN_NIL: none read) */
	uint64_t link_hi, link_lo;  /* its request_link's trace id (linked) */
	uint64_t sched;             /* the earliest declaration of an epoch naming it */
	uint64_t ft_epoch, ft_decl; /* its first-token epoch and that one's declaration */
	uint64_t arrival, first_token, clock_err;
	/* Its first-token step's records that serve it: the first start, the last end (host
	 * clock), their mapping error, and the ledger of the one that started first. */
	uint64_t ft_start, ft_end, ft_err;
	struct lin_xlaunch *ft_led;
	uint64_t last_rec;            /* the last GPU record counted for it, index + 1 */
	uint32_t linked_by;           /* requests of this run whose request_link names it */
	uint64_t gpu_first, gpu_last; /* its records' first start, last end (device ns as read) */
	struct lin_xstretch st[LIN_XS_N];
	uint8_t nst, dominant, arrival_how;
	uint8_t ft_unknown; /* LIN_XFT_*: why its first token is only a lower bound */
	bool linked, named;
};
/* Why a first token is not known, only bounded below. */
enum { LIN_XFT_KNOWN, LIN_XFT_UNATTRIBUTED, LIN_XFT_GPU_MISSING };

/* A timed GPU record no request was given (--per-request): where it could have been. */
struct lin_xunat {
	uint64_t hs, he;
	uint16_t proc, pad[3];
};

/* A share index entry: request -> its index in the shares. */
struct lin_xsidx {
	uint64_t req;
	uint32_t idx, pad;
};

struct lin_xrqkey {
	uint64_t req;
	uint16_t proc, pad[3];
};

/* A first-token step: its declaration (host clock). */
struct lin_xstep {
	uint64_t decl;
};

struct lin_xsplit {
	uint64_t w, ns, rem;
	uint32_t idx, flags;
};

/* --per-request: a process's unattributed line (requests.c, for requests_otlp.c); first, last: its
 * records' first start and last end (device ns as read; LIN_NIL: none). */
struct lin_xrqproc {
	uint64_t ns, records, epoch_only_ns, first, last;
};

/* --per-request's run figures. */
struct lin_xper {
	uint64_t total_ns, attributed_ns, unattributed_ns, epoch_only_ns;
	uint64_t records, attributed_records, unattributed_records, duplicates, untimed;
	uint64_t overflow;    /* records left out: their duration would overflow the total */
	uint64_t graph_twice; /* graph_trace records of a replay whose node records are read */
	uint64_t split_tokens, split_equal, shares_incomplete, zero_tokens;
	/* What the input says is missing from the total: GPU records CUPTI or the writer
	 * dropped, and launches whose GPU record never came (the join layer's accounting). */
	uint64_t dropped, launches_missing;
};

/* Sorted by (proc, tid, kind, target, host_ns): one binary search per target. */
struct lin_xadopt {
	uint64_t tid, host_ns, target, ctid, cseq;
	uint16_t proc;
	uint8_t kind, pad[5];
};

struct lin_xevent {
	uint64_t corr, stream;
	uint32_t ctx, dev;
};

/* A stream wait event on (proc, ctx, stream), sorted by correlation; best: the GPU record
 * (index in gpus) whose end bounds the waiting stream most, over this wait and every wait
 * before it on the stream (SIZE_MAX: none). */
struct lin_xwait {
	uint64_t corr, stream, sync_id;
	size_t best;
	uint32_t ctx;
	uint16_t proc, pad;
};

/* A graph_edge record: node @to runs after node @from (the application's nodes); sorted
 * by (proc, to). */
struct lin_xedge {
	uint64_t to, from, graph;
	uint16_t proc, pad[3];
};

/* A graph's recorded topology: where its last graph_edge record is (lin_xpos), and whether
 * it said "no edge" (nil) and named edges: both is a topology recorded twice, in doubt. */
struct lin_xtopo {
	uint64_t last;
	bool nil, edges;
	uint8_t pad[6];
};

/* A record's place in the input: its file and index, comparable within one file. */
static inline uint64_t lin_xpos(uint32_t file, uint64_t index)
{
	return ((uint64_t)file << 40) | (index & ((1ull << 40) - 1));
}

/* Sorted by (proc, tid, start); at build, overlapping records of a thread are merged, and
 * cum is the off-CPU time of the thread's records before this one. */
struct lin_xsched {
	uint64_t tid, start, end, cum;
	uint16_t proc;
	uint16_t state; /* LIN_SCHED_* */
	uint16_t pad[2];
};

/* A thread whose off-CPU evidence has a gap: context switches lost (dropped source 8) or
 * refused (source 9). */
struct lin_xschedgap {
	uint64_t tid;
	uint16_t proc, pad[3];
};

struct lin_xgroup {
	uint64_t id;       /* the request id, or the op's event index */
	uint64_t ready;    /* request_ready (LIN_NIL: unknown) */
	uint64_t last_end; /* the latest kernel_end of its launches */
	uint64_t first;    /* the critical launch's first known mark */
	size_t critical;   /* the GPU record with that end (index in gpus), or SIZE_MAX */
	size_t crit;       /* its ledger (index in crits), or SIZE_MAX: not listed */
	uint32_t nlaunch, file;
	uint32_t name; /* imported: the op's name (pool offset + 1); 0: none */
	uint16_t proc;
	bool imported;
};

struct lin_explain {
	struct lin_xopts o;
	struct lin_vec gpus;      /* struct lin_xgpu */
	struct lin_vtab verd;     /* (offset, file) -> struct lin_xverdict */
	struct lin_vec reqs;      /* uint64_t: verdicts' and launches' requests */
	struct lin_vtab reqsets;  /* (epoch, proc) -> struct lin_xreqset: each list once */
	struct lin_vtab begins;   /* (request, proc) -> struct lin_xbegin */
	struct lin_vec decls;     /* struct lin_xdecl */
	struct lin_vtab caps;     /* (seq, proc << 32 | tid) -> uint64_t host_ns + 1 (0: untimed) */
	struct lin_vec adopts;    /* struct lin_xadopt */
	struct lin_vtab apis;     /* (corr, proc) -> struct lin_xapi */
	struct lin_vtab events;   /* (sync_id, proc) -> struct lin_xevent */
	struct lin_vec waits;     /* struct lin_xwait */
	struct lin_vec scheds;    /* struct lin_xsched */
	struct lin_vec schedgaps; /* struct lin_xschedgap */
	struct lin_vec edges;     /* struct lin_xedge */
	struct lin_vtab clone_of; /* (clone, proc) -> uint64_t original (UINT64_MAX: two differ) */
	struct lin_vtab node_graph; /* (node, proc) -> uint64_t graph id (graph_node records) */
	struct lin_vtab topo;       /* (graph, proc) -> struct lin_xtopo */
	struct lin_vtab clone_at; /* (clone, proc) -> uint64_t where its clone record is (lin_xpos) */
	struct lin_vtab bynode; /* (original node, proc << 32 | corr) -> size_t the replay's GPU record */
	struct lin_vtab sids;  /* (sid, proc) -> uint32_t pool offset + 1 */
	struct lin_vtab names; /* (hash, len) -> uint64_t pool offset + 1: each name once */
	char *pool;
	size_t pool_n, pool_cap;
	struct lin_vec launches; /* struct lin_xlaunch: the ledgers kept (lin_xopts) */
	struct lin_vec crits;    /* struct lin_xlaunch: the listed requests' critical ledgers */
	struct lin_vec groups;   /* struct lin_xgroup, longest first after build */
	struct lin_xsummary sum;
	/* --per-request (requests.c) */
	struct lin_vtab rq;     /* (request, proc << 32) -> struct lin_xrq */
	struct lin_vtab steps;  /* (epoch, proc << 32) -> struct lin_xstep */
	struct lin_vec rqorder; /* struct lin_xrqkey: the requests in the order first met */
	struct lin_xper per;
	struct lin_vtab rqproc; /* (proc, 0) -> struct lin_xrqproc */
	struct lin_xsplit *split_w;
	uint32_t split_cap;
	struct lin_vec unat;       /* struct lin_xunat */
	struct lin_vtab nodecorrs; /* (corr, proc << 32): a replay with node records read */
	/* The index of one epoch's shares by request, sorted (the last one looked up). */
	struct lin_xsidx *sidx;
	uint32_t sidx_n, sidx_cap;
	uint64_t sidx_epoch;
	uint16_t sidx_proc;
	/* A bit per process with a sync or cuda_event record: synchronization was collected,
	 * so a cross-stream dependency would be in the trace (device_occupied). */
	uint8_t synced[(LIN_XPROC_IMPORTED + 1) / 8];
	bool oom;
};

/* collect.c */
uint32_t lin_x_intern(struct lin_explain *x, const char *s, size_t len);
/* marks.c: the first declaration of @epoch (NULL: none); after lin_x_marks_index. */
const struct lin_xdecl *lin_x_declaration(const struct lin_explain *x, uint16_t proc, uint64_t epoch);
/* getters.c: ns as JSON microseconds, exactly; a Perfetto trace-event file opened with its
 * process named @title (NULL, errno: not opened), and closed (0, or -1 with errno). */
void lin_x_json_us(FILE *f, uint64_t ns);
FILE *lin_x_perfetto_open(const char *path, const char *title);
int lin_x_perfetto_close(FILE *f);
/* requests.c */
struct lin_xbuild;
void lin_x_rq_init(struct lin_explain *x);
void lin_x_rq_free(struct lin_explain *x);
struct lin_xrq *lin_x_rq(struct lin_explain *x, uint64_t req, uint16_t proc);
bool lin_x_rq_prepare(struct lin_explain *x, const struct lin_joiner *v);
bool lin_x_rq_record(struct lin_xbuild *b, size_t i, int res, const struct lin_xlaunch *l);
void lin_x_rq_finish(struct lin_explain *x, const struct lin_joiner *v);
/* Whether the report lists @q: an epoch named it or a GPU record served it. */
bool lin_x_rq_listed(const struct lin_xrq *q);
/* The names of a stretch, a stretch's cause and an arrival's source, as in the reports. */
const char *lin_x_rq_stretch_name(uint8_t s);
const char *lin_x_rq_cause_name(uint8_t c);
const char *lin_x_rq_arrival_name(uint8_t h);
/* Its time to first token, as the reports give it (LIN_NIL: not known). */
uint64_t lin_x_rq_ttft(const struct lin_xrq *q);
/* ledger.c */
/* Whether ledger @l serves request (imported: op) @id of process @proc (file, imported). */
bool lin_x_serves(const struct lin_explain *x, const struct lin_xlaunch *l, uint64_t id,
		  bool imported, uint16_t proc, uint32_t file);

#endif
