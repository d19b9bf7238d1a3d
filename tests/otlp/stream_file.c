/* SPDX-License-Identifier: MIT */
/*
 * stream_file.c - feed a trace file's bytes through the OTLP tap (lin_otlp_tap_open) as the
 * runtime's writer would; the spans go to OUT. Test-only: it lets
 * tests/otlp/stream_fixtures.sh put every validator fixture through the stream.
 *
 *   lin-otlp-stream-file TRACE OUT [CHUNK]
 *       CHUNK bytes a feed (default: all at once), a tick with watermark 0 after each (the
 *       stream holds every host record until the last tick), then the last tick (watermark
 *       UINT64_MAX) and the close.
 *   lin-otlp-stream-file --live TRACE OUT
 *       one record a feed (the header with the first), as the writer hands records over:
 *       after each, a tick with watermark the largest host time of the records fed so far
 *       (every event taken before it has been fed, if the file is in host time order), so
 *       the stream makes spans as it goes; then the last tick and the close. A file whose
 *       header the reader refuses is fed in one piece; from a record the reader cannot
 *       decode on, the rest of the file is fed in one piece.
 *   lin-otlp-stream-file --ext TRACE
 *       print each ext_correlation record, "CORRELATION<TAB>EXTERNAL_ID", one a line: what
 *       the test needs to know which epoch the stream must join a GPU record to (none when
 *       the reader refuses the header).
 *
 * Exit 0; 1 the tap would not open; 2 the file cannot be read; 64 usage.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lineage/otlp.h"
#include "lineage/tap.h"
#include "reader.h"
#include "records.h"

static char *slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 1 << 16, len = 0;
	char *b = malloc(cap);
	for (size_t got; b && (got = fread(b + len, 1, cap - len, f)) > 0;) {
		len += got;
		if (len == cap) {
			char *nb = realloc(b, cap *= 2);
			if (!nb)
				free(b);
			b = nb;
		}
	}
	int bad = ferror(f);
	fclose(f);
	if (bad) {
		free(b);
		return NULL;
	}
	*n = len;
	return b;
}

/* The host time of @r (LIN_NIL: none), by name: every record that has a host_ns field. */
static uint64_t rec_host_ns(const struct lin_rec *r)
{
	if (!r->known)
		return LIN_NIL;
	switch (r->type) {
	case LIN_REC_REQUEST_BEGIN:
	case LIN_REC_REQUEST_END:
	case LIN_REC_EPOCH_DECLARE:
	case LIN_REC_EPOCH_REISSUE:
	case LIN_REC_EPOCH_RETIRE:
	case LIN_REC_TOKEN_CAPTURE:
	case LIN_REC_TOKEN_ADOPT:
	case LIN_REC_SCOPE_CLOSE:
	case LIN_REC_MISUSE:
	case LIN_REC_LAUNCH:
	case LIN_REC_LAUNCH_END:
	case LIN_REC_REQUEST_LINK:
	case LIN_REC_GRAPH_NODE:
	case LIN_REC_GRAPH_EXEC:
	case LIN_REC_GRAPH_LAUNCH:
	case LIN_REC_GRAPH_NODE_UPDATE:
		/* the HOST view (records.h; schema.c checks that each of these agrees) */
		return LIN_OPT(r, HOST, HOST_NS);
	case LIN_REC_CLOCK: return LIN_OPT(r, CLOCK, HOST_NS);
	case LIN_REC_TRACE_END: return LIN_OPT(r, TRACE_END, HOST_NS);
	default: return LIN_NIL;
	}
}

/* Feed @b[0, @n) a record at a time, ticking after each. Return the bytes fed. */
static size_t feed_records(const struct lin_tap_ops *ops, void *tap, const char *name,
			   struct lin_reader *rd, struct lin_rec *r, const char *b, size_t n)
{
	uint64_t wm = 0;
	size_t fed = 0;
	bool have = false; /* a record read whose bytes are not fed yet */
	enum lin_read_status st;
	while ((st = lin_reader_next(rd, r)) == LIN_READ_RECORD) {
		/* r begins where the previous record (or, for the first, the header) ends */
		if (have && r->offset > fed) {
			ops->feed(tap, b + fed, (size_t)(r->offset - fed));
			fed = (size_t)r->offset;
			ops->tick(tap, wm, true);
		}
		uint64_t t = rec_host_ns(r);
		if (t != LIN_NIL && t > wm)
			wm = t;
		have = true;
	}
	if (st == LIN_READ_ERROR)
		fprintf(stderr, "lin-otlp-stream-file: %s: %s: the rest fed in one piece\n", name,
			lin_reader_error(rd));
	if (fed < n) {
		ops->feed(tap, b + fed, n - fed);
		fed = n;
		ops->tick(tap, wm, true);
	}
	return fed;
}

