/* SPDX-License-Identifier: MIT */
#include <errno.h>

#include "rt_fixture.h"

Test(epochs, declare_under_current_request)
{
	struct rtfix f;
	rtfix_open(&f, LIN_RT_NO_WRITER_THREAD, NULL);
	lin_scope s;
	uint64_t req = rtfix_request(&f, &s), ep;
	cr_assert_eq(lin_epoch_declare(f.rt, NULL, &ep), 0);
	cr_assert_neq(ep, req, "requests and epochs share one id space");
	struct lin_entity_info info = { .sz = sizeof(info) };
	uint64_t got[2] = { 0 };
	cr_assert_eq(lin_entity_lookup(f.rt, ep, &info, got, 2), 0);
	cr_assert_eq(info.kind, LIN_TARGET_EPOCH);
	cr_assert_eq(info.version, 1);
	cr_assert_eq(info.n_requests, 1);
	cr_assert_eq(got[0], req);
	cr_assert_eq(info.parent, 0);
	cr_assert_eq(lin_scope_exit(f.rt, &s), 0);
	struct trace *t = rtfix_close(&f);
	const msgpack_object *r = trace_nth(t, LIN_REC_EPOCH_DECLARE, 0);
	cr_assert_not_null(r);
	cr_assert_eq(rec_u(r, 3), ep);
	cr_assert_eq(rec_u(r, 4), 1, "version 1");
	const msgpack_object *reqs = rec_f(r, 5);
	cr_assert_eq(reqs->type, MSGPACK_OBJECT_ARRAY);
	cr_assert_eq(reqs->via.array.size, 1);
	cr_assert_eq(reqs->via.array.ptr[0].via.u64, req);
	cr_assert(rec_nil(r, 6), "no parent epoch");
	rtfix_fini(&f);
	LIN_TEST_CHECK_LEAKS();
}

Test(epochs, declare_without_context_fails)
{
	struct rtfix f;
	rtfix_open(&f, LIN_RT_NO_WRITER_THREAD, NULL);
	uint64_t ep = 0;
	cr_assert_eq(lin_epoch_declare(f.rt, NULL, &ep), -LIN_ENOCONTEXT);
	struct lin_epoch_opts o = { .sz = sizeof(o), .requests = (uint64_t[]){ 424242 }, .n_requests = 1 };
	cr_assert_eq(lin_epoch_declare(f.rt, &o, &ep), -LIN_ENOTFOUND, "unknown request");
	o = (struct lin_epoch_opts){ .sz = sizeof(o), .n_requests = 2 };
	cr_assert_eq(lin_epoch_declare(f.rt, &o, &ep), -EINVAL, "count without array");
	cr_assert_eq(lin_epoch_declare(f.rt, NULL, NULL), -EINVAL);
	cr_assert_eq(lin_epoch_declare(NULL, NULL, &ep), -EINVAL);
	rtfix_fini(&f);
}

Test(epochs, declare_with_no_requests)
{
	struct rtfix f;
	rtfix_open(&f, LIN_RT_NO_WRITER_THREAD, NULL);
	struct lin_epoch_opts o = { .sz = sizeof(o), .flags = LIN_EPOCH_NO_REQUESTS, .name = "op" };
	uint64_t a = 0, b = 0, c = 0;
	cr_assert_eq(lin_epoch_declare(f.rt, &o, &a), 0, "no context needed");
	lin_scope s;
	uint64_t req = rtfix_request(&f, &s);
	cr_assert_eq(lin_epoch_declare(f.rt, &o, &b), 0);
	struct lin_entity_info info = { .sz = sizeof(info) };
	cr_assert_eq(lin_entity_lookup(f.rt, b, &info, NULL, 0), 0);
	cr_assert_eq(info.n_requests, 0, "the current request is not consulted");
	cr_assert_eq(info.parent, 0);
	cr_assert_eq(lin_epoch_declare(f.rt, NULL, &c), 0);
	cr_assert_eq(lin_entity_lookup(f.rt, c, &info, NULL, 0), 0);
	cr_assert_eq(info.n_requests, 1, "without the flag: the current request");
	o.requests = &req;
	o.n_requests = 1;
	cr_assert_eq(lin_epoch_declare(f.rt, &o, &c), -EINVAL, "no requests, and a request");
	o = (struct lin_epoch_opts){ .sz = sizeof(o), .flags = 1u << 7 };
	cr_assert_eq(lin_epoch_declare(f.rt, &o, &c), -EINVAL, "unknown flag");
	cr_assert_eq(lin_scope_exit(f.rt, &s), 0);
	struct trace *t = rtfix_close(&f);
	const msgpack_object *r = trace_nth(t, LIN_REC_EPOCH_DECLARE, 0);
	cr_assert_not_null(r);
	cr_assert_eq(rec_u(r, 3), a);
	const msgpack_object *reqs = rec_f(r, 5);
	cr_assert_eq(reqs->type, MSGPACK_OBJECT_ARRAY);
	cr_assert_eq(reqs->via.array.size, 0);
	rtfix_fini(&f);
	LIN_TEST_CHECK_LEAKS();
}

