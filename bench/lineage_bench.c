/* SPDX-License-Identifier: MIT */
/*
 * lineage-bench - microbenchmarks of the launch path, measured side by side with the floor
 * (bare TLS read, atomic increment, RCU read-side pair, dependent DRAM miss) in one run so
 * ratios survive a noisy machine.
 *
 * Each case runs many timed batches of BATCH operations; a batch's time / BATCH is one
 * sample. ns_per_op is the median sample, p99_ns the 99th percentile sample (a batch mean,
 * so it bounds sustained slowness, not single outliers). Between batches the runtime's
 * event buffers are flushed outside the timed region so the launch path never runs into a
 * full buffer. Output: one line per case,
 *   SUMMARY bench=<name> threads=<n> ns_per_op=<median> p99_ns=<p99> [extra=...]
 */
#define _LGPL_SOURCE
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <urcu/urcu-bp.h>
#include <urcu/urcu-memb.h>

#include <lineage.h>

#include "bench_common.h"

bool quick;
static FILE *json;
static int json_first = 1;

uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

struct result summarize(double *s, size_t n)
{
	qsort(s, n, sizeof(double), cmp_double);
	struct result r = { s[n / 2], s[(size_t)((double)(n - 1) * 0.99)] };
	return r;
}

/* What report() printed, for bench_median (the RATIO lines). */
static struct {
	char name[48];
	int threads;
	double median;
} reported[128];
static size_t nreported;

double bench_median(const char *name, int threads)
{
	for (size_t i = 0; i < nreported; i++)
		if (reported[i].threads == threads && !strcmp(reported[i].name, name))
			return reported[i].median;
	return NAN;
}

void report(const char *name, int threads, struct result r, const char *extra)
{
	if (nreported < sizeof(reported) / sizeof(reported[0])) {
		snprintf(reported[nreported].name, sizeof(reported[0].name), "%s", name);
		reported[nreported].threads = threads;
		reported[nreported++].median = r.median;
	}
	printf("SUMMARY bench=%s threads=%d ns_per_op=%.2f p99_ns=%.2f%s%s\n", name, threads,
	       r.median, r.p99, extra ? " " : "", extra ? extra : "");
	fflush(stdout);
	if (json) {
		fprintf(json, "%s\n  {\"bench\": \"%s\", \"threads\": %d, \"ns_per_op\": %.3f, \"p99_ns\": %.3f}",
			json_first ? "" : ",", name, threads, r.median, r.p99);
		json_first = 0;
	}
}

/* ------------------------------------------------------------------ the floor */

static __thread uint64_t tls_var;
static _Atomic uint64_t shared_ctr;

size_t nbatches(void) { return quick ? 2000 : 20000; }

/* urcu-bp's cost of a thread's first read lock (its registration), once per thread. */
static void *first_lock_thread(void *arg)
{
	double *out = arg;
	uint64_t t0 = now_ns();
	urcu_bp_read_lock();
	urcu_bp_read_unlock();
	*out = (double)(now_ns() - t0);
	return NULL;
}

static void rcu_bp_first_lock_case(void)
{
	enum { N = 200 };
	double s[N];
	for (int i = 0; i < N; i++) {
		pthread_t th;
		pthread_create(&th, NULL, first_lock_thread, &s[i]);
		pthread_join(th, NULL);
	}
	report("rcu_bp_thread_registration", 1, summarize(s, N), NULL);
}

static double floor_miss_ns; /* floor_dram_miss of this run, for the ratios */

