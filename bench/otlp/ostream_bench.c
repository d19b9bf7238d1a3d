/* SPDX-License-Identifier: MIT */
/*
 * lin-bench-ostream - what the runtime's OTLP stream costs: a trace file is fed to the
 * stream (lineage/otlp_stream.c, the code the writer runs) in 64 KiB pieces with a tick
 * after each, JSON to /dev/null, and timed; in the same process, the same bytes are
 * walked record by record with the stream's decoder alone (mp.h), the floor any consumer
 * of the trace pays.
 *
 *   lin-bench-ostream TRACE [ROUNDS]
 *
 * Prints one SUMMARY line per measure (median of ROUNDS, default 5):
 *   SUMMARY bench=ostream_decode records=R ns_per_record=.. mrecords_per_s=..
 *   SUMMARY bench=ostream_stream records=R ns_per_record=.. spans=S ns_per_span=..
 *           json_mb_per_s=..
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mp.h"
#include "otlp_stream.h"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int skip(const uint8_t **p, const uint8_t *end)
{
	struct lin_mp_val v;
	int rc = lin_mp_read(p, end, &v);
	if (rc || (v.type != LIN_MP_ARRAY && v.type != LIN_MP_MAP))
		return rc;
	uint64_t n = v.type == LIN_MP_MAP ? 2ull * v.len : v.len;
	for (uint64_t i = 0; i < n; i++)
		if ((rc = skip(p, end)))
			return rc;
	return 0;
}

static size_t walk(const uint8_t *buf, size_t len)
{
	const uint8_t *p = buf, *end = buf + len;
	size_t n = 0;
	while (p < end && !skip(&p, end))
		n++;
	return n - 1; /* the header */
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: lin-bench-ostream TRACE [ROUNDS]\n");
		return 64;
	}
	int rounds = argc > 2 ? atoi(argv[2]) : 5;
	if (rounds < 1 || rounds > 100) {
		fprintf(stderr, "lin-bench-ostream: ROUNDS is 1..100\n");
		return 64;
	}
	FILE *f = fopen(argv[1], "rb");
	if (!f) {
		fprintf(stderr, "lin-bench-ostream: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	fseek(f, 0, SEEK_END);
	long sz = ftell(f);
	fseek(f, 0, SEEK_SET);
	uint8_t *buf = malloc(sz > 0 ? (size_t)sz : 1);
	if (!buf || fread(buf, 1, (size_t)sz, f) != (size_t)sz) {
		fprintf(stderr, "lin-bench-ostream: cannot read %s\n", argv[1]);
		return 1;
	}
	fclose(f);
	double dec[100], str[100];
	size_t records = 0;
	struct lin_ostream_stats st = { 0 };
	for (int r = 0; r < rounds; r++) {
		double t0 = now_s();
		records = walk(buf, (size_t)sz);
		dec[r] = now_s() - t0;
		struct lin_ostream *s;
		struct lin_ostream_opts o = { .path = "/dev/null" };
		if (lin_ostream_open(&o, &s)) {
			fprintf(stderr, "lin-bench-ostream: cannot open the stream\n");
			return 1;
		}
		t0 = now_s();
		for (size_t off = 0; off < (size_t)sz; off += 65536) {
			size_t n = (size_t)sz - off < 65536 ? (size_t)sz - off : 65536;
			lin_ostream_feed(s, buf + off, n);
			lin_ostream_tick(s, UINT64_MAX - 1, false);
		}
		lin_ostream_stats(s, &st);
		lin_ostream_close(s);
		str[r] = now_s() - t0;
	}
	qsort(dec, (size_t)rounds, sizeof(double), cmp);
	qsort(str, (size_t)rounds, sizeof(double), cmp);
	double d = dec[rounds / 2], t = str[rounds / 2];
	printf("SUMMARY bench=ostream_decode records=%zu ns_per_record=%.1f mrecords_per_s=%.2f\n",
	       records, d * 1e9 / (double)records, (double)records / d / 1e6);
	printf("SUMMARY bench=ostream_stream records=%zu ns_per_record=%.1f spans=%llu "
	       "ns_per_span=%.1f json_mb_per_s=%.1f stream_over_decode=%.1f\n",
	       records, t * 1e9 / (double)records, (unsigned long long)st.spans,
	       st.spans ? t * 1e9 / (double)st.spans : 0.0, (double)st.bytes / t / 1e6, t / d);
	free(buf);
	return 0;
}
