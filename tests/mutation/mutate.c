/* SPDX-License-Identifier: MIT */
/*
 * mutate.c - lin-mutate: damage valid traces the way real runs go wrong and check that
 * lineage-validate never certifies the damage (docs/validator.md, "Mutation testing").
 *
 * Usage: lin-mutate [--per-class N] [--seed S] [--cupti-clock exact] TRACE TRUTH [TRACE TRUTH]...
 *
 * --cupti-clock exact rewrites each header's device_clock to "cupti" (the traces' clock
 * pairs are exact), so the validator relates device and host time through the clock records,
 * as it does for a live CUPTI trace, instead of taking them as one clock.
 *
 * Each TRACE must validate clean against its TRUTH (checked first). For every damage
 * class, up to N instances are made (the record damaged is chosen with the seed), and each
 * damaged trace is validated twice, in this process, through the validator library:
 * without the truth, and with it. An instance is caught when both runs exit non-zero and,
 * with the truth, every GPU record the validator joined to a request set the truth does
 * not give it is counted as incorrect. The program checks that last part itself: it reads
 * the truth labels and each verdict's epoch, and looks up the epoch's requests in the
 * damaged trace.
 *
 * An instance the class's own rule calls undetectable without the truth (one GPU record
 * of a graph replay dropped while the replay keeps others, or a graph kernel moved to
 * another replay of its own exec: a conditional node may skip a kernel in one replay or
 * run it twice in another, so such a replay is valid) is counted apart and must still be
 * caught with the truth.
 *
 * Output: one line per class and trace, then per class over all traces:
 *   SUMMARY bench=mutation class=<name> caught=<n> of=<m> undetectable_without_truth=<k>
 * Exit 0 when every instance of every class was caught, 1 otherwise, 2 on bad input.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <msgpack.h>

#include "lineage/trace_format.h"
#include "join.h"
#include "jstate.h"
#include "truth.h"

#define MAX_LABELS 65536

struct rec {
	size_t off, len;
	msgpack_object o;
};

struct trace {
	char *data;
	size_t len, hdr_len;
	uint64_t ext_kind; /* the header's: lineage's ext records are of this kind */
	msgpack_object hdr;
	struct rec *r;
	size_t n;
	msgpack_zone zone;
};

struct label {
	uint32_t kind;
	uint64_t key;
	uint64_t req[8];
	uint32_t n;
};

struct truth {
	char *data;
	size_t len;
	struct label *l;
	size_t n;
};

/* A damaged copy: for each source record, drop it, replace it, or insert after it. */
struct edit {
	int drop;
	msgpack_sbuffer repl, ins;
};

struct out {
	char *data;
	size_t len;
	size_t *off; /* offset of each written record (for the verdict hook) */
	size_t *src; /* its source record (SIZE_MAX: inserted) */
	size_t n;
};

static uint64_t rng;
static bool cupti_clock; /* --cupti-clock: the header says device_clock "cupti" */

/* One object was unpacked (more may follow). */
static bool unpacked(msgpack_unpack_return r)
{
	return r == MSGPACK_UNPACK_SUCCESS || r == MSGPACK_UNPACK_EXTRA_BYTES;
}

static uint64_t next_rand(void)
{
	rng += 0x9e3779b97f4a7c15ull;
	uint64_t z = rng;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void *xalloc(size_t n)
{
	void *p = calloc(1, n ? n : 1);
	if (!p) {
		fprintf(stderr, "lin-mutate: out of memory\n");
		exit(2);
	}
	return p;
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "lin-mutate: %s: %s\n", path, strerror(errno));
		exit(2);
	}
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *d = xalloc((size_t)n + 1);
	if (n < 0 || fread(d, 1, (size_t)n, f) != (size_t)n) {
		fprintf(stderr, "lin-mutate: %s: read failed\n", path);
		exit(2);
	}
	fclose(f);
	*len = (size_t)n;
	return d;
}

/* ---------------------------------------------------------------- reading */

