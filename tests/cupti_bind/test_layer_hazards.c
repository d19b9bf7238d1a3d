/* SPDX-License-Identifier: MIT */
/*
 * test_layer_hazards.c - what a real process does to the live binding that a tidy test does
 * not, under the test CUPTI layer: a buffer of another client's handed to lineage, peer
 * copies (their own record kind), work still in flight when the runtime closes beside a
 * later client, a fork while CUPTI's thread decodes a buffer (dlclose of the library:
 * dlclose_main.c). Each hazard has a case where the binding must act and one where it must stay silent.
 */
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "layer_fixture.h"

TestSuite(layer_hazards, .init = lf_setup, .fini = lf_teardown);

/* ------------------------------------------------------------- another client's buffer */

#define OTHER_SIZE 4096

static uint8_t *other_buf; /* the other client's one buffer: lineage leaves it to its owner */

static void CUPTIAPI other_request(uint8_t **b, size_t *s, size_t *m)
{
	*b = other_buf = calloc(1, OTHER_SIZE);
	*s = *b ? OTHER_SIZE : 0;
	*m = 0;
}

static void CUPTIAPI other_complete(CUcontext c, uint32_t st, uint8_t *b, size_t s, size_t v)
{
	(void)c;
	(void)st;
	(void)s;
	(void)v;
	free(b);
}

/* A client of the activity API alone (no subscriber) registered its callbacks first and
 * had a 4 KiB buffer in flight; CUPTI completes it through lineage's callback. lineage
 * decodes it and leaves it alone: before, the pool kept it and lent it to CUPTI as a 1 MiB
 * buffer, and the 400 launches after wrote past its end (ASan: heap-buffer-overflow). */
Test(layer_hazards, another_clients_buffer_is_never_lent_again)
{
	lin_scope sc;
	struct lf_verdict vd;

	lf_layer(NULL);
	cr_assert_eq(cuptiActivityRegisterCallbacks(other_request, other_complete), CUPTI_SUCCESS);
	cr_assert_eq(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME), CUPTI_SUCCESS);
	struct lin_cl_call c = { .cbid = CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020 };
	lin_cl_api(&c);
	lin_runtime *rt = lf_runtime();
	cr_assert_eq(cuptiActivityFlushAll(0), CUPTI_SUCCESS);
	cr_assert(strstr(lf_log, "did not lend") != NULL, "%s", lf_log);
	lf_epoch(rt, &sc);
	for (int i = 1; i <= 400; i++) /* 400 launches: far more than 4 KiB of records */
		lf_kernel(rt, i);
	cr_assert_eq(lin_scope_exit(rt, &sc), 0);
	lin_runtime_free(rt);
	lf_load();
	cr_assert_eq(lf_count(LIN_REC_KERNEL), 400);
	lf_validate(&vd);
	cr_assert_eq(vd.s.observed, 400, "%s", vd.text);
	cr_assert_eq(vd.exit_code, 0, "%s", vd.text);
	free(other_buf); /* the owner's to free: lineage neither kept nor freed it */
	LIN_TEST_CHECK_LEAKS();
}

/* Only lineage's own buffers: the warning stays silent. */
Test(layer_hazards, own_buffers_raise_no_warning)
{
	lin_scope sc;

	lf_layer(NULL);
	lin_runtime *rt = lf_runtime();
	lf_epoch(rt, &sc);
	for (int i = 1; i <= 50; i++)
		lf_kernel(rt, i);
	cr_assert_eq(cuptiActivityFlushAll(0), CUPTI_SUCCESS);
	cr_assert_eq(lin_scope_exit(rt, &sc), 0);
	lin_runtime_free(rt);
	cr_assert(strstr(lf_log, "did not lend") == NULL, "%s", lf_log);
}

/* ------------------------------------------------------------- peer copies */

/* A peer copy as the program makes it: cudaMemcpyPeerAsync with its nested driver call; the
 * MEMCPY2 record carries the driver call's id (the layer's choice, the harder join). */
