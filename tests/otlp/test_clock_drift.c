/* SPDX-License-Identifier: MIT */
/*
 * test_clock_drift.c - a long run with a drifting device clock: every reader that places
 * device times on the host clock puts the GPU records where the validator does.
 *
 * The trace: a device clock (CUPTI's, CLOCK_REALTIME-like) running 200 ppm fast over 10 s,
 * a clock pair every second (each read within 2 us: its width), a kernel every 100 ms
 * joined to one request's epoch, and one more kernel 0.5 s after the last pair. Its byte
 * order is the live binding's: each second's pair comes just before that second's CUPTI
 * records (a pair is read when a buffer completes, after the records in it). Through the
 * first pair alone the kernels drift 2 ms off by the end; through the clock map every
 * reader agrees with the validator to within the pair's error:
 *   - lineage-validate --export-otlp (lin_otlp_export): GPU span start, Unix time;
 *   - the runtime's OTLP stream (otlp/otlp_stream.c fed the trace bytes second by second),
 *     also when each pair comes a tick after the records it brackets (the stream then
 *     extrapolates from the latest pair: within the rate-error bound of the validator's
 *     placement);
 *   - lineage-validate --export-perfetto (lin_imp_lineage_perfetto): GPU slice ts;
 *   - lineage-explain (the ledger's kernel_start mark);
 *   - and without a Unix anchor in the header, the export's host spans go onto the device
 *     clock through the same map, inverted.
 * The largest offsets are printed (stderr) for the record. Mapped through the first pair
 * alone (before the clock map) the export, the stream and the Perfetto export were
 * 2,000,000 ns off at 10.5 s, and the epoch's retire 2,119,000 ns.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <msgpack.h>

#include "explain.h"
#include "export/otlp.h"
#include "imp.h"
#include "lin_test.h"
#include "lineage/trace_format.h"
#include "otlp_stream.h"
#include "reader.h"
#include "tracefmt.h"
#include "join.h"

#define TID 7
#define SEC 1000000000ull
#define H0 (5 * SEC)                    /* start_host_ns */
#define U0 1700000000000000000ull       /* start_unix_ns */
#define UNIX_OFF (U0 - H0)              /* host -> Unix */
#define WIDTH 2000ull                   /* each pair read within 2 us */
#define NPAIRS 11                       /* at 0, 1, ..., 10 s */
#define PER_SEC 10                      /* kernels per second */
#define NK ((NPAIRS - 1) * PER_SEC + 1) /* and one after the last pair */
#define EXTRA_WIDEN 251000ull           /* the last one's widening: 0.5 s (device) at 500 ppm */

struct kern {
	uint64_t corr, host, dev, dev_end; /* host: its true host start */
};

static struct kern ks[NK];

/* The device clock: CLOCK_REALTIME-like, 200 ppm fast (1 ns in 5000) from H0. */
static uint64_t dev_at(uint64_t h) { return U0 + 5000 + (h - H0) + (h - H0) / 5000; }

static void pair(msgpack_packer *pk, int k)
{
	uint64_t h = H0 + (uint64_t)k * SEC;
	lin_tf_clock(pk, h, dev_at(h + WIDTH / 2), h + WIDTH);
}

/* The host records of kernel @i (a launch bracket around its API call). */
static void host_side(msgpack_packer *pk, int i)
{
	uint64_t t = ks[i].host;
	lin_tf_launch(pk, t - 10000, TID, 2, 1, 2, 0, 0, LIN_NIL, 1);
	lin_tf_launch_end(pk, t - 1000, TID, 1);
}

/* Its CUPTI records: ext correlation, API call, kernel. */
static void cupti_side(msgpack_packer *pk, int i)
{
	uint64_t t = ks[i].host;
	lin_tf_ext_correlation(pk, 5, 2, ks[i].corr);
	struct lin_tf_api a = { 1, 211, ks[i].corr, dev_at(t - 8000), dev_at(t - 3000), 1, TID, 0 };
	lin_tf_api(pk, &a);
	struct lin_tf_kernel kr = {
		ks[i].corr, ks[i].dev, ks[i].dev_end, 0, 1, 3, 100 + ks[i].corr, 0, 0, 0,
		0,          0,         false
	};
	lin_tf_kernel(pk, &kr);
}

