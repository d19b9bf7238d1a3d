/* SPDX-License-Identifier: MIT */
/* test_reader.c - the trace reader against truncated, hostile and mistyped input. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <msgpack.h>

#include "fixture_file.h"
#include "lin_test.h"
#include "reader.h"
#include "schema.h"
#include "tracefmt.h"

/* Read a whole buffer; return status of the last call, records read. */
static int read_all(const void *data, size_t n, uint64_t *records, char *err, size_t errcap,
		    uint64_t *err_off, bool *trunc)
{
	struct lin_reader *r = lin_reader_open_mem("t", data, n);
	struct lin_header h;
	static struct lin_rec rec;
	int st = lin_reader_header(r, LIN_TRACE_FORMAT_NAME, &h) == 0 ? LIN_READ_RECORD : LIN_READ_ERROR;
	while (st == LIN_READ_RECORD)
		st = lin_reader_next(r, &rec);
	*records = lin_reader_records(r);
	snprintf(err, errcap, "%s", lin_reader_error(r));
	*err_off = lin_reader_error_offset(r);
	*trunc = lin_reader_truncated(r);
	lin_reader_free(r);
	return st;
}

Test(reader, cut_at_every_byte_reports_truncation_and_keeps_prior_records)
{
	size_t n;
	unsigned char *buf = lin_test_fixture("good_direct.lt", &n);
	/* Record boundaries from a full read. */
	struct lin_reader *r = lin_reader_open_mem("t", buf, n);
	struct lin_header h;
	static struct lin_rec rec;
	uint64_t starts[256];
	size_t nrec = 0;
	cr_assert_eq(lin_reader_header(r, LIN_TRACE_FORMAT_NAME, &h), 0);
	while (lin_reader_next(r, &rec) == LIN_READ_RECORD)
		starts[nrec++] = rec.offset;
	lin_reader_free(r);
	cr_assert_gt(nrec, 10);
	starts[nrec] = n;
	for (size_t cut = 0; cut < n; cut++) {
		uint64_t got, off;
		char err[512];
		bool trunc;
		int st = read_all(buf, cut, &got, err, sizeof(err), &off, &trunc);
		size_t complete = 0;
		while (complete < nrec && starts[complete + 1] <= cut)
			complete++;
		bool boundary = cut >= starts[0] && (cut == starts[complete]);
		if (boundary) {
			cr_assert_eq(st, LIN_READ_EOF, "cut %zu at a record boundary: %s", cut, err);
			cr_assert_eq(got, complete);
			continue;
		}
		cr_assert_eq(st, LIN_READ_ERROR, "cut %zu must fail", cut);
		cr_assert(trunc, "cut %zu: not reported as truncated: %s", cut, err);
		cr_assert(strstr(err, "truncated"), "cut %zu: %s", cut, err);
		uint64_t want_off = cut < starts[0] ? 0 : starts[complete];
		cr_assert_eq(off, want_off, "cut %zu: offset %llu, want %llu", cut,
			     (unsigned long long)off, (unsigned long long)want_off);
		cr_assert_eq(got, cut < starts[0] ? 0 : complete, "cut %zu: kept %llu records", cut,
			     (unsigned long long)got);
	}
	free(buf);
	LIN_TEST_CHECK_LEAKS();
}

static msgpack_sbuffer sb;
static msgpack_packer pk;

static void begin(void)
{
	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	struct lin_tf_header h = {
		LIN_TRACE_FORMAT_NAME, "t", "h", 1, 0, "tsc", 1e9, 5, "none", NULL
	};
	lin_tf_header(&pk, &h);
}

static int finish(char *err, uint64_t *records)
{
	uint64_t off;
	bool trunc;
	int st = read_all(sb.data, sb.size, records, err, 512, &off, &trunc);
	msgpack_sbuffer_destroy(&sb);
	return st;
}

Test(reader, hostile_length_prefixes_fail_without_allocating)
{
	static const char *const bad[] = {
		"\xdd\xff\xff\xff\xff",             /* array32 of 4 G elements */
		"\xdf\xff\xff\xff\xff",             /* map32 */
		"\x93\x0b\x01\xdb\xff\xff\xff\xff", /* string record with a 4 GiB str */
		"\x93\x0b\x01\xc6\xff\xff\xff\xff", /* bin32 */
		"\xdd\x00\x01\x00\x00\x01",         /* 65536 elements, 1 byte left */
		"\x92\x63\xc1",                     /* reserved tag */
		"\x90",                             /* empty record */
		"\x05",                             /* not an array */
		"\x91\x00",                         /* record type 0 */
		"\x91\xff",                         /* negative record type */
	};
	static const size_t len[] = { 5, 5, 8, 8, 6, 3, 1, 1, 2, 2 };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char err[512];
		uint64_t recs;
		begin();
		msgpack_sbuffer_write(&sb, bad[i], len[i]);
		cr_assert_eq(finish(err, &recs), LIN_READ_ERROR, "case %zu accepted", i);
		cr_assert_neq(err[0], 0);
	}
	LIN_TEST_CHECK_LEAKS();
}

