"""The lookup: a table from NumPy callables to torch graph builders, plus the argument normalizers.

A row names the NumPy callable, the torch op shown in the graph, the parameter names used to bind
the call, and a builder. Builders are small: they read the bound arguments through a
:class:`BuildContext` (graph values for arrays, static NumPy values for metadata) and emit fx nodes.
Shared NumPy/torch gaps (axis -> dim, keepdims, ddof, ``axis=()``, dtype promotion under NEP 50,
int32 index arrays, bool and integer kernels torch lacks) live in the normalizers at the top, so a
new NumPy function costs one row and one parity case (tests/test_parity.py); docs/lookup.md explains
how.

Builders compute in the dtypes NumPy computes in; where the dtype torch returns still differs from
NumPy's, the session's dtype pass appends the cast, so every recorded value ends with NumPy's dtype.
A builder raises :class:`Unsupported` for arguments torch cannot reproduce (data-dependent shapes,
traced values used as static arguments): the call is then reported, never recorded wrong.

``leapp`` on a row says whether LEAPP 0.7.2's own lookup records that callable (read from
``leapp_0_7_2_names.txt``); the ``leapp`` profile records only those rows.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
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
_F64 = np.dtype(np.float64)
_I64 = np.dtype(np.int64)
_BOOL = np.dtype(np.bool_)
# NumPy's own asarray: while a cell runs the tracer patches np.asarray (trace.py), and builders work on
# plain eager values, so they skip the patched wrapper.
_asarray = np.asarray


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

def _derived(value: Any) -> bool:
    """Whether ``value`` (or an element of a list/tuple) carries traced data (a provenance with a builder)."""
    if isinstance(value, np.ndarray):
        prov = getattr(value, "_lp", None)
        return prov is not None and prov.builder is not None
    if type(value) is list or type(value) is tuple:
        return any(_derived(v) for v in value)
    return False


class BuildContext:
    """One NumPy call being recorded: what a row builder sees.

    ``params`` maps parameter names to the call's arguments as the user passed them (traced arrays
    included); ``eager`` maps them to plain NumPy values; ``result`` is NumPy's own result; ``extra``
    carries the ufunc for ufunc rows. :meth:`emit`, :meth:`graph_value` and :meth:`constant` go to
    the session and node builder, which know the cell line, constants and provenance. A plain class
    with slots: one is made for every recorded call.
    """

    __slots__ = ("params", "eager", "result", "extra", "_session", "_builder", "_line", "_location",
                 "_helper", "_name")

    def __init__(self, params: dict[str, Any], eager: dict[str, Any], result: Any, extra: dict[str, Any], *,
                 session: Any, builder: Any, line: int | None, location: str | None, helper: str | None,
                 name: str):
        self.params = params
        self.eager = eager
        self.result = result
        self.extra = extra
        self._session = session
        self._builder = builder
        self._line = line
        self._location = location
        self._helper = helper
        self._name = name

    def emit(self, op: str, target: Any, args: tuple[Any, ...] = (), kwargs: dict[str, Any] | None = None
             ) -> torch.fx.Node:
        """A graph node, attributed to the call's cell line and NumPy name."""
        return self._builder.emit(op, target, args, kwargs, line=self._line, numpy=self._name,
                                  location=self._location, helper=self._helper)

    def graph_value(self, value: Any) -> Any:
        """``value`` as the graph sees it: its node if traced here, a constant if an array, else itself."""
        return self._session.graph_value(self._builder, value, self._line, helper=self._helper)

    def constant(self, value: Any) -> torch.fx.Node:
        """A genuine constant (a value the builder computes from static arguments)."""
        return self._builder.const(value, baked=False, origin=None, line=self._line, helper=self._helper)

    def has(self, name: str) -> bool:
        return name in self.params

    def given(self, name: str) -> bool:
        """The argument was passed with a value other than None / NumPy's no-value marker."""
        value = self.eager.get(name)
        return value is not None and value is not np._NoValue

    def static(self, name: str, default: Any = None) -> Any:
        """The eager value of an argument the graph bakes in (axis, shift, sizes, q, ...).

        ``Unsupported`` when it carries traced data: baking it would freeze a data-dependent value.
        """
        value = self.params.get(name, default)
        if value is not default and _derived(value):
            raise Unsupported(f"{name}= is computed from traced data; the graph needs a fixed value")
        value = self.eager.get(name, default)
        return default if value is np._NoValue else value

    @property
    def result_dtype(self) -> np.dtype:
        dtype = getattr(self.result, "dtype", None)
        return dtype if isinstance(dtype, np.dtype) else _asarray(self.result).dtype

    def tensor(self, name: str, dtype: np.dtype | None = None) -> Any:
        """The argument as a graph tensor, cast to ``dtype`` (a NumPy dtype) when given."""
        return self.as_tensor(self.params[name], self.eager[name], dtype)

    def as_tensor(self, value: Any, eager: Any, dtype: np.dtype | None = None) -> Any:
        graph = self.graph_value(value)
        if not isinstance(graph, torch.fx.Node):
            # Python scalars and lists become constants of NumPy's dtype for them.
            return self.constant(_asarray(eager, dtype=dtype) if dtype is not None else _asarray(eager))
        have = eager.dtype if hasattr(eager, "dtype") else _asarray(eager).dtype
        return self.cast(graph, have, dtype)

    def scalar_or_tensor(self, name: str, dtype: np.dtype | None = None) -> Any:
        """A Python scalar stays a scalar (weak, as NEP 50 treats it); arrays become tensors."""
        eager = self.eager[name]
        if isinstance(eager, (bool, int, float)) and not isinstance(self.params[name], np.generic):
            return eager
        return self.tensor(name, dtype)

    def cast(self, node: Any, have: np.dtype, want: np.dtype | None) -> Any:
        if want is None or have == want:
            return node
        return self.emit("call_method", "to", (node, torch_dtype(want)))

    def to(self, node: Any, want: np.dtype) -> Any:
        """An explicit cast of a value whose torch dtype differs from ``want``."""
        return self.emit("call_method", "to", (node, torch_dtype(want)))

    def to_result_dtype(self, node: Any, torch_result_dtype: np.dtype | None) -> Any:
        """Cast ``node`` to the eager result's dtype when the dtype torch computes in is known to differ.

        Where it is not known here, the session's dtype pass (run once on the trace inputs) inserts
        the cast, so every recorded value ends with NumPy's dtype.
        """
        want = self.result_dtype
        if torch_result_dtype is None or torch_result_dtype == want:
            return node
        return self.to(node, want)

    def call(self, target: Any, *args: Any, **kwargs: Any) -> torch.fx.Node:
        return self.emit("call_function", target, args, kwargs)


# --------------------------------------------------------------------------------------------
# normalizers
# --------------------------------------------------------------------------------------------

_ALLOWED = {"order": (None, "C", "K", "A"), "where": (True, None), "casting": (None, "same_kind"),
            "subok": (None, True), "overwrite_input": (None, False), "copy": (None, True, False)}


