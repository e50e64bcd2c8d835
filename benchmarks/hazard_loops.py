"""Cells that repeat a hazard on every loop pass: whether tracing them, drawing them and printing them stays linear
in the passes (issue 11, the twenty-sixth round: merging a repeated hazard scanned a list that grew with the cell).

    python benchmarks/hazard_loops.py              # 1,000, 5,000 and 10,000 passes
    python benchmarks/hazard_loops.py 500 2000     # other pass counts

Each cell is a loop whose body makes a hazard on every pass: ``float(h[0])`` (a value extracted), ``h[::-1]`` (a
reversed slice), ``if (h > 0.5).any():`` (a branch on traced data), ``np.interp`` (a constant baked on every pass).
Per cell and pass count: ``trace_cell`` (best of 3, a ``gc.collect()`` before each), the bundle ``%%leapp_trace``
shows and ``str(trace)`` (best of 3), the ops recorded and µs per op of the trace. The last column, *growth*, is
the trace's µs per op at that pass count against the smallest count's: about 1 when tracing is linear in the
passes (a scan of a growing list per pass gave 3.5–4x at 10,000 against 1,000). Figures only: nothing here asserts
a time.
"""

from __future__ import annotations

import gc
import sys
import time
from typing import Any, Callable

import numpy as np

import leapp_notebook as ln

HEAD = 'state = annotate.input_tensors("node", {"state": raw})\nh = state\nfor i in range(N):\n'
TAIL = 'annotate.output_tensors("node", {"out": h})\n'
CELLS = {
    "value-extraction": HEAD + "    s = float(h[0])\n    h = h * (s * 0.5) + 0.1\n" + TAIL,
    "reversed-slice": HEAD + "    h = h[::-1] * 0.5\n" + TAIL,
    "data-dependent-branch": HEAD + "    if (h > 0.5).any():\n        h = h * 0.9\n" + TAIL,
    "untraced-call": HEAD + "    h = h * 0.5 + np.interp(h, CALIB_IN, CALIB_OUT) * 0.01\n" + TAIL,
}


def namespace(passes: int) -> dict[str, Any]:
    return {"np": np, "raw": np.array([0.1, 0.4, 0.7, 0.9], np.float32), "N": passes,
            "CALIB_IN": np.array([0.0, 0.5, 1.0]), "CALIB_OUT": np.array([0.0, 2.0, 10.0])}


def best(function: Callable[[], Any], repeat: int = 3) -> float:
    """Best wall time of ``repeat`` calls, in milliseconds, after a full collection each."""
    times = []
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times) * 1000


def measure(cell: str, passes: int) -> dict[str, Any]:
    source = CELLS[cell]
    trace = ln.trace_cell(source, namespace(passes))
    ops = sum(1 for node in trace.nodes.values() for fx in node.graph.graph.nodes
              if fx.op not in ("placeholder", "output", "get_attr"))
    trace_ms = best(lambda: ln.trace_cell(source, namespace(passes)))
    return {"cell": cell, "passes": passes, "ops": ops, "hazards": len(trace.hazards),
            "marked": sum(len(h.graph_nodes) for h in trace.hazards), "trace_ms": trace_ms,
            "us_per_op": trace_ms * 1000 / max(ops, 1), "bundle_ms": best(trace._repr_mimebundle_),
            "print_ms": best(lambda: str(trace))}


def main(argv: list[str]) -> list[dict[str, Any]]:
    counts = sorted(int(a) for a in argv) or [1000, 5000, 10000]
    rows = []
    print("hazard loops (best of 3; growth: µs/op of the trace against the smallest pass count's)")
    columns = ["cell", "passes", "ops", "hazards", "marked", "trace_ms", "us_per_op", "bundle_ms", "print_ms",
               "growth"]
    widths = [22, 7, 7, 7, 7, 9, 9, 9, 9, 7]
    print("  ".join(f"{c:>{w}}" for c, w in zip(columns, widths, strict=True)))
    for cell in CELLS:
        first = None
        for passes in counts:
            row = measure(cell, passes)
            first = first or row["us_per_op"]
            row["growth"] = row["us_per_op"] / first
            rows.append(row)
            cells = [f"{row[c]:.2f}" if isinstance(row[c], float) else str(row[c]) for c in columns]
            print("  ".join(f"{text:>{w}}" for text, w in zip(cells, widths, strict=True)), flush=True)
    return rows


if __name__ == "__main__":
    main(sys.argv[1:])
