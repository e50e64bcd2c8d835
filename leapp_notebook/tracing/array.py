"""TracedArray: the ndarray subclass that carries a graph value through the user's NumPy code.

Every NumPy hook (ufuncs, ``__array_function__``, indexing, iteration, conversions, the methods) lands
here, computes NumPy's own result on plain arrays (so the cell behaves exactly as it would untraced),
and asks the session to record it. A TracedArray is in one of three states:

* traced: ``_lb`` (its node builder) and ``_ln`` (its fx node) are set;
* watch: created by ``np.zeros``/``np.array``/... inside the trace, holding no traced data yet, so that
  ``out[1:] = traced`` on it is seen (a plain ndarray's ``__setitem__`` cannot be hooked);
* lost: derived from traced data by an ndarray method the tracer does not record (``_lost`` says how);
  it is baked wherever it is used, and reported.

Outside an active session every hook behaves as plain NumPy.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import ops
from . import session as _session


def _plain(value: Any) -> Any:
    """The NumPy value without tracing: TracedArrays become base-class views, containers recurse."""
    if isinstance(value, TracedArray):
        return value.view(np.ndarray)
    if type(value) is list or type(value) is tuple:
        if not any(isinstance(v, (TracedArray, list, tuple)) for v in value):
            return value
        return type(value)(_plain(v) for v in value)
    return value


def _find_builder(values: Any) -> Any:
    """The node builder of the first traced (or lost) array among ``values``, else None."""
    for value in values:
        if isinstance(value, TracedArray):
            if value._lb is not None:
                return value._lb
        elif type(value) is list or type(value) is tuple:
            found = _find_builder(value)
            if found is not None:
                return found
    return None


def _as_watch(result: Any) -> Any:
    if type(result) is np.ndarray and result.dtype.kind in "biufc":
        watch = result.view(TracedArray)
        watch._lfp = _session.fingerprint(result)
        return watch
    return result


def _bind(names: tuple[str, ...], args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
    bound: dict[str, Any] = {}
    for i, name in enumerate(names):
        if name.startswith("*"):
            bound[name[1:]] = tuple(args[i:])
            break
        if i >= len(args):
            break
        bound[name] = args[i]
    bound.update(kwargs)
    return bound


class TracedArray(np.ndarray):
    """An ndarray whose operations are recorded in a torch.fx graph while a trace is active."""

    _lb: Any = None     # the NodeBuilder this value belongs to
    _ln: Any = None     # its fx node
    _lost: str | None = None
    _lfp: int | None = None  # watch arrays: fingerprint of the contents the tracer knows about
    _lost_line: int | None = None
    _lver: int = 0  # the write count of its memory owner when it got its node (see Session.bump)

    def __array_finalize__(self, obj: Any) -> None:
        # Reached only for views NumPy makes itself (ndarray methods we do not override); the
        # tracer's own wrapping sets the attributes right after.
        if isinstance(obj, TracedArray) and obj._lb is not None:
            self._lb = obj._lb
            self._ln = None
            sess = _session.ACTIVE
            line = sess.where()[0] if sess is not None else None
            self._lost = f"derived at line {line} by an ndarray method the tracer does not record"
            self._lost_line = line

    # ---------------------------------------------------------------- NumPy protocols
    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
        sess = _session.ACTIVE
        out = kwargs.get("out")
        plain_inputs = tuple([v.view(np.ndarray) if isinstance(v, TracedArray) else _plain(v) for v in inputs])
        plain_kwargs = {k: _plain(v) for k, v in kwargs.items()} if kwargs else kwargs
        if sess is None or sess.suspended:
            result = getattr(ufunc, method)(*plain_inputs, **plain_kwargs)
            return result
        builder = _find_builder(inputs)
        if method == "__call__":
            row = ops.UFUNC_ROWS.get(ufunc)
            name = row.numpy if row is not None else f"np.{ufunc.__name__}"
            names = ops.OPERAND_NAMES if len(inputs) <= len(ops.OPERAND_NAMES) else \
                [f"x{i}" for i in range(len(inputs))]
            params = dict(zip(names, inputs, strict=False))
            eager_params = dict(zip(names, plain_inputs, strict=False))
        elif method == "reduce" and ufunc in ops.REDUCE_UFUNCS:
            fname = ops.REDUCE_UFUNCS[ufunc]
            row = ops.METHOD_ROWS[fname]
            name = f"np.{ufunc.__name__}.reduce"
            params = {"a": inputs[0]}
            eager_params = {"a": plain_inputs[0]}
            if "axis" not in kwargs:
                params["axis"] = eager_params["axis"] = 0
        else:
            row = None
            name = f"np.{ufunc.__name__}.{method}"
            params = {f"x{i}": v for i, v in enumerate(inputs)}
            eager_params = {f"x{i}": v for i, v in enumerate(plain_inputs)}
        for key, value in kwargs.items():
            if key == "out":
                continue
            params[key] = value
            eager_params[key] = plain_kwargs[key]
        with sess.eager():
            result = getattr(ufunc, method)(*plain_inputs, **plain_kwargs)
        if out is not None:
            # In-place forms (x += 1, np.add(a, b, out=a)): rebind the out array to the new value.
            target = out[0] if isinstance(out, tuple) else out
            if builder is None:
                if isinstance(target, TracedArray) and target._lb is None:
                    target._lfp = _session.fingerprint(target.view(np.ndarray))
                return out if isinstance(out, TracedArray) or not isinstance(out, tuple) else out[0]
            recorded = sess.record(builder, row, name, params, eager_params,
                                   result.view(np.ndarray) if isinstance(result, TracedArray) else result,
                                   extra={"ufunc": ufunc})
            if isinstance(target, TracedArray):
                target._lb, target._ln, target._lost, target._lfp = recorded._lb, recorded._ln, recorded._lost, None
                target._lver = sess.bump(target)
            else:
                sess.written_into_plain(builder, target, name)
            return target
        if builder is None:
            return _as_watch(result) if _has_watch(inputs) else result
        extra = {"ufunc": ufunc} if method != "__call__" else {"ufunc": ufunc, "call": True}
        return sess.record(builder, row, name, params, eager_params, result, extra=extra)

    def __array_function__(self, func: Any, types: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        sess = _session.ACTIVE
        plain_args = tuple(_plain(v) for v in args)
        plain_kwargs = {k: _plain(v) for k, v in kwargs.items()} if kwargs else kwargs
        if sess is None or sess.suspended:
            return func(*plain_args, **plain_kwargs)
        with sess.eager():
            result = func(*plain_args, **plain_kwargs)
        builder = _find_builder(args) or _find_builder(tuple(kwargs.values()))
        if builder is None:
            if func in _session.METADATA_FUNCTIONS:
                return result
            return _as_watch(result) if _has_watch(args) else result
        row = ops.FUNCTION_ROWS.get(func)
        if row is not None:
            params = _bind(row.names, args, kwargs)
            eager_params = _bind(row.names, plain_args, plain_kwargs)
            name = row.numpy
        else:
            params = {f"arg{i}": v for i, v in enumerate(args)} | dict(kwargs)
            eager_params = {f"arg{i}": v for i, v in enumerate(plain_args)} | dict(plain_kwargs)
            module = getattr(func, "__module__", "numpy") or "numpy"
            prefix = "np." + module.split(".", 1)[1] + "." if module.startswith("numpy.") and not \
                module.startswith("numpy._") and "._" not in module else "np."
            name = prefix + getattr(func, "__name__", repr(func))
        if func in _session.METADATA_FUNCTIONS:
            return result
        return sess.record(builder, row, name, params, eager_params, result)

    # ---------------------------------------------------------------- methods
    def _method(self, mname: str, args: tuple[Any, ...], kwargs: dict[str, Any],
                eager_fn: Any = None) -> Any:
        sess = _session.ACTIVE
        plain_self = self.view(np.ndarray)
        plain_args = tuple(_plain(v) for v in args)
        plain_kwargs = {k: _plain(v) for k, v in kwargs.items()}
        if eager_fn is None:
            eager_fn = getattr(np.ndarray, mname)
        if sess is None or sess.suspended:
            return eager_fn(plain_self, *plain_args, **plain_kwargs)
        with sess.eager():
            result = eager_fn(plain_self, *plain_args, **plain_kwargs)
        builder = self._lb or _find_builder(args)
        if builder is None:
            return _as_watch(result)
        row = ops.METHOD_ROWS.get(mname)
        names = row.names if row is not None else ("a",)
        params = _bind(names, (self, *args), kwargs)
        eager_params = _bind(names, (plain_self, *plain_args), plain_kwargs)
        return sess.record(builder, row, f"ndarray.{mname}", params, eager_params, result)

    def sum(self, *a: Any, **k: Any) -> Any: return self._method("sum", a, k)
    def prod(self, *a: Any, **k: Any) -> Any: return self._method("prod", a, k)
    def mean(self, *a: Any, **k: Any) -> Any: return self._method("mean", a, k)
    def std(self, *a: Any, **k: Any) -> Any: return self._method("std", a, k)
    def var(self, *a: Any, **k: Any) -> Any: return self._method("var", a, k)
    def max(self, *a: Any, **k: Any) -> Any: return self._method("max", a, k)
    def min(self, *a: Any, **k: Any) -> Any: return self._method("min", a, k)
    def all(self, *a: Any, **k: Any) -> Any: return self._method("all", a, k)
    def any(self, *a: Any, **k: Any) -> Any: return self._method("any", a, k)
    def argmax(self, *a: Any, **k: Any) -> Any: return self._method("argmax", a, k)
    def argmin(self, *a: Any, **k: Any) -> Any: return self._method("argmin", a, k)
    def cumsum(self, *a: Any, **k: Any) -> Any: return self._method("cumsum", a, k)
    def cumprod(self, *a: Any, **k: Any) -> Any: return self._method("cumprod", a, k)
    def swapaxes(self, *a: Any, **k: Any) -> Any: return self._method("swapaxes", a, k)
    def squeeze(self, *a: Any, **k: Any) -> Any: return self._method("squeeze", a, k)
    def clip(self, *a: Any, **k: Any) -> Any: return self._method("clip", a, k)
    def round(self, *a: Any, **k: Any) -> Any: return self._method("round", a, k)
    def nonzero(self, *a: Any, **k: Any) -> Any: return self._method("nonzero", a, k)
    def diagonal(self, *a: Any, **k: Any) -> Any: return self._method("diagonal", a, k)
    def trace(self, *a: Any, **k: Any) -> Any: return self._method("trace", a, k)
    def dot(self, *a: Any, **k: Any) -> Any: return self._method("dot", a, k)
    def argsort(self, *a: Any, **k: Any) -> Any: return self._method("argsort", a, k)
    def copy(self, *a: Any, **k: Any) -> Any: return self._method("copy", a, k)
    def astype(self, *a: Any, **k: Any) -> Any: return self._method("astype", a, k)
    def flatten(self, *a: Any, **k: Any) -> Any: return self._method("flatten", a, k)
    def ravel(self, *a: Any, **k: Any) -> Any: return self._method("ravel", a, k)

    def reshape(self, *shape: Any, **k: Any) -> Any:
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        return self._method("reshape", (shape,), k, lambda a, s, **kw: np.ndarray.reshape(a, s, **kw))

    def transpose(self, *axes: Any) -> Any:
        if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], (tuple, list))):
            axes = axes[0]
        axes = tuple(axes) if axes else None
        return self._method("transpose", (axes,), {},
                            lambda a, ax: np.ndarray.transpose(a) if ax is None else np.ndarray.transpose(a, ax))

    @property
    def T(self) -> Any:  # noqa: N802 - NumPy's name
        return self._method("T", (), {}, lambda a: a.T)

    @property
    def real(self) -> Any:
        return self._method("real", (), {}, lambda a: a.real)

    @property
    def imag(self) -> Any:
        return self._method("imag", (), {}, lambda a: a.imag)

    def sort(self, *a: Any, **k: Any) -> None:
        result = self._method("sort", a, k, lambda arr, *aa, **kk: np.sort(arr, *aa, **kk))
        _session.rebind_in_place(self, result)

    def fill(self, value: Any) -> None:
        result = self._method("fill", (value,), {}, lambda arr, v: np.full_like(arr, v))
        _session.rebind_in_place(self, result)

    def _in_place(self, mname: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """In-place ndarray methods the tracer does not record (put, partition, resize, ...): the array
        changes eagerly, so from here on its graph value is unknown and it is baked where used."""
        result = getattr(np.ndarray, mname)(self.view(np.ndarray), *[_plain(a) for a in args],
                                            **{k: _plain(v) for k, v in kwargs.items()})
        _session.modified_in_place(self, f"ndarray.{mname}")
        return result

    def put(self, *a: Any, **k: Any) -> Any: return self._in_place("put", a, k)
    def partition(self, *a: Any, **k: Any) -> Any: return self._in_place("partition", a, k)
    def resize(self, *a: Any, **k: Any) -> Any: return self._in_place("resize", a, k)
    def byteswap(self, *a: Any, **k: Any) -> Any: return self._in_place("byteswap", a, k)
    def setfield(self, *a: Any, **k: Any) -> Any: return self._in_place("setfield", a, k)

    @property
    def flat(self) -> Any:
        _session.extracted(self, "broken-chain", "x.flat yields NumPy scalars", severity="error")
        return self.view(np.ndarray).flat

    # ---------------------------------------------------------------- indexing
    def __getitem__(self, key: Any) -> Any:
        sess = _session.ACTIVE
        plain_key = _plain(key)
        if sess is None or sess.suspended:
            return self.view(np.ndarray)[plain_key]
        return sess.getitem(self, key, plain_key)

    def __setitem__(self, key: Any, value: Any) -> None:
        sess = _session.ACTIVE
        if sess is None or sess.suspended:
            self.view(np.ndarray)[_plain(key)] = _plain(value)
            return
        sess.setitem(self, key, value)

    def __iter__(self) -> Any:
        sess = _session.ACTIVE
        if sess is None or sess.suspended or self._lb is None:
            plain = self.view(np.ndarray)
            if self._lb is None and sess is not None and self.ndim > 1:
                return iter([_as_watch(np.array(row)) for row in plain])
            return iter(plain)
        return sess.iterate(self)

    # ---------------------------------------------------------------- values leaving the graph
    def __bool__(self) -> bool:
        value = bool(self.view(np.ndarray))
        _session.extracted(self, "data-dependent-branch", f"truth value ({value})")
        return value

    def __float__(self) -> float:
        value = float(self.view(np.ndarray))
        _session.extracted(self, "value-extraction", f"float() = {value!r}")
        return value

    def __int__(self) -> int:
        value = int(self.view(np.ndarray))
        _session.extracted(self, "value-extraction", f"int() = {value!r}")
        return value

    def __index__(self) -> int:
        value = self.view(np.ndarray).__index__()
        _session.extracted(self, "value-extraction", f"used as an index/size ({value!r})")
        return value

    def __complex__(self) -> complex:
        value = complex(self.view(np.ndarray))
        _session.extracted(self, "value-extraction", f"complex() = {value!r}")
        return value

    def item(self, *args: Any) -> Any:
        value = self.view(np.ndarray).item(*args)
        _session.extracted(self, "value-extraction", f".item() = {value!r}")
        return value

    def tolist(self) -> Any:
        value = self.view(np.ndarray).tolist()
        _session.extracted(self, "value-extraction", ".tolist()")
        return value

    def __contains__(self, value: Any) -> bool:
        found = value in self.view(np.ndarray)
        _session.extracted(self, "data-dependent-branch", f"`in` test ({found})")
        return found

    def __repr__(self) -> str:
        return repr(self.view(np.ndarray))

    def __str__(self) -> str:
        return str(self.view(np.ndarray))

    def __format__(self, spec: str) -> str:
        return format(self.view(np.ndarray), spec)

    def __reduce__(self) -> Any:
        return self.view(np.ndarray).__reduce__()

    def __deepcopy__(self, memo: Any) -> np.ndarray:
        return self.view(np.ndarray).copy()


def _has_watch(values: Any) -> bool:
    for value in values:
        if isinstance(value, TracedArray):
            return True
        if type(value) is list or type(value) is tuple:
            if _has_watch(value):
                return True
    return False
