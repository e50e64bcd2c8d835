"""``trace_cell``, the ``Trace`` it returns, and ``annotate`` (LEAPP-style node declarations).

Running a cell under a trace: the cell's inputs become TracedArrays, the cell runs with a few NumPy
creation functions watched, and whatever happens — success, an exception in the user's code, a
bad argument — NumPy is restored and no traced array is left in the namespace.
"""

from __future__ import annotations

import atexit
import gc
import itertools
import json
import linecache
import operator
import os
import sys
import threading
import traceback
import warnings
from pathlib import Path
from types import ModuleType
from typing import Any, Callable, Iterable, Mapping

import numpy as np
import torch

from .tracing import indexing as _indexing
from .tracing import ops
from .tracing import session as _session
from .tracing import stores as _stores
from .tracing import tensor as _tensor
from .tracing.array import TracedArray
from .tracing.facts import facts
from .tracing.provenance import builder_of, cell_lines, plain
from .tracing.session import Session, close_matches
from .tracing.types import CellError, Hazard, Node, TraceError

PROFILES = ("leapp", "full")
_COUNTER = itertools.count(1)


# ------------------------------------------------------------------------------------------
# annotate
# ------------------------------------------------------------------------------------------

class _Replay:
    """Eager re-run state: input overrides per node, outputs captured per node."""

    def __init__(self, overrides: Mapping[str, Mapping[str, np.ndarray]]):
        self.overrides = overrides
        self.outputs: dict[str, dict[str, Any]] = {}
        # per node, the shapes of the values the cell gave its input_tensors (before the overrides replaced them)
        self.given: dict[str, dict[str, tuple[int, ...]]] = {}


_REPLAY: _Replay | None = None


class Annotate:
    """LEAPP-style node declarations. Outside a trace the calls pass values straight through, so a cell
    that uses them runs as ordinary NumPy."""

    def input_tensors(self, node: str, tensors: Mapping[str, Any]) -> Any:
        if not isinstance(tensors, Mapping) or not tensors:
            raise TraceError(f"annotate.input_tensors('{node}', ...) takes a non-empty dict name -> array")
        sess = _session.ACTIVE
        if sess is not None:
            builder = sess.builder(node)
            given = _REPLAY.overrides.get(node, {}) if _REPLAY is not None else {}
            traced = {name: builder.add_input(name, given.get(name, value)) for name, value in tensors.items()}
        elif _REPLAY is not None:
            given = _REPLAY.overrides.get(node, {})
            traced = {name: copy_value(given[name]) if name in given else value for name, value in tensors.items()}
            _REPLAY.given[node] = {name: tuple(value.shape) for name, value in tensors.items()
                                   if isinstance(value, (np.ndarray, torch.Tensor))}
        else:
            traced = dict(tensors)
        if len(traced) == 1:
            return next(iter(traced.values()))
        return traced

    def output_tensors(self, node: str, tensors: Mapping[str, Any], export_with: str = "jit",
                       **_: Any) -> None:
        if not isinstance(tensors, Mapping) or not tensors:
            raise TraceError(f"annotate.output_tensors('{node}', ...) takes a non-empty dict name -> array")
        sess = _session.ACTIVE
        if sess is not None:
            builder = sess.builders.get(node)
            if builder is None:
                raise TraceError(f"annotate.output_tensors('{node}', ...) before any "
                                 f"annotate.input_tensors('{node}', ...)" + close_matches(node, sess.builders))
            builder.close(dict(tensors), export_with)
        elif _REPLAY is not None:
            _REPLAY.outputs[node] = {name: copy_value(value) for name, value in tensors.items()}


annotate = Annotate()


def copy_value(value: Any) -> Any:
    """A copy of an array or tensor of the same kind (a tensor detached: eager outputs may require grad)."""
    if isinstance(value, torch.Tensor):
        return value.detach().clone()
    return np.array(value, copy=True)


# ------------------------------------------------------------------------------------------
# NumPy creation functions watched during a trace
# ------------------------------------------------------------------------------------------

_ORIGINAL: dict[str, Callable[..., Any]] = {}


def _creation(name: str) -> Callable[..., Any]:
    original = getattr(np, name)
    uninitialized = name == "empty"
    filling = name in ("full", "full_like")

    def watched(*args: Any, **kwargs: Any) -> Any:
        sess = _session.active()
        if sess is None or sess.suspended:
            return original(*args, **kwargs)
        shape = args[0] if args else kwargs.get("shape", kwargs.get("N"))
        if filling:
            fill = args[1] if len(args) > 1 else kwargs.get("fill_value")
            builder = builder_of((fill,))
            if builder is not None and kwargs.get("like") is None and (name == "full" or type(shape) is np.ndarray):
                return _filled(sess, builder, name, args, kwargs, fill)
            if name == "full_like":
                return original(*args, **kwargs)  # (dispatched on its array: not watched as a new one)
        if type(shape) is _session.SelectionShape:  # np.zeros(v.shape) of a selection by the data: its length read
            _session.size_read(shape.value, f"np.{name}({tuple.__repr__(shape)})", None, 3)
        watched = sess.watch(original(*args, **kwargs))
        if uninitialized and type(watched) is TracedArray:
            # np.empty's contents are whatever the memory held: no fingerprint to tell a hidden write by. (NumPy's
            # random Generator fills its draws into np.empty from compiled code: ``rng.normal(size=...)`` was taken
            # for an array written with traced data by code the tracer cannot see, a false error.)
            watched._lp.fingerprint = None
        return watched

    watched.__wrapped__ = original  # type: ignore[attr-defined]
    watched.__name__ = name
    watched.__doc__ = original.__doc__
    return watched


