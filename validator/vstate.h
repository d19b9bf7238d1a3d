/* SPDX-License-Identifier: MIT */
/* vstate.h - the validator's state, shared by ingest.c, resolve.c and report.c. */
#ifndef LIN_VALIDATOR_VSTATE_H
#define LIN_VALIDATOR_VSTATE_H

#include "reader.h"
#include "validate.h"
#include "vtab.h"

#define LIN_MAX_PROCS 65535
#define LIN_MAX_IDS 6
#define LIN_MAX_CAND 8
#define LIN_MAX_CANDS 4096          /* extra ambiguous candidates remembered in all */
#define LIN_NIL UINT64_MAX

struct lin_vfile {
	char *name;
	uint64_t size, records;
	char err[512];
	uint64_t err_off;
	bool failed, truncated, truth;
	bool ended;                /* a trace_end record was read */
};

struct lin_vproc {
	char host[256];
	uint64_t pid;
	uint64_t ext_kind;
	uint64_t min_api_corr;      /* UINT64_MAX: no API record */
	int64_t clock_off;          /* device_ns - host_ns */
	bool have_clock, dropped_host, dropped_cupti;
};

struct lin_finding {
	const char *kind, *cause;
	uint32_t file;
	uint64_t offset, index;
	int nids, ncand;
	const char *idname[LIN_MAX_IDS];
	uint64_t id[LIN_MAX_IDS];
	uint64_t cand[LIN_MAX_CAND];
};

/* A GPU record waiting for its joins. */
struct lin_gpu {
	uint64_t corr, node, key, offset, index;
	uint64_t t0;                /* first known device time (queued..start), or LIN_NIL */
	uint32_t file;
	uint16_t proc;
	uint8_t kind;
	uint8_t flags;              /* LIN_G_* */
};
#define LIN_G_DEVLAUNCH 1
#define LIN_G_GRAPH 2
#define LIN_G_KEY 4

struct lin_epoch_ent { uint64_t req; uint32_t nreq; uint16_t flags; uint16_t pad; };
#define LIN_EP_DECLARED 1

struct lin_corr_ent {
	uint64_t epoch, api_start, api_end;
	uint32_t api_tid;
	uint16_t flags;
	uint8_t domain, ngpu;
};
#define LIN_C_EXT 1
#define LIN_C_AMBIG 2
#define LIN_C_API 4

struct lin_cand { uint64_t epoch; uint32_t corr; uint32_t proc; };
struct lin_node_ent { uint64_t epoch; uint32_t has_epoch; uint32_t pad; };
struct lin_ref_ent { uint64_t offset, index; uint32_t file; uint32_t pad; };
struct lin_truth_ent { uint64_t req; uint32_t nreq; uint32_t seen; };
struct lin_adopt { uint64_t host_ns, seq, offset, index; uint32_t tid, file; uint16_t proc; };
struct lin_launch { uint64_t host_ns, epoch; uint32_t tid; uint16_t proc; uint16_t has_epoch; };

struct lin_validator {
	struct lin_vopts opts;
	struct lin_vsummary sum;
	struct lin_vfile *files;
	unsigned nfiles;
	struct lin_vproc *procs;
	unsigned nprocs;
	struct lin_vec findings;           /* struct lin_finding, capped */
	struct lin_vtab epochs, corrs, closed, captures, nodes, clones, strings, undef, stale,
		truth;
	struct lin_vec reqpool, truthpool, cands, pending, adopts, launches;
	uint8_t unknown_seen[256 / 8 + 1];
	bool oom;
	struct lin_rec rec;
};

/* A capture slot's value: host time + 1, 0 = no capture, or this when the capture's time
 * is not known (LIN_RT_LEAN_TIMESTAMPS). */
#define LIN_V_CAPTURE_UNTIMED UINT64_MAX

/* ingest.c */
void lin_v_finding(struct lin_validator *v, const char *kind, const char *cause, uint32_t file,
		   uint64_t offset, uint64_t index, int nids, const char *const *names,
		   const uint64_t *ids);
bool lin_v_closed(struct lin_validator *v, uint16_t proc, uint64_t corr, bool set);
uint64_t *lin_v_capture_slot(struct lin_validator *v, uint16_t proc, uint64_t tid, uint64_t seq,
			     bool create);
int lin_v_proc(struct lin_validator *v, const char *host, uint64_t pid, uint64_t ext_kind);
/* resolve.c */
void lin_v_gpu(struct lin_validator *v, struct lin_gpu *g);
void lin_v_resolve_all(struct lin_validator *v);
const uint64_t *lin_v_epoch_reqs(const struct lin_validator *v, const struct lin_epoch_ent *e,
				 uint32_t *n);

static inline uint64_t lin_k1(uint16_t proc, uint64_t aux)
{
	return ((uint64_t)proc << 32) | (aux & 0xffffffffu);
}

#endif
