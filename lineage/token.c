/* SPDX-License-Identifier: MIT */
/*
 * token.c - the launch path: token capture and adopt, scopes, launch begin/end, and the
 * token's text form.
 *
 * Everything here runs on application threads at launch rates: no allocation, no lock,
 * no RCU read section. A token names its registry slot, so checking it reads one cache line
 * (lin_registry_check). The integrity tag is XXH3 (inlined) over the identity fields.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "rt.h"

#define TOKEN_SEED 0x6c696e6561676531ULL /* "lineage1" */
#define TOKEN_FLAG_TEXT 1u
/* Cookie of a launch bracket that begin refused; real cookies are >= 1 << 32. */
#define LAUNCH_NOTHING_OPEN 1u

_Static_assert(sizeof(lin_token) == 32, "lin_token must stay 32 bytes");

/*
 * The tag covers the identity (id, version, slot, runtime, kind), not the capture fields:
 * XXH3 of 16 bytes with the runtime and kind folded into the seed (~1.3 ns inlined).
 */
static inline __attribute__((always_inline)) uint32_t token_tag(const lin_token *t)
{
	uint64_t in[2] = { t->id, ((uint64_t)t->version << 32) | t->slot };
	uint64_t seed = TOKEN_SEED ^ ((uint64_t)t->rt << 8) ^ t->kind;
	return (uint32_t)XXH3_64bits_withSeed(in, sizeof(in), seed);
}

/* The time of a capture or a scope close: none (0, written nil) with LIN_RT_LEAN_TIMESTAMPS. */
static inline uint64_t lean_ticks(const lin_runtime *rt)
{
	return (rt->flags & LIN_RT_LEAN_TIMESTAMPS) ? 0 : lin_clock_ticks(&rt->clock);
}

static void token_fill(lin_runtime *rt, lin_token *tok, uint8_t kind, uint64_t id, uint32_t version,
		       uint32_t slot, uint32_t tid, uint32_t seq)
{
	tok->id = id;
	tok->version = version;
	tok->slot = slot;
	tok->capture_tid = tid;
	tok->capture_seq = seq;
	tok->rt = rt->rt_tag;
	tok->kind = kind;
	tok->flags = 0;
	tok->tag = token_tag(tok);
}

LIN_API int lin_token_capture(lin_runtime *rt, lin_token *tok)
{
	if (LIN_UNLIKELY(!rt || !tok))
		return -EINVAL;
	struct lin_tstate *ts = lin_tstate_get(rt);
	if (LIN_UNLIKELY(!ts))
		return -ENOMEM;
	if (LIN_UNLIKELY(!ts->depth || !ts->scopes[ts->depth - 1].kind)) {
		/* An untraced code path handing work on: no error of the work's, counted. */
		atomic_fetch_add_explicit(&rt->no_context_captures, 1, memory_order_relaxed);
		memset(tok, 0, sizeof(*tok));
		return -LIN_ENOCONTEXT;
	}
	const struct lin_scope_ent *top = &ts->scopes[ts->depth - 1];
	uint32_t seq = ++ts->capture_seq;
	/* Without capture records the token names no capture (its adopt writes nil there):
	 * an adopt must never name a capture the trace does not have. */
	bool recorded = !(rt->flags & LIN_RT_NO_CAPTURE_EVENTS);
	token_fill(rt, tok, top->kind, top->id, top->version, top->slot, recorded ? ts->tid : 0,
		   recorded ? seq : 0);
	if (recorded)
		lin_event_put(ts, LIN_REC_TOKEN_CAPTURE, top->kind, 0, top->version, lean_ticks(rt),
			      top->id, seq);
	return 0;
}

LIN_API int lin_token_make(lin_runtime *rt, uint64_t id, lin_token *tok)
{
	if (!rt || !tok)
		return -EINVAL;
	struct lin_entity_info info = { .sz = sizeof(info) };
	uint32_t slot;
	int err = lin_registry_info(&rt->reg, id, &info, NULL, 0, &slot);
	if (err)
		return err;
	token_fill(rt, tok, (uint8_t)info.kind, id, info.version, slot, 0, 0);
	return 0;
}

