/* SPDX-License-Identifier: MIT */
/*
 * hostsched.h - the host scheduling collector (hostsched.c; docs/ledger.md, "Host scheduling
 * evidence"): per registered thread a perf software event with context_switch = 1 on
 * CLOCK_MONOTONIC and its mmap'ed ring, read by the writer into host_sched records (one per
 * off-CPU interval: switch-out to the next switch-in) and dropped records (ring overruns,
 * refusals). Off unless LIN_RT_SCHED_EVENTS or LINEAGE_SCHED_EVENTS asks. Internal.
 * Context: open on the registering thread (lin_tstate_slow); detach on it at its exit
 * (lin_tstate_key_dtor); drain and close on the writer's side (the output lock held; a
 * ring's own lock orders the drain against the detach); forget in a fork child's handler.
 */
#ifndef LIN_SCHED_H
#define LIN_SCHED_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

struct lin_sched;

/* What the runtime keeps of the collector's configuration (struct lin_runtime.sched). */
struct lin_sched_cfg {
	bool on;             /* asked for, and the probe at create succeeded */
	bool asked;          /* asked for (option or environment) */
	uint32_t pages;      /* data pages of each ring, a power of two */
	int fault_err;       /* test hook (LINEAGE_TEST_SCHED_FAULT): errno to fail opens with */
	uint32_t fault_from; /* ... from this open on (0: the probe) */
	_Atomic uint32_t opens;
	int seccomp_mode;      /* the probe's thread's (/proc/thread-self/status), -1: unknown */
	long seccomp_filters;  /* ... and its filter count, -1: unknown */
	size_t locked_cap;     /* bytes of rings allowed (0: no cap, root) */
	_Atomic size_t locked; /* bytes of rings mapped */
	char status[160];      /* the header's host_sched value */
};

/* The name host_sched records carry as source_sid. */
#define LIN_SCHED_SOURCE "lineage.perf_context_switch"

/*
 * lin_sched_cfg_init - read the option and the environment (LINEAGE_SCHED_EVENTS: set to
 * anything but "" or "0" turns the collector on; LINEAGE_TEST_SCHED_FAULT and
 * LINEAGE_TEST_SCHED_PAGES: test hooks, docs/ledger.md) and, when asked, probe the kernel
 * on the calling thread: cfg->status says "off", "on: ..." or "refused: ...". Returns
 * true when the collector was asked for and refused (the caller logs cfg->status).
 */
bool lin_sched_cfg_init(struct lin_sched_cfg *cfg, bool asked);

/*
 * lin_sched_open - the calling thread's event and ring. NULL with *@err (a negative errno)
 * and *@what (a static string: the call that failed) when the kernel refuses.
 */
struct lin_sched *lin_sched_open(struct lin_sched_cfg *cfg, int *err, const char **what);

/* Unmap and close. NULL is accepted. */
void lin_sched_close(struct lin_sched *s);
/* A fork child's handler: close the fd and free, never unmap (the child has no copy of the
 * ring; its address may hold the child's own mapping now). */
void lin_sched_forget(struct lin_sched *s);
/* The thread is exiting: read its ring now into memory kept for the next drain, then
 * unmap and close it, so an exited thread holds no fd and no locked memory. */
void lin_sched_detach(struct lin_sched *s);

/*
 * lin_sched_drain - read what the ring holds: @emit gets each complete off-CPU interval
 * [start_ns, end_ns] (CLOCK_MONOTONIC) with its LIN_SCHED_* state; *@lost grows by the
 * switch records the kernel lost (PERF_RECORD_LOST). A switch-out whose switch-in is not
 * yet in the ring is kept for the next drain; one followed by a loss is forgotten (the
 * interval is not known). @emit NULL: discard.
 */
void lin_sched_drain(struct lin_sched *s, void (*emit)(void *u, uint64_t s, uint64_t e, uint32_t state),
		     void *u, uint64_t *lost);

#endif
