"""A short run of the Array API conformance suite on traced graphs (benchmarks/array_api_conformance.py).

The suite is used where it lies (``../shared/third_party/array-api-tests`` from the repository root); the
test skips when it is absent or its requirements (ndindex, pytest-json-report) are not installed. A few
examples per test over the statistical, searching, sorting, set, manipulation and linear-algebra files: every
test NumPy 2 passes must pass on the traced graphs in ``full``, with no silently wrong call.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# ../shared/third_party from the repository root (or from a worktree's parent folders)
SUITE = next((p / "shared" / "third_party" / "array-api-tests" for p in ROOT.parents
              if (p / "shared" / "third_party" / "array-api-tests").is_dir()),
             ROOT.parent / "shared" / "third_party" / "array-api-tests")
FILES = ["test_statistical_functions.py", "test_searching_functions.py", "test_sorting_functions.py",
         "test_set_functions.py", "test_manipulation_functions.py", "test_linalg.py", "test_utility_functions.py",
         "test_indexing_functions.py", "test_data_type_functions.py"]

pytestmark = [
    pytest.mark.skipif(not (SUITE / "array_api_tests").is_dir(), reason=f"no Array API suite at {SUITE}"),
    pytest.mark.skipif(any(importlib.util.find_spec(m) is None for m in ("ndindex", "pytest_jsonreport")),
                       reason="the Array API suite needs ndindex and pytest-json-report (the dev extra)"),
]


def test_numpy_tests_pass_on_traced_graphs_with_no_silent_call():
    sys.path.insert(0, str(ROOT))
    try:
        from benchmarks.array_api_conformance import compare
    finally:
        sys.path.remove(str(ROOT))
    report = compare(max_examples=3, profiles=("full",), files=FILES, suite=SUITE, verbose=False)
    full = report["profiles"]["full"]
    assert report["numpy_passed"] > 50, report["numpy_passed"]  # the run happened
    assert sum(full["counts"].values()) > 200, full["counts"]  # and traced calls
    assert full["lost"] == [], full["lost"]
    assert full["counts"]["silent"] == 0, full["examples"].get("silent")
