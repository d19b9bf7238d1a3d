/* SPDX-License-Identifier: MIT */
/*
 * lineage/runtime.h - the lineage runtime: requests, launch epochs, context tokens,
 * scopes and launch binding.
 *
 * Thread model. A runtime is created once and shared by every thread of the process. All
 * calls below may run concurrently on any threads unless a comment says otherwise. The
 * launch path (lin_token_capture, lin_token_adopt, lin_scope_exit, lin_launch_begin,
 * lin_launch_end) allocates nothing in steady state, takes no global lock, never blocks on
 * I/O and never calls into the GPU API except through the binding backend's push/pop.
 * A thread's first call costs about a microsecond more (per-thread buffer set-up).
 */
#ifndef LINEAGE_RUNTIME_H
#define LINEAGE_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#include "lineage/common.h"
#include "lineage/trace_format.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct lin_runtime lin_runtime;
struct lin_tap_spec; /* lineage/tap.h */

/* Severity of a log message passed to lin_log_fn. */
enum lin_log_level { LIN_LOG_ERROR = 0, LIN_LOG_WARN = 1, LIN_LOG_INFO = 2, LIN_LOG_DEBUG = 3 };

/*
 * lin_log_fn - where the library's diagnostics go. The library prints only through this:
 * with no callback, messages at the level LINEAGE_LOG names (error|warn|info|debug) or more
 * severe go to stderr; with LINEAGE_LOG unset, only one status line per runtime open does
 * (the CUPTI backend recording host-side lineage only, at LIN_LOG_WARN), and
 * LINEAGE_LOG=off (or error) silences that too. A callback gets every message, that line
 * included, and nothing goes to stderr.
 * Context: called on the thread that hit the condition, never with a lock held that
 * another lineage call could need; must not call back into the runtime.
 */
typedef void (*lin_log_fn)(enum lin_log_level level, const char *msg, void *user);

/*
 * lin_trace_write_fn - trace output callback (instead of a file path). Receives encoded
 * msgpack bytes in order. Return 0, or a negative errno to report failure (the bytes are
 * then counted as lost and the error is logged once).
 * Context: the runtime's writer thread, or the thread calling lin_runtime_flush/free.
 */
typedef int (*lin_trace_write_fn)(const void *buf, size_t len, void *user);

/*
 * struct lin_backend_ops - a binding backend: where the current epoch is pushed as an
 * external correlation id around each launch. LIN_BACKEND_CUPTI uses CUPTI's
 * cuptiActivityPush/PopExternalCorrelationId; tests and the simulator inject their own.
 * @push: push @id for @ext_kind on the calling thread; 0 or a negative error.
 * @pop: pop the calling thread's top id for @ext_kind into *@id (may be NULL).
 * Context: called on the launching thread, inside lin_launch_begin/end, no lock held.
 */
struct lin_backend_ops {
	size_t sz;
	const char *name;
	int (*push)(void *ctx, uint32_t ext_kind, uint64_t id);
	int (*pop)(void *ctx, uint32_t ext_kind, uint64_t *id);
	void *ctx;
	uint32_t flags; /* LIN_BACKEND_F_* (since 0.3; an older, smaller sz: 0) */
};

/*
 * The device timestamps of the activity records this backend's runtime receives are the
 * runtime's own host clock (lin_runtime_now_ns), as when CUPTI's timestamps come from a
 * callback (cuptiActivityRegisterTimestampCallback). The trace header then says
 * device_clock "host", and lineage-validate compares device and host times exactly.
 */
#define LIN_BACKEND_F_HOST_CLOCK 1u

enum lin_backend_kind {
	LIN_BACKEND_NONE = 0,   /* host-side lineage only; nothing is pushed */
	LIN_BACKEND_CUPTI = 1,  /* CUPTI external correlation, probed once at create */
	LIN_BACKEND_CUSTOM = 2, /* opts->backend_ops */
};

