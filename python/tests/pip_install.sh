#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# pip_install.sh BUILD_DIR WORK_DIR: `pip install --no-build-isolation ./python` as the
# README says, offline (--no-index: nothing is downloaded), into a fresh venv that sees
# Debian's packages, against the in-tree liblineage of BUILD_DIR. Then: pip printed no
# deprecation notice (pyproject.toml, not the legacy setup.py install); the package's
# version is the library's (include/lineage/version.h); and the installed package runs a
# request/epoch/launch and validates its trace with lineage.validate(), with
# LINEAGE_VALIDATE unset and no lineage-validate on PATH: the validator recorded at build
# time (BUILD_DIR/validator/lineage-validate) is the one it runs.
set -euo pipefail
build=$(cd "$1" && pwd) work=$2
src=$(cd "$(dirname "$0")/.." && pwd)
rm -rf "$work" && mkdir -p "$work"
cp -r "$src" "$work/python"                       # pip builds in the tree it is given
rm -rf "$work/python/build" "$work/python"/*.egg-info "$work/python/lineage"/*.so
/usr/bin/python3 -m venv --system-site-packages "$work/venv"
LINEAGE_BUILD_DIR=$build "$work/venv/bin/pip" install --no-index --no-build-isolation \
	"$work/python" >"$work/pip.log" 2>&1 || { cat "$work/pip.log"; exit 1; }
if grep -i "deprecat" "$work/pip.log"; then
	echo "FAIL: pip printed a deprecation notice (above; full log: $work/pip.log)"
	exit 1
fi
want=$(sed -n 's/^#define LIN_VERSION_\(MAJOR\|MINOR\|PATCH\) \([0-9]*\)$/\2/p' \
	"$src/../include/lineage/version.h" | paste -sd.)
cd "$work"
unset PYTHONPATH LINEAGE_VALIDATE # the installed package and what it recorded, not ctest's
PATH=/usr/bin:/bin "$work/venv/bin/python" - "$want" "$build/validator/lineage-validate" <<'PY'
import importlib.metadata, lineage, os, shutil, sys
want, validator = sys.argv[1], sys.argv[2]
assert lineage.__file__.startswith(os.getcwd() + "/venv/"), lineage.__file__
assert shutil.which("lineage-validate") is None, "a lineage-validate on PATH would hide the check"
dist = importlib.metadata.version("lineage")
assert dist == want == lineage.__version__ == lineage.library_version(), \
    (dist, want, lineage.__version__, lineage.library_version())
assert lineage._build.VALIDATE == validator, (lineage._build.VALIDATE, validator)
with lineage.Runtime(trace_path="pip.lt") as rt:
    with rt.request("pip"), rt.epoch(), rt.launch("k"):
        pass
res = lineage.validate("pip.lt", allow_empty=True)
assert res["exit_code"] == 0 and res["validator"] == want, res
print("installed lineage", dist, "ok; lineage.validate() ran", lineage._build.VALIDATE)
PY
