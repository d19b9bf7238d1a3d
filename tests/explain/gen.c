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
 */
#include <stdio.h>
#include <string.h>

#include "xgen.h"

static int save(const char *dir, const char *name)
{
	lin_tf_trace_end(&pk, 1000000, 0);
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "wb");
	int rc = f && fwrite(sb.data, 1, sb.size, f) == sb.size ? 0 : 1;
	if (f && fclose(f))
		rc = 1;
	msgpack_sbuffer_destroy(&sb);
	if (rc)
		fprintf(stderr, "lin-explain-gen: cannot write %s\n", path);
	return rc;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: lin-explain-gen DIR\n");
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
	kern(11, 1, 40100, 41000, NIL, NIL, 0, 0);
	work(9, 90);
	lin_tf_cuda_event(&pk, 12, 0, 1, 1, 3, 77);
	lin_tf_sync(&pk, 13, LIN_SYNC_STREAM_WAIT_EVENT, 15000, 15100, 1, 2, 3, 77);
	handoff(90, 3500, 15200, 2);
	lin_tf_host_sched(&pk, WORKER, 15300, 15800, LIN_SCHED_PREEMPTED, NIL);
	call(90, 14, WORKER, 16000, 16400);
	kern(14, 2, 41050, 42000, NIL, NIL, 0, 0);
	rc |= save(dir, "ledger.lt");

	begin();
	work(7, 70);
	rc |= save(dir, "nogpu.lt");

	begin();
	work(7, 70);
	kern(10, 1, 20000, 21000, NIL, NIL, 0, 0);
	rc |= save(dir, "unjoined.lt");

	begin_clock(NULL);
	work(7, 70);
	call(70, 10, SUBMITTER, 12000, 12500);
	kern(10, 1, 20000, 21000, NIL, NIL, 0, 0);
	rc |= save(dir, "noclock.lt");
	return rc;
}
