/* SPDX-License-Identifier: MIT */
/*
 * ingest_api.c - the API side of ingest: external correlation records and CUPTI API
 * records, paired into the per-correlation state the joins read (capture windows, nested
 * runtime/driver calls, the ring of recent calls per thread the bracket check uses).
 * Records of other types: ingest.c.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "lineage/trace_format.h"
#include "pages.h"
#include "jstate.h"

static void reuse(struct lin_joiner *v, uint32_t file, const struct lin_rec *r, uint64_t corr)
{
	static const char *const n[] = { "correlation" };
	lin_j_structural(v, "correlation_reused", file, r, 1, n, &corr);
}

/* An API or ext record without a correlation id: it can join nothing (brackets.c). */
/* The correlation's entry, made when new; NULL when the correlation was closed already (a
 * reuse, reported) or memory ran out (v->oom). */
static struct lin_corr_ent *corr_entry(struct lin_joiner *v, uint16_t proc, uint32_t file,
				       const struct lin_rec *r, uint64_t corr, bool *fresh)
{
	if (lin_j_closed(v, proc, corr, false) && !lin_vtab_find(&v->corrs, corr, lin_k1(proc, 0))) {
		reuse(v, file, r, corr);
		return NULL;
	}
	struct lin_corr_ent *e = lin_vtab_get(&v->corrs, corr, lin_k1(proc, 0), fresh);
	if (!e)
		v->oom = true;
	return e;
}

static void nil_correlation(struct lin_joiner *v, uint32_t file, const struct lin_rec *r)
{
	static const char *const n[] = { "record_type" };
	uint64_t type = r->type;
	lin_j_structural(v, "nil_correlation", file, r, 1, n, &type);
}

/* One more API call made under pushed id @id (launch accounting, brackets.c), its ext
 * record @r. */
static void count_ext(struct lin_joiner *v, uint16_t proc, uint32_t file, const struct lin_rec *r,
		      uint64_t id, uint16_t late)
{
	bool fresh;
	struct lin_epoch_ent *e = lin_vtab_get(&v->epochs, id, lin_k1(proc, 0), &fresh);
	if (!e) {
		v->oom = true;
		return;
	}
	e->ext_late |= (uint8_t)(1u << lin_c_late(late));
	if (!e->ext_n++ && !(e->flags & LIN_EP_PUSHED)) {
		e->where_off = r->offset; /* until a bracket pushes it (ext_without_bracket) */
		e->where_index = r->index;
		e->where_file = file;
	}
}

/* The ring entry of launch record @corr on @tid (NULL: not among its last LIN_APIRING). */
static struct lin_apirec *ring_rec(struct lin_joiner *v, uint16_t proc, uint32_t tid, uint64_t corr)
{
	struct lin_apiring *ring = lin_vtab_find(&v->apiring, tid, lin_k1(proc, 0));
	for (uint32_t i = 0; ring && i < ring->n; i++)
		if (ring->r[i].corr == (uint32_t)corr)
			return &ring->r[i];
	return NULL;
}

/* The ext id of @pcorr, the nested partner of @corr on @tid, when the two are paired both
 * ways and it has its ext record: from its entry, or once it was joined and evicted, from
 * its ring entry (false: not known). */
static bool partner_ext(struct lin_joiner *v, uint16_t proc, uint32_t tid, uint64_t corr,
			uint64_t pcorr, uint64_t *epoch)
{
	const struct lin_corr_ent *pc = lin_vtab_find(&v->corrs, pcorr, lin_k1(proc, 0));
	if (pc) {
		if (pc->partner != (uint32_t)corr || !(pc->flags & LIN_C_EXT))
			return false;
		*epoch = pc->epoch;
		return true;
	}
	const struct lin_apirec *o = ring_rec(v, proc, tid, pcorr);
	if (!o || o->partner != (uint32_t)corr || o->epoch == LIN_NIL)
		return false;
	*epoch = o->epoch;
	return true;
}

/*
 * Launch accounting counts calls, not ext records (brackets.c, accounting_by_count): a
 * runtime launch and the driver launch nested in it with their own correlations
 * (pair_nested) are one call, and CUPTI writes an ext record for each. Called once per
 * pair, when both ext records (@a, @b) are known: with one id the pair's second record is
 * no call of its own; with two (one of them is wrong: nothing can be pushed between a
 * runtime call and the driver call inside it) the call counts under neither, so no
 * epoch's brackets are credited with it.
 */
