"""The predicates of the LEAPP 0.7.2 defects catalogue: the torch op LEAPP records for a call, run on tiny
tensors of the call's dtypes (an oracle for dtype and kernel defects), and the checks for the remaining causes.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from . import ops
from .leapp_calls import METHOD_FORWARDS, UNSET, Call, axis_is_tuple, call_operands, dtype_kind, is_int, is_scalar, ndim

# ------------------------------------------------------------------------------------------
# the torch op LEAPP records, run on one-element tensors of the call's dtypes
# ------------------------------------------------------------------------------------------

# LEAPP 0.7.2's NUMPY_UFUNC_TO_TORCH (np.exp2 and np.positive map to lambdas: see "lambda-ufunc").
LEAPP_UFUNCS: dict[str, Any] = {
    "add": torch.add, "subtract": torch.sub, "multiply": torch.mul, "divide": torch.div,
    "floor_divide": torch.floor_divide, "power": torch.pow, "negative": torch.neg, "remainder": torch.remainder,
    "fmod": torch.fmod, "absolute": torch.abs, "sign": torch.sign, "sqrt": torch.sqrt, "square": torch.square,
    "exp": torch.exp, "expm1": torch.expm1, "log": torch.log, "log2": torch.log2, "log10": torch.log10,
    "log1p": torch.log1p, "sin": torch.sin, "cos": torch.cos, "tan": torch.tan, "arcsin": torch.asin,
    "arccos": torch.acos, "arctan": torch.atan, "arctan2": torch.atan2, "hypot": torch.hypot, "sinh": torch.sinh,
    "cosh": torch.cosh, "tanh": torch.tanh, "arcsinh": torch.asinh, "arccosh": torch.acosh,
    "arctanh": torch.atanh, "floor": torch.floor, "ceil": torch.ceil, "trunc": torch.trunc, "rint": torch.round,
    "greater": torch.gt, "greater_equal": torch.ge, "less": torch.lt, "less_equal": torch.le, "equal": torch.eq,
    "not_equal": torch.ne, "maximum": torch.maximum, "minimum": torch.minimum, "matmul": torch.matmul,
    "logical_and": torch.logical_and, "logical_or": torch.logical_or, "logical_xor": torch.logical_xor,
    "logical_not": torch.logical_not, "bitwise_and": torch.bitwise_and, "bitwise_or": torch.bitwise_or,
    "bitwise_xor": torch.bitwise_xor, "invert": torch.bitwise_not, "left_shift": torch.bitwise_left_shift,
    "right_shift": torch.bitwise_right_shift, "isnan": torch.isnan, "isinf": torch.isinf,
    "isfinite": torch.isfinite,
}
# LEAPP wraps Python scalars in torch.tensor(...) for these two (SCALAR_TENSOR_FUNCTIONS).
_TENSOR_SCALARS = {"maximum", "minimum"}

# Python-scalar operands TorchScript rejects in LEAPP's compiled graph (measured): at any position;
# as the first operand; as a first operand that is a bool.
SCALAR_NEVER = frozenset({"hypot", "logical_and", "logical_or", "logical_xor", "arctan2"})
SCALAR_NOT_FIRST = frozenset({"floor_divide", "fmod"})
BOOL_NOT_FIRST = frozenset({"add", "multiply", "divide", "equal", "not_equal", "greater", "greater_equal", "less",
                            "less_equal"})


def _sample(value: Any, *, first: bool = False, wrap: bool = False) -> Any:
    """``value`` as it reaches LEAPP's torch op, as a one-element stand-in with the same dtype and rank."""
    if isinstance(value, np.ndarray):
        dtype = ops._NP_TO_TORCH.get(value.dtype)
        if dtype is None:
            raise _NoDtype
        return torch.ones((1,) * value.ndim, dtype=dtype)
    if isinstance(value, np.generic):
        return _sample(np.asarray(value))
    if isinstance(value, (bool, int, float, complex)):
        if wrap:
            return torch.tensor(value)
        if first:  # TorchScript turns a leading Python number into a wrapped-number tensor
            return torch.tensor(int(value) if isinstance(value, bool) else value)
        return int(value) if isinstance(value, bool) else value  # a bool literal is an int in TorchScript
    if isinstance(value, (list, tuple)):
        return [_sample(v) for v in value]
    return value


