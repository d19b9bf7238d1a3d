/* SPDX-License-Identifier: MIT */
/*
 * tr_helpers.h - test helpers: unpack the msgpack objects a test packed, and build CUPTI
 * activity buffers out of the real CUPTI 13 record structs.
 */
#ifndef LIN_TEST_TRACE_READ_H
#define LIN_TEST_TRACE_READ_H

#include <stdalign.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <msgpack.h>

#define TR_MAX_OBJS 65536

struct tr_trace {
	msgpack_unpacked objs[TR_MAX_OBJS];
	size_t n;
	size_t truncated_at; /* 0, or the offset where an incomplete object started */
};

/* Unpack every complete object of @data. Returns the count. */
static inline size_t tr_load(struct tr_trace *t, const char *data, size_t len)
{
	size_t off = 0;

	t->n = 0;
	t->truncated_at = 0;
	while (off < len && t->n < TR_MAX_OBJS) {
		msgpack_unpacked_init(&t->objs[t->n]);
		size_t before = off;
		msgpack_unpack_return r = msgpack_unpack_next(&t->objs[t->n], data, len, &off);

		if (r != MSGPACK_UNPACK_SUCCESS) {
			msgpack_unpacked_destroy(&t->objs[t->n]);
			t->truncated_at = before;
			break;
		}
		t->n++;
	}
	return t->n;
}

static inline void tr_free(struct tr_trace *t)
{
	for (size_t i = 0; i < t->n; i++)
		msgpack_unpacked_destroy(&t->objs[i]);
	t->n = 0;
}

static inline const msgpack_object *tr_obj(const struct tr_trace *t, size_t i)
{
	return &t->objs[i].data;
}

/* Record type of object @i, or 0 if it is not a record (the header map). */
static inline uint64_t tr_type(const struct tr_trace *t, size_t i)
{
	const msgpack_object *o = tr_obj(t, i);

	if (o->type != MSGPACK_OBJECT_ARRAY || o->via.array.size == 0 ||
	    o->via.array.ptr[0].type != MSGPACK_OBJECT_POSITIVE_INTEGER)
		return 0;
	return o->via.array.ptr[0].via.u64;
}

static inline size_t tr_count(const struct tr_trace *t, uint64_t type)
{
	size_t n = 0;

	for (size_t i = 0; i < t->n; i++)
		n += tr_type(t, i) == type;
	return n;
}

/* Index of the @nth (0-based) record of @type, or SIZE_MAX. */
static inline size_t tr_find(const struct tr_trace *t, uint64_t type, size_t nth)
{
	for (size_t i = 0; i < t->n; i++)
		if (tr_type(t, i) == type && nth-- == 0)
			return i;
	return SIZE_MAX;
}

static inline size_t tr_nfields(const struct tr_trace *t, size_t i)
{
	return tr_obj(t, i)->via.array.size - 1;
}

/* Field @f (1-based, as in docs/trace-format.md) of record @i. */
static inline const msgpack_object *tr_field(const struct tr_trace *t, size_t i, size_t f)
{
	return &tr_obj(t, i)->via.array.ptr[f];
}

static inline bool tr_is_nil(const struct tr_trace *t, size_t i, size_t f)
{
	return tr_field(t, i, f)->type == MSGPACK_OBJECT_NIL;
}

/* Field as unsigned; UINT64_MAX when it is nil or not a non-negative integer. */
static inline uint64_t tr_u(const struct tr_trace *t, size_t i, size_t f)
{
	const msgpack_object *o = tr_field(t, i, f);

	return o->type == MSGPACK_OBJECT_POSITIVE_INTEGER ? o->via.u64 : UINT64_MAX;
}

/* Field as signed (either integer family); INT64_MIN when not an integer. */
static inline int64_t tr_i(const struct tr_trace *t, size_t i, size_t f)
{
	const msgpack_object *o = tr_field(t, i, f);

	if (o->type == MSGPACK_OBJECT_POSITIVE_INTEGER)
		return (int64_t)o->via.u64;
	if (o->type == MSGPACK_OBJECT_NEGATIVE_INTEGER)
		return o->via.i64;
	return INT64_MIN;
}

/* Text of string record with id @sid, copied into @buf; false when absent. */
static inline bool tr_string(const struct tr_trace *t, uint64_t sid, char *buf, size_t cap)
{
	for (size_t i = 0; i < t->n; i++) {
		if (tr_type(t, i) != 11 || tr_u(t, i, 1) != sid)
			continue;
		const msgpack_object *s = tr_field(t, i, 2);
		size_t n = s->via.str.size < cap - 1 ? s->via.str.size : cap - 1;

		memcpy(buf, s->via.str.ptr, n);
		buf[n] = '\0';
		return true;
	}
	return false;
}

/* ------------------------------------------------------------------ buffer builder */

struct tr_buf {
	alignas(8) uint8_t data[1 << 16];
	size_t used;
};

/* Append @n bytes of @rec; CUPTI records lie end to end, every struct a multiple of 8. */
static inline void tr_put(struct tr_buf *b, const void *rec, size_t n)
{
	size_t at = (b->used + 7u) & ~(size_t)7u;

	if (at + n > sizeof(b->data))
		abort();
	memcpy(b->data + at, rec, n);
	b->used = at + n;
}

/* ------------------------------------------------------------------ in-memory trace */

#include <pthread.h>

struct tr_sink {
	pthread_mutex_t mu;
	char *data;
	size_t len, cap;
};

static inline int tr_sink_write(const void *buf, size_t len, void *user)
{
	struct tr_sink *s = user;

	pthread_mutex_lock(&s->mu);
	if (s->len + len > s->cap) {
		size_t cap = s->cap ? s->cap : 4096;
		while (cap < s->len + len)
			cap *= 2;
		char *d = realloc(s->data, cap);
		if (!d) {
			pthread_mutex_unlock(&s->mu);
			return -12;
		}
		s->data = d;
		s->cap = cap;
	}
	memcpy(s->data + s->len, buf, len);
	s->len += len;
	pthread_mutex_unlock(&s->mu);
	return 0;
}

static inline void tr_sink_init(struct tr_sink *s)
{
	memset(s, 0, sizeof(*s));
	pthread_mutex_init(&s->mu, NULL);
}

static inline void tr_sink_fini(struct tr_sink *s)
{
	free(s->data);
	pthread_mutex_destroy(&s->mu);
}

/* Header map value for @key as a NUL-terminated string copy; false when absent/not str. */
static inline bool tr_header_str(const struct tr_trace *t, const char *key, char *buf, size_t cap)
{
	if (t->n == 0 || tr_obj(t, 0)->type != MSGPACK_OBJECT_MAP)
		return false;
	const msgpack_object_map *m = &tr_obj(t, 0)->via.map;
	for (uint32_t i = 0; i < m->size; i++) {
		const msgpack_object *k = &m->ptr[i].key, *v = &m->ptr[i].val;
		if (k->type != MSGPACK_OBJECT_STR || k->via.str.size != strlen(key) ||
		    memcmp(k->via.str.ptr, key, k->via.str.size) != 0)
			continue;
		if (v->type != MSGPACK_OBJECT_STR)
			return false;
		size_t n = v->via.str.size < cap - 1 ? v->via.str.size : cap - 1;
		memcpy(buf, v->via.str.ptr, n);
		buf[n] = '\0';
		return true;
	}
	return false;
}

#endif
