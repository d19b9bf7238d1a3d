/* SPDX-License-Identifier: MIT */
/*
 * test_cli_validate.c - run the real lineage-validate on every generated fixture and
 * compare exit status and JSON counts with the verdicts in fixtures/README.md.
 */
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lin_test.h"

struct run {
	int status;
	char out[65536];
	char err[4096];
};

/* Run lineage-validate with @args (NULL-terminated); capture stdout and stderr. */
static void run_cli(struct run *r, const char *const *args)
{
	char *argv[32];
	char paths[32][4096];
	int n = 0;
	argv[n++] = (char *)LIN_VALIDATE_BIN;
	for (int i = 0; args[i] && n < 30; i++, n++) {
		if (strstr(args[i], ".lt") || strstr(args[i], ".truth")) {
			snprintf(paths[n], sizeof(paths[n]), "%s/%s", LIN_FIXTURE_GEN_DIR, args[i]);
			argv[n] = paths[n];
		} else {
			argv[n] = (char *)args[i];
		}
	}
	argv[n] = NULL;
	int po[2], pe[2];
	cr_assert_eq(pipe(po), 0);
	cr_assert_eq(pipe(pe), 0);
	pid_t pid = fork();
	cr_assert_neq(pid, -1);
	if (pid == 0) {
		dup2(po[1], 1);
		dup2(pe[1], 2);
		close(po[0]);
		close(pe[0]);
		execv(argv[0], argv);
		_exit(127);
	}
	close(po[1]);
	close(pe[1]);
	size_t no = 0, ne = 0;
	ssize_t k;
	while ((k = read(po[0], r->out + no, sizeof(r->out) - 1 - no)) > 0)
		no += (size_t)k;
	while ((k = read(pe[0], r->err + ne, sizeof(r->err) - 1 - ne)) > 0)
		ne += (size_t)k;
	r->out[no] = 0;
	r->err[ne] = 0;
	close(po[0]);
	close(pe[0]);
	int st;
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert(WIFEXITED(st), "lineage-validate died: %s", r->err);
	r->status = WEXITSTATUS(st);
}

/* Value of "key":N in the JSON output, or -1. */
static long json_num(const char *json, const char *key)
{
	char pat[128];
	snprintf(pat, sizeof(pat), "\"%s\":", key);
	const char *p = strstr(json, pat);
	return p ? strtol(p + strlen(pat), NULL, 10) : -1;
}

struct expect {
	const char *trace, *trace2, *truth, *truth2;
	int exit_code;
	long gpu, observed, inferred, lost, ambiguous, incorrect, structural, matched;
	const char *cause; /* a key expected in lost_by_cause or findings */
};