static void load(struct trace *t, const char *path)
{
	memset(t, 0, sizeof(*t));
	t->data = slurp(path, &t->len);
	msgpack_zone_init(&t->zone, 1 << 16);
	size_t off = 0, cap = 0;
	msgpack_object hdr;
	if (!unpacked(msgpack_unpack(t->data, t->len, &off, &t->zone, &hdr))) {
		fprintf(stderr, "lin-mutate: %s: no header\n", path);
		exit(2);
	}
	t->hdr_len = off;
	t->hdr = hdr;
	t->ext_kind = LIN_DEFAULT_EXT_KIND;
	for (uint32_t i = 0; hdr.type == MSGPACK_OBJECT_MAP && i < hdr.via.map.size; i++) {
		const msgpack_object_kv *kv = &hdr.via.map.ptr[i];
		if (kv->key.type == MSGPACK_OBJECT_STR && kv->key.via.str.size == 8 &&
		    !memcmp(kv->key.via.str.ptr, "ext_kind", 8))
			t->ext_kind = kv->val.via.u64;
	}
	while (off < t->len) {
		size_t start = off;
		msgpack_object o;
		if (!unpacked(msgpack_unpack(t->data, t->len, &off, &t->zone, &o)) ||
		    o.type != MSGPACK_OBJECT_ARRAY || !o.via.array.size) {
			fprintf(stderr, "lin-mutate: %s: bad record at byte %zu\n", path, start);
			exit(2);
		}
		if (t->n == cap) {
			cap = cap ? cap * 2 : 1024;
			t->r = realloc(t->r, cap * sizeof(*t->r));
			if (!t->r)
				exit(2);
		}
		t->r[t->n++] = (struct rec){ start, off - start, o };
	}
}

static uint64_t type_of(const struct rec *r) { return r->o.via.array.ptr[0].via.u64; }

static bool is_nil(const struct rec *r, size_t field)
{
	return field >= r->o.via.array.size || r->o.via.array.ptr[field].type == MSGPACK_OBJECT_NIL;
}

static uint64_t u(const struct rec *r, size_t field)
{
	return is_nil(r, field) ? UINT64_MAX : r->o.via.array.ptr[field].via.u64;
}

static bool is_gpu(uint64_t t)
{
	return t == LIN_REC_KERNEL || t == LIN_REC_MEMCPY || t == LIN_REC_MEMSET;
}

static void load_truth(struct truth *tr, const char *path)
{
	memset(tr, 0, sizeof(*tr));
	tr->data = slurp(path, &tr->len);
	msgpack_zone z;
	msgpack_zone_init(&z, 1 << 16);
	size_t off = 0;
	msgpack_object o;
	tr->l = xalloc(MAX_LABELS * sizeof(*tr->l));
	if (!unpacked(msgpack_unpack(tr->data, tr->len, &off, &z, &o)))
		exit(2);
	while (off < tr->len && tr->n < MAX_LABELS &&
	       unpacked(msgpack_unpack(tr->data, tr->len, &off, &z, &o))) {
		struct rec r = { 0, 0, o };
		if (type_of(&r) != LIN_REC_TRUTH)
			continue;
		struct label *l = &tr->l[tr->n++];
		l->kind = (uint32_t)u(&r, 1);
		l->key = u(&r, 2);
		const msgpack_object *a = &o.via.array.ptr[3];
		for (uint32_t i = 0; i < a->via.array.size && i < 8; i++)
			l->req[l->n++] = a->via.array.ptr[i].via.u64;
	}
	msgpack_zone_destroy(&z);
}

/* ---------------------------------------------------------------- writing */

static void build(const struct trace *t, struct edit *e, struct out *o, size_t cut)
{
	msgpack_sbuffer sb;
	msgpack_sbuffer_init(&sb);
	if (cupti_clock) {
		/* The same header, but device times are CUPTI's clock: the validator then
		 * relates them through the clock records and their width. */
		msgpack_packer pk;
		msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
		const msgpack_object_map *m = &t->hdr.via.map;
		msgpack_pack_map(&pk, m->size);
		for (uint32_t i = 0; i < m->size; i++) {
			msgpack_pack_object(&pk, m->ptr[i].key);
			if (m->ptr[i].key.type == MSGPACK_OBJECT_STR && m->ptr[i].key.via.str.size == 12 &&
			    !memcmp(m->ptr[i].key.via.str.ptr, "device_clock", 12))
				msgpack_pack_str_with_body(&pk, "cupti", 5);
			else
				msgpack_pack_object(&pk, m->ptr[i].val);
		}
	} else {
		msgpack_sbuffer_write(&sb, t->data, t->hdr_len);
	}
	o->off = xalloc((2 * t->n + 1) * sizeof(size_t));
	o->src = xalloc((2 * t->n + 1) * sizeof(size_t));
	o->n = 0;
	for (size_t i = 0; i < t->n; i++) {
		if (!e[i].drop) {
			o->off[o->n] = sb.size;
			o->src[o->n++] = i;
			if (e[i].repl.size)
				msgpack_sbuffer_write(&sb, e[i].repl.data, e[i].repl.size);
			else
				msgpack_sbuffer_write(&sb, t->data + t->r[i].off, t->r[i].len);
		}
		if (e[i].ins.size) {
			o->off[o->n] = sb.size;
			o->src[o->n++] = SIZE_MAX;
			msgpack_sbuffer_write(&sb, e[i].ins.data, e[i].ins.size);
		}
	}
	o->len = cut && cut < sb.size ? cut : sb.size;
	o->data = sb.data; /* owned now */
}

