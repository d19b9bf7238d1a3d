/* SPDX-License-Identifier: MIT */
/* w3c_lin.h - what w3c.c takes from w3c_lin.c (internal to liblineage). */
#ifndef LINEAGE_W3C_LIN_H
#define LINEAGE_W3C_LIN_H

#include <stddef.h>
#include <stdint.h>

/* Decode exactly 2 * @n lowercase hex characters at @p into @out: 0, or -1. */
int lin_w3c_hex_bytes(const char *p, uint8_t *out, size_t n);

#endif
