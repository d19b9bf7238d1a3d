/* SPDX-License-Identifier: MIT */
/*
 * ext.h - shared declarations of the lineage._lineage extension (docs/python.md).
 *
 * Thread model. Every call below runs with the GIL held unless it says otherwise; the
 * launch path (Launch/Adopt enter and exit, capture) never releases it, since the C calls
 * it wraps take no lock and never block. Calls that block (runtime create, flush, close)
 * release the GIL around the C call and hold the runtime's own lock, so a close waits for
 * a flush in flight and nothing touches a freed runtime.
 */
#ifndef LIN_PY_EXT_H
#define LIN_PY_EXT_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <lineage.h>
#include <lineage/otlp.h>

/* The Python Runtime object: owns one lin_runtime. */
typedef struct {
	PyObject_HEAD lin_runtime *rt; /* NULL once closed */
	PyThread_type_lock lock;       /* held by flush and close around the blocking C call */
	PyObject *backend;             /* a custom backend object kept alive, or NULL */
	PyObject *trackers;            /* weakrefs to its GraphTrackers, freed before it */
	PyObject *weakrefs;
	int strict;                  /* context managers raise lineage errors (tests) */
	unsigned long long absorbed; /* lineage errors context managers absorbed */
} LinRuntime;

/* A token: a lin_token by value, and the Runtime that made it (None when parsed). */
typedef struct {
	PyObject_HEAD lin_token tok;
	PyObject *runtime; /* LinRuntime or Py_None */
} LinToken;

/* A received W3C context (lineage.RemoteContext); the tracestate it came with is kept to
 * be carried on by inject(). */
typedef struct {
	PyObject_HEAD struct lin_w3c_context ctx;
	PyObject *tracestate; /* str or Py_None */
} LinRemote;

/* Types (defined in rt.c, ctx.c, graph.c). */
extern PyTypeObject LinRuntime_Type;
extern PyTypeObject LinToken_Type;
extern PyTypeObject LinRequest_Type;
extern PyTypeObject LinEpoch_Type;
extern PyTypeObject LinLaunch_Type;
extern PyTypeObject LinAdopt_Type;
extern PyTypeObject LinGraphTracker_Type;
extern PyTypeObject LinGraphCapture_Type;
extern PyTypeObject LinGraphLaunch_Type;
extern PyTypeObject LinRemote_Type;

/* module.c */
extern PyObject *lin_py_Error;  /* lineage.Error */
extern PyObject *lin_py_ctxvar; /* the current-context ContextVar (holds a Token or None) */

/* Raise the exception class for @err (a negative lineage return) with @what as context.
 * Return NULL, for `return lin_py_raise(...)`. */
PyObject *lin_py_raise(int err, const char *what);
/* The same, returning -1 for int-returning slots. */
int lin_py_raise_int(int err, const char *what);
/*
 * In a context manager (or the call that makes one): a lineage.Error just raised is
 * absorbed unless @runtime (a LinRuntime, closed or not) is strict: cleared, counted
 * (Runtime.stats()["absorbed"]), and 1 returned; the block then runs without what lineage
 * could not give it (docs/python.md, "The work always runs"). 0: the exception stands (a
 * strict runtime, or not a lineage error: TypeError, MemoryError).
 */
int lin_py_absorb(PyObject *runtime);
/* A launch name that lives as long as the module (the runtime does not copy launch
 * names, and may read one after the caller's string is gone). NULL with an exception. */
const char *lin_py_intern_name(PyObject *name);
/* The current context's Token (borrowed ref, never NULL: Py_None when none), or NULL with an
 * exception set. */
PyObject *lin_py_current_token(void);

/* rt.c */
/* The runtime of @self, or NULL with lineage.RuntimeClosed raised. */
lin_runtime *lin_py_rt(LinRuntime *self);
/* A LinRuntime from an arbitrary object, or NULL with TypeError. */
LinRuntime *lin_py_as_runtime(PyObject *o);

/* ctx.c */
PyObject *lin_py_token_new(const lin_token *tok, PyObject *runtime);
/* Parse the token text of str @text into *@tok. Return 0, or a negative lineage error:
 * -EINVAL for text that cannot be encoded or has a NUL inside (damaged, no exception set),
 * lin_token_parse's error, or -ENOMEM with the Python exception set. */
int lin_py_token_parse_text(PyObject *text, lin_token *tok);
/* Make the thread's C context the current Python context for a call that needs it (a
 * launch, a graph capture). *@opened tells lin_py_thread_leave whether a scope was
 * adopted. Return 0 or a negative lineage error (no exception set); -LIN_ENOCONTEXT when
 * there is no current context. */
int lin_py_thread_enter(lin_runtime *rt, lin_scope *scope, int *opened);
int lin_py_thread_leave(lin_runtime *rt, lin_scope *scope, int opened);
/* Restore the context variable at a block's end (PyContextVar_Reset of @reset). A block
 * left in another Context than it began in (a generator resumed under a copied context's
 * run(), an async generator) cannot be reset (ValueError): outside a strict @runtime (a
 * LinRuntime; NULL: LINEAGE_STRICT=1 decides) that is absorbed (counted in its
 * stats()["absorbed"]) and the variable set, in the Context the block ends in, to what it
 * was before the block (None where it was unset). 0, or -1 with an exception set. */
int lin_py_ctxvar_reset(PyObject *runtime, PyObject *reset);

/* open.c: what the binding's blocks hold open in the C runtime on this thread, so that one
 * whose end the C library refused for order (blocks of two asyncio tasks interleaved
 * across an await) does not stay open for good. */
/* What a block's end left open, closed in this order once on top (cookie 0: nothing). */
struct lin_py_left {
	lin_launch l;
	lin_scope s[2]; /* innermost first */
};
/* A block of @runtime (a LinRuntime) opened C state on this thread: its handle, 0 when
 * untracked (too many open). */
uint64_t lin_py_open_push(PyObject *runtime);
/* The block's C state is closed: forgotten, then what blocks of @runtime ended earlier
 * left open below it is closed if now on top. */
void lin_py_open_done(PyObject *runtime, uint64_t handle);
/* The block has ended but the C library refused to close @left for order (outside a
 * strict runtime): kept (the entry holds a reference to @runtime) and closed by the
 * lin_py_open_done that leaves it on top. 0, or -1 when untracked (nothing kept). */
int lin_py_open_defer(PyObject *runtime, uint64_t handle, const struct lin_py_left *left);
/* The block's state is gone without an end (its runtime closed): forgotten. */
void lin_py_open_forget(uint64_t handle);

/* Method tables contributed to the module by each file. */
extern PyMethodDef lin_py_ctx_functions[];
extern PyMethodDef lin_py_w3c_functions[];

int lin_py_graph_ready(PyObject *m);
void lin_py_graph_free(PyObject *tracker);

#endif
