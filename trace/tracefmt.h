/* SPDX-License-Identifier: MIT */
/*
 * tracefmt.h - msgpack encoders for every trace record (docs/trace-format.md).
 *
 * Internal to the library and to the project's own generators (fixtures, synthetic
 * workloads); never installed. Each encoder packs exactly one object into @pk. Optional
 * fields take LIN_NIL (or NULL for strings) to mean "unknown" and are written as nil.
 * Context: any thread; no allocation beyond what @pk's write callback does.
 */
#ifndef LINEAGE_TRACEFMT_H
#define LINEAGE_TRACEFMT_H

#include <stdbool.h>
#include <stdint.h>
#include <msgpack.h>

#include "lineage/trace_format.h"
#include "records.h"

/* One encoder a record, expanded from records.def: v[LIN_F_<RECORD>_<FIELD>] holds each
 * field's value (as the field's encoding says: a LIN_NIL or 0 that means nil), @x the
 * record's str or array field (NULL when it has none). */
#define LIN_RECORD(R, name) \
	void lin_tf_rec_##name(msgpack_packer *pk, const uint64_t *v, const struct lin_tf_var *x);
#define LIN_FIELD(R, F, name, type, enc)
#define LIN_SINCE(R)
#define LIN_END(R)
#include "records.def"
#undef LIN_RECORD
#undef LIN_FIELD
#undef LIN_SINCE
#undef LIN_END

/* The named encoders below take each field as an argument. */

struct lin_tf_header {
	const char *format; /* LIN_TRACE_FORMAT_NAME or LIN_TRUTH_FORMAT_NAME */
	const char *writer; /* "liblineage 0.1.0" */
	const char *host;
	uint64_t pid;
	uint64_t start_host_ns;
	const char *host_clock_source; /* "tsc" or "clock_gettime" */
	double tsc_hz;                 /* <= 0: nil */
	uint32_t ext_kind;
	const char *backend;      /* "none", "cupti", "custom", "attach" */
	const char *cupti;        /* NULL: nil */
	const char *device_clock; /* "cupti" (NULL) or "host": docs/trace-format.md */
	uint64_t start_unix_ns;   /* CLOCK_REALTIME at start_host_ns; 0: not written */
};

struct lin_tf_kernel {
	uint64_t correlation, start_dev, end_dev; /* 0 correlation / start / end: nil */
	uint32_t device, context, stream;
	uint64_t grid_id, graph_id, graph_node_id; /* 0: nil */
	uint64_t name_sid;                         /* 0: nil */
	uint64_t queued_dev, submitted_dev;        /* 0: nil */
	bool device_launched;
};

struct lin_tf_memop {                             /* memcpy and memset */
	uint64_t correlation, start_dev, end_dev; /* 0: nil */
	uint32_t device, context, stream;
	uint64_t bytes;
	uint32_t kind_or_value;           /* memcpy: copy_kind; memset: value */
	uint64_t graph_id, graph_node_id; /* 0: nil */
};

struct lin_tf_api {
	uint32_t domain;             /* enum lin_api_domain */
	uint64_t cbid;               /* LIN_NIL for internal launches */
	uint64_t correlation;        /* 0: nil */
	uint64_t start_dev, end_dev; /* 0: nil */
	uint32_t pid, tid;
	int64_t return_value;
};

void lin_tf_header(msgpack_packer *pk, const struct lin_tf_header *h);
void lin_tf_string(msgpack_packer *pk, uint64_t sid, const char *text, size_t len);
void lin_tf_ext_correlation(msgpack_packer *pk, uint32_t ext_kind, uint64_t external_id,
			    uint64_t correlation);
void lin_tf_api(msgpack_packer *pk, const struct lin_tf_api *a);
void lin_tf_kernel(msgpack_packer *pk, const struct lin_tf_kernel *k);
void lin_tf_memcpy(msgpack_packer *pk, const struct lin_tf_memop *m);
void lin_tf_memset(msgpack_packer *pk, const struct lin_tf_memop *m);
void lin_tf_graph_trace(msgpack_packer *pk, uint64_t correlation, uint64_t start_dev, uint64_t end_dev,
			uint32_t device, uint32_t context, uint32_t stream, uint64_t graph_id);
