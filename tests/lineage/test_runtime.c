/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <unistd.h>

#include "rt_fixture.h"
#include <stdio.h>
#include <stdlib.h>
#include "lineage/tap.h"

Test(runtime, create_with_defaults_and_free)
{
	lin_runtime *rt = NULL;
	cr_assert_eq(lin_runtime_create(NULL, &rt), 0);
	cr_assert_not_null(rt);
	struct lin_runtime_stats st = { .sz = sizeof(st) };
	cr_assert_eq(lin_runtime_get_stats(rt, &st), 0);
	cr_assert_eq(st.live_epochs, 0);
	cr_assert_eq(st.bytes_written, 0, "no trace output was asked for");
	lin_runtime_free(rt);
	lin_runtime_free(NULL);
	LIN_TEST_CHECK_LEAKS();
}

Test(runtime, rejects_bad_options)
{
	lin_runtime *rt = (lin_runtime *)0x1;
	struct lin_runtime_opts o = { .sz = sizeof(o), .flags = 1u << 30 };
	cr_assert_eq(lin_runtime_create(&o, &rt), -EINVAL, "unknown flag");
	cr_assert_null(rt, "*out is cleared on failure");
	o = (struct lin_runtime_opts){ .sz = sizeof(o), .thread_buffer_events = 1000 };
	cr_assert_eq(lin_runtime_create(&o, &rt), -EINVAL, "buffer size not a power of two");
	struct membuf m = { 0 };
	o = (struct lin_runtime_opts){
		.sz = sizeof(o), .trace_path = "/tmp/x", .trace_write = membuf_write, .trace_user = &m
	};
	cr_assert_eq(lin_runtime_create(&o, &rt), -EINVAL, "path and callback together");
	o = (struct lin_runtime_opts){ .sz = sizeof(o), .backend = LIN_BACKEND_CUSTOM };
	cr_assert_eq(lin_runtime_create(&o, &rt), -EINVAL, "custom backend without ops");
	o = (struct lin_runtime_opts){ .sz = 0 };
	cr_assert_eq(lin_runtime_create(&o, &rt), -EINVAL, "sz not set");
	cr_assert_eq(lin_runtime_create(NULL, NULL), -EINVAL);
}

Test(runtime, rejects_unknown_nonzero_trailing_option_bytes)
{
	struct {
		struct lin_runtime_opts o;
		uint64_t future;
	} big = { .o = { .sz = sizeof(big) }, .future = 0 };
	lin_runtime *rt = NULL;
	cr_assert_eq(lin_runtime_create(&big.o, &rt), 0, "zero trailing bytes are accepted");
	lin_runtime_free(rt);
	big.future = 7;
	cr_assert_eq(lin_runtime_create(&big.o, &rt), -EINVAL, "non-zero trailing bytes are refused");
}

Test(runtime, unopenable_trace_path_is_an_error)
{
	lin_runtime *rt = NULL;
	struct lin_runtime_opts o = { .sz = sizeof(o), .trace_path = "/nonexistent-dir/t.msgpack" };
	cr_assert_eq(lin_runtime_create(&o, &rt), -ENOENT);
	cr_assert_null(rt);
	LIN_TEST_CHECK_LEAKS();
}

Test(runtime, trace_header_names_format_process_and_clocks)
{
	struct rtfix f;
	rtfix_open(&f, LIN_RT_NO_WRITER_THREAD, NULL);
	struct trace *t = rtfix_close(&f);
	const msgpack_object *v = trace_hdr(t, "format");
	cr_assert(v && v->type == MSGPACK_OBJECT_STR);
	cr_assert_eq(strncmp(v->via.str.ptr, "lineage-trace", v->via.str.size), 0);
	v = trace_hdr(t, "version");
	cr_assert(v && v->type == MSGPACK_OBJECT_ARRAY && v->via.array.size == 2);
	cr_assert_eq(v->via.array.ptr[0].via.u64, LIN_TRACE_FORMAT_MAJOR);
	v = trace_hdr(t, "pid");
	cr_assert(v && v->via.u64 == (uint64_t)getpid());
	v = trace_hdr(t, "host_clock");
	cr_assert(v && !strncmp(v->via.str.ptr, "CLOCK_MONOTONIC", v->via.str.size));
	v = trace_hdr(t, "ext_kind");
	cr_assert(v && v->via.u64 == 5, "CUSTOM2 by default");
	v = trace_hdr(t, "backend");
	cr_assert(v && !strncmp(v->via.str.ptr, "none", v->via.str.size));
	cr_assert_eq(t->n, 1, "an idle runtime writes only the header and the end");
	cr_assert_eq(rec_type(&t->rec[0]), LIN_REC_TRACE_END);
	rtfix_fini(&f);
	LIN_TEST_CHECK_LEAKS();
}

