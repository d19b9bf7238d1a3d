/* SPDX-License-Identifier: MIT */
/*
 * records.h - the records of the trace format, by name (records.def defines them).
 *
 * LIN_F_<RECORD>_<FIELD> is a field's index in its record (after the type), and
 * LIN_F_<RECORD>__N the record's number of fields. A decoded record (struct lin_rec,
 * reader.h) is read through LIN_GET and LIN_IS_NIL, never by position:
 *     if (!LIN_IS_NIL(r, LAUNCH, CORRELATION)) corr = LIN_GET(r, LAUNCH, CORRELATION);
 * LIN_NIL is the one "unknown" of every integer the project's code passes around (an
 * encoder writes it as nil where the field's encoding is O; a reader maps nil to it
 * where it keeps an integer).
 * Internal to the project (library, tools, tests); never installed. Context: any.
 */
#ifndef LINEAGE_RECORDS_H
#define LINEAGE_RECORDS_H

#include <stddef.h>
#include <stdint.h>

#include "lineage/trace_format.h"

#define LIN_NIL UINT64_MAX

#define LIN_RECORD(R, name) enum {
#define LIN_FIELD(R, F, name, type, enc) LIN_F_##R##_##F,
#define LIN_SINCE(R)
#define LIN_END(R) \
	LIN_F_##R##__N \
	} \
	;
#include "records.def"
#undef LIN_RECORD
#undef LIN_FIELD
#undef LIN_SINCE
#undef LIN_END

/*
 * Views: where one piece of code reads the same field of several record types, it names
 * the field through a view, whose every record is checked to agree (schema.c).
 * GPU: kernel, memcpy, memset and graph_trace begin with the same six fields.
 * EPOCH_CHANGE: epoch_reissue and epoch_retire begin host_ns, tid, epoch, version.
 */
enum {
	LIN_F_GPU_CORRELATION = LIN_F_KERNEL_CORRELATION,
	LIN_F_GPU_START_DEV = LIN_F_KERNEL_START_DEV,
	LIN_F_GPU_END_DEV = LIN_F_KERNEL_END_DEV,
	LIN_F_GPU_DEVICE = LIN_F_KERNEL_DEVICE,
	LIN_F_GPU_CONTEXT = LIN_F_KERNEL_CONTEXT,
	LIN_F_GPU_STREAM = LIN_F_KERNEL_STREAM,
	LIN_F_EPOCH_CHANGE_HOST_NS = LIN_F_EPOCH_RETIRE_HOST_NS,
	LIN_F_EPOCH_CHANGE_TID = LIN_F_EPOCH_RETIRE_TID,
	LIN_F_EPOCH_CHANGE_EPOCH = LIN_F_EPOCH_RETIRE_EPOCH,
	LIN_F_EPOCH_CHANGE_VERSION = LIN_F_EPOCH_RETIRE_VERSION,
};
/* HOST: the host records (the runtime's, and the graph records the binding writes on the
 * host) begin with host_ns, then tid. Not string (sid), trace_end (host_ns, then
 * events_dropped) or the GPU-side records. */
enum {
	LIN_F_HOST_HOST_NS = LIN_F_REQUEST_BEGIN_HOST_NS,
	LIN_F_HOST_TID = LIN_F_REQUEST_BEGIN_TID,
};

/* The value of field F of record R in decoded record @r (a str field: its length). */
#define LIN_GET(r, R, F) ((r)->f[LIN_F_##R##_##F])
/* 1 when field F of record R was nil (or absent: written by an older minor version). */
#define LIN_IS_NIL(r, R, F) ((((r)->nil) >> LIN_F_##R##_##F) & 1u)
/* For code handed a field's index (LIN_F_R_F) by its caller: 1 when field @i was nil. */
#define LIN_IS_NIL_AT(r, i) ((((r)->nil) >> (i)) & 1u)
/* The value of field F of record R, or LIN_NIL when it was nil. */
#define LIN_OPT(r, R, F) (LIN_IS_NIL(r, R, F) ? LIN_NIL : LIN_GET(r, R, F))
/* Whether request_link record @r holds a context W3C allows: a trace id and a parent span
 * id that are not all zero, flags of one byte (else the validator's bad_request_link). */
#define LIN_LINK_VALID(r) \
	((LIN_GET(r, REQUEST_LINK, TRACE_HI) | LIN_GET(r, REQUEST_LINK, TRACE_LO)) && \
	 LIN_GET(r, REQUEST_LINK, PARENT_SPAN) && LIN_GET(r, REQUEST_LINK, TRACE_FLAGS) <= 255)

/* The field of kind S, N or A of a record being encoded (records.def): a str (NULL: nil,
 * for kind N) of @len bytes, or an array of @n uints. */
struct lin_tf_var {
	const char *str;
	size_t len;
	const uint64_t *arr;
	size_t n;
};

#endif
