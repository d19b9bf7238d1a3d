/* SPDX-License-Identifier: MIT */
#include <string.h>

#include "tracefmt.h"

void lin_tf_pack_opt(msgpack_packer *pk, uint64_t v)
{
	if (v == LIN_TF_NIL)
		msgpack_pack_nil(pk);
	else
		msgpack_pack_uint64(pk, v);
}

void lin_tf_pack_nz(msgpack_packer *pk, uint64_t v)
{
	if (v == 0)
		msgpack_pack_nil(pk);
	else
		msgpack_pack_uint64(pk, v);
}

void lin_tf_pack_str(msgpack_packer *pk, const char *s)
{
	if (!s) {
		msgpack_pack_nil(pk);
		return;
	}
	size_t n = strlen(s);
	msgpack_pack_str_with_body(pk, s, n);
}

static void pack_key(msgpack_packer *pk, const char *k)
{
	msgpack_pack_str_with_body(pk, k, strlen(k));
}

static void pack_head(msgpack_packer *pk, enum lin_rec_type type, size_t nfields)
{
	msgpack_pack_array(pk, nfields + 1);
	msgpack_pack_uint32(pk, (uint32_t)type);
}

void lin_tf_header(msgpack_packer *pk, const struct lin_tf_header *h)
{
	msgpack_pack_map(pk, h->start_unix_ns ? 14 : 13);
	pack_key(pk, "format");
	lin_tf_pack_str(pk, h->format);
	pack_key(pk, "version");
	msgpack_pack_array(pk, 2);
	msgpack_pack_uint32(pk, LIN_TRACE_FORMAT_MAJOR);
	msgpack_pack_uint32(pk, LIN_TRACE_FORMAT_MINOR);
	pack_key(pk, "writer");
	lin_tf_pack_str(pk, h->writer);
	pack_key(pk, "host");
	lin_tf_pack_str(pk, h->host);
	pack_key(pk, "pid");
	msgpack_pack_uint64(pk, h->pid);
	pack_key(pk, "start_host_ns");
	msgpack_pack_uint64(pk, h->start_host_ns);
	if (h->start_unix_ns) {
		pack_key(pk, "start_unix_ns");
		msgpack_pack_uint64(pk, h->start_unix_ns);
	}
	pack_key(pk, "host_clock");
	lin_tf_pack_str(pk, "CLOCK_MONOTONIC");
	pack_key(pk, "host_clock_source");
	lin_tf_pack_str(pk, h->host_clock_source);
	pack_key(pk, "tsc_hz");
	if (h->tsc_hz > 0)
		msgpack_pack_double(pk, h->tsc_hz);
	else
		msgpack_pack_nil(pk);
	pack_key(pk, "device_clock");
	lin_tf_pack_str(pk, h->device_clock ? h->device_clock : "cupti");
	pack_key(pk, "ext_kind");
	msgpack_pack_uint32(pk, h->ext_kind);
	pack_key(pk, "backend");
	lin_tf_pack_str(pk, h->backend);
	pack_key(pk, "cupti");
	lin_tf_pack_str(pk, h->cupti);
}

void lin_tf_string(msgpack_packer *pk, uint64_t sid, const char *text, size_t len)
{
	pack_head(pk, LIN_REC_STRING, LIN_REC_NFIELDS_STRING);
	msgpack_pack_uint64(pk, sid);
	msgpack_pack_str_with_body(pk, text, len);
}

void lin_tf_ext_correlation(msgpack_packer *pk, uint32_t ext_kind, uint64_t external_id,
			    uint64_t correlation)
{
	pack_head(pk, LIN_REC_EXT_CORRELATION, LIN_REC_NFIELDS_EXT_CORRELATION);
	msgpack_pack_uint32(pk, ext_kind);
	msgpack_pack_uint64(pk, external_id);
	lin_tf_pack_nz(pk, correlation);
}

void lin_tf_api(msgpack_packer *pk, const struct lin_tf_api *a)
{
	pack_head(pk, LIN_REC_API, LIN_REC_NFIELDS_API);
	msgpack_pack_uint32(pk, a->domain);
	lin_tf_pack_opt(pk, a->cbid);
	lin_tf_pack_nz(pk, a->correlation);
	lin_tf_pack_nz(pk, a->start_dev);
	lin_tf_pack_nz(pk, a->end_dev);
	msgpack_pack_uint32(pk, a->pid);
	msgpack_pack_uint32(pk, a->tid);
	msgpack_pack_int64(pk, a->return_value);
}