/* The trace, and where each second ends in it (cut[k]: after second k's records). With
 * @late_pairs each pair comes after the records of the second it ends, in the next
 * second's bytes (the stream reads it a tick later). */
/* The header says no start_unix_ns (a trace from before format 1.1): the OTLP export then
 * puts host times on the device clock, through the map's inverse. */
static bool no_unix;

static void gen(msgpack_sbuffer *sb, bool late_pairs, size_t cut[NPAIRS + 1])
{
	msgpack_packer pkr, *pk = &pkr;
	msgpack_sbuffer_init(sb);
	msgpack_packer_init(pk, sb, msgpack_sbuffer_write);
	struct lin_tf_header h = { .format = LIN_TRACE_FORMAT_NAME,
				   .writer = "t",
				   .host = "drift",
				   .pid = 1,
				   .start_host_ns = H0,
				   .host_clock_source = "clock_gettime",
				   .ext_kind = 5,
				   .backend = "cupti",
				   .cupti = "ok",
				   .start_unix_ns = no_unix ? 0 : U0 };
	lin_tf_header(pk, &h);
	for (int i = 0; i < NK; i++) {
		uint64_t t = i < NK - 1 ? H0 + (uint64_t)i * (SEC / PER_SEC) + SEC / PER_SEC / 2
					: H0 + (NPAIRS - 1) * SEC + SEC / 2;
		ks[i] = (struct kern){ 1 + (uint64_t)i, t, dev_at(t), dev_at(t + 100000) };
	}
	uint64_t req = 1;
	lin_tf_request_begin(pk, H0 + 100, TID, req, LIN_NIL, 0, LIN_NIL);
	lin_tf_epoch_declare(pk, H0 + 200, TID, 2, 1, &req, 1, LIN_NIL, 0);
	pair(pk, 0);
	cut[0] = sb->size;
	for (int k = 1; k <= NPAIRS; k++) {
		int lo = (k - 1) * PER_SEC, hi = k < NPAIRS ? k * PER_SEC : NK;
		if (late_pairs && k > 1)
			pair(pk, k - 1); /* in the next second's bytes: read at a later tick */
		for (int i = lo; i < hi; i++)
			host_side(pk, i);
		if (k < NPAIRS && !late_pairs)
			pair(pk, k);
		for (int i = lo; i < hi; i++)
			cupti_side(pk, i);
		if (k == NPAIRS) {
			uint64_t end = H0 + (NPAIRS - 1) * SEC + SEC * 6 / 10;
			lin_tf_epoch_retire(pk, end, TID, 2, 1);
			lin_tf_request_end(pk, end + 100, TID, req);
			lin_tf_trace_end(pk, end + 200, 0);
		}
		cut[k] = sb->size;
	}
}

static char dir[64];

static void path(char *out, size_t n, const char *name) { snprintf(out, n, "%s/%s", dir, name); }

static void write_file(const char *p, const void *data, size_t n)
{
	FILE *f = fopen(p, "wb");
	cr_assert_not_null(f, "%s", p);
	cr_assert_eq(fwrite(data, 1, n, f), n);
	cr_assert_eq(fclose(f), 0);
}

static char *slurp(const char *p)
{
	FILE *f = fopen(p, "rb");
	cr_assert_not_null(f, "%s", p);
	cr_assert_eq(fseek(f, 0, SEEK_END), 0);
	long n = ftell(f);
	cr_assert_geq(n, 0);
	rewind(f);
	char *b = malloc((size_t)n + 1);
	cr_assert_not_null(b);
	cr_assert_eq(fread(b, 1, (size_t)n, f), (size_t)n);
	b[n] = 0;
	fclose(f);
	return b;
}

static int index_of(uint64_t corr)
{
	cr_assert(corr >= 1 && corr <= NK, "correlation %" PRIu64, corr);
	return (int)(corr - 1);
}

/* The validator's placement of each kernel's start, and its error bound (host ns). */
static uint64_t vhost[NK], verr[NK];

