/* SPDX-License-Identifier: MIT */
/*
 * test_otlp_stream.c - the runtime's OTLP stream (a tap: lin_otlp_tap, lineage/otlp.h):
 * spans are handed out while the runtime runs, with the ids lineage-validate derives,
 * open work is written at the close, and a failing stream never harms the trace.
 */
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "lin_test.h"
#include "lineage/graph.h"

#include "lineage/otlp.h"
#include "lineage/tap.h"
#include "lineage/trace_format.h"
#include "lineage/w3c.h"
#include "trace_read.h"

/* The stream is liblineage-otlp's, attached as a tap: nothing process-wide to enable. */
TestSuite(otlp_stream);

struct lines {
	char *p;
	size_t n, cap;
	int calls, fail;
};

static int collect(const void *buf, size_t len, void *user)
{
	struct lines *l = user;
	l->calls++;
	if (l->fail)
		return -EIO;
	cr_assert(len && ((const char *)buf)[len - 1] == '\n', "one whole line per call");
	cr_assert_eq(memchr(buf, '\n', len), (const char *)buf + len - 1, "one line per call");
	if (l->n + len + 1 > l->cap) {
		l->cap = (l->n + len + 1) * 2;
		l->p = realloc(l->p, l->cap);
		cr_assert(l->p);
	}
	memcpy(l->p + l->n, buf, len);
	l->n += len;
	l->p[l->n] = 0;
	return 0;
}

static uint64_t my_key(void)
{
	char host[256];
	cr_assert_eq(gethostname(host, sizeof(host)), 0);
	host[255] = 0;
	return lin_w3c_proc_key(host, (uint64_t)getpid());
}

static bool has_span(const struct lines *l, uint64_t span)
{
	char pat[64];
	snprintf(pat, sizeof(pat), "\"spanId\":\"%016llx\"", (unsigned long long)span);
	return l->p && strstr(l->p, pat);
}

/* The JSON object of the span @span (up to its end), copied into @buf. */
static const char *span_text(const struct lines *l, uint64_t span, char *buf, size_t len)
{
	char pat[64];
	snprintf(pat, sizeof(pat), "\"spanId\":\"%016llx\"", (unsigned long long)span);
	const char *p = l->p ? strstr(l->p, pat) : NULL;
	if (!p)
		return NULL;
	const char *e = strstr(p, ",{\"traceId\"");
	size_t n = e ? (size_t)(e - p) : strlen(p);
	n = n < len - 1 ? n : len - 1;
	memcpy(buf, p, n);
	buf[n] = 0;
	return buf;
}

struct handoff {
	lin_runtime *rt;
	lin_token tok;
	uint64_t epoch;
};

static void *worker(void *arg)
{
	struct handoff *h = arg;
	lin_scope sc;
	lin_launch ln;
	cr_assert_eq(lin_token_adopt(h->rt, &h->tok, &sc), 0);
	cr_assert_eq(lin_launch_begin(h->rt, "k", &ln), 0);
	cr_assert_eq(lin_launch_end(h->rt, &ln), 0);
	cr_assert_eq(lin_scope_exit(h->rt, &sc), 0);
	return NULL;
}