def _reject(ctx: BuildContext, *names: str) -> None:
    """Refuse arguments the graph cannot express (``out=``, ``where=``, ``initial=``, ``order='F'``)."""
    for name in names:
        if name not in ctx.eager:
            continue
        value = ctx.eager[name]
        if value is None or value is np._NoValue:
            continue
        allowed = _ALLOWED.get(name)
        if allowed is not None and any(value is a or (type(value) is str and value == a) for a in allowed):
            continue
        raise Unsupported(f"argument {name}={value!r} is not recorded")


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


# --------------------------------------------------------------------------------------------
# builders: elementwise (ufuncs)
# --------------------------------------------------------------------------------------------

# torch ops that take a Python scalar as their second operand (others get a 0-d tensor constant).
_SCALAR_OK = frozenset({torch.add, torch.sub, torch.mul, torch.div, torch.pow, torch.remainder, torch.fmod,
                        torch.floor_divide, torch.eq, torch.ne, torch.lt, torch.le, torch.gt, torch.ge,
                        torch.bitwise_and, torch.bitwise_or, torch.bitwise_xor})
# torch ops without bool kernels whose NumPy bool loop is the identity.
_BOOL_IDENTITY = frozenset({torch.abs, torch.ceil, torch.floor, torch.trunc})
# NumPy's integer division by zero gives 0 (with a warning); torch raises.
_INT_DIVISION = frozenset({torch.floor_divide, torch.remainder, torch.fmod})


def _ufunc_operands(ctx: BuildContext, scalars_ok: bool, loop: tuple[np.dtype, ...], nin: int) -> list[Any]:
    """Graph values for the operands, cast to the loop dtypes; a Python scalar after the first operand stays
    a scalar where the torch op takes one (``x * 0.5``)."""
    args = []
    params, eager = ctx.params, ctx.eager
    for i in range(nin):
        name = _X[i]
        value = eager[name]
        kind = type(value)
        if i and scalars_ok and (kind is float or kind is int or kind is bool):
            args.append(value)
        else:
            args.append(ctx.as_tensor(params[name], value, loop[i]))
    return args


def _int_division(ctx: BuildContext, torch_fn: Any, a: Any, b: Any) -> Any:
    if not isinstance(b, torch.fx.Node):
        return ctx.call(torch_fn, a, b) if b != 0 else ctx.call(torch.zeros_like, a)
    zero = ctx.call(torch.eq, b, 0)
    safe = ctx.call(torch.where, zero, ctx.call(torch.ones_like, b), b)
    return ctx.call(torch.where, zero, ctx.call(torch.zeros_like, safe), ctx.call(torch_fn, a, safe))


def elementwise(torch_fn: Any) -> Callable[[BuildContext], Any]:
    """A ufunc: operands cast to NumPy's loop dtype so torch computes in the same precision."""
    scalars_ok = torch_fn in _SCALAR_OK
    bool_identity = torch_fn in _BOOL_IDENTITY
    int_division = torch_fn in _INT_DIVISION

    def build(ctx: BuildContext) -> Any:
        ufunc = ctx.extra["ufunc"]
        nin = ufunc.nin
        eager = ctx.eager
        if len(eager) > nin:
            _reject(ctx, "out", "where", "casting", "order", "subok", "signature")
        loop = _loop_dtypes(ufunc, eager, eager.get("dtype"))
        args = _ufunc_operands(ctx, scalars_ok, loop, nin)
        first = loop[0]
        if first is _BOOL and bool_identity:
            node = ctx.call(torch.clone, args[0])
        elif first is _BOOL and torch_fn is torch.matmul:
            node = _contract(ctx, torch.matmul, args)
        elif int_division and first.kind in "iu":
            node = _int_division(ctx, torch_fn, *args)
        else:
            node = ctx.emit("call_function", torch_fn, tuple(args))
        return ctx.to_result_dtype(node, loop[nin])

    return build


def build_divmod(ctx: BuildContext) -> list[Any]:
    loop = _loop_dtypes(np.divmod, ctx.eager, ctx.eager.get("dtype"))
    _reject(ctx, "out", "where")
    a, b = _ufunc_operands(ctx, True, loop, 2)
    if loop[0].kind in "iu":
        return [_int_division(ctx, torch.floor_divide, a, b), _int_division(ctx, torch.remainder, a, b)]
    return [ctx.call(torch.floor_divide, a, b), ctx.call(torch.remainder, a, b)]


def multi_output(torch_fn: Any) -> Callable[[BuildContext], list[Any]]:
    """A ufunc with two outputs (modf, frexp): one torch call returning a pair."""

    def build(ctx: BuildContext) -> list[Any]:
        ufunc = ctx.extra["ufunc"]
        _reject(ctx, "out", "where")
        loop = _loop_dtypes(ufunc, ctx.eager, ctx.eager.get("dtype"))
        pair = ctx.call(torch_fn, ctx.tensor("x0", loop[0]))
        return [ctx.call(operator.getitem, pair, 0), ctx.call(operator.getitem, pair, 1)]

    return build


def build_ldexp(ctx: BuildContext) -> Any:
    """``x * 2**e``; torch.ldexp raises for negative integer exponents."""
    loop = _loop_dtypes(np.ldexp, ctx.eager)
    _reject(ctx, "out", "where")
    x = ctx.tensor("x0", loop[0])
    e = ctx.eager["x1"]
    if isinstance(e, int) and not isinstance(ctx.params["x1"], np.generic):
        return ctx.call(torch.mul, x, 2.0 ** e)
    return ctx.call(torch.mul, x, ctx.call(torch.pow, 2.0, ctx.tensor("x1", loop[0])))


# --------------------------------------------------------------------------------------------
# builders: reductions
# --------------------------------------------------------------------------------------------

def _reduce_input(ctx: BuildContext, float_for_ints: bool) -> tuple[Any, np.ndarray]:
    arr = ctx.eager["a"]
    arr = arr if isinstance(arr, np.ndarray) else _asarray(arr)
    want = None
    if ctx.given("dtype"):
        want = np.dtype(ctx.static("dtype"))
    elif float_for_ints and arr.dtype.kind in "biu":
        want = _F64
    return ctx.tensor("a", want), arr


