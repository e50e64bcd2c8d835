"""What every lookup builder sees: the dtype maps, :class:`Unsupported` and the :class:`BuildContext`.

A builder reads one NumPy call through its BuildContext (graph values for arrays, static NumPy values for
metadata such as axes) and emits fx nodes through it; the session behind the context knows the cell
line, the constants and the provenance. ``_display`` spells torch targets for the graph view.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch

from ..provenance import computed


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
_FLOAT_MAX: dict[np.dtype, float] = {}  # per float dtype: its largest finite value


def as_float(value: int | float) -> float:
    """A Python number as a float: an int too large for one is the infinity of its sign (beyond every float dtype's
    range, as float64's ends below 2**1024)."""
    return math.copysign(math.inf, value) if type(value) is int and abs(value) >= _HUGE else float(value)


_HUGE = 2 ** 1000


def in_float_range(value: float, dtype: np.dtype) -> bool:
    """Whether a Python float converts to the float ``dtype`` as itself: finite within its range, or nan or an
    infinity (torch refuses a finite one beyond it; NumPy makes it inf)."""
    limit = _FLOAT_MAX.get(dtype)
    if limit is None:
        limit = _FLOAT_MAX[dtype] = float(np.finfo(dtype).max)
    return not limit < abs(value) < math.inf


_F64 = np.dtype(np.float64)
_I64 = np.dtype(np.int64)
_BOOL = np.dtype(np.bool_)
_U64 = np.dtype(np.uint64)
_WIDER = {np.dtype(np.uint16): np.dtype(np.int32), np.dtype(np.uint32): _I64}
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
        """A genuine constant (a value the builder computes from static arguments): one node per value in the node
        (``provenance.computed``)."""
        return self._builder.const(computed(value), baked=False, origin=None, line=self._line, helper=self._helper)

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
            # Python scalars and lists become constants of NumPy's dtype for them (in the dtype torch computes
            # that dtype in, see compute_dtype).
            try:
                array = _asarray(eager, dtype=dtype) if dtype is not None else _asarray(eager)
            except OverflowError as exc:  # a Python int NumPy took beyond the dtype's range, as this row cannot
                raise Unsupported(f"{eager!r} does not fit {dtype}: {exc}") from exc
            work = self.compute_dtype(array.dtype)
            return self.constant(array if work == array.dtype else array.astype(work))
        have = eager.dtype if hasattr(eager, "dtype") else _asarray(eager).dtype
        return self.cast(graph, have, have if dtype is None else dtype)

    def compute_dtype(self, dtype: np.dtype) -> np.dtype:
        """The dtype the graph computes a NumPy ``dtype`` in. torch has CPU kernels for few uint16/32/64 ops
        (add, comparisons, max, sort all raise), so those compute in the next wider signed dtype, where every
        value fits and wrap-around agrees modulo 2**bits; the session's dtype pass casts the result back.
        uint64 has no wider dtype: rows whose arithmetic is exact modulo 2**64 (``uint64="wrap"`` on the row:
        +, -, *, bitwise, data movement) compute in int64; any other is refused."""
        kind = dtype.kind
        if kind != "u" and kind != "c":  # the hot path: every recorded operand passes here
            return dtype
        wider = _WIDER.get(dtype)
        if wider is not None:
            return wider
        if kind == "c" and self.extra.get("orders"):
            raise Unsupported(f"torch cannot order complex numbers ({self._name.split('.')[-1]}); NumPy orders them "
                              "lexicographically")
        if dtype == _U64:
            if self.extra.get("uint64") != "wrap":
                raise Unsupported(f"torch has no CPU kernel for uint64 {self._name.split('.')[-1]} and int64 is no "
                                  "exact route for it: a graph recording it would raise")
            return _I64
        return dtype

    def scalar_or_tensor(self, name: str, dtype: np.dtype | None = None) -> Any:
        """A Python scalar stays a scalar (weak, as NEP 50 treats it); arrays become tensors."""
        eager = self.eager[name]
        if isinstance(eager, (bool, int, float)) and not isinstance(self.params[name], np.generic):
            return eager
        return self.tensor(name, dtype)

    def cast(self, node: Any, have: np.dtype, want: np.dtype | None) -> Any:
        """``node`` (of NumPy dtype ``have``) in the dtype the graph computes ``want`` in."""
        if want is None:
            return node
        work = self.compute_dtype(want)
        if have == work:
            return node
        return self.emit("call_method", "to", (node, torch_dtype(work)))

    def to(self, node: Any, want: np.dtype) -> Any:
        """An explicit cast of a value whose torch dtype differs from ``want``."""
        return self.emit("call_method", "to", (node, torch_dtype(self.compute_dtype(want))))

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
