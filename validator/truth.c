/* SPDX-License-Identifier: MIT */
/*
 * truth.c - the truth comparison (truth.h): the labels of the truth files in a table of
 * their own, each GPU record's verdict judged against its label, the labels never seen.
 * It reads the joined run through join.h's getters and adds to it through join/feed.h.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "feed.h"
#include "join.h"
#include "reader.h"
#include "records.h"
#include "truth.h"
#include "vtab.h"

/* A label. corr: LIN_NIL unknown. conflict: labelled twice with different requests
 * (neither is used). req: the index of its first request in the pool. */
struct lin_truth_ent {
	uint64_t req, corr, key; /* key: the label's own (the table's is mixed with corr) */
	uint32_t nreq;
	uint16_t seen, conflict;
};

struct lin_truth {
	struct lin_vtab labels; /* (key, proc | gpu_kind): struct lin_truth_ent */
	struct lin_vec pool;    /* uint64_t: the labels' requests */
};

/* A table key's second word: the process and, below, the GPU record kind. */
static uint64_t key1(uint16_t proc, uint64_t aux)
{
	return ((uint64_t)proc << 32) | (aux & 0xffffffffu);
}

/* The process of a key's second word as lin_vtab_next returns it (key1's inverse). */
static uint16_t key1_proc(uint64_t k1) { return (uint16_t)((k1 & ~LIN_VTAB_USED) >> 32); }

/* A truth label that names its launch's correlation is keyed by (key, correlation), in a
 * namespace of its own (BY_CORR in key1's aux): CUPTI repeats a graph node's grid id in
 * every replay, so the grid id alone does not name one kernel record. */
#define BY_CORR 0x10000u
static uint64_t corr_key(uint64_t key, uint64_t corr)
{
	uint64_t x = key ^ (corr * 0x9e3779b97f4a7c15ull) ^ 0xc2b2ae3d27d4eb4full;
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	return x ^ (x >> 33);
}

/* lin_join_judge.truth: keep the label @r of process @proc. */
static void on_label(void *arg, struct lin_joiner *v, uint32_t file, uint16_t proc,
		     const struct lin_rec *r)
{
	struct lin_truth *t = arg;
	struct lin_join_summary *s = lin_joiner_feed_summary(v);
	bool fresh;
	s->truth_records++;
	bool by_corr = !LIN_IS_NIL(r, TRUTH, CORRELATION);
	uint64_t k0 = by_corr ? corr_key(LIN_GET(r, TRUTH, KEY), LIN_GET(r, TRUTH, CORRELATION))
			      : LIN_GET(r, TRUTH, KEY);
	uint64_t aux = LIN_GET(r, TRUTH, GPU_KIND) | (by_corr ? BY_CORR : 0);
	struct lin_truth_ent *e = lin_vtab_get(&t->labels, k0, key1(proc, aux), &fresh);
	if (!e) {
		lin_joiner_feed_oom(v);
		return;
	}
	if (!fresh) {
		/* A second label for the same GPU record (kind and grid id in one process, with
		 * the same correlation when the labels name one, or two truth files that
		 * disagree): the truth itself is in doubt, so neither label is used for that
		 * record. */
		static const char *const n[] = { "gpu_kind", "key" };
		uint64_t ids[] = { LIN_GET(r, TRUTH, GPU_KIND), LIN_GET(r, TRUTH, KEY) };
		s->structural++;
		lin_joiner_feed_finding(v, "structural", "duplicate_truth_label", file, r->offset,
					r->index, 2, n, ids);
		e->conflict = 1;
		return;
	}
	e->nreq = r->nreqs;
	e->corr = LIN_IS_NIL(r, TRUTH, CORRELATION) ? LIN_NIL : LIN_GET(r, TRUTH, CORRELATION);
	e->key = LIN_GET(r, TRUTH, KEY);
	e->req = t->pool.n;
	for (uint32_t i = 0; i < r->nreqs; i++) {
		uint64_t *q = lin_vec_push(&t->pool);
		if (!q) {
			lin_joiner_feed_oom(v);
			return;
		}
		*q = r->reqs[i];
	}
}

/* Whether every element of @a is in @b. */
static bool subset(const uint64_t *a, uint32_t na, const uint64_t *b, uint32_t nb)
{
	for (uint32_t i = 0; i < na; i++) {
		bool found = false;
		for (uint32_t j = 0; j < nb && !found; j++)
			found = a[i] == b[j];
		if (!found)
			return false;
	}
	return true;
}

/* The same set of requests: inclusion both ways (a list that repeats an id, [1, 1], is the
 * set {1} and never equals {1, 2}). */
static bool same_set(const uint64_t *a, uint32_t na, const uint64_t *b, uint32_t nb)
{
	return subset(a, na, b, nb) && subset(b, nb, a, na);
}

/* " request 5", " requests 5, 6, 7 and 2 more", or " no request". */
static size_t put_requests(char *buf, size_t size, const uint64_t *req, uint32_t n)
{
	size_t k = 0;
	if (!n)
		return (size_t)snprintf(buf, size, " no request");
	k += (size_t)snprintf(buf, size, " request%s", n > 1 ? "s" : "");
	for (uint32_t i = 0; i < n && i < 4 && k < size; i++)
		k += (size_t)snprintf(buf + k, size - k, "%s %" PRIu64, i ? "," : "", req[i]);
	if (n > 4 && k < size)
		k += (size_t)snprintf(buf + k, size - k, " and %u more", n - 4);
	return k;
}

