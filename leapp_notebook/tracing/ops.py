"""The lookup: a table from NumPy callables to torch graph builders, plus the argument normalizers.

A row names the NumPy callable, the torch op shown in the graph, the parameter names used to bind
the call, and a builder. Builders are small: they read the bound arguments through a
:class:`BuildContext` (graph values for arrays, eager NumPy values for metadata) and emit fx nodes.
Shared NumPy/torch gaps (axis -> dim, keepdims, ddof, ``axis=()``, dtype promotion under NEP 50,
int32 index arrays) live in the normalizers at the top, so a new NumPy function costs one row.

``leapp`` on a row says whether LEAPP 0.7.2's own lookup records that callable (read from
``leapp_0_7_2_names.txt``); the ``leapp`` profile records only those rows.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass, field
from importlib import resources
from typing import Any, Callable

import numpy as np
import torch

from . import torch_impl


class Unsupported(Exception):
    """Raised by a builder for an argument combination the lookup cannot record faithfully."""


# --------------------------------------------------------------------------------------------
# dtypes
# --------------------------------------------------------------------------------------------

_NP_TO_TORCH = {
    np.dtype(np.bool_): torch.bool,
    np.dtype(np.uint8): torch.uint8,
    np.dtype(np.int8): torch.int8,
    np.dtype(np.int16): torch.int16,
    np.dtype(np.int32): torch.int32,
    np.dtype(np.int64): torch.int64,
    np.dtype(np.uint16): torch.uint16,
    np.dtype(np.uint32): torch.uint32,
    np.dtype(np.uint64): torch.uint64,
    np.dtype(np.float16): torch.float16,
    np.dtype(np.float32): torch.float32,
    np.dtype(np.float64): torch.float64,
    np.dtype(np.complex64): torch.complex64,
    np.dtype(np.complex128): torch.complex128,
}
_TORCH_TO_NP = {v: k for k, v in _NP_TO_TORCH.items()}


def torch_dtype(dtype: Any) -> torch.dtype:
    """The torch dtype for a NumPy dtype-like; ``Unsupported`` when torch has none."""
    try:
        return _NP_TO_TORCH[np.dtype(dtype)]
    except (KeyError, TypeError) as exc:
        raise Unsupported(f"torch has no dtype for NumPy {dtype!r}") from exc


def numpy_dtype(dtype: torch.dtype) -> np.dtype:
    return _TORCH_TO_NP[dtype]


# --------------------------------------------------------------------------------------------
# the build context: what a row builder sees
# --------------------------------------------------------------------------------------------

@dataclass
class BuildContext:
    """One NumPy call being recorded.

    ``params`` maps parameter names to the call's arguments as the user passed them (traced arrays
    included); ``eager`` maps them to plain NumPy values; ``result`` is NumPy's own result.
    ``graph_value`` turns an argument into a graph value (fx node or Python scalar) and is
    provided by the session, which knows about constants and provenance.
    """

    params: dict[str, Any]
    eager: dict[str, Any]
    result: Any
    emit: Callable[..., torch.fx.Node]
    graph_value: Callable[[Any], Any]
    constant: Callable[[Any], torch.fx.Node]
    extra: dict[str, Any] = field(default_factory=dict)

    def has(self, name: str) -> bool:
        return name in self.params

    def get(self, name: str, default: Any = None) -> Any:
        return self.eager.get(name, default)

    def tensor(self, name: str, dtype: np.dtype | None = None) -> Any:
        """The argument as a graph tensor, cast to ``dtype`` (a NumPy dtype) when given."""
        return self.as_tensor(self.params[name], self.eager[name], dtype)

    def as_tensor(self, value: Any, eager: Any, dtype: np.dtype | None = None) -> Any:
        graph = self.graph_value(value)
        if not isinstance(graph, torch.fx.Node):
            # Python scalars and lists become constants of NumPy's dtype for them.
            arr = np.asarray(eager, dtype=dtype) if dtype is not None else np.asarray(eager)
            return self.constant(arr)
        return self.cast(graph, np.asarray(eager).dtype if not hasattr(eager, "dtype") else eager.dtype,
                         dtype)

    def scalar_or_tensor(self, name: str, dtype: np.dtype | None = None) -> Any:
        """A Python scalar stays a scalar (weak, as NEP 50 treats it); arrays become tensors."""
        eager = self.eager[name]
        if isinstance(eager, (bool, int, float)) and not isinstance(self.params[name], np.generic):
            return eager
        return self.tensor(name, dtype)

    def cast(self, node: Any, have: np.dtype, want: np.dtype | None) -> Any:
        if want is None or np.dtype(have) == np.dtype(want):
            return node
        return self.emit("call_method", "to", (node, torch_dtype(want)))

    def to_result_dtype(self, node: Any, torch_result_dtype: np.dtype | None) -> Any:
        """Cast ``node`` to the eager result's dtype when the dtype torch computes in is known to differ.

        Where it is not known here, the session's dtype pass (run once on the trace inputs) inserts
        the cast, so every recorded value ends with NumPy's dtype.
        """
        want = np.asarray(self.result).dtype
        if torch_result_dtype is None or np.dtype(torch_result_dtype) == want:
            return node
        return self.emit("call_method", "to", (node, torch_dtype(want)))

    def call(self, target: Any, *args: Any, **kwargs: Any) -> torch.fx.Node:
        return self.emit("call_function", target, args, kwargs)


# --------------------------------------------------------------------------------------------
# normalizers
# --------------------------------------------------------------------------------------------

def _reject(ctx: BuildContext, *names: str) -> None:
    """Refuse arguments the graph cannot express (``out=``, ``where=``, ``initial=``, ``order='F'``)."""
    for name in names:
        value = ctx.eager.get(name, None)
        if name == "order" and value in (None, "C", "K", "A"):
            continue
        if name == "where" and (value is True or value is None):
            continue
        if name == "casting" and value in (None, "same_kind"):
            continue
        if name == "subok" and value in (None, True):
            continue
        if value is not None and not (name == "initial" and value is np._NoValue):
            raise Unsupported(f"argument {name}={value!r} is not recorded")


def norm_axes(axis: Any, ndim: int) -> tuple[int, ...] | None:
    """NumPy ``axis`` to a tuple of non-negative dims; None means every axis."""
    if axis is None:
        return None
    if isinstance(axis, (int, np.integer)):
        axis = (int(axis),)
    out = []
    for a in axis:
        a = int(a)
        if not -max(ndim, 1) <= a < max(ndim, 1):
            raise Unsupported(f"axis {a} out of range")
        out.append(a % max(ndim, 1))
    return tuple(out)


def _keepdims(ctx: BuildContext) -> bool:
    value = ctx.get("keepdims", False)
    return bool(value) if value is not np._NoValue else False


def _loop_dtypes(ufunc: np.ufunc, eager_inputs: tuple[Any, ...]) -> tuple[np.dtype, ...]:
    """The dtypes NumPy's ufunc loop computes in: Python scalars are weak (NEP 50)."""
    spec = []
    for value in eager_inputs:
        if isinstance(value, (bool, int, float, complex)) and not isinstance(value, np.generic):
            spec.append(type(value))
        else:
            spec.append(np.asarray(value).dtype)
    return ufunc.resolve_dtypes(tuple(spec) + (None,) * ufunc.nout)


