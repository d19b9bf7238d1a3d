/* SPDX-License-Identifier: MIT */
/*
 * scen_attr.c - the attribution scenarios (docs/attribution.md): each request is declared
 * on a submitter thread, handed to a worker, and its target kernel is held back by one
 * injected cause of known size; the cause truth (--cause-truth) records, per target, the
 * cause, its interval on the host clock and its size, from the workload's own bookkeeping.
 * Two scenarios inject two causes that end at the same instant: their label is ambiguous.
 *
 * The simulator's device clock is the runtime's host clock (lineage-synth runs it with
 * host_clock), so device times are host times here. After each target the worker records a
 * completion event on its stream, as a serving loop does: the trace then shows that sync
 * collection was on (the device_occupied rule's precondition, docs/ledger.md).
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lineage/trace_format.h"
#include "synth.h"

uint32_t synth_submitter(struct synth *sx);
uint32_t synth_worker(struct synth *sx, uint32_t not );

/* Streams of this lane: the target's and one for background work. */
enum { S_TARGET = 1, S_BG = 2 };

struct ajob {
	struct synth *sx;
	struct synth_task t;
	uint64_t cap_ns;          /* the handoff, as the submitter's clock read it */
	uint64_t handoff;         /* adopt - cap_ns: the pool's own latency, when not injected */
	uint32_t exec;            /* attr-graph-dependency: the graph exec */
	uint32_t event;           /* the event the target's stream waits for (0: none) */
	struct lin_sim_launch bg; /* background work's times */
	synth_step_fn bgfn;       /* the background work, launched right after the adopt */
};

static uint64_t now(const struct synth *sx) { return lin_runtime_now_ns(sx->rt); }

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = { .tv_sec = (time_t)(ns / 1000000000u),
			       .tv_nsec = (long)(ns % 1000000000u) };
	while (nanosleep(&ts, &ts) != 0)
		;
}

static void begin(struct synth *sx, struct synth_task *t, uint32_t stream)
{
	memset(t, 0, sizeof(*t));
	t->req[0] = synth_request(sx);
	t->nreq = 1;
	t->stream = sx->stream_base + stream;
}

static void end(struct synth *sx, struct synth_task *t)
{
	synth_retire(sx, t);
	(void)lin_request_end(sx->rt, t->req[0]);
}

/* When the target could have started but for what held it: the later of its launch call's
 * return and its submission. */
static uint64_t front(const struct lin_sim_launch *l)
{
	return l->api_end > l->submitted ? l->api_end : l->submitted;
}

/*
 * The label of target @l: @cause over [s, e]. A target whose handoff (not injected here)
 * took more than a quarter of that is not labelled: a second delay of comparable size
 * makes it no single-cause launch (counted: attr_skipped in the ATTR line).
 */
static void label(struct ajob *j, const struct lin_sim_launch *l, uint32_t cause, uint32_t alt,
		  uint64_t s, uint64_t e)
{
	if (e <= s)
		return;
	if (cause != LIN_TC_HANDOFF_WAIT && j->handoff > (e - s) / 4) {
		atomic_fetch_add(&j->sx->attr_skipped, 1);
		return;
	}
	synth_cause(j->sx, LIN_REC_KERNEL, (uint64_t)l->grid, cause, alt, s, e, e - s);
}

/* The worker adopts the handoff, timing what the pool took, then launches the scenario's
 * background work (another request's, nested in the adopted scope): launched here, right
 * before the target, it holds the target for its whole length whatever the pool took. */
static void adopt(struct ajob *j)
{
	j->handoff = now(j->sx) - j->cap_ns;
	synth_adopt(j->sx, &j->t);
	if (j->bgfn)
		j->bgfn(j);
}

/* ------------------------------------------------------------- steps */

static void submit_step(void *arg)
{
	struct ajob *j = arg;
	begin(j->sx, &j->t, S_TARGET);
	synth_op_begin(j->sx, &j->t);
	synth_handoff(j->sx, &j->t);
	synth_op_end(j->sx, &j->t);
	j->cap_ns = now(j->sx);
}

/* Background work of a request of its own, launched by its declaring thread on @stream:
 * one kernel of @dur (or until @until) and, with @event, a recording after it. */
static void background(struct ajob *j, uint32_t stream, uint64_t dur, uint64_t until, bool event)
{
	struct synth_task t;
	begin(j->sx, &t, stream);
	synth_op_begin(j->sx, &t);
	j->bg = (struct lin_sim_launch){ .dur_ns = dur, .until_dev = until };
	synth_kernel_ex(j->sx, &t, "attr_background", &j->bg);
	if (event)
		j->event = lin_sim_event_record(j->sx->sim, t.stream);
	synth_op_end(j->sx, &t);
	end(j->sx, &t);
}

