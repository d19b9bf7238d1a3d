/* SPDX-License-Identifier: MIT */
/* live.h - the live CUPTI binding as the runtime receives it (live.c). Never installed. */
#ifndef LIN_CUPTI_LIVE_H
#define LIN_CUPTI_LIVE_H

#include <cupti.h>

#include "rt_internal.h"

/*
 * lin_cupti_live - the CUPTI backend of a build with CUPTI: it loads libcupti on its first
 * open (cupti_api.h), owns CUPTI's activity collection or attaches beside another client.
 * The library hands it to every runtime it creates (lin_backends.c, generated from
 * cmake/lin_backends.c.in); lineage/ never names it.
 */
extern const struct lin_cupti_backend lin_cupti_live;

/* push.c: CUPTI's name of @r; whether CUPTI in this process can push and pop external ids
 * of @kind (probed once; *@status a static description when not); whether @kind is one of
 * CUPTI's external-correlation kinds; the push/pop ops named @name. */
const char *lin_cupti_result_name(CUptiResult r);
int lin_cupti_probe(uint32_t kind, const char **status);
int lin_cupti_valid_kind(uint32_t kind);
void lin_cupti_fill_ops(struct lin_backend_ops *ops, const char *name);

#endif
