"""Graph model -> Graphviz DOT, and DOT -> SVG through the ``dot`` binary when it is installed.

One cluster per traced node, and inside it one cluster per helper function or source line. Graphs
larger than ``COLLAPSE_ABOVE`` vertices collapse: in each node, runs of consecutive unmarked groups
become one summary box, and the unmarked ops of a marked group become one summary box beside the
marked vertices, so hazards stay visible in a graph of thousands of ops.

Every user-controlled string is escaped: HTML-like labels with ``html.escape``, quoted attributes by
:func:`quote`. DOT identifiers are synthetic (``v12``), never user names.
"""

from __future__ import annotations

from typing import Any, Iterable

from .labels import (
    CONTROL_CHARACTERS,
    call_text,
    cast_note,
    clip,
    esc,
    module_label,
    preview_text,
    probe_text,
    shape_text,
)
from .look import LOOKS, PROBE_FAILED, PROBE_PASSED, SELECTED, SEVERITY_ICON
from .model import MarkBudget, call_summary, drawn_model, fold, folded_counts, graph_model, is_marked, severity_of

COLLAPSE_ABOVE = 120
FONT = "Helvetica,Arial,sans-serif"
# Named first so Graphviz (through Pango) and browsers measure code with the same face where it exists.
MONO = "DejaVu Sans Mono,Menlo,Consolas,monospace"


def quote(text: str) -> str:
    """A DOT double-quoted string whose content dot shows literally (no ``\\N``-style escapes)."""
    text = text.translate(CONTROL_CHARACTERS).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{text}"'


def to_dot(trace_or_model: Any, *, highlight: Iterable[str] = (), collapse: bool | None = None,
           legend: bool = True) -> str:
    """The DOT source of a trace's graph.

    ``highlight``: vertex ids (``"0/add"``) drawn with a heavy blue border (the widget's selected
    hazard). ``collapse``: None collapses graphs above ``COLLAPSE_ABOVE`` vertices.
    """
    highlight = set(highlight)
    if highlight or collapse is not None:  # vertices to keep, or the caller's own fold: the full model
        model = graph_model(trace_or_model)
    else:
        model = drawn_model(trace_or_model, folds_above=COLLAPSE_ABOVE)
    writer = _Writer(model, highlight)
    if collapse is None:
        collapse = sum(len(node["vertices"]) for node in model["nodes"]) > COLLAPSE_ABOVE
    out = [
        "digraph leapp {",
        f"  graph [rankdir=TB, fontname={quote(FONT)}, fontsize=11, nodesep=0.3, ranksep=0.35, "
        f"bgcolor=\"white\", newrank=true];",
        f"  node [fontname={quote(FONT)}, fontsize=11, margin=\"0.12,0.05\"];",
        f"  edge [fontname={quote(FONT)}, fontsize=9, color=\"#6b7280\", fontcolor=\"#4b5563\", "
        "arrowsize=0.7];",
    ]
    for node in model["nodes"]:
        out.extend(writer.node(node, collapse))
    if legend:
        out.extend(writer.legend())
    out.append("}")
    return "\n".join(out) + "\n"


