/* SPDX-License-Identifier: MIT */
/*
 * truth.c - the ground-truth file: one label per GPU record the workload caused, from
 * its own bookkeeping (which task issued the call, which requests that task serves),
 * never from the trace. Format: docs/trace-format.md, "Truth files".
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "synth.h"
#include "tracefmt.h"

void synth_truth_add(struct synth_truth *t, uint32_t kind, uint64_t key, const uint64_t *req, uint32_t n)
{
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 256;
		struct synth_label *v = realloc(t->v, cap * sizeof(*v));
		if (!v) {
			fprintf(stderr, "lineage-synth: out of memory for truth labels\n");
			exit(1);
		}
		t->v = v;
		t->cap = cap;
	}
	struct synth_label *l = &t->v[t->n++];
	l->gpu_kind = kind;
	l->key = key;
	l->n = n;
	memcpy(l->req, req, n * sizeof(*req));
}

static int fwrite_cb(void *data, const char *buf, size_t len)
{
	return fwrite(buf, 1, len, data) == len ? 0 : -1;
}

int synth_truth_write(const struct synth_truth *t, const char *path)
{
	FILE *f = fopen(path, "wb");
	if (!f)
		return -errno;
	char host[256] = "unknown";
	if (gethostname(host, sizeof(host)) != 0)
		snprintf(host, sizeof(host), "unknown");
	host[sizeof(host) - 1] = 0;
	msgpack_packer pk;
	msgpack_packer_init(&pk, f, fwrite_cb);
	struct lin_tf_header h = {
		.format = LIN_TRUTH_FORMAT_NAME,
		.writer = "lineage-synth",
		.host = host,
		.pid = (uint64_t)getpid(),
		.host_clock_source = "clock_gettime",
		.ext_kind = 5,
		.backend = "custom",
	};
	lin_tf_header(&pk, &h);
	for (size_t i = 0; i < t->n; i++)
		lin_tf_truth(&pk, t->v[i].gpu_kind, t->v[i].key, t->v[i].req, t->v[i].n, LIN_TF_NIL);
	int bad = ferror(f);
	if (fclose(f) != 0 || bad)
		return -EIO;
	return 0;
}

void synth_truth_free(struct synth_truth *t)
{
	free(t->v);
	memset(t, 0, sizeof(*t));
}
