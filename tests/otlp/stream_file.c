/* SPDX-License-Identifier: MIT */
/*
 * stream_file.c - lin-otlp-stream-file TRACE OUT [CHUNK]: feed a trace file's bytes through
 * the OTLP tap (lin_otlp_tap_open) as the runtime's writer would, CHUNK bytes a feed (default:
 * all at once) with a tick after each, then the last tick and the close; the spans go to OUT.
 * Test-only: it lets tests/otlp/stream_fixtures.sh put every validator fixture through the
 * stream. Exit 0; 1 the tap would not open; 2 the file cannot be read; 64 usage.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lineage/otlp.h"
#include "lineage/tap.h"

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

int main(int argc, char **argv)
{
	if (argc < 3 || argc > 4) {
		fprintf(stderr, "usage: lin-otlp-stream-file TRACE OUT [CHUNK]\n");
		return 64;
	}
	size_t n = 0;
	char *b = slurp(argv[1], &n);
	if (!b) {
		fprintf(stderr, "lin-otlp-stream-file: %s: %s\n", argv[1], strerror(errno));
		return 2;
	}
	size_t chunk = argc > 3 ? strtoull(argv[3], NULL, 10) : n;
	if (!chunk)
		chunk = 1;
	struct lin_otlp_opts so = { .sz = sizeof(so), .path = argv[2] };
	struct lin_tap_args a = { .sz = sizeof(a), .config = &so };
	const struct lin_tap_ops *ops;
	void *tap;
	int err = lin_otlp_tap_open(&a, &ops, &tap);
	if (err) {
		fprintf(stderr, "lin-otlp-stream-file: the tap would not open: %s\n", strerror(-err));
		free(b);
		return 1;
	}
	for (size_t off = 0; off < n; off += chunk) {
		ops->feed(tap, b + off, n - off < chunk ? n - off : chunk);
		ops->tick(tap, 0, true);
	}
	ops->tick(tap, UINT64_MAX, true);
	ops->close(tap);
	free(b);
	return 0;
}
