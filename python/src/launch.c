/* SPDX-License-Identifier: MIT */
/*
 * launch.c - the launch path: launch brackets, adoption, capture, and the C-side loop the
 * benchmark compares the Python-level bracket with (bench/python/bench_py.py).
 */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "ext.h"

/* ------------------------------------------------------------------ Launch */

typedef struct {
	PyObject_HEAD PyObject *runtime;
	const char *name; /* interned: lives as long as the module */
	lin_launch l;
	lin_scope scope;
	uint64_t handle; /* open.c's, while active 1 */
	int opened;      /* a scope was adopted for the bracket */
	int active;      /* 1: a bracket is open; 2: lineage failed, the block runs without one */
} LinLaunch;

/* A closed runtime's block is made all the same (a strict runtime raises): entered, it runs
 * without a bracket. */
PyObject *lin_py_rt_launch(PyObject *self, PyObject *name)
{
	if (((LinRuntime *)self)->strict && !lin_py_rt((LinRuntime *)self))
		return NULL;
	const char *s = name == Py_None ? NULL : lin_py_intern_name(name);
	if (!s && name != Py_None)
		return NULL;
	LinLaunch *l = PyObject_New(LinLaunch, &LinLaunch_Type);
	if (!l)
		return NULL;
	l->runtime = Py_NewRef(self);
	l->name = s;
	l->opened = 0;
	l->active = 0;
	return (PyObject *)l;
}

static void launch_dealloc(LinLaunch *self)
{
	if (self->active == 1)
		lin_py_open_forget(self->handle);
	Py_XDECREF(self->runtime);
	PyObject_Free(self);
}

/* Enter: the thread's C context becomes the current one, then lin_launch_begin. Every
 * error closes what was opened (the C library has recorded the misuse) and raises; outside
 * a strict runtime the error is absorbed and the body, the GPU call, runs without a bracket
 * (launch_enter). */
static PyObject *launch_enter_impl(LinLaunch *self)
{
	lin_runtime *rt = lin_py_rt((LinRuntime *)self->runtime);
	if (!rt)
		return NULL;
	if (self->active)
		return lin_py_raise(-EINVAL, "launch block entered twice");
	int err = lin_py_thread_enter(rt, &self->scope, &self->opened);
	if (err && PyErr_Occurred())
		return NULL;
	if (err && err != -LIN_ENOCONTEXT)
		return lin_py_raise(err, "launch: adopting the current context");
	int lerr = lin_launch_begin(rt, self->name, &self->l);
	if (!err && !lerr) {
		self->active = 1;
		self->handle = lin_py_open_push(self->runtime);
		return Py_NewRef(self);
	}
	lin_launch_end(rt, &self->l);
	lin_py_thread_leave(rt, &self->scope, self->opened);
	self->opened = 0;
	if (err || lerr == -LIN_ENOCONTEXT)
		return lin_py_raise(-LIN_ENOCONTEXT, "launch needs a current epoch");
	return lin_py_raise(lerr, "launch_begin");
}

static PyObject *launch_enter(LinLaunch *self, PyObject *unused)
{
	(void)unused;
	PyObject *r = launch_enter_impl(self);
	if (r || !lin_py_absorb(self->runtime))
		return r;
	self->active = 2;
	return Py_NewRef(self);
}

static PyObject *launch_exit_impl(LinLaunch *self)
{
	if (!self->active)
		return lin_py_raise(-EINVAL, "launch __exit__ without __enter__");
	LinRuntime *lr = (LinRuntime *)self->runtime;
	lin_runtime *rt = lin_py_rt(lr);
	if (!rt) { /* closed meanwhile: what was open went with it */
		lin_py_open_forget(self->handle);
		return NULL;
	}
	int err = lin_launch_end(rt, &self->l);
	if (err == -LIN_ELAUNCH_ORDER) {
		/* Refused, nothing changed: a bracket opened after it is still open. A strict
		 * runtime raises and the caller may end the inner one first, then this one.
		 * Otherwise the block has ended: its bracket and scope are closed as soon as they
		 * are on top again (open.c; blocks interleaved across an await). */
		if (lr->strict)
			return lin_py_raise(err, "launch_end: an inner launch is still open");
		struct lin_py_left left = { .l = self->l };
		if (self->opened)
			left.s[0] = self->scope;
		lin_py_open_defer(self->runtime, self->handle, &left);
		self->active = 0;
		self->opened = 0;
		return lin_py_raise(err, "launch_end: a launch opened after it is still open");
	}
	self->active = 0;
	int serr = lin_py_thread_leave(rt, &self->scope, self->opened);
	if (serr == -LIN_ESCOPE_ORDER) {
		struct lin_py_left left = { .s[0] = self->scope };
		lin_py_open_defer(self->runtime, self->handle, &left);
	} else {
		lin_py_open_done(self->runtime, self->handle);
	}
	self->opened = 0;
	if (err)
		return lin_py_raise(err, "launch_end");
	if (serr)
		return lin_py_raise(serr, "launch: leaving the adopted context");
	Py_RETURN_FALSE;
}

