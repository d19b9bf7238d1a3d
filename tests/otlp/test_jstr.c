/* SPDX-License-Identifier: MIT */
/*
 * test_jstr.c - the OTLP/JSON string writer (trace/otlp_emit.c, shared by the exporter
 * and the runtime's stream): well-formed UTF-8 passes, each maximal ill-formed subpart
 * becomes one U+FFFD, controls are escaped.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "otlp_emit.h"
#include "lin_test.h"

/* @in (@n bytes) as lin_oj_str writes it, without the quotes, compared with @want. */
static void check(const char *in, size_t n, const char *want)
{
	struct lin_oj w;
	lin_oj_init(&w, NULL, NULL, "test", NULL, NULL);
	lin_oj_str(&w, in, n);
	cr_assert_eq(w.err, 0);
	const char *buf = w.buf;
	size_t len = w.len;
	cr_assert(len >= 2 && buf[0] == '"' && buf[len - 1] == '"', "not quoted: %.*s", (int)len, buf);
	cr_assert(len - 2 == strlen(want) && !memcmp(buf + 1, want, len - 2),
		  "got %.*s, want \"%s\"", (int)len, buf, want);
	lin_oj_free(&w);
}

#define CHECK(lit, want) check(lit, sizeof(lit) - 1, want)

Test(otlp_jstr, ascii_and_escapes)
{
	CHECK("", "");
	CHECK("vector_add", "vector_add");
	CHECK("a\"b\\c/d", "a\\\"b\\\\c/d");
	CHECK("\x01\t\n\x1f\x7f", "\\u0001\\u0009\\u000a\\u001f\x7f");
	check("a\0b", 3, "a\\u0000b");
}

Test(otlp_jstr, valid_utf8_passes)
{
	CHECK("\xc2\x80", "\xc2\x80");                                 /* U+0080 */
	CHECK("caf\xc3\xa9", "caf\xc3\xa9");                           /* 2 bytes: é */
	CHECK("\xdf\xbf", "\xdf\xbf");                                 /* U+07FF */
	CHECK("\xe0\xa0\x80", "\xe0\xa0\x80");                         /* U+0800 */
	CHECK("\xe2\x82\xac", "\xe2\x82\xac");                         /* 3 bytes: € */
	CHECK("\xed\x9f\xbf", "\xed\x9f\xbf");                         /* U+D7FF */
	CHECK("\xee\x80\x80", "\xee\x80\x80");                         /* U+E000 */
	CHECK("\xe2\x80\xa8\xe2\x80\xa9", "\xe2\x80\xa8\xe2\x80\xa9"); /* U+2028, U+2029 */
	CHECK("\xef\xbf\xbf", "\xef\xbf\xbf");                         /* U+FFFF */
	CHECK("\xf0\x90\x80\x80", "\xf0\x90\x80\x80");                 /* U+10000 */
	CHECK("\xf0\x9f\x9a\x80", "\xf0\x9f\x9a\x80");                 /* 4 bytes: U+1F680 */
	CHECK("\xf4\x8f\xbf\xbf", "\xf4\x8f\xbf\xbf");                 /* U+10FFFF */
	CHECK("gemm \xe8\xa1\x8c\xe5\x88\x97", "gemm \xe8\xa1\x8c\xe5\x88\x97");
}

Test(otlp_jstr, invalid_lead_bytes)
{
	CHECK("a\x80z", "a\\ufffdz"); /* lone continuation */
	CHECK("\xbf", "\\ufffd");
	CHECK("\xf5\x80\x80\x80", "\\ufffd\\ufffd\\ufffd\\ufffd"); /* F5..FF never lead */
	CHECK("\xff", "\\ufffd");
	CHECK("\xfe\xff", "\\ufffd\\ufffd");
}

Test(otlp_jstr, truncated_sequences)
{
	CHECK("\xc3", "\\ufffd");     /* at the end */
	CHECK("\xe2\x82", "\\ufffd"); /* one U+FFFD for the prefix */
	CHECK("\xf0\x9f\x9a", "\\ufffd");
	CHECK("\xe2\x82z", "\\ufffdz");                           /* cut by an ASCII byte */
	CHECK("\xf0\x9f\x9a\xe2\x82\xac", "\\ufffd\xe2\x82\xac"); /* ... by a valid sequence */
	CHECK("\xc3\xc3\xa9", "\\ufffd\xc3\xa9");
}

Test(otlp_jstr, overlongs_surrogates_and_above_10ffff)
{
	CHECK("\xc0\x80", "\\ufffd\\ufffd"); /* overlong U+0000 */
	CHECK("\xc1\xbf", "\\ufffd\\ufffd");
	CHECK("\xe0\x80\xaf", "\\ufffd\\ufffd\\ufffd"); /* overlong '/' */
	CHECK("\xf0\x80\x80\xaf", "\\ufffd\\ufffd\\ufffd\\ufffd");
	CHECK("\xed\xa0\x80", "\\ufffd\\ufffd\\ufffd");            /* U+D800 */
	CHECK("\xed\xbf\xbf", "\\ufffd\\ufffd\\ufffd");            /* U+DFFF */
	CHECK("\xf4\x90\x80\x80", "\\ufffd\\ufffd\\ufffd\\ufffd"); /* U+110000 */
	/* the Unicode standard's own example (Table 3-8): 61 F1 80 80 E1 80 C2 62 80 63 80 BF 64 */
	CHECK("\x61\xf1\x80\x80\xe1\x80\xc2\x62\x80\x63\x80\xbf\x64",
	      "a\\ufffd\\ufffd\\ufffdb\\ufffdc\\ufffd\\ufffdd");
}
