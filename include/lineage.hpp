// SPDX-License-Identifier: MIT
/*
 * lineage.hpp - header-only C++17 layer over the lineage C API (lineage/runtime.h).
 *
 *   lineage::token        a captured context (a lin_token value: copyable, no allocation)
 *   lineage::scope        RAII adopt/exit: adopts a token (or enters an id) on construction,
 *                         closes on destruction; move-only, closes on the thread that opened it
 *   lineage::launch_guard RAII lin_launch_begin/lin_launch_end around one GPU launch call
 *   lineage::request, lineage::epoch
 *                         RAII handles for lin_request_begin/end and lin_epoch_declare/retire
 *   lineage::wrap(rt, f)  captures a token on the calling (submitting) thread and returns a
 *                         callable that adopts it around f on whichever thread calls it
 *
 * Errors. Every lineage error is reported; none is dropped. Two paths:
 *   - Calls made by the application where it can react (token::capture, the scope and
 *     request/epoch constructors, scope::close) throw lineage::error (a std::system_error
 *     whose code() is in lineage::category(); code().value() is the positive errno or
 *     LIN_E* value, lin_strerror gives the text). Each has a noexcept overload that takes
 *     a std::error_code& instead.
 *   - Places that must not throw because the user's work has to run regardless (wrap and
 *     the callable it returns, launch_guard, the adapters, and every destructor) pass the
 *     error to the process-wide handler set with lineage::set_error_handler (default: none
 *     installed) and count it in lineage::deferred_errors(). The C runtime has in addition
 *     already written a misuse record to the trace (lineage-validate then exits 1) and
 *     logged it through the runtime's log callback.
 *   Lineage never stops or changes the work it describes: wrap on a thread with no
 *   context (an untraced code path) gives a callable that runs the work with none, and
 *   is no error (lin_runtime_stats.captures_without_context counts it); a token whose
 *   version ended (its epoch retired or re-issued) is adopted late, the work joined to the
 *   version it names (lin_token_adopt); a token that cannot be adopted at all (another
 *   runtime's, damaged) still runs the work, without that context.
 *
 * Context: as the C functions each member calls (see lineage/runtime.h); nothing here
 * allocates except what wrap's callable stores (the user's callable, moved in).
 * Since: 0.1
 */
#ifndef LINEAGE_HPP
#define LINEAGE_HPP

#include <atomic>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <string>
#include <system_error>
#include <type_traits>
#include <utility>

#include "lineage/runtime.h"

namespace lineage {

/* ------------------------------------------------------------------ errors */

namespace detail {
class category_impl final : public std::error_category {
public:
	const char *name() const noexcept override { return "lineage"; }
	std::string message(int ev) const override { return lin_strerror(ev); }
};
} // namespace detail

/* The error category of every std::error_code this header makes. */
inline const std::error_category &category() noexcept
{
	static const detail::category_impl cat;
	return cat;
}

/* A C return value (0 or negative) as an error_code (value: the positive code). */
inline std::error_code make_error_code(int ret) noexcept
{
	return ret ? std::error_code(ret < 0 ? -ret : ret, category()) : std::error_code();
}

/* Thrown by the throwing overloads. what() names the C call and the library's message. */
class error : public std::system_error {
public:
	error(int ret, const char *what) : std::system_error(make_error_code(ret), what) {}
};

/* Whether @ec (from this header) is the C error @lin_code (e.g. LIN_ESTALE_TOKEN, EINVAL). */
inline bool is(const std::error_code &ec, int lin_code) noexcept
{
	return ec.category() == category() && ec.value() == (lin_code < 0 ? -lin_code : lin_code);
}

/*
 * error_handler - told of every error that could not be thrown (see the file comment).
 * @where: the C function that failed ("lin_token_adopt", "lin_scope_exit", ...).
 * Context: the thread that hit the error; must not throw.
 */
using error_handler = void (*)(const std::error_code &ec, const char *where) noexcept;

namespace detail {
inline std::atomic<error_handler> g_handler{ nullptr };
inline std::atomic<std::uint64_t> g_deferred{ 0 };

inline void defer(int ret, const char *where) noexcept
{
	g_deferred.fetch_add(1, std::memory_order_relaxed);
	if (error_handler h = g_handler.load(std::memory_order_acquire))
		h(make_error_code(ret), where);
}

inline int check(int ret, const char *where)
{
	if (ret)
		throw error(ret, where);
	return 0;
}

inline void store(int ret, std::error_code &ec) noexcept { ec = make_error_code(ret); }
} // namespace detail

/* Install @h (nullptr: none); returns the previous handler. Context: any thread. */
inline error_handler set_error_handler(error_handler h) noexcept
{
	return detail::g_handler.exchange(h, std::memory_order_acq_rel);
}

/* How many errors went to the handler path since the process started. */
inline std::uint64_t deferred_errors() noexcept
{
	return detail::g_deferred.load(std::memory_order_relaxed);
}

/* ------------------------------------------------------------------ token */

/*
 * token - a captured context. Empty (false) when default-constructed or when a capture
 * failed; adopting an empty token is a no-op scope. Copy it freely into task objects.
 */
class token {
public:
	token() noexcept : tok_{}, valid_(false) {}
	explicit token(const lin_token &t) noexcept : tok_(t), valid_(true) {}