/*
 * Why a version whose slot check failed is no longer current: its id still holds the slot
 * at another version (re-issued), or not (retired, its request ended, the slot reused).
 * Off the fast path: only when a check has failed.
 */
static uint8_t late_reason(lin_runtime *rt, uint32_t slot, uint64_t id)
{
	struct lin_slot *s = lin_registry_slot(&rt->reg, slot);
	return s && atomic_load_explicit(&s->id, memory_order_acquire) == id ? LIN_LATE_REISSUED
									     : LIN_LATE_ENDED;
}

/* Push a scope for a checked (kind, id, version), current or @late (enum lin_late); records
 * the adopt. @capture is (capture_tid << 32 | capture_seq), or LIN_NIL. */
static inline __attribute__((always_inline)) int
scope_push(lin_runtime *rt, struct lin_tstate *ts, uint8_t kind, uint64_t id, uint32_t version,
	   uint32_t slot, uint64_t capture, uint8_t late, lin_scope *scope)
{
	if (LIN_UNLIKELY(ts->depth >= LIN_MAX_SCOPES)) {
		lin_record_misuse(rt, ts, LIN_MISUSE_SCOPE_DEPTH, kind, id, version, ts->depth);
		return -LIN_ESCOPE_DEPTH;
	}
	struct lin_scope_ent *s = &ts->scopes[ts->depth++];
	s->id = id;
	s->version = version;
	s->kind = kind;
	s->late = late;
	s->slot = slot;
	s->cookie = ((uint64_t)ts->serial << 32) | ++ts->ctr;
	scope->cookie = s->cookie;
	lin_event_put(ts, LIN_REC_TOKEN_ADOPT, (uint8_t)(kind | late << 4), (uint16_t)ts->depth,
		      version, lin_clock_ticks(&rt->clock), id, capture);
	return 0;
}

LIN_API int lin_token_adopt(lin_runtime *rt, const lin_token *tok, lin_scope *scope)
{
	if (LIN_UNLIKELY(!rt || !tok || !scope))
		return -EINVAL;
	scope->cookie = 0;
	struct lin_tstate *ts = lin_tstate_get(rt);
	if (LIN_UNLIKELY(!ts))
		return -ENOMEM;
	if (LIN_UNLIKELY(!tok->id || tok->tag != token_tag(tok) ||
			 (tok->kind != LIN_TARGET_REQUEST && tok->kind != LIN_TARGET_EPOCH))) {
		lin_record_misuse(rt, ts, LIN_MISUSE_BAD_TOKEN, 0, LIN_NIL, 0, LIN_NIL);
		return -LIN_EBADTOKEN;
	}
	if (LIN_UNLIKELY(tok->rt != rt->rt_tag)) {
		lin_record_misuse(rt, ts, LIN_MISUSE_FOREIGN_TOKEN, tok->kind, tok->id,
				  tok->version, tok->rt);
		return -LIN_EFOREIGN;
	}
	uint8_t late = LIN_LATE_NONE;
	if (LIN_UNLIKELY(!lin_registry_check(&rt->reg, tok->slot, tok->id, tok->version))) {
		/* Its version ended: the work is late, not wrong. A token this runtime made and
		 * that never left the process adopts as a late scope, its launches joined to the
		 * version it names (docs/trace-format.md, "Late work"). One parsed from text may
		 * come from another process whose runtime tag collides with ours (16 bits): that
		 * cannot be checked once the slot has moved on, so it is not adopted. */
		if (tok->flags & TOKEN_FLAG_TEXT) {
			lin_record_misuse(rt, ts, LIN_MISUSE_STALE_TOKEN, tok->kind, tok->id,
					  tok->version, LIN_NIL);
			return -LIN_ESTALE_TOKEN;
		}
		late = late_reason(rt, tok->slot, tok->id);
		atomic_fetch_add_explicit(&rt->late_adopts, 1, memory_order_relaxed);
		lin_logger_log(&rt->logger, LIN_LOG_DEBUG,
			       "late adopt on thread %u: %s %llu version %u (%s)", lin_rt_gettid(),
			       tok->kind == LIN_TARGET_EPOCH ? "epoch" : "request",
			       (unsigned long long)tok->id, (unsigned)tok->version,
			       late == LIN_LATE_REISSUED ? "re-issued" : "retired or ended");
	}
	uint64_t capture = (tok->flags & TOKEN_FLAG_TEXT) || !tok->capture_tid
				   ? LIN_NIL
				   : ((uint64_t)tok->capture_tid << 32) | tok->capture_seq;
	return scope_push(rt, ts, tok->kind, tok->id, tok->version, tok->slot, capture, late, scope);
}