static void free_out(struct out *o)
{
	free(o->data);
	free(o->off);
	free(o->src);
}

/* Record @i with field @f set to @val (packed into e->repl). */
static void set_field(const struct trace *t, struct edit *e, size_t i, size_t f, uint64_t val)
{
	const msgpack_object *a = &t->r[i].o;
	msgpack_packer pk;
	msgpack_sbuffer_init(&e->repl);
	msgpack_packer_init(&pk, &e->repl, msgpack_sbuffer_write);
	msgpack_pack_array(&pk, a->via.array.size);
	for (uint32_t k = 0; k < a->via.array.size; k++) {
		if (k == f)
			msgpack_pack_uint64(&pk, val);
		else
			msgpack_pack_object(&pk, a->via.array.ptr[k]);
	}
}

/* ---------------------------------------------------------------- judging */

struct verdicts {
	struct lin_gpu_verdict *v;
	size_t n, cap;
	uint64_t *inc; /* offsets of the records the validator found incorrect */
	size_t ninc;
};

static void keep(void *arg, const struct lin_gpu_verdict *vd)
{
	struct verdicts *s = arg;
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 256;
		s->v = realloc(s->v, s->cap * sizeof(*s->v));
		if (!s->v)
			exit(2);
	}
	s->v[s->n++] = *vd;
}

struct result {
	int exit_plain, exit_truth;
	uint64_t incorrect, wrong;
}; /* wrong: joins the
									      * truth contradicts
									      * and no finding names */

/* The request set the damaged trace gives @id (an epoch's requests, or a request). */
static uint32_t requests_of(const struct trace *t, const struct edit *e, uint64_t id, uint64_t *req,
			    uint32_t cap)
{
	for (size_t i = 0; i < t->n; i++) {
		if (e[i].drop)
			continue;
		uint64_t ty = type_of(&t->r[i]);
		if (ty == LIN_REC_REQUEST_BEGIN && u(&t->r[i], 3) == id) {
			req[0] = id;
			return 1;
		}
		if (ty == LIN_REC_EPOCH_DECLARE && u(&t->r[i], 3) == id) {
			const msgpack_object *a = &t->r[i].o.via.array.ptr[5];
			uint32_t n = 0;
			for (; n < a->via.array.size && n < cap; n++)
				req[n] = a->via.array.ptr[n].via.u64;
			return n;
		}
	}
	return 0;
}

static bool same_set(const uint64_t *a, uint32_t na, const uint64_t *b, uint32_t nb)
{
	if (na != nb)
		return false;
	for (uint32_t i = 0; i < na; i++) {
		bool f = false;
		for (uint32_t j = 0; j < nb; j++)
			f |= a[i] == b[j];
		if (!f)
			return false;
	}
	return true;
}

static bool reported(const struct verdicts *vs, uint64_t offset)
{
	for (size_t i = 0; i < vs->ninc; i++)
		if (vs->inc[i] == offset)
			return true;
	return false;
}

/* Joined GPU records whose requests the truth does not give them, and that the validator
 * did not report incorrect (record by record). */
static uint64_t wrong_joins(const struct trace *t, const struct edit *e, const struct out *o,
			    const struct truth *tr, const struct verdicts *vs)
{
	uint64_t wrong = 0;
	for (size_t k = 0; k < vs->n; k++) {
		const struct lin_gpu_verdict *vd = &vs->v[k];
		if (vd->join != LIN_JOIN_OBSERVED && vd->join != LIN_JOIN_INFERRED)
			continue;
		size_t lo = 0, hi = o->n;
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;
			if (o->off[mid] < vd->offset)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo == o->n || o->off[lo] != vd->offset)
			continue;
		/* An inserted copy reads like its original (the record just before it). */
		size_t src = o->src[lo] == SIZE_MAX ? o->src[lo - 1] : o->src[lo];
		const struct rec *r = &t->r[src];
		uint64_t ty = type_of(r);
		uint64_t key = ty == LIN_REC_KERNEL ? u(r, 7) : u(r, 2);
		if (e[src].repl.size) {
			msgpack_zone z;
			msgpack_zone_init(&z, 4096);
			size_t off = 0;
			msgpack_object ob;
			msgpack_unpack(e[src].repl.data, e[src].repl.size, &off, &z, &ob);
			struct rec rr = { 0, 0, ob };
			key = ty == LIN_REC_KERNEL ? u(&rr, 7) : u(&rr, 2);
			msgpack_zone_destroy(&z);
		}
		uint64_t got[64];
		uint32_t ng = requests_of(t, e, vd->epoch, got, 64);
		for (size_t i = 0; i < tr->n; i++) {
			if (tr->l[i].kind == ty && tr->l[i].key == key) {
				wrong += !same_set(got, ng, tr->l[i].req, tr->l[i].n) &&
					 !reported(vs, vd->offset);
				break;
			}
		}
	}
	return wrong;
}

