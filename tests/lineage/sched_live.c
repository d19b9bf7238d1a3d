/* SPDX-License-Identifier: MIT */
/*
 * sched_live.c - the host scheduling collector against the running kernel
 * (lineage/hostsched.c). One mode per ctest (label perf):
 *   switches     a worker and a CPU hog pinned to one core (preempted) and sleeps
 *                (blocked): host_sched records of both states, on the worker's tid, no loss
 *   overrun      a one-page ring and thousands of switches between drains: a dropped
 *                record (source 8) with its count, and lineage-validate reports the loss
 *   late_refusal the kernel refuses a thread after start (injected EMFILE): the header says
 *                "on", the log and a dropped record (source 9) name the thread
 *   fork         a child that flushes never reads (consumes) its parent's ring
 *   fork_page    a fork child whose own atfork handler mapped a page where a ring was:
 *                the page survives (the child never unmaps a ring it has no copy of)
 *   fd_headroom  a low RLIMIT_NOFILE and threads that come and go: the application can
 *                still open the last quarter of its descriptors; threads past it refused
 *                (source 9, "headroom"); exited threads hold no descriptor
 *   stdin_closed a program started with fd 0 closed: the collector never takes 0-2
 *   seccomp_late an (allow-all) seccomp filter installed after start: the next thread's
 *                perf_event_open is not tried (it could be killed), source 9 says so
 * Exit 0 checked and held, 1 a check failed, 77 skipped: the kernel refuses the collector
 * here (perf_event_paranoid 3, no perf events, seccomp): the reason is printed.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <lineage.h>

#include "trace_read.h"

static int failures;
#define CHECK(c, ...) \
	do { \
		if (!(c)) { \
			fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
			fprintf(stderr, __VA_ARGS__); \
			fputc('\n', stderr); \
			failures++; \
		} \
	} while (0)

static char logtext[8192];
static pthread_mutex_t log_mu = PTHREAD_MUTEX_INITIALIZER;
static void log_cb(enum lin_log_level level, const char *msg, void *user)
{
	(void)level, (void)user;
	pthread_mutex_lock(&log_mu);
	size_t n = strlen(logtext);
	snprintf(logtext + n, sizeof(logtext) - n, "%s\n", msg);
	pthread_mutex_unlock(&log_mu);
}

static lin_runtime *open_rt(struct membuf *m, uint32_t flags)
{
	struct lin_runtime_opts o = { .sz = sizeof(o),
				      .trace_write = membuf_write,
				      .trace_user = m,
				      .flags = flags | LIN_RT_SCHED_EVENTS,
				      .log = log_cb };
	lin_runtime *rt = NULL;
	int err = lin_runtime_create(&o, &rt);
	if (err) {
		fprintf(stderr, "lin_runtime_create: %s\n", lin_strerror(err));
		exit(1);
	}
	return rt;
}

static void hdr_text(const struct trace *t, char *buf, size_t len)
{
	const msgpack_object *v = trace_hdr(t, "host_sched");
	buf[0] = 0;
	if (v && v->type == MSGPACK_OBJECT_STR) {
		size_t n = v->via.str.size < len - 1 ? v->via.str.size : len - 1;
		memcpy(buf, v->via.str.ptr, n);
		buf[n] = 0;
	}
}

static void load(struct trace *t, struct membuf *m)
{
	if (trace_load_mem(t, m->p, m->n) || t->truncated) {
		fprintf(stderr, "the trace does not parse\n");
		exit(1);
	}
}

static void sleep_ns(long ns)
{
	struct timespec ts = { ns / 1000000000L, ns % 1000000000L };
	nanosleep(&ts, NULL);
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void pin(int cpu)
{
	cpu_set_t s;
	CPU_ZERO(&s);
	CPU_SET(cpu, &s);
	pthread_setaffinity_np(pthread_self(), sizeof(s), &s);
}

static atomic_int hog_stop;
static void *hog(void *arg)
{
	pin(*(int *)arg);
	volatile uint64_t x = 0;
	while (!atomic_load(&hog_stop))
		x++;
	return NULL;
}

struct worker {
	lin_runtime *rt;
	int cpu, sleeps;
	long spin_ms;
	uint32_t tid;
};

/* Registers (a request), spins on the hog's core (preempted), then sleeps (blocked). */
static void *work(void *arg)
{
	struct worker *w = arg;
	w->tid = (uint32_t)syscall(SYS_gettid);
	if (w->cpu >= 0)
		pin(w->cpu);
	uint64_t req;
	lin_request_begin(w->rt, NULL, &req);
	uint64_t end = now_ns() + (uint64_t)w->spin_ms * 1000000u;
	volatile uint64_t x = 0;
	while (now_ns() < end)
		x++;
	for (int i = 0; i < w->sleeps; i++)
		sleep_ns(w->sleeps > 100 ? 1000 : 1000000);
	lin_request_end(w->rt, req);
	return NULL;
}

