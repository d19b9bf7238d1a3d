/* SPDX-License-Identifier: MIT */
/*
 * attrib_causes.cu - inject known launch-delay causes on a real GPU, collect a lineage trace
 * through the live CUPTI binding, and write a cause-truth file from the program's own
 * bookkeeping, so that `lineage-explain --score CAUSE_TRUTH TRACE` scores the explanation
 * on real hardware (docs/trace-format.md, "Cause-truth files").
 *
 * Each scenario runs R requests, one at a time. A request is declared on the main thread
 * (the submitter), which enters a fresh epoch, captures a token (lin_token_capture: the
 * trace gets a timed token_capture record) and queues the task for a pool of two worker
 * threads. A worker adopts the token and launches the **target** kernel, the one scored;
 * only targets get labels. The worker then waits for the device, so every request starts
 * with an empty pool and an idle GPU. The injected causes:
 *
 *   handoff_wait       both workers are busy (each sleeps D) when the task is queued; it
 *                      waits in the pool. Interval: [capture, adopt] as measured here.
 *   descheduled        the worker sleeps D between the adopt and the launch call (off-CPU).
 *                      lineage has no scheduler collector on a plain GPU machine: expect it
 *                      to say thread_delay; the label still says descheduled.
 *   stream_dependency  a one-thread kernel spinning D (clock64, at the SM clock rate the
 *                      device reports) on the target's stream, just before the target.
 *   event_dependency   the spin kernel on stream B, cudaEventRecord on B,
 *                      cudaStreamWaitEvent(A), the target on A.
 *   graph_dependency   a graph captured once as [spin node -> target node], replayed per
 *                      request (lin_graph_launch_begin/end); the target is the second node.
 *   device_busy        a kernel filling every SM (SMs x resident blocks of the maximum block
 *                      size, each thread spinning D) on stream B, launched just before the
 *                      small target on stream A.
 *   queueing           one worker launches 64 short kernels (50 us each) back to back on one
 *                      stream; kernels 2..64 are targets (waiting behind their own stream in
 *                      a throughput workload).
 * api_call and submit_delay are not injected: CPU time inside cudaLaunchKernel would need a
 * CUPTI runtime-API callback, and the driver's command submission cannot be controlled from
 * here. No labels are written for them (the program says so when it runs them all).
 *
 * Labels. Each target kernel's first thread logs its %gridid with a tag the program gave it
 * (a kernel argument; for the graph's target node, a per-run base plus a device counter,
 * replays being serialised on one stream), so no label goes through the correlation path
 * under test. Keys are grid ids, as in pool_lineage.cu (%gridid equals CUPTI's gridId: seen
 * on an H200). A graph node's kernel has the same grid id in every replay, so the graph
 * target's label also names its replay's CUPTI correlation id, read from CUPTI's callback
 * API at cudaGraphLaunch's API_ENTER (CUPTI's own id, not lineage's external ids). The
 * interval of handoff_wait and descheduled is on the runtime's host clock
 * (lin_runtime_now_ns); the device-side causes have none (nil): the program cannot see
 * when its spin kernels ran on that clock. magnitude_ns is the requested D; a spin kernel
 * can last longer when the SM clock runs below the reported peak. queueing has no
 * magnitude (nothing was injected).
 *
 * Usage: attrib_causes [--scenario NAME|all] [--requests R] [--delay-us D]
 *                      [--latency on|off] -o TRACE --cause-truth FILE
 * (--help has the rest.) Run by examples/run_attrib_causes.sh (ctest example_attrib_causes,
 * label gpu), which scores the trace and compares collection CPU time with CUPTI's latency
 * timestamps on and off.
 */
#include <cuda_runtime.h>
#include <cupti.h>
#include <msgpack.h>

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <lineage/graph.h>
#include <lineage/runtime.h>
#include <lineage/trace_format.h>

extern "C" {
#include "truth_writer.h" /* the examples' truth writer: msgpack-c and the installed headers */
}

#define PROG "attrib_causes"
#define N_WORKERS 2
#define QUEUE_CAP 16
#define LOG_CAP (1u << 17)
#define MAX_REQUESTS 1000
#define MAX_DELAY_US 1000000u /* 1 s */
#define QUEUE_KERNELS 64
#define QUEUE_KERNEL_US 50
#define TARGET_THREADS 32
#define NO_TAG INT_MAX /* a launch that gets no label */

#define FAIL(...) \
	do { \
		fprintf(stderr, PROG ": " __VA_ARGS__); \
		fputc('\n', stderr); \
		exit(1); \
	} while (0)