def _sized(value: Any) -> Any:
    """A stand-in that keeps which dimensions are 1 (broadcast) and makes the others 2."""
    if isinstance(value, np.ndarray) and value.dtype in ops._NP_TO_TORCH:
        return torch.ones(tuple(min(d, 2) for d in value.shape), dtype=ops._NP_TO_TORCH[value.dtype])
    return _sample(value)


class _NoDtype(Exception):
    pass


def _ufunc_call(call: Call) -> Any:
    uname = call.name[3:]
    fn = LEAPP_UFUNCS[uname]
    operands = call_operands(call)
    wrap = uname in _TENSOR_SCALARS
    return fn(*[_sample(v, first=(i == 0), wrap=wrap) for i, v in enumerate(operands)])


def _only_arrays(value: Any) -> bool:
    return isinstance(value, (list, tuple)) and all(isinstance(v, np.ndarray) for v in value)


def _torch_call(call: Call) -> Any:
    """Run the torch op LEAPP records for ``call`` on one-element samples; raises what torch raises."""
    name = call.name
    p = call.p
    if name in UFUNC_NAMES:
        return _ufunc_call(call)
    if name.startswith("ndarray."):
        name = METHOD_FORWARDS.get(name[8:], (name,))[0]
    if name == "np.clip":
        lo = p.get("a_min", p.get("min"))
        hi = p.get("a_max", p.get("max"))
        return torch.clamp(_sample(p["a"]), _sample(lo), _sample(hi))
    if name == "np.where":
        return torch.where(_sample(p["condition"]), _sample(p["x"]), _sample(p["y"]))
    if name in JOINS:
        return JOINS[name](_sample(list(p.get("arrays", p.get("tup")))))
    if name == "np.dot":
        return torch.matmul(_sample(p["a"]), _sample(p["b"]))
    if name == "np.einsum":  # size-2 stand-ins: torch sums size-1 contractions without checking dtypes
        return torch.einsum(p["subscripts"], *[_sized(v) for v in p["operands"]])
    if name in ("np.argmax", "np.argmin"):
        return (torch.argmax if name == "np.argmax" else torch.argmin)(_sample(p["a"]))
    if name in ("np.sort", "np.argsort"):
        return torch.topk(_sample(p["a"]), 1, dim=-1, largest=False, sorted=True)[0 if name == "np.sort" else 1]
    if name == "np.trace":
        return torch.trace(torch.ones((1, 1), dtype=ops._NP_TO_TORCH[p["a"].dtype]))
    if name in ("np.round", "np.around"):
        decimals = p.get("decimals")  # passed on as decimals= when given at all (0 too)
        sample = _sample(p["a"])
        return torch.round(sample) if decimals is None else torch.round(sample, decimals=int(decimals))
    if name == "np.linspace":
        return torch.linspace(_sample(p["start"]), _sample(p["stop"]), int(p.get("num", 50)))
    raise KeyError(name)


JOINS = {"np.concatenate": torch.cat, "np.stack": torch.stack, "np.vstack": torch.vstack, "np.hstack": torch.hstack}
UFUNC_NAMES = frozenset(f"np.{n}" for n in LEAPP_UFUNCS)
ORACLE_NAMES = UFUNC_NAMES | {"np.clip", "np.where", "np.dot", "np.einsum", "np.argmax", "np.argmin", "np.sort",
                                "np.argsort", "np.trace", "np.round", "np.around", "np.linspace", *JOINS,
                                "ndarray.argmax", "ndarray.argmin"}


def _signature(value: Any) -> Any:
    """What the torch check depends on: dtype and rank of arrays, the type of Python numbers."""
    if type(value) is np.ndarray or isinstance(value, np.ndarray):
        return value.dtype.char + str(value.ndim)
    if isinstance(value, np.generic):
        return ("g", value.dtype.char)
    if isinstance(value, (list, tuple)):
        return tuple(_signature(v) for v in value)
    if isinstance(value, (bool, int, float, complex)):
        return type(value)
    return repr(value) if isinstance(value, str) else type(value)


_TORCH_ANSWERS: dict[Any, tuple[str, str] | None] = {}
_UNKEYED = frozenset({"out", "kind", "axis", "keepdims", "order", "stable"})


def _torch_outcome(call: Call) -> tuple[str, str] | None:
    """("kernel", torch's error) or ("dtype", text) when LEAPP's torch op raises for these dtypes or
    returns another dtype than NumPy; None when it agrees. Cached per argument signature."""
    if call.outcome is not UNSET:
        return call.outcome
    call.outcome = answer = _torch_answer(call)
    return answer


