/* SPDX-License-Identifier: MIT */
/*
 * owner.c - lineage-synth --cupti layer, every strategy but epoch: the
 * workload itself is the CUPTI client, as a profiler would be, and hands every completed
 * buffer to lin_cupti_attach_decode (attach mode, docs/cupti.md). The epoch strategy
 * needs none of this: its runtime's live binding owns CUPTI.
 */
#include <cupti.h>
#include <stdio.h>
#include <stdlib.h>

#include "lineage/cupti.h"
#include "lineage/trace_format.h"
#include "synth.h"

/* CUPTI's callbacks carry no user pointer: one owner per process. */
static lin_runtime *owner_rt;
static size_t owner_buf_bytes;
static _Atomic int owner_failed;

static void CUPTIAPI owner_request(uint8_t **buffer, size_t *size, size_t *max_records)
{
	*buffer = calloc(1, owner_buf_bytes);
	*size = *buffer ? owner_buf_bytes : 0;
	*max_records = 0;
}

static void CUPTIAPI owner_complete(CUcontext ctx, uint32_t stream, uint8_t *buf, size_t size, size_t valid)
{
	size_t dropped = 0;

	(void)size;
	if (lin_cupti_attach_decode(owner_rt, buf, valid, NULL))
		owner_failed = 1;
	if (cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS &&
	    lin_cupti_attach_dropped(owner_rt, LIN_DROP_CUPTI_RECORDS, dropped))
		owner_failed = 1;
	free(buf);
}

static const CUpti_ActivityKind owner_kinds[] = {
	CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION,
	CUPTI_ACTIVITY_KIND_RUNTIME,
	CUPTI_ACTIVITY_KIND_DRIVER,
	CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
	CUPTI_ACTIVITY_KIND_MEMCPY,
	CUPTI_ACTIVITY_KIND_MEMSET,
};
#define N_OWNER_KINDS (sizeof(owner_kinds) / sizeof(owner_kinds[0]))

int synth_owner_start(lin_runtime *rt, size_t buffer_bytes)
{
	owner_rt = rt;
	owner_buf_bytes = buffer_bytes;
	/* API records must carry gettid(), the runtime's tid (docs/cupti.md, attach mode). */
	if (cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM) != CUPTI_SUCCESS ||
	    cuptiActivityRegisterCallbacks(owner_request, owner_complete) != CUPTI_SUCCESS)
		return -1;
	for (size_t i = 0; i < N_OWNER_KINDS; i++)
		if (cuptiActivityEnable(owner_kinds[i]) != CUPTI_SUCCESS)
			return -1;
	return 0;
}

int synth_owner_stop(void)
{
	/* Normal flush, then forced: what the live binding does at close. */
	int r = cuptiActivityFlushAll(0) == CUPTI_SUCCESS &&
		cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) == CUPTI_SUCCESS;
	for (size_t i = 0; i < N_OWNER_KINDS; i++)
		(void)cuptiActivityDisable(owner_kinds[i]);
	owner_rt = NULL;
	return r && !owner_failed ? 0 : -1;
}