static int validate(const struct out *o, const struct truth *tr, struct verdicts *vs, uint64_t *incorrect)
{
	struct lin_truth *judge = tr ? lin_truth_create() : NULL; /* --expect's comparison */
	struct lin_joiner_opts opts = { .max_findings = vs ? 1u << 20 : 0,
					.tool = { .gpu = vs ? keep : NULL, .arg = vs } };
	if (judge)
		opts.judge = lin_truth_judge(judge);
	struct lin_joiner *v = tr && !judge ? NULL : lin_joiner_create(&opts);
	if (!v)
		exit(2);
	if (tr && lin_joiner_add_truth_mem(v, "truth", tr->data, tr->len) < -1)
		exit(2);
	lin_joiner_add_mem(v, "damaged", o->data, o->len);
	lin_joiner_finish(v);
	int rc = lin_joiner_exit_code(v);
	if (incorrect)
		*incorrect = lin_joiner_summary(v)->incorrect;
	for (size_t i = 0; vs && i < v->findings.n; i++) {
		const struct lin_finding *f = lin_vec_at(&v->findings, i);
		if (strcmp(f->kind, "incorrect"))
			continue;
		vs->inc = realloc(vs->inc, (vs->ninc + 1) * sizeof(*vs->inc));
		if (!vs->inc)
			exit(2);
		vs->inc[vs->ninc++] = f->offset;
	}
	lin_joiner_free(v);
	lin_truth_free(judge);
	return rc;
}

static struct result judge(const struct trace *t, struct edit *e, const struct truth *tr, size_t cut)
{
	struct out o;
	build(t, e, &o, cut);
	struct result r = { 0, 0, 0, 0 };
	struct verdicts vs = { 0 };
	r.exit_plain = validate(&o, NULL, NULL, NULL);
	r.exit_truth = validate(&o, tr, &vs, &r.incorrect);
	r.wrong = wrong_joins(t, e, &o, tr, &vs);
	free(vs.v);
	free(vs.inc);
	free_out(&o);
	return r;
}

/* ---------------------------------------------------------------- damage classes */

struct ctx {
	const struct trace *t;
	const struct truth *tr;
	struct edit *e;
	size_t cut;
	bool undetectable; /* the class's rule: not detectable without the truth */
	const char *why;
};

/* Indices of records of type @ty (and, for ext, of the trace's kind), into @idx. */
static size_t collect(const struct trace *t, uint64_t ty, size_t *idx)
{
	size_t n = 0;
	for (size_t i = 0; i < t->n; i++) {
		uint64_t rt = type_of(&t->r[i]);
		if (ty == LIN_REC_EXT_CORRELATION && rt == ty && u(&t->r[i], 1) != t->ext_kind)
			continue; /* another tool's kind: not lineage's evidence */
		if (ty ? rt == ty : is_gpu(rt))
			idx[n++] = i;
	}
	return n;
}

static size_t pick(const size_t *idx, size_t n) { return idx[next_rand() % n]; }

/* Another epoch whose request set differs from @epoch's, or UINT64_MAX. */
static uint64_t other_epoch(const struct ctx *c, uint64_t epoch)
{
	uint64_t mine[64], theirs[64];
	uint32_t nm = requests_of(c->t, c->e, epoch, mine, 64);
	size_t start = next_rand() % c->t->n;
	for (size_t k = 0; k < c->t->n; k++) {
		const struct rec *r = &c->t->r[(start + k) % c->t->n];
		if (type_of(r) != LIN_REC_EPOCH_DECLARE || u(r, 3) == epoch)
			continue;
		uint32_t nt = requests_of(c->t, c->e, u(r, 3), theirs, 64);
		if (nt && !same_set(mine, nm, theirs, nt))
			return u(r, 3);
	}
	return UINT64_MAX;
}

