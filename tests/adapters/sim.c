/* SPDX-License-Identifier: MIT */
/* sim.c - see sim.h. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <lineage.h>

#include "sim.h"
#include "trace_read.h"
#include "tracefmt.h"

#define MAX_REQS 4

struct push_ent {
	uint64_t corr, epoch;
	uint32_t tid;
	int seen; /* matched to a launch record */
};

struct truth_ent {
	uint64_t corr;
	uint64_t reqs[MAX_REQS];
	size_t n;
};

struct sim {
	lin_runtime *rt;
	struct membuf out;
	pthread_mutex_t mu;
	struct push_ent *push;
	size_t n_push, cap_push;
	struct truth_ent *truth;
	size_t n_truth, cap_truth;
	atomic_uint_fast64_t next_corr;
};

/* The calling thread's external-correlation stack, as CUPTI keeps it. */
static _Thread_local struct {
	uint64_t corr[16], id[16];
	int depth;
} tl;

static void *grow(void *p, size_t *cap, size_t n, size_t size)
{
	if (n < *cap)
		return p;
	*cap = *cap ? *cap * 2 : 256;
	p = realloc(p, *cap * size);
	if (!p) {
		fprintf(stderr, "sim: out of memory\n");
		exit(1);
	}
	return p;
}

static int sim_push(void *ctx, uint32_t kind, uint64_t id)
{
	struct sim *s = ctx;
	(void)kind;
	if (tl.depth == 16)
		return -ENOSPC;
	uint64_t corr = atomic_fetch_add(&s->next_corr, 1);
	tl.corr[tl.depth] = corr;
	tl.id[tl.depth++] = id;
	pthread_mutex_lock(&s->mu);
	s->push = grow(s->push, &s->cap_push, s->n_push, sizeof(*s->push));
	s->push[s->n_push++] = (struct push_ent){ corr, id, (uint32_t)gettid(), 0 };
	pthread_mutex_unlock(&s->mu);
	return 0;
}

static int sim_pop(void *ctx, uint32_t kind, uint64_t *id)
{
	(void)ctx;
	(void)kind;
	if (!tl.depth)
		return -ENOENT;
	tl.depth--;
	if (id)
		*id = tl.id[tl.depth];
	return 0;
}

struct sim *sim_open(void)
{
	struct sim *s = calloc(1, sizeof(*s));
	if (!s)
		exit(1);
	pthread_mutex_init(&s->mu, NULL);
	atomic_init(&s->next_corr, 1);
	struct lin_backend_ops ops = {
		.sz = sizeof(ops), .name = "sim-cupti", .push = sim_push, .pop = sim_pop, .ctx = s
	};
	struct lin_runtime_opts o = { .sz = sizeof(o),
				      .trace_write = membuf_write,
				      .trace_user = &s->out,
				      .backend = LIN_BACKEND_CUSTOM,
				      .backend_ops = &ops };
	int err = lin_runtime_create(&o, &s->rt);
	if (err) {
		fprintf(stderr, "lin_runtime_create: %s\n", lin_strerror(err));
		exit(1);
	}
	return s;
}

lin_runtime *sim_rt(struct sim *s) { return s->rt; }

uint64_t sim_correlation(void) { return tl.depth ? tl.corr[tl.depth - 1] : 0; }

void sim_truth(struct sim *s, uint64_t corr, const uint64_t *reqs, size_t n)
{
	struct truth_ent t = { .corr = corr, .n = n < MAX_REQS ? n : MAX_REQS };
	memcpy(t.reqs, reqs, t.n * sizeof(*reqs));
	pthread_mutex_lock(&s->mu);
	s->truth = grow(s->truth, &s->cap_truth, s->n_truth, sizeof(*s->truth));
	s->truth[s->n_truth++] = t;
	pthread_mutex_unlock(&s->mu);
}

/* ------------------------------------------------------------------ check 1: the trace */

static int fails;
#define FAIL(...) (fprintf(stderr, "FAIL: " __VA_ARGS__), fputc('\n', stderr), fails++)

static const struct truth_ent *truth_of(const struct sim *s, uint64_t corr)
{
	for (size_t i = 0; i < s->n_truth; i++)
		if (s->truth[i].corr == corr)
			return &s->truth[i];
	return NULL;
}

static const msgpack_object *declared(const struct trace *t, uint64_t epoch)
{
	for (size_t i = 0; i < t->n; i++)
		if (rec_type(&t->rec[i]) == LIN_REC_EPOCH_DECLARE && rec_u(&t->rec[i], 3) == epoch)
			return rec_f(&t->rec[i], 5);
	return NULL;
}

