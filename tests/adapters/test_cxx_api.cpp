// SPDX-License-Identifier: MIT
/*
 * test_cxx_api.cpp - lineage.hpp: RAII scopes and guards, errors (thrown, returned, deferred),
 * wrap with move-only callables and arguments, and wrap on a plain std::thread pool checked
 * through the trace and lineage-validate.
 * Built with -std=c++17 -Wall -Wextra -Wshadow -Wpedantic -Werror.
 * Usage: test_cxx_api LINEAGE_VALIDATE
 */
#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include <lineage.hpp>

#include "sim.h"
#include "workload.hpp"

using wl::require;

namespace {

std::atomic<int> g_deferred_calls{ 0 };
std::error_code g_last;
void counting_handler(const std::error_code &ec, const char *) noexcept
{
	g_last = ec;
	g_deferred_calls++;
}

lin_runtime *plain_runtime()
{
	lin_runtime *rt = nullptr;
	require(lin_runtime_create(nullptr, &rt) == 0, "lin_runtime_create");
	return rt;
}

std::uint64_t current(lin_runtime *rt)
{
	std::uint64_t id = 0;
	return lin_scope_current(rt, nullptr, &id, nullptr) == 0 ? id : 0;
}

void scope_is_raii_and_move_only(lin_runtime *rt)
{
	static_assert(!std::is_copy_constructible_v<lineage::scope>);
	static_assert(std::is_nothrow_move_constructible_v<lineage::scope>);
	static_assert(!std::is_copy_constructible_v<lineage::launch_guard>);
	static_assert(std::is_trivially_copyable_v<lineage::token>);
	lineage::request r(rt, "raii");
	{
		lineage::scope s = r.enter();
		require(current(rt) == r.id(), "request current inside the scope");
		lineage::scope moved(std::move(s));
		require(!s.is_open() && moved.is_open(), "move transfers the open scope");
	}
	require(current(rt) == 0, "closed by the destructor");
	lineage::scope s = r.enter();
	require(!s.close(), "explicit close");
	require(!s.close(), "closing an empty scope is a no-op");
	require(current(rt) == 0, "closed");

	lineage::scope outer = r.enter();
	lineage::epoch e(rt);
	lineage::scope inner = e.enter();
	require(lineage::is(outer.close(), LIN_ESCOPE_ORDER) && outer.is_open(),
		"out-of-order close is refused and the scope stays open");
	require(!inner.close() && !outer.close(), "closing in order then succeeds");
	require(current(rt) == 0, "both closed");
}

void errors_throw_or_return(lin_runtime *rt)
{
	bool thrown = false;
	try {
		(void)lineage::token::capture(rt);
	} catch (const lineage::error &e) {
		thrown = lineage::is(e.code(), LIN_ENOCONTEXT) &&
			 e.code().message() == lin_strerror(-LIN_ENOCONTEXT);
	}
	require(thrown, "capture with no context throws LIN_ENOCONTEXT");
	std::error_code ec;
	lineage::token t = lineage::token::capture(rt, ec);
	require(lineage::is(ec, -LIN_ENOCONTEXT) && !t, "noexcept capture reports via error_code");
	/* An untraced code path handing work on: wrap never throws, the work runs with no
	 * context, no deferred error, and the runtime counts it. */
	struct lin_runtime_stats st0 = { sizeof(st0) }, st1 = { sizeof(st1) };
	lin_runtime_get_stats(rt, &st0);
	std::uint64_t deferred = lineage::deferred_errors();
	int ran = 0;
	bool threw = false;
	try {
		lineage::wrap(rt, [&] { ran += current(rt) == 0; })();
	} catch (...) {
		threw = true;
	}
	require(!threw && ran == 1, "wrap with no context runs the work with none, no throw");
	require(lineage::deferred_errors() == deferred, "and it is no error");
	lin_runtime_get_stats(rt, &st1);
	require(st1.captures_without_context > st0.captures_without_context, "counted");
	auto w = lineage::wrap(
		rt, [&] { ran++; }, ec);
	w();
	require(ec && ran == 2, "the ec overload says why and still runs the callable");
}

/* Work handed on with no context, or with a token that cannot be adopted, runs with none
 * even on a thread inside another task's scope (an inline executor, a deferred
 * std::async, work-stealing in wait()): never under that other task's context. */
void handed_on_work_never_runs_under_the_runners_context(lin_runtime *rt)
{
	lin_runtime *other = plain_runtime();
	lineage::token foreign;
	{
		lineage::request oreq(other, "other");
		lineage::scope os = oreq.enter();
		foreign = lineage::token::capture(other);
	}
	std::uint64_t seen_untraced = ~0ull, seen_foreign = ~0ull, seen_async = ~0ull, inner = 0;
	auto untraced = lineage::wrap(rt, [&] { seen_untraced = current(rt); });
	auto foreign_task = lineage::wrap(rt, foreign, [&] { seen_foreign = current(rt); });
	{
		lineage::request b(rt, "B");
		lineage::scope bs = b.enter();
		lineage::epoch e(rt, { b.id() });
		lineage::scope es = e.enter();
		untraced();
		std::async(std::launch::deferred, [&] {
			lineage::wrap(rt, [&] {})(); /* captured under B's epoch: fine */
			untraced();
			seen_async = seen_untraced;
		}).get();
		foreign_task();
		inner = current(rt);
		require(inner == e.id(), "the runner's own context is back after each task");
		lineage::token none;
		lineage::wrap(rt, none, [&] {
			lin_token tok;
			require(lin_token_capture(rt, &tok) == -LIN_ENOCONTEXT,
				"nothing to capture inside a none scope");
			lin_launch l;
			require(lin_launch_begin(rt, "k", &l) == -LIN_ENOCONTEXT,
				"a launch inside it has no context");
			lin_launch_end(rt, &l);
		})();
	}
	require(seen_untraced == 0 && seen_async == 0, "untraced work runs with no context");
	require(seen_foreign == 0, "a foreign token's work runs with no context");
	lin_runtime_free(other);
}

void deferred_errors_reach_the_handler(lin_runtime *rt)
{
	lineage::set_error_handler(counting_handler);
	std::uint64_t before = lineage::deferred_errors();
	lineage::request r(rt);
	lineage::token t;
	{
		lineage::epoch e(rt, { r.id() });
		lineage::scope es = e.enter();
		t = lineage::token::capture(rt);
	} // the epoch is retired: its token's work is late
	std::uint64_t ep = t.raw().id;
	bool ran = false;
	lineage::wrap(rt, t, [&] { ran = current(rt) == ep; })();
	require(ran, "a retired epoch's token runs the work, late, under that epoch");
	require(g_deferred_calls == 0, "late work is no error");
	bool threw = false;
	try {
		lineage::scope s(rt, t);
		require(current(rt) == ep, "the scope constructor adopts it late");
	} catch (const lineage::error &) {
		threw = true;
	}
	require(!threw, "and does not throw");
	/* A token that cannot be adopted at all (damaged): the work runs, the handler hears. */
	lin_token bad = t.raw();
	bad.tag ^= 1;
	ran = false;
	lineage::wrap(rt, lineage::token(bad), [&] { ran = current(rt) == 0; })();
	require(ran, "a damaged token still runs the work, without context");
	require(g_deferred_calls == 1 && lineage::is(g_last, LIN_EBADTOKEN),
		"adopt failure reaches the handler");
	{
		lineage::scope rs = r.enter();
		lineage::launch_guard g(rt, "no_epoch");
		require(lineage::is(g.status(), LIN_ENOCONTEXT), "launch without an epoch");
	}
	require(g_deferred_calls == 2, "launch_guard's error reached the handler");
	require(lineage::deferred_errors() - before == 2, "deferred_errors counts");
	lineage::set_error_handler(nullptr);
}

/* A scope closed on another thread is refused, and the destructor reports it. Own runtime:
 * the refused scope stays open on this thread until the runtime is freed. */
void destructor_errors_are_reported()
{
	lin_runtime *rt = plain_runtime();
	lineage::set_error_handler(counting_handler);
	g_deferred_calls = 0;
	{
		lineage::request r(rt);
		lineage::scope rs = r.enter();
		std::thread([s = std::move(rs)]() mutable { s = lineage::scope(); }).join();
		require(g_deferred_calls == 1 && lineage::is(g_last, LIN_ESCOPE_THREAD),
			"destructor error on the wrong thread is reported");
	}
	lineage::set_error_handler(nullptr);
	lin_runtime_free(rt);
}

void wrap_forwards_move_only(lin_runtime *rt)
{
	lineage::request r(rt);
	lineage::scope rs = r.enter();
	auto p = std::make_unique<int>(41);
	auto w = lineage::wrap(rt, [p = std::move(p), rt, id = r.id()](std::unique_ptr<int> q) {
		require(current(rt) == id, "wrapped call runs under the captured context");
		return *p + *q;
	});
	static_assert(!std::is_copy_constructible_v<decltype(w)>);
	auto w2 = std::move(w);
	std::packaged_task<int()> task(
		[w2 = std::move(w2)]() mutable { return w2(std::make_unique<int>(1)); });
	auto fut = task.get_future();
	std::thread(std::move(task)).join();
	require(fut.get() == 42, "result and move-only argument forwarded");
	auto text = lineage::token::capture(rt).to_string();
	require(lineage::token::parse(text).raw().id == r.id(), "text form round-trips");
	std::error_code ec;
	require(lineage::token::parse(text, ec).raw().id == r.id() && !ec,
		"the non-throwing parse round-trips");
	lineage::token bad = lineage::token::parse("lin1.garbage", ec);
	require(!bad && lineage::is(ec, EINVAL), "damaged text: an empty token and the error");
	bool ran = false;
	lineage::wrap(rt, bad, [&] { ran = current(rt) == 0; })();
	require(ran, "work handed on with damaged text runs with no context");
}

/* A minimal pool, as a framework would have: work crosses threads in std::function. */
class pool {
public:
	explicit pool(int n)
	{
		for (int i = 0; i < n; i++)
			th_.emplace_back([this] { loop(); });
	}
	~pool()
	{
		{
			std::lock_guard<std::mutex> g(mu_);
			stop_ = true;
		}
		cv_.notify_all();
		for (auto &t : th_)
			t.join();
	}
	void submit(std::function<void()> f)
	{
		{
			std::lock_guard<std::mutex> g(mu_);
			q_.push_back(std::move(f));
		}
		cv_.notify_one();
	}

private:
	void loop()
	{
		for (;;) {
			std::function<void()> f;
			{
				std::unique_lock<std::mutex> g(mu_);
				cv_.wait(g, [this] { return stop_ || !q_.empty(); });
				if (q_.empty())
					return;
				f = std::move(q_.front());
				q_.pop_front();
			}
			f();
		}
	}
	std::mutex mu_;
	std::condition_variable cv_;
	std::deque<std::function<void()>> q_;
	std::vector<std::thread> th_;
	bool stop_ = false;
};

int wrap_on_a_thread_pool(const char *validator)
{
	lineage::set_error_handler(wl::strict_handler);
	sim *s = sim_open();
	lin_runtime *rt = sim_rt(s);
	constexpr int submitters = 4, per = 50;
	{
		pool workers(3);
		std::vector<std::thread> subs;
		for (int i = 0; i < submitters; i++)
			subs.emplace_back([&] {
				lineage::request r(rt, "pool_request");
				lineage::scope rs = r.enter();
				std::vector<lineage::epoch> eps;
				eps.reserve(per);
				std::atomic<int> done{ 0 };
				for (int k = 0; k < per; k++) {
					eps.emplace_back(rt, "step");
					lineage::scope es = eps.back().enter();
					workers.submit(lineage::wrap(rt, [s, &done, id = r.id()] {
						wl::launch(s, { id });
						done++;
					}));
				}
				while (done.load() < per)
					std::this_thread::yield();
			});
		for (auto &t : subs)
			t.join();
	}
	lineage::set_error_handler(nullptr);
	return sim_finish(s, validator, "cxx_pool", submitters * per);
}

} // namespace

int main(int argc, char **argv)
{
	require(argc == 2, "usage: test_cxx_api LINEAGE_VALIDATE");
	lin_runtime *rt = plain_runtime();
	scope_is_raii_and_move_only(rt);
	errors_throw_or_return(rt);
	handed_on_work_never_runs_under_the_runners_context(rt);
	deferred_errors_reach_the_handler(rt);
	wrap_forwards_move_only(rt);
	lin_runtime_free(rt);
	destructor_errors_are_reported();
	std::puts("lineage.hpp unit checks: ok");
	return wrap_on_a_thread_pool(argv[1]);
}
