/* SPDX-License-Identifier: MIT */
/* What lineage_bench.c shares with the other files of lineage-bench (peers.c). */
#ifndef LIN_BENCH_COMMON_H
#define LIN_BENCH_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define BATCH 256

struct result {
	double median, p99;
};

extern bool quick;

uint64_t now_ns(void);
size_t nbatches(void);
/* Sorts @s in place; median and 99th percentile of the @n samples. */
struct result summarize(double *s, size_t n);
/* The host scheduling collector's cost (sched_bench.c). */
void sched_cases(void);
/* One SUMMARY line (and a JSON entry with --json). */
void report(const char *name, int threads, struct result r, const char *extra);
/* Time @nb batches of BATCH runs of @body; each batch's mean per run into @samples. @pre
 * runs untimed before each batch (b_ is the batch's index). */
#define TIME_BATCHES_PRE(nb, samples, pre, body) \
	do { \
		for (size_t b_ = 0; b_ < (nb); b_++) { \
			pre; \
			uint64_t t0_ = now_ns(); \
			for (int i_ = 0; i_ < BATCH; i_++) { \
				body; \
				__asm__ __volatile__("" ::: "memory"); \
			} \
			(samples)[b_] = (double)(now_ns() - t0_) / BATCH; \
		} \
	} while (0)
#define TIME_BATCHES(nb, samples, body) TIME_BATCHES_PRE(nb, samples, (void)0, body)

/* The median of the first case reported as @name with @threads; NAN when none was. */
double bench_median(const char *name, int threads);

/* peers.c: LTTng-UST, NVTX and the clock+ring floor; RATIO line against @whole_path_ns. */
void peer_cases(double whole_path_ns);

#endif
