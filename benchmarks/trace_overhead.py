"""Tracing overhead: a ~450-op NumPy cell run eagerly, traced by leapp_notebook (both profiles), and
traced by the real LEAPP 0.7.2 when it is installed, in one run. Then the same for a mixed NumPy/torch
node (NumPy pre-processing, a 3-layer MLP policy, post-processing in torch and back in NumPy), and for a cell of
constant array operands (observation normalization and a linear policy in NumPy: a mean, a scale, weights,
bounds and a goal from outside the cell).

    python benchmarks/trace_overhead.py [--steps 30] [--repeat 9] [--profile] [--no-mixed] [--no-constants]

Figures are microseconds per recorded op (the cell's NumPy calls that end up in the graph), best of
``--repeat`` rounds in which the series take turns (eager, each profile, LEAPP), so the host's drifting speed
touches them alike; the first table ends with each profile's record time over eager NumPy's (issue 11's record
target). For LEAPP the timed work is what its tracing does: ``leapp.start`` -> the cell ->
``leapp.stop`` (building and exporting the model happens later, in ``compile_graph``, not timed). For
leapp_notebook the timed work is ``trace_cell``, split into *record* (the cell running under the
tracer, comparable to LEAPP's tracing) and *finish* (checking every dtype against NumPy by running the
graph once, and building the ``GraphModule``, which LEAPP defers to ``compile_graph``). ``--profile``
prints a cProfile of the recording path. Nothing is asserted: this script prints figures.

In the mixed cell a module call counts as one op (LEAPP flattens the MLP into its five functionals; the
figure divides by the cell's logical op count for both tracers, so the comparison is per op of the cell).
The crossings ``torch.from_numpy`` and ``.numpy()`` are not ops (LEAPP records nothing for them). While
leapp_notebook cannot trace the node (it refuses it, or loses the chain at ``torch.from_numpy``), its rows
say "not supported yet".
"""

from __future__ import annotations

import argparse
import cProfile
import gc
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


# A mixed node: NumPy observation pre-processing, a 3-layer MLP policy, action post-processing in torch
# and back in NumPy. Ops per step: sub, mul, clip, 2 getitem, tanh, concatenate (NumPy), the policy (one
# module call), tanh, mul (torch), add (NumPy): 11.
MIXED_CELL = '''\
h = annotate.input_tensors("node", {"x": x})
for step in range(STEPS):
    o = np.clip((h - 0.1) * 2.0, -5.0, 5.0)
    o = np.concatenate([o[:, :2], np.tanh(o[:, 2:])], axis=1)
    t = torch.from_numpy(o)
    with torch.no_grad():
        a = policy(t)
    a = torch.tanh(a) * 0.5
    h = a.numpy() + h
annotate.output_tensors("node", {"y": h}, export_with="jit")
'''
MIXED_OPS_PER_STEP = 11

# Action post-processing in torch (after ``torch.from_numpy``): element-wise math, a reduction with dim/keepdim,
# slicing, a concatenation of a list of tensors, clamping. Ops per step: tanh, mul, add, clamp, 2 getitem, cat, mean,
# sub: 9, all on the node's own tensors (the recorder's fast path, docs/architecture.md).
TORCH_CELL = '''\
h = annotate.input_tensors("node", {"x": x})
t = torch.from_numpy(h)
for step in range(STEPS):
    a = torch.tanh(t) * 0.5 + t
    b = torch.clamp(a, -1.0, 1.0)
    c = torch.cat([b[:, :2], t[:, 2:]], dim=1)
    t = c - c.mean(dim=0, keepdim=True)
h = t.numpy()
annotate.output_tensors("node", {"y": h}, export_with="jit")
'''
TORCH_OPS_PER_STEP = 9

# Observation normalization and a linear policy written in NumPy with constant arrays from outside the cell (a
# mean, a scale, weights, bounds, a goal): the calls whose operands are plain arrays. Ops per step: sub, div,
# matmul, clip, concatenate, sum, mul, add: 8.
CONSTANTS_CELL = '''\
h = annotate.input_tensors("node", {"x": x})
for step in range(STEPS):
    o = (h - MEAN) / STD
    a = np.clip(o @ W, LOW, HIGH)
    g = np.concatenate([a, GOAL], axis=1)
    h = h + g.sum(axis=1, keepdims=True) * 0.01
annotate.output_tensors("node", {"y": h}, export_with="jit")
'''


