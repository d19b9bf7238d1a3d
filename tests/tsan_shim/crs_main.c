/* SPDX-License-Identifier: MIT */
/* The runner behind tests/tsan_shim/criterion/criterion.h (TSan builds only). */
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "criterion/criterion.h"

static struct crs_test *tests;
static struct crs_suite *suites;
static int failures_in_child;

void crs_register(struct crs_test *t)
{
	t->next = tests;
	tests = t;
}

void crs_register_suite(struct crs_suite *s)
{
	s->next = suites;
	suites = s;
}

void crs_fail(bool fatal, const char *file, int line, const char *expr, const char *fmt, ...)
{
	char msg[1024] = "";
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	const char *m = msg[0] == ' ' ? msg + 1 : msg;
	fprintf(stderr, "[----] %s:%d: Assertion Failed: %s%s%s\n", file, line, expr,
		m[0] ? ": " : "", m);
	failures_in_child++;
	if (fatal)
		_exit(1);
}

void crs_skip(const char *fmt, ...)
{
	char msg[1024] = "";
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "[SKIP] %s\n", msg);
	_exit(failures_in_child ? 1 : 0);
}

static const struct crs_suite *suite_of(const struct crs_test *t)
{
	for (const struct crs_suite *s = suites; s; s = s->next)
		if (!strcmp(s->name, t->suite))
			return s;
	return NULL;
}

/* 0 pass, 1 fail, 2 crash */
static int run_one(const struct crs_test *t)
{
	const struct crs_suite *s = suite_of(t);
	double timeout = t->timeout > 0 ? t->timeout : (s && s->timeout > 0 ? s->timeout : 0);
	pid_t pid = fork();
	if (pid < 0)
		return 2;
	if (pid == 0) {
		if (timeout > 0)
			alarm((unsigned)(timeout + 0.999));
		if (s && s->init)
			s->init();
		if (t->init)
			t->init();
		t->fn();
		if (t->fini)
			t->fini();
		if (s && s->fini)
			s->fini();
		_exit(failures_in_child ? 1 : 0);
	}
	int st;
	while (waitpid(pid, &st, 0) < 0)
		;
	if (WIFSIGNALED(st)) {
		if (t->signal && WTERMSIG(st) == t->signal)
			return 0;
		fprintf(stderr, "[FAIL] %s::%s: CRASH (signal %d)\n", t->suite, t->name, WTERMSIG(st));
		return 2;
	}
	int code = WEXITSTATUS(st);
	if (t->signal) {
		fprintf(stderr, "[FAIL] %s::%s: expected signal %d\n", t->suite, t->name, t->signal);
		return 1;
	}
	if (code != t->exit_code) {
		fprintf(stderr, "[FAIL] %s::%s\n", t->suite, t->name);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *filter = NULL;
	for (int i = 1; i < argc; i++)
		if (!strncmp(argv[i], "--filter=", 9))
			filter = argv[i] + 9;
	int tested = 0, passed = 0, failed = 0, crashed = 0;
	for (struct crs_test *t = tests; t; t = t->next) {
		const struct crs_suite *s = suite_of(t);
		if (t->disabled || (s && s->disabled))
			continue;
		char full[256];
		snprintf(full, sizeof(full), "%s/%s", t->suite, t->name);
		if (filter && strcmp(filter, full))
			continue;
		tested++;
		int r = run_one(t);
		passed += r == 0;
		failed += r != 0;
		crashed += r == 2;
	}
	fprintf(stderr, "[====] Synthesis: Tested: %d | Passing: %d | Failing: %d | Crashing: %d \n",
		tested, passed, failed, crashed);
	return failed ? 1 : 0;
}
