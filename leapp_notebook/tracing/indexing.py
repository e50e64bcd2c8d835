"""Indexing and iteration of traced arrays: NumPy keys translated into graph keys (traced index arrays,
reversed slices, scalar keys), functional writes for ``x[key] = value``, and iteration element by element.
"""

from __future__ import annotations

import operator
from typing import TYPE_CHECKING, Any, Iterator

import numpy as np
import torch
import torch.fx
from numpy import ndarray  # not np.ndarray, torch.Tensor, torch.fx: their modules' __getattr__ defeats the lookup cache
from torch import Tensor, fx

from . import replay, torch_impl
from .dtypes import dtype_name
from .facts import update
from .provenance import Provenance, builder_of, fingerprint, iter_traced, plain, provenance, root

_OWN_READS = torch._C.DisableTorchFunction  # the tracer's own read of a traced tensor (session._OWN_READS)

if TYPE_CHECKING:
    from .builder import NodeBuilder
    from .session import Session


def getitem(sess: Session, array: Any, key: Any, plain_key: Any, *, iterating: bool = False) -> Any:
    key_tuple = key if type(key) is tuple else (key,)
    prov = array._lp
    builder = prov.builder if prov is not None and prov.builder is not None else builder_of(key_tuple)
    sess.suspended += 1
    try:
        eager = ndarray.view(array, ndarray)[plain_key]
    finally:
        sess.suspended -= 1
    if builder is None:
        return sess.watch(eager) if isinstance(eager, ndarray) else eager
    if builder.closed:
        builder = sess.reopen(builder)
        if builder.closed:
            return sess.outside(builder, eager, "indexing")
    site = sess.where() if iterating else sess.where_below()  # where_below: the frame above __getitem__ is the caller's
    line, location, helper = site
    # a key recorded before on an operand of the same dtype and shape: its nodes again (tracing/replay.py)
    params = {"a": array, "k": key_tuple}
    signature = replay.index_key(sess, builder, _GETITEM, array, key_tuple, eager)
    template = replay.TEMPLATES.get(signature) if signature is not None else None
    if template is not None and template is not replay.NO_TEMPLATE and template.aliases is not None \
            and not replay.fits(template, params, builder):
        template = None  # made from an index that is the array itself, unlike this one
    if template is not None and template is not replay.NO_TEMPLATE:
        if template.wraps and type(eager) is ndarray:  # replayed and wrapped in one call
            return (template.direct or replay.direct(template))(builder, params, site, eager)
        nodes, _ = (template.fn or replay.compiled(template))(builder, params, site)
        return sess.wrap(builder, eager, nodes)  # pending nodes are built with the facts the template captured
    start, reports = len(builder.fresh), builder.n_reports
    builder.settled_from = -1
    traced = _getitem(sess, builder, array, key_tuple, eager, line, location, helper, iterating, start)
    if signature is not None and template is None:
        node = traced._lp.node if isinstance(traced, ndarray) and traced._lp is not None else None
        captured = None
        if builder.n_reports == reports and builder.settled_from == start and node is not None:
            captured = replay.capture(builder, params, node, builder.last_casts, None)
        replay.store(signature, captured)
    return traced


def getitem_constant(sess: Session, table: ndarray, key: Any, expr: str | None = None, name: str | None = None
                     ) -> Any:
    """``table[key]``: a plain ndarray (a lookup table of the namespace) indexed with traced data, recorded as an index
    into the table's constant (``stores._Table``). The hazard names it ``expr``, else ``name[key]`` (``name``: the
    cell's spelling of the table, else the name it is bound to)."""
    key_tuple = key if type(key) is tuple else (key,)
    builder = builder_of(key_tuple)
    sess.suspended += 1  # (a torch index read as NumPy reads it: not an extraction of the cell's)
    try:
        eager = table[plain(key)]
    finally:
        sess.suspended -= 1
    if builder.closed:
        builder = sess.reopen(builder)
        if builder.closed:
            return sess.outside(builder, eager, "indexing")
    line, location, helper = sess.where_below()
    if expr is None:
        expr = f"{name or sess.name_of(table) or 'a constant'}{_key_text(key_tuple)}"
    if sess.profile == "leapp":  # as LEAPP 0.7.2 records it: baked
        sources = [value._lp.node.name for value in iter_traced(key_tuple, builder)]
        node = builder.const(np.asarray(eager), baked=True, origin=f"{expr} at line {line}", line=line,
                             source_nodes=sources, helper=helper)
        builder.report("table-index-baked", line, [node.name], location=location, pending_reach=True, expr=expr,
                       const=node.name)
        return sess.wrap(builder, eager, node)
    start = len(builder.fresh)
    builder.settled_from = -1
    traced = _getitem(sess, builder, table, key_tuple, eager, line, location, helper, False, start)
    marked = [traced._lp.node.name] if isinstance(traced, ndarray) and traced._lp is not None else []
    builder.report("table-index-recorded", line, marked, location=location, severity="warning", expr=expr)
    return traced


