/* SPDX-License-Identifier: MIT */
/*
 * explain.h - the launch-state ledger (docs/ledger.md): for every GPU record the join layer
 * tied to a request, when the work was ready, declared, handed off, launched, queued,
 * submitted, free of its dependencies and started, each with its evidence; and the
 * statements of why it started when it did.
 *
 * Use: lin_explain_create(); set lin_explain_tool() as the tool of a joiner created after
 * it (join/join.h: the ledger takes the join layer's records and verdicts; it has no join
 * logic of its own); feed the joiner its files (lin_joiner_add_file, lin_imp_run);
 * lin_joiner_finish(); lin_explain_build(); read the ledgers or print a report;
 * lin_explain_free() (the joiner may be freed after lin_explain_build()).
 * Context: one thread at a time on one struct lin_explain; the ledger keeps no global
 * state, so distinct ones may be built at once on different threads. Memory grows with
 * the GPU, API, token and event records kept (docs/ledger.md, "Limits"), and the ledgers
 * kept for the reports (lin_xopts).
 */
#ifndef LIN_EXPLAIN_H
#define LIN_EXPLAIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "join.h"

/* The ledger's marks, in order (docs/ledger.md, "Marks"). */
#define LIN_MARKS(X) \
	X(REQUEST_READY, "request_ready") \
	X(DECLARED, "declared") \
	X(CAPTURED, "captured") \
	X(ADOPTED, "adopted") \
	X(API_ENTER, "api_enter") \
	X(API_EXIT, "api_exit") \
	X(QUEUED, "queued") \
	X(SUBMITTED, "submitted") \
	X(DEP_READY, "dependency_ready") \
	X(KERNEL_START, "kernel_start") \
	X(KERNEL_END, "kernel_end")
#define LIN_MARK_ENUM(e, s) LIN_M_##e,
enum lin_mark { LIN_MARKS(LIN_MARK_ENUM) LIN_M_N };
#undef LIN_MARK_ENUM

/* A mark's (or a statement's) evidence class. */
enum lin_evidence {
	LIN_EV_UNKNOWN = 0, /* not in the trace: the value is absent or bounded */
	LIN_EV_OBSERVED,    /* a record says it; how: the source */
	LIN_EV_INFERRED,    /* a named rule derives it; how: the rule */
	LIN_EV_ABSENT,      /* the step did not happen (no handoff: launched on the declaring
			     * thread) */
};

/* Where an observed value comes from, which rule inferred it, or why it is unknown. */
#define LIN_HOWS(X) \
	X(NONE, "") \
	X(RUNTIME_HOOK, "runtime_hook") \
	X(CUPTI_API, "cupti_api_record") \
	X(CUPTI_LATENCY, "cupti_latency_timestamp") \
	X(CUPTI_ACTIVITY, "cupti_activity_record") \
	X(HOST_SCHED, "host_sched_record") \
	X(IMPORT_API, "imported_api_event") \
	X(IMPORT_ACTIVITY, "imported_gpu_event") \
	X(STREAM_ORDER, "stream_order") \
	X(EVENT_WAIT, "event_wait") \
	X(KERNEL_MEDIAN, "kernel_median") \
	X(NOT_RECORDED, "not_recorded") \
	X(LEAN_TIMESTAMPS, "lean_timestamps") \
	X(NO_LATENCY_TIMESTAMPS, "no_latency_timestamps") \
	X(NO_CLOCK, "no_clock_record") \
	X(NO_API_RECORD, "no_api_record") \
	X(NOT_IN_FORMAT, "not_in_format") \
	X(NO_KNOWN_DEPENDENCY, "no_known_dependency") \
	X(GRAPH_DEPENDENCY_UNKNOWN, "graph_dependency_unknown") \
	X(DROPPED_RECORDS, "dropped_records") \
	X(JOINED_TO_REQUEST, "joined_to_request") \
	X(NO_HANDOFF, "no_handoff") \
	X(TOO_FEW_SAMPLES, "too_few_samples") \
	X(INFERRED_JOIN, "inferred_join") \
	X(UNRECORDED_HANDOFF, "unrecorded_handoff") \
	X(CLOCK_UNCERTAINTY, "clock_uncertainty") \
	X(OUT_OF_ORDER, "out_of_order") \
	X(OVERLAPPING_PREDECESSOR, "overlapping_predecessor") \
	X(AFTER_DEPENDENCY, "after_dependency") \
	X(NO_STREAM, "no_stream") \
	X(DEVICE_OCCUPIED, "device_occupied") \
	X(NO_SYNC_RECORDS, "no_sync_records") \
	X(COMPETING_CAUSES, "competing_causes") \
	X(TIED_DEPENDENCIES, "tied_dependencies") \
	X(GRAPH_EDGE, "graph_edge") \
	X(GRAPH_ROOT, "graph_root") \
	X(GRAPH_LATENCY, "graph_node_latency")
