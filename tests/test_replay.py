"""The recording cache (tracing/replay.py): a call signature is built and checked once, then replayed.

Replaying must give exactly the graph, facts and hazards that building every call gives: every parity case
is traced with the cache off, then twice with it on (the second trace replays every cacheable call), and the
three must agree. Then the decisions that must stay per call: an operand used under two names, data the
LEAPP-defect predicates read, the call site, stale views; and the node's dtype pass running only for calls
that could not be checked when they were made.
"""

from __future__ import annotations

import copy
import dataclasses
import pickle
import warnings
import weakref
from typing import Any

import numpy as np
import pytest
import torch
from test_parity import runnable_cases

import leapp_notebook as ln
from benchmarks.trace_overhead import CELL
from leapp_notebook.tracing import builder as _builder
from leapp_notebook.tracing import replay
from leapp_notebook.tracing import session as sess_module
from leapp_notebook.tracing.facts import NodeFacts, SharedState, SitedFacts, derive, facts, update
from leapp_notebook.tracing.indexing import _GETITEM


def snapshot(trace: ln.Trace) -> dict[str, Any]:
    out = {}
    for name, node in trace.nodes.items():
        graph = node.graph.graph
        out[name] = {
            "graph": str(graph),
            "facts": [(n.name, facts(n)) for n in graph.nodes],
            "hazards": [(h.kind, h.line, h.severity, h.message, tuple(h.graph_nodes)) for h in node.hazards],
        }
    return out


@pytest.fixture
def cache_off():
    replay.ENABLED = False
    try:
        yield
    finally:
        replay.ENABLED = True


def _trace(source: str, namespace: dict[str, Any], profile: str = "leapp", **kwargs: Any) -> ln.Trace:
    return ln.trace_cell(source, dict(namespace), profile=profile, **kwargs)


def _three_ways(source: str, namespace: dict[str, Any], profile: str, **kwargs: Any) -> list[dict[str, Any]]:
    """Snapshots with the cache off, on (filling it) and on again (replaying)."""
    replay.ENABLED = False
    try:
        off = snapshot(_trace(source, namespace, profile, **kwargs))
    finally:
        replay.ENABLED = True
    replay.TEMPLATES.clear()
    return [off, snapshot(_trace(source, namespace, profile, **kwargs)),
            snapshot(_trace(source, namespace, profile, **kwargs))]


def _snapshot_cache_off(source: str, namespace: Any) -> dict[str, Any]:
    """The snapshot of ``source`` traced with the cache off, in a fresh ``namespace()`` (a cell that changes its
    arrays in place needs new ones for every trace); the cache is left empty."""
    replay.ENABLED = False
    try:
        return snapshot(_trace(source, namespace()))
    finally:
        replay.ENABLED = True
        replay.TEMPLATES.clear()


def _replayed_as_built(source: str, namespace: Any) -> tuple[ln.Trace, int]:
    """Trace ``source`` with the cache off, then on twice (each in a fresh ``namespace()``): the three must agree
    and raise no hazard. Returns the last trace and how many calls it built and checked again (``settle``)."""
    off = _snapshot_cache_off(source, namespace)
    assert off["node"]["hazards"] == []
    assert snapshot(_trace(source, namespace())) == off
    settled = _count(replay, "settle")
    try:
        trace = _trace(source, namespace())
    finally:
        settled.restore()
    assert snapshot(trace) == off
    return trace, settled.calls


def test_every_parity_case_replays_to_the_graph_facts_and_hazards_it_builds():
    checked = replayed = 0
    for case_, profile, inputs in runnable_cases(3, lambda row: ("full", "leapp") if row.leapp else ("full",)):
        off, filled, again = _three_ways(case_.source, {"np": np, **case_.consts}, profile, inputs=inputs,
                                         outputs=list(case_.outputs))
        assert filled == off, f"[{profile}] {case_.source!r}: the first trace differs with the cache on"
        assert again == off, f"[{profile}] {case_.source!r}: the replayed trace differs"
        checked += 1
        replayed += any(t is not replay.NO_TEMPLATE and (t.fn is not None or t.direct is not None)
                        for t in replay.TEMPLATES.values())
    assert checked > 500
    assert replayed > 0.6 * checked, (replayed, checked)  # most parity cases are replayed, not rebuilt


class _count:
    def __init__(self, module: Any, name: str):
        self.module, self.name, self.original, self.calls = module, name, getattr(module, name), 0

        def counted(*args: Any, **kwargs: Any) -> Any:
            self.calls += 1
            return self.original(*args, **kwargs)

        setattr(module, name, counted)

    def restore(self) -> None:
        setattr(self.module, self.name, self.original)


LOOP = CELL.replace("STEPS", "6")  # the benchmark's loop cell, 6 steps


def test_a_loop_is_replayed_and_needs_no_dtype_pass(monkeypatch):
    x = np.random.default_rng(0).standard_normal((4, 6)).astype(np.float32)
    replay.TEMPLATES.clear()
    spy = _count(_builder.NodeBuilder, "emit")
    monkeypatch.setattr(_builder.DtypePass, "run", _fail)
    try:
        trace = _trace(LOOP, {"np": np, "x": x})
    finally:
        spy.restore()
    assert trace.hazards == []
    calls = [n for n in trace.nodes["node"].graph.graph.nodes if n.op == "call_function"]
    assert spy.calls < len(calls) / 4  # the lookup's builders emitted the first step; the rest was replayed
    fresh = np.random.default_rng(1).standard_normal((4, 6)).astype(np.float32)
    namespace = {"np": np, "x": fresh, "annotate": ln.annotate}
    exec(LOOP, namespace)
    np.testing.assert_allclose(trace.nodes["node"](fresh)[0], namespace["h"], rtol=1e-5, atol=1e-6)


def _fail(*args: Any, **kwargs: Any) -> Any:
    raise AssertionError("the dtype pass ran although every call was checked when it was made")


def test_the_dtype_pass_still_checks_what_a_call_could_not(monkeypatch):
    """An in-place torch op is left to the node's dtype pass: out-of-place add of float64 into a float32 tensor
    computes float64 in the graph, where the in-place eager op kept float32; the pass casts it back."""
    runs = _count(_builder.DtypePass, "run")
    source = '''\
t = annotate.input_tensors("node", {"t": t0})
w = torch.ones(3, dtype=torch.float32)
w += t
annotate.output_tensors("node", {"y": w})
'''
    try:
        trace = _trace(source, {"torch": torch, "t0": torch.arange(3, dtype=torch.float64)}, "full")
    finally:
        runs.restore()
    assert runs.calls == 1
    out = trace.nodes["node"](torch.full((3,), 2.0, dtype=torch.float64))[0]
    assert out.dtype == torch.float32 and out.tolist() == [3.0, 3.0, 3.0]


def test_one_node_under_two_names_is_a_template_of_its_own():
    """np.add(h, h) must not teach the cache that both operands are the first one for np.add(h, g): the key of a
    call says which operands are one node (replay.aliases), so h + h, h * h and np.stack([h, h]) are replayed
    from templates of their own, and calls with distinct operands from theirs."""
    source = '''\
h = annotate.input_tensors("node", {"x": x})
g = h * 3.0
for _ in range(3):
    a = np.add(h, h)
    b = np.add(h, g)
    c = h * h + g * h
    d = np.stack([h, h, g])
    e = np.stack([g, h, h])
annotate.output_tensors("node", {"a": a, "b": b, "c": c, "d": d, "e": e})
'''
    replay.TEMPLATES.clear()
    x = np.arange(4, dtype=np.float32)
    fresh = np.array([1.0, -2.0, 0.5, 3.0], np.float32)
    for _ in range(2):
        trace = _trace(source, {"np": np, "x": x})
        a, b, c, d, e = trace.nodes["node"](fresh)
        np.testing.assert_array_equal(a, fresh + fresh)
        np.testing.assert_array_equal(b, fresh + fresh * 3)
        np.testing.assert_array_equal(c, fresh * fresh + fresh * 3 * fresh)
        np.testing.assert_array_equal(d, np.stack([fresh, fresh, fresh * 3]))
        np.testing.assert_array_equal(e, np.stack([fresh * 3, fresh, fresh]))


def test_calls_whose_operands_share_a_node_are_replayed(monkeypatch):
    """``g = h`` before the loop: the first ``g + h`` adds h to itself, the later steps add two nodes. Each kind
    is built once and replayed after (it used to be built again at every call with one node under two names)."""
    source = '''\
h = annotate.input_tensors("node", {"x": x})
g = h
for _ in range(5):
    g = g + h
    s = g * g
annotate.output_tensors("node", {"y": g, "s": s})
'''
    replay.TEMPLATES.clear()
    captured = []
    real = replay.capture

    def counting(*args: Any, **kwargs: Any) -> Any:
        captured.append(result := real(*args, **kwargs))
        return result

    monkeypatch.setattr(replay, "capture", counting)
    x = np.arange(4, dtype=np.float32)
    trace = _trace(source, {"np": np, "x": x})
    # h + h, then g * g (one node), then g + h (two nodes): three templates, every later call replayed
    assert len(captured) == 3 and all(isinstance(t, replay.Template) for t in captured)
    fresh = np.array([1.0, -2.0, 0.5, 3.0], np.float32)
    y, s = trace.nodes["node"](fresh)
    assert y.tolist() == (fresh * 6).tolist() and s.tolist() == (fresh * 6 * fresh * 6).tolist()
    captured.clear()
    _trace(source, {"np": np, "x": x})
    assert captured == []  # the re-trace replays all of it


