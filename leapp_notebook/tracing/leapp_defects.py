"""Calls LEAPP 0.7.2's lookup records, but records wrongly (measured: docs/leapp-0.7.2-behaviour.md,
benchmarks/leapp_gaps.py).

Our graph records these calls correctly; the hazard says that the same cell exported with LEAPP
itself would be wrong or fail, so the ``leapp`` profile still shows every way LEAPP's export breaks.
Each entry is data: a cause key, the call names it applies to, a predicate on the call (NumPy's eager
arguments and result; for a few causes how the call was spelled at its call site), what LEAPP does,
and the rewrite that avoids it.

What LEAPP 0.7.2 does with a NumPy call (read from its ``traced_np_array.py``): a ufunc or function in
its tables becomes one ``torch`` call with NumPy's arguments passed through (``axis`` renamed ``dim``,
``keepdims`` ``keepdim``; a NumPy dtype object left as it is; Python scalars inline in the graph code,
0-d arrays and NumPy scalars as 0-d tensor constants); its array methods are small Python wrappers
with fixed signatures around those functions. The graph is compiled with ``torch.jit.script`` and
replayed once on the trace inputs (``compile_graph(validate=True)``; with the default ``strict=True`` a
mismatch raises). So LEAPP fails where the wrapper signature rejects an argument, where TorchScript
rejects the torch call, where torch has no kernel for the dtype, or where torch's result dtype or
shape differs from NumPy's.

``find`` runs on every call the ``leapp`` lookup records, in both profiles: one dict lookup by name,
predicates only for names that have defects; the torch dtype check caches its answer per argument
signature. ``aliased_input`` runs once per node output when the node closes.
"""

from __future__ import annotations

import dis
import operator
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
import torch

from . import ops
from .facts import facts
from .provenance import user_frame

# ------------------------------------------------------------------------------------------
# the catalogue's types
# ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Defect:
    """One cause of a wrong LEAPP export. ``applies(call)`` is falsy when LEAPP gets the call right;
    otherwise True, or a text with the details for this call. ``fix`` is a text or ``fix(call)``."""

    cause: str
    names: frozenset[str]
    applies: Callable[["Call"], Any]
    what: str
    fix: str | Callable[["Call"], str]


@dataclass(frozen=True)
class Finding:
    defect: Defect
    detail: str
    fix: str

    @property
    def message(self) -> str:
        return f"{self.defect.what} ({self.detail})" if self.detail else self.defect.what


_UNSET = object()


class Call:
    """One recorded call as the predicates see it: ``name``, eager arguments ``p`` (only those the
    caller passed, bound to NumPy's parameter names), NumPy's ``result``; ``keywords`` (which of the
    arguments were passed by keyword) and ``site`` (the instruction that made the call) are read from
    the calling frame on first use only."""

    __slots__ = ("name", "p", "result", "_keywords", "_site", "outcome")

    def __init__(self, name: str, p: dict[str, Any], result: Any, keywords: tuple[str, ...] | None = None,
                 site: str | None = None):
        self.name = name
        self.p = p
        self.result = result
        self._keywords = keywords
        self._site = site
        self.outcome: Any = _UNSET  # the torch check's answer, shared by the two causes that read it

    def _read_site(self) -> None:
        site, keywords = _call_site()
        if self._site is None:
            self._site = site
        if self._keywords is None:
            self._keywords = keywords

    @property
    def site(self) -> str:
        """``"call"``, an operator (``"~"``, ``"&"``, ``"+x"``, ...) or ``""`` when unknown."""
        if self._site is None:
            self._read_site()
        return self._site or ""

    def by_keyword(self, name: str) -> bool | None:
        """Whether argument ``name`` was passed by keyword (None: the call site cannot be read)."""
        if name not in self.p:
            return False
        if self._keywords is None:
            self._read_site()
        if self._keywords is None:
            return None
        return name in self._keywords


# ------------------------------------------------------------------------------------------
# the call site: keyword names and operator spelling (LEAPP's methods and operators differ from
# NumPy's, and torch takes some arguments only by keyword or only by position)
# ------------------------------------------------------------------------------------------

