/* SPDX-License-Identifier: MIT */
/*
 * fork() while tracing: the child is detached (writes nothing into the parent's trace and
 * never hangs on RCU state copied mid-read-section); the parent's trace stays intact.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rt_fixture.h"

struct busy {
	lin_runtime *rt;
	_Atomic bool stop;
	_Atomic long loops;
};

/* Keeps adopting, launching and looking up (RCU read side) while the main thread forks. */
static void *busy_thread(void *arg)
{
	struct busy *b = arg;
	uint64_t req, ep;
	lin_scope rs, es;
	lin_request_begin(b->rt, NULL, &req);
	lin_scope_enter(b->rt, req, &rs);
	while (!atomic_load(&b->stop)) {
		lin_epoch_declare(b->rt, NULL, &ep);
		lin_scope_enter(b->rt, ep, &es);
		lin_launch l;
		lin_launch_begin(b->rt, "parent_kernel", &l);
		lin_launch_end(b->rt, &l);
		lin_scope_exit(b->rt, &es);
		struct lin_entity_info info = { .sz = sizeof(info) };
		lin_entity_lookup(b->rt, ep, &info, NULL, 0);
		lin_epoch_retire(b->rt, ep);
		atomic_fetch_add(&b->loops, 1);
	}
	lin_scope_exit(b->rt, &rs);
	return NULL;
}

static void child_work(lin_runtime *rt)
{
	alarm(20); /* a hang in the child fails the test instead of blocking it */
	uint64_t req, ep;
	lin_scope rs, es;
	struct lin_request_opts o = { .sz = sizeof(o), .name = "child-request" };
	if (lin_request_begin(rt, &o, &req) || lin_scope_enter(rt, req, &rs) ||
	    lin_epoch_declare(rt, NULL, &ep) || lin_scope_enter(rt, ep, &es))
		_exit(3);
	lin_launch l;
	if (lin_launch_begin(rt, "child_kernel", &l) || lin_launch_end(rt, &l))
		_exit(4);
	lin_scope_exit(rt, &es);
	lin_scope_exit(rt, &rs);
	if (lin_epoch_retire(rt, ep))
		_exit(5);
	lin_runtime_flush(rt);
	lin_runtime_free(rt); /* call_rcu barrier: must not hang in the child */
	_exit(0);
}

static void fork_while_tracing(bool exec_child)
{
	struct membuf m = { 0 };
	struct busy b = { 0 };
	char path[] = "/tmp/lineage-fork-XXXXXX";
	int fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	close(fd);
	struct lin_runtime_opts o = { .sz = sizeof(o), .trace_path = path, .flush_interval_ms = 1 };
	cr_assert_eq(lin_runtime_create(&o, &b.rt), 0);
	pthread_t th;
	pthread_create(&th, NULL, busy_thread, &b);
	while (atomic_load(&b.loops) < 100)
		usleep(100);
	for (int i = 0; i < 5; i++) {
		pid_t pid = fork();
		cr_assert_geq(pid, 0);
		if (pid == 0) {
			if (exec_child) {
				execl("/bin/true", "true", (char *)NULL);
				_exit(6);
			}
			child_work(b.rt);
		}
		int st;
		cr_assert_eq(waitpid(pid, &st, 0), pid);
		cr_assert(WIFEXITED(st), "child died of signal %d", WIFSIGNALED(st) ? WTERMSIG(st) : 0);
		cr_assert_eq(WEXITSTATUS(st), 0, "child failed at step %d", WEXITSTATUS(st));
	}
	long before = atomic_load(&b.loops);
	while (atomic_load(&b.loops) < before + 100)
		usleep(100);
	atomic_store(&b.stop, true);
	pthread_join(th, NULL);
	lin_runtime_free(b.rt);

	struct trace t;
	cr_assert_eq(trace_load(&t, path), 0, "the parent's trace parses");
	cr_assert(!t.truncated);
	cr_assert_eq(trace_hdr(&t, "pid")->via.u64, (uint64_t)getpid());
	char buf[64];
	for (size_t k = 0; trace_nth(&t, LIN_REC_STRING, k); k++) {
		const msgpack_object *s = rec_f(trace_nth(&t, LIN_REC_STRING, k), 2);
		snprintf(buf, sizeof(buf), "%.*s", (int)s->via.str.size, s->via.str.ptr);
		cr_assert(strcmp(buf, "child-request") && strcmp(buf, "child_kernel"),
			  "a child wrote into the parent's trace");
	}
	uint64_t dropped = 0;
	for (size_t k = 0; trace_nth(&t, LIN_REC_DROPPED, k); k++)
		dropped += rec_u(trace_nth(&t, LIN_REC_DROPPED, k), 2);
	size_t launches = trace_count(&t, LIN_REC_LAUNCH);
	cr_assert_geq(launches + dropped, (size_t)before, "parent launches kept: %zu + %llu dropped < %ld",
		      launches, (unsigned long long)dropped, before);
	trace_free(&t);
	unlink(path);
	free(m.p);
}

Test(fork, child_is_detached_and_parent_trace_intact, .timeout = 120,
     .disabled = LIN_TEST_UNDER_TSAN) /* see lin_test.h */
{
	fork_while_tracing(false);
}

Test(fork, fork_then_exec_leaves_parent_trace_intact, .timeout = 120) { fork_while_tracing(true); }

/* A forked child that creates its own runtime (its own trace, the documented way) stamps
 * its records with its own thread id, not the parent thread's the library had cached. */
Test(fork, a_childs_runtime_stamps_the_childs_thread_id, .timeout = 60)
{
	lin_runtime *parent;
	struct lin_runtime_opts o = { .sz = sizeof(o), .flags = LIN_RT_NO_WRITER_THREAD };
	cr_assert_eq(lin_runtime_create(&o, &parent), 0);
	uint64_t req;
	cr_assert_eq(lin_request_begin(parent, NULL, &req), 0); /* caches this thread's id */
	char path[] = "/tmp/lineage-forktid-XXXXXX";
	int fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	close(fd);
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		alarm(20);
		lin_runtime *rt;
		struct lin_runtime_opts co = { .sz = sizeof(co), .trace_path = path };
		uint64_t r;
		if (lin_runtime_create(&co, &rt) || lin_request_begin(rt, NULL, &r))
			_exit(3);
		lin_runtime_free(rt);
		_exit(0);
	}
	int st;
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	struct trace t;
	cr_assert_eq(trace_load(&t, path), 0);
	const msgpack_object *rb = trace_nth(&t, LIN_REC_REQUEST_BEGIN, 0);
	cr_assert_not_null(rb);
	cr_assert_eq(rec_u(rb, 2), (uint64_t)pid, "the child's main thread: tid == its pid");
	trace_free(&t);
	unlink(path);
	lin_runtime_free(parent);
}