static void floor_cases(void)
{
	size_t nb = nbatches();
	double *s = malloc(nb * sizeof(double));
	uint64_t sink = 0;
	TIME_BATCHES(nb, s, sink += tls_var);
	report("floor_tls_read", 1, summarize(s, nb), NULL);
	TIME_BATCHES(nb, s, atomic_fetch_add_explicit(&shared_ctr, 1, memory_order_relaxed));
	report("floor_atomic_inc", 1, summarize(s, nb), NULL);
	TIME_BATCHES(nb, s, {
		urcu_bp_read_lock();
		urcu_bp_read_unlock();
	});
	report("floor_rcu_read", 1, summarize(s, nb), NULL);
	/* The flavour choice, measured: memb's read side is cheaper but needs every reader
	 * thread registered and unregistered by someone; bp registers on first use. */
	urcu_memb_register_thread();
	TIME_BATCHES(nb, s, {
		urcu_memb_read_lock();
		urcu_memb_read_unlock();
	});
	report("floor_rcu_read_memb", 1, summarize(s, nb), NULL);
	urcu_memb_unregister_thread();
	rcu_bp_first_lock_case();
	TIME_BATCHES(nb, s, sink += now_ns());
	report("floor_clock_gettime", 1, summarize(s, nb), NULL);

	/* Dependent loads through a random cycle over 256 MiB (8x the last-level cache). */
	size_t n = (quick ? 64u : 256u) * 1024 * 1024 / sizeof(size_t);
	size_t *next = malloc(n * sizeof(size_t));
	size_t *perm = malloc(n * sizeof(size_t));
	for (size_t i = 0; i < n; i++)
		perm[i] = i;
	uint64_t x = 88172645463325252ULL;
	for (size_t i = n - 1; i > 0; i--) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		size_t j = x % (i + 1), t = perm[i];
		perm[i] = perm[j];
		perm[j] = t;
	}
	for (size_t i = 0; i < n; i++)
		next[perm[i]] = perm[(i + 1) % n];
	free(perm);
	size_t p = 0, nbm = nb / 10;
	TIME_BATCHES(nbm, s, p = next[p]);
	floor_miss_ns = summarize(s, nbm).median;
	report("floor_dram_miss", 1, summarize(s, nbm), NULL);
	free(next);
	free(s);
	if (p == 1 && sink == 1)
		puts("");
}

/* ------------------------------------------------------------------ launch path */

static int sink_write(const void *b, size_t n, void *u)
{
	(void)b, (void)n, (void)u;
	return 0;
}

static lin_runtime *make_rt(void)
{
	lin_runtime *rt;
	/* Real encoding on the writer thread, output discarded: what a user pays, minus disk. */
	struct lin_runtime_opts o = { .sz = sizeof(o), .trace_write = sink_write, .flush_interval_ms = 10 };
	int err = lin_runtime_create(&o, &rt);
	if (err) {
		fprintf(stderr, "lineage-bench: lin_runtime_create: %s\n", lin_strerror(err));
		exit(1);
	}
	return rt;
}

struct ctx {
	lin_runtime *rt;
	uint64_t req, ep;
	lin_scope rs, es;
	lin_token tok;
};

static void ctx_open(struct ctx *c, lin_runtime *rt)
{
	c->rt = rt;
	lin_request_begin(rt, NULL, &c->req);
	lin_scope_enter(rt, c->req, &c->rs);
	lin_epoch_declare(rt, NULL, &c->ep);
	lin_scope_enter(rt, c->ep, &c->es);
	lin_token_capture(rt, &c->tok);
}

static void ctx_close(struct ctx *c)
{
	lin_scope_exit(c->rt, &c->es);
	lin_scope_exit(c->rt, &c->rs);
}

/* Time @nb batches of an op; flush the runtime's buffers between batches (untimed). */
#define TIME_RT(rt, nb, samples, body) \
	TIME_BATCHES_PRE(nb, samples, if ((b_ & 7) == 0) lin_runtime_flush(rt), body)

static void whole_path_once(struct ctx *c)
{
	lin_token t;
	lin_scope s;
	lin_launch l;
	lin_token_capture(c->rt, &t);
	lin_token_adopt(c->rt, &t, &s);
	lin_launch_begin(c->rt, "bench_kernel", &l);
	lin_launch_end(c->rt, &l);
	lin_scope_exit(c->rt, &s);
}