LIN_API int lin_scope_enter(lin_runtime *rt, uint64_t id, lin_scope *scope)
{
	if (!rt || !scope)
		return -EINVAL;
	scope->cookie = 0;
	struct lin_tstate *ts = lin_tstate_get(rt);
	if (!ts)
		return -ENOMEM;
	struct lin_entity_info info = { .sz = sizeof(info) };
	uint32_t slot;
	int err = lin_registry_info(&rt->reg, id, &info, NULL, 0, &slot);
	if (err)
		return err;
	return scope_push(rt, ts, (uint8_t)info.kind, id, info.version, slot, LIN_NIL,
			  LIN_LATE_NONE, scope);
}

LIN_API int lin_scope_enter_none(lin_runtime *rt, lin_scope *scope)
{
	if (LIN_UNLIKELY(!rt || !scope))
		return -EINVAL;
	scope->cookie = 0;
	struct lin_tstate *ts = lin_tstate_get(rt);
	if (LIN_UNLIKELY(!ts))
		return -ENOMEM;
	if (LIN_UNLIKELY(ts->depth >= LIN_MAX_SCOPES)) {
		lin_record_misuse(rt, ts, LIN_MISUSE_SCOPE_DEPTH, 0, LIN_NIL, 0, ts->depth);
		return -LIN_ESCOPE_DEPTH;
	}
	/* kind 0: no context. No record: nothing was adopted. */
	struct lin_scope_ent *s = &ts->scopes[ts->depth++];
	memset(s, 0, sizeof(*s));
	s->cookie = ((uint64_t)ts->serial << 32) | ++ts->ctr;
	scope->cookie = s->cookie;
	return 0;
}

LIN_API int lin_scope_exit(lin_runtime *rt, lin_scope *scope)
{
	if (LIN_UNLIKELY(!rt || !scope))
		return -EINVAL;
	struct lin_tstate *ts = lin_tstate_get(rt);
	if (LIN_UNLIKELY(!ts))
		return -ENOMEM;
	uint64_t cookie = scope->cookie;
	if (LIN_LIKELY(ts->depth && ts->scopes[ts->depth - 1].cookie == cookie && cookie)) {
		const struct lin_scope_ent *s = &ts->scopes[--ts->depth];
		if (s->kind) /* a none scope (lin_scope_enter_none) wrote no adopt */
			lin_event_put(ts, LIN_REC_SCOPE_CLOSE, s->kind, (uint16_t)(ts->depth + 1),
				      0, lean_ticks(rt), s->id, 0);
		scope->cookie = 0;
		return 0;
	}
	/* Misuse: find out which kind, for the error and the record. */
	if (!cookie) {
		lin_record_misuse(rt, ts, LIN_MISUSE_SCOPE_TWICE, 0, LIN_NIL, 0, LIN_NIL);
		return -LIN_ESCOPE_CLOSED;
	}
	if ((uint32_t)(cookie >> 32) != ts->serial) {
		lin_record_misuse(rt, ts, LIN_MISUSE_SCOPE_THREAD, 0, LIN_NIL, 0, cookie >> 32);
		return -LIN_ESCOPE_THREAD;
	}
	for (uint32_t i = 0; i + 1 < ts->depth; i++) {
		if (ts->scopes[i].cookie == cookie) {
			const struct lin_scope_ent *s = &ts->scopes[i];
			lin_record_misuse(rt, ts, LIN_MISUSE_SCOPE_ORDER, s->kind, s->id,
					  s->version, ts->depth);
			return -LIN_ESCOPE_ORDER;
		}
	}
	lin_record_misuse(rt, ts, LIN_MISUSE_SCOPE_TWICE, 0, LIN_NIL, 0, LIN_NIL);
	return -LIN_ESCOPE_CLOSED;
}

