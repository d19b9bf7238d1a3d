// SPDX-License-Identifier: MIT
//
// cupti_probe.cu - what real libcupti does where its headers leave lineage's premises open
// (docs/cupti.md, "Open questions on a GPU"). Run by tests/gpu/run.sh on a GPU machine, one
// process per mode (CUPTI's state is per process). Every answer is printed as a line
// "E<n> name: key=value ..."; facts are reported, never asserted. Exit: 0 the mode ran;
// 1 a CUDA or CUPTI call the mode needs failed (said on stderr); 2 bad arguments;
// 77 no GPU visible (no /dev/nvidiactl, and LIN_GPU_VISIBLE is not 1).
//
//   lineage-cupti-probe --mode main         E1 E2 E3 E4 E5 E7 E11
//   lineage-cupti-probe --mode latency      E6 (latency timestamps, plain and graph kernels)
//   lineage-cupti-probe --mode filter       E8 (per-cbid API filters and ext records)
//   lineage-cupti-probe --mode no-api       E8 (ext records with no API kind enabled)
//   lineage-cupti-probe --mode graph-trace  E9 (GRAPH_TRACE and per-node kernel records)
//   lineage-cupti-probe --mode clock        E10 (clock pair widths on CUPTI's own clock)
//   lineage-cupti-probe --mode ts-callback  E12 (what a registered timestamp callback moves)
//
// E1  an EXTERNAL_CORRELATION record comes before the API record it annotates
// E2  a runtime launch and the driver call nested in it: one correlation id or two; which
//     one the kernel (and a memset) carries; ext records for each
// E3  a launch on a thread that pushed nothing gets no ext record; one that pushed gets one
// E4  graph replays: every kernel of one cudaGraphLaunch carries its correlation id;
//     graphNodeId is the clone GRAPHNODE_CLONED reported; graphId is cuptiGetGraphId of the
//     original graph, cuptiGetGraphExecId of the exec, or neither
// E5  the callback API's correlation id at API_ENTER equals the API record's
// E6  queued/submitted are set with latency timestamps on, for plain and for graph kernels
// E7  the runtime cbid a <<<>>> launch reports, and cudaLaunchKernel's
// E8  per-cbid API filters (cuptiActivityEnableRuntimeApi): do they cut the ext records of
//     the calls filtered out; are ext records written with no API kind enabled at all
// E9  GRAPH_TRACE: is it accepted beside CONCURRENT_KERNEL, and does it suppress the
//     per-node kernel records of graph replays
// E10 a clock pair (CLOCK_MONOTONIC, cuptiGetTimestamp, CLOCK_MONOTONIC): widths of one read
//     and of the narrowest of 8 (what the live binding keeps), and the cost of one read
// E11 a forced flush while a kernel runs: how CUPTI delivers the incomplete record
// E12 a registered timestamp callback: does cuptiGetTimestamp return its time; are API
//     records and kernel records on its clock
#include <cuda.h>
#include <cuda_runtime.h>
#include <cupti.h>
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#define EXT_KIND CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2

static bool g_fail;

#define CK(x) ck_cupti((x), #x, __LINE__)
#define CR(x) ck_cuda((x), #x, __LINE__)

static bool ck_cupti(CUptiResult r, const char *what, int line)
{
	if (r == CUPTI_SUCCESS)
		return true;
	const char *s = "?";
	cuptiGetResultString(r, &s);
	fprintf(stderr, "cupti_probe:%d: %s -> %d %s\n", line, what, (int)r, s);
	return false;
}

static void ck_cuda(cudaError_t e, const char *what, int line)
{
	if (e == cudaSuccess)
		return;
	fprintf(stderr, "cupti_probe:%d: %s -> %s\n", line, what, cudaGetErrorString(e));
	g_fail = true;
	exit(1);
}

static uint64_t mono_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

__global__ void kA(int *p)
{
	if (p)
		atomicAdd(p, 1);
}

__global__ void kB(int *p)
{
	if (p)
		atomicAdd(p, 2);
}

__global__ void kSpin(long long cycles)
{
	long long t0 = clock64();
	while (clock64() - t0 < cycles) {
	}
}

// ------------------------------------------------------------------ records, in order

struct Rec {
	int kind = 0;
	unsigned buf = 0, idx = 0; // buffer number, position in it
	int phase = 0;             // g_phase when the buffer completed
	uint32_t corr = 0, cbid = 0, tid = 0, ext_kind = 0, graph_id = 0, stream = 0;
	uint64_t ext_id = 0, start = 0, end = 0, queued = 0, submitted = 0, node = 0;
	bool api_driver = false;
};

static std::mutex g_mu;
static std::vector<Rec> g_recs; // appended by buf_done (CUPTI's threads too), under g_mu
static std::vector<Rec> g_snap; // what the reports read: a copy taken under g_mu

