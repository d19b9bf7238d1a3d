/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer harness for the CUPTI decoder (attach mode hands it bytes from another
 * client). Input byte 0 chooses how the rest becomes an activity buffer: as it is, or
 * built from real CUPTI 13 records whose kinds and fields come from the input (so most
 * inputs reach the decoding paths, not just the first kind check), with optional garbage
 * records and a cut-short valid size. Whatever the bytes, the decoder must return 0 or
 * -LIN_EBACKEND, write only whole msgpack objects, report a loss exactly when it returns
 * -LIN_EBACKEND, and never read past the valid size (ASan); for buffers of known kinds
 * only, it must walk every whole record and count a cut one as lost. Kernel names are not
 * interned (a real buffer's name pointers are CUPTI's; fuzzed ones point nowhere).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cupti.h>
#include <msgpack.h>

#include "decode.h"
#include "lineage/common.h"
#include "lineage/trace_format.h"

#define CAP (64u << 10)

static const struct {
	uint32_t kind;
	size_t size;
} kinds[] = {
	{ CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION, sizeof(CUpti_ActivityExternalCorrelation) },
	{ CUPTI_ACTIVITY_KIND_RUNTIME, sizeof(CUpti_ActivityAPI) },
	{ CUPTI_ACTIVITY_KIND_DRIVER, sizeof(CUpti_ActivityAPI) },
	{ CUPTI_ACTIVITY_KIND_INTERNAL_LAUNCH_API, sizeof(CUpti_ActivityAPI) },
	{ CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, sizeof(CUpti_ActivityKernel10) },
	{ CUPTI_ACTIVITY_KIND_MEMCPY, sizeof(CUpti_ActivityMemcpy6) },
	{ CUPTI_ACTIVITY_KIND_MEMSET, sizeof(CUpti_ActivityMemset4) },
	{ CUPTI_ACTIVITY_KIND_GRAPH_TRACE, sizeof(CUpti_ActivityGraphTrace2) },
	{ CUPTI_ACTIVITY_KIND_CUDA_EVENT, sizeof(CUpti_ActivityCudaEvent2) },
	{ CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, sizeof(CUpti_ActivitySynchronization2) },
	{ CUPTI_ACTIVITY_KIND_STREAM, sizeof(CUpti_ActivityStream) }, /* stepped over */
};
#define N_KINDS (sizeof(kinds) / sizeof(kinds[0]))

/* What build() made: where each record ends, its kind, and whether all are of known kinds. */
struct built {
	size_t n;
	size_t end[CAP / 24 + 1];
	uint32_t kind[CAP / 24 + 1];
	bool all_known;
};

/* Records from the input: [selector, fill...] per record. Return the bytes built. */
static size_t build(uint8_t *buf, const uint8_t *in, size_t n, struct built *b)
{
	size_t used = 0, at = 0;

	b->n = 0;
	b->all_known = true;
	while (at < n) {
		uint8_t sel = in[at++];
		size_t size = (sel & 0x80) ? 8u * (1u + (sel & 7u)) : kinds[sel % N_KINDS].size;
		uint32_t kind = (sel & 0x80) ? (uint32_t)in[at < n ? at : 0] * 7u /* any kind */
					     : kinds[sel % N_KINDS].kind;

		if (used + size > CAP)
			break;
		for (size_t i = 0; i < size; i++) /* fields from the input, cycling */
			buf[used + i] = n ? in[(at + i) % n] : 0;
		memcpy(buf + used, &kind, sizeof(kind));
		at += size / 8;
		used += size;
		b->all_known = b->all_known && !(sel & 0x80);
		b->kind[b->n] = kind;
		b->end[b->n++] = used;
	}
	return used;
}

/*
 * The oracle for buffers of known kinds only: every whole record within @valid is walked,
 * a record cut by @valid is one loss (source 4), nothing else, and every whole CUDA_EVENT,
 * SYNCHRONIZATION and STREAM record is decoded as such (or skipped: STREAM).
 */
