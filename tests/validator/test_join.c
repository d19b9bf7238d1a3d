/* SPDX-License-Identifier: MIT */
/* test_join.c - the joins and classifications of the validator on in-memory traces. */
#include <stdlib.h>
#include <string.h>

#include <msgpack.h>

#include "lin_test.h"
#include "tracefmt.h"
#include "join.h"
#include "report.h"
#include "truth.h"
#include "jstate.h"

static msgpack_sbuffer sb;
static msgpack_packer pk;

static uint64_t cur_pid = 1; /* the header's: API records carry their process's pid */

static void begin_kind(uint64_t pid, const char *fmt, uint32_t ext_kind)
{
	cur_pid = pid;
	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	struct lin_tf_header h = { fmt, "t", "h", pid, 0, "tsc", 1e9, ext_kind, "cupti", "ok" };
	lin_tf_header(&pk, &h);
}

static void begin(uint64_t pid, const char *fmt) { begin_kind(pid, fmt, 5); }

static void ext_api_cbid(uint64_t epoch, uint64_t corr, uint32_t cbid)
{
	struct lin_tf_api a = { 1,   cbid, corr, 1000 * corr, 1000 * corr + 10, (uint32_t)cur_pid,
				100, 0 };
	lin_tf_ext_correlation(&pk, 5, epoch, corr);
	lin_tf_api(&pk, &a);
}

/* A cudaLaunchKernel call under @epoch. */
static void ext_api(uint64_t epoch, uint64_t corr) { ext_api_cbid(epoch, corr, 211); }

static void kernel(uint64_t corr, uint64_t grid)
{
	struct lin_tf_kernel k = {
		corr, 1000 * corr + 50, 1000 * corr + 60, 0, 1, 1, grid, 0, 0, 0, 0, 0, false
	};
	lin_tf_kernel(&pk, &k);
}

static void declare(uint64_t epoch, const uint64_t *reqs, size_t n)
{
	lin_tf_epoch_declare(&pk, 10, 100, epoch, 1, reqs, n, LIN_NIL, 0);
}

/* A joiner whose joins the truth comparison judges (validator/truth.h), as with --expect;
 * judged_free() frees both. */
static struct lin_truth *judge;

static struct lin_joiner *judged_joiner(void)
{
	judge = lin_truth_create();
	cr_assert(judge);
	struct lin_joiner_opts o = { .max_findings = 100, .judge = lin_truth_judge(judge) };
	return lin_joiner_create(&o);
}

static void judged_free(struct lin_joiner *v)
{
	lin_joiner_free(v);
	lin_truth_free(judge);
	judge = NULL;
}

static void add(struct lin_joiner *v, bool truth)
{
	if (truth) {
		cr_assert_eq(lin_joiner_add_truth_mem(v, "truth", sb.data, sb.size), 0);
	} else {
		lin_tf_trace_end(&pk, 1000000, 0);
		cr_assert_eq(lin_joiner_add_mem(v, "trace", sb.data, sb.size), 0);
	}
	msgpack_sbuffer_destroy(&sb);
}

Test(join, records_in_any_order_still_join)
{
	struct lin_joiner *v = lin_joiner_create(NULL);
	uint64_t r = 7;
	begin(1, LIN_TRACE_FORMAT_NAME);
	kernel(11, 1); /* before its ext, API and epoch */
	ext_api(2, 11);
	declare(2, &r, 1);
	add(v, false);
	lin_joiner_finish(v);
	const struct lin_join_summary *s = lin_joiner_summary(v);
	cr_assert_eq(s->gpu_records, 1);
	cr_assert_eq(s->observed, 1);
	cr_assert_eq(lin_joiner_exit_code(v), 0);
	lin_joiner_free(v);
	LIN_TEST_CHECK_LEAKS();
}