Test(reader, deep_nesting_is_bounded)
{
	char err[512];
	uint64_t recs;
	begin();
	for (int i = 0; i < 100000; i++)
		msgpack_sbuffer_write(&sb, "\x92\x63", 2);
	msgpack_sbuffer_write(&sb, "\x01", 1);
	cr_assert_eq(finish(err, &recs), LIN_READ_ERROR);
	cr_assert(strstr(err, "nesting"), "%s", err);
	LIN_TEST_CHECK_LEAKS();
}

static void pack_valid(char code)
{
	switch (code) {
	case 'u':
	case 'o':
	case 'c':
	case 'i': msgpack_pack_uint32(&pk, 1); break;
	case 'b': msgpack_pack_false(&pk); break;
	case 's':
	case 'n': msgpack_pack_str_with_body(&pk, "s", 1); break;
	default:
		msgpack_pack_array(&pk, 1);
		msgpack_pack_uint32(&pk, 1);
		break;
	}
}

static void pack_wrong(char code)
{
	switch (code) {
	case 'u':
	case 'o':
	case 'i': msgpack_pack_str_with_body(&pk, "x", 1); break;
	case 'c': msgpack_pack_uint64(&pk, 1ull << 32); break; /* past 32 bits */
	case 'b': msgpack_pack_uint32(&pk, 1); break;
	case 's':
	case 'n': msgpack_pack_true(&pk); break;
	default: msgpack_pack_uint32(&pk, 1); break;
	}
}

Test(reader, wrong_type_in_every_field_names_the_field)
{
	for (uint32_t t = 1; t < LIN_SCHEMA_MAX; t++) {
		const struct lin_schema *s = lin_schema_get(t);
		if (!s || t == LIN_REC_TRUTH)
			continue;
		char codes[LIN_READER_MAX_FIELDS + 1]; /* the types without the '|' */
		size_t nf = 0;
		for (const char *c = s->types; *c; c++)
			if (*c != '|')
				codes[nf++] = *c;
		codes[nf] = 0;
		for (size_t bad = 0; bad <= nf; bad++) { /* bad == nf: all valid */
			char err[512];
			uint64_t recs;
			begin();
			msgpack_pack_array(&pk, nf + 1);
			msgpack_pack_uint32(&pk, t);
			for (size_t i = 0; i < nf; i++) {
				if (i == bad)
					pack_wrong(codes[i]);
				else
					pack_valid(codes[i]);
			}
			int st = finish(err, &recs);
			if (bad == nf) {
				cr_assert_eq(st, LIN_READ_EOF, "%s valid record rejected: %s",
					     s->name, err);
				cr_assert_eq(recs, 1);
				continue;
			}
			cr_assert_eq(st, LIN_READ_ERROR, "%s field %zu: wrong type accepted",
				     s->name, bad);
			cr_assert(strstr(err, s->fields[bad]),
				  "%s: message lacks the field name: %s", s->name, err);
		}
	}
	LIN_TEST_CHECK_LEAKS();
}

Test(reader, any_integer_encoding_accepted_negative_rejected_for_uint)
{
	char err[512];
	uint64_t recs;
	begin();
	msgpack_sbuffer_write(&sb, "\x93\x1f\xd0\x05\xd3\x00\x00\x00\x00\x00\x00\x00\x07", 13);
	cr_assert_eq(finish(err, &recs), LIN_READ_EOF, "%s", err); /* clock, int8/int64 */
	begin();
	msgpack_sbuffer_write(&sb, "\x93\x1f\xff\x05", 4);
	cr_assert_eq(finish(err, &recs), LIN_READ_ERROR);
	cr_assert(strstr(err, "host_ns"), "%s", err);
	begin(); /* NaN as host_ns */
	msgpack_pack_array(&pk, 3);
	msgpack_pack_uint32(&pk, LIN_REC_CLOCK);
	msgpack_pack_double(&pk, NAN);
	msgpack_pack_uint32(&pk, 5);
	cr_assert_eq(finish(err, &recs), LIN_READ_ERROR);
	cr_assert(strstr(err, "host_ns") && strstr(err, "float"), "%s", err);
	LIN_TEST_CHECK_LEAKS();
}