#define LIN_HOW_ENUM(e, s) LIN_HOW_##e,
enum lin_how { LIN_HOWS(LIN_HOW_ENUM) LIN_HOW_N };
#undef LIN_HOW_ENUM

/* What a stretch of pre-start time is attributed to (docs/ledger.md, "Statements"). */
#define LIN_XCAUSES(X) \
	X(BEFORE_DECLARE, "before_declare") \
	X(BEFORE_HANDOFF, "before_handoff") \
	X(HANDOFF_WAIT, "handoff_wait") \
	X(THREAD_DELAY, "thread_delay") \
	X(DESCHEDULED, "descheduled") \
	X(API_CALL, "api_call") \
	X(SUBMIT_DELAY, "submit_delay") \
	X(DEPENDENCY, "dependency") \
	X(DEVICE_BUSY, "device_busy") \
	X(UNRESOLVED, "unresolved") \
	X(KERNEL_SLOW, "kernel_slow")
#define LIN_XCAUSE_ENUM(e, s) LIN_X_##e,
enum lin_xcause { LIN_XCAUSES(LIN_XCAUSE_ENUM) LIN_X_N };
#undef LIN_XCAUSE_ENUM

struct lin_xmark {
	uint64_t t;   /* host clock, ns (observed, inferred) */
	uint64_t err; /* clock mapping error bound of t, ns (device times) */
	uint8_t ev;   /* enum lin_evidence */
	uint8_t how;  /* enum lin_how */
};

/* One statement: a stretch [start, end] of host time and its cause; ns is the time it
 * accounts for: end - start, except for a stretch that a descheduled statement nests in
 * (ns: less the time off-CPU) and for descheduled itself (ns: the time off-CPU between its
 * start and end) and kernel_slow (inside the kernel). An unresolved stretch is the bound of
 * the unknown readiness: ready somewhere in [start, end]. */
struct lin_xseg {
	uint64_t start, end, ns;
	uint8_t cause, ev, how; /* enum lin_xcause, lin_evidence, lin_how */
	uint8_t state;          /* descheduled: LIN_SCHED_* (preempted, blocked, unknown) */
	uint8_t gap;            /* a thread stretch whose thread's off-CPU evidence has a gap
				 * (context switches lost or refused): 1 */
	uint8_t pad[3];
};

/* At most 9 stretches before the start (8 between marks, the last one cut in two by
 * device_busy), up to three descheduled ones (preempted, blocked, unknown) in each of
 * three of them (handoff_wait, thread_delay, api_call), and kernel_slow. */
#define LIN_XSEG_MAX 19

