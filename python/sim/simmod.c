/* SPDX-License-Identifier: MIT */
/*
 * simmod.c - _lineage_sim, a test-only module: the CUPTI-semantics simulator (bench/sim/)
 * as a lineage.Runtime backend, so Python tests get real GPU records (CUPTI activity
 * buffers decoded by lin_cupti_attach_decode) without a GPU. Built by CMake only when
 * CUPTI's headers and libcupti are there (the simulator walks its buffers with the real
 * cuptiActivityGetNextRecord); never installed. docs/python.md, "Testing on the simulator".
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "capsule.h"
#include "sim.h"

typedef struct {
	PyObject_HEAD lin_sim *sim;
	struct lin_py_backend be;
	PyObject *names; /* kernel names the simulator's records point at */
} Sim;

static PyTypeObject Sim_Type;

static int sim_init(Sim *self, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "seed", "host_clock", "drop_permille", NULL };
	unsigned long long seed = 1;
	int host_clock = 1;
	unsigned int drop = 0;
	if (self->sim || !PyArg_ParseTupleAndKeywords(args, kw, "|KpI", kwlist, &seed, &host_clock, &drop))
		return -1;
	struct lin_sim_opts o = {
		.sz = sizeof(o), .seed = seed, .host_clock = host_clock, .drop_permille = drop
	};
	if (lin_sim_create(NULL, &o, &self->sim)) {
		PyErr_SetString(PyExc_ValueError, "lin_sim_create failed");
		return -1;
	}
	self->names = PyDict_New();
	lin_sim_backend_ops(self->sim, &self->be.ops);
	self->be.observer = lin_sim_observer;
	self->be.observer_user = self->sim;
	return self->names ? 0 : -1;
}

