/* SPDX-License-Identifier: MIT */
/*
 * lin_test.h - helpers shared by the Criterion tests.
 *
 * Criterion runs each Test in its own worker and ignores LeakSanitizer's verdict at worker
 * exit, so tests that must not leak call LIN_TEST_CHECK_LEAKS() at the end of the body.
 */
#ifndef LIN_TEST_H
#define LIN_TEST_H

#include <criterion/criterion.h>

#if defined(__SANITIZE_ADDRESS__)
#define LIN_TEST_HAVE_LSAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define LIN_TEST_HAVE_LSAN 1
#endif
#endif

#ifdef LIN_TEST_HAVE_LSAN
#include <sanitizer/lsan_interface.h>
#define LIN_TEST_CHECK_LEAKS() \
	cr_assert_eq(__lsan_do_recoverable_leak_check(), 0, "LeakSanitizer found leaks")
#else
#define LIN_TEST_CHECK_LEAKS() ((void)0)
#endif

/* A child that goes on after a multi-threaded fork trips ThreadSanitizer's own thread
 * registry ("dup thread with used id": liburcu restarts its call_rcu thread in the child),
 * a TSan limitation. Tests of such children take .disabled = LIN_TEST_UNDER_TSAN and run in
 * the other builds. */
#if defined(__SANITIZE_THREAD__)
#define LIN_TEST_UNDER_TSAN true
#else
#define LIN_TEST_UNDER_TSAN false
#endif

#endif