/* What a launch observer is told. Pointers are valid only during the callback. */
struct lin_launch_info {
	uint64_t epoch; /* 0 when the launch had no current epoch */
	uint32_t version;
	uint32_t tid;     /* gettid() of the launching thread */
	const char *name; /* as passed to lin_launch_begin; may be NULL */
	uint64_t host_ns; /* CLOCK_MONOTONIC */
};

/*
 * lin_launch_observer_fn - told of every launch, on the launching thread, after the push
 * and before lin_launch_begin returns. Must be cheap, must not launch GPU work and must not
 * call lin_launch_begin/end. Never called with a lineage lock held.
 */
typedef void (*lin_launch_observer_fn)(const struct lin_launch_info *info, void *user);

/* Flags for lin_runtime_opts.flags. */
#define LIN_RT_NO_WRITER_THREAD (1u << 0)  /* events are encoded only by lin_runtime_flush */
#define LIN_RT_NO_CAPTURE_EVENTS (1u << 1) /* lin_token_capture writes no token_capture record */
/* token_capture, scope_close and launch_end records carry no host time (nil): one TSC
 * read less on each (~10 ns on a VM); adopts and launch begins keep theirs. The validator
 * then cannot check that an adopt came after its capture, nor place an API call inside a
 * launch bracket by time (time containment and the bracket check are not made). */
#define LIN_RT_LEAN_TIMESTAMPS (1u << 2)
/*
 * LIN_RT_SCHED_EVENTS: collect each registered thread's context switches from the kernel
 * (a perf software event with context_switch = 1, opened by the thread at its first call
 * into the runtime, and an 8 KiB ring the writer drains): the trace gains a host_sched
 * record per off-CPU interval, preempted or blocked, which lineage-explain splits a
 * launching thread's delay with. Costs one fd and 12 KiB of locked memory per live
 * thread (given back at its exit; at most half of perf_event_mlock_kb, never the last
 * quarter of the fds), and kernel time per context switch (docs/bench.md). The
 * environment can turn it on too (LINEAGE_SCHED_EVENTS=1). A kernel that refuses it
 * (perf_event_paranoid 3, no perf events, a seccomp filter, out of fds) never fails
 * anything, nor does a seccomp filter installed later (not tried then): the header's
 * host_sched says why,
 * the log says it once, a thread refused later gets a dropped record (docs/ledger.md,
 * "Host scheduling evidence"). Since: 0.5
 */
#define LIN_RT_SCHED_EVENTS (1u << 3)
#define LIN_RT_FLAGS_ALL \
	(LIN_RT_NO_WRITER_THREAD | LIN_RT_NO_CAPTURE_EVENTS | LIN_RT_LEAN_TIMESTAMPS | LIN_RT_SCHED_EVENTS)

/*
 * Flags for lin_runtime_opts.cupti_flags.
 * LIN_CUPTI_LATENCY_TIMESTAMPS: call cuptiActivityEnableLatencyTimestamps(1) when the
 * binding takes CUPTI, so kernel records carry queued and submitted (observed device
 * times; unknown without it). CUPTI needs it before CUDA is initialised: create the
 * runtime first. Costs CUPTI time per launch (measured in docs/cupti.md where known).
 */
#define LIN_CUPTI_LATENCY_TIMESTAMPS (1u << 0)
/*
 * LIN_CUPTI_OWN_CLOCK: leave CUPTI's timestamps on CUPTI's own clock (CLOCK_REALTIME on
 * Linux). By default, when the binding takes CUPTI, it registers a timestamp callback
 * (cuptiActivityRegisterTimestampCallback) that returns this runtime's host clock, so
 * device and host times compare exactly (header device_clock "host") and lineage-validate
 * can place every API call inside its launch bracket. The callback is process-wide and
 * stays after the runtime is freed: a CUPTI client that starts later gets lineage's clock.
 * Since: 0.3
 */
