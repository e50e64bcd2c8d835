"""Builders for selection, sorting, searching, clipping and rounding, take, interp."""

from __future__ import annotations

import math
import operator
from typing import Any

import numpy as np
import torch

from .. import torch_impl
from .context import _BOOL, _F64, _I64, BuildContext, Unsupported, _asarray, _derived, in_float_range
from .elementwise import _complex_parts
from .normalize import norm_axes
from .row import reads


@reads("condition x y")
def build_where(ctx: BuildContext) -> Any:
    if not ctx.has("x"):
        return build_nonzero_of(ctx, "condition")
    dtype = ctx.result_dtype
    cond = ctx.tensor("condition", _BOOL)
    # A Python float beside an array, on a float result, goes to torch.where as it is (weak, as NEP 50 treats it:
    # the result keeps the array's dtype), and the graph holds for any float there. Anything else is a tensor of the
    # result dtype (two numbers: torch would compute in its default dtype).
    # A float beyond the dtype's range stays a constant (NumPy makes it inf; torch.where would not).
    floats = [name for name, other in (("x", "y"), ("y", "x")) if dtype.kind == "f"
              and type(ctx.eager[name]) is float and ctx.eager[name] is ctx.params[name]
              and type(ctx.eager[other]) is not float
              and in_float_range(ctx.eager[name], dtype)]
    values = [ctx.eager[name] if name in floats else _where_operand(ctx, name, dtype) for name in ("x", "y")]
    if floats:
        ctx.extra["any_number"] = tuple(floats)
    return ctx.call(torch.where, cond, *values)


def _where_operand(ctx: BuildContext, name: str, dtype: np.dtype) -> Any:
    """``np.where``'s operand ``name`` as a tensor of the result ``dtype``. A Python int beyond an integer result's
    range is cast as NumPy casts it there, through its own array, unsafely: ``np.where(x > 0, x, -3)`` on uint8
    holds 253 (converting the int to uint8 directly raises)."""
    eager = ctx.eager[name]
    if type(eager) is int and dtype.kind in "iu" and not np.iinfo(dtype).min <= eager <= np.iinfo(dtype).max:
        eager = np.asarray(eager).astype(dtype)
    return ctx.as_tensor(ctx.params[name], eager, dtype)


def build_nonzero_of(ctx: BuildContext, name: str) -> list[Any]:
    if np.ndim(ctx.eager[name]) == 0:
        raise Unsupported("nonzero of a 0-d array")
    node = ctx.call(torch.nonzero, ctx.tensor(name), as_tuple=True)
    return [ctx.call(operator.getitem, node, i) for i in range(len(ctx.result))]


@reads("a")
def build_nonzero(ctx: BuildContext) -> list[Any]:
    return build_nonzero_of(ctx, "a")


@reads("a")
def build_argwhere(ctx: BuildContext) -> Any:
    if np.ndim(ctx.eager["a"]) == 0:
        raise Unsupported("argwhere of a 0-d array")
    return ctx.call(torch.argwhere, ctx.tensor("a"))


def _sort_input(ctx: BuildContext) -> tuple[Any, int]:
    if ctx.given("order"):
        raise Unsupported("sort order= is not recorded")
    arr = _asarray(ctx.eager["a"])
    x = ctx.tensor("a")
    axis = ctx.static("axis", -1)
    if axis is None:
        return ctx.call(torch.reshape, x, (-1,)), 0
    return x, norm_axes(axis, max(arr.ndim, 1))[0]


@reads("a axis order stable")
def build_sort(ctx: BuildContext) -> Any:
    x, dim = _sort_input(ctx)
    return ctx.call(operator.getitem, ctx.call(torch.sort, x, dim=dim, stable=True), 0)


@reads("a axis order stable")
def build_argsort(ctx: BuildContext) -> Any:
    """A stable sort: equals NumPy's default (unstable) argsort wherever the keys have no ties."""
    x, dim = _sort_input(ctx)
    return ctx.call(torch.argsort, x, dim=dim, stable=True)


@reads("a v side sorter")
def build_searchsorted(ctx: BuildContext) -> Any:
    if ctx.given("sorter"):
        raise Unsupported("searchsorted sorter=")
    seq = _asarray(ctx.eager["a"])
    common = np.result_type(seq, ctx.eager["v"])
    right = ctx.static("side", "left") == "right"
    values = ctx.scalar_or_tensor("v", common)
    return ctx.call(torch.searchsorted, ctx.tensor("a", common), values, right=right)


