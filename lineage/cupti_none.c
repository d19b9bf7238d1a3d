/* SPDX-License-Identifier: MIT */
/* cupti_none.c - the CUPTI backend of a library built without CUPTI (rt_internal.h). */
#include "rt.h"

static int none_open(lin_runtime *rt, const struct lin_runtime_opts *o, struct lin_backend_ops *ops,
		     const char **status)
{
	(void)rt;
	(void)o;
	(void)ops;
	*status = "unavailable: liblineage was built without CUPTI";
	return -LIN_ENOCUPTI;
}

/* Never called: the runtime starts and closes only a backend that opened. */
static void none_noop(lin_runtime *rt) { (void)rt; }

const struct lin_cupti_backend lin_cupti_none = {
	.name = "none",
	.open = none_open,
	.started = none_noop,
	.close = none_noop,
};
