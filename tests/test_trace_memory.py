"""Tracing memory: no second copy of a large value where nothing can change the first (issue 11, item 4).

The node keeps its trace inputs (a copy: the cell or the caller may write into the input later) and its eager
outputs. An output declared where nothing the cell runs afterwards can change an object (the cell's bytecode after
the call only stores, drops or returns), or read after the cell ran (``outputs=``), cannot change before the trace
ends, so it is kept as it is; any other is copied, since code after the declaration may still write into it (a
second statement on the declaration's line, a ``with`` block's exit, a ``finally``, a loop's next step). Calls are
checked against NumPy one at a time, on the call's own values, so no graph-sized set of torch intermediates exists
at once.
"""

from __future__ import annotations

import gc
import tracemalloc

import numpy as np
import pytest

import leapp_notebook as ln

CELL = '''\
h = annotate.input_tensors("n", {"x": x})
a = np.tanh(h * 0.5)
b = a - np.mean(a, axis=0)
y = np.clip(b, -1.0, 1.0) * 2.0
annotate.output_tensors("n", {"y": y})
'''


def test_an_output_declared_last_is_not_copied():
    namespace = {"np": np, "x": np.arange(6, dtype=np.float32)}
    trace = ln.trace_cell(CELL, namespace)
    assert np.shares_memory(trace.nodes["n"].sample_outputs["y"], namespace["y"])


def test_outputs_read_after_the_cell_are_not_copied():
    namespace = {"np": np, "x": np.arange(6, dtype=np.float32)}
    trace = ln.trace_cell("y = np.tanh(x) * 2.0\n", namespace, inputs=["x"], outputs=["y"])
    assert np.shares_memory(trace.nodes["node"].sample_outputs["y"], namespace["y"])


def test_an_output_written_after_its_declaration_keeps_the_declared_value():
    source = CELL + "y += 1\n"
    namespace = {"np": np, "x": np.arange(6, dtype=np.float32)}
    trace = ln.trace_cell(source, namespace)
    sample = trace.nodes["n"].sample_outputs["y"]
    assert not np.shares_memory(sample, namespace["y"])
    np.testing.assert_array_equal(sample + 1, namespace["y"])
    np.testing.assert_allclose(trace.nodes["n"](np.arange(6, dtype=np.float32))[0], sample, rtol=1e-6)


def test_an_output_declared_in_a_loop_is_copied():
    source = '''\
h = annotate.input_tensors("n", {"x": x})
for i in range(1):
    y = h * 2.0
    annotate.output_tensors("n", {"y": y})
'''
    namespace = {"np": np, "x": np.arange(3, dtype=np.float32)}
    trace = ln.trace_cell(source, namespace)
    assert not np.shares_memory(trace.nodes["n"].sample_outputs["y"], namespace["y"])


# Code after the declaration that can write into the output, each of which the declaration's statement being the
# cell's last does not rule out: the eager output must be a copy, with the value it had at the declaration.
WRITES_AFTER = {
    "a second statement on its line": 'annotate.output_tensors("n", {"y": y}); y[:] = 0\n',
    "a with block's exit": 'with Zeroing():\n    annotate.output_tensors("n", {"y": y})\n',
    "a finally block": 'try:\n    annotate.output_tensors("n", {"y": y})\nfinally:\n    y[:] = 0\n',
    "a loop's next step": 'for i in range(2):\n    annotate.output_tensors("n", {"y": y}) if i == 0 else None\n'
                          '    y[:] = 0\n',
    "an expression around it": 'ignored = [annotate.output_tensors("n", {"y": y}), y.fill(0)]\n',
}


class _Zeroing:
    def __init__(self, namespace: dict) -> None:
        self.namespace = namespace

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        self.namespace["y"][:] = 0


@pytest.mark.parametrize("tail", list(WRITES_AFTER), ids=list(WRITES_AFTER))
def test_an_output_code_after_may_write_into_is_copied(tail: str):
    source = CELL.rsplit("annotate.output_tensors", 1)[0] + WRITES_AFTER[tail]
    namespace = {"np": np, "x": np.arange(6, dtype=np.float32)}
    namespace["Zeroing"] = lambda: _Zeroing(namespace)
    trace = ln.trace_cell(source, namespace)
    sample = trace.nodes["n"].sample_outputs["y"]
    assert not np.any(namespace["y"]), "the cell wrote the output after declaring it"
    assert not np.shares_memory(sample, namespace["y"])
    expected = np.clip(np.tanh(np.arange(6, dtype=np.float32) * 0.5) - np.mean(
        np.tanh(np.arange(6, dtype=np.float32) * 0.5), axis=0), -1.0, 1.0) * 2.0
    np.testing.assert_allclose(sample, expected, rtol=1e-6)
    np.testing.assert_allclose(trace.nodes["n"](np.arange(6, dtype=np.float32))[0], sample, rtol=1e-6)


