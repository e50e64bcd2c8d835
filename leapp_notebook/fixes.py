"""One-click fixes: the code edit that removes a hazard, where the fix is a mechanical rewrite.

``edit_for(source, hazard, trace)`` returns an ``Edit`` (1-based ``line``..``end_line`` of ``source``,
the exact ``old`` text of those lines, the ``new`` text) or ``None`` when no rewrite is certain. The
rewrites are made with LibCST on the parsed cell, so everything outside the edited lines — comments,
spacing, quotes — is left byte for byte as it was:

- ``reversed-slice``: ``x[::-1]`` -> ``np.flip(x, axis=0)``; a step ``-s`` or a start/stop become a
  forward slice, a flip and a forward step (``x[5:1:-2]`` -> ``np.flip(x[2:6], axis=0)[::2]``).
- ``numpy-scalar``: ``np.float32(2.0)`` -> ``np.array(2.0, dtype=np.float32)``.
- ``value-extraction``: ``float(e)`` / ``e.item()`` -> ``e`` where the value only feeds arithmetic.
- ``broken-chain``: literal scalar keys keep an axis (``x[0]`` -> ``x[0:1]``, ``x[0, -1]`` ->
  ``x[0:1, -1:]``) where the value (or the name it is bound to) only feeds arithmetic;
  ``for v in x[:2]:`` iterates over ``(x[0:1], x[1:2])``, ``for v in x:`` over
  ``(x[i:i + 1] for i in range(len(x)))``; ``a, b = x`` unpacks ``x[0:1], x[1:2]``; a full
  reduction feeding arithmetic keeps its axes (``np.sum(x)`` -> ``np.sum(x, keepdims=True)``).
- ``untraced-call``: ``t = call(...)`` inside an ``annotate`` node is split into two nodes:
  ``annotate.output_tensors(node, {...})`` with the traced values the call and the rest of the node
  read, the call, then ``annotate.input_tensors(node + "_post", {...})`` with the values read after it
  and the call's result; the node's ``output_tensors`` becomes the new node's.
- ``semantic-mismatch`` of LEAPP's axis=None defect: ``x.max()`` -> ``np.max(x)``,
  ``np.cumsum(x)`` -> ``np.cumsum(x.reshape(-1), axis=0)``.
- ``untraced-call`` of a write into a node input (``x += 1`` on the array the node was given): ``x = x.copy()``
  (``x.clone()`` for a tensor) inserted after the ``annotate.input_tensors`` line that binds ``x`` (at the top of a
  cell that names its inputs on the magic's line), checked as the shape-changing rewrites are.

The reversed-slice, numpy-scalar and axis=None rewrites give the same eager result by construction
and are offered from the source alone. The broken-chain and value-extraction rewrites
change a value's shape (a scalar becomes a one-element array) or its NumPy promotion (a Python float
becomes a 0-d array): they are offered only when ``trace`` is given and re-running the rewritten cell
eagerly on the trace's own inputs gives outputs equal to the original's in value, shape and dtype.
The node split is offered only when re-tracing the split cell gives fewer errors and no new kind.

Line numbers are those of the traced source, ``trace.source``: for a cell run with ``%%leapp_trace``
that source starts with the magic line (as a comment), so its lines are the cell editor's lines.
"""

from __future__ import annotations

import ast
import contextlib
import io
import keyword
import re
import warnings
import weakref
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Iterator

import numpy as np
import torch

with warnings.catch_warnings():  # libcst.metadata's unused type-inference module warns about mypy_extensions
    warnings.simplefilter("ignore", DeprecationWarning)
    import libcst as cst
    from libcst.metadata import MetadataWrapper, PositionProvider

__all__ = ["Edit", "edit_for", "apply", "edits", "apply_edit"]


@dataclass(frozen=True)
class Edit:
    """Replace lines ``line``..``end_line`` (1-based, inclusive) whose text is ``old`` by ``new``.

    ``old`` and ``new`` are lines joined by ``"\\n"``, without the last line's line break.
    """

    line: int
    end_line: int
    old: str
    new: str

    def to_dict(self) -> dict[str, Any]:
        return {"line": self.line, "end_line": self.end_line, "old": self.old, "new": self.new}

    def apply(self, source: str) -> str:
        """``source`` with the edit made; ``ValueError`` when those lines no longer read ``old``."""
        return apply_edit(source, self)


def apply_edit(source: str, edit: Edit) -> str:
    """``source`` with ``edit`` made; ``ValueError`` when lines ``line``..``end_line`` are not ``edit.old``."""
    lines = _lines(source)
    if not 1 <= edit.line <= edit.end_line <= len(lines):
        raise ValueError(f"edit of lines {edit.line}-{edit.end_line} does not fit a {len(lines)}-line source")
    region = lines[edit.line - 1:edit.end_line]
    bodies = [_strip_break(text) for text in region]
    if "\n".join(bodies) != edit.old:
        raise ValueError(f"lines {edit.line}-{edit.end_line} have changed since the edit was made")
    line_break = region[-1][len(bodies[-1]):]
    return "".join(lines[:edit.line - 1]) + edit.new + line_break + "".join(lines[edit.end_line:])


def edit_for(source: str, hazard: Any, trace: Any = None) -> Edit | None:
    """The edit that removes ``hazard`` from ``source`` (the source its ``line`` refers to), or ``None``.

    ``trace`` (the ``Trace`` the hazard comes from) lets the rewrites that change a value's shape or
    promotion be checked by re-running the cell eagerly, and the node split by re-tracing it; without
    it those are not offered.
    """
    return _edit(_Source(source), hazard, trace)


