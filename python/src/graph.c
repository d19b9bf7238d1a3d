/* SPDX-License-Identifier: MIT */
/*
 * graph.c - lineage.GraphTracker, the C graph API (lineage/graph.h) for frameworks that
 * capture a CUDA graph under one request and replay it for others: each replay runs under
 * a replay epoch of the replaying request. Ids are the caller's (CUPTI's graph and node
 * ids where known). Calls that read the thread's context (capture_begin, node_created,
 * node_updated, launch) first make it the current Python context, as a launch does.
 * A tracker is freed by close(), or when its Runtime closes (it must not outlive it).
 */
#include <errno.h>

#include "ext.h"

typedef struct {
	PyObject_HEAD PyObject *runtime;
	lin_graph_tracker *gt;
	PyObject *weakrefs;
} LinGraphTracker;

typedef struct {
	PyObject_HEAD lin_graph_capture cap;
} LinGraphCapture;

typedef struct {
	PyObject_HEAD PyObject *tracker;
	uint64_t exec_id;
	const char *name;
	lin_graph_launch gl;
	lin_scope scope;
	uint64_t handle; /* open.c's, while active 1 */
	int opened;
	int active; /* 1: a bracket is open; 2: lineage failed, the block runs without one */
} LinGraphLaunch;

/* The tracker's handle, or NULL with an exception (closed tracker or runtime). */
static lin_graph_tracker *tracker(LinGraphTracker *self, lin_runtime **rt)
{
	*rt = lin_py_rt((LinRuntime *)self->runtime);
	if (!*rt)
		return NULL;
	if (!self->gt)
		lin_py_raise(-EINVAL, "the graph tracker is closed");
	return self->gt;
}

static int gt_init(LinGraphTracker *self, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "runtime", "max_nodes", "max_execs", NULL };
	PyObject *r;
	unsigned int max_nodes = 0, max_execs = 0;
	if (self->gt)
		return lin_py_raise_int(-EINVAL, "GraphTracker.__init__ called twice");
	if (!PyArg_ParseTupleAndKeywords(args, kw, "O!|II", kwlist, &LinRuntime_Type, &r,
					 &max_nodes, &max_execs))
		return -1;
	LinRuntime *lr = (LinRuntime *)r;
	lin_runtime *rt = lin_py_rt(lr);
	if (!rt)
		return -1;
	struct lin_graph_tracker_opts o = { .sz = sizeof(o), .max_nodes = max_nodes, .max_execs = max_execs };
	int err = lin_graph_tracker_create(rt, &o, &self->gt);
	if (err)
		return lin_py_raise_int(err, "graph_tracker_create");
	/* The runtime frees its trackers before itself (rt.c). */
	PyObject *ref = PyWeakref_NewRef((PyObject *)self, NULL);
	if (!ref || PyList_Append(lr->trackers, ref) < 0) {
		Py_XDECREF(ref);
		lin_graph_tracker_free(self->gt);
		self->gt = NULL;
		return -1;
	}
	Py_DECREF(ref);
	Py_XSETREF(self->runtime, Py_NewRef(r));
	return 0;
}

void lin_py_graph_free(PyObject *o)
{
	LinGraphTracker *self = (LinGraphTracker *)o;
	lin_graph_tracker_free(self->gt);
	self->gt = NULL;
}

