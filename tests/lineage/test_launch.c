/* SPDX-License-Identifier: MIT */
#include <errno.h>

#include "rt_fixture.h"

/* A backend that keeps a per-thread stack, like CUPTI's external correlation. */
struct fake_be {
	uint64_t stack[16];
	int depth;
	int pushes, pops;
	int fail_push;
	uint32_t last_kind;
};

static int fake_push(void *ctx, uint32_t kind, uint64_t id)
{
	struct fake_be *b = ctx;
	if (b->fail_push)
		return -EIO;
	b->last_kind = kind;
	b->stack[b->depth++] = id;
	b->pushes++;
	return 0;
}

static int fake_pop(void *ctx, uint32_t kind, uint64_t *id)
{
	struct fake_be *b = ctx;
	(void)kind;
	if (!b->depth)
		return -ENOENT;
	b->pops++;
	*id = b->stack[--b->depth];
	return 0;
}

static struct lin_backend_ops fake_ops(struct fake_be *b)
{
	return (struct lin_backend_ops){ .sz = sizeof(struct lin_backend_ops),
					 .name = "fake",
					 .push = fake_push,
					 .pop = fake_pop,
					 .ctx = b };
}

Test(launch, pushes_the_current_epoch_and_records_the_launch)
{
	struct fake_be b = { 0 };
	struct lin_backend_ops ops = fake_ops(&b);
	struct rtfix f;
	rtfix_open(&f, LIN_RT_NO_WRITER_THREAD, &ops);
	lin_scope rs, es;
	uint64_t ep = rtfix_epoch(&f, &rs, &es);
	lin_launch l;
	cr_assert_eq(lin_launch_begin(f.rt, "saxpy", &l), 0);
	cr_assert_eq(b.depth, 1);
	cr_assert_eq(b.stack[0], ep, "the epoch id is the external correlation id");
	cr_assert_eq(b.last_kind, 5, "CUSTOM2");
	cr_assert_eq(lin_launch_end(f.rt, &l), 0);
	cr_assert_eq(b.depth, 0, "popped");
	lin_scope_exit(f.rt, &es);
	lin_scope_exit(f.rt, &rs);
	struct trace *t = rtfix_close(&f);
	const msgpack_object *r = trace_nth(t, LIN_REC_LAUNCH, 0);
	cr_assert_not_null(r);
	cr_assert_eq(rec_u(r, 3), ep);
	cr_assert_eq(rec_u(r, 4), 1);
	cr_assert_eq(rec_u(r, 5), ep, "ext_id pushed");
	char buf[32];
	cr_assert_str_eq(trace_string(t, rec_u(r, 6), buf, sizeof(buf)), "saxpy");
	const msgpack_object *hb = trace_hdr(t, "backend");
	cr_assert_eq(strncmp(hb->via.str.ptr, "custom", hb->via.str.size), 0);
	rtfix_fini(&f);
}

/* Format 1.2: each bracket's end is recorded, paired with its begin by the nesting depth. */
Test(launch, brackets_record_their_depth_and_their_end)
{
	struct fake_be b = { 0 };
	struct lin_backend_ops ops = fake_ops(&b);
	struct rtfix f;
	rtfix_open(&f, LIN_RT_NO_WRITER_THREAD, &ops);
	lin_scope rs, es;
	rtfix_epoch(&f, &rs, &es);
	lin_launch outer, inner;
	cr_assert_eq(lin_launch_begin(f.rt, "outer", &outer), 0);
	cr_assert_eq(lin_launch_begin(f.rt, "inner", &inner), 0);
	cr_assert_eq(lin_launch_end(f.rt, &inner), 0);
	cr_assert_eq(lin_launch_end(f.rt, &outer), 0);
	lin_scope_exit(f.rt, &es);
	lin_scope_exit(f.rt, &rs);
	struct trace *t = rtfix_close(&f);
	cr_assert_eq(trace_count(t, LIN_REC_LAUNCH), 2);
	cr_assert_eq(trace_count(t, LIN_REC_LAUNCH_END), 2);
	const msgpack_object *b0 = trace_nth(t, LIN_REC_LAUNCH, 0),
			     *b1 = trace_nth(t, LIN_REC_LAUNCH, 1);
	const msgpack_object *e0 = trace_nth(t, LIN_REC_LAUNCH_END, 0),
			     *e1 = trace_nth(t, LIN_REC_LAUNCH_END, 1);
	cr_assert_eq(rec_u(b0, 9), 1, "outer bracket at depth 1");
	cr_assert_eq(rec_u(b1, 9), 2, "inner bracket at depth 2");
	cr_assert_eq(rec_u(e0, 3), 2, "the inner one ends first");
	cr_assert_eq(rec_u(e1, 3), 1);
	cr_assert_eq(rec_u(e0, 2), rec_u(b0, 2), "same thread");
	cr_assert_geq(rec_u(e0, 1), rec_u(b1, 1), "an end is not before its begin");
	cr_assert_geq(rec_u(e1, 1), rec_u(e0, 1));
	rtfix_fini(&f);
}