/* Shares (since 0.5): an epoch_share record right after the declaration, one packed share
 * per request in its order; refused (-EINVAL, nothing declared) when they cannot hold. */
Test(epochs, shares_are_written_after_the_declaration)
{
	struct rtfix f;
	rtfix_open(&f, LIN_RT_NO_WRITER_THREAD, NULL);
	uint64_t req[2], e = 0, bad = 0;
	for (int i = 0; i < 2; i++)
		cr_assert_eq(lin_request_begin(f.rt, NULL, &req[i]), 0);
	const struct lin_epoch_share sh[] = { { 7, LIN_SHARE_PREFILL | LIN_SHARE_FIRST_TOKEN },
					      { 1, LIN_SHARE_DECODE } };
	struct lin_epoch_opts o = { .sz = sizeof(o), .requests = req, .n_requests = 2, .shares = sh };
	cr_assert_eq(lin_epoch_declare(f.rt, &o, &e), 0);
	/* Each way shares cannot hold. */
	const struct lin_epoch_share both[] = { { 1, LIN_SHARE_PREFILL | LIN_SHARE_DECODE }, { 1, 0 } };
	const struct lin_epoch_share unknown[] = { { 1, 0 }, { 1, 1u << 3 } };
	o.shares = both;
	cr_assert_eq(lin_epoch_declare(f.rt, &o, &bad), -EINVAL, "prefill and decode");
	o.shares = unknown;
	cr_assert_eq(lin_epoch_declare(f.rt, &o, &bad), -EINVAL, "an unknown flag");
	lin_scope s;
	uint64_t cur = rtfix_request(&f, &s);
	struct lin_epoch_opts ctx = { .sz = sizeof(ctx), .shares = sh };
	cr_assert_eq(lin_epoch_declare(f.rt, &ctx, &bad), -EINVAL, "shares with no requests given");
	cr_assert_eq(lin_scope_exit(f.rt, &s), 0);
	/* An older caller's struct (no shares member) is read as having none. */
	struct lin_epoch_opts old = { .sz = offsetof(struct lin_epoch_opts, shares),
				      .requests = &cur,
				      .n_requests = 1 };
	uint64_t e2 = 0;
	cr_assert_eq(lin_epoch_declare(f.rt, &old, &e2), 0);
	struct trace *t = rtfix_close(&f);
	cr_assert_eq(trace_count(t, LIN_REC_EPOCH_DECLARE), 2, "the refused ones declared nothing");
	cr_assert_eq(trace_count(t, LIN_REC_EPOCH_SHARE), 1);
	const msgpack_object *r = trace_nth(t, LIN_REC_EPOCH_SHARE, 0);
	cr_assert_eq(rec_u(r, 1), e);
	cr_assert_eq(rec_u(r, 2), 1, "the declaration's version");
	const msgpack_object *a = rec_f(r, 3);
	cr_assert_eq(a->type, MSGPACK_OBJECT_ARRAY);
	cr_assert_eq(a->via.array.size, 2);
	cr_assert_eq(a->via.array.ptr[0].via.u64, (7u << 4) | 5u);
	cr_assert_eq(a->via.array.ptr[1].via.u64, LIN_SHARE_PACK(1, LIN_SHARE_DECODE));
	/* It follows its declaration in the file. */
	size_t decl_at = SIZE_MAX, share_at = SIZE_MAX;
	for (size_t i = 0; i < t->n; i++) {
		if (rec_type(&t->rec[i]) == LIN_REC_EPOCH_DECLARE && rec_u(&t->rec[i], 3) == e)
			decl_at = i;
		if (rec_type(&t->rec[i]) == LIN_REC_EPOCH_SHARE)
			share_at = i;
	}
	cr_assert_eq(share_at, decl_at + 1);
	rtfix_fini(&f);
	LIN_TEST_CHECK_LEAKS();
}

