"""Real library code: ``transforms3d.quaternions`` traced from a cell, in both profiles.

For every function, either the graph equals eager NumPy on fresh inputs (*faithful*), or an ``error``
hazard points at the cell line that called into the library (*flagged*). A graph that disagrees with
NumPy without an error hazard is *silently wrong*, the one outcome rule one forbids. ``pytest -s``
prints the count per profile.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

import leapp_notebook as ln

quaternions = pytest.importorskip("transforms3d.quaternions")

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

N_FRESH = 8
CALL_LINE = 2  # every cell below makes its library call on line 2


@dataclass(frozen=True)
class LibraryCase:
    """A cell whose line 2 calls ``function``; ``inputs`` maps names to (shape, low, high)."""

    function: str
    source: str
    inputs: dict[str, tuple[tuple[int, ...], float, float]]


def _cell(call: str) -> str:
    return f"lib = quaternions\ny = {call}\n"


CASES = [
    LibraryCase("qmult", _cell("np.asarray(lib.qmult(q1, q2))"), {"q1": ((4,), -1, 1), "q2": ((4,), -1, 1)}),
    LibraryCase("qconjugate", _cell("lib.qconjugate(q)"), {"q": ((4,), -1, 1)}),
    LibraryCase("qnorm", _cell("np.asarray(lib.qnorm(q))"), {"q": ((4,), -1, 1)}),
    LibraryCase("qinverse", _cell("lib.qinverse(q)"), {"q": ((4,), -1, 1)}),
    LibraryCase("qisunit", _cell("np.asarray(lib.qisunit(q))"), {"q": ((4,), -1, 1)}),
    LibraryCase("quat2mat", _cell("lib.quat2mat(q)"), {"q": ((4,), -1, 1)}),
    LibraryCase("mat2quat", _cell("lib.mat2quat(m)"), {"m": ((3, 3), -1, 1)}),
    LibraryCase("qexp", _cell("lib.qexp(q)"), {"q": ((4,), -1, 1)}),
    LibraryCase("qlog", _cell("lib.qlog(q)"), {"q": ((4,), -1, 1)}),
    LibraryCase("qpow", _cell("lib.qpow(q, 2.5)"), {"q": ((4,), 0.1, 1)}),
    LibraryCase("rotate_vector", _cell("lib.rotate_vector(v, q)"), {"v": ((3,), -1, 1), "q": ((4,), -1, 1)}),
    LibraryCase("rotate_vector (normalize)", _cell("lib.rotate_vector(v, q, is_normalized=False)"),
                {"v": ((3,), -1, 1), "q": ((4,), -1, 1)}),
    LibraryCase("axangle2quat", _cell("lib.axangle2quat(v, theta)"),
                {"v": ((3,), -1, 1), "theta": ((), -3, 3)}),
    LibraryCase("quat2axangle", _cell("np.concatenate([lib.quat2axangle(q)[0], [lib.quat2axangle(q)[1]]])"),
                {"q": ((4,), -1, 1)}),
    LibraryCase("fillpositive", _cell("lib.fillpositive(xyz)"), {"xyz": ((3,), -0.5, 0.5)}),
    LibraryCase("nearly_equivalent", _cell("np.asarray(lib.nearly_equivalent(q1, q2))"),
                {"q1": ((4,), -1, 1), "q2": ((4,), -1, 1)}),
    LibraryCase("qmult(qinverse)", _cell("lib.qmult(q, lib.qinverse(q))"), {"q": ((4,), -1, 1)}),
]


def _draw(case: LibraryCase, rng: np.random.Generator) -> dict[str, np.ndarray]:
    return {name: rng.uniform(lo, hi, shape) for name, (shape, lo, hi) in case.inputs.items()}


def _eager(case: LibraryCase, inputs: dict[str, np.ndarray]) -> np.ndarray:
    namespace: dict[str, Any] = {"np": np, "quaternions": quaternions}
    namespace.update({k: v.copy() for k, v in inputs.items()})
    exec(case.source, namespace)
    return np.asarray(namespace["y"])


def classify(case: LibraryCase, profile: str, seed: int = 0) -> tuple[str, str]:
    """``("faithful" | "flagged" | "silently wrong", detail)`` for one function in one profile."""
    rng = np.random.default_rng(seed)
    inputs = _draw(case, rng)
    trace = ln.trace_cell(case.source, {"np": np, "quaternions": quaternions}, inputs=inputs, outputs=["y"],
                          profile=profile)
    errors = [h for h in trace.hazards if h.severity == "error"]
    if errors:
        lines = sorted({h.line for h in errors}, key=lambda v: (v is None, v))
        assert CALL_LINE in lines, f"{case.function} [{profile}]: error hazards at {lines}, not the call"
        kinds = sorted({h.kind for h in errors})
        return "flagged", ", ".join(kinds)
    node = trace.nodes["node"]
    for i in range(N_FRESH):
        fresh = _draw(case, rng)
        want = _eager(case, fresh)
        try:
            (have,) = node(*[fresh[k] for k in case.inputs])
        except Exception as exc:  # the graph fails where NumPy does not: wrong, and not reported
            return "silently wrong", f"graph raised {type(exc).__name__}: {exc}"
        same = have.shape == want.shape and have.dtype == want.dtype
        if not same or not np.allclose(have, want, rtol=1e-6, atol=1e-9, equal_nan=True):
            return "silently wrong", f"fresh input #{i}: graph {have!r} vs NumPy {want!r}"
    warnings = sorted({h.kind for h in trace.hazards})
    return "faithful", ", ".join(warnings) if warnings else "no hazard"


RESULTS: dict[str, dict[str, tuple[str, str]]] = {"leapp": {}, "full": {}}


@pytest.mark.parametrize("profile", ["leapp", "full"])
@pytest.mark.parametrize("case", CASES, ids=[c.function for c in CASES])
def test_quaternion_function_is_faithful_or_flagged_at_the_call(case: LibraryCase, profile: str) -> None:
    verdict, detail = classify(case, profile)
    RESULTS[profile][case.function] = (verdict, detail)
    assert verdict != "silently wrong", f"{case.function} [{profile}]: {detail}"


def test_full_profile_records_the_pure_arithmetic_functions() -> None:
    """The functions built only from recorded NumPy calls must trace faithfully in ``full``."""
    for name in ("qmult", "qconjugate", "qnorm", "qinverse", "rotate_vector", "qmult(qinverse)"):
        case = next(c for c in CASES if c.function == name)
        assert classify(case, "full")[0] == "faithful", name


def test_count_table() -> None:
    """Print the faithful / flagged / silently wrong counts per profile (run with ``pytest -s``)."""
    for profile in ("leapp", "full"):
        for case in CASES:
            if case.function not in RESULTS[profile]:
                RESULTS[profile][case.function] = classify(case, profile)
    print("\ntransforms3d.quaternions, traced from a cell (fresh inputs: %d per function)" % N_FRESH)
    print(f"{'function':28} {'leapp':36} {'full':36}")
    for case in CASES:
        cells = [f"{RESULTS[p][case.function][0]} ({RESULTS[p][case.function][1]})"[:36]
                 for p in ("leapp", "full")]
        print(f"{case.function:28} {cells[0]:36} {cells[1]:36}")
    for profile in ("leapp", "full"):
        counts = {k: sum(1 for v, _ in RESULTS[profile].values() if v == k)
                  for k in ("faithful", "flagged", "silently wrong")}
        print(f"{profile:6} faithful {counts['faithful']:2}  flagged {counts['flagged']:2}  "
              f"silently wrong {counts['silently wrong']:2}  (of {len(CASES)})")
        assert counts["silently wrong"] == 0


def test_classifier_detects_a_silently_wrong_graph(monkeypatch: pytest.MonkeyPatch) -> None:
    """The count can fail: a lookup row recording the wrong op makes qconjugate silently wrong."""
    import torch

    from leapp_notebook.tracing import ops

    row = ops.UFUNC_ROWS[np.multiply]
    monkeypatch.setitem(ops.UFUNC_ROWS, np.multiply, ops.Row(row.key, row.numpy, row.torch,
                                                             ops.elementwise(torch.add), row.names, row.leapp,
                                                             row.kind))
    case = next(c for c in CASES if c.function == "qconjugate")
    assert classify(case, "full")[0] == "silently wrong"
