"""Builders for products, contractions, diagonals, triangles, norms and np.linalg."""

from __future__ import annotations

import operator
from typing import Any, Callable

import numpy as np
import torch

from .context import _BOOL, _I64, BuildContext, Unsupported, _asarray
from .normalize import _contract, _keepdims, _static_int, norm_axes
from .row import reads


@reads("a b")
def build_dot(ctx: BuildContext) -> Any:
    dtype = _double(ctx.result_dtype)
    a, b = _asarray(ctx.eager["a"]), _asarray(ctx.eager["b"])
    ta, tb = ctx.tensor("a", dtype), ctx.tensor("b", dtype)
    if a.ndim == 0 or b.ndim == 0:
        return ctx.call(torch.mul, ta, tb)
    if a.ndim <= 2 and b.ndim <= 2:
        return _contract(ctx, torch.matmul, [ta, tb])
    return _contract(ctx, torch.tensordot, [ta, tb], dims=([a.ndim - 1], [max(b.ndim - 2, 0)]))


@reads("a b")
def build_inner(ctx: BuildContext) -> Any:
    dtype = ctx.result_dtype
    return _contract(ctx, torch.inner, [ctx.tensor("a", dtype), ctx.tensor("b", dtype)])


@reads("a b")
def build_vdot(ctx: BuildContext) -> Any:
    dtype = ctx.result_dtype
    a = ctx.call(torch.reshape, ctx.tensor("a", dtype), (-1,))
    b = ctx.call(torch.reshape, ctx.tensor("b", dtype), (-1,))
    if dtype.kind in "fc":
        return ctx.call(torch.vdot, a, b)
    return _contract(ctx, torch.sum, [ctx.call(torch.mul, a, b)])


@reads("a b")
def build_outer(ctx: BuildContext) -> Any:
    dtype = ctx.result_dtype
    a = ctx.call(torch.reshape, ctx.tensor("a", dtype), (-1, 1))
    b = ctx.call(torch.reshape, ctx.tensor("b", dtype), (1, -1))
    return ctx.call(torch.mul, a, b)


@reads("a b axes")
def build_tensordot(ctx: BuildContext) -> Any:
    dtype = ctx.result_dtype
    axes = _static_int(ctx.static("axes", 2))
    if isinstance(axes, tuple):
        axes = tuple(list(a) if isinstance(a, tuple) else [a] for a in axes)
    return _contract(ctx, torch.tensordot, [ctx.tensor("a", dtype), ctx.tensor("b", dtype)], dims=axes)


@reads("subscripts operands dtype casting optimize")
def build_einsum(ctx: BuildContext) -> Any:
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


@reads("a offset axis1 axis2 dtype")
def build_trace(ctx: BuildContext) -> Any:
    arr = _asarray(ctx.eager["a"])
    d1, d2 = norm_axes((ctx.static("axis1", 0), ctx.static("axis2", 1)), arr.ndim)
    want = np.dtype(ctx.static("dtype")) if ctx.given("dtype") else None
    diag = ctx.call(torch.diagonal, ctx.tensor("a", want), int(ctx.static("offset", 0)), d1, d2)
    return ctx.call(torch.sum, diag, -1)


@reads("a offset axis1 axis2")
def build_diagonal(ctx: BuildContext) -> Any:
    arr = _asarray(ctx.eager["a"])
    d1, d2 = norm_axes((ctx.static("axis1", 0), ctx.static("axis2", 1)), arr.ndim)
    return ctx.call(torch.diagonal, ctx.tensor("a"), int(ctx.static("offset", 0)), d1, d2)


@reads("v k")
def build_diag(ctx: BuildContext) -> Any:
    return ctx.call(torch.diag, ctx.tensor("v"), int(ctx.static("k", 0)))


def triangle(torch_fn: Any) -> Callable[[BuildContext], Any]:
    """tril/triu; NumPy broadcasts a 1-D input to a square matrix first."""

    @reads("m k")
    def build(ctx: BuildContext) -> Any:
        x = ctx.tensor("m")
        if np.ndim(ctx.eager["m"]) < 2:
            x = ctx.call(torch.broadcast_to, x, np.shape(ctx.result))
        return ctx.call(torch_fn, x, int(ctx.static("k", 0)))

    return build



@reads("a b axisa axisb axisc axis")
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


@reads("x ord axis keepdims")
def build_norm(ctx: BuildContext) -> Any:
    return _norm(ctx, "x", ctx.static("ord"), ctx.static("axis"), _keepdims(ctx), matrix=None)