Test(otlp_stream, spans_are_written_while_the_runtime_runs)
{
	struct lines l = { 0 };
	struct membuf mb = { 0 };
	struct lin_otlp_opts so = { .sz = sizeof(so), .write = collect, .user = &l };
	struct lin_tap_spec tap = lin_otlp_tap(&so);
	struct lin_runtime_opts o = { .sz = sizeof(o),
				      .flags = LIN_RT_NO_WRITER_THREAD,
				      .trace_write = membuf_write,
				      .trace_user = &mb,
				      .taps = &tap,
				      .ntaps = 1 };
	lin_runtime *rt;
	cr_assert_eq(lin_runtime_create(&o, &rt), 0);
	uint64_t req, epoch;
	struct lin_request_opts ro = { .sz = sizeof(ro), .name = "infer \xc3\xa9" };
	cr_assert_eq(lin_request_begin(rt, &ro, &req), 0);
	struct lin_epoch_opts eo = { .sz = sizeof(eo), .requests = &req, .n_requests = 1 };
	cr_assert_eq(lin_epoch_declare(rt, &eo, &epoch), 0);
	struct handoff h = { .rt = rt, .epoch = epoch };
	lin_scope in;
	cr_assert_eq(lin_scope_enter(rt, epoch, &in), 0);
	cr_assert_eq(lin_token_capture(rt, &h.tok), 0); /* captured here, adopted there */
	cr_assert_eq(lin_scope_exit(rt, &in), 0);
	pthread_t t;
	cr_assert_eq(pthread_create(&t, NULL, worker, &h), 0);
	cr_assert_eq(pthread_join(t, NULL), 0);
	cr_assert_eq(lin_epoch_retire(rt, epoch), 0);
	cr_assert_eq(lin_request_end(rt, req), 0);

	uint64_t key = my_key();
	cr_assert_eq(lin_runtime_flush(rt), 0);
	/* before the close: the ended request and the retired epoch are out */
	cr_assert(has_span(&l, lin_w3c_span_id(key, req)), "request span after flush: %s", l.p);
	cr_assert(has_span(&l, lin_w3c_span_id(key, epoch)), "epoch span after flush");
	cr_assert(strstr(l.p, "\"stringValue\":\"handoff\""), "handoff span after flush");
	cr_assert(!has_span(&l, lin_w3c_span_id(key, 0)), "the process span comes at the close");
	char buf[4096], trace[40];
	uint8_t tid[16];
	lin_w3c_trace_id(key, req, tid);
	for (int i = 0; i < 16; i++)
		snprintf(trace + 2 * i, 3, "%02x", tid[i]);
	char want[128];
	snprintf(want, sizeof(want), "\"traceId\":\"%s\",\"spanId\":\"%016llx\"", trace,
		 (unsigned long long)lin_w3c_span_id(key, epoch));
	cr_assert(strstr(l.p, want), "the epoch is in its request's trace");
	cr_assert(span_text(&l, lin_w3c_span_id(key, epoch), buf, sizeof(buf)));
	snprintf(want, sizeof(want), "\"parentSpanId\":\"%016llx\"",
		 (unsigned long long)lin_w3c_span_id(key, req));
	cr_assert(strstr(buf, want), "the epoch hangs under its request: %s", buf);
	cr_assert(span_text(&l, lin_w3c_span_id(key, req), buf, sizeof(buf)));
	cr_assert(strstr(buf, "\"name\":\"infer \xc3\xa9\""), "UTF-8 name passed on: %s", buf);
	int calls = l.calls;
	lin_runtime_free(rt);
	cr_assert_gt(l.calls, calls, "a last document at the close");
	cr_assert(has_span(&l, lin_w3c_span_id(key, 0)), "the process span at the close");
	/* the msgpack trace is complete as ever */
	struct trace tr;
	cr_assert_eq(trace_load_mem(&tr, mb.p, mb.n), 0);
	cr_assert_eq(trace_count(&tr, LIN_REC_TRACE_END), 1);
	trace_free(&tr);
	free(mb.p);
	free(l.p);
	LIN_TEST_CHECK_LEAKS();
}

Test(otlp_stream, flush_waits_for_the_stream_thread)
{
	struct lines l = { 0 };
	struct lin_otlp_opts so = { .sz = sizeof(so), .write = collect, .user = &l };
	struct lin_tap_spec tap = lin_otlp_tap(&so);
	struct lin_runtime_opts o = { .sz = sizeof(o), .taps = &tap, .ntaps = 1, .flush_interval_ms = 1000 };
	lin_runtime *rt;
	cr_assert_eq(lin_runtime_create(&o, &rt), 0); /* a writer thread: a threaded stream */
	uint64_t key = my_key();
	for (int i = 0; i < 3; i++) {
		uint64_t req;
		cr_assert_eq(lin_request_begin(rt, NULL, &req), 0);
		cr_assert_eq(lin_request_end(rt, req), 0);
		cr_assert_eq(lin_runtime_flush(rt), 0);
		/* the stream thread has written it when flush returns */
		cr_assert(has_span(&l, lin_w3c_span_id(key, req)), "request %d after flush", i);
	}
	lin_runtime_free(rt);
	cr_assert(has_span(&l, lin_w3c_span_id(key, 0)));
	free(l.p);
	LIN_TEST_CHECK_LEAKS();
}

