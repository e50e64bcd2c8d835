"""Builders for shape ops: reshape, transpose, flips, rolls, tiling, joining, splitting and padding."""

from __future__ import annotations

import operator
from typing import Any, Callable

import numpy as np
import torch

from .context import BuildContext, Unsupported, _asarray, _derived
from .normalize import _static_int, norm_axes
from .reductions import _flat_or_dim
from .row import reads


@reads("a shape newshape")
def build_reshape_to_result(ctx: BuildContext) -> Any:
    """Shape-only ops whose result is the input's data in C order: a reshape to NumPy's result shape, with the
    user's ``-1`` kept (``x.reshape(-1)``, ``ravel``, ``flatten``), so a value of data-dependent length (a
    masked selection) still reshapes on other inputs."""
    shape = ctx.static("shape") if ctx.given("shape") else None
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    result = np.shape(ctx.result)
    if shape is None and len(result) == 1:
        target: tuple[int, ...] = (-1,)
    elif shape is not None and any(int(s) == -1 for s in shape):
        target = tuple(int(s) for s in shape)
    else:
        target = result
    return ctx.call(torch.reshape, ctx.tensor("a"), target)


def _at_least(ctx: BuildContext, value: Any, eager: Any, ndim: int) -> Any:
    """np.atleast_Nd of one array by unsqueezing (NumPy's own placement), so no length is fixed."""
    x = ctx.as_tensor(value, eager)
    have = np.ndim(eager)
    if have >= ndim:
        return ctx.call(torch.clone, x)
    if have == 0:
        return ctx.call(torch.reshape, x, (1,) * ndim)
    if have == 1:
        x = ctx.call(torch.unsqueeze, x, 0)  # (N,) -> (1, N) [-> (1, N, 1)]
        return ctx.call(torch.unsqueeze, x, -1) if ndim == 3 else x
    return ctx.call(torch.unsqueeze, x, -1)  # (M, N) -> (M, N, 1)


@reads("arys")
def build_atleast(ctx: BuildContext) -> Any:
    """np.atleast_1d/2d/3d; several arguments give a tuple."""
    arrays, eagers = ctx.params["arys"], ctx.eager["arys"]
    results = ctx.result if len(arrays) > 1 else (ctx.result,)
    nodes = [_at_least(ctx, a, e, np.ndim(r)) for a, e, r in zip(arrays, eagers, results, strict=True)]
    return nodes if len(arrays) > 1 else nodes[0]


@reads("a axes")
def build_transpose(ctx: BuildContext) -> Any:
    arr = _asarray(ctx.eager["a"])
    axes = ctx.static("axes")
    dims = tuple(range(arr.ndim - 1, -1, -1)) if axes is None else norm_axes(axes, arr.ndim)
    return ctx.call(torch.permute, ctx.tensor("a"), dims)


@reads("a axis1 axis2")
def build_swapaxes(ctx: BuildContext) -> Any:
    arr = _asarray(ctx.eager["a"])
    a1, a2 = norm_axes((ctx.static("axis1"), ctx.static("axis2")), arr.ndim)
    return ctx.call(torch.swapaxes, ctx.tensor("a"), a1, a2)


@reads("a source destination")
def build_moveaxis(ctx: BuildContext) -> Any:
    arr = _asarray(ctx.eager["a"])
    src = norm_axes(ctx.static("source"), arr.ndim)
    dst = norm_axes(ctx.static("destination"), arr.ndim)
    return ctx.call(torch.movedim, ctx.tensor("a"), src, dst)


@reads("a axis")
def build_squeeze(ctx: BuildContext) -> Any:
    arr = _asarray(ctx.eager["a"])
    axis = ctx.static("axis")
    if axis is None:
        return ctx.call(torch.squeeze, ctx.tensor("a"))
    return ctx.call(torch.squeeze, ctx.tensor("a"), norm_axes(axis, arr.ndim))


@reads("a axis")
def build_expand_dims(ctx: BuildContext) -> Any:
    axis = ctx.static("axis")
    if isinstance(axis, (int, np.integer)):
        out_ndim = np.ndim(ctx.eager["a"]) + 1
        return ctx.call(torch.unsqueeze, ctx.tensor("a"), int(axis) % out_ndim)
    x = ctx.tensor("a")
    for dim in sorted(norm_axes(axis, np.ndim(ctx.result))):
        x = ctx.call(torch.unsqueeze, x, dim)
    return x


@reads("m axis")
def build_flip(ctx: BuildContext) -> Any:
    arr = _asarray(ctx.eager["m"])
    dims = norm_axes(ctx.static("axis"), arr.ndim)
    return ctx.call(torch.flip, ctx.tensor("m"), tuple(range(arr.ndim)) if dims is None else dims)


def flip_axis(dim: int) -> Callable[[BuildContext], Any]:
    @reads("m")
    def build(ctx: BuildContext) -> Any:
        return ctx.call(torch.flip, ctx.tensor("m"), (dim,))

    return build


