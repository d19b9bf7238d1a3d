/* SPDX-License-Identifier: MIT */
/*
 * truth.h - lineage-validate's truth comparison (--expect; docs/validator.md,
 * "Classification"): a judge on the join layer (struct lin_join_judge, join/join.h). It
 * keeps the labels of the truth files the joiner reads, compares each GPU record's joined
 * requests with its label as the record resolves (matched, or the finding incorrect /
 * request_mismatch), and at the end of the run reports each label whose GPU record never
 * appeared (lost / no_gpu_record). Its findings and counts are the run's, in the summary.
 *
 * Use: t = lin_truth_create(); opts.judge = lin_truth_judge(t); lin_joiner_create(&opts);
 * lin_joiner_add_truth() for each truth file, then the traces; lin_joiner_finish();
 * lin_joiner_free(); lin_truth_free(t).
 * Context: single-threaded; one per joiner, which it must outlive.
 */
#ifndef LIN_VALIDATOR_TRUTH_H
#define LIN_VALIDATOR_TRUTH_H

#include "join.h"

struct lin_truth;

/* A judge with no label yet: NULL on ENOMEM. */
struct lin_truth *lin_truth_create(void);
void lin_truth_free(struct lin_truth *t);
/* The judge to put in lin_joiner_opts.judge (its arg is @t). */
struct lin_join_judge lin_truth_judge(struct lin_truth *t);

#endif