static void launch_cases(void)
{
	size_t nb = nbatches();
	double *s = malloc(nb * sizeof(double));
	lin_runtime *rt = make_rt();
	struct ctx c;
	ctx_open(&c, rt);
	lin_token t;
	lin_scope sc;
	lin_launch l;
	TIME_RT(rt, nb, s, lin_token_capture(rt, &t));
	report("token_capture", 1, summarize(s, nb), NULL);
	TIME_RT(rt, nb, s, {
		lin_token_adopt(rt, &c.tok, &sc);
		lin_scope_exit(rt, &sc);
	});
	report("adopt_close_warm", 1, summarize(s, nb), NULL);
	TIME_RT(rt, nb, s, {
		lin_launch_begin(rt, "bench_kernel", &l);
		lin_launch_end(rt, &l);
	});
	report("launch_begin_end", 1, summarize(s, nb), NULL);
	TIME_RT(rt, nb, s, whole_path_once(&c));
	report("whole_path", 1, summarize(s, nb), NULL);
	uint64_t ep;
	TIME_RT(rt, nb / 4, s, {
		lin_epoch_declare(rt, NULL, &ep);
		lin_epoch_retire(rt, ep);
	});
	report("epoch_declare_retire", 1, summarize(s, nb / 4), NULL);
	ctx_close(&c);
	struct lin_runtime_stats st = { .sz = sizeof(st) };
	lin_runtime_flush(rt);
	lin_runtime_get_stats(rt, &st);
	if (st.events_dropped)
		fprintf(stderr, "lineage-bench: %llu events dropped\n",
			(unsigned long long)st.events_dropped);
	lin_runtime_free(rt);

	/* The same without capture records. */
	struct lin_runtime_opts o = { .sz = sizeof(o),
				      .trace_write = sink_write,
				      .flags = LIN_RT_NO_CAPTURE_EVENTS };
	lin_runtime_create(&o, &rt);
	ctx_open(&c, rt);
	TIME_RT(rt, nb, s, lin_token_capture(rt, &t));
	report("token_capture_no_record", 1, summarize(s, nb), NULL);
	ctx_close(&c);
	lin_runtime_free(rt);

	/* LIN_RT_LEAN_TIMESTAMPS: captures and scope closes read no clock. */
	o.flags = LIN_RT_LEAN_TIMESTAMPS;
	lin_runtime_create(&o, &rt);
	ctx_open(&c, rt);
	TIME_RT(rt, nb, s, lin_token_capture(rt, &t));
	report("token_capture_lean", 1, summarize(s, nb), NULL);
	TIME_RT(rt, nb, s, {
		lin_token_adopt(rt, &c.tok, &sc);
		lin_scope_exit(rt, &sc);
	});
	report("adopt_close_warm_lean", 1, summarize(s, nb), NULL);
	TIME_RT(rt, nb, s, whole_path_once(&c));
	report("whole_path_lean", 1, summarize(s, nb), NULL);
	ctx_close(&c);
	lin_runtime_free(rt);
	free(s);
}

/* Adopt+close and lookup over @n live epochs, visited in random order. */
static void cold_cases(size_t n, const char *suffix)
{
	lin_runtime *rt = make_rt();
	uint64_t req;
	lin_scope rs;
	lin_request_begin(rt, NULL, &req);
	lin_scope_enter(rt, req, &rs);
	lin_token *tok = malloc(n * sizeof(*tok));
	uint64_t *ids = malloc(n * sizeof(*ids));
	struct lin_epoch_opts eo = { .sz = sizeof(eo), .requests = &req, .n_requests = 1 };
	for (size_t i = 0; i < n; i++) {
		if (lin_epoch_declare(rt, &eo, &ids[i]) || lin_token_make(rt, ids[i], &tok[i])) {
			fprintf(stderr, "lineage-bench: declare failed at %zu\n", i);
			exit(1);
		}
		if ((i & 4095) == 0)
			lin_runtime_flush(rt);
	}
	uint64_t x = 0x9e3779b97f4a7c15ULL;
	for (size_t i = n - 1; i > 0; i--) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		size_t j = x % (i + 1);
		lin_token tt = tok[i];
		tok[i] = tok[j];
		tok[j] = tt;
		uint64_t ti = ids[i];
		ids[i] = ids[j];
		ids[j] = ti;
	}
	size_t nb = n / BATCH < nbatches() ? n / BATCH : nbatches();
	if (nb < 8)
		nb = 8;
	double *s = malloc(nb * sizeof(double));
	size_t k = 0;
	lin_scope sc;
	char name[64];
	TIME_RT(rt, nb, s, {
		lin_token_adopt(rt, &tok[k], &sc);
		lin_scope_exit(rt, &sc);
		k = k + 1 == n ? 0 : k + 1;
	});
	snprintf(name, sizeof(name), "adopt_close_cold_%s", suffix);
	report(name, 1, summarize(s, nb), NULL);
	/* The latency one worker sees: each adopt's check waits for its slot before anything
	 * after it starts (lfence: no later load is issued until the earlier ones have their
	 * data), so the misses do not overlap as in the loop above. The tokens are read in
	 * order (the prefetcher brings them); the slots are visited at random. */
	k = 0;
	TIME_RT(rt, nb, s, {
		lin_token_adopt(rt, &tok[k], &sc);
		__builtin_ia32_lfence();
		lin_scope_exit(rt, &sc);
		k = k + 1 == n ? 0 : k + 1;
	});
	snprintf(name, sizeof(name), "adopt_cold_dependent_%s", suffix);
	struct result dep = summarize(s, nb);
	report(name, 1, dep, NULL);
	if (floor_miss_ns > 0)
		printf("RATIO %s/floor_dram_miss=%.2f\n", name, dep.median / floor_miss_ns);
	k = 0;
	struct lin_entity_info info = { .sz = sizeof(info) };
	TIME_RT(rt, nb, s, {
		lin_entity_lookup(rt, ids[k], &info, NULL, 0);
		k = k + 1 == n ? 0 : k + 1;
	});
	snprintf(name, sizeof(name), "registry_lookup_%s", suffix);
	report(name, 1, summarize(s, nb), NULL);
	free(s);
	free(tok);
	free(ids);
	lin_scope_exit(rt, &rs);
	lin_runtime_free(rt);
}