def test_a_defect_answer_is_asked_again_only_for_names_whose_check_reads_the_call(monkeypatch):
    """np.concatenate's check (torch-rejects-arguments) reads only the signature: asked once for a loop. np.round's
    reads whether decimals was passed by keyword: asked on every call (Defect.per_call)."""
    from leapp_notebook.tracing import leapp_defects

    source = '''\
h = annotate.input_tensors("node", {"x": x})
for _ in range(4):
    j = np.concatenate([h, h * 2.0], axis=0)
    r = np.round(h, 2)
annotate.output_tensors("node", {"j": j, "r": r})
'''
    replay.TEMPLATES.clear()
    asked = []
    real = leapp_defects.find
    monkeypatch.setattr(leapp_defects, "find", lambda name, *a: asked.append(name) or real(name, *a))
    _trace(source, {"np": np, "x": np.arange(4, dtype=np.float32)})
    assert asked.count("np.concatenate") == 1 and asked.count("np.round") == 4
    assert "np.round" in leapp_defects.DYNAMIC and "np.concatenate" not in leapp_defects.DYNAMIC


def test_the_data_the_defect_check_reads_is_judged_on_every_call():
    """An integer division whose divisor holds a zero only on the second call, same signature: LEAPP's export
    raises there (torch's integer division by zero), so that line is an error in ``leapp``."""
    source = '''\
h = annotate.input_tensors("node", {"x": x})
ok = np.floor_divide(h, h - h + 1)
bad = np.floor_divide(h, h - h)
annotate.output_tensors("node", {"y": ok + bad})
'''
    replay.TEMPLATES.clear()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        trace = _trace(source, {"np": np, "x": np.arange(1, 5)})
    lines = {h.line for h in trace.hazards if "LEAPP 0.7.2 records it wrongly" in h.message and h.severity == "error"}
    assert lines == {3}


def test_the_call_site_the_defect_check_reads_is_judged_on_every_call():
    """``~h`` is logical_not in LEAPP (bool where NumPy gives the bitwise int); np.invert(h) is right. Same
    signature, different spelling: only the operator line is flagged, in either order."""
    for first, second in (("np.invert(h)", "~h"), ("~h", "np.invert(h)")):
        source = f'''\
h = annotate.input_tensors("node", {{"x": x}})
for _ in range(2):
    a = {first}
    b = {second}
annotate.output_tensors("node", {{"y": a + b}})
'''
        replay.TEMPLATES.clear()
        trace = _trace(source, {"np": np, "x": np.arange(4)})
        flagged = {h.line for h in trace.hazards if "LEAPP 0.7.2 records it wrongly" in h.message}
        assert flagged == {3 if first == "~h" else 4}, source


def test_casts_are_replayed_for_dtypes_torch_computes_wider():
    """uint16 arithmetic is computed in int32 and cast back: each replayed call keeps its cast."""
    source = '''\
h = annotate.input_tensors("node", {"x": x})
for _ in range(3):
    h = np.maximum(h, h // 2) + 1
annotate.output_tensors("node", {"y": h})
'''
    replay.TEMPLATES.clear()
    x = np.array([1, 500, 65530], dtype=np.uint16)
    trace = _trace(source, {"np": np, "x": x}, "full")
    graph = trace.nodes["node"].graph.graph
    casts = [n for n in graph.nodes if facts(n).cast]
    assert len(casts) >= 3
    fresh = np.array([7, 65535, 0], dtype=np.uint16)
    namespace = {"np": np, "x": fresh, "annotate": ln.annotate}
    exec(source, namespace)
    got = trace.nodes["node"](fresh)[0]
    assert got.dtype == np.uint16 and got.tolist() == namespace["h"].tolist()


def test_a_view_written_through_another_view_is_not_replayed():
    """A view read after a write into its base is indexed again from the base, with a hazard on every call, cache
    or not."""
    source = '''\
h = annotate.input_tensors("node", {"x": x})
z = h * 1.0
v = z[:2]
for _ in range(2):
    z[0] = 5.0
    w = v + 1.0
annotate.output_tensors("node", {"y": w})
'''
    off, filled, again = _three_ways(source, {"np": np, "x": np.arange(4, dtype=np.float32)}, "full")
    assert off == filled == again
    assert [h[1] for h in off["node"]["hazards"] if "a view once, where it is taken" in h[3]] == [6]


def test_signatures_tell_apart_what_the_builders_branch_on():
    sess = type("S", (), {"array_type": type("Traced", (np.ndarray,), {}), "versions": {}, "tainted": {},
                          "taint_of": sess_module.Session.taint_of})()
    describe = replay.describe
    assert describe(0.0, None, sess) != describe(-0.0, None, sess)
    for zero, one in ((0.0, 1.0), (-0.0, -1.0)):  # a zero's sign is not the value ±1.0, alone or in a list
        assert describe(zero, None, sess) != describe(one, None, sess)
        assert describe([zero, 2.0], None, sess) != describe([one, 2.0], None, sess)
        assert describe((slice(None), zero), None, sess) != describe((slice(None), one), None, sess)
    assert describe(0j, None, sess) != describe(complex(-0.0, 0.0), None, sess) \
        != describe(complex(0.0, -0.0), None, sess)
    assert describe(1, None, sess) != describe(1.0, None, sess) != describe(True, None, sess)
    assert describe((0, 1), None, sess) != describe([0, 1], None, sess)
    assert describe(np.dtype("float32"), None, sess) != describe(np.dtype("float64"), None, sess)
    assert describe(np.dtype("float32"), None, sess) != describe("float32", None, sess)
    with pytest.raises(replay.Miss):
        describe(np.float32(1.0), None, sess)  # a NumPy scalar: reported per call
    # an untraced array: a constant whose values the graph holds, so its values are part of the signature
    assert describe(np.ones(3), None, sess) == describe(np.ones(3), None, sess)
    assert describe(np.ones(3), None, sess) != describe(np.array([1.0, 1.0, 2.0]), None, sess)
    assert describe(np.ones(3), None, sess) != describe(np.ones(3, np.float32), None, sess)
    assert describe(np.ones(4), None, sess) != describe(np.ones((2, 2)), None, sess)
    # a larger one: known by a token for this array object and these bytes, renewed when they change
    large = np.ones(replay._MAX_KEYED + 1)
    first = describe(large, None, sess)
    assert first == describe(large, None, sess) and first[3] is describe(large, None, sess)[3]
    assert first != describe(large.copy(), None, sess)  # the same bytes in another array: another token
    large[0] = 2.0
    changed = describe(large, None, sess)
    assert changed != first
    large[0] = 1.0
    assert describe(large, None, sess) not in (first, changed)  # the first value again: a new token, never a stale one
    with pytest.raises(replay.Miss):
        describe(np.ones(replay._MAX_TOKENED + 1), None, sess)  # the largest: its graph constant is made per call
    tainted = np.ones(3)
    sess.tainted[id(tainted)] = (weakref.ref(tainted), [(sess_module._layout(tainted), "written with traced data")])
    with pytest.raises(replay.Miss):
        describe(tainted, None, sess)  # baked and reported at every call



INDEXING = '''\
h = annotate.input_tensors("node", {"x": x})
for _ in range(3):
    a = h[:, :2] + h[:, 2:4]
    b = h[1] * h[1:2] + h[-1]
    c = h[None, ::2, 1:3] - h[..., 1:3:1][None, 1::2]
    d = h[::-1, 0] + h[0, ::-1]
    e = h[:, 0] + h[:, -1] + h[0] + h[1, :]
    f = h[idx] + h[h[:, 0] > 0.0].sum()
annotate.output_tensors("node", {"a": a, "b": b, "c": c, "d": d, "e": e, "f": f})
'''