#define LIN_CUPTI_OWN_CLOCK (1u << 1)
/*
 * LIN_CUPTI_NO_SYNC_RECORDS: do not enable CUPTI_ACTIVITY_KIND_CUDA_EVENT and
 * CUPTI_ACTIVITY_KIND_SYNCHRONIZATION. By default the binding enables both (a refusal is
 * logged and collection goes on), so the trace has a cuda_event record per cudaEventRecord
 * and a sync record per stream wait event and synchronize call: one record per such call,
 * not per launch (cost: docs/cupti.md, "Live mode" step 6). Set it where a program makes
 * so many such calls that their records matter. Added after 0.4.0.
 */
#define LIN_CUPTI_NO_SYNC_RECORDS (1u << 2)
#define LIN_CUPTI_FLAGS_ALL \
	(LIN_CUPTI_LATENCY_TIMESTAMPS | LIN_CUPTI_OWN_CLOCK | LIN_CUPTI_NO_SYNC_RECORDS)
/*
 * Environment, read when the live binding takes CUPTI: LINEAGE_CUPTI_GRAPH_TRACE set to
 * anything but "" or "0" also enables CUPTI's graph-level tracing (one record per graph
 * launch instead of one per node: node-level lineage is lost). Off by default; no effect
 * in attach mode. docs/cupti.md, "Environment".
 */

/*
 * struct lin_runtime_opts - creation options; pass NULL for all defaults. Set sz to
 * sizeof(struct lin_runtime_opts); a larger struct whose unknown trailing bytes are not all
 * zero is rejected with -EINVAL, so old libraries refuse options they do not know.
 */
struct lin_runtime_opts {
	size_t sz;
	const char *trace_path;         /* file to write (created or truncated); or NULL */
	lin_trace_write_fn trace_write; /* or a callback; neither: no trace is written */
	void *trace_user;
	enum lin_backend_kind backend;             /* default LIN_BACKEND_NONE */
	const struct lin_backend_ops *backend_ops; /* LIN_BACKEND_CUSTOM: copied at create */
	uint32_t ext_kind; /* CUPTI external-correlation kind; 0 = CUSTOM2 (5) */
	uint32_t flags;    /* LIN_RT_* */
	lin_log_fn log;
	void *log_user;
	uint32_t thread_buffer_events; /* per-thread event buffer, events of 32 bytes, pow2 >= 64;
					  * 0 = 16384 (512 KiB per thread that calls in) */
	uint32_t flush_interval_ms;    /* writer wake-up period; 0 = 50 ms */
	lin_launch_observer_fn observer;
	void *observer_user;
	/* 0.2 to 0.4: an exporter's options, now its own library's (attached through taps,
	 * below). Reserved: must be zero (-EINVAL), so a program built against 0.4 that set
	 * them is refused, never silently left without its stream. */
	const void *reserved_0_2[3];
	/* Since 0.3: the live CUPTI binding (backend = LIN_BACKEND_CUPTI; docs/cupti.md). */
	uint32_t cupti_flags;       /* LIN_CUPTI_* */
	uint32_t cupti_buffer_kib;  /* activity buffer size, 4 KiB..1 GiB; 0 = 1024 (1 MiB) */
	uint32_t cupti_buffers_max; /* activity buffers lent at once (CUPTI asks one per
					  * thread that makes CUDA calls); 0 = 512 */
	const void *reserved_0_4;   /* 0.4: an exporter's option, as reserved_0_2 */
	/* Since 0.5: taps attached to the trace writer (lineage/tap.h), opened in order at
	 * create: @ntaps specs of lin_tap_spec (at most LIN_TAPS_MAX), each with the opener
	 * and configuration its library hands out (e.g. lin_otlp_tap, lineage/otlp.h). The
	 * array and what it points to are borrowed until lin_runtime_create returns. A tap
	 * works with or without a msgpack trace. */
	const struct lin_tap_spec *taps;
	size_t ntaps;
};

