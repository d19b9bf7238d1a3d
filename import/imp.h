/* SPDX-License-Identifier: MIT */
/*
 * imp.h - importers of foreign profiler traces (Kineto JSON, Nsight Systems SQLite) into
 * lineage-validate: a compact event model, the joins, and the Perfetto export.
 *
 * Use: lin_imp_run(v, formats, paths, n, perfetto_out_or_NULL) after
 * lin_joiner_create(); it fills the joiner's summary and findings (so the normal
 * reports print them) and records file errors there (exit 2).
 * Context: single-threaded; memory grows with the events kept (80 B each, names interned
 * once), never with the size of the JSON text.
 */
#ifndef LIN_VALIDATOR_IMP_H
#define LIN_VALIDATOR_IMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "feed.h"
#include "records.h"
#include "vtab.h"

/* Kinds from KERNEL on are GPU records; REQUEST and HANDOFF come from lineage traces. */
enum lin_imp_kind {
	LIN_IMP_OP,
	LIN_IMP_LAUNCH,
	LIN_IMP_REQUEST,
	LIN_IMP_HANDOFF,
	LIN_IMP_KERNEL,
	LIN_IMP_MEMCPY,
	LIN_IMP_MEMSET
};

#define LIN_IMP_HAS_EXT 1u
#define LIN_IMP_HAS_CORR 2u
#define LIN_IMP_GRAPH 4u      /* launch: a graph launch API */
#define LIN_IMP_NO_PROC 8u    /* nsys GPU record whose globalPid is NULL */
#define LIN_IMP_NO_STREAM 16u /* GPU record whose stream the file does not say */

struct lin_imp_ev {
	uint64_t proc;   /* host pid (launch, op; nsys GPU records too) */
	uint64_t tid;    /* host thread, or for GPU records the stream */
	int64_t ts, end; /* ns */
	uint64_t corr, ext;
	uint64_t off;   /* byte offset (JSON) or row id (SQLite) */
	uint64_t index; /* event index in the file */
	uint32_t name;  /* string pool offset + 1; 0: none */
	uint32_t link;  /* after the join: GPU -> launch, launch -> op (index + 1) */
	uint16_t dev;
	uint8_t kind, flags;
};

/* Categories seen in a trace-event file, for the messages about what was (not) read. */
#define LIN_IMP_CATS 24
#define LIN_IMP_CAT_LEN 32
struct lin_imp_cat {
	char name[LIN_IMP_CAT_LEN]; /* truncated; "" when the table is full */
	uint64_t n;
	int kind; /* enum lin_imp_kind, or -1: not read */
};

/* A process or thread name (trace-event "M" metadata; nsys PROCESSES / ThreadNames). */
struct lin_imp_meta {
	uint64_t proc, tid; /* tid LIN_NIL: the process's name */
	uint32_t name;
	uint32_t pad; /* the order written (ties: the last one wins) */
};
#define LIN_IMP_META_MAX (1u << 16) /* names kept per file; more are ignored */

/* All events of one imported file, plus interned names. */
struct lin_imp {
	struct lin_imp_ev *ev;
	size_t n, cap;
	char *pool;
	size_t pool_n, pool_cap;
	uint32_t *hash; /* open addressing over name offsets + 1 */
	size_t hash_cap, hash_n;
	struct lin_imp_meta *meta;
	size_t nmeta, meta_cap;
	bool meta_sorted;
	bool gpu_proc_is_file; /* Kineto: GPU records carry a device, not a host pid */
	uint64_t collisions;   /* nsys: correlation ids seen in several processes */
	uint64_t records;      /* events (JSON) or rows (SQLite) read, kept or not */
	/* Kineto: every category seen (events without one in uncategorised) */
	struct lin_imp_cat cats[LIN_IMP_CATS];
	unsigned ncats;
	uint64_t cats_other, uncategorised, profiler_ranges;
	/* nsys: GPU activity tables (kernel, memcpy, memset): 0 absent, 1 present */
	bool gpu_tables[3];
};

/* Append an event (copied); return NULL on ENOMEM. */
struct lin_imp_ev *lin_imp_push(struct lin_imp *m);
/* Intern a name of len bytes (truncated at 4 KiB); 0 on ENOMEM. */
uint32_t lin_imp_name(struct lin_imp *m, const char *s, size_t len);
const char *lin_imp_str(const struct lin_imp *m, uint32_t name);
void lin_imp_free(struct lin_imp *m);
/* Remember a process (tid == LIN_NIL) or thread name; false on ENOMEM (the cap is not an
 * error: names past LIN_IMP_META_MAX are dropped). */
