"""TracedArray: the ndarray subclass that carries a graph value through the user's NumPy code.

Every NumPy hook (ufuncs, ``__array_function__``, indexing, iteration, conversions, the methods) lands
here, computes NumPy's own result on plain arrays (so the cell behaves exactly as it would untraced),
and asks the session to record it. Its ``_lp`` is its provenance (tracing/provenance.py): traced, watch
(created by ``np.zeros``/``np.array``/... inside the trace, holding no traced data yet, so that
``out[1:] = traced`` on it is seen: a plain ndarray's ``__setitem__`` cannot be hooked) or lost (derived
by an ndarray method the tracer does not record; baked wherever it is used, and reported).

Outside an active session every hook behaves as plain NumPy.
"""

from __future__ import annotations

import math
import operator
import sys
from _thread import get_ident
from collections import deque
from typing import Any

import numpy as np
from numpy import ndarray  # not np.ndarray, torch.Tensor, torch.fx: their modules' __getattr__ defeats the lookup cache

from . import indexing, leapp_calls, ops, replay
from . import session as _session
from .provenance import _SCALARS as _AS_IS  # what plain() gives back as it is
from .provenance import (
    PURE,
    Provenance,
    array_dtype,
    array_shape,
    builder_of,
    fingerprint,
    has_traced,
    plain,
    root,
    written_version,
)

_STARS: dict[tuple[str, ...], int] = {}  # per names tuple: the index of its ``*name``, or -1


