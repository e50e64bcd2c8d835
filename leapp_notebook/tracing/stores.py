"""Traced data written into a plain array by item assignment: ``BUF[:3] = h`` where ``BUF`` is an ndarray the
cell did not make through NumPy (a buffer allocated in an earlier cell, an attribute of an object).

A plain ndarray's ``__setitem__`` runs in C and calls nothing the tracer can hook: the write is invisible, the
array's new bytes are taken as a genuine constant wherever it is used next, and the export is wrong for every
other input without a word. (A write into an array the cell made, ``np.zeros(...)``, is seen: that array is a
watched ``TracedArray``; one through ``out=`` is seen by the hook of the call.)

So the cell's code is compiled with each item assignment to a name or an attribute (``BUF[k] = v``,
``self.buf[k] = v``) passing its value through :func:`store` first: ``BUF[k] = __leapp_store__(v, BUF, "BUF")``.
The value is evaluated first, as Python does; the target is an expression without calls, evaluated a second time
(a name, or attributes of one). Any other target (``buffers["pos"][k] = v``) is evaluated once: the statement binds
its value to a name of its own and the target passes through :func:`into`: ``__leapp_into__(buffers["pos"],
__leapp_value0__, ...)[k] = (__leapp_value0__ := v)`` (Python evaluates the value, then the target). Outside a
trace, and for any target but a plain ndarray, the hooks change nothing. For a plain ndarray receiving traced data
they tell the session, which bakes every array over the written bytes wherever it is used from then on and reports
the write (``Session.written_into_plain``, ``Session.taint_of``).

The hooks are builtins (``builtins.__leapp_store__``, ``__leapp_into__``): a function the cell defines keeps calling
them after the trace, from any namespace. A cell without an item assignment is compiled from its text.
"""

from __future__ import annotations

import ast
import builtins
import re
from _thread import get_ident
from typing import Any

from numpy import flatiter, ndarray

from . import session as _session
from .provenance import builder_of

STORE = "__leapp_store__"
INTO = "__leapp_into__"
VALUE = "__leapp_value{}__"  # the name a statement binds its value to, for INTO (one per statement: never nested)
HELD_VALUE = re.compile(r"__leapp_value\d+__")


def store(value: Any, target: Any, text: str) -> Any:
    """``value``, about to be written into ``target[...]`` (``text``: the target as the cell spells it)."""
    sess = _session.ACTIVE
    if sess is None or sess.suspended or sess.thread != get_ident():
        return value
    if type(target) is flatiter:  # BUF.flat[:] = h writes into BUF
        target = target.base
    if type(target) is sess.array_type or not isinstance(target, ndarray):
        return value
    builder = builder_of((value,))
    if builder is not None and not builder.closed:
        sess.written_into_plain(builder, target, text, item=True)
    return value


def into(target: Any, value: Any, text: str) -> Any:
    """``target``, about to receive ``value`` by item assignment (``store``, for a target the cell spells as more than
    a name or attributes: ``buffers["pos"][:] = h``, evaluated once, after the value, as Python evaluates it)."""
    store(value, target, text)
    return target


builtins.__dict__.setdefault(STORE, store)
builtins.__dict__.setdefault(INTO, into)


def _plain_target(node: ast.expr) -> bool:
    """A name, or attributes of one: evaluating it again runs no call (a property aside)."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name)


def _loaded(node: ast.expr) -> ast.expr:
    """A copy of a name-or-attributes target's object expression, in load context, at its place."""
    if isinstance(node, ast.Attribute):
        copy: ast.expr = ast.Attribute(value=_loaded(node.value), attr=node.attr, ctx=ast.Load())
    else:
        copy = ast.Name(id=node.id, ctx=ast.Load())  # type: ignore[attr-defined]
    return ast.copy_location(copy, node)


# a lone ``=`` (not ``==``, ``<=``, ``>=``, ``!=``, ``:=`` or an augmented assignment)
_LONE_EQUALS = re.compile(r"(?<![=<>!:+\-*/%&|^@])=(?!=)")