_TAKE_MODES = ("raise", "wrap", "clip")


def take_constant(sess: Session, table: ndarray, indices: Any, axis: Any, mode: str, expr: str) -> Any:
    """``np.take(table, indices, axis, mode=mode)`` (or ``table.take(...)``) of a plain ndarray with traced indices:
    NumPy does not dispatch on the indices, so its C loop would read them as a constant. It is the index
    ``table[:, ..., indices]`` along ``axis`` (the flattened table for ``axis=None``), the indices first wrapped
    (``np.mod``) or clipped (``np.clip``) as ``mode`` asks, each a recorded op: :func:`getitem_constant`."""
    if mode not in _TAKE_MODES:
        raise ValueError(f"mode must be one of {', '.join(map(repr, _TAKE_MODES))}, not {mode!r}")
    if axis is None:
        table, axis = table.reshape(-1), 0
    else:
        axis = operator.index(axis)
        if not -table.ndim <= axis < table.ndim:
            raise np.exceptions.AxisError(axis, table.ndim)
        axis %= table.ndim
    size = table.shape[axis]
    if mode == "wrap" and size:
        indices = np.mod(indices, size)
    elif mode == "clip" and size:
        indices = np.clip(indices, 0, size - 1)
    return getitem_constant(sess, table, (slice(None),) * axis + (indices,), expr)


class _Indexing:
    """The signature's row for indexing (a signature names a row by its builder: this one is its own)."""

    __slots__ = ("build",)

    def __init__(self) -> None:
        self.build = self


_GETITEM = _Indexing()


def _getitem(sess: Session, builder: NodeBuilder, array: Any, key_tuple: tuple[Any, ...], eager: Any,
             line: int | None, location: str | None, helper: str | None, iterating: bool, start: int) -> Any:
    text = _key_text(key_tuple)

    def emit(op: str, target: Any, args: tuple[Any, ...], kwargs: dict[str, Any] | None = None):
        return builder.emit(op, target, args, kwargs, line=line, numpy=f"x{text}", location=location,
                            helper=helper)

    source = sess.graph_value(builder, array, line, as_tensor=True, helper=helper)
    scalar_result = not isinstance(eager, ndarray)
    if scalar_result and sess.profile == "leapp":
        node = builder.const(np.asarray(eager), baked=True,
                             origin=f"x{text} at line {line}: a NumPy scalar, no longer traced",
                             line=line, source_nodes=[source.name], helper=helper)
        what = f"{sess.name_of(array) or 'x'}{text} removes every axis and gives"
        builder.report("scalar-iteration-baked" if iterating else "scalar-key-baked", line, [node.name],
                       location=location, what=what, type=type(eager).__name__, const=node.name)
        return sess.wrap(builder, eager, node)
    graph_key, reversed_dims, pre_flips, advanced = _graph_key(sess, builder, array, key_tuple, line, helper)
    flipped_first = None
    if pre_flips:
        source = flipped_first = emit("call_function", torch.flip, (source, tuple(pre_flips)))
    if reversed_dims and advanced:
        node = builder.const(np.asarray(eager), baked=True, origin=f"x{text} at line {line}", line=line,
                             source_nodes=[source.name], helper=helper)
        builder.report("reversed-with-index-arrays", line, [node.name], location=location, severity="error",
                       expr=f"{sess.name_of(array) or 'x'}{text}", const=node.name,
                       fix=flip_fix(sess.name_of(array) or "x", key_tuple, array.ndim))
        return sess.wrap(builder, eager, node)
    node = emit("call_function", operator.getitem,
                (source, graph_key if len(graph_key) != 1 else graph_key[0]))
    if reversed_dims or pre_flips:
        if sess.profile == "full":
            if reversed_dims:
                node = emit("call_function", torch.flip, (node, tuple(reversed_dims)))
            marked = [flipped_first.name, node.name] if flipped_first is not None else [node.name]
            builder.report("reversed-flipped", line, marked, location=location,
                           expr=f"{sess.name_of(array) or 'x'}{text}",
                           fix=flip_fix(sess.name_of(array) or "x", key_tuple, array.ndim))
        else:
            builder.report("reversed-unreversed", line, [node.name], location=location,
                           expr=f"{sess.name_of(array) or 'x'}{text}",
                           fix=flip_fix(sess.name_of(array) or "x", key_tuple, array.ndim))
    if scalar_result:
        what = f"{sess.name_of(array) or 'x'}{text} removes every axis and gives"
        builder.report("scalar-iteration-kept" if iterating else "scalar-key-kept", line, [node.name],
                       location=location, what=what)
    traced = sess.wrap(builder, eager, node)
    if not reversed_dims and not pre_flips and not advanced:
        update(node, view=True)  # basic indexing: NumPy's value is a view of the source, same layout
    replay.settle(sess, builder, start, (array, key_tuple), traced)
    return traced


