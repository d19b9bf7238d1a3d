/* SPDX-License-Identifier: MIT */
/*
 * cupti_api.h - the CUPTI entry points the binding calls, as a table of function pointers
 * (docs/cupti.md, "Loading libcupti"). Internal to the library, its tests and
 * lineage-synth; never installed.
 *
 * liblineage does not link libcupti: the first use of the binding (a CUPTI backend opening,
 * lin_cupti_push_ops, lin_cupti_attach_decode) loads it with dlopen and fills the table
 * with dlsym, so a program linked with liblineage starts where no CUDA toolkit is installed
 * and records host-side lineage there. A test (or lineage-synth) gives the table of the
 * test CUPTI layer instead (lin_cupti_use_api), so the binding calls the layer without
 * the layer's definitions having to come before libcupti's.
 */
#ifndef LIN_CUPTI_API_H
#define LIN_CUPTI_API_H

#include <stddef.h>
#include <stdint.h>

#include <cupti.h>

#include "lineage/common.h"

/*
 * struct lin_cupti_api - one member per CUPTI entry point the binding calls, each typed
 * as cupti.h declares it and named as the entry point (so a call reads as CUPTI's own).
 * @sz: sizeof(struct lin_cupti_api) of the filler. @name: where the table comes from
 * ("libcupti.so.13", "test layer"), for status lines.
 * Every member is set: a table with a NULL member is refused.
 */
struct lin_cupti_api {
	size_t sz;
	const char *name;
	CUptiResult(CUPTIAPI *cuptiGetResultString)(CUptiResult result, const char **str);
	CUptiResult(CUPTIAPI *cuptiGetVersion)(uint32_t *version);
	CUptiResult(CUPTIAPI *cuptiGetTimestamp)(uint64_t *timestamp);
	CUptiResult(CUPTIAPI *cuptiActivityPushExternalCorrelationId)(CUpti_ExternalCorrelationKind kind,
								      uint64_t id);
	CUptiResult(CUPTIAPI *cuptiActivityPopExternalCorrelationId)(CUpti_ExternalCorrelationKind kind,
								     uint64_t *lastId);
	CUptiResult(CUPTIAPI *cuptiActivityEnable)(CUpti_ActivityKind kind);
	CUptiResult(CUPTIAPI *cuptiActivityDisable)(CUpti_ActivityKind kind);
	CUptiResult(CUPTIAPI *cuptiActivityEnableLatencyTimestamps)(uint8_t enable);
	CUptiResult(CUPTIAPI *cuptiActivitySetAttribute)(CUpti_ActivityAttribute attr,
							 size_t *valueSize, void *value);
	CUptiResult(CUPTIAPI *cuptiActivityRegisterCallbacks)(
		CUpti_BuffersCallbackRequestFunc funcBufferRequested,
		CUpti_BuffersCallbackCompleteFunc funcBufferCompleted);
	CUptiResult(CUPTIAPI *cuptiActivityRegisterTimestampCallback)(CUpti_TimestampCallbackFunc funcTimestamp);
	CUptiResult(CUPTIAPI *cuptiActivityFlushAll)(uint32_t flag);
	CUptiResult(CUPTIAPI *cuptiActivityFlushPeriod)(uint32_t time);
	CUptiResult(CUPTIAPI *cuptiActivityGetNextRecord)(uint8_t *buffer, size_t validBufferSizeBytes,
							  CUpti_Activity **record);
	CUptiResult(CUPTIAPI *cuptiActivityGetNumDroppedRecords)(CUcontext context,
								 uint32_t streamId, size_t *dropped);
	CUptiResult(CUPTIAPI *cuptiSubscribe)(CUpti_SubscriberHandle *subscriber,
					      CUpti_CallbackFunc callback, void *userdata);
	CUptiResult(CUPTIAPI *cuptiUnsubscribe)(CUpti_SubscriberHandle subscriber);
	CUptiResult(CUPTIAPI *cuptiGetThreadIdType)(CUpti_ActivityThreadIdType *type);
	CUptiResult(CUPTIAPI *cuptiSetThreadIdType)(CUpti_ActivityThreadIdType type);
};

/*
 * lin_cupti_api - the table the binding calls in this process: the one given to
 * lin_cupti_use_api, else libcupti's, loaded on the first call (dlopen of LIN_CUPTI_SONAME,
 * then of the same name in the directory the build found libcupti in; LINEAGE_CUPTI_LIBRARY
 * names another file or name to load instead). Later calls return the same answer.
 * @status: set to a static string saying why not (dlopen's or dlsym's error) when NULL is
 * returned; may be NULL.
 * Return: the table, or NULL when libcupti cannot be loaded (the binding is then unusable
 * and says so: it never fails the work).
 * Context: any thread, including a CUPTI callback once loaded; the first call blocks for
 * the load. The table stays valid until the process ends (libcupti is never unloaded).
 */
const struct lin_cupti_api *lin_cupti_api(const char **status);

/*
 * lin_cupti_use_api - make @api the table the binding calls in this process, instead of
 * libcupti's (tests and lineage-synth pass the test CUPTI layer's, cupti_layer.h).
 * Call before anything uses the binding (before the first CUPTI runtime is created).
 * Return: 0 (also when @api is the table already in use); -EINVAL (NULL @api, @api->sz
 * too small or a NULL member); -EBUSY (the binding already uses another table).
 * Ownership: @api is borrowed and must stay valid until the process ends.
 * Context: any thread. Since: 0.4 (internal: not in include/lineage/).
 */
LIN_API int lin_cupti_use_api(const struct lin_cupti_api *api);

#endif
