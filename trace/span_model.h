/* SPDX-License-Identifier: MIT */
/*
 * span_model.h - the one span model of lineage's OpenTelemetry output (docs/fleet.md, "OTLP
 * export"): the spans a trace makes (process, request, epoch or graph replay, handoff or
 * scope, kernel/memcpy/memset), their ids, parents, links, attributes, events and status,
 * and their times on the Unix clock, written through the OTLP/JSON writer (otlp_emit.h).
 *
 * Two drivers fill the values: the runtime's stream (otlp/spans.c: records as they arrive)
 * and lineage-validate --export-otlp (validator/export/otlp_json.c: its model of whole
 * trace files, with the validator's verdicts). A driver decides what a record joins to
 * (which request or epoch is a known span, the trace id, the GPU record's verdict); the
 * model derives every span id, parent span id and time from that, the same way for both.
 * Where the drivers write something different for the same record, the difference is a
 * flag of the process (enum lin_sp_flags), never a second copy of the span.
 *
 * Times: a driver hands host and device times as the trace has them; the model moves them
 * to Unix time through the process's struct lin_oj_clock (lin_oj_host_unix,
 * lin_oj_dev_unix: the one clock mapping, otlp_emit.h). A driver that needs a Unix time
 * itself (an event's) asks lin_sp_host_unix.
 * Context: single-threaded per writer. Internal: not part of the public API.
 */
#ifndef LIN_SPAN_MODEL_H
#define LIN_SPAN_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "otlp_emit.h"

/* What the stream writes differently from the export (docs/fleet.md, "How it differs from
 * the export"); the export sets none. */
enum lin_sp_flags {
	/* GPU spans carry lineage.trace.offset (the export names the offset in the events of
	 * its findings instead). */
	LIN_SP_GPU_OFFSET = 1u << 0,
	/* lineage.epoch.requests lists at most the first LIN_SP_STREAM_EPOCH_REQS ids (the fan-in
	 * links still name every request). */
	LIN_SP_EPOCH_REQS_CAP = 1u << 1,
	/* With no host time seen, the process's times (and a GPU span's without a device time)
	 * are host time 0 on the Unix clock; without the flag, Unix time 0. */
	LIN_SP_EMPTY_AT_HOST_ZERO = 1u << 2,
	/* A request begun from a traceparent carries lineage.remote.joined (the export sees every
	 * input process, so it knows whether the remote parent is one of them). */
	LIN_SP_REMOTE_JOINED = 1u << 3,
};

#define LIN_SP_STREAM_EPOCH_REQS 64

/* The driver's events of a span, between its attributes and its links; @t0, @t1: the span's
 * start and end (Unix ns). NULL: no events. */
typedef void (*lin_sp_events_fn)(void *user, struct lin_oj *w, uint64_t t0, uint64_t t1);

/* One process: its resource and what every span of it needs. */
struct lin_sp_proc {
	struct lin_oj *w;
	const struct lin_oj_clock *clk; /* its times to Unix time */
	int res;                        /* its resource in w */
	uint64_t key;                   /* lin_w3c_proc_key(host, pid): span and trace ids */
	uint64_t tmin, tmax;            /* host times seen; tmin LIN_NIL: none */
	const char *host, *backend, *service, *host_clock;
	uint64_t pid;
	const uint32_t *dev; /* devices seen, lineage.device.ids (ndev 0: left out) */
	uint32_t ndev;
	unsigned flags; /* enum lin_sp_flags */
};

struct lin_sp_process {
	uint64_t events_dropped; /* lineage.events.dropped (0: left out) */
	uint64_t skipped_bytes;  /* lineage.stream.skipped_bytes (0: left out) */
	lin_sp_events_fn events;
	void *user;
};

/* A name: @name of @nlen bytes; NULL or empty: the span kind's default. */
struct lin_sp_request {
	uint64_t id, begin, end, user_id, tid;
	uint64_t parent;  /* the parent request, a span of this process; LIN_NIL: none */
	uint64_t rparent; /* remote: the received parent span id */
	const uint8_t *trace;
	const char *name;
	size_t nlen;
	bool open;   /* never ended: @end is the process's last host time */
	bool remote; /* begun from a received traceparent: a SERVER span under @rparent */
	bool joined; /* remote: @rparent is a span of another input process */
};

struct lin_sp_epoch {
	uint64_t id, begin, end, version, reissues, tid;
	uint64_t exec, ordinal; /* graph replay; exec LIN_NIL: not one */
	/* the parent: the parent epoch, else the first request, each only when a span of this
	 * process (LIN_NIL: not one), else the process span */
	uint64_t parent_epoch, first_req;
	const uint8_t *trace;
	const char *name;
	size_t nlen;
	const uint64_t *reqs; /* the requests it serves, in order */
	uint32_t nreq;
	/* the trace of reqs[@i] (i >= 1), for the fan-in links */
	void (*req_trace)(const void *user, uint32_t i, uint8_t out[16]);
	const void *user;
	bool open;
};

struct lin_sp_adopt {
	uint64_t begin, end, tid, depth, capture_tid, target;
	uint32_t kind;        /* LIN_TARGET_REQUEST or _EPOCH */
	const uint8_t *trace; /* the target's; NULL: the target is no span (the process's) */
	bool closed;
};

struct lin_sp_gpu {
	uint64_t offset; /* byte offset of the record in its file: the span id, with @file */
	uint32_t file;
	uint8_t kind;         /* LIN_REC_KERNEL, _MEMCPY, _MEMSET */
	uint64_t start, end;  /* device ns, LIN_NIL: unknown */
	uint64_t parent;      /* the request or epoch it joins (a span of this process) */
	const uint8_t *trace; /* @parent's trace; NULL: joins none (under the process span) */
	const char *name;     /* kernel name */
	size_t nlen;
	const char *join, *rule; /* lineage.join and lineage.join.rule; NULL: left out */
	const char *status;      /* the message of an ERROR status; NULL: unset */
	uint64_t device, context, stream, corr, graph, node, bytes; /* LIN_NIL: left out */
	bool cross_process;
	lin_sp_events_fn events;
	void *user;
};

/* The resource attributes of @p (a lin_oj_resource_fn's body). */
void lin_sp_resource(const struct lin_sp_proc *p);
/* The span of each. */
void lin_sp_process(const struct lin_sp_proc *p, const struct lin_sp_process *v);
void lin_sp_request(const struct lin_sp_proc *p, const struct lin_sp_request *v);
void lin_sp_epoch(const struct lin_sp_proc *p, const struct lin_sp_epoch *v);
void lin_sp_adopt(const struct lin_sp_proc *p, const struct lin_sp_adopt *v);
void lin_sp_gpu(const struct lin_sp_proc *p, const struct lin_sp_gpu *v);

/* A request name "w3c:00-<32 hex>-<16 hex>-<2 hex>[ name]" (@len bytes): how writers of
 * trace format 1.0 recorded a request begun from a received traceparent (1.1 writes a
 * request_link record). true: *@trace and *@parent hold its trace id and parent span id
 * (neither zero); false: not such a name (nothing written). */
bool lin_sp_w3c_name(const char *s, size_t len, uint8_t trace[16], uint64_t *parent);

/* A host time of @p on the Unix clock (LIN_NIL: 0). */
uint64_t lin_sp_host_unix(const struct lin_sp_proc *p, uint64_t host_ns);

#endif