static const struct expect cases[] = {
	{ "good_direct.lt", 0, 0, 0, 0, 5, 5, 0, 0, 0, 0, 0, -1, NULL },
	{ "good_request_link.lt", 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, -1, NULL },
	{ "good_launch_state.lt", 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 0, -1, NULL },
	{ "good_pool_handoff.lt", 0, "good_pool_handoff.truth", 0, 0, 2, 2, 0, 0, 0, 0, 0, 2, NULL },
	{ "good_chain_handoff.lt", 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 0, -1, NULL },
	{ "good_graph_replay.lt", 0, "good_graph_replay.truth", 0, 0, 4, 4, 0, 0, 0, 0, 0, 4, NULL },
	{ "good_fanin_batch.lt", 0, "good_fanin_batch.truth", 0, 0, 2, 2, 0, 0, 0, 0, 0, 2, NULL },
	{ "good_fanout_streams.lt", 0, 0, 0, 0, 3, 3, 0, 0, 0, 0, 0, -1, NULL },
	{ "good_serving_shares.lt", 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 0, -1, NULL },
	{ "lost_serving_unattributed.lt", 0, 0, 0, 1, 3, 2, 0, 1, 0, 0, 1, -1,
	  "\"no_external_correlation\":1" },
	{ "bad_graph_trace_and_nodes.lt", 0, 0, 0, 1, 3, 3, 0, 0, 0, 0, 1, -1,
	  "graph_trace_and_node_records" },
	{ "bad_epoch_share.lt", 0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 7, -1, "epoch_share_mismatch" },
	{ "bad_epoch_share.lt", 0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 7, -1, "\"bad_epoch_share\"" },
	{ "bad_epoch_share.lt", 0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 7, -1, "duplicate_epoch_share" },
	{ "bad_epoch_share.lt", 0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 7, -1, "epoch_share_unknown_epoch" },
	{ "bad_epoch_share.lt", 0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 7, -1, "duplicate_first_token" },
	{ "bad_epoch_share.lt", 0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 7, -1, "decode_before_first_token" },
	{ "good_two_procs_a.lt", "good_two_procs_b.lt", "good_two_procs_a.truth",
	  "good_two_procs_b.truth", 0, 4, 4, 0, 0, 0, 0, 0, 4, NULL },
	{ "good_cuda_only.lt", 0, 0, 0, 0, 2, 0, 2, 0, 0, 0, 0, -1, "\"same_thread_time_containment\":2" },
	{ "good_unknown_record_type.lt", 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 0, -1, "unknown_record_type" },
	{ "lost_no_external_correlation.lt", 0, 0, 0, 1, 1, 0, 0, 1, 0, 0, 0, -1,
	  "\"no_external_correlation\":1" },
	{ "lost_no_api_record.lt", 0, 0, 0, 1, 2, 1, 0, 1, 0, 0, 0, -1, "\"no_api_record\":1" },
	{ "lost_before_trace_start.lt", 0, 0, 0, 1, 2, 1, 0, 1, 0, 0, 0, -1, "\"before_trace_start\":1" },
	{ "lost_dropped_records.lt", 0, 0, 0, 1, 2, 1, 0, 1, 0, 0, 1, -1, "\"dropped_records\":1" },
	{ "lost_device_launched_graph.lt", 0, 0, 0, 1, 1, 0, 0, 1, 0, 0, 0, -1,
	  "\"device_launched_graph\":1" },
	{ "lost_unknown_launch_api.lt", 0, 0, 0, 1, 1, 0, 0, 1, 0, 0, 0, -1, "\"unknown_launch_api\":1" },
	{ "lost_stale_token.lt", 0, 0, 0, 1, 1, 0, 0, 1, 0, 0, 1, -1, "\"stale_token\":1" },
	{ "lost_unknown_graph_node.lt", 0, 0, 0, 1, 1, 0, 0, 1, 0, 0, 0, -1, "\"unknown_graph_node\":1" },
	{ "lost_unknown_epoch.lt", 0, 0, 0, 1, 1, 0, 0, 1, 0, 0, 0, -1, "\"unknown_epoch\":1" },
	{ "lost_no_correlation.lt", 0, 0, 0, 1, 1, 0, 0, 1, 0, 0, 0, -1, "\"no_correlation\":1" },
	{ "bad_ambiguous.lt", 0, 0, 0, 1, 1, 0, 0, 0, 1, 0, 0, -1, "\"candidates\":[2,3]" },
	{ "bad_incorrect.lt", 0, "bad_incorrect.truth", 0, 1, 1, 1, 0, 0, 0, 1, 0, 0,
	  "\"detail\":\"joined to request 1 (epoch 2); the truth gives request 9\"" },
	{ "bad_incorrect_no_request.lt", 0, "bad_incorrect_no_request.truth", 0, 1, 1, 1, 0, 0, 0, 1, 0,
	  0, "\"detail\":\"joined to op/epoch 4, which names no request; the truth gives request 9\"" },
	{ "bad_scope_misuse.lt", 0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 1, -1, "\"scope_order\"" },
	{ "bad_time_order.lt", 0, 0, 0, 1, 2, 2, 0, 0, 0, 0, 2, -1, "\"time_order\"" },
	{ "bad_duplicate_ids.lt", 0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 2, -1, "\"duplicate_epoch_id\"" },
	{ "bad_epoch_request_twice.lt", 0, "bad_epoch_request_twice.truth", 0, 1, 1, 1, 0, 0, 0, 1,
	  1, 0, "\"duplicate_epoch_request\"" },
	{ "good_direct.lt", 0, "bad_truth_label_twice.truth", 0, 1, 5, 5, 0, 0, 0, 0, 1, 1,
	  "\"duplicate_truth_label\"" },
	{ "lost_trace_end_dropped.lt", 0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 1, -1,
	  "trace_end counts more dropped host events" },
	{ "lost_trace_end_dropped.lt", "good_second_runtime.lt", 0, 0, 1, 2, 2, 0, 0, 0, 0, 1, -1,
	  "trace_end counts more dropped host events" },
	{ "good_direct.lt", "good_second_runtime.lt", 0, 0, 0, 6, 6, 0, 0, 0, 0, 0, -1, NULL },
	{ "lost_host_events_counted.lt", 0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 1, -1, "\"dropped_records\"" },
	{ "bad_adopt_without_capture.lt", 0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 1, -1, "\"adopt_without_capture\"" },
	{ "bad_adopt_before_capture.lt", 0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 1, -1, "\"adopt_before_capture\"" },
	{ "bad_correlation_reuse.lt", 0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 1, -1, "\"correlation_reused\"" },
	{ "bad_undefined_string.lt", 0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 1, -1, "\"undefined_string_id\"" },
	{ "bad_request_link.lt", 0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 1, -1, "\"bad_request_link\"" },
	/* The cut takes the second kernel: its launch is owed a GPU record (no_gpu_record). */
	/* Launches (fixtures_launch.c): containment needs a closed bracket and a clock. */
	{ "lost_outside_bracket.lt", 0, "lost_outside_bracket.truth", 0, 1, 2, 0, 1, 1, 0, 0, 0, 1,
	  "\"no_external_correlation\":1" },
	{ "lost_bracket_unclosed.lt", 0, 0, 0, 1, 1, 0, 0, 1, 0, 0, 1, -1, "\"bracket_end_unknown\":1" },
	{ "lost_format10_containment.lt", 0, 0, 0, 1, 1, 0, 0, 1, 0, 0, 0, -1, "\"bracket_end_unknown\":1" },
	{ "lost_untimed_bracket_end.lt", 0, 0, 0, 1, 1, 0, 0, 1, 0, 0, 0, -1, "\"bracket_end_unknown\":1" },
	{ "lost_clock_uncertainty.lt", 0, 0, 0, 1, 1, 0, 0, 1, 0, 0, 0, -1, "\"clock_uncertainty\":1" },
	{ "lost_no_clock_record.lt", 0, 0, 0, 1, 1, 0, 0, 1, 0, 0, 0, -1, "\"no_clock_record\":1" },
	{ "lost_no_gpu_record.lt", 0, 0, 0, 1, 1, 1, 0, 1, 0, 0, 0, -1, "\"no_gpu_record\":1" },
	{ "good_stream_capture.lt", 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, -1, "\"captured_launches\":1" },
	{ "lost_after_invalidated_capture.lt", 0, 0, 0, 1, 1, 1, 0, 1, 0, 0, 0, -1, "\"no_gpu_record\":1" },
	{ "lost_capture_never_ended.lt", 0, 0, 0, 1, 1, 1, 0, 1, 0, 0, 0, -1, "\"maybe_captured\":1" },
	{ "bad_launch_without_api_record.lt", 0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 1, -1,
	  "\"launch_without_api_record\"" },
	{ "lost_correlation_mismatch.lt", 0, 0, 0, 1, 1, 0, 0, 1, 0, 0, 0, -1,
	  "\"correlation_mismatch\":1" },
	{ "good_graph_trace.lt", 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, -1, NULL },
	{ "bad_unpaired_launch_end.lt", 0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 1, -1, "\"unpaired_launch_end\"" },
	{ "bad_duplicate_gpu_record.lt", 0, 0, 0, 1, 2, 1, 0, 0, 0, 0, 1, -1, "\"duplicates\":1" },
	{ "good_graph_parallel_memsets.lt", 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 0, -1, NULL },
	{ "bad_graph_memset_twice.lt", 0, 0, 0, 1, 2, 1, 0, 0, 0, 0, 1, -1, "\"duplicates\":1" },
	{ "good_memcpy_batch.lt", 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 0, -1, NULL },
	{ "bad_duplicate_batch_copy.lt", 0, 0, 0, 1, 2, 1, 0, 0, 0, 0, 1, -1, "\"duplicates\":1" },
	{ "bad_stale_launch.lt", 0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 1, -1, "\"stale_launch\"" },
	{ "good_launch_before_reissue.lt", 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, -1, NULL },
	{ "good_late_after_retire.lt", 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, -1, "\"joined_after_retire\":1" },
	{ "good_late_after_reissue.lt", 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, -1, "\"joined_after_reissue\":1" },
	{ "bad_late_without_end.lt", 0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 1, -1, "\"late_without_end\"" },
	{ "bad_api_pid_mismatch.lt", 0, 0, 0, 1, 1, 0, 0, 1, 0, 0, 1, -1, "\"foreign_process\":1" },
	{ "bad_used_before_declare.lt", 0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 1, -1, "\"used_before_declare\"" },
	{ "bad_epoch_before_request.lt", 0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 1, -1, "\"epoch_before_request\"" },
	{ "bad_unknown_version.lt", 0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 1, -1, "\"unknown_version\"" },
	{ "good_version_before_issue.lt", 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, -1, "\"version_before_issue\"" },
	{ "bad_unpaired_scope_close.lt", 0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 1, -1, "\"unpaired_scope_close\"" },
	{ "bad_late_mismatch.lt", 0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 1, -1, "\"late_mismatch\"" },
	{ "bad_no_gpu_records.lt", 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, -1, "with backend none" },
	{ "bad_cupti_delivered_nothing.lt", 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, -1,
	  "no CUPTI activity record" },
	{ "good_request_ext.lt", 0, "good_request_ext.truth", 0, 0, 1, 1, 0, 0, 0, 0, 0, 1,
	  "\"request\":1}" },
	{ "lost_replay_outside_lineage.lt", 0, "lost_replay_outside_lineage.truth", 0, 1, 2, 0, 0,
	  2, 0, 0, 0, 0, "\"replay_outside_lineage\":2" },
	/* Review 13 (fixtures_launch.c, bracket_reviews). */
	{ "bad_ext_without_bracket.lt", 0, 0, 0, 1, 2, 2, 0, 0, 0, 0, 1, -1, "\"ext_without_bracket\"" },
	{ "good_epoch_two_brackets.lt", 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 0, -1, NULL },
	{ "bad_ext_without_api_record.lt", 0, 0, 0, 1, 2, 2, 0, 0, 0, 0, 1, -1,
	  "\"ext_without_api_record\"" },
	{ "bad_nil_correlation.lt", 0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 2, -1, "\"nil_correlation\"" },
	{ "bad_uncertain_bracket_empty.lt", 0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 1, -1,
	  "\"launch_without_api_record\"" },
	{ "good_uncertain_brackets.lt", 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 0, -1, NULL },
	{ "good_driver_pairs_counted.lt", 0, 0, 0, 0, 4, 4, 0, 0, 0, 0, 0, -1, NULL },
	{ "bad_driver_pair_dropped.lt", 0, 0, 0, 1, 3, 3, 0, 0, 0, 0, 1, -1,
	  "\"launch_without_api_record\"" },
	{ "bad_driver_pair_repointed.lt", 0, 0, 0, 1, 4, 4, 0, 0, 0, 0, 1, -1,
	  "\"launch_without_api_record\"" },
	{ "bad_driver_pair_evicted.lt", 0, 0, 0, 1, 3, 3, 0, 0, 0, 0, 1, -1,
	  "\"launch_without_api_record\"" },
	{ "good_format11_nested_brackets.lt", 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, -1, NULL },
	{ "lost_format11_nested_no_ext.lt", 0, 0, 0, 1, 1, 0, 0, 1, 0, 0, 0, -1,
	  "\"no_external_correlation\":1" },
	{ "bad_foreign_ext_empty_bracket.lt", 0, 0, 0, 1, 2, 0, 1, 1, 0, 0, 1, -1,
	  "\"launch_without_api_record\"" },
	{ "lost_foreign_ext_brackets_held.lt", 0, 0, 0, 1, 2, 0, 1, 1, 0, 0, 0, -1, "\"unknown_epoch\":1" },
	{ "bad_ext_bracket_conflict.lt", 0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 1, -1, "\"ext_bracket_conflict\"" },
	{ "good_ext_bracket_agree.lt", 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, -1, NULL },
	/* A rate change between clock pairs (fixtures_launch.c, clock_bend): the call is left
	 * undecided, not certified in the bracket interpolation puts it in; the count still
	 * finds the bracket that owes a call. Silent with the rate steady: the bracket check
	 * decides and finds the cross-wired id. */
	{ "bad_clock_bend_undecided.lt", 0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 1, -1,
	  "\"bracket_checked\":0,\"bracket_unchecked\":1,\"bracket_unchecked_by\":{\"clock_uncertainty\":1}" },
	{ "bad_clock_steady_cross_wired.lt", 0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 3, -1,
	  "\"ext_outside_bracket\"" },
	/* A step back of the device clock (clock_bend): the call read on both sides of it is
	 * left undecided; silent without the step. */
	{ "bad_clock_step_back_undecided.lt", 0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 1, -1,
	  "\"bracket_checked\":0,\"bracket_unchecked\":1,\"bracket_unchecked_by\":{\"clock_uncertainty\":1}" },
	{ "bad_clock_no_step_cross_wired.lt", 0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 3, -1,
	  "\"ext_outside_bracket\"" },
	{ "err_truncated.lt", 0, 0, 0, 2, 1, 1, 0, 1, 0, 0, 0, -1, "\"truncated\":true" },
	{ "err_unclosed.lt", 0, 0, 0, 2, 5, 5, 0, 0, 0, 0, 0, -1, "no trace_end record" },
	{ "err_wrong_version.lt", 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, -1, "unsupported format version" },
	{ "err_random_bytes.lt", 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, -1, "header map" },
	{ "err_huge_array.lt", 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, -1, "more than the limit" },
	{ "err_huge_str.lt", 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, -1, "record limit" },
	{ "err_deep_nesting.lt", 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, -1, "nesting deeper" },
	{ "err_duplicate_header_key.lt", 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, -1, "duplicate key" },
	{ "err_nan_tsc_hz.lt", 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, -1, "tsc_hz" },
	{ "err_wrong_field_type.lt", 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, -1, "start_dev" },
};

