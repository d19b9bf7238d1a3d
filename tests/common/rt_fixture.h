/* SPDX-License-Identifier: MIT */
/* rt_fixture.h - a runtime writing its trace into memory, for tests. */
#ifndef LIN_RT_FIXTURE_H
#define LIN_RT_FIXTURE_H

#include <lineage.h>

#include "lin_test.h"
#include "trace_read.h"

struct rtfix {
	lin_runtime *rt;
	struct membuf out;
	struct trace tr;
	bool loaded;
};

static inline void rtfix_open(struct rtfix *f, uint32_t flags, const struct lin_backend_ops *be)
{
	memset(f, 0, sizeof(*f));
	struct lin_runtime_opts o = { .sz = sizeof(o),
				      .trace_write = membuf_write,
				      .trace_user = &f->out,
				      .flags = flags,
				      .backend = be ? LIN_BACKEND_CUSTOM : LIN_BACKEND_NONE,
				      .backend_ops = be };
	int err = lin_runtime_create(&o, &f->rt);
	cr_assert_eq(err, 0, "lin_runtime_create: %s", lin_strerror(err));
}

/* Flush, free the runtime and parse what it wrote. */
static inline struct trace *rtfix_close(struct rtfix *f)
{
	lin_runtime_free(f->rt);
	f->rt = NULL;
	cr_assert_eq(trace_load_mem(&f->tr, f->out.p, f->out.n), 0, "trace does not parse");
	cr_assert(!f->tr.truncated, "trace ends inside a record");
	f->loaded = true;
	return &f->tr;
}

static inline void rtfix_fini(struct rtfix *f)
{
	if (f->rt)
		lin_runtime_free(f->rt);
	if (f->loaded)
		trace_free(&f->tr);
	free(f->out.p);
}

/* A request entered on this thread; returns the request id and leaves its scope open. */
static inline uint64_t rtfix_request(struct rtfix *f, lin_scope *s)
{
	uint64_t req;
	cr_assert_eq(lin_request_begin(f->rt, NULL, &req), 0);
	cr_assert_eq(lin_scope_enter(f->rt, req, s), 0);
	return req;
}

/* A request and an epoch under it, both entered on this thread; returns the epoch. */
static inline uint64_t rtfix_epoch(struct rtfix *f, lin_scope *rs, lin_scope *es)
{
	rtfix_request(f, rs);
	uint64_t ep;
	cr_assert_eq(lin_epoch_declare(f->rt, NULL, &ep), 0);
	cr_assert_eq(lin_scope_enter(f->rt, ep, es), 0);
	return ep;
}

#endif