def _torch_answer(call: Call) -> tuple[str, str] | None:
    result = call.result
    if not isinstance(result, (np.ndarray, np.generic)):
        return None
    p = call.p
    if len(p) <= 2 and "x0" in p and result.dtype.kind == "f":
        # Float operands of the result's own dtype, with Python int/float operands (weak in both): torch
        # computes in that dtype too and has the kernels. The common case, answered without a lookup.
        dtype = result.dtype
        a = p["x0"]
        b = p.get("x1", 1.0)
        if (type(a) is np.ndarray and a.dtype == dtype or type(a) is float or type(a) is int) and \
                (type(b) is np.ndarray and b.dtype == dtype or type(b) is float or type(b) is int):
            return None
    if len(p) == 2 and "x1" in p:  # a binary ufunc: spelled out, no helper calls
        a, b = p["x0"], p["x1"]
        key: Any = (call.name, result.dtype.char,
                    (a.dtype.char, a.ndim != 0) if type(a) is np.ndarray else _signature(a),
                    (b.dtype.char, b.ndim != 0) if type(b) is np.ndarray else _signature(b))
    elif _UNKEYED.isdisjoint(p):
        key = (call.name, result.dtype.char, *p, *map(_signature, p.values()))
    else:
        key = (call.name, result.dtype.char, *[(k, _signature(v)) for k, v in p.items() if k not in _UNKEYED])
    if "decimals" in p:  # torch.round with and without decimals= are different kernels
        key = (*key, p["decimals"] is None)
    try:
        return _TORCH_ANSWERS[key]
    except KeyError:
        pass
    except TypeError:  # an unhashable argument: no caching
        key = None
    answer: tuple[str, str] | None
    try:
        got = _torch_call(call)
    except (_NoDtype, KeyError, IndexError, ValueError):
        answer = None
    except (RuntimeError, TypeError, NotImplementedError) as exc:
        text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        answer = ("kernel", f"torch raises \"{text[:120]}\"")
    else:
        want = result.dtype
        have = ops._TORCH_TO_NP.get(got.dtype) if isinstance(got, torch.Tensor) else None
        answer = None if have is None or have == want else \
            ("dtype", f"LEAPP's model returns {have.name} where NumPy gives {want.name}")
    if key is not None:
        _TORCH_ANSWERS[key] = answer
    return answer


def dtype_fix(call: Call) -> str:
    if call.site.endswith("=") and call.site not in ("==", "!=", "<=", ">="):  # o -= c: the target's dtype is NumPy's
        return (f"cast the operand to the target's dtype, o {call.site} c.astype(o.dtype), or assign into the "
                f"target's subscript, o[...] {call.site} c (LEAPP casts what it writes into a subscript)")
    values = call_operands(call) if call.name in UFUNC_NAMES else list(call.p.values())
    if any(isinstance(v, (np.ndarray, np.generic)) and np.ndim(v) == 0 for v in values):
        return ("make the 0-d constant a Python scalar (1.0), which both treat as weakly typed, or cast "
                "explicitly with .astype(...) so both agree")
    return "cast explicitly so both agree: x.astype(np.float64) before the call (or .astype(...) on the result)"


def torch_kernel(call: Call) -> str:
    outcome = _torch_outcome(call)
    return outcome[1] if outcome is not None and outcome[0] == "kernel" else ""


def torch_dtype(call: Call) -> str:
    outcome = _torch_outcome(call)
    if outcome is None or outcome[0] != "dtype":
        return ""
    if call.site.startswith("[]"):
        # o[..., :3] -= c (float32 o, float64 c): LEAPP's __isub__ gives torch's float64, but the augmented
        # assignment writes it back into o's subscript, and that write casts it to o's dtype, NumPy's result
        # (measured: validation passes, error 0). ``o -= c`` keeps torch's dtype and fails.
        return ""
    return outcome[1]


def dtype_depends_on_site(call: Call) -> bool:
    """Whether ``torch_dtype``'s answer for this call's signature reads its call site: torch's dtype differs from
    NumPy's, which an augmented assignment into a subscript repairs (judged on every call, not kept with the
    call's recording template)."""
    outcome = _torch_outcome(call)
    return outcome is not None and outcome[0] == "dtype"


# ------------------------------------------------------------------------------------------
# predicates for the remaining causes
# ------------------------------------------------------------------------------------------

_PY_NUMBERS = (bool, int, float, complex)


