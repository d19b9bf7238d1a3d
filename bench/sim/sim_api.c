/* SPDX-License-Identifier: MIT */
/*
 * sim_api.c - the simulator's "CUDA API": kernel launches, async memcpy/memset, stream
 * capture, graph instantiation (node cloning) and graph launch. Each call is one API call
 * (lin_sim_api_call) plus the GPU records CUPTI would write for it.
 */
#include <cupti.h>
#include <errno.h>
#include <string.h>

#include "sim_internal.h"

/* The slot that frees first (lin_sim_set_device_slots; caller holds s->mu). */
static size_t first_free(const lin_sim *s)
{
	size_t best = 0;
	for (size_t i = 1; i < s->slots; i++)
		if (s->slot_end[i] < s->slot_end[best])
			best = i;
	return best;
}

/* A device time slot on @stream (caller holds s->mu): after the API call (and after @floor:
 * the command's submission, when it was delayed), after the stream's previous work (and
 * the end of the work of every event it waited for, lin_sim_stream_wait_event), after a
 * slot of the device frees (lin_sim_set_device_slots), and strictly after every start
 * handed out so far, so that start timestamps are unique in the process (the truth key
 * of memcpy/memset). The work runs @dur ns (0: 1 to 10 us by the seed and @key), or until
 * @until when that is later. */
static uint64_t dev_slot(lin_sim *s, uint32_t stream, uint64_t api_start, uint64_t floor,
			 uint64_t key, uint64_t dur, uint64_t until, uint64_t *end)
{
	uint64_t start = api_start + 2000;
	uint32_t st = stream % SIM_STREAMS;
	size_t slot = s->slots ? first_free(s) : 0;
	if (floor > start)
		start = floor;
	if (s->stream_end[st] + 200 > start)
		start = s->stream_end[st] + 200;
	if (s->slots && s->slot_end[slot] + 200 > start)
		start = s->slot_end[slot] + 200;
	if (s->dev_last + 1 > start)
		start = s->dev_last + 1;
	*end = start + (dur ? dur : 1000 + lin_sim_mix(s->o.seed ^ key) % 9000);
	if (until > *end)
		*end = until;
	s->stream_end[st] = *end;
	if (s->slots)
		s->slot_end[slot] = *end;
	s->dev_last = start;
	return start;
}

void lin_sim_set_device_slots(lin_sim *s, uint32_t n)
{
	pthread_mutex_lock(&s->mu);
	s->slots = n > SIM_SLOTS ? SIM_SLOTS : n;
	pthread_mutex_unlock(&s->mu);
}

uint64_t lin_sim_device_idle(lin_sim *s)
{
	pthread_mutex_lock(&s->mu);
	uint64_t t = 0;
	for (size_t i = 0; i < SIM_STREAMS; i++)
		t = s->stream_end[i] > t ? s->stream_end[i] : t;
	pthread_mutex_unlock(&s->mu);
	return t;
}

uint64_t lin_sim_device_free(lin_sim *s)
{
	pthread_mutex_lock(&s->mu);
	uint64_t t = s->slots ? s->slot_end[first_free(s)] : 0;
	pthread_mutex_unlock(&s->mu);
	return t;
}

/*
 * Latency timestamps of a kernel whose launch call ran from @api_start to @api_end
 * (docs/simulator.md, row 18): queued, when the call wrote the command, 100 to 499 ns into
 * the call (never after its end); submitted, when the command was handed to the device,
 * 200 to 1399 ns later, plus the launch's injected submission delay, and no earlier than
 * the device frees when the launch asks so (submit_at_free). The offsets are functions of
 * the seed and the grid id. Without an injected delay, both are held to the kernel's start
 * afterwards (the start does not wait for them); with one, the start waits for submission.
 */
static void latency(const lin_sim *s, int64_t grid, uint64_t api_start, uint64_t api_end,
		    const struct lin_sim_launch *l, uint64_t *queued, uint64_t *submitted)
{
	uint64_t q = api_start + 100 + lin_sim_mix(s->o.seed ^ (uint64_t)grid ^ 0x51) % 400;

	if (api_end && q > api_end)
		q = api_end;
	uint64_t sub = q + 200 + lin_sim_mix(s->o.seed ^ (uint64_t)grid ^ 0x5b) % 1200;
	if (l)
		sub += l->submit_delay_ns;
	if (l && l->submit_at_free && s->slots && s->slot_end[first_free(s)] > sub)
		sub = s->slot_end[first_free(s)];
	*queued = q;
	*submitted = sub;
}

static bool delays_submission(const struct lin_sim_launch *l)
{
	return l && (l->submit_delay_ns || l->submit_at_free || l->api_work_ns);
}

