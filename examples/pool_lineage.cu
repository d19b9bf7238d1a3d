/* SPDX-License-Identifier: MIT */
/*
 * pool_lineage.cu - lineage in a small serving loop, with the live CUPTI backend.
 *
 *   - requests are prepared on the main thread and launched by a pool of worker threads,
 *     each launch carrying its epoch in a lin_token;
 *   - each request fans its kernels out across several streams (one epoch per kernel);
 *   - a graph is captured once (under a setup request) and replayed by the workers, each
 *     replay minting a replay epoch under the request that asked for it;
 *   - one batched launch serves several requests (an epoch with several requests).
 * Graph node identity comes from CUPTI resource callbacks (this program is the only
 * subscriber) fed into the host-side graph API.
 *
 * Truth file. Every kernel's first thread logs its %gridid with the request ids the program
 * itself gave it (kernel arguments, or a device variable set before each graph replay), so
 * the truth never goes through the correlation path under test. It is written as a
 * lineage-truth file keyed by grid id: %gridid equals CUPTI's gridId (seen on an H200). A
 * graph node's kernel has the same grid id in every replay, so its label also names the
 * replay's CUPTI correlation id, which the program reads from CUPTI's callback API at
 * cudaGraphLaunch's API_ENTER (CUPTI's own id; lineage's external ids are not used).
 * Setup and the read-back of the log are requests of their own, so every GPU record of the
 * run belongs to a request.
 *
 * Usage: pool_lineage [trace.lintrace] [requests] [truth file, default TRACE.truth]
 * Exit status: 0 when the run completed; 1 on a CUDA error; 2 on a lineage error.
 *
 * Built from the installed headers only (the truth writer, truth_writer.h, uses msgpack-c):
 *   nvcc -std=c++17 -arch=sm_90 pool_lineage.cu $(pkg-config --cflags --libs lineage msgpack) \
 *        -I/usr/local/cuda/include -L/usr/local/cuda/lib64 -lcupti -o pool_lineage
 */
#include <cuda_runtime.h>
#include <cupti.h>
#include <msgpack.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include <lineage/cupti.h>
#include <lineage/graph.h>
#include <lineage/runtime.h>
#include <lineage/trace_format.h>

#include "truth_writer.h" /* the examples' truth writer: msgpack-c and the installed headers */

#define N_WORKERS 4
#define N_STREAMS 4
#define FANOUT 3
#define QUEUE_CAP 256

#define CUDA_OK(x) \
	do { \
		cudaError_t e_ = (x); \
		if (e_ != cudaSuccess) { \
			fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, \
				cudaGetErrorString(e_)); \
			exit(1); \
		} \
	} while (0)
#define LIN_OK(x) \
	do { \
		int e_ = (x); \
		if (e_ != 0) { \
			fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, lin_strerror(e_)); \
			exit(2); \
		} \
	} while (0)

#define LOG_CAP 65536

/* The requests a kernel truly serves, as the program knows them. */
struct reqs {
	unsigned long long r[4];
	int n;
};

struct log_ent {
	unsigned long long grid;
	struct reqs q;
	int graph; /* logged by a graph node's kernel */
};

__device__ struct log_ent d_log[LOG_CAP];
__device__ unsigned int d_log_n;
__device__ unsigned long long d_graph_req; /* set before each graph replay */

__device__ void log_grid(const struct reqs *q, int graph = 0)
{
	if (blockIdx.x == 0 && threadIdx.x == 0) {
		unsigned long long g;
		asm volatile("mov.u64 %0, %%gridid;" : "=l"(g));
		unsigned int i = atomicAdd(&d_log_n, 1u);
		if (i < LOG_CAP) {
			d_log[i].grid = g;
			d_log[i].q = *q;
			d_log[i].graph = graph;
		}
	}
}

__global__ void k_work(float *buf, int n, float f, struct reqs q)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	log_grid(&q);
	if (i < n)
		buf[i] = buf[i] * f + 1.0f;
}

__device__ void log_graph_grid(void)
{
	struct reqs q;
	q.r[0] = d_graph_req;
	q.n = 1;
	log_grid(&q, 1);
}

__global__ void k_graph_a(float *buf, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	log_graph_grid();
	if (i < n)
		buf[i] += 2.0f;
}

