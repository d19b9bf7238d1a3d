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
	unsigned long long dur = 0;
	if (!PyArg_ParseTuple(args, "IU|K", &stream, &name, &dur))
		return NULL;
	const char *s = keep(self, name);
	if (!s)
		return NULL;
	struct lin_sim_launch l = { .dur_ns = dur };
	return PyLong_FromLongLong(lin_sim_launch_kernel_ex(self->sim, stream, s, &l));
}

/* (grid, start, end) of one launch's kernel: device clock (the host clock with
 * host_clock=True); (0, 0, 0) while the stream captures (the launch became a node). */
static PyObject *sim_launch_kernel_ex(Sim *self, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "stream",          "name", "dur_ns", "until_dev", "api_work_ns",
				  "submit_delay_ns", NULL };
	unsigned int stream;
	PyObject *name;
	unsigned long long dur = 0, until = 0, work = 0, delay = 0;
	if (!PyArg_ParseTupleAndKeywords(args, kw, "IU|KKKK", kwlist, &stream, &name, &dur, &until,
					 &work, &delay))
		return NULL;
	const char *s = keep(self, name);
	if (!s)
		return NULL;
	struct lin_sim_launch l = {
		.dur_ns = dur, .until_dev = until, .api_work_ns = work, .submit_delay_ns = delay
	};
	int64_t grid = lin_sim_launch_kernel_ex(self->sim, stream, s, &l);
	if (!grid)
		l.start = l.end = 0;
	return Py_BuildValue("(LKK)", (long long)grid, (unsigned long long)l.start,
			     (unsigned long long)l.end);
}

static PyObject *sim_memcpy(Sim *self, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "stream", "bytes", "dur_ns", NULL };
	unsigned int stream;
	unsigned long long bytes, dur = 0;
	if (!PyArg_ParseTupleAndKeywords(args, kw, "IK|K", kwlist, &stream, &bytes, &dur))
		return NULL;
	struct lin_sim_launch l = { .dur_ns = dur };
	lin_sim_memcpy_ex(self->sim, stream, bytes, &l);
	return Py_BuildValue("(KK)", (unsigned long long)l.start, (unsigned long long)l.end);
}

static PyObject *sim_device_idle(Sim *self, PyObject *unused)
{
	(void)unused;
	return PyLong_FromUnsignedLongLong(lin_sim_device_idle(self->sim));
}

static PyObject *sim_clock_offset(Sim *self, PyObject *unused)
{
	(void)unused;
	return PyLong_FromUnsignedLongLong(lin_sim_clock_offset(self->sim));
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
	uint64_t nodes[LIN_SIM_MAX_NODES];
	size_t n = 0;
	if (!PyArg_ParseTuple(args, "I", &stream))
		return NULL;
	uint32_t g = lin_sim_capture_end(self->sim, stream, nodes, LIN_SIM_MAX_NODES, &n);
	PyObject *l = PyList_New(0);
	for (size_t i = 0; l && i < n && i < LIN_SIM_MAX_NODES; i++) {
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
	struct lin_sim_node map[LIN_SIM_MAX_NODES];
	size_t n = 0;
	if (!PyArg_ParseTuple(args, "I", &graph))
		return NULL;
	uint32_t x = lin_sim_graph_instantiate(self->sim, graph, map, LIN_SIM_MAX_NODES, &n);
	PyObject *l = PyList_New(0);
	for (size_t i = 0; l && i < n && i < LIN_SIM_MAX_NODES; i++) {
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
	int64_t grids[LIN_SIM_MAX_NODES];
	if (!PyArg_ParseTuple(args, "II", &x, &stream))
		return NULL;
	size_t n = lin_sim_graph_launch(self->sim, x, stream, grids, LIN_SIM_MAX_NODES);
	PyObject *l = PyList_New(0);
	for (size_t i = 0; l && i < n && i < LIN_SIM_MAX_NODES; i++) {
		PyObject *v = PyLong_FromLongLong(grids[i]);
		if (!v || PyList_Append(l, v) < 0)
			Py_CLEAR(l);
		Py_XDECREF(v);
	}
	return l;
}

/* [(grid, start, end)] of each node's kernel, in node order (durations: the capture's). */
static PyObject *sim_graph_launch_ex(Sim *self, PyObject *args)
{
	unsigned int x, stream;
	int64_t grids[LIN_SIM_MAX_NODES];
	struct lin_sim_launch *nodes = PyMem_Calloc(LIN_SIM_MAX_NODES, sizeof(*nodes));
	if (!nodes)
		return PyErr_NoMemory();
	if (!PyArg_ParseTuple(args, "II", &x, &stream)) {
		PyMem_Free(nodes);
		return NULL;
	}
	size_t n = lin_sim_graph_launch_ex(self->sim, x, stream, grids, LIN_SIM_MAX_NODES, nodes,
					   LIN_SIM_MAX_NODES);
	PyObject *l = PyList_New(0);
	for (size_t i = 0; l && i < n && i < LIN_SIM_MAX_NODES; i++) {
		PyObject *v = Py_BuildValue("(LKK)", (long long)grids[i],
					    (unsigned long long)nodes[i].start,
					    (unsigned long long)nodes[i].end);
		if (!v || PyList_Append(l, v) < 0)
			Py_CLEAR(l);
		Py_XDECREF(v);
	}
	PyMem_Free(nodes);
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
	  "launch_kernel(stream, name, dur_ns=0) -> grid id (0 while the stream captures; "
	  "dur_ns: the kernel's device duration, or the node's when captured; 0: 1-10 us)" },
	{ "launch_kernel_ex", (PyCFunction)(void (*)(void))sim_launch_kernel_ex, METH_VARARGS | METH_KEYWORDS,
	  "launch_kernel_ex(stream, name, dur_ns=0, until_dev=0, api_work_ns=0, "
	  "submit_delay_ns=0) -> (grid, start, end); (0, 0, 0) while the stream captures" },
	{ "memcpy", (PyCFunction)(void (*)(void))sim_memcpy, METH_VARARGS | METH_KEYWORDS,
	  "memcpy(stream, bytes, dur_ns=0) -> (start, end): a cudaMemcpyAsync (HtoD)" },
	{ "device_idle", (PyCFunction)sim_device_idle, METH_NOARGS,
	  "device_idle() -> when every stream's work issued so far ends (device clock)" },
	{ "clock_offset", (PyCFunction)sim_clock_offset, METH_NOARGS,
	  "clock_offset() -> device clock minus the runtime's host clock (0 with host_clock)" },
	{ "capture_begin", (PyCFunction)sim_capture_begin, METH_VARARGS, NULL },
	{ "capture_end", (PyCFunction)sim_capture_end, METH_VARARGS,
	  "capture_end(stream) -> (graph id, [node ids])" },
	{ "graph_instantiate", (PyCFunction)sim_instantiate, METH_VARARGS,
	  "graph_instantiate(graph) -> (exec id, [(original, clone)])" },
	{ "graph_launch", (PyCFunction)sim_graph_launch, METH_VARARGS,
	  "graph_launch(exec, stream) -> [grid ids]" },
	{ "graph_launch_ex", (PyCFunction)sim_graph_launch_ex, METH_VARARGS,
	  "graph_launch_ex(exec, stream) -> [(grid, start, end)] per node" },
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