# --------------------------------------------------------------------------------------------
# builders
# --------------------------------------------------------------------------------------------

# torch ops that refuse a Python scalar in some position; their scalars become 0-d tensors.
_TENSOR_ONLY = {torch.maximum, torch.minimum, torch.atan2, torch.hypot, torch.logical_and, torch.logical_or,
                torch.logical_xor, torch.bitwise_left_shift, torch.bitwise_right_shift, torch.matmul,
                torch.fmod, torch.bitwise_and, torch.bitwise_or, torch.bitwise_xor, torch.copysign}


def elementwise(torch_fn: Any) -> Callable[[BuildContext], Any]:
    """A ufunc: operands cast to NumPy's loop dtype so torch computes in the same precision."""

    def build(ctx: BuildContext) -> Any:
        ufunc = ctx.extra["ufunc"]
        _reject(ctx, "out", "where", "casting", "order", "subok", "signature")
        if ctx.get("dtype") is not None:
            raise Unsupported("ufunc dtype= is not recorded")
        names = [f"x{i}" for i in range(ufunc.nin)]
        eager_inputs = tuple(ctx.eager[n] for n in names)
        loop = _loop_dtypes(ufunc, eager_inputs)
        args = []
        for i, name in enumerate(names):
            eager = ctx.eager[name]
            python_scalar = isinstance(eager, (bool, int, float)) and not isinstance(ctx.params[name], np.generic)
            if python_scalar and i > 0 and torch_fn not in _TENSOR_ONLY:
                args.append(eager)
            else:
                args.append(ctx.tensor(name, loop[i]))
        node = ctx.call(torch_fn, *args)
        return ctx.to_result_dtype(node, loop[ufunc.nin])

    return build


def _reduce_input(ctx: BuildContext, float_for_ints: bool) -> tuple[Any, np.ndarray]:
    a = ctx.eager["a"]
    arr = np.asarray(a)
    want = None
    if ctx.get("dtype") is not None:
        want = np.dtype(ctx.get("dtype"))
    elif float_for_ints and arr.dtype.kind in "biu":
        want = np.dtype(np.float64)
    return ctx.tensor("a", want), arr


def reduction(torch_fn: Any, *, float_for_ints: bool = False, ddof: bool = False,
              amax: bool = False, single_dim: bool = False) -> Callable[[BuildContext], Any]:
    """sum/prod/mean/std/var/max/min/all/any: axis -> dim, keepdims -> keepdim, ``axis=()`` is a no-op."""

    def build(ctx: BuildContext) -> Any:
        _reject(ctx, "out", "where")
        if ctx.get("initial", np._NoValue) is not np._NoValue and ctx.get("initial") is not None:
            raise Unsupported("initial= is not recorded")
        x, arr = _reduce_input(ctx, float_for_ints)
        dims = norm_axes(ctx.get("axis"), arr.ndim)
        keep = _keepdims(ctx)
        if dims == ():
            # NumPy: axis=() reduces nothing; torch would reduce everything.
            node = ctx.call(torch.clone, x)
            return ctx.to_result_dtype(node, None)
        if dims is None:
            dims = tuple(range(arr.ndim))
        kwargs: dict[str, Any] = {}
        if ddof:
            kwargs["correction"] = ctx.get("ddof", 0) or 0
        if arr.ndim == 0:
            node = ctx.call(torch_fn, x, **kwargs) if not amax else ctx.call(torch.clone, x)
        elif single_dim and len(dims) > 1:
            # torch.prod takes one dim: reduce the flattened axes instead.
            if dims == tuple(range(arr.ndim)):
                node = ctx.call(torch_fn, ctx.call(torch.reshape, x, (-1,)), 0)
                if keep:
                    node = ctx.call(torch.reshape, node, (1,) * arr.ndim)
            else:
                node = x
                for dim in sorted(dims, reverse=True):
                    node = ctx.call(torch_fn, node, dim=dim, keepdim=keep)
        else:
            node = ctx.call(torch_fn, x, dim=dims if not single_dim else dims[0], keepdim=keep, **kwargs)
        return ctx.to_result_dtype(node, None)

    return build