/*
 * lin_runtime_create - create a runtime and open its trace.
 * @opts: options or NULL. @out: receives the runtime.
 * Return: 0; -EINVAL (bad opts, unknown flags or cupti_flags, non-pow2 buffer size, a
 * cupti_buffer_kib out of range, non-zero unknown trailing bytes or reserved fields, a
 * tap spec with no opener, an sz too small or unlike the first's, ntaps over
 * LIN_TAPS_MAX or taps NULL; a tap whose operations are incomplete); -ENOMEM; -errno from
 * opening trace_path; a tap opener's error: like a trace file that cannot be opened, a
 * tap that cannot open fails the create (logged; the taps opened before it are closed),
 * before any work was handed to the runtime, so no work is refused: create it without
 * the tap to run untapped. -LIN_ENOCUPTI is never returned: an unusable CUPTI is logged
 * once, recorded in the trace header, and the runtime falls back to host-side lineage.
 * Ownership: the caller frees the runtime with lin_runtime_free. @opts is copied (the tap
 * specs are read during the call only).
 * Context: any thread; blocks (file open, thread start, a short TSC calibration).
 * Since: 0.1
 */
LIN_API int lin_runtime_create(const struct lin_runtime_opts *opts, lin_runtime **out);

/*
 * lin_runtime_flush - encode every buffered event and write it out (write(2); no fsync).
 * Return: 0; -LIN_ETRACE if output failed (the error was logged).
 * Context: any thread that is not inside a launch observer or log callback; blocks.
 * Since: 0.1
 */
LIN_API int lin_runtime_flush(lin_runtime *rt);

/*
 * lin_runtime_free - flush, stop the writer, close the trace and free everything.
 * Ownership: @rt and every per-thread state it made. NULL is accepted.
 * Context: no other thread may use @rt during or after this call. Scopes still open on
 * other threads are written as thread_exit_open_scope misuse records. Blocks.
 * Since: 0.1
 */
LIN_API void lin_runtime_free(lin_runtime *rt);

/* Counters (since create). */
struct lin_runtime_stats {
	size_t sz;
	uint64_t live_requests;
	uint64_t live_epochs;
	uint64_t events;         /* events recorded by all threads */
	uint64_t events_dropped; /* events lost because a thread buffer was full */
	uint64_t misuse;         /* misuse records (stale tokens, scope errors, ...) */
	uint64_t threads;        /* threads that have used the runtime */
	uint64_t bytes_written;  /* trace bytes handed to the file or callback */
	/* Since 0.4: work that ran after the version it was captured under had ended (its
	 * epoch retired or re-issued, its request ended): adopts of such tokens, and launch
	 * brackets opened under such a version (docs/trace-format.md, "Late work"). */
	uint64_t late_adopts;
	uint64_t late_launches;
	/* Since 0.4: lin_token_capture calls with no current context (-LIN_ENOCONTEXT): work
	 * handed on from code that is not traced (the adapters run it with no context). */
	uint64_t captures_without_context;
};

/*
 * lin_runtime_now_ns - the runtime's host clock now: the clock of every host_ns field it
 * writes (CLOCK_MONOTONIC nanoseconds, read through the calibrated TSC where available;
 * the trace header's host_clock_source says which). Lets a caller time its own events on
 * the trace's clock. Every runtime of a process shares one calibration, so this is also
 * the process's trace clock: @rt NULL reads it without a runtime (since 0.4).
 * Return: nanoseconds.
 * Context: any thread; no lock, no allocation; may run inside a CUPTI callback. Since: 0.3
 */
LIN_API uint64_t lin_runtime_now_ns(const lin_runtime *rt);

/*
 * lin_runtime_get_stats - read the counters. @st->sz must be set by the caller: only the
 * fields it covers are written (a caller built against an older, shorter struct gets the
 * fields it knows), and bytes past what this library knows are zeroed (a newer caller's
 * fields read 0: unknown). @st->sz itself is not changed.
 * Return: 0; -EINVAL on NULL, an sz shorter than the sz field or over 4096 (not set).
 * Context: any thread; counters are read without stopping writers (approximate).
 * Since: 0.1
 */
