/* SPDX-License-Identifier: MIT */
/* vtab.c - see vtab.h. */
#include <stdlib.h>
#include <string.h>

#include "vtab.h"

static inline uint64_t mix(uint64_t a, uint64_t b)
{
	uint64_t h = a ^ (b * 0x9e3779b97f4a7c15ULL);
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 33;
	return h;
}

static inline uint64_t *slot(const struct lin_vtab *t, size_t i)
{
	return (uint64_t *)(t->slots + i * t->esz);
}

void lin_vtab_init(struct lin_vtab *t, size_t payload)
{
	memset(t, 0, sizeof(*t));
	t->esz = 16 + ((payload + 7) & ~(size_t)7);
}

void lin_vtab_free(struct lin_vtab *t)
{
	free(t->slots);
	t->slots = NULL;
	t->cap = t->n = 0;
}

void *lin_vtab_find(const struct lin_vtab *t, uint64_t k0, uint64_t k1)
{
	if (!t->cap)
		return NULL;
	k1 |= LIN_VTAB_USED;
	size_t mask = t->cap - 1;
	for (size_t i = mix(k0, k1) & mask;; i = (i + 1) & mask) {
		uint64_t *s = slot(t, i);
		if (!s[1])
			return NULL;
		if (s[0] == k0 && s[1] == k1)
			return s + 2;
	}
}

static int grow(struct lin_vtab *t)
{
	size_t ncap = t->cap ? t->cap * 2 : 64;
	uint8_t *ns = calloc(ncap, t->esz);
	if (!ns)
		return -1;
	struct lin_vtab old = *t;
	t->slots = ns;
	t->cap = ncap;
	for (size_t i = 0; i < old.cap; i++) {
		uint64_t *s = slot(&old, i);
		if (!s[1])
			continue;
		for (size_t j = mix(s[0], s[1]) & (ncap - 1);; j = (j + 1) & (ncap - 1)) {
			uint64_t *d = slot(t, j);
			if (!d[1]) {
				memcpy(d, s, t->esz);
				break;
			}
		}
	}
	free(old.slots);
	return 0;
}

void *lin_vtab_get(struct lin_vtab *t, uint64_t k0, uint64_t k1, bool *fresh)
{
	void *p = lin_vtab_find(t, k0, k1);
	if (p) {
		*fresh = false;
		return p;
	}
	if ((t->n + 1) * 10 > t->cap * 7 && grow(t) != 0)
		return NULL;
	k1 |= LIN_VTAB_USED;
	size_t mask = t->cap - 1;
	for (size_t i = mix(k0, k1) & mask;; i = (i + 1) & mask) {
		uint64_t *s = slot(t, i);
		if (!s[1]) {
			memset(s, 0, t->esz);
			s[0] = k0;
			s[1] = k1;
			t->n++;
			*fresh = true;
			return s + 2;
		}
	}
}

void lin_vtab_del(struct lin_vtab *t, void *payload)
{
	size_t mask = t->cap - 1;
	size_t i = (size_t)((uint8_t *)payload - 16 - t->slots) / t->esz;
	memset(slot(t, i), 0, t->esz);
	t->n--;
	for (size_t j = (i + 1) & mask;; j = (j + 1) & mask) {
		uint64_t *s = slot(t, j);
		if (!s[1])
			return;
		size_t home = mix(s[0], s[1]) & mask;
		/* Move s into the hole at i when its home is not in (i, j]. */
		bool between = (i <= j) ? (home > i && home <= j) : (home > i || home <= j);
		if (!between) {
			memcpy(slot(t, i), s, t->esz);
			memset(s, 0, t->esz);
			i = j;
		}
	}
}

void *lin_vtab_next(const struct lin_vtab *t, size_t *it, struct lin_vkey *key)
{
	while (*it < t->cap) {
		uint64_t *s = slot(t, (*it)++);
		if (s[1]) {
			if (key) {
				key->k0 = s[0];
				key->k1 = s[1] & ~LIN_VTAB_USED;
			}
			return s + 2;
		}
	}
	return NULL;
}

size_t lin_vtab_bytes(const struct lin_vtab *t) { return t->cap * t->esz; }

void lin_vec_init(struct lin_vec *v, size_t esz)
{
	memset(v, 0, sizeof(*v));
	v->esz = esz;
}

void lin_vec_free(struct lin_vec *v)
{
	free(v->data);
	v->data = NULL;
	v->n = v->cap = 0;
}

void *lin_vec_push(struct lin_vec *v)
{
	if (v->n == v->cap) {
		size_t ncap = v->cap ? v->cap * 2 : 16;
		void *nd = realloc(v->data, ncap * v->esz);
		if (!nd)
			return NULL;
		v->data = nd;
		v->cap = ncap;
	}
	void *p = v->data + v->n++ * v->esz;
	memset(p, 0, v->esz);
	return p;
}
