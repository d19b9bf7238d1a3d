/* SPDX-License-Identifier: MIT */
/*
 * decode.c - CUPTI activity records -> trace records (GPU records 20-25, cuda_event 34
 * and sync 35 of docs/trace-format.md). Stateless per buffer: each activity record becomes
 * at most one trace record, so records may arrive in any order, from any per-thread buffer. Every byte
 * of a buffer is either decoded, stepped over as a kind the trace does not keep, or
 * reported lost (dropped sources 4-6).
 */
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cupti.h>

#include "cupti_api.h"
#include "decode.h"
#include "tracefmt.h"

/*
 * Layouts this decoder reads, pinned against CUPTI 13.0's headers: a header upgrade that
 * moves a field fails the build instead of decoding garbage. What the libcupti loaded at run
 * time writes is checked separately (lin_cupti_layouts).
 */
_Static_assert(sizeof(CUpti_Activity) == 8, "CUpti_Activity");
_Static_assert(sizeof(CUpti_ActivityExternalCorrelation) == 24, "ExternalCorrelation size");
_Static_assert(offsetof(CUpti_ActivityExternalCorrelation, externalKind) == 4, "extKind@4");
_Static_assert(offsetof(CUpti_ActivityExternalCorrelation, externalId) == 8, "extId@8");
_Static_assert(sizeof(((CUpti_ActivityExternalCorrelation *)0)->externalId) == 8, "extId 64-bit");
_Static_assert(offsetof(CUpti_ActivityExternalCorrelation, correlationId) == 16, "corr@16");
_Static_assert(sizeof(CUpti_ActivityAPI) == 40, "API size");
_Static_assert(offsetof(CUpti_ActivityAPI, cbid) == 4, "api.cbid@4");
_Static_assert(offsetof(CUpti_ActivityAPI, start) == 8, "api.start@8");
_Static_assert(offsetof(CUpti_ActivityAPI, processId) == 24, "api.pid@24");
_Static_assert(offsetof(CUpti_ActivityAPI, threadId) == 28, "api.tid@28");
_Static_assert(offsetof(CUpti_ActivityAPI, correlationId) == 32, "api.corr@32");
_Static_assert(offsetof(CUpti_ActivityAPI, returnValue) == 36, "api.ret@36");
_Static_assert(sizeof(CUpti_ActivityKernel10) == 216, "Kernel10 size");
_Static_assert(_Alignof(CUpti_ActivityKernel10) == 8, "PACKED_ALIGNMENT is aligned(8)");
_Static_assert(offsetof(CUpti_ActivityKernel10, start) == 16, "k.start@16");
_Static_assert(offsetof(CUpti_ActivityKernel10, end) == 24, "k.end@24");
_Static_assert(offsetof(CUpti_ActivityKernel10, deviceId) == 40, "k.device@40");
_Static_assert(offsetof(CUpti_ActivityKernel10, contextId) == 44, "k.context@44");
_Static_assert(offsetof(CUpti_ActivityKernel10, streamId) == 48, "k.stream@48");
_Static_assert(offsetof(CUpti_ActivityKernel10, correlationId) == 92, "k.corr@92");
_Static_assert(offsetof(CUpti_ActivityKernel10, gridId) == 96, "k.grid@96");
_Static_assert(offsetof(CUpti_ActivityKernel10, name) == 104, "k.name@104");
_Static_assert(offsetof(CUpti_ActivityKernel10, queued) == 120, "k.queued@120");
_Static_assert(offsetof(CUpti_ActivityKernel10, submitted) == 128, "k.submitted@128");
_Static_assert(offsetof(CUpti_ActivityKernel10, graphNodeId) == 144, "k.node@144");
_Static_assert(offsetof(CUpti_ActivityKernel10, graphId) == 156, "k.graph@156");
_Static_assert(offsetof(CUpti_ActivityKernel10, isDeviceLaunched) == 208, "k.devlaunch@208");
_Static_assert(sizeof(CUpti_ActivityMemcpy6) == 96, "Memcpy6 size");
_Static_assert(offsetof(CUpti_ActivityMemcpy6, graphNodeId) == 64, "memcpy.node@64");
_Static_assert(offsetof(CUpti_ActivityMemcpy6, graphId) == 72, "memcpy.graph@72");
_Static_assert(offsetof(CUpti_ActivityMemcpy6, correlationId) == 44, "memcpy.corr@44");
_Static_assert(offsetof(CUpti_ActivityMemcpy6, runtimeCorrelationId) == 48, "memcpy.rtcorr@48");
_Static_assert(sizeof(CUpti_ActivityMemcpyPtoP4) == 96, "MemcpyPtoP4 size");
_Static_assert(offsetof(CUpti_ActivityMemcpyPtoP4, correlationId) == 60, "p2p.corr@60");
_Static_assert(offsetof(CUpti_ActivityMemcpyPtoP4, graphNodeId) == 72, "p2p.node@72");
_Static_assert(offsetof(CUpti_ActivityMemcpyPtoP4, graphId) == 80, "p2p.graph@80");
_Static_assert(sizeof(CUpti_ActivityMemset4) == 88, "Memset4 size");
_Static_assert(sizeof(CUpti_ActivityGraphTrace2) == 56, "GraphTrace2 size");
_Static_assert(offsetof(CUpti_ActivityGraphTrace2, correlationId) == 4, "gt.corr@4");
_Static_assert(offsetof(CUpti_ActivityGraphTrace2, graphId) == 28, "gt.graph@28");
_Static_assert(offsetof(CUpti_ActivityGraphTrace2, streamId) == 36, "gt.stream@36");
_Static_assert(sizeof(CUpti_ActivityCudaEvent2) == 56, "CudaEvent2 size");
_Static_assert(offsetof(CUpti_ActivityCudaEvent2, correlationId) == 4, "ev.corr@4");
_Static_assert(offsetof(CUpti_ActivityCudaEvent2, contextId) == 8, "ev.context@8");
_Static_assert(offsetof(CUpti_ActivityCudaEvent2, streamId) == 12, "ev.stream@12");
_Static_assert(offsetof(CUpti_ActivityCudaEvent2, eventId) == 16, "ev.event@16");
_Static_assert(offsetof(CUpti_ActivityCudaEvent2, deviceId) == 24, "ev.device@24");
_Static_assert(offsetof(CUpti_ActivityCudaEvent2, cudaEventSyncId) == 48, "ev.syncid@48");
_Static_assert(sizeof(CUpti_ActivitySynchronization2) == 56, "Synchronization2 size");
_Static_assert(offsetof(CUpti_ActivitySynchronization2, type) == 4, "sync.type@4");
_Static_assert(offsetof(CUpti_ActivitySynchronization2, start) == 8, "sync.start@8");
_Static_assert(offsetof(CUpti_ActivitySynchronization2, end) == 16, "sync.end@16");
_Static_assert(offsetof(CUpti_ActivitySynchronization2, correlationId) == 24, "sync.corr@24");
_Static_assert(offsetof(CUpti_ActivitySynchronization2, contextId) == 28, "sync.context@28");
_Static_assert(offsetof(CUpti_ActivitySynchronization2, streamId) == 32, "sync.stream@32");
_Static_assert(offsetof(CUpti_ActivitySynchronization2, cudaEventId) == 36, "sync.event@36");
_Static_assert(offsetof(CUpti_ActivitySynchronization2, cudaEventSyncId) == 40, "sync.syncid@40");
/* sync_type is CUPTI's synchronization type, value for value (docs/trace-format.md). */
#define CHECK_SYNC_TYPE(lin, cupti) \
	_Static_assert((int)LIN_SYNC_##lin == (int)CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_##cupti, #lin)
CHECK_SYNC_TYPE(UNKNOWN, UNKNOWN);
CHECK_SYNC_TYPE(EVENT_SYNCHRONIZE, EVENT_SYNCHRONIZE);
CHECK_SYNC_TYPE(STREAM_WAIT_EVENT, STREAM_WAIT_EVENT);
CHECK_SYNC_TYPE(STREAM_SYNCHRONIZE, STREAM_SYNCHRONIZE);
CHECK_SYNC_TYPE(CONTEXT_SYNCHRONIZE, CONTEXT_SYNCHRONIZE);
#undef CHECK_SYNC_TYPE

/* The launch table's numbers are CUPTI's: checked against its enums at build time. */
#define CHECK_LAUNCH_API(d, c, k, n) _Static_assert((c) == CUPTI_##n, #n);
LIN_LAUNCH_APIS(CHECK_LAUNCH_API)
LIN_CAPTURE_APIS(CHECK_LAUNCH_API)
#undef CHECK_LAUNCH_API
_Static_assert((int)LIN_CUPTI_LAUNCH_KERNEL == (int)LIN_LAUNCH_KERNEL &&
		       (int)LIN_CUPTI_LAUNCH_GRAPH == (int)LIN_LAUNCH_GRAPH &&
		       (int)LIN_CUPTI_LAUNCH_MEMCPY == (int)LIN_LAUNCH_MEMCPY &&
		       (int)LIN_CUPTI_LAUNCH_MEMSET == (int)LIN_LAUNCH_MEMSET,
	       "launch kinds");

LIN_API int lin_cupti_launch_api(uint32_t domain, uint32_t cbid)
{
	enum lin_launch_kind k = lin_launch_kind_of(domain, cbid);
	/* The public enum names what is launched, not how many records it makes. */
	if (k == LIN_LAUNCH_KERNEL_MULTI)
		return LIN_CUPTI_LAUNCH_KERNEL;
	if (k == LIN_LAUNCH_MEMCPY_BATCH)
		return LIN_CUPTI_LAUNCH_MEMCPY;
	return (int)k;
}

static void decode_ext(const struct lin_cupti_decoder *d, const CUpti_Activity *r,
		       struct lin_cupti_decode_stats *st)
{
	const CUpti_ActivityExternalCorrelation *e = (const void *)r;

	/* Every external kind is kept: the header's ext_kind says which one is lineage's. */
	lin_tf_ext_correlation(d->pk, (uint32_t)e->externalKind, e->externalId, e->correlationId);
	st->ext_correlation++;
}

static void decode_api(const struct lin_cupti_decoder *d, const CUpti_Activity *r,
		       struct lin_cupti_decode_stats *st)
{
	const CUpti_ActivityAPI *a = (const void *)r;
	struct lin_tf_api out = {
		.correlation = a->correlationId,
		.start_dev = a->start,
		.end_dev = a->end,
		.pid = a->processId,
		.tid = a->threadId,
		.return_value = (int64_t)(int32_t)a->returnValue,
	};

	switch (r->kind) {
	case CUPTI_ACTIVITY_KIND_RUNTIME:
		out.domain = LIN_API_RUNTIME;
		out.cbid = a->cbid;
		break;
	case CUPTI_ACTIVITY_KIND_DRIVER:
		out.domain = LIN_API_DRIVER;
		out.cbid = a->cbid;
		break;
	default: /* INTERNAL_LAUNCH_API: "cbid field is not used" */
		out.domain = LIN_API_INTERNAL_LAUNCH;
		out.cbid = LIN_NIL;
		break;
	}
	/* API timestamps: 0 is "not collected"; a lone end without start is kept as CUPTI gave it. */
	lin_tf_api(d->pk, &out);
	st->api++;
	if (out.domain == LIN_API_INTERNAL_LAUNCH ||
	    lin_cupti_launch_api(out.domain, a->cbid) != LIN_CUPTI_LAUNCH_NONE)
		st->launch_api++;
}

static void decode_kernel(const struct lin_cupti_decoder *d, const CUpti_Activity *r,
			  struct lin_cupti_decode_stats *st)
{
	const CUpti_ActivityKernel10 *k = (const void *)r;
	struct lin_tf_kernel out = {
		.correlation = k->correlationId, /* CUPTI_CORRELATION_ID_UNKNOWN (0) -> nil */
		.start_dev = k->start,           /* CUPTI_TIMESTAMP_UNKNOWN (0) -> nil */
		.end_dev = k->end,
		.device = k->deviceId,
		.context = k->contextId,
		.stream = k->streamId,
		.grid_id = (uint64_t)k->gridId, /* CUPTI_GRID_ID_UNKNOWN (0) -> nil */
		.graph_id = k->graphId,
		.graph_node_id = k->graphNodeId,
		.queued_dev = k->queued, /* 0: latency timestamps were not enabled */
		.submitted_dev = k->submitted,
		.device_launched = k->isDeviceLaunched != 0,
	};

	/* The string record, if new, must precede the kernel record that refers to it. */
	if (k->name && d->intern)
		out.name_sid = d->intern(d->intern_user, k->name);
	lin_tf_kernel(d->pk, &out);
	st->kernels++;
	if (k->graphNodeId)
		st->graph_kernels++;
	if (k->isDeviceLaunched)
		st->device_launched++;
}

/* The fields every memory-operation record shares, read from @m (Memcpy6, MemcpyPtoP4 or
 * Memset4: the same names), with its correlation and copy kind or value. */
#define MEMOP_OF(m, corr, kv) \
	((struct lin_tf_memop){ .correlation = (corr), \
				.start_dev = (m)->start, \
				.end_dev = (m)->end, \
				.device = (m)->deviceId, \
				.context = (m)->contextId, \
				.stream = (m)->streamId, \
				.bytes = (m)->bytes, \
				.kind_or_value = (kv), \
				.graph_id = (m)->graphId, \
				.graph_node_id = (m)->graphNodeId })

static void decode_memcpy(const struct lin_cupti_decoder *d, const CUpti_Activity *r,
			  struct lin_cupti_decode_stats *st)
{
	const CUpti_ActivityMemcpy6 *m = (const void *)r;
	/* correlationId is the driver call's, runtimeCorrelationId the runtime call's
	 * (cupti_activity.h, CUpti_ActivityMemcpy6): the runtime one names the call the
	 * application made (and RUNTIME records are always enabled); a copy made through
	 * the driver API alone has none. docs/cupti.md, "Correlation ids". */
	struct lin_tf_memop out = MEMOP_OF(
		m, m->runtimeCorrelationId ? m->runtimeCorrelationId : m->correlationId, m->copyKind);

	lin_tf_memcpy(d->pk, &out);
	st->memcpy++;
}

/* A peer-to-peer copy (kind MEMCPY2, cupti_activity.h: "For peer to peer memory copy, use
 * the kind CUPTI_ACTIVITY_KIND_MEMCPY2"): a memcpy record of copy kind PTOP. It has one
 * correlation id, the call's (the validator pairs a nested driver call's id with its
 * runtime call). The source and destination devices are not kept. */
static void decode_memcpy_ptop(const struct lin_cupti_decoder *d, const CUpti_Activity *r,
			       struct lin_cupti_decode_stats *st)
{
	const CUpti_ActivityMemcpyPtoP4 *m = (const void *)r;
	struct lin_tf_memop out = MEMOP_OF(m, m->correlationId, m->copyKind);

	lin_tf_memcpy(d->pk, &out);
	st->memcpy++;
}

static void decode_memset(const struct lin_cupti_decoder *d, const CUpti_Activity *r,
			  struct lin_cupti_decode_stats *st)
{
	const CUpti_ActivityMemset4 *m = (const void *)r;
	struct lin_tf_memop out = MEMOP_OF(m, m->correlationId, m->value);

	lin_tf_memset(d->pk, &out);
	st->memset++;
}

static void decode_graph_trace(const struct lin_cupti_decoder *d, const CUpti_Activity *r,
			       struct lin_cupti_decode_stats *st)
{
	const CUpti_ActivityGraphTrace2 *g = (const void *)r;

	lin_tf_graph_trace(d->pk, g->correlationId, g->start, g->end, g->deviceId, g->contextId,
			   g->streamId, g->graphId);
	st->graph_trace++;
}

/*
 * A cudaEventSyncId that names nothing: CUPTI_SYNCHRONIZATION_INVALID_VALUE is a 32-bit
 * all-ones (cupti_activity.h) while the field is 64 bits wide, so both widths of all-ones
 * are taken as the marker; 0 too, which would otherwise join every recording and wait
 * that lack an id to one another.
 */
static uint64_t sync_id_of(uint64_t v)
{
	return v == 0 || v == CUPTI_SYNCHRONIZATION_INVALID_VALUE || v == UINT64_MAX ? LIN_NIL : v;
}

static void decode_cuda_event(const struct lin_cupti_decoder *d, const CUpti_Activity *r,
			      struct lin_cupti_decode_stats *st)
{
	const CUpti_ActivityCudaEvent2 *e = (const void *)r;

	/* deviceTimestamp is not kept: it needs cuptiActivityEnableCudaEventDeviceTimestamps. */
	lin_tf_cuda_event(d->pk, e->correlationId, e->deviceId, e->contextId, e->streamId,
			  e->eventId, sync_id_of(e->cudaEventSyncId));
	st->cuda_event++;
}

/* A 32-bit field of a synchronization record: CUPTI_SYNCHRONIZATION_INVALID_VALUE (the
 * value of CUPTI_INVALID_STREAM_ID too) when it does not apply. */
static uint64_t sync_field(uint32_t v, bool applies)
{
	return applies && v != CUPTI_SYNCHRONIZATION_INVALID_VALUE ? v : LIN_NIL;
}

static void decode_sync(const struct lin_cupti_decoder *d, const CUpti_Activity *r,
			struct lin_cupti_decode_stats *st)
{
	const CUpti_ActivitySynchronization2 *s = (const void *)r;
	uint32_t type = (uint32_t)s->type;
	/* Which fields apply to which call (CUpti_ActivitySynchronization2): streamId "not
	 * valid for cuCtxSynchronize, cuEventSynchronize", cudaEventId "not valid for
	 * cuCtxSynchronize, cuStreamSynchronize", cudaEventSyncId "valid only for
	 * synchronization records related to CUDA Events". A type this build does not know
	 * keeps whatever is not the invalid marker. */
	bool known = type >= LIN_SYNC_EVENT_SYNCHRONIZE && type <= LIN_SYNC_CONTEXT_SYNCHRONIZE;
	bool has_stream = !known || type == LIN_SYNC_STREAM_WAIT_EVENT ||
			  type == LIN_SYNC_STREAM_SYNCHRONIZE;
	bool has_event = !known || type == LIN_SYNC_STREAM_WAIT_EVENT ||
			 type == LIN_SYNC_EVENT_SYNCHRONIZE;

	/* 0 for both times: "timestamp information could not be collected". */
	lin_tf_sync(d->pk, s->correlationId, type, s->start ? s->start : LIN_NIL,
		    s->end ? s->end : LIN_NIL, s->contextId, sync_field(s->streamId, has_stream),
		    sync_field(s->cudaEventId, has_event),
		    has_event ? sync_id_of(s->cudaEventSyncId) : LIN_NIL);
	st->sync++;
}

static bool decode_one(const struct lin_cupti_decoder *d, const CUpti_Activity *r,
		       struct lin_cupti_decode_stats *st)
{
	switch (r->kind) {
	case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: decode_ext(d, r, st); return true;
	case CUPTI_ACTIVITY_KIND_RUNTIME:
	case CUPTI_ACTIVITY_KIND_DRIVER:
	case CUPTI_ACTIVITY_KIND_INTERNAL_LAUNCH_API: decode_api(d, r, st); return true;
	case CUPTI_ACTIVITY_KIND_KERNEL:
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: decode_kernel(d, r, st); return true;
	case CUPTI_ACTIVITY_KIND_MEMCPY: decode_memcpy(d, r, st); return true;
	case CUPTI_ACTIVITY_KIND_MEMCPY2: decode_memcpy_ptop(d, r, st); return true;
	case CUPTI_ACTIVITY_KIND_MEMSET: decode_memset(d, r, st); return true;
	case CUPTI_ACTIVITY_KIND_GRAPH_TRACE: decode_graph_trace(d, r, st); return true;
	case CUPTI_ACTIVITY_KIND_CUDA_EVENT: decode_cuda_event(d, r, st); return true;
	case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: decode_sync(d, r, st); return true;
	default: return false;
	}
}

/* ------------------------------------------------------------------ layouts */

_Static_assert(CUPTI_ACTIVITY_KIND_COUNT <= LIN_CUPTI_NKINDS, "layout table too small");

/* The kinds decode_one reads and the size of the struct it reads them as. */
static const struct {
	uint32_t kind;
	uint16_t size;
} decoded_kinds[] = {
	{ CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION, sizeof(CUpti_ActivityExternalCorrelation) },
	{ CUPTI_ACTIVITY_KIND_RUNTIME, sizeof(CUpti_ActivityAPI) },
	{ CUPTI_ACTIVITY_KIND_DRIVER, sizeof(CUpti_ActivityAPI) },
	{ CUPTI_ACTIVITY_KIND_INTERNAL_LAUNCH_API, sizeof(CUpti_ActivityAPI) },
	{ CUPTI_ACTIVITY_KIND_KERNEL, sizeof(CUpti_ActivityKernel10) },
	{ CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, sizeof(CUpti_ActivityKernel10) },
	{ CUPTI_ACTIVITY_KIND_MEMCPY, sizeof(CUpti_ActivityMemcpy6) },
	{ CUPTI_ACTIVITY_KIND_MEMCPY2, sizeof(CUpti_ActivityMemcpyPtoP4) },
	{ CUPTI_ACTIVITY_KIND_MEMSET, sizeof(CUpti_ActivityMemset4) },
	{ CUPTI_ACTIVITY_KIND_GRAPH_TRACE, sizeof(CUpti_ActivityGraphTrace2) },
	{ CUPTI_ACTIVITY_KIND_CUDA_EVENT, sizeof(CUpti_ActivityCudaEvent2) },
	{ CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, sizeof(CUpti_ActivitySynchronization2) },
};
#define N_DECODED (sizeof(decoded_kinds) / sizeof(decoded_kinds[0]))

void lin_cupti_layouts_eval(struct lin_cupti_layouts *l, uint32_t version,
			    lin_cupti_stride_fn stride, void *user)
{
	/* From CUPTI 13 the API version is xxyyzz with xx the CUDA major; before, 1..28. */
	bool same_major = version >= 10000 && version / 10000 == CUPTI_API_VERSION / 10000;

	memset(l, 0, sizeof(*l));
	l->version = version;
	l->built_for = CUPTI_API_VERSION;
	for (uint32_t k = 1; k < CUPTI_ACTIVITY_KIND_COUNT; k++) {
		size_t s = stride(k, user);

		l->stride[k] = s <= UINT16_MAX ? (uint16_t)s : 0;
		if (l->stride[k] && (!l->min_stride || l->stride[k] < l->min_stride))
			l->min_stride = l->stride[k];
	}
	for (size_t i = 0; i < N_DECODED; i++) {
		uint32_t k = decoded_kinds[i].kind;

		l->ok[k] = same_major && l->stride[k] == decoded_kinds[i].size;
		l->n_refused += !l->ok[k];
	}
}

size_t lin_cupti_stride_probe(uint32_t kind, void *user)
{
	const struct lin_cupti_api *c = user ? user : lin_cupti_api(NULL);
	_Alignas(8) uint8_t buf[4096];
	CUpti_Activity *r = NULL;
	uint32_t marker = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;

	if (!c)
		return 0;
	memset(buf, 0, sizeof(buf));
	for (size_t off = 8; off + sizeof(CUpti_ActivityExternalCorrelation) <= sizeof(buf); off += 8)
		memcpy(buf + off, &marker, sizeof(marker));
	memcpy(buf, &kind, sizeof(kind));
	if (c->cuptiActivityGetNextRecord(buf, sizeof(buf), &r) != CUPTI_SUCCESS || (uint8_t *)r != buf)
		return 0;
	if (c->cuptiActivityGetNextRecord(buf, sizeof(buf), &r) != CUPTI_SUCCESS)
		return 0;
	return (size_t)((uint8_t *)r - buf);
}

static pthread_once_t layouts_once = PTHREAD_ONCE_INIT;
static struct lin_cupti_layouts layouts_loaded;

static void layouts_measure(void)
{
	const struct lin_cupti_api *c = lin_cupti_api(NULL);
	uint32_t version = 0;

	/* Without libcupti every stride is 0: each decoded kind is refused, nothing is read. */
	if (!c || c->cuptiGetVersion(&version) != CUPTI_SUCCESS)
		version = 0;
	lin_cupti_layouts_eval(&layouts_loaded, version, lin_cupti_stride_probe, (void *)c);
}

const struct lin_cupti_layouts *lin_cupti_layouts(void)
{
	pthread_once(&layouts_once, layouts_measure);
	return &layouts_loaded;
}

static bool decoded_kind(uint32_t kind)
{
	for (size_t i = 0; i < N_DECODED; i++)
		if (decoded_kinds[i].kind == kind)
			return true;
	return false;
}

/* ------------------------------------------------------------------ the walk */

/* What one buffer lost, reported after its walk. */
struct walk_loss {
	uint64_t stepped; /* records stepped over undecoded (source 4) */
	const char *stepped_why;
	uint64_t refused[LIN_CUPTI_NKINDS]; /* records per kind of an unread layout (source 6) */
	uint64_t n_refused;
	bool rest; /* the walk ended early (source 5) */
	uint32_t rest_kind;
	size_t rest_at, rest_bytes;
};

static uint32_t kind_at(const uint8_t *buf, size_t valid, size_t off)
{
	uint32_t k = 0;

	if (off + sizeof(k) <= valid)
		memcpy(&k, buf + off, sizeof(k));
	return k;
}

static bool all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

static size_t stride_of(const struct lin_cupti_layouts *l, uint32_t kind)
{
	return kind < LIN_CUPTI_NKINDS ? l->stride[kind] : 0;
}

/*
 * The walk stopped at @at (the end of the last record it returned). Account for the bytes
 * from there to @valid: step over a record whose size is known and return where the walk
 * resumes, or give up on the rest of the buffer and return @valid.
 */
static size_t account_stop(const struct lin_cupti_layouts *l, const uint8_t *buf, size_t valid,
			   size_t at, struct walk_loss *loss, struct lin_cupti_decode_stats *st)
{
	size_t left = valid - at;
	uint32_t k = kind_at(buf, valid, at);
	size_t s = stride_of(l, k);

	if (all_zero(buf + at, left))
		return valid; /* zero fill holds no record (a record's kind is never 0) */
	if (s && left < s) {
		/* A known record cut short by the valid size: CUPTI ends its walk silently. */
		loss->stepped++;
		loss->stepped_why = "truncated_record";
		st->undecodable++;
		st->lost_bytes += left;
		return valid;
	}
	if (s) {
		/* A record of known size CUPTI refuses (an incomplete one): step over it. */
		loss->stepped++;
		loss->stepped_why = "refused_record";
		st->undecodable++;
		st->lost_bytes += s;
		return at + s;
	}
	loss->rest = true;
	loss->rest_kind = k;
	loss->rest_at = at;
	loss->rest_bytes = left;
	st->invalid++;
	st->lost_bytes += left;
	return valid;
}

static void report_loss(const struct lin_cupti_decoder *d, const struct lin_cupti_layouts *l,
			const struct walk_loss *loss)
{
	char why[160];

	for (uint32_t k = 0; k < LIN_CUPTI_NKINDS; k++) {
		if (!loss->refused[k])
			continue;
		snprintf(why, sizeof(why),
			 "layout_unsupported: kind %u, %u bytes in libcupti %u, built for %u", k,
			 (unsigned)l->stride[k], l->version, l->built_for);
		lin_tf_dropped(d->pk, LIN_DROP_CUPTI_LAYOUT, loss->refused[k], LIN_NIL, why);
	}
	if (loss->stepped)
		lin_tf_dropped(d->pk, LIN_DROP_CUPTI_UNDECODABLE, loss->stepped, LIN_NIL,
			       loss->stepped_why);
	if (loss->rest) {
		size_t most = l->min_stride ? loss->rest_bytes / l->min_stride : 0;

		snprintf(why, sizeof(why),
			 "rest_of_buffer: kind %u at byte %zu, %zu bytes, up to %zu records",
			 loss->rest_kind, loss->rest_at, loss->rest_bytes, most ? most : 1);
		lin_tf_dropped(d->pk, LIN_DROP_CUPTI_REST, 1, LIN_NIL, why);
	}
}

/* Walk @buf[@base, @valid) with cuptiActivityGetNextRecord; return where it stopped. */
static size_t walk(const struct lin_cupti_decoder *d, const struct lin_cupti_layouts *l,
		   const uint8_t *buf, size_t base, size_t valid, struct walk_loss *loss,
		   struct lin_cupti_decode_stats *st)
{
	const struct lin_cupti_api *c = lin_cupti_api(NULL);
	CUpti_Activity *r = NULL;
	size_t end = base;

	if (!c)
		return end; /* no libcupti to walk with: the rest of the buffer is reported lost */
	for (;;) {
		/* GetNextRecord does not write through the buffer; its prototype is not const. */
		CUptiResult res = c->cuptiActivityGetNextRecord((uint8_t *)(uintptr_t)(buf + base),
								valid - base, &r);

		if (res != CUPTI_SUCCESS || !r)
			return end; /* MAX_LIMIT_REACHED or INVALID_KIND: the caller looks at @end */
		uint32_t k = r->kind;
		size_t s = stride_of(l, k);

		st->records++;
		end = (size_t)((const uint8_t *)r - buf) + (s ? s : sizeof(CUpti_Activity));
		if (k < LIN_CUPTI_NKINDS && decoded_kind(k) && !l->ok[k]) {
			loss->refused[k]++;
			loss->n_refused++;
			st->unsupported++;
			st->lost_bytes += s;
		} else if (!decode_one(d, r, st)) {
			st->skipped++;
		}
	}
}

int lin_cupti_decode_buffer(const struct lin_cupti_decoder *d, const uint8_t *buf, size_t valid,
			    struct lin_cupti_decode_stats *st)
{
	struct lin_cupti_decode_stats scratch;
	const struct lin_cupti_layouts *l;
	struct walk_loss loss;
	size_t at = 0;

	if (!d || !d->pk || (!buf && valid > 0))
		return -EINVAL;
	if (!st) {
		memset(&scratch, 0, sizeof(scratch));
		st = &scratch;
	}
	st->buffers++;
	if (valid == 0)
		return 0;
	l = d->layouts ? d->layouts : lin_cupti_layouts();
	memset(&loss, 0, sizeof(loss));
	while (at < valid) {
		at = walk(d, l, buf, at, valid, &loss, st);
		/* GetNextRecord ended before @valid, whether it said so (INVALID_KIND) or not
		 * (MAX_LIMIT_REACHED at a cut-short record or an out-of-range kind). */
		if (at < valid)
			at = account_stop(l, buf, valid, at, &loss, st);
	}
	report_loss(d, l, &loss);
	return loss.stepped || loss.rest || loss.n_refused ? -LIN_EBACKEND : 0;
}

void lin_cupti_stats_add(struct lin_cupti_decode_stats *to, const struct lin_cupti_decode_stats *from)
{
	/* Every field after sz is a uint64_t counter (lineage/cupti.h). */
	size_t n = (to->sz < sizeof(*to) ? to->sz : sizeof(*to));
	const uint8_t *src = (const uint8_t *)from;
	uint8_t *dst = (uint8_t *)to;

	for (size_t off = sizeof(size_t); off + sizeof(uint64_t) <= n; off += sizeof(uint64_t)) {
		uint64_t a, b;

		memcpy(&a, dst + off, sizeof(a));
		memcpy(&b, src + off, sizeof(b));
		a += b;
		memcpy(dst + off, &a, sizeof(a));
	}
}