static bool cross_ext(struct ctx *c, size_t *idx)
{
	size_t n = collect(c->t, LIN_REC_EXT_CORRELATION, idx);
	if (!n)
		return false;
	size_t i = pick(idx, n);
	uint64_t to = other_epoch(c, u(&c->t->r[i], 2));
	if (to == UINT64_MAX)
		return false;
	set_field(c->t, &c->e[i], i, 2, to);
	return true;
}

/* Two ext records of epochs with different requests trade their external ids. */
static bool swap_ext(struct ctx *c, size_t *idx)
{
	size_t n = collect(c->t, LIN_REC_EXT_CORRELATION, idx);
	if (n < 2)
		return false;
	size_t i = pick(idx, n);
	uint64_t a = u(&c->t->r[i], 2), ra[64], rb[64];
	uint32_t na = requests_of(c->t, c->e, a, ra, 64);
	size_t start = next_rand() % n;
	for (size_t k = 0; k < n; k++) {
		size_t j = idx[(start + k) % n];
		uint64_t b = u(&c->t->r[j], 2);
		uint32_t nb = requests_of(c->t, c->e, b, rb, 64);
		if (j == i || !nb || same_set(ra, na, rb, nb))
			continue;
		set_field(c->t, &c->e[i], i, 2, b);
		set_field(c->t, &c->e[j], j, 2, a);
		return true;
	}
	return false;
}

static bool drop_of(struct ctx *c, size_t *idx, uint64_t ty)
{
	size_t n = collect(c->t, ty, idx);
	if (!n)
		return false;
	size_t i = pick(idx, n);
	c->e[i].drop = 1;
	return true;
}

static bool drop_gpu(struct ctx *c, size_t *idx)
{
	size_t n = collect(c->t, 0, idx);
	if (!n)
		return false;
	size_t i = pick(idx, n);
	c->e[i].drop = 1;
	/* The rule: a GPU record sharing its correlation with another one kept (a graph
	 * replay's) cannot be missed without the truth. */
	uint64_t corr = u(&c->t->r[i], 1);
	for (size_t k = 0; k < n && corr != UINT64_MAX; k++) {
		if (idx[k] != i && u(&c->t->r[idx[k]], 1) == corr) {
			c->undetectable = true;
			c->why = "a graph replay may skip a conditional node";
		}
	}
	return true;
}

static bool drop_ext(struct ctx *c, size_t *idx)
{
	return drop_of(c, idx, LIN_REC_EXT_CORRELATION);
}

/* A launch record and the launch_end that closes it (same thread and depth, next). */
static bool drop_bracket(struct ctx *c, size_t *idx)
{
	size_t n = collect(c->t, LIN_REC_LAUNCH, idx);
	if (!n)
		return false;
	size_t i = pick(idx, n);
	c->e[i].drop = 1;
	uint64_t tid = u(&c->t->r[i], 2), depth = u(&c->t->r[i], 9);
	for (size_t k = i + 1; k < c->t->n && depth != UINT64_MAX; k++) {
		const struct rec *r = &c->t->r[k];
		if (type_of(r) == LIN_REC_LAUNCH_END && u(r, 2) == tid && u(r, 3) == depth) {
			c->e[k].drop = 1;
			break;
		}
	}
	return true;
}

/* An epoch_reissue of the launch's epoch just before the launch (in time and in the file). */
static bool reissue_before_launch(struct ctx *c, size_t *idx)
{
	size_t n = 0, all = collect(c->t, LIN_REC_LAUNCH, idx);
	for (size_t k = 0; k < all; k++)
		if (!is_nil(&c->t->r[idx[k]], 3) && idx[k] > 0)
			idx[n++] = idx[k];
	if (!n)
		return false;
	size_t i = pick(idx, n);
	const struct rec *l = &c->t->r[i];
	msgpack_packer pk;
	msgpack_sbuffer_init(&c->e[i - 1].ins);
	msgpack_packer_init(&pk, &c->e[i - 1].ins, msgpack_sbuffer_write);
	msgpack_pack_array(&pk, 1 + LIN_REC_NFIELDS_EPOCH_REISSUE);
	msgpack_pack_uint32(&pk, LIN_REC_EPOCH_REISSUE);
	msgpack_pack_uint64(&pk, u(l, 1) - 1);
	msgpack_pack_uint64(&pk, u(l, 2));
	msgpack_pack_uint64(&pk, u(l, 3));
	msgpack_pack_uint64(&pk, u(l, 4) + 1);
	msgpack_pack_uint32(&pk, LIN_REISSUE_RETRY);
	return true;
}

