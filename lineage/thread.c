/* SPDX-License-Identifier: MIT */
/*
 * thread.c - per-thread state: the event buffer (single producer: the thread; single
 * consumer: the writer), the scope stack and the open launches.
 *
 * A thread's state is created on its first call into a runtime and found afterwards
 * through an initial-exec TLS cache (one compare). It is owned by the runtime: at thread
 * exit a pthread-key destructor records any scope left open and marks the state exited;
 * the writer frees it once its events are drained. lin_runtime_free deletes the key first,
 * so no destructor runs against a freed runtime.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>

#include "rt.h"

__thread struct lin_tls_cache lin_tls __attribute__((tls_model("initial-exec")));
static __thread uint32_t tls_tid __attribute__((tls_model("initial-exec")));

/* A forked child's thread is a new thread: forget the parent's id (runtime.c, fork_child). */
void lin_rt_tid_forget(void) { tls_tid = 0; }

uint32_t lin_rt_gettid(void)
{
	if (LIN_UNLIKELY(!tls_tid))
		tls_tid = (uint32_t)syscall(SYS_gettid);
	return tls_tid;
}

/* The thread's context-switch event (hostsched.c). A refusal is logged here and written by the
 * writer as a dropped record (host_sched_refused): the thread runs on untraced by it. */
static void sched_open(lin_runtime *rt, struct lin_tstate *ts)
{
	ts->sched = lin_sched_open(&rt->sched, &ts->sched_err, &ts->sched_what);
	if (!ts->sched)
		lin_logger_log(&rt->logger, LIN_LOG_WARN,
			       "host scheduling evidence refused on thread %u: %s: %s", ts->tid,
			       ts->sched_what, lin_strerror(ts->sched_err));
}

struct lin_tstate *lin_tstate_slow(lin_runtime *rt)
{
	struct lin_tstate *ts = pthread_getspecific(rt->key);
	if (!ts) {
		ts = aligned_alloc(LIN_CACHELINE,
				   (sizeof(*ts) + LIN_CACHELINE - 1) & ~(size_t)(LIN_CACHELINE - 1));
		if (!ts)
			return NULL;
		memset(ts, 0, sizeof(*ts));
		ts->ev = calloc(rt->ring_events, sizeof(struct lin_event));
		if (!ts->ev) {
			free(ts);
			return NULL;
		}
		ts->mask = rt->ring_events - 1;
		ts->kick_mask = rt->ring_events / 4 - 1;
		ts->tid = lin_rt_gettid();
		ts->serial = atomic_fetch_add(&rt->thread_serial, 1) + 1;
		ts->rt = rt;
		if (rt->sched.on)
			sched_open(rt, ts);
		if (pthread_setspecific(rt->key, ts)) {
			lin_sched_close(ts->sched);
			free(ts->ev);
			free(ts);
			return NULL;
		}
		pthread_mutex_lock(&rt->threads_lock);
		ts->next = rt->threads;
		rt->threads = ts;
		pthread_mutex_unlock(&rt->threads_lock);
		atomic_fetch_add(&rt->nthreads, 1);
	}
	lin_tls.rt = rt;
	lin_tls.gen = rt->gen;
	lin_tls.ts = ts;
	return ts;
}

void lin_blob_free(struct lin_blob *b)
{
	if (!b)
		return;
	free(b->name);
	free(b->remote);
	free(b);
}

void lin_event_drop_owned(struct lin_event *e)
{
	if ((e->type == LIN_REC_EPOCH_DECLARE || e->type == LIN_REC_REQUEST_BEGIN) && e->b) {
		lin_blob_free((struct lin_blob *)(uintptr_t)e->b);
		e->b = 0;
	}
}

void lin_tstate_free(struct lin_tstate *ts)
{
	if (!ts)
		return;
	/* Events never drained (a failed output) may still own blobs. */
	uint64_t t = atomic_load(&ts->tail), h = atomic_load(&ts->pub_head);
	for (; t != h; t++)
		lin_event_drop_owned(&ts->ev[t & ts->mask]);
	lin_sched_close(ts->sched);
	free(ts->ev);
	free(ts);
}

void lin_record_misuse(lin_runtime *rt, struct lin_tstate *ts, enum lin_misuse_cause cause,
		       uint8_t kind, uint64_t target, uint32_t version, uint64_t detail)
{
	atomic_fetch_add_explicit(&rt->misuse, 1, memory_order_relaxed);
	lin_logger_log(&rt->logger, LIN_LOG_WARN, "misuse on thread %u: %s (id %llu)", lin_rt_gettid(),
		       lin_misuse_names[cause], target == LIN_NIL ? 0ULL : (unsigned long long)target);
	if (!ts)
		return;
	struct lin_event e = {
		.type = LIN_REC_MISUSE,
		.kind = kind,
		.depth = (uint16_t)cause,
		.version = version,
		.ticks = lin_clock_ticks(&rt->clock),
		.a = target,
		.b = detail,
	};
	lin_event_push(ts, &e);
}

/* Thread exit: report open scopes, then hand the state to the writer. */
void lin_tstate_key_dtor(void *p)
{
	struct lin_tstate *ts = p;
	lin_runtime *rt = ts->rt;
	if (ts->depth) {
		struct lin_scope_ent *top = &ts->scopes[ts->depth - 1];
		lin_record_misuse(rt, ts, LIN_MISUSE_THREAD_EXIT_OPEN_SCOPE, top->kind, top->id,
				  top->version, ts->depth);
	}
	if (lin_tls.ts == ts) {
		lin_tls.rt = NULL;
		lin_tls.ts = NULL;
	}
	/* Its context switches end with it: read them now and give back the fd and the
	 * locked ring, rather than at the writer's next drain (threads that come and go
	 * would otherwise hold fds the application needs). */
	lin_sched_detach(ts->sched);
	atomic_store_explicit(&ts->exited, 1, memory_order_release);
}

/* Wake the writer when this thread's buffer is half full (rt.h, lin_event_push). */
void lin_tstate_kick(struct lin_tstate *ts)
{
	lin_runtime *rt = ts->rt;
	struct lin_doorbell *b = rt->bell;
	uint64_t tail = atomic_load_explicit(&ts->tail, memory_order_acquire);
	ts->tail_cache = tail;
	if (ts->head - tail < ((uint64_t)ts->mask + 1) / 2 || !b || !b->armed || rt->forked_child)
		return;
	if (atomic_exchange_explicit(&b->rung, 1, memory_order_acq_rel))
		return;
	pthread_mutex_lock(&b->lock);
	pthread_cond_signal(&b->cond);
	pthread_mutex_unlock(&b->lock);
}
