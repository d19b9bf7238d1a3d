/* SPDX-License-Identifier: MIT */
/*
 * vtab.h - open-addressing hash table of fixed-size entries, and a growable vector.
 *
 * Keys are two 64-bit words; LIN_VTAB_USED is or-ed into k1 so that an all-zero slot is
 * empty. Linear probing with backward-shift deletion (no tombstones), so a table that
 * evicts closed joins stays as small as the joins still open. Entries are zeroed on insert.
 * Pointers into the table are valid until the next insert or delete.
 * Context: single-threaded.
 */
#ifndef LIN_VALIDATOR_VTAB_H
#define LIN_VALIDATOR_VTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LIN_VTAB_USED (1ULL << 63)

struct lin_vkey {
	uint64_t k0, k1;
};

struct lin_vtab {
	uint8_t *slots;
	size_t cap; /* power of two, 0 when empty */
	size_t n;
	size_t esz; /* entry size: 16-byte key + payload, multiple of 8 */
};

void lin_vtab_init(struct lin_vtab *t, size_t payload);
void lin_vtab_free(struct lin_vtab *t);
/* The payload of the entry, or NULL. */
void *lin_vtab_find(const struct lin_vtab *t, uint64_t k0, uint64_t k1);
/* Find or insert; *fresh tells which. NULL on ENOMEM. */
void *lin_vtab_get(struct lin_vtab *t, uint64_t k0, uint64_t k1, bool *fresh);
void lin_vtab_del(struct lin_vtab *t, void *payload);
/* Iterate: start with *it = 0; returns payload or NULL at the end; *key gets the key. */
void *lin_vtab_next(const struct lin_vtab *t, size_t *it, struct lin_vkey *key);
size_t lin_vtab_bytes(const struct lin_vtab *t);

struct lin_vec {
	uint8_t *data;
	size_t n, cap, esz;
};

void lin_vec_init(struct lin_vec *v, size_t esz);
void lin_vec_free(struct lin_vec *v);
/* Append a zeroed element; NULL on ENOMEM. */
void *lin_vec_push(struct lin_vec *v);
static inline void *lin_vec_at(const struct lin_vec *v, size_t i) { return v->data + i * v->esz; }

#endif