__global__ void k_graph_b(float *buf, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	log_graph_grid();
	if (i < n)
		buf[i] *= 0.5f;
}

__global__ void k_batched(float *buf, int n, int batch, struct reqs q)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	log_grid(&q);
	if (i < n)
		buf[i] += (float)batch;
}

enum task_kind { TASK_KERNEL, TASK_GRAPH, TASK_BATCH, TASK_STOP };

struct task {
	enum task_kind kind;
	lin_token tok; /* the epoch to launch under */
	int stream;
	int batch;
	struct reqs truth; /* the program's own record of whom the launch serves */
	int index;         /* the request's index (graph tasks) */
};

static struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct task q[QUEUE_CAP];
	int head, tail;
} queue = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER };

static lin_runtime *rt;
static lin_graph_tracker *gt;
static cudaStream_t streams[N_STREAMS];
static float *dbuf[N_STREAMS];
static const int N = 1 << 16;
static cudaGraphExec_t gexec;
static uint64_t gexec_id;
static pthread_mutex_t gexec_mu = PTHREAD_MUTEX_INITIALIZER; /* an exec is launched by one thread at a time */
/* The CUPTI correlation id of this thread's latest cudaGraphLaunch, from the callback API at
 * API_ENTER (CUPTI's own id, not lineage's external id): a graph node's kernel has the same
 * grid id in every replay, so its truth label names the replay's correlation. */
static __thread uint32_t tl_graph_corr;
#define MAX_REQUESTS 4096
static uint32_t graph_corr[MAX_REQUESTS]; /* by request index: the replay's correlation */

static void submit(const struct task *t)
{
	pthread_mutex_lock(&queue.mu);
	while ((queue.tail + 1) % QUEUE_CAP == queue.head)
		pthread_cond_wait(&queue.cv, &queue.mu);
	queue.q[queue.tail] = *t;
	queue.tail = (queue.tail + 1) % QUEUE_CAP;
	pthread_cond_broadcast(&queue.cv);
	pthread_mutex_unlock(&queue.mu);
}

static struct task take(void)
{
	struct task t;

	pthread_mutex_lock(&queue.mu);
	while (queue.head == queue.tail)
		pthread_cond_wait(&queue.cv, &queue.mu);
	t = queue.q[queue.head];
	queue.head = (queue.head + 1) % QUEUE_CAP;
	pthread_cond_broadcast(&queue.cv);
	pthread_mutex_unlock(&queue.mu);
	return t;
}

static void run_task(const struct task *t)
{
	dim3 grid((N + 255) / 256), block(256);
	lin_scope sc;
	lin_launch l;

	/* The work runs whatever lineage says: a token whose epoch ended meanwhile is adopted
	 * late (its launches join it, counted late); one that cannot be adopted at all is in
	 * the trace as misuse, and the work runs with no context. */
	bool adopted = lin_token_adopt(rt, &t->tok, &sc) == 0;
	cudaStream_t s = streams[t->stream % N_STREAMS];
	float *b = dbuf[t->stream % N_STREAMS];
	switch (t->kind) {
	case TASK_KERNEL:
		lin_launch_begin(rt, "k_work", &l);
		k_work<<<grid, block, 0, s>>>(b, N, 1.001f, t->truth);
		lin_launch_end(rt, &l);
		break;
	case TASK_BATCH:
		lin_launch_begin(rt, "k_batched", &l);
		k_batched<<<grid, block, 0, s>>>(b, N, t->batch, t->truth);
		lin_launch_end(rt, &l);
		break;
	case TASK_GRAPH: {
		lin_graph_launch gl;
		/* One replay at a time, on one stream: the request id the graph's kernels log is
		 * stream-ordered before the replay that reads it. */
		s = streams[0];
		pthread_mutex_lock(&gexec_mu);
		lin_launch_begin(rt, "graph_input", &l); /* the replay's input is its work too */
		CUDA_OK(cudaMemcpyToSymbolAsync(d_graph_req, &t->truth.r[0], sizeof(t->truth.r[0]),
						0, cudaMemcpyHostToDevice, s));
		lin_launch_end(rt, &l);
		tl_graph_corr = 0;
		lin_graph_launch_begin(gt, gexec_id, "graph_replay", &gl);
		CUDA_OK(cudaGraphLaunch(gexec, s));
		lin_graph_launch_end(gt, &gl);
		if (t->index >= 0 && t->index < MAX_REQUESTS)
			graph_corr[t->index] = tl_graph_corr;
		pthread_mutex_unlock(&gexec_mu);
		break;
	}
	case TASK_STOP: break;
	}
	CUDA_OK(cudaGetLastError());
	/* The epoch's launch is issued: retire it (its kernels still join through the trace). */
	if (!adopted)
		return;
	uint64_t ep = 0;
	lin_scope_current(rt, NULL, &ep, NULL);
	lin_scope_exit(rt, &sc);
	lin_epoch_retire(rt, ep);
}