static void pack_dev_common(msgpack_packer *pk, uint64_t corr, uint64_t start, uint64_t end,
			    uint32_t device, uint32_t context, uint32_t stream)
{
	lin_tf_pack_nz(pk, corr);
	/* CUPTI writes start = end = 0 when timestamps could not be collected. */
	lin_tf_pack_nz(pk, start);
	lin_tf_pack_nz(pk, end);
	msgpack_pack_uint32(pk, device);
	msgpack_pack_uint32(pk, context);
	msgpack_pack_uint32(pk, stream);
}

void lin_tf_kernel(msgpack_packer *pk, const struct lin_tf_kernel *k)
{
	pack_head(pk, LIN_REC_KERNEL, LIN_REC_NFIELDS_KERNEL);
	pack_dev_common(pk, k->correlation, k->start_dev, k->end_dev, k->device, k->context, k->stream);
	lin_tf_pack_nz(pk, k->grid_id);
	lin_tf_pack_nz(pk, k->graph_id);
	lin_tf_pack_nz(pk, k->graph_node_id);
	lin_tf_pack_nz(pk, k->name_sid);
	lin_tf_pack_nz(pk, k->queued_dev);
	lin_tf_pack_nz(pk, k->submitted_dev);
	if (k->device_launched)
		msgpack_pack_true(pk);
	else
		msgpack_pack_false(pk);
}

static void pack_memop(msgpack_packer *pk, enum lin_rec_type type, const struct lin_tf_memop *m)
{
	pack_head(pk, type, LIN_REC_NFIELDS_MEMCPY);
	pack_dev_common(pk, m->correlation, m->start_dev, m->end_dev, m->device, m->context, m->stream);
	msgpack_pack_uint64(pk, m->bytes);
	msgpack_pack_uint32(pk, m->kind_or_value);
	lin_tf_pack_nz(pk, m->graph_id);
	lin_tf_pack_nz(pk, m->graph_node_id);
}

void lin_tf_memcpy(msgpack_packer *pk, const struct lin_tf_memop *m)
{
	pack_memop(pk, LIN_REC_MEMCPY, m);
}

void lin_tf_memset(msgpack_packer *pk, const struct lin_tf_memop *m)
{
	pack_memop(pk, LIN_REC_MEMSET, m);
}

void lin_tf_graph_trace(msgpack_packer *pk, uint64_t correlation, uint64_t start_dev, uint64_t end_dev,
			uint32_t device, uint32_t context, uint32_t stream, uint64_t graph_id)
{
	pack_head(pk, LIN_REC_GRAPH_TRACE, LIN_REC_NFIELDS_GRAPH_TRACE);
	pack_dev_common(pk, correlation, start_dev, end_dev, device, context, stream);
	msgpack_pack_uint64(pk, graph_id);
}

void lin_tf_graph_node(msgpack_packer *pk, uint64_t host_ns, uint64_t tid, uint64_t graph_id,
		       uint64_t node_id, uint64_t epoch, uint64_t version, uint32_t origin)
{
	pack_head(pk, LIN_REC_GRAPH_NODE, LIN_REC_NFIELDS_GRAPH_NODE);
	lin_tf_pack_opt(pk, host_ns);
	lin_tf_pack_opt(pk, tid);
	msgpack_pack_uint64(pk, graph_id);
	msgpack_pack_uint64(pk, node_id);
	lin_tf_pack_opt(pk, epoch);
	lin_tf_pack_opt(pk, version);
	msgpack_pack_uint32(pk, origin);
}

void lin_tf_graph_node_clone(msgpack_packer *pk, uint64_t original, uint64_t clone,
			     uint64_t graph_id, uint64_t exec_id)
{
	pack_head(pk, LIN_REC_GRAPH_NODE_CLONE, LIN_REC_NFIELDS_GRAPH_NODE_CLONE);
	msgpack_pack_uint64(pk, original);
	msgpack_pack_uint64(pk, clone);
	lin_tf_pack_opt(pk, graph_id);
	lin_tf_pack_opt(pk, exec_id);
}

