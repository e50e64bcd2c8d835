"""Probe cost against the unavoidable work, and probe memory against one eager run, at three input sizes.

The unavoidable work of a probe is drawing its inputs (the way the probe draws them: every input on
probe 0, then one input per probe), re-running the cell eagerly (``trace.run_eager``) and running the
graph once. Everything else (comparing, sensitivity, naming baked constants) is the probe's overhead.

Two tables, one run:

1. a ~450-op cell with ~1 KB of inputs, 64 probes, clean and with one ``np.interp`` baked in (profile
   "leapp": the probe fails and spends one retrace naming the constant); ``own`` is the probe's time
   outside the eager cell, the graph and the retrace, per probe, measured inside the probe run;
   ``first`` is a fresh trace's first probe, which also generates and compiles the graph's ``forward`` (torch.fx
   does it on a module's first run): what a probe right after re-running the cell costs, against the same
   unavoidable work;
2. an elementwise cell (two float32 inputs, a few ufuncs and a reduction) at ~1 KB, 20 MB and 200 MB
   of inputs in total: probe and unavoidable seconds and their ratio, then the probe's peak memory
   against one eager run's peak, above the memory held once the trace and its inputs exist, both by
   tracemalloc (NumPy and Python allocations; torch's are invisible to it) and by the RSS high-water
   mark (everything). Every memory figure comes from a fresh subprocess (the peak RSS is reset once the
   trace exists, through /proc/self/clear_refs), run with a fixed glibc mmap threshold so that freed
   large blocks go back to the system instead of hiding the next peak.

Timings are the best of ``--repeat`` paired runs (the two measurements back to back, their order
alternating); ratio = best probe / best unavoidable, the probe run as a user runs it. The in-run ratio
and ``own`` come from a second probe run per attempt whose drawing, eager cell and graph are timed
inside it (immune to load drifting between two runs; those timers weigh on the 1 KB cells, which is why
the ratio is not taken from that run); the in-run ratio is the median over the runs.
Prints figures; asserts nothing.

    python benchmarks/probe.py [--sizes 1k,20m,200m] [--quick] [--repeat 5] [--threads 1]

On a machine other processes load, torch's intra-op threads make the graph's time swing by several times
from run to run (a parallel op waits for its slowest thread); ``--threads 1`` gives steadier figures.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import tracemalloc
from typing import Callable

import numpy as np
import torch

import leapp_notebook as ln
from leapp_notebook import probe as probe_module

DEEP_PROBES = 64
PROBES = {"1k": 64, "20m": 16, "200m": 8}  # probes per size: keeps the 200 MB case to a couple of minutes
SIZES = {"1k": 1_000, "20m": 20_000_000, "200m": 200_000_000}

DEEP_CELL = '''\
inputs = annotate.input_tensors("node", {"x": x_in, "w": w_in, "b": b_in})
h, w, b = inputs["x"], inputs["w"], inputs["b"]
for i in range(75):
    h = np.tanh(h * w + b)
    h = h - np.mean(h, axis=-1, keepdims=True)
    h = np.clip(h, -3.0, 3.0)
EXTRAannotate.output_tensors("node", {"y": h, "s": np.sum(h, axis=0)}, export_with="jit")
'''
BAKED = "h = h + np.interp(h, [-1.0, 0.0, 1.0], [0.0, 0.5, 2.0])\n"

ELEMENTWISE_CELL = '''\
inputs = annotate.input_tensors("node", {"x": x_in, "w": w_in})
x, w = inputs["x"], inputs["w"]
y = np.maximum(x * w + 0.5, 0.0) - np.abs(x) * 0.25
annotate.output_tensors("node", {"y": y, "s": np.sum(y, axis=-1)}, export_with="jit")
'''


def _deep_namespace() -> dict:
    rng = np.random.default_rng(0)
    return {"np": np, "x_in": rng.standard_normal((8, 16)).astype(np.float32),
            "w_in": rng.standard_normal(16).astype(np.float32),
            "b_in": rng.standard_normal(16).astype(np.float32)}


def _elementwise_namespace(total_bytes: int) -> dict:
    """Two float32 inputs of ``total_bytes`` together, rows of up to 1024 values."""
    elements = max(total_bytes // 8, 1)
    cols = min(1024, elements)
    shape = (elements // cols, cols)
    rng = np.random.default_rng(0)
    x = np.empty(shape, np.float32)
    w = np.empty(shape, np.float32)
    for out in (x, w):  # drawn row block by row block: no float64 copy of a 100 MB input
        for start in range(0, shape[0], 4096):
            out[start:start + 4096] = rng.standard_normal((min(4096, shape[0] - start), cols))
    return {"np": np, "x_in": x, "w_in": w}


def _make_trace(cell: str, size: str) -> ln.Trace:
    if cell == "elementwise":
        return ln.trace_cell(ELEMENTWISE_CELL, _elementwise_namespace(SIZES[size]), profile="leapp")
    return ln.trace_cell(DEEP_CELL.replace("EXTRA", BAKED if cell == "baked" else ""), _deep_namespace(),
                         profile="leapp")


def _input_bytes(trace: ln.Trace) -> int:
    return sum(probe_module.as_numpy(value).nbytes for node in trace.nodes.values()
               for value in node.sample_inputs.values())


# ------------------------------------------------------------------------------------------
# the unavoidable work, drawn the way the probe draws
# ------------------------------------------------------------------------------------------

class _Draws:
    """The probe's draw schedule (every input on probe 0, then input (j - 1) mod k alone), through the
    probe's own input machinery: preallocated buffers redrawn in place when the probe module has them,
    otherwise a fresh array per draw (the probe before buffers)."""

    def __init__(self, trace: ln.Trace):
        self.samplers = probe_module._samplers(trace, None)
        self.node = next(iter(trace.nodes.values()))
        buffers = getattr(probe_module, "_Inputs", None)
        self.buffers = None if buffers is None else buffers(trace, self.samplers)
        self.current: dict = {name: {} for name in trace.nodes}
        self.tensors: dict = {name: {} for name in trace.nodes}

    def draw(self, j: int, rng: np.random.Generator) -> tuple[dict, list]:
        indices = range(len(self.samplers)) if j == 0 else [(j - 1) % len(self.samplers)]
        if self.buffers is not None:
            for index in indices:
                self.buffers.draw(index, rng)
            current, tensors = self.buffers.arrays, self.buffers.tensors
        else:
            for index in indices:
                node, name, sampler = self.samplers[index]
                self.current[node.name][name] = value = sampler.draw(rng)
                self.tensors[node.name][name] = probe_module.as_tensor(value)
            current, tensors = self.current, self.tensors
        return current, [tensors[self.node.name][spec.name] for spec in self.node.inputs]


def _unavoidable(trace: ln.Trace, n: int) -> float:
    """n x (draw as the probe draws + eager cell + graph forward)."""
    draws = _Draws(trace)
    rng = np.random.default_rng(1)
    total = max(n, len(draws.samplers) + 1)
    start = time.perf_counter()
    for j in range(total):
        current, args = draws.draw(j, rng)
        with torch.no_grad(), np.errstate(all="ignore"):
            trace.run_eager(current)
        with torch.inference_mode():
            draws.node.graph(*args)
    return time.perf_counter() - start


class _Split:
    """Inside one probe run, the time spent in the eager cell and the graph forward, in drawing inputs,
    in retracing, and everywhere else (the probe's own overhead)."""

    def __init__(self, trace: ln.Trace):
        self.trace, self.node = trace, next(iter(trace.nodes.values()))
        self.inside = self.retrace = self.draw = 0.0
        sampler = probe_module._Sampler  # the probe's drawing: in place (fill) or a fresh array (draw)
        self.drawing = (sampler, "fill" if hasattr(sampler, "fill") else "draw")

    def _timed(self, fn, slot):  # noqa: ANN001, ANN202
        def timed(*args, **options):  # noqa: ANN002, ANN003, ANN202
            start = time.perf_counter()
            try:
                return fn(*args, **options)
            finally:
                setattr(self, slot, getattr(self, slot) + time.perf_counter() - start)
        return timed

    def __enter__(self) -> "_Split":
        self.trace.run_eager = self._timed(type(self.trace).run_eager.__get__(self.trace), "inside")
        self.trace.retrace = self._timed(type(self.trace).retrace.__get__(self.trace), "retrace")
        graph = self.node.graph
        graph.forward = self._timed(type(graph).forward.__get__(graph), "inside")
        cls, name = self.drawing
        self.original = getattr(cls, name)
        setattr(cls, name, self._timed(self.original, "draw"))
        return self

    def __exit__(self, *exc: object) -> None:
        del self.trace.run_eager, self.trace.retrace, self.node.graph.forward
        setattr(*self.drawing, self.original)


def _first_probe(make: Callable[[], ln.Trace], n: int, repeat: int) -> float:
    """Best time of a fresh trace's first probe over ``repeat`` fresh traces, after one untimed (the process's first
    calls into torch): what a user's probe right after re-running the cell costs, the graph's code generation on
    its first run included."""
    times = []
    for attempt in range(repeat + 1):
        trace = make()
        start = time.perf_counter()
        trace.probe(n=n, seed=0)
        if attempt:
            times.append(time.perf_counter() - start)
    return min(times)


def _time(trace: ln.Trace, n: int, repeat: int) -> dict:
    """Best times over ``repeat`` paired runs (the best of each filters out the load other processes add)
    and their ratio; the in-run ratio is the median over the runs."""
    trace.probe(n=2, seed=0)  # warm-up: first calls into torch and the retrace path
    runs = []
    for attempt in range(repeat):
        if attempt % 2:  # alternate the order, so a drift in machine load does not favour either side
            base = _unavoidable(trace, n)
        start = time.perf_counter()  # the probe as a user runs it: the ratio's numerator
        report = trace.probe(n=n, seed=0)
        total = time.perf_counter() - start
        if not attempt % 2:
            base = _unavoidable(trace, n)
        with _Split(trace) as split:  # a second run, its parts timed (the timers weigh on the 1 KB cells)
            start = time.perf_counter()
            trace.probe(n=n, seed=0)
            split_total = time.perf_counter() - start
        runs.append(dict(base=base, probe=total, retrace=split.retrace,
                         own=(split_total - split.inside - split.draw - split.retrace) / report.n,
                         in_run=split_total / (split.inside + split.draw), n=report.n,
                         verdict="passed" if report.passed else f"failed, baked={report.baked}"))
    best = {key: min(run[key] for run in runs) for key in ("base", "probe", "retrace", "own")}
    best["ratio"] = best["probe"] / best["base"]
    best["in_run"] = float(np.median([run["in_run"] for run in runs]))
    best["n"], best["verdict"] = runs[-1]["n"], runs[-1]["verdict"]
    return best


# ------------------------------------------------------------------------------------------
# memory, each figure in a fresh process
# ------------------------------------------------------------------------------------------

def _status_kb(field: str) -> int:
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"no {field} in /proc/self/status")


