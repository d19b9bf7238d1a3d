/* SPDX-License-Identifier: MIT */
/*
 * join.h - the join layer (docs/architecture.md, "Modules"): ingest trace files, rebuild
 * every join, classify each GPU record (observed, inferred, lost, ambiguous), and keep the
 * findings. The tools are peers on top of it: lineage-validate (validator/: the report,
 * the truth comparison, the exports) and lineage-explain (explain/: the ledger); the
 * importers (import/) feed it foreign traces.
 *
 * Use: lin_joiner_create() (with a judge, struct lin_join_judge, to compare the joins with
 * truth files: validator/truth.h); lin_joiner_add_truth() for each --expect file (all
 * truth files before the first trace: records are judged as they resolve);
 * lin_joiner_add_file() (or _add_mem()) for each trace; lin_joiner_finish();
 * then read lin_joiner_summary() and the getters below, or hand the joiner to a tool's
 * report (validator/report.h); lin_joiner_free().
 * Context: single-threaded; one joiner per run.
 */
#ifndef LIN_JOIN_JOIN_H
#define LIN_JOIN_JOIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Lost causes (docs/validator.md). */
#define LIN_CAUSES(X) \
	X(NO_EXTERNAL_CORRELATION, "no_external_correlation") \
	X(NO_API_RECORD, "no_api_record") \
	X(BEFORE_TRACE_START, "before_trace_start") \
	X(DROPPED_RECORDS, "dropped_records") \
	X(DEVICE_LAUNCHED_GRAPH, "device_launched_graph") \
	X(UNKNOWN_LAUNCH_API, "unknown_launch_api") \
	X(STALE_TOKEN, "stale_token") \
	X(UNKNOWN_GRAPH_NODE, "unknown_graph_node") \
	X(UNKNOWN_EPOCH, "unknown_epoch") \
	X(NO_CORRELATION, "no_correlation") \
	X(CORRELATION_REUSED, "correlation_reused") \
	X(NO_GPU_RECORD, "no_gpu_record") \
	X(GRAPH_REPLAY, "graph_replay") \
	X(NO_ENCLOSING_OP, "no_enclosing_op") \
	X(NO_OP_LAYER, "no_op_layer") \
	X(REPLAY_OUTSIDE_LINEAGE, "replay_outside_lineage") \
	X(BRACKET_END_UNKNOWN, "bracket_end_unknown") \
	X(NO_CLOCK_RECORD, "no_clock_record") \
	X(CLOCK_UNCERTAINTY, "clock_uncertainty") \
	X(CORRELATION_MISMATCH, "correlation_mismatch") \
	X(MAYBE_CAPTURED, "maybe_captured") \
	X(NO_PID, "no_pid") \
	X(FOREIGN_PROCESS, "foreign_process")

#define LIN_CAUSE_ENUM(e, s) LIN_CAUSE_##e,
enum lin_cause { LIN_CAUSES(LIN_CAUSE_ENUM) LIN_CAUSE_N };
#undef LIN_CAUSE_ENUM

/* Inference rules (docs/validator.md, "Inference rules"; the last two are the importers',
 * docs/importers.md). Graph node origin is provenance, never a join on its own: it has no
 * rule. */
enum lin_rule {
	LIN_RULE_TIME_CONTAINMENT,
	LIN_RULE_EXTERNAL_ID_IS_CORRELATION,
	LIN_RULE_GRAPH_LAUNCH_ENCLOSING_OP,
	LIN_RULE_N
};

/* Why the bracket check could not check a call (docs/validator.md, "The bracket check"). */
enum lin_unchecked {
	LIN_UNCHK_NO_CLOCK_BOUND,    /* device times not on the host clock, no bound on the map */
	LIN_UNCHK_NO_CLOCK_RECORD,   /* no clock record maps the call's device times */
	LIN_UNCHK_NO_API_TIMES,      /* the API record has no times, or its ext is ambiguous */
	LIN_UNCHK_DROPPED_BRACKETS,  /* brackets it may lie in were dropped or came unordered */
	LIN_UNCHK_CLOCK_UNCERTAINTY, /* within the clock map's error of a bracket's edge */
	LIN_UNCHK_BRACKET_UNCLOSED,  /* a bracket that may hold it has no known end */
	LIN_UNCHK_LIMIT,             /* more calls waiting than the joiner keeps */
	LIN_UNCHK_NO_THREAD_IDS,     /* its API records carry CUPTI's thread ids, not gettid() */
	LIN_UNCHK_N
};
const char *lin_unchecked_name(enum lin_unchecked u);