def apply(source: str, hazard: Any, trace: Any = None) -> str | None:
    """``source`` with the fix of ``hazard`` applied, or ``None`` when no edit is offered."""
    edit = edit_for(source, hazard, trace)
    return None if edit is None else apply_edit(source, edit)


_CACHE: weakref.WeakKeyDictionary[Any, tuple[_Source, dict[int, tuple[Any, Edit | None]]]] = \
    weakref.WeakKeyDictionary()


def edits(trace: Any) -> list[Edit | None]:
    """One entry per ``trace.hazards`` (same order): its edit of ``trace.source``, or ``None``.

    Each hazard's edit is computed once per trace (a probe adds hazards later: those are computed
    when they appear), and each statement with a hazard is parsed once: the checked rewrites re-run
    the cell eagerly, and LibCST parses about a thousand lines a second.
    """
    try:
        source, known = _CACHE[trace]
    except KeyError:
        source, known = _Source(trace.source), {}
        with contextlib.suppress(TypeError):
            _CACHE[trace] = source, known
    except TypeError:
        source, known = _Source(trace.source), {}
    found = []
    for hazard in trace.hazards:
        entry = known.get(id(hazard))
        if entry is None or entry[0] is not hazard:
            entry = known[id(hazard)] = hazard, _edit(source, hazard, trace)
        found.append(entry[1])
    return found


def _edit(source: _Source, hazard: Any, trace: Any) -> Edit | None:
    line = getattr(hazard, "line", None)
    rewrite = _REWRITES.get(getattr(hazard, "kind", None))
    if rewrite is None or not isinstance(line, int) or getattr(hazard, "location", None) \
            or not 1 <= line <= len(source.lines):
        return None
    try:
        result = rewrite(source, hazard, line)
    except (SyntaxError, cst.ParserSyntaxError, RecursionError, ValueError):
        return None  # a source that does not parse, or a statement shape a rewrite does not handle
    if result is None:
        return None
    first, last, new_text, exact = result
    edit = _edit_between(source.text_of(first, last), new_text, line - first + 1)
    if edit is None:
        return None
    if exact is not True:
        check = exact if callable(exact) else \
            _retrace_is_cleaner if hazard.kind == "untraced-call" else _same_eager_result
        if trace is None or not check(trace, source.splice(first, last, new_text)):
            return None
    return Edit(edit.line + first - 1, edit.end_line + first - 1, edit.old, edit.new)


# ------------------------------------------------------------------------------------------
# the parsed cell
# ------------------------------------------------------------------------------------------

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")


def _lines(text: str) -> list[str]:
    """Lines with their breaks, split where Python's compiler counts lines (not at form feeds)."""
    return _LINE.findall(text)


def _strip_break(text: str) -> str:
    return text.rstrip("\r\n")


class _Source:
    """A cell's source: its lines, its ``ast`` (for the whole-cell questions: statement spans, later uses
    of a name) and LibCST parses of single top-level statements, made on demand and kept."""

    def __init__(self, text: str):
        self.text = text
        self.lines = _lines(text)
        self._tree: ast.Module | None = None
        self._cells: dict[tuple[int, int], _Cell] = {}

    @property
    def tree(self) -> ast.Module:
        if self._tree is None:
            self._tree = ast.parse(self.text)
        return self._tree

    def span(self, statement: ast.stmt) -> tuple[int, int]:
        """First and last line of a top-level statement, decorators included."""
        first = min([statement.lineno] + [d.lineno for d in getattr(statement, "decorator_list", ())])
        return first, statement.end_lineno or statement.lineno

    def statement_at(self, line: int) -> tuple[int, ast.stmt] | None:
        """``(index, statement)`` of the top-level statement whose lines hold ``line``."""
        for index, statement in enumerate(self.tree.body):
            first, last = self.span(statement)
            if first <= line <= last:
                return index, statement
        return None

    def text_of(self, first: int, last: int) -> str:
        return "".join(self.lines[first - 1:last])

    def splice(self, first: int, last: int, text: str) -> str:
        return "".join(self.lines[:first - 1]) + text + "".join(self.lines[last:])

    def cell(self, line: int) -> _Cell | None:
        """The LibCST parse of the top-level statement holding ``line``."""
        found = self.statement_at(line)
        if found is None:
            return None
        span = self.span(found[1])
        if span not in self._cells:
            self._cells[span] = _Cell(self.text_of(*span), *span)
        return self._cells[span]