/* host_ns, tid, epoch, version: LIN_NIL when unknown. */
void lin_tf_graph_node(msgpack_packer *pk, uint64_t host_ns, uint64_t tid, uint64_t graph_id,
		       uint64_t node_id, uint64_t epoch, uint64_t version, uint32_t origin);
void lin_tf_graph_node_clone(msgpack_packer *pk, uint64_t original, uint64_t clone,
			     uint64_t graph_id, uint64_t exec_id);
void lin_tf_graph_exec(msgpack_packer *pk, uint64_t host_ns, uint64_t tid, uint64_t graph_id,
		       uint64_t exec_id);
void lin_tf_graph_launch(msgpack_packer *pk, uint64_t host_ns, uint64_t tid, uint64_t exec_id,
			 uint64_t replay_epoch, uint64_t ordinal, uint64_t epoch, uint64_t version,
			 uint64_t correlation);
void lin_tf_graph_node_update(msgpack_packer *pk, uint64_t host_ns, uint64_t tid, uint64_t node_id,
			      uint64_t epoch, uint64_t version);
void lin_tf_dropped(msgpack_packer *pk, uint32_t source, uint64_t count, uint64_t tid, const char *reason);
/* A clock pair: host time read before the device time, and after it (LIN_NIL: not
 * read); host_after_ns - host_ns bounds the pair's error. */
void lin_tf_clock(msgpack_packer *pk, uint64_t host_ns, uint64_t device_ns, uint64_t host_after_ns);
/* A cudaEventRecord (since 1.3); sync_id LIN_NIL: nil. */
void lin_tf_cuda_event(msgpack_packer *pk, uint64_t correlation, uint32_t device, uint32_t context,
		       uint32_t stream, uint64_t event, uint64_t sync_id);
/* A synchronization (since 1.3): start/end, stream, event, sync_id LIN_NIL: nil;
 * correlation 0: nil. */
void lin_tf_sync(msgpack_packer *pk, uint64_t correlation, uint32_t sync_type, uint64_t start_dev,
		 uint64_t end_dev, uint32_t context, uint64_t stream, uint64_t event, uint64_t sync_id);
/* Host scheduling evidence (since 1.3): thread @tid was not running in [start, end]. */
void lin_tf_host_sched(msgpack_packer *pk, uint64_t tid, uint64_t start_ns, uint64_t end_ns,
		       uint32_t state, uint64_t source_sid);
/* A dependency of graph @graph_id: node @to runs after node @from (since 1.3). Both
 * LIN_NIL: the graph has no edge at all (its topology is known, every node a root). */
void lin_tf_graph_edge(msgpack_packer *pk, uint64_t graph_id, uint64_t from, uint64_t to);
/* The last record of a trace that was closed (lin_runtime_free). */
void lin_tf_trace_end(msgpack_packer *pk, uint64_t host_ns, uint64_t events_dropped);
/* Truth label: requests[n]; epoch LIN_NIL when not known. */
void lin_tf_truth(msgpack_packer *pk, uint32_t gpu_kind, uint64_t key, const uint64_t *requests,
		  size_t n, uint64_t epoch);
/* The same with the CUPTI correlation id of the API call that launched the record
 * (LIN_NIL: not known), which lets a reader tie the label to its launch. */
void lin_tf_truth_corr(msgpack_packer *pk, uint32_t gpu_kind, uint64_t key,
		       const uint64_t *requests, size_t n, uint64_t epoch, uint64_t correlation);
/* A cause-truth label: launch (@gpu_kind, @key) was delayed by @cause (enum
 * lin_truth_cause); @alt: for LIN_TC_AMBIGUOUS, the causes it cannot be told apart from, a
 * bit (1 << cause) each; [@start_ns, @end_ns] the delay on the host clock and @magnitude_ns
 * its injected size (LIN_NIL: unknown); @correlation the launch's CUPTI correlation when
 * the workload knows it (a graph kernel's grid id repeats in every replay), else LIN_NIL. */
void lin_tf_launch_cause(msgpack_packer *pk, uint32_t gpu_kind, uint64_t key, uint32_t cause,
			 uint32_t alt, uint64_t start_ns, uint64_t end_ns, uint64_t magnitude_ns,
			 uint64_t correlation);