static bool duplicate_gpu(struct ctx *c, size_t *idx)
{
	size_t n = collect(c->t, 0, idx);
	if (!n)
		return false;
	size_t i = pick(idx, n);
	msgpack_sbuffer_init(&c->e[i].ins);
	msgpack_sbuffer_write(&c->e[i].ins, c->t->data + c->t->r[i].off, c->t->r[i].len);
	return true;
}

/* The exec a graph launch's correlation replayed (ext -> replay epoch -> graph_launch). */
static uint64_t exec_of(const struct trace *t, uint64_t corr)
{
	uint64_t rep = UINT64_MAX;
	for (size_t k = 0; k < t->n && rep == UINT64_MAX; k++)
		if (type_of(&t->r[k]) == LIN_REC_EXT_CORRELATION && u(&t->r[k], 3) == corr &&
		    u(&t->r[k], 1) == t->ext_kind)
			rep = u(&t->r[k], 2);
	for (size_t k = 0; k < t->n && rep != UINT64_MAX; k++)
		if (type_of(&t->r[k]) == LIN_REC_GRAPH_LAUNCH && u(&t->r[k], 4) == rep)
			return u(&t->r[k], 3);
	return UINT64_MAX;
}

/* A kernel's correlation set to another API record's. The rule: a graph kernel moved to
 * another replay of its own exec cannot be told from a valid trace without the truth (a
 * conditional node may run a kernel twice in one replay and skip it in another). */
static bool repoint_corr(struct ctx *c, size_t *idx)
{
	size_t n = collect(c->t, LIN_REC_KERNEL, idx);
	if (!n)
		return false;
	size_t i = pick(idx, n);
	uint64_t mine = u(&c->t->r[i], 1);
	size_t start = next_rand() % c->t->n;
	for (size_t k = 0; k < c->t->n; k++) {
		const struct rec *r = &c->t->r[(start + k) % c->t->n];
		if (type_of(r) == LIN_REC_API && u(r, 3) != mine && u(r, 3) != UINT64_MAX &&
		    lin_launch_kind_of((unsigned)u(r, 1), u(r, 2))) {
			set_field(c->t, &c->e[i], i, 1, u(r, 3));
			if (!is_nil(&c->t->r[i], 9) &&
			    lin_launch_kind_of((unsigned)u(r, 1), u(r, 2)) == LIN_LAUNCH_GRAPH &&
			    exec_of(c->t, mine) != UINT64_MAX &&
			    exec_of(c->t, mine) == exec_of(c->t, u(r, 3))) {
				c->undetectable = true;
				c->why = "a conditional node may run a kernel twice in one replay";
			}
			return true;
		}
	}
	return false;
}

/* A replay's graph_launch record and its replay epoch's declaration. */
static bool drop_replay(struct ctx *c, size_t *idx)
{
	size_t n = collect(c->t, LIN_REC_GRAPH_LAUNCH, idx);
	if (!n)
		return false;
	size_t i = pick(idx, n);
	c->e[i].drop = 1;
	uint64_t rep = u(&c->t->r[i], 4);
	for (size_t k = 0; k < c->t->n; k++)
		if (type_of(&c->t->r[k]) == LIN_REC_EPOCH_DECLARE && u(&c->t->r[k], 3) == rep)
			c->e[k].drop = 1;
	return true;
}

static bool drop_all_gpu(struct ctx *c, size_t *idx)
{
	size_t n = collect(c->t, 0, idx);
	for (size_t k = 0; k < n; k++)
		c->e[idx[k]].drop = 1;
	return n > 0;
}

/* ---- invariants (docs/validator.md, "Invariants"), each damaged as a real run breaks it */

/* The latest host time of any runtime record (types 1..13: host_ns first). */
static uint64_t latest_host(const struct trace *t)
{
	uint64_t m = 0;
	for (size_t i = 0; i < t->n; i++) {
		uint64_t ty = type_of(&t->r[i]);
		if (ty >= LIN_REC_REQUEST_BEGIN && ty <= LIN_REC_LAUNCH_END &&
		    !is_nil(&t->r[i], 1) && u(&t->r[i], 1) > m)
			m = u(&t->r[i], 1);
	}
	return m;
}

/* Identity: an API record stamped with another process's id (a forked child's calls in
 * its parent's trace). */
static bool wrong_pid(struct ctx *c, size_t *idx)
{
	size_t n = collect(c->t, LIN_REC_API, idx);
	if (!n)
		return false;
	size_t i = pick(idx, n);
	set_field(c->t, &c->e[i], i, 6, u(&c->t->r[i], 6) + 1);
	return true;
}

