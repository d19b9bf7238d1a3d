/* SPDX-License-Identifier: MIT */
/*
 * gen.c - lin-explain-gen DIR: the command-line fixtures of lineage-explain (cli.sh), written
 * with the same builders as the ledger's unit tests (xgen.h):
 *   ledger.lt    three requests: a handoff with latency timestamps (7), a launch held behind
 *                another request's kernel on its stream (8), one held behind an event
 *                recorded on another stream (9, with a descheduled launching thread)
 *   nogpu.lt     requests and epochs, no GPU record
 *   unjoined.lt  kernels that no external correlation names
 *   noclock.lt   device times on CUPTI's clock and no clock record
 *   epochonly.lt a launch under an epoch that names no request
 *   names.lt     a kernel whose name holds a newline, a fake report line, an escape, a quote
 *   order.lt     a request begun after its epoch's declaration (its ready is out of order)
 *   unbegun.lt   an epoch naming a request with no request_begin in the trace, and its
 *                kernel (per-request-otlp.sh: its span hangs under the process span)
 *   child.lt     request 8 begun as a child of request 7, its epoch and kernel
 *                (per-request-otlp.sh: its span is in request 7's trace)
 * lin-explain-gen DIR --stress N: stress.lt, N requests each handed to one worker thread
 * (an adopt and an off-CPU record each), each launch on stream 2 after a wait on an event
 * recorded behind a kernel on stream 1: work that grows quadratically if a lookup walks
 * back over earlier waits, adopts or scheduling records.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reader.h"
#include "xgen.h"

/* Write the buffer to @path and free it; 0 or 1 (said). */
static int write_buf(const char *path)
{
	FILE *f = fopen(path, "wb");
	int rc = f && fwrite(sb.data, 1, sb.size, f) == sb.size ? 0 : 1;
	if (f && fclose(f))
		rc = 1;
	msgpack_sbuffer_destroy(&sb);
	if (rc)
		fprintf(stderr, "lin-explain-gen: cannot write %s\n", path);
	return rc;
}

static int save(const char *dir, const char *name)
{
	lin_tf_trace_end(&pk, 1000000, 0);
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return write_buf(path);
}

static int stress(const char *dir, uint64_t n)
{
	begin();
	for (uint64_t i = 0; i < n; i++) {
		uint64_t t = 100000 * (i + 1), req = i + 1, ep = 1000000 + i, c = 4 * i + 1;
		lin_tf_request_begin(&pk, t, SUBMITTER, req, LIN_NIL, LIN_NIL, LIN_NIL);
		lin_tf_epoch_declare(&pk, t + 100, SUBMITTER, ep, 1, &req, 1, LIN_NIL, 0);
		handoff(ep, t + 200, t + 5000, i + 1);
		lin_tf_host_sched(&pk, WORKER, t + 5100, t + 5200, LIN_SCHED_PREEMPTED, LIN_NIL);
		call(ep, c, WORKER, t + 6000, t + 6100);
		kern(c, 1, t + 7000, t + 60000, LIN_NIL, LIN_NIL, 0, 0);
		lin_tf_cuda_event(&pk, c + 1, 0, 1, 1, 3, i + 1);
		lin_tf_sync(&pk, c + 2, LIN_SYNC_STREAM_WAIT_EVENT, t + 6300, t + 6400, 1, 2, 3, i + 1);
		call(ep, c + 3, WORKER, t + 6500, t + 6600);
		kern(c + 3, 2, t + 60100, t + 61000, LIN_NIL, LIN_NIL, 0, 0);
	}
	return save(dir, "stress.lt");
}