def arg_reduction(torch_fn: Any) -> Callable[[BuildContext], Any]:
    def build(ctx: BuildContext) -> Any:
        _reject(ctx, "out")
        x = ctx.tensor("a")
        arr = np.asarray(ctx.eager["a"])
        axis = ctx.get("axis")
        keep = _keepdims(ctx)
        if axis is None:
            node = ctx.call(torch_fn, x)
            if keep:
                node = ctx.call(torch.reshape, node, (1,) * arr.ndim)
        else:
            node = ctx.call(torch_fn, x, dim=norm_axes(axis, arr.ndim)[0], keepdim=keep)
        return node

    return build


def cumulative(torch_fn: Any) -> Callable[[BuildContext], Any]:
    def build(ctx: BuildContext) -> Any:
        _reject(ctx, "out")
        want = np.dtype(ctx.get("dtype")) if ctx.get("dtype") is not None else None
        x = ctx.tensor("a", want)
        arr = np.asarray(ctx.eager["a"])
        axis = ctx.get("axis")
        if axis is None:
            x = ctx.call(torch.reshape, x, (-1,))
            dim = 0
        else:
            dim = norm_axes(axis, arr.ndim)[0]
        return ctx.to_result_dtype(ctx.call(torch_fn, x, dim=dim), None)

    return build


def reshape_to_result(torch_display: str = "torch.reshape") -> Callable[[BuildContext], Any]:
    """Shape-only ops whose result is the input's data in C order: a reshape to NumPy's result shape."""

    def build(ctx: BuildContext) -> Any:
        _reject(ctx, "order")
        return ctx.call(torch.reshape, ctx.tensor("a"), tuple(np.shape(ctx.result)))

    return build


def build_transpose(ctx: BuildContext) -> Any:
    arr = np.asarray(ctx.eager["a"])
    axes = ctx.get("axes")
    dims = tuple(range(arr.ndim - 1, -1, -1)) if axes is None else norm_axes(axes, arr.ndim)
    return ctx.call(torch.permute, ctx.tensor("a"), dims)


def build_swapaxes(ctx: BuildContext) -> Any:
    arr = np.asarray(ctx.eager["a"])
    a1, a2 = norm_axes((ctx.get("axis1"), ctx.get("axis2")), arr.ndim)
    return ctx.call(torch.swapaxes, ctx.tensor("a"), a1, a2)


def build_moveaxis(ctx: BuildContext) -> Any:
    arr = np.asarray(ctx.eager["a"])
    src = norm_axes(ctx.get("source"), arr.ndim)
    dst = norm_axes(ctx.get("destination"), arr.ndim)
    return ctx.call(torch.movedim, ctx.tensor("a"), src, dst)


def build_squeeze(ctx: BuildContext) -> Any:
    arr = np.asarray(ctx.eager["a"])
    axis = ctx.get("axis")
    if axis is None:
        return ctx.call(torch.squeeze, ctx.tensor("a"))
    return ctx.call(torch.squeeze, ctx.tensor("a"), norm_axes(axis, arr.ndim))


def build_expand_dims(ctx: BuildContext) -> Any:
    axis = ctx.get("axis")
    if isinstance(axis, (int, np.integer)):
        out_ndim = np.ndim(ctx.eager["a"]) + 1
        return ctx.call(torch.unsqueeze, ctx.tensor("a"), int(axis) % out_ndim)
    return ctx.call(torch.reshape, ctx.tensor("a"), tuple(np.shape(ctx.result)))


def build_flip(ctx: BuildContext) -> Any:
    arr = np.asarray(ctx.eager["m"])
    dims = norm_axes(ctx.get("axis"), arr.ndim)
    if dims is None:
        dims = tuple(range(arr.ndim))
    return ctx.call(torch.flip, ctx.tensor("m"), dims)


def build_roll(ctx: BuildContext) -> Any:
    arr = np.asarray(ctx.eager["a"])
    shift = ctx.get("shift")
    if not isinstance(shift, (int, np.integer, tuple, list)):
        raise Unsupported("roll shift must be static")
    axis = ctx.get("axis")
    if axis is None:
        return ctx.call(torch.roll, ctx.tensor("a"), shift)
    return ctx.call(torch.roll, ctx.tensor("a"), shift, norm_axes(axis, arr.ndim))


def build_rot90(ctx: BuildContext) -> Any:
    arr = np.asarray(ctx.eager["m"])
    axes = norm_axes(ctx.get("axes", (0, 1)), arr.ndim)
    return ctx.call(torch.rot90, ctx.tensor("m"), int(ctx.get("k", 1)), axes)


def _sequence_tensors(ctx: BuildContext, name: str, dtype: np.dtype) -> list[Any]:
    values = ctx.params[name]
    eagers = ctx.eager[name]
    if isinstance(values, np.ndarray):
        values = list(values)
        eagers = list(np.asarray(eagers))
    return [ctx.as_tensor(v, e, dtype) for v, e in zip(values, eagers)]


def build_concatenate(ctx: BuildContext) -> Any:
    _reject(ctx, "out", "casting")
    dtype = np.asarray(ctx.result).dtype
    tensors = _sequence_tensors(ctx, "arrays", dtype)
    axis = ctx.get("axis", 0)
    if axis is None:
        tensors = [ctx.call(torch.reshape, t, (-1,)) for t in tensors]
        axis = 0
    ndim = np.ndim(ctx.eager["arrays"][0])
    return ctx.call(torch.cat, tensors, norm_axes(axis, ndim)[0])


def build_stack(ctx: BuildContext) -> Any:
    _reject(ctx, "out", "casting")
    dtype = np.asarray(ctx.result).dtype
    tensors = _sequence_tensors(ctx, "arrays", dtype)
    axis = ctx.get("axis", 0)
    return ctx.call(torch.stack, tensors, norm_axes(axis, np.ndim(ctx.result))[0])


def sequence_join(torch_fn: Any) -> Callable[[BuildContext], Any]:
    def build(ctx: BuildContext) -> Any:
        _reject(ctx, "casting")
        tensors = _sequence_tensors(ctx, "tup", np.asarray(ctx.result).dtype)
        return ctx.call(torch_fn, tensors)

    return build