def _graph_key(sess: Session, builder: NodeBuilder, array: Any, key_tuple: tuple[Any, ...], line: int | None,
               helper: str | None, *, for_setitem: bool = False) -> tuple[tuple[Any, ...], list[int], bool]:
    """Translate a NumPy key: traced index arrays become int64 nodes, reversed slices positive ones (their
    output dims are returned so the caller can flip them; in ``full`` a whole-axis reversal ``x[::-k]`` returns
    its input dim instead, to flip before indexing, which holds whatever the axis length), lists become
    constants."""
    ndim = array.ndim
    consumed = 0
    for comp in key_tuple:
        if comp is None or comp is Ellipsis:
            continue
        if isinstance(comp, ndarray) and comp.dtype == np.bool_:
            consumed += max(comp.ndim, 1)
        else:
            consumed += 1
    graph_key: list[Any] = []
    reversed_dims: list[int] = []
    pre_flips: list[int] = []
    advanced = False
    in_dim = 0
    out_dim = 0
    for comp in key_tuple:
        if comp is None:
            graph_key.append(None)
            out_dim += 1
        elif comp is Ellipsis:
            graph_key.append(Ellipsis)
            in_dim += ndim - consumed
            out_dim += ndim - consumed
        elif isinstance(comp, slice):
            bounds = []
            for part in (comp.start, comp.stop, comp.step):
                if provenance(part) is not None:
                    part = int(part)  # reported as a value extraction by __int__
                elif isinstance(part, np.integer):
                    part = int(part)
                bounds.append(part)
            start, stop, step = bounds
            if step is not None and step < 0:
                size = array.shape[in_dim]
                idx = range(*slice(start, stop, step).indices(size))
                if start is None and stop is None and not for_setitem and sess.profile == "full":
                    # x[::-k] is flip(x)[::k] whatever the length (a masked selection's varies): flip first
                    graph_key.append(slice(None, None, -step if step != -1 else None))
                    pre_flips.append(in_dim)
                elif len(idx) == 0:
                    graph_key.append(slice(0, 0, None))
                elif for_setitem:
                    graph_key.append(builder.const(np.asarray(list(idx), dtype=np.int64), baked=False,
                                                   origin=None, line=line, helper=helper))
                    advanced = True
                else:
                    graph_key.append(slice(idx[-1], idx[0] + 1, -step if step != -1 else None))
                    reversed_dims.append(out_dim)
            else:
                graph_key.append(slice(start, stop, step))
            in_dim += 1
            out_dim += 1
        elif isinstance(comp, (bool, np.bool_)):
            graph_key.append(bool(comp))
            out_dim += 1
        elif isinstance(comp, (int, np.integer)):
            graph_key.append(int(comp))
            in_dim += 1
        else:
            if provenance(comp) is not None:
                if isinstance(comp, Tensor):  # a traced torch index (logits.argmax()): NumPy reads its values
                    with _OWN_READS():
                        plain_comp = comp.detach().cpu().numpy()
                else:
                    plain_comp = ndarray.view(comp, ndarray)
                value = sess.graph_value(builder, comp, line, as_tensor=True, helper=helper)
                if isinstance(comp, Tensor) and plain_comp.dtype.kind in "iu" and plain_comp.size == 1 \
                        and plain_comp.ndim > 0:
                    # NumPy takes a one-element integer tensor as an integer (its __index__), not an index array
                    value = builder.emit("call_method", "reshape", (value, ()), line=line,
                                         numpy="one-element tensor as an integer index", location=None, helper=helper)
                    plain_comp = plain_comp.reshape(())
            else:
                plain_comp = np.asarray(comp)
                if plain_comp.dtype.kind in "iu" and plain_comp.dtype != np.int64:
                    plain_comp = plain_comp.astype(np.int64)
                value = builder.const(plain_comp, baked=False, origin=None, line=line, helper=helper)
            if plain_comp.dtype.kind in "iu" and plain_comp.dtype != np.int64 and isinstance(value, fx.Node) \
                    and value.op != "get_attr":
                value = builder.emit("call_method", "to", (value, torch.int64), line=line,
                                     numpy="index array (int64 for torch)", location=None, helper=helper)
            graph_key.append(value)
            if plain_comp.ndim > 0:
                advanced = True
            in_dim += max(plain_comp.ndim, 1) if plain_comp.dtype == np.bool_ else 1
            out_dim += 1
    return tuple(graph_key), reversed_dims, pre_flips, advanced

