/* SPDX-License-Identifier: MIT */
/*
 * lineage/trace_format.h - constants of the msgpack trace format (docs/trace-format.md).
 *
 * Header-only: readers of the format (lineage-validate, third-party tools) include it
 * without linking the runtime.
 */
#ifndef LINEAGE_TRACE_FORMAT_H
#define LINEAGE_TRACE_FORMAT_H

#include "lineage/version.h"

#define LIN_TRACE_FORMAT_NAME "lineage-trace"
#define LIN_TRUTH_FORMAT_NAME "lineage-truth"
/* Cause truth: why each launch of a synthetic workload started late (docs/attribution.md). */
#define LIN_CAUSE_TRUTH_FORMAT_NAME "lineage-cause-truth"

/* Record types: element 0 of every record array. */
enum lin_rec_type {
	LIN_REC_REQUEST_BEGIN = 1,
	LIN_REC_REQUEST_END = 2,
	LIN_REC_EPOCH_DECLARE = 3,
	LIN_REC_EPOCH_REISSUE = 4,
	LIN_REC_EPOCH_RETIRE = 5,
	LIN_REC_TOKEN_CAPTURE = 6,
	LIN_REC_TOKEN_ADOPT = 7,
	LIN_REC_SCOPE_CLOSE = 8,
	LIN_REC_MISUSE = 9,
	LIN_REC_LAUNCH = 10,
	LIN_REC_STRING = 11,
	LIN_REC_REQUEST_LINK = 12, /* since format 1.1 */
	LIN_REC_LAUNCH_END = 13,   /* since format 1.2 */
	LIN_REC_EPOCH_SHARE = 14,  /* since format 1.5 */
	LIN_REC_EXT_CORRELATION = 20,
	LIN_REC_API = 21,
	LIN_REC_KERNEL = 22,
	LIN_REC_MEMCPY = 23,
	LIN_REC_MEMSET = 24,
	LIN_REC_GRAPH_TRACE = 25,
	LIN_REC_GRAPH_NODE = 26,
	LIN_REC_GRAPH_NODE_CLONE = 27,
	LIN_REC_GRAPH_EXEC = 28,
	LIN_REC_GRAPH_LAUNCH = 29,
	LIN_REC_DROPPED = 30,
	LIN_REC_CLOCK = 31,
	LIN_REC_GRAPH_NODE_UPDATE = 32,
	LIN_REC_TRACE_END = 33,
	LIN_REC_CUDA_EVENT = 34, /* since format 1.3 */
	LIN_REC_SYNC = 35,       /* since format 1.3 */
	LIN_REC_HOST_SCHED = 36, /* since format 1.3 */
	LIN_REC_GRAPH_EDGE = 37, /* since format 1.3 */
	LIN_REC_TRUTH = 40,
	LIN_REC_LAUNCH_CAUSE = 41, /* cause-truth files only */
};

/* Number of fields (after the type) each record has in format 1.2. */
#define LIN_REC_NFIELDS_REQUEST_BEGIN 6
#define LIN_REC_NFIELDS_REQUEST_END 3
#define LIN_REC_NFIELDS_EPOCH_DECLARE 7
#define LIN_REC_NFIELDS_EPOCH_REISSUE 5
#define LIN_REC_NFIELDS_EPOCH_RETIRE 4
#define LIN_REC_NFIELDS_TOKEN_CAPTURE 6
#define LIN_REC_NFIELDS_TOKEN_ADOPT 9 /* 8 before format 1.4 (no late) */
#define LIN_REC_NFIELDS_SCOPE_CLOSE 5
#define LIN_REC_NFIELDS_MISUSE 7
#define LIN_REC_NFIELDS_LAUNCH \
	10 /* 8 in format 1.0 and 1.1 (no depth), 9 in 1.2 and 1.3 (no late) */
