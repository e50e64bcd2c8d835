"""Table-driven parity: every lookup row, traced, equals NumPy in value, shape and dtype on fresh inputs.

``CASES`` maps each row's NumPy name (``Row.numpy``) to cells that exercise it with several dtypes and
argument variants. Each cell is traced (profile ``full``, and ``leapp`` for rows LEAPP 0.7.2 records);
the graph then runs on fresh random inputs and must give NumPy's eager result exactly in shape and dtype
and within a dtype-appropriate tolerance in value. A row without a case fails
``test_every_row_has_a_parity_case``, so a row cannot be added untested.

A case can instead expect ``reported``: the lookup refuses those arguments (torch cannot match), and the
call must surface as an ``error`` hazard at its cell line rather than as a silently wrong graph.
"""

from __future__ import annotations

import math
import re
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest

import leapp_notebook as ln
from leapp_notebook.tracing import ops
from leapp_notebook.tracing.facts import facts

# Random inputs hit NumPy's domain warnings (log of 0, integer division by 0): NumPy's values are still the
# reference the graph must reproduce.
pytestmark = [pytest.mark.filterwarnings("ignore::RuntimeWarning"),
              pytest.mark.filterwarnings("ignore:Arrays of 2-dimensional vectors:DeprecationWarning")]

FLOATS = ("f4", "f8")
INTS = ("i4", "i8")
ALL = ("f4", "f8", "i4", "i8", "b1")
N_FRESH = 3


# ------------------------------------------------------------------------------------------
# inputs and cases
# ------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Arr:
    """A random input: shape, dtype (NumPy code), value range; ``nonzero`` avoids 0, ``special`` mixes in
    nan/inf/-0.0, ``sorted_`` sorts along the last axis (for searchsorted/interp tables)."""

    shape: tuple[int, ...] = (3, 4)
    dtype: str = "f4"
    lo: float = -3.0
    hi: float = 3.0
    nonzero: bool = False
    special: bool = False
    sorted_: bool = False

    def draw(self, rng: np.random.Generator) -> np.ndarray:
        dtype = np.dtype(self.dtype)
        if dtype.kind == "b":
            value = rng.random(self.shape) < 0.5
        elif dtype.kind in "iu":
            lo = math.ceil(self.lo) if dtype.kind == "i" else max(math.ceil(self.lo), 0)
            value = rng.integers(lo, math.floor(self.hi) + 1, size=self.shape).astype(dtype)
            if self.nonzero:
                value[value == 0] = 1
        elif dtype.kind == "c":
            real = rng.uniform(self.lo, self.hi, self.shape) + 1j * rng.uniform(self.lo, self.hi, self.shape)
            value = real.astype(dtype)
        else:
            value = rng.uniform(self.lo, self.hi, self.shape).astype(dtype)
            if self.nonzero:
                value[np.abs(value) < 0.25] = 0.5
            if self.special and value.size >= 4:
                flat = value.reshape(-1)
                flat[rng.choice(flat.size, 4, replace=False)] = [np.nan, np.inf, -np.inf, -0.0]
        if self.sorted_:
            value = np.sort(value, axis=-1)
        return np.asarray(value)


def A(shape: tuple[int, ...] = (3, 4), dtype: str = "f4", lo: float = -3.0, hi: float = 3.0,
      **flags: bool) -> Arr:
    return Arr(tuple(shape), dtype, lo, hi, **flags)


@dataclass(frozen=True)
class Case:
    """One cell: ``source`` reads ``inputs`` (and ``consts``) and assigns ``outputs``.

    ``leapp``: ``"same"`` (the leapp profile records it too) or ``"error"`` (LEAPP 0.7.2 loses it, so the
    leapp profile must report an error hazard). ``expect``: ``"parity"`` or ``"reported"`` (the lookup
    refuses these arguments; an error hazard must point at the call). ``values=False`` compares shape
    and dtype only (``np.empty_like``).
    """

    source: str
    inputs: dict[str, Arr]
    outputs: tuple[str, ...] = ("y",)
    consts: dict[str, Any] = field(default_factory=dict)
    leapp: str = "same"
    expect: str = "parity"
    values: bool = True
    records: str | None = None


def case(source: str, *, outputs: tuple[str, ...] = ("y",), consts: dict[str, Any] | None = None,
         leapp: str = "same", expect: str = "parity", values: bool = True, records: str | None = None,
         **inputs: Arr) -> Case:
    """``records``: the name the graph gives the call when it differs from the row's
    (``np.add.reduce`` is recorded by the ``ndarray.sum`` row)."""
    return Case(source, inputs, outputs, consts or {}, leapp, expect, values, records)


CASES: dict[str, list[Case]] = {}


def add(name: str, *cases: Case) -> None:
    CASES.setdefault(name, []).extend(cases)


# ------------------------------------------------------------------------------------------
# ufuncs
# ------------------------------------------------------------------------------------------

UNARY_DOMAIN = {
    "arccos": (-0.95, 0.95), "arcsin": (-0.95, 0.95), "arctanh": (-0.95, 0.95), "arccosh": (1.05, 4.0),
    "log": (0.05, 4.0), "log10": (0.05, 4.0), "log2": (0.05, 4.0), "sqrt": (0.0, 4.0), "log1p": (-0.9, 4.0),
    "tan": (-1.3, 1.3),
}
UNARY_FLAGS = {"reciprocal": {"nonzero": True}, "isnan": {"special": True}, "isinf": {"special": True},
               "isfinite": {"special": True}, "signbit": {"special": True}}
# (first operand, second operand) ranges and flags for binary ufuncs.
BINARY_DOMAIN: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "divide": ({}, {"nonzero": True}),
    "floor_divide": ({}, {"nonzero": True}),
    "remainder": ({}, {"nonzero": True}),
    "fmod": ({}, {"nonzero": True}),
    "divmod": ({}, {"nonzero": True}),
    "power": ({"lo": 0.1, "hi": 3.0}, {"lo": 0.0, "hi": 3.0}),
    "float_power": ({"lo": 0.1, "hi": 3.0}, {"lo": -2.0, "hi": 3.0}),
    "left_shift": ({"lo": -8, "hi": 8}, {"lo": 0, "hi": 5}),
    "right_shift": ({"lo": -64, "hi": 64}, {"lo": 0, "hi": 5}),
    "ldexp": ({}, {"lo": -4, "hi": 4}),
    "gcd": ({"lo": -12, "hi": 12}, {"lo": -12, "hi": 12}),
    "lcm": ({"lo": -12, "hi": 12}, {"lo": -12, "hi": 12}),
}
# Python scalars used as the other operand, per operand dtype kind.
SCALAR = {"f": 1.5, "i": 2, "b": True}
SPECIAL_UFUNCS = {"matmul", "ldexp"}


def _ufunc_cases(row: ops.Row) -> list[Case]:
    uf = row.key
    name = uf.__name__
    cases: list[Case] = []
    if uf.nin == 1:
        lo, hi = UNARY_DOMAIN.get(name, (-3.0, 3.0))
        flags = UNARY_FLAGS.get(name, {})
        target = "y" if uf.nout == 1 else "y, z"
        outputs = ("y",) if uf.nout == 1 else ("y", "z")
        for dt in ALL:
            cases.append(case(f"{target} = np.{name}(x)", outputs=outputs, x=A((3, 4), dt, lo, hi, **flags)))
        # a 0-d operand: the ufunc returns a NumPy scalar, which LEAPP 0.7.2 no longer traces
        cases.append(case(f"{target} = np.{name}(x)", outputs=outputs, leapp="error", x=A((), "f4", lo, hi)))
        # a chain: the recorded op feeds another
        cases.append(case(f"{target} = np.{name}(x[1:])", outputs=outputs,
                          x=A((2, 3, 2), "f8", lo, hi, **flags)))
        return cases
    first, second = BINARY_DOMAIN.get(name, ({}, {}))
    target = "y" if uf.nout == 1 else "y, z"
    outputs = ("y",) if uf.nout == 1 else ("y", "z")
    for dt in ALL:
        cases.append(case(f"{target} = np.{name}(a, b)", outputs=outputs,
                          a=A((3, 4), dt, **first), b=A((3, 4), dt, **second)))
        scalar = SCALAR[np.dtype(dt).kind]
        cases.append(case(f"{target} = np.{name}(a, {scalar!r})", outputs=outputs, a=A((3, 4), dt, **first)))
        cases.append(case(f"{target} = np.{name}({scalar!r}, b)", outputs=outputs, b=A((3, 4), dt, **second)))
    # mixed dtypes and broadcasting
    cases += [
        case(f"{target} = np.{name}(a, b)", outputs=outputs, a=A((3, 4), "f4", **first),
             b=A((4,), "f8", **second)),
        case(f"{target} = np.{name}(a, b)", outputs=outputs, a=A((2, 1, 3), "i4", **first),
             b=A((4, 1), "i8", **second)),
        case(f"{target} = np.{name}(a, b)", outputs=outputs, a=A((3, 4), "i4", **first),
             b=A((4,), "f4", **second)),
        # an untraced array operand is a genuine constant
        case(f"{target} = np.{name}(a, C)", outputs=outputs, consts={"C": A((4,), "f4", **second).draw(
            np.random.default_rng(7))}, a=A((3, 4), "f4", **first)),
        # Python float with an int array: NEP 50 promotes to float64
        case(f"{target} = np.{name}(a, 2.0)", outputs=outputs, a=A((3, 4), "i4", **first)),
        # two 0-d operands give a NumPy scalar
        case(f"{target} = np.{name}(a, b)", outputs=outputs, leapp="error", a=A((), "f4", **first),
             b=A((), "f4", **second)),
    ]
    return cases


def _add_ufuncs() -> None:
    for row in ops.UFUNC_ROWS.values():
        if row.key.__name__ in SPECIAL_UFUNCS:
            continue
        add(row.numpy, *_ufunc_cases(row))
    mm_shapes = [((3, 4), (4, 2)), ((4,), (4,)), ((2, 3, 4), (4, 5)), ((4,), (4, 3)), ((3, 4), (4,)),
                 ((2, 1, 3, 4), (5, 4, 2))]
    add("np.matmul",
        *[case("y = np.matmul(a, b)", leapp="error" if sa == sb == (4,) else "same", a=A(sa, dt), b=A(sb, dt))
          for sa, sb in mm_shapes for dt in ("f4", "f8", "i8")],
        case("y = a @ b", a=A((3, 4), "f4"), b=A((4, 2), "f8")),
        case("y = a @ b", a=A((3, 4), "i4"), b=A((4, 2), "f4")),
        case("y = a @ b", a=A((3, 4), "b1"), b=A((4, 2), "b1")),
        case("y = a @ W", consts={"W": np.arange(8.0, dtype=np.float32).reshape(4, 2)}, a=A((3, 4))))
    add("np.ldexp",
        *[case("y = np.ldexp(a, b)", a=A((3, 4), dt), b=A((3, 4), it, lo=-4, hi=4)) for dt in FLOATS
          for it in INTS],
        case("y = np.ldexp(a, 3)", a=A((3, 4), "f4")),
        case("y = np.ldexp(a, b)", a=A((3, 4), "i4"), b=A((4,), "i4", lo=-3, hi=3)))


