/* SPDX-License-Identifier: MIT */
/*
 * w3c.c - lineage tokens as W3C Trace Context headers (traceparent, tracestate lin=...).
 *
 * Parsers follow https://www.w3.org/TR/trace-context/ (header grammar, limits, and the
 * rule that a version after 00 is read by the version-00 layout). Everything here uses the runtime's public API only, so
 * the token's tag is checked by lin_token_parse and nothing depends on runtime internals.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "lineage/trace_format.h"
#include "lineage/w3c.h"
#include "opts.h"
#include "rt_internal.h"
#include "w3c_lin.h"

static void hex_put(char *p, const uint8_t *in, size_t n)
{
	static const char digits[] = "0123456789abcdef";
	for (size_t i = 0; i < n; i++) {
		p[2 * i] = digits[in[i] >> 4];
		p[2 * i + 1] = digits[in[i] & 15];
	}
}

static int all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return 0;
	return 1;
}

static int is_ows(char c) { return c == ' ' || c == '\t'; }

LIN_API int lin_w3c_traceparent_parse(const char *s, struct lin_w3c_traceparent *out)
{
	if (!s || !out)
		return -EINVAL;
	while (is_ows(*s))
		s++;
	size_t n = strlen(s);
	while (n && is_ows(s[n - 1]))
		n--;
	struct lin_w3c_traceparent tp;
	if (n < 55 || lin_w3c_hex_bytes(s, &tp.version, 1) || tp.version == 0xff)
		return -EINVAL;
	if (tp.version == 0 ? n != 55 : (n > 55 && s[55] != '-'))
		return -EINVAL;
	if (s[2] != '-' || s[35] != '-' || s[52] != '-')
		return -EINVAL;
	if (lin_w3c_hex_bytes(s + 3, tp.trace_id, 16) ||
	    lin_w3c_hex_bytes(s + 36, tp.parent_id, 8) || lin_w3c_hex_bytes(s + 53, &tp.flags, 1))
		return -EINVAL;
	if (all_zero(tp.trace_id, 16) || all_zero(tp.parent_id, 8))
		return -EINVAL;
	*out = tp;
	return 0;
}

LIN_API int lin_w3c_traceparent_format(const struct lin_w3c_traceparent *tp, char *buf, size_t len)
{
	if (!tp || !buf)
		return -EINVAL;
	if (len < LIN_W3C_TRACEPARENT_MAX)
		return -ENOSPC;
	if (all_zero(tp->trace_id, 16) || all_zero(tp->parent_id, 8))
		return -EINVAL;
	memcpy(buf, "00-", 3);
	hex_put(buf + 3, tp->trace_id, 16);
	buf[35] = '-';
	hex_put(buf + 36, tp->parent_id, 8);
	buf[52] = '-';
	hex_put(buf + 53, &tp->flags, 1);
	buf[55] = 0;
	return 0;
}

/* ---------------------------------------------------------------- tracestate */

static int key_chr(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
	       c == '*' || c == '/';
}

/* simple-key, or tenant-id "@" system-id. */
static int key_valid(const char *k, size_t n)
{
	const char *at = memchr(k, '@', n);
	if (!at) {
		if (n < 1 || n > 256 || !(k[0] >= 'a' && k[0] <= 'z'))
			return 0;
		for (size_t i = 1; i < n; i++)
			if (!key_chr(k[i]))
				return 0;
		return 1;
	}
	size_t tn = (size_t)(at - k), sn = n - tn - 1;
	if (tn < 1 || tn > 241 || sn < 1 || sn > 14)
		return 0;
	if (!((k[0] >= 'a' && k[0] <= 'z') || (k[0] >= '0' && k[0] <= '9')))
		return 0;
	for (size_t i = 1; i < tn; i++)
		if (!key_chr(k[i]))
			return 0;
	if (!(at[1] >= 'a' && at[1] <= 'z'))
		return 0;
	for (size_t i = 2; i <= sn; i++)
		if (!key_chr(at[i]))
			return 0;
	return 1;
}