@pytest.mark.parametrize("profile", ["leapp", "full"])
def test_indexing_keys_are_replayed_to_the_graph_they_build(profile):
    """A key of slices, ints, None and Ellipsis is keyed by its parts (replay.index_key); index arrays and masks
    the general way. Every form, replayed, gives the graph, facts and hazards building it gives, and keys that
    select differently never share a template."""
    namespace = {"np": np, "x": np.arange(36, dtype=np.float32).reshape(6, 6), "idx": np.array([2, 0])}
    off, filled, again = _three_ways(INDEXING, namespace, profile)
    assert filled == off and again == off
    assert [(kind, line) for kind, line, *_ in off["node"]["hazards"]] == [("reversed-slice", 6)]
    sess = type("S", (), {"array_type": ln.tracing.array.TracedArray, "versions": {}, "profile": profile})()
    builder = object()
    traced = np.zeros((4, 6), np.float32).view(ln.tracing.array.TracedArray)
    traced._lp = ln.tracing.provenance.Provenance(builder, object())
    plain = traced.view(np.ndarray)
    keys = [(0,), (slice(0, 1),), (1,), (-1,), (slice(None), 0), (0, slice(None)), (None,), (Ellipsis,),
            (slice(None, None, -1),), (slice(None, None, 1),), (slice(None),), (None, slice(None, None, 2)),
            (Ellipsis, slice(1, 3, 1)), (Ellipsis, slice(1, 3, None)), (True,)]
    seen = {}
    for key in keys:
        found = replay.index_key(sess, builder, _GETITEM, traced, key, np.asarray(plain[key]))
        assert found is not None and found not in seen, (key, seen.get(found))
        seen[found] = key
    # the same key again is the same signature; an untraced or stale array is keyed the general way
    assert replay.index_key(sess, builder, _GETITEM, traced, (0,), plain[0]) in seen
    sess.versions = {1: 1}
    assert replay.index_key(sess, builder, _GETITEM, traced, (0,), plain[0]) not in seen

WRITES = '''\
h = annotate.input_tensors("node", {"x": x})
z = h * 1.0
for i in range(3):
    z[i] = h[i] * 2.0
    z[:, 0] = np.maximum(z[:, 0], 0.5)
w = np.maximum(z, z // 3) + np.uint16(1) if False else z + 1.0
annotate.output_tensors("node", {"y": w})
'''


def test_writes_are_checked_when_made(monkeypatch):
    monkeypatch.setattr(_builder.DtypePass, "run", _fail)
    trace = _trace(WRITES, {"np": np, "x": np.arange(12, dtype=np.float32).reshape(3, 4)}, "full")
    fresh = np.random.default_rng(2).standard_normal((3, 4)).astype(np.float32)
    namespace = {"np": np, "x": fresh, "annotate": ln.annotate}
    exec(WRITES, namespace)
    np.testing.assert_allclose(trace.nodes["node"](fresh)[0], namespace["w"], rtol=1e-6)


@pytest.mark.parametrize("source,x,rows", [
    (LOOP, np.random.default_rng(0).standard_normal((4, 6)).astype(np.float32), True),
    (WRITES, np.arange(12, dtype=np.float32).reshape(3, 4), True),
    ('''\
h = annotate.input_tensors("node", {"x": x})
for _ in range(3):
    h = np.maximum(h, h // 2) + 1
    s = np.sum(h, axis=0)
annotate.output_tensors("node", {"y": h, "s": s})
''', np.array([[1, 500, 65530], [3, 4, 5]], dtype=np.uint16), False),  # casts: checked on the values
])
def test_large_operands_are_checked_on_first_rows_to_the_same_graph(monkeypatch, source, x, rows):
    """Above _STAND_IN_ABOVE bytes a call whose results keep the operands' leading length is checked on their
    first rows (no torch copy of the data): the graph, facts and hazards are those of the check on the values."""
    replay.TEMPLATES.clear()
    by_values = snapshot(_trace(source, {"np": np, "x": x}, "full"))
    original, fitted = replay._fits, []

    def fits(*args: Any) -> bool:
        fitted.append(original(*args))
        return fitted[-1]

    monkeypatch.setattr(replay, "_fits", fits)
    monkeypatch.setattr(replay, "_STAND_IN_ABOVE", -1)
    replay.TEMPLATES.clear()
    on_rows = snapshot(_trace(source, {"np": np, "x": x}, "full"))
    assert on_rows == by_values
    assert (sum(fitted) >= 3) is rows  # calls checked on first rows


def test_a_rerun_cell_is_compiled_once_and_reports_the_same_lines():
    from leapp_notebook import trace as trace_module

    source = '''\
h = annotate.input_tensors("node", {"x": x})
k = np.interp(h, [0.0, 1.0], [1.0, 3.0])
annotate.output_tensors("node", {"y": h + k})
'''
    first = _trace(source, {"np": np, "x": np.linspace(0, 1, 5)})
    # (by source and the names it indexes that are plain arrays: none here)
    code = trace_module._CODE[(source, frozenset())]
    again = _trace(source, {"np": np, "x": np.linspace(0, 1, 5)})
    assert trace_module._CODE[(source, frozenset())] is code
    assert [(h.kind, h.line) for h in again.hazards] == [(h.kind, h.line) for h in first.hazards] != []
    other = _trace(source + "\n", {"np": np, "x": np.linspace(0, 1, 5)})
    assert trace_module._CODE[(source + "\n", frozenset())][1] != code[1]  # another source, another file name
    assert [(h.kind, h.line) for h in other.hazards] == [(h.kind, h.line) for h in first.hazards]


def test_the_recording_graph_names_nodes_as_fx_does():
    """Replayed and recorded call nodes are named without fx's create_name (builder._unique); the names must be the
    ones fx gives the same calls, builtin names (sum, abs, max) numbered from 1 included."""
    ours, theirs = _builder.RecordingGraph(), torch.fx.Graph()
    first, second = ours.placeholder("sum"), theirs.placeholder("sum")
    for target in [torch.sum, torch.sum, torch.abs, torch.max, torch.tanh, torch.tanh, torch.sum, torch.add]:
        a = ours.create_node("call_function", target, (first,))
        b = theirs.create_node("call_function", target, (second,))
        assert a.name == b.name
    assert [n.name for n in ours.nodes] == [n.name for n in theirs.nodes]


@pytest.mark.parametrize("bound", [None, 40])
def test_numbered_names_are_made_once_and_stay_fx_names_past_the_tables_bound(monkeypatch, bound):
    """Numbered names (``add_17``) come from a process-wide table made once (builder._numbered: formatting and
    hashing a new string was a third of naming a node): the names must stay fx's own, with a name taken out of
    order (a placeholder called ``tanh_3``), and past the table's bound (then made as needed)."""
    if bound is not None:
        monkeypatch.setattr(_builder, "_NUMBERED", {})
        monkeypatch.setattr(_builder, "_NUMBERED_KEPT", [0])
        monkeypatch.setattr(_builder, "_MAX_NUMBERED", bound)
    ours, theirs = _builder.RecordingGraph(), torch.fx.Graph()
    pairs = [(ours.placeholder(name), theirs.placeholder(name)) for name in ("x", "tanh_3", "sum_2")]
    for i in range(300):
        target = (torch.tanh, torch.sum, torch.add)[i % 3]
        a = ours.create_node("call_function", target, (pairs[0][0],))
        b = theirs.create_node("call_function", target, (pairs[0][1],))
        assert a.name == b.name, i
    assert [n.name for n in ours.nodes] == [n.name for n in theirs.nodes]
    if bound is not None:
        assert _builder._NUMBERED_KEPT[0] <= bound
    else:
        assert _builder._numbered("tanh", 57) is _builder._numbered("tanh", 57)  # one string for every graph


def test_nodes_without_keyword_arguments_share_one_empty_kwargs_that_nothing_can_change():
    """Recorded nodes with no keyword arguments (built one by one or replayed) hold one shared empty kwargs: one
    object per node fewer for the collector to walk. Sharing it must be invisible: it refuses edits, and giving
    one node keyword arguments leaves every other node's kwargs empty, its graph's code and its run unchanged."""
    x = np.linspace(-1.0, 1.0, 12, dtype=np.float32).reshape(3, 4)
    trace = ln.trace_cell(CELL.replace("STEPS", "2"), {"np": np, "x": x})
    module = trace.nodes["node"].graph
    calls = [n for n in module.graph.nodes if n.op in ("call_function", "call_method") and not n.kwargs]
    assert len(calls) > 20
    shared = {id(n.kwargs) for n in calls}
    assert len(shared) == 1
    with pytest.raises(Exception):  # noqa: B017 - fx's immutable_dict refuses edits (the error type is fx's)
        calls[0].kwargs["alpha"] = 2
    expected = module(torch.from_numpy(x))
    tanh = next(n for n in calls if n.target is torch.tanh)
    tanh.kwargs = {"out": None}
    assert tanh.kwargs == {"out": None}
    assert all(n.kwargs == {} for n in calls if n is not tanh)
    module.recompile()
    torch.testing.assert_close(module(torch.from_numpy(x)), expected, rtol=0, atol=0)


CONSTANTS = '''\
h = annotate.input_tensors("node", {"x": x})
for i in range(4):
    o = (h - MEAN) / STD
    a = np.clip(o @ W, LOW, HIGH) + np.maximum(o, MEAN_TWIN)[:, :4]
    g = np.concatenate([a, GOAL], axis=1)
    k = g * SCALES[i % 2]
    h = h + k.sum(axis=1, keepdims=True) * 0.01 + np.add(STD, STD)
annotate.output_tensors("node", {"y": h})
'''


