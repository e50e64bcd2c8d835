"""The garbage collector around a trace (tracing/collector.py): a finished trace's objects go straight to the
oldest generation, dropped traces are still freed on CPython's own schedule, and a program's own collector
settings (frozen objects, the collector off) are left as they were."""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest

import leapp_notebook as ln
from leapp_notebook.tracing import collector

CELL = '''\
h = annotate.input_tensors("n", {"x": x})
for i in range(20):
    h = np.tanh(h * 0.5) + 1.0
annotate.output_tensors("n", {"y": h})
'''


def _trace() -> ln.Trace:
    return ln.trace_cell(CELL, {"np": np, "x": np.arange(6, dtype=np.float32)})


@pytest.fixture(autouse=True)
def _collector_state():
    saved = collector._promoted, collector._full_seen, collector._next_check
    was_enabled = gc.isenabled()
    gc.enable()
    yield
    collector._promoted, collector._full_seen, collector._next_check = saved
    gc.enable() if was_enabled else gc.disable()


def _generation_of(obj: object) -> int | None:
    for generation in range(3):
        if any(o is obj for o in gc.get_objects(generation=generation)):
            return generation
    return None


def test_a_finished_trace_is_in_the_oldest_generation():
    gc.collect()
    trace = _trace()
    graph = trace.nodes["n"].graph.graph
    node = next(n for n in graph.nodes if n.op == "call_function")
    assert _generation_of(node) == 2
    assert _generation_of(graph) == 2
    # about seven objects per recorded op (40 ops here), counted for CPython's full-collection rule
    assert collector.promoted() >= 7 * 40
    assert gc.isenabled()


def test_a_program_that_froze_objects_keeps_them_frozen():
    gc.collect()
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        trace = _trace()
        assert frozen - 100 <= gc.get_freeze_count() <= frozen  # (frozen objects the trace freed aside)
        node = next(n for n in trace.nodes["n"].graph.graph.nodes if n.op == "call_function")
        assert _generation_of(node) == 0  # not promoted: left to CPython's own passes
    finally:
        gc.unfreeze()


def test_a_program_that_turned_the_collector_off_keeps_it_off():
    gc.collect()
    before = collector.promoted()
    gc.disable()
    _trace()
    assert not gc.isenabled()
    assert collector.promoted() == before


def test_a_failed_trace_promotes_nothing():
    gc.collect()
    before = collector.promoted()
    with pytest.raises(ln.CellError):
        ln.trace_cell("h = annotate.input_tensors('n', {'x': x})\nraise ValueError('no')\n",
                      {"np": np, "x": np.ones(3)})
    assert gc.isenabled()
    assert collector.promoted() == before


def test_a_full_collection_resets_the_count():
    _trace()
    assert collector.promoted() > 0
    gc.collect()
    assert collector.promoted() == 0


def _dropped_graph() -> weakref.ref:
    trace = _trace()
    return weakref.ref(trace.nodes["n"].graph.graph)  # the trace is dropped here; its graph is cyclic garbage


def test_a_dropped_trace_waits_for_a_full_collection():
    gc.collect()
    dropped = _dropped_graph()
    _trace()  # the count is far below CPython's threshold: no full collection, no young pass over the graph
    assert dropped() is not None
    gc.collect()
    assert dropped() is None


def test_the_next_trace_runs_the_full_collection_cpython_would():
    """Once the promoted objects exceed a quarter of the long-lived ones (CPython's rule), the next trace starts
    with a full collection: a retrace loop does not pile up dropped traces."""
    gc.collect()
    dropped = _dropped_graph()
    full_before = gc.get_stats()[-1]["collections"]
    collector._promoted = len(gc.get_objects(generation=2))  # as if many traces had been promoted since
    collector._next_check = 0
    _trace()
    assert gc.get_stats()[-1]["collections"] > full_before
    assert dropped() is None


def test_below_the_threshold_the_heap_is_not_measured_again_before_it_could_be_due(monkeypatch):
    gc.collect()
    _trace()  # the count is now for the current full-collection epoch
    long_lived = len(gc.get_objects(generation=2))
    collector._promoted, collector._next_check = 1, 0
    measured = []
    real = gc.get_objects
    monkeypatch.setattr(gc, "get_objects", lambda generation=None: measured.append(generation) or real(generation))
    collector.pause()
    gc.enable()
    assert measured == [2]
    assert collector._next_check >= long_lived // 4 - long_lived // 100  # the next look: when it could be due
    collector.pause()
    gc.enable()
    assert measured == [2]  # not measured on every trace