def _bind(names: tuple[str, ...], args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
    """Positional ``args`` bound to ``names`` (a ``*name`` takes the rest, as a tuple), then ``kwargs``."""
    star = _STARS.get(names)
    if star is None:
        star = _STARS[names] = next((i for i, name in enumerate(names) if name.startswith("*")), -1)
    # zip without strict=: the keyword alone costs about 200 ns a call (this binds every function call recorded)
    if star < 0 or len(args) < star:
        bound = dict(zip(names, args))  # noqa: B905 - fewer args than names is the rule
    else:
        bound = dict(zip(names[:star], args))  # noqa: B905
        bound[names[star][1:]] = tuple(args[star:])
    if kwargs:
        bound.update(kwargs)
    return bound


# NumPy's own, without TracedArray's
_SET_SHAPE, _SET_DTYPE, _SET_STRIDES = ndarray.shape.__set__, ndarray.dtype.__set__, ndarray.strides.__set__
_GET_STRIDES = ndarray.strides.__get__
_GET_SIZE, _LEN = ndarray.size.__get__, ndarray.__len__
_VIEW = ndarray.view  # (TracedArray.view answers x's own value as a traced array)


def _view_arguments(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, Any]:
    """The ``dtype`` and ``type`` of an ``x.view(...)`` call as NumPy reads them: one positional argument that is an
    ndarray subclass is the type, anything else the dtype."""
    dtype, kind = kwargs.get("dtype"), kwargs.get("type")
    if args:
        first = args[0]
        if len(args) == 1 and isinstance(first, type) and issubclass(first, ndarray):
            kind = first
        else:
            dtype = first
            if len(args) > 1:
                kind = args[1]
    return dtype, kind


def _same_value(array: Any, prov: Provenance) -> Any:
    """Another TracedArray over ``array``'s memory holding its graph value (``x.view(np.ndarray)``,
    ``x.__array__()``): the provenance copied, nothing recorded."""
    same = _VIEW(_VIEW(array, ndarray), TracedArray)  # (through a plain view: __array_finalize__ marks nothing)
    copied = same._lp = Provenance(prov.builder, prov._node, prov.version)
    copied.lost, copied.line, copied.fingerprint, copied.plain = prov.lost, prov.line, prov.fingerprint, prov.plain
    return same


# NumPy's functions whose result is as long as a count of the data (Session.selected, size_read)
_SELECTING_FUNCTIONS = frozenset(getattr(np, name) for name in _session.SELECTING_NUMPY if hasattr(np, name))
_ARGSORT = np.argsort  # (its order of ties: Session.tie_order)
_ARRAY_POW = ndarray.__pow__
_ONE_OPERAND = object()  # the second operand of a ufunc call with one
_NO_PARAMS: dict[str, Any] = {}  # a replayed call's NumPy operands, when nothing reads them (never written)


def _selects(key: Any) -> bool:
    """Whether an indexing key holds a traced boolean mask."""
    for part in key if type(key) is tuple else (key,):
        if type(part) is TracedArray and part.dtype == bool and part._lp is not None:
            return True
    return False


_MISS = object()  # _replay_call: the call has no template to replay


def _replay_call(sess: Any, builder: Any, row: Any, name: str, params: dict[str, Any], result: Any,
                 where: Any, alias: Any = None) -> Any:
    """The traced result of a function or method call recorded before, with a LEAPP-defect answer that holds for
    its signature, replayed from the hook; ``_MISS`` when there is none (``Session.record`` asks the same signature
    then). ``where``: the session's site finder for the hook's frame depth (``Session.where_below`` for a
    function, ``Session.where_method`` for a method, whose wrapper is one frame more). ``alias``: the function
    hook's own key of the call (``replay.FUNCTION``), looked up first; the general signature is made only when it
    finds nothing, and what that finds is stored under the alias for the next call (another number, a keyword
    spelled positionally)."""
    template = replay.TEMPLATES.get(alias) if alias is not None else None
    signed = template is None  # looked up by the general signature
    if signed:
        key = replay.signature(sess, builder, row, name, params, None, result)
        template = replay.TEMPLATES.get(key) if key is not None else None
        if template is None and row.build in replay.NUMBER_SLOTS:
            # a float not seen here before: the recording for any float there, when there is one
            template = replay.for_any_float(key, params, row.build)
    if template is None or template is replay.NO_TEMPLATE or template.finding is replay.NO_TEMPLATE or (
            template.aliases is not None and not replay.fits(template, params, builder)):
        return _MISS
    if signed and alias is not None:
        replay.store(alias, template)
    if template.wraps and row.leapp and type(result) is ndarray:  # as the ufunc hook does
        return (template.direct or replay.direct(template))(builder, params, where(), result)
    return sess.replayed(builder, template, row, name, params, _NO_PARAMS, result, False, where())


_IMPLEMENTATIONS: dict[Any, Any] = {}  # a NumPy function -> what its dispatch calls (itself when it has no other)


def _implementation(func: Any) -> Any:
    """What NumPy's ``__array_function__`` dispatch of ``func`` calls when no argument overrides it."""
    found = _IMPLEMENTATIONS.get(func)
    if found is None:
        found = _IMPLEMENTATIONS[func] = getattr(func, "_implementation", func)
    return found


def _number_part(value: Any, kind: type) -> Any:
    """A Python number's (or a name's) part of a replay key beside its type: itself, a float zero as (float, its
    sign): 0.0 and -0.0 hash alike (the ufunc hook spells the same inline)."""
    return value if value or kind is not float else (float, math.copysign(1.0, value))


def _with_constant(parts: list[Any], sess: Any, value: ndarray) -> list[Any] | None:
    """``parts`` (a replay key being made) with a plain array's part added (``replay.constant_part``, beside None);
    None when the array has none: the call has no key."""
    constant = replay.constant_part(sess, value)
    if constant is None:
        return None
    parts.append(constant)
    parts.append(None)
    return parts


_NO_BUILDER = object()  # _sequence: no item of the sequence has a provenance


def _sequence(value: list[Any] | tuple[Any, ...], sess: Any, traced: list[Any]) -> Any:
    """For a list or tuple of traced arrays, plain arrays and Python numbers (``np.concatenate([h, GOAL])``), in one
    pass: ``plain(value)`` (the same sequence when nothing in it is traced), its part of the function hook's replay key
    (None when an item has none, or when ``sess`` is None: no key is made), the traced items added to ``traced``, and
    the builder of the first item with a provenance (``builder_of``'s answer; ``_NO_BUILDER`` for none). None for any
    other sequence (plain() takes those)."""
    plain_items = None
    part: list[Any] | None = [] if sess is not None else None
    builder = _NO_BUILDER
    for i, item in enumerate(value):
        kind = type(item)
        if kind is TracedArray:
            if plain_items is None:
                plain_items = list(value[:i])
            plain_items.append(_VIEW(item, ndarray))
            prov = item._lp
            if prov is None:
                part = None
                continue
            if builder is _NO_BUILDER:
                builder = prov.builder
            if part is not None:
                traced.append(item)
                part.append(array_dtype(item))
                part.append(array_shape(item))
            continue
        if kind is ndarray:
            if part is not None:
                part = _with_constant(part, sess, item)
        elif kind is float or kind is int or kind is bool:
            if part is not None:
                part.append(kind)
                part.append(_number_part(item, kind))
        else:
            return None
        if plain_items is not None:
            plain_items.append(item)
    return (value if plain_items is None else type(value)(plain_items)), \
        (None if part is None else tuple(part)), builder


def _current(sess: Any, builder: Any, traced: list[Any]) -> bool:
    """Whether every traced array of a call holds its current value in ``builder``'s graph (the ufunc hook's test):
    the signature describes it by dtype and shape then, and by nothing the function hook's key reads otherwise."""
    versions = sess.versions
    for value in traced:
        prov = value._lp
        if prov.builder is not builder or prov._node is None or (
                versions and prov.version != versions.get(id(root(value)), 0)):
            return False
    return True


def _eager(a: Any, b: Any) -> dict[str, Any]:
    """NumPy's operands of a ufunc call with one or two (``b`` is ``_ONE_OPERAND`` for one)."""
    return {"x0": a} if b is _ONE_OPERAND else {"x0": a, "x1": b}


_UFUNC_MODULES = ("scipy.special",)  # libraries whose ufuncs reach __array_ufunc__ under their own names


def ufunc_name(ufunc: np.ufunc) -> str:
    """How the user wrote a ufunc: ``np.add``, ``scipy.special.expit``."""
    name = ufunc.__name__
    if getattr(np, name, None) is ufunc:
        return f"np.{name}"
    for module_name in _UFUNC_MODULES:
        module = sys.modules.get(module_name)
        if module is not None and getattr(module, name, None) is ufunc:
            return f"{module_name}.{name}"
    return f"{name} (a ufunc from outside NumPy)"


_INT32 = 1 << 31  # a Python int operand replayed for any value lies in int32's range (torch takes it as a scalar)


def _into_out(sess: Any, builder: Any, name: str, target: Any, recorded: Any) -> Any:
    """A call of ``name`` wrote its result into ``target`` (``out=``; NumPy already did, eagerly): ``target`` takes
    the recorded result's value, or its loss (a call the lookup does not record: baked where ``target`` is read), or,
    a plain array, is remembered as written with traced data. Returns ``target``, as NumPy returns ``out``."""
    if isinstance(target, TracedArray) and getattr(recorded, "_lp", None) is None:
        # written after its node received its outputs: no node records it any more (but the write is counted: it
        # reaches what shares the memory, a node output the next node may declare)
        sess.bump(target)
        target._lp = Provenance.lost_in(builder, f"written by {name} after node '{builder.name}' received "
                                        "its outputs", None)
    elif isinstance(target, TracedArray):
        before = target._lp
        target._lp = Provenance(recorded._lp.builder, recorded._lp.node, sess.bump(target))
        target._lp.lost, target._lp.line = recorded._lp.lost, recorded._lp.line
        sess.wrote_through(target, before)
    else:
        sess.written_into_plain(builder, target, name)
    return target


def _derived(array: TracedArray, obj: TracedArray) -> None:
    """``TracedArray.__array_finalize__`` of a traced array NumPy derived from traced ``obj`` itself (an ndarray
    method the tracer does not record): lost where it is used, when ``obj`` has a builder."""
    prov = obj._lp
    if prov is not None and prov.builder is not None:
        sess = _session.active()
        # where() looks two frames up (the caller's, under the C __array_finalize__), and walks from there when
        # that frame is not the cell's (under the Python one: a frame more)
        line = sess.where()[0] if sess is not None else None
        array._lp = Provenance.lost_in(
            prov.builder, f"derived at line {line} by an ndarray method the tracer does not record", line)


def _ufunc_tail(sess: Any, ufunc: np.ufunc, inputs: tuple[Any, ...], params: dict[str, Any], result: Any,
                plain_a: Any, plain_b: Any, prov: Any, prov_a: Any, prov_b: Any, kind_a: Any, part_a: Any, kind_b: Any,
                part_b: Any, where: Any) -> Any:
    """The rest of the ufunc hook's hot path, once NumPy computed ``result`` (``TracedArray.__array_ufunc__`` read
    the operands and their parts of the replay key): the call replayed, recorded, or its result watched. The C hook
    (tracing/_flush.c, ``array_ufunc``) reads the operands the same way and replays the common case itself; it calls
    this for every other case, with the same arguments. ``where``: the session's site finder for the depth this is
    called at (``Session.where_below`` under the Python hook, ``Session.where`` under the C one, which has no frame)."""
    a = inputs[0]
    b = inputs[1] if len(inputs) == 2 else None
    builder = prov.builder if prov is not None else None
    if builder is None:
        return TracedArray.watch(result) if has_traced(inputs) else result
    row = ops.UFUNC_ROWS.get(ufunc)
    if row is None:
        return sess.record(builder, row, ufunc_name(ufunc), params, _eager(plain_a, plain_b), result,
                           extra={"ufunc": ufunc, "call": True})
    key = None
    if not builder.closed and (row.leapp or sess.profile == "full") and replay.ENABLED \
            and type(result) is ndarray:
        # Recorded before: replayed without the general signature. The key of ufunc(*inputs) is what
        # replay.signature describes, made of the operands' parts (Session.record stores the template under
        # both keys); none when a traced operand is not this node's current value. Without the result's
        # dtype and shape: NumPy's type resolution gives them from the operands' dtypes and shapes and the
        # Python numbers' types (NEP 50), all in the key.
        versions = sess.versions
        if kind_a is not None and (kind_b is not None or plain_b is _ONE_OPERAND) and (
                prov_a is None or (prov_a.builder is builder and prov_a._node is not None and (
                not versions or prov_a.version == versions.get(id(root(a)), 0)))) and (
                prov_b is None or (prov_b.builder is builder and prov_b._node is not None and (
                not versions or prov_b.version == versions.get(id(root(b)), 0)))):
            key = (replay.UFUNC, row.build, ufunc, kind_a, part_a) if plain_b is _ONE_OPERAND else \
                (replay.UFUNC, row.build, ufunc, kind_a, part_a, kind_b, part_b)  # the row's builder first
            template = replay.TEMPLATES.get(key)
            if template is None and (kind_b is float or kind_b is bool or (
                    kind_b is int and -_INT32 <= b < _INT32)) and replay.number_fits(b, kind_a):
                # a number not seen here before: the recording for any number of its type, when there is one
                template = replay.TEMPLATES.get(replay.any_number(key))
            if template is not None and template is not replay.NO_TEMPLATE and (
                    template.aliases is None or replay.fits(template, params, builder)):
                if template.wraps and row.leapp:  # nothing to report: replayed and wrapped in one call
                    return (template.direct or replay.direct(template))(builder, params, where(), result)
                # NumPy's operands only for a defect check that reads them (none reads a replayed call's)
                return sess.replayed(builder, template, row, row.numpy, params,
                                     _eager(plain_a, plain_b) if template.finding is replay.NO_TEMPLATE
                                     else _NO_PARAMS, result, False, where())
    return sess.record(builder, row, row.numpy, params, _eager(plain_a, plain_b), result,
                       extra={"ufunc": ufunc, "call": True}, alias=key)


class TracedArray(ndarray):
    """An ndarray whose operations are recorded in a torch.fx graph while a trace is active."""

    # where the value comes from (tracing/provenance.py): a slot, not an instance dict (one fewer object for every
    # traced array); __array_finalize__ gives every new array None first. ``_scalar``: set (True) on a 0-d array
    # that stands for a NumPy scalar the call returned (``np.sum(x)``, ``x0d * 2``); unset on every other array
    __slots__ = ("_lp", "_scalar")
    _lp: Provenance | None

    @staticmethod
    def watch(result: Any) -> Any:
        """An array created inside the cell, watched so that traced data written into it is noticed."""
        if type(result) is ndarray and result.dtype.kind in "biufc":
            watched = result.view(TracedArray)
            watched._lp = Provenance.watch(fingerprint(result))
            return watched
        return result

    def __array_finalize__(self, obj: Any) -> None:
        # Reached only for views NumPy makes itself (ndarray methods we do not override); the
        # tracer's own wrapping sets the provenance right after (it views a plain array: the first test).
        # In C where the extension is built (_flush.array_finalize, installed below), which calls _derived alike.
        self._lp = None
        if type(obj) is not TracedArray:
            return
        _derived(self, obj)

    # ---------------------------------------------------------------- the same value as a plain ndarray
    # ``x.view(np.ndarray)``, ``x.view(type=np.ndarray)``, ``x.view()`` and ``x.__array__()`` are x's own values over
    # x's own memory: NumPy answers a plain ndarray, which left the graph (its uses were constants, with no hazard:
    # a silently wrong export). Here they are another TracedArray over that memory with x's provenance: the same
    # graph value, nothing recorded. A view as another dtype stays NumPy's (marked lost by ``__array_finalize__``,
    # baked and reported where used), and so does one asked for as a plain ndarray (``x.view(np.int32,
    # np.ndarray)``). The tracer's own code takes plain views with ``_VIEW(a, ndarray)``, which does not come
    # here.
    def view(self, *args: Any, **kwargs: Any) -> Any:
        prov = self._lp
        sess = _session.ACTIVE
        if prov is None or sess is None or sess.suspended or sess.thread != get_ident():
            return _VIEW(self, *args, **kwargs)
        dtype, kind = _view_arguments(args, kwargs)
        if (kind is None or kind is ndarray or kind is TracedArray) and (
                dtype is None or np.dtype(dtype) == array_dtype(self)):
            if kind is ndarray and prov.builder is not None:
                # LEAPP 0.7.2 gives a plain ndarray here (measured: "output_tensors() ... received non-traced
                # tensors"; combined with traced data it is a constant): an error in ``leapp``
                # (no graph node marked: the graph's value is right; LEAPP's would be a constant where p is used)
                line, location, _ = sess.where()
                prov.builder.report("leapp-does-not-record", line, [],
                                    name="x.view(np.ndarray)", location=location,
                                    severity="error" if sess.profile == "leapp" else "warning",
                                    fix="use the array itself (x) where the cell took x.view(np.ndarray): LEAPP "
                                        "records it")
            return _same_value(self, prov)
        result = _VIEW(self, *args, **kwargs)
        if type(result) is ndarray and prov.builder is not None:
            # another dtype as a plain ndarray: the bytes read as another type, which no graph op records
            lost = _VIEW(result, TracedArray)
            line = sess.where()[0]
            lost._lp = Provenance.lost_in(prov.builder, f"viewed as a plain {result.dtype} ndarray at line {line} "
                                          "(x.view(dtype, np.ndarray))", line)
            return lost
        return result

    def __array__(self, dtype: Any = None, copy: Any = None) -> Any:
        prov = self._lp
        sess = _session.ACTIVE
        plain_self = _VIEW(self, ndarray)
        if prov is None or sess is None or sess.suspended or sess.thread != get_ident():
            return plain_self.__array__(dtype) if copy is None else plain_self.__array__(dtype, copy=copy)
        if copy is not True and (dtype is None or np.dtype(dtype) == array_dtype(self)):
            return _same_value(self, prov)
        # a conversion: recorded as np.asarray(x, dtype) / np.array(x, dtype) is (the trace's own wrappers)
        return np.array(self, dtype=dtype) if copy else np.asarray(self, dtype=dtype)

    # ---------------------------------------------------------------- attributes written in place
    # ``x.shape = (2, 8)`` (or ``x.dtype = ...``) changes the array without a call the hooks see; left to NumPy the
    # graph would keep the old shape and the trace report nothing. The array is baked where used from here on, with
    # an ``untraced-call`` hazard whose fix says what to write instead, as ``x.resize(...)`` is. Reading goes to
    # NumPy's own descriptor (the tracer's hot path reads it directly: ``provenance.array_shape(x)``,
    # ``array_dtype(x)``).
    # The plain array a provenance keeps (``Provenance.plain``) has the old shape, dtype and strides: cleared first.
    @property
    def shape(self) -> tuple[int, ...]:
        shape = array_shape(self)
        if _session.ACTIVE is not None and self._lp is not None:  # the cell reading a selection's length
            return _session.selection_shape(self, shape)
        return shape

    @shape.setter
    def shape(self, value: Any) -> None:
        self._assigned(_SET_SHAPE, value, "x.shape")

    @property
    def dtype(self) -> np.dtype:
        return array_dtype(self)

    @dtype.setter
    def dtype(self, value: Any) -> None:
        self._assigned(_SET_DTYPE, value, "x.dtype")

    @property
    def strides(self) -> tuple[int, ...]:
        return _GET_STRIDES(self)

    @strides.setter
    def strides(self, value: Any) -> None:
        self._assigned(_SET_STRIDES, value, "x.strides")

    @property
    def size(self) -> int:
        size = _GET_SIZE(self)
        if _session.ACTIVE is not None and self._lp is not None:
            _session.size_read(self, f".size = {size}")
        return size

    def __len__(self) -> int:
        length = _LEN(self)
        if _session.ACTIVE is not None and self._lp is not None:
            _session.size_read(self, f"len() = {length}", 0)
        return length

    def _assigned(self, setter: Any, value: Any, name: str) -> None:
        setter(self, value)
        if self._lp is not None:
            self._lp.plain = None
        _session.modified_in_place(self, name, cause="attribute-assigned")

    # ---------------------------------------------------------------- torch
    @classmethod
    def __torch_function__(cls, func: Any, types: Any, args: tuple[Any, ...] = (), kwargs: Any = None) -> Any:
        """Torch given a traced array (``t * x[0]``, ``t.mul_(np.sum(x))``). Having this method is what lets the
        call reach the tracer's recorder at all: torch's argument parser refuses an ndarray before any mode sees
        the call. It runs itself only where no recorder takes the call (outside a trace, or the recorder's own
        eager call), on what the cell would have given torch: a NumPy scalar the tracer holds as a marked 0-d
        array as that scalar, which torch takes as a number; any other array as a plain ndarray, which torch
        refuses as it would."""
        return func(*plain(args, scalars=True), **{k: plain(v, scalars=True) for k, v in (kwargs or {}).items()})

    # ---------------------------------------------------------------- NumPy protocols
    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
        sess = _session.ACTIVE
        if not kwargs and method == "__call__" and sess is not None and not sess.suspended \
                and sess.thread == get_ident() and len(inputs) <= 2:
            # The hot path: ``np.tanh(x)``, ``x * 0.5``, ``(x - MEAN) / STD``: traced arrays, Python numbers and
            # plain arrays, nothing else. Each operand's part of the replay key is read on the way: NumPy's dtype and
            # shape of a traced array, the type and value of a number (a zero as (float, its sign): apart from -0.0,
            # and from 1.0, -1.0 and any shape), a plain array's value (replay.constant_part; None: it has none, and
            # the call is recorded without a key).
            a = inputs[0]
            kind = type(a)
            if kind is TracedArray:
                prov = prov_a = a._lp
                if prov is None or (plain_a := prov.plain) is None:
                    plain_a = _VIEW(a, ndarray)
                kind_a, part_a = plain_a.dtype, plain_a.shape
            elif kind is float or kind is int or kind is bool:
                plain_a, prov, prov_a = a, None, None
                kind_a, part_a = kind, a if a or kind is not float else (float, math.copysign(1.0, a))
            elif kind is ndarray:
                plain_a, prov, prov_a = a, None, None
                kind_a, part_a = replay.constant_part(sess, a), None
            else:
                return self._ufunc(sess, ufunc, method, inputs, kwargs)
            if len(inputs) == 2:
                b = inputs[1]
                kind = type(b)
                if kind is TracedArray:
                    prov_b = b._lp
                    if prov_b is None or (plain_b := prov_b.plain) is None:
                        plain_b = _VIEW(b, ndarray)
                    kind_b, part_b = plain_b.dtype, plain_b.shape
                    if prov is None or prov.builder is None:
                        prov = prov_b
                elif kind is float or kind is int or kind is bool:
                    plain_b, prov_b = b, None
                    kind_b, part_b = kind, b if b or kind is not float else (float, math.copysign(1.0, b))
                elif kind is ndarray:
                    plain_b, prov_b = b, None
                    kind_b, part_b = replay.constant_part(sess, b), None
                else:
                    return self._ufunc(sess, ufunc, method, inputs, kwargs)
                params = {"x0": a, "x1": b}
                sess.suspended += 1
                try:
                    result = ufunc(plain_a, plain_b)
                finally:
                    sess.suspended -= 1
            else:
                params = {"x0": a}
                plain_b = _ONE_OPERAND
                prov_b = kind_b = part_b = None
                sess.suspended += 1
                try:
                    result = ufunc(plain_a)
                finally:
                    sess.suspended -= 1
            return _ufunc_tail(sess, ufunc, inputs, params, result, plain_a, plain_b, prov, prov_a, prov_b, kind_a,
                               part_a, kind_b, part_b, sess.where_below)
        return self._ufunc(sess if sess is not None and sess.thread == get_ident() else None, ufunc, method,
                           inputs, kwargs)

    def _ufunc(self, sess: Any, ufunc: np.ufunc, method: str, inputs: tuple[Any, ...], kwargs: dict[str, Any]
               ) -> Any:
        out = kwargs.get("out")
        plain_inputs = tuple([_VIEW(v, ndarray) if isinstance(v, TracedArray) else plain(v) for v in inputs])
        plain_kwargs = {k: plain(v) for k, v in kwargs.items()} if kwargs else kwargs
        if sess is None or sess.suspended:
            result = getattr(ufunc, method)(*plain_inputs, **plain_kwargs)
            return result if sess is not None else _session.elsewhere(inputs, result, ufunc.__name__)
        builder = builder_of(inputs)
        if builder is None and "where" in kwargs:
            # NumPy dispatches on where= too: ``np.add.reduce(W, where=m)`` (and ``W.sum(where=m)``, which NumPy runs
            # as it) of a plain W and a traced mask reaches here alone. Recorded with its mask (it was a constant)
            builder = builder_of((kwargs["where"],))
        if method == "__call__":
            row = ops.UFUNC_ROWS.get(ufunc)
            name = row.numpy if row is not None else ufunc_name(ufunc)
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
            name = f"{ufunc_name(ufunc)}.{method}"
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
                if isinstance(target, TracedArray) and (target._lp is None or target._lp.builder is None):
                    target._lp = Provenance.watch(fingerprint(_VIEW(target, ndarray)))
                return out if isinstance(out, TracedArray) or not isinstance(out, tuple) else out[0]
            recorded = sess.record(builder, row, name, params, eager_params,
                                   _VIEW(result, ndarray) if isinstance(result, TracedArray) else result,
                                   extra={"ufunc": ufunc})
            return _into_out(sess, builder, name, target, recorded)
        if builder is None:
            return TracedArray.watch(result) if has_traced(inputs) else result
        extra = {"ufunc": ufunc} if method != "__call__" else {"ufunc": ufunc, "call": True}
        return sess.record(builder, row, name, params, eager_params, result, extra=extra)

    def __array_function__(self, func: Any, types: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        sess = _session.ACTIVE
        if sess is not None and sess.thread != get_ident():
            sess = None
        if func in _SELECTING_FUNCTIONS and sess is not None:
            sess.selected = True  # np.nonzero, np.unique, ...: a result as long as a count of the data
        if func is _ARGSORT and sess is not None and not sess.suspended:
            _session.tie_order(sess, args, kwargs)
        # the arguments made plain, and the builder of the first traced one found on the way (builder_of's answer
        # when every argument before it is an array or a Python scalar); and the call's replay key, read on the way
        # as the ufunc hook reads its own (``parts``: None when an argument has no part; ``traced``: the traced
        # arrays in it, which must be their node's current values)
        plain_list = []
        builder = None
        simple = True
        own = True  # every argument an array or a number: no override for NumPy's dispatch to find
        parts: list[Any] | None = [replay.FUNCTION, func] if sess is not None and not sess.suspended else None
        traced: list[Any] = []
        for value in args:
            kind = type(value)
            if kind is TracedArray:
                prov = value._lp
                if prov is None or (eager := prov.plain) is None:
                    eager = _VIEW(value, ndarray)
                plain_list.append(eager)
                if prov is not None:
                    if simple and builder is None:
                        builder = prov.builder
                    if parts is not None:
                        traced.append(value)
                        parts.append(eager.dtype)
                        parts.append(eager.shape)
                else:
                    parts = None
            elif kind is float or kind is int or kind is bool or value is None:
                plain_list.append(value)
                if parts is not None:
                    parts.append(kind)
                    parts.append(_number_part(value, kind))
            elif (kind is list or kind is tuple) and (found := _sequence(
                    value, sess if parts is not None else None, traced)) is not None:
                # a sequence of arrays and numbers (np.concatenate([h, GOAL])): plain(), its key part and
                # builder_of in one pass
                items, part, first = found
                plain_list.append(items)
                if simple and builder is None and first is not _NO_BUILDER:
                    builder = first
                if parts is not None:
                    if part is None:
                        parts = None
                    else:
                        parts.append(kind)
                        parts.append(part)
            elif kind is ndarray:
                plain_list.append(value)
                if parts is not None:
                    parts = _with_constant(parts, sess, value)
            elif kind is deque:  # a deque of arrays (a moving window): NumPy reads it as the list of its items
                return self.__array_function__(func, types, tuple(list(v) if type(v) is deque else v for v in args),
                                               kwargs)
            else:
                plain_list.append(plain(value))
                simple = own = False
                parts = None
        plain_args = tuple(plain_list)
        plain_kwargs = kwargs
        if kwargs:
            for key, value in kwargs.items():
                kind = type(value)
                if kind not in _AS_IS:
                    plain_kwargs = {k: v if type(v) in _AS_IS else plain(v) for k, v in kwargs.items()}
                    own = False
                    parts = None
                    break
                if parts is not None:
                    if kind is int or kind is bool or kind is float or kind is str or value is None:
                        parts.append(key)
                        parts.append(kind)
                        parts.append(_number_part(value, kind))
                    else:
                        parts = None
        if sess is None or sess.suspended:
            result = func(*plain_args, **plain_kwargs)
            return result if sess is not None else _session.elsewhere(args, result, getattr(func, "__name__", ""))
        # Arrays and numbers alone: NumPy's dispatch would find no other override and call the implementation, so
        # call it (np.clip(h, LOW, HIGH) passes the dispatch once, as the cell does, not twice)
        run = _implementation(func) if own else func
        sess.suspended += 1
        try:
            result = run(*plain_args, **plain_kwargs)
        finally:
            sess.suspended -= 1
        if builder is None:
            builder = builder_of(args) or builder_of(tuple(kwargs.values()))
        if builder is None:
            if func in _session.METADATA_FUNCTIONS:
                return result
            return TracedArray.watch(result) if has_traced(args) else result
        if func in _session.METADATA_FUNCTIONS:
            return result
        row = ops.FUNCTION_ROWS.get(func)
        alias = None
        if row is not None:
            name = row.numpy
            if not builder.closed and (row.leapp or sess.profile == "full"):
                if parts is not None and type(result) is ndarray and replay.ENABLED and _current(sess, builder,
                                                                                                 traced):
                    # Recorded before: found without the general signature (Session.record stores the template
                    # under both keys). With the result's dtype and shape, as the signature has them: a few
                    # functions' results depend on the values (np.nonzero, np.unique)
                    parts.append(row.build)
                    parts.append(result.dtype)
                    parts.append(result.shape)
                    alias = tuple(parts)
                params = _bind(row.names, args, kwargs)
                replayed = _replay_call(sess, builder, row, name, params, result, sess.where_below, alias)
                if replayed is not _MISS:
                    return replayed
            else:
                params = _bind(row.names, args, kwargs)
            eager_params = _bind(row.names, plain_args, plain_kwargs)
        else:
            params = {f"arg{i}": v for i, v in enumerate(args)} | dict(kwargs)
            eager_params = {f"arg{i}": v for i, v in enumerate(plain_args)} | dict(plain_kwargs)
            module = getattr(func, "__module__", "numpy") or "numpy"
            prefix = "np." + module.split(".", 1)[1] + "." if module.startswith("numpy.") and not \
                module.startswith("numpy._") and "._" not in module else "np."
            name = prefix + getattr(func, "__name__", repr(func))
        recorded = sess.record(builder, row, name, params, eager_params, result, alias=alias)
        target = params.get("out")
        return recorded if not isinstance(target, ndarray) else _into_out(sess, builder, name, target, recorded)

    # ---------------------------------------------------------------- methods
    def _method(self, mname: str, args: tuple[Any, ...], kwargs: dict[str, Any],
                eager_fn: Any = None) -> Any:
        sess = _session.ACTIVE
        if sess is not None and sess.thread != get_ident():
            sess = None
        plain_self = _VIEW(self, ndarray)
        # the arguments made plain (most calls pass numbers and axes, or nothing: kept as they are)
        plain_args = args
        for value in args:
            if type(value) not in _AS_IS:
                plain_args = tuple([plain(v) for v in args])
                break
        plain_kwargs = kwargs
        for value in kwargs.values():
            if type(value) not in _AS_IS:
                plain_kwargs = {k: plain(v) for k, v in kwargs.items()}
                break
        if eager_fn is None:
            eager_fn = getattr(ndarray, mname)
        if sess is None or sess.suspended:
            result = eager_fn(plain_self, *plain_args, **plain_kwargs)
            return result if sess is not None else _session.elsewhere((self, *args), result, f"ndarray.{mname}")
        sess.suspended += 1  # sess.eager(), spelled out
        try:
            result = eager_fn(plain_self, *plain_args, **plain_kwargs)
        finally:
            sess.suspended -= 1
        builder = (self._lp.builder if self._lp is not None else None) or builder_of(args)
        if builder is None:
            return TracedArray.watch(result)
        row = ops.METHOD_ROWS.get(mname)
        names = row.names if row is not None else ("a",)
        params = _bind(names, (self, *args), kwargs)
        name = f"ndarray.{mname}"
        if row is not None and not builder.closed and (row.leapp or sess.profile == "full"):
            # as the function hook does; the call's site is the frame above the method's own wrapper (``sum``,
            # ``reshape``, ``T``)
            replayed = _replay_call(sess, builder, row, name, params, result, sess.where_method)
            if replayed is not _MISS:
                return replayed
        eager_params = _bind(names, (plain_self, *plain_args), plain_kwargs)
        recorded = sess.record(builder, row, name, params, eager_params, result)
        target = params.get("out")
        return recorded if not isinstance(target, ndarray) else _into_out(sess, builder, name, target, recorded)

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
    def argsort(self, *a: Any, **k: Any) -> Any:
        sess = _session.ACTIVE
        if sess is not None and not sess.suspended and sess.thread == get_ident():
            _session.tie_order(sess, (self, *a), k)  # (x.argsort(axis, kind): kind is the call's third argument)
        return self._method("argsort", a, k)
    def copy(self, *a: Any, **k: Any) -> Any: return self._method("copy", a, k)
    def astype(self, *a: Any, **k: Any) -> Any: return self._method("astype", a, k)
    def flatten(self, *a: Any, **k: Any) -> Any: return self._method("flatten", a, k)
    def ravel(self, *a: Any, **k: Any) -> Any: return self._method("ravel", a, k)

    def reshape(self, *shape: Any, **k: Any) -> Any:
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        return self._method("reshape", (shape,), k, lambda a, s, **kw: ndarray.reshape(a, s, **kw))

    def transpose(self, *axes: Any) -> Any:
        if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], (tuple, list))):
            axes = axes[0]
        axes = tuple(axes) if axes else None
        return self._method("transpose", (axes,), {},
                            lambda a, ax: ndarray.transpose(a) if ax is None else ndarray.transpose(a, ax))

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
        result = getattr(ndarray, mname)(_VIEW(self, ndarray), *[plain(a) for a in args],
                                            **{k: plain(v) for k, v in kwargs.items()})
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
        return _VIEW(self, ndarray).flat

    # ---------------------------------------------------------------- indexing
    def __getitem__(self, key: Any) -> Any:
        sess = _session.active()
        if type(key) is tuple and indexing.basic_key(key):
            plain_key = key
        else:
            plain_key = plain(key)
            if sess is not None and not sess.selected and _selects(key):
                sess.selected = True  # a traced mask: the result's length is a count of the data (size_read)
        if sess is None or sess.suspended:
            result = _VIEW(self, ndarray)[plain_key]
            return result if sess is not None else _session.elsewhere((self,), result, "indexing")
        return indexing.getitem(sess, self, key, plain_key)

    def __setitem__(self, key: Any, value: Any) -> None:
        sess = _session.active()
        if sess is None or sess.suspended:
            _VIEW(self, ndarray)[plain(key)] = plain(value)
            return
        indexing.setitem(sess, self, key, value)

    def __iter__(self) -> Any:
        sess = _session.active()
        traced = self._lp is not None and self._lp.builder is not None
        if sess is None or sess.suspended or not traced:
            eager = _VIEW(self, ndarray)
            if not traced and sess is not None and self.ndim > 1:
                return iter([TracedArray.watch(np.array(row)) for row in eager])
            return iter(eager)
        if self.ndim:
            _session.size_read(self, f"a loop over it ({array_shape(self)[0]} passes)", 0)
        return indexing.iterate(sess, self)

    # ---------------------------------------------------------------- values leaving the graph
    # (__bool__, __float__, __int__, __index__, __complex__, item, tolist: set from _EXTRACTIONS below)

    def __pow__(self, other: Any, mod: Any = None) -> Any:
        # NumPy's ``a ** 2`` on an array is ``np.square(a)`` (and ``** 0.5`` ``np.sqrt``, ...: a fast path with the
        # unary ufunc's dtype: ``bool ** 2`` is int8); a NumPy scalar's ``**`` is ``np.power`` (int64 there). The
        # tracer holds a scalar as a marked 0-d array (``_scalar``): its ``**`` takes the scalar's way
        if mod is None and getattr(self, "_scalar", False):
            return np.power(self, other)
        return _ARRAY_POW(self, other) if mod is None else _ARRAY_POW(self, other, mod)

    def __round__(self, ndigits: Any = None) -> Any:
        # NumPy's scalar: round(s, n) is np.round (a scalar, recorded here); round(s) a Python int, out of the graph
        if not getattr(self, "_scalar", False):
            raise TypeError("type numpy.ndarray doesn't define __round__ method")
        if ndigits is None:
            value = round(_VIEW(self, ndarray)[()])
            _session.extracted(self, "value-extraction", f"round() = {value!r}")
            return value
        held = leapp_calls.PROTOCOL_SITE[0]
        leapp_calls.PROTOCOL_SITE[0] = ("round()", ("decimals",))
        try:
            return np.round(self, decimals=ndigits)
        finally:
            leapp_calls.PROTOCOL_SITE[0] = held

    def __hash__(self) -> int:
        # a NumPy scalar is hashable (a dict key, a set member): its value leaves the graph; an array is not
        if not getattr(self, "_scalar", False):
            raise TypeError("unhashable type: 'numpy.ndarray'")
        value = _VIEW(self, ndarray)[()]
        _session.extracted(self, "value-extraction", f"hashed (a dict key or set member: {value!r})")
        return hash(value)

    def __contains__(self, value: Any) -> bool:
        found = value in _VIEW(self, ndarray)
        _session.extracted(self, "data-dependent-branch", f"`in` test ({found})")
        return found

    def __repr__(self) -> str:
        return repr(_VIEW(self, ndarray))

    def __str__(self) -> str:
        return str(_VIEW(self, ndarray))

    def __format__(self, spec: str) -> str:
        return format(_VIEW(self, ndarray), spec)

    def __reduce__(self) -> Any:
        return _VIEW(self, ndarray).__reduce__()

    def __deepcopy__(self, memo: Any) -> ndarray:
        # copy.deepcopy(x) in a node is x.copy(), recorded (it was a plain copy: a constant, silently)
        sess = _session.active()
        if sess is not None and not sess.suspended and self._lp is not None and self._lp.builder is not None:
            return self.copy()
        return _VIEW(self, ndarray).copy()