/* Exit: the bracket ends; an error is absorbed as at enter (the block has run). */
static PyObject *launch_exit(LinLaunch *self, PyObject *args)
{
	(void)args;
	if (self->active == 2) {
		self->active = 0;
		Py_RETURN_FALSE;
	}
	PyObject *r = launch_exit_impl(self);
	if (r || !lin_py_absorb(self->runtime))
		return r;
	self->active = 0;
	Py_RETURN_FALSE;
}

static PyObject *launch_get_ext_id(LinLaunch *self, void *c)
{
	(void)c;
	return PyLong_FromUnsignedLongLong(self->active == 1 ? self->l.ext_id : 0);
}

static PyMethodDef launch_methods[] = {
	{ "__enter__", (PyCFunction)launch_enter, METH_NOARGS, NULL },
	{ "__exit__", (PyCFunction)launch_exit, METH_VARARGS, NULL },
	{ NULL, NULL, 0, NULL },
};

static PyGetSetDef launch_getset[] = {
	{ "ext_id", (getter)launch_get_ext_id, NULL,
	  "the id pushed through the backend inside the block, 0 if none: the epoch id, with "
	  "bit 63 set when the epoch's version had ended (late work: its epoch retired or its "
	  "request ended) or bit 62 when it had been re-issued (docs/trace-format.md, \"Late "
	  "work\"); ext_id & ~(3 << 62) is the epoch",
	  NULL },
	{ NULL, NULL, NULL, NULL, NULL },
};

PyTypeObject LinLaunch_Type = {
	PyVarObject_HEAD_INIT(NULL, 0).tp_name = "lineage.Launch",
	.tp_basicsize = sizeof(LinLaunch),
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = "A launch bracket (lin_launch_begin/end) around a GPU call or a forward pass.",
	.tp_dealloc = (destructor)launch_dealloc,
	.tp_methods = launch_methods,
	.tp_getset = launch_getset,
};

/* ------------------------------------------------------------------ Adopt */

typedef struct {
	PyObject_HEAD PyObject *runtime;
	PyObject *token;  /* LinToken, or the str to parse when the block is entered */
	PyObject *remote; /* LinRemote for adopt_remote, or NULL */
	PyObject *reset;
	lin_scope scope;
	uint64_t handle; /* open.c's, while active 1 */
	int active;      /* 1: adopted; 2: lineage failed, the block runs with no context */
} LinAdopt;

/* A closed runtime's block is made all the same (a strict runtime raises): entered, it runs
 * with no context. */
static PyObject *adopt_new(PyObject *runtime, PyObject *token, PyObject *remote)
{
	if (((LinRuntime *)runtime)->strict && !lin_py_rt((LinRuntime *)runtime))
		return NULL;
	LinAdopt *a = PyObject_New(LinAdopt, &LinAdopt_Type);
	if (!a)
		return NULL;
	a->runtime = Py_NewRef(runtime);
	a->token = Py_NewRef(token);
	a->remote = Py_XNewRef(remote);
	a->reset = NULL;
	a->active = 0;
	return (PyObject *)a;
}

PyObject *lin_py_rt_adopt(PyObject *self, PyObject *tok)
{
	if (!PyObject_TypeCheck(tok, &LinToken_Type) && !PyUnicode_Check(tok)) {
		PyErr_SetString(PyExc_TypeError, "adopt takes a lineage.Token or its text");
		return NULL;
	}
	return adopt_new(self, tok, NULL);
}

