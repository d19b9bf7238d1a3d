/* SPDX-License-Identifier: MIT */
/*
 * lineage-bench's peers: real tracers measured in the same run as lineage's launch path, and
 * the physical floor of recording an event.
 *
 *   peer_lttng_ust    an LTTng-UST tracepoint with the fields of lineage's launch record,
 *                     enabled in a live session (events recorded by the consumer daemon)
 *   peer_nvtx         nvtxRangePushA + nvtxRangePop with no NVTX tool attached
 *   floor_clock_ring  clock_gettime(CLOCK_MONOTONIC) + a 32-byte record stored into a
 *                     per-thread power-of-two ring (and its head published)
 *
 * Same method as the other cases: batches of BATCH operations, median (and p99) of the
 * batch means. A peer that cannot run here prints `skipped="<why>"` instead of figures.
 *
 * LTTng runs in a forked child so that nothing of it touches the bench process (liblttng-ust
 * starts threads and registers with session daemons when it loads) or any LTTng set-up that
 * already exists: the child starts its own lttng-sessiond with LTTNG_HOME (and HOME) in a
 * mkdtemp directory, drives it with `lttng --no-sessiond`, and stops it before exiting. As
 * root a session daemon always uses /var/run/lttng (lttng-tools 2.13 has no variable to move
 * it), so a root child first drops to uid/gid 65534 (nobody) and runs a per-user daemon.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_common.h"

#ifdef LIN_HAVE_NVTX
#include <nvtx3/nvToolsExt.h>
#endif

#ifdef LIN_HAVE_LTTNG_UST
#define LTTNG_UST_TRACEPOINT_DEFINE
#define LTTNG_UST_TRACEPOINT_PROBE_DYNAMIC_LINKAGE
#include "lttng_tp.h"
#endif

static void skipped(const char *name, const char *why)
{
	printf("SUMMARY bench=%s threads=1 skipped=\"%s\"\n", name, why);
	fflush(stdout);
}

/* ------------------------------------------------------------------ the recording floor */

/* lineage's struct lin_event, by shape. */
struct floor_rec {
	uint8_t type, kind;
	uint16_t depth;
	uint32_t version;
	uint64_t ns, a, b;
};
_Static_assert(sizeof(struct floor_rec) == 32, "the size of a lineage event");

#define FLOOR_RING 16384 /* lineage's default per-thread buffer, in events */

struct floor_ring {
	struct floor_rec *ev;
	uint64_t head;
	_Atomic uint64_t pub; /* what a consumer would read */
};

static __thread struct floor_ring fring;

static inline void floor_put(uint64_t epoch, uint32_t version, const char *name)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	struct floor_rec *d = &fring.ev[fring.head & (FLOOR_RING - 1)];
	d->type = 1;
	d->kind = 0;
	d->depth = 1;
	d->version = version;
	d->ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	d->a = epoch;
	d->b = (uintptr_t)name;
	fring.head++;
	atomic_store_explicit(&fring.pub, fring.head, memory_order_release);
}

static double floor_clock_ring_case(double *s, size_t nb)
{
	fring.ev = aligned_alloc(64, FLOOR_RING * sizeof(struct floor_rec));
	if (!fring.ev) {
		skipped("floor_clock_ring", "out of memory");
		return NAN;
	}
	memset(fring.ev, 0, FLOOR_RING * sizeof(struct floor_rec));
	uint64_t epoch = 42;
	TIME_BATCHES(nb, s, floor_put(epoch, 3, "bench_kernel"));
	struct result r = summarize(s, nb);
	report("floor_clock_ring", 1, r, NULL);
	free(fring.ev);
	fring.ev = NULL;
	return r.median;
}

/* ------------------------------------------------------------------ NVTX */

static double nvtx_case(double *s, size_t nb)
{
#ifdef LIN_HAVE_NVTX
	if (getenv("NVTX_INJECTION64_PATH")) {
		skipped("peer_nvtx", "NVTX_INJECTION64_PATH is set: a tool would be attached");
		return NAN;
	}
	/* The first call resolves the (absent) tool; every later one is the bare path. */
	nvtxRangePushA("bench_kernel");
	nvtxRangePop();
	TIME_BATCHES(nb, s, {
		nvtxRangePushA("bench_kernel");
		nvtxRangePop();
	});
	struct result r = summarize(s, nb);
	report("peer_nvtx", 1, r, NULL);
	return r.median;
#else
	(void)s, (void)nb;
	skipped("peer_nvtx", "nvtx3/nvToolsExt.h not found at build time (CUDA toolkit)");
	return NAN;
#endif
}

/* ------------------------------------------------------------------ LTTng-UST */

