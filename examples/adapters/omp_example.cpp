// SPDX-License-Identifier: MIT
/*
 * omp_example.cpp - OpenMP tasks created by one thread for several requests and run by the
 * team; the explicit form (capture + task_scope) and lineage::omp::task.
 * Usage: omp_example [TRACE]   (default omp_example.lintrace)
 */
#include <cstdio>
#include <vector>

#include <lineage/adapters/omp.hpp>

static void launch_kernel(lin_runtime *rt, const char *name)
{
	lineage::launch_guard g(rt, name);
	// cudaLaunchKernel(...) would go here.
}

int main(int argc, char **argv)
{
	struct lin_runtime_opts o {};
	o.sz = sizeof(o);
	o.trace_path = argc > 1 ? argv[1] : "omp_example.lintrace";
	o.backend = LIN_BACKEND_CUPTI;
	lin_runtime *rt;
	if (int err = lin_runtime_create(&o, &rt)) {
		std::fprintf(stderr, "lin_runtime_create: %s\n", lin_strerror(err));
		return 1;
	}
	int failed = 0;
#pragma omp parallel num_threads(4)
#pragma omp single
	try {
		std::vector<lineage::request> requests;
		std::vector<lineage::epoch> epochs;
		requests.reserve(4);
		epochs.reserve(8);
		for (int i = 0; i < 4; i++) {
			requests.emplace_back(rt, "request");
			lineage::scope rs = requests.back().enter();

			epochs.emplace_back(rt, "prefill");
			{
				lineage::scope es = epochs.back().enter();
				lineage::token t = lineage::token::capture(rt);
#pragma omp task firstprivate(t)
				{
					lineage::omp::task_scope ts(rt, t);
					launch_kernel(rt, "prefill");
				}
			}
			epochs.emplace_back(rt, "sample");
			lineage::scope es = epochs.back().enter();
			lineage::omp::task(rt, [rt] { launch_kernel(rt, "sample"); });
		}
#pragma omp taskwait
	} catch (const lineage::error &e) {
		std::fprintf(stderr, "lineage: %s\n", e.what());
		failed = 1;
	}
	lin_runtime_free(rt);
	if (!failed)
		std::printf("omp_example: trace written to %s\n", o.trace_path);
	return failed ? 2 : 0;
}
