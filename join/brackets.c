/* SPDX-License-Identifier: MIT */
/*
 * brackets.c - launch brackets, epoch versions and clocks: what the inference rule and the
 * launch checks of docs/validator.md stand on.
 *
 * Every bracket is kept on its thread, in begin order, with its enclosing bracket, so a
 * lookup by time visits the brackets around a call and their ancestors only. Brackets
 * that pushed nothing are kept to the end (time containment needs them); pushed ones are
 * dropped once checked (xcheck.c). Versions are kept per (epoch, version): the latest
 * launch under it and when it stopped being current, so a launch under a re-issued or
 * retired version is found whatever order the threads' records arrive in. Clock records
 * pair host and device time; every one is kept, and the width of each pair (host before
 * and after the device read) bounds the mapping error.
 */
#include <stdlib.h>
#include <string.h>

#include "lineage/trace_format.h"
#include "jstate.h"

static void structural(struct lin_joiner *v, const char *cause, uint32_t file, uint64_t offset,
		       uint64_t index, int nids, const char *const *names, const uint64_t *ids)
{
	v->sum.structural++;
	lin_j_finding(v, "structural", cause, file, offset, index, nids, names, ids);
}

static struct lin_br *at(struct lin_bthread *t, uint64_t seq)
{
	return seq != LIN_NIL && seq >= t->base && seq - t->base < t->n ? &t->b[seq - t->base] : NULL;
}

static struct lin_vers_ent *version(struct lin_joiner *v, uint16_t proc, uint64_t epoch, uint64_t ver)
{
	bool fresh;
	struct lin_vers_ent *e = lin_vtab_get(&v->vers, epoch, lin_k1(proc, ver), &fresh);
	if (!e)
		v->oom = true;
	return e;
}

static struct lin_epoch_ent *epoch_ent(struct lin_joiner *v, uint16_t proc, uint64_t id)
{
	bool fresh;
	struct lin_epoch_ent *e = lin_vtab_get(&v->epochs, id, lin_k1(proc, 0), &fresh);
	if (!e)
		v->oom = true;
	return e;
}

void lin_j_launched_under(struct lin_joiner *v, uint16_t proc, uint32_t file,
			  const struct lin_rec *r, uint64_t epoch, uint64_t ver, uint64_t host_ns)
{
	struct lin_vers_ent *ve = version(v, proc, epoch, ver);
	if (ve && (!ve->launched || host_ns >= ve->launch_ns)) {
		ve->launch_ns = host_ns;
		ve->offset = r->offset;
		ve->index = r->index;
		ve->file = file;
		ve->launched = 1;
	}
}

/* A launch or adopt the runtime marked @late under (epoch, version), or (request, 0): that
 * version must end in the trace, re-issued for LIN_LATE_REISSUED, its epoch retired (the
 * request ended) for LIN_LATE_ENDED (checked at the end of the run: finish_versions). The
 * first such record is kept. */
void lin_j_late_claim(struct lin_joiner *v, uint16_t proc, uint32_t file, const struct lin_rec *r,
		      uint64_t epoch, uint64_t ver, uint8_t late)
{
	struct lin_vers_ent *ve = version(v, proc, epoch, ver);
	if (!ve || ve->late)
		return;
	ve->late = late;
	ve->late_offset = r->offset;
	ve->late_index = r->index;
	ve->late_file = file;
}

/* The late bits a launch of @late pushes with its epoch id (docs/trace-format.md). */
static uint64_t late_bits(uint64_t late)
{
	return late == LIN_LATE_ENDED      ? LIN_EXT_LATE_ENDED
	       : late == LIN_LATE_REISSUED ? LIN_EXT_LATE_REISSUED
					   : 0;
}

/*
 * Launch accounting by count: a pushed bracket is owed an API call under its id. A
 * bracket with a pushed bracket inside it is not (the inner push is on top of CUPTI's
 * stack during the calls inside it), so only the innermost ones count. A bracket without
 * a depth (format 1.0/1.1) is not counted at all: nothing says whether another one opened
 * inside it (those formats have no launch_end either, so time cannot tell).
 */