static void gt_dealloc(LinGraphTracker *self)
{
	if (self->weakrefs)
		PyObject_ClearWeakRefs((PyObject *)self);
	lin_graph_tracker_free(self->gt);
	Py_XDECREF(self->runtime);
	Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *gt_close(LinGraphTracker *self, PyObject *unused)
{
	(void)unused;
	lin_py_graph_free((PyObject *)self);
	Py_RETURN_NONE;
}

static PyObject *gt_err(int err, const char *what)
{
	if (err)
		return lin_py_raise(err, what);
	Py_RETURN_NONE;
}

static PyObject *gt_capture_begin(LinGraphTracker *self, PyObject *unused)
{
	(void)unused;
	lin_runtime *rt;
	lin_graph_tracker *gt = tracker(self, &rt);
	if (!gt)
		return NULL;
	LinGraphCapture *c = PyObject_New(LinGraphCapture, &LinGraphCapture_Type);
	if (!c)
		return NULL;
	lin_scope sc;
	int opened, err = lin_py_thread_enter(rt, &sc, &opened);
	if (err && (PyErr_Occurred() || err != -LIN_ENOCONTEXT)) {
		Py_DECREF(c);
		return PyErr_Occurred() ? NULL : lin_py_raise(err, "graph capture_begin");
	}
	err = lin_graph_capture_begin(gt, &c->cap);
	int serr = lin_py_thread_leave(rt, &sc, opened);
	if (!err)
		err = serr;
	if (err) {
		Py_DECREF(c);
		return lin_py_raise(err, "graph capture_begin");
	}
	return (PyObject *)c;
}

/* A sequence of ints into a PyMem array (*@out, *@n); NULL with an exception set. */
static uint64_t *ids_of(PyObject *obj, const char *msg, Py_ssize_t *n)
{
	PyObject *seq = PySequence_Fast(obj, msg);
	if (!seq)
		return NULL;
	*n = PySequence_Fast_GET_SIZE(seq);
	uint64_t *v = PyMem_Malloc((size_t)(*n ? *n : 1) * sizeof(*v));
	if (!v) {
		Py_DECREF(seq);
		PyErr_NoMemory();
		return NULL;
	}
	for (Py_ssize_t i = 0; i < *n; i++) {
		v[i] = PyLong_AsUnsignedLongLong(PySequence_Fast_GET_ITEM(seq, i));
		if (v[i] == (uint64_t)-1 && PyErr_Occurred()) {
			PyMem_Free(v);
			Py_DECREF(seq);
			return NULL;
		}
	}
	Py_DECREF(seq);
	return v;
}

static PyObject *gt_capture_end(LinGraphTracker *self, PyObject *args)
{
	PyObject *cap, *nodes;
	unsigned long long graph;
	lin_runtime *rt;
	Py_ssize_t n = 0;
	if (!PyArg_ParseTuple(args, "O!KO", &LinGraphCapture_Type, &cap, &graph, &nodes))
		return NULL;
	lin_graph_tracker *gt = tracker(self, &rt);
	uint64_t *v = gt ? ids_of(nodes, "nodes must be a sequence of ints", &n) : NULL;
	if (!v)
		return NULL;
	int err;
	Py_BEGIN_ALLOW_THREADS /* takes the output lock: the writer may hold it over a write */
		err = lin_graph_capture_end(gt, &((LinGraphCapture *)cap)->cap, graph, v, (size_t)n);
	Py_END_ALLOW_THREADS PyMem_Free(v);
	return gt_err(err, "graph capture_end");
}

static PyObject *gt_edges(LinGraphTracker *self, PyObject *args)
{
	PyObject *gid, *from, *to;
	lin_runtime *rt;
	Py_ssize_t nf = 0, nt = 0;
	if (!PyArg_ParseTuple(args, "O!OO", &PyLong_Type, &gid, &from, &to))
		return NULL;
	unsigned long long graph = PyLong_AsUnsignedLongLong(gid); /* range-checked, unlike "K" */
	if (graph == (unsigned long long)-1 && PyErr_Occurred())
		return NULL;
	lin_graph_tracker *gt = tracker(self, &rt);
	uint64_t *f = gt ? ids_of(from, "from_nodes must be a sequence of ints", &nf) : NULL;
	uint64_t *t = f ? ids_of(to, "to_nodes must be a sequence of ints", &nt) : NULL;
	if (!t) {
		PyMem_Free(f);
		return NULL;
	}
	if (nf != nt) {
		PyMem_Free(f);
		PyMem_Free(t);
		PyErr_SetString(PyExc_ValueError, "graph edges: from_nodes and to_nodes differ in length");
		return NULL;
	}
	int err;
	Py_BEGIN_ALLOW_THREADS /* takes the output lock */
		err = lin_graph_edges(gt, graph, f, t, (size_t)nf);
	Py_END_ALLOW_THREADS PyMem_Free(f);
	PyMem_Free(t);
	return gt_err(err, "graph edges");
}

/* A call that reads the thread's context: made under the current Python context. */
static PyObject *gt_ctx_call(LinGraphTracker *self, int (*fn)(lin_graph_tracker *, uint64_t, uint64_t),
			     uint64_t a, uint64_t b, const char *what)
{
	lin_runtime *rt;
	lin_graph_tracker *gt = tracker(self, &rt);
	if (!gt)
		return NULL;
	lin_scope sc;
	int opened, err = lin_py_thread_enter(rt, &sc, &opened);
	if (PyErr_Occurred())
		return NULL;
	if (err && err != -LIN_ENOCONTEXT)
		return lin_py_raise(err, what);
	err = fn(gt, a, b);
	int serr = lin_py_thread_leave(rt, &sc, opened);
	return gt_err(err ? err : serr, what);
}

static int node_created(lin_graph_tracker *gt, uint64_t g, uint64_t n)
{
	return lin_graph_node_created(gt, g, n);
}

static int node_updated(lin_graph_tracker *gt, uint64_t n, uint64_t unused)
{
	(void)unused;
	return lin_graph_node_updated(gt, n);
}

static PyObject *gt_node_created(LinGraphTracker *self, PyObject *args)
{
	unsigned long long g, n;
	if (!PyArg_ParseTuple(args, "KK", &g, &n))
		return NULL;
	return gt_ctx_call(self, node_created, g, n, "graph node_created");
}

static PyObject *gt_node_updated(LinGraphTracker *self, PyObject *args)
{
	unsigned long long n;
	if (!PyArg_ParseTuple(args, "K", &n))
		return NULL;
	return gt_ctx_call(self, node_updated, n, 0, "graph node_updated");
}

static PyObject *gt_exec_instantiated(LinGraphTracker *self, PyObject *args)
{
	unsigned long long g, x;
	lin_runtime *rt;
	if (!PyArg_ParseTuple(args, "KK", &g, &x) || !tracker(self, &rt))
		return NULL;
	return gt_err(lin_graph_exec_instantiated(self->gt, g, x), "graph exec_instantiated");
}

static PyObject *gt_node_cloned(LinGraphTracker *self, PyObject *args)
{
	unsigned long long o, c, g = 0, x = 0;
	lin_runtime *rt;
	if (!PyArg_ParseTuple(args, "KK|KK", &o, &c, &g, &x) || !tracker(self, &rt))
		return NULL;
	return gt_err(lin_graph_node_cloned(self->gt, o, c, g, x), "graph node_cloned");
}

static PyObject *gt_exec_destroyed(LinGraphTracker *self, PyObject *args)
{
	unsigned long long x;
	lin_runtime *rt;
	if (!PyArg_ParseTuple(args, "K", &x) || !tracker(self, &rt))
		return NULL;
	return gt_err(lin_graph_exec_destroyed(self->gt, x), "graph exec_destroyed");
}

static PyObject *gt_destroyed(LinGraphTracker *self, PyObject *args)
{
	unsigned long long g;
	lin_runtime *rt;
	if (!PyArg_ParseTuple(args, "K", &g) || !tracker(self, &rt))
		return NULL;
	return gt_err(lin_graph_destroyed(self->gt, g), "graph destroyed");
}

static PyObject *gt_node_origin(LinGraphTracker *self, PyObject *args)
{
	unsigned long long n;
	uint64_t epoch;
	uint32_t version;
	lin_runtime *rt;
	if (!PyArg_ParseTuple(args, "K", &n) || !tracker(self, &rt))
		return NULL;
	int err = lin_graph_node_origin(self->gt, n, &epoch, &version);
	if (err)
		return lin_py_raise(err, "graph node_origin");
	return Py_BuildValue("(KI)", (unsigned long long)epoch, version);
}

static PyObject *gt_exec_ordinal(LinGraphTracker *self, PyObject *args)
{
	unsigned long long x;
	uint64_t ord;
	lin_runtime *rt;
	if (!PyArg_ParseTuple(args, "K", &x) || !tracker(self, &rt))
		return NULL;
	int err = lin_graph_exec_ordinal(self->gt, x, &ord);
	return err ? lin_py_raise(err, "graph exec_ordinal") : PyLong_FromUnsignedLongLong(ord);
}

static PyObject *gt_launch(LinGraphTracker *self, PyObject *args)
{
	unsigned long long x;
	PyObject *name;
	lin_runtime *rt;
	if (!PyArg_ParseTuple(args, "KU", &x, &name) || !tracker(self, &rt))
		return NULL;
	const char *s = lin_py_intern_name(name);
	if (!s)
		return NULL;
	LinGraphLaunch *l = PyObject_New(LinGraphLaunch, &LinGraphLaunch_Type);
	if (!l)
		return NULL;
	l->tracker = Py_NewRef(self);
	l->exec_id = x;
	l->name = s;
	l->opened = 0;
	l->active = 0;
	return (PyObject *)l;
}

static PyMethodDef gt_methods[] = {
	{ "close", (PyCFunction)gt_close, METH_NOARGS, "forget everything (no call in flight)" },
	{ "capture_begin", (PyCFunction)gt_capture_begin, METH_NOARGS,
	  "capture_begin() -> GraphCapture: around cudaStreamBeginCapture; the current epoch "
	  "owns the captured nodes. Capturing thread." },
	{ "capture_end", (PyCFunction)gt_capture_end, METH_VARARGS,
	  "capture_end(capture, graph_id, nodes): after cudaStreamEndCapture. Any thread." },
	{ "edges", (PyCFunction)gt_edges, METH_VARARGS,
	  "edges(graph_id, from_nodes, to_nodes): the graph's dependencies, to_nodes[i] after "
	  "from_nodes[i] (cudaGraphGetEdges); empty lists: the graph has no edge. Any thread." },
	{ "node_created", (PyCFunction)gt_node_created, METH_VARARGS,
	  "node_created(graph_id, node_id): a node added explicitly, under the current epoch." },
	{ "node_updated", (PyCFunction)gt_node_updated, METH_VARARGS,
	  "node_updated(node_id): its work now belongs to the current epoch." },
	{ "exec_instantiated", (PyCFunction)gt_exec_instantiated, METH_VARARGS,
	  "exec_instantiated(graph_id, exec_id). Any thread." },
	{ "node_cloned", (PyCFunction)gt_node_cloned, METH_VARARGS,
	  "node_cloned(original, clone, graph_id=0, exec_id=0). Any thread." },
	{ "exec_destroyed", (PyCFunction)gt_exec_destroyed, METH_VARARGS, NULL },
	{ "destroyed", (PyCFunction)gt_destroyed, METH_VARARGS, NULL },
	{ "node_origin", (PyCFunction)gt_node_origin, METH_VARARGS,
	  "node_origin(node_id) -> (epoch, version)" },
	{ "exec_ordinal", (PyCFunction)gt_exec_ordinal, METH_VARARGS,
	  "exec_ordinal(exec_id) -> the last replay ordinal" },
	{ "launch", (PyCFunction)gt_launch, METH_VARARGS,
	  "launch(exec_id, name) -> GraphLaunch: a with-block around cudaGraphLaunch; mints a "
	  "replay epoch serving the current epoch's requests. Launching thread." },
	{ NULL, NULL, 0, NULL },
};

PyTypeObject LinGraphTracker_Type = {
	PyVarObject_HEAD_INIT(NULL, 0).tp_name = "lineage.GraphTracker",
	.tp_basicsize = sizeof(LinGraphTracker),
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = "GraphTracker(runtime, max_nodes=0, max_execs=0): CUDA graph identity.",
	.tp_new = PyType_GenericNew,
	.tp_init = (initproc)gt_init,
	.tp_dealloc = (destructor)gt_dealloc,
	.tp_methods = gt_methods,
	.tp_weaklistoffset = offsetof(LinGraphTracker, weakrefs),
};

static PyObject *cap_get(LinGraphCapture *self, void *c)
{
	(void)c;
	return Py_BuildValue("(KI)", (unsigned long long)self->cap.epoch, self->cap.version);
}

static PyGetSetDef cap_getset[] = {
	{ "epoch", (getter)cap_get, NULL, "(epoch, version) the capture began under", NULL },
	{ NULL, NULL, NULL, NULL, NULL },
};

PyTypeObject LinGraphCapture_Type = {
	PyVarObject_HEAD_INIT(NULL, 0).tp_name = "lineage.GraphCapture",
	.tp_basicsize = sizeof(LinGraphCapture),
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = "An open stream capture; pass it to GraphTracker.capture_end.",
	.tp_getset = cap_getset,
};

static void gl_dealloc(LinGraphLaunch *self)
{
	if (self->active == 1)
		lin_py_open_forget(self->handle);
	Py_XDECREF(self->tracker);
	PyObject_Free(self);
}

/* The runtime of the block's tracker (a LinRuntime), for lin_py_absorb and open.c. */
static PyObject *gl_runtime(LinGraphLaunch *self)
{
	return ((LinGraphTracker *)self->tracker)->runtime;
}

static PyObject *gl_enter_impl(LinGraphLaunch *self)
{
	lin_runtime *rt;
	lin_graph_tracker *gt = tracker((LinGraphTracker *)self->tracker, &rt);
	if (!gt)
		return NULL;
	if (self->active)
		return lin_py_raise(-EINVAL, "graph launch block entered twice");
	int err = lin_py_thread_enter(rt, &self->scope, &self->opened);
	if (PyErr_Occurred())
		return NULL;
	if (err && err != -LIN_ENOCONTEXT)
		return lin_py_raise(err, "graph launch: adopting the current context");
	int lerr = lin_graph_launch_begin(gt, self->exec_id, self->name, &self->gl);
	if (!err && !lerr) {
		self->active = 1;
		self->handle = lin_py_open_push(gl_runtime(self));
		return Py_NewRef(self);
	}
	/* No replay epoch, but begin fell back to a plain bracket under the current context
	 * (graph/graph.c plain_launch: a late scope whose epoch cannot parent one, a full exec
	 * map): outside a strict runtime that bracket stays open around the replay, whose
	 * kernels join through it, and closes at exit; the error is absorbed (gl_enter). */
	if (!err && lerr != -EINVAL && self->gl.launch.cookie &&
	    !((LinRuntime *)gl_runtime(self))->strict) {
		self->active = 1;
		self->handle = lin_py_open_push(gl_runtime(self));
		return lin_py_raise(lerr, "graph launch_begin");
	}
	if (lerr != -EINVAL)
		lin_graph_launch_end(gt, &self->gl);
	lin_py_thread_leave(rt, &self->scope, self->opened);
	self->opened = 0;
	return lin_py_raise(err ? err : lerr, "graph launch_begin");
}

/* Enter: as a launch bracket (launch.c); outside a strict runtime a lineage error is
 * absorbed and the replay runs without a bracket. */
static PyObject *gl_enter(LinGraphLaunch *self, PyObject *unused)
{
	(void)unused;
	PyObject *r = gl_enter_impl(self);
	if (!r && !lin_py_absorb(gl_runtime(self))) {
		if (self->active == 1) { /* not a lineage error after all: close what is open */
			lin_runtime *rt = ((LinRuntime *)gl_runtime(self))->rt;
			lin_graph_tracker *gt = ((LinGraphTracker *)self->tracker)->gt;
			if (rt && gt) {
				lin_graph_launch_end(gt, &self->gl);
				lin_py_thread_leave(rt, &self->scope, self->opened);
			}
			lin_py_open_forget(self->handle);
			self->opened = 0;
			self->active = 0;
		}
		return NULL;
	}
	if (r)
		return r;
	if (self->active != 1) /* 1: the plain bracket begin fell back to is kept */
		self->active = 2;
	return Py_NewRef(self);
}

static PyObject *gl_exit_impl(LinGraphLaunch *self)
{
	lin_runtime *rt;
	if (!self->active)
		return lin_py_raise(-EINVAL, "graph launch __exit__ without __enter__");
	lin_graph_tracker *gt = tracker((LinGraphTracker *)self->tracker, &rt);
	if (!gt) {
		lin_py_open_forget(self->handle);
		return NULL;
	}
	self->active = 0;
	int err = lin_graph_launch_end(gt, &self->gl);
	/* Refused for order (blocks interleaved across an await): what is still open (a
	 * cookie not cleared) is closed once on top again (open.c), with the scope adopted
	 * for the block after it. */
	struct lin_py_left left = { .l = self->gl.launch, .s[0] = self->gl.scope };
	if (left.l.cookie || left.s[0].cookie) {
		if (self->opened)
			left.s[1] = self->scope;
		lin_py_open_defer(gl_runtime(self), self->handle, &left);
		self->opened = 0;
		return lin_py_raise(err ? err : -LIN_ELAUNCH_ORDER, "graph launch_end");
	}
	int serr = lin_py_thread_leave(rt, &self->scope, self->opened);
	if (serr == -LIN_ESCOPE_ORDER) {
		struct lin_py_left s = { .s[0] = self->scope };
		lin_py_open_defer(gl_runtime(self), self->handle, &s);
	} else {
		lin_py_open_done(gl_runtime(self), self->handle);
	}
	self->opened = 0;
	if (err || serr)
		return lin_py_raise(err ? err : serr, "graph launch_end");
	Py_RETURN_FALSE;
}

static PyObject *gl_exit(LinGraphLaunch *self, PyObject *args)
{
	(void)args;
	if (self->active == 2) {
		self->active = 0;
		Py_RETURN_FALSE;
	}
	PyObject *r = gl_exit_impl(self);
	if (r || !lin_py_absorb(gl_runtime(self)))
		return r;
	self->active = 0;
	Py_RETURN_FALSE;
}

static PyObject *gl_get_replay(LinGraphLaunch *self, void *c)
{
	(void)c;
	return Py_BuildValue("(KK)", (unsigned long long)self->gl.replay_epoch,
			     (unsigned long long)self->gl.ordinal);
}

static PyMethodDef gl_methods[] = {
	{ "__enter__", (PyCFunction)gl_enter, METH_NOARGS, NULL },
	{ "__exit__", (PyCFunction)gl_exit, METH_VARARGS, NULL },
	{ NULL, NULL, 0, NULL },
};

static PyGetSetDef gl_getset[] = {
	{ "replay", (getter)gl_get_replay, NULL, "(replay epoch, ordinal) inside the block", NULL },
	{ NULL, NULL, NULL, NULL, NULL },
};

PyTypeObject LinGraphLaunch_Type = {
	PyVarObject_HEAD_INIT(NULL, 0).tp_name = "lineage.GraphLaunch",
	.tp_basicsize = sizeof(LinGraphLaunch),
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = "A graph launch bracket with its replay epoch.",
	.tp_dealloc = (destructor)gl_dealloc,
	.tp_methods = gl_methods,
	.tp_getset = gl_getset,
};

int lin_py_graph_ready(PyObject *m)
{
	PyTypeObject *t[] = { &LinGraphTracker_Type, &LinGraphCapture_Type, &LinGraphLaunch_Type };
	const char *n[] = { "GraphTracker", "GraphCapture", "GraphLaunch" };
	for (int i = 0; i < 3; i++) {
		if (PyType_Ready(t[i]) < 0)
			return -1;
		Py_INCREF(t[i]);
		if (PyModule_AddObject(m, n[i], (PyObject *)t[i]) < 0)
			return -1;
	}
	return 0;
}