static void run_worker(struct worker *w, bool with_hog)
{
	pthread_t h, t;
	int cpu = w->cpu;
	atomic_store(&hog_stop, 0);
	if (with_hog)
		pthread_create(&h, NULL, hog, &cpu);
	pthread_create(&t, NULL, work, w);
	pthread_join(t, NULL);
	atomic_store(&hog_stop, 1);
	if (with_hog)
		pthread_join(h, NULL);
}

/* Skip (77) when the kernel refused the collector: the header says why. */
static void skip_if_refused(lin_runtime *rt, struct membuf *m)
{
	(void)rt;
	struct trace t;
	load(&t, m);
	char s[256];
	hdr_text(&t, s, sizeof(s));
	trace_free(&t);
	if (!strncmp(s, "refused", 7)) {
		printf("skip: host scheduling evidence is refused by this kernel: %s\n", s);
		exit(77);
	}
	if (strncmp(s, "on:", 3)) {
		fprintf(stderr, "header host_sched is '%s', expected on: or refused:\n", s);
		exit(1);
	}
}

static size_t count_state(const struct trace *t, uint32_t tid, uint64_t state, uint64_t *ns)
{
	size_t k = 0;
	*ns = 0;
	for (size_t i = 0; i < trace_count(t, LIN_REC_HOST_SCHED); i++) {
		const msgpack_object *r = trace_nth(t, LIN_REC_HOST_SCHED, i);
		CHECK(rec_u(r, 2) < rec_u(r, 3), "start before end");
		if (rec_u(r, 1) == tid && rec_u(r, 4) == state) {
			k++;
			*ns += rec_u(r, 3) - rec_u(r, 2);
		}
	}
	return k;
}

static int mode_switches(void)
{
	struct membuf m = { 0 };
	lin_runtime *rt = open_rt(&m, 0);
	lin_runtime_flush(rt);
	skip_if_refused(rt, &m);
	/* The first core this process may run on (a container's cpuset may not hold 0). */
	cpu_set_t mine;
	int cpu = 0;
	if (!sched_getaffinity(0, sizeof(mine), &mine))
		while (cpu < CPU_SETSIZE - 1 && !CPU_ISSET(cpu, &mine))
			cpu++;
	struct worker w = { .rt = rt, .cpu = cpu, .sleeps = 20, .spin_ms = 200 };
	uint64_t t0 = now_ns();
	run_worker(&w, true);
	uint64_t t1 = now_ns();
	lin_runtime_free(rt);
	struct trace t;
	load(&t, &m);
	uint64_t pre_ns, blk_ns;
	size_t pre = count_state(&t, w.tid, LIN_SCHED_PREEMPTED, &pre_ns);
	size_t blk = count_state(&t, w.tid, LIN_SCHED_BLOCKED, &blk_ns);
	printf("worker %u: %zu preempted (%llu ns), %zu blocked (%llu ns) in %llu ns\n", w.tid, pre,
	       (unsigned long long)pre_ns, blk, (unsigned long long)blk_ns,
	       (unsigned long long)(t1 - t0));
	CHECK(pre >= 1, "a worker sharing its core with a hog was preempted at least once");
	CHECK(blk >= 20, "20 sleeps are 20 blocked intervals at least (%zu)", blk);
	CHECK(blk_ns >= 20u * 1000000u, "they last the 20 ms slept at least (%llu)",
	      (unsigned long long)blk_ns);
	CHECK(pre_ns + blk_ns <= t1 - t0, "off-CPU time fits in the run");
	for (size_t i = 0; i < trace_count(&t, LIN_REC_HOST_SCHED); i++) {
		const msgpack_object *r = trace_nth(&t, LIN_REC_HOST_SCHED, i);
		char s[64];
		CHECK(trace_string(&t, rec_u(r, 5), s, sizeof(s)) &&
			      !strcmp(s, "lineage.perf_context_switch"),
		      "source_sid names the collector");
		CHECK((rec_u(r, 2) >= t0 && rec_u(r, 3) <= t1) || rec_u(r, 1) != w.tid,
		      "the worker's intervals lie in its run, on the trace's host clock");
	}
	CHECK(trace_count(&t, LIN_REC_DROPPED) == 0, "no loss, no refusal");
	trace_free(&t);
	free(m.p);
	return failures ? 1 : 0;
}

