/* SPDX-License-Identifier: MIT */
/*
 * log.h - where the library's diagnostics go: the user's lin_log_fn, or standard error at
 * the level LINEAGE_LOG names (error, warn, info, debug; unset: nothing). Below the rest of
 * the runtime: it knows nothing of it. Internal.
 */
#ifndef LIN_LOG_H
#define LIN_LOG_H

#include <stdarg.h>

#include "lineage/runtime.h"

struct lin_logger {
	lin_log_fn fn; /* the user's callback, or NULL */
	void *user;
	int env_level; /* LINEAGE_LOG's level, or -1 */
};

/* A logger for @fn/@user (read LINEAGE_LOG now). */
void lin_logger_init(struct lin_logger *l, lin_log_fn fn, void *user);
/* Format (cut at 511 bytes) and deliver. Context: any thread. */
void lin_logger_vlog(const struct lin_logger *l, enum lin_log_level level, const char *fmt, va_list ap);

#endif
