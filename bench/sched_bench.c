/* SPDX-License-Identifier: MIT */
/*
 * sched_bench.c - what the host scheduling collector (LIN_RT_SCHED_EVENTS,
 * lineage/hostsched.c) costs, beside the launch path's figures (docs/bench.md):
 *   SUMMARY bench=sched_switch case=off|on ns_cpu_per_switch= switches= rounds=
 *       two registered threads ping-pong through pipes (each hop blocks one and wakes the
 *       other: two context switches); the process's CPU (every thread: the kernel's work
 *       writing switch records, the writer's draining and encoding) per context switch,
 *       collector off and on, alternated in one run, the median of 5 pairs
 *   SUMMARY bench=sched_switch_delta ns_cpu_per_switch=  on less off
 *   SUMMARY bench=sched_thread fds_per_thread= ring_kib_per_thread= register_us_off=
 *       register_us_on=  what a thread's registration opens and pins (/proc/self/fd,
 *       perf ring mappings in /proc/self/maps), and its first call's wall time (median of 16 threads)
 * Where the kernel refuses the collector: SUMMARY bench=sched_switch skipped="<why>".
 * The launch path does nothing more with the collector on: it has no line of its own.
 */
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <lineage.h>

#include "bench_common.h"

static char header_status[192];

/* Keep the header's host_sched value (the first write is the header). */
static int sink(const void *b, size_t n, void *u)
{
	(void)u;
	const char *k = memmem(b, n, "host_sched", 10);
	if (k && !header_status[0]) {
		const unsigned char *p = (const unsigned char *)k + 10;
		size_t len = 0;
		if (*p >= 0xa0 && *p <= 0xbf)
			len = *p++ & 0x1f;
		else if (*p == 0xd9)
			len = p[1], p += 2;
		if (len >= sizeof(header_status))
			len = sizeof(header_status) - 1;
		memcpy(header_status, p, len);
		header_status[len] = 0;
	}
	return 0;
}

static lin_runtime *rt_new(bool on)
{
	lin_runtime *rt = NULL;
	struct lin_runtime_opts o = { .sz = sizeof(o),
				      .trace_write = sink,
				      .flush_interval_ms = 10,
				      .flags = on ? LIN_RT_SCHED_EVENTS : 0 };
	if (lin_runtime_create(&o, &rt)) {
		fprintf(stderr, "lineage-bench: lin_runtime_create failed\n");
		exit(1);
	}
	return rt;
}

static uint64_t proc_cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

struct pong {
	lin_runtime *rt;
	int in, out, rounds;
	long switches;
};

static void *ponger(void *arg)
{
	struct pong *p = arg;
	uint64_t req;
	lin_request_begin(p->rt, NULL, &req); /* registers: its ring is opened */
	char c = 0;
	struct rusage r0, r1;
	getrusage(RUSAGE_THREAD, &r0);
	for (int i = 0; i < p->rounds; i++) {
		if (read(p->in, &c, 1) != 1 || write(p->out, &c, 1) != 1)
			break;
	}
	getrusage(RUSAGE_THREAD, &r1);
	p->switches = (r1.ru_nvcsw - r0.ru_nvcsw) + (r1.ru_nivcsw - r0.ru_nivcsw);
	lin_request_end(p->rt, req);
	return NULL;
}

/* One run: CPU per context switch of the two threads. */
static double pingpong(bool on, int rounds, long *switches)
{
	lin_runtime *rt = rt_new(on);
	int a[2], b[2];
	if (pipe(a) || pipe(b))
		exit(1);
	struct pong x = { rt, a[0], b[1], rounds, 0 }, y = { rt, b[0], a[1], rounds, 0 };
	pthread_t tx, ty;
	uint64_t c0 = proc_cpu_ns();
	pthread_create(&tx, NULL, ponger, &x);
	pthread_create(&ty, NULL, ponger, &y);
	char c = 1;
	if (write(a[1], &c, 1) != 1) /* the first hop */
		exit(1);
	pthread_join(tx, NULL);
	pthread_join(ty, NULL);
	lin_runtime_free(rt); /* the last drain is part of the cost */
	uint64_t c1 = proc_cpu_ns();
	close(a[0]), close(a[1]), close(b[0]), close(b[1]);
	*switches = x.switches + y.switches;
	return *switches ? (double)(c1 - c0) / (double)*switches : 0;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static long count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	long n = 0;
	if (!d)
		return -1;
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

/* KiB of perf ring mappings in the process (/proc/self/maps): the kernel pins them and
 * counts them against the user's perf_event_mlock_kb, then RLIMIT_MEMLOCK. */
static long ring_kib(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	long kib = 0;
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long a, b;
		if (strstr(line, "perf_event") && sscanf(line, "%lx-%lx", &a, &b) == 2)
			kib += (long)((b - a) / 1024);
	}
	fclose(f);
	return kib;
}

