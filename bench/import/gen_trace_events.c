/* SPDX-License-Identifier: MIT */
/*
 * gen_trace_events.c - a large trace-event JSON file for the importer benchmark, made by
 * replicating the events of a real (Kineto) trace with fresh ids: copy k shifts every
 * correlation id, External id and flow id by k * S (S: one more than the largest id in
 * the source, the same for all three so an External id that equals its correlation id
 * still does) and every time by k * span (the source's time span plus 1 ms), so each copy
 * joins exactly as the source does and no id collides. One event per line, no spaces.
 *
 *   lin-bench-gen-trace-events SOURCE.json[.gz] OUT.json (--copies N | --bytes N[KMG])
 *
 * Prints the copies, events and bytes written. Data generated, never committed.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>
#include <zlib.h>

#include "imp.h"

struct gen {
	yajl_val events;
	int64_t span_ns, t0;
	uint64_t stride, k;
	FILE *out;
	uint64_t bytes, written_events;
};

static char *slurp(const char *path, size_t *n)
{
	gzFile f = gzopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 1 << 20, len = 0;
	char *buf = malloc(cap + 1);
	int r;
	while (buf && (r = gzread(f, buf + len, (unsigned)(cap - len))) > 0) {
		len += (size_t)r;
		if (len == cap) {
			char *p = realloc(buf, cap * 2 + 1);
			if (!p) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = p;
			cap *= 2;
		}
	}
	gzclose(f);
	if (buf) {
		buf[len] = 0;
		*n = len;
	}
	return buf;
}

static bool is_id_key(const char *k)
{
	return !strcmp(k, "correlation") || !strcmp(k, "External id") || !strcmp(k, "external id");
}

static yajl_val field(yajl_val obj, const char *key)
{
	if (!YAJL_IS_OBJECT(obj))
		return NULL;
	for (size_t i = 0; i < obj->u.object.len; i++)
		if (!strcmp(obj->u.object.keys[i], key))
			return obj->u.object.values[i];
	return NULL;
}

static bool as_ns(yajl_val v, int64_t *ns)
{
	return v && YAJL_IS_NUMBER(v) && lin_imp_us_to_ns(v->u.number.r, strlen(v->u.number.r), ns);
}

/* The stride of the ids and the time span of the source. */
static void measure(struct gen *g)
{
	uint64_t max_id = 0;
	int64_t lo = INT64_MAX, hi = INT64_MIN;
	for (size_t i = 0; i < g->events->u.array.len; i++) {
		yajl_val e = g->events->u.array.values[i], a = field(e, "args"), id = field(e, "id");
		int64_t ts, dur = 0;
		if (as_ns(field(e, "ts"), &ts)) {
			as_ns(field(e, "dur"), &dur);
			lo = ts < lo ? ts : lo;
			hi = ts + (dur > 0 ? dur : 0) > hi ? ts + (dur > 0 ? dur : 0) : hi;
		}
		if (id && YAJL_IS_INTEGER(id) && YAJL_GET_INTEGER(id) > 0 &&
		    (uint64_t)YAJL_GET_INTEGER(id) > max_id)
			max_id = (uint64_t)YAJL_GET_INTEGER(id);
		for (size_t j = 0; a && YAJL_IS_OBJECT(a) && j < a->u.object.len; j++) {
			yajl_val v = a->u.object.values[j];
			if (is_id_key(a->u.object.keys[j]) && YAJL_IS_INTEGER(v) &&
			    YAJL_GET_INTEGER(v) > 0 && (uint64_t)YAJL_GET_INTEGER(v) > max_id)
				max_id = (uint64_t)YAJL_GET_INTEGER(v);
		}
	}
	g->stride = max_id + 1;
	g->t0 = lo == INT64_MAX ? 0 : lo;
	g->span_ns = (hi > lo ? hi - lo : 0) + 1000000;
}

static void gen_time(yajl_gen y, int64_t ns)
{
	char buf[48];
	uint64_t a = ns < 0 ? 0 - (uint64_t)ns : (uint64_t)ns;
	int n = snprintf(buf, sizeof(buf), "%s%" PRIu64 ".%03u", ns < 0 ? "-" : "", a / 1000,
			 (unsigned)(a % 1000));
	yajl_gen_number(y, buf, (size_t)n);
}

static void gen_id(yajl_gen y, yajl_val v, uint64_t shift)
{
	if (!YAJL_IS_INTEGER(v) || YAJL_GET_INTEGER(v) <= 0) {
		yajl_gen_number(y, v->u.number.r, strlen(v->u.number.r));
		return;
	}
	char buf[32];
	int n = snprintf(buf, sizeof(buf), "%" PRIu64, (uint64_t)YAJL_GET_INTEGER(v) + shift);
	yajl_gen_number(y, buf, (size_t)n);
}

