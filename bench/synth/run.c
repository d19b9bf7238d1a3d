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
#include "lineage/otlp.h"
#include "synth.h"
#include "tracefmt.h"

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

/*
 * The trace file. Attach mode has no call that pairs the host and device clocks, so the
 * write callback puts a clock record before every chunk the runtime hands over once it
 * exists (the header is written inside lin_runtime_create; the runtime writes whole
 * records, so that is an object boundary), read on the runtime's own clock, as the live
 * binding writes one with every buffer: the last one is read after every call the trace
 * holds, so the validator interpolates between pairs and never extrapolates past the
 * span they cover (docs/validator.md, "Clocks"). The simulator's device clock is that
 * clock itself (docs/simulator.md), so each pair is exact.
 */
struct trace_out {
	FILE *f;
	lin_runtime *const *rt; /* the run's runtime, NULL until lin_runtime_create returns */
	uint64_t clock_off;
	bool clock_done; /* a clock record was written (by us or the live binding) */
	bool live_clock; /* the live binding pairs the clocks: write none */
	bool failed;
};

static void write_pair(struct trace_out *o)
{
	msgpack_packer pk;
	msgpack_packer_init(&pk, o->f, fwrite_cb);
	uint64_t h = lin_runtime_now_ns(*o->rt);
	lin_tf_clock(&pk, h, h + o->clock_off, h); /* the simulated clocks are one */
	o->clock_done = true;
}

static int trace_write(const void *buf, size_t len, void *user)
{
	struct trace_out *o = user;
	if (!o->live_clock && *o->rt)
		write_pair(o);
	int r = fwrite(buf, 1, len, o->f) == len ? 0 : -EIO;
	if (r)
		o->failed = true;
	return r;
}

/* The runtime's binding: attach mode, the simulator's push/pop (epoch) or none; layer
 * mode, the live CUPTI binding (epoch) or none, the workload owning CUPTI itself. */