#define CUDA_OK(x) \
	do { \
		cudaError_t e_ = (x); \
		if (e_ != cudaSuccess) \
			FAIL("%s failed: %s (%s:%d)", #x, cudaGetErrorString(e_), __FILE__, __LINE__); \
	} while (0)
#define LAUNCH_OK(what) \
	do { \
		cudaError_t e_ = cudaGetLastError(); \
		if (e_ != cudaSuccess) \
			FAIL("launch of %s failed: %s (%s:%d)", what, cudaGetErrorString(e_), \
			     __FILE__, __LINE__); \
	} while (0)
#define LIN_OK(x) \
	do { \
		int e_ = (x); \
		if (e_ != 0) \
			FAIL("%s failed: %s (%s:%d)", #x, lin_strerror(e_), __FILE__, __LINE__); \
	} while (0)

/* Any other error leaves @gl valid for lin_graph_launch_end, and is in the trace. */
#define LIN_GL_BEGIN(exec, name, gl) \
	do { \
		int e_ = lin_graph_launch_begin(gt, exec, name, gl); \
		if (e_ == -EINVAL) \
			FAIL("lin_graph_launch_begin (%s) failed: %s", name, lin_strerror(e_)); \
	} while (0)

/* ------------------------------------------------------------------ device side */

struct log_ent {
	unsigned long long grid;
	int tag;
};

__device__ struct log_ent d_log[LOG_CAP];
__device__ unsigned int d_log_n;
__device__ int d_graph_base;         /* tag of the next graph replay's target... */
__device__ unsigned int d_graph_seq; /* ...plus the replays counted since it was set */

__device__ void spin_cycles(long long cycles)
{
	long long t0 = clock64();
	while (clock64() - t0 < cycles) {
	}
}

/* The target: its first thread logs (%gridid, tag); tag < 0: a graph replay's target. */
__global__ void k_target(int tag, long long spin, float *buf)
{
	if (blockIdx.x == 0 && threadIdx.x == 0) {
		unsigned long long g;
		asm volatile("mov.u64 %0, %%gridid;" : "=l"(g));
		if (tag < 0)
			tag = d_graph_base + (int)atomicAdd(&d_graph_seq, 1u);
		unsigned int i = atomicAdd(&d_log_n, 1u);
		if (i < LOG_CAP) {
			d_log[i].grid = g;
			d_log[i].tag = tag;
		}
	}
	if (spin > 0)
		spin_cycles(spin);
	buf[threadIdx.x] += 1.0f;
}

/* The injected delay on the device: every thread spins @cycles. */
__global__ void k_spin(long long cycles) { spin_cycles(cycles); }

/* ------------------------------------------------------------------ scenarios */

enum scen {
	S_HANDOFF,
	S_DESCHED,
	S_STREAM,
	S_EVENT,
	S_GRAPH,
	S_BUSY,
	S_QUEUE,
	S_N,
};

static const struct {
	const char *name;
	uint32_t cause;
} scen_tab[S_N] = {
	{ "handoff_wait", LIN_TC_HANDOFF_WAIT },
	{ "descheduled", LIN_TC_DESCHEDULED },
	{ "stream_dependency", LIN_TC_STREAM_DEPENDENCY },
	{ "event_dependency", LIN_TC_EVENT_DEPENDENCY },
	{ "graph_dependency", LIN_TC_GRAPH_DEPENDENCY },
	{ "device_busy", LIN_TC_DEVICE_BUSY },
	{ "queueing", LIN_TC_QUEUEING },
};

static const char not_injected_msg[] = PROG
	": api_call and submit_delay are not injected on real hardware (CPU time inside "
	"cudaLaunchKernel needs a CUPTI runtime-API callback; the driver's command "
	"submission is not controllable): no labels for them";

/* One label per target launch, indexed by the tag the kernel logs. */
struct label {
	uint32_t cause; /* LIN_TC_NONE: not written */
	int scen;
	uint64_t start_ns, end_ns, magnitude_ns; /* LIN_EX_NIL: unknown */
	uint64_t corr; /* a graph replay's CUPTI correlation id (its node's grid id repeats) */
};

/* The CUPTI correlation id of this thread's latest cudaGraphLaunch, from the callback API at
 * API_ENTER (CUPTI's own id, not lineage's external id). */
static __thread uint32_t tl_graph_corr;

struct stats {
	int ran;
	unsigned long launches, labels;
	double wall_ms, cpu_ms;
};

enum task_kind { T_TARGET, T_BUSY, T_STOP };

struct task {
	enum task_kind kind;
	int scen;
	lin_token tok;
	uint64_t epoch;
	uint64_t t_cap; /* host clock, just after lin_token_capture returned */
	int tag;        /* the first label of this request */
};

static lin_runtime *rt;
static lin_graph_tracker *gt;
static cudaStream_t s_a, s_b;
static cudaEvent_t ev;
static float *d_buf;
static cudaGraphExec_t gexec;
static uint64_t gexec_id;
static uint64_t delay_ns;
static long long spin_d, spin_short; /* SM cycles for D and for a queueing kernel */
static int busy_blocks, busy_threads;
static struct label *labels;
static int n_labels;

static struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct task q[QUEUE_CAP];
	int head, tail;
	int inflight;     /* submitted, not yet finished */
	int busy_running; /* busy tasks being run */
} pool = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER };

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static double cpu_ms(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru); /* every thread of the process */
	return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
	       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
}

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000u), (long)(ns % 1000000000u) };
	while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) == EINTR) {
	}
}

