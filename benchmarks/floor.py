"""How far the recording path is from the floor of tracing NumPy from Python: eager NumPy, a bare tracer and
leapp_notebook on the same cell of element-wise ufunc calls, in one process, taking turns.

    python benchmarks/floor.py [--steps 500] [--rounds 15]

The *bare tracer* is the least a tracer of this kind can do per call: an ``ndarray`` subclass whose
``__array_ufunc__`` computes on plain views, wraps the result, and appends one record; at the end, one fx node per
record (fx's C constructor, its argument bookkeeping, one ``meta`` entry). It has no call signature, no replay, no
names as fx gives them, no facts, no cell line, no checks and no hazards: it is a floor to measure against, not a
tracer. Its ratio to eager is what any Python-level hook plus an fx graph costs on this host; leapp_notebook's ratio
to the bare tracer is what everything the inspector adds costs. leapp_notebook's *record* row is the part of its
``trace_cell`` issue 11's record target reads (the cell under the tracer, without finishing the node), on a cell whose
eager cost per call is near the 1 µs/op that target was set against. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.fx
from torch.fx.immutable_collections import immutable_dict

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import trace_overhead  # noqa: E402

# Four ufunc calls per step: the cheapest calls NumPy has (0.7 µs each eagerly on 8 x 16), so a tracer's own cost per
# call shows undiluted (also instructions.py's and engines.py's ``ufuncs`` cell, at 500 steps)
OPS_PER_STEP = 4
BODY = "    a = h * 0.5\n    b = np.tanh(a)\n    c = b + a\n    h = c - h\n"
_NO_KWARGS = immutable_dict()


def cells(steps: int) -> tuple[str, str]:
    """(the cell leapp_notebook traces, the same loop for eager NumPy and the bare tracer)."""
    loop = f"for step in range({steps}):\n{BODY}"
    traced = f'h = annotate.input_tensors("node", {{"x": x}})\n{loop}annotate.output_tensors("node", {{"y": h}})\n'
    return traced, loop


class _Bare(np.ndarray):
    """The bare tracer's array: a record per result, nothing else."""

    __slots__ = ("_rec",)
    log: list[tuple[Any, tuple[Any, ...], list[Any]]] = []

    def __array_finalize__(self, obj: Any) -> None:
        self._rec = None

    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
        a = inputs[0]
        if type(a) is _Bare:
            plain_a, rec_a = a.view(np.ndarray), a._rec
        else:
            plain_a = rec_a = a
        if len(inputs) == 2:
            b = inputs[1]
            if type(b) is _Bare:
                plain_b, rec_b = b.view(np.ndarray), b._rec
            else:
                plain_b = rec_b = b
            result, record = ufunc(plain_a, plain_b), (ufunc, (rec_a, rec_b), [None])
        else:
            result, record = ufunc(plain_a), (ufunc, (rec_a,), [None])
        traced = result.view(_Bare)
        _Bare.log.append(record)
        traced._rec = record
        return traced


def bare_trace(loop: Any, x: np.ndarray) -> torch.fx.Graph:
    """Run ``loop`` (compiled) under the bare tracer and build its graph: one fx node per recorded call."""
    graph = torch.fx.Graph()
    start = x.view(_Bare)
    start._rec = (None, (), [graph.placeholder("x")])
    _Bare.log = []
    exec(loop, {"np": np, "h": start})  # noqa: S102 - the benchmark's own cell
    root, node_type, new, init = graph._root, torch.fx.Node, torch.fx.Node.__new__, torch._C._NodeBase.__init__
    for i, (ufunc, operands, built) in enumerate(_Bare.log):
        node = new(node_type)
        init(node, graph, f"n{i}", "call_function", torch.add, None)
        node._update_args_kwargs(tuple(o[2][0] if type(o) is tuple else o for o in operands), _NO_KWARGS)
        node.meta["leapp"] = ufunc
        root._prepend(node)
        built[0] = node
    return graph


def measure(steps: int, rounds: int) -> dict[str, float]:
    """Best µs per call of each of the three over ``rounds`` turns (the collector off while a trace runs and
    collected before each, as trace_cell and scaling.py do), and of leapp_notebook's *record* part of its
    trace_cell (the cell under the tracer, without finishing the node: what the bare tracer's figure compares with,
    less its graph building at the end)."""
    x = np.random.default_rng(0).standard_normal((8, 16)).astype(np.float32)
    traced, loop_source = cells(steps)
    loop = compile(loop_source, "<floor-cell>", "exec")
    ops = steps * OPS_PER_STEP

    def eager() -> None:
        exec(loop, {"np": np, "h": x})  # noqa: S102 - the benchmark's own cell

    def bare() -> None:
        gc.disable()
        try:
            bare_trace(loop, x)
        finally:
            gc.enable()

    records: list[float] = []

    def ours() -> None:
        record, _ = trace_overhead.time_ours(traced, x, "leapp")
        records.append(record)

    runs = {"NumPy eager": eager, "bare tracer": bare, "leapp_notebook trace_cell": ours}
    for run in runs.values():  # warm-up: imports, the recording cache, the first compilations
        run()
    records.clear()
    best = {name: float("inf") for name in runs}
    for _ in range(rounds):
        for name, run in runs.items():
            gc.collect()
            start = time.perf_counter()
            run()
            best[name] = min(best[name], time.perf_counter() - start)
    best["leapp_notebook record"] = min(records)
    return {name: seconds / ops * 1e6 for name, seconds in best.items()}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=500, help=f"loop steps, {OPS_PER_STEP} calls each (default 500)")
    parser.add_argument("--rounds", type=int, default=15, help="turns of the three, best kept (default 15)")
    args = parser.parse_args(argv)
    if args.steps < 1 or args.rounds < 1:
        parser.error("--steps and --rounds must be at least 1")
    figures = measure(args.steps, args.rounds)
    eager = figures["NumPy eager"]
    print(f"{args.steps * OPS_PER_STEP:,} element-wise ufunc calls on (8, 16) float32, best of {args.rounds}")
    print(f"{'':28}{'us/call':>10}{'x eager':>10}{'x bare':>10}")
    for name, value in figures.items():
        print(f"{name:28}{value:10.2f}{value / eager:10.1f}{value / figures['bare tracer']:10.2f}")


if __name__ == "__main__":
    main()