/* ------------------------------------------------------------------ threads */

struct tharg {
	lin_runtime *rt;
	pthread_barrier_t *bar;
	size_t nb;
	double *s;
};

static void *whole_path_thread(void *arg)
{
	struct tharg *a = arg;
	struct ctx c;
	ctx_open(&c, a->rt);
	pthread_barrier_wait(a->bar);
	for (size_t b = 0; b < a->nb; b++) {
		uint64_t t0 = now_ns();
		for (int i = 0; i < BATCH; i++)
			whole_path_once(&c);
		a->s[b] = (double)(now_ns() - t0) / BATCH;
		/* Keep well inside the event buffer: the writer drains concurrently. */
		if ((b & 15) == 15) {
			struct timespec ts = { 0, 200000 };
			nanosleep(&ts, NULL);
		}
	}
	ctx_close(&c);
	return NULL;
}

/*
 * Scaling of the launch path itself: the runtime writes no trace here (its writer only
 * empties the buffers), because with every thread launching flat out the encoder, not the
 * launch path, is the bottleneck and a full buffer's drop path would flatter the figure.
 * The encoder's own rate is what the single-thread cases above include.
 */
static void thread_cases(int nthreads)
{
	lin_runtime *rt;
	struct lin_runtime_opts o = { .sz = sizeof(o),
				      .flush_interval_ms = 1,
				      .thread_buffer_events = 1u << 18 };
	lin_runtime_create(&o, &rt);
	pthread_barrier_t bar;
	pthread_barrier_init(&bar, NULL, (unsigned)nthreads);
	pthread_t th[64];
	struct tharg a[64];
	size_t nb = nbatches() / 4;
	for (int i = 0; i < nthreads; i++) {
		a[i] = (struct tharg){ rt, &bar, nb, malloc(nb * sizeof(double)) };
		pthread_create(&th[i], NULL, whole_path_thread, &a[i]);
	}
	double *all = malloc(nb * (size_t)nthreads * sizeof(double));
	for (int i = 0; i < nthreads; i++) {
		pthread_join(th[i], NULL);
		memcpy(all + (size_t)i * nb, a[i].s, nb * sizeof(double));
		free(a[i].s);
	}
	struct lin_runtime_stats st = { .sz = sizeof(st) };
	lin_runtime_flush(rt);
	lin_runtime_get_stats(rt, &st);
	char extra[64];
	snprintf(extra, sizeof(extra), "dropped=%llu", (unsigned long long)st.events_dropped);
	report("whole_path", nthreads, summarize(all, nb * (size_t)nthreads), extra);
	free(all);
	pthread_barrier_destroy(&bar);
	lin_runtime_free(rt);
}