def python_scalar_operand(call: Call) -> str:
    p = call.p
    uname = call.name[3:]
    first = type(p.get("x0"))
    if uname in SCALAR_NEVER:
        if first not in _PY_NUMBERS and type(p.get("x1")) not in _PY_NUMBERS:
            return ""
    elif first is not bool and (first not in _PY_NUMBERS or uname not in SCALAR_NOT_FIRST):
        return ""
    for i, value in enumerate(call_operands(call)):
        if is_scalar(value) and (uname in SCALAR_NEVER or i == 0):
            op = LEAPP_UFUNCS[uname].__name__
            return f"the Python {type(value).__name__} {value!r} is operand {i + 1} of torch.{op}"
    return ""


def _join_arguments(call: Call) -> str:
    arrays = call.p.get("arrays", call.p.get("tup"))
    if isinstance(arrays, np.ndarray):
        return "a single array is passed where torch takes a list of tensors"
    if isinstance(arrays, (list, tuple)) and not _only_arrays(arrays):
        return "the sequence holds Python numbers or lists, which TorchScript cannot put in a list of tensors"
    return ""


def _dot_arguments(call: Call) -> str:
    a, b = call.p.get("a"), call.p.get("b")
    if is_scalar(a) or is_scalar(b):
        return "torch.matmul takes no Python number"
    if ndim(a) == 0 or ndim(b) == 0:
        return "torch.matmul needs at least 1-D operands, NumPy's dot multiplies by a 0-d one"
    if ndim(a) >= 2 and ndim(b) >= 3:
        return "np.dot pairs every row of a with every matrix of b; torch.matmul broadcasts the batch dimensions"
    return ""


def rejected_arguments(call: Call) -> str:
    """Arguments LEAPP passes under NumPy's name or position where torch's schema has another."""
    name = call.name
    p = call.p
    if name in ("np.tril", "np.triu"):
        if call.by_keyword("k") is not False:
            return f"k= is passed as a keyword, which torch.{name[3:]} calls diagonal="
        if ndim(p.get("m")) < 2:
            return f"torch.{name[3:]} needs at least 2-D input; NumPy broadcasts a 1-D one"
    elif name == "np.rot90":
        if call.by_keyword("axes") is not False:
            return "axes= is passed as a keyword, which torch.rot90 calls dims="
    elif name == "np.roll":
        spelled = [k for k in ("a", "shift") if call.by_keyword(k) is not False]
        if spelled:  # measured: np.roll(h, shift=-1, axis=0) fails to compile, np.roll(h, -1, axis=0) is faithful
            return " and ".join(f"{k}=" for k in spelled) + " is passed as a keyword, which torch.roll calls " + \
                " and ".join({"a": "input=", "shift": "shifts="}[k] for k in spelled)
    elif name in ("np.round", "np.around"):
        if "decimals" in p and call.by_keyword("decimals") is not True:
            return "decimals is passed positionally, and torch.round takes it only as a keyword"
    elif name == "np.trace":
        extra = [k for k in ("offset", "axis1", "axis2", "out") if k in p]
        if extra:
            return f"torch.trace takes no {', '.join(extra)} argument"
    elif name == "np.tensordot":
        axes = p.get("axes")
        if isinstance(axes, (tuple, list)) and len(axes) == 2 and all(isinstance(v, (int, np.integer)) for v in axes):
            return "axes=(i, j) of single ints is not a valid dims= for TorchScript's tensordot (it needs lists)"
    elif name == "np.linspace":
        extra = [k for k in ("endpoint", "axis", "retstep") if k in p]
        if extra:
            return f"torch.linspace has no {', '.join(extra)} argument"
        for key in ("start", "stop"):
            if isinstance(p.get(key), np.ndarray) and p[key].ndim > 0:
                return "torch.linspace takes 0-d start and stop, NumPy broadcasts arrays"
    elif name == "np.full_like":
        if isinstance(p.get("fill_value"), np.ndarray) and p["fill_value"].ndim > 0:
            return "torch.full_like takes a scalar fill value, NumPy broadcasts an array"
    elif name in JOINS:
        return _join_arguments(call)
    elif name == "np.dot":
        return _dot_arguments(call)
    return ""


