/* SPDX-License-Identifier: MIT */
/*
 * decode.h - CUPTI activity buffer -> lineage trace records (docs/cupti.md).
 *
 * A pure decoder: it walks one buffer of CUPTI activity records with
 * cuptiActivityGetNextRecord and packs one trace record per decodable activity record into
 * a msgpack packer. It keeps no state between buffers, so nothing depends on the order in
 * which records or buffers arrive. Internal to the library (and its tests); never installed.
 */
#ifndef LIN_CUPTI_DECODE_H
#define LIN_CUPTI_DECODE_H

#include <stddef.h>
#include <stdint.h>
#include <msgpack.h>

#include "lineage/cupti.h"

/*
 * lin_cupti_intern_fn - give the string id of @s in the trace's string table, writing the
 * string record first if needed (into the same packer, before the record that uses it).
 * Return: the id, or 0 to write the name as nil.
 */
typedef uint64_t (*lin_cupti_intern_fn)(void *user, const char *s);

/*
 * struct lin_cupti_decoder - where decoded records go.
 * @pk: packer the trace records are packed into (the caller holds whatever lock guards it).
 * @intern, @intern_user: kernel-name interning; @intern may be NULL (names become nil).
 */
struct lin_cupti_decoder {
	msgpack_packer *pk;
	lin_cupti_intern_fn intern;
	void *intern_user;
};

/*
 * lin_cupti_decode_buffer - decode @valid bytes of CUPTI activity records at @buf.
 * Records of a kind CUPTI knows but the trace has no record for are counted as skipped.
 * A record CUPTI cannot walk (unknown kind, incomplete record) ends the walk: it is counted
 * as invalid and a `dropped` record (source 2, reason "undecodable_record") is packed, since
 * the rest of the buffer is lost.
 * @st: counters to add to (not reset); may be NULL.
 * Return: 0; -EINVAL (NULL decoder/packer, or NULL @buf with @valid > 0); -LIN_EBACKEND
 * when the walk stopped at an undecodable record (what came before it was packed).
 * Ownership: @buf is only read; kernel name pointers are passed to @intern, not kept.
 * Context: any thread; no allocation except through the packer and @intern.
 */
int lin_cupti_decode_buffer(const struct lin_cupti_decoder *d, const uint8_t *buf, size_t valid,
			    struct lin_cupti_decode_stats *st);

#endif
