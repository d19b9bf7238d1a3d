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
 * Thread model: called with the GIL; the table is per thread (_Thread_local), as the C
 * runtime's stacks are. Handles are unique in the process, so a block ended on another
 * thread finds nothing here (the C library refuses that end too: LIN_ESCOPE_THREAD).
 */
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

static _Thread_local struct {
	struct open_ent e[OPEN_MAX];
	unsigned n;
	unsigned ndeferred;
} tl;

static uint64_t next_handle; /* under the GIL */

static int find(uint64_t handle)
{
	for (int i = (int)tl.n - 1; handle && i >= 0; i--)
		if (tl.e[i].handle == handle)
			return i;
	return -1;
}

static void drop(int i)
{
	if (tl.e[i].deferred)
		tl.ndeferred--;
	memmove(&tl.e[i], &tl.e[i + 1], (tl.n - (unsigned)i - 1) * sizeof(tl.e[0]));
	tl.n--;
}

/* Deferred entries of closed runtimes: nothing left to close (the runtime popped what
 * was open when it was freed). */
static void sweep(void)
{
	PyObject *gone[OPEN_MAX];
	unsigned ngone = 0;
	for (int i = (int)tl.n - 1; tl.ndeferred && i >= 0; i--) {
		if (tl.e[i].deferred && !((LinRuntime *)tl.e[i].runtime)->rt) {
			gone[ngone++] = tl.e[i].runtime;
			drop(i);
		}
	}
	while (ngone) /* after the table is consistent: a release may run a destructor */
		Py_DECREF(gone[--ngone]);
}

uint64_t lin_py_open_push(PyObject *runtime)
{
	if (tl.n == OPEN_MAX)
		sweep();
	if (tl.n == OPEN_MAX)
		return 0; /* untracked: its end, if refused, is absorbed as before */
	struct open_ent *e = &tl.e[tl.n++];
	memset(e, 0, sizeof(*e));
	e->handle = ++next_handle;
	e->runtime = runtime;
	return e->handle;
}

void lin_py_open_forget(uint64_t handle)
{
	int i = find(handle);
	if (i >= 0 && !tl.e[i].deferred)
		drop(i);
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

void lin_py_open_done(PyObject *runtime, uint64_t handle)
{
	int i = find(handle);
	if (i < 0)
		return;
	drop(i);
	if (!tl.ndeferred)
		return;
	sweep();
	lin_runtime *rt = ((LinRuntime *)runtime)->rt;
	while (rt) {
		int top = (int)tl.n - 1;
		while (top >= 0 && tl.e[top].runtime != runtime)
			top--;
		if (top < 0 || !tl.e[top].deferred || !tl.e[top].above)
			return;
		struct open_ent *e = &tl.e[top];
		if (!close_left(rt, &e->left)) {
			e->above = 0; /* under C state the binding did not open: not retried */
			return;
		}
		drop(top);
		Py_DECREF(runtime); /* the entry's; the caller's block holds another */
	}
}

int lin_py_open_defer(PyObject *runtime, uint64_t handle, const struct lin_py_left *left)
{
	int i = find(handle);
	if (i < 0)
		return -1;
	struct open_ent *e = &tl.e[i];
	if (!left->l.cookie && !left->s[0].cookie && !left->s[1].cookie) {
		drop(i);
		return 0;
	}
	unsigned above = 0;
	for (unsigned j = (unsigned)i + 1; j < tl.n; j++)
		above += tl.e[j].runtime == runtime;
	e->deferred = 1;
	e->above = above;
	e->left = *left;
	e->runtime = Py_NewRef(runtime);
	tl.ndeferred++;
	return 0;
}
