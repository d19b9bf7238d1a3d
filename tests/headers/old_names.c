/* SPDX-License-Identifier: MIT */
/*
 * old_names.c - a caller of the deprecated names, compiled (not run) by the ctests
 * deprecated_names_warn (the compiler must warn) and deprecated_names_silenced (with
 * LIN_NO_DEPRECATED_WARNINGS it must not). test_names.c checks that they still work.
 */
#include <lineage.h>

int lin_old_names(lin_runtime *rt);

int lin_old_names(lin_runtime *rt)
{
	lin_token t;
	uint32_t kind;

	return lin_lookup(rt, 1, NULL, NULL, 0) + lin_token_for(rt, 1, &t) +
	       lin_current(rt, &kind, NULL, NULL);
}