Test(join, correlation_ids_are_scoped_by_process)
{
	struct lin_joiner *v = judged_joiner();
	for (uint64_t pid = 1; pid <= 2; pid++) { /* truth first, as the CLI does */
		uint64_t r = pid * 10;
		begin(pid, LIN_TRUTH_FORMAT_NAME);
		lin_tf_truth(&pk, LIN_REC_KERNEL, 1, &r, 1, LIN_NIL);
		add(v, true);
	}
	for (uint64_t pid = 1; pid <= 2; pid++) {
		uint64_t r = pid * 10;
		begin(pid, LIN_TRACE_FORMAT_NAME);
		declare(pid * 100, &r, 1);
		ext_api(pid * 100, 11);
		kernel(11, 1);
		add(v, false);
	}
	lin_joiner_finish(v);
	const struct lin_join_summary *s = lin_joiner_summary(v);
	cr_assert_eq(s->observed, 2);
	cr_assert_eq(s->ambiguous, 0);
	cr_assert_eq(s->matched, 2);
	cr_assert_eq(s->incorrect, 0);
	judged_free(v);
	LIN_TEST_CHECK_LEAKS();
}

Test(join, closed_joins_are_evicted)
{
	struct lin_joiner *v = lin_joiner_create(NULL);
	uint64_t r = 7;
	begin(1, LIN_TRACE_FORMAT_NAME);
	declare(2, &r, 1);
	for (uint64_t c = 1; c <= 50000; c++) {
		ext_api(2, c);
		kernel(c, c);
	}
	add(v, false);
	cr_assert_eq(v->corrs.n, 0, "%zu correlations still open", v->corrs.n);
	cr_assert_eq(v->pending.n, 0);
	lin_joiner_finish(v);
	cr_assert_eq(lin_joiner_summary(v)->observed, 50000);
	lin_joiner_free(v);
	LIN_TEST_CHECK_LEAKS();
}

Test(join, fan_in_set_must_match_truth_exactly)
{
	struct lin_joiner *v = judged_joiner();
	uint64_t reqs[] = { 1, 2, 3 }, part[] = { 1, 2 };
	begin(1, LIN_TRUTH_FORMAT_NAME);
	lin_tf_truth(&pk, LIN_REC_KERNEL, 1, reqs, 3, LIN_NIL);
	lin_tf_truth(&pk, LIN_REC_KERNEL, 2, part, 2, LIN_NIL);
	lin_tf_truth(&pk, LIN_REC_KERNEL, 3, part, 2, LIN_NIL); /* no GPU record */
	add(v, true);
	begin(1, LIN_TRACE_FORMAT_NAME);
	declare(9, reqs, 3);
	ext_api(9, 11);
	kernel(11, 1);
	ext_api(9, 12);
	kernel(12, 2);
	add(v, false);
	lin_joiner_finish(v);
	const struct lin_join_summary *s = lin_joiner_summary(v);
	cr_assert_eq(s->truth_records, 3);
	cr_assert_eq(s->matched, 1);
	cr_assert_eq(s->incorrect, 1);
	cr_assert_eq(s->lost_by_cause[LIN_CAUSE_NO_GPU_RECORD], 1);
	cr_assert_eq(lin_joiner_exit_code(v), 1);
	judged_free(v);
	LIN_TEST_CHECK_LEAKS();
}

/* A join is matched or incorrect at the level it reached: a wrong request set at
 * "request", an epoch that names no request at "epoch". */