static void count_pushed(struct lin_joiner *v, uint16_t proc, uint32_t file, struct lin_bthread *t,
			 const struct lin_rec *r, uint64_t parent, uint8_t late)
{
	struct lin_epoch_ent *e = epoch_ent(v, proc, LIN_GET(r, LAUNCH, EXT_ID) & LIN_EXT_ID_MASK);
	if (!e)
		return;
	bool first = !(e->flags & LIN_EP_PUSHED);
	e->flags |= LIN_EP_PUSHED;
	e->push_late |= (uint8_t)(1u << late);
	if (LIN_IS_NIL(r, LAUNCH, DEPTH) ? first : !e->pushed++) {
		e->where_off = r->offset;
		e->where_index = r->index;
		e->where_file = file;
	}
	if (LIN_IS_NIL(r, LAUNCH, DEPTH))
		return;
	struct lin_br *p = t ? at(t, parent) : NULL;
	if (p && p->pushed && !p->nonleaf) {
		p->nonleaf = 1;
		struct lin_epoch_ent *pe = lin_vtab_find(&v->epochs, p->id, lin_k1(proc, 0));
		if (pe && pe->pushed)
			pe->pushed--;
	}
}

void lin_j_on_launch(struct lin_joiner *v, uint16_t proc, uint32_t file, const struct lin_rec *r)
{
	v->sum.launches++;
	v->procs[proc].launches++;
	uint64_t late = LIN_IS_NIL(r, LAUNCH, LATE) ? LIN_LATE_NONE : LIN_GET(r, LAUNCH, LATE);
	if (late > LIN_LATE_REISSUED ||
	    (late && (LIN_IS_NIL(r, LAUNCH, EPOCH) || LIN_IS_NIL(r, LAUNCH, VERSION) ||
		      !LIN_GET(r, LAUNCH, VERSION)))) {
		/* A value the runtime never writes, or late with no epoch version to be late for. */
		static const char *const n[] = { "tid", "late" };
		uint64_t ids[] = { LIN_GET(r, LAUNCH, TID), late };
		structural(v, "late_invalid", file, r->offset, r->index, 2, n, ids);
		late = LIN_LATE_NONE;
	}
	if (!LIN_IS_NIL(r, LAUNCH, EXT_ID) &&
	    (LIN_GET(r, LAUNCH, EXT_ID) & ~LIN_EXT_ID_MASK) != late_bits(late)) {
		/* The id it pushed says otherwise: one of the two was damaged. */
		static const char *const n[] = { "tid", "epoch", "ext_id", "late" };
		uint64_t ids[] = { LIN_GET(r, LAUNCH, TID), LIN_OPT(r, LAUNCH, EPOCH),
				   LIN_GET(r, LAUNCH, EXT_ID), late };
		structural(v, "late_mismatch", file, r->offset, r->index, 4, n, ids);
	}
	if (!LIN_IS_NIL(r, LAUNCH, EPOCH))
		lin_j_inv_use(v, proc, LIN_GET(r, LAUNCH, EPOCH),
			      LIN_IS_NIL(r, LAUNCH, VERSION) ? 0 : LIN_GET(r, LAUNCH, VERSION),
			      LIN_GET(r, LAUNCH, HOST_NS));
	if (late) {
		/* Late work the runtime saw as such: after its version ended, by design. */
		v->sum.late_launches[late]++;
		static const char *const n[] = { "tid", "epoch", "version" };
		uint64_t ids[] = { LIN_GET(r, LAUNCH, TID), LIN_OPT(r, LAUNCH, EPOCH),
				   LIN_OPT(r, LAUNCH, VERSION) };
		lin_j_finding(v, "note",
			      late == LIN_LATE_ENDED ? "late_after_retire" : "late_after_reissue",
			      file, r->offset, r->index, 3, n, ids);
		if (!LIN_IS_NIL(r, LAUNCH, EPOCH) && !LIN_IS_NIL(r, LAUNCH, VERSION) &&
		    LIN_GET(r, LAUNCH, VERSION))
			lin_j_late_claim(v, proc, file, r, LIN_GET(r, LAUNCH, EPOCH),
					 LIN_GET(r, LAUNCH, VERSION), (uint8_t)late);
	} else if (!LIN_IS_NIL(r, LAUNCH, EPOCH) && !LIN_IS_NIL(r, LAUNCH, VERSION)) {
		lin_j_launched_under(v, proc, file, r, LIN_GET(r, LAUNCH, EPOCH),
				     LIN_GET(r, LAUNCH, VERSION), LIN_GET(r, LAUNCH, HOST_NS));
	}
	bool pushed = !LIN_IS_NIL(r, LAUNCH, EXT_ID);
	uint64_t depth = LIN_IS_NIL(r, LAUNCH, DEPTH) || LIN_GET(r, LAUNCH, DEPTH) > LIN_OPEN_DEPTH
				 ? 0
				 : LIN_GET(r, LAUNCH, DEPTH);
	struct lin_bthread *t = lin_j_bthread(v, proc, LIN_GET(r, LAUNCH, TID), true);
	uint64_t parent = t && depth > 1 ? t->open[depth - 2] : LIN_NIL;
	bool orphan = t && depth > 1 && parent == LIN_NIL;
	/* No bracket open at the depth above (bracket_without_parent, below): its enclosing
	 * one is the nearest still open above that, or none. */
	for (uint64_t d = depth - 1; orphan && d-- > 0 && parent == LIN_NIL;)
		parent = t->open[d];
	if (pushed)
		count_pushed(v, proc, file, t, r, parent, (uint8_t)late);
	else
		v->procs[proc].unpushed++;
	if (!t)
		return;
	t->uncheckable = !v->procs[proc].host_clock && !v->procs[proc].clocks.width_known;
	if (!lin_j_bracket_room(v, t))
		return;
	if (t->n && LIN_GET(r, LAUNCH, HOST_NS) < t->b[t->n - 1].begin && !t->unordered) {
		static const char *const n[] = { "tid", "begin_ns", "previous_begin_ns" };
		uint64_t ids[] = { LIN_GET(r, LAUNCH, TID), LIN_GET(r, LAUNCH, HOST_NS),
				   t->b[t->n - 1].begin };
		structural(v, "time_order", file, r->offset, r->index, 3, n, ids);
		t->unordered = true; /* lookups by time on this thread are refused */
	}
	if (orphan && !t->orphan) {
		/* The runtime opens a bracket at depth d only inside the one open at d - 1.
		 * Once a thread. */
		static const char *const n[] = { "tid", "depth" };
		uint64_t ids[] = { LIN_GET(r, LAUNCH, TID), depth };
		structural(v, "bracket_without_parent", file, r->offset, r->index, 2, n, ids);
		t->orphan = true;
	}
	uint64_t seq = t->base + t->n;
	t->b[t->n++] = (struct lin_br){
		.begin = LIN_GET(r, LAUNCH, HOST_NS),
		.end = LIN_NIL,
		.id = pushed ? LIN_GET(r, LAUNCH, EXT_ID) & LIN_EXT_ID_MASK
			     : (LIN_IS_NIL(r, LAUNCH, EPOCH) ? LIN_NIL : LIN_GET(r, LAUNCH, EPOCH)),
		.offset = r->offset,
		.index = r->index,
		.parent = parent,
		.file = file,
		.depth = (uint16_t)depth,
		.pushed = pushed,
		.late = (uint8_t)late,
	};
	t->unpushed += !pushed;
	if (depth) {
		/* A bracket still open at this depth never ended; deeper ones neither. */
		for (uint64_t d = depth - 1; d < LIN_OPEN_DEPTH; d++)
			t->open[d] = LIN_NIL;
		t->open[depth - 1] = seq;
	}
	if (t->nd)
		lin_j_xcheck_wake(v, t, LIN_GET(r, LAUNCH, HOST_NS));
}