static void count_pair(struct lin_joiner *v, uint16_t proc, uint64_t a, uint64_t b)
{
	struct lin_epoch_ent *e = lin_vtab_find(&v->epochs, a, lin_k1(proc, 0));
	if (e)
		e->paired++;
	if (b != a && (e = lin_vtab_find(&v->epochs, b, lin_k1(proc, 0))))
		e->paired++;
}

void lin_j_on_ext(struct lin_joiner *v, uint16_t proc, uint32_t file, const struct lin_rec *r)
{
	if (LIN_GET(r, EXT_CORRELATION, EXT_KIND) != v->procs[proc].ext_kind)
		return;
	if (LIN_IS_NIL(r, EXT_CORRELATION, CORRELATION)) {
		nil_correlation(v, file, r);
		return;
	}
	v->procs[proc].ext_records++;
	/* A late launch pushed its epoch with a late bit (docs/trace-format.md, "Late work"). */
	uint64_t corr = LIN_GET(r, EXT_CORRELATION, CORRELATION),
		 epoch = LIN_GET(r, EXT_CORRELATION, EXTERNAL_ID) & LIN_EXT_ID_MASK;
	uint16_t late = (LIN_GET(r, EXT_CORRELATION, EXTERNAL_ID) & LIN_EXT_LATE_ENDED) ? LIN_C_LATE_ENDED
			: (LIN_GET(r, EXT_CORRELATION, EXTERNAL_ID) & LIN_EXT_LATE_REISSUED)
				? LIN_C_LATE_REISSUED
				: 0;
	if ((LIN_GET(r, EXT_CORRELATION, EXTERNAL_ID) & ~LIN_EXT_ID_MASK) == ~LIN_EXT_ID_MASK) {
		/* Both late bits: no launch pushes that (docs/trace-format.md, "Late work"). */
		static const char *const n[] = { "correlation", "ext_id" };
		uint64_t ids[] = { corr, LIN_GET(r, EXT_CORRELATION, EXTERNAL_ID) };
		lin_j_structural(v, "late_invalid", file, r, 2, n, ids);
	}
	bool fresh;
	struct lin_corr_ent *e = corr_entry(v, proc, file, r, corr, &fresh);
	if (!e)
		return;
	if (!(e->flags & LIN_C_EXT)) {
		e->flags |= LIN_C_EXT | late;
		e->epoch = epoch;
		if (!(e->flags & LIN_C_API)) {
			/* Where the API record will be; until then, this one (ext_without_api_record). */
			e->api_offset = r->offset;
			e->api_index = r->index;
			e->api_file = file;
		}
		count_ext(v, proc, file, r, epoch, late);
		if (e->flags & LIN_C_API) {
			struct lin_apirec *o = e->lkind ? ring_rec(v, proc, e->api_tid, corr) : NULL;
			uint64_t pe;
			if (o)
				o->epoch = epoch;
			if (e->partner && partner_ext(v, proc, e->api_tid, corr, e->partner, &pe))
				count_pair(v, proc, epoch, pe);
			lin_j_xcheck(v, proc, corr, e);
		}
		return;
	}
	if (e->epoch == epoch) {
		if (lin_c_late(e->flags) != lin_c_late(late)) {
			/* One call, one epoch, late and not late (or late two ways). */
			static const char *const n[] = { "correlation", "epoch", "late", "late_before" };
			uint64_t ids[] = { corr, epoch, lin_c_late(late), lin_c_late(e->flags) };
			lin_j_structural(v, "late_mismatch", file, r, 4, n, ids);
		}
		return;
	}
	e->flags |= LIN_C_AMBIG;
	count_ext(v, proc, file, r, epoch, late);
	if (v->cands.n >= LIN_MAX_CANDS) /* listed candidates are bounded */
		return;
	for (size_t i = 0; i < v->cands.n; i++) {
		struct lin_cand *c = lin_vec_at(&v->cands, i);
		if (c->proc == proc && c->corr == corr && c->epoch == epoch)
			return;
	}
	struct lin_cand *c = lin_vec_push(&v->cands);
	if (!c) {
		v->oom = true;
		return;
	}
	*c = (struct lin_cand){ epoch, (uint32_t)corr, proc };
}

/* A second API record of a correlation that is the same call (on_api). */
#define LIN_C_API_NESTED 0x100

/*
 * A runtime call and the driver call it makes may carry one correlation id (CUPTI does
 * not say whether they do): one record per domain, on one thread, is one call. A third
 * record, a second one of a domain or one on another thread is a reuse.
 */