LIN_API int lin_runtime_get_stats(lin_runtime *rt, struct lin_runtime_stats *st);

/* ------------------------------------------------------------------ requests */

struct lin_w3c_context;

struct lin_request_opts {
	size_t sz;
	const char *name; /* copied; may be NULL */
	uint64_t user_id; /* the application's own id for the request */
	int has_user_id;  /* user_id is valid */
	uint64_t parent;  /* a parent request id, or 0 */
	/* Since 0.2: the context the work arrived with from another process (lineage/w3c.h,
	 * lin_w3c_extract), or NULL. Copied; written as a request_link record so that
	 * lineage-validate joins this request to the sender's span. */
	const struct lin_w3c_context *remote;
};

/*
 * lin_request_begin - declare a unit of logical work (a serving request, an op, a step).
 * The request does not become current on the thread: enter it with lin_scope_enter, or
 * name it when declaring epochs.
 * Return: 0 with *@id set (never 0, never reused); -EINVAL (also: @opts->remote with an
 * all-zero trace id or parent id); -ENOMEM.
 * Context: any thread; may allocate; takes the registry's writer lock briefly.
 * Since: 0.1
 */
LIN_API int lin_request_begin(lin_runtime *rt, const struct lin_request_opts *opts, uint64_t *id);

/*
 * lin_request_end - end a request. Tokens for it become stale; epochs that name it are not
 * affected.
 * Return: 0; -LIN_ENOTFOUND if @id is not a live request.
 * Context: any thread. Since: 0.1
 */
LIN_API int lin_request_end(lin_runtime *rt, uint64_t id);

/* ------------------------------------------------------------------ epochs */

/* lin_epoch_opts.flags (since 0.3) */
#define LIN_EPOCH_NO_REQUESTS (1u << 0) /* serves no request: see lin_epoch_declare */
#define LIN_EPOCH_FLAGS_ALL LIN_EPOCH_NO_REQUESTS

struct lin_epoch_opts {
	size_t sz;
	const uint64_t *requests; /* requests this launch serves: 1, or several (fan-in) */
	size_t n_requests;        /* 0: take them from the current context */
	uint64_t parent;          /* parent epoch, or 0 (with n_requests 0: the current epoch) */
	const char *name;         /* copied; may be NULL */
	uint32_t flags;           /* LIN_EPOCH_*; since 0.3 */
	/* Since 0.5: what each request contributes to this launch, parallel to @requests (so
	 * @n_requests of them, which must be given), or NULL. Written as an epoch_share
	 * record; lineage-explain --per-request splits the launch's GPU time by the tokens. */
	const struct lin_epoch_share *shares;
};

/* One request's part in an epoch (lin_epoch_opts.shares; since 0.5). */
struct lin_epoch_share {
	uint32_t tokens; /* tokens it contributes to the launch (prefill chunk, decode tokens) */
	uint32_t flags;  /* LIN_SHARE_PREFILL or LIN_SHARE_DECODE (not both), and
			  * LIN_SHARE_FIRST_TOKEN with prefill (or alone); lineage/trace_format.h */
};