static void submit(const struct task *t)
{
	pthread_mutex_lock(&pool.mu);
	while ((pool.tail + 1) % QUEUE_CAP == pool.head)
		pthread_cond_wait(&pool.cv, &pool.mu);
	pool.q[pool.tail] = *t;
	pool.tail = (pool.tail + 1) % QUEUE_CAP;
	pool.inflight++;
	pthread_cond_broadcast(&pool.cv);
	pthread_mutex_unlock(&pool.mu);
}

static struct task take(void)
{
	struct task t;

	pthread_mutex_lock(&pool.mu);
	while (pool.head == pool.tail)
		pthread_cond_wait(&pool.cv, &pool.mu);
	t = pool.q[pool.head];
	pool.head = (pool.head + 1) % QUEUE_CAP;
	if (t.kind == T_BUSY)
		pool.busy_running++;
	pthread_cond_broadcast(&pool.cv);
	pthread_mutex_unlock(&pool.mu);
	return t;
}

static void finished(const struct task *t)
{
	pthread_mutex_lock(&pool.mu);
	if (t->kind == T_BUSY)
		pool.busy_running--;
	pool.inflight--;
	pthread_cond_broadcast(&pool.cv);
	pthread_mutex_unlock(&pool.mu);
}

static void wait_idle(void)
{
	pthread_mutex_lock(&pool.mu);
	while (pool.inflight > 0)
		pthread_cond_wait(&pool.cv, &pool.mu);
	pthread_mutex_unlock(&pool.mu);
}

static void wait_busy(int n)
{
	pthread_mutex_lock(&pool.mu);
	while (pool.busy_running < n)
		pthread_cond_wait(&pool.cv, &pool.mu);
	pthread_mutex_unlock(&pool.mu);
}

static void set_label(int tag, int scen, uint64_t start, uint64_t end, uint64_t mag)
{
	labels[tag].cause = scen_tab[scen].cause;
	labels[tag].scen = scen;
	labels[tag].start_ns = start;
	labels[tag].end_ns = end;
	labels[tag].magnitude_ns = mag;
	labels[tag].corr = LIN_EX_NIL;
}

static void launch_target(const char *name, cudaStream_t s, int tag, long long spin)
{
	lin_launch l;

	lin_launch_begin(rt, name, &l); /* an error is in the trace; the launch still happens */
	k_target<<<1, TARGET_THREADS, 0, s>>>(tag, spin, d_buf);
	lin_launch_end(rt, &l);
	LAUNCH_OK(name);
}

/* The delaying work, in an epoch of its own under the target's (same requests). */
static void launch_blocker(const char *name, cudaStream_t s, int blocks, int threads)
{
	struct lin_epoch_opts eo = { sizeof(eo), NULL, 0, 0, name, 0 };
	uint64_t ep;
	lin_scope sc;
	lin_launch l;

	LIN_OK(lin_epoch_declare(rt, &eo, &ep));
	LIN_OK(lin_scope_enter(rt, ep, &sc));
	lin_launch_begin(rt, name, &l);
	k_spin<<<blocks, threads, 0, s>>>(spin_d);
	lin_launch_end(rt, &l);
	LAUNCH_OK(name);
	LIN_OK(lin_scope_exit(rt, &sc));
	LIN_OK(lin_epoch_retire(rt, ep));
}

static void run_target(const struct task *t)
{
	lin_scope sc;
	/* Read just before the adopt, as t_cap just after the capture: the labelled handoff
	 * lies inside the trace's captured -> adopted stretch, never outside it. */
	uint64_t t_pick = lin_runtime_now_ns(rt);

	LIN_OK(lin_token_adopt(rt, &t->tok, &sc));
	switch (t->scen) {
	case S_HANDOFF:
		set_label(t->tag, S_HANDOFF, t->t_cap, t_pick, delay_ns);
		launch_target("target_handoff", s_a, t->tag, 0);
		break;
	case S_DESCHED: {
		uint64_t t0 = lin_runtime_now_ns(rt);
		sleep_ns(delay_ns);
		uint64_t t1 = lin_runtime_now_ns(rt);
		set_label(t->tag, S_DESCHED, t0, t1, delay_ns);
		launch_target("target_descheduled", s_a, t->tag, 0);
		break;
	}
	case S_STREAM:
		set_label(t->tag, S_STREAM, LIN_EX_NIL, LIN_EX_NIL, delay_ns);
		launch_blocker("spin_stream", s_a, 1, 1);
		launch_target("target_stream", s_a, t->tag, 0);
		break;
	case S_EVENT:
		set_label(t->tag, S_EVENT, LIN_EX_NIL, LIN_EX_NIL, delay_ns);
		launch_blocker("spin_event", s_b, 1, 1);
		CUDA_OK(cudaEventRecord(ev, s_b));
		CUDA_OK(cudaStreamWaitEvent(s_a, ev, 0));
		launch_target("target_event", s_a, t->tag, 0);
		break;
	case S_GRAPH: {
		lin_graph_launch gl;
		/* The replay's target node takes its tag from d_graph_base + d_graph_seq. */
		set_label(t->tag, S_GRAPH, LIN_EX_NIL, LIN_EX_NIL, delay_ns);
		tl_graph_corr = 0;
		LIN_GL_BEGIN(gexec_id, "graph_replay", &gl);
		cudaError_t e = cudaGraphLaunch(gexec, s_a);
		lin_graph_launch_end(gt, &gl);
		CUDA_OK(e);
		if (tl_graph_corr)
			labels[t->tag].corr = tl_graph_corr;
		else /* no label rather than one the replays' repeated grid id makes collide */
			labels[t->tag].cause = LIN_TC_NONE;
		break;
	}
	case S_BUSY:
		/* Concurrent kernels may still overlap on some GPUs (a block of the target can
		 * be placed as soon as any SM has room): the label says what was injected, the
		 * scorer measures what lineage saw. */
		set_label(t->tag, S_BUSY, LIN_EX_NIL, LIN_EX_NIL, delay_ns);
		launch_blocker("spin_busy", s_b, busy_blocks, busy_threads);
		launch_target("target_busy", s_a, t->tag, 0);
		break;
	case S_QUEUE:
		for (int k = 0; k < QUEUE_KERNELS; k++) {
			int tag = k == 0 ? NO_TAG : t->tag + k - 1;
			if (k > 0)
				set_label(tag, S_QUEUE, LIN_EX_NIL, LIN_EX_NIL, LIN_EX_NIL);
			launch_target("target_queue", s_a, tag, spin_short);
		}
		break;
	}
	LIN_OK(lin_scope_exit(rt, &sc));
	LIN_OK(lin_epoch_retire(rt, t->epoch));
	CUDA_OK(cudaStreamSynchronize(s_a));
	CUDA_OK(cudaStreamSynchronize(s_b));
}

