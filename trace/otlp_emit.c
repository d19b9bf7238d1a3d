/* SPDX-License-Identifier: MIT */
/*
 * otlp_emit.c - OTLP/JSON ExportTraceServiceRequest documents, one per line (the JSON
 * Lines layout of the collector's file exporter), built in a buffer and handed to a sink.
 * See otlp_emit.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lineage/version.h"
#include "lineage/w3c.h"
#include "otlp_emit.h"

#define LIN_OJ_STR_(x) #x
#define LIN_OJ_STR(x) LIN_OJ_STR_(x)

void lin_oj_init(struct lin_oj *w, lin_oj_sink_fn sink, void *sink_user, const char *scope,
		 lin_oj_resource_fn resource, void *user)
{
	memset(w, 0, sizeof(*w));
	w->sink = sink;
	w->sink_user = sink_user;
	w->scope = scope;
	w->resource = resource;
	w->user = user;
	w->res = -1;
}

void lin_oj_free(struct lin_oj *w)
{
	free(w->buf);
	w->buf = NULL;
	w->len = w->cap = 0;
}

/* ---------------------------------------------------------------- the buffer */

/* Room for @n more bytes; false (and the sticky error) when there is none. */
static bool room(struct lin_oj *w, size_t n)
{
	if (w->len + n <= w->cap)
		return true;
	if (w->err)
		return false;
	size_t cap = w->cap ? w->cap : 65536;
	while (cap < w->len + n)
		cap *= 2;
	char *nb = realloc(w->buf, cap);
	if (!nb) {
		w->err = -ENOMEM;
		return false;
	}
	w->buf = nb;
	w->cap = cap;
	return true;
}

static void put(struct lin_oj *w, const char *s, size_t n)
{
	if (room(w, n)) {
		memcpy(w->buf + w->len, s, n);
		w->len += n;
	}
}

#define PUTS(w, lit) put((w), (lit), sizeof(lit) - 1)

static void putch(struct lin_oj *w, char c)
{
	if (room(w, 1))
		w->buf[w->len++] = c;
}

static void put_u64(struct lin_oj *w, uint64_t v)
{
	char t[20];
	int n = 0;
	do
		t[n++] = (char)('0' + v % 10);
	while ((v /= 10));
	if (!room(w, (size_t)n))
		return;
	while (n)
		w->buf[w->len++] = t[--n];
}

static void put_i64(struct lin_oj *w, int64_t v)
{
	if (v < 0) {
		putch(w, '-');
		put_u64(w, (uint64_t)0 - (uint64_t)v);
	} else {
		put_u64(w, (uint64_t)v);
	}
}

static const char hexdig[] = "0123456789abcdef";

static void put_hex(struct lin_oj *w, const uint8_t *p, size_t n)
{
	if (!room(w, 2 * n + 2))
		return;
	w->buf[w->len++] = '"';
	for (size_t i = 0; i < n; i++) {
		w->buf[w->len++] = hexdig[p[i] >> 4];
		w->buf[w->len++] = hexdig[p[i] & 15];
	}
	w->buf[w->len++] = '"';
}

static void hex64(struct lin_oj *w, uint64_t v)
{
	uint8_t b[8];
	lin_w3c_put64(b, v);
	put_hex(w, b, 8);
}

/*
 * The length of the well-formed UTF-8 sequence at @s[0..@n) (n > 0), or minus the length
 * of its maximal ill-formed subpart: a lead byte and the continuation bytes that still fit
 * a well-formed sequence (Unicode Table 3-7), at least one byte.
 */
static int utf8_len(const unsigned char *s, size_t n)
{
	unsigned char c = s[0], lo = 0x80, hi = 0xbf;
	if (c < 0x80)
		return 1;
	if (c < 0xc2 || c > 0xf4) /* continuation, overlong lead C0/C1, above U+10FFFF */
		return -1;
	int len = c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;
	if (c == 0xe0)
		lo = 0xa0; /* overlong */
	else if (c == 0xed)
		hi = 0x9f; /* surrogates D800..DFFF */
	else if (c == 0xf0)
		lo = 0x90; /* overlong */
	else if (c == 0xf4)
		hi = 0x8f; /* above U+10FFFF */
	for (int i = 1; i < len; i++, lo = 0x80, hi = 0xbf)
		if ((size_t)i >= n || s[i] < lo || s[i] > hi)
			return -i;
	return len;
}

/* Where an encoded string goes: the writer's buffer, or a stdio stream. */
typedef void (*put_fn)(void *to, const char *s, size_t n);

static void put_oj(void *to, const char *s, size_t n) { put(to, s, n); }