def build_append(ctx: BuildContext) -> Any:
    dtype = np.asarray(ctx.result).dtype
    arr = ctx.tensor("arr", dtype)
    values = ctx.tensor("values", dtype)
    axis = ctx.get("axis")
    if axis is None:
        return ctx.call(torch.cat, [ctx.call(torch.reshape, arr, (-1,)), ctx.call(torch.reshape, values, (-1,))], 0)
    return ctx.call(torch.cat, [arr, values], norm_axes(axis, np.ndim(ctx.eager["arr"]))[0])


def build_split(ctx: BuildContext) -> list[Any]:
    arr = np.asarray(ctx.eager["ary"])
    sections = ctx.get("indices_or_sections")
    if isinstance(sections, np.ndarray):
        sections = sections.tolist()
    if not isinstance(sections, (int, np.integer, list, tuple)):
        raise Unsupported("split sections must be static")
    if isinstance(sections, np.integer):
        sections = int(sections)
    dim = norm_axes(ctx.get("axis", 0), arr.ndim)[0]
    node = ctx.call(torch.tensor_split, ctx.tensor("ary"), sections, dim)
    return [ctx.call(operator.getitem, node, i) for i in range(len(ctx.result))]


def build_where(ctx: BuildContext) -> Any:
    if not ctx.has("x"):
        return build_nonzero_of(ctx, "condition")
    dtype = np.asarray(ctx.result).dtype
    cond = ctx.tensor("condition", np.dtype(bool))
    return ctx.call(torch.where, cond, ctx.tensor("x", dtype), ctx.tensor("y", dtype))


def build_nonzero_of(ctx: BuildContext, name: str) -> list[Any]:
    node = ctx.call(torch.nonzero, ctx.tensor(name), as_tuple=True)
    return [ctx.call(operator.getitem, node, i) for i in range(len(ctx.result))]


def build_nonzero(ctx: BuildContext) -> list[Any]:
    if np.ndim(ctx.eager["a"]) == 0:
        raise Unsupported("nonzero of a 0-d array")
    return build_nonzero_of(ctx, "a")


def build_sort(ctx: BuildContext) -> Any:
    arr = np.asarray(ctx.eager["a"])
    x = ctx.tensor("a")
    axis = ctx.get("axis", -1)
    if axis is None:
        x = ctx.call(torch.reshape, x, (-1,))
        axis = 0
    if ctx.get("order") is not None:
        raise Unsupported("sort order= is not recorded")
    sorted_pair = ctx.call(torch.sort, x, dim=norm_axes(axis, max(arr.ndim, 1))[0], stable=True)
    return ctx.call(operator.getitem, sorted_pair, 0)


def build_argsort(ctx: BuildContext) -> Any:
    arr = np.asarray(ctx.eager["a"])
    x = ctx.tensor("a")
    axis = ctx.get("axis", -1)
    if axis is None:
        x = ctx.call(torch.reshape, x, (-1,))
        axis = 0
    return ctx.call(torch.argsort, x, dim=norm_axes(axis, max(arr.ndim, 1))[0], stable=True)


def build_clip(ctx: BuildContext) -> Any:
    _reject(ctx, "out")
    dtype = np.asarray(ctx.result).dtype
    x = ctx.tensor("a", dtype)
    lo_name = "a_min" if ctx.has("a_min") else "min"
    hi_name = "a_max" if ctx.has("a_max") else "max"
    lo = ctx.get(lo_name)
    hi = ctx.get(hi_name)
    lo = None if lo is None or lo is np._NoValue else ctx.scalar_or_tensor(lo_name, dtype)
    hi = None if hi is None or hi is np._NoValue else ctx.scalar_or_tensor(hi_name, dtype)
    # NumPy computes minimum(maximum(a, lo), hi); so does clamp, including when lo > hi.
    return ctx.call(torch.clamp, x, lo, hi)


def build_round(ctx: BuildContext) -> Any:
    _reject(ctx, "out")
    decimals = int(ctx.get("decimals", 0))
    arr = np.asarray(ctx.eager["a"])
    if arr.dtype.kind in "biu":
        if decimals >= 0:
            return ctx.call(torch.clone, ctx.tensor("a"))
        raise Unsupported("rounding integers to negative decimals")
    if decimals == 0:
        return ctx.call(torch.round, ctx.tensor("a"))
    return ctx.call(torch.round, ctx.tensor("a"), decimals=decimals)


def build_dot(ctx: BuildContext) -> Any:
    _reject(ctx, "out")
    dtype = np.asarray(ctx.result).dtype
    a, b = np.asarray(ctx.eager["a"]), np.asarray(ctx.eager["b"])
    ta, tb = ctx.tensor("a", dtype), ctx.tensor("b", dtype)
    if a.ndim == 0 or b.ndim == 0:
        return ctx.call(torch.mul, ta, tb)
    if a.ndim <= 2 and b.ndim <= 2:
        return ctx.call(torch.matmul, ta, tb)
    return ctx.call(torch.tensordot, ta, tb, dims=([a.ndim - 1], [max(b.ndim - 2, 0)]))


def build_tensordot(ctx: BuildContext) -> Any:
    dtype = np.asarray(ctx.result).dtype
    axes = ctx.get("axes", 2)
    if isinstance(axes, (list, tuple)):
        axes = tuple(list(a) if isinstance(a, (list, tuple)) else [a] for a in axes)
    return ctx.call(torch.tensordot, ctx.tensor("a", dtype), ctx.tensor("b", dtype), dims=axes)