/* ------------------------------------------------------------------ what a user pays */

/* A backend shaped like CUPTI's external correlation: a per-thread stack of ids per kind,
 * pushed and popped on the launching thread (cuptiActivityPush/PopExternalCorrelationId). */
static __thread uint64_t ext_stack[8][32];
static __thread uint32_t ext_depth[8];

static int stack_push(void *ctx, uint32_t kind, uint64_t id)
{
	(void)ctx;
	if (kind >= 8 || ext_depth[kind] >= 32)
		return -1;
	ext_stack[kind][ext_depth[kind]++] = id;
	return 0;
}

static int stack_pop(void *ctx, uint32_t kind, uint64_t *id)
{
	(void)ctx;
	if (kind >= 8 || !ext_depth[kind])
		return -1;
	uint64_t v = ext_stack[kind][--ext_depth[kind]];
	if (id)
		*id = v;
	return 0;
}

static const struct lin_backend_ops stack_ops = { .sz = sizeof(stack_ops),
						  .name = "stack",
						  .push = stack_push,
						  .pop = stack_pop };

static uint64_t cpu_ns(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

struct allin_arg {
	lin_runtime *rt;
	pthread_barrier_t *bar;
	size_t chunks;
	uint64_t thread_ns; /* out: this thread's CPU in the launch loops */
};

#define ALLIN_CHUNK 2048 /* launches between flushes: inside the default buffer */

static void *allin_thread(void *arg)
{
	struct allin_arg *a = arg;
	struct ctx c;
	ctx_open(&c, a->rt);
	pthread_barrier_wait(a->bar);
	for (size_t k = 0; k < a->chunks; k++) {
		uint64_t t0 = cpu_ns(CLOCK_THREAD_CPUTIME_ID);
		for (int i = 0; i < ALLIN_CHUNK; i++)
			whole_path_once(&c);
		a->thread_ns += cpu_ns(CLOCK_THREAD_CPUTIME_ID) - t0;
		pthread_barrier_wait(a->bar); /* all threads' chunks done */
		pthread_barrier_wait(a->bar); /* ... and encoded (main flushed) */
	}
	ctx_close(&c);
	return NULL;
}

/*
 * all_in: what one launch costs the process, on every thread: capture + adopt + launch
 * bracket (pushing and popping through a CUPTI-shaped per-thread stack) + close on the
 * launching threads, plus the writer's encoding of their events into msgpack (output
 * discarded). Process CPU time over the whole run (CLOCK_PROCESS_CPUTIME_ID: the writer
 * thread and the flushes included) / launches; launch_path_ns is the launching threads'
 * own CPU in their loops; writer_ns_per_launch the rest. Chunks of ALLIN_CHUNK launches
 * per thread are flushed between them, so nothing is dropped (dropped= says so).
 */
static void allin_case(int nthreads)
{
	lin_runtime *rt;
	struct lin_runtime_opts o = { .sz = sizeof(o),
				      .trace_write = sink_write,
				      .backend = LIN_BACKEND_CUSTOM,
				      .backend_ops = &stack_ops };
	if (lin_runtime_create(&o, &rt)) {
		fprintf(stderr, "lineage-bench: all_in: lin_runtime_create failed\n");
		return;
	}
	size_t chunks = quick ? 16 : 256;
	pthread_barrier_t bar;
	pthread_barrier_init(&bar, NULL, (unsigned)nthreads + 1);
	pthread_t th[8];
	struct allin_arg a[8];
	struct lin_runtime_stats st0 = { .sz = sizeof(st0) }, st1 = { .sz = sizeof(st1) };
	lin_runtime_flush(rt);
	lin_runtime_get_stats(rt, &st0);
	for (int i = 0; i < nthreads; i++) {
		a[i] = (struct allin_arg){ rt, &bar, chunks, 0 };
		pthread_create(&th[i], NULL, allin_thread, &a[i]);
	}
	pthread_barrier_wait(&bar);
	uint64_t p0 = cpu_ns(CLOCK_PROCESS_CPUTIME_ID);
	for (size_t k = 0; k < chunks; k++) {
		pthread_barrier_wait(&bar);
		lin_runtime_flush(rt);
		pthread_barrier_wait(&bar);
	}
	uint64_t p1 = cpu_ns(CLOCK_PROCESS_CPUTIME_ID);
	for (int i = 0; i < nthreads; i++)
		pthread_join(th[i], NULL);
	lin_runtime_get_stats(rt, &st1);
	double launches = (double)chunks * ALLIN_CHUNK * nthreads;
	uint64_t launch_ns = 0;
	for (int i = 0; i < nthreads; i++)
		launch_ns += a[i].thread_ns;
	/* The main thread's CPU (its flush calls) is in the process figure and so in the
	 * writer's share: encoding done on the writer's behalf. */
	double all = (double)(p1 - p0) / launches, lp = (double)launch_ns / launches;
	double bytes = (double)(st1.bytes_written - st0.bytes_written) / launches;
	printf("SUMMARY bench=all_in threads=%d ns_per_launch=%.1f launch_path_ns=%.1f "
	       "writer_ns_per_launch=%.1f bytes_per_launch=%.1f dropped=%llu\n",
	       nthreads, all, lp, all - lp, bytes,
	       (unsigned long long)(st1.events_dropped - st0.events_dropped));
	double ev = (double)(st1.events - st0.events) / launches;
	printf("SUMMARY bench=writer_encode threads=%d ns_per_event=%.1f events_per_launch=%.2f\n",
	       nthreads, ev > 0 ? (all - lp) / ev : 0, ev);
	if (json) {
		fprintf(json,
			"%s\n  {\"bench\":\"all_in\",\"threads\":%d,\"ns_per_launch\":%.2f,"
			"\"launch_path_ns\":%.2f,\"writer_ns_per_launch\":%.2f,\"bytes_per_launch\":%.2f}",
			json_first ? "" : ",", nthreads, all, lp, all - lp, bytes);
		json_first = 0;
	}
	pthread_barrier_destroy(&bar);
	lin_runtime_free(rt);
}

/*
 * whole_path_cross_thread: the same path split as it runs in a pool: one thread captures
 * a ring of tokens (each in its own 64-byte slot, 4 MiB in all: out of the caches by the
 * time they are read), then another adopts each, launches and closes. ns_per_op = both
 * threads' time / tokens; compare with whole_path (one thread, one hot token).
 */
#define XT_RING (1u << 16)
struct xt_tok {
	lin_token t;
	char pad[64 - sizeof(lin_token)];
};
struct xt_arg {
	lin_runtime *rt;
	struct xt_tok *ring;
	uint64_t ep;
	pthread_barrier_t *bar;
	size_t rounds;
	uint64_t ns;
};

static void *xt_capture(void *arg)
{
	struct xt_arg *a = arg;
	lin_scope es;
	lin_scope_enter(a->rt, a->ep, &es);
	for (size_t r = 0; r < a->rounds; r++) {
		pthread_barrier_wait(a->bar);
		uint64_t t0 = now_ns();
		for (uint32_t i = 0; i < XT_RING; i++)
			lin_token_capture(a->rt, &a->ring[i].t);
		a->ns += now_ns() - t0;
		pthread_barrier_wait(a->bar);
	}
	lin_scope_exit(a->rt, &es);
	return NULL;
}

static void *xt_launch(void *arg)
{
	struct xt_arg *a = arg;
	for (size_t r = 0; r < a->rounds; r++) {
		pthread_barrier_wait(a->bar);
		pthread_barrier_wait(a->bar); /* the ring is full */
		uint64_t t0 = now_ns();
		for (uint32_t i = 0; i < XT_RING; i++) {
			lin_scope s;
			lin_launch l;
			lin_token_adopt(a->rt, &a->ring[i].t, &s);
			lin_launch_begin(a->rt, "bench_kernel", &l);
			lin_launch_end(a->rt, &l);
			lin_scope_exit(a->rt, &s);
		}
		a->ns += now_ns() - t0;
		lin_runtime_flush(a->rt);
	}
	return NULL;
}

static void cross_thread_case(void)
{
	lin_runtime *rt = make_rt();
	uint64_t req, ep;
	lin_scope rs;
	lin_request_begin(rt, NULL, &req);
	lin_scope_enter(rt, req, &rs);
	lin_epoch_declare(rt, NULL, &ep);
	lin_scope_exit(rt, &rs);
	struct xt_tok *ring = aligned_alloc(64, XT_RING * sizeof(*ring));
	pthread_barrier_t bar;
	pthread_barrier_init(&bar, NULL, 2);
	size_t rounds = quick ? 2 : 16;
	struct xt_arg ca = { rt, ring, ep, &bar, rounds, 0 }, la = ca;
	pthread_t t1, t2;
	pthread_create(&t1, NULL, xt_capture, &ca);
	pthread_create(&t2, NULL, xt_launch, &la);
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);
	double ops = (double)rounds * XT_RING;
	printf("SUMMARY bench=whole_path_cross_thread threads=2 ns_per_op=%.2f capture_ns=%.2f "
	       "adopt_launch_close_ns=%.2f\n",
	       (double)(ca.ns + la.ns) / ops, (double)ca.ns / ops, (double)la.ns / ops);
	pthread_barrier_destroy(&bar);
	free(ring);
	lin_runtime_free(rt);
}

