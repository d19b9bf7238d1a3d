/* SPDX-License-Identifier: MIT */
/*
 * feed.h - how a reader of foreign traces feeds the join layer (import/: Kineto, Nsight
 * Systems; docs/importers.md). A feeder adds its files, makes its own joins, and puts its
 * classifications where the joiner's own go: the summary's counts, the findings, a verdict
 * for the tool (struct lin_join_tool), its joined model for the tool. It never reads or
 * writes the joiner's state otherwise. A judge (struct lin_join_judge: the truth
 * comparison, validator/truth.c) adds its findings and counts through the same calls.
 * Context: the joiner's thread, before lin_joiner_finish(), or from a judge's callbacks
 * (lin_joiner_finish() calls its finish).
 */
#ifndef LIN_JOIN_FEED_H
#define LIN_JOIN_FEED_H

#include <stdbool.h>
#include <stdint.h>

#include "join.h"

struct lin_imp;

/* Add a file named @name (copied): its index, or -1 (out of memory: the joiner says so). */
int lin_joiner_feed_file(struct lin_joiner *v, const char *name);
/* File @fi, to fill as it is read (NULL past the end). */
struct lin_jfile *lin_joiner_feed_fileat(struct lin_joiner *v, unsigned fi);
/* The counts a feeder adds its records, joins and errors to. */
struct lin_join_summary *lin_joiner_feed_summary(struct lin_joiner *v);
/* Count a finding and keep it (up to max_findings; @names static): the one kept, for its
 * detail, or NULL. */
struct lin_finding *lin_joiner_feed_finding(struct lin_joiner *v, const char *kind, const char *cause,
					    uint32_t file, uint64_t offset, uint64_t index,
					    int nids, const char *const *names, const uint64_t *ids);
/* Hand a verdict, and a file's joined model, to the joiner's tool (none: nothing). */
void lin_joiner_feed_verdict(struct lin_joiner *v, const struct lin_gpu_verdict *vd);
void lin_joiner_feed_model(struct lin_joiner *v, uint32_t fi, const struct lin_imp *m);
/* The feeder ran out of memory: the run's joins are incomplete (lin_joiner_oom). */
void lin_joiner_feed_oom(struct lin_joiner *v);
/* Whether a run with no GPU record is allowed (lin_joiner_opts.allow_empty). */
bool lin_joiner_allow_empty(const struct lin_joiner *v);
/* Why the run has no GPU record, in words, for the no_gpu_records finding (copied, cut at
 * 191 bytes). */
void lin_joiner_feed_empty_why(struct lin_joiner *v, const char *why);

#endif
