/* SPDX-License-Identifier: MIT */
/* misuse.c - see misuse.h. */
#include <string.h>

#include "misuse.h"

const char *const lin_misuse_names[LIN_MISUSE_COUNT] = {
	[LIN_MISUSE_STALE_TOKEN] = "stale_token",
	[LIN_MISUSE_BAD_TOKEN] = "bad_token",
	[LIN_MISUSE_FOREIGN_TOKEN] = "foreign_token",
	[LIN_MISUSE_SCOPE_ORDER] = "scope_order",
	[LIN_MISUSE_SCOPE_THREAD] = "scope_thread",
	[LIN_MISUSE_SCOPE_TWICE] = "scope_twice",
	[LIN_MISUSE_SCOPE_DEPTH] = "scope_depth",
	[LIN_MISUSE_NO_CONTEXT] = "no_context",
	[LIN_MISUSE_LAUNCH_ORDER] = "launch_order",
	[LIN_MISUSE_BACKEND_PUSH] = "backend_push",
	[LIN_MISUSE_BACKEND_POP] = "backend_pop",
	[LIN_MISUSE_THREAD_EXIT_OPEN_SCOPE] = "thread_exit_open_scope",
	[LIN_MISUSE_LAUNCH_DEPTH] = "launch_depth",
};

enum lin_misuse_cause lin_misuse_lookup(const char *s, size_t len)
{
	for (int i = 0; i < LIN_MISUSE_COUNT; i++)
		if (strlen(lin_misuse_names[i]) == len && memcmp(lin_misuse_names[i], s, len) == 0)
			return (enum lin_misuse_cause)i;
	return LIN_MISUSE_COUNT;
}