static void check_case(const struct expect *e)
{
	struct run *r = malloc(sizeof(*r));
	const char *args[12];
	int n = 0;
	args[n++] = "--json";
	if (e->truth) {
		args[n++] = "--expect";
		args[n++] = e->truth;
	}
	if (e->truth2) {
		args[n++] = "--expect";
		args[n++] = e->truth2;
	}
	args[n++] = e->trace;
	if (e->trace2)
		args[n++] = e->trace2;
	args[n] = NULL;
	run_cli(r, args);
	const char *t = e->trace;
	cr_assert_eq(r->status, e->exit_code, "%s: exit %d, want %d\n%s%s", t, r->status,
		     e->exit_code, r->out, r->err);
	cr_assert_eq(json_num(r->out, "gpu_records"), e->gpu, "%s: %s", t, r->out);
	cr_assert_eq(json_num(r->out, "joined_observed"), e->observed, "%s: %s", t, r->out);
	cr_assert_eq(json_num(r->out, "joined_inferred"), e->inferred, "%s: %s", t, r->out);
	cr_assert_eq(json_num(r->out, "lost"), e->lost, "%s: %s", t, r->out);
	cr_assert_eq(json_num(r->out, "ambiguous"), e->ambiguous, "%s: %s", t, r->out);
	cr_assert_eq(json_num(r->out, "incorrect"), e->incorrect, "%s: %s", t, r->out);
	cr_assert_eq(json_num(r->out, "structural"), e->structural, "%s: %s", t, r->out);
	cr_assert_eq(json_num(r->out, "matched"), e->matched, "%s: %s", t, r->out);
	if (e->cause)
		cr_assert(strstr(r->out, e->cause) || strstr(r->err, e->cause),
			  "%s: no '%s' in\n%s%s", t, e->cause, r->out, r->err);
	if (e->exit_code == 2) {
		cr_assert(strstr(r->err, e->trace), "%s: stderr does not name the file: %s", t, r->err);
		cr_assert(strstr(r->err, "byte "), "%s: stderr has no byte offset: %s", t, r->err);
	}
	free(r);
}

