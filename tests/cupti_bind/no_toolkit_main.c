/* SPDX-License-Identifier: MIT */
/*
 * no_toolkit_main.c - a program linked with liblineage alone (no libcupti, no toolkit
 * directory on its RUNPATH) that asks for the CUPTI backend, records one request, epoch and
 * scope, and writes the trace to PATH. check-no-toolkit.sh runs it where libcupti cannot be
 * found: it must start, trace host-side lineage, and name the failed load in the trace
 * header's cupti status (docs/cupti.md, "Loading libcupti").
 *
 * Usage: test_cupti_no_toolkit PATH. Prints "cupti: <status>". Exit 0 when the runtime was
 * created, the trace holds a header with a cupti status and was written; 1 otherwise.
 */
#include <stdio.h>

#include "tr_helpers.h"
#include "lineage/runtime.h"

static struct tr_trace tr; /* large: not on the stack */

int main(int argc, char **argv)
{
	struct tr_sink s;
	struct lin_runtime_opts o = { .sz = sizeof(o), .backend = LIN_BACKEND_CUPTI };
	struct lin_epoch_opts eo = { .sz = sizeof(eo) };
	lin_runtime *rt = NULL;
	lin_scope sc;
	uint64_t req = 0, ep = 0;
	char status[512] = "";

	if (argc != 2) {
		fprintf(stderr, "usage: %s PATH\n", argv[0]);
		return 64;
	}
	tr_sink_init(&s);
	o.trace_write = tr_sink_write;
	o.trace_user = &s;
	if (lin_runtime_create(&o, &rt) != 0) {
		fprintf(stderr, "FAIL: lin_runtime_create\n");
		return 1;
	}
	eo.requests = &req;
	eo.n_requests = 1;
	if (lin_request_begin(rt, NULL, &req) != 0 || lin_epoch_declare(rt, &eo, &ep) != 0 ||
	    lin_scope_enter(rt, ep, &sc) != 0 || lin_scope_exit(rt, &sc) != 0) {
		fprintf(stderr, "FAIL: host-side lineage\n");
		return 1;
	}
	lin_runtime_free(rt);
	tr_load(&tr, s.data, s.len);
	if (!tr_header_str(&tr, "cupti", status, sizeof(status))) {
		fprintf(stderr, "FAIL: no cupti status in the trace header (%zu bytes)\n", s.len);
		return 1;
	}
	printf("cupti: %s\n", status);
	FILE *f = fopen(argv[1], "wb");
	if (!f || fwrite(s.data, 1, s.len, f) != s.len || fclose(f) != 0) {
		fprintf(stderr, "FAIL: writing %s\n", argv[1]);
		return 1;
	}
	tr_sink_fini(&s);
	return 0;
}