def constants_objects(rows: int = 8, columns: int = 16) -> dict[str, Any]:
    rng = np.random.default_rng(2)
    return {"MEAN": rng.standard_normal(columns).astype(np.float32),
            "STD": rng.uniform(0.5, 2.0, columns).astype(np.float32),
            "W": rng.standard_normal((columns, 4)).astype(np.float32),
            "LOW": np.full(4, -1.0, np.float32), "HIGH": np.full(4, 1.0, np.float32),
            "GOAL": np.zeros((rows, 2), np.float32)}


def mixed_policy() -> Any:
    import torch
    from torch import nn

    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 4)).eval()


def in_turns(repeat: int, runs: dict[str, Callable[[], Any]]) -> dict[str, list[Any]]:
    """Every run's results over ``repeat`` rounds, the runs taking turns within each round (as floor.py's): a
    change in the host's speed, which moves eager NumPy's best by 10-80% here from minute to minute, touches every
    series alike, so the ratios of their bests are read at one moment. Each turn runs its series once untimed
    first: the timed run finds the caches warm with its own code and data, as a series run many times in a row
    does (measured cold, right after another series, eager NumPy's 462-op cell takes about 1.5 us/op instead of
    about 1.05, and the ratios to it shrink by a fifth)."""
    results: dict[str, list[Any]] = {name: [] for name in runs}
    for _ in range(repeat):
        for name, run in runs.items():
            gc.collect()  # outside the clock: no run pays for the garbage of the one before
            run()
            results[name].append(run())
    return results


def count_ops(trace: Any) -> int:
    """fx call nodes recorded for the cell's NumPy calls (casts added by the dtype pass excluded)."""
    graph = trace.nodes["node"].graph.graph
    calls = [n for n in graph.nodes if n.op in ("call_function", "call_method")]
    return sum(1 for n in calls if not facts(n).cast)


def time_eager(source: str, x: np.ndarray, objects: dict[str, Any] | None = None) -> float:
    code = compile(source, "<eager-cell>", "exec")
    namespace = {"np": np, "annotate": ln.annotate, "x": x, **(objects or {})}
    start = time.perf_counter()
    exec(code, namespace)
    return time.perf_counter() - start


class MethodTimer:
    """Adds up the time ``owner.name`` takes while the timer is entered (a timing wrapper in its place, the method
    restored on exit); ``seconds`` is None when ``owner`` has no such callable (an older engine)."""

    def __init__(self, owner: Any, name: str) -> None:
        self.owner, self.name = owner, name
        self.original = getattr(owner, name, None) if owner is not None else None
        self.seconds: float | None = 0.0 if callable(self.original) else None

    def __enter__(self) -> "MethodTimer":
        if self.seconds is not None:
            original = self.original

            def timed(*args: Any, **kwargs: Any) -> Any:
                start = time.perf_counter()
                try:
                    return original(*args, **kwargs)
                finally:
                    self.seconds += time.perf_counter() - start

            setattr(self.owner, self.name, timed)
        return self

    def __exit__(self, *exc: object) -> None:
        if self.seconds is not None:
            setattr(self.owner, self.name, self.original)


def time_ours(source: str, x: np.ndarray, profile: str,
              objects: dict[str, Any] | None = None) -> tuple[float, float]:
    """(record seconds, finish seconds) for one ``trace_cell``."""
    with MethodTimer(_session.NodeBuilder, "finish") as finish:
        start = time.perf_counter()
        ln.trace_cell(source, {"np": np, "x": x, **(objects or {})}, profile=profile)
        total = time.perf_counter() - start
    return total - finish.seconds, finish.seconds


def leapp_available() -> bool:
    try:
        import leapp  # noqa: F401
    except ImportError:
        return False
    return True


