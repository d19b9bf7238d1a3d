/* SPDX-License-Identifier: MIT */
/*
 * cupti_layer.h - a stand-in for libcupti's activity entry points, for tests and
 * lineage-synth only (docs/cupti.md, "The test layer"). Never installed.
 *
 * Linked into a program as object files, it defines cuptiActivityEnable,
 * cuptiActivityRegisterCallbacks, cuptiActivityFlushAll, cuptiActivityPush/Pop-
 * ExternalCorrelationId, cuptiSubscribe, cuptiGetVersion, cuptiGetTimestamp and the other
 * calls the live binding makes, for the program's own calls (it plays CUDA and other CUPTI
 * clients). liblineage never reaches them by name: the program hands the binding the
 * layer's table, lin_cupti_use_api(lin_cl_cupti_api()), before its first CUPTI runtime.
 * cuptiActivityGetNextRecord and cuptiGetResultString are not defined here: the table
 * holds the real libcupti's, which walks the buffers.
 *
 * What the layer does as CUPTI does (cupti_activity.h): one set of buffer callbacks per
 * process (the last registration wins); buffers requested on the thread that needs one,
 * one per thread for API records and one for device records; a buffer is completed when
 * full (delivered by the layer's thread), by cuptiActivityFlushAll (on the caller's thread)
 * or by the period of cuptiActivityFlushPeriod (the layer's thread; "periodic flush can
 * return only those activity buffers which are full and have all the activity records
 * completed"); client buffers zeroed by the layer on request unless
 * CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER is set; records only of
 * enabled kinds; an EXTERNAL_CORRELATION record before each API record, one per kind whose
 * per-thread stack is non-empty; thread ids as cuptiSetThreadIdType says; queued/submitted
 * only after cuptiActivityEnableLatencyTimestamps(1); declined buffers and injected losses
 * counted by cuptiActivityGetNumDroppedRecords (reset on read); one subscriber.
 *
 * What CUPTI does not document, and the layer models (each a switch where it matters):
 * - A device record is written with its kind last. It stays incomplete (kind bytes not
 *   written) until post-processed, which a normal flush and the periodic flush do and a
 *   forced flush does not; a normal flush delivers only buffers without incomplete records,
 *   a forced flush delivers everything.
 * - A runtime call may make a nested driver call whose API record comes first (it ends
 *   first), with a correlation id of its own or the runtime call's (lin_cl_config.driver).
 * - A kernel record carries the runtime call's correlation id or the driver call's
 *   (kernel_driver_corr); memcpy records carry both (correlationId = the driver call's,
 *   runtimeCorrelationId = the runtime call's, as the header says); memset records the
 *   runtime call's (the header says the driver call's, but in the Kineto traces of
 *   docs/cupti.md every memset carries its cudaMemsetAsync's id).
 * - Completed buffers are delivered in an order shuffled by a seed.
 */
#ifndef LIN_CUPTI_LAYER_H
#define LIN_CUPTI_LAYER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cupti.h>

#include "cupti_api.h"

/* Correlation ids of a nested driver call (lin_cl_config.driver). */
enum lin_cl_driver {
	LIN_CL_DRIVER_DISTINCT = 0, /* its own correlation id */
	LIN_CL_DRIVER_SHARED = 1,   /* the runtime call's */
};

struct lin_cl_config {
	size_t sz;
	uint32_t version;    /* cuptiGetVersion answers this; 0 = CUPTI_API_VERSION */
	uint32_t buffer_use; /* fill at most this many bytes of a client buffer; 0 = all */
	uint64_t seed;       /* delivery order of completed buffers; 0 = in order */
	enum lin_cl_driver driver;
	bool kernel_driver_corr;   /* kernels carry the nested driver call's correlation id */
	bool other_subscriber;     /* someone invisible (Nsight) holds the subscriber */
	bool thread_id_type_fails; /* cuptiSetThreadIdType returns CUPTI_ERROR_NOT_SUPPORTED */
	bool latency_fails;        /* cuptiActivityEnableLatencyTimestamps fails likewise */
	uint64_t refuse_kinds;     /* bit k set: cuptiActivityEnable(k) returns NOT_COMPATIBLE
				    * (any kind below 64: CUDA_EVENT 36, SYNCHRONIZATION 38) */
	/* The device clock (cuptiGetTimestamp, unless a timestamp callback is registered);
	 * NULL = CLOCK_REALTIME, as CUPTI on Linux. */
	uint64_t (*clock)(void *user);
	void *clock_user;
};