static void validator_places(const char *trace)
{
	struct lin_joiner_opts vo = { 0 };
	struct lin_joiner *v = lin_joiner_create(&vo);
	cr_assert_not_null(v);
	cr_assert_eq(lin_joiner_add_file(v, trace), 0);
	lin_joiner_finish(v);
	for (int i = 0; i < NK; i++) {
		cr_assert(lin_joiner_dev_to_host(v, 0, ks[i].dev, &vhost[i], &verr[i]));
		uint64_t off = vhost[i] > ks[i].host ? vhost[i] - ks[i].host : ks[i].host - vhost[i];
		/* Against the truth: the pair's width, and beyond the last pair its widening. */
		cr_assert_leq(off, verr[i],
			      "kernel %d: validator %" PRIu64 " truth %" PRIu64 " bound %" PRIu64,
			      i, vhost[i], ks[i].host, verr[i]);
		cr_assert_leq(verr[i], i < NK - 1 ? WIDTH : WIDTH + EXTRA_WIDEN);
	}
	lin_joiner_free(v);
}

/*
 * Every kernel's time in @got (host ns; ~0: not seen) is the validator's, give or take
 * @slack(i) ns. Print the largest offset under @what.
 */
static void agrees(const char *what, const uint64_t *got, uint64_t slack_in, uint64_t slack_after)
{
	uint64_t worst = 0;
	int at = -1;
	for (int i = 0; i < NK; i++) {
		cr_assert_neq(got[i], UINT64_MAX, "%s: kernel %d (correlation %d) not found", what,
			      i, i + 1);
		uint64_t off = got[i] > vhost[i] ? got[i] - vhost[i] : vhost[i] - got[i];
		if (off >= worst) {
			worst = off;
			at = i;
		}
	}
	fprintf(stderr,
		"clock drift: %-28s largest offset from the validator %8" PRIu64
		" ns (kernel at %.2f s)\n",
		what, worst, (double)(ks[at].host - H0) / 1e9);
	for (int i = 0; i < NK; i++) {
		uint64_t off = got[i] > vhost[i] ? got[i] - vhost[i] : vhost[i] - got[i];
		uint64_t slack = i < NK - 1 ? slack_in : slack_after;
		cr_assert_leq(off, slack,
			      "%s: kernel %d at %.2f s: %" PRIu64 ", validator %" PRIu64
			      " (%" PRIu64 " ns off, bound %" PRIu64 ")",
			      what, i, (double)(ks[i].host - H0) / 1e9, got[i], vhost[i], off, slack);
	}
}

/* GPU spans of OTLP/JSON text: correlation id -> startTimeUnixNano, as host ns. */
static void otlp_starts(const char *json, uint64_t *got)
{
	static const char st[] = "\"startTimeUnixNano\":\"",
			  cid[] = "\"lineage.cuda.correlation_id\",\"value\":{\"intValue\":\"";
	for (int i = 0; i < NK; i++)
		got[i] = UINT64_MAX;
	for (const char *p = strstr(json, st); p; p = strstr(p, st)) {
		p += sizeof(st) - 1;
		uint64_t t = strtoull(p, NULL, 10);
		const char *next = strstr(p, st), *c = strstr(p, cid);
		if (!c || (next && c > next))
			continue; /* not a GPU span */
		got[index_of(strtoull(c + sizeof(cid) - 1, NULL, 10))] = t - UNIX_OFF;
	}
}

static void setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/lin-drift-XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
}

static void teardown(void)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	cr_assert_eq(system(cmd), 0);
}

static const char *trace_file(bool late_pairs, size_t cut[NPAIRS + 1], msgpack_sbuffer *sb)
{
	static char p[128];
	gen(sb, late_pairs, cut);
	path(p, sizeof(p), late_pairs ? "late.lt" : "run.lt");
	write_file(p, sb->data, sb->size);
	validator_places(p);
	return p;
}

TestSuite(clock_drift, .init = setup, .fini = teardown);

Test(clock_drift, the_otlp_export_places_gpu_spans_where_the_validator_does)
{
	msgpack_sbuffer sb;
	size_t cut[NPAIRS + 1];
	const char *trace = trace_file(false, cut, &sb);
	msgpack_sbuffer_destroy(&sb);
	char out[128], err[256];
	path(out, sizeof(out), "export.json");
	struct lin_otlp_stats st;
	cr_assert_eq(lin_otlp_export(&trace, 1, out, &st, err, sizeof(err)), 0, "%s", err);
	char *json = slurp(out);
	uint64_t got[NK];
	otlp_starts(json, got);
	agrees("--export-otlp", got, WIDTH, WIDTH + EXTRA_WIDEN);
	free(json);
}