def time_leapp(source: str, x: np.ndarray, objects: dict[str, Any] | None = None) -> tuple[float, list[str]]:
    """Seconds for ``leapp.start`` + the cell + ``leapp.stop``, and the warnings LEAPP logged."""
    import leapp

    from benchmarks.leapp_harness import _quiet, _reset_leapp_state

    code = compile(source, "<leapp-cell>", "exec")
    namespace = {"np": np, "annotate": leapp.annotate, "x": np.array(x, copy=True), **(objects or {})}
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
    parser.add_argument("--no-mixed", action="store_true", help="skip the mixed NumPy/torch policy cell")
    parser.add_argument("--no-constants", action="store_true", help="skip the cell of constant array operands")
    parser.add_argument("--no-torch", action="store_true", help="skip the torch post-processing cell")
    args = parser.parse_args(argv)

    x = np.random.default_rng(0).standard_normal((8, 16)).astype(np.float32)
    source = CELL.replace("STEPS", str(args.steps))
    check = ln.trace_cell(source, {"np": np, "x": x}, profile="leapp")
    assert check.hazards == [], [h.message for h in check.hazards]
    n_ops = count_ops(check)

    rows: list[tuple[str, float, str]] = []
    turns: dict[str, Callable[[], Any]] = {"eager": lambda: time_eager(source, x),
                                           "leapp": lambda: time_ours(source, x, "leapp"),
                                           "full": lambda: time_ours(source, x, "full")}
    if leapp_available():
        turns["LEAPP"] = lambda: time_leapp(source, x)
    results = in_turns(args.repeat, turns)
    eager = min(results["eager"])
    rows.append(("NumPy eager", eager, ""))
    records = {}
    for profile in ("leapp", "full"):
        runs = results[profile]
        record = records[profile] = min(r for r, _ in runs)
        finish = min(f for _, f in runs)
        total = min(r + f for r, f in runs)
        rows.append((f"leapp_notebook {profile}: record", record, "the cell under the tracer"))
        rows.append((f"leapp_notebook {profile}: finish", finish, "dtype check run + GraphModule"))
        rows.append((f"leapp_notebook {profile}: trace_cell", total, "record + finish"))
    leapp_time = None
    if "LEAPP" in results:
        timings = results["LEAPP"]
        leapp_time = min(t for t, _ in timings)
        warnings = timings[0][1]
        rows.append(("LEAPP 0.7.2: start+cell+stop", leapp_time,
                     f"{len(warnings)} warning(s)" if warnings else "no warnings"))

    print(f"cell: {n_ops} recorded ops ({args.steps} loop steps), x float32 {x.shape}; best of {args.repeat}, "
          "the series taking turns")
    print(f"{'':40} {'ms':>8} {'us/op':>8} {'LEAPP/this':>11}")
    for label, seconds, note in rows:
        ratio = f"{leapp_time / seconds:10.1f}x" if leapp_time else f"{'-':>11}"
        print(f"{label:40} {seconds * 1e3:8.2f} {seconds / n_ops * 1e6:8.2f} {ratio} {note}")
    if leapp_time is None:
        print("LEAPP 0.7.2 is not installed (pip install leapp==0.7.2, or the project's `bench` extra)")
    # issue 11's record target: at most 8 us/op where eager NumPy runs this cell at about 1 us/op
    print("record / eager: " + ", ".join(f"{profile} {records[profile] / eager:.2f}x" for profile in records)
          + f" (eager {eager / n_ops * 1e6:.2f} us/op)")

    if args.profile:
        profiler = cProfile.Profile()
        profiler.enable()
        for _ in range(3):
            ln.trace_cell(source, {"np": np, "x": x}, profile="leapp")
        profiler.disable()
        pstats.Stats(profiler).sort_stats("tottime").print_stats(25)
    if not args.no_mixed:
        mixed(args.steps, args.repeat)
    if not args.no_torch:
        torch_cell(args.steps, args.repeat)
    if not args.no_constants:
        constants(args.steps, args.repeat)


def leapp_graph_calls(source: str, x: np.ndarray, objects: dict[str, Any]) -> int | None:
    """How many call nodes LEAPP's compiled graph holds for ``source`` (the MLP flattened), or None."""
    from benchmarks.leapp_harness import run_leapp

    res = run_leapp(source, {"x": x}, objects=objects)
    graph = res["graphs"].get("node")
    return None if graph is None else graph.count("= call_")


def ours_unsupported(source: str, x: np.ndarray, objects: dict[str, Any]) -> str | None:
    """Why leapp_notebook cannot trace a cell yet: a TraceError, hazards, or a graph that differs from the eager
    cell on a fresh input (the mixed node's chain lost at ``torch.from_numpy`` without a hazard); None when it can."""
    import torch

    try:
        check = ln.trace_cell(source, {"np": np, "x": x, **objects}, profile="leapp")
    except Exception as exc:  # noqa: BLE001 - reported as a row, this script never fails on it
        return f"{type(exc).__name__}: {str(exc).splitlines()[0][:80]}"
    if check.hazards:
        kinds = sorted({f"{h.kind} (line {h.line})" for h in check.hazards})
        return "hazards: " + ", ".join(kinds)
    fresh = np.random.default_rng(1).standard_normal(x.shape).astype(x.dtype)
    namespace = {"np": np, "annotate": ln.annotate, "x": fresh.copy(), **objects}
    exec(compile(source, "<eager-cell>", "exec"), namespace)
    with torch.no_grad():
        got = check.nodes["node"].graph(torch.from_numpy(fresh))[0]
    if not np.allclose(np.asarray(got), np.asarray(namespace["h"]), rtol=1e-4, atol=1e-5):
        return "its graph differs from the eager cell on a fresh input: the chain is lost at torch.from_numpy"
    return None