def rejected_fix(call: Call) -> str:
    return {
        "np.tril": "pass the diagonal positionally: np.tril(x, -1)",
        "np.triu": "pass the diagonal positionally: np.triu(x, 1)",
        "np.rot90": "pass the axes positionally: np.rot90(x, k, (1, 0))",
        "np.roll": "pass the array and the shift positionally: np.roll(x, -1, axis=0)",
        "np.round": "pass decimals by keyword: np.round(x, decimals=2) (or scale explicitly: "
                    "np.round(x * 100) / 100)",
        "np.around": "pass decimals by keyword: np.around(x, decimals=2) (or scale explicitly: "
                     "np.around(x * 100) / 100)",
        "np.trace": "take the diagonal and sum it: np.sum(np.diagonal(x, offset, axis1, axis2), axis=-1)",
        "np.tensordot": "give the axes as lists: np.tensordot(a, b, axes=([2], [1]))",
        "np.linspace": "build it from 0-d ends: start + (stop - start) * np.arange(num) / (num - 1), or keep "
                       "the defaults of endpoint/axis",
        "np.full_like": "broadcast instead: np.zeros_like(x) + fill",
        "np.dot": "use np.matmul / @ with matching dtypes and explicit shapes, or np.tensordot",
    }.get(call.name, "pass a list of arrays: np.concatenate([a, b], axis=0), with constants made arrays "
                     "(np.full((1,), 1.0, a.dtype))")


def axis_none(call: Call) -> str:
    """torch ops whose dim cannot be None, where LEAPP passes NumPy's axis=None through as dim=None."""
    name = call.name
    p = call.p
    if name in ("np.cumsum", "np.cumprod"):
        if p.get("axis") is None:
            return f"torch.{name[3:]} needs a dim" + (" and gets dim=None" if "axis" in p else "")
        return ""
    if "axis" in p and p["axis"] is None:
        return f"torch.{DIM_TORCH[name]} gets dim=None"
    return ""


DIM_TORCH = {"np.max": "amax", "np.min": "amin", "np.prod": "prod", "np.squeeze": "squeeze", "np.concatenate": "cat"}


def multi_axis(call: Call) -> str:
    """torch ops that take one int dim, where LEAPP passes a tuple (given, or made for keepdims without axis)."""
    p = call.p
    if axis_is_tuple(call):
        return f"torch.{ONE_DIM[call.name]} takes one int dim and gets axis={p['axis']!r}"
    if call.name != "np.expand_dims" and "axis" not in p and p.get("keepdims"):
        return (f"keepdims=True without axis becomes dim=(0, ..., ndim-1), and torch.{ONE_DIM[call.name]} takes "
                "one int dim")
    return ""


ONE_DIM = {"np.prod": "prod", "np.argmax": "argmax", "np.argmin": "argmin", "np.expand_dims": "unsqueeze"}


def multi_axis_fix(call: Call) -> str:
    if call.name == "np.expand_dims":
        return "insert one axis per call: np.expand_dims(np.expand_dims(x, 0), 2), or x[None, :, None]"
    if call.name == "np.prod":
        return "reduce one axis per call: np.prod(np.prod(x, axis=1), axis=0), or reshape first"
    return f"give the axis: np.{call.name[3:]}(x.reshape(-1), axis=0) for the flat index"


def sort_axis_none(call: Call) -> bool:
    return "axis" in call.p and call.p["axis"] is None and ndim(call.p.get("a")) > 1


def stable_argsort(call: Call) -> bool:
    return call.p.get("kind") == "stable" or bool(call.p.get("stable"))


def bitwise_operator(call: Call) -> str:
    """LEAPP's TracedNpArray spells ~ & | ^ as logical_not/and/or/xor."""
    site = call.site
    logical = {"~": "logical_not", "&": "logical_and", "|": "logical_or", "^": "logical_xor"}.get(site)
    if logical is None or call.name != OPERATOR_UFUNC[site]:
        return ""
    if dtype_kind(call.result) != "b":
        return f"x {site} ... is np.{logical} in LEAPP, so it gives bool where NumPy gives the bitwise result"
    if any(is_scalar(v) for v in call_operands(call)):
        return f"x {site} ... is np.{logical} in LEAPP, and torch.{logical} takes no Python number"
    return ""


OPERATOR_UFUNC = {"~": "np.invert", "&": "np.bitwise_and", "|": "np.bitwise_or", "^": "np.bitwise_xor"}


def lambda_ufunc(call: Call) -> bool:
    return not (call.name == "np.positive" and call.site == "+x")  # LEAPP's __pos__ returns the array itself


def zero_divisor(call: Call) -> bool:
    operands = call_operands(call)
    if len(operands) != 2 or not is_int(operands[1]) or not is_int(operands[0]):
        return False
    divisor = operands[1]
    return bool(np.any(np.asarray(divisor) == 0))