Test(reader, too_few_fields_rejected_extra_fields_skipped)
{
	char err[512];
	uint64_t recs;
	begin();
	msgpack_sbuffer_write(&sb, "\x92\x1f\x01", 3); /* clock with 1 field */
	cr_assert_eq(finish(err, &recs), LIN_READ_ERROR);
	cr_assert(strstr(err, "fields"), "%s", err);
	begin();
	msgpack_sbuffer_write(&sb, "\x96\x1f\x01\x02\xc0\x91\xa1x\x81\x01\x02", 11);
	cr_assert_eq(finish(err, &recs), LIN_READ_EOF, "%s", err);
	cr_assert_eq(recs, 1);
	LIN_TEST_CHECK_LEAKS();
}

/* Fields a later minor version appended ('|' in the schema) may be absent: they read as
 * nil. A record that lacks one of the fields every writer wrote is still refused. */
Test(reader, fields_appended_by_a_later_minor_version_may_be_absent)
{
	static struct lin_rec rec;
	for (int n = 7; n <= 9; n++) {
		begin();
		msgpack_pack_array(&pk, (size_t)n + 1);
		msgpack_pack_uint32(&pk, LIN_REC_LAUNCH);
		for (int i = 0; i < n; i++)
			msgpack_pack_uint32(&pk, (uint32_t)(10 + i));
		struct lin_reader *r = lin_reader_open_mem("t", sb.data, sb.size);
		struct lin_header h;
		cr_assert_eq(lin_reader_header(r, LIN_TRACE_FORMAT_NAME, &h), 0);
		enum lin_read_status st = lin_reader_next(r, &rec);
		if (n == 7) {
			cr_assert_eq(st, LIN_READ_ERROR, "a 1.1 launch lacks no field: 7 is too few");
			cr_assert(strstr(lin_reader_error(r), "fields"), "%s", lin_reader_error(r));
		} else {
			cr_assert_eq(st, LIN_READ_RECORD, "%d fields: %s", n, lin_reader_error(r));
			cr_assert_eq(rec.nfields, LIN_REC_NFIELDS_LAUNCH);
			cr_assert_eq((rec.nil >> 8) & 1u, n == 8, "depth is nil only when absent");
			if (n == 9)
				cr_assert_eq(rec.f[8], 18);
			cr_assert_eq(rec.f[7], 17);
		}
		lin_reader_free(r);
		msgpack_sbuffer_destroy(&sb);
	}
	LIN_TEST_CHECK_LEAKS();
}

/* tsc_hz must be positive: 0 as an integer is refused like 0.0. */
Test(reader, a_zero_tsc_hz_is_refused_in_any_encoding)
{
	for (int enc = 0; enc < 2; enc++) {
		msgpack_sbuffer_init(&sb);
		msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
		msgpack_pack_map(&pk, 5);
		const char *k[] = { "format", "version", "host", "pid", "tsc_hz" };
		msgpack_pack_str_with_body(&pk, k[0], 6);
		msgpack_pack_str_with_body(&pk, LIN_TRACE_FORMAT_NAME, strlen(LIN_TRACE_FORMAT_NAME));
		msgpack_pack_str_with_body(&pk, k[1], 7);
		msgpack_pack_array(&pk, 2);
		msgpack_pack_uint32(&pk, 1);
		msgpack_pack_uint32(&pk, 2);
		msgpack_pack_str_with_body(&pk, k[2], 4);
		msgpack_pack_str_with_body(&pk, "h", 1);
		msgpack_pack_str_with_body(&pk, k[3], 3);
		msgpack_pack_uint32(&pk, 1);
		msgpack_pack_str_with_body(&pk, k[4], 6);
		if (enc)
			msgpack_pack_double(&pk, 0.0);
		else
			msgpack_pack_uint32(&pk, 0);
		char err[512];
		uint64_t recs;
		cr_assert_eq(finish(err, &recs), LIN_READ_ERROR, "encoding %d", enc);
		cr_assert(strstr(err, "tsc_hz"), "%s", err);
	}
	LIN_TEST_CHECK_LEAKS();
}

static int header_only(void (*fn)(void), char *err)
{
	uint64_t recs;
	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	fn();
	return finish(err, &recs);
}

static void key(const char *k) { msgpack_pack_str_with_body(&pk, k, strlen(k)); }

static void base_keys(void)
{
	key("format");
	key(LIN_TRACE_FORMAT_NAME);
	key("version");
	msgpack_pack_array(&pk, 2);
	msgpack_pack_uint32(&pk, 1);
	msgpack_pack_uint32(&pk, 0);
	key("host");
	key("h");
}

