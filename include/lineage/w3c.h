/* SPDX-License-Identifier: MIT */
/*
 * lineage/w3c.h - lineage tokens over the wire as W3C Trace Context headers.
 *
 * A request's lineage crosses a process or RPC boundary as two HTTP headers
 * (https://www.w3.org/TR/trace-context/):
 *   traceparent: 00-<trace-id>-<parent-id>-<flags>
 *                trace-id: the request's trace (see "Trace ids" below);
 *                parent-id: the span id of the submitting request or epoch;
 *   tracestate:  lin=1.<id16>.<version>.<slot>.<rt>.<kind>.<tag8>.<bind8>[,other members]
 *                the token's text form (lin_token_format) with the integrity tag, and
 *                bind8, a check that ties the entry to the trace id it was sent with.
 * An OpenTelemetry-instrumented RPC layer forwards both headers unchanged, so lineage rides
 * along without code changes. docs/fleet.md has the whole mapping.
 *
 * Trace ids. A request begun locally has the trace id (process key, request id): the upper
 * 8 bytes are lin_w3c_proc_key(host, pid) of the process that began it, the lower 8 bytes
 * its request id (never 0). A request begun from a received traceparent keeps that trace id
 * (lin_w3c_request_begin); the application passes the received context on when it calls
 * out again. Span ids are lin_w3c_span_id(process key, request or epoch id). The inline
 * helpers below are the whole derivation, so a reader of trace files (lineage-validate)
 * computes the same ids from a trace header's host and pid.
 *
 * Thread model: every function is a pure function of its arguments except
 * lin_w3c_inject and lin_w3c_request_begin, which call the runtime (any thread).
 * Nothing here allocates.
 */
#ifndef LINEAGE_W3C_H
#define LINEAGE_W3C_H

#include <stddef.h>
#include <stdint.h>

#include "lineage/common.h"
#include "lineage/runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

#define LIN_W3C_TRACEPARENT_MAX 56    /* "00-" 32 "-" 16 "-" 2, plus the NUL */
#define LIN_W3C_TRACESTATE_MAX 513    /* 512 characters, plus the NUL */
#define LIN_W3C_TRACESTATE_MEMBERS 32 /* list-members in one tracestate */
#define LIN_W3C_LIN_VALUE_MAX 72      /* the lin member's value, plus the NUL */
#define LIN_W3C_FLAG_SAMPLED 0x01u

/* A parsed traceparent. */
struct lin_w3c_traceparent {
	uint8_t version;      /* 0x00..0xfe; a later version was read by the 00 rules */
	uint8_t trace_id[16]; /* never all zero */
	uint8_t parent_id[8]; /* never all zero */
	uint8_t flags;        /* trace-flags; bit 0: sampled */
};

/* What arrived with a request: its traceparent and, when present, the lineage token. */
struct lin_w3c_context {
	struct lin_w3c_traceparent tp;
	int has_token;   /* a lin member was present and checked */
	lin_token token; /* parsed from the lin member (flags mark it as from text) */
};

/* Two headers to send; both NUL-terminated. */
struct lin_w3c_headers {
	char traceparent[LIN_W3C_TRACEPARENT_MAX];
	char tracestate[LIN_W3C_TRACESTATE_MAX];
};

/*
 * lin_w3c_traceparent_parse - parse a traceparent header value.
 * Version 00 must be exactly 55 characters; a higher version (not ff) is parsed by the
 * version-00 prefix and must be followed by end of string or '-'. Hex must be lowercase;
 * all-zero trace-id or parent-id is invalid. Leading/trailing spaces and tabs (HTTP OWS)
 * are ignored.
 * Return: 0 with *@out set; -EINVAL (malformed; *@out untouched).
 * Context: any thread; pure. Since: 0.1
 */
LIN_API int lin_w3c_traceparent_parse(const char *s, struct lin_w3c_traceparent *out);

