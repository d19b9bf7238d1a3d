/* SPDX-License-Identifier: MIT */
/* taps.c - the taps attached to a runtime's writer; see taps.h. */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>

#include "opts.h"
#include "taps.h"

#define SPEC_MIN_SZ sizeof(struct lin_tap_spec) /* 0.5's: every member is required */

/* Spec @i of @o, copied as options are (zero past what the caller's sz covers). */
static int spec_at(const struct lin_runtime_opts *o, size_t i, struct lin_tap_spec *out)
{
	size_t stride = o->taps[0].sz;
	return lin_opts_copy(out, sizeof(*out), (const char *)o->taps + i * stride);
}

static int check_spec(const struct lin_runtime_opts *o, size_t i, const struct lin_logger *log)
{
	size_t sz = *(const size_t *)((const char *)o->taps + i * o->taps[0].sz);
	struct lin_tap_spec s;
	if (sz < SPEC_MIN_SZ || sz > LIN_OPTS_IN_MAX || sz != o->taps[0].sz) {
		lin_logger_log(log, LIN_LOG_ERROR,
			       "tap %zu: sz %zu (set it to sizeof(struct lin_tap_spec), as the first's)",
			       i, sz);
		return -EINVAL;
	}
	if (spec_at(o, i, &s)) {
		lin_logger_log(log, LIN_LOG_ERROR, "tap %zu: options this library does not know", i);
		return -EINVAL;
	}
	if (!s.open) {
		lin_logger_log(log, LIN_LOG_ERROR, "tap %zu: no open function", i);
		return -EINVAL;
	}
	return 0;
}

int lin_taps_check(const struct lin_runtime_opts *o, const struct lin_logger *log)
{
	if (!o->ntaps)
		return 0;
	if (o->ntaps > LIN_TAPS_MAX || !o->taps) {
		lin_logger_log(log, LIN_LOG_ERROR, "taps: %zu specs at %p (at most %d, not NULL)",
			       o->ntaps, (const void *)o->taps, LIN_TAPS_MAX);
		return -EINVAL;
	}
	for (size_t i = 0; i < o->ntaps; i++) {
		int err = check_spec(o, i, log);
		if (err)
			return err;
	}
	return 0;
}

static bool ops_complete(const struct lin_tap_ops *ops)
{
	return ops && ops->sz >= sizeof(*ops) && ops->feed && ops->tick && ops->close &&
	       ops->fork_prepare && ops->fork_parent && ops->fork_child;
}

/* Whether @ops, though incomplete, covers a close the runtime may call: its sz reaches
 * past the member (an older or shorter table is read no further than its sz says). */
static bool ops_can_close(const struct lin_tap_ops *ops)
{
	return ops && ops->sz >= offsetof(struct lin_tap_ops, close) + sizeof(ops->close) && ops->close;
}

static int open_one(struct lin_tap_slot *slot, const struct lin_tap_spec *s,
		    const struct lin_tap_args *a, size_t i, const struct lin_logger *log)
{
	const struct lin_tap_ops *ops = NULL;
	void *tap = NULL;
	int err = s->open(a, &ops, &tap);
	if (err > 0 || err < -4095) { /* not the contract (0 or -errno): never handed on (a
				       * caller would negate it); what it opened is closed, as
				       * far as its table says how */
		lin_logger_log(log, LIN_LOG_ERROR, "tap %zu: open returned %d (not 0 or -errno)", i, err);
		if (tap && ops_can_close(ops))
			ops->close(tap);
		return -EINVAL;
	}
	if (err)
		return err;
	if (!ops_complete(ops)) {
		lin_logger_log(log, LIN_LOG_ERROR, "tap %zu: incomplete operations (sz %zu of %zu)",
			       i, ops ? ops->sz : (size_t)0, sizeof(*ops));
		if (tap && ops_can_close(ops))
			ops->close(tap);
		return -EINVAL;
	}
	slot->ops = ops;
	slot->tap = tap;
	return 0;
}

int lin_taps_open(struct lin_taps *t, const struct lin_runtime_opts *o, const lin_runtime *rt,
		  bool threaded, const struct lin_logger *log)
{
	t->v = NULL;
	t->n = 0;
	if (!o->ntaps)
		return 0;
	t->v = calloc(o->ntaps, sizeof(*t->v));
	if (!t->v)
		return -ENOMEM;
	for (size_t i = 0; i < o->ntaps; i++) {
		struct lin_tap_spec s;
		spec_at(o, i, &s); /* checked by lin_taps_check */
		struct lin_tap_args a = {
			.sz = sizeof(a), .opts = o, .rt = rt, .threaded = threaded, .config = s.config
		};
		int err = open_one(&t->v[t->n], &s, &a, i, log);
		if (err) {
			lin_taps_close(t);
			return err;
		}
		t->n++;
	}
	return 0;
}

void lin_taps_feed(const struct lin_taps *t, const void *buf, size_t len)
{
	for (size_t i = 0; i < t->n; i++)
		t->v[i].ops->feed(t->v[i].tap, buf, len);
}

void lin_taps_tick(const struct lin_taps *t, uint64_t watermark_ns, bool wait)
{
	for (size_t i = 0; i < t->n; i++)
		t->v[i].ops->tick(t->v[i].tap, watermark_ns, wait);
}

void lin_taps_close(struct lin_taps *t)
{
	for (size_t i = 0; i < t->n; i++)
		t->v[i].ops->close(t->v[i].tap);
	free(t->v);
	t->v = NULL;
	t->n = 0;
}

void lin_taps_fork_prepare(const struct lin_taps *t)
{
	for (size_t i = 0; i < t->n; i++)
		t->v[i].ops->fork_prepare(t->v[i].tap);
}

void lin_taps_fork_parent(const struct lin_taps *t)
{
	for (size_t i = t->n; i-- > 0;)
		t->v[i].ops->fork_parent(t->v[i].tap);
}

void lin_taps_fork_child(struct lin_taps *t)
{
	for (size_t i = t->n; i-- > 0;)
		t->v[i].ops->fork_child(t->v[i].tap);
	free(t->v);
	t->v = NULL;
	t->n = 0;
}