/* Feed the stream the trace second by second (each second's bytes, then a tick at its
 * end), as the runtime does while it runs. */
static void stream_of(const msgpack_sbuffer *sb, const size_t cut[NPAIRS + 1], uint64_t *got)
{
	char out[128];
	path(out, sizeof(out), "stream.json");
	struct lin_ostream_opts o = { .path = out, .unix_offset_ns = 42 };
	struct lin_ostream *s;
	cr_assert_eq(lin_ostream_open(&o, &s), 0);
	size_t at = 0;
	for (int k = 0; k <= NPAIRS; k++) {
		lin_ostream_feed(s, sb->data + at, cut[k] - at);
		at = cut[k];
		lin_ostream_tick(s, H0 + (uint64_t)k * SEC, true);
	}
	lin_ostream_tick(s, UINT64_MAX, true);
	struct lin_ostream_stats st;
	lin_ostream_stats(s, &st);
	cr_assert_eq(st.failed, 0);
	cr_assert_eq(st.gpu_joined, NK, "every kernel joined in the stream");
	lin_ostream_close(s);
	char *json = slurp(out);
	otlp_starts(json, got);
	free(json);
}

Test(clock_drift, the_otlp_stream_places_gpu_spans_where_the_validator_does)
{
	msgpack_sbuffer sb;
	size_t cut[NPAIRS + 1];
	trace_file(false, cut, &sb);
	uint64_t got[NK];
	stream_of(&sb, cut, got);
	msgpack_sbuffer_destroy(&sb);
	/* Each second's pair came before its records: interpolated, as the validator does. */
	agrees("OTLP stream", got, WIDTH, WIDTH + EXTRA_WIDEN);
}

Test(clock_drift, with_pairs_after_their_records_the_stream_extrapolates_within_the_bound)
{
	msgpack_sbuffer sb;
	size_t cut[NPAIRS + 1];
	trace_file(true, cut, &sb);
	uint64_t got[NK];
	stream_of(&sb, cut, got);
	msgpack_sbuffer_destroy(&sb);
	/* Each record is written before the pair after it is read: the latest pair's offset,
	 * at most 1 s from it, so within its widening (1 s at 500 ppm) of the validator's
	 * interpolated placement. */
	agrees("OTLP stream, pairs after", got, WIDTH + SEC / 2000, WIDTH + EXTRA_WIDEN);
}

/* Perfetto slices: "name":"correlation N" ... "ts":US.NNN (host clock). */
Test(clock_drift, the_perfetto_export_places_gpu_slices_where_the_validator_does)
{
	msgpack_sbuffer sb;
	size_t cut[NPAIRS + 1];
	const char *trace = trace_file(false, cut, &sb);
	msgpack_sbuffer_destroy(&sb);
	char out[128], err[256];
	path(out, sizeof(out), "perfetto.json");
	cr_assert_eq(lin_imp_lineage_perfetto(trace, out, err, sizeof(err)), 0, "%s", err);
	char *json = slurp(out);
	uint64_t got[NK];
	for (int i = 0; i < NK; i++)
		got[i] = UINT64_MAX;
	static const char nm[] = "\"cat\":\"kernel\",\"name\":\"correlation ";
	int links = 0;
	for (const char *p = strstr(json, nm); p; p = strstr(p, nm)) {
		p += sizeof(nm) - 1;
		uint64_t corr = strtoull(p, NULL, 10);
		const char *t = strstr(p, "\"ts\":");
		cr_assert_not_null(t);
		char *dot;
		uint64_t us = strtoull(t + 5, &dot, 10);
		cr_assert_eq(*dot, '.');
		got[index_of(corr)] = us * 1000 + strtoull(dot + 1, NULL, 10);
	}
	for (const char *p = strstr(json, "\"name\":\"launch->gpu\""); p;
	     p = strstr(p + 1, "\"name\":\"launch->gpu\""))
		links++;
	free(json);
	agrees("--export-perfetto", got, WIDTH, WIDTH + EXTRA_WIDEN);
	cr_assert_eq(links, 2 * NK, "every kernel's arrow from its launch (start and end events)");
}

