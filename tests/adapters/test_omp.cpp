// SPDX-License-Identifier: MIT
/*
 * test_omp.cpp - lineage::omp: (1) in a parallel region every thread creates tasks under its
 * own request; (2) one thread (omp single) creates tasks for several requests and the team
 * runs them, so tasks created by one thread run on others; both the explicit
 * capture/task_scope form and lineage::omp::task with a move-only body.
 * Usage: test_omp LINEAGE_VALIDATE
 */
#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>
#include <memory>
#include <vector>

#include <omp.h>

#include <lineage/adapters/omp.hpp>

#include "sim.h"
#include "workload.hpp"

using wl::require;

namespace {

constexpr int threads = 4, per = 30, single_requests = 3;

void every_thread_submits(sim *s)
{
	lin_runtime *rt = sim_rt(s);
#pragma omp parallel num_threads(threads)
	{
		lineage::request r(rt, "omp_request");
		lineage::scope rs = r.enter();
		std::vector<lineage::epoch> eps;
		eps.reserve(per);
		for (int k = 0; k < per; k++) {
			eps.emplace_back(rt, "omp_step");
			lineage::scope es = eps.back().enter();
			if (k % 2) {
				lineage::token t = lineage::token::capture(rt);
				std::uint64_t id = r.id();
#pragma omp task firstprivate(t, id)
				{
					lineage::omp::task_scope ts(rt, t);
					wl::launch(s, { id });
				}
			} else {
				lineage::omp::task(rt, [s, id = r.id(), p = std::make_unique<int>(k)] {
					wl::launch(s, { id });
				});
			}
		}
#pragma omp taskwait
	}
}

int one_thread_creates(sim *s)
{
	lin_runtime *rt = sim_rt(s);
	std::atomic<int> elsewhere{ 0 };
#pragma omp parallel num_threads(threads)
#pragma omp single
	{
		int creator = omp_get_thread_num();
		std::vector<lineage::request> reqs;
		std::vector<lineage::epoch> eps;
		reqs.reserve(single_requests);
		eps.reserve(single_requests * per);
		for (int q = 0; q < single_requests; q++) {
			reqs.emplace_back(rt, "single_request");
			lineage::scope rs = reqs.back().enter();
			for (int k = 0; k < per; k++) {
				eps.emplace_back(rt, "single_step");
				lineage::scope es = eps.back().enter();
				lineage::omp::task(rt, [s, id = reqs.back().id(), creator, &elsewhere] {
					elsewhere += omp_get_thread_num() != creator;
					wl::launch(s, { id });
					/* Give the rest of the team time to take tasks. */
					std::this_thread::sleep_for(std::chrono::microseconds(200));
				});
			}
		}
#pragma omp taskwait
	}
	std::printf("tasks run by a thread other than their creator: %d of %d\n", elsewhere.load(),
		    single_requests * per);
	return elsewhere.load();
}

/* The adapter never refuses the work (lineage.hpp, "Errors"): task() on a thread with no
 * context creates the task, run with none; task_scope adopts a token whose epoch retired
 * before the task ran late, under that epoch. No deferred error, both counted. */
void never_refuses(sim *s)
{
	lin_runtime *rt = sim_rt(s);
	lin_runtime_stats before = wl::stats(rt);
	std::atomic<int> ran{ 0 };
	std::atomic<std::uint64_t> none{ ~0ull }, late{ 0 };
	std::uint64_t ep = 0;
#pragma omp parallel num_threads(2)
#pragma omp single
	{
		lineage::omp::task(rt, [&] {
			ran++;
			none = wl::current(rt);
		});
		lineage::token t;
		{
			lineage::request r(rt, "late");
			lineage::epoch e(rt, { r.id() });
			lineage::scope es = e.enter();
			ep = e.id();
			t = lineage::token::capture(rt);
		} /* the epoch is retired before the task is even created */
#pragma omp task firstprivate(t)
		{
			lineage::omp::task_scope ts(rt, t);
			ran++;
			late = wl::current(rt);
		}
#pragma omp taskwait
	}
	require(ran == 2 && none == 0, "omp: no context: the task runs with none");
	require(late == ep, "omp: a retired epoch's task runs late, under that epoch");
	lin_runtime_stats after = wl::stats(rt);
	require(after.captures_without_context > before.captures_without_context &&
			after.late_adopts > before.late_adopts,
		"omp: counted");
}

} // namespace

int main(int argc, char **argv)
{
	require(argc == 2, "usage: test_omp LINEAGE_VALIDATE");
	lineage::set_error_handler(wl::strict_handler);
	sim *s = sim_open();
	every_thread_submits(s);
	int rc = 0;
	if (one_thread_creates(s) == 0) {
		std::fprintf(stderr, "FAIL: no task ran on a thread other than its creator\n");
		rc = 1;
	}
	never_refuses(s);
	rc |= sim_finish(s, argv[1], "omp", (std::size_t)(threads * per + single_requests * per));
	return rc;
}
