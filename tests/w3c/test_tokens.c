/* SPDX-License-Identifier: MIT */
/*
 * test_tokens.c - a token through traceparent + tracestate and back: trace ids, the lin
 * member, rejection of tampered or foreign headers, adoption in the issuing runtime and
 * refusal in another.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "lineage/w3c.h"
#include "lineage/trace_format.h"
#include "trace_read.h"

struct env {
	lin_runtime *rt;
	uint64_t req, epoch;
	lin_token tok;
};

static void env_open(struct env *e)
{
	memset(e, 0, sizeof(*e));
	struct lin_runtime_opts o = { .sz = sizeof(o), .flags = LIN_RT_NO_WRITER_THREAD };
	cr_assert_eq(lin_runtime_create(&o, &e->rt), 0);
	cr_assert_eq(lin_request_begin(e->rt, NULL, &e->req), 0);
	struct lin_epoch_opts eo = { .sz = sizeof(eo), .requests = &e->req, .n_requests = 1 };
	cr_assert_eq(lin_epoch_declare(e->rt, &eo, &e->epoch), 0);
	cr_assert_eq(lin_token_make(e->rt, e->epoch, &e->tok), 0);
}

static uint64_t my_key(void)
{
	char host[256];
	cr_assert_eq(gethostname(host, sizeof(host)), 0);
	host[255] = 0;
	return lin_w3c_proc_key(host, (uint64_t)getpid());
}

Test(w3c_tokens, inject_derives_trace_and_parent)
{
	struct env e;
	env_open(&e);
	struct lin_w3c_headers h;
	cr_assert_eq(lin_w3c_inject(e.rt, &e.tok, NULL, NULL, LIN_W3C_FLAG_SAMPLED, &h), 0);
	struct lin_w3c_traceparent tp;
	cr_assert_eq(lin_w3c_traceparent_parse(h.traceparent, &tp), 0);
	uint8_t want[16];
	lin_w3c_trace_id(my_key(), e.req, want);
	cr_assert(!memcmp(tp.trace_id, want, 16), "trace id = (process key, request)");
	cr_assert_eq(lin_w3c_get64(tp.parent_id), lin_w3c_span_id(my_key(), e.epoch));
	cr_assert_eq(tp.flags, 1);
	cr_assert_eq(strncmp(h.tracestate, "lin=1.", 6), 0, "%s", h.tracestate);
	lin_runtime_free(e.rt);
}

Test(w3c_tokens, round_trip_and_adopt_in_same_runtime)
{
	struct env e;
	env_open(&e);
	struct lin_w3c_headers h;
	cr_assert_eq(lin_w3c_inject(e.rt, &e.tok, NULL, "vendor=x", 1, &h), 0);
	cr_assert(strstr(h.tracestate, ",vendor=x"), "other members are carried: %s", h.tracestate);
	struct lin_w3c_context c;
	cr_assert_eq(lin_w3c_extract(h.traceparent, h.tracestate, &c), 0);
	cr_assert_eq(c.has_token, 1);
	cr_assert_eq(c.token.id, e.tok.id);
	cr_assert_eq(c.token.version, e.tok.version);
	cr_assert_eq(c.token.slot, e.tok.slot);
	cr_assert_eq(c.token.rt, e.tok.rt);
	cr_assert_eq(c.token.kind, LIN_TARGET_EPOCH);
	cr_assert_eq(c.token.tag, e.tok.tag);
	lin_scope s;
	cr_assert_eq(lin_w3c_adopt(e.rt, &c, &s), 0, "issued by this process: adopted");
	uint64_t cur;
	cr_assert_eq(lin_scope_current(e.rt, NULL, &cur, NULL), 0);
	cr_assert_eq(cur, e.epoch);
	cr_assert_eq(lin_scope_exit(e.rt, &s), 0);
	lin_runtime_free(e.rt);
}

/* Work that comes back through an RPC loop after its epoch retired is late work: adopted
 * late (the parent-id proves it is this process's), its launches late; the same token's
 * text form, given to lin_token_adopt, is refused (it could come from anywhere). */