static void hdr_dup(void)
{
	msgpack_pack_map(&pk, 5);
	base_keys();
	key("pid");
	msgpack_pack_uint32(&pk, 1);
	key("pid");
	msgpack_pack_uint32(&pk, 2);
}
static void hdr_nan(void)
{
	msgpack_pack_map(&pk, 5);
	base_keys();
	key("pid");
	msgpack_pack_uint32(&pk, 1);
	key("tsc_hz");
	msgpack_pack_double(&pk, NAN);
}
static void hdr_nopid(void)
{
	msgpack_pack_map(&pk, 3);
	base_keys();
}
static void hdr_pidstr(void)
{
	msgpack_pack_map(&pk, 4);
	base_keys();
	key("pid");
	key("1");
}
static void hdr_ok(void)
{
	msgpack_pack_map(&pk, 5);
	base_keys();
	key("pid");
	msgpack_pack_uint32(&pk, 1);
	key("later");
	msgpack_pack_map(&pk, 0);
}

static void hdr_escape(void)
{
	msgpack_pack_map(&pk, 4);
	key("format");
	key("lineage\x1b[31mtrace\x85");
	key("version");
	msgpack_pack_array(&pk, 2);
	msgpack_pack_uint32(&pk, 1);
	msgpack_pack_uint32(&pk, 0);
	key("host");
	key("h");
	key("pid");
	msgpack_pack_uint32(&pk, 1);
}

/* An error that quotes the input never passes its control or non-ASCII bytes on (a
 * terminal escape in a header would reach the user's terminal); a plain quote keeps its
 * text (header_checks). */
Test(reader, errors_quote_input_bytes_safely)
{
	char err[512];
	cr_assert_eq(header_only(hdr_escape, err), LIN_READ_ERROR);
	cr_assert(strstr(err, "format 'lineage?[31mtrace?'"), "%s", err);
	for (const char *c = err; *c; c++)
		cr_assert((unsigned char)*c >= 0x20 && (unsigned char)*c < 0x7f, "byte %02x", *c);
	LIN_TEST_CHECK_LEAKS();
}

Test(reader, header_checks)
{
	char err[512];
	cr_assert_eq(header_only(hdr_dup, err), LIN_READ_ERROR);
	cr_assert(strstr(err, "duplicate key 'pid'"), "%s", err);
	cr_assert_eq(header_only(hdr_nan, err), LIN_READ_ERROR);
	cr_assert(strstr(err, "tsc_hz"), "%s", err);
	cr_assert_eq(header_only(hdr_nopid, err), LIN_READ_ERROR);
	cr_assert(strstr(err, "missing key 'pid'"), "%s", err);
	cr_assert_eq(header_only(hdr_pidstr, err), LIN_READ_ERROR);
	cr_assert(strstr(err, "'pid'"), "%s", err);
	cr_assert_eq(header_only(hdr_ok, err), LIN_READ_EOF, "%s", err);
	LIN_TEST_CHECK_LEAKS();
}

Test(reader, file_mode_matches_memory_mode)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/good_direct.lt", LIN_FIXTURE_GEN_DIR);
	struct lin_reader *r = lin_reader_open(path);
	struct lin_header h;
	static struct lin_rec rec;
	cr_assert_eq(lin_reader_header(r, LIN_TRACE_FORMAT_NAME, &h), 0, "%s", lin_reader_error(r));
	cr_assert_str_eq(h.host, "node-a");
	cr_assert_eq(h.pid, 4242);
	uint64_t kernels = 0;
	while (lin_reader_next(r, &rec) == LIN_READ_RECORD)
		kernels += rec.type == LIN_REC_KERNEL;
	cr_assert_eq(kernels, 3);
	cr_assert_str_eq(lin_reader_error(r), "");
	lin_reader_free(r);
	r = lin_reader_open("/nonexistent/x.lt");
	cr_assert_eq(lin_reader_header(r, LIN_TRACE_FORMAT_NAME, &h), -1);
	cr_assert(strstr(lin_reader_error(r), "cannot open"));
	lin_reader_free(r);
	LIN_TEST_CHECK_LEAKS();
}

/*
 * Stream mode, as the runtime's OTLP stream uses it: the trace handed in spans of every
 * size from 1 byte gives the same records, at the same offsets, as memory mode; a span
 * ending inside an object consumes nothing of it (LIN_READ_MORE).
 */
