"""Graph model -> rich renderables and plain text, for ``print(trace)`` and the CLI.

``renderable(model)`` is a rich ``Group`` (a summary line, per node its inputs and outputs, a hazard
table with line, code, message and fix, the probe's result per output, and the ops grouped by source
line or helper); ``to_text`` prints it to a string without colour. Large nodes list marked ops only,
with the unmarked ones counted per group.
"""

from __future__ import annotations

import io
from typing import Any

from rich.console import Console, Group, RenderableType
from rich.table import Table
from rich.text import Text
from rich.tree import Tree

from .labels import call_text, cast_note, module_label, preview_text, printable, probe_text, shape_text
from .look import LOOKS, SEVERITY_ICON, VERDICT_ICON
from .model import MarkBudget, call_summary, drawn_model, fold, folded_counts, graph_model, is_marked

MAX_OPS_LISTED = 60
STYLE = {"error": "bold red", "warning": "bold dark_orange"}
VERDICT_STYLE = {"error": "bold red", "warning": "bold dark_orange", "ok": "bold green"}


def summary_line(model: dict[str, Any]) -> str:
    """``1 node · 3 ops · ✖ 1 error · ⚠ 0 warnings · probe: not run``: the model's summary words."""
    return graph_model(model)["summary"]["text"]


def verdict_words(model: dict[str, Any]) -> str:
    """The model's verdict with its state's icon: ``✖ not exportable as is: 1 error hazard``."""
    said = graph_model(model)["verdict"]
    return f"{VERDICT_ICON[said['state']]} {said['text']}"


def renderable(trace_or_model: Any, *, max_ops: int = MAX_OPS_LISTED) -> RenderableType:
    """The trace as a rich renderable (control characters from the cell shown as U+FFFD, never sent to the
    terminal)."""
    model = printable(drawn_model(trace_or_model, folds_above=max_ops, per_node=True))
    header = Text.assemble(("Trace", "bold"), f" (profile {model['profile']}) · ", summary_line(model), " · ",
                           (verdict_words(model), VERDICT_STYLE[model["verdict"]["state"]]))
    parts: list[RenderableType] = [header]
    exported = model.get("export")
    if exported:
        parts.append(Text(export_words(exported), style="green" if exported["state"] == "written" else "red"))
    for node in model["nodes"]:
        parts.extend(_node(model, node, max_ops))
    return Group(*parts)


def export_words(exported: dict[str, Any]) -> str:
    """One line for the model's ``export`` entry: the files written, or why nothing was."""
    if exported["state"] == "written":
        files = exported["files"]
        return f"✔ exported {len(files)} file{'s' * (len(files) != 1)}: " + ", ".join(files)
    return f"✖ {exported['message']}"


def _node(model: dict[str, Any], node: dict[str, Any], max_ops: int) -> list[RenderableType]:
    signature = Text.assemble(
        ("node ", "bold"), (repr(node["name"]), "bold cyan"), f" (export_with={node['export_with']}): ",
        ", ".join(f"{s['name']} {shape_text(s['shape'])} {s['dtype']}" for s in node["inputs"]), " → ",
        ", ".join(f"{s['name']} {shape_text(s['shape'])} {s['dtype']}" for s in node["outputs"]))
    parts: list[RenderableType] = [Text(""), signature]
    hazards = [model["hazards"][i] for i in node["hazards"]]
    if hazards:
        parts.append(hazard_table(hazards))
    else:
        parts.append(Text("  no hazards", style="green"))
    checks = [(v["name"], v["probe"]) for v in node["vertices"] if v["role"] == "output" and v.get("probe")]
    if checks:
        probe = Table(title="probe", title_justify="left", show_edge=False, pad_edge=False)
        probe.add_column("output")
        probe.add_column("result")
        for name, check in checks:
            probe.add_row(name, Text(probe_text(check), style="green" if check["passed"] else "bold red"))
        parts.append(probe)
    parts.append(_ops_tree(node, model["hazards"], max_ops))
    return parts