class _Cell:
    """One top-level statement (lines ``first``..``last`` of the cell) parsed by LibCST, with each node's
    parent. Positions are resolved only for statements over several lines: LibCST's metadata providers
    cost about 10 ms each to set up, which a one-line statement does not need."""

    def __init__(self, text: str, first: int, last: int):
        self.first, self.last = first, last
        self.module = cst.parse_module(text)
        self.nodes: list[cst.CSTNode] = []
        self.parents: dict[cst.CSTNode, cst.CSTNode] = {}
        self.module.visit(_Parents(self.nodes, self.parents))
        self._positions: Any = None

    def code(self, node: cst.CSTNode) -> str:
        return self.module.code_for_node(node)

    def line_of(self, node: cst.CSTNode) -> int:
        if self.first == self.last:
            return self.first
        if self._positions is None:
            self._positions = MetadataWrapper(self.module, unsafe_skip_copy=True).resolve(PositionProvider)
        return self._positions[node].start.line + self.first - 1

    def starting_on(self, line: int, kind: type | tuple[type, ...]) -> list[Any]:
        """Nodes of ``kind`` whose code starts on cell line ``line``, outermost first."""
        return [node for node in self.nodes if isinstance(node, kind) and self.line_of(node) == line]

    def is_store(self, node: cst.CSTNode) -> bool:
        """Whether ``node`` is assigned to or deleted (``x[::-1] = v``, ``for x[0] in ...``, ``del x[0]``)."""
        child, parent = node, self.parents.get(node)
        while isinstance(parent, (cst.Tuple, cst.List, cst.Element, cst.StarredElement)):
            child, parent = parent, self.parents.get(parent)
        if isinstance(parent, cst.AssignTarget):
            return True
        return isinstance(parent, (cst.AugAssign, cst.AnnAssign, cst.For, cst.CompFor, cst.Del)) \
            and parent.target is child

    def replace(self, replacements: dict[cst.CSTNode, cst.CSTNode], exact: bool) -> _Rewrite | None:
        """The statement's new code with each node (by identity) replaced; None when replacements nest."""
        if not replacements:
            return None
        for node in replacements:
            parent = self.parents.get(node)
            while parent is not None:
                if parent in replacements:
                    return None
                parent = self.parents.get(parent)
        return self.first, self.last, self.module.visit(_Replace(replacements)).code, exact


# (first line, last line, their new text, exact): what a rewrite returns. Exact rewrites give the same
# eager result by construction; the others are checked by re-running the cell.
# (first line, last line, their new text, exact: True, or False (checked against the trace), or the check itself)
_Rewrite = tuple[int, int, str, bool | Callable[[Any, str], bool]]


class _Parents(cst.CSTVisitor):
    """Collects every node (outermost first) and its parent."""

    def __init__(self, nodes: list[cst.CSTNode], parents: dict[cst.CSTNode, cst.CSTNode]):
        super().__init__()
        self.nodes, self.parents, self.stack = nodes, parents, []

    def on_visit(self, node: cst.CSTNode) -> bool:
        if self.stack:
            self.parents[node] = self.stack[-1]
        self.nodes.append(node)
        self.stack.append(node)
        return True

    def on_leave(self, original_node: cst.CSTNode) -> None:
        self.stack.pop()


class _Replace(cst.CSTTransformer):
    def __init__(self, replacements: dict[cst.CSTNode, cst.CSTNode]):
        super().__init__()
        self.replacements = {id(node): new for node, new in replacements.items()}

    def on_leave(self, original_node: Any, updated_node: Any) -> Any:
        return self.replacements.get(id(original_node), updated_node)


def _edit_between(old: str, new: str, line: int) -> Edit | None:
    """The smallest run of lines (widened to include ``line``) that turns ``old`` into ``new``."""
    a = [_strip_break(text) for text in _lines(old)]
    b = [_strip_break(text) for text in _lines(new)]
    if a == b:
        return None
    prefix = 0
    while prefix < min(len(a), len(b)) and a[prefix] == b[prefix]:
        prefix += 1
    suffix = 0
    while suffix < min(len(a), len(b)) - prefix and a[-1 - suffix] == b[-1 - suffix]:
        suffix += 1
    start = min(prefix, line - 1)
    suffix = min(suffix, len(a) - line)
    return Edit(line=start + 1, end_line=len(a) - suffix, old="\n".join(a[start:len(a) - suffix]),
                new="\n".join(b[start:len(b) - suffix]))


def _expr(code: str, like: cst.BaseExpression | None = None) -> cst.BaseExpression:
    """Parse ``code``; keep the parentheses ``like`` had around it."""
    node = cst.parse_expression(code)
    if like is not None and getattr(like, "lpar", None):
        node = node.with_changes(lpar=like.lpar, rpar=like.rpar)
    return node


def _int_literal(node: cst.BaseExpression | None) -> int | None:
    """The value of ``3`` or ``-3`` written as a literal, else None."""
    if isinstance(node, cst.Integer):
        return int(node.evaluated_value)
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus) \
            and isinstance(node.expression, cst.Integer):
        return -int(node.expression.evaluated_value)
    return None


_ARITHMETIC = (cst.Add, cst.Subtract, cst.Multiply, cst.Divide, cst.FloorDivide, cst.Modulo, cst.Power)


def _arithmetic_operand(cell: _Cell, node: cst.CSTNode) -> cst.BaseExpression | None:
    """The other operand when ``node`` is an operand of ``+ - * / // % **``, else None."""
    parent = cell.parents.get(node)
    if isinstance(parent, cst.BinaryOperation) and isinstance(parent.operator, _ARITHMETIC):
        return parent.right if parent.left is node else parent.left
    return None


# ------------------------------------------------------------------------------------------
# reversed-slice: np.flip
# ------------------------------------------------------------------------------------------

def _negative_step(element: cst.SubscriptElement) -> int | None:
    """The step ``s`` of a slice element ``start:stop:-s``; 0 for any other element; None when unknown."""
    index = element.slice
    if isinstance(index, cst.Index):
        return 0
    if index.step is None:
        return 0
    step = _int_literal(index.step)
    if step is None:
        return None
    return -step if step < 0 else 0


