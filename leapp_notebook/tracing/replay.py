"""The recording cache: a NumPy call recorded once per call signature, replayed for every later call.

A cell's loop makes the same calls again and again (``np.tanh`` of a float32 (8, 16) array, ``h * 0.5``).
What the lookup emits for a call depends only on its *signature*: the row, the dtype and shape of every
traced operand, the Python scalars and static arguments by value, and the eager result's dtype and shape
(tests/test_replay.py holds every family of rows to that). So the first call of a signature runs the row's
builder, then :func:`settle` checks what it emitted against NumPy, once, on the call's own eager values
(torch's dtype and shape for each result; a cast where torch's dtype differs): the check the node's dtype
pass would otherwise make on the whole graph when the node closes. If nothing in the call needs a per-call
decision (a hazard, a baked constant, a large constant, an operand used twice), what it emitted is kept as a
:class:`Template`; every later call with the same signature replays the template: the same fx nodes with
this call's operands and cell line, no builder, no torch run, and the LEAPP-defect answer reused where the
catalogue's predicates read only the signature.

Plain array operands are part of the signature by value (up to ``_MAX_KEYED`` elements, ``describe``); a
template made from operands that are one node (``h + h``) records which, and fits only calls alike (``fits``).
A call whose signature cannot be described (a NumPy scalar, a larger or tainted plain array, a stale view) is
recorded the slow way, exactly as before.
"""

from __future__ import annotations

import builtins
import math
import types
import weakref
from dataclasses import replace
from typing import Any

import numpy as np
import torch
import torch.fx
from numpy import ndarray  # not np.ndarray, torch.Tensor, torch.fx: their modules' __getattr__ defeats the lookup cache
from torch import Tensor, fx

from .builder import base_name
from .dtypes import dtype_name, torch_dtype
from .facts import KEY, SharedState, facts, update
from .lookup.context import as_float, in_float_range
from .provenance import C_WRAP, Pending, Provenance, _contents, computed, iter_traced, pend, root
from .provenance import array_dtype as _dtype
from .provenance import array_shape as _shape

_SIMPLE = frozenset({int, bool, str, type(None), type(Ellipsis), torch.dtype, np.dtype})
_INDEX = frozenset({int, type(None)})  # slice parts described by value (bool, 1 and 1.0 hash alike: not these)
_PER_CALL = ("line", "location", "helper")
_MAX_CONST = 4096   # elements: larger constants are not kept by the process-wide cache
_MAX_KEYED = 1024   # elements: a plain array operand up to this size is part of a signature by value
_MAX_TEMPLATES = 20_000


class Miss(Exception):
    """The call's signature cannot be described: it is recorded the slow way."""


TEMPLATES: dict[Any, "Template"] = {}
ENABLED = True  # False: every call is built and checked (tests compare the two; benchmarks measure both)
NO_TEMPLATE = object()  # a signature whose recording must not be replayed (a per-call decision in it)


def describe(value: Any, builder: Any, sess: Any) -> Any:
    """The part of a call signature one argument contributes (``Miss`` when it cannot be described)."""
    kind = type(value)
    if kind is sess.array_type:
        prov = value._lp
        if prov is None or prov.builder is not builder or prov._node is None:
            watched = _watched(value, prov)
            if watched is None:
                raise Miss
            return watched
        if sess.versions and prov.version != sess.versions.get(id(root(value)), 0):
            raise Miss
        return _dtype(value), _shape(value)
    if kind is float:
        # 0.0 and -0.0 (and 1 and 1.0 and True) hash alike: keep what tells them apart. A zero's sign goes in a
        # part of its own length: as (float, ±1.0) it was the part of 1.0 or -1.0 (np.maximum(h, 0.0) replayed
        # np.maximum(h, 1.0)'s recording)
        return (float, value) if value else (float, 0.0, math.copysign(1.0, value))
    if kind is complex:  # either part may be a signed zero, and 0j == complex(-0.0, 0.0)
        return complex, value, math.copysign(1.0, value.real), math.copysign(1.0, value.imag)
    if kind in _SIMPLE:
        return kind, value
    if kind is tuple or kind is list:
        return kind, tuple([describe(v, builder, sess) for v in value])
    if kind is slice:
        start, stop, step = value.start, value.stop, value.step
        if type(start) in _INDEX and type(stop) in _INDEX and type(step) in _INDEX:  # x[:, :8], x[::2]
            return slice, start, stop, step  # as they are: the general form below spells every part as a pair
        return slice, describe(start, builder, sess), describe(stop, builder, sess), describe(step, builder, sess)
    if kind is ndarray:
        part = constant_part(sess, value)
        if part is None:
            raise Miss
        return part
    if kind is type and issubclass(value, np.generic) or value is np._NoValue:
        return value
    if isinstance(value, np.dtype):  # NumPy 2 spells each dtype as its own class (Float32DType)
        return np.dtype, value
    raise Miss


def constant_part(sess: Any, value: ndarray) -> Any:
    """The signature part of a plain array operand, a constant from outside the cell (MEAN, STD, W): its graph
    constant holds its value, so the signature does too: its bytes up to ``_MAX_KEYED`` elements, a token standing
    for this array object with these bytes above (``_value_token``). None when it cannot be part of one: above
    ``_MAX_TOKENED`` elements, not numeric, or written with traced data (tainted: baked, a per-call decision)."""
    size = value.size
    if size > _MAX_TOKENED or value.dtype.kind not in "biufc":
        return None
    if sess.tainted and sess.taint_of(value) is not None:
        return None
    if size <= _MAX_KEYED:
        return ndarray, value.dtype, value.shape, value.tobytes()
    return ndarray, value.dtype, value.shape, _value_token(value)