def _constants() -> dict[str, Any]:
    rng = np.random.default_rng(3)
    mean = np.linspace(-1.0, 1.0, 8).astype(np.float32)
    return {"np": np, "x": rng.standard_normal((5, 8)).astype(np.float32), "MEAN": mean,
            "MEAN_TWIN": mean.copy(),  # equal values, another array: another graph constant, as without the cache
            "STD": np.linspace(0.5, 2.0, 8).astype(np.float32), "W": rng.standard_normal((8, 4)).astype(np.float32),
            "LOW": np.full(4, -1.0, np.float32), "HIGH": np.full(4, 1.0, np.float32),
            "GOAL": np.zeros((5, 2), np.float32),
            "SCALES": [np.full(6, 2.0, np.float32), np.full(6, 0.5, np.float32)]}  # one site, two values


def test_constant_operands_are_replayed_to_the_graph_they_build():
    """Plain array operands (a mean, a weight matrix, bounds) are part of a call's signature by value and become
    graph constants made from the replayed call's own arrays: a cell of them is replayed, not rebuilt at every
    call, to the graph, facts and hazards building every call gives (one constant per array object, equal values
    in two arrays included; two values at one site), and compute what the cell computes."""
    trace, settled = _replayed_as_built(CONSTANTS, _constants)
    assert settled == 0  # every call replayed (a call using a constant made by an earlier call is settled too)
    graph_constants = [n for n in trace.nodes["node"].graph.graph.nodes if n.op == "get_attr"]
    # MEAN, STD, W, LOW, HIGH, MEAN_TWIN, GOAL, two SCALES, and np.add(STD, STD)'s result: a new plain array at
    # each step, so a constant per step
    assert len(graph_constants) == 13
    namespace = _constants()
    fresh = np.random.default_rng(9).standard_normal((5, 8)).astype(np.float32)
    eager = dict(namespace, x=fresh.copy())
    exec(CONSTANTS.replace('annotate.input_tensors("node", {"x": x})', "x").replace(
        'annotate.output_tensors("node", {"y": h})', ""), eager)
    np.testing.assert_allclose(trace.nodes["node"](fresh)[0], eager["h"], rtol=1e-5, atol=1e-5)


def test_an_array_changed_in_place_between_calls_gets_a_constant_per_value():
    """A plain array the cell changes with plain NumPy between two uses (STEP[0] += 1): a graph constant per value
    it is used with (it was one constant holding its first value: a silently wrong graph), replayed to the graph
    building every call gives, and computing what the cell computes."""
    source = '''\
h = annotate.input_tensors("node", {"x": x})
for i in range(4):
    STEP[0] += 1.0
    h = h + STEP
annotate.output_tensors("node", {"y": h})
'''

    def namespace() -> dict[str, Any]:
        return {"np": np, "x": np.ones(3, np.float32), "STEP": np.zeros(3, np.float32)}

    trace, settled = _replayed_as_built(source, namespace)
    assert settled == 0  # each value was seen by the trace before
    assert len([n for n in trace.nodes["node"].graph.graph.nodes if n.op == "get_attr"]) == 4
    fresh = np.array([0.5, -1.0, 2.0], np.float32)
    eager = dict(namespace(), annotate=ln.annotate, x=fresh.copy())
    exec(source, eager)
    np.testing.assert_allclose(trace.nodes["node"](fresh)[0], eager["h"], rtol=0, atol=0)


def test_a_constant_operand_is_found_again_until_it_changes_or_receives_traced_data(monkeypatch):
    """A replayed call finds its plain array operand's constant again (``const_operand``'s short way: the same array
    object and bytes, nothing traced written into it): one constant per array and value, in the graph the calls
    built one by one give; once traced data is written into the array (``out=``) it is baked and reported at each
    use, and after a plain in-place change it gets a constant of its new value. The short way is taken, and the
    long one only for the constants it makes."""
    source = '''\
h = annotate.input_tensors("node", {"x": x})
for i in range(3):
    h = np.clip(h - B, LOW, HIGH) * B
STEP[0] += 1.0
for i in range(3):
    h = (h - B) * STEP
np.multiply(h, 0.5, out=B)
for i in range(2):
    h = h + B
annotate.output_tensors("node", {"y": h})
'''

    def namespace() -> dict[str, Any]:
        return {"np": np, "x": np.linspace(-2.0, 2.0, 4).astype(np.float32), "B": np.full(4, 0.25, np.float32),
                "STEP": np.zeros(4, np.float32), "LOW": np.full(4, -1.0, np.float32),
                "HIGH": np.full(4, 1.5, np.float32)}

    off = _snapshot_cache_off(source, namespace)
    # out= into B at line 7, and B baked at both of its uses after it (one hazard at line 9, two constants marked)
    assert [(h[0], h[1], len(h[4])) for h in off["node"]["hazards"]] == [("untraced-call", 7, 0),
                                                                         ("untraced-call", 9, 2)]
    assert snapshot(_trace(source, namespace())) == off  # fills the cache
    long_way = _count(sess_module.Session, "graph_value")
    try:
        trace = _trace(source, namespace())
    finally:
        long_way.restore()
    assert snapshot(trace) == off
    graph = trace.nodes["node"].graph.graph
    constants = [n for n in graph.nodes if n.op == "get_attr"]
    # B, LOW, HIGH, STEP's new value, the two baked B; each genuine one made once (B used 9 times before out=)
    assert [facts(n).const for n in constants].count("genuine") == 4, [n.name for n in constants]
    # the long way for the constants made (B, LOW, HIGH, STEP) and the calls built after out=; 23 calls without the
    # short way, 9 with it
    assert long_way.calls <= 10, long_way.calls


def test_templates_alike_share_one_compiled_source(monkeypatch):
    """A replay function binds its values as names (``_Code``), so templates alike (``np.tanh(h) * 0.5`` on a (3, 4)
    and on a (5, 4) array) have one source, compiled once per process: a new template of that shape costs a function
    object, no compilation (compiling was about a third of a cell's first trace). Each function keeps its own values
    (its closure's, its globals shared): the graph computes what the cell computes."""
    cell = '''\
h = annotate.input_tensors("node", {"x": x})
for i in range(3):
    h = np.tanh(h) * 0.5
annotate.output_tensors("node", {"y": h})
'''

    def templates(shape: tuple[int, ...]) -> list[Any]:
        return [t for k, t in replay.TEMPLATES.items() if shape in k and np.tanh in k and t is not replay.NO_TEMPLATE]

    rng = np.random.default_rng(5)
    _trace(cell, {"np": np, "x": rng.standard_normal((3, 4)).astype(np.float32)})  # compiles on the 2nd step
    first = templates((3, 4))
    assert len(first) == 1 and first[0].direct is not None
    compiled: list[str] = []

    def counting(source: str, filename: str, mode: str) -> Any:
        compiled.append(filename)
        return compile(source, filename, mode)

    monkeypatch.setattr(replay, "compile", counting, raising=False)
    trace = _trace(cell, {"np": np, "x": rng.standard_normal((5, 4)).astype(np.float32)})
    assert "<leapp_notebook replay template>" not in compiled, compiled
    second = templates((5, 4))
    assert len(second) == 1 and second[0].direct is not None and second[0].direct is not first[0].direct
    assert second[0].direct.__code__ is first[0].direct.__code__
    # one globals dict for every generated function, each template's values in its closure: functions of one code
    # object with globals of their own defeat the interpreter's cache of each global name on every replayed call
    assert second[0].direct.__globals__ is first[0].direct.__globals__ is replay._SHARED
    assert second[0].direct.__closure__ is not None and set(first[0].direct.__code__.co_freevars) <= {
        f"v{i}" for i in range(64)}
    fresh = rng.standard_normal((5, 4)).astype(np.float32)
    expected = fresh
    for _ in range(3):
        expected = np.tanh(expected) * np.float32(0.5)
    np.testing.assert_allclose(trace.nodes["node"](fresh)[0], expected, rtol=1e-6, atol=1e-6)


def _first_trace(source: str, namespace: Any) -> tuple[ln.Trace, int, dict[str, Any]]:
    """``source`` traced with an empty cache: the trace, how many calls were built and checked (``settle``), and the
    snapshot of building every call (cache off)."""
    built = _snapshot_cache_off(source, lambda: dict(namespace))
    settled = _count(replay, "settle")
    try:
        trace = _trace(source, dict(namespace))
    finally:
        settled.restore()
    return trace, settled.calls, built


NUMBERS = '''\
h = annotate.input_tensors("node", {"x": x})
for k in [0.5, 0.25, -2.0, -0.0, 1e-30, float("inf"), float("nan")]:
    h = (h * k + 1) - 2
for k in [3, -7, 2**31 - 1]:
    h = h * k
for k in [True, False]:
    h = h + k
annotate.output_tensors("node", {"y": h})
'''