static void feed_live(const struct lin_tap_ops *ops, void *tap, const char *name, const char *b, size_t n)
{
	struct lin_reader *rd = lin_reader_open_mem(name, b, n);
	struct lin_rec *r = malloc(sizeof(*r)); /* large: LIN_READER_MAX_REQS request ids */
	struct lin_header h;
	size_t fed = 0;
	if (!rd || !r)
		fprintf(stderr, "lin-otlp-stream-file: %s: out of memory: fed in one piece\n", name);
	else if (lin_reader_header(rd, LIN_TRACE_FORMAT_NAME, &h))
		fprintf(stderr, "lin-otlp-stream-file: %s: %s: fed in one piece\n", name,
			lin_reader_error(rd));
	else
		fed = feed_records(ops, tap, name, rd, r, b, n);
	if (fed < n)
		ops->feed(tap, b + fed, n - fed);
	free(r);
	lin_reader_free(rd);
}

/* A header the reader refuses: nothing printed (no record of the file is read). */
static int print_ext(const char *name, const char *b, size_t n)
{
	struct lin_reader *rd = lin_reader_open_mem(name, b, n);
	struct lin_rec *r = malloc(sizeof(*r));
	struct lin_header h;
	int ret = 0;
	if (!rd || !r) {
		fprintf(stderr, "lin-otlp-stream-file: %s: out of memory\n", name);
		ret = 2;
	} else if (lin_reader_header(rd, LIN_TRACE_FORMAT_NAME, &h)) {
		fprintf(stderr, "lin-otlp-stream-file: %s: %s: no record read\n", name,
			lin_reader_error(rd));
	} else {
		while (lin_reader_next(rd, r) == LIN_READ_RECORD) {
			if (!r->known || r->type != LIN_REC_EXT_CORRELATION)
				continue;
			uint64_t c = LIN_OPT(r, EXT_CORRELATION, CORRELATION);
			uint64_t x = LIN_OPT(r, EXT_CORRELATION, EXTERNAL_ID);
			if (c != LIN_NIL && x != LIN_NIL)
				printf("%" PRIu64 "\t%" PRIu64 "\n", c, x);
		}
	}
	free(r);
	lin_reader_free(rd);
	return ret;
}

int main(int argc, char **argv)
{
	bool live = argc > 1 && !strcmp(argv[1], "--live");
	bool ext = argc > 1 && !strcmp(argv[1], "--ext");
	if (ext ? argc != 3 : live ? argc != 4 : argc < 3 || argc > 4) {
		fprintf(stderr, "usage: lin-otlp-stream-file TRACE OUT [CHUNK]\n"
				"       lin-otlp-stream-file --live TRACE OUT\n"
				"       lin-otlp-stream-file --ext TRACE\n");
		return 64;
	}
	const char *trace = argv[live || ext ? 2 : 1];
	size_t n = 0;
	char *b = slurp(trace, &n);
	if (!b) {
		fprintf(stderr, "lin-otlp-stream-file: %s: %s\n", trace, strerror(errno));
		return 2;
	}
	if (ext) {
		int ret = print_ext(trace, b, n);
		free(b);
		return ret;
	}
	size_t chunk = !live && argc > 3 ? strtoull(argv[3], NULL, 10) : n;
	if (!chunk)
		chunk = 1;
	struct lin_otlp_opts so = { .sz = sizeof(so), .path = argv[live ? 3 : 2] };
	struct lin_tap_args a = { .sz = sizeof(a), .config = &so };
	const struct lin_tap_ops *ops;
	void *tap;
	int err = lin_otlp_tap_open(&a, &ops, &tap);
	if (err) {
		fprintf(stderr, "lin-otlp-stream-file: the tap would not open: %s\n", strerror(-err));
		free(b);
		return 1;
	}
	if (live) {
		feed_live(ops, tap, trace, b, n);
	} else {
		for (size_t off = 0; off < n; off += chunk) {
			ops->feed(tap, b + off, n - off < chunk ? n - off : chunk);
			ops->tick(tap, 0, true);
		}
	}
	ops->tick(tap, UINT64_MAX, true);
	ops->close(tap);
	free(b);
	return 0;
}