class _Token:
    """Stands for one array object holding one value in a signature (``_value_token``); equal to itself alone."""

    __slots__ = ()


# A larger constant operand (a weight matrix of 64 x 64) would make a long key, and hashing its bytes on every call
# costs more than it saves: each array object is known by a token instead, renewed whenever its bytes change. The
# table holds a weak reference to the array, its bytes then and the token, for at most _TOKENED_BYTES in all.
_TOKENS: dict[int, tuple[Any, bytes, _Token]] = {}
_TOKENED = [0]  # bytes held by _TOKENS
_MAX_TOKENED = 1 << 20  # elements: an operand up to this size is part of a signature (by a token above _MAX_KEYED)
_TOKENED_BYTES = 64 << 20


def _value_token(value: ndarray) -> _Token:
    """The token of ``value`` as it is now: the one given last if it is the same array object with the same bytes,
    else a new one (the same bytes as another array, or as this one before a change, give a new token too: a
    signature missed, never a wrong one)."""
    data = value.tobytes()
    held = _TOKENS.get(id(value))
    if held is not None and held[0]() is value and held[1] == data:
        return held[2]
    if held is not None:
        _TOKENED[0] -= len(held[1])
    if _TOKENED[0] + len(data) > _TOKENED_BYTES:
        _TOKENS.clear()
        _TOKENED[0] = 0
    token = _Token()
    _TOKENS[id(value)] = (weakref.ref(value), data, token)
    _TOKENED[0] += len(data)
    return token


def describe_result(result: Any) -> Any:
    kind = type(result)
    if kind is ndarray:
        return result.dtype, result.shape
    if kind is tuple or kind is list:
        return kind, tuple([describe_result(r) for r in result])
    if isinstance(result, np.generic) or kind in (bool, int, float, complex):
        return kind
    raise Miss


def _watched(value: Any, prov: Any) -> Any:
    """The signature part of an array the cell made that holds no traced data (``SCALE = np.array([...])``): its
    values, as for a plain array; None when it is not one, is too large, or was written by code the tracer cannot
    see (reported per call: ``Session._traced_value``)."""
    if prov is None or prov.builder is not None or prov.lost is not None or prov.fingerprint is None \
            or value.size > _MAX_KEYED or _dtype(value).kind not in "biufc":
        return None
    data = ndarray.view(value, ndarray).tobytes()
    if hash(data) != prov.fingerprint:
        return None
    return _WATCHED, _dtype(value), _shape(value), data


_WATCHED = object()  # marks a watched array's part of a signature (never equal to a plain array's)


def signature(sess: Any, builder: Any, row: Any, name: str, params: dict[str, Any], extra: Any,
              result: Any) -> Any:
    """The cache key of a recorded call, or None when it cannot be described (or the cache is off)."""
    if not ENABLED:
        return None
    array_type = sess.array_type
    try:
        # the row's builder itself (hashed by identity): the cache holds it, so no other row can reuse its id
        parts = [row.build, name,
                 (result.dtype, result.shape) if type(result) is ndarray else describe_result(result)]
        if extra:
            parts.append(tuple(extra.items()))
        for key, value in params.items():
            kind = type(value)
            if kind is array_type:  # describe(), spelled out for the common case
                prov = value._lp
                if prov is None or prov.builder is not builder or prov._node is None or (
                        sess.versions and prov.version != sess.versions.get(id(root(value)), 0)):
                    watched = _watched(value, prov)
                    if watched is None:
                        return None
                    parts.append((key, watched))
                    continue
                parts.append((key, _dtype(value), _shape(value)))
            elif kind is float and value:
                parts.append((key, float, value))
            elif kind in _SIMPLE:
                parts.append((key, kind, value))
            elif kind is ndarray:  # a plain array: describe(), spelled out (np.clip(a, LOW, HIGH))
                part = constant_part(sess, value)
                if part is None:
                    return None
                parts.append((key, part))
            else:
                parts.append((key, describe(value, builder, sess)))
        return tuple(parts)
    except Miss:
        return None


_GRAPH_VALUES = (ndarray, Tensor)


def aliases(values: Any, builder: Any) -> Any:
    """Which operands of a call are one graph value (``h + h``, ``np.stack([x, x])``): for each operand in order,
    the position of the first operand with the same graph value; None when all differ.

    A template maps each node it was built from to one operand. One made from a call whose operands share a node
    (``Template.aliases``) therefore fits only calls whose operands share nodes the same way (``fits``); one made
    from distinct operands fits every call of its signature (the same nodes, taken from each operand)."""
    ids = []  # _graph_operand, spelled out for operands and lists of operands (this runs for many calls)
    for value in values:
        kind = type(value)
        for item in value if kind is list or kind is tuple else (value,):
            kind = type(item)
            if kind is ndarray:
                ids.append(id(item))
            elif kind is list or kind is tuple:
                ids.extend(id(v) for v in _graph_operands(item, builder))
            elif isinstance(item, _GRAPH_VALUES):
                prov = getattr(item, "_lp", None)
                if prov is not None and prov.builder is builder and prov._node is not None:
                    node = prov._node
                    ids.append(id(node.node if type(node) is Pending and node.node is not None else node))
                elif prov is not None and prov.builder is None and prov.fingerprint is not None:
                    ids.append(id(item))  # an array the cell made, no traced data: a constant per array
    if len(set(ids)) == len(ids):
        return None
    first: dict[int, int] = {}
    return tuple([first.setdefault(i, position) for position, i in enumerate(ids)])


def fits(template: "Template", params: dict[str, Any], builder: Any) -> bool:
    """Whether ``template`` can record this call: always, unless it was made from operands that share a node."""
    return template.aliases is None or aliases(params.values(), builder) == template.aliases


