/* SPDX-License-Identifier: MIT */
/*
 * test_verdict.c - lineage-validate --export-otlp hangs every GPU span where the
 * validator's verdict puts it: under the joined epoch's span (observed, or inferred by any
 * rule, lineage.join.rule naming it) or, lost and ambiguous, under the process span with
 * an error status.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "lin_test.h"

#define MAX_SPANS 64

struct doc {
	char *json; /* the export */
	char *buf;  /* a copy, cut into spans */
	int n;
	char *span[MAX_SPANS]; /* each span's text up to the next span (NUL-ended) */
};

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	cr_assert_not_null(f, "%s", path);
	static char buf[1 << 20];
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	return strdup(buf);
}

/* Export @fixture; split the output into spans (links start with "traceId" too: none of
 * these fixtures has a fan-in epoch). */
static void export(struct doc *d, const char *fixture, int want_exit)
{
	char dir[] = "/tmp/lin-otlp-verdict-XXXXXX";
	cr_assert_not_null(mkdtemp(dir));
	char cmd[8192], out[256];
	snprintf(out, sizeof(out), "%s/out.json", dir);
	snprintf(cmd, sizeof(cmd), "'%s' --export-otlp %s '%s/%s' >/dev/null 2>%s/err.txt",
		 LIN_VALIDATE_BIN, out, LIN_FIXTURE_GEN_DIR, fixture, dir);
	int rc = system(cmd);
	cr_assert(WIFEXITED(rc) && WEXITSTATUS(rc) == want_exit, "%s: exit %d, want %d", fixture,
		  WEXITSTATUS(rc), want_exit);
	d->json = slurp(out);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	cr_assert_eq(system(cmd), 0);
	cr_assert_null(strstr(d->json, "not_exported"));
	static const char tag[] = "{\"traceId\":";
	char *at[MAX_SPANS];
	d->buf = strdup(d->json);
	cr_assert_not_null(d->buf);
	d->n = 0;
	for (char *s = strstr(d->buf, tag); s; s = strstr(s + 1, tag)) {
		cr_assert_lt(d->n, MAX_SPANS);
		at[d->n++] = s;
	}
	for (int i = 0; i < d->n; i++) {
		d->span[i] = at[i] + 1;
		if (i + 1 < d->n)
			*at[i + 1] = 0;
	}
}

static void done(struct doc *d)
{
	free(d->json);
	free(d->buf);
}

/* The string after "@key":" or a "@key" attribute's stringValue/intValue, in @out. */
static const char *field(const char *span, const char *key, char *out, size_t len)
{
	char pat[128];
	const char *p;
	snprintf(pat, sizeof(pat), "\"%s\":\"", key);
	if (!(p = strstr(span, pat))) {
		snprintf(pat, sizeof(pat), "\"key\":\"%s\",\"value\":{", key);
		if (!(p = strstr(span, pat)))
			return NULL;
		p += strlen(pat);
		if (!(p = strchr(p, ':')) || p[1] != '"')
			return NULL;
		p += 2;
	} else {
		p += strlen(pat);
	}
	size_t n = strcspn(p, "\"");
	cr_assert_lt(n, len);
	memcpy(out, p, n);
	out[n] = 0;
	return out;
}

static bool is(const char *span, const char *key, const char *want)
{
	char v[128];
	return field(span, key, v, sizeof(v)) && !strcmp(v, want);
}

/* The span with @key = @val (an attribute, or spanId). */
static const char *find(const struct doc *d, const char *key, const char *val)
{
	for (int i = 0; i < d->n; i++)
		if (is(d->span[i], key, val))
			return d->span[i];
	cr_assert_fail("no span with %s=%s", key, val);
	return NULL;
}

/*
 * Every GPU span of @d has lineage.join @join (rule @rule, or none) and hangs under the
 * span whose @pkey is @pval; with @pkey NULL, under the epoch @epochs[correlation id], or
 * any epoch span when @epochs is NULL. Return: the GPU spans.
 */