def build_einsum(ctx: BuildContext) -> Any:
    _reject(ctx, "out")
    subscripts = ctx.eager["subscripts"]
    if not isinstance(subscripts, str):
        raise Unsupported("einsum in sublist form")
    dtype = np.asarray(ctx.result).dtype
    operands = [ctx.as_tensor(v, e, dtype) for v, e in zip(ctx.params["operands"], ctx.eager["operands"])]
    return ctx.call(torch.einsum, subscripts, *operands)


def build_trace(ctx: BuildContext) -> Any:
    _reject(ctx, "out")
    arr = np.asarray(ctx.eager["a"])
    d1, d2 = norm_axes((ctx.get("axis1", 0), ctx.get("axis2", 1)), arr.ndim)
    diag = ctx.call(torch.diagonal, ctx.tensor("a"), int(ctx.get("offset", 0)), d1, d2)
    return ctx.to_result_dtype(ctx.call(torch.sum, diag, -1), None)


def build_diagonal(ctx: BuildContext) -> Any:
    arr = np.asarray(ctx.eager["a"])
    d1, d2 = norm_axes((ctx.get("axis1", 0), ctx.get("axis2", 1)), arr.ndim)
    return ctx.call(torch.diagonal, ctx.tensor("a"), int(ctx.get("offset", 0)), d1, d2)


def triangle(torch_fn: Any) -> Callable[[BuildContext], Any]:
    def build(ctx: BuildContext) -> Any:
        return ctx.call(torch_fn, ctx.tensor("m"), int(ctx.get("k", 0)))

    return build


def like_creation(kind: str) -> Callable[[BuildContext], Any]:
    """zeros_like/ones_like/full_like/empty_like: the result depends only on the input's shape."""

    def build(ctx: BuildContext) -> Any:
        if ctx.get("shape") is not None:
            raise Unsupported("shape= override")
        dtype = torch_dtype(np.asarray(ctx.result).dtype)
        x = ctx.tensor("a")
        if kind == "full":
            return ctx.call(torch.full_like, x, ctx.scalar_or_tensor("fill_value"), dtype=dtype)
        fn = torch.ones_like if kind == "ones" else torch.zeros_like
        return ctx.call(fn, x, dtype=dtype)

    return build


def build_cross(ctx: BuildContext) -> Any:
    a, b = np.asarray(ctx.eager["a"]), np.asarray(ctx.eager["b"])
    if ctx.get("axisa", -1) != -1 or ctx.get("axisb", -1) != -1 or ctx.get("axisc", -1) != -1:
        raise Unsupported("cross with axisa/axisb/axisc")
    axis = ctx.get("axis", -1)
    if axis is None:
        axis = -1
    if a.shape[axis] != 3 or b.shape[axis] != 3:
        raise Unsupported("cross of 2-vectors")
    dtype = np.asarray(ctx.result).dtype
    ta, tb = ctx.tensor("a", dtype), ctx.tensor("b", dtype)
    shape = np.broadcast_shapes(a.shape, b.shape)
    ta = ctx.call(torch.broadcast_to, ta, shape)
    tb = ctx.call(torch.broadcast_to, tb, shape)
    return ctx.call(torch.linalg.cross, ta, tb, dim=int(axis))


def build_norm(ctx: BuildContext) -> Any:
    arr = np.asarray(ctx.eager["x"])
    dtype = np.asarray(ctx.result).dtype
    x = ctx.tensor("x", dtype if arr.dtype.kind in "biu" else None)
    ord_ = ctx.get("ord")
    axis = ctx.get("axis")
    keep = bool(ctx.get("keepdims", False))
    dims = norm_axes(axis, arr.ndim)
    if ord_ in (None, "fro") and (dims is None or len(dims) <= 2):
        if ord_ == "fro" and (dims is not None and len(dims) != 2) and not (dims is None and arr.ndim == 2):
            raise Unsupported("ord='fro' needs a matrix")
        return ctx.call(torch.linalg.vector_norm, x, 2, dims, keep)
    if isinstance(ord_, (int, float)) and dims is not None and len(dims) == 1 or (
            isinstance(ord_, (int, float)) and dims is None and arr.ndim == 1):
        return ctx.call(torch.linalg.vector_norm, x, float(ord_), dims, keep)
    raise Unsupported(f"norm ord={ord_!r} axis={axis!r}")


def linalg_unary(torch_fn: Any) -> Callable[[BuildContext], Any]:
    def build(ctx: BuildContext) -> Any:
        dtype = np.asarray(ctx.result).dtype
        return ctx.call(torch_fn, ctx.tensor("a", dtype))

    return build


def fft_op(torch_fn: Any) -> Callable[[BuildContext], Any]:
    def build(ctx: BuildContext) -> Any:
        _reject(ctx, "out")
        arr = np.asarray(ctx.eager["a"])
        # NumPy computes in the precision of the result; cast the input to the matching real/complex type.
        if arr.dtype.kind in "biu":
            x = ctx.tensor("a", np.dtype(np.float64))
        else:
            x = ctx.tensor("a")
        n = ctx.get("n")
        axis = norm_axes(ctx.get("axis", -1), arr.ndim)[0]
        node = ctx.call(torch_fn, x, n=n, dim=axis, norm=ctx.get("norm"))
        return node

    return build


def build_pad(ctx: BuildContext) -> Any:
    arr = np.asarray(ctx.eager["array"])
    mode = ctx.get("mode", "constant")
    if mode != "constant":
        raise Unsupported(f"pad mode={mode!r}")
    width = np.broadcast_to(np.asarray(ctx.get("pad_width"), dtype=np.int64), (arr.ndim, 2))
    value = ctx.get("constant_values", 0)
    if np.ndim(value) != 0:
        raise Unsupported("per-axis constant_values")
    flat: list[int] = []
    for before, after in width[::-1]:
        flat += [int(before), int(after)]
    return ctx.call(torch.nn.functional.pad, ctx.tensor("array"), tuple(flat), "constant", float(np.asarray(value)))