Test(w3c_tokens, a_late_round_trip_is_adopted_late)
{
	struct env e;
	env_open(&e);
	struct lin_w3c_headers h;
	cr_assert_eq(lin_w3c_inject(e.rt, &e.tok, NULL, NULL, 1, &h), 0);
	cr_assert_eq(lin_epoch_retire(e.rt, e.epoch), 0);
	struct lin_w3c_context c;
	cr_assert_eq(lin_w3c_extract(h.traceparent, h.tracestate, &c), 0);
	lin_scope s;
	cr_assert_eq(lin_token_adopt(e.rt, &c.token, &s), -LIN_ESTALE_TOKEN,
		     "a text token whose version ended: refused");
	cr_assert_eq(lin_w3c_adopt(e.rt, &c, &s), 0, "this process's: adopted late");
	struct lin_runtime_stats st = { .sz = sizeof(st) };
	cr_assert_eq(lin_runtime_get_stats(e.rt, &st), 0);
	cr_assert_eq(st.late_adopts, 1);
	uint64_t cur;
	cr_assert_eq(lin_scope_current(e.rt, NULL, &cur, NULL), 0);
	cr_assert_eq(cur, e.epoch);
	cr_assert_eq(lin_scope_exit(e.rt, &s), 0);
	lin_runtime_free(e.rt);
}

Test(w3c_tokens, token_from_other_runtime_is_foreign_at_adopt)
{
	struct env a, b;
	env_open(&a);
	env_open(&b);
	struct lin_w3c_headers h;
	cr_assert_eq(lin_w3c_inject(a.rt, &a.tok, NULL, NULL, 1, &h), 0);
	struct lin_w3c_context c;
	cr_assert_eq(lin_w3c_extract(h.traceparent, h.tracestate, &c), 0);
	lin_scope s;
	if (c.token.rt != b.tok.rt)
		cr_assert_eq(lin_token_adopt(b.rt, &c.token, &s), -LIN_EFOREIGN);
	lin_runtime_free(a.rt);
	lin_runtime_free(b.rt);
}

Test(w3c_tokens, adopt_refuses_other_issuer)
{
	struct env e;
	env_open(&e);
	struct lin_w3c_headers h;
	cr_assert_eq(lin_w3c_inject(e.rt, &e.tok, NULL, NULL, 1, &h), 0);
	struct lin_w3c_context c;
	cr_assert_eq(lin_w3c_extract(h.traceparent, h.tracestate, &c), 0);
	c.tp.parent_id[7] ^= 1; /* another issuer (or an intermediary's span) */
	lin_scope s;
	cr_assert_eq(lin_w3c_adopt(e.rt, &c, &s), -LIN_EFOREIGN);
	cr_assert_eq(lin_scope_current(e.rt, NULL, NULL, NULL), -LIN_ENOCONTEXT, "nothing adopted");
	c.has_token = 0;
	cr_assert_eq(lin_w3c_adopt(e.rt, &c, &s), -LIN_ENOCONTEXT);
	lin_runtime_free(e.rt);
}

Test(w3c_tokens, incoming_trace_id_is_kept)
{
	struct env e;
	env_open(&e);
	struct lin_w3c_context in;
	cr_assert_eq(lin_w3c_extract("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00",
				     "congo=t61rcWkgMzE", &in),
		     0);
	cr_assert_eq(in.has_token, 0, "a peer without lineage still gives a trace id");
	struct lin_w3c_headers h;
	cr_assert_eq(lin_w3c_inject(e.rt, &e.tok, &in, "congo=t61rcWkgMzE", 1, &h), 0);
	cr_assert_eq(strncmp(h.traceparent, "00-4bf92f3577b34da6a3ce929d0e0e4736-", 36), 0);
	cr_assert_str_eq(h.traceparent + 52, "-00", "received flags are sent on");
	cr_assert(strstr(h.tracestate, ",congo=t61rcWkgMzE"));
	lin_runtime_free(e.rt);
}

static void headers(struct env *e, struct lin_w3c_headers *h)
{
	env_open(e);
	cr_assert_eq(lin_w3c_inject(e->rt, &e->tok, NULL, NULL, 1, h), 0);
}

static void expect_reject(const char *tp, const char *ts, int want)
{
	struct lin_w3c_context c;
	memset(&c, 0x77, sizeof(c));
	struct lin_w3c_context before = c;
	cr_assert_eq(lin_w3c_extract(tp, ts, &c), want, "tp=%s ts=%s", tp, ts);
	cr_assert(!memcmp(&c, &before, sizeof(c)), "half-adopted on error");
}

