/* SPDX-License-Identifier: MIT */
/*
 * test_headers.c - traceparent and tracestate grammar, after the rules of the W3C
 * trace-context test suite (test/test.py: version handling, lowercase hex, all-zero ids,
 * ows, tracestate keys and values, 32 members, 512 characters, duplicate keys).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "lineage/w3c.h"

#define TRACE "0af7651916cd43dd8448eb211c80319c"
#define SPAN "b7ad6b7169203331"

static int tp(const char *s)
{
	struct lin_w3c_traceparent t;
	memset(&t, 0x5a, sizeof(t));
	struct lin_w3c_traceparent before = t;
	int err = lin_w3c_traceparent_parse(s, &t);
	if (err)
		cr_assert(!memcmp(&t, &before, sizeof(t)), "output written on error for '%s'", s);
	return err;
}

Test(w3c, traceparent_valid_v00)
{
	struct lin_w3c_traceparent t;
	cr_assert_eq(lin_w3c_traceparent_parse("00-" TRACE "-" SPAN "-01", &t), 0);
	cr_assert_eq(t.version, 0);
	cr_assert_eq(t.trace_id[0], 0x0a);
	cr_assert_eq(t.trace_id[15], 0x9c);
	cr_assert_eq(t.parent_id[0], 0xb7);
	cr_assert_eq(t.parent_id[7], 0x31);
	cr_assert_eq(t.flags, 1);
	cr_assert_eq(tp("00-" TRACE "-" SPAN "-00"), 0);
	cr_assert_eq(tp("00-" TRACE "-" SPAN "-ff"), 0, "unknown flags are kept, not rejected");
}

Test(w3c, traceparent_ows_is_ignored)
{
	cr_assert_eq(tp("  00-" TRACE "-" SPAN "-01"), 0);
	cr_assert_eq(tp("00-" TRACE "-" SPAN "-01\t "), 0);
	cr_assert_eq(tp("00-" TRACE "-" SPAN "-01 x"), -EINVAL);
}

Test(w3c, traceparent_version_ff_invalid) { cr_assert_eq(tp("ff-" TRACE "-" SPAN "-01"), -EINVAL); }

Test(w3c, traceparent_version_not_hex)
{
	cr_assert_eq(tp("0g-" TRACE "-" SPAN "-01"), -EINVAL);
	cr_assert_eq(tp("0A-" TRACE "-" SPAN "-01"), -EINVAL);
	cr_assert_eq(tp("0-" TRACE "-" SPAN "-01"), -EINVAL);
	cr_assert_eq(tp("000-" TRACE "-" SPAN "-01"), -EINVAL);
}

Test(w3c, traceparent_v00_exact_length)
{
	cr_assert_eq(tp("00-" TRACE "-" SPAN "-01-"), -EINVAL);
	cr_assert_eq(tp("00-" TRACE "-" SPAN "-01-what-the-future-will-be-like"), -EINVAL);
	cr_assert_eq(tp("00-" TRACE "-" SPAN "-0"), -EINVAL);
	cr_assert_eq(tp("00-" TRACE "-" SPAN "-001"), -EINVAL);
	cr_assert_eq(tp(""), -EINVAL);
}

Test(w3c, traceparent_future_version_prefix)
{
	struct lin_w3c_traceparent t;
	cr_assert_eq(
		lin_w3c_traceparent_parse("cc-" TRACE "-" SPAN "-01-what-the-future-will-be-like", &t), 0);
	cr_assert_eq(t.version, 0xcc);
	cr_assert_eq(t.flags, 1);
	cr_assert_eq(tp("01-" TRACE "-" SPAN "-01"), 0);
	cr_assert_eq(tp("cc-" TRACE "-" SPAN "-01.what"), -EINVAL, "after 55 chars only '-'");
	cr_assert_eq(tp("cc-" TRACE "-" SPAN "-0"), -EINVAL, "shorter than version 00");
	cr_assert_eq(tp("cc-" TRACE "-" SPAN "-xx-a"), -EINVAL);
}

Test(w3c, traceparent_uppercase_hex_invalid)
{
	cr_assert_eq(tp("00-0AF7651916CD43DD8448EB211C80319C-" SPAN "-01"), -EINVAL);
	cr_assert_eq(tp("00-" TRACE "-B7AD6B7169203331-01"), -EINVAL);
	cr_assert_eq(tp("00-" TRACE "-" SPAN "-0A"), -EINVAL);
}

Test(w3c, traceparent_zero_ids_invalid)
{
	cr_assert_eq(tp("00-00000000000000000000000000000000-" SPAN "-01"), -EINVAL);
	cr_assert_eq(tp("00-" TRACE "-0000000000000000-01"), -EINVAL);
}

Test(w3c, traceparent_bad_separators_and_lengths)
{
	cr_assert_eq(tp("00_" TRACE "-" SPAN "-01"), -EINVAL);
	cr_assert_eq(tp("00-" TRACE "_" SPAN "-01"), -EINVAL);
	cr_assert_eq(tp("00-" TRACE "-" SPAN "_01"), -EINVAL);
	cr_assert_eq(tp("00-0af7651916cd43dd8448eb211c80319-" SPAN "0-01"), -EINVAL);
	cr_assert_eq(tp("00-" TRACE "-b7ad6b716920333-101"), -EINVAL);
	cr_assert_eq(tp("00-" TRACE "-" SPAN "-.1"), -EINVAL);
	cr_assert_eq(lin_w3c_traceparent_parse(NULL, NULL), -EINVAL);
}

Test(w3c, traceparent_format_round_trip)
{
	struct lin_w3c_traceparent t, u;
	cr_assert_eq(lin_w3c_traceparent_parse("7f-" TRACE "-" SPAN "-03-more", &t), 0);
	char buf[LIN_W3C_TRACEPARENT_MAX];
	cr_assert_eq(lin_w3c_traceparent_format(&t, buf, sizeof(buf)), 0);
	cr_assert_str_eq(buf, "00-" TRACE "-" SPAN "-03", "a sender writes version 00");
	cr_assert_eq(lin_w3c_traceparent_parse(buf, &u), 0);
	cr_assert(!memcmp(t.trace_id, u.trace_id, 16) && !memcmp(t.parent_id, u.parent_id, 8));
	cr_assert_eq(lin_w3c_traceparent_format(&t, buf, sizeof(buf) - 1), -ENOSPC);
	memset(t.parent_id, 0, 8);
	cr_assert_eq(lin_w3c_traceparent_format(&t, buf, sizeof(buf)), -EINVAL);
}

/* ---------------------------------------------------------------- tracestate */