def hazard_table(hazards: list[dict[str, Any]]) -> Table:
    """A rich table of hazards: severity and kind, line, code, then the message with its fix below it."""
    table = Table(show_lines=True, expand=True, title="hazards", title_justify="left")
    table.add_column("", no_wrap=True, width=2)
    table.add_column("kind", no_wrap=True)
    table.add_column("line", justify="right", no_wrap=True)
    table.add_column("code", ratio=2, overflow="fold")
    table.add_column("message / fix", ratio=5, overflow="fold")
    for hazard in hazards:
        style = STYLE.get(hazard["severity"], "")
        where = "" if hazard["line"] is None else str(hazard["line"])
        code = Text(hazard["code"].strip())
        if hazard.get("location"):
            code.append(f"\n(in {hazard['location']})", style="dim")
        table.add_row(Text(SEVERITY_ICON.get(hazard["severity"], "?"), style=style),
                      Text(f"{hazard['kind']}\n{hazard['severity']}", style=style), where, code,
                      Text.assemble(hazard["message"], "\n", ("fix: ", "bold green"), hazard["fix"]))
    return table


def _ops_tree(node: dict[str, Any], hazards: list[dict[str, Any]], max_ops: int) -> Tree:
    """The ops by group; above ``max_ops`` vertices only marked ones are listed, the rest counted."""
    tree = Tree(Text(f"ops ({node['ops']})", style="bold"))
    for item in fold(node, MarkBudget(), collapse=len(node["vertices"]) > max_ops):
        marked = any(group["marked"] for group in item["groups"])
        branch = tree.add(Text(item["label"], style="bold" if marked else ""))
        for vertex in item["shown"]:
            branch.add(_vertex_text(vertex, hazards))
        if item["hidden"]:
            ops, consts, top = call_summary(item["hidden"])
            branch.add(_folded_text(ops, consts, sum(is_marked(v) for v in item["hidden"]), top))
    return tree


def _folded_text(ops: int, constants: int, marked: int, top: str) -> Text:
    """The line standing for folded vertices: folded here, or a compacted model's collapsed vertex."""
    more = f" + {constants} constants" if constants else ""
    what = f"ops ({marked} marked, like those above)" if marked else "unmarked ops"
    return Text(f"{LOOKS['collapsed'].icon} {ops} {what}{more}: {top}", style="dim")


def _vertex_text(vertex: dict[str, Any], hazards: list[dict[str, Any]]) -> Text:
    if vertex["role"] == "collapsed":
        return _folded_text(*folded_counts(vertex))
    look = LOOKS[vertex["category"]]
    typed = f"{shape_text(vertex['shape'])} {vertex['dtype'] or ''}".strip()
    if vertex["role"] == "constant":
        kind = "BAKED" if vertex.get("constant") == "baked" else "const"
        values = preview_text(vertex.get("preview", []))
        text = Text(f"{look.icon} {kind} {vertex['name']} {typed} = {values}")
        if vertex.get("origin"):
            text.append(f"  ({vertex['origin']})", style="dim")
    elif vertex["role"] == "module":
        text = Text(f"{look.icon} {module_label(vertex)}")
    else:
        note = f" ({cast_note(vertex)})" if vertex.get("cast") else ""
        text = Text(f"{vertex['name']}: {call_text(vertex)} → {vertex['torch']}{note}  {typed}")
    for index in vertex["hazards"]:
        hazard = hazards[index]
        text.append(f"  {SEVERITY_ICON.get(hazard['severity'], '')} {hazard['kind']}",
                    style=STYLE.get(hazard["severity"], ""))
    return text


def to_text(trace_or_model: Any, *, width: int = 110, color: bool = False,
            max_ops: int = MAX_OPS_LISTED) -> str:
    """The trace as text (``str(trace)``): no ANSI codes unless ``color``."""
    buffer = io.StringIO()
    console = Console(file=buffer, width=width, force_terminal=color,
                      color_system="standard" if color else None, no_color=not color, highlight=False,
                      emoji=False, force_jupyter=False)
    console.print(renderable(trace_or_model, max_ops=max_ops))
    return buffer.getvalue()
