"""The graph model: one JSON-serializable dict per trace, the only thing the renderers read.

``graph_model(trace)`` walks each node's fx graph once (linear in nodes + edges) and writes down
what every renderer needs: vertices (inputs, ops, constants, outputs) with their NumPy call, torch op,
shape, dtype, source line and hazard marks; edges with shapes, plus dashed "not recorded" edges from
the values a baked constant was computed from outside the graph; groups of vertices by helper
function or source line (DOT clusters, collapsible HTML sections); the hazards; the last probe's
result per output; and the legend entries the graph uses. The schema is described in docs/graph.md.
"""

from __future__ import annotations

import gc
import math
import weakref
from collections import Counter
from functools import partial
from typing import Any, Callable

import torch.fx

from ..tracing.facts import NodeFacts, facts
from ..tracing.provenance import cell_lines, line_text
from .labels import call_text
from .look import CATEGORY_OF_KIND, LOOKS, PRIORITY

SCHEMA = "leapp-trace-graph/1"
MIME_TYPE = "application/vnd.leapp.trace+json"


def hazard_category(kind: str, severity: str) -> str:
    """The look of a vertex a hazard touches: a LEAPP-portability warning is amber, the rest by kind."""
    if kind == "untraced-call" and severity == "warning":
        return "portability"
    return CATEGORY_OF_KIND.get(kind, "baked")


def graph_model(trace: Any, *, compact_above: int | None = None) -> dict[str, Any]:
    """The graph model of ``trace`` (a ``Trace``); a model dict is returned as is (a model saved before
    the verdict existed gets its verdict and summary words filled in).

    ``compact_above``: a trace of more vertices than that gets its compacted model (``compact``), built as the
    graph is walked: a vertex is made only for what the compacted model shows, so a 100,000-op cell with a few
    marked vertices costs a walk of its fx graph, not 100,000 vertex dicts folded afterwards. The result is equal to
    ``compact(graph_model(trace))``. The notebook output, the widget and ``mimebundle`` pass
    ``MODEL_COMPACT_ABOVE``."""
    if isinstance(trace, dict):
        if "verdict" not in trace or "text" not in trace["summary"]:
            _say(trace)
        return trace
    # A model holds a few dozen small dicts and lists per vertex, and nothing in it forms a reference cycle: the
    # cyclic collector's passes over them (and, as they pile up, over the whole process) cost as much as building
    # them, more with every vertex (about half the time at 20,000 ops). It stays off while the model is built.
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _graph_model(trace, compact_above)
    finally:
        if collecting:
            gc.enable()


def drawn_model(trace: Any, *, folds_above: int, per_node: bool = False) -> dict[str, Any]:
    """The model a renderer that folds a graph of more than ``folds_above`` vertices (each node's vertices, with
    ``per_node``) draws ``trace`` from: its compacted model when the drawing folds everything and the trace is above
    ``MODEL_COMPACT_ABOVE`` vertices, its full model otherwise. A renderer draws a compacted model as it draws its
    own fold of the full one (``tests/test_bounded_output.py`` compares them), so ``print(trace)`` and
    ``trace.to_dot()`` of a 100,000-op cell cost a walk of its graph, not 100,000 vertex dicts folded afterwards.
    A model dict is returned as is."""
    if isinstance(trace, dict):
        return graph_model(trace)
    counts = [_vertices_of(node) for node in trace.nodes.values()]
    folded = all(count > folds_above for count in counts) if per_node else sum(counts) > folds_above
    return graph_model(trace, compact_above=MODEL_COMPACT_ABOVE if folded else None)


def _graph_model(trace: Any, compact_above: int | None) -> dict[str, Any]:
    hazards = [dict(h.to_dict(), id=i, category=hazard_category(h.kind, h.severity))
               for i, h in enumerate(trace.hazards)]
    if hazards:  # one-click fixes: LibCST (a third of a second to import) loads only for a trace that has hazards
        from ..fixes import edits

        for hazard, edit in zip(hazards, edits(trace), strict=True):
            if edit is not None:
                hazard["edit"] = edit.to_dict()
    probe = _probe_model(getattr(trace, "last_probe", None))
    lines = cell_lines(trace.source)
    total = sum(_vertices_of(node) for node in trace.nodes.values())
    compacting = compact_above is not None and total > compact_above
    build = _compact_node_model if compacting else _node_model
    nodes = []
    used = {"input", "op", "output"}
    for index, node in enumerate(trace.nodes.values()):
        node_model, categories = build(index, node, hazards, probe, lines)
        nodes.append(node_model)
        used |= categories
    severities = Counter(h["severity"] for h in hazards)
    model = {
        "schema": SCHEMA,
        "profile": trace.profile,
        "ok": bool(trace.ok),
        "summary": {
            "nodes": len(nodes),
            "ops": sum(node["ops"] for node in nodes),
            "errors": severities.get("error", 0),
            "warnings": severities.get("warning", 0),
            "probe": None if probe is None else ("passed" if probe["passed"] else "failed"),
        },
        "source": trace.source,
        "nodes": nodes,
        "hazards": hazards,
        "probe": probe,
        "export": None,
        "legend": _legend(used - {"collapsed"}),
    }
    _say(model)
    if compacting:  # as compact() leaves it: the collapsed look last, the full model's size said
        model["legend"].append(LOOKS["collapsed"].to_dict())
        model["compacted"] = {"vertices": total, "shown": vertex_count(model)}
    return _encodable(model)


