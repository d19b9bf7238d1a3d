/* SPDX-License-Identifier: MIT */
/*
 * gen_fleet.c - a two-host synthetic run for the OTLP export test, and the counts the
 * export of it must have, from this program's own bookkeeping.
 *
 * host-a (pid 100): request 1 "frontend", epoch 2 handed from thread 10 to 11, one kernel;
 *   requests 3 and 4 served by one batched epoch 5 (fan-in), one kernel.
 * host-b (pid 200): request 10 "infer" begun from the traceparent host-a sent for epoch 2
 *   (a request_link record; with "legacy", the format-1.0 name "w3c:<traceparent> infer"
 *   instead), epoch 11 handed from 20 to 21 with one kernel, a graph
 *   whose node was created under epoch 11 replayed by replay epoch 12 (one kernel), a
 *   batched epoch 13 serving requests 10 and 14 (one memcpy), one kernel with an API
 *   record but no external correlation (lost), one dropped record (loss).
 * Usage: lin-otlp-gen-fleet OUTDIR [legacy]; writes host-a.lt, host-b.lt, expected.json.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <msgpack.h>

#include "lineage/w3c.h"
#include "tracefmt.h"

#define EXT 5u
#define DEV0 1700000000000000000ull /* device (CLOCK_REALTIME) ns */

static msgpack_sbuffer sb;
static msgpack_packer pk;
static struct {
	unsigned spans, links, events, gpus, remote, joined, cross;
} want;

static uint64_t cur_pid; /* the header's: API records carry their own process's pid */

static void start(const char *host, uint64_t pid)
{
	cur_pid = pid;
	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	struct lin_tf_header h = { LIN_TRACE_FORMAT_NAME,
				   "liblineage 0.1.0",
				   host,
				   pid,
				   1000,
				   "clock_gettime",
				   0,
				   EXT,
				   "cupti",
				   "ok" };
	lin_tf_header(&pk, &h);
	lin_tf_clock(&pk, 1000, DEV0 + 1000, LIN_NIL); /* error unknown: no time checks */
	want.spans++;                                  /* the process span */
}

static void save(const char *dir, const char *name)
{
	lin_tf_trace_end(&pk, 90000, 0);
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "wb");
	if (!f || fwrite(sb.data, 1, sb.size, f) != sb.size || fclose(f)) {
		perror(path);
		exit(1);
	}
	msgpack_sbuffer_destroy(&sb);
}

static void request(uint64_t id, uint64_t t, uint64_t sid)
{
	lin_tf_request_begin(&pk, t, 10, id, LIN_NIL, sid, LIN_NIL);
	want.spans++;
}

static void epoch(uint64_t id, uint64_t t, const uint64_t *reqs, size_t n, uint64_t parent)
{
	lin_tf_epoch_declare(&pk, t, 10, id, 1, reqs, n, parent, 0);
	want.spans++;
	want.links += (unsigned)(n - 1);
}

/* token captured on @from, adopted and closed on @to */
static void handoff(uint32_t from, uint32_t to, uint64_t ep, uint64_t seq, uint64_t t)
{
	lin_tf_token_capture(&pk, t, from, LIN_TARGET_EPOCH, ep, 1, seq);
	lin_tf_token_adopt(&pk, t + 10, to, LIN_TARGET_EPOCH, ep, 1, from, seq, 1);
	lin_tf_scope_close(&pk, t + 500, to, LIN_TARGET_EPOCH, ep, 1);
	want.spans++;
}

static void api_cbid(uint32_t cbid, uint64_t corr, uint32_t tid)
{
	struct lin_tf_api a = {
		LIN_API_RUNTIME,   cbid, corr, DEV0 + 3000 + corr * 100, DEV0 + 3010 + corr * 100,
		(uint32_t)cur_pid, tid,  0
	};
	lin_tf_api(&pk, &a);
}

static void api(uint64_t corr, uint32_t tid) { api_cbid(211, corr, tid); /* cudaLaunchKernel */ }

static void kernel(uint64_t corr, uint64_t node, bool cross)
{
	struct lin_tf_kernel k = { .correlation = corr,
				   .start_dev = DEV0 + 3050 + corr * 100,
				   .end_dev = DEV0 + 3090 + corr * 100,
				   .device = 1,
				   .context = 1,
				   .stream = 7,
				   .grid_id = corr,
				   .graph_id = node ? 9 : 0,
				   .graph_node_id = node,
				   .name_sid = 1 };
	lin_tf_kernel(&pk, &k);
	want.spans++;
	want.gpus++;
	want.cross += cross;
}

/* launch on @tid in @ep: launch record, ext correlation, API record, kernel */
static void launch(uint32_t tid, uint64_t ep, uint64_t corr, bool cross)
{
	lin_tf_launch(&pk, 2000 + corr, tid, ep, 1, ep, 2, 3, LIN_NIL, 1);
	lin_tf_launch_end(&pk, 2000 + corr, tid, 1);
	lin_tf_ext_correlation(&pk, EXT, ep, corr);
	api(corr, tid);
	kernel(corr, 0, cross);
}

