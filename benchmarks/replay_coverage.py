"""Which cells the recording cache does not cover: every parity case of tests/test_parity.py traced twice (profile
"full"), counting the calls the second trace builds and checks again (``replay.settle``) instead of replaying.

    python benchmarks/replay_coverage.py [--all] [--rows np.add,np.divide]

A re-traced cell (a re-run notebook cell, the probe's retrace) should replay every call: a call it builds again
costs 40-50 us instead of 3-8. Prints one line per lookup row with such a case (the first case; ``--all``: every
case), then the totals. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import collections
import sys
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

import leapp_notebook as ln  # noqa: E402
from leapp_notebook.tracing import replay  # noqa: E402


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--all", action="store_true", help="list every case that builds a call again, not one a row")
    parser.add_argument("--rows", default="", help="only these lookup rows, comma-separated (np.add,np.divide)")
    args = parser.parse_args(argv)
    rows = {row.strip() for row in args.rows.split(",") if row.strip()}
    import test_parity  # the cases live with the parity tests

    rebuilt = [0]
    settle = replay.settle

    def counting(*a: object, **k: object) -> object:
        rebuilt[0] += 1
        return settle(*a, **k)

    replay.settle = counting
    by_row: collections.Counter[str] = collections.Counter()
    total = 0
    warnings.simplefilter("ignore")
    try:
        for name, cases in test_parity.CASES.items():
            if rows and name not in rows:
                continue
            for case in cases:
                if case.expect != "parity":
                    continue
                inputs = {k: spec.draw(np.random.default_rng(0)) for k, spec in case.inputs.items()}
                try:
                    test_parity._run_eager(case, inputs)
                except Exception:  # noqa: BLE001 - NumPy refuses these inputs: nothing to trace
                    continue
                run = dict(inputs=inputs, outputs=list(case.outputs), profile="full")
                try:
                    ln.trace_cell(case.source, {"np": np, **case.consts}, **run)
                    rebuilt[0] = 0
                    ln.trace_cell(case.source, {"np": np, **case.consts}, **run)
                except Exception:  # noqa: BLE001 - a refused case is the parity tests' business
                    continue
                total += 1
                if rebuilt[0]:
                    by_row[name] += 1
                    if args.all or by_row[name] == 1:
                        print(f"{name:28} {rebuilt[0]} call(s) built again: {case.source.strip()[:90]!r}")
    finally:
        replay.settle = settle
    print(f"\n{total} cases traced twice; {sum(by_row.values())} build some call again on the re-trace "
          f"({len(by_row)} lookup rows)")


if __name__ == "__main__":
    main()