class _Writer:
    """Writes the DOT statements of one model; holds the synthetic id of every drawn vertex."""

    def __init__(self, model: dict[str, Any], highlight: set[str]):
        self.model = model
        self.hazards = model["hazards"]
        self.highlight = highlight
        self.dot_ids: dict[str, str] = {}
        self.not_recorded = False
        self.folded = False  # whether a box stands for folded vertices (the legend explains it)

    def dot_id(self, key: str) -> str:
        found = self.dot_ids.get(key)
        if found is None:
            found = self.dot_ids[key] = f"v{len(self.dot_ids)}"
        return found

    # -------------------------------------------------------------- one traced node
    def node(self, node: dict[str, Any], collapse: bool) -> list[str]:
        title = (f"<<B>node '{esc(node['name'])}'</B>  <FONT POINT-SIZE=\"9\">"
                 f"export_with={esc(node['export_with'])} · {node['ops']} ops</FONT>>")
        out = [f"  subgraph cluster_n{node['index']} {{",
               f"    label={title}; labeljust=l; labelloc=t; style=\"rounded\"; color=\"#9ca3af\"; "
               "margin=10;"]
        rep = {v["id"]: v["id"] for v in node["vertices"]}
        # a compacted model's collapsed vertices: their edges stand for many, unlabelled like this renderer's folds
        folded = {v["id"] for v in node["vertices"] if v["role"] == "collapsed"}
        grouped: set[str] = set()
        for cluster in self._clusters(node, collapse):
            out.extend(self._cluster(cluster, rep, grouped))
        for vertex in node["vertices"]:
            if vertex["id"] not in grouped:
                out.append("    " + self._vertex(vertex))
        out.extend(self._edges(node, rep, folded))
        out.append("  }")
        return out

    def _clusters(self, node: dict[str, Any], collapse: bool) -> list[dict[str, Any]]:
        """The node's groups folded for drawing; ``framed`` when the item needs its own box."""
        shown = MarkBudget()  # a hazard a loop repeats: its first vertices, the others counted in the summaries
        items = fold(node, lambda v: v["id"] in self.highlight or shown(v), collapse)
        for item in items:
            item["framed"] = len(item["shown"]) + bool(item["hidden"]) > 1
        return items

    def _cluster(self, cluster: dict[str, Any], rep: dict[str, str], grouped: set[str]) -> list[str]:
        out = []
        indent = "    "
        if cluster["framed"]:
            out.append(f"    subgraph cluster_{self.dot_id('cluster:' + cluster['id'])} {{")
            label = esc(clip(cluster["label"], 60))
            out.append(f"      label=<<FONT POINT-SIZE=\"10\" COLOR=\"#374151\">{label}</FONT>>; "
                       "labeljust=l; labelloc=t; style=\"rounded,dashed\"; color=\"#9ca3af\"; margin=8;")
            indent = "      "
        for vertex in cluster["shown"]:
            grouped.add(vertex["id"])
            if vertex["role"] == "collapsed":  # a compacted model's fold: drawn as this renderer's own
                out.append(indent + self._summary_box(vertex["id"], *folded_counts(vertex), cluster["label"],
                                                      cluster["framed"]))
            else:
                out.append(indent + self._vertex(vertex))
        if cluster["hidden"]:
            summary_id = "summary:" + cluster["id"]
            for vertex in cluster["hidden"]:
                grouped.add(vertex["id"])
                rep[vertex["id"]] = summary_id
            out.append(indent + self._summary(summary_id, cluster))
        if cluster["framed"]:
            out.append("    }")
        return out

    def _summary(self, summary_id: str, cluster: dict[str, Any]) -> str:
        ops, consts, top = call_summary(cluster["hidden"])
        return self._summary_box(summary_id, ops, consts, sum(is_marked(v) for v in cluster["hidden"]), top,
                                 cluster["label"], cluster["framed"])

    def _summary_box(self, summary_id: str, ops: int, consts: int, marked: int, top: str, label: str,
                     framed: bool) -> str:
        """The box standing for folded vertices: ``ops`` ops and ``consts`` constants, ``marked`` of them marked,
        ``top`` their most frequent calls; ``label`` (the group's lines) heads it when no frame shows it."""
        look = LOOKS["collapsed"]
        self.folded = True
        rows = [f"<B>{look.icon} {ops} ops</B>"
                + (f" <FONT POINT-SIZE=\"9\">+ {consts} constants</FONT>" if consts else "")
                + (f" <FONT POINT-SIZE=\"9\">· {marked} marked</FONT>" if marked else ""),
                f"<FONT POINT-SIZE=\"9\">{esc(clip(top, 56))}</FONT>"]
        if not framed:
            rows.insert(0, f"<FONT POINT-SIZE=\"9\">{esc(clip(label, 56))}</FONT>")
        return (f"{self.dot_id(summary_id)} [shape=box, style=\"rounded,filled\", fillcolor=\"{look.fill}\", "
                f"color=\"{look.border}\", label={_table(rows)}, tooltip={quote(label)}];")

    # -------------------------------------------------------------- one vertex
    def _vertex(self, vertex: dict[str, Any]) -> str:
        look = LOOKS[vertex["category"]]
        severity = severity_of(vertex, self.hazards)
        role = vertex["role"]
        baked = vertex.get("constant") == "baked"
        styles = ["filled", "diagonals"] if baked else ["filled", "rounded"]
        attrs = {"shape": "box", "fillcolor": look.fill, "color": look.border, "penwidth": "1.2"}
        if severity == "error":
            attrs["penwidth"] = "2.5"
        elif severity == "warning":
            styles.append("dashed")
            attrs["penwidth"] = "2"
        if role == "output":
            attrs["peripheries"] = "2"
            probe = vertex.get("probe")
            if probe is not None and not probe["passed"]:
                attrs.update(color=PROBE_FAILED, penwidth="3.5")
            elif probe is not None:
                attrs.update(color=PROBE_PASSED, penwidth="2")
        if vertex["id"] in self.highlight:
            attrs.update(color=SELECTED, penwidth="4.5")
        attrs["style"] = ",".join(styles)
        parts = [f"{key}={quote(value)}" for key, value in attrs.items()]
        parts.append(f"label={_table(self._rows(vertex, look, severity))}")
        parts.append(f"tooltip={quote(self._tooltip(vertex))}")
        return f"{self.dot_id(vertex['id'])} [{', '.join(parts)}];"

    def _rows(self, vertex: dict[str, Any], look: Any, severity: str | None) -> list[str]:
        role = vertex["role"]
        small = "<FONT POINT-SIZE=\"9\" COLOR=\"#4b5563\">{}</FONT>"
        where = f" · line {vertex['line']}" if vertex["line"] is not None and role != "output" else ""
        typed = f"{shape_text(vertex['shape'])} {vertex['dtype'] or ''}".strip()
        if role == "input":
            rows = [f"<B>{look.icon} IN {esc(vertex['name'])}</B>", small.format(esc(typed))]
        elif role == "output":
            rows = [f"<B>{LOOKS['output'].icon} OUT {esc(vertex['name'])}</B>", small.format(esc(typed))]
            probe = vertex.get("probe")
            if probe is not None:
                colour = PROBE_PASSED if probe["passed"] else PROBE_FAILED
                rows.append(f"<FONT POINT-SIZE=\"9\" COLOR=\"{colour}\"><B>{esc(probe_text(probe))}</B>"
                            "</FONT>")
        elif role == "constant" and vertex.get("constant") == "baked":
            rows = [f"<B>{look.icon} BAKED {esc(vertex['name'])}</B>"]
            if vertex.get("origin"):
                rows.append(small.format(esc(clip(vertex["origin"]))))
            if vertex.get("code"):
                rows.append(f"<FONT POINT-SIZE=\"9\" FACE=\"{MONO}\">line {vertex['line']}: "
                            f"{esc(clip(vertex['code'].strip(), 44))}</FONT>")
            rows.append(small.format(esc(f"{typed} = {preview_text(vertex.get('preview', []))}")))
            if vertex.get("probe_baked"):
                rows.append(f"<FONT POINT-SIZE=\"9\" COLOR=\"{PROBE_FAILED}\"><B>✖ probe: "
                            f"{esc(', '.join(vertex['probe_baked']))} should follow the input</B></FONT>")
        elif role == "constant":
            rows = [f"{look.icon} {esc(vertex['name'])} "
                    f"{small.format(esc(preview_text(vertex.get('preview', []))))}",
                    small.format(esc(typed + where))]
        elif role == "module":
            rows = [f"<B>{esc(look.icon + ' ' + module_label(vertex))}</B>", small.format(esc(where.lstrip(' ·')))]
        else:
            icon = f"{look.icon} " if look.icon else ""
            astype = not vertex["cast"] and vertex["torch"] == "Tensor.to"
            torch_op = vertex["torch"] + (f" (cast to {vertex['dtype']})" if astype else "")
            rows = [f"<B>{esc(icon + call_text(vertex))}</B>", small.format("→ " + esc(torch_op))]
            if vertex["cast"]:
                rows.append(small.format(esc(cast_note(vertex))))
            rows.append(small.format(esc(typed + where)))
        rows.extend(self._hazard_rows(vertex, titled=vertex.get("constant") == "baked"))
        return rows

    def _hazard_rows(self, vertex: dict[str, Any], titled: bool) -> list[str]:
        """One row per hazard kind marking ``vertex``: severity icon and word, the category tag (unless
        the title already shows it) and the kind."""
        rows, seen = [], set()
        for index in vertex["hazards"]:
            hazard = self.hazards[index]
            key = (hazard["kind"], hazard["severity"])
            if key in seen:
                continue
            seen.add(key)
            look = LOOKS[hazard["category"]]
            tag = "" if titled and hazard["category"] == vertex["category"] else f"{look.tag} · "
            text = f"{SEVERITY_ICON.get(hazard['severity'], '')} {tag}{hazard['severity']}: {hazard['kind']}"
            rows.append(f"<FONT POINT-SIZE=\"9\" COLOR=\"{look.border}\"><B>{esc(text)}</B></FONT>")
        return rows

    def _tooltip(self, vertex: dict[str, Any]) -> str:
        lines = [f"{call_text(vertex)} → {vertex['torch']}" if vertex["role"] == "op" else
                 module_label(vertex) if vertex["role"] == "module" else vertex["name"]]
        for index in vertex["hazards"]:
            hazard = self.hazards[index]
            lines.append(f"{hazard['severity']} {hazard['kind']} at line {hazard['line']}: "
                         f"{hazard['message']}")
        return "\n".join(lines)

    # -------------------------------------------------------------- edges and legend
    def _edges(self, node: dict[str, Any], rep: dict[str, str], folded: set[str]) -> list[str]:
        out, seen = [], set()
        for edge in node["edges"]:
            source, target = rep[edge["source"]], rep[edge["target"]]
            if source == target or (source, target, edge["kind"]) in seen:
                continue
            seen.add((source, target, edge["kind"]))
            aggregated = source != edge["source"] or target != edge["target"] \
                or source in folded or target in folded
            if edge["kind"] == "not-recorded":
                self.not_recorded = True
                attrs = "style=dashed, color=\"#b91c1c\", fontcolor=\"#b91c1c\", label=\" not recorded\""
            else:
                attrs = "" if aggregated else f"label={quote(' ' + shape_text(edge['shape']))}"
            end = f" [{attrs}];" if attrs else ";"
            out.append(f"    {self.dot_id(source)} -> {self.dot_id(target)}{end}")
        return out

    def legend(self) -> list[str]:
        """The legend as the graph's own label, under the drawing, three entries a row."""
        entries = self.model["legend"]
        if self.folded and all(e["category"] != "collapsed" for e in entries):  # folded here: as compact() says it
            entries = [*entries, LOOKS["collapsed"].to_dict()]
        cells = [(f"<TD BGCOLOR=\"{e['fill']}\" COLOR=\"{e['border']}\"><B>"
                  f"{esc((e['icon'] + ' ' + e['tag']).strip()) or '&nbsp;'}</B></TD>", esc(e["label"]))
                 for e in entries]
        severities = {hazard["severity"] for hazard in self.hazards}
        if "error" in severities:
            cells.append(("<TD>✖ heavy border</TD>", "error hazard"))
        if "warning" in severities:
            cells.append(("<TD STYLE=\"dashed\">⚠ dashed border</TD>", "warning hazard"))
        if self.not_recorded:
            cells.append(("<TD><FONT COLOR=\"#b91c1c\">- - -▸</FONT></TD>",
                          "computed outside the graph (not recorded)"))
        probe = self.model.get("probe")
        if probe is not None and not probe["passed"]:
            cells.append((f"<TD COLOR=\"{PROBE_FAILED}\"><FONT COLOR=\"{PROBE_FAILED}\">✖ PROBE FAILED"
                           "</FONT></TD>", "output failed the probe (red outline)"))
        if self.highlight:
            cells.append((f"<TD COLOR=\"{SELECTED}\"><FONT COLOR=\"{SELECTED}\">selected</FONT></TD>",
                           "graph nodes of the selected hazard"))
        rows = []
        for start in range(0, len(cells), 3):
            pairs = "".join(f"{swatch}<TD ALIGN=\"LEFT\" BORDER=\"0\">{text}</TD>"
                            for swatch, text in cells[start:start + 3])
            rows.append(f"<TR>{pairs}</TR>")
        table = ("<<TABLE BORDER=\"0\" CELLBORDER=\"1\" CELLSPACING=\"3\" CELLPADDING=\"3\">"
                 "<TR><TD COLSPAN=\"6\" ALIGN=\"LEFT\" BORDER=\"0\"><B>Legend</B></TD></TR>"
                 + "".join(rows) + "</TABLE>>")
        return [f"  label={table};", "  labelloc=b; labeljust=l; fontsize=9;"]