static void *worker(void *arg)
{
	(void)arg;
	for (;;) {
		struct task t = take();
		switch (t.kind) {
		case T_STOP: finished(&t); return NULL;
		case T_BUSY: sleep_ns(delay_ns); break; /* "other work": the pool is busy */
		case T_TARGET: run_target(&t); break;
		}
		finished(&t);
	}
}

/* Labels each request of a scenario takes. */
static int labels_per_request(int scen) { return scen == S_QUEUE ? QUEUE_KERNELS - 1 : 1; }

/* One request: declared and captured here, launched by a worker; returns when done. */
static void run_request(int scen, int i, int tag)
{
	struct lin_request_opts ro = { sizeof(ro), scen_tab[scen].name, (uint64_t)i, 1, 0, NULL };
	struct task t;
	uint64_t req;
	lin_scope sc;

	memset(&t, 0, sizeof(t));
	LIN_OK(lin_request_begin(rt, &ro, &req));
	if (scen == S_HANDOFF) {
		/* Occupy every worker first: the task then waits in the queue for about D. */
		struct task busy;
		memset(&busy, 0, sizeof(busy));
		busy.kind = T_BUSY;
		for (int w = 0; w < N_WORKERS; w++)
			submit(&busy);
		wait_busy(N_WORKERS);
	}
	struct lin_epoch_opts eo = { sizeof(eo), &req, 1, 0, "target", 0 };
	t.kind = T_TARGET;
	t.scen = scen;
	t.tag = tag;
	LIN_OK(lin_epoch_declare(rt, &eo, &t.epoch));
	LIN_OK(lin_scope_enter(rt, t.epoch, &sc));
	LIN_OK(lin_token_capture(rt, &t.tok));
	t.t_cap = lin_runtime_now_ns(rt);
	LIN_OK(lin_scope_exit(rt, &sc));
	submit(&t);
	wait_idle();
	LIN_OK(lin_request_end(rt, req));
}

static void run_scenario(int scen, int requests, int *next_tag, struct stats *st)
{
	uint64_t w0 = mono_ns();
	double c0 = cpu_ms();
	int first = *next_tag;

	if (scen == S_GRAPH) {
		unsigned int zero = 0;
		CUDA_OK(cudaMemcpyToSymbol(d_graph_base, &first, sizeof(first)));
		CUDA_OK(cudaMemcpyToSymbol(d_graph_seq, &zero, sizeof(zero)));
	}
	for (int i = 0; i < requests; i++) {
		run_request(scen, i, *next_tag);
		*next_tag += labels_per_request(scen);
	}
	st->ran = 1;
	st->launches = (unsigned long)(*next_tag - first);
	st->wall_ms = (mono_ns() - w0) / 1e6;
	st->cpu_ms = cpu_ms() - c0;
}

/* ------------------------------------------------------------------ setup */

/* CUPTI resource callbacks: the clone map and exec ids, fed into the graph tracker. */
static void CUPTIAPI on_resource(void *user, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
				 const void *data)
{
	const CUpti_ResourceData *rd = (const CUpti_ResourceData *)data;
	const CUpti_GraphData *g = rd ? (const CUpti_GraphData *)rd->resourceDescriptor : NULL;
	uint64_t node = 0, orig = 0;
	uint32_t graph = 0, exec = 0;

	(void)user;
	if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) { /* cudaGraphLaunch: its correlation id */
		const CUpti_CallbackData *cd = (const CUpti_CallbackData *)data;
		if (cd->callbackSite == CUPTI_API_ENTER)
			tl_graph_corr = cd->correlationId;
		return;
	}
	if (domain != CUPTI_CB_DOMAIN_RESOURCE || !g)
		return;
	if (cbid == CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED) {
		if (cuptiGetGraphNodeId(g->node, &node) != CUPTI_SUCCESS ||
		    cuptiGetGraphNodeId(g->originalNode, &orig) != CUPTI_SUCCESS)
			return;
		if (g->graph)
			(void)cuptiGetGraphId(g->graph, &graph);
		lin_graph_node_cloned(gt, orig, node, graph, 0);
	} else if (cbid == CUPTI_CBID_RESOURCE_GRAPHEXEC_CREATED) {
		if (cuptiGetGraphExecId(g->graphExec, &exec) != CUPTI_SUCCESS)
			return;
		if (g->graph)
			(void)cuptiGetGraphId(g->graph, &graph);
		if (graph)
			lin_graph_exec_instantiated(gt, graph, exec);
	}
}