Test(join, truth_is_counted_by_join_level)
{
	struct lin_joiner *v = judged_joiner();
	uint64_t r1 = 1, r2 = 2;
	begin(1, LIN_TRUTH_FORMAT_NAME);
	for (uint64_t g = 1; g <= 4; g++)
		lin_tf_truth(&pk, LIN_REC_KERNEL, g, &r1, 1, LIN_NIL);
	add(v, true);
	begin(1, LIN_TRACE_FORMAT_NAME);
	declare(10, &r1, 1);
	declare(20, &r2, 1);
	declare(30, NULL, 0); /* an op that names no request */
	ext_api(10, 11);
	kernel(11, 1); /* right request */
	ext_api(20, 12);
	kernel(12, 2); /* wrong request */
	ext_api(30, 13);
	kernel(13, 3); /* an op only */
	kernel(14, 4); /* lost: neither */
	add(v, false);
	lin_joiner_finish(v);
	const struct lin_join_summary *s = lin_joiner_summary(v);
	cr_assert_eq(s->matched, 1);
	cr_assert_eq(s->incorrect, 2);
	cr_assert_eq(s->lost, 1);
	for (int l = 0; l < LIN_LEVEL_N; l++) {
		cr_assert_eq(s->matched_by_level[l], l == LIN_LEVEL_REQUEST, "matched at %d", l);
		cr_assert_eq(s->incorrect_by_level[l],
			     l == LIN_LEVEL_REQUEST || l == LIN_LEVEL_EPOCH, "incorrect at %d", l);
	}
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	cr_assert_not_null(f);
	lin_validator_report_json(v, f);
	cr_assert_eq(fclose(f), 0);
	cr_assert(strstr(buf, "\"matched_by_level\":{\"none\":0,\"api_call\":0,\"op\":0,"
			      "\"epoch\":0,\"request\":1}"),
		  "%s", buf);
	cr_assert(strstr(buf, "\"incorrect_by_level\":{\"none\":0,\"api_call\":0,\"op\":0,"
			      "\"epoch\":1,\"request\":1}"),
		  "%s", buf);
	free(buf);
	judged_free(v);
	LIN_TEST_CHECK_LEAKS();
}

Test(join, truth_by_level_is_absent_without_truth)
{
	struct lin_joiner *v = lin_joiner_create(NULL);
	uint64_t r = 1;
	begin(1, LIN_TRACE_FORMAT_NAME);
	declare(10, &r, 1);
	ext_api(10, 11);
	kernel(11, 1);
	add(v, false);
	lin_joiner_finish(v);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	cr_assert_not_null(f);
	lin_validator_report_json(v, f);
	cr_assert_eq(fclose(f), 0);
	cr_assert_null(strstr(buf, "matched_by_level"), "%s", buf);
	cr_assert_null(strstr(buf, "incorrect_by_level"), "%s", buf);
	cr_assert_eq(lin_joiner_summary(v)->matched_by_level[LIN_LEVEL_REQUEST], 0);
	free(buf);
	lin_joiner_free(v);
	LIN_TEST_CHECK_LEAKS();
}

Test(join, graph_kernel_joins_by_replay_and_by_node_origin)
{
	struct lin_joiner *v = lin_joiner_create(NULL);
	uint64_t r1 = 1, r2 = 2;
	begin(1, LIN_TRACE_FORMAT_NAME);
	declare(10, &r1, 1);
	lin_tf_graph_node(&pk, 1, 100, 5, 50, 10, 1, 1);
	lin_tf_graph_node_clone(&pk, 50, 150, 5, 6);
	declare(20, &r2, 1);
	lin_tf_graph_launch(&pk, 2, 100, 6, 30, 1, 20, 1, LIN_NIL);
	lin_tf_epoch_declare(&pk, 2, 100, 30, 1, &r2, 1, 20, 0);
	ext_api_cbid(30, 11, 311); /* cudaGraphLaunch */
	struct lin_tf_kernel k = { 11, 11050, 11060, 0, 1, 1, 1, 5, 150, 0, 0, 0, false };
	lin_tf_kernel(&pk, &k);
	k.correlation = 12; /* replay without ext and API */
	k.grid_id = 2;
	lin_tf_kernel(&pk, &k);
	k.graph_node_id = 151; /* a clone nobody recorded */
	k.grid_id = 3;
	lin_tf_kernel(&pk, &k);
	add(v, false);
	lin_joiner_finish(v);
	const struct lin_join_summary *s = lin_joiner_summary(v);
	cr_assert_eq(s->observed, 1);
	/* Node origin is provenance: the replay without ext and API is not joined by it. */
	cr_assert_eq(s->inferred, 0);
	cr_assert_eq(s->lost_by_cause[LIN_CAUSE_NO_API_RECORD], 1);
	cr_assert_eq(s->lost_by_cause[LIN_CAUSE_UNKNOWN_GRAPH_NODE], 1);
	lin_joiner_free(v);
	LIN_TEST_CHECK_LEAKS();
}