def _table(rows: list[str]) -> str:
    body = "".join(f"<TR><TD ALIGN=\"LEFT\">{row}</TD></TR>" for row in rows)
    return f"<<TABLE BORDER=\"0\" CELLBORDER=\"0\" CELLSPACING=\"0\" CELLPADDING=\"1\">{body}</TABLE>>"


def to_svg(trace_or_model: Any, **options: Any) -> str | None:
    """The graph as an SVG document via Graphviz's ``dot``; None when ``dot`` is not installed."""
    import graphviz

    source = to_dot(trace_or_model, **options)
    try:
        return graphviz.Source(source).pipe(format="svg", encoding="utf-8")
    except graphviz.ExecutableNotFound:
        return None


def svg_fragment(svg: str, *, fit: bool = True) -> str:
    """An SVG document without its XML prolog, doctype and comments, for inlining in HTML.

    ``fit``: shrink to the width of the page (never enlarge), keeping the aspect ratio.
    """
    start = svg.find("<svg")
    body = svg[start:] if start >= 0 else svg
    if fit and body.startswith("<svg"):
        body = "<svg style=\"max-width:100%;height:auto\"" + body[len("<svg"):]
    out, position = [], 0
    while True:
        begin = body.find("<!--", position)
        if begin < 0:
            out.append(body[position:])
            return "".join(out)
        out.append(body[position:begin])
        end = body.find("-->", begin)
        position = len(body) if end < 0 else end + 3
