/* SPDX-License-Identifier: MIT */
/*
 * invariants.c - constraints across records that a trace written by lineage's runtime and
 * its CUPTI binding always satisfies, checked (docs/validator.md, "Invariants"): the time
 * order of a declaration and its uses, of a request and the epochs that name it, of an
 * epoch version's issue and the launches under it, and the pairing of a thread's scope
 * closes with its adopts. The identity of API records (their process against the file's
 * header) is checked as they are read (ingest_api.c). Each check keeps a few fields per
 * epoch, version and open scope; the ones that need the whole trace run at the end.
 */
#include "lineage/trace_format.h"
#include "jstate.h"

static struct lin_epoch_ent *epoch_get(struct lin_joiner *v, uint16_t proc, uint64_t id)
{
	bool fresh;
	struct lin_epoch_ent *e = lin_vtab_get(&v->epochs, id, lin_k1(proc, 0), &fresh);
	if (!e)
		v->oom = true;
	return e;
}

static struct lin_vers_ent *vers_get(struct lin_joiner *v, uint16_t proc, uint64_t epoch, uint64_t ver)
{
	bool fresh;
	struct lin_vers_ent *e = lin_vtab_get(&v->vers, epoch, lin_k1(proc, ver), &fresh);
	if (!e)
		v->oom = true;
	return e;
}

/* epoch_declare (host_ns, tid, epoch, version, ...): when and where, and version 1's issue. */
void lin_j_inv_declare(struct lin_joiner *v, uint16_t proc, uint32_t file, const struct lin_rec *r)
{
	struct lin_epoch_ent *e = epoch_get(v, proc, LIN_GET(r, EPOCH_DECLARE, EPOCH));
	if (!e)
		return;
	e->decl_ns = LIN_GET(r, EPOCH_DECLARE, HOST_NS);
	e->decl_off = r->offset;
	e->decl_index = r->index;
	e->decl_file = file;
	uint64_t ver = LIN_IS_NIL(r, EPOCH_DECLARE, VERSION) ? 1 : LIN_GET(r, EPOCH_DECLARE, VERSION);
	if (ver > e->max_ver)
		e->max_ver = (uint32_t)ver;
	struct lin_vers_ent *ve = vers_get(v, proc, LIN_GET(r, EPOCH_DECLARE, EPOCH), ver);
	if (ve && (!ve->issued_ns || LIN_GET(r, EPOCH_DECLARE, HOST_NS) < ve->issued_ns))
		ve->issued_ns =
			LIN_GET(r, EPOCH_DECLARE, HOST_NS) ? LIN_GET(r, EPOCH_DECLARE, HOST_NS) : 1;
}

/* epoch_reissue (host_ns, tid, epoch, new version, reason): the new version's issue. */
void lin_j_inv_reissue(struct lin_joiner *v, uint16_t proc, const struct lin_rec *r)
{
	struct lin_epoch_ent *e = epoch_get(v, proc, LIN_GET(r, EPOCH_REISSUE, EPOCH));
	if (!e || LIN_GET(r, EPOCH_REISSUE, VERSION) > UINT32_MAX)
		return;
	if (LIN_GET(r, EPOCH_REISSUE, VERSION) > e->max_ver)
		e->max_ver = (uint32_t)LIN_GET(r, EPOCH_REISSUE, VERSION);
	struct lin_vers_ent *ve = vers_get(v, proc, LIN_GET(r, EPOCH_REISSUE, EPOCH),
					   LIN_GET(r, EPOCH_REISSUE, VERSION));
	if (ve && (!ve->issued_ns || LIN_GET(r, EPOCH_REISSUE, HOST_NS) < ve->issued_ns))
		ve->issued_ns =
			LIN_GET(r, EPOCH_REISSUE, HOST_NS) ? LIN_GET(r, EPOCH_REISSUE, HOST_NS) : 1;
}

/* A launch or adopt at @t under (@epoch, @ver; 0: the version not said). */
void lin_j_inv_use(struct lin_joiner *v, uint16_t proc, uint64_t epoch, uint64_t ver, uint64_t t)
{
	struct lin_epoch_ent *e = epoch_get(v, proc, epoch);
	if (!e)
		return;
	if (!e->use_ns || t < e->use_ns)
		e->use_ns = t ? t : 1;
	if (!ver || ver == LIN_NIL)
		return;
	struct lin_vers_ent *ve = vers_get(v, proc, epoch, ver);
	if (ve && (!ve->first_ns || t < ve->first_ns))
		ve->first_ns = t ? t : 1;
}

/* token_adopt (host_ns, tid, kind, target, version, capture_tid, capture_seq, depth, late):
 * the scope it opened on its thread, at its depth. */
void lin_j_inv_adopt(struct lin_joiner *v, uint16_t proc, const struct lin_rec *r)
{
	if (LIN_IS_NIL(r, TOKEN_ADOPT, DEPTH) || LIN_GET(r, TOKEN_ADOPT, DEPTH) == 0 ||
	    LIN_GET(r, TOKEN_ADOPT, DEPTH) > 0xffff)
		return;
	bool fresh;
	uint64_t *s = lin_vtab_get(&v->scopes, LIN_GET(r, TOKEN_ADOPT, TID),
				   lin_k1(proc, LIN_GET(r, TOKEN_ADOPT, DEPTH)), &fresh);
	if (!s) {
		v->oom = true;
		return;
	}
	*s = LIN_GET(r, TOKEN_ADOPT, TARGET) + 1;
	if (LIN_GET(r, TOKEN_ADOPT, TARGET_KIND) == LIN_TARGET_EPOCH)
		lin_j_inv_use(v, proc, LIN_GET(r, TOKEN_ADOPT, TARGET),
			      LIN_IS_NIL(r, TOKEN_ADOPT, VERSION) ? 0 : LIN_GET(r, TOKEN_ADOPT, VERSION),
			      LIN_GET(r, TOKEN_ADOPT, HOST_NS));
}