static void *worker(void *arg)
{
	(void)arg;
	for (;;) {
		struct task t = take();
		if (t.kind == TASK_STOP)
			return NULL;
		run_task(&t);
	}
}

/* CUPTI resource callbacks: the clone map and exec ids, fed into the graph tracker. */
static void CUPTIAPI on_resource(void *user, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
				 const void *data)
{
	uint64_t node = 0, orig = 0;
	uint32_t graph = 0, exec = 0;

	(void)user;
	if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) { /* cudaGraphLaunch: its correlation id */
		const CUpti_CallbackData *cd = (const CUpti_CallbackData *)data;
		if (cd->callbackSite == CUPTI_API_ENTER)
			tl_graph_corr = cd->correlationId;
		return;
	}
	const CUpti_ResourceData *rd = (const CUpti_ResourceData *)data;
	const CUpti_GraphData *g = rd ? (const CUpti_GraphData *)rd->resourceDescriptor : NULL;
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

/* Capture k_graph_a -> k_graph_b once, under a setup request's epoch. */
static void build_graph(void)
{
	struct lin_request_opts ro = { sizeof(ro), "graph_setup", 0, 0, 0 };
	uint64_t req, ep;
	lin_scope sc;
	lin_graph_capture cap;
	cudaGraph_t graph;
	cudaGraphNode_t nodes[8];
	size_t n = 8;
	uint64_t ids[8];
	uint32_t graph_id = 0;
	dim3 grid((N + 255) / 256), block(256);

	LIN_OK(lin_request_begin(rt, &ro, &req));
	struct lin_epoch_opts eo = { sizeof(eo), &req, 1, 0, "graph_capture" };
	LIN_OK(lin_epoch_declare(rt, &eo, &ep));
	LIN_OK(lin_scope_enter(rt, ep, &sc));
	lin_graph_capture_begin(gt, &cap);
	CUDA_OK(cudaStreamBeginCapture(streams[0], cudaStreamCaptureModeThreadLocal));
	k_graph_a<<<grid, block, 0, streams[0]>>>(dbuf[0], N);
	k_graph_b<<<grid, block, 0, streams[0]>>>(dbuf[0], N);
	CUDA_OK(cudaStreamEndCapture(streams[0], &graph));
	CUDA_OK(cudaGraphGetNodes(graph, nodes, &n));
	for (size_t i = 0; i < n; i++)
		if (cuptiGetGraphNodeId(nodes[i], &ids[i]) != CUPTI_SUCCESS)
			ids[i] = 0;
	if (cuptiGetGraphId(graph, &graph_id) == CUPTI_SUCCESS && graph_id)
		lin_graph_capture_end(gt, &cap, graph_id, ids, n);
	CUDA_OK(cudaGraphInstantiate(&gexec, graph, 0)); /* fires GRAPHNODE_CLONED, GRAPHEXEC_CREATED */
	uint32_t exec_id = 0;
	if (cuptiGetGraphExecId(gexec, &exec_id) == CUPTI_SUCCESS)
		gexec_id = exec_id;
	LIN_OK(lin_scope_exit(rt, &sc));
	LIN_OK(lin_epoch_retire(rt, ep));
	LIN_OK(lin_request_end(rt, req));
	CUDA_OK(cudaGraphDestroy(graph));
}

static uint64_t *g_reqs; /* request ids by index */
static int g_nreqs;

static int request_index(uint64_t id)
{
	for (int i = 0; i < g_nreqs; i++)
		if (g_reqs[i] == id)
			return i;
	return -1;
}