def test_a_number_not_seen_before_replays_the_recording_for_any_number():
    """``h * k`` for seven floats (signed zero, a subnormal, inf and nan among them), three ints and two bools: a
    number is part of a call's signature by value, so each used to be a new signature, built and checked (about
    400,000 instructions a call against 55,000 replayed: a cell of hand-written constants paid that for every
    line). The ufunc hook now falls back to the recording for any number of the type (``replay.with_number``) where
    the builder passed the number to the graph as it is: one call of each kind is built (each bool), the rest
    replayed, to the graph building every call gives, computing what the cell computes."""
    x = np.random.default_rng(7).standard_normal((3, 4)).astype(np.float32)
    trace, settled, built = _first_trace(NUMBERS, {"np": np, "x": x})
    # built: * float, + int, - int (the first loop's first step: the others replay, 1 and 2 by value); * int; + True
    # and + False (a bool in a float loop reaches the graph as the int NumPy computes with, not as the operand
    # itself: each of the two values is built once)
    assert settled == 6, settled
    assert snapshot(trace) == built
    fresh = np.random.default_rng(8).standard_normal((3, 4)).astype(np.float32)
    eager = {"np": np, "annotate": ln.annotate, "x": fresh.copy()}
    with np.errstate(all="ignore"):
        exec(NUMBERS, eager)
    np.testing.assert_array_equal(trace.nodes["node"](fresh)[0], eager["h"])


SIGNED_ZEROS = """\
h = annotate.input_tensors("node", {"x": x})
outs, rows = [], []
for step in range(2):
    for k in KS:
        outs.append(h * k)
        outs.append(k - h)
        outs.append(np.maximum(h, k))
        outs.append(np.where(h > 0.1, h, k))
        rows.append(h + [k, 0.5, 0.25, 2.0])
annotate.output_tensors("node", {"y": np.stack(outs), "r": np.stack(rows)})
"""


@pytest.mark.parametrize("numbers", [(1.0, 0.0, -1.0, -0.0), (0.0, 1.0, -0.0, -1.0), (-0.0, -1.0, 1.0, 0.0)],
                         ids=["ones-first", "zeros-first", "negative-first"])
def test_a_signed_zero_and_a_one_are_different_signatures(numbers: tuple[float, ...]):
    """0.0 and -0.0 hash as 0 and compare equal, so a signature kept a zero's sign instead of its value: as
    ``copysign(1.0, zero)``, which is the value 1.0 or -1.0. ``np.maximum(h, 0.0)`` after ``np.maximum(h, 1.0)`` (a
    ReLU after a clamp) then replayed the clamp's recording, 1.0 baked in its graph, with no hazard: the ufunc hook's
    key and ``replay.describe`` both did it. Each of the four numbers, in three orders, as an operator's operand on
    either side, a ufunc's, ``np.where``'s and in a list operand (``describe``'s parts of a list), traced twice
    (recording, then replaying from the cache): the graph computes what the cell computes, sign of zero included."""
    replay.TEMPLATES.clear()
    x = np.random.default_rng(3).standard_normal((3, 4)).astype(np.float32)
    fresh = np.random.default_rng(4).standard_normal((3, 4)).astype(np.float32)
    cell = SIGNED_ZEROS.replace("KS", repr(numbers))
    eager = {"np": np, "annotate": ln.annotate, "x": fresh.copy()}
    exec(cell, eager)
    for _ in range(2):
        y, r = _trace(cell, {"np": np, "x": x}).nodes["node"](fresh)
        for got, want in ((y, eager["outs"]), (r, eager["rows"])):
            got, want = np.asarray(got), np.stack(want)
            np.testing.assert_array_equal(got, want)
            np.testing.assert_array_equal(np.signbit(got), np.signbit(want))  # -0.0 is not 0.0


@pytest.mark.parametrize("source, settled", [
    # an int8 comparison with a number out of its range is settled without torch (the value decides the graph)
    ("a = xi > 3\nb = xi > 300\nc = xi < -300\nd = xi <= 100", 7),
    # integer division by zero is 0 in NumPy: a different graph for the number 0
    ("a = xi // 2\nb = xi // 0\nc = xi % 3\nd = xi % 0", 7),
    # integers to a negative power raise in NumPy; a positive one is recorded
    ("a = xi ** 2\nb = xi ** 3\nc = xi ** 1\nd = xi ** 0", 7),
    # an int beyond int32 is not replayed for any value (xf * 3 and xf * 5 are: h * 10 was built)
    ("a = xf * 3\nb = xf * 2**40\nc = xf * -(2**40)\nd = xf * 5", 5),
], ids=["int-comparison", "int-division", "int-power", "large-int"])
def test_a_number_whose_value_decides_the_graph_is_built_for_each_value(source: str, settled: int):
    """Where a builder looks at the number (an integer comparison out of the dtype's range, integer division by
    zero, integer powers) or the number is beyond int32, the recording is not taken for any number: every value is
    built and checked, to the graph building every call gives, computing what NumPy computes."""
    cell = ('h = annotate.input_tensors("node", {"x": x})\nxi = (h * 10).astype(np.int8)\nxf = h * 1.0\n'
            + source + '\nannotate.output_tensors("node", {"a": a, "b": b, "c": c, "d": d})\n')
    x = np.random.default_rng(9).standard_normal((3, 4)).astype(np.float32)
    with np.errstate(all="ignore"):
        trace, built_calls, built = _first_trace(cell, {"np": np, "x": x})
    assert snapshot(trace) == built
    assert built_calls == settled  # h * 10, astype, h * 1.0 and every line where the value decides
    fresh = np.random.default_rng(10).standard_normal((3, 4)).astype(np.float32)
    eager = {"np": np, "annotate": ln.annotate, "x": fresh.copy()}
    with np.errstate(all="ignore"):
        exec(cell, eager)
        got = trace.nodes["node"](fresh)
    for name, value in zip("abcd", got, strict=True):
        np.testing.assert_array_equal(value, eager[name], err_msg=name)


LARGE_CHANGED = '''\
h = annotate.input_tensors("node", {"x": x})
a = h @ W
W[0, 0] = 5.0
b = h @ W
c = h @ W
annotate.output_tensors("node", {"a": a, "b": b, "c": c})
'''

TENSOR_CHANGED = '''\
h = annotate.input_tensors("node", {"x": x})
t = torch.from_numpy(h)
a = t @ W
W.add_(1.0)
b = t @ W
c = t @ W
annotate.output_tensors("node", {"a": a, "b": b, "c": c})
'''


@pytest.mark.parametrize("source, weight", [
    (LARGE_CHANGED, lambda: np.ones((64, 64), np.float32)),  # above the 1,024 elements known by their bytes
    (LARGE_CHANGED, lambda: np.asfortranarray(np.ones((64, 64), np.float32))),  # a non-contiguous one
    (TENSOR_CHANGED, lambda: torch.ones(64, 64)),
], ids=["large-array", "large-fortran-array", "tensor"])
def test_a_large_constant_changed_in_place_gets_a_constant_per_value(source: str, weight: Any):
    """A weight from outside the cell that the cell changes in place between two uses: a plain array above the size
    whose bytes are kept (W[0, 0] = 5.0) or a tensor (W.add_(1.0)). Each value gets a constant (it was one constant
    holding the first value: the graph's ``b`` and ``c`` were silently wrong, with no hazard), and an unchanged
    weight keeps its constant. The graph computes what the cell computed on the trace's own input."""
    x = np.random.default_rng(4).standard_normal((3, 64)).astype(np.float32)
    trace = _trace(source, {"np": np, "torch": torch, "x": x, "W": weight()})
    graph = trace.nodes["node"].graph.graph
    constants = [n for n in graph.nodes if n.op == "get_attr"]
    assert len(constants) == 2 and trace.hazards == []
    matmuls = [n for n in graph.nodes if n.op in ("call_function", "call_method")]
    assert [n.args[1] for n in matmuls] == [constants[0], constants[1], constants[1]]
    start = weight()
    changed = start + 1.0 if isinstance(start, torch.Tensor) else start.copy()
    if not isinstance(start, torch.Tensor):
        changed[0, 0] = 5.0
    expected = [np.asarray(x @ np.asarray(w)) for w in (start, changed, changed)]
    for got, want in zip(trace.nodes["node"](x), expected, strict=True):
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-5)