void lin_j_on_launch_end(struct lin_joiner *v, uint16_t proc, uint32_t file, const struct lin_rec *r)
{
	uint64_t depth = LIN_GET(r, LAUNCH_END, DEPTH);
	uint64_t end = LIN_IS_NIL(r, LAUNCH_END, HOST_NS) ? LIN_END_UNTIMED
							  : LIN_GET(r, LAUNCH_END, HOST_NS);
	struct lin_bthread *t = depth && depth <= LIN_OPEN_DEPTH
					? lin_j_bthread(v, proc, LIN_GET(r, LAUNCH_END, TID), false)
					: NULL;
	uint64_t seq = t ? t->open[depth - 1] : LIN_NIL;
	if (seq == LIN_NIL) {
		static const char *const n[] = { "tid", "depth" };
		uint64_t ids[] = { LIN_GET(r, LAUNCH_END, TID), depth };
		structural(v, "unpaired_launch_end", file, r->offset, r->index, 2, n, ids);
		return;
	}
	/* Brackets nest: ending this one ends any deeper one left open (those keep no end). */
	for (uint64_t d = depth - 1; d < LIN_OPEN_DEPTH; d++)
		t->open[d] = LIN_NIL;
	struct lin_br *b = at(t, seq);
	if (!b)
		return; /* dropped (only closed brackets are; not reached) */
	b->end = end;
	if (end != LIN_END_UNTIMED && end < b->begin) {
		static const char *const n[] = { "tid", "begin_ns", "end_ns" };
		uint64_t ids[] = { LIN_GET(r, LAUNCH_END, TID), b->begin, end };
		structural(v, "time_order", file, r->offset, r->index, 3, n, ids);
	}
}

