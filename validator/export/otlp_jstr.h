/* SPDX-License-Identifier: MIT */
/* otlp_jstr.h - the exporter's JSON string writer (internal to the OTLP exporter). */
#ifndef LIN_VALIDATOR_OTLP_JSTR_H
#define LIN_VALIDATOR_OTLP_JSTR_H

#include <stddef.h>
#include <stdio.h>

/*
 * lin_otlp_jstr - write @s[0..@n) to @f as a quoted JSON string. Well-formed UTF-8 is
 * passed on as it is; each maximal ill-formed subsequence (Unicode 3.9, "U+FFFD
 * substitution of maximal subparts": overlongs, surrogates and code points above U+10FFFF
 * are ill-formed) becomes \ufffd; '"' and '\\' are escaped, control characters below 0x20
 * become \u00XX.
 */
void lin_otlp_jstr(FILE *f, const char *s, size_t n);

#endif
