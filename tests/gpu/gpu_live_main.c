/* SPDX-License-Identifier: MIT */
/*
 * gpu_live_main.c - the live CUPTI binding's success path on a real GPU (label gpu).
 *
 * A runtime with LIN_BACKEND_CUPTI (latency timestamps on) is created before CUDA, then 16
 * kernels (an empty PTX kernel, JIT-compiled by the driver: no nvcc needed) and a memset
 * are launched through the driver API inside one epoch, every CUDA call in a launch
 * bracket; the trace is validated in-process: at least 17 GPU records, every one joined
 * to its epoch (observed), and the header must say "ok". Then a kernel on stream A, an
 * event recorded behind it, a wait on that event on stream B and a kernel on B: the trace
 * must carry the cuda_event record and the stream-wait sync record naming its sync id
 * (the binding enables both kinds by default), and lineage-explain's ledger is built on it
 * (every GPU record explained, with a known start; what it infers is printed).
 *
 * With --own-clock the runtime leaves CUPTI's clock alone (LIN_CUPTI_OWN_CLOCK): the
 * header must say device_clock "cupti", every record must still join, and the clock pairs'
 * widths and the bracket check's decided and undecided calls are printed (what the pairs
 * the binding takes give on real libcupti: docs/cupti.md, "Clocks"). With --trace FILE the
 * trace is also written to FILE; --check FILE runs the same checks on a trace such a run
 * saved, without a GPU (tests/gpu/fixtures: traces from a real GPU).
 *
 * Exit status: 0 pass; 1 fail; 2 bad arguments; 77 skipped (no GPU visible: no
 * /dev/nvidiactl, and LIN_GPU_VISIBLE is not 1). With a GPU present every failure is a failure, never a skip. The driver is opened with dlopen, so
 * the program builds everywhere and needs libcuda.so.1 only where it runs.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cuda.h>

#include "explain.h"
#include "tr_helpers.h"
#include "join.h"
#include "report.h"
#include "lineage/runtime.h"
#include "lineage/trace_format.h"

#define N_KERNELS 16

static const char ptx[] = ".version 7.0\n"
			  ".target sm_50\n"
			  ".address_size 64\n"
			  ".visible .entry lin_gpu_empty()\n"
			  "{\n"
			  "	ret;\n"
			  "}\n";

/* The driver calls used, looked up by their ABI names (cuda.h maps the API names). */
static struct {
	CUresult (*init)(unsigned int);
	CUresult (*device_get)(CUdevice *, int);
	CUresult (*primary_retain)(CUcontext *, CUdevice);
	CUresult (*ctx_set)(CUcontext);
	CUresult (*module_load)(CUmodule *, const void *);
	CUresult (*function_get)(CUfunction *, CUmodule, const char *);
	CUresult (*launch)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
			   unsigned, CUstream, void **, void **);
	CUresult (*mem_alloc)(CUdeviceptr *, size_t);
	CUresult (*memset_async)(CUdeviceptr, unsigned char, size_t, CUstream);
	CUresult (*sync)(void);
	CUresult (*error_name)(CUresult, const char **);
	CUresult (*stream_create)(CUstream *, unsigned int);
	CUresult (*event_create)(CUevent *, unsigned int);
	CUresult (*event_record)(CUevent, CUstream);
	CUresult (*stream_wait)(CUstream, CUevent, unsigned int);
} cu;

static int failures;
static bool own_clock;

