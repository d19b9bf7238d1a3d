/* SPDX-License-Identifier: MIT */
/*
 * test_ledger_twice.c - two ledgers built at once give what each gives built alone: one
 * built inside the other's build (from the --verdicts stream, a callback in the middle of
 * lin_explain_build), and two built side by side on two threads. The ledger keeps no state
 * outside its struct lin_explain (a file-scope sort context would hand the inner build's
 * records to the outer one's rules).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <msgpack.h>

#include "explain.h"
#include "lin_test.h"

#include "xgen.h"

struct run {
	struct lin_explain *x;
	struct lin_joiner *v;
};

/*
 * A trace of @n launches of request 7 on two streams, their kernels named "gemm" or "copy"
 * (medians), every fifth one long (kernel_slow), launched back to back so stream order binds
 * most of them; @shift moves every time so two traces differ record by record.
 */
static void write_trace(int n, uint64_t shift)
{
	begin();
	work(7, 70);
	lin_tf_string(&pk, 1, "gemm", 4);
	lin_tf_string(&pk, 2, "copy", 4);
	for (int i = 0; i < n; i++) {
		uint64_t t = 10000 + shift + 3000 * (uint64_t)i, corr = 10 + (uint64_t)i;
		uint64_t len = i % 5 == 4 ? 9000 + shift : 1500 + (uint64_t)(i % 3) * 100;
		call(70, corr, i % 4 ? SUBMITTER : WORKER, t, t + 400);
		kern(corr, 1 + (uint32_t)(i % 2), t + 2000, t + 2000 + len, t + 500, t + 700, 0,
		     1 + (uint64_t)(i % 2));
	}
	lin_tf_trace_end(&pk, 1000000000, 0);
}

/* The validator on a trace of write_trace(@n, @shift), finished; the ledger made, not built. */
static struct run make_run(int n, uint64_t shift, FILE *verdicts)
{
	write_trace(n, shift);
	struct run r;
	static const char *const names[] = { "trace" };
	struct lin_xopts xo = { .slow_factor = 1.5,
				.min_samples = 5,
				.keep_all = true,
				.verdicts = verdicts,
				.names = names,
				.nnames = 1 };
	r.x = lin_explain_create(&xo);
	cr_assert_not_null(r.x);
	struct lin_joiner_opts vo = { 0 };
	vo.allow_empty = true;
	vo.tool = lin_explain_tool(r.x);
	r.v = lin_joiner_create(&vo);
	cr_assert_not_null(r.v);
	cr_assert_eq(lin_joiner_add_mem(r.v, "trace", sb.data, sb.size), 0);
	msgpack_sbuffer_destroy(&sb);
	lin_joiner_finish(r.v);
	return r;
}

static void done(struct run *r)
{
	lin_joiner_free(r->v);
	lin_explain_free(r->x);
}

/* Ledgers @a and @b say the same, mark by mark and statement by statement. */
static void same_ledgers(const struct lin_explain *a, const struct lin_explain *b)
{
	cr_assert_eq(lin_explain_count(a), lin_explain_count(b));
	for (size_t i = 0; i < lin_explain_count(a); i++) {
		const struct lin_xlaunch *p = lin_explain_at(a, i), *q = lin_explain_at(b, i);
		cr_assert_eq(p->corr, q->corr, "ledger %zu", i);
		cr_assert_eq(p->pred_end, q->pred_end, "ledger %zu: pred_end", i);
		cr_assert_eq(p->median, q->median, "ledger %zu: median", i);
		cr_assert_eq(p->slow_excess, q->slow_excess, "ledger %zu: slow_excess", i);
		cr_assert_eq(p->dominant, q->dominant, "ledger %zu: dominant", i);
		cr_assert_eq(p->alt, q->alt, "ledger %zu: alt", i);
		for (int m = 0; m < LIN_M_N; m++) {
			cr_assert_eq(p->m[m].ev, q->m[m].ev, "ledger %zu: %s", i, lin_mark_name(m));
			cr_assert_eq(p->m[m].how, q->m[m].how, "ledger %zu: %s", i, lin_mark_name(m));
			cr_assert_eq(p->m[m].t, q->m[m].t, "ledger %zu: %s", i, lin_mark_name(m));
		}
		cr_assert_eq(p->nseg, q->nseg, "ledger %zu: statements", i);
		for (int s = 0; s < p->nseg; s++) {
			cr_assert_eq(p->seg[s].cause, q->seg[s].cause, "ledger %zu: statement %d", i, s);
			cr_assert_eq(p->seg[s].start, q->seg[s].start, "ledger %zu: statement %d", i, s);
			cr_assert_eq(p->seg[s].end, q->seg[s].end, "ledger %zu: statement %d", i, s);
			cr_assert_eq(p->seg[s].ns, q->seg[s].ns, "ledger %zu: statement %d", i, s);
		}
	}
	const struct lin_xsummary *s = lin_explain_summary(a), *t = lin_explain_summary(b);
	cr_assert_eq(s->explained, t->explained);
	cr_assert_eq(s->prestart_ns, t->prestart_ns);
	cr_assert_eq(memcmp(s->by_cause_ns, t->by_cause_ns, sizeof(s->by_cause_ns)), 0);
	cr_assert_eq(memcmp(s->marks, t->marks, sizeof(s->marks)), 0);
}