Test(w3c_tokens, tampered_tag_rejected)
{
	struct env e;
	struct lin_w3c_headers h;
	headers(&e, &h);
	/* the token's integrity tag is the 8 hex digits before the bind field */
	char *bind = strrchr(h.tracestate, '.');
	bind[-1] = bind[-1] == '0' ? '1' : '0';
	expect_reject(h.traceparent, h.tracestate, -LIN_EBADTOKEN);
	lin_runtime_free(e.rt);
}

Test(w3c_tokens, tampered_version_rejected)
{
	struct env e;
	struct lin_w3c_headers h;
	headers(&e, &h);
	char ts[LIN_W3C_TRACESTATE_MAX];
	/* lin=1.<id16>.<version>. : version 1 -> 2 */
	strcpy(ts, h.tracestate);
	char *v = ts + strlen("lin=1.") + 17;
	cr_assert_eq(*v, '1');
	*v = '2';
	expect_reject(h.traceparent, ts, -LIN_EBADTOKEN);
	lin_runtime_free(e.rt);
}

Test(w3c_tokens, lin_member_for_other_trace_is_foreign)
{
	struct env e;
	struct lin_w3c_headers h;
	headers(&e, &h);
	char tp[LIN_W3C_TRACEPARENT_MAX];
	strcpy(tp, h.traceparent);
	tp[10] = tp[10] == 'a' ? 'b' : 'a'; /* another trace id, same lin member */
	expect_reject(tp, h.tracestate, -LIN_EFOREIGN);
	lin_runtime_free(e.rt);
}

Test(w3c_tokens, malformed_headers_rejected)
{
	struct env e;
	struct lin_w3c_headers h;
	headers(&e, &h);
	expect_reject("00-xyz", h.tracestate, -EINVAL);
	expect_reject("ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", NULL, -EINVAL);
	char ts[LIN_W3C_TRACESTATE_MAX * 2];
	snprintf(ts, sizeof(ts), "%s,lin=1.2", h.tracestate);
	expect_reject(h.traceparent, ts, -EINVAL); /* duplicate lin key */
	snprintf(ts, sizeof(ts), "%s,Bad=1", h.tracestate);
	expect_reject(h.traceparent, ts, -EINVAL);
	expect_reject(h.traceparent, "lin=2.0000000000000001.1.1.1.2.00000000.00000000", -EINVAL);
	expect_reject(h.traceparent, "lin=1.zz", -EINVAL);
	expect_reject(h.traceparent, "lin=1.", -EINVAL);
	expect_reject(h.traceparent, "lin=1.0000000000000001.1.1.1.2.0000000.00000000", -EINVAL);
	char lng[LIN_W3C_TRACESTATE_MAX + 10];
	snprintf(lng, sizeof(lng), "lin=1.%0200d", 1);
	expect_reject(h.traceparent, lng, -EINVAL);
	expect_reject(NULL, h.tracestate, -EINVAL);
	lin_runtime_free(e.rt);
}

