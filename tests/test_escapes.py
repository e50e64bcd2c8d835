"""Escapes the tracer could not see: a traced array's own values handed out as a plain ndarray (``x.view(np.ndarray)``,
``x.__array__()``), whose uses were constants with no hazard (a silently wrong export). They are the same graph
value now. ``x.view(np.ndarray)`` is LEAPP 0.7.2's plain ndarray (measured: "received non-traced tensors"), an
error in the ``leapp`` profile and a warning in ``full``."""

import numpy as np
import pytest
from conftest import trace

import leapp_notebook as ln

X = np.array([0.5, -0.3, 1.2, 0.8], np.float32)
FRESH = np.array([1.4, 0.2, -0.9, 0.3], np.float32)
TABLE = np.array([2.0, 3.0, 5.0, 7.0], np.float32)  # a genuine constant

PROFILES = ("leapp", "full")

AS_NDARRAY = [  # (line of the view)
    ("p = x.view(np.ndarray)\ny = p * 2.0 + x", [1]),
    ("p = x.view(type=np.ndarray)\ny = p * 2.0 + x", [1]),
    ("z = np.tanh(x)\np = z.view(np.ndarray).view(np.ndarray)\ny = np.exp(p.__array__()) - z", [2]),
]
SAME_VALUE = [
    "p = x.view()\ny = p * 2.0 + x",
    "p = x.view(np.float32)\ny = p * 2.0 + x",
    "p = x.__array__()\ny = p * 2.0 + x",
    "p = x.__array__(np.float32)\ny = p * 2.0 + x",
]


def _graph_right(tr):
    eager = tr.run_eager({"node": {"x": FRESH.copy()}})["node"]["y"]
    got = tr.nodes["node"](FRESH.copy())[0]
    return np.shape(eager) == tuple(got.shape) and np.allclose(eager, np.asarray(got), atol=1e-6)


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("cell", SAME_VALUE)
def test_a_plain_view_of_traced_data_is_the_same_graph_value(cell, profile):
    tr = trace(cell, profile=profile, x=X.copy())
    assert tr.hazards == []
    assert _graph_right(tr)
    report = tr.probe(n=8, seed=0)
    assert report.passed and report.baked_constants == {}


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize(("cell", "lines"), AS_NDARRAY)
def test_a_view_as_a_plain_ndarray_is_the_same_graph_value_and_what_leapp_loses(cell, lines, profile):
    tr = trace(cell, profile=profile, x=X.copy())
    assert sorted({h.line for h in tr.hazards}) == lines
    assert all(h.kind == "untraced-call" and "LEAPP 0.7.2's lookup does not record it" in h.message
               and "x.view(np.ndarray)" in h.message and "use the array itself" in h.fix for h in tr.hazards)
    assert {h.severity for h in tr.hazards} == {"error" if profile == "leapp" else "warning"}
    assert _graph_right(tr)
    report = tr.probe(n=8, seed=0)
    assert report.passed and report.baked_constants == {}


@pytest.mark.parametrize("profile", PROFILES)
def test_a_conversion_to_another_dtype_through_array_is_recorded(profile):
    tr = trace("p = x.__array__(np.float64)\ny = p * 2.0 + x", profile=profile, x=X.copy())
    assert [h for h in tr.hazards if h.severity == "error"] == []
    assert tr.nodes["node"].sample_outputs["y"].dtype == np.float64
    assert _graph_right(tr)
    assert tr.probe(n=8, seed=0).passed


@pytest.mark.parametrize("profile", PROFILES)
def test_a_genuine_constant_beside_a_plain_view_is_not_flagged(profile):
    tr = ln.trace_cell("p = x.view(np.ndarray)\ny = p * TABLE + TABLE.view(np.ndarray)",
                       {"np": np, "x": X.copy(), "TABLE": TABLE}, inputs=["x"], outputs=["y"], profile=profile)
    assert [(h.line, h.kind) for h in tr.hazards] == [(1, "untraced-call")]  # the view's (LEAPP), not TABLE's
    assert _graph_right(tr)
    assert tr.probe(n=8, seed=0).passed


@pytest.mark.parametrize("profile", PROFILES)
def test_a_write_through_a_plain_view_is_an_error_where_the_base_is_read(profile):
    # the view is traced now, so its write is seen: the base read after it is a stale view at that line (it was a
    # constant with no hazard)
    tr = trace("z = x * 1.0\np = z.view(np.ndarray)\np[0] = 5.0\ny = z * 2", profile=profile, x=X.copy())
    errors = [h for h in tr.hazards if h.severity == "error" and h.kind == "untraced-call"]
    assert [h.line for h in errors] == ([2, 4] if profile == "leapp" else [4])  # (2: the view, LEAPP's loss)
    assert not tr.probe(n=8, seed=0).passed or not tr.ok


HELPER = '''\
from numpy import asarray, zeros
import numpy


def prep(x):
    a = asarray(x)
    return a * 2.0


class Prep:
    def __call__(self, x):
        return asarray(x) * 2.0
'''