/* A sanity check of the traces: they differ, so a ledger built on the other's records shows. */
static void traces_differ(const struct lin_explain *a, const struct lin_explain *b)
{
	const struct lin_xlaunch *p = lin_explain_at(a, 0), *q = lin_explain_at(b, 0);
	cr_assert(p && q && p->m[LIN_M_KERNEL_START].t != q->m[LIN_M_KERNEL_START].t);
}

/* The --verdicts stream of the outer build: its first line builds the inner ledger. */
struct nest {
	struct run *inner; /* NULL once built */
	int rc;
};

static ssize_t verdict_write(void *cookie, const char *buf, size_t n)
{
	struct nest *t = cookie;
	(void)buf;
	if (t->inner) {
		struct run *r = t->inner;
		t->inner = NULL;
		t->rc = lin_explain_build(r->x, r->v);
	}
	return (ssize_t)n;
}

Test(ledger_twice, a_ledger_built_inside_another_build_leaves_both_as_built_alone)
{
	struct run a1 = make_run(40, 0, NULL), b1 = make_run(90, 777, NULL);
	cr_assert_eq(lin_explain_build(a1.x, a1.v), 0);
	cr_assert_eq(lin_explain_build(b1.x, b1.v), 0);
	traces_differ(a1.x, b1.x);

	struct run b2 = make_run(90, 777, NULL);
	struct nest t = { .inner = &b2, .rc = -1 };
	cookie_io_functions_t io = { .write = verdict_write };
	FILE *f = fopencookie(&t, "w", io);
	cr_assert_not_null(f);
	setvbuf(f, NULL, _IONBF, 0); /* every verdict line reaches verdict_write at once */
	struct run a2 = make_run(40, 0, f);
	cr_assert_eq(lin_explain_build(a2.x, a2.v), 0);
	fclose(f);
	cr_assert_null(t.inner, "the outer build wrote no verdict");
	cr_assert_eq(t.rc, 0);
	same_ledgers(a1.x, a2.x);
	same_ledgers(b1.x, b2.x);
	done(&a1);
	done(&b1);
	done(&a2);
	done(&b2);
	LIN_TEST_CHECK_LEAKS();
}

struct job {
	struct run r[8];
	int rc[8];
};

static void *build_all(void *arg)
{
	struct job *j = arg;
	for (int k = 0; k < 8; k++)
		j->rc[k] = lin_explain_build(j->r[k].x, j->r[k].v);
	return NULL;
}

Test(ledger_twice, ledgers_built_on_two_threads_match_those_built_alone)
{
	struct run a = make_run(400, 0, NULL), b = make_run(600, 777, NULL);
	cr_assert_eq(lin_explain_build(a.x, a.v), 0);
	cr_assert_eq(lin_explain_build(b.x, b.v), 0);
	traces_differ(a.x, b.x);
	static struct job ja, jb;
	for (int k = 0; k < 8; k++) {
		ja.r[k] = make_run(400, 0, NULL);
		jb.r[k] = make_run(600, 777, NULL);
	}
	pthread_t ta, tb;
	cr_assert_eq(pthread_create(&ta, NULL, build_all, &ja), 0);
	cr_assert_eq(pthread_create(&tb, NULL, build_all, &jb), 0);
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	for (int k = 0; k < 8; k++) {
		cr_assert_eq(ja.rc[k], 0);
		cr_assert_eq(jb.rc[k], 0);
		same_ledgers(a.x, ja.r[k].x);
		same_ledgers(b.x, jb.r[k].x);
		done(&ja.r[k]);
		done(&jb.r[k]);
	}
	done(&a);
	done(&b);
	LIN_TEST_CHECK_LEAKS();
}
