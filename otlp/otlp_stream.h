/* SPDX-License-Identifier: MIT */
/*
 * otlp_stream.h - the runtime's OTLP stream (a tap: lin_otlp_tap, lineage/otlp.h):
 * the trace's own msgpack bytes, decoded again as the writer hands them out, become
 * OpenTelemetry spans written as OTLP/JSON documents (docs/fleet.md, "Streaming from the
 * runtime").
 *
 * A span is written when it ends: a request at request_end, an epoch or graph replay at
 * epoch_retire, a handoff or scope at scope_close, a GPU record when its external
 * correlation (or graph node origin) is known. Span and trace ids are those of
 * lineage-validate --export-otlp on the same trace. What is still open at the close is
 * written then, marked lineage.open; the process span and its events come last.
 *
 * Memory is bounded: ended requests and retired epochs are forgotten once written (a
 * retired epoch's trace id is kept LIN_OSTREAM_RETAIN_NS for its GPU records);
 * correlations and GPU records still waiting for theirs are kept LIN_OSTREAM_RETAIN_NS of
 * trace time, then a waiting record is written unjoined; at most LIN_OSTREAM_MAX_OPEN open
 * spans of each kind are kept (ends lost to dropped events would otherwise pile up), and
 * the latest LIN_OSTREAM_MAX_CLOCKS clock pairs at most.
 * Context: lin_ostream_feed is called with the runtime's output lock held and only copies
 * the bytes. Decoding and writing happen in lin_ostream_tick, outside that lock: on the
 * stream's own thread when the runtime has a writer thread (so the stream never slows the
 * trace down; a backlog over LIN_OSTREAM_MAX_BACKLOG is skipped and counted), else on the
 * caller's thread. Ticks are serialized by the stream's own lock.
 * Internal.
 */
#ifndef LIN_OTLP_STREAM_H
#define LIN_OTLP_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lineage/runtime.h"
#include "lineage/tap.h"

#define LIN_OSTREAM_RETAIN_NS (10ull * 1000000000ull)
#define LIN_OSTREAM_MAX_PENDING 65536 /* GPU records waiting; beyond, written unjoined */
#define LIN_OSTREAM_MAX_EVENTS 1024   /* process-span events kept; beyond, counted */
#define LIN_OSTREAM_MAX_RETAIN \
	65536 /* retired epochs and correlations kept: each; beyond,
					* the older half goes before its retention time */
#define LIN_OSTREAM_MAX_BACKLOG \
	(8u << 20) /* trace bytes waiting for a threaded stream;
					* beyond, pieces are skipped (counted) */
#define LIN_OSTREAM_MAX_HEAP \
	65536 /* host records waiting for the watermark; beyond,
					* the oldest go on (out of order, if at all) */
#define LIN_OSTREAM_MAX_CLOCKS \
	4096 /* clock pairs kept for the device-to-host map;
					* beyond, the older half goes */
#define LIN_OSTREAM_MAX_OPEN \
	16384 /* open requests, epochs, scopes: each; beyond, the
					* older half is written marked open and forgotten */

struct lin_ostream;

struct lin_ostream_opts {
	const char *path;         /* JSON Lines file (created or truncated), or NULL */
	lin_trace_write_fn write; /* or a callback: one whole document (line) per call */
	void *user;
	const char *service;    /* service.name, or NULL: $OTEL_SERVICE_NAME or "lineage" */
	int64_t unix_offset_ns; /* CLOCK_REALTIME - trace host clock */
	const lin_runtime *rt;  /* for its log */
	bool threaded;          /* decode and write on the stream's own thread */
};

/* Return: 0; -errno (the file cannot be opened); -ENOMEM. */
int lin_ostream_open(const struct lin_ostream_opts *o, struct lin_ostream **out);
/* Take @len more bytes of the trace (the header first), decoded at the next tick. Bytes
 * that do not decode stop the stream (logged once); the trace itself is not affected. */
void lin_ostream_feed(struct lin_ostream *s, const void *buf, size_t len);
/* Process the host records timed at or before @watermark (host ns: every event taken
 * before it has been fed) in time order, join waiting GPU records, write the spans ended
 * since the last tick as one document, and expire what waited too long. A threaded
 * stream does it on its own thread: the call only asks, and with @wait returns when it
 * is done. */
void lin_ostream_tick(struct lin_ostream *s, uint64_t watermark, bool wait);
/* Write everything still open, the process span, and free. */
void lin_ostream_close(struct lin_ostream *s);

/* fork(): lock before (after the runtime's own locks), unlock on both sides after; the
 * child then discards its copy (frees it, writes nothing: the stream is the parent's). */
void lin_ostream_fork_lock(struct lin_ostream *s);
void lin_ostream_fork_unlock(struct lin_ostream *s);
void lin_ostream_discard(struct lin_ostream *s);

struct lin_ostream_stats {
	uint64_t documents, spans, links, events;
	uint64_t gpu_joined, gpu_unjoined, bytes;
	uint64_t evicted;       /* open spans written early (LIN_OSTREAM_MAX_OPEN) */
	uint64_t dropped_bytes; /* trace bytes skipped: the backlog was full */
	int failed;             /* 0, or the error that stopped the stream */
};
void lin_ostream_stats(struct lin_ostream *s, struct lin_ostream_stats *st);

#endif