Test(cli, every_fixture_has_its_documented_verdict)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		check_case(&cases[i]);
}

Test(cli, every_generated_fixture_is_covered)
{
	struct run *r = malloc(sizeof(*r));
	char cmd[4200];
	snprintf(cmd, sizeof(cmd), "ls %s | grep -c '\\.lt$'", LIN_FIXTURE_GEN_DIR);
	FILE *p = popen(cmd, "r");
	int n = 0;
	cr_assert_eq(fscanf(p, "%d", &n), 1);
	pclose(p);
	/* Distinct trace names among the cases (a trace may be checked more than once: with
	 * another truth file, or beside another trace). */
	size_t covered = 0, ncases = sizeof(cases) / sizeof(cases[0]);
	for (size_t i = 0; i < 2 * ncases; i++) {
		const char *t = i % 2 ? cases[i / 2].trace2 : cases[i / 2].trace;
		bool again = !t;
		for (size_t j = 0; j < i && !again; j++) {
			const char *u = j % 2 ? cases[j / 2].trace2 : cases[j / 2].trace;
			again = u && strcmp(u, t) == 0;
		}
		covered += !again;
	}
	cr_assert_eq((size_t)n, covered, "%d fixtures generated, %zu with a verdict", n, covered);
	free(r);
}

/* Format 1.3's records are known: no unknown_record_type note (a type 99 record gets one). */
Test(cli, launch_state_records_are_read_without_a_note)
{
	struct run *r = malloc(sizeof(*r));
	const char *args[] = { "--json", "good_launch_state.lt", NULL };
	run_cli(r, args);
	cr_assert_eq(r->status, 0, "%s", r->out);
	cr_assert_eq(json_num(r->out, "notes"), 0, "%s", r->out);
	const char *args2[] = { "--json", "good_unknown_record_type.lt", NULL };
	run_cli(r, args2);
	cr_assert_eq(json_num(r->out, "notes"), 1, "%s", r->out);
	free(r);
}

