/* SPDX-License-Identifier: MIT */
/* cupti_fallback.c - the CUPTI backend hooks when the library is built without CUPTI. */
#include "rt.h"

int lin_cupti_backend_open(lin_runtime *rt, const struct lin_runtime_opts *o,
			   struct lin_backend_ops *ops, const char **status)
{
	(void)rt;
	(void)o;
	(void)ops;
	*status = "unavailable: liblineage was built without CUPTI";
	return -LIN_ENOCUPTI;
}

void lin_cupti_backend_started(lin_runtime *rt) { (void)rt; }

void lin_cupti_backend_close(lin_runtime *rt) { (void)rt; }
