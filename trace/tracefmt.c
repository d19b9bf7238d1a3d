/* SPDX-License-Identifier: MIT */
/*
 * tracefmt.c - the msgpack encoders of every record (tracefmt.h). Each record's encoder,
 * lin_tf_rec_<name>, is expanded from records.def; the named encoders below only put
 * their arguments into the fields they name.
 */
#include <string.h>

#include "tracefmt.h"

static void lin_tf_pack_opt(msgpack_packer *pk, uint64_t v)
{
	if (v == LIN_NIL)
		msgpack_pack_nil(pk);
	else
		msgpack_pack_uint64(pk, v);
}

static void lin_tf_pack_nz(msgpack_packer *pk, uint64_t v)
{
	if (v == 0)
		msgpack_pack_nil(pk);
	else
		msgpack_pack_uint64(pk, v);
}

static void lin_tf_pack_str(msgpack_packer *pk, const char *s)
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

static void pack_var_str(msgpack_packer *pk, const struct lin_tf_var *x)
{
	if (x->str)
		msgpack_pack_str_with_body(pk, x->str, x->len);
	else
		msgpack_pack_nil(pk);
}

static void pack_var_arr(msgpack_packer *pk, const struct lin_tf_var *x)
{
	msgpack_pack_array(pk, x->n);
	for (size_t i = 0; i < x->n; i++)
		msgpack_pack_uint64(pk, x->arr[i]);
}

/* One field of encoding enc (records.def) from v[i] or *x. */
#define PUT_U(pk, v, x, i) msgpack_pack_uint64(pk, v[i])
#define PUT_O(pk, v, x, i) lin_tf_pack_opt(pk, v[i])
#define PUT_Z(pk, v, x, i) lin_tf_pack_nz(pk, v[i])
#define PUT_I(pk, v, x, i) msgpack_pack_int64(pk, (int64_t)v[i])
#define PUT_B(pk, v, x, i) (v[i] ? msgpack_pack_true(pk) : msgpack_pack_false(pk))
#define PUT_S(pk, v, x, i) msgpack_pack_str_with_body(pk, x->str, x->len)
#define PUT_N(pk, v, x, i) pack_var_str(pk, x)
#define PUT_A(pk, v, x, i) pack_var_arr(pk, x)