/*
 * sustained: whole-path launches paced at @rate per thread for @secs seconds on @nthreads
 * threads, with the runtime's default options (buffers, writer period), the output
 * discarded. dropped= is what a serving loop at that rate would lose.
 */
struct sus_arg {
	lin_runtime *rt;
	pthread_barrier_t *bar;
	double rate, secs;
	uint64_t done;
};

static void *sus_thread(void *arg)
{
	struct sus_arg *a = arg;
	struct ctx c;
	ctx_open(&c, a->rt);
	pthread_barrier_wait(a->bar);
	uint64_t t0 = now_ns(), end = t0 + (uint64_t)(a->secs * 1e9);
	double gap = 1e9 / a->rate;
	uint64_t n = 0;
	for (;;) {
		uint64_t t = now_ns();
		if (t >= end)
			break;
		uint64_t due = (uint64_t)((double)(t - t0) / gap) + 1;
		while (n < due) {
			whole_path_once(&c);
			n++;
		}
	}
	a->done = n;
	ctx_close(&c);
	return NULL;
}

static void sustained_case(int nthreads, double rate, double secs)
{
	lin_runtime *rt;
	struct lin_runtime_opts o = { .sz = sizeof(o), .trace_write = sink_write };
	if (lin_runtime_create(&o, &rt))
		return;
	pthread_barrier_t bar;
	pthread_barrier_init(&bar, NULL, (unsigned)nthreads);
	pthread_t th[8];
	struct sus_arg a[8];
	for (int i = 0; i < nthreads; i++) {
		a[i] = (struct sus_arg){ rt, &bar, rate, secs, 0 };
		pthread_create(&th[i], NULL, sus_thread, &a[i]);
	}
	uint64_t done = 0;
	for (int i = 0; i < nthreads; i++) {
		pthread_join(th[i], NULL);
		done += a[i].done;
	}
	struct lin_runtime_stats st = { .sz = sizeof(st) };
	lin_runtime_flush(rt);
	lin_runtime_get_stats(rt, &st);
	printf("SUMMARY bench=sustained threads=%d rate_per_thread=%.0f seconds=%.1f "
	       "achieved_per_thread=%.0f events=%llu dropped=%llu\n",
	       nthreads, rate, secs, (double)done / nthreads / secs, (unsigned long long)st.events,
	       (unsigned long long)st.events_dropped);
	pthread_barrier_destroy(&bar);
	lin_runtime_free(rt);
}

