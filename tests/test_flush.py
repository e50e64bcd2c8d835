"""RecordingGraph.flush's loop in C (tracing/_flush.c) against its Python reference (RecordingGraph._flush_python).

The two must build the same graph from the same pending records: the same nodes in the same order, names, args,
kwargs, facts, fx's name tables and find_nodes table, and the graph's length; the C loop
must be the one running where a C compiler built it.
"""

from __future__ import annotations

import os
import shutil
import sysconfig
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from test_parity import runnable_cases
from test_replay import LOOP

import leapp_notebook as ln
from leapp_notebook.tracing import builder, replay
from leapp_notebook.tracing.facts import KEY, facts
from leapp_notebook.tracing.provenance import Pending

C_FLUSH = builder._C_FLUSH
OFF = "the C flush is off: not built (no C compiler), or LEAPP_NOTEBOOK_PURE_FLUSH=1"
needs_c = pytest.mark.skipif(C_FLUSH is None, reason=OFF)


@pytest.fixture
def python_flush(monkeypatch):
    monkeypatch.setattr(builder, "_C_FLUSH", None)


def _graph_state(graph: Any) -> dict[str, Any]:
    nodes = list(graph.nodes)
    namespace = graph._graph_namespace
    return {
        "nodes": [(n.name, n.op, n.target, str(n.args), str(n.kwargs), type(n.kwargs).__name__, facts(n))
                  for n in nodes],
        "code": graph.python_code("self").src,
        "used": sorted(namespace._used_names),
        "counts": dict(namespace._base_count),
        "names": [namespace._obj_to_name[n] for n in nodes],
        "table": {key: [n.name for n in graph.find_nodes(op=key[0], target=key[1])]
                  for key in {graph._find_nodes_lookup_table._key(n) for n in nodes}},
        "len": graph._len,
    }


def _states(trace: ln.Trace) -> dict[str, Any]:
    return {name: _graph_state(node.graph.graph) for name, node in trace.nodes.items()}


def _both(source: str, namespace: dict[str, Any], monkeypatch: pytest.MonkeyPatch, **kwargs: Any) -> tuple[Any, Any]:
    """The graphs of ``source`` traced with the C flush and with the Python one, each the cell's second trace
    (its calls replayed: every replayed op is built by the flush)."""
    results = []
    for flush in (C_FLUSH, None):
        monkeypatch.setattr(builder, "_C_FLUSH", flush)
        ln.trace_cell(source, dict(namespace), **kwargs)  # fills the recording cache
        results.append(_states(ln.trace_cell(source, dict(namespace), **kwargs)))
    return results[0], results[1]


def test_the_c_flush_is_built_where_a_c_compiler_is():
    compiler = (sysconfig.get_config_var("CC") or "cc").split()[0]
    if os.environ.get("LEAPP_NOTEBOOK_PURE_FLUSH", "") not in ("", "0"):
        pytest.skip("LEAPP_NOTEBOOK_PURE_FLUSH is set")
    if shutil.which(compiler) is None:
        pytest.skip(f"no C compiler ({compiler}) on this machine: the Python flush runs")
    assert C_FLUSH is not None, "pip install built no leapp_notebook.tracing._flush although a compiler is here"
    assert Path(builder.__file__).with_name("_flush.c").is_file()


@needs_c
def test_every_parity_case_flushes_to_the_same_graph_in_c_and_in_python(monkeypatch):
    checked = 0
    for case_, profile, inputs in runnable_cases(2, lambda row: ("leapp" if row.leapp else "full",)):
        in_c, in_python = _both(case_.source, {"np": np, **case_.consts}, monkeypatch, profile=profile,
                                inputs=inputs, outputs=list(case_.outputs))
        assert in_c == in_python, case_.source
        checked += 1
    assert checked > 300


