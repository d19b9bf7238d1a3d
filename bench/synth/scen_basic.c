/* SPDX-License-Identifier: MIT */
/*
 * scen_basic.c - direct launches, pool handoffs, K-hop chains and stale tokens. Pool
 * threads [0, T/2) are the submitting (declaring) side, [T/2, T) the workers.
 */
#include <stdlib.h>
#include <string.h>

#include "synth.h"

#define WINDOW 8 /* tasks submitted before the workers drain them */

struct job {
	struct synth *sx;
	struct synth_task t;
	uint32_t hop, hops;
};

uint32_t synth_submitter(struct synth *sx)
{
	uint32_t half = sx->o.threads / 2;
	return synth_pick(sx, 0, half ? half : 1);
}

uint32_t synth_worker(struct synth *sx, uint32_t not )
{
	uint32_t lo = sx->o.threads / 2, hi = sx->o.threads;
	uint32_t w = synth_pick(sx, lo, hi);
	if (w == not )
		w = (w + 1 - lo) % (hi - lo) + lo;
	return w;
}

static void new_task(struct synth *sx, struct synth_task *t)
{
	memset(t, 0, sizeof(*t));
	t->req[0] = synth_request(sx);
	t->nreq = 1;
	t->stream = sx->stream_base + (uint32_t)(synth_rand(sx) % (sx->o.streams ? sx->o.streams : 1));
}

static void finish(struct synth *sx, struct synth_task *t)
{
	synth_retire(sx, t);
	for (uint32_t i = 0; i < t->nreq; i++)
		(void)lin_request_end(sx->rt, t->req[i]);
}

/* ------------------------------------------------------------- direct */

static void direct_step(void *arg)
{
	struct job *j = arg;
	new_task(j->sx, &j->t);
	synth_op_begin(j->sx, &j->t);
	synth_memcpy(j->sx, &j->t, 4096);
	synth_kernel(j->sx, &j->t, "direct_gemm");
	synth_kernel(j->sx, &j->t, "direct_softmax");
	synth_op_end(j->sx, &j->t);
	finish(j->sx, &j->t);
}

void synth_run_direct(struct synth *sx, uint32_t n)
{
	struct job j = { .sx = sx };
	for (uint32_t i = 0; i < n; i++)
		synth_pool_exec(sx->pool, synth_submitter(sx), direct_step, &j);
}

/* ------------------------------------------------------------- pool handoff, chains */

static void submit_step(void *arg)
{
	struct job *j = arg;
	new_task(j->sx, &j->t);
	synth_op_begin(j->sx, &j->t);
	synth_handoff(j->sx, &j->t);
	synth_op_end(j->sx, &j->t);
}

static void work_step(void *arg)
{
	struct job *j = arg;
	synth_adopt(j->sx, &j->t);
	synth_kernel(j->sx, &j->t, j->hops ? "chain_stage" : "pool_embed");
	if (!j->hops)
		synth_kernel(j->sx, &j->t, "pool_decode");
	if (j->hop + 1 < j->hops)
		synth_handoff(j->sx, &j->t); /* the next hop's token, captured here */
	synth_release(j->sx, &j->t);
	if (j->hop + 1 >= j->hops)
		finish(j->sx, &j->t);
}

static void retire_step(void *arg)
{
	struct job *j = arg;
	j->t.stale = true;
	synth_retire(j->sx, &j->t);
}

/* Submit a window of tasks, then drain it in a seed-shuffled order; @hops 0: one worker
 * step per task; @stale_every: every n-th task's epoch is retired before its handoff. */
static void run_window(struct synth *sx, struct job *jobs, uint32_t n, uint32_t hops, uint32_t stale_every)
{
	uint32_t sub[WINDOW];
	for (uint32_t i = 0; i < n; i++) {
		jobs[i] = (struct job){ .sx = sx, .hops = hops };
		sub[i] = synth_submitter(sx);
		synth_pool_exec(sx->pool, sub[i], submit_step, &jobs[i]);
		if (stale_every && synth_rand(sx) % stale_every == 0)
			synth_pool_exec(sx->pool, sub[i], retire_step, &jobs[i]);
	}
	for (uint32_t i = n; i > 1; i--) {
		uint32_t k = (uint32_t)(synth_rand(sx) % i);
		struct job tmp = jobs[i - 1];
		jobs[i - 1] = jobs[k];
		jobs[k] = tmp;
	}
	for (uint32_t i = 0; i < n; i++) {
		uint32_t prev = UINT32_MAX;
		uint32_t steps = hops ? hops : 1;
		for (jobs[i].hop = 0; jobs[i].hop < steps; jobs[i].hop++) {
			uint32_t w = hops ? synth_pick(sx, 0, sx->o.threads) : synth_worker(sx, prev);
			if (w == prev)
				w = (w + 1) % sx->o.threads;
			synth_pool_exec(sx->pool, w, work_step, &jobs[i]);
			prev = w;
		}
	}
}

static void run_windows(struct synth *sx, uint32_t n, uint32_t hops, uint32_t stale_every)
{
	struct job jobs[WINDOW];
	for (uint32_t done = 0; done < n; done += WINDOW)
		run_window(sx, jobs, n - done < WINDOW ? n - done : WINDOW, hops, stale_every);
}

void synth_run_pool(struct synth *sx, uint32_t n) { run_windows(sx, n, 0, 0); }

void synth_run_chain(struct synth *sx, uint32_t n)
{
	run_windows(sx, n, sx->o.hops ? sx->o.hops : 1, 0);
}

void synth_run_stale(struct synth *sx, uint32_t n) { run_windows(sx, n, 0, 3); }