static void peer_copy(lin_runtime *rt)
{
	lin_launch l;
	uint64_t now = 0;
	struct lin_cl_call p = { .cbid = CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyPeerAsync_v4000,
				 .driver_cbid = CUPTI_DRIVER_TRACE_CBID_cuMemcpyPeerAsync };

	cr_assert_eq(lin_launch_begin(rt, "peer", &l), 0);
	struct lin_cl_corr pc = lin_cl_api(&p);
	cr_assert_eq(lin_launch_end(rt, &l), 0);
	cr_assert_eq(cuptiGetTimestamp(&now), CUPTI_SUCCESS);
	CUpti_ActivityMemcpyPtoP4 m;
	memset(&m, 0, sizeof(m));
	m.kind = CUPTI_ACTIVITY_KIND_MEMCPY2;
	m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
	m.bytes = 1 << 20;
	m.start = now + 2000;
	m.end = now + 4000;
	m.contextId = 1;
	m.streamId = 7;
	m.srcDeviceId = 0;
	m.dstDeviceId = 1;
	lin_cl_gpu(&m, sizeof(m), pc);
}

/* The binding enables MEMCPY2 and decodes it as a memcpy record: the peer copy joins its
 * request. Before, MEMCPY2 was never enabled and, when delivered, stepped over, so every
 * cudaMemcpyPeerAsync was lost no_gpu_record. */
Test(layer_hazards, peer_copies_are_collected_and_join)
{
	lin_scope sc;
	struct lf_verdict vd;

	lf_layer(NULL);
	lin_runtime *rt = lf_runtime();
	cr_assert(lin_cl_enabled(CUPTI_ACTIVITY_KIND_MEMCPY2));
	lf_epoch(rt, &sc);
	lf_kernel(rt, 1);
	peer_copy(rt);
	cr_assert_eq(lin_scope_exit(rt, &sc), 0);
	lin_runtime_free(rt);
	lf_load();
	size_t m = tr_find(lf_tr, LIN_REC_MEMCPY, 0);
	cr_assert_neq(m, SIZE_MAX, "the peer copy is a memcpy record");
	lf_validate(&vd);
	cr_assert_eq(vd.s.gpu_records, 2, "%s", vd.text);
	cr_assert_eq(vd.s.observed, 2, "%s", vd.text);
	cr_assert_eq(vd.exit_code, 0, "%s", vd.text);
	cr_assert_not(lin_cl_enabled(CUPTI_ACTIVITY_KIND_MEMCPY2), "disabled at close");
}

/* MEMCPY2 refused by CUPTI: logged, and the peer copy is then (rightly) lost no_gpu_record. */
Test(layer_hazards, peer_copies_refused_are_lost_and_said)
{
	lin_scope sc;
	struct lf_verdict vd;
	struct lin_cl_config c = { .sz = sizeof(c), .refuse_kinds = 1ull << CUPTI_ACTIVITY_KIND_MEMCPY2 };

	lf_layer(&c);
	lin_runtime *rt = lf_runtime();
	cr_assert(strstr(lf_log, "MEMCPY2 not enabled") != NULL, "%s", lf_log);
	lf_epoch(rt, &sc);
	lf_kernel(rt, 1);
	peer_copy(rt);
	cr_assert_eq(lin_scope_exit(rt, &sc), 0);
	lin_runtime_free(rt);
	lf_load();
	lf_validate(&vd);
	cr_assert_eq(vd.exit_code, 1, "%s", vd.text);
	cr_assert(strstr(vd.text, "no_gpu_record") != NULL, "%s", vd.text);
}

/* ------------------------------------------------------------- close beside a later client */

static void batch_copy(struct lin_cl_corr c, uint64_t t)
{
	CUpti_ActivityMemcpy6 m;

	memset(&m, 0, sizeof(m));
	m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
	m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
	m.bytes = 4096;
	m.start = t;
	m.end = t + 500;
	m.copyCount = 1;
	lin_cl_gpu(&m, sizeof(m), c);
}

/* One copy of a three-copy cudaMemcpyBatchAsync is still running when the runtime closes
 * beside a profiler that subscribed later (no forced flush is lineage's to do): the buffer
 * CUPTI still holds is in the trace as a loss (dropped source 7), so the validator cannot
 * pass it. Before, it was only logged, and the trace validated with exit 0. */
