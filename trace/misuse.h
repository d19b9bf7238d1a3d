/* SPDX-License-Identifier: MIT */
/*
 * misuse.h - the causes a misuse record names (docs/trace-format.md, "misuse"): the
 * runtime writes lin_misuse_names[cause] into the record's str field, and the validator
 * accepts exactly these names (any other is reported as an unknown cause).
 * Context: constant data; any thread.
 */
#ifndef LIN_TRACE_MISUSE_H
#define LIN_TRACE_MISUSE_H

#include <stddef.h>

enum lin_misuse_cause {
	LIN_MISUSE_STALE_TOKEN,
	LIN_MISUSE_BAD_TOKEN,
	LIN_MISUSE_FOREIGN_TOKEN,
	LIN_MISUSE_SCOPE_ORDER,
	LIN_MISUSE_SCOPE_THREAD,
	LIN_MISUSE_SCOPE_TWICE,
	LIN_MISUSE_SCOPE_DEPTH,
	LIN_MISUSE_NO_CONTEXT,
	LIN_MISUSE_LAUNCH_ORDER,
	LIN_MISUSE_BACKEND_PUSH,
	LIN_MISUSE_BACKEND_POP,
	LIN_MISUSE_THREAD_EXIT_OPEN_SCOPE,
	LIN_MISUSE_LAUNCH_DEPTH,
	LIN_MISUSE_COUNT
};
extern const char *const lin_misuse_names[LIN_MISUSE_COUNT];

/* The cause named by the @len bytes at @s, or LIN_MISUSE_COUNT when none is. */
enum lin_misuse_cause lin_misuse_lookup(const char *s, size_t len);

#endif
