/* SPDX-License-Identifier: MIT */
/*
 * layer_buf.c - the test layer's buffers: requested from the client on the thread that
 * needs one, filled with records, completed when full or flushed, delivered through the
 * client's completion callback by the layer's thread or the flushing thread
 * (cupti_layer.h says what is CUPTI's behaviour and what is a model of it).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "layer_internal.h"

static void *oom(void)
{
	abort(); /* a test double: no memory is the end of the test */
	return NULL;
}

/* splitmix64, for the delivery order. */
static uint64_t mix(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* ------------------------------------------------------------- completion, delivery */

static void enqueue(struct cl_buf *b)
{
	b->next = NULL;
	*cl.queue_tail = b;
	cl.queue_tail = &b->next;
	pthread_cond_broadcast(&cl.cv);
}

/* A buffer the layer stops filling: to the queue, or to wait for its records. */
static void complete(struct cl_buf *b)
{
	if (b->incomplete) {
		b->next = cl.waiting;
		cl.waiting = b;
	} else {
		enqueue(b);
	}
}

/* Take one buffer off the queue: the first, or one picked by the seed. */
static struct cl_buf *dequeue(void)
{
	size_t n = 0, pick = 0;
	struct cl_buf **pp;

	for (struct cl_buf *b = cl.queue; b; b = b->next)
		n++;
	if (!n)
		return NULL;
	if (cl.cfg.seed)
		pick = (size_t)(mix(&cl.rng) % n);
	for (pp = &cl.queue; pick--; pp = &(*pp)->next)
		;
	struct cl_buf *b = *pp;
	*pp = b->next;
	if (!b->next) /* it was the last */
		cl.queue_tail = pp;
	return b;
}

/* Hand @b to the client with cl.mu dropped; it is the client's again afterwards. */
static void deliver(struct cl_buf *b)
{
	CUpti_BuffersCallbackCompleteFunc done = cl.done;

	cl.delivering++;
	cl.st.delivered++;
	if (b->incomplete)
		cl.st.delivered_incomplete++;
	pthread_mutex_unlock(&cl.mu);
	/* context and streamId are deprecated: always NULL and 0 (cupti_activity.h). */
	done(NULL, 0, b->data, b->size, b->used);
	pthread_mutex_lock(&cl.mu);
	cl.st.returned++;
	cl.delivering--;
	cl.outstanding--;
	free(b);
	pthread_cond_broadcast(&cl.cv);
}

static void deliver_queue(void)
{
	struct cl_buf *b;

	while ((b = dequeue()))
		deliver(b);
}

/* Forget the incomplete records of @b (it goes to the client as it is). */
static void forget_pending(const struct cl_buf *b)
{
	size_t j = 0;

	for (size_t i = 0; i < cl.n_pend; i++)
		if (cl.pend[i].buf != b)
			cl.pend[j++] = cl.pend[i];
	cl.n_pend = j;
}

/* Post-processing: write the kind of every device record whose work is done. */
static void postprocess(void)
{
	size_t j = 0;
	struct cl_buf **pp = &cl.waiting;

	for (size_t i = 0; i < cl.n_pend; i++) {
		struct cl_pending *p = &cl.pend[i];

		if (!p->done) {
			cl.pend[j++] = *p;
			continue;
		}
		memcpy(p->buf->data + p->off, &p->kind, sizeof(p->kind));
		p->buf->incomplete--;
	}
	cl.n_pend = j;
	while (*pp) {
		struct cl_buf *b = *pp;

		if (b->incomplete) {
			pp = &b->next;
			continue;
		}
		*pp = b->next;
		enqueue(b);
	}
}

/* Complete what a flush completes; cl.mu held. */
static void flush_locked(bool forced)
{
	if (forced) {
		cl.st.forced_flushes++;
		for (size_t k = 0; k < CL_KINDS; k++)
			if (cl.enabled[k]) {
				cl.st.forced_while_enabled++;
				break;
			}
	} else {
		cl.st.flushes++;
	}
	if (!forced)
		postprocess();
	for (struct cl_thread *t = cl.threads; t; t = t->next) {
		if (t->cur && t->cur->used) {
			complete(t->cur);
			t->cur = NULL;
		}
	}
	if (cl.dev && cl.dev->used && (forced || !cl.dev->incomplete)) {
		if (forced)
			forget_pending(cl.dev);
		enqueue(cl.dev);
		cl.dev = NULL;
	}
	while (forced && cl.waiting) {
		struct cl_buf *b = cl.waiting;

		cl.waiting = b->next;
		forget_pending(b);
		enqueue(b);
	}
}

CUptiResult cl_flush(bool forced)
{
	pthread_mutex_lock(&cl.mu);
	if (!cl.done) {
		pthread_mutex_unlock(&cl.mu);
		return CUPTI_ERROR_INVALID_OPERATION; /* not preceded by RegisterCallbacks */
	}
	flush_locked(forced);
	deliver_queue();
	/* Blocking: buffers the layer's thread is delivering are delivered too. */
	while (cl.delivering || cl.queue) {
		deliver_queue();
		if (cl.delivering)
			pthread_cond_wait(&cl.cv, &cl.mu);
	}
	pthread_mutex_unlock(&cl.mu);
	return CUPTI_SUCCESS;
}

/* ------------------------------------------------------------- the layer's thread */

static void deadline(struct timespec *ts, uint32_t ms)
{
	clock_gettime(CLOCK_REALTIME, ts);
	ts->tv_sec += ms / 1000;
	ts->tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

static void *worker(void *arg)
{
	struct timespec next;
	uint32_t period = 0;

	(void)arg;
	pthread_mutex_lock(&cl.mu);
	while (!cl.stop) {
		if (cl.queue) {
			deliver_queue();
			continue;
		}
		if (cl.flush_ms != period) {
			period = cl.flush_ms;
			if (period)
				deadline(&next, period);
		}
		if (!period) {
			pthread_cond_wait(&cl.cv, &cl.mu);
			continue;
		}
		if (pthread_cond_timedwait(&cl.cv, &cl.mu, &next) == ETIMEDOUT) {
			/* cuptiActivityFlushPeriod: "only those activity buffers which are full and
			 * have all the activity records completed" - records post-processed, full
			 * buffers whose records are now complete delivered, partial ones kept. */
			cl.st.periodic_flushes++;
			postprocess();
			deadline(&next, period);
		}
	}
	pthread_mutex_unlock(&cl.mu);
	return NULL;
}

static void cl_shutdown(void)
{
	pthread_mutex_lock(&cl.mu);
	cl.stop = true;
	pthread_cond_broadcast(&cl.cv);
	bool join = cl.worker_running;
	cl.worker_running = false;
	pthread_mutex_unlock(&cl.mu);
	if (join)
		pthread_join(cl.worker, NULL);
}

void cl_worker_start(void)
{
	if (cl.worker_running || cl.stop)
		return;
	if (pthread_create(&cl.worker, NULL, worker, NULL) != 0)
		abort();
	cl.worker_running = true;
	atexit(cl_shutdown);
}

/* ------------------------------------------------------------- writing records */

/* A buffer from the client's request callback, called with cl.mu dropped. */
static struct cl_buf *request(void)
{
	CUpti_BuffersCallbackRequestFunc req = cl.req;
	uint8_t *data = NULL;
	size_t size = 0, max_records = 0;

	if (!req)
		return NULL;
	cl.st.requests++;
	pthread_mutex_unlock(&cl.mu);
	req(&data, &size, &max_records);
	pthread_mutex_lock(&cl.mu);
	if (!data || size < 256) {
		cl.st.declined++;
		return NULL; /* "CUPTI may drop activity records" */
	}
	if (!cl.zeroed_attr) /* CUPTI zeroes it, on the thread that asked */
		memset(data, 0, size);
	struct cl_buf *b = calloc(1, sizeof(*b));
	if (!b)
		return oom();
	b->data = data;
	b->size = size;
	b->cap = cl.cfg.buffer_use && cl.cfg.buffer_use < size ? cl.cfg.buffer_use : size;
	if (++cl.outstanding > cl.st.max_outstanding)
		cl.st.max_outstanding = cl.outstanding;
	return b;
}

/* Room for @len bytes in *@slot, requesting a buffer if needed; cl.mu held. */
static struct cl_buf *room(struct cl_buf **slot, size_t len)
{
	struct cl_buf *b = *slot;

	if (b && b->used + len > b->cap) {
		complete(b);
		*slot = b = NULL;
	}
	if (b)
		return b;
	b = request();
	if (!b)
		return NULL;
	if (*slot) /* another thread installed one meanwhile (device buffer): complete it */
		complete(*slot);
	*slot = b;
	return b;
}

static void lost(void)
{
	cl.dropped++;
	cl.st.dropped++;
}

bool cl_put_thread(struct cl_thread *t, const void *rec, size_t len)
{
	struct cl_buf *b = room(&t->cur, len);

	if (!b) {
		lost();
		return false;
	}
	memcpy(b->data + b->used, rec, len);
	b->used += len;
	cl.st.records++;
	return true;
}

bool cl_put_device(const void *rec, size_t len)
{
	struct cl_buf *b = room(&cl.dev, len);
	uint32_t kind;

	if (!b) {
		lost();
		return false;
	}
	if (cl.n_pend == cl.cap_pend) {
		size_t cap = cl.cap_pend ? cl.cap_pend * 2 : 256;
		struct cl_pending *v = realloc(cl.pend, cap * sizeof(*v));

		if (!v)
			oom();
		cl.pend = v;
		cl.cap_pend = cap;
	}
	/* Everything but the kind, which post-processing writes last. */
	memcpy(&kind, rec, sizeof(kind));
	memcpy(b->data + b->used + sizeof(kind), (const uint8_t *)rec + sizeof(kind), len - sizeof(kind));
	cl.pend[cl.n_pend++] = (struct cl_pending){ b, b->used, kind, !cl.hold };
	b->incomplete++;
	b->used += len;
	cl.st.records++;
	return true;
}
