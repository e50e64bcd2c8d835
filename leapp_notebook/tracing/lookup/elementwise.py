"""Builders for ufuncs: operands cast to NumPy's loop dtypes, integer division by zero, multi-output ufuncs."""

from __future__ import annotations

import operator
from typing import Any, Callable

import numpy as np
import torch

from .context import _BOOL, BuildContext, Unsupported, as_float, in_float_range
from .normalize import _X, _contract, _loop_dtypes
from .row import reads

# torch ops that take a Python scalar as their second operand (others get a 0-d tensor constant).
_SCALAR_OK = frozenset({torch.add, torch.sub, torch.mul, torch.div, torch.pow, torch.remainder, torch.fmod,
                        torch.floor_divide, torch.eq, torch.ne, torch.lt, torch.le, torch.gt, torch.ge,
                        torch.bitwise_and, torch.bitwise_or, torch.bitwise_xor})
# torch ops without bool kernels whose NumPy bool loop is the identity.
_BOOL_IDENTITY = frozenset({torch.abs, torch.ceil, torch.floor, torch.trunc})
# NumPy's integer division by zero gives 0 (with a warning); torch raises.
_INT_DIVISION = frozenset({torch.floor_divide, torch.remainder, torch.fmod})


_NUMBERS = (float, int, bool)


def _ufunc_operands(ctx: BuildContext, scalars_ok: bool, loop: tuple[np.dtype, ...], nin: int) -> list[Any]:
    """Graph values for the operands, cast to the loop dtypes; a Python scalar after the first operand stays
    a scalar where the torch op takes one (``x * 0.5``). A Python bool in a loop that is not bool's goes as the int
    NumPy computes with (``x - True`` on ints is ``x - 1``; torch refuses to subtract a bool)."""
    args = []
    params, eager = ctx.params, ctx.eager
    for i in range(nin):
        name = _X[i]
        value = eager[name]
        kind = type(value)
        if i and scalars_ok and (kind is float or kind is int or kind is bool):
            if kind is not bool and loop[i].kind in "fc" and not in_float_range(as_float(value), loop[i]):
                # beyond the loop's float range: NumPy casts the number first (to inf in float16/32: 0 * 2**31 is
                # nan there), where torch would compute with it as it is
                if loop[i].kind == "c":
                    raise Unsupported(f"the Python number {value!r} is beyond {loop[i]}'s range")
                with np.errstate(over="ignore"):
                    value = float(np.float64(as_float(value)).astype(loop[i]))
            args.append(int(value) if kind is bool and loop[i] is not _BOOL else value)
        else:
            args.append(ctx.as_tensor(params[name], value, loop[i]))
    return args


def _int_division(ctx: BuildContext, torch_fn: Any, a: Any, b: Any) -> Any:
    if not isinstance(b, torch.fx.Node):
        return ctx.call(torch_fn, a, b) if b != 0 else ctx.call(torch.zeros_like, a)
    zero = ctx.call(torch.eq, b, 0)
    safe = ctx.call(torch.where, zero, ctx.call(torch.ones_like, b), b)
    return ctx.call(torch.where, zero, ctx.call(torch.zeros_like, safe), ctx.call(torch_fn, a, safe))


# torch has no complex kernel for these (or, for neg, one that loses signed zeros); NumPy applies them to the
# real and imaginary parts.
_COMPLEX_PARTS = frozenset({torch.round, torch.ceil, torch.floor, torch.trunc, torch.neg})
# torch kernels that map a nan first operand to 0 where NumPy keeps nan.
_NAN_DROPPED = frozenset({torch.sign, torch.heaviside})
# torch's complex kernels that differ from NumPy's at signed zeros and infinities (acos(0j) is pi/2 + 0j, NumPy's
# pi/2 - 0j; log1p(-0j), 1/0j, sign(inf j)): refused for complex operands.
_COMPLEX_SPECIAL_VALUES = frozenset({torch.acos, torch.log1p, torch.reciprocal, torch.sign})


def _complex_parts(ctx: BuildContext, torch_fn: Any, z: Any, **kwargs: Any) -> Any:
    real = ctx.call(torch_fn, ctx.call(torch.real, z), **kwargs)
    imag = ctx.call(torch_fn, ctx.call(torch.imag, z), **kwargs)
    return ctx.call(torch.complex, real, imag)


# x > -3 for uint8 x: NumPy 2 compares with the Python int's true value (always True); torch would wrap -3
# into the dtype (253). The comparison's answer is then the same for every element.
# (answer when the int is the second operand and above the range, when below it)
_COMPARISONS = {torch.eq: (False, False), torch.ne: (True, True), torch.lt: (True, False), torch.le: (True, False),
                torch.gt: (False, True), torch.ge: (False, True)}


def _out_of_range_comparison(ctx: BuildContext, torch_fn: Any, loop: np.dtype) -> Any:
    """A comparison with a Python int outside the integer loop dtype's range: a constant bool array of the
    broadcast shape (``None`` when no operand is out of range)."""
    info = np.iinfo(loop)
    for i, name in enumerate(("x0", "x1")):
        value = ctx.eager[name]
        if type(value) is not int or info.min <= value <= info.max:
            continue
        above = value > info.max
        too_big_second, too_small_second = _COMPARISONS[torch_fn]  # the int as first operand swaps sides
        if torch_fn in (torch.eq, torch.ne):
            answer = too_big_second
        elif i == 1:
            answer = too_big_second if above else too_small_second
        else:
            answer = too_small_second if above else too_big_second
        other = ctx.tensor("x1" if i == 0 else "x0")
        shape = np.shape(ctx.result)
        fill = ctx.call(torch.full_like, other, answer, dtype=torch.bool)
        return ctx.call(torch.broadcast_to, fill, shape) if np.shape(ctx.eager["x1" if i == 0 else "x0"]) != shape \
            else fill
    return None