/* Time: an epoch's declaration stamped after its launches (a writer that timestamps at
 * flush, not at the call). */
static bool declare_after_use(struct ctx *c, size_t *idx)
{
	size_t n = 0, all = collect(c->t, LIN_REC_EPOCH_DECLARE, idx);
	for (size_t k = 0; k < all; k++) {
		uint64_t ep = u(&c->t->r[idx[k]], 3);
		for (size_t j = 0; j < c->t->n; j++)
			if (type_of(&c->t->r[j]) == LIN_REC_LAUNCH && u(&c->t->r[j], 3) == ep) {
				idx[n++] = idx[k];
				break;
			}
	}
	if (!n)
		return false;
	size_t i = pick(idx, n);
	set_field(c->t, &c->e[i], i, 1, latest_host(c->t) + 1000);
	return true;
}

/* Time: a request's begin stamped after an epoch that names it. */
static bool request_after_epoch(struct ctx *c, size_t *idx)
{
	size_t n = 0, all = collect(c->t, LIN_REC_REQUEST_BEGIN, idx);
	for (size_t k = 0; k < all; k++) {
		uint64_t rq = u(&c->t->r[idx[k]], 3);
		uint64_t got[64];
		bool named = false;
		for (size_t j = 0; j < c->t->n && !named; j++) {
			if (type_of(&c->t->r[j]) != LIN_REC_EPOCH_DECLARE)
				continue;
			uint32_t ng = requests_of(c->t, c->e, u(&c->t->r[j], 3), got, 64);
			for (uint32_t q = 0; q < ng; q++)
				named |= got[q] == rq;
		}
		if (named)
			idx[n++] = idx[k];
	}
	if (!n)
		return false;
	size_t i = pick(idx, n);
	set_field(c->t, &c->e[i], i, 1, latest_host(c->t) + 1000);
	return true;
}

/* Versions: a launch naming a version its epoch never had (a reused slot's version written
 * for the epoch that held it before). */
static bool bump_version(struct ctx *c, size_t *idx)
{
	size_t n = 0, all = collect(c->t, LIN_REC_LAUNCH, idx);
	for (size_t k = 0; k < all; k++)
		if (!is_nil(&c->t->r[idx[k]], 3) && !is_nil(&c->t->r[idx[k]], 4))
			idx[n++] = idx[k];
	if (!n)
		return false;
	size_t i = pick(idx, n);
	set_field(c->t, &c->e[i], i, 4, u(&c->t->r[i], 4) + 1000);
	return true;
}

/* Threads: a scope close stamped with another thread's id (a thread id cached across the
 * tasks of a pool). */
static bool move_scope_close(struct ctx *c, size_t *idx)
{
	size_t n = collect(c->t, LIN_REC_SCOPE_CLOSE, idx);
	if (!n)
		return false;
	size_t i = pick(idx, n);
	set_field(c->t, &c->e[i], i, 2, u(&c->t->r[i], 2) + 1000000);
	return true;
}

static bool cut_file(struct ctx *c, size_t *idx)
{
	(void)idx;
	c->cut = 1 + next_rand() % (c->t->len - 1);
	return true;
}

static const struct {
	const char *name;
	bool (*make)(struct ctx *c, size_t *idx);
	bool once; /* one instance is all there is */
} classes[] = {
	{ "cross_ext", cross_ext, false },
	{ "swap_ext", swap_ext, false },
	{ "drop_gpu", drop_gpu, false },
	{ "drop_ext", drop_ext, false },
	{ "drop_bracket", drop_bracket, false },
	{ "reissue_before_launch", reissue_before_launch, false },
	{ "duplicate_gpu", duplicate_gpu, false },
	{ "repoint_corr", repoint_corr, false },
	{ "drop_replay", drop_replay, false },
	{ "drop_all_gpu", drop_all_gpu, true },
	{ "wrong_pid", wrong_pid, false },
	{ "declare_after_use", declare_after_use, false },
	{ "request_after_epoch", request_after_epoch, false },
	{ "bump_version", bump_version, false },
	{ "move_scope_close", move_scope_close, false },
	{ "cut_file", cut_file, false },
};
#define NCLASSES (sizeof(classes) / sizeof(classes[0]))

struct tally {
	unsigned caught, of, undetectable, missed_with_truth;
};

static void free_edits(struct edit *e, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (e[i].repl.data)
			msgpack_sbuffer_destroy(&e[i].repl);
		if (e[i].ins.data)
			msgpack_sbuffer_destroy(&e[i].ins);
	}
	memset(e, 0, n * sizeof(*e));
}

