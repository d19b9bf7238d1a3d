/* SPDX-License-Identifier: MIT */
/*
 * perfetto.c - write the imported model as Chrome/Perfetto trace-event JSON: one slice
 * per op (or request and handoff), launch and GPU record, and flow arrows op -> launch ->
 * GPU record (request -> handoff -> launch -> GPU record for lineage traces). Perfetto
 * flows cannot fork, so every edge has its own flow id (docs/importers.md).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "imp.h"

#define GPU_PID_BASE 0x40000000ull      /* device tracks: pid = base + device */

static void jstr(FILE *o, const char *s)
{
	fputc('"', o);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(o, "\\%c", *p);
		else if (*p < 0x20 || *p >= 0x7f)
			fprintf(o, "\\u%04x", *p);
		else
			fputc(*p, o);
	}
	fputc('"', o);
}

static void ts(FILE *o, const char *key, int64_t ns)
{
	int64_t a = ns < 0 ? -ns : ns;
	fprintf(o, ",\"%s\":%s%" PRId64 ".%03d", key, ns < 0 ? "-" : "", a / 1000, (int)(a % 1000));
}

static uint64_t pid_of(const struct lin_imp_ev *e)
{
	return e->kind >= LIN_IMP_KERNEL ? GPU_PID_BASE + e->dev : e->proc;
}

static void slice(FILE *o, const struct lin_imp *m, const struct lin_imp_ev *e, bool *first)
{
	static const char *const cat[] = { "op", "launch", "request", "handoff", "kernel", "memcpy",
					   "memset" };
	fprintf(o, "%s\n{\"ph\":\"X\",\"cat\":\"%s\",\"name\":", *first ? "" : ",", cat[e->kind]);
	*first = false;
	jstr(o, e->name ? lin_imp_str(m, e->name) : cat[e->kind]);
	fprintf(o, ",\"pid\":%" PRIu64 ",\"tid\":%" PRIu64, pid_of(e), e->tid);
	ts(o, "ts", e->ts);
	ts(o, "dur", e->end - e->ts);
	fputs(",\"args\":{", o);
	if (e->flags & LIN_IMP_HAS_CORR)
		fprintf(o, "\"correlation\":%" PRIu64 "%s", e->corr,
			(e->flags & LIN_IMP_HAS_EXT) ? "," : "");
	if (e->flags & LIN_IMP_HAS_EXT)
		fprintf(o, "\"external_id\":%" PRIu64, e->ext);
	fputs("}}", o);
}

static void flow(FILE *o, uint64_t id, const char *name, const struct lin_imp_ev *from,
		 int64_t from_ts, const struct lin_imp_ev *to)
{
	fprintf(o, ",\n{\"ph\":\"s\",\"cat\":\"lineage\",\"name\":\"%s\",\"id\":%" PRIu64
		",\"pid\":%" PRIu64 ",\"tid\":%" PRIu64, name, id, pid_of(from), from->tid);
	ts(o, "ts", from_ts);
	fprintf(o, "},\n{\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"lineage\",\"name\":\"%s\",\"id\":%"
		PRIu64 ",\"pid\":%" PRIu64 ",\"tid\":%" PRIu64, name, id, pid_of(to), to->tid);
	ts(o, "ts", to->ts);
	fputc('}', o);
}

int lin_imp_perfetto(const struct lin_imp *m, const char *out_path)
{
	FILE *o = fopen(out_path, "w");
	if (!o)
		return -1;
	bool first = true;
	fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[", o);
	for (size_t i = 0; i < m->n; i++)
		slice(o, m, &m->ev[i], &first);
	static const char *const edge[] = { "op", "launch", "request", "handoff", "gpu", "gpu",
					    "gpu" };
	for (size_t i = 0; i < m->n; i++) {
		const struct lin_imp_ev *e = &m->ev[i];
		if (!e->link)
			continue;
		/* One flow per edge, id = index of the edge's target + 1 (each event has at most
		 * one incoming edge): from the source slice's start to the target's start. */
		const struct lin_imp_ev *src = &m->ev[e->link - 1];
		char name[32];
		snprintf(name, sizeof(name), "%s->%s", edge[src->kind], edge[e->kind]);
		flow(o, i + 1, name, src, src->ts, e);
	}
	for (unsigned d = 0; d < 65536; d++) {          /* name the device tracks in use */
		bool used = false;
		for (size_t i = 0; i < m->n && !used; i++)
			used = m->ev[i].kind >= LIN_IMP_KERNEL && m->ev[i].dev == d;
		if (used)
			fprintf(o, ",\n{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%" PRIu64
				",\"tid\":0,\"args\":{\"name\":\"GPU %u\"}}", (uint64_t)(GPU_PID_BASE + d), d);
		if (d > 64)
			break;
	}
	fputs("\n]}\n", o);
	int err = ferror(o);
	if (fclose(o) != 0 || err) {
		errno = errno ? errno : EIO;
		return -1;
	}
	return 0;
}
