/* SPDX-License-Identifier: MIT */
/*
 * fuzz_stream.c - libFuzzer harness: the reader's stream mode, fed in pieces whose sizes
 * come from the input, must decode what memory mode decodes (the same header, the same
 * records field by field, the same error) and never read outside the span it was lent.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lineage/trace_format.h"
#include "reader.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAXREC 128

struct out {
	int hdr; /* 0 ok, -1 error */
	struct lin_header h;
	size_t n;
	struct lin_rec *recs;
	char **strs;
	int end; /* last status */
	uint64_t err_off;
};

static void keep(struct out *o, const struct lin_rec *r)
{
	o->recs[o->n] = *r;
	o->strs[o->n] = NULL;
	if (r->str) {
		o->strs[o->n] = malloc(r->str_len + 1);
		memcpy(o->strs[o->n], r->str, r->str_len);
	}
	o->n++;
}

static void out_init(struct out *o)
{
	memset(o, 0, sizeof(*o));
	o->recs = malloc(MAXREC * sizeof(*o->recs));
	o->strs = calloc(MAXREC, sizeof(char *));
}

static void out_free(struct out *o)
{
	for (size_t i = 0; i < o->n; i++)
		free(o->strs[i]);
	free(o->recs);
	free(o->strs);
}

static void same(const struct out *a, const struct out *b)
{
	if (a->hdr != b->hdr)
		abort();
	if (a->hdr == 0 && memcmp(&a->h, &b->h, sizeof(a->h)) != 0)
		abort();
	if (a->n != b->n)
		abort();
	for (size_t i = 0; i < a->n; i++) {
		const struct lin_rec *x = &a->recs[i], *y = &b->recs[i];
		if (x->type != y->type || x->nfields != y->nfields || x->nil != y->nil ||
		    x->known != y->known || x->offset != y->offset || x->index != y->index ||
		    x->nreqs != y->nreqs || x->str_len != y->str_len || !x->str != !y->str)
			abort();
		if (memcmp(x->f, y->f, sizeof(x->f[0]) * x->nfields) ||
		    memcmp(x->reqs, y->reqs, sizeof(x->reqs[0]) * x->nreqs))
			abort();
		if (x->str && memcmp(a->strs[i], b->strs[i], x->str_len))
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2)
		return 0;
	uint32_t seed = data[0] | (uint32_t)data[1] << 8;
	data += 2;
	size -= 2;
	struct out m, s;
	out_init(&m);
	out_init(&s);
	struct lin_reader *r = lin_reader_open_mem("m", data, size);
	m.hdr = lin_reader_header(r, LIN_TRACE_FORMAT_NAME, &m.h) ? -1 : 0;
	struct lin_rec *rec = malloc(sizeof(*rec));
	if (!m.hdr) {
		for (;;) {
			int st = lin_reader_next(r, rec);
			if (st != LIN_READ_RECORD || m.n == MAXREC) {
				m.end = st;
				break;
			}
			keep(&m, rec);
		}
	}
	m.err_off = lin_reader_error_offset(r);
	lin_reader_free(r);

	/* stream: copy each span to its own exact-size heap block, so ASan sees any read
	 * past the span's end */
	struct lin_reader *t = lin_reader_open_stream();
	size_t fed = 0, kept = 0;
	uint64_t base = 0;
	uint8_t *span = NULL;
	bool header = false;
	s.hdr = 1;
	s.end = LIN_READ_MORE;
	while (fed <= size) {
		size_t piece = seed ? (seed = seed * 1103515245u + 12345u, (seed >> 16) % 64) : 1;
		if (fed + piece > size)
			piece = size - fed;
		uint8_t *nspan = malloc(kept + piece ? kept + piece : 1);
		if (kept)
			memcpy(nspan, span, kept);
		memcpy(nspan + kept, data + fed, piece);
		free(span);
		span = nspan;
		fed += piece;
		size_t len = kept + piece;
		lin_reader_stream_span(t, span, len, base);
		bool stop = false;
		for (;;) {
			if (!header) {
				int rc = lin_reader_header(t, LIN_TRACE_FORMAT_NAME, &s.h);
				if (rc == 1)
					break;
				s.hdr = rc;
				if (rc) {
					stop = true;
					break;
				}
				header = true;
				continue;
			}
			int st = lin_reader_next(t, rec);
			if (st == LIN_READ_MORE)
				break;
			if (st != LIN_READ_RECORD || s.n == MAXREC) {
				s.end = st;
				stop = true;
				break;
			}
			keep(&s, rec);
		}
		if (stop)
			break;
		size_t used = lin_reader_consumed(t);
		if (used > len)
			abort();
		memmove(span, span + used, len - used);
		kept = len - used;
		base += used;
		if (fed == size)
			break;
	}
	free(span);
	if (!m.hdr && s.hdr == 1 && size == 0)
		abort();
	/* A memory-mode error at the end of the input (truncation) is MORE in the stream. */
	if (s.hdr == 1)
		s.hdr = -1;
	if (m.hdr == 0 && s.hdr == 0) {
		if (m.end == LIN_READ_ERROR && s.end == LIN_READ_MORE)
			s.end = LIN_READ_ERROR;
		if (m.end == LIN_READ_EOF && s.end == LIN_READ_MORE)
			s.end = LIN_READ_EOF;
		if (m.end != s.end)
			abort();
	}
	same(&m, &s);
	lin_reader_free(t);
	free(rec);
	out_free(&m);
	out_free(&s);
	return 0;
}