@reads("a a_min a_max min max")
def build_clip(ctx: BuildContext) -> Any:
    dtype = ctx.result_dtype
    x = ctx.tensor("a", dtype)
    bounds = []
    numbers = []  # float bounds passed to clamp as they are, on a float result: the graph holds for any float there
    for legacy, name in (("a_min", "min"), ("a_max", "max")):
        key = legacy if ctx.given(legacy) else name
        bound = ctx.scalar_or_tensor(key, dtype) if ctx.given(key) else None
        if type(bound) is int and dtype.kind in "iu":
            # NumPy clips with a Python int outside the dtype's range as with the range's end; torch would
            # wrap it into the dtype (-100 as uint8 is 156).
            info = np.iinfo(dtype)
            bound = min(max(bound, int(info.min)), int(info.max))
        elif type(bound) is float and dtype.kind == "f" and bound is ctx.params.get(key):
            numbers.append(key)
        bounds.append(bound)
    if bounds == [None, None]:
        return ctx.call(torch.clone, x)  # NumPy 2 clips nothing; torch.clamp wants a bound
    if dtype == _BOOL:
        # torch.clamp has no bool kernel; NumPy's minimum(maximum(a, lo), hi) on bools is (a | lo) & hi
        node = x
        for (legacy, name), bound, combine in zip((("a_min", "min"), ("a_max", "max")), bounds,
                                                  (torch.logical_or, torch.logical_and), strict=True):
            if bound is not None:
                node = ctx.call(combine, node, ctx.tensor(legacy if ctx.given(legacy) else name, dtype))
        return node
    if numbers:
        ctx.extra["any_number"] = tuple(numbers)
    # NumPy computes minimum(maximum(a, lo), hi); so does clamp, including when lo > hi.
    return ctx.call(torch.clamp, x, *bounds)


@reads("a decimals")
def build_round(ctx: BuildContext) -> Any:
    decimals = int(ctx.static("decimals", 0))
    arr = _asarray(ctx.eager["a"])
    if arr.dtype.kind in "biu":
        if decimals >= 0:
            return ctx.call(torch.clone, ctx.tensor("a"))
        raise Unsupported("rounding integers to negative decimals")
    extra = {"decimals": decimals} if decimals else {}
    if arr.dtype.kind == "c":
        return _complex_parts(ctx, torch.round, ctx.tensor("a"), **extra)
    return ctx.call(torch.round, ctx.tensor("a"), **extra)


@reads("x")
def build_fix(ctx: BuildContext) -> Any:
    if _asarray(ctx.eager["x"]).dtype.kind in "biu":
        return ctx.call(torch.clone, ctx.tensor("x"))
    return ctx.call(torch.trunc, ctx.tensor("x"))


@reads("x nan posinf neginf")
def build_nan_to_num(ctx: BuildContext) -> Any:
    if _asarray(ctx.eager["x"]).dtype.kind not in "fc":
        return ctx.call(torch.clone, ctx.tensor("x"))
    nan = float(ctx.static("nan", 0.0))
    posinf, neginf = ctx.static("posinf"), ctx.static("neginf")
    return ctx.call(torch.nan_to_num, ctx.tensor("x"), nan, None if posinf is None else float(posinf),
                    None if neginf is None else float(neginf))


@reads("a b rtol atol equal_nan")
def build_isclose(ctx: BuildContext) -> Any:
    """NumPy's own formula: ``|a - b| <= atol + rtol * |b|`` where b is finite, or ``a == b``."""
    rtol, atol = float(ctx.static("rtol", 1e-05)), float(ctx.static("atol", 1e-08))
    a_eager, b_eager = ctx.eager["a"], ctx.eager["b"]
    if isinstance(b_eager, (int, float)) and not isinstance(b_eager, np.generic):
        common = np.result_type(a_eager, float(b_eager))  # a Python scalar b stays weak
    else:
        common = np.result_type(a_eager, np.result_type(b_eager, 1.0))
    a = ctx.tensor("a", common)
    b = ctx.tensor("b", common)
    difference = ctx.call(torch.abs, ctx.call(torch.sub, a, b))
    if isinstance(b_eager, (int, float)) and not isinstance(b_eager, np.generic) and common.kind == "f":
        # NumPy keeps a Python b a Python float for the tolerance and the finiteness (float64: 2**40 is finite,
        # though float16 makes it -inf in a - b), and casts the tolerance to a's dtype once, where it compares
        value = float(b_eager)
        with np.errstate(over="ignore"):
            tolerance = float(np.asarray(atol + rtol * abs(value)).astype(common))
        equal = ctx.call(torch.eq, a, b)
        if not math.isfinite(value):
            return _equal_nan(ctx, equal, a, b)
        return _equal_nan(ctx, ctx.call(torch.logical_or, ctx.call(torch.le, difference, tolerance), equal), a, b)
    close = ctx.call(torch.le, difference,
                     ctx.call(torch.add, ctx.call(torch.mul, ctx.call(torch.abs, b), rtol), atol))
    result = ctx.call(torch.logical_or, ctx.call(torch.logical_and, close, ctx.call(torch.isfinite, b)),
                      ctx.call(torch.eq, a, b))
    return _equal_nan(ctx, result, a, b)