def reduction(torch_fn: Any, *, float_for_ints: bool = False, ddof: bool = False,
              values_only: bool = False, single_dim: bool = False) -> Callable[[BuildContext], Any]:
    """sum/prod/mean/std/var/max/min/all/any: axis -> dim, keepdims -> keepdim, ``axis=()`` is a no-op."""

    def build(ctx: BuildContext) -> Any:
        _reject(ctx, "out", "where", "initial")
        x, arr = _reduce_input(ctx, float_for_ints)
        dims = norm_axes(ctx.static("axis"), arr.ndim)
        keep = _keepdims(ctx)
        correction = ctx.static("ddof", 0) or 0 if ddof else None
        if dims == ():
            # NumPy: axis=() reduces nothing (torch would reduce everything). For std/var each element
            # is its own mean: 0 (nan for inf/nan), divided by max(1 - ddof, 0) like NumPy.
            if not ddof:
                return ctx.call(torch.clone, x)
            deviation = ctx.call(torch.sub, x, x)
            square = ctx.call(torch.mul, deviation, deviation)
            var = ctx.call(torch.div, square, float(max(1 - correction, 0)))
            return ctx.call(torch.sqrt, var) if torch_fn is torch.std else var
        if arr.ndim == 0:
            return ctx.call(torch_fn, x, correction=correction) if ddof else \
                ctx.call(torch.clone, x) if values_only else ctx.call(torch_fn, x)
        if dims is None:
            dims = tuple(range(arr.ndim))
        if single_dim and len(dims) > 1:
            # torch.prod takes one dim: reduce the merged axes instead.
            node = ctx.call(torch_fn, _merge_dims(ctx, x, dims, arr.ndim), -1)
            if keep:
                node = ctx.call(torch.reshape, node, np.shape(ctx.result))
            return node
        if ddof:
            return ctx.call(torch_fn, x, dim=dims, correction=correction, keepdim=keep)
        return ctx.call(torch_fn, x, dim=dims[0] if single_dim else dims, keepdim=keep)

    return build


def arg_reduction(torch_fn: Any) -> Callable[[BuildContext], Any]:
    def build(ctx: BuildContext) -> Any:
        _reject(ctx, "out")
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
    def build(ctx: BuildContext) -> Any:
        _reject(ctx, "out")
        want = np.dtype(ctx.static("dtype")) if ctx.given("dtype") else None
        x = ctx.tensor("a", want)
        arr = _asarray(ctx.eager["a"])
        x, dim = _flat_or_dim(ctx, x, ctx.static("axis"), arr.ndim)
        return ctx.call(torch_fn, x, dim=dim)

    return build


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

    def build(ctx: BuildContext) -> Any:
        _reject(ctx, "out", "overwrite_input", "weights")
        method = ctx.static("method", "linear")
        if ctx.given("interpolation") or method not in _QUANTILE_METHODS:
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
        if dims is not None and len(dims) == 1:
            return ctx.call(torch.quantile, x, q, dim=dims[0], keepdim=keep, interpolation=method)
        if dims is None:
            flat = ctx.call(torch.reshape, x, (-1,))
        else:
            flat = _merge_dims(ctx, x, dims, arr.ndim)
        node = ctx.call(torch.quantile, flat, q, dim=-1, interpolation=method)
        return ctx.call(torch.reshape, node, np.shape(ctx.result)) if keep or arr.ndim == 0 else node

    return build


def build_average(ctx: BuildContext) -> Any:
    _reject(ctx, "returned")
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


# --------------------------------------------------------------------------------------------
# builders: shapes
# --------------------------------------------------------------------------------------------

def build_reshape_to_result(ctx: BuildContext) -> Any:
    """Shape-only ops whose result is the input's data in C order: a reshape to NumPy's result shape."""
    _reject(ctx, "order")
    return ctx.call(torch.reshape, ctx.tensor("a"), np.shape(ctx.result))


def build_transpose(ctx: BuildContext) -> Any:
    arr = _asarray(ctx.eager["a"])
    axes = ctx.static("axes")
    dims = tuple(range(arr.ndim - 1, -1, -1)) if axes is None else norm_axes(axes, arr.ndim)
    return ctx.call(torch.permute, ctx.tensor("a"), dims)


def build_swapaxes(ctx: BuildContext) -> Any:
    arr = _asarray(ctx.eager["a"])
    a1, a2 = norm_axes((ctx.static("axis1"), ctx.static("axis2")), arr.ndim)
    return ctx.call(torch.swapaxes, ctx.tensor("a"), a1, a2)


def build_moveaxis(ctx: BuildContext) -> Any:
    arr = _asarray(ctx.eager["a"])
    src = norm_axes(ctx.static("source"), arr.ndim)
    dst = norm_axes(ctx.static("destination"), arr.ndim)
    return ctx.call(torch.movedim, ctx.tensor("a"), src, dst)


def build_squeeze(ctx: BuildContext) -> Any:
    arr = _asarray(ctx.eager["a"])
    axis = ctx.static("axis")
    if axis is None:
        return ctx.call(torch.squeeze, ctx.tensor("a"))
    return ctx.call(torch.squeeze, ctx.tensor("a"), norm_axes(axis, arr.ndim))


def build_expand_dims(ctx: BuildContext) -> Any:
    axis = ctx.static("axis")
    if isinstance(axis, (int, np.integer)):
        out_ndim = np.ndim(ctx.eager["a"]) + 1
        return ctx.call(torch.unsqueeze, ctx.tensor("a"), int(axis) % out_ndim)
    return ctx.call(torch.reshape, ctx.tensor("a"), np.shape(ctx.result))


def build_flip(ctx: BuildContext) -> Any:
    arr = _asarray(ctx.eager["m"])
    dims = norm_axes(ctx.static("axis"), arr.ndim)
    return ctx.call(torch.flip, ctx.tensor("m"), tuple(range(arr.ndim)) if dims is None else dims)


def flip_axis(dim: int) -> Callable[[BuildContext], Any]:
    def build(ctx: BuildContext) -> Any:
        return ctx.call(torch.flip, ctx.tensor("m"), (dim,))

    return build


def build_roll(ctx: BuildContext) -> Any:
    arr = _asarray(ctx.eager["a"])
    shift = _static_int(ctx.static("shift"))
    axis = ctx.static("axis")
    if axis is None:
        return ctx.call(torch.roll, ctx.tensor("a"), shift)
    return ctx.call(torch.roll, ctx.tensor("a"), shift, norm_axes(axis, arr.ndim))


def build_rot90(ctx: BuildContext) -> Any:
    arr = _asarray(ctx.eager["m"])
    axes = norm_axes(ctx.static("axes", (0, 1)), arr.ndim)
    return ctx.call(torch.rot90, ctx.tensor("m"), int(ctx.static("k", 1)), axes)


def build_broadcast_to(ctx: BuildContext) -> Any:
    return ctx.call(torch.broadcast_to, ctx.tensor("array"), np.shape(ctx.result))


def build_tile(ctx: BuildContext) -> Any:
    reps = _static_int(ctx.static("reps"))
    return ctx.call(torch.tile, ctx.tensor("A"), reps if isinstance(reps, tuple) else (reps,))


def build_repeat(ctx: BuildContext) -> Any:
    arr = _asarray(ctx.eager["a"])
    repeats = _static_int(ctx.static("repeats"))
    x = ctx.tensor("a")
    x, dim = _flat_or_dim(ctx, x, ctx.static("axis"), arr.ndim)
    if isinstance(repeats, tuple):
        if len(repeats) == 1:
            repeats = repeats[0]
        else:
            repeats = ctx.constant(_asarray(repeats, dtype=np.int64))
    return ctx.call(torch.repeat_interleave, x, repeats, dim)


