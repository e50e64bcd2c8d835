"""How long drawing a large cell takes: graph model, DOT, text, HTML and the ``dot`` layout, and the whole
mime bundle ``%%leapp_trace`` displays against tracing the cell.

    python benchmarks/render.py            # 1,000, 4,000, 20,000 and 100,000 ops
    python benchmarks/render.py 250 1000   # other sizes

The cell is generated: one line of four ops per step, a helper function called every tenth step
(so clusters by line and by helper both appear), and one ``np.interp`` whose baked constant must
stay visible when the graph collapses. Tracing is not timed; each renderer is timed best-of-five on
the same trace. The rows against each other show whether the model's cost per op stays flat. *model_ms* is the full
model (``graph_model(trace)``, what ``save_graph_model`` writes); *compacted_ms* the model the notebook output
carries, ``graph_model(trace, compact_above=MODEL_COMPACT_ABOVE)`` (built compacted above 3,000 vertices, the full
model below); *bundle_ms* is ``mimebundle(trace)``: that model, its compacted form above 600 vertices, text, HTML
and SVG, what the magic shows; *trace_ms* is ``trace_cell`` of the same cell, for scale. Figures only: nothing here
asserts a time.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any, Callable

import numpy as np

import leapp_notebook as ln
from leapp_notebook import render
from leapp_notebook.render.model import MODEL_COMPACT_ABOVE


def make_cell(ops: int) -> str:
    """A cell of about ``ops`` recorded ops (in profile "full", where np.interp is recorded too)."""
    lines = ["def smooth(v):", "    return np.tanh(v * 0.5) + v / 3.0", "h = x * 1.0"]
    steps = max(ops // 4, 1)
    for i in range(steps):
        if i == steps // 2:
            lines.append("h = h + np.interp(h, CALIB_IN, CALIB_OUT) * 0.0")
        elif i % 10 == 9:
            lines.append("h = smooth(h)")
        else:
            lines.append(f"h = np.maximum(h * 0.{1 + i % 7} - 0.25, h / 2.0)")
    lines.append("y = h")
    return "\n".join(lines) + "\n"


def trace_of(ops: int) -> Any:
    namespace = {"np": np, "x": np.linspace(-1, 1, 64, dtype=np.float32),
                 "CALIB_IN": np.array([-1.0, 0.0, 1.0]), "CALIB_OUT": np.array([0.0, 2.0, 10.0])}
    return ln.trace_cell(make_cell(ops), namespace, inputs=["x"], outputs=["y"])


def best(function: Callable[[], Any], repeat: int = 5) -> float:
    """Best wall time of ``repeat`` calls, in milliseconds."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times) * 1000


def measure(ops: int) -> dict[str, Any]:
    trace = trace_of(ops)
    trace_ms = best(lambda: trace_of(ops), repeat=3)
    model = render.graph_model(trace)
    dot_collapsed = render.to_dot(model)
    row: dict[str, Any] = {
        "ops": model["summary"]["ops"],
        "vertices": sum(len(node["vertices"]) for node in model["nodes"]),
        "edges": sum(len(node["edges"]) for node in model["nodes"]),
        "model_ms": best(lambda: render.graph_model(trace)),
        "compacted_ms": best(lambda: render.graph_model(trace, compact_above=MODEL_COMPACT_ABOVE)),
        "dot_ms": best(lambda: render.to_dot(model)),
        "model_and_dot_ms": best(lambda: render.to_dot(render.graph_model(trace))),
        "dot_expanded_ms": best(lambda: render.to_dot(model, collapse=False)),
        "text_ms": best(lambda: render.to_text(model)),
        "html_ms": best(lambda: render.to_html(model)),
        "bundle_ms": best(lambda: render.mimebundle(trace), repeat=3),
        "trace_ms": trace_ms,
        "json_kb": len(json.dumps(model)) / 1024,
        "dot_lines": dot_collapsed.count("\n"),
    }
    start = time.perf_counter()
    svg = render.to_svg(model)
    row["svg_ms"] = (time.perf_counter() - start) * 1000 if svg is not None else None
    return row


def main(argv: list[str]) -> None:
    sizes = [int(a) for a in argv] or [1000, 4000, 20000, 100000]
    rows = [measure(size) for size in sizes]
    columns = ["ops", "vertices", "edges", "model_ms", "compacted_ms", "dot_ms", "model_and_dot_ms", "dot_expanded_ms",
               "text_ms", "html_ms", "svg_ms", "bundle_ms", "trace_ms", "json_kb", "dot_lines"]
    print("render benchmark (best of 5; svg_ms: one `dot -Tsvg` of the collapsed graph)")
    widths = [max(len(column), 8) for column in columns]
    print("  ".join(f"{column:>{width}}" for column, width in zip(columns, widths, strict=True)))
    for row in rows:
        cells = []
        for column, width in zip(columns, widths, strict=True):
            value = row[column]
            text = "n/a" if value is None else f"{value:.1f}" if isinstance(value, float) else str(value)
            cells.append(f"{text:>{width}}")
        print("  ".join(cells))
    for row in rows:
        print(f"{row['ops']} ops: graph model + DOT in {row['model_and_dot_ms']:.1f} ms "
              f"({row['model_and_dot_ms'] / max(row['ops'], 1) * 1000:.1f} µs per op); the bundle the magic shows "
              f"in {row['bundle_ms']:.1f} ms, {row['bundle_ms'] / row['trace_ms']:.2f}x tracing the cell")


if __name__ == "__main__":
    main(sys.argv[1:])
