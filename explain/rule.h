/* SPDX-License-Identifier: MIT */
/*
 * rule.h - the ledger's build state and its rules (docs/ledger.md, "Rules"); internal to
 * lin_explain, never installed.
 *
 * lin_explain_build (ledger.c) fills a struct lin_xbuild: every GPU record's host times and
 * its predecessor on its stream (index.c), then each rule's own indexes (its prepare). Each
 * ledger is then made by marks.c (the marks, dependency_ready from the dependency rules)
 * and statements.c (the statements, with the rules that cut or withdraw them). A rule is a
 * row of the table in ledger.c (struct lin_xrule, one file each under rules/) that fills
 * only the entry points of its kind; an ablation (lin_xopts.without) leaves the rows it
 * names out of the build, and with them their prepare.
 *
 * Context: one build at a time per struct lin_explain, on the caller's thread; nothing here
 * is global (the index sorts get the build through qsort_r), so ledgers of distinct ones may
 * be built at once. Memory: the build's arrays live until lin_explain_build returns.
 */
#ifndef LIN_EXPLAIN_RULE_H
#define LIN_EXPLAIN_RULE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "xstate.h"

#define LIN_XRULES_MAX 8

struct lin_xrule;

/* One build: what every rule reads. Arrays are by GPU record (index in x->gpus). */
struct lin_xbuild {
	struct lin_explain *x;
	const struct lin_joiner *v;
	size_t n;
	uint64_t *hs, *he, *herr; /* host start, end (LIN_NIL: unknown), mapping error */
	size_t *pred;             /* the record before on its stream, or SIZE_MAX */
	size_t *bycorr;           /* lineage records with a correlation, by stream and corr */
	size_t nbycorr;
	uint64_t *median; /* kernel_median: by record, its name's median duration (0: unknown) */
	/* device_occupied: kernels, copies and memsets by device, then start; the latest end
	 * of each device's records up to each one, as written (dmax) and on the host clock
	 * (hmax; unknown host ends count as none). */
	size_t *bydev;
	uint64_t *dmax, *hmax;
	size_t nbydev;
	/* The rows of the rule table this build uses (not left out), in table order. */
	const struct lin_xrule *on[LIN_XRULES_MAX];
	size_t non;
};

/*
 * A rule: its name, the ablation that leaves it out, and its entry points (NULL: not of
 * that kind). The ledger calls each kind's rows in table order.
 */
struct lin_xrule {
	const char *name; /* docs/ledger.md's name */
	unsigned without; /* the LIN_XW_* flag that leaves the row out; 0: never */
	enum lin_how how; /* what the mark or statement it infers says */
	/* Its indexes, once per build after the shared ones (index.c); false: out of memory. */
	bool (*prepare)(struct lin_xbuild *b);
	/* dependency_ready of a stream's record @i: the GPU record whose end bounds its
	 * readiness (SIZE_MAX: none). */
	size_t (*bound)(const struct lin_xbuild *b, size_t i);
	/* dependency_ready of a graph node's record @i: LIN_HOW_GRAPH_EDGE with *@t, *@err
	 * (host) and *@by (the record), else the how of the unknown. */
	enum lin_how (*graph_bound)(const struct lin_xbuild *b, size_t i, uint64_t *t,
				    uint64_t *err, size_t *by);
	/* The stretch from the frontier @front (@fdev as written) to the start @start that no
	 * known dependency explains: statements added to @l, and where the unresolved rest
	 * starts (*@why: what is missing, when the rule finds its precondition missing). */
	uint64_t (*busy)(const struct lin_xbuild *b, struct lin_xlaunch *l, size_t i,
			 uint64_t front, uint64_t fdev, uint64_t start, enum lin_how *why);
	/* After the dominant statement @d (its start as written @ddev, LIN_NIL: a host
	 * time) is chosen: may withdraw it (competing causes). */
	void (*withdraw)(const struct lin_xbuild *b, struct lin_xlaunch *l, size_t i,
			 const struct lin_xseg *d, uint64_t ddev);
	/* The off-CPU time of thread (@proc, @tid) in state @state (LIN_SCHED_*) within
	 * [@s, @e], and the span [*@first, *@last] it lies in (0: none). */
	uint64_t (*off_cpu)(const struct lin_xbuild *b, uint16_t proc, uint64_t tid, uint32_t state,
			    uint64_t s, uint64_t e, uint64_t *first, uint64_t *last);
	/* Whether thread (@proc, @tid)'s off-CPU evidence has a gap (lost or refused). */
	bool (*sched_gap)(const struct lin_xbuild *b, uint16_t proc, uint64_t tid);
	/* After the statements: a finding on the kernel itself (kernel_slow). */
	void (*after)(const struct lin_xbuild *b, struct lin_xlaunch *l, size_t i);
};

