// SPDX-License-Identifier: MIT
/*
 * lineage/adapters/uv.hpp - libuv uv_queue_work with lineage.
 *
 * lineage::uv::queue_work(loop, rt, work, after) captures a token on the calling thread (the
 * loop's thread, which is where uv_queue_work must be called) and submits a uv_work_t whose
 * work callback adopts it on the libuv threadpool thread that runs @work, and whose
 * after-work callback adopts it again on the loop thread around @after. The overload taking
 * a lineage::token uses a token captured earlier, e.g. on another thread that handed the job
 * to the loop (through uv_async_send or a queue).
 *
 *   work:  void()            runs on a threadpool thread
 *   after: void(int status)  runs on the loop thread; status is 0 or UV_ECANCELED
 *
 * Both may be move-only. The request object is allocated with new and freed after @after
 * returns (or at once if uv_queue_work fails).
 *
 * Return: 0 or uv_queue_work's negative libuv error (nothing is then run).
 * Errors: none of lineage's changes what is submitted or run. No context on the calling
 * thread (an untraced code path): the callbacks run with none. A token whose epoch retired
 * meanwhile: adopted late (the work joins that epoch, counted late). Any other adopt
 * failure goes to lineage's error handler and the callback still runs. libuv is C and
 * cannot unwind: the callbacks are noexcept, so an exception leaving @work or @after calls
 * std::terminate.
 * Context: the loop's thread. Since: 0.1
 */
#ifndef LINEAGE_ADAPTERS_UV_HPP
#define LINEAGE_ADAPTERS_UV_HPP

#include <memory>
#include <type_traits>
#include <utility>

#include <uv.h>

#include "lineage.hpp"

namespace lineage {
namespace uv {

namespace detail {
template <class W, class A> struct work_req {
	uv_work_t req; /* req.data points back at this object */
	lin_runtime *rt;
	lineage::token tok;
	W work;
	A after;

	static void on_work(uv_work_t *r) noexcept
	{
		auto *self = static_cast<work_req *>(r->data);
		std::error_code ec;
		lineage::scope s = lineage::detail::adopt_or_none(self->rt, self->tok, ec);
		self->work();
	}
	static void on_after(uv_work_t *r, int status) noexcept
	{
		std::unique_ptr<work_req> self(static_cast<work_req *>(r->data));
		std::error_code ec;
		lineage::scope s = lineage::detail::adopt_or_none(self->rt, self->tok, ec);
		self->after(status);
	}
};
} // namespace detail

template <class W, class A>
int queue_work(uv_loop_t *loop, lin_runtime *rt, const lineage::token &tok, W &&work, A &&after)
{
	using req_t = detail::work_req<std::decay_t<W>, std::decay_t<A>>;
	auto *r = new req_t{ uv_work_t{}, rt, tok, std::forward<W>(work), std::forward<A>(after) };
	r->req.data = r;
	int err = uv_queue_work(loop, &r->req, &req_t::on_work, &req_t::on_after);
	if (err)
		delete r;
	return err;
}

template <class W, class A> int queue_work(uv_loop_t *loop, lin_runtime *rt, W &&work, A &&after)
{
	return queue_work(loop, rt, lineage::detail::capture_quiet(rt), std::forward<W>(work),
			  std::forward<A>(after));
}

} // namespace uv
} // namespace lineage

#endif