Test(otlp_stream, open_work_is_written_at_the_close_marked_open)
{
	struct lines l = { 0 };
	struct lin_otlp_opts so = { .sz = sizeof(so), .write = collect, .user = &l };
	struct lin_tap_spec tap = lin_otlp_tap(&so);
	struct lin_runtime_opts o = { .sz = sizeof(o), .taps = &tap, .ntaps = 1 };
	lin_runtime *rt;
	cr_assert_eq(lin_runtime_create(&o, &rt), 0); /* no msgpack trace at all */
	uint64_t req;
	cr_assert_eq(lin_request_begin(rt, NULL, &req), 0);
	lin_runtime_free(rt);
	char buf[4096];
	cr_assert(span_text(&l, lin_w3c_span_id(my_key(), req), buf, sizeof(buf)), "%s", l.p);
	cr_assert(strstr(buf, "{\"key\":\"lineage.open\",\"value\":{\"boolValue\":true}}"), "%s", buf);
	free(l.p);
	LIN_TEST_CHECK_LEAKS();
}

/* A replay epoch still open at the close (the program ended inside cudaGraphLaunch, or its
 * retire was dropped) is written as the graph replay it is, exec and ordinal named. */
Test(otlp_stream, an_open_replay_epoch_at_the_close_keeps_its_exec_and_ordinal)
{
	struct lines l = { 0 };
	struct lin_otlp_opts so = { .sz = sizeof(so), .write = collect, .user = &l };
	struct lin_tap_spec tap = lin_otlp_tap(&so);
	struct lin_runtime_opts o = { .sz = sizeof(o), .taps = &tap, .ntaps = 1 };
	lin_runtime *rt;
	lin_graph_tracker *gt;
	cr_assert_eq(lin_runtime_create(&o, &rt), 0);
	cr_assert_eq(lin_graph_tracker_create(rt, NULL, &gt), 0);
	uint64_t req, epoch;
	cr_assert_eq(lin_request_begin(rt, NULL, &req), 0);
	struct lin_epoch_opts eo = { .sz = sizeof(eo), .requests = &req, .n_requests = 1 };
	cr_assert_eq(lin_epoch_declare(rt, &eo, &epoch), 0);
	lin_scope in;
	cr_assert_eq(lin_scope_enter(rt, epoch, &in), 0);
	lin_graph_launch gl;
	cr_assert_eq(lin_graph_launch_begin(gt, 50, "replay", &gl), 0);
	cr_assert_neq(gl.replay_epoch, 0);
	/* no lin_graph_launch_end: the replay epoch is open when the runtime closes */
	lin_graph_tracker_free(gt);
	lin_runtime_free(rt);
	char buf[4096];
	cr_assert(span_text(&l, lin_w3c_span_id(my_key(), gl.replay_epoch), buf, sizeof(buf)), "%s",
		  l.p);
	cr_assert(strstr(buf, "{\"key\":\"lineage.open\",\"value\":{\"boolValue\":true}}"), "%s", buf);
	cr_assert(strstr(buf, "\"lineage.graph.exec_id\""), "the replay's exec: %s", buf);
	cr_assert(strstr(buf, "\"lineage.graph.replay_ordinal\""), "its ordinal: %s", buf);
	free(l.p);
	LIN_TEST_CHECK_LEAKS();
}

Test(otlp_stream, remote_request_keeps_the_received_trace)
{
	struct lines l = { 0 };
	struct lin_otlp_opts so = { .sz = sizeof(so), .write = collect, .user = &l };
	struct lin_tap_spec tap = lin_otlp_tap(&so);
	struct lin_runtime_opts o = { .sz = sizeof(o), .taps = &tap, .ntaps = 1 };
	lin_runtime *rt;
	cr_assert_eq(lin_runtime_create(&o, &rt), 0);
	struct lin_w3c_context c;
	cr_assert_eq(
		lin_w3c_extract("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", NULL, &c), 0);
	uint64_t req;
	cr_assert_eq(lin_w3c_request_begin(rt, &c, NULL, &req), 0);
	cr_assert_eq(lin_request_end(rt, req), 0);
	lin_runtime_free(rt);
	char buf[4096];
	cr_assert(span_text(&l, lin_w3c_span_id(my_key(), req), buf, sizeof(buf)), "%s", l.p);
	cr_assert(strstr(buf, "\"parentSpanId\":\"00f067aa0ba902b7\""), "%s", buf);
	cr_assert(strstr(buf, "\"kind\":2"), "SERVER: %s", buf);
	cr_assert(strstr(l.p, "\"traceId\":\"4bf92f3577b34da6a3ce929d0e0e4736\",\"spanId\""));
	free(l.p);
	LIN_TEST_CHECK_LEAKS();
}