/* One launch's ledger: a GPU record and the marks of the work behind it. */
struct lin_xlaunch {
	uint64_t offset, corr, epoch, stream, graph_id;
	uint64_t id;    /* unique in the run: the record's index (offsets of SQLite rows repeat
		      * across tables) */
	uint64_t group; /* the first request (lineage traces), the op's event index
			   * (imported), or LIN_NIL */
	uint64_t req0;  /* index in the request pool of its requests */
	uint32_t nreq;  /* requests it serves (a batch: several) */
	uint32_t file;  /* the file's index (lin_joiner_add_* order) */
	uint32_t name;  /* name pool offset + 1; 0: none */
	uint32_t gname; /* imported: its op's name (pool offset + 1); 0: none */
	uint32_t dev, ctx;
	uint16_t proc; /* joiner's process index; imported: 0xffff */
	uint8_t kind;  /* LIN_REC_KERNEL, _MEMCPY, _MEMSET, _GRAPH_TRACE */
	uint8_t join;  /* enum lin_join */
	/* enum lin_xcause of the longest statement (LIN_X_N: none), and the enum lin_how of
	 * that statement (LIN_HOW_NONE: none). When competing causes withdraw it: dominant
	 * LIN_X_UNRESOLVED, dominant_how LIN_HOW_COMPETING_CAUSES, and alt the cause withdrawn
	 * (else LIN_X_N). */
	uint8_t dominant, dominant_how, alt;
	uint8_t dominant_state; /* dominant descheduled: its statement's LIN_SCHED_* */
	uint8_t nseg;
	bool imported;
	struct lin_xmark m[LIN_M_N];
	struct lin_xseg seg[LIN_XSEG_MAX];
	const char *join_rule; /* an inferred join: the join layer's rule (static); else NULL */
	uint64_t slow_excess;  /* kernel_slow: ns above the median; 0: not slow */
	uint64_t median;       /* the median duration of its name (0: unknown) */
	/* The record's truth key (docs/trace-format.md, truth files): a kernel's grid_id, a
	 * memcpy's or memset's start_dev as written; UINT64_MAX: unknown (no grid id, a
	 * graph_trace record, an imported record). */
	uint64_t key;
	/* kernel_end (host clock) of the record before it on its stream, whether or not a rule
	 * used it; UINT64_MAX: none or unknown. */
	uint64_t pred_end;
	/* kernel_end (host clock) of the work the stream-wait-events before it on its stream
	 * wait for (the last record launched on the recording's stream before the recording:
	 * the sync and cuda_event records), whether or not a rule used it; UINT64_MAX: none,
	 * unknown, or the event_wait row left out. */
	uint64_t wait_end;
};

struct lin_xopts {
	uint64_t min_ns;      /* reserved; 0 */
	double slow_factor;   /* kernel_slow when duration > factor * median; default 1.5 */
	unsigned min_samples; /* kernels of one name needed for a median; default 5 */
	/* What is kept for the reports. Every ledger counts in the summary; the critical
	 * ledger is kept for the @top requests that took longest (0: all), or for request
	 * @request only (have_request), with every ledger of that request. keep_all keeps every
	 * ledger (lin_explain_at; tests): memory then grows with the GPU records. */
	size_t top;
	bool have_request;
	uint64_t request;
	bool keep_all;
	/* The device's launch latency order: two device events closer than this are not
	 * ordered (device_occupied, competing causes); 0: 2000 ns. */
	uint64_t tie_ns;
	unsigned without; /* LIN_XW_*: evidence and rules the ledger leaves out (ablations) */
	/* --verdicts: lin_explain_build writes the verdict each GPU record's ledger rests on
	 * there (lin_verdict_line; the joiner's file index names[i]); NULL: not written. */
	FILE *verdicts;
	const char *const *names;
	size_t nnames;
	/* --per-request (docs/serving.md): keep each request's GPU time and its time to first
	 * token; split_equal: split every record equally (default: by the epoch's shares). */
	bool per_request, split_equal;
};

/* Ablations (lin_xopts.without; docs/ledger.md, "Ablations"): each leaves out one kind of
 * evidence or one rule, so that what each contributes to the ledgers can be measured. */
#define LIN_XW_LATENCY 1u      /* queued, submitted: unknown (no_latency_timestamps) */
#define LIN_XW_STREAM_ORDER 2u /* no stream_order rule */
#define LIN_XW_EVENT_WAIT 4u   /* no event_wait rule */
#define LIN_XW_HANDOFF 8u      /* token capture/adopt records: captured, adopted not_recorded */
#define LIN_XW_HOST_SCHED 16u  /* host_sched records: no descheduled statement */
#define LIN_XW_OCCUPANCY 32u   /* no device_occupied rule, no competing-causes check */
#define LIN_XW_GRAPH_EDGE 64u  /* no graph_edge rule: graph kernels graph_dependency_unknown */

struct lin_explain;

struct lin_explain *lin_explain_create(const struct lin_xopts *o);
void lin_explain_free(struct lin_explain *x);
/* The ledger as a tool on the join layer: set it as the joiner's lin_joiner_opts.tool to
 * feed @x. */
struct lin_join_tool lin_explain_tool(struct lin_explain *x);
/* Build every ledger (after lin_joiner_finish). 0, or -ENOMEM (also when a record
 * could not be kept earlier). */
int lin_explain_build(struct lin_explain *x, const struct lin_joiner *v);

/* The ledgers kept (lin_xopts): every one with keep_all, else those of the requested
 * request. */