#define LIN_REC_NFIELDS_STRING 2
#define LIN_REC_NFIELDS_REQUEST_LINK 8
#define LIN_REC_NFIELDS_LAUNCH_END 3
#define LIN_REC_NFIELDS_EXT_CORRELATION 3
#define LIN_REC_NFIELDS_API 8
#define LIN_REC_NFIELDS_KERNEL 13
#define LIN_REC_NFIELDS_MEMCPY 10
#define LIN_REC_NFIELDS_MEMSET 10
#define LIN_REC_NFIELDS_GRAPH_TRACE 7
#define LIN_REC_NFIELDS_GRAPH_NODE 7
#define LIN_REC_NFIELDS_GRAPH_NODE_CLONE 4
#define LIN_REC_NFIELDS_GRAPH_EXEC 4
#define LIN_REC_NFIELDS_GRAPH_LAUNCH 8
#define LIN_REC_NFIELDS_DROPPED 4
#define LIN_REC_NFIELDS_CLOCK 3 /* 2 in format 1.0 and 1.1 (no host_after_ns) */
#define LIN_REC_NFIELDS_GRAPH_NODE_UPDATE 5
#define LIN_REC_NFIELDS_TRACE_END 2
#define LIN_REC_NFIELDS_CUDA_EVENT 6
#define LIN_REC_NFIELDS_SYNC 8
#define LIN_REC_NFIELDS_HOST_SCHED 5
#define LIN_REC_NFIELDS_GRAPH_EDGE 3
#define LIN_REC_NFIELDS_EPOCH_SHARE 3
#define LIN_REC_NFIELDS_TRUTH 5        /* 4 in format 1.0 and 1.1 (no correlation) */
#define LIN_REC_NFIELDS_LAUNCH_CAUSE 8 /* 7 without the optional trailing correlation */

/* cause in launch_cause records: the one delay a synthetic workload injected before a
 * launch's start, from its own bookkeeping (docs/attribution.md, "Causes"). */
#define LIN_TRUTH_CAUSES(X) \
	X(NONE, 0, "none") \
	X(HANDOFF_WAIT, 1, "handoff_wait") \
	X(DESCHEDULED, 2, "descheduled") \
	X(API_CALL, 3, "api_call") \
	X(SUBMIT_DELAY, 4, "submit_delay") \
	X(STREAM_DEPENDENCY, 5, "stream_dependency") \
	X(EVENT_DEPENDENCY, 6, "event_dependency") \
	X(GRAPH_DEPENDENCY, 7, "graph_dependency") \
	X(DEVICE_BUSY, 8, "device_busy") \
	X(QUEUEING, 9, "queueing") \
	X(AMBIGUOUS, 10, "ambiguous")
#define LIN_TC_ENUM(e, v, s) LIN_TC_##e = v,
enum lin_truth_cause { LIN_TRUTH_CAUSES(LIN_TC_ENUM) LIN_TC_N };
#undef LIN_TC_ENUM

/* target_kind in token and scope records. */
enum lin_target_kind { LIN_TARGET_REQUEST = 1, LIN_TARGET_EPOCH = 2 };

/* late in token_adopt and launch records (since 1.4): the version the work was captured
 * under had ended before the adopt or the launch (docs/trace-format.md, "Late work"). */
enum lin_late {
	LIN_LATE_NONE = 0,     /* the version was current */
	LIN_LATE_ENDED = 1,    /* its epoch retired (or its request ended) */
	LIN_LATE_REISSUED = 2, /* its epoch was re-issued: a newer version is current */
};

/* The external id a late launch pushes: its epoch id with one of these bits (ids never
 * reach 2^62). LIN_EXT_ID_MASK takes them off. */
#define LIN_EXT_LATE_ENDED (1ull << 63)
#define LIN_EXT_LATE_REISSUED (1ull << 62)
#define LIN_EXT_ID_MASK (~(LIN_EXT_LATE_ENDED | LIN_EXT_LATE_REISSUED))