/* 1..256 characters of 0x20..0x7e except ',' and '=', not ending in a space. */
static int value_valid(const char *v, size_t n)
{
	if (n < 1 || n > 256 || v[n - 1] == ' ')
		return 0;
	for (size_t i = 0; i < n; i++)
		if (v[i] < 0x20 || v[i] > 0x7e || v[i] == ',' || v[i] == '=')
			return 0;
	return 1;
}

struct ts_member {
	const char *key, *val;
	size_t klen, vlen;
};

/* Split and check a whole tracestate. Return the member count, or -EINVAL. */
static int ts_split(const char *ts, struct ts_member *m)
{
	size_t total = ts ? strlen(ts) : 0;
	if (total > LIN_W3C_TRACESTATE_MAX - 1)
		return -EINVAL;
	int n = 0;
	const char *p = ts, *end = ts + total;
	while (p && p <= end) {
		const char *comma = memchr(p, ',', (size_t)(end - p));
		const char *e = comma ? comma : end;
		const char *b = p;
		while (b < e && is_ows(*b))
			b++;
		const char *t = e;
		while (t > b && is_ows(t[-1]))
			t--;
		if (t > b) { /* a non-empty member */
			const char *eq = memchr(b, '=', (size_t)(t - b));
			if (!eq || n == LIN_W3C_TRACESTATE_MEMBERS)
				return -EINVAL;
			struct ts_member cur = { b, eq + 1, (size_t)(eq - b), (size_t)(t - eq - 1) };
			if (!key_valid(cur.key, cur.klen) || !value_valid(cur.val, cur.vlen))
				return -EINVAL;
			for (int i = 0; i < n; i++)
				if (m[i].klen == cur.klen && !memcmp(m[i].key, cur.key, cur.klen))
					return -EINVAL;
			m[n++] = cur;
		}
		if (!comma)
			break;
		p = comma + 1;
	}
	return n;
}

LIN_API int lin_w3c_tracestate_find(const char *ts, const char *key, char *value, size_t len)
{
	if (!key)
		return -EINVAL;
	struct ts_member m[LIN_W3C_TRACESTATE_MEMBERS];
	int n = ts_split(ts, m);
	if (n < 0)
		return n;
	size_t kl = strlen(key);
	for (int i = 0; i < n; i++) {
		if (m[i].klen != kl || memcmp(m[i].key, key, kl))
			continue;
		if (!value)
			return 1;
		if (len <= m[i].vlen)
			return -ENOSPC;
		memcpy(value, m[i].val, m[i].vlen);
		value[m[i].vlen] = 0;
		return 1;
	}
	return 0;
}

LIN_API int lin_w3c_tracestate_put(const char *ts, const char *key, const char *value, char *buf,
				   size_t len)
{
	if (!key || !value || !buf)
		return -EINVAL;
	size_t kl = strlen(key), vl = strlen(value);
	if (!key_valid(key, kl) || !value_valid(value, vl))
		return -EINVAL;
	struct ts_member m[LIN_W3C_TRACESTATE_MEMBERS];
	int n = ts_split(ts, m);
	if (n < 0)
		return n;
	size_t used = kl + 1 + vl;
	if (used + 1 > len)
		return -ENOSPC;
	memcpy(buf, key, kl);
	buf[kl] = '=';
	memcpy(buf + kl + 1, value, vl);
	int kept = 1;
	for (int i = 0; i < n && kept < LIN_W3C_TRACESTATE_MEMBERS; i++) {
		if (m[i].klen == kl && !memcmp(m[i].key, key, kl))
			continue;
		size_t add = 1 + m[i].klen + 1 + m[i].vlen;
		if (used + add > LIN_W3C_TRACESTATE_MAX - 1)
			break; /* drop this and every member to its right */
		if (used + add + 1 > len)
			return -ENOSPC;
		buf[used] = ',';
		memcpy(buf + used + 1, m[i].key, m[i].klen + 1 + m[i].vlen); /* "k=v" is contiguous */
		used += add;
		kept++;
	}
	buf[used] = 0;
	return 0;
}

/* ---------------------------------------------------------------- headers */

