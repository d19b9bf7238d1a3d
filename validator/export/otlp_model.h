/* SPDX-License-Identifier: MIT */
/* otlp_model.h - the span model built from trace files (internal to the OTLP exporter). */
#ifndef LIN_VALIDATOR_OTLP_MODEL_H
#define LIN_VALIDATOR_OTLP_MODEL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "otlp_emit.h"
#include "join.h"
#include "vtab.h"

struct xproc {
	char host[256];
	char backend[32];
	uint64_t pid, key;
	uint64_t tmin, tmax;     /* host ns seen */
	struct lin_oj_clock clk; /* to Unix time: the header's start_unix_ns, every clock
				  * record (the clock map), device_clock (trace/otlp_emit.h) */
	uint32_t ndev;
	uint32_t dev[8]; /* devices seen (first 8) */
};

struct xreq {
	uint64_t id, begin, end, parent, user_id, name_sid;
	uint64_t rparent; /* remote parent span id (remote) */
	uint8_t rtrace[16];
	uint32_t tid;
	uint16_t proc;
	bool has_end, remote, joined;
	bool rname; /* remote link read from a format-1.0 "w3c:" name */
};

struct xepoch {
	uint64_t id, begin, end, parent, name_sid;
	uint64_t reqs;          /* first index in reqpool */
	uint64_t exec, ordinal; /* graph replay, LIN_NIL when not one */
	uint32_t version, reissues, nreq, tid;
	uint16_t proc;
	bool has_end;
};

struct xadopt {
	uint64_t begin, end, target, capture_tid;
	uint32_t tid, depth, kind;
	uint16_t proc;
	bool closed;
};

struct xgpu {
	uint64_t corr, start, end, node, graph, name_sid, offset, bytes;
	uint64_t epoch;  /* the validator's verdict: joined epoch, or LIN_NIL */
	const char *why; /* ... rule (inferred) or cause (lost, ambiguous) */
	uint32_t device, context, stream, file;
	uint16_t proc;
	uint8_t kind; /* LIN_REC_KERNEL, _MEMCPY, _MEMSET */
	uint8_t join; /* enum lin_join; LIN_JOIN_NONE: no verdict */
};

struct xfind {
	const char *kind, *cause;
	uint64_t offset, next; /* next finding of the same record, or LIN_NIL */
	uint32_t file, ncand;
	bool on_gpu; /* about a GPU record: an event of its span */
	uint64_t cand[4];
};

/* An end, retire or reissue read before its request or epoch (applied after the files). */
struct xlate {
	uint64_t t, id, version;
	uint32_t type;
	uint16_t proc;
};

struct xmodel {
	struct xproc *procs;
	unsigned nprocs;
	int *file_proc; /* file index -> process, -1: no header */
	struct lin_vec reqs, epochs, adopts, gpus, reqpool, chars, finds, late;
	/* (proc, id) -> index: requests, epochs; (proc, sid) -> {off, len}: strings;
	 * (file, offset) -> first finding; (span id, 0) -> (proc << 1 | is_epoch, index);
	 * (proc, 0) -> first finding of the process */
	struct lin_vtab req_ix, ep_ix, str_ix, find_ix, span_ix;
	struct lin_vtab rep_exec_ix, rep_ord_ix; /* (proc, replay epoch) -> exec, ordinal */
	bool oom;
};

/* otlp_model.c */
int lin_xmodel_load(struct xmodel *m, const char *const *files, int n);
void lin_xmodel_free(struct xmodel *m);
const char *lin_xmodel_str(const struct xmodel *m, uint16_t proc, uint64_t sid, uint32_t *len);
struct xreq *lin_xmodel_req(const struct xmodel *m, uint16_t proc, uint64_t id);
struct xepoch *lin_xmodel_epoch(const struct xmodel *m, uint16_t proc, uint64_t id);
const uint64_t *lin_xmodel_reqs(const struct xmodel *m, const struct xepoch *e);
/* The epoch the validator joined @g to (observed or inferred), or NULL. */
struct xepoch *lin_xmodel_gpu_epoch(const struct xmodel *m, const struct xgpu *g);
void lin_xmodel_req_trace(const struct xmodel *m, const struct xreq *r, uint8_t out[16]);
void lin_xmodel_epoch_trace(const struct xmodel *m, const struct xepoch *e, uint8_t out[16]);
/* The request at the root of @e's request chain, or NULL. */
struct xreq *lin_xmodel_epoch_root(const struct xmodel *m, const struct xepoch *e);
/* The first finding about the record at (@file, @offset), or LIN_NIL; then xfind.next. */
uint64_t lin_xmodel_find(const struct xmodel *m, uint32_t file, uint64_t offset);

/* otlp_find.c: every finding but notes, into m->finds and m->find_ix; the validator's
 * verdict on each GPU record, into its xgpu (join, epoch, why) */
void lin_xmodel_load_findings(struct xmodel *m, const char *const *files, int n);

/* otlp_json.c */
struct lin_otlp_stats;
int lin_xmodel_write(const struct xmodel *m, FILE *out, struct lin_otlp_stats *st);

#endif
