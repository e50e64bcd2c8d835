"""Graph model -> escaped HTML: the notebook's ``text/html`` and the widget's panels.

The page holds a summary line, the graph (the SVG from ``dot`` when given one), and per node the
hazard table, the probe's result per output and the ops grouped by source line or helper in
collapsible ``<details>`` sections (open when they hold a hazard). Without an SVG those sections and
an HTML legend are the graph. Every user-controlled string goes through ``html.escape``; styles are
inline so the output survives the notebook sanitizer.
"""

from __future__ import annotations

from typing import Any

from .labels import call_text, cast_note, esc, preview_text, probe_text, shape_text
from .look import LOOKS, PROBE_FAILED, PROBE_PASSED, SELECTED, SEVERITY_ICON, VERDICT_COLOUR
from .model import graph_model
from .text import summary_line, verdict_words

SEVERITY_COLOUR = {"error": "#b91c1c", "warning": "#b45309"}
# Long words (paths, code without spaces) break anywhere rather than widen the page.
_WRAP = "overflow-wrap:anywhere;word-break:break-word"
# white-space and line-height are set, not inherited: ipywidgets' HTML widget sets nowrap and a tall line.
_CELL = (f"border:1px solid #d1d5db;padding:3px 6px;text-align:left;vertical-align:top;white-space:normal;"
         f"line-height:1.35;{_WRAP}")
_CODE = f"font-family:monospace;white-space:pre-wrap;{_WRAP}"
_TABLE = "<table style=\"border-collapse:collapse;margin:4px 0\">"
# The hazard table takes the output's width and no more: fixed layout, the code, message and fix
# columns share what the narrow ones leave, and their text wraps (no sideways scroll at 1024 px).
_HAZARD_TABLE = ("<table class=\"leapp-hazards\" style=\"border-collapse:collapse;margin:4px 0;"
                 "table-layout:fixed;width:100%;max-width:100%\">")
_HAZARD_COLUMNS = ("<colgroup><col style=\"width:2em\"><col style=\"width:10.5em\"><col style=\"width:3.2em\">"
                   "<col style=\"width:24%\"><col><col></colgroup>")


def _td(content: str, style: str = "") -> str:
    """A table cell; ``content`` is HTML the caller has already escaped."""
    return f"<td style=\"{_CELL}{';' + style if style else ''}\">{content}</td>"


def _spec(spec: dict[str, Any]) -> str:
    return f"{esc(spec['name'])} {esc(shape_text(spec['shape']))} {esc(spec['dtype'])}"


def to_html(trace_or_model: Any, *, svg: str | None = None, ops_open: bool | None = None) -> str:
    """The trace as one HTML fragment. ``svg``: an SVG fragment (``dot.svg_fragment``) shown as the graph.

    ``ops_open``: whether the ops listing starts expanded (default: when there is no SVG).
    """
    model = graph_model(trace_or_model)
    if ops_open is None:
        ops_open = svg is None
    parts = [
        "<div class=\"leapp-trace\" style=\"font-family:sans-serif;font-size:13px;line-height:1.35;"
        "max-width:100%\">",
        summary_html(model),
    ]
    if model.get("export"):
        parts.append(export_html(model["export"]))
    if model.get("probe"):
        parts.append(probe_html(model))
    if svg is not None:
        parts.append(f"<div class=\"leapp-graph\" style=\"overflow:auto;max-width:100%\">{svg}</div>")
    for node in model["nodes"]:
        parts.append(_node(model, node, ops_open))
    if svg is None:
        parts.append(legend_html(model))
    parts.append("</div>")
    return "\n".join(parts)


def summary_html(model: dict[str, Any]) -> str:
    """``Trace (profile leapp) · 1 node · 3 ops · … · ✖ not exportable as is: …``: the model's words."""
    state = model["verdict"]["state"]
    said = (f"<b class=\"leapp-verdict\" data-leapp-verdict=\"{esc(state)}\" "
            f"style=\"color:{VERDICT_COLOUR[state]}\">{esc(verdict_words(model))}</b>")
    return (f"<div class=\"leapp-summary\"><b>Trace</b> (profile {esc(model['profile'])}) · "
            f"{esc(summary_line(model))} · {said}</div>")


