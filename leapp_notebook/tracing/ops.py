"""The lookup table: which NumPy callable becomes which torch graph builder.

One row per NumPy ufunc, function, ndarray method or conversion. A row names the NumPy callable, the torch
op shown in the graph, its builder (``tracing/lookup/<family>.py``) and the arguments it refuses
(``rejects``: the argument with the values that are harmless, see ``lookup/row.py``). Positional names come
from NumPy's own signature. ``leapp`` on a row says whether LEAPP 0.7.2's lookup records the callable
(``leapp_0_7_2_names.txt``); the ``leapp`` profile records only those rows. docs/lookup.md explains how to
add a row; tests/test_parity.py holds every row to NumPy, tests/test_lookup_signatures.py to its signature.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import torch

from . import torch_impl
from .lookup import creation, fft, linalg, reductions, selection, shape
from .lookup.context import (  # noqa: F401 - the session, array and defect modules use these names
    _NP_TO_TORCH,
    _TORCH_TO_NP,
    BuildContext,
    Unsupported,
    _display,
    numpy_dtype,
    torch_dtype,
)
from .lookup.elementwise import build_divmod, build_ldexp, elementwise, multi_output
from .lookup.normalize import OPERAND_NAMES, norm_axes  # noqa: F401 - array.py binds ufunc operands by these
from .lookup.row import LEAPP_NAMES, Row, positional_names, rejects, renamed

UFUNC_ROWS: dict[np.ufunc, Row] = {}
FUNCTION_ROWS: dict[Any, Row] = {}
METHOD_ROWS: dict[str, Row] = {}

Builder = Callable[[BuildContext], Any]

# ------------------------------------------------------------------ ufuncs (x + y is np.add)
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
_SPECIAL_UFUNCS: dict[str, tuple[Builder, str]] = {
    "divmod": (build_divmod, "torch.floor_divide+remainder"),
    "modf": (multi_output(torch_impl.modf), "ln.modf"),
    "frexp": (multi_output(torch.frexp), "torch.frexp"),
    "ldexp": (build_ldexp, "torch.mul+pow"),
}
# Every ufunc refuses these keyword arguments except for their harmless values; out= never reaches a row
# (in-place forms rebind the out array, tracing/array.py).
_UFUNC_REJECTS = rejects("where=True casting=same_kind order=C,K,A,F subok=True signature")


# Rows exact modulo 2**64 when computed in int64: uint64 operands compute there (lookup/context.py,
# compute_dtype); any other row refuses uint64 (torch has few uint64 kernels: comparisons, //, max, sort).
_UINT64_WRAP = {
    "add", "subtract", "multiply", "negative", "positive", "invert", "bitwise_and", "bitwise_or", "bitwise_xor",
    "left_shift", "equal", "not_equal", "square", "logical_and", "logical_or", "logical_xor", "logical_not",
    "isfinite", "isinf", "isnan", "conjugate", "matmul", "vecdot", "all", "any",
    "sum", "prod", "cumsum", "cumprod", "cumulative_sum", "cumulative_prod", "count_nonzero", "diff",
    "reshape", "ravel", "transpose", "swapaxes", "moveaxis", "squeeze", "expand_dims", "atleast_1d", "atleast_2d",
    "atleast_3d", "broadcast_to", "tile", "repeat", "flip", "fliplr", "flipud", "roll", "rot90", "concatenate",
    "stack", "vstack", "hstack", "dstack", "column_stack", "append", "split", "array_split", "unstack",
    "broadcast_arrays", "meshgrid", "matrix_transpose", "where", "nonzero", "argwhere", "take", "take_along_axis",
    "dot", "inner", "vdot", "outer", "tensordot", "einsum", "trace", "diagonal", "diag", "tril", "triu",
    "copy", "astype", "zeros_like", "ones_like", "empty_like", "full_like", "real", "imag",
    "flatten", "T", "asarray", "array",
}


# Rows that compare values: torch has no complex ordering (NumPy's is lexicographic), so complex is refused.
_ORDERS = {
    "greater", "greater_equal", "less", "less_equal", "maximum", "minimum", "fmax", "fmin", "max", "min", "amax",
    "amin", "argmax", "argmin", "sort", "argsort", "clip", "searchsorted", "ptp", "median", "quantile",
    "percentile", "unique_values", "unique_counts", "unique_inverse", "unique_all",
}


def _uint64(name: str) -> str:
    return "wrap" if name in _UINT64_WRAP else ""


def _ufunc(uf: np.ufunc, build: Builder, torch_name: str) -> None:
    UFUNC_ROWS[uf] = Row(uf, f"np.{uf.__name__}", torch_name, build,
                         tuple(f"x{i}" for i in range(uf.nin)) + ("out",),
                         uf.__name__ in LEAPP_NAMES["ufuncs"], "ufunc", _UFUNC_REJECTS, _uint64(uf.__name__),
                         uf.__name__ in _ORDERS)


for _name, _torch_fn in _UFUNCS.items():
    _ufunc(getattr(np, _name), elementwise(_torch_fn), _display(_torch_fn))
for _name, (_build, _torch_name) in _SPECIAL_UFUNCS.items():
    _ufunc(getattr(np, _name), _build, _torch_name)
# np.vecdot is a generalized ufunc (NumPy 2): its core axis is chosen by axis=.
UFUNC_ROWS[np.vecdot] = Row(np.vecdot, "np.vecdot", "torch.sum(conj*mul)", linalg.vecdot("x0", "x1"),
                            ("x0", "x1", "out"), False, "ufunc", {**_UFUNC_REJECTS, "axes": (), "keepdims": (False,)},
                            "wrap")

# ufunc.reduce calls that ndarray methods make internally (x.prod(), x.all()) map to reductions.
REDUCE_UFUNCS = {np.add: "sum", np.multiply: "prod", np.maximum: "max", np.minimum: "min",
                 np.logical_and: "all", np.logical_or: "any"}


def _fn(func: Any, build: Builder, torch_name: str, refuses: str = "", *, display: str | None = None,
        names: str | None = None) -> None:
    """A function row. Positional names come from NumPy's signature (``names`` only where the tracer binds
    differently); ``refuses`` is the ``rejects`` spec; ``display`` spells submodule functions
    (np.linalg.norm), which LEAPP never records."""
    numpy_name = display or f"np.{func.__name__}"
    leapp = func.__name__ in LEAPP_NAMES["functions"] and display is None
    bound = tuple(names.split()) if names is not None else positional_names(func)
    assert bound is not None, f"{numpy_name} has no signature: pass names="
    short = numpy_name.rsplit(".", 1)[-1]
    FUNCTION_ROWS[func] = Row(func, numpy_name, torch_name, build, bound, leapp, "function", rejects(refuses),
                              _uint64(short), short in _ORDERS)


# ------------------------------------------------------------------ the function table
# NumPy function         builder (tracing/lookup/<family>.py)          torch op shown, refused arguments
_fn(np.sum,                reductions.reduction(torch.sum),                 "torch.sum", "out")
_fn(np.prod,               reductions.reduction(torch.prod, single_dim=True), "torch.prod", "out")
_fn(np.mean,               reductions.reduction(torch.mean, float_for_ints=True), "torch.mean", "out")
# mean= is refused until leapp_defects.py knows that LEAPP 0.7.2 passes it to torch.std, which raises.
_fn(np.std,                reductions.variance(std=True),                   "torch.sum/mul/div/sqrt",
    "out where=True mean")
_fn(np.var,                reductions.variance(std=False),                  "torch.sum/mul/div", "out where=True mean")
for _func, _torch_fn, _refuses in ((np.max, torch.amax, "out"), (np.min, torch.amin, "out"),
                                   (np.amax, torch.amax, "out"), (np.amin, torch.amin, "out"),
                                   (np.all, torch.all, "out"), (np.any, torch.any, "out")):
    _fn(_func,             reductions.reduction(_torch_fn, values_only=True), _display(_torch_fn), _refuses)
_fn(np.ptp,                reductions.build_ptp,                            "torch.amax-amin", "out")
_fn(np.median,             reductions.quantile(None),                       "torch.sort (middle values)",
    "out overwrite_input=False")
_fn(np.quantile,           reductions.quantile(1.0),                        "torch.quantile",
    "out overwrite_input=False weights")
_fn(np.percentile,         reductions.quantile(100.0),                      "torch.quantile",
    "out overwrite_input=False weights")
_fn(np.average,            reductions.build_average,                        "torch.mean / sum", "returned=False")
_fn(np.argmax,             reductions.arg_reduction(torch.argmax),          "torch.argmax", "out")
_fn(np.argmin,             reductions.arg_reduction(torch.argmin),          "torch.argmin", "out")
_fn(np.cumsum,             reductions.cumulative(torch.cumsum),             "torch.cumsum", "out")
_fn(np.cumprod,            reductions.cumulative(torch.cumprod),            "torch.cumprod", "out")
_fn(np.diff,               reductions.build_diff,                           "torch.diff")
_fn(np.reshape,            shape.build_reshape_to_result,                   "torch.reshape", "order=C copy=*")
_fn(np.ravel,              shape.build_reshape_to_result,                   "torch.reshape", "order=C")
_fn(np.transpose,          shape.build_transpose,                           "torch.permute")
_fn(np.swapaxes,           shape.build_swapaxes,                            "torch.swapaxes")
_fn(np.moveaxis,           shape.build_moveaxis,                            "torch.movedim")
_fn(np.squeeze,            shape.build_squeeze,                             "torch.squeeze")
_fn(np.expand_dims,        shape.build_expand_dims,                         "torch.unsqueeze")
for _func in (np.atleast_1d, np.atleast_2d, np.atleast_3d):
    _fn(_func,             shape.build_atleast,                             "torch.reshape")
_fn(np.broadcast_to,       shape.build_broadcast_to,                        "torch.broadcast_to", "subok=*")
_fn(np.tile,               shape.build_tile,                                "torch.tile")
_fn(np.repeat,             shape.build_repeat,                              "torch.repeat_interleave")
_fn(np.flip,               shape.build_flip,                                "torch.flip")
_fn(np.fliplr,             shape.flip_axis(1),                              "torch.flip")
_fn(np.flipud,             shape.flip_axis(0),                              "torch.flip")
_fn(np.roll,               shape.build_roll,                                "torch.roll")
_fn(np.rot90,              shape.build_rot90,                               "torch.rot90")
_fn(np.concatenate,        shape.build_concatenate,                         "torch.cat", "out casting=same_kind")
_fn(np.stack,              shape.build_stack,                               "torch.stack", "out casting=same_kind")
_fn(np.vstack,             shape.sequence_join(torch.vstack),               "torch.vstack", "casting=same_kind")
_fn(np.hstack,             shape.sequence_join(torch.hstack),               "torch.hstack", "casting=same_kind")
_fn(np.dstack,             shape.sequence_join(torch.dstack),               "torch.dstack")
_fn(np.column_stack,       shape.sequence_join(torch.column_stack),         "torch.column_stack")
_fn(np.append,             shape.build_append,                              "torch.cat")
_fn(np.split,              shape.build_split,                               "torch.tensor_split")
_fn(np.array_split,        shape.build_split,                               "torch.tensor_split")
_fn(np.where,              selection.build_where,                           "torch.where")
_fn(np.nonzero,            selection.build_nonzero,                         "torch.nonzero")
_fn(np.argwhere,           selection.build_argwhere,                        "torch.argwhere")
# A sort's values do not depend on the algorithm; argsort's tie order does (docs/lookup.md, approximations).
_fn(np.sort,               selection.build_sort,                            "torch.sort", "kind=*")
_fn(np.argsort,            selection.build_argsort,                         "torch.argsort", "kind=*")
_fn(np.searchsorted,       selection.build_searchsorted,                    "torch.searchsorted")
_fn(np.take,               selection.build_take,                            "getitem", "out")
_fn(np.take_along_axis,    selection.build_take_along_axis,                 "torch.take_along_dim")
_fn(np.clip,               selection.build_clip,                            "torch.clamp", "out")
_fn(np.round,              selection.build_round,                           "torch.round", "out")
_fn(np.around,             selection.build_round,                           "torch.round", "out")
_fn(np.fix,                selection.build_fix,                             "torch.trunc", "out")
_fn(np.nan_to_num,         selection.build_nan_to_num,                      "torch.nan_to_num", "copy=True")
_fn(np.isclose,            selection.build_isclose,                         "torch.le/abs/isfinite")
_fn(np.sinc,               selection.build_sinc,                            "torch.sinc")
_fn(np.dot,                linalg.build_dot,                                "torch.matmul", "out")
_fn(np.inner,              linalg.build_inner,                              "torch.inner")
_fn(np.vdot,               linalg.build_vdot,                               "torch.vdot")
_fn(np.outer,              linalg.build_outer,                              "torch.mul", "out")
_fn(np.tensordot,          linalg.build_tensordot,                          "torch.tensordot")
# The tracer binds einsum's subscripts apart from its operands (NumPy's signature is (*operands, ...)).
_fn(np.einsum,             linalg.build_einsum,                             "torch.einsum",
    "out", names="subscripts *operands")
_fn(np.trace,              linalg.build_trace,                              "torch.diagonal+sum", "out")
_fn(np.diagonal,           linalg.build_diagonal,                           "torch.diagonal")
_fn(np.diag,               linalg.build_diag,                               "torch.diag")
_fn(np.tril,               linalg.triangle(torch.tril),                     "torch.tril")
_fn(np.triu,               linalg.triangle(torch.triu),                     "torch.triu")
_LIKE = "order=* subok=True shape device=cpu"  # order changes the memory layout, never the values
_fn(np.zeros_like,         creation.like_creation("zeros"),                 "torch.zeros_like", _LIKE)
_fn(np.ones_like,          creation.like_creation("ones"),                  "torch.ones_like", _LIKE)
_fn(np.empty_like,         creation.like_creation("zeros", "prototype"),    "torch.zeros_like", _LIKE)
_fn(np.full_like,          creation.like_creation("full"),                  "torch.full_like", _LIKE)
_fn(np.cross,              linalg.build_cross,                              "torch.linalg.cross")
_fn(np.linalg.norm,        linalg.build_norm,                               "torch.linalg.vector_norm / matrix_norm",
    display="np.linalg.norm")
_fn(np.linalg.vector_norm, linalg.build_vector_norm,                        "torch.linalg.vector_norm",
    display="np.linalg.vector_norm")
_fn(np.linalg.matrix_norm, linalg.build_matrix_norm,                        "torch.linalg.matrix_norm",
    display="np.linalg.matrix_norm")
_fn(np.linalg.inv,         linalg.linalg_unary(torch.linalg.inv),           "torch.linalg.inv", display="np.linalg.inv")
_fn(np.linalg.det,         linalg.linalg_unary(torch.linalg.det, complex_differs=True), "torch.linalg.det",
    display="np.linalg.det")
_fn(np.linalg.solve,       linalg.build_solve,                              "torch.linalg.solve",
    display="np.linalg.solve")
for _name, _torch_fn, _many in (("fft", torch.fft.fft, False), ("ifft", torch.fft.ifft, False),
                                ("rfft", torch.fft.rfft, False), ("irfft", torch.fft.irfft, False),
                                ("fft2", torch.fft.fft2, True), ("ifft2", torch.fft.ifft2, True),
                                ("rfft2", torch.fft.rfft2, True), ("irfft2", torch.fft.irfft2, True),
                                ("fftn", torch.fft.fftn, True), ("ifftn", torch.fft.ifftn, True),
                                ("rfftn", torch.fft.rfftn, True), ("irfftn", torch.fft.irfftn, True)):
    _fn(getattr(np.fft, _name), fft.fft_op(_torch_fn, many=_many),               _display(_torch_fn),
        "out", display=f"np.fft.{_name}")
_fn(np.fft.fftshift,       fft.fft_shift(torch.fft.fftshift),               "torch.fft.fftshift",
    display="np.fft.fftshift")
_fn(np.fft.ifftshift,      fft.fft_shift(torch.fft.ifftshift),              "torch.fft.ifftshift",
    display="np.fft.ifftshift")
_fn(np.pad,                shape.build_pad,                                 "F.pad / index_select")
_fn(np.interp,             selection.build_interp,                          "ln.interp")
_fn(np.linspace,           creation.build_linspace,                         "torch.arange*step+start", "device=cpu")
_fn(np.copy,               creation.build_copy,                             "torch.clone", "order=* subok=False")
_fn(np.real,               creation.build_real,                             "torch.real")
_fn(np.imag,               creation.build_imag,                             "torch.imag")
# NumPy 2's Array API namespace (2023.12 and the 2024.12 additions); aliases such as np.concat,
# np.permute_dims and np.pow are the same objects as the rows above.
_fn(np.astype,             creation.astype("x"),                            "Tensor.to", "copy=* device=cpu")
_fn(np.cumulative_sum,     reductions.cumulative_api(torch.cumsum, 0),      "torch.cumsum+cat", "out")
_fn(np.cumulative_prod,    reductions.cumulative_api(torch.cumprod, 1),     "torch.cumprod+cat", "out")
_fn(np.count_nonzero,      reductions.build_count_nonzero,                  "torch.ne+sum")
_fn(np.unstack,            shape.build_unstack,                             "torch.unbind")
_fn(np.broadcast_arrays,   shape.build_broadcast_arrays,                    "torch.broadcast_to", "subok=False")
_fn(np.meshgrid,           shape.build_meshgrid,                            "torch.reshape+broadcast_to", "copy=*")
_fn(np.matrix_transpose,   shape.build_matrix_transpose,                    "torch.transpose")
_fn(np.unique_values,      selection.build_unique_values,                   "torch.unique")
_fn(np.unique_counts,      selection.build_unique_counts,                   "torch.unique")
_fn(np.unique_inverse,     selection.build_unique_inverse,                  "torch.unique")
_fn(np.unique_all,         selection.build_unique_all,                      "torch.unique+scatter_reduce")
for _name, _build, _torch_name in (
        ("matmul", linalg.build_linalg_matmul, "torch.matmul"),
        ("matrix_transpose", shape.build_matrix_transpose, "torch.transpose"),
        ("outer", renamed(linalg.build_outer, x1="a", x2="b"), "torch.mul"),
        ("tensordot", renamed(linalg.build_tensordot, x1="a", x2="b"), "torch.tensordot"),
        ("cross", renamed(linalg.build_cross, x1="a", x2="b"), "torch.linalg.cross"),
        ("vecdot", linalg.vecdot("x1", "x2"), "torch.sum(conj*mul)"),
        ("trace", linalg.build_linalg_trace, "torch.diagonal+sum"),
        ("diagonal", linalg.build_linalg_diagonal, "torch.diagonal"),
        ("cholesky", linalg.build_cholesky, "torch.linalg.cholesky"),
        ("eigh", linalg.build_eigh, "torch.linalg.eigh"),
        ("eigvalsh", linalg.build_eigvalsh, "torch.linalg.eigvalsh"),
        ("matrix_power", linalg.build_matrix_power, "torch.linalg.matrix_power"),
        ("matrix_rank", linalg.build_matrix_rank, "torch.linalg.matrix_rank"),
        ("pinv", linalg.build_pinv, "torch.linalg.pinv"),
        ("qr", linalg.build_qr, "torch.linalg.qr"),
        ("slogdet", linalg.build_slogdet, "torch.linalg.slogdet"),
        ("svd", linalg.build_svd, "torch.linalg.svd"),
        ("svdvals", linalg.build_svdvals, "torch.linalg.svdvals")):
    _fn(getattr(np.linalg, _name), _build, _torch_name, display=f"np.linalg.{_name}")
for _name, _torch_fn in (("hfft", torch.fft.hfft), ("ihfft", torch.fft.ihfft)):
    _fn(getattr(np.fft, _name), fft.fft_op(_torch_fn), _display(_torch_fn), "out", display=f"np.fft.{_name}")
# Elementwise functions that are also ufuncs: np.abs(x) reaches the ufunc table directly.

# ------------------------------------------------------------------ conversions
# Reached through the tracer's own wrappers of np.array/np.asarray (trace.py). leapp.start patches
# np.asarray/np.array, so LEAPP 0.7.2 records these (docs/leapp-0.7.2-behaviour.md).
CONVERSION_ROWS = {
    "asarray": Row("asarray", "np.asarray", "torch.clone / .to", creation.build_asarray, ("a", "dtype"), True,
                   "function", uint64="wrap"),
    "array": Row("array", "np.array", "torch.clone / .to", creation.build_asarray, ("a", "dtype"), True, "function",
                 uint64="wrap"),
    "array_of_values": Row("array_of_values", "np.array([...])", "torch.cat+reshape", creation.build_stack_of_values,
                           ("object", "dtype"), False, "function"),
}


# ------------------------------------------------------------------ ndarray methods
def _method(name: str, build: Builder, torch_name: str, refuses: str = "", *, names: str | None = None) -> None:
    """A method row; ``self`` binds as ``a`` (or the builder's name for it), the rest from NumPy's signature
    of the method (``names`` where there is none: properties, and methods the tracer normalizes)."""
    if names is None:
        params = positional_names(getattr(np.ndarray, name))
        assert params is not None, f"ndarray.{name} has no signature: pass names="
        bound = ("a", *params[1:])
    else:
        bound = tuple(names.split())
    METHOD_ROWS[name] = Row(name, f"ndarray.{name}", torch_name, build, bound,
                            name in LEAPP_NAMES["array methods"], "method", rejects(refuses), _uint64(name),
                            name in _ORDERS)


# Methods computing what a function row computes share its builder and its refused arguments.
for _mname, _func in [("sum", np.sum), ("prod", np.prod), ("mean", np.mean), ("std", np.std), ("var", np.var),
                      ("max", np.max), ("min", np.min), ("all", np.all), ("any", np.any),
                      ("argmax", np.argmax), ("argmin", np.argmin), ("cumsum", np.cumsum),
                      ("cumprod", np.cumprod), ("swapaxes", np.swapaxes), ("squeeze", np.squeeze),
                      ("clip", np.clip), ("round", np.round), ("nonzero", np.nonzero),
                      ("diagonal", np.diagonal), ("trace", np.trace), ("dot", np.dot),
                      ("argsort", np.argsort), ("copy", np.copy)]:
    _row = FUNCTION_ROWS[_func]
    # The method's positional parameters are the function's after ``a`` (x.clip(lo, hi) is np.clip(x, lo, hi),
    # x.dot(other) is np.dot(x, b)): bound by the function's names, as leapp_defects.py reads them.
    _names = _row.names[:len(positional_names(getattr(np.ndarray, _mname)))]
    METHOD_ROWS[_mname] = Row(_mname, f"ndarray.{_mname}", _row.torch, _row.build, _names,
                              _mname in LEAPP_NAMES["array methods"], "method", _row.rejects, _row.uint64,
                              _row.orders)
# TracedArray passes reshape's shape and transpose's axes as one normalized argument.
_method("reshape",   shape.build_reshape_to_result,           "torch.reshape", "order=C copy=*", names="a shape")
_method("flatten",   shape.build_reshape_to_result,           "torch.reshape", "order=C")
_method("ravel",     shape.build_reshape_to_result,           "torch.reshape", "order=C")
_method("transpose", shape.build_transpose,                   "torch.permute", names="a axes")
_method("T",         shape.build_transpose,                   "torch.permute", names="a")
_method("astype",    creation.astype(),                       "Tensor.to", "order=* casting=* subok=* copy=*")
_method("fill",      creation.build_fill_method,              "torch.full_like", names="a value")
_method("sort",      selection.build_sort,                    "torch.sort", "kind=*")
_method("real",      creation.build_real,                     "torch.real", names="val")
_method("imag",      creation.build_imag,                     "torch.imag", names="val")


def all_rows() -> list[Row]:
    """Every row of the lookup, for the parity tests and the docs."""
    return [*UFUNC_ROWS.values(), *FUNCTION_ROWS.values(), *CONVERSION_ROWS.values(), *METHOD_ROWS.values()]