/*
 * lin_epoch_declare - mint the identity of one logical GPU launch before any thread
 * launches it. With no requests given, the epoch serves the current context's requests: the
 * current request, or the current epoch's requests (that epoch becoming the parent).
 * With LIN_EPOCH_NO_REQUESTS the epoch serves no request and the current context is not
 * consulted: an op whose request is not known where it is declared. Its kernels join the
 * epoch and no request (lineage-validate counts them at the level "epoch").
 * With @opts->shares each request's tokens and phase are recorded with the epoch; its
 * child epochs (a graph replay's epoch, an epoch declared under it) carry none of their
 * own and take them from it in lineage-explain (docs/serving.md).
 * Return: 0 with *@id set (version 1); -LIN_ENOCONTEXT (no requests given and none current);
 * -LIN_ENOTFOUND (a named request or parent is not live); -EINVAL (also: an unknown flag,
 * or LIN_EPOCH_NO_REQUESTS with requests; shares without requests given, or a share with
 * a flag outside LIN_SHARE_FLAGS_ALL, with both LIN_SHARE_PREFILL and _DECODE, or with
 * LIN_SHARE_DECODE and _FIRST_TOKEN: a first token comes from the step that completes a
 * prefill); -ENOMEM.
 * Context: any thread; may allocate. Since: 0.1 (flags: 0.3, shares: 0.5)
 */
LIN_API int lin_epoch_declare(lin_runtime *rt, const struct lin_epoch_opts *opts, uint64_t *id);

/*
 * lin_epoch_reissue - the same logical launch is issued again (retry, replay): its version
 * increases and tokens captured before become stale.
 * @reason: LIN_REISSUE_* from lineage/trace_format.h. @version: new version (may be NULL).
 * Return: 0; -LIN_ENOTFOUND. Context: any thread. Since: 0.1
 */
LIN_API int lin_epoch_reissue(lin_runtime *rt, uint64_t id, uint32_t reason, uint32_t *version);

/*
 * lin_epoch_retire - the epoch's work is done; tokens for it become stale. Its memory is
 * reclaimed after an RCU grace period.
 * Return: 0; -LIN_ENOTFOUND. Context: any thread, not inside an observer. Since: 0.1
 */
LIN_API int lin_epoch_retire(lin_runtime *rt, uint64_t id);

/* A copy of what the registry knows about a live request or epoch. */
struct lin_entity_info {
	size_t sz;
	uint32_t kind; /* LIN_TARGET_REQUEST (1) or LIN_TARGET_EPOCH (2) */
	uint32_t version;
	uint64_t parent;
	size_t n_requests; /* epochs: how many requests it serves */
};

/*
 * lin_entity_lookup - describe a live request or epoch; copies up to @cap of its request
 * ids. @info (may be NULL) is filled as lin_runtime_get_stats fills its struct: only what
 * @info->sz covers, zero past what this library knows.
 * Return: 0; -LIN_ENOTFOUND (never declared, ended or retired); -EINVAL.
 * Context: any thread; lock-free (RCU read side). Since: 0.4 (as lin_lookup: 0.1)
 */
LIN_API int lin_entity_lookup(lin_runtime *rt, uint64_t id, struct lin_entity_info *info,
			      uint64_t *requests, size_t cap);

/*
 * lin_lookup - the old name of lin_entity_lookup, which it calls; deprecated since 0.4,
 * still exported. Context: as lin_entity_lookup. Since: 0.1
 */
LIN_API LIN_DEPRECATED("use lin_entity_lookup") int lin_lookup(lin_runtime *rt, uint64_t id,
							       struct lin_entity_info *info,
							       uint64_t *requests, size_t cap);

/* ------------------------------------------------------------------ tokens and scopes */

/*
 * lin_token - carries the current context from the thread that submits work to the thread
 * that runs it. A plain 32-byte value: copy it into the task; no allocation, nothing to
 * free. Its fields are private; only the integrity tag makes it checkable.
 */
typedef struct lin_token {
	uint64_t id;
	uint32_t version;
	uint32_t slot;
	uint32_t capture_tid;
	uint32_t capture_seq;
	uint16_t rt;
	uint8_t kind;
	uint8_t flags;
	uint32_t tag;
} lin_token;

/* Text form: "lin1." and 6 hex fields; at most LIN_TOKEN_TEXT_MAX bytes with the NUL. */
#define LIN_TOKEN_TEXT_MAX 64