#define LIN_RECORD(R, name) \
	void lin_tf_rec_##name(msgpack_packer *pk, const uint64_t *v, const struct lin_tf_var *x) \
	{ \
		(void)v; \
		(void)x; \
		msgpack_pack_array(pk, LIN_F_##R##__N + 1); \
		msgpack_pack_uint32(pk, (uint32_t)LIN_REC_##R);
#define LIN_FIELD(R, F, name, type, enc) PUT_##enc(pk, v, x, LIN_F_##R##_##F);
#define LIN_SINCE(R)
#define LIN_END(R) }
#include "records.def"
#undef LIN_RECORD
#undef LIN_FIELD
#undef LIN_SINCE
#undef LIN_END

static struct lin_tf_var str_var(const char *s)
{
	return (struct lin_tf_var){ s, s ? strlen(s) : 0, NULL, 0 };
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
	const uint64_t v[LIN_F_STRING__N] = { [LIN_F_STRING_SID] = sid };
	const struct lin_tf_var x = { .str = text, .len = len };
	lin_tf_rec_string(pk, v, &x);
}

void lin_tf_ext_correlation(msgpack_packer *pk, uint32_t ext_kind, uint64_t external_id,
			    uint64_t correlation)
{
	const uint64_t v[LIN_F_EXT_CORRELATION__N] = {
		[LIN_F_EXT_CORRELATION_EXT_KIND] = ext_kind,
		[LIN_F_EXT_CORRELATION_EXTERNAL_ID] = external_id,
		[LIN_F_EXT_CORRELATION_CORRELATION] = correlation,
	};
	lin_tf_rec_ext_correlation(pk, v, NULL);
}

void lin_tf_api(msgpack_packer *pk, const struct lin_tf_api *a)
{
	const uint64_t v[LIN_F_API__N] = {
		[LIN_F_API_DOMAIN] = a->domain,
		[LIN_F_API_CBID] = a->cbid,
		[LIN_F_API_CORRELATION] = a->correlation,
		[LIN_F_API_START_DEV] = a->start_dev,
		[LIN_F_API_END_DEV] = a->end_dev,
		[LIN_F_API_PID] = a->pid,
		[LIN_F_API_TID] = a->tid,
		[LIN_F_API_RETURN_VALUE] = (uint64_t)a->return_value,
	};
	lin_tf_rec_api(pk, v, NULL);
}

/* CUPTI writes start = end = 0 when timestamps could not be collected: nil (encoding Z). */
void lin_tf_kernel(msgpack_packer *pk, const struct lin_tf_kernel *k)
{
	const uint64_t v[LIN_F_KERNEL__N] = {
		[LIN_F_KERNEL_CORRELATION] = k->correlation,
		[LIN_F_KERNEL_START_DEV] = k->start_dev,
		[LIN_F_KERNEL_END_DEV] = k->end_dev,
		[LIN_F_KERNEL_DEVICE] = k->device,
		[LIN_F_KERNEL_CONTEXT] = k->context,
		[LIN_F_KERNEL_STREAM] = k->stream,
		[LIN_F_KERNEL_GRID_ID] = k->grid_id,
		[LIN_F_KERNEL_GRAPH_ID] = k->graph_id,
		[LIN_F_KERNEL_GRAPH_NODE_ID] = k->graph_node_id,
		[LIN_F_KERNEL_NAME_SID] = k->name_sid,
		[LIN_F_KERNEL_QUEUED_DEV] = k->queued_dev,
		[LIN_F_KERNEL_SUBMITTED_DEV] = k->submitted_dev,
		[LIN_F_KERNEL_DEVICE_LAUNCHED] = k->device_launched,
	};
	lin_tf_rec_kernel(pk, v, NULL);
}

/* memcpy and memset share a layout (records.def): memcpy's fields name both. */
_Static_assert((int)LIN_F_MEMCPY__N == (int)LIN_F_MEMSET__N &&
		       (int)LIN_F_MEMCPY_COPY_KIND == (int)LIN_F_MEMSET_VALUE,
	       "memcpy and memset share a layout");

static void memop_fields(uint64_t *v, const struct lin_tf_memop *m)
{
	v[LIN_F_MEMCPY_CORRELATION] = m->correlation;
	v[LIN_F_MEMCPY_START_DEV] = m->start_dev;
	v[LIN_F_MEMCPY_END_DEV] = m->end_dev;
	v[LIN_F_MEMCPY_DEVICE] = m->device;
	v[LIN_F_MEMCPY_CONTEXT] = m->context;
	v[LIN_F_MEMCPY_STREAM] = m->stream;
	v[LIN_F_MEMCPY_BYTES] = m->bytes;
	v[LIN_F_MEMCPY_COPY_KIND] = m->kind_or_value;
	v[LIN_F_MEMCPY_GRAPH_ID] = m->graph_id;
	v[LIN_F_MEMCPY_GRAPH_NODE_ID] = m->graph_node_id;
}

void lin_tf_memcpy(msgpack_packer *pk, const struct lin_tf_memop *m)
{
	uint64_t v[LIN_F_MEMCPY__N];
	memop_fields(v, m);
	lin_tf_rec_memcpy(pk, v, NULL);
}

void lin_tf_memset(msgpack_packer *pk, const struct lin_tf_memop *m)
{
	uint64_t v[LIN_F_MEMSET__N];
	memop_fields(v, m);
	lin_tf_rec_memset(pk, v, NULL);
}

void lin_tf_graph_trace(msgpack_packer *pk, uint64_t correlation, uint64_t start_dev, uint64_t end_dev,
			uint32_t device, uint32_t context, uint32_t stream, uint64_t graph_id)
{
	const uint64_t v[LIN_F_GRAPH_TRACE__N] = {
		[LIN_F_GRAPH_TRACE_CORRELATION] = correlation,
		[LIN_F_GRAPH_TRACE_START_DEV] = start_dev,
		[LIN_F_GRAPH_TRACE_END_DEV] = end_dev,
		[LIN_F_GRAPH_TRACE_DEVICE] = device,
		[LIN_F_GRAPH_TRACE_CONTEXT] = context,
		[LIN_F_GRAPH_TRACE_STREAM] = stream,
		[LIN_F_GRAPH_TRACE_GRAPH_ID] = graph_id,
	};
	lin_tf_rec_graph_trace(pk, v, NULL);
}

void lin_tf_graph_node(msgpack_packer *pk, uint64_t host_ns, uint64_t tid, uint64_t graph_id,
		       uint64_t node_id, uint64_t epoch, uint64_t version, uint32_t origin)
{
	const uint64_t v[LIN_F_GRAPH_NODE__N] = {
		[LIN_F_GRAPH_NODE_HOST_NS] = host_ns,   [LIN_F_GRAPH_NODE_TID] = tid,
		[LIN_F_GRAPH_NODE_GRAPH_ID] = graph_id, [LIN_F_GRAPH_NODE_NODE_ID] = node_id,
		[LIN_F_GRAPH_NODE_EPOCH] = epoch,       [LIN_F_GRAPH_NODE_VERSION] = version,
		[LIN_F_GRAPH_NODE_ORIGIN] = origin,
	};
	lin_tf_rec_graph_node(pk, v, NULL);
}

void lin_tf_graph_node_clone(msgpack_packer *pk, uint64_t original, uint64_t clone,
			     uint64_t graph_id, uint64_t exec_id)
{
	const uint64_t v[LIN_F_GRAPH_NODE_CLONE__N] = {
		[LIN_F_GRAPH_NODE_CLONE_ORIGINAL_NODE_ID] = original,
		[LIN_F_GRAPH_NODE_CLONE_CLONE_NODE_ID] = clone,
		[LIN_F_GRAPH_NODE_CLONE_GRAPH_ID] = graph_id,
		[LIN_F_GRAPH_NODE_CLONE_EXEC_ID] = exec_id,
	};
	lin_tf_rec_graph_node_clone(pk, v, NULL);
}

void lin_tf_graph_exec(msgpack_packer *pk, uint64_t host_ns, uint64_t tid, uint64_t graph_id,
		       uint64_t exec_id)
{
	const uint64_t v[LIN_F_GRAPH_EXEC__N] = {
		[LIN_F_GRAPH_EXEC_HOST_NS] = host_ns,
		[LIN_F_GRAPH_EXEC_TID] = tid,
		[LIN_F_GRAPH_EXEC_GRAPH_ID] = graph_id,
		[LIN_F_GRAPH_EXEC_EXEC_ID] = exec_id,
	};
	lin_tf_rec_graph_exec(pk, v, NULL);
}

void lin_tf_graph_launch(msgpack_packer *pk, uint64_t host_ns, uint64_t tid, uint64_t exec_id,
			 uint64_t replay_epoch, uint64_t ordinal, uint64_t epoch, uint64_t version,
			 uint64_t correlation)
{
	const uint64_t v[LIN_F_GRAPH_LAUNCH__N] = {
		[LIN_F_GRAPH_LAUNCH_HOST_NS] = host_ns,
		[LIN_F_GRAPH_LAUNCH_TID] = tid,
		[LIN_F_GRAPH_LAUNCH_EXEC_ID] = exec_id,
		[LIN_F_GRAPH_LAUNCH_REPLAY_EPOCH] = replay_epoch,
		[LIN_F_GRAPH_LAUNCH_REPLAY_ORDINAL] = ordinal,
		[LIN_F_GRAPH_LAUNCH_EPOCH] = epoch,
		[LIN_F_GRAPH_LAUNCH_VERSION] = version,
		[LIN_F_GRAPH_LAUNCH_CORRELATION] = correlation,
	};
	lin_tf_rec_graph_launch(pk, v, NULL);
}

void lin_tf_graph_node_update(msgpack_packer *pk, uint64_t host_ns, uint64_t tid, uint64_t node_id,
			      uint64_t epoch, uint64_t version)
{
	const uint64_t v[LIN_F_GRAPH_NODE_UPDATE__N] = {
		[LIN_F_GRAPH_NODE_UPDATE_HOST_NS] = host_ns,
		[LIN_F_GRAPH_NODE_UPDATE_TID] = tid,
		[LIN_F_GRAPH_NODE_UPDATE_NODE_ID] = node_id,
		[LIN_F_GRAPH_NODE_UPDATE_EPOCH] = epoch,
		[LIN_F_GRAPH_NODE_UPDATE_VERSION] = version,
	};
	lin_tf_rec_graph_node_update(pk, v, NULL);
}

void lin_tf_dropped(msgpack_packer *pk, uint32_t source, uint64_t count, uint64_t tid, const char *reason)
{
	const uint64_t v[LIN_F_DROPPED__N] = {
		[LIN_F_DROPPED_SOURCE] = source,
		[LIN_F_DROPPED_COUNT] = count,
		[LIN_F_DROPPED_TID] = tid,
	};
	const struct lin_tf_var x = str_var(reason);
	lin_tf_rec_dropped(pk, v, &x);
}

void lin_tf_clock(msgpack_packer *pk, uint64_t host_ns, uint64_t device_ns, uint64_t host_after_ns)
{
	const uint64_t v[LIN_F_CLOCK__N] = {
		[LIN_F_CLOCK_HOST_NS] = host_ns,
		[LIN_F_CLOCK_DEVICE_NS] = device_ns,
		[LIN_F_CLOCK_HOST_AFTER_NS] = host_after_ns,
	};
	lin_tf_rec_clock(pk, v, NULL);
}

void lin_tf_cuda_event(msgpack_packer *pk, uint64_t correlation, uint32_t device, uint32_t context,
		       uint32_t stream, uint64_t event, uint64_t sync_id)
{
	const uint64_t v[LIN_F_CUDA_EVENT__N] = {
		[LIN_F_CUDA_EVENT_CORRELATION] = correlation,
		[LIN_F_CUDA_EVENT_DEVICE] = device,
		[LIN_F_CUDA_EVENT_CONTEXT] = context,
		[LIN_F_CUDA_EVENT_STREAM] = stream,
		[LIN_F_CUDA_EVENT_EVENT] = event,
		[LIN_F_CUDA_EVENT_SYNC_ID] = sync_id,
	};
	lin_tf_rec_cuda_event(pk, v, NULL);
}

void lin_tf_sync(msgpack_packer *pk, uint64_t correlation, uint32_t sync_type, uint64_t start_dev,
		 uint64_t end_dev, uint32_t context, uint64_t stream, uint64_t event, uint64_t sync_id)
{
	const uint64_t v[LIN_F_SYNC__N] = {
		[LIN_F_SYNC_CORRELATION] = correlation,
		[LIN_F_SYNC_SYNC_TYPE] = sync_type,
		[LIN_F_SYNC_START_DEV] = start_dev,
		[LIN_F_SYNC_END_DEV] = end_dev,
		[LIN_F_SYNC_CONTEXT] = context,
		[LIN_F_SYNC_STREAM] = stream,
		[LIN_F_SYNC_EVENT] = event,
		[LIN_F_SYNC_SYNC_ID] = sync_id,
	};
	lin_tf_rec_sync(pk, v, NULL);
}

void lin_tf_host_sched(msgpack_packer *pk, uint64_t tid, uint64_t start_ns, uint64_t end_ns,
		       uint32_t state, uint64_t source_sid)
{
	const uint64_t v[LIN_F_HOST_SCHED__N] = {
		[LIN_F_HOST_SCHED_TID] = tid,
		[LIN_F_HOST_SCHED_START_NS] = start_ns,
		[LIN_F_HOST_SCHED_END_NS] = end_ns,
		[LIN_F_HOST_SCHED_STATE] = state,
		[LIN_F_HOST_SCHED_SOURCE_SID] = source_sid,
	};
	lin_tf_rec_host_sched(pk, v, NULL);
}

void lin_tf_graph_edge(msgpack_packer *pk, uint64_t graph_id, uint64_t from, uint64_t to)
{
	const uint64_t v[LIN_F_GRAPH_EDGE__N] = {
		[LIN_F_GRAPH_EDGE_GRAPH_ID] = graph_id,
		[LIN_F_GRAPH_EDGE_FROM_NODE_ID] = from,
		[LIN_F_GRAPH_EDGE_TO_NODE_ID] = to,
	};
	lin_tf_rec_graph_edge(pk, v, NULL);
}

void lin_tf_trace_end(msgpack_packer *pk, uint64_t host_ns, uint64_t events_dropped)
{
	const uint64_t v[LIN_F_TRACE_END__N] = {
		[LIN_F_TRACE_END_HOST_NS] = host_ns,
		[LIN_F_TRACE_END_EVENTS_DROPPED] = events_dropped,
	};
	lin_tf_rec_trace_end(pk, v, NULL);
}

void lin_tf_truth(msgpack_packer *pk, uint32_t gpu_kind, uint64_t key, const uint64_t *requests,
		  size_t n, uint64_t epoch)
{
	lin_tf_truth_corr(pk, gpu_kind, key, requests, n, epoch, LIN_NIL);
}

void lin_tf_truth_corr(msgpack_packer *pk, uint32_t gpu_kind, uint64_t key,
		       const uint64_t *requests, size_t n, uint64_t epoch, uint64_t correlation)
{
	const uint64_t v[LIN_F_TRUTH__N] = {
		[LIN_F_TRUTH_GPU_KIND] = gpu_kind,
		[LIN_F_TRUTH_KEY] = key,
		[LIN_F_TRUTH_EPOCH] = epoch,
		[LIN_F_TRUTH_CORRELATION] = correlation,
	};
	const struct lin_tf_var x = { .arr = requests, .n = n };
	lin_tf_rec_truth(pk, v, &x);
}

void lin_tf_launch_cause(msgpack_packer *pk, uint32_t gpu_kind, uint64_t key, uint32_t cause,
			 uint32_t alt, uint64_t start_ns, uint64_t end_ns, uint64_t magnitude_ns,
			 uint64_t correlation)
{
	const uint64_t v[LIN_F_LAUNCH_CAUSE__N] = {
		[LIN_F_LAUNCH_CAUSE_GPU_KIND] = gpu_kind,
		[LIN_F_LAUNCH_CAUSE_KEY] = key,
		[LIN_F_LAUNCH_CAUSE_CAUSE] = cause,
		[LIN_F_LAUNCH_CAUSE_ALT] = alt,
		[LIN_F_LAUNCH_CAUSE_START_NS] = start_ns,
		[LIN_F_LAUNCH_CAUSE_END_NS] = end_ns,
		[LIN_F_LAUNCH_CAUSE_MAGNITUDE_NS] = magnitude_ns,
		[LIN_F_LAUNCH_CAUSE_CORRELATION] = correlation,
	};
	lin_tf_rec_launch_cause(pk, v, NULL);
}

void lin_tf_request_begin(msgpack_packer *pk, uint64_t host_ns, uint64_t tid, uint64_t request,
			  uint64_t user_id, uint64_t name_sid, uint64_t parent_request)
{
	const uint64_t v[LIN_F_REQUEST_BEGIN__N] = {
		[LIN_F_REQUEST_BEGIN_HOST_NS] = host_ns,
		[LIN_F_REQUEST_BEGIN_TID] = tid,
		[LIN_F_REQUEST_BEGIN_REQUEST] = request,
		[LIN_F_REQUEST_BEGIN_USER_ID] = user_id,
		[LIN_F_REQUEST_BEGIN_NAME_SID] = name_sid,
		[LIN_F_REQUEST_BEGIN_PARENT_REQUEST] = parent_request,
	};
	lin_tf_rec_request_begin(pk, v, NULL);
}

void lin_tf_request_link(msgpack_packer *pk, uint64_t host_ns, uint64_t tid, uint64_t request,
			 uint64_t trace_hi, uint64_t trace_lo, uint64_t parent_span,
			 uint32_t trace_flags, const char *lin)
{
	const uint64_t v[LIN_F_REQUEST_LINK__N] = {
		[LIN_F_REQUEST_LINK_HOST_NS] = host_ns,
		[LIN_F_REQUEST_LINK_TID] = tid,
		[LIN_F_REQUEST_LINK_REQUEST] = request,
		[LIN_F_REQUEST_LINK_TRACE_HI] = trace_hi,
		[LIN_F_REQUEST_LINK_TRACE_LO] = trace_lo,
		[LIN_F_REQUEST_LINK_PARENT_SPAN] = parent_span,
		[LIN_F_REQUEST_LINK_TRACE_FLAGS] = trace_flags,
	};
	const struct lin_tf_var x = str_var(lin);
	lin_tf_rec_request_link(pk, v, &x);
}

void lin_tf_request_end(msgpack_packer *pk, uint64_t host_ns, uint64_t tid, uint64_t request)
{
	const uint64_t v[LIN_F_REQUEST_END__N] = {
		[LIN_F_REQUEST_END_HOST_NS] = host_ns,
		[LIN_F_REQUEST_END_TID] = tid,
		[LIN_F_REQUEST_END_REQUEST] = request,
	};
	lin_tf_rec_request_end(pk, v, NULL);
}

void lin_tf_epoch_declare(msgpack_packer *pk, uint64_t host_ns, uint64_t tid, uint64_t epoch,
			  uint64_t version, const uint64_t *requests, size_t n,
			  uint64_t parent_epoch, uint64_t name_sid)
{
	const uint64_t v[LIN_F_EPOCH_DECLARE__N] = {
		[LIN_F_EPOCH_DECLARE_HOST_NS] = host_ns,
		[LIN_F_EPOCH_DECLARE_TID] = tid,
		[LIN_F_EPOCH_DECLARE_EPOCH] = epoch,
		[LIN_F_EPOCH_DECLARE_VERSION] = version,
		[LIN_F_EPOCH_DECLARE_PARENT_EPOCH] = parent_epoch,
		[LIN_F_EPOCH_DECLARE_NAME_SID] = name_sid,
	};
	const struct lin_tf_var x = { .arr = requests, .n = n };
	lin_tf_rec_epoch_declare(pk, v, &x);
}

void lin_tf_epoch_share(msgpack_packer *pk, uint64_t epoch, uint64_t version,
			const uint64_t *shares, size_t n)
{
	const uint64_t v[LIN_F_EPOCH_SHARE__N] = {
		[LIN_F_EPOCH_SHARE_EPOCH] = epoch,
		[LIN_F_EPOCH_SHARE_VERSION] = version,
	};
	const struct lin_tf_var x = { .arr = shares, .n = n };
	lin_tf_rec_epoch_share(pk, v, &x);
}

void lin_tf_epoch_reissue(msgpack_packer *pk, uint64_t host_ns, uint64_t tid, uint64_t epoch,
			  uint64_t version, uint32_t reason)
{
	const uint64_t v[LIN_F_EPOCH_REISSUE__N] = {
		[LIN_F_EPOCH_REISSUE_HOST_NS] = host_ns, [LIN_F_EPOCH_REISSUE_TID] = tid,
		[LIN_F_EPOCH_REISSUE_EPOCH] = epoch,     [LIN_F_EPOCH_REISSUE_VERSION] = version,
		[LIN_F_EPOCH_REISSUE_REASON] = reason,
	};
	lin_tf_rec_epoch_reissue(pk, v, NULL);
}

void lin_tf_epoch_retire(msgpack_packer *pk, uint64_t host_ns, uint64_t tid, uint64_t epoch,
			 uint64_t version)
{
	const uint64_t v[LIN_F_EPOCH_RETIRE__N] = {
		[LIN_F_EPOCH_RETIRE_HOST_NS] = host_ns,
		[LIN_F_EPOCH_RETIRE_TID] = tid,
		[LIN_F_EPOCH_RETIRE_EPOCH] = epoch,
		[LIN_F_EPOCH_RETIRE_VERSION] = version,
	};
	lin_tf_rec_epoch_retire(pk, v, NULL);
}

void lin_tf_token_capture(msgpack_packer *pk, uint64_t host_ns, uint64_t tid, uint32_t kind,
			  uint64_t target, uint64_t version, uint64_t seq)
{
	const uint64_t v[LIN_F_TOKEN_CAPTURE__N] = {
		[LIN_F_TOKEN_CAPTURE_HOST_NS] = host_ns,  [LIN_F_TOKEN_CAPTURE_TID] = tid,
		[LIN_F_TOKEN_CAPTURE_TARGET_KIND] = kind, [LIN_F_TOKEN_CAPTURE_TARGET] = target,
		[LIN_F_TOKEN_CAPTURE_VERSION] = version,  [LIN_F_TOKEN_CAPTURE_CAPTURE_SEQ] = seq,
	};
	lin_tf_rec_token_capture(pk, v, NULL);
}

void lin_tf_token_adopt_late(msgpack_packer *pk, uint64_t host_ns, uint64_t tid, uint32_t kind,
			     uint64_t target, uint64_t version, uint64_t capture_tid,
			     uint64_t capture_seq, uint32_t depth, uint32_t late)
{
	const uint64_t v[LIN_F_TOKEN_ADOPT__N] = {
		[LIN_F_TOKEN_ADOPT_HOST_NS] = host_ns,
		[LIN_F_TOKEN_ADOPT_TID] = tid,
		[LIN_F_TOKEN_ADOPT_TARGET_KIND] = kind,
		[LIN_F_TOKEN_ADOPT_TARGET] = target,
		[LIN_F_TOKEN_ADOPT_VERSION] = version,
		[LIN_F_TOKEN_ADOPT_CAPTURE_TID] = capture_tid,
		[LIN_F_TOKEN_ADOPT_CAPTURE_SEQ] = capture_seq,
		[LIN_F_TOKEN_ADOPT_DEPTH] = depth,
		[LIN_F_TOKEN_ADOPT_LATE] = late,
	};
	lin_tf_rec_token_adopt(pk, v, NULL);
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
	const uint64_t v[LIN_F_SCOPE_CLOSE__N] = {
		[LIN_F_SCOPE_CLOSE_HOST_NS] = host_ns,  [LIN_F_SCOPE_CLOSE_TID] = tid,
		[LIN_F_SCOPE_CLOSE_TARGET_KIND] = kind, [LIN_F_SCOPE_CLOSE_TARGET] = target,
		[LIN_F_SCOPE_CLOSE_DEPTH] = depth,
	};
	lin_tf_rec_scope_close(pk, v, NULL);
}

void lin_tf_misuse(msgpack_packer *pk, uint64_t host_ns, uint64_t tid, const char *cause,
		   uint32_t kind, uint64_t target, uint64_t version, uint64_t detail)
{
	const uint64_t v[LIN_F_MISUSE__N] = {
		[LIN_F_MISUSE_HOST_NS] = host_ns,  [LIN_F_MISUSE_TID] = tid,
		[LIN_F_MISUSE_TARGET_KIND] = kind, [LIN_F_MISUSE_TARGET] = target,
		[LIN_F_MISUSE_VERSION] = version,  [LIN_F_MISUSE_DETAIL] = detail,
	};
	const struct lin_tf_var x = str_var(cause);
	lin_tf_rec_misuse(pk, v, &x);
}

void lin_tf_launch_late(msgpack_packer *pk, uint64_t host_ns, uint64_t tid, uint64_t epoch,
			uint64_t version, uint64_t ext_id, uint64_t name_sid, uint64_t api_sid,
			uint64_t correlation, uint64_t depth, uint32_t late)
{
	const uint64_t v[LIN_F_LAUNCH__N] = {
		[LIN_F_LAUNCH_HOST_NS] = host_ns, [LIN_F_LAUNCH_TID] = tid,
		[LIN_F_LAUNCH_EPOCH] = epoch,     [LIN_F_LAUNCH_VERSION] = version,
		[LIN_F_LAUNCH_EXT_ID] = ext_id,   [LIN_F_LAUNCH_NAME_SID] = name_sid,
		[LIN_F_LAUNCH_API] = api_sid,     [LIN_F_LAUNCH_CORRELATION] = correlation,
		[LIN_F_LAUNCH_DEPTH] = depth,     [LIN_F_LAUNCH_LATE] = late,
	};
	lin_tf_rec_launch(pk, v, NULL);
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
	const uint64_t v[LIN_F_LAUNCH_END__N] = {
		[LIN_F_LAUNCH_END_HOST_NS] = host_ns,
		[LIN_F_LAUNCH_END_TID] = tid,
		[LIN_F_LAUNCH_END_DEPTH] = depth,
	};
	lin_tf_rec_launch_end(pk, v, NULL);
}