@reads("x ord axis keepdims")
def build_vector_norm(ctx: BuildContext) -> Any:
    return _norm(ctx, "x", ctx.static("ord", 2), ctx.static("axis"), _keepdims(ctx), matrix=False)


@reads("x ord keepdims")
def build_matrix_norm(ctx: BuildContext) -> Any:
    return _norm(ctx, "x", ctx.static("ord", "fro"), (-2, -1), _keepdims(ctx), matrix=True)


def linalg_unary(torch_fn: Any, complex_differs: bool = False) -> Callable[[BuildContext], Any]:
    """np.linalg.inv/det. ``complex_differs``: torch's complex kernel differs from NumPy's LAPACK result on
    infinite entries (det: nan+nanj where NumPy gives -inf+infj), so complex input is refused."""

    @reads("a")
    def build(ctx: BuildContext) -> Any:
        if complex_differs and ctx.result_dtype.kind == "c":
            raise Unsupported(f"torch's complex {torch_fn.__name__.removeprefix('linalg_')} differs from NumPy's "
                              "on infinite entries")
        return ctx.call(torch_fn, ctx.tensor("a", _double(ctx.result_dtype)))

    return build


@reads("a b")
def build_solve(ctx: BuildContext) -> Any:
    """NumPy 2 treats ``b`` as a stack of vectors only when it is 1-D; torch also when
    ``b.ndim == a.ndim - 1``, so such a ``b`` is broadcast to a's batch to keep it a matrix."""
    dtype = _double(ctx.result_dtype)
    a, b = _asarray(ctx.eager["a"]), _asarray(ctx.eager["b"])
    ta, tb = ctx.tensor("a", dtype), ctx.tensor("b", dtype)
    if b.ndim > 1 and b.ndim == a.ndim - 1:
        tb = ctx.call(torch.broadcast_to, tb, a.shape[:-2] + b.shape)
    return ctx.call(torch.linalg.solve, ta, tb)


@reads("x1 x2")
def build_linalg_matmul(ctx: BuildContext) -> Any:
    dtype = ctx.result_dtype
    return _contract(ctx, torch.matmul, [ctx.tensor("x1", dtype), ctx.tensor("x2", dtype)])


@reads("x offset dtype")
def build_linalg_trace(ctx: BuildContext) -> Any:
    """np.linalg.trace: the sum of the diagonals of the last two axes."""
    want = np.dtype(ctx.static("dtype")) if ctx.given("dtype") else None
    diag = ctx.call(torch.diagonal, ctx.tensor("x", want), int(ctx.static("offset", 0)), -2, -1)
    return ctx.call(torch.sum, diag, -1)


@reads("x offset")
def build_linalg_diagonal(ctx: BuildContext) -> Any:
    return ctx.call(torch.diagonal, ctx.tensor("x"), int(ctx.static("offset", 0)), -2, -1)


def vecdot(first: str, second: str) -> Callable[[BuildContext], Any]:
    """np.vecdot (a ufunc) / np.linalg.vecdot: ``sum(conj(x1) * x2)`` over ``axis`` of the broadcast operands."""

    @reads(f"{first} {second} axis")
    def build(ctx: BuildContext) -> Any:
        dtype = ctx.result_dtype
        ndim = max(np.ndim(ctx.eager[first]), np.ndim(ctx.eager[second]))
        axis = int(ctx.static("axis", -1))
        dim = axis if axis < 0 else axis - ndim
        work = _I64 if dtype == _BOOL else dtype
        a, b = ctx.tensor(first, work), ctx.tensor(second, work)
        if dtype.kind == "c":
            a = ctx.call(torch.conj_physical, a)
        node = ctx.call(torch.sum, ctx.call(torch.mul, a, b), dim)
        return ctx.call(torch.ne, node, 0) if dtype == _BOOL else node

    return build


def _float_input(ctx: BuildContext, name: str) -> Any:
    """A linalg input in the dtype NumPy computes in: double precision (numpy.linalg computes float32 and complex64
    in float64 and complex128 and casts the results back; integers as float64). A float32 pinv computed in float32
    inverts a singular value NumPy cuts (1e-7 against NumPy's 1e-16 below the 1e-15 cutoff): off by 2e5 on a
    singular Jacobian, found by an exploration session."""
    return ctx.tensor(name, _double(_asarray(ctx.eager[name]).dtype))


def _double(dtype: np.dtype) -> np.dtype:
    """The dtype numpy.linalg computes an input of ``dtype`` in (the graph's results are cast back to NumPy's result
    dtype by the session, as for any call)."""
    return _COMPLEX128 if dtype.kind == "c" else _FLOAT64


