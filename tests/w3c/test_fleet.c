/* SPDX-License-Identifier: MIT */
/*
 * test_fleet.c - two real processes: the first begins a request and sends its epoch's
 * traceparent + tracestate through a pipe; the second begins its request from them. Then
 * lineage-validate, given both traces, must join the second process's request to the first
 * process's epoch (--export-otlp counts it) and put both in one trace.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "lineage/w3c.h"

static int receiver(int fd, const char *trace)
{
	struct lin_w3c_headers h;
	size_t got = 0;
	while (got < sizeof(h)) {
		ssize_t n = read(fd, (char *)&h + got, sizeof(h) - got);
		if (n <= 0)
			return 10;
		got += (size_t)n;
	}
	struct lin_w3c_context c;
	if (lin_w3c_extract(h.traceparent, h.tracestate, &c) || !c.has_token)
		return 11;
	struct lin_runtime_opts o = { .sz = sizeof(o), .trace_path = trace };
	lin_runtime *rt;
	if (lin_runtime_create(&o, &rt))
		return 12;
	lin_scope s;
	if (lin_w3c_adopt(rt, &c, &s) != -LIN_EFOREIGN)
		return 13; /* another process's token is never adopted as if local */
	struct lin_request_opts ro = { .sz = sizeof(ro), .name = "worker" };
	uint64_t req, ep;
	if (lin_w3c_request_begin(rt, &c, &ro, &req) || lin_scope_enter(rt, req, &s))
		return 14;
	struct lin_epoch_opts eo = { .sz = sizeof(eo) };
	if (lin_epoch_declare(rt, &eo, &ep) || lin_scope_exit(rt, &s))
		return 15;
	lin_epoch_retire(rt, ep);
	lin_request_end(rt, req);
	lin_runtime_free(rt);
	return 0;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	cr_assert(f, "%s: %s", path, strerror(errno));
	static char buf[1 << 20];
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	return buf;
}

Test(w3c_fleet, two_processes_join_through_traceparent)
{
	char dir[] = "/tmp/lin-fleet-XXXXXX";
	cr_assert(mkdtemp(dir));
	char ta[256], tb[256], out[256], err[256], cmd[2048];
	snprintf(ta, sizeof(ta), "%s/a.lt", dir);
	snprintf(tb, sizeof(tb), "%s/b.lt", dir);
	snprintf(out, sizeof(out), "%s/out.json", dir);
	snprintf(err, sizeof(err), "%s/err.txt", dir);
	int p[2];
	cr_assert_eq(pipe(p), 0);
	pid_t child = fork();
	cr_assert(child >= 0);
	if (child == 0) {
		close(p[1]);
		_exit(receiver(p[0], tb));
	}
	close(p[0]);
	struct lin_runtime_opts o = { .sz = sizeof(o), .trace_path = ta };
	lin_runtime *rt;
	cr_assert_eq(lin_runtime_create(&o, &rt), 0);
	uint64_t req, ep;
	struct lin_request_opts ro = { .sz = sizeof(ro), .name = "frontend" };
	cr_assert_eq(lin_request_begin(rt, &ro, &req), 0);
	struct lin_epoch_opts eo = { .sz = sizeof(eo), .requests = &req, .n_requests = 1 };
	cr_assert_eq(lin_epoch_declare(rt, &eo, &ep), 0);
	lin_token tok;
	cr_assert_eq(lin_token_make(rt, ep, &tok), 0);
	struct lin_w3c_headers h;
	cr_assert_eq(lin_w3c_inject(rt, &tok, NULL, NULL, LIN_W3C_FLAG_SAMPLED, &h), 0);
	cr_assert_eq(write(p[1], &h, sizeof(h)), (ssize_t)sizeof(h));
	close(p[1]);
	int st;
	cr_assert_eq(waitpid(child, &st, 0), child);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "receiver failed: %d", WEXITSTATUS(st));
	lin_epoch_retire(rt, ep);
	lin_request_end(rt, req);
	lin_runtime_free(rt);

	/* Host-side lineage only (no GPU work): --allow-empty, or the run is refused as vacuous. */
	snprintf(cmd, sizeof(cmd), "%s --allow-empty --json --export-otlp %s %s %s >/dev/null 2>%s",
		 LIN_VALIDATE_BIN, out, ta, tb, err);
	int rc = system(cmd);
	cr_assert(WIFEXITED(rc) && WEXITSTATUS(rc) == 0, "lineage-validate exit %d: %s",
		  WEXITSTATUS(rc), slurp(err));
	const char *stats = slurp(err);
	cr_assert(strstr(stats, " resources=2 "), "%s", stats);
	cr_assert(strstr(stats, " remote_requests=1 remote_joined=1 "), "%s", stats);

	/* both requests are in one trace: the sender's (process key, request id) */
	char host[256];
	cr_assert_eq(gethostname(host, sizeof(host)), 0);
	host[255] = 0;
	uint64_t key = lin_w3c_proc_key(host, (uint64_t)getpid());
	char trace[80], parent[80];
	snprintf(trace, sizeof(trace), "\"traceId\":\"%016llx%016llx\"", (unsigned long long)key,
		 (unsigned long long)req);
	snprintf(parent, sizeof(parent), "\"parentSpanId\":\"%016llx\"",
		 (unsigned long long)lin_w3c_span_id(key, ep));
	const char *json = slurp(out);
	int in_trace = 0;
	for (const char *s = json; (s = strstr(s, trace)); s++)
		in_trace++;
	/* sender: request + epoch; receiver: request "worker", its epoch, its scope */
	cr_assert_eq(in_trace, 5, "spans in the sender's trace: %d", in_trace);
	const char *w = strstr(json, "\"name\":\"worker\"");
	cr_assert(w, "receiver's request span");
	const char *span_start = w;
	while (span_start > json && strncmp(span_start, "{\"traceId\"", 10))
		span_start--;
	cr_assert(strstr(span_start, trace) == span_start + 1, "worker span is in the sender's trace");
	const char *pp = strstr(span_start, parent);
	cr_assert(pp && pp < w, "worker span's parent is the sender's epoch span");
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	cr_assert_eq(system(cmd), 0);
}
