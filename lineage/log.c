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
	for (int i = 0; v && i < 4; i++)
		if (!strcmp(v, names[i]))
			return i;
	return -1;
}

void lin_logger_init(struct lin_logger *l, lin_log_fn fn, void *user)
{
	l->fn = fn;
	l->user = user;
	l->env_level = env_level();
}

void lin_logger_vlog(const struct lin_logger *l, enum lin_log_level level, const char *fmt, va_list ap)
{
	if (!l->fn && (l->env_level < 0 || (int)level > l->env_level))
		return;
	char msg[512];
	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (l->fn) {
		l->fn(level, msg, l->user);
		return;
	}
	fprintf(stderr, "lineage: %s: %s\n", names[level], msg);
}