def _flip(cell: _Cell, sub: cst.Subscript) -> str | None:
    """``np.flip(...)`` text equal to ``sub`` (a subscript with a negative step), or None."""
    inner: list[str] = []
    flipped: list[tuple[int, int]] = []
    axis = 0
    for element in sub.slice:
        index = element.slice
        if isinstance(index, cst.Index):
            if index.star is not None or _int_literal(index.value) is None:
                return None  # an array, None or ... index: the output axis of later slices is unknown
            inner.append(cell.code(index.value))
            continue
        step = _negative_step(element)
        if step is None:
            return None
        if step:
            start, stop = (None if v is None else _int_literal(v) for v in (index.lower, index.upper))
            if (index.lower is not None and (start is None or start < 0)) \
                    or (index.upper is not None and (stop is None or stop < 0)):
                return None  # negative bounds count from the end: the forward slice would differ
            low = "" if stop is None else str(stop + 1)
            high = "" if start is None else str(start + 1)
            inner.append(f"{low}:{high}")
            flipped.append((axis, step))
        else:
            inner.append(cell.code(index).strip())
        axis += 1
    base = cell.code(sub.value)
    if any(part not in (":", "::") for part in inner):
        base = f"{base}[{', '.join(inner)}]"
    axes = [k for k, _ in flipped]
    text = f"np.flip({base}, axis={axes[0] if len(axes) == 1 else '(' + ', '.join(map(str, axes)) + ')'})"
    strided = {k: s for k, s in flipped if s > 1}
    if strided:
        text += "[" + ", ".join(f"::{strided[k]}" if k in strided else ":" for k in range(max(strided) + 1)) + "]"
    return text


def _reversed_slice(source: _Source, hazard: Any, line: int) -> _Rewrite | None:
    cell = source.cell(line)
    if cell is None:
        return None
    replacements = {}
    for sub in cell.starting_on(line, cst.Subscript):
        steps = [_negative_step(element) for element in sub.slice]
        if None in steps and any(steps):
            return None
        if not any(steps):
            continue
        if cell.is_store(sub):
            return None  # x[::-1] = ... writes through a view: np.flip(...) cannot be assigned to
        text = _flip(cell, sub)
        if text is None:
            return None
        replacements[sub] = _expr(text, sub)
    # np.flip gives the same array as the slice; a list or a string on the same line ([::-1] of a
    # Python sequence, not in the graph) would become an array: then the eager check decides.
    traced = len(replacements) <= len(getattr(hazard, "graph_nodes", ()) or ())
    return cell.replace(replacements, exact=traced)


# ------------------------------------------------------------------------------------------
# numpy-scalar: np.array(value, dtype=...)
# ------------------------------------------------------------------------------------------

_SCALAR_TYPES = {
    "float16", "float32", "float64", "half", "single", "double", "longdouble", "int8", "int16", "int32",
    "int64", "uint8", "uint16", "uint32", "uint64", "intc", "intp", "uintp", "short", "ushort", "byte", "ubyte",
    "longlong", "ulonglong", "complex64", "complex128", "csingle", "cdouble", "bool_",
}


def _numpy_scalar(source: _Source, hazard: Any, line: int) -> _Rewrite | None:
    cell = source.cell(line)
    if cell is None:
        return None
    replacements = {}
    for call in cell.starting_on(line, cst.Call):
        func = call.func
        if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "np"
                and func.attr.value in _SCALAR_TYPES):
            continue
        if len(call.args) != 1 or call.args[0].keyword is not None or call.args[0].star:
            return None
        value = cell.code(call.args[0].value)
        replacements[call] = _expr(f"np.array({value}, dtype={cell.code(func)})", call)
    return cell.replace(replacements, exact=True)


# ------------------------------------------------------------------------------------------
# value-extraction: keep the array
# ------------------------------------------------------------------------------------------

_ATOMS = (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.Integer, cst.Float)


def _primary(cell: _Cell, node: cst.BaseExpression) -> str:
    """``node``'s code, parenthesized unless it binds as tightly as an attribute access."""
    text = cell.code(node)
    return text if isinstance(node, _ATOMS) or node.lpar else f"({text})"


def _extracted(call: cst.Call) -> cst.BaseExpression | None:
    """``e`` of ``float(e)`` or ``e.item()``, else None."""
    func = call.func
    if isinstance(func, cst.Name) and func.value == "float" and len(call.args) == 1 \
            and call.args[0].keyword is None and not call.args[0].star:
        return call.args[0].value
    if isinstance(func, cst.Attribute) and func.attr.value == "item" and not call.args:
        return func.value
    return None


def _value_extraction(source: _Source, hazard: Any, line: int) -> _Rewrite | None:
    cell = source.cell(line)
    if cell is None:
        return None
    found = [(call, value) for call in cell.starting_on(line, cst.Call) if (value := _extracted(call)) is not None]
    if len(found) != 1:
        return None
    call, value = found[0]
    if _arithmetic_operand(cell, call) is None and not _only_arithmetic_uses(source, cell, call):
        return None
    return cell.replace({call: _expr(_primary(cell, value), call)}, exact=False)


_AST_ARITHMETIC = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow)


