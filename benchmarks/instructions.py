"""Instructions per recorded op, counted by Valgrind's callgrind: a measure of the recording path that the host's
speed does not move, for comparing two engines (a change of 1% shows; wall-clock figures on this host drift by 10%
within minutes).

    python benchmarks/instructions.py [--cells loop,straight] [--profiles leapp,full] [--traces 2] [--engine PATH ...]
                                      [--cache-sim [--last-level BYTES]] [--eager]

Each cell is traced twice untimed (filling the recording cache, as a re-run notebook cell finds it), then
``--traces`` times with callgrind's instrumentation switched on from outside (``callgrind_control``): Python's start
and the imports run uninstrumented. The count is whole ``trace_cell`` calls: recording, finishing the node, and the
collector's run when it is switched back on. Several ``--engine`` checkouts (``git worktree add /tmp/base
HEAD~3``) are measured in turn, each in its own process. Needs ``valgrind`` (Debian package ``valgrind``);
nothing is asserted.

Instructions are not time: ``--cache-sim`` adds callgrind's cache simulation (about twice as slow) and prints the
first-level instruction- and data-cache misses per op, and the last-level data misses (``--last-level 1048576``
simulates this host's 1 MB per-core L2 as the last level, instead of the host's shared L3). A change that removes
instructions but not misses moves the wall-clock figures less than the count suggests (issue 11's sixth round: 14%
fewer instructions, 3% fewer misses). The cells ``loop-20k`` and ``straight-20k`` are scaling.py's 20,000-op size:
what grows with the cell shows against ``loop`` and ``straight``. ``file:PATH`` measures a cell of one's own (one
kind of call in a loop, say), with ``x`` and the constants cell's arrays (MEAN, STD, W, LOW, HIGH, GOAL) defined.

``--eager`` also counts the cell run by NumPy alone (``annotate`` passing its values through, as scaling.py's eager
row runs it), once per cell, and prints each trace's count per op as a multiple of it: issue 11's record target
(at most 8x eager) read without the host's noise. Instructions are a proxy there too: eager NumPy's ufunc loops
and the tracer's interpreter loop do not run at the same instructions per cycle.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parent.parent
CELLS = ("loop", "straight", "small", "mixed", "torch", "constants", "ufuncs", "literals", "loop-20k", "straight-20k")
_COLLECTED = re.compile(r"Collected\s*:\s*(\d+)")
# callgrind's first-level cache misses (instruction reads, data reads, data writes), then its last-level data misses
MISSES = ("I1mr", "D1mr", "D1mw", "DLmr", "DLmw")


class Measured(NamedTuple):
    instructions: int  # for all the instrumented traces
    ops: int           # recorded ops per trace
    misses: dict[str, int] | None  # MISSES for all the traces, with --cache-sim


def literals_cell(lines: int = 300) -> str:
    """A straight-line cell whose every line has literals of its own (scales and offsets written out, as hand-tuned
    pre-processing is): three calls a line, two of them a call signature never seen before (the literal is part of
    it), so its first trace records and checks about 600 calls. Seeded by nothing: the same cell every time."""
    body = [f"h = np.tanh(h * {1 + i / 10007:.6f}) + {i / 20011:.6f}" for i in range(lines)]
    return "\n".join(['h = annotate.input_tensors("node", {"x": x})', *body,
                      'annotate.output_tensors("node", {"y": h}, export_with="jit")']) + "\n"


def cell(name: str) -> tuple[str, dict[str, object]]:
    """(source, namespace) of a named cell: the scaling benchmark's loop and straight-line cells at 1,995 ops, the
    loop cell at 210 ops (``small``), trace_overhead.py's mixed NumPy/torch node, torch post-processing cell
    (``torch``) and cell of constant arrays, 2,000
    element-wise ufunc calls (``ufuncs``), and 900 calls of 300 lines of literals of their own (``literals``)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import numpy as np
    import scaling
    import trace_overhead

    x = scaling.scaling_input()
    if name.startswith("file:"):  # a cell of one's own, with the constants cell's arrays
        return Path(name[5:]).read_text(encoding="utf-8"), {"np": np, "x": x, **trace_overhead.constants_objects()}
    if name in ("loop", "straight"):
        return scaling.cell_source(name, 95), {"np": np, "x": x}
    if name in ("loop-20k", "straight-20k"):  # scaling.py's 20,000-op size: what grows with the cell shows
        return scaling.cell_source(name.split("-")[0], 952), {"np": np, "x": x}
    if name == "small":
        return scaling.cell_source("loop", 10), {"np": np, "x": x}
    if name == "mixed":
        import torch

        x = np.random.default_rng(0).standard_normal((8, 4)).astype(np.float32)  # the policy takes 4 features
        return trace_overhead.MIXED_CELL.replace("STEPS", "22"), {"np": np, "torch": torch, "x": x,
                                                                 "policy": trace_overhead.mixed_policy()}
    if name == "torch":
        import torch

        x = np.random.default_rng(0).standard_normal((8, 4)).astype(np.float32)
        return trace_overhead.TORCH_CELL.replace("STEPS", "22"), {"np": np, "torch": torch, "x": x}
    if name == "literals":
        return literals_cell(), {"np": np, "x": x}
    if name == "ufuncs":  # element-wise ufuncs alone: the hook and the node, without NumPy's Python-level functions
        import floor

        return floor.cells(500)[0], {"np": np, "x": x}
    if name == "constants":
        return trace_overhead.CONSTANTS_CELL.replace("STEPS", "22"), {"np": np, "x": x,
                                                                     **trace_overhead.constants_objects()}
    raise ValueError(f"cell {name!r}: use one of {', '.join(CELLS)}")