def _graph_operand(value: Any, builder: Any, found: list[Any]) -> None:
    """Append what ``value`` becomes in the graph when it is an operand: a traced value's node, a plain array or
    an array the cell made without traced data itself (its graph constant is made once per array object)."""
    if type(value) is ndarray:
        found.append(value)
    elif isinstance(value, _GRAPH_VALUES):
        prov = getattr(value, "_lp", None)
        if prov is not None and prov.builder is builder and prov._node is not None:
            node = prov._node
            found.append(node.node if type(node) is Pending and node.node is not None else node)
        elif prov is not None and prov.builder is None and prov.fingerprint is not None:
            found.append(value)  # an array the cell made, no traced data: a constant per array


def _graph_operands(values: Any, builder: Any) -> list[Any]:
    """``_graph_operand`` of every operand in ``values``, nested lists and tuples walked."""
    found: list[Any] = []
    for value in values:
        if type(value) is list or type(value) is tuple:
            found.extend(_graph_operands(value, builder))
        else:
            _graph_operand(value, builder, found)
    return found


# The first part of the key of a ufunc call with one or two operands, traced arrays and Python numbers (the ufunc
# hook's common case, whose key TracedArray.__array_ufunc__ makes itself): never a row's builder, so never a
# signature's.
UFUNC = object()
# The first part of the key of a function call whose arguments are traced arrays, Python numbers, plain arrays and
# sequences of those, with keywords of numbers and names (the function hook's common case: np.clip(h, LOW, HIGH),
# np.concatenate([a, GOAL], axis=1)), which TracedArray.__array_function__ makes itself.
FUNCTION = object()


_INDEXED = object()  # the first part of an indexing key: never a row's builder, so never a signature's
_MARK = {slice: slice, int: int, type(None): None, type(Ellipsis): Ellipsis}  # a simple key part's mark


def index_key(sess: Any, builder: Any, row: Any, array: Any, key: tuple[Any, ...], result: Any) -> Any:
    """The cache key of ``array[key]`` (``key`` as a tuple): for a key of slices with int or None parts, ints,
    None and Ellipsis on an array traced in ``builder`` (the common case: ``x[:, :2]``, ``x[0]``), what
    :func:`signature` describes, read straight from the call; :func:`signature` for any other key. A call
    always gets the same kind of key, so its template is found under the key it was stored with. Each part is
    a mark then its value(s): a slice's three parts, an int's value; None and Ellipsis are their own mark."""
    prov = array._lp
    if type(array) is not sess.array_type or type(result) is not ndarray or not ENABLED or prov is None \
            or prov.builder is not builder or prov._node is None or sess.versions:
        return signature(sess, builder, row, sess.profile, {"a": array, "k": key}, None, result)
    parts = [_INDEXED, row, sess.profile, _dtype(array), _shape(array), result.dtype, result.shape]
    for part in key:
        mark = _MARK.get(type(part), _INDEXED)
        if mark is slice:
            start, stop, step = part.start, part.stop, part.step
            if type(start) not in _INDEX or type(stop) not in _INDEX or type(step) not in _INDEX:
                return signature(sess, builder, row, sess.profile, {"a": array, "k": key}, None, result)
            parts += (slice, start, stop, step)
        elif mark is int:
            parts += (int, part)
        elif mark is _INDEXED:  # an index array, a bool, a list: described the general way
            return signature(sess, builder, row, sess.profile, {"a": array, "k": key}, None, result)
        else:
            parts.append(mark)
    return tuple(parts)


# ------------------------------------------------------------------------------------------
# settling: what the builder emitted, checked once against NumPy on the call's eager values
# ------------------------------------------------------------------------------------------

class _Unknown(Exception):
    pass


def as_torch(value: Any) -> Any:
    """A torch view of an eager value (a copy only where torch cannot view it: negative strides, read-only)."""
    if isinstance(value, Tensor):
        return value.detach()
    array = np.asarray(value)
    if not array.flags.writeable or any(s < 0 for s in array.strides):
        array = np.array(array, copy=True)
    return torch.from_numpy(array)


def settle(sess: Any, builder: Any, start: int, operands: Any, wrapped: Any,
           known: dict[Any, Any] | None = None) -> dict[Any, Any] | None:
    """Run the nodes this call emitted (``builder.fresh[start:]``) on the eager values of its ``operands``;
    where a result's torch dtype differs from NumPy's, insert a cast after it (the traced values in
    ``wrapped`` move to the cast); where its shape differs, report ``shape-differs``. Returns the casts made
    ({node: cast}), or None when the nodes cannot be run here (an input without a known value, an op that
    raises): they stay fresh and the node's dtype pass checks them when it closes. ``known``: eager values of
    graph nodes that are not the current node of an operand (a written array's previous node).

    Operands above ``_STAND_IN_ABOVE`` bytes in all are checked on stand-ins first: their first row along
    axis 0, where every result keeps the operands' leading length (element-wise math, reductions over other
    axes). Dtypes do not depend on that length; the shapes are checked without it. Where that does not run, or
    gives other shapes, the call runs on its values."""
    fresh = builder.fresh[start:]
    if not fresh:
        return {}
    with _OWN_TORCH():
        return _settle(sess, builder, start, fresh, operands, wrapped, known)


# The tracer's own torch calls and reads (the check's ops, a result's dtype and shape) skip torch's function dispatch,
# where the recorder (a TorchFunctionMode) would only pass them through, at several microseconds each: about a quarter
# of a new call signature's cost (grad mode's switches and every ``value.dtype`` reach the mode too).
_OWN_TORCH = torch._C.DisableTorchFunction