def probe_html(model: dict[str, Any], *, table: bool = False) -> str:
    """The last probe: passed or failed on how many inputs with which seed, and what each failing output
    shows (its first mismatch, the baked constants behind it). ``table``: with the result of every output
    (``to_html`` shows them per node instead)."""
    probe = model["probe"]
    colour = PROBE_PASSED if probe["passed"] else PROBE_FAILED
    said = "✔ probe passed" if probe["passed"] else "✖ probe FAILED"
    notes = []
    for name, check in probe["outputs"].items():
        if check.get("first_mismatch"):
            notes.append(f"<li>{esc(name)}: first mismatch, {esc(check['first_mismatch'])}</li>")
        if check.get("baked_constants"):
            notes.append(f"<li>{esc(name)} follows an input in NumPy but not in the graph; baked: "
                         f"{esc(', '.join(check['baked_constants']))}</li>")
    return (f"<div class=\"leapp-probe\" data-leapp-probe=\"{'passed' if probe['passed'] else 'failed'}\">"
            f"<b style=\"color:{colour}\">{said}</b> on {esc(probe['n'])} fresh inputs (seed {esc(probe['seed'])})"
            + (probe_table_html(list(probe["outputs"].items())) if table else "")
            + (f"<ul style=\"margin:2px 0\">{''.join(notes)}</ul>" if notes else "") + "</div>")


def export_html(exported: dict[str, Any]) -> str:
    """The model's ``export`` entry: the files written, or why nothing was."""
    written = exported["state"] == "written"
    colour = PROBE_PASSED if written else PROBE_FAILED
    if written:
        files = "".join(f"<li><code style=\"{_WRAP}\">{esc(name)}</code></li>" for name in exported["files"])
        body = f"<b style=\"color:{colour}\">✔ {esc(exported['message'])}</b><ul style=\"margin:2px 0\">{files}</ul>"
    else:
        body = (f"<div style=\"color:{colour};white-space:pre-wrap;{_WRAP}\"><b>✖</b> "
                f"{esc(exported['message'])}</div>")
    return f"<div class=\"leapp-export\" data-leapp-export=\"{esc(exported['state'])}\">{body}</div>"


def _node(model: dict[str, Any], node: dict[str, Any], ops_open: bool) -> str:
    inputs = ", ".join(_spec(s) for s in node["inputs"])
    outputs = ", ".join(_spec(s) for s in node["outputs"])
    hazards = [model["hazards"][i] for i in node["hazards"]]
    parts = [
        "<div class=\"leapp-node\" style=\"margin-top:8px\">",
        f"<div><b>node '{esc(node['name'])}'</b> <small>export_with={esc(node['export_with'])} · "
        f"{node['ops']} ops</small>: {inputs} → {outputs}</div>",
        hazard_table_html(hazards) if hazards else "<div style=\"color:#15803d\">✔ no hazards</div>",
    ]
    checks = [(v["name"], v["probe"]) for v in node["vertices"] if v["role"] == "output" and v.get("probe")]
    if checks:
        parts.append(probe_table_html(checks))
    parts.append(_ops(model, node, ops_open))
    parts.append("</div>")
    return "\n".join(parts)


def hazard_table_html(hazards: list[dict[str, Any]], *, selected: int | None = None) -> str:
    """An HTML table of hazards: severity, kind, line, code, message, fix. It fits its container's width
    (the code, message and fix cells wrap). ``selected``: the model id of a hazard whose row is outlined."""
    titles = ("", "kind", "line", "code", "message", "fix")
    header = "".join(f"<th style=\"{_CELL}\">{title}</th>" for title in titles)
    rows = [f"<tr>{header}</tr>"]
    for hazard in hazards:
        colour = f"color:{SEVERITY_COLOUR.get(hazard['severity'], '#111827')}"
        location = f"<br><small>in {esc(hazard['location'])}</small>" if hazard.get("location") else ""
        chosen = selected is not None and hazard.get("id") == selected
        mark = f" style=\"outline:3px solid {SELECTED}\" data-leapp-selected=\"true\"" if chosen else ""
        rows.append(
            f"<tr class=\"leapp-hazard leapp-hazard-line\" data-kind=\"{esc(hazard['kind'])}\" "
            f"data-leapp-kind=\"{esc(hazard['kind'])}\" data-leapp-severity=\"{esc(hazard['severity'])}\"{mark}>"
            + _td(f"<b>{SEVERITY_ICON.get(hazard['severity'], '?')}</b>", colour)
            + _td(f"<b>{esc(hazard['kind'])}</b><br>{esc(hazard['severity'])}", colour)
            + _td("" if hazard["line"] is None else str(hazard["line"]))
            + _td(esc(hazard["code"].strip()) + location, _CODE)
            + _td(esc(hazard["message"])) + _td(esc(hazard["fix"])) + "</tr>")
    return _HAZARD_TABLE + _HAZARD_COLUMNS + "".join(rows) + "</table>"


def probe_table_html(checks: list[tuple[str, dict[str, Any]]]) -> str:
    """An HTML table of the probe's result per output."""
    rows = [f"<tr><th style=\"{_CELL}\">output</th><th style=\"{_CELL}\">probe</th></tr>"]
    for name, check in checks:
        colour = PROBE_PASSED if check["passed"] else PROBE_FAILED
        rows.append(f"<tr>{_td(esc(name))}{_td(f'<b>{esc(probe_text(check))}</b>', f'color:{colour}')}</tr>")
    return _TABLE + "".join(rows) + "</table>"