_FLOAT64, _COMPLEX128 = np.dtype(np.float64), np.dtype(np.complex128)



def _pair(ctx: BuildContext, node: Any, count: int) -> list[Any]:
    return [ctx.call(operator.getitem, node, i) for i in range(count)]


@reads("a upper")
def build_cholesky(ctx: BuildContext) -> Any:
    return ctx.call(torch.linalg.cholesky, _float_input(ctx, "a"), upper=bool(ctx.static("upper", False)))


@reads("a UPLO")
def build_eigh(ctx: BuildContext) -> list[Any]:
    """(eigenvalues, eigenvectors): both LAPACK's syevd/heevd, so the eigenvector signs agree with NumPy."""
    return _pair(ctx, ctx.call(torch.linalg.eigh, _float_input(ctx, "a"), UPLO=ctx.static("UPLO", "L")), 2)


@reads("a UPLO")
def build_eigvalsh(ctx: BuildContext) -> Any:
    return ctx.call(torch.linalg.eigvalsh, _float_input(ctx, "a"), UPLO=ctx.static("UPLO", "L"))


@reads("a n")
def build_matrix_power(ctx: BuildContext) -> Any:
    if ctx.result_dtype == _BOOL:
        raise Unsupported("torch has no CPU kernel for bool matrix_power")
    return ctx.call(torch.linalg.matrix_power, ctx.tensor("a"), int(ctx.static("n")))


@reads("A tol hermitian rtol")
def build_matrix_rank(ctx: BuildContext) -> Any:
    tol, rtol = ctx.static("tol"), ctx.static("rtol")
    if np.ndim(tol) or np.ndim(rtol):
        raise Unsupported("matrix_rank with a tolerance per matrix")
    x = _float_input(ctx, "A")
    return ctx.call(torch.linalg.matrix_rank, x, atol=None if tol is None else float(tol),
                    rtol=None if rtol is None else float(rtol), hermitian=bool(ctx.static("hermitian", False)))


@reads("a rcond hermitian rtol")
def build_pinv(ctx: BuildContext) -> Any:
    """NumPy's cutoff rule: ``rcond`` (default 1e-15), or ``rtol`` (None: max(M, N) * eps) times the
    largest singular value; torch.linalg.pinv's ``rtol`` is the same rule."""
    arr = _asarray(ctx.eager["a"])
    rcond, rtol = ctx.static("rcond"), ctx.static("rtol", np._NoValue)
    dtype = ctx.result_dtype
    if rcond is None:
        rcond = 1e-15 if rtol is np._NoValue else (
            max(arr.shape[-2:]) * np.finfo(dtype).eps if rtol is None else rtol)
    # a cutoff per matrix broadcasts against the batch, as in NumPy
    cutoff = float(rcond) if np.ndim(rcond) == 0 else ctx.constant(np.asarray(rcond, dtype=np.finfo(dtype).dtype))
    return ctx.call(torch.linalg.pinv, ctx.tensor("a", _double(dtype)), rtol=cutoff,
                    hermitian=bool(ctx.static("hermitian", False)))


@reads("a mode")
def build_qr(ctx: BuildContext) -> Any:
    mode = ctx.static("mode", "reduced")
    if mode not in ("reduced", "complete", "r"):
        raise Unsupported(f"qr mode={mode!r}")
    node = ctx.call(torch.linalg.qr, _float_input(ctx, "a"), mode=mode)
    return ctx.call(operator.getitem, node, 1) if mode == "r" else _pair(ctx, node, 2)


@reads("a")
def build_slogdet(ctx: BuildContext) -> list[Any]:
    return _pair(ctx, ctx.call(torch.linalg.slogdet, _float_input(ctx, "a")), 2)


@reads("a full_matrices compute_uv hermitian")
def build_svd(ctx: BuildContext) -> Any:
    if ctx.static("hermitian", False):
        raise Unsupported("svd hermitian=True (NumPy takes an eigh route whose signs torch does not follow)")
    x = _float_input(ctx, "a")
    if not ctx.static("compute_uv", True):
        return ctx.call(torch.linalg.svdvals, x)
    return _pair(ctx, ctx.call(torch.linalg.svd, x, full_matrices=bool(ctx.static("full_matrices", True))), 3)


@reads("x")
def build_svdvals(ctx: BuildContext) -> Any:
    return ctx.call(torch.linalg.svdvals, _float_input(ctx, "x"))