/* shares in epoch_share records (since 1.5): one element per request of the epoch, in
 * its epoch_declare's order: the tokens the request contributes to the launch, shifted
 * left by LIN_SHARE_SHIFT, or'ed with LIN_SHARE_* flags (docs/trace-format.md). */
#define LIN_SHARE_PREFILL 1u     /* its tokens are prompt tokens (a prefill chunk) */
#define LIN_SHARE_DECODE 2u      /* its tokens are generated tokens (decode) */
#define LIN_SHARE_FIRST_TOKEN 4u /* this launch produces the request's first token */
#define LIN_SHARE_FLAGS_ALL 7u
#define LIN_SHARE_SHIFT 4
#define LIN_SHARE_PACK(tokens, flags) (((uint64_t)(tokens) << LIN_SHARE_SHIFT) | (flags))
#define LIN_SHARE_TOKENS(s) ((s) >> LIN_SHARE_SHIFT)
#define LIN_SHARE_FLAGS(s) ((s) & ((1u << LIN_SHARE_SHIFT) - 1))

/* reason in epoch_reissue. */
enum lin_reissue_reason { LIN_REISSUE_OTHER = 0, LIN_REISSUE_RETRY = 1, LIN_REISSUE_REPLAY = 2 };

/* sync_type in sync records: CUPTI's CUpti_ActivitySynchronizationType values. */
enum lin_sync_type {
	LIN_SYNC_UNKNOWN = 0,
	LIN_SYNC_EVENT_SYNCHRONIZE = 1,
	LIN_SYNC_STREAM_WAIT_EVENT = 2,
	LIN_SYNC_STREAM_SYNCHRONIZE = 3,
	LIN_SYNC_CONTEXT_SYNCHRONIZE = 4
};

/* state in host_sched records: why the thread was not running. */
enum lin_sched_state {
	LIN_SCHED_UNKNOWN = 0,
	LIN_SCHED_PREEMPTED = 1, /* runnable, waiting for a CPU */
	LIN_SCHED_BLOCKED = 2    /* sleeping or waiting on I/O or a lock */
};

/* domain in api records. */
enum lin_api_domain { LIN_API_RUNTIME = 1, LIN_API_DRIVER = 2, LIN_API_INTERNAL_LAUNCH = 3 };

/*
 * The launch APIs: the CUPTI callback ids (cbid in api records) of the calls that put work
 * on a device and are expected to produce GPU records with their correlation id. One table
 * for the whole project: cupti_bind checks every number against CUPTI's own enums at build
 * time, and lineage-validate uses it without CUPTI (docs/validator.md, "Launch
 * accounting"). X(domain, cbid, kind, name): kind is enum lin_launch_kind, name is the
 * CUPTI enum constant without its CUPTI_ prefix.
 */
enum lin_launch_kind {
	LIN_LAUNCH_NONE = 0,
	LIN_LAUNCH_KERNEL = 1,
	LIN_LAUNCH_GRAPH = 2,
	LIN_LAUNCH_MEMCPY = 3,
	LIN_LAUNCH_MEMSET = 4,
	LIN_LAUNCH_KERNEL_MULTI = 5, /* one kernel per device it names */
	LIN_LAUNCH_MEMCPY_BATCH = 6
}; /* one memcpy per copy in the batch */

