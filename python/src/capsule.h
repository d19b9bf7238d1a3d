/* SPDX-License-Identifier: MIT */
/*
 * capsule.h - what a custom binding backend hands lineage.Runtime (docs/python.md,
 * "Custom backends"): a PyCapsule named LIN_PY_BACKEND_CAPSULE holding this struct, the
 * Python mirror of lin_runtime_opts' backend_ops and observer. The struct is copied at
 * Runtime creation; the object that made it is kept alive until the runtime is closed.
 * The runtime itself reaches a backend as a PyCapsule named LIN_PY_RUNTIME_CAPSULE
 * (a lin_runtime *), valid until the backend's _lineage_close() returns.
 */
#ifndef LIN_PY_CAPSULE_H
#define LIN_PY_CAPSULE_H

#include <lineage/runtime.h>

#define LIN_PY_BACKEND_CAPSULE "lineage.backend"
#define LIN_PY_RUNTIME_CAPSULE "lineage.runtime"

struct lin_py_backend {
	struct lin_backend_ops ops;
	lin_launch_observer_fn observer; /* may be NULL */
	void *observer_user;
};

#endif