def _filled(sess: Session, builder: Any, name: str, args: tuple[Any, ...], kwargs: dict[str, Any], fill: Any) -> Any:
    """``np.full(2, n)`` of a traced ``n`` (``np.full_like(W, n)`` of a plain ``W``): NumPy converts the fill value with
    its own asarray and copies it in C (``np.copyto``), so the array was a constant (found by an exploration session:
    off by 2.0). The same values as traced operations: the fill broadcast to the result's shape (recorded under the
    cell's call, whose name its hazard gives), then cast to np.full's dtype (a copy)."""
    given = plain(fill)
    with sess.eager():
        result = _ORIGINAL[name](*[given if value is fill else plain(value) for value in args],
                                 **{key: given if value is fill else plain(value) for key, value in kwargs.items()})
        spread = np.broadcast_to(given, result.shape)
    row = ops.FUNCTION_ROWS[np.broadcast_to]
    broadcast = sess.record(builder, row, f"np.{name}", {"array": fill, "shape": result.shape},
                            {"array": given, "shape": result.shape}, spread)
    return broadcast.astype(result.dtype)


def _conversion(name: str) -> Callable[..., Any]:
    original = getattr(np, name)

    def converted(obj: Any = None, *args: Any, **kwargs: Any) -> Any:
        sess = _session.active()
        if sess is None or sess.suspended:
            return original(obj, *args, **kwargs)
        dtype = args[0] if args else kwargs.get("dtype")
        if isinstance(obj, TracedArray):
            if obj._lp is None or obj._lp.builder is None:
                result = original(np.ndarray.view(obj, np.ndarray), *args, **kwargs)
                return sess.watch(result) if name == "array" else result
            given = np.ndarray.view(obj, np.ndarray)
            with sess.eager():
                result = original(given, *args, **kwargs)
            if result is given:
                # NumPy returns the same array (asarray without a new dtype, ascontiguousarray of a C-contiguous
                # one): so does the tracer. (A reversed view is copied by ascontiguousarray: recorded.)
                return obj
            row = ops.CONVERSION_ROWS["array" if name == "array" else "asarray"]
            return sess.record(obj._lp.builder, row, f"np.{name}", {"a": obj, "dtype": dtype},
                               {"a": np.ndarray.view(obj, np.ndarray), "dtype": dtype}, result)
        if isinstance(obj, torch.Tensor) and getattr(obj, "_lp", None) is not None:
            with sess.eager(), torch._C.DisableTorchFunction():
                eager = original(obj, *args, **kwargs)  # np.array copies, np.asarray shares: as NumPy does
            return _tensor.to_numpy(sess, obj, f"np.{name}", dtype, eager=eager)
        if type(obj) in (list, tuple):
            builder = builder_of(obj)
            if builder is not None:
                with sess.eager():
                    result = original(plain(obj), *args, **kwargs)
                return sess.record(builder, ops.CONVERSION_ROWS["array_of_values"], f"np.{name}([...])",
                                   {"object": obj, "dtype": dtype}, {"object": plain(obj), "dtype": dtype},
                                   result)
        result = original(obj, *args, **kwargs)
        return sess.watch(result) if name == "array" else result

    converted.__wrapped__ = original  # type: ignore[attr-defined]
    converted.__name__ = name
    converted.__doc__ = original.__doc__
    return converted


def _drawing(name: str) -> Callable[..., Any]:
    """``np.random.<name>`` (the legacy functions on NumPy's global RandomState) during a trace: a draw inside a
    node is ``nondeterministic``, as torch's random functions are."""
    original = getattr(np.random, name)

    def drawn(*args: Any, **kwargs: Any) -> Any:
        sess = _session.ACTIVE
        if sess is None or sess.suspended or sess.thread != threading.get_ident():
            return original(*args, **kwargs)
        if name == "seed":  # the draws after it are the same on every run of the cell
            sess.seeded.add("np.random.seed")
            return original(*args, **kwargs)
        sess.suspended += 1  # NumPy's own np.empty for the draw is not a watched array of the cell's
        try:
            result = original(*args, **kwargs)
        finally:
            sess.suspended -= 1
        builder = sess.open_builder()
        if builder is not None:
            line, location, _ = sess.where()
            if "np.random.seed" in sess.seeded:
                builder.report("seeded-random", line, [], name=name, location=location, call=f"np.random.{name}",
                               seed="np.random.seed", severity="warning")
            else:
                builder.random_other.add((builder.report("random", line, [], name=name, location=location,
                                                         call=f"np.random.{name}").kind, line))
        return result

    drawn.__wrapped__ = original  # type: ignore[attr-defined]
    drawn.__name__ = name
    drawn.__doc__ = original.__doc__
    return drawn


def _isscalar(name: str) -> Callable[..., Any]:
    """``np.isscalar`` during a trace: True for the NumPy scalar a call returned, which the tracer holds as a marked
    0-d array (``x.sum()``), as NumPy answers for the scalar itself."""
    original = getattr(np, name)

    def isscalar(element: Any) -> bool:
        if type(element) is TracedArray and getattr(element, "_scalar", False):
            return True
        return original(element)

    isscalar.__wrapped__ = original  # type: ignore[attr-defined]
    isscalar.__name__ = "isscalar"
    isscalar.__doc__ = original.__doc__
    return isscalar


