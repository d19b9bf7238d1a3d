/* SPDX-License-Identifier: MIT */
/*
 * fixture_file.h - a generated fixture's bytes, for tests built with LIN_FIXTURE_GEN_DIR
 * (the build's fixtures/generated). The caller frees the buffer (1 MiB: every fixture fits).
 */
#ifndef LIN_TEST_FIXTURE_FILE_H
#define LIN_TEST_FIXTURE_FILE_H

#include <stdio.h>
#include <stdlib.h>

#include "lin_test.h"

static inline unsigned char *lin_test_fixture(const char *name, size_t *n)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", LIN_FIXTURE_GEN_DIR, name);
	FILE *f = fopen(path, "rb");
	cr_assert_not_null(f, "cannot open %s", path);
	unsigned char *buf = malloc(1 << 20);
	cr_assert_not_null(buf);
	*n = fread(buf, 1, 1 << 20, f);
	fclose(f);
	return buf;
}

#endif