/* lin_cl_configure - set the switches; call before anything uses the layer. 0 or -EINVAL. */
int lin_cl_configure(const struct lin_cl_config *c);

/*
 * lin_cl_cupti_api - the layer as a table of CUPTI entry points (cupti_api.h), for
 * lin_cupti_use_api: the layer's own, with libcupti's cuptiActivityGetNextRecord and
 * cuptiGetResultString. Static; any thread.
 */
const struct lin_cupti_api *lin_cl_cupti_api(void);

/* ------------------------------------------------------------- the program's CUDA calls */

/*
 * struct lin_cl_call - one CUDA API call on the calling thread.
 * @cbid: the runtime cbid (0: a driver API call only). @driver_cbid: the nested (or only)
 * driver call's cbid (0: none). @start, @end: the call's device-clock interval (0: the
 * layer's clock now, + 1 µs). @drop: CUPTI loses this call's ext and API records (they are
 * counted by cuptiActivityGetNumDroppedRecords; GPU records stay).
 */
struct lin_cl_call {
	uint32_t cbid;
	uint32_t driver_cbid;
	uint64_t start, end;
	bool drop;
};

/* The correlation ids one call was given (0: no such call). */
struct lin_cl_corr {
	uint32_t runtime;
	uint32_t driver;
};

/* lin_cl_api - record @c as CUPTI would. Return: its correlation ids. Any thread. */
struct lin_cl_corr lin_cl_api(const struct lin_cl_call *c);

/*
 * lin_cl_gpu - a device record of the work call @corr launched: a CUpti_ActivityKernel10
 * (kind KERNEL or CONCURRENT_KERNEL), CUpti_ActivityMemcpy6, CUpti_ActivityMemcpyPtoP4
 * (kind MEMCPY2: peer copies) or CUpti_ActivityMemset4; or the record of an event
 * recording (CUpti_ActivityCudaEvent2) or a synchronization (CUpti_ActivitySynchronization2)
 * call @corr made, which carries the runtime call's id (the driver call's without one). Of
 * @len bytes. The layer sets its correlation fields from @corr (see above), clears queued/submitted
 * without latency timestamps, and drops it when its kind is not enabled (refuse_kinds: never
 * enabled). Any thread.
 */
void lin_cl_gpu(const void *rec, size_t len, struct lin_cl_corr corr);

/*
 * lin_cl_gpu_hold - while held, device records are written but their work is not done:
 * no flush completes them, a forced flush delivers them incomplete. Releasing lets the
 * next normal flush complete them.
 */
void lin_cl_gpu_hold(bool hold);

/* ------------------------------------------------------------- what the layer saw */

struct lin_cl_stats {
	uint64_t requests;             /* buffer requests made */
	uint64_t declined;             /* ... answered with no buffer */
	uint64_t delivered;            /* buffers handed to the completion callback */
	uint64_t delivered_incomplete; /* ... with incomplete records in them */
	uint64_t returned;             /* delivered buffers whose callback has returned */
	uint64_t records;              /* records written */
	uint64_t dropped;              /* records lost (declined buffers, injected) */
	uint64_t flushes, forced_flushes;
	uint64_t forced_while_enabled; /* forced flushes made while a kind was still enabled */
	uint64_t periodic_flushes;     /* periods of cuptiActivityFlushPeriod that went by */
	uint32_t max_outstanding;      /* most buffers held by the layer at once */
};

void lin_cl_get_stats(struct lin_cl_stats *st);
bool lin_cl_enabled(uint32_t kind);
uint32_t lin_cl_thread_id_type(void);
bool lin_cl_latency_enabled(void);
/* Whether cuptiActivityEnableLatencyTimestamps came after another CUPTI call (CUPTI wants it
 * before CUDA is initialised). */
bool lin_cl_latency_late(void);
/* Whether CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER was set non-zero. */
bool lin_cl_zeroed_attr(void);
uint32_t lin_cl_flush_period(void);
bool lin_cl_subscribed(void);                    /* whether a cuptiSubscribe is in effect */
bool lin_cl_timestamp_callback_registered(void); /* cuptiActivityRegisterTimestampCallback */
/* Whether the registered buffer callbacks are these two. */
bool lin_cl_callbacks_are(CUpti_BuffersCallbackRequestFunc request,
			  CUpti_BuffersCallbackCompleteFunc complete);

#endif
