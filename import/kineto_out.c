/* SPDX-License-Identifier: MIT */
/*
 * kineto_out.c - an imported trace's model written back as Kineto trace-event JSON
 * (lineage-validate --export-kineto with a Kineto or Nsight input; docs/validator.md,
 * "Kineto export"): ops as cpu_op with their External id, launches as cuda_runtime with
 * their correlation and External id, GPU records as kernel / gpu_memcpy / gpu_memset on
 * pid = device, tid = stream, and an ac2g flow from each joined launch to its GPU record.
 * What the model does not keep (other categories, arguments the joins do not use, the
 * original event order) is not written.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "imp.h"
#include "otlp_emit.h"

static void jstr(FILE *o, const char *s) { lin_oj_fstr(o, s, strlen(s)); }

static void us(FILE *o, const char *key, int64_t ns)
{
	uint64_t a = ns < 0 ? 0 - (uint64_t)ns : (uint64_t)ns;
	fprintf(o, ", \"%s\": %s%" PRIu64 ".%03d", key, ns < 0 ? "-" : "", a / 1000, (int)(a % 1000));
}

static void head(FILE *o, bool *first, const char *ph, const char *cat, const char *name,
		 uint64_t pid, uint64_t tid, int64_t ts)
{
	fprintf(o, "%s\n  {\"ph\": \"%s\", \"cat\": \"%s\", \"name\": ", *first ? "" : ",", ph, cat);
	*first = false;
	jstr(o, name);
	fprintf(o, ", \"pid\": %" PRIu64 ", \"tid\": %" PRIu64, pid, tid);
	us(o, "ts", ts);
}

int lin_imp_kineto_out(const struct lin_imp *m, const char *out_path)
{
	static const char *const cat[] = { [LIN_IMP_OP] = "cpu_op",
					   [LIN_IMP_LAUNCH] = "cuda_runtime",
					   [LIN_IMP_REQUEST] = "user_annotation",
					   [LIN_IMP_HANDOFF] = "user_annotation",
					   [LIN_IMP_KERNEL] = "kernel",
					   [LIN_IMP_MEMCPY] = "gpu_memcpy",
					   [LIN_IMP_MEMSET] = "gpu_memset" };
	FILE *o = fopen(out_path, "w");
	if (!o)
		return -1;
	bool first = true;
	fprintf(o, "{\n\"schemaVersion\": 1,\n\"distributedInfo\": {\"rank\": 0, \"world_size\": 1},\n"
		   "\"traceEvents\": [");
	for (size_t i = 0; i < m->n; i++) {
		const struct lin_imp_ev *e = &m->ev[i];
		const char *nm = e->name ? lin_imp_str(m, e->name) : NULL;
		bool gpu = e->kind >= LIN_IMP_KERNEL;
		head(o, &first, "X", cat[e->kind], nm ? nm : cat[e->kind], gpu ? e->dev : e->proc,
		     e->tid, e->ts);
		us(o, "dur", e->end > e->ts ? e->end - e->ts : 0);
		fprintf(o, ", \"args\": {\"External id\": %" PRIu64,
			(e->flags & LIN_IMP_HAS_EXT) ? e->ext : 0);
		if (e->flags & LIN_IMP_HAS_CORR)
			fprintf(o, ", \"correlation\": %" PRIu64, e->corr);
		if (gpu && !(e->flags & LIN_IMP_NO_STREAM))
			fprintf(o, ", \"device\": %u, \"stream\": %" PRIu64, (unsigned)e->dev, e->tid);
		fprintf(o, "}}");
		/* ac2g: the launch the join found -> this GPU record */
		const struct lin_imp_ev *l = gpu && e->link ? &m->ev[e->link - 1] : NULL;
		if (l && l->kind == LIN_IMP_LAUNCH && (e->flags & LIN_IMP_HAS_CORR)) {
			head(o, &first, "s", "ac2g", "ac2g", l->proc, l->tid, l->ts);
			fprintf(o, ", \"id\": %" PRIu64 "}", e->corr);
			head(o, &first, "f", "ac2g", "ac2g", e->dev, e->tid, e->ts);
			fprintf(o, ", \"id\": %" PRIu64 ", \"bp\": \"e\"}", e->corr);
		}
	}
	fprintf(o, "\n]\n}\n");
	int bad = ferror(o);
	if ((fclose(o) | bad) != 0) {
		if (!errno)
			errno = EIO;
		return -1;
	}
	return 0;
}