def _legend(categories: set[str]) -> list[dict[str, Any]]:
    return [LOOKS[c].to_dict() for c in LOOKS if c in categories]


def _vertices_of(node: Any) -> int:
    """How many vertices a node's full model has: one per fx node, the output node's replaced by one per output."""
    graph = node.graph.graph
    output = next(iter(reversed(graph.nodes)), None)
    if output is None or output.op != "output":
        return len(graph.nodes)
    values = output.args[0] if output.args else ()
    shown = len(values) if isinstance(values, (tuple, list)) else 1
    return len(graph.nodes) - 1 + min(shown, len(node.outputs))


# What a node's vertices, edges and groups hold is text this module writes itself, fx's node names (always
# identifiers), the cell's own lines (trace_cell refuses a cell with a lone surrogate) and the recorded facts'
# strings, which _node_model passes through _text. Everything else in the model is walked by _encodable.
_CLEAN_BY_CONSTRUCTION = frozenset({"vertices", "edges", "groups"})


def _encodable(model: dict[str, Any]) -> dict[str, Any]:
    """Strings a front end can receive: lone surrogates (possible in Python names and cell text) replaced, not
    raised later as UnicodeEncodeError while the bundle is sent. A node's vertices, edges and groups are clean by
    construction (``_CLEAN_BY_CONSTRUCTION``, ``_text``): walking them would cost as much as building them."""
    out = {}
    for key, value in model.items():
        if key == "nodes":
            out[key] = [{k: v if k in _CLEAN_BY_CONSTRUCTION else _replaced(v) for k, v in node.items()}
                        for node in value]
        else:
            out[key] = _replaced(value)
    return out


def _text(value: str | None) -> str | None:
    """A recorded string as a front end can receive it (see ``_encodable``); ASCII, the common case, as it is."""
    if value is None or value.isascii():
        return value
    return value.encode("utf-8", "replace").decode("utf-8")


