# SPDX-License-Identifier: MIT
"""Build the lineage extension with setuptools (Debian's python3-setuptools).

liblineage is found, in this order:
  LINEAGE_BUILD_DIR=<cmake build dir>  a CMake build (headers from its source tree, the
                                       library from that directory, RUNPATH set to it);
  LINEAGE_PREFIX=<prefix>              an install prefix (include/, lib/ or lib64/);
  pkg-config lineage                   an installed liblineage (lineage.pc);
  ../build                             the in-tree build ./test.sh makes.
Offline: pip install --no-build-isolation ./python (docs/python.md).
"""
import os
import shlex
import subprocess

from setuptools import Extension, setup

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def _pkg_config():
    try:
        out = subprocess.run(["pkg-config", "--cflags", "--libs", "lineage-otlp"], check=True,
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    except (OSError, subprocess.CalledProcessError):
        return None
    inc, libdirs = [], []
    for tok in shlex.split(out.stdout):
        if tok.startswith("-I"):
            inc.append(tok[2:])
        elif tok.startswith("-L"):
            libdirs.append(tok[2:])
    return inc, libdirs


def _source_dir(build):
    # The build's own source tree (its headers match its library), from CMake's cache.
    try:
        with open(os.path.join(build, "CMakeCache.txt")) as f:
            for line in f:
                if line.startswith("lineage_SOURCE_DIR:"):
                    return line.split("=", 1)[1].strip()
    except OSError:
        pass
    return ROOT


def _find():
    build = os.environ.get("LINEAGE_BUILD_DIR")
    if build:
        build = os.path.abspath(build)
        return [os.path.join(_source_dir(build), "include")], [build, os.path.join(build, "otlp")], True
    prefix = os.environ.get("LINEAGE_PREFIX")
    if prefix:
        libs = [os.path.join(prefix, d) for d in ("lib", "lib64")
                if os.path.isdir(os.path.join(prefix, d))]
        return [os.path.join(prefix, "include")], libs, True
    pc = _pkg_config()
    if pc:
        return pc[0], pc[1], True
    intree = os.path.join(ROOT, "build")
    if os.path.exists(os.path.join(intree, "liblineage.so")):
        return [os.path.join(ROOT, "include")], [intree, os.path.join(intree, "otlp")], True
    raise SystemExit("lineage: liblineage not found: install it (cmake --install), or set "
                     "LINEAGE_BUILD_DIR or LINEAGE_PREFIX (docs/python.md)")


inc, libdirs, _intree = _find()
ext = Extension(
    "lineage._lineage",
    sources=[os.path.join("src", f) for f in
             ("module.c", "rt.c", "ctx.c", "launch.c", "w3c.c", "graph.c")],
    include_dirs=inc,
    library_dirs=libdirs,
    libraries=["lineage-otlp", "lineage"],  # the OTLP stream (otlp_path) is liblineage-otlp
    define_macros=[("_GNU_SOURCE", None)],
    runtime_library_dirs=libdirs,  # RUNPATH: liblineage found wherever it was installed
    extra_compile_args=["-std=c11", "-Wall", "-Wextra", "-Wno-missing-field-initializers",
                        "-Wno-cast-function-type"],
)

setup(
    name="lineage",
    version="0.3.0",
    description="lineage for Python: GPU kernels joined to the requests that caused them",
    license="MIT",
    packages=["lineage"],
    package_data={"lineage": ["*.pyi", "py.typed"]},
    ext_modules=[ext],
    python_requires=">=3.9",
)
