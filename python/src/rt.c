/* SPDX-License-Identifier: MIT */
/*
 * rt.c - lineage.Runtime: lin_runtime_opts as keyword arguments, flush, close, stats.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "capsule.h"
#include "ext.h"

/* Methods defined in ctx.c and graph.c. */
PyObject *lin_py_rt_request(PyObject *self, PyObject *args, PyObject *kw);
PyObject *lin_py_rt_epoch(PyObject *self, PyObject *args, PyObject *kw);
PyObject *lin_py_rt_launch(PyObject *self, PyObject *name);
PyObject *lin_py_rt_adopt(PyObject *self, PyObject *tok);
PyObject *lin_py_rt_token_for(PyObject *self, PyObject *id);
PyObject *lin_py_rt_lookup(PyObject *self, PyObject *id);
PyObject *lin_py_rt_current(PyObject *self, PyObject *unused);
PyObject *lin_py_rt_request_begin(PyObject *self, PyObject *args, PyObject *kw);
PyObject *lin_py_rt_request_end(PyObject *self, PyObject *id);
PyObject *lin_py_rt_epoch_declare(PyObject *self, PyObject *args, PyObject *kw);
PyObject *lin_py_rt_epoch_retire(PyObject *self, PyObject *id);
PyObject *lin_py_rt_epoch_reissue(PyObject *self, PyObject *args);
PyObject *lin_py_rt_inject(PyObject *self, PyObject *args, PyObject *kw);
PyObject *lin_py_rt_adopt_remote(PyObject *self, PyObject *ctx);
PyObject *lin_py_rt_bench_c(PyObject *self, PyObject *args);

lin_runtime *lin_py_rt(LinRuntime *self)
{
	if (!self->rt) {
		lin_py_raise(-EINVAL, "the runtime is closed");
		return NULL;
	}
	return self->rt;
}

LinRuntime *lin_py_as_runtime(PyObject *o)
{
	if (!PyObject_TypeCheck(o, &LinRuntime_Type)) {
		PyErr_SetString(PyExc_TypeError, "expected a lineage.Runtime");
		return NULL;
	}
	return (LinRuntime *)o;
}

/* backend: "none", "cupti", or an object whose _lineage_backend() returns the capsule of
 * capsule.h (LIN_BACKEND_CUSTOM). */
static int parse_backend(LinRuntime *self, PyObject *backend, struct lin_runtime_opts *o,
			 struct lin_py_backend *be)
{
	if (PyUnicode_Check(backend)) {
		const char *s = PyUnicode_AsUTF8(backend);
		if (!s)
			return -1;
		if (!strcmp(s, "none"))
			o->backend = LIN_BACKEND_NONE;
		else if (!strcmp(s, "cupti"))
			o->backend = LIN_BACKEND_CUPTI;
		else
			return lin_py_raise_int(-EINVAL, "backend must be 'none', 'cupti' or a "
							 "backend object");
		return 0;
	}
	PyObject *cap = PyObject_CallMethod(backend, "_lineage_backend", NULL);
	if (!cap)
		return -1;
	const struct lin_py_backend *b = PyCapsule_GetPointer(cap, LIN_PY_BACKEND_CAPSULE);
	if (b)
		*be = *b;
	Py_DECREF(cap);
	if (!b)
		return -1;
	o->backend = LIN_BACKEND_CUSTOM;
	o->backend_ops = &be->ops;
	o->observer = be->observer;
	o->observer_user = be->observer_user;
	self->backend = Py_NewRef(backend);
	return 0;
}

static int flag(int on, uint32_t bit) { return on ? (int)bit : 0; }

