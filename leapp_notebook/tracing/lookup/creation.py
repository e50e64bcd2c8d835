"""Builders for *_like creation, linspace and the copies and conversions (astype, copy, asarray, real/imag)."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import torch

from .context import BuildContext, Unsupported, _asarray, _derived, torch_dtype
from .row import reads


def like_creation(kind: str, array: str = "a") -> Callable[[BuildContext], Any]:
    """zeros_like/ones_like/full_like/empty_like: the result depends only on the input's shape. ``array`` is
    NumPy's name for the input (``prototype`` for empty_like)."""

    @reads(f"{array} dtype fill_value")
    def build(ctx: BuildContext) -> Any:
        dtype = ctx.result_dtype
        x = ctx.tensor(array)
        if kind != "full":
            fn = torch.ones_like if kind == "ones" else torch.zeros_like
            return ctx.call(fn, x, dtype=torch_dtype(dtype))
        fill = ctx.eager["fill_value"]
        if isinstance(fill, (bool, int, float)) and not _derived(ctx.params["fill_value"]):
            # NumPy casts the fill value unsafely to the result dtype; torch's own cast does the same.
            fill = _asarray(fill).astype(dtype).item()
            return ctx.call(torch.full_like, x, fill, dtype=torch_dtype(dtype))
        return ctx.call(torch.clone, ctx.call(torch.broadcast_to, ctx.tensor("fill_value", dtype),
                                              np.shape(ctx.result)))

    return build


@reads("start stop num endpoint retstep dtype axis")
def build_linspace(ctx: BuildContext) -> Any:
    """NumPy's algorithm: ``start + arange(num) * step`` with the last sample set to ``stop``."""
    num = int(ctx.static("num", 50))
    endpoint = bool(ctx.static("endpoint", True))
    if num < 0:
        raise Unsupported("negative num")
    start_e, stop_e = ctx.eager["start"], ctx.eager["stop"]
    dt = np.result_type(start_e, stop_e, 1.0)
    out_shape = np.shape(ctx.result[0] if ctx.static("retstep", False) else ctx.result)
    start = ctx.as_tensor(ctx.params["start"], start_e, dt)
    stop = ctx.as_tensor(ctx.params["stop"], stop_e, dt)
    delta = ctx.call(torch.sub, stop, start)
    ndim = len(np.broadcast_shapes(np.shape(start_e), np.shape(stop_e)))
    div = num - 1 if endpoint else num
    steps = ctx.constant(np.arange(num, dtype=dt).reshape((-1,) + (1,) * ndim))
    step = ctx.call(torch.div, delta, div) if div > 0 else ctx.call(torch.mul, delta, float("nan"))
    y = ctx.call(torch.add, ctx.call(torch.mul, steps, step if div > 0 else delta), start)
    if endpoint and num > 1:
        last = (np.arange(num) == num - 1).reshape((-1,) + (1,) * ndim)
        y = ctx.call(torch.where, ctx.constant(last), stop, y)
    axis = ctx.static("axis", 0)
    if axis != 0:
        y = ctx.call(torch.movedim, y, 0, int(axis) % len(out_shape))
    want = np.dtype(ctx.static("dtype")) if ctx.given("dtype") else dt
    if want.kind in "iu":
        y = ctx.call(torch.floor, y)
    y = ctx.cast(y, dt, want)
    return [y, step] if ctx.static("retstep", False) else y




def astype(array: str = "a") -> Callable[[BuildContext], Any]:
    """x.astype(dtype) and np.astype(x, dtype): an explicit cast (NumPy's unsafe casting, as torch's)."""

    @reads(f"{array} dtype")
    def build(ctx: BuildContext) -> Any:
        # cast from the argument itself (not from its computing dtype: uint64 computes in int64)
        want = np.dtype(ctx.static("dtype"))
        node = ctx.tensor(array, want)
        return ctx.call(torch.clone, node) if want == _asarray(ctx.eager[array]).dtype else node

    return build


@reads("a")
def build_copy(ctx: BuildContext) -> Any:
    return ctx.call(torch.clone, ctx.tensor("a"))


@reads("val")
def build_real(ctx: BuildContext) -> Any:
    return ctx.call(torch.real, ctx.tensor("val"))


@reads("val")
def build_imag(ctx: BuildContext) -> Any:
    if _asarray(ctx.eager["val"]).dtype.kind != "c":
        return ctx.call(torch.zeros_like, ctx.tensor("val"))  # torch.imag refuses real tensors
    return ctx.call(torch.imag, ctx.tensor("val"))


@reads("a dtype")
def build_asarray(ctx: BuildContext) -> Any:
    """np.asarray / np.array / np.ascontiguousarray of an array: a copy in the dtype asked for, in the result's
    shape (np.ascontiguousarray gives a 0-d array one axis)."""
    want = ctx.static("dtype")
    node = ctx.call(torch.clone, ctx.tensor("a", None if want is None else np.dtype(want)))
    shape = np.shape(ctx.result)
    return node if shape == np.shape(ctx.eager["a"]) else ctx.call(torch.reshape, node, shape)


@reads("object dtype")
def build_stack_of_values(ctx: BuildContext) -> Any:
    """``np.array([...])`` whose nested elements include traced values: a stack of the leaves."""
    dtype = ctx.result_dtype
    leaves: list[Any] = []

    def walk(value: Any, eager: Any) -> None:
        if isinstance(value, (list, tuple)):
            for v, e in zip(value, eager, strict=True):
                walk(v, e)
        else:
            leaves.append(ctx.call(torch.reshape, ctx.as_tensor(value, eager, dtype), (-1,)))

    walk(ctx.params["object"], ctx.eager["object"])
    return ctx.call(torch.reshape, ctx.call(torch.cat, leaves, 0), np.shape(ctx.result))


@reads("a value")
def build_fill_method(ctx: BuildContext) -> Any:
    dtype = ctx.result_dtype
    value = ctx.eager["value"]
    if isinstance(value, (bool, int, float)) and not _derived(ctx.params["value"]):
        return ctx.call(torch.full_like, ctx.tensor("a"), _asarray(value).astype(dtype).item())
    filled = ctx.call(torch.broadcast_to, ctx.tensor("value", dtype), np.shape(ctx.result))
    return ctx.call(torch.clone, filled)