Test(cli, human_report_names_file_and_offset)
{
	struct run *r = malloc(sizeof(*r));
	const char *args[] = { "lost_no_api_record.lt", NULL };
	run_cli(r, args);
	cr_assert_eq(r->status, 1);
	cr_assert(strstr(r->out, "GPU records"), "%s", r->out);
	cr_assert(strstr(r->out, "lost_no_api_record.lt:"), "%s", r->out);
	cr_assert(strstr(r->out, "no_api_record"), "%s", r->out);
	free(r);
}

Test(cli, usage_help_version)
{
	struct run *r = malloc(sizeof(*r));
	const char *none[] = { NULL };
	run_cli(r, none);
	cr_assert_eq(r->status, 64);
	const char *bad[] = { "--no-such-option", "good_direct.lt", NULL };
	run_cli(r, bad);
	cr_assert_eq(r->status, 64);
	const char *badn[] = { "--max-findings", "x", "good_direct.lt", NULL };
	run_cli(r, badn);
	cr_assert_eq(r->status, 64);
	const char *help[] = { "--help", NULL };
	run_cli(r, help);
	cr_assert_eq(r->status, 0);
	cr_assert(strstr(r->out, "SYNOPSIS") && strstr(r->out, "EXIT STATUS") &&
			  strstr(r->out, "EXAMPLES"),
		  "%s", r->out);
	const char *ver[] = { "--version", NULL };
	run_cli(r, ver);
	cr_assert_eq(r->status, 0);
	cr_assert(strstr(r->out, "lineage-validate 0."), "%s", r->out);
	free(r);
}