def _settle(sess: Any, builder: Any, start: int, fresh: list[Any], operands: Any, wrapped: Any,
            known: dict[Any, Any] | None) -> dict[Any, Any] | None:
    values = dict(known) if known else {}
    for value in iter_traced(operands, builder):
        values.setdefault(value._lp.node, value)
    env = leading = None
    if sum(getattr(v, "nbytes", 0) for v in values.values()) > _STAND_IN_ABOVE:
        leading = _leading(fresh)
        if leading is not None:
            with sess.eager():
                rows = {node: _first_row(v) if v.ndim and v.shape[0] == leading else v for node, v in values.items()}
            env = _run(sess, builder, fresh, rows)
            if env is not None and not _fits(fresh, env, leading):
                env = None
    if env is None:
        leading = None
        env = _run(sess, builder, fresh, values)
        if env is None:
            return None
    casts: dict[Any, Any] = {}
    graph = builder.graph
    for node in fresh:
        value = env.get(node)
        if not isinstance(value, Tensor):
            continue
        info = facts(node)
        if info.dtype is not None:
            want = torch_dtype(info.dtype)
            if want is not None and value.dtype != want:
                # as the dtype pass does: the cast takes the node's facts, the node keeps torch's dtype
                with graph.inserting_after(node):
                    cast = graph.call_method("to", (node, want))
                node.replace_all_uses_with(cast, delete_user_cb=lambda user, c=cast: user is not c)
                cast.meta[KEY] = replace(info, torch="Tensor.to", cast=True, graph_shape=tuple(
                    value.shape) if leading is None else (leading, *value.shape[1:]), graph_dtype=info.dtype)
                casts[node] = cast
                info = update(node, dtype=dtype_name(value.dtype))
            shape = tuple(value.shape)
            if leading is not None and node.op != "get_attr":
                shape = (leading, *shape[1:])  # checked on the first row: the length it stands for
            if info.shape is not None and shape != tuple(info.shape):
                builder.report("shape-differs", info.line, [node.name], call=info.numpy or node.name,
                               got=shape, want=tuple(info.shape))
        info.__dict__.update(graph_shape=tuple(value.shape) if leading is None or node.op == "get_attr" else
                             (leading, *value.shape[1:]), graph_dtype=dtype_name(value.dtype))
    if casts:
        _repoint(wrapped, casts)
        for node, cast in casts.items():
            fresh.insert(fresh.index(node) + 1, cast)
    builder.settled, builder.settled_from, builder.last_casts = fresh, start, casts  # what capture() reads
    del builder.fresh[start:]
    return casts


_STAND_IN_ABOVE = 8 << 20


def _leading(fresh: list[Any]) -> int | None:
    """The leading length every result of the call has (results: nodes whose facts hold the eager shape), if
    they agree and it is above 1."""
    calls = [n for n in fresh if n.op != "get_attr"]
    if any(facts(n).dtype is None for n in calls):
        return None  # an intermediate node: its shape says nothing about the length it would stand for
    lengths = {tuple(facts(n).shape or ())[:1] for n in calls}
    if len(lengths) != 1:
        return None
    (first,) = lengths
    return first[0] if first and first[0] > 1 else None


def _first_row(value: Any) -> Any:
    return value.detach()[:1] if isinstance(value, Tensor) else ndarray.view(value, ndarray)[:1]


def _fits(fresh: list[Any], env: dict[Any, Any], leading: int) -> bool:
    """Whether every result computed on first rows is one row of the shape it stands for."""
    for node in fresh:
        info = facts(node)
        value = env.get(node)
        if info.dtype is None or node.op == "get_attr":
            continue
        if not isinstance(value, Tensor) or value.ndim == 0 or value.shape[0] != 1 or \
                info.shape is None or len(info.shape) != value.ndim:
            return False
    return True


def _run(sess: Any, builder: Any, fresh: list[Any], known: dict[Any, Any]) -> dict[Any, Any] | None:
    """The values of the ``fresh`` nodes computed from the ``known`` eager values, or None when they cannot be
    computed here."""
    env: dict[Any, Any] = {}
    module = builder.root

    def lookup(node: Any) -> Any:
        if node in env:
            return env[node]
        value = known.get(node)
        if value is None:
            if node.op == "get_attr":  # a constant an earlier call made (a plain array used again): its buffer
                env[node] = value = getattr(module, node.target)
                return value
            raise _Unknown
        env[node] = value = as_torch(ndarray.view(value, ndarray) if isinstance(value, ndarray) else value)
        return value

    map_arg = fx.node.map_arg
    grad = _grad_enabled()
    _set_grad_enabled(False)  # torch.no_grad() without its Python objects: they ran for every new call signature
    try:
        with sess.eager():
            for node in fresh:
                op = node.op
                if op == "get_attr":
                    env[node] = getattr(module, node.target)
                    continue
                args = map_arg(node.args, lookup)
                kwargs = map_arg(node.kwargs, lookup)
                if op == "call_function":
                    env[node] = node.target(*args, **kwargs)
                elif op == "call_method":
                    env[node] = getattr(args[0], node.target)(*args[1:], **kwargs)
                elif op == "call_module":
                    env[node] = module.get_submodule(node.target)(*args, **kwargs)
                else:
                    return None
    except Exception:  # noqa: BLE001 - _Unknown, or an op torch rejects on these values: the dtype pass
        return None    # reports the latter when the node closes
    finally:
        _set_grad_enabled(grad)
    return env


_grad_enabled, _set_grad_enabled = torch.is_grad_enabled, torch._C._set_grad_enabled