/* A cause-truth file damaged one way (tests/explain/score.sh). */
static int cause_truth(const char *kind, const char *path)
{
	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	struct lin_tf_header h = { .format = LIN_CAUSE_TRUTH_FORMAT_NAME,
				   .writer = "t",
				   .host = "h",
				   .pid = 1,
				   .host_clock_source = "tsc",
				   .tsc_hz = 1e9,
				   .ext_kind = 5,
				   .backend = "none" };
	lin_tf_header(&pk, &h);
	lin_tf_launch_cause(&pk, LIN_REC_KERNEL, 1, LIN_TC_API_CALL, 0, 10, 20, 10, LIN_NIL);
	if (!strcmp(kind, "foreign-record"))
		lin_tf_truth(&pk, LIN_REC_KERNEL, 2, (const uint64_t[]){ 7 }, 1, LIN_NIL);
	else if (!strcmp(kind, "bad-cause"))
		lin_tf_launch_cause(&pk, LIN_REC_KERNEL, 2, LIN_TC_N, 0, 10, 20, 10, LIN_NIL);
	else if (!strcmp(kind, "one-candidate"))
		lin_tf_launch_cause(&pk, LIN_REC_KERNEL, 2, LIN_TC_AMBIGUOUS, 1u << LIN_TC_API_CALL,
				    10, 20, 10, LIN_NIL);
	else if (!strcmp(kind, "bad-interval"))
		lin_tf_launch_cause(&pk, LIN_REC_KERNEL, 2, LIN_TC_API_CALL, 0, 20, 10, 10, LIN_NIL);
	else if (!strcmp(kind, "empty")) {
		msgpack_sbuffer_destroy(&sb);
		msgpack_sbuffer_init(&sb);
		msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
		lin_tf_header(&pk, &h);
	} else {
		fprintf(stderr, "lin-explain-gen: no cause truth '%s'\n", kind);
		msgpack_sbuffer_destroy(&sb);
		return 64;
	}
	return write_buf(path);
}

/* Two api_call labels (keys @grid and 999998) for the process of trace @trace. */
static int cause_truth_for(const char *trace, uint64_t grid, const char *path)
{
	struct lin_reader *r = lin_reader_open(trace);
	struct lin_header th;
	if (!r || lin_reader_header(r, LIN_TRACE_FORMAT_NAME, &th) < 0) {
		fprintf(stderr, "lin-explain-gen: %s: %s\n", trace, r ? lin_reader_error(r) : "no memory");
		lin_reader_free(r);
		return 1;
	}
	lin_reader_free(r);
	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	struct lin_tf_header h = { .format = LIN_CAUSE_TRUTH_FORMAT_NAME,
				   .writer = "t",
				   .host = th.host,
				   .pid = th.pid,
				   .host_clock_source = "tsc",
				   .tsc_hz = 1e9,
				   .ext_kind = 5,
				   .backend = "none" };
	lin_tf_header(&pk, &h);
	lin_tf_launch_cause(&pk, LIN_REC_KERNEL, grid, LIN_TC_API_CALL, 0, LIN_NIL, LIN_NIL,
			    LIN_NIL, LIN_NIL);
	lin_tf_launch_cause(&pk, LIN_REC_KERNEL, 999998, LIN_TC_API_CALL, 0, LIN_NIL, LIN_NIL,
			    LIN_NIL, LIN_NIL);
	return write_buf(path);
}