def _only_arithmetic_uses(source: _Source, cell: _Cell, value: cst.BaseExpression) -> bool:
    """``name = value`` is the only binding of ``name`` in the cell and every use of it is an operand
    of ``+ - * / // % **`` (read from the whole cell's ``ast``)."""
    assign = cell.parents.get(value)
    if not (isinstance(assign, cst.Assign) and assign.value is value and len(assign.targets) == 1
            and isinstance(assign.targets[0].target, cst.Name)):
        return False
    name = assign.targets[0].target.value
    loads = 0
    for parent in ast.walk(source.tree):
        for child in ast.iter_child_nodes(parent):
            if isinstance(child, ast.Name) and child.id == name:
                if not isinstance(child.ctx, ast.Load):
                    if child.lineno != cell.line_of(assign.targets[0].target):
                        return False  # bound again (or deleted) elsewhere
                elif isinstance(parent, ast.BinOp) and isinstance(parent.op, _AST_ARITHMETIC):
                    loads += 1
                else:
                    return False
            elif isinstance(child, (ast.Global, ast.Nonlocal)) and name in child.names:
                return False
    return loads > 0


# ------------------------------------------------------------------------------------------
# broken-chain: keep an axis
# ------------------------------------------------------------------------------------------

def _kept_axis(index: int) -> str:
    if index == -1:
        return "-1:"
    return f"{index}:{index + 1}"


def _broken_chain(source: _Source, hazard: Any, line: int) -> _Rewrite | None:
    cell = source.cell(line)
    if cell is None:
        return None
    for statement in cell.starting_on(line, (cst.For, cst.Assign)):
        if isinstance(statement, cst.For):
            return _unrolled_loop(cell, statement)
        if isinstance(statement.targets[0].target, (cst.Tuple, cst.List)) and _pure(statement.value):
            return _unpacking(cell, statement)
    replacements = {}
    for sub in cell.starting_on(line, cst.Subscript):
        keys = [element.slice for element in sub.slice]
        if not all(isinstance(key, cst.Index) and key.star is None and _int_literal(key.value) is not None
                   for key in keys):
            continue
        if cell.is_store(sub) or (_arithmetic_operand(cell, sub) is None
                                  and not _only_arithmetic_uses(source, cell, sub)):
            return None  # a scalar used as a Python number: keeping its axis changes what it does
        slices = ", ".join(_kept_axis(_int_literal(key.value)) for key in keys)
        replacements[sub] = _expr(f"{cell.code(sub.value)}[{slices}]", sub)
    if not replacements:
        replacements = _kept_reductions(cell, line)
    return cell.replace(replacements, exact=False)


# Reductions whose ``keepdims=True`` form LEAPP 0.7.2 records correctly; ``x.max()`` / ``x.min()``
# become ``np.max(x, keepdims=True)`` because LEAPP mis-records the method without an axis.
_KEPT_FUNCTIONS = {"sum", "mean", "std", "var", "max", "min", "amax", "amin"}
_KEPT_METHODS = {"sum", "mean", "std", "var"}


def _kept_reductions(cell: _Cell, line: int) -> dict[cst.CSTNode, cst.CSTNode]:
    """``np.sum(e)`` -> ``np.sum(e, keepdims=True)``, ``e.mean()`` -> ``e.mean(keepdims=True)``,
    ``e.max()`` -> ``np.max(e, keepdims=True)``: a full reduction keeps its axes, so the ufunc or
    arithmetic after it stays on arrays (the 0-d case of broken-chain)."""
    replacements: dict[cst.CSTNode, cst.CSTNode] = {}
    for call in cell.starting_on(line, cst.Call):
        func = call.func
        if not isinstance(func, cst.Attribute) or any(arg.star for arg in call.args):
            continue
        keywords = {arg.keyword.value for arg in call.args if arg.keyword is not None}
        if keywords & {"axis", "keepdims", "out", "where"}:
            continue
        name = func.attr.value
        on_np = isinstance(func.value, cst.Name) and func.value.value == "np"
        positional = [arg for arg in call.args if arg.keyword is None]
        if on_np and name in _KEPT_FUNCTIONS and len(positional) == 1 or \
                not on_np and not call.args and name in _KEPT_METHODS:
            replacements[call] = _with_keepdims(call)
        elif not on_np and not call.args and name in ("max", "min"):
            replacements[call] = _expr(f"np.{name}({cell.code(func.value)}, keepdims=True)", call)
    return replacements


def _with_keepdims(call: cst.Call) -> cst.Call:
    """``call`` with ``keepdims=True`` appended to its arguments (its own spacing kept)."""
    args = list(call.args)
    if args and isinstance(args[-1].comma, cst.MaybeSentinel):
        args[-1] = args[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
    elif args and args[-1].comma.whitespace_after.empty:  # a trailing comma: f(x,) -> f(x, keepdims=True)
        args[-1] = args[-1].with_changes(comma=args[-1].comma.with_changes(
            whitespace_after=cst.SimpleWhitespace(" ")))
    keepdims = cst.Arg(keyword=cst.Name("keepdims"), value=cst.Name("True"),
                       equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""),
                                             whitespace_after=cst.SimpleWhitespace("")))
    return call.with_changes(args=[*args, keepdims])


_MAX_UNROLL = 16


def _pure(node: cst.BaseExpression) -> bool:
    """A name, attribute or literal-key subscript chain: evaluating it twice gives the same array."""
    if isinstance(node, cst.Name):
        return True
    if isinstance(node, cst.Attribute):
        return _pure(node.value)
    if isinstance(node, cst.Subscript):
        for element in node.slice:
            index = element.slice
            parts = [index.value] if isinstance(index, cst.Index) else [index.lower, index.upper, index.step]
            if any(part is not None and _int_literal(part) is None for part in parts):
                return False
        return _pure(node.value)
    return False