/* The text report says what the files are, names both sides of an incorrect join and the
 * levels in a Kineto user's words (the JSON keeps its keys: docs/validator.md). */
Test(cli, text_report_reads_as_words)
{
	struct run *r = malloc(sizeof(*r));
	const char *one[] = { "--expect", "bad_epoch_request_twice.truth",
			      "bad_epoch_request_twice.lt", NULL };
	run_cli(r, one);
	cr_assert_eq(r->status, 1, "%s", r->out);
	cr_assert(strstr(r->out, "): 1 trace, 1 truth file\n"), "%s", r->out);
	cr_assert(strstr(r->out, "request_mismatch key=31 epoch=4 joined_request=1 true_request=1: "
				 "joined to requests 1, 1 (epoch 4); the truth gives requests 1, 2\n"),
		  "%s", r->out);
	const char *none[] = { "--expect", "bad_incorrect_no_request.truth",
			       "bad_incorrect_no_request.lt", NULL };
	run_cli(r, none);
	cr_assert(strstr(r->out, "epoch=4 true_request=9: joined to op/epoch 4, which names no "
				 "request; the truth gives request 9\n"),
		  "%s", r->out);
	cr_assert(strstr(r->out, "deepest join reached        request 0, op without request 1, API "
				 "call only 0, none 0\n"),
		  "%s", r->out);
	const char *two[] = { "lost_no_api_record.lt", "good_direct.lt", NULL };
	run_cli(r, two);
	cr_assert(strstr(r->out, "): 2 traces\n"), "%s", r->out);
	cr_assert(!strstr(r->out, "file(s)"), "%s", r->out);
	free(r);
}

