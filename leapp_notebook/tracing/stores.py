"""Traced data written into a plain array by item assignment: ``BUF[:3] = h`` where ``BUF`` is an ndarray the
cell did not make through NumPy (a buffer allocated in an earlier cell, an attribute of an object).

A plain ndarray's ``__setitem__`` runs in C and calls nothing the tracer can hook: the write is invisible, the
array's new bytes are taken as a genuine constant wherever it is used next, and the export is wrong for every
other input without a word. (A write into an array the cell made, ``np.zeros(...)``, is seen: that array is a
watched ``TracedArray``; one through ``out=`` is seen by the hook of the call.)

So the cell's code is compiled with each item assignment binding its value to a name of its own and passing the
target's object through :func:`into` with it: ``BUF[k] = v`` runs as ``__leapp_into__(BUF, __leapp_value0__,
"BUF")[k] = (__leapp_value0__ := v)``. Python evaluates the value first, then the target, once each, as before. Outside
a trace, and for any target but a plain ndarray, the hook gives the target back and does nothing else. For a plain
ndarray receiving traced data it tells the session, which bakes every array over the written bytes wherever it is
used from then on and reports the write (``Session.written_into_plain``, ``Session.taint_of``).

The hook is a builtin (``builtins.__leapp_into__``): a function the cell defines keeps calling it after the trace,
from any namespace. The names a cell's top level binds are removed from its namespace when the trace ends. A cell
without an item assignment is compiled from its text.
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

INTO = "__leapp_into__"
VALUE = "__leapp_value{}__"  # the name a statement binds its value to, one per item target in the cell
HELD_VALUE = re.compile(r"__leapp_value\d+__")


def into(target: Any, value: Any, text: str) -> Any:
    """``target``, about to receive ``value`` by item assignment (``text``: the target as the cell spells it)."""
    sess = _session.ACTIVE
    if sess is None or sess.suspended or sess.thread != get_ident():
        return target
    written = target.base if type(target) is flatiter else target  # BUF.flat[:] = h writes into BUF
    if type(written) is sess.array_type or not isinstance(written, ndarray):
        return target
    builder = builder_of((value,))
    if builder is not None and not builder.closed:
        sess.written_into_plain(builder, written, text, item=True)
    return target


builtins.__dict__.setdefault(INTO, into)


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


def _hooked(value: ast.expr, target: ast.expr, names: list[str]) -> ast.expr:
    """``value`` for ``target``: bound to a new name (added to ``names``) whose value the target's object passes
    through :func:`into` when ``target`` is an item, paired item by item with a tuple or list of targets when both are
    one of as many items; as it is otherwise (a name, an attribute, a tuple of targets given one value to unpack)."""
    if type(target) is ast.Subscript:
        name = VALUE.format(len(names))
        names.append(name)
        target.value = ast.copy_location(ast.Call(
            func=ast.copy_location(ast.Name(id=INTO, ctx=ast.Load()), target),
            args=[target.value, ast.copy_location(ast.Name(id=name, ctx=ast.Load()), target),
                  ast.copy_location(ast.Constant(value=ast.unparse(target.value)), target)],
            keywords=[]), target.value)
        return ast.copy_location(ast.NamedExpr(target=ast.copy_location(ast.Name(id=name, ctx=ast.Store()), value),
                                               value=value), value)
    if type(target) in (ast.Tuple, ast.List) and type(value) in (ast.Tuple, ast.List) \
            and len(target.elts) == len(value.elts) \
            and not any(type(e) is ast.Starred for e in (*target.elts, *value.elts)):
        value.elts = [_hooked(v, t, names) for v, t in zip(value.elts, target.elts, strict=True)]
    return value


def compile_cell(source: str, filename: str) -> Any:
    """The code of ``source`` with every item assignment passing its value through :func:`into` (line numbers kept:
    the hazards, tracebacks and the cell's sites read them): ``x[k] = v``, ``x[k] = y[k] = v``, ``x[a], y[b] = u,
    v``, ``x[k]: T = v``, whatever the target's object (``d["k"][a] = v``, ``get()[a] = v``). Not hooked: a tuple of
    targets given one value to unpack (``x[a], y[b] = pair``: the pairing is the value's own)."""
    if not _may_assign_items(source):
        return compile(source, filename, "exec")
    tree = ast.parse(source, filename, "exec")
    names: list[str] = []
    for node in ast.walk(tree):
        if type(node) is ast.Assign:
            for target in node.targets:
                node.value = _hooked(node.value, target, names)
        elif type(node) is ast.AnnAssign and node.value is not None:
            node.value = _hooked(node.value, node.target, names)
    return compile(tree, filename, "exec")