/* Runtime records. Optional ids take LIN_NIL; string ids take 0 for nil. */
void lin_tf_request_begin(msgpack_packer *pk, uint64_t host_ns, uint64_t tid, uint64_t request,
			  uint64_t user_id, uint64_t name_sid, uint64_t parent_request);
/* The context a request arrived with: trace id as two big-endian halves, parent span, flags
 * and the received lin member (NULL: nil). */
void lin_tf_request_link(msgpack_packer *pk, uint64_t host_ns, uint64_t tid, uint64_t request,
			 uint64_t trace_hi, uint64_t trace_lo, uint64_t parent_span,
			 uint32_t trace_flags, const char *lin);
void lin_tf_request_end(msgpack_packer *pk, uint64_t host_ns, uint64_t tid, uint64_t request);
void lin_tf_epoch_declare(msgpack_packer *pk, uint64_t host_ns, uint64_t tid, uint64_t epoch,
			  uint64_t version, const uint64_t *requests, size_t n,
			  uint64_t parent_epoch, uint64_t name_sid);
/* Since format 1.5: @n packed shares (LIN_SHARE_PACK), parallel to the epoch's requests. */
void lin_tf_epoch_share(msgpack_packer *pk, uint64_t epoch, uint64_t version,
			const uint64_t *shares, size_t n);
void lin_tf_epoch_reissue(msgpack_packer *pk, uint64_t host_ns, uint64_t tid, uint64_t epoch,
			  uint64_t version, uint32_t reason);
void lin_tf_epoch_retire(msgpack_packer *pk, uint64_t host_ns, uint64_t tid, uint64_t epoch,
			 uint64_t version);
void lin_tf_token_capture(msgpack_packer *pk, uint64_t host_ns, uint64_t tid, uint32_t kind,
			  uint64_t target, uint64_t version, uint64_t seq);
void lin_tf_token_adopt(msgpack_packer *pk, uint64_t host_ns, uint64_t tid, uint32_t kind,
			uint64_t target, uint64_t version, uint64_t capture_tid,
			uint64_t capture_seq, uint32_t depth);
/* As lin_tf_token_adopt, with @late (enum lin_late: the version had ended before the adopt);
 * the plain one writes LIN_LATE_NONE. */
void lin_tf_token_adopt_late(msgpack_packer *pk, uint64_t host_ns, uint64_t tid, uint32_t kind,
			     uint64_t target, uint64_t version, uint64_t capture_tid,
			     uint64_t capture_seq, uint32_t depth, uint32_t late);
void lin_tf_scope_close(msgpack_packer *pk, uint64_t host_ns, uint64_t tid, uint32_t kind,
			uint64_t target, uint32_t depth);
/* kind 0: nil. */
void lin_tf_misuse(msgpack_packer *pk, uint64_t host_ns, uint64_t tid, const char *cause,
		   uint32_t kind, uint64_t target, uint64_t version, uint64_t detail);
/* depth: the bracket's nesting depth on its thread (1 = outermost), LIN_NIL: nil. */
void lin_tf_launch(msgpack_packer *pk, uint64_t host_ns, uint64_t tid, uint64_t epoch,
		   uint64_t version, uint64_t ext_id, uint64_t name_sid, uint64_t api_sid,
		   uint64_t correlation, uint64_t depth);
/* As lin_tf_launch, with @late (enum lin_late: the version had ended before the launch; a
 * pushed @ext_id then carries LIN_EXT_LATE_*); the plain one writes LIN_LATE_NONE. */
void lin_tf_launch_late(msgpack_packer *pk, uint64_t host_ns, uint64_t tid, uint64_t epoch,
			uint64_t version, uint64_t ext_id, uint64_t name_sid, uint64_t api_sid,
			uint64_t correlation, uint64_t depth, uint32_t late);
/* The end of the launch bracket at @depth on @tid (format 1.2); host_ns LIN_NIL: untimed. */
void lin_tf_launch_end(msgpack_packer *pk, uint64_t host_ns, uint64_t tid, uint64_t depth);

#endif
