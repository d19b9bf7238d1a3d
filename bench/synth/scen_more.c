/* SPDX-License-Identifier: MIT */
/*
 * scen_more.c - graph replay, batching (fan-in), fan-out across streams, and the scenario
 * table (including mixed).
 */
#include <stdlib.h>
#include <string.h>

#include "synth.h"

uint32_t synth_submitter(struct synth *sx);
uint32_t synth_worker(struct synth *sx, uint32_t not );

struct gjob {
	struct synth *sx;
	struct synth_task t;
	uint32_t exec;
};

static void begin_task(struct synth *sx, struct synth_task *t, uint32_t stream)
{
	memset(t, 0, sizeof(*t));
	t->req[0] = synth_request(sx);
	t->nreq = 1;
	t->stream = sx->stream_base + stream;
}

static void end_task(struct synth *sx, struct synth_task *t)
{
	synth_retire(sx, t);
	for (uint32_t i = 0; i < t->nreq; i++)
		(void)lin_request_end(sx->rt, t->req[i]);
}

/* ------------------------------------------------------------- graph replay */

static const char *const graph_kernels[] = { "graph_attn", "graph_mlp", "graph_norm" };

static void capture_step(void *arg)
{
	struct gjob *j = arg;
	begin_task(j->sx, &j->t, 0);
	synth_op_begin(j->sx, &j->t);
	j->exec = synth_graph_build(j->sx, &j->t, graph_kernels, 3);
	synth_graph_launch(j->sx, &j->t, j->exec); /* the capturing request runs it once */
	synth_op_end(j->sx, &j->t);
	end_task(j->sx, &j->t);
}

static void replay_submit(void *arg)
{
	struct gjob *j = arg;
	begin_task(j->sx, &j->t, 0);
	synth_op_begin(j->sx, &j->t);
	synth_handoff(j->sx, &j->t);
	synth_op_end(j->sx, &j->t);
}

static void replay_step(void *arg)
{
	struct gjob *j = arg;
	synth_adopt(j->sx, &j->t);
	synth_graph_launch(j->sx, &j->t, j->exec);
	synth_release(j->sx, &j->t);
	end_task(j->sx, &j->t);
}

/* A new request, declared on the capturing thread, replays the graph there. */
static void replay_here_step(void *arg)
{
	struct gjob *j = arg;
	begin_task(j->sx, &j->t, 0);
	synth_op_begin(j->sx, &j->t);
	synth_graph_launch(j->sx, &j->t, j->exec);
	synth_op_end(j->sx, &j->t);
	end_task(j->sx, &j->t);
}

/* @n requests: graphs of (1 capture + P replays) requests each. @on_worker: each replay's
 * request is declared on a submitter and the replay runs on a worker (a handoff); else the
 * replays' requests are declared, and replayed, on the thread that captured. */
void synth_run_graph(struct synth *sx, uint32_t n, bool on_worker)
{
	uint32_t p = sx->o.replays ? sx->o.replays : 1;
	uint32_t graphs = n / (p + 1) ? n / (p + 1) : 1;
	for (uint32_t g = 0; g < graphs; g++) {
		struct gjob cap = { .sx = sx };
		uint32_t owner = synth_submitter(sx);
		synth_pool_exec(sx->pool, owner, capture_step, &cap);
		for (uint32_t i = 0; i < p; i++) {
			struct gjob r = { .sx = sx, .exec = cap.exec };
			if (!on_worker) {
				synth_pool_exec(sx->pool, owner, replay_here_step, &r);
				continue;
			}
			uint32_t s = synth_submitter(sx);
			synth_pool_exec(sx->pool, s, replay_submit, &r);
			synth_pool_exec(sx->pool, synth_worker(sx, s), replay_step, &r);
		}
	}
}

/* ------------------------------------------------------------- batching (fan-in) */

struct bjob {
	struct synth *sx;
	struct synth_task req[SYNTH_MAX_BATCH];
	struct synth_task batch;
	uint32_t i, n;
};

static void batch_submit(void *arg)
{
	struct bjob *j = arg;
	struct synth_task *t = &j->req[j->i];
	begin_task(j->sx, t, 0);
	synth_op_begin(j->sx, t);
	synth_kernel(j->sx, t, "batch_tokenize"); /* each request's own direct work */
	synth_op_end(j->sx, t);
}