@needs_c
@pytest.mark.parametrize("profile", ["leapp", "full"])
def test_a_loop_and_a_torch_cell_flush_to_the_same_graph(monkeypatch, profile):
    x = np.random.default_rng(0).standard_normal((4, 6)).astype(np.float32)
    in_c, in_python = _both(LOOP, {"np": np, "x": x}, monkeypatch, profile=profile)
    assert in_c == in_python
    assert len(in_c["node"]["nodes"]) > 100
    torch_cell = ("import torch\nt = torch.from_numpy(x)\nfor i in range(20):\n"
                  "    t = torch.tanh(t * 0.5 + i) - t.sum(dim=0, keepdim=True)\n"
                  "    t = t.clamp(min=-1.0, max=1.0)\ny = t.numpy()\n")
    in_c, in_python = _both(torch_cell, {"np": np}, monkeypatch, profile=profile, inputs={"x": x}, outputs=["y"])
    assert in_c == in_python


def _pending(graph: Any, op: str, target: Any, base: str | None, args: tuple[Any, ...],
             kwargs: dict[str, Any] | None = None, fix: Any = None, memo: list[Any] | None = None,
             site: Any = (1, None, None)) -> Pending:
    pending = Pending()
    state = builder.NodeFacts.__new__(builder.NodeFacts).__dict__
    pending.spec = (op, target, base, state, fix, None, memo if memo is not None else [None, None, None])
    pending.args, pending.kwargs, pending.site, pending.node = args, kwargs, site, None
    graph.log.append(pending)
    return pending


def _resolved(args: Any, kwargs: Any) -> Any:
    """A fixer: earlier pending records among the arguments become their nodes (as replay's fixers do)."""
    return tuple(a.node if isinstance(a, Pending) else a for a in args), kwargs


def _made(flush: Any, monkeypatch: pytest.MonkeyPatch, fill: Any) -> dict[str, Any]:
    monkeypatch.setattr(builder, "_C_FLUSH", flush)
    graph = builder.RecordingGraph()
    fill(graph)
    graph.flush()
    return _graph_state(graph)


@needs_c
def test_names_follow_fx_in_both(monkeypatch):
    """fx's naming: a stem used bare first, then numbered; builtins (sum, max) numbered from 1; a name taken by
    hand skipped; a target without a plain stem named by fx's namespace; names past the table of numbered names."""
    import operator

    def fill(graph: Any) -> None:
        x = graph.placeholder("x")
        graph.placeholder("add_2")  # taken by hand: the third add skips it
        prev = x
        for _ in range(4):
            prev = _pending(graph, "call_function", operator.add, "add", (prev, 1.0), fix=_resolved)
        for _ in range(3):
            prev = _pending(graph, "call_function", sum, builder.base_name("call_function", sum), (prev,),
                            fix=_resolved)
        _pending(graph, "call_function", np.add, None, (prev, 2.0), kwargs={"alpha": 2}, fix=_resolved)
        _pending(graph, "call_method", "view", "view", (prev, -1), fix=_resolved)
        for i in range(30):
            _pending(graph, "call_function", operator.mul, f"stem{i}x", (prev, 2.0), fix=_resolved)

    in_c, in_python = _made(C_FLUSH, monkeypatch, fill), _made(None, monkeypatch, fill)
    assert in_c == in_python
    names = [n[0] for n in in_c["nodes"]]
    fx_graph = torch.fx.Graph()  # fx's own names for the same calls
    prev = fx_graph.placeholder("x")
    fx_graph.placeholder("add_2")
    for target in [operator.add] * 4 + [sum] * 3:
        prev = fx_graph.call_function(target, (prev, 1.0) if target is operator.add else (prev,))
    assert names[:9] == [n.name for n in fx_graph.nodes] == ["x", "add_2", "add", "add_3", "add_4", "add_5",
                                                              "sum_1", "sum_2", "sum_3"]
    assert in_c["nodes"][9][4] == "{'alpha': 2}"