_add_ufuncs()

# operator spellings, NEP 50 promotion, NumPy scalar operands, in-place forms
add("np.add",
    case("y = x + 1.5", x=A((3, 4), "f4")),                       # float32 + Python float stays float32
    case("y = x + np.array(1.5)", x=A((3, 4), "f4")),             # float32 + float64 0-d array -> float64
    case("y = x + np.float64(1.5)", leapp="error", x=A((3, 4), "f4")),  # NumPy scalar operand, not weak
    case("y = np.float32(2.0) + x", leapp="error", x=A((3, 4), "f4")),
    case("y = x + 3", x=A((3, 4), "i4")),                         # int32 + Python int stays int32
    case("y = x + 300", x=A((3, 4), "u1", lo=0, hi=255)),          # uint8 wraps, as in NumPy
    case("y = x + x[0]", x=A((3, 4), "f4")),
    case("y = x + s", x=A((3, 4), "f4"), s=A((), "f8")),          # float32 + traced float64 0-d -> float64
    case("x += 1\ny = x * 1", x=A((3, 4), "f4")),
    case("y = x.copy()\ny += x", x=A((3, 4), "i4")),
    case("y = x + True", x=A((3, 4), "b1")))
add("np.divide",
    case("y = a / b", a=A((3, 4), "i4"), b=A((3, 4), "i4", nonzero=True)),   # int / int -> float64
    case("y = a / 2", a=A((3, 4), "i8")),
    case("y = a / 2", a=A((3, 4), "f4")),
    case("y = a / b", a=A((3, 4), "f4"), b=A((), "f4", nonzero=True)))
add("np.multiply",
    case("y = x * np.float32(2.0)", leapp="error", x=A((3, 4), "f4")),
    case("y = x * 2.0", x=A((3, 4), "f2")),
    case("y = x * x.sum()", x=A((3, 4), "f4")))
add("np.absolute", case("y = np.abs(x)", x=A((3, 4), "i4")), case("y = abs(x)", x=A((3, 4), "f4")))
add("np.negative", case("y = -x", x=A((3, 4), "f8")))
add("np.power", case("y = x ** 3", x=A((3, 4), "f4")), case("y = x ** 1.7", x=A((3, 4), "f4", lo=0.0)),
    case("y = 2 ** x", x=A((3, 4), "i4", lo=0, hi=5)), case("y = x ** 3", x=A((3, 4), "i4")))
add("np.greater", case("y = x > 0.5", x=A((3, 4), "f4")), case("y = x > 1", x=A((3, 4), "i8")))
add("np.equal", case("y = x == x[0]", x=A((3, 4), "i4")))
add("np.floor_divide", case("y = x // 2", x=A((3, 4), "i4")), case("y = x // 0.5", x=A((3, 4), "f4")))
add("np.remainder", case("y = x % 3", x=A((3, 4), "i4")), case("y = x % -1.5", x=A((3, 4), "f8")))
add("np.invert", case("y = ~x", x=A((3, 4), "b1")), case("y = ~x", x=A((3, 4), "i4")))
add("np.logical_and", case("y = np.logical_and(x > 0, x < 1)", x=A((3, 4), "f4")))
add("np.bitwise_and", case("y = (x > 0) & (x < 1)", x=A((3, 4), "f4")))
add("np.rint", case("y = np.rint(x)", x=A((6,), "f8", lo=-3, hi=3)),
    case("y = np.rint(x * 0 + np.array([0.5, 1.5, 2.5, -0.5, -1.5, 3.0]))", x=A((6,), "f8")))
add("np.divmod",
    case("q, r = divmod(a, b)", outputs=("q", "r"), a=A((3, 4), "i4"), b=A((3, 4), "i4", nonzero=True)),
    case("q, r = divmod(a, 0.75)", outputs=("q", "r"), a=A((3, 4), "f4")))


# ------------------------------------------------------------------------------------------
# reductions
# ------------------------------------------------------------------------------------------

AXES = (None, 0, -1, (0, 1), ())


def _call(fname: str, method: bool, args: str) -> str:
    """``np.fname(x, args)`` or ``x.fname(args)``."""
    if method:
        return f"x.{fname}({args})"
    return f"np.{fname}(x, {args})" if args else f"np.{fname}(x)"


def _reduction_cases(fname: str, method: bool, dtypes: tuple[str, ...],
                     extra: tuple[str, ...] = ()) -> list[Case]:
    cases = []
    for dt in dtypes:
        for axis in AXES:
            for keep in (False, True):
                call = _call(fname, method, f"axis={axis!r}, keepdims={keep}")
                cases.append(case(f"y = {call}", x=A((3, 4), dt)))
        cases.append(case(f"y = {_call(fname, method, '')}", x=A((2, 3, 4), dt)))
    for args in ("keepdims=True", "axis=(0, 2)", "axis=(-1, 0), keepdims=True", "axis=1", *extra):
        cases.append(case(f"y = {_call(fname, method, args)}", x=A((2, 3, 4), "f4")))
        cases.append(case(f"y = {_call(fname, method, args)}", x=A((2, 3, 4), "i4")))
    cases.append(case(f"y = {_call(fname, method, '')}", x=A((), "f8")))
    return cases


REDUCTIONS = {
    "sum": ("dtype=np.float64", "dtype=np.int32", "axis=0, dtype=np.float32"),
    "prod": ("dtype=np.float64", "axis=(0, 1)", "axis=(0, 2), keepdims=True"),
    "mean": ("dtype=np.float32", "axis=0, dtype=np.float64"),
    "std": ("ddof=1", "ddof=0", "axis=0, ddof=1, keepdims=True", "dtype=np.float32"),
    "var": ("ddof=1", "axis=(0, 2), ddof=2", "dtype=np.float32"),
    "max": (), "min": (), "amax": (), "amin": (), "all": (), "any": (),
}
for _fname, _extra in REDUCTIONS.items():
    _dts = ALL if _fname not in ("prod",) else ("f4", "f8", "i4", "b1")
    add(f"np.{_fname}", *_reduction_cases(_fname, False, _dts, _extra))
    if _fname not in ("amax", "amin"):
        add(f"ndarray.{_fname}", *_reduction_cases(_fname, True, ("f4", "i4", "b1"), _extra))
add("np.mean", case("y = np.mean(x, axis=0)", x=A((3, 4), "i4")),   # ints -> float64
    case("y = x - np.mean(x, axis=-1, keepdims=True)", x=A((3, 4), "f4")))
add("np.std", case("y = np.std(x)", x=A((5,), "f4")))                # ddof=0 default, not torch's 1
add("np.max", case("y = np.max(x, axis=1)", x=A((3, 4), "f4")))      # values only
add("ndarray.prod", case("y = x.prod()", x=A((3, 4), "f4", lo=0.5, hi=1.5)),
    case("y = np.multiply.reduce(x)", records="np.multiply.reduce", x=A((3, 4), "f4")),
    case("y = x.prod(axis=1, keepdims=True)", x=A((3, 4), "i4")))
add("ndarray.sum", case("y = np.add.reduce(x)", records="np.add.reduce", x=A((3, 4), "f4")),
    case("y = np.add.reduce(x, axis=1)", records="np.add.reduce", x=A((3, 4), "i4")))


def _arg_reduction(fname: str) -> None:
    for method in (False, True):
        name = f"ndarray.{fname}" if method else f"np.{fname}"
        for dt in ALL:
            for args in ("", "axis=0", "axis=-1", "axis=1, keepdims=True", "keepdims=True"):
                add(name, case(f"y = {_call(fname, method, args)}", x=A((3, 4), dt)))


_arg_reduction("argmax")
_arg_reduction("argmin")


def _cumulative(fname: str) -> None:
    lo, hi = (-1.5, 1.5) if fname == "cumprod" else (-3.0, 3.0)
    for method in (False, True):
        name = f"ndarray.{fname}" if method else f"np.{fname}"
        for dt in ALL:
            for args in ("", "axis=0", "axis=-1", "dtype=np.float64", "axis=1, dtype=np.int32"):
                add(name, case(f"y = {_call(fname, method, args)}", x=A((3, 4), dt, lo, hi)))


_cumulative("cumsum")
_cumulative("cumprod")


# ------------------------------------------------------------------------------------------
# shape functions
# ------------------------------------------------------------------------------------------

add("np.reshape", *[case(src, x=A((3, 4), dt)) for dt in ALL for src in (
    "y = np.reshape(x, (4, 3))", "y = np.reshape(x, -1)", "y = np.reshape(x, (2, -1, 2))")],
    case("y = np.reshape(x, (4, 3), order='F')", expect="reported", x=A((3, 4))))
add("ndarray.reshape", *[case(src, x=A((3, 4), dt)) for dt in ALL for src in (
    "y = x.reshape(4, 3)", "y = x.reshape((2, 6))", "y = x.reshape(-1)", "y = x.reshape(x.shape[0], 2, 2)")])
add("np.ravel", *[case("y = np.ravel(x)", x=A(s, dt)) for dt in ALL for s in ((3, 4), (), (2, 3, 2))])
add("ndarray.ravel", *[case("y = x.ravel()", x=A((3, 4), dt)) for dt in ALL])
add("ndarray.flatten", *[case("y = x.flatten()", x=A((3, 4), dt)) for dt in ALL],
    case("y = x.flatten() * 2", x=A((2, 3, 2), "f8")))
add("np.transpose", *[case(src, x=A((2, 3, 4), dt)) for dt in ALL for src in (
    "y = np.transpose(x)", "y = np.transpose(x, (1, 0, 2))", "y = np.transpose(x, (-1, 0, 1))")],
    case("y = np.transpose(x)", x=A((3, 4))), case("y = np.transpose(x)", x=A((4,))))
add("ndarray.transpose", *[case(src, x=A((2, 3, 4), dt)) for dt in ALL for src in (
    "y = x.transpose()", "y = x.transpose(1, 0, 2)", "y = x.transpose((2, 0, 1))")])
add("ndarray.T", *[case("y = x.T", x=A(s, dt)) for dt in ALL for s in ((3, 4), (2, 3, 4), (4,))])
add("np.swapaxes", *[case(src, x=A((2, 3, 4), dt)) for dt in ALL for src in (
    "y = np.swapaxes(x, 0, 2)", "y = np.swapaxes(x, -1, 1)")])
add("ndarray.swapaxes", *[case("y = x.swapaxes(0, -1)", x=A((2, 3, 4), dt)) for dt in ALL])
add("np.moveaxis", *[case(src, x=A((2, 3, 4), dt)) for dt in ALL for src in (
    "y = np.moveaxis(x, 0, -1)", "y = np.moveaxis(x, (0, 1), (2, 0))")])
add("np.squeeze", *[case(src, x=A((1, 3, 1, 4), dt)) for dt in ALL for src in (
    "y = np.squeeze(x)", "y = np.squeeze(x, axis=0)", "y = np.squeeze(x, axis=(0, -2))")])
add("ndarray.squeeze", *[case(src, x=A((1, 3, 1), dt)) for dt in ALL for src in ("y = x.squeeze()",
                                                                                  "y = x.squeeze(2)")])
