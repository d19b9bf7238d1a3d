/* SPDX-License-Identifier: MIT */
/*
 * tap.c - the OTLP stream as a tap on the runtime's writer (lineage/tap.h): its opener,
 * lin_otlp_tap_open, and its options (lineage/otlp.h).
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>
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

/* Copy the caller's options as liblineage copies its own (lineage/opts.h): zero past what
 * its sz covers; a longer struct only with zero bytes past what this library knows. */
static int copy_opts(struct lin_otlp_opts *o, const struct lin_otlp_opts *in)
{
	memset(o, 0, sizeof(*o));
	if (!in || in->sz < sizeof(size_t))
		return -EINVAL;
	for (size_t i = sizeof(*o); i < in->sz; i++)
		if (((const unsigned char *)in)[i])
			return -EINVAL;
	memcpy(o, in, in->sz < sizeof(*o) ? in->sz : sizeof(*o));
	return 0;
}

/* The options, checked; each refusal is logged through the runtime. */
static int load_opts(const struct lin_tap_args *a, struct lin_otlp_opts *o)
{
	if (copy_opts(o, a->config)) {
		lin_runtime_log(a->rt, LIN_LOG_ERROR,
				"OTLP tap: no options, or a bad sz (set it to sizeof(struct "
				"lin_otlp_opts)) or options this library does not know");
		return -EINVAL;
	}
	if (!o->path == !o->write) {
		lin_runtime_log(a->rt, LIN_LOG_ERROR,
				"OTLP tap: set one of lin_otlp_opts.path and write (%s)",
				o->path ? "both are set" : "neither is set");
		return -EINVAL;
	}
	return 0;
}

LIN_API int lin_otlp_tap_open(const struct lin_tap_args *a, const struct lin_tap_ops **ops, void **tap)
{
	if (!a || a->sz < offsetof(struct lin_tap_args, config) + sizeof(a->config) || !ops || !tap)
		return -EINVAL;
	struct lin_otlp_opts o;
	int err = load_opts(a, &o);
	if (err)
		return err;
	/* The trace's host clock is CLOCK_MONOTONIC: spans carry Unix times. */
	uint64_t real = ns(CLOCK_REALTIME), mono = ns(CLOCK_MONOTONIC);
	struct lin_ostream_opts so = { .path = o.path,
				       .write = o.write,
				       .user = o.user,
				       .service = o.service,
				       .rt = a->rt,
				       .threaded = a->threaded,
				       .unix_offset_ns = (int64_t)(real - mono) };
	struct lin_ostream *s = NULL;
	err = lin_ostream_open(&so, &s);
	if (err)
		return err;
	*ops = &otlp_tap_ops;
	*tap = s;
	return 0;
}
