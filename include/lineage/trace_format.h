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
	LIN_REC_REQUEST_LINK = 12,     /* since format 1.1 */
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
	LIN_REC_TRUTH = 40,
};

/* Number of fields (after the type) each record has in format 1.1. */
#define LIN_REC_NFIELDS_REQUEST_BEGIN 6
#define LIN_REC_NFIELDS_REQUEST_END 3
#define LIN_REC_NFIELDS_EPOCH_DECLARE 7
#define LIN_REC_NFIELDS_EPOCH_REISSUE 5
#define LIN_REC_NFIELDS_EPOCH_RETIRE 4
#define LIN_REC_NFIELDS_TOKEN_CAPTURE 6
#define LIN_REC_NFIELDS_TOKEN_ADOPT 8
#define LIN_REC_NFIELDS_SCOPE_CLOSE 5
#define LIN_REC_NFIELDS_MISUSE 7
#define LIN_REC_NFIELDS_LAUNCH 8
#define LIN_REC_NFIELDS_STRING 2
#define LIN_REC_NFIELDS_REQUEST_LINK 8
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
#define LIN_REC_NFIELDS_CLOCK 2
#define LIN_REC_NFIELDS_GRAPH_NODE_UPDATE 5
#define LIN_REC_NFIELDS_TRACE_END 2
#define LIN_REC_NFIELDS_TRUTH 4

/* target_kind in token and scope records. */
enum lin_target_kind { LIN_TARGET_REQUEST = 1, LIN_TARGET_EPOCH = 2 };

/* reason in epoch_reissue. */
enum lin_reissue_reason { LIN_REISSUE_OTHER = 0, LIN_REISSUE_RETRY = 1, LIN_REISSUE_REPLAY = 2 };

/* domain in api records. */
enum lin_api_domain { LIN_API_RUNTIME = 1, LIN_API_DRIVER = 2, LIN_API_INTERNAL_LAUNCH = 3 };

/* origin in graph_node records. */
enum lin_node_origin { LIN_NODE_ORIGIN_UNKNOWN = 0, LIN_NODE_ORIGIN_CAPTURE = 1, LIN_NODE_ORIGIN_EXPLICIT = 2 };

/* source in dropped records (docs/trace-format.md, "Loss and clocks"). */
enum lin_drop_source {
	LIN_DROP_HOST_EVENTS = 1,       /* a per-thread event buffer was full */
	LIN_DROP_CUPTI_RECORDS = 2,     /* cuptiActivityGetNumDroppedRecords */
	LIN_DROP_CUPTI_BUFFER = 3,      /* buffer requests the binding declined */
	LIN_DROP_CUPTI_UNDECODABLE = 4, /* records stepped over undecoded (truncated, incomplete) */
	LIN_DROP_CUPTI_REST = 5,        /* the rest of a buffer after a record nothing can step over */
	LIN_DROP_CUPTI_LAYOUT = 6,      /* records whose layout this build does not read */
};

/* Default CUPTI external-correlation kind: CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2. */
#define LIN_DEFAULT_EXT_KIND 5u

#endif
