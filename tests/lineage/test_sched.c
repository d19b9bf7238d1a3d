/* SPDX-License-Identifier: MIT */
/*
 * test_sched.c - the host scheduling collector's switches and refusals that need no kernel
 * support (lineage/hostsched.c): off by default, turned on by the option or the
 * environment, and every refusal the kernel can give (injected through the test hook
 * LINEAGE_TEST_SCHED_FAULT, as perf_event_open failing with that errno) stated in the
 * header and the log, never failing the runtime. The kernel-backed paths (records,
 * overrun, a refusal after start, fork) are in sched_live.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rt_fixture.h"

struct logbuf {
	char text[2048];
	int n;
};

static void log_cb(enum lin_log_level level, const char *msg, void *user)
{
	struct logbuf *l = user;
	(void)level;
	size_t have = strlen(l->text);
	snprintf(l->text + have, sizeof(l->text) - have, "%s\n", msg);
	l->n++;
}

/* A runtime with @flags, a request on this thread (it registers), its trace parsed. */
static struct trace *run(struct rtfix *f, uint32_t flags, struct logbuf *lg)
{
	memset(f, 0, sizeof(*f));
	struct lin_runtime_opts o = { .sz = sizeof(o),
				      .trace_write = membuf_write,
				      .trace_user = &f->out,
				      .flags = flags | LIN_RT_NO_WRITER_THREAD,
				      .log = log_cb,
				      .log_user = lg };
	int err = lin_runtime_create(&o, &f->rt);
	cr_assert_eq(err, 0, "a refused collector never fails the create: %s", lin_strerror(err));
	lin_scope s;
	uint64_t req = rtfix_request(f, &s);
	cr_assert_neq(req, 0);
	lin_scope_exit(f->rt, &s);
	cr_assert_eq(lin_runtime_flush(f->rt), 0);
	return rtfix_close(f);
}

static bool hdr_has(const struct trace *t, const char *key, const char *needle)
{
	const msgpack_object *v = trace_hdr(t, key);
	if (!v || v->type != MSGPACK_OBJECT_STR)
		return false;
	char buf[256];
	size_t n = v->via.str.size < sizeof(buf) - 1 ? v->via.str.size : sizeof(buf) - 1;
	memcpy(buf, v->via.str.ptr, n);
	buf[n] = 0;
	return strstr(buf, needle) != NULL;
}

Test(sched, off_by_default_no_header_key_no_records)
{
	unsetenv("LINEAGE_SCHED_EVENTS");
	struct rtfix f;
	struct logbuf lg = { 0 };
	struct trace *t = run(&f, 0, &lg);
	cr_assert_null(trace_hdr(t, "host_sched"), "not asked for: no key");
	cr_assert_eq(trace_count(t, LIN_REC_HOST_SCHED), 0);
	cr_assert_eq(trace_count(t, LIN_REC_DROPPED), 0);
	cr_assert_null(strstr(lg.text, "host scheduling"), "%s", lg.text);
	rtfix_fini(&f);
}

Test(sched, env_zero_leaves_it_off)
{
	setenv("LINEAGE_SCHED_EVENTS", "0", 1);
	setenv("LINEAGE_TEST_SCHED_FAULT", "EACCES", 1);
	struct rtfix f;
	struct logbuf lg = { 0 };
	struct trace *t = run(&f, 0, &lg);
	cr_assert_null(trace_hdr(t, "host_sched"));
	cr_assert_eq(lg.n, 0, "%s", lg.text);
	rtfix_fini(&f);
}

/* Refused at the probe: the header and one log line say why; the work is recorded. */
static void refused(const char *fault, const char *name, bool by_env)
{
	if (by_env)
		setenv("LINEAGE_SCHED_EVENTS", "1", 1);
	else
		unsetenv("LINEAGE_SCHED_EVENTS");
	setenv("LINEAGE_TEST_SCHED_FAULT", fault, 1);
	struct rtfix f;
	struct logbuf lg = { 0 };
	struct trace *t = run(&f, by_env ? 0 : LIN_RT_SCHED_EVENTS, &lg);
	cr_assert(hdr_has(t, "host_sched", "refused: perf_event_open: "), "header states the refusal");
	cr_assert(hdr_has(t, "host_sched", name), "header names %s", name);
	cr_assert_not_null(strstr(lg.text, "refused"), "log: %s", lg.text);
	cr_assert_not_null(strstr(lg.text, name), "log names %s: %s", name, lg.text);
	cr_assert_eq(trace_count(t, LIN_REC_HOST_SCHED), 0);
	cr_assert_eq(trace_count(t, LIN_REC_REQUEST_BEGIN), 1, "the work is recorded all the same");
	/* Refused for the whole run, said once: no per-thread dropped record. */
	cr_assert_eq(trace_count(t, LIN_REC_DROPPED), 0);
	rtfix_fini(&f);
}

Test(sched, refused_eacces_paranoid) { refused("EACCES", "EACCES", false); }
Test(sched, refused_eperm_seccomp) { refused("EPERM", "EPERM", false); }
Test(sched, refused_enoent_no_perf) { refused("ENOENT", "ENOENT", false); }
Test(sched, refused_enosys_no_syscall) { refused("ENOSYS", "ENOSYS", false); }
Test(sched, refused_emfile_out_of_fds) { refused("EMFILE", "EMFILE", false); }
Test(sched, environment_turns_it_on) { refused("ENOENT", "ENOENT", true); }

Test(sched, unknown_flag_still_refused)
{
	lin_runtime *rt = NULL;
	struct lin_runtime_opts o = { .sz = sizeof(o), .flags = LIN_RT_SCHED_EVENTS << 1 };
	cr_assert_eq(lin_runtime_create(&o, &rt), -EINVAL, "the next flag is not known yet");
	o.flags = LIN_RT_SCHED_EVENTS;
	setenv("LINEAGE_TEST_SCHED_FAULT", "ENOSYS", 1);
	cr_assert_eq(lin_runtime_create(&o, &rt), 0);
	lin_runtime_free(rt);
}