def _repoint(value: Any, casts: dict[Any, Any]) -> None:
    """Traced values in ``value`` (named tuples too: NumPy's results of unique_*) move to their nodes' casts."""
    if isinstance(value, (tuple, list)):
        for item in value:
            _repoint(item, casts)
        return
    prov = getattr(value, "_lp", None) if isinstance(value, (ndarray, Tensor)) else None
    if prov is not None:
        cast = casts.get(prov.node)
        if cast is not None:
            prov.node = cast


# ------------------------------------------------------------------------------------------
# templates
# ------------------------------------------------------------------------------------------

class _Fresh:
    __slots__ = ("i",)

    def __init__(self, i: int):
        self.i = i


class _Operand:
    __slots__ = ("name", "index")

    def __init__(self, name: str, index: int | None):
        self.name = name
        self.index = index


class _Number:
    """A Python number operand passed to the graph call as it is (``x * 0.5``'s 0.5), in a template recorded for
    any number of its type (``with_number``): read from the call's operands at each replay."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name


class _ConstOperand:
    """A constant operand's graph constant (a plain array, or one the cell made with no traced data): made at
    replay from the call's own array (``const_operand``)."""

    __slots__ = ("name", "index", "checked")

    def __init__(self, name: str, index: int | None, info: Any):
        self.name = name
        self.index = index
        self.checked = {"graph_shape": info.graph_shape, "graph_dtype": info.graph_dtype}


def const_operand(builder: Any, value: Any, line: int | None, helper: str | None, checked: dict[str, Any]) -> Any:
    """The graph constant of a constant operand (a plain array, or one the cell made with no traced data), as
    building the call makes it (``Session.graph_value``: one node per array and contents); a node made now gets
    the facts the signature's first call was checked to."""
    if type(value) is ndarray:
        # Session.graph_value's answer for a plain array, spelled out for the common case (MEAN used again, unchanged):
        # the node's constant for the same object and bytes, when no traced data was written into it
        node = builder.known(value, _contents(value))
        if node is not None:
            sess = builder.session
            if not sess.tainted or sess.taint_of(value) is None:
                return node
    made = len(builder.fresh)
    node = builder.session.graph_value(builder, value, line, helper=helper)
    if len(builder.fresh) != made:
        node.meta[KEY].__dict__.update(checked)
    return node


class Template:
    """What one call signature records: its nodes (targets, arguments as references to the call's operands
    and to earlier nodes of the template, facts other than the cell line), its results, and the answer of the
    LEAPP-defect check when it depends on the signature alone."""

    __slots__ = ("ops", "result", "reported", "finding", "fn", "aliases", "direct", "wraps")

    def __init__(self, ops: list[tuple[Any, ...]], result: Any, reported: Any, finding: Any, aliases: Any = None):
        self.fn: Any = None  # compile_template(self), made on the first replay
        self.direct: Any = None  # compile_template(self, wrapping=True), made on the first direct replay
        self.ops = ops
        self.result = result      # the results as wrap() pairs them (casts included)
        self.reported = reported  # the results as the hazards of the call mark them (before casts)
        self.finding = finding    # NO_TEMPLATE: ask leapp_defects.find on every call
        self.aliases = aliases    # made from operands that share nodes: only for calls that share them alike
        # one node of its own for one array, and nothing to report: a call of a LEAPP-recorded row (nothing to report
        # in either profile) whose eager result is an array replays with ``direct``, which wraps it too
        self.wraps = finding is None and type(result) is _Fresh


_REFERENCES = frozenset({_Fresh, _Operand, _ConstOperand, _Number})
_CONSTANT_OPERANDS = frozenset({_ConstOperand})


def _ref(value: Any, index: dict[Any, int], operands: dict[Any, _Operand]) -> Any:
    kind = type(value)
    if kind is fx.Node:
        i = index.get(value)
        if i is not None:
            return _Fresh(i)
        found = operands.get(value)
        if found is None:
            raise Miss
        return found
    if isinstance(value, (tuple, list)):  # fx keeps lists as its immutable_list
        return (tuple if isinstance(value, tuple) else list)(_ref(v, index, operands) for v in value)
    if isinstance(value, dict):
        return {k: _ref(v, index, operands) for k, v in value.items()}
    if kind is slice:
        return slice(_ref(value.start, index, operands), _ref(value.stop, index, operands),
                     _ref(value.step, index, operands))
    return value


def _holds(value: Any, kinds: frozenset[type]) -> bool:
    """Whether ``value`` is, or holds in its tuples, lists, dicts and slices, a reference of one of ``kinds``."""
    kind = type(value)
    if kind in kinds:
        return True
    if kind is tuple or kind is list or kind is dict:  # loops, not any() of a generator: a template's first replay
        for item in value.values() if kind is dict else value:
            if _holds(item, kinds):
                return True
        return False
    if kind is slice:
        return _holds(value.start, kinds) or _holds(value.stop, kinds) or _holds(value.step, kinds)
    return False


def _nested(value: Any) -> bool:
    """Whether ``value`` refers to an operand or a node of the template: made per call, never a constant."""
    return _holds(value, _REFERENCES)


def capture(builder: Any, params: dict[str, Any], nodes: Any, casts: dict[Any, Any], finding: Any
            ) -> Any:
    """The template of the call just settled, None when part of it was a per-call decision. Operands that are one
    node (``h + h``) are one operand of the template, which then fits only calls alike (``aliases``, ``fits``)."""
    with _OWN_TORCH():  # a constant's buffer read as an array, among others
        return _capture(builder, params, nodes, casts, finding)


