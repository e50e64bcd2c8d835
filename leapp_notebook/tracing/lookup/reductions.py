"""Builders for reductions (sum, mean, std, max, arg*, cumulative, quantiles, average, diff)."""

from __future__ import annotations

import operator
from typing import Any, Callable

import numpy as np
import torch

from .context import _BOOL, _F64, _I64, BuildContext, Unsupported, _asarray, torch_dtype
from .normalize import _keepdims, _merge_dims, _one_axis, norm_axes
from .row import reads


def _reduce_input(ctx: BuildContext, float_for_ints: bool) -> tuple[Any, np.ndarray]:
    arr = ctx.eager["a"]
    arr = arr if isinstance(arr, np.ndarray) else _asarray(arr)
    want = None
    if ctx.given("dtype"):
        want = np.dtype(ctx.static("dtype"))
    elif float_for_ints and arr.dtype.kind in "biu":
        want = _F64
    return ctx.tensor("a", want), arr


# What each reduction starts from (NumPy's identity: where= fills the elements it leaves out with it), and how it
# takes initial= in (max/min have no identity: NumPy asks for initial= with where=, and fills with it)
_IDENTITY: dict[Any, Any] = {torch.sum: 0, torch.prod: 1, torch.all: True, torch.any: False}
_COMBINE: dict[Any, Any] = {torch.sum: torch.add, torch.prod: torch.mul, torch.amax: torch.maximum,
                            torch.amin: torch.minimum}


def _initial(ctx: BuildContext) -> Any:
    """initial= as NumPy takes it in: cast (unsafely) to the result's dtype, a Python number; None when not given."""
    if not ctx.given("initial"):
        return None
    with np.errstate(all="ignore"):
        return np.asarray(ctx.static("initial")).astype(ctx.result_dtype).item()


def _masked(ctx: BuildContext) -> bool:
    """where= was given with a mask (where=True is NumPy's default: every element)."""
    return ctx.has("where") and not (ctx.eager["where"] is True or ctx.eager["where"] is np._NoValue)


def reduction(torch_fn: Any, *, float_for_ints: bool = False, values_only: bool = False,
              single_dim: bool = False) -> Callable[[BuildContext], Any]:
    """sum/prod/mean/max/min/all/any: axis -> dim, keepdims -> keepdim, ``axis=()`` is a no-op. where= masks the
    elements out (the identity, or initial= for max/min, in their place; mean divides by the mask's count, as
    NumPy's ``_mean``), initial= joins the result (added, multiplied, or its maximum/minimum)."""

    @reads("a axis dtype keepdims initial where")
    def build(ctx: BuildContext) -> Any:
        x, arr = _reduce_input(ctx, float_for_ints)
        dims = norm_axes(ctx.static("axis"), arr.ndim)
        keep = _keepdims(ctx)
        initial = _initial(ctx)
        masked = _masked(ctx)
        if masked and torch_fn is torch.mean:
            return _masked_mean(ctx, x, arr, dims, keep)
        if masked:
            fill = _IDENTITY.get(torch_fn, initial)
            if fill is None:
                raise Unsupported("where= without initial=: NumPy needs initial= for a reduction with no identity")
            x = ctx.call(torch.where, ctx.tensor("where", _BOOL), x, fill)
        if initial is not None and torch_fn in (torch.amax, torch.amin) and arr.size == 0 and dims != ():
            # max/min over nothing is initial= alone (torch's amax/amin refuse an empty axis), in the result's shape
            shaped = _reduce(ctx, torch.sum, x, arr, dims, keep, False, False)
            return ctx.call(torch.full_like, shaped, initial,
                            dtype=torch_dtype(ctx.compute_dtype(ctx.result_dtype)))
        node = _reduce(ctx, torch_fn, x, arr, dims, keep, values_only, single_dim)
        if initial is None:
            return node
        if torch_fn in (torch.sum, torch.prod):
            return ctx.call(_COMBINE[torch_fn], node, initial)  # a Python number: the node's dtype stays
        bound = np.asarray(initial, ctx.compute_dtype(ctx.result_dtype))  # max/min: a tensor, in the node's dtype
        return ctx.call(_COMBINE[torch_fn], node, ctx.constant(bound))

    return build