// Where the probe is, for a crash report (a signal handler writes it).
static const char *volatile g_where = "start";
static unsigned g_nbuf, g_bad_status;
static int g_phase;           // 1 while the forced flush of E11 runs
static unsigned g_incomplete; // records GetNextRecord refused during that flush

struct Cb {
	int domain;
	uint32_t cbid, corr, tid;
};
static std::vector<Cb> g_cbs;
static std::map<uint64_t, uint64_t> g_clone_of; // clone node id -> original node id
static std::set<uint64_t> g_created;            // node ids created while capturing
static bool g_capturing;

static void CUPTIAPI buf_req(uint8_t **b, size_t *size, size_t *max)
{
	*size = 1 << 20;
	*b = (uint8_t *)aligned_alloc(8, *size);
	*max = 0;
}

static void take(const CUpti_Activity *r, unsigned buf, unsigned idx)
{
	Rec x;
	x.kind = r->kind;
	x.buf = buf;
	x.idx = idx;
	x.phase = g_phase;
	switch (r->kind) {
	case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
		auto e = (const CUpti_ActivityExternalCorrelation *)r;
		x.ext_kind = e->externalKind;
		x.ext_id = e->externalId;
		x.corr = e->correlationId;
		break;
	}
	case CUPTI_ACTIVITY_KIND_RUNTIME:
	case CUPTI_ACTIVITY_KIND_DRIVER: {
		auto a = (const CUpti_ActivityAPI *)r;
		x.api_driver = r->kind == CUPTI_ACTIVITY_KIND_DRIVER;
		x.cbid = a->cbid;
		x.corr = a->correlationId;
		x.tid = a->threadId;
		x.start = a->start;
		x.end = a->end;
		break;
	}
	case CUPTI_ACTIVITY_KIND_KERNEL:
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
		auto k = (const CUpti_ActivityKernel10 *)r;
		x.corr = k->correlationId;
		x.start = k->start;
		x.end = k->end;
		x.queued = k->queued;
		x.submitted = k->submitted;
		x.graph_id = k->graphId;
		x.node = k->graphNodeId;
		x.stream = k->streamId;
		break;
	}
	case CUPTI_ACTIVITY_KIND_MEMSET: {
		auto m = (const CUpti_ActivityMemset4 *)r;
		x.corr = m->correlationId;
		x.start = m->start;
		x.end = m->end;
		break;
	}
	case CUPTI_ACTIVITY_KIND_GRAPH_TRACE: {
		auto g = (const CUpti_ActivityGraphTrace2 *)r;
		x.corr = g->correlationId;
		x.graph_id = g->graphId;
		x.start = g->start;
		x.end = g->end;
		break;
	}
	default: break;
	}
	g_recs.push_back(x);
}

static void CUPTIAPI buf_done(CUcontext, uint32_t, uint8_t *b, size_t, size_t valid)
{
	std::lock_guard<std::mutex> g(g_mu);
	unsigned n = g_nbuf++, idx = 0;
	CUpti_Activity *r = NULL;
	for (;;) {
		CUptiResult st = cuptiActivityGetNextRecord(b, valid, &r);
		if (st == CUPTI_ERROR_MAX_LIMIT_REACHED)
			break;
		if (st != CUPTI_SUCCESS) {
			if (g_phase == 1)
				g_incomplete++;
			else
				g_bad_status++;
			break;
		}
		take(r, n, idx++);
	}
	free(b);
}

static uint32_t gettid_u32(void) { return (uint32_t)syscall(SYS_gettid); }

static void CUPTIAPI on_cb(void *, CUpti_CallbackDomain dom, CUpti_CallbackId cbid, const void *data)
{
	if (dom == CUPTI_CB_DOMAIN_RUNTIME_API || dom == CUPTI_CB_DOMAIN_DRIVER_API) {
		auto d = (const CUpti_CallbackData *)data;
		if (d->callbackSite != CUPTI_API_ENTER)
			return;
		std::lock_guard<std::mutex> g(g_mu);
		g_cbs.push_back(Cb{ (int)dom, cbid, d->correlationId, gettid_u32() });
		return;
	}
	if (dom != CUPTI_CB_DOMAIN_RESOURCE)
		return;
	auto rd = (const CUpti_ResourceData *)data;
	auto gd = (const CUpti_GraphData *)rd->resourceDescriptor;
	if (!gd)
		return;
	uint64_t a = 0, b = 0;
	if (cbid == CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED &&
	    cuptiGetGraphNodeId(gd->node, &a) == CUPTI_SUCCESS &&
	    cuptiGetGraphNodeId(gd->originalNode, &b) == CUPTI_SUCCESS) {
		std::lock_guard<std::mutex> g(g_mu);
		g_clone_of[a] = b;
	} else if (cbid == CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED && g_capturing &&
		   cuptiGetGraphNodeId(gd->node, &a) == CUPTI_SUCCESS) {
		std::lock_guard<std::mutex> g(g_mu);
		g_created.insert(a);
	}
}