struct lttng_out {
	int ok;
	char why[240];
	double median, p99;
	long long discarded; /* -1: unknown */
	long long trace_bytes;
	long long events;
};

#ifdef LIN_HAVE_LTTNG_UST

static char lt_home[PATH_MAX];
static char **lt_env;

static void lt_fail(struct lttng_out *o, const char *fmt, const char *arg)
{
	o->ok = 0;
	snprintf(o->why, sizeof(o->why), fmt, arg);
	for (char *p = o->why; *p; p++) /* keep the skipped="..." value parseable */
		if (*p == '"' || *p == '\n')
			*p = '\'';
}

/* Run `lttng --no-sessiond ARGS...` with the private environment; stdout into @out. */
static int lt_cmd(char *out, size_t outsz, const char *const *args)
{
	const char *argv[16] = { "lttng", "--no-sessiond" };
	int n = 2;
	for (; args[n - 2] && n < 15; n++)
		argv[n] = args[n - 2];
	argv[n] = NULL;
	int p[2];
	if (pipe(p))
		return -1;
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		dup2(p[1], 1);
		dup2(p[1], 2);
		close(p[0]);
		close(p[1]);
		execvpe("lttng", (char *const *)argv, lt_env);
		_exit(127);
	}
	close(p[1]);
	size_t len = 0;
	ssize_t k;
	char tmp[4096];
	while ((k = read(p[0], tmp, sizeof(tmp))) > 0 || (k < 0 && errno == EINTR))
		if (k > 0 && out && len + 1 < outsz) {
			size_t c = (size_t)k < outsz - 1 - len ? (size_t)k : outsz - 1 - len;
			memcpy(out + len, tmp, c);
			len += c;
		}
	if (out)
		out[len] = 0;
	close(p[0]);
	int st;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

static int lt_rm(const char *path, const struct stat *sb, int flag, struct FTW *f)
{
	(void)sb, (void)flag, (void)f;
	remove(path);
	return 0;
}

static long long lt_bytes;
static int lt_du(const char *path, const struct stat *sb, int flag, struct FTW *f)
{
	(void)path, (void)f;
	if (flag == FTW_F)
		lt_bytes += sb->st_size;
	return 0;
}

/* The module holding the probes: next to the executable, else where the build put it. */
static void *lt_load_probes(char *err, size_t errsz)
{
	char exe[PATH_MAX], path[PATH_MAX + 64];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = 0;
		char *slash = strrchr(exe, '/');
		if (slash) {
			*slash = 0;
			snprintf(path, sizeof(path), "%s/liblineage-bench-lttng-tp.so", exe);
			void *h = dlopen(path, RTLD_NOW);
			if (h)
				return h;
		}
	}
	void *h = dlopen(LIN_LTTNG_TP_INSTALLED, RTLD_NOW);
	if (!h)
		snprintf(err, errsz, "%s", dlerror());
	return h;
}

