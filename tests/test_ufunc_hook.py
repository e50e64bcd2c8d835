"""The ufunc hook's hot path in C (tracing/_flush.c, ``array_ufunc``) against the Python hook it stands in for
(``array._PYTHON_UFUNC_HOOK``, TracedArray.__array_ufunc__ as written in array.py).

The two must record the same trace: the same graphs, hazards, lines and messages, on the parity cases, a loop, a
cell with helpers and hazards, and every case the C hook passes on to Python (keywords, other operand types, results
that are not arrays, errors, warnings, no session); the C hook must be the one installed where the extension was
built, and it must replay a re-traced cell's ufunc calls itself. Its site finder (``_flush.SiteFinder``) gives the
line of the frame that called NumPy, and falls back to the frame walk for every other frame.
"""

from __future__ import annotations

import sys
import warnings
from typing import Any

import numpy as np
import pytest
from test_flush import C_FLUSH, _states
from test_parity import runnable_cases
from test_replay import LOOP

import leapp_notebook as ln
from leapp_notebook.tracing import array, provenance, replay
from leapp_notebook.tracing.array import TracedArray

C_HOOK = array._C_UFUNC_HOOK
needs_c = pytest.mark.skipif(C_HOOK is None, reason="the C ufunc hook is off: not built (no C compiler), or "
                             "LEAPP_NOTEBOOK_PURE_FLUSH=1")


def _hazards(trace: ln.Trace) -> list[tuple[Any, ...]]:
    return [(h.kind, h.severity, h.node, h.line, h.code, h.message, h.fix, h.graph_nodes) for h in trace.hazards]


def _recorded(trace: ln.Trace) -> dict[str, Any]:
    """Everything a user sees of a trace: its summary (ops and their lines), hazards, and the graphs."""
    return {"text": str(trace), "hazards": _hazards(trace), "graphs": _states(trace)}