static bool nested_call(const struct lin_corr_ent *e, const struct lin_rec *r)
{
	uint64_t d = LIN_GET(r, API, DOMAIN);

	if (e->flags & LIN_C_API_NESTED || e->api_tid != (uint32_t)LIN_GET(r, API, TID))
		return false;
	return (e->domain == LIN_API_RUNTIME && d == LIN_API_DRIVER) ||
	       (e->domain == LIN_API_DRIVER && d == LIN_API_RUNTIME);
}

/* A stream capture opened (@begin) or closed on @tid by API call @corr. A close pairs with
 * the last capture opened on its thread, else with the last one open anywhere (relaxed
 * mode lets another thread end it); a close without an open (the capture began before the
 * trace) opens at 0; an open never closed stays open. Each thread's open windows form a
 * stack through aux (a close always takes the top of its window's thread: the last open
 * anywhere is the last open on its own thread too), and capopen lists the opened ones in
 * order, closed ones dropped from its top as met: constant time a record, amortized. */
static void capture_api(struct lin_joiner *v, uint16_t proc, uint64_t tid, uint64_t corr, bool begin)
{
	struct lin_jproc *p = &v->procs[proc];
	struct lin_vec *w = &p->capwin;
	if (!begin) {
		/* A window keeps its thread id in 32 bits: a wider id matches none of its own. */
		uint64_t *head = tid == (uint32_t)tid
					 ? lin_vtab_find(&v->capheads, tid, lin_k1(proc, 0))
					 : NULL;
		struct lin_capture *c = head && *head ? lin_vec_at(w, *head - 1) : NULL;
		while (!c && p->capopen.n) {
			const uint64_t *i = lin_vec_at(&p->capopen, p->capopen.n - 1);
			struct lin_capture *o = lin_vec_at(w, *i);
			if (o->end == LIN_NIL) {
				c = o;
				head = lin_vtab_find(&v->capheads, o->tid, lin_k1(proc, 0));
			} else {
				p->capopen.n--;
			}
		}
		if (c) {
			c->end = corr;
			if (head)
				*head = c->aux; /* its thread's window open before it */
			return;
		}
	}
	uint64_t idx = w->n;
	bool fresh;
	uint64_t *head = begin ? lin_vtab_get(&v->capheads, (uint32_t)tid, lin_k1(proc, 0), &fresh)
			       : NULL;
	struct lin_capture *c = !begin || head ? lin_vec_push(w) : NULL;
	if (!c) {
		v->oom = true;
		return;
	}
	*c = (struct lin_capture){ begin ? corr : 0, begin ? LIN_NIL : corr, (uint32_t)tid, 0,
				   head ? *head : 0 };
	if (begin) {
		uint64_t *o = lin_vec_push(&p->capopen);
		if (!o) {
			v->oom = true;
			return;
		}
		*o = idx;
		*head = idx + 1;
	}
}

/*
 * A runtime launch and the driver launch it makes inside it, on one thread with distinct
 * correlation ids, are one launch: its GPU record carries one of the two ids (CUPTI does
 * not say which), so the pair owes one record between them. Each launch record looks for
 * its partner among its thread's last LIN_APIRING launch records.
 */
static void pair_nested(struct lin_joiner *v, uint16_t proc, uint64_t corr, struct lin_corr_ent *e)
{
	bool fresh;
	struct lin_apiring *ring = lin_vtab_get(&v->apiring, e->api_tid, lin_k1(proc, 0), &fresh);
	if (!ring) {
		v->oom = true;
		return;
	}
	for (uint32_t i = 0; i < ring->n && !e->partner && e->api_start != LIN_NIL; i++) {
		struct lin_apirec *o = &ring->r[i];
		bool inside = (o->start <= e->api_start && e->api_end <= o->end) ||
			      (e->api_start <= o->start && o->end <= e->api_end);
		if (o->domain == e->domain || o->corr == (uint32_t)corr || !inside)
			continue;
		e->partner = o->corr;
		struct lin_corr_ent *oc = lin_vtab_find(&v->corrs, o->corr, lin_k1(proc, 0));
		bool mutual = !o->partner && (!oc || !oc->partner);
		if (!mutual)
			continue;
		o->partner = (uint32_t)corr;
		if (oc)
			oc->partner = (uint32_t)corr;
		/* Its ext id: from its entry, or (joined and evicted) the one its ring entry kept. */
		uint64_t pe = oc ? (oc->flags & LIN_C_EXT ? oc->epoch : LIN_NIL) : o->epoch;
		if ((e->flags & LIN_C_EXT) && pe != LIN_NIL)
			count_pair(v, proc, e->epoch, pe);
	}
	ring->r[ring->head] = (struct lin_apirec){
		e->api_start,   e->api_end, e->flags & LIN_C_EXT ? e->epoch : LIN_NIL,
		(uint32_t)corr, e->partner, e->domain,
		{ 0 }
	};
	ring->head = (ring->head + 1) % LIN_APIRING;
	if (ring->n < LIN_APIRING)
		ring->n++;
}