Test(epochs, fan_in_one_epoch_serves_several_requests)
{
	struct rtfix f;
	rtfix_open(&f, LIN_RT_NO_WRITER_THREAD, NULL);
	uint64_t r[3], ep;
	for (int i = 0; i < 3; i++)
		cr_assert_eq(lin_request_begin(f.rt, NULL, &r[i]), 0);
	struct lin_epoch_opts o = { .sz = sizeof(o), .requests = r, .n_requests = 3, .name = "batch" };
	cr_assert_eq(lin_epoch_declare(f.rt, &o, &ep), 0);
	uint64_t got[3];
	struct lin_entity_info info = { .sz = sizeof(info) };
	cr_assert_eq(lin_entity_lookup(f.rt, ep, &info, got, 3), 0);
	cr_assert_eq(info.n_requests, 3);
	cr_assert_arr_eq(got, r, sizeof(r));
	struct trace *t = rtfix_close(&f);
	const msgpack_object *d = trace_nth(t, LIN_REC_EPOCH_DECLARE, 0);
	cr_assert_eq(rec_f(d, 5)->via.array.size, 3);
	char buf[32];
	cr_assert_str_eq(trace_string(t, rec_u(d, 7), buf, sizeof(buf)), "batch");
	rtfix_fini(&f);
	LIN_TEST_CHECK_LEAKS();
}

Test(epochs, fan_out_and_child_epochs_inherit_requests)
{
	struct rtfix f;
	rtfix_open(&f, LIN_RT_NO_WRITER_THREAD, NULL);
	lin_scope rs, es;
	uint64_t req = rtfix_request(&f, &rs), e1, e2, child;
	cr_assert_eq(lin_epoch_declare(f.rt, NULL, &e1), 0);
	cr_assert_eq(lin_epoch_declare(f.rt, NULL, &e2), 0);
	cr_assert_neq(e1, e2);
	cr_assert_eq(lin_scope_enter(f.rt, e1, &es), 0);
	cr_assert_eq(lin_epoch_declare(f.rt, NULL, &child), 0);
	struct lin_entity_info info = { .sz = sizeof(info) };
	uint64_t got = 0;
	cr_assert_eq(lin_entity_lookup(f.rt, child, &info, &got, 1), 0);
	cr_assert_eq(info.parent, e1, "the current epoch becomes the parent");
	cr_assert_eq(got, req, "and its requests are inherited");
	cr_assert_eq(lin_scope_exit(f.rt, &es), 0);
	cr_assert_eq(lin_scope_exit(f.rt, &rs), 0);
	rtfix_fini(&f);
}

Test(epochs, reissue_bumps_version_and_retire_removes)
{
	struct rtfix f;
	rtfix_open(&f, LIN_RT_NO_WRITER_THREAD, NULL);
	lin_scope rs;
	rtfix_request(&f, &rs);
	uint64_t ep;
	uint32_t v = 0;
	cr_assert_eq(lin_epoch_declare(f.rt, NULL, &ep), 0);
	cr_assert_eq(lin_epoch_reissue(f.rt, ep, LIN_REISSUE_RETRY, &v), 0);
	cr_assert_eq(v, 2);
	cr_assert_eq(lin_epoch_reissue(f.rt, ep, 99, &v), -EINVAL);
	cr_assert_eq(lin_epoch_retire(f.rt, ep), 0);
	cr_assert_eq(lin_entity_lookup(f.rt, ep, NULL, NULL, 0), -LIN_ENOTFOUND);
	cr_assert_eq(lin_epoch_retire(f.rt, ep), -LIN_ENOTFOUND, "retired twice");
	cr_assert_eq(lin_epoch_reissue(f.rt, ep, LIN_REISSUE_RETRY, &v), -LIN_ENOTFOUND);
	cr_assert_eq(lin_scope_exit(f.rt, &rs), 0);
	struct trace *t = rtfix_close(&f);
	const msgpack_object *r = trace_nth(t, LIN_REC_EPOCH_REISSUE, 0);
	cr_assert_eq(rec_u(r, 4), 2);
	cr_assert_eq(rec_u(r, 5), LIN_REISSUE_RETRY);
	r = trace_nth(t, LIN_REC_EPOCH_RETIRE, 0);
	cr_assert_eq(rec_u(r, 3), ep);
	cr_assert_eq(rec_u(r, 4), 2, "retired at version 2");
	rtfix_fini(&f);
}