add("np.expand_dims", *[case(src, x=A((3, 4), dt)) for dt in ALL for src in (
    "y = np.expand_dims(x, 0)", "y = np.expand_dims(x, -1)", "y = np.expand_dims(x, (0, 2))",
    "y = np.expand_dims(x, axis=(-1, 0))")],
    case("y = np.expand_dims(x, 0)", x=A((), "f4")))
add("np.atleast_1d", *[case("y = np.atleast_1d(x)", x=A(s, dt)) for dt in ALL for s in ((), (3,), (2, 3))])
add("np.atleast_2d", *[case("y = np.atleast_2d(x)", x=A(s, dt)) for dt in ALL for s in ((), (3,), (2, 3))])
add("np.atleast_3d", *[case("y = np.atleast_3d(x)", x=A(s, dt)) for dt in ALL
                       for s in ((), (3,), (2, 3), (2, 3, 4))])
add("np.flip", *[case(src, x=A((2, 3, 4), dt)) for dt in ALL for src in (
    "y = np.flip(x)", "y = np.flip(x, 0)", "y = np.flip(x, axis=(0, -1))")])
add("np.fliplr", *[case("y = np.fliplr(x)", x=A((3, 4), dt)) for dt in ALL])
add("np.flipud", *[case("y = np.flipud(x)", x=A((3, 4), dt)) for dt in ALL],
    case("y = np.flipud(x)", x=A((4,))))
add("np.roll", *[case(src, x=A((3, 4), dt)) for dt in ALL for src in (
    "y = np.roll(x, 2)", "y = np.roll(x, -1, axis=0)", "y = np.roll(x, (1, 2), axis=(0, 1))",
    "y = np.roll(x, 5 - 3)")],
    case("y = np.roll(x, np.int64(5))", leapp="error", x=A((3, 4), "f4")))
add("np.rot90", *[case(src, x=A((3, 4), dt)) for dt in ALL for src in (
    "y = np.rot90(x)", "y = np.rot90(x, 2)", "y = np.rot90(x, -1, axes=(1, 0))")])
add("np.broadcast_to", *[case(src, x=A((4,), dt)) for dt in ALL for src in (
    "y = np.broadcast_to(x, (3, 4))", "y = np.broadcast_to(x, (2, 3, 4)) * 1")])
add("np.tile", *[case(src, x=A((2, 3), dt)) for dt in ALL for src in (
    "y = np.tile(x, 2)", "y = np.tile(x, (2, 1))", "y = np.tile(x, (2, 1, 2))")])
add("np.repeat", *[case(src, x=A((2, 3), dt)) for dt in ALL for src in (
    "y = np.repeat(x, 2)", "y = np.repeat(x, 3, axis=0)", "y = np.repeat(x, [1, 0, 2], axis=1)",
    "y = np.repeat(x, -1 + 3, axis=-1)")],
    # traced counts: a data-dependent length, recorded as np.nonzero's is
    case("y = np.repeat(x, r, axis=0)", leapp="error", x=A((2, 3)), r=A((2,), "i8", lo=0, hi=3)),
    case("y = np.repeat(x, r[:1])", leapp="error", x=A((2, 3)), r=A((2,), "i4", lo=0, hi=3)))


# ------------------------------------------------------------------------------------------
# joining and splitting
# ------------------------------------------------------------------------------------------

add("np.concatenate",
    *[case("y = np.concatenate([a, b])", a=A((2, 3), dt), b=A((1, 3), dt)) for dt in ALL],
    case("y = np.concatenate([a, b], axis=1)", a=A((2, 3), "f4"), b=A((2, 2), "f8")),
    case("y = np.concatenate((a, b), axis=-1)", a=A((2, 3), "i4"), b=A((2, 2), "f4")),
    case("y = np.concatenate([a, b], axis=None)", a=A((2, 3), "f4"), b=A((4,), "i4")),
    case("y = np.concatenate([a, C])", consts={"C": np.ones((2, 3), np.float32)}, a=A((2, 3), "f4")),
    case("y = np.concatenate([a, b], dtype=np.float64)", a=A((2, 3), "f4"), b=A((2, 3), "i4")),
    case("y = np.concatenate(a)", a=A((3, 4), "f4")),
    case("y = np.concatenate(a, axis=1)", a=A((2, 3, 4), "i4")),
    case("y = np.concatenate(a, axis=None)", a=A((2, 3, 4), "i4")),
    case("y = np.concatenate([[1.0], a * 2])", a=A((3,), "f4")))
add("np.stack",
    *[case("y = np.stack([a, b])", a=A((2, 3), dt), b=A((2, 3), dt)) for dt in ALL],
    case("y = np.stack([a, b], axis=-1)", a=A((2, 3), "f4"), b=A((2, 3), "f8")),
    case("y = np.stack((a, b), axis=1)", a=A((2, 3), "i4"), b=A((2, 3), "i8")),
    case("y = np.stack([a[0], a[1], a[2]])", a=A((3, 4), "f4")),
    case("y = np.stack([a[0], a[1]], axis=0)", leapp="error", a=A((2,), "f4")),
    case("y = np.stack(a, axis=-1)", a=A((2, 3, 4), "f4")))
add("np.vstack", *[case("y = np.vstack([a, b])", a=A(s, dt), b=A(s, dt)) for dt in ALL
                    for s in ((3,), (2, 3))],
    case("y = np.vstack([a, b])", a=A((3,), "i4"), b=A((2, 3), "f4")))
add("np.hstack", *[case("y = np.hstack([a, b])", a=A(s, dt), b=A(s, dt)) for dt in ALL
                    for s in ((3,), (2, 3))],
    case("y = np.hstack((a, 1.0))", a=A((3,), "f4")))
add("np.column_stack", *[case("y = np.column_stack([a, b])", a=A(s, dt), b=A(s, dt)) for dt in ALL
                         for s in ((3,), (3, 2))],
    case("y = np.column_stack((a, b))", a=A((3,), "f4"), b=A((3, 2), "f8")))
add("np.dstack", *[case("y = np.dstack([a, b])", a=A(s, dt), b=A(s, dt)) for dt in ALL
                    for s in ((3,), (2, 3))])
add("np.append",
    *[case("y = np.append(a, b)", a=A((2, 3), dt), b=A((3,), dt)) for dt in ALL],
    case("y = np.append(a, 1.0)", a=A((4,), "f4")),
    case("y = np.append(a, 1.0)", a=A((4,), "i4")),
    case("y = np.append(a, b, axis=0)", a=A((2, 3), "f4"), b=A((1, 3), "f8")),
    case("y = np.append(a, [[1, 2]], axis=1)", a=A((1, 3), "i8")))
add("np.split",
    *[case("p, q = np.split(x, 2)", outputs=("p", "q"), x=A((4, 3), dt)) for dt in ALL],
    case("p, q, r = np.split(x, 3, axis=1)", outputs=("p", "q", "r"), x=A((2, 6), "f4")),
    case("p, q, r = np.split(x, [1, 3])", outputs=("p", "q", "r"), x=A((5,), "f4")),
    case("p, q = np.split(x, np.array([2]), axis=-1)", outputs=("p", "q"), x=A((2, 5), "i4")))
add("np.array_split",
    *[case("p, q, r = np.array_split(x, 3)", outputs=("p", "q", "r"), x=A((7,), dt)) for dt in ALL],
    case("p, q = np.array_split(x, 2, axis=1)", outputs=("p", "q"), x=A((2, 5), "f4")),
    case("p, q, r = np.array_split(x, [2, 3], axis=0)", outputs=("p", "q", "r"), x=A((5, 2), "f4")))


# ------------------------------------------------------------------------------------------
# selection, sorting, clipping, rounding
# ------------------------------------------------------------------------------------------

add("np.where",
    *[case("y = np.where(x > 0, x, -x)", x=A((3, 4), dt)) for dt in ("f4", "f8", "i4", "i8")],
    case("y = np.where(x > 0, x, 0)", x=A((3, 4), "f4")),
    case("y = np.where(x > 0, x, 0.5)", x=A((3, 4), "i4")),
    case("y = np.where(c, a, b)", c=A((3, 1), "b1"), a=A((3, 4), "f4"), b=A((4,), "f8")),
    case("y = np.where(x, 1, 2)", x=A((3, 4), "b1")),
    case("i, j = np.where(x > 0)", outputs=("i", "j"), x=A((3, 4), "f4")))
add("np.nonzero",
    *[case("i, j = np.nonzero(x)", outputs=("i", "j"), x=A((3, 4), dt, lo=-1, hi=1)) for dt in ("i4", "b1")],
    case("(i,) = np.nonzero(x > 0)", outputs=("i",), x=A((6,), "f4")),
    case("y = x[np.nonzero(x > 0)]", x=A((3, 4), "f4")),
    case("y = np.nonzero(x)", expect="reported", x=A((), "f4")))
add("ndarray.nonzero", case("i, j = x.nonzero()", outputs=("i", "j"), x=A((3, 4), "i4", lo=-1, hi=1)),
    case("i, j = (x > 0).nonzero()", outputs=("i", "j"), x=A((3, 4), "f8")))
add("np.argwhere", case("y = np.argwhere(x > 0)", x=A((3, 4), "f4")),
    case("y = np.argwhere(x)", x=A((5,), "i4", lo=-1, hi=1)))
add("np.sort", *[case(src, x=A((3, 5), dt)) for dt in ALL for src in (
    "y = np.sort(x)", "y = np.sort(x, axis=0)", "y = np.sort(x, axis=None)",
    "y = np.sort(x, kind='stable')")])
add("ndarray.sort", *[case("y = x.copy()\ny.sort()", x=A((3, 5), dt)) for dt in ("f4", "i4")],
    case("y = x * 1\ny.sort(axis=0)", x=A((3, 5), "f8")))
add("np.argsort", *[case(src, x=A((3, 5), dt)) for dt in FLOATS for src in (
    "y = np.argsort(x)", "y = np.argsort(x, axis=0)", "y = np.argsort(x, axis=None)")],
    *[case("y = np.argsort(x, kind='stable')", x=A((3, 7), dt)) for dt in ("i4", "i8", "b1")],
    case("y = np.argsort(x, stable=True, axis=0)", x=A((6, 2), "i4", lo=0, hi=2)))
add("ndarray.argsort", case("y = x.argsort()", x=A((3, 5), "f4")),
    case("y = x.argsort(axis=0, kind='stable')", x=A((6, 2), "i8", lo=0, hi=2)))
add("np.clip",
    *[case("y = np.clip(x, -1, 2)", x=A((3, 4), dt)) for dt in ALL[:4]],
    case("y = np.clip(x, 0.5, 1.5)", x=A((3, 4), "i4")),
    case("y = np.clip(x, None, 0.5)", x=A((3, 4), "f4")),
    case("y = np.clip(x, lo, hi)", x=A((3, 4), "f4"), lo=A((4,), "f4", hi=0), hi=A((3, 1), "f4", lo=0)),
    case("y = np.clip(x, 2, -2)", x=A((3, 4), "f8")),
    case("y = np.clip(x, min=0.0, max=1.0)", x=A((3, 4), "f4")))