def test_a_weight_matrix_is_replayed_until_it_changes(monkeypatch):
    """A constant operand above the 1,024 elements known by their bytes (a 64 x 64 weight) is part of a signature by
    a token for the array object and its bytes: its calls are replayed (they were recorded and checked one by one, at
    about 5x the cost), a re-run with the same weight replays every call, and a change in place between two uses
    gives a new constant, as building every call gives. The tokens' bytes are bounded: past the bound the table
    starts over (signatures missed, never a wrong one)."""
    source = '''\
h = annotate.input_tensors("node", {"x": x})
for i in range(3):
    h = np.tanh(h @ W) + B
W[0, 0] = 5.0
for i in range(3):
    h = np.tanh(h @ W) + B
annotate.output_tensors("node", {"y": h})
'''
    rng = np.random.default_rng(6)
    x = rng.standard_normal((2, 64)).astype(np.float32)
    start = (rng.standard_normal((64, 64)) / 8).astype(np.float32)
    bias = np.full(64, 0.1, np.float32)

    def namespace() -> dict[str, Any]:
        return {"np": np, "x": x, "W": start.copy(), "B": bias}

    off = _snapshot_cache_off(source, namespace)
    assert off["node"]["hazards"] == []
    shared = namespace()
    assert snapshot(_trace(source, dict(shared, W=shared["W"]))) == off  # fills the cache
    shared["W"][:] = start  # the cell's W[0, 0] = 5.0 undone: the same array object, its first value again
    settled = _count(replay, "settle")
    try:
        trace = _trace(source, shared)
    finally:
        settled.restore()
    assert snapshot(trace) == off
    # the first call of each value is recorded (a token is per array object and value: after the change, and after
    # the change undone, a new one), every other call replayed
    assert settled.calls <= 2, settled.calls
    constants = [n for n in trace.nodes["node"].graph.graph.nodes if n.op == "get_attr"]
    assert len(constants) == 3  # W's two values and B
    changed = start.copy()
    changed[0, 0] = 5.0
    h = x
    for w in (start,) * 3 + (changed,) * 3:
        h = np.tanh(h @ w) + bias
    np.testing.assert_allclose(trace.nodes["node"](x)[0], h, rtol=1e-5, atol=1e-5)

    monkeypatch.setattr(replay, "_TOKENED_BYTES", 3 * start.nbytes)  # room for three weights' bytes
    replay._TOKENS.clear()
    replay._TOKENED[0] = 0
    weights = [np.ones((64, 64), np.float32) * i for i in range(5)]
    tokens = [replay._value_token(w) for w in weights]
    assert len(set(map(id, tokens))) == 5 and len(replay._TOKENS) <= 3
    assert replay._TOKENED[0] == sum(len(held[1]) for held in replay._TOKENS.values()) <= 3 * start.nbytes
    assert replay._value_token(weights[-1]) is tokens[-1]  # still held
    assert replay._value_token(weights[0]) is not tokens[0]  # dropped with the table: a new token


def test_a_large_constant_used_unchanged_keeps_one_constant_with_nan_inside():
    """The comparison that tells a changed large constant apart is bit for bit, so NaN is equal to itself: an
    unchanged weight with a NaN in it stays one constant over its uses (compared by value, it would get one per use)."""
    w = np.ones((40, 40), np.float32)
    w[3, 3] = np.nan
    source = '''\
h = annotate.input_tensors("node", {"x": x})
for i in range(3):
    h = np.tanh(h @ W)
annotate.output_tensors("node", {"y": h})
'''
    trace = _trace(source, {"np": np, "x": np.ones((2, 40), np.float32), "W": w})
    constants = [n for n in trace.nodes["node"].graph.graph.nodes if n.op == "get_attr"]
    assert len(constants) == 1, [n.name for n in constants]


def test_ufuncs_with_plain_array_operands_are_replayed_from_the_hook():
    """``(h - MEAN) / STD`` in a loop: the ufunc hook keys a plain array operand by value (replay.constant_part) as
    the general signature does, so a re-trace replays these calls without the general signature (before, each went
    the general way: 20 signatures here). An array the cell made (SCALE) still goes the general way. The graph
    computes what the cell computes."""
    source = '''\
h = annotate.input_tensors("node", {"x": x})
SCALE = np.full(3, 2.0, np.float32)
for i in range(5):
    h = (h - MEAN) / STD + BIG[:3] * 0.5
    h = MEAN * h * SCALE
annotate.output_tensors("node", {"y": h})
'''
    rng = np.random.default_rng(3)

    def namespace() -> dict[str, Any]:
        return {"np": np, "x": rng.standard_normal((4, 3)).astype(np.float32), "BIG": np.ones(2000, np.float32),
                "MEAN": np.array([0.5, -0.5, 0.25], np.float32), "STD": np.array([2.0, 1.0, 4.0], np.float32)}

    _trace(source, namespace())
    trace, signatures = _signatures_of_a_retrace(source, namespace)
    # per step, from the hook: h - MEAN, / STD, + BIG[:3] * 0.5 (a plain view: plain NumPy makes it), MEAN * h;
    # the general way: * SCALE
    assert trace.hazards == [] and signatures == 5, (signatures, trace.hazards)
    _computes_the_cell(trace, source, namespace, rng.standard_normal((4, 3)).astype(np.float32))


def _signatures_of_a_retrace(source: str, namespace: Any) -> tuple[ln.Trace, int]:
    """A trace of ``source`` in a fresh ``namespace()``, and how many calls went the general way (signature)."""
    spy = _count(replay, "signature")
    try:
        return _trace(source, namespace()), spy.calls
    finally:
        spy.restore()


def _computes_the_cell(trace: ln.Trace, source: str, namespace: Any, fresh: np.ndarray) -> None:
    """The graph of node "node" gives on ``fresh`` the ``h`` the cell computes from it."""
    eager = dict(namespace(), annotate=ln.annotate, x=fresh.copy())
    exec(source, eager)
    np.testing.assert_allclose(trace.nodes["node"](fresh)[0], eager["h"], rtol=1e-6, atol=1e-6)


FUNCTION_CALLS = '''\
h = annotate.input_tensors("node", {"x": x})
for i in range(4):
    a = np.clip(h, LOW, HIGH)
    b = np.concatenate([a, GOAL], axis=1)
    c = np.concatenate((b[:, :3], h), 1)
    h = np.clip(c[:, :3], -2.0, 2.0) + np.where(a > 0, a, 0.5) + np.sum(c, axis=1, keepdims=True)
    if i == 1:
        LOW[0] = -0.25
annotate.output_tensors("node", {"y": h})
'''