// ------------------------------------------------------------------ helpers

static bool flush_all(void)
{
	CR(cudaDeviceSynchronize());
	return CK(cuptiActivityFlushAll(0));
}

// The records so far, copied for the reports (CUPTI may still deliver on its own threads).
static void snapshot(void)
{
	std::lock_guard<std::mutex> g(g_mu);
	g_snap = g_recs;
}

static void on_crash(int sig)
{
	const char *w = g_where;
	char buf[256];
	int n = snprintf(buf, sizeof(buf), "cupti_probe: signal %d while: %s\n", sig, w);
	if (n > 0)
		(void)!write(2, buf, (size_t)n);
	_exit(128 + sig);
}

static const char *cb_name(CUpti_CallbackDomain d, uint32_t cbid)
{
	const char *n = "?";
	if (cuptiGetCallbackName(d, cbid, &n) != CUPTI_SUCCESS || !n)
		n = "?";
	return n;
}

static bool is_kernel(const Rec &r)
{
	return r.kind == CUPTI_ACTIVITY_KIND_KERNEL || r.kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
}

// The runtime API record whose call was made under ext id @ext (through its ext record).
static const Rec *api_of_ext(uint64_t ext, bool driver)
{
	for (const Rec &e : g_snap) {
		if (e.kind != CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION || e.ext_id != ext)
			continue;
		for (const Rec &a : g_snap)
			if ((a.kind == CUPTI_ACTIVITY_KIND_RUNTIME || a.kind == CUPTI_ACTIVITY_KIND_DRIVER) &&
			    a.api_driver == driver && a.corr == e.corr)
				return &a;
	}
	return NULL;
}

static std::vector<const Rec *> recs_of(int kind, uint32_t corr)
{
	std::vector<const Rec *> v;
	for (const Rec &r : g_snap)
		if ((kind < 0 ? is_kernel(r) : r.kind == kind) && r.corr == corr)
			v.push_back(&r);
	return v;
}

static int n_ext(uint32_t corr, uint64_t *id)
{
	int n = 0;
	for (const Rec &r : g_snap)
		if (r.kind == CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION && r.corr == corr) {
			n++;
			if (id)
				*id = r.ext_id;
		}
	return n;
}

// Driver API records of @rt's thread that lie inside its interval (nested calls).
static std::vector<const Rec *> nested(const Rec *rt)
{
	std::vector<const Rec *> v;
	for (const Rec &r : g_snap)
		if (r.kind == CUPTI_ACTIVITY_KIND_DRIVER && r.tid == rt->tid &&
		    r.start >= rt->start && r.end <= rt->end)
			v.push_back(&r);
	return v;
}

static bool enable(CUpti_ActivityKind k, const char *name)
{
	CUptiResult r = cuptiActivityEnable(k);
	if (r != CUPTI_SUCCESS) {
		const char *s = "?";
		cuptiGetResultString(r, &s);
		printf("note: cuptiActivityEnable(%s) -> %s\n", name, s);
		return false;
	}
	return true;
}

static bool setup(bool latency, bool api_kinds, bool subscribe)
{
	bool ok = true;
	// Thread ids as gettid() (the default is pthread_self(), truncated to 32 bits).
	if (!CK(cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM)))
		printf("note: cuptiSetThreadIdType(SYSTEM) refused: E3 may misread threads\n");
	if (latency && !CK(cuptiActivityEnableLatencyTimestamps(1)))
		printf("note: latency timestamps refused\n");
	ok &= CK(cuptiActivityRegisterCallbacks(buf_req, buf_done));
	ok &= enable(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION, "EXTERNAL_CORRELATION");
	ok &= enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, "CONCURRENT_KERNEL");
	ok &= enable(CUPTI_ACTIVITY_KIND_MEMSET, "MEMSET");
	if (api_kinds) {
		ok &= enable(CUPTI_ACTIVITY_KIND_RUNTIME, "RUNTIME");
		ok &= enable(CUPTI_ACTIVITY_KIND_DRIVER, "DRIVER");
	}
	if (subscribe) {
		// The callbacks the answers need, one by one (whole domains crashed an H200 run
		// with latency timestamps on: E6 has a mode of its own, without a subscriber).
		static const uint32_t rt_cbids[] = {
			CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
			CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000,
			CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000,
			CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020,
		};
		static const uint32_t drv_cbids[] = { CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
						      CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
						      CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch };
		CUpti_SubscriberHandle sub;
		ok &= CK(cuptiSubscribe(&sub, (CUpti_CallbackFunc)on_cb, NULL));
		for (uint32_t c : rt_cbids)
			ok &= CK(cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_RUNTIME_API, c));
		for (uint32_t c : drv_cbids)
			ok &= CK(cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_DRIVER_API, c));
		ok &= CK(cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_RESOURCE,
					     CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED));
		ok &= CK(cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_RESOURCE,
					     CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED));
	}
	return ok;
}