/* request_mismatch in words, both sides named: what the record was joined to and what the
 * truth gives it (the ids carry only the first request of each). */
static void mismatch_detail(char *buf, size_t size, uint64_t epoch, const uint64_t *got,
			    uint32_t ngot, const uint64_t *want, uint32_t nwant)
{
	size_t k;
	if (ngot) {
		k = (size_t)snprintf(buf, size, "joined to");
		if (k < size)
			k += put_requests(buf + k, size - k, got, ngot);
		if (k < size)
			k += (size_t)snprintf(buf + k, size - k, " (epoch %" PRIu64 ")", epoch);
	} else {
		k = (size_t)snprintf(buf, size,
				     "joined to op/epoch %" PRIu64 ", which names no request", epoch);
	}
	if (k < size)
		k += (size_t)snprintf(buf + k, size - k, "; the truth gives");
	if (k < size)
		put_requests(buf + k, size - k, want, nwant);
}

/* lin_join_judge.judge: the record's label is seen; a joined record with a label is
 * matched when its requests are the label's, incorrect otherwise. */
static void on_verdict(void *arg, struct lin_joiner *v, const struct lin_gpu_verdict *vd)
{
	struct lin_truth *t = arg;
	if (!vd->keyed)
		return;
	/* A label naming the record's correlation first, then one by the key alone. */
	struct lin_truth_ent *e = vd->corr ? lin_vtab_find(&t->labels, corr_key(vd->key, vd->corr),
							   key1(vd->proc, vd->kind | BY_CORR))
					   : NULL;
	if (!e)
		e = lin_vtab_find(&t->labels, vd->key, key1(vd->proc, vd->kind));
	if (!e)
		return;
	e->seen = 1;
	if (e->conflict) /* duplicate_truth_label: no label to compare with */
		return;
	if (vd->join != LIN_JOIN_OBSERVED && vd->join != LIN_JOIN_INFERRED)
		return;
	struct lin_join_summary *s = lin_joiner_feed_summary(v);
	const uint64_t *got = vd->reqs;
	uint32_t n = vd->nreqs;
	const uint64_t *want = lin_vec_at(&t->pool, (size_t)e->req);
	if (same_set(got, n, want, e->nreq)) {
		s->matched++;
		s->matched_by_level[vd->level]++;
		return;
	}
	s->incorrect++;
	s->incorrect_by_level[vd->level]++;
	static const char *const nm[] = { "key", "epoch", "joined_request", "true_request" };
	uint64_t ids[] = { vd->key, vd->epoch, n ? got[0] : LIN_NIL, e->nreq ? want[0] : LIN_NIL };
	struct lin_finding *f = lin_joiner_feed_finding(v, "incorrect", "request_mismatch",
							vd->file, vd->offset, vd->index, 4, nm, ids);
	if (f)
		mismatch_detail(f->detail, sizeof(f->detail), vd->epoch, got, n, want, e->nreq);
}

/* lin_join_judge.finish: each label never seen is a GPU record lost as no_gpu_record,
 * unless it names a launch the joiner already counted lost for want of it (that loss). */
static void on_finish(void *arg, struct lin_joiner *v)
{
	struct lin_truth *t = arg;
	struct lin_join_summary *s = lin_joiner_feed_summary(v);
	static const char *const n[] = { "gpu_kind", "key", "pid" };
	size_t it = 0;
	struct lin_vkey k;
	const struct lin_truth_ent *e;
	while ((e = lin_vtab_next(&t->labels, &it, &k))) {
		if (e->seen)
			continue;
		uint16_t proc = key1_proc(k.k1);
		if (e->corr != LIN_NIL && lin_joiner_launch_counted_lost(v, proc, e->corr))
			continue;
		uint64_t pid = LIN_NIL;
		const char *host;
		lin_joiner_proc_id(v, proc, &pid, &host);
		uint64_t ids[] = { k.k1 & 0xffffu, e->key, pid };
		s->lost++;
		s->lost_by_cause[LIN_CAUSE_NO_GPU_RECORD]++;
		lin_joiner_feed_finding(v, "lost", lin_cause_name(LIN_CAUSE_NO_GPU_RECORD), 0, 0, 0,
					3, n, ids);
	}
}

struct lin_truth *lin_truth_create(void)
{
	struct lin_truth *t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	lin_vtab_init(&t->labels, sizeof(struct lin_truth_ent));
	lin_vec_init(&t->pool, sizeof(uint64_t));
	return t;
}

void lin_truth_free(struct lin_truth *t)
{
	if (!t)
		return;
	lin_vtab_free(&t->labels);
	lin_vec_free(&t->pool);
	free(t);
}

struct lin_join_judge lin_truth_judge(struct lin_truth *t)
{
	return (struct lin_join_judge){ .arg = t, .truth = on_label, .judge = on_verdict, .finish = on_finish };
}
