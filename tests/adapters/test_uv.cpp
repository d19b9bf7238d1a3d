// SPDX-License-Identifier: MIT
/*
 * test_uv.cpp - lineage::uv::queue_work: several threads, each running its own uv loop,
 * queue work on libuv's shared threadpool; every work callback and every after-work callback
 * launches under the submitting request. A second case hands pre-captured tokens from
 * producer threads to one loop thread through uv_async_send.
 * Usage: test_uv LINEAGE_VALIDATE
 */
#include <atomic>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include <lineage/adapters/uv.hpp>

#include "sim.h"
#include "workload.hpp"

using wl::require;

namespace {

constexpr int loops = 4, per = 40;

/* One submitting thread: its own loop, its own request, one epoch per work item. The loops
 * are made and closed on the main thread: ThreadSanitizer does not see the kernel order
 * between one thread closing a loop's epoll descriptor and another creating one with the
 * same number, and would report that reuse as a race inside libuv. */
void submitter(sim *s, uv_loop_t *loop, std::atomic<int> &after_on_loop_thread)
{
	lin_runtime *rt = sim_rt(s);
	lineage::request r(rt, "uv_request");
	lineage::scope rs = r.enter();
	std::vector<lineage::epoch> eps;
	eps.reserve(per);
	auto loop_thread = std::this_thread::get_id();
	for (int k = 0; k < per; k++) {
		eps.emplace_back(rt, "uv_step");
		lineage::scope es = eps.back().enter();
		auto payload = std::make_unique<int>(k); /* move-only work */
		int err = lineage::uv::queue_work(
			loop, rt, [s, id = r.id(), p = std::move(payload)] { wl::launch(s, { id }); },
			[s, id = r.id(), loop_thread, &after_on_loop_thread](int status) {
				require(status == 0, "work completed");
				after_on_loop_thread += std::this_thread::get_id() == loop_thread;
				wl::launch(s, { id });
			});
		require(err == 0, "uv_queue_work");
	}
	require(uv_run(loop, UV_RUN_DEFAULT) == 0, "uv_run");
}

/* Producers capture tokens and hand them to the loop thread, which queues the work. */
struct handoff {
	std::mutex mu;
	std::vector<std::pair<lineage::token, std::uint64_t>> q;
	uv_async_t async;
	std::atomic<int> done{ 0 };
	std::atomic<bool> stop{ false };
	int expected = 0;
	sim *s = nullptr;
};

void drain(uv_async_t *a)
{
	auto *h = static_cast<handoff *>(a->data);
	std::vector<std::pair<lineage::token, std::uint64_t>> batch;
	{
		std::lock_guard<std::mutex> g(h->mu);
		batch.swap(h->q);
	}
	for (auto &[tok, id] : batch) {
		/* The loop thread has no context of its own: the token says whose work it is. */
		int err = lineage::uv::queue_work(
			a->loop, sim_rt(h->s), tok, [h, id = id] { wl::launch(h->s, { id }); },
			[h, id = id](int) {
				wl::launch(h->s, { id });
				h->done++;
			});
		require(err == 0, "uv_queue_work (handoff)");
	}
	if (h->stop.load())
		uv_close(reinterpret_cast<uv_handle_t *>(&h->async), nullptr);
}

int tokens_handed_to_the_loop_thread(const char *validator)
{
	sim *s = sim_open();
	lin_runtime *rt = sim_rt(s);
	handoff h;
	h.s = s;
	h.expected = 3 * per;
	uv_loop_t loop;
	require(uv_loop_init(&loop) == 0, "uv_loop_init");
	require(uv_async_init(&loop, &h.async, drain) == 0, "uv_async_init");
	h.async.data = &h;
	std::thread loop_thread([&] { uv_run(&loop, UV_RUN_DEFAULT); });
	std::vector<std::thread> producers;
	for (int i = 0; i < 3; i++)
		producers.emplace_back([&] {
			lineage::request r(rt, "producer");
			lineage::scope rs = r.enter();
			std::vector<lineage::epoch> eps;
			eps.reserve(per);
			for (int k = 0; k < per; k++) {
				eps.emplace_back(rt, "step");
				lineage::scope es = eps.back().enter();
				{
					std::lock_guard<std::mutex> g(h.mu);
					h.q.emplace_back(lineage::token::capture(rt), r.id());
				}
				uv_async_send(&h.async);
			}
			while (h.done.load() < h.expected) /* epochs stay live until their work ran */
				std::this_thread::yield();
		});
	for (auto &t : producers)
		t.join();
	h.stop = true; /* every send is done and every work item has run */
	uv_async_send(&h.async);
	loop_thread.join();
	require(uv_loop_close(&loop) == 0, "uv_loop_close");
	return sim_finish(s, validator, "uv_handoff", 2 * 3 * per);
}

} // namespace

