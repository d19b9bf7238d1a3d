/* SPDX-License-Identifier: MIT */
/*
 * open.c - what the binding's blocks hold open in the C runtime on this thread (launch
 * brackets, adopted scopes, graph launches), in the order they were opened.
 *
 * The C library refuses an end out of order (lin_launch_end: -LIN_ELAUNCH_ORDER,
 * lin_scope_exit: -LIN_ESCOPE_ORDER) and changes nothing. Python blocks on one thread
 * nest, except where two asyncio tasks' blocks span an await (documented misuse): the
 * first to end is refused while the other's is still open above it. Outside a strict
 * runtime that block has ended for the user all the same, so what it left open is kept
 * here and closed as soon as it is on top again: when every block the binding opened
 * above it on this thread (same runtime) has ended, right after the last of those ends.
 * Nothing is retried while nothing of the binding's was above it (it waits for C state
 * the binding did not open: retrying would only write a misuse record each time).
 *
 * Thread model: called with the GIL; the table is per thread (on the heap, see tl), as the C
 * runtime's stacks are. Handles are unique in the process, so a block ended on another
 * thread finds nothing here (the C library refuses that end too: LIN_ESCOPE_THREAD).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "ext.h"

#define OPEN_MAX 64

struct open_ent {
	uint64_t handle;
	PyObject *runtime; /* LinRuntime: borrowed while the block is live (it holds a
			     * reference), owned once deferred */
	int deferred;      /* the block has ended; @left is what is still open */
	unsigned above;    /* deferred: entries of the runtime above it when last refused */
	struct lin_py_left left;
};

struct table {
	struct open_ent e[OPEN_MAX];
	unsigned n;
	unsigned ndeferred;
};

/* The thread's table is on the heap, created by the thread's first block: only a pointer
 * is thread-local. A table of 64 entries in the TLS block (3.6 KB) made the extension
 * unloadable when lineage is linked in statically: the library's initial-exec TLS puts
 * the extension's whole TLS block in the static TLS that glibc keeps for dlopen (a few
 * hundred bytes free), and the import failed ("cannot allocate memory in static TLS
 * block"). The table is freed when its thread exits; references its deferred entries
 * hold are leaked then, as there is no GIL to drop them with (a thread that exits with a
 * block of its own still open). */
static _Thread_local struct table *tl;
static pthread_key_t tl_key;
static pthread_once_t tl_once = PTHREAD_ONCE_INIT;
static int tl_key_ok;

/* At the thread's exit (on that thread): nothing after it finds the freed table. */
static void tl_free(void *p)
{
	tl = NULL;
	free(p);
}

static void tl_key_make(void) { tl_key_ok = pthread_key_create(&tl_key, tl_free) == 0; }

/* The thread's table, created if @make (NULL: none yet, or no memory). Read once per
 * entry point: a _Thread_local of a shared object costs a __tls_get_addr call. */
static __attribute__((noinline)) struct table *table_make(void)
{
	pthread_once(&tl_once, tl_key_make);
	struct table *t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	if (tl_key_ok)
		(void)pthread_setspecific(tl_key, t);
	tl = t;
	return t;
}

static inline struct table *table(int make)
{
	struct table *t = tl;
	if (__builtin_expect(!t, 0) && make)
		t = table_make();
	return t;
}

static uint64_t next_handle; /* under the GIL */

static int find(const struct table *t, uint64_t handle)
{
	for (int i = (int)t->n - 1; handle && i >= 0; i--)
		if (t->e[i].handle == handle)
			return i;
	return -1;
}

static void drop(struct table *t, int i)
{
	if (t->e[i].deferred)
		t->ndeferred--;
	memmove(&t->e[i], &t->e[i + 1], (t->n - (unsigned)i - 1) * sizeof(t->e[0]));
	t->n--;
}

/* Deferred entries of closed runtimes: nothing left to close (the runtime popped what
 * was open when it was freed). */
