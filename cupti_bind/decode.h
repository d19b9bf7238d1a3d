/* SPDX-License-Identifier: MIT */
/*
 * decode.h - CUPTI activity buffer -> lineage trace records (docs/cupti.md).
 *
 * A pure decoder: it walks one buffer of CUPTI activity records with
 * cuptiActivityGetNextRecord (through the binding's table, cupti_api.h) and packs one trace record per decodable activity record into
 * a msgpack packer. It keeps no state between buffers, so nothing depends on the order in
 * which records or buffers arrive. Internal to the library (and its tests); never installed.
 */
#ifndef LIN_CUPTI_DECODE_H
#define LIN_CUPTI_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <msgpack.h>

#include "lineage/cupti.h"

/* Activity kinds the layout table covers (CUPTI 13.0 has 56; checked in decode.c). */
#define LIN_CUPTI_NKINDS 64

/*
 * struct lin_cupti_layouts - what the libcupti loaded at run time does with each record
 * kind, against what this decoder was compiled for.
 * @version: cuptiGetVersion (0 when the call failed). @built_for: CUPTI_API_VERSION.
 * @stride: bytes cuptiActivityGetNextRecord steps over for each kind; 0 when it does not
 * walk that kind (unknown, deprecated or CUPTI_ACTIVITY_KIND_INVALID).
 * @ok: for each kind the decoder reads, whether the loaded library's layout is the one
 * this build reads: the same CUPTI major version and a stride equal to the compiled
 * struct's size. Records of a decoded kind that is not ok are counted and reported as a
 * loss (dropped source 6), never read.
 * @min_stride: the smallest non-zero stride (bounds the records a lost range could hold).
 */
struct lin_cupti_layouts {
	uint32_t version;
	uint32_t built_for;
	uint32_t min_stride;
	uint32_t n_refused; /* decoded kinds not ok */
	uint16_t stride[LIN_CUPTI_NKINDS];
	bool ok[LIN_CUPTI_NKINDS];
};

/* How many bytes libcupti steps over for a record of @kind (0: it does not walk it). */
typedef size_t (*lin_cupti_stride_fn)(uint32_t kind, void *user);

/*
 * lin_cupti_layouts_eval - fill @l for a libcupti that reports @version and walks each kind
 * as @stride says. Pure; the tests call it with made-up libraries.
 */
void lin_cupti_layouts_eval(struct lin_cupti_layouts *l, uint32_t version,
			    lin_cupti_stride_fn stride, void *user);

/*
 * lin_cupti_stride_probe - ask the loaded libcupti how far it steps over a record of
 * @kind: a record of that kind at offset 0 followed by EXTERNAL_CORRELATION markers in every
 * 8-byte slot; the offset of the second record cuptiActivityGetNextRecord returns is the
 * stride. Needs no driver. @user: the struct lin_cupti_api to walk with; NULL = the
 * binding's (lin_cupti_api); 0 when there is none.
 */
size_t lin_cupti_stride_probe(uint32_t kind, void *user);

/*
 * lin_cupti_layouts - the loaded libcupti's table, measured once per process
 * (cuptiGetVersion and one lin_cupti_stride_probe per kind, about 60 walks of a 4 KiB
 * buffer). Context: any thread; the first call blocks for the measurement.
 */
const struct lin_cupti_layouts *lin_cupti_layouts(void);

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
 * @layouts: the library's layout table; NULL = lin_cupti_layouts().
 */
struct lin_cupti_decoder {
	msgpack_packer *pk;
	lin_cupti_intern_fn intern;
	void *intern_user;
	const struct lin_cupti_layouts *layouts;
};

/*
 * lin_cupti_decode_buffer - decode @valid bytes of CUPTI activity records at @buf.
 * Nothing is discarded silently (docs/cupti.md, "Decoding"):
 * - records of a kind the trace has no record for are stepped over and counted as skipped
 *   (not a loss: lineage does not need them);
 * - a record whose layout this build does not read is counted, never read: one dropped
 *   record (source 6, reason naming the kind) per such kind in the buffer;
 * - a record cut short by the valid size, or one CUPTI refuses whose size is known, is
 *   stepped over and counted: dropped source 4, count = records stepped over;
 * - a record nothing can step over (unknown kind) ends the walk: dropped source 5 for the
 *   rest of the buffer, count 1 (a sound lower bound: the size of an unknown record is
 *   unknown), the reason giving the bytes lost and the most records they could hold.
 * @st: counters to add to (not reset); may be NULL.
 * Return: 0 when every byte was accounted for by a decoded or skipped record; -EINVAL
 * (NULL decoder/packer, or NULL @buf with @valid > 0); -LIN_EBACKEND when records were lost
 * (dropped records say which; everything decodable was packed).
 * Ownership: @buf is only read; kernel name pointers are passed to @intern, not kept.
 * Context: any thread; no allocation except through the packer and @intern.
 */
int lin_cupti_decode_buffer(const struct lin_cupti_decoder *d, const uint8_t *buf, size_t valid,
			    struct lin_cupti_decode_stats *st);

/*
 * lin_cupti_stats_add - add @from to @to, field by field, as far as @to->sz reaches (a
 * caller built against an older, shorter struct gets the fields it knows).
 */
void lin_cupti_stats_add(struct lin_cupti_decode_stats *to, const struct lin_cupti_decode_stats *from);

#endif
