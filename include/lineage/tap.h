/* SPDX-License-Identifier: MIT */
/*
 * lineage/tap.h - how a module outside liblineage takes the trace as the writer produces
 * it. The caller attaches taps when it creates the runtime: lin_runtime_opts.taps lists
 * them, each an opener and the tap's own configuration, as the tap's library hands them
 * out (an exporter's options are its library's, never liblineage's). liblineage is the
 * runtime alone and names no tap (docs/architecture.md, "Modules").
 *
 * A tap sees the trace's own bytes, in order, the header first, exactly as the trace file
 * receives them (with or without a trace file). Since: 0.4 (taps as options: 0.5)
 */
#ifndef LINEAGE_TAP_H
#define LINEAGE_TAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lineage/common.h"
#include "lineage/runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * struct lin_tap_ops - what the runtime's writer calls. Set sz to sizeof(struct lin_tap_ops).
 * @feed: @len more trace bytes. Called with the runtime's output lock held: copy, never
 *   block, never call into the runtime.
 * @tick: every event taken before @watermark_ns (trace host clock) has been fed; the tap
 *   may process up to it. Called outside the output lock, from the writer thread (or from
 *   lin_runtime_flush without one); with @wait, return only when the work is done.
 * @close: at lin_runtime_free, after the last feed (or when lin_runtime_create fails after
 *   the tap opened); free the tap.
 * @fork_prepare, @fork_parent: fork(): take the tap's locks before (after the runtime's
 *   own), release them after, in the parent.
 * @fork_child: in the child: release the copies of the locks and free the tap without
 *   writing anything (what it writes to belongs to the parent).
 * Every member is required.
 */
struct lin_tap_ops {
	size_t sz;
	void (*feed)(void *tap, const void *buf, size_t len);
	void (*tick)(void *tap, uint64_t watermark_ns, bool wait);
	void (*close)(void *tap);
	void (*fork_prepare)(void *tap);
	void (*fork_parent)(void *tap);
	void (*fork_child)(void *tap);
};

/* What a tap is opened with. */
struct lin_tap_args {
	size_t sz;
	const struct lin_runtime_opts *opts; /* the runtime's options */
	const lin_runtime *rt;               /* being created: for lin_runtime_log only */
	bool threaded;                       /* ticks come from the runtime's writer thread */
	const void *config;                  /* since 0.5: the spec's config, as given */
};

/*
 * lin_tap_open_fn - open a tap: fill *@ops and *@tap and return 0, or return a negative
 * errno (logged by the tap through lin_runtime_log), which lin_runtime_create returns.
 * Called by lin_runtime_create, on its thread, once per spec, in the order of
 * lin_runtime_opts.taps. A positive return, one below -4095 (no errno), or an incomplete
 * *@ops is refused: lin_runtime_create returns -EINVAL and logs it, and closes the tap
 * when *@tap is set and *@ops has a @close its sz reaches. On a negative errno nothing is
 * closed: the opener frees what it opened.
 */
typedef int (*lin_tap_open_fn)(const struct lin_tap_args *a, const struct lin_tap_ops **ops, void **tap);

/*
 * struct lin_tap_spec - one tap to attach (lin_runtime_opts.taps). Set sz to
 * sizeof(struct lin_tap_spec); the runtime walks the array by its first element's sz, so
 * every element has the same sz. @open is required. @config is the tap's own (a tap's
 * library documents what it points to): handed to @open as lin_tap_args.config, borrowed
 * until lin_runtime_create returns. Since: 0.5
 */
struct lin_tap_spec {
	size_t sz;
	lin_tap_open_fn open;
	const void *config;
};

/* The most taps one runtime takes (lin_runtime_opts.ntaps). */
#define LIN_TAPS_MAX 16

/*
 * lin_runtime_log - log through @rt's log callback (or LINEAGE_LOG on standard error), as
 * the library's own diagnostics are. printf-style; a message is cut at 511 bytes.
 * Context: any thread, except inside @rt's log callback.
 * Since: 0.4
 */
LIN_API void lin_runtime_log(const lin_runtime *rt, enum lin_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#ifdef __cplusplus
}
#endif

#endif