static int rt_init(LinRuntime *self, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "trace_path",
				  "backend",
				  "ext_kind",
				  "no_writer_thread",
				  "no_capture_events",
				  "lean_timestamps",
				  "thread_buffer_events",
				  "flush_interval_ms",
				  "otlp_path",
				  "cupti_latency_timestamps",
				  "cupti_own_clock",
				  "cupti_buffer_kib",
				  "cupti_buffers_max",
				  "strict",
				  "sched_events",
				  NULL };
	PyObject *path = Py_None, *otlp = Py_None, *backend = NULL;
	unsigned int ext_kind = 0, tbe = 0, fim = 0, ckib = 0, cmax = 0;
	int nwt = 0, nce = 0, lean = 0, clat = 0, cown = 0, strict = -1, sched = 0;
	if (self->rt || self->lock)
		return lin_py_raise_int(-EINVAL, "Runtime.__init__ called twice");
	if (!PyArg_ParseTupleAndKeywords(args, kw, "|O&O$IpppIIO&ppIIpp", kwlist,
					 PyUnicode_FSConverter, &path, &backend, &ext_kind, &nwt,
					 &nce, &lean, &tbe, &fim, PyUnicode_FSConverter, &otlp,
					 &clat, &cown, &ckib, &cmax, &strict, &sched))
		return -1;
	/* Not given: LINEAGE_STRICT=1 in the environment makes runtimes strict (tests). */
	if (strict < 0) {
		const char *e = getenv("LINEAGE_STRICT");
		strict = e && !strcmp(e, "1");
	}
	self->strict = strict;
	self->absorbed = 0;
	int ret = -1;
	struct lin_py_backend be;
	struct lin_runtime_opts o = {
		.sz = sizeof(o),
		.trace_path = path != Py_None ? PyBytes_AS_STRING(path) : NULL,
		.ext_kind = ext_kind,
		.flags = (uint32_t)(flag(nwt, LIN_RT_NO_WRITER_THREAD) |
				    flag(nce, LIN_RT_NO_CAPTURE_EVENTS) |
				    flag(lean, LIN_RT_LEAN_TIMESTAMPS) | flag(sched, LIN_RT_SCHED_EVENTS)),
		.thread_buffer_events = tbe,
		.flush_interval_ms = fim,
		.cupti_flags = (uint32_t)(flag(clat, LIN_CUPTI_LATENCY_TIMESTAMPS) |
					  flag(cown, LIN_CUPTI_OWN_CLOCK)),
		.cupti_buffer_kib = ckib,
		.cupti_buffers_max = cmax,
	};
	/* otlp_path: the stream is liblineage-otlp's, attached as a tap. */
	struct lin_otlp_opts so = { .sz = sizeof(so),
				    .path = otlp != Py_None ? PyBytes_AS_STRING(otlp) : NULL };
	struct lin_tap_spec tap = lin_otlp_tap(&so);
	if (so.path) {
		o.taps = &tap;
		o.ntaps = 1;
	}
	if (backend && parse_backend(self, backend, &o, &be) < 0)
		goto out;
	self->trackers = PyList_New(0);
	self->lock = self->trackers ? PyThread_allocate_lock() : NULL;
	if (!self->lock) {
		PyErr_NoMemory();
		goto out;
	}
	int err;
	lin_runtime *rt = NULL;
	Py_BEGIN_ALLOW_THREADS err = lin_runtime_create(&o, &rt);
	Py_END_ALLOW_THREADS if (err)
	{
		lin_py_raise(err, NULL);
		goto out;
	}
	self->rt = rt;
	ret = 0;
	if (self->backend && PyObject_HasAttrString(self->backend, "_lineage_bind")) {
		PyObject *cap = PyCapsule_New(rt, LIN_PY_RUNTIME_CAPSULE, NULL);
		PyObject *r = cap ? PyObject_CallMethod(self->backend, "_lineage_bind", "O", cap) : NULL;
		Py_XDECREF(cap);
		if (!r)
			ret = -1;
		Py_XDECREF(r);
	}
out:
	if (path != Py_None)
		Py_DECREF(path);
	if (otlp != Py_None)
		Py_DECREF(otlp);
	return ret;
}

/* Wait for the runtime's lock with the GIL released (a flush may hold it for long). */
static void lock_nogil(LinRuntime *self)
{
	if (PyThread_acquire_lock(self->lock, NOWAIT_LOCK))
		return;
	Py_BEGIN_ALLOW_THREADS PyThread_acquire_lock(self->lock, WAIT_LOCK);
	Py_END_ALLOW_THREADS
}