_OPERATORS = {"UNARY_INVERT": "~", "UNARY_POSITIVE": "+x", "UNARY_NEGATIVE": "-x"}
_INSTRUCTIONS: dict[Any, tuple[list[dis.Instruction], dict[int, int]]] = {}
_SITES: dict[tuple[Any, int], tuple[str, tuple[str, ...] | None]] = {}


def _call_site() -> tuple[str, tuple[str, ...] | None]:
    """(what the first frame outside NumPy, torch and this package is executing, its keyword names)."""
    frame = user_frame(3)
    if frame is None:
        return "", None
    key = (frame.f_code, frame.f_lasti)
    found = _SITES.get(key)
    if found is None:
        if len(_SITES) > 4096:  # every cell run compiles new code objects: keep the caches bounded
            _SITES.clear()
            _INSTRUCTIONS.clear()
        found = _SITES[key] = _decode_site(frame.f_code, frame.f_lasti)
    return found


def _decode_site(code: Any, lasti: int) -> tuple[str, tuple[str, ...] | None]:
    cached = _INSTRUCTIONS.get(code)
    if cached is None:
        listing = list(dis.get_instructions(code))
        cached = _INSTRUCTIONS[code] = (listing, {ins.offset: i for i, ins in enumerate(listing)})
    listing, index = cached
    i = index.get(lasti)
    if i is None:
        return "", None
    ins = listing[i]
    if ins.opname in _OPERATORS:
        return _OPERATORS[ins.opname], ()
    if ins.opname == "BINARY_OP":
        return ins.argrepr, ()
    if ins.opname == "CALL_INTRINSIC_1" and "POSITIVE" in ins.argrepr:
        return "+x", ()
    if ins.opname == "CALL_KW":  # 3.13: the keyword names are the constant loaded just before
        prev = listing[i - 1]
        return "call", tuple(prev.argval) if prev.opname == "LOAD_CONST" else None
    if ins.opname == "CALL":  # 3.11: KW_NAMES, PRECALL, CALL; 3.12: KW_NAMES, CALL
        j = i - 1
        if j >= 0 and listing[j].opname == "PRECALL":
            j -= 1
        if j >= 0 and listing[j].opname == "KW_NAMES":
            names = code.co_consts[listing[j].arg]
            return "call", tuple(names)
        return "call", ()
    return "", None


# ------------------------------------------------------------------------------------------
# small helpers
# ------------------------------------------------------------------------------------------

def _kind(value: Any) -> str:
    dtype = getattr(value, "dtype", None)
    return dtype.kind if isinstance(dtype, np.dtype) else np.asarray(value).dtype.kind


def _is_int(value: Any) -> bool:
    return _kind(value) in "biu"


def _ndim(value: Any) -> int:
    return value.ndim if isinstance(value, (np.ndarray, np.generic)) else np.ndim(value)


def _axis_is_tuple(call: Call) -> bool:
    return isinstance(call.p.get("axis"), (tuple, list))


def _is_scalar(value: Any) -> bool:
    return isinstance(value, (bool, int, float, complex)) and not isinstance(value, np.generic)


def _operands(call: Call) -> list[Any]:
    p = call.p
    out = []
    for key in ops.OPERAND_NAMES:
        if key not in p:
            break
        out.append(p[key])
    return out


# ------------------------------------------------------------------------------------------
# LEAPP's array methods (TracedNpArray): signatures, and the function call each one makes
# ------------------------------------------------------------------------------------------

