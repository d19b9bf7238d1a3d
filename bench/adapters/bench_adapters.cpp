// SPDX-License-Identifier: MIT
/*
 * bench_adapters.cpp - what each adapter adds per submitted task, against the same framework
 * with no lineage, measured side by side in one run (plain and lineage rounds alternate, so
 * machine noise hits both alike).
 *
 * A task is an empty body; the lineage variant captures a token at submission and adopts /
 * closes it on the worker, with a live runtime whose writer thread encodes every event
 * (the trace goes to a callback that discards it; the writer runs during the rounds as it
 * would in production, and the buffers are also flushed between rounds, untimed, so no event
 * is dropped). One round submits TASKS tasks from one thread and waits for all;
 * ns_per_task = round time / TASKS; the medians over ROUNDS rounds are printed:
 *   SUMMARY bench=adapter_<name> ns_per_task_plain=... ns_per_task_lineage=... overhead_ns=...
 * Usage: lineage-bench-adapters [TASKS] [ROUNDS]   (defaults 50000, 21)
 */
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

#include <lineage.hpp>
#ifdef LIN_BENCH_UV
#include <lineage/adapters/uv.hpp>
#endif
#ifdef LIN_BENCH_TBB
#include <lineage/adapters/tbb.hpp>
#endif
#ifdef LIN_BENCH_OMP
#include <lineage/adapters/omp.hpp>
#include <omp.h>
#endif