static void fail(const char *what, const char *detail)
{
	fprintf(stderr, "gpu_live: FAIL: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
	failures++;
}

static bool check_cu(CUresult r, const char *call)
{
	const char *name = "?";

	if (r == CUDA_SUCCESS)
		return true;
	if (cu.error_name)
		cu.error_name(r, &name);
	fail(call, name);
	return false;
}

static bool load_driver(void)
{
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
	/* dlsym's object pointer is copied into each function pointer (POSIX: same size). */
	struct {
		void *fn;
		const char *name;
	} syms[] = {
		{ &cu.init, "cuInit" },
		{ &cu.device_get, "cuDeviceGet" },
		{ &cu.primary_retain, "cuDevicePrimaryCtxRetain" },
		{ &cu.ctx_set, "cuCtxSetCurrent" },
		{ &cu.module_load, "cuModuleLoadData" },
		{ &cu.function_get, "cuModuleGetFunction" },
		{ &cu.launch, "cuLaunchKernel" },
		{ &cu.mem_alloc, "cuMemAlloc_v2" },
		{ &cu.memset_async, "cuMemsetD8Async" },
		{ &cu.sync, "cuCtxSynchronize" },
		{ &cu.error_name, "cuGetErrorName" },
		{ &cu.stream_create, "cuStreamCreate" },
		{ &cu.event_create, "cuEventCreate" },
		{ &cu.event_record, "cuEventRecord" },
		{ &cu.stream_wait, "cuStreamWaitEvent" },
	};

	if (!h) {
		fail("a GPU is visible but libcuda.so.1 cannot be opened", dlerror());
		return false;
	}
	_Static_assert(sizeof(void *) == sizeof(cu.init), "function and object pointers");
	for (size_t i = 0; i < sizeof(syms) / sizeof(syms[0]); i++) {
		void *p = dlsym(h, syms[i].name);

		if (!p) {
			fail("libcuda.so.1 lacks", syms[i].name);
			return false;
		}
		memcpy(syms[i].fn, &p, sizeof(p));
	}
	return true;
}

/* Every CUDA call inside a launch bracket of the current epoch: whatever GPU records the
 * driver makes for it (a module upload, a context's own memsets) join too. The comma
 * operator opens the bracket before the call, an argument of bracket_end, is made. */
static bool bracket_ok;

static void bracket_begin(lin_runtime *rt, const char *what, lin_launch *l)
{
	bracket_ok = lin_launch_begin(rt, what, l) == 0;
	if (!bracket_ok)
		fail("lin_launch_begin", what);
}

static bool bracket_end(lin_runtime *rt, lin_launch *l, CUresult r, const char *what)
{
	bool ok = check_cu(r, what) && bracket_ok;

	if (lin_launch_end(rt, l) != 0) {
		fail("lin_launch_end", what);
		ok = false;
	}
	return ok;
}

#define BRACKETED(rt, call, what) \
	(bracket_begin((rt), (what), &l_), bracket_end((rt), &l_, (call), (what)))

/* The CUDA work, inside one epoch of @rt. */
static bool run_work(lin_runtime *rt)
{
	CUdevice dev;
	CUcontext ctx;
	CUmodule mod;
	CUfunction fn;
	CUdeviceptr mem;
	lin_scope sc;
	lin_launch l_;
	uint64_t req, ep;
	bool ok = true;

	/* cuInit outside any bracket: CUPTI writes no API record for it (seen on an H200), so
	 * a bracket around it would be a launch without one (launch_without_api_record). */
	if (!check_cu(cu.init(0), "cuInit"))
		return false;
	if (lin_request_begin(rt, NULL, &req))
		return false;
	struct lin_epoch_opts eo = { .sz = sizeof(eo), .requests = &req, .n_requests = 1 };
	if (lin_epoch_declare(rt, &eo, &ep) || lin_scope_enter(rt, ep, &sc))
		return false;
	if (!BRACKETED(rt, cu.device_get(&dev, 0), "cuDeviceGet") ||
	    !BRACKETED(rt, cu.primary_retain(&ctx, dev), "cuDevicePrimaryCtxRetain") ||
	    !BRACKETED(rt, cu.ctx_set(ctx), "cuCtxSetCurrent") ||
	    !BRACKETED(rt, cu.module_load(&mod, ptx), "cuModuleLoadData") ||
	    !BRACKETED(rt, cu.function_get(&fn, mod, "lin_gpu_empty"), "cuModuleGetFunction") ||
	    !BRACKETED(rt, cu.mem_alloc(&mem, 1 << 20), "cuMemAlloc"))
		ok = false;
	for (int i = 0; ok && i < N_KERNELS; i++)
		ok = BRACKETED(rt, cu.launch(fn, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL),
			       "cuLaunchKernel");
	ok = ok && BRACKETED(rt, cu.memset_async(mem, 0, 1 << 20, NULL), "cuMemsetD8Async");
	/* A cross-stream dependency: kernel on A, event recorded on A, B waits, kernel on B. */
	CUstream sa = NULL, sb = NULL;
	CUevent evt = NULL;
	ok = ok && BRACKETED(rt, cu.stream_create(&sa, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
	ok = ok && BRACKETED(rt, cu.stream_create(&sb, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
	ok = ok && BRACKETED(rt, cu.event_create(&evt, CU_EVENT_DISABLE_TIMING), "cuEventCreate");
	ok = ok && BRACKETED(rt, cu.launch(fn, 1, 1, 1, 32, 1, 1, 0, sa, NULL, NULL), "cuLaunchKernel");
	ok = ok && BRACKETED(rt, cu.event_record(evt, sa), "cuEventRecord");
	ok = ok && BRACKETED(rt, cu.stream_wait(sb, evt, 0), "cuStreamWaitEvent");
	ok = ok && BRACKETED(rt, cu.launch(fn, 1, 1, 1, 32, 1, 1, 0, sb, NULL, NULL), "cuLaunchKernel");
	ok = ok && BRACKETED(rt, cu.sync(), "cuCtxSynchronize");
	lin_scope_exit(rt, &sc);
	return ok;
}

/* lineage-explain's ledger on the live trace: built, every GPU record explained with a known
 * start; the evidence of the marks is printed (what a real device gives it). */
static void explain(const struct tr_sink *sink)
{
	struct lin_xopts xo = { 0, 1.5, 5, 0, false, 0, true };
	struct lin_explain *x = lin_explain_create(&xo);
	struct lin_joiner_opts vo = { 0 };
	vo.allow_empty = true;
	if (!x) {
		fail("lin_explain_create", NULL);
		return;
	}
	vo.tool = lin_explain_tool(x);
	struct lin_joiner *v = lin_joiner_create(&vo);
	if (!v || lin_joiner_add_mem(v, "gpu_live", sink->data, sink->len)) {
		fail("the trace cannot be read for the ledger", NULL);
	} else {
		lin_joiner_finish(v);
		if (lin_explain_build(x, v) != 0) {
			fail("lin_explain_build", NULL);
		} else {
			const struct lin_xsummary *s = lin_explain_summary(x);
			printf("gpu_live: lineage-explain: %llu of %llu GPU records explained, %llu "
			       "without a start; dependency_ready inferred %llu, unknown %llu; "
			       "submitted observed %llu\n",
			       (unsigned long long)s->explained, (unsigned long long)s->gpu_records,
			       (unsigned long long)s->no_start,
			       (unsigned long long)s->marks[LIN_M_DEP_READY][LIN_EV_INFERRED],
			       (unsigned long long)s->marks[LIN_M_DEP_READY][LIN_EV_UNKNOWN],
			       (unsigned long long)s->marks[LIN_M_SUBMITTED][LIN_EV_OBSERVED]);
			for (size_t i = 0; i < lin_explain_count(x); i++) {
				const struct lin_xlaunch *l = lin_explain_at(x, i);
				if (l->m[LIN_M_DEP_READY].how == LIN_HOW_EVENT_WAIT)
					printf("gpu_live: correlation %llu ready after the event's work "
					       "(event_wait)\n",
					       (unsigned long long)l->corr);
			}
			if (s->explained != s->gpu_records || s->no_start)
				fail("not every GPU record has a ledger with a known start", NULL);
		}
	}
	lin_joiner_free(v);
	lin_explain_free(x);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The clock pairs' widths (host read after minus before the CUPTI read), in ns. */
static void print_pairs(const struct tr_trace *tr)
{
	uint64_t w[4096];
	size_t n = 0;

	for (size_t i = 0; i < tr->n && n < 4096; i++)
		if (tr_type(tr, i) == LIN_REC_CLOCK && !tr_is_nil(tr, i, 3))
			w[n++] = tr_u(tr, i, 3) - tr_u(tr, i, 1);
	if (!n) {
		fail("no clock pair with both host reads in the trace", NULL);
		return;
	}
	qsort(w, n, sizeof(w[0]), cmp_u64);
	printf("gpu_live: %zu clock pairs, width ns min %llu median %llu max %llu\n", n,
	       (unsigned long long)w[0], (unsigned long long)w[n / 2], (unsigned long long)w[n - 1]);
}

static void check_trace(const struct tr_sink *sink)
{
	static struct tr_trace tr;
	struct lin_joiner *v = lin_joiner_create(NULL);
	char cupti[256];
	size_t queued = 0;

	tr_load(&tr, sink->data, sink->len);
	if (!tr_header_str(&tr, "cupti", cupti, sizeof(cupti)) || strncmp(cupti, "ok", 2) != 0)
		fail("the header's cupti status is not ok", cupti);
	for (size_t i = 0; i < tr.n; i++)
		queued += tr_type(&tr, i) == LIN_REC_KERNEL && !tr_is_nil(&tr, i, 11);
	char clk[32] = "";
	const char *want = own_clock ? "cupti" : "host";
	if (!tr_header_str(&tr, "device_clock", clk, sizeof(clk)) || strcmp(clk, want) != 0)
		fail(own_clock ? "the header's device_clock is not \"cupti\" (LIN_CUPTI_OWN_CLOCK)"
			       : "the header's device_clock is not \"host\" (timestamp callback)",
		     clk);
	print_pairs(&tr);
	printf("gpu_live: header cupti \"%s\", device_clock \"%s\"; %zu kernel records, %zu "
	       "with queued set (latency timestamps requested)\n",
	       cupti, clk, tr_count(&tr, LIN_REC_KERNEL), queued);
	/* The event recording and the wait that names it. */
	size_t waits = 0, named = 0;
	for (size_t i = 0; i < tr.n; i++) {
		/* Field 0 is the type: a sync record's type is field 2, its sync id field 8; a
		 * cuda_event record's sync id is field 6 (docs/trace-format.md). */
		if (tr_type(&tr, i) != LIN_REC_SYNC || tr_u(&tr, i, 2) != LIN_SYNC_STREAM_WAIT_EVENT)
			continue;
		waits++;
		for (size_t j = 0; j < tr.n && !tr_is_nil(&tr, i, 8); j++)
			named += tr_type(&tr, j) == LIN_REC_CUDA_EVENT && !tr_is_nil(&tr, j, 6) &&
				 tr_u(&tr, j, 6) == tr_u(&tr, i, 8);
	}
	printf("gpu_live: %zu cuda_event records, %zu stream-wait sync records, %zu naming a "
	       "recorded event's sync id\n",
	       tr_count(&tr, LIN_REC_CUDA_EVENT), waits, named);
	if (!tr_count(&tr, LIN_REC_CUDA_EVENT) || !waits || !named)
		fail("no cuda_event record, no stream-wait sync record, or none naming the other", NULL);
	tr_free(&tr);
	explain(sink);
	if (!v || lin_joiner_add_mem(v, "gpu_live", sink->data, sink->len)) {
		fail("the trace cannot be read", NULL);
		lin_joiner_free(v);
		return;
	}
	lin_joiner_finish(v);
	const struct lin_join_summary *s = lin_joiner_summary(v);
	printf("gpu_live: lineage-validate: %llu GPU records, %llu observed, %llu lost, exit %d\n",
	       (unsigned long long)s->gpu_records, (unsigned long long)s->observed,
	       (unsigned long long)s->lost, lin_joiner_exit_code(v));
	printf("gpu_live: bracket check: %llu API calls decided inside their launch brackets, "
	       "%llu undecided (device_clock %s)\n",
	       (unsigned long long)s->bracket_checked, (unsigned long long)s->bracket_unchecked,
	       own_clock ? "cupti" : "host");
	/* On the host clock the check is exact; under CUPTI's clock what it decides is
	 * reported (docs/cupti.md, "Clocks"), not required. */
	if (!own_clock && s->bracket_checked < N_KERNELS)
		fail("CUPTI's API records were not checked against their brackets", NULL);
	if (s->gpu_records < N_KERNELS + 3 || s->observed != s->gpu_records ||
	    lin_joiner_exit_code(v) != 0) {
		lin_validator_report_text(v, stderr);
		fail("not every GPU record joined its epoch", NULL);
	}
	lin_joiner_free(v);
}

/* A GPU is visible: the driver's control node exists, or the caller (tests/gpu/run.sh, which
 * asked nvidia-smi) says so with LIN_GPU_VISIBLE=1. */
static bool gpu_visible(void)
{
	const char *e = getenv("LIN_GPU_VISIBLE");

	return access("/dev/nvidiactl", F_OK) == 0 || (e && !strcmp(e, "1"));
}

static bool save(const struct tr_sink *sink, const char *path)
{
	FILE *f = fopen(path, "wb");
	bool ok = f && fwrite(sink->data, 1, sink->len, f) == sink->len;

	if (f && fclose(f) != 0)
		ok = false;
	if (!ok)
		fail("cannot write the trace to", path);
	return ok;
}

/* --check FILE: the checks on a trace a GPU run saved (no GPU needed). */
static int check_file(const char *path)
{
	struct tr_sink sink;
	char buf[65536];
	size_t n;
	FILE *f = fopen(path, "rb");

	if (!f) {
		fail("cannot read", path);
		return 1;
	}
	tr_sink_init(&sink);
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		tr_sink_write(buf, n, &sink);
	fclose(f);
	check_trace(&sink);
	tr_sink_fini(&sink);
	if (failures)
		return 1;
	printf("gpu_live: ok (%s)\n", path);
	return 0;
}

int main(int argc, char **argv)
{
	struct tr_sink sink;
	lin_runtime *rt = NULL;
	const char *out = NULL, *in = NULL;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--own-clock")) {
			own_clock = true;
		} else if (!strcmp(argv[i], "--trace") && i + 1 < argc) {
			out = argv[++i];
		} else if (!strcmp(argv[i], "--check") && i + 1 < argc) {
			in = argv[++i];
		} else {
			fprintf(stderr, "usage: test_cupti_gpu_live [--own-clock] [--trace FILE | "
					"--check FILE]\n");
			return 2;
		}
	}
	if (in)
		return check_file(in);
	if (!gpu_visible()) {
		printf("gpu_live: skipped: no GPU visible (no /dev/nvidiactl, LIN_GPU_VISIBLE unset)\n");
		return 77;
	}
	tr_sink_init(&sink);
	struct lin_runtime_opts o = { .sz = sizeof(o),
				      .trace_write = tr_sink_write,
				      .trace_user = &sink,
				      .backend = LIN_BACKEND_CUPTI,
				      .cupti_flags = LIN_CUPTI_LATENCY_TIMESTAMPS |
						     (own_clock ? LIN_CUPTI_OWN_CLOCK : 0) };
	/* Before CUDA: latency timestamps must be asked for before CUDA is initialised. */
	if (lin_runtime_create(&o, &rt) != 0) {
		fail("lin_runtime_create", NULL);
		return 1;
	}
	bool ran = load_driver() && run_work(rt);
	lin_runtime_free(rt);
	if (out)
		save(&sink, out);
	if (ran)
		check_trace(&sink);
	tr_sink_fini(&sink);
	if (failures)
		return 1;
	printf("gpu_live: ok\n");
	return 0;
}
