/* SPDX-License-Identifier: MIT */
#ifndef LINEAGE_VERSION_H
#define LINEAGE_VERSION_H

/* CMake reads these three lines; keep the format "#define LIN_VERSION_X N". */
#define LIN_VERSION_MAJOR 0
#define LIN_VERSION_MINOR 4
#define LIN_VERSION_PATCH 0

#define LIN_VERSION_NUMBER (LIN_VERSION_MAJOR * 10000 + LIN_VERSION_MINOR * 100 + LIN_VERSION_PATCH)

#define LIN_STRINGIFY_(x) #x
#define LIN_STRINGIFY(x) LIN_STRINGIFY_(x)
#define LIN_STRINGIFY_VERSION \
	LIN_STRINGIFY(LIN_VERSION_MAJOR) \
	"." LIN_STRINGIFY(LIN_VERSION_MINOR) "." LIN_STRINGIFY(LIN_VERSION_PATCH)

/* Major and minor of the trace format written by this library (docs/trace-format.md). */
#define LIN_TRACE_FORMAT_MAJOR 1
#define LIN_TRACE_FORMAT_MINOR 5

#endif