Test(epochs, request_end_and_epoch_retire_do_not_cross_kinds)
{
	struct rtfix f;
	rtfix_open(&f, LIN_RT_NO_WRITER_THREAD, NULL);
	lin_scope rs;
	uint64_t req = rtfix_request(&f, &rs), ep;
	cr_assert_eq(lin_epoch_declare(f.rt, NULL, &ep), 0);
	cr_assert_eq(lin_epoch_retire(f.rt, req), -LIN_ENOTFOUND, "a request is not an epoch");
	cr_assert_eq(lin_request_end(f.rt, ep), -LIN_ENOTFOUND, "an epoch is not a request");
	cr_assert_eq(lin_scope_exit(f.rt, &rs), 0);
	cr_assert_eq(lin_request_end(f.rt, req), 0);
	rtfix_fini(&f);
}

Test(epochs, ids_are_unique_and_slots_are_reused)
{
	struct rtfix f;
	rtfix_open(&f, LIN_RT_NO_WRITER_THREAD, NULL);
	uint64_t req, prev = 0;
	cr_assert_eq(lin_request_begin(f.rt, NULL, &req), 0);
	struct lin_epoch_opts o = { .sz = sizeof(o), .requests = &req, .n_requests = 1 };
	for (int i = 0; i < 70000; i++) { /* more than one 64 Ki-slot chunk */
		uint64_t ep;
		cr_assert_eq(lin_epoch_declare(f.rt, &o, &ep), 0);
		cr_assert_gt(ep, prev, "ids increase and are never reused");
		prev = ep;
		cr_assert_eq(lin_epoch_retire(f.rt, ep), 0);
		if ((i & 4095) == 0)
			lin_runtime_flush(f.rt);
	}
	struct lin_runtime_stats st = { .sz = sizeof(st) };
	lin_runtime_get_stats(f.rt, &st);
	cr_assert_eq(st.live_epochs, 0);
	cr_assert_eq(st.live_requests, 1);
	rtfix_fini(&f);
}

Test(requests, names_user_ids_and_parents_are_recorded)
{
	struct rtfix f;
	rtfix_open(&f, LIN_RT_NO_WRITER_THREAD, NULL);
	uint64_t parent, child;
	struct lin_request_opts o = {
		.sz = sizeof(o), .name = "GET /v1/generate", .user_id = 77, .has_user_id = 1
	};
	cr_assert_eq(lin_request_begin(f.rt, &o, &parent), 0);
	o = (struct lin_request_opts){ .sz = sizeof(o), .parent = parent };
	cr_assert_eq(lin_request_begin(f.rt, &o, &child), 0);
	cr_assert_eq(lin_request_end(f.rt, child), 0);
	cr_assert_eq(lin_request_end(f.rt, child), -LIN_ENOTFOUND);
	struct trace *t = rtfix_close(&f);
	const msgpack_object *r = trace_nth(t, LIN_REC_REQUEST_BEGIN, 0);
	cr_assert_eq(rec_u(r, 3), parent);
	cr_assert_eq(rec_u(r, 4), 77);
	char buf[64];
	cr_assert_str_eq(trace_string(t, rec_u(r, 5), buf, sizeof(buf)), "GET /v1/generate");
	cr_assert(rec_nil(r, 6));
	r = trace_nth(t, LIN_REC_REQUEST_BEGIN, 1);
	cr_assert(rec_nil(r, 4), "no user id is nil, not 0");
	cr_assert_eq(rec_u(r, 6), parent);
	cr_assert_eq(trace_count(t, LIN_REC_REQUEST_END), 1);
	rtfix_fini(&f);
	LIN_TEST_CHECK_LEAKS();
}