/* scope_close (host_ns?, tid, kind, target, depth): the scope its thread opened at that
 * depth, for that target. A close that pairs with none was written for another thread or
 * target than the runtime's (its adopt may also have been lost: a dropped record says so). */
void lin_j_inv_scope_close(struct lin_joiner *v, uint16_t proc, uint32_t file, const struct lin_rec *r)
{
	if (LIN_IS_NIL(r, SCOPE_CLOSE, DEPTH) || LIN_GET(r, SCOPE_CLOSE, DEPTH) == 0 ||
	    LIN_GET(r, SCOPE_CLOSE, DEPTH) > 0xffff)
		return;
	uint64_t *s = lin_vtab_find(&v->scopes, LIN_GET(r, SCOPE_CLOSE, TID),
				    lin_k1(proc, LIN_GET(r, SCOPE_CLOSE, DEPTH)));
	if (s && *s == LIN_GET(r, SCOPE_CLOSE, TARGET) + 1) {
		*s = 0;
		return;
	}
	static const char *const n[] = { "tid", "target", "depth" };
	uint64_t ids[] = { LIN_GET(r, SCOPE_CLOSE, TID), LIN_GET(r, SCOPE_CLOSE, TARGET),
			   LIN_GET(r, SCOPE_CLOSE, DEPTH) };
	lin_j_structural(v, "unpaired_scope_close", file, r, 3, n, ids);
}

/* At the end of the run. */
void lin_j_inv_finish(struct lin_joiner *v)
{
	size_t it = 0;
	struct lin_vkey k;
	const struct lin_epoch_ent *e;
	while ((e = lin_vtab_next(&v->epochs, &it, &k))) {
		if (!(e->flags & LIN_EP_DECLARED) || !e->decl_ns)
			continue;
		uint16_t proc = lin_k1_proc(k.k1);
		if (e->use_ns && e->use_ns < e->decl_ns) {
			/* Its id is known only once lin_epoch_declare returns, after the record's
			 * clock read: nothing can adopt or launch under it before. */
			static const char *const n[] = { "epoch", "used_ns", "declared_ns" };
			uint64_t ids[] = { k.k0, e->use_ns, e->decl_ns };
			v->sum.structural++;
			lin_j_finding(v, "structural", "used_before_declare", e->decl_file,
				      e->decl_off, e->decl_index, 3, n, ids);
		}
		uint32_t nr = 0;
		const uint64_t *reqs = lin_j_epoch_reqs(v, e, &nr);
		for (uint32_t i = 0; i < nr; i++) {
			const uint64_t *b = lin_vtab_find(&v->requests, reqs[i], lin_k1(proc, 0));
			if (!b || !*b || *b <= e->decl_ns)
				continue;
			/* The request's id is known only once lin_request_begin returns. */
			static const char *const n[] = { "epoch", "request", "declared_ns", "begun_ns" };
			uint64_t ids[] = { k.k0, reqs[i], e->decl_ns, *b };
			v->sum.structural++;
			lin_j_finding(v, "structural", "epoch_before_request", e->decl_file,
				      e->decl_off, e->decl_index, 4, n, ids);
		}
	}
	it = 0;
	const struct lin_vers_ent *ve;
	while ((ve = lin_vtab_next(&v->vers, &it, &k))) {
		uint32_t ver = (uint32_t)(k.k1 & 0xffffffffu);
		if (!ver || !ve->first_ns)
			continue;
		const struct lin_epoch_ent *ep =
			lin_vtab_find(&v->epochs, k.k0, lin_k1(lin_k1_proc(k.k1), 0));
		if (!ep || !(ep->flags & LIN_EP_DECLARED) || !ep->decl_ns)
			continue; /* not declared in the trace: unknown_epoch says so */
		if (ve->issued_ns && (ve->first_ns >= ve->issued_ns || ver == 1))
			continue; /* version 1 is issued by the declaration: used_before_declare */
		/* Used under a version the epoch never had: structural. Before the record of its
		 * re-issue: a note, for a legal race can write it (lin_epoch_reissue makes the new
		 * version visible before it reads the clock for its record, and another thread
		 * that enters the epoch by id can launch under it in between). */
		static const char *const n[] = { "epoch", "version", "used_ns", "issued_ns" };
		uint64_t ids[] = { k.k0, ver, ve->first_ns, ve->issued_ns ? ve->issued_ns : LIN_NIL };
		const char *kind = ve->issued_ns ? "note" : "structural";
		if (ve->issued_ns)
			v->sum.notes++;
		else
			v->sum.structural++;
		lin_j_finding(v, kind, ve->issued_ns ? "version_before_issue" : "unknown_version",
			      ve->launched ? ve->file : ep->decl_file,
			      ve->launched ? ve->offset : ep->decl_off,
			      ve->launched ? ve->index : ep->decl_index, 4, n, ids);
	}
}