static void sim_dealloc(Sim *self)
{
	lin_sim_free(self->sim);
	Py_XDECREF(self->names);
	Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *sim_backend(Sim *self, PyObject *unused)
{
	(void)unused;
	return PyCapsule_New(&self->be, LIN_PY_BACKEND_CAPSULE, NULL);
}

static PyObject *sim_bind(Sim *self, PyObject *cap)
{
	lin_runtime *rt = PyCapsule_GetPointer(cap, LIN_PY_RUNTIME_CAPSULE);
	if (!rt)
		return NULL;
	lin_sim_set_runtime(self->sim, rt);
	Py_RETURN_NONE;
}

/* Before the runtime closes: hand every buffer to lin_cupti_attach_decode. */
static PyObject *sim_close(Sim *self, PyObject *unused)
{
	(void)unused;
	int err;
	Py_BEGIN_ALLOW_THREADS err = lin_sim_flush(self->sim);
	Py_END_ALLOW_THREADS lin_sim_set_runtime(self->sim, NULL);
	if (err)
		return PyErr_Format(PyExc_RuntimeError, "lin_sim_flush: %d", err);
	Py_RETURN_NONE;
}

static const char *keep(Sim *self, PyObject *name)
{
	PyObject *k = PyDict_SetDefault(self->names, name, name);
	return k ? PyUnicode_AsUTF8(k) : NULL;
}

static PyObject *sim_launch_kernel(Sim *self, PyObject *args)
{
	unsigned int stream;
	PyObject *name;
	if (!PyArg_ParseTuple(args, "IU", &stream, &name))
		return NULL;
	const char *s = keep(self, name);
	return s ? PyLong_FromLongLong(lin_sim_launch_kernel(self->sim, stream, s)) : NULL;
}

static PyObject *sim_capture_begin(Sim *self, PyObject *args)
{
	unsigned int stream;
	if (!PyArg_ParseTuple(args, "I", &stream))
		return NULL;
	return PyLong_FromLong(lin_sim_capture_begin(self->sim, stream));
}

static PyObject *sim_capture_end(Sim *self, PyObject *args)
{
	unsigned int stream;
	uint64_t nodes[256];
	size_t n = 0;
	if (!PyArg_ParseTuple(args, "I", &stream))
		return NULL;
	uint32_t g = lin_sim_capture_end(self->sim, stream, nodes, 256, &n);
	PyObject *l = PyList_New(0);
	for (size_t i = 0; l && i < n && i < 256; i++) {
		PyObject *v = PyLong_FromUnsignedLongLong(nodes[i]);
		if (!v || PyList_Append(l, v) < 0) {
			Py_XDECREF(v);
			Py_CLEAR(l);
		}
		Py_XDECREF(v);
	}
	return l ? Py_BuildValue("(IN)", g, l) : NULL;
}

static PyObject *sim_instantiate(Sim *self, PyObject *args)
{
	unsigned int graph;
	struct lin_sim_node map[256];
	size_t n = 0;
	if (!PyArg_ParseTuple(args, "I", &graph))
		return NULL;
	uint32_t x = lin_sim_graph_instantiate(self->sim, graph, map, 256, &n);
	PyObject *l = PyList_New(0);
	for (size_t i = 0; l && i < n && i < 256; i++) {
		PyObject *v = Py_BuildValue("(KK)", (unsigned long long)map[i].original,
					    (unsigned long long)map[i].clone);
		if (!v || PyList_Append(l, v) < 0)
			Py_CLEAR(l);
		Py_XDECREF(v);
	}
	return l ? Py_BuildValue("(IN)", x, l) : NULL;
}

static PyObject *sim_graph_launch(Sim *self, PyObject *args)
{
	unsigned int x, stream;
	int64_t grids[256];
	if (!PyArg_ParseTuple(args, "II", &x, &stream))
		return NULL;
	size_t n = lin_sim_graph_launch(self->sim, x, stream, grids, 256);
	PyObject *l = PyList_New(0);
	for (size_t i = 0; l && i < n && i < 256; i++) {
		PyObject *v = PyLong_FromLongLong(grids[i]);
		if (!v || PyList_Append(l, v) < 0)
			Py_CLEAR(l);
		Py_XDECREF(v);
	}
	return l;
}

static PyObject *sim_stats(Sim *self, PyObject *unused)
{
	(void)unused;
	struct lin_sim_stats st;
	lin_sim_get_stats(self->sim, &st);
	return Py_BuildValue("{sKsKsKsK}", "api_calls", st.api_calls, "kernels", st.kernels,
			     "buffers", st.buffers, "dropped_records", st.dropped_records);
}

static PyMethodDef sim_methods[] = {
	{ "_lineage_backend", (PyCFunction)sim_backend, METH_NOARGS, NULL },
	{ "_lineage_bind", (PyCFunction)sim_bind, METH_O, NULL },
	{ "_lineage_close", (PyCFunction)sim_close, METH_NOARGS, NULL },
	{ "launch_kernel", (PyCFunction)sim_launch_kernel, METH_VARARGS,
	  "launch_kernel(stream, name) -> grid id (0 while the stream captures)" },
	{ "capture_begin", (PyCFunction)sim_capture_begin, METH_VARARGS, NULL },
	{ "capture_end", (PyCFunction)sim_capture_end, METH_VARARGS,
	  "capture_end(stream) -> (graph id, [node ids])" },
	{ "graph_instantiate", (PyCFunction)sim_instantiate, METH_VARARGS,
	  "graph_instantiate(graph) -> (exec id, [(original, clone)])" },
	{ "graph_launch", (PyCFunction)sim_graph_launch, METH_VARARGS,
	  "graph_launch(exec, stream) -> [grid ids]" },
	{ "stats", (PyCFunction)sim_stats, METH_NOARGS, NULL },
	{ NULL, NULL, 0, NULL },
};

static PyTypeObject Sim_Type = {
	PyVarObject_HEAD_INIT(NULL, 0).tp_name = "_lineage_sim.Sim",
	.tp_basicsize = sizeof(Sim),
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = "Sim(seed=1, host_clock=True, drop_permille=0): the simulator as a backend. "
		  "One per process.",
	.tp_new = PyType_GenericNew,
	.tp_init = (initproc)sim_init,
	.tp_dealloc = (destructor)sim_dealloc,
	.tp_methods = sim_methods,
};

static struct PyModuleDef moddef = {
	PyModuleDef_HEAD_INIT,
	.m_name = "_lineage_sim",
	.m_size = -1,
	.m_doc = "Test-only: the CUPTI-semantics simulator as a lineage.Runtime backend.",
};

PyMODINIT_FUNC PyInit__lineage_sim(void)
{
	if (PyType_Ready(&Sim_Type) < 0)
		return NULL;
	PyObject *m = PyModule_Create(&moddef);
	if (!m)
		return NULL;
	Py_INCREF(&Sim_Type);
	if (PyModule_AddObject(m, "Sim", (PyObject *)&Sim_Type) < 0) {
		Py_DECREF(&Sim_Type);
		Py_DECREF(m);
		return NULL;
	}
	return m;
}
