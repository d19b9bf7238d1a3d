/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <pthread.h>

#include "rt_fixture.h"

static const char *misuse_cause(const struct trace *t, size_t k, char *buf, size_t len)
{
	const msgpack_object *m = trace_nth(t, LIN_REC_MISUSE, k);
	if (!m)
		return NULL;
	const msgpack_object *c = rec_f(m, 3);
	size_t n = c->via.str.size < len - 1 ? c->via.str.size : len - 1;
	memcpy(buf, c->via.str.ptr, n);
	buf[n] = 0;
	return buf;
}

Test(scopes, nest_and_close_innermost_first)
{
	struct rtfix f;
	rtfix_open(&f, LIN_RT_NO_WRITER_THREAD, NULL);
	lin_scope rs, es;
	uint64_t req = rtfix_request(&f, &rs), ep, id;
	uint32_t kind;
	cr_assert_eq(lin_epoch_declare(f.rt, NULL, &ep), 0);
	cr_assert_eq(lin_scope_enter(f.rt, ep, &es), 0);
	cr_assert_eq(lin_scope_current(f.rt, &kind, &id, NULL), 0);
	cr_assert_eq(id, ep);
	cr_assert_eq(lin_scope_exit(f.rt, &es), 0);
	cr_assert_eq(es.cookie, 0, "a closed scope is cleared");
	cr_assert_eq(lin_scope_current(f.rt, &kind, &id, NULL), 0);
	cr_assert_eq(id, req);
	cr_assert_eq(kind, LIN_TARGET_REQUEST);
	cr_assert_eq(lin_scope_exit(f.rt, &rs), 0);
	cr_assert_eq(lin_scope_current(f.rt, NULL, NULL, NULL), -LIN_ENOCONTEXT);
	struct trace *t = rtfix_close(&f);
	cr_assert_eq(trace_count(t, LIN_REC_SCOPE_CLOSE), 2);
	cr_assert_eq(trace_count(t, LIN_REC_MISUSE), 0);
	const msgpack_object *c = trace_nth(t, LIN_REC_SCOPE_CLOSE, 0);
	cr_assert_eq(rec_u(c, 4), ep);
	cr_assert_eq(rec_u(c, 5), 2, "depth of the closed scope");
	rtfix_fini(&f);
}

Test(scopes, out_of_order_close_is_refused_and_recorded)
{
	struct rtfix f;
	rtfix_open(&f, LIN_RT_NO_WRITER_THREAD, NULL);
	lin_scope rs, es;
	rtfix_request(&f, &rs);
	uint64_t ep, id;
	cr_assert_eq(lin_epoch_declare(f.rt, NULL, &ep), 0);
	cr_assert_eq(lin_scope_enter(f.rt, ep, &es), 0);
	cr_assert_eq(lin_scope_exit(f.rt, &rs), -LIN_ESCOPE_ORDER);
	cr_assert_eq(lin_scope_current(f.rt, NULL, &id, NULL), 0);
	cr_assert_eq(id, ep, "nothing was closed");
	cr_assert_eq(lin_scope_exit(f.rt, &es), 0);
	cr_assert_eq(lin_scope_exit(f.rt, &rs), 0, "the outer scope still closes in order");
	struct trace *t = rtfix_close(&f);
	char buf[64];
	cr_assert_str_eq(misuse_cause(t, 0, buf, sizeof(buf)), "scope_order");
	rtfix_fini(&f);
}

Test(scopes, closing_twice_is_detected)
{
	struct rtfix f;
	rtfix_open(&f, LIN_RT_NO_WRITER_THREAD, NULL);
	lin_scope rs, copy;
	rtfix_request(&f, &rs);
	copy = rs;
	cr_assert_eq(lin_scope_exit(f.rt, &rs), 0);
	cr_assert_eq(lin_scope_exit(f.rt, &rs), -LIN_ESCOPE_CLOSED, "the cleared scope");
	cr_assert_eq(lin_scope_exit(f.rt, &copy), -LIN_ESCOPE_CLOSED, "a copy of a closed scope");
	cr_assert_eq(lin_scope_exit(f.rt, NULL), -EINVAL);
	struct trace *t = rtfix_close(&f);
	char buf[64];
	cr_assert_str_eq(misuse_cause(t, 0, buf, sizeof(buf)), "scope_twice");
	cr_assert_str_eq(misuse_cause(t, 1, buf, sizeof(buf)), "scope_twice");
	rtfix_fini(&f);
}

struct cross {
	lin_runtime *rt;
	lin_scope s;
	int rc;
};

static void *close_elsewhere(void *arg)
{
	struct cross *c = arg;
	c->rc = lin_scope_exit(c->rt, &c->s);
	return NULL;
}

Test(scopes, closing_on_another_thread_is_refused)
{
	struct rtfix f;
	rtfix_open(&f, LIN_RT_NO_WRITER_THREAD, NULL);
	struct cross c = { .rt = f.rt };
	rtfix_request(&f, &c.s);
	pthread_t th;
	pthread_create(&th, NULL, close_elsewhere, &c);
	pthread_join(th, NULL);
	cr_assert_eq(c.rc, -LIN_ESCOPE_THREAD);
	cr_assert_eq(lin_scope_exit(f.rt, &c.s), 0, "the owner still closes it");
	struct trace *t = rtfix_close(&f);
	char buf[64];
	cr_assert_str_eq(misuse_cause(t, 0, buf, sizeof(buf)), "scope_thread");
	rtfix_fini(&f);
}

Test(scopes, depth_is_bounded)
{
	struct rtfix f;
	rtfix_open(&f, LIN_RT_NO_WRITER_THREAD, NULL);
	uint64_t req;
	lin_scope s[65];
	cr_assert_eq(lin_request_begin(f.rt, NULL, &req), 0);
	for (int i = 0; i < 64; i++)
		cr_assert_eq(lin_scope_enter(f.rt, req, &s[i]), 0, "depth %d", i);
	cr_assert_eq(lin_scope_enter(f.rt, req, &s[64]), -LIN_ESCOPE_DEPTH);
	for (int i = 63; i >= 0; i--)
		cr_assert_eq(lin_scope_exit(f.rt, &s[i]), 0);
	rtfix_fini(&f);
}

static void *exit_with_open_scope(void *arg)
{
	struct cross *c = arg;
	uint64_t req;
	lin_request_begin(c->rt, NULL, &req);
	c->rc = lin_scope_enter(c->rt, req, &c->s);
	return NULL; /* scope left open */
}

Test(scopes, thread_exit_with_open_scope_is_recorded)
{
	struct rtfix f;
	rtfix_open(&f, LIN_RT_NO_WRITER_THREAD, NULL);
	struct cross c = { .rt = f.rt };
	pthread_t th;
	pthread_create(&th, NULL, exit_with_open_scope, &c);
	pthread_join(th, NULL);
	cr_assert_eq(c.rc, 0);
	struct lin_runtime_stats st = { .sz = sizeof(st) };
	lin_runtime_flush(f.rt);
	lin_runtime_get_stats(f.rt, &st);
	cr_assert_eq(st.threads, 1);
	struct trace *t = rtfix_close(&f);
	char buf[64];
	cr_assert_str_eq(misuse_cause(t, 0, buf, sizeof(buf)), "thread_exit_open_scope");
	rtfix_fini(&f);
	LIN_TEST_CHECK_LEAKS();
}