def _unrolled_loop(cell: _Cell, loop: cst.For) -> _Rewrite | None:
    """``for v in x[a:b]:`` -> ``for v in (x[a:a+1], ..., x[b-1:b]):`` (literal bounds);
    ``for v in x:`` -> ``for v in (x[i:i + 1] for i in range(len(x))):``."""
    iterated = loop.iter
    if not _pure(iterated):
        return None
    literal = _literal_range(iterated)
    if literal is not None and literal[1] - literal[0] <= _MAX_UNROLL:
        start, stop = literal
        base = cell.code(iterated.value)
        items = ", ".join(f"{base}[{i}:{i + 1}]" for i in range(start, stop))
        text = f"({items},)" if stop - start == 1 else f"({items})"
    else:
        code = cell.code(iterated)
        used = {node.value for node in cell.nodes if isinstance(node, cst.Name)}
        index = _fresh("i", used)
        text = f"({code}[{index}:{index} + 1] for {index} in range(len({code})))"
    return cell.replace({iterated: _expr(text)}, exact=False)


def _literal_range(node: cst.BaseExpression) -> tuple[int, int] | None:
    """``(a, b)`` of ``x[a:b]`` with non-negative literal bounds and no step, else None."""
    if not (isinstance(node, cst.Subscript) and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Slice)):
        return None
    index = node.slice[0].slice
    if index.step is not None and _int_literal(index.step) != 1:
        return None
    start = 0 if index.lower is None else _int_literal(index.lower)
    stop = None if index.upper is None else _int_literal(index.upper)
    if start is None or stop is None or not 0 <= start < stop:
        return None
    return start, stop


def _unpacking(cell: _Cell, assign: cst.Assign) -> _Rewrite | None:
    """``a, b = x`` -> ``a, b = x[0:1], x[1:2]`` (one name per element, no starred target)."""
    if len(assign.targets) != 1 or not _pure(assign.value):
        return None
    targets = assign.targets[0].target.elements
    if not targets or any(not isinstance(element, cst.Element) for element in targets) \
            or len(targets) > _MAX_UNROLL:
        return None
    base = cell.code(assign.value)
    items = ", ".join(f"{base}[{i}:{i + 1}]" for i in range(len(targets)))
    return cell.replace({assign.value: _expr(items + ("," if len(targets) == 1 else ""))}, exact=False)


# ------------------------------------------------------------------------------------------
# untraced-call: split the node
# ------------------------------------------------------------------------------------------

def _annotate_nodes(statement: ast.AST, method: str) -> list[str | None]:
    """The node names of the ``annotate.<method>(...)`` calls in ``statement`` (None: not a literal)."""
    found: list[str | None] = []
    for call in ast.walk(statement):
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == method \
                and isinstance(call.func.value, ast.Name) and call.func.value.id == "annotate":
            first = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "node"), None)
            found.append(first.value if isinstance(first, ast.Constant) and isinstance(first.value, str) else None)
    return found


def _names(statement: ast.AST, context: type) -> list[str]:
    """Names loaded (``ast.Load``) or bound (``ast.Store``) in ``statement``, in order, once each."""
    found: list[str] = []
    for node in ast.walk(statement):
        if isinstance(node, ast.Name) and isinstance(node.ctx, context) and node.id not in found:
            found.append(node.id)
    return found