/*
 * How far a GPU record's chain reaches (docs/validator.md, "Join levels"): none (no API
 * record), the API call, a launch bracket or op around it, an epoch, a request. Each GPU
 * record is counted once, at the deepest level it reaches, whatever its classification.
 */
#define LIN_LEVELS(X) \
	X(NONE, "none") \
	X(API_CALL, "api_call") \
	X(OP, "op") \
	X(EPOCH, "epoch") \
	X(REQUEST, "request")
#define LIN_LEVEL_ENUM(e, s) LIN_LEVEL_##e,
enum lin_level { LIN_LEVELS(LIN_LEVEL_ENUM) LIN_LEVEL_N };
#undef LIN_LEVEL_ENUM

struct lin_join_summary {
	uint64_t records, gpu_records;
	uint64_t observed, inferred, lost, ambiguous, incorrect;
	uint64_t lost_by_cause[LIN_CAUSE_N];
	uint64_t inferred_by_rule[LIN_RULE_N];
	uint64_t joined_by_level[LIN_LEVEL_N];
	/* With truth (counted by the judge, validator/truth.c): the matched and the incorrect
	 * joins, by the level each reached (an epoch that names no request never matches a
	 * label: it is incorrect at "epoch"). */
	uint64_t matched_by_level[LIN_LEVEL_N], incorrect_by_level[LIN_LEVEL_N];
	uint64_t duplicates;        /* GPU records read twice (not classified again) */
	uint64_t captured_launches; /* launch APIs made while a stream capture was open, with no
				     * GPU record: not held to one (they may have been captured) */
	uint64_t bracket_checked;   /* API calls under a pushed id found inside its bracket */
	uint64_t bracket_unchecked; /* ... that could not be checked (docs/validator.md) */
	uint64_t bracket_unchecked_by[LIN_UNCHK_N]; /* ... by reason (enum lin_unchecked) */
	uint64_t structural, notes, findings;
	uint64_t dropped; /* events and CUPTI records reported lost by dropped records */
	uint64_t truth_records, matched;
	/* Late work (docs/validator.md, "Late work"), by enum lin_late ([0] unused): adopts
	 * and launch brackets the runtime marked late, and the GPU records joined through
	 * them (to the requests of the version they name). */
	uint64_t late_adopts, late_launches[3], joined_late[3];
	bool have_truth;
	uint64_t bytes, launches;
	unsigned files, file_errors;
};

/* lin_gpu_verdict.proc of a GPU record an importer read (--from kineto|nsys). */
#define LIN_VPROC_IMPORTED 0xffffu

/* A GPU record's classification, as handed to lin_joiner_opts.on_gpu. */
enum lin_join {
	LIN_JOIN_NONE,
	LIN_JOIN_OBSERVED,
	LIN_JOIN_INFERRED,
	LIN_JOIN_LOST,
	LIN_JOIN_AMBIGUOUS
};

struct lin_gpu_verdict {
	uint64_t offset; /* the GPU record's byte offset in its trace file; of an imported
			  * file (proc LIN_VPROC_IMPORTED): its event index (lin_imp_ev.index) */
	uint64_t epoch;  /* the joined epoch (observed, inferred; imported: the op's event
			  * index), else UINT64_MAX */
	const char *why; /* inferred: the rule (lin_rule_name()); lost, ambiguous:
				     * the finding's cause; observed: NULL. Static storage. */
	uint32_t file;   /* the file's index: the order of lin_joiner_add_*()
				     * calls, truth files included */
	enum lin_join join;
	enum lin_level level; /* how far the chain reaches */
	/* Observed, inferred: the requests the joined epoch names (or the request the join
	 * ended on), valid during the call only; nreqs 0 otherwise. */
	const uint64_t *reqs;
	uint32_t nreqs;
	uint16_t proc; /* the process's index (lin_join_tool.rec's proc), LIN_VPROC_IMPORTED */
	uint8_t late;  /* observed, inferred: enum lin_late of the launch it joined through */
	/* What a judge (struct lin_join_judge) knows the record by; 0 of an imported record. */
	uint8_t kind;   /* its record type (LIN_REC_KERNEL, _MEMCPY, _MEMSET, _GRAPH_TRACE) */
	bool keyed;     /* it has a truth key (docs/trace-format.md, truth files) */
	uint64_t key;   /* that key: a kernel's grid id, else its start_dev (keyed only) */
	uint64_t corr;  /* its correlation id (0: none) */
	uint64_t index; /* its record index in its file */
};

struct lin_rec;
struct lin_imp;