void lin_tf_graph_exec(msgpack_packer *pk, uint64_t host_ns, uint64_t tid, uint64_t graph_id,
		       uint64_t exec_id)
{
	pack_head(pk, LIN_REC_GRAPH_EXEC, LIN_REC_NFIELDS_GRAPH_EXEC);
	lin_tf_pack_opt(pk, host_ns);
	lin_tf_pack_opt(pk, tid);
	msgpack_pack_uint64(pk, graph_id);
	msgpack_pack_uint64(pk, exec_id);
}

void lin_tf_graph_launch(msgpack_packer *pk, uint64_t host_ns, uint64_t tid, uint64_t exec_id,
			 uint64_t replay_epoch, uint64_t ordinal, uint64_t epoch, uint64_t version,
			 uint64_t correlation)
{
	pack_head(pk, LIN_REC_GRAPH_LAUNCH, LIN_REC_NFIELDS_GRAPH_LAUNCH);
	msgpack_pack_uint64(pk, host_ns);
	msgpack_pack_uint64(pk, tid);
	msgpack_pack_uint64(pk, exec_id);
	msgpack_pack_uint64(pk, replay_epoch);
	msgpack_pack_uint64(pk, ordinal);
	lin_tf_pack_opt(pk, epoch);
	lin_tf_pack_opt(pk, version);
	lin_tf_pack_opt(pk, correlation);
}

void lin_tf_graph_node_update(msgpack_packer *pk, uint64_t host_ns, uint64_t tid, uint64_t node_id,
			      uint64_t epoch, uint64_t version)
{
	pack_head(pk, LIN_REC_GRAPH_NODE_UPDATE, LIN_REC_NFIELDS_GRAPH_NODE_UPDATE);
	lin_tf_pack_opt(pk, host_ns);
	lin_tf_pack_opt(pk, tid);
	msgpack_pack_uint64(pk, node_id);
	lin_tf_pack_opt(pk, epoch);
	lin_tf_pack_opt(pk, version);
}

void lin_tf_dropped(msgpack_packer *pk, uint32_t source, uint64_t count, uint64_t tid, const char *reason)
{
	pack_head(pk, LIN_REC_DROPPED, LIN_REC_NFIELDS_DROPPED);
	msgpack_pack_uint32(pk, source);
	msgpack_pack_uint64(pk, count);
	lin_tf_pack_opt(pk, tid);
	lin_tf_pack_str(pk, reason);
}

void lin_tf_clock(msgpack_packer *pk, uint64_t host_ns, uint64_t device_ns, uint64_t host_after_ns)
{
	pack_head(pk, LIN_REC_CLOCK, LIN_REC_NFIELDS_CLOCK);
	msgpack_pack_uint64(pk, host_ns);
	msgpack_pack_uint64(pk, device_ns);
	lin_tf_pack_opt(pk, host_after_ns);
}

void lin_tf_cuda_event(msgpack_packer *pk, uint64_t correlation, uint32_t device, uint32_t context,
		       uint32_t stream, uint64_t event, uint64_t sync_id)
{
	pack_head(pk, LIN_REC_CUDA_EVENT, LIN_REC_NFIELDS_CUDA_EVENT);
	lin_tf_pack_nz(pk, correlation);
	msgpack_pack_uint32(pk, device);
	msgpack_pack_uint32(pk, context);
	msgpack_pack_uint32(pk, stream);
	msgpack_pack_uint64(pk, event);
	lin_tf_pack_opt(pk, sync_id);
}

void lin_tf_sync(msgpack_packer *pk, uint64_t correlation, uint32_t sync_type, uint64_t start_dev,
		 uint64_t end_dev, uint32_t context, uint64_t stream, uint64_t event, uint64_t sync_id)
{
	pack_head(pk, LIN_REC_SYNC, LIN_REC_NFIELDS_SYNC);
	lin_tf_pack_nz(pk, correlation);
	msgpack_pack_uint32(pk, sync_type);
	lin_tf_pack_opt(pk, start_dev);
	lin_tf_pack_opt(pk, end_dev);
	msgpack_pack_uint32(pk, context);
	lin_tf_pack_opt(pk, stream);
	lin_tf_pack_opt(pk, event);
	lin_tf_pack_opt(pk, sync_id);
}