# --------------------------------------------------------------------------------------------
# builders: joining and splitting
# --------------------------------------------------------------------------------------------

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


def build_concatenate(ctx: BuildContext) -> Any:
    _reject(ctx, "out", "casting")
    axis = ctx.static("axis", 0)
    if _derived(ctx.params["arrays"]) and isinstance(ctx.params["arrays"], np.ndarray):
        return _join_array(ctx, axis, stack=False)
    tensors = _sequence_tensors(ctx, "arrays", ctx.result_dtype)
    if axis is None:
        tensors = [ctx.call(torch.reshape, t, (-1,)) for t in tensors]
        axis = 0
    ndim = np.ndim(ctx.eager["arrays"][0])
    return ctx.call(torch.cat, tensors, norm_axes(axis, ndim)[0])


def build_stack(ctx: BuildContext) -> Any:
    _reject(ctx, "out", "casting")
    if _derived(ctx.params["arrays"]) and isinstance(ctx.params["arrays"], np.ndarray):
        return _join_array(ctx, ctx.static("axis", 0), stack=True)
    tensors = _sequence_tensors(ctx, "arrays", ctx.result_dtype)
    return ctx.call(torch.stack, tensors, norm_axes(ctx.static("axis", 0), np.ndim(ctx.result))[0])


def sequence_join(torch_fn: Any) -> Callable[[BuildContext], Any]:
    """vstack/hstack/dstack/column_stack: torch's functions of the same name follow NumPy's shape rules."""

    def build(ctx: BuildContext) -> Any:
        _reject(ctx, "casting")
        return ctx.call(torch_fn, _sequence_tensors(ctx, "tup", ctx.result_dtype))

    return build


def build_append(ctx: BuildContext) -> Any:
    dtype = ctx.result_dtype
    arr = ctx.tensor("arr", dtype)
    values = ctx.tensor("values", dtype)
    axis = ctx.static("axis")
    if axis is None:
        flat = [ctx.call(torch.reshape, arr, (-1,)), ctx.call(torch.reshape, values, (-1,))]
        return ctx.call(torch.cat, flat, 0)
    return ctx.call(torch.cat, [arr, values], norm_axes(axis, np.ndim(ctx.eager["arr"]))[0])


def build_split(ctx: BuildContext) -> list[Any]:
    arr = _asarray(ctx.eager["ary"])
    sections = _static_int(ctx.static("indices_or_sections"))
    dim = norm_axes(ctx.static("axis", 0), arr.ndim)[0]
    node = ctx.call(torch.tensor_split, ctx.tensor("ary"), sections, dim)
    return [ctx.call(operator.getitem, node, i) for i in range(len(ctx.result))]


# --------------------------------------------------------------------------------------------
# builders: selection, sorting, rounding
# --------------------------------------------------------------------------------------------

def build_where(ctx: BuildContext) -> Any:
    if not ctx.has("x"):
        return build_nonzero_of(ctx, "condition")
    dtype = ctx.result_dtype
    cond = ctx.tensor("condition", _BOOL)
    return ctx.call(torch.where, cond, ctx.tensor("x", dtype), ctx.tensor("y", dtype))


def build_nonzero_of(ctx: BuildContext, name: str) -> list[Any]:
    if np.ndim(ctx.eager[name]) == 0:
        raise Unsupported("nonzero of a 0-d array")
    node = ctx.call(torch.nonzero, ctx.tensor(name), as_tuple=True)
    return [ctx.call(operator.getitem, node, i) for i in range(len(ctx.result))]


def build_nonzero(ctx: BuildContext) -> list[Any]:
    return build_nonzero_of(ctx, "a")


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


def build_sort(ctx: BuildContext) -> Any:
    x, dim = _sort_input(ctx)
    return ctx.call(operator.getitem, ctx.call(torch.sort, x, dim=dim, stable=True), 0)


def build_argsort(ctx: BuildContext) -> Any:
    """A stable sort: equals NumPy's default (unstable) argsort wherever the keys have no ties."""
    x, dim = _sort_input(ctx)
    return ctx.call(torch.argsort, x, dim=dim, stable=True)


def build_searchsorted(ctx: BuildContext) -> Any:
    if ctx.given("sorter"):
        raise Unsupported("searchsorted sorter=")
    seq = _asarray(ctx.eager["a"])
    common = np.result_type(seq, ctx.eager["v"])
    right = ctx.static("side", "left") == "right"
    values = ctx.scalar_or_tensor("v", common)
    return ctx.call(torch.searchsorted, ctx.tensor("a", common), values, right=right)


def build_clip(ctx: BuildContext) -> Any:
    _reject(ctx, "out")
    dtype = ctx.result_dtype
    x = ctx.tensor("a", dtype)
    bounds = []
    for legacy, name in (("a_min", "min"), ("a_max", "max")):
        key = legacy if ctx.given(legacy) else name
        bounds.append(ctx.scalar_or_tensor(key, dtype) if ctx.given(key) else None)
    # NumPy computes minimum(maximum(a, lo), hi); so does clamp, including when lo > hi.
    return ctx.call(torch.clamp, x, *bounds)


def build_round(ctx: BuildContext) -> Any:
    _reject(ctx, "out")
    decimals = int(ctx.static("decimals", 0))
    arr = _asarray(ctx.eager["a"])
    if arr.dtype.kind in "biu":
        if decimals >= 0:
            return ctx.call(torch.clone, ctx.tensor("a"))
        raise Unsupported("rounding integers to negative decimals")
    if decimals == 0:
        return ctx.call(torch.round, ctx.tensor("a"))
    return ctx.call(torch.round, ctx.tensor("a"), decimals=decimals)


def build_fix(ctx: BuildContext) -> Any:
    if _asarray(ctx.eager["x"]).dtype.kind in "biu":
        return ctx.call(torch.clone, ctx.tensor("x"))
    return ctx.call(torch.trunc, ctx.tensor("x"))


def build_nan_to_num(ctx: BuildContext) -> Any:
    if _asarray(ctx.eager["x"]).dtype.kind not in "fc":
        return ctx.call(torch.clone, ctx.tensor("x"))
    nan = float(ctx.static("nan", 0.0))
    posinf, neginf = ctx.static("posinf"), ctx.static("neginf")
    return ctx.call(torch.nan_to_num, ctx.tensor("x"), nan, None if posinf is None else float(posinf),
                    None if neginf is None else float(neginf))


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
    close = ctx.call(torch.le, ctx.call(torch.abs, ctx.call(torch.sub, a, b)),
                     ctx.call(torch.add, ctx.call(torch.mul, ctx.call(torch.abs, b), rtol), atol))
    result = ctx.call(torch.logical_or, ctx.call(torch.logical_and, close, ctx.call(torch.isfinite, b)),
                      ctx.call(torch.eq, a, b))
    if ctx.static("equal_nan", False):
        both_nan = ctx.call(torch.logical_and, ctx.call(torch.isnan, a), ctx.call(torch.isnan, b))
        result = ctx.call(torch.logical_or, result, both_nan)
    return result