static int open_runtime(struct synth *sx, struct trace_out *out)
{
	bool epoch = sx->o.strategy == SYNTH_EPOCH, layer = sx->o.cupti == LIN_SIM_LAYER;
	struct lin_backend_ops ops;
	lin_sim_backend_ops(sx->sim, &ops);
	struct lin_runtime_opts ro = {
		.sz = sizeof(ro),
		.trace_write = trace_write,
		.trace_user = out,
		.observer = lin_sim_observer,
		.observer_user = sx->sim,
	};
	/* --otlp: the OTLP stream (liblineage-otlp), attached as a tap. */
	struct lin_otlp_opts so = { .sz = sizeof(so), .path = sx->o.otlp };
	struct lin_tap_spec tap = lin_otlp_tap(&so);
	if (so.path) {
		ro.taps = &tap;
		ro.ntaps = 1;
	}
	synth_strategy_runtime(sx, &ro, &ops);
	if (epoch && layer) {
		/* Through the test CUPTI layer the live binding owns CUPTI, and pairs the
		 * clocks itself (a clock record with every buffer). */
		ro.backend = LIN_BACKEND_CUPTI;
		ro.backend_ops = NULL;
		if (sx->o.own_clock)
			ro.cupti_flags |= LIN_CUPTI_OWN_CLOCK;
		out->clock_done = true;
		out->live_clock = true;
	}
	int r = lin_runtime_create(&ro, &sx->rt);
	if (r) {
		fprintf(stderr, "lineage-synth: lin_runtime_create: %s\n", lin_strerror(r));
		return r;
	}
	if (!out->live_clock) {
		/* The first pair, before anything the workload does: whatever the runtime
		 * holds (its header) goes out first, so the record lands on a boundary. */
		lin_runtime_flush(sx->rt);
		write_pair(out);
	}
	if (layer && !epoch && synth_owner_start(sx->rt, 4096)) {
		fprintf(stderr, "lineage-synth: the workload could not take the CUPTI layer\n");
		return -EIO;
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

static void report(struct synth *sx, const char *trace, const char *truth, double ns_tick, double empty)
{
	struct lin_sim_stats st;
	lin_sim_get_stats(sx->sim, &st);
	uint64_t launches = atomic_load(&sx->launches);
	double t = (double)atomic_load(&sx->strategy_ticks) - empty * (double)atomic_load(&sx->measures);
	double mean = launches ? (t > 0 ? t : 0) * ns_tick / (double)launches : 0;
	qsort(sx->samples, sx->n_samples, sizeof(double), cmp_double);
	double med = sx->n_samples ? sx->samples[sx->n_samples / 2] : 0;
	printf("SYNTH scenario=%s strategy=%s seed=%llu pid=%d launches=%llu gpu_records=%llu "
	       "truth_labels=%zu host_ns_per_launch=%.1f host_ns_per_launch_mean=%.1f "
	       "expect_late=%llu expect_dropped=%llu open_records=%llu batched_records=%llu "
	       "bare_replays=%llu trace=%s truth=%s cupti=%s\n",
	       sx->o.scenario, synth_strategy_names[sx->o.strategy], (unsigned long long)sx->o.seed,
	       (int)getpid(), (unsigned long long)launches,
	       (unsigned long long)(st.kernels + st.memcpys + st.memsets), sx->truth.n, med, mean,
	       (unsigned long long)atomic_load(&sx->expect_late),
	       (unsigned long long)atomic_load(&sx->expect_dropped),
	       (unsigned long long)atomic_load(&sx->open_records),
	       (unsigned long long)atomic_load(&sx->batched_records),
	       (unsigned long long)atomic_load(&sx->bare_replays), trace, truth,
	       sx->o.cupti == LIN_SIM_LAYER ? "layer" : "sim");
	if (!strncmp(sx->o.scenario, "attr-", 5))
		printf("ATTR scenario=%s cause_labels=%zu attr_skipped=%llu delay_ns=%llu\n",
		       sx->o.scenario, sx->causes.n, (unsigned long long)atomic_load(&sx->attr_skipped),
		       (unsigned long long)sx->o.delay_ns);
	fflush(stdout);
}

static void close_lane(struct synth *sx)
{
	synth_pool_stop(sx->pool);
	sx->pool = NULL;
	synth_truth_free(&sx->truth);
	free(sx->samples);
	pthread_mutex_destroy(&sx->truth_mu);
	free(sx->causes.v);
	free(sx->offs.v);
}

static void init_lane(struct synth *sx, const struct synth_opts *o, uint32_t lane, double ns_tick,
		      double empty)
{
	memset(sx, 0, sizeof(*sx));
	sx->o = *o;
	sx->rng = lin_sim_mix(o->seed ^ (0x9e3779b97f4a7c15ull * lane));
	sx->ns_per_tick = ns_tick;
	sx->empty_ticks = empty;
	sx->stream_base = 16 * lane; /* lanes never share a stream (nor a capture) */
	pthread_mutex_init(&sx->truth_mu, NULL);
}

/* Lanes 1.. feed lane 0: truth labels, counters, cost samples. */
static void merge_lane(struct synth *to, struct synth *from)
{
	for (size_t i = 0; i < from->truth.n; i++)
		synth_truth_add(&to->truth, from->truth.v[i].gpu_kind, from->truth.v[i].key,
				from->truth.v[i].req, from->truth.v[i].n);
	for (size_t i = 0; i < from->causes.n; i++) {
		const struct synth_cause *c = &from->causes.v[i];
		synth_cause(to, c->kind, c->key, c->cause, c->alt, c->start, c->end, c->mag);
	}
	for (size_t i = 0; i < from->offs.n; i++) {
		struct synth_offs *o = &to->offs;
		if (o->n == o->cap) {
			o->cap = o->cap ? o->cap * 2 : 64;
			o->v = realloc(o->v, o->cap * sizeof(*o->v));
			if (!o->v) {
				fprintf(stderr, "lineage-synth: out of memory merging lanes\n");
				exit(1);
			}
		}
		o->v[o->n++] = from->offs.v[i];
	}
	atomic_fetch_add(&to->strategy_ticks, atomic_load(&from->strategy_ticks));
	atomic_fetch_add(&to->measures, atomic_load(&from->measures));
	atomic_fetch_add(&to->launches, atomic_load(&from->launches));
	atomic_fetch_add(&to->expect_late, atomic_load(&from->expect_late));
	atomic_fetch_add(&to->expect_dropped, atomic_load(&from->expect_dropped));
	atomic_fetch_add(&to->open_records, atomic_load(&from->open_records));
	atomic_fetch_add(&to->batched_records, atomic_load(&from->batched_records));
	atomic_fetch_add(&to->bare_replays, atomic_load(&from->bare_replays));
	if (from->n_samples) {
		double *v = realloc(to->samples, (to->n_samples + from->n_samples) * sizeof(*v));
		if (!v) {
			fprintf(stderr, "lineage-synth: out of memory merging lanes\n");
			exit(1);
		}
		memcpy(v + to->n_samples, from->samples, from->n_samples * sizeof(*v));
		to->samples = v;
		to->n_samples += from->n_samples;
		to->cap_samples = to->n_samples;
	}
}

struct lane_arg {
	struct synth *sx;
	const struct synth_scenario *sc;
	pthread_t th;
};

static void *lane_main(void *arg)
{
	struct lane_arg *a = arg;
	a->sc->run(a->sx);
	return NULL;
}

/* Run the scenario once per lane; lanes > 1 run concurrently, each from its own driver
 * thread on its own pool, sharing the runtime, the simulator and the graph tracker. */
static int run_lanes(struct synth *lanes, uint32_t n, const struct synth_scenario *sc)
{
	if (n == 1) {
		sc->run(&lanes[0]);
		return 0;
	}
	struct lane_arg *a = synth_alloc(n * sizeof(*a));
	uint32_t started = 0;
	int r = 0;
	for (; started < n; started++) {
		a[started] = (struct lane_arg){ .sx = &lanes[started], .sc = sc };
		if ((r = pthread_create(&a[started].th, NULL, lane_main, &a[started])))
			break;
	}
	for (uint32_t i = 0; i < started; i++)
		pthread_join(a[i].th, NULL);
	free(a);
	if (r)
		fprintf(stderr, "lineage-synth: cannot start a lane: %s\n", strerror(r));
	return r ? 1 : 0;
}

static int start_lanes(struct synth *lanes, uint32_t n, const struct synth_opts *o)
{
	for (uint32_t l = 1; l < n; l++) {
		lanes[l].rt = lanes[0].rt;
		lanes[l].sim = lanes[0].sim;
		lanes[l].gt = lanes[0].gt;
	}
	for (uint32_t l = 0; l < n; l++) {
		int r = synth_pool_start(&lanes[l].pool, o->threads);
		if (r) {
			fprintf(stderr, "lineage-synth: cannot start %u threads: %s\n", o->threads,
				strerror(-r));
			return 1;
		}
	}
	return 0;
}

/* Decode the simulated buffers, close the trace, append the clock pair, write the truth. */
static int finish_run(struct synth *sx, struct trace_out *out, const char *trace, const char *truth)
{
	int r = lin_sim_flush(sx->sim);
	if (!r && sx->o.cupti == LIN_SIM_LAYER && sx->o.strategy != SYNTH_EPOCH)
		r = synth_owner_stop();
	if (r)
		fprintf(stderr, "lineage-synth: decoding the simulated buffers failed: %d\n", r);
	lin_graph_tracker_free(sx->gt);
	sx->gt = NULL;
	lin_runtime_free(sx->rt);
	sx->rt = NULL;
	int w = out->failed || !out->clock_done || fclose(out->f) != 0;
	out->f = NULL;
	if (w)
		fprintf(stderr, "lineage-synth: writing %s failed\n", trace);
	int t = synth_truth_write(&sx->truth, truth);
	if (t)
		fprintf(stderr, "lineage-synth: cannot write truth %s: %s\n", truth, strerror(-t));
	const char *ct = sx->o.cause_truth, *st = sx->o.sched_trace;
	int c = ct ? synth_causes_write(&sx->causes, ct) : 0;
	if (c)
		fprintf(stderr, "lineage-synth: cannot write cause truth %s: %s\n", ct, strerror(-c));
	int s = st ? synth_offs_write(&sx->offs, st) : 0;
	if (s)
		fprintf(stderr, "lineage-synth: cannot write %s: %s\n", st, strerror(-s));
	t = t || c || s;
	return r || w || t ? 1 : 0;
}

int synth_run_process(const struct synth_opts *o, const struct synth_scenario *sc,
		      const char *trace, const char *truth, uint32_t drop_permille)
{
	uint32_t n = o->lanes ? o->lanes : 1;
	struct synth *lanes = synth_alloc(n * sizeof(*lanes));
	struct synth *sx = &lanes[0];
	double ns_tick, empty;
	calibrate(&ns_tick, &empty);
	for (uint32_t l = 0; l < n; l++)
		init_lane(&lanes[l], o, l, ns_tick, empty);
	struct lin_sim_opts so = { .sz = sizeof(so),
				   .seed = o->seed,
				   .drop_permille = drop_permille,
				   .host_clock = true,
				   .cupti = o->cupti,
				   .driver = o->driver,
				   .latency_timestamps = o->latency,
				   .api_enter_ns = o->api_enter_ns,
				   .api_exit_ns = o->api_exit_ns };
	struct trace_out out = { .f = fopen(trace, "wb"), .rt = &sx->rt };
	int rc = 0;
	if (!out.f) {
		fprintf(stderr, "lineage-synth: cannot open trace %s: %s\n", trace, strerror(errno));
		rc = 1;
	}
	if (!rc)
		rc = lin_sim_create(NULL, &so, &sx->sim) ? 1 : 0;
	if (!rc) {
		out.clock_off = lin_sim_clock_offset(sx->sim);
		rc = open_runtime(sx, &out) ? 1 : 0;
	}
	if (!rc)
		rc = start_lanes(lanes, n, o);
	if (!rc)
		rc = run_lanes(lanes, n, sc);
	for (uint32_t l = 0; l < n; l++) {
		synth_pool_stop(lanes[l].pool);
		lanes[l].pool = NULL;
	}
	for (uint32_t l = 1; l < n; l++)
		merge_lane(sx, &lanes[l]);
	if (!rc) {
		rc = finish_run(sx, &out, trace, truth);
		report(sx, trace, truth, ns_tick, empty);
	}
	lin_graph_tracker_free(sx->gt);
	lin_runtime_free(sx->rt);
	lin_sim_free(sx->sim);
	if (out.f)
		fclose(out.f);
	for (uint32_t l = 0; l < n; l++)
		close_lane(&lanes[l]);
	free(lanes);
	return rc;
}