def _untraced_call(source: _Source, hazard: Any, line: int) -> _Rewrite | None:
    """``result = call(...)`` inside node N -> N's outputs before it, a new node ``N_post`` after it.

    N's values are the names bound from ``annotate.input_tensors(N, ...)`` on, and those computed from
    them; N exports the ones the call and the rest of N read, ``N_post`` takes back those read after
    the call plus the call's result, and N's ``output_tensors`` becomes ``N_post``'s.
    """
    node_name = getattr(hazard, "node", None)
    if not node_name or "annotate" not in source.text:
        return None
    found = source.statement_at(line)
    if found is None:
        return None
    split, statement = found
    if statement.lineno != line or not isinstance(statement, ast.Assign) or len(statement.targets) != 1 \
            or not isinstance(statement.targets[0], ast.Name) or not isinstance(statement.value, ast.Call):
        return None
    if _line_holds_more(source, statement):
        return None
    body = source.tree.body
    opened = [i for i, s in enumerate(body) if node_name in _annotate_nodes(s, "input_tensors")]
    closed = [i for i, s in enumerate(body) if node_name in _annotate_nodes(s, "output_tensors")]
    if len(opened) != 1 or len(closed) != 1 or not opened[0] < split < closed[0]:
        return None
    first, last = opened[0], closed[0]
    if any(_annotate_nodes(s, m) for s in body[first + 1:last] for m in ("input_tensors", "output_tensors")) \
            or _annotate_nodes(body[last], "output_tensors") != [node_name] \
            or _annotate_nodes(body[last], "input_tensors"):
        return None
    result = statement.targets[0].id
    traced: list[str] = []
    for before in body[first:split]:
        if before is body[first] or set(_names(before, ast.Load)) & set(traced):
            traced += [n for n in _names(before, ast.Store) if n not in traced]
    read_from = {n for s in body[split:last + 1] for n in _names(s, ast.Load)}
    read_after = {n for s in body[split + 1:last + 1] for n in _names(s, ast.Load)}
    exported = [n for n in traced if n in read_from]
    carried = [n for n in traced if n in read_after and n != result] + [result]
    if not exported:
        return None

    output_first, output_last = source.span(body[last])
    output = _Cell(source.text_of(output_first, output_last), output_first, output_last)
    (call,) = [c for c in output.nodes if isinstance(c, cst.Call) and isinstance(c.func, cst.Attribute)
               and c.func.attr.value == "output_tensors"]
    literal_node = call.args[0].value
    if not isinstance(literal_node, cst.SimpleString):
        return None
    quote = literal_node.quote if literal_node.quote in ("'", '"') else '"'

    def literal(text: str) -> str:
        return quote + text.replace("\\", "\\\\").replace(quote, "\\" + quote) + quote

    def mapping(names: list[str]) -> str:
        return "{" + ", ".join(f"{literal(n)}: {n}" for n in names) + "}"

    taken = {n for s in body for m in ("input_tensors", "output_tensors") for n in _annotate_nodes(s, m)}
    post = _fresh(f"{node_name}_post", taken)
    newline = _line_break(source.lines[line - 1])
    lines = [f"annotate.output_tensors({literal(node_name)}, {mapping(exported)})"]
    lines.append(source.text_of(line, statement.end_lineno).rstrip("\r\n"))
    if len(carried) == 1:
        lines.append(f"{result} = annotate.input_tensors({literal(post)}, {mapping(carried)})")
    else:
        holder = re.sub(r"\W", "_", post)
        holder = _fresh(holder if holder.isidentifier() and not keyword.iskeyword(holder) else "post_inputs",
                        {n.id for n in ast.walk(source.tree) if isinstance(n, ast.Name)})
        lines.append(f"{holder} = annotate.input_tensors({literal(post)}, {mapping(carried)})")
        lines.append(f"{', '.join(carried)} = {', '.join(f'{holder}[{literal(n)}]' for n in carried)}")
    for generated in lines:
        cst.parse_statement(generated + "\n")  # a name that needs quoting would fail here, not in the cell
    renamed = output.replace({literal_node: cst.SimpleString(literal(post))}, exact=True)
    if renamed is None:
        return None
    text = newline.join(lines) + newline + source.text_of(statement.end_lineno + 1, output_first - 1) + renamed[2]
    return line, output_last, text, False


_INPUT_WRITTEN = re.compile(r"node input '([A-Za-z_][A-Za-z0-9_]*)' is written in place: the eager cell changes "
                            r"the caller's (array|tensor)")


def _untraced(source: _Source, hazard: Any, line: int) -> _Rewrite | None:
    """``untraced-call``: a copy of a node input written in place, or else the node split."""
    written = _INPUT_WRITTEN.match(getattr(hazard, "message", "") or "")
    if written is not None:
        return _input_written(source, line, written.group(1), "clone" if written.group(2) == "tensor" else "copy")
    return _untraced_call(source, hazard, line)


def _input_written(source: _Source, line: int, name: str, copy: str) -> _Rewrite | None:
    """``v = v.copy()`` after the statement ``v = annotate.input_tensors(node, {"name": ...})`` that binds input
    ``name`` alone to ``v``; in a cell without ``annotate`` (its inputs named on the magic's line, the namespace's
    own names), ``name = name.copy()`` before its first statement. The rewrite runs to the write at ``line``.
    Checked: the cell's outputs must not change."""
    body, found = source.tree.body, source.statement_at(line)
    if not body or found is None:
        return None
    last = source.span(found[1])[1]
    if "annotate" not in source.text:
        first = source.span(body[0])[0]
        return first, last, f"{name} = {name}.{copy}(){_line_break(source.lines[first - 1])}" \
            f"{source.text_of(first, last)}", _same_eager_result
    for statement in body[:found[0]]:
        if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1
                and isinstance(statement.targets[0], ast.Name) and _annotate_nodes(statement, "input_tensors")
                and isinstance(statement.value, ast.Call) and len(statement.value.args) >= 2):
            continue
        inputs = statement.value.args[1]
        if isinstance(inputs, ast.Dict) and len(inputs.keys) == 1 and isinstance(inputs.keys[0], ast.Constant) \
                and inputs.keys[0].value == name and not _line_holds_more(source, statement):
            bound = statement.targets[0].id
            first, bound_last = source.span(statement)
            copied = f"{bound} = {bound}.{copy}(){_line_break(source.lines[bound_last - 1])}"
            return first, last, source.text_of(first, bound_last) + copied + source.text_of(bound_last + 1, last), \
                _same_eager_result
    return None


def _line_holds_more(source: _Source, statement: ast.stmt) -> bool:
    """Whether the statement shares its lines with another (``a = f(x); b = 1``)."""
    return any(other is not statement and other.lineno <= statement.end_lineno and
               (other.end_lineno or other.lineno) >= statement.lineno for other in source.tree.body)


def _line_break(text: str) -> str:
    return text[len(text.rstrip("\r\n")):] or "\n"


def _fresh(name: str, taken: Iterable[str]) -> str:
    taken = set(taken)
    if name not in taken:
        return name
    return next(f"{name}{i}" for i in range(2, len(taken) + 3) if f"{name}{i}" not in taken)


# ------------------------------------------------------------------------------------------
# semantic-mismatch: LEAPP 0.7.2's axis=None defect
# ------------------------------------------------------------------------------------------

_REDUCTIONS = {"max", "min"}
_SCANS = {"cumsum", "cumprod"}
_DEFECT_CALL = re.compile(r"\b(np|ndarray)\.(max|min|cumsum|cumprod)\b")


