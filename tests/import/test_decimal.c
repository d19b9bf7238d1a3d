/* SPDX-License-Identifier: MIT */
/*
 * test_decimal.c - trace-event times (decimal microseconds) to integer nanoseconds: exact
 * for epoch-scale times with a nanosecond fraction, rounded half away from zero past the
 * nanosecond, refused when they do not fit.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "imp.h"

static bool conv(const char *s, int64_t *v)
{
	return lin_imp_us_to_ns(s, strlen(s), v);
}

static void expect(const char *s, int64_t want)
{
	int64_t v = 12345;
	cr_assert(conv(s, &v), "%s refused", s);
	cr_assert_eq(v, want, "%s -> %lld, want %lld", s, (long long)v, (long long)want);
}

Test(decimal, integers_and_fractions)
{
	expect("0", 0);
	expect("1", 1000);
	expect("1.5", 1500);
	expect("00001.5", 1500);
	expect("1621401187223197", 1621401187223197000);
	expect("1419247332972.313", 1419247332972313);
}

/* A double holds 15-16 digits: 1700000000000000.101 us is 1.7e18 ns, 19 digits. */
Test(decimal, epoch_scale_is_exact)
{
	expect("1700000000000000.101", 1700000000000000101);
	expect("1700000000000000.099", 1700000000000000099);
	expect("1695835542514261.123", 1695835542514261123);
	int64_t a, b;
	cr_assert(conv("1700000000000000.100", &a) && conv("1700000000000000.101", &b));
	cr_assert_eq(b - a, 1, "one nanosecond apart");
}

Test(decimal, rounds_half_away_from_zero)
{
	expect("0.0005", 1);
	expect("0.0004", 0);
	expect("0.00049999999999999999999999", 0);
	expect("-0.0005", -1);
	expect("-1.5", -1500);
	expect("1.0015", 1002);
	expect("1.50000000000000000000000000000", 1500);
}

Test(decimal, exponents)
{
	expect("1e3", 1000000);
	expect("1.5E-3", 2);
	expect("15e-1", 1500);
	expect("1e-400", 0);
	expect("0e400", 0);
}

Test(decimal, limits)
{
	expect("9223372036854775.807", INT64_MAX);
	int64_t v;
	cr_assert(!conv("9223372036854775.808", &v), "past INT64_MAX ns");
	cr_assert(!conv("1e30", &v));
	cr_assert(!conv("1e400", &v));
	cr_assert(!conv("12345678901234567890123", &v));
}

Test(decimal, not_numbers)
{
	int64_t v;
	const char *bad[] = { "", "-", ".", "abc", "1.2.3", "1e", "1e+", "1x", "--1" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_assert(!conv(bad[i], &v), "'%s' accepted", bad[i]);
}
