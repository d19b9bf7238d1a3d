/* SPDX-License-Identifier: MIT */
/*
 * lineage/otlp.h - the OTLP stream, in its own library (liblineage-otlp; pkg-config
 * lineage-otlp, CMake lineage::lineage_otlp): the trace, streamed as OpenTelemetry spans
 * (OTLP/JSON ExportTraceServiceRequest documents, one per line) while the runtime runs
 * (docs/fleet.md, "Streaming from the runtime"). It is attached to the runtime's writer as
 * a tap (lineage/tap.h).
 *
 * Use: link liblineage-otlp, call lin_otlp_enable() once, then set lin_runtime_opts'
 * otlp_path (or otlp_write) as before. Since: 0.4 (0.2 and 0.3 had the stream inside
 * liblineage).
 */
#ifndef LINEAGE_OTLP_H
#define LINEAGE_OTLP_H

#include "lineage/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * lin_otlp_enable - make runtimes created from now on stream OTLP when their options ask.
 * Return: 0. Context: any thread; process-wide; idempotent.
 * Since: 0.4
 */
LIN_API int lin_otlp_enable(void);

#ifdef __cplusplus
}
#endif

#endif
