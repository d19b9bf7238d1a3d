/* SPDX-License-Identifier: MIT */
/*
 * run_bench.c - times lineage-validate on a large generated trace.
 *
 * Usage: lin-bench-validate [NRECORDS [TRACE]]   (default 50000000, build-dir file)
 * Generates the trace when it does not exist (or has another size), runs
 * lineage-validate --json on it, and prints
 *   SUMMARY bench=validate records=N records_per_s=R peak_rss_kib=K exit=E
 * with the child's peak RSS from wait4().
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static long json_num(const char *json, const char *key)
{
	char pat[64];
	snprintf(pat, sizeof(pat), "\"%s\":", key);
	const char *p = strstr(json, pat);
	return p ? strtol(p + strlen(pat), NULL, 10) : -1;
}

static void usage(FILE *f)
{
	fputs("Usage: lin-bench-validate [NRECORDS [TRACE]]\n"
	      "\n"
	      "Generates a synthetic lineage trace of NRECORDS records (default 50000000) into\n"
	      "TRACE (default: a file in the build directory) unless one of that size is there,\n"
	      "runs lineage-validate --json on it and prints\n"
	      "  SUMMARY bench=validate records= gpu_records= joined_observed= records_per_s=\n"
	      "          seconds= peak_rss_kib= exit=\n"
	      "with the validator's peak RSS. Exit status 0 when it ran; 64 on a bad argument.\n",
	      f);
}

int main(int argc, char **argv)
{
	if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		usage(stdout);
		return 0;
	}
	if (argc > 3 || (argc > 1 && (argv[1][0] < '1' || argv[1][0] > '9' ||
				      strspn(argv[1], "0123456789") != strlen(argv[1])))) {
		usage(stderr);
		return 64;
	}
	const char *nrec = argc > 1 ? argv[1] : "50000000";
	char trace[4096];
	snprintf(trace, sizeof(trace), "%s", argc > 2 ? argv[2] : LIN_BENCH_TRACE);
	char stamp[4200];
	snprintf(stamp, sizeof(stamp), "%s.%s", trace, nrec);
	struct stat st;
	if (stat(stamp, &st) != 0 || stat(trace, &st) != 0) {
		char cmd[9000];
		snprintf(cmd, sizeof(cmd), "'%s' '%s' %s >/dev/null && touch '%s'", LIN_BENCH_GEN,
			 trace, nrec, stamp);
		fprintf(stderr, "generating %s records into %s\n", nrec, trace);
		if (system(cmd) != 0)
			return 1;
	}
	int pfd[2];
	if (pipe(pfd) != 0)
		return 1;
	double t0 = now();
	pid_t pid = fork();
	if (pid == 0) {
		dup2(pfd[1], 1);
		close(pfd[0]);
		execl(LIN_VALIDATE_BIN, "lineage-validate", "--json", "--max-findings", "10", trace,
		      (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	static char out[1 << 16];
	size_t n = 0;
	ssize_t k;
	while ((k = read(pfd[0], out + n, sizeof(out) - 1 - n)) > 0)
		n += (size_t)k;
	out[n] = 0;
	int status;
	struct rusage ru;
	if (wait4(pid, &status, 0, &ru) != pid)
		return 1;
	double dt = now() - t0;
	long records = json_num(out, "records");
	printf("SUMMARY bench=validate records=%ld gpu_records=%ld joined_observed=%ld "
	       "records_per_s=%.0f seconds=%.3f peak_rss_kib=%ld exit=%d\n",
	       records, json_num(out, "gpu_records"), json_num(out, "joined_observed"),
	       dt > 0 ? (double)records / dt : 0.0, dt, ru.ru_maxrss,
	       WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}