add("ndarray.clip", case("y = x.clip(-1, 1)", x=A((3, 4), "f4")), case("y = x.clip(0)", x=A((3, 4), "i8")),
    case("y = x.clip(max=1.5)", x=A((3, 4), "f8")))
for _name in ("round", "around"):
    add(f"np.{_name}",
        *[case(f"y = np.{_name}(x)", x=A((3, 4), dt)) for dt in ALL[:4]],
        *[case(f"y = np.{_name}(x, {d})", x=A((3, 4), dt, lo=-300, hi=300)) for dt in FLOATS
          for d in (2, -1, 1)],
        case(f"y = np.{_name}(x, decimals=1)", x=A((3, 4), "i4", lo=-30, hi=30)),
        case(f"y = np.{_name}(x * 0 + np.array([0.5, 1.5, 2.5, -0.5]))", x=A((4,), "f4")),
        case(f"y = np.{_name}(x, -1)", expect="reported", x=A((3, 4), "i4", lo=-30, hi=30)))
add("ndarray.round", case("y = x.round()", x=A((3, 4), "f4")), case("y = x.round(2)", x=A((3, 4), "f8")),
    case("y = x.round(decimals=1)", x=A((3, 4), "f4")))
add("np.fix", *[case("y = np.fix(x)", x=A((3, 4), dt)) for dt in ALL[:4]])
add("np.nan_to_num", *[case("y = np.nan_to_num(x)", x=A((3, 4), dt, special=True)) for dt in ALL],
    case("y = np.nan_to_num(x, nan=-1.0, posinf=9.0, neginf=-9.0)", x=A((3, 4), "f4", special=True)))
add("np.take", *[case(src, x=A((3, 4), dt)) for dt in ALL for src in (
    "y = np.take(x, [0, 2, -1])", "y = np.take(x, [[0, 1], [1, 2]], axis=1)", "y = np.take(x, 2, axis=0)")],
    case("y = np.take(x, i, axis=0)", x=A((3, 4)), i=A((2,), "i4", lo=0, hi=2)))
add("np.take_along_axis", *[case("y = np.take_along_axis(x, np.argsort(x, axis=1), axis=1)", x=A((3, 4), dt))
                            for dt in FLOATS],
    case("y = np.take_along_axis(x, i, axis=0)", x=A((3, 4), "i4"), i=A((2, 4), "i4", lo=0, hi=2)),
    case("y = np.take_along_axis(x, i, axis=None)", x=A((3, 4), "f4"), i=A((5,), "i8", lo=0, hi=11)))
add("np.searchsorted", *[case(src, t=A((6,), dt, sorted_=True), v=A((3, 2), dt)) for dt in ALL[:4]
                          for src in (
    "y = np.searchsorted(t, v)", "y = np.searchsorted(t, v, side='right')")],
    case("y = np.searchsorted(T, v)", consts={"T": np.array([-1.0, 0.0, 1.0])}, v=A((5,), "f4")),
    case("y = np.searchsorted(t, 0.5)", t=A((6,), "f8", sorted_=True)))


# ------------------------------------------------------------------------------------------
# linear algebra and contractions
# ------------------------------------------------------------------------------------------

DOT_SHAPES = [((3, 4), (4, 2)), ((4,), (4,)), ((3, 4), (4,)), ((4,), (4, 2)), ((2, 3, 4), (4,)),
              ((2, 3, 4), (5, 4, 2)), ((3,), ())]
add("np.dot", *[case("y = np.dot(a, b)", a=A(sa, dt), b=A(sb, dt)) for sa, sb in DOT_SHAPES for dt in ALL],
    case("y = np.dot(a, b)", a=A((3, 4), "i4"), b=A((4,), "f4")),
    case("y = np.dot(a, 2.0)", a=A((3, 4), "f4")))
add("ndarray.dot", case("y = a.dot(b)", a=A((3, 4), "f4"), b=A((4, 2), "f4")),
    case("y = a.dot(b)", a=A((4,), "f8"), b=A((4,), "f8")))
add("np.outer", *[case("y = np.outer(a, b)", a=A((3,), dt), b=A((4,), dt)) for dt in ALL],
    case("y = np.outer(a, b)", a=A((2, 2), "f4"), b=A((3,), "f8")))
add("np.inner", *[case("y = np.inner(a, b)", a=A(sa, dt), b=A(sb, dt)) for dt in ALL
                  for sa, sb in (((4,), (4,)), ((3, 4), (2, 4)), ((2, 3, 4), (4,)))])
add("np.vdot", *[case("y = np.vdot(a, b)", a=A((3, 4), dt), b=A((3, 4), dt)) for dt in ALL[:4]])
add("np.tensordot",
    *[case(src, a=A((2, 3, 4), dt), b=A((3, 4, 5), dt)) for dt in ("f4", "f8", "i8") for src in (
        "y = np.tensordot(a, b)", "y = np.tensordot(a, b, axes=1)",
        "y = np.tensordot(a, b, axes=([1, 2], [0, 1]))", "y = np.tensordot(a, b, axes=(2, 1))")])
add("np.einsum",
    *[case(src, a=A((3, 4), dt), b=A((4, 2), dt)) for dt in ("f4", "f8", "i4") for src in (
        "y = np.einsum('ij,jk->ik', a, b)", "y = np.einsum('ij->j', a)", "y = np.einsum('ij,jk', a, b)",
        "y = np.einsum('...j,jk->...k', a, b)")],
    case("y = np.einsum('i,i', a, b)", a=A((4,), "f4"), b=A((4,), "f8")),
    case("y = np.einsum('ij,jk->ik', a, W)", consts={"W": np.eye(4, 2)}, a=A((3, 4), "f4")))
add("np.trace", *[case(src, x=A((3, 4), dt)) for dt in ALL
                  for src in ("y = np.trace(x)", "y = np.trace(x, 1)")],
    case("y = np.trace(x, axis1=1, axis2=2)", x=A((2, 3, 3), "f4")),
    case("y = np.trace(x, dtype=np.float32)", x=A((3, 3), "i4")))
add("ndarray.trace", case("y = x.trace()", x=A((3, 3), "f4")), case("y = x.trace()", x=A((3, 3), "i4")))
add("np.diagonal", *[case(src, x=A((3, 4), dt)) for dt in ALL for src in (
    "y = np.diagonal(x)", "y = np.diagonal(x, -1)")],
    case("y = np.diagonal(x, 0, 1, 2)", x=A((2, 3, 3), "f8")))
add("ndarray.diagonal", case("y = x.diagonal()", x=A((3, 4), "f4")),
    case("y = x.diagonal(offset=1)", x=A((3, 4), "i4")))
add("np.diag", *[case("y = np.diag(x)", x=A(s, dt)) for dt in ALL for s in ((3,), (3, 4))],
    case("y = np.diag(x, 1)", x=A((3,), "f4")), case("y = np.diag(x, -1)", x=A((3, 4), "f4")))
for _tri in ("tril", "triu"):
    add(f"np.{_tri}", *[case(src, x=A((4, 4), dt)) for dt in ALL for src in (
        f"y = np.{_tri}(x)", f"y = np.{_tri}(x, 1)", f"y = np.{_tri}(x, k=-1)")],
        case(f"y = np.{_tri}(x)", x=A((2, 3, 4), "f4")), case(f"y = np.{_tri}(x)", x=A((4,), "f4")))
add("np.cross",
    *[case("y = np.cross(a, b)", a=A(sa, dt), b=A(sb, dt)) for dt in ALL[:4]
      for sa, sb in (((3,), (3,)), ((4, 3), (3,)), ((2, 4, 3), (4, 3)))],
    case("y = np.cross(a, b)", a=A((3,), "f4"), b=A((3,), "f8")),
    case("y = np.cross(a, b, axis=0)", a=A((3, 4), "f4"), b=A((3, 4), "f4")),
    case("y = np.cross(a, b)", expect="reported", leapp="error", a=A((2,), "f8"), b=A((2,), "f8")))
add("np.linalg.norm",
    *[case(src, x=A((3, 4), dt)) for dt in ALL for src in (
        "y = np.linalg.norm(x)", "y = np.linalg.norm(x, axis=1)",
        "y = np.linalg.norm(x, axis=0, keepdims=True)")],
    *[case(src, x=A((3, 4), "f8")) for src in (
        "y = np.linalg.norm(x, 'fro')", "y = np.linalg.norm(x, ord=1, axis=1)",
        "y = np.linalg.norm(x, np.inf, 1)", "y = np.linalg.norm(x, -np.inf, axis=0)",
        "y = np.linalg.norm(x, 0, axis=1)", "y = np.linalg.norm(x, 3, 1)",
        "y = np.linalg.norm(x, ord=1)", "y = np.linalg.norm(x, ord=np.inf)", "y = np.linalg.norm(x, 'nuc')",
        "y = np.linalg.norm(x, 2)", "y = np.linalg.norm(x, -2)", "y = np.linalg.norm(x, axis=(1, 0))",
        "y = np.linalg.norm(x, 1, axis=(0, 1), keepdims=True)")],
    case("y = np.linalg.norm(x)", x=A((2, 3, 4), "f4")),
    case("y = np.linalg.norm(x, axis=(1, 2))", x=A((2, 3, 4), "f4")),
    case("y = np.linalg.norm(x, 2)", x=A((5,), "f4")),
    case("y = x / np.linalg.norm(x)", x=A((5,), "f4")),
    case("y = np.linalg.norm(x, ord=3)", expect="reported", x=A((3, 4), "f8")))
add("np.linalg.vector_norm", *[case(src, x=A((3, 4), dt)) for dt in ("f4", "f8", "i4") for src in (
    "y = np.linalg.vector_norm(x)", "y = np.linalg.vector_norm(x, axis=1, ord=1)",
    "y = np.linalg.vector_norm(x, ord=np.inf, axis=(0, 1), keepdims=True)")])
add("np.linalg.matrix_norm", *[case(src, x=A((2, 3, 4), dt)) for dt in ("f4", "f8") for src in (
    "y = np.linalg.matrix_norm(x)", "y = np.linalg.matrix_norm(x, ord=1)",
    "y = np.linalg.matrix_norm(x, ord='nuc')",
    "y = np.linalg.matrix_norm(x, ord=-np.inf, keepdims=True)")])
_SPD = {"lo": -1.0, "hi": 1.0}
add("np.linalg.inv", *[case("y = np.linalg.inv(x + 4 * np.eye(3))", x=A((3, 3), dt, **_SPD))
                        for dt in ALL[:4]],
    case("y = np.linalg.inv(x + 4 * np.eye(3, dtype=np.float32))", x=A((2, 3, 3), "f4", **_SPD)))
add("np.linalg.det", *[case("y = np.linalg.det(x)", x=A((3, 3), dt)) for dt in ALL[:4]],
    case("y = np.linalg.det(x)", x=A((2, 2, 2), "f4")))