def _equal_nan(ctx: BuildContext, result: Any, a: Any, b: Any) -> Any:
    """isclose's ``equal_nan``: nan is close to nan."""
    if ctx.static("equal_nan", False):
        both_nan = ctx.call(torch.logical_and, ctx.call(torch.isnan, a), ctx.call(torch.isnan, b))
        result = ctx.call(torch.logical_or, result, both_nan)
    return result


@reads("x")
def build_sinc(ctx: BuildContext) -> Any:
    return ctx.call(torch.sinc, ctx.tensor("x", ctx.result_dtype))


def _index_tensor(ctx: BuildContext, name: str) -> Any:
    """Index arrays as torch wants them: int64 (NumPy accepts any integer dtype, torch only int64)."""
    eager = ctx.eager[name]
    if isinstance(eager, (int, np.integer)) and not _derived(ctx.params[name]):
        return int(eager)
    return ctx.tensor(name, _I64)


@reads("a indices axis mode")
def build_take(ctx: BuildContext) -> Any:
    mode = ctx.static("mode", "raise")
    arr = _asarray(ctx.eager["a"])
    x = ctx.tensor("a")
    axis = ctx.static("axis")
    if axis is None:
        x, dim, size = ctx.call(torch.reshape, x, (-1,)), 0, arr.size
    else:
        dim = norm_axes(axis, arr.ndim)[0]
        size = arr.shape[dim]
    index = _index_tensor(ctx, "indices")
    if mode == "wrap":
        index = ctx.call(torch.remainder, index, size) if isinstance(index, torch.fx.Node) else index % size
    elif mode == "clip":
        index = ctx.call(torch.clamp, index, 0, size - 1) if isinstance(index, torch.fx.Node) else \
            min(max(index, 0), size - 1)
    return ctx.call(operator.getitem, x, (slice(None),) * dim + (index,))


@reads("arr indices axis")
def build_take_along_axis(ctx: BuildContext) -> Any:
    arr = _asarray(ctx.eager["arr"])
    x = ctx.tensor("arr")
    axis = ctx.static("axis", -1)
    if axis is None:
        x, dim, size = ctx.call(torch.reshape, x, (-1,)), 0, arr.size
    else:
        dim = norm_axes(axis, arr.ndim)[0]
        size = arr.shape[dim]
    index = ctx.tensor("indices", _I64)
    # gather has no negative indices; NumPy's fancy indexing does.
    index = ctx.call(torch.where, ctx.call(torch.lt, index, 0), ctx.call(torch.add, index, size), index)
    return ctx.call(torch.take_along_dim, x, index, dim)



@reads("x xp fp left right period")
def build_interp(ctx: BuildContext) -> Any:
    if ctx.given("period"):
        raise Unsupported("interp period=")
    if np.iscomplexobj(ctx.eager["fp"]):
        raise Unsupported("complex interp")
    x = ctx.tensor("x", _F64)
    xp = ctx.tensor("xp", _F64)
    fp = ctx.tensor("fp", _F64)
    left, right = ctx.static("left"), ctx.static("right")
    left = None if left is None else float(left)
    right = None if right is None else float(right)
    return ctx.call(torch_impl.interp, x, xp, fp, left, right)


def _flat(ctx: BuildContext, name: str) -> Any:
    return ctx.call(torch.reshape, ctx.tensor(name), (-1,))


@reads("x")
def build_unique_values(ctx: BuildContext) -> Any:
    """Sorted unique values (a data-dependent length, as np.nonzero's); NaNs stay distinct in both."""
    return ctx.call(torch.unique, _flat(ctx, "x"), sorted=True)


@reads("x")
def build_unique_counts(ctx: BuildContext) -> list[Any]:
    node = ctx.call(torch.unique, _flat(ctx, "x"), sorted=True, return_counts=True)
    return [ctx.call(operator.getitem, node, 0), ctx.call(operator.getitem, node, 1)]


@reads("x")
def build_unique_inverse(ctx: BuildContext) -> list[Any]:
    node = ctx.call(torch.unique, _flat(ctx, "x"), sorted=True, return_inverse=True)
    inverse = ctx.call(torch.reshape, ctx.call(operator.getitem, node, 1), np.shape(ctx.eager["x"]))
    return [ctx.call(operator.getitem, node, 0), inverse]


@reads("x")
def build_unique_all(ctx: BuildContext) -> list[Any]:
    """(values, first indices, inverse, counts): the first index of each value is the smallest position
    its inverse index maps from (``scatter_reduce`` with ``amin``)."""
    size = int(np.size(ctx.eager["x"]))
    node = ctx.call(torch.unique, _flat(ctx, "x"), sorted=True, return_inverse=True, return_counts=True)
    values, inverse, counts = (ctx.call(operator.getitem, node, i) for i in range(3))
    start = ctx.call(torch.add, ctx.call(torch.zeros_like, counts), size)
    positions = ctx.constant(np.arange(size, dtype=np.int64))
    first = ctx.call(torch.scatter_reduce, start, 0, inverse, positions, "amin")
    return [values, first, ctx.call(torch.reshape, inverse, np.shape(ctx.eager["x"])), counts]
