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
 * inlined. The bytes are msgpack-c's, and each encoder below is expanded from records.def
 * as its lin_tf_* namesake in tracefmt.c is (test_lineage_trace checks them byte for
 * byte).
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
	if (v == LIN_NIL)
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

/* One field of encoding enc (records.def) from v[i] or *x, as tracefmt.c's PUT_*. */
#define LIN_TFAST_U(f, v, x, i) lin_tfast_uint64(f, v[i])
#define LIN_TFAST_O(f, v, x, i) lin_tfast_opt(f, v[i])
#define LIN_TFAST_Z(f, v, x, i) lin_tfast_nz(f, v[i])
#define LIN_TFAST_I(f, v, x, i) lin_tfast_int64(f, (int64_t)v[i])
#define LIN_TFAST_B(f, v, x, i) (v[i] ? lin_tfast_true(f) : lin_tfast_false(f))
#define LIN_TFAST_S(f, v, x, i) (lin_tfast_str(f, x->len), lin_tfast_str_body(f, x->str, x->len))
#define LIN_TFAST_N(f, v, x, i) \
	(x->str ? (lin_tfast_str(f, x->len), lin_tfast_str_body(f, x->str, x->len)) : lin_tfast_nil(f))
#define LIN_TFAST_A(f, v, x, i) lin_tfast_arr(f, x)

static inline int lin_tfast_arr(struct lin_tfast *f, const struct lin_tf_var *x)
{
	lin_tfast_array(f, x->n);
	for (size_t i = 0; i < x->n; i++)
		lin_tfast_uint64(f, x->arr[i]);
	return 0;
}

/* lin_tfast_rec_<name>: each record's encoder, expanded from records.def as tracefmt.c's
 * lin_tf_rec_<name> is (the same bytes). The caller makes room for what it writes. */
#define LIN_RECORD(R, name) \
	static inline void lin_tfast_rec_##name(struct lin_tfast *f, const uint64_t *v, \
						const struct lin_tf_var *x) \
	{ \
		(void)v; \
		(void)x; \
		lin_tfast_array(f, LIN_F_##R##__N + 1); \
		lin_tfast_uint32(f, (uint32_t)LIN_REC_##R);
#define LIN_FIELD(R, F, name, type, enc) LIN_TFAST_##enc(f, v, x, LIN_F_##R##_##F);
#define LIN_SINCE(R)
#define LIN_END(R) }
#include "records.def"
#undef LIN_RECORD
#undef LIN_FIELD
#undef LIN_SINCE
#undef LIN_END

/* The records of the launch path, each field an argument. */
static inline void lin_tfast_token_capture(struct lin_tfast *f, uint64_t host_ns, uint64_t tid,
					   uint32_t kind, uint64_t target, uint64_t version, uint64_t seq)
{
	const uint64_t v[LIN_F_TOKEN_CAPTURE__N] = {
		[LIN_F_TOKEN_CAPTURE_HOST_NS] = host_ns,  [LIN_F_TOKEN_CAPTURE_TID] = tid,
		[LIN_F_TOKEN_CAPTURE_TARGET_KIND] = kind, [LIN_F_TOKEN_CAPTURE_TARGET] = target,
		[LIN_F_TOKEN_CAPTURE_VERSION] = version,  [LIN_F_TOKEN_CAPTURE_CAPTURE_SEQ] = seq,
	};
	lin_tfast_rec_token_capture(f, v, NULL);
}

static inline void lin_tfast_token_adopt(struct lin_tfast *f, uint64_t host_ns, uint64_t tid,
					 uint32_t kind, uint64_t target, uint64_t version,
					 uint64_t capture_tid, uint64_t capture_seq, uint32_t depth,
					 uint32_t late)
{
	const uint64_t v[LIN_F_TOKEN_ADOPT__N] = {
		[LIN_F_TOKEN_ADOPT_HOST_NS] = host_ns,
		[LIN_F_TOKEN_ADOPT_TID] = tid,
		[LIN_F_TOKEN_ADOPT_TARGET_KIND] = kind,
		[LIN_F_TOKEN_ADOPT_TARGET] = target,
		[LIN_F_TOKEN_ADOPT_VERSION] = version,
		[LIN_F_TOKEN_ADOPT_CAPTURE_TID] = capture_tid,
		[LIN_F_TOKEN_ADOPT_CAPTURE_SEQ] = capture_seq,
		[LIN_F_TOKEN_ADOPT_DEPTH] = depth,
		[LIN_F_TOKEN_ADOPT_LATE] = late,
	};
	lin_tfast_rec_token_adopt(f, v, NULL);
}

static inline void lin_tfast_scope_close(struct lin_tfast *f, uint64_t host_ns, uint64_t tid,
					 uint32_t kind, uint64_t target, uint32_t depth)
{
	const uint64_t v[LIN_F_SCOPE_CLOSE__N] = {
		[LIN_F_SCOPE_CLOSE_HOST_NS] = host_ns,  [LIN_F_SCOPE_CLOSE_TID] = tid,
		[LIN_F_SCOPE_CLOSE_TARGET_KIND] = kind, [LIN_F_SCOPE_CLOSE_TARGET] = target,
		[LIN_F_SCOPE_CLOSE_DEPTH] = depth,
	};
	lin_tfast_rec_scope_close(f, v, NULL);
}

static inline void lin_tfast_launch(struct lin_tfast *f, uint64_t host_ns, uint64_t tid,
				    uint64_t epoch, uint64_t version, uint64_t ext_id,
				    uint64_t name_sid, uint64_t api_sid, uint64_t correlation,
				    uint64_t depth, uint32_t late)
{
	const uint64_t v[LIN_F_LAUNCH__N] = {
		[LIN_F_LAUNCH_HOST_NS] = host_ns, [LIN_F_LAUNCH_TID] = tid,
		[LIN_F_LAUNCH_EPOCH] = epoch,     [LIN_F_LAUNCH_VERSION] = version,
		[LIN_F_LAUNCH_EXT_ID] = ext_id,   [LIN_F_LAUNCH_NAME_SID] = name_sid,
		[LIN_F_LAUNCH_API] = api_sid,     [LIN_F_LAUNCH_CORRELATION] = correlation,
		[LIN_F_LAUNCH_DEPTH] = depth,     [LIN_F_LAUNCH_LATE] = late,
	};
	lin_tfast_rec_launch(f, v, NULL);
}

static inline void lin_tfast_launch_end(struct lin_tfast *f, uint64_t host_ns, uint64_t tid, uint64_t depth)
{
	const uint64_t v[LIN_F_LAUNCH_END__N] = {
		[LIN_F_LAUNCH_END_HOST_NS] = host_ns,
		[LIN_F_LAUNCH_END_TID] = tid,
		[LIN_F_LAUNCH_END_DEPTH] = depth,
	};
	lin_tfast_rec_launch_end(f, v, NULL);
}

#endif