#define NTHREADS 16

struct holder {
	lin_runtime *rt;
	pthread_barrier_t *reg, *done;
	double us;
};

static void *hold(void *arg)
{
	struct holder *h = arg;
	uint64_t req, t0 = now_ns();
	lin_request_begin(h->rt, NULL, &req); /* the first call registers the thread */
	h->us = (double)(now_ns() - t0) / 1000.0;
	pthread_barrier_wait(h->reg);
	pthread_barrier_wait(h->done);
	lin_request_end(h->rt, req);
	return NULL;
}

/* NTHREADS threads registered and held: fds and pinned memory they add, first-call time. */
static double per_thread(bool on, long *fds, long *kib)
{
	lin_runtime *rt = rt_new(on);
	pthread_barrier_t reg, done;
	pthread_barrier_init(&reg, NULL, NTHREADS + 1);
	pthread_barrier_init(&done, NULL, NTHREADS + 1);
	struct holder h[NTHREADS];
	pthread_t t[NTHREADS];
	long f0 = count_fds(), k0 = ring_kib();
	for (int i = 0; i < NTHREADS; i++) {
		h[i] = (struct holder){ rt, &reg, &done, 0 };
		pthread_create(&t[i], NULL, hold, &h[i]);
	}
	pthread_barrier_wait(&reg);
	*fds = count_fds() - f0;
	*kib = ring_kib() - k0;
	pthread_barrier_wait(&done);
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(t[i], NULL);
	lin_runtime_free(rt);
	pthread_barrier_destroy(&reg);
	pthread_barrier_destroy(&done);
	double us[NTHREADS];
	for (int i = 0; i < NTHREADS; i++)
		us[i] = h[i].us;
	qsort(us, NTHREADS, sizeof(us[0]), cmp_d);
	return us[NTHREADS / 2];
}

void sched_cases(void)
{
	header_status[0] = 0;
	lin_runtime_free(rt_new(true));
	if (strncmp(header_status, "on", 2)) {
		printf("SUMMARY bench=sched_switch skipped=\"%s\"\n",
		       header_status[0] ? header_status : "no host_sched header key");
		return;
	}
	int rounds = quick ? 20000 : 100000;
	double off[5], on[5];
	long sw_off = 0, sw_on = 0;
	for (int k = 0; k < 5; k++) { /* alternated: a noisy machine hits both alike */
		off[k] = pingpong(false, rounds, &sw_off);
		on[k] = pingpong(true, rounds, &sw_on);
	}
	qsort(off, 5, sizeof(double), cmp_d);
	qsort(on, 5, sizeof(double), cmp_d);
	printf("SUMMARY bench=sched_switch case=off ns_cpu_per_switch=%.1f switches=%ld rounds=%d\n",
	       off[2], sw_off, rounds);
	printf("SUMMARY bench=sched_switch case=on ns_cpu_per_switch=%.1f switches=%ld rounds=%d\n",
	       on[2], sw_on, rounds);
	printf("SUMMARY bench=sched_switch_delta ns_cpu_per_switch=%.1f\n", on[2] - off[2]);
	long fd_on, kib_on, fd_off, kib_off;
	double us_off = per_thread(false, &fd_off, &kib_off);
	double us_on = per_thread(true, &fd_on, &kib_on);
	printf("SUMMARY bench=sched_thread fds_per_thread=%.2f ring_kib_per_thread=%.1f "
	       "register_us_off=%.1f register_us_on=%.1f\n",
	       (double)(fd_on - fd_off) / NTHREADS, (double)(kib_on - kib_off) / NTHREADS, us_off,
	       us_on);
	fflush(stdout);
}
