/* SPDX-License-Identifier: MIT */
/*
 * decode.c - CUPTI activity records -> trace records (GPU records 20-25 of
 * docs/trace-format.md). Stateless per buffer: each activity record becomes at most one
 * trace record, so records may arrive in any order, from any per-thread buffer.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include <cupti.h>

#include "decode.h"
#include "tracefmt.h"

/*
 * Layouts this decoder reads, pinned against CUPTI 13.0 (../shared CUPTI-NOTES.md §2-4, §7).
 * A header upgrade that moves a field fails the build instead of decoding garbage.
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
_Static_assert(sizeof(CUpti_ActivityMemset4) == 88, "Memset4 size");
_Static_assert(sizeof(CUpti_ActivityGraphTrace2) == 56, "GraphTrace2 size");
_Static_assert(offsetof(CUpti_ActivityGraphTrace2, correlationId) == 4, "gt.corr@4");
_Static_assert(offsetof(CUpti_ActivityGraphTrace2, graphId) == 28, "gt.graph@28");
_Static_assert(offsetof(CUpti_ActivityGraphTrace2, streamId) == 36, "gt.stream@36");

/* The launch table's numbers are CUPTI's: checked against its enums at build time. */
#define CHECK_LAUNCH_API(d, c, k, n) _Static_assert((c) == CUPTI_##n, #n);
LIN_LAUNCH_APIS(CHECK_LAUNCH_API)
LIN_CAPTURE_APIS(CHECK_LAUNCH_API)
#undef CHECK_LAUNCH_API
_Static_assert((int)LIN_CUPTI_LAUNCH_KERNEL == (int)LIN_LAUNCH_KERNEL &&
	       (int)LIN_CUPTI_LAUNCH_GRAPH == (int)LIN_LAUNCH_GRAPH &&
	       (int)LIN_CUPTI_LAUNCH_MEMCPY == (int)LIN_LAUNCH_MEMCPY &&
	       (int)LIN_CUPTI_LAUNCH_MEMSET == (int)LIN_LAUNCH_MEMSET, "launch kinds");

LIN_API int lin_cupti_launch_api(uint32_t domain, uint32_t cbid)
{
	return (int)lin_launch_kind_of(domain, cbid);
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
		out.cbid = LIN_TF_NIL;
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
		.grid_id = (uint64_t)k->gridId,  /* CUPTI_GRID_ID_UNKNOWN (0) -> nil */
		.graph_id = k->graphId,
		.graph_node_id = k->graphNodeId,
		.queued_dev = k->queued,         /* 0: latency timestamps were not enabled */
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

static void decode_memcpy(const struct lin_cupti_decoder *d, const CUpti_Activity *r,
			  struct lin_cupti_decode_stats *st)
{
	const CUpti_ActivityMemcpy6 *m = (const void *)r;
	struct lin_tf_memop out = {
		.correlation = m->correlationId,
		.start_dev = m->start,
		.end_dev = m->end,
		.device = m->deviceId,
		.context = m->contextId,
		.stream = m->streamId,
		.bytes = m->bytes,
		.kind_or_value = m->copyKind,
		.graph_id = m->graphId,
		.graph_node_id = m->graphNodeId,
	};

	lin_tf_memcpy(d->pk, &out);
	st->memcpy++;
}

static void decode_memset(const struct lin_cupti_decoder *d, const CUpti_Activity *r,
			  struct lin_cupti_decode_stats *st)
{
	const CUpti_ActivityMemset4 *m = (const void *)r;
	struct lin_tf_memop out = {
		.correlation = m->correlationId,
		.start_dev = m->start,
		.end_dev = m->end,
		.device = m->deviceId,
		.context = m->contextId,
		.stream = m->streamId,
		.bytes = m->bytes,
		.kind_or_value = m->value,
		.graph_id = m->graphId,
		.graph_node_id = m->graphNodeId,
	};

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

static void decode_one(const struct lin_cupti_decoder *d, const CUpti_Activity *r,
		       struct lin_cupti_decode_stats *st)
{
	switch (r->kind) {
	case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION:
		decode_ext(d, r, st);
		break;
	case CUPTI_ACTIVITY_KIND_RUNTIME:
	case CUPTI_ACTIVITY_KIND_DRIVER:
	case CUPTI_ACTIVITY_KIND_INTERNAL_LAUNCH_API:
		decode_api(d, r, st);
		break;
	case CUPTI_ACTIVITY_KIND_KERNEL:
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
		decode_kernel(d, r, st);
		break;
	case CUPTI_ACTIVITY_KIND_MEMCPY:
		decode_memcpy(d, r, st);
		break;
	case CUPTI_ACTIVITY_KIND_MEMSET:
		decode_memset(d, r, st);
		break;
	case CUPTI_ACTIVITY_KIND_GRAPH_TRACE:
		decode_graph_trace(d, r, st);
		break;
	default:
		st->skipped++;
		break;
	}
}

int lin_cupti_decode_buffer(const struct lin_cupti_decoder *d, const uint8_t *buf, size_t valid,
			    struct lin_cupti_decode_stats *st)
{
	struct lin_cupti_decode_stats scratch;
	CUpti_Activity *r = NULL;

	if (!d || !d->pk || (!buf && valid > 0))
		return -EINVAL;
	if (!st) {
		memset(&scratch, 0, sizeof(scratch));
		st = &scratch;
	}
	st->buffers++;
	if (valid == 0)
		return 0;
	for (;;) {
		/* GetNextRecord does not write through the buffer; its prototype is not const. */
		CUptiResult res = cuptiActivityGetNextRecord((uint8_t *)(uintptr_t)buf, valid, &r);

		if (res == CUPTI_ERROR_MAX_LIMIT_REACHED)
			return 0;
		if (res != CUPTI_SUCCESS || !r) {
			/* Unknown kind or incomplete record: CUPTI cannot step over it. */
			st->invalid++;
			lin_tf_dropped(d->pk, LIN_DROP_CUPTI_RECORDS, 1, LIN_TF_NIL,
				       "undecodable_record");
			return -LIN_EBACKEND;
		}
		st->records++;
		decode_one(d, r, st);
	}
}