/*
 * lin_token_capture - capture the calling thread's current context (innermost scope).
 * Return: 0; -LIN_ENOCONTEXT (no scope open; *@tok is zeroed and fails adoption).
 * Context: submitting thread; launch path (no allocation, no lock). Since: 0.1
 */
LIN_API int lin_token_capture(lin_runtime *rt, lin_token *tok);

/*
 * lin_token_make - make a token for a specific live request or epoch, without entering it.
 * Return: 0; -LIN_ENOTFOUND; -EINVAL. Context: any thread. Since: 0.4 (as lin_token_for: 0.1)
 */
LIN_API int lin_token_make(lin_runtime *rt, uint64_t id, lin_token *tok);

/*
 * lin_token_for - the old name of lin_token_make; deprecated since 0.4, still exported.
 * Context: any thread. Since: 0.1
 */
LIN_API LIN_DEPRECATED("use lin_token_make") int lin_token_for(lin_runtime *rt, uint64_t id,
							       lin_token *tok);

/*
 * lin_token_format / lin_token_parse - the text form, for crossing process and RPC
 * boundaries. Parse checks syntax and the integrity tag only; liveness is checked at adopt.
 * Return: format: 0, -ENOSPC (@len < LIN_TOKEN_TEXT_MAX), -EINVAL; parse: 0, -EINVAL
 * (syntax), -LIN_EBADTOKEN (tag mismatch). Context: any thread; no allocation. Since: 0.1
 */
LIN_API int lin_token_format(const lin_token *tok, char *buf, size_t len);
LIN_API int lin_token_parse(const char *text, lin_token *tok);

/* An open scope. A value; pass it back to lin_scope_exit on the same thread. */
typedef struct lin_scope {
	uint64_t cookie;
} lin_scope;

/*
 * lin_token_adopt - make @tok's request or epoch the calling thread's current context
 * until the returned scope is closed. Scopes nest (at most 64 deep per thread).
 * A token whose version has ended (its epoch retired or re-issued, its request ended) is
 * late work, not an error: it is adopted as a late scope, its adopt and launch records say
 * late, and its launches push the epoch id with a late bit, so their GPU records join the
 * requests of the version the token names, counted late (lin_runtime_stats.late_adopts,
 * late_launches; docs/trace-format.md, "Late work"). Since 0.4; before, such an adopt
 * failed and the work's GPU records were lost.
 * Return: 0; -LIN_ESTALE_TOKEN (its version ended and it was parsed from text, so it may
 * come from another process: not adopted, a stale_token record is written); -LIN_EBADTOKEN (integrity tag wrong);
 * -LIN_EFOREIGN (token of another runtime); -LIN_ESCOPE_DEPTH; -EINVAL (NULL).
 * Every error is also written to the trace as a misuse record. Whatever it returns, the
 * caller's work should run: an error changes what is recorded, never the work.
 * Context: worker thread; launch path (lock-free, one registry cache line). Since: 0.1
 */
LIN_API int lin_token_adopt(lin_runtime *rt, const lin_token *tok, lin_scope *scope);

/*
 * lin_scope_enter - like adopting lin_token_make(@id), for the thread that owns the id.
 * Return: as lin_token_adopt, plus -LIN_ENOTFOUND.
 * Context: the entering thread (the scope is its own); launch path (lock-free registry
 * lookup). Since: 0.1
 */
LIN_API int lin_scope_enter(lin_runtime *rt, uint64_t id, lin_scope *scope);

/*
 * lin_scope_enter_none - until @scope is closed (lin_scope_exit), the calling thread has no
 * current context, whatever scope it is inside: for work whose adopt failed or that was
 * handed on from untraced code, run on a thread that may be inside another task's scope
 * (a pool thread that runs other tasks while it waits). Launches inside are no_context
 * (recorded as misuse), captures get -LIN_ENOCONTEXT, lin_scope_current says
 * -LIN_ENOCONTEXT. It writes no record of its own. Closed like any scope, strictly nested.
 * Return: 0; -LIN_ESCOPE_DEPTH; -EINVAL.
 * Context: the thread that runs the work; launch path (no allocation, no lock). Since: 0.4
 */