add("np.linalg.solve",
    *[case("y = np.linalg.solve(a + 4 * np.eye(3), b)", a=A((3, 3), dt, **_SPD), b=A((3,), dt))
      for dt in ALL[:4]],
    case("y = np.linalg.solve(a + 4 * np.eye(3), b)", a=A((3, 3), "f8", **_SPD), b=A((3, 2), "f8")),
    case("y = np.linalg.solve(a + 4 * np.eye(3), b)", a=A((2, 3, 3), "f4", **_SPD), b=A((2, 3, 1), "f4")))


# NumPy 2's Array API namespace: the rows beyond NumPy 1's spellings.
NUMERIC = ("f4", "f8", "i4", "i8")
add("np.astype", *[case(src, x=A((3, 4), dt)) for dt in ALL for src in (
    "y = np.astype(x, np.int16)", "y = np.astype(x, np.float32, copy=False)", "y = np.astype(x, bool)")])
for _f in ("cumulative_sum", "cumulative_prod"):
    add(f"np.{_f}", *[case(src, x=A((3, 4), dt, lo=-2, hi=2)) for dt in ALL for src in (
        f"y = np.{_f}(x, axis=1)", f"y = np.{_f}(x, axis=0, include_initial=True)",
        f"y = np.{_f}(x, axis=-1, dtype=np.float64)")],
        case(f"y = np.{_f}(x)", x=A((5,), "i4")), case(f"y = np.{_f}(x, include_initial=True)", x=A((0,), "f4")))
add("np.count_nonzero", *[case(src, x=A((3, 4), dt, lo=-1, hi=1)) for dt in ALL for src in (
    "y = np.count_nonzero(x, axis=0)", "y = np.count_nonzero(x, axis=(0, 1), keepdims=True)",
    "y = np.count_nonzero(x, axis=())")])
add("np.unstack", *[case("a, b, c = np.unstack(x, axis=1)\ny = b", x=A((2, 3, 4), dt)) for dt in ALL],
    case("a, b = np.unstack(x)\ny = a", x=A((2,), "f8")))
add("np.broadcast_arrays", *[case("a, b = np.broadcast_arrays(x, z)\ny = b", x=A((3, 1), dt), z=A((4,), dt))
                             for dt in ALL])
add("np.meshgrid", *[case(src, x=A((3,), dt), z=A((4,), dt)) for dt in ALL for src in (
    "a, b = np.meshgrid(x, z)\ny = a", "a, b = np.meshgrid(x, z, indexing='ij', sparse=True)\ny = b")],
    case("a, b, c = np.meshgrid(x, x, x)\ny = c", x=A((2,), "f8")))
add("np.matrix_transpose", *[case("y = np.matrix_transpose(x)", x=A((2, 3, 4), dt)) for dt in ALL])
add("np.linalg.matrix_transpose", *[case("y = np.linalg.matrix_transpose(x)", x=A((3, 4), dt)) for dt in ALL])
# NumPy 2.3+ returns unique values of integers in hash order ("may vary"): compared sorted.
add("np.unique_values", *[case("y = np.sort(np.unique_values(x))", x=A((3, 4), dt, lo=-2, hi=2)) for dt in ALL],
    case("y = np.unique_values(x)", x=A((6,), "f8", special=True)))
add("np.unique_counts", *[case("v, c = np.unique_counts(x)\ny = c", x=A((8,), dt, lo=-2, hi=2)) for dt in ALL])
add("np.unique_inverse", *[case("v, i = np.unique_inverse(x)\ny = v[i]", x=A((2, 4), dt, lo=-2, hi=2))
                           for dt in ALL])
add("np.unique_all", *[case("v, i, inv, c = np.unique_all(x)\ny = i", x=A((8,), dt, lo=-2, hi=2))
                       for dt in ALL])
add("np.linalg.matmul", *[case("y = np.linalg.matmul(a, b)", a=A(sa, dt), b=A(sb, dt)) for dt in ALL
                          for sa, sb in (((3, 4), (4, 2)), ((2, 3, 4), (4,)))])
add("np.linalg.outer", *[case("y = np.linalg.outer(a, b)", a=A((3,), dt), b=A((4,), dt)) for dt in ALL])
add("np.linalg.tensordot", *[case(src, a=A((2, 3, 4), dt), b=A((3, 4, 2), dt)) for dt in ALL for src in (
    "y = np.linalg.tensordot(a, b)", "y = np.linalg.tensordot(a, b, axes=([1], [0]))")])
add("np.linalg.cross", *[case("y = np.linalg.cross(a, b)", a=A((2, 3), dt), b=A((3,), dt)) for dt in NUMERIC],
    case("y = np.linalg.cross(a, b, axis=0)", a=A((3, 2), "f8"), b=A((3, 2), "f8")))
add("np.linalg.vecdot", *[case(src, a=A((2, 3), dt), b=A((3,), dt)) for dt in ALL for src in (
    "y = np.linalg.vecdot(a, b)", "y = np.linalg.vecdot(a, b, axis=1)")])
add("np.vecdot", *[case("y = np.vecdot(a, b)", a=A((2, 3), dt), b=A((2, 3), dt)) for dt in ALL],
    case("y = np.vecdot(a, b, axis=0)", a=A((3, 2), "f8"), b=A((3, 1), "f8")))
add("np.linalg.trace", *[case(src, x=A((2, 3, 3), dt)) for dt in ALL for src in (
    "y = np.linalg.trace(x)", "y = np.linalg.trace(x, offset=-1, dtype=np.float64)")])
add("np.linalg.diagonal", *[case(src, x=A((2, 3, 4), dt)) for dt in ALL for src in (
    "y = np.linalg.diagonal(x)", "y = np.linalg.diagonal(x, offset=1)")])
_SYM = "(x + np.matrix_transpose(x)) / 2 + 4 * np.eye(3)"
add("np.linalg.cholesky", *[case(src, x=A((3, 3), dt, **_SPD)) for dt in NUMERIC for src in (
    f"y = np.linalg.cholesky({_SYM})", f"y = np.linalg.cholesky({_SYM}, upper=True)")])
# Eigenvalues first (the dtype sweep of benchmarks/lookup_table.py re-runs the first case in every dtype, and
# integer matrices often have repeated eigenvalues, whose eigenvectors no two LAPACK calls need agree on).
add("np.linalg.eigh", case(f"w, v = np.linalg.eigh({_SYM})\ny = w", x=A((3, 3), "f8", **_SPD)),
    *[case(f"w, v = np.linalg.eigh({_SYM})\ny = v", x=A((3, 3), dt, **_SPD)) for dt in ("f4", "f8")],
    case(f"y = np.linalg.eigh({_SYM}).eigenvalues", x=A((3, 3), "f8", **_SPD)))
add("np.linalg.eigvalsh", *[case(f"y = np.linalg.eigvalsh({_SYM}, UPLO='U')", x=A((2, 3, 3), dt, **_SPD))
                            for dt in NUMERIC])
add("np.linalg.matrix_power", *[case(src, x=A((3, 3), dt, lo=-1, hi=1)) for dt in NUMERIC for src in (
    "y = np.linalg.matrix_power(x, 3)", "y = np.linalg.matrix_power(x, 0)")],
    case("y = np.linalg.matrix_power(x + 4 * np.eye(3), -2)", x=A((3, 3), "f8", **_SPD)),
    case("y = np.linalg.matrix_power(x, 2)", expect="reported", x=A((3, 3), "b1")))
add("np.linalg.matrix_rank", *[case(src, x=A((2, 3, 4), dt)) for dt in NUMERIC for src in (
    "y = np.linalg.matrix_rank(x)", "y = np.linalg.matrix_rank(x, rtol=0.5)", "y = np.linalg.matrix_rank(x, tol=2.0)")])
add("np.linalg.pinv", *[case(src, x=A((3, 4), dt)) for dt in NUMERIC for src in (
    "y = np.linalg.pinv(x)", "y = np.linalg.pinv(x, rtol=None)", "y = np.linalg.pinv(x, rcond=0.3)")])
add("np.linalg.qr", *[case("y = np.linalg.qr(x, mode='r')", x=A((4, 3), dt)) for dt in ("f4", "f8")],
    case("q, r = np.linalg.qr(x)\ny = q @ r", x=A((4, 3), "f8")),
    case("h, tau = np.linalg.qr(x, mode='raw')\ny = h", expect="reported", x=A((4, 3), "f8")))
add("np.linalg.slogdet", *[case("s, l = np.linalg.slogdet(x)\ny = s * l", x=A((2, 3, 3), dt)) for dt in NUMERIC])
add("np.linalg.svd", *[case("y = np.linalg.svd(x, compute_uv=False)", x=A((4, 3), dt)) for dt in NUMERIC],
    case("u, s, vh = np.linalg.svd(x, full_matrices=False)\ny = (u * s) @ vh", x=A((4, 3), "f8")),
    case("u, s, vh = np.linalg.svd(x, hermitian=True)\ny = s", expect="reported", x=A((3, 3), "f8")))
add("np.linalg.svdvals", *[case("y = np.linalg.svdvals(x)", x=A((2, 4, 3), dt)) for dt in NUMERIC])
add("np.fft.hfft", *[case(src, x=A((5,), dt)) for dt in ("f4", "f8", "i4") for src in (
    "y = np.fft.hfft(x)", "y = np.fft.hfft(x, n=6, norm='ortho')")])
add("np.fft.ihfft", *[case(src, x=A((2, 5), dt)) for dt in ("f4", "f8", "i4") for src in (
    "y = np.fft.ihfft(x)", "y = np.fft.ihfft(x, n=4, axis=0)")])
add("np.std", case("y = np.std(x, axis=0, correction=1)", x=A((4, 3), "f8")),
    case("y = np.std(x, axis=1, mean=np.mean(x, axis=1, keepdims=True))", expect="reported", x=A((4, 3), "f4")),
    case("y = np.std(x, keepdims=True, correction=1.5)", x=A((4, 3), "i4")))
add("np.var", case("y = np.var(x, axis=(0, 1), correction=2)", x=A((2, 3, 2), "f4")),
    case("y = np.var(x, mean=np.zeros((1, 3)), axis=0, keepdims=True)", expect="reported", x=A((4, 3), "f8")))


# ------------------------------------------------------------------------------------------
# statistics and differences
# ------------------------------------------------------------------------------------------

add("np.diff", *[case(src, x=A((3, 5), dt)) for dt in ALL for src in (
    "y = np.diff(x)", "y = np.diff(x, axis=0)", "y = np.diff(x, n=2)", "y = np.diff(x, 1, -1)")],
    case("y = np.diff(x, prepend=0.0)", x=A((5,), "f4")),
    case("y = np.diff(x, append=x[-1:])", x=A((5,), "f8")),
    case("y = np.diff(x, n=0)", x=A((5,), "f8")))
for _name in ("median", "quantile", "percentile"):
    _q = "" if _name == "median" else (", 0.3" if _name == "quantile" else ", 30")
    _qs = "" if _name == "median" else (", [0.1, 0.5, 0.9]" if _name == "quantile" else ", [10, 50, 90]")
    add(f"np.{_name}", *[case(src, x=A((3, 5), dt)) for dt in ("f4", "f8", "i4", "i8") for src in (
        f"y = np.{_name}(x{_q})", f"y = np.{_name}(x{_q}, axis=0)",
        f"y = np.{_name}(x{_q}, axis=-1, keepdims=True)",
        f"y = np.{_name}(x{_qs}, axis=1)", f"y = np.{_name}(x{_q}, keepdims=True)")],
        case(f"y = np.{_name}(x{_q})", x=A((4,), "f4")),
        case(f"y = np.{_name}(x{_q}, axis=(0, 2))", x=A((2, 3, 2), "f8")))