static int same_set(const msgpack_object *arr, const struct truth_ent *te)
{
	if (arr->type != MSGPACK_OBJECT_ARRAY || arr->via.array.size != te->n)
		return 0;
	for (size_t i = 0; i < te->n; i++) {
		int found = 0;
		for (uint32_t j = 0; j < arr->via.array.size; j++)
			found |= arr->via.array.ptr[j].via.u64 == te->reqs[i];
		if (!found)
			return 0;
	}
	return 1;
}

static void check_trace(struct sim *s, const struct trace *t, size_t launches)
{
	size_t n_launch = trace_count(t, LIN_REC_LAUNCH);
	if (n_launch != launches || s->n_push != launches || s->n_truth != launches)
		FAIL("launch records %zu, pushes %zu, truth labels %zu; the workload made %zu",
		     n_launch, s->n_push, s->n_truth, launches);
	if (trace_count(t, LIN_REC_MISUSE))
		FAIL("%zu misuse records", trace_count(t, LIN_REC_MISUSE));
	if (trace_count(t, LIN_REC_DROPPED))
		FAIL("events were dropped");
	for (size_t i = 0; i < t->n; i++) {
		const msgpack_object *r = &t->rec[i];
		if (rec_type(r) != LIN_REC_LAUNCH)
			continue;
		uint64_t tid = rec_u(r, 2), ep = rec_u(r, 3);
		if (rec_nil(r, 3) || rec_u(r, 5) != ep) {
			FAIL("launch record %zu: epoch %s, ext_id differs or nil", i,
			     rec_nil(r, 3) ? "nil" : "set");
			continue;
		}
		struct push_ent *p = NULL;
		for (size_t k = 0; k < s->n_push && !p; k++)
			if (!s->push[k].seen && s->push[k].epoch == ep && s->push[k].tid == tid)
				p = &s->push[k];
		if (!p) {
			FAIL("launch record %zu (tid %llu, epoch %llu) matches no launch call", i,
			     (unsigned long long)tid, (unsigned long long)ep);
			continue;
		}
		p->seen = 1;
		const struct truth_ent *te = truth_of(s, p->corr);
		const msgpack_object *reqs = declared(t, ep);
		if (!te || !reqs || !same_set(reqs, te))
			FAIL("launch record %zu: epoch %llu does not serve the submitting request%s",
			     i, (unsigned long long)ep, te ? "" : " (no truth label)");
	}
}

/* ------------------------------------------------------------------ check 2: the validator */

static void pack_gpu(struct sim *s, msgpack_packer *pk, uint32_t pid)
{
	for (size_t i = 0; i < s->n_push; i++) {
		const struct push_ent *p = &s->push[i];
		uint64_t t0 = 1000000 + p->corr * 1000;
		struct lin_tf_api a = { .domain = LIN_API_RUNTIME,
					.cbid = 211 /* cudaLaunchKernel */,
					.correlation = p->corr,
					.start_dev = t0,
					.end_dev = t0 + 10,
					.pid = pid,
					.tid = p->tid };
		lin_tf_api(pk, &a);
		lin_tf_ext_correlation(pk, 5, p->epoch, p->corr);
		struct lin_tf_kernel k = { .correlation = p->corr,
					   .start_dev = t0 + 100,
					   .end_dev = t0 + 200,
					   .device = 0,
					   .context = 1,
					   .stream = 7,
					   .grid_id = p->corr };
		lin_tf_kernel(pk, &k);
	}
}

/* Offset of the trace's closing trace_end record (the GPU records go before it), or @n. */
static size_t trace_end_offset(const char *data, size_t n)
{
	msgpack_zone z;
	msgpack_zone_init(&z, 4096);
	size_t off = 0, last = n;
	int last_is_end = 0;
	while (off < n) {
		size_t start = off;
		msgpack_object o;
		msgpack_unpack_return r = msgpack_unpack(data, n, &off, &z, &o);
		if (r != MSGPACK_UNPACK_SUCCESS && r != MSGPACK_UNPACK_EXTRA_BYTES)
			break;
		last = start;
		last_is_end = o.type == MSGPACK_OBJECT_ARRAY && o.via.array.size > 0 &&
			      o.via.array.ptr[0].via.u64 == LIN_REC_TRACE_END;
	}
	msgpack_zone_destroy(&z);
	return last_is_end ? last : n;
}

/* The runtime's records, then @ins inserted before its trace_end record. */
static int write_trace(const char *path, const char *rt_data, size_t n, const void *ins, size_t n_ins)
{
	size_t cut = trace_end_offset(rt_data, n);
	FILE *f = fopen(path, "wb");
	if (!f || fwrite(rt_data, 1, cut, f) != cut || (n_ins && fwrite(ins, 1, n_ins, f) != n_ins) ||
	    (n > cut && fwrite(rt_data + cut, 1, n - cut, f) != n - cut) || fclose(f)) {
		perror(path);
		return -1;
	}
	return 0;
}

