/* SPDX-License-Identifier: MIT */
/*
 * Overload and thread churn: a writer that cannot keep up never blocks the launch path;
 * what is lost is counted and reported; threads that come and go leak nothing.
 */
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <spawn.h>
#include <stdatomic.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rt_fixture.h"

extern char **environ;

/* A trace sink that blocks until released: the writer thread is stuck in it. */
struct stuck {
	sem_t go;
	_Atomic int blocked;
	FILE *f;
};

static int stuck_write(const void *buf, size_t len, void *user)
{
	struct stuck *s = user;
	if (!atomic_exchange(&s->blocked, 1))
		sem_wait(&s->go);
	return fwrite(buf, 1, len, s->f) == len ? 0 : -EIO;
}

struct producer {
	lin_runtime *rt;
	long launches;
};

static void *produce(void *arg)
{
	struct producer *p = arg;
	uint64_t req, ep;
	lin_scope rs, es;
	lin_request_begin(p->rt, NULL, &req);
	lin_scope_enter(p->rt, req, &rs);
	lin_epoch_declare(p->rt, NULL, &ep);
	lin_scope_enter(p->rt, ep, &es);
	for (long i = 0; i < p->launches; i++) {
		lin_launch l;
		lin_launch_begin(p->rt, "overload_kernel", &l);
		lin_launch_end(p->rt, &l);
	}
	lin_scope_exit(p->rt, &es);
	lin_scope_exit(p->rt, &rs);
	return NULL;
}

static int run_validator(const char *trace, char *out, size_t cap)
{
	int pfd[2];
	cr_assert_eq(pipe(pfd), 0);
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, pfd[1], 1);
	posix_spawn_file_actions_addclose(&fa, pfd[0]);
	char *argv[] = { (char *)LIN_VALIDATE_BIN, "--json", (char *)trace, NULL };
	pid_t pid;
	cr_assert_eq(posix_spawn(&pid, LIN_VALIDATE_BIN, &fa, NULL, argv, environ), 0);
	close(pfd[1]);
	size_t n = 0;
	ssize_t r;
	while (n + 1 < cap && (r = read(pfd[0], out + n, cap - 1 - n)) > 0)
		n += (size_t)r;
	out[n] = 0;
	close(pfd[0]);
	int st;
	waitpid(pid, &st, 0);
	posix_spawn_file_actions_destroy(&fa);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

Test(overload, stuck_writer_never_blocks_launches_and_loss_is_reported, .timeout = 120)
{
	char path[] = "/tmp/lineage-overload-XXXXXX";
	int fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	struct stuck s = { .f = fdopen(fd, "wb") };
	sem_init(&s.go, 0, 0);
	struct lin_runtime_opts o = { .sz = sizeof(o),
				      .trace_write = stuck_write,
				      .trace_user = &s,
				      .thread_buffer_events = 1024,
				      .flush_interval_ms = 1 };
	lin_runtime *rt;
	/* The header is written at create: the sink blocks on its second write. */
	atomic_store(&s.blocked, 1);
	cr_assert_eq(lin_runtime_create(&o, &rt), 0);
	atomic_store(&s.blocked, 0);
	struct producer p[2] = { { rt, 200000 }, { rt, 200000 } };
	pthread_t th[2];
	for (int i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, produce, &p[i]);
	/* If the launch path blocked on the writer, these joins would never return (the
	 * test's timeout would fail it): completing them is the property. */
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	struct lin_runtime_stats st = { .sz = sizeof(st) };
	lin_runtime_get_stats(rt, &st);
	cr_assert_gt(st.events_dropped, 0, "a stuck writer makes the buffers overflow");
	sem_post(&s.go);
	lin_runtime_free(rt);
	fclose(s.f);

	struct trace t;
	cr_assert_eq(trace_load(&t, path), 0);
	uint64_t dropped = 0;
	for (size_t k = 0; trace_nth(&t, LIN_REC_DROPPED, k); k++)
		dropped += rec_u(trace_nth(&t, LIN_REC_DROPPED, k), 2);
	cr_assert_eq(dropped, st.events_dropped, "every lost event is in a dropped record");
	size_t kept = 0;
	for (size_t i = 0; i < t.n; i++)
		kept += rec_type(&t.rec[i]) <= LIN_REC_LAUNCH || /* the runtime's event records */
			rec_type(&t.rec[i]) == LIN_REC_LAUNCH_END;
	cr_assert_eq(kept + dropped, st.events, "kept + dropped = recorded: %zu + %llu != %llu",
		     kept, (unsigned long long)dropped, (unsigned long long)st.events);
	trace_free(&t);

	char out[65536];
	int rc = run_validator(path, out, sizeof(out));
	cr_assert_eq(rc, 1, "lineage-validate exits 1 on loss: %s", out);
	cr_assert_not_null(strstr(out, "\"dropped_records\""), "%s", out);
	unlink(path);
}