static int ts(const char *s) { return lin_w3c_tracestate_find(s, "lin", NULL, 0); }

Test(w3c, tracestate_find_value)
{
	char v[64];
	cr_assert_eq(lin_w3c_tracestate_find("foo=1, lin=abc def ,bar@baz=2", "lin", v, sizeof(v)), 1);
	cr_assert_str_eq(v, "abc def");
	cr_assert_eq(lin_w3c_tracestate_find("foo=1,bar@baz=x", "bar@baz", v, sizeof(v)), 1);
	cr_assert_str_eq(v, "x");
	cr_assert_eq(lin_w3c_tracestate_find("foo=1", "lin", v, sizeof(v)), 0);
	cr_assert_eq(lin_w3c_tracestate_find("lin=123456", "lin", v, 4), -ENOSPC);
	cr_assert_eq(ts(NULL), 0);
	cr_assert_eq(ts(""), 0);
}

Test(w3c, tracestate_empty_members_allowed)
{
	cr_assert_eq(ts("foo=1,,  ,\t,lin=2"), 1);
	cr_assert_eq(ts(" , "), 0);
}

Test(w3c, tracestate_key_grammar)
{
	cr_assert_eq(ts("a-b_c*d/e9=1"), 0);
	cr_assert_eq(ts("0abc=1"), -EINVAL, "simple key starts with lcalpha");
	cr_assert_eq(ts("Foo=1"), -EINVAL, "uppercase key");
	cr_assert_eq(ts("foo.bar=1"), -EINVAL);
	cr_assert_eq(ts("=1"), -EINVAL);
	cr_assert_eq(ts("foo"), -EINVAL, "no '='");
	cr_assert_eq(ts("0tenant@vendor=1"), 0, "tenant may start with a digit");
	cr_assert_eq(ts("tenant@0vendor=1"), -EINVAL, "system-id starts with lcalpha");
	cr_assert_eq(ts("tenant@=1"), -EINVAL);
	cr_assert_eq(ts("@vendor=1"), -EINVAL);
	cr_assert_eq(ts("t@v@w=1"), -EINVAL);
	cr_assert_eq(ts("tenant@abcdefghijklmn=1"), 0, "14-char system-id");
	cr_assert_eq(ts("tenant@abcdefghijklmno=1"), -EINVAL, "15-char system-id");
	char k[300];
	memset(k, 'a', 256);
	strcpy(k + 256, "=1");
	cr_assert_eq(ts(k), 0, "256-char key");
	memset(k, 'a', 257);
	strcpy(k + 257, "=1");
	cr_assert_eq(ts(k), -EINVAL, "257-char key");
	memset(k, 'a', 242);
	strcpy(k + 242, "@v=1");
	cr_assert_eq(ts(k), -EINVAL, "242-char tenant-id");
	memset(k, 'a', 241);
	strcpy(k + 241, "@v=1");
	cr_assert_eq(ts(k), 0, "241-char tenant-id");
}