def _scalar_attribute(name: str) -> property:
    """What a NumPy scalar has and an array has not (``s.is_integer()``, ``s.numerator``), on the scalar the tracer
    holds as a marked 0-d array: the scalar's own, a value leaving the graph. (Properties, not ``__getattr__``: the
    tracer reads the unset ``_scalar`` slot of every other array on its hot path, which would call it each time.)"""

    def get(self: TracedArray) -> Any:
        if getattr(self, "_scalar", False):
            scalar = _VIEW(self, ndarray)[()]
            value = getattr(scalar, name)
            _session.extracted(self, "value-extraction", f".{name} of the value {scalar!r}")
            return value
        raise AttributeError(f"'numpy.ndarray' object has no attribute {name!r}")

    return property(get)


for _name in ("as_integer_ratio", "is_integer", "hex", "bit_count", "numerator", "denominator"):
    setattr(TracedArray, _name, _scalar_attribute(_name))


def _in_place(method: str, operation: Any) -> Any:
    """``x op= y`` as NumPy does it: in place on an array, but a NumPy scalar is immutable, so there Python binds
    ``x`` to ``x op y`` (a new value: its dtype and shape may change, and another name for the old value keeps it).
    The tracer holds such a scalar as a 0-d array (``_scalar``), which NumPy would write in place: ``s += 1.5`` on
    an int scalar raised a casting error, ``s += x`` could not broadcast, and ``t = s; s += 1`` changed ``t``."""
    array_method = getattr(ndarray, method)

    def in_place(self: TracedArray, other: Any) -> Any:
        if getattr(self, "_scalar", False):
            return operation(self, other)
        return array_method(self, other)

    in_place.__name__ = method
    return in_place


