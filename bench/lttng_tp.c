/* SPDX-License-Identifier: MIT */
/* The probes of lttng_tp.h: built as liblineage-bench-lttng-tp.so, dlopened by the bench. */
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#include "lttng_tp.h"
