/* SPDX-License-Identifier: MIT */
/*
 * layer_exit_main.c - a process that exits without lin_runtime_free keeps its GPU records:
 * the live binding flushes CUPTI's buffers (normal, then forced) into the trace at exit.
 * A plain process (no Criterion, whose own exit handlers a child would run): it forks
 * before any thread exists; the child runs, exits with exit(0); the parent reads the
 * trace. Under the test CUPTI layer. Exit status 0 when every check holds.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cupti.h>

#include "cupti_layer.h"
#include "tr_helpers.h"
#include "lineage/runtime.h"
#include "lineage/trace_format.h"

#define CHECK(c) \
	do { \
		if (!(c)) { \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #c); \
			exit(1); \
		} \
	} while (0)

static int child(const char *path)
{
	struct lin_runtime_opts o = { .sz = sizeof(o), .trace_path = path, .backend = LIN_BACKEND_CUPTI };
	struct lin_cl_config c = { .sz = sizeof(c) };
	lin_runtime *rt = NULL;
	lin_scope sc;
	uint64_t req, ep;

	CHECK(lin_cl_configure(&c) == 0);
	CHECK(lin_cupti_use_api(lin_cl_cupti_api()) == 0);
	CHECK(lin_runtime_create(&o, &rt) == 0);
	CHECK(lin_request_begin(rt, NULL, &req) == 0);
	struct lin_epoch_opts eo = { .sz = sizeof(eo), .requests = &req, .n_requests = 1 };
	CHECK(lin_epoch_declare(rt, &eo, &ep) == 0);
	CHECK(lin_scope_enter(rt, ep, &sc) == 0);
	for (int i = 1; i <= 3; i++) {
		lin_launch l;
		CUpti_ActivityKernel10 k;
		struct lin_cl_call call = {
			.cbid = CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000,
			.driver_cbid = CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
		};

		CHECK(lin_launch_begin(rt, "k", &l) == 0);
		struct lin_cl_corr corr = lin_cl_api(&call);
		CHECK(lin_launch_end(rt, &l) == 0);
		memset(&k, 0, sizeof(k));
		k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
		k.gridId = i;
		lin_cl_gpu(&k, sizeof(k), corr);
	}
	exit(0); /* atexit handlers run; the runtime is never freed */
}

int main(void)
{
	char path[] = "/tmp/lin_layer_exit_XXXXXX";
	static char data[1 << 16];
	static struct tr_trace tr;
	int status = 0, fd = mkstemp(path);

	CHECK(fd >= 0);
	close(fd);
	pid_t pid = fork();
	CHECK(pid >= 0);
	if (pid == 0)
		return child(path);
	CHECK(waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	FILE *f = fopen(path, "rb");
	CHECK(f != NULL);
	size_t n = fread(data, 1, sizeof(data), f);
	fclose(f);
	unlink(path);
	tr_load(&tr, data, n);
	CHECK(tr.truncated_at == 0);
	CHECK(tr_count(&tr, LIN_REC_KERNEL) == 3);    /* flushed at exit */
	CHECK(tr_count(&tr, LIN_REC_TRACE_END) == 0); /* the runtime was never closed */
	tr_free(&tr);
	printf("layer exit: ok (3 kernels in the trace of a process that never closed it)\n");
	return 0;
}