/* epoch_reissue (fields: host_ns, tid, epoch, new version, reason): the previous version
 * stopped being current then; epoch_retire (host_ns, tid, epoch, version): that one did. */
void lin_j_on_version_change(struct lin_joiner *v, uint16_t proc, const struct lin_rec *r)
{
	uint64_t ver = r->type == LIN_REC_EPOCH_REISSUE ? LIN_GET(r, EPOCH_CHANGE, VERSION) - 1
							: LIN_GET(r, EPOCH_CHANGE, VERSION);
	if (r->type == LIN_REC_EPOCH_REISSUE && LIN_GET(r, EPOCH_CHANGE, VERSION) == 0)
		return;
	struct lin_vers_ent *ve = version(v, proc, LIN_GET(r, EPOCH_CHANGE, EPOCH), ver);
	if (ve && (!ve->changed || LIN_GET(r, EPOCH_CHANGE, HOST_NS) < ve->changed_ns)) {
		ve->changed = 1;
		ve->changed_ns = LIN_GET(r, EPOCH_CHANGE, HOST_NS);
	}
	if (ve && r->type == LIN_REC_EPOCH_REISSUE)
		ve->reissued = 1;
	if (r->type == LIN_REC_EPOCH_RETIRE) {
		struct lin_epoch_ent *e = epoch_ent(v, proc, LIN_GET(r, EPOCH_CHANGE, EPOCH));
		if (e)
			e->flags |= LIN_EP_RETIRED;
	}
}

/* request_end (host_ns, tid, request): a late adopt of its token needs it (finish_versions). */
void lin_j_on_request_end(struct lin_joiner *v, uint16_t proc, const struct lin_rec *r)
{
	struct lin_vers_ent *ve = version(v, proc, LIN_GET(r, REQUEST_END, REQUEST), 0);
	if (ve && !ve->changed) {
		ve->changed = 1;
		ve->changed_ns = LIN_GET(r, REQUEST_END, HOST_NS);
	}
}

void lin_j_on_clock(struct lin_joiner *v, uint16_t proc, const struct lin_rec *r)
{
	/* The pair's width bounds how far off the device reading can be placed. */
	if (!lin_cm_add(&v->procs[proc].clocks, LIN_GET(r, CLOCK, HOST_NS), LIN_GET(r, CLOCK, DEVICE_NS),
			LIN_IS_NIL(r, CLOCK, HOST_AFTER_NS) ? LIN_NIL : LIN_GET(r, CLOCK, HOST_AFTER_NS)))
		v->oom = true;
}

/* ---------------------------------------------------------------- at the end of the run */

static void finish_unclosed(struct lin_joiner *v)
{
	static const char *const n[] = { "tid", "depth", "epoch" };
	size_t it = 0;
	struct lin_vkey k;
	struct lin_bthread *t;
	while ((t = lin_vtab_next(&v->bthreads, &it, &k))) {
		for (uint32_t i = 0; i < t->n; i++) {
			const struct lin_br *b = &t->b[i];
			if (b->end != LIN_NIL || !b->depth)
				continue;
			uint64_t ids[] = { k.k0, b->depth, b->id };
			structural(v, "launch_bracket_unclosed", b->file, b->offset, b->index, 3, n, ids);
		}
	}
}

