// SPDX-License-Identifier: MIT
/*
 * uv_example.cpp - a libuv server loop that offloads each request's GPU work to libuv's
 * threadpool with lineage::uv::queue_work. The work callback and the after-work callback
 * both run under the request's epoch, on threads the program never sees.
 * Usage: uv_example [TRACE]   (default uv_example.lintrace; check it with lineage-validate)
 */
#include <cstdio>
#include <vector>

#include <lineage/adapters/uv.hpp>

static void launch_kernel(lin_runtime *rt, const char *name)
{
	// The guard pushes the current epoch to CUPTI until it goes out of scope.
	lineage::launch_guard g(rt, name);
	// cudaLaunchKernel(...) would go here.
}

int main(int argc, char **argv)
{
	struct lin_runtime_opts o {};
	o.sz = sizeof(o);
	o.trace_path = argc > 1 ? argv[1] : "uv_example.lintrace";
	o.backend = LIN_BACKEND_CUPTI; // host-side lineage only when no GPU driver is present
	lin_runtime *rt;
	if (int err = lin_runtime_create(&o, &rt)) {
		std::fprintf(stderr, "lin_runtime_create: %s\n", lin_strerror(err));
		return 1;
	}
	uv_loop_t *loop = uv_default_loop();
	try {
		std::vector<lineage::request> requests;
		std::vector<lineage::epoch> epochs;
		for (int i = 0; i < 8; i++) {
			requests.emplace_back(rt, "http_request");
			lineage::scope rs = requests.back().enter();
			epochs.emplace_back(rt, "inference");
			lineage::scope es = epochs.back().enter();
			// Captured here, adopted in both callbacks.
			int err = lineage::uv::queue_work(
				loop, rt, [rt] { launch_kernel(rt, "forward"); },
				[rt](int status) {
					if (status == 0)
						launch_kernel(rt, "postprocess");
				});
			if (err)
				std::fprintf(stderr, "uv_queue_work: %s\n", uv_strerror(err));
		}
		uv_run(loop, UV_RUN_DEFAULT); // epochs and requests stay live until their work ran
	} catch (const lineage::error &e) {
		std::fprintf(stderr, "lineage: %s\n", e.what());
		lin_runtime_free(rt);
		return 2;
	}
	uv_loop_close(loop);
	lin_runtime_free(rt);
	std::printf("uv_example: trace written to %s\n", o.trace_path);
	return 0;
}
