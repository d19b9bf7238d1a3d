/* SPDX-License-Identifier: MIT */
/*
 * trace_read.h - read a whole trace written by the runtime back into msgpack objects, for
 * assertions in tests. Tests only read traces the library itself wrote.
 */
#ifndef LIN_TRACE_READ_H
#define LIN_TRACE_READ_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <msgpack.h>

struct trace {
	msgpack_zone zone;
	msgpack_object header;
	msgpack_object *rec;
	size_t n;
	char *data;
	size_t len;
	bool truncated;
};

static inline int trace_load_mem(struct trace *t, const char *data, size_t len)
{
	memset(t, 0, sizeof(*t));
	t->data = malloc(len ? len : 1);
	if (!t->data)
		return -1;
	memcpy(t->data, data, len);
	t->len = len;
	msgpack_zone_init(&t->zone, 4096);
	size_t off = 0, cap = 0;
	bool first = true;
	while (off < len) {
		msgpack_object obj;
		msgpack_unpack_return r = msgpack_unpack(t->data, len, &off, &t->zone, &obj);
		if (r == MSGPACK_UNPACK_CONTINUE) {
			t->truncated = true;
			break;
		}
		if (r != MSGPACK_UNPACK_SUCCESS && r != MSGPACK_UNPACK_EXTRA_BYTES)
			break;
		if (first) {
			t->header = obj;
			first = false;
			continue;
		}
		if (t->n == cap) {
			cap = cap ? cap * 2 : 256;
			t->rec = realloc(t->rec, cap * sizeof(*t->rec));
		}
		t->rec[t->n++] = obj;
	}
	if (first || (off < len && !t->truncated)) {
		msgpack_zone_destroy(&t->zone);
		free(t->rec);
		free(t->data);
		memset(t, 0, sizeof(*t));
		return -1;
	}
	return 0;
}

static inline int trace_load(struct trace *t, const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return -1;
	fseek(f, 0, SEEK_END);
	long sz = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *buf = malloc(sz > 0 ? (size_t)sz : 1);
	size_t got = fread(buf, 1, (size_t)sz, f);
	fclose(f);
	int r = trace_load_mem(t, buf, got);
	free(buf);
	return r;
}

static inline void trace_free(struct trace *t)
{
	msgpack_zone_destroy(&t->zone);
	free(t->rec);
	free(t->data);
}

static inline uint64_t rec_type(const msgpack_object *r) { return r->via.array.ptr[0].via.u64; }

/* Field i (1-based, after the type). */
static inline const msgpack_object *rec_f(const msgpack_object *r, size_t i)
{
	return i < r->via.array.size ? &r->via.array.ptr[i] : NULL;
}

static inline bool rec_nil(const msgpack_object *r, size_t i)
{
	const msgpack_object *o = rec_f(r, i);
	return !o || o->type == MSGPACK_OBJECT_NIL;
}

static inline uint64_t rec_u(const msgpack_object *r, size_t i)
{
	const msgpack_object *o = rec_f(r, i);
	return (o && o->type == MSGPACK_OBJECT_POSITIVE_INTEGER) ? o->via.u64 : UINT64_MAX;
}

static inline size_t trace_count(const struct trace *t, uint64_t type)
{
	size_t n = 0;
	for (size_t i = 0; i < t->n; i++)
		n += rec_type(&t->rec[i]) == type;
	return n;
}

/* The k-th record of @type (0-based), or NULL. */
static inline const msgpack_object *trace_nth(const struct trace *t, uint64_t type, size_t k)
{
	for (size_t i = 0; i < t->n; i++)
		if (rec_type(&t->rec[i]) == type && k-- == 0)
			return &t->rec[i];
	return NULL;
}

/* Header value for @key, or NULL. */
static inline const msgpack_object *trace_hdr(const struct trace *t, const char *key)
{
	if (t->header.type != MSGPACK_OBJECT_MAP)
		return NULL;
	for (uint32_t i = 0; i < t->header.via.map.size; i++) {
		const msgpack_object_kv *kv = &t->header.via.map.ptr[i];
		if (kv->key.type == MSGPACK_OBJECT_STR && kv->key.via.str.size == strlen(key) &&
		    !memcmp(kv->key.via.str.ptr, key, kv->key.via.str.size))
			return &kv->val;
	}
	return NULL;
}

/* Text of string id @sid, or NULL. */
static inline const char *trace_string(const struct trace *t, uint64_t sid, char *buf, size_t len)
{
	for (size_t i = 0; i < t->n; i++) {
		const msgpack_object *r = &t->rec[i];
		if (rec_type(r) == 11 && rec_u(r, 1) == sid) {
			const msgpack_object *s = rec_f(r, 2);
			size_t n = s->via.str.size < len - 1 ? s->via.str.size : len - 1;
			memcpy(buf, s->via.str.ptr, n);
			buf[n] = 0;
			return buf;
		}
	}
	return NULL;
}

/* Write a trace into memory through the runtime's write callback. */
struct membuf {
	char *p;
	size_t n, cap;
};

static inline int membuf_write(const void *buf, size_t len, void *user)
{
	struct membuf *m = user;
	if (m->n + len > m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 65536;
		while (cap < m->n + len)
			cap *= 2;
		m->p = realloc(m->p, cap);
		m->cap = cap;
	}
	memcpy(m->p + m->n, buf, len);
	m->n += len;
	return 0;
}

#endif