static PyObject *rt_flush(LinRuntime *self, PyObject *unused)
{
	(void)unused;
	if (!lin_py_rt(self))
		return NULL;
	lock_nogil(self);
	lin_runtime *rt = self->rt; /* re-read under the lock: a close may have run */
	if (!rt) {
		PyThread_release_lock(self->lock);
		return lin_py_raise(-EINVAL, "the runtime is closed");
	}
	int err;
	Py_BEGIN_ALLOW_THREADS err = lin_runtime_flush(rt);
	Py_END_ALLOW_THREADS PyThread_release_lock(self->lock);
	if (err)
		return lin_py_raise(err, NULL);
	Py_RETURN_NONE;
}

/* Close: the backend hands over what it holds (the simulator's buffers) while the runtime
 * still exists, then the runtime is taken out of reach (under the GIL, so no launch-path
 * call can be in flight) and freed with the GIL released. */
static int rt_close_impl(LinRuntime *self)
{
	if (!self->rt)
		return 0;
	int ret = 0;
	if (self->backend && PyObject_HasAttrString(self->backend, "_lineage_close")) {
		PyObject *r = PyObject_CallMethod(self->backend, "_lineage_close", NULL);
		if (!r)
			ret = -1;
		Py_XDECREF(r);
	}
	if (!self->rt) /* closed by another thread while the backend ran */
		return ret;
	/* Graph trackers must be freed before their runtime (lineage/graph.h). */
	for (Py_ssize_t i = 0; self->trackers && i < PyList_GET_SIZE(self->trackers); i++) {
		PyObject *t = PyWeakref_GetObject(PyList_GET_ITEM(self->trackers, i));
		if (t != Py_None)
			lin_py_graph_free(t);
	}
	lin_runtime *rt = self->rt;
	self->rt = NULL;
	lock_nogil(self);
	Py_BEGIN_ALLOW_THREADS lin_runtime_free(rt);
	Py_END_ALLOW_THREADS PyThread_release_lock(self->lock);
	Py_CLEAR(self->backend);
	return ret;
}

static PyObject *rt_close(LinRuntime *self, PyObject *unused)
{
	(void)unused;
	if (rt_close_impl(self) < 0)
		return NULL;
	Py_RETURN_NONE;
}

static PyObject *rt_enter(LinRuntime *self, PyObject *unused)
{
	(void)unused;
	if (!lin_py_rt(self))
		return NULL;
	return Py_NewRef(self);
}

static PyObject *rt_exit(LinRuntime *self, PyObject *args)
{
	(void)args;
	if (rt_close_impl(self) < 0)
		return NULL;
	Py_RETURN_FALSE;
}

static PyObject *rt_stats(LinRuntime *self, PyObject *unused)
{
	(void)unused;
	lin_runtime *rt = lin_py_rt(self);
	if (!rt)
		return NULL;
	struct lin_runtime_stats st = { .sz = sizeof(st) };
	int err = lin_runtime_get_stats(rt, &st);
	if (err)
		return lin_py_raise(err, NULL);
	return Py_BuildValue("{sKsKsKsKsKsKsKsKsKsKsK}", "live_requests", st.live_requests,
			     "live_epochs", st.live_epochs, "events", st.events, "events_dropped",
			     st.events_dropped, "misuse", st.misuse, "threads", st.threads,
			     "bytes_written", st.bytes_written, "late_adopts", st.late_adopts,
			     "late_launches", st.late_launches, "captures_without_context",
			     st.captures_without_context, "absorbed", self->absorbed);
}

static PyObject *rt_now_ns(LinRuntime *self, PyObject *unused)
{
	(void)unused;
	lin_runtime *rt = lin_py_rt(self);
	return rt ? PyLong_FromUnsignedLongLong(lin_runtime_now_ns(rt)) : NULL;
}

static PyObject *rt_capsule(LinRuntime *self, PyObject *unused)
{
	(void)unused;
	lin_runtime *rt = lin_py_rt(self);
	return rt ? PyCapsule_New(rt, LIN_PY_RUNTIME_CAPSULE, NULL) : NULL;
}

static PyObject *rt_get_closed(LinRuntime *self, void *c)
{
	(void)c;
	return PyBool_FromLong(self->rt == NULL);
}