/*
 * lin_w3c_traceparent_format - write @tp as a version-00 traceparent (always 00: a sender
 * does not send a version it does not implement).
 * Return: 0; -ENOSPC (@len < LIN_W3C_TRACEPARENT_MAX); -EINVAL (NULL, all-zero ids).
 * Context: any thread; pure. Since: 0.1
 */
LIN_API int lin_w3c_traceparent_format(const struct lin_w3c_traceparent *tp, char *buf, size_t len);

/*
 * lin_w3c_tracestate_find - check a whole tracestate value and find one member.
 * Checks the list grammar (key and value grammar, optional whitespace around members,
 * empty members allowed), at most 32 members, at most 512 characters, no duplicate key.
 * @key: the member to find (e.g. "lin"); @value/@len receive its value (may be NULL/0).
 * Return: 1 (found, copied), 0 (valid, not present); -EINVAL (malformed, duplicate key,
 * too many members, too long); -ENOSPC (found, but @len too small; nothing copied).
 * Context: any thread; pure. Since: 0.1
 */
LIN_API int lin_w3c_tracestate_find(const char *ts, const char *key, char *value, size_t len);

/*
 * lin_w3c_tracestate_put - a tracestate with @key=@value as the left-most member and any
 * older member of that key removed (the update rule of the specification). When the result
 * would exceed 32 members or 512 characters, members are dropped from the right.
 * @ts: the received tracestate, or NULL/"" for none. It must itself be valid.
 * Return: 0; -EINVAL (malformed @ts, @key or @value); -ENOSPC (@len too small).
 * Context: any thread; pure. Since: 0.1
 */
LIN_API int lin_w3c_tracestate_put(const char *ts, const char *key, const char *value, char *buf,
				   size_t len);

/*
 * lin_w3c_lin_format / lin_w3c_lin_parse - the lin member's value for @tok within the
 * trace @trace_id. Parse checks syntax, the token's integrity tag and the binding to
 * @trace_id.
 * Return: format: 0, -EINVAL, -ENOSPC (@len < LIN_W3C_LIN_VALUE_MAX); parse: 0, -EINVAL
 * (syntax, unknown lin version), -LIN_EBADTOKEN (tag), -LIN_EFOREIGN (the entry was made
 * for another trace id: a header pair that was not sent together).
 * Context: any thread; pure. Since: 0.1
 */
LIN_API int lin_w3c_lin_format(const lin_token *tok, const uint8_t trace_id[16], char *buf, size_t len);
LIN_API int lin_w3c_lin_parse(const char *value, const uint8_t trace_id[16], lin_token *tok);

/*
 * lin_w3c_extract - read the two received headers. @tracestate may be NULL or "" (a peer
 * that is not lineage-aware: has_token is 0, the trace id is still kept).
 * Return: 0 with *@out set; -EINVAL (malformed traceparent or tracestate, a malformed lin
 * member); -LIN_EBADTOKEN; -LIN_EFOREIGN (lin member bound to another trace id). On error
 * *@out is untouched: nothing is half-adopted.
 * Context: any thread; pure. Since: 0.1
 */
LIN_API int lin_w3c_extract(const char *traceparent, const char *tracestate, struct lin_w3c_context *out);

/*
 * lin_w3c_inject - the headers that carry @tok to another process.
 * @in: the context the current request arrived with (its trace id is kept, its tracestate
 * @in_tracestate is carried on with lin updated), or NULL for a request begun in this
 * process (trace id derived from this host, pid and the token's request; for an epoch
 * token, its first request).
 * @flags: trace-flags to send when @in is NULL (LIN_W3C_FLAG_SAMPLED usually); with @in,
 * the received flags are sent.
 * Return: 0; -EINVAL; -LIN_ENOTFOUND (an epoch token whose epoch is no longer live, when a
 * trace id must be derived); -EINVAL for a malformed @in_tracestate.
 * Context: any thread; calls lin_entity_lookup (lock-free), gethostname and getpid. Since: 0.1
 */
