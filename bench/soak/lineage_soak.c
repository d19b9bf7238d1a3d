/* SPDX-License-Identifier: MIT */
/*
 * lineage-soak - continuous traffic through thread-pool handoffs and graph replays, with
 * every epoch and request retired, to show that resident memory and the registry stay flat.
 *
 *   lineage-soak [--requests N] [--workers W] [--replay-every K] [--trace PATH]
 *                [--otlp PATH]
 *
 * Prints one line:
 *   SUMMARY bench=soak requests=N seconds=S rss_warm_kib=A rss_end_kib=B
 *           live_epochs_end=E live_requests_end=Q events=V dropped=D
 * rss_warm is taken after 10% of the requests (allocator and buffers warmed up). Exit
 * status 0 when the registry ends empty, 1 otherwise, 64 on usage errors.
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <lineage.h>
#include <lineage/otlp.h>

#define QCAP 4096

struct item {
	lin_token tok;
	uint64_t ep;
	uint64_t req;
	bool replay;
};

struct queue {
	pthread_mutex_t mu;
	pthread_cond_t nonempty, nonfull;
	struct item q[QCAP];
	size_t head, tail;
	bool closed;
};

struct soak {
	lin_runtime *rt;
	lin_graph_tracker *gt;
	struct queue q;
	_Atomic long done;
	long fail;
};

static void q_push(struct queue *q, const struct item *it)
{
	pthread_mutex_lock(&q->mu);
	while (q->tail - q->head == QCAP)
		pthread_cond_wait(&q->nonfull, &q->mu);
	q->q[q->tail++ % QCAP] = *it;
	pthread_cond_signal(&q->nonempty);
	pthread_mutex_unlock(&q->mu);
}

static bool q_pop(struct queue *q, struct item *it)
{
	pthread_mutex_lock(&q->mu);
	while (q->tail == q->head && !q->closed)
		pthread_cond_wait(&q->nonempty, &q->mu);
	bool ok = q->tail != q->head;
	if (ok) {
		*it = q->q[q->head++ % QCAP];
		pthread_cond_signal(&q->nonfull);
	}
	pthread_mutex_unlock(&q->mu);
	return ok;
}

static long rss_kib(void)
{
	long pages = 0, rss = 0;
	FILE *f = fopen("/proc/self/statm", "r");
	if (!f)
		return -1;
	if (fscanf(f, "%ld %ld", &pages, &rss) != 2)
		rss = -1;
	fclose(f);
	return rss < 0 ? -1 : rss * (sysconf(_SC_PAGESIZE) / 1024);
}

static int noop_push(void *ctx, uint32_t kind, uint64_t id)
{
	(void)ctx, (void)kind, (void)id;
	return 0;
}

static int noop_pop(void *ctx, uint32_t kind, uint64_t *id)
{
	(void)ctx, (void)kind;
	*id = 0;
	return 0;
}

/* The pop check compares the popped id; a per-thread stack keeps it honest. */
static __thread uint64_t be_stack[16];
static __thread int be_depth;

static int stack_push(void *ctx, uint32_t kind, uint64_t id)
{
	(void)ctx, (void)kind;
	if (be_depth == 16)
		return -ENOSPC;
	be_stack[be_depth++] = id;
	return 0;
}

static int stack_pop(void *ctx, uint32_t kind, uint64_t *id)
{
	(void)ctx, (void)kind;
	if (!be_depth)
		return -ENOENT;
	*id = be_stack[--be_depth];
	return 0;
}

static void *worker(void *arg)
{
	struct soak *s = arg;
	struct item it;
	while (q_pop(&s->q, &it)) {
		lin_scope sc;
		if (lin_token_adopt(s->rt, &it.tok, &sc)) {
			s->fail++;
			continue;
		}
		if (it.replay) {
			lin_graph_launch gl;
			lin_graph_launch_begin(s->gt, 1, "soak_graph", &gl);
			lin_graph_launch_end(s->gt, &gl);
		} else {
			lin_launch l;
			lin_launch_begin(s->rt, "soak_kernel", &l);
			lin_launch_end(s->rt, &l);
		}
		lin_scope_exit(s->rt, &sc);
		lin_epoch_retire(s->rt, it.ep);
		lin_request_end(s->rt, it.req);
		atomic_fetch_add(&s->done, 1);
	}
	return NULL;
}

static int discard(const void *b, size_t n, void *u)
{
	(void)b, (void)n, (void)u;
	return 0;
}