Test(runtime, writes_to_a_file_path)
{
	char path[] = "/tmp/lineage-test-XXXXXX";
	int fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	close(fd);
	lin_runtime *rt = NULL;
	struct lin_runtime_opts o = { .sz = sizeof(o), .trace_path = path };
	cr_assert_eq(lin_runtime_create(&o, &rt), 0);
	uint64_t req;
	cr_assert_eq(lin_request_begin(rt, NULL, &req), 0);
	cr_assert_eq(lin_runtime_flush(rt), 0);
	struct trace t;
	cr_assert_eq(trace_load(&t, path), 0, "flushed trace is readable while the runtime lives");
	cr_assert_eq(trace_count(&t, LIN_REC_REQUEST_BEGIN), 1);
	trace_free(&t);
	lin_runtime_free(rt);
	unlink(path);
}

Test(runtime, writer_thread_drains_without_explicit_flush)
{
	struct membuf m = { 0 };
	lin_runtime *rt = NULL;
	struct lin_runtime_opts o = {
		.sz = sizeof(o), .trace_write = membuf_write, .trace_user = &m, .flush_interval_ms = 5
	};
	cr_assert_eq(lin_runtime_create(&o, &rt), 0);
	uint64_t req;
	cr_assert_eq(lin_request_begin(rt, NULL, &req), 0);
	struct lin_runtime_stats st = { .sz = sizeof(st) };
	size_t header_bytes = 0;
	for (int i = 0; i < 2000; i++) {
		lin_runtime_get_stats(rt, &st);
		if (i == 0)
			header_bytes = st.bytes_written;
		if (st.bytes_written > header_bytes)
			break;
		usleep(1000);
	}
	cr_assert_gt(st.bytes_written, header_bytes, "the writer thread wrote the event");
	lin_runtime_free(rt);
	free(m.p);
}

Test(errors, names_and_messages)
{
	cr_assert_str_eq(lin_err_name(-LIN_ESTALE_TOKEN), "LIN_ESTALE_TOKEN");
	cr_assert_str_eq(lin_err_name(-EINVAL), "EINVAL");
	cr_assert_str_eq(lin_err_name(-123456), "?");
	cr_assert_str_eq(lin_strerror(-LIN_ESCOPE_ORDER), "scope closed out of LIFO order");
	cr_assert_str_eq(lin_strerror(-999999), "unknown error");
	cr_assert_str_eq(lin_strerror(0), "success");
}

Test(errors, version_string_matches_header)
{
	char want[32];
	snprintf(want, sizeof(want), "%d.%d.%d", LIN_VERSION_MAJOR, LIN_VERSION_MINOR, LIN_VERSION_PATCH);
	cr_assert_str_eq(lin_version_string(), want);
}

/* Output structs grow as option structs do: a caller's shorter struct gets only the fields
 * its sz covers (the rest of its memory untouched), a longer one gets zeros past what the
 * library knows; sz itself is kept. (Both used to be refused below the library's size.) */
struct stats_v2 {
	struct lin_runtime_stats s;
	uint64_t later[2]; /* fields a later library might add */
};