def _capture(builder: Any, params: dict[str, Any], nodes: Any, casts: dict[Any, Any], finding: Any) -> Any:
    shared = aliases(params.values(), builder)
    operands: dict[Any, Any] = {}
    for name, value in params.items():
        if type(value) is list or type(value) is tuple:
            items = [(i, v) for i, v in enumerate(value)]
        else:
            items = [(None, value)]
        for i, item in items:
            # a constant operand (a plain array, or one the cell made with no traced data): its graph constant is
            # made from the replayed call's own array (one per array and contents, as building the call does); the
            # signature holds its value
            hit = builder.genuine.get(id(item))
            if hit is not None and hit[0] is item:
                operands.setdefault(hit[1], _ConstOperand(name, i, facts(hit[1])))
                continue
            if type(item) is ndarray:
                continue
            prov = getattr(item, "_lp", None)
            if prov is None or prov.node is None:
                continue
            # one node under two names (h + h): the first stands for both (the template records ``shared``)
            operands.setdefault(prov.node, _Operand(name, i))
    fresh = builder.settled
    index = {node: i for i, node in enumerate(fresh)}
    ops: list[tuple[Any, ...]] = []
    try:
        for node in fresh:
            info = facts(node)
            if node.op == "get_attr":
                found = operands.get(node)
                if type(found) is _ConstOperand:  # made by this call for a plain array operand: made per replay
                    ops.append(("operand", found, None, None, found.checked))
                    continue
                if info.const != "genuine":
                    return None
                array = getattr(builder.root, node.target).numpy()
                if array.size > _MAX_CONST:
                    return None
                array = computed(array)  # the object a build passes for this value: one constant node for both
                checked = {"graph_shape": info.graph_shape, "graph_dtype": info.graph_dtype}
                ops.append(("const", array, None, None, checked))
                continue
            state = {k: v for k, v in info.__dict__.items() if k not in _PER_CALL}
            args = _ref(node.args, index, operands)
            kwargs = _ref(node.kwargs, index, operands)
            ops.append((node.op, node.target, args, kwargs, state))
        reported = _ref(nodes, index, operands)
        final = _ref(_cast(nodes, casts), index, operands)
    except Miss:
        return None
    return Template(ops, final, reported, finding, shared)


def _cast(nodes: Any, casts: dict[Any, Any]) -> Any:
    if not casts:
        return nodes
    if type(nodes) is list:
        return [_cast(n, casts) for n in nodes]
    return casts.get(nodes, nodes)


class _Code:
    """Python source for a template's references; every other value becomes a name bound to it."""

    def __init__(self) -> None:
        self.names: dict[str, Any] = {}
        self.temps = 0

    def bind(self, value: Any) -> str:
        name = f"v{len(self.names)}"
        self.names[name] = value
        return name

    def of(self, value: Any) -> str:
        """An expression for ``value`` in the replay function: an operand's node as it is (pending or built)."""
        kind = type(value)
        if kind is _Fresh:
            return f"n{value.i}"
        if kind is _Operand:
            return f"{self.operand(value)}._lp._node"
        if kind is _Number:
            return f"params[{value.name!r}]"
        if kind is _ConstOperand:  # a constant made by an earlier call: found again (or made, for another array)
            return f"const_operand(builder, {self.operand(value)}, line, helper, {self.bind(value.checked)})"
        if (kind is tuple or kind is slice) and not _nested(value):
            return self.bind(value)  # immutable and made of constants: one object for every replay (x[:, :2]'s key)
        if kind is tuple:
            return "(" + "".join(self.of(v) + ", " for v in value) + ")"
        if kind is list:
            return "[" + ", ".join(self.of(v) for v in value) + "]"
        if kind is dict and all(type(k) is str for k in value):
            return "{" + ", ".join(f"{k!r}: {self.of(v)}" for k, v in value.items()) + "}"
        if kind is slice:
            return f"slice({self.of(value.start)}, {self.of(value.stop)}, {self.of(value.step)})"
        if value is None or kind is bool:
            return repr(value)
        return self.bind(value)

    @staticmethod
    def operand(value: Any) -> str:
        return f"params[{value.name!r}]" + (f"[{value.index}]" if value.index is not None else "")

    def built(self, value: Any, path: str, calls: set[int]) -> str:
        """An expression for ``value`` rebuilt from what the replay function stored at ``path``, with every
        pending node replaced by its fx node (``calls``: the template's ops that are pending, not constants)."""
        if not _nested(value):
            return path
        kind = type(value)
        if kind is _Fresh:
            return f"{path}.node" if value.i in calls else path
        if kind is _ConstOperand or kind is _Number:
            return path  # a graph constant or a number, never pending
        if kind is _Operand:
            temp = f"t{self.temps}"
            self.temps += 1
            return f"({temp}.node if type({temp} := {path}) is Pending else {temp})"
        if kind is tuple:
            return "(" + "".join(self.built(v, f"{path}[{i}]", calls) + ", " for i, v in enumerate(value)) + ")"
        if kind is list:
            return "[" + ", ".join(self.built(v, f"{path}[{i}]", calls) for i, v in enumerate(value)) + "]"
        if kind is dict:
            return "{" + ", ".join(f"{k!r}: {self.built(v, f'{path}[{k!r}]', calls)}" for k, v in value.items()) + "}"
        if kind is slice:
            return f"slice({self.built(value.start, path + '.start', calls)}, " \
                   f"{self.built(value.stop, path + '.stop', calls)}, {self.built(value.step, path + '.step', calls)})"
        raise AssertionError(f"unexpected reference container {kind.__name__}")


def _fixer(args: Any, kwargs: Any, calls: set[int]) -> Any:
    """A function (args, kwargs as a replay stored them) -> (args, kwargs) with fx nodes for pending ones; None
    when the arguments refer to no pending node."""
    if not _nested(args) and not _nested(kwargs):
        return None
    code = _Code()
    source = "def fix(args, kwargs):\n" \
             f"    return {code.built(args, 'args', calls)}, {code.built(kwargs, 'kwargs', calls)}\n"
    return _define(source, "<leapp_notebook replay fixer>", code.names, "fix")


