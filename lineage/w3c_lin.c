/* SPDX-License-Identifier: MIT */
/*
 * w3c_lin.c - the tracestate lin member's value for a token, bound to its trace id
 * (include/lineage/w3c.h, lin_w3c_lin_format and lin_w3c_lin_parse). Below both the W3C
 * entry points (w3c.c) and the writer, which formats the member of a request_link record;
 * it uses the token's text form (token.c) only.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "lineage/w3c.h"
#include "w3c_lin.h"

#define LIN_VALUE_VERSION "1."

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1; /* uppercase hex is invalid in traceparent */
}

/* Decode exactly 2*@n lowercase hex characters at @p into @out. */
int lin_w3c_hex_bytes(const char *p, uint8_t *out, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int hi = hexval(p[2 * i]), lo = hi < 0 ? -1 : hexval(p[2 * i + 1]);
		if (hi < 0 || lo < 0)
			return -1;
		out[i] = (uint8_t)(hi << 4 | lo);
	}
	return 0;
}

static uint32_t lin_bind(const uint8_t trace_id[16], uint32_t tag)
{
	uint64_t hi = lin_w3c_get64(trace_id), lo = lin_w3c_get64(trace_id + 8);
	return (uint32_t)lin_w3c_mix64(hi ^ lin_w3c_mix64(lo ^ tag));
}

LIN_API int lin_w3c_lin_format(const lin_token *tok, const uint8_t trace_id[16], char *buf, size_t len)
{
	if (!tok || !trace_id || !buf)
		return -EINVAL;
	if (len < LIN_W3C_LIN_VALUE_MAX)
		return -ENOSPC;
	char text[LIN_TOKEN_TEXT_MAX];
	int err = lin_token_format(tok, text, sizeof(text));
	if (err)
		return err;
	int n = snprintf(buf, len, LIN_VALUE_VERSION "%s.%08" PRIx32, text + 5,
			 lin_bind(trace_id, tok->tag));
	return (n > 0 && (size_t)n < len) ? 0 : -EINVAL;
}

LIN_API int lin_w3c_lin_parse(const char *value, const uint8_t trace_id[16], lin_token *tok)
{
	if (!value || !trace_id || !tok)
		return -EINVAL;
	size_t n = strlen(value);
	if (strncmp(value, LIN_VALUE_VERSION, 2) != 0 || n < 2 + 9 || n >= LIN_W3C_LIN_VALUE_MAX)
		return -EINVAL;
	const char *bind = value + n - 8;
	if (bind[-1] != '.')
		return -EINVAL;
	uint8_t b[4];
	if (lin_w3c_hex_bytes(bind, b, 4))
		return -EINVAL;
	char text[LIN_W3C_LIN_VALUE_MAX + 4] = "lin1.";
	memcpy(text + 5, value + 2, (size_t)(bind - 1 - (value + 2)));
	text[5 + (bind - 1 - (value + 2))] = 0;
	lin_token t;
	int err = lin_token_parse(text, &t);
	if (err)
		return err;
	uint32_t want = (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
	if (want != lin_bind(trace_id, t.tag))
		return -LIN_EFOREIGN;
	*tok = t;
	return 0;
}