@reads("a shift axis")
def build_roll(ctx: BuildContext) -> Any:
    arr = _asarray(ctx.eager["a"])
    shift = _static_int(ctx.static("shift"))
    axis = ctx.static("axis")
    if axis is None:
        return ctx.call(torch.roll, ctx.tensor("a"), shift)
    return ctx.call(torch.roll, ctx.tensor("a"), shift, norm_axes(axis, arr.ndim))


@reads("m k axes")
def build_rot90(ctx: BuildContext) -> Any:
    arr = _asarray(ctx.eager["m"])
    axes = norm_axes(ctx.static("axes", (0, 1)), arr.ndim)
    return ctx.call(torch.rot90, ctx.tensor("m"), int(ctx.static("k", 1)), axes)


@reads("array shape")
def build_broadcast_to(ctx: BuildContext) -> Any:
    return ctx.call(torch.broadcast_to, ctx.tensor("array"), np.shape(ctx.result))


@reads("A reps")
def build_tile(ctx: BuildContext) -> Any:
    reps = _static_int(ctx.static("reps"))
    return ctx.call(torch.tile, ctx.tensor("A"), reps if isinstance(reps, tuple) else (reps,))


@reads("a repeats axis")
def build_repeat(ctx: BuildContext) -> Any:
    arr = _asarray(ctx.eager["a"])
    x = ctx.tensor("a")
    x, dim = _flat_or_dim(ctx, x, ctx.static("axis"), arr.ndim)
    if _derived(ctx.params["repeats"]):
        # traced counts: a data-dependent length, recorded as np.nonzero's is (repeat_interleave with a tensor)
        length = arr.size if ctx.static("axis") is None else arr.shape[dim]
        counts = ctx.call(torch.reshape, ctx.tensor("repeats", np.dtype(np.int64)), (-1,))
        if np.size(ctx.eager["repeats"]) == 1 and length != 1:
            counts = ctx.call(torch.broadcast_to, counts, (length,))
        return ctx.call(torch.repeat_interleave, x, counts, dim)
    repeats = _static_int(ctx.static("repeats"))
    if isinstance(repeats, tuple):
        if len(repeats) == 1:
            repeats = repeats[0]
        else:
            repeats = ctx.constant(_asarray(repeats, dtype=np.int64))
    return ctx.call(torch.repeat_interleave, x, repeats, dim)



def _sequence_tensors(ctx: BuildContext, name: str, dtype: np.dtype) -> list[Any]:
    values = ctx.params[name]
    eagers = ctx.eager[name]
    if isinstance(values, np.ndarray):
        if _derived(values):
            raise Unsupported("a traced array as the sequence of arrays to join")
        values = list(values)
        eagers = list(_asarray(eagers))
    return [ctx.as_tensor(v, e, dtype) for v, e in zip(values, eagers, strict=True)]


def _join_array(ctx: BuildContext, axis: Any, stack: bool) -> Any:
    """A traced array as the sequence to join: its sub-arrays ``x[i]`` moved to ``axis``
    (merged with that axis for concatenate)."""
    x = ctx.tensor("arrays", ctx.result_dtype)
    shape = np.shape(ctx.result)
    if axis is None:
        return ctx.call(torch.reshape, x, shape)
    dim = norm_axes(axis, len(shape))[0]
    moved = ctx.call(torch.movedim, x, 0, dim)
    return moved if stack else ctx.call(torch.reshape, moved, shape)


@reads("arrays axis dtype")
def build_concatenate(ctx: BuildContext) -> Any:
    axis = ctx.static("axis", 0)
    if _derived(ctx.params["arrays"]) and isinstance(ctx.params["arrays"], np.ndarray):
        return _join_array(ctx, axis, stack=False)
    tensors = _sequence_tensors(ctx, "arrays", ctx.result_dtype)
    if axis is None:
        tensors = [ctx.call(torch.reshape, t, (-1,)) for t in tensors]
        axis = 0
    ndim = np.ndim(ctx.eager["arrays"][0])
    return ctx.call(torch.cat, tensors, norm_axes(axis, ndim)[0])


@reads("arrays axis dtype")
def build_stack(ctx: BuildContext) -> Any:
    if _derived(ctx.params["arrays"]) and isinstance(ctx.params["arrays"], np.ndarray):
        return _join_array(ctx, ctx.static("axis", 0), stack=True)
    tensors = _sequence_tensors(ctx, "arrays", ctx.result_dtype)
    return ctx.call(torch.stack, tensors, norm_axes(ctx.static("axis", 0), np.ndim(ctx.result))[0])


def sequence_join(torch_fn: Any) -> Callable[[BuildContext], Any]:
    """vstack/hstack/dstack/column_stack: torch's functions of the same name follow NumPy's shape rules."""

    @reads("tup dtype")
    def build(ctx: BuildContext) -> Any:
        return ctx.call(torch_fn, _sequence_tensors(ctx, "tup", ctx.result_dtype))

    return build