LIN_API int lin_w3c_inject(lin_runtime *rt, const lin_token *tok, const struct lin_w3c_context *in,
			   const char *in_tracestate, uint8_t flags, struct lin_w3c_headers *out);

/*
 * lin_w3c_request_begin - begin a local request for work that arrived with @ctx: the
 * request keeps @ctx's trace id, and the trace records the link as a request_link record
 * (docs/fleet.md), which lineage-validate reads to join this process's kernels to the
 * request begun on the sending host. The same as lin_request_begin with opts->remote = @ctx.
 * @opts: as lin_request_begin (its remote field is replaced by @ctx). May be NULL.
 * Return: as lin_request_begin; -EINVAL (NULL @ctx, all-zero ids in @ctx).
 * Context: any thread; may allocate (inside lin_request_begin). Since: 0.1
 */
LIN_API int lin_w3c_request_begin(lin_runtime *rt, const struct lin_w3c_context *ctx,
				  const struct lin_request_opts *opts, uint64_t *id);

/*
 * lin_w3c_adopt - adopt the received token when this process issued it (work that came
 * back through an RPC loop). The issuer is recognised by the traceparent's parent-id,
 * which is lin_w3c_span_id(issuer's process key, token id); a token of another process is
 * refused without touching the runtime: begin a request with lin_w3c_request_begin.
 * (The token's own runtime tag is 16 bits and is not unique across processes.) A token
 * whose version ended meanwhile is adopted late, as a binary token is (lin_token_adopt):
 * the parent-id proves it is this process's. Since 0.4; before, it was refused as stale.
 * Return: as lin_token_adopt; -LIN_ENOCONTEXT (@ctx carries no token); -LIN_EFOREIGN
 * (issued by another process, or an intermediary replaced the parent-id).
 * Context: worker thread; calls gethostname and getpid, then lin_token_adopt. Since: 0.1
 */
LIN_API int lin_w3c_adopt(lin_runtime *rt, const struct lin_w3c_context *ctx, lin_scope *scope);

/* Prefix of a request name that recorded a remote parent in trace format 1.0, before the
 * request_link record (docs/fleet.md); lineage-validate still reads it. */
#define LIN_W3C_NAME_PREFIX "w3c:"

/* ---------------------------------------------------------------- id derivation */

static inline uint64_t lin_w3c_mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/* The process key: FNV-1a 64 of the host name, mixed with the pid. Never 0. */
static inline uint64_t lin_w3c_proc_key(const char *host, uint64_t pid)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	for (const unsigned char *p = (const unsigned char *)(host ? host : ""); *p; p++)
		h = (h ^ *p) * 0x100000001b3ULL;
	uint64_t k = lin_w3c_mix64(h ^ lin_w3c_mix64(pid));
	return k ? k : 1;
}

/* Span id of request or epoch @id of the process @key. Never 0. */
static inline uint64_t lin_w3c_span_id(uint64_t key, uint64_t id)
{
	uint64_t s = lin_w3c_mix64(key ^ (id * 0xff51afd7ed558ccdULL));
	return s ? s : 1;
}

/* Store @v big-endian at @p (8 bytes): ids go on the wire in network order. */
static inline void lin_w3c_put64(uint8_t *p, uint64_t v)
{
	for (int i = 7; i >= 0; i--, v >>= 8)
		p[i] = (uint8_t)v;
}

static inline uint64_t lin_w3c_get64(const uint8_t *p)
{
	uint64_t v = 0;
	for (int i = 0; i < 8; i++)
		v = (v << 8) | p[i];
	return v;
}

/* Trace id of request @request begun in the process @key: key, then the request id. */
static inline void lin_w3c_trace_id(uint64_t key, uint64_t request, uint8_t out[16])
{
	lin_w3c_put64(out, key);
	lin_w3c_put64(out + 8, request);
}

#ifdef __cplusplus
}
#endif
#endif