static void put_file(void *to, const char *s, size_t n) { fwrite(s, 1, n, to); }

/* The one JSON string encoder (lin_oj_str, lin_oj_fstr). */
static void json_str(put_fn out, void *to, const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	out(to, "\"", 1);
	for (size_t i = 0; i < n;) {
		size_t run = i; /* plain ASCII goes in one copy */
		while (run < n && u[run] >= 0x20 && u[run] < 0x80 && u[run] != '"' && u[run] != '\\')
			run++;
		if (run > i)
			out(to, s + i, run - i);
		if ((i = run) >= n)
			break;
		unsigned char c = u[i];
		int len = utf8_len(u + i, n - i);
		if (len < 0) {
			out(to, "\\ufffd", 6);
			i += (size_t)-len;
			continue;
		}
		if (c == '"' || c == '\\') {
			char e[2] = { '\\', (char)c };
			out(to, e, 2);
		} else if (c < 0x20) {
			char e[6] = { '\\', 'u', '0', '0', hexdig[c >> 4], hexdig[c & 15] };
			out(to, e, 6);
		} else {
			out(to, s + i, (size_t)len);
		}
		i += (size_t)len;
	}
	out(to, "\"", 1);
}

void lin_oj_str(struct lin_oj *w, const char *s, size_t n) { json_str(put_oj, w, s, n); }

void lin_oj_fstr(FILE *out, const char *s, size_t n) { json_str(put_file, out, s, n); }

static void cstr(struct lin_oj *w, const char *s) { lin_oj_str(w, s, strlen(s)); }

/* ---------------------------------------------------------------- attributes */

static void item(struct lin_oj *w)
{
	if (!w->first_item)
		putch(w, ',');
	w->first_item = false;
}

static void akey(struct lin_oj *w, const char *key)
{
	item(w);
	PUTS(w, "{\"key\":");
	cstr(w, key);
	PUTS(w, ",\"value\":");
}

void lin_oj_astr(struct lin_oj *w, const char *key, const char *s, size_t n)
{
	akey(w, key);
	PUTS(w, "{\"stringValue\":");
	lin_oj_str(w, s, n);
	PUTS(w, "}}");
}

void lin_oj_acstr(struct lin_oj *w, const char *key, const char *s)
{
	lin_oj_astr(w, key, s, strlen(s));
}

void lin_oj_aint(struct lin_oj *w, const char *key, uint64_t v)
{
	if (v == LIN_NIL)
		return; /* unknown is left out, never written as a number */
	akey(w, key);
	PUTS(w, "{\"intValue\":\"");
	put_i64(w, (int64_t)v);
	PUTS(w, "\"}}");
}

void lin_oj_abool(struct lin_oj *w, const char *key, bool v)
{
	akey(w, key);
	if (v)
		PUTS(w, "{\"boolValue\":true}}");
	else
		PUTS(w, "{\"boolValue\":false}}");
}

void lin_oj_aints(struct lin_oj *w, const char *key, const uint64_t *v, size_t n)
{
	akey(w, key);
	PUTS(w, "{\"arrayValue\":{\"values\":[");
	for (size_t i = 0; i < n; i++) {
		if (i)
			putch(w, ',');
		PUTS(w, "{\"intValue\":\"");
		put_i64(w, (int64_t)v[i]);
		PUTS(w, "\"}");
	}
	PUTS(w, "]}}}");
}

void lin_oj_ahex(struct lin_oj *w, const char *key, uint64_t v)
{
	akey(w, key);
	PUTS(w, "{\"stringValue\":");
	hex64(w, v);
	PUTS(w, "}}");
}

/* ---------------------------------------------------------------- documents and spans */

static void resource_close(struct lin_oj *w)
{
	if (w->res >= 0)
		PUTS(w, "]}]}");
	w->res = -1;
}

int lin_oj_doc_close(struct lin_oj *w)
{
	if (!w->in_doc)
		return w->err;
	resource_close(w);
	PUTS(w, "]}\n");
	w->in_doc = false;
	if (!w->err) {
		int err = w->sink(w->buf, w->len, w->sink_user);
		if (err)
			w->err = err < 0 ? err : -EIO;
	}
	w->len = 0;
	return w->err;
}

