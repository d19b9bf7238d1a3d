/* SPDX-License-Identifier: MIT */
/*
 * sim.h - a CUPTI-semantics simulator: a fake "CUDA API" that synthetic workloads call
 * instead of the GPU, and that writes what CUPTI would write for those calls into real
 * CUPTI activity buffers (CUpti_ActivityExternalCorrelation, CUpti_ActivityAPI,
 * CUpti_ActivityKernel10, CUpti_ActivityMemcpy6, CUpti_ActivityMemset4). The buffers are
 * handed to lin_cupti_attach_decode, the same decode path as live collection.
 * docs/simulator.md lists every semantic it reproduces and where it comes from.
 *
 * One simulator per process. Every call may run on any thread; per-thread state (the
 * external-correlation stacks, the API-record buffers) is created on a thread's first call.
 * Not installed; bench-only.
 */
#ifndef LIN_SIM_H
#define LIN_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lineage/runtime.h"

typedef struct lin_sim lin_sim;

/* How the simulated CUPTI reaches lineage. */
enum lin_sim_cupti {
	LIN_SIM_ATTACH = 0, /* the simulator's own buffers, to lin_cupti_attach_decode at flush */
	LIN_SIM_LAYER = 1,  /* the test CUPTI layer (cupti_bind/testlayer): CUPTI's entry
			      * points, its buffers delivered to whoever registered callbacks */
};

/* Layer mode: the driver call each runtime call makes (docs/simulator.md). */
enum lin_sim_driver {
	LIN_SIM_DRIVER_NONE = 0,
	LIN_SIM_DRIVER_DISTINCT = 1,
	LIN_SIM_DRIVER_SHARED = 2
};

struct lin_sim_opts {
	size_t sz;
	uint64_t seed;          /* buffer delivery order, drop decisions */
	uint32_t drop_permille; /* API calls whose ext+API records are dropped (0..1000) */
	uint32_t buffer_bytes; /* activity buffer size (layer: bytes of each buffer used); 0 = 4096 */
	uint32_t ext_kind;     /* the kind lin_sim_backend_ops pushes; 0 = CUSTOM2 */
	bool host_clock;       /* device timestamps are the runtime's host clock itself, as
				   * with a CUPTI timestamp callback (LIN_BACKEND_F_HOST_CLOCK);
				   * false: that clock plus CLOCK_REALTIME - CLOCK_MONOTONIC */
	enum lin_sim_cupti cupti;
	enum lin_sim_driver driver;
	bool latency_timestamps; /* kernel records carry queued and submitted (off by default,
				  * as in CUPTI; layer mode: only if the CUPTI client also
				  * enabled them, docs/simulator.md row 18) */
	/* A runtime call's own work around CUPTI's timestamps (docs/simulator.md, "Clocks"):
	 * its API record starts api_enter_ns after the launch bracket's host time (or the
	 * call's entry) and the call returns api_exit_ns after the record's end, spinning as
	 * a real call does. 0, 0: the record starts 1 ns after the bracket's host time and the
	 * call returns at once (the tightest case). LIN_SIM_API_ENTER_NS/EXIT_NS: what an
	 * H200 showed at the least. */
	uint32_t api_enter_ns, api_exit_ns;
};
#define LIN_SIM_API_ENTER_NS 372
#define LIN_SIM_API_EXIT_NS 59

/* Observable counters (what the simulator emitted). */
struct lin_sim_stats {
	uint64_t api_calls;
	uint64_t ext_records;
	uint64_t kernels;
	uint64_t memcpys;
	uint64_t memsets;
	uint64_t buffers;
	uint64_t dropped_records; /* reported through lin_cupti_attach_dropped */
	uint64_t events;          /* CUDA_EVENT records (lin_sim_event_record) */
	uint64_t syncs;           /* SYNCHRONIZATION records (lin_sim_stream_wait_event) */
};

/* The most nodes one simulated graph holds (captures past it drop the launch). */
#define LIN_SIM_MAX_NODES 512

