/* SPDX-License-Identifier: MIT */
/*
 * decimal.c - trace-event times (decimal microseconds, as JSON number text) to integer
 * nanoseconds, exactly: the digits are read as a decimal, never through a double, so an
 * epoch-scale time with a nanosecond fraction keeps every digit (docs/importers.md).
 */
#include <stdint.h>
#include <string.h>

#include "imp.h"

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

/*
 * Exact: digit j of the number (j = 0 the first, leading zeros included) weighs
 * 10^(top - j) ns, top = (integer digits - 1) + 3 + exponent. Digits of weight >= 1 ns form
 * the integer (refused past INT64_MAX); the digit of weight 0.1 ns alone decides the
 * rounding, halves away from zero: the rest of the fraction is below 0.1 ns, so with that
 * digit >= 5 the fraction is >= 0.5 and with it <= 4 the fraction is < 0.5, whatever
 * follows. No digit is dropped before that decision, however many there are.
 */
bool lin_imp_us_to_ns(const char *s, size_t len, int64_t *out)
{
	size_t i = 0, ndig = 0, nint = 0;
	bool neg = false, frac = false;
	if (i < len && s[i] == '-') {
		neg = true;
		i++;
	}
	size_t start = i;
	for (; i < len; i++) {
		if (s[i] == '.' && !frac) {
			frac = true;
			continue;
		}
		if (s[i] < '0' || s[i] > '9')
			break;
		ndig++;
		nint += !frac;
	}
	if (!ndig)
		return false;
	size_t end = i;
	int e = 0;
	if (i < len && ((s[i] != 'e' && s[i] != 'E') || !read_exp(s, len, i + 1, &e)))
		return false;
	int64_t k = (int64_t)nint - 1 + 3 + e; /* weight (power of ten, ns) of the digit */
	uint64_t acc = 0;
	int round = 0;
	for (size_t p = start; p < end && k >= -1; p++) {
		if (s[p] == '.')
			continue;
		unsigned d = (unsigned)(s[p] - '0');
		if (k >= 0) {
			if (acc > ((uint64_t)INT64_MAX - d) / 10)
				return false;
			acc = acc * 10 + d;
		} else {
			round = (int)d;
		}
		k--;
	}
	for (; k >= 0 && acc; k--) { /* zeros after the last digit (exponent) */
		if (acc > (uint64_t)INT64_MAX / 10)
			return false;
		acc *= 10;
	}
	if (round >= 5 && ++acc > (uint64_t)INT64_MAX)
		return false;
	*out = neg ? -(int64_t)acc : (int64_t)acc;
	return true;
}