def _replaced(value: Any) -> Any:
    """``value`` with every lone surrogate in its strings replaced (a copy of its dicts and lists)."""
    if isinstance(value, str):
        return _text(value)
    if isinstance(value, dict):
        return {key: _replaced(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_replaced(item) for item in value]
    return value


def _say(model: dict[str, Any]) -> None:
    """Write the words every renderer shows: ``summary.text`` and ``verdict``."""
    model["summary"]["text"] = summary_text(model["summary"])
    model["verdict"] = verdict(model)


def _count(n: int, word: str) -> str:
    return f"{n} {word}{'s' * (n != 1)}"


def summary_text(summary: dict[str, Any]) -> str:
    """``1 node · 3 ops · ✖ 1 error · ⚠ 0 warnings · probe: not run``."""
    probe = {None: "not run", "passed": "✔ passed", "failed": "✖ FAILED"}[summary["probe"]]
    return (f"{_count(summary['nodes'], 'node')} · {summary['ops']} ops · ✖ {_count(summary['errors'], 'error')}"
            f" · ⚠ {_count(summary['warnings'], 'warning')} · probe: {probe}")


def verdict(model: dict[str, Any]) -> dict[str, str]:
    """Whether the trace may be exported as is: ``{"state": "error" | "warning" | "ok", "text": ...}``.

    ``error``: an error hazard stands or the probe failed (export refuses). ``warning``: no error, but
    warnings to read. ``ok``: neither. The text says why and, until a probe has passed, asks for one.
    Renderers put the state's icon (``look.VERDICT_ICON``) before the text.
    """
    summary = model["summary"]
    errors, warnings, probe = summary["errors"], summary["warnings"], summary["probe"]
    if errors or probe == "failed" or not model.get("ok", True):
        reasons = [_count(errors, "error hazard")] if errors else []
        if probe == "failed":
            reasons.append("the probe failed")
        return {"state": "error", "text": "not exportable as is" + (": " + ", ".join(reasons) if reasons else "")}
    confirm = "probe to confirm" if probe is None else ""
    if warnings:
        to_read = f"{_count(warnings, 'warning')} to read"
        text = f"no error hazards; {to_read}; {confirm}" if confirm else f"ready to export; {to_read}"
        return {"state": "warning", "text": text}
    if confirm:
        return {"state": "ok", "text": f"no hazards; {confirm}"}
    return {"state": "ok", "text": "ready to export: no hazards, the probe passed"}


_ROLES = {"placeholder": "input", "get_attr": "constant", "call_module": "module"}


def _node_context(node: Any, hazards: list[dict[str, Any]], probe: dict[str, Any] | None
                  ) -> tuple[dict[str, list[int]], dict[str, dict[str, Any]], dict[str, list[str]]]:
    """What a node's vertices read besides their facts: the hazards marking each fx node (by name), the probe's
    checks of the node's outputs, and the outputs the probe found each constant baked into."""
    marks: dict[str, list[int]] = {}
    for hazard in hazards:
        if hazard["node"] == node.name:
            for name in hazard["graph_nodes"]:
                marks.setdefault(name, []).append(hazard["id"])
    probe_outputs = _probe_outputs(probe, node.name)
    baked_by_probe: dict[str, list[str]] = {}
    for output, check in probe_outputs.items():
        for const in check.get("baked_constants", ()):
            baked_by_probe.setdefault(const, []).append(output)
    return marks, probe_outputs, baked_by_probe


def _vertex(prefix: str, node: Any, fx: Any, info: NodeFacts, marks: dict[str, list[int]],
            baked_by_probe: dict[str, list[str]], hazards: list[dict[str, Any]], lines: list[str]) -> dict[str, Any]:
    """The vertex of a (non-output) fx node."""
    role = _ROLES.get(fx.op, "op")
    shape, dtype = _shape_dtype(info)
    line = info.line
    vertex: dict[str, Any] = {
        "id": prefix + fx.name,
        "name": fx.name,
        "role": role,
        "numpy": _text(info.numpy) or fx.name,
        "torch": _text(info.torch or str(fx.target)),
        "line": line,
        "helper": _text(info.helper),
        "location": _text(info.location),
        "shape": shape,
        "dtype": dtype,
        "kind": info.kind,
        "cast": info.cast,
        "hazards": marks.get(fx.name, []),
        "group": None,
    }
    if info.module is not None:
        first = fx.args[0] if fx.args else None
        in_shape = facts(first).shape if isinstance(first, torch.fx.Node) else None
        vertex["module"] = _replaced({
            "name": info.module.name, "type": info.module.type, "params": info.module.params,
            "training": info.module.training, "in_shape": list(in_shape) if in_shape is not None else None,
            "ops": module_ops(node.graph.get_submodule(info.module.name))})
    if role == "constant":
        vertex.update(constant=info.const or "genuine", origin=_text(info.origin),
                      preview=_replaced([_json_number(v) for v in info.preview]),
                      code=line_text(lines, line))
        if fx.name in baked_by_probe:
            vertex["probe_baked"] = baked_by_probe[fx.name]
    vertex["category"] = _category(vertex, hazards)
    return vertex


def _node_model(index: int, node: Any, hazards: list[dict[str, Any]], probe: dict[str, Any] | None,
                lines: list[str]) -> tuple[dict[str, Any], set[str]]:
    """A node's full model, and the categories of its vertices (for the legend)."""
    prefix = f"{index}/"
    marks, probe_outputs, baked_by_probe = _node_context(node, hazards, probe)
    vertices: list[dict[str, Any]] = []
    edges: list[dict[str, Any]] = []
    ids: dict[str, dict[str, Any]] = {}
    groups: list[dict[str, Any]] = []
    ops = 0
    for fx in node.graph.graph.nodes:
        if fx.op == "output":
            for vertex, producer in _output_vertices(prefix, node, fx, ids, marks, hazards, probe_outputs):
                vertices.append(vertex)
                if producer is not None:
                    edges.append(_edge(ids[producer], vertex, "data"))
            continue
        info = facts(fx)
        vertex = _vertex(prefix, node, fx, info, marks, baked_by_probe, hazards, lines)
        role = vertex["role"]
        ops += role in ("op", "module")
        ids[fx.name] = vertex
        vertices.append(vertex)
        for source in fx.all_input_nodes:
            edges.append(_edge(ids[source.name], vertex, "data"))
        for source_name in info.sources:
            if source_name in ids:
                edges.append(_edge(ids[source_name], vertex, "not-recorded"))
        if role != "input":
            _add_to_group(groups, prefix, vertex, lines)
    for group in groups:
        _finish_group(group)
    model = _node_entry(index, node, ops, hazards, vertices, edges, groups)
    return model, {v["category"] for v in vertices}


def _node_entry(index: int, node: Any, ops: int, hazards: list[dict[str, Any]], vertices: list[dict[str, Any]],
                edges: list[dict[str, Any]], groups: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "index": index,
        "name": node.name,
        "export_with": getattr(node, "export_with", "jit"),
        "inputs": [_spec(s) for s in node.inputs],
        "outputs": [_spec(s) for s in node.outputs],
        "ops": ops,
        "vertices": vertices,
        "edges": edges,
        "groups": groups,
        "hazards": [h["id"] for h in hazards if h["node"] == node.name],
    }


def _compact_node_model(index: int, node: Any, hazards: list[dict[str, Any]], probe: dict[str, Any] | None,
                        lines: list[str]) -> tuple[dict[str, Any], set[str]]:
    """``_compact_node`` of the node's full model, made without that model: a vertex is made only for what is marked
    or stays visible (inputs, outputs, ops of no line, the one hidden vertex of a group that ``fold`` shows whole);
    every other op is a tuple counted towards its stretch's collapsed vertex. Same result, vertex for vertex and edge
    for edge (the tests compare the two on every kind of trace).

    One walk of the fx graph lists the grouped ops and where each group starts, deciding which marked vertices are
    shown as ``MarkBudget`` does; a second pass over the groups folds them as ``fold`` does (a group with a shown vertex
    shows those and one collapsed vertex for the rest, consecutive groups without one become one collapsed vertex);
    the edges are then redirected to what stands for their ends."""
    prefix = f"{index}/"
    marks, probe_outputs, baked_by_probe = _node_context(node, hazards, probe)
    loose: list[dict[str, Any]] = []  # vertices of no group: the compacted node's first
    members: list[tuple[Any, ...]] = []  # the grouped ops, in order: (the vertex if shown, fx node, facts, vertex id,
    # call text or None for a constant, the vertex if marked)
    starts: list[list[Any]] = []  # per group: [first member, helper, line, a vertex shown, hidden constants,
    # helper lines, a vertex marked]
    links: list[tuple[Any, str, str]] = []  # (source fx node, target vertex id, kind), in the full model's order
    used: set[str] = set()
    ops = 0
    key: Any = _NO_GROUP  # the open group's: its helper's name, or its line
    budget = MarkBudget()
    made = partial(_vertex, prefix, node, marks=marks, baked_by_probe=baked_by_probe, hazards=hazards, lines=lines)
    order: dict[str, tuple[int, Any]] | None = None  # fx name -> (position, node), made if a baked value names sources
    for position, fx in enumerate(node.graph.graph.nodes):
        op = fx.op
        if op == "output":
            values = fx.args[0] if fx.args else ()
            # the full model looks the producers up among the vertices made so far: every other node of the graph
            known = {v.name: v for v in (values if isinstance(values, (tuple, list)) else (values,))
                     if isinstance(v, torch.fx.Node) and v.graph is fx.graph and v is not fx}
            for vertex, producer in _output_vertices(prefix, node, fx, known, marks, hazards, probe_outputs):
                loose.append(vertex)
                used.add(vertex["category"])
                if producer is not None:
                    links.append((known[producer], vertex["id"], "data"))
            continue
        info = facts(fx)
        name = fx.name
        vertex_id = prefix + name
        for source in fx.all_input_nodes:
            links.append((source, vertex_id, "data"))
        if info.sources:  # the full model draws these from the vertices made so far, this one included
            if order is None:
                order = {f.name: (at, f) for at, f in enumerate(node.graph.graph.nodes)}
            for source_name in info.sources:
                found = order.get(source_name)
                if found is not None and found[0] <= position:
                    links.append((found[1], vertex_id, "not-recorded"))
        role = _ROLES.get(op, "op")
        if role != "constant" and role != "input":
            ops += 1
        helper = info.helper
        if helper and not helper.isascii():
            helper = _text(helper)
        line = info.line
        group = None if role == "input" else helper if helper else line  # str and int never compare equal
        if role == "module" or name in marks or (
                role == "constant" and (info.const == "baked" or name in baked_by_probe)):
            marked = made(fx, info)
            used.add(marked["category"])
            if group is None:
                loose.append(marked)
                continue
            vertex = marked if budget.take(marked) else None
        elif group is None:
            vertex = made(fx, info)
            used.add(vertex["category"])
            loose.append(vertex)
            continue
        else:
            vertex = marked = None
        if group != key:
            key = group
            starts.append([len(members), helper, line, False, 0, None, False])
        current = starts[-1]
        if marked is not None:
            current[6] = True
            if vertex is not None:
                current[3] = True
        if helper and line is not None:
            if current[5] is None:
                current[5] = []
            _widen(current[5], line, line)
        if role == "constant":
            call = None
            if vertex is None:
                current[4] += 1
                if marked is None:
                    used.add("constant")
        elif marked is not None:
            call = call_text(marked)
        elif info.cast:
            call = f"cast to {_shape_dtype(info)[1]}"
        else:
            call = info.numpy
            call = (call if call.isascii() else _text(call)) if call else name
        members.append((vertex, fx, info, vertex_id, call, marked))

    shown, groups, rep = _fold_members(prefix, members, starts, lines, made, used)
    edges, seen = [], set()
    for source, target, kind in links:
        source_id = prefix + source.name
        source_id, target = rep.get(source_id, source_id), rep.get(target, target)
        link = (source_id, target, kind)
        if source_id == target or link in seen:
            continue
        seen.add(link)
        shape, dtype = _shape_dtype(facts(source))
        edges.append({"source": source_id, "target": target, "shape": shape, "dtype": dtype, "kind": kind})
    return _node_entry(index, node, ops, hazards, loose + shown, edges, groups), used


_NO_GROUP = object()


def _fold_members(prefix: str, members: list[tuple[Any, ...]], starts: list[list[Any]], lines: list[str],
                  made: Callable[[Any, NodeFacts], dict[str, Any]], used: set[str]
                  ) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, str]]:
    """``fold`` (with ``MarkBudget``) and ``_compact_node`` over the groups ``_compact_node_model`` listed: the vertices
    shown, the compacted groups, and the collapsed vertex that stands for each hidden vertex (by id)."""
    shown: list[dict[str, Any]] = []
    groups: list[dict[str, Any]] = []
    rep: dict[str, str] = {}
    run: list[int] = []  # consecutive groups with nothing shown, by index

    def marked_in(begin: int, end: int) -> list[int]:
        return sorted({h for i in range(begin, end) if members[i][5] is not None for h in members[i][5]["hazards"]})

    def entry(g: int, begin: int, end: int) -> dict[str, Any]:
        """Group ``g``'s entry as ``_add_to_group`` and ``_finish_group`` leave it."""
        _, helper, line, _, _, span, marked = starts[g]
        out: dict[str, Any] = {"id": f"{prefix}g{g}", "kind": "helper" if helper else "line", "helper": helper,
                               "line": line, "code": line_text(lines, line) if not helper else "", "vertices": []}
        if span is not None:
            out["lines"] = span
        calls = Counter(members[i][4] for i in range(begin, end) if members[i][4] is not None)
        out.update(ops=sum(calls.values()), summary=_top_calls(calls), marked=marked,
                   hazards=marked_in(begin, end) if marked else [])
        _label_group(out)
        return out

    def collapse(first: dict[str, Any], hidden: list[int], constants: int) -> str:
        summary_id = f"summary:{first['id']}"
        calls = Counter(members[i][4] for i in hidden if members[i][4] is not None)
        shown.append(_collapsed_vertex(summary_id, first, first["id"], sum(calls.values()), _top_calls(calls),
                                       len(hidden), constants, sum(members[i][5] is not None for i in hidden)))
        used.add("collapsed")
        for i in hidden:
            rep[members[i][3]] = summary_id
        return summary_id

    def bounds(g: int) -> tuple[int, int]:
        return starts[g][0], starts[g + 1][0] if g + 1 < len(starts) else len(members)

    def close_run() -> None:
        if not run:
            return
        begin, end = starts[run[0]][0], bounds(run[-1])[1]
        first = entry(run[0], begin, bounds(run[0])[1])
        span = _Span()
        for g in run:
            _, helper, line, _, _, lines_of, _ = starts[g]
            span.add_parts("helper" if helper else "line", line, lines_of, helper)
        constants = sum(starts[g][4] for g in run)
        summary_id = collapse(first, list(range(begin, end)), constants)
        marked = any(starts[g][6] for g in run)
        groups.append(dict(first, label=first["label"] if len(run) == 1 else span.label(), vertices=[summary_id],
                           ops=(end - begin) - constants, marked=marked,
                           hazards=marked_in(begin, end) if marked else []))
        run.clear()

    for g, start in enumerate(starts):
        if not start[3]:
            run.append(g)
            continue
        close_run()
        begin, end = bounds(g)
        hidden = [i for i in range(begin, end) if members[i][0] is None]
        if len(hidden) == 1:  # fold shows the whole group rather than one vertex folded away
            (i,) = hidden
            _, fx, info, vertex_id, call, marked = members[i]
            members[i] = (marked if marked is not None else made(fx, info), fx, info, vertex_id, call, marked)
            hidden = []
        group = entry(g, begin, end)
        vertices = []
        for i in range(begin, end):
            vertex = members[i][0]
            if vertex is not None:
                vertex["group"] = group["id"]
                shown.append(vertex)
                vertices.append(vertex["id"])
        if hidden:
            vertices.append(collapse(group, hidden, start[4]))
        groups.append(dict(group, vertices=vertices))
    close_run()
    return shown, groups, rep


