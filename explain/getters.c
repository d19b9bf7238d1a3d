/* SPDX-License-Identifier: MIT */
/* getters.c - what a built ledger holds, read through getters (explain.h). */
#include "xstate.h"

size_t lin_explain_count(const struct lin_explain *x) { return x->launches.n; }

size_t lin_explain_listed(const struct lin_explain *x) { return x->crits.n; }

const struct lin_xlaunch *lin_explain_at(const struct lin_explain *x, size_t i)
{
	return i < x->launches.n ? lin_vec_at(&x->launches, i) : NULL;
}

const uint64_t *lin_explain_reqs(const struct lin_explain *x, const struct lin_xlaunch *l)
{
	return l->nreq ? lin_vec_at(&x->reqs, (size_t)l->req0) : NULL;
}

const char *lin_explain_name(const struct lin_explain *x, const struct lin_xlaunch *l)
{
	return l->name ? x->pool + l->name - 1 : NULL;
}

const struct lin_xsummary *lin_explain_summary(const struct lin_explain *x) { return &x->sum; }