Test(runtime, output_structs_fill_what_the_caller_sz_covers)
{
	struct rtfix f;
	rtfix_open(&f, LIN_RT_NO_WRITER_THREAD, NULL);
	lin_scope rs;
	uint64_t req = rtfix_request(&f, &rs);

	struct lin_runtime_stats small;
	memset(&small, 0xab, sizeof(small));
	small.sz = offsetof(struct lin_runtime_stats, events);
	cr_assert_eq(lin_runtime_get_stats(f.rt, &small), 0);
	cr_assert_eq(small.sz, offsetof(struct lin_runtime_stats, events));
	cr_assert_eq(small.live_requests, 1);
	cr_assert_eq(small.events, 0xababababababababull, "past the caller's sz: untouched");

	struct stats_v2 big;
	memset(&big, 0xab, sizeof(big));
	big.s.sz = sizeof(big);
	cr_assert_eq(lin_runtime_get_stats(f.rt, &big.s), 0);
	cr_assert_eq(big.s.sz, sizeof(big));
	cr_assert_eq(big.s.live_requests, 1);
	cr_assert_eq(big.later[0], 0, "past what the library knows: zero");
	cr_assert_eq(big.later[1], 0);

	struct lin_runtime_stats bad = { .sz = 0 };
	cr_assert_eq(lin_runtime_get_stats(f.rt, &bad), -EINVAL);
	bad.sz = 1u << 20;
	cr_assert_eq(lin_runtime_get_stats(f.rt, &bad), -EINVAL, "an sz never set");

	struct lin_entity_info info;
	memset(&info, 0xcd, sizeof(info));
	info.sz = offsetof(struct lin_entity_info, parent);
	cr_assert_eq(lin_entity_lookup(f.rt, req, &info, NULL, 0), 0);
	cr_assert_eq(info.kind, LIN_TARGET_REQUEST);
	cr_assert_eq(info.n_requests, (size_t)0xcdcdcdcdcdcdcdcdull, "past the caller's sz");
	struct {
		struct lin_entity_info i;
		uint64_t later;
	} info2;
	memset(&info2, 0xcd, sizeof(info2));
	info2.i.sz = sizeof(info2);
	cr_assert_eq(lin_entity_lookup(f.rt, req, &info2.i, NULL, 0), 0);
	cr_assert_eq(info2.i.kind, LIN_TARGET_REQUEST);
	cr_assert_eq(info2.later, 0);
	info.sz = 0;
	cr_assert_eq(lin_entity_lookup(f.rt, req, &info, NULL, 0), -EINVAL);

	lin_scope_exit(f.rt, &rs);
	rtfix_fini(&f);
}

/* Standard error into a file while @fn runs (by hand: the TSan build's test runner has no
 * Criterion redirect); what was written, in @buf. */
static void stderr_of(void (*fn)(void), char *buf, size_t n)
{
	char path[] = "/tmp/lin-log-XXXXXX";
	int fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	fflush(stderr);
	int saved = dup(2);
	cr_assert_geq(dup2(fd, 2), 0);
	fn();
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	memset(buf, 0, n);
	ssize_t got = pread(fd, buf, n - 1, 0);
	close(fd);
	unlink(path);
	cr_assert_geq(got, 0);
}

static int n_status;
static void count_status(enum lin_log_level level, const char *msg, void *user)
{
	(void)user;
	if (level == LIN_LOG_WARN && strstr(msg, "recording host-side lineage only"))
		n_status++;
}

/* One runtime with the CUPTI backend and no log callback, a launch, closed. */
static void open_cupti_runtime(void)
{
	struct lin_runtime_opts o = { .sz = sizeof(o), .backend = LIN_BACKEND_CUPTI };
	lin_runtime *rt = NULL;
	cr_assert_eq(lin_runtime_create(&o, &rt), 0);
	lin_launch l;
	(void)lin_launch_begin(rt, "k", &l); /* no context: a misuse record, no log line */
	lin_runtime_free(rt);
}

static void open_twice(void)
{
	open_cupti_runtime();
	open_cupti_runtime();
}

static void open_none_runtime(void)
{
	lin_runtime *rt = NULL;
	cr_assert_eq(lin_runtime_create(NULL, &rt), 0);
	lin_runtime_free(rt);
}

static void open_cupti_with_callback(void)
{
	struct lin_runtime_opts o = { .sz = sizeof(o), .backend = LIN_BACKEND_CUPTI, .log = count_status };
	lin_runtime *rt = NULL;
	cr_assert_eq(lin_runtime_create(&o, &rt), 0);
	lin_runtime_free(rt);
}

static size_t count_lines(const char *buf, const char *what)
{
	size_t n = 0;
	for (const char *p = buf; (p = strstr(p, what)); p++)
		n++;
	return n;
}

/* The CUPTI backend's host-only fallback is said once per runtime open on standard error
 * by default (a trace with no GPU records must not be the first sign); LINEAGE_LOG=off or
 * error silences it, =warn says it once (not twice), a callback gets it instead of stderr,
 * and a runtime without the CUPTI backend says nothing. */
