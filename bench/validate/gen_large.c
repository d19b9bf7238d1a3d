/* SPDX-License-Identifier: MIT */
/*
 * gen_large.c - writes a large, realistic lineage trace for the validator benchmark.
 *
 * Usage: lin-bench-validate-gen OUT NRECORDS
 * Mix per request: request_begin, epoch_declare, token_capture (submitter), token_adopt
 * (one of 8 workers), 8 launches each with launch, launch_end, ext_correlation, api and
 * kernel (every 8th a memcpy), scope_close, epoch_retire, request_end: 47 records. CUPTI records are
 * written one request late, as activity buffers arrive after the launches.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <msgpack.h>

#include "tracefmt.h"

#define BUFSZ (1u << 20)

static char wbuf[BUFSZ];
static size_t wlen;
static FILE *out;

static int write_cb(void *data, const char *buf, size_t len)
{
	(void)data;
	if (wlen + len > BUFSZ) {
		if (fwrite(wbuf, 1, wlen, out) != wlen)
			return -1;
		wlen = 0;
	}
	memcpy(wbuf + wlen, buf, len);
	wlen += len;
	return 0;
}

struct pending_gpu {
	uint64_t epoch, corr, t;
	uint32_t tid;
	int memcpy;
};

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: lin-bench-validate-gen OUT NRECORDS\n");
		return 64;
	}
	out = fopen(argv[1], "wb");
	if (!out) {
		perror(argv[1]);
		return 1;
	}
	uint64_t want = strtoull(argv[2], NULL, 10), n = 0;
	msgpack_packer pk;
	msgpack_packer_init(&pk, NULL, write_cb);
	struct lin_tf_header h = {
		LIN_TRACE_FORMAT_NAME, "lin-bench-validate-gen", "bench-host", 777, 1000, "tsc", 2.5e9, 5, "cupti", "ok"
	};
	lin_tf_header(&pk, &h);
	lin_tf_string(&pk, 1, "gemm_kernel", 11);
	lin_tf_string(&pk, 2, "cudaLaunchKernel", 16);
	n += 2;
	struct pending_gpu prev[8];
	int nprev = 0;
	uint64_t id = 1, corr = 1, t = 10000, seq = 0;
	while (n < want) {
		uint64_t req = id++, ep = id++;
		uint32_t worker = 2000 + (uint32_t)(req % 8);
		lin_tf_request_begin(&pk, t++, 1000, req, LIN_NIL, 0, LIN_NIL);
		lin_tf_epoch_declare(&pk, t++, 1000, ep, 1, &req, 1, LIN_NIL, 0);
		lin_tf_token_capture(&pk, t++, 1000, LIN_TARGET_EPOCH, ep, 1, ++seq);
		lin_tf_token_adopt(&pk, t++, worker, LIN_TARGET_EPOCH, ep, 1, 1000, seq, 1);
		n += 4;
		for (int i = 0; i < nprev; i++) { /* last request's CUPTI records */
			struct pending_gpu *g = &prev[i];
			struct lin_tf_api a = {
				1, g->memcpy ? 41 : 211, g->corr, g->t, g->t + 500, 777, g->tid, 0
			};
			lin_tf_ext_correlation(&pk, 5, g->epoch, g->corr);
			lin_tf_api(&pk, &a);
			if (g->memcpy) {
				struct lin_tf_memop m = { g->corr, g->t + 900, g->t + 1900, 0, 1,
							  7,       1 << 20,    1,           0, 0 };
				lin_tf_memcpy(&pk, &m);
			} else {
				struct lin_tf_kernel k = {
					g->corr, g->t + 900, g->t + 5000, 0,    1, 7, g->corr, 0, 0,
					1,       g->t + 600, g->t + 700,  false
				};
				lin_tf_kernel(&pk, &k);
			}
			n += 3;
		}
		nprev = 0;
		for (int i = 0; i < 8; i++) {
			lin_tf_launch(&pk, t++, worker, ep, 1, ep, 1, 2, LIN_NIL, 1);
			lin_tf_launch_end(&pk, t++, worker, 1);
			prev[nprev++] =
				(struct pending_gpu){ ep, corr++, 1000000 + t * 3, worker, i == 7 };
			n += 2;
		}
		lin_tf_scope_close(&pk, t++, worker, LIN_TARGET_EPOCH, ep, 1);
		lin_tf_epoch_retire(&pk, t++, worker, ep, 1);
		lin_tf_request_end(&pk, t++, 1000, req);
		n += 3;
	}
	for (int i = 0; i < nprev; i++) {
		struct pending_gpu *g = &prev[i];
		struct lin_tf_api a = { 1, 211, g->corr, g->t, g->t + 500, 777, g->tid, 0 };
		lin_tf_ext_correlation(&pk, 5, g->epoch, g->corr);
		lin_tf_api(&pk, &a);
		struct lin_tf_kernel k = { g->corr, g->t + 900, g->t + 5000, 0, 1, 7,    g->corr,
					   0,       0,          1,           0, 0, false };
		lin_tf_kernel(&pk, &k);
		n += 3;
	}
	lin_tf_trace_end(&pk, t, 0);
	n++;
	if (fwrite(wbuf, 1, wlen, out) != wlen || fclose(out) != 0) {
		perror(argv[1]);
		return 1;
	}
	printf("%llu\n", (unsigned long long)n);
	return 0;
}