/* The whole case, in the forked child; figures go back through @o. */
static void lttng_child(struct lttng_out *o, size_t nb)
{
	o->discarded = -1;
	o->events = (long long)nb * BATCH;
	const char *tmpdir = getenv("TMPDIR");
	snprintf(lt_home, sizeof(lt_home), "%s/lineage-bench-lttng.XXXXXX",
		 tmpdir && *tmpdir && strlen(tmpdir) < 60 ? tmpdir : "/tmp");
	if (!mkdtemp(lt_home)) {
		lt_fail(o, "mkdtemp: %s", strerror(errno));
		return;
	}
	if (geteuid() == 0) {
		/* A root session daemon would live in /var/run/lttng: run a per-user one as
		 * nobody instead, entirely inside the temporary directory. */
		if (chown(lt_home, 65534, 65534) || setgroups(0, NULL) || setgid(65534) || setuid(65534)) {
			lt_fail(o,
				"running as root and cannot drop to uid 65534 for a private "
				"session daemon: %s",
				strerror(errno));
			goto rmdir;
		}
	}
	/* The futex pages by which liblttng-ust waits for a daemon, the per-user one and the
	 * global one (the app creates that when no root daemon has): remove ours after. */
	char shm[2][64];
	snprintf(shm[0], sizeof(shm[0]), "/dev/shm/lttng-ust-wait-8-%u", (unsigned)getuid());
	snprintf(shm[1], sizeof(shm[1]), "/dev/shm/lttng-ust-wait-8");
	int shm_existed[2] = { access(shm[0], F_OK) == 0, access(shm[1], F_OK) == 0 };

	char e_home[PATH_MAX + 16], e_lhome[PATH_MAX + 16], e_path[1024];
	snprintf(e_home, sizeof(e_home), "HOME=%s", lt_home);
	snprintf(e_lhome, sizeof(e_lhome), "LTTNG_HOME=%s", lt_home);
	const char *path = getenv("PATH");
	snprintf(e_path, sizeof(e_path), "PATH=%s", path ? path : "/usr/bin:/bin");
	char *env[] = { e_home, e_lhome, e_path, NULL };
	lt_env = env;
	/* liblttng-ust reads these when it loads (below), to find our daemon. */
	setenv("HOME", lt_home, 1);
	setenv("LTTNG_HOME", lt_home, 1);
	unsetenv("LTTNG_UST_REGISTER_TIMEOUT");

	/* Our session daemon: a child of ours, killed with us if we die. */
	sigset_t usr1, old;
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	sigprocmask(SIG_BLOCK, &usr1, &old);
	pid_t parent = getpid();
	pid_t sd = fork();
	if (sd < 0) {
		lt_fail(o, "fork: %s", strerror(errno));
		goto rmdir;
	}
	if (sd == 0) {
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (getppid() != parent)
			_exit(1);
		sigprocmask(SIG_SETMASK, &old, NULL);
		int null = open("/dev/null", O_RDWR);
		if (null >= 0) {
			dup2(null, 0);
			dup2(null, 1);
		}
		char *argv[] = { "lttng-sessiond", "--sig-parent", "--no-kernel", NULL };
		execvpe("lttng-sessiond", argv, env);
		_exit(127);
	}
	struct timespec ten = { 10, 0 };
	int sig = sigtimedwait(&usr1, NULL, &ten);
	int st;
	if (sig != SIGUSR1) {
		if (waitpid(sd, &st, WNOHANG) == sd)
			lt_fail(o, "%s",
				WIFEXITED(st) && WEXITSTATUS(st) == 127
					? "lttng-sessiond not found (Debian: lttng-tools)"
					: "lttng-sessiond exited at start (see its stderr above)");
		else
			lt_fail(o, "%s", "lttng-sessiond not ready within 10 s");
		goto stop_daemon;
	}

	char out[8192];
	char outdir[PATH_MAX + 16];
	snprintf(outdir, sizeof(outdir), "--output=%s/trace", lt_home);
	const char *create[] = { "create", "lbench", outdir, NULL };
	/* 8 x 2 MiB per CPU: room for a few batches between the consumer's reads. */
	const char *chan[] = { "enable-channel", "-u", "-s", "lbench", "--subbuf-size=2M",
			       "--num-subbuf=8", "ch", NULL };
	const char *ev[] = { "enable-event",         "-u", "-s", "lbench", "-c", "ch",
			     "lineage_bench:launch", NULL };
	const char *ctx[] = { "add-context", "-u", "-s", "lbench", "-c", "ch", "-t", "vtid", NULL };
	const char *start[] = { "start", "lbench", NULL };
	const char *const *steps[] = { create, chan, ev, ctx, start };
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++)
		if (lt_cmd(out, sizeof(out), steps[i])) {
			char line[200];
			snprintf(line, sizeof(line), "lttng %s failed: %.150s", steps[i][0], out);
			lt_fail(o, "%s", line);
			goto destroy;
		}

	char err[200];
	void *probes = lt_load_probes(err, sizeof(err));
	if (!probes) {
		lt_fail(o, "cannot load the tracepoint provider: %s", err);
		goto destroy;
	}
	/* liblttng-ust registered with our daemon while loading; wait for the event. */
	for (int i = 0; i < 500 && !lttng_ust_tracepoint_enabled(lineage_bench, launch); i++) {
		struct timespec ms10 = { 0, 10000000 };
		nanosleep(&ms10, NULL);
	}
	if (!lttng_ust_tracepoint_enabled(lineage_bench, launch)) {
		lt_fail(o, "%s", "the tracepoint was not enabled within 5 s of registering");
		goto destroy;
	}

	double *s = malloc(nb * sizeof(double));
	uint64_t epoch = 42;
	static const char kname[] = "bench_kernel";
	for (size_t b = 0; b < nb; b++) {
		uint64_t t0 = now_ns();
		for (int i = 0; i < BATCH; i++) {
			lttng_ust_tracepoint(lineage_bench, launch, epoch, 3, 1, 0, kname);
			__asm__ __volatile__("" ::: "memory");
		}
		s[b] = (double)(now_ns() - t0) / BATCH;
		/* Untimed: let the consumer daemon keep up, as the lineage cases let its writer. */
		if ((b & 15) == 15) {
			struct timespec ts = { 0, 200000 };
			nanosleep(&ts, NULL);
		}
	}
	struct result r = summarize(s, nb);
	free(s);
	o->median = r.median;
	o->p99 = r.p99;
	o->ok = 1;

	const char *stop[] = { "stop", "lbench", NULL };
	lt_cmd(out, sizeof(out), stop);
	const char *list[] = { "list", "lbench", NULL };
	if (lt_cmd(out, sizeof(out), list) == 0) {
		/* Per channel: "Discarded events: N" (2.13 prints it under Statistics). */
		long long sum = 0;
		int seen = 0;
		for (char *p = out; (p = strstr(p, "Discarded events:")); p++) {
			sum += strtoll(p + strlen("Discarded events:"), NULL, 10);
			seen = 1;
		}
		if (seen)
			o->discarded = sum;
	}
