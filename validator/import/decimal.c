/* SPDX-License-Identifier: MIT */
/*
 * decimal.c - trace-event times (decimal microseconds, as JSON number text) to integer
 * nanoseconds, exactly: the digits are read as a decimal, never through a double, so an
 * epoch-scale time with a nanosecond fraction keeps every digit (docs/importers.md).
 */
#include <stdint.h>
#include <string.h>

#include "imp.h"

#define SIG_MAX 19                  /* significant digits kept; UINT64_MAX has 20 */

static const uint64_t pow10_tab[20] = {
	1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull, 10000000ull,
	100000000ull, 1000000000ull, 10000000000ull, 100000000000ull, 1000000000000ull,
	10000000000000ull, 100000000000000ull, 1000000000000000ull, 10000000000000000ull,
	100000000000000000ull, 1000000000000000000ull, 10000000000000000000ull,
};

/* The exponent part after 'e'/'E': clamped to +-1000 (beyond that any non-zero value
 * overflows or rounds to 0). false on a malformed exponent. */
static bool read_exp(const char *s, size_t len, size_t i, int *out)
{
	bool neg = false;
	if (i < len && (s[i] == '+' || s[i] == '-'))
		neg = s[i++] == '-';
	if (i >= len)
		return false;
	int e = 0;
	for (; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		if (e < 1000)
			e = e * 10 + (s[i] - '0');
	}
	*out = neg ? -e : e;
	return true;
}

/* mant * 10^exp rounded to the nearest integer, halves away from zero (digits dropped past
 * SIG_MAX cannot change that decision: see docs). false when it exceeds INT64_MAX. */
static bool scale(uint64_t mant, int exp, uint64_t *out)
{
	if (mant == 0) {
		*out = 0;
		return true;
	}
	if (exp >= 0) {
		if (exp > 19)
			return false;
		uint64_t p = pow10_tab[exp];
		if (mant > (uint64_t)INT64_MAX / p)
			return false;
		*out = mant * p;
		return true;
	}
	if (exp < -19) {
		*out = 0;
		return true;
	}
	uint64_t p = pow10_tab[-exp], q = mant / p, r = mant % p;
	/* p is even, so 2r >= p decides the half whatever digits were dropped */
	if (r >= p - r)
		q++;
	if (q > (uint64_t)INT64_MAX)
		return false;
	*out = q;
	return true;
}

bool lin_imp_us_to_ns(const char *s, size_t len, int64_t *out)
{
	size_t i = 0;
	bool neg = false, digits = false;
	if (i < len && s[i] == '-') {
		neg = true;
		i++;
	}
	uint64_t mant = 0;
	int nsig = 0, exp = 3;              /* microseconds: value * 10^3 nanoseconds */
	bool frac = false;
	for (; i < len; i++) {
		char c = s[i];
		if (c == '.' && !frac) {
			frac = true;
			continue;
		}
		if (c < '0' || c > '9')
			break;
		digits = true;
		if (mant == 0 && c == '0') {
			if (frac)
				exp--;          /* leading zero after the point */
			continue;
		}
		if (nsig < SIG_MAX) {
			mant = mant * 10 + (uint64_t)(c - '0');
			nsig++;
			if (frac)
				exp--;
		} else if (!frac) {
			exp++;                  /* an integer digit past the kept ones */
		}
	}
	if (!digits)
		return false;
	if (i < len) {
		int e;
		if ((s[i] != 'e' && s[i] != 'E') || !read_exp(s, len, i + 1, &e))
			return false;
		exp += e;
	}
	uint64_t v;
	if (!scale(mant, exp, &v))
		return false;
	*out = neg ? -(int64_t)v : (int64_t)v;
	return true;
}