static int mode_overrun(const char *validate, const char *path)
{
	setenv("LINEAGE_TEST_SCHED_PAGES", "1", 1);
	struct lin_runtime_opts o = { .sz = sizeof(o),
				      .trace_path = path,
				      .flags = LIN_RT_SCHED_EVENTS | LIN_RT_NO_WRITER_THREAD,
				      .log = log_cb };
	lin_runtime *rt = NULL;
	if (lin_runtime_create(&o, &rt))
		return 1;
	struct worker w = { .rt = rt, .cpu = -1, .sleeps = 3000, .spin_ms = 0 };
	run_worker(&w, false);
	lin_runtime_free(rt);
	struct trace t;
	if (trace_load(&t, path))
		return 1;
	char s[256];
	hdr_text(&t, s, sizeof(s));
	if (!strncmp(s, "refused", 7)) {
		printf("skip: host scheduling evidence is refused by this kernel: %s\n", s);
		return 77;
	}
	uint64_t lost = 0;
	for (size_t i = 0; i < trace_count(&t, LIN_REC_DROPPED); i++) {
		const msgpack_object *r = trace_nth(&t, LIN_REC_DROPPED, i);
		if (rec_u(r, 1) == LIN_DROP_HOST_SCHED) {
			CHECK(rec_u(r, 3) == w.tid, "the loss names the thread");
			lost += rec_u(r, 2);
		}
	}
	uint64_t ns;
	size_t got = count_state(&t, w.tid, LIN_SCHED_BLOCKED, &ns);
	printf("3000 sleeps through a one-page ring: %zu intervals kept, %llu switch records lost\n",
	       got, (unsigned long long)lost);
	CHECK(lost > 0, "an overrun is a counted loss");
	CHECK(got < 3000, "and not all intervals were kept");
	trace_free(&t);
	char cmd[1024];
	snprintf(cmd, sizeof(cmd), "%s %s > %s.out 2>&1", validate, path, path);
	int rc = system(cmd);
	CHECK(WIFEXITED(rc) && WEXITSTATUS(rc) == 1, "lineage-validate exits 1 on the loss (%d)", rc);
	snprintf(cmd, sizeof(cmd), "grep -q dropped_records %s.out", path);
	CHECK(system(cmd) == 0, "and names it dropped_records");
	return failures ? 1 : 0;
}

static int mode_late_refusal(void)
{
	setenv("LINEAGE_TEST_SCHED_FAULT", "EMFILE@1", 1); /* the probe (0) passes */
	struct membuf m = { 0 };
	lin_runtime *rt = open_rt(&m, LIN_RT_NO_WRITER_THREAD);
	lin_runtime_flush(rt);
	skip_if_refused(rt, &m);
	struct worker w = { .rt = rt, .cpu = -1, .sleeps = 5, .spin_ms = 0 };
	run_worker(&w, false);
	lin_runtime_free(rt);
	struct trace t;
	load(&t, &m);
	size_t n9 = 0;
	for (size_t i = 0; i < trace_count(&t, LIN_REC_DROPPED); i++) {
		const msgpack_object *r = trace_nth(&t, LIN_REC_DROPPED, i);
		if (rec_u(r, 1) == LIN_DROP_HOST_SCHED_REFUSED && rec_u(r, 3) == w.tid) {
			n9++;
			const msgpack_object *why = rec_f(r, 4);
			CHECK(why->type == MSGPACK_OBJECT_STR &&
				      memmem(why->via.str.ptr, why->via.str.size, "perf_event_open", 15),
			      "the reason names the call");
		}
	}
	CHECK(n9 == 1, "one dropped record (source 9) for the refused thread (%zu)", n9);
	CHECK(trace_count(&t, LIN_REC_HOST_SCHED) == 0, "no intervals from a refused thread");
	CHECK(strstr(logtext, "refused on thread") != NULL, "the log says it: %s", logtext);
	trace_free(&t);
	free(m.p);
	return failures ? 1 : 0;
}