destroy:;
	const char *destroy[] = { "destroy", "lbench", NULL };
	lt_cmd(NULL, 0, destroy);
	lt_bytes = 0;
	char tdir[PATH_MAX + 16];
	snprintf(tdir, sizeof(tdir), "%s/trace", lt_home);
	nftw(tdir, lt_du, 16, FTW_PHYS);
	o->trace_bytes = lt_bytes;
stop_daemon:
	kill(sd, SIGTERM);
	for (int i = 0; i < 1000; i++) {
		if (waitpid(sd, &st, WNOHANG) == sd)
			goto stopped;
		struct timespec ms10 = { 0, 10000000 };
		nanosleep(&ms10, NULL);
	}
	kill(sd, SIGKILL);
	waitpid(sd, &st, 0);
stopped:
	for (int i = 0; i < 2; i++) {
		struct stat sb;
		if (!shm_existed[i] && stat(shm[i], &sb) == 0 && sb.st_uid == getuid())
			shm_unlink(shm[i] + strlen("/dev/shm"));
	}
rmdir:
	nftw(lt_home, lt_rm, 16, FTW_DEPTH | FTW_PHYS);
}

static double lttng_case(size_t nb)
{
	int p[2];
	if (pipe(p)) {
		skipped("peer_lttng_ust", "pipe failed");
		return NAN;
	}
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		skipped("peer_lttng_ust", "fork failed");
		return NAN;
	}
	if (pid == 0) {
		close(p[0]);
		struct lttng_out o = { 0 };
		lttng_child(&o, nb);
		ssize_t w = write(p[1], &o, sizeof(o));
		(void)w;
		_exit(0);
	}
	close(p[1]);
	struct lttng_out o = { 0 };
	size_t got = 0;
	ssize_t k;
	while (got < sizeof(o) &&
	       ((k = read(p[0], (char *)&o + got, sizeof(o) - got)) > 0 || (k < 0 && errno == EINTR)))
		if (k > 0)
			got += (size_t)k;
	close(p[0]);
	int st;
	waitpid(pid, &st, 0);
	if (got != sizeof(o)) {
		skipped("peer_lttng_ust", "the LTTng child died before reporting");
		return NAN;
	}
	if (!o.ok) {
		skipped("peer_lttng_ust", o.why);
		return NAN;
	}
	char extra[160];
	int n = snprintf(extra, sizeof(extra), "events=%lld trace_bytes=%lld", o.events, o.trace_bytes);
	if (o.discarded >= 0)
		snprintf(extra + n, sizeof(extra) - (size_t)n, " discarded=%lld", o.discarded);
	report("peer_lttng_ust", 1, (struct result){ o.median, o.p99 }, extra);
	return o.median;
}

#else

static double lttng_case(size_t nb)
{
	(void)nb;
	skipped("peer_lttng_ust",
		"built without lttng-ust (pkg-config lttng-ust; Debian: liblttng-ust-dev lttng-tools)");
	return NAN;
}

#endif

/* ------------------------------------------------------------------ all of them */

static void ratio(const char *peer, double whole, double x, int *first)
{
	printf("%s whole_path/%s=", *first ? "RATIO" : "", peer);
	if (isnan(whole) || isnan(x) || x <= 0)
		printf("na");
	else
		printf("%.2f", whole / x);
	*first = 0;
}

void peer_cases(double whole_path_ns)
{
	size_t nb = nbatches();
	double *s = malloc(nb * sizeof(double));
	if (!s)
		return;
	/* LTTng writes every event to disk: a quarter of the batches, as the thread cases. */
	double lt = lttng_case(nb / 4);
	double nv = nvtx_case(s, nb);
	double fl = floor_clock_ring_case(s, nb);
	free(s);
	int first = 1;
	ratio("peer_lttng_ust", whole_path_ns, lt, &first);
	ratio("peer_nvtx", whole_path_ns, nv, &first);
	ratio("floor_clock_ring", whole_path_ns, fl, &first);
	printf("\n");
	fflush(stdout);
}