bool lin_imp_meta_add(struct lin_imp *m, uint64_t proc, uint64_t tid, const char *s, size_t len);
/* Sort the names for lin_imp_meta_name() (after the last lin_imp_meta_add()). */
void lin_imp_meta_sort(struct lin_imp *m);
/* The name of a process or thread (tid LIN_NIL: of the process), or NULL; NULL also before
 * lin_imp_meta_sort(). */
const char *lin_imp_meta_name(const struct lin_imp *m, uint64_t proc, uint64_t tid);

/* Decimal microseconds (JSON number text, len bytes) to integer nanoseconds, exactly:
 * rounded to the nearest ns, halves away from zero. false: not a number, or it does not
 * fit an int64 of ns. */
bool lin_imp_us_to_ns(const char *s, size_t len, int64_t *out);

/* Readers: 0, -1 on a file error (message in f->err, offset in f->err_off). */
int lin_imp_kineto(struct lin_imp *m, const char *path, struct lin_jfile *f);
/* The same reader on @n bytes of uncompressed JSON in memory (the fuzz harness). */
int lin_imp_kineto_mem(struct lin_imp *m, const void *data, size_t n, struct lin_jfile *f);
int lin_imp_nsys(struct lin_imp *m, const char *path, struct lin_jfile *f);
/* Which readers this build has (false: the library was absent at build time). */
bool lin_imp_have(const char *fmt, const char **lacks);

/* Join and classify the events of file fi into v. */
void lin_imp_join(struct lin_joiner *v, struct lin_imp *m, uint32_t fi);
/* Chrome/Perfetto trace-event JSON of the joined model; 0 or -1 (errno set). */
int lin_imp_perfetto(const struct lin_imp *m, const char *out_path);
/* Kineto trace-event JSON of the joined model (kineto_out.c); 0 or -1 (errno set). */
int lin_imp_kineto_out(const struct lin_imp *m, const char *out_path);

/* Read a lineage trace (requests, handoffs, launches, GPU records in host time through its
 * first clock record), link request -> handoff -> launch -> GPU record, and export it
 * with lin_imp_perfetto(). 0, or -1 with a message in err. */
int lin_imp_lineage_perfetto(const char *trace, const char *out_path, char *err, size_t n);

/* The CLI entry: import each path with its format fmts[i] ("kineto" or "nsys"), join,
 * report into v (with the reason when a file or the run has no GPU record); export the last
 * file's model as Perfetto JSON when perfetto != NULL, as Kineto JSON when kineto != NULL.
 * Return 0, 64 (a format unknown or not built), or -1 on a file error (recorded in v). */
int lin_imp_run(struct lin_joiner *v, const char *const *fmts, char *const *paths, int n,
		const char *perfetto, const char *kineto);

/* What a file holds, from its first bytes (detect.c). */
enum lin_imp_fmt {
	LIN_FMT_LINEAGE, /* a MessagePack map first: a lineage trace or truth file */
	LIN_FMT_JSON,    /* '{' or '[' first (after white space), or gzip */
	LIN_FMT_SQLITE,  /* the SQLite header string */
	LIN_FMT_UNKNOWN, /* none of these (read as a lineage trace: its reader says
				     * what is wrong) */
};
/* Return the format, or -1 when the file cannot be opened or read, or is not a regular
 * file (a FIFO, device, socket or directory: message in err; it is never read, so it
 * cannot block). When why_not is not NULL, *why_not is NULL if the file is recognisably a
 * trace (what a directory reads: an SQLite header; a MessagePack map with a lineage-trace
 * or lineage-truth header in the first 4 KiB; JSON named *.json, or beginning '{"' or
 * '[{' or '[]'; gzip named *.json.gz), else why not. */
int lin_imp_detect(const char *path, char *err, size_t n, const char **why_not);
/* Why a file of this st_mode is not read ("not a regular file: a FIFO (named pipe)"), or
 * NULL for a regular file. */
const char *lin_imp_not_regular(unsigned mode);
/* The input among @in (@n paths) that the output path @out names, by device and inode
 * (any path to it, links included), or NULL: an output that would overwrite an input.
 * An @out that does not exist yet names none. */
const char *lin_imp_output_clash(const char *out, const char *const *in, size_t n);
/* The importer name of a format ("kineto", "nsys"), or NULL for lineage traces. */
const char *lin_imp_fmt_name(enum lin_imp_fmt f);

#endif