static long long cycles_for_ms(int ms)
{
	int khz = 0;
	CR(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0));
	return (long long)khz * ms;
}

// A graph captured on @s as [kA -> kB] under ext id 3000, instantiated; its ids.
struct G {
	cudaGraph_t graph;
	cudaGraphExec_t exec;
	uint32_t gid = 0, eid = 0;
};

static G make_graph(cudaStream_t s, int *d)
{
	G g;
	CK(cuptiActivityPushExternalCorrelationId(EXT_KIND, 3000));
	g_capturing = true; // the nodes created now are the captured ones (clones come later)
	CR(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
	kA<<<1, 32, 0, s>>>(d);
	kB<<<1, 32, 0, s>>>(d);
	CR(cudaStreamEndCapture(s, &g.graph));
	g_capturing = false;
	uint64_t dummy;
	CK(cuptiActivityPopExternalCorrelationId(EXT_KIND, &dummy));
	CR(cudaGraphInstantiate(&g.exec, g.graph, 0));
	if (cuptiGetGraphId(g.graph, &g.gid) != CUPTI_SUCCESS)
		g.gid = 0;
	if (cuptiGetGraphExecId(g.exec, &g.eid) != CUPTI_SUCCESS)
		g.eid = 0;
	return g;
}

static void replay(const G &g, cudaStream_t s, uint64_t ext)
{
	uint64_t dummy;
	CK(cuptiActivityPushExternalCorrelationId(EXT_KIND, ext));
	CR(cudaGraphLaunch(g.exec, s));
	CK(cuptiActivityPopExternalCorrelationId(EXT_KIND, &dummy));
}

// ------------------------------------------------------------------ mode main

static void launch_under(uint64_t ext, int *d, bool via_api)
{
	uint64_t dummy;
	CK(cuptiActivityPushExternalCorrelationId(EXT_KIND, ext));
	if (via_api) {
		void *args[] = { &d };
		CR(cudaLaunchKernel((const void *)kB, dim3(1), dim3(32), args, 0, 0));
	} else {
		kA<<<1, 32>>>(d);
	}
	CK(cuptiActivityPopExternalCorrelationId(EXT_KIND, &dummy));
}

static void report_e1_e2_e7(void)
{
	const Rec *rt = api_of_ext(1001, false);
	const Rec *rt2 = api_of_ext(1002, false);
	if (!rt) {
		printf("E1 ext_before_api: unknown (no runtime API record reached through ext 1001)\n");
		return;
	}
	// E1: the ext record and the runtime API record of the 1001 launch.
	const Rec *ext = NULL;
	for (const Rec &r : g_snap)
		if (r.kind == CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION && r.corr == rt->corr)
			ext = &r;
	const char *order = !ext                  ? "no_ext_record"
			    : ext->buf != rt->buf ? "different_buffers"
			    : ext->idx < rt->idx  ? "yes"
						  : "no";
	printf("E1 ext_before_api: %s (correlation %u)\n", order, rt->corr);
	// E7: the cbids.
	printf("E7 launch_cbid: <<<>>> runtime cbid %u (%s)", rt->cbid,
	       cb_name(CUPTI_CB_DOMAIN_RUNTIME_API, rt->cbid));
	if (rt2)
		printf("; cudaLaunchKernel runtime cbid %u (%s)", rt2->cbid,
		       cb_name(CUPTI_CB_DOMAIN_RUNTIME_API, rt2->cbid));
	printf("\n");
	// E2: nested driver calls, and which id the kernel and the memset carry.
	for (const Rec *r : { rt, rt2 }) {
		if (!r)
			continue;
		auto nd = nested(r);
		printf("E2 nested_driver: runtime cbid %u correlation %u: %zu nested driver record(s)",
		       r->cbid, r->corr, nd.size());
		for (const Rec *d : nd)
			printf(" [cbid %u %s correlation %u%s, %d ext record(s)]", d->cbid,
			       cb_name(CUPTI_CB_DOMAIN_DRIVER_API, d->cbid), d->corr,
			       d->corr == r->corr ? " shared" : " own", n_ext(d->corr, NULL));
		size_t kr = recs_of(-1, r->corr).size();
		size_t kd = 0;
		for (const Rec *d : nd)
			if (d->corr != r->corr)
				kd += recs_of(-1, d->corr).size();
		printf("; kernel records carrying the runtime id %zu, a nested driver id %zu; "
		       "ext records for the runtime id %d\n",
		       kr, kd, n_ext(r->corr, NULL));
	}
	// The memset made under ext 1001 after the launch: its runtime call is the next
	// runtime record of that thread after the launch.
	const Rec *ms = NULL;
	for (const Rec &r : g_snap)
		if (r.kind == CUPTI_ACTIVITY_KIND_RUNTIME && r.tid == rt->tid &&
		    r.cbid == CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020 && r.start >= rt->end)
			if (!ms || r.start < ms->start)
				ms = &r;
	if (ms) {
		auto nd = nested(ms);
		size_t own = recs_of(CUPTI_ACTIVITY_KIND_MEMSET, ms->corr).size(), drv = 0;
		for (const Rec *d : nd)
			if (d->corr != ms->corr)
				drv += recs_of(CUPTI_ACTIVITY_KIND_MEMSET, d->corr).size();
		printf("E2 memset: cudaMemsetAsync correlation %u, %zu nested driver record(s); "
		       "memset records carrying the runtime id %zu, a nested driver id %zu\n",
		       ms->corr, nd.size(), own, drv);
	} else {
		printf("E2 memset: unknown (no cudaMemsetAsync runtime record found)\n");
	}
}

static void report_e3(void)
{
	// Launches on the helper threads: the runtime launch records of a thread other than
	// the main one, in time order; the first made without a push, the second with 2002.
	std::vector<const Rec *> v;
	uint32_t main_tid = gettid_u32();
	for (const Rec &r : g_snap)
		if (r.kind == CUPTI_ACTIVITY_KIND_RUNTIME && r.tid != main_tid &&
		    (r.cbid == CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000 ||
		     r.cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000))
			v.push_back(&r);
	std::sort(v.begin(), v.end(), [](const Rec *a, const Rec *b) { return a->start < b->start; });
	if (v.size() < 2) {
		printf("E3 pool_thread: unknown (%zu launch records from other threads)\n", v.size());
		return;
	}
	uint64_t id = 0;
	int n0 = n_ext(v[0]->corr, NULL), n1 = n_ext(v[1]->corr, &id);
	printf("E3 pool_thread: without a push %d ext record(s); with a push %d ext record(s), "
	       "external id %llu (pushed 2002)\n",
	       n0, n1, (unsigned long long)id);
}

static void report_e4_e6(const G &g)
{
	// The graph launches: runtime records of cudaGraphLaunch, by their ext ids 4001..4003.
	int shared = 0, launches = 0, kernels = 0, node_is_clone = 0, node_is_original = 0;
	int gid_graph = 0, gid_exec = 0, gid_other = 0, lat = 0;
	std::set<uint64_t> nodes;
	for (uint64_t ext = 4001; ext <= 4003; ext++) {
		const Rec *a = api_of_ext(ext, false);
		if (!a)
			continue;
		launches++;
		auto ks = recs_of(-1, a->corr);
		kernels += (int)ks.size();
		shared += ks.size() == 2;
		for (const Rec *k : ks) {
			nodes.insert(k->node);
			node_is_clone += g_clone_of.count(k->node) &&
					 g_created.count(g_clone_of[k->node]);
			node_is_original += g_created.count(k->node) > 0;
			if (k->graph_id == g.gid)
				gid_graph++;
			else if (k->graph_id == g.eid)
				gid_exec++;
			else
				gid_other++;
			lat += k->queued != 0 && k->submitted != 0;
		}
	}
	printf("E4 graph_replay: %d of 3 launches found; %d with both kernels carrying the "
	       "launch's correlation id (%d kernel records); %zu distinct graphNodeId over the "
	       "replays\n",
	       launches, shared, kernels, nodes.size());
	printf("E4 graph_node: %d kernel records whose graphNodeId is a GRAPHNODE_CLONED clone "
	       "of a captured node, %d whose graphNodeId is a captured node itself (%zu clones, "
	       "%zu nodes created seen)\n",
	       node_is_clone, node_is_original, g_clone_of.size(), g_created.size());
	printf("E4 graph_id: cuptiGetGraphId(original graph) %u, cuptiGetGraphExecId(exec) %u; "
	       "kernel graphId equals the graph's %d, the exec's %d, neither %d%s\n",
	       g.gid, g.eid, gid_graph, gid_exec, gid_other,
	       g.gid == g.eid ? " (the two ids are equal: not told apart)" : "");
	(void)lat;
}

static void report_e5(void)
{
	int match[2] = { 0, 0 }, miss[2] = { 0, 0 };
	std::set<std::pair<int, uint32_t>> api;
	for (const Rec &r : g_snap)
		if (r.kind == CUPTI_ACTIVITY_KIND_RUNTIME || r.kind == CUPTI_ACTIVITY_KIND_DRIVER)
			api.insert({ r.api_driver ? 1 : 0, r.corr });
	for (const Cb &c : g_cbs) {
		int d = c.domain == CUPTI_CB_DOMAIN_DRIVER_API ? 1 : 0;
		if (api.count({ d, c.corr }))
			match[d]++;
		else
			miss[d]++;
	}
	printf("E5 callback_corr: runtime API_ENTER callbacks whose correlation id is a runtime "
	       "API record's %d, not %d; driver API_ENTER callbacks whose correlation id is a "
	       "driver API record's %d, not %d (a driver call made inside a runtime call has no "
	       "record of its own)\n",
	       match[0], miss[0], match[1], miss[1]);
}

static int mode_main(void)
{
	g_where = "main: setup";
	if (!setup(false, true, true))
		return 1;
	g_where = "main: cudaMalloc (CUDA's initialisation)";
	int *d = NULL;
	CR(cudaMalloc(&d, 64));
	g_where = "main: E1 <<<>>> launch";
	launch_under(1001, d, false);
	g_where = "main: E2 memset";
	{
		uint64_t dummy;
		CK(cuptiActivityPushExternalCorrelationId(EXT_KIND, 1001));
		CR(cudaMemsetAsync(d, 0, 4));
		CK(cuptiActivityPopExternalCorrelationId(EXT_KIND, &dummy));
	}
	g_where = "main: E7 cudaLaunchKernel";
	launch_under(1002, d, true);
	CR(cudaDeviceSynchronize());
	g_where = "main: E3 pool threads";
	std::thread t0([d] {
		kA<<<1, 32>>>(d);
		CR(cudaDeviceSynchronize());
	});
	t0.join();
	std::thread t1([d] {
		launch_under(2002, d, false);
		CR(cudaDeviceSynchronize());
	});
	t1.join();
	g_where = "main: E4 graph capture and replays";
	cudaStream_t s;
	CR(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	G g = make_graph(s, d);
	for (uint64_t r = 4001; r <= 4003; r++)
		replay(g, s, r);
	if (!flush_all())
		return 1;
	g_where = "main: E11 forced flush";
	// E11: a kernel spinning 300 ms, a forced flush while it runs.
	uint64_t dummy;
	CK(cuptiActivityPushExternalCorrelationId(EXT_KIND, 5001));
	kSpin<<<1, 1>>>(cycles_for_ms(300));
	CK(cuptiActivityPopExternalCorrelationId(EXT_KIND, &dummy));
	usleep(50000);
	size_t before;
	{
		std::lock_guard<std::mutex> lk(g_mu);
		g_phase = 1;
		before = g_recs.size();
	}
	CK(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
	size_t forced_kernels = 0, forced_zero = 0;
	{
		std::lock_guard<std::mutex> lk(g_mu);
		g_phase = 2;
		for (size_t i = before; i < g_recs.size(); i++)
			if (is_kernel(g_recs[i])) {
				forced_kernels++;
				forced_zero += g_recs[i].start == 0 || g_recs[i].end == 0;
			}
	}
	if (!flush_all())
		return 1;
	g_where = "main: reports";
	snapshot();
	const Rec *spin_api = api_of_ext(5001, false);
	size_t spin_after = 0, spin_complete = 0;
	if (spin_api)
		for (const Rec *k : recs_of(-1, spin_api->corr))
			if (k->phase == 2 || k->phase == 0) {
				spin_after++;
				spin_complete += k->start && k->end > k->start;
			}
	printf("E11 forced_flush: while a kernel ran, a forced flush delivered %zu kernel "
	       "record(s) (%zu with start or end 0) and GetNextRecord refused %u record(s); "
	       "after the kernel ended a normal flush delivered its record %zu time(s), %zu "
	       "complete\n",
	       forced_kernels, forced_zero, g_incomplete, spin_after, spin_complete);
	report_e1_e2_e7();
	report_e3();
	report_e4_e6(g);
	report_e5();
	printf("note: %zu records in %u buffers, %u other GetNextRecord failures\n", g_snap.size(),
	       g_nbuf, g_bad_status);
	return 0;
}

// ------------------------------------------------------------------ mode latency (E6)

static int mode_latency(void)
{
	g_where = "latency: setup";
	if (!setup(true, true, false))
		return 1;
	g_where = "latency: launches and replays";
	int *d = NULL;
	CR(cudaMalloc(&d, 64));
	for (int i = 0; i < 4; i++)
		kA<<<1, 32>>>(d);
	cudaStream_t s;
	CR(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	G g = make_graph(s, d);
	for (uint64_t r = 4001; r <= 4003; r++)
		replay(g, s, r);
	if (!flush_all())
		return 1;
	snapshot();
	int plain = 0, plain_q = 0, plain_s = 0, gk = 0, g_q = 0, g_s = 0;
	long long q_to_start_plain = 0, q_to_start_graph = 0;
	for (const Rec &r : g_snap) {
		if (!is_kernel(r))
			continue;
		bool graph = r.graph_id != 0;
		(graph ? gk : plain)++;
		(graph ? g_q : plain_q) += r.queued != 0;
		(graph ? g_s : plain_s) += r.submitted != 0;
		if (r.queued && r.start > r.queued)
			(graph ? q_to_start_graph : q_to_start_plain) =
				std::max(graph ? q_to_start_graph : q_to_start_plain,
					 (long long)(r.start - r.queued));
	}
	printf("E6 latency: plain kernels with queued set %d, submitted set %d, of %d (queued to "
	       "start at most %lld ns); graph-replayed kernels with queued set %d, submitted set "
	       "%d, of %d (queued to start at most %lld ns)\n",
	       plain_q, plain_s, plain, q_to_start_plain, g_q, g_s, gk, q_to_start_graph);
	return 0;
}

// ------------------------------------------------------------------ mode filter (E8)

static int mode_filter(bool api_filtered)
{
	if (!setup(false, false, false))
		return 1;
	if (api_filtered) {
		// Launch calls only: the memset's runtime call is filtered out.
		CK(cuptiActivityEnableRuntimeApi(CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000, 1));
		CK(cuptiActivityEnableRuntimeApi(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 1));
	}
	int *d = NULL;
	CR(cudaMalloc(&d, 64));
	uint64_t dummy;
	CK(cuptiActivityPushExternalCorrelationId(EXT_KIND, 6001));
	kA<<<1, 32>>>(d);
	CK(cuptiActivityPopExternalCorrelationId(EXT_KIND, &dummy));
	CK(cuptiActivityPushExternalCorrelationId(EXT_KIND, 6002));
	CR(cudaMemsetAsync(d, 0, 4));
	CK(cuptiActivityPopExternalCorrelationId(EXT_KIND, &dummy));
	if (!flush_all())
		return 1;
	snapshot();
	int apis = 0, exts = 0, ext_k = 0, ext_m = 0, ks = 0, ms = 0;
	std::set<uint32_t> ext_corr;
	for (const Rec &r : g_snap) {
		apis += r.kind == CUPTI_ACTIVITY_KIND_RUNTIME || r.kind == CUPTI_ACTIVITY_KIND_DRIVER;
		if (r.kind == CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION) {
			exts++;
			ext_corr.insert(r.corr);
		}
	}
	for (const Rec &r : g_snap) {
		if (is_kernel(r)) {
			ks++;
			ext_k += ext_corr.count(r.corr) > 0;
		} else if (r.kind == CUPTI_ACTIVITY_KIND_MEMSET) {
			ms++;
			ext_m += ext_corr.count(r.corr) > 0;
		}
	}
	printf("E8 %s: %d API records, %d ext records; kernels %d (%d reached by an ext record), "
	       "memsets %d (%d reached by an ext record)\n",
	       api_filtered ? "api_filter_launch_only" : "no_api_kind", apis, exts, ks, ext_k, ms,
	       ext_m);
	return 0;
}

// ------------------------------------------------------------------ mode graph-trace (E9)

static int mode_graph_trace(void)
{
	if (!setup(false, true, false))
		return 1;
	bool gt = enable(CUPTI_ACTIVITY_KIND_GRAPH_TRACE, "GRAPH_TRACE");
	int *d = NULL;
	CR(cudaMalloc(&d, 64));
	cudaStream_t s;
	CR(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	G g = make_graph(s, d);
	for (uint64_t r = 4001; r <= 4003; r++)
		replay(g, s, r);
	if (!flush_all())
		return 1;
	snapshot();
	int gk = 0, gtr = 0, joined = 0;
	for (const Rec &r : g_snap) {
		gk += is_kernel(r) && r.graph_id != 0;
		gtr += r.kind == CUPTI_ACTIVITY_KIND_GRAPH_TRACE;
	}
	for (uint64_t ext = 4001; ext <= 4003; ext++) {
		const Rec *a = api_of_ext(ext, false);
		if (a)
			joined += (int)recs_of(CUPTI_ACTIVITY_KIND_GRAPH_TRACE, a->corr).size();
	}
	printf("E9 graph_trace: GRAPH_TRACE %s; over 3 replays of a 2-kernel graph: %d per-node "
	       "kernel records, %d graph_trace records (%d carrying a replay's launch correlation "
	       "id)\n",
	       gt ? "enabled" : "refused", gk, gtr, joined);
	return 0;
}

// ------------------------------------------------------------------ mode clock (E10)

static void pct(const char *what, std::vector<uint64_t> &w)
{
	std::sort(w.begin(), w.end());
	size_t n = w.size();
	printf("E10 clock_pair %s: n %zu width ns min %llu p50 %llu p90 %llu p99 %llu max %llu\n",
	       what, n, (unsigned long long)w[0], (unsigned long long)w[n / 2],
	       (unsigned long long)w[n * 9 / 10], (unsigned long long)w[n * 99 / 100],
	       (unsigned long long)w[n - 1]);
}

static int mode_clock(void)
{
	// The kinds the live binding enables, on CUPTI's own clock (no timestamp callback).
	if (!setup(false, true, false))
		return 1;
	CR(cudaFree(0));
	const int N = 20000, K = 8;
	std::vector<uint64_t> one, best;
	one.reserve(N);
	uint64_t t0 = mono_ns();
	for (int i = 0; i < N; i++) {
		uint64_t h = mono_ns(), d = 0;
		CUptiResult r = cuptiGetTimestamp(&d);
		uint64_t a = mono_ns();
		if (r != CUPTI_SUCCESS) {
			CK(r);
			return 1;
		}
		one.push_back(a - h);
	}
	uint64_t per = (mono_ns() - t0) / N;
	for (int i = 0; i + K <= N; i += K)
		best.push_back(*std::min_element(one.begin() + i, one.begin() + i + K));
	pct("one_read", one);
	pct("narrowest_of_8", best);
	printf("E10 cost: one pair (two CLOCK_MONOTONIC reads and cuptiGetTimestamp) %llu ns\n",
	       (unsigned long long)per);
	return 0;
}

// ------------------------------------------------------------------ mode ts-callback (E12)

static const uint64_t TS_OFFSET = 1ull << 50; // far from both CLOCK_REALTIME and MONOTONIC

static uint64_t CUPTIAPI ts_cb(void) { return mono_ns() + TS_OFFSET; }

static int mode_ts_callback(void)
{
	if (!CK(cuptiActivityRegisterTimestampCallback(ts_cb)))
		printf("E12 ts_callback: refused\n");
	if (!setup(false, true, false))
		return 1;
	int *d = NULL;
	CR(cudaMalloc(&d, 64));
	uint64_t h0 = mono_ns() + TS_OFFSET, ts = 0;
	CK(cuptiGetTimestamp(&ts));
	uint64_t h1 = mono_ns() + TS_OFFSET;
	uint64_t dummy;
	CK(cuptiActivityPushExternalCorrelationId(EXT_KIND, 7001));
	kA<<<1, 32>>>(d);
	CK(cuptiActivityPopExternalCorrelationId(EXT_KIND, &dummy));
	if (!flush_all())
		return 1;
	snapshot();
	uint64_t h2 = mono_ns() + TS_OFFSET;
	const Rec *a = api_of_ext(7001, false);
	int in_api = a && a->start >= h0 && a->end <= h2;
	int kin = 0, kn = 0;
	if (a)
		for (const Rec *k : recs_of(-1, a->corr)) {
			kn++;
			kin += k->start >= h0 && k->end <= h2;
		}
	printf("E12 ts_callback: cuptiGetTimestamp %s the callback's clock (%s); the launch's "
	       "runtime API record %s; kernel records on it %d of %d\n",
	       ts >= h0 && ts <= h1 ? "follows" : "does not follow",
	       ts >= h0 && ts <= h1 ? "inside the two callback-clock reads around it" : "outside them",
	       !a       ? "not found"
	       : in_api ? "on it"
			: "not on it",
	       kin, kn);
	return 0;
}

// ------------------------------------------------------------------ main

int main(int argc, char **argv)
{
	const char *mode = "main";
	setvbuf(stdout, NULL, _IOLBF, 0); // each answer reaches the log even if a later step crashes
	signal(SIGSEGV, on_crash);
	signal(SIGBUS, on_crash);
	signal(SIGABRT, on_crash);
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--mode") && i + 1 < argc) {
			mode = argv[++i];
		} else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			printf("usage: lineage-cupti-probe [--mode main|latency|filter|no-api|graph-trace|"
			       "clock|ts-callback]\n(the header of tests/gpu/cupti_probe.cu says what "
			       "each answers)\n");
			return 0;
		} else {
			fprintf(stderr, "lineage-cupti-probe: unknown argument '%s' (see --help)\n",
				argv[i]);
			return 2;
		}
	}
	// No CUDA call before a mode's setup: latency timestamps must be asked for first.
	const char *vis = getenv("LIN_GPU_VISIBLE");
	if (access("/dev/nvidiactl", F_OK) != 0 && !(vis && !strcmp(vis, "1"))) {
		printf("lineage-cupti-probe: no GPU visible (no /dev/nvidiactl)\n");
		return 77;
	}
	uint32_t v = 0;
	if (cuptiGetVersion(&v) == CUPTI_SUCCESS)
		printf("cupti api version: %u\n", v);
	int rc;
	if (!strcmp(mode, "main"))
		rc = mode_main();
	else if (!strcmp(mode, "latency"))
		rc = mode_latency();
	else if (!strcmp(mode, "filter"))
		rc = mode_filter(true);
	else if (!strcmp(mode, "no-api"))
		rc = mode_filter(false);
	else if (!strcmp(mode, "graph-trace"))
		rc = mode_graph_trace();
	else if (!strcmp(mode, "clock"))
		rc = mode_clock();
	else if (!strcmp(mode, "ts-callback"))
		rc = mode_ts_callback();
	else {
		fprintf(stderr, "lineage-cupti-probe: unknown mode '%s' (see --help)\n", mode);
		return 2;
	}
	cudaDeviceProp p;
	if (cudaGetDeviceProperties(&p, 0) == cudaSuccess)
		printf("device: %s (sm_%d%d)\n", p.name, p.major, p.minor);
	return rc ? rc : g_fail ? 1 : 0;
}