Test(clock_drift, the_explain_ledger_marks_kernel_starts_where_the_validator_does)
{
	msgpack_sbuffer sb;
	size_t cut[NPAIRS + 1];
	const char *trace = trace_file(false, cut, &sb);
	msgpack_sbuffer_destroy(&sb);
	struct lin_xopts xo = { .slow_factor = 1.5, .min_samples = 5, .keep_all = true };
	struct lin_explain *x = lin_explain_create(&xo);
	cr_assert_not_null(x);
	struct lin_joiner_opts vo = { 0 };
	vo.tool = lin_explain_tool(x);
	struct lin_joiner *v = lin_joiner_create(&vo);
	cr_assert_not_null(v);
	cr_assert_eq(lin_joiner_add_file(v, trace), 0);
	lin_joiner_finish(v);
	cr_assert_eq(lin_explain_build(x, v), 0);
	uint64_t got[NK];
	for (int i = 0; i < NK; i++)
		got[i] = UINT64_MAX;
	for (size_t i = 0; i < lin_explain_count(x); i++) {
		const struct lin_xlaunch *l = lin_explain_at(x, i);
		cr_assert_eq(l->m[LIN_M_KERNEL_START].ev, LIN_EV_OBSERVED);
		got[index_of(l->corr)] = l->m[LIN_M_KERNEL_START].t;
	}
	lin_joiner_free(v);
	lin_explain_free(x);
	agrees("lineage-explain kernel_start", got, WIDTH, WIDTH + EXTRA_WIDEN);
}

/* The span whose lineage.span is @kind: its start and end. */
static void span_times(const char *json, const char *kind, uint64_t *t0, uint64_t *t1)
{
	char attr[128];
	snprintf(attr, sizeof(attr), "\"lineage.span\",\"value\":{\"stringValue\":\"%s\"}", kind);
	const char *a = strstr(json, attr), *st = NULL;
	cr_assert_not_null(a, "no %s span", kind);
	for (const char *p = strstr(json, "\"startTimeUnixNano\":\""); p && p < a;
	     p = strstr(p + 1, "\"startTimeUnixNano\":\""))
		st = p;
	cr_assert_not_null(st);
	*t0 = strtoull(st + strlen("\"startTimeUnixNano\":\""), NULL, 10);
	const char *en = strstr(st, "\"endTimeUnixNano\":\"");
	cr_assert_not_null(en);
	*t1 = strtoull(en + strlen("\"endTimeUnixNano\":\""), NULL, 10);
}

/*
 * Without a Unix anchor the export writes every span on the device clock: GPU spans as
 * they are, host spans through the clock map's inverse. The epoch's begin (just after the
 * first pair) and retire (0.6 s after the last) land where the device clock read then.
 * Through the first pair alone the retire would be 2.1 ms early against its kernels.
 */
Test(clock_drift, without_a_unix_anchor_host_spans_go_onto_the_device_clock_through_the_map)
{
	no_unix = true;
	msgpack_sbuffer sb;
	size_t cut[NPAIRS + 1];
	const char *trace = trace_file(false, cut, &sb);
	msgpack_sbuffer_destroy(&sb);
	char out[128], err[256];
	path(out, sizeof(out), "export.json");
	struct lin_otlp_stats st;
	cr_assert_eq(lin_otlp_export(&trace, 1, out, &st, err, sizeof(err)), 0, "%s", err);
	char *json = slurp(out);
	uint64_t b, e;
	span_times(json, "epoch", &b, &e);
	uint64_t hb = H0 + 200, he = H0 + (NPAIRS - 1) * SEC + SEC * 6 / 10;
	uint64_t ob = b > dev_at(hb) ? b - dev_at(hb) : dev_at(hb) - b;
	uint64_t oe = e > dev_at(he) ? e - dev_at(he) : dev_at(he) - e;
	fprintf(stderr,
		"clock drift: no Unix anchor: epoch begin %" PRIu64 " ns, retire %" PRIu64
		" ns from the device clock's reading\n",
		ob, oe);
	cr_assert_leq(ob, WIDTH, "epoch begin: %" PRIu64 " ns off", ob);
	cr_assert_leq(oe, WIDTH + (SEC * 6 / 10) / 2000 + 1, "epoch retire: %" PRIu64 " ns off", oe);
	/* The GPU spans stay on the device clock as written. */
	uint64_t got[NK];
	otlp_starts(json, got);
	for (int i = 0; i < NK; i++)
		cr_assert_eq(got[i] + UNIX_OFF, ks[i].dev);
	free(json);
}
