/* SPDX-License-Identifier: MIT */
/*
 * mp.h - a small bounds-checked MessagePack token decoder for lineage-validate.
 *
 * Decodes one token (a scalar, or the header of an array/map) from [*pp, end). It never
 * allocates and never reads past @end: str/bin/ext bodies must lie wholly inside the
 * buffer, array and map headers only report their element count (the caller bounds it).
 * Context: any thread; pure function of its input.
 */
#ifndef LIN_VALIDATOR_MP_H
#define LIN_VALIDATOR_MP_H

#include <stdint.h>
#include <string.h>

enum lin_mp_type {
	LIN_MP_NIL,
	LIN_MP_BOOL,
	LIN_MP_UINT,
	LIN_MP_INT,
	LIN_MP_FLOAT,
	LIN_MP_STR,
	LIN_MP_BIN,
	LIN_MP_EXT,
	LIN_MP_ARRAY,
	LIN_MP_MAP,
};

/* Return codes of lin_mp_read(). */
enum { LIN_MP_OK = 0, LIN_MP_SHORT = 1, LIN_MP_BAD = -1 };

struct lin_mp_val {
	enum lin_mp_type type;
	uint32_t len; /* str/bin/ext: bytes; array: elements; map: pairs */
	union {
		uint64_t u; /* UINT (and non-negative values of the int family) */
		int64_t i;  /* INT: negative values only */
		double f;
		int b;
	} v;
	const uint8_t *p; /* str/bin/ext body */
};

static inline uint64_t lin_mp_be(const uint8_t *p, int n)
{
	uint64_t v = 0;
	for (int k = 0; k < n; k++)
		v = (v << 8) | p[k];
	return v;
}

static inline const char *lin_mp_type_name(enum lin_mp_type t)
{
	static const char *const names[] = { "nil", "bool", "uint", "negative int", "float",
					     "str", "bin",  "ext",  "array",        "map" };
	return names[t];
}

/* Payload bytes after the tag byte for fixed-size tags; -1 for variable ones. */
static inline int lin_mp_read_sized(const uint8_t **pp, const uint8_t *end, struct lin_mp_val *o,
				    uint8_t c)
{
	const uint8_t *p = *pp + 1;
	size_t avail = (size_t)(end - p);
	int n;
	switch (c) {
	case 0xc4:
	case 0xd9: n = 1; break;
	case 0xc5:
	case 0xda: n = 2; break;
	case 0xc6:
	case 0xdb: n = 4; break;
	case 0xc7: n = 1; break;
	case 0xc8: n = 2; break;
	case 0xc9: n = 4; break;
	default: n = 0; break;
	}
	if (n) { /* str, bin, ext with length prefix */
		int ext = (c >= 0xc7 && c <= 0xc9);
		if (avail < (size_t)n + (size_t)ext)
			return LIN_MP_SHORT;
		uint64_t len = lin_mp_be(p, n);
		p += n + ext;
		avail -= (size_t)n + (size_t)ext;
		o->type = (c >= 0xd9) ? LIN_MP_STR : ext ? LIN_MP_EXT : LIN_MP_BIN;
		o->len = (uint32_t)len;
		if (len > avail)
			return LIN_MP_SHORT;
		o->p = p;
		*pp = p + len;
		return LIN_MP_OK;
	}
	if (c >= 0xd4 && c <= 0xd8) { /* fixext */
		size_t len = (size_t)1 << (c - 0xd4);
		if (avail < len + 1)
			return LIN_MP_SHORT;
		o->type = LIN_MP_EXT;
		o->len = (uint32_t)len;
		o->p = p + 1;
		*pp = p + 1 + len;
		return LIN_MP_OK;
	}
	int w;
	switch (c) {
	case 0xca:
	case 0xce:
	case 0xd2:
	case 0xdd:
	case 0xdf: w = 4; break;
	case 0xcb:
	case 0xcf:
	case 0xd3: w = 8; break;
	case 0xcc:
	case 0xd0: w = 1; break;
	case 0xcd:
	case 0xd1:
	case 0xdc:
	case 0xde: w = 2; break;
	default: return LIN_MP_BAD; /* 0xc1 and anything unassigned */
	}
	if (avail < (size_t)w)
		return LIN_MP_SHORT;
	uint64_t raw = lin_mp_be(p, w);
	*pp = p + w;
	switch (c) {
	case 0xca: {
		uint32_t b32 = (uint32_t)raw;
		float f;
		memcpy(&f, &b32, 4);
		o->type = LIN_MP_FLOAT;
		o->v.f = f;
		break;
	}
	case 0xcb:
		o->type = LIN_MP_FLOAT;
		memcpy(&o->v.f, &raw, 8);
		break;
	case 0xcc:
	case 0xcd:
	case 0xce:
	case 0xcf:
		o->type = LIN_MP_UINT;
		o->v.u = raw;
		break;
	case 0xdc:
	case 0xdd:
		o->type = LIN_MP_ARRAY;
		o->len = (uint32_t)raw;
		break;
	case 0xde:
	case 0xdf:
		o->type = LIN_MP_MAP;
		o->len = (uint32_t)raw;
		break;
	default: { /* signed family: sign-extend */
		int64_t s;
		if (w == 1)
			s = (int8_t)raw;
		else if (w == 2)
			s = (int16_t)raw;
		else if (w == 4)
			s = (int32_t)raw;
		else
			s = (int64_t)raw;
		if (s >= 0) {
			o->type = LIN_MP_UINT;
			o->v.u = (uint64_t)s;
		} else {
			o->type = LIN_MP_INT;
			o->v.i = s;
		}
	}
	}
	return LIN_MP_OK;
}

/* Decode one token. Return: LIN_MP_OK (*pp advanced), LIN_MP_SHORT (need more bytes,
 * *pp unchanged), LIN_MP_BAD (reserved byte 0xc1). */
static inline int lin_mp_read(const uint8_t **pp, const uint8_t *end, struct lin_mp_val *o)
{
	const uint8_t *p = *pp;
	if (p >= end)
		return LIN_MP_SHORT;
	uint8_t c = *p;
	if (c <= 0x7f) {
		o->type = LIN_MP_UINT;
		o->v.u = c;
		*pp = p + 1;
		return LIN_MP_OK;
	}
	if (c >= 0xe0) {
		o->type = LIN_MP_INT;
		o->v.i = (int8_t)c;
		*pp = p + 1;
		return LIN_MP_OK;
	}
	if (c <= 0x8f) {
		o->type = LIN_MP_MAP;
		o->len = c & 0x0f;
		*pp = p + 1;
		return LIN_MP_OK;
	}
	if (c <= 0x9f) {
		o->type = LIN_MP_ARRAY;
		o->len = c & 0x0f;
		*pp = p + 1;
		return LIN_MP_OK;
	}
	if (c <= 0xbf) {
		uint32_t len = c & 0x1f;
		if ((size_t)(end - p - 1) < len)
			return LIN_MP_SHORT;
		o->type = LIN_MP_STR;
		o->len = len;
		o->p = p + 1;
		*pp = p + 1 + len;
		return LIN_MP_OK;
	}
	if (c == 0xc0) {
		o->type = LIN_MP_NIL;
		*pp = p + 1;
		return LIN_MP_OK;
	}
	if (c == 0xc2 || c == 0xc3) {
		o->type = LIN_MP_BOOL;
		o->v.b = (c == 0xc3);
		*pp = p + 1;
		return LIN_MP_OK;
	}
	return lin_mp_read_sized(pp, end, o, c);
}

#endif