static void close_with_work_in_flight(bool later_client)
{
	lin_scope sc;
	lin_launch l;
	uint64_t now = 0;
	struct lf_verdict vd;
	CUpti_SubscriberHandle h = NULL;

	lf_layer(NULL);
	lin_runtime *rt = lf_runtime();
	lf_epoch(rt, &sc);
	struct lin_cl_call b = { .cbid = CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyBatchAsync_v13000 };
	cr_assert_eq(lin_launch_begin(rt, "batch", &l), 0);
	struct lin_cl_corr bc = lin_cl_api(&b);
	cr_assert_eq(lin_launch_end(rt, &l), 0);
	cr_assert_eq(cuptiGetTimestamp(&now), CUPTI_SUCCESS);
	batch_copy(bc, now + 1000);
	batch_copy(bc, now + 2000);
	cr_assert_eq(cuptiActivityFlushAll(0), CUPTI_SUCCESS);
	lin_cl_gpu_hold(true); /* the third copy is still running */
	batch_copy(bc, now + 3000);
	if (later_client)
		cr_assert_eq(cuptiSubscribe(&h, NULL, NULL), CUPTI_SUCCESS);
	cr_assert_eq(lin_scope_exit(rt, &sc), 0);
	lin_runtime_free(rt);
	lf_load();
	lf_validate(&vd);
	cr_assert_eq(vd.exit_code, 1, "%s", vd.text);
	if (later_client) {
		cr_assert_geq(lf_dropped(LIN_DROP_CUPTI_UNDELIVERED), 1, "%s", vd.text);
		cr_assert(strstr(vd.text, "undelivered_at_close") != NULL, "%s", vd.text);
		cr_assert_eq(cuptiUnsubscribe(h), CUPTI_SUCCESS);
	} else {
		/* Alone, the forced flush delivers the record incomplete (source 5); nothing is
		 * left in CUPTI, so source 7 stays silent. */
		cr_assert_geq(lf_dropped(LIN_DROP_CUPTI_REST), 1, "%s", vd.text);
		cr_assert_eq(lf_dropped(LIN_DROP_CUPTI_UNDELIVERED), 0, "%s", vd.text);
	}
}

Test(layer_hazards, work_in_flight_beside_a_later_client_is_a_loss)
{
	close_with_work_in_flight(true);
}

Test(layer_hazards, work_in_flight_alone_is_flushed_not_undelivered)
{
	close_with_work_in_flight(false);
}

/* Everything complete at close beside a later client: nothing is left in CUPTI, no loss. */
Test(layer_hazards, nothing_in_flight_beside_a_later_client_is_no_loss)
{
	lin_scope sc;
	struct lf_verdict vd;
	CUpti_SubscriberHandle h = NULL;

	lf_layer(NULL);
	lin_runtime *rt = lf_runtime();
	lf_epoch(rt, &sc);
	lf_kernel(rt, 1);
	cr_assert_eq(cuptiSubscribe(&h, NULL, NULL), CUPTI_SUCCESS);
	cr_assert_eq(lin_scope_exit(rt, &sc), 0);
	lin_runtime_free(rt);
	lf_load();
	cr_assert_eq(lf_dropped(LIN_DROP_CUPTI_UNDELIVERED), 0);
	lf_validate(&vd);
	cr_assert_eq(vd.exit_code, 0, "%s", vd.text);
	cr_assert_eq(cuptiUnsubscribe(h), CUPTI_SUCCESS);
}

/* ------------------------------------------------------------- fork */

static pthread_mutex_t fk_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t fk_cv = PTHREAD_COND_INITIALIZER;
static int fk_in_cb, fk_forked;

/* The log callback runs on CUPTI's thread inside buffer_completed, under the binding's
 * callback lock: it holds there until the test has forked. */