@needs_c
def test_arguments_fixed_and_kwargs_kept_in_both(monkeypatch):
    """A fixer's (args, kwargs) are the node's; an empty kwargs is the shared empty one; facts records of one site
    are shared, of two sites made once each (memo and table)."""
    import operator

    def fill(graph: Any) -> None:
        x = graph.placeholder("x")
        first = _pending(graph, "call_function", operator.neg, "neg", (x,))
        memo = [None, None, None]
        _pending(graph, "call_function", operator.add, "add", ("later",), fix=lambda a, k: ((first.node, 3.0), {}),
                 memo=memo, site=(2, None, None))
        _pending(graph, "call_function", operator.add, "add", (x, 1.0), kwargs={}, memo=memo, site=(2, None, None))
        _pending(graph, "call_function", operator.add, "add", (x, 2.0), memo=memo, site=(3, None, None))
        _pending(graph, "call_function", operator.add, "add", (x, 4.0), memo=memo, site=(2, None, None))

    for flush in (C_FLUSH, None):
        monkeypatch.setattr(builder, "_C_FLUSH", flush)
        graph = builder.RecordingGraph()
        fill(graph)
        graph.flush()
        nodes = list(graph.nodes)
        assert [n.name for n in nodes] == ["x", "neg", "add", "add_1", "add_2", "add_3"]
        assert nodes[2].args == (nodes[1], 3.0)
        assert nodes[3].kwargs is builder._NO_KWARGS and nodes[2].kwargs is builder._NO_KWARGS
        records = [n.meta[KEY] for n in nodes[2:]]
        assert records[0] is records[1] is records[3] and records[2] is not records[0]
        assert records[0]._site == (2, None, None) and records[2]._site == (3, None, None)
        assert list(nodes[1].users) == [nodes[2]]
        assert graph._len == 6


@needs_c
def test_an_error_in_the_flush_leaves_the_nodes_built_before_it_counted(monkeypatch):
    import operator

    def broken(args: Any, kwargs: Any) -> Any:
        raise RuntimeError("fixer failed")

    for flush in (C_FLUSH, None):
        monkeypatch.setattr(builder, "_C_FLUSH", flush)
        graph = builder.RecordingGraph()
        x = graph.placeholder("x")
        _pending(graph, "call_function", operator.neg, "neg", (x,))
        _pending(graph, "call_function", operator.add, "add", (x,), fix=broken)
        _pending(graph, "call_function", operator.add, "add", (x, 1.0))
        with pytest.raises(RuntimeError, match="fixer failed"):
            graph.flush()
        assert [n.name for n in graph.nodes] == ["x", "neg"]
        assert graph._len == 2 and not graph.log


def test_the_c_flush_refuses_malformed_records(monkeypatch):
    if C_FLUSH is None:
        pytest.skip(OFF)
    graph = builder.RecordingGraph()
    pending = Pending()
    pending.spec, pending.args, pending.kwargs, pending.site, pending.node = ("call_function",), (), None, None, None
    graph.log.append(pending)
    with pytest.raises(TypeError, match="7-tuple"):
        graph.flush()
    with pytest.raises(TypeError, match="5 arguments"):
        C_FLUSH([])


def test_replay_stays_on_in_these_tests():
    assert replay.ENABLED


@needs_c
def test_meta_dicts_holding_only_facts_are_not_walked_and_a_dropped_trace_is_still_freed():
    """The C flush leaves a node's meta dict untracked by the collector while it holds only the facts record (no
    cycle runs through it); anything added makes CPython track it again; a dropped trace is freed by the collector."""
    import gc
    import weakref

    x = np.random.default_rng(0).standard_normal((4, 6)).astype(np.float32)
    ln.trace_cell(LOOP, {"np": np, "x": x})
    trace = ln.trace_cell(LOOP, {"np": np, "x": x})
    graph = trace.nodes["node"].graph.graph
    built = [n for n in graph.nodes if n.op == "call_function"]
    assert len(built) > 100
    assert not any(gc.is_tracked(n.meta) for n in built)
    built[0].meta["later"] = [1]  # a pass writing meta
    assert gc.is_tracked(built[0].meta)
    gone = weakref.ref(graph)
    del trace, graph, built
    gc.collect()
    assert gone() is None