/* A graph exec's view of one node: the captured node and the clone instantiation made. */
struct lin_sim_node {
	uint64_t original;
	uint64_t clone;
	const char *name;
};

/* lin_sim_create - @rt receives the decoded buffers at lin_sim_flush. Return 0, -EINVAL, -ENOMEM. */
int lin_sim_create(lin_runtime *rt, const struct lin_sim_opts *opts, lin_sim **out);

/* lin_sim_flush - deliver every buffer (per thread, in an order shuffled by the seed) to
 * lin_cupti_attach_decode and report dropped records; in layer mode, flush CUPTI (normal,
 * then forced) to whoever registered the buffer callbacks. Call when no thread is in a sim
 * call. Return 0 or the first decode error. */
int lin_sim_flush(lin_sim *s);

/* lin_sim_free - flush nothing; free everything. NULL accepted. */
void lin_sim_free(lin_sim *s);

/* lin_sim_set_runtime - the runtime flush delivers to (set before the first flush). */
void lin_sim_set_runtime(lin_sim *s, lin_runtime *rt);

/* splitmix64: the simulator's and the workloads' deterministic choices. */
uint64_t lin_sim_mix(uint64_t x);

void lin_sim_get_stats(const lin_sim *s, struct lin_sim_stats *st);

/* The simulated device clock is the runtime's host clock plus this offset (ns). */
uint64_t lin_sim_clock_offset(const lin_sim *s);

/* ------------------------------------------------------------- external correlation */

/* cuptiActivityPush/PopExternalCorrelationId for the calling thread (layer mode: those
 * very calls, into the layer's stacks). Return 0; -EINVAL
 * (kind outside CUSTOM0..CUSTOM2/UNKNOWN, the INVALID_PARAMETER case); pop: -ENOENT when the
 * kind's stack is empty (CUPTI_ERROR_QUEUE_EMPTY). */
int lin_sim_ext_push(lin_sim *s, uint32_t kind, uint64_t id);
int lin_sim_ext_pop(lin_sim *s, uint32_t kind, uint64_t *id);

/* A binding backend whose push/pop are lin_sim_ext_push/pop on the calling thread. */
void lin_sim_backend_ops(lin_sim *s, struct lin_backend_ops *ops);

/* A launch observer: the simulator takes the runtime's host time of each launch as the
 * time base of the API call that follows on that thread (see docs/simulator.md). */
void lin_sim_observer(const struct lin_launch_info *info, void *user);

/* ------------------------------------------------------------- the "CUDA API" */

/* Whether the calling thread's last API call had its ext and API records dropped (the
 * workload's own bookkeeping of the loss it expects the validator to report). */
bool lin_sim_last_call_dropped(lin_sim *s);

/* Launch @name on @stream. Returns the kernel's gridId (0 while @stream is capturing: the
 * launch becomes a graph node instead). */
int64_t lin_sim_launch_kernel(lin_sim *s, uint32_t stream, const char *name);

/*
 * What a workload injects into one launch, and what the simulator did with it (device
 * clock; docs/simulator.md rows 21-24). Zero-initialise, set the inputs, pass it to
 * lin_sim_launch_kernel_ex (or an array to lin_sim_graph_launch_ex).
 */
struct lin_sim_launch {
	/* in */
	uint64_t dur_ns;          /* the kernel's device duration (0: 1 to 10 us by the seed);
				   * captured into a graph node, it is the node's duration */
	uint64_t until_dev;       /* the kernel runs at least until this device time (0: no) */
	uint64_t api_work_ns;     /* CPU work inside the launch call: it spins this long, before
				   * the command is written (queued at the call's end, and the
				   * kernel starts no earlier than 200 ns after submission) */
	uint64_t submit_delay_ns; /* added between queued and submitted; the kernel starts no
				   * earlier than 200 ns after submission */
	bool submit_at_free;      /* submitted no earlier than a device slot frees
				   * (lin_sim_set_device_slots) */
	/* out */
	int64_t grid;
	uint64_t api_start, api_end, queued, submitted, start, end;
};

