/* SPDX-License-Identifier: MIT */
/*
 * truth.c - the truth comparison (truth.h): the labels of the truth files in a table of
 * their own, each GPU record's verdict judged against its label, the labels never seen.
 * It reads the joined run through join.h's getters and adds to it through join/feed.h.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "feed.h"
#include "join.h"
#include "reader.h"
#include "records.h"
#include "truth.h"
#include "vtab.h"

/* A label, where it was read (file, offset, index: for the finding when its GPU record
 * never appears). corr: LIN_NIL unknown. conflict: labelled twice (neither is used).
 * req: the index of its first request in the pool. */
struct lin_truth_ent {
	uint64_t req, corr, key, offset, index;
	uint32_t nreq, file;
	uint16_t proc;
	uint8_t kind, seen, conflict;
};

struct lin_truth {
	struct lin_vtab labels; /* exact key (label_key): uint64_t, the label's index in ents */
	struct lin_vec ents;    /* struct lin_truth_ent, in the order the labels were read */
	struct lin_vec pool;    /* uint64_t: the labels' requests */
	uint64_t *scratch;      /* two sorted request lists, for same_set */
	size_t nscratch;
};

/* The table key of a label, exact (no hash: two labels share a key only when they name
 * the same record): k0 the key (grid id, or start_dev); k1 the process, the GPU kind and,
 * when the label names one, its launch's correlation (32-bit: the reader checks), in a
 * namespace of its own — CUPTI repeats a graph node's grid id in every replay, so the
 * grid id alone does not name one kernel record. */
#define K1_BY_CORR (1ull << 32)
static uint64_t label_k1(uint16_t proc, uint8_t kind, uint64_t corr)
{
	return ((uint64_t)proc << 41) | ((uint64_t)kind << 33) |
	       (corr == LIN_NIL ? 0 : K1_BY_CORR | (corr & 0xffffffffu));
}

/* Why a label may not be used (NULL: it may): a GPU kind the format does not know. An
 * empty request list is a label too: the record serves no request (work outside any). */
static const char *bad_label(const struct lin_rec *r)
{
	uint64_t k = LIN_GET(r, TRUTH, GPU_KIND);
	if (k != LIN_REC_KERNEL && k != LIN_REC_MEMCPY && k != LIN_REC_MEMSET)
		return "gpu_kind is not 22 (kernel), 23 (memcpy) or 24 (memset)";
	return NULL;
}