Test(log, cupti_fallback_is_one_stderr_line_per_open_by_default)
{
	struct lin_runtime_opts o = { .sz = sizeof(o), .backend = LIN_BACKEND_CUPTI, .log = count_status };
	lin_runtime *rt = NULL;
	n_status = 0;
	unsetenv("LINEAGE_LOG");
	cr_assert_eq(lin_runtime_create(&o, &rt), 0);
	lin_runtime_free(rt);
	if (n_status == 0)
		cr_skip_test("CUPTI works here (a GPU and driver): no fallback to report");
	cr_assert_eq(n_status, 1, "the callback gets the line once");

	char buf[4096];
	stderr_of(open_twice, buf, sizeof(buf));
	cr_assert_eq(count_lines(buf, "\n"), 2, "one line per open: [%s]", buf);
	cr_assert_eq(count_lines(buf, "lineage: warn: CUPTI is not usable ("), 2, "[%s]", buf);
	cr_assert(strstr(buf, "recording host-side lineage only") && strstr(buf, "LINEAGE_LOG=off"),
		  "[%s]", buf);

	setenv("LINEAGE_LOG", "warn", 1);
	stderr_of(open_cupti_runtime, buf, sizeof(buf));
	cr_assert_eq(count_lines(buf, "CUPTI is not usable"), 1, "LINEAGE_LOG=warn: once [%s]", buf);
	setenv("LINEAGE_LOG", "off", 1);
	stderr_of(open_cupti_runtime, buf, sizeof(buf));
	cr_assert_str_eq(buf, "", "LINEAGE_LOG=off: silent");
	setenv("LINEAGE_LOG", "error", 1);
	stderr_of(open_cupti_runtime, buf, sizeof(buf));
	cr_assert_str_eq(buf, "", "LINEAGE_LOG=error: silent");
	unsetenv("LINEAGE_LOG");

	stderr_of(open_none_runtime, buf, sizeof(buf));
	cr_assert_str_eq(buf, "", "backend none: nothing to say");
	n_status = 0;
	stderr_of(open_cupti_with_callback, buf, sizeof(buf));
	cr_assert_str_eq(buf, "", "a callback takes the line off stderr");
	cr_assert_eq(n_status, 1);
}

/* Without a log callback, LINEAGE_LOG picks the level that goes to standard error. (Standard
 * error goes to a file by hand: the TSan build's test runner has no Criterion redirect.) */
Test(log, lineage_log_sets_the_level_written_to_stderr)
{
	char path[] = "/tmp/lin-log-XXXXXX";
	int fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	fflush(stderr);
	int saved = dup(2);
	cr_assert_geq(dup2(fd, 2), 0);
	lin_runtime *rt = NULL;
	setenv("LINEAGE_LOG", "warn", 1);
	cr_assert_eq(lin_runtime_create(NULL, &rt), 0);
	lin_runtime_log(rt, LIN_LOG_ERROR, "e%d", 1);
	lin_runtime_log(rt, LIN_LOG_WARN, "w%d", 2);
	lin_runtime_log(rt, LIN_LOG_INFO, "i%d", 3); /* above warn: not written */
	lin_runtime_free(rt);
	unsetenv("LINEAGE_LOG");
	cr_assert_eq(lin_runtime_create(NULL, &rt), 0);
	lin_runtime_log(rt, LIN_LOG_ERROR, "unset: silent");
	lin_runtime_free(rt);
	setenv("LINEAGE_LOG", "off", 1);
	cr_assert_eq(lin_runtime_create(NULL, &rt), 0);
	lin_runtime_log(rt, LIN_LOG_ERROR, "off: silent");
	lin_runtime_free(rt);
	setenv("LINEAGE_LOG", "loud", 1); /* not a level: silent */
	cr_assert_eq(lin_runtime_create(NULL, &rt), 0);
	lin_runtime_log(rt, LIN_LOG_ERROR, "bad level name: silent");
	lin_runtime_free(rt);
	unsetenv("LINEAGE_LOG");
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	char buf[256] = { 0 };
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
	close(fd);
	unlink(path);
	cr_assert_geq(n, 0);
	cr_assert_str_eq(buf, "lineage: error: e1\nlineage: warn: w2\n");
}