/* The rows, one per file under rules/; ledger.c's table orders them. */
extern const struct lin_xrule lin_xrule_stream_order;  /* rules/stream_order.c */
extern const struct lin_xrule lin_xrule_event_wait;    /* rules/event_wait.c */
extern const struct lin_xrule lin_xrule_graph_edge;    /* rules/graph_edge.c */
extern const struct lin_xrule lin_xrule_device;        /* rules/device.c */
extern const struct lin_xrule lin_xrule_kernel_median; /* rules/kernel_slow.c */
extern const struct lin_xrule lin_xrule_host_sched;    /* rules/host_sched.c */

/* Whether row @r is on in build @b. */
static inline bool lin_xbuild_on(const struct lin_xbuild *b, const struct lin_xrule *r)
{
	for (size_t k = 0; k < b->non; k++)
		if (b->on[k] == r)
			return true;
	return false;
}

/* ------------------------------------------------------------------ small shared helpers */

static inline uint64_t pk1(uint16_t proc, uint64_t aux)
{
	return ((uint64_t)proc << 32) | (aux & 0xffffffffu);
}

static inline int cmp_u64(uint64_t a, uint64_t b) { return a < b ? -1 : a > b; }

static inline uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* GPU record @i of the build. */
static inline const struct lin_xgpu *gpu_at(const struct lin_xbuild *b, size_t i)
{
	return lin_vec_at(&b->x->gpus, i);
}

/* The device a record ran on: its process (imported: file and process) and device. */
static inline int cmp_dev_key(const struct lin_xgpu *a, const struct lin_xgpu *b)
{
	int c = cmp_u64(a->proc, b->proc);
	if (!c && a->proc == LIN_XPROC_IMPORTED) {
		c = cmp_u64(a->file, b->file);
		if (!c)
			c = cmp_u64(a->iproc, b->iproc);
	}
	return c ? c : cmp_u64(a->dev, b->dev);
}

/* The stream a record ran on: its device, context and stream. */
static inline int cmp_stream_key(const struct lin_xgpu *a, const struct lin_xgpu *b)
{
	int c = cmp_dev_key(a, b);
	if (!c)
		c = cmp_u64(a->ctx, b->ctx);
	return c ? c : cmp_u64(a->stream, b->stream);
}

/* By stream, then correlation: the order bycorr is sorted in and searched by. */
static inline int cmp_corr_key(const struct lin_xgpu *a, const struct lin_xgpu *b)
{
	int c = cmp_stream_key(a, b);
	return c ? c : cmp_u64(a->corr, b->corr);
}

/* Records that take part in stream order: timed, and not duplicates. */
static inline bool ordered(const struct lin_xgpu *g)
{
	return g->start != LIN_NIL && g->end != LIN_NIL && g->end >= g->start &&
	       !(g->flags & (LIN_XG_DUP | LIN_XG_NOSTREAM));
}

/* Whether record @p, a candidate predecessor of @g, ended after @g started (one process's
 * device clock: compared as written, no mapping). */
static inline bool overlaps(const struct lin_xgpu *p, const struct lin_xgpu *g)
{
	return p->end > g->start;
}

static inline void mark_set(struct lin_xlaunch *l, enum lin_mark m, uint64_t t, uint64_t err,
			    enum lin_evidence ev, enum lin_how how)
{
	l->m[m] = (struct lin_xmark){ .t = t, .err = err, .ev = (uint8_t)ev, .how = (uint8_t)how };
}

