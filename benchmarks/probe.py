"""Probe overhead: 64 probes of a ~450-op cell against 64 x (eager cell + graph forward).

The unavoidable cost is measured in the same run, on the same trace and the same kind of inputs: each
probe must re-run the cell eagerly and run the graph once, everything else (drawing inputs, comparing,
sensitivity, naming baked constants) is the probe's overhead. A second line probes the same cell with
one np.interp baked in (profile "leapp"), where the probe fails and spends one retrace naming the
constant. Prints figures; asserts nothing.

    python benchmarks/probe.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

import leapp_notebook as ln
from leapp_notebook.probe import draw_inputs

N_PROBES = 64

CELL = '''\
inputs = annotate.input_tensors("node", {"x": x_in, "w": w_in, "b": b_in})
h, w, b = inputs["x"], inputs["w"], inputs["b"]
for i in range(75):
    h = np.tanh(h * w + b)
    h = h - np.mean(h, axis=-1, keepdims=True)
    h = np.clip(h, -3.0, 3.0)
EXTRAannotate.output_tensors("node", {"y": h, "s": np.sum(h, axis=0)}, export_with="jit")
'''
BAKED = "h = h + np.interp(h, [-1.0, 0.0, 1.0], [0.0, 0.5, 2.0])\n"


def _namespace() -> dict:
    rng = np.random.default_rng(0)
    return {"np": np, "x_in": rng.standard_normal((8, 16)).astype(np.float32),
            "w_in": rng.standard_normal(16).astype(np.float32),
            "b_in": rng.standard_normal(16).astype(np.float32)}


def _unavoidable(trace: ln.Trace, inputs: list[dict]) -> float:
    """64 x (eager cell + graph forward), on pre-drawn inputs."""
    node = next(iter(trace.nodes.values()))
    tensors = [[torch.from_numpy(probe["node"][spec.name]) for spec in node.inputs] for probe in inputs]
    start = time.perf_counter()
    with torch.inference_mode():
        for probe, args in zip(inputs, tensors, strict=True):
            trace.run_eager(probe)
            node.graph(*args)
    return time.perf_counter() - start


class _Split:
    """Inside one probe run, the time spent in the eager cell and the graph forward (what a probe
    cannot avoid), in retracing, and everywhere else (the probe's own overhead)."""

    def __init__(self, trace: ln.Trace):
        self.trace, self.node = trace, next(iter(trace.nodes.values()))
        self.inside = self.retrace = 0.0

    def _timed(self, fn, slot):  # noqa: ANN001, ANN202
        def timed(*args):  # noqa: ANN002, ANN202
            start = time.perf_counter()
            try:
                return fn(*args)
            finally:
                setattr(self, slot, getattr(self, slot) + time.perf_counter() - start)
        return timed

    def __enter__(self) -> "_Split":
        self.trace.run_eager = self._timed(type(self.trace).run_eager.__get__(self.trace), "inside")
        self.trace.retrace = self._timed(type(self.trace).retrace.__get__(self.trace), "retrace")
        graph = self.node.graph
        graph.forward = self._timed(type(graph).forward.__get__(graph), "inside")
        return self

    def __exit__(self, *exc: object) -> None:
        del self.trace.run_eager, self.trace.retrace, self.node.graph.forward


def _measure(trace: ln.Trace, repeat: int) -> dict:
    """Best times over ``repeat`` paired runs (each measures the unavoidable cost and the probe back to
    back, which cancels most of the load other processes put on a shared machine)."""
    rng = np.random.default_rng(1)
    inputs = [draw_inputs(trace, rng) for _ in range(N_PROBES)]
    trace.probe(n=4, seed=0)  # warm-up: first calls into torch and the retrace path
    runs = []
    for attempt in range(repeat):
        if attempt % 2:  # alternate the order, so a drift in machine load does not favour either side
            base = _unavoidable(trace, inputs)
        with _Split(trace) as split:
            start = time.perf_counter()
            report = trace.probe(n=N_PROBES, seed=0)
            total = time.perf_counter() - start
        if not attempt % 2:
            base = _unavoidable(trace, inputs)
        runs.append(dict(base=base, probe=total, ratio=total / base, retrace=split.retrace,
                         ratio_no_retrace=(total - split.retrace) / base,
                         own=(total - split.inside - split.retrace) / N_PROBES, report=report))
    best = {key: min(run[key] for run in runs) for key in ("base", "probe", "retrace", "own")}
    for key in ("ratio", "ratio_no_retrace"):
        best[key] = float(np.median([run[key] for run in runs]))
    best["report"] = runs[-1]["report"]
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=11, help="paired runs of both measurements")
    args = parser.parse_args()
    print(f"{N_PROBES} probes, best of {args.repeat} paired runs. unavoidable = {N_PROBES} x (eager cell + "
          "graph forward), measured alone;\nratio = probe / unavoidable (median of the pairs), also "
          "without the one retrace;\nown = probe time outside the eager cell, the graph and the retrace, "
          "per probe")
    print(f"{'cell':<26}{'ops':>5}{'unavoidable':>13}{'probe':>11}{'ratio':>8}{'w/o retrace':>13}"
          f"{'own/probe':>11}{'retrace':>11}  verdict")
    for label, extra in (("clean (leapp profile)", ""), ("np.interp baked (leapp)", BAKED)):
        trace = ln.trace_cell(CELL.replace("EXTRA", extra), _namespace(), profile="leapp")
        node = next(iter(trace.nodes.values()))
        ops = sum(1 for n in node.graph.graph.nodes if n.op in ("call_function", "call_method"))
        m = _measure(trace, args.repeat)
        report = m["report"]
        verdict = "passed" if report.passed else f"failed, baked={report.baked}"
        print(f"{label:<26}{ops:>5}{m['base'] * 1e3:>10.1f} ms{m['probe'] * 1e3:>8.1f} ms{m['ratio']:>7.2f}x"
              f"{m['ratio_no_retrace']:>12.2f}x{m['own'] * 1e6:>8.0f} us{m['retrace'] * 1e3:>8.1f} ms"
              f"  {verdict}")


if __name__ == "__main__":
    main()