_SOURCES: dict[str, Any] = {}  # generated source -> the function making its functions (``_define``)
_MAX_SOURCES = 4_096
# The globals of every generated function: the names all of them use (each template's own values are its closure's)
_SHARED: dict[str, Any] = {"__builtins__": builtins, "Pending": Pending, "pend": pend, "KEY": KEY,
                           "const_operand": const_operand, "Provenance": Provenance, "new_provenance": object.__new__,
                           "root": root, "wrap": C_WRAP}


def _define(source: str, filename: str, names: dict[str, Any], name: str) -> Any:
    """The function ``name`` that ``source`` defines, with ``names`` (the values a template binds, ``_Code``) as
    its closure's variables and ``_SHARED`` as its globals. Sources are compiled once: templates alike (a ufunc of
    an array and a number, any of them) share one source and one code object, and a new one costs a function
    object, not a compilation (which was about a third of the first trace of a cell). One globals dict for all:
    functions of one code object with globals of their own would defeat the interpreter's cache of each global
    name, for every replayed call (six global reads a call went the slow way, looked up in two dicts)."""
    parameters = ", ".join(names)
    make = _SOURCES.get(source)
    if make is None or make[0] != parameters:
        if len(_SOURCES) >= _MAX_SOURCES:
            _SOURCES.clear()
        body = "".join("    " + line + "\n" for line in source.splitlines())
        module = compile(f"def make({parameters}):\n{body}    return {name}\n", filename, "exec")
        code = next(c for c in module.co_consts if isinstance(c, types.CodeType))
        make = _SOURCES[source] = (parameters, types.FunctionType(code, _SHARED, "make"))
    return make[1](**names)


def compile_template(template: Template, wrapping: bool = False) -> Any:
    """One Python function that records the template's nodes as pending ones (compiled on a template's first
    replay: a cell that makes a call once never pays for it). The graph builds them when it flushes
    (``RecordingGraph.flush``): the spec of each op holds what that needs. ``wrapping`` (a template that
    ``wraps``): the function takes the call's eager array too and returns its traced value, as ``Session.wrap``
    makes a replayed call's (the hot path, in one frame)."""
    code = _Code()
    body = []
    consts = uses_const = False
    calls = {i for i, (op, *_) in enumerate(template.ops) if op not in ("const", "operand")}
    for i, (op, target, args, kwargs, state) in enumerate(template.ops):
        if op == "const":
            consts = uses_const = True
            body.append(f"    n{i} = const({code.bind(target)}, baked=False, origin=None, line=line, helper=helper)")
            body.append(f"    n{i}.meta[KEY].__dict__.update({code.bind(state)})")
            continue
        if op == "operand":  # a plain array operand's constant, where the call made it
            consts = True
            body.append(f"    n{i} = const_operand(builder, {code.operand(target)}, line, helper, {code.bind(state)})")
            continue
        fix = _fixer(args, kwargs, calls)
        static_kwargs = None if _nested(kwargs) else kwargs
        spec = (op, target, base_name(op, target), SharedState(state), fix, static_kwargs, [None, None, None])
        line = f"    n{i} = pend(log, {code.bind(spec)}, {code.of(args)}, site)"
        if static_kwargs is None:
            line += f"; n{i}.kwargs = {code.of(kwargs)}"
        body.append(line)
    if not consts:  # a constant operand made by an earlier call is found again inline (or made, for another array)
        consts = _holds(([(args, kwargs) for _, _, args, kwargs, _ in template.ops], template.result,
                         template.reported), _CONSTANT_OPERANDS)  # not the facts (an op's state): none is there
    if consts:  # constants need no check: not left for the node's dtype pass
        body.append("    del builder.fresh[start:]")
    if wrapping and C_WRAP is not None:  # Session.wrap's first case, for the result's pending node, in C
        body.append(f"    return wrap(builder, {code.of(template.result)}, result)")
    elif wrapping:  # ... in Python
        body.append("    sess = builder.session; versions = sess.versions")
        body.append("    traced = result.view(sess.array_type); traced._lp = prov = new_provenance(Provenance)")
        body.append(f"    prov.builder = builder; prov._node = {code.of(template.result)}; prov.plain = result")
        body.append("    prov.version = versions.get(id(root(result)), 0) if versions else 0")
        body.append("    prov.lost = prov.line = prov.fingerprint = None")
        body.append("    return traced")
    else:
        body.append(f"    return {code.of(template.result)}, {code.of(template.reported)}")
    prologue = "    log = builder.graph.log\n"
    if consts:
        prologue += "    line, location, helper = site\n    start = len(builder.fresh)\n"
        if uses_const:
            prologue += "    const = builder.const\n"
    source = f"def replay(builder, params, site{', result' if wrapping else ''}):\n" + prologue + "\n".join(body) + "\n"
    return _define(source, "<leapp_notebook replay template>", code.names, "replay")


def built(builder: Any, nodes: Any) -> Any:
    """``nodes`` as a replay returned them, with fx nodes for pending ones (the graph is flushed first)."""
    builder.graph.flush()
    if type(nodes) is list:
        return [n.node if type(n) is Pending else n for n in nodes]
    return nodes.node if type(nodes) is Pending else nodes


def compiled(template: Template) -> Any:
    """The template's replay function, compiled on its first use: (builder, params, site: where()'s line,
    location, helper) -> (results as wrap() pairs them, results as hazards mark them)."""
    template.fn = compile_template(template)
    return template.fn