def _reduce(ctx: BuildContext, torch_fn: Any, x: Any, arr: np.ndarray, dims: tuple[int, ...] | None, keep: bool,
            values_only: bool, single_dim: bool) -> Any:
    if dims == ():
        # NumPy: axis=() reduces nothing (torch would reduce everything).
        return ctx.call(torch.clone, x)
    if arr.ndim == 0:
        return ctx.call(torch.clone, x) if values_only else ctx.call(torch_fn, x)
    if dims is None:
        dims = tuple(range(arr.ndim))
    if single_dim and len(dims) > 1:
        # torch.prod takes one dim: reduce the merged axes instead.
        node = ctx.call(torch_fn, _merge_dims(ctx, x, dims, arr.ndim), -1)
        if keep:
            node = ctx.call(torch.reshape, node, np.shape(ctx.result))
        return node
    return ctx.call(torch_fn, x, dim=dims[0] if single_dim else dims, keepdim=keep)


def _masked_mean(ctx: BuildContext, x: Any, arr: np.ndarray, dims: tuple[int, ...] | None, keep: bool) -> Any:
    """np.mean(a, where=mask) as NumPy's ``_mean`` computes it: the sum of the elements the mask keeps (float16 in
    float32), divided by how many it keeps (nan where none)."""
    if ctx.result_dtype == np.float16 and not ctx.given("dtype"):
        x = ctx.to(x, np.dtype(np.float32))
    mask = ctx.call(torch.broadcast_to, ctx.tensor("where", _BOOL), arr.shape)
    kept = ctx.call(torch.where, mask, x, 0)
    if dims != ():
        dims = tuple(range(arr.ndim)) if dims is None else dims
        if arr.ndim:
            kept = ctx.call(torch.sum, kept, dim=dims, keepdim=keep)
            mask = ctx.call(torch.sum, mask, dim=dims, keepdim=keep)
    node = ctx.call(torch.div, kept, mask)
    return ctx.to_result_dtype(node, None if ctx.result_dtype != np.float16 else np.dtype(np.float32))


def variance(std: bool) -> Callable[[BuildContext], Any]:
    """np.var/np.std by NumPy's own algorithm (numpy/_core/_methods.py ``_var``): the mean by a sum, the
    squared deviations in the input's precision (so float32 overflows to inf where NumPy's does; torch.var's
    Welford update would not), their sum divided by ``max(n - ddof, 0)``. ``correction`` is NumPy 2's name for
    ``ddof``. ``axis=()`` reduces nothing: each element is its own mean."""

    @reads("a axis dtype keepdims ddof correction")
    def build(ctx: BuildContext) -> Any:
        x, arr = _reduce_input(ctx, float_for_ints=True)
        dims = norm_axes(ctx.static("axis"), arr.ndim)
        dims = tuple(range(arr.ndim)) if dims is None else dims
        keep = _keepdims(ctx)
        ddof = ctx.static("correction") if ctx.given("correction") else ctx.static("ddof", 0)
        count = int(np.prod([arr.shape[d] for d in dims]))

        def total(node: Any, keepdim: bool) -> Any:
            return node if dims == () else ctx.call(torch.sum, node, dim=dims, keepdim=keepdim)

        mean = ctx.call(torch.div, total(x, True), float(count))
        deviation = ctx.call(torch.sub, x, mean)
        if _asarray(ctx.eager["a"]).dtype.kind == "c":
            square = ctx.call(torch.add, ctx.call(torch.square, ctx.call(torch.real, deviation)),
                              ctx.call(torch.square, ctx.call(torch.imag, deviation)))
        else:
            square = ctx.call(torch.mul, deviation, deviation)
        node = ctx.call(torch.div, total(square, keep), float(max(count - (ddof or 0), 0)))
        return ctx.call(torch.sqrt, node) if std else node

    return build


def arg_reduction(torch_fn: Any) -> Callable[[BuildContext], Any]:
    @reads("a axis keepdims")
    def build(ctx: BuildContext) -> Any:
        arr = _asarray(ctx.eager["a"])
        # torch has no bool kernel; first occurrence is kept either way.
        x = ctx.tensor("a", np.dtype(np.uint8) if arr.dtype == _BOOL else None)
        axis = ctx.static("axis")
        keep = _keepdims(ctx)
        if axis is None:
            node = ctx.call(torch_fn, x)
            return ctx.call(torch.reshape, node, (1,) * arr.ndim) if keep else node
        return ctx.call(torch_fn, x, dim=norm_axes(axis, arr.ndim)[0], keepdim=keep)

    return build