def setitem(sess: Session, array: Any, key: Any, value: Any) -> None:
    key_tuple = key if type(key) is tuple else (key,)
    prov = array._lp
    traced = prov is not None and prov.builder is not None
    builder = prov.builder if traced else builder_of((value,) + key_tuple)
    eager = ndarray.view(array, ndarray)
    if builder is None or builder.closed:
        eager[plain(key)] = plain(value)
        version = sess.bump(eager, written_region(eager, key_tuple)) if sess.versions or traced else 0
        if not traced:
            array._lp = Provenance.watch(fingerprint(eager))
        else:
            array._lp = Provenance(prov.builder, prov.node, version)
            array._lp.lost, array._lp.line = prov.lost, prov.line
        return
    line, location, helper = sess.where()
    if sess.profile == "leapp" and (not traced or prov.lost is not None):
        # LEAPP 0.7.2 does not follow traced data written into an untraced array: it stays plain and
        # is baked wherever it meets traced data.
        with sess.eager():
            eager[plain(key)] = plain(value)
        sess.bump(eager, written_region(eager, key_tuple))
        if not traced or prov.lost is None:
            array._lp = Provenance.lost_in(builder, f"untraced array that received traced data at line {line}", line)
            builder.report("write-into-untraced", line, [], location=location,
                           target=f"{sess.name_of(array) or 'x'}{_key_text(key_tuple)}")
        return
    start = len(builder.fresh)
    if _writes_back(sess, array, eager, key, value):
        # `z[1:3] *= 2`: Python writes the modified view back; the only write since z got its node is
        # the one through that very view, and this assignment covers exactly its region.
        base = prov.node
    else:
        base = sess.graph_value(builder, array, line, as_tensor=True, helper=helper)
    graph_key, _, _, _ = _graph_key(sess, builder, array, key_tuple, line, helper, for_setitem=True)
    if isinstance(value, (ndarray, np.generic, Tensor)):  # ``a[...] = t`` too: its node, or a constant
        graph_val = sess.graph_value(builder, value, line, as_tensor=True, helper=helper)
    elif isinstance(value, (list, tuple)) and builder_of(tuple(value)) is None:
        # z[[0, 2], [1, 3]] = [7.0, 8.0]: a constant of the array's dtype (torch takes no list as the value)
        graph_val = sess.graph_value(builder, np.asarray(value, dtype=eager.dtype), line, as_tensor=True,
                                     helper=helper)
    else:
        graph_val = value
    with sess.eager():
        eager[plain(key)] = plain(value)
    version = sess.bump(eager, written_region(eager, key_tuple))
    node = builder.emit("call_function", torch_impl.setitem,
                        (base, graph_key if len(graph_key) != 1 else graph_key[0], graph_val),
                        line=line, numpy=f"x{_key_text(key_tuple)} = ...", location=location, helper=helper)
    update(node, shape=eager.shape, dtype=dtype_name(eager.dtype))
    array._lp = Provenance(builder, node, version)
    sess.wrote_through(array, prov)
    replay.settle(sess, builder, start, (value, key_tuple), array, known={base: eager})

_BASIC_PARTS = frozenset({slice, int, type(None), type(Ellipsis)})


