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

struct env {
	lin_runtime *rt;
	uint64_t req, epoch;
	lin_token tok;
};

static void env_open(struct env *e)
{
	memset(e, 0, sizeof(*e));
	struct lin_runtime_opts o = {.sz = sizeof(o), .flags = LIN_RT_NO_WRITER_THREAD};
	cr_assert_eq(lin_runtime_create(&o, &e->rt), 0);
	cr_assert_eq(lin_request_begin(e->rt, NULL, &e->req), 0);
	struct lin_epoch_opts eo = {.sz = sizeof(eo), .requests = &e->req, .n_requests = 1};
	cr_assert_eq(lin_epoch_declare(e->rt, &eo, &e->epoch), 0);
	cr_assert_eq(lin_token_for(e->rt, e->epoch, &e->tok), 0);
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
	cr_assert_eq(lin_current(e.rt, NULL, &cur, NULL), 0);
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
	cr_assert_eq(lin_current(e.rt, NULL, NULL, NULL), -LIN_ENOCONTEXT, "nothing adopted");
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
				     "congo=t61rcWkgMzE", &in), 0);
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

Test(w3c_tokens, request_begin_keeps_remote_context)
{
	char path[] = "/tmp/lin-w3c-XXXXXX";
	int fd = mkstemp(path);
	cr_assert(fd >= 0);
	close(fd);
	struct lin_runtime_opts o = {.sz = sizeof(o), .trace_path = path};
	lin_runtime *rt;
	cr_assert_eq(lin_runtime_create(&o, &rt), 0);
	struct lin_w3c_context c;
	const char *tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
	cr_assert_eq(lin_w3c_extract(tp, NULL, &c), 0);
	struct lin_request_opts ro = {.sz = sizeof(ro), .name = "infer"};
	uint64_t id;
	cr_assert_eq(lin_w3c_request_begin(rt, &c, &ro, &id), 0);
	cr_assert_eq(lin_request_end(rt, id), 0);
	char big[300];
	memset(big, 'n', 250);
	big[250] = 0;
	ro.name = big;
	cr_assert_eq(lin_w3c_request_begin(rt, &c, &ro, &id), -EINVAL);
	lin_runtime_free(rt);
	/* the name, with the traceparent, is in the trace as a string record */
	FILE *f = fopen(path, "rb");
	cr_assert(f);
	static char buf[1 << 16];
	size_t n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	unlink(path);
	const char *want = "w3c:00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01 infer";
	cr_assert(memmem(buf, n, want, strlen(want)), "request name with traceparent not written");
}