# method -> the parameters its LEAPP wrapper accepts (besides self); anything else raises TypeError.
METHOD_PARAMETERS: dict[str, tuple[str, ...]] = {
    "argmax": ("axis",), "argmin": ("axis",), "cumsum": ("axis",), "cumprod": ("axis",),
    "all": ("axis",), "any": ("axis",), "clip": ("a_min", "a_max"), "round": ("decimals",),
    "astype": ("dtype",), "copy": (), "flatten": (), "ravel": (), "reshape": ("shape",),
    "transpose": ("axes",), "swapaxes": ("axis1", "axis2"), "squeeze": ("axis",),
}
# method -> (the function LEAPP's wrapper calls, how: "axis" = axis=axis plus **kwargs by keyword,
# "positional" = every argument positionally). sum/mean/std/var/min/max take **kwargs.
METHOD_FORWARDS: dict[str, tuple[str, str]] = {
    **{m: (f"np.{m}", "axis") for m in ("sum", "mean", "std", "var", "min", "max", "argmax", "argmin",
                                        "cumsum", "cumprod", "all", "any", "squeeze")},
    "clip": ("np.clip", "positional"), "round": ("np.round", "positional"),
    "reshape": ("np.reshape", "positional"), "transpose": ("np.transpose", "positional"),
    "swapaxes": ("np.swapaxes", "positional"), "T": ("np.transpose", "positional"),
    "flatten": ("np.reshape", "positional"), "ravel": ("np.reshape", "positional"),
}


def _signature_errors(call: Call) -> str:
    method = call.name.split(".", 1)[1]
    allowed = METHOD_PARAMETERS[method]
    extra = [k for k in call.p if k != "a" and k not in allowed]
    if extra:
        return (f"TracedNpArray.{method}() has no {', '.join(f'{k}=' for k in extra)} parameter, so tracing "
                "raises TypeError")
    if method == "clip" and not ("a_min" in call.p and "a_max" in call.p):
        return "TracedNpArray.clip(a_min, a_max) takes both bounds, so tracing raises TypeError"
    return ""


_SIGNATURE_FIXES = {
    "keepdims": "call the function with an axis instead: np.{m}(x, axis=..., keepdims=True)",
    "dtype": "cast first instead of dtype=: x.astype(np.float64).{m}(...)",
    "out": "assign the result instead of passing out=",
    "where": "select with np.where(...) before the reduction instead of where=",
    "min": "pass both bounds positionally: x.clip(lo, hi), or np.clip(x, None, hi)",
    "max": "pass both bounds positionally: x.clip(lo, hi), or np.clip(x, None, hi)",
    "copy": "drop copy=: x.astype(dtype)",
    "order": "drop order= (LEAPP reshapes in C order)",
}


def _signature_fix(call: Call) -> str:
    method = call.name.split(".", 1)[1]
    extra = [k for k in call.p if k != "a" and k not in METHOD_PARAMETERS[method]]
    for key in extra:
        if key in _SIGNATURE_FIXES:
            return _SIGNATURE_FIXES[key].format(m=method)
    if method == "clip":
        return "pass both bounds: x.clip(lo, hi), or x.clip(lo, None)"
    return f"call the function instead: np.{method}(x, ...)"


def _forwarded(call: Call) -> Call | None:
    """The function call LEAPP's method wrapper makes, with the arguments it passes and how."""
    method = call.name.split(".", 1)[1]
    target = METHOD_FORWARDS.get(method)
    if target is None:
        return None
    func, how = target
    p = call.p
    if how == "axis":
        q = dict(p)
        q["axis"] = p.get("axis")
        return Call(func, q, call.result, keywords=tuple(k for k in q if k != "a"), site="call")
    if method == "round":
        return Call(func, {"a": p.get("a"), "decimals": p.get("decimals", 0)}, call.result, keywords=(), site="call")
    if method in ("flatten", "ravel"):
        return Call(func, {"a": p.get("a"), "shape": (-1,)}, call.result, keywords=(), site="call")
    return Call(func, dict(p), call.result, keywords=(), site="call")


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
    operands = _operands(call)
    wrap = uname in _TENSOR_SCALARS
    return fn(*[_sample(v, first=(i == 0), wrap=wrap) for i, v in enumerate(operands)])


def _only_arrays(value: Any) -> bool:
    return isinstance(value, (list, tuple)) and all(isinstance(v, np.ndarray) for v in value)