static void put_kernel(lin_sim *s, uint32_t stream, uint32_t corr, uint64_t api_start,
		       uint64_t api_end, const char *name, int64_t grid, uint64_t node,
		       uint32_t graph, struct lin_sim_launch *l)
{
	CUpti_ActivityKernel10 k;
	uint64_t q, sub;
	memset(&k, 0, sizeof(k));
	k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	latency(s, grid, api_start, api_end, l, &q, &sub);
	if (l && l->api_work_ns) {
		/* The work came before the driver wrote the command: queued at the call's end. */
		uint64_t back = 100 + lin_sim_mix(s->o.seed ^ (uint64_t)grid ^ 0x51) % 400;
		uint64_t gap = sub - q;
		q = api_end > api_start + back ? api_end - back : api_start;
		sub = q + gap;
	}
	k.start = dev_slot(s, stream, api_start, delays_submission(l) ? sub + 200 : 0,
			   (uint64_t)grid, l ? l->dur_ns : 0, l ? l->until_dev : 0, &k.end);
	if (!delays_submission(l)) {
		q = q < k.start ? q : k.start;
		sub = sub < k.start ? sub : k.start;
	}
	if (s->o.latency_timestamps) {
		k.queued = q;
		k.submitted = sub;
	}
	if (l) {
		l->grid = grid;
		l->api_start = api_start;
		l->api_end = api_end;
		l->queued = q;
		l->submitted = sub;
		l->start = k.start;
		l->end = k.end;
	}
	k.completed = k.end;
	k.deviceId = 0;
	k.contextId = 1;
	k.streamId = stream;
	k.correlationId = corr;
	k.gridId = grid;
	k.name = name;
	k.graphNodeId = node;
	k.graphId = graph;
	k.channelID = 1;
	k.channelType = CUPTI_CHANNEL_TYPE_COMPUTE;
	k.gridX = k.gridY = k.gridZ = 1;
	k.blockX = 128;
	k.blockY = k.blockZ = 1;
	lin_sim_put_gpu(s, &k, sizeof(k));
	s->st.kernels++;
}

static struct sim_graph *capture_graph(lin_sim *s, uint32_t stream)
{
	int g = s->capture[stream % SIM_STREAMS];
	return g ? &s->graphs[g - 1] : NULL;
}

int64_t lin_sim_launch_kernel(lin_sim *s, uint32_t stream, const char *name)
{
	return lin_sim_launch_kernel_ex(s, stream, name, NULL);
}

int64_t lin_sim_launch_kernel_ex(lin_sim *s, uint32_t stream, const char *name, struct lin_sim_launch *l)
{
	uint64_t api_start;
	if (l && l->api_work_ns)
		lin_sim_thread(s)->api_work_ns = l->api_work_ns;
	uint32_t corr = lin_sim_api_call(s, CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000,
					 CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, &api_start);
	pthread_mutex_lock(&s->mu);
	struct sim_graph *g = capture_graph(s, stream);
	if (g) {
		/* Captured, not run: the launch becomes a node (docs/simulator.md, row 10). */
		if (g->n < SIM_NODES) {
			g->node[g->n] = atomic_fetch_add(&s->next_node, 1);
			g->dur[g->n] = l ? l->dur_ns : 0;
			g->name[g->n++] = name;
		}
		pthread_mutex_unlock(&s->mu);
		return 0;
	}
	int64_t grid = atomic_fetch_add(&s->next_grid, 1);
	put_kernel(s, stream, corr, api_start, lin_sim_api_end(s), name, grid, 0, 0, l);
	pthread_mutex_unlock(&s->mu);
	return grid;
}