static long json_int(const char *json, const char *key)
{
	char pat[64];
	snprintf(pat, sizeof(pat), "\"%s\":", key);
	const char *p = strstr(json, pat);
	return p ? strtol(p + strlen(pat), NULL, 10) : -1;
}

static void run_validator(struct sim *s, const char *validator, const char *trace_path,
			  const char *truth_path, size_t launches)
{
	char cmd[8192], out[1 << 16];
	snprintf(cmd, sizeof(cmd), "'%s' --json --max-findings 5 --expect '%s' '%s'", validator,
		 truth_path, trace_path);
	FILE *p = popen(cmd, "r");
	if (!p) {
		FAIL("cannot run %s", validator);
		return;
	}
	size_t n = fread(out, 1, sizeof(out) - 1, p);
	out[n] = 0;
	int st = pclose(p);
	int code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	printf("lineage-validate: exit %d: %s\n", code, out);
	long want = (long)launches;
	if (code != 0 || json_int(out, "exit_code") != 0)
		FAIL("lineage-validate exit %d", code);
	if (json_int(out, "gpu_records") != want || json_int(out, "joined_observed") != want ||
	    json_int(out, "matched") != want || json_int(out, "truth_records") != want ||
	    json_int(out, "launches") != want)
		FAIL("expected %ld kernels observed and matched, %ld launches", want, want);
	if (json_int(out, "lost") != 0 || json_int(out, "incorrect") != 0 ||
	    json_int(out, "ambiguous") != 0 || json_int(out, "structural") != 0)
		FAIL("lost, incorrect, ambiguous or structural findings");
	(void)s;
}

int sim_finish(struct sim *s, const char *validator, const char *name, size_t launches)
{
	lin_runtime_free(s->rt);
	s->rt = NULL;
	fails = 0;
	struct trace t;
	if (trace_load_mem(&t, s->out.p, s->out.n) || t.truncated) {
		FAIL("the runtime's trace does not parse");
		return 1;
	}
	check_trace(s, &t, launches);
	if (trace_end_offset(s->out.p, s->out.n) == s->out.n)
		FAIL("the runtime's trace does not end with a trace_end record");

	const msgpack_object *host = trace_hdr(&t, "host"), *pid = trace_hdr(&t, "pid");
	char hostname[256] = "";
	if (host && host->type == MSGPACK_OBJECT_STR && host->via.str.size < sizeof(hostname))
		memcpy(hostname, host->via.str.ptr, host->via.str.size);
	uint64_t pidv = pid ? pid->via.u64 : 0;

	msgpack_sbuffer gpu, truth;
	msgpack_packer pk;
	msgpack_sbuffer_init(&gpu);
	msgpack_packer_init(&pk, &gpu, msgpack_sbuffer_write);
	pack_gpu(s, &pk, (uint32_t)pidv);
	msgpack_sbuffer_init(&truth);
	msgpack_packer_init(&pk, &truth, msgpack_sbuffer_write);
	struct lin_tf_header h = { LIN_TRUTH_FORMAT_NAME,
				   "adapter-test",
				   hostname,
				   pidv,
				   0,
				   "clock_gettime",
				   0,
				   5,
				   "custom",
				   NULL };
	lin_tf_header(&pk, &h);
	for (size_t i = 0; i < s->n_truth; i++)
		lin_tf_truth(&pk, LIN_REC_KERNEL, s->truth[i].corr, s->truth[i].reqs, s->truth[i].n,
			     LIN_NIL);

	char trace_path[512], truth_path[512];
	snprintf(trace_path, sizeof(trace_path), "%s.lintrace", name);
	snprintf(truth_path, sizeof(truth_path), "%s.truth", name);
	if (write_trace(trace_path, s->out.p, s->out.n, gpu.data, gpu.size) ||
	    write_trace(truth_path, truth.data, truth.size, NULL, 0))
		fails++;
	else
		run_validator(s, validator, trace_path, truth_path, launches);

	msgpack_sbuffer_destroy(&gpu);
	msgpack_sbuffer_destroy(&truth);
	trace_free(&t);
	free(s->out.p);
	free(s->push);
	free(s->truth);
	pthread_mutex_destroy(&s->mu);
	free(s);
	printf("%s: %s (%zu launches)\n", name, fails ? "FAILED" : "ok", launches);
	return fails ? 1 : 0;
}