# Code after the declaration that changes no object: the output is kept as it is.
QUIET_AFTER = {
    "its result stored": 'declared = annotate.output_tensors("n", {"y": y})\n',
    "names bound to constants after it": 'annotate.output_tensors("n", {"y": y})\ndone = True\nlabel = "n"\n',
    "the last branch of an if": 'if y.shape:\n    annotate.output_tensors("n", {"y": y})\n',
    "a call written over several lines": 'annotate.output_tensors(\n    "n",\n    {"y": y},\n)\n',
}


@pytest.mark.parametrize("tail", list(QUIET_AFTER), ids=list(QUIET_AFTER))
def test_an_output_nothing_after_can_change_is_not_copied(tail: str):
    source = CELL.rsplit("annotate.output_tensors", 1)[0] + QUIET_AFTER[tail]
    namespace = {"np": np, "x": np.arange(6, dtype=np.float32)}
    trace = ln.trace_cell(source, namespace)
    assert np.shares_memory(trace.nodes["n"].sample_outputs["y"], namespace["y"])


def _peak(run) -> int:  # noqa: ANN001
    gc.collect()
    tracemalloc.start()
    try:
        result = run()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    del result
    return peak


def test_tracing_a_large_input_holds_one_input_copy_above_the_eager_cell():
    """16 MB float32 input: the trace's peak (NumPy's allocations) is the eager cell's plus the input copy,
    and far below one extra array per op."""
    x = np.random.default_rng(0).standard_normal(4_000_000).astype(np.float32)
    ln.trace_cell(CELL, {"np": np, "x": x[:10].copy()})  # warm the lookup caches outside the measurement
    eager = _peak(lambda: exec(CELL, {"np": np, "x": x, "annotate": ln.annotate}) or 0)
    traced = _peak(lambda: ln.trace_cell(CELL, {"np": np, "x": x}))
    assert traced <= eager + 1.25 * x.nbytes, (traced / 2**20, eager / 2**20)


def test_a_dropped_trace_is_freed_although_its_calls_stay_in_the_recording_cache():
    """The recording cache is process-wide (tracing/replay.py): nothing it keeps may hold a trace's graph, or every
    re-run of a large cell would keep the previous one alive."""
    import weakref

    from benchmarks.trace_overhead import CELL as LOOP
    from leapp_notebook.tracing import replay

    namespace = {"np": np, "x": np.random.default_rng(0).standard_normal((8, 16)).astype(np.float32)}
    source = LOOP.replace("STEPS", "6")
    ln.trace_cell(source, dict(namespace))  # fills the cache
    trace = ln.trace_cell(source, dict(namespace))  # replays from it
    assert any(isinstance(t, replay.Template) and t.fn is not None for t in replay.TEMPLATES.values())
    module = weakref.ref(trace.nodes["node"].graph)
    graph = weakref.ref(trace.nodes["node"].graph.graph)
    del trace
    gc.collect()
    assert module() is None and graph() is None


def test_crossings_in_a_loop_keep_no_step_alive():
    """Each torch.from_numpy / .numpy() is remembered, so that a write through one side is seen on the other; the
    table holds its values by weak reference: a loop of crossings over a large array keeps no step's arrays (it
    kept all twenty: 460 MB against the eager cell's 60)."""
    import torch

    source = '''\
h = annotate.input_tensors("n", {"x": x})
for i in range(20):
    a = h * 1.5
    t = torch.from_numpy(a)
    t.add_(1.0)
    u = (t * 2).numpy()
    h = u - a
annotate.output_tensors("n", {"y": h})
'''
    x = np.random.default_rng(0).standard_normal(1_000_000)  # 8 MB
    namespace = {"np": np, "torch": torch}
    ln.trace_cell(source, {**namespace, "x": x[:10].copy()})  # warm the lookup caches outside the measurement
    eager = _peak(lambda: exec(source, {**namespace, "x": x, "annotate": ln.annotate}) or 0)
    trace = None

    def traced_run():
        nonlocal trace
        trace = ln.trace_cell(source, {**namespace, "x": x})
        return 0

    traced = _peak(traced_run)
    assert traced <= eager + 3 * x.nbytes, (traced / 2**20, eager / 2**20)
    fresh = np.random.default_rng(1).standard_normal(1_000_000)
    want = fresh.copy()
    for _ in range(20):
        a = want * 1.5 + 1.0
        want = a * 2 - a
    np.testing.assert_allclose(trace.nodes["n"](fresh)[0], want)
