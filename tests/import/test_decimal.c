/* SPDX-License-Identifier: MIT */
/*
 * test_decimal.c - trace-event times (decimal microseconds) to integer nanoseconds: exact
 * for epoch-scale times with a nanosecond fraction, rounded half away from zero past the
 * nanosecond, refused when they do not fit.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "imp.h"

static bool conv(const char *s, int64_t *v) { return lin_imp_us_to_ns(s, strlen(s), v); }

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
	/* 9223372036854775807.5 ns rounds to 2^63: refused, never clamped to INT64_MAX */
	cr_assert(!conv("9223372036854775.8075", &v), "rounds past INT64_MAX ns");
	cr_assert(!conv("-9223372036854775.8075", &v));
	expect("9223372036854775.8074999999", INT64_MAX);
	expect("922337203685477.58074e1", INT64_MAX);
}

/* Digits past the 19th significant one still decide the rounding when they are the first
 * below the nanosecond (the 20th digit here is the 0.1 ns one). */
Test(decimal, digits_past_19_round)
{
	expect("1700000000123456.7895", 1700000000123456790);
	expect("1700000000123456.7894", 1700000000123456789);
	expect("1700000000123456.78949999999999", 1700000000123456789);
	expect("1700000000123456.7896", 1700000000123456790);
	expect("-1700000000123456.7895", -1700000000123456790);
	expect("170000000012345678.95e-2", 1700000000123456790);
	expect("0.000000000000000000000000000000000000000000000000000000000000000000005e69", 5000);
}

/* The exact value of the digit string, by another route: the whole digit string as one
 * __int128 integer M and the decimal exponent E (value = M * 10^E ns), then M / 10^-E
 * rounded half away from zero. Digit strings here have at most 30 digits. */
static bool reference(const char *digits, int nfrac, int e, bool neg, int64_t *out)
{
	unsigned __int128 m = 0;
	for (const char *p = digits; *p; p++)
		m = m * 10 + (unsigned)(*p - '0');
	int E = 3 + e - nfrac;
	unsigned __int128 lim = (unsigned __int128)INT64_MAX;
	if (E >= 0) {
		for (int i = 0; i < E; i++) {
			if (m > lim)
				break;
			m *= 10;
		}
	} else {
		unsigned __int128 p = 1;
		int i = 0;
		for (; i < -E && p <= m; i++)
			p *= 10;
		if (i < -E) { /* 10^-E > 10 m: below 0.1 ns, rounds to 0 */
			m = 0;
		} else {
			unsigned __int128 q = m / p, r = m % p;
			m = q + (2 * r >= p);
		}
	}
	if (m > lim)
		return false;
	*out = neg ? -(int64_t)m : (int64_t)m;
	return true;
}

Test(decimal, random_against_exact_reference)
{
	srand(21);
	for (int n = 0; n < 200000; n++) {
		char digits[40], text[64];
		int nint = 1 + rand() % 19, nfrac = rand() % 12, e = 0;
		if (rand() % 8 == 0)
			e = rand() % 13 - 6;
		bool neg = rand() % 4 == 0;
		int nd = nint + nfrac;
		for (int i = 0; i < nd; i++)
			digits[i] = (char)('0' + rand() % 10);
		if (rand() % 3 == 0) /* the 0.1 ns digit a 5, the rest zeros: a true half */
			for (int i = nint + 3 + e; i < nd; i++)
				if (i >= 0)
					digits[i] = i == nint + 3 + e ? '5' : '0';
		digits[nd] = 0;
		int w = snprintf(text, sizeof(text), "%s%.*s", neg ? "-" : "", nint, digits);
		if (nfrac)
			w += snprintf(text + w, sizeof(text) - (size_t)w, ".%s", digits + nint);
		if (e)
			snprintf(text + w, sizeof(text) - (size_t)w, "e%d", e);
		int64_t want = 0, got = 0;
		bool ok = reference(digits, nfrac, e, neg, &want);
		bool gok = conv(text, &got);
		cr_assert_eq(gok, ok, "%s: accepted %d, reference %d", text, gok, ok);
		if (ok)
			cr_assert_eq(got, want, "%s -> %lld, reference %lld", text, (long long)got,
				     (long long)want);
	}
}

Test(decimal, not_numbers)
{
	int64_t v;
	const char *bad[] = { "", "-", ".", "abc", "1.2.3", "1e", "1e+", "1x", "--1" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_assert(!conv(bad[i], &v), "'%s' accepted", bad[i]);
}