def _extraction(method: str, kind: str, describe: str) -> Any:
    """A method that hands a Python value out of traced data: NumPy's value, and a ``kind`` hazard."""
    plain_method = getattr(ndarray, method)

    def extract(self: TracedArray, *args: Any) -> Any:
        value = plain_method(_VIEW(self, ndarray), *args)
        _session.extracted(self, kind, describe.format(value=value), truth=value if method == "__bool__" else None)
        return value

    extract.__name__ = method
    return extract


# method -> (hazard kind, how the message describes the value)
_EXTRACTIONS = {
    "__bool__": ("data-dependent-branch", "truth value ({value})"),
    "__float__": ("value-extraction", "float() = {value!r}"),
    "__int__": ("value-extraction", "int() = {value!r}"),
    "__index__": ("value-extraction", "used as an index/size ({value!r})"),
    "__complex__": ("value-extraction", "complex() = {value!r}"),
    "item": ("value-extraction", ".item() = {value!r}"),
    "tolist": ("value-extraction", ".tolist()"),
}
for _method, (_kind, _describe) in _EXTRACTIONS.items():
    setattr(TracedArray, _method, _extraction(_method, _kind, _describe))
_IN_PLACE = {"__iadd__": operator.add, "__isub__": operator.sub, "__imul__": operator.mul,
             "__itruediv__": operator.truediv, "__ifloordiv__": operator.floordiv, "__imod__": operator.mod,
             "__ipow__": operator.pow, "__imatmul__": operator.matmul, "__ilshift__": operator.lshift,
             "__irshift__": operator.rshift, "__iand__": operator.and_, "__ior__": operator.or_,
             "__ixor__": operator.xor}
