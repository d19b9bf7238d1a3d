/* SPDX-License-Identifier: MIT */
/*
 * log.h - where the library's diagnostics go: the user's lin_log_fn, or standard error at
 * the level LINEAGE_LOG names (error, warn, info, debug; off: nothing). With LINEAGE_LOG
 * unset (or not a level name) and no callback, only status lines go to standard error: a
 * status line is what a user must see once without asking (the CUPTI backend falling back
 * to host-only recording at runtime open; docs/cupti.md, "Environment"). Below the rest of
 * the runtime: it knows nothing of it. Internal.
 */
#ifndef LIN_LOG_H
#define LIN_LOG_H

#include <stdarg.h>

#include "lineage/runtime.h"

/* lin_logger.env_level when LINEAGE_LOG is unset or not a level: status lines only. */
#define LIN_LOG_ENV_DEFAULT (-2)
/* LINEAGE_LOG=off: nothing, status lines included. */
#define LIN_LOG_ENV_OFF (-1)

struct lin_logger {
	lin_log_fn fn; /* the user's callback, or NULL */
	void *user;
	int env_level; /* LINEAGE_LOG's level, LIN_LOG_ENV_OFF or LIN_LOG_ENV_DEFAULT */
};

/* A logger for @fn/@user (read LINEAGE_LOG now). */
void lin_logger_init(struct lin_logger *l, lin_log_fn fn, void *user);
/* Format (cut at 511 bytes) and deliver. Context: any thread. */
void lin_logger_vlog(const struct lin_logger *l, enum lin_log_level level, const char *fmt, va_list ap);
/* The same, printf-style: what the runtime's own files log through (lin_rt_log is for the
 * modules above the runtime, which see no struct lin_runtime). */
void lin_logger_log(const struct lin_logger *l, enum lin_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* A status line: to the callback at LIN_LOG_WARN; without one, to standard error unless
 * LINEAGE_LOG is off or error. Context: any thread; not for the launch path (it formats
 * and may write). */
void lin_logger_vstatus(const struct lin_logger *l, const char *fmt, va_list ap);

#endif
