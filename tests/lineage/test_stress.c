/* SPDX-License-Identifier: MIT */
/*
 * Concurrency stress: submitters declare epochs and capture tokens, workers adopt them and
 * launch, a retirer retires epochs while they are in flight, readers look ids up. Run under
 * ThreadSanitizer in CI. LIN_STRESS_ITERS scales it (default sized for a 2-core CI run).
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>

#include "rt_fixture.h"

#define QCAP 1024

struct queue {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	lin_token q[QCAP];
	uint64_t ids[QCAP];
	size_t head, tail;
	bool closed;
};

struct shared {
	lin_runtime *rt;
	struct queue work, retire;
	long iters;
	_Atomic long adopted, stale, launched, lookups;
};

static void q_push(struct queue *q, const lin_token *t, uint64_t id)
{
	pthread_mutex_lock(&q->mu);
	while (q->tail - q->head == QCAP)
		pthread_cond_wait(&q->cv, &q->mu);
	q->q[q->tail % QCAP] = *t;
	q->ids[q->tail % QCAP] = id;
	q->tail++;
	pthread_cond_broadcast(&q->cv);
	pthread_mutex_unlock(&q->mu);
}

static bool q_pop(struct queue *q, lin_token *t, uint64_t *id)
{
	pthread_mutex_lock(&q->mu);
	while (q->tail == q->head && !q->closed)
		pthread_cond_wait(&q->cv, &q->mu);
	bool ok = q->tail != q->head;
	if (ok) {
		*t = q->q[q->head % QCAP];
		*id = q->ids[q->head % QCAP];
		q->head++;
		pthread_cond_broadcast(&q->cv);
	}
	pthread_mutex_unlock(&q->mu);
	return ok;
}

static void q_close(struct queue *q)
{
	pthread_mutex_lock(&q->mu);
	q->closed = true;
	pthread_cond_broadcast(&q->cv);
	pthread_mutex_unlock(&q->mu);
}

static void *submitter(void *arg)
{
	struct shared *sh = arg;
	for (long i = 0; i < sh->iters; i++) {
		uint64_t req, ep;
		lin_scope rs, es;
		lin_token tok;
		cr_assert_eq(lin_request_begin(sh->rt, NULL, &req), 0);
		cr_assert_eq(lin_scope_enter(sh->rt, req, &rs), 0);
		cr_assert_eq(lin_epoch_declare(sh->rt, NULL, &ep), 0);
		cr_assert_eq(lin_scope_enter(sh->rt, ep, &es), 0);
		cr_assert_eq(lin_token_capture(sh->rt, &tok), 0);
		cr_assert_eq(lin_scope_exit(sh->rt, &es), 0);
		cr_assert_eq(lin_scope_exit(sh->rt, &rs), 0);
		q_push(&sh->work, &tok, ep);
		q_push(&sh->retire, &tok, ep); /* retired concurrently with the worker's adopt */
		cr_assert_eq(lin_request_end(sh->rt, req), 0);
	}
	return NULL;
}

static void *worker(void *arg)
{
	struct shared *sh = arg;
	lin_token tok;
	uint64_t ep;
	while (q_pop(&sh->work, &tok, &ep)) {
		lin_scope s;
		int rc = lin_token_adopt(sh->rt, &tok, &s);
		if (rc == -LIN_ESTALE_TOKEN) {
			atomic_fetch_add(&sh->stale, 1);
			continue;
		}
		cr_assert_eq(rc, 0, "adopt: %s", lin_strerror(rc));
		uint64_t cur;
		cr_assert_eq(lin_scope_current(sh->rt, NULL, &cur, NULL), 0);
		cr_assert_eq(cur, ep, "a worker never runs under another epoch");
		lin_launch l;
		cr_assert_eq(lin_launch_begin(sh->rt, "stress_kernel", &l), 0);
		cr_assert_eq(lin_launch_end(sh->rt, &l), 0);
		cr_assert_eq(lin_scope_exit(sh->rt, &s), 0);
		atomic_fetch_add(&sh->adopted, 1);
		atomic_fetch_add(&sh->launched, 1);
	}
	return NULL;
}

