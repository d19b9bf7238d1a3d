/* SPDX-License-Identifier: MIT */
/*
 * otlp_emit.h - OTLP/JSON ExportTraceServiceRequest writing, under the span model
 * (span_model.h) that the runtime's OTLP stream (otlp/) and lineage-validate --export-otlp
 * (validator/export/) drive; its JSON string encoder also serves lineage-validate's --json
 * report and Perfetto export.
 *
 * A writer builds one document in its own buffer and hands it, newline included, to its
 * sink when the document is closed (JSON Lines: {"resourceSpans":[...]} and a newline).
 * Ids are lowercase hex; 64-bit integers and times are decimal strings; enums are
 * integers, as the OTLP JSON encoding asks. A span is written in order: lin_oj_span_open,
 * attributes, lin_oj_events, events, lin_oj_links, links, lin_oj_span_close.
 * Context: single-threaded per writer. Internal: not part of the public API.
 */
#ifndef LIN_OTLP_EMIT_H
#define LIN_OTLP_EMIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "clockmap.h"

#define LIN_OJ_SPANS_PER_DOC 4096 /* spans per document: larger batches are split */

enum { LIN_OJ_KIND_INTERNAL = 1, LIN_OJ_KIND_SERVER = 2 };

struct lin_oj;
/* Writes the attributes of resource @res (the writer is inside its attribute list). */
typedef void (*lin_oj_resource_fn)(struct lin_oj *w, int res, void *user);
/* Receives one whole document (one line, '\n' included). Return 0 or a negative errno. */
typedef int (*lin_oj_sink_fn)(const char *doc, size_t len, void *user);

struct lin_oj {
	char *buf; /* the open document */
	size_t len, cap;
	int err; /* the first sink or allocation error (-errno), sticky */
	lin_oj_sink_fn sink;
	void *sink_user;
	const char *scope; /* instrumentation scope name */
	lin_oj_resource_fn resource;
	void *user;
	int res; /* resource now open, -1: none */
	bool in_doc, res_in_doc, first_span, first_item;
	size_t nspans; /* spans in the open document */
	uint64_t documents, spans, links, events;
};

void lin_oj_init(struct lin_oj *w, lin_oj_sink_fn sink, void *sink_user, const char *scope,
		 lin_oj_resource_fn resource, void *user);
/* Free the buffer (an open document is dropped: close it first). */
void lin_oj_free(struct lin_oj *w);

/* A quoted JSON string: well-formed UTF-8 passes as it is, each maximal ill-formed
 * subsequence becomes \ufffd, '"' and '\\' are escaped, controls become \u00XX. */
void lin_oj_str(struct lin_oj *w, const char *s, size_t n);
/* The same encoding written to @out (lineage-validate's --json report and Perfetto
 * export). */
void lin_oj_fstr(FILE *out, const char *s, size_t n);

/* Open a span of resource @res (opening a document or resource as needed). @parent 0: a
 * root span. @t1 < @t0 is written as @t0. */
void lin_oj_span_open(struct lin_oj *w, int res, const uint8_t trace[16], uint64_t span, uint64_t parent,
		      const char *name, size_t nlen, int kind, uint64_t t0, uint64_t t1);
void lin_oj_events(struct lin_oj *w);
void lin_oj_event_open(struct lin_oj *w, uint64_t t, const char *name);
void lin_oj_event_close(struct lin_oj *w);
void lin_oj_links(struct lin_oj *w);
void lin_oj_link(struct lin_oj *w, const uint8_t trace[16], uint64_t span, const char *why);
/* @error: the status message of an ERROR status, or NULL (status unset). */
void lin_oj_span_close(struct lin_oj *w, const char *error);
/* Close the open document and hand it to the sink; nothing when none is open.
 * Return: 0, or the writer's sticky error. */
int lin_oj_doc_close(struct lin_oj *w);

/* Attributes, inside a resource's, span's, event's or link's attribute list. */
void lin_oj_astr(struct lin_oj *w, const char *key, const char *s, size_t n);
void lin_oj_acstr(struct lin_oj *w, const char *key, const char *s);
void lin_oj_aint(struct lin_oj *w, const char *key, uint64_t v); /* LIN_NIL: left out */
void lin_oj_abool(struct lin_oj *w, const char *key, bool v);
void lin_oj_aints(struct lin_oj *w, const char *key, const uint64_t *v, size_t n);
void lin_oj_ahex(struct lin_oj *w, const char *key, uint64_t v);

/*
 * Span times on the Unix clock: one rule for the OTLP stream and lineage-validate
 * --export-otlp (docs/fleet.md, "Time"), applied by the span model (span_model.c: every
 * span time goes through these two; a driver only fills the clock). Host times move by unix_off (header start_unix_ns
 * - start_host_ns) when known, else onto the device clock through the clock map (its
 * inverse), else stay. Device times are host times when dev_host (header device_clock
 * "host"), else go to host time through the clock map (trace/clockmap.h: every clock
 * record's pair, as the validator maps them) when both are known, else are taken as
 * CUPTI's own clock, CLOCK_REALTIME: Unix time already. The map must be finished
 * (lin_cm_finish) before a time is converted.
 */
struct lin_oj_clock {
	int64_t unix_off;
	bool have_unix, dev_host;
	struct lin_clockmap map; /* owned: lin_oj_clock_free */
};
void lin_oj_clock_init(struct lin_oj_clock *c);
void lin_oj_clock_free(struct lin_oj_clock *c);
uint64_t lin_oj_host_unix(const struct lin_oj_clock *c, uint64_t host_ns); /* NIL: 0 */
uint64_t lin_oj_dev_unix(const struct lin_oj_clock *c, uint64_t dev_ns);   /* NIL: NIL */

#endif