def basic_key(key: tuple[Any, ...]) -> bool:
    """Whether an indexing key holds only slices, ints, None and Ellipsis: nothing to make plain, and a view of what
    it indexes (NumPy's and torch's basic indexing)."""
    for part in key:
        if type(part) not in _BASIC_PARTS:
            return False
    return True


def written_region(eager: ndarray, key: tuple[Any, ...]) -> ndarray | None:
    """The view of ``eager`` that ``eager[key] = v`` wrote, for a basic key (a 0-d view where the ints pick one
    element); None for any other key (all of ``eager`` counts as written)."""
    if not basic_key(key):
        return None
    try:
        region = eager[key if any(part is Ellipsis for part in key) else (*key, Ellipsis)]
    except (IndexError, TypeError):
        return None
    return region if isinstance(region, ndarray) else None


def _writes_back(sess: Session, array: Any, eager: ndarray, key: Any, value: Any) -> bool:
    prov, value_prov = array._lp, provenance(value)
    if not (value_prov is not None and isinstance(value, ndarray) and prov is not None
            and prov.node is not None and prov.builder is value_prov.builder):
        return False
    current = sess.versions.get(id(root(eager)), 0)
    if not (value_prov.version == current == prov.version + 1):
        return False
    try:
        region = eager[plain(key)]
    except (IndexError, TypeError):
        return False
    region_info = region.__array_interface__ if isinstance(region, ndarray) else None
    value_info = value.__array_interface__
    return (region_info is not None and region_info["data"][0] == value_info["data"][0]
            and region.shape == value.shape and region.strides == value.strides)

def iterate(sess: Session, array: Any) -> Iterator[Any]:
    if array.ndim == 0:
        raise TypeError("iteration over a 0-d array")
    return iter([getitem(sess, array, i, i, iterating=True) for i in range(array.shape[0])])


def flip_fix(name: str, key_tuple: tuple[Any, ...], ndim: int) -> str:
    """The reversed-slice fix for ``name[key]``, naming the axes the negative steps reverse (``q[..., ::-1]``
    reverses the last axis, not the first: ``np.flip(q, axis=-1)``)."""
    consuming = sum(1 for part in key_tuple if part is not None and part is not Ellipsis
                    and not (isinstance(part, ndarray) and part.dtype == bool))
    axes, axis, forward, plain, after_ellipsis = [], 0, [], True, False
    for part in key_tuple:
        if part is Ellipsis:
            axis, after_ellipsis = ndim - (consuming - axis), True
            forward.append("...")
            continue
        if part is None:
            forward.append("None")
            plain = False  # a new axis moves the ones after it: written out below as a general rule
            continue
        if isinstance(part, slice) and part.step is not None and int(part.step) < 0:
            axes.append(axis - ndim if after_ellipsis else axis)
            plain = plain and part.start is None and part.stop is None and int(part.step) == -1
            forward.append(":")
        else:
            forward.append(_key_text((part,))[1:-1])
            plain = plain and isinstance(part, slice)  # an int removes its axis: the flip's axis would move
        axis += 1
    axis_text = str(axes[0]) if len(axes) == 1 else "(" + ", ".join(map(str, axes)) + ")"
    if plain:
        kept = [p for p in forward if p not in (":", "...")]
        target = f"{name}[{', '.join(forward)}]" if kept else name
        return f"use np.flip({target}, axis={axis_text}) instead of the negative step"
    return (f"take the slice with a positive step and reverse axis {axis_text} of {name} with np.flip(..., "
            f"axis=...) (np.flip reverses an axis as torch.flip records it), or index that axis with an index "
            f"array counting down (np.arange(n - 1, -1, -1))")


def _key_text(key_tuple: tuple[Any, ...]) -> str:
    parts = []
    for comp in key_tuple:
        if comp is None:
            parts.append("None")
        elif comp is Ellipsis:
            parts.append("...")
        elif isinstance(comp, slice):
            text = ":".join("" if p is None else str(int(p)) if isinstance(p, (int, np.integer)) else "?"
                            for p in (comp.start, comp.stop, comp.step))
            parts.append(text.rstrip(":") if comp.step is None else text)
        elif isinstance(comp, (int, np.integer, bool)):
            parts.append(str(comp))
        elif isinstance(comp, ndarray):
            parts.append(f"<{comp.dtype.name} array {comp.shape}>")
        else:
            parts.append(type(comp).__name__)
    return "[" + ", ".join(p if p else ":" for p in parts) + "]"
