/* SPDX-License-Identifier: MIT */
/*
 * schema.c - field layout of every record type of trace format 1.4 (docs/trace-format.md).
 *
 * Type codes: u uint, o uint or nil, c a CUPTI correlation id (32-bit uint) or nil,
 * i int (any sign), b bool, s str, n str or nil,
 * a array of uint (at most LIN_READER_MAX_REQS). A '|' marks where the fields a later
 * minor version appended begin: a record written by an older writer may end there, and
 * the fields it lacks read as nil.
 */
#include <stddef.h>

#include "lineage/trace_format.h"
#include "schema.h"

#define S(t, n, ty, ...) [t] = { n, ty, { __VA_ARGS__ } }

static const struct lin_schema schemas[LIN_SCHEMA_MAX] = {
	S(LIN_REC_REQUEST_BEGIN, "request_begin", "uuuooo", "host_ns", "tid", "request", "user_id",
	  "name_sid", "parent_request"),
	S(LIN_REC_REQUEST_END, "request_end", "uuu", "host_ns", "tid", "request"),
	S(LIN_REC_EPOCH_DECLARE, "epoch_declare", "uuuuaoo", "host_ns", "tid", "epoch", "version",
	  "requests", "parent_epoch", "name_sid"),
	S(LIN_REC_EPOCH_REISSUE, "epoch_reissue", "uuuuu", "host_ns", "tid", "epoch", "version", "reason"),
	S(LIN_REC_EPOCH_RETIRE, "epoch_retire", "uuuu", "host_ns", "tid", "epoch", "version"),
	S(LIN_REC_TOKEN_CAPTURE, "token_capture", "ouuuuu", "host_ns", "tid", "target_kind",
	  "target", "version", "capture_seq"),
	S(LIN_REC_TOKEN_ADOPT, "token_adopt", "uuuuuoou|o", "host_ns", "tid", "target_kind",
	  "target", "version", "capture_tid", "capture_seq", "depth", "late"),
	S(LIN_REC_SCOPE_CLOSE, "scope_close", "ouuuu", "host_ns", "tid", "target_kind", "target", "depth"),
	S(LIN_REC_MISUSE, "misuse", "uusoooo", "host_ns", "tid", "cause", "target_kind", "target",
	  "version", "detail"),
	S(LIN_REC_LAUNCH, "launch", "uuoooooc|oo", "host_ns", "tid", "epoch", "version", "ext_id",
	  "name_sid", "api", "correlation", "depth", "late"),
	S(LIN_REC_LAUNCH_END, "launch_end", "ouu", "host_ns", "tid", "depth"),
	S(LIN_REC_STRING, "string", "us", "sid", "text"),
	S(LIN_REC_REQUEST_LINK, "request_link", "uuuuuuun", "host_ns", "tid", "request", "trace_hi",
	  "trace_lo", "parent_span", "trace_flags", "lin"),
	S(LIN_REC_EXT_CORRELATION, "ext_correlation", "uuc", "ext_kind", "external_id", "correlation"),
	S(LIN_REC_API, "api", "uocoouui", "domain", "cbid", "correlation", "start_dev", "end_dev",
	  "pid", "tid", "return_value"),
	S(LIN_REC_KERNEL, "kernel", "coouuuoooooob", "correlation", "start_dev", "end_dev",
	  "device", "context", "stream", "grid_id", "graph_id", "graph_node_id", "name_sid",
	  "queued_dev", "submitted_dev", "device_launched"),
	S(LIN_REC_MEMCPY, "memcpy", "coouuuuuoo", "correlation", "start_dev", "end_dev", "device",
	  "context", "stream", "bytes", "copy_kind", "graph_id", "graph_node_id"),
	S(LIN_REC_MEMSET, "memset", "coouuuuuoo", "correlation", "start_dev", "end_dev", "device",
	  "context", "stream", "bytes", "value", "graph_id", "graph_node_id"),
	S(LIN_REC_GRAPH_TRACE, "graph_trace", "coouuuu", "correlation", "start_dev", "end_dev",
	  "device", "context", "stream", "graph_id"),
	S(LIN_REC_GRAPH_NODE, "graph_node", "oouuoou", "host_ns", "tid", "graph_id", "node_id",
	  "epoch", "version", "origin"),
	S(LIN_REC_GRAPH_NODE_CLONE, "graph_node_clone", "uuoo", "original_node_id", "clone_node_id",
	  "graph_id", "exec_id"),
	S(LIN_REC_GRAPH_EXEC, "graph_exec", "oouu", "host_ns", "tid", "graph_id", "exec_id"),
	S(LIN_REC_GRAPH_LAUNCH, "graph_launch", "uuuuuooc", "host_ns", "tid", "exec_id",
	  "replay_epoch", "replay_ordinal", "epoch", "version", "correlation"),
	S(LIN_REC_DROPPED, "dropped", "uuon", "source", "count", "tid", "reason"),
	S(LIN_REC_CLOCK, "clock", "uu|o", "host_ns", "device_ns", "host_after_ns"),
	S(LIN_REC_GRAPH_NODE_UPDATE, "graph_node_update", "oouoo", "host_ns", "tid", "node_id",
	  "epoch", "version"),
	S(LIN_REC_TRACE_END, "trace_end", "uu", "host_ns", "events_dropped"),
	S(LIN_REC_CUDA_EVENT, "cuda_event", "cuuuuo", "correlation", "device", "context", "stream",
	  "event", "sync_id"),
	S(LIN_REC_SYNC, "sync", "cuoouooo", "correlation", "sync_type", "start_dev", "end_dev",
	  "context", "stream", "event", "sync_id"),
	S(LIN_REC_HOST_SCHED, "host_sched", "uuuuo", "tid", "start_ns", "end_ns", "state", "source_sid"),
	S(LIN_REC_GRAPH_EDGE, "graph_edge", "uoo", "graph_id", "from_node_id", "to_node_id"),
	S(LIN_REC_TRUTH, "truth", "uuao|c", "gpu_kind", "key", "requests", "epoch", "correlation"),
	S(LIN_REC_LAUNCH_CAUSE, "launch_cause", "uuuuooo|c", "gpu_kind", "key", "cause", "alt",
	  "start_ns", "end_ns", "magnitude_ns", "correlation"),
};

const struct lin_schema *lin_schema_get(uint64_t type)
{
	if (type >= LIN_SCHEMA_MAX || !schemas[type].name)
		return NULL;
	return &schemas[type];
}

const char *lin_rec_name(uint32_t type)
{
	const struct lin_schema *s = lin_schema_get(type);
	return s ? s->name : NULL;
}

const char *lin_rec_field_name(uint32_t type, uint32_t i)
{
	const struct lin_schema *s = lin_schema_get(type);
	return (s && i < LIN_READER_MAX_FIELDS && s->fields[i]) ? s->fields[i] : "?";
}