/* Capture [k_spin -> k_target] once on stream A, under the current (setup) epoch. */
static void build_graph(void)
{
	lin_graph_capture cap;
	cudaGraph_t graph;
	cudaGraphNode_t nodes[8];
	size_t n = 8;
	uint64_t ids[8];
	uint32_t graph_id = 0, exec_id = 0;

	LIN_OK(lin_graph_capture_begin(gt, &cap));
	CUDA_OK(cudaStreamBeginCapture(s_a, cudaStreamCaptureModeThreadLocal));
	k_spin<<<1, 1, 0, s_a>>>(spin_d);
	k_target<<<1, TARGET_THREADS, 0, s_a>>>(-1, 0, d_buf);
	CUDA_OK(cudaStreamEndCapture(s_a, &graph));
	LAUNCH_OK("the graph's kernels (capture)");
	CUDA_OK(cudaGraphGetNodes(graph, nodes, &n));
	for (size_t i = 0; i < n; i++)
		if (cuptiGetGraphNodeId(nodes[i], &ids[i]) != CUPTI_SUCCESS)
			ids[i] = 0;
	CUptiResult cr = cuptiGetGraphId(graph, &graph_id);
	if (cr != CUPTI_SUCCESS || !graph_id)
		FAIL("cuptiGetGraphId failed (%d): the replays' graph identity is unknown", (int)cr);
	LIN_OK(lin_graph_capture_end(gt, &cap, graph_id, ids, n));
	/* The graph's topology, so lineage-explain can say what each node waited for. */
	cudaGraphNode_t from[8], to[8];
	uint64_t fid[8], tid[8];
	size_t ne = 8;
	CUDA_OK(cudaGraphGetEdges(graph, from, to, NULL, &ne));
	for (size_t i = 0; i < ne; i++)
		if (cuptiGetGraphNodeId(from[i], &fid[i]) != CUPTI_SUCCESS ||
		    cuptiGetGraphNodeId(to[i], &tid[i]) != CUPTI_SUCCESS)
			FAIL("cuptiGetGraphNodeId failed on edge %zu: the graph's topology is unknown", i);
	LIN_OK(lin_graph_edges(gt, graph_id, fid, tid, ne));
	CUDA_OK(cudaGraphInstantiate(&gexec, graph, 0)); /* GRAPHNODE_CLONED, GRAPHEXEC_CREATED */
	cr = cuptiGetGraphExecId(gexec, &exec_id);
	if (cr != CUPTI_SUCCESS || !exec_id)
		FAIL("cuptiGetGraphExecId failed (%d): the replays cannot be bracketed", (int)cr);
	gexec_id = exec_id;
	CUDA_OK(cudaGraphDestroy(graph));
}

/*
 * Under a setup request: build the graph (if wanted) and run every kernel once, so that
 * lazy module loading and the first replay's upload delay no scored launch. What the
 * warm-up kernels log has tags outside the label table: no label.
 */
static void setup_and_warm_up(bool graph)
{
	struct lin_request_opts ro = { sizeof(ro), "setup", 0, 0, 0, NULL };
	uint64_t req, ep;
	lin_scope sc;
	lin_launch l;
	int no_tag = NO_TAG;

	LIN_OK(lin_request_begin(rt, &ro, &req));
	struct lin_epoch_opts eo = { sizeof(eo), &req, 1, 0, "warm_up", 0 };
	LIN_OK(lin_epoch_declare(rt, &eo, &ep));
	LIN_OK(lin_scope_enter(rt, ep, &sc));
	lin_launch_begin(rt, "warm_up_spin", &l);
	k_spin<<<1, 1, 0, s_a>>>(1000);
	lin_launch_end(rt, &l);
	LAUNCH_OK("warm_up_spin");
	launch_target("warm_up_target", s_a, NO_TAG, 1000);
	if (graph) {
		lin_graph_launch gl;
		build_graph();
		CUDA_OK(cudaMemcpyToSymbol(d_graph_base, &no_tag, sizeof(no_tag)));
		LIN_GL_BEGIN(gexec_id, "graph_warm_up", &gl);
		cudaError_t e = cudaGraphLaunch(gexec, s_a);
		lin_graph_launch_end(gt, &gl);
		CUDA_OK(e);
	}
	CUDA_OK(cudaStreamSynchronize(s_a));
	LIN_OK(lin_scope_exit(rt, &sc));
	LIN_OK(lin_epoch_retire(rt, ep));
	LIN_OK(lin_request_end(rt, req));
}