/* lin_join_judge.truth: keep the label @r of process @proc. */
static void on_label(void *arg, struct lin_joiner *v, uint32_t file, uint16_t proc,
		     const struct lin_rec *r)
{
	struct lin_truth *t = arg;
	struct lin_join_summary *s = lin_joiner_feed_summary(v);
	bool fresh;
	s->truth_records++;
	static const char *const n[] = { "gpu_kind", "key" };
	uint64_t ids[] = { LIN_GET(r, TRUTH, GPU_KIND), LIN_GET(r, TRUTH, KEY) };
	const char *why = bad_label(r);
	if (why) { /* never used: a record it could match is judged by no label */
		s->structural++;
		struct lin_finding *f = lin_joiner_feed_finding(v, "structural", "bad_truth_label",
								file, r->offset, r->index, 2, n, ids);
		if (f)
			snprintf(f->detail, sizeof(f->detail), "%s", why);
		return;
	}
	uint64_t corr = LIN_IS_NIL(r, TRUTH, CORRELATION) ? LIN_NIL : LIN_GET(r, TRUTH, CORRELATION);
	uint8_t kind = (uint8_t)ids[0];
	uint64_t *ix = lin_vtab_get(&t->labels, ids[1], label_k1(proc, kind, corr), &fresh);
	if (!ix) {
		lin_joiner_feed_oom(v);
		return;
	}
	if (!fresh) {
		/* A second label for the same GPU record (kind and grid id in one process, with
		 * the same correlation when the labels name one, or two truth files that
		 * disagree): the truth itself is in doubt, so neither label is used for that
		 * record. */
		s->structural++;
		lin_joiner_feed_finding(v, "structural", "duplicate_truth_label", file, r->offset,
					r->index, 2, n, ids);
		((struct lin_truth_ent *)lin_vec_at(&t->ents, (size_t)*ix))->conflict = 1;
		return;
	}
	struct lin_truth_ent *e = lin_vec_push(&t->ents);
	if (!e) {
		lin_vtab_del(&t->labels, ix);
		lin_joiner_feed_oom(v);
		return;
	}
	*ix = t->ents.n - 1;
	*e = (struct lin_truth_ent){ .req = t->pool.n,
				     .corr = corr,
				     .key = ids[1],
				     .offset = r->offset,
				     .index = r->index,
				     .nreq = r->nreqs,
				     .file = file,
				     .proc = proc,
				     .kind = kind };
	for (uint32_t i = 0; i < r->nreqs; i++) {
		uint64_t *q = lin_vec_push(&t->pool);
		if (!q) {
			lin_joiner_feed_oom(v);
			return;
		}
		*q = r->reqs[i];
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/* @a sorted with its repeats removed, in @out: its length. */
static size_t as_set(const uint64_t *a, uint32_t n, uint64_t *out)
{
	if (!n) /* @a may be NULL then */
		return 0;
	memcpy(out, a, n * sizeof(*a));
	qsort(out, n, sizeof(*out), cmp_u64);
	size_t m = 0;
	for (uint32_t i = 0; i < n; i++)
		if (!m || out[m - 1] != out[i])
			out[m++] = out[i];
	return m;
}

/* The same set of requests (a list that repeats an id, [1, 1], is the set {1} and never
 * equals {1, 2}): both sorted, repeats dropped, compared; n log n, as an epoch may serve
 * many requests. -1: out of memory. */
static int same_set(struct lin_truth *t, const uint64_t *a, uint32_t na, const uint64_t *b, uint32_t nb)
{
	size_t need = (size_t)na + nb;
	if (!na || !nb) /* an empty set equals only the empty set */
		return na == nb;
	if (need > t->nscratch) {
		uint64_t *p = realloc(t->scratch, need * sizeof(*p));
		if (!p)
			return -1;
		t->scratch = p;
		t->nscratch = need;
	}
	size_t ma = as_set(a, na, t->scratch), mb = as_set(b, nb, t->scratch + na);
	return ma == mb && !memcmp(t->scratch, t->scratch + na, ma * sizeof(uint64_t));
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
	const uint64_t *ix =
		vd->corr ? lin_vtab_find(&t->labels, vd->key, label_k1(vd->proc, vd->kind, vd->corr))
			 : NULL;
	if (!ix)
		ix = lin_vtab_find(&t->labels, vd->key, label_k1(vd->proc, vd->kind, LIN_NIL));
	if (!ix)
		return;
	struct lin_truth_ent *e = lin_vec_at(&t->ents, (size_t)*ix);
	e->seen = 1;
	if (e->conflict) /* duplicate_truth_label: no label to compare with */
		return;
	if (vd->join != LIN_JOIN_OBSERVED && vd->join != LIN_JOIN_INFERRED)
		return;
	struct lin_join_summary *s = lin_joiner_feed_summary(v);
	const uint64_t *got = vd->reqs;
	uint32_t n = vd->nreqs;
	const uint64_t *want = lin_vec_at(&t->pool, (size_t)e->req);
	int same = same_set(t, got, n, want, e->nreq);
	if (same < 0) {
		lin_joiner_feed_oom(v);
		return;
	}
	if (same) {
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
	for (size_t i = 0; i < t->ents.n; i++) {
		const struct lin_truth_ent *e = lin_vec_at(&t->ents, i);
		if (e->seen)
			continue;
		if (e->corr != LIN_NIL && lin_joiner_launch_counted_lost(v, e->proc, e->corr))
			continue;
		uint64_t pid = LIN_NIL;
		const char *host;
		lin_joiner_proc_id(v, e->proc, &pid, &host);
		uint64_t ids[] = { e->kind, e->key, pid };
		s->lost++;
		s->lost_by_cause[LIN_CAUSE_NO_GPU_RECORD]++;
		/* At the label, in its truth file: the record it names is nowhere. */
		lin_joiner_feed_finding(v, "lost", lin_cause_name(LIN_CAUSE_NO_GPU_RECORD), e->file,
					e->offset, e->index, 3, n, ids);
	}
}

struct lin_truth *lin_truth_create(void)
{
	struct lin_truth *t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	lin_vtab_init(&t->labels, sizeof(uint64_t));
	lin_vec_init(&t->ents, sizeof(struct lin_truth_ent));
	lin_vec_init(&t->pool, sizeof(uint64_t));
	return t;
}

void lin_truth_free(struct lin_truth *t)
{
	if (!t)
		return;
	lin_vtab_free(&t->labels);
	lin_vec_free(&t->ents);
	lin_vec_free(&t->pool);
	free(t->scratch);
	free(t);
}

struct lin_join_judge lin_truth_judge(struct lin_truth *t)
{
	return (struct lin_join_judge){ .arg = t, .truth = on_label, .judge = on_verdict, .finish = on_finish };
}