#define LIN_LAUNCH_APIS(X) \
	X(1, 13, LIN_LAUNCH_KERNEL, RUNTIME_TRACE_CBID_cudaLaunch_v3020) \
	X(1, 211, LIN_LAUNCH_KERNEL, RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000) \
	X(1, 213, LIN_LAUNCH_KERNEL, RUNTIME_TRACE_CBID_cudaLaunch_ptsz_v7000) \
	X(1, 214, LIN_LAUNCH_KERNEL, RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000) \
	X(1, 269, LIN_LAUNCH_KERNEL, RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000) \
	X(1, 270, LIN_LAUNCH_KERNEL, RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000) \
	X(1, 272, LIN_LAUNCH_KERNEL_MULTI, RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernelMultiDevice_v9000) \
	X(1, 430, LIN_LAUNCH_KERNEL, RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060) \
	X(1, 431, LIN_LAUNCH_KERNEL, RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060) \
	X(1, 505, LIN_LAUNCH_KERNEL, RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000) \
	X(1, 506, LIN_LAUNCH_KERNEL, RUNTIME_TRACE_CBID___cudaLaunchKernel_ptsz_v13000) \
	X(1, 311, LIN_LAUNCH_GRAPH, RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000) \
	X(1, 312, LIN_LAUNCH_GRAPH, RUNTIME_TRACE_CBID_cudaGraphLaunch_ptsz_v10000) \
	X(1, 41, LIN_LAUNCH_MEMCPY, RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020) \
	X(1, 44, LIN_LAUNCH_MEMCPY, RUNTIME_TRACE_CBID_cudaMemcpy2DAsync_v3020) \
	X(1, 145, LIN_LAUNCH_MEMCPY, RUNTIME_TRACE_CBID_cudaMemcpy3DAsync_v3020) \
	X(1, 161, LIN_LAUNCH_MEMCPY, RUNTIME_TRACE_CBID_cudaMemcpyPeerAsync_v4000) \
	X(1, 225, LIN_LAUNCH_MEMCPY, RUNTIME_TRACE_CBID_cudaMemcpyAsync_ptsz_v7000) \
	X(1, 228, LIN_LAUNCH_MEMCPY, RUNTIME_TRACE_CBID_cudaMemcpy2DAsync_ptsz_v7000) \
	X(1, 246, LIN_LAUNCH_MEMCPY, RUNTIME_TRACE_CBID_cudaMemcpy3DAsync_ptsz_v7000) \
	X(1, 42, LIN_LAUNCH_MEMCPY, RUNTIME_TRACE_CBID_cudaMemcpyToArrayAsync_v3020) \
	X(1, 43, LIN_LAUNCH_MEMCPY, RUNTIME_TRACE_CBID_cudaMemcpyFromArrayAsync_v3020) \
	X(1, 45, LIN_LAUNCH_MEMCPY, RUNTIME_TRACE_CBID_cudaMemcpy2DToArrayAsync_v3020) \
	X(1, 46, LIN_LAUNCH_MEMCPY, RUNTIME_TRACE_CBID_cudaMemcpy2DFromArrayAsync_v3020) \
	X(1, 47, LIN_LAUNCH_MEMCPY, RUNTIME_TRACE_CBID_cudaMemcpyToSymbolAsync_v3020) \
	X(1, 48, LIN_LAUNCH_MEMCPY, RUNTIME_TRACE_CBID_cudaMemcpyFromSymbolAsync_v3020) \
	X(1, 163, LIN_LAUNCH_MEMCPY, RUNTIME_TRACE_CBID_cudaMemcpy3DPeerAsync_v4000) \
	X(1, 226, LIN_LAUNCH_MEMCPY, RUNTIME_TRACE_CBID_cudaMemcpyToArrayAsync_ptsz_v7000) \
	X(1, 227, LIN_LAUNCH_MEMCPY, RUNTIME_TRACE_CBID_cudaMemcpyFromArrayAsync_ptsz_v7000) \
	X(1, 229, LIN_LAUNCH_MEMCPY, RUNTIME_TRACE_CBID_cudaMemcpy2DToArrayAsync_ptsz_v7000) \
	X(1, 230, LIN_LAUNCH_MEMCPY, RUNTIME_TRACE_CBID_cudaMemcpy2DFromArrayAsync_ptsz_v7000) \
	X(1, 231, LIN_LAUNCH_MEMCPY, RUNTIME_TRACE_CBID_cudaMemcpyToSymbolAsync_ptsz_v7000) \
	X(1, 232, LIN_LAUNCH_MEMCPY, RUNTIME_TRACE_CBID_cudaMemcpyFromSymbolAsync_ptsz_v7000) \
	X(1, 250, LIN_LAUNCH_MEMCPY, RUNTIME_TRACE_CBID_cudaMemcpy3DPeerAsync_ptsz_v7000) \
	X(1, 482, LIN_LAUNCH_MEMCPY_BATCH, RUNTIME_TRACE_CBID_cudaMemcpyBatchAsync_v12080) \
	X(1, 483, LIN_LAUNCH_MEMCPY_BATCH, RUNTIME_TRACE_CBID_cudaMemcpyBatchAsync_ptsz_v12080) \
	X(1, 484, LIN_LAUNCH_MEMCPY_BATCH, RUNTIME_TRACE_CBID_cudaMemcpy3DBatchAsync_v12080) \
	X(1, 485, LIN_LAUNCH_MEMCPY_BATCH, RUNTIME_TRACE_CBID_cudaMemcpy3DBatchAsync_ptsz_v12080) \
	X(1, 509, LIN_LAUNCH_MEMCPY_BATCH, RUNTIME_TRACE_CBID_cudaMemcpyBatchAsync_v13000) \
	X(1, 510, LIN_LAUNCH_MEMCPY_BATCH, RUNTIME_TRACE_CBID_cudaMemcpyBatchAsync_ptsz_v13000) \
	X(1, 511, LIN_LAUNCH_MEMCPY_BATCH, RUNTIME_TRACE_CBID_cudaMemcpy3DBatchAsync_v13000) \
	X(1, 512, LIN_LAUNCH_MEMCPY_BATCH, RUNTIME_TRACE_CBID_cudaMemcpy3DBatchAsync_ptsz_v13000) \
	X(1, 51, LIN_LAUNCH_MEMSET, RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020) \
	X(1, 52, LIN_LAUNCH_MEMSET, RUNTIME_TRACE_CBID_cudaMemset2DAsync_v3020) \
	X(1, 143, LIN_LAUNCH_MEMSET, RUNTIME_TRACE_CBID_cudaMemset3DAsync_v3020) \
	X(1, 235, LIN_LAUNCH_MEMSET, RUNTIME_TRACE_CBID_cudaMemsetAsync_ptsz_v7000) \
	X(1, 236, LIN_LAUNCH_MEMSET, RUNTIME_TRACE_CBID_cudaMemset2DAsync_ptsz_v7000) \
	X(1, 244, LIN_LAUNCH_MEMSET, RUNTIME_TRACE_CBID_cudaMemset3DAsync_ptsz_v7000) \
	X(2, 115, LIN_LAUNCH_KERNEL, DRIVER_TRACE_CBID_cuLaunch) \
	X(2, 116, LIN_LAUNCH_KERNEL, DRIVER_TRACE_CBID_cuLaunchGrid) \
	X(2, 117, LIN_LAUNCH_KERNEL, DRIVER_TRACE_CBID_cuLaunchGridAsync) \
	X(2, 307, LIN_LAUNCH_KERNEL, DRIVER_TRACE_CBID_cuLaunchKernel) \
	X(2, 442, LIN_LAUNCH_KERNEL, DRIVER_TRACE_CBID_cuLaunchKernel_ptsz) \
	X(2, 477, LIN_LAUNCH_KERNEL, DRIVER_TRACE_CBID_cuLaunchCooperativeKernel) \
	X(2, 478, LIN_LAUNCH_KERNEL, DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz) \
	X(2, 480, LIN_LAUNCH_KERNEL_MULTI, DRIVER_TRACE_CBID_cuLaunchCooperativeKernelMultiDevice) \
	X(2, 652, LIN_LAUNCH_KERNEL, DRIVER_TRACE_CBID_cuLaunchKernelEx) \
	X(2, 653, LIN_LAUNCH_KERNEL, DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz) \
	X(2, 514, LIN_LAUNCH_GRAPH, DRIVER_TRACE_CBID_cuGraphLaunch) \
	X(2, 515, LIN_LAUNCH_GRAPH, DRIVER_TRACE_CBID_cuGraphLaunch_ptsz) \
	X(2, 60, LIN_LAUNCH_MEMCPY, DRIVER_TRACE_CBID_cuMemcpyHtoDAsync) \
	X(2, 62, LIN_LAUNCH_MEMCPY, DRIVER_TRACE_CBID_cuMemcpyDtoHAsync) \
	X(2, 64, LIN_LAUNCH_MEMCPY, DRIVER_TRACE_CBID_cuMemcpyDtoDAsync) \
	X(2, 277, LIN_LAUNCH_MEMCPY, DRIVER_TRACE_CBID_cuMemcpyHtoDAsync_v2) \
	X(2, 279, LIN_LAUNCH_MEMCPY, DRIVER_TRACE_CBID_cuMemcpyDtoHAsync_v2) \
	X(2, 281, LIN_LAUNCH_MEMCPY, DRIVER_TRACE_CBID_cuMemcpyDtoDAsync_v2) \
	X(2, 306, LIN_LAUNCH_MEMCPY, DRIVER_TRACE_CBID_cuMemcpyAsync) \
	X(2, 319, LIN_LAUNCH_MEMCPY, DRIVER_TRACE_CBID_cuMemcpyPeerAsync) \
	X(2, 418, LIN_LAUNCH_MEMCPY, DRIVER_TRACE_CBID_cuMemcpyAsync_ptsz) \
	X(2, 421, LIN_LAUNCH_MEMCPY, DRIVER_TRACE_CBID_cuMemcpyHtoDAsync_v2_ptsz) \
	X(2, 422, LIN_LAUNCH_MEMCPY, DRIVER_TRACE_CBID_cuMemcpyDtoHAsync_v2_ptsz) \
	X(2, 423, LIN_LAUNCH_MEMCPY, DRIVER_TRACE_CBID_cuMemcpyDtoDAsync_v2_ptsz) \
	X(2, 426, LIN_LAUNCH_MEMCPY, DRIVER_TRACE_CBID_cuMemcpyPeerAsync_ptsz) \
	X(2, 66, LIN_LAUNCH_MEMCPY, DRIVER_TRACE_CBID_cuMemcpyHtoAAsync) \
	X(2, 67, LIN_LAUNCH_MEMCPY, DRIVER_TRACE_CBID_cuMemcpyAtoHAsync) \
	X(2, 68, LIN_LAUNCH_MEMCPY, DRIVER_TRACE_CBID_cuMemcpy2DAsync) \
	X(2, 69, LIN_LAUNCH_MEMCPY, DRIVER_TRACE_CBID_cuMemcpy3DAsync) \
	X(2, 283, LIN_LAUNCH_MEMCPY, DRIVER_TRACE_CBID_cuMemcpyAtoHAsync_v2) \
	X(2, 289, LIN_LAUNCH_MEMCPY, DRIVER_TRACE_CBID_cuMemcpy2DAsync_v2) \
	X(2, 291, LIN_LAUNCH_MEMCPY, DRIVER_TRACE_CBID_cuMemcpy3DAsync_v2) \
	X(2, 293, LIN_LAUNCH_MEMCPY, DRIVER_TRACE_CBID_cuMemcpyHtoAAsync_v2) \
	X(2, 321, LIN_LAUNCH_MEMCPY, DRIVER_TRACE_CBID_cuMemcpy3DPeerAsync) \
	X(2, 419, LIN_LAUNCH_MEMCPY, DRIVER_TRACE_CBID_cuMemcpyHtoAAsync_v2_ptsz) \
	X(2, 420, LIN_LAUNCH_MEMCPY, DRIVER_TRACE_CBID_cuMemcpyAtoHAsync_v2_ptsz) \
	X(2, 424, LIN_LAUNCH_MEMCPY, DRIVER_TRACE_CBID_cuMemcpy2DAsync_v2_ptsz) \
	X(2, 425, LIN_LAUNCH_MEMCPY, DRIVER_TRACE_CBID_cuMemcpy3DAsync_v2_ptsz) \
	X(2, 427, LIN_LAUNCH_MEMCPY, DRIVER_TRACE_CBID_cuMemcpy3DPeerAsync_ptsz) \
	X(2, 776, LIN_LAUNCH_MEMCPY_BATCH, DRIVER_TRACE_CBID_cuMemcpyBatchAsync) \
	X(2, 777, LIN_LAUNCH_MEMCPY_BATCH, DRIVER_TRACE_CBID_cuMemcpyBatchAsync_ptsz) \
	X(2, 778, LIN_LAUNCH_MEMCPY_BATCH, DRIVER_TRACE_CBID_cuMemcpy3DBatchAsync) \
	X(2, 779, LIN_LAUNCH_MEMCPY_BATCH, DRIVER_TRACE_CBID_cuMemcpy3DBatchAsync_ptsz) \
	X(2, 796, LIN_LAUNCH_MEMCPY_BATCH, DRIVER_TRACE_CBID_cuMemcpyBatchAsync_v2) \
	X(2, 797, LIN_LAUNCH_MEMCPY_BATCH, DRIVER_TRACE_CBID_cuMemcpyBatchAsync_v2_ptsz) \
	X(2, 798, LIN_LAUNCH_MEMCPY_BATCH, DRIVER_TRACE_CBID_cuMemcpy3DBatchAsync_v2) \
	X(2, 799, LIN_LAUNCH_MEMCPY_BATCH, DRIVER_TRACE_CBID_cuMemcpy3DBatchAsync_v2_ptsz) \
	X(2, 216, LIN_LAUNCH_MEMSET, DRIVER_TRACE_CBID_cuMemsetD8Async) \
	X(2, 218, LIN_LAUNCH_MEMSET, DRIVER_TRACE_CBID_cuMemsetD16Async) \
	X(2, 220, LIN_LAUNCH_MEMSET, DRIVER_TRACE_CBID_cuMemsetD32Async) \
	X(2, 222, LIN_LAUNCH_MEMSET, DRIVER_TRACE_CBID_cuMemsetD2D8Async) \
	X(2, 224, LIN_LAUNCH_MEMSET, DRIVER_TRACE_CBID_cuMemsetD2D16Async) \
	X(2, 226, LIN_LAUNCH_MEMSET, DRIVER_TRACE_CBID_cuMemsetD2D32Async) \
	X(2, 431, LIN_LAUNCH_MEMSET, DRIVER_TRACE_CBID_cuMemsetD2D8Async_ptsz) \
	X(2, 432, LIN_LAUNCH_MEMSET, DRIVER_TRACE_CBID_cuMemsetD2D16Async_ptsz) \
	X(2, 433, LIN_LAUNCH_MEMSET, DRIVER_TRACE_CBID_cuMemsetD2D32Async_ptsz) \
	X(2, 428, LIN_LAUNCH_MEMSET, DRIVER_TRACE_CBID_cuMemsetD8Async_ptsz) \
	X(2, 429, LIN_LAUNCH_MEMSET, DRIVER_TRACE_CBID_cuMemsetD16Async_ptsz) \
	X(2, 430, LIN_LAUNCH_MEMSET, DRIVER_TRACE_CBID_cuMemsetD32Async_ptsz)