/* The worker's side: adopt, [injection], the target, the completion event. */
static void target(struct ajob *j, struct lin_sim_launch *l)
{
	synth_kernel_ex(j->sx, &j->t, "attr_target", l);
	(void)lin_sim_event_record(j->sx->sim, j->t.stream);
	synth_release(j->sx, &j->t);
	end(j->sx, &j->t);
}

static void handoff_wait_step(void *arg)
{
	struct ajob *j = arg;
	struct lin_sim_launch l = { 0 };
	sleep_ns(j->sx->o.delay_ns); /* the task waits in the queue: the worker is elsewhere */
	uint64_t adopted = now(j->sx);
	synth_adopt(j->sx, &j->t);
	target(j, &l);
	label(j, &l, LIN_TC_HANDOFF_WAIT, 0, j->cap_ns, adopted);
}

/* Blocked: the worker sleeps between adopt and the launch call. The kernel's context
 * switches (LIN_RT_SCHED_EVENTS) are the evidence; the interval is also kept for
 * --sched-trace, the input format of other collectors (docs/attribution.md). */
static void blocked_step(void *arg)
{
	struct ajob *j = arg;
	struct lin_sim_launch l = { 0 };
	adopt(j);
	uint64_t s = now(j->sx);
	sleep_ns(j->sx->o.delay_ns); /* off-CPU between adopt and the launch call */
	uint64_t e = now(j->sx);
	synth_off_cpu(j->sx, s, e);
	target(j, &l);
	label(j, &l, LIN_TC_DESCHEDULED, 0, s, e);
}

/* Preempted: real CPU contention. Between adopt and the launch call HOGS threads spin
 * pinned to one core and the worker pins itself to that core and wants the CPU for D of
 * wall time: runnable, it gets about a (HOGS + 1)-th of it, the rest it is preempted. The
 * hogs spin only then (otherwise they poll every 100 us), so the rest of the run (the
 * submitter, the pool, the writer) is not slowed by them. Nothing here knows when the
 * worker was off-CPU: only the kernel's records (the collector) say it. */
#define HOGS 8
static struct {
	pthread_t t[HOGS];
	atomic_int stop, active;
	int cpu;
} hogs;

static void pin_self(int cpu, cpu_set_t *old)
{
	cpu_set_t s;
	if (old)
		pthread_getaffinity_np(pthread_self(), sizeof(*old), old);
	CPU_ZERO(&s);
	CPU_SET(cpu, &s);
	pthread_setaffinity_np(pthread_self(), sizeof(s), &s);
}

static void *hog_main(void *arg)
{
	(void)arg;
	pin_self(hogs.cpu, NULL);
	volatile uint64_t x = 0;
	while (!atomic_load_explicit(&hogs.stop, memory_order_relaxed)) {
		if (!atomic_load_explicit(&hogs.active, memory_order_relaxed)) {
			sleep_ns(100000);
			continue;
		}
		while (atomic_load_explicit(&hogs.active, memory_order_relaxed))
			x++;
	}
	return NULL;
}

static void preempted_step(void *arg)
{
	struct ajob *j = arg;
	struct lin_sim_launch l = { 0 };
	adopt(j);
	cpu_set_t old;
	/* Moved to the core first, while it is free: a thread moved off its core waits for
	 * the move asleep, and that wait would be a blocked interval (docs/attribution.md,
	 * "Limits"). Then the hogs wake there and preempt it. */
	pin_self(hogs.cpu, &old);
	uint64_t s = now(j->sx), e = s + j->sx->o.delay_ns;
	atomic_store(&hogs.active, 1);
	while (now(j->sx) < e)
		; /* runnable all along: off-CPU only when preempted */
	atomic_store(&hogs.active, 0);
	e = now(j->sx);
	pthread_setaffinity_np(pthread_self(), sizeof(old), &old);
	target(j, &l);
	label(j, &l, LIN_TC_DESCHEDULED, 0, s, e);
}

static void api_call_step(void *arg)
{
	struct ajob *j = arg;
	struct lin_sim_launch l = { .api_work_ns = j->sx->o.delay_ns };
	adopt(j);
	target(j, &l);
	label(j, &l, LIN_TC_API_CALL, 0, l.api_start, l.api_end);
}

static void submit_delay_step(void *arg)
{
	struct ajob *j = arg;
	struct lin_sim_launch l = { .submit_delay_ns = j->sx->o.delay_ns };
	adopt(j);
	target(j, &l);
	label(j, &l, LIN_TC_SUBMIT_DELAY, 0, l.submitted - j->sx->o.delay_ns, l.submitted);
}

