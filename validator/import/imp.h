/* SPDX-License-Identifier: MIT */
/*
 * imp.h - importers of foreign profiler traces (Kineto JSON, Nsight Systems SQLite) into
 * lineage-validate: a compact event model, the joins, and the Perfetto export.
 *
 * Use: lin_imp_run(v, "kineto"|"nsys", paths, n, perfetto_out_or_NULL) after
 * lin_validator_create(); it fills the validator's summary and findings (so the normal
 * reports print them) and records file errors there (exit 2).
 * Context: single-threaded; memory grows with the events kept (about 64 B each, names
 * interned once), never with the size of the JSON text.
 */
#ifndef LIN_VALIDATOR_IMP_H
#define LIN_VALIDATOR_IMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vstate.h"

/* Kinds from KERNEL on are GPU records; REQUEST and HANDOFF come from lineage traces. */
enum lin_imp_kind { LIN_IMP_OP, LIN_IMP_LAUNCH, LIN_IMP_REQUEST, LIN_IMP_HANDOFF, LIN_IMP_KERNEL,
		    LIN_IMP_MEMCPY, LIN_IMP_MEMSET };

#define LIN_IMP_HAS_EXT 1u
#define LIN_IMP_HAS_CORR 2u
#define LIN_IMP_GRAPH 4u            /* launch: a graph launch API */

struct lin_imp_ev {
	uint64_t proc;              /* host pid (launch, op; nsys GPU records too) */
	uint64_t tid;               /* host thread, or for GPU records the stream */
	int64_t ts, end;            /* ns */
	uint64_t corr, ext;
	uint64_t off;               /* byte offset (JSON) or row id (SQLite) */
	uint64_t index;             /* event index in the file */
	uint32_t name;              /* string pool offset + 1; 0: none */
	uint32_t link;              /* after the join: GPU -> launch, launch -> op (index + 1) */
	uint16_t dev;
	uint8_t kind, flags;
};

/* All events of one imported file, plus interned names. */
struct lin_imp {
	struct lin_imp_ev *ev;
	size_t n, cap;
	char *pool;
	size_t pool_n, pool_cap;
	uint32_t *hash;             /* open addressing over name offsets + 1 */
	size_t hash_cap, hash_n;
	bool gpu_proc_is_file;      /* Kineto: GPU records carry a device, not a host pid */
	uint64_t collisions;        /* nsys: correlation ids seen in several processes */
	uint64_t records;           /* events (JSON) or rows (SQLite) read, kept or not */
};

/* Append an event (copied); return NULL on ENOMEM. */
struct lin_imp_ev *lin_imp_push(struct lin_imp *m);
/* Intern a name of len bytes (truncated at 4 KiB); 0 on ENOMEM. */
uint32_t lin_imp_name(struct lin_imp *m, const char *s, size_t len);
const char *lin_imp_str(const struct lin_imp *m, uint32_t name);
void lin_imp_free(struct lin_imp *m);

/* Readers: 0, -1 on a file error (message in f->err, offset in f->err_off). */
int lin_imp_kineto(struct lin_imp *m, const char *path, struct lin_vfile *f);
int lin_imp_nsys(struct lin_imp *m, const char *path, struct lin_vfile *f);
/* Which readers this build has (false: the library was absent at build time). */
bool lin_imp_have(const char *fmt, const char **lacks);

/* Join and classify the events of file fi into v. */
void lin_imp_join(struct lin_validator *v, struct lin_imp *m, uint32_t fi);
/* Chrome/Perfetto trace-event JSON of the joined model; 0 or -1 (errno set). */
int lin_imp_perfetto(const struct lin_imp *m, const char *out_path);

/* Read a lineage trace (requests, handoffs, launches, GPU records in host time through its
 * first clock record), link request -> handoff -> launch -> GPU record, and export it
 * with lin_imp_perfetto(). 0, or -1 with a message in err. */
int lin_imp_lineage_perfetto(const char *trace, const char *out_path, char *err, size_t n);

/* The CLI entry: import each path with fmt, join, report into v; export when
 * perfetto != NULL (the last file's model). Return 0, 64 (fmt unknown or not built),
 * or -1 on a file error (recorded in v). */
int lin_imp_run(struct lin_validator *v, const char *fmt, char *const *paths, int n,
		const char *perfetto);

#endif
