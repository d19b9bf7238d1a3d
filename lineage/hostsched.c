/* SPDX-License-Identifier: MIT */
/*
 * hostsched.c - the host scheduling collector (hostsched.h): the kernel's context switches of each
 * registered thread, from a perf software dummy event with context_switch = 1 (no
 * privilege needed at perf_event_paranoid <= 2: a thread observes itself), timed on
 * CLOCK_MONOTONIC (use_clockid), the host clock the trace's host times are on (clock.c:
 * a TSC reading is converted to CLOCK_MONOTONIC ns through the calibration pair).
 *
 * A switch-out record (PERF_RECORD_SWITCH, misc PERF_RECORD_MISC_SWITCH_OUT) carries
 * PERF_RECORD_MISC_SWITCH_OUT_PREEMPT when the thread was still runnable (preempted);
 * without it the thread blocked (a sleep, a lock, I/O). The next switch-in closes the
 * off-CPU interval. Every failure is a state reported by the caller, never an abort.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "lineage/trace_format.h"
#include "hostsched.h"

#ifndef PERF_RECORD_MISC_SWITCH_OUT_PREEMPT
#define PERF_RECORD_MISC_SWITCH_OUT_PREEMPT (1 << 14)
#endif
#ifndef PERF_FLAG_FD_CLOEXEC
#define PERF_FLAG_FD_CLOEXEC (1UL << 3)
#endif

#ifndef PERF_FORMAT_LOST
#define PERF_FORMAT_LOST (1u << 4)
#endif

#define PAGES_DEFAULT 2u

/* Off-CPU intervals read when the ring was detached (its thread exited), kept for the
 * writer. */
struct pend {
	uint64_t s, e;
	uint32_t state, pad;
};

struct lin_sched {
	int fd; /* -1: detached (the ring read, unmapped and closed at its thread's exit) */
	pthread_mutex_t lock; /* the drain (writer) against the detach (the exiting thread) */
	struct pend *pend;
	size_t npend, cappend;
	uint64_t pend_lost;
	size_t budget; /* bytes of cfg->locked this ring holds */
	struct lin_sched_cfg *cfg;
	struct perf_event_mmap_page *meta;
	unsigned char *data;
	uint64_t size;   /* data bytes, a power of two */
	size_t map_len;  /* 1 + pages */
	uint64_t out_ns; /* pending switch-out; 0: none */
	uint32_t out_state;
	bool lost_fmt;      /* read() gives the records lost (PERF_FORMAT_LOST, Linux 6.0) */
	uint64_t lost_seen; /* its value at the last drain */
};

/* The sample_id trailer of every record (sample_id_all, sample_type TID | TIME). */
struct sample_id {
	uint32_t pid, tid;
	uint64_t time;
};

static bool env_on(const char *name)
{
	const char *v = getenv(name);
	return v && *v && strcmp(v, "0") != 0;
}

static const struct {
	const char *name;
	int err;
} fault_names[] = { { "EACCES", EACCES }, { "EPERM", EPERM },   { "ENOENT", ENOENT },
		    { "ENOSYS", ENOSYS }, { "EMFILE", EMFILE }, { "ENOMEM", ENOMEM } };

/* LINEAGE_TEST_SCHED_FAULT=ERRNO[@N]: every perf_event_open from the N-th (0: the probe)
 * fails with ERRNO, as a kernel refusing it would. A test hook: tests/lineage/test_sched.c. */
static void read_fault(struct lin_sched_cfg *cfg)
{
	const char *v = getenv("LINEAGE_TEST_SCHED_FAULT");
	if (!v || !*v)
		return;
	for (size_t i = 0; i < sizeof(fault_names) / sizeof(fault_names[0]); i++) {
		size_t n = strlen(fault_names[i].name);
		if (strncmp(v, fault_names[i].name, n) == 0 && (v[n] == 0 || v[n] == '@')) {
			cfg->fault_err = fault_names[i].err;
			cfg->fault_from = v[n] == '@' ? (uint32_t)strtoul(v + n + 1, NULL, 10) : 0;
		}
	}
}

/* The calling thread's seccomp mode and filter count (/proc/thread-self/status: Seccomp,
 * Seccomp_filters where the kernel says it); -1 where unknown. */