int main(int argc, char **argv)
{
	if (argc == 5 && !strcmp(argv[1], "--cause-truth-for"))
		return cause_truth_for(argv[2], strtoull(argv[3], NULL, 10), argv[4]);
	if (argc == 4 && !strcmp(argv[1], "--cause-truth"))
		return cause_truth(argv[2], argv[3]);
	if (argc == 4 && !strcmp(argv[2], "--stress"))
		return stress(argv[1], strtoull(argv[3], NULL, 10));
	if (argc != 2) {
		fprintf(stderr, "usage: lin-explain-gen DIR [--stress N]\n");
		return 64;
	}
	const char *dir = argv[1];
	int rc = 0;

	begin();
	work(7, 70);
	handoff(70, 3000, 11000, 1);
	call(70, 10, WORKER, 12000, 12500);
	kern(10, 1, 20000, 40000, 12200, 13000, 0, 0);
	work(8, 80);
	call(80, 11, SUBMITTER, 14000, 14500);
	kern(11, 1, 40100, 41000, LIN_NIL, LIN_NIL, 0, 0);
	work(9, 90);
	lin_tf_cuda_event(&pk, 12, 0, 1, 1, 3, 77);
	lin_tf_sync(&pk, 13, LIN_SYNC_STREAM_WAIT_EVENT, 15000, 15100, 1, 2, 3, 77);
	handoff(90, 3500, 15200, 2);
	lin_tf_host_sched(&pk, WORKER, 15300, 15800, LIN_SCHED_PREEMPTED, LIN_NIL);
	call(90, 14, WORKER, 16000, 16400);
	kern(14, 2, 41050, 42000, LIN_NIL, LIN_NIL, 0, 0);
	rc |= save(dir, "ledger.lt");

	begin();
	work(7, 70);
	rc |= save(dir, "nogpu.lt");

	begin();
	work(7, 70);
	kern(10, 1, 20000, 21000, LIN_NIL, LIN_NIL, 0, 0);
	rc |= save(dir, "unjoined.lt");

	begin_clock(NULL);
	work(7, 70);
	call(70, 10, SUBMITTER, 12000, 12500);
	kern(10, 1, 20000, 21000, LIN_NIL, LIN_NIL, 0, 0);
	rc |= save(dir, "noclock.lt");

	begin();
	lin_tf_epoch_declare(&pk, 2000, SUBMITTER, 70, 1, NULL, 0, LIN_NIL, 0);
	call(70, 10, SUBMITTER, 12000, 12500);
	kern(10, 1, 20000, 21000, LIN_NIL, LIN_NIL, 0, 0);
	rc |= save(dir, "epochonly.lt");

	begin();
	work(7, 70);
	static const char nm[] = "k\n\nrequest 999 (file 0): 1 launches\x1b[2J\r\"q\"\\";
	lin_tf_string(&pk, 1, nm, sizeof(nm) - 1);
	call(70, 10, SUBMITTER, 12000, 12500);
	kern(10, 1, 20000, 21000, LIN_NIL, LIN_NIL, 0, 1);
	rc |= save(dir, "names.lt");

	begin();
	lin_tf_request_begin(&pk, 15000, SUBMITTER, 7, LIN_NIL, LIN_NIL, LIN_NIL);
	uint64_t req = 7;
	lin_tf_epoch_declare(&pk, 2000, SUBMITTER, 70, 1, &req, 1, LIN_NIL, 0);
	call(70, 10, SUBMITTER, 12000, 12500);
	kern(10, 1, 20000, 21000, LIN_NIL, LIN_NIL, 0, 0);
	rc |= save(dir, "order.lt");

	begin();
	uint64_t unbegun = 7;
	lin_tf_epoch_declare(&pk, 2000, SUBMITTER, 70, 1, &unbegun, 1, LIN_NIL, 0);
	call(70, 10, SUBMITTER, 12000, 12500);
	kern(10, 1, 20000, 21000, LIN_NIL, LIN_NIL, 0, 0);
	rc |= save(dir, "unbegun.lt");

	begin();
	lin_tf_request_begin(&pk, 900, SUBMITTER, 7, LIN_NIL, LIN_NIL, LIN_NIL);
	lin_tf_request_begin(&pk, 1000, SUBMITTER, 8, LIN_NIL, LIN_NIL, 7);
	uint64_t child = 8;
	lin_tf_epoch_declare(&pk, 2000, SUBMITTER, 80, 1, &child, 1, LIN_NIL, 0);
	call(80, 10, SUBMITTER, 12000, 12500);
	kern(10, 1, 20000, 21000, LIN_NIL, LIN_NIL, 0, 0);
	rc |= save(dir, "child.lt");
	return rc;
}
