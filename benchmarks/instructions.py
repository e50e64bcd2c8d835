"""Instructions per recorded op, counted by Valgrind's callgrind: a measure of the recording path that the host's
speed does not move, for comparing two engines (a change of 1% shows; wall-clock figures on this host drift by 10%
within minutes).

    python benchmarks/instructions.py [--cells loop,straight] [--profiles leapp,full] [--traces 2] [--engine PATH ...]

Each cell is traced twice untimed (filling the recording cache, as a re-run notebook cell finds it), then
``--traces`` times with callgrind's instrumentation switched on from outside (``callgrind_control``): Python's start
and the imports run uninstrumented. The count is whole ``trace_cell`` calls: recording, finishing the node, and the
collector's run when it is switched back on. Several ``--engine`` checkouts (``git worktree add /tmp/base
HEAD~3``) are measured in turn, each in its own process. Needs ``valgrind`` (Debian package ``valgrind``);
nothing is asserted.
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

ROOT = Path(__file__).resolve().parent.parent
CELLS = ("loop", "straight", "small", "mixed", "constants")
_COLLECTED = re.compile(r"Collected\s*:\s*(\d+)")


def cell(name: str) -> tuple[str, dict[str, object]]:
    """(source, namespace) of a named cell: the scaling benchmark's loop and straight-line cells at 1,995 ops, the
    loop cell at 210 ops (``small``), and trace_overhead.py's mixed NumPy/torch node and cell of constant arrays."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import numpy as np
    import scaling
    import trace_overhead

    x = scaling.scaling_input()
    if name in ("loop", "straight"):
        return scaling.cell_source(name, 95), {"np": np, "x": x}
    if name == "small":
        return scaling.cell_source("loop", 10), {"np": np, "x": x}
    if name == "mixed":
        import torch

        x = np.random.default_rng(0).standard_normal((8, 4)).astype(np.float32)  # the policy takes 4 features
        return trace_overhead.MIXED_CELL.replace("STEPS", "22"), {"np": np, "torch": torch, "x": x,
                                                                 "policy": trace_overhead.mixed_policy()}
    if name == "constants":
        return trace_overhead.CONSTANTS_CELL.replace("STEPS", "22"), {"np": np, "x": x,
                                                                     **trace_overhead.constants_objects()}
    raise ValueError(f"cell {name!r}: use one of {', '.join(CELLS)}")


def child(name: str, traces: int, profile: str = "leapp") -> None:
    """Run in the measured process: warm up, say READY (with the tracer's checkout), wait for a line on stdin, trace,
    say DONE with the op count, wait for stdin to close. The tracer is imported first: the benchmark modules put
    their own checkout on the path."""
    import leapp_notebook as ln
    from leapp_notebook.tracing.facts import facts

    source, namespace = cell(name)
    for _ in range(2):
        trace = ln.trace_cell(source, dict(namespace), profile=profile)
    graph = next(iter(trace.nodes.values())).graph.graph
    ops = sum(1 for n in graph.nodes if n.op in ("call_function", "call_method", "call_module") and not facts(n).cast)
    del trace, graph
    import gc

    gc.collect()
    print(f"READY {Path(ln.__file__).resolve().parent.parent}", flush=True)
    sys.stdin.readline()
    for _ in range(traces):
        ln.trace_cell(source, dict(namespace), profile=profile)
    print(f"DONE {ops}", flush=True)
    sys.stdin.read()


def parse_collected(text: str) -> int | None:
    """The instruction count valgrind reports for the instrumented part of the run ("Collected : N")."""
    found = _COLLECTED.findall(text)
    return int(found[-1]) if found else None


def measure(engine: Path, name: str, traces: int, profile: str = "leapp") -> tuple[int, int]:
    """(instructions for ``traces`` traces of cell ``name`` in ``profile``, recorded ops per trace) with ``engine``'s
    tracer."""
    env = dict(os.environ, PYTHONHASHSEED="0", PYTHONPATH=os.pathsep.join([str(engine), os.environ.get(
        "PYTHONPATH", "")]).rstrip(os.pathsep))
    with tempfile.TemporaryDirectory() as tmp:
        command = ["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={tmp}/out.%p",
                   sys.executable, str(Path(__file__).resolve()), "--child", name, "--traces", str(traces),
                   "--profiles", profile]
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
        return count, int(done[1])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", default="loop,straight", help=f"comma-separated, among {', '.join(CELLS)}")
    parser.add_argument("--traces", type=int, default=2, help="instrumented traces per cell (default 2)")
    parser.add_argument("--profiles", default="leapp", help="comma-separated, among leapp, full (default leapp)")
    parser.add_argument("--engine", action="append", default=[],
                        help="a checkout whose leapp_notebook to measure (repeatable; default this one)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(args.child, args.traces, args.profiles)
        return
    names = [c.strip() for c in args.cells.split(",") if c.strip()]
    for name in names:
        if name not in CELLS:
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
    print(f"{'cell':10} {'profile':7} {'engine':40} {'ops':>6} {'instructions/trace':>19} {'per op':>9}")
    for name in names:
        for profile in profiles:
            first = None
            for engine in engines:
                count, ops = measure(engine, name, args.traces, profile)
                per_trace = count / args.traces
                change = "" if first is None else f"  {per_trace / first - 1:+.1%}"
                first = per_trace if first is None else first
                print(f"{name:10} {profile:7} {str(engine)[-40:]:40} {ops:>6,} {per_trace:>19,.0f} "
                      f"{per_trace / ops:>9,.0f}{change}", flush=True)


if __name__ == "__main__":
    main()
