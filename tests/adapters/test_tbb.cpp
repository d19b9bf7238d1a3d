// SPDX-License-Identifier: MIT
/*
 * test_tbb.cpp - lineage::tbb: several threads submit to task_group (run and defer) and to a
 * shared task_arena (enqueue and execute); one batched launch serves two requests (a fan-in
 * epoch). Every launch must carry an epoch whose requests are the submitter's.
 * Usage: test_tbb LINEAGE_VALIDATE
 */
#include <atomic>
#include <stdexcept>
#include <string>
#include <memory>
#include <thread>
#include <vector>

#include <oneapi/tbb/global_control.h>

#include <lineage/adapters/tbb.hpp>

#include "sim.h"
#include "workload.hpp"

using wl::require;

namespace {

constexpr int submitters = 4, per = 30;

void submit_task_group(sim *s, std::atomic<int> &foreign)
{
	lin_runtime *rt = sim_rt(s);
	lineage::request r(rt, "tbb_request");
	lineage::scope rs = r.enter();
	std::vector<lineage::epoch> eps;
	eps.reserve(per);
	auto me = std::this_thread::get_id();
	lineage::tbb::task_group tg(rt);
	std::vector<::tbb::task_handle> deferred;
	for (int k = 0; k < per; k++) {
		eps.emplace_back(rt, "tbb_step");
		lineage::scope es = eps.back().enter();
		auto body = [s, id = r.id(), me, &foreign, p = std::make_shared<int>(k)] {
			foreign += std::this_thread::get_id() != me;
			wl::launch(s, { id });
		};
		if (k % 3 == 0)
			deferred.push_back(tg.defer(body)); /* captured now, run later */
		else
			tg.run(body);
	}
	for (auto &h : deferred)
		tg.run(std::move(h));
	require(tg.wait() == ::tbb::task_group_status::complete, "task_group completed");
}

void submit_arena(sim *s, ::tbb::task_arena &arena, std::atomic<int> &foreign)
{
	lin_runtime *rt = sim_rt(s);
	lineage::request r(rt, "arena_request");
	lineage::scope rs = r.enter();
	std::vector<lineage::epoch> eps;
	eps.reserve(per + 1);
	std::atomic<int> done{ 0 };
	for (int k = 0; k < per; k++) {
		eps.emplace_back(rt, "arena_step");
		lineage::scope es = eps.back().enter();
		lineage::tbb::enqueue(
			arena, rt, [s, id = r.id(), &done, &foreign, me = std::this_thread::get_id()] {
				foreign += std::this_thread::get_id() != me;
				wl::launch(s, { id });
				done++;
			});
	}
	eps.emplace_back(rt, "arena_execute");
	lineage::scope es = eps.back().enter();
	int got = lineage::tbb::execute(arena, rt, [s, id = r.id()] {
		wl::launch(s, { id });
		return 7;
	});
	require(got == 7, "execute returns the body's result");
	while (done.load() < per)
		std::this_thread::yield();
}

/* Two requests batched into one launch: the epoch serves both. */
void fan_in(sim *s)
{
	lin_runtime *rt = sim_rt(s);
	lineage::request a(rt, "a"), b(rt, "b");
	lineage::epoch batch(rt, { a.id(), b.id() }, "batched");
	lineage::scope es = batch.enter();
	::tbb::task_group tg;
	lineage::tbb::run(tg, rt, [s, ida = a.id(), idb = b.id()] { wl::launch(s, { ida, idb }); });
	tg.wait();
}

} // namespace

/* The adapter never refuses the work (lineage.hpp, "Errors"): from a thread with no context
 * the task runs with none; a task deferred under an epoch retired before it runs runs late
 * under that epoch; the user's own exception reaches the caller unchanged. No deferred error
 * (the strict handler aborts on one), and the runtime counts both. */
void never_refuses(sim *s)
{
	lin_runtime *rt = sim_rt(s);
	lin_runtime_stats before = wl::stats(rt);
	lineage::tbb::task_group tg(rt);
	std::atomic<int> ran{ 0 };
	std::atomic<std::uint64_t> seen{ ~0ull };
	tg.run([&] {
		ran++;
		seen = wl::current(rt);
	});
	require(tg.wait() == ::tbb::task_group_status::complete && ran == 1 && seen == 0,
		"tbb: no context: the task runs with none");
	std::uint64_t ep = 0;
	::tbb::task_handle h;
	{
		lineage::request r(rt, "late");
		lineage::epoch e(rt, { r.id() });
		lineage::scope es = e.enter();
		ep = e.id();
		h = tg.defer([&] {
			ran++;
			seen = wl::current(rt);
		});
	} /* the epoch is retired before the task runs */
	tg.run(std::move(h));
	require(tg.wait() == ::tbb::task_group_status::complete && ran == 2 && seen == ep,
		"tbb: a retired epoch's task runs late, under that epoch");
	bool caught = false;
	tg.run([] { throw std::runtime_error("the user's own"); });
	try {
		tg.wait();
	} catch (const std::runtime_error &e) {
		caught = std::string(e.what()) == "the user's own";
	}
	require(caught, "tbb: the user's exception, unchanged");
	lin_runtime_stats after = wl::stats(rt);
	require(after.captures_without_context > before.captures_without_context &&
			after.late_adopts > before.late_adopts,
		"tbb: counted");
}

int main(int argc, char **argv)
{
	require(argc == 2, "usage: test_tbb LINEAGE_VALIDATE");
	lineage::set_error_handler(wl::strict_handler);
	::tbb::global_control gc(::tbb::global_control::max_allowed_parallelism, 4);
	sim *s = sim_open();
	std::atomic<int> foreign{ 0 };
	::tbb::task_arena arena(2);
	{
		std::vector<std::thread> th;
		for (int i = 0; i < submitters; i++)
			th.emplace_back([&, i] {
				if (i % 2)
					submit_arena(s, arena, foreign);
				else
					submit_task_group(s, foreign);
			});
		for (auto &t : th)
			t.join();
	}
	fan_in(s);
	never_refuses(s);
	std::printf("tasks run by a thread other than their submitter: %d\n", foreign.load());
	require(foreign.load() > 0, "some tasks ran on a thread other than their submitter");
	int launches = (submitters / 2) * per + (submitters / 2) * (per + 1) + 1;
	return sim_finish(s, argv[1], "tbb", (std::size_t)launches);
}