def build_interp(ctx: BuildContext) -> Any:
    if ctx.get("period") is not None:
        raise Unsupported("interp period=")
    if np.iscomplexobj(ctx.eager["fp"]):
        raise Unsupported("complex interp")
    f64 = np.dtype(np.float64)
    x = ctx.tensor("x", f64)
    xp = ctx.tensor("xp", f64)
    fp = ctx.tensor("fp", f64)
    left, right = ctx.get("left"), ctx.get("right")
    left = None if left is None else float(left)
    right = None if right is None else float(right)
    return ctx.call(torch_impl.interp, x, xp, fp, left, right)


def build_linspace(ctx: BuildContext) -> Any:
    raise Unsupported("linspace with traced start/stop is data-dependent in shape or value")


def build_astype(ctx: BuildContext) -> Any:
    want = np.dtype(ctx.get("dtype"))
    return ctx.emit("call_method", "to", (ctx.tensor("a"), torch_dtype(want)))


def build_copy(ctx: BuildContext) -> Any:
    return ctx.call(torch.clone, ctx.tensor("a"))


def build_asarray(ctx: BuildContext) -> Any:
    want = ctx.get("dtype")
    x = ctx.tensor("a")
    arr = np.asarray(ctx.eager["a"])
    if want is not None and np.dtype(want) != arr.dtype:
        return ctx.emit("call_method", "to", (x, torch_dtype(want)))
    return ctx.call(torch.clone, x)


def build_stack_of_values(ctx: BuildContext) -> Any:
    """``np.array([...])`` whose nested elements include traced values: a stack of the leaves."""
    dtype = np.asarray(ctx.result).dtype
    shape = np.shape(ctx.result)
    leaves: list[Any] = []

    def walk(value: Any, eager: Any) -> None:
        if isinstance(value, (list, tuple)):
            for v, e in zip(value, eager):
                walk(v, e)
        else:
            leaves.append(ctx.call(torch.reshape, ctx.as_tensor(value, eager, dtype), (-1,)))

    walk(ctx.params["object"], ctx.eager["object"])
    return ctx.call(torch.reshape, ctx.call(torch.cat, leaves, 0), tuple(shape))


def build_fill_method(ctx: BuildContext) -> Any:
    return ctx.call(torch.full_like, ctx.tensor("a"), ctx.scalar_or_tensor("value"))


# --------------------------------------------------------------------------------------------
# the table
# --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Row:
    """One lookup row. ``names`` binds positional arguments; ``key`` is the NumPy callable."""

    key: Any
    numpy: str
    torch: str
    build: Callable[[BuildContext], Any]
    names: tuple[str, ...]
    leapp: bool
    kind: str  # "ufunc" | "function" | "method" | "indexing"


def _leapp_names() -> dict[str, set[str]]:
    text = resources.files(__package__).joinpath("leapp_0_7_2_names.txt").read_text()
    sections: dict[str, set[str]] = {}
    current = ""
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("["):
            current = line.strip("[]")
            sections[current] = set()
        else:
            sections[current].add(line)
    return sections


LEAPP_NAMES = _leapp_names()

UFUNC_ROWS: dict[np.ufunc, Row] = {}
FUNCTION_ROWS: dict[Any, Row] = {}
METHOD_ROWS: dict[str, Row] = {}

_UFUNCS = {
    "absolute": torch.abs, "add": torch.add, "arccos": torch.acos, "arccosh": torch.acosh, "arcsin": torch.asin,
    "arcsinh": torch.asinh, "arctan": torch.atan, "arctan2": torch.atan2, "arctanh": torch.atanh,
    "bitwise_and": torch.bitwise_and, "bitwise_or": torch.bitwise_or, "bitwise_xor": torch.bitwise_xor,
    "ceil": torch.ceil, "cos": torch.cos, "cosh": torch.cosh, "divide": torch.div, "equal": torch.eq,
    "exp": torch.exp, "exp2": torch.exp2, "expm1": torch.expm1, "floor": torch.floor,
    "floor_divide": torch.floor_divide, "fmod": torch.fmod, "greater": torch.gt, "greater_equal": torch.ge,
    "hypot": torch.hypot, "invert": torch.bitwise_not, "isfinite": torch.isfinite, "isinf": torch.isinf,
    "isnan": torch.isnan, "left_shift": torch.bitwise_left_shift, "less": torch.lt, "less_equal": torch.le,
    "log": torch.log, "log10": torch.log10, "log1p": torch.log1p, "log2": torch.log2,
    "logical_and": torch.logical_and, "logical_not": torch.logical_not, "logical_or": torch.logical_or,
    "logical_xor": torch.logical_xor, "matmul": torch.matmul, "maximum": torch.maximum,
    "minimum": torch.minimum, "multiply": torch.mul, "negative": torch.neg, "not_equal": torch.ne,
    "positive": torch.positive, "power": torch.pow, "remainder": torch.remainder,
    "right_shift": torch.bitwise_right_shift, "rint": torch.round, "sign": torch.sign, "sin": torch.sin,
    "sinh": torch.sinh, "sqrt": torch.sqrt, "square": torch.square, "subtract": torch.sub, "tan": torch.tan,
    "tanh": torch.tanh, "trunc": torch.trunc,
    # Beyond LEAPP 0.7.2's table (profile "full" only).
    "deg2rad": torch.deg2rad, "rad2deg": torch.rad2deg, "radians": torch.deg2rad, "degrees": torch.rad2deg,
    "reciprocal": torch.reciprocal, "fmax": torch.fmax, "fmin": torch.fmin, "copysign": torch.copysign,
    "logaddexp": torch.logaddexp, "logaddexp2": torch.logaddexp2, "signbit": torch.signbit,
    "cbrt": None, "conjugate": torch.conj_physical, "fabs": torch.abs,
}


