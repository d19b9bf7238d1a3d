/* SPDX-License-Identifier: MIT */
/* layer_internal.h - the test layer's state, shared by layer.c (entry points, stacks,
 * switches) and layer_buf.c (buffers, records, flushes, delivery). Never installed. */
#ifndef LIN_CUPTI_LAYER_INTERNAL_H
#define LIN_CUPTI_LAYER_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>

#include <cupti.h>

#include "cupti_layer.h"

#define CL_API __attribute__((visibility("default")))
#define CL_EXT_KINDS 6 /* CUpti_ExternalCorrelationKind 0..5 */
#define CL_STACK 64
#define CL_KINDS 64

/* A client buffer being filled, or completed and waiting for delivery. */
struct cl_buf {
	uint8_t *data;
	size_t size; /* as the client gave it */
	size_t cap;  /* what the layer fills (lin_cl_config.buffer_use) */
	size_t used;
	uint32_t incomplete; /* device records whose kind is not written yet */
	struct cl_buf *next;
};

/* A device record written without its kind. */
struct cl_pending {
	struct cl_buf *buf;
	size_t off;
	uint32_t kind;
	bool done; /* its work finished (not held): post-processing completes it */
};

/* One application thread: CUPTI's per-thread external-correlation stacks and buffer. */
struct cl_thread {
	struct cl_thread *next;
	uint64_t stack[CL_EXT_KINDS][CL_STACK];
	uint32_t depth[CL_EXT_KINDS];
	struct cl_buf *cur;
	uint32_t tid;
	uint32_t self; /* (uint32_t)pthread_self(): CUPTI's default thread id */
};

struct cl_state {
	pthread_mutex_t mu;
	pthread_cond_t cv; /* deliveries finished, worker wake-ups */
	struct lin_cl_config cfg;
	CUpti_BuffersCallbackRequestFunc req;
	CUpti_BuffersCallbackCompleteFunc done;
	CUpti_TimestampCallbackFunc ts_cb;
	bool enabled[CL_KINDS];
	CUpti_ActivityThreadIdType tid_type;
	bool subscribed;
	bool latency;
	bool latency_late; /* latency timestamps asked for after CUPTI was in use */
	bool in_use;       /* a push, subscribe, enable or registration was made */
	bool zeroed_attr;  /* CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER set */
	bool hold;
	uint32_t flush_ms;
	atomic_uint next_corr;
	struct cl_thread *threads;
	struct cl_buf *dev;   /* device records */
	struct cl_buf *queue; /* completed, to deliver (FIFO through queue_tail) */
	struct cl_buf **queue_tail;
	struct cl_buf *waiting; /* full, with incomplete records */
	struct cl_pending *pend;
	size_t n_pend, cap_pend;
	uint64_t dropped; /* since the last cuptiActivityGetNumDroppedRecords */
	uint32_t delivering;
	uint32_t outstanding; /* client buffers the layer holds */
	uint64_t rng;
	pthread_t worker;
	bool worker_running, stop;
	struct lin_cl_stats st;
};

extern struct cl_state cl;

/* The state, initialised on first use. */
void cl_init(void);
struct cl_thread *cl_thread_self(void);
uint64_t cl_now(void);

/* Append one CPU-side record (complete) to @t's buffer. Call with cl.mu held; it may drop
 * and retake it to request a buffer. Return false when the record was dropped. */
bool cl_put_thread(struct cl_thread *t, const void *rec, size_t len);
/* Append a device record (written without its kind). Same locking. */
bool cl_put_device(const void *rec, size_t len);
/* Start the delivery thread (cl.mu held). */
void cl_worker_start(void);
/* cuptiActivityFlushAll's body. */
CUptiResult cl_flush(bool forced);

#endif
