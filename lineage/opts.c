/* SPDX-License-Identifier: MIT */
/* opts.c - size-prefixed option and output structs (opts.h). */
#include <errno.h>
#include <string.h>

#include "opts.h"

int lin_opts_copy(void *dst, size_t dstsz, const void *src)
{
	memset(dst, 0, dstsz);
	*(size_t *)dst = dstsz;
	if (!src)
		return 0;
	size_t sz = *(const size_t *)src;
	if (sz < sizeof(size_t) || sz > LIN_OPTS_IN_MAX)
		return -EINVAL;
	for (size_t i = dstsz; i < sz; i++)
		if (((const unsigned char *)src)[i])
			return -EINVAL; /* options this library does not know */
	memcpy((char *)dst + sizeof(size_t), (const char *)src + sizeof(size_t),
	       (sz < dstsz ? sz : dstsz) - sizeof(size_t));
	return 0;
}

int lin_opts_copy_out(void *dst, const void *src, size_t srcsz)
{
	size_t sz = *(const size_t *)dst;
	if (sz < sizeof(size_t) || sz > LIN_OPTS_OUT_MAX)
		return -EINVAL;
	size_t n = sz < srcsz ? sz : srcsz;
	memcpy((char *)dst + sizeof(size_t), (const char *)src + sizeof(size_t), n - sizeof(size_t));
	if (sz > srcsz)
		memset((char *)dst + srcsz, 0, sz - srcsz);
	return 0;
}
