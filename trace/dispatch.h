/* SPDX-License-Identifier: MIT */
/*
 * dispatch.h - one dispatcher for every reader of decoded records.
 *
 * A consumer fills a struct lin_rec_ops with one handler per record type it reads
 * (designated initializers: [LIN_REC_LAUNCH] = on_launch) and hands each record to
 * lin_rec_dispatch with its own context; the handler reads the record's fields by name
 * (LIN_GET, LIN_IS_NIL, LIN_OPT: records.h). A known type without a handler is
 * skipped; a type the reader did not know (r->known false) goes to @unknown. As
 * perf's struct perf_tool: the reader decodes, the tool only says what it does with each
 * record.
 * Context: any thread; the ops table is read only.
 */
#ifndef LINEAGE_DISPATCH_H
#define LINEAGE_DISPATCH_H

#include "reader.h"
#include "records.h"
#include "schema.h"

typedef void (*lin_rec_fn)(void *ctx, const struct lin_rec *r);

struct lin_rec_ops {
	lin_rec_fn on[LIN_SCHEMA_MAX]; /* by record type; NULL: skipped */
	lin_rec_fn unknown;            /* a type the reader did not know; NULL: skipped */
};

static inline void lin_rec_dispatch(const struct lin_rec_ops *ops, void *ctx, const struct lin_rec *r)
{
	lin_rec_fn fn = !r->known                  ? ops->unknown
			: r->type < LIN_SCHEMA_MAX ? ops->on[r->type]
						   : NULL;
	if (fn)
		fn(ctx, r);
}

#endif