/* The adapter never refuses the work (lineage.hpp, "Errors"): queued from a thread with no
 * context, both callbacks run with none; queued with the token of an epoch retired before,
 * both run late under that epoch. No deferred error, both counted. */
void never_refuses(sim *s)
{
	lin_runtime *rt = sim_rt(s);
	lin_runtime_stats before = wl::stats(rt);
	uv_loop_t loop;
	require(uv_loop_init(&loop) == 0, "uv_loop_init");
	std::atomic<int> ran{ 0 };
	std::atomic<std::uint64_t> seen[4] = { { ~0ull }, { ~0ull }, { ~0ull }, { ~0ull } };
	require(lineage::uv::queue_work(
			&loop, rt, [&] { seen[0] = wl::current(rt), ran++; },
			[&](int) { seen[1] = wl::current(rt), ran++; }) == 0,
		"queue_work with no context");
	lineage::token t;
	std::uint64_t ep = 0;
	{
		lineage::request r(rt, "late");
		lineage::epoch e(rt, { r.id() });
		lineage::scope es = e.enter();
		ep = e.id();
		t = lineage::token::capture(rt);
	} /* retired before the work is queued */
	require(lineage::uv::queue_work(
			&loop, rt, t, [&] { seen[2] = wl::current(rt), ran++; },
			[&](int) { seen[3] = wl::current(rt), ran++; }) == 0,
		"queue_work with a retired epoch's token");
	require(uv_run(&loop, UV_RUN_DEFAULT) == 0, "uv_run");
	require(uv_loop_close(&loop) == 0, "uv_loop_close");
	require(ran == 4, "uv: every callback ran");
	require(seen[0] == 0 && seen[1] == 0, "uv: no context: the callbacks run with none");
	require(seen[2] == ep && seen[3] == ep, "uv: a retired epoch's work runs late, under it");
	lin_runtime_stats after = wl::stats(rt);
	require(after.captures_without_context > before.captures_without_context &&
			after.late_adopts > before.late_adopts,
		"uv: counted");
}

int main(int argc, char **argv)
{
	require(argc == 2, "usage: test_uv LINEAGE_VALIDATE");
	lineage::set_error_handler(wl::strict_handler);
	sim *s = sim_open();
	std::atomic<int> after_on_loop{ 0 };
	std::vector<uv_loop_t> lp(loops);
	for (auto &l : lp)
		require(uv_loop_init(&l) == 0, "uv_loop_init");
	std::vector<std::thread> th;
	for (int i = 0; i < loops; i++)
		th.emplace_back(submitter, s, &lp[i], std::ref(after_on_loop));
	for (auto &t : th)
		t.join();
	for (auto &l : lp)
		require(uv_loop_close(&l) == 0, "uv_loop_close");
	require(after_on_loop == loops * per, "after-work callbacks ran on the loop threads");
	never_refuses(s);
	int rc = sim_finish(s, argv[1], "uv_loops", 2 * loops * per);
	return rc | tokens_handed_to_the_loop_thread(argv[1]);
}