def _reset_peak_rss() -> bool:
    try:
        with open("/proc/self/clear_refs", "w", encoding="ascii") as clear:
            clear.write("5")  # reset the RSS high-water mark to the current RSS
        return True
    except OSError:
        return False


def _memory(trace: ln.Trace, what: str, n: int) -> dict:
    """Peak above the state once the trace and its inputs exist: tracemalloc and RSS, in bytes."""
    if what == "eager":
        inputs = probe_module.draw_inputs(trace, np.random.default_rng(1))
        with np.errstate(all="ignore"):
            trace.run_eager(inputs)  # warm-up; its outputs are dropped before the measurement
        run = lambda: trace.run_eager(inputs)  # noqa: E731
    else:
        trace.probe(n=1, seed=1)
        trace.last_probe = None
        run = lambda: trace.probe(n=n, seed=0)  # noqa: E731
    reset = _reset_peak_rss()
    base_rss = _status_kb("VmRSS")
    tracemalloc.start()
    tracemalloc.reset_peak()
    with np.errstate(all="ignore"):
        result = run()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    rss = (_status_kb("VmHWM") - base_rss) * 1024 if reset else None
    del result
    return {"tracemalloc": peak, "rss": rss}


def _worker(args: argparse.Namespace) -> None:
    if args.threads:
        torch.set_num_threads(args.threads)
    trace = _make_trace(args.cell, args.size)
    if args.worker == "time":
        result = _time(trace, args.n, args.repeat)
        if args.cell != "elementwise":
            result["first"] = _first_probe(lambda: _make_trace(args.cell, args.size), args.n, min(args.repeat, 7))
    else:
        result = _memory(trace, args.worker, args.n)
    result["bytes"] = _input_bytes(trace)
    result["ops"] = sum(1 for node in trace.nodes.values() for n in node.graph.graph.nodes
                        if n.op in ("call_function", "call_method"))
    print(json.dumps(result))