add("np.quantile", case("y = np.quantile(x, 0.5, method='nearest')", x=A((5,), "f8")),
    case("y = np.quantile(x, 0.25, method='lower')", x=A((6,), "f4")),
    case("y = np.quantile(x, 0.25, method='median_unbiased')", expect="reported", x=A((6,), "f4")))
add("np.average", *[case(src, x=A((3, 4), dt), w=A((4,), "f4", lo=0.5, hi=2.0)) for dt in ALL for src in (
    "y = np.average(x)", "y = np.average(x, axis=1, weights=w)", "y = np.average(x, axis=0)")],
    case("y = np.average(x, weights=w)", x=A((3, 4), "f4"), w=A((3, 4), "f8", lo=0.5, hi=2.0)),
    case("y = np.average(x, axis=1, weights=w, keepdims=True)", x=A((3, 4), "i4"),
         w=A((4,), "i4", lo=1, hi=3)))
add("np.ptp", *[case(src, x=A((3, 4), dt)) for dt in ALL[:4] for src in (
    "y = np.ptp(x)", "y = np.ptp(x, axis=0)", "y = np.ptp(x, axis=1, keepdims=True)")])
add("np.isclose", *[case("y = np.isclose(a, b)", a=A((3, 4), dt, lo=-1, hi=1), b=A((3, 4), dt, lo=-1, hi=1))
                    for dt in ALL[:4]],
    case("y = np.isclose(a, a + 1e-9)", a=A((3, 4), "f8")),
    case("y = np.isclose(a, b, rtol=0.5, atol=0.1)", a=A((3, 4), "f4"), b=A((3, 4), "f8")),
    case("y = np.isclose(a, b, equal_nan=True)", a=A((3, 4), "f4", special=True),
         b=A((3, 4), "f4", special=True)),
    case("y = np.isclose(a, 0.5, atol=0.3)", a=A((3, 4), "f4")))
add("np.sinc", *[case("y = np.sinc(x)", x=A((3, 4), dt)) for dt in ALL[:4]],
    case("y = np.sinc(x * 0)", x=A((3,), "f4")))
add("np.linspace",
    *[case(src, a=A((), dt), b=A((), dt)) for dt in ("f4", "f8", "i4") for src in (
        "y = np.linspace(a, b, 5)", "y = np.linspace(a, b, 4, endpoint=False)", "y = np.linspace(a, b, 1)")],
    case("y = np.linspace(a, 10.0, 6)", a=A((), "f4")),
    case("y = np.linspace(a, b, 3)", a=A((2,), "f4"), b=A((2,), "f4")),
    case("y = np.linspace(a, b, 3, axis=-1)", a=A((2,), "f8"), b=A((), "f8")),
    case("y = np.linspace(a, b, 5, dtype=np.float32)", a=A((), "f8"), b=A((), "f8")),
    case("y = np.linspace(a, b, 5, dtype=np.int32)", a=A((), "f8"), b=A((), "f8", lo=10, hi=20)),
    case("y, step = np.linspace(a, b, 5, retstep=True)", outputs=("y", "step"), a=A((), "f8"), b=A((), "f8")))


# ------------------------------------------------------------------------------------------
# creation from traced arrays, copies and conversions
# ------------------------------------------------------------------------------------------

for _like, _vals in (("zeros_like", True), ("ones_like", True), ("empty_like", False)):
    add(f"np.{_like}", *[case(f"y = np.{_like}(x)", values=_vals, x=A((3, 4), dt)) for dt in ALL],
        case(f"y = np.{_like}(x, dtype=np.float64)", values=_vals, x=A((3, 4), "i4")),
        case(f"y = np.{_like}(x, dtype=bool)", values=_vals, x=A((2,), "f4")),
        case(f"y = x + np.{_like}(x)", values=_vals, x=A((3,), "f4")))
add("np.full_like", *[case("y = np.full_like(x, 7)", x=A((3, 4), dt)) for dt in ALL],
    case("y = np.full_like(x, 2.7)", x=A((3, 4), "i4")),
    case("y = np.full_like(x, -2.7, dtype=np.float32)", x=A((3, 4), "i4")),
    case("y = np.full_like(x, x[0])", x=A((3, 4), "f4")),
    case("y = np.full_like(x, s)", x=A((3, 4), "f4"), s=A((), "f8")))
add("np.copy", *[case("y = np.copy(x)", x=A((3, 4), dt)) for dt in ALL])
add("ndarray.copy", *[case("y = x.copy()", x=A((3, 4), dt)) for dt in ALL])
add("ndarray.astype", *[case(f"y = x.astype({t})", x=A((3, 4), dt, lo=-3, hi=3)) for dt in ALL for t in (
    "np.float32", "np.float64", "np.int32", "'int64'", "bool", "float", "np.int16")],
    case("y = x.astype(np.uint8)", x=A((3, 4), "f4", lo=0, hi=200)),
    case("y = x.astype(np.float32, copy=False)", x=A((3, 4), "f4")))
add("ndarray.fill", case("y = x * 1\ny.fill(3)", x=A((3, 4), "f4")),
    case("y = x + 0\ny.fill(2.5)", x=A((3, 4), "i4")))
add("np.real", case("y = np.real(x)", x=A((3, 4), "f4")), case("y = np.real(np.fft.fft(x))", x=A((4,), "f8")),
    case("y = np.real(x)", x=A((3,), "c8")))
add("np.imag", case("y = np.imag(x)", x=A((3, 4), "f4")), case("y = np.imag(np.fft.fft(x))", x=A((4,), "f8")),
    case("y = np.imag(x)", x=A((3,), "c16")), case("y = np.imag(x)", x=A((3,), "i4")))
add("ndarray.real", case("y = x.real", x=A((3, 4), "f8")), case("y = np.fft.fft(x).real", x=A((4,), "f4")))
add("ndarray.imag", case("y = x.imag", x=A((3, 4), "f4")), case("y = np.fft.rfft(x).imag", x=A((4,), "f4")))
add("np.asarray", case("y = np.asarray(x, dtype=np.float64)", x=A((3, 4), "f4")),
    case("y = np.asarray(x, np.int32) * 2", x=A((3, 4), "f8")),
    case("y = np.asarray(x, dtype=np.float32)", x=A((3, 4), "i4")))
add("np.array", *[case("y = np.array(x)", x=A((3, 4), dt)) for dt in ALL],
    case("y = np.array(x, dtype=np.float32)", x=A((3, 4), "f8")),
    case("y = np.array(x) * 2", x=A((3,), "i4")))
add("np.array([...])",
    case("y = np.array([x[0:1], x[1:2]]) * 2", leapp="error", x=A((4,), "f4")),
    case("y = np.array([x[0], x[1], 2.0])", leapp="error", x=A((4,), "f4")),
    case("y = np.array([[x[0], x[1]], [x[2], x[3]]])", leapp="error", x=A((4,), "f8")),
    case("y = np.array([x[0], x[1]], dtype=np.float64)", leapp="error", x=A((3, 2), "f4")),
    case("y = np.array((x, x * 2))", leapp="error", x=A((3,), "i4")),
    case("w, a, b, c = x\ny = np.array([c, b, a, w])", leapp="error", x=A((4,), "f4")))


# ------------------------------------------------------------------------------------------
# fft, pad, interp
# ------------------------------------------------------------------------------------------

for _f in ("fft", "ifft"):
    add(f"np.fft.{_f}", *[case(src, x=A((3, 4), dt)) for dt in ("f4", "f8", "i4") for src in (
        f"y = np.fft.{_f}(x)", f"y = np.fft.{_f}(x, axis=0)", f"y = np.fft.{_f}(x, n=6)",
        f"y = np.fft.{_f}(x, norm='ortho')", f"y = np.fft.{_f}(x, 3, 0, 'forward')")],
        case(f"y = np.fft.{_f}(np.fft.fft(x))", x=A((5,), "f4")))
add("np.fft.rfft", *[case(src, x=A((3, 6), dt)) for dt in ("f4", "f8", "i4") for src in (
    "y = np.fft.rfft(x)", "y = np.fft.rfft(x, axis=0)", "y = np.fft.rfft(x, n=5, norm='ortho')")])
add("np.fft.irfft", *[case(src, x=A((3, 6), dt)) for dt in ("f4", "f8") for src in (
    "y = np.fft.irfft(np.fft.rfft(x))", "y = np.fft.irfft(np.fft.rfft(x), n=6)",
    "y = np.fft.irfft(np.fft.rfft(x, axis=0), 3, 0)")],
    case("y = np.fft.irfft(x)", x=A((4,), "f8")))
for _f in ("fft2", "ifft2", "fftn", "ifftn", "rfft2", "rfftn"):
    add(f"np.fft.{_f}", *[case(src, x=A((2, 3, 4), dt)) for dt in ("f4", "f8") for src in (
        f"y = np.fft.{_f}(x)", f"y = np.fft.{_f}(x, axes=(0, 2))",
        f"y = np.fft.{_f}(x, s=(4, 4), axes=(-2, -1), norm='ortho')")])
for _f, _fwd in (("irfft2", "rfft2"), ("irfftn", "rfftn")):
    add(f"np.fft.{_f}", *[case(src, x=A((2, 3, 4), dt)) for dt in ("f4", "f8") for src in (
        f"y = np.fft.{_f}(np.fft.{_fwd}(x))", f"y = np.fft.{_f}(np.fft.{_fwd}(x), s=(3, 4), axes=(1, 2))",
        f"y = np.fft.{_f}(np.fft.{_fwd}(x, axes=(0, 1)), axes=(0, 1))")])
for _f in ("fftshift", "ifftshift"):
    add(f"np.fft.{_f}", *[case(src, x=A((3, 4), dt)) for dt in ALL for src in (
        f"y = np.fft.{_f}(x)", f"y = np.fft.{_f}(x, axes=1)", f"y = np.fft.{_f}(x, axes=(0,))")])
add("np.pad",
    *[case(src, x=A((3, 4), dt)) for dt in ALL[:4] for src in (
        "y = np.pad(x, 1)", "y = np.pad(x, (1, 2))", "y = np.pad(x, ((0, 1), (2, 0)), constant_values=5)",
        "y = np.pad(x, 2, mode='edge')", "y = np.pad(x, ((1, 2), (3, 1)), mode='reflect')",
        "y = np.pad(x, 2, 'symmetric')", "y = np.pad(x, ((1, 0), (5, 6)), mode='wrap')")],
    case("y = np.pad(x, 1, constant_values=0.5)", x=A((4,), "f4")),
    case("y = np.pad(x, ((1, 1), (0, 0), (2, 2)))", x=A((2, 3, 2), "f8")),
    case("y = np.pad(x, 7, mode='reflect')", x=A((3,), "f8")),
    case("y = np.pad(x, 1, mode='maximum')", expect="reported", x=A((4,), "f4")))