def mixed(steps: int, repeat: int) -> None:
    """The mixed NumPy/torch policy node: us per op of the cell for leapp_notebook and LEAPP 0.7.2."""
    import torch

    x = np.random.default_rng(0).standard_normal((8, 4)).astype(np.float32)
    objects = {"torch": torch, "policy": mixed_policy()}
    source = MIXED_CELL.replace("STEPS", str(steps))
    _other_cell(f"mixed cell: {steps * MIXED_OPS_PER_STEP} ops of the cell ({steps} steps x {MIXED_OPS_PER_STEP}, "
                f"a module call is one op), x float32 {x.shape}, 3-layer MLP policy", "NumPy+torch eager", source, x,
                objects, steps * MIXED_OPS_PER_STEP, repeat, "the MLP flattened")


def torch_cell(steps: int, repeat: int) -> None:
    """The torch post-processing cell: us per op of the cell for leapp_notebook and LEAPP 0.7.2."""
    import torch

    x = np.random.default_rng(0).standard_normal((8, 4)).astype(np.float32)
    source = TORCH_CELL.replace("STEPS", str(steps))
    _other_cell(f"torch cell: {steps * TORCH_OPS_PER_STEP} ops of the cell ({steps} steps x {TORCH_OPS_PER_STEP}), "
                f"x float32 {x.shape}, torch after torch.from_numpy", "NumPy+torch eager", source, x,
                {"torch": torch}, steps * TORCH_OPS_PER_STEP, repeat, "")


def constants(steps: int, repeat: int) -> None:
    """The cell of constant array operands: us per recorded op for leapp_notebook and LEAPP 0.7.2."""
    x = np.random.default_rng(0).standard_normal((8, 16)).astype(np.float32)
    objects = constants_objects()
    source = CONSTANTS_CELL.replace("STEPS", str(steps))
    n_ops = count_ops(ln.trace_cell(source, {"np": np, "x": x, **objects}))
    _other_cell(f"constants cell: {n_ops} recorded ops ({steps} steps), x float32 {x.shape}, six constant arrays",
                "NumPy eager", source, x, objects, n_ops, repeat, "")


def _other_cell(title: str, eager_label: str, source: str, x: np.ndarray, objects: dict[str, Any], n_ops: int,
                repeat: int, leapp_note: str) -> None:
    """One table: eager, both profiles (record and trace_cell), LEAPP 0.7.2, us per op of ``n_ops``."""
    time_eager(source, x, objects)  # torch's first calls are slow: warm up outside the measurement
    why = ours_unsupported(source, x, objects)
    turns: dict[str, Callable[[], Any]] = {"eager": lambda: time_eager(source, x, objects)}
    if why is None:
        turns["leapp"] = lambda: time_ours(source, x, "leapp", objects)
        turns["full"] = lambda: time_ours(source, x, "full", objects)
    if leapp_available():
        turns["LEAPP"] = lambda: time_leapp(source, x, objects)
    results = in_turns(repeat, turns)
    rows: list[tuple[str, float | None, str]] = [(eager_label, min(results["eager"]), "")]
    for profile in ("leapp", "full"):
        if why is not None:
            rows.append((f"leapp_notebook {profile}: trace_cell", None, f"not supported yet ({why})"))
            continue
        runs = results[profile]
        rows.append((f"leapp_notebook {profile}: record", min(r for r, _ in runs), "the cell under the tracer"))
        rows.append((f"leapp_notebook {profile}: trace_cell", min(r + f for r, f in runs), "record + finish"))
    leapp_time = None
    if "LEAPP" in results:
        timings = results["LEAPP"]
        leapp_time = min(t for t, _ in timings)
        calls = leapp_graph_calls(source, x, objects)
        rows.append(("LEAPP 0.7.2: start+cell+stop", leapp_time,
                     f"{calls} graph calls" + (f" ({leapp_note})" if leapp_note else "") if calls is not None else ""))

    print(f"\n{title}; best of {repeat}, the series taking turns")
    print(f"{'':40} {'ms':>8} {'us/op':>8} {'LEAPP/this':>11}")
    for label, seconds, note in rows:
        if seconds is None:
            print(f"{label:40} {'-':>8} {'-':>8} {'-':>11} {note}")
            continue
        ratio = f"{leapp_time / seconds:10.1f}x" if leapp_time else f"{'-':>11}"
        print(f"{label:40} {seconds * 1e3:8.2f} {seconds / n_ops * 1e6:8.2f} {ratio} {note}")
    if leapp_time is None:
        print("LEAPP 0.7.2 is not installed (pip install leapp==0.7.2, or the project's `bench` extra)")


if __name__ == "__main__":
    main()