void lin_tf_host_sched(msgpack_packer *pk, uint64_t tid, uint64_t start_ns, uint64_t end_ns,
		       uint32_t state, uint64_t source_sid)
{
	pack_head(pk, LIN_REC_HOST_SCHED, LIN_REC_NFIELDS_HOST_SCHED);
	msgpack_pack_uint64(pk, tid);
	msgpack_pack_uint64(pk, start_ns);
	msgpack_pack_uint64(pk, end_ns);
	msgpack_pack_uint32(pk, state);
	lin_tf_pack_opt(pk, source_sid);
}

void lin_tf_graph_edge(msgpack_packer *pk, uint64_t graph_id, uint64_t from, uint64_t to)
{
	pack_head(pk, LIN_REC_GRAPH_EDGE, LIN_REC_NFIELDS_GRAPH_EDGE);
	msgpack_pack_uint64(pk, graph_id);
	lin_tf_pack_opt(pk, from);
	lin_tf_pack_opt(pk, to);
}

void lin_tf_trace_end(msgpack_packer *pk, uint64_t host_ns, uint64_t events_dropped)
{
	pack_head(pk, LIN_REC_TRACE_END, LIN_REC_NFIELDS_TRACE_END);
	msgpack_pack_uint64(pk, host_ns);
	msgpack_pack_uint64(pk, events_dropped);
}

void lin_tf_truth(msgpack_packer *pk, uint32_t gpu_kind, uint64_t key, const uint64_t *requests,
		  size_t n, uint64_t epoch)
{
	lin_tf_truth_corr(pk, gpu_kind, key, requests, n, epoch, LIN_TF_NIL);
}

void lin_tf_truth_corr(msgpack_packer *pk, uint32_t gpu_kind, uint64_t key,
		       const uint64_t *requests, size_t n, uint64_t epoch, uint64_t correlation)
{
	pack_head(pk, LIN_REC_TRUTH, LIN_REC_NFIELDS_TRUTH);
	msgpack_pack_uint32(pk, gpu_kind);
	msgpack_pack_uint64(pk, key);
	msgpack_pack_array(pk, n);
	for (size_t i = 0; i < n; i++)
		msgpack_pack_uint64(pk, requests[i]);
	lin_tf_pack_opt(pk, epoch);
	lin_tf_pack_opt(pk, correlation);
}

void lin_tf_launch_cause(msgpack_packer *pk, uint32_t gpu_kind, uint64_t key, uint32_t cause,
			 uint32_t alt, uint64_t start_ns, uint64_t end_ns, uint64_t magnitude_ns,
			 uint64_t correlation)
{
	pack_head(pk, LIN_REC_LAUNCH_CAUSE, LIN_REC_NFIELDS_LAUNCH_CAUSE);
	msgpack_pack_uint32(pk, gpu_kind);
	msgpack_pack_uint64(pk, key);
	msgpack_pack_uint32(pk, cause);
	msgpack_pack_uint32(pk, alt);
	lin_tf_pack_opt(pk, start_ns);
	lin_tf_pack_opt(pk, end_ns);
	lin_tf_pack_opt(pk, magnitude_ns);
	lin_tf_pack_opt(pk, correlation);
}

void lin_tf_request_begin(msgpack_packer *pk, uint64_t host_ns, uint64_t tid, uint64_t request,
			  uint64_t user_id, uint64_t name_sid, uint64_t parent_request)
{
	pack_head(pk, LIN_REC_REQUEST_BEGIN, LIN_REC_NFIELDS_REQUEST_BEGIN);
	msgpack_pack_uint64(pk, host_ns);
	msgpack_pack_uint64(pk, tid);
	msgpack_pack_uint64(pk, request);
	lin_tf_pack_opt(pk, user_id);
	lin_tf_pack_nz(pk, name_sid);
	lin_tf_pack_opt(pk, parent_request);
}