Test(w3c, tracestate_value_grammar)
{
	cr_assert_eq(ts("foo=a b"), 0);
	cr_assert_eq(ts("foo=a b "), 0, "trailing space is OWS");
	cr_assert_eq(ts("foo="), -EINVAL, "empty value");
	cr_assert_eq(ts("foo=a=b"), -EINVAL);
	cr_assert_eq(ts("foo=\x7f"), -EINVAL);
	cr_assert_eq(ts("foo=\x01"), -EINVAL);
	char v[300] = "foo=";
	memset(v + 4, 'x', 256);
	v[260] = 0;
	cr_assert_eq(ts(v), 0, "256-char value");
	v[260] = 'x';
	v[261] = 0;
	cr_assert_eq(ts(v), -EINVAL, "257-char value");
}

Test(w3c, tracestate_duplicate_key_invalid)
{
	cr_assert_eq(ts("foo=1,foo=2"), -EINVAL);
	cr_assert_eq(ts("lin=1, bar=2 ,lin=3"), -EINVAL);
}

static void members(char *buf, int n, const char *prefix)
{
	buf[0] = 0;
	for (int i = 0; i < n; i++)
		sprintf(buf + strlen(buf), "%s%s%d=%d", i ? "," : "", prefix, i, i);
}

Test(w3c, tracestate_member_limit)
{
	char buf[1024];
	members(buf, 32, "k");
	cr_assert_eq(ts(buf), 0, "32 members");
	members(buf, 33, "k");
	cr_assert_eq(ts(buf), -EINVAL, "33 members");
}

Test(w3c, tracestate_length_limit)
{
	char buf[700];
	strcpy(buf, "a=");
	memset(buf + 2, 'v', 251);
	strcpy(buf + 253, ",b=");
	memset(buf + 256, 'v', 256);
	buf[511] = 0; /* 511 characters */
	cr_assert_eq(ts(buf), 0);
	buf[511] = 'v';
	buf[512] = 0; /* 512 */
	cr_assert_eq(ts(buf), 0);
	strcat(buf, ",c=1"); /* 516 */
	cr_assert_eq(ts(buf), -EINVAL);
}

Test(w3c, tracestate_put_moves_key_left)
{
	char out[LIN_W3C_TRACESTATE_MAX];
	cr_assert_eq(lin_w3c_tracestate_put("foo=1, lin=old ,,bar=2", "lin", "new", out, sizeof(out)), 0);
	cr_assert_str_eq(out, "lin=new,foo=1,bar=2");
	cr_assert_eq(lin_w3c_tracestate_put(NULL, "lin", "x", out, sizeof(out)), 0);
	cr_assert_str_eq(out, "lin=x");
	cr_assert_eq(lin_w3c_tracestate_put("foo", "lin", "x", out, sizeof(out)), -EINVAL);
	cr_assert_eq(lin_w3c_tracestate_put("", "Lin", "x", out, sizeof(out)), -EINVAL);
	cr_assert_eq(lin_w3c_tracestate_put("", "lin", "a,b", out, sizeof(out)), -EINVAL);
	cr_assert_eq(lin_w3c_tracestate_put("foo=1", "lin", "x", out, 8), -ENOSPC);
}

Test(w3c, tracestate_put_drops_from_the_right)
{
	char in[1024], out[LIN_W3C_TRACESTATE_MAX];
	members(in, 32, "k");
	cr_assert_eq(lin_w3c_tracestate_put(in, "lin", "x", out, sizeof(out)), 0);
	cr_assert_eq(ts(out), 1);
	cr_assert(strstr(out, "k30=30") && !strstr(out, "k31=31"), "%s", out);
	/* length: two long members; the second no longer fits */
	strcpy(in, "a=");
	memset(in + 2, 'v', 250);
	strcpy(in + 252, ",b=");
	memset(in + 255, 'v', 250);
	in[505] = 0;
	cr_assert_eq(lin_w3c_tracestate_put(in, "lin", "0123456789", out, sizeof(out)), 0);
	cr_assert(strlen(out) <= 512);
	cr_assert_eq(lin_w3c_tracestate_find(out, "a", NULL, 0), 1);
	cr_assert_eq(lin_w3c_tracestate_find(out, "b", NULL, 0), 0);
}