/* Lean timestamps: the end is recorded (the bracket closes) without a clock read. */
Test(launch, lean_timestamps_write_an_untimed_end)
{
	struct rtfix f;
	rtfix_open(&f, LIN_RT_NO_WRITER_THREAD | LIN_RT_LEAN_TIMESTAMPS, NULL);
	lin_scope rs, es;
	rtfix_epoch(&f, &rs, &es);
	lin_launch l;
	cr_assert_eq(lin_launch_begin(f.rt, "k", &l), 0);
	cr_assert_eq(lin_launch_end(f.rt, &l), 0);
	lin_scope_exit(f.rt, &es);
	lin_scope_exit(f.rt, &rs);
	struct trace *t = rtfix_close(&f);
	const msgpack_object *e = trace_nth(t, LIN_REC_LAUNCH_END, 0);
	cr_assert_not_null(e);
	cr_assert(rec_nil(e, 1), "no time under lean timestamps");
	cr_assert_eq(rec_u(e, 3), 1);
	cr_assert(!rec_nil(trace_nth(t, LIN_REC_LAUNCH, 0), 1), "the begin keeps its time");
	rtfix_fini(&f);
}

/* A begin refused for depth opens no bracket: it gets no end, and its record says so. */
Test(launch, a_refused_bracket_has_no_depth_and_no_end)
{
	struct rtfix f;
	rtfix_open(&f, LIN_RT_NO_WRITER_THREAD, NULL);
	lin_scope rs, es;
	rtfix_epoch(&f, &rs, &es);
	lin_launch l[17];
	for (int i = 0; i < 16; i++)
		cr_assert_eq(lin_launch_begin(f.rt, "k", &l[i]), 0);
	cr_assert_eq(lin_launch_begin(f.rt, "k", &l[16]), -LIN_ELAUNCH_DEPTH);
	for (int i = 16; i >= 0; i--)
		cr_assert_eq(lin_launch_end(f.rt, &l[i]), 0);
	lin_scope_exit(f.rt, &es);
	lin_scope_exit(f.rt, &rs);
	struct trace *t = rtfix_close(&f);
	cr_assert_eq(trace_count(t, LIN_REC_LAUNCH), 17);
	cr_assert_eq(trace_count(t, LIN_REC_LAUNCH_END), 16);
	cr_assert(rec_nil(trace_nth(t, LIN_REC_LAUNCH, 16), 9), "the refused one has no depth");
	rtfix_fini(&f);
}

Test(launch, without_an_epoch_is_recorded_and_pushes_nothing)
{
	struct fake_be b = { 0 };
	struct lin_backend_ops ops = fake_ops(&b);
	struct rtfix f;
	rtfix_open(&f, LIN_RT_NO_WRITER_THREAD, &ops);
	lin_scope rs;
	rtfix_request(&f, &rs); /* a request is current, but no epoch */
	lin_launch l;
	cr_assert_eq(lin_launch_begin(f.rt, "k", &l), -LIN_ENOCONTEXT);
	cr_assert_eq(b.pushes, 0);
	cr_assert_eq(lin_launch_end(f.rt, &l), 0, "the bracket still closes");
	cr_assert_eq(b.pops, 0);
	lin_scope_exit(f.rt, &rs);
	struct trace *t = rtfix_close(&f);
	const msgpack_object *r = trace_nth(t, LIN_REC_LAUNCH, 0);
	cr_assert(rec_nil(r, 3) && rec_nil(r, 5), "no epoch, nothing pushed");
	cr_assert_eq(trace_count(t, LIN_REC_MISUSE), 1);
	rtfix_fini(&f);
}

Test(launch, backend_failure_is_reported_not_fatal)
{
	struct fake_be b = { .fail_push = 1 };
	struct lin_backend_ops ops = fake_ops(&b);
	struct rtfix f;
	rtfix_open(&f, LIN_RT_NO_WRITER_THREAD, &ops);
	lin_scope rs, es;
	rtfix_epoch(&f, &rs, &es);
	lin_launch l;
	cr_assert_eq(lin_launch_begin(f.rt, "k", &l), -LIN_EBACKEND);
	cr_assert_eq(lin_launch_end(f.rt, &l), 0, "nothing to pop");
	cr_assert_eq(b.pops, 0);
	lin_scope_exit(f.rt, &es);
	lin_scope_exit(f.rt, &rs);
	struct trace *t = rtfix_close(&f);
	cr_assert(rec_nil(trace_nth(t, LIN_REC_LAUNCH, 0), 5), "ext_id nil: push failed");
	rtfix_fini(&f);
}