static uint64_t memop(lin_sim *s, uint32_t stream, uint64_t bytes, uint32_t value, bool is_set,
		      struct lin_sim_launch *l)
{
	uint64_t api_start;
	uint32_t cbid = is_set ? CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020
			       : CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020;
	uint32_t drv = is_set ? CUPTI_DRIVER_TRACE_CBID_cuMemsetD8Async
			      : CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoDAsync_v2;
	uint32_t corr = lin_sim_api_call(s, cbid, drv, &api_start);
	uint64_t api_end = lin_sim_api_end(s);
	uint64_t start, end;
	pthread_mutex_lock(&s->mu);
	start = dev_slot(s, stream, api_start, 0, ((uint64_t)corr << 1) | is_set, l ? l->dur_ns : 0,
			 0, &end);
	if (l) {
		l->grid = corr;
		l->api_start = api_start;
		l->api_end = api_end;
		l->queued = l->submitted = 0;
		l->start = start;
		l->end = end;
	}
	if (is_set) {
		CUpti_ActivityMemset4 m;
		memset(&m, 0, sizeof(m));
		m.kind = CUPTI_ACTIVITY_KIND_MEMSET;
		m.value = value;
		m.bytes = bytes;
		m.start = start;
		m.end = end;
		m.contextId = 1;
		m.streamId = stream;
		m.correlationId = corr;
		m.channelID = 1;
		m.channelType = CUPTI_CHANNEL_TYPE_COMPUTE;
		lin_sim_put_gpu(s, &m, sizeof(m));
		s->st.memsets++;
	} else {
		CUpti_ActivityMemcpy6 m;
		memset(&m, 0, sizeof(m));
		m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
		m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
		m.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
		m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
		m.bytes = bytes;
		m.start = start;
		m.end = end;
		m.contextId = 1;
		m.streamId = stream;
		m.correlationId = corr;
		m.runtimeCorrelationId = corr;
		m.channelID = 2;
		m.channelType = CUPTI_CHANNEL_TYPE_ASYNC_MEMCPY;
		m.copyCount = 1;
		lin_sim_put_gpu(s, &m, sizeof(m));
		s->st.memcpys++;
	}
	pthread_mutex_unlock(&s->mu);
	return start;
}

uint64_t lin_sim_memcpy(lin_sim *s, uint32_t stream, uint64_t bytes)
{
	return memop(s, stream, bytes, 0, false, NULL);
}

uint64_t lin_sim_memcpy_ex(lin_sim *s, uint32_t stream, uint64_t bytes, struct lin_sim_launch *l)
{
	return memop(s, stream, bytes, 0, false, l);
}

uint64_t lin_sim_memset(lin_sim *s, uint32_t stream, uint64_t bytes, uint32_t value)
{
	return memop(s, stream, bytes, value, true, NULL);
}

/* ------------------------------------------------------------- events */

uint32_t lin_sim_event_record(lin_sim *s, uint32_t stream)
{
	uint64_t api_start;
	uint32_t corr = lin_sim_api_call(s, CUPTI_RUNTIME_TRACE_CBID_cudaEventRecord_v3020,
					 CUPTI_DRIVER_TRACE_CBID_cuEventRecord, &api_start);
	uint32_t id = 0;
	pthread_mutex_lock(&s->mu);
	if (!capture_graph(s, stream) && s->n_events < SIM_EVENTS) {
		struct sim_event *ev = &s->events[s->n_events++];
		id = (uint32_t)s->n_events;
		ev->stream = stream;
		/* A new one per recording, 64 bits wide and never the eventId (row 19). */
		ev->sync_id = ((uint64_t)1 << 32) | id;
		/* The stream's frontier: its last work, or what it waited for since. */
		ev->done = s->stream_end[stream % SIM_STREAMS];
		CUpti_ActivityCudaEvent2 e;
		memset(&e, 0, sizeof(e));
		e.kind = CUPTI_ACTIVITY_KIND_CUDA_EVENT;
		e.correlationId = corr;
		e.contextId = 1;
		e.streamId = stream;
		e.eventId = id;
		e.deviceId = 0;
		e.cudaEventSyncId = ev->sync_id;
		lin_sim_put_gpu(s, &e, sizeof(e));
		s->st.events++;
	}
	pthread_mutex_unlock(&s->mu);
	return id;
}

int lin_sim_stream_wait_event(lin_sim *s, uint32_t stream, uint32_t event)
{
	uint64_t api_start;
	uint32_t corr = lin_sim_api_call(s, CUPTI_RUNTIME_TRACE_CBID_cudaStreamWaitEvent_v3020,
					 CUPTI_DRIVER_TRACE_CBID_cuStreamWaitEvent, &api_start);
	uint64_t api_end = lin_sim_api_end(s);
	int ret = -EINVAL;
	pthread_mutex_lock(&s->mu);
	if (event >= 1 && event <= s->n_events && !capture_graph(s, stream)) {
		const struct sim_event *ev = &s->events[event - 1];
		uint32_t st = stream % SIM_STREAMS;
		/* Later work on @stream comes after the recorded work (dev_slot). */
		if (s->stream_end[st] < ev->done)
			s->stream_end[st] = ev->done;
		CUpti_ActivitySynchronization2 w;
		memset(&w, 0, sizeof(w));
		w.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
		w.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT;
		w.start = api_start; /* the call's own times: it does not block the host */
		w.end = api_end;
		w.correlationId = corr;
		w.contextId = 1;
		w.streamId = stream;
		w.cudaEventId = event;
		w.cudaEventSyncId = ev->sync_id;
		lin_sim_put_gpu(s, &w, sizeof(w));
		s->st.syncs++;
		ret = 0;
	}
	pthread_mutex_unlock(&s->mu);
	return ret;
}

