/* SPDX-License-Identifier: MIT */
/*
 * writer.h - the trace writer, an object of its own (writer.c) that the runtime holds by
 * pointer: it drains the runtime's per-thread event buffers, encodes them into the trace
 * and hands the bytes to the trace file or callback and to its taps (taps.h). It reads
 * the runtime's thread list, clock, log and header fields through the runtime it was made
 * for. Internal to liblineage.
 * Context: create, open, start, stop and free on the thread creating or freeing the
 * runtime; drain on the writer thread or the caller of lin_runtime_flush/free.
 */
#ifndef LIN_WRITER_H
#define LIN_WRITER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "lineage/runtime.h"

struct lin_writer;

/*
 * The writer's doorbell: a producer whose buffer is half full rings it (lin_tstate_kick,
 * thread.c) so the writer drains before its period. The writer owns it; the runtime keeps
 * a pointer for its producers (rt->bell).
 */
struct lin_doorbell {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	_Atomic int rung; /* a producer asked the writer to drain before its period */
	bool armed;       /* a writer thread waits on it */
};

/* A writer for @rt, with no output yet. NULL: out of memory. */
struct lin_writer *lin_writer_new(lin_runtime *rt);
/* Open the trace file or callback and the taps @o names, and write the header. On failure
 * the writer is left for lin_writer_free. Return: 0; -errno; an opener's error; -EIO. */
int lin_writer_open(struct lin_writer *w, const struct lin_runtime_opts *o);
/* Start the writer thread (not with LIN_RT_NO_WRITER_THREAD). Return: 0; -errno. */
int lin_writer_start(struct lin_writer *w);
/* Stop the writer thread, if any. NULL is accepted. */
void lin_writer_stop(struct lin_writer *w);
/* Encode all pending events; takes the output lock. @exact: the taps take every event
 * (flush, free), not only those older than a margin (the periodic drain).
 * Return: 0; -LIN_ETRACE (output failed, logged). */
int lin_writer_drain(struct lin_writer *w, bool exact);
/* Write the trace's end, close the taps and the trace, free. NULL is accepted. */
void lin_writer_free(struct lin_writer *w);

struct lin_doorbell *lin_writer_bell(struct lin_writer *w);
uint64_t lin_writer_bytes_written(const struct lin_writer *w);

/* fork(), from the runtime's handlers: fork_lock before the runtime's own locks,
 * fork_taps_lock after them; then fork_taps_unlock and fork_unlock in that order. In the
 * child, fork_detach (before the unlocks) leaves the writer with no output and no thread,
 * and fork_taps_unlock drops the taps unwritten. */
void lin_writer_fork_lock(struct lin_writer *w);
void lin_writer_fork_taps_lock(struct lin_writer *w);
void lin_writer_fork_taps_unlock(struct lin_writer *w, bool child);
void lin_writer_fork_detach(struct lin_writer *w);
void lin_writer_fork_unlock(struct lin_writer *w);

#endif