def _run_worker(worker: str, cell: str, size: str, n: int, repeat: int, threads: int | None) -> dict:
    env = dict(os.environ)
    if worker != "time":
        env["MALLOC_MMAP_THRESHOLD_"] = str(1 << 20)  # fixed: large freed blocks return to the system
    command = [sys.executable, __file__, "--worker", worker, "--cell", cell, "--size", size, "--n", str(n),
               "--repeat", str(repeat)] + (["--threads", str(threads)] if threads else [])
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _seconds(value: float) -> str:
    return f"{value * 1e3:.1f} ms" if value < 1 else f"{value:.2f} s"


def _mb(value: float | None) -> str:
    if value is None:
        return "n/a"
    return f"{value / 1e3:.0f} KB" if abs(value) < 1e6 else f"{value / 1e6:.1f} MB"


def _ratio(a: float | None, b: float | None) -> str:
    """a / b; n/a below 1 MB, where page granularity and the report's own objects are all there is."""
    return "n/a" if a is None or b is None or b < 1e6 else f"{a / b:.2f}x"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1k,20m,200m", help="comma-separated, among " + ",".join(SIZES))
    parser.add_argument("--repeat", type=int, default=None,
                        help="paired timing runs (default 25 at 1k, 7 at 20m, 3 at 200m)")
    parser.add_argument("--quick", action="store_true", help="1k and 20m only, 3 paired runs")
    parser.add_argument("--threads", type=int, default=None, help="torch intra-op threads (default: torch's)")
    parser.add_argument("--worker", choices=("time", "probe", "eager"), help=argparse.SUPPRESS)
    parser.add_argument("--cell", default="elementwise", help=argparse.SUPPRESS)
    parser.add_argument("--size", default="1k", help=argparse.SUPPRESS)
    parser.add_argument("--n", type=int, default=DEEP_PROBES, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        _worker(args)
        return
    sizes = ["1k", "20m"] if args.quick else [s.strip() for s in args.sizes.split(",") if s.strip()]
    unknown = [s for s in sizes if s not in SIZES]
    if unknown:
        parser.error(f"--sizes: unknown {unknown}; use {','.join(SIZES)}")

    def repeat(size: str) -> int:
        if args.repeat is not None:
            return args.repeat
        if args.quick or size == "200m":
            return 3
        return 25 if size == "1k" else 7  # a 1 KB probe takes milliseconds: its best of 7 still moves by 10%

    threads = args.threads or torch.get_num_threads()
    print(f"torch threads {threads}, cores {os.cpu_count()}, probe module {probe_module.__file__}")
    if "1k" in sizes:
        print(f"\n1. {DEEP_PROBES} probes of a ~450-op cell, ~1 KB of inputs; unavoidable = {DEEP_PROBES} x (draw "
              "+ eager cell + graph forward),\n   run apart; ratio = probe / unavoidable; in-run = probe / (draw + "
              "eager + graph) timed inside the probe run;\n   own = probe time outside drawing, the eager cell, the "
              "graph and the retrace, per probe;\n   first = a fresh trace's first probe (its graph's code generated "
              "and compiled on that first run), best of 7, / unavoidable")
        print(f"{'cell':<26}{'ops':>5}{'unavoidable':>13}{'probe':>11}{'ratio':>8}{'in-run':>8}{'own/probe':>11}"
              f"{'retrace':>11}{'first':>11}{'ratio':>8}  verdict")
        for label, cell in (("clean (leapp profile)", "deep"), ("np.interp baked (leapp)", "baked")):
            m = _run_worker("time", cell, "1k", DEEP_PROBES, repeat("1k"), args.threads)
            print(f"{label:<26}{m['ops']:>5}{m['base'] * 1e3:>10.1f} ms{m['probe'] * 1e3:>8.1f} ms"
                  f"{m['ratio']:>7.2f}x{m['in_run']:>7.2f}x{m['own'] * 1e6:>8.0f} us{m['retrace'] * 1e3:>8.1f} ms"
                  f"{m['first'] * 1e3:>8.1f} ms{m['first'] / m['base']:>7.2f}x  {m['verdict']}")
    print("\n2. elementwise cell (multiply, add, maximum, abs, subtract, a sum; two float32 inputs). Seconds: best of "
          "the paired runs;\n   memory: peak above the trace and its inputs (the probe's own input buffers included)")
    print(f"{'inputs':>10}{'n':>4}{'unavoidable':>13}{'probe':>11}{'ratio':>8}{'in-run':>8}"
          f"{'tracemalloc probe/eager':>26}{'ratio':>8}{'RSS probe/eager':>21}{'ratio':>8}")
    for size in sizes:
        n = PROBES[size]
        t = _run_worker("time", "elementwise", size, n, repeat(size), args.threads)
        p = _run_worker("probe", "elementwise", size, n, 1, args.threads)
        e = _run_worker("eager", "elementwise", size, n, 1, args.threads)
        mem_tm = f"{_mb(p['tracemalloc'])} / {_mb(e['tracemalloc'])}"
        mem_rss = f"{_mb(p['rss'])} / {_mb(e['rss'])}"
        print(f"{_mb(t['bytes']):>10}{t['n']:>4}{_seconds(t['base']):>13}{_seconds(t['probe']):>11}"
              f"{t['ratio']:>7.2f}x{t['in_run']:>7.2f}x{mem_tm:>26}{_ratio(p['tracemalloc'], e['tracemalloc']):>8}"
              f"{mem_rss:>21}{_ratio(p['rss'], e['rss']):>8}", flush=True)


if __name__ == "__main__":
    main()
