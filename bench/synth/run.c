/* SPDX-License-Identifier: MIT */
/*
 * run.c - one process's run: runtime + simulator + thread pool, the scenario, then the
 * simulator's buffers decoded into the trace, the clock record, and the truth file.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lineage/cupti.h"
#include "synth.h"
#include "tracefmt.h"

static const char *const strategy_names[] = { "epoch", "thread-local", "cuda-only" };

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline uint64_t ticks(void)
{
#if defined(__x86_64__) || defined(__i386__)
	return __builtin_ia32_rdtsc();
#else
	return mono_ns();
#endif
}

/* ns per tick (5 ms against CLOCK_MONOTONIC) and the cost of one empty timed interval. */
static void calibrate(double *ns_per_tick, double *empty_ticks)
{
	uint64_t n0 = mono_ns(), t0 = ticks(), n1, t1;
	do {
		n1 = mono_ns();
		t1 = ticks();
	} while (n1 - n0 < 5000000);
	*ns_per_tick = t1 > t0 ? (double)(n1 - n0) / (double)(t1 - t0) : 1.0;
	uint64_t best = UINT64_MAX;
	for (int i = 0; i < 2000; i++) {
		uint64_t a = ticks(), b = ticks();
		if (b - a < best)
			best = b - a;
	}
	*empty_ticks = (double)best;
}

static int fwrite_cb(void *data, const char *buf, size_t len)
{
	return fwrite(buf, 1, len, data) == len ? 0 : -1;
}

/* Attach mode has no call that pairs the host and device clocks, so the pair is appended
 * after the runtime closed the trace. The simulator's device clock is the runtime's host
 * clock plus a constant, so the pair is exact (docs/simulator.md). */
static int append_clock(const char *path, uint64_t off)
{
	FILE *f = fopen(path, "ab");
	if (!f)
		return -errno;
	msgpack_packer pk;
	msgpack_packer_init(&pk, f, fwrite_cb);
	uint64_t h = mono_ns();
	lin_tf_clock(&pk, h, h + off);
	return fclose(f) == 0 ? 0 : -EIO;
}

static int open_runtime(struct synth *sx, const char *trace)
{
	struct lin_backend_ops ops;
	lin_sim_backend_ops(sx->sim, &ops);
	struct lin_runtime_opts ro = {
		.sz = sizeof(ro),
		.trace_path = trace,
		.backend = sx->o.strategy == SYNTH_EPOCH ? LIN_BACKEND_CUSTOM : LIN_BACKEND_NONE,
		.backend_ops = sx->o.strategy == SYNTH_EPOCH ? &ops : NULL,
		.observer = lin_sim_observer,
		.observer_user = sx->sim,
	};
	int r = lin_runtime_create(&ro, &sx->rt);
	if (r) {
		fprintf(stderr, "lineage-synth: cannot open trace %s: %s\n", trace, strerror(-r));
		return r;
	}
	lin_sim_set_runtime(sx->sim, sx->rt);
	if (sx->o.strategy == SYNTH_EPOCH && (r = lin_graph_tracker_create(sx->rt, NULL, &sx->gt)))
		fprintf(stderr, "lineage-synth: lin_graph_tracker_create: %d\n", r);
	return r;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static void report(struct synth *sx, const char *trace, const char *truth, double ns_tick,
		   double empty)
{
	struct lin_sim_stats st;
	lin_sim_get_stats(sx->sim, &st);
	uint64_t launches = atomic_load(&sx->launches);
	double t = (double)atomic_load(&sx->strategy_ticks) -
		   empty * (double)atomic_load(&sx->measures);
	double mean = launches ? (t > 0 ? t : 0) * ns_tick / (double)launches : 0;
	qsort(sx->samples, sx->n_samples, sizeof(double), cmp_double);
	double med = sx->n_samples ? sx->samples[sx->n_samples / 2] : 0;
	printf("SYNTH scenario=%s strategy=%s seed=%llu pid=%d launches=%llu gpu_records=%llu "
	       "truth_labels=%zu host_ns_per_launch=%.1f host_ns_per_launch_mean=%.1f "
	       "expect_stale=%llu expect_dropped=%llu trace=%s truth=%s\n",
	       sx->o.scenario, strategy_names[sx->o.strategy], (unsigned long long)sx->o.seed,
	       (int)getpid(), (unsigned long long)launches,
	       (unsigned long long)(st.kernels + st.memcpys + st.memsets), sx->truth.n, med, mean,
	       (unsigned long long)atomic_load(&sx->expect_stale),
	       (unsigned long long)atomic_load(&sx->expect_dropped), trace, truth);
	fflush(stdout);
}

static void close_all(struct synth *sx)
{
	synth_pool_stop(sx->pool);
	lin_graph_tracker_free(sx->gt);
	lin_runtime_free(sx->rt);
	lin_sim_free(sx->sim);
	synth_truth_free(&sx->truth);
	free(sx->samples);
	pthread_mutex_destroy(&sx->truth_mu);
}

int synth_run_process(const struct synth_opts *o, const struct synth_scenario *sc,
		      const char *trace, const char *truth, uint32_t drop_permille)
{
	static struct synth sx;
	memset(&sx, 0, sizeof(sx));
	sx.o = *o;
	sx.rng = lin_sim_mix(o->seed);
	pthread_mutex_init(&sx.truth_mu, NULL);
	struct lin_sim_opts so = { .sz = sizeof(so), .seed = o->seed, .drop_permille = drop_permille };
	double ns_tick, empty;
	calibrate(&ns_tick, &empty);
	sx.ns_per_tick = ns_tick;
	sx.empty_ticks = empty;
	int r = lin_sim_create(NULL, &so, &sx.sim);
	if (!r)
		r = open_runtime(&sx, trace);
	if (!r && (r = synth_pool_start(&sx.pool, o->threads)))
		fprintf(stderr, "lineage-synth: cannot start %u threads: %s\n", o->threads, strerror(-r));
	if (r) {
		close_all(&sx);
		return 1;
	}
	sc->run(&sx);
	synth_pool_stop(sx.pool);
	sx.pool = NULL;
	if ((r = lin_sim_flush(sx.sim)))
		fprintf(stderr, "lineage-synth: decoding the simulated buffers failed: %d\n", r);
	uint64_t off = lin_sim_clock_offset(sx.sim);
	lin_graph_tracker_free(sx.gt);
	sx.gt = NULL;
	lin_runtime_free(sx.rt);
	sx.rt = NULL;
	int w = append_clock(trace, off);
	if (w)
		fprintf(stderr, "lineage-synth: cannot append to %s: %s\n", trace, strerror(-w));
	int t = synth_truth_write(&sx.truth, truth);
	if (t)
		fprintf(stderr, "lineage-synth: cannot write truth %s: %s\n", truth, strerror(-t));
	report(&sx, trace, truth, ns_tick, empty);
	close_all(&sx);
	return r || w || t ? 1 : 0;
}
