/* SPDX-License-Identifier: MIT */
/*
 * dlclose_main.c - a program that loads liblineage with dlopen (a plugin, Python's ctypes),
 * creates and frees a CUPTI runtime, and unloads the library. CUPTI keeps the callbacks the
 * binding registered (the timestamp callback cannot be unregistered), so the library must
 * stay mapped: CUPTI's next timestamp must still work. The test CUPTI layer stands in for
 * libcupti in this program (its table is handed to the loaded library with
 * lin_cupti_use_api); the program does not link liblineage.
 *
 * Usage: test_cupti_dlclose PATH/liblineage.so. Exit 0: the library stayed loaded and the
 * callback answered; 1: it was unloaded (SIGSEGV in CUPTI's call) or a step failed.
 */
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cupti.h>

#include "cupti_layer.h"
#include "lineage/runtime.h"

static int discard(const void *p, size_t n, void *u)
{
	(void)p;
	(void)n;
	(void)u;
	return 0;
}

static void on_segv(int s)
{
	static const char m[] = "FAIL: CUPTI called into the unloaded liblineage (SIGSEGV)\n";

	(void)s;
	(void)!write(2, m, sizeof(m) - 1);
	_exit(1);
}

int main(int argc, char **argv)
{
	struct lin_cl_config cfg = { .sz = sizeof(cfg) };
	struct lin_runtime_opts o = { .sz = sizeof(o), .backend = LIN_BACKEND_CUPTI, .trace_write = discard };
	lin_runtime *rt = NULL;
	uint64_t t = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: %s PATH/liblineage.so\n", argv[0]);
		return 64;
	}
	lin_cl_configure(&cfg);
	void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "FAIL: dlopen: %s\n", dlerror());
		return 1;
	}
	int (*create)(const struct lin_runtime_opts *, lin_runtime **) =
		(int (*)(const struct lin_runtime_opts *, lin_runtime **))dlsym(h, "lin_runtime_create");
	void (*destroy)(lin_runtime *) = (void (*)(lin_runtime *))dlsym(h, "lin_runtime_free");
	/* The binding calls the layer through its table (cupti_layer.h). */
	int (*use_api)(const struct lin_cupti_api *) =
		(int (*)(const struct lin_cupti_api *))dlsym(h, "lin_cupti_use_api");
	if (!use_api || use_api(lin_cl_cupti_api()) != 0) {
		fprintf(stderr, "FAIL: lin_cupti_use_api\n");
		return 1;
	}
	if (!create || !destroy || create(&o, &rt) != 0) {
		fprintf(stderr, "FAIL: lin_runtime_create\n");
		return 1;
	}
	destroy(rt);
	if (!lin_cl_timestamp_callback_registered()) {
		fprintf(stderr, "FAIL: the binding registered no timestamp callback\n");
		return 1;
	}
	if (dlclose(h) != 0) {
		fprintf(stderr, "FAIL: dlclose: %s\n", dlerror());
		return 1;
	}
	signal(SIGSEGV, on_segv);
	if (cuptiGetTimestamp(&t) != CUPTI_SUCCESS || t == 0) {
		fprintf(stderr, "FAIL: cuptiGetTimestamp\n");
		return 1;
	}
	printf("dlclose: liblineage stayed loaded; CUPTI's timestamp callback answered %llu\n",
	       (unsigned long long)t);
	return 0;
}