	/* The calling thread's current context. Throws lineage::error (LIN_ENOCONTEXT, ...). */
	static token capture(lin_runtime *rt)
	{
		std::error_code ec;
		token t = capture(rt, ec);
		if (ec)
			throw error(-ec.value(), "lin_token_capture");
		return t;
	}
	static token capture(lin_runtime *rt, std::error_code &ec) noexcept
	{
		lin_token t;
		int r = lin_token_capture(rt, &t);
		detail::store(r, ec);
		return r ? token() : token(t);
	}
	/* A token for a live request or epoch id (lin_token_make). */
	static token for_id(lin_runtime *rt, std::uint64_t id)
	{
		lin_token t;
		detail::check(lin_token_make(rt, id, &t), "lin_token_make");
		return token(t);
	}
	/* The text form (lin_token_format / lin_token_parse), for process boundaries. */
	std::string to_string() const
	{
		char buf[LIN_TOKEN_TEXT_MAX];
		detail::check(lin_token_format(&tok_, buf, sizeof(buf)), "lin_token_format");
		return buf;
	}
	static token parse(const std::string &text)
	{
		lin_token t;
		detail::check(lin_token_parse(text.c_str(), &t), "lin_token_parse");
		return token(t);
	}
	/* The same, never throwing: damaged text (a message header) gives an empty token and
	 * @ec, so the work it came with still runs (wrap and the adapters run it with no
	 * context). */
	static token parse(const std::string &text, std::error_code &ec) noexcept
	{
		lin_token t;
		int r = lin_token_parse(text.c_str(), &t);
		detail::store(r, ec);
		return r ? token() : token(t);
	}

	explicit operator bool() const noexcept { return valid_; }
	const lin_token &raw() const noexcept { return tok_; }

private:
	lin_token tok_;
	bool valid_;
};

/* ------------------------------------------------------------------ scope */

/*
 * scope - an open lin_scope. Destroy (or close()) it on the thread that opened it, innermost
 * first; a scope moved to another thread and closed there is refused by the runtime
 * (LIN_ESCOPE_THREAD, recorded in the trace). An empty scope (default, moved-from, or from
 * an empty token) closes nothing.
 */
class scope {
public:
	scope() noexcept = default;
	/* Adopt @t (late when its version ended: lin_token_adopt). Throws lineage::error on
	 * LIN_EBADTOKEN, LIN_EFOREIGN, LIN_ESTALE_TOKEN (a stale token parsed from text), ... */
	scope(lin_runtime *rt, const token &t)
	{
		std::error_code ec;
		adopt(rt, t, ec);
		if (ec)
			throw error(-ec.value(), "lin_token_adopt");
	}
	/* Adopt @t; on failure nothing is open and @ec says why. */
	scope(lin_runtime *rt, const token &t, std::error_code &ec) noexcept { adopt(rt, t, ec); }

	/* A scope in which the thread has no current context (lin_scope_enter_none), whatever
	 * scope it is inside: for work that must not run under another task's context. Empty
	 * (nothing open) if even that failed. */
	static scope none(lin_runtime *rt) noexcept
	{
		scope s;
		if (rt && lin_scope_enter_none(rt, &s.s_) == 0)
			s.rt_ = rt;
		return s;
	}

	/* Enter a live request or epoch @id owned by this thread (lin_scope_enter). */
	static scope enter(lin_runtime *rt, std::uint64_t id)
	{
		scope s;
		detail::check(lin_scope_enter(rt, id, &s.s_), "lin_scope_enter");
		s.rt_ = rt;
		return s;
	}

	scope(const scope &) = delete;
	scope &operator=(const scope &) = delete;
	scope(scope &&o) noexcept : rt_(std::exchange(o.rt_, nullptr)), s_(o.s_) {}
	scope &operator=(scope &&o) noexcept
	{
		if (this != &o) {
			close_deferred();
			rt_ = std::exchange(o.rt_, nullptr);
			s_ = o.s_;
		}
		return *this;
	}
	~scope() { close_deferred(); }