/* Copy the device log back and write it as a lineage-truth file. Return: kernels labelled. */
static unsigned int write_truth(const char *path)
{
	unsigned int n = 0;
	struct log_ent *log = (struct log_ent *)calloc(LOG_CAP, sizeof(*log));
	struct lin_ex_truth t;
	unsigned int written = 0;

	if (!log || lin_ex_truth_open(&t, path, LIN_TRUTH_FORMAT_NAME, "pool_lineage") != 0) {
		fprintf(stderr, "pool_lineage: cannot write %s\n", path);
		exit(2);
	}
	CUDA_OK(cudaMemcpyFromSymbol(&n, d_log_n, sizeof(n)));
	if (n > LOG_CAP)
		n = LOG_CAP;
	CUDA_OK(cudaMemcpyFromSymbol(log, d_log, n * sizeof(*log)));
	for (unsigned int i = 0; i < n; i++) {
		uint64_t r[4];
		int nq = log[i].q.n < 4 ? log[i].q.n : 4;
		for (int k = 0; k < nq; k++)
			r[k] = (uint64_t)log[i].q.r[k];
		uint64_t corr = LIN_EX_NIL;
		if (log[i].graph) { /* the replay's correlation, by its request */
			int idx = request_index(r[0]);
			if (idx < 0 || !graph_corr[idx])
				continue; /* not known: no label rather than a colliding one */
			corr = graph_corr[idx];
		}
		lin_ex_truth_label(&t, LIN_REC_KERNEL, log[i].grid, r, nq, corr);
		written++;
	}
	if (lin_ex_truth_close(&t) != 0) {
		fprintf(stderr, "pool_lineage: cannot write %s\n", path);
		exit(2);
	}
	free(log);
	return written;
}

