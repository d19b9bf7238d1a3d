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
#include <sys/syscall.h>
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
		lin_tf_truth(&pk, t->v[i].gpu_kind, t->v[i].key, t->v[i].req, t->v[i].n, LIN_NIL);
	int bad = ferror(f);
	if (fclose(f) != 0 || bad)
		return -EIO;
	return 0;
}

/* The header of a file describing this process (its host and pid, as the runtime's trace
 * header names them: lineage-validate and lineage-explain match files by both). */
static FILE *open_described(const char *path, const char *format, msgpack_packer *pk)
{
	FILE *f = fopen(path, "wb");
	if (!f)
		return NULL;
	char host[256] = "unknown";
	if (gethostname(host, sizeof(host)) != 0)
		snprintf(host, sizeof(host), "unknown");
	host[sizeof(host) - 1] = 0;
	msgpack_packer_init(pk, f, fwrite_cb);
	struct lin_tf_header h = {
		.format = format,
		.writer = "lineage-synth",
		.host = host,
		.pid = (uint64_t)getpid(),
		.host_clock_source = "clock_gettime",
		.ext_kind = 5,
		.backend = "none",
		.device_clock = "host",
	};
	lin_tf_header(pk, &h);
	return f;
}

static int close_described(FILE *f)
{
	int bad = ferror(f);
	if (fclose(f) != 0 || bad)
		return -EIO;
	return 0;
}

int synth_causes_write(const struct synth_causes *c, const char *path)
{
	msgpack_packer pk;
	FILE *f = open_described(path, LIN_CAUSE_TRUTH_FORMAT_NAME, &pk);
	if (!f)
		return -errno;
	for (size_t i = 0; i < c->n; i++) {
		const struct synth_cause *x = &c->v[i];
		lin_tf_launch_cause(&pk, x->kind, x->key, x->cause, x->alt, x->start, x->end,
				    x->mag, LIN_NIL);
	}
	return close_described(f);
}

/* What a scheduler collector (sched_switch tracing, say) would report of the workload's
 * threads: here, exactly the intervals the workload put a thread to sleep. */
int synth_offs_write(const struct synth_offs *o, const char *path)
{
	msgpack_packer pk;
	FILE *f = open_described(path, LIN_TRACE_FORMAT_NAME, &pk);
	if (!f)
		return -errno;
	uint64_t last = 0;
	/* No source string: string ids are the process's, and the runtime's trace holds them. */
	for (size_t i = 0; i < o->n; i++) {
		lin_tf_host_sched(&pk, o->v[i].tid, o->v[i].start, o->v[i].end, LIN_SCHED_BLOCKED,
				  LIN_NIL);
		last = o->v[i].end > last ? o->v[i].end : last;
	}
	lin_tf_trace_end(&pk, last, 0);
	return close_described(f);
}

void synth_cause(struct synth *sx, uint32_t kind, uint64_t key, uint32_t cause, uint32_t alt,
		 uint64_t start, uint64_t end, uint64_t mag)
{
	struct synth_causes *c = &sx->causes;
	pthread_mutex_lock(&sx->truth_mu);
	if (c->n == c->cap) {
		c->cap = c->cap ? c->cap * 2 : 64;
		c->v = realloc(c->v, c->cap * sizeof(*c->v));
		if (!c->v) {
			fprintf(stderr, "lineage-synth: out of memory for cause labels\n");
			exit(1);
		}
	}
	c->v[c->n++] = (struct synth_cause){
		.kind = kind, .key = key, .cause = cause, .alt = alt, .start = start, .end = end, .mag = mag
	};
	pthread_mutex_unlock(&sx->truth_mu);
}

void synth_off_cpu(struct synth *sx, uint64_t start, uint64_t end)
{
	struct synth_offs *o = &sx->offs;
	pthread_mutex_lock(&sx->truth_mu);
	if (o->n == o->cap) {
		o->cap = o->cap ? o->cap * 2 : 64;
		o->v = realloc(o->v, o->cap * sizeof(*o->v));
		if (!o->v) {
			fprintf(stderr, "lineage-synth: out of memory for off-CPU intervals\n");
			exit(1);
		}
	}
	o->v[o->n++] =
		(struct synth_off){ .tid = (uint64_t)syscall(SYS_gettid), .start = start, .end = end };
	pthread_mutex_unlock(&sx->truth_mu);
}

void synth_truth_free(struct synth_truth *t)
{
	free(t->v);
	memset(t, 0, sizeof(*t));
}