def direct(template: Template) -> Any:
    """The replay function of a template that ``wraps``, compiled on its first use: (builder, params, site, the
    call's eager array) -> its traced value. Only for a call of a row LEAPP records, so that neither profile reports
    anything of it (``Session.replayed`` says what a call reports)."""
    template.direct = compile_template(template, wrapping=True)
    return template.direct


ANY_NUMBER = object()  # in a key, where its template takes any Python number of the type there
_NUMBERS = (float, int, bool)


def with_number(template: Template, name: str, value: Any) -> Template | None:
    """``template`` for any Python number of ``value``'s type as operand ``name``, where the builder said the number
    reaches the graph as it is and decides nothing (``extra["any_number"]``: elementwise.py, selection.py's clip):
    the one argument that *is* that number becomes a reference to the operand. None when the number is not found
    exactly once, as a positional argument of a call."""
    found = [(i, j) for i, (op, _, args, kwargs, _) in enumerate(template.ops) if op not in ("const", "operand")
             for j, arg in enumerate(args) if arg is value]
    if len(found) != 1 or type(value) not in _NUMBERS or any(
            v is value for op, _, _, kwargs, _ in template.ops if op not in ("const", "operand") and kwargs
            for v in kwargs.values()):
        return None
    (i, j), = found
    op, target, args, kwargs, state = template.ops[i]
    ops = list(template.ops)
    ops[i] = (op, target, (*args[:j], _Number(name), *args[j + 1:]), kwargs, state)
    return Template(ops, template.result, template.reported, template.finding, template.aliases)


def with_numbers(template: Template, names: tuple[str, ...], params: dict[str, Any]) -> Template | None:
    """:func:`with_number` for each of ``names`` in turn (a function's number arguments: ``np.clip``'s bounds);
    None when one of them is not found exactly once."""
    for name in names:
        template = with_number(template, name, params[name])  # type: ignore[assignment]
        if template is None:
            return None
    return template


# Per row builder: the names of the arguments its builder said it passes to the graph as they are when they are
# Python floats (``extra["any_number"]`` of a function row), gathered as calls are built: the fallback key
# (``numbers_key``) when a call's own signature is not kept.
NUMBER_SLOTS: dict[Any, frozenset[str]] = {}


def numbers_key(key: tuple[Any, ...], params: dict[str, Any], names: frozenset[str]) -> tuple[Any, ...] | None:
    """``key`` (a function call's signature) with the part of each argument among ``names`` that is a Python float
    replaced by one for any float; None when there is none, or when one is finite beyond the range of the call's
    float result dtype (torch refuses to convert it: ``torch.clamp(t, 1e300)`` on float32 raises, where the check of
    that value reports it). A template stored under such a key was made with exactly those arguments read from the
    call (``with_numbers``): the marked parts say which."""
    result = key[2]
    if type(result) is not tuple or len(result) != 2 or not isinstance(result[0], np.dtype) \
            or result[0].kind != "f":
        return None
    parts = list(key)
    changed = False
    for i, part in enumerate(parts):
        if type(part) is tuple and part and type(part[0]) is str and part[0] in names:
            value = params.get(part[0])
            if type(value) is float:
                if not in_float_range(value, result[0]):
                    return None
                parts[i] = (part[0], float, ANY_NUMBER)
                changed = True
    return tuple(parts) if changed else None


def for_any_float(key: Any, params: dict[str, Any], build: Any) -> Any:
    """The template a function call whose own signature ``key`` is not kept takes, recorded for any float where its
    row's builder passes floats as they are (None when there is none): the function hook's and
    ``Session.record``'s fallback."""
    names = NUMBER_SLOTS.get(build)
    if names is None or key is None:
        return None
    generic = numbers_key(key, params, names)
    return TEMPLATES.get(generic) if generic is not None else None


def store_for_any_float(key: Any, template: Template, names: tuple[str, ...], params: dict[str, Any],
                        build: Any) -> None:
    """Keep ``template`` (just recorded for ``key``) also for any float as the arguments ``names``, which its builder
    passed to the graph as they are, when each is found once (``with_numbers``)."""
    numbers = frozenset(names)
    generic_key = numbers_key(key, params, numbers)
    generic = with_numbers(template, names, params) if generic_key is not None else None
    if generic is None:
        return
    store(generic_key, generic)
    slots = NUMBER_SLOTS.get(build)
    if slots is None or not numbers <= slots:
        NUMBER_SLOTS[build] = numbers if slots is None else slots | numbers


def number_fits(number: Any, kind: Any) -> bool:
    """Whether a Python number beside an operand of ``kind`` (a traced array's dtype, or a number's type) reaches
    NumPy's loop as itself, so that the recording for any number can take it: not a finite number beyond a float16,
    float32 or complex64 array's range, which NumPy casts to inf first (``h16 * 1e6`` is nan where h16 is 0)."""
    return not isinstance(kind, np.dtype) or kind.kind not in "fc" or in_float_range(as_float(number), kind)


def any_number(key: tuple[Any, ...]) -> tuple[Any, ...]:
    """The key under which a ufunc hook key's template for any number of its last operand's type is kept."""
    return (*key[:-1], ANY_NUMBER)


def store(key: Any, template: Any) -> None:
    """Keep ``template`` for ``key`` (None: never replay the signature)."""
    if len(TEMPLATES) >= _MAX_TEMPLATES:
        TEMPLATES.clear()
    TEMPLATES[key] = template if template is not None else NO_TEMPLATE  # type: ignore[assignment]



def trusted(builder: Any, start: int) -> None:
    """The nodes of a torch call recorded as the cell made it: torch computed the eager value itself, so the
    graph's dtype and shape are the eager ones by construction (nothing to run, nothing to cast)."""
    del builder.fresh[start:]