void lin_j_on_api(struct lin_joiner *v, uint16_t proc, uint32_t file, const struct lin_rec *r)
{
	if (LIN_IS_NIL(r, API, CORRELATION)) {
		nil_correlation(v, file, r);
		return;
	}
	uint64_t corr = LIN_GET(r, API, CORRELATION);
	struct lin_jproc *p = &v->procs[proc];
	p->api_records++;
	p->runtime_api |= LIN_GET(r, API, DOMAIN) == LIN_API_RUNTIME;
	int cap = LIN_IS_NIL(r, API, CBID) ? -1
					   : lin_capture_api_of((unsigned)LIN_GET(r, API, DOMAIN),
								LIN_GET(r, API, CBID));
	/* A capture that failed to begin is none; an end that returned
	 * cudaErrorStreamCaptureInvalidated (901, driver and runtime alike) ended it all the
	 * same; one that failed otherwise left it open (maybe_captured after it). */
	if (cap >= 0 &&
	    (LIN_GET(r, API, RETURN_VALUE) == 0 || (cap == 0 && LIN_GET(r, API, RETURN_VALUE) == 901)))
		capture_api(v, proc, LIN_GET(r, API, TID), corr, cap == 1);
	if (corr < p->min_api_corr)
		p->min_api_corr = corr;
	bool fresh;
	struct lin_corr_ent *e = corr_entry(v, proc, file, r, corr, &fresh);
	if (!e)
		return;
	bool second = e->flags & LIN_C_API;
	if (second) {
		if (!nested_call(e, r)) {
			reuse(v, file, r, corr);
			return;
		}
		e->flags |= LIN_C_API_NESTED;
		if (LIN_GET(r, API, DOMAIN) != LIN_API_RUNTIME)
			return; /* the runtime record, the call the application made, is kept */
	}
	e->flags |= LIN_C_API;
	if (!LIN_IS_NIL(r, API, PID) && LIN_GET(r, API, PID) != p->pid) {
		/* Identity: the CUPTI binding writes its own process's calls only. A call of
		 * another process carries a correlation of that process's id space: nothing
		 * joined through it can be trusted (a forked child writing into its parent's
		 * trace, records stamped wrong). */
		e->flags |= LIN_C_FOREIGN;
		static const char *const n[] = { "correlation", "pid", "header_pid" };
		uint64_t ids[] = { corr, LIN_GET(r, API, PID), p->pid };
		lin_j_structural(v, "api_pid_mismatch", file, r, 3, n, ids);
	}
	e->lkind = LIN_IS_NIL(r, API, CBID)
			   ? LIN_LAUNCH_NONE
			   : (uint8_t)lin_launch_kind_of((unsigned)LIN_GET(r, API, DOMAIN),
							 LIN_GET(r, API, CBID));
	if (e->lkind && LIN_GET(r, API, RETURN_VALUE) == 0)
		e->flags |= LIN_C_LAUNCH;
	e->domain = (uint8_t)LIN_GET(r, API, DOMAIN);
	e->api_offset = r->offset;
	e->api_index = r->index;
	e->api_file = file;
	e->api_start = LIN_OPT(r, API, START_DEV);
	e->api_end = LIN_OPT(r, API, END_DEV);
	e->api_tid = (uint32_t)LIN_GET(r, API, TID);
	if (e->api_start != LIN_NIL && e->api_end != LIN_NIL && e->api_end < e->api_start) {
		static const char *const n[] = { "correlation", "start_dev", "end_dev" };
		uint64_t ids[] = { corr, e->api_start, e->api_end };
		lin_j_structural(v, "time_order", file, r, 3, n, ids);
	}
	if (e->lkind)
		pair_nested(v, proc, corr, e);
	if ((e->flags & LIN_C_EXT) && !second) /* the call was checked with its first record */
		lin_j_xcheck(v, proc, corr, e);
}
