#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# pip_install.sh BUILD_DIR WORK_DIR: `pip install ./python` as the README says, offline
# (--no-index: nothing is downloaded), into a fresh venv that sees Debian's packages,
# against the in-tree liblineage of BUILD_DIR; then the installed package imports and
# runs a request/epoch/launch with a trace that lineage-validate reads.
set -euo pipefail
build=$1 work=$2
src=$(cd "$(dirname "$0")/.." && pwd)
rm -rf "$work" && mkdir -p "$work"
cp -r "$src" "$work/python"                       # pip builds in the tree it is given
rm -rf "$work/python/build" "$work/python"/*.egg-info "$work/python/lineage"/*.so
/usr/bin/python3 -m venv --system-site-packages "$work/venv"
LINEAGE_BUILD_DIR=$build "$work/venv/bin/pip" install --no-index -q "$work/python"
cd "$work"
unset PYTHONPATH   # the installed package, not the build tree ctest points at
"$work/venv/bin/python" - <<'PY'
import lineage, os
assert lineage.__file__.startswith(os.getcwd() + "/venv/"), lineage.__file__
with lineage.Runtime(trace_path="pip.lt") as rt:
    with rt.request("pip"), rt.epoch(), rt.launch("k"):
        pass
print("installed lineage", lineage.library_version(), "ok")
PY
"$LINEAGE_VALIDATE" --allow-empty pip.lt >/dev/null