LIN_API int lin_scope_current(lin_runtime *rt, uint32_t *kind, uint64_t *id, uint32_t *version)
{
	if (!rt)
		return -EINVAL;
	struct lin_tstate *ts = lin_tstate_get(rt);
	if (!ts)
		return -ENOMEM;
	if (!ts->depth || !ts->scopes[ts->depth - 1].kind)
		return -LIN_ENOCONTEXT;
	const struct lin_scope_ent *s = &ts->scopes[ts->depth - 1];
	if (kind)
		*kind = s->kind;
	if (id)
		*id = s->id;
	if (version)
		*version = s->version;
	return 0;
}

int lin_rt_token_adopt_local(lin_runtime *rt, const lin_token *tok, lin_scope *scope)
{
	lin_token t = *tok;
	t.flags &= (uint8_t)~TOKEN_FLAG_TEXT; /* not in the tag: the identity is unchanged */
	return lin_token_adopt(rt, &t, scope);
}

uint8_t lin_rt_scope_late(lin_runtime *rt)
{
	struct lin_tstate *ts = lin_tstate_get(rt);
	if (!ts || !ts->depth || !ts->scopes[ts->depth - 1].kind)
		return LIN_LATE_NONE;
	const struct lin_scope_ent *top = &ts->scopes[ts->depth - 1];
	if (top->late)
		return top->late;
	return lin_registry_check(&rt->reg, top->slot, top->id, top->version)
		       ? LIN_LATE_NONE
		       : late_reason(rt, top->slot, top->id);
}

LIN_API int lin_launch_begin(lin_runtime *rt, const char *name, lin_launch *l)
{
	if (LIN_UNLIKELY(!rt || !l))
		return -EINVAL;
	l->cookie = 0;
	l->ext_id = 0;
	struct lin_tstate *ts = lin_tstate_get(rt);
	if (LIN_UNLIKELY(!ts))
		return -ENOMEM;
	int ret = 0;
	uint8_t late = LIN_LATE_NONE;
	const struct lin_scope_ent *top = ts->depth ? &ts->scopes[ts->depth - 1] : NULL;
	uint64_t epoch = (top && top->kind == LIN_TARGET_EPOCH) ? top->id : 0;
	uint64_t ticks = lin_clock_ticks(&rt->clock);
	if (LIN_UNLIKELY(ts->nlaunch >= LIN_MAX_LAUNCHES)) {
		/* No bracket to close later: push nothing, so nothing is left on the stack. */
		lin_record_misuse(rt, ts, LIN_MISUSE_LAUNCH_DEPTH, epoch ? LIN_TARGET_EPOCH : 0,
				  epoch ? epoch : LIN_NIL, 0, ts->nlaunch);
		ret = -LIN_ELAUNCH_DEPTH;
		epoch = 0;
	} else if (LIN_UNLIKELY(!epoch)) {
		lin_record_misuse(rt, ts, LIN_MISUSE_NO_CONTEXT, top ? top->kind : 0,
				  top ? top->id : LIN_NIL, 0, LIN_NIL);
		ret = -LIN_ENOCONTEXT;
	} else {
		/* Late work (its version retired or re-issued since it was adopted or entered):
		 * one cache line, the scope's own slot. The clock was read first, so a launch
		 * not marked late came before the change (its record's time says so too). */
		late = top->late;
		if (LIN_UNLIKELY(!late && !lin_registry_check(&rt->reg, top->slot, top->id, top->version)))
			late = late_reason(rt, top->slot, top->id);
		if (LIN_UNLIKELY(late))
			atomic_fetch_add_explicit(&rt->late_launches, 1, memory_order_relaxed);
	}
	if (epoch && rt->have_backend) {
		uint64_t ext = epoch | (late == LIN_LATE_ENDED      ? LIN_EXT_LATE_ENDED
					: late == LIN_LATE_REISSUED ? LIN_EXT_LATE_REISSUED
								    : 0);
		if (LIN_LIKELY(rt->be.push(rt->be.ctx, rt->ext_kind, ext) == 0)) {
			l->ext_id = ext;
		} else {
			lin_record_misuse(rt, ts, LIN_MISUSE_BACKEND_PUSH, LIN_TARGET_EPOCH, epoch,
					  top->version, LIN_NIL);
			ret = -LIN_EBACKEND;
		}
	}
	if (LIN_LIKELY(ret != -LIN_ELAUNCH_DEPTH)) {
		l->cookie = ((uint64_t)ts->serial << 32) | ++ts->ctr;
		ts->launch_ext[ts->nlaunch] = l->ext_id;
		ts->launches[ts->nlaunch++] = l->cookie;
	} else {
		l->cookie = LAUNCH_NOTHING_OPEN;
	}
	/* depth: the bracket's nesting depth, paired with its launch_end; 0 (nil): refused,
	 * no bracket open and no end to come. */
	lin_event_put(ts, LIN_REC_LAUNCH,
		      (uint8_t)((l->ext_id != 0 ? LIN_EV_LAUNCH_PUSHED : 0) |
				(unsigned)late << LIN_EV_LATE_SHIFT),
		      ret == -LIN_ELAUNCH_DEPTH ? 0 : (uint16_t)ts->nlaunch,
		      epoch ? top->version : 0, ticks, epoch ? epoch : LIN_NIL, (uintptr_t)name);
	if (rt->observer) {
		struct lin_launch_info info = { .epoch = epoch,
						.version = epoch ? top->version : 0,
						.tid = ts->tid,
						.name = name,
						.host_ns = lin_clock_ticks_to_ns(&rt->clock, ticks) };
		rt->observer(&info, rt->observer_user);
	}
	return ret;
}

