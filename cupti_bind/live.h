/* SPDX-License-Identifier: MIT */
/* live.h - the live CUPTI binding as the runtime receives it (live.c). Never installed. */
#ifndef LIN_CUPTI_LIVE_H
#define LIN_CUPTI_LIVE_H

#include "rt_internal.h"

/*
 * lin_cupti_live - the CUPTI backend of a build with CUPTI: it loads libcupti on its first
 * open (cupti_api.h), owns CUPTI's activity collection or attaches beside another client.
 * The library hands it to every runtime it creates (lin_backends.c, generated from
 * cmake/lin_backends.c.in); lineage/ never names it.
 */
extern const struct lin_cupti_backend lin_cupti_live;

#endif
