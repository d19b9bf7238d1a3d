/* SPDX-License-Identifier: MIT */
/*
 * reader.c - streaming schema-checking reader (see reader.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lineage/trace_format.h"
#include "mp.h"
#include "reader.h"
#include "schema.h"

struct lin_reader {
	int fd;       /* -1: memory mode */
	uint8_t *own; /* fd mode: the read buffer */
	const uint8_t *buf;
	size_t len, pos; /* valid bytes in buf; parse position */
	uint64_t base;   /* file offset of buf[0] */
	uint64_t size;   /* file size */
	bool eof;
	bool stream; /* stream mode: bytes arrive in spans (lin_reader_stream_span) */
	bool truncated;
	uint64_t records;
	uint64_t cur_off; /* offset of the object being parsed */
	const char *what; /* what is being parsed, for truncation messages */
	char err[512];
	uint64_t err_off;
};

typedef int (*lin_parse_fn)(struct lin_reader *r, const uint8_t **pp, const uint8_t *end, void *arg);

static int fail(struct lin_reader *r, uint64_t off, const char *fmt, ...)
{
	va_list ap;
	if (r->err[0])
		return LIN_MP_BAD;
	va_start(ap, fmt);
	vsnprintf(r->err, sizeof(r->err), fmt, ap);
	va_end(ap);
	/* The message may quote the input (a header key or value): never hand its control
	 * bytes (terminal escapes) or other non-ASCII bytes to the terminal. */
	for (char *c = r->err; *c; c++)
		if ((unsigned char)*c < 0x20 || (unsigned char)*c >= 0x7f)
			*c = '?';
	r->err_off = off;
	return LIN_MP_BAD;
}

static uint64_t off_of(const struct lin_reader *r, const uint8_t *p)
{
	return r->base + (uint64_t)(p - r->buf);
}

