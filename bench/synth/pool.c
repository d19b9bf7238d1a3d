/* SPDX-License-Identifier: MIT */
/*
 * pool.c - the workloads' thread pool. Each pool thread waits for a step, runs it and
 * reports completion; synth_pool_exec hands one step to one chosen thread and waits for
 * it. Steps therefore run one at a time in the order the scenario issues them, which makes
 * every id the runtime and the simulator hand out (requests, epochs, correlationIds,
 * gridIds) a function of the seed alone, while each step still runs on its own thread and
 * every handoff crosses threads for real. The mutex/condvar pair per thread gives each
 * step a happens-before edge to the next.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "synth.h"

enum { IDLE, POSTED, DONE, QUIT };

struct slot {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int state;
	synth_step_fn fn;
	void *arg;
	pthread_t th;
};

struct synth_pool {
	uint32_t n;
	struct slot *s;
};

static void *worker(void *arg)
{
	struct slot *s = arg;
	pthread_mutex_lock(&s->mu);
	for (;;) {
		while (s->state != POSTED && s->state != QUIT)
			pthread_cond_wait(&s->cv, &s->mu);
		if (s->state == QUIT)
			break;
		pthread_mutex_unlock(&s->mu);
		s->fn(s->arg);
		pthread_mutex_lock(&s->mu);
		s->state = DONE;
		pthread_cond_broadcast(&s->cv);
	}
	pthread_mutex_unlock(&s->mu);
	return NULL;
}

int synth_pool_start(struct synth_pool **out, uint32_t n)
{
	struct synth_pool *p = calloc(1, sizeof(*p));
	if (!p || !(p->s = calloc(n, sizeof(*p->s)))) {
		free(p);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < n; i++) {
		struct slot *s = &p->s[i];
		pthread_mutex_init(&s->mu, NULL);
		pthread_cond_init(&s->cv, NULL);
		int r = pthread_create(&s->th, NULL, worker, s);
		if (r) {
			pthread_mutex_destroy(&s->mu);
			pthread_cond_destroy(&s->cv);
			synth_pool_stop(p);
			return -r;
		}
		p->n = i + 1;
	}
	*out = p;
	return 0;
}

void synth_pool_exec(struct synth_pool *p, uint32_t thread, synth_step_fn fn, void *arg)
{
	struct slot *s = &p->s[thread % p->n];
	pthread_mutex_lock(&s->mu);
	s->fn = fn;
	s->arg = arg;
	s->state = POSTED;
	pthread_cond_broadcast(&s->cv);
	while (s->state != DONE)
		pthread_cond_wait(&s->cv, &s->mu);
	s->state = IDLE;
	pthread_mutex_unlock(&s->mu);
}

void synth_pool_stop(struct synth_pool *p)
{
	if (!p)
		return;
	for (uint32_t i = 0; i < p->n; i++) {
		struct slot *s = &p->s[i];
		pthread_mutex_lock(&s->mu);
		s->state = QUIT;
		pthread_cond_broadcast(&s->cv);
		pthread_mutex_unlock(&s->mu);
		pthread_join(s->th, NULL);
		pthread_mutex_destroy(&s->mu);
		pthread_cond_destroy(&s->cv);
	}
	free(p->s);
	free(p);
}