def _flat_or_dim(ctx: BuildContext, x: Any, axis: Any, ndim: int) -> tuple[Any, int]:
    """NumPy's ``axis=None`` means "the flattened array": flatten and use dim 0; else the normalized dim."""
    if axis is None:
        return ctx.call(torch.reshape, x, (-1,)), 0
    return x, norm_axes(axis, ndim)[0]


def cumulative(torch_fn: Any) -> Callable[[BuildContext], Any]:
    @reads("a axis dtype")
    def build(ctx: BuildContext) -> Any:
        want = np.dtype(ctx.static("dtype")) if ctx.given("dtype") else None
        x = ctx.tensor("a", want)
        arr = _asarray(ctx.eager["a"])
        x, dim = _flat_or_dim(ctx, x, ctx.static("axis"), arr.ndim)
        return ctx.call(torch_fn, x, dim=dim)

    return build


@reads("a axis keepdims")
def build_ptp(ctx: BuildContext) -> Any:
    arr = _asarray(ctx.eager["a"])
    dims = norm_axes(ctx.static("axis"), arr.ndim)
    dims = tuple(range(arr.ndim)) if dims is None else dims
    x = ctx.tensor("a")
    keep = _keepdims(ctx)
    if dims == () or arr.ndim == 0:
        return ctx.call(torch.sub, x, x)
    return ctx.call(torch.sub, ctx.call(torch.amax, x, dims, keep), ctx.call(torch.amin, x, dims, keep))


_QUANTILE_METHODS = ("linear", "lower", "higher", "nearest", "midpoint")


def quantile(scale: float | None) -> Callable[[BuildContext], Any]:
    """median (scale None: q = 0.5), quantile (scale 1), percentile (scale 100): torch.quantile."""

    @reads("a q axis method keepdims")
    def build(ctx: BuildContext) -> Any:
        method = ctx.static("method", "linear")
        if method not in _QUANTILE_METHODS:
            raise Unsupported(f"quantile method={method!r}")
        arr = _asarray(ctx.eager["a"])
        dtype = ctx.result_dtype
        x = ctx.tensor("a", dtype)
        if scale is None:
            q: Any = 0.5
        else:
            q_value = _asarray(ctx.static("q"), dtype=np.float64) / scale
            if q_value.ndim > 1:
                raise Unsupported("q with more than one axis")
            q = float(q_value) if q_value.ndim == 0 else ctx.constant(q_value.astype(dtype))
        dims = norm_axes(ctx.static("axis"), arr.ndim)
        keep = _keepdims(ctx)
        if arr.ndim == 0:
            x = ctx.call(torch.reshape, x, (1,))
            dims = None
        count = arr.size if dims is None else int(np.prod([arr.shape[d] for d in dims]))
        if scale is None and count > 0:
            flat = ctx.call(torch.reshape, x, (-1,)) if dims is None else _merge_dims(ctx, x, dims, arr.ndim)
            node = _median(ctx, flat, count)
            return ctx.call(torch.reshape, node, np.shape(ctx.result)) if keep or arr.ndim == 0 else node
        if dims is not None and len(dims) == 1:
            return ctx.call(torch.quantile, x, q, dim=dims[0], keepdim=keep, interpolation=method)
        if dims is None:
            flat = ctx.call(torch.reshape, x, (-1,))
        else:
            flat = _merge_dims(ctx, x, dims, arr.ndim)
        node = ctx.call(torch.quantile, flat, q, dim=-1, interpolation=method)
        return ctx.call(torch.reshape, node, np.shape(ctx.result)) if keep or arr.ndim == 0 else node

    return build


