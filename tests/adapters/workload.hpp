// SPDX-License-Identifier: MIT
/*
 * workload.hpp - the task body every adapter test runs: one launch under the adopted context,
 * labelled with the requests the workload itself submitted it for (the truth, kept apart
 * from the correlation path: a plain value captured in the task).
 */
#ifndef LIN_ADAPTER_WORKLOAD_HPP
#define LIN_ADAPTER_WORKLOAD_HPP

#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <vector>

#include <lineage.hpp>

#include "sim.h"

namespace wl {

/* Stands for a kernel launch made on the current thread. */
inline void launch(sim *s, std::initializer_list<std::uint64_t> truth)
{
	lineage::launch_guard g(sim_rt(s), "adapter_kernel");
	std::vector<std::uint64_t> t(truth);
	sim_truth(s, sim_correlation(), t.data(), t.size());
}

/* Fail the test now, with a reason. */
[[noreturn]] inline void die(const char *what)
{
	std::fprintf(stderr, "FAIL: %s\n", what);
	std::exit(1);
}

inline void require(bool ok, const char *what)
{
	if (!ok)
		die(what);
}

/* The calling thread's current epoch or request id, 0 with none. */
inline std::uint64_t current(lin_runtime *rt)
{
	std::uint64_t id = 0;
	return lin_scope_current(rt, nullptr, &id, nullptr) == 0 ? id : 0;
}

/* The runtime's counters, for the checks that the adapters never refuse the work. */
inline lin_runtime_stats stats(lin_runtime *rt)
{
	lin_runtime_stats st{};
	st.sz = sizeof(st);
	lin_runtime_get_stats(rt, &st);
	return st;
}

/* Every error the C++ layer deferred fails the test. */
inline void strict_handler(const std::error_code &ec, const char *where) noexcept
{
	std::fprintf(stderr, "FAIL: deferred lineage error in %s: %s\n", where, ec.message().c_str());
	std::abort();
}

} // namespace wl

#endif