static void *short_lived(void *arg)
{
	struct handoff {
		lin_runtime *rt;
		lin_token tok;
	} *h = arg;
	lin_scope s;
	if (lin_token_adopt(h->rt, &h->tok, &s) == 0) {
		lin_launch l;
		lin_launch_begin(h->rt, "churn_kernel", &l);
		lin_launch_end(h->rt, &l);
		lin_scope_exit(h->rt, &s);
	}
	return NULL;
}

Test(threads, pools_that_grow_and_shrink_leak_nothing, .timeout = 120)
{
	struct rtfix f;
	rtfix_open(&f, 0, NULL);
	lin_scope rs, es;
	rtfix_request(&f, &rs);
	uint64_t ep;
	lin_epoch_declare(f.rt, NULL, &ep);
	lin_scope_enter(f.rt, ep, &es);
	struct {
		lin_runtime *rt;
		lin_token tok;
	} h = { f.rt };
	lin_token_capture(f.rt, &h.tok);
	/* Waves of threads that never call any init, each used once and gone. */
	for (int wave = 0; wave < 10; wave++) {
		pthread_t th[20];
		int n = 2 + wave * 2;
		for (int i = 0; i < n; i++)
			pthread_create(&th[i], NULL, short_lived, &h);
		for (int i = 0; i < n; i++)
			pthread_join(th[i], NULL);
	}
	lin_scope_exit(f.rt, &es);
	lin_scope_exit(f.rt, &rs);
	lin_runtime_flush(f.rt);
	struct lin_runtime_stats st = { .sz = sizeof(st) };
	lin_runtime_get_stats(f.rt, &st);
	cr_assert_eq(st.threads, 111, "110 workers and the main thread");
	struct trace *t = rtfix_close(&f);
	cr_assert_eq(trace_count(t, LIN_REC_LAUNCH), 110, "every short-lived thread's launch kept");
	cr_assert_eq(trace_count(t, LIN_REC_MISUSE), 0);
	rtfix_fini(&f);
	LIN_TEST_CHECK_LEAKS();
}

static int count_write(const void *buf, size_t len, void *user)
{
	(void)buf;
	atomic_fetch_add((_Atomic size_t *)user, len);
	return 0;
}

/* @launches launches (2 events each) into a 1,024-event buffer, with a writer period of an
 * hour; then wait up to @wait_ms for the writer to have written something: 1 when it did. */
static int drained_within(int launches, int wait_ms)
{
	_Atomic size_t bytes = 0;
	lin_runtime *rt = NULL;
	struct lin_runtime_opts o = { .sz = sizeof(o),
				      .trace_write = count_write,
				      .trace_user = &bytes,
				      .thread_buffer_events = 1024,
				      .flush_interval_ms = 3600 * 1000 };
	cr_assert_eq(lin_runtime_create(&o, &rt), 0);
	uint64_t req, ep;
	lin_scope rs, es;
	lin_request_begin(rt, NULL, &req);
	lin_scope_enter(rt, req, &rs);
	lin_epoch_declare(rt, NULL, &ep);
	lin_scope_enter(rt, ep, &es);
	size_t before = atomic_load(&bytes);
	for (int i = 0; i < launches; i++) {
		lin_launch l;
		lin_launch_begin(rt, "k", &l);
		lin_launch_end(rt, &l);
	}
	int ok = 0;
	for (int t = 0; t <= wait_ms && !ok; t += 10) {
		ok = atomic_load(&bytes) > before;
		if (!ok)
			usleep(10000);
	}
	lin_scope_exit(rt, &es);
	lin_scope_exit(rt, &rs);
	lin_runtime_free(rt);
	return ok;
}

/* A thread that fills half its buffer wakes the writer before its period: at a million
 * launches a second a 16,384-event buffer fills in milliseconds, and the writer used to
 * sleep out its 50 ms while the rest was dropped. 600 events here: past 512. */
Test(overload, a_half_full_buffer_wakes_the_writer)
{
	cr_assert(drained_within(300, 20000), "nothing written before the writer's period");
}

/* Below half nothing wakes it (silent case): 400 events stay until the period. */
Test(overload, a_buffer_below_half_waits_for_the_period)
{
	cr_assert_not(drained_within(200, 200), "the writer woke for a buffer below half");
}
