/* SPDX-License-Identifier: MIT */
/*
 * module.c - lineage._lineage: exceptions named after the library's error codes, the
 * current-context variable, launch-name interning, module set-up.
 */
#include <errno.h>

#include "ext.h"

PyObject *lin_py_Error;
PyObject *lin_py_ctxvar;
static PyObject *names;       /* str -> str: launch names kept for the process */
static PyObject *by_code;     /* int (positive code) -> exception class */
static PyObject *invalid_cls; /* InvalidArgument: lineage.Error and ValueError */

/* Python name of each library code; the exception's .name is the C name. */
static const struct {
	int code;
	const char *cls;
} err_classes[] = {
	{ LIN_ESTALE_TOKEN, "StaleToken" },   { LIN_EBADTOKEN, "BadToken" },
	{ LIN_EFOREIGN, "ForeignToken" },     { LIN_ESCOPE_ORDER, "ScopeOrder" },
	{ LIN_ESCOPE_THREAD, "ScopeThread" }, { LIN_ESCOPE_CLOSED, "ScopeClosed" },
	{ LIN_ESCOPE_DEPTH, "ScopeDepth" },   { LIN_ENOCONTEXT, "NoContext" },
	{ LIN_ENOTFOUND, "NotFound" },        { LIN_ELAUNCH_ORDER, "LaunchOrder" },
	{ LIN_EBACKEND, "BackendError" },     { LIN_ETRACE, "TraceError" },
	{ LIN_ENOCUPTI, "NoCupti" },          { LIN_ELAUNCH_DEPTH, "LaunchDepth" },
};

PyObject *lin_py_raise(int err, const char *what)
{
	int code = err < 0 ? -err : err;
	PyObject *cls = NULL;
	PyObject *key = PyLong_FromLong(code);
	if (key) {
		cls = PyDict_GetItemWithError(by_code, key);
		Py_DECREF(key);
	}
	if (PyErr_Occurred())
		return NULL;
	if (!cls)
		cls = code == EINVAL ? invalid_cls : lin_py_Error;
	/* Error(message, code, name): the attributes are set by the Python class. */
	PyObject *e = PyObject_CallFunction(cls, "sis", what ? what : lin_strerror(err), code,
					    lin_err_name(err));
	if (e) {
		PyErr_SetObject(cls, e);
		Py_DECREF(e);
	}
	return NULL;
}

int lin_py_raise_int(int err, const char *what)
{
	lin_py_raise(err, what);
	return -1;
}

int lin_py_absorb(PyObject *runtime)
{
	if (!runtime || !PyObject_TypeCheck(runtime, &LinRuntime_Type))
		return 0;
	LinRuntime *r = (LinRuntime *)runtime;
	if (r->strict || !PyErr_ExceptionMatches(lin_py_Error))
		return 0;
	PyErr_Clear();
	r->absorbed++;
	return 1;
}

const char *lin_py_intern_name(PyObject *name)
{
	if (!PyUnicode_CheckExact(name)) {
		PyErr_SetString(PyExc_TypeError, "a launch name must be a str");
		return NULL;
	}
	/* The str kept in the table owns the UTF-8 copy the runtime reads; one entry per
	 * distinct name (kernel names are few), never freed. */
	PyObject *kept = PyDict_SetDefault(names, name, name);
	return kept ? PyUnicode_AsUTF8(kept) : NULL;
}

PyObject *lin_py_current_token(void)
{
	PyObject *v;
	if (PyContextVar_Get(lin_py_ctxvar, Py_None, &v) < 0)
		return NULL;
	Py_DECREF(v); /* the context keeps it alive while the caller uses it */
	return v;
}

static PyObject *py_set_context_var(PyObject *m, PyObject *var)
{
	(void)m;
	if (!PyContextVar_CheckExact(var)) {
		PyErr_SetString(PyExc_TypeError, "expected a contextvars.ContextVar");
		return NULL;
	}
	Py_XSETREF(lin_py_ctxvar, Py_NewRef(var));
	Py_RETURN_NONE;
}

/* Error classes come from lineage/_errors.py (so they are ordinary Python classes that
 * pickle and subclass); the module is told them once at import. */
static PyObject *py_set_errors(PyObject *m, PyObject *args)
{
	(void)m;
	PyObject *base, *table, *inval;
	if (!PyArg_ParseTuple(args, "OO!O", &base, &PyDict_Type, &table, &inval))
		return NULL;
	Py_XSETREF(lin_py_Error, Py_NewRef(base));
	Py_XSETREF(invalid_cls, Py_NewRef(inval));
	PyDict_Clear(by_code);
	for (size_t i = 0; i < sizeof(err_classes) / sizeof(err_classes[0]); i++) {
		PyObject *cls = PyDict_GetItemString(table, err_classes[i].cls);
		if (!cls) {
			PyErr_Format(PyExc_KeyError, "no error class %s", err_classes[i].cls);
			return NULL;
		}
		PyObject *key = PyLong_FromLong(err_classes[i].code);
		if (!key || PyDict_SetItem(by_code, key, cls) < 0) {
			Py_XDECREF(key);
			return NULL;
		}
		Py_DECREF(key);
	}
	Py_RETURN_NONE;
}