def _axis_none(call: cst.Call, positional: int) -> bool:
    """``call`` has ``positional`` positional arguments and at most ``axis=None`` besides."""
    args = list(call.args)
    if any(arg.star for arg in args):
        return False
    keywords = [arg for arg in args if arg.keyword is not None]
    if len(args) - len(keywords) != positional:
        return False
    return all(arg.keyword.value == "axis" and isinstance(arg.value, cst.Name) and arg.value.value == "None"
               for arg in keywords)


def _semantic_mismatch(source: _Source, hazard: Any, line: int) -> _Rewrite | None:
    """``x.max()`` -> ``np.max(x)``; ``np.cumsum(x)`` -> ``np.cumsum(x.reshape(-1), axis=0)``.

    The hazard's message names the call LEAPP records wrongly (``ndarray.max is recorded ...``) and
    its fix is about the axis; only those calls, without an axis, are rewritten.
    """
    named = _DEFECT_CALL.search(str(getattr(hazard, "message", "")))
    cell = source.cell(line)
    if cell is None or named is None or "axis" not in str(getattr(hazard, "fix", "")):
        return None
    owner, name = named.groups()
    replacements = {}
    for call in cell.starting_on(line, cst.Call):
        func = call.func
        if not isinstance(func, cst.Attribute) or func.attr.value != name:
            continue
        if owner == "ndarray" and not (isinstance(func.value, cst.Name) and func.value.value == "np") \
                and _axis_none(call, 0):
            array = func.value
        elif owner == "np" and isinstance(func.value, cst.Name) and func.value.value == "np" and _axis_none(call, 1):
            array = call.args[0].value
        else:
            continue
        text = f"np.{name}({cell.code(array)})" if name in _REDUCTIONS \
            else f"np.{name}({_primary(cell, array)}.reshape(-1), axis=0)"
        replacements[call] = _expr(text, call)
    return cell.replace(replacements, exact=True)


_REWRITES: dict[str, Callable[[_Source, Any, int], _Rewrite | None]] = {
    "reversed-slice": _reversed_slice,
    "numpy-scalar": _numpy_scalar,
    "value-extraction": _value_extraction,
    "broken-chain": _broken_chain,
    "untraced-call": _untraced,
    "semantic-mismatch": _semantic_mismatch,
}


# ------------------------------------------------------------------------------------------
# checking a rewrite that changes shapes or promotion: the eager result must not change
# ------------------------------------------------------------------------------------------

_EAGER: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()


def _replay(trace: Any, source: str) -> tuple[Any, dict[str, dict[str, np.ndarray]]]:
    """A ``Trace`` of ``source`` that re-runs like ``trace``'s cell (same namespace, profile and declared
    inputs), and copies of the arrays each node was traced with, to pass as its inputs: a cell that
    writes into its input in place must not change the user's array."""
    from .trace import Trace, copy_value

    inputs = {node.name: {name: copy_value(value) for name, value in node.sample_inputs.items()}
              for node in trace.nodes.values()}
    return Trace([], source=source, namespace=trace._namespace, profile=trace.profile,
                 explicit=trace._explicit), inputs


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """The cell's prints and warnings while it is re-run to check an edit are not the user's business."""
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()), \
            warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def _eager_outputs(trace: Any, source: str) -> dict[tuple[str, str], Any] | None:
    """``{(node, output): value}`` of ``source`` run eagerly like ``trace``'s cell."""
    try:
        replay, inputs = _replay(trace, source)
        with _quiet():
            outputs = replay.run_eager(inputs)
    except Exception:  # the cell, not this module, failed: no rewrite can be checked
        return None
    return {(node, name): value for node, values in outputs.items() for name, value in values.items()}


def _same_eager_result(trace: Any, new_source: str) -> bool:
    if trace not in _EAGER:
        _EAGER[trace] = _eager_outputs(trace, trace.source)
    original = _EAGER[trace]
    rewritten = _eager_outputs(trace, new_source)
    if not original or rewritten is None:
        return False
    return all(key in rewritten and _equal(value, rewritten[key]) for key, value in original.items())


def _retrace_is_cleaner(trace: Any, new_source: str) -> bool:
    """The split cell traces with fewer errors than the original and no error of a kind it did not have
    (a value exported from the first node that is not an array would be a new ``untraced-output``)."""
    try:
        replay, inputs = _replay(trace, new_source)
        with _quiet():
            retraced = replay.retrace(inputs)
    except Exception:  # the split cell does not trace: no edit
        return False
    before = [h.kind for h in trace.hazards if h.severity == "error"]
    after = [h.kind for h in retraced.hazards if h.severity == "error"]
    return len(after) < len(before) and set(after) <= set(before)


def _equal(a: Any, b: Any) -> bool:
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        return a.shape == b.shape and a.dtype == b.dtype and bool(torch.equal(a.detach(), b.detach()))
    if type(a) is not type(b) and not (isinstance(a, (np.ndarray, np.generic)) and
                                       isinstance(b, (np.ndarray, np.generic))):
        return False
    if isinstance(a, (np.ndarray, np.generic)):
        a, b = np.asarray(a), np.asarray(b)
        if a.shape != b.shape or a.dtype != b.dtype:
            return False
        try:
            return bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))
        except TypeError:
            return bool(np.array_equal(a, b))
    try:
        return bool(a == b)
    except Exception:
        return False