static void finish_versions(struct lin_joiner *v)
{
	static const char *const n[] = { "epoch", "version", "launch_ns", "changed_ns" };
	size_t it = 0;
	struct lin_vkey k;
	const struct lin_vers_ent *ve;
	static const char *const nl[] = { "epoch", "version", "late" };
	while ((ve = lin_vtab_next(&v->vers, &it, &k))) {
		if (ve->late) {
			/* Late after a re-issue: that version was re-issued; late after the end:
			 * its epoch was retired. Otherwise the record claims an end the trace
			 * does not have (damaged, or the end's record was dropped). */
			const struct lin_epoch_ent *e =
				lin_vtab_find(&v->epochs, k.k0, lin_k1(lin_k1_proc(k.k1), 0));
			bool request = !(k.k1 & 0xffffffffu); /* (request, 0): its request_end */
			bool ended = request ? ve->changed
				     : ve->late == LIN_LATE_REISSUED
					     ? ve->reissued
					     : e && (e->flags & LIN_EP_RETIRED);
			if (!ended) {
				uint64_t ids[] = { k.k0, k.k1 & 0xffffffffu, ve->late };
				structural(v, "late_without_end", ve->late_file, ve->late_offset,
					   ve->late_index, 3, nl, ids);
			}
		}
		if (!ve->launched || !ve->changed || ve->launch_ns < ve->changed_ns)
			continue;
		uint64_t ids[] = { k.k0, k.k1 & 0xffffffffu, ve->launch_ns, ve->changed_ns };
		structural(v, "stale_launch", ve->file, ve->offset, ve->index, 4, n, ids);
	}
}

void lin_j_brackets_finish(struct lin_joiner *v)
{
	for (unsigned i = 0; i < v->nprocs; i++) {
		lin_cm_finish(&v->procs[i].clocks);
	}
	finish_unclosed(v);
	finish_versions(v);
}

/* Where each bracket cannot be checked on its own (no bound on the clock mapping): every
 * innermost pushed bracket holds at least one API call, and CUPTI writes one ext record per
 * API call made under a pushed id. Calls, not ext records, are counted: a runtime launch
 * and the driver launch nested in it, each with its own correlation and ext record, are
 * one call (ingest.c, count_pair; paired). */
static void accounting_by_count(struct lin_joiner *v)
{
	static const char *const n[] = { "epoch", "brackets", "calls" };
	size_t it = 0;
	struct lin_vkey k;
	const struct lin_epoch_ent *e;
	while ((e = lin_vtab_next(&v->epochs, &it, &k))) {
		uint16_t proc = lin_k1_proc(k.k1);
		const struct lin_jproc *p = &v->procs[proc];
		uint64_t calls = e->ext_n - (e->paired < e->ext_n ? e->paired : e->ext_n);
		if (e->pushed <= calls || !p->api_records ||
		    ((p->host_clock || p->clocks.width_known) && !p->xcheck_unmarked))
			continue;
		uint64_t ids[] = { k.k0, e->pushed, calls };
		structural(v, "launch_without_api_record", e->where_file, e->where_off,
			   e->where_index, 3, n, ids);
	}
}

/*
 * Brackets that pushed nothing, in a process where nothing was pushed (backend none): an
 * API call inside them marks them; one that holds none is a finding. Decided by the
 * process's backend, not by whether another tool's ext records are present: a call that
 * carried one (and may have been joined and evicted) marked its brackets when it had both
 * records (xcheck.c, decide_unpushed); where one could not wait for that, the process is
 * not checked. Needs a bounded clock mapping.
 */