def build_sinc(ctx: BuildContext) -> Any:
    return ctx.call(torch.sinc, ctx.tensor("x", ctx.result_dtype))


def _index_tensor(ctx: BuildContext, name: str) -> Any:
    """Index arrays as torch wants them: int64 (NumPy accepts any integer dtype, torch only int64)."""
    eager = ctx.eager[name]
    if isinstance(eager, (int, np.integer)) and not _derived(ctx.params[name]):
        return int(eager)
    return ctx.tensor(name, _I64)


def build_take(ctx: BuildContext) -> Any:
    mode = ctx.static("mode", "raise")
    _reject(ctx, "out")
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


# --------------------------------------------------------------------------------------------
# builders: linear algebra and contractions
# --------------------------------------------------------------------------------------------

def build_dot(ctx: BuildContext) -> Any:
    _reject(ctx, "out")
    dtype = ctx.result_dtype
    a, b = _asarray(ctx.eager["a"]), _asarray(ctx.eager["b"])
    ta, tb = ctx.tensor("a", dtype), ctx.tensor("b", dtype)
    if a.ndim == 0 or b.ndim == 0:
        return ctx.call(torch.mul, ta, tb)
    if a.ndim <= 2 and b.ndim <= 2:
        return _contract(ctx, torch.matmul, [ta, tb])
    return _contract(ctx, torch.tensordot, [ta, tb], dims=([a.ndim - 1], [max(b.ndim - 2, 0)]))


def build_inner(ctx: BuildContext) -> Any:
    dtype = ctx.result_dtype
    return _contract(ctx, torch.inner, [ctx.tensor("a", dtype), ctx.tensor("b", dtype)])


def build_vdot(ctx: BuildContext) -> Any:
    dtype = ctx.result_dtype
    a = ctx.call(torch.reshape, ctx.tensor("a", dtype), (-1,))
    b = ctx.call(torch.reshape, ctx.tensor("b", dtype), (-1,))
    if dtype.kind in "fc":
        return ctx.call(torch.vdot, a, b)
    return _contract(ctx, torch.sum, [ctx.call(torch.mul, a, b)])


def build_outer(ctx: BuildContext) -> Any:
    dtype = ctx.result_dtype
    a = ctx.call(torch.reshape, ctx.tensor("a", dtype), (-1, 1))
    b = ctx.call(torch.reshape, ctx.tensor("b", dtype), (1, -1))
    return ctx.call(torch.mul, a, b)


def build_tensordot(ctx: BuildContext) -> Any:
    dtype = ctx.result_dtype
    axes = _static_int(ctx.static("axes", 2))
    if isinstance(axes, tuple):
        axes = tuple(list(a) if isinstance(a, tuple) else [a] for a in axes)
    return _contract(ctx, torch.tensordot, [ctx.tensor("a", dtype), ctx.tensor("b", dtype)], dims=axes)


def build_einsum(ctx: BuildContext) -> Any:
    _reject(ctx, "out")
    subscripts = ctx.static("subscripts")
    if not isinstance(subscripts, str):
        raise Unsupported("einsum in sublist form")
    for name in ("dtype", "casting", "optimize"):
        if ctx.given(name) and not (name == "optimize" and ctx.static(name) is False):
            raise Unsupported(f"einsum {name}=")
    dtype = ctx.result_dtype
    operands = [ctx.as_tensor(v, e, dtype) for v, e in zip(ctx.params["operands"], ctx.eager["operands"],
                                                           strict=True)]
    if dtype == _BOOL:
        operands = [ctx.to(t, _I64) for t in operands]
        return ctx.call(torch.ne, ctx.call(torch.einsum, subscripts, *operands), 0)
    return ctx.call(torch.einsum, subscripts, *operands)


def build_trace(ctx: BuildContext) -> Any:
    _reject(ctx, "out")
    arr = _asarray(ctx.eager["a"])
    d1, d2 = norm_axes((ctx.static("axis1", 0), ctx.static("axis2", 1)), arr.ndim)
    want = np.dtype(ctx.static("dtype")) if ctx.given("dtype") else None
    diag = ctx.call(torch.diagonal, ctx.tensor("a", want), int(ctx.static("offset", 0)), d1, d2)
    return ctx.call(torch.sum, diag, -1)


def build_diagonal(ctx: BuildContext) -> Any:
    arr = _asarray(ctx.eager["a"])
    d1, d2 = norm_axes((ctx.static("axis1", 0), ctx.static("axis2", 1)), arr.ndim)
    return ctx.call(torch.diagonal, ctx.tensor("a"), int(ctx.static("offset", 0)), d1, d2)


def build_diag(ctx: BuildContext) -> Any:
    return ctx.call(torch.diag, ctx.tensor("v"), int(ctx.static("k", 0)))


def triangle(torch_fn: Any) -> Callable[[BuildContext], Any]:
    """tril/triu; NumPy broadcasts a 1-D input to a square matrix first."""

    def build(ctx: BuildContext) -> Any:
        x = ctx.tensor("m")
        if np.ndim(ctx.eager["m"]) < 2:
            x = ctx.call(torch.broadcast_to, x, np.shape(ctx.result))
        return ctx.call(torch_fn, x, int(ctx.static("k", 0)))

    return build


def like_creation(kind: str) -> Callable[[BuildContext], Any]:
    """zeros_like/ones_like/full_like/empty_like: the result depends only on the input's shape."""

    def build(ctx: BuildContext) -> Any:
        if ctx.given("shape"):
            raise Unsupported("shape= override")
        _reject(ctx, "order", "subok")
        dtype = ctx.result_dtype
        x = ctx.tensor("a")
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


def build_cross(ctx: BuildContext) -> Any:
    a, b = _asarray(ctx.eager["a"]), _asarray(ctx.eager["b"])
    if any(ctx.static(n, -1) != -1 for n in ("axisa", "axisb", "axisc")):
        raise Unsupported("cross with axisa/axisb/axisc")
    axis = ctx.static("axis")
    axis = -1 if axis is None else int(axis)
    if a.shape[axis] != 3 or b.shape[axis] != 3:
        raise Unsupported("cross of 2-vectors")
    dtype = ctx.result_dtype
    ta, tb = ctx.tensor("a", dtype), ctx.tensor("b", dtype)
    shape = np.broadcast_shapes(a.shape, b.shape)
    ta = ctx.call(torch.broadcast_to, ta, shape)
    tb = ctx.call(torch.broadcast_to, tb, shape)
    return ctx.call(torch.linalg.cross, ta, tb, dim=axis)


