/* SPDX-License-Identifier: MIT */
/*
 * tap.c - the OTLP stream as a tap on the runtime's writer (lineage/tap.h), and
 * lin_otlp_enable (lineage/otlp.h).
 */
#include <errno.h>
#include <stdint.h>
#include <time.h>

#include "lineage/otlp.h"
#include "lineage/tap.h"
#include "otlp_stream.h"

static void feed(void *t, const void *buf, size_t len) { lin_ostream_feed(t, buf, len); }
static void tick(void *t, uint64_t wm, bool wait) { lin_ostream_tick(t, wm, wait); }
static void close_tap(void *t) { lin_ostream_close(t); }
static void fork_prepare(void *t) { lin_ostream_fork_lock(t); }
static void fork_parent(void *t) { lin_ostream_fork_unlock(t); }

static void fork_child(void *t)
{
	lin_ostream_fork_unlock(t);
	lin_ostream_discard(t);
}

static const struct lin_tap_ops otlp_tap_ops = {
	.sz = sizeof(struct lin_tap_ops),
	.feed = feed,
	.tick = tick,
	.close = close_tap,
	.fork_prepare = fork_prepare,
	.fork_parent = fork_parent,
	.fork_child = fork_child,
};

static uint64_t ns(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int open_tap(const struct lin_tap_args *a, const struct lin_tap_ops **ops, void **tap)
{
	if (!a || a->sz < sizeof(*a) || !a->opts || !ops || !tap)
		return -EINVAL;
	/* The trace's host clock is CLOCK_MONOTONIC: spans carry Unix times. */
	uint64_t real = ns(CLOCK_REALTIME), mono = ns(CLOCK_MONOTONIC);
	struct lin_ostream_opts so = { .path = a->opts->otlp_path,
				       .write = a->opts->otlp_write,
				       .user = a->opts->otlp_user,
				       .service = a->opts->otlp_service,
				       .rt = a->rt,
				       .threaded = a->threaded,
				       .unix_offset_ns = (int64_t)(real - mono) };
	struct lin_ostream *s = NULL;
	int err = lin_ostream_open(&so, &s);
	if (err)
		return err;
	*ops = &otlp_tap_ops;
	*tap = s;
	return 0;
}

LIN_API int lin_otlp_enable(void) { return lin_runtime_set_otlp_tap(open_tap); }