	/* Close now. Returns the error instead of deferring it. When the runtime closed nothing
	 * (LIN_ESCOPE_ORDER: an inner scope is still open; LIN_ESCOPE_THREAD: not the thread
	 * that opened it) the scope stays open, so close() can be called again once that is
	 * fixed; otherwise it is empty afterwards. */
	std::error_code close() noexcept
	{
		if (!rt_)
			return {};
		int r = lin_scope_exit(rt_, &s_);
		if (r != -LIN_ESCOPE_ORDER && r != -LIN_ESCOPE_THREAD)
			rt_ = nullptr;
		return make_error_code(r);
	}

	bool is_open() const noexcept { return rt_ != nullptr; }
	explicit operator bool() const noexcept { return is_open(); }

private:
	void adopt(lin_runtime *rt, const token &t, std::error_code &ec) noexcept
	{
		ec.clear();
		if (!t)
			return;
		int r = lin_token_adopt(rt, &t.raw(), &s_);
		detail::store(r, ec);
		if (!r)
			rt_ = rt;
	}
	void close_deferred() noexcept
	{
		if (!rt_)
			return;
		int r = lin_scope_exit(rt_, &s_);
		rt_ = nullptr;
		if (r)
			detail::defer(r, "lin_scope_exit");
	}

	lin_runtime *rt_ = nullptr;
	lin_scope s_{};
};

/* ------------------------------------------------------------------ launch */

/*
 * launch_guard - brackets one launch call: lin_launch_begin on construction, lin_launch_end
 * on destruction. Never throws: the launch must happen either way. begin's result is kept
 * (status(); LIN_ENOCONTEXT when no epoch is current) and also sent to the error handler.
 * Not movable: begin/end must pair on one thread in LIFO order.
 */
class launch_guard {
public:
	/* @name is not copied; it must outlive the next lin_runtime_flush (a literal does). */
	launch_guard(lin_runtime *rt, const char *name) noexcept : rt_(rt)
	{
		int r = lin_launch_begin(rt, name, &l_);
		status_ = make_error_code(r);
		if (r)
			detail::defer(r, "lin_launch_begin");
	}
	launch_guard(const launch_guard &) = delete;
	launch_guard &operator=(const launch_guard &) = delete;
	~launch_guard()
	{
		if (int r = lin_launch_end(rt_, &l_))
			detail::defer(r, "lin_launch_end");
	}

