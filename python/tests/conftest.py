# SPDX-License-Identifier: MIT
import importlib
import os

import pytest

import lineage


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs a CUDA device (ctest label gpu)")
    config.addinivalue_line("markers", "lenient: runs with runtimes in their default "
                            "(non-strict) mode; every other test sets LINEAGE_STRICT=1")


@pytest.fixture(autouse=True)
def strict_by_default(request, monkeypatch):
    """The API tests check what each error is: they run strict (lineage errors raised);
    the tests marked lenient check the default, where the work always runs
    (docs/python.md, "The work always runs")."""
    if request.node.get_closest_marker("lenient"):
        monkeypatch.delenv("LINEAGE_STRICT", raising=False)
    else:
        monkeypatch.setenv("LINEAGE_STRICT", "1")


@pytest.fixture(autouse=True)
def no_context_leak():
    """Every test starts and ends with no current context: a block that failed to close
    would otherwise leak into the next test."""
    assert lineage.current() is None
    yield
    leaked = lineage.current()
    lineage.context.set(None)
    assert leaked is None, f"test left {leaked!r} current"


@pytest.fixture
def trace(tmp_path):
    return str(tmp_path / "t.lt")


@pytest.fixture
def rt(trace):
    with lineage.Runtime(trace_path=trace) as r:
        yield r


@pytest.fixture
def sim_module():
    """The test-only simulator module CMake builds next to the package (needs CUPTI)."""
    try:
        return importlib.import_module("_lineage_sim")
    except ImportError as e:
        pytest.skip(f"_lineage_sim not built (CMake builds it only with CUPTI's headers "
                    f"and libcupti, like lineage-synth): {e}")


def validator_or_skip():
    exe = os.environ.get("LINEAGE_VALIDATE")
    if not exe or not os.path.exists(exe):
        pytest.skip("LINEAGE_VALIDATE does not name a lineage-validate (ctest sets it)")
    return exe