Test(otlp_stream, a_failing_stream_leaves_the_trace_alone)
{
	struct lines l = { .fail = 1 };
	struct membuf mb = { 0 };
	struct lin_otlp_opts so = { .sz = sizeof(so), .write = collect, .user = &l };
	struct lin_tap_spec tap = lin_otlp_tap(&so);
	struct lin_runtime_opts o = {
		.sz = sizeof(o), .trace_write = membuf_write, .trace_user = &mb, .taps = &tap, .ntaps = 1
	};
	lin_runtime *rt;
	cr_assert_eq(lin_runtime_create(&o, &rt), 0);
	for (int i = 0; i < 100; i++) {
		uint64_t req;
		cr_assert_eq(lin_request_begin(rt, NULL, &req), 0);
		cr_assert_eq(lin_request_end(rt, req), 0);
		if (i == 10)
			cr_assert_eq(lin_runtime_flush(rt), 0, "a stream failure is not a trace failure");
	}
	lin_runtime_free(rt);
	cr_assert_eq(l.calls, 1, "the stream stops at its first failure");
	struct trace tr;
	cr_assert_eq(trace_load_mem(&tr, mb.p, mb.n), 0);
	cr_assert_eq(trace_count(&tr, LIN_REC_REQUEST_END), 100);
	cr_assert_eq(trace_count(&tr, LIN_REC_TRACE_END), 1);
	trace_free(&tr);
	free(mb.p);
	LIN_TEST_CHECK_LEAKS();
}

Test(otlp_stream, service_name_from_the_option_else_the_environment_else_lineage)
{
	const char *want[] = { "svc-option", "svc-env", "lineage" };
	for (int i = 0; i < 3; i++) {
		lin_runtime *rt = NULL;
		struct lines l = { 0 };
		struct lin_otlp_opts so = { .sz = sizeof(so),
					    .write = collect,
					    .user = &l,
					    .service = i == 0 ? "svc-option" : NULL };
		struct lin_tap_spec tap = lin_otlp_tap(&so);
		struct lin_runtime_opts o = { .sz = sizeof(o), .taps = &tap, .ntaps = 1 };
		if (i < 2)
			setenv("OTEL_SERVICE_NAME", "svc-env", 1);
		else
			unsetenv("OTEL_SERVICE_NAME");
		cr_assert_eq(lin_runtime_create(&o, &rt), 0);
		lin_runtime_free(rt);
		char pat[128];
		snprintf(pat, sizeof(pat),
			 "\"key\":\"service.name\",\"value\":{\"stringValue\":\"%s\"}", want[i]);
		cr_assert(l.p && strstr(l.p, pat), "case %d: no %s in %.300s", i, pat, l.p ? l.p : "");
		free(l.p);
	}
}

static char logged[512];
static void keep_log(enum lin_log_level level, const char *msg, void *user)
{
	(void)user;
	if (level == LIN_LOG_ERROR)
		snprintf(logged, sizeof(logged), "%s", msg);
}

/* Create with the OTLP tap's options @so: the error, and no runtime left on failure. */
static int create_with(const struct lin_otlp_opts *so)
{
	struct lin_tap_spec tap = lin_otlp_tap(so);
	struct lin_runtime_opts o = { .sz = sizeof(o), .taps = &tap, .ntaps = 1, .log = keep_log };
	lin_runtime *rt = (lin_runtime *)&o;
	logged[0] = 0;
	int err = lin_runtime_create(&o, &rt);
	if (err)
		cr_assert_null(rt);
	else
		lin_runtime_free(rt);
	return err;
}