/* Emit @v; @ctx says what the value is: 1 an event's ts, 2 an id to shift. */
static void emit(struct gen *g, yajl_gen y, yajl_val v, int ctx)
{
	int64_t ns;
	if (ctx == 1 && as_ns(v, &ns)) {
		gen_time(y, ns + (int64_t)g->k * g->span_ns);
	} else if (ctx == 2 && YAJL_IS_NUMBER(v)) {
		gen_id(y, v, g->k * g->stride);
	} else if (YAJL_IS_STRING(v)) {
		yajl_gen_string(y, (const unsigned char *)v->u.string, strlen(v->u.string));
	} else if (YAJL_IS_NUMBER(v)) {
		yajl_gen_number(y, v->u.number.r, strlen(v->u.number.r));
	} else if (YAJL_IS_OBJECT(v)) {
		yajl_gen_map_open(y);
		for (size_t i = 0; i < v->u.object.len; i++) {
			const char *k = v->u.object.keys[i];
			yajl_gen_string(y, (const unsigned char *)k, strlen(k));
			emit(g, y, v->u.object.values[i], 0);
		}
		yajl_gen_map_close(y);
	} else if (YAJL_IS_ARRAY(v)) {
		yajl_gen_array_open(y);
		for (size_t i = 0; i < v->u.array.len; i++)
			emit(g, y, v->u.array.values[i], 0);
		yajl_gen_array_close(y);
	} else if (YAJL_IS_TRUE(v) || YAJL_IS_FALSE(v)) {
		yajl_gen_bool(y, YAJL_IS_TRUE(v));
	} else {
		yajl_gen_null(y);
	}
}

/* One event: ts shifted, args ids and flow ids shifted, the rest as it was. */
static void emit_event(struct gen *g, yajl_gen y, yajl_val e)
{
	if (!YAJL_IS_OBJECT(e)) {
		emit(g, y, e, 0);
		return;
	}
	yajl_gen_map_open(y);
	for (size_t i = 0; i < e->u.object.len; i++) {
		const char *k = e->u.object.keys[i];
		yajl_gen_string(y, (const unsigned char *)k, strlen(k));
		yajl_val v = e->u.object.values[i];
		if (!strcmp(k, "args") && YAJL_IS_OBJECT(v)) {
			/* the args map: its id keys shifted */
			yajl_gen_map_open(y);
			for (size_t j = 0; j < v->u.object.len; j++) {
				const char *ak = v->u.object.keys[j];
				yajl_gen_string(y, (const unsigned char *)ak, strlen(ak));
				emit(g, y, v->u.object.values[j], is_id_key(ak) ? 2 : 0);
			}
			yajl_gen_map_close(y);
		} else {
			emit(g, y, v, !strcmp(k, "ts") ? 1 : !strcmp(k, "id") ? 2 : 0);
		}
	}
	yajl_gen_map_close(y);
}

static int write_copy(struct gen *g, yajl_gen y)
{
	for (size_t i = 0; i < g->events->u.array.len; i++) {
		yajl_gen_clear(y);
		yajl_gen_reset(y, NULL);
		emit_event(g, y, g->events->u.array.values[i]);
		const unsigned char *buf;
		size_t n;
		yajl_gen_get_buf(y, &buf, &n);
		const char *sep = g->written_events ? ",\n" : "\n";
		if (fputs(sep, g->out) == EOF || fwrite(buf, 1, n, g->out) != n)
			return -1;
		g->bytes += n + strlen(sep);
		g->written_events++;
	}
	return 0;
}

static uint64_t parse_size(const char *s)
{
	char *end;
	uint64_t v = strtoull(s, &end, 10);
	switch (*end) {
	case 'G': v <<= 30; break;
	case 'M': v <<= 20; break;
	case 'K': v <<= 10; break;
	default: break;
	}
	return v;
}

int main(int argc, char **argv)
{
	if (argc != 5 || (strcmp(argv[3], "--copies") && strcmp(argv[3], "--bytes"))) {
		fprintf(stderr, "usage: %s SOURCE.json[.gz] OUT.json (--copies N | --bytes N[KMG])\n",
			argv[0]);
		return 64;
	}
	bool by_bytes = !strcmp(argv[3], "--bytes");
	uint64_t want = by_bytes ? parse_size(argv[4]) : strtoull(argv[4], NULL, 10);
	size_t n;
	char *text = slurp(argv[1], &n), err[256];
	if (!text) {
		fprintf(stderr, "%s: cannot read: %s\n", argv[1], strerror(errno));
		return 2;
	}
	yajl_val doc = yajl_tree_parse(text, err, sizeof(err));
	free(text);
	const char *path[] = { "traceEvents", NULL };
	yajl_val ev = doc ? (YAJL_IS_ARRAY(doc) ? doc : yajl_tree_get(doc, path, yajl_t_array)) : NULL;
	if (!ev) {
		fprintf(stderr, "%s: not a trace-event JSON file%s%s\n", argv[1], doc ? "" : ": ",
			doc ? "" : err);
		yajl_tree_free(doc);
		return 2;
	}
	struct gen g = { ev, 0, 0, 0, 0, fopen(argv[2], "w"), 0, 0 };
	yajl_gen y = yajl_gen_alloc(NULL);
	int rc = g.out && y ? 0 : -1;
	if (!rc) {
		setvbuf(g.out, NULL, _IOFBF, 1 << 20);
		measure(&g);
		rc = fputs("{\"schemaVersion\":1,\"traceEvents\":[", g.out) == EOF ? -1 : 0;
		for (g.k = 0; !rc && (by_bytes ? g.bytes < want : g.k < want); g.k++)
			rc = write_copy(&g, y);
		if (!rc && fputs("\n]}\n", g.out) == EOF)
			rc = -1;
	}
	if (g.out && fclose(g.out) != 0)
		rc = -1;
	if (y)
		yajl_gen_free(y);
	yajl_tree_free(doc);
	if (rc) {
		fprintf(stderr, "%s: cannot write: %s\n", argv[2], strerror(errno));
		return 2;
	}
	printf("copies=%" PRIu64 " events=%" PRIu64 " bytes=%" PRIu64 " id_stride=%" PRIu64
	       " span_ns=%" PRId64 "\n",
	       g.k, g.written_events, g.bytes, g.stride, g.span_ns);
	return 0;
}