def _with(hook: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(TracedArray, "__array_ufunc__", hook)


def _each_hook(monkeypatch: pytest.MonkeyPatch, run: Any) -> list[Any]:
    """``run()`` with the C hook installed, then with the Python one: the two results."""
    results = []
    for hook in (C_HOOK, array._PYTHON_UFUNC_HOOK):
        _with(hook, monkeypatch)
        results.append(run())
    return results


def _both(source: str, namespace: dict[str, Any], monkeypatch: pytest.MonkeyPatch, **kwargs: Any) -> list[Any]:
    """``source`` traced twice (recording, then replaying from the cache) with the C hook and with the Python one:
    what each second trace recorded."""
    def run() -> Any:
        ln.trace_cell(source, dict(namespace), **kwargs)
        return _recorded(ln.trace_cell(source, dict(namespace), **kwargs))

    return _each_hook(monkeypatch, run)


@pytest.fixture
def tail_calls():
    """The calls the C hook passes on to the Python tail, counted (the hook set up again with a counting tail)."""
    calls: list[tuple[Any, ...]] = []

    def counting(*args: Any) -> Any:
        calls.append(args)
        return array._ufunc_tail(*args)

    array._c_hook(counting)
    try:
        yield calls
    finally:
        array._c_hook()


def test_the_c_hook_is_installed_with_the_c_flush():
    if C_FLUSH is None:
        assert C_HOOK is None and TracedArray.__array_ufunc__ is array._PYTHON_UFUNC_HOOK
        pytest.skip("the C extension is off here")
    assert C_HOOK is not None
    assert TracedArray.__dict__["__array_ufunc__"] is C_HOOK
    assert array._PYTHON_UFUNC_HOOK.__module__ == array.__name__


@needs_c
def test_every_parity_case_records_the_same_with_either_hook(monkeypatch):
    checked = 0
    for case_, profile, inputs in runnable_cases(2, lambda row: ("leapp", "full")):
        in_c, in_python = _both(case_.source, {"np": np, **case_.consts}, monkeypatch, profile=profile,
                                inputs=inputs, outputs=list(case_.outputs))
        assert in_c == in_python, (case_.source, profile)
        checked += 1
    assert checked > 600


HAZARDS = '''\
h = annotate.input_tensors("node", {"x": x})
def helper(v):
    return np.tanh(v) * 0.5 - v
a = helper(h) + 1.0
b = np.interp(a, [0.0, 1.0], [0.0, 2.0])
c = -a + np.abs(b) / STD
s = float(c.sum())
y = a * s + (h > 0.3) * 1.5 - 0.0
z = np.maximum(y, -0.0) + np.sqrt(np.abs(h)) ** 2
annotate.output_tensors("node", {"y": y, "z": z})
'''


@needs_c
@pytest.mark.parametrize("profile", ["leapp", "full"])
def test_a_loop_and_a_cell_with_helpers_and_hazards_record_the_same(monkeypatch, profile):
    x = np.random.default_rng(0).standard_normal((4, 6)).astype(np.float32)
    in_c, in_python = _both(LOOP, {"np": np, "x": x}, monkeypatch, profile=profile)
    assert in_c == in_python
    assert len(in_c["graphs"]["node"]["nodes"]) > 100
    std = np.linspace(0.5, 1.5, 6).astype(np.float32)
    in_c, in_python = _both(HAZARDS, {"np": np, "x": x, "STD": std}, monkeypatch, profile=profile)
    assert in_c == in_python
    lines = {h[0]: h[3] for h in in_c["hazards"]}
    assert lines["untraced-call"] == 5 and lines["value-extraction"] == 7  # the C hook's lines are the cell's
    assert "line 3" in in_c["text"] and "line 8" in in_c["text"]


PASSED_ON = {  # cells whose ufunc calls the C hook passes on to Python (each: what makes it)
    "out=": "buf = np.zeros_like(h)\nnp.add(h, 1.0, out=buf)\ny = buf * 2.0",
    "where=": "y = np.add(h, 1.0, where=h > 0.0, out=np.zeros_like(h))",
    "in place": "y = h.copy()\ny += 1.0\ny *= h",
    "a list operand": "y = h + [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]",
    "a NumPy scalar": "y = h * np.float32(2.0) + np.int64(3)",
    "a complex number": "y = np.abs(h * 1j)",
    "two results": "m, e = np.frexp(h)\ny = m * e",
    "a method": "y = np.add.reduce(h, axis=0) + np.maximum.accumulate(h, axis=1)[0]",
    "a plain array first": "y = W - h + W * h",
    "a 0-d result": "y = h * np.multiply(np.float32(2.0), np.float32(3.0))",
    "three arguments": "y = np.clip(h, -0.5, 0.5) + np.add(h, h, np.empty_like(h))",
    "ints": "k = (h * 10).astype(np.int32)\ny = (k << 1) + (k & 3) + k // 2",
    "written views": "v = h.copy()\nw = v[:2]\nv[0] = 5.0\ny = w * 2.0 + v[1:]",
}


@needs_c
@pytest.mark.parametrize("name", list(PASSED_ON))
def test_what_the_c_hook_passes_on_records_the_same(monkeypatch, name):
    x = np.random.default_rng(1).standard_normal((3, 6)).astype(np.float32)
    w = np.linspace(-1.0, 1.0, 6).astype(np.float32)
    source = 'h = annotate.input_tensors("node", {"x": x})\n' + PASSED_ON[name] + \
        '\nannotate.output_tensors("node", {"y": y})\n'
    for profile in ("leapp", "full"):
        in_c, in_python = _both(source, {"np": np, "x": x, "W": w}, monkeypatch, profile=profile)
        assert in_c == in_python, profile
    fresh = np.random.default_rng(2).standard_normal((3, 6)).astype(np.float32)
    _with(C_HOOK, monkeypatch)
    trace = ln.trace_cell(source, {"np": np, "x": x, "W": w}, profile="full")
    if trace.hazards:  # a hazard's graph need not compute what the cell does (the same with either hook, above)
        return
    eager = {"np": np, "x": fresh, "W": w, "annotate": ln.annotate}
    exec(source, eager)
    (got,) = trace.nodes["node"](fresh)
    np.testing.assert_allclose(np.asarray(got), eager["y"], rtol=1e-5, atol=1e-5)


STRAIGHT = 'h = annotate.input_tensors("node", {"x": x})\n' + \
    "a = h * 0.5 + 1.0\nb = np.tanh(a) - np.sin(h)\nc = np.exp(-np.square(b)) + a / 3.0\n" * 20 + \
    'annotate.output_tensors("node", {"y": c})\n'


@needs_c
@pytest.mark.parametrize("source", [STRAIGHT, LOOP], ids=["straight", "loop"])
def test_the_c_hook_replays_a_retraced_cells_ufunc_calls_itself(tail_calls, source):
    x = np.random.default_rng(0).standard_normal((4, 6)).astype(np.float32)
    replay.TEMPLATES.clear()
    ln.trace_cell(source, {"np": np, "x": x})
    first = len(tail_calls)
    assert first > 0  # recorded: the Python tail builds and checks them
    del tail_calls[:]
    trace = ln.trace_cell(source, {"np": np, "x": x})
    assert tail_calls == []
    assert len(trace.nodes["node"].graph.graph.nodes) > 100


@needs_c
def test_replay_off_and_a_write_in_the_trace_go_to_the_python_tail(tail_calls, monkeypatch):
    x = np.ones((2, 3), np.float32)
    source = 'h = annotate.input_tensors("node", {"x": x})\ny = h * 2.0\nannotate.output_tensors("node", {"y": y})\n'
    ln.trace_cell(source, {"np": np, "x": x})
    del tail_calls[:]
    monkeypatch.setattr(replay, "ENABLED", False)
    ln.trace_cell(source, {"np": np, "x": x})
    assert len(tail_calls) == 1
    monkeypatch.setattr(replay, "ENABLED", True)
    written = 'h = annotate.input_tensors("node", {"x": x})\nv = h.copy()\nv[0] = 1.0\ny = h * 2.0\n' \
              'annotate.output_tensors("node", {"y": y})\n'
    ln.trace_cell(written, {"np": np, "x": x})
    del tail_calls[:]
    ln.trace_cell(written, {"np": np, "x": x})
    assert len(tail_calls) == 1  # a write counted in the trace: the Python tail decides


@needs_c
def test_an_error_in_numpys_call_is_the_same_cell_error_and_the_next_trace_is_unaffected(monkeypatch):
    x = np.ones((2, 3), np.float32)
    source = 'h = annotate.input_tensors("node", {"x": x})\ny = np.left_shift(h, 1)\n' \
             'annotate.output_tensors("node", {"y": y})\n'
    def run() -> str:
        with pytest.raises(ln.CellError) as raised:
            ln.trace_cell(source, {"np": np, "x": x})
        return str(raised.value)

    messages = _each_hook(monkeypatch, run)
    assert messages[0] == messages[1] and "line 2" in messages[0]
    _with(C_HOOK, monkeypatch)
    ok = 'h = annotate.input_tensors("node", {"x": x})\ny = h * 2.0\nannotate.output_tensors("node", {"y": y})\n'
    assert ln.trace_cell(ok, {"np": np, "x": x}).ok
    caught = ('h = annotate.input_tensors("node", {"x": x})\ntry:\n    np.left_shift(h, 1)\nexcept TypeError:\n'
              '    pass\ny = h * 2.0 + np.tanh(h)\nannotate.output_tensors("node", {"y": y})\n')
    for _ in range(2):  # the session is not left suspended: what follows the caught error is recorded
        trace = ln.trace_cell(caught, {"np": np, "x": x})
        fresh = np.full((2, 3), 0.25, np.float32)
        (got,) = trace.nodes["node"](fresh)
        np.testing.assert_allclose(np.asarray(got), fresh * 2.0 + np.tanh(fresh), rtol=1e-6)


@needs_c
def test_numpys_warnings_are_shown_at_the_same_cell_line(monkeypatch):
    x = np.ones((2, 3), np.float32)
    source = 'h = annotate.input_tensors("node", {"x": x})\nz = h - 1.0\n\ny = h / z\n' \
             'annotate.output_tensors("node", {"y": y})\n'
    def run() -> list[Any]:
        seen = []
        for _ in range(2):  # recorded, then replayed
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                ln.trace_cell(source, {"np": np, "x": x})
            seen.append([(w.category, str(w.message), w.lineno) for w in caught])
        return seen

    (c_first, c_again), (python_first, python_again) = _each_hook(monkeypatch, run)
    assert c_first == c_again == python_first == python_again
    assert any(category is RuntimeWarning and line == 4 for category, _, line in c_first)


@needs_c
def test_outside_a_trace_the_c_hook_answers_as_the_python_one():
    watched = TracedArray.watch(np.arange(6, dtype=np.float32))
    assert type(watched) is TracedArray
    calls = [(np.multiply, (watched, 2.0), {}), (np.tanh, (watched,), {}), (np.add, (1.0, watched), {}),
             (np.add, (watched, np.ones(6, np.float32)), {}),
             (np.add, (watched, 1.0), {"out": (np.empty(6, np.float32),)})]
    for ufunc, inputs, kwargs in calls:
        in_c = ufunc(*inputs, **kwargs)  # NumPy calls TracedArray.__array_ufunc__: the C hook
        in_python = array._PYTHON_UFUNC_HOOK(watched, ufunc, "__call__", *inputs, **kwargs)
        assert type(in_c) is type(in_python), ufunc
        np.testing.assert_array_equal(np.asarray(in_c), np.asarray(in_python))


@needs_c
def test_setup_checks_its_arguments():
    from leapp_notebook.tracing import _flush
    with pytest.raises(TypeError, match="16 arguments"):
        _flush.setup_ufunc(TracedArray)
    with pytest.raises(TypeError):
        _flush.setup_ufunc(*([None] * 16))


@needs_c
def test_the_site_finder_gives_its_code_s_sites_and_falls_back_for_other_frames():
    from leapp_notebook.tracing import _flush
    code = compile("r = finder()\ndef f():\n    return finder()\ns = f()\n", "<site-finder-test>", "exec")
    sites = provenance.site_table(code)
    finder = _flush.SiteFinder(code, sites, lambda: "walked")
    namespace: dict[str, Any] = {"finder": finder}
    exec(code, namespace)
    assert namespace["r"] == (1, None, None)
    assert namespace["r"] is next(site for site in sites if site is not None and site[0] == 1)  # the one tuple
    assert namespace["s"] == "walked"  # f's frame runs other code

    def tracer(frame: Any, event: str, arg: Any) -> Any:
        return tracer

    sys.settrace(tracer)
    try:
        exec(code, namespace)
    finally:
        sys.settrace(None)
    assert namespace["r"] == "walked"  # a frame with f_trace: its line may be the tracer's (f_lineno)
    with pytest.raises(TypeError, match="no arguments"):
        finder(1)
    with pytest.raises(TypeError):
        _flush.SiteFinder("not code", sites, len)
    with pytest.raises(TypeError):
        _flush.SiteFinder(code, tuple(sites), len)


@needs_c
def test_the_sessions_hook_site_finder_walks_to_the_cell_line_from_a_helper(monkeypatch):
    x = np.ones((2, 3), np.float32)
    source = ('h = annotate.input_tensors("node", {"x": x})\n'
              'def helper(v):\n    return np.interp(v * 2.0, [0.0, 1.0], [0.0, 1.0])\n'
              'y = helper(h)\nannotate.output_tensors("node", {"y": y})\n')
    for _ in range(2):  # recorded, then replayed (v * 2.0 by the C hook itself)
        trace = ln.trace_cell(source, {"np": np, "x": x})
        (hazard,) = [h for h in trace.hazards if h.kind == "untraced-call"]
        assert hazard.line == 3  # the helper's line in the cell
        assert "line 3" in str(trace) and "helper" in str(trace)


@needs_c
@pytest.mark.parametrize("finalize", ["C", "Python"])
def test_an_array_numpy_derives_from_a_traced_one_is_lost_at_its_line(monkeypatch, finalize):
    """``TracedArray.__array_finalize__`` (C: _flush.array_finalize; Python: the reference) of an array an ndarray
    method the tracer does not record derives from traced data: lost, with the line of the call, also in a helper."""
    if finalize == "Python":
        monkeypatch.setattr(TracedArray, "__array_finalize__", array._PYTHON_FINALIZE)
    x = np.ones((3, 4), np.float32)
    source = ('h = annotate.input_tensors("n", {"x": x})\n\ny = h.repeat(2)\n'
              'def helper(v):\n    return v.getfield(np.float32)\nz = helper(h) * 2.0\n'
              'annotate.output_tensors("n", {"y": y, "z": z})\n')
    trace = ln.trace_cell(source, {"np": np, "x": x})
    derived = [(h.line, h.message) for h in trace.hazards if "derived at line" in h.message]
    assert [line for line, _ in derived] == [3, 5]
    assert "derived at line 3 " in derived[0][1] and "derived at line 5 " in derived[1][1]


@needs_c
@pytest.mark.parametrize("wrap", ["C", "Python"])
def test_a_replayed_calls_traced_result_has_its_provenance_in_either_wrap(monkeypatch, wrap):
    """_flush.wrap (Session.wrap's first case in C, what templates end with) against the Python statements: the
    traced result's provenance, with no write in the trace and after one (the written count looked up in Python)."""
    from leapp_notebook.tracing import provenance as prov_module
    from leapp_notebook.tracing import session
    if wrap == "Python":
        monkeypatch.setattr(session, "C_WRAP", None)
        monkeypatch.setattr(replay, "C_WRAP", None)
        monkeypatch.setitem(replay._SHARED, "wrap", None)
        monkeypatch.setattr(replay, "_SOURCES", {})
    replay.TEMPLATES.clear()
    x = np.ones((2, 3), np.float32)
    seen: dict[str, Any] = {}
    source = ('h = annotate.input_tensors("n", {"x": x})\na = np.tanh(h) * 2.0\nsee("a", a)\n'
              'v = h.copy()\nv[0] = 1.0\nb = np.tanh(v) * 2.0\nsee("b", b)\n'
              'annotate.output_tensors("n", {"a": a, "b": b})\n')
    for _ in range(2):  # recorded, then replayed (wrapped by the template)
        trace = ln.trace_cell(source, {"np": np, "x": x, "see": lambda name, value: seen.__setitem__(name, value)})
    assert trace.ok
    for name in ("a", "b"):  # b: a write counted in the trace first (a fresh result's owner has no count: 0)
        value = seen[name]
        assert type(value) is TracedArray
        lp = value._lp
        assert lp.builder is not None and lp._node is not None and lp.version == 0, name
        assert lp.lost is None and lp.line is None and lp.fingerprint is None
        assert type(lp.plain) is np.ndarray and np.shares_memory(lp.plain, value)
    assert (prov_module.C_WRAP is not None) is (C_HOOK is not None)
    if wrap == "C":
        with pytest.raises(TypeError, match="wrap"):
            prov_module.C_WRAP(1, 2)