def test_function_calls_are_replayed_from_the_hook_and_built_again_when_an_argument_changes():
    """np.clip, np.concatenate (a list and a tuple, an axis by keyword and by position), np.where, np.sum: the
    function hook keys a call by its arguments' parts read on the way (the ufunc hook's way), so a re-trace
    replays them without binding the general signature; a constant changed in place (LOW) is a new key, built once
    per value. Built, replayed and replayed again agree (graph, facts, hazards: none), and the graph computes what
    the cell computes."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal((4, 3)).astype(np.float32)

    def namespace() -> dict[str, Any]:
        return {"np": np, "x": x, "LOW": np.full(3, -0.5, np.float32), "HIGH": np.full(3, 0.75, np.float32),
                "GOAL": np.ones((4, 2), np.float32)}

    _replayed_as_built(FUNCTION_CALLS, namespace)
    trace, signatures = _signatures_of_a_retrace(FUNCTION_CALLS, namespace)
    assert trace.hazards == [] and signatures == 0, (signatures, trace.hazards)
    _computes_the_cell(trace, FUNCTION_CALLS, namespace, rng.standard_normal((4, 3)).astype(np.float32))


IN_CELL_CONSTANTS = '''\
h = annotate.input_tensors("node", {"x": x})
MEAN = np.array([-1.0, -0.5, -0.25, 0.0, 0.25, 0.5, 0.75, 1.0], dtype=np.float32)
SCALE = np.array([0.5] * 8, dtype=np.float32)
for step in range(4):
    h = np.tanh((h - MEAN) * SCALE)
    if step == 1:
        MEAN[0] = 5.0
annotate.output_tensors("node", {"y": h})
'''


def test_arrays_the_cell_makes_without_traced_data_are_one_constant_each_and_replayed():
    """MEAN and SCALE made in the cell hold no traced data: each is one graph constant while its contents stay
    (a plain write into MEAN makes a new one from then on), and the calls using them are replayed on a re-trace, to
    the graph building every call gives and to the eager values."""
    def namespace() -> dict[str, Any]:
        return {"np": np, "x": np.linspace(-2.0, 2.0, 8, dtype=np.float32)}

    trace, settled = _replayed_as_built(IN_CELL_CONSTANTS, namespace)
    assert settled == 0
    constants = [n for n in trace.nodes["node"].graph.graph.nodes if n.op == "get_attr"]
    assert len(constants) == 3  # MEAN, SCALE, and MEAN after its write
    fresh = np.random.default_rng(6).standard_normal(8).astype(np.float32)
    eager = {"np": np, "annotate": ln.annotate, "x": fresh.copy()}
    exec(IN_CELL_CONSTANTS, eager)
    np.testing.assert_allclose(trace.nodes["node"](fresh)[0], eager["h"], rtol=1e-6, atol=1e-6)


def test_a_retraced_straight_line_cell_finds_each_sites_facts_again(monkeypatch):
    """A template op keeps the facts record of its last site (a loop's iterations share it) and a table of its
    records by site, across traces: in a straight-line cell every op has a line of its own, and a re-trace makes no
    record, each node still reading its own line. When the tables hold _MAX_SITE_FACTS records in all they start
    over, and the records are made again, equal."""
    body = ["h = np.tanh(h) * 0.5"] * 6 + ["h = np.tanh(h) + 0.25"] * 3
    cell = "\n".join(['h = annotate.input_tensors("node", {"x": x})', *body,
                      'annotate.output_tensors("node", {"y": h})']) + "\n"
    x = np.random.default_rng(11).standard_normal((3, 4)).astype(np.float32)

    def records(trace: ln.Trace) -> list[Any]:
        graph = trace.nodes["node"].graph.graph
        return [facts(n) for n in graph.nodes if n.op == "call_function"]

    replay.TEMPLATES.clear()
    _builder.forget_site_facts()
    for _ in range(2):  # the second trace replays every call (the first builds the templates)
        second = records(_trace(cell, {"np": np, "x": x}))
    third = records(_trace(cell, {"np": np, "x": x}))
    assert [r.line for r in third] == [line for line in range(2, 2 + len(body)) for _ in range(2)]
    assert all(a is b for a, b in zip(second, third, strict=True))
    assert _builder._SITE_MEMOS_KEPT[0] >= len(body)
    monkeypatch.setattr(_builder, "_MAX_SITE_FACTS", 3)  # starts over at every fourth new record
    _builder.forget_site_facts()
    fourth = records(_trace(cell, {"np": np, "x": x}))
    assert _builder._SITE_MEMOS_KEPT[0] <= 3
    assert sum(len(memo[2]) for memo in _builder._SITE_MEMOS) == _builder._SITE_MEMOS_KEPT[0]
    assert fourth == third and any(a is not b for a, b in zip(third, fourth, strict=True))
    cache_off_lines = [facts(n).line for n in _snapshot_cache_off_graph(cell, x)]
    assert [r.line for r in fourth] == cache_off_lines



def test_replayed_nodes_share_their_template_ops_facts_and_keep_their_own_sites():
    """A replayed node's record is a SitedFacts: its template op's facts are not copied (the record's ``__dict__``
    is the op's read-only SharedState, one object for every node the op makes) and its site is its own. It reads,
    compares and hashes as a plain NodeFacts with the same values; what derives a record from it (``derive``,
    ``facts.update``, ``dataclasses.replace``, copying, pickling) gives a plain one that keeps the site; nothing
    can edit the shared facts in place."""
    body = ["h = np.tanh(h) * 0.5"] * 4
    cell = "\n".join(['h = annotate.input_tensors("node", {"x": x})', *body,
                      'annotate.output_tensors("node", {"y": h})']) + "\n"
    x = np.random.default_rng(12).standard_normal((3, 4)).astype(np.float32)
    replay.TEMPLATES.clear()
    _builder.forget_site_facts()
    for _ in range(2):  # the second trace replays every call
        graph = _trace(cell, {"np": np, "x": x}).nodes["node"].graph.graph
    nodes = [n for n in graph.nodes if n.op == "call_function"]
    records = [facts(n) for n in nodes]
    assert all(type(r) is SitedFacts for r in records)
    tanh, mul = records[0::2], records[1::2]
    assert [r.line for r in tanh] == [r.line for r in mul] == [2, 3, 4, 5]
    assert len({id(r.__dict__) for r in tanh}) == 1 and len({id(r.__dict__) for r in mul}) == 1
    assert isinstance(tanh[0].__dict__, SharedState) and tanh[0].__dict__ is not mul[0].__dict__
    assert "line" not in tanh[0].__dict__  # the site is the record's own

    built = [facts(n) for n in _snapshot_cache_off_graph(cell, x)]
    assert all(type(r) is NodeFacts for r in built)
    assert records == built and built == records  # either side of ==
    assert [hash(r) for r in records] == [hash(r) for r in built]
    assert records[2] != records[0]  # the same op's facts at another line

    record = tanh[1]
    with pytest.raises(dataclasses.FrozenInstanceError):
        record.line = 9  # type: ignore[misc]
    with pytest.raises(TypeError, match="shared by its nodes"):
        record.__dict__["numpy"] = "np.sin"
    with pytest.raises(TypeError, match="shared by its nodes"):
        record.__dict__.update(dtype="float64")
    assert tanh[0].numpy == "np.tanh" and tanh[0].dtype == "float32"

    changed = dataclasses.replace(record, dtype="float64")
    assert type(changed) is NodeFacts and (changed.line, changed.numpy, changed.dtype) == (3, "np.tanh", "float64")
    derived = derive(record, {"torch": "torch.sin"})
    assert type(derived) is NodeFacts and (derived.line, derived.torch, derived.shape) == (3, "torch.sin", (3, 4))
    for copied in (copy.copy(record), copy.deepcopy(record), pickle.loads(pickle.dumps(record))):
        assert type(copied) is NodeFacts and copied == record and copied.line == 3
    updated = update(nodes[2], view=True)  # one node's facts: the others keep theirs
    assert type(updated) is NodeFacts and updated.line == 3 and updated.view
    assert facts(nodes[2]) is updated and not any(facts(n).view for n in nodes if n is not nodes[2])


def _snapshot_cache_off_graph(cell: str, x: np.ndarray) -> list[Any]:
    replay.ENABLED = False
    try:
        graph = _trace(cell, {"np": np, "x": x}).nodes["node"].graph.graph
    finally:
        replay.ENABLED = True
    return [n for n in graph.nodes if n.op == "call_function"]


@pytest.mark.parametrize("body", [
    # a ufunc torch takes no scalar for: the number becomes a constant tensor (one per value, built or replayed)
    "for i in range(3):\n    h = np.maximum(h, -3.5) * 0.5\nh = np.minimum(h, -3.5)\nh = np.maximum(h, 2.0)",
    # the same value in two dtypes is two constants
    "for i in range(2):\n    h = np.maximum(h, -3.5)\n    g = np.maximum(h.astype(np.float64), -3.5)\n"
    "h = h + g.astype(np.float32)",
], ids=["loop-and-line", "two-dtypes"])
def test_a_computed_constant_is_one_node_per_value_built_or_replayed(body: str):
    """A constant a builder computes from a static argument (``np.maximum(h, -3.5)``: torch.maximum takes no number)
    is one array object per dtype and value (``provenance.computed``), and a template keeps that object: so the calls
    that compute one value share one constant node, whether they were built (cache off, or a first trace) or
    replayed. Replaying used to share one per template and building made one per call: the graphs differed."""
    cell = 'h = annotate.input_tensors("node", {"x": x})\n' + body + '\nannotate.output_tensors("node", {"y": h})\n'
    x = np.random.default_rng(3).standard_normal((3, 4)).astype(np.float32)
    replay.TEMPLATES.clear()
    off, first, second = _three_ways(cell, {"np": np, "x": x}, "leapp")
    assert off == first == second
    graph = _trace(cell, {"np": np, "x": x}).nodes["node"].graph.graph
    consts = [n for n in graph.nodes if n.op == "get_attr"]
    values = {(str(getattr(graph.owning_module, n.target).dtype), getattr(graph.owning_module, n.target).item())
              for n in consts}
    assert len(consts) == len(values), [str(n) for n in consts]
    fresh = np.random.default_rng(4).standard_normal((3, 4)).astype(np.float32)
    again = {"np": np, "h": fresh.copy()}
    exec(body, again)
    np.testing.assert_allclose(_trace(cell, {"np": np, "x": x}).nodes["node"](fresh)[0], again["h"], rtol=1e-6)


CLIP_BOUNDS = '''\
h = annotate.input_tensors("node", {"x": x})
outs = []
for lo, hi in [(-1.0, 1.0), (-0.5, 0.75), (-0.0, 0.0), (1e-30, 2.0), (float("-inf"), 0.25), (-2.0, float("inf")),
               (float("nan"), 1.0), (0.5, -0.5), (-3e38, 3e38)]:
    outs.append(np.clip(h, lo, hi))
outs.append(np.clip(h, -3.0, None))
outs.append(np.clip(h, None, 0.125))
outs.append(np.clip(h, a_min=-0.3, a_max=0.3))
outs.append(np.clip(h, 0.2, None))
outs.append(h.clip(-0.7, 0.7))
outs.append(h.clip(-0.6, 0.6))
annotate.output_tensors("node", {"y": np.stack(outs)})
'''


def test_a_function_number_not_seen_before_replays_the_recording_for_any_float():
    """``np.clip(h, lo, hi)`` with float bounds the builder passes to ``torch.clamp`` as they are: the function hook
    falls back to the recording for any float there (``replay.numbers_key``, ``replay.with_numbers``), so nine pairs
    of bounds (signed zeros, a subnormal, infinities, nan, crossed bounds, float32's ends) and the keyword form are
    one call built, one-sided bounds one per side, and ``h.clip(lo, hi)`` one (``Session.record`` falls back too). The
    graph is the one building every call gives, and computes what NumPy computes."""
    x = np.random.default_rng(12).standard_normal((3, 4)).astype(np.float32) * 3
    replay.TEMPLATES.clear()
    replay.NUMBER_SLOTS.clear()
    with np.errstate(all="ignore"):
        trace, settled, built = _first_trace(CLIP_BOUNDS, {"np": np, "x": x})
    # built: the first pair, lower bound only, upper bound only, the first method call and np.stack; the other pairs,
    # the keywords (bound to the same names), the second lower bound and the second method call replay
    assert settled == 5, settled
    assert snapshot(trace) == built
    fresh = np.random.default_rng(13).standard_normal((3, 4)).astype(np.float32) * 3
    eager = {"np": np, "annotate": ln.annotate, "x": fresh.copy()}
    with np.errstate(all="ignore"):
        exec(CLIP_BOUNDS, eager)
        got = trace.nodes["node"](fresh)[0]
    np.testing.assert_array_equal(got, np.stack(eager["outs"]))


def test_a_function_number_that_decides_the_graph_is_built_for_each_value():
    """An integer bound on an integer array is clamped to the dtype's range by the builder (the value decides the
    graph), and a bound on an integer array result is not a float result: every value is built and checked."""
    cell = ('h = annotate.input_tensors("node", {"x": x})\nxi = (h * 10).astype(np.int8)\n'
            'a = np.clip(xi, -3, 3)\nb = np.clip(xi, -300, 300)\nc = np.clip(xi, -5, 100)\n'
            'annotate.output_tensors("node", {"a": a, "b": b, "c": c})\n')
    x = np.random.default_rng(14).standard_normal((3, 4)).astype(np.float32)
    replay.TEMPLATES.clear()
    replay.NUMBER_SLOTS.clear()
    trace, settled, built = _first_trace(cell, {"np": np, "x": x})
    assert settled == 5, settled  # h * 10, astype and each clip
    assert snapshot(trace) == built
    fresh = np.random.default_rng(15).standard_normal((3, 4)).astype(np.float32)
    eager = {"np": np, "annotate": ln.annotate, "x": fresh.copy()}
    exec(cell, eager)
    for name, value in zip("abc", trace.nodes["node"](fresh), strict=True):
        np.testing.assert_array_equal(value, eager[name], err_msg=name)


def test_a_function_float_beyond_the_result_dtype_is_built_and_reported():
    """``np.clip(h, -1e300, 1e300)`` on float32: torch cannot take the bound (it refuses to convert it), which the
    check of that call reports. A bound beyond the result dtype's range is therefore never replayed from the
    recording for any float, also after one for any float exists (``replay.numbers_key``)."""
    cell = ('h = annotate.input_tensors("node", {"x": x})\na = np.clip(h, -1.0, 1.0)\n'
            'b = np.clip(h, -1e300, 1e300)\nannotate.output_tensors("node", {"a": a, "b": b})\n')
    x = np.random.default_rng(16).standard_normal((3, 4)).astype(np.float32)
    replay.TEMPLATES.clear()
    replay.NUMBER_SLOTS.clear()
    with np.errstate(over="ignore"):
        trace, settled, built = _first_trace(cell, {"np": np, "x": x})
    assert settled == 2, settled  # line 2 stores the recording for any float; line 3 does not take it
    assert snapshot(trace) == built
    assert [h.line for h in trace.nodes["node"].hazards] == [3], trace.nodes["node"].hazards


WHERE_NUMBERS = '''\
h = annotate.input_tensors("node", {"x": x})
outs = []
for v in [0.5, -2.0, -0.0, 1e-30, float("inf"), float("-inf"), float("nan"), 3.4e38]:
    outs.append(np.where(h > 0.1, h, v))
    outs.append(np.where(h > 0.2, v, h))
for v in [0.5, 7.25]:
    outs.append(np.where(h > 0.3, hi, v))
outs.append(np.where(h > 0.4, h, 1e300))
annotate.output_tensors("node", {"y": np.stack([o.astype(np.float64) for o in outs])})
'''


def test_a_where_float_beside_an_array_replays_the_recording_for_any_float():
    """``np.where(c, h, v)`` with a Python float beside an array on a float result: the float goes to ``torch.where``
    as it is (NumPy's weak scalar: the array's dtype), so the recording holds for any float there, either side. Eight
    floats each side: one call built per side; an int array with a float (a float64 result, the array cast) likewise.
    1e300 beyond float32 stays a constant, built. The graph is the one building every call gives, and computes what
    NumPy computes."""
    x = np.random.default_rng(17).standard_normal((3, 4)).astype(np.float32)
    replay.TEMPLATES.clear()
    replay.NUMBER_SLOTS.clear()
    cell = WHERE_NUMBERS.replace('h = annotate.input_tensors("node", {"x": x})',
                                 'h = annotate.input_tensors("node", {"x": x})\nhi = (h * 10).astype(np.int32)')
    with np.errstate(all="ignore"):
        trace, settled, built = _first_trace(cell, {"np": np, "x": x})
    # built: h * 10 and its astype, the first h > 0.1 (the other comparisons replay it for any number), one where per
    # side, the int array's where, the 1e300 where, astype(np.float64) of a float32 and of a float64 array, np.stack
    assert settled == 10, settled
    assert snapshot(trace) == built
    graph = trace.nodes["node"].graph.graph
    assert sum(1 for n in graph.nodes if n.op == "get_attr") == 1  # 1e300's constant alone
    fresh = np.random.default_rng(18).standard_normal((3, 4)).astype(np.float32)
    eager = {"np": np, "annotate": ln.annotate, "x": fresh.copy()}
    with np.errstate(all="ignore"):
        exec(cell, eager)
        got = trace.nodes["node"](fresh)[0]
    np.testing.assert_array_equal(got, np.stack([o.astype(np.float64) for o in eager["outs"]]))


@pytest.mark.parametrize("outer", [True, False], ids=["grad-on", "under-no_grad"])
def test_a_calls_check_runs_without_grad_and_leaves_grad_mode_as_it_found_it(monkeypatch, outer):
    """The check of a new call signature runs its nodes with grad off (``replay._run``, without torch.no_grad()'s
    Python objects), and puts the caller's grad mode back, also when torch rejects the call's values (line 3:
    ``torch.clamp`` refuses 1e300 on float32, and the check's exception is the path out)."""
    cell = ('h = annotate.input_tensors("node", {"x": x})\na = np.tanh(h) * 2.0\n'
            'b = np.clip(h, -1e300, 1e300)\nannotate.output_tensors("node", {"a": a, "b": b})\n')
    x = np.random.default_rng(17).standard_normal((3, 4)).astype(np.float32)
    modes: list[tuple[bool, bool]] = []  # (the mode asked for, the mode it replaced)
    real = replay._set_grad_enabled

    def recording(mode: bool) -> None:
        modes.append((mode, torch.is_grad_enabled()))
        real(mode)

    monkeypatch.setattr(replay, "_set_grad_enabled", recording)
    replay.TEMPLATES.clear()
    with torch.set_grad_enabled(outer), np.errstate(over="ignore"):
        trace = ln.trace_cell(cell, {"np": np, "x": x})
        assert torch.is_grad_enabled() is outer
    assert [h.line for h in trace.nodes["node"].hazards] == [3]  # the rejected call's check reported it
    assert len(modes) >= 6 and len(modes) % 2 == 0, modes  # tanh, mul, clip at least: each switched off and back
    assert modes[0::2] == [(False, outer)] * (len(modes) // 2)
    assert modes[1::2] == [(outer, False)] * (len(modes) // 2)


METHODS = '''\
def centred(a):
    return a - a.mean(axis=0)

h = annotate.input_tensors("node", {"x": x})
for step in range(3):
    s = h.sum(axis=1, keepdims=True).astype(np.float64)
    t = centred(h.T).T.reshape(2, 12).clip(-1.0, 1.0).reshape(4, 6)
    h = (t * s).astype(np.float32) + h.max(axis=0)
annotate.output_tensors("node", {"y": h})
'''


@pytest.mark.parametrize("profile", ["leapp", "full"])
def test_methods_are_replayed_from_the_method_hook_at_their_own_lines(profile):
    """``h.sum(...)``, ``h.T``, ``h.reshape(...)``, ``h.astype(...)``, at the cell's top level and in a helper: a
    re-trace replays them from the method hook (``TracedArray._method``), without ``Session.record``, and gives
    the graph, facts (lines and helper names) and hazards that building every call gives."""
    from leapp_notebook.tracing.session import Session

    x = np.random.default_rng(5).standard_normal((4, 6)).astype(np.float32)
    namespace = {"np": np, "x": x}
    off, filled, again = _three_ways(METHODS, namespace, profile)
    assert filled == off and again == off
    assert off["node"]["hazards"] == []
    graph = _trace(METHODS, namespace, profile).nodes["node"].graph.graph
    assert {facts(n).line for n in graph.nodes if facts(n).numpy and n.op != "placeholder"} - {None} == {2, 6, 7, 8}
    assert [facts(n).line for n in graph.nodes if n.op == "placeholder"] == [4]  # its input_tensors line
    spy = _count(Session, "record")
    try:
        trace = _trace(METHODS, namespace, profile)
    finally:
        spy.restore()
    assert spy.calls == 0 and snapshot(trace) == off
    helper_nodes = [n for n in trace.nodes["node"].graph.graph.nodes if facts(n).helper == "centred"]
    assert helper_nodes and {facts(n).line for n in helper_nodes} == {2}
    eager = dict(namespace, annotate=ln.annotate)
    exec(METHODS, eager)
    np.testing.assert_allclose(trace.nodes["node"](x)[0], eager["h"], rtol=1e-5, atol=1e-6)