static void check_known(const struct built *b, size_t valid, int r,
			const struct lin_cupti_decode_stats *st)
{
	size_t whole = 0;
	bool cut;

	while (whole < b->n && b->end[whole] <= valid)
		whole++;
	size_t left = valid - (whole ? b->end[whole - 1] : 0);
	cut = whole < b->n && left > 0;
	/* Under 4 bytes the cut record's kind cannot be read: the rest is lost (source 5). */
	bool as_rest = cut && left < sizeof(uint32_t);
	if (st->records != whole || st->undecodable != (cut && !as_rest ? 1u : 0u) ||
	    st->invalid != (as_rest ? 1u : 0u))
		abort();
	if (r != (cut ? -LIN_EBACKEND : 0))
		abort();
	uint64_t events = 0, syncs = 0, streams = 0;
	for (size_t i = 0; i < whole; i++) {
		events += b->kind[i] == CUPTI_ACTIVITY_KIND_CUDA_EVENT;
		syncs += b->kind[i] == CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
		streams += b->kind[i] == CUPTI_ACTIVITY_KIND_STREAM;
	}
	if (st->cuda_event != events || st->sync != syncs || st->skipped != streams)
		abort();
}

static size_t dropped_records(const char *data, size_t len, size_t *objects)
{
	msgpack_unpacked u;
	size_t off = 0, dropped = 0;

	*objects = 0;
	msgpack_unpacked_init(&u);
	while (off < len) {
		if (msgpack_unpack_next(&u, data, len, &off) != MSGPACK_UNPACK_SUCCESS)
			abort(); /* a partial object: the decoder wrote half a record */
		(*objects)++;
		const msgpack_object *o = &u.data;
		if (o->type == MSGPACK_OBJECT_ARRAY && o->via.array.size == 5 &&
		    o->via.array.ptr[0].type == MSGPACK_OBJECT_POSITIVE_INTEGER &&
		    o->via.array.ptr[0].via.u64 == LIN_REC_DROPPED)
			dropped++;
	}
	msgpack_unpacked_destroy(&u);
	return dropped;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static _Alignas(8) uint8_t buf[CAP];
	struct lin_cupti_decode_stats st = { .sz = sizeof(st) };
	msgpack_sbuffer sb;
	msgpack_packer pk;
	static struct built b;
	size_t valid, objects;
	bool oracle = false;

	if (size < 1)
		return 0;
	memset(buf, 0, sizeof(buf));
	if (data[0] & 1) {
		valid = size - 1 < CAP ? size - 1 : CAP;
		memcpy(buf, data + 1, valid);
	} else {
		valid = build(buf, data + 1, size - 1, &b);
		if ((data[0] & 2) && valid > 0) /* cut the last record short */
			valid -= 1 + data[0] % (valid < 64 ? valid : 64);
		oracle = b.all_known;
	}
	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	struct lin_cupti_decoder d = { .pk = &pk };
	/* The buffer is handed over as the valid bytes only, in a heap block of that size,
	 * so ASan sees any read past them. */
	uint8_t *exact = malloc(valid ? valid : 1);
	if (!exact)
		abort();
	memcpy(exact, buf, valid);
	int r = lin_cupti_decode_buffer(&d, exact, valid, &st);
	free(exact);
	if (r != 0 && r != -LIN_EBACKEND)
		abort();
	size_t dropped = dropped_records(sb.data, sb.size, &objects);
	if ((r == -LIN_EBACKEND) != (dropped > 0))
		abort(); /* a loss is reported exactly when one is returned */
	if ((r == 0) != (st.lost_bytes == 0 && st.unsupported == 0))
		abort();
	if (st.records > valid / sizeof(CUpti_Activity))
		abort();
	if (oracle)
		check_known(&b, valid, r, &st);
	msgpack_sbuffer_destroy(&sb);
	return 0;
}