Test(cli, max_findings_caps_the_list)
{
	struct run *r = malloc(sizeof(*r));
	const char *args[] = { "--json", "--max-findings", "0", "lost_no_api_record.lt", NULL };
	run_cli(r, args);
	cr_assert_eq(r->status, 1);
	cr_assert(strstr(r->out, "\"findings\":[]"), "%s", r->out);
	cr_assert_eq(json_num(r->out, "findings_total"), 1);
	free(r);
}

/* No vacuous pass: a run without GPU records exits 1 unless --allow-empty says it may be
 * empty; anything else wrong still fails it. */
Test(cli, allow_empty_lets_only_an_empty_run_pass)
{
	struct run *r = malloc(sizeof(*r));
	const char *plain[] = { "--json", "bad_no_gpu_records.lt", NULL };
	run_cli(r, plain);
	cr_assert_eq(r->status, 1, "%s", r->out);
	const char *allowed[] = { "--json", "--allow-empty", "bad_no_gpu_records.lt", NULL };
	run_cli(r, allowed);
	cr_assert_eq(r->status, 0, "%s", r->out);
	cr_assert_eq(json_num(r->out, "structural"), 0, "%s", r->out);
	const char *still_bad[] = { "--json", "--allow-empty", "bad_duplicate_gpu_record.lt", NULL };
	run_cli(r, still_bad);
	cr_assert_eq(r->status, 1, "--allow-empty hides nothing else: %s", r->out);
	const char *nonempty[] = { "--json", "--allow-empty", "lost_no_gpu_record.lt", NULL };
	run_cli(r, nonempty);
	cr_assert_eq(r->status, 1, "%s", r->out);
	free(r);
}

Test(cli, missing_file_exits_2)
{
	struct run *r = malloc(sizeof(*r));
	const char *args[] = { "/nonexistent/trace.lt", NULL };
	run_cli(r, args);
	cr_assert_eq(r->status, 2);
	cr_assert(strstr(r->err, "/nonexistent/trace.lt"), "%s", r->err);
	free(r);
}