def _taking(name: str) -> Callable[..., Any]:
    """``np.take`` during a trace: a plain ndarray (a lookup table) taken at traced indices is recorded as an index
    into its constant (``indexing.take_constant``): NumPy dispatches ``np.take`` on its array alone, and its C loop
    read the indices as a constant. Anything else goes to NumPy (a traced array's ``np.take`` is dispatched)."""
    original = getattr(np, name)

    def take(a: Any, indices: Any, axis: Any = None, out: Any = None, mode: str = "raise") -> Any:
        sess = _session.active()
        if sess is None or sess.suspended or type(a) is not np.ndarray or out is not None \
                or builder_of((indices,)) is None:
            return original(a, indices, axis=axis, out=out, mode=mode)
        return _indexing.take_constant(sess, a, indices, axis, mode,
                                       f"np.take({sess.name_of(a) or 'a constant'}, ...)")

    take.__wrapped__ = original  # type: ignore[attr-defined]
    take.__name__ = name
    take.__doc__ = original.__doc__
    return take


# NumPy's legacy random functions (np.random.normal, ...): what a cell draws noise or a dropout mask with
_DRAWS = ("seed", "beta", "binomial", "bytes", "chisquare", "choice", "dirichlet", "exponential", "f", "gamma",
          "geometric", "gumbel", "hypergeometric", "laplace", "logistic", "lognormal", "logseries", "multinomial",
          "multivariate_normal", "negative_binomial", "noncentral_chisquare", "noncentral_f", "normal", "pareto",
          "permutation", "poisson", "power", "rand", "randint", "randn", "random", "random_integers",
          "random_sample", "ranf", "rayleigh", "sample", "shuffle", "standard_cauchy", "standard_exponential",
          "standard_gamma", "standard_normal", "standard_t", "triangular", "uniform", "vonmises", "wald", "weibull",
          "zipf")
_DRAWS_SEEN: list[tuple[Any, ...]] = [()]  # np.random's functions of those names when the wrappers were made
_DRAW_ORIGINALS: dict[str, Callable[..., Any]] = {}
_DRAW_WRAPPERS: dict[str, Callable[..., Any]] = {}  # made once per NumPy draw (again if NumPy's own one changed)
_DRAW_RESTORED: dict[int, Callable[..., Any]] = {}  # id of each wrapper -> NumPy's function (_uninstall's map)

_WATCHED = ("zeros", "ones", "empty", "full", "full_like", "eye", "identity")
_CONVERTED = ("array", "asarray", "ascontiguousarray")


_WRAPPERS: dict[str, Callable[..., Any]] = {}  # made once per NumPy function (rebuilt if NumPy's own one changed)


def _reducing(name: str) -> Callable[..., Any]:
    """``np.sum(W, where=m)`` during a trace, for a plain ``W`` and a traced mask ``m``: NumPy dispatches a reduction on
    its array alone and reads ``where=`` in C, so the result was a constant (found by an exploration session: off by
    0.5 once a foot lifted). ``W`` is watched, so the reduction is recorded with its mask."""
    original = getattr(np, name)

    def reduce(a: Any, *args: Any, **kwargs: Any) -> Any:
        where = kwargs.get("where")
        if where is not None and type(a) is np.ndarray:
            sess = _session.active()
            if sess is not None and not sess.suspended and builder_of((where,)) is not None:
                a = sess.watch(a)
        return original(a, *args, **kwargs)

    reduce.__wrapped__ = original  # type: ignore[attr-defined]
    reduce.__name__ = name
    reduce.__doc__ = original.__doc__
    return reduce


# the reductions that take where=: watched only in a cell that writes where= (``stores.writes_where``: a wrapper
# between the cell and NumPy costs each call the fast way to its cell line); the cell's ``W.sum(where=m)`` of a plain
# table is routed here too (``stores.WHERE_METHODS``)
_WHERE_REDUCTIONS = ("sum", "mean", "prod", "max", "min", "amax", "amin", "any", "all", "std", "var", "nansum",
                     "nanmean", "nanprod", "nanmax", "nanmin", "nanstd", "nanvar")


def _install(where: bool = False, namespace: Mapping[str, Any] | None = None) -> None:
    for names, make in ((_WATCHED, _creation), (_CONVERTED, _conversion), (("isscalar",), _isscalar),
                        (("take",), _taking), (_WHERE_REDUCTIONS if where else (), _reducing)):
        for name in names:
            original = _ORIGINAL[name] = getattr(np, name)
            wrapper = _WRAPPERS.get(name)
            if wrapper is None or wrapper.__wrapped__ is not original:  # type: ignore[attr-defined]
                wrapper = _WRAPPERS[name] = make(name)
            setattr(np, name, wrapper)
    # np.random's draws in one update of its namespace (48 names: a loop of setattr cost 30 µs a trace)
    space = np.random.__dict__
    current = tuple(map(space.get, _DRAWS))
    if current != _DRAWS_SEEN[0]:  # NumPy's own functions as first seen (or changed since): wrappers made again
        _DRAWS_SEEN[0] = current
        _DRAW_ORIGINALS.clear()
        _DRAW_ORIGINALS.update((name, fn) for name, fn in zip(_DRAWS, current, strict=True) if fn is not None)
        _DRAW_WRAPPERS.clear()
        _DRAW_WRAPPERS.update((name, _drawing(name)) for name in _DRAW_ORIGINALS)
        _DRAW_RESTORED.clear()
        _DRAW_RESTORED.update((id(_DRAW_WRAPPERS[name]), fn) for name, fn in _DRAW_ORIGINALS.items())
    space.update(_DRAW_WRAPPERS)
    _tensor.install()
    if namespace:
        try:
            _rebind(_user_modules(namespace))
        except Exception:  # noqa: BLE001 - an odd object in the namespace: the trace goes on without the rebinding
            _restore_rebound()