static size_t stream_read(const unsigned char *buf, size_t n, size_t piece, uint64_t *offs,
			  uint32_t *types, size_t cap)
{
	struct lin_reader *r = lin_reader_open_stream();
	struct lin_header h;
	static struct lin_rec rec;
	unsigned char *pend = malloc(n);
	size_t plen = 0, fed = 0, got = 0;
	uint64_t base = 0;
	bool header = false;
	while (fed < n || plen) {
		size_t k = n - fed < piece ? n - fed : piece;
		memcpy(pend + plen, buf + fed, k);
		plen += k;
		fed += k;
		lin_reader_stream_span(r, pend, plen, base);
		for (;;) {
			if (!header) {
				int rc = lin_reader_header(r, LIN_TRACE_FORMAT_NAME, &h);
				cr_assert_neq(rc, -1, "piece %zu: %s", piece, lin_reader_error(r));
				if (rc == 1)
					break;
				header = true;
				continue;
			}
			enum lin_read_status st = lin_reader_next(r, &rec);
			cr_assert_neq(st, LIN_READ_ERROR, "piece %zu: %s", piece, lin_reader_error(r));
			if (st == LIN_READ_MORE)
				break;
			cr_assert_lt(got, cap);
			offs[got] = rec.offset;
			types[got++] = rec.type;
		}
		size_t used = lin_reader_consumed(r);
		memmove(pend, pend + used, plen - used);
		plen -= used;
		base += used;
		if (fed == n && plen) /* the file ends inside an object: never for a good file */
			cr_assert_fail("piece %zu: %zu bytes left undecoded", piece, plen);
	}
	cr_assert_eq(h.pid, 4242);
	free(pend);
	lin_reader_free(r);
	return got;
}

Test(reader, stream_mode_in_pieces_of_any_size_matches_memory_mode)
{
	size_t n;
	unsigned char *buf = lin_test_fixture("good_direct.lt", &n);
	struct lin_reader *r = lin_reader_open_mem("t", buf, n);
	struct lin_header h;
	static struct lin_rec rec;
	static uint64_t offs[256], soffs[256];
	static uint32_t types[256], stypes[256];
	size_t nrec = 0;
	cr_assert_eq(lin_reader_header(r, LIN_TRACE_FORMAT_NAME, &h), 0);
	while (lin_reader_next(r, &rec) == LIN_READ_RECORD) {
		offs[nrec] = rec.offset;
		types[nrec++] = rec.type;
	}
	lin_reader_free(r);
	cr_assert_gt(nrec, 10);
	size_t pieces[] = { 1, 2, 3, 7, 64, 1000, n };
	for (size_t i = 0; i < sizeof(pieces) / sizeof(pieces[0]); i++) {
		size_t got = stream_read(buf, n, pieces[i], soffs, stypes, 256);
		cr_assert_eq(got, nrec, "piece %zu: %zu records, want %zu", pieces[i], got, nrec);
		for (size_t k = 0; k < nrec; k++) {
			cr_assert_eq(soffs[k], offs[k], "piece %zu record %zu", pieces[i], k);
			cr_assert_eq(stypes[k], types[k]);
		}
	}
	free(buf);
	LIN_TEST_CHECK_LEAKS();
}

Test(reader, stream_mode_reports_bad_bytes_with_their_offset)
{
	size_t n;
	unsigned char *buf = lin_test_fixture("good_direct.lt", &n);
	struct lin_reader *r = lin_reader_open_stream();
	struct lin_header h;
	static struct lin_rec rec;
	lin_reader_stream_span(r, buf, n, 0);
	cr_assert_eq(lin_reader_header(r, LIN_TRACE_FORMAT_NAME, &h), 0);
	size_t at = lin_reader_consumed(r);
	buf[at] = 0xc1; /* a reserved MessagePack tag where the first record starts */
	cr_assert_eq(lin_reader_next(r, &rec), LIN_READ_ERROR);
	cr_assert_eq(lin_reader_error_offset(r), at);
	cr_assert(strstr(lin_reader_error(r), "reserved"), "%s", lin_reader_error(r));
	lin_reader_free(r);
	/* An empty span, and one cut inside the header: more, not an error. */
	r = lin_reader_open_stream();
	lin_reader_stream_span(r, buf, 0, 0);
	cr_assert_eq(lin_reader_header(r, LIN_TRACE_FORMAT_NAME, &h), 1);
	lin_reader_stream_span(r, buf, at - 1, 0);
	cr_assert_eq(lin_reader_header(r, LIN_TRACE_FORMAT_NAME, &h), 1);
	cr_assert_eq(lin_reader_consumed(r), 0);
	cr_assert_str_eq(lin_reader_error(r), "");
	lin_reader_free(r);
	free(buf);
	LIN_TEST_CHECK_LEAKS();
}