static inline void mark_unknown(struct lin_xlaunch *l, enum lin_mark m, enum lin_how how)
{
	mark_set(l, m, 0, 0, LIN_EV_UNKNOWN, how);
}

static inline bool mark_known(const struct lin_xlaunch *l, enum lin_mark m)
{
	return l->m[m].ev == LIN_EV_OBSERVED || l->m[m].ev == LIN_EV_INFERRED;
}

/* ------------------------------------------------------------------ index.c */

/* qsort of a vector (an empty one has no data pointer, which qsort must not get). */
void lin_x_vsort(struct lin_vec *v, int (*cmp)(const void *, const void *));
/* qsort_r of @k GPU record indexes by @cmp, which gets the build @b as its argument. */
void lin_x_sort_idx(struct lin_xbuild *b, size_t *idx, size_t k,
		    int (*cmp)(const void *, const void *, void *));
/* Device time @dev of record @g on the host clock (*@h, error *@err); false: no mapping. */
bool lin_x_to_host(const struct lin_xbuild *b, const struct lin_xgpu *g, uint64_t dev, uint64_t *h,
		   uint64_t *err);
/* The shared indexes: host times, stream predecessors, lineage records by correlation.
 * false: out of memory. */
bool lin_x_index(struct lin_xbuild *b);

/* ------------------------------------------------------------------ marks.c */

/* Sort the declarations and adopts host_marks searches. */
void lin_x_marks_index(struct lin_explain *x);
/* The device marks (kernel, queue, submission, the launch call), in @raw each one's time
 * as written (imported: the file's clock), and in *@tid the launching thread (LIN_NIL). */
void lin_x_device_marks(const struct lin_xbuild *b, struct lin_xlaunch *l, size_t i, uint64_t *tid,
			uint64_t *raw);
/* request_ready, declared, captured, adopted, as seen from the launching thread @tid. */
void lin_x_host_marks(const struct lin_xbuild *b, struct lin_xlaunch *l, size_t i, uint64_t tid);
/* A launch joined by inference: its host marks are as good as that join. */
void lin_x_inferred_join(struct lin_xlaunch *l);
/* dependency_ready, from the dependency rules on; @raw as in lin_x_device_marks. */
void lin_x_dep_mark(const struct lin_xbuild *b, struct lin_xlaunch *l, size_t i, uint64_t *raw);
/* A mark later than a known mark that must follow it becomes unknown (out_of_order). */
void lin_x_out_of_order(struct lin_xlaunch *l);

/* ------------------------------------------------------------------ statements.c */

/* Statement [@s, @e] of cause @c, when e > s. */
void lin_x_add_seg(struct lin_xlaunch *l, uint64_t s, uint64_t e, enum lin_xcause c,
		   enum lin_evidence ev, enum lin_how how);
/* The statements of launch @i, their dominant cause, and whether it is withdrawn. */
void lin_x_statements(const struct lin_xbuild *b, struct lin_xlaunch *l, size_t i, uint64_t tid,
		      const uint64_t *raw);

/* ------------------------------------------------------------------ rules/event_wait.c */

/* The most producers lin_x_wait_producers names (and the bounding one besides). */
#define LIN_X_WAIT_DEPS 16
/* The records GPU record @g waits for through events: the producer of each wait on its
 * stream before it (up to LIN_X_WAIT_DEPS, the latest waits; and the latest-ending producer
 * of them all, the one event_wait bounds @g with), into @deps (LIN_X_WAIT_DEPS + 1
 * entries); their count, or SIZE_MAX when one of those waits names an event the trace has
 * no record of (what @g waited for is not in the trace). 0 when event_wait is off. */
size_t lin_x_wait_producers(const struct lin_xbuild *b, const struct lin_xgpu *g, size_t *deps);
/* The record the waits before record @i on its stream bound it by (the last record launched
 * on the recording's stream before the recording: observed records only, no rule's
 * conclusion), or SIZE_MAX: none, or the event_wait row is left out. */
size_t lin_x_event_producer(const struct lin_xbuild *b, size_t i);

#endif