add("np.interp",
    *[case("y = np.interp(x, XP, FP)", consts={"XP": np.array([-1.0, 0.0, 0.5, 2.0]),
                                               "FP": np.array([0.0, 2.0, 10.0, 11.0])}, x=A((3, 4), dt))
      for dt in ("f4", "f8", "i4")],
    case("y = x * 0.1 + np.interp(x, [0, 1], [0, 10])", x=A((4,), "f4", lo=-1, hi=2)),
    case("y = np.interp(x, xp, fp, left=-1.0, right=99.0)", x=A((5,), "f4"), xp=A((4,), "f8", sorted_=True),
         fp=A((4,), "f4")),
    case("y = np.interp(x, [0.0, 1.0], [1.0, 3.0])", x=A((), "f8")),
    case("y = np.interp(x, [0.0, 1.0], [1.0, 3.0], period=1.0)", expect="reported", x=A((3,), "f8")))


# ------------------------------------------------------------------------------------------
# the runner
# ------------------------------------------------------------------------------------------

ROWS = {row.numpy: row for row in ops.all_rows()}
LEAPP_DEFECT = "is recorded correctly here, but LEAPP 0.7.2 records it wrongly"


def runnable_cases(per_row: int, profiles: Any) -> Any:
    """(case, profile, inputs) for the first ``per_row`` cases of every row that NumPy runs on inputs drawn with seed
    0, for each profile ``profiles(row)`` names; warnings silenced."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, cases in CASES.items():
            for profile in profiles(ROWS[name]):
                for case_ in cases[:per_row]:
                    rng = np.random.default_rng(0)
                    inputs = {k: spec.draw(rng) for k, spec in case_.inputs.items()}
                    try:
                        _run_eager(case_, inputs)
                    except Exception:  # noqa: BLE001 - NumPy refuses these inputs: nothing to trace
                        continue
                    yield case_, profile, inputs


def _run_eager(case_: Case, inputs: dict[str, np.ndarray]) -> tuple[Any, ...]:
    namespace: dict[str, Any] = {"np": np, **case_.consts}
    namespace.update({k: np.array(v, copy=True) for k, v in inputs.items()})
    with np.errstate(all="ignore"):
        exec(case_.source, namespace)
    return tuple(namespace[name] for name in case_.outputs)


_TOLERANCE = {2: (2e-3, 2e-3), 4: (2e-5, 5e-5), 8: (1e-9, 1e-11)}


def _tolerance(*dtypes: np.dtype) -> tuple[float, float]:
    """(rtol, atol) for the least precise floating dtype among ``dtypes``: a float64 result computed from
    float32 data (np.quantile with a q list) is only as exact as float32."""
    sizes = [d.itemsize // (2 if d.kind == "c" else 1) for d in map(np.dtype, dtypes) if d.kind in "fc"]
    return _TOLERANCE[min(sizes, default=8)]


def assert_same(want: Any, have: np.ndarray, what: str, values: bool = True,
                inputs: tuple[np.ndarray, ...] = ()) -> None:
    """``have`` (the graph's output) equals ``want`` (NumPy's) in shape, dtype and value."""
    want = np.asarray(want)
    assert have.shape == want.shape, f"{what}: shape {have.shape}, NumPy {want.shape}"
    assert have.dtype == want.dtype, f"{what}: dtype {have.dtype}, NumPy {want.dtype}"
    if not values:
        return
    if want.dtype.kind in "fc":
        rtol, atol = _tolerance(want.dtype, *(np.asarray(v).dtype for v in inputs))
        scale = float(np.nanmax(np.abs(want[np.isfinite(want)]), initial=1.0))
        np.testing.assert_allclose(have, want, rtol=rtol, atol=atol * max(scale, 1.0), equal_nan=True,
                                   err_msg=what)
    else:
        np.testing.assert_array_equal(have, want, err_msg=what)


def check_case(name: str, case_: Case, profile: str, seed: int = 0) -> None:
    """Trace ``case_`` and hold the graph to NumPy on the trace inputs and on ``N_FRESH`` fresh inputs."""
    rng = np.random.default_rng(seed)
    trace_inputs = {k: spec.draw(rng) for k, spec in case_.inputs.items()}
    what = f"[{profile}] {case_.source!r} {({k: (v.shape, v.dtype.name) for k, v in trace_inputs.items()})}"
    try:
        _run_eager(case_, trace_inputs)
    except Exception:
        # NumPy itself refuses (no loop for this dtype, ...): the traced cell must raise the same way.
        with pytest.raises(ln.CellError):
            ln.trace_cell(case_.source, {"np": np, **case_.consts}, inputs=trace_inputs,
                          outputs=list(case_.outputs), profile=profile)
        return
    trace = ln.trace_cell(case_.source, {"np": np, **case_.consts}, inputs=trace_inputs,
                          outputs=list(case_.outputs), profile=profile)
    # In the leapp profile, a call LEAPP 0.7.2 records wrongly is an error hazard although our graph is
    # right (tracing/leapp_defects.py); the graph is still held to NumPy below.
    errors = [h for h in trace.hazards if h.severity == "error" and LEAPP_DEFECT not in h.message]
    expect = "reported" if profile == "leapp" and case_.leapp == "error" else case_.expect
    if expect == "reported":
        assert errors, f"{what}: expected an error hazard, got {trace.hazards}"
        assert all(h.line is not None for h in errors), what
        return
    assert not errors, f"{what}: unexpected error hazards {[(h.kind, h.message) for h in errors]}"
    node = trace.nodes["node"]
    recorded = {facts(n).numpy for n in node.graph.graph.nodes}
    records = case_.records or name
    assert records in recorded, f"{what}: no graph node records {records} ({sorted(map(str, recorded))})"
    draws = [trace_inputs] + [{k: spec.draw(rng) for k, spec in case_.inputs.items()} for _ in range(N_FRESH)]
    for i, inputs in enumerate(draws):
        want = _run_eager(case_, inputs)
        have = node(*[inputs[k] for k in case_.inputs])
        for out_name, w, h in zip(case_.outputs, want, have, strict=True):
            assert_same(w, h, f"{what} output {out_name} on {'trace' if i == 0 else 'fresh'} inputs #{i}",
                        case_.values, inputs=tuple(inputs.values()))


def _profiles(name: str) -> tuple[str, ...]:
    return ("full", "leapp") if ROWS[name].leapp else ("full",)


# ------------------------------------------------------------------------------------------
# tests
# ------------------------------------------------------------------------------------------

def test_every_row_has_a_parity_case() -> None:
    assert len(ROWS) == len(ops.all_rows()), "two rows share a NumPy name"
    assert set(CASES) - set(ROWS) == set(), "cases for rows that do not exist"
    assert set(ROWS) - set(CASES) == set(), "rows without a parity case: add one to tests/test_parity.py"


def test_every_row_has_a_case_beyond_the_reported_ones() -> None:
    """A row whose cases all expect ``reported`` would pass without recording anything."""
    assert [n for n, cs in CASES.items() if all(c.expect == "reported" for c in cs)] == []


@pytest.mark.parametrize("name", sorted(CASES))
def test_row_matches_numpy(name: str) -> None:
    failures = []
    for profile in _profiles(name):
        for case_ in CASES[name]:
            try:
                check_case(name, case_, profile)
            except AssertionError as exc:
                failures.append(str(exc).strip().splitlines()[0][:400])
    assert not failures, f"{len(failures)} failing case(s) for {name}:\n" + "\n".join(failures)


def test_parity_checker_catches_a_wrong_graph(monkeypatch: pytest.MonkeyPatch) -> None:
    """The checker itself can fail: a row built with the wrong torch op is caught on values."""
    row = ops.UFUNC_ROWS[np.sin]
    monkeypatch.setitem(ops.UFUNC_ROWS, np.sin, ops.Row(row.key, row.numpy, row.torch, ops.elementwise(
        __import__("torch").cos), row.names, row.leapp, row.kind))
    with pytest.raises(AssertionError, match="Mismatch|Not equal"):
        check_case("np.sin", case("y = np.sin(x)", x=A((3, 4), "f8")), "full")


def test_parity_checker_catches_a_wrong_dtype() -> None:
    with pytest.raises(AssertionError, match="dtype"):
        assert_same(np.zeros(3, np.float64), np.zeros(3, np.float32), "dtype check")
    with pytest.raises(AssertionError, match="shape"):
        assert_same(np.zeros((3, 1)), np.zeros(3), "shape check")


# ------------------------------------------------------------------------------------------
# the semantics DESIGN.md names, one test each
# ------------------------------------------------------------------------------------------

def _graph_vs_numpy(source: str, profile: str = "full", **inputs: Arr) -> tuple[np.ndarray, Any, Any]:
    """Trace ``source`` (no error hazard allowed), run graph and NumPy on fresh inputs; both results."""
    case_ = case(source, **inputs)
    rng = np.random.default_rng(1)
    trace = ln.trace_cell(source, {"np": np}, inputs={k: s.draw(rng) for k, s in inputs.items()},
                          outputs=["y"], profile=profile)
    errors = [h.message for h in trace.hazards if h.severity == "error" and LEAPP_DEFECT not in h.message]
    assert not errors, errors
    fresh = {k: s.draw(rng) for k, s in inputs.items()}
    (have,) = trace.nodes["node"](*fresh.values())
    (want,) = _run_eager(case_, fresh)
    assert_same(want, have, source)
    return have, want, trace.nodes["node"].graph.code


@pytest.mark.parametrize("profile", ["leapp", "full"])
def test_axis_becomes_dim_and_keepdims_works_without_axis(profile: str) -> None:
    have, _, code = _graph_vs_numpy("y = np.sum(x, keepdims=True)", profile, x=A((3, 4)))
    assert have.shape == (1, 1)
    have, _, code = _graph_vs_numpy("y = np.mean(x, axis=-1)", profile, x=A((3, 4)))
    assert have.shape == (3,) and "dim = (1,)" in code


@pytest.mark.parametrize("profile", ["leapp", "full"])
def test_empty_axis_tuple_reduces_nothing(profile: str) -> None:
    have, want, _ = _graph_vs_numpy("y = np.sum(x, axis=())", profile, x=A((3, 4), "i4"))
    assert have.shape == (3, 4)
    have, _, _ = _graph_vs_numpy("y = np.mean(x, axis=())", profile, x=A((4,), "i4"))
    assert have.dtype == np.float64 and have.shape == (4,)


@pytest.mark.parametrize("profile", ["leapp", "full"])
def test_std_and_var_default_to_ddof_zero(profile: str) -> None:
    have, _, code = _graph_vs_numpy("y = np.std(x)", profile, x=A((6,), "f8"))
    assert "torch.div(sum_2, 6.0)" in code  # the squared deviations over n - 0
    have, _, code = _graph_vs_numpy("y = x.var(ddof=1)", profile, x=A((6,), "f8"))
    assert "torch.div(sum_2, 5.0)" in code


def test_float32_std_overflows_where_numpy_does() -> None:
    """NumPy squares the float32 deviations, so data near 1e19 gives inf; a Welford update would not."""
    x = np.array([1e19, -1e19, 3e19, 0.0], np.float32)
    trace = ln.trace_cell("y = np.std(x)\nz = np.var(x, axis=0)", {"np": np}, inputs={"x": x}, outputs=["y", "z"],
                          profile="full")
    fresh = np.array([2e19, -2e19, 1e19, 5.0], np.float32)
    with np.errstate(over="ignore"):
        want = (np.std(fresh), np.var(fresh, axis=0))
    have = trace.nodes["node"](fresh)
    assert np.isinf(want[0]) and np.isinf(have[0]) and have[0].dtype == np.float32
    assert np.isinf(have[1]) and np.isinf(want[1])


@pytest.mark.parametrize("profile", ["leapp", "full"])
def test_mean_of_integers_is_float64(profile: str) -> None:
    have, _, _ = _graph_vs_numpy("y = np.mean(x, axis=0)", profile, x=A((3, 4), "i4"))
    assert have.dtype == np.float64
    have, _, _ = _graph_vs_numpy("y = x.mean()", profile, x=A((3, 4), "b1"))
    assert have.dtype == np.float64


@pytest.mark.parametrize("profile", ["leapp", "full"])
def test_int32_index_arrays_index_the_graph(profile: str) -> None:
    have, _, _ = _graph_vs_numpy("y = x[i]", profile, x=A((5,)), i=A((3,), "i4", lo=-5, hi=4))
    assert have.shape == (3,)
    _graph_vs_numpy("y = x[np.argsort(x).astype(np.int32)]", profile, x=A((5,)))


@pytest.mark.parametrize("profile", ["leapp", "full"])
def test_transpose_without_axes_reverses_them(profile: str) -> None:
    have, _, _ = _graph_vs_numpy("y = np.transpose(x)", profile, x=A((2, 3, 4)))
    assert have.shape == (4, 3, 2)


@pytest.mark.parametrize("profile", ["leapp", "full"])
def test_max_and_min_return_values_only(profile: str) -> None:
    have, _, code = _graph_vs_numpy("y = np.max(x, axis=1) - np.min(x, axis=1)", profile, x=A((3, 4)))
    assert have.shape == (3,) and "amax" in code and "amin" in code


@pytest.mark.parametrize("profile", ["leapp", "full"])
def test_split_takes_a_count_of_sections(profile: str) -> None:
    have, _, _ = _graph_vs_numpy("a, b, c = np.split(x, 3)\ny = b", profile, x=A((6, 2)))
    assert have.shape == (2, 2)


@pytest.mark.parametrize("profile", ["leapp", "full"])
def test_nonzero_returns_a_tuple(profile: str) -> None:
    rng = np.random.default_rng(0)
    trace = ln.trace_cell("r, c = np.nonzero(x > 0)", {"np": np}, inputs={"x": A().draw(rng)},
                          outputs=["r", "c"], profile=profile)
    assert trace.ok
    fresh = A().draw(rng)
    rows, cols = trace.nodes["node"](fresh)
    want_rows, want_cols = np.nonzero(fresh > 0)
    assert_same(want_rows, rows, "nonzero rows")
    assert_same(want_cols, cols, "nonzero cols")
    _graph_vs_numpy("y = x[np.nonzero(x > 0)]", profile, x=A((3, 4)))


@pytest.mark.parametrize("profile", ["leapp", "full"])
def test_astype_expand_dims_concatenate_append_around(profile: str) -> None:
    have, _, _ = _graph_vs_numpy("y = x.astype(np.int32)", profile, x=A((3, 4)))
    assert have.dtype == np.int32
    have, _, _ = _graph_vs_numpy("y = np.expand_dims(x, (0, -1))", profile, x=A((3, 4)))
    assert have.shape == (1, 3, 4, 1)
    have, _, _ = _graph_vs_numpy("y = np.concatenate([x, x * 2], axis=None)", profile, x=A((3, 4)))
    assert have.shape == (24,)
    have, _, _ = _graph_vs_numpy("y = np.around(x, 2)", profile, x=A((3, 4)))
    assert np.allclose(have, np.round(have, 2))
    have, _, _ = _graph_vs_numpy("y = np.append(x, 1.0)", "full", x=A((3,)))
    assert have.shape == (4,) and have[-1] == 1.0


@pytest.mark.parametrize("source, dtype", [
    ("y = x + 1.5", "float32"),                  # Python float is weak
    ("y = x + np.array(1.5)", "float64"),        # a 0-d float64 array is not
    ("y = x + s64", "float64"),                  # nor is a traced float64 0-d value
    ("y = xi + 3", "int32"),                     # Python int is weak
    ("y = xi / xi2", "float64"),                 # int / int -> float64
    ("y = xi + 2.5", "float64"),                 # int array + Python float -> float64
    ("y = x * np.float32(3.0)", "float32"),      # NumPy float32 scalar operand
    ("y = x * np.float64(3.0)", "float64"),      # NumPy float64 scalar operand is not weak
    ("y = xi + np.int64(1)", "int64"),
])
def test_result_dtypes_follow_nep50(source: str, dtype: str) -> None:
    have, want, _ = _graph_vs_numpy(source, "full", x=A((4,), "f4"), s64=A((), "f8"), xi=A((4,), "i4"),
                                    xi2=A((4,), "i4", nonzero=True))
    assert have.dtype == np.dtype(dtype) == want.dtype


def test_seed_cases_leapp_gets_wrong_are_right_here() -> None:
    """The measured LEAPP 0.7.2 failures on lookup semantics (docs/leapp-0.7.2-behaviour.md)."""
    for source, inputs in [("y = x.mean()", {"x": A((4,), "i4")}), ("y = np.sum(x, axis=())", {"x": A((4,))}),
                           ("y = x * x.max()", {"x": A((4,))}), ("y = np.round(x, 2)", {"x": A((4,))}),
                           ("y = np.cumsum(x)", {"x": A((4,))}), ("y = x + np.float64(1)", {"x": A((4,))}),
                           ("y = x * (x.sum() + 1)", {"x": A((4,))})]:
        _graph_vs_numpy(source, "full", **inputs)


def test_creation_functions_with_static_arguments_are_genuine_constants() -> None:
    for source in ("y = x + np.eye(3)", "y = x * np.linspace(0, 1, 3)", "y = x + np.zeros(3) + np.arange(3)",
                   "y = x + np.full((3, 3), 2.0)", "y = x @ np.ones((3, 2), np.float32)"):
        trace = ln.trace_cell(source, {"np": np}, inputs={"x": np.ones((3, 3), np.float32)}, outputs=["y"],
                              profile="leapp")
        assert trace.hazards == [], source
        consts = [n for n in trace.nodes["node"].graph.graph.nodes if n.op == "get_attr"]
        assert consts and all(facts(n).const == "genuine" for n in consts), source
        _graph_vs_numpy(source, "leapp", x=A((3, 3)))
    # A float64 constant in a float32 matmul: LEAPP's model raises ("expected m1 and m2 to have the same
    # dtype"), so the leapp profile flags it while the graph itself is right.
    trace = ln.trace_cell("y = x @ np.ones((3, 2))", {"np": np}, inputs={"x": np.ones((3, 3), np.float32)},
                          outputs=["y"], profile="leapp")
    assert [(h.kind, h.severity) for h in trace.hazards] == [("semantic-mismatch", "error")]


def test_case_names_are_numpy_spellings() -> None:
    pattern = re.compile(r"^(np\.[a-z_0-9.]+|ndarray\.[A-Za-z_]+|np\.array\(\[\.\.\.\]\))$")
    assert [name for name in CASES if not pattern.match(name)] == []


# ------------------------------------------------------------------------------------------
# export: every row's graph survives TorchScript tracing (what export.py writes)
# ------------------------------------------------------------------------------------------

def _first_parity_case(name: str) -> Case:
    """The row's first case that NumPy itself runs (some dtype variants exist to check NumPy's refusal)."""
    for case_ in CASES[name]:
        if case_.expect != "parity":
            continue
        try:
            _run_eager(case_, {k: spec.draw(np.random.default_rng(0)) for k, spec in case_.inputs.items()})
        except Exception:
            continue
        return case_
    raise AssertionError(f"{name} has no case NumPy runs")


@pytest.mark.parametrize("name", sorted(CASES))
def test_row_graph_matches_numpy_after_torchscript_tracing(name: str) -> None:
    """export.py writes ``torch.jit.trace`` of the graph: the traced module must still equal NumPy on fresh
    inputs (nothing data-dependent may be frozen by jit tracing)."""
    import torch

    case_ = _first_parity_case(name)
    rng = np.random.default_rng(3)
    inputs = {k: spec.draw(rng) for k, spec in case_.inputs.items()}
    trace = ln.trace_cell(case_.source, {"np": np, **case_.consts}, inputs=inputs,
                          outputs=list(case_.outputs), profile="full")
    node = trace.nodes["node"]
    example = tuple(torch.from_numpy(np.array(inputs[k], copy=True)) for k in case_.inputs)
    with torch.no_grad():
        scripted = torch.jit.trace(node.graph.eval(), example, check_trace=False, strict=False)
    for i in range(2):
        fresh = {k: spec.draw(rng) for k, spec in case_.inputs.items()}
        want = _run_eager(case_, fresh)
        with torch.no_grad():
            have = scripted(*[torch.from_numpy(np.array(fresh[k], copy=True)) for k in case_.inputs])
        for out_name, w, h in zip(case_.outputs, want, have, strict=True):
            assert_same(w, h.resolve_conj().numpy(), f"jit {case_.source!r} output {out_name} fresh #{i}",
                        case_.values, inputs=tuple(fresh.values()))


@pytest.mark.parametrize("body", [
    "y = np.linalg.pinv(x) @ np.array([0.1, -0.2, 0.05], np.float32)",  # an IK step: the zero singular value cut
    "y = np.linalg.svd(x, compute_uv=False)",
    "y = np.linalg.eigvalsh(x @ x.T)",
])
def test_float32_linalg_computes_in_double_as_numpy_does(body):
    """numpy.linalg computes float32 input in float64 and casts the results back. A float32 pinv in the graph kept a
    singular Jacobian's zero singular value at ~1e-7, above the 1e-15 cutoff NumPy applies to its ~1e-16, and inverted
    it: the step was off by 2e5 (found by an exploration session; only the LEAPP warning showed)."""
    singular = np.array([[1.0, 2.0], [2.0, 4.0], [0.5, 1.0]], np.float32)     # rank 1
    t = ln.trace_cell(body, {"np": np}, inputs={"x": singular}, outputs=["y"], profile="full")
    assert not [h for h in t.hazards if h.severity == "error"], t.hazards
    for x in (singular, singular * 3.0, np.array([[1.0, 0.0], [0.0, 0.0], [0.0, 1.0]], np.float32)):
        eager = t.run_eager({"node": {"x": x}})["node"]["y"]
        got = t.nodes["node"](x)[0]
        assert got.dtype == eager.dtype == np.float32
        np.testing.assert_allclose(got, eager, rtol=1e-5, atol=1e-5)