void lin_tf_request_link(msgpack_packer *pk, uint64_t host_ns, uint64_t tid, uint64_t request,
			 uint64_t trace_hi, uint64_t trace_lo, uint64_t parent_span,
			 uint32_t trace_flags, const char *lin)
{
	pack_head(pk, LIN_REC_REQUEST_LINK, LIN_REC_NFIELDS_REQUEST_LINK);
	msgpack_pack_uint64(pk, host_ns);
	msgpack_pack_uint64(pk, tid);
	msgpack_pack_uint64(pk, request);
	msgpack_pack_uint64(pk, trace_hi);
	msgpack_pack_uint64(pk, trace_lo);
	msgpack_pack_uint64(pk, parent_span);
	msgpack_pack_uint32(pk, trace_flags);
	if (lin) {
		size_t n = strlen(lin);
		msgpack_pack_str(pk, n);
		msgpack_pack_str_body(pk, lin, n);
	} else {
		msgpack_pack_nil(pk);
	}
}

void lin_tf_request_end(msgpack_packer *pk, uint64_t host_ns, uint64_t tid, uint64_t request)
{
	pack_head(pk, LIN_REC_REQUEST_END, LIN_REC_NFIELDS_REQUEST_END);
	msgpack_pack_uint64(pk, host_ns);
	msgpack_pack_uint64(pk, tid);
	msgpack_pack_uint64(pk, request);
}

void lin_tf_epoch_declare(msgpack_packer *pk, uint64_t host_ns, uint64_t tid, uint64_t epoch,
			  uint64_t version, const uint64_t *requests, size_t n,
			  uint64_t parent_epoch, uint64_t name_sid)
{
	pack_head(pk, LIN_REC_EPOCH_DECLARE, LIN_REC_NFIELDS_EPOCH_DECLARE);
	msgpack_pack_uint64(pk, host_ns);
	msgpack_pack_uint64(pk, tid);
	msgpack_pack_uint64(pk, epoch);
	msgpack_pack_uint64(pk, version);
	msgpack_pack_array(pk, n);
	for (size_t i = 0; i < n; i++)
		msgpack_pack_uint64(pk, requests[i]);
	lin_tf_pack_opt(pk, parent_epoch);
	lin_tf_pack_nz(pk, name_sid);
}

static void pack_ts_tid_id_ver(msgpack_packer *pk, enum lin_rec_type type, size_t nfields,
			       uint64_t host_ns, uint64_t tid, uint64_t id, uint64_t version)
{
	pack_head(pk, type, nfields);
	msgpack_pack_uint64(pk, host_ns);
	msgpack_pack_uint64(pk, tid);
	msgpack_pack_uint64(pk, id);
	msgpack_pack_uint64(pk, version);
}

void lin_tf_epoch_reissue(msgpack_packer *pk, uint64_t host_ns, uint64_t tid, uint64_t epoch,
			  uint64_t version, uint32_t reason)
{
	pack_ts_tid_id_ver(pk, LIN_REC_EPOCH_REISSUE, LIN_REC_NFIELDS_EPOCH_REISSUE, host_ns, tid,
			   epoch, version);
	msgpack_pack_uint32(pk, reason);
}

void lin_tf_epoch_retire(msgpack_packer *pk, uint64_t host_ns, uint64_t tid, uint64_t epoch,
			 uint64_t version)
{
	pack_ts_tid_id_ver(pk, LIN_REC_EPOCH_RETIRE, LIN_REC_NFIELDS_EPOCH_RETIRE, host_ns, tid,
			   epoch, version);
}

void lin_tf_token_capture(msgpack_packer *pk, uint64_t host_ns, uint64_t tid, uint32_t kind,
			  uint64_t target, uint64_t version, uint64_t seq)
{
	pack_head(pk, LIN_REC_TOKEN_CAPTURE, LIN_REC_NFIELDS_TOKEN_CAPTURE);
	lin_tf_pack_opt(pk, host_ns);
	msgpack_pack_uint64(pk, tid);
	msgpack_pack_uint32(pk, kind);
	msgpack_pack_uint64(pk, target);
	msgpack_pack_uint64(pk, version);
	msgpack_pack_uint64(pk, seq);
}