static int backend_pop(lin_runtime *rt, struct lin_tstate *ts, uint64_t ext_id);

LIN_API int lin_launch_end(lin_runtime *rt, lin_launch *l)
{
	if (LIN_UNLIKELY(!rt || !l))
		return -EINVAL;
	struct lin_tstate *ts = lin_tstate_get(rt);
	if (LIN_UNLIKELY(!ts))
		return -ENOMEM;
	int ret = 0;
	if (LIN_UNLIKELY(l->cookie == LAUNCH_NOTHING_OPEN)) {
		l->cookie = 0; /* begin refused it (-LIN_ELAUNCH_DEPTH): nothing to close */
		return 0;
	}
	if (LIN_UNLIKELY(!l->cookie || !ts->nlaunch || ts->launches[ts->nlaunch - 1] != l->cookie)) {
		/* Refused, nothing changed: the caller can still end the inner brackets and
		 * then this one. What stays open at lin_runtime_free is popped there. */
		lin_record_misuse(rt, ts, LIN_MISUSE_LAUNCH_ORDER, 0, LIN_NIL, 0, LIN_NIL);
		return -LIN_ELAUNCH_ORDER;
	}
	lin_event_put(ts, LIN_REC_LAUNCH_END, 0, (uint16_t)ts->nlaunch--, 0, lean_ticks(rt), LIN_NIL, 0);
	if (l->ext_id && LIN_UNLIKELY(backend_pop(rt, ts, l->ext_id) != 0))
		ret = -LIN_EBACKEND;
	l->cookie = 0;
	l->ext_id = 0;
	return ret;
}

/* Pop the id the ending bracket pushed. When the top of the stack is not ours (another
 * tool pushed onto the same kind and has not popped), take ours out from under it and put
 * the other's back, so no later call on this thread carries an id lineage has closed; the
 * misuse is recorded either way. 0, or -LIN_EBACKEND. */
