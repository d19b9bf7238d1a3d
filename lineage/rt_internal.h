/* SPDX-License-Identifier: MIT */
/*
 * rt_internal.h - what the runtime offers the library's other modules (graph/,
 * cupti_bind/). Never installed.
 */
#ifndef LINEAGE_RT_INTERNAL_H
#define LINEAGE_RT_INTERNAL_H

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <unistd.h>
#include <msgpack.h>

#include "lineage/runtime.h"
#include "sys.h"
#include "tracefmt.h"

/*
 * lin_rt_out_lock - take the trace output lock and return the packer that writes into the
 * trace. Records packed between lock and unlock are written out as they are (one record per
 * lin_tf_* call). Returns NULL when the runtime writes no trace (then do not unlock).
 * Context: any thread except inside a launch observer; must not be held across calls into
 * the runtime's public API (it would deadlock on flush). Not on the launch path.
 */
msgpack_packer *lin_rt_out_lock(lin_runtime *rt);
void lin_rt_out_unlock(lin_runtime *rt);

/*
 * lin_rt_intern_locked - id of a string in the trace's string table; packs a string record
 * the first time a string is seen. Call with the output lock held. Returns 0 for NULL.
 */
uint64_t lin_rt_intern_locked(lin_runtime *rt, const char *s);

/* Host time on the trace's host clock (CLOCK_MONOTONIC ns through the calibrated TSC, as
 * events are converted). Any thread. */
uint64_t lin_rt_now_ns(const lin_runtime *rt);

/*
 * Keep a clock read where the program put it: no later instruction starts before the reads
 * above it have completed (rdtsc is not ordered: it may run after instructions that follow
 * it, or before ones that precede it). Used around a reading that a host read must bracket
 * (a clock pair, cupti_bind/live.c), not on the launch path.
 */
static inline void lin_clock_order(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_lfence();
#else
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
#endif
}

/*
 * A copy of the runtime's host clock that outlives it (for a process-wide callback such as
 * CUPTI's timestamp callback, which has no user pointer and no unregistration).
 */
struct lin_rt_clock {
	double ns_per_tick;
	uint64_t tsc0, ns0;
	bool use_tsc;
};
void lin_rt_clock_get(const lin_runtime *rt, struct lin_rt_clock *c);
uint64_t lin_rt_clock_ns(const struct lin_rt_clock *c);
/* The backend made the device timestamps this runtime's host clock (header device_clock
 * "host"). Before the trace is opened. */
void lin_rt_set_device_clock_host(lin_runtime *rt);

/* enum lin_late of the calling thread's current scope: its version ended since it was
 * adopted or entered (docs/trace-format.md, "Late work"); LIN_LATE_NONE with no scope. One
 * registry cache line. */
uint8_t lin_rt_scope_late(lin_runtime *rt);

/* lin_token_adopt for a token parsed from text that is proven to come from this process
 * (lin_w3c_adopt's span id): adopted late when its version ended, as a binary token is. */
int lin_rt_token_adopt_local(lin_runtime *rt, const lin_token *tok, lin_scope *scope);

/* gettid() of the calling thread, cached. */
uint32_t lin_rt_gettid(void);
/* Forget the cached id (the forked child's thread has its own). */
void lin_rt_tid_forget(void);

/* Log through the user's callback (or LINEAGE_LOG). printf-style. */
void lin_rt_log(const lin_runtime *rt, enum lin_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* A status line the user sees once without asking: the callback (at LIN_LOG_WARN), else
 * stderr unless LINEAGE_LOG=off|error (log.h). Never on the launch path. */
void lin_rt_status(const lin_runtime *rt, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The CUPTI external-correlation kind this runtime pushes. */
uint32_t lin_rt_ext_kind(const lin_runtime *rt);

/* Count @n records lost from @source; a dropped record is written at the next drain. */
void lin_rt_count_dropped(lin_runtime *rt, uint32_t source, uint64_t n);

/*
 * struct lin_cupti_backend - the CUPTI backend as the runtime receives it: a const table of
 * operations, handed in from above (as a caller hands liburcu's hash table its
 * cds_lfht_mm_type), so nothing in lineage/ names an implementation. The library's own
 * table is lin_rt_cupti_builtin; cupti_bind/ defines the live one, lineage/ lin_cupti_none.
 * @name: for diagnostics.
 * @open: probe CUPTI once; on success fill *ops, set *status to a static string for the
 * trace header ("ok", "ok, ..." or "attach: ...") and return 0; on failure return a
 * negative error and set *status to a static string saying why (the runtime then records
 * host-side lineage only: a failed open never fails lin_runtime_create). @o: the runtime's
 * options (the cupti_* fields).
 * @started: the trace is open (after a successful open): a clock pair opens it, so device
 * times from the start of the run lie between pairs.
 * @close: flush and release what open set up. Called once at runtime free, before the
 * trace is closed.
 * Context: open and close on the thread creating or freeing the runtime.
 */
struct lin_cupti_backend {
	const char *name;
	int (*open)(lin_runtime *rt, const struct lin_runtime_opts *o, struct lin_backend_ops *ops,
		    const char **status);
	void (*started)(lin_runtime *rt);
	void (*close)(lin_runtime *rt);
};

/* The backend of a build without CUPTI: every open fails with "unavailable: liblineage was
 * built without CUPTI" (lineage/cupti_none.c). */
extern const struct lin_cupti_backend lin_cupti_none;

/*
 * lin_rt_cupti_builtin - the CUPTI backend this build of the library gives its runtimes.
 * Defined by the library's assembly (lin_backends.c, which CMake generates from
 * cmake/lin_backends.c.in into the build directory), the one place that knows both
 * lineage/ and the binding it was built with; never NULL.
 */
extern const struct lin_cupti_backend *const lin_rt_cupti_builtin;

#endif