/* ------------------------------------------------------------------ the truth file */

/* Copy the device log back; write one launch_cause per labelled target. */
static void write_truth(const char *path, struct stats *st)
{
	unsigned int n = 0;
	struct log_ent *log = (struct log_ent *)calloc(LOG_CAP, sizeof(*log));
	struct lin_ex_truth t;

	if (!log)
		FAIL("out of memory");
	if (lin_ex_truth_open(&t, path, LIN_CAUSE_TRUTH_FORMAT_NAME, PROG) != 0)
		FAIL("cannot write %s: %s", path, strerror(errno));
	CUDA_OK(cudaMemcpyFromSymbol(&n, d_log_n, sizeof(n)));
	if (n > LOG_CAP)
		FAIL("the device log overflowed (%u entries, room for %u)", n, LOG_CAP);
	CUDA_OK(cudaMemcpyFromSymbol(log, d_log, n * sizeof(*log)));
	for (unsigned int i = 0; i < n; i++) {
		int tag = log[i].tag;
		if (tag < 0 || tag >= n_labels || labels[tag].cause == LIN_TC_NONE)
			continue;
		const struct label *lb = &labels[tag];
		lin_ex_cause_label(&t, LIN_REC_KERNEL, log[i].grid, lb->cause, 0, lb->start_ns,
				   lb->end_ns, lb->magnitude_ns, lb->corr);
		st[lb->scen].labels++;
	}
	if (lin_ex_truth_close(&t) != 0)
		FAIL("cannot write %s", path);
	free(log);
}

/* ------------------------------------------------------------------ command line */

static void usage(FILE *out)
{
	fprintf(out,
		"NAME\n"
		"    attrib_causes - inject known launch-delay causes on a GPU and write their truth\n"
		"\n"
		"SYNOPSIS\n"
		"    attrib_causes [--scenario NAME|all] [--requests R] [--delay-us D]\n"
		"                  [--latency on|off] -o TRACE --cause-truth FILE\n"
		"    attrib_causes --help\n"
		"\n"
		"DESCRIPTION\n"
		"    Runs R requests per scenario. Each request is declared on the main thread,\n"
		"    which captures a token for a fresh epoch and queues the task for a pool of two\n"
		"    worker threads; a worker adopts the token and launches the request's target\n"
		"    kernel after the scenario's injected delay of D. Requests run one at a time,\n"
		"    each on an idle pool and device. The lineage trace is collected through the\n"
		"    live CUPTI binding into TRACE; FILE receives a cause-truth file (format\n"
		"    lineage-cause-truth, docs/trace-format.md): one launch_cause record per target,\n"
		"    keyed by the kernel's grid id as the kernel itself logged it, for\n"
		"    lineage-explain --score FILE TRACE. Scenarios:\n"
		"\n"
		"    handoff_wait       every worker is busy for D when the task is queued;\n"
		"                       interval [capture, adopt] as measured\n"
		"    descheduled        the worker sleeps D between adopt and launch; interval as\n"
		"                       measured (lineage, with no scheduler records, reports\n"
		"                       thread_delay)\n"
		"    stream_dependency  a kernel spinning D on the target's stream, before it\n"
		"    event_dependency   the spin kernel on stream B, an event recorded on B and\n"
		"                       waited for on stream A, the target on A\n"
		"    graph_dependency   a graph [spin node -> target node], replayed per request\n"
		"    device_busy        a kernel filling every SM for D on stream B, launched just\n"
		"                       before the small target on stream A\n"
		"    queueing           64 kernels of 50 us back to back on one stream; kernels\n"
		"                       2..64 are the targets (no magnitude)\n"
		"\n"
		"    The device-side causes carry no interval (nil): the program cannot place its\n"
		"    spin kernels on the host clock. api_call and submit_delay are not injected on\n"
		"    real hardware and get no labels (a line says so with --scenario all).\n"
		"\n"
		"    Prints one line per scenario and, with all, one for the whole run:\n"
		"      ATTRIB scenario=S launches=N labels=M wall_ms=W cpu_ms=C latency=on|off\n"
		"    launches: target launches issued (each should get a label); labels: labels\n"
		"    written (targets whose grid id came back); wall_ms: elapsed time; cpu_ms: CPU\n"
		"    time of the whole process (getrusage: every thread, CUPTI's included). The\n"
		"    all line covers the process from before the runtime is created to after it is\n"
		"    freed (the final flush of CUPTI's buffers included).\n"
		"\n"
		"OPTIONS\n"
		"    --scenario NAME|all   the scenario to run (default all, in the order above)\n"
		"    --requests R          requests per scenario, 1..%d (default 32)\n"
		"    --delay-us D          injected delay in microseconds, 1..%u (default 2000)\n"
		"    --latency on|off      CUPTI latency timestamps (LIN_CUPTI_LATENCY_TIMESTAMPS:\n"
		"                          kernel records carry queued and submitted); default on\n"
		"    -o, --output TRACE    the lineage trace to write (created or truncated)\n"
		"    --cause-truth FILE    the cause-truth file to write (created or truncated)\n"
		"    -h, --help            this text\n"
		"\n"
		"ENVIRONMENT\n"
		"    LINEAGE_LOG=warn|info|debug   the runtime's diagnostics on stderr\n"
		"\n"
		"EXIT STATUS\n"
		"    0   the run completed and both files were written\n"
		"    1   a CUDA, CUPTI, lineage or I/O call failed (the message names it)\n"
		"    2   bad usage\n"
		"    77  no CUDA device (cudaGetDeviceCount failed or found none): nothing to run\n",
		MAX_REQUESTS, MAX_DELAY_US);
}

