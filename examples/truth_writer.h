/* SPDX-License-Identifier: MIT */
/*
 * truth_writer.h - the examples' writer of truth files (docs/trace-format.md, "Truth files"
 * and "Cause-truth files"), with msgpack-c and lineage's installed headers alone, so an
 * example builds against an installed lineage as any user program would.
 *
 * A truth file is a header map naming the process that ran the work (format, version,
 * writer, host, pid), then one record per label:
 *   lineage-truth        [40, gpu_kind, key, [requests], epoch|nil, correlation|nil]
 *   lineage-cause-truth  [41, gpu_kind, key, cause, alt, start|nil, end|nil, magnitude|nil,
 *                         correlation|nil]
 * Keys are the program's own (a grid id its kernel logged), never taken from the correlation
 * path under test. Header-only: every function is static inline.
 *
 * Context: one thread writes one file; nothing here is thread-safe.
 */
#ifndef LIN_EXAMPLE_TRUTH_WRITER_H
#define LIN_EXAMPLE_TRUTH_WRITER_H

#include <msgpack.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <lineage/trace_format.h>

/* An unknown value in a truth record (written as nil). */
#define LIN_EX_NIL UINT64_MAX

struct lin_ex_truth {
	FILE *f;
	msgpack_packer pk;
};

static inline int lin_ex_fwrite(void *data, const char *buf, size_t len)
{
	return fwrite(buf, 1, len, (FILE *)data) == len ? 0 : -1;
}

static inline void lin_ex_str(msgpack_packer *pk, const char *s)
{
	msgpack_pack_str_with_body(pk, s, strlen(s));
}

static inline void lin_ex_opt(msgpack_packer *pk, uint64_t v)
{
	if (v == LIN_EX_NIL)
		msgpack_pack_nil(pk);
	else
		msgpack_pack_uint64(pk, v);
}

/*
 * Open @path and write the header of a @format file (LIN_TRUTH_FORMAT_NAME or
 * LIN_CAUSE_TRUTH_FORMAT_NAME) for this process, written by @writer.
 * Return: 0, or -1 with errno set (the file cannot be created).
 */
static inline int lin_ex_truth_open(struct lin_ex_truth *t, const char *path, const char *format,
				    const char *writer)
{
	char host[256] = "unknown";

	t->f = fopen(path, "wb");
	if (!t->f)
		return -1;
	if (gethostname(host, sizeof(host) - 1) != 0)
		snprintf(host, sizeof(host), "unknown");
	host[sizeof(host) - 1] = 0;
	msgpack_packer_init(&t->pk, t->f, lin_ex_fwrite);
	msgpack_pack_map(&t->pk, 5);
	lin_ex_str(&t->pk, "format");
	lin_ex_str(&t->pk, format);
	lin_ex_str(&t->pk, "version");
	msgpack_pack_array(&t->pk, 2);
	msgpack_pack_uint32(&t->pk, LIN_TRACE_FORMAT_MAJOR);
	msgpack_pack_uint32(&t->pk, LIN_TRACE_FORMAT_MINOR);
	lin_ex_str(&t->pk, "writer");
	lin_ex_str(&t->pk, writer);
	lin_ex_str(&t->pk, "host");
	lin_ex_str(&t->pk, host);
	lin_ex_str(&t->pk, "pid");
	msgpack_pack_uint64(&t->pk, (uint64_t)getpid());
	return 0;
}

/* A lineage-truth label: the GPU record (@gpu_kind, @key) serves @n @requests; @correlation
 * is the CUPTI correlation id of the call that launched it, or LIN_EX_NIL (a graph node's
 * kernel has the same grid id in every replay: its label needs the replay's correlation). */
static inline void lin_ex_truth_label(struct lin_ex_truth *t, uint32_t gpu_kind, uint64_t key,
				      const uint64_t *requests, int n, uint64_t correlation)
{
	msgpack_pack_array(&t->pk, 6);
	msgpack_pack_uint32(&t->pk, LIN_REC_TRUTH);
	msgpack_pack_uint32(&t->pk, gpu_kind);
	msgpack_pack_uint64(&t->pk, key);
	msgpack_pack_array(&t->pk, (size_t)n);
	for (int i = 0; i < n; i++)
		msgpack_pack_uint64(&t->pk, requests[i]);
	msgpack_pack_nil(&t->pk); /* the epoch: not the program's to know */
	lin_ex_opt(&t->pk, correlation);
}

/* A lineage-cause-truth label: the GPU record (@gpu_kind, @key) was held back by @cause
 * (enum lin_truth_cause; @alt a second cause ending at the same instant, or 0), over
 * [@start_ns, @end_ns] on the runtime's host clock, by @magnitude_ns; @correlation is the
 * CUPTI correlation id of the call that launched it (a graph node's kernel has the same grid
 * id in every replay). LIN_EX_NIL: unknown. */
static inline void lin_ex_cause_label(struct lin_ex_truth *t, uint32_t gpu_kind, uint64_t key,
				      uint32_t cause, uint32_t alt, uint64_t start_ns,
				      uint64_t end_ns, uint64_t magnitude_ns, uint64_t correlation)
{
	msgpack_pack_array(&t->pk, LIN_REC_NFIELDS_LAUNCH_CAUSE + 1);
	msgpack_pack_uint32(&t->pk, LIN_REC_LAUNCH_CAUSE);
	msgpack_pack_uint32(&t->pk, gpu_kind);
	msgpack_pack_uint64(&t->pk, key);
	msgpack_pack_uint32(&t->pk, cause);
	msgpack_pack_uint32(&t->pk, alt);
	lin_ex_opt(&t->pk, start_ns);
	lin_ex_opt(&t->pk, end_ns);
	lin_ex_opt(&t->pk, magnitude_ns);
	lin_ex_opt(&t->pk, correlation);
}

/* Close the file. Return: 0, or -1 when a write failed. */
static inline int lin_ex_truth_close(struct lin_ex_truth *t)
{
	int bad = ferror(t->f);

	return (fclose(t->f) != 0 || bad) ? -1 : 0;
}

#endif