struct lin_reader *lin_reader_open(const char *path)
{
	struct lin_reader *r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->own = malloc(LIN_READER_BUF);
	if (!r->own) {
		free(r);
		return NULL;
	}
	r->buf = r->own;
	r->fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (r->fd < 0) {
		fail(r, 0, "cannot open: %s", strerror(errno));
	} else if (fstat(r->fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		fail(r, 0, "not a regular file");
	} else {
		r->size = (uint64_t)st.st_size;
	}
	return r;
}

struct lin_reader *lin_reader_open_mem(const char *name, const void *data, size_t size)
{
	(void)name;
	struct lin_reader *r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->fd = -1;
	r->buf = data;
	r->len = size;
	r->size = size;
	r->eof = true;
	return r;
}

struct lin_reader *lin_reader_open_stream(void)
{
	struct lin_reader *r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->fd = -1;
	r->stream = true;
	r->size = UINT64_MAX; /* unknown: only the fixed limits bound a header's claim */
	return r;
}

void lin_reader_stream_span(struct lin_reader *r, const void *data, size_t len, uint64_t base)
{
	r->buf = data;
	r->len = len;
	r->pos = 0;
	r->base = base;
}

size_t lin_reader_consumed(const struct lin_reader *r) { return r->pos; }

void lin_reader_free(struct lin_reader *r)
{
	if (!r)
		return;
	if (r->fd >= 0)
		close(r->fd);
	free(r->own);
	free(r);
}

/* Move the unparsed tail to the front and read more. Return 0 or LIN_MP_BAD. */
static int fill(struct lin_reader *r)
{
	if (r->fd < 0 || r->eof)
		return 0;
	if (r->pos == 0 && r->len == LIN_READER_BUF)
		return fail(r, r->cur_off, "record at byte %" PRIu64 " is larger than the %u-byte limit",
			    r->cur_off, LIN_READER_BUF);
	memmove(r->own, r->own + r->pos, r->len - r->pos);
	r->base += r->pos;
	r->len -= r->pos;
	r->pos = 0;
	while (r->len < LIN_READER_BUF) {
		ssize_t n = read(r->fd, r->own + r->len, LIN_READER_BUF - r->len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return fail(r, r->base + r->len, "read error: %s", strerror(errno));
		if (n == 0) {
			r->eof = true;
			break;
		}
		r->len += (size_t)n;
	}
	return 0;
}

static int drive(struct lin_reader *r, lin_parse_fn fn, void *arg)
{
	for (;;) {
		const uint8_t *p = r->buf + r->pos;
		r->cur_off = off_of(r, p);
		int rc = fn(r, &p, r->buf + r->len, arg);
		if (rc == LIN_MP_OK) {
			r->pos = (size_t)(p - r->buf);
			return LIN_MP_OK;
		}
		if (rc == LIN_MP_BAD || r->stream)
			return rc; /* stream mode: the rest of the object comes with the next span */
		if (r->eof) {
			r->truncated = true;
			return fail(r, r->cur_off,
				    "truncated: the file ends at byte %" PRIu64 " inside %s #%" PRIu64
				    " that starts at byte %" PRIu64 "; expected a complete %s",
				    r->size, r->what, r->records, r->cur_off, r->what);
		}
		if (fill(r) != 0)
			return LIN_MP_BAD;
	}
}

/* One token with the size checks every header gets before it is trusted. */
static int tok(struct lin_reader *r, const uint8_t **pp, const uint8_t *end, struct lin_mp_val *v)
{
	const uint8_t *at = *pp;
	v->type = LIN_MP_NIL;
	v->len = 0;
	int rc = lin_mp_read(pp, end, v);
	if (rc == LIN_MP_BAD)
		return fail(r, off_of(r, at), "reserved MessagePack tag 0x%02x", *at);
	if ((v->type == LIN_MP_STR || v->type == LIN_MP_BIN || v->type == LIN_MP_EXT) &&
	    v->len > LIN_READER_BUF)
		return fail(r, off_of(r, at),
			    "%s header claims %" PRIu32 " bytes, more than the %u-byte record limit",
			    lin_mp_type_name(v->type), v->len, LIN_READER_BUF);
	if (rc != LIN_MP_OK)
		return rc;
	if (v->type == LIN_MP_ARRAY || v->type == LIN_MP_MAP) {
		uint64_t items = (uint64_t)v->len * (v->type == LIN_MP_MAP ? 2 : 1);
		uint64_t left = r->size - off_of(r, *pp);
		if (v->len > LIN_READER_MAX_ELEMS)
			return fail(r, off_of(r, at),
				    "%s header claims %" PRIu32 " elements, more than the limit of %u",
				    lin_mp_type_name(v->type), v->len, LIN_READER_MAX_ELEMS);
		if (items > left) {
			r->truncated = true;
			return fail(r, r->cur_off,
				    "truncated: %s header at byte %" PRIu64 " claims %" PRIu64
				    " elements but only %" PRIu64 " bytes remain in the file (%s #%" PRIu64
				    " starts at byte %" PRIu64 ")",
				    lin_mp_type_name(v->type), off_of(r, at), items, left, r->what,
				    r->records, r->cur_off);
		}
	}
	return LIN_MP_OK;
}

/* Skip @items objects of any type, with bounded nesting. */
static int skip(struct lin_reader *r, const uint8_t **pp, const uint8_t *end, uint64_t items, int depth)
{
	uint64_t stack[LIN_READER_MAX_DEPTH];
	int sp = 0;
	struct lin_mp_val v;
	for (;;) {
		while (items == 0) {
			if (sp == 0)
				return LIN_MP_OK;
			items = stack[--sp];
		}
		const uint8_t *at = *pp;
		int rc = tok(r, pp, end, &v);
		if (rc != LIN_MP_OK)
			return rc;
		items--;
		if ((v.type == LIN_MP_ARRAY || v.type == LIN_MP_MAP) && v.len) {
			if (depth + sp + 1 >= LIN_READER_MAX_DEPTH)
				return fail(r, off_of(r, at), "nesting deeper than %d levels",
					    LIN_READER_MAX_DEPTH);
			stack[sp++] = items;
			items = (uint64_t)v.len * (v.type == LIN_MP_MAP ? 2 : 1);
		}
	}
}

static const char *code_name(char c)
{
	switch (c) {
	case 'u': return "uint";
	case 'o': return "uint or nil";
	case 'c': return "32-bit uint or nil";
	case 'i': return "int";
	case 'b': return "bool";
	case 's': return "str";
	case 'n': return "str or nil";
	default: return "array of uint";
	}
}

static int field_err(struct lin_reader *r, uint32_t type, uint32_t i, const char *what,
		     const struct lin_mp_val *v)
{
	return fail(r, r->cur_off,
		    "record #%" PRIu64 " (%s) at byte %" PRIu64 ": field '%s': expected %s, found %s",
		    r->records, lin_rec_name(type), r->cur_off, lin_rec_field_name(type, i), what,
		    lin_mp_type_name(v->type));
}

static int read_reqs(struct lin_reader *r, const uint8_t **pp, const uint8_t *end,
		     struct lin_rec *rec, uint32_t i, const struct lin_mp_val *hdr)
{
	struct lin_mp_val v;
	if (hdr->len > LIN_READER_MAX_REQS)
		return fail(r, r->cur_off,
			    "record #%" PRIu64 " at byte %" PRIu64 ": field '%s' has %" PRIu32
			    " elements, more than the limit of %u",
			    r->records, r->cur_off, lin_rec_field_name(rec->type, i), hdr->len,
			    LIN_READER_MAX_REQS);
	rec->nreqs = hdr->len;
	for (uint32_t k = 0; k < hdr->len; k++) {
		int rc = tok(r, pp, end, &v);
		if (rc != LIN_MP_OK)
			return rc;
		if (v.type != LIN_MP_UINT)
			return field_err(r, rec->type, i, "array of uint", &v);
		rec->reqs[k] = v.v.u;
	}
	return LIN_MP_OK;
}

static int read_field(struct lin_reader *r, const uint8_t **pp, const uint8_t *end,
		      struct lin_rec *rec, uint32_t i, char code)
{
	struct lin_mp_val v;
	int rc = tok(r, pp, end, &v);
	if (rc != LIN_MP_OK)
		return rc;
	rec->f[i] = 0;
	if (v.type == LIN_MP_NIL && (code == 'o' || code == 'c' || code == 'n')) {
		rec->nil |= 1u << i;
		return LIN_MP_OK;
	}
	switch (code) {
	case 'u':
	case 'o':
		if (v.type != LIN_MP_UINT)
			return field_err(r, rec->type, i, code_name(code), &v);
		rec->f[i] = v.v.u;
		return LIN_MP_OK;
	case 'c': /* CUPTI's correlation ids are 32-bit; the tables keep them so */
		if (v.type != LIN_MP_UINT)
			return field_err(r, rec->type, i, code_name(code), &v);
		if (v.v.u > UINT32_MAX)
			return fail(r, r->cur_off,
				    "record #%" PRIu64 " (%s) at byte %" PRIu64
				    ": field '%s': %" PRIu64 " is not a 32-bit correlation id",
				    r->records, lin_rec_name(rec->type), r->cur_off,
				    lin_rec_field_name(rec->type, i), v.v.u);
		rec->f[i] = v.v.u;
		return LIN_MP_OK;
	case 'i':
		if (v.type != LIN_MP_UINT && v.type != LIN_MP_INT)
			return field_err(r, rec->type, i, "int", &v);
		rec->f[i] = v.v.u;
		return LIN_MP_OK;
	case 'b':
		if (v.type != LIN_MP_BOOL)
			return field_err(r, rec->type, i, "bool", &v);
		rec->f[i] = (uint64_t)v.v.b;
		return LIN_MP_OK;
	case 's':
	case 'n':
		if (v.type != LIN_MP_STR)
			return field_err(r, rec->type, i, code_name(code), &v);
		rec->str = (const char *)v.p;
		rec->str_len = v.len;
		rec->f[i] = v.len;
		return LIN_MP_OK;
	default:
		if (v.type != LIN_MP_ARRAY)
			return field_err(r, rec->type, i, "array of uint", &v);
		return read_reqs(r, pp, end, rec, i, &v);
	}
}

static int parse_record(struct lin_reader *r, const uint8_t **pp, const uint8_t *end, void *arg)
{
	struct lin_rec *rec = arg;
	struct lin_mp_val v;
	int rc = tok(r, pp, end, &v);
	if (rc != LIN_MP_OK)
		return rc;
	if (v.type != LIN_MP_ARRAY || v.len == 0)
		return fail(r, r->cur_off,
			    "record #%" PRIu64 " at byte %" PRIu64
			    ": expected a non-empty record array, found %s",
			    r->records, r->cur_off,
			    v.type == LIN_MP_ARRAY ? "an empty array" : lin_mp_type_name(v.type));
	uint32_t n = v.len;
	if ((rc = tok(r, pp, end, &v)) != LIN_MP_OK)
		return rc;
	if (v.type != LIN_MP_UINT || v.v.u == 0 || v.v.u > UINT32_MAX)
		return fail(r, r->cur_off,
			    "record #%" PRIu64 " at byte %" PRIu64
			    ": element 0 (record type): expected a positive uint, found %s",
			    r->records, r->cur_off, lin_mp_type_name(v.type));
	rec->type = (uint32_t)v.v.u;
	rec->nil = 0;
	rec->nreqs = 0;
	rec->str = NULL;
	rec->str_len = 0;
	const struct lin_schema *s = lin_schema_get(rec->type);
	rec->known = s != NULL;
	if (!s) {
		rec->nfields = 0;
		return skip(r, pp, end, n - 1, 1);
	}
	/* types: the fields every writer of this major version writes, then after a '|' the
	 * ones later minor versions appended (absent: nil). */
	const char *bar = strchr(s->types, '|');
	uint32_t need = (uint32_t)(bar ? (size_t)(bar - s->types) : strlen(s->types));
	uint32_t known = need + (bar ? (uint32_t)strlen(bar + 1) : 0);
	if (n - 1 < need)
		return fail(r, r->cur_off,
			    "record #%" PRIu64 " (%s) at byte %" PRIu64 ": has %" PRIu32
			    " fields, format %d.%d has %" PRIu32,
			    r->records, s->name, r->cur_off, n - 1, LIN_TRACE_FORMAT_MAJOR,
			    LIN_TRACE_FORMAT_MINOR, need);
	uint32_t have = n - 1 < known ? n - 1 : known;
	rec->nfields = known;
	for (uint32_t i = 0; i < have; i++) {
		char code = s->types[i < need ? i : i + 1];
		if ((rc = read_field(r, pp, end, rec, i, code)) != LIN_MP_OK)
			return rc;
	}
	for (uint32_t i = have; i < known; i++) {
		rec->f[i] = 0;
		rec->nil |= 1u << i;
	}
	return skip(r, pp, end, n - 1 - have, 1);
}

enum lin_read_status lin_reader_next(struct lin_reader *r, struct lin_rec *rec)
{
	if (r->err[0])
		return LIN_READ_ERROR;
	if (r->pos == r->len && !r->eof && fill(r) != 0)
		return LIN_READ_ERROR;
	if (r->pos == r->len && r->eof)
		return LIN_READ_EOF;
	if (r->pos == r->len && r->stream)
		return LIN_READ_MORE;
	r->what = "record";
	int rc = drive(r, parse_record, rec);
	if (rc == LIN_MP_SHORT)
		return LIN_READ_MORE;
	if (rc != LIN_MP_OK)
		return LIN_READ_ERROR;
	rec->offset = r->cur_off;
	rec->index = r->records++;
	return LIN_READ_RECORD;
}

const char *lin_reader_error(const struct lin_reader *r) { return r->err; }
uint64_t lin_reader_error_offset(const struct lin_reader *r) { return r->err_off; }
bool lin_reader_truncated(const struct lin_reader *r) { return r->truncated; }
uint64_t lin_reader_size(const struct lin_reader *r) { return r->size; }
uint64_t lin_reader_records(const struct lin_reader *r) { return r->records; }

/* ---- header ---- */

struct hdr_state {
	struct lin_header *h;
	const char *want;
};

static int hdr_str(struct lin_reader *r, const struct lin_mp_val *v, const char *key, char *dst,
		   size_t cap, bool nil_ok)
{
	if (v->type == LIN_MP_NIL && nil_ok)
		return LIN_MP_OK;
	if (v->type != LIN_MP_STR)
		return fail(r, r->cur_off, "header at byte %" PRIu64 ": key '%s': expected str, found %s",
			    r->cur_off, key, lin_mp_type_name(v->type));
	if (!dst)
		return LIN_MP_OK;
	if (v->len >= cap || memchr(v->p, 0, v->len))
		return fail(r, r->cur_off,
			    "header at byte %" PRIu64 ": key '%s': string of %" PRIu32
			    " bytes is too long or holds a NUL (limit %zu)",
			    r->cur_off, key, v->len, cap - 1);
	memcpy(dst, v->p, v->len);
	dst[v->len] = 0;
	return LIN_MP_OK;
}

static int hdr_uint(struct lin_reader *r, const struct lin_mp_val *v, const char *key, uint64_t *dst)
{
	if (v->type != LIN_MP_UINT)
		return fail(r, r->cur_off, "header at byte %" PRIu64 ": key '%s': expected uint, found %s",
			    r->cur_off, key, lin_mp_type_name(v->type));
	*dst = v->v.u;
	return LIN_MP_OK;
}

static int hdr_version(struct lin_reader *r, const uint8_t **pp, const uint8_t *end,
		       const struct lin_mp_val *v, struct lin_header *h)
{
	struct lin_mp_val a, b;
	int rc;
	if (v->type != LIN_MP_ARRAY || v->len < 2)
		return fail(r, r->cur_off,
			    "header at byte %" PRIu64
			    ": key 'version': expected array [major, minor], found %s",
			    r->cur_off, lin_mp_type_name(v->type));
	if ((rc = tok(r, pp, end, &a)) != LIN_MP_OK || (rc = tok(r, pp, end, &b)) != LIN_MP_OK)
		return rc;
	if (a.type != LIN_MP_UINT || b.type != LIN_MP_UINT)
		return fail(r, r->cur_off,
			    "header at byte %" PRIu64 ": key 'version': expected [uint, uint]",
			    r->cur_off);
	h->major = a.v.u;
	h->minor = b.v.u;
	return skip(r, pp, end, v->len - 2, 2);
}

static int hdr_value(struct lin_reader *r, const uint8_t **pp, const uint8_t *end,
		     const struct lin_mp_val *k, struct lin_header *h, unsigned *seen)
{
	static const char *const keys[] = { "format",   "version",      "host",
					    "pid",      "writer",       "start_host_ns",
					    "ext_kind", "backend",      "tsc_hz",
					    "cupti",    "device_clock", "start_unix_ns" };
	struct lin_mp_val v;
	int idx = -1, rc;
	for (int i = 0; i < (int)(sizeof(keys) / sizeof(keys[0])); i++)
		if (strlen(keys[i]) == k->len && memcmp(keys[i], k->p, k->len) == 0)
			idx = i;
	if (idx >= 0)
		*seen |= 1u << idx;
	if (idx < 0)
		return skip(r, pp, end, 1, 1);
	if ((rc = tok(r, pp, end, &v)) != LIN_MP_OK)
		return rc;
	switch (idx) {
	case 0: return hdr_str(r, &v, keys[idx], h->format, sizeof(h->format), false);
	case 1: return hdr_version(r, pp, end, &v, h);
	case 2: return hdr_str(r, &v, keys[idx], h->host, sizeof(h->host), false);
	case 3: return hdr_uint(r, &v, keys[idx], &h->pid);
	case 4: return hdr_str(r, &v, keys[idx], h->writer, sizeof(h->writer), true);
	case 5: return hdr_uint(r, &v, keys[idx], &h->start_host_ns);
	case 6: h->has_ext_kind = true; return hdr_uint(r, &v, keys[idx], &h->ext_kind);
	case 7: return hdr_str(r, &v, keys[idx], h->backend, sizeof(h->backend), true);
	case 9:
		/* The status is prose for the report: a long one is cut, not refused. */
		if (v.type == LIN_MP_STR) {
			size_t n = v.len < sizeof(h->cupti) - 1 ? v.len : sizeof(h->cupti) - 1;
			memcpy(h->cupti, v.p, n);
			h->cupti[n] = 0;
			for (size_t i = 0; i < n; i++)
				if ((unsigned char)h->cupti[i] < 0x20)
					h->cupti[i] = ' ';
			return LIN_MP_OK;
		}
		return hdr_str(r, &v, keys[idx], NULL, 0, true);
	case 11: return hdr_uint(r, &v, keys[idx], &h->start_unix_ns);
	case 10:
		h->device_clock_host = v.type == LIN_MP_STR && v.len == 4 && !memcmp(v.p, "host", 4);
		return hdr_str(r, &v, keys[idx], NULL, 0, true);
	default:
		if (v.type == LIN_MP_NIL || (v.type == LIN_MP_UINT && v.v.u > 0))
			return LIN_MP_OK;
		if (v.type != LIN_MP_FLOAT || !isfinite(v.v.f) || v.v.f <= 0)
			return fail(r, r->cur_off,
				    "header at byte %" PRIu64 ": key 'tsc_hz': expected"
				    " a positive finite number or nil, found %s",
				    r->cur_off,
				    v.type == LIN_MP_FLOAT ? "a non-finite or non-positive float"
							   : lin_mp_type_name(v.type));
		return LIN_MP_OK;
	}
}

static int parse_header(struct lin_reader *r, const uint8_t **pp, const uint8_t *end, void *arg)
{
	struct hdr_state *st = arg;
	struct lin_header *h = st->h;
	struct lin_mp_val v, k;
	const uint8_t *keyp[64];
	uint32_t keyl[64];
	unsigned seen = 0;
	int rc = tok(r, pp, end, &v);
	if (rc != LIN_MP_OK)
		return rc;
	if (v.type != LIN_MP_MAP)
		return fail(r, 0, "expected the header map, found %s", lin_mp_type_name(v.type));
	if (v.len > 64)
		return fail(r, 0, "header map has %" PRIu32 " keys, limit 64", v.len);
	memset(h, 0, sizeof(*h));
	for (uint32_t i = 0; i < v.len; i++) {
		if ((rc = tok(r, pp, end, &k)) != LIN_MP_OK)
			return rc;
		if (k.type != LIN_MP_STR)
			return fail(r, 0, "header: key %" PRIu32 ": expected str, found %s", i,
				    lin_mp_type_name(k.type));
		for (uint32_t j = 0; j < i; j++)
			if (keyl[j] == k.len && memcmp(keyp[j], k.p, k.len) == 0)
				return fail(r, 0, "header: duplicate key '%.*s'", (int)k.len,
					    (const char *)k.p);
		keyp[i] = k.p;
		keyl[i] = k.len;
		if ((rc = hdr_value(r, pp, end, &k, h, &seen)) != LIN_MP_OK)
			return rc;
	}
	if ((seen & 0xf) != 0xf)
		return fail(r, 0, "header: missing key '%s'",
			    !(seen & 1)   ? "format"
			    : !(seen & 2) ? "version"
			    : !(seen & 4) ? "host"
					  : "pid");
	if (strcmp(h->format, st->want) != 0)
		return fail(r, 0, "header: format '%s', expected '%s'", h->format, st->want);
	if (h->major != LIN_TRACE_FORMAT_MAJOR)
		return fail(r, 0,
			    "header: unsupported format version %" PRIu64 ".%" PRIu64
			    " (this validator reads %d.x)",
			    h->major, h->minor, LIN_TRACE_FORMAT_MAJOR);
	return LIN_MP_OK;
}

int lin_reader_header(struct lin_reader *r, const char *want_format, struct lin_header *h)
{
	struct hdr_state st = { h, want_format };
	if (r->err[0])
		return -1;
	r->what = "header";
	int rc = r->stream && r->pos == r->len ? LIN_MP_SHORT : drive(r, parse_header, &st);
	if (rc == LIN_MP_SHORT)
		return 1;
	if (rc != LIN_MP_OK)
		return -1;
	if (!h->has_ext_kind)
		h->ext_kind = LIN_DEFAULT_EXT_KIND;
	return 0;
}