Test(join, other_ext_kinds_are_ignored)
{
	struct lin_joiner *v = lin_joiner_create(NULL);
	uint64_t r = 1;
	begin(1, LIN_TRACE_FORMAT_NAME);
	declare(2, &r, 1);
	lin_tf_ext_correlation(&pk, 1, 2, 11); /* CUSTOM0, not ours */
	struct lin_tf_api a = { 1, 211, 11, 11000, 11010, 1, 100, 0 };
	lin_tf_api(&pk, &a);
	kernel(11, 1);
	add(v, false);
	lin_joiner_finish(v);
	const struct lin_join_summary *s = lin_joiner_summary(v);
	cr_assert_eq(s->observed, 0);
	cr_assert_eq(s->lost_by_cause[LIN_CAUSE_NO_EXTERNAL_CORRELATION], 1);
	lin_joiner_free(v);
	LIN_TEST_CHECK_LEAKS();
}

/* The truth file is read first and names the process too: the ext kind (and backend)
 * still come from the trace's header. */
Test(join, ext_kind_comes_from_the_trace_not_the_truth_file)
{
	for (uint32_t kind = 3; kind <= 5; kind += 2) {
		struct lin_joiner *v = judged_joiner();
		uint64_t r = 1;
		begin(1, LIN_TRUTH_FORMAT_NAME);
		lin_tf_truth(&pk, LIN_REC_KERNEL, 1, &r, 1, LIN_NIL);
		add(v, true);
		begin_kind(1, LIN_TRACE_FORMAT_NAME, kind);
		declare(2, &r, 1);
		lin_tf_ext_correlation(&pk, 3, 2, 11); /* CUSTOM0 */
		struct lin_tf_api a = { 1, 211, 11, 11000, 11010, 1, 100, 0 };
		lin_tf_api(&pk, &a);
		kernel(11, 1);
		add(v, false);
		lin_joiner_finish(v);
		const struct lin_join_summary *s = lin_joiner_summary(v);
		cr_assert_eq(s->observed, kind == 3, "kind %u", kind);
		cr_assert_eq(s->matched, kind == 3, "kind %u", kind);
		cr_assert_eq(s->lost_by_cause[LIN_CAUSE_NO_EXTERNAL_CORRELATION], kind != 3);
		judged_free(v);
	}
	LIN_TEST_CHECK_LEAKS();
}

Test(join, findings_are_capped_but_counted)
{
	struct lin_joiner_opts o = { 3 };
	struct lin_joiner *v = lin_joiner_create(&o);
	begin(1, LIN_TRACE_FORMAT_NAME);
	for (uint64_t c = 1; c <= 10; c++)
		kernel(c, c);
	add(v, false);
	lin_joiner_finish(v);
	cr_assert_eq(lin_joiner_summary(v)->lost, 10);
	/* 10 lost, and no API record for GPU records that name their call: no_api_records */
	cr_assert_eq(lin_joiner_summary(v)->findings, 11);
	cr_assert_eq(v->findings.n, 3);
	lin_joiner_free(v);
	LIN_TEST_CHECK_LEAKS();
}

Test(join, truncated_file_keeps_prior_records_and_exits_2)
{
	struct lin_joiner *v = lin_joiner_create(NULL);
	uint64_t r = 1;
	begin(1, LIN_TRACE_FORMAT_NAME);
	declare(2, &r, 1);
	ext_api(2, 11);
	kernel(11, 1);
	size_t full = sb.size;
	kernel(12, 2);
	lin_joiner_add_mem(v, "cut", sb.data, full + 3);
	msgpack_sbuffer_destroy(&sb);
	lin_joiner_finish(v);
	uint64_t off = 0;
	const char *file = NULL;
	cr_assert(strstr(lin_joiner_error(v, &off, &file), "truncated"));
	cr_assert_eq(off, full);
	cr_assert_str_eq(file, "cut");
	cr_assert_eq(lin_joiner_summary(v)->observed, 1);
	cr_assert_eq(lin_joiner_exit_code(v), 2);
	lin_joiner_free(v);
	LIN_TEST_CHECK_LEAKS();
}