/* The batcher serves B requests with one launch. Only lineage can say so: the epoch
 * strategy declares one fan-in epoch naming all B requests. The others do the best they
 * can with one id (synth_call_begin, no request open on this thread): Kineto one op and
 * nvtx one range, neither naming a request; manual the batch's first request's id;
 * cuda-only nothing. */
static void batch_step(void *arg)
{
	struct bjob *j = arg;
	struct synth_task *b = &j->batch;
	memset(b, 0, sizeof(*b));
	for (uint32_t i = 0; i < j->n; i++)
		b->req[b->nreq++] = j->req[i].req[0];
	b->stream = j->sx->stream_base + 1;
	bool epoch = j->sx->o.strategy == SYNTH_EPOCH;
	if (epoch)
		synth_op_begin(j->sx, b);
	synth_kernel(j->sx, b, "batched_forward");
	if (epoch) {
		synth_op_end(j->sx, b);
		synth_retire(j->sx, b);
	} else {
		synth_task_done(j->sx, b);
	}
	for (uint32_t i = 0; i < j->n; i++)
		end_task(j->sx, &j->req[i]);
}

void synth_run_batching(struct synth *sx, uint32_t n)
{
	struct bjob *j = synth_alloc(sizeof(*j)); /* large: not on the stack */
	uint32_t b = sx->o.batch ? sx->o.batch : 1;
	if (b > SYNTH_MAX_BATCH)
		b = SYNTH_MAX_BATCH;
	for (uint32_t done = 0; done < n; done += b) {
		memset(j, 0, sizeof(*j));
		j->sx = sx;
		j->n = n - done < b ? n - done : b;
		for (j->i = 0; j->i < j->n; j->i++)
			synth_pool_exec(sx->pool, synth_submitter(sx), batch_submit, j);
		synth_pool_exec(sx->pool, synth_worker(sx, UINT32_MAX), batch_step, j);
	}
	free(j);
}

/* ------------------------------------------------------------- fan-out across streams */

#define MAX_STREAMS 16

struct fjob {
	struct synth *sx;
	struct synth_task t[MAX_STREAMS];
	uint32_t s, n;
};

static void fan_submit(void *arg)
{
	struct fjob *j = arg;
	uint64_t req = synth_request(j->sx);
	for (uint32_t s = 0; s < j->n; s++) {
		struct synth_task *t = &j->t[s];
		memset(t, 0, sizeof(*t));
		t->req[0] = req;
		t->nreq = 1;
		t->stream = j->sx->stream_base + s;
		synth_op_begin(j->sx, t); /* one epoch per stream, same request */
		synth_handoff(j->sx, t);
		synth_op_end(j->sx, t);
	}
}

static void fan_step(void *arg)
{
	struct fjob *j = arg;
	struct synth_task *t = &j->t[j->s];
	synth_adopt(j->sx, t);
	synth_memcpy(j->sx, t, 1 << 16);
	synth_kernel(j->sx, t, "fanout_shard");
	synth_memset(j->sx, t, 1 << 12);
	synth_release(j->sx, t);
	synth_retire(j->sx, t);
}

void synth_run_fanout(struct synth *sx, uint32_t n)
{
	struct fjob *j = synth_alloc(sizeof(*j));
	uint32_t streams = sx->o.streams ? sx->o.streams : 1;
	if (streams > MAX_STREAMS)
		streams = MAX_STREAMS;
	for (uint32_t r = 0; r < n; r++) {
		memset(j, 0, sizeof(*j));
		j->sx = sx;
		j->n = streams;
		uint32_t sub = synth_submitter(sx);
		synth_pool_exec(sx->pool, sub, fan_submit, j);
		for (j->s = 0; j->s < streams; j->s++)
			synth_pool_exec(sx->pool, synth_worker(sx, sub), fan_step, j);
		(void)lin_request_end(sx->rt, j->t[0].req[0]);
	}
	free(j);
}

/* ------------------------------------------------------------- the table */

static void run_direct(struct synth *sx) { synth_run_direct(sx, sx->o.requests); }
static void run_pool(struct synth *sx) { synth_run_pool(sx, sx->o.requests); }
static void run_chain(struct synth *sx) { synth_run_chain(sx, sx->o.requests); }
static void run_graph_here(struct synth *sx) { synth_run_graph(sx, sx->o.requests, false); }
static void run_graph_worker(struct synth *sx) { synth_run_graph(sx, sx->o.requests, true); }
static void run_batching(struct synth *sx) { synth_run_batching(sx, sx->o.requests); }
static void run_fanout(struct synth *sx) { synth_run_fanout(sx, sx->o.requests); }
static void run_stale(struct synth *sx) { synth_run_stale(sx, sx->o.requests); }