/* lin_sim_launch_kernel with @l's injections (@l may be NULL); fills @l's outputs. */
int64_t lin_sim_launch_kernel_ex(lin_sim *s, uint32_t stream, const char *name,
				 struct lin_sim_launch *l);

/* The device runs at most @n kernels, memcpys and memsets at once (0: no limit, the
 * default; at most 64): work starts 200 ns after a slot frees, whatever its stream. */
void lin_sim_set_device_slots(lin_sim *s, uint32_t n);
/* When every stream's work issued so far ends (device clock; 0: none). */
uint64_t lin_sim_device_idle(lin_sim *s);
/* When the first slot frees (device clock; 0: no limit or never used). */
uint64_t lin_sim_device_free(lin_sim *s);

/* cudaMemcpyAsync / cudaMemsetAsync. Return the record's start timestamp (device clock). */
uint64_t lin_sim_memcpy(lin_sim *s, uint32_t stream, uint64_t bytes);
uint64_t lin_sim_memset(lin_sim *s, uint32_t stream, uint64_t bytes, uint32_t value);
/* lin_sim_memcpy with @l's dur_ns (the copy's device duration; 0: 1 to 10 us by the
 * seed; the other inputs are ignored); fills @l's api_start, api_end, start and end
 * (queued, submitted: 0; grid: the call's correlationId). @l may be NULL. */
uint64_t lin_sim_memcpy_ex(lin_sim *s, uint32_t stream, uint64_t bytes, struct lin_sim_launch *l);

/*
 * cudaEventRecord on @stream: an API call and a CUDA_EVENT record (CUpti_ActivityCudaEvent2)
 * with an eventId and a cudaEventSyncId of its own. The recording captures the work
 * launched on @stream so far (and what @stream waited for). Returns the event handle (its
 * eventId), or 0 while @stream is capturing (not simulated: no record) or when the
 * simulator's event table is full.
 */
uint32_t lin_sim_event_record(lin_sim *s, uint32_t stream);

/*
 * cudaStreamWaitEvent(@stream, @event): an API call and a SYNCHRONIZATION record of type
 * STREAM_WAIT_EVENT naming the event's eventId and cudaEventSyncId; work launched on
 * @stream afterwards starts no earlier than the end of the work @event captured. Returns 0;
 * -EINVAL for an unknown event or a capturing stream (no record, no dependency).
 */
int lin_sim_stream_wait_event(lin_sim *s, uint32_t stream, uint32_t event);

/* cudaStreamBeginCapture / EndCapture: kernels launched into @stream in between become
 * nodes of a new graph. end returns the graph id (0: not capturing) and copies up to @cap
 * node ids into @nodes, *@n = the node count. */
int lin_sim_capture_begin(lin_sim *s, uint32_t stream);
uint32_t lin_sim_capture_end(lin_sim *s, uint32_t stream, uint64_t *nodes, size_t cap, size_t *n);

/* cudaGraphInstantiate: clones every node (fresh ids). Returns the exec id (0: unknown
 * graph) and copies up to @cap (original, clone) pairs into @map, *@n = the node count. */
uint32_t lin_sim_graph_instantiate(lin_sim *s, uint32_t graph, struct lin_sim_node *map, size_t cap,
				   size_t *n);

/* cudaGraphLaunch: one correlationId for the call, one kernel per node (graphNodeId = the
 * clone). Copies up to @cap gridIds into @grids in node order; returns the kernel count. */
size_t lin_sim_graph_launch(lin_sim *s, uint32_t exec, uint32_t stream, int64_t *grids, size_t cap);
/* The same; and each node's kernel's times into @nodes (up to @ncap; may be NULL). */
size_t lin_sim_graph_launch_ex(lin_sim *s, uint32_t exec, uint32_t stream, int64_t *grids,
			       size_t cap, struct lin_sim_launch *nodes, size_t ncap);

#endif