def _uninstall() -> dict[int, Any]:
    """Restore NumPy and torch; returns {id(wrapper): original} for every wrapper that was installed, so
    copies of them the cell bound (``from numpy import *``) can be restored too. A function the cell itself
    patched in (``np.zeros = my_zeros``) is left as the cell set it."""
    restored = _tensor.uninstall()
    _restore_rebound()
    for name, original in _ORIGINAL.items():
        wrapper = getattr(np, name)
        if getattr(wrapper, "__wrapped__", None) is original:
            setattr(np, name, original)
            restored[id(wrapper)] = original
    _ORIGINAL.clear()
    space = np.random.__dict__
    wrappers = _DRAW_WRAPPERS
    if all(map(operator.is_, map(space.get, wrappers), wrappers.values())):
        space.update(_DRAW_ORIGINALS)
        restored.update(_DRAW_RESTORED)
    else:  # a draw the cell itself replaced stays as the cell set it
        back = {name: fn for name, fn in _DRAW_ORIGINALS.items() if space.get(name) is wrappers[name]}
        space.update(back)
        restored.update((id(wrappers[name]), original) for name, original in back.items())
    return restored


# The user's own modules bound NumPy's functions before the trace (``from numpy import asarray`` in a helper module
# the cell imports): those names still hold NumPy's own function, not the trace's wrapper, and ``asarray(x)`` there
# gave a plain ndarray whose uses were constants with no hazard (found by a helper session; only the probe failed).
# During a trace, such names in the modules the cell reaches by a name (a module, or the module of a function or
# class it names; not the standard library's, not an installed package's, not this package's) hold the wrapper, and
# get NumPy's own function back after it.
_REBOUND: list[tuple[dict[str, Any], str, Any, Any]] = []  # (module namespace, name, NumPy's function, wrapper)
_MODULE_KIND: dict[int, tuple[ModuleType, bool]] = {}  # id(module) -> (module, is the user's own)


def _library_roots() -> tuple[str, ...]:
    import sysconfig

    paths = sysconfig.get_paths()
    roots = {os.path.realpath(paths[key]) + os.sep for key in ("stdlib", "platstdlib", "purelib", "platlib")
             if paths.get(key)}
    roots.update(os.path.realpath(path) + os.sep for path in sys.path if path.endswith(("site-packages",
                                                                                         "dist-packages")))
    return (*sorted(roots), os.path.realpath(_PACKAGE) + os.sep)


def _users(module: ModuleType) -> bool:
    """Whether ``module`` is the user's own (a file outside the standard library, installed packages and this
    package); remembered per module object."""
    known = _MODULE_KIND.get(id(module))
    if known is not None and known[0] is module:
        return known[1]
    try:
        path = getattr(module, "__file__", None)
    except Exception:  # noqa: BLE001 - a module object of odd make: not one of the user's files
        path = None
    own = isinstance(path, str) and not os.path.realpath(path).startswith(_LIBRARY_ROOTS)
    if len(_MODULE_KIND) >= 4_096:
        _MODULE_KIND.clear()
    _MODULE_KIND[id(module)] = (module, own)
    return own


_MAX_USER_MODULES = 256  # the user's modules a trace looks into at most (a project of its own, not a library)