def _may_assign_items(source: str) -> bool:
    """Whether a line of ``source`` may assign to an item: a lone ``=`` outside any parenthesis (not a keyword
    argument) with a bracket before it on its line (``BUF[k] = v``, ``a, BUF[k] = u, v``, ``x = BUF[k] = v``, the
    closing ``] = v`` of a subscript over several lines, an annotated ``BUF[k]: T = v``). A cell with none is compiled
    from its text: parsing a cell into Python objects and compiling the tree costs about ten times compiling its text
    (100 ms for 850 lines). A line that only looks like one (a comment, ``x: Dict[str, int] = {}``) costs that time,
    nothing else."""
    for line in source.replace("\\\n", " ").splitlines():
        if "[" not in line and "]" not in line:
            continue
        for equals in _LONE_EQUALS.finditer(line):
            head = line[:equals.start()]
            if ("[" in head or "]" in head) and head.count("(") <= head.count(")"):
                return True
    return False


def _through_store(value: ast.expr, target: ast.expr) -> ast.expr:
    """``value`` passed through :func:`store` for each item assignment to a name or an attribute in ``target``: the
    target itself, or the targets of a tuple or list whose value is a tuple or list of as many items."""
    if type(target) is ast.Subscript and _plain_target(target.value):
        return ast.copy_location(ast.Call(
            func=ast.copy_location(ast.Name(id=STORE, ctx=ast.Load()), value),
            args=[value, _loaded(target.value), ast.copy_location(ast.Constant(value=ast.unparse(target.value)),
                                                                   value)],
            keywords=[]), value)
    if type(target) in (ast.Tuple, ast.List) and type(value) in (ast.Tuple, ast.List) \
            and len(target.elts) == len(value.elts) \
            and not any(type(e) is ast.Starred for e in (*target.elts, *value.elts)):
        value.elts = [_through_store(v, t) for v, t in zip(value.elts, target.elts, strict=True)]
    return value


def compile_cell(source: str, filename: str) -> Any:
    """The code of ``source`` with every item assignment passing its value through a hook (line numbers kept: the
    hazards, tracebacks and the cell's sites read them): to a name or an attribute through :func:`store`
    (``x[k] = v``, ``x[k] = y[k] = v``, ``x[a], y[b] = u, v``, ``x[k]: T = v``), to any other target through
    :func:`into` (``d["k"][a] = v``, the value bound to a name of the statement's own). Not hooked: a tuple of targets
    given one value (``x[a], y[b] = pair``: the pairing is the value's own), and a target other than a name or an
    attribute inside a tuple of targets."""
    if not _may_assign_items(source):
        return compile(source, filename, "exec")
    tree = ast.parse(source, filename, "exec")
    held = 0
    for node in ast.walk(tree):
        kind = type(node)
        if kind is not ast.Assign and (kind is not ast.AnnAssign or node.value is None):
            continue
        targets = node.targets if kind is ast.Assign else [node.target]
        if all(type(t) is not ast.Subscript or _plain_target(t.value) for t in targets):
            for target in targets:
                node.value = _through_store(node.value, target)
            continue
        # a target such as buffers["pos"][:]: evaluating it again could run anything (a getitem of a traced array
        # records a node), so the value is bound to a name of the statement's own, and each target passes it
        name = VALUE.format(held)
        held += 1
        value = node.value
        node.value = ast.copy_location(ast.NamedExpr(target=ast.copy_location(ast.Name(id=name, ctx=ast.Store()),
                                                                              value), value=value), value)
        for target in targets:
            if type(target) is ast.Subscript:
                text = ast.copy_location(ast.Constant(value=ast.unparse(target.value)), target)
                target.value = ast.copy_location(ast.Call(
                    func=ast.copy_location(ast.Name(id=INTO, ctx=ast.Load()), target),
                    args=[target.value, ast.copy_location(ast.Name(id=name, ctx=ast.Load()), target), text],
                    keywords=[]), target.value)
    return compile(tree, filename, "exec")
