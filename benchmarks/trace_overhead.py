"""Tracing overhead: a ~450-op NumPy cell run eagerly, traced by leapp_notebook (both profiles), and
traced by the real LEAPP 0.7.2 when it is installed, in one run.

    python benchmarks/trace_overhead.py [--steps 30] [--repeat 9] [--profile]

Figures are microseconds per recorded op (the cell's NumPy calls that end up in the graph), best of
``--repeat`` runs. For LEAPP the timed work is what its tracing does: ``leapp.start`` -> the cell ->
``leapp.stop`` (building and exporting the model happens later, in ``compile_graph``, not timed). For
leapp_notebook the timed work is ``trace_cell``, split into *record* (the cell running under the
tracer, comparable to LEAPP's tracing) and *finish* (checking every dtype against NumPy by running the
graph once, and building the ``GraphModule``, which LEAPP defers to ``compile_graph``). ``--profile``
prints a cProfile of the recording path. Nothing is asserted: this script prints figures.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import leapp_notebook as ln  # noqa: E402
from leapp_notebook.tracing import session as _session  # noqa: E402
from leapp_notebook.tracing.facts import facts  # noqa: E402

# Element-wise math, reductions with axis/keepdims, slicing, joining and selection: the mix a
# preprocessing cell does. Every call is in LEAPP 0.7.2's lookup, so both tracers record all of it.
CELL = '''\
h = annotate.input_tensors("node", {"x": x})
for step in range(STEPS):
    a = h * 0.5 + 1.0
    b = np.tanh(a) - np.sin(h)
    c = np.clip(b, -1.0, 1.0)
    d = np.sum(c, axis=1, keepdims=True)
    e = c / (np.abs(d) + 1.0)
    f = np.where(e > 0.1, e, -e)
    g = np.concatenate([f[:, :2], h[:, 2:]], axis=1)
    m = np.mean(g, axis=0)
    h = np.exp(-np.square(g)) + m
annotate.output_tensors("node", {"y": h}, export_with="jit")
'''


def best_of(repeat: int, run: Callable[[], float]) -> float:
    return min(run() for _ in range(repeat))


def count_ops(trace: Any) -> int:
    """fx call nodes recorded for the cell's NumPy calls (casts added by the dtype pass excluded)."""
    graph = trace.nodes["node"].graph.graph
    calls = [n for n in graph.nodes if n.op in ("call_function", "call_method")]
    return sum(1 for n in calls if not facts(n).cast)


def time_eager(source: str, x: np.ndarray) -> float:
    code = compile(source, "<eager-cell>", "exec")
    namespace = {"np": np, "annotate": ln.annotate, "x": x}
    start = time.perf_counter()
    exec(code, namespace)
    return time.perf_counter() - start


def time_ours(source: str, x: np.ndarray, profile: str) -> tuple[float, float]:
    """(record seconds, finish seconds) for one ``trace_cell``."""
    finish = _session.NodeBuilder.finish
    spent = {"finish": 0.0}

    def timed_finish(self: Any) -> Any:
        start = time.perf_counter()
        try:
            return finish(self)
        finally:
            spent["finish"] += time.perf_counter() - start

    _session.NodeBuilder.finish = timed_finish  # type: ignore[method-assign]
    try:
        start = time.perf_counter()
        ln.trace_cell(source, {"np": np, "x": x}, profile=profile)
        total = time.perf_counter() - start
    finally:
        _session.NodeBuilder.finish = finish  # type: ignore[method-assign]
    return total - spent["finish"], spent["finish"]


def leapp_available() -> bool:
    try:
        import leapp  # noqa: F401
    except ImportError:
        return False
    return True


def time_leapp(source: str, x: np.ndarray) -> tuple[float, list[str]]:
    """Seconds for ``leapp.start`` + the cell + ``leapp.stop``, and the warnings LEAPP logged."""
    import leapp

    from benchmarks.leapp_harness import _quiet, _reset_leapp_state

    code = compile(source, "<leapp-cell>", "exec")
    namespace = {"np": np, "annotate": leapp.annotate, "x": np.array(x, copy=True)}
    records: list[Any] = []
    _reset_leapp_state()
    try:
        with tempfile.TemporaryDirectory(prefix="leapp_bench_") as workdir, _quiet(records):
            start = time.perf_counter()
            leapp.start("graph", save_path=workdir, verbose=False)
            exec(code, namespace)
            leapp.stop()
            elapsed = time.perf_counter() - start
    finally:
        _reset_leapp_state()
    return elapsed, [r.getMessage() for r in records if r.levelno >= 30]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=22, help="loop iterations in the cell (~21 ops each)")
    parser.add_argument("--repeat", type=int, default=9, help="runs per measurement; the best is reported")
    parser.add_argument("--profile", action="store_true", help="print a cProfile of the recording path")
    args = parser.parse_args(argv)

    x = np.random.default_rng(0).standard_normal((8, 16)).astype(np.float32)
    source = CELL.replace("STEPS", str(args.steps))
    check = ln.trace_cell(source, {"np": np, "x": x}, profile="leapp")
    assert check.hazards == [], [h.message for h in check.hazards]
    n_ops = count_ops(check)

    rows: list[tuple[str, float, str]] = []
    eager = best_of(args.repeat, lambda: time_eager(source, x))
    rows.append(("NumPy eager", eager, ""))
    for profile in ("leapp", "full"):
        runs = [time_ours(source, x, profile) for _ in range(args.repeat)]
        record = min(r for r, _ in runs)
        finish = min(f for _, f in runs)
        total = min(r + f for r, f in runs)
        rows.append((f"leapp_notebook {profile}: record", record, "the cell under the tracer"))
        rows.append((f"leapp_notebook {profile}: finish", finish, "dtype check run + GraphModule"))
        rows.append((f"leapp_notebook {profile}: trace_cell", total, "record + finish"))
    leapp_time = None
    if leapp_available():
        timings = [time_leapp(source, x) for _ in range(args.repeat)]
        leapp_time = min(t for t, _ in timings)
        warnings = timings[0][1]
        rows.append(("LEAPP 0.7.2: start+cell+stop", leapp_time,
                     f"{len(warnings)} warning(s)" if warnings else "no warnings"))

    print(f"cell: {n_ops} recorded ops ({args.steps} loop steps), x float32 {x.shape}; best of {args.repeat}")
    print(f"{'':40} {'ms':>8} {'us/op':>8} {'LEAPP/this':>11}")
    for label, seconds, note in rows:
        ratio = f"{leapp_time / seconds:10.1f}x" if leapp_time else f"{'-':>11}"
        print(f"{label:40} {seconds * 1e3:8.2f} {seconds / n_ops * 1e6:8.2f} {ratio} {note}")
    if leapp_time is None:
        print("LEAPP 0.7.2 is not installed (pip install leapp==0.7.2, or the project's `bench` extra)")

    if args.profile:
        profiler = cProfile.Profile()
        profiler.enable()
        for _ in range(3):
            ln.trace_cell(source, {"np": np, "x": x}, profile="leapp")
        profiler.disable()
        pstats.Stats(profiler).sort_stats("tottime").print_stats(25)


if __name__ == "__main__":
    main()