def _display(fn: Any) -> str:
    name = getattr(fn, "__name__", str(fn))
    module = getattr(fn, "__module__", "") or ""
    if module.startswith("torch.nn.functional"):
        return f"F.{name}"
    if module.startswith("torch._C._linalg") or module.startswith("torch.linalg"):
        return f"torch.linalg.{name.removeprefix('linalg_')}"
    if module.startswith("torch._C._fft") or module.startswith("torch.fft"):
        return f"torch.fft.{name.removeprefix('fft_')}"
    if module.startswith("leapp_notebook"):
        return f"ln.{name}"
    return f"torch.{name}"


for _name, _torch_fn in _UFUNCS.items():
    if _torch_fn is None:
        continue
    _uf = getattr(np, _name)
    if _uf in UFUNC_ROWS:
        continue
    UFUNC_ROWS[_uf] = Row(_uf, f"np.{_uf.__name__}", _display(_torch_fn), elementwise(_torch_fn),
                          tuple(f"x{i}" for i in range(_uf.nin)) + ("out",),
                          _uf.__name__ in LEAPP_NAMES["ufuncs"], "ufunc")

# ufunc.reduce calls that ndarray methods make internally (x.prod(), x.all()) map to reductions.
REDUCE_UFUNCS = {np.add: "sum", np.multiply: "prod", np.maximum: "max", np.minimum: "min",
                 np.logical_and: "all", np.logical_or: "any"}


def _fn(func: Any, names: str, build: Callable[[BuildContext], Any], torch_name: str, display: str | None = None,
        leapp_name: str | None = None) -> None:
    numpy_name = display or f"np.{func.__name__}"
    leapp = (leapp_name or func.__name__) in LEAPP_NAMES["functions"] and display is None
    FUNCTION_ROWS[func] = Row(func, numpy_name, torch_name, build, tuple(names.split()), leapp, "function")


_REDUCE = "a axis dtype out keepdims initial where"
_fn(np.sum, _REDUCE, reduction(torch.sum), "torch.sum")
_fn(np.prod, _REDUCE, reduction(torch.prod, single_dim=True), "torch.prod")
_fn(np.mean, "a axis dtype out keepdims where", reduction(torch.mean, float_for_ints=True), "torch.mean")
_fn(np.std, "a axis dtype out ddof keepdims where", reduction(torch.std, float_for_ints=True, ddof=True),
    "torch.std")
_fn(np.var, "a axis dtype out ddof keepdims where", reduction(torch.var, float_for_ints=True, ddof=True),
    "torch.var")
_fn(np.max, "a axis out keepdims initial where", reduction(torch.amax, amax=True), "torch.amax")
_fn(np.min, "a axis out keepdims initial where", reduction(torch.amin, amax=True), "torch.amin")
_fn(np.amax, "a axis out keepdims initial where", reduction(torch.amax, amax=True), "torch.amax")
_fn(np.amin, "a axis out keepdims initial where", reduction(torch.amin, amax=True), "torch.amin")
_fn(np.all, "a axis out keepdims where", reduction(torch.all, amax=True), "torch.all")
_fn(np.any, "a axis out keepdims where", reduction(torch.any, amax=True), "torch.any")
_fn(np.argmax, "a axis out keepdims", arg_reduction(torch.argmax), "torch.argmax")
_fn(np.argmin, "a axis out keepdims", arg_reduction(torch.argmin), "torch.argmin")
_fn(np.cumsum, "a axis dtype out", cumulative(torch.cumsum), "torch.cumsum")
_fn(np.cumprod, "a axis dtype out", cumulative(torch.cumprod), "torch.cumprod")
_fn(np.reshape, "a shape order", reshape_to_result(), "torch.reshape")
_fn(np.ravel, "a order", reshape_to_result(), "torch.reshape")
_fn(np.transpose, "a axes", build_transpose, "torch.permute")
_fn(np.swapaxes, "a axis1 axis2", build_swapaxes, "torch.swapaxes")
_fn(np.moveaxis, "a source destination", build_moveaxis, "torch.movedim")
_fn(np.squeeze, "a axis", build_squeeze, "torch.squeeze")
_fn(np.expand_dims, "a axis", build_expand_dims, "torch.unsqueeze")
_fn(np.atleast_1d, "a", reshape_to_result(), "torch.reshape")
_fn(np.atleast_2d, "a", reshape_to_result(), "torch.reshape")
_fn(np.flip, "m axis", build_flip, "torch.flip")
_fn(np.fliplr, "m", lambda ctx: ctx.call(torch.flip, ctx.tensor("m"), (1,)), "torch.flip")
_fn(np.flipud, "m", lambda ctx: ctx.call(torch.flip, ctx.tensor("m"), (0,)), "torch.flip")
_fn(np.roll, "a shift axis", build_roll, "torch.roll")
_fn(np.rot90, "m k axes", build_rot90, "torch.rot90")
_fn(np.concatenate, "arrays axis out dtype casting", build_concatenate, "torch.cat")
_fn(np.stack, "arrays axis out dtype casting", build_stack, "torch.stack")
_fn(np.vstack, "tup dtype casting", sequence_join(torch.vstack), "torch.vstack")
_fn(np.hstack, "tup dtype casting", sequence_join(torch.hstack), "torch.hstack")
_fn(np.append, "arr values axis", build_append, "torch.cat")
_fn(np.split, "ary indices_or_sections axis", build_split, "torch.tensor_split")
_fn(np.array_split, "ary indices_or_sections axis", build_split, "torch.tensor_split")
_fn(np.where, "condition x y", build_where, "torch.where")
_fn(np.nonzero, "a", build_nonzero, "torch.nonzero")
_fn(np.sort, "a axis kind order stable", build_sort, "torch.sort")
_fn(np.argsort, "a axis kind order stable", build_argsort, "torch.argsort")
_fn(np.clip, "a a_min a_max out min max", build_clip, "torch.clamp")
_fn(np.round, "a decimals out", build_round, "torch.round")
_fn(np.around, "a decimals out", build_round, "torch.round")
_fn(np.dot, "a b out", build_dot, "torch.matmul")
_fn(np.tensordot, "a b axes", build_tensordot, "torch.tensordot")
_fn(np.einsum, "subscripts *operands", build_einsum, "torch.einsum")
_fn(np.trace, "a offset axis1 axis2 dtype out", build_trace, "torch.diagonal+sum")
_fn(np.diagonal, "a offset axis1 axis2", build_diagonal, "torch.diagonal")
_fn(np.tril, "m k", triangle(torch.tril), "torch.tril")
_fn(np.triu, "m k", triangle(torch.triu), "torch.triu")
_fn(np.zeros_like, "a dtype order subok shape", like_creation("zeros"), "torch.zeros_like")
_fn(np.ones_like, "a dtype order subok shape", like_creation("ones"), "torch.ones_like")
_fn(np.empty_like, "a dtype order subok shape", like_creation("zeros"), "torch.zeros_like")
_fn(np.full_like, "a fill_value dtype order subok shape", like_creation("full"), "torch.full_like")
_fn(np.cross, "a b axisa axisb axisc axis", build_cross, "torch.linalg.cross")
_fn(np.linalg.norm, "x ord axis keepdims", build_norm, "torch.linalg.vector_norm", "np.linalg.norm")
_fn(np.linalg.inv, "a", linalg_unary(torch.linalg.inv), "torch.linalg.inv", "np.linalg.inv")
_fn(np.linalg.det, "a", linalg_unary(torch.linalg.det), "torch.linalg.det", "np.linalg.det")
_fn(np.fft.fft, "a n axis norm out", fft_op(torch.fft.fft), "torch.fft.fft", "np.fft.fft")
_fn(np.fft.ifft, "a n axis norm out", fft_op(torch.fft.ifft), "torch.fft.ifft", "np.fft.ifft")
_fn(np.fft.rfft, "a n axis norm out", fft_op(torch.fft.rfft), "torch.fft.rfft", "np.fft.rfft")
_fn(np.fft.irfft, "a n axis norm out", fft_op(torch.fft.irfft), "torch.fft.irfft", "np.fft.irfft")
_fn(np.pad, "array pad_width mode", build_pad, "F.pad")
_fn(np.interp, "x xp fp left right period", build_interp, "ln.interp")
_fn(np.copy, "a order subok", build_copy, "torch.clone")
_fn(np.real, "val", lambda ctx: ctx.call(torch.real, ctx.tensor("val")), "torch.real")
_fn(np.imag, "val", lambda ctx: ctx.call(torch.imag, ctx.tensor("val")), "torch.imag")
# Elementwise functions that are also ufuncs: np.abs(x) reaches the ufunc table directly.

