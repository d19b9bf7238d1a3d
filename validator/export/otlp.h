/* SPDX-License-Identifier: MIT */
/*
 * otlp.h - lineage-validate --export-otlp: lineage trace files as OpenTelemetry spans,
 * written as OTLP/JSON ExportTraceServiceRequest documents (docs/fleet.md).
 *
 * The exporter reads the trace files again (trace/reader.c) into an in-memory span
 * model (otlp_model.c), runs its own validator over them to learn every finding (lost,
 * ambiguous, loss, misuse, structural; the report's --max-findings does not limit it), and
 * writes the spans (otlp_json.c). Memory grows with the records of the run: the export is
 * an offline step, not part of the streaming validation.
 * Context: single-threaded.
 */
#ifndef LIN_VALIDATOR_OTLP_H
#define LIN_VALIDATOR_OTLP_H

#include <stdint.h>
#include <stdio.h>

struct lin_otlp_stats {
	uint64_t documents; /* ExportTraceServiceRequest documents (lines) */
	uint64_t resources; /* processes */
	uint64_t spans, links, events;
	uint64_t remote_requests; /* requests begun from a received traceparent */
	uint64_t remote_joined;   /* ... whose parent span is in another input process */
	uint64_t cross_gpu;       /* GPU records joined to a request begun in another process */
};

/* Spans per document: larger runs are split into several lines. */
#define LIN_OTLP_SPANS_PER_DOC 4096

/*
 * lin_otlp_export - export the traces @files[0..@n) to @out_path (JSON Lines: one
 * ExportTraceServiceRequest per line). Files that stop early are exported up to the bad
 * byte (the validator reports them). @err receives a message on failure.
 * Return: 0; -1 (the output cannot be written: @err says why); -2 (out of memory).
 */
int lin_otlp_export(const char *const *files, int n, const char *out_path,
		    struct lin_otlp_stats *st, char *err, size_t errlen);

#endif