static int bad_usage(const char *fmt, const char *arg)
{
	fprintf(stderr, PROG ": ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, " (see --help)\n");
	return 2;
}

static bool parse_uint(const char *s, unsigned long lo, unsigned long hi, unsigned long *out)
{
	char *end;
	if (!s || !*s || *s == '-' || *s == '+')
		return false;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (errno || *end || v < lo || v > hi)
		return false;
	*out = v;
	return true;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "scenario", required_argument, NULL, 's' },
		{ "requests", required_argument, NULL, 'r' },
		{ "delay-us", required_argument, NULL, 'd' },
		{ "latency", required_argument, NULL, 'l' },
		{ "cause-truth", required_argument, NULL, 't' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *trace_path = NULL, *truth_path = NULL;
	int scen = -1; /* -1: all */
	unsigned long requests = 32, delay_us = 2000;
	bool latency = true;
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":ho:", longopts, NULL)) != -1) {
		switch (c) {
		case 'h': usage(stdout); return 0;
		case 'o': trace_path = optarg; break;
		case 't': truth_path = optarg; break;
		case 's':
			if (!strcmp(optarg, "all")) {
				scen = -1;
				break;
			}
			if (!strcmp(optarg, "api_call") || !strcmp(optarg, "submit_delay")) {
				fprintf(stderr, "%s\n", not_injected_msg);
				return bad_usage("--scenario %s cannot be run", optarg);
			}
			scen = -2;
			for (int i = 0; i < S_N; i++)
				if (!strcmp(optarg, scen_tab[i].name))
					scen = i;
			if (scen == -2)
				return bad_usage("unknown scenario '%s'", optarg);
			break;
		case 'r':
			if (!parse_uint(optarg, 1, MAX_REQUESTS, &requests))
				return bad_usage("--requests '%s': expected an integer 1..1000", optarg);
			break;
		case 'd':
			if (!parse_uint(optarg, 1, MAX_DELAY_US, &delay_us))
				return bad_usage("--delay-us '%s': expected an integer 1..1000000",
						 optarg);
			break;
		case 'l':
			if (!strcmp(optarg, "on"))
				latency = true;
			else if (!strcmp(optarg, "off"))
				latency = false;
			else
				return bad_usage("--latency '%s': expected on or off", optarg);
			break;
		case ':': return bad_usage("%s needs a value", argv[optind - 1]);
		default: return bad_usage("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return bad_usage("unexpected argument '%s'", argv[optind]);
	if (!trace_path)
		return bad_usage("%s", "-o TRACE is required");
	if (!truth_path)
		return bad_usage("%s", "--cause-truth FILE is required");
	if (!strcmp(trace_path, truth_path))
		return bad_usage("-o and --cause-truth name the same file '%s'", trace_path);

	uint64_t w_start = mono_ns();
	double c_start = cpu_ms();
	delay_ns = (uint64_t)delay_us * 1000u;

	/* The runtime first: CUPTI's latency timestamps must be enabled before CUDA starts. */
	struct lin_runtime_opts o;
	memset(&o, 0, sizeof(o));
	o.sz = sizeof(o);
	o.trace_path = trace_path;
	o.backend = LIN_BACKEND_CUPTI;
	o.cupti_flags = latency ? LIN_CUPTI_LATENCY_TIMESTAMPS : 0;
	int err = lin_runtime_create(&o, &rt);
	if (err)
		FAIL("lin_runtime_create (trace %s) failed: %s", trace_path, lin_strerror(err));

	int ndev = 0;
	cudaError_t ce = cudaGetDeviceCount(&ndev);
	if (ce != cudaSuccess || ndev == 0) {
		if (ce != cudaSuccess)
			fprintf(stderr, PROG ": no CUDA device: cudaGetDeviceCount failed: %s\n",
				cudaGetErrorString(ce));
		else
			fprintf(stderr, PROG ": no CUDA device: cudaGetDeviceCount found none\n");
		lin_runtime_free(rt);
		unlink(trace_path); /* a trace of nothing: not left behind */
		return 77;
	}

	int sms = 0, khz = 0, max_threads = 0, per_sm = 0;
	CUDA_OK(cudaSetDevice(0));
	CUDA_OK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
	CUDA_OK(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0));
	CUDA_OK(cudaDeviceGetAttribute(&max_threads, cudaDevAttrMaxThreadsPerBlock, 0));
	CUDA_OK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k_spin, max_threads, 0));
	if (sms <= 0 || khz <= 0 || max_threads <= 0 || per_sm <= 0)
		FAIL("device 0 reports %d SMs, %d kHz, %d threads per block, %d resident blocks "
		     "per SM: cannot size the spin kernels",
		     sms, khz, max_threads, per_sm);
	spin_d = (long long)delay_us * khz / 1000;
	spin_short = (long long)QUEUE_KERNEL_US * khz / 1000;
	busy_blocks = sms * per_sm;
	busy_threads = max_threads;

	bool want[S_N];
	for (int i = 0; i < S_N; i++)
		want[i] = scen < 0 || scen == i;
	n_labels = 0;
	for (int i = 0; i < S_N; i++)
		if (want[i])
			n_labels += (int)requests * labels_per_request(i);
	labels = (struct label *)calloc((size_t)n_labels, sizeof(*labels));
	if (!labels)
		FAIL("out of memory");

	LIN_OK(lin_graph_tracker_create(rt, NULL, &gt));
	CUpti_SubscriberHandle sub = NULL;
	if (want[S_GRAPH]) {
		CUptiResult cr = cuptiSubscribe(&sub, on_resource, NULL);
		if (cr == CUPTI_SUCCESS) {
			cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_RESOURCE,
					    CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED);
			cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_RESOURCE,
					    CUPTI_CBID_RESOURCE_GRAPHEXEC_CREATED);
			cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_RUNTIME_API,
					    CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000);
			cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_RUNTIME_API,
					    CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_ptsz_v10000);
		} else {
			const char *why = NULL;
			cuptiGetResultString(cr, &why);
			fprintf(stderr, PROG ": cuptiSubscribe: %s; the graph clone map is not recorded\n",
				why ? why : "?");
			sub = NULL;
		}
	}
	CUDA_OK(cudaStreamCreateWithFlags(&s_a, cudaStreamNonBlocking));
	CUDA_OK(cudaStreamCreateWithFlags(&s_b, cudaStreamNonBlocking));
	CUDA_OK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
	CUDA_OK(cudaMalloc(&d_buf, TARGET_THREADS * sizeof(float)));
	CUDA_OK(cudaMemset(d_buf, 0, TARGET_THREADS * sizeof(float)));
	setup_and_warm_up(want[S_GRAPH]);

	pthread_t th[N_WORKERS];
	for (int i = 0; i < N_WORKERS; i++)
		if ((err = pthread_create(&th[i], NULL, worker, NULL)) != 0)
			FAIL("pthread_create failed: %s", strerror(err));

	struct stats st[S_N];
	memset(st, 0, sizeof(st));
	int next_tag = 0;
	if (scen < 0)
		printf("%s\n", not_injected_msg);
	for (int i = 0; i < S_N; i++)
		if (want[i])
			run_scenario(i, (int)requests, &next_tag, &st[i]);

	struct task stop;
	memset(&stop, 0, sizeof(stop));
	stop.kind = T_STOP;
	for (int i = 0; i < N_WORKERS; i++)
		submit(&stop);
	for (int i = 0; i < N_WORKERS; i++)
		pthread_join(th[i], NULL);
	CUDA_OK(cudaDeviceSynchronize());
	write_truth(truth_path, st);

	if (sub)
		cuptiUnsubscribe(sub);
	if (gexec) {
		CUDA_OK(cudaGraphExecDestroy(gexec));
		lin_graph_exec_destroyed(gt, gexec_id);
	}
	lin_graph_tracker_free(gt);
	struct lin_runtime_stats rs;
	memset(&rs, 0, sizeof(rs));
	rs.sz = sizeof(rs);
	lin_runtime_get_stats(rt, &rs);
	lin_runtime_free(rt); /* the final CUPTI flush; the trace is closed */
	cudaEventDestroy(ev);
	cudaStreamDestroy(s_a);
	cudaStreamDestroy(s_b);
	cudaFree(d_buf);

	const char *lat = latency ? "on" : "off";
	unsigned long all_launches = 0, all_labels = 0;
	for (int i = 0; i < S_N; i++) {
		if (!st[i].ran)
			continue;
		printf("ATTRIB scenario=%s launches=%lu labels=%lu wall_ms=%.1f cpu_ms=%.1f "
		       "latency=%s\n",
		       scen_tab[i].name, st[i].launches, st[i].labels, st[i].wall_ms, st[i].cpu_ms, lat);
		all_launches += st[i].launches;
		all_labels += st[i].labels;
	}
	if (scen < 0)
		printf("ATTRIB scenario=all launches=%lu labels=%lu wall_ms=%.1f cpu_ms=%.1f "
		       "latency=%s\n",
		       all_launches, all_labels, (mono_ns() - w_start) / 1e6, cpu_ms() - c_start, lat);
	printf(PROG ": trace %s, cause truth %s (%lu of %lu targets labelled; %llu host events, "
		    "%llu dropped)\n",
	       trace_path, truth_path, all_labels, all_launches, (unsigned long long)rs.events,
	       (unsigned long long)rs.events_dropped);
	if (all_labels < all_launches)
		fprintf(stderr,
			PROG ": %lu target launches got no label (their grid id did not come back "
			     "from the device log)\n",
			all_launches - all_labels);
	free(labels);
	return fflush(stdout) == 0 ? 0 : 1;
}