static void resource_open(struct lin_oj *w, int res)
{
	if (w->res_in_doc)
		putch(w, ',');
	PUTS(w, "{\"resource\":{\"attributes\":[");
	w->res_in_doc = true;
	w->first_item = true;
	w->resource(w, res, w->user);
	PUTS(w, "]},\"scopeSpans\":[{\"scope\":{\"name\":");
	cstr(w, w->scope);
	PUTS(w, ",\"version\":\"" LIN_OJ_STR(LIN_VERSION_MAJOR) "." LIN_OJ_STR(
			LIN_VERSION_MINOR) "." LIN_OJ_STR(LIN_VERSION_PATCH) "\"},\"spans\":[");
	w->res = res;
	w->first_span = true;
}

void lin_oj_span_open(struct lin_oj *w, int res, const uint8_t trace[16], uint64_t span, uint64_t parent,
		      const char *name, size_t nlen, int kind, uint64_t t0, uint64_t t1)
{
	if (w->in_doc && w->nspans >= LIN_OJ_SPANS_PER_DOC)
		lin_oj_doc_close(w);
	if (!w->in_doc) {
		PUTS(w, "{\"resourceSpans\":[");
		w->in_doc = true;
		w->res_in_doc = false;
		w->nspans = 0;
		w->documents++;
	}
	if (w->res != res) {
		resource_close(w);
		resource_open(w, res);
	}
	if (t1 < t0)
		t1 = t0;
	if (!w->first_span)
		putch(w, ',');
	PUTS(w, "{\"traceId\":");
	put_hex(w, trace, 16);
	PUTS(w, ",\"spanId\":");
	hex64(w, span);
	if (parent) {
		PUTS(w, ",\"parentSpanId\":");
		hex64(w, parent);
	}
	PUTS(w, ",\"name\":");
	lin_oj_str(w, name, nlen);
	PUTS(w, ",\"kind\":");
	put_u64(w, (uint64_t)kind);
	PUTS(w, ",\"startTimeUnixNano\":\"");
	put_u64(w, t0);
	PUTS(w, "\",\"endTimeUnixNano\":\"");
	put_u64(w, t1);
	PUTS(w, "\",\"attributes\":[");
	w->first_span = false;
	w->first_item = true;
	w->nspans++;
	w->spans++;
}

void lin_oj_events(struct lin_oj *w)
{
	PUTS(w, "],\"events\":[");
	w->first_item = true;
}

void lin_oj_event_open(struct lin_oj *w, uint64_t t, const char *name)
{
	item(w);
	PUTS(w, "{\"timeUnixNano\":\"");
	put_u64(w, t);
	PUTS(w, "\",\"name\":");
	cstr(w, name);
	PUTS(w, ",\"attributes\":[");
	w->first_item = true;
	w->events++;
}

void lin_oj_event_close(struct lin_oj *w)
{
	PUTS(w, "]}");
	w->first_item = false;
}

void lin_oj_links(struct lin_oj *w)
{
	PUTS(w, "],\"links\":[");
	w->first_item = true;
}

void lin_oj_link(struct lin_oj *w, const uint8_t trace[16], uint64_t span, const char *why)
{
	item(w);
	PUTS(w, "{\"traceId\":");
	put_hex(w, trace, 16);
	PUTS(w, ",\"spanId\":");
	hex64(w, span);
	PUTS(w, ",\"attributes\":[");
	w->first_item = true;
	lin_oj_acstr(w, "lineage.link", why);
	PUTS(w, "]}");
	w->first_item = false;
	w->links++;
}

void lin_oj_span_close(struct lin_oj *w, const char *error)
{
	putch(w, ']');
	if (error) {
		PUTS(w, ",\"status\":{\"code\":2,\"message\":");
		cstr(w, error);
		putch(w, '}');
	}
	putch(w, '}');
}

void lin_oj_clock_init(struct lin_oj_clock *c)
{
	memset(c, 0, sizeof(*c));
	lin_cm_init(&c->map);
}

void lin_oj_clock_free(struct lin_oj_clock *c) { lin_cm_free(&c->map); }

uint64_t lin_oj_host_unix(const struct lin_oj_clock *c, uint64_t host_ns)
{
	if (host_ns == LIN_NIL)
		return 0;
	if (c->have_unix)
		return host_ns + (uint64_t)c->unix_off;
	uint64_t dev;
	return lin_cm_to_device(&c->map, host_ns, &dev) ? dev : host_ns;
}

uint64_t lin_oj_dev_unix(const struct lin_oj_clock *c, uint64_t dev_ns)
{
	if (dev_ns == LIN_NIL)
		return LIN_NIL;
	if (c->dev_host)
		return lin_oj_host_unix(c, dev_ns);
	uint64_t host;
	if (c->have_unix && lin_cm_to_host(&c->map, dev_ns, &host, NULL))
		return lin_oj_host_unix(c, host);
	return dev_ns;
}
