// SPDX-License-Identifier: MIT
/*
 * lineage/adapters/omp.hpp - OpenMP tasks with lineage.
 *
 * A pragma cannot be wrapped by a function, so there are two forms:
 *
 * 1. Explicit, for an existing `#pragma omp task`: capture where the task is created,
 *    adopt first thing in its body.
 *
 *        lineage::token t = lineage::token::capture(rt);     // creating thread
 *        #pragma omp task firstprivate(t)
 *        {
 *            lineage::omp::task_scope s(rt, t);              // executing thread
 *            ...
 *        }
 *
 * 2. lineage::omp::task(rt, f): creates a deferred `#pragma omp task` that runs f under the
 *    calling thread's context. f may be move-only (it is moved to the heap and the task
 *    takes the pointer firstprivate). The task is a child of the calling task, so
 *    `#pragma omp taskwait` / `taskgroup` / the end of the parallel region wait for it.
 *
 * Rules:
 *  - Tasks must be tied (the default). An untied task may resume on another thread after a
 *    task scheduling point, and the scope would then be closed on a thread that did not open
 *    it (LIN_ESCOPE_THREAD, recorded in the trace).
 *  - A tied task that waits (taskwait, taskyield) inside its scope may run other tasks on
 *    its thread meanwhile; their scopes nest on top of its own and close first, so LIFO holds.
 *  - An exception leaving an OpenMP task calls std::terminate (OpenMP's rule, not lineage's).
 *
 * Errors: neither throws nor changes what runs. task() on a thread with no context (an
 * untraced code path) creates the task all the same, run with none; task_scope adopts a
 * token whose epoch retired meanwhile late (joined to that epoch, counted late) and sends
 * any other adopt failure to lineage's error handler.
 * Context: inside a parallel region (or outside: the task then runs immediately, undeferred).
 * Since: 0.1
 */
#ifndef LINEAGE_ADAPTERS_OMP_HPP
#define LINEAGE_ADAPTERS_OMP_HPP

#include <memory>
#include <type_traits>
#include <utility>

#include "lineage.hpp"

namespace lineage {
namespace omp {

/* Adopt @t for the rest of the enclosing block; never throws (see file comment). */
class task_scope {
public:
	task_scope(lin_runtime *rt, const lineage::token &t) noexcept
		: s_(lineage::detail::adopt_or_none(rt, t, ec_))
	{
	}
	const std::error_code &status() const noexcept { return ec_; }

private:
	std::error_code ec_;
	lineage::scope s_;
};

template <class F> void task(lin_runtime *rt, F &&f)
{
	using W = lineage::wrapped<std::decay_t<F>>;
	W *w = new W(lineage::wrap(rt, std::forward<F>(f)));
#ifdef _OPENMP
#pragma omp task firstprivate(w)
#endif
	{
		std::unique_ptr<W> own(w);
		(*own)();
	}
}

} // namespace omp
} // namespace lineage

#endif