	const std::error_code &status() const noexcept { return status_; }
	/* The external correlation id pushed for this launch; 0 if nothing was pushed. */
	std::uint64_t ext_id() const noexcept { return l_.ext_id; }

private:
	lin_runtime *rt_;
	lin_launch l_{};
	std::error_code status_;
};

/* ------------------------------------------------------------------ requests and epochs */

/*
 * request - a request begun on construction and ended on destruction (move-only).
 * Throws lineage::error from the constructor; an error ending it goes to the handler.
 */
class request {
public:
	explicit request(lin_runtime *rt, const char *name = nullptr) : rt_(rt)
	{
		struct lin_request_opts o {};
		o.sz = sizeof(o);
		o.name = name;
		detail::check(lin_request_begin(rt, &o, &id_), "lin_request_begin");
	}
	request(const request &) = delete;
	request &operator=(const request &) = delete;
	request(request &&o) noexcept : rt_(std::exchange(o.rt_, nullptr)), id_(o.id_) {}
	request &operator=(request &&) = delete;
	~request()
	{
		if (rt_)
			if (int r = lin_request_end(rt_, id_))
				detail::defer(r, "lin_request_end");
	}
	std::uint64_t id() const noexcept { return id_; }
	/* Make it this thread's current context until the returned scope closes. */
	scope enter() const { return scope::enter(rt_, id_); }

private:
	lin_runtime *rt_;
	std::uint64_t id_ = 0;
};

/*
 * epoch - a launch epoch declared on construction and retired on destruction (move-only).
 * With no requests it serves the calling thread's current context; with several it is a
 * batched (fan-in) launch that serves all of them.
 */
class epoch {
public:
	explicit epoch(lin_runtime *rt, const char *name = nullptr) : epoch(rt, nullptr, 0, name) {}
	epoch(lin_runtime *rt, std::initializer_list<std::uint64_t> requests, const char *name = nullptr)
		: epoch(rt, requests.begin(), requests.size(), name)
	{
	}
	epoch(lin_runtime *rt, const std::uint64_t *requests, std::size_t n, const char *name = nullptr)
		: rt_(rt)
	{
		struct lin_epoch_opts o {};
		o.sz = sizeof(o);
		o.requests = requests;
		o.n_requests = n;
		o.name = name;
		detail::check(lin_epoch_declare(rt, &o, &id_), "lin_epoch_declare");
	}
	epoch(const epoch &) = delete;
	epoch &operator=(const epoch &) = delete;
	epoch(epoch &&o) noexcept : rt_(std::exchange(o.rt_, nullptr)), id_(o.id_) {}
	epoch &operator=(epoch &&) = delete;
	~epoch()
	{
		if (rt_)
			if (int r = lin_epoch_retire(rt_, id_))
				detail::defer(r, "lin_epoch_retire");
	}
	std::uint64_t id() const noexcept { return id_; }
	scope enter() const { return scope::enter(rt_, id_); }

private:
	lin_runtime *rt_;
	std::uint64_t id_ = 0;
};

/* ------------------------------------------------------------------ wrap */

/*
 * wrapped<F> - what wrap returns: F plus a token. Calling it adopts the token (a failed
 * adopt goes to the error handler and F runs without the context), invokes F with the
 * arguments, and closes the scope when F returns or throws. Copyable if F is; move-only
 * callables and move-only arguments work.
 */
namespace detail {
/* Where handed-on work runs (wrap, the adapters): under @t, adopted (late when its version
 * ended), or, when @t is empty or cannot be adopted, under no context at all
 * (lin_scope_enter_none): never under whatever scope the running thread happens to be in.
 * An adopt error goes to the error handler and @ec. */
inline scope adopt_or_none(lin_runtime *rt, const token &t, std::error_code &ec) noexcept
{
	ec.clear();
	if (t) {
		scope s(rt, t, ec);
		if (!ec)
			return s;
		defer(-ec.value(), "lin_token_adopt");
	}
	return scope::none(rt);
}
} // namespace detail

template <class F> class wrapped {
public:
	wrapped(lin_runtime *rt, token t, F f) : rt_(rt), tok_(t), f_(std::move(f)) {}

	template <class... A> decltype(auto) operator()(A &&...args)
	{
		scope s = adopt();
		return std::invoke(f_, std::forward<A>(args)...);
	}
	template <class... A> decltype(auto) operator()(A &&...args) const
	{
		scope s = adopt();
		return std::invoke(f_, std::forward<A>(args)...);
	}

	const lineage::token &token() const noexcept { return tok_; }
	lin_runtime *runtime() const noexcept { return rt_; }

private:
	scope adopt() const noexcept
	{
		std::error_code ec;
		return detail::adopt_or_none(rt_, tok_, ec);
	}

	lin_runtime *rt_;
	lineage::token tok_;
	F f_;
};

/*
 * wrap - capture the calling thread's context now; return a callable that runs @f under it.
 * With no context to capture (an untraced code path: LIN_ENOCONTEXT) the callable runs @f
 * with none: nothing is thrown, the work is submitted as it would be without lineage (the
 * runtime counts it, lin_runtime_stats.captures_without_context). Any other capture error
 * goes to the error handler. The overload with @ec also says what capture returned.
 * Context: the submitting thread (capture is on the launch path: no allocation, no lock;
 * moving @f into the result may allocate only if F's move does). Since: 0.1 (no throw: 0.4)
 */
namespace detail {
/* The capture of code that hands work on and must not throw (wrap, the adapters): the
 * token, or an empty one when there is no context (no error: an untraced code path);
 * another error goes to the handler. */
inline token capture_quiet(lin_runtime *rt) noexcept
{
	std::error_code ec;
	token t = token::capture(rt, ec);
	if (ec && !is(ec, LIN_ENOCONTEXT))
		defer(-ec.value(), "lin_token_capture");
	return t;
}
} // namespace detail

template <class F> wrapped<std::decay_t<F>> wrap(lin_runtime *rt, F &&f)
{
	return wrapped<std::decay_t<F>>(rt, detail::capture_quiet(rt), std::forward<F>(f));
}
template <class F> wrapped<std::decay_t<F>> wrap(lin_runtime *rt, F &&f, std::error_code &ec)
{
	return wrapped<std::decay_t<F>>(rt, token::capture(rt, ec), std::forward<F>(f));
}
/* With a token captured earlier (e.g. on another thread, or parsed from text). */
template <class F> wrapped<std::decay_t<F>> wrap(lin_runtime *rt, const token &t, F &&f)
{
	return wrapped<std::decay_t<F>>(rt, t, std::forward<F>(f));
}

} // namespace lineage

#endif