static int check_gpu(const struct doc *d, const char *join, const char *rule, const char *pkey,
		     const char *pval, const char *const *epochs)
{
	int n = 0;
	for (int i = 0; i < d->n; i++) {
		const char *s = d->span[i];
		if (!is(s, "lineage.span", "kernel") && !is(s, "lineage.span", "memcpy") &&
		    !is(s, "lineage.span", "memset"))
			continue;
		n++;
		char corr[32], parent[40], want[40], trace[40], ptrace[40], r[64];
		cr_assert(is(s, "lineage.join", join), "not %s: %s", join, s);
		if (rule)
			cr_assert(is(s, "lineage.join.rule", rule), "no rule %s: %s", rule, s);
		else
			cr_assert_null(field(s, "lineage.join.rule", r, sizeof(r)), "%s", s);
		const char *p;
		cr_assert_not_null(field(s, "parentSpanId", parent, sizeof(parent)), "%s", s);
		if (pkey) {
			p = find(d, pkey, pval);
		} else if (epochs) {
			cr_assert_not_null(field(s, "lineage.cuda.correlation_id", corr, sizeof(corr)));
			p = find(d, "lineage.epoch.id", epochs[atoi(corr)]);
		} else {
			p = find(d, "spanId", parent);
			cr_assert(is(p, "lineage.span", "epoch"), "parent is not an epoch: %s", p);
		}
		cr_assert_not_null(field(p, "spanId", want, sizeof(want)));
		cr_assert_str_eq(parent, want, "%s\nparent: %s", s, p);
		cr_assert_not_null(field(s, "traceId", trace, sizeof(trace)));
		cr_assert_not_null(field(p, "traceId", ptrace, sizeof(ptrace)));
		cr_assert_str_eq(trace, ptrace, "a GPU span is in its parent's trace");
		bool error = strstr(s, "\"status\":{\"code\":2") != NULL;
		cr_assert_eq(error, !strcmp(join, "lost") || !strcmp(join, "ambiguous"), "%s", s);
	}
	return n;
}

Test(otlp_verdict, same_thread_time_containment_joins_under_the_epoch)
{
	struct doc d;
	export(&d, "good_cuda_only.lt", 0);
	/* fixturegen cuda_only(): the launch before correlation 11 is in epoch 2, 12 in 3 */
	static const char *const epochs[] = { [11] = "2", [12] = "3", [13] = NULL };
	cr_assert_eq(check_gpu(&d, "inferred", "same_thread_time_containment", NULL, NULL, epochs), 2);
	done(&d);
}

Test(otlp_verdict, replay_outside_lineage_is_lost_not_joined_by_node_origin)
{
	struct doc d;
	export(&d, "lost_replay_outside_lineage.lt", 1);
	cr_assert_eq(check_gpu(&d, "lost", NULL, "lineage.span", "process", NULL), 2);
	cr_assert_not_null(
		strstr(d.json, "\"status\":{\"code\":2,\"message\":\"replay_outside_lineage\"}"));
	done(&d);
}

Test(otlp_verdict, observed_has_no_rule)
{
	struct doc d;
	export(&d, "good_direct.lt", 0);
	cr_assert_eq(check_gpu(&d, "observed", NULL, NULL, NULL, NULL), 5);
	done(&d);
}

Test(otlp_verdict, lost_and_ambiguous_hang_under_the_process)
{
	struct doc d;
	export(&d, "lost_no_correlation.lt", 1);
	cr_assert_eq(check_gpu(&d, "lost", NULL, "lineage.span", "process", NULL), 1);
	cr_assert_not_null(strstr(d.json, "\"status\":{\"code\":2,\"message\":\"no_correlation\"}"));
	done(&d);
	export(&d, "bad_ambiguous.lt", 1);
	cr_assert_eq(check_gpu(&d, "ambiguous", NULL, "lineage.span", "process", NULL), 1);
	cr_assert_not_null(strstr(d.json, "\"status\":{\"code\":2,\"message\":\"multiple_epochs\"}"));
	done(&d);
}
