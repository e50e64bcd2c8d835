"""An Array API namespace that runs every NumPy function call through a leapp_notebook trace.

For the Array API conformance suite (data-apis/array-api-tests, a snapshot in ``../shared/third_party``):
each call of a function of this namespace with array arguments is traced with leapp_notebook from *decoy*
inputs (other values of the same shape and dtype, drawn from the real array's own values so that indices and
domains stay valid), and the traced graph is then run on the real inputs. Each call is counted:

* ``faithful``: no error hazard, and the graph equals NumPy on the real inputs (value, shape, dtype);
* ``reported``: an error hazard says the call is not recorded faithfully (baked, refused argument, ...);
* ``refused``: the trace itself raised (a tracer limit, not NumPy's own error);
* ``silent``: no error hazard, yet the graph differs from NumPy or raises on the real inputs;
* ``signed-zero``: equal but for the sign of some zeros (counted apart; the suite rarely checks them);
* ``tie-order``: an argsort equal but for the order of equal keys (NumPy's default sort is unstable).

Faithful and silent calls return the graph's result, so the suite checks the graph; reported and refused calls
return NumPy's (the tool said so: the user would not export that graph). Run it with
``python benchmarks/array_api_conformance.py`` (or see tests/test_array_api_conformance.py for the CI slice):

    ARRAY_API_TESTS_MODULE="exec('import benchmarks.array_api_traced as m; xp = m.namespace()')"

``LEAPP_NOTEBOOK_PROFILE`` picks the profile (``full`` by default); ``ARRAY_API_TRACE_COUNTS`` names a JSON
file the counts are written to at exit (with the first examples of each non-faithful kind).
"""

from __future__ import annotations

import atexit
import json
import os
import pickle
import types
import warnings
from collections import Counter, defaultdict
from typing import Any

import numpy as np

import leapp_notebook as ln

PROFILE = os.environ.get("LEAPP_NOTEBOOK_PROFILE", "full")
COUNTS: Counter[str] = Counter()
BY_FUNCTION: dict[str, Counter[str]] = defaultdict(Counter)
EXAMPLES: dict[str, list[str]] = defaultdict(list)
_RNG = np.random.default_rng(20261130)
_TOLERANCE = {"e": 2e-3, "f": 1e-5, "d": 1e-9, "g": 1e-9, "F": 1e-5, "D": 1e-9, "G": 1e-9}

# Submodules the suite reaches through the namespace.
_SUBMODULES = {"linalg": np.linalg, "fft": np.fft}
# Calls that only describe dtypes or devices: nothing to trace.
_PASSTHROUGH = {"asarray", "from_dlpack", "isdtype", "result_type", "can_cast", "finfo", "iinfo",
                "__array_namespace_info__", "broadcast_shapes"}


def _leaves(value: Any, found: list[np.ndarray]) -> Any:
    """``value`` with each ndarray replaced by a placeholder index into ``found``."""
    if isinstance(value, np.ndarray):
        found.append(value)
        return _Slot(len(found) - 1)
    if type(value) in (list, tuple):
        return type(value)(_leaves(v, found) for v in value)
    return value


class _Slot:
    __slots__ = ("index",)

    def __init__(self, index: int):
        self.index = index


def _fill(value: Any, arrays: tuple[Any, ...]) -> Any:
    if isinstance(value, _Slot):
        return arrays[value.index]
    if type(value) in (list, tuple):
        return type(value)(_fill(v, arrays) for v in value)
    return value


def _decoy(real: np.ndarray) -> np.ndarray:
    """Another array of the same shape and dtype, drawn from ``real``'s own values (valid indices, domains),
    rearranged so that a value baked at trace time does not pass by chance."""
    if real.size < 2:
        return real.copy()
    flat = real.reshape(-1)
    for _ in range(4):
        decoy = _RNG.choice(flat, size=real.shape).astype(real.dtype)
        if not np.array_equal(decoy, real, equal_nan=True):
            return decoy
    return decoy


# NumPy leaves these values unspecified: only shape and dtype are compared.
_UNSPECIFIED_VALUES = {"empty_like", "empty"}


