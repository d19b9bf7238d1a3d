/* SPDX-License-Identifier: MIT */
/*
 * push.c - CUPTI's external-correlation stack as a lineage backend (lin_cupti_push_ops),
 * and the probe that tells whether this process's CUPTI can push at all; the live binding
 * (live.c) opens through the same probe and ops.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <cupti.h>

#include "cupti_api.h"
#include "live.h"
#include "rt_internal.h"

static inline const struct lin_cupti_api *cupti(void) { return lin_cupti_api(NULL); }

/* The probe: state -1 not run, 0 failed, 1 works (under mu). */
static struct {
	pthread_mutex_t mu;
	int state;
	char status[192];
} g_probe = { .mu = PTHREAD_MUTEX_INITIALIZER, .state = -1 };

const char *lin_cupti_result_name(CUptiResult r)
{
	const char *s = NULL;

	if (cupti()->cuptiGetResultString(r, &s) != CUPTI_SUCCESS || !s)
		return "CUPTI_ERROR_?";
	return s;
}

/*
 * probe - push and pop one id of @kind on this thread, once per process. Without a driver
 * each CUPTI call costs tens of microseconds and fails; after a failed probe nothing in
 * this file calls push/pop again.
 */
int lin_cupti_probe(uint32_t kind, const char **status)
{
	const char *why = NULL;
	int ok;

	if (!lin_cupti_api(&why)) { /* libcupti cannot be loaded: dlopen's or dlsym's error */
		if (status)
			*status = why;
		return -LIN_ENOCUPTI;
	}
	pthread_mutex_lock(&g_probe.mu);
	if (g_probe.state < 0) {
		uint64_t last = 0;
		CUptiResult r = cupti()->cuptiActivityPushExternalCorrelationId(
			(CUpti_ExternalCorrelationKind)kind, 0);

		if (r == CUPTI_SUCCESS) {
			r = cupti()->cuptiActivityPopExternalCorrelationId(
				(CUpti_ExternalCorrelationKind)kind, &last);
			snprintf(g_probe.status, sizeof(g_probe.status),
				 r == CUPTI_SUCCESS
					 ? "ok"
					 : "unavailable: cuptiActivityPopExternalCorrelationId: %s",
				 lin_cupti_result_name(r));
		} else {
			snprintf(g_probe.status, sizeof(g_probe.status),
				 "unavailable: cuptiActivityPushExternalCorrelationId: %s",
				 lin_cupti_result_name(r));
		}
		g_probe.state = r == CUPTI_SUCCESS;
	}
	ok = g_probe.state;
	if (status)
		*status = g_probe.status;
	pthread_mutex_unlock(&g_probe.mu);
	return ok ? 0 : -LIN_ENOCUPTI;
}

static int cupti_push(void *ctx, uint32_t ext_kind, uint64_t id)
{
	(void)ctx;
	return cupti()->cuptiActivityPushExternalCorrelationId((CUpti_ExternalCorrelationKind)ext_kind,
							       id) == CUPTI_SUCCESS
		       ? 0
		       : -LIN_EBACKEND;
}

static int cupti_pop(void *ctx, uint32_t ext_kind, uint64_t *id)
{
	uint64_t last = 0;

	(void)ctx;
	if (cupti()->cuptiActivityPopExternalCorrelationId((CUpti_ExternalCorrelationKind)ext_kind,
							   &last) != CUPTI_SUCCESS)
		return -LIN_EBACKEND;
	if (id)
		*id = last;
	return 0;
}

int lin_cupti_valid_kind(uint32_t kind)
{
	return kind > CUPTI_EXTERNAL_CORRELATION_KIND_INVALID &&
	       kind < CUPTI_EXTERNAL_CORRELATION_KIND_SIZE;
}

void lin_cupti_fill_ops(struct lin_backend_ops *ops, const char *name)
{
	memset(ops, 0, sizeof(*ops));
	ops->sz = sizeof(*ops);
	ops->name = name;
	ops->push = cupti_push;
	ops->pop = cupti_pop;
}

LIN_API int lin_cupti_push_ops(uint32_t ext_kind, struct lin_backend_ops *ops, const char **status)
{
	int err;

	if (ext_kind == 0)
		ext_kind = LIN_DEFAULT_EXT_KIND;
	if (!ops || !lin_cupti_valid_kind(ext_kind))
		return -EINVAL;
	err = lin_cupti_probe(ext_kind, status);
	if (err)
		return err;
	lin_cupti_fill_ops(ops, "cupti-push");
	return 0;
}