static void rt_dealloc(LinRuntime *self)
{
	PyObject_GC_UnTrack(self);
	if (self->weakrefs)
		PyObject_ClearWeakRefs((PyObject *)self);
	if (self->rt && rt_close_impl(self) < 0)
		PyErr_WriteUnraisable((PyObject *)self);
	if (self->lock)
		PyThread_free_lock(self->lock);
	Py_CLEAR(self->backend);
	Py_CLEAR(self->trackers);
	Py_TYPE(self)->tp_free((PyObject *)self);
}

static int rt_traverse(LinRuntime *self, visitproc visit, void *arg)
{
	(void)arg;
	Py_VISIT(self->backend);
	Py_VISIT(self->trackers);
	return 0;
}

static PyMethodDef rt_methods[] = {
	{ "flush", (PyCFunction)rt_flush, METH_NOARGS, NULL },
	{ "close", (PyCFunction)rt_close, METH_NOARGS, NULL },
	{ "__enter__", (PyCFunction)rt_enter, METH_NOARGS, NULL },
	{ "__exit__", (PyCFunction)rt_exit, METH_VARARGS, NULL },
	{ "stats", (PyCFunction)rt_stats, METH_NOARGS, NULL },
	{ "now_ns", (PyCFunction)rt_now_ns, METH_NOARGS, NULL },
	{ "_capsule", (PyCFunction)rt_capsule, METH_NOARGS, NULL },
	{ "request", (PyCFunction)(void (*)(void))lin_py_rt_request, METH_VARARGS | METH_KEYWORDS, NULL },
	{ "epoch", (PyCFunction)(void (*)(void))lin_py_rt_epoch, METH_VARARGS | METH_KEYWORDS, NULL },
	{ "launch", lin_py_rt_launch, METH_O, NULL },
	{ "adopt", lin_py_rt_adopt, METH_O, NULL },
	{ "token_for", lin_py_rt_token_for, METH_O, NULL },
	{ "lookup", lin_py_rt_lookup, METH_O, NULL },
	{ "thread_current", lin_py_rt_current, METH_NOARGS, NULL },
	{ "request_begin", (PyCFunction)(void (*)(void))lin_py_rt_request_begin,
	  METH_VARARGS | METH_KEYWORDS, NULL },
	{ "request_end", lin_py_rt_request_end, METH_O, NULL },
	{ "epoch_declare", (PyCFunction)(void (*)(void))lin_py_rt_epoch_declare,
	  METH_VARARGS | METH_KEYWORDS, NULL },
	{ "epoch_retire", lin_py_rt_epoch_retire, METH_O, NULL },
	{ "epoch_reissue", lin_py_rt_epoch_reissue, METH_VARARGS, NULL },
	{ "inject", (PyCFunction)(void (*)(void))lin_py_rt_inject, METH_VARARGS | METH_KEYWORDS, NULL },
	{ "adopt_remote", lin_py_rt_adopt_remote, METH_O, NULL },
	{ "_bench_c", lin_py_rt_bench_c, METH_VARARGS, NULL },
	{ NULL, NULL, 0, NULL },
};

static PyObject *rt_get_strict(LinRuntime *self, void *c)
{
	(void)c;
	return PyBool_FromLong(self->strict);
}

static PyGetSetDef rt_getset[] = {
	{ "closed", (getter)rt_get_closed, NULL, "True once close() ran.", NULL },
	{ "strict", (getter)rt_get_strict, NULL,
	  "True: context managers raise lineage errors instead of running the block without "
	  "lineage (Runtime(strict=...), LINEAGE_STRICT=1).",
	  NULL },
	{ NULL, NULL, NULL, NULL, NULL },
};

PyTypeObject LinRuntime_Type = {
	PyVarObject_HEAD_INIT(NULL, 0).tp_name = "lineage._lineage.Runtime",
	.tp_basicsize = sizeof(LinRuntime),
	.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
	.tp_doc = "The C runtime; see lineage.Runtime.",
	.tp_new = PyType_GenericNew,
	.tp_init = (initproc)rt_init,
	.tp_dealloc = (destructor)rt_dealloc,
	.tp_traverse = (traverseproc)rt_traverse,
	.tp_methods = rt_methods,
	.tp_getset = rt_getset,
	.tp_weaklistoffset = offsetof(LinRuntime, weakrefs),
};
