/* SPDX-License-Identifier: MIT */
/*
 * lineage/cupti.h - the CUPTI binding: attach mode and launch-API recognition.
 *
 * The live binding needs no call from here: create the runtime with
 * backend = LIN_BACKEND_CUPTI and it probes CUPTI once, pushes the current epoch as an
 * external correlation id around each lin_launch_begin/end, collects activity buffers and
 * decodes them into the trace.
 *
 * Attach mode is for processes where someone else owns CUPTI's activity buffers and can
 * hand them over (a framework profiler whose buffer callback you control; not Nsight,
 * which cannot): that owner hands each completed buffer to lin_cupti_attach_decode, and
 * lineage decodes it into the runtime's trace exactly as the live binding would. The live
 * binding falls back to it by itself when another CUPTI client holds the subscriber.
 * docs/cupti.md shows the wiring.
 *
 * These functions exist only in a library built with CUPTI; its consumers then have
 * LIN_HAVE_CUPTI defined (by `pkg-config --cflags lineage` and by the CMake target
 * lineage::lineage), so code can test for them. The header itself needs no CUPTI header.
 */
#ifndef LINEAGE_CUPTI_H
#define LINEAGE_CUPTI_H

#include <stddef.h>
#include <stdint.h>

#include "lineage/common.h"
#include "lineage/runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * struct lin_cupti_decode_stats - what decoding found; counters are added to, never reset.
 * Set sz = sizeof(struct lin_cupti_decode_stats) and zero the rest before the first use.
 * Losses (sources 4-6 of the trace's dropped records) are explained in docs/cupti.md.
 */
struct lin_cupti_decode_stats {
	size_t sz;
	uint64_t buffers;         /* buffers decoded */
	uint64_t records;         /* activity records walked */
	uint64_t ext_correlation; /* EXTERNAL_CORRELATION records (any external kind) */
	uint64_t api;             /* RUNTIME, DRIVER and INTERNAL_LAUNCH_API records */
	uint64_t launch_api;      /* ... of which name a recognised launch API */
	uint64_t kernels;         /* KERNEL and CONCURRENT_KERNEL records */
	uint64_t graph_kernels;   /* ... of which ran as a graph node (graphNodeId != 0) */
	uint64_t device_launched; /* ... of which belong to a device-launched graph */
	uint64_t memcpy;
	uint64_t memset;
	uint64_t graph_trace;
	uint64_t skipped; /* records of kinds the trace has no record for */
	uint64_t invalid; /* walks stopped by a record nothing can step over (source 5) */
	/* Since 0.3 (a caller's smaller sz gets the fields above only): */
	uint64_t undecodable; /* records stepped over undecoded: truncated, refused (source 4) */
	uint64_t unsupported; /* records of a layout this build does not read (source 6) */
	uint64_t lost_bytes;  /* bytes of the records and buffer rests counted above */
	/* Added after 0.4.0 (CHANGELOG.md, Unreleased): */
	uint64_t cuda_event; /* CUDA_EVENT records (cudaEventRecord; trace record cuda_event) */
	uint64_t sync;       /* SYNCHRONIZATION records (trace record sync) */
};

/* sz of struct lin_cupti_decode_stats in 0.1 and 0.2 (accepted by lin_cupti_attach_decode). */
#define LIN_CUPTI_DECODE_STATS_SIZE_V1 (sizeof(size_t) + 13 * sizeof(uint64_t))

/* What lin_cupti_launch_api recognises. */
enum lin_cupti_launch {
	LIN_CUPTI_LAUNCH_NONE = 0, /* not a launch API (or not one this library knows) */
	LIN_CUPTI_LAUNCH_KERNEL = 1, /* launches one kernel: <<<>>>, cudaLaunchKernel(ExC), cuLaunchKernel(Ex), cooperative */
	LIN_CUPTI_LAUNCH_GRAPH = 2, /* launches a graph exec: cudaGraphLaunch, cuGraphLaunch */
	LIN_CUPTI_LAUNCH_MEMCPY = 3, /* an asynchronous copy: cudaMemcpy*Async, cuMemcpy*Async (since 0.3) */
	LIN_CUPTI_LAUNCH_MEMSET = 4, /* an asynchronous memset: cudaMemset*Async, cuMemsetD*Async (since 0.3) */
};

/*
 * lin_cupti_launch_api - classify a CUPTI callback id.
 * @domain: LIN_API_RUNTIME (1) or LIN_API_DRIVER (2), as in the trace's api records.
 * @cbid: the CUpti_runtime_api_trace_cbid or CUpti_driver_api_trace_cbid value, including
 * CUDA 13's __cudaLaunchKernel (505/506, what <<<>>> compiles to) and the _ptsz variants.
 * The table is LIN_LAUNCH_APIS in lineage/trace_format.h (the values are enum
 * lin_launch_kind's), the same one lineage-validate holds launches to.
 * Return: a LIN_CUPTI_LAUNCH_* value; LIN_CUPTI_LAUNCH_NONE for anything else.
 * Context: any thread; pure. Since: 0.1
 */
LIN_API int lin_cupti_launch_api(uint32_t domain, uint32_t cbid);

/*
 * lin_cupti_attach_decode - decode one CUPTI activity buffer collected by someone else
 * into @rt's trace: external correlations, runtime/driver/internal-launch API records,
 * kernels, memcpys, memsets, graph traces, CUDA event recordings and synchronizations
 * (since 0.4); kernel names are interned in the trace.
 * Buffers may be handed over in any order and from any thread.
 * @buf, @valid: the buffer and its valid size, as CUPTI passed them to the owner's
 * buffer-completed callback. @st: counters to add to, or NULL.
 * Return: 0; -EINVAL (NULL @rt, NULL @buf with @valid > 0, @st->sz smaller than
 * LIN_CUPTI_DECODE_STATS_SIZE_V1); -LIN_ETRACE (the runtime writes no trace: nothing was
 * decoded); -LIN_EBACKEND (records were lost: cut short, of a layout this build does not
 * read, or after a record nothing can step over; every decodable record was written and
 * dropped records say what was lost, docs/cupti.md).
 * Ownership: @buf stays the caller's; it is not kept after the call returns.
 * Context: any thread, including inside the owner's CUPTI buffer-completed callback; takes
 * the runtime's output lock; never calls CUPTI other than cuptiActivityGetNextRecord.
 * Since: 0.1
 */
LIN_API int lin_cupti_attach_decode(lin_runtime *rt, const void *buf, size_t valid,
				    struct lin_cupti_decode_stats *st);

/*
 * lin_cupti_attach_dropped - report @count records the owner lost (its
 * cuptiActivityGetNumDroppedRecords, or buffers it declined); written as a dropped record.
 * @source: LIN_DROP_CUPTI_RECORDS (2) or LIN_DROP_CUPTI_BUFFER (3).
 * Return: 0 (also for @count 0, which writes nothing); -EINVAL (NULL @rt, other source).
 * Context: any thread, including a CUPTI callback. Since: 0.1
 */
LIN_API int lin_cupti_attach_dropped(lin_runtime *rt, uint32_t source, uint64_t count);

/*
 * lin_cupti_push_ops - a binding backend that only pushes and pops external correlation
 * ids through CUPTI (no activity callbacks, no subscriber), for attach mode: pass it as
 * backend_ops with backend = LIN_BACKEND_CUSTOM. CUPTI is probed once per process (one
 * push and pop); after a failed probe nothing calls CUPTI again.
 * @ext_kind: the external-correlation kind to probe (0 = CUSTOM2).
 * @ops: filled on success. @status: set to a static string ("ok" or why not); may be NULL.
 * Return: 0; -LIN_ENOCUPTI (CUPTI unusable in this process, e.g. no driver); -EINVAL.
 * Context: any thread; the first call blocks for the probe. Since: 0.1
 */
LIN_API int lin_cupti_push_ops(uint32_t ext_kind, struct lin_backend_ops *ops, const char **status);

#ifdef __cplusplus
}
#endif
#endif