Test(w3c_tokens, request_begin_writes_request_link)
{
	struct membuf mb = { 0 };
	struct lin_runtime_opts o = { .sz = sizeof(o), .trace_write = membuf_write, .trace_user = &mb };
	lin_runtime *rt;
	cr_assert_eq(lin_runtime_create(&o, &rt), 0);
	/* a sender's headers, with a lin member */
	struct env e;
	env_open(&e);
	struct lin_w3c_headers h;
	cr_assert_eq(lin_w3c_inject(e.rt, &e.tok, NULL, NULL, LIN_W3C_FLAG_SAMPLED, &h), 0);
	struct lin_w3c_context c, plain;
	cr_assert_eq(lin_w3c_extract(h.traceparent, h.tracestate, &c), 0);
	cr_assert(c.has_token);
	const char *tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00";
	cr_assert_eq(lin_w3c_extract(tp, NULL, &plain), 0);

	struct lin_request_opts ro = { .sz = sizeof(ro), .name = "infer" };
	uint64_t id1, id2, id3;
	cr_assert_eq(lin_w3c_request_begin(rt, &c, &ro, &id1), 0);
	char big[300]; /* names are no longer limited by a prefix */
	memset(big, 'n', 250);
	big[250] = 0;
	ro.name = big;
	cr_assert_eq(lin_w3c_request_begin(rt, &plain, &ro, &id2), 0);
	/* the same through lin_request_begin's remote option */
	struct lin_request_opts r3 = { .sz = sizeof(r3), .remote = &plain };
	cr_assert_eq(lin_request_begin(rt, &r3, &id3), 0);
	/* an all-zero trace id is refused, nothing is begun */
	struct lin_w3c_context zero = plain;
	memset(zero.tp.trace_id, 0, sizeof(zero.tp.trace_id));
	r3.remote = &zero;
	uint64_t none = 0;
	cr_assert_eq(lin_request_begin(rt, &r3, &none), -EINVAL);
	cr_assert_eq(none, 0);
	cr_assert_eq(lin_request_end(rt, id1), 0);
	lin_runtime_free(rt);
	lin_runtime_free(e.rt);

	struct trace t;
	cr_assert_eq(trace_load_mem(&t, mb.p, mb.n), 0);
	free(mb.p);
	const msgpack_object *ver = trace_hdr(&t, "version");
	cr_assert(ver && ver->via.array.size == 2);
	cr_assert_eq(ver->via.array.ptr[1].via.u64, LIN_TRACE_FORMAT_MINOR);
	cr_assert_eq(trace_count(&t, LIN_REC_REQUEST_LINK), 3);
	const msgpack_object *l = trace_nth(&t, LIN_REC_REQUEST_LINK, 0);
	cr_assert_eq(l->via.array.size, 1 + LIN_REC_NFIELDS_REQUEST_LINK);
	cr_assert_eq(rec_u(l, 3), id1);
	cr_assert_eq(rec_u(l, 4), lin_w3c_get64(c.tp.trace_id));
	cr_assert_eq(rec_u(l, 5), lin_w3c_get64(c.tp.trace_id + 8));
	cr_assert_eq(rec_u(l, 6), lin_w3c_get64(c.tp.parent_id));
	cr_assert_eq(rec_u(l, 7), LIN_W3C_FLAG_SAMPLED);
	/* the lin value is the received one: it parses back to the sender's token */
	const msgpack_object *lv = rec_f(l, 8);
	cr_assert_eq(lv->type, MSGPACK_OBJECT_STR);
	char val[LIN_W3C_LIN_VALUE_MAX];
	cr_assert_lt(lv->via.str.size, sizeof(val));
	memcpy(val, lv->via.str.ptr, lv->via.str.size);
	val[lv->via.str.size] = 0;
	lin_token back;
	cr_assert_eq(lin_w3c_lin_parse(val, c.tp.trace_id, &back), 0);
	cr_assert_eq(back.id, e.epoch);
	/* the record follows its request_begin; the name is the application's own */
	size_t at_begin = SIZE_MAX, at_link = SIZE_MAX;
	for (size_t i = 0; i < t.n; i++) {
		if (rec_type(&t.rec[i]) == LIN_REC_REQUEST_BEGIN && rec_u(&t.rec[i], 3) == id1)
			at_begin = i;
		if (&t.rec[i] == l)
			at_link = i;
	}
	cr_assert_lt(at_begin, at_link);
	char name[64];
	cr_assert_str_eq(trace_string(&t, rec_u(&t.rec[at_begin], 5), name, sizeof(name)), "infer");
	/* without a lin member the field is nil; flags are passed on as received */
	const msgpack_object *l2 = trace_nth(&t, LIN_REC_REQUEST_LINK, 1);
	cr_assert_eq(rec_u(l2, 3), id2);
	cr_assert_eq(rec_u(l2, 4), 0x4bf92f3577b34da6ull);
	cr_assert_eq(rec_u(l2, 5), 0xa3ce929d0e0e4736ull);
	cr_assert_eq(rec_u(l2, 6), 0x00f067aa0ba902b7ull);
	cr_assert_eq(rec_u(l2, 7), 0);
	cr_assert(rec_nil(l2, 8));
	cr_assert_eq(rec_u(trace_nth(&t, LIN_REC_REQUEST_LINK, 2), 3), id3);
	trace_free(&t);
}