Test(otlp_stream, bad_options_are_refused_and_say_why)
{
	struct lines l = { 0 };
	struct lin_otlp_opts so = { .sz = sizeof(so), .path = "/tmp/x.json", .write = collect, .user = &l };
	cr_assert_eq(create_with(&so), -EINVAL);
	cr_assert(strstr(logged, "both are set"), "%s", logged);
	so = (struct lin_otlp_opts){ .sz = sizeof(so) };
	cr_assert_eq(create_with(&so), -EINVAL);
	cr_assert(strstr(logged, "neither is set"), "%s", logged);
	so = (struct lin_otlp_opts){ .sz = sizeof(so), .path = "/nonexistent-dir/otlp.json" };
	cr_assert_eq(create_with(&so), -ENOENT);
	cr_assert(strstr(logged, "/nonexistent-dir/otlp.json"), "%s", logged);
	so = (struct lin_otlp_opts){ .sz = 1, .write = collect };
	cr_assert_eq(create_with(&so), -EINVAL);
	cr_assert(strstr(logged, "sizeof(struct lin_otlp_opts)"), "%s", logged);
	cr_assert_eq(create_with(NULL), -EINVAL, "no options");
	cr_assert_eq(l.calls, 0, "a refused stream writes nothing");
}

Test(otlp_stream, a_newer_callers_options_pass_only_with_zero_unknown_bytes)
{
	struct lines l = { 0 };
	struct {
		struct lin_otlp_opts o;
		uint64_t newer;
	} big = { .o = { .sz = sizeof(big), .write = collect, .user = &l } };
	cr_assert_eq(create_with(&big.o), 0, "%s", logged);
	cr_assert_str_eq(logged, "");
	cr_assert(l.calls > 0 && strstr(l.p, "resourceSpans"));
	big.newer = 1;
	cr_assert_eq(create_with(&big.o), -EINVAL);
	cr_assert(strstr(logged, "does not know"), "%s", logged);
	/* An older caller's shorter struct: the fields it lacks are the defaults. */
	struct lin_otlp_opts old = { .sz = offsetof(struct lin_otlp_opts, service),
				     .write = collect,
				     .user = &l };
	cr_assert_eq(create_with(&old), 0, "%s", logged);
	free(l.p);
}

Test(otlp_stream, a_forked_child_writes_nothing_to_the_parents_stream, .timeout = 120,
     .disabled = LIN_TEST_UNDER_TSAN) /* see lin_test.h */
{
	char path[] = "/tmp/lin-otlp-fork-XXXXXX";
	int fd = mkstemp(path);
	cr_assert(fd >= 0);
	close(fd);
	struct lin_otlp_opts so = { .sz = sizeof(so), .path = path };
	struct lin_tap_spec tap = lin_otlp_tap(&so);
	struct lin_runtime_opts o = { .sz = sizeof(o), .taps = &tap, .ntaps = 1, .flush_interval_ms = 1 };
	lin_runtime *rt;
	cr_assert_eq(lin_runtime_create(&o, &rt), 0);
	uint64_t req;
	cr_assert_eq(lin_request_begin(rt, NULL, &req), 0);
	pid_t pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0) {
		uint64_t r2;
		int bad = lin_request_begin(rt, NULL, &r2) || lin_request_end(rt, r2);
		lin_runtime_free(rt);
		_exit(bad);
	}
	int st;
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	cr_assert_eq(lin_request_end(rt, req), 0);
	lin_runtime_free(rt);
	FILE *f = fopen(path, "r");
	cr_assert(f);
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	int lines = 0, spans = 0;
	while ((n = getline(&line, &cap, f)) > 0) {
		lines++;
		cr_assert_eq(line[n - 1], '\n', "whole lines only");
		for (char *p = line; (p = strstr(p, "\"spanId\"")); p++)
			spans++;
	}
	free(line);
	fclose(f);
	unlink(path);
	cr_assert_geq(lines, 1);
	cr_assert_eq(spans, 2, "the parent's request and process spans, nothing of the child's");
}

/* ---- the generic tap interface (lineage/tap.h), with taps of the test's own */

/* A tap that keeps what it is given. */
struct rec_tap {
	char *bytes;
	size_t n;
	int ticks, closes, opens;
	const void *config;
};

static void r_feed(void *t, const void *b, size_t n)
{
	struct rec_tap *r = t;
	r->bytes = realloc(r->bytes, r->n + n);
	cr_assert(r->bytes);
	memcpy(r->bytes + r->n, b, n);
	r->n += n;
}
static void r_tick(void *t, uint64_t wm, bool wait)
{
	(void)wm, (void)wait;
	((struct rec_tap *)t)->ticks++;
}
static void r_close(void *t) { ((struct rec_tap *)t)->closes++; }
static void r_nop(void *t) { (void)t; }

