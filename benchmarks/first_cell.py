"""What a user waits for on a kernel's first ``%%leapp_trace``: the quickstart notebook's first traced cell (an
untraced ``np.interp``: a hazard with a one-click fix), run in a fresh Jupyter kernel after ``%load_ext`` and the
notebook's setup cell, timed from the execute request to its reply. Also the same cell run a second time (a warm
kernel), and the ``%load_ext`` cell itself.

    python benchmarks/first_cell.py [--engine DIR ...] [--think 0,3] [--rounds 3]

``--think``: seconds between the setup cell's reply and the traced cell (a user reading the notebook; 0 is "Run
All"). Each round starts one kernel per engine and think time, taking turns. Everything the magic does is in the
figure: the trace, the mime bundle (graph model, text, HTML, ``dot``'s SVG) and, in a kernel, the widget controls.
Nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK = ROOT / "notebooks" / "quickstart.ipynb"


def notebook_cells() -> tuple[str, str]:
    """(the setup cell, the first %%leapp_trace cell) of the quickstart notebook."""
    cells = ["".join(c["source"]) for c in json.loads(NOTEBOOK.read_text())["cells"] if c["cell_type"] == "code"]
    setup = next(c for c in cells if c.startswith("%load_ext"))
    traced = next(c for c in cells if c.startswith("%%leapp_trace"))
    return setup, traced


def _run(client: Any, code: str, timeout: float = 120.0) -> float:
    """Seconds from sending ``code`` to its execute reply; raises when the cell fails."""
    start = time.perf_counter()
    msg_id = client.execute(code, store_history=False)
    while True:
        reply = client.get_shell_msg(timeout=timeout)
        if reply["parent_header"].get("msg_id") == msg_id:
            break
    seconds = time.perf_counter() - start
    if reply["content"]["status"] != "ok":
        raise RuntimeError(f"cell failed: {reply['content'].get('ename')}: {reply['content'].get('evalue')}")
    return seconds  # the cell's outputs wait on the iopub channel, unread: the next cell is sent at once


def measure(engine: Path, think: float) -> dict[str, float]:
    """Seconds of the setup cell, the first traced cell and the same cell again, in a new kernel whose Python
    path starts with ``engine``."""
    from jupyter_client.manager import start_new_kernel

    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(engine), os.environ.get("PYTHONPATH", "")]).rstrip(
        os.pathsep))
    manager, client = start_new_kernel(kernel_name="python3", env=env, cwd=str(NOTEBOOK.parent))
    try:
        setup, traced = notebook_cells()
        _run(client, "import leapp_notebook, os\n"  # fails unless the kernel imports the engine's tracer
                     f"assert os.path.dirname(os.path.dirname(leapp_notebook.__file__)) == {str(engine)!r}")
        figures = {"setup cell (%load_ext)": _run(client, setup)}
        time.sleep(think)
        figures["first %%leapp_trace"] = _run(client, traced)
        figures["the same cell again"] = _run(client, traced)
        return figures
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engine", action="append", type=Path,
                        help="a checkout to measure (repeatable; default this one)")
    parser.add_argument("--think", default="0,3", help="comma-separated seconds before the traced cell")
    parser.add_argument("--rounds", type=int, default=3, help="kernels per engine and think time (default 3)")
    args = parser.parse_args(argv)
    engines = [e.resolve() for e in (args.engine or [ROOT])]
    thinks = [float(t) for t in args.think.split(",")]
    if args.rounds < 1 or any(t < 0 for t in thinks):
        parser.error("--rounds must be at least 1 and --think at least 0")
    results: dict[tuple[Path, float], list[dict[str, float]]] = {(e, t): [] for e in engines for t in thinks}
    for number in range(args.rounds):
        for think in thinks:
            for engine in engines:
                print(f"  round {number + 1} of {args.rounds}: {engine}, think {think:g} s", file=sys.stderr)
                results[engine, think].append(measure(engine, think))
    print(f"ms, median of {args.rounds} kernels (each: setup cell, think time, the traced cell twice)")
    labels = list(next(iter(results.values()))[0])
    print(f"{'engine':40} {'think':>6} " + " ".join(f"{label:>24}" for label in labels))
    for (engine, think), runs in results.items():
        cells = [statistics.median(run[label] for run in runs) * 1e3 for label in labels]
        print(f"{str(engine)[-40:]:40} {think:>5g}s " + " ".join(f"{value:>24.0f}" for value in cells))


if __name__ == "__main__":
    main()