static void run_class(size_t k, const struct trace *t, const struct truth *tr, unsigned per,
		      struct tally *tl, const char *name)
{
	struct edit *e = xalloc(t->n * sizeof(*e));
	size_t *idx = xalloc((t->n + 1) * sizeof(size_t));
	struct tally mine = { 0, 0, 0, 0 };
	unsigned n = classes[k].once ? 1 : per;
	for (unsigned i = 0; i < n; i++) {
		struct ctx c = { t, tr, e, 0, false, NULL };
		bool made = classes[k].make(&c, idx);
		if (made) {
			struct result r = judge(t, e, tr, c.cut);
			bool truth_ok = r.exit_truth != 0 && r.wrong == 0;
			bool plain_ok = r.exit_plain != 0;
			mine.of++;
			if (truth_ok && plain_ok)
				mine.caught++;
			else if (truth_ok && c.undetectable)
				mine.undetectable++;
			else {
				mine.missed_with_truth += !truth_ok;
				fprintf(stderr,
					"lin-mutate: %s: %s instance %u NOT CAUGHT: exit %d without "
					"truth, %d with (incorrect %llu, wrong joins unreported %llu)\n",
					name, classes[k].name, i, r.exit_plain, r.exit_truth,
					(unsigned long long)r.incorrect, (unsigned long long)r.wrong);
			}
		}
		free_edits(e, t->n);
	}
	printf("SUMMARY bench=mutation trace=%s class=%s caught=%u of=%u "
	       "undetectable_without_truth=%u\n",
	       name, classes[k].name, mine.caught, mine.of, mine.undetectable);
	tl->caught += mine.caught;
	tl->of += mine.of;
	tl->undetectable += mine.undetectable;
	tl->missed_with_truth += mine.missed_with_truth;
	free(e);
	free(idx);
}

static const char usage[] =
	"usage: lin-mutate [--per-class N] [--seed S] [--cupti-clock exact] TRACE TRUTH...\n"
	"Damages each valid TRACE once per instance of each class and checks that\n"
	"lineage-validate reports it, with and without TRUTH. See docs/validator.md.\n";

int main(int argc, char **argv)
{
	unsigned per = 20;
	rng = 1;
	int a = 1;
	for (; a + 1 < argc && argv[a][0] == '-' && argv[a][1] == '-'; a += 2) {
		if (!strcmp(argv[a], "--per-class"))
			per = (unsigned)strtoul(argv[a + 1], NULL, 10);
		else if (!strcmp(argv[a], "--seed"))
			rng = strtoull(argv[a + 1], NULL, 10);
		else if (!strcmp(argv[a], "--cupti-clock") && !strcmp(argv[a + 1], "exact"))
			cupti_clock = true;
		else
			break;
	}
	if (a >= argc || (argc - a) % 2 || !per) {
		fputs(usage, stderr);
		return 2;
	}
	struct tally tl[NCLASSES];
	memset(tl, 0, sizeof(tl));
	for (; a < argc; a += 2) {
		struct trace t;
		struct truth tr;
		load(&t, argv[a]);
		load_truth(&tr, argv[a + 1]);
		struct out o;
		struct edit *none = xalloc(t.n * sizeof(*none));
		build(&t, none, &o, 0);
		uint64_t inc = 0;
		int rc = validate(&o, &tr, NULL, &inc);
		free_out(&o);
		free(none);
		if (rc != 0) {
			fprintf(stderr,
				"lin-mutate: %s does not validate clean against %s (exit %d): "
				"not a base for damage\n",
				argv[a], argv[a + 1], rc);
			return 2;
		}
		const char *name = strrchr(argv[a], '/') ? strrchr(argv[a], '/') + 1 : argv[a];
		for (size_t k = 0; k < NCLASSES; k++)
			run_class(k, &t, &tr, per, &tl[k], name);
		msgpack_zone_destroy(&t.zone);
		free(t.r);
		free(t.data);
		free(tr.l);
		free(tr.data);
	}
	int bad = 0;
	for (size_t k = 0; k < NCLASSES; k++) {
		printf("SUMMARY bench=mutation class=%s caught=%u of=%u undetectable_without_truth=%u\n",
		       classes[k].name, tl[k].caught, tl[k].of, tl[k].undetectable);
		bad |= tl[k].caught + tl[k].undetectable != tl[k].of || tl[k].missed_with_truth;
		bad |= tl[k].of == 0 && !classes[k].once; /* a class never exercised */
	}
	return bad ? 1 : 0;
}