def child(name: str, traces: int, profile: str = "leapp", first: bool = False, eager: bool = False) -> None:
    """Run in the measured process: warm up, say READY (with the tracer's checkout), wait for a line on stdin, trace,
    say DONE with the op count, wait for stdin to close. ``first``: the warm-up is an unrelated cell (engines.py's
    WARM_CELL) and the one measured trace is the cell's first. ``eager``: the measured part is ``traces`` runs of
    the cell by NumPy alone (``ln.annotate`` outside a trace passes its values through), the op count still the
    trace's. The tracer is imported first: the benchmark modules put their own checkout on the path."""
    import gc

    import numpy as np

    import leapp_notebook as ln
    from leapp_notebook.tracing.facts import facts

    def count(trace: object) -> int:
        graph = next(iter(trace.nodes.values())).graph.graph  # type: ignore[attr-defined]
        return sum(1 for n in graph.nodes if n.op in ("call_function", "call_method", "call_module")
                   and not facts(n).cast)

    source, namespace = cell(name)
    code = compile(source, "<eager-cell>", "exec")

    def run_eager() -> None:
        exec(code, {**namespace, "annotate": ln.annotate})  # noqa: S102 - the benchmark's own cell

    if first:
        from engines import WARM_CELL

        ln.trace_cell(WARM_CELL, {"np": np, "x": np.ones((3, 5), np.float64)}, profile=profile)
    else:
        for _ in range(2):
            trace = ln.trace_cell(source, dict(namespace), profile=profile)
        ops = count(trace)
        del trace
    gc.collect()
    if eager:
        for _ in range(2):
            run_eager()
        gc.collect()
    print(f"READY {Path(ln.__file__).resolve().parent.parent}", flush=True)
    sys.stdin.readline()
    if eager:
        for _ in range(traces):
            run_eager()
    elif first:
        ops = count(ln.trace_cell(source, dict(namespace), profile=profile))  # the count: 0.1% of the trace
    else:
        for _ in range(traces):
            ln.trace_cell(source, dict(namespace), profile=profile)
    print(f"DONE {ops}", flush=True)
    sys.stdin.read()


def parse_collected(text: str) -> int | None:
    """The instruction count valgrind reports for the instrumented part of the run ("Collected : N")."""
    found = _COLLECTED.findall(text)
    return int(found[-1]) if found else None


def parse_totals(text: str) -> dict[str, int]:
    """The event totals of a callgrind output file (its ``events:`` and ``totals:`` lines), by event name."""
    events = totals = None
    for line in text.splitlines():
        if line.startswith("events:"):
            events = line.split()[1:]
        elif line.startswith("totals:"):
            totals = [int(v) for v in line.split()[1:]]
    if events is None or totals is None:
        return {}
    return dict(zip(events, totals, strict=False))