static void *retirer(void *arg)
{
	struct shared *sh = arg;
	lin_token tok;
	uint64_t ep;
	while (q_pop(&sh->retire, &tok, &ep))
		cr_assert_eq(lin_epoch_retire(sh->rt, ep), 0);
	return NULL;
}

static void *reader(void *arg)
{
	struct shared *sh = arg;
	for (long i = 0; i < sh->iters * 4; i++) {
		struct lin_entity_info info = { .sz = sizeof(info) };
		uint64_t req;
		int rc = lin_entity_lookup(sh->rt, (uint64_t)(i % 5000) + 1, &info, &req, 1);
		cr_assert(rc == 0 || rc == -LIN_ENOTFOUND);
		atomic_fetch_add(&sh->lookups, 1);
	}
	return NULL;
}

static void queue_init(struct queue *q)
{
	memset(q, 0, sizeof(*q));
	pthread_mutex_init(&q->mu, NULL);
	pthread_cond_init(&q->cv, NULL);
}

Test(stress, handoffs_launches_and_retirement_race_safely, .timeout = 300)
{
	struct shared sh = { 0 };
	const char *env = getenv("LIN_STRESS_ITERS");
	sh.iters = env ? atol(env) : 20000;
	struct membuf m = { 0 };
	struct lin_runtime_opts o = {
		.sz = sizeof(o), .trace_write = membuf_write, .trace_user = &m, .flush_interval_ms = 2
	};
	cr_assert_eq(lin_runtime_create(&o, &sh.rt), 0);
	queue_init(&sh.work);
	queue_init(&sh.retire);
	enum { NSUB = 2, NWORK = 3 };
	pthread_t sub[NSUB], wk[NWORK], ret, rd;
	for (int i = 0; i < NWORK; i++)
		pthread_create(&wk[i], NULL, worker, &sh);
	pthread_create(&ret, NULL, retirer, &sh);
	pthread_create(&rd, NULL, reader, &sh);
	for (int i = 0; i < NSUB; i++)
		pthread_create(&sub[i], NULL, submitter, &sh);
	for (int i = 0; i < NSUB; i++)
		pthread_join(sub[i], NULL);
	q_close(&sh.work);
	q_close(&sh.retire);
	for (int i = 0; i < NWORK; i++)
		pthread_join(wk[i], NULL);
	pthread_join(ret, NULL);
	pthread_join(rd, NULL);
	long total = sh.iters * NSUB;
	cr_assert_eq(sh.adopted + sh.stale, total, "every token was adopted or found stale");
	struct lin_runtime_stats st = { .sz = sizeof(st) };
	lin_runtime_flush(sh.rt);
	lin_runtime_get_stats(sh.rt, &st);
	cr_assert_eq(st.live_epochs, 0, "every epoch retired");
	cr_assert_eq(st.live_requests, 0);
	cr_assert_eq(st.misuse, (uint64_t)sh.stale, "only stale tokens were misuse");
	lin_runtime_free(sh.rt);

	/* The trace agrees: one launch record per successful adopt, each under its epoch. */
	struct trace t;
	cr_assert_eq(trace_load_mem(&t, m.p, m.n), 0);
	uint64_t dropped = 0;
	for (size_t k = 0; trace_nth(&t, LIN_REC_DROPPED, k); k++)
		dropped += rec_u(trace_nth(&t, LIN_REC_DROPPED, k), 2);
	cr_assert_eq(dropped, st.events_dropped);
	if (!dropped) {
		cr_assert_eq(trace_count(&t, LIN_REC_LAUNCH), (size_t)sh.launched);
		cr_assert_eq(trace_count(&t, LIN_REC_EPOCH_RETIRE), (size_t)total);
	}
	trace_free(&t);
	free(m.p);
}