def _same(want: Any, have: np.ndarray, values: bool = True, signed_zeros: bool = True) -> bool:
    """Equal shape and dtype; equal values (floats within a dtype tolerance of the largest finite magnitude,
    with the same nan/inf positions and, unless ``signed_zeros`` is False, the same signed zeros)."""
    want = np.asarray(want)
    if want.shape != have.shape or want.dtype != have.dtype:
        return False
    if not values:
        return True
    if want.dtype.kind not in "fc":
        return bool(np.array_equal(have, want))
    rtol = _TOLERANCE.get(want.dtype.char, 1e-9)
    finite = np.abs(want[np.isfinite(want)])
    scale = float(np.max(finite, initial=1.0)) if finite.size else 1.0
    parts = [(want.real, have.real), (want.imag, have.imag)] if want.dtype.kind == "c" else [(want, have)]
    for w, h in parts:
        if signed_zeros:
            zeros = (w == 0) & (h == 0)
            if np.any(np.signbit(w[zeros]) != np.signbit(h[zeros])):
                return False
        with np.errstate(all="ignore"):
            if not np.allclose(h, w, rtol=rtol, atol=rtol * scale, equal_nan=True):
                return False
    return True


def _same_sorted(x: np.ndarray, want: Any, have: np.ndarray, kwargs: dict[str, Any]) -> bool:
    """Both index arrays select the same values along the sorted axis (they differ only among ties)."""
    axis = kwargs.get("axis", -1)
    if x.ndim == 0:
        return False
    return bool(np.array_equal(np.take_along_axis(x, np.asarray(want), axis), np.take_along_axis(x, have, axis),
                               equal_nan=x.dtype.kind in "fc"))


def _record(name: str, kind: str, detail: str) -> None:
    COUNTS[kind] += 1
    BY_FUNCTION[name][kind] += 1
    if kind != "faithful" and len(EXAMPLES[kind]) < 40:
        EXAMPLES[kind].append(f"{name}: {detail}"[:300])


def _outputs(result: Any) -> list[Any] | None:
    """NumPy's result as a list of arrays (None: not an array result, nothing to compare)."""
    if isinstance(result, (np.ndarray, np.generic)):
        return [result]
    if isinstance(result, tuple) and result and all(isinstance(r, (np.ndarray, np.generic)) for r in result):
        return list(result)
    return None


def _rebuild(real: Any, values: list[np.ndarray]) -> Any:
    def like(want: Any, have: np.ndarray) -> Any:
        return have[()] if isinstance(want, np.generic) else have

    if isinstance(real, tuple):
        items = [like(w, h) for w, h in zip(real, values, strict=True)]
        return type(real)._make(items) if hasattr(type(real), "_make") else type(real)(items)
    return like(real, values[0])