static int backend_pop(lin_runtime *rt, struct lin_tstate *ts, uint64_t ext_id)
{
	uint64_t popped = 0, under = 0;

	if (LIN_LIKELY(rt->be.pop(rt->be.ctx, rt->ext_kind, &popped) == 0 && popped == ext_id))
		return 0;
	lin_record_misuse(rt, ts, LIN_MISUSE_BACKEND_POP, LIN_TARGET_EPOCH, ext_id, 0, popped);
	if (popped && popped != ext_id && rt->be.pop(rt->be.ctx, rt->ext_kind, &under) == 0) {
		if (under != ext_id) /* ours is not there either: leave the stack as it was */
			(void)rt->be.push(rt->be.ctx, rt->ext_kind, under);
		(void)rt->be.push(rt->be.ctx, rt->ext_kind, popped);
	}
	return -LIN_EBACKEND;
}

/* At lin_runtime_free: the calling thread's open brackets take their ids off the
 * backend's stack (other threads' stacks can be popped only by those threads). */
void lin_launch_pop_open(lin_runtime *rt, struct lin_tstate *ts)
{
	while (ts->nlaunch > 0) {
		uint64_t ext = ts->launch_ext[--ts->nlaunch];

		if (ext && rt->have_backend)
			(void)backend_pop(rt, ts, ext);
	}
}

/* ---------------------------------------------------------------- text form */

LIN_API int lin_token_format(const lin_token *tok, char *buf, size_t len)
{
	if (!tok || !buf)
		return -EINVAL;
	if (len < LIN_TOKEN_TEXT_MAX)
		return -ENOSPC;
	int n = snprintf(buf, len, "lin1.%016" PRIx64 ".%" PRIx32 ".%" PRIx32 ".%x.%x.%08" PRIx32,
			 tok->id, tok->version, tok->slot, (unsigned)tok->rt, (unsigned)tok->kind,
			 tok->tag);
	return (n > 0 && (size_t)n < len) ? 0 : -EINVAL;
}

/* Parse exactly @digits (0: 1..max) lowercase hex digits ending at '.' or NUL. */
static const char *parse_hex(const char *p, unsigned max, unsigned exact, uint64_t *out)
{
	uint64_t v = 0;
	unsigned n = 0;
	for (; (*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f'); p++, n++) {
		if (n >= max)
			return NULL;
		v = (v << 4) | (uint64_t)(*p <= '9' ? *p - '0' : *p - 'a' + 10);
	}
	if (!n || (exact && n != exact))
		return NULL;
	*out = v;
	return p;
}

LIN_API int lin_token_parse(const char *text, lin_token *tok)
{
	if (!text || !tok)
		return -EINVAL;
	if (strncmp(text, "lin1.", 5) != 0)
		return -EINVAL;
	static const struct {
		unsigned max, exact;
	} f[6] = { { 16, 16 }, { 8, 0 }, { 8, 0 }, { 4, 0 }, { 2, 0 }, { 8, 8 } };
	uint64_t v[6];
	const char *p = text + 5;
	for (int i = 0; i < 6; i++) {
		p = parse_hex(p, f[i].max, f[i].exact, &v[i]);
		if (!p || *p != (i < 5 ? '.' : '\0'))
			return -EINVAL;
		if (i < 5)
			p++;
	}
	lin_token t = { .id = v[0],
			.version = (uint32_t)v[1],
			.slot = (uint32_t)v[2],
			.rt = (uint16_t)v[3],
			.kind = (uint8_t)v[4],
			.flags = TOKEN_FLAG_TEXT,
			.tag = (uint32_t)v[5] };
	if (!t.id || (t.kind != LIN_TARGET_REQUEST && t.kind != LIN_TARGET_EPOCH) ||
	    t.tag != token_tag(&t))
		return -LIN_EBADTOKEN;
	*tok = t;
	return 0;
}

/*
 * The 0.1-0.3 names, deprecated in runtime.h but still exported: binaries built against
 * them keep linking, sources keep compiling.
 */
LIN_API int lin_token_for(lin_runtime *rt, uint64_t id, lin_token *tok)
{
	return lin_token_make(rt, id, tok);
}

LIN_API int lin_current(lin_runtime *rt, uint32_t *kind, uint64_t *id, uint32_t *version)
{
	return lin_scope_current(rt, kind, id, version);
}
