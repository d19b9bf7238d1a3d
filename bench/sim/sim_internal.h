/* SPDX-License-Identifier: MIT */
/* sim_internal.h - the simulator's state, shared by sim.c (stacks, buffers, delivery) and
 * sim_api.c (the "CUDA API"). Not installed. */
#ifndef LIN_SIM_INTERNAL_H
#define LIN_SIM_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "cupti_layer.h"
#include "sim.h"

#define SIM_KINDS 6 /* CUpti_ExternalCorrelationKind values 0..5 */
#define SIM_STACK 64
#define SIM_STREAMS 64
#define SIM_GRAPHS 256
#define SIM_NODES LIN_SIM_MAX_NODES
#define SIM_EVENTS 4096
#define SIM_SLOTS 64

struct sim_buf {
	uint8_t *data;
	size_t used;
};

struct sim_bufvec {
	struct sim_buf *v;
	size_t n, cap;
};

/* One application thread: CUPTI's per-thread, per-kind stacks and its activity buffer. */
struct sim_thread {
	struct sim_thread *next;
	uint64_t stack[SIM_KINDS][SIM_STACK];
	uint32_t depth[SIM_KINDS];
	struct sim_buf cur;      /* API and ext records of this thread */
	uint64_t launch_host_ns; /* from the launch observer; 0 when consumed */
	bool last_dropped;
	uint32_t tid;
	struct lin_cl_corr corr; /* layer mode: the last call's correlation ids */
	uint64_t api_end;        /* the last call's end on the device clock */
	uint64_t api_work_ns;    /* CPU work the next call does inside itself (then 0) */
};

/* One event recording: what it captured. */
struct sim_event {
	uint32_t stream;
	uint64_t sync_id;
	uint64_t done; /* the end of the work it captured (device clock; 0: none) */
};

struct sim_graph {
	uint32_t id;
	size_t n;
	uint64_t node[SIM_NODES];
	const char *name[SIM_NODES];
	uint64_t dur[SIM_NODES]; /* device duration of each node's kernel (0: by the seed) */
};

struct sim_exec {
	uint32_t id;
	uint32_t graph; /* index + 1 into graphs */
	uint64_t clone[SIM_NODES];
};

struct lin_sim {
	struct lin_sim_opts o;
	lin_runtime *rt;
	uint64_t clock_off;
	atomic_uint_fast32_t next_corr;
	atomic_int_fast64_t next_grid;
	atomic_uint_fast64_t next_node;
	pthread_mutex_t mu; /* threads list, completed buffers, device state */
	struct sim_thread *threads;
	struct sim_bufvec done;
	struct sim_buf dev; /* GPU-side records (kernels, memcpy, memset) */
	uint64_t dev_last;  /* last device timestamp handed out */
	uint64_t stream_end[SIM_STREAMS];
	uint32_t slots;               /* kernels the device runs at once (0: no limit) */
	uint64_t slot_end[SIM_SLOTS]; /* when each of the slots frees (device clock) */
	int capture[SIM_STREAMS];     /* graph index + 1 while capturing */
	struct sim_graph graphs[SIM_GRAPHS];
	size_t n_graphs;
	struct sim_exec execs[SIM_GRAPHS];
	size_t n_execs;
	struct sim_event events[SIM_EVENTS]; /* eventId - 1 */
	size_t n_events;
	struct lin_sim_stats st; /* under mu */
	uint64_t drops_reported;
};

uint64_t lin_sim_mix(uint64_t x);
uint64_t lin_sim_mono_ns(void);
struct sim_thread *lin_sim_thread(lin_sim *s);
/* Append one record to @b; a full buffer is completed first. Caller holds s->mu when @b
 * is the device buffer; a thread buffer belongs to its thread (mu taken only to complete). */
void lin_sim_put(lin_sim *s, struct sim_buf *b, const void *rec, size_t len, bool locked);

/* One API call on the calling thread: a fresh correlationId, one ext record per kind
 * whose stack is non-empty, then the API record (layer mode: the layer does all this, with
 * the nested driver call @driver_cbid when opts.driver says so). Returns the
 * correlationId and the API call's start on the device clock in *@start. */
uint32_t lin_sim_api_call(lin_sim *s, uint32_t cbid, uint32_t driver_cbid, uint64_t *start);

/* The calling thread's last API call's end (device clock), as its API record says. */
uint64_t lin_sim_api_end(lin_sim *s);

/* A GPU record of the calling thread's last call: into the device buffer (attach mode;
 * s->mu held) or to the layer. */
void lin_sim_put_gpu(lin_sim *s, const void *rec, size_t len);

#endif