static int mode_fork(void)
{
	struct membuf m = { 0 };
	lin_runtime *rt = open_rt(&m, LIN_RT_NO_WRITER_THREAD);
	lin_runtime_flush(rt);
	skip_if_refused(rt, &m);
	uint32_t tid = (uint32_t)syscall(SYS_gettid);
	uint64_t req;
	lin_request_begin(rt, NULL, &req); /* this thread registers */
	for (int i = 0; i < 10; i++)
		sleep_ns(1000000);
	pid_t pid = fork();
	if (pid == 0) {
		lin_runtime_flush(rt); /* must not consume the parent's ring */
		lin_runtime_free(rt);
		_exit(0);
	}
	int st;
	waitpid(pid, &st, 0);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the child ran");
	lin_request_end(rt, req);
	lin_runtime_free(rt);
	struct trace t;
	load(&t, &m);
	uint64_t ns;
	size_t blk = count_state(&t, tid, LIN_SCHED_BLOCKED, &ns);
	CHECK(blk >= 10, "the parent keeps its 10 sleeps before the fork (%zu)", blk);
	trace_free(&t);
	free(m.p);
	return failures ? 1 : 0;
}

static volatile char *child_page;
static void child_maps_a_page(void)
{
	void *p = mmap(NULL, 4096 * 4, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	child_page = p == MAP_FAILED ? NULL : p;
	if (child_page)
		child_page[0] = 'x';
}

static int mode_fork_page(void)
{
	pthread_atfork(NULL, NULL, child_maps_a_page); /* the application's, registered first */
	struct membuf m = { 0 };
	lin_runtime *rt = open_rt(&m, LIN_RT_NO_WRITER_THREAD);
	lin_runtime_flush(rt);
	skip_if_refused(rt, &m);
	uint64_t req;
	lin_request_begin(rt, NULL, &req); /* this thread's ring */
	pid_t pid = fork();
	if (pid == 0)
		_exit(child_page && child_page[0] == 'x' ? 0 : 3);
	int st;
	waitpid(pid, &st, 0);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the child's own page survives (status %d)", st);
	lin_request_end(rt, req);
	lin_runtime_free(rt);
	free(m.p);
	return failures ? 1 : 0;
}

static void *register_and_exit(void *arg)
{
	uint64_t r;
	lin_request_begin(arg, NULL, &r);
	lin_request_end(arg, r);
	return NULL;
}

static size_t dropped_with(const struct trace *t, uint64_t source, const char *why)
{
	size_t n = 0;
	for (size_t i = 0; i < trace_count(t, LIN_REC_DROPPED); i++) {
		const msgpack_object *r = trace_nth(t, LIN_REC_DROPPED, i);
		const msgpack_object *w = rec_f(r, 4);
		n += rec_u(r, 1) == source && w->type == MSGPACK_OBJECT_STR &&
		     memmem(w->via.str.ptr, w->via.str.size, why, strlen(why));
	}
	return n;
}

static int mode_fd_headroom(void)
{
	struct rlimit rl = { 128, 128 };
	CHECK(setrlimit(RLIMIT_NOFILE, &rl) == 0, "setrlimit");
	struct membuf m = { 0 };
	lin_runtime *rt = open_rt(&m, LIN_RT_NO_WRITER_THREAD);
	lin_runtime_flush(rt);
	skip_if_refused(rt, &m);
	/* Hold most descriptors, as a busy server would, then let threads come and go. */
	int held[128], nheld = 0;
	while (nheld < 60 && (held[nheld] = open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0)
		nheld++;
	for (int round = 0; round < 20; round++) {
		pthread_t th[8];
		for (int i = 0; i < 8; i++)
			pthread_create(&th[i], NULL, register_and_exit, rt);
		for (int i = 0; i < 8; i++)
			pthread_join(th[i], NULL);
	}
	/* The last quarter (at least 64) below the limit is the application's: with the
	 * exited threads' descriptors given back, it opens what it could without lineage. */
	int more = 0, fds[128];
	while (more < 128 && (fds[more] = open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0)
		more++;
	CHECK(nheld + more >= 128 - 8, "the application opens %d of its descriptors", nheld + more);
	for (int i = 0; i < more; i++)
		close(fds[i]);
	for (int i = 0; i < nheld; i++)
		close(held[i]);
	lin_runtime_free(rt);
	struct trace t;
	load(&t, &m);
	CHECK(dropped_with(&t, LIN_DROP_HOST_SCHED_REFUSED, "headroom") > 0,
	      "threads past the headroom are refused and said so");
	trace_free(&t);
	free(m.p);
	return failures ? 1 : 0;
}

static int mode_stdin_closed(void)
{
	close(0);
	struct membuf m = { 0 };
	lin_runtime *rt = open_rt(&m, LIN_RT_NO_WRITER_THREAD);
	lin_runtime_flush(rt);
	skip_if_refused(rt, &m);
	uint64_t req;
	lin_request_begin(rt, NULL, &req); /* this thread's ring */
	CHECK(fcntl(0, F_GETFD) < 0 && errno == EBADF, "fd 0 stays the application's (closed)");
	lin_request_end(rt, req);
	lin_runtime_free(rt);
	free(m.p);
	return failures ? 1 : 0;
}

static int mode_seccomp_late(void)
{
	struct membuf m = { 0 };
	lin_runtime *rt = open_rt(&m, LIN_RT_NO_WRITER_THREAD);
	lin_runtime_flush(rt);
	skip_if_refused(rt, &m);
	/* An allow-all filter: what matters is that one was installed after the probe. */
	struct sock_filter allow[] = { BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW) };
	struct sock_fprog prog = { .len = 1, .filter = allow };
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog)) {
		printf("SKIP: cannot install a seccomp filter here: %s\n", strerror(errno));
		lin_runtime_free(rt);
		free(m.p);
		return 77;
	}
	struct worker w = { .rt = rt, .cpu = -1, .sleeps = 3, .spin_ms = 0 };
	run_worker(&w, false);
	lin_runtime_free(rt);
	struct trace t;
	load(&t, &m);
	CHECK(dropped_with(&t, LIN_DROP_HOST_SCHED_REFUSED, "seccomp") == 1,
	      "the thread born under the filter is declined, and said so");
	size_t hs = 0;
	for (size_t i = 0; i < trace_count(&t, LIN_REC_HOST_SCHED); i++)
		hs += rec_u(trace_nth(&t, LIN_REC_HOST_SCHED, i), 1) == w.tid;
	CHECK(hs == 0, "no intervals of the declined thread (%zu)", hs);
	trace_free(&t);
	free(m.p);
	return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	if (!strcmp(mode, "switches"))
		return mode_switches();
	if (!strcmp(mode, "overrun") && argc > 3)
		return mode_overrun(argv[2], argv[3]);
	if (!strcmp(mode, "late_refusal"))
		return mode_late_refusal();
	if (!strcmp(mode, "fork"))
		return mode_fork();
	if (!strcmp(mode, "fork_page"))
		return mode_fork_page();
	if (!strcmp(mode, "fd_headroom"))
		return mode_fd_headroom();
	if (!strcmp(mode, "stdin_closed"))
		return mode_stdin_closed();
	if (!strcmp(mode, "seccomp_late"))
		return mode_seccomp_late();
	fprintf(stderr, "usage: sched_live switches|overrun VALIDATE PATH|late_refusal|fork|"
			"fork_page|fd_headroom|stdin_closed|seccomp_late\n");
	return 2;
}