static const struct lin_tap_ops rec_ops = { .sz = sizeof(rec_ops),
					    .feed = r_feed,
					    .tick = r_tick,
					    .close = r_close,
					    .fork_prepare = r_nop,
					    .fork_parent = r_nop,
					    .fork_child = r_nop };

/* config: the struct rec_tap to record into. */
static int rec_open(const struct lin_tap_args *a, const struct lin_tap_ops **ops, void **tap)
{
	cr_assert_eq(a->sz, sizeof(*a));
	cr_assert_not_null(a->opts);
	cr_assert_not_null(a->rt);
	struct rec_tap *r = (struct rec_tap *)a->config;
	r->opens++;
	r->config = a->config;
	*ops = &rec_ops;
	*tap = r;
	return 0;
}

static int tap_fails(const struct lin_tap_args *a, const struct lin_tap_ops **ops, void **tap)
{
	(void)a, (void)ops, (void)tap;
	return -EMFILE;
}

static const struct lin_tap_ops half_ops = { .sz = sizeof(half_ops),
					     .feed = r_feed,
					     .close = r_close }; /* no tick, no fork handlers */

static int tap_half(const struct lin_tap_args *a, const struct lin_tap_ops **ops, void **tap)
{
	*ops = &half_ops;
	*tap = (void *)a->config;
	return 0;
}

/* A table whose sz stops before close: what lies past sz (here a close that counts) is
 * not the tap's to offer, and must not be called. */
static const struct lin_tap_ops short_ops = { .sz = offsetof(struct lin_tap_ops, close),
					      .feed = r_feed,
					      .tick = r_tick,
					      .close = r_close };

static int tap_short(const struct lin_tap_args *a, const struct lin_tap_ops **ops, void **tap)
{
	*ops = &short_ops;
	*tap = (void *)a->config;
	return 0;
}

/* Returns a positive value: neither success nor an error by the contract. */
static int tap_positive(const struct lin_tap_args *a, const struct lin_tap_ops **ops, void **tap)
{
	(void)a, (void)ops, (void)tap;
	return 1;
}

/* Opens a complete tap (config: its struct rec_tap), then returns @ret, not 0. */
static int tap_open_then(const struct lin_tap_args *a, const struct lin_tap_ops **ops, void **tap, int ret)
{
	*ops = &rec_ops;
	*tap = (void *)a->config;
	return ret;
}

static int tap_opened_positive(const struct lin_tap_args *a, const struct lin_tap_ops **ops, void **tap)
{
	return tap_open_then(a, ops, tap, 2);
}

static int tap_opened_int_min(const struct lin_tap_args *a, const struct lin_tap_ops **ops, void **tap)
{
	return tap_open_then(a, ops, tap, INT_MIN);
}

/* Create with @n specs: the error, and no runtime left on failure. */
static int create_taps(const struct lin_tap_spec *specs, size_t n)
{
	struct lin_runtime_opts o = { .sz = sizeof(o), .taps = specs, .ntaps = n, .log = keep_log };
	lin_runtime *rt = (lin_runtime *)&o;
	logged[0] = 0;
	int err = lin_runtime_create(&o, &rt);
	if (err)
		cr_assert_null(rt);
	else
		lin_runtime_free(rt);
	return err;
}

Test(otlp_tap, taps_see_the_trace_bytes_and_nothing_is_logged)
{
	struct membuf mb = { 0 };
	struct rec_tap r[2] = { 0 };
	struct lin_tap_spec specs[2] = { { sizeof(specs[0]), rec_open, &r[0] },
					 { sizeof(specs[1]), rec_open, &r[1] } };
	struct lin_runtime_opts o = { .sz = sizeof(o),
				      .trace_write = membuf_write,
				      .trace_user = &mb,
				      .taps = specs,
				      .ntaps = 2,
				      .log = keep_log };
	lin_runtime *rt;
	logged[0] = 0;
	cr_assert_eq(lin_runtime_create(&o, &rt), 0);
	uint64_t req;
	cr_assert_eq(lin_request_begin(rt, NULL, &req), 0);
	cr_assert_eq(lin_request_end(rt, req), 0);
	cr_assert_eq(lin_runtime_flush(rt), 0);
	lin_runtime_free(rt);
	cr_assert_str_eq(logged, "");
	for (int i = 0; i < 2; i++) {
		cr_assert_eq(r[i].opens, 1);
		cr_assert_eq(r[i].config, &r[i], "config handed over as given");
		cr_assert_eq(r[i].closes, 1);
		cr_assert_geq(r[i].ticks, 2, "flush and free tick");
		cr_assert_eq(r[i].n, mb.n, "every trace byte, tap %d", i);
		cr_assert(!memcmp(r[i].bytes, mb.p, mb.n), "the trace's own bytes, tap %d", i);
		free(r[i].bytes);
	}
	free(mb.p);
	/* A newer caller's longer spec passes when its unknown bytes are zero. */
	struct {
		struct lin_tap_spec s;
		uint64_t newer;
	} big[1] = { { { sizeof(big[0]), rec_open, &r[0] }, 0 } };
	memset(r, 0, sizeof(r));
	cr_assert_eq(create_taps(&big[0].s, 1), 0, "%s", logged);
	cr_assert_eq(r[0].opens, 1);
	free(r[0].bytes);
}

