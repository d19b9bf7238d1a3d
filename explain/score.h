/* SPDX-License-Identifier: MIT */
/*
 * score.h - scoring of launch-delay attributions against a cause-truth file
 * (docs/attribution.md): the ledger's dominant cause, and two baselines computed from the
 * same ledgers, the Nsight Systems decomposition (API, queue, kernel; queue read as the
 * cause) and Holistic Trace Analysis' idle-time classes and launch statistics.
 *
 * Use: lin_score_create(); lin_score_load() the cause truth; build the ledgers with
 * lin_xopts.keep_all (every ledger kept); lin_score_add() them; lin_score_report().
 * Context: single-threaded.
 */
#ifndef LIN_EXPLAIN_SCORE_H
#define LIN_EXPLAIN_SCORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "explain.h"

/* LIN_SM_PEER: labels a peer tool wrote itself, read from a file (lin_score_load_peer);
 * scored only when loaded. */
enum lin_smethod { LIN_SM_LINEAGE = 0, LIN_SM_NSYS, LIN_SM_HTA, LIN_SM_PEER, LIN_SM_N };

/* What a method says held a launch back (docs/attribution.md, "Labels"). */
#define LIN_SLABELS(X) \
	X(UNKNOWN, "unknown") \
	X(BEFORE_DECLARE, "before_declare") \
	X(BEFORE_HANDOFF, "before_handoff") \
	X(HANDOFF_WAIT, "handoff_wait") \
	X(THREAD_DELAY, "thread_delay") \
	X(DESCHEDULED, "descheduled") \
	X(API_CALL, "api_call") \
	X(SUBMIT_DELAY, "submit_delay") \
	X(STREAM_DEPENDENCY, "stream_dependency") \
	X(EVENT_DEPENDENCY, "event_dependency") \
	X(GRAPH_DEPENDENCY, "graph_dependency") \
	X(DEPENDENCY, "dependency") \
	X(DEVICE_BUSY, "device_busy") \
	X(QUEUE, "queue") \
	X(HOST_WAIT, "host_wait") \
	X(KERNEL_WAIT, "kernel_wait")
#define LIN_SLABEL_ENUM(e, s) LIN_SL_##e,
enum lin_slabel { LIN_SLABELS(LIN_SLABEL_ENUM) LIN_SL_N };
#undef LIN_SLABEL_ENUM

/* HTA's defaults (hta/analyzers/breakdown_analysis.py, cuda_kernel_analysis.py):
 * consecutive_kernel_delay (an idle gap shorter is kernel_wait), runtime_cutoff and
 * launch_delay_cutoff (50 us and 100 us: longer runtime calls and launch delays are
 * outliers). */
#define LIN_HTA_KERNEL_WAIT_NS 30
/* The nsys reading: a kernel that started within this of a dependency's end (after its call
 * returned) followed it (the device's launch latency, lin_xopts.tie_ns's default). */
#define LIN_NSYS_FOLLOW_NS 2000
#define LIN_HTA_RUNTIME_CUTOFF_NS 50000
#define LIN_HTA_LAUNCH_DELAY_CUTOFF_NS 100000

struct lin_score;

struct lin_score *lin_score_create(void);
void lin_score_free(struct lin_score *s);
/*
 * Read the cause-truth file @path (header format "lineage-cause-truth", launch_cause
 * records only; the header names the process the labels are of). 0, or -1 with @err set (the file, the byte offset, the record and what
 * was expected); -ENOMEM. A second label for one (gpu_kind, key) makes both unusable:
 * counted, not scored.
 */
int lin_score_load(struct lin_score *s, const char *path, char *err, size_t errlen);
/* The same from memory (@data borrowed while it runs; @name in the messages). */
int lin_score_load_mem(struct lin_score *s, const char *name, const void *data, size_t size,
		       char *err, size_t errlen);
/*
 * Read a peer tool's labels (docs/attribution.md, "Peer labels"): text, one GPU record a
 * line, tab-separated: gpu_kind (22 kernel, 23 memcpy, 24 memset), key, correlation (or
 * -), label (a name of LIN_SLABELS), start_ns and end_ns of the stretch it blames (or -);
 * '#' lines are comments. @name names the method in the report (at most 15 characters,
 * [a-z0-9_-]). 0, or -1 with @err set (the file, the line and what was expected); -ENOMEM.
 * Call before lin_score_add().
 */
int lin_score_load_peer(struct lin_score *s, const char *name, const char *path, char *err, size_t errlen);
/* Label every ledger of @x that has a truth label, by every method: a label and a GPU record
 * match when their process (host, pid: @v's) and (gpu_kind, key) are equal. */
int lin_score_add(struct lin_score *s, const struct lin_explain *x, const struct lin_joiner *v);
/* Labels matched to a ledger; labels read; explained launches of the truth's process. A
 * label no launch matched is scored as unknown for every method. */
size_t lin_score_matched(const struct lin_score *s);
size_t lin_score_labels(const struct lin_score *s);
size_t lin_score_in_process(const struct lin_score *s);
/* The table and the SUMMARY lines (docs/attribution.md, "Output"); @tag names the
 * evidence lineage ran without ("" when none). Return what fprintf-ing failed (0: none). */
int lin_score_report(const struct lin_score *s, FILE *out, const char *tag);

/* The label method @m gives ledger @l, and the stretch [*start, *end] it blames. */
enum lin_slabel lin_score_label(enum lin_smethod m, const struct lin_xlaunch *l, uint64_t *start,
				uint64_t *end);
const char *lin_slabel_name(enum lin_slabel l);
const char *lin_smethod_name(enum lin_smethod m);

#endif
