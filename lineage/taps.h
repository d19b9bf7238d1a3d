/* SPDX-License-Identifier: MIT */
/*
 * taps.h - the taps attached to a runtime's writer (lineage/tap.h): the specs of
 * lin_runtime_opts checked, opened, fed, ticked, closed, and carried through fork(). The
 * runtime names no tap: each comes with its own opener. Internal to liblineage.
 * Context: as the writer's (writer.c): feed under the output lock, the rest outside it.
 */
#ifndef LIN_TAPS_H
#define LIN_TAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lineage/runtime.h"
#include "lineage/tap.h"
#include "log.h"

struct lin_tap_slot {
	const struct lin_tap_ops *ops;
	void *tap;
};

struct lin_taps {
	struct lin_tap_slot *v; /* opened, in the order of the specs */
	size_t n;
};

/* Check @o's tap specs (before anything is opened); each refusal is logged to @log.
 * Return: 0; -EINVAL (ntaps over LIN_TAPS_MAX, taps NULL, a spec with no opener, an sz too
 * small, unlike the first's, or with non-zero bytes past what this library knows). */
int lin_taps_check(const struct lin_runtime_opts *o, const struct lin_logger *log);

/* Open every tap of @o (checked) in order. @rt: the runtime being created (lin_tap_args).
 * On failure the taps opened before are closed and @t is left empty.
 * Return: 0; an opener's error; -EINVAL (incomplete operations; logged); -ENOMEM. */
int lin_taps_open(struct lin_taps *t, const struct lin_runtime_opts *o, const lin_runtime *rt,
		  bool threaded, const struct lin_logger *log);

static inline bool lin_taps_any(const struct lin_taps *t) { return t->n != 0; }

/* Hand @len trace bytes to every tap. With the output lock held. */
void lin_taps_feed(const struct lin_taps *t, const void *buf, size_t len);
/* Tell every tap that what was taken before @watermark_ns has been fed. Outside the lock. */
void lin_taps_tick(const struct lin_taps *t, uint64_t watermark_ns, bool wait);
/* Close every tap (after the last feed) and forget them. */
void lin_taps_close(struct lin_taps *t);

/* fork(): take the taps' locks (after the runtime's own); release them in the parent, or
 * in the child drop the taps unwritten (what they write to is the parent's). */
void lin_taps_fork_prepare(const struct lin_taps *t);
void lin_taps_fork_parent(const struct lin_taps *t);
void lin_taps_fork_child(struct lin_taps *t);

#endif
