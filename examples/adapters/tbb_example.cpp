// SPDX-License-Identifier: MIT
/*
 * tbb_example.cpp - a oneTBB pipeline: each request's ops run as tasks of a
 * lineage::tbb::task_group, and a batch of requests shares one launch (a fan-in epoch)
 * enqueued into a task_arena.
 * Usage: tbb_example [TRACE]   (default tbb_example.lintrace)
 */
#include <cstdio>
#include <vector>

#include <lineage/adapters/tbb.hpp>

static void launch_kernel(lin_runtime *rt, const char *name)
{
	lineage::launch_guard g(rt, name);
	// cudaLaunchKernel(...) would go here.
}

int main(int argc, char **argv)
{
	struct lin_runtime_opts o {};
	o.sz = sizeof(o);
	o.trace_path = argc > 1 ? argv[1] : "tbb_example.lintrace";
	o.backend = LIN_BACKEND_CUPTI;
	lin_runtime *rt;
	if (int err = lin_runtime_create(&o, &rt)) {
		std::fprintf(stderr, "lin_runtime_create: %s\n", lin_strerror(err));
		return 1;
	}
	try {
		std::vector<lineage::request> requests;
		std::vector<lineage::epoch> epochs;
		lineage::tbb::task_group tg(rt);
		for (int i = 0; i < 4; i++) {
			requests.emplace_back(rt, "request");
			lineage::scope rs = requests.back().enter();
			for (const char *op : { "embed", "attention", "mlp" }) {
				epochs.emplace_back(rt, op); // one epoch per op: fan-out
				lineage::scope es = epochs.back().enter();
				tg.run([rt, op] { launch_kernel(rt, op); });
			}
		}
		tg.wait();

		// Batching: one launch serves every request (fan-in).
		std::vector<std::uint64_t> ids;
		for (auto &r : requests)
			ids.push_back(r.id());
		lineage::epoch batch(rt, ids.data(), ids.size(), "batched_decode");
		lineage::scope bs = batch.enter();
		tbb::task_arena arena(2);
		lineage::tbb::execute(arena, rt, [rt] { launch_kernel(rt, "decode"); });
	} catch (const lineage::error &e) {
		std::fprintf(stderr, "lineage: %s\n", e.what());
		lin_runtime_free(rt);
		return 2;
	}
	lin_runtime_free(rt);
	std::printf("tbb_example: trace written to %s\n", o.trace_path);
	return 0;
}