Test(otlp_tap, bad_specs_are_refused_before_any_tap_opens)
{
	struct rec_tap r = { 0 };
	struct lin_tap_spec ok = { sizeof(ok), rec_open, &r };
	struct lin_tap_spec no_open[2] = { ok, { sizeof(ok), NULL, &r } };
	cr_assert_eq(create_taps(no_open, 2), -EINVAL);
	cr_assert(strstr(logged, "tap 1: no open function"), "%s", logged);
	struct lin_tap_spec short_sz = { sizeof(size_t), rec_open, &r };
	cr_assert_eq(create_taps(&short_sz, 1), -EINVAL);
	cr_assert(strstr(logged, "tap 0: sz"), "%s", logged);
	struct lin_tap_spec unlike[2] = { ok, { sizeof(ok) + 8, rec_open, &r } };
	cr_assert_eq(create_taps(unlike, 2), -EINVAL);
	cr_assert(strstr(logged, "tap 1: sz"), "%s", logged);
	struct {
		struct lin_tap_spec s;
		uint64_t newer;
	} big = { { sizeof(big), rec_open, &r }, 1 };
	cr_assert_eq(create_taps(&big.s, 1), -EINVAL);
	cr_assert(strstr(logged, "does not know"), "%s", logged);
	cr_assert_eq(create_taps(NULL, 1), -EINVAL);
	struct lin_tap_spec many[LIN_TAPS_MAX + 1];
	for (size_t i = 0; i <= LIN_TAPS_MAX; i++)
		many[i] = ok;
	cr_assert_eq(create_taps(many, LIN_TAPS_MAX + 1), -EINVAL);
	cr_assert(strstr(logged, "at most"), "%s", logged);
	cr_assert_eq(r.opens, 0, "no tap opened");
}

Test(otlp_tap, an_opener_that_fails_fails_the_create_and_closes_the_taps_before_it)
{
	struct rec_tap r = { 0 };
	struct lin_tap_spec specs[2] = { { sizeof(specs[0]), rec_open, &r },
					 { sizeof(specs[1]), tap_fails, NULL } };
	cr_assert_eq(create_taps(specs, 2), -EMFILE);
	cr_assert_eq(r.opens, 1);
	cr_assert_eq(r.closes, 1, "the tap opened before is closed");
	free(r.bytes);
	/* Without the tap the same runtime runs the work (tracing never refuses it). */
	memset(&r, 0, sizeof(r));
	cr_assert_eq(create_taps(specs, 1), 0);
	cr_assert_eq(r.closes, 1);
	cr_assert_gt(r.n, 0);
	free(r.bytes);
}

Test(otlp_tap, an_opener_with_incomplete_operations_is_refused)
{
	struct rec_tap r = { 0 };
	struct lin_tap_spec half = { sizeof(half), tap_half, &r };
	cr_assert_eq(create_taps(&half, 1), -EINVAL);
	cr_assert(strstr(logged, "tap 0: incomplete operations"), "%s", logged);
	cr_assert_eq(r.closes, 1, "the incomplete tap is closed");
	cr_assert_eq(r.n, 0, "never fed");
}

Test(otlp_tap, a_short_operations_table_is_refused_and_read_no_further_than_its_sz)
{
	struct rec_tap r = { 0 };
	struct lin_tap_spec sh = { sizeof(sh), tap_short, &r };
	cr_assert_eq(create_taps(&sh, 1), -EINVAL);
	cr_assert(strstr(logged, "tap 0: incomplete operations"), "%s", logged);
	cr_assert_eq(r.closes, 0, "close lies past the table's sz: never called");
	cr_assert_eq(r.n, 0, "never fed");
}

