/* SPDX-License-Identifier: MIT */
/*
 * test_stream_records.c - what the OTLP stream makes of particular records, on its own
 * sources: the host events trace_end counts beyond the dropped records are a loss event
 * (as the validator's finding), and a replay epoch is the replay of the first graph_launch
 * naming it, before or after its declaration (as the export has it).
 */
#include <msgpack.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture_file.h"
#include "lin_test.h"
#include "lineage/trace_format.h"
#include "otlp_stream.h"
#include "tracefmt.h"

struct doc {
	char *p;
	size_t n;
};

static int keep(const void *buf, size_t len, void *user)
{
	struct doc *d = user;
	d->p = realloc(d->p, d->n + len + 1);
	cr_assert_not_null(d->p);
	memcpy(d->p + d->n, buf, len);
	d->n += len;
	d->p[d->n] = 0;
	return 0;
}

/* The stream's output for the trace bytes @buf, fed whole. Free with free(). */
static char *stream_of(const void *buf, size_t n)
{
	struct doc d = { NULL, 0 };
	struct lin_ostream_opts o = { .write = keep, .user = &d };
	struct lin_ostream *s;
	cr_assert_eq(lin_ostream_open(&o, &s), 0);
	lin_ostream_feed(s, buf, n);
	lin_ostream_tick(s, UINT64_MAX, true);
	lin_ostream_close(s);
	cr_assert_not_null(d.p, "the stream wrote nothing");
	return d.p;
}

static char *stream_of_fixture(const char *name)
{
	size_t n;
	unsigned char *buf = lin_test_fixture(name, &n);
	char *out = stream_of(buf, n);
	free(buf);
	return out;
}

Test(stream_records, host_events_trace_end_counts_beyond_the_dropped_records_are_a_loss)
{
	char *out = stream_of_fixture("lost_trace_end_dropped.lt");
	const char *e = strstr(out, "trace_end beyond dropped records");
	cr_assert_not_null(e, "%s", out);
	cr_assert(strstr(out, "{\"key\":\"lineage.loss.count\",\"value\":{\"intValue\":\"7\"}}"),
		  "%s", out);
	free(out);
	/* The dropped records count them all: no second loss. */
	out = stream_of_fixture("lost_host_events_counted.lt");
	cr_assert(strstr(out, "\"lineage.loss\""), "the dropped records' own loss: %s", out);
	cr_assert_null(strstr(out, "trace_end beyond"), "%s", out);
	free(out);
}

/* The bytes @buf fed a record at a time as the writer feeds a tap: record k ends at
 * ends[k] and was taken at host time at[k]; each is followed by a tick at the largest host
 * time fed so far, so the stream acts on each as it arrives. Free the output with free(). */
static char *stream_live(const unsigned char *buf, const size_t *ends, const uint64_t *at, int n)
{
	struct doc d = { NULL, 0 };
	struct lin_ostream_opts o = { .write = keep, .user = &d };
	struct lin_ostream *s;
	cr_assert_eq(lin_ostream_open(&o, &s), 0);
	size_t from = 0;
	uint64_t wm = 0;
	for (int k = 0; k < n; k++) {
		lin_ostream_feed(s, buf + from, ends[k] - from);
		from = ends[k];
		wm = at[k] > wm ? at[k] : wm;
		lin_ostream_tick(s, wm, true);
	}
	lin_ostream_tick(s, UINT64_MAX, true);
	lin_ostream_close(s);
	cr_assert_not_null(d.p, "the stream wrote nothing");
	return d.p;
}

/* A trace whose replay epoch 5 is named by two graph_launch records (exec 8 ordinal 1,
 * then exec 9 ordinal 2), the first before its declaration (@declare_first false) or after
 * it; the epoch stays open to the close. Fed whole (@live false: every graph_launch is
 * taken before the heap gives the declaration) or live (the declaration is made before a
 * later graph_launch arrives). */
static char *two_launches(bool declare_first, bool live)
{
	msgpack_sbuffer sb;
	msgpack_packer pk;
	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	size_t ends[8];
	uint64_t at[8];
	int n = 0;
#define TAKEN(t) (ends[n] = sb.size, at[n++] = (t))
	struct lin_tf_header h = {
		LIN_TRACE_FORMAT_NAME, "t", "h", 1, 0, "tsc", 1e9, 5, "none", NULL, NULL, 0
	};
	lin_tf_header(&pk, &h);
	TAKEN(0);
	uint64_t req = 1;
	lin_tf_request_begin(&pk, 100, 7, req, LIN_NIL, 0, LIN_NIL);
	TAKEN(100);
	if (declare_first) {
		lin_tf_epoch_declare(&pk, 200, 7, 5, 1, &req, 1, LIN_NIL, 0);
		TAKEN(200);
	}
	lin_tf_graph_launch(&pk, 300, 7, 8, 5, 1, LIN_NIL, LIN_NIL, LIN_NIL);
	TAKEN(300);
	if (!declare_first) {
		lin_tf_epoch_declare(&pk, 400, 7, 5, 1, &req, 1, LIN_NIL, 0);
		TAKEN(400);
	}
	lin_tf_graph_launch(&pk, 500, 7, 9, 5, 2, LIN_NIL, LIN_NIL, LIN_NIL);
	TAKEN(500);
	lin_tf_trace_end(&pk, 1000, 0);
	TAKEN(1000);
#undef TAKEN
	char *out = live ? stream_live((const unsigned char *)sb.data, ends, at, n)
			 : stream_of(sb.data, sb.size);
	msgpack_sbuffer_destroy(&sb);
	return out;
}

Test(stream_records, a_replay_epoch_is_the_replay_of_the_first_graph_launch_naming_it)
{
	for (int k = 0; k < 4; k++) {
		bool first = k & 1, live = k & 2;
		char *out = two_launches(first, live);
		cr_assert(strstr(out, "{\"key\":\"lineage.graph.exec_id\",\"value\":{\"intValue\":\"8\"}}"),
			  "declared %s, fed %s: %s", first ? "first" : "after",
			  live ? "live" : "whole", out);
		cr_assert(strstr(out, "{\"key\":\"lineage.graph.replay_ordinal\",\"value\":{\"intValue\":"
				      "\"1\"}}"),
			  "%s", out);
		cr_assert_null(strstr(out, "\"intValue\":\"9\"}}"), "never the second: %s", out);
		free(out);
	}
}