@reads("arr values axis")
def build_append(ctx: BuildContext) -> Any:
    dtype = ctx.result_dtype
    arr = ctx.tensor("arr", dtype)
    values = ctx.tensor("values", dtype)
    axis = ctx.static("axis")
    if axis is None:
        flat = [ctx.call(torch.reshape, arr, (-1,)), ctx.call(torch.reshape, values, (-1,))]
        return ctx.call(torch.cat, flat, 0)
    return ctx.call(torch.cat, [arr, values], norm_axes(axis, np.ndim(ctx.eager["arr"]))[0])


@reads("ary indices_or_sections axis")
def build_split(ctx: BuildContext) -> list[Any]:
    arr = _asarray(ctx.eager["ary"])
    sections = _static_int(ctx.static("indices_or_sections"))
    dim = norm_axes(ctx.static("axis", 0), arr.ndim)[0]
    node = ctx.call(torch.tensor_split, ctx.tensor("ary"), sections, dim)
    return [ctx.call(operator.getitem, node, i) for i in range(len(ctx.result))]



def _pad_index(mode: str, size: int, before: int, after: int) -> np.ndarray:
    """Source index along one axis for NumPy's index-based pad modes."""
    index = np.arange(-before, size + after)
    if mode == "edge":
        return np.clip(index, 0, size - 1)
    if mode == "wrap":
        return index % size
    if mode == "reflect":
        if size == 1:
            return np.zeros_like(index)
        period = 2 * (size - 1)
        index = index % period
        return np.where(index >= size, period - index, index)
    period = 2 * size  # symmetric: the edge value repeats
    index = index % period
    return np.where(index >= size, period - 1 - index, index)


@reads("array pad_width mode constant_values reflect_type")
def build_pad(ctx: BuildContext) -> Any:
    arr = _asarray(ctx.eager["array"])
    mode = ctx.static("mode", "constant")
    width = np.broadcast_to(_asarray(_static_int(ctx.static("pad_width")), dtype=np.int64), (arr.ndim, 2))
    x = ctx.tensor("array")
    if mode == "constant":
        value = ctx.static("constant_values", 0)
        if np.ndim(value) != 0:
            raise Unsupported("per-axis constant_values")
        flat: list[int] = []
        for before, after in width[::-1]:
            flat += [int(before), int(after)]
        fill = _asarray(value).astype(arr.dtype).item()
        return ctx.call(torch.nn.functional.pad, x, tuple(flat), "constant", fill)
    if mode not in ("edge", "wrap", "reflect", "symmetric") or ctx.static("reflect_type", "even") != "even":
        raise Unsupported(f"pad mode={mode!r}")
    for dim, (before, after) in enumerate(width):
        if before or after:
            if arr.shape[dim] == 0:
                raise Unsupported("padding an empty axis")
            index = _pad_index(mode, arr.shape[dim], int(before), int(after))
            x = ctx.call(torch.index_select, x, dim, ctx.constant(index))
    return x


@reads("x axis")
def build_unstack(ctx: BuildContext) -> list[Any]:
    """np.unstack: the sub-arrays along ``axis``, as a tuple."""
    dim = norm_axes(ctx.static("axis", 0), np.ndim(ctx.eager["x"]))[0]
    parts = ctx.call(torch.unbind, ctx.tensor("x"), dim)
    return [ctx.call(operator.getitem, parts, i) for i in range(len(ctx.result))]


@reads("args")
def build_broadcast_arrays(ctx: BuildContext) -> list[Any]:
    return [ctx.call(torch.broadcast_to, ctx.as_tensor(a, e), np.shape(r))
            for a, e, r in zip(ctx.params["args"], ctx.eager["args"], ctx.result, strict=True)]


@reads("x")
def build_matrix_transpose(ctx: BuildContext) -> Any:
    return ctx.call(torch.transpose, ctx.tensor("x"), -2, -1)


@reads("xi sparse indexing")
def build_meshgrid(ctx: BuildContext) -> list[Any]:
    """np.meshgrid: each input flattened, laid along its own axis (the first two swapped for ``'xy'``)."""
    arrays, eagers = ctx.params["xi"], ctx.eager["xi"]
    ndim = len(arrays)
    swap = ctx.static("indexing", "xy") == "xy" and ndim > 1
    nodes = []
    for i, (a, e, r) in enumerate(zip(arrays, eagers, ctx.result, strict=True)):
        shape = [1] * ndim
        shape[(1 - i if i < 2 else i) if swap else i] = -1
        node = ctx.call(torch.reshape, ctx.as_tensor(a, e), tuple(shape))
        nodes.append(ctx.call(torch.broadcast_to, node, np.shape(r)))
    return nodes