static void run_dropped(struct synth *sx)
{
	synth_run_direct(sx, sx->o.requests / 2);
	synth_run_pool(sx, sx->o.requests - sx->o.requests / 2);
}

/* Another profiler's CUSTOM0 ids ride along on every op (under kineto, that profiler is
 * the strategy itself: nothing is added). */
static void run_mixed(struct synth *sx)
{
	uint32_t n = sx->o.requests / 7 ? sx->o.requests / 7 : 1;
	sx->other_profiler = true;
	synth_run_direct(sx, n);
	synth_run_pool(sx, n);
	synth_run_chain(sx, n);
	synth_run_graph(sx, n, false);
	synth_run_graph(sx, n, true);
	synth_run_batching(sx, n);
	synth_run_fanout(sx, n);
}

static void run_multi(struct synth *sx)
{
	synth_run_pool(sx, sx->o.requests / 2);
	synth_run_graph(sx, sx->o.requests - sx->o.requests / 2, true);
}

const struct synth_scenario synth_scenarios[] = {
	{ "direct", "the declaring thread launches its own work (no handoff)", run_direct },
	{ "pool-handoff", "declared on a submitter thread, launched by a pool worker", run_pool },
	{ "chain-handoff", "handed through K pool threads (--hops), each launching", run_chain },
	{ "graph-same-thread",
	  "captured under one request, replayed P times (--replays) for "
	  "other requests on the thread that captured it",
	  run_graph_here },
	{ "graph-worker",
	  "captured under one request, replayed P times (--replays) for other "
	  "requests by pool workers (a handoff)",
	  run_graph_worker },
	{ "batching", "one launch serves B requests (--batch): a fan-in epoch", run_batching },
	{ "fanout-streams", "one request fans out to S streams (--streams) on several workers", run_fanout },
	{ "stale-token", "a third of the handoffs adopt a token whose epoch was retired", run_stale },
	{ "dropped-records", "the simulator drops 10% of the API calls' records and reports it",
	  run_dropped },
	{ "multi-process", "two processes whose correlation ids collide (TRACE and TRACE.2)", run_multi },
	{ "mixed", "every handoff pattern in one run, with a second profiler's CUSTOM0 ids", run_mixed },
	/* docs/attribution.md: one injected cause per request's target kernel */
	{ "attr-handoff-wait", "the task waits in the pool queue before a worker adopts it",
	  synth_run_attr_handoff },
	{ "attr-descheduled-blocked", "the worker sleeps between adopt and the launch call",
	  synth_run_attr_blocked },
	{ "attr-descheduled-preempted",
	  "the worker shares a core with CPU hogs between adopt and the launch call",
	  synth_run_attr_preempted },
	{ "attr-api-call", "CPU work inside the launch call", synth_run_attr_api },
	{ "attr-submit-delay", "the command's submission is delayed (queued -> submitted)",
	  synth_run_attr_submit },
	{ "attr-stream-dependency", "another request's long kernel ahead on the same stream",
	  synth_run_attr_stream },
	{ "attr-event-dependency",
	  "the stream waits for an event after another stream's long kernel", synth_run_attr_event },
	{ "attr-graph-dependency", "the target is a graph node after a long node, replayed",
	  synth_run_attr_graph },
	{ "attr-device-busy", "one device slot, filled by another stream's long kernel",
	  synth_run_attr_device },
	{ "attr-queueing", "throughput: 8 kernels back to back, each waiting for the last",
	  synth_run_attr_queueing },
	{ "attr-ambiguous-submit", "submitted exactly when the full device frees (ambiguous)",
	  synth_run_attr_amb_submit },
	{ "attr-ambiguous-deps", "stream predecessor and awaited event end together (ambiguous)",
	  synth_run_attr_amb_deps },
};
const size_t synth_n_scenarios = sizeof(synth_scenarios) / sizeof(synth_scenarios[0]);

const struct synth_scenario *synth_find_scenario(const char *name)
{
	for (size_t i = 0; i < synth_n_scenarios; i++)
		if (strcmp(synth_scenarios[i].name, name) == 0)
			return &synth_scenarios[i];
	return NULL;
}