int main(int argc, char **argv)
{
	if (argc < 2 || argc > 3 || (argc == 3 && strcmp(argv[2], "legacy"))) {
		fprintf(stderr, "usage: lin-otlp-gen-fleet OUTDIR [legacy]\n");
		return 64;
	}
	/* host-a */
	start("host-a", 100);
	lin_tf_string(&pk, 1, "gemm", 4);
	lin_tf_string(&pk, 2, "frontend", 8);
	lin_tf_string(&pk, 3, "cudaLaunchKernel", 16);
	uint64_t r1 = 1, r34[2] = { 3, 4 };
	request(1, 1500, 2);
	epoch(2, 1600, &r1, 1, LIN_NIL);
	handoff(10, 11, 2, 1, 1700);
	launch(11, 2, 1, false);
	request(3, 1800, 0);
	request(4, 1810, 0);
	epoch(5, 1900, r34, 2, LIN_NIL);
	launch(10, 5, 2, false);
	lin_tf_epoch_retire(&pk, 5000, 10, 2, 1);
	lin_tf_request_end(&pk, 6000, 10, 1);
	save(argv[1], "host-a.lt");

	/* what host-a sends for epoch 2: traceparent of request 1's trace, parent = epoch 2 */
	uint64_t ka = lin_w3c_proc_key("host-a", 100);
	struct lin_w3c_traceparent tp = { .flags = 1 };
	lin_w3c_trace_id(ka, 1, tp.trace_id);
	lin_w3c_put64(tp.parent_id, lin_w3c_span_id(ka, 2));
	bool legacy = argc > 2 && !strcmp(argv[2], "legacy");
	char name[128] = LIN_W3C_NAME_PREFIX;
	if (lin_w3c_traceparent_format(&tp, name + 4, LIN_W3C_TRACEPARENT_MAX))
		return 1;
	strcat(name, " infer");
	if (!legacy)
		strcpy(name, "infer");

	/* host-b */
	start("host-b", 200);
	lin_tf_string(&pk, 1, "attention", 9);
	lin_tf_string(&pk, 2, name, strlen(name));
	lin_tf_string(&pk, 3, "cudaLaunchKernel", 16);
	uint64_t r10 = 10, r10_14[2] = { 10, 14 };
	request(10, 1500, 2);
	if (!legacy)
		lin_tf_request_link(&pk, 1500, 10, 10, lin_w3c_get64(tp.trace_id),
				    lin_w3c_get64(tp.trace_id + 8), lin_w3c_get64(tp.parent_id),
				    tp.flags, NULL);
	want.remote++;
	want.joined++;
	epoch(11, 1600, &r10, 1, LIN_NIL);
	handoff(20, 21, 11, 1, 1700);
	launch(21, 11, 1, true);
	/* graph: node 50 created under epoch 11, cloned to 51, replayed as epoch 12 */
	lin_tf_graph_node(&pk, 1650, 21, 9, 50, 11, 1, LIN_NODE_ORIGIN_CAPTURE);
	lin_tf_graph_exec(&pk, 1660, 21, 9, 8);
	lin_tf_graph_node_clone(&pk, 50, 51, 9, 8);
	lin_tf_graph_launch(&pk, 2100, 21, 8, 12, 1, 11, 1, LIN_NIL);
	epoch(12, 2100, &r10, 1, 11);
	lin_tf_ext_correlation(&pk, EXT, 12, 2);
	api_cbid(311, 2, 21); /* cudaGraphLaunch */
	kernel(2, 51, true);
	/* fan-in: epoch 13 serves requests 10 and 14; a memcpy */
	request(14, 1510, 0);
	epoch(13, 2200, r10_14, 2, LIN_NIL);
	lin_tf_launch(&pk, 2300, 10, 13, 1, 13, 0, 3, LIN_NIL, 1);
	lin_tf_launch_end(&pk, 2300, 10, 1);
	lin_tf_ext_correlation(&pk, EXT, 13, 4);
	api_cbid(41, 4, 10); /* cudaMemcpyAsync */
	struct lin_tf_memop mc = { 4, DEV0 + 3500, DEV0 + 3600, 1, 1, 7, 4096, 1, 0, 0 };
	lin_tf_memcpy(&pk, &mc);
	want.spans++;
	want.gpus++;
	want.cross++;
	/* lost: an API record and kernel, no external correlation */
	api(3, 10);
	kernel(3, 0, false);
	want.events++;
	/* loss: CUPTI dropped 5 records */
	lin_tf_dropped(&pk, 2, 5, LIN_NIL, NULL);
	want.events++;
	lin_tf_epoch_retire(&pk, 5000, 10, 11, 1);
	lin_tf_request_end(&pk, 6000, 10, 10);
	save(argv[1], "host-b.lt");

	char path[4096];
	snprintf(path, sizeof(path), "%s/expected.json", argv[1]);
	FILE *f = fopen(path, "w");
	if (!f)
		return 1;
	fprintf(f,
		"{\"resources\":2,\"spans\":%u,\"links\":%u,\"events\":%u,\"gpu\":%u,"
		"\"remote_requests\":%u,\"remote_joined\":%u,\"cross_process_gpu\":%u,"
		"\"remote_parent\":\"%016llx\",\"remote_trace\":\"%016llx%016llx\"}\n",
		want.spans, want.links, want.events, want.gpus, want.remote, want.joined, want.cross,
		(unsigned long long)lin_w3c_span_id(ka, 2), (unsigned long long)ka, 1ull);
	return fclose(f) ? 1 : 0;
}