@pytest.fixture
def helper_module(tmp_path, monkeypatch):
    """A user's helper module that bound NumPy's own functions when it was imported, before any trace."""
    import importlib
    import sys

    (tmp_path / "escape_helper.py").write_text(HELPER)
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("escape_helper")
    yield module
    sys.modules.pop("escape_helper", None)


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("reach", ["module", "function", "class"])
def test_a_helper_module_that_bound_numpys_asarray_before_the_trace_is_traced(helper_module, reach, profile):
    # before: the helper's asarray was NumPy's own, its result a plain ndarray: y baked, no hazard, the probe failed
    cell, names = {"module": ("y = escape_helper.prep(x) + x", {"escape_helper": helper_module}),
                   "function": ("y = prep(x) + x", {"prep": helper_module.prep}),
                   "class": ("y = Prep()(x) + x", {"Prep": helper_module.Prep})}[reach]
    tr = ln.trace_cell(cell, {"np": np, "x": X.copy(), **names}, inputs=["x"], outputs=["y"], profile=profile)
    assert tr.hazards == []
    eager = {"np": np, "x": FRESH.copy(), **names}
    exec(cell, eager)
    assert np.allclose(np.asarray(tr.nodes["node"](FRESH.copy())[0]), eager["y"])
    assert tr.probe(n=8, seed=0).passed
    # NumPy's own functions are back in the module after the trace
    assert helper_module.asarray is np.asarray and helper_module.zeros is np.zeros


OUTER = '''\
import escape_helper
from escape_helper import prep as inner_prep


def twice(x):
    return escape_helper.prep(x) + inner_prep(x)
'''


@pytest.mark.parametrize("profile", PROFILES)
def test_a_helper_reached_through_another_helper_module_is_traced(helper_module, tmp_path, profile):
    """A helper's helper: the cell names only the outer module, which imports the one that bound NumPy's asarray
    (a module and a function reach). Before: a constant with no hazard, the probe alone failed."""
    import importlib
    import sys

    (tmp_path / "escape_outer.py").write_text(OUTER)
    outer = importlib.import_module("escape_outer")
    try:
        for cell, names in (("y = escape_outer.twice(x) - x", {"escape_outer": outer}),
                            ("y = twice(x) - x", {"twice": outer.twice})):
            tr = ln.trace_cell(cell, {"np": np, "x": X.copy(), **names}, inputs=["x"], outputs=["y"],
                               profile=profile)
            assert tr.hazards == []
            eager = {"np": np, "x": FRESH.copy(), **names}
            exec(cell, eager)
            assert np.allclose(np.asarray(tr.nodes["node"](FRESH.copy())[0]), eager["y"])
            assert tr.probe(n=8, seed=0).passed
            assert helper_module.asarray is np.asarray
    finally:
        sys.modules.pop("escape_outer", None)


def test_the_modules_reached_are_bounded_and_cycles_end(helper_module, monkeypatch):
    import types

    from leapp_notebook import trace as trace_module

    first, second = types.ModuleType("cycle_a"), types.ModuleType("cycle_b")
    first.other, second.other, second.helper = second, first, helper_module
    ours = {"cycle_a", "cycle_b", "escape_helper"}
    monkeypatch.setattr(trace_module, "_users", lambda module: module.__name__ in ours)
    spaces = trace_module._user_modules({"a": first})
    assert [id(space) for space in spaces] == [id(first.__dict__), id(second.__dict__), id(helper_module.__dict__)]
    monkeypatch.setattr(trace_module, "_MAX_USER_MODULES", 2)
    assert len(trace_module._user_modules({"a": first})) == 2


def test_only_the_users_own_modules_are_rebound(helper_module):
    from leapp_notebook import trace as trace_module

    spaces = trace_module._user_modules({"np": np, "pytest": pytest, "ln": ln, "helper": helper_module,
                                         "f": helper_module.prep, "array": np.asarray, "n": 3})
    assert spaces == [helper_module.__dict__]


def test_an_odd_object_in_the_namespace_leaves_the_trace_and_numpy_as_they_were(helper_module):
    """A class whose ``__module__`` is not a string, a module whose ``__file__`` lookup raises: the rebinding skips
    what it cannot read, the trace runs, and NumPy and the helper module hold NumPy's own functions after it."""
    import types

    odd_class = type("Odd", (), {})
    odd_class.__module__ = ["not", "a", "name"]

    weird = types.ModuleType("weird")  # no __file__, and a module __getattr__ that raises for it

    def no_file(name):
        raise RuntimeError(f"no {name}")

    weird.__getattr__ = no_file
    names = {"Odd": odd_class, "weird": weird, "escape_helper": helper_module}
    cell = "y = escape_helper.prep(x) + x"
    tr = ln.trace_cell(cell, {"np": np, "x": X.copy(), **names}, inputs=["x"], outputs=["y"])
    assert tr.hazards == []  # the helper module was rebound all the same
    eager = {"np": np, "x": FRESH.copy(), **names}
    exec(cell, eager)
    assert np.allclose(np.asarray(tr.nodes["node"](FRESH.copy())[0]), eager["y"])
    assert not hasattr(np.asarray, "__wrapped__") and helper_module.asarray is np.asarray


def test_a_failing_rebinding_is_undone_and_the_trace_goes_on(helper_module, monkeypatch):
    from leapp_notebook import trace as trace_module

    original = helper_module.asarray  # NumPy's own (np.asarray is the trace's wrapper while it runs)

    def broken(spaces):
        trace_module._REBOUND.append((helper_module.__dict__, "asarray", original, "a wrapper"))
        helper_module.__dict__["asarray"] = "a wrapper"
        raise RuntimeError("odd")

    monkeypatch.setattr(trace_module, "_rebind", broken)
    tr = ln.trace_cell("y = x * 2.0", {"np": np, "x": X.copy(), "escape_helper": helper_module}, inputs=["x"],
                       outputs=["y"])
    assert tr.hazards == [] and helper_module.asarray is np.asarray and trace_module._REBOUND == []