def _torch_call(call: Call) -> Any:
    """Run the torch op LEAPP records for ``call`` on one-element samples; raises what torch raises."""
    name = call.name
    p = call.p
    if name in _UFUNC_NAMES:
        return _ufunc_call(call)
    if name.startswith("ndarray."):
        name = METHOD_FORWARDS.get(name[8:], (name,))[0]
    if name == "np.clip":
        lo = p.get("a_min", p.get("min"))
        hi = p.get("a_max", p.get("max"))
        return torch.clamp(_sample(p["a"]), _sample(lo), _sample(hi))
    if name == "np.where":
        return torch.where(_sample(p["condition"]), _sample(p["x"]), _sample(p["y"]))
    if name in _JOINS:
        return _JOINS[name](_sample(list(p.get("arrays", p.get("tup")))))
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


_JOINS = {"np.concatenate": torch.cat, "np.stack": torch.stack, "np.vstack": torch.vstack, "np.hstack": torch.hstack}
_UFUNC_NAMES = frozenset(f"np.{n}" for n in LEAPP_UFUNCS)
_ORACLE_NAMES = _UFUNC_NAMES | {"np.clip", "np.where", "np.dot", "np.einsum", "np.argmax", "np.argmin", "np.sort",
                                "np.argsort", "np.trace", "np.round", "np.around", "np.linspace", *_JOINS,
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
    if call.outcome is not _UNSET:
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


def _dtype_fix(call: Call) -> str:
    values = _operands(call) if call.name in _UFUNC_NAMES else list(call.p.values())
    if any(isinstance(v, (np.ndarray, np.generic)) and np.ndim(v) == 0 for v in values):
        return ("make the 0-d constant a Python scalar (1.0), which both treat as weakly typed, or cast "
                "explicitly with .astype(...) so both agree")
    return "cast explicitly so both agree: x.astype(np.float64) before the call (or .astype(...) on the result)"


def _torch_kernel(call: Call) -> str:
    outcome = _torch_outcome(call)
    return outcome[1] if outcome is not None and outcome[0] == "kernel" else ""


def _torch_dtype(call: Call) -> str:
    outcome = _torch_outcome(call)
    return outcome[1] if outcome is not None and outcome[0] == "dtype" else ""


# ------------------------------------------------------------------------------------------
# predicates for the remaining causes
# ------------------------------------------------------------------------------------------

_PY_NUMBERS = (bool, int, float, complex)


def _python_scalar_operand(call: Call) -> str:
    p = call.p
    uname = call.name[3:]
    first = type(p.get("x0"))
    if uname in SCALAR_NEVER:
        if first not in _PY_NUMBERS and type(p.get("x1")) not in _PY_NUMBERS:
            return ""
    elif first is not bool and (first not in _PY_NUMBERS or uname not in SCALAR_NOT_FIRST):
        return ""
    for i, value in enumerate(_operands(call)):
        if _is_scalar(value) and (uname in SCALAR_NEVER or i == 0):
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
    if _is_scalar(a) or _is_scalar(b):
        return "torch.matmul takes no Python number"
    if _ndim(a) == 0 or _ndim(b) == 0:
        return "torch.matmul needs at least 1-D operands, NumPy's dot multiplies by a 0-d one"
    if _ndim(a) >= 2 and _ndim(b) >= 3:
        return "np.dot pairs every row of a with every matrix of b; torch.matmul broadcasts the batch dimensions"
    return ""


def _rejected_arguments(call: Call) -> str:
    """Arguments LEAPP passes under NumPy's name or position where torch's schema has another."""
    name = call.name
    p = call.p
    if name in ("np.tril", "np.triu"):
        if call.by_keyword("k") is not False:
            return f"k= is passed as a keyword, which torch.{name[3:]} calls diagonal="
        if _ndim(p.get("m")) < 2:
            return f"torch.{name[3:]} needs at least 2-D input; NumPy broadcasts a 1-D one"
    elif name == "np.rot90":
        if call.by_keyword("axes") is not False:
            return "axes= is passed as a keyword, which torch.rot90 calls dims="
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
    elif name in _JOINS:
        return _join_arguments(call)
    elif name == "np.dot":
        return _dot_arguments(call)
    return ""


def _rejected_fix(call: Call) -> str:
    return {
        "np.tril": "pass the diagonal positionally: np.tril(x, -1)",
        "np.triu": "pass the diagonal positionally: np.triu(x, 1)",
        "np.rot90": "pass the axes positionally: np.rot90(x, k, (1, 0))",
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


def _axis_none(call: Call) -> str:
    """torch ops whose dim cannot be None, where LEAPP passes NumPy's axis=None through as dim=None."""
    name = call.name
    p = call.p
    if name in ("np.cumsum", "np.cumprod"):
        if p.get("axis") is None:
            return f"torch.{name[3:]} needs a dim" + (" and gets dim=None" if "axis" in p else "")
        return ""
    if "axis" in p and p["axis"] is None:
        return f"torch.{_DIM_TORCH[name]} gets dim=None"
    return ""


_DIM_TORCH = {"np.max": "amax", "np.min": "amin", "np.prod": "prod", "np.squeeze": "squeeze", "np.concatenate": "cat"}


def _multi_axis(call: Call) -> str:
    """torch ops that take one int dim, where LEAPP passes a tuple (given, or made for keepdims without axis)."""
    p = call.p
    if _axis_is_tuple(call):
        return f"torch.{_ONE_DIM[call.name]} takes one int dim and gets axis={p['axis']!r}"
    if call.name != "np.expand_dims" and "axis" not in p and p.get("keepdims"):
        return (f"keepdims=True without axis becomes dim=(0, ..., ndim-1), and torch.{_ONE_DIM[call.name]} takes "
                "one int dim")
    return ""


_ONE_DIM = {"np.prod": "prod", "np.argmax": "argmax", "np.argmin": "argmin", "np.expand_dims": "unsqueeze"}


def _multi_axis_fix(call: Call) -> str:
    if call.name == "np.expand_dims":
        return "insert one axis per call: np.expand_dims(np.expand_dims(x, 0), 2), or x[None, :, None]"
    if call.name == "np.prod":
        return "reduce one axis per call: np.prod(np.prod(x, axis=1), axis=0), or reshape first"
    return f"give the axis: np.{call.name[3:]}(x.reshape(-1), axis=0) for the flat index"


def _sort_axis_none(call: Call) -> bool:
    return "axis" in call.p and call.p["axis"] is None and _ndim(call.p.get("a")) > 1


def _stable_argsort(call: Call) -> bool:
    return call.p.get("kind") == "stable" or bool(call.p.get("stable"))


def _bitwise_operator(call: Call) -> str:
    """LEAPP's TracedNpArray spells ~ & | ^ as logical_not/and/or/xor."""
    site = call.site
    logical = {"~": "logical_not", "&": "logical_and", "|": "logical_or", "^": "logical_xor"}.get(site)
    if logical is None or call.name != _OPERATOR_UFUNC[site]:
        return ""
    if _kind(call.result) != "b":
        return f"x {site} ... is np.{logical} in LEAPP, so it gives bool where NumPy gives the bitwise result"
    if any(_is_scalar(v) for v in _operands(call)):
        return f"x {site} ... is np.{logical} in LEAPP, and torch.{logical} takes no Python number"
    return ""


_OPERATOR_UFUNC = {"~": "np.invert", "&": "np.bitwise_and", "|": "np.bitwise_or", "^": "np.bitwise_xor"}


def _lambda_ufunc(call: Call) -> bool:
    return not (call.name == "np.positive" and call.site == "+x")  # LEAPP's __pos__ returns the array itself


def _zero_divisor(call: Call) -> bool:
    operands = _operands(call)
    if len(operands) != 2 or not _is_int(operands[1]) or not _is_int(operands[0]):
        return False
    divisor = operands[1]
    return bool(np.any(np.asarray(divisor) == 0))


# ------------------------------------------------------------------------------------------
# the catalogue
# ------------------------------------------------------------------------------------------

_LEAPP_METHODS = frozenset(f"ndarray.{m}" for m in METHOD_PARAMETERS)
_REDUCTIONS = frozenset(f"{prefix}{name}" for prefix in ("np.", "ndarray.")
                        for name in ("sum", "prod", "mean", "std", "var", "max", "min"))
_WITH_DTYPE = frozenset({*(f"np.{n}" for n in ("sum", "prod", "mean", "std", "var", "max", "min", "all", "any",
                                                 "cumsum", "cumprod", "concatenate", "stack", "vstack", "hstack",
                                                 "trace", "einsum", "zeros_like", "ones_like", "empty_like",
                                                 "full_like", "linspace")),
                         *(f"ndarray.{n}" for n in ("sum", "mean", "std", "var", "max", "min")), *_UFUNC_NAMES})

DEFECTS: tuple[Defect, ...] = (
    Defect("method-signature", _LEAPP_METHODS, _signature_errors,
           "LEAPP's array method has a narrower signature than NumPy's",
           _signature_fix),
    Defect("dtype-argument", _WITH_DTYPE, lambda c: c.p.get("dtype") is not None,
           "it passes the NumPy dtype= through to the torch call, and fx cannot record it: tracing raises "
           "NotImplementedError (\"argument of type: <class 'type'>\")",
           "drop dtype= and cast explicitly: x.astype(np.float64) before the call, or .astype(...) after it"),
    Defect("ufunc-reduce", frozenset(f"np.{n}.reduce" for n in ("add", "multiply", "maximum", "minimum",
                                                                  "logical_and", "logical_or")),
           lambda c: True,
           "ufunc.reduce raises a TypeError while LEAPP traces it (its __array_ufunc__ returns NotImplemented for "
           "every method but __call__)",
           "use the function: np.sum / np.prod / np.max / np.min / np.all / np.any with axis="),
    Defect("lambda-ufunc", frozenset({"np.exp2", "np.positive"}), _lambda_ufunc,
           "its table maps this ufunc to a Python lambda, which the exported graph cannot spell: compile_graph "
           "raises SyntaxError (\"invalid syntax\")",
           "np.exp2(x) -> np.power(2.0, x); np.positive(x) -> x (or +x)"),
    Defect("bitwise-operator", frozenset(_OPERATOR_UFUNC.values()), _bitwise_operator,
           "LEAPP's array type implements ~ & | ^ as logical operations",
           "call the bitwise function: np.invert(x), np.bitwise_and(a, b), np.bitwise_or(a, b), "
           "np.bitwise_xor(a, b)"),
    Defect("python-scalar-operand", frozenset(f"np.{n}" for n in SCALAR_NEVER | SCALAR_NOT_FIRST | BOOL_NOT_FIRST),
           _python_scalar_operand,
           "the Python number stays a literal in the graph, where the compiled torch op needs a tensor: "
           "compile_graph or the exported model raises",
           "make the number an array of the data's dtype: np.full_like(x, 1.5), or np.asarray(1.5, x.dtype)"),
    Defect("torch-rejects-arguments", frozenset({"np.tril", "np.triu", "np.rot90", "np.round", "np.around",
                                                 "np.trace", "np.tensordot", "np.linspace", "np.full_like",
                                                 "np.dot", *_JOINS}),
           _rejected_arguments,
           "it passes NumPy's arguments to the torch op unchanged, and TorchScript rejects them: compile_graph "
           "or the exported model raises",
           _rejected_fix),
    Defect("multi-axis-dim", frozenset(_ONE_DIM), _multi_axis,
           "the torch op takes a single int dim: compile_graph raises (\"Arguments for call are not valid\")",
           _multi_axis_fix),
    Defect("axis-none-dim", frozenset({*_DIM_TORCH, "np.cumsum", "np.cumprod"}), _axis_none,
           "axis=None is not a valid dim for the torch op: compile_graph raises (\"Arguments for call are not "
           "valid\" / \"Argument dim not provided\")",
           lambda c: ("flatten explicitly: np.cumsum(x.reshape(-1), axis=0)" if c.name in ("np.cumsum", "np.cumprod")
                      else "leave axis out: np.max(x) / np.min(x) / np.squeeze(x, axis=0); np.prod(x); "
                           "np.concatenate([a.reshape(-1), b.reshape(-1)])")),
    Defect("empty-axis-tuple", _REDUCTIONS, lambda c: isinstance(c.p.get("axis"), tuple) and c.p.get("axis") == (),
           "it passes dim=() to torch, which reduces every axis, where NumPy's axis=() reduces none",
           "drop the reduction: axis=() does nothing in NumPy"),
    Defect("int-mean", frozenset({"np.mean"}), lambda c: _is_int(c.p.get("a")) and c.p.get("dtype") is None,
           "it records torch.mean on the integer tensor, and the exported model raises \"mean(): could not infer "
           "output dtype\"",
           "cast first: x.astype(np.float64).mean(...)"),
    Defect("int-std-var", frozenset({"np.std", "np.var"}), lambda c: _is_int(c.p.get("a")) and c.p.get("dtype") is None,
           "it records torch.std/torch.var on the integer tensor, and the exported model raises \"std and var only "
           "support floating point and complex dtypes\"",
           "cast first: x.astype(np.float64).std(...)"),
    Defect("sort-axis-none", frozenset({"np.sort", "np.argsort"}), _sort_axis_none,
           "it records torch.topk along the last axis for axis=None, so the export sorts each row instead of "
           "the flattened array (wrong shape)",
           "flatten explicitly: np.sort(x.reshape(-1))"),
    Defect("unstable-argsort", frozenset({"np.argsort"}), _stable_argsort,
           "it records torch.topk, which does not keep equal elements in their original order: kind='stable' is "
           "not honoured",
           "break ties explicitly, e.g. sort x * n + np.arange(n) (integers), or do without stability"),
    Defect("uninitialized-values", frozenset({"np.empty_like"}), lambda c: True,
           "it records torch.empty_like, and compile_graph's replay validation compares two uninitialized "
           "buffers: with strict=True (LEAPP's default) it raises \"Model validation failed\"",
           "use np.zeros_like(x) (the values of np.empty_like are undefined anyway)"),
    Defect("torch-kernel", frozenset(_ORACLE_NAMES), _torch_kernel,
           "the torch op LEAPP records does not run on these dtypes or operands, so the exported model raises",
           "cast the operands first, e.g. x.astype(np.float32) (or np.int64 for integer ops on bool)"),
    Defect("torch-dtype", frozenset(_ORACLE_NAMES), _torch_dtype,
           "torch's type promotion differs from NumPy's for these operands, so LEAPP's model returns another dtype "
           "than the YAML declares and replay validation fails (\"Float did not match Double\")",
           _dtype_fix),
    Defect("integer-division-by-zero", frozenset({"np.remainder", "np.floor_divide", "np.fmod"}), _zero_divisor,
           "torch raises ZeroDivisionError for an integer division by zero, where NumPy returns 0 (the trace "
           "inputs have a zero divisor)",
           "guard the divisor: np.where(b == 0, 1, b), and select the NumPy result for zeros with np.where"),
)

# Output-aliases-input: checked when the node closes (aliased_input), not per call.
ALIAS = Defect("output-aliases-input", frozenset(), lambda c: False,
               "the output is a view covering exactly the memory of a declared input (same shape, strides and dtype), "
               "and LEAPP's output_tensors raises \"output '...' of node '...' shares memory with declared input "
               "'...', but they carry different tracing roots\"",
               "copy the view before declaring it (y = x.T.copy()), or declare the input itself as the output")

ALL_DEFECTS: tuple[Defect, ...] = DEFECTS + (ALIAS,)

_BY_NAME: dict[str, list[Defect]] = {}
for _defect in DEFECTS:
    for _name in _defect.names:
        _BY_NAME.setdefault(_name, []).append(_defect)
# A method is also judged by the function call LEAPP's wrapper makes.
_METHOD_NAMES = frozenset(f"ndarray.{m}" for m in METHOD_FORWARDS) | _LEAPP_METHODS


def _first(call: Call, defects: list[Defect]) -> Finding | None:
    for defect in defects:
        hit = defect.applies(call)
        if hit:  # rare: everything below runs only for a call LEAPP gets wrong
            fix = defect.fix(call) if callable(defect.fix) else defect.fix
            return Finding(defect, hit if isinstance(hit, str) else "", fix)
    return None


def find(name: str, params: dict[str, Any], result: Any) -> Finding | None:
    """What LEAPP 0.7.2 gets wrong about this call (``params``: NumPy's eager arguments), if anything."""
    defects = _BY_NAME.get(name)
    if defects is None and name not in _METHOD_NAMES:
        return None
    call = Call(name, params, result)
    if defects:
        for defect in defects:
            if defect.applies(call):
                return _first(call, [defect])
    if name in _METHOD_NAMES:
        forwarded = _forwarded(call)
        if forwarded is not None and forwarded.name in _BY_NAME:
            return _first(forwarded, _BY_NAME[forwarded.name])
    return None


# ------------------------------------------------------------------------------------------
# outputs that alias a declared input
# ------------------------------------------------------------------------------------------

# NumPy names whose result LEAPP computes as a NumPy view of the argument (its methods forward to
# these: flatten/ravel to np.reshape, T to np.transpose); basic getitem keys are views too.
VIEW_OPS = frozenset({"ndarray.T", "np.transpose", "ndarray.transpose", "np.reshape", "ndarray.reshape",
                      "ndarray.flatten", "ndarray.ravel", "np.squeeze", "ndarray.squeeze", "np.expand_dims",
                      "np.swapaxes", "ndarray.swapaxes", "np.moveaxis", "np.split", "np.array_split"})


def _is_view(node: torch.fx.Node) -> bool:
    """Whether NumPy's value of ``node`` is a view of its one input in the same layout: a view function, or
    basic indexing without a reversed slice (the indexing code records that fact)."""
    info = facts(node)
    return info.numpy in VIEW_OPS or (info.view and node.target is operator.getitem)


def aliased_input(node: Any) -> str | None:
    """The declared input whose memory the output ``node`` covers exactly, as LEAPP's view would.

    LEAPP refuses an output whose eager array has the same data pointer, shape, strides and dtype as a
    declared input but is a different traced object. The output's graph is followed back through view
    operations to a placeholder; the chain is replayed on an index tensor, and it aliases exactly when
    it maps every element to itself.
    """
    if not isinstance(node, torch.fx.Node):
        return None
    chain = []
    current = node
    while current.op != "placeholder":
        if current.op not in ("call_function", "call_method") or not _is_view(current):
            return None
        inputs = current.all_input_nodes
        if len(inputs) != 1:
            return None
        chain.append(current)
        current = inputs[0]
    if not chain:
        return None  # the input itself: LEAPP's carrier, not an alias
    shape = tuple(facts(current).shape or ())
    if tuple(facts(node).shape or ()) != shape or facts(node).dtype != facts(current).dtype:
        return None
    size = int(np.prod(shape)) if shape else 1
    if size == 0:
        return None  # LEAPP does not compare empty arrays
    index = torch.arange(size).reshape(shape)
    env = {current: index}
    try:
        for step in reversed(chain):
            args = torch.fx.node.map_arg(step.args, lambda n: env[n])
            kwargs = torch.fx.node.map_arg(step.kwargs, lambda n: env[n])
            if step.op == "call_method":
                env[step] = getattr(args[0], step.target)(*args[1:], **kwargs)
            else:
                env[step] = step.target(*args, **kwargs)
    except Exception:  # noqa: BLE001 - a step that does not replay is not judged
        return None
    out = env[node]
    if not isinstance(out, torch.Tensor) or tuple(out.shape) != shape or not torch.equal(out, index):
        return None
    return facts(current).input or current.name