/* The target's stream is held by another request's long kernel, launched just before. */
static void stream_dep_bg(void *arg)
{
	struct ajob *j = arg;
	background(j, S_TARGET, 2 * j->sx->o.delay_ns, 0, false);
}

/* The worker's plain target, held by the background work until it ended. */
static void held_step(struct ajob *j, uint32_t cause)
{
	struct lin_sim_launch l = { 0 };
	adopt(j);
	target(j, &l);
	label(j, &l, cause, 0, front(&l), j->bg.end);
}

static void stream_dep_step(void *arg) { held_step(arg, LIN_TC_STREAM_DEPENDENCY); }

/* Another stream's long kernel, an event recorded after it, the target's stream waits. */
static void event_dep_bg(void *arg)
{
	struct ajob *j = arg;
	background(j, S_BG, 2 * j->sx->o.delay_ns, 0, true);
}

/* The target's stream waits for the event the background recorded. */
static void wait_event(struct ajob *j)
{
	if (lin_sim_stream_wait_event(j->sx->sim, j->t.stream, j->event) != 0) {
		fprintf(stderr, "lineage-synth: stream wait event failed\n");
		exit(1);
	}
}

static void event_dep_step(void *arg)
{
	struct ajob *j = arg;
	struct lin_sim_launch l = { 0 };
	adopt(j);
	wait_event(j);
	target(j, &l);
	label(j, &l, LIN_TC_EVENT_DEPENDENCY, 0, front(&l), j->bg.end);
}

/* A graph [long node, target node], captured once, replayed for each request. */
static void graph_capture_step(void *arg)
{
	struct ajob *j = arg;
	static const char *const names[] = { "attr_graph_long", "attr_target" };
	uint64_t durs[] = { 2 * j->sx->o.delay_ns, 0 };
	begin(j->sx, &j->t, S_TARGET);
	synth_op_begin(j->sx, &j->t);
	j->exec = synth_graph_build_ex(j->sx, &j->t, names, durs, 2);
	synth_op_end(j->sx, &j->t);
	end(j->sx, &j->t);
}

static void graph_dep_step(void *arg)
{
	struct ajob *j = arg;
	struct lin_sim_launch n[2] = { 0 };
	adopt(j);
	synth_graph_launch_ex(j->sx, &j->t, j->exec, n, 2);
	(void)lin_sim_event_record(j->sx->sim, j->t.stream);
	synth_release(j->sx, &j->t);
	end(j->sx, &j->t);
	label(j, &n[1], LIN_TC_GRAPH_DEPENDENCY, 0, front(&n[1]), n[0].end);
}

/* One device slot; another stream's long kernel fills it. */
static void device_bg(void *arg)
{
	struct ajob *j = arg;
	background(j, S_BG, 2 * j->sx->o.delay_ns, 0, true);
}

static void device_busy_step(void *arg) { held_step(arg, LIN_TC_DEVICE_BUSY); }

/* Throughput: 8 kernels of D back to back; each after the first waits for the one before
 * it, as intended (long enough that the wait, not the pool's own latency, dominates). */
#define QUEUE_DEPTH 8
static void queueing_step(void *arg)
{
	struct ajob *j = arg;
	struct lin_sim_launch l[QUEUE_DEPTH];
	adopt(j);
	for (int i = 0; i < QUEUE_DEPTH; i++) {
		l[i] = (struct lin_sim_launch){ .dur_ns = j->sx->o.delay_ns };
		synth_kernel_ex(j->sx, &j->t, "attr_throughput", &l[i]);
	}
	(void)lin_sim_event_record(j->sx->sim, j->t.stream);
	synth_release(j->sx, &j->t);
	end(j->sx, &j->t);
	for (int i = 1; i < QUEUE_DEPTH; i++)
		label(j, &l[i], LIN_TC_QUEUEING, 0, front(&l[i]), l[i - 1].end);
}

/* Ambiguous: submitted exactly when the device (full with another stream's kernel) frees. */
static void amb_submit_step(void *arg)
{
	struct ajob *j = arg;
	struct lin_sim_launch l = { .submit_at_free = true };
	adopt(j);
	target(j, &l);
	label(j, &l, LIN_TC_AMBIGUOUS, 1u << LIN_TC_SUBMIT_DELAY | 1u << LIN_TC_DEVICE_BUSY,
	      l.api_end, j->bg.end);
}

/* Ambiguous: the target's stream predecessor and the event it waits for end together. */
static void amb_deps_bg(void *arg)
{
	struct ajob *j = arg;
	background(j, S_BG, 2 * j->sx->o.delay_ns, 0, true);
	struct lin_sim_launch first = j->bg;
	background(j, S_TARGET, 0, first.end, false); /* ends when the first does */
	j->bg = first;
}