MODULE_OPS_SHOWN = 200
_MODULE_OPS: weakref.WeakKeyDictionary[Any, list[dict[str, str]] | None] = weakref.WeakKeyDictionary()


def module_ops(module: Any) -> list[dict[str, str]] | None:
    """The ops inside an nn.Module node, for renderers that expand it: torch.fx's symbolic trace of the module
    (``{"name", "op", "target"}`` each, at most MODULE_OPS_SHOWN); None when fx cannot trace it (control flow on
    values, say)."""
    if module in _MODULE_OPS:  # the model is rebuilt on every display and probe: trace each module once
        return _MODULE_OPS[module]
    try:
        traced = torch.fx.symbolic_trace(module)
    except Exception:  # noqa: BLE001 - any module fx cannot trace: shown folded, not expandable
        _MODULE_OPS[module] = None
        return None
    ops = []
    for n in traced.graph.nodes:
        if n.op in ("placeholder", "output"):
            continue
        target = n.target if isinstance(n.target, str) else getattr(n.target, "__name__", str(n.target))
        kind = type(traced.get_submodule(n.target)).__name__ if n.op == "call_module" else n.op
        ops.append({"name": n.name, "op": n.op, "target": target, "type": kind})
        if len(ops) == MODULE_OPS_SHOWN:
            break
    _MODULE_OPS[module] = ops
    return ops