namespace {

int g_tasks = 50000, g_rounds = 21;
std::atomic<long> g_sink{ 0 };

int discard(const void *, size_t len, void *)
{
	g_sink.fetch_add((long)len, std::memory_order_relaxed);
	return 0;
}

double now_ns()
{
	return (double)std::chrono::duration_cast<std::chrono::nanoseconds>(
		       std::chrono::steady_clock::now().time_since_epoch())
		.count();
}

double median(std::vector<double> v)
{
	std::sort(v.begin(), v.end());
	return v[v.size() / 2];
}

/* Alternate plain and lineage rounds; print one SUMMARY line. */
void compare(const char *name, lin_runtime *rt, const std::function<void()> &plain,
	     const std::function<void()> &lin)
{
	std::vector<double> p, l;
	plain(); /* warm up: threads started, per-thread buffers set up */
	lin();
	lin_runtime_flush(rt);
	for (int r = 0; r < g_rounds; r++) {
		double t0 = now_ns();
		plain();
		double t1 = now_ns();
		lin();
		double t2 = now_ns();
		lin_runtime_flush(rt); /* untimed: the next round starts with empty buffers */
		p.push_back((t1 - t0) / g_tasks);
		l.push_back((t2 - t1) / g_tasks);
	}
	struct lin_runtime_stats st {};
	st.sz = sizeof(st);
	lin_runtime_get_stats(rt, &st);
	double mp = median(p), ml = median(l);
	std::printf("SUMMARY bench=adapter_%s ns_per_task_plain=%.1f ns_per_task_lineage=%.1f "
		    "overhead_ns=%.1f tasks=%d rounds=%d events_dropped=%llu\n",
		    name, mp, ml, ml - mp, g_tasks, g_rounds, (unsigned long long)st.events_dropped);
	std::fflush(stdout);
}

#ifdef LIN_BENCH_UV
/* The same request object and callbacks as lineage::uv::queue_work, without the token. */
struct plain_req {
	uv_work_t req;
	std::atomic<int> *done;
};

void bench_uv(lin_runtime *rt)
{
	uv_loop_t loop;
	uv_loop_init(&loop);
	std::atomic<int> done{ 0 };
	auto plain = [&] {
		for (int i = 0; i < g_tasks; i++) {
			auto *r = new plain_req{ uv_work_t{}, &done };
			r->req.data = r;
			uv_queue_work(
				&loop, &r->req,
				[](uv_work_t *w) {
					static_cast<plain_req *>(w->data)->done->fetch_add(1);
				},
				[](uv_work_t *w, int) { delete static_cast<plain_req *>(w->data); });
		}
		uv_run(&loop, UV_RUN_DEFAULT);
	};
	auto lin = [&] {
		for (int i = 0; i < g_tasks; i++)
			lineage::uv::queue_work(
				&loop, rt, [&done] { done.fetch_add(1); }, [](int) {});
		uv_run(&loop, UV_RUN_DEFAULT);
	};
	compare("uv", rt, plain, lin);
	uv_loop_close(&loop);
}
#endif

#ifdef LIN_BENCH_TBB
void bench_tbb(lin_runtime *rt)
{
	std::atomic<int> done{ 0 };
	tbb::task_group tg;
	auto body = [&done] { done.fetch_add(1, std::memory_order_relaxed); };
	auto plain = [&] {
		for (int i = 0; i < g_tasks; i++)
			tg.run(body);
		tg.wait();
	};
	auto lin = [&] {
		for (int i = 0; i < g_tasks; i++)
			lineage::tbb::run(tg, rt, body);
		tg.wait();
	};
	compare("tbb_task_group", rt, plain, lin);

	tbb::task_arena arena;
	auto aplain = [&] {
		done = 0;
		for (int i = 0; i < g_tasks; i++)
			arena.enqueue(body);
		while (done.load() < g_tasks)
			;
	};
	auto alin = [&] {
		done = 0;
		for (int i = 0; i < g_tasks; i++)
			lineage::tbb::enqueue(arena, rt, body);
		while (done.load() < g_tasks)
			;
	};
	compare("tbb_arena_enqueue", rt, aplain, alin);
}
#endif

#ifdef LIN_BENCH_OMP
void omp_round(lin_runtime *rt, int mode)
{
	std::atomic<int> done{ 0 };
	lineage::token parent = mode ? lineage::token::capture(rt) : lineage::token();
#pragma omp parallel
#pragma omp single
	{
		lineage::scope s(rt, parent); /* the team member creating tasks has the context */
		for (int i = 0; i < g_tasks; i++) {
			if (mode == 0) {
#pragma omp task
				done.fetch_add(1, std::memory_order_relaxed);
			} else if (mode == 1) {
				lineage::token t = lineage::token::capture(rt);
#pragma omp task firstprivate(t)
				{
					lineage::omp::task_scope ts(rt, t);
					done.fetch_add(1, std::memory_order_relaxed);
				}
			} else {
				lineage::omp::task(rt, [&done] {
					done.fetch_add(1, std::memory_order_relaxed);
				});
			}
		}
	}
}

void bench_omp(lin_runtime *rt)
{
	compare(
		"omp_task_explicit", rt, [rt] { omp_round(rt, 0); }, [rt] { omp_round(rt, 1); });
	compare(
		"omp_task_helper", rt, [rt] { omp_round(rt, 0); }, [rt] { omp_round(rt, 2); });
}
#endif

} // namespace

int main(int argc, char **argv)
{
	if (argc > 1)
		g_tasks = std::max(1, std::atoi(argv[1]));
	if (argc > 2)
		g_rounds = std::max(1, std::atoi(argv[2]));
	struct lin_runtime_opts o {};
	o.sz = sizeof(o);
	o.trace_write = discard;
	o.thread_buffer_events = 1u << 20; /* a round's events fit: none dropped */
	lin_runtime *rt;
	if (int err = lin_runtime_create(&o, &rt)) {
		std::fprintf(stderr, "lin_runtime_create: %s\n", lin_strerror(err));
		return 1;
	}
	int rc = 0;
	try {
		lineage::request req(rt, "bench");
		lineage::scope rs = req.enter();
		lineage::epoch ep(rt, "bench");
		lineage::scope es = ep.enter();
#ifdef LIN_BENCH_UV
		bench_uv(rt);
#endif
#ifdef LIN_BENCH_TBB
		bench_tbb(rt);
#endif
#ifdef LIN_BENCH_OMP
		bench_omp(rt);
#endif
	} catch (const lineage::error &e) {
		std::fprintf(stderr, "lineage: %s\n", e.what());
		rc = 2;
	}
	lin_runtime_free(rt);
	return rc;
}