/*
 * struct lin_join_tool - what a tool built on the join layer is handed as the joiner
 * works (as perf hands its tools decoded samples): every member optional (NULL: no call),
 * each given @arg. None may call into the joiner (a judge may: struct lin_join_judge).
 * The report, summary and exit status are the same with or without a tool.
 * @gpu: once for every GPU record as it is classified (in resolution order, not file
 *   order), whatever max_findings says; for imported files (--from) too, keyed by event
 *   index. The verdict only.
 * @rec: every record of a lineage trace file (not of truth files) as it is read, with its
 *   file index and its process's index, before the joiner acts on it.
 * @model: for each file an importer read (--from kineto|nsys), once with its joined event
 *   model after the joins.
 */
struct lin_join_tool {
	void *arg;
	void (*gpu)(void *arg, const struct lin_gpu_verdict *vd);
	void (*rec)(void *arg, uint32_t file, uint16_t proc, const struct lin_rec *r);
	void (*model)(void *arg, uint32_t file, const struct lin_imp *m);
};

struct lin_joiner;

/*
 * struct lin_join_judge - what judges the joins against something the traces do not hold:
 * lineage-validate's truth files (--expect; validator/truth.h). Every member optional
 * (NULL: no call), each given @arg and the joiner. Unlike a tool's, a judge's calls may
 * add to the run, through the feed API (join/feed.h: lin_joiner_feed_finding,
 * lin_joiner_feed_summary, lin_joiner_feed_oom), and read it through the getters below;
 * nothing else. What it adds is reported and counted in the exit status as the joiner's.
 * @truth: every truth record of a truth file (lin_joiner_add_truth) as it is read, with
 *   the file's index and its process's index (the trace files of that process get the
 *   same); records of other types in a truth file are the joiner's (unknown_record_type).
 * @judge: once for every GPU record of a lineage trace as it is classified, in resolution
 *   order, after the tool's @gpu and the joiner's own finding on it (lost, ambiguous).
 * @finish: once in lin_joiner_finish(), after the launch accounting and the end-of-run
 *   structural findings on adopts and strings, before the empty-run and trace_end checks
 *   (lin_joiner_launch_counted_lost() answers from then on).
 */
struct lin_join_judge {
	void *arg;
	void (*truth)(void *arg, struct lin_joiner *v, uint32_t file, uint16_t proc,
		      const struct lin_rec *r);
	void (*judge)(void *arg, struct lin_joiner *v, const struct lin_gpu_verdict *vd);
	void (*finish)(void *arg, struct lin_joiner *v);
};

struct lin_joiner_opts {
	size_t max_findings; /* findings kept for the report (all are counted) */
	struct lin_join_tool tool;
	/* A run with no GPU record exits 0 when nothing else is wrong (--allow-empty);
	 * by default it is the finding no_gpu_records (exit 1). */
	bool allow_empty;
	struct lin_join_judge judge; /* none: truth files are read, their labels unused */
};

/* A finding (docs/validator.md, "Findings"): a record lost, ambiguous or incorrect with
 * its cause, a structural fault, a loss, a misuse, a note. */
#define LIN_MAX_IDS 6
#define LIN_MAX_CAND 8
struct lin_finding {
	const char *kind, *cause; /* static storage */
	uint32_t file;            /* the file's index (lin_joiner_add_* order) */
	uint64_t offset, index;   /* the record's byte offset and index in its file */
	int nids, ncand;
	const char *idname[LIN_MAX_IDS];
	uint64_t id[LIN_MAX_IDS];
	uint64_t cand[LIN_MAX_CAND]; /* ambiguous: the candidates (the first LIN_MAX_CAND) */
	char detail[384];            /* why, in words ("" when the cause says it all) */
};

/* A file of the run, as read: truth and trace files, in lin_joiner_add_* order. */
struct lin_jfile {
	char *name;
	uint64_t size, records;
	char err[512]; /* the first error ("": none) */
	uint64_t err_off;
	bool failed, truncated, truth;
	bool ended; /* a trace_end record was read */
};

struct lin_joiner *lin_joiner_create(const struct lin_joiner_opts *opts);
void lin_joiner_free(struct lin_joiner *v);
/* Return 0, -1 when the file is unreadable/malformed (recorded, reported, exit 2),
 * -2 on ENOMEM. */
