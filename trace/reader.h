/* SPDX-License-Identifier: MIT */
/*
 * reader.h - streaming, schema-checking reader of lineage trace and truth files.
 *
 * The reader decodes the header map and then one record at a time from a bounded read
 * buffer (LIN_READER_BUF bytes; a record may not be larger). Every array, map, str and bin
 * header is checked against the bytes left in the file and against fixed limits before
 * anything is trusted, nesting is bounded, and every known field's type is checked. A
 * file cut inside a record reports truncation with the byte offset of that record and
 * keeps every record before it. Nothing is allocated from a length found in the input.
 * Context: one reader per thread; not thread-safe.
 */
#ifndef LIN_VALIDATOR_READER_H
#define LIN_VALIDATOR_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LIN_READER_BUF (1u << 20)  /* read buffer; also the largest accepted record */
#define LIN_READER_MAX_FIELDS 16   /* known fields per record */
#define LIN_READER_MAX_ELEMS 65536 /* elements in any array or map */
#define LIN_READER_MAX_REQS 1024   /* request ids in one requests array */
#define LIN_READER_MAX_DEPTH 16    /* nesting of arrays and maps */

struct lin_header {
	char format[32];
	char host[256];
	char writer[64];
	char backend[32];
	char cupti[128];        /* the cupti status ("" when nil or absent) */
	bool device_clock_host; /* device_clock "host": device times are host times */
	uint64_t major, minor;
	uint64_t pid;
	uint64_t start_host_ns;
	uint64_t ext_kind;
	bool has_ext_kind;
	uint64_t start_unix_ns; /* the Unix time of start_host_ns; 0: not in the header */
};

struct lin_rec {
	uint32_t type;
	uint32_t nfields;                  /* known fields decoded into f[] */
	uint64_t f[LIN_READER_MAX_FIELDS]; /* uint / int fields; str fields: length */
	uint32_t nil;                      /* bit i set: field i is nil */
	const char *str;                   /* the record's str field (string, misuse) */
	uint32_t str_len;
	uint32_t nreqs; /* the record's uint array (requests) */
	uint64_t reqs[LIN_READER_MAX_REQS];
	uint64_t offset; /* byte offset of the record in the file */
	uint64_t index;  /* 0-based record index (header excluded) */
	bool known;      /* false: an unknown type, skipped */
};

enum lin_read_status {
	LIN_READ_RECORD = 1,
	LIN_READ_EOF = 0,
	LIN_READ_ERROR = -1,
	LIN_READ_MORE = 2, /* stream mode: the span ends inside the next object */
};

struct lin_reader;

/* Open @path (fd mode) or wrap @data/@size (memory mode, borrowed). Return NULL on ENOMEM;
 * open errors are reported by lin_reader_header(). */
struct lin_reader *lin_reader_open(const char *path);
struct lin_reader *lin_reader_open_mem(const char *name, const void *data, size_t size);
void lin_reader_free(struct lin_reader *r);

/*
 * Stream mode, for bytes that arrive in pieces (the runtime's OTLP stream): the reader owns
 * no buffer; each call to lin_reader_stream_span lends it the next bytes, [@data, @data +
 * @len) at stream offset @base. lin_reader_header and lin_reader_next decode from the span
 * and, when it ends inside an object, consume nothing of it (LIN_READ_MORE, or 1 from
 * lin_reader_header): the caller keeps the bytes after lin_reader_consumed() and hands them
 * again, at the front of the next span, with what follows. The same checks as in the other
 * modes, but the stream's size is unknown: only the fixed limits bound a header's claim.
 */
struct lin_reader *lin_reader_open_stream(void);
void lin_reader_stream_span(struct lin_reader *r, const void *data, size_t len, uint64_t base);
size_t lin_reader_consumed(const struct lin_reader *r);

/* Read and check the header. @want_format: LIN_TRACE_FORMAT_NAME or LIN_TRUTH_FORMAT_NAME.
 * Return 0, or -1 with lin_reader_error() set (also for a different major version), or in
 * stream mode 1: the span ends inside the header. */
int lin_reader_header(struct lin_reader *r, const char *want_format, struct lin_header *h);
/* Next record into @rec (valid until the next call). */
enum lin_read_status lin_reader_next(struct lin_reader *r, struct lin_rec *rec);

const char *lin_reader_error(const struct lin_reader *r); /* "" when none */
uint64_t lin_reader_error_offset(const struct lin_reader *r);
bool lin_reader_truncated(const struct lin_reader *r);
uint64_t lin_reader_size(const struct lin_reader *r);
uint64_t lin_reader_records(const struct lin_reader *r); /* complete records read */
const char *lin_rec_name(uint32_t type);                 /* NULL: unknown type */
const char *lin_rec_field_name(uint32_t type, uint32_t i);

#endif