PyObject *lin_py_rt_adopt_remote(PyObject *self, PyObject *ctx)
{
	if (!PyObject_TypeCheck(ctx, &LinRemote_Type)) {
		PyErr_SetString(PyExc_TypeError, "adopt_remote takes a lineage.RemoteContext");
		return NULL;
	}
	LinRemote *r = (LinRemote *)ctx;
	if (!r->ctx.has_token)
		return lin_py_raise(-LIN_ENOCONTEXT, "adopt_remote: the context carries no token");
	PyObject *tok = lin_py_token_new(&r->ctx.token, NULL);
	if (!tok)
		return NULL;
	PyObject *a = adopt_new(self, tok, ctx);
	Py_DECREF(tok);
	return a;
}

static void adopt_dealloc(LinAdopt *self)
{
	if (self->active == 1)
		lin_py_open_forget(self->handle);
	Py_XDECREF(self->runtime);
	Py_XDECREF(self->token);
	Py_XDECREF(self->remote);
	Py_XDECREF(self->reset);
	PyObject_Free(self);
}

static PyObject *adopt_enter_impl(LinAdopt *self)
{
	lin_runtime *rt = lin_py_rt((LinRuntime *)self->runtime);
	if (!rt)
		return NULL;
	if (self->active)
		return lin_py_raise(-EINVAL, "adopt block entered twice");
	if (PyUnicode_Check(self->token)) {
		/* Text (a message header): parsed here, inside the block, so damaged text is an
		 * adopt that failed (absorbed: the block runs with no context), not an exception
		 * before the user's work. An unparsable text is adopted as the empty token: the
		 * library refuses it and records bad_token. */
		lin_token tok = { 0 };
		if (lin_py_token_parse_text(self->token, &tok)) {
			PyErr_Clear(); /* even out of memory: the block runs with no context */
			memset(&tok, 0, sizeof(tok));
		}
		PyObject *t = lin_py_token_new(&tok, NULL);
		if (!t)
			return NULL;
		Py_SETREF(self->token, t);
	}
	int err = self->remote ? lin_w3c_adopt(rt, &((LinRemote *)self->remote)->ctx, &self->scope)
			       : lin_token_adopt(rt, &((LinToken *)self->token)->tok, &self->scope);
	if (err)
		return lin_py_raise(err, "adopt");
	self->reset = PyContextVar_Set(lin_py_ctxvar, self->token);
	if (!self->reset) {
		lin_scope_exit(rt, &self->scope);
		return NULL;
	}
	self->active = 1;
	self->handle = lin_py_open_push(self->runtime);
	return Py_NewRef(self->token);
}

/*
 * A token that cannot be adopted (damaged, another runtime's, a stale one parsed from text,
 * a closed runtime): outside a strict runtime the error is absorbed and the block runs with
 * no context, never with the one around it (its work would join the wrong request). A
 * token whose version ended is no error: it is adopted late (lin_token_adopt).
 */
static PyObject *adopt_enter(LinAdopt *self, PyObject *unused)
{
	(void)unused;
	PyObject *r = adopt_enter_impl(self);
	if (r || !lin_py_absorb(self->runtime))
		return r;
	self->reset = PyContextVar_Set(lin_py_ctxvar, Py_None);
	if (!self->reset)
		return NULL;
	self->active = 2;
	return Py_NewRef(Py_None);
}

static PyObject *adopt_exit_impl(LinAdopt *self)
{
	if (!self->active)
		return lin_py_raise(-EINVAL, "adopt __exit__ without __enter__");
	LinRuntime *lr = (LinRuntime *)self->runtime;
	int err = lr->rt ? lin_scope_exit(lr->rt, &self->scope) : -EINVAL; /* closed meanwhile */
	if (err == -LIN_ESCOPE_ORDER && lr->strict) /* nothing closed: an inner scope is open */
		return lin_py_raise(err, "adopt: an inner scope is still open");
	if (err == -LIN_ESCOPE_ORDER) {
		/* The block has ended: its scope is closed as soon as it is on top again
		 * (open.c; blocks interleaved across an await). */
		struct lin_py_left left = { .s[0] = self->scope };
		lin_py_open_defer(self->runtime, self->handle, &left);
	} else if (lr->rt) {
		lin_py_open_done(self->runtime, self->handle);
	} else {
		lin_py_open_forget(self->handle);
	}
	/* The variable is restored whatever the C scope did: the block has ended. */
	self->active = 0;
	PyObject *reset = self->reset;
	self->reset = NULL;
	int r = lin_py_ctxvar_reset(self->runtime, reset);
	Py_DECREF(reset);
	if (r < 0)
		return NULL;
	if (err)
		return lin_py_raise(err, lr->rt ? "adopt: scope_exit" : "the runtime is closed");
	Py_RETURN_FALSE;
}