def _output_vertices(prefix: str, node: Any, fx: Any, known: dict[str, Any], marks: dict[str, list[int]],
                     hazards: list[dict[str, Any]], probe_outputs: dict[str, dict[str, Any]]
                     ) -> list[tuple[dict[str, Any], str | None]]:
    """One vertex per node output (the fx output node returns them as one tuple), each with the name of the fx node
    that computes it (None for a value that is no vertex of the node; ``known``: the node's fx names so far)."""
    values = fx.args[0] if fx.args else ()
    if not isinstance(values, (tuple, list)):
        values = (values,)
    vertices = []
    for spec, value in zip(node.outputs, values, strict=False):
        producer = getattr(value, "name", None)
        if producer not in known:
            producer = None
        vertex = {
            "id": f"{prefix}out:{spec.name}",
            "name": spec.name,
            "role": "output",
            "numpy": "output",
            "torch": "output",
            "line": facts(fx).line,
            "helper": None,
            "location": None,
            "shape": list(spec.shape),
            "dtype": spec.dtype,
            "cast": False,
            "hazards": [i for i in (marks.get(producer, ()) if producer is not None else ())
                        if hazards[i]["kind"] == "untraced-output"],
            "group": None,
            "probe": _replaced(probe_outputs.get(spec.name)),
        }
        vertex["category"] = _category(vertex, hazards)
        vertices.append((vertex, producer))
    return vertices