static void amb_deps_step(void *arg)
{
	struct ajob *j = arg;
	struct lin_sim_launch l = { 0 };
	adopt(j);
	wait_event(j);
	target(j, &l);
	label(j, &l, LIN_TC_AMBIGUOUS,
	      1u << LIN_TC_STREAM_DEPENDENCY | 1u << LIN_TC_EVENT_DEPENDENCY, front(&l), j->bg.end);
}

/* ------------------------------------------------------------- scenarios */

/* Requests run one at a time: the host waits until the device has finished everything
 * issued before (as after a cudaDeviceSynchronize), so no request's work queues behind an
 * earlier request's and each target is held by its own injection only. */
static void idle(struct synth *sx)
{
	uint64_t t = lin_sim_device_idle(sx->sim), n = now(sx);
	if (t + 1000 > n)
		sleep_ns(t + 1000 - n);
}

/* @n requests: the request's handoff, the worker's step ([background,] target); @early:
 * the background is launched by the submitter before the handoff instead, so the device is
 * busy from well before the target's call. */
static void run_bg(struct synth *sx, synth_step_fn bg, bool early, synth_step_fn step, uint32_t slots)
{
	lin_sim_set_device_slots(sx->sim, slots);
	for (uint32_t i = 0; i < sx->o.requests; i++) {
		struct ajob j = { .sx = sx, .bgfn = early ? NULL : bg };
		idle(sx);
		uint32_t s = synth_submitter(sx);
		if (early)
			synth_pool_exec(sx->pool, s, bg, &j);
		synth_pool_exec(sx->pool, s, submit_step, &j);
		synth_pool_exec(sx->pool, synth_worker(sx, s), step, &j);
	}
}

static void run(struct synth *sx, synth_step_fn bg, synth_step_fn step, uint32_t slots)
{
	run_bg(sx, bg, false, step, slots);
}

void synth_run_attr_handoff(struct synth *sx) { run(sx, NULL, handoff_wait_step, 0); }
void synth_run_attr_blocked(struct synth *sx) { run(sx, NULL, blocked_step, 0); }
void synth_run_attr_preempted(struct synth *sx)
{
	cpu_set_t mine;
	pthread_getaffinity_np(pthread_self(), sizeof(mine), &mine);
	hogs.cpu = 0;
	for (int c = CPU_SETSIZE - 1; c >= 0; c--)
		if (CPU_ISSET(c, &mine)) {
			hogs.cpu = c; /* the last core this process may use */
			break;
		}
	atomic_store(&hogs.stop, 0);
	atomic_store(&hogs.active, 0);
	int n = 0;
	for (; n < HOGS; n++)
		if (pthread_create(&hogs.t[n], NULL, hog_main, NULL))
			break;
	run(sx, NULL, preempted_step, 0);
	atomic_store(&hogs.stop, 1);
	for (int i = 0; i < n; i++)
		pthread_join(hogs.t[i], NULL);
}
void synth_run_attr_api(struct synth *sx) { run(sx, NULL, api_call_step, 0); }
void synth_run_attr_submit(struct synth *sx) { run(sx, NULL, submit_delay_step, 0); }
void synth_run_attr_stream(struct synth *sx) { run(sx, stream_dep_bg, stream_dep_step, 0); }
void synth_run_attr_event(struct synth *sx) { run(sx, event_dep_bg, event_dep_step, 0); }
void synth_run_attr_device(struct synth *sx) { run(sx, device_bg, device_busy_step, 1); }
void synth_run_attr_queueing(struct synth *sx) { run(sx, NULL, queueing_step, 0); }
void synth_run_attr_amb_submit(struct synth *sx)
{
	/* The device full from before the call: over the whole submission delay. */
	run_bg(sx, device_bg, true, amb_submit_step, 1);
}
void synth_run_attr_amb_deps(struct synth *sx) { run(sx, amb_deps_bg, amb_deps_step, 0); }

void synth_run_attr_graph(struct synth *sx)
{
	struct ajob cap = { .sx = sx };
	synth_pool_exec(sx->pool, synth_submitter(sx), graph_capture_step, &cap);
	for (uint32_t i = 0; i < sx->o.requests; i++) {
		struct ajob j = { .sx = sx, .exec = cap.exec };
		idle(sx);
		uint32_t s = synth_submitter(sx);
		synth_pool_exec(sx->pool, s, submit_step, &j);
		synth_pool_exec(sx->pool, synth_worker(sx, s), graph_dep_step, &j);
	}
}
