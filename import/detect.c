/* SPDX-License-Identifier: MIT */
/*
 * detect.c - what a file holds, from its first bytes: a lineage trace (MessagePack map), a
 * trace-event JSON file (plain or gzip) or an SQLite database (docs/importers.md,
 * "Which reader").
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "imp.h"

/* The kind is decided by the first 64 bytes; a directory's files are also checked for being
 * recognisably a trace within the first 4 KiB (lin_imp_doubt). */
#define PEEK 64
#define PEEK_DIR 4096

static int from_bytes(const unsigned char *b, size_t n)
{
	static const char sqlite_magic[16] = "SQLite format 3"; /* with its NUL */
	if (n >= 16 && !memcmp(b, sqlite_magic, 16))
		return LIN_FMT_SQLITE;
	if (n >= 2 && b[0] == 0x1f && b[1] == 0x8b)
		return LIN_FMT_JSON; /* gzip: the JSON reader decompresses */
	if (n && ((b[0] >= 0x80 && b[0] <= 0x8f) || b[0] == 0xde || b[0] == 0xdf))
		return LIN_FMT_LINEAGE; /* a MessagePack map: the header */
	size_t i = 0;
	if (n >= 3 && b[0] == 0xef && b[1] == 0xbb && b[2] == 0xbf)
		i = 3; /* a UTF-8 byte order mark */
	while (i < n && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r'))
		i++;
	if (i < n && (b[i] == '{' || b[i] == '['))
		return LIN_FMT_JSON;
	return LIN_FMT_UNKNOWN;
}

const char *lin_imp_not_regular(unsigned mode)
{
	if (S_ISREG(mode))
		return NULL;
	return S_ISFIFO(mode)   ? "not a regular file: a FIFO (named pipe)"
	       : S_ISSOCK(mode) ? "not a regular file: a socket"
	       : S_ISCHR(mode)  ? "not a regular file: a character device"
	       : S_ISBLK(mode)  ? "not a regular file: a block device"
	       : S_ISDIR(mode)  ? "not a regular file: a directory"
				: "not a regular file";
}

const char *lin_imp_output_clash(const char *out, const char *const *in, size_t n)
{
	struct stat o, st;
	if (!out || stat(out, &o) != 0)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (in[i] && stat(in[i], &st) == 0 && st.st_dev == o.st_dev && st.st_ino == o.st_ino)
			return in[i];
	return NULL;
}

static bool ends_with(const char *s, const char *tail)
{
	size_t a = strlen(s), b = strlen(tail);
	return a >= b && !strcasecmp(s + a - b, tail);
}

static size_t skip_ws(const unsigned char *b, size_t i, size_t n)
{
	while (i < n && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r'))
		i++;
	return i;
}

/* NULL when the n first bytes of the file @path, of kind @fmt, are recognisably a trace;
 * else why not (docs/importers.md, "Which reader": what a directory reads). */
static const char *doubt(const char *path, int fmt, const unsigned char *b, size_t n)
{
	const char *name = strrchr(path, '/');
	name = name ? name + 1 : path;
	switch (fmt) {
	case LIN_FMT_SQLITE: return NULL;
	case LIN_FMT_LINEAGE:
		if (memmem(b, n, "lineage-trace", 13))
			return NULL;
		if (memmem(b, n, "lineage-truth", 13)) /* labels, not a trace */
			return "a truth file: give it with --expect";
		return "a MessagePack map first, but no \"lineage-trace\" header";
	case LIN_FMT_JSON:
		if (b[0] == 0x1f) /* gzip: by its name */
			return ends_with(name, ".json.gz") ? NULL
							   : "gzip-compressed, and not named *.json.gz";
		if (ends_with(name, ".json"))
			return NULL;
		size_t i = n >= 3 && b[0] == 0xef && b[1] == 0xbb && b[2] == 0xbf ? 3 : 0;
		i = skip_ws(b, i, n);
		bool obj = i < n && b[i] == '{';
		i = skip_ws(b, i + 1, n);
		if (i < n && (obj ? b[i] == '"' || b[i] == '}' : b[i] == '{' || b[i] == ']'))
			return NULL;
		return obj ? "not named *.json, and '{' is not followed by a key"
			   : "not named *.json, and '[' is not followed by an event object";
	default: return "not a lineage trace, trace-event JSON or SQLite file";
	}
}

int lin_imp_detect(const char *path, char *err, size_t n, const char **why_not)
{
	/* O_NONBLOCK: opening a FIFO must not wait for a writer; only regular files are read
	 * (a FIFO or a device could block, or never end). */
	int fd = open(path, O_RDONLY | O_NONBLOCK);
	if (fd < 0) {
		snprintf(err, n, "cannot open: %s", strerror(errno));
		return -1;
	}
	struct stat st;
	if (fstat(fd, &st) != 0) {
		snprintf(err, n, "cannot read: %s", strerror(errno));
		close(fd);
		return -1;
	}
	const char *why = lin_imp_not_regular(st.st_mode);
	if (why) {
		snprintf(err, n, "%s", why);
		close(fd);
		return -1;
	}
	unsigned char b[PEEK_DIR];
	size_t got = 0;
	while (got < sizeof(b)) {
		ssize_t r = read(fd, b + got, sizeof(b) - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno;
			close(fd);
			snprintf(err, n, "cannot read: %s", strerror(e));
			return -1;
		}
		if (r == 0)
			break;
		got += (size_t)r;
	}
	close(fd);
	int fmt = from_bytes(b, got < PEEK ? got : PEEK);
	if (why_not)
		*why_not = doubt(path, fmt, b, got);
	return fmt;
}

const char *lin_imp_fmt_name(enum lin_imp_fmt f)
{
	return f == LIN_FMT_JSON ? "kineto" : f == LIN_FMT_SQLITE ? "nsys" : NULL;
}
