"""Real LEAPP 0.7.2 versus leapp_notebook on the measured constructs, side by side.

For every case: what LEAPP's exported model does on fresh inputs (faithful / wrong / error), what
``profile="leapp"`` reports (its error hazards), and whether ``profile="full"`` records it faithfully.
Rule one says: wherever LEAPP's export is wrong, the ``leapp`` profile must show an error hazard.

    python benchmarks/leapp_comparison.py          # prints the table and the counts
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import leapp_notebook as ln  # noqa: E402
from benchmarks.leapp_cases import CASES, cell, fresh_like  # noqa: E402

N_FRESH = 4


def _agrees(got: Any, want: Any) -> bool:
    got, want = np.asarray(got), np.asarray(want)
    return got.shape == want.shape and np.allclose(got.astype(np.float64), want.astype(np.float64),
                                                   rtol=1e-5, atol=1e-5, equal_nan=True)


def fresh_inputs(x: np.ndarray, body: str) -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    inputs = [fresh_like(x, rng, body) for _ in range(N_FRESH)]
    if "any()" in body:
        inputs.append(np.zeros_like(x))
    return inputs


def ours(body: str, x: np.ndarray, profile: str) -> dict[str, Any]:
    """Trace with leapp_notebook; the verdict of its graph on fresh inputs against the eager cell."""
    try:
        trace = ln.trace_cell(cell(body), {"np": np, "x": np.array(x, copy=True)}, profile=profile)
    except Exception as exc:  # the cell itself fails: reported, not silently exported
        return {"errors": [f"raised {type(exc).__name__}"], "verdict": "error"}
    errors = sorted({h.kind for h in trace.hazards if h.severity == "error"})
    verdict = "faithful"
    for fresh in fresh_inputs(x, body):
        eager = trace.run_eager({"node": {"x": fresh}})["node"]["y"]
        try:
            got = trace.nodes["node"](fresh)[0]
        except Exception:
            verdict = "error"
            break
        if not _agrees(got, eager) or got.dtype != np.asarray(eager).dtype:
            verdict = "wrong"
            break
    return {"errors": errors, "verdict": verdict}


def leapp_verdict(body: str, x: np.ndarray) -> str:
    """faithful / wrong / error for the real LEAPP export of the case."""
    from benchmarks.leapp_harness import leapp_outputs_for, run_leapp

    result = run_leapp(cell(body), {"x": x})
    if result["raised"] or result["compile_raised"] or result["run"] is None:
        return "error"
    namespace_eager = {}
    for fresh in fresh_inputs(x, body):
        namespace_eager = {"np": np, "x": np.array(fresh, copy=True), "annotate": ln.annotate}
        exec(compile(cell(body), "<eager>", "exec"), namespace_eager)
        try:
            got = leapp_outputs_for(result, {"x": fresh})["y"]
        except Exception:
            return "error"
        if not _agrees(got, namespace_eager["y"]) or got.dtype != np.asarray(namespace_eager["y"]).dtype:
            return "wrong"
    return "faithful"


def main() -> int:
    try:
        import leapp  # noqa: F401
    except ImportError:
        print("leapp is not installed: pip install -e '.[bench]'")
        return 1
    rows = []
    for name, body, x in CASES:
        rows.append((name, leapp_verdict(body, x), ours(body, x, "leapp"), ours(body, x, "full")))
    width = max(len(r[0]) for r in rows)
    print(f"{'construct':{width}}  LEAPP 0.7.2  profile=leapp errors            profile=full")
    silent = 0
    for name, theirs, lp, full in rows:
        flag = ""
        if theirs != "faithful" and not lp["errors"]:
            flag = "  <-- LEAPP wrong, no error hazard"
            silent += 1
        if full["verdict"] != "faithful" and not full["errors"]:
            flag += "  <-- full profile wrong, no error hazard"
            silent += 1
        print(f"{name:{width}}  {theirs:11}  {','.join(lp['errors']) or '-':30}  {full['verdict']}{flag}")
    counts = {v: sum(1 for r in rows if r[1] == v) for v in ("faithful", "wrong", "error")}
    full_ok = sum(1 for r in rows if r[3]["verdict"] == "faithful")
    flagged = sum(1 for r in rows if r[1] != "faithful" and r[2]["errors"])
    print(f"\n{len(rows)} constructs. LEAPP 0.7.2 export: {counts['faithful']} faithful, {counts['wrong']} wrong, "
          f"{counts['error']} failing.")
    print(f"profile=leapp flags {flagged} of the {counts['wrong'] + counts['error']} LEAPP gets wrong or fails on; "
          f"profile=full records {full_ok} of {len(rows)} faithfully; silent wrong graphs: {silent}.")
    return 0 if silent == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