/*
 * The stream-capture APIs: a launch made while a capture is open may be recorded into a
 * graph instead of run, and then has no GPU record of its own. X(domain, cbid, begin, name):
 * begin is 1 for the calls that open a capture, 0 for those that close it.
 */
#define LIN_CAPTURE_APIS(X) \
	X(1, 315, 1, RUNTIME_TRACE_CBID_cudaStreamBeginCapture_v10000) \
	X(1, 316, 1, RUNTIME_TRACE_CBID_cudaStreamBeginCapture_ptsz_v10000) \
	X(1, 452, 1, RUNTIME_TRACE_CBID_cudaStreamBeginCaptureToGraph_v12030) \
	X(1, 453, 1, RUNTIME_TRACE_CBID_cudaStreamBeginCaptureToGraph_ptsz_v12030) \
	X(1, 319, 0, RUNTIME_TRACE_CBID_cudaStreamEndCapture_v10000) \
	X(1, 320, 0, RUNTIME_TRACE_CBID_cudaStreamEndCapture_ptsz_v10000) \
	X(2, 495, 1, DRIVER_TRACE_CBID_cuStreamBeginCapture) \
	X(2, 496, 1, DRIVER_TRACE_CBID_cuStreamBeginCapture_ptsz) \
	X(2, 539, 1, DRIVER_TRACE_CBID_cuStreamBeginCapture_v2) \
	X(2, 540, 1, DRIVER_TRACE_CBID_cuStreamBeginCapture_v2_ptsz) \
	X(2, 720, 1, DRIVER_TRACE_CBID_cuStreamBeginCaptureToGraph) \
	X(2, 721, 1, DRIVER_TRACE_CBID_cuStreamBeginCaptureToGraph_ptsz) \
	X(2, 497, 0, DRIVER_TRACE_CBID_cuStreamEndCapture) \
	X(2, 498, 0, DRIVER_TRACE_CBID_cuStreamEndCapture_ptsz)

