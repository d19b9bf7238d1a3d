/* SPDX-License-Identifier: MIT */
/*
 * test_skip.c - the OTLP stream's backlog skip (LIN_OSTREAM_MAX_BACKLOG): a skip that takes
 * the header before the stream thread decoded it does not stop the stream; the records
 * after the skip still make spans, and the skip is counted.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture_file.h"
#include "lin_test.h"
#include "lineage/trace_format.h"
#include "otlp_stream.h"
#include "reader.h"

/* Feed the header alone, then (@burst) a piece over the backlog, then the records. */
static void stats_of(bool burst, struct lin_ostream_stats *st)
{
	size_t n;
	unsigned char *buf = lin_test_fixture("good_direct.lt", &n);
	struct lin_reader *r = lin_reader_open_mem("t", buf, n);
	struct lin_header h;
	cr_assert_eq(lin_reader_header(r, LIN_TRACE_FORMAT_NAME, &h), 0);
	size_t hl = lin_reader_consumed(r);
	lin_reader_free(r);
	struct lin_ostream_opts o = { .path = "/dev/null", .threaded = true };
	struct lin_ostream *s;
	cr_assert_eq(lin_ostream_open(&o, &s), 0);
	lin_ostream_feed(s, buf, hl);
	unsigned char *big = calloc(1, LIN_OSTREAM_MAX_BACKLOG + 1);
	if (burst)
		lin_ostream_feed(s, big, LIN_OSTREAM_MAX_BACKLOG + 1);
	lin_ostream_feed(s, buf + hl, n - hl);
	lin_ostream_tick(s, UINT64_MAX, true);
	lin_ostream_stats(s, st);
	lin_ostream_close(s);
	free(big);
	free(buf);
}

Test(otlp_skip, a_skip_that_takes_the_header_leaves_the_stream_working)
{
	struct lin_ostream_stats st;
	stats_of(true, &st);
	cr_assert_eq(st.failed, 0, "the stream stopped: %d", st.failed);
	cr_assert_gt(st.dropped_bytes, LIN_OSTREAM_MAX_BACKLOG, "the skip is counted");
	cr_assert_gt(st.spans + st.gpu_joined + st.gpu_unjoined, 0, "records after the skip make spans");
}

Test(otlp_skip, without_a_skip_nothing_is_dropped)
{
	struct lin_ostream_stats st;
	stats_of(false, &st);
	cr_assert_eq(st.failed, 0);
	cr_assert_eq(st.dropped_bytes, 0);
	cr_assert_gt(st.spans + st.gpu_joined + st.gpu_unjoined, 0);
}

/* Bytes that do not decode stop the stream (said once, counted in failed); the trace itself
 * is not the stream's to judge. Whole records after the header decode: silent. */
Test(otlp_skip, undecodable_bytes_stop_the_stream)
{
	size_t n;
	unsigned char *buf = lin_test_fixture("good_direct.lt", &n);
	struct lin_reader *r = lin_reader_open_mem("t", buf, n);
	struct lin_header h;
	cr_assert_eq(lin_reader_header(r, LIN_TRACE_FORMAT_NAME, &h), 0);
	size_t hl = lin_reader_consumed(r);
	lin_reader_free(r);
	struct lin_ostream_opts o = { .path = "/dev/null" };
	struct lin_ostream *s;
	struct lin_ostream_stats st;
	cr_assert_eq(lin_ostream_open(&o, &s), 0);
	lin_ostream_feed(s, buf, hl);
	static const unsigned char bad[] = { 0xc1, 0xc1, 0xc1, 0xc1 }; /* reserved tags */
	lin_ostream_feed(s, bad, sizeof(bad));
	lin_ostream_tick(s, UINT64_MAX, true);
	lin_ostream_stats(s, &st);
	cr_assert_eq(st.failed, -EINVAL);
	lin_ostream_close(s);
	cr_assert_eq(lin_ostream_open(&o, &s), 0);
	lin_ostream_feed(s, buf, n);
	lin_ostream_tick(s, UINT64_MAX, true);
	lin_ostream_stats(s, &st);
	cr_assert_eq(st.failed, 0);
	lin_ostream_close(s);
	free(buf);
}
