/* SPDX-License-Identifier: MIT */
/*
 * kineto.h - lineage-validate --export-kineto: a lineage trace written as PyTorch-profiler
 * (Kineto) trace-event JSON, the way Kineto writes it, so that Kineto's readers (Holistic
 * Trace Analysis, TraceLens, TensorBoard's profiler view, lineage's own Kineto importer)
 * load it (docs/validator.md, "Kineto export").
 *
 * The exporter reads the trace again (trace/reader.c), keeps its runtime records in memory
 * (about 100 bytes each), maps device times to the host clock through the trace's clock
 * records (trace/clockmap.h) and writes one JSON document.
 * Context: single-threaded.
 */
#ifndef LIN_VALIDATOR_KINETO_H
#define LIN_VALIDATOR_KINETO_H

#include <stddef.h>
#include <stdint.h>

struct lin_kineto_stats {
	uint64_t annotations; /* user_annotation: requests and worker tasks */
	uint64_t ops;         /* cpu_op: launch sites */
	uint64_t runtime;     /* cuda_runtime and cuda_driver calls */
	uint64_t gpu;         /* kernel, gpu_memcpy, gpu_memset */
	uint64_t syncs;       /* cuda_sync */
	uint64_t event_waits; /* cuda_sync with wait_on_cuda_event_record_corr_id */
	uint64_t flows;       /* ac2g flow pairs */
	uint64_t unmapped;    /* GPU records without a start time: not written */
};

/*
 * lin_kineto_export - write the lineage trace @trace as Kineto JSON to @out_path. A trace
 * that stops early is exported up to the bad byte (the validation reports it).
 * Return: 0; -1 (not a lineage trace, or the output cannot be written: @err says why);
 * -2 (out of memory).
 */
int lin_kineto_export(const char *trace, const char *out_path, struct lin_kineto_stats *st,
		      char *err, size_t errlen);

#endif