static void accounting_unpushed(struct lin_joiner *v)
{
	size_t it = 0;
	struct lin_vkey k;
	const struct lin_corr_ent *c;
	while ((c = lin_vtab_next(&v->corrs, &it, &k))) {
		uint16_t proc = lin_k1_proc(k.k1);
		const struct lin_jproc *p = &v->procs[proc];
		uint64_t s, e, u;
		if (!(c->flags & LIN_C_API) || p->pushes || !p->unpushed ||
		    (!p->host_clock && !p->clocks.width_known) ||
		    !lin_j_call_to_host(v, proc, c->api_start, c->api_end, &s, &e, &u))
			continue;
		struct lin_bthread *t = lin_j_bthread(v, proc, c->api_tid, false);
		struct lin_hold h;
		if (t && !t->unordered)
			lin_j_holders(t, s, e, u, false, true, true, &h);
	}
	static const char *const n[] = { "tid", "epoch", "depth" };
	struct lin_bthread *t;
	it = 0;
	while ((t = lin_vtab_next(&v->bthreads, &it, &k))) {
		uint16_t proc = lin_k1_proc(k.k1);
		const struct lin_jproc *p = &v->procs[proc];
		if (p->pushes || p->xcheck_unmarked || !p->api_records || t->unordered ||
		    (!p->host_clock && !p->clocks.width_known))
			continue;
		for (uint32_t i = 0; i < t->n; i++) {
			const struct lin_br *b = &t->b[i];
			if (b->pushed || b->apis || b->end >= LIN_END_UNTIMED)
				continue;
			uint64_t ids[] = { k.k0, b->id, b->depth };
			structural(v, "launch_without_api_record", b->file, b->offset, b->index, 3,
				   n, ids);
		}
	}
}

/*
 * In a process whose runtime pushed the ids, an ext record of its kind that names a
 * declared epoch comes from a bracket that pushed that epoch, or is the replay epoch of a
 * graph_launch record (the graph launch pushed it). An epoch named by ext records that
 * neither pushed is a missing bracket, whatever the clocks say. Only in a process that
 * wrote launch records at all: a trace without any (hand-built, or imported) says nothing
 * of brackets.
 */
static void ext_without_bracket(struct lin_joiner *v)
{
	static const char *const n[] = { "epoch", "ext_records" };
	size_t it = 0;
	struct lin_vkey k;
	const struct lin_epoch_ent *e;
	while ((e = lin_vtab_next(&v->epochs, &it, &k))) {
		uint16_t proc = lin_k1_proc(k.k1);
		const struct lin_jproc *p = &v->procs[proc];
		if (!p->pushes || !p->launches || !e->ext_n || !(e->flags & LIN_EP_DECLARED) ||
		    (e->flags & LIN_EP_PUSHED) || lin_vtab_find(&v->replays, k.k0, lin_k1(proc, 0)))
			continue;
		uint64_t ids[] = { k.k0, e->ext_n };
		structural(v, "ext_without_bracket", e->where_file, e->where_off, e->where_index, 2,
			   n, ids);
	}
}

/*
 * Late bits by presence, where the bracket check could not compare them call by call (no
 * bound on the clock mapping, or calls it left unchecked): an epoch named by an ext record
 * with late bits (none, after retire, after reissue) that no bracket pushing it had is
 * late_mismatch; so is one pushed with late bits no ext record naming it has, unless the
 * process lost CUPTI records (the call's ext record may be among them). Only in processes
 * whose runtime pushed the ids.
 */
static void late_by_presence(struct lin_joiner *v)
{
	static const char *const n[] = { "epoch", "ext_late", "push_late" };
	size_t it = 0;
	struct lin_vkey k;
	const struct lin_epoch_ent *e;
	while ((e = lin_vtab_next(&v->epochs, &it, &k))) {
		const struct lin_jproc *p = &v->procs[lin_k1_proc(k.k1)];
		uint8_t missing = (uint8_t)(e->push_late & ~e->ext_late);
		if (p->dropped_cupti || !e->ext_n)
			missing = 0; /* none arrived (launch accounting says so), or some were lost */
		if (!p->pushes || !(e->flags & LIN_EP_PUSHED) ||
		    (!(e->ext_late & ~e->push_late) && !missing) ||
		    ((p->host_clock || p->clocks.width_known) && !p->xcheck_unmarked))
			continue;
		uint64_t ids[] = { k.k0, e->ext_late, e->push_late };
		structural(v, "late_mismatch", e->where_file, e->where_off, e->where_index, 3, n, ids);
	}
}

void lin_j_accounting_finish(struct lin_joiner *v)
{
	ext_without_bracket(v);
	late_by_presence(v);
	accounting_by_count(v);
	accounting_unpushed(v);
}