size_t lin_explain_count(const struct lin_explain *x);
/* Requests (imported: ops) the reports list: those with a critical ledger kept. */
size_t lin_explain_listed(const struct lin_explain *x);
const struct lin_xlaunch *lin_explain_at(const struct lin_explain *x, size_t i);
const uint64_t *lin_explain_reqs(const struct lin_explain *x, const struct lin_xlaunch *l);
const char *lin_explain_name(const struct lin_explain *x, const struct lin_xlaunch *l);

/* The run's figures (docs/ledger.md, "Summary"). */
struct lin_xsummary {
	uint64_t gpu_records; /* GPU records seen */
	uint64_t explained;   /* ... joined to a request (imported: to their launch) */
	uint64_t unjoined;    /* ... lost or ambiguous: no request to explain */
	uint64_t unjoined_lost, unjoined_ambiguous; /* unjoined, by the join layer's class */
	/* unjoined by the join layer's cause (its static strings), the first LIN_X_CAUSES_MAX
	 * causes met; more are counted in unjoined_other. */
#define LIN_X_CAUSES_MAX 32
	struct {
		const char *cause;
		uint64_t n;
		bool ambiguous;
	} unjoined_by[LIN_X_CAUSES_MAX];
	uint32_t n_unjoined_by;
	uint64_t unjoined_other;
	uint64_t epoch_only;      /* ... joined to an epoch that names no request */
	uint64_t duplicates;      /* ... read twice (the join layer's duplicate_gpu_record) */
	uint64_t join_inferred;   /* explained through an inferred join (host marks inferred) */
	uint64_t no_start;        /* explained, but their start is unknown (no time or clock) */
	uint64_t with_statements; /* explained with a stretch before the start */
	uint64_t groups;          /* requests (imported: ops) with a launch */
	uint64_t prestart_ns;     /* the statements' time before the starts (saturating sums) */
	uint64_t by_cause_ns[LIN_X_N];
	uint64_t dominant[LIN_X_N]; /* launches whose longest statement has this cause */
	uint64_t marks[LIN_M_N][4]; /* launches by mark and evidence class */
};
const struct lin_xsummary *lin_explain_summary(const struct lin_explain *x);

void lin_explain_report_text(const struct lin_explain *x, FILE *out);
void lin_explain_report_json(const struct lin_explain *x, FILE *out);
/* Chrome/Perfetto trace-event JSON: one track per listed request, its critical launch's
 * statements as slices (unknown ones named "unknown: ...") and the kernel. 0, or -1 with
 * errno. */
int lin_explain_perfetto(const struct lin_explain *x, const char *path);

/* --per-request (requests.c, docs/serving.md): the report, in text or JSON; the requests
 * it lists; requests' GPU time + unattributed - total (0 unless the split is wrong). */
void lin_explain_per_request_text(const struct lin_explain *x, FILE *out);
void lin_explain_per_request_json(const struct lin_explain *x, FILE *out);
size_t lin_explain_rq_listed(const struct lin_explain *x);
/* A track per request: its time-to-first-token stretches as slices, its GPU time as a
 * counter. 0, or -1 with errno. */
int lin_explain_per_request_perfetto(const struct lin_explain *x, const char *path);
int64_t lin_explain_rq_residual(const struct lin_explain *x);
/* What the input says is missing: records dropped, launches without their GPU record, and
 * records whose duration counts nowhere (no start or end, or the total would overflow). */
void lin_explain_rq_missing(const struct lin_explain *x, uint64_t *dropped, uint64_t *launches,
			    uint64_t *untimed);
/* GPU records split among requests (0: nothing to report). */
uint64_t lin_explain_rq_attributed(const struct lin_explain *x);
/* --export-otlp (requests_otlp.c, docs/fleet.md "Per request"): a span per listed request
 * in its own trace under the validator's span of it, and a span per process for its
 * unattributed line, as OTLP/JSON to @path. Re-reads the lineage trace files of @v (their
 * headers, clock records, request begins and links, names) for what the export derives
 * ids and times from. 0, or -1 with @err (@n bytes) naming the file and what failed and
 * errno set (ENOMEM: out of memory). */
int lin_explain_per_request_otlp(const struct lin_explain *x, const struct lin_joiner *v,
				 const char *path, char *err, size_t n);

const char *lin_mark_name(enum lin_mark m);
const char *lin_how_name(enum lin_how h);
const char *lin_xcause_name(enum lin_xcause c);
const char *lin_evidence_name(enum lin_evidence e);

#endif
