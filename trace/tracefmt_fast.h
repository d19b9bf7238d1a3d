/* SPDX-License-Identifier: MIT */
/*
 * tracefmt_fast.h - the writer's encoders for the records of the launch path (launch,
 * launch_end, token_capture, token_adopt, scope_close), into a buffer the writer has
 * already made room in.
 *
 * msgpack-c's packer hands every primitive to a write callback through a function
 * pointer: for a launch, a dozen indirect calls of a few bytes each, most of the writer's
 * time per event. msgpack-c ships its packing routines as a template
 * (msgpack/pack_template.h, instantiated by msgpack/pack.h for msgpack_packer); here it is
 * instantiated a second time for a plain cursor, so each primitive is a few stores,
 * inlined. The bytes are msgpack-c's, and each encoder below writes exactly what its
 * lin_tf_* namesake in tracefmt.c writes (test_lineage_trace checks it byte for byte).
 *
 * Internal to the library; never installed. Context: the writer, under the output lock.
 */
#ifndef LINEAGE_TRACEFMT_FAST_H
#define LINEAGE_TRACEFMT_FAST_H

#include <stdint.h>
#include <string.h>

#include "tracefmt.h"

/* The most a fast record takes: an array header, the type, nine uint64 fields and a uint32. */
#define LIN_TFAST_MAX (1 + 1 + 9 * 9 + 5)

struct lin_tfast {
	char *p; /* the next byte to write; room for LIN_TFAST_MAX is the caller's */
};

#define msgpack_pack_inline_func(name) static inline int lin_tfast##name
#define msgpack_pack_inline_func_cint(name) static inline int lin_tfast##name
#define msgpack_pack_inline_func_fixint(name) static inline int lin_tfast_fix##name
#define msgpack_pack_user struct lin_tfast *
#define msgpack_pack_append_buffer(user, buf, len) \
	do { \
		memcpy((user)->p, (buf), (len)); \
		(user)->p += (len); \
		return 0; \
	} while (0)
/* The template's timestamp routine calls the ext header routine by its msgpack-c name. */
#define msgpack_pack_ext lin_tfast_ext
#include <msgpack/pack_template.h>
#undef msgpack_pack_ext

static inline void lin_tfast_opt(struct lin_tfast *f, uint64_t v)
{
	if (v == LIN_TF_NIL)
		lin_tfast_nil(f);
	else
		lin_tfast_uint64(f, v);
}

static inline void lin_tfast_nz(struct lin_tfast *f, uint64_t v)
{
	if (v == 0)
		lin_tfast_nil(f);
	else
		lin_tfast_uint64(f, v);
}

static inline void lin_tfast_head(struct lin_tfast *f, enum lin_rec_type type, size_t nfields)
{
	lin_tfast_array(f, nfields + 1);
	lin_tfast_uint32(f, (uint32_t)type);
}

static inline void lin_tfast_token_capture(struct lin_tfast *f, uint64_t host_ns, uint64_t tid,
					   uint32_t kind, uint64_t target, uint64_t version, uint64_t seq)
{
	lin_tfast_head(f, LIN_REC_TOKEN_CAPTURE, LIN_REC_NFIELDS_TOKEN_CAPTURE);
	lin_tfast_opt(f, host_ns);
	lin_tfast_uint64(f, tid);
	lin_tfast_uint32(f, kind);
	lin_tfast_uint64(f, target);
	lin_tfast_uint64(f, version);
	lin_tfast_uint64(f, seq);
}

static inline void lin_tfast_token_adopt(struct lin_tfast *f, uint64_t host_ns, uint64_t tid,
					 uint32_t kind, uint64_t target, uint64_t version,
					 uint64_t capture_tid, uint64_t capture_seq, uint32_t depth,
					 uint32_t late)
{
	lin_tfast_head(f, LIN_REC_TOKEN_ADOPT, LIN_REC_NFIELDS_TOKEN_ADOPT);
	lin_tfast_uint64(f, host_ns);
	lin_tfast_uint64(f, tid);
	lin_tfast_uint32(f, kind);
	lin_tfast_uint64(f, target);
	lin_tfast_uint64(f, version);
	lin_tfast_opt(f, capture_tid);
	lin_tfast_opt(f, capture_seq);
	lin_tfast_uint32(f, depth);
	lin_tfast_uint32(f, late);
}

static inline void lin_tfast_scope_close(struct lin_tfast *f, uint64_t host_ns, uint64_t tid,
					 uint32_t kind, uint64_t target, uint32_t depth)
{
	lin_tfast_head(f, LIN_REC_SCOPE_CLOSE, LIN_REC_NFIELDS_SCOPE_CLOSE);
	lin_tfast_opt(f, host_ns);
	lin_tfast_uint64(f, tid);
	lin_tfast_uint32(f, kind);
	lin_tfast_uint64(f, target);
	lin_tfast_uint32(f, depth);
}

static inline void lin_tfast_launch(struct lin_tfast *f, uint64_t host_ns, uint64_t tid,
				    uint64_t epoch, uint64_t version, uint64_t ext_id,
				    uint64_t name_sid, uint64_t api_sid, uint64_t correlation,
				    uint64_t depth, uint32_t late)
{
	lin_tfast_head(f, LIN_REC_LAUNCH, LIN_REC_NFIELDS_LAUNCH);
	lin_tfast_uint64(f, host_ns);
	lin_tfast_uint64(f, tid);
	lin_tfast_opt(f, epoch);
	lin_tfast_opt(f, version);
	lin_tfast_opt(f, ext_id);
	lin_tfast_nz(f, name_sid);
	lin_tfast_nz(f, api_sid);
	lin_tfast_opt(f, correlation);
	lin_tfast_opt(f, depth);
	lin_tfast_uint32(f, late);
}

static inline void lin_tfast_launch_end(struct lin_tfast *f, uint64_t host_ns, uint64_t tid, uint64_t depth)
{
	lin_tfast_head(f, LIN_REC_LAUNCH_END, LIN_REC_NFIELDS_LAUNCH_END);
	lin_tfast_opt(f, host_ns);
	lin_tfast_uint64(f, tid);
	lin_tfast_uint64(f, depth);
}

#endif