static PyObject *adopt_exit(LinAdopt *self, PyObject *args)
{
	(void)args;
	if (self->active == 2) {
		PyObject *reset = self->reset;
		self->reset = NULL;
		self->active = 0;
		int r = lin_py_ctxvar_reset(self->runtime, reset);
		Py_DECREF(reset);
		if (r < 0)
			return NULL;
		Py_RETURN_FALSE;
	}
	PyObject *r = adopt_exit_impl(self);
	if (r || !lin_py_absorb(self->runtime))
		return r;
	Py_RETURN_FALSE;
}

static PyMethodDef adopt_methods[] = {
	{ "__enter__", (PyCFunction)adopt_enter, METH_NOARGS, NULL },
	{ "__exit__", (PyCFunction)adopt_exit, METH_VARARGS, NULL },
	{ NULL, NULL, 0, NULL },
};

PyTypeObject LinAdopt_Type = {
	PyVarObject_HEAD_INIT(NULL, 0).tp_name = "lineage.Adopt",
	.tp_basicsize = sizeof(LinAdopt),
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = "An adopted token: a C scope on this thread and the current context inside.",
	.tp_dealloc = (destructor)adopt_dealloc,
	.tp_methods = adopt_methods,
};

/* ------------------------------------------------------------------ capture, current */

static PyObject *py_capture(PyObject *m, PyObject *unused)
{
	(void)m;
	(void)unused;
	PyObject *cur = lin_py_current_token();
	if (!cur)
		return NULL;
	if (cur == Py_None)
		return lin_py_raise(-LIN_ENOCONTEXT, "capture: no current request or epoch");
	return Py_NewRef(cur);
}

static PyObject *py_current(PyObject *m, PyObject *unused)
{
	(void)m;
	(void)unused;
	PyObject *cur = lin_py_current_token();
	return cur ? Py_NewRef(cur) : NULL;
}

/* ------------------------------------------------------------------ benchmark */

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * _bench_c(token, n, name) -> ns: the C calls one Python-level task makes (adopt in the
 * worker, the bracket's check that the context is already current, launch begin and
 * end, scope exit), n times in a C loop on this thread, GIL released. Lets the benchmark
 * split the Python figure into the library's part and the interpreter's.
 */
PyObject *lin_py_rt_bench_c(PyObject *self, PyObject *args)
{
	PyObject *tok, *name;
	Py_ssize_t n;
	if (!PyArg_ParseTuple(args, "O!nU", &LinToken_Type, &tok, &n, &name))
		return NULL;
	lin_runtime *rt = lin_py_rt((LinRuntime *)self);
	const char *s = rt ? lin_py_intern_name(name) : NULL;
	if (!s)
		return NULL;
	lin_token t = ((LinToken *)tok)->tok;
	int err = 0;
	uint64_t t0, t1;
	Py_BEGIN_ALLOW_THREADS t0 = mono_ns();
	for (Py_ssize_t i = 0; i < n && !err; i++) {
		lin_scope sc;
		lin_launch l;
		uint32_t kind, version;
		uint64_t id;
		err = lin_token_adopt(rt, &t, &sc);
		if (err)
			break;
		(void)lin_scope_current(rt, &kind, &id, &version);
		err = lin_launch_begin(rt, s, &l);
		int e2 = lin_launch_end(rt, &l), e3 = lin_scope_exit(rt, &sc);
		if (!err)
			err = e2 ? e2 : e3;
	}
	t1 = mono_ns();
	Py_END_ALLOW_THREADS if (err) return lin_py_raise(err, "_bench_c");
	return PyLong_FromUnsignedLongLong(t1 - t0);
}

PyMethodDef lin_py_ctx_functions[] = {
	{ "capture", py_capture, METH_NOARGS,
	  "capture() -> Token: the current context (raises NoContext when there is none). "
	  "Any thread or task; reads the context variable, calls no C function." },
	{ "current", py_current, METH_NOARGS,
	  "current() -> Token | None: the current context, or None. Any thread or task." },
	{ NULL, NULL, 0, NULL },
};