static void fk_log(enum lin_log_level l, const char *m, void *u)
{
	(void)l;
	(void)u;
	if (!strstr(m, "could not be decoded"))
		return;
	pthread_mutex_lock(&fk_mu);
	fk_in_cb = 1;
	pthread_cond_broadcast(&fk_cv);
	while (!fk_forked)
		pthread_cond_wait(&fk_cv, &fk_mu);
	pthread_mutex_unlock(&fk_mu);
}

static void *fk_flusher(void *a)
{
	(void)a;
	(void)cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED); /* delivers on this thread */
	return NULL;
}

/* In a fork child: create a CUPTI runtime, free it, and exit 0 when its trace header's
 * cupti status holds @want (at its start with @prefix); 3-5 otherwise; SIGALRM if it hangs. */
static _Noreturn void child_cupti_status_is(const char *want, bool prefix)
{
	struct tr_sink s;
	struct tr_trace tr = { 0 };
	char cupti[256] = "";
	lin_runtime *crt = NULL;
	struct lin_runtime_opts co = { .sz = sizeof(co),
				       .backend = LIN_BACKEND_CUPTI,
				       .trace_write = tr_sink_write,
				       .trace_user = &s };
	alarm(20);
	tr_sink_init(&s);
	if (lin_runtime_create(&co, &crt) != 0)
		_exit(3);
	lin_runtime_free(crt);
	tr_load(&tr, s.data, s.len);
	if (!tr_header_str(&tr, "cupti", cupti, sizeof(cupti)))
		_exit(4);
	_exit((prefix ? strncmp(cupti, want, strlen(want)) == 0 : strstr(cupti, want) != NULL) ? 0 : 5);
}

/* The child of a fork made while CUPTI's thread decodes a buffer creates a CUPTI runtime:
 * it returns at once, refused with a status that says why (host-side lineage only). Before,
 * it waited forever for the callback lock a thread of the parent held. */
Test(layer_hazards, a_fork_child_is_refused_cupti_never_hangs,
     .disabled = LIN_TEST_UNDER_TSAN) /* a child after a multi-threaded fork: lin_test.h */
{
	lin_scope sc;
	struct lin_runtime_opts o;
	pthread_t t;

	lin_runtime *rt = NULL;

	lf_layer(NULL);
	memset(&o, 0, sizeof(o));
	o.sz = sizeof(o);
	o.trace_write = tr_sink_write;
	o.trace_user = &lf_sink;
	o.backend = LIN_BACKEND_CUPTI;
	o.log = fk_log;
	cr_assert_eq(lin_runtime_create(&o, &rt), 0);
	lf_epoch(rt, &sc);
	lin_cl_gpu_hold(true); /* a forced flush delivers this kernel incomplete: a lossy buffer */
	lf_kernel(rt, 1);
	cr_assert_eq(pthread_create(&t, NULL, fk_flusher, NULL), 0);
	pthread_mutex_lock(&fk_mu);
	while (!fk_in_cb)
		pthread_cond_wait(&fk_cv, &fk_mu);
	pthread_mutex_unlock(&fk_mu);

	pid_t pid = fork();
	cr_assert_neq(pid, -1);
	if (pid == 0)
		child_cupti_status_is("fork child", false);
	pthread_mutex_lock(&fk_mu);
	fk_forked = 1;
	pthread_cond_broadcast(&fk_cv);
	pthread_mutex_unlock(&fk_mu);
	int st = 0;
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert(WIFEXITED(st), "the child was killed by signal %d (SIGALRM: it hung)",
		  WIFSIGNALED(st) ? WTERMSIG(st) : 0);
	cr_assert_eq(WEXITSTATUS(st), 0, "child status %d (5: not refused as a fork child)",
		     WEXITSTATUS(st));
	pthread_join(t, NULL);
	cr_assert_eq(lin_scope_exit(rt, &sc), 0);
	lin_runtime_free(rt);
}

/* A process that never had lineage own CUPTI forks: its child may own CUPTI. */
Test(layer_hazards, a_child_of_a_process_that_never_owned_cupti_may_own_it)
{
	lf_layer(NULL);
	pid_t pid = fork();
	cr_assert_neq(pid, -1);
	if (pid == 0)
		child_cupti_status_is("ok", true);
	int st = 0;
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child status %d", st);
}