static void seccomp_state(int *mode, long *filters)
{
	*mode = -1;
	*filters = -1;
	FILE *f = fopen("/proc/thread-self/status", "re");
	if (!f)
		return;
	char line[256];
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "Seccomp:", 8))
			*mode = atoi(line + 8);
		else if (!strncmp(line, "Seccomp_filters:", 16))
			*filters = atol(line + 16);
	}
	fclose(f);
}

/* File descriptors kept for the application: the collector never takes one of the last
 * max(64, a quarter) below the soft RLIMIT_NOFILE. */
static bool fd_headroom(int fd)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur == RLIM_INFINITY)
		return true;
	rlim_t keep = rl.rlim_cur / 4 > 64 ? rl.rlim_cur / 4 : 64;
	return (rlim_t)fd + keep < rl.rlim_cur;
}

static int perf_open(struct lin_sched_cfg *cfg, bool *lost_fmt)
{
	uint32_t k = atomic_fetch_add(&cfg->opens, 1);
	if (cfg->fault_err && k >= cfg->fault_from) {
		errno = cfg->fault_err;
		return -1;
	}
	struct perf_event_attr a;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_DUMMY;
	a.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
	a.sample_id_all = 1;
	a.context_switch = 1;
	a.use_clockid = 1;
	a.clockid = CLOCK_MONOTONIC;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	a.disabled = 0;
	/* The kernel writes a PERF_RECORD_LOST only once the ring has room again, so a
	 * thread's last overrun would never be told: the loss counter (read) tells it at
	 * every drain. Kernels before 6.0 refuse the format: their LOST records are counted. */
	a.read_format = PERF_FORMAT_LOST;
	int fd = (int)syscall(SYS_perf_event_open, &a, 0 /* this thread */, -1, -1, PERF_FLAG_FD_CLOEXEC);
	*lost_fmt = fd >= 0;
	if (fd < 0 && errno == EINVAL) {
		a.read_format = 0;
		fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	}
	/* Never one of the standard streams: a program started with stdin closed would get
	 * it as fd 0 and later replace it (freopen) under the collector. */
	if (fd >= 0 && fd <= 2) {
		int hi = fcntl(fd, F_DUPFD_CLOEXEC, 3);
		int e = errno;
		close(fd);
		errno = e;
		fd = hi;
	}
	return fd;
}

static const char *hint(int err)
{
	switch (err) {
	case EACCES:
	case EPERM: return " (kernel.perf_event_paranoid above 2, or a seccomp filter)";
	case ENOENT:
	case ENOSYS:
	case EOPNOTSUPP: return " (no perf events in this kernel or container)";
	case EMFILE:
	case ENFILE: return " (out of file descriptors)";
	default: return "";
	}
}

bool lin_sched_cfg_init(struct lin_sched_cfg *cfg, bool asked)
{
	cfg->asked = asked || env_on("LINEAGE_SCHED_EVENTS");
	cfg->pages = PAGES_DEFAULT;
	const char *p = getenv("LINEAGE_TEST_SCHED_PAGES");
	if (p && *p) {
		unsigned long n = strtoul(p, NULL, 10);
		if (n && n <= 1024 && !(n & (n - 1)))
			cfg->pages = (uint32_t)n;
	}
	read_fault(cfg);
	if (!cfg->asked) {
		snprintf(cfg->status, sizeof(cfg->status), "off");
		return false;
	}
	seccomp_state(&cfg->seccomp_mode, &cfg->seccomp_filters);
	/* The locked memory the rings may take: half the per-user perf budget
	 * (kernel.perf_event_mlock_kb), which the user's other perf tools share; no cap for
	 * root (CAP_IPC_LOCK: not counted). */
	cfg->locked_cap = 0;
	FILE *mk = fopen("/proc/sys/kernel/perf_event_mlock_kb", "re");
	unsigned long kb = 0;
	if (mk) {
		if (fscanf(mk, "%lu", &kb) != 1)
			kb = 0;
		fclose(mk);
	}
	if (geteuid() != 0)
		cfg->locked_cap = kb ? kb * 1024 / 2 : 256 * 1024;
	int err = 0;
	const char *what = NULL;
	struct lin_sched *s = lin_sched_open(cfg, &err, &what);
	if (!s) {
		snprintf(cfg->status, sizeof(cfg->status), "refused: %s: %s (%s)%s", what,
			 strerror(-err),
			 -err == EACCES   ? "EACCES"
			 : -err == EPERM  ? "EPERM"
			 : -err == ENOENT ? "ENOENT"
			 : -err == ENOSYS ? "ENOSYS"
			 : -err == EMFILE ? "EMFILE"
					  : "errno",
			 strcmp(what, "perf_event_open") ? "" : hint(-err));
		return true;
	}
	lin_sched_close(s);
	cfg->on = true;
	snprintf(cfg->status, sizeof(cfg->status),
		 "on: perf context switches, CLOCK_MONOTONIC, %u KiB ring per thread",
		 cfg->pages * (uint32_t)(sysconf(_SC_PAGESIZE) / 1024));
	return false;
}