Test(join, records_after_trace_end_are_reported)
{
	struct lin_joiner *v = lin_joiner_create(NULL);
	uint64_t r = 7;
	begin(1, LIN_TRACE_FORMAT_NAME);
	declare(2, &r, 1);
	ext_api(2, 11);
	lin_tf_trace_end(&pk, 500, 0);
	kernel(11, 1); /* appended after the trace was closed */
	add(v, false); /* closes it again */
	lin_joiner_finish(v);
	const struct lin_join_summary *s = lin_joiner_summary(v);
	cr_assert_eq(s->observed, 1, "the record is still validated");
	cr_assert_eq(s->structural, 2, "the kernel and the second trace_end");
	cr_assert_eq(lin_joiner_exit_code(v), 1);
	lin_joiner_free(v);
	LIN_TEST_CHECK_LEAKS();
}

struct seen {
	int n;
	struct lin_gpu_verdict vd[8];
};

static void keep_verdict(void *arg, const struct lin_gpu_verdict *vd)
{
	struct seen *s = arg;
	cr_assert_lt(s->n, 8);
	s->vd[s->n++] = *vd;
}

/* The JSON report on the generated @fixture, validated with @o. */
static char *fixture_report(const char *fixture, const struct lin_joiner_opts *o)
{
	char path[4096], *buf = NULL;
	size_t len = 0;
	snprintf(path, sizeof(path), "%s/%s", LIN_FIXTURE_GEN_DIR, fixture);
	struct lin_joiner *v = lin_joiner_create(o);
	cr_assert_eq(lin_joiner_add_file(v, path), 0, "%s", path);
	lin_joiner_finish(v);
	FILE *f = open_memstream(&buf, &len);
	cr_assert_not_null(f);
	lin_validator_report_json(v, f);
	cr_assert_eq(fclose(f), 0);
	lin_joiner_free(v);
	return buf;
}

Test(join, verdict_hook_sees_every_gpu_record_and_changes_nothing)
{
	static const struct {
		const char *fixture;
		enum lin_join join;
		const char *why;
		int n;
		enum lin_level level;
	} cases[] = {
		{ "good_cuda_only.lt", LIN_JOIN_INFERRED, "same_thread_time_containment", 2,
		  LIN_LEVEL_REQUEST },
		{ "lost_replay_outside_lineage.lt", LIN_JOIN_LOST, "replay_outside_lineage", 2,
		  LIN_LEVEL_API_CALL },
		{ "good_direct.lt", LIN_JOIN_OBSERVED, NULL, 5, LIN_LEVEL_REQUEST },
		{ "lost_no_correlation.lt", LIN_JOIN_LOST, "no_correlation", 1, LIN_LEVEL_NONE },
		{ "bad_ambiguous.lt", LIN_JOIN_AMBIGUOUS, "multiple_epochs", 1, LIN_LEVEL_API_CALL },
	};
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct seen s = { 0 };
		struct lin_joiner_opts plain = { 100 };
		struct lin_joiner_opts hooked = { .max_findings = 100,
						  .tool = { .gpu = keep_verdict, .arg = &s } };
		char *a = fixture_report(cases[c].fixture, &plain);
		char *b = fixture_report(cases[c].fixture, &hooked);
		cr_assert_str_eq(a, b, "%s: the hook changed the report", cases[c].fixture);
		free(a);
		free(b);
		cr_assert_eq(s.n, cases[c].n, "%s: %d verdicts", cases[c].fixture, s.n);
		for (int i = 0; i < s.n; i++) {
			const struct lin_gpu_verdict *vd = &s.vd[i];
			bool joined = vd->join == LIN_JOIN_OBSERVED || vd->join == LIN_JOIN_INFERRED;
			cr_assert_eq(vd->join, cases[c].join, "%s", cases[c].fixture);
			cr_assert_eq(vd->level, cases[c].level, "%s: level %d", cases[c].fixture,
				     vd->level);
			cr_assert_eq(vd->file, 0);
			cr_assert_gt(vd->offset, 0);
			cr_assert_eq(vd->epoch != LIN_NIL, joined, "%s", cases[c].fixture);
			if (cases[c].why)
				cr_assert_str_eq(vd->why, cases[c].why);
			else
				cr_assert_null(vd->why);
			for (int j = 0; j < i; j++)
				cr_assert_neq(vd->offset, s.vd[j].offset, "one verdict per record");
		}
		if (c == 0) /* fixturegen cuda_only(): one kernel in epoch 2, one in epoch 3 */
			cr_assert((s.vd[0].epoch == 2 && s.vd[1].epoch == 3) ||
				  (s.vd[0].epoch == 3 && s.vd[1].epoch == 2));
	}
	LIN_TEST_CHECK_LEAKS();
}