Test(otlp_tap, an_opener_returning_a_positive_value_fails_the_create_with_einval)
{
	struct rec_tap r = { 0 };
	struct lin_tap_spec specs[2] = { { sizeof(specs[0]), rec_open, &r },
					 { sizeof(specs[1]), tap_positive, NULL } };
	cr_assert_eq(create_taps(specs, 2), -EINVAL, "never the opener's 1");
	cr_assert(strstr(logged, "tap 1: open returned 1"), "%s", logged);
	cr_assert_eq(r.closes, 1, "the tap opened before is closed");
	free(r.bytes);
}

Test(otlp_tap, an_opener_outside_the_contract_has_its_tap_closed_and_never_its_value_returned)
{
	struct rec_tap r = { 0 };
	struct lin_tap_spec pos = { sizeof(pos), tap_opened_positive, &r };
	cr_assert_eq(create_taps(&pos, 1), -EINVAL);
	cr_assert(strstr(logged, "tap 0: open returned 2"), "%s", logged);
	cr_assert_eq(r.closes, 1, "what it opened is closed");
	memset(&r, 0, sizeof(r));
	struct lin_tap_spec low = { sizeof(low), tap_opened_int_min, &r };
	cr_assert_eq(create_taps(&low, 1), -EINVAL, "INT_MIN is no errno: never negated by a caller");
	cr_assert_eq(r.closes, 1);
	cr_assert_eq(r.n, 0, "never fed");
}

Test(otlp_tap, a_spec_sz_past_the_options_limit_is_refused_unread)
{
	/* An sz over LIN_OPTS_IN_MAX is an uninitialised one: refused even when every byte it
	 * covers is zero (here they are: read, it would pass). */
	static union {
		struct lin_tap_spec s;
		unsigned char b[8192];
	} big;
	struct rec_tap r = { 0 };
	big.s = (struct lin_tap_spec){ 5000, rec_open, &r };
	cr_assert_eq(create_taps(&big.s, 1), -EINVAL);
	cr_assert(strstr(logged, "tap 0: sz 5000"), "%s", logged);
	cr_assert_eq(r.opens, 0);
	/* At the limit, with zeros past the spec, it is a newer caller's spec: taken. */
	big.s.sz = 4096;
	cr_assert_eq(create_taps(&big.s, 1), 0, "%s", logged);
	cr_assert_eq(r.opens, 1);
	free(r.bytes);
}

Test(otlp_tap, reserved_options_are_refused_and_say_why)
{
	lin_runtime *rt = NULL;
	struct lin_runtime_opts o = { .sz = sizeof(o), .log = keep_log };
	o.reserved_0_2[0] = "run.otlp.json"; /* where a 0.4 program had otlp_path */
	logged[0] = 0;
	cr_assert_eq(lin_runtime_create(&o, &rt), -EINVAL);
	cr_assert_null(rt);
	cr_assert(strstr(logged, "taps"), "%s", logged);
	o.reserved_0_2[0] = NULL;
	o.reserved_0_4 = "svc";
	cr_assert_eq(lin_runtime_create(&o, &rt), -EINVAL);
	o.reserved_0_4 = NULL;
	logged[0] = 0;
	cr_assert_eq(lin_runtime_create(&o, &rt), 0);
	lin_runtime_free(rt);
	cr_assert_str_eq(logged, "", "no taps: nothing asked, nothing logged");
}

Test(otlp_tap, runtime_log_goes_through_the_callback_and_ignores_bad_arguments)
{
	lin_runtime *rt = NULL;
	struct lin_runtime_opts o = { .sz = sizeof(o), .log = keep_log };
	cr_assert_eq(lin_runtime_create(&o, &rt), 0);
	logged[0] = 0;
	lin_runtime_log(rt, LIN_LOG_ERROR, "tap says %d", 42);
	cr_assert_str_eq(logged, "tap says 42");
	logged[0] = 0;
	lin_runtime_log(NULL, LIN_LOG_ERROR, "nobody");
	lin_runtime_log(rt, (enum lin_log_level)9, "bad level");
	lin_runtime_log(rt, LIN_LOG_ERROR, NULL);
	cr_assert_str_eq(logged, "");
	lin_runtime_free(rt);
}