int main(int argc, char **argv)
{
	const char *path = argc > 1 ? argv[1] : "pool_lineage.lintrace";
	int n_requests = argc > 2 ? atoi(argv[2]) : 32;
	char truth_path[4096];
	snprintf(truth_path, sizeof(truth_path), "%s", argc > 3 ? argv[3] : "");
	if (!truth_path[0])
		snprintf(truth_path, sizeof(truth_path), "%s.truth", path);
	struct lin_runtime_opts o;
	CUpti_SubscriberHandle sub = NULL;
	pthread_t th[N_WORKERS];

	memset(&o, 0, sizeof(o));
	o.sz = sizeof(o);
	o.trace_path = path;
	o.backend = LIN_BACKEND_CUPTI;
	LIN_OK(lin_runtime_create(&o, &rt));
	LIN_OK(lin_graph_tracker_create(rt, NULL, &gt));
	if (cuptiSubscribe(&sub, on_resource, NULL) == CUPTI_SUCCESS) {
		cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_RESOURCE,
				    CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED);
		cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_RESOURCE,
				    CUPTI_CBID_RESOURCE_GRAPHEXEC_CREATED);
		cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_RUNTIME_API,
				    CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000);
		cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_RUNTIME_API,
				    CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_ptsz_v10000);
	} else {
		fprintf(stderr, "pool_lineage: no CUPTI subscriber; graph clone map not recorded\n");
	}
	/* Setup is work of its own request: every GPU record of the run joins a request. */
	uint64_t setup_req, setup_ep;
	lin_scope setup_sc;
	lin_launch l;
	struct lin_request_opts so = { sizeof(so), "setup", 0, 0, 0 };
	LIN_OK(lin_request_begin(rt, &so, &setup_req));
	struct lin_epoch_opts seo = { sizeof(seo), &setup_req, 1, 0, "setup" };
	LIN_OK(lin_epoch_declare(rt, &seo, &setup_ep));
	LIN_OK(lin_scope_enter(rt, setup_ep, &setup_sc));
	for (int i = 0; i < N_STREAMS; i++) {
		CUDA_OK(cudaStreamCreateWithFlags(&streams[i], cudaStreamNonBlocking));
		CUDA_OK(cudaMalloc(&dbuf[i], N * sizeof(float)));
		lin_launch_begin(rt, "clear", &l);
		CUDA_OK(cudaMemsetAsync(dbuf[i], 0, N * sizeof(float), streams[i]));
		lin_launch_end(rt, &l);
	}
	LIN_OK(lin_scope_exit(rt, &setup_sc));
	LIN_OK(lin_request_end(rt, setup_req));
	build_graph();
	for (int i = 0; i < N_WORKERS; i++)
		pthread_create(&th[i], NULL, worker, NULL);

	if (n_requests < 1 || n_requests > MAX_REQUESTS) {
		fprintf(stderr, "pool_lineage: requests must be 1..%d\n", MAX_REQUESTS);
		return 2;
	}
	uint64_t *reqs = (uint64_t *)calloc((size_t)n_requests, sizeof(uint64_t));
	g_reqs = reqs;
	g_nreqs = n_requests;
	for (int r = 0; r < n_requests; r++) {
		struct lin_request_opts ro = { sizeof(ro), "request", (uint64_t)r, 1, 0 };
		LIN_OK(lin_request_begin(rt, &ro, &reqs[r]));
		/* Fan-out: one epoch per kernel, each launched by some worker on its own stream. */
		for (int f = 0; f < FANOUT; f++) {
			struct lin_epoch_opts eo = { sizeof(eo), &reqs[r], 1, 0, "fanout" };
			uint64_t ep;
			struct task t = { TASK_KERNEL };
			LIN_OK(lin_epoch_declare(rt, &eo, &ep));
			LIN_OK(lin_token_make(rt, ep, &t.tok));
			t.stream = r * FANOUT + f;
			t.truth.r[0] = reqs[r];
			t.truth.n = 1;
			submit(&t);
		}
		/* Every other request also replays the captured graph, from a worker. */
		if (r % 2 == 0 && gexec_id) {
			struct task t = { TASK_GRAPH };
			struct lin_epoch_opts eo = { sizeof(eo), &reqs[r], 1, 0, "graph_step" };
			uint64_t ep;
			LIN_OK(lin_epoch_declare(rt, &eo, &ep));
			LIN_OK(lin_token_make(rt, ep, &t.tok));
			t.stream = r;
			t.index = r;
			t.truth.r[0] = reqs[r];
			t.truth.n = 1;
			submit(&t);
		}
		/* Every fourth request closes a batch: one launch serving the last four requests. */
		if (r % 4 == 3) {
			struct lin_epoch_opts eo = { sizeof(eo), &reqs[r - 3], 4, 0, "batch" };
			uint64_t ep;
			struct task t = { TASK_BATCH };
			LIN_OK(lin_epoch_declare(rt, &eo, &ep));
			LIN_OK(lin_token_make(rt, ep, &t.tok));
			t.stream = r;
			t.batch = r / 4;
			for (int k = 0; k < 4; k++)
				t.truth.r[k] = reqs[r - 3 + k];
			t.truth.n = 4;
			submit(&t);
		}
	}
	for (int i = 0; i < N_WORKERS; i++) {
		struct task stop = { TASK_STOP };
		submit(&stop);
	}
	for (int i = 0; i < N_WORKERS; i++)
		pthread_join(th[i], NULL);
	CUDA_OK(cudaDeviceSynchronize());
	/* Reading the device log back is work too (its copies join the "collect" request). */
	uint64_t col_req, col_ep;
	lin_scope col_sc;
	struct lin_request_opts co = { sizeof(co), "collect", 0, 0, 0 };
	LIN_OK(lin_request_begin(rt, &co, &col_req));
	struct lin_epoch_opts ceo = { sizeof(ceo), &col_req, 1, 0, "collect" };
	LIN_OK(lin_epoch_declare(rt, &ceo, &col_ep));
	LIN_OK(lin_scope_enter(rt, col_ep, &col_sc));
	lin_launch_begin(rt, "read_log", &l);
	unsigned int labelled = write_truth(truth_path);
	lin_launch_end(rt, &l);
	LIN_OK(lin_scope_exit(rt, &col_sc));
	LIN_OK(lin_request_end(rt, col_req));
	for (int r = 0; r < n_requests; r++)
		lin_request_end(rt, reqs[r]);
	free(reqs);

	if (sub)
		cuptiUnsubscribe(sub);
	CUDA_OK(cudaGraphExecDestroy(gexec));
	lin_graph_exec_destroyed(gt, gexec_id);
	lin_graph_tracker_free(gt);
	lin_runtime_free(rt); /* final CUPTI flush, then the trace is closed */
	for (int i = 0; i < N_STREAMS; i++) {
		cudaFree(dbuf[i]);
		cudaStreamDestroy(streams[i]);
	}
	printf("pool_lineage: %d requests, trace %s, truth %s (%u kernels labelled)\n", n_requests,
	       path, truth_path, labelled);
	return 0;
}
