/* SPDX-License-Identifier: MIT */
/*
 * detect.c - what a file holds, from its first bytes: a lineage trace (MessagePack map), a
 * trace-event JSON file (plain or gzip) or an SQLite database (docs/importers.md,
 * "Which reader").
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "imp.h"

#define PEEK 64

static int from_bytes(const unsigned char *b, size_t n)
{
	static const char sqlite_magic[16] = "SQLite format 3";   /* with its NUL */
	if (n >= 16 && !memcmp(b, sqlite_magic, 16))
		return LIN_FMT_SQLITE;
	if (n >= 2 && b[0] == 0x1f && b[1] == 0x8b)
		return LIN_FMT_JSON;               /* gzip: the JSON reader decompresses */
	if (n && ((b[0] >= 0x80 && b[0] <= 0x8f) || b[0] == 0xde || b[0] == 0xdf))
		return LIN_FMT_LINEAGE;            /* a MessagePack map: the header */
	size_t i = 0;
	if (n >= 3 && b[0] == 0xef && b[1] == 0xbb && b[2] == 0xbf)
		i = 3;                             /* a UTF-8 byte order mark */
	while (i < n && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r'))
		i++;
	if (i < n && (b[i] == '{' || b[i] == '['))
		return LIN_FMT_JSON;
	return LIN_FMT_UNKNOWN;
}

int lin_imp_detect(const char *path, char *err, size_t n)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		snprintf(err, n, "cannot open: %s", strerror(errno));
		return -1;
	}
	unsigned char b[PEEK];
	size_t got = fread(b, 1, sizeof(b), f);
	int bad = ferror(f);
	int e = errno;
	fclose(f);
	if (bad) {
		snprintf(err, n, "cannot read: %s", strerror(e ? e : EIO));
		return -1;
	}
	return from_bytes(b, got);
}

const char *lin_imp_fmt_name(enum lin_imp_fmt f)
{
	return f == LIN_FMT_JSON ? "kineto" : f == LIN_FMT_SQLITE ? "nsys" : NULL;
}
