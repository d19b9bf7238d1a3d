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
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
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

#define PAGES_DEFAULT 8u

struct lin_sched {
	int fd;
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
	struct lin_sched *s = calloc(1, sizeof(*s));
	if (!s) {
		*err = -ENOMEM;
		*what = "malloc";
		return NULL;
	}
	s->fd = perf_open(cfg, &s->lost_fmt);
	if (s->fd < 0) {
		*err = -errno;
		*what = "perf_event_open";
		free(s);
		return NULL;
	}
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	s->map_len = page * (1 + cfg->pages);
	void *m = mmap(NULL, s->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, s->fd, 0);
	if (m == MAP_FAILED) {
		*err = -errno;
		*what = "mmap (perf_event_mlock_kb, RLIMIT_MEMLOCK)";
		close(s->fd);
		free(s);
		return NULL;
	}
	s->meta = m;
	s->data = (unsigned char *)m + page;
	s->size = (uint64_t)page * cfg->pages;
	return s;
}

void lin_sched_close(struct lin_sched *s)
{
	if (!s)
		return;
	munmap(s->meta, s->map_len);
	close(s->fd);
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

void lin_sched_drain(struct lin_sched *s, void (*emit)(void *u, uint64_t s, uint64_t e, uint32_t state),
		     void *u, uint64_t *lost)
{
	if (!s)
		return;
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