int lin_joiner_add_file(struct lin_joiner *v, const char *path);
int lin_joiner_add_mem(struct lin_joiner *v, const char *name, const void *data, size_t n);
/* Truth files come before every trace, and need a judge (lin_joiner_opts.judge, with its
 * truth and judge members): one added after a trace, or to a joiner without a judge, is
 * refused (-1, recorded as a file error, exit 2), never read and compared with nothing.
 * The joiner reads each (its header names its process) and hands its labels to the
 * judge, which compares them. */
int lin_joiner_add_truth(struct lin_joiner *v, const char *path);
int lin_joiner_add_truth_mem(struct lin_joiner *v, const char *name, const void *data, size_t n);
void lin_joiner_finish(struct lin_joiner *v);
const struct lin_join_summary *lin_joiner_summary(const struct lin_joiner *v);
/* 0, 1 or 2 as documented in lineage-validate --help. */
int lin_joiner_exit_code(const struct lin_joiner *v);
/* First file error message ("" when none), its byte offset and file name. */
const char *lin_joiner_error(const struct lin_joiner *v, uint64_t *offset, const char **file);
/* Device time @dev of process @proc on the host clock, through its clock records (after
 * lin_joiner_finish); *err: the mapping's error bound in ns (clock pair width plus
 * drift; 0 with device_clock "host"). false: the process has no clock mapping. */
bool lin_joiner_dev_to_host(const struct lin_joiner *v, uint16_t proc, uint64_t dev, uint64_t *host,
			    uint64_t *err);
/* The files of the run (lin_joiner_add_* order; importers' files too), and file @i (NULL
 * past the end). */
unsigned lin_joiner_nfiles(const struct lin_joiner *v);
const struct lin_jfile *lin_joiner_file(const struct lin_joiner *v, unsigned i);
/* The findings kept (lin_joiner_opts.max_findings; the summary counts them all), in the
 * order they were found, and finding @i (NULL past the end). */
size_t lin_joiner_nfindings(const struct lin_joiner *v);
const struct lin_finding *lin_joiner_finding(const struct lin_joiner *v, size_t i);
/* Whether the join engine ran out of memory (its joins are then incomplete). */
bool lin_joiner_oom(const struct lin_joiner *v);
/* What process @proc's traces reported lost: LIN_LOST_HOST (host events, dropped source 1),
 * LIN_LOST_CUPTI (CUPTI records, sources 2-7), or 0. */
#define LIN_LOST_HOST 1u
#define LIN_LOST_CUPTI 2u
unsigned lin_joiner_proc_losses(const struct lin_joiner *v, uint16_t proc);
/* Process @proc's pid and host, as its trace headers say (@host lives as long as @v).
 * false: no such process. */
bool lin_joiner_proc_id(const struct lin_joiner *v, uint16_t proc, uint64_t *pid, const char **host);
/* Whether the launch API call @corr of process @proc was counted lost for want of its GPU
 * record (launch accounting: no_gpu_record, maybe_captured or dropped_records; a call made
 * on the capturing thread during a capture is not). From lin_join_judge.finish on. */
bool lin_joiner_launch_counted_lost(const struct lin_joiner *v, uint16_t proc, uint64_t corr);
/* The shares an epoch_share record (format 1.5) gave epoch @epoch of process @proc, when
 * they held (ingest.c: none of the structural findings on them), packed (LIN_SHARE_PACK)
 * and parallel to the epoch's requests, which *@reqs points at (*@n of both); NULL when
 * the epoch has none, is unknown, or its shares are in doubt. Valid until the joiner is
 * freed. */
const uint64_t *lin_joiner_epoch_shares(const struct lin_joiner *v, uint16_t proc, uint64_t epoch,
					const uint64_t **reqs, uint32_t *n);
/* The epoch whose shares that held first gave request @req of process @proc its first
 * token, in file order (later ones are duplicate_first_token findings); UINT64_MAX: none. */
uint64_t lin_joiner_first_token(const struct lin_joiner *v, uint16_t proc, uint64_t req);
/*
 * lin_verdict_line - one line of a verdict listing (lineage-validate and lineage-explain
 * --verdicts; docs/validator.md, "Verdicts"): FILE, KEY (byte offset; imported: event
 * index), class, the rule or cause ("-": none), and the requests in ascending order
 * (comma-separated, "-": none) or, for an imported record, "op:" and the op's event index
 * (@op; UINT64_MAX: a lineage record), tab-separated.
 */
void lin_verdict_line(FILE *out, const char *file, uint64_t key, enum lin_join join,
		      const char *why, uint64_t op, const uint64_t *reqs, uint32_t nreqs);
const char *lin_cause_name(enum lin_cause c);
const char *lin_rule_name(enum lin_rule r);
const char *lin_level_name(enum lin_level l);

#endif