def _category(vertex: dict[str, Any], hazards: list[dict[str, Any]]) -> str:
    found = {hazards[i]["category"] for i in vertex["hazards"]}
    if vertex.get("constant") == "baked":
        found.add("baked")
    for category in PRIORITY:
        if category in found:
            return category
    if vertex["role"] == "constant":
        return "constant"
    return vertex["role"]


def call_summary(vertices: list[dict[str, Any]]) -> tuple[int, int, str]:
    """(ops, constants, the three most frequent calls) of a set of vertices: ``np.add ×20, np.mul, …``."""
    calls = Counter(call_text(v) for v in vertices if v["role"] in ("op", "module"))
    return sum(calls.values()), sum(v["role"] == "constant" for v in vertices), _top_calls(calls)


def _top_calls(calls: Counter[str]) -> str:
    top = ", ".join(f"{name} ×{count}" if count > 1 else name for name, count in calls.most_common(3))
    return top + (", …" if len(calls) > 3 else "")


def severity_of(vertex: dict[str, Any], hazards: list[dict[str, Any]]) -> str | None:
    """The most serious severity among the hazards marking ``vertex`` (None when unmarked)."""
    severities = {hazards[i]["severity"] for i in vertex["hazards"]}
    if "error" in severities:
        return "error"
    if severities:
        return "warning"
    return "error" if vertex.get("constant") == "baked" else None


def is_marked(vertex: dict[str, Any]) -> bool:
    """Whether a vertex carries something the user must see (it stays visible when its group collapses)."""
    probe = vertex.get("probe")
    return bool(vertex["hazards"]) or vertex["category"] not in ("op", "constant") \
        or bool(vertex.get("probe_baked")) or (probe is not None and not probe.get("passed", True))


def _edge(source: dict[str, Any], target: dict[str, Any], kind: str) -> dict[str, Any]:
    return {"source": source["id"], "target": target["id"], "shape": source["shape"],
            "dtype": source["dtype"], "kind": kind}


def _add_to_group(groups: list[dict[str, Any]], prefix: str, vertex: dict[str, Any],
                  lines: list[str]) -> None:
    """Put ``vertex`` in the current group when it comes from the same helper or line, else open a group.

    Groups are runs of consecutive graph nodes, so a helper called twice, or a line run by a loop,
    gives one group per call or pass: clusters then follow the data flow instead of folding it back.
    """
    helper, line = vertex["helper"], vertex["line"]
    if helper:
        key: tuple[str, Any] = ("helper", helper)
    elif line is not None:
        key = ("line", line)
    else:
        return
    group = groups[-1] if groups and groups[-1]["key"] == key else None
    if group is None:
        group = {
            "id": f"{prefix}g{len(groups)}",
            "key": key,
            "kind": key[0],
            "helper": helper,
            "line": line,
            "code": line_text(lines, line) if not helper else "",
            "vertices": [],
            "members": [],
        }
        groups.append(group)
    group["vertices"].append(vertex["id"])
    group["members"].append(vertex)
    vertex["group"] = group["id"]
    if helper and line is not None:
        _widen(group.setdefault("lines", []), line, line)


def _finish_group(group: dict[str, Any]) -> None:
    members = group.pop("members")
    del group["key"]
    group["ops"], _, group["summary"] = call_summary(members)
    group["marked"] = any(is_marked(v) for v in members)
    group["hazards"] = sorted({i for v in members for i in v["hazards"]})
    _label_group(group)


def _label_group(group: dict[str, Any]) -> None:
    if group["kind"] == "helper":
        span = group.get("lines")
        where = "" if span is None else f" · line {span[0]}" if span[0] == span[1] \
            else f" · lines {span[0]}–{span[1]}"
        group["label"] = f"{group['helper']}(){where}"
    else:
        group["label"] = f"line {group['line']}: {group['code'].strip()}"


def _shape_dtype(info: NodeFacts) -> tuple[list[int] | None, str | None]:
    if info.graph_shape is not None:
        return list(info.graph_shape), info.graph_dtype
    return (list(info.shape) if info.shape is not None else None), info.dtype


def _spec(spec: Any) -> dict[str, Any]:
    return {"name": spec.name, "shape": list(spec.shape), "dtype": str(spec.dtype)}