def elementwise(torch_fn: Any) -> Callable[[BuildContext], Any]:
    """A ufunc: operands cast to NumPy's loop dtype so torch computes in the same precision."""
    scalars_ok = torch_fn in _SCALAR_OK
    bool_identity = torch_fn in _BOOL_IDENTITY
    int_division = torch_fn in _INT_DIVISION

    @reads("x0 x1 x2 x3 dtype")
    def build(ctx: BuildContext) -> Any:
        ufunc = ctx.extra["ufunc"]
        nin = ufunc.nin
        eager = ctx.eager
        loop = _loop_dtypes(ufunc, eager, eager.get("dtype"))
        if torch_fn in _COMPARISONS and loop[0].kind in "iu":
            settled = _out_of_range_comparison(ctx, torch_fn, loop[0])
            if settled is not None:
                return settled
        args = _ufunc_operands(ctx, scalars_ok, loop, nin)
        first = loop[0]
        if first is _BOOL and bool_identity:
            node = ctx.call(torch.clone, args[0])
        elif first is _BOOL and torch_fn is torch.matmul:
            node = _contract(ctx, torch.matmul, args)
        elif torch_fn is torch.pow and first.kind in "iu" and type(args[1]) is int and args[1] < 0:
            # NumPy raises for a non-empty array; torch raises even for an empty one (the graph would too)
            raise Unsupported("integers to a negative integer power")
        elif int_division and first.kind in "iu":
            node = _int_division(ctx, torch_fn, *args)
        elif first.kind == "c" and torch_fn in _COMPLEX_PARTS:
            node = _complex_parts(ctx, torch_fn, args[0])
        elif first.kind == "c" and torch_fn in _COMPLEX_SPECIAL_VALUES:
            raise Unsupported(f"torch's complex {ufunc.__name__} differs from NumPy's at signed zeros and "
                              "infinities")
        elif first.kind == "f" and torch_fn is torch.remainder:
            # NumPy gives a zero remainder the divisor's sign (remainder(-0.0, 2) is +0.0); torch keeps a's. Spelled
            # with ops every backend exports (ONNX has no copysign): -0.0 is the negated zero, chosen where the
            # divisor is below zero (a zero or NaN divisor gives NaN, never a zero remainder)
            node = ctx.call(torch.remainder, *args)
            zero = ctx.call(torch.zeros_like, node)
            divisor = args[1]
            if type(divisor) in _NUMBERS:
                signed_zero = ctx.call(torch.neg, zero) if divisor < 0 else zero
            else:
                signed_zero = ctx.call(torch.where, ctx.call(torch.lt, divisor, 0), ctx.call(torch.neg, zero), zero)
            node = ctx.call(torch.where, ctx.call(torch.eq, node, 0), signed_zero, node)
        elif first.kind == "f" and torch_fn in _NAN_DROPPED:
            # torch.sign(nan) and torch.heaviside(nan, h) are 0; NumPy's are nan
            node = ctx.call(torch.where, ctx.call(torch.isnan, args[0]), args[0],
                            ctx.emit("call_function", torch_fn, tuple(args)))
        else:
            node = ctx.emit("call_function", torch_fn, tuple(args))
            if nin == 2 and scalars_ok and type(args[1]) in _NUMBERS and not (
                    first.kind in "iu" and (torch_fn in _COMPARISONS or torch_fn is torch.pow)):
                # The number reached the graph as it is and nothing above looked at its value (the integer
                # comparisons and powers do): the recording holds for any number of its type (replay.with_number)
                ctx.extra["any_number"] = "x1"
        return ctx.to_result_dtype(node, loop[nin])

    return build


@reads("x0 x1 dtype")
def build_divmod(ctx: BuildContext) -> list[Any]:
    loop = _loop_dtypes(np.divmod, ctx.eager, ctx.eager.get("dtype"))
    a, b = _ufunc_operands(ctx, True, loop, 2)
    if loop[0].kind in "iu":
        return [_int_division(ctx, torch.floor_divide, a, b), _int_division(ctx, torch.remainder, a, b)]
    return [ctx.call(torch.floor_divide, a, b), ctx.call(torch.remainder, a, b)]


def multi_output(torch_fn: Any) -> Callable[[BuildContext], list[Any]]:
    """A ufunc with two outputs (modf, frexp): one torch call returning a pair."""

    @reads("x0 dtype")
    def build(ctx: BuildContext) -> list[Any]:
        ufunc = ctx.extra["ufunc"]
        loop = _loop_dtypes(ufunc, ctx.eager, ctx.eager.get("dtype"))
        pair = ctx.call(torch_fn, ctx.tensor("x0", loop[0]))
        return [ctx.call(operator.getitem, pair, 0), ctx.call(operator.getitem, pair, 1)]

    return build


@reads("x0 x1")
def build_ldexp(ctx: BuildContext) -> Any:
    """``x * 2**e``; torch.ldexp raises for negative integer exponents."""
    loop = _loop_dtypes(np.ldexp, ctx.eager)
    x = ctx.tensor("x0", loop[0])
    e = ctx.eager["x1"]
    if isinstance(e, int) and not isinstance(ctx.params["x1"], np.generic):
        return ctx.call(torch.mul, x, 2.0 ** e)
    return ctx.call(torch.mul, x, ctx.call(torch.pow, 2.0, ctx.tensor("x1", loop[0])))
