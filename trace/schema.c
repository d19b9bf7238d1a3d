/* SPDX-License-Identifier: MIT */
/*
 * schema.c - the reader's schema of every record type (names, type codes), expanded from
 * records.def. A '|' in a type string marks where the fields a later minor version
 * appended begin: a record written by an older writer may end there, and the fields it
 * lacks read as nil.
 */
#include <stddef.h>

#include "lineage/trace_format.h"
#include "records.h"
#include "schema.h"

/* Each record's type codes, "" "u" "o" "|" ..., one array a record. */
#define LIN_RECORD(R, name) static const char types_##R[] = ""
#define LIN_FIELD(R, F, name, type, enc) #type
#define LIN_SINCE(R) "|"
#define LIN_END(R) ;
#include "records.def"
#undef LIN_RECORD
#undef LIN_FIELD
#undef LIN_SINCE
#undef LIN_END

static const struct lin_schema schemas[LIN_SCHEMA_MAX] = {
#define LIN_RECORD(R, name_) [LIN_REC_##R] = { .name = #name_, .types = types_##R, .fields = {
#define LIN_FIELD(R, F, name, type, enc) #name,
#define LIN_SINCE(R)
#define LIN_END(R) \
	} \
	} \
	,
#include "records.def"
#undef LIN_RECORD
#undef LIN_FIELD
#undef LIN_SINCE
#undef LIN_END
};

/* The public header's field counts are this file's. */
#define LIN_RECORD(R, name) \
	_Static_assert(LIN_REC_##R < LIN_SCHEMA_MAX, #R " fits the schema table");
#define LIN_FIELD(R, F, name, type, enc)
#define LIN_SINCE(R)
#define LIN_END(R) \
	_Static_assert(LIN_F_##R##__N == LIN_REC_NFIELDS_##R, "records.def and trace_format.h: " #R); \
	_Static_assert(LIN_F_##R##__N <= LIN_READER_MAX_FIELDS, \
		       #R " has too many fields for the reader");
#include "records.def"
#undef LIN_RECORD
#undef LIN_FIELD
#undef LIN_SINCE
#undef LIN_END

/* The views of records.h: each record a view stands for has the view's field there. */
#define LIN_VIEW_AGREES(V, R, F) \
	_Static_assert((int)LIN_F_##V##_##F == (int)LIN_F_##R##_##F, #V " view: " #R "." #F);
#define LIN_GPU_VIEW(R) \
	LIN_VIEW_AGREES(GPU, R, CORRELATION) \
	LIN_VIEW_AGREES(GPU, R, START_DEV) \
	LIN_VIEW_AGREES(GPU, R, END_DEV) \
	LIN_VIEW_AGREES(GPU, R, DEVICE) \
	LIN_VIEW_AGREES(GPU, R, CONTEXT) \
	LIN_VIEW_AGREES(GPU, R, STREAM)
LIN_GPU_VIEW(KERNEL)
LIN_GPU_VIEW(MEMCPY)
LIN_GPU_VIEW(MEMSET)
LIN_GPU_VIEW(GRAPH_TRACE)
#define LIN_EPOCH_CHANGE_VIEW(R) \
	LIN_VIEW_AGREES(EPOCH_CHANGE, R, HOST_NS) \
	LIN_VIEW_AGREES(EPOCH_CHANGE, R, TID) \
	LIN_VIEW_AGREES(EPOCH_CHANGE, R, EPOCH) \
	LIN_VIEW_AGREES(EPOCH_CHANGE, R, VERSION)
LIN_EPOCH_CHANGE_VIEW(EPOCH_REISSUE)
LIN_EPOCH_CHANGE_VIEW(EPOCH_RETIRE)
#define LIN_HOST_VIEW(R) \
	LIN_VIEW_AGREES(HOST, R, HOST_NS) \
	LIN_VIEW_AGREES(HOST, R, TID)
LIN_HOST_VIEW(REQUEST_BEGIN)
LIN_HOST_VIEW(REQUEST_END)
LIN_HOST_VIEW(EPOCH_DECLARE)
LIN_HOST_VIEW(EPOCH_REISSUE)
LIN_HOST_VIEW(EPOCH_RETIRE)
LIN_HOST_VIEW(TOKEN_CAPTURE)
LIN_HOST_VIEW(TOKEN_ADOPT)
LIN_HOST_VIEW(SCOPE_CLOSE)
LIN_HOST_VIEW(MISUSE)
LIN_HOST_VIEW(LAUNCH)
LIN_HOST_VIEW(REQUEST_LINK)
LIN_HOST_VIEW(LAUNCH_END)
LIN_HOST_VIEW(GRAPH_NODE)
LIN_HOST_VIEW(GRAPH_EXEC)
LIN_HOST_VIEW(GRAPH_LAUNCH)
LIN_HOST_VIEW(GRAPH_NODE_UPDATE)

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