def _json_number(value: Any) -> Any:
    """A value JSON can hold: non-finite floats and complex numbers become strings."""
    if isinstance(value, bool) or value is None or isinstance(value, int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    try:
        number = float(value)
    except (TypeError, ValueError):
        return str(value)
    return number if math.isfinite(number) else str(number)


# ------------------------------------------------------------------------------------------
# the probe report (read defensively: probe.py owns its shape)
# ------------------------------------------------------------------------------------------

def _probe_model(report: Any) -> dict[str, Any] | None:
    """The last probe's result (``ProbeReport.to_dict``): ``outputs`` keyed like the report (output name,
    or ``node/output``)."""
    return None if report is None else report.to_dict()


def _probe_outputs(probe: dict[str, Any] | None, node: str) -> dict[str, dict[str, Any]]:
    """The probe's checks of ``node``'s outputs, by output name (keys are ``output`` or ``node/output``)."""
    if probe is None:
        return {}
    found = {}
    for key, check in probe["outputs"].items():
        owner, slash, output = key.rpartition("/")
        if slash and owner == node:
            found[output] = check
        elif not slash:
            found.setdefault(key, check)
    return found


def fold(node: dict[str, Any], keep: Callable[[dict[str, Any]], bool],
         collapse: bool) -> list[dict[str, Any]]:
    """A node's groups as a renderer lays them out: items ``{"id", "label", "shown", "hidden", "groups"}``.

    Without ``collapse`` every group shows all its vertices. With it, a group shows the vertices
    ``keep`` accepts and hides the rest (as one summary), and consecutive groups that show nothing
    merge into one item, so a long unmarked stretch of a cell becomes one box or one line.
    """
    by_id = {v["id"]: v for v in node["vertices"]}
    items: list[dict[str, Any]] = []
    run: list[dict[str, Any]] = []

    def close_run() -> None:
        if run:
            hidden = [by_id[i] for group in run for i in group["vertices"]]
            label = run[0]["label"] if len(run) == 1 else _span_label(run)
            items.append({"id": run[0]["id"], "label": label, "shown": [], "hidden": hidden,
                          "groups": list(run)})
            run.clear()

    for group in node["groups"]:
        members = [by_id[i] for i in group["vertices"]]
        shown = [v for v in members if keep(v)] if collapse else members
        if not shown:
            run.append(group)
            continue
        close_run()
        shown_ids = {v["id"] for v in shown}
        hidden = [v for v in members if v["id"] not in shown_ids]
        if len(hidden) == 1:
            shown, hidden = members, []
        items.append({"id": group["id"], "label": group["label"], "shown": shown, "hidden": hidden,
                      "groups": [group]})
    close_run()
    return items


def _span_label(groups: list[dict[str, Any]]) -> str:
    span = _Span()
    for group in groups:
        span.add(group)
    return span.label()


class _Span:
    """The label of consecutive groups folded into one item (``lines 4–9 (with smooth())``), kept as they come."""

    __slots__ = ("groups", "lines", "helper_lines", "helpers")

    def __init__(self) -> None:
        self.groups = 0
        self.lines: list[int] = []  # low, high over the groups of a line
        self.helper_lines: list[int] = []  # low, high over the helper calls' lines
        self.helpers: set[str] = set()

    def add(self, group: dict[str, Any]) -> None:
        self.add_parts(group["kind"], group["line"], group.get("lines"), group["helper"])

    def add_parts(self, kind: str, line: int | None, lines: list[int] | None, helper: str | None) -> None:
        self.groups += 1
        if kind == "line":
            _widen(self.lines, line, line)
        elif lines is not None:
            _widen(self.helper_lines, *lines)
        if helper:
            self.helpers.add(helper)

    def label(self) -> str:
        lines = self.lines or self.helper_lines
        where = f"lines {lines[0]}–{lines[1]}" if lines else f"{self.groups} groups"
        helpers = sorted(self.helpers)
        return where + (f" (with {', '.join(h + '()' for h in helpers)})" if helpers else "")


def _widen(span: list[int], low: int, high: int) -> None:
    """Widen ``span`` (``[]`` or ``[low, high]``) in place to cover ``low``..``high``."""
    if span:
        span[0], span[1] = min(span[0], low), max(span[1], high)
    else:
        span[:] = [low, high]


def hazard_vertices(model: dict[str, Any], hazard_id: int) -> list[str]:
    """The vertex ids a hazard marks (what the widget highlights when its row is selected)."""
    hazard = model["hazards"][hazard_id]
    return [v["id"] for node in model["nodes"] if node["name"] == hazard["node"]
            for v in node["vertices"] if hazard_id in v["hazards"]]


def export_entry(*, files: Any = None, error: BaseException | None = None) -> dict[str, Any]:
    """The model's ``export`` entry for an export that wrote ``files`` or raised ``error``.

    ``{"state": "written" | "refused" | "failed", "files": [...], "message": ...}``: ``refused`` is an
    ``ExportBlocked`` (an error hazard, a failed probe, a filesystem failure: nothing written),
    ``failed`` any other error (a missing onnx extra, a bad directory).
    """
    if error is None:
        names = [str(path) for path in files or ()]
        return {"state": "written", "files": names,
                "message": f"exported {len(names)} file{'s' * (len(names) != 1)}"}
    from ..tracing.types import ExportBlocked

    refused = isinstance(error, ExportBlocked)
    reason = str(error).strip() or type(error).__name__
    if refused:
        # export's own message may already say it refused: say it once
        message = reason if reason.lower().startswith(("export refused", "export failed")) \
            else f"export refused: {reason}"
    else:
        message = f"export failed: {type(error).__name__}: {reason}"
    return {"state": "refused" if refused else "failed", "files": [], "message": message}


# ------------------------------------------------------------------------------------------
# bounded output
# ------------------------------------------------------------------------------------------

# Vertices above which the mime bundle's static renderings (SVG, HTML, text) are drawn from the compacted model,
# and above which the JSON model itself is compacted: up to MODEL_COMPACT_ABOVE the live graph in JupyterLab can
# still unfold every group; either way the bundle stays well under 2 MB.
COMPACT_ABOVE = 600
MODEL_COMPACT_ABOVE = 3000


def vertex_count(model: dict[str, Any]) -> int:
    return sum(len(node["vertices"]) for node in model["nodes"])


def compact(model: dict[str, Any]) -> dict[str, Any]:
    """The model with every unmarked stretch of each node folded into one ``collapsed`` vertex (what the DOT
    renderer draws for a large graph): marked vertices, inputs and outputs stay, edges are redirected to the
    summaries. Its size follows the number of marked vertices and groups, not the number of ops, so a
    100,000-op cell's output stays small; ``model["compacted"]`` says how many vertices the full model has
    (``Trace.save_graph_model`` writes it). A compacted model is returned as is."""
    if "compacted" in model:
        return model
    nodes = [_compact_node(node) for node in model["nodes"]]
    out = dict(model, nodes=nodes)
    out["compacted"] = {"vertices": vertex_count(model), "shown": vertex_count(out)}
    if not any(entry["category"] == "collapsed" for entry in model["legend"]):
        out["legend"] = model["legend"] + [LOOKS["collapsed"].to_dict()]
    return out


# A compacted node shows the vertices of one mark (same category, same hazards, same line: a hazard's, a baked
# constant's, a module call's) this many times; the rest fold into the collapsed vertices beside the unmarked ops,
# which count them ("marked"). A hazard on a line a loop runs marks a vertex on every pass: 5,000 passes made a
# 50 MB bundle that took minutes to draw. The hazard table lists each hazard once, whatever it marks.
MARKED_SHOWN = 3


class MarkBudget:
    """``fold``'s ``keep`` for a compacted node, and for the renderers' folds of a large one (one per node, called in
    the node's order): a marked vertex among the first ``MARKED_SHOWN`` of its mark. A collapsed vertex (of a model
    compacted already) is always kept."""

    __slots__ = ("counts",)

    def __init__(self) -> None:
        self.counts: dict[tuple[Any, ...], int] = {}

    def __call__(self, vertex: dict[str, Any]) -> bool:
        return is_marked(vertex) and self.take(vertex)

    def take(self, vertex: dict[str, Any]) -> bool:
        """Whether the marked ``vertex`` is shown (and, if so, count it)."""
        if vertex["role"] == "collapsed":
            return True
        key = (vertex["category"], tuple(vertex["hazards"]), vertex["line"])
        shown = self.counts.get(key, 0)
        if shown >= MARKED_SHOWN:
            return False
        self.counts[key] = shown + 1
        return True


def _collapsed_vertex(summary_id: str, first: dict[str, Any], item: str, ops: int, top: str, hidden: int,
                      constants: int, marked: int) -> dict[str, Any]:
    """The vertex standing for the ``hidden`` vertices of a fold item (``first``: its first group)."""
    return {
        "id": summary_id, "name": f"{ops} ops" + (f" · {marked} marked" if marked else ""), "role": "collapsed",
        "numpy": top, "torch": "", "line": first["line"], "helper": first["helper"], "location": None,
        "shape": None, "dtype": None, "kind": "numpy", "cast": False, "hazards": [], "group": item,
        "category": "collapsed", "hidden": hidden, "constants": constants, "marked": marked,
    }


def folded_counts(vertex: dict[str, Any]) -> tuple[int, int, int, str]:
    """What a collapsed vertex stands for, as ``call_summary`` and ``is_marked`` say it of the vertices it hides:
    (ops, constants, marked, the most frequent calls)."""
    return vertex["hidden"] - vertex["constants"], vertex["constants"], vertex.get("marked", 0), vertex["numpy"]


def _compact_node(node: dict[str, Any]) -> dict[str, Any]:
    vertices = [v for v in node["vertices"] if v.get("group") is None]
    rep: dict[str, str] = {}
    groups = []
    for item in fold(node, MarkBudget(), collapse=True):
        members = [v["id"] for v in item["shown"]]
        vertices.extend(item["shown"])
        first = item["groups"][0]
        if item["hidden"]:
            summary_id = f"summary:{item['id']}"
            ops, consts, top = call_summary(item["hidden"])
            vertices.append(_collapsed_vertex(summary_id, first, item["id"], ops, top, len(item["hidden"]), consts,
                                              sum(is_marked(v) for v in item["hidden"])))
            members.append(summary_id)
            for vertex in item["hidden"]:
                rep[vertex["id"]] = summary_id
        groups.append(dict(first, id=item["id"], label=item["label"], vertices=members,
                           ops=sum(g["ops"] for g in item["groups"]),
                           marked=any(g["marked"] for g in item["groups"]),
                           hazards=sorted({i for g in item["groups"] for i in g["hazards"]})))
    edges, seen = [], set()
    for edge in node["edges"]:
        source, target = rep.get(edge["source"], edge["source"]), rep.get(edge["target"], edge["target"])
        key = (source, target, edge["kind"])
        if source == target or key in seen:
            continue
        seen.add(key)
        edges.append(dict(edge, source=source, target=target))
    return dict(node, vertices=vertices, edges=edges, groups=groups)
