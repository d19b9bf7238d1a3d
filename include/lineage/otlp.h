/* SPDX-License-Identifier: MIT */
/*
 * lineage/otlp.h - the OTLP stream, in its own library (liblineage-otlp; pkg-config
 * lineage-otlp, CMake lineage::lineage_otlp): the trace, streamed as OpenTelemetry spans
 * (OTLP/JSON ExportTraceServiceRequest documents, one per line) while the runtime runs
 * (docs/fleet.md, "Streaming from the runtime"). It is attached to the runtime's writer as
 * a tap (lineage/tap.h), with options of its own:
 *
 *	struct lin_otlp_opts so = { .sz = sizeof(so), .path = "run.otlp.json" };
 *	struct lin_tap_spec tap = lin_otlp_tap(&so);
 *	struct lin_runtime_opts o = { .sz = sizeof(o), .taps = &tap, .ntaps = 1 };
 *
 * Since: 0.4 (0.2 and 0.3 had the stream inside liblineage; options of its own: 0.5).
 */
#ifndef LINEAGE_OTLP_H
#define LINEAGE_OTLP_H

#include <stddef.h>

#include "lineage/common.h"
#include "lineage/runtime.h"
#include "lineage/tap.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * struct lin_otlp_opts - the stream's options. Set sz to sizeof(struct lin_otlp_opts); a
 * larger struct whose unknown trailing bytes are not all zero is refused (-EINVAL).
 * @path: JSON Lines file to write (created or truncated), or
 * @write: a callback that receives one whole document (line, newline included) per call,
 *   with @user; exactly one of the two (else -EINVAL).
 * @service: service.name (copied); NULL: $OTEL_SERVICE_NAME when set, else "lineage".
 * The spans ended since the last flush interval are written on a thread of the stream's
 * own (with LIN_RT_NO_WRITER_THREAD: in lin_runtime_flush); the trace never waits for it.
 * Since: 0.5 (as lin_runtime_opts.otlp_path, otlp_write, otlp_user: 0.2; otlp_service: 0.4)
 */
struct lin_otlp_opts {
	size_t sz;
	const char *path;
	lin_trace_write_fn write;
	void *user;
	const char *service;
};

/*
 * lin_otlp_tap_open - the stream's tap opener (lin_tap_open_fn): lin_tap_args.config is a
 * const struct lin_otlp_opts *. Called by lin_runtime_create; put it in a tap spec with
 * lin_otlp_tap rather than calling it.
 * Return: 0; -EINVAL (no config, bad sz, path and write both or neither, non-zero unknown
 * trailing bytes; logged); -errno from opening path (logged); -ENOMEM.
 * Context: the thread calling lin_runtime_create; blocks (file open, thread start).
 * Since: 0.5
 */
LIN_API int lin_otlp_tap_open(const struct lin_tap_args *a, const struct lin_tap_ops **ops, void **tap);

/*
 * lin_otlp_tap - the tap spec that attaches the stream with @o to a runtime: put it in
 * lin_runtime_opts.taps. @o is checked when the runtime opens the tap.
 * Return: the spec (sz, lin_otlp_tap_open, @o).
 * Ownership: @o is borrowed, and must stay valid until lin_runtime_create returns (the
 * stream copies what it keeps). Context: any thread; no allocation.
 * Since: 0.5
 */
static inline struct lin_tap_spec lin_otlp_tap(const struct lin_otlp_opts *o)
{
	struct lin_tap_spec s = { sizeof(s), lin_otlp_tap_open, o };
	return s;
}

#ifdef __cplusplus
}
#endif

#endif