Test(launch, end_out_of_order_or_twice_is_refused)
{
	struct rtfix f;
	rtfix_open(&f, LIN_RT_NO_WRITER_THREAD, NULL);
	lin_scope rs, es;
	rtfix_epoch(&f, &rs, &es);
	lin_launch a, b;
	cr_assert_eq(lin_launch_begin(f.rt, "a", &a), 0);
	cr_assert_eq(lin_launch_begin(f.rt, "b", &b), 0);
	cr_assert_eq(lin_launch_end(f.rt, &a), -LIN_ELAUNCH_ORDER);
	cr_assert_eq(lin_launch_end(f.rt, &b), 0);
	cr_assert_eq(lin_launch_end(f.rt, &a), 0);
	cr_assert_eq(lin_launch_end(f.rt, &a), -LIN_ELAUNCH_ORDER, "twice");
	lin_scope_exit(f.rt, &es);
	lin_scope_exit(f.rt, &rs);
	rtfix_fini(&f);
}

struct obs {
	int calls;
	uint64_t epoch;
	const char *name;
	uint32_t tid;
};

static void observer(const struct lin_launch_info *info, void *user)
{
	struct obs *o = user;
	o->calls++;
	o->epoch = info->epoch;
	o->name = info->name;
	o->tid = info->tid;
}

Test(launch, observer_is_told_of_every_launch)
{
	struct obs seen = { 0 };
	lin_runtime *rt;
	struct lin_runtime_opts o = { .sz = sizeof(o), .observer = observer, .observer_user = &seen };
	cr_assert_eq(lin_runtime_create(&o, &rt), 0);
	uint64_t req, ep;
	lin_scope rs, es;
	lin_request_begin(rt, NULL, &req);
	lin_scope_enter(rt, req, &rs);
	lin_epoch_declare(rt, NULL, &ep);
	lin_scope_enter(rt, ep, &es);
	lin_launch l;
	for (int i = 0; i < 3; i++) {
		lin_launch_begin(rt, "gemm", &l);
		lin_launch_end(rt, &l);
	}
	cr_assert_eq(seen.calls, 3);
	cr_assert_eq(seen.epoch, ep);
	cr_assert_str_eq(seen.name, "gemm");
	cr_assert_neq(seen.tid, 0);
	lin_scope_exit(rt, &es);
	lin_scope_exit(rt, &rs);
	lin_runtime_free(rt);
}

Test(launch, cupti_backend_without_a_driver_falls_back_to_host_lineage)
{
	struct membuf m = { 0 };
	lin_runtime *rt;
	struct lin_runtime_opts o = { .sz = sizeof(o),
				      .backend = LIN_BACKEND_CUPTI,
				      .trace_write = membuf_write,
				      .trace_user = &m };
	cr_assert_eq(lin_runtime_create(&o, &rt), 0, "an unusable CUPTI is not an error");
	uint64_t req, ep;
	lin_scope rs, es;
	lin_request_begin(rt, NULL, &req);
	lin_scope_enter(rt, req, &rs);
	lin_epoch_declare(rt, NULL, &ep);
	lin_scope_enter(rt, ep, &es);
	lin_launch l;
	cr_assert_eq(lin_launch_begin(rt, "k", &l), 0);
	cr_assert_eq(l.ext_id, 0, "nothing pushed after a failed probe");
	cr_assert_eq(lin_launch_end(rt, &l), 0);
	lin_scope_exit(rt, &es);
	lin_scope_exit(rt, &rs);
	lin_runtime_free(rt);
	struct trace t;
	cr_assert_eq(trace_load_mem(&t, m.p, m.n), 0);
	const msgpack_object *c = trace_hdr(&t, "cupti");
	cr_assert(c && c->type == MSGPACK_OBJECT_STR, "the header says why CUPTI is not used");
	cr_assert_eq(strncmp(c->via.str.ptr, "unavailable", 11), 0);
	cr_assert_eq(trace_count(&t, LIN_REC_LAUNCH), 1);
	trace_free(&t);
	free(m.p);
}

