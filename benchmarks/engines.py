"""Wall-clock µs per recorded op of several engines, measured in alternating processes: the check that a change
which ``instructions.py`` counts as cheaper is faster on the clock too.

    python benchmarks/engines.py --engine /tmp/before --engine . [--cells loop,straight] [--rounds 5] [--runs 25]

Each round starts one process per engine in turn (so a change in the host's speed touches every engine alike); a
process traces the cell three times untimed, then ``--runs`` times, and reports its best ``trace_cell`` (after a
``gc.collect()`` outside the clock, as ``scaling.py`` does). The table gives each round's figure, each engine's best
and median over the rounds, and the change of the medians against the first engine. Counting instructions alone
misleads: issue 11's sixth round measured a change with 5% fewer instructions that ran 10% slower (building each fx
node as its call is made, where the graph had built them in one batch). Nothing is asserted.

``--first`` times a cell's *first* trace instead, the one a user waits for after writing or changing a cell: each
process first traces an unrelated small cell (imports, lookup tables, torch's first calls), then the measured cell
once, so every call signature of it is recorded, checked and compiled for the first time. ``--leapp`` adds LEAPP 0.7.2
(``leapp.start`` + the cell + ``leapp.stop``, the ``bench`` extra) as one more row, measured the same way in processes
of its own, per op of the cell as leapp_notebook records it.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CELLS = ("loop", "straight", "small", "ufuncs", "mixed", "torch", "constants", "literals")
LEAPP = "LEAPP 0.7.2"  # --leapp: the row measured with LEAPP instead of a checkout


# what a --first process traces before the measured cell: none of the measured cells' call signatures
WARM_CELL = """\
h = annotate.input_tensors("node", {"x": x})
y = np.cos(h) * 3
annotate.output_tensors("node", {"y": y})
"""


def child(name: str, runs: int, first: bool = False, leapp: bool = False) -> None:
    """Run in the measured process: print the best µs/op of ``runs`` traces of cell ``name`` (``first``: of its one
    first trace) and the checkout measured (``leapp``: LEAPP 0.7.2's, and ``leapp``). The tracer is imported first
    (from ``PYTHONPATH``): the benchmark modules put their own checkout on the path."""
    import gc
    import time

    import numpy as np

    import leapp_notebook as ln

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import instructions
    import trace_overhead

    source, namespace = instructions.cell(name)
    if leapp:
        from scaling import LEAPP_RECURSION_LIMIT  # LEAPP's graph building recurses once per op of depth

        sys.setrecursionlimit(max(sys.getrecursionlimit(), LEAPP_RECURSION_LIMIT))
        objects = {k: v for k, v in namespace.items() if k not in ("np", "x")}
        warm = np.ones((3, 5), np.float64)
        trace_overhead.time_leapp(WARM_CELL, warm)
        best = float("inf")
        for _ in range(1 if first else runs + 3):
            gc.collect()
            best = min(best, trace_overhead.time_leapp(source, namespace["x"], objects)[0])
        ops = trace_overhead.count_ops(ln.trace_cell(source, dict(namespace)))  # after the clock: no warming
        print(f"{best / ops * 1e6:.4f} leapp", flush=True)
        return
    if first:
        ln.trace_cell(WARM_CELL, {"np": np, "x": np.ones((3, 5), np.float64)})
        gc.collect()
        start = time.perf_counter()
        trace = ln.trace_cell(source, dict(namespace))
        seconds = time.perf_counter() - start
        print(f"{seconds / trace_overhead.count_ops(trace) * 1e6:.4f} {Path(ln.__file__).resolve().parent.parent}",
              flush=True)
        return
    for _ in range(3):
        trace = ln.trace_cell(source, dict(namespace))
    ops = trace_overhead.count_ops(trace)
    del trace
    best = float("inf")
    for _ in range(runs):
        gc.collect()
        start = time.perf_counter()
        ln.trace_cell(source, dict(namespace))
        best = min(best, time.perf_counter() - start)
    print(f"{best / ops * 1e6:.4f} {Path(ln.__file__).resolve().parent.parent}", flush=True)


def measure(engine: Path | str, name: str, runs: int, first: bool = False) -> float:
    """Best µs per recorded op of ``runs`` traces of cell ``name`` with ``engine``'s tracer (or ``LEAPP``), in a new
    process (``first``: of the cell's first trace there)."""
    leapp = engine == LEAPP
    checkout = ROOT if leapp else engine
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(checkout), os.environ.get("PYTHONPATH", "")]).rstrip(
        os.pathsep))
    done = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--child", name, "--runs", str(runs),
                           *(["--first"] if first else []), *(["--leapp-child"] if leapp else [])],
                          capture_output=True, text=True, env=env)
    if done.returncode != 0:
        raise RuntimeError(f"{engine}, {name}: the measuring process failed: {done.stderr[-2000:]}")
    figure, measured = done.stdout.split()
    if leapp:
        if measured != "leapp":
            raise RuntimeError(f"{name}: the LEAPP process measured {measured}")
    elif Path(measured) != engine:
        raise RuntimeError(f"{name}: measured {measured}'s tracer, not {engine}'s")
    return float(figure)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engine", action="append", default=[],
                        help="a checkout to measure (repeatable, at least one; `git worktree add /tmp/before HEAD~3`)")
    parser.add_argument("--cells", default="loop,straight", help=f"comma-separated, among {', '.join(CELLS)}")
    parser.add_argument("--rounds", type=int, default=5, help="processes per engine, taking turns (default 5)")
    parser.add_argument("--runs", type=int, default=25, help="timed traces per process, best kept (default 25)")
    parser.add_argument("--first", action="store_true",
                        help="time each cell's first trace in a process (one per process; --runs is not used)")
    parser.add_argument("--leapp", action="store_true", help="add LEAPP 0.7.2 as one more row (the bench extra)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--leapp-child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.rounds < 1 or args.runs < 1:
        parser.error("--rounds and --runs must be at least 1")
    if args.child:
        child(args.child, args.runs, args.first, args.leapp_child)
        return
    names = [c.strip() for c in args.cells.split(",") if c.strip()]
    for name in names:
        if name not in CELLS:
            parser.error(f"cell {name!r}: use one of {', '.join(CELLS)}")
    engines: list[Path | str] = [Path(e).resolve() for e in args.engine] or [ROOT]
    for engine in engines:
        if not (Path(engine) / "leapp_notebook" / "__init__.py").exists():
            parser.error(f"--engine {engine}: no leapp_notebook package there")
    if args.leapp:
        if importlib.util.find_spec("leapp") is None:
            parser.error("--leapp: LEAPP 0.7.2 is not installed (pip install -e \".[bench]\")")
        engines.append(LEAPP)
    what = "first trace, us/op per round" if args.first else "us/op per round"
    print(f"{'cell':9} {'engine':40} {what:>{8 * args.rounds}} {'best':>8} {'median':>8}")
    for name in names:
        figures: dict[Path | str, list[float]] = {engine: [] for engine in engines}
        for round_ in range(args.rounds):
            print(f"  {name}: round {round_ + 1} of {args.rounds}", file=sys.stderr, flush=True)
            for engine in engines:
                figures[engine].append(measure(engine, name, args.runs, args.first))
        first = statistics.median(figures[engines[0]])
        for engine in engines:
            median = statistics.median(figures[engine])
            change = "" if engine == engines[0] else f"  {median / first:.1f}x the first" if engine == LEAPP \
                else f"  {median / first - 1:+.1%}"
            print(f"{name:9} {str(engine)[-40:]:40} {''.join(f'{v:8.2f}' for v in figures[engine])} "
                  f"{min(figures[engine]):8.2f} {median:8.2f}{change}", flush=True)


if __name__ == "__main__":
    main()