def _median(ctx: BuildContext, flat: Any, count: int) -> Any:
    """np.median along the last axis of ``count`` values, by NumPy's own algorithm (numpy/lib/_function_base_impl.py
    ``_median``): the middle value, or the mean of the middle two, and nan where the axis holds a nan. Not
    torch.quantile's interpolation, which makes nan of inf - inf (the median of [inf] is inf; of [1, inf], inf).
    float16 takes the mean in float32, as np.mean does."""
    ordered = ctx.call(operator.getitem, ctx.call(torch.sort, flat, dim=-1), 0)
    middle = ctx.call(torch.select, ordered, -1, count // 2)
    if count % 2 == 0:
        below = ctx.call(torch.select, ordered, -1, count // 2 - 1)
        half = ctx.result_dtype == np.float16
        if half:
            below, middle = ctx.to(below, np.dtype(np.float32)), ctx.to(middle, np.dtype(np.float32))
        middle = ctx.call(torch.div, ctx.call(torch.add, below, middle), 2)
        if half:
            middle = ctx.to(middle, np.dtype(np.float16))
    last = ctx.call(torch.select, ordered, -1, count - 1)  # torch.sort puts nan last, as NumPy's partition does
    return ctx.call(torch.where, ctx.call(torch.isnan, last), last, middle)


@reads("a axis weights keepdims")
def build_average(ctx: BuildContext) -> Any:
    arr = _asarray(ctx.eager["a"])
    dtype = ctx.result_dtype
    axis = ctx.static("axis")
    dims = norm_axes(axis, arr.ndim)
    dims = tuple(range(arr.ndim)) if dims is None else dims
    keep = _keepdims(ctx)
    x = ctx.tensor("a", dtype)
    if not ctx.given("weights"):
        return ctx.call(torch.mean, x, dim=dims, keepdim=keep)
    w_eager = _asarray(ctx.eager["weights"])
    w = ctx.tensor("weights", dtype)
    if w_eager.shape != arr.shape:
        if w_eager.ndim != 1 or len(dims) != 1:
            raise Unsupported("average weights of another shape need one axis")
        shape = [1] * arr.ndim
        shape[dims[0]] = -1
        w = ctx.call(torch.reshape, w, tuple(shape))
    total = ctx.call(torch.sum, ctx.call(torch.mul, x, w), dim=dims, keepdim=keep)
    if w_eager.shape != arr.shape:
        w = ctx.call(torch.broadcast_to, w, arr.shape)
    scale = ctx.call(torch.sum, w, dim=dims, keepdim=keep)
    return ctx.call(torch.div, total, scale)



@reads("a n axis prepend append")
def build_diff(ctx: BuildContext) -> Any:
    arr = _asarray(ctx.eager["a"])
    n = int(ctx.static("n", 1))
    dim = _one_axis(ctx, "axis", arr.ndim, -1)
    dtype = ctx.result_dtype
    x = ctx.tensor("a", dtype)
    if n == 0:
        return ctx.call(torch.clone, x)
    pieces = []
    for name in ("prepend", "append"):
        if ctx.given(name):
            value = _asarray(ctx.eager[name])
            piece = ctx.tensor(name, dtype)
            if value.ndim == 0:
                shape = list(arr.shape)
                shape[dim] = 1
                piece = ctx.call(torch.broadcast_to, piece, tuple(shape))
            pieces.append((name, piece))
    if pieces:
        before = [p for name, p in pieces if name == "prepend"]
        after = [p for name, p in pieces if name == "append"]
        x = ctx.call(torch.cat, before + [x] + after, dim)
    return ctx.call(torch.diff, x, n, dim)


def cumulative_api(torch_fn: Any, identity: int) -> Callable[[BuildContext], Any]:
    """np.cumulative_sum/cumulative_prod (Array API): ``include_initial`` prepends the identity."""

    @reads("x axis dtype include_initial")
    def build(ctx: BuildContext) -> Any:
        arr = _asarray(ctx.eager["x"])
        want = np.dtype(ctx.static("dtype")) if ctx.given("dtype") else None
        axis = ctx.static("axis")
        dim = 0 if axis is None else norm_axes(axis, arr.ndim)[0]
        node = ctx.call(torch_fn, ctx.tensor("x", want), dim=dim)
        if not ctx.static("include_initial", False):
            return node
        # zeros of the result's dtype with length 1 along dim, also for an empty axis
        initial = ctx.call(torch.zeros_like, ctx.call(torch.sum, node, dim=dim, keepdim=True))
        if identity:
            initial = ctx.call(torch.add, initial, identity)
        return ctx.call(torch.cat, [initial, node], dim)

    return build


@reads("a axis keepdims")
def build_count_nonzero(ctx: BuildContext) -> Any:
    arr = _asarray(ctx.eager["a"])
    dims = norm_axes(ctx.static("axis"), arr.ndim)
    dims = tuple(range(arr.ndim)) if dims is None else dims
    nonzero = ctx.call(torch.ne, ctx.tensor("a"), 0)
    if dims == ():
        return ctx.to(nonzero, _I64)
    return ctx.call(torch.sum, nonzero, dim=dims, keepdim=_keepdims(ctx))
