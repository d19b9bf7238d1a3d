/* SPDX-License-Identifier: MIT */
/*
 * canon.c - print a lineage trace or truth file in a canonical text form, one record per
 * line, with what legitimately varies between two runs of the same lineage-synth seed
 * replaced by '*': host and device timestamps, thread and process ids, the host name and
 * TSC rate in the header, and memcpy/memset truth keys (they are device timestamps).
 * String ids are replaced by their text (the writer numbers strings in encoding order).
 * Clock records are printed once: lineage-synth writes one before every chunk the writer
 * hands over, and how many chunks a run makes depends on when the writer thread wakes.
 * Sorting the output (sort) makes two runs comparable with cmp.
 *
 * Usage: lin-synth-canon FILE. Exit 0, or 1 with a message (unreadable or malformed file).
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <msgpack.h>

#define MAX_SID 4096

static char *sid_text[MAX_SID];

/* Fields (1-based, after the type) that vary per record type; 0 ends the list. */
static const int *varying(uint64_t type)
{
	static const int host_tid[] = { 1, 2, 0 }, adopt[] = { 1, 2, 6, 0 },
			 api[] = { 4, 5, 6, 7, 0 }, dev[] = { 2, 3, 0 }, dropped[] = { 3, 0 },
			 clock[] = { 1, 2, 3, 0 }, graph_node[] = { 1, 2, 0 }, sid[] = { 1, 0 },
			 trace_end[] = { 1, 0 }, none[] = { 0 },
			 kernel[] = { 2, 3, 12, 13, 0 }, /* start, end, queued, submitted */
		sync[] = { 3, 4, 0 }, sched[] = { 1, 2, 3, 0 };
	switch (type) {
	case 1:
	case 2:
	case 3:
	case 4:
	case 5:
	case 6:
	case 8:
	case 9:
	case 10:
	case 13:
	case 28:
	case 29:
	case 32: return host_tid;
	case 7: return adopt;
	case 11: return sid;
	case 33: return trace_end;
	case 21: return api;
	case 22: return kernel;
	case 23:
	case 24:
	case 25: return dev;
	case 26: return graph_node;
	case 30: return dropped;
	case 31: return clock;
	case 35: return sync;
	case 36: return sched;
	default: return none;
	}
}

/* Fields holding string ids. */
static bool is_sid(uint64_t type, int field)
{
	return (type == 1 && field == 5) || (type == 3 && field == 7) ||
	       (type == 10 && (field == 6 || field == 7)) || (type == 22 && field == 10);
}

static void print_obj(const msgpack_object *o) { msgpack_object_print(stdout, *o); }

static void print_record(const msgpack_object_array *a)
{
	uint64_t type = a->ptr[0].via.u64;
	const int *var = varying(type);
	printf("[%" PRIu64, type);
	for (uint32_t i = 1; i < a->size; i++) {
		bool v = false;
		for (const int *p = var; *p; p++)
			v |= *p == (int)i;
		/* truth: memcpy/memset keys are device timestamps */
		v |= type == 40 && i == 2 && a->ptr[1].via.u64 != 22;
		printf(",");
		if (v)
			printf("*");
		else if (is_sid(type, (int)i) && a->ptr[i].type == MSGPACK_OBJECT_POSITIVE_INTEGER &&
			 a->ptr[i].via.u64 < MAX_SID && sid_text[a->ptr[i].via.u64])
			printf("\"%s\"", sid_text[a->ptr[i].via.u64]);
		else
			print_obj(&a->ptr[i]);
	}
	printf("]\n");
}

static void print_header(const msgpack_object_map *m)
{
	printf("{");
	for (uint32_t i = 0; i < m->size; i++) {
		const msgpack_object_str *k = &m->ptr[i].key.via.str;
		bool v = (k->size == 3 && !memcmp(k->ptr, "pid", 3)) ||
			 (k->size == 4 && !memcmp(k->ptr, "host", 4)) ||
			 (k->size == 6 && !memcmp(k->ptr, "tsc_hz", 6)) ||
			 (k->size == 13 && !memcmp(k->ptr, "start_host_ns", 13)) ||
			 (k->size == 13 && !memcmp(k->ptr, "start_unix_ns", 13));
		printf("%s%.*s:", i ? "," : "", (int)k->size, k->ptr);
		if (v)
			printf("*");
		else
			print_obj(&m->ptr[i].val);
	}
	printf("}\n");
}

/* First pass: string records. */
static void collect_strings(const char *data, size_t len)
{
	size_t off = 0;
	msgpack_unpacked u;
	msgpack_unpacked_init(&u);
	while (msgpack_unpack_next(&u, data, len, &off) == MSGPACK_UNPACK_SUCCESS) {
		const msgpack_object *o = &u.data;
		if (o->type != MSGPACK_OBJECT_ARRAY || o->via.array.size < 3 ||
		    o->via.array.ptr[0].via.u64 != 11)
			continue;
		uint64_t sid = o->via.array.ptr[1].via.u64;
		const msgpack_object *t = &o->via.array.ptr[2];
		if (sid < MAX_SID && t->type == MSGPACK_OBJECT_STR && !sid_text[sid])
			sid_text[sid] = strndup(t->via.str.ptr, t->via.str.size);
	}
	msgpack_unpacked_destroy(&u);
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *buf = n >= 0 ? malloc((size_t)n + 1) : NULL;
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	*len = (size_t)n;
	return buf;
}

int main(int argc, char **argv)
{
	size_t len = 0, off = 0;
	char *data = argc == 2 ? slurp(argv[1], &len) : NULL;
	if (!data) {
		fprintf(stderr, "usage: lin-synth-canon FILE (a readable trace or truth file)\n");
		return 1;
	}
	collect_strings(data, len);
	msgpack_unpacked u;
	msgpack_unpacked_init(&u);
	int rc = 0;
	bool clock_seen = false;
	while (off < len) {
		if (msgpack_unpack_next(&u, data, len, &off) != MSGPACK_UNPACK_SUCCESS) {
			fprintf(stderr, "lin-synth-canon: %s: malformed at byte %zu\n", argv[1], off);
			rc = 1;
			break;
		}
		if (u.data.type == MSGPACK_OBJECT_MAP)
			print_header(&u.data.via.map);
		else if (u.data.type == MSGPACK_OBJECT_ARRAY && u.data.via.array.size > 0) {
			bool clock = u.data.via.array.ptr[0].type == MSGPACK_OBJECT_POSITIVE_INTEGER &&
				     u.data.via.array.ptr[0].via.u64 == 31;
			if (!clock || !clock_seen)
				print_record(&u.data.via.array);
			clock_seen |= clock;
		}
	}
	msgpack_unpacked_destroy(&u);
	free(data);
	for (size_t i = 0; i < MAX_SID; i++)
		free(sid_text[i]);
	return rc;
}