LIN_API int lin_w3c_extract(const char *traceparent, const char *tracestate, struct lin_w3c_context *out)
{
	if (!traceparent || !out)
		return -EINVAL;
	struct lin_w3c_context c;
	memset(&c, 0, sizeof(c));
	int err = lin_w3c_traceparent_parse(traceparent, &c.tp);
	if (err)
		return err;
	char value[LIN_W3C_LIN_VALUE_MAX];
	int found = lin_w3c_tracestate_find(tracestate, "lin", value, sizeof(value));
	if (found == -ENOSPC)
		return -EINVAL; /* a lin member too long to be ours */
	if (found < 0)
		return found;
	if (found) {
		err = lin_w3c_lin_parse(value, c.tp.trace_id, &c.token);
		if (err)
			return err;
		c.has_token = 1;
	}
	*out = c;
	return 0;
}

static uint64_t this_proc_key(void)
{
	char host[256];
	if (gethostname(host, sizeof(host)) != 0)
		snprintf(host, sizeof(host), "unknown");
	host[sizeof(host) - 1] = 0;
	return lin_w3c_proc_key(host, (uint64_t)getpid());
}

LIN_API int lin_w3c_inject(lin_runtime *rt, const lin_token *tok, const struct lin_w3c_context *in,
			   const char *in_tracestate, uint8_t flags, struct lin_w3c_headers *out)
{
	if (!rt || !tok || !out || !tok->id)
		return -EINVAL;
	uint64_t key = this_proc_key();
	struct lin_w3c_traceparent tp;
	if (in) {
		memcpy(tp.trace_id, in->tp.trace_id, 16);
		flags = in->tp.flags;
	} else {
		uint64_t req = tok->id;
		if (tok->kind == LIN_TARGET_EPOCH) {
			struct lin_entity_info info = { .sz = sizeof(info) };
			int err = lin_entity_lookup(rt, tok->id, &info, &req, 1);
			if (err)
				return err;
			if (!info.n_requests)
				return -LIN_ENOTFOUND;
		} else if (tok->kind != LIN_TARGET_REQUEST) {
			return -EINVAL;
		}
		lin_w3c_trace_id(key, req, tp.trace_id);
	}
	tp.version = 0;
	tp.flags = flags;
	lin_w3c_put64(tp.parent_id, lin_w3c_span_id(key, tok->id));
	char value[LIN_W3C_LIN_VALUE_MAX];
	int err = lin_w3c_lin_format(tok, tp.trace_id, value, sizeof(value));
	lin_token check;
	if (!err)
		err = lin_w3c_lin_parse(value, tp.trace_id, &check); /* never send a bad tag */
	struct lin_w3c_headers h;
	if (!err)
		err = lin_w3c_traceparent_format(&tp, h.traceparent, sizeof(h.traceparent));
	if (!err)
		err = lin_w3c_tracestate_put(in_tracestate, "lin", value, h.tracestate,
					     sizeof(h.tracestate));
	if (err)
		return err == -ENOSPC ? -EINVAL : err;
	*out = h;
	return 0;
}

LIN_API int lin_w3c_adopt(lin_runtime *rt, const struct lin_w3c_context *ctx, lin_scope *scope)
{
	if (!rt || !ctx || !scope)
		return -EINVAL;
	scope->cookie = 0;
	if (!ctx->has_token)
		return -LIN_ENOCONTEXT;
	if (lin_w3c_span_id(this_proc_key(), ctx->token.id) != lin_w3c_get64(ctx->tp.parent_id))
		return -LIN_EFOREIGN;
	/* The span id proves the token came from this process: one whose version ended is
	 * late work, adopted late like a binary token (docs/trace-format.md, "Late work"). */
	return lin_rt_token_adopt_local(rt, &ctx->token, scope);
}

LIN_API int lin_w3c_request_begin(lin_runtime *rt, const struct lin_w3c_context *ctx,
				  const struct lin_request_opts *opts, uint64_t *id)
{
	if (!rt || !ctx || !id)
		return -EINVAL;
	struct lin_request_opts o;
	int err = lin_opts_copy(&o, sizeof(o), opts);
	if (err)
		return err;
	o.remote = ctx;
	return lin_request_begin(rt, &o, id);
}
