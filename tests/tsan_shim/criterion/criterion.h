/* SPDX-License-Identifier: MIT */
/*
 * A minimal stand-in for <criterion/criterion.h>, used only by the ThreadSanitizer build.
 *
 * Criterion 2.4 cannot start under ThreadSanitizer: BoxFort maps its inheritable arena at
 * an address TSan reserves ("Could not initialize inheritable arena", Snaipe/Criterion
 * issue #274, open). So the TSan build compiles the same test sources against this header:
 * Test(), TestSuite(), the cr_assert and cr_expect families used by the project, each test
 * run in its own forked child with its timeout, and Criterion's closing line. Every other
 * build uses the real Criterion.
 */
#ifndef LIN_TSAN_SHIM_CRITERION_H
#define LIN_TSAN_SHIM_CRITERION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct crs_test {
	const char *suite;
	const char *name;
	void (*fn)(void);
	void (*init)(void);
	void (*fini)(void);
	double timeout;
	bool disabled;
	int signal;
	int exit_code;
	const char *description;
	struct crs_test *next;
};

struct crs_suite {
	const char *name;
	void (*init)(void);
	void (*fini)(void);
	double timeout;
	bool disabled;
	const char *description;
	struct crs_suite *next;
};

void crs_register(struct crs_test *t);
void crs_register_suite(struct crs_suite *s);
void crs_fail(bool fatal, const char *file, int line, const char *expr, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

#define CRS_CAT_(a, b) a##b
#define CRS_CAT(a, b) CRS_CAT_(a, b)

#define Test(s_, n_, ...) \
	static void s_##_##n_##_impl(void); \
	static struct crs_test s_##_##n_##_desc = { \
		.suite = #s_, .name = #n_, .fn = s_##_##n_##_impl, __VA_ARGS__ \
	}; \
	__attribute__((constructor)) static void s_##_##n_##_reg(void) \
	{ \
		crs_register(&s_##_##n_##_desc); \
	} \
	static void s_##_##n_##_impl(void)

#define TestSuite(s_, ...) \
	static struct crs_suite s_##_suite_desc = { .name = #s_, __VA_ARGS__ }; \
	__attribute__((constructor)) static void s_##_suite_reg(void) \
	{ \
		crs_register_suite(&s_##_suite_desc); \
	}

#define CRS_CHECK(fatal, cond, ...) \
	do { \
		if (!(cond)) \
			crs_fail(fatal, __FILE__, __LINE__, #cond, " " __VA_ARGS__); \
	} while (0)

/* Criterion's cr_skip_test: the test ends here, said so, and does not fail. */
void crs_skip(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
#define cr_skip_test(...) crs_skip(__VA_ARGS__)

#define cr_assert(cond, ...) CRS_CHECK(true, cond, __VA_ARGS__)
#define cr_expect(cond, ...) CRS_CHECK(false, cond, __VA_ARGS__)
#define cr_assert_not(cond, ...) CRS_CHECK(true, !(cond), __VA_ARGS__)
#define cr_expect_not(cond, ...) CRS_CHECK(false, !(cond), __VA_ARGS__)
#define cr_assert_eq(a, b, ...) CRS_CHECK(true, (a) == (b), __VA_ARGS__)
#define cr_expect_eq(a, b, ...) CRS_CHECK(false, (a) == (b), __VA_ARGS__)
#define cr_assert_neq(a, b, ...) CRS_CHECK(true, (a) != (b), __VA_ARGS__)
#define cr_expect_neq(a, b, ...) CRS_CHECK(false, (a) != (b), __VA_ARGS__)
#define cr_assert_lt(a, b, ...) CRS_CHECK(true, (a) < (b), __VA_ARGS__)
#define cr_assert_leq(a, b, ...) CRS_CHECK(true, (a) <= (b), __VA_ARGS__)
#define cr_assert_gt(a, b, ...) CRS_CHECK(true, (a) > (b), __VA_ARGS__)
#define cr_assert_geq(a, b, ...) CRS_CHECK(true, (a) >= (b), __VA_ARGS__)
#define cr_expect_lt(a, b, ...) CRS_CHECK(false, (a) < (b), __VA_ARGS__)
#define cr_expect_leq(a, b, ...) CRS_CHECK(false, (a) <= (b), __VA_ARGS__)
#define cr_expect_gt(a, b, ...) CRS_CHECK(false, (a) > (b), __VA_ARGS__)
#define cr_expect_geq(a, b, ...) CRS_CHECK(false, (a) >= (b), __VA_ARGS__)
#define cr_assert_null(p, ...) CRS_CHECK(true, (p) == NULL, __VA_ARGS__)
#define cr_assert_not_null(p, ...) CRS_CHECK(true, (p) != NULL, __VA_ARGS__)
#define cr_expect_null(p, ...) CRS_CHECK(false, (p) == NULL, __VA_ARGS__)
#define cr_expect_not_null(p, ...) CRS_CHECK(false, (p) != NULL, __VA_ARGS__)
#define cr_assert_str_eq(a, b, ...) CRS_CHECK(true, strcmp((a), (b)) == 0, __VA_ARGS__)
#define cr_assert_str_neq(a, b, ...) CRS_CHECK(true, strcmp((a), (b)) != 0, __VA_ARGS__)
#define cr_expect_str_eq(a, b, ...) CRS_CHECK(false, strcmp((a), (b)) == 0, __VA_ARGS__)
#define cr_assert_str_empty(a, ...) CRS_CHECK(true, (a)[0] == 0, __VA_ARGS__)
#define cr_assert_str_not_empty(a, ...) CRS_CHECK(true, (a)[0] != 0, __VA_ARGS__)
#define cr_assert_arr_eq(a, b, n, ...) CRS_CHECK(true, memcmp((a), (b), (n)) == 0, __VA_ARGS__)
#define cr_assert_arr_neq(a, b, n, ...) CRS_CHECK(true, memcmp((a), (b), (n)) != 0, __VA_ARGS__)
#define cr_assert_fail(...) crs_fail(true, __FILE__, __LINE__, "cr_assert_fail", " " __VA_ARGS__)
#define cr_fatal(...) crs_fail(true, __FILE__, __LINE__, "cr_fatal", " " __VA_ARGS__)
#define cr_fail(...) crs_fail(false, __FILE__, __LINE__, "cr_fail", " " __VA_ARGS__)
#define cr_log_info(...) ((void)0)
#define cr_log_warn(...) ((void)0)

#endif
