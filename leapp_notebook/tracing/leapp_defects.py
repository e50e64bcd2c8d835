"""Calls LEAPP 0.7.2's lookup records, but records wrongly (measured: docs/leapp-0.7.2-behaviour.md).

Our graph records these calls correctly; the hazard says that the same cell exported with LEAPP
itself would be wrong or fail, so the ``leapp`` profile still shows every way LEAPP's export breaks.
Each entry is data: the call names it applies to, a predicate on NumPy's arguments and result, what
LEAPP does, and the rewrite that avoids it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np


@dataclass(frozen=True)
class Defect:
    names: frozenset[str]
    applies: Callable[[dict[str, Any], Any], bool]
    what: str
    fix: str


def _is_int(value: Any) -> bool:
    return np.asarray(value).dtype.kind in "biu"


def _weak_dtype_differs(params: dict[str, Any], result: Any) -> bool:
    """NumPy 2 treats a 0-d array operand as strongly typed; torch (so LEAPP) treats a 0-d tensor as weak."""
    # Runs on every recorded ufunc call: a plain loop finds the common case (no 0-d operand) fast.
    operands = []
    zero_d = False
    for k, v in params.items():
        if k[0] == "x":
            operands.append(v)
            if not zero_d and isinstance(v, (np.ndarray, np.generic)) and v.ndim == 0:
                zero_d = True
    if len(operands) < 2 or not zero_d:
        return False
    if not any(isinstance(v, np.ndarray) and v.ndim > 0 for v in operands):
        return False
    weak = []
    for v in operands:
        if isinstance(v, (np.ndarray, np.generic)) and np.ndim(v) == 0:
            kind = np.asarray(v).dtype.kind
            weak.append(True if kind == "b" else 0 if kind in "iu" else 0.0 if kind == "f" else 0j)
        else:
            weak.append(v)
    try:
        return np.result_type(*weak) != np.asarray(result).dtype
    except TypeError:
        return False


_REDUCTIONS = {f"{prefix}{name}" for prefix in ("np.", "ndarray.")
               for name in ("sum", "prod", "mean", "std", "var", "max", "min", "all", "any")}

DEFECTS: tuple[Defect, ...] = (
    Defect(frozenset({"np.mean", "ndarray.mean"}), lambda p, r: _is_int(p.get("a")) and p.get("dtype") is None,
           "it records torch.mean on the integer tensor, and the exported model raises \"mean(): could not infer "
           "output dtype\"",
           "cast first: x.astype(np.float64).mean(...)"),
    Defect(frozenset(_REDUCTIONS), lambda p, r: isinstance(p.get("axis"), tuple) and p.get("axis") == (),
           "it passes dim=() to torch, which reduces every axis, where NumPy's axis=() reduces none",
           "drop the reduction: axis=() does nothing in NumPy"),
    Defect(frozenset({"np.round", "np.around", "ndarray.round"}), lambda p, r: p.get("decimals") not in (None, 0),
           "it passes decimals positionally to torch.round, and compile_graph fails (\"Arguments for call are not "
           "valid ... aten::round.decimals\")",
           "scale explicitly: np.round(x * 100) / 100 for two decimals"),
    Defect(frozenset({"np.cumsum", "np.cumprod", "ndarray.cumsum", "ndarray.cumprod"}),
           lambda p, r: p.get("axis") is None,
           "it calls torch.cumsum without dim, and compile_graph fails (\"Argument dim not provided\")",
           "flatten explicitly: np.cumsum(x.reshape(-1), axis=0)"),
    Defect(frozenset({"ndarray.max", "ndarray.min"}), lambda p, r: p.get("axis") is None,
           "the method spells axis=None as dim=None, and compile_graph fails (\"Expected a value of type "
           "'List[int]' for argument 'dim'\")",
           "call the function: np.max(x) / np.min(x)"),
    Defect(frozenset({f"np.{name}.reduce" for name in ("add", "multiply", "maximum", "minimum", "logical_and",
                                                         "logical_or")}),
           lambda p, r: True,
           "ufunc.reduce raises a TypeError while LEAPP traces it",
           "use the function: np.sum / np.prod / np.max / np.min / np.all / np.any with axis="),
)

_BY_NAME: dict[str, list[Defect]] = {}
for _defect in DEFECTS:
    for _name in _defect.names:
        _BY_NAME.setdefault(_name, []).append(_defect)

_PROMOTION = Defect(frozenset(), _weak_dtype_differs,
                    "torch treats the 0-d operand as weakly typed, so LEAPP's model computes and returns a different "
                    "dtype than NumPy 2 (measured: float32 where NumPy gives float64)",
                    "make the constant a Python scalar (1.0) or cast explicitly with .astype(...) so both agree")


def find(name: str, params: dict[str, Any], result: Any, is_ufunc_call: bool) -> Defect | None:
    """The defect LEAPP 0.7.2 has for this call, if any."""
    for defect in _BY_NAME.get(name, ()):
        if defect.applies(params, result):
            return defect
    if is_ufunc_call and _PROMOTION.applies(params, result):
        return _PROMOTION
    return None