_MATRIX_ORDS = ("fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf)


def _norm(ctx: BuildContext, name: str, ord_: Any, axis: Any, keep: bool, *, matrix: bool | None) -> Any:
    """NumPy's norm rules: vector norms over one axis (or the flattened array), matrix norms over two."""
    arr = _asarray(ctx.eager[name])
    dtype = ctx.result_dtype
    x = ctx.tensor(name, dtype if arr.dtype.kind in "biu" else None)
    dims = norm_axes(axis, arr.ndim)
    if matrix is None:
        matrix = len(dims) == 2 if dims is not None else arr.ndim == 2 and ord_ is not None
    if not matrix:
        order = 2.0 if ord_ is None else float(ord_)
        return ctx.call(torch.linalg.vector_norm, x, order, dims, keep)
    if dims is None:
        dims = (arr.ndim - 2, arr.ndim - 1)
    if ord_ in (None, "fro"):
        return ctx.call(torch.linalg.vector_norm, x, 2.0, dims, keep)
    if ord_ not in _MATRIX_ORDS:
        raise Unsupported(f"matrix norm ord={ord_!r}")
    order = ord_ if isinstance(ord_, str) else float(ord_)
    return ctx.call(torch.linalg.matrix_norm, x, order, dims, keep)


def build_norm(ctx: BuildContext) -> Any:
    return _norm(ctx, "x", ctx.static("ord"), ctx.static("axis"), _keepdims(ctx), matrix=None)


def build_vector_norm(ctx: BuildContext) -> Any:
    return _norm(ctx, "x", ctx.static("ord", 2), ctx.static("axis"), _keepdims(ctx), matrix=False)


def build_matrix_norm(ctx: BuildContext) -> Any:
    return _norm(ctx, "x", ctx.static("ord", "fro"), (-2, -1), _keepdims(ctx), matrix=True)


def linalg_unary(torch_fn: Any) -> Callable[[BuildContext], Any]:
    def build(ctx: BuildContext) -> Any:
        return ctx.call(torch_fn, ctx.tensor("a", ctx.result_dtype))

    return build


def build_solve(ctx: BuildContext) -> Any:
    """NumPy 2 treats ``b`` as a stack of vectors only when it is 1-D; torch also when
    ``b.ndim == a.ndim - 1``, so such a ``b`` is broadcast to a's batch to keep it a matrix."""
    dtype = ctx.result_dtype
    a, b = _asarray(ctx.eager["a"]), _asarray(ctx.eager["b"])
    ta, tb = ctx.tensor("a", dtype), ctx.tensor("b", dtype)
    if b.ndim > 1 and b.ndim == a.ndim - 1:
        tb = ctx.call(torch.broadcast_to, tb, a.shape[:-2] + b.shape)
    return ctx.call(torch.linalg.solve, ta, tb)


# --------------------------------------------------------------------------------------------
# builders: fft, pad, interp, linspace, differences
# --------------------------------------------------------------------------------------------

def fft_op(torch_fn: Any, *, many: bool = False) -> Callable[[BuildContext], Any]:
    """np.fft.*: NumPy 2 keeps float32/complex64 precision, as torch does; integers compute in float64."""

    def build(ctx: BuildContext) -> Any:
        _reject(ctx, "out")
        arr = _asarray(ctx.eager["a"])
        x = ctx.tensor("a", _F64 if arr.dtype.kind in "biu" else None)
        norm = ctx.static("norm")
        if many:
            s = _static_int(ctx.static("s"))
            dims = norm_axes(ctx.static("axes", (-2, -1) if torch_fn in _FFT2 else None), arr.ndim)
            node = ctx.call(torch_fn, x, s=s, dim=dims, norm=norm)
        else:
            n = ctx.static("n")
            node = ctx.call(torch_fn, x, n=None if n is None else int(n),
                            dim=_one_axis(ctx, "axis", arr.ndim, -1), norm=norm)
        # torch may return a lazily conjugated view (conj bit), which .numpy() refuses.
        return ctx.call(torch.resolve_conj, node) if ctx.result_dtype.kind == "c" else node

    return build


_FFT2 = {torch.fft.fft2, torch.fft.ifft2, torch.fft.rfft2, torch.fft.irfft2}


def fft_shift(torch_fn: Any) -> Callable[[BuildContext], Any]:
    def build(ctx: BuildContext) -> Any:
        dims = norm_axes(ctx.static("axes"), np.ndim(ctx.eager["x"]))
        return ctx.call(torch_fn, ctx.tensor("x"), dims)

    return build


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
    ndim = np.ndim(np.subtract(start_e, stop_e))
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


# --------------------------------------------------------------------------------------------
# builders: copies and conversions
# --------------------------------------------------------------------------------------------

def build_astype(ctx: BuildContext) -> Any:
    _reject(ctx, "order", "casting", "subok")
    return ctx.to(ctx.tensor("a"), np.dtype(ctx.static("dtype")))


def build_copy(ctx: BuildContext) -> Any:
    _reject(ctx, "order", "subok")
    return ctx.call(torch.clone, ctx.tensor("a"))


def build_real(ctx: BuildContext) -> Any:
    return ctx.call(torch.real, ctx.tensor("val"))


def build_imag(ctx: BuildContext) -> Any:
    if _asarray(ctx.eager["val"]).dtype.kind != "c":
        return ctx.call(torch.zeros_like, ctx.tensor("val"))  # torch.imag refuses real tensors
    return ctx.call(torch.imag, ctx.tensor("val"))


def build_asarray(ctx: BuildContext) -> Any:
    want = ctx.static("dtype")
    x = ctx.tensor("a")
    if want is not None and np.dtype(want) != _asarray(ctx.eager["a"]).dtype:
        return ctx.to(x, np.dtype(want))
    return ctx.call(torch.clone, x)


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


def build_fill_method(ctx: BuildContext) -> Any:
    dtype = ctx.result_dtype
    value = ctx.eager["value"]
    if isinstance(value, (bool, int, float)) and not _derived(ctx.params["value"]):
        return ctx.call(torch.full_like, ctx.tensor("a"), _asarray(value).astype(dtype).item())
    filled = ctx.call(torch.broadcast_to, ctx.tensor("value", dtype), np.shape(ctx.result))
    return ctx.call(torch.clone, filled)


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
    kind: str  # "ufunc" | "function" | "method"


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


_DISPLAY: dict[Any, str] = {}


def _display(fn: Any) -> str:
    """How the graph view spells a torch target (``torch.linalg.inv``, ``F.pad``, ``ln.interp``); cached,
    since every recorded node asks."""
    text = _DISPLAY.get(fn)
    if text is None:
        text = _DISPLAY[fn] = _display_uncached(fn)
    return text


def _display_uncached(fn: Any) -> str:
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


_UFUNCS: dict[str, Any] = {
    "absolute": torch.abs, "add": torch.add, "arccos": torch.acos, "arccosh": torch.acosh,
    "arcsin": torch.asin, "arcsinh": torch.asinh, "arctan": torch.atan, "arctan2": torch.atan2,
    "arctanh": torch.atanh,
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
    "cbrt": torch_impl.cbrt, "conjugate": torch.conj_physical, "fabs": torch.abs,
    "heaviside": torch.heaviside,
    "float_power": torch.float_power, "gcd": torch.gcd, "lcm": torch.lcm, "nextafter": torch.nextafter,
}
# ufuncs whose builder is not a plain elementwise call: (builder, torch op shown).
_SPECIAL_UFUNCS: dict[str, tuple[Callable[[BuildContext], Any], str]] = {
    "divmod": (build_divmod, "torch.floor_divide+remainder"),
    "modf": (multi_output(torch_impl.modf), "ln.modf"),
    "frexp": (multi_output(torch.frexp), "torch.frexp"),
    "ldexp": (build_ldexp, "torch.mul+pow"),
}


def _ufunc(uf: np.ufunc, build: Callable[[BuildContext], Any], torch_name: str) -> None:
    UFUNC_ROWS[uf] = Row(uf, f"np.{uf.__name__}", torch_name, build,
                         tuple(f"x{i}" for i in range(uf.nin)) + ("out",),
                         uf.__name__ in LEAPP_NAMES["ufuncs"], "ufunc")


for _name, _torch_fn in _UFUNCS.items():
    _ufunc(getattr(np, _name), elementwise(_torch_fn), _display(_torch_fn))
for _name, (_build, _torch_name) in _SPECIAL_UFUNCS.items():
    _ufunc(getattr(np, _name), _build, _torch_name)

# ufunc.reduce calls that ndarray methods make internally (x.prod(), x.all()) map to reductions.
REDUCE_UFUNCS = {np.add: "sum", np.multiply: "prod", np.maximum: "max", np.minimum: "min",
                 np.logical_and: "all", np.logical_or: "any"}


def _fn(func: Any, names: str, build: Callable[[BuildContext], Any], torch_name: str,
        display: str | None = None) -> None:
    """A function row; ``display`` spells submodule functions (np.linalg.norm), which LEAPP never records."""
    numpy_name = display or f"np.{func.__name__}"
    leapp = func.__name__ in LEAPP_NAMES["functions"] and display is None
    FUNCTION_ROWS[func] = Row(func, numpy_name, torch_name, build, tuple(names.split()), leapp, "function")


_REDUCE = "a axis dtype out keepdims initial where"
_QUANT = "a q axis out overwrite_input method keepdims"
_fn(np.sum, _REDUCE, reduction(torch.sum), "torch.sum")
_fn(np.prod, _REDUCE, reduction(torch.prod, single_dim=True), "torch.prod")
_fn(np.mean, "a axis dtype out keepdims where", reduction(torch.mean, float_for_ints=True), "torch.mean")
_fn(np.std, "a axis dtype out ddof keepdims where", reduction(torch.std, float_for_ints=True, ddof=True),
    "torch.std")
_fn(np.var, "a axis dtype out ddof keepdims where", reduction(torch.var, float_for_ints=True, ddof=True),
    "torch.var")
for _func, _torch_fn in ((np.max, torch.amax), (np.min, torch.amin), (np.amax, torch.amax),
                         (np.amin, torch.amin), (np.all, torch.all), (np.any, torch.any)):
    _fn(_func, "a axis out keepdims initial where", reduction(_torch_fn, values_only=True),
        _display(_torch_fn))
_fn(np.ptp, "a axis out keepdims", build_ptp, "torch.amax-amin")
_fn(np.median, "a axis out overwrite_input keepdims", quantile(None), "torch.quantile")
_fn(np.quantile, _QUANT, quantile(1.0), "torch.quantile")
_fn(np.percentile, _QUANT, quantile(100.0), "torch.quantile")
_fn(np.average, "a axis weights returned keepdims", build_average, "torch.mean / sum")
_fn(np.argmax, "a axis out keepdims", arg_reduction(torch.argmax), "torch.argmax")
_fn(np.argmin, "a axis out keepdims", arg_reduction(torch.argmin), "torch.argmin")
_fn(np.cumsum, "a axis dtype out", cumulative(torch.cumsum), "torch.cumsum")
_fn(np.cumprod, "a axis dtype out", cumulative(torch.cumprod), "torch.cumprod")
_fn(np.diff, "a n axis prepend append", build_diff, "torch.diff")
_fn(np.reshape, "a shape order", build_reshape_to_result, "torch.reshape")
_fn(np.ravel, "a order", build_reshape_to_result, "torch.reshape")
_fn(np.transpose, "a axes", build_transpose, "torch.permute")
_fn(np.swapaxes, "a axis1 axis2", build_swapaxes, "torch.swapaxes")
_fn(np.moveaxis, "a source destination", build_moveaxis, "torch.movedim")
_fn(np.squeeze, "a axis", build_squeeze, "torch.squeeze")
_fn(np.expand_dims, "a axis", build_expand_dims, "torch.unsqueeze")
for _func in (np.atleast_1d, np.atleast_2d, np.atleast_3d):
    _fn(_func, "a", build_reshape_to_result, "torch.reshape")
_fn(np.broadcast_to, "array shape subok", build_broadcast_to, "torch.broadcast_to")
_fn(np.tile, "A reps", build_tile, "torch.tile")
_fn(np.repeat, "a repeats axis", build_repeat, "torch.repeat_interleave")
_fn(np.flip, "m axis", build_flip, "torch.flip")
_fn(np.fliplr, "m", flip_axis(1), "torch.flip")
_fn(np.flipud, "m", flip_axis(0), "torch.flip")
_fn(np.roll, "a shift axis", build_roll, "torch.roll")
_fn(np.rot90, "m k axes", build_rot90, "torch.rot90")
_fn(np.concatenate, "arrays axis out dtype casting", build_concatenate, "torch.cat")
_fn(np.stack, "arrays axis out dtype casting", build_stack, "torch.stack")
_fn(np.vstack, "tup dtype casting", sequence_join(torch.vstack), "torch.vstack")
_fn(np.hstack, "tup dtype casting", sequence_join(torch.hstack), "torch.hstack")
_fn(np.dstack, "tup", sequence_join(torch.dstack), "torch.dstack")
_fn(np.column_stack, "tup", sequence_join(torch.column_stack), "torch.column_stack")
_fn(np.append, "arr values axis", build_append, "torch.cat")
_fn(np.split, "ary indices_or_sections axis", build_split, "torch.tensor_split")
_fn(np.array_split, "ary indices_or_sections axis", build_split, "torch.tensor_split")
_fn(np.where, "condition x y", build_where, "torch.where")
_fn(np.nonzero, "a", build_nonzero, "torch.nonzero")
_fn(np.argwhere, "a", build_argwhere, "torch.argwhere")
_fn(np.sort, "a axis kind order stable", build_sort, "torch.sort")
_fn(np.argsort, "a axis kind order stable", build_argsort, "torch.argsort")
_fn(np.searchsorted, "a v side sorter", build_searchsorted, "torch.searchsorted")
_fn(np.take, "a indices axis out mode", build_take, "getitem")
_fn(np.take_along_axis, "arr indices axis", build_take_along_axis, "torch.take_along_dim")
_fn(np.clip, "a a_min a_max out min max", build_clip, "torch.clamp")
_fn(np.round, "a decimals out", build_round, "torch.round")
_fn(np.around, "a decimals out", build_round, "torch.round")
_fn(np.fix, "x out", build_fix, "torch.trunc")
_fn(np.nan_to_num, "x copy nan posinf neginf", build_nan_to_num, "torch.nan_to_num")
_fn(np.isclose, "a b rtol atol equal_nan", build_isclose, "torch.le/abs/isfinite")
_fn(np.sinc, "x", build_sinc, "torch.sinc")
_fn(np.dot, "a b out", build_dot, "torch.matmul")
_fn(np.inner, "a b", build_inner, "torch.inner")
_fn(np.vdot, "a b", build_vdot, "torch.vdot")
_fn(np.outer, "a b out", build_outer, "torch.mul")
_fn(np.tensordot, "a b axes", build_tensordot, "torch.tensordot")
_fn(np.einsum, "subscripts *operands", build_einsum, "torch.einsum")
_fn(np.trace, "a offset axis1 axis2 dtype out", build_trace, "torch.diagonal+sum")
_fn(np.diagonal, "a offset axis1 axis2", build_diagonal, "torch.diagonal")
_fn(np.diag, "v k", build_diag, "torch.diag")
_fn(np.tril, "m k", triangle(torch.tril), "torch.tril")
_fn(np.triu, "m k", triangle(torch.triu), "torch.triu")
_fn(np.zeros_like, "a dtype order subok shape", like_creation("zeros"), "torch.zeros_like")
_fn(np.ones_like, "a dtype order subok shape", like_creation("ones"), "torch.ones_like")
_fn(np.empty_like, "a dtype order subok shape", like_creation("zeros"), "torch.zeros_like")
_fn(np.full_like, "a fill_value dtype order subok shape", like_creation("full"), "torch.full_like")
_fn(np.cross, "a b axisa axisb axisc axis", build_cross, "torch.linalg.cross")
_fn(np.linalg.norm, "x ord axis keepdims", build_norm, "torch.linalg.vector_norm / matrix_norm",
    "np.linalg.norm")
_fn(np.linalg.vector_norm, "x axis keepdims ord", build_vector_norm, "torch.linalg.vector_norm",
    "np.linalg.vector_norm")
_fn(np.linalg.matrix_norm, "x keepdims ord", build_matrix_norm, "torch.linalg.matrix_norm",
    "np.linalg.matrix_norm")
_fn(np.linalg.inv, "a", linalg_unary(torch.linalg.inv), "torch.linalg.inv", "np.linalg.inv")
_fn(np.linalg.det, "a", linalg_unary(torch.linalg.det), "torch.linalg.det", "np.linalg.det")
_fn(np.linalg.solve, "a b", build_solve, "torch.linalg.solve", "np.linalg.solve")
for _name, _torch_fn, _many in (("fft", torch.fft.fft, False), ("ifft", torch.fft.ifft, False),
                                ("rfft", torch.fft.rfft, False), ("irfft", torch.fft.irfft, False),
                                ("fft2", torch.fft.fft2, True), ("ifft2", torch.fft.ifft2, True),
                                ("rfft2", torch.fft.rfft2, True), ("irfft2", torch.fft.irfft2, True),
                                ("fftn", torch.fft.fftn, True), ("ifftn", torch.fft.ifftn, True),
                                ("rfftn", torch.fft.rfftn, True), ("irfftn", torch.fft.irfftn, True)):
    _fn(getattr(np.fft, _name), "a s axes norm out" if _many else "a n axis norm out",
        fft_op(_torch_fn, many=_many), _display(_torch_fn), f"np.fft.{_name}")
_fn(np.fft.fftshift, "x axes", fft_shift(torch.fft.fftshift), "torch.fft.fftshift", "np.fft.fftshift")
_fn(np.fft.ifftshift, "x axes", fft_shift(torch.fft.ifftshift), "torch.fft.ifftshift", "np.fft.ifftshift")
_fn(np.pad, "array pad_width mode", build_pad, "F.pad / index_select")
_fn(np.interp, "x xp fp left right period", build_interp, "ln.interp")
_fn(np.linspace, "start stop num endpoint retstep dtype axis", build_linspace, "torch.arange*step+start")
_fn(np.copy, "a order subok", build_copy, "torch.clone")
_fn(np.real, "val", build_real, "torch.real")
_fn(np.imag, "val", build_imag, "torch.imag")
# Elementwise functions that are also ufuncs: np.abs(x) reaches the ufunc table directly.

# Conversions reached through the tracer's own wrappers of np.array/np.asarray (see trace.py).
CONVERSION_ROWS = {
    # leapp.start patches np.asarray/np.array, so LEAPP 0.7.2 records these (docs/leapp-0.7.2-behaviour.md).
    "asarray": Row("asarray", "np.asarray", "torch.clone / .to", build_asarray, ("a", "dtype"), True,
                   "function"),
    "array": Row("array", "np.array", "torch.clone / .to", build_asarray, ("a", "dtype"), True, "function"),
    "array_of_values": Row("array_of_values", "np.array([...])", "torch.cat+reshape", build_stack_of_values,
                           ("object", "dtype"), False, "function"),
}


def _method(name: str, names: str, build: Callable[[BuildContext], Any], torch_name: str) -> None:
    METHOD_ROWS[name] = Row(name, f"ndarray.{name}", torch_name, build, tuple(names.split()),
                            name in LEAPP_NAMES["array methods"], "method")


for _mname, _func in [("sum", np.sum), ("prod", np.prod), ("mean", np.mean), ("std", np.std), ("var", np.var),
                      ("max", np.max), ("min", np.min), ("all", np.all), ("any", np.any),
                      ("argmax", np.argmax), ("argmin", np.argmin), ("cumsum", np.cumsum),
                      ("cumprod", np.cumprod), ("swapaxes", np.swapaxes), ("squeeze", np.squeeze),
                      ("clip", np.clip), ("round", np.round), ("nonzero", np.nonzero),
                      ("diagonal", np.diagonal), ("trace", np.trace), ("dot", np.dot),
                      ("argsort", np.argsort), ("copy", np.copy)]:
    _row = FUNCTION_ROWS[_func]
    _method(_mname, " ".join(_row.names), _row.build, _row.torch)
_method("reshape", "a shape order", build_reshape_to_result, "torch.reshape")
_method("flatten", "a order", build_reshape_to_result, "torch.reshape")
_method("ravel", "a order", build_reshape_to_result, "torch.reshape")
_method("transpose", "a axes", build_transpose, "torch.permute")
_method("T", "a", build_transpose, "torch.permute")
_method("astype", "a dtype order casting subok copy", build_astype, "Tensor.to")
_method("fill", "a value", build_fill_method, "torch.full_like")
_method("sort", "a axis kind order", build_sort, "torch.sort")
_method("real", "val", build_real, "torch.real")
_method("imag", "val", build_imag, "torch.imag")


def all_rows() -> list[Row]:
    """Every row of the lookup, for the parity tests and the docs."""
    return [*UFUNC_ROWS.values(), *FUNCTION_ROWS.values(), *CONVERSION_ROWS.values(), *METHOD_ROWS.values()]
