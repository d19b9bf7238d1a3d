// SPDX-License-Identifier: MIT
/*
 * lineage/adapters/tbb.hpp - oneTBB submissions that carry lineage.
 *
 * Every function here captures a token on the calling (submitting) thread and hands oneTBB a
 * lineage::wrapped callable that adopts it on the worker that runs the task. oneTBB calls
 * task bodies as const, so the callable must be const-invocable (as oneTBB requires anyway).
 *
 *   lineage::tbb::run(tg, rt, f)        tg.run(f) under the submitter's context
 *   lineage::tbb::defer(tg, rt, f)      tg.defer(f): a task_handle; captured now, not at run
 *   lineage::tbb::enqueue(arena, rt, f) arena.enqueue(f) (fire-and-forget)
 *   lineage::tbb::execute(arena, rt, f) arena.execute(f); f may run on another thread when the
 *                                       caller cannot join the arena
 *   lineage::tbb::task_group            a tbb::task_group whose run() does the above
 *
 * Errors: none of lineage's changes what is submitted or run (see lineage.hpp). No context on
 * the submitting thread (an untraced code path): the task runs with none. A token whose
 * epoch retired meanwhile: adopted late (joined to that epoch, counted late). Any other
 * adopt failure goes to lineage's error handler and the task still runs.
 * Context: run/defer/enqueue/execute on any thread, with or without a lineage context.
 * Since: 0.1
 */
#ifndef LINEAGE_ADAPTERS_TBB_HPP
#define LINEAGE_ADAPTERS_TBB_HPP

#include <utility>

#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/task_group.h>

#include "lineage.hpp"

namespace lineage {
namespace tbb {

template <class F> void run(::tbb::task_group &tg, lin_runtime *rt, F &&f)
{
	tg.run(lineage::wrap(rt, std::forward<F>(f)));
}

template <class F>::tbb::task_handle defer(::tbb::task_group &tg, lin_runtime *rt, F &&f)
{
	return tg.defer(lineage::wrap(rt, std::forward<F>(f)));
}

template <class F> void enqueue(::tbb::task_arena &arena, lin_runtime *rt, F &&f)
{
	arena.enqueue(lineage::wrap(rt, std::forward<F>(f)));
}

template <class F> decltype(auto) execute(::tbb::task_arena &arena, lin_runtime *rt, F &&f)
{
	auto w = lineage::wrap(rt, std::forward<F>(f));
	return arena.execute(w);
}

/*
 * task_group - a ::tbb::task_group bound to a runtime: run() and defer() capture the
 * submitting thread's context. Waiting is unchanged (wait(), run_and_wait is not offered:
 * its body runs on the calling thread, where the context already is).
 */
class task_group {
public:
	explicit task_group(lin_runtime *rt) : rt_(rt) {}
	template <class F> void run(F &&f) { lineage::tbb::run(tg_, rt_, std::forward<F>(f)); }
	template <class F>::tbb::task_handle defer(F &&f)
	{
		return lineage::tbb::defer(tg_, rt_, std::forward<F>(f));
	}
	void run(::tbb::task_handle &&h) { tg_.run(std::move(h)); }
	::tbb::task_group_status wait() { return tg_.wait(); }
	void cancel() { tg_.cancel(); }
	::tbb::task_group &native() noexcept { return tg_; }

private:
	lin_runtime *rt_;
	::tbb::task_group tg_;
};

} // namespace tbb
} // namespace lineage

#endif