@pytest.mark.parametrize("flush", ["C", "Python"])
def test_fx_reads_the_name_map_and_the_find_nodes_table_of_built_nodes(monkeypatch, flush):
    """The flush enters its nodes in neither fx's name map nor its find_nodes table (builder._Names, _FindNodes):
    both answer for every node of the graph as if they had been entered: find_nodes, a lint, an erased node, a node
    renamed, a node fx creates after them, a name asked for a node again."""
    import operator

    if flush == "C" and C_FLUSH is None:
        pytest.skip(OFF)
    monkeypatch.setattr(builder, "_C_FLUSH", C_FLUSH if flush == "C" else None)
    graph = builder.RecordingGraph()
    x = graph.placeholder("x")
    prev = x
    for _ in range(5):
        prev = _pending(graph, "call_function", operator.add, "add", (prev, 1.0), fix=_resolved)
    _pending(graph, "call_method", "view", "view", (prev, -1), fix=_resolved)
    nodes = list(graph.nodes)  # flushes
    assert graph._find_nodes_lookup_table.stale and dict.__len__(graph._graph_namespace._obj_to_name) == 0
    assert graph.find_nodes(op="call_function", target=operator.add) == nodes[1:6]
    assert graph.find_nodes(op="call_method", target="view") == [nodes[6]]
    assert graph.find_nodes(op="placeholder") == [x]
    graph.lint()
    namespace = graph._graph_namespace
    assert all(n in namespace._obj_to_name and namespace._obj_to_name[n] == n.name for n in nodes)
    assert namespace.create_name("anything", nodes[3]) == "add_2"  # fx gives a named object its name again
    assert object() not in namespace._obj_to_name
    nodes[6].name = "flat"  # fx's rename: read from the map, written into it
    assert nodes[6].name == "flat" and namespace._obj_to_name[nodes[6]] == "flat"
    later = graph.call_function(operator.mul, (nodes[6], 2.0))  # fx's create_node after the flushed ones
    graph.output(later)
    assert graph.find_nodes(op="call_function", target=operator.mul) == [later]
    graph.erase_node(graph.find_nodes(op="output")[0])
    graph.erase_node(later)
    assert graph.find_nodes(op="call_function", target=operator.mul) == []
    graph.output(nodes[6])
    graph.lint()
    module = torch.fx.GraphModule(torch.nn.Module(), graph)
    assert torch.equal(module(torch.zeros(2, 2)), torch.full((4,), 5.0))


def test_the_pending_record_and_pend_in_either_form():
    """``provenance.Pending`` / ``pend`` (the C forms where the flush is C): fields unset raise AttributeError as the
    Python class's slots do; ``pend`` appends to the log; a record in a reference cycle is freed by the collector."""
    import gc

    from leapp_notebook.tracing import provenance

    assert (provenance.Pending.__module__ == "leapp_notebook.tracing._flush") is (C_FLUSH is not None)
    log: list = []
    spec = ("call_function", None, "add", {}, None, None, [None, None, None])
    pending = provenance.pend(log, spec, (1, 2), (3, None, None))
    assert log == [pending] and pending.spec is spec and pending.args == (1, 2) and pending.node is None
    with pytest.raises(AttributeError):
        pending.kwargs  # noqa: B018 - unset until a call with keyword arguments sets it
    pending.kwargs = {"k": 1}
    assert pending.kwargs == {"k": 1}
    assert gc.is_tracked(pending)
    import weakref

    class Marker:
        pass

    marker = Marker()
    gone = weakref.ref(marker)
    pending.args = (pending, marker)  # a cycle through the record
    del pending, log, marker
    gc.collect()
    assert gone() is None
    if C_FLUSH is not None:
        with pytest.raises(TypeError, match="pend"):
            provenance.pend((), spec, (), None)
