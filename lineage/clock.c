/* SPDX-License-Identifier: MIT */
/*
 * clock.c - the trace's host clock: CLOCK_MONOTONIC nanoseconds, read on the launch path
 * through the TSC where it is invariant (one rdtsc, ~10 ns here, against ~22 ns for
 * clock_gettime), converted to nanoseconds by the writer.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "rt.h"

uint64_t lin_clock_mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static bool tsc_invariant(void)
{
#if defined(__x86_64__) || defined(__i386__)
	FILE *f = fopen("/proc/cpuinfo", "r");
	if (!f)
		return false;
	char line[4096];
	bool constant = false, nonstop = false;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "flags", 5) != 0)
			continue;
		constant = strstr(line, " constant_tsc") != NULL;
		nonstop = strstr(line, " nonstop_tsc") != NULL;
		break;
	}
	fclose(f);
	return constant && nonstop;
#else
	return false;
#endif
}

/* A short calibration (~2 ms) against CLOCK_MONOTONIC. */
static void calibrate(struct lin_clock *c)
{
	memset(c, 0, sizeof(*c));
	c->use_tsc = tsc_invariant();
	c->ns0 = lin_clock_mono_ns();
	if (!c->use_tsc) {
		c->ns_per_tick = 1.0;
		return;
	}
#if defined(__x86_64__) || defined(__i386__)
	c->tsc0 = __builtin_ia32_rdtsc();
	uint64_t t1, n1;
	do {
		n1 = lin_clock_mono_ns();
		t1 = __builtin_ia32_rdtsc();
	} while (n1 - c->ns0 < 2000000);
	if (t1 <= c->tsc0) {
		c->use_tsc = false;
		c->ns_per_tick = 1.0;
		return;
	}
	c->ns_per_tick = (double)(n1 - c->ns0) / (double)(t1 - c->tsc0);
	c->tsc_hz = 1e9 / c->ns_per_tick;
#endif
}

/*
 * One calibration per process, shared by every runtime it creates: two runtimes of one
 * process then write the same host time for the same instant. Calibrated apart, each
 * carried its own rate error (a preemption inside the 2 ms calibration makes it tens of
 * ppm or more), so two traces of one process disagreed by microseconds, and a device clock
 * read through one runtime's clock was off by that in the other's trace.
 */
static pthread_once_t calib_once = PTHREAD_ONCE_INIT;
static struct lin_clock calib;

static void calibrate_once(void) { calibrate(&calib); }

void lin_clock_init(struct lin_clock *c)
{
	pthread_once(&calib_once, calibrate_once);
	*c = calib;
}

uint64_t lin_clock_ticks_to_ns(const struct lin_clock *c, uint64_t ticks)
{
	if (!c->use_tsc)
		return ticks;
	if (ticks >= c->tsc0)
		return c->ns0 + (uint64_t)((double)(ticks - c->tsc0) * c->ns_per_tick);
	uint64_t back = (uint64_t)((double)(c->tsc0 - ticks) * c->ns_per_tick);
	return back < c->ns0 ? c->ns0 - back : 0;
}