void lin_tf_token_adopt_late(msgpack_packer *pk, uint64_t host_ns, uint64_t tid, uint32_t kind,
			     uint64_t target, uint64_t version, uint64_t capture_tid,
			     uint64_t capture_seq, uint32_t depth, uint32_t late)
{
	pack_head(pk, LIN_REC_TOKEN_ADOPT, LIN_REC_NFIELDS_TOKEN_ADOPT);
	msgpack_pack_uint64(pk, host_ns);
	msgpack_pack_uint64(pk, tid);
	msgpack_pack_uint32(pk, kind);
	msgpack_pack_uint64(pk, target);
	msgpack_pack_uint64(pk, version);
	lin_tf_pack_opt(pk, capture_tid);
	lin_tf_pack_opt(pk, capture_seq);
	msgpack_pack_uint32(pk, depth);
	msgpack_pack_uint32(pk, late);
}

void lin_tf_token_adopt(msgpack_packer *pk, uint64_t host_ns, uint64_t tid, uint32_t kind,
			uint64_t target, uint64_t version, uint64_t capture_tid,
			uint64_t capture_seq, uint32_t depth)
{
	lin_tf_token_adopt_late(pk, host_ns, tid, kind, target, version, capture_tid, capture_seq,
				depth, LIN_LATE_NONE);
}

void lin_tf_scope_close(msgpack_packer *pk, uint64_t host_ns, uint64_t tid, uint32_t kind,
			uint64_t target, uint32_t depth)
{
	pack_head(pk, LIN_REC_SCOPE_CLOSE, LIN_REC_NFIELDS_SCOPE_CLOSE);
	lin_tf_pack_opt(pk, host_ns);
	msgpack_pack_uint64(pk, tid);
	msgpack_pack_uint32(pk, kind);
	msgpack_pack_uint64(pk, target);
	msgpack_pack_uint32(pk, depth);
}

void lin_tf_misuse(msgpack_packer *pk, uint64_t host_ns, uint64_t tid, const char *cause,
		   uint32_t kind, uint64_t target, uint64_t version, uint64_t detail)
{
	pack_head(pk, LIN_REC_MISUSE, LIN_REC_NFIELDS_MISUSE);
	msgpack_pack_uint64(pk, host_ns);
	msgpack_pack_uint64(pk, tid);
	lin_tf_pack_str(pk, cause);
	lin_tf_pack_nz(pk, kind);
	lin_tf_pack_opt(pk, target);
	lin_tf_pack_opt(pk, version);
	lin_tf_pack_opt(pk, detail);
}

void lin_tf_launch_late(msgpack_packer *pk, uint64_t host_ns, uint64_t tid, uint64_t epoch,
			uint64_t version, uint64_t ext_id, uint64_t name_sid, uint64_t api_sid,
			uint64_t correlation, uint64_t depth, uint32_t late)
{
	pack_head(pk, LIN_REC_LAUNCH, LIN_REC_NFIELDS_LAUNCH);
	msgpack_pack_uint64(pk, host_ns);
	msgpack_pack_uint64(pk, tid);
	lin_tf_pack_opt(pk, epoch);
	lin_tf_pack_opt(pk, version);
	lin_tf_pack_opt(pk, ext_id);
	lin_tf_pack_nz(pk, name_sid);
	lin_tf_pack_nz(pk, api_sid);
	lin_tf_pack_opt(pk, correlation);
	lin_tf_pack_opt(pk, depth);
	msgpack_pack_uint32(pk, late);
}

void lin_tf_launch(msgpack_packer *pk, uint64_t host_ns, uint64_t tid, uint64_t epoch,
		   uint64_t version, uint64_t ext_id, uint64_t name_sid, uint64_t api_sid,
		   uint64_t correlation, uint64_t depth)
{
	lin_tf_launch_late(pk, host_ns, tid, epoch, version, ext_id, name_sid, api_sid, correlation,
			   depth, LIN_LATE_NONE);
}

void lin_tf_launch_end(msgpack_packer *pk, uint64_t host_ns, uint64_t tid, uint64_t depth)
{
	pack_head(pk, LIN_REC_LAUNCH_END, LIN_REC_NFIELDS_LAUNCH_END);
	lin_tf_pack_opt(pk, host_ns);
	msgpack_pack_uint64(pk, tid);
	msgpack_pack_uint64(pk, depth);
}