LIN_API int lin_scope_enter_none(lin_runtime *rt, lin_scope *scope);

/*
 * lin_scope_exit - close a scope opened by lin_token_adopt or lin_scope_enter. Scopes must
 * close innermost first, on the thread that opened them, once.
 * Return: 0 (and *@scope is cleared); -LIN_ESCOPE_ORDER (an inner scope is still open:
 * nothing is closed); -LIN_ESCOPE_THREAD; -LIN_ESCOPE_CLOSED (already closed or never
 * opened); -EINVAL. Errors are written to the trace as misuse records.
 * Context: launch path. Since: 0.1
 */
LIN_API int lin_scope_exit(lin_runtime *rt, lin_scope *scope);

/*
 * lin_scope_current - the calling thread's current context: the request or epoch of its
 * innermost open scope.
 * Return: 0 with *@kind (LIN_TARGET_*), *@id, *@version set (any may be NULL);
 * -LIN_ENOCONTEXT (no scope open); -EINVAL; -ENOMEM (the thread's first lineage call).
 * Context: any thread. Since: 0.4 (as lin_current: 0.1)
 */
LIN_API int lin_scope_current(lin_runtime *rt, uint32_t *kind, uint64_t *id, uint32_t *version);

/*
 * lin_current - the old name of lin_scope_current; deprecated since 0.4, still exported.
 * Context: any thread. Since: 0.1
 */
LIN_API LIN_DEPRECATED("use lin_scope_current") int lin_current(lin_runtime *rt, uint32_t *kind,
								uint64_t *id, uint32_t *version);

/* ------------------------------------------------------------------ launches */

/* An open launch bracket. A value; pass it back to lin_launch_end. */
typedef struct lin_launch {
	uint64_t cookie;
	uint64_t ext_id; /* what was pushed, 0 if nothing */
} lin_launch;

/*
 * lin_launch_begin - call right before the application's CUDA launch call. Pushes the
 * current epoch through the binding backend, records a launch record (thread, host time,
 * epoch, name) and tells the observer. When the current epoch's version has ended (a
 * late scope, or one retired or re-issued while open: one registry cache line tells) the
 * launch is late work: the pushed id carries LIN_EXT_LATE_ENDED or LIN_EXT_LATE_REISSUED
 * (lineage/trace_format.h) and the record says late; ext_id in @l is what was pushed.
 * @name: kernel or API name; NOT copied: it must stay valid until the next
 * lin_runtime_flush (string literals and kernel symbol names are). May be NULL.
 * Return: 0; -LIN_ENOCONTEXT (no current epoch: the launch is still recorded, with no
 * epoch, and a no_context misuse record; nothing is pushed); -LIN_EBACKEND (push failed:
 * recorded, nothing pushed); -LIN_ELAUNCH_DEPTH (16 launches already open on this thread:
 * recorded, nothing pushed). In every case @l is valid for lin_launch_end.
 * Context: launching thread; launch path. Since: 0.1
 */
LIN_API int lin_launch_begin(lin_runtime *rt, const char *name, lin_launch *l);

/*
 * lin_launch_end - call right after the CUDA call returns; pops what begin pushed.
 * Return: 0; -LIN_ELAUNCH_ORDER (not the innermost open launch on this thread, or ended
 * twice: recorded as misuse, nothing changes; end the inner brackets, then this one);
 * -LIN_EBACKEND (pop failed or popped another id: another
 * tool's id found on top is put back, lineage's own taken from under it). Brackets still
 * open on the thread that calls lin_runtime_free are popped there. Context: launch path.
 * Since: 0.1
 */
LIN_API int lin_launch_end(lin_runtime *rt, lin_launch *l);

#ifdef __cplusplus
}
#endif
#endif