/* ------------------------------------------------------------- graphs */

int lin_sim_capture_begin(lin_sim *s, uint32_t stream)
{
	uint64_t t;
	(void)lin_sim_api_call(s, CUPTI_RUNTIME_TRACE_CBID_cudaStreamBeginCapture_v10000,
			       CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture_v2, &t);
	pthread_mutex_lock(&s->mu);
	int ret = -1;
	if (s->n_graphs < SIM_GRAPHS && !s->capture[stream % SIM_STREAMS]) {
		struct sim_graph *g = &s->graphs[s->n_graphs++];
		memset(g, 0, sizeof(*g));
		g->id = (uint32_t)s->n_graphs;
		s->capture[stream % SIM_STREAMS] = (int)s->n_graphs;
		ret = 0;
	}
	pthread_mutex_unlock(&s->mu);
	return ret;
}

uint32_t lin_sim_capture_end(lin_sim *s, uint32_t stream, uint64_t *nodes, size_t cap, size_t *n)
{
	uint64_t t;
	(void)lin_sim_api_call(s, CUPTI_RUNTIME_TRACE_CBID_cudaStreamEndCapture_v10000,
			       CUPTI_DRIVER_TRACE_CBID_cuStreamEndCapture, &t);
	pthread_mutex_lock(&s->mu);
	struct sim_graph *g = capture_graph(s, stream);
	uint32_t id = 0;
	*n = 0;
	if (g) {
		s->capture[stream % SIM_STREAMS] = 0;
		id = g->id;
		*n = g->n;
		for (size_t i = 0; i < g->n && i < cap; i++)
			nodes[i] = g->node[i];
	}
	pthread_mutex_unlock(&s->mu);
	return id;
}

uint32_t lin_sim_graph_instantiate(lin_sim *s, uint32_t graph, struct lin_sim_node *map, size_t cap,
				   size_t *n)
{
	uint64_t t;
	(void)lin_sim_api_call(s, CUPTI_RUNTIME_TRACE_CBID_cudaGraphInstantiate_v12000,
			       CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiateWithParams, &t);
	pthread_mutex_lock(&s->mu);
	uint32_t id = 0;
	*n = 0;
	if (graph >= 1 && graph <= s->n_graphs && s->n_execs < SIM_GRAPHS) {
		const struct sim_graph *g = &s->graphs[graph - 1];
		struct sim_exec *x = &s->execs[s->n_execs++];
		x->id = id = (uint32_t)s->n_execs;
		x->graph = graph;
		*n = g->n;
		/* Instantiation clones every node: fresh ids, as GRAPHNODE_CLONED reports
		 * (docs/simulator.md, row 11). */
		for (size_t i = 0; i < g->n; i++) {
			x->clone[i] = atomic_fetch_add(&s->next_node, 1);
			if (i < cap)
				map[i] = (struct lin_sim_node){ g->node[i], x->clone[i], g->name[i] };
		}
	}
	pthread_mutex_unlock(&s->mu);
	return id;
}

size_t lin_sim_graph_launch(lin_sim *s, uint32_t exec, uint32_t stream, int64_t *grids, size_t cap)
{
	return lin_sim_graph_launch_ex(s, exec, stream, grids, cap, NULL, 0);
}

size_t lin_sim_graph_launch_ex(lin_sim *s, uint32_t exec, uint32_t stream, int64_t *grids,
			       size_t cap, struct lin_sim_launch *nodes, size_t ncap)
{
	uint64_t api_start;
	uint32_t corr = lin_sim_api_call(s, CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000,
					 CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch, &api_start);
	uint64_t api_end = lin_sim_api_end(s);
	pthread_mutex_lock(&s->mu);
	size_t n = 0;
	if (exec >= 1 && exec <= s->n_execs) {
		const struct sim_exec *x = &s->execs[exec - 1];
		const struct sim_graph *g = &s->graphs[x->graph - 1];
		/* One correlationId for the whole launch; graphNodeId = the clone
		 * (docs/simulator.md, rows 11-12). */
		for (; n < g->n; n++) {
			int64_t grid = atomic_fetch_add(&s->next_grid, 1);
			struct lin_sim_launch dflt = { .dur_ns = g->dur[n] };
			struct lin_sim_launch *l = nodes && n < ncap ? &nodes[n] : &dflt;
			l->dur_ns = g->dur[n];
			put_kernel(s, stream, corr, api_start, api_end, g->name[n], grid,
				   x->clone[n], g->id, l);
			if (n < cap)
				grids[n] = grid;
		}
	}
	pthread_mutex_unlock(&s->mu);
	return n;
}