for _method, _operation in _IN_PLACE.items():
    setattr(TracedArray, _method, _in_place(_method, _operation))


def _c_hook(tail: Any = None) -> Any:
    """The C extension (tracing/_flush.c) with the ufunc hook's hot path set up, where it was built and
    ``LEAPP_NOTEBOOK_PURE_FLUSH`` is unset; None: the Python hook runs alone. ``tail``: what the C hook passes the
    cases it does not replay itself to (``_ufunc_tail``; tests count the calls with a wrapper of it)."""
    if PURE:
        return None
    try:
        from . import _flush
    except ImportError:
        return None
    if not hasattr(_flush, "setup_ufunc"):  # an extension built from an older source (rebuild: pip install -e .)
        return None
    _flush.setup_ufunc(TracedArray, ndarray, _VIEW, vars(_session), vars(replay), ops.UFUNC_ROWS, replay.UFUNC,
                       replay.NO_TEMPLATE, _ONE_OPERAND, tail if tail is not None else _ufunc_tail,
                       _PYTHON_UFUNC_HOOK, replay.constant_part, Provenance, replay.Template, _derived,
                       written_version)
    return _flush


# TracedArray.__array_ufunc__ and __array_finalize__ in Python: the references, and where the C forms pass every
# case they do not take
_PYTHON_UFUNC_HOOK = TracedArray.__array_ufunc__
_PYTHON_FINALIZE = TracedArray.__array_finalize__
_EXTENSION = _c_hook()
_C_UFUNC_HOOK = _EXTENSION.array_ufunc if _EXTENSION is not None else None
if _EXTENSION is not None:
    TracedArray.__array_ufunc__ = _EXTENSION.array_ufunc  # type: ignore[method-assign]
    TracedArray.__array_finalize__ = _EXTENSION.array_finalize  # type: ignore[method-assign]