def _user_modules(namespace: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The global namespaces of the user's own modules the cell reaches by a name, and of those these reach by a name
    in turn (a helper's helper: ``import geometry`` in the module the cell imports), up to ``_MAX_USER_MODULES``."""
    spaces: dict[int, dict[str, Any]] = {}
    modules = sys.modules
    pending: list[Mapping[str, Any]] = [namespace]
    while pending and len(spaces) < _MAX_USER_MODULES:
        for value in tuple(pending.pop().values()):
            kind = type(value)
            if kind is ModuleType:
                module = value
            elif kind is _FUNCTION or isinstance(value, type):
                name = getattr(value, "__module__", None)
                module = modules.get(name) if type(name) is str else None
                if module is None:
                    continue
            else:
                continue
            if id(module) not in spaces and _users(module):
                spaces[id(module)] = module.__dict__
                pending.append(module.__dict__)
    return list(spaces.values())


def _restore_rebound() -> None:
    """NumPy's own functions back in the modules ``_rebind`` changed (unless something else was bound since)."""
    for space, key, original, wrapper in _REBOUND:
        if space.get(key) is wrapper:
            space[key] = original
    _REBOUND.clear()


def _rebind(spaces: list[dict[str, Any]]) -> None:
    """In each of ``spaces``, the names bound to a NumPy function the trace wraps hold the wrapper (``_REBOUND``
    remembers them for ``_uninstall``)."""
    if not spaces:
        return
    wrapped = {id(original): (original, getattr(np, name)) for name, original in _ORIGINAL.items()}
    wrapped.update((id(original), (original, _DRAW_WRAPPERS[name])) for name, original in _DRAW_ORIGINALS.items())
    for space in spaces:
        for key, value in tuple(space.items()):
            pair = wrapped.get(id(value))
            if pair is not None and pair[0] is value and pair[1] is not value:
                space[key] = pair[1]
                _REBOUND.append((space, key, value, pair[1]))


# ------------------------------------------------------------------------------------------
# warnings raised by traced calls
# ------------------------------------------------------------------------------------------

_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep
_OURS = (_PACKAGE, "<leapp_notebook ")  # the package's files and the replay code it generates
# torch's own plumbing between a Python-level torch function and the tracer's __torch_function__
_DISPATCH = (os.path.join(os.path.dirname(os.path.abspath(torch.__file__)), "overrides.py"),)
_WARNINGS_FILE = warnings.__file__
_LIBRARY_ROOTS = _library_roots()
_FUNCTION = type(_library_roots)


def _eager_frame(filename: str, lineno: int) -> tuple[Any, Any]:
    """(the frame a warning was raised at, the frame it would come from if the cell ran without the tracer).
    NumPy and torch raise a warning at the innermost Python frame (``stacklevel`` 1, or more for torch's Python
    functions), which under the tracer is one of the hook's own: this walks out from it past the tracer's frames
    and torch's dispatch to the first frame of the cell, or of the library that made the call. (None, None) when
    the warning's frame is not on the stack (it was not raised here)."""
    frame = sys._getframe(2)
    inner = set()
    while frame is not None and not (frame.f_code.co_filename == filename and frame.f_lineno == lineno):
        if frame.f_code.co_filename != _WARNINGS_FILE:
            inner.add(frame.f_code)  # a Python function that warned with stacklevel > 1 (F.softmax)
        frame = frame.f_back
    raised = frame
    while frame is not None:
        name = frame.f_code.co_filename
        if name.startswith(_OURS) or name in _DISPATCH:
            frame = frame.f_back
        elif frame.f_code in inner:  # the same function, called by the cell: eager's stack has it once
            inner.discard(frame.f_code)
            frame = frame.f_back
        else:
            return raised, frame
    return None, None


def _at_cell(shown: Callable[..., Any]) -> Callable[..., Any]:
    """A ``warnings.showwarning`` for the time a cell runs under the tracer: a warning NumPy or torch raised inside
    the tracer's hook (``divide by zero encountered in log``) is raised again where the cell's eager run raises it,
    at the cell's line (or the library's), through the warning filters and that module's registry: shown, ignored,
    once per location or raised as an error, as without the tracer. Anything else goes to ``shown``."""

    def showwarning(message: Any, category: Any, filename: str, lineno: int, file: Any = None,
                    line: str | None = None) -> None:
        raised, frame = _eager_frame(filename, lineno) if filename.startswith(_OURS) else (None, None)
        if frame is None:
            shown(message, category, filename, lineno, file, line)
            return
        # the pass at the hook's line must not hold back the same warning at another line of the cell
        text = str(message)
        registry = raised.f_globals.get("__warningregistry__")
        if isinstance(registry, dict):
            for key in ((text, category, lineno), (text, category, 0)):
                registry.pop(key, None)
        warnings.onceregistry.pop((text, category), None)
        at = frame.f_globals
        warnings.warn_explicit(message, category, frame.f_code.co_filename, frame.f_lineno,
                               module=at.get("__name__", "<string>"),
                               registry=at.setdefault("__warningregistry__", {}), module_globals=at)

    return showwarning


# ------------------------------------------------------------------------------------------
# trace_cell
# ------------------------------------------------------------------------------------------

def _names(value: Any, what: str) -> list[str] | None:
    if value is None:
        return None
    if isinstance(value, str):
        value = [v.strip() for v in value.split(",") if v.strip()]
    if isinstance(value, Mapping):
        return list(value)
    try:
        names = list(value)
    except TypeError as exc:
        raise TraceError(f"{what} must be a list of names, got {type(value).__name__}") from exc
    for name in names:
        if not isinstance(name, str) or not name.isidentifier():
            raise TraceError(f"{what}: {name!r} is not a variable name")
    if not names:
        raise TraceError(f"{what} is empty: name at least one variable")
    return names


def message_of(exc: BaseException) -> str:
    """``str(exc)``, or what can be said when the exception's own ``__str__`` fails (a user's exception class)."""
    try:
        return str(exc)
    except Exception as failure:  # noqa: BLE001 - the user's __str__
        return f"<its message could not be made: {type(failure).__name__}: {message_of(failure)}>"


def _why(exc: BaseException) -> str:
    """What a cell error that only the tracer causes means, and the way around it."""
    if isinstance(exc, (RuntimeError, TypeError)) and "not a storage 'TracedArray'" in message_of(exc):
        # torch's legacy constructors (torch.Tensor(x), torch.FloatTensor(x)) take the tracer's array type, which
        # lets torch's other calls reach the recorder, for a tensor and find no storage; nothing can wrap them
        return (". torch.Tensor(x) and the legacy types (torch.FloatTensor(x), ...) cannot take a traced array: "
                "use torch.from_numpy(x) (shares memory, keeps the dtype) or torch.as_tensor(x, "
                "dtype=torch.float32), which are recorded")
    return ""


def trace_cell(source: str, namespace: dict[str, Any] | None = None, *, inputs: Any = None,
               outputs: Any = None, node: str = "node", profile: str = "leapp") -> "Trace":
    """Trace ``source`` (a notebook cell's code) into one torch.fx graph per node.

    ``inputs``: names of arrays in ``namespace`` to trace, or a mapping name -> array; ``outputs``:
    names read after the cell runs. With neither, the cell declares its nodes with ``annotate``.
    """
    if not isinstance(source, str):
        raise TraceError(f"source must be the cell's code as a str, got {type(source).__name__}")
    if profile not in PROFILES:
        raise TraceError(f"profile={profile!r}: use 'leapp' (what LEAPP 0.7.2 records) or 'full'")
    if _session.ACTIVE is not None:
        raise TraceError("a trace is already running: trace_cell cannot be nested inside a traced cell")
    if namespace is None:
        namespace = {"np": np}
    elif not isinstance(namespace, dict):
        raise TraceError(f"namespace must be a dict, got {type(namespace).__name__}")
    input_names = _names(inputs, "inputs")
    output_names = _names(outputs, "outputs")
    if (input_names is None) != (output_names is None):
        raise TraceError("give both inputs= and outputs=, or neither (then the cell declares nodes with annotate)")
    if not isinstance(node, str) or not node:
        raise TraceError(f"node must be a non-empty string, got {node!r}")
    input_values: dict[str, Any] = {}
    if input_names is not None:
        for name in input_names:
            if isinstance(inputs, Mapping):
                input_values[name] = inputs[name]
            elif name in namespace:
                input_values[name] = namespace[name]
            else:
                raise TraceError(f"input '{name}' is not defined in the namespace." + close_matches(name, namespace))
    try:
        code, filename = _compiled(source, namespace)
    except UnicodeEncodeError as exc:
        raise TraceError(f"the cell's text holds {exc.object[exc.start:exc.end]!r} at position {exc.start}, a "
                         "character Python cannot compile (a lone surrogate): remove it") from None
    except SyntaxError as exc:
        raise CellError(f"line {exc.lineno}: SyntaxError: {exc.msg}", exc.lineno, exc.text) from exc
    linecache.cache[filename] = (len(source), None, cell_lines(source, keepends=True), filename)

    namespace.setdefault("np", np)
    namespace["annotate"] = annotate
    snapshot = dict(namespace)
    if input_names is not None:
        for name in input_names:
            snapshot[name] = input_values[name]
    aliases: dict[str, Any] = {}
    sess = Session(source, filename, code, profile, TracedArray, on_first_tensor=_tensor.watch_modules)
    sess.namespace = namespace
    nodes: list[Node] = []
    # Tracing allocates many small long-lived objects (fx nodes, meta dicts); the cyclic collector's
    # passes over them cost more than the recording itself, and nothing here makes reference cycles
    # that must be freed before the trace ends.
    gc_was_enabled = gc.isenabled()
    cell_ran = False  # the collector stays off through finish() too when the cell ran (finish builds the graph)
    gc.disable()
    _install(where=_stores.writes_where(source), namespace=namespace)
    _session.ACTIVE = sess
    mode = _tensor.TorchRecorder()
    mode.__enter__()
    shown = warnings.showwarning  # a warning raised inside the hook is shown at the cell's line
    at_cell = warnings.showwarning = _at_cell(shown)
    try:
        if input_names is not None:
            builder = sess.builder(node)
            for name in input_names:
                aliases[name] = namespace[name] = builder.add_input(name, input_values[name])
        try:
            exec(code, namespace)
        except TraceError as exc:
            line = _cell_line(exc, filename)
            raise TraceError(f"line {line}: {exc}" if line is not None else str(exc)) from exc
        except (KeyboardInterrupt, SystemExit):
            raise  # an interrupt or an exit is the caller's, not a cell error; the finally below restores
        except BaseException as exc:
            line = _cell_line(exc, filename)
            text = sess.line_text(line).strip()
            raise CellError(f"line {line}: {type(exc).__name__}: {message_of(exc)}{_why(exc)}"
                            + (f"\n    {text}" if text else ""),
                            line, text) from exc
        if output_names is not None:
            values = {}
            for name in output_names:
                if name not in namespace:
                    raise TraceError(f"output '{name}' is not defined after the cell ran."
                                     + close_matches(name, namespace))
                values[name] = namespace[name]
            sess.builders[node].close(values, "jit")
        if not sess.builders:
            raise TraceError("the cell declared no node: pass inputs=[...] and outputs=[...], or call "
                             "annotate.input_tensors(...) and annotate.output_tensors(...) in the cell")
        guards = _stores.guarded(source)
        if guards:
            _report_guarded(sess, guards)
        cell_ran = True
    finally:
        mode.__exit__(None, None, None)
        _session.ACTIVE = None
        if warnings.showwarning is at_cell:  # unless the cell set its own
            warnings.showwarning = shown
        wrappers = _uninstall()
        for name, alias in aliases.items():  # the caller's own input objects, not the traced aliases
            if namespace.get(name) is alias and name in snapshot:
                namespace[name] = snapshot[name]
        _clean_namespace(namespace, filename, wrappers)
        if gc_was_enabled and not cell_ran:
            gc.enable()
    try:
        nodes = sess.finish()
    finally:
        if gc_was_enabled:
            gc.enable()
    return Trace(nodes, source=source, namespace=snapshot, profile=profile,
                 explicit=(input_names, output_names, node) if input_names is not None else None)


_CODE: dict[str, tuple[Any, str]] = {}  # source -> (code, filename): a re-run cell or a retrace compiles nothing


_SINK: list[Any] = []  # os.devnull opened for writing, once: where a quiet re-run's output goes


class _Quiet:
    """While entered, and when ``on``: stdout and stderr go to os.devnull (a class, not a generator: the probe
    enters it on every re-run of the cell)."""

    __slots__ = ("on", "shown")

    def __init__(self, on: bool):
        self.on = on

    def __enter__(self) -> None:
        if self.on:
            if not _SINK:
                _SINK.append(open(os.devnull, "w", encoding="utf-8"))  # noqa: SIM115 - kept open for the process
                atexit.register(_SINK[0].close)  # (closed at exit: no ResourceWarning)
            self.shown = sys.stdout, sys.stderr
            sys.stdout = sys.stderr = _SINK[0]

    def __exit__(self, *exc: Any) -> None:
        if self.on:
            sys.stdout, sys.stderr = self.shown


def _compiled(source: str, namespace: dict[str, Any] | None = None) -> tuple[Any, str]:
    """The cell's code object and its file name (one per distinct source and set of the names it indexes that are
    bound to a plain ndarray in ``namespace``, ``stores.FROM``; the frame walker and the namespace cleanup recognise
    the cell's own code by it)."""
    tables = _stores.tables(source, namespace) if namespace else frozenset()
    found = _CODE.get((source, tables))
    if found is None:
        filename = f"<leapp-cell-{next(_COUNTER)}>"
        found = _stores.compile_cell(source, filename, tables), filename
        if len(_CODE) >= 256:
            _CODE.pop(next(iter(_CODE)))
        _CODE[(source, tables)] = found
    return found


def _cell_line(exc: BaseException, filename: str) -> int | None:
    line = None
    for frame, lineno in traceback.walk_tb(exc.__traceback__):
        if frame.f_code.co_filename == filename:
            line = lineno
    return line


# torch calls whose exceptions depend on the values (a singular matrix, an index out of range), not the shapes alone
_VALUE_RAISING = frozenset({"linalg_inv", "linalg_inv_ex", "inverse", "linalg_solve", "solve", "linalg_cholesky",
                            "cholesky", "cholesky_solve", "cholesky_inverse", "lu_solve", "linalg_lu_solve",
                            "gather", "take", "index_select", "take_along_dim", "index_put", "index_put_", "scatter",
                            "scatter_", "scatter_add", "embedding", "multinomial", "bincount", "one_hot"})


def _raises_on_values(builder: Any, node: Any) -> bool:
    """Whether the recorded op ``node`` may raise for some values of inputs of the traced shapes: a call of
    ``_VALUE_RAISING``, an index by a traced tensor, a module holding an embedding, a call not recorded."""
    target = node.target
    if node.op == "get_attr":  # a baked result of a call not recorded (np.linalg.inv in leapp): it may have raised
        return facts(node).const == "baked"
    if node.op == "call_module":
        try:
            module = builder.root.get_submodule(target)
        except AttributeError:
            return True
        return any("Embedding" in type(sub).__name__ for sub in module.modules())
    name = target if isinstance(target, str) else getattr(target, "__name__", "")
    if name in _VALUE_RAISING:
        return True
    if target is operator.getitem and len(node.args) > 1:
        key = node.args[1]
        return any(isinstance(part, torch.fx.Node) for part in (key if isinstance(key, tuple) else (key,)))
    return False


def _report_guarded(sess: Session, guards: tuple[_stores.Guard, ...]) -> None:
    """A ``try`` block around recorded ops whose handler catches an exception of the data (``except
    FloatingPointError:`` under ``np.errstate(divide="raise")``, ``except IndexError:``, ``except LinAlgError:``): the
    graph holds the path the traced inputs took, through the try body or the handler, never both (an
    ``exception-branch`` error at the ``try``). In a function the cell defines, any op of the function counts (its ops
    are recorded at the call's line)."""
    # a cell that makes NumPy raise on values (errstate, seterr) or warnings errors: any op may raise then
    raises_on_values = _stores.RAISES_ON_VALUES.search(sess.source) is not None \
        or "raise" in np.geterr().values() \
        or any(f[0] == "error" and issubclass(RuntimeWarning, f[2]) for f in warnings.filters)  # (by earlier cells)
    for builder in sess.builders.values():
        builder.graph.flush()
        by_line: dict[int, list[str]] = {}
        by_helper: dict[str, list[str]] = {}
        for node in builder.graph.nodes:
            if node.op in ("call_function", "call_method", "call_module"):
                record = facts(node)
                if record.line is not None:
                    by_line.setdefault(record.line, []).append(node.name)
                if record.helper:
                    by_helper.setdefault(record.helper, []).append(node.name)
        by_name = {node.name: node for node in builder.graph.nodes}
        for guard in guards:
            inside = by_helper.get(guard.function, []) if guard.function is not None else \
                [name for line in guard.lines for name in by_line.get(line, ())]
            # the handler ran during the trace (its lines recorded ops), or the guard is in a function of the cell
            # (its ops are recorded at the call's line): what raised is unknown, maybe the values
            handled = guard.function is not None or any(line >= guard.handler and by_line.get(line)
                                                        for line in guard.lines)
            if inside and not handled and not _stores.raised_by_values(guard.caught) and not raises_on_values \
                    and not any(_raises_on_values(builder, by_name[name]) for name in inside):
                continue  # (a ValueError of np.concatenate: shapes are fixed per node, so is the path taken)
            if inside:
                builder.report("exception-branch", guard.line, inside[:8], pending_reach=True, caught=guard.caught,
                               handler=guard.handler, first=guard.lines.start, last=guard.lines.stop - 1)


def _clean_namespace(namespace: dict[str, Any], filename: str, wrappers: dict[int, Any]) -> None:
    """Nothing of the tracer survives the trace: every traced array left in the namespace (in its lists,
    tuples, named tuples and dicts, in the closures and defaults of functions the cell defined, and in the
    attributes of objects of classes the cell defined) becomes plain NumPy, tensors lose their provenance, and
    tracer wrappers the cell bound by name go back to NumPy's own functions."""
    for key, value in list(namespace.items()):
        if key == "__builtins__":
            continue
        if key.startswith("__leapp_value") and _stores.HELD_VALUE.fullmatch(key):  # a value the hook was given
            del namespace[key]
            continue
        original = wrappers.get(id(value))
        if original is not None:
            namespace[key] = original
            continue
        namespace[key] = plain(value, depth=4, in_place=True)
        _release(namespace[key], filename)


def _release(value: Any, filename: str) -> None:
    """Plain values inside a function or an object the cell defined (closures, defaults, attributes)."""
    if type(value) is ModuleType:  # (no class the cell defined; and NumPy's module answers a missing name slowly)
        return
    code = getattr(value, "__code__", None)
    if code is not None and code.co_filename == filename:
        for cell in value.__closure__ or ():
            try:
                cell.cell_contents = plain(cell.cell_contents, depth=4, in_place=True)
            except ValueError:  # an empty cell
                continue
        if value.__defaults__:
            value.__defaults__ = plain(value.__defaults__, depth=4, in_place=True)
        return
    attributes = getattr(value, "__dict__", None)
    if type(attributes) is dict and _defined_in(type(value), filename):
        plain(attributes, depth=4, in_place=True)


def _defined_in(cls: type, filename: str) -> bool:
    return any(getattr(getattr(member, "__code__", None), "co_filename", None) == filename
               for member in vars(cls).values())


# ------------------------------------------------------------------------------------------
# Trace
# ------------------------------------------------------------------------------------------

class Trace:
    """The result of tracing one cell: its nodes, their hazards, probe and export."""

    def __init__(self, nodes: Iterable[Node], *, source: str, namespace: dict[str, Any], profile: str,
                 explicit: tuple[list[str], list[str], str] | None):
        self.nodes: dict[str, Node] = {n.name: n for n in nodes}
        self.source = source
        self.profile = profile
        self._namespace = namespace
        self._explicit = explicit
        self.last_probe: Any = None
        self._replay_code: tuple[str, Any] | None = None  # compiled once: the probe re-runs the cell often

    @property
    def hazards(self) -> list[Hazard]:
        return [h for node in self.nodes.values() for h in node.hazards]

    @property
    def ok(self) -> bool:
        return not any(h.severity == "error" for h in self.hazards)

    def run_eager(self, inputs: Mapping[str, Mapping[str, np.ndarray]],
                  given: dict[str, dict[str, tuple[int, ...]]] | None = None, *,
                  quiet: bool = False) -> dict[str, dict[str, Any]]:
        """Re-run the cell untraced with ``inputs[node][name]`` in place of the traced inputs.

        Returns ``{node: {output: value}}``. The cell runs in a shallow copy of its original namespace.
        ``given``, when passed, receives ``{node: {input: shape}}``: the shapes of the arrays and tensors the cell
        itself gave each node's ``input_tensors`` in this run, before ``inputs`` replaced them. ``quiet``: what the
        cell prints to stdout and stderr is dropped (the probe and the export's check run it many times; its output
        was shown once, when it was traced).
        """
        global _REPLAY
        namespace = dict(self._namespace)
        namespace["annotate"] = annotate
        if self._explicit is not None:
            input_names, output_names, node = self._explicit
            for name in input_names:
                if name in inputs.get(node, {}):
                    namespace[name] = copy_value(inputs[node][name])
        replay = _Replay(inputs)
        previous = _REPLAY
        _REPLAY = replay
        if self._replay_code is None:
            name = f"<leapp-replay-{next(_COUNTER)}>"
            self._replay_code = (name, compile(self.source, name, "exec"))
        filename, code = self._replay_code
        linecache.cache[filename] = (len(self.source), None, cell_lines(self.source, keepends=True), filename)
        try:
            with _Quiet(quiet):
                exec(code, namespace)
        except Exception as exc:
            line = _cell_line(exc, filename)
            raise CellError(f"line {line}: {type(exc).__name__}: {exc} (while re-running the cell eagerly)",
                            line) from exc
        finally:
            _REPLAY = previous
        if given is not None:
            given.update(replay.given)
        if self._explicit is not None:
            input_names, output_names, node = self._explicit
            return {node: {name: namespace.get(name) for name in output_names}}
        return replay.outputs

    def retrace(self, inputs: Mapping[str, Mapping[str, np.ndarray]], *, quiet: bool = False) -> "Trace":
        """Trace the cell again, same profile, with ``inputs[node][name]`` in place of the traced inputs.

        Constants that differ between two traces of the same cell depend on the inputs: the probe
        uses this to name the baked constants behind a failing output. ``quiet``: as for ``run_eager``.
        """
        global _REPLAY
        namespace = dict(self._namespace)
        if self._explicit is not None:
            input_names, output_names, node = self._explicit
            overrides = dict(inputs.get(node, {}))
            values = {name: overrides.get(name, namespace[name]) for name in input_names}
            with _Quiet(quiet):
                return trace_cell(self.source, namespace, inputs=values, outputs=output_names, node=node,
                                  profile=self.profile)
        previous = _REPLAY
        _REPLAY = _Replay(inputs)
        try:
            with _Quiet(quiet):
                return trace_cell(self.source, namespace, profile=self.profile)
        finally:
            _REPLAY = previous

    def probe(self, n: int = 16, seed: int | None = None, ranges: Any = None, progress: Any = None) -> Any:
        from .probe import probe

        self.last_probe = probe(self, n=n, seed=seed, ranges=ranges, progress=progress)
        return self.last_probe

    def export(self, directory: Any, *, formats: Iterable[str] = ("jit",), force: bool = False,
               name: str | None = None, progress: Any = None) -> list[Any]:
        from .export import export

        return export(self, directory, formats=formats, force=force, name=name, progress=progress)

    def save_graph_model(self, path: Any) -> Path:
        """Write the full graph model (every vertex: the notebook output carries a compacted one above
        ``render.model.COMPACT_ABOVE`` vertices) as JSON to ``path``; returns the path."""
        from .render import graph_model

        target = Path(path)
        staging = target.with_name(f".{target.name}.tmp")
        staging.write_text(json.dumps(graph_model(self)), encoding="utf-8")
        os.replace(staging, target)
        return target

    def to_dot(self) -> str:
        from .render import to_dot

        return to_dot(self)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        from .render import mimebundle

        return mimebundle(self)

    def __repr__(self) -> str:
        counts = {"error": 0, "warning": 0}
        for h in self.hazards:
            counts[h.severity] += 1
        return (f"<Trace profile={self.profile!r} nodes={list(self.nodes)} errors={counts['error']} "
                f"warnings={counts['warning']}>")

    def __rich__(self) -> Any:
        """The report as a rich renderable, so a rich console lays it out at its own width."""
        from .render import renderable

        return renderable(self)

    def __str__(self) -> str:
        try:
            from .render import to_text
        except ImportError:
            return repr(self)
        return to_text(self)
