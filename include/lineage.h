/* SPDX-License-Identifier: MIT */
/* lineage.h - everything: the runtime, the trace format, the graph and CUPTI modules. */
#ifndef LINEAGE_H
#define LINEAGE_H

#include "lineage/common.h"
#include "lineage/version.h"
#include "lineage/runtime.h"
#include "lineage/trace_format.h"
#include "lineage/graph.h"
#include "lineage/cupti.h"
#include "lineage/w3c.h"

#endif