/* ------------------------------------------------------------------ nested API calls */

/* An API record of @domain for @corr on thread @tid, with its ext record. */
static void api_of(uint32_t domain, uint64_t corr, uint32_t tid, uint64_t epoch)
{
	struct lin_tf_api a = {
		domain, domain == 1 ? 505 : 307, corr, 1000 * corr, 1000 * corr + 10, 1, tid, 0
	};
	lin_tf_ext_correlation(&pk, 5, epoch, corr);
	lin_tf_api(&pk, &a);
}

static const struct lin_join_summary *nested_trace(struct lin_joiner *v, const uint32_t *domains,
						   const uint32_t *tids, size_t n)
{
	uint64_t r = 7;
	begin(1, LIN_TRACE_FORMAT_NAME);
	declare(2, &r, 1);
	for (size_t i = 0; i < n; i++)
		api_of(domains[i], 11, tids[i], 2);
	kernel(11, 1);
	add(v, false);
	lin_joiner_finish(v);
	return lin_joiner_summary(v);
}

/* A runtime launch and the driver call nested in it, one correlation id: one call. */
Test(join, runtime_and_nested_driver_record_share_a_correlation)
{
	const uint32_t d1[] = { 2, 1 }, d2[] = { 1, 2 }, tids[] = { 100, 100 };
	for (int order = 0; order < 2; order++) {
		struct lin_joiner *v = lin_joiner_create(NULL);
		const struct lin_join_summary *s = nested_trace(v, order ? d2 : d1, tids, 2);
		cr_assert_eq(s->structural, 0, "no correlation_reused");
		cr_assert_eq(s->observed, 1);
		cr_assert_eq(lin_joiner_exit_code(v), 0);
		lin_joiner_free(v);
	}
	LIN_TEST_CHECK_LEAKS();
}

/* Still a reuse: the same domain twice, another thread, a third record. */
Test(join, correlation_reused_across_calls_is_still_found)
{
	const uint32_t same[] = { 1, 1 }, two_tids[] = { 100, 101 }, mixed[] = { 1, 2 };
	const uint32_t three[] = { 1, 2, 1 }, tids3[] = { 100, 100, 100 }, tids2[] = { 100, 100 };
	struct {
		const uint32_t *d, *t;
		size_t n;
	} cases[] = {
		{ same, tids2, 2 },
		{ mixed, two_tids, 2 },
		{ three, tids3, 3 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct lin_joiner *v = lin_joiner_create(NULL);
		const struct lin_join_summary *s = nested_trace(v, cases[i].d, cases[i].t, cases[i].n);
		cr_assert_eq(s->structural, 1, "case %zu: correlation_reused", i);
		cr_assert_eq(lin_joiner_exit_code(v), 1);
		lin_joiner_free(v);
	}
	LIN_TEST_CHECK_LEAKS();
}
