"""How LEAPP 0.7.2 sees one NumPy call: its arguments (``Call``), how it was spelled at its call site (keyword
or positional, operator or function: read from the caller's bytecode), and the signatures of LEAPP's own array
methods. The defects catalogue (leapp_defects.py) is written in terms of these.
"""

from __future__ import annotations

import dis
from typing import Any

import numpy as np

from . import ops
from .provenance import per_code, user_frame

UNSET = object()


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
        self.outcome: Any = UNSET  # the torch check's answer, shared by the two causes that read it

    def _read_site(self) -> None:
        site, keywords = PROTOCOL_SITE[0] or _call_site()
        if self._site is None:
            self._site = site
        if self._keywords is None:
            self._keywords = keywords

    @property
    def site(self) -> str:
        """``"call"``, an operator (``"~"``, ``"&"``, ``"+x"``, ``"-="``; ``"[]-="`` for an augmented assignment to a
        subscript, ``o[idx] -= c``) or ``""`` when unknown."""
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

# (site, keyword names) of a NumPy call the tracer makes for a Python protocol of a traced value (``round(s, 2)``
# is np.round there: TracedArray.__round__), set while it runs: the caller's bytecode shows the builtin's call
PROTOCOL_SITE: list[tuple[str, tuple[str, ...]] | None] = [None]
_OPERATORS = {"UNARY_INVERT": "~", "UNARY_POSITIVE": "+x", "UNARY_NEGATIVE": "-x"}
# Per code object: what each of its call and operator instructions is (offset -> (site, keyword names)), decoded
# in one pass over the code when a predicate first asks about one of its sites. Kept per code object, not per
# site: a long straight-line cell has a site per line, and a bound on sites would disassemble it again and again.
_SITE_TABLES: dict[int, tuple[Any, dict[int, tuple[str, tuple[str, ...] | None]]]] = {}
_MAX_SITE_TABLES = 256  # code objects (cells and the functions they define; a re-run cell reuses its own)
_UNKNOWN = ("", None)


def _call_site() -> tuple[str, tuple[str, ...] | None]:
    """(what the first frame outside NumPy, torch and this package is executing, its keyword names)."""
    frame = user_frame(3)
    if frame is None:
        return _UNKNOWN
    return per_code(_SITE_TABLES, _MAX_SITE_TABLES, frame.f_code, _site_table).get(frame.f_lasti, _UNKNOWN)


def augmented_assignment() -> bool:
    """Whether the user's code is running an augmented assignment's operator (``u[1, :2] *= 3``, ``v += 1``; the
    site of the first is ``"[]*="``)."""
    site = _call_site()[0]
    return site.endswith("=") and site not in ("==", "!=", "<=", ">=")


def augmented_subscript() -> bool:
    """Whether the user's code is running the operator of an augmented assignment to a subscript (``u[1, :2] *= 3``:
    Python writes the result back into ``u`` itself; not ``v *= 3``, which only rebinds ``v``)."""
    return _call_site()[0].startswith("[]")


def _site_table(code: Any) -> dict[int, tuple[str, tuple[str, ...] | None]]:
    listing = list(dis.get_instructions(code))
    table = {}
    for i, ins in enumerate(listing):
        found = _decode_site(code, listing, i)
        if found != _UNKNOWN:
            table[ins.offset] = found
    return table


def _decode_site(code: Any, listing: list[dis.Instruction], i: int) -> tuple[str, tuple[str, ...] | None]:
    ins = listing[i]
    if ins.opname in _OPERATORS:
        return _OPERATORS[ins.opname], ()
    if ins.opname == "BINARY_OP":
        if ins.argrepr.endswith("=") and _stores_into_subscript(listing, i + 1):
            return "[]" + ins.argrepr, ()  # o[..., :3] -= c: the result is assigned back into o's subscript
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


def _stores_into_subscript(listing: list[dis.Instruction], j: int) -> bool:
    """Whether the instructions from ``j`` on store the value an augmented assignment computed into a subscript
    (``o[idx] -= c``: ``SWAP 3; SWAP 2; STORE_SUBSCR``), not into a name or an attribute."""
    while j < len(listing) and listing[j].opname in ("SWAP", "COPY", "CACHE", "NOP", "EXTENDED_ARG"):
        j += 1
    return j < len(listing) and listing[j].opname in ("STORE_SUBSCR", "STORE_SLICE")


# ------------------------------------------------------------------------------------------
# small helpers
# ------------------------------------------------------------------------------------------

def dtype_kind(value: Any) -> str:
    dtype = getattr(value, "dtype", None)
    return dtype.kind if isinstance(dtype, np.dtype) else np.asarray(value).dtype.kind


def is_int(value: Any) -> bool:
    return dtype_kind(value) in "biu"


def ndim(value: Any) -> int:
    return value.ndim if isinstance(value, (np.ndarray, np.generic)) else np.ndim(value)


def axis_is_tuple(call: Call) -> bool:
    return isinstance(call.p.get("axis"), (tuple, list))


def is_scalar(value: Any) -> bool:
    return isinstance(value, (bool, int, float, complex)) and not isinstance(value, np.generic)


def call_operands(call: Call) -> list[Any]:
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


def signature_errors(call: Call) -> str:
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


def signature_fix(call: Call) -> str:
    method = call.name.split(".", 1)[1]
    extra = [k for k in call.p if k != "a" and k not in METHOD_PARAMETERS[method]]
    for key in extra:
        if key in _SIGNATURE_FIXES:
            return _SIGNATURE_FIXES[key].format(m=method)
    if method == "clip":
        return "pass both bounds: x.clip(lo, hi), or x.clip(lo, None)"
    return f"call the function instead: np.{method}(x, ...)"


def forwarded_call(call: Call) -> Call | None:
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