def _ops(model: dict[str, Any], node: dict[str, Any], ops_open: bool) -> str:
    by_id = {v["id"]: v for v in node["vertices"]}
    parts = [f"<details class=\"leapp-ops\"{' open' if ops_open else ''}>"
             f"<summary>ops by source line ({node['ops']} ops, {len(node['groups'])} groups)</summary>"]
    ends = [v for v in node["vertices"] if v["role"] in ("input", "output")]
    parts.append(_vertex_table(ends, model["hazards"]))
    for group in node["groups"]:
        members = [by_id[i] for i in group["vertices"]]
        count = f"{group['ops']} op{'s' * (group['ops'] != 1)}"
        if group["ops"]:
            count += f": {esc(group['summary'])}"
        flag = " <b style=\"color:#b91c1c\">✖</b>" if group["marked"] else ""
        parts.append(f"<details class=\"leapp-group\" style=\"margin-left:12px\""
                     f"{' open' if group['marked'] else ''}><summary><span style=\"{_CODE}\">"
                     f"{esc(group['label'])}</span> · {count}{flag}</summary>"
                     f"{_vertex_table(members, model['hazards'])}</details>")
    parts.append("</details>")
    return "\n".join(parts)


def _vertex_table(vertices: list[dict[str, Any]], hazards: list[dict[str, Any]]) -> str:
    rows = []
    for vertex in vertices:
        look = LOOKS[vertex["category"]]
        style = f"background:{look.fill};border-left:4px solid {look.border}"
        if any(hazards[i]["severity"] == "warning" for i in vertex["hazards"]):
            style += ";border-left-style:dashed"
        probe = vertex.get("probe")
        if probe is not None and not probe["passed"]:
            style += f";outline:3px solid {PROBE_FAILED}"
        marks = "".join(f"<br><b style=\"color:{SEVERITY_COLOUR.get(hazards[i]['severity'], '#111827')}\">"
                        f"{SEVERITY_ICON.get(hazards[i]['severity'], '')} {esc(hazards[i]['kind'])}</b>"
                        for i in vertex["hazards"])
        if probe is not None:
            colour = PROBE_PASSED if probe["passed"] else PROBE_FAILED
            marks += f"<br><b style=\"color:{colour}\">{esc(probe_text(probe))}</b>"
        typed = "" if vertex["role"] == "collapsed" else \
            f"{esc(shape_text(vertex['shape']))} {esc(vertex['dtype'] or '')}"
        line = "" if vertex["line"] is None else f"line {vertex['line']}"
        rows.append(f"<tr data-vertex=\"{esc(vertex['id'])}\">"
                    + _td(f"<b>{esc(f'{look.icon} {look.tag}'.strip())}</b>", style)
                    + _td(_describe(vertex) + marks) + _td(typed) + _td(line) + "</tr>")
    return "<table style=\"border-collapse:collapse;margin:2px 0 2px 12px\">" + "".join(rows) + "</table>"


def _describe(vertex: dict[str, Any]) -> str:
    if vertex["role"] in ("input", "output"):
        return f"<b>{esc(vertex['name'])}</b>"
    if vertex["role"] == "constant":
        text = f"<b>{esc(vertex['name'])}</b> = {esc(preview_text(vertex.get('preview', [])))}"
        if vertex.get("origin"):
            text += f"<br><small>{esc(vertex['origin'])}</small>"
        return text
    if vertex["role"] == "collapsed":  # a compacted model's fold
        constants = f" + {vertex['constants']} constants" if vertex["constants"] else ""
        return f"<b>{esc(vertex['name'])}</b>{esc(constants)}: {esc(vertex['numpy'])}"
    note = f" <small>{esc(cast_note(vertex))}</small>" if vertex.get("cast") else ""
    return (f"<b>{esc(call_text(vertex))}</b> → {esc(vertex['torch'])} <small>({esc(vertex['name'])})</small>"
            + note)


def legend_html(model: dict[str, Any]) -> str:
    """The legend as an HTML table (the SVG carries its own)."""
    rows = "".join(f"<tr>{_td('<b>' + esc((e['icon'] + ' ' + e['tag']).strip()) + '</b>', _swatch(e))}"
                   f"{_td(esc(e['label']))}</tr>" for e in model["legend"])
    failed = _td("✖ PROBE FAILED", f"outline:3px solid {PROBE_FAILED}")
    rows += (f"<tr>{_td('✖ / ⚠')}{_td('error / warning (dashed)')}</tr>"
             f"<tr>{failed}{_td('output failed the probe')}</tr>")
    return ("<details class=\"leapp-legend\" style=\"margin-top:6px\"><summary>legend</summary>"
            f"<table style=\"border-collapse:collapse\">{rows}</table></details>")


def _swatch(entry: dict[str, Any]) -> str:
    return f"background:{entry['fill']};border-left:4px solid {entry['border']}"