struct lin_sched *lin_sched_open(struct lin_sched_cfg *cfg, int *err, const char **what)
{
	/* A seccomp filter installed after the probe may kill the process on a syscall it
	 * does not allow (systemd's SystemCallFilter=): not attempted then. */
	if (atomic_load(&cfg->opens) > 0) {
		int mode;
		long filters;
		seccomp_state(&mode, &filters);
		if (mode != cfg->seccomp_mode || filters != cfg->seccomp_filters) {
			*err = -EPERM;
			*what = "seccomp filter installed after the probe (perf_event_open not tried)";
			return NULL;
		}
	}
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t map_len = page * (1 + cfg->pages);
	if (cfg->locked_cap) {
		size_t was = atomic_fetch_add(&cfg->locked, map_len);
		if (was + map_len > cfg->locked_cap) {
			atomic_fetch_sub(&cfg->locked, map_len);
			*err = -EPERM;
			*what = "ring budget (half of kernel.perf_event_mlock_kb, kept for the user's "
				"other perf tools)";
			return NULL;
		}
	}
	struct lin_sched *s = calloc(1, sizeof(*s));
	if (!s) {
		*err = -ENOMEM;
		*what = "malloc";
		goto fail;
	}
	s->cfg = cfg;
	s->budget = cfg->locked_cap ? map_len : 0;
	s->fd = perf_open(cfg, &s->lost_fmt);
	if (s->fd < 0) {
		*err = -errno;
		*what = "perf_event_open";
		goto fail;
	}
	if (!fd_headroom(s->fd)) {
		*err = -EMFILE;
		*what = "file descriptor headroom (the last quarter below RLIMIT_NOFILE is the "
			"application's)";
		close(s->fd);
		goto fail;
	}
	s->map_len = map_len;
	void *m = mmap(NULL, s->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, s->fd, 0);
	if (m == MAP_FAILED) {
		*err = -errno;
		*what = "mmap (perf_event_mlock_kb, RLIMIT_MEMLOCK)";
		close(s->fd);
		goto fail;
	}
	pthread_mutex_init(&s->lock, NULL);
	s->meta = m;
	s->data = (unsigned char *)m + page;
	s->size = (uint64_t)page * cfg->pages;
	return s;
fail:
	if (cfg->locked_cap)
		atomic_fetch_sub(&cfg->locked, map_len);
	free(s);
	return NULL;
}

static void unmap(struct lin_sched *s)
{
	if (s->fd < 0)
		return;
	munmap(s->meta, s->map_len);
	close(s->fd);
	s->fd = -1;
	if (s->budget)
		atomic_fetch_sub(&s->cfg->locked, s->budget);
	s->budget = 0;
}

void lin_sched_close(struct lin_sched *s)
{
	if (!s)
		return;
	unmap(s);
	pthread_mutex_destroy(&s->lock);
	free(s->pend);
	free(s);
}

void lin_sched_forget(struct lin_sched *s)
{
	if (!s)
		return;
	/* A fork child: the kernel does not copy a perf ring's mapping into the child
	 * (VM_DONTCOPY), and what now lies at its address may be the child's own. */
	if (s->fd >= 0)
		close(s->fd);
	free(s->pend);
	free(s);
}

