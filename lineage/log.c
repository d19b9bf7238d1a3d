/* SPDX-License-Identifier: MIT */
/* log.c - see log.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"

static const char *const names[] = { "error", "warn", "info", "debug" }; /* by level */

static int env_level(void)
{
	const char *v = getenv("LINEAGE_LOG");
	if (v && !strcmp(v, "off"))
		return LIN_LOG_ENV_OFF;
	for (int i = 0; v && i < 4; i++)
		if (!strcmp(v, names[i]))
			return i;
	return LIN_LOG_ENV_DEFAULT;
}

void lin_logger_init(struct lin_logger *l, lin_log_fn fn, void *user)
{
	l->fn = fn;
	l->user = user;
	l->env_level = env_level();
}

static void deliver(const struct lin_logger *l, enum lin_log_level level, const char *fmt, va_list ap)
{
	char msg[512];
	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (l->fn) {
		l->fn(level, msg, l->user);
		return;
	}
	fprintf(stderr, "lineage: %s: %s\n", names[level], msg);
}

void lin_logger_vlog(const struct lin_logger *l, enum lin_log_level level, const char *fmt, va_list ap)
{
	if (!l->fn && (int)level > l->env_level)
		return;
	deliver(l, level, fmt, ap);
}

void lin_logger_log(const struct lin_logger *l, enum lin_log_level level, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	lin_logger_vlog(l, level, fmt, ap);
	va_end(ap);
}

void lin_logger_vstatus(const struct lin_logger *l, const char *fmt, va_list ap)
{
	if (!l->fn && l->env_level != LIN_LOG_ENV_DEFAULT && (int)LIN_LOG_WARN > l->env_level)
		return;
	deliver(l, LIN_LOG_WARN, fmt, ap);
}
