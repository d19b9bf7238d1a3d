/* SPDX-License-Identifier: MIT */
/*
 * cupti_api.c - libcupti loaded at run time: dlopen when the binding is first used, one
 * dlsym per entry point into struct lin_cupti_api (cupti_api.h, docs/cupti.md "Loading
 * libcupti"). Or the table a test gave (lin_cupti_use_api).
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cupti_api.h"

/* The library's name (its SONAME, from the build) and the directory the build found it in. */
#ifndef LIN_CUPTI_SONAME
#define LIN_CUPTI_SONAME "libcupti.so"
#endif
#ifndef LIN_CUPTI_DIR
#define LIN_CUPTI_DIR ""
#endif

/* Where each entry point goes in the table. */
#define LIN_CUPTI_SYM(f) \
	{ \
#f, offsetof(struct lin_cupti_api, f) \
	}
static const struct {
	const char *name;
	size_t off;
} syms[] = {
	LIN_CUPTI_SYM(cuptiGetResultString),
	LIN_CUPTI_SYM(cuptiGetVersion),
	LIN_CUPTI_SYM(cuptiGetTimestamp),
	LIN_CUPTI_SYM(cuptiActivityPushExternalCorrelationId),
	LIN_CUPTI_SYM(cuptiActivityPopExternalCorrelationId),
	LIN_CUPTI_SYM(cuptiActivityEnable),
	LIN_CUPTI_SYM(cuptiActivityDisable),
	LIN_CUPTI_SYM(cuptiActivityEnableLatencyTimestamps),
	LIN_CUPTI_SYM(cuptiActivitySetAttribute),
	LIN_CUPTI_SYM(cuptiActivityRegisterCallbacks),
	LIN_CUPTI_SYM(cuptiActivityRegisterTimestampCallback),
	LIN_CUPTI_SYM(cuptiActivityFlushAll),
	LIN_CUPTI_SYM(cuptiActivityFlushPeriod),
	LIN_CUPTI_SYM(cuptiActivityGetNextRecord),
	LIN_CUPTI_SYM(cuptiActivityGetNumDroppedRecords),
	LIN_CUPTI_SYM(cuptiSubscribe),
	LIN_CUPTI_SYM(cuptiUnsubscribe),
	LIN_CUPTI_SYM(cuptiGetThreadIdType),
	LIN_CUPTI_SYM(cuptiSetThreadIdType),
};
#define N_SYMS (sizeof(syms) / sizeof(syms[0]))
_Static_assert(sizeof(struct lin_cupti_api) == offsetof(struct lin_cupti_api, cuptiGetResultString) +
						       N_SYMS * sizeof(void *),
	       "one dlsym per member of struct lin_cupti_api");

/*
 * The process's CUPTI, as CUPTI itself is one per process. @api is published once (release)
 * and never changes after; @mu serialises the load and lin_cupti_use_api.
 */
static struct {
	pthread_mutex_t mu;
	_Atomic(const struct lin_cupti_api *) api;
	bool tried;                  /* a load was attempted (under mu) */
	struct lin_cupti_api loaded; /* libcupti's table, once loaded */
	char status[384];            /* why the load failed */
} g_api = { .mu = PTHREAD_MUTEX_INITIALIZER };

static void *fn_slot(struct lin_cupti_api *t, size_t i) { return (char *)t + syms[i].off; }

static bool complete(const struct lin_cupti_api *t)
{
	if (!t || t->sz < sizeof(*t))
		return false;
	for (size_t i = 0; i < N_SYMS; i++) {
		void *p = NULL;

		memcpy(&p, (const char *)t + syms[i].off, sizeof(p));
		if (!p)
			return false;
	}
	return true;
}

/* dlopen @name, appending dlerror() to @err on failure. */
static void *open_one(const char *name, char *err, size_t cap)
{
	void *h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
	size_t n = strlen(err);

	if (!h)
		snprintf(err + n, cap - n, "%s%s", n ? "; " : "", dlerror());
	return h;
}

/* Load libcupti into g_api.loaded (g_api.mu held). false: g_api.status says why. */
static bool load(void)
{
	const char *env = getenv("LINEAGE_CUPTI_LIBRARY");
	char err[320] = "", path[512];
	void *h;

	if (env && *env) {
		h = open_one(env, err, sizeof(err));
	} else {
		h = open_one(LIN_CUPTI_SONAME, err, sizeof(err));
		if (!h && LIN_CUPTI_DIR[0]) {
			snprintf(path, sizeof(path), "%s/%s", LIN_CUPTI_DIR, LIN_CUPTI_SONAME);
			h = open_one(path, err, sizeof(err));
		}
	}
	if (!h) {
		snprintf(g_api.status, sizeof(g_api.status), "unavailable: dlopen failed: %s", err);
		return false;
	}
	memset(&g_api.loaded, 0, sizeof(g_api.loaded));
	g_api.loaded.sz = sizeof(g_api.loaded);
	g_api.loaded.name = env && *env ? env : LIN_CUPTI_SONAME;
	for (size_t i = 0; i < N_SYMS; i++) {
		void *p = dlsym(h, syms[i].name);

		if (!p) {
			snprintf(g_api.status, sizeof(g_api.status),
				 "unavailable: dlsym(%s) failed: %s", syms[i].name, dlerror());
			dlclose(h);
			return false;
		}
		/* POSIX: a function's address from dlsym is stored through its object pointer. */
		memcpy(fn_slot(&g_api.loaded, i), &p, sizeof(p));
	}
	return true; /* h stays open: CUPTI's callbacks outlive any runtime */
}

const struct lin_cupti_api *lin_cupti_api(const char **status)
{
	const struct lin_cupti_api *a = atomic_load_explicit(&g_api.api, memory_order_acquire);

	if (a)
		return a;
	pthread_mutex_lock(&g_api.mu);
	a = atomic_load_explicit(&g_api.api, memory_order_relaxed);
	if (!a && !g_api.tried) {
		g_api.tried = true;
		if (load()) {
			a = &g_api.loaded;
			atomic_store_explicit(&g_api.api, a, memory_order_release);
		}
	}
	pthread_mutex_unlock(&g_api.mu);
	if (!a && status)
		*status = g_api.status;
	return a;
}

LIN_API int lin_cupti_use_api(const struct lin_cupti_api *api)
{
	int err = 0;

	if (!complete(api))
		return -EINVAL;
	pthread_mutex_lock(&g_api.mu);
	const struct lin_cupti_api *cur = atomic_load_explicit(&g_api.api, memory_order_relaxed);
	if (cur && cur != api)
		err = -EBUSY;
	else if (!cur)
		atomic_store_explicit(&g_api.api, api, memory_order_release);
	pthread_mutex_unlock(&g_api.mu);
	return err;
}