/* The size of file @path (-1: none). */
static long file_size(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

/* An output that is an input would overwrite it: refused (64) before anything is written,
 * by any path to it (a directory's file too); two outputs that are one file likewise. An
 * output beside the inputs is written. Paths here have no ".lt" (run_cli would move them
 * into the fixture directory): the validator knows a trace by its content. */
Test(cli, an_output_that_is_an_input_is_refused_and_the_input_kept)
{
	char dir[] = "/tmp/lin-clash-XXXXXX";
	cr_assert_not_null(mkdtemp(dir));
	char trace[4096], link[4096], out[4096], cmd[8192];
	snprintf(trace, sizeof(trace), "%s/trace", dir);
	snprintf(link, sizeof(link), "%s/alias", dir);
	snprintf(out, sizeof(out), "%s/verdicts", dir);
	snprintf(cmd, sizeof(cmd), "cp %s/good_direct.lt %s", LIN_FIXTURE_GEN_DIR, trace);
	cr_assert_eq(system(cmd), 0);
	cr_assert_eq(symlink(trace, link), 0);
	long size = file_size(trace);
	cr_assert_gt(size, 0);
	struct run *r = malloc(sizeof(*r));
	const char *same[] = { "--export-otlp", trace, trace, NULL };
	run_cli(r, same);
	cr_assert_eq(r->status, 64, "%s", r->err);
	cr_assert(strstr(r->err, "is the input"), "%s", r->err);
	const char *alias[] = { "--verdicts", link, trace, NULL };
	run_cli(r, alias);
	cr_assert_eq(r->status, 64, "%s", r->err);
	const char *in_dir[] = { "--export-perfetto", trace, dir, NULL };
	run_cli(r, in_dir);
	cr_assert_eq(r->status, 64, "%s", r->err);
	cr_assert_eq(r->out[0], 0, "no report");
	cr_assert_eq(file_size(trace), size, "the trace is kept whole");
	const char *two[] = { "--verdicts", out, "--export-otlp", out, trace, NULL };
	run_cli(r, two);
	cr_assert_eq(r->status, 64, "%s", r->err);
	cr_assert(strstr(r->err, "are one file"), "%s", r->err);
	cr_assert_eq(file_size(out), -1, "nothing written");
	const char *ok[] = { "--verdicts", out, trace, NULL };
	run_cli(r, ok);
	cr_assert_eq(r->status, 0, "%s", r->err);
	cr_assert_gt(file_size(out), 0, "an output beside the input is written");
	free(r);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	cr_assert_eq(system(cmd), 0);
}

/* A directory that holds a trace and its truth file (as lineage-synth -o D/x.lt --truth
 * D/x.truth leaves it): the truth file is labels, named and left out, not read as a trace;
 * given with --expect it is compared. */
Test(cli, a_truth_file_in_a_directory_is_left_out_not_read_as_a_trace)
{
	char dir[] = "/tmp/lin-truthdir-XXXXXX";
	cr_assert_not_null(mkdtemp(dir));
	char cmd[8192], labels[4096];
	snprintf(cmd, sizeof(cmd),
		 "cp %s/good_graph_replay.lt %s/run && cp %s/good_graph_replay.truth %s/labels",
		 LIN_FIXTURE_GEN_DIR, dir, LIN_FIXTURE_GEN_DIR, dir);
	cr_assert_eq(system(cmd), 0);
	snprintf(labels, sizeof(labels), "%s/labels", dir);
	struct run *r = malloc(sizeof(*r));
	const char *args[] = { "--json", "--expect", labels, dir, NULL };
	run_cli(r, args);
	cr_assert_eq(r->status, 0, "%s%s", r->err, r->out);
	cr_assert(strstr(r->err, "labels: skipped (a truth file: give it with --expect)"), "%s", r->err);
	cr_assert_eq(json_num(r->out, "matched"), 4, "%s", r->out);
	free(r);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	cr_assert_eq(system(cmd), 0);
}

Test(cli, fixture_generation_is_deterministic)
{
	char dir[] = "/tmp/lin-fixtures-XXXXXX";
	cr_assert_not_null(mkdtemp(dir));
	char cmd[8400];
	snprintf(cmd, sizeof(cmd), "'%s' '%s' && diff -r -x .stamp '%s' '%s' >/dev/null",
		 LIN_FIXTUREGEN_BIN, dir, dir, LIN_FIXTURE_GEN_DIR);
	int rc = system(cmd);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	cr_assert_eq(system(cmd), 0);
	cr_assert_eq(rc, 0, "regenerated fixtures differ from %s", LIN_FIXTURE_GEN_DIR);
}
