/* SPDX-License-Identifier: MIT */
/*
 * xgen.h - trace builders shared by the ledger's tests (test_ledger.c) and the command-line
 * fixtures (gen.c): a request, its epoch, a handoff, a launch call and a kernel, written
 * with the project's own record encoders into one msgpack buffer.
 */
#ifndef LIN_TESTS_XGEN_H
#define LIN_TESTS_XGEN_H

#include <stdbool.h>
#include <stdint.h>

#include <msgpack.h>

#include "tracefmt.h"

#define SUBMITTER 100
#define WORKER 200

static msgpack_sbuffer sb __attribute__((unused));
static msgpack_packer pk;

static inline void begin_clock(const char *device_clock)
{
	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	struct lin_tf_header h = {
		LIN_TRACE_FORMAT_NAME, "t", "h", 1, 0, "tsc", 1e9, 5, "cupti", "ok", device_clock, 0
	};
	lin_tf_header(&pk, &h);
}

static inline void begin(void) { begin_clock("host"); }

/* Request @req begins at 1000, its epoch @ep is declared at 2000 on the submitter. */
static inline void work(uint64_t req, uint64_t ep)
{
	lin_tf_request_begin(&pk, 1000, SUBMITTER, req, LIN_NIL, LIN_NIL, LIN_NIL);
	lin_tf_epoch_declare(&pk, 2000, SUBMITTER, ep, 1, &req, 1, LIN_NIL, 0);
}

/* The token captured at @cap (LIN_NIL: untimed) on the submitter, adopted at @adopt by the worker. */
static inline void handoff(uint64_t ep, uint64_t cap, uint64_t adopt, uint64_t seq)
{
	lin_tf_token_capture(&pk, cap, SUBMITTER, LIN_TARGET_EPOCH, ep, 1, seq);
	lin_tf_token_adopt(&pk, adopt, WORKER, LIN_TARGET_EPOCH, ep, 1, SUBMITTER, seq, 1);
}

/* cudaLaunchKernel (cudaGraphLaunch with @graph) under @ep on @tid, [s, e]. */
static inline void call_api(uint64_t ep, uint64_t corr, uint64_t tid, uint64_t s, uint64_t e, bool graph)
{
	struct lin_tf_api a = { 1, graph ? 311 : 211, corr, s, e, 1, (uint32_t)tid, 0 };
	lin_tf_ext_correlation(&pk, 5, ep, corr);
	lin_tf_api(&pk, &a);
}

static inline void call(uint64_t ep, uint64_t corr, uint64_t tid, uint64_t s, uint64_t e)
{
	call_api(ep, corr, tid, s, e, false);
}

static inline void kern(uint64_t corr, uint32_t stream, uint64_t s, uint64_t e, uint64_t q,
			uint64_t sub, uint64_t graph, uint64_t name)
{
	/* 0 is nil in the encoder's kernel struct */
	struct lin_tf_kernel k = { corr,
				   s,
				   e,
				   0,
				   1,
				   stream,
				   corr,
				   graph,
				   0,
				   name,
				   q == LIN_NIL ? 0 : q,
				   sub == LIN_NIL ? 0 : sub,
				   false };
	lin_tf_kernel(&pk, &k);
}

/* An API record of @dom (1 runtime, 2 driver) without an ext record. */
static inline void api_rec(uint32_t dom, uint64_t cbid, uint64_t corr, uint64_t tid, uint64_t s,
			   uint64_t e)
{
	struct lin_tf_api a = { dom, cbid, corr, s, e, 1, (uint32_t)tid, 0 };
	lin_tf_api(&pk, &a);
}

/* A memcpy on (device 0, context 1, @stream) over [@s, @e]. */
static inline void copy_rec(uint64_t corr, uint32_t stream, uint64_t s, uint64_t e)
{
	struct lin_tf_memop m = { .correlation = corr,
				  .start_dev = s,
				  .end_dev = e,
				  .context = 1,
				  .stream = stream,
				  .bytes = 4096,
				  .kind_or_value = 1 };
	lin_tf_memcpy(&pk, &m);
}

/* A kernel on (@dev, @ctx, @stream), grid id @grid. */
static inline void kern_dc(uint64_t corr, uint32_t dev, uint32_t ctx, uint32_t stream, uint64_t s,
			   uint64_t e, uint64_t grid)
{
	struct lin_tf_kernel k = { corr, s, e, dev, ctx, stream, grid, 0, 0, 0, 0, 0, false };
	lin_tf_kernel(&pk, &k);
}

#endif