/* Copy @n bytes at ring offset @off (it may wrap). */
static void ring_copy(const struct lin_sched *s, uint64_t off, void *dst, size_t n)
{
	uint64_t at = off & (s->size - 1);
	size_t first = s->size - at < n ? (size_t)(s->size - at) : n;
	memcpy(dst, s->data + at, first);
	memcpy((char *)dst + first, s->data, n - first);
}

static void ring_drain(struct lin_sched *s,
		       void (*emit)(void *u, uint64_t s, uint64_t e, uint32_t state), void *u,
		       uint64_t *lost)
{
	uint64_t head = __atomic_load_n(&s->meta->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = s->meta->data_tail;
	while (tail + sizeof(struct perf_event_header) <= head) {
		struct perf_event_header h;
		ring_copy(s, tail, &h, sizeof(h));
		if (h.size < sizeof(h) || tail + h.size > head)
			break;
		unsigned char rec[64];
		size_t n = h.size < sizeof(rec) ? h.size : sizeof(rec);
		ring_copy(s, tail, rec, n);
		tail += h.size;
		if (h.type == PERF_RECORD_LOST && n >= sizeof(h) + 16) {
			uint64_t k;
			memcpy(&k, rec + sizeof(h) + 8, 8);
			if (!s->lost_fmt)
				*lost += k;
			s->out_ns = 0; /* its switch-in may be among those lost */
			continue;
		}
		if ((h.type != PERF_RECORD_SWITCH) || n < sizeof(h) + sizeof(struct sample_id))
			continue;
		struct sample_id id;
		memcpy(&id, rec + n - sizeof(id), sizeof(id));
		if (h.misc & PERF_RECORD_MISC_SWITCH_OUT) {
			s->out_ns = id.time;
			s->out_state = (h.misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT)
					       ? LIN_SCHED_PREEMPTED
					       : LIN_SCHED_BLOCKED;
		} else if (s->out_ns) {
			if (emit && id.time > s->out_ns)
				emit(u, s->out_ns, id.time, s->out_state);
			s->out_ns = 0;
		}
	}
	__atomic_store_n(&s->meta->data_tail, tail, __ATOMIC_RELEASE);
	/* Lost records follow everything the ring held (it was full): the pending
	 * switch-out's switch-in may be among them. */
	uint64_t rd[2];
	if (s->lost_fmt && read(s->fd, rd, sizeof(rd)) == (ssize_t)sizeof(rd) && rd[1] != s->lost_seen) {
		*lost += rd[1] - s->lost_seen;
		s->lost_seen = rd[1];
		s->out_ns = 0;
	}
}

void lin_sched_drain(struct lin_sched *s, void (*emit)(void *u, uint64_t s, uint64_t e, uint32_t state),
		     void *u, uint64_t *lost)
{
	if (!s)
		return;
	pthread_mutex_lock(&s->lock);
	for (size_t i = 0; i < s->npend; i++)
		if (emit)
			emit(u, s->pend[i].s, s->pend[i].e, s->pend[i].state);
	s->npend = 0;
	*lost += s->pend_lost;
	s->pend_lost = 0;
	if (s->fd >= 0)
		ring_drain(s, emit, u, lost);
	pthread_mutex_unlock(&s->lock);
}

static void keep(void *u, uint64_t start, uint64_t end, uint32_t state)
{
	struct lin_sched *s = u;
	if (s->npend == s->cappend) {
		size_t n = s->cappend ? 2 * s->cappend : 16;
		struct pend *p = realloc(s->pend, n * sizeof(*p));
		if (!p) {
			s->pend_lost++; /* an interval not kept is a loss, told as one */
			return;
		}
		s->pend = p;
		s->cappend = n;
	}
	s->pend[s->npend++] = (struct pend){ .s = start, .e = end, .state = state };
}

void lin_sched_detach(struct lin_sched *s)
{
	if (!s)
		return;
	pthread_mutex_lock(&s->lock);
	if (s->fd >= 0) {
		ring_drain(s, keep, s, &s->pend_lost);
		unmap(s);
	}
	pthread_mutex_unlock(&s->lock);
}