/* 1: @cbid opens a stream capture; 0: it closes one; -1: neither. */
static inline int lin_capture_api_of(unsigned domain, unsigned long long cbid)
{
	if (domain > 2 || cbid > 0xffffu)
		return -1;
	switch ((domain << 16) | (unsigned)cbid) {
#define LIN_CAPTURE_CASE_(d, c, b, n) \
	case ((d) << 16) | (c): return b;
		LIN_CAPTURE_APIS(LIN_CAPTURE_CASE_)
#undef LIN_CAPTURE_CASE_
	default: return -1;
	}
}

/* The kind of launch API @cbid of @domain is (LIN_LAUNCH_NONE: not a launch API). */
static inline enum lin_launch_kind lin_launch_kind_of(unsigned domain, unsigned long long cbid)
{
	if (domain > 2 || cbid > 0xffffu)
		return LIN_LAUNCH_NONE;
	switch ((domain << 16) | (unsigned)cbid) {
#define LIN_LAUNCH_CASE_(d, c, k, n) \
	case ((d) << 16) | (c): return k;
		LIN_LAUNCH_APIS(LIN_LAUNCH_CASE_)
#undef LIN_LAUNCH_CASE_
	default: return LIN_LAUNCH_NONE;
	}
}

/* origin in graph_node records. */
enum lin_node_origin {
	LIN_NODE_ORIGIN_UNKNOWN = 0,
	LIN_NODE_ORIGIN_CAPTURE = 1,
	LIN_NODE_ORIGIN_EXPLICIT = 2
};

/* source in dropped records (docs/trace-format.md, "Loss and clocks"). */
enum lin_drop_source {
	LIN_DROP_HOST_EVENTS = 1,       /* a per-thread event buffer was full */
	LIN_DROP_CUPTI_RECORDS = 2,     /* cuptiActivityGetNumDroppedRecords */
	LIN_DROP_CUPTI_BUFFER = 3,      /* buffer requests the binding declined */
	LIN_DROP_CUPTI_UNDECODABLE = 4, /* records stepped over undecoded (truncated, incomplete) */
	LIN_DROP_CUPTI_REST = 5,   /* the rest of a buffer after a record nothing can step over */
	LIN_DROP_CUPTI_LAYOUT = 6, /* records whose layout this build does not read */
	LIN_DROP_CUPTI_UNDELIVERED = 7, /* buffers CUPTI still held when the runtime closed */
};

/* Default CUPTI external-correlation kind: CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2. */
#define LIN_DEFAULT_EXT_KIND 5u

#endif