def traced_call(name: str, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    real = func(*args, **kwargs)  # NumPy's own result; its exceptions are the suite's business
    arrays: list[np.ndarray] = []
    template = _leaves((args, kwargs), arrays)
    outputs = _outputs(real)
    if not arrays or outputs is None:
        return real
    decoys = [_decoy(a) for a in arrays]
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            d_args, d_kwargs = _fill(template, tuple(decoys))
            func(*d_args, **d_kwargs)
    except Exception:  # noqa: BLE001 - the decoys are outside the function's domain: trace on the real inputs
        decoys = [a.copy() for a in arrays]
    inputs = {f"x{i}": d for i, d in enumerate(decoys)}
    names = ", ".join(inputs)
    out_names = [f"o{i}" for i in range(len(outputs))]
    unpack = "".join(f"\n{o} = out[{i}]" for i, o in enumerate(out_names)) if isinstance(real, tuple) else \
        f"\n{out_names[0]} = out"

    def call(*values: Any) -> Any:
        a, k = _fill(template, values)
        return func(*a, **k)

    source = f"out = call({names}){unpack}"
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            trace = ln.trace_cell(source, {"call": call, "np": np}, inputs=inputs, outputs=out_names, profile=PROFILE)
    except Exception as exc:  # noqa: BLE001 - any tracer failure is a refusal to count
        _record(name, "refused", f"{type(exc).__name__}: {str(exc).splitlines()[0]}")
        return real
    errors = [h for h in trace.hazards if h.severity == "error"]
    if errors:
        _record(name, "reported", " | ".join(f"{h.kind}: {h.message}" for h in errors))
        return real
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            have = list(trace.nodes["node"](*arrays))
    except Exception as exc:  # noqa: BLE001 - an unreported graph that raises is a silent failure too
        _record(name, "silent", f"graph raises {type(exc).__name__}: {str(exc).splitlines()[0]}")
        return real
    values = name not in _UNSPECIFIED_VALUES
    wrong = [i for i, (w, h) in enumerate(zip(outputs, have, strict=True)) if not _same(w, h, values)]
    if wrong and all(_same(w, h, values, signed_zeros=False) for w, h in zip(outputs, have, strict=True)):
        # equal but for the sign of some zeros (fft, cholesky of complex data): counted apart, not as silent
        _record(name, "signed-zero", f"inputs {[(a.dtype.name, a.shape) for a in arrays]} kwargs {list(kwargs)}")
        return _rebuild(real, have)
    if wrong and name == "argsort" and _same_sorted(arrays[0], outputs[0], have[0], kwargs):
        # NumPy's default argsort is unstable: ties come in an unspecified order; the graph's sort is stable
        _record(name, "tie-order", f"inputs {[(a.dtype.name, a.shape) for a in arrays]} kwargs {list(kwargs)}")
        return _rebuild(real, have)
    if wrong:
        dump = os.environ.get("ARRAY_API_TRACE_DUMP")
        if dump and not os.path.exists(dump):
            with open(dump, "wb") as f:
                pickle.dump({"name": name, "args": args, "kwargs": kwargs, "decoys": decoys}, f)
        w, h = np.asarray(outputs[wrong[0]]), have[wrong[0]]
        _record(name, "silent", f"output {wrong[0]}: graph {h.dtype}{h.shape} {np.array2string(h, threshold=6)} vs "
                f"NumPy {w.dtype}{w.shape} {np.array2string(w, threshold=6)}; inputs "
                f"{[(a.dtype.name, a.shape) for a in arrays]} kwargs {list(kwargs)}")
    else:
        _record(name, "faithful", "")
    return _rebuild(real, have)


def _wrap(name: str, func: Any) -> Any:
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        return traced_call(name, func, args, kwargs)

    wrapped.__name__ = getattr(func, "__name__", name)
    wrapped.__doc__ = getattr(func, "__doc__", None)
    wrapped.__wrapped__ = func  # type: ignore[attr-defined]  # the suite's signature tests read through this
    return wrapped


class _Namespace(types.ModuleType):
    """NumPy, with its functions wrapped by :func:`traced_call` (dtypes, constants and classes unchanged)."""

    def __init__(self, module: types.ModuleType, prefix: str):
        super().__init__(module.__name__)
        self._module = module
        self._prefix = prefix
        self._cache: dict[str, Any] = {}

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("_") and attr not in ("__array_namespace_info__", "__array_api_version__"):
            return getattr(self._module, attr)
        cached = self._cache.get(attr)
        if cached is not None:
            return cached
        value = getattr(self._module, attr)
        if attr in _SUBMODULES and self._module is np:
            value = _Namespace(_SUBMODULES[attr], f"{attr}.")
        elif callable(value) and not isinstance(value, type) and attr not in _PASSTHROUGH:
            value = _wrap(self._prefix + attr, value)
        self._cache[attr] = value
        return value


def namespace() -> types.ModuleType:
    return _Namespace(np, "")


def summary() -> dict[str, Any]:
    return {"profile": PROFILE, "counts": dict(COUNTS),
            "by_function": {k: dict(v) for k, v in sorted(BY_FUNCTION.items())},
            "examples": dict(EXAMPLES)}


def _write_counts() -> None:
    path = os.environ.get("ARRAY_API_TRACE_COUNTS")
    if path:
        with open(path, "w") as f:
            json.dump(summary(), f, indent=1)


atexit.register(_write_counts)