Test(launch, too_many_open_launches_push_nothing_and_close_cleanly)
{
	struct fake_be b = { 0 };
	struct lin_backend_ops ops = fake_ops(&b);
	struct rtfix f;
	rtfix_open(&f, LIN_RT_NO_WRITER_THREAD, &ops);
	lin_scope rs, es;
	rtfix_epoch(&f, &rs, &es);
	lin_launch l[17];
	for (int i = 0; i < 16; i++)
		cr_assert_eq(lin_launch_begin(f.rt, "k", &l[i]), 0, "launch %d", i);
	cr_assert_eq(b.depth, 16);
	cr_assert_eq(lin_launch_begin(f.rt, "k", &l[16]), -LIN_ELAUNCH_DEPTH);
	cr_assert_eq(b.depth, 16, "the refused launch pushed nothing");
	cr_assert_eq(lin_launch_end(f.rt, &l[16]), 0, "and has nothing to close");
	for (int i = 15; i >= 0; i--)
		cr_assert_eq(lin_launch_end(f.rt, &l[i]), 0);
	cr_assert_eq(b.depth, 0, "every push was popped");
	lin_scope_exit(f.rt, &es);
	lin_scope_exit(f.rt, &rs);
	struct trace *t = rtfix_close(&f);
	const msgpack_object *m = trace_nth(t, LIN_REC_MISUSE, 0);
	cr_assert_not_null(m);
	cr_assert_eq(strncmp(rec_f(m, 3)->via.str.ptr, "launch_depth", 12), 0);
	rtfix_fini(&f);
}

/* Late work: a launch under a version that had ended pushes its epoch with the late bit and
 * says so in its record (docs/trace-format.md, "Late work"); counted in the stats. */
static uint64_t launch_late_field(struct trace *t, size_t k)
{
	const msgpack_object *r = trace_nth(t, LIN_REC_LAUNCH, k);
	cr_assert_not_null(r);
	return rec_u(r, 10);
}

Test(launch, a_launch_in_a_late_scope_pushes_the_late_bit)
{
	struct fake_be b = { 0 };
	struct lin_backend_ops ops = fake_ops(&b);
	struct rtfix f;
	rtfix_open(&f, LIN_RT_NO_WRITER_THREAD, &ops);
	lin_scope rs, es, late;
	uint64_t ep = rtfix_epoch(&f, &rs, &es);
	lin_token tok;
	cr_assert_eq(lin_token_capture(f.rt, &tok), 0);
	cr_assert_eq(lin_scope_exit(f.rt, &es), 0);
	cr_assert_eq(lin_epoch_retire(f.rt, ep), 0);
	cr_assert_eq(lin_token_adopt(f.rt, &tok, &late), 0);
	lin_launch l;
	cr_assert_eq(lin_launch_begin(f.rt, "straggler", &l), 0, "late work is no error");
	cr_assert_eq(b.stack[0], ep | LIN_EXT_LATE_ENDED);
	cr_assert_eq(l.ext_id, ep | LIN_EXT_LATE_ENDED);
	cr_assert_eq(lin_launch_end(f.rt, &l), 0);
	cr_assert_eq(b.depth, 0, "popped");
	cr_assert_eq(lin_scope_exit(f.rt, &late), 0);
	struct lin_runtime_stats st = { .sz = sizeof(st) };
	cr_assert_eq(lin_runtime_get_stats(f.rt, &st), 0);
	cr_assert_eq(st.late_launches, 1);
	cr_assert_eq(st.misuse, 0);
	lin_scope_exit(f.rt, &rs);
	struct trace *t = rtfix_close(&f);
	cr_assert_eq(launch_late_field(t, 0), LIN_LATE_ENDED);
	cr_assert_eq(rec_u(trace_nth(t, LIN_REC_LAUNCH, 0), 5), ep | LIN_EXT_LATE_ENDED,
		     "the record's ext_id is what was pushed");
	rtfix_fini(&f);
}

/* A scope entered while current, its epoch re-issued while it is open: the next launch
 * under it is late (after reissue); one before the reissue is not. */
Test(launch, a_launch_after_its_epoch_was_reissued_is_late)
{
	struct fake_be b = { 0 };
	struct lin_backend_ops ops = fake_ops(&b);
	struct rtfix f;
	rtfix_open(&f, LIN_RT_NO_WRITER_THREAD, &ops);
	lin_scope rs, es;
	uint64_t ep = rtfix_epoch(&f, &rs, &es);
	lin_launch l;
	cr_assert_eq(lin_launch_begin(f.rt, "before", &l), 0);
	cr_assert_eq(b.stack[0], ep, "current: the plain id");
	cr_assert_eq(lin_launch_end(f.rt, &l), 0);
	cr_assert_eq(lin_epoch_reissue(f.rt, ep, LIN_REISSUE_RETRY, NULL), 0);
	cr_assert_eq(lin_launch_begin(f.rt, "after", &l), 0);
	cr_assert_eq(b.stack[0], ep | LIN_EXT_LATE_REISSUED);
	cr_assert_eq(lin_launch_end(f.rt, &l), 0);
	lin_scope_exit(f.rt, &es);
	lin_scope_exit(f.rt, &rs);
	struct trace *t = rtfix_close(&f);
	cr_assert_eq(launch_late_field(t, 0), LIN_LATE_NONE);
	cr_assert_eq(launch_late_field(t, 1), LIN_LATE_REISSUED);
	rtfix_fini(&f);
}
