/* SPDX-License-Identifier: MIT */
/*
 * opts.h - size-prefixed option and output structs (docs/architecture.md, "Options and ABI
 * growth"): the one copy every public entry point that takes or fills one goes through.
 * Internal to liblineage. Context: any thread; no allocation.
 */
#ifndef LINEAGE_OPTS_H
#define LINEAGE_OPTS_H

#include <stddef.h>

/*
 * lin_opts_copy - copy the caller's options @src (NULL: defaults) into @dst, this
 * library's struct of @dstsz bytes whose first member is size_t sz: zeroed first, so an
 * older caller's shorter struct leaves the newer fields 0; a newer caller's longer struct
 * must have zero bytes past what this library knows (read no further than its sz, and
 * never past LIN_OPTS_IN_MAX bytes: an sz beyond is taken for an uninitialised one).
 * dst->sz is set to @dstsz.
 * Return: 0; -EINVAL for an sz shorter than the sz field or over LIN_OPTS_IN_MAX, or
 * non-zero unknown bytes.
 */
#define LIN_OPTS_IN_MAX 4096
int lin_opts_copy(void *dst, size_t dstsz, const void *src);

/*
 * lin_opts_copy_out - fill the caller's output struct @dst, whose caller set dst->sz, from
 * @src of this library's @srcsz bytes: only the bytes the caller's struct has, and zero
 * past what this library knows. dst->sz is left as it is.
 * Return: 0; -EINVAL for an sz shorter than the sz field itself or implausibly long
 * (over LIN_OPTS_OUT_MAX: taken for an uninitialised sz).
 */
#define LIN_OPTS_OUT_MAX 4096
int lin_opts_copy_out(void *dst, const void *src, size_t srcsz);

#endif
