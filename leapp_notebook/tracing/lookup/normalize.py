"""NumPy-to-torch argument normalizers shared by the builders: axes, keepdims, ufunc loop dtypes."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from .context import _BOOL, _I64, BuildContext, Unsupported, _asarray


def _static_int(value: Any) -> Any:
    """NumPy integers (and arrays/lists of them) as Python ints: fx writes them into the graph's code."""
    if isinstance(value, np.ndarray):
        value = value.tolist()
    if isinstance(value, (list, tuple)):
        return tuple(_static_int(v) for v in value)
    return int(value) if isinstance(value, (int, np.integer, bool, np.bool_)) else value


def norm_axes(axis: Any, ndim: int) -> tuple[int, ...] | None:
    """NumPy ``axis`` to a tuple of non-negative dims; None means every axis."""
    if axis is None:
        return None
    if isinstance(axis, (int, np.integer)):
        axis = (axis,)
    size = max(ndim, 1)
    out = []
    for a in axis:
        a = int(a)
        if not -size <= a < size:
            raise Unsupported(f"axis {a} out of range")
        out.append(a % size)
    return tuple(out)


def _one_axis(ctx: BuildContext, name: str, ndim: int, default: Any = None) -> int:
    return norm_axes(ctx.static(name, default), ndim)[0]


def _keepdims(ctx: BuildContext) -> bool:
    return bool(ctx.static("keepdims", False))


_LOOPS: dict[tuple[Any, ...], tuple[np.dtype, ...]] = {}
OPERAND_NAMES = _X = ("x0", "x1", "x2", "x3")  # ufunc operands are bound as x0, x1, ...


def _operand_key(value: Any) -> Any:
    """What decides a ufunc loop for one operand: the dtype of an array or NumPy scalar, the type of a
    Python scalar (weak under NEP 50); bool is the lowest kind, as weak as a Python scalar can be."""
    kind = type(value)
    if kind is bool:
        return _BOOL
    if kind is int or kind is float or kind is complex:
        return kind
    dtype = getattr(value, "dtype", None)
    return dtype if isinstance(dtype, np.dtype) else _asarray(value).dtype


def _loop_dtypes(ufunc: np.ufunc, eager: dict[str, Any], dtype: Any = None) -> tuple[np.dtype, ...]:
    """The dtypes NumPy's ufunc loop computes in (inputs, then outputs). Cached per signature: every
    recorded ufunc call asks."""
    nin = ufunc.nin
    if nin == 2:
        key: tuple[Any, ...] = (ufunc, dtype, _operand_key(eager["x0"]), _operand_key(eager["x1"]))
    elif nin == 1:
        key = (ufunc, dtype, _operand_key(eager["x0"]))
    else:
        key = (ufunc, dtype, *(_operand_key(eager[_X[i]]) for i in range(nin)))
    loop = _LOOPS.get(key)
    if loop is None:
        outputs = (None,) * ufunc.nout if dtype is None else (np.dtype(dtype),) * ufunc.nout
        try:
            loop = ufunc.resolve_dtypes(key[2:] + outputs)
        except (TypeError, ValueError) as exc:  # NumPy resolves differently (or raises) at call time
            raise Unsupported(f"{ufunc.__name__}: {exc}") from exc
        _LOOPS[key] = loop
    return loop


def _merge_dims(ctx: BuildContext, x: Any, dims: tuple[int, ...], ndim: int) -> Any:
    """Move ``dims`` last and merge them into one axis (for torch ops that reduce a single dim)."""
    keep = [d for d in range(ndim) if d not in dims]
    x = ctx.call(torch.permute, x, tuple(keep + list(dims)))
    return ctx.call(torch.flatten, x, len(keep))


def _contract(ctx: BuildContext, fn: Any, tensors: list[Any], *args: Any, **kwargs: Any) -> Any:
    """Matrix products: torch has no bool (and few small-int) kernels; bool is computed in int64."""
    if ctx.result_dtype == _BOOL:
        tensors = [ctx.to(t, _I64) for t in tensors]
        return ctx.call(torch.ne, ctx.call(fn, *tensors, *args, **kwargs), 0)
    return ctx.call(fn, *tensors, *args, **kwargs)