# Conversions reached through the tracer's own wrappers of np.array/np.asarray (see array.py).
CONVERSION_ROWS = {
    # leapp.start patches np.asarray/np.array, so LEAPP 0.7.2 records these (docs/leapp-0.7.2-behaviour.md).
    "asarray": Row("asarray", "np.asarray", "torch.clone / .to", build_asarray, ("a", "dtype"), True, "function"),
    "array": Row("array", "np.array", "torch.clone / .to", build_asarray, ("a", "dtype"), True, "function"),
    "array_of_values": Row("array_of_values", "np.array([...])", "torch.cat+reshape", build_stack_of_values,
                           ("object", "dtype"), False, "function"),
}


def _method(name: str, names: str, build: Callable[[BuildContext], Any], torch_name: str) -> None:
    METHOD_ROWS[name] = Row(name, f"ndarray.{name}", torch_name, build, tuple(names.split()),
                            name in LEAPP_NAMES["array methods"], "method")


for _mname, _func in [("sum", np.sum), ("prod", np.prod), ("mean", np.mean), ("std", np.std), ("var", np.var),
                      ("max", np.max), ("min", np.min), ("all", np.all), ("any", np.any)]:
    _row = FUNCTION_ROWS[_func]
    _method(_mname, " ".join(_row.names), _row.build, _row.torch)
for _mname, _func in [("argmax", np.argmax), ("argmin", np.argmin), ("cumsum", np.cumsum),
                      ("cumprod", np.cumprod), ("swapaxes", np.swapaxes), ("squeeze", np.squeeze),
                      ("clip", np.clip), ("round", np.round), ("nonzero", np.nonzero), ("diagonal", np.diagonal),
                      ("trace", np.trace), ("dot", np.dot), ("argsort", np.argsort), ("copy", np.copy)]:
    _row = FUNCTION_ROWS[_func]
    _method(_mname, " ".join(_row.names), _row.build, _row.torch)
_method("reshape", "a shape order", reshape_to_result(), "torch.reshape")
_method("flatten", "a order", reshape_to_result(), "torch.reshape")
_method("ravel", "a order", reshape_to_result(), "torch.reshape")
_method("transpose", "a axes", build_transpose, "torch.permute")
_method("T", "a", build_transpose, "torch.permute")
_method("astype", "a dtype order casting subok copy", build_astype, "Tensor.to")
_method("fill", "a value", build_fill_method, "torch.full_like")
_method("sort", "a axis kind order", build_sort, "torch.sort")
_method("real", "val", lambda ctx: ctx.call(torch.real, ctx.tensor("val")), "torch.real")
_method("imag", "val", lambda ctx: ctx.call(torch.imag, ctx.tensor("val")), "torch.imag")


def all_rows() -> list[Row]:
    """Every row of the lookup, for the parity tests and the docs."""
    return [*UFUNC_ROWS.values(), *FUNCTION_ROWS.values(), *CONVERSION_ROWS.values(), *METHOD_ROWS.values()]