static void usage(FILE *f)
{
	fputs("Usage: lineage-soak [--requests N] [--workers W] [--replay-every K] [--trace PATH]\n"
	      "                    [--otlp PATH]\n"
	      "Pushes N requests (default 1000000) through a pool of W workers (default 2); every\n"
	      "K-th (default 8) is a graph replay. The trace is discarded unless PATH is given.\n"
	      "--otlp also streams the run as OTLP/JSON spans to PATH (the OTLP tap, lin_otlp_tap).\n"
	      "Prints a SUMMARY line with resident memory and registry size; exit 0 when the\n"
	      "registry ends empty, 1 otherwise, 64 on usage errors.\n",
	      f);
}

int main(int argc, char **argv)
{
	long nreq = 1000000, every = 8;
	int nworkers = 2;
	const char *trace = NULL, *otlp = NULL;
	static const struct option opts[] = { { "requests", required_argument, NULL, 'n' },
					      { "workers", required_argument, NULL, 'w' },
					      { "replay-every", required_argument, NULL, 'k' },
					      { "trace", required_argument, NULL, 't' },
					      { "otlp", required_argument, NULL, 'o' },
					      { "help", no_argument, NULL, 'h' },
					      { 0 } };
	int ch;
	while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (ch) {
		case 'n': nreq = atol(optarg); break;
		case 'w': nworkers = atoi(optarg); break;
		case 'k': every = atol(optarg); break;
		case 't': trace = optarg; break;
		case 'o': otlp = optarg; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 64;
		}
	}
	if (nreq <= 0 || nworkers <= 0 || nworkers > 64 || every <= 0 || optind != argc) {
		usage(stderr);
		return 64;
	}
	struct soak s = { 0 };
	(void)noop_push, (void)noop_pop;
	struct lin_backend_ops be = { .sz = sizeof(be), .name = "soak", .push = stack_push, .pop = stack_pop };
	struct lin_runtime_opts o = { .sz = sizeof(o),
				      .backend = LIN_BACKEND_CUSTOM,
				      .backend_ops = &be,
				      .trace_path = trace,
				      .trace_write = trace ? NULL : discard,
				      .flush_interval_ms = 10 };
	struct lin_otlp_opts so = { .sz = sizeof(so), .path = otlp };
	struct lin_tap_spec tap = lin_otlp_tap(&so);
	if (otlp) {
		o.taps = &tap;
		o.ntaps = 1;
	}
	int err = lin_runtime_create(&o, &s.rt);
	if (!err)
		err = lin_graph_tracker_create(s.rt, NULL, &s.gt);
	if (err) {
		fprintf(stderr, "lineage-soak: %s\n", lin_strerror(err));
		return 1;
	}
	pthread_mutex_init(&s.q.mu, NULL);
	pthread_cond_init(&s.q.nonempty, NULL);
	pthread_cond_init(&s.q.nonfull, NULL);
	lin_graph_exec_instantiated(s.gt, 1, 1);
	pthread_t th[64];
	for (int i = 0; i < nworkers; i++)
		pthread_create(&th[i], NULL, worker, &s);

	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	long rss_warm = -1;
	for (long i = 0; i < nreq; i++) {
		struct item it = { .replay = (i % every) == every - 1 };
		lin_scope rs, es;
		lin_request_begin(s.rt, NULL, &it.req);
		lin_scope_enter(s.rt, it.req, &rs);
		lin_epoch_declare(s.rt, NULL, &it.ep);
		lin_scope_enter(s.rt, it.ep, &es);
		lin_token_capture(s.rt, &it.tok);
		lin_scope_exit(s.rt, &es);
		lin_scope_exit(s.rt, &rs);
		q_push(&s.q, &it);
		if (i == nreq / 10) {
			while (atomic_load(&s.done) < i - QCAP)
				usleep(100);
			lin_runtime_flush(s.rt);
			rss_warm = rss_kib();
		}
	}
	pthread_mutex_lock(&s.q.mu);
	s.q.closed = true;
	pthread_cond_broadcast(&s.q.nonempty);
	pthread_mutex_unlock(&s.q.mu);
	for (int i = 0; i < nworkers; i++)
		pthread_join(th[i], NULL);
	lin_runtime_flush(s.rt);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	long rss_end = rss_kib();
	struct lin_runtime_stats st = { .sz = sizeof(st) };
	lin_runtime_get_stats(s.rt, &st);
	double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	printf("SUMMARY bench=soak requests=%ld seconds=%.2f rss_warm_kib=%ld rss_end_kib=%ld "
	       "live_epochs_end=%llu live_requests_end=%llu events=%llu dropped=%llu adopt_failures=%ld\n",
	       nreq, secs, rss_warm, rss_end, (unsigned long long)st.live_epochs,
	       (unsigned long long)st.live_requests, (unsigned long long)st.events,
	       (unsigned long long)st.events_dropped, s.fail);
	bool empty = st.live_epochs == 0 && st.live_requests == 0 && s.fail == 0;
	lin_graph_tracker_free(s.gt);
	lin_runtime_free(s.rt);
	return empty ? 0 : 1;
}