static void usage(FILE *f)
{
	fputs("Usage: lineage-bench [--quick] [--json FILE] [--no-cold]\n"
	      "\n"
	      "Runs the launch-path microbenchmarks beside the machine's floor and prints one\n"
	      "line per case:\n"
	      "  SUMMARY bench=<name> threads=<n> ns_per_op=<median> p99_ns=<p99>\n"
	      "ns_per_op is the time one thread spends per operation (median of batch means of\n"
	      "256 operations); p99_ns the 99th percentile batch mean.\n"
	      "\n"
	      "What a launch costs the process (docs/bench.md):\n"
	      "  SUMMARY bench=all_in threads=<n> ns_per_launch= launch_path_ns=\n"
	      "      writer_ns_per_launch= bytes_per_launch= dropped=\n"
	      "      process CPU (every thread) per whole-path launch with a CUPTI-shaped\n"
	      "      push/pop backend, split into the launching threads' and the writer's\n"
	      "  SUMMARY bench=writer_encode ...      the writer's share per event\n"
	      "  SUMMARY bench=whole_path_cross_thread threads=2 ...  capture on one thread,\n"
	      "      adopt + launch + close on another, tokens out of cache\n"
	      "  SUMMARY bench=sustained ...  launches paced at 1M/s on one thread and\n"
	      "      500K/s on two for 10 s (1 s with --quick), default options: dropped=\n"
	      "  SUMMARY bench=adopt_cold_dependent_1e6|1e7 ...  adopt latency over 1e6/1e7\n"
	      "      live epochs as a dependent chain, with its RATIO to floor_dram_miss\n"
	      "\n"
	      "Then real tracers and the recording floor, side by side in the same run:\n"
	      "  SUMMARY bench=peer_lttng_ust ...    an LTTng-UST tracepoint with the launch\n"
	      "      record's fields, recorded by a session daemon and session of its own in a\n"
	      "      temporary directory (skipped=\"why\" when LTTng cannot run here)\n"
	      "  SUMMARY bench=peer_nvtx ...         nvtxRangePushA + nvtxRangePop, no tool attached\n"
	      "  SUMMARY bench=floor_clock_ring ...  clock_gettime + a 32-byte store into a\n"
	      "      per-thread ring: the cheapest way to record an event\n"
	      "  RATIO whole_path/peer_lttng_ust=<x> whole_path/peer_nvtx=<y> whole_path/floor_clock_ring=<z>\n"
	      "\n"
	      "Then the host scheduling collector (LIN_RT_SCHED_EVENTS), off and on alternated:\n"
	      "  SUMMARY bench=sched_switch case=off|on ns_cpu_per_switch= ...  process CPU per\n"
	      "      context switch of two threads ping-ponging through pipes\n"
	      "  SUMMARY bench=sched_switch_delta ns_cpu_per_switch=  on less off\n"
	      "  SUMMARY bench=sched_thread fds_per_thread= ring_kib_per_thread=\n"
	      "      register_us_off= register_us_on=  what each registered thread holds\n"
	      "  (skipped=\"why\" where the kernel refuses the collector)\n"
	      "\n"
	      "  --quick      a few seconds in all (CI); fewer batches, smaller tables\n"
	      "  --json FILE  also write the results as a JSON array\n"
	      "  --no-cold    skip the large-table cases (1e6 and 1e7 live epochs)\n"
	      "  --only-sched only the host scheduling collector's cost (below)\n"
	      "  -h, --help   this text\n",
	      f);
}