def measure(engine: Path, name: str, traces: int, profile: str = "leapp", cache_sim: bool = False,
            first: bool = False, last_level: int | None = None, eager: bool = False) -> Measured:
    """Instructions for ``traces`` traces of cell ``name`` in ``profile`` with ``engine``'s tracer (``first``: its one
    first trace; ``eager``: ``traces`` runs of the cell by NumPy alone instead), its recorded ops per trace, and with
    ``cache_sim`` the cache misses (``MISSES``)."""
    env = dict(os.environ, PYTHONHASHSEED="0", PYTHONPATH=os.pathsep.join([str(engine), os.environ.get(
        "PYTHONPATH", "")]).rstrip(os.pathsep))
    with tempfile.TemporaryDirectory() as tmp:
        command = ["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={tmp}/out.%p",
                   *(["--cache-sim=yes"] if cache_sim else []),
                   *([f"--LL={last_level},16,64"] if cache_sim and last_level else []),
                   sys.executable, str(Path(__file__).resolve()), "--child", name, "--traces", str(traces),
                   "--profiles", profile, *(["--first"] if first else []), *(["--eager"] if eager else [])]
        process = subprocess.Popen(command, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True)
        try:
            assert process.stdin is not None and process.stdout is not None and process.stderr is not None
            ready = process.stdout.readline().split(maxsplit=1)
            if not ready or ready[0] != "READY":
                raise RuntimeError(f"{name}: the traced process did not start: {process.stderr.read()[-2000:]}")
            if Path(ready[1].strip()) != engine:
                raise RuntimeError(f"{name}: measured {ready[1].strip()}'s tracer, not {engine}'s")
            subprocess.run(["callgrind_control", "-i", "on", str(process.pid)], check=True, capture_output=True)
            process.stdin.write("go\n")
            process.stdin.flush()
            done = process.stdout.readline().split()
            subprocess.run(["callgrind_control", "-i", "off", str(process.pid)], check=True, capture_output=True)
            process.stdin.close()
            errors = process.stderr.read()
            process.wait(timeout=120)
        finally:
            if process.poll() is None:
                process.kill()
        if not done or done[0] != "DONE":
            raise RuntimeError(f"{name}: the traced process failed: {errors[-2000:]}")
        count = parse_collected(errors)
        if count is None:
            raise RuntimeError(f"{name}: valgrind reported no instruction count: {errors[-2000:]}")
        misses = None
        if cache_sim:
            totals = parse_totals(Path(tmp, f"out.{process.pid}").read_text())
            if not set(MISSES) <= set(totals):
                raise RuntimeError(f"{name}: callgrind's output holds no cache misses ({sorted(totals)})")
            misses = {event: totals[event] for event in MISSES}
        return Measured(count, int(done[1]), misses)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", default="loop,straight",
                        help=f"comma-separated, among {', '.join(CELLS)}, or file:PATH (a cell of one's own, with x "
                             "(8, 16) and the constants cell's arrays defined)")
    parser.add_argument("--traces", type=int, default=2, help="instrumented traces per cell (default 2)")
    parser.add_argument("--profiles", default="leapp", help="comma-separated, among leapp, full (default leapp)")
    parser.add_argument("--engine", action="append", default=[],
                        help="a checkout whose leapp_notebook to measure (repeatable; default this one)")
    parser.add_argument("--cache-sim", action="store_true",
                        help="simulate the caches too and print cache misses per op (about 2x slower)")
    parser.add_argument("--last-level", type=int, default=None, metavar="BYTES",
                        help="with --cache-sim, the simulated last-level cache's size (default: the host's; "
                             "1048576 is this host's per-core L2)")
    parser.add_argument("--first", action="store_true",
                        help="count each cell's first trace (after an unrelated warm-up cell) instead; --traces is 1")
    parser.add_argument("--eager", action="store_true",
                        help="also count the cell run by NumPy alone, and print each count as a multiple of it")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.first:
        args.traces = 1
    if args.child:
        child(args.child, args.traces, args.profiles, args.first, args.eager)
        return
    names = [c.strip() for c in args.cells.split(",") if c.strip()]
    for name in names:
        if name.startswith("file:") and not Path(name[5:]).is_file():
            parser.error(f"cell {name!r}: no such file")
        if name not in CELLS and not name.startswith("file:"):
            parser.error(f"cell {name!r}: use one of {', '.join(CELLS)}")
    profiles = [p.strip() for p in args.profiles.split(",") if p.strip()]
    for profile in profiles:
        if profile not in ("leapp", "full"):
            parser.error(f"profile {profile!r}: use leapp or full")
    if args.traces < 1:
        parser.error("--traces must be at least 1")
    if shutil.which("valgrind") is None or shutil.which("callgrind_control") is None:
        sys.exit("valgrind is not installed (Debian: apt-get install valgrind)")
    engines = [Path(e).resolve() for e in args.engine] or [ROOT]
    for engine in engines:
        if not (engine / "leapp_notebook" / "__init__.py").exists():
            parser.error(f"--engine {engine}: no leapp_notebook package there")
    print(f"{'cell':12} {'profile':7} {'engine':40} {'ops':>6} {'instructions/trace':>19} {'per op':>9}"
          + ("".join(f" {event + '/op':>10}" for event in MISSES) if args.cache_sim else ""))
    def row(name: str, profile: str, engine: str, ops: int, per_trace: float, misses: dict[str, int] | None,
            tail: str = "") -> None:
        label = Path(name[5:]).stem if name.startswith("file:") else name
        print(f"{label[:12]:12} {profile:7} {engine[-40:]:40} {ops:>6,} {per_trace:>19,.0f} {per_trace / ops:>9,.0f}"
              + ("".join(f" {misses[e] / args.traces / ops:>10,.0f}" for e in MISSES) if misses else "") + tail,
              flush=True)

    for name in names:
        eager = None
        if args.eager:  # NumPy alone, once per cell (the engine only lends ln.annotate)
            count, ops, misses = measure(engines[0], name, args.traces, cache_sim=args.cache_sim,
                                         last_level=args.last_level, eager=True)
            eager = count / args.traces
            row(name, "-", "NumPy eager", ops, eager, misses)
        for profile in profiles:
            first = None
            for engine in engines:
                count, ops, misses = measure(engine, name, args.traces, profile, args.cache_sim, args.first,
                                               args.last_level)
                per_trace = count / args.traces
                change = "" if first is None else f"  {per_trace / first - 1:+.1%}"
                first = per_trace if first is None else first
                row(name, profile, str(engine), ops, per_trace, misses,
                    (f"  {per_trace / eager:.2f}x eager" if eager else "") + change)


if __name__ == "__main__":
    main()