static __attribute__((noinline)) void sweep(struct table *t)
{
	PyObject *gone[OPEN_MAX];
	unsigned ngone = 0;
	for (int i = (int)t->n - 1; t->ndeferred && i >= 0; i--) {
		if (t->e[i].deferred && !((LinRuntime *)t->e[i].runtime)->rt) {
			gone[ngone++] = t->e[i].runtime;
			drop(t, i);
		}
	}
	while (ngone) /* after the table is consistent: a release may run a destructor */
		Py_DECREF(gone[--ngone]);
}

uint64_t lin_py_open_push(PyObject *runtime)
{
	struct table *t = table(1);
	if (!t)
		return 0; /* untracked: no memory for the thread's table */
	if (t->n == OPEN_MAX)
		sweep(t);
	if (t->n == OPEN_MAX)
		return 0; /* untracked: its end, if refused, is absorbed as before */
	struct open_ent *e = &t->e[t->n++];
	e->handle = ++next_handle;
	e->runtime = runtime;
	e->deferred = 0;
	return e->handle;
}

void lin_py_open_forget(uint64_t handle)
{
	struct table *t = table(0);
	int i = t ? find(t, handle) : -1;
	if (i >= 0 && !t->e[i].deferred)
		drop(t, i);
}

/* Close what @left holds, in order (the bracket, then the scopes from the innermost).
 * 1: all closed; 0: one was refused for order (it and the rest still open). */
static int close_left(lin_runtime *rt, struct lin_py_left *left)
{
	if (left->l.cookie) {
		if (lin_launch_end(rt, &left->l) == -LIN_ELAUNCH_ORDER)
			return 0;
		left->l.cookie = 0; /* closed (a failed pop of the backend closes it too) */
	}
	for (int i = 0; i < 2; i++) {
		if (!left->s[i].cookie)
			continue;
		if (lin_scope_exit(rt, &left->s[i]) == -LIN_ESCOPE_ORDER)
			return 0;
		left->s[i].cookie = 0;
	}
	return 1;
}

/* Forget @handle's entry, then close what is deferred and now on top. Off the launch
 * path's common case (lin_py_open_done). */
static __attribute__((noinline)) void done_slow(struct table *t, PyObject *runtime, uint64_t handle)
{
	int i = find(t, handle);
	if (i < 0)
		return;
	drop(t, i);
	if (!t->ndeferred)
		return;
	sweep(t);
	lin_runtime *rt = ((LinRuntime *)runtime)->rt;
	while (rt) {
		int top = (int)t->n - 1;
		while (top >= 0 && t->e[top].runtime != runtime)
			top--;
		if (top < 0 || !t->e[top].deferred || !t->e[top].above)
			return;
		struct open_ent *e = &t->e[top];
		if (!close_left(rt, &e->left)) {
			e->above = 0; /* under C state the binding did not open: not retried */
			return;
		}
		drop(t, top);
		Py_DECREF(runtime); /* the entry's; the caller's block holds another */
	}
}

void lin_py_open_done(PyObject *runtime, uint64_t handle)
{
	struct table *t = table(0);
	if (!t)
		return; /* the block was untracked */
	/* The common case: the block's entry on top, nothing deferred on this thread. */
	if (t->n && t->e[t->n - 1].handle == handle && !t->ndeferred) {
		t->n--;
		return;
	}
	done_slow(t, runtime, handle);
}

int lin_py_open_defer(PyObject *runtime, uint64_t handle, const struct lin_py_left *left)
{
	struct table *t = table(0);
	int i = t ? find(t, handle) : -1;
	if (i < 0)
		return -1;
	struct open_ent *e = &t->e[i];
	if (!left->l.cookie && !left->s[0].cookie && !left->s[1].cookie) {
		drop(t, i);
		return 0;
	}
	unsigned above = 0;
	for (unsigned j = (unsigned)i + 1; j < t->n; j++)
		above += t->e[j].runtime == runtime;
	e->deferred = 1;
	e->above = above;
	e->left = *left;
	e->runtime = Py_NewRef(runtime);
	t->ndeferred++;
	return 0;
}