int main(int argc, char **argv)
{
	bool cold = true, only_sched = false;
	static const struct option opts[] = {
		{ "quick", no_argument, NULL, 'q' },   { "json", required_argument, NULL, 'j' },
		{ "no-cold", no_argument, NULL, 'c' }, { "only-sched", no_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },    { 0 }
	};
	int ch;
	while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (ch) {
		case 'q': quick = true; break;
		case 'c': cold = false; break;
		case 's': only_sched = true; break;
		case 'j':
			json = fopen(optarg, "w");
			if (!json) {
				fprintf(stderr, "lineage-bench: cannot write %s: %s\n", optarg,
					strerror(errno));
				return 2;
			}
			fputs("[", json);
			break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 64;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return 64;
	}
	if (only_sched) {
		sched_cases();
		return 0;
	}
	floor_cases();
	launch_cases();
	cold_cases(1000, "1e3");
	cold_cases(100000, "1e5");
	if (cold) {
		cold_cases(1000000, "1e6");
		if (!quick)
			cold_cases(10000000, "1e7");
	}
	thread_cases(1);
	thread_cases(2);
	thread_cases(8);
	allin_case(1);
	allin_case(2);
	cross_thread_case();
	sustained_case(1, 1e6, quick ? 1 : 10);
	sustained_case(2, 5e5, quick ? 1 : 10);
	peer_cases(bench_median("whole_path", 1));
	sched_cases();
	if (json) {
		fputs("\n]\n", json);
		fclose(json);
	}
	return 0;
}