static PyObject *py_error_names(PyObject *m, PyObject *unused)
{
	(void)m;
	(void)unused;
	PyObject *d = PyDict_New();
	for (size_t i = 0; d && i < sizeof(err_classes) / sizeof(err_classes[0]); i++) {
		PyObject *v =
			Py_BuildValue("(si)", lin_err_name(err_classes[i].code), err_classes[i].code);
		if (!v || PyDict_SetItemString(d, err_classes[i].cls, v) < 0) {
			Py_XDECREF(v);
			Py_CLEAR(d);
			break;
		}
		Py_DECREF(v);
	}
	return d;
}

static PyObject *py_strerror(PyObject *m, PyObject *arg)
{
	(void)m;
	long e = PyLong_AsLong(arg);
	if (e == -1 && PyErr_Occurred())
		return NULL;
	return Py_BuildValue("(ss)", lin_err_name((int)e), lin_strerror((int)e));
}

static PyObject *py_library_version(PyObject *m, PyObject *unused)
{
	(void)m;
	(void)unused;
	return PyUnicode_FromString(lin_version_string());
}

static PyMethodDef module_functions[] = {
	{ "_set_context_var", py_set_context_var, METH_O, NULL },
	{ "_set_errors", py_set_errors, METH_VARARGS, NULL },
	{ "_error_names", py_error_names, METH_NOARGS, NULL },
	{ "strerror", py_strerror, METH_O,
	  "strerror(code) -> (name, text): the library's name and text for an error code.\n"
	  "Any thread." },
	{ "library_version", py_library_version, METH_NOARGS,
	  "library_version() -> str: the version of the liblineage actually loaded." },
	{ NULL, NULL, 0, NULL },
};

static struct PyModuleDef moddef = {
	PyModuleDef_HEAD_INIT,
	.m_name = "lineage._lineage",
	.m_doc = "The C extension under the lineage package; use `import lineage`.",
	.m_size = -1,
	.m_methods = module_functions,
};

static int add_type(PyObject *m, PyTypeObject *t, const char *name)
{
	if (PyType_Ready(t) < 0)
		return -1;
	Py_INCREF(t);
	if (PyModule_AddObject(m, name, (PyObject *)t) < 0) {
		Py_DECREF(t);
		return -1;
	}
	return 0;
}

static int add_consts(PyObject *m)
{
	return PyModule_AddIntConstant(m, "REISSUE_OTHER", LIN_REISSUE_OTHER) ||
	       PyModule_AddIntConstant(m, "REISSUE_RETRY", LIN_REISSUE_RETRY) ||
	       PyModule_AddIntConstant(m, "REISSUE_REPLAY", LIN_REISSUE_REPLAY) ||
	       PyModule_AddIntConstant(m, "W3C_FLAG_SAMPLED", LIN_W3C_FLAG_SAMPLED) ||
	       PyModule_AddIntConstant(m, "TARGET_REQUEST", LIN_TARGET_REQUEST) ||
	       PyModule_AddIntConstant(m, "SHARE_PREFILL", LIN_SHARE_PREFILL) ||
	       PyModule_AddIntConstant(m, "SHARE_DECODE", LIN_SHARE_DECODE) ||
	       PyModule_AddIntConstant(m, "SHARE_FIRST_TOKEN", LIN_SHARE_FIRST_TOKEN) ||
	       PyModule_AddIntConstant(m, "TARGET_EPOCH", LIN_TARGET_EPOCH) ||
	       PyModule_AddIntConstant(m, "TOKEN_TEXT_MAX", LIN_TOKEN_TEXT_MAX) ||
	       PyModule_AddStringConstant(m, "HEADER_VERSION", LIN_STRINGIFY_VERSION);
}

PyMODINIT_FUNC PyInit__lineage(void)
{
	names = PyDict_New();
	by_code = PyDict_New();
	if (!names || !by_code)
		return NULL;
	PyObject *m = PyModule_Create(&moddef);
	if (!m)
		return NULL;
	if (PyModule_AddFunctions(m, lin_py_ctx_functions) < 0 ||
	    PyModule_AddFunctions(m, lin_py_w3c_functions) < 0 ||
	    add_type(m, &LinRuntime_Type, "Runtime") || add_type(m, &LinToken_Type, "Token") ||
	    add_type(m, &LinRequest_Type, "Request") || add_type(m, &LinEpoch_Type, "Epoch") ||
	    add_type(m, &LinLaunch_Type, "Launch") || add_type(m, &LinAdopt_Type, "Adopt") ||
	    add_type(m, &LinRemote_Type, "RemoteContext") || lin_py_graph_ready(m) || add_consts(m)) {
		Py_DECREF(m);
		return NULL;
	}
	return m;
}
