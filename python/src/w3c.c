/* SPDX-License-Identifier: MIT */
/*
 * w3c.c - W3C Trace Context for RPC frameworks: extract() reads the two received headers
 * into a RemoteContext, Runtime.inject() makes the headers that carry a token out.
 */
#include <errno.h>
#include <stdio.h>

#include "ext.h"

static void remote_dealloc(LinRemote *self)
{
	Py_XDECREF(self->tracestate);
	PyObject_Free(self);
}

static PyObject *hex(const uint8_t *b, size_t n)
{
	char s[33];
	for (size_t i = 0; i < n; i++)
		snprintf(s + 2 * i, 3, "%02x", b[i]);
	return PyUnicode_FromStringAndSize(s, (Py_ssize_t)(2 * n));
}

static PyObject *remote_get_trace_id(LinRemote *self, void *c)
{
	(void)c;
	return hex(self->ctx.tp.trace_id, 16);
}

static PyObject *remote_get_parent_id(LinRemote *self, void *c)
{
	(void)c;
	return hex(self->ctx.tp.parent_id, 8);
}

static PyObject *remote_get_flags(LinRemote *self, void *c)
{
	(void)c;
	return PyLong_FromLong(self->ctx.tp.flags);
}

static PyObject *remote_get_token(LinRemote *self, void *c)
{
	(void)c;
	if (!self->ctx.has_token)
		Py_RETURN_NONE;
	return lin_py_token_new(&self->ctx.token, NULL);
}

static PyObject *remote_get_tracestate(LinRemote *self, void *c)
{
	(void)c;
	return Py_NewRef(self->tracestate);
}

static PyGetSetDef remote_getset[] = {
	{ "trace_id", (getter)remote_get_trace_id, NULL, "32 hex digits", NULL },
	{ "parent_id", (getter)remote_get_parent_id, NULL, "16 hex digits", NULL },
	{ "flags", (getter)remote_get_flags, NULL, "trace-flags (bit 0: sampled)", NULL },
	{ "token", (getter)remote_get_token, NULL, "the lineage Token it carried, or None", NULL },
	{ "tracestate", (getter)remote_get_tracestate, NULL, "the received tracestate or None", NULL },
	{ NULL, NULL, NULL, NULL, NULL },
};

PyTypeObject LinRemote_Type = {
	PyVarObject_HEAD_INIT(NULL, 0).tp_name = "lineage.RemoteContext",
	.tp_basicsize = sizeof(LinRemote),
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = "What arrived with a request: its traceparent and, when present, a token. "
		  "Pass it to Runtime.request(remote=...) or Runtime.adopt_remote().",
	.tp_dealloc = (destructor)remote_dealloc,
	.tp_getset = remote_getset,
};

static PyObject *py_extract(PyObject *m, PyObject *args, PyObject *kw)
{
	(void)m;
	static char *kwlist[] = { "traceparent", "tracestate", NULL };
	const char *tp, *ts = NULL;
	if (!PyArg_ParseTupleAndKeywords(args, kw, "s|z", kwlist, &tp, &ts))
		return NULL;
	struct lin_w3c_context c;
	int err = lin_w3c_extract(tp, ts, &c);
	if (err)
		return lin_py_raise(err, "w3c_extract");
	LinRemote *r = PyObject_New(LinRemote, &LinRemote_Type);
	if (!r)
		return NULL;
	r->ctx = c;
	r->tracestate = ts ? PyUnicode_FromString(ts) : Py_NewRef(Py_None);
	if (!r->tracestate) {
		Py_DECREF(r);
		return NULL;
	}
	return (PyObject *)r;
}

/* inject(token=None, remote=None, flags=W3C_FLAG_SAMPLED) -> {"traceparent", "tracestate"} */
PyObject *lin_py_rt_inject(PyObject *self, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "token", "remote", "flags", NULL };
	PyObject *tok = Py_None, *rem = Py_None;
	unsigned char flags = LIN_W3C_FLAG_SAMPLED;
	if (!PyArg_ParseTupleAndKeywords(args, kw, "|OOb", kwlist, &tok, &rem, &flags))
		return NULL;
	lin_runtime *rt = lin_py_rt((LinRuntime *)self);
	if (!rt)
		return NULL;
	if (tok == Py_None) {
		tok = lin_py_current_token();
		if (!tok)
			return NULL;
		if (tok == Py_None)
			return lin_py_raise(-LIN_ENOCONTEXT, "inject: no token and none current");
	}
	if (!PyObject_TypeCheck(tok, &LinToken_Type) ||
	    (rem != Py_None && !PyObject_TypeCheck(rem, &LinRemote_Type))) {
		PyErr_SetString(PyExc_TypeError, "inject(token: Token, remote: RemoteContext)");
		return NULL;
	}
	const struct lin_w3c_context *in = NULL;
	const char *in_ts = NULL;
	if (rem != Py_None) {
		LinRemote *r = (LinRemote *)rem;
		in = &r->ctx;
		in_ts = r->tracestate != Py_None ? PyUnicode_AsUTF8(r->tracestate) : NULL;
	}
	struct lin_w3c_headers h;
	int err = lin_w3c_inject(rt, &((LinToken *)tok)->tok, in, in_ts, flags, &h);
	if (err)
		return lin_py_raise(err, "w3c_inject");
	return Py_BuildValue("{ssss}", "traceparent", h.traceparent, "tracestate", h.tracestate);
}

PyMethodDef lin_py_w3c_functions[] = {
	{ "extract", (PyCFunction)(void (*)(void))py_extract, METH_VARARGS | METH_KEYWORDS,
	  "extract(traceparent, tracestate=None) -> RemoteContext: read the received W3C "
	  "headers (lin_w3c_extract). Any thread; pure." },
	{ NULL, NULL, 0, NULL },
};
