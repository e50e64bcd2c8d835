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
  ``x[0:1, -1:]``) where the value is an arithmetic operand; ``for v in x[:2]:`` iterates over
  ``(x[0:1], x[1:2])``; ``a, b = x`` unpacks ``x[0:1], x[1:2]``.
- ``untraced-call``: ``t = call(...)`` inside an ``annotate`` node is split into two nodes:
  ``annotate.output_tensors(node, {...})`` with the traced values the rest of the node needs, the call,
  then ``annotate.input_tensors(node + "_post", {...})`` and the node's output renamed to the new node.

The first, second and last rewrites give the same eager result by construction. The others change a
value's shape (a scalar becomes a one-element array) or its NumPy promotion (a Python float becomes a
0-d array), so they are offered only when ``trace`` is given and re-running the rewritten cell eagerly
on the trace's own inputs gives outputs equal to the original's in value, shape and dtype.

Line numbers are those of the traced source, ``trace.source``: for a cell run with ``%%leapp_trace``
that source starts with the magic line (as a comment), so its lines are the cell editor's lines.
"""

from __future__ import annotations

import contextlib
import io
import keyword
import re
import warnings
import weakref
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Sequence

import numpy as np

with warnings.catch_warnings():  # libcst.metadata's unused type-inference module warns about mypy_extensions
    warnings.simplefilter("ignore", DeprecationWarning)
    import libcst as cst
    from libcst.metadata import (
        ExpressionContext,
        ExpressionContextProvider,
        MetadataWrapper,
        ParentNodeProvider,
        PositionProvider,
    )

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
    promotion be checked by re-running the cell eagerly; without it they are not offered.
    """
    line = getattr(hazard, "line", None)
    rewrite = _REWRITES.get(getattr(hazard, "kind", None))
    if rewrite is None or not isinstance(line, int) or getattr(hazard, "location", None):
        return None
    try:
        cell = _Cell(source)
    except (cst.ParserSyntaxError, RecursionError):
        return None
    if not 1 <= line <= len(cell.lines):
        return None
    result = rewrite(cell, hazard, line)
    if result is None:
        return None
    new_source, exact = result
    edit = _edit_between(source, new_source, line)
    if edit is None:
        return None
    if not exact and (trace is None or not _same_eager_result(trace, new_source)):
        return None
    return edit


def apply(source: str, hazard: Any, trace: Any = None) -> str | None:
    """``source`` with the fix of ``hazard`` applied, or ``None`` when no edit is offered."""
    edit = edit_for(source, hazard, trace)
    return None if edit is None else apply_edit(source, edit)


_CACHE: weakref.WeakKeyDictionary[Any, list[Edit | None]] = weakref.WeakKeyDictionary()


def edits(trace: Any) -> list[Edit | None]:
    """One entry per ``trace.hazards`` (same order): its edit of ``trace.source``, or ``None``.

    Computed once per trace: the checked rewrites re-run the cell eagerly.
    """
    try:
        return _CACHE[trace]
    except (KeyError, TypeError):
        pass
    found = [edit_for(trace.source, hazard, trace) for hazard in trace.hazards]
    with contextlib.suppress(TypeError):
        _CACHE[trace] = found
    return found


# ------------------------------------------------------------------------------------------
# the parsed cell
# ------------------------------------------------------------------------------------------

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")


def _lines(text: str) -> list[str]:
    """Lines with their breaks, split where Python's compiler counts lines (not at form feeds)."""
    return _LINE.findall(text)


def _strip_break(text: str) -> str:
    return text.rstrip("\r\n")


class _Cell:
    """A cell parsed once: its module, node positions, parents and load/store contexts."""

    def __init__(self, source: str):
        self.source = source
        self.lines = _lines(source)
        self.wrapper = MetadataWrapper(cst.parse_module(source))
        self.module = self.wrapper.module
        self.positions = self.wrapper.resolve(PositionProvider)
        self.parents = self.wrapper.resolve(ParentNodeProvider)
        self.contexts = self.wrapper.resolve(ExpressionContextProvider)

    def code(self, node: cst.CSTNode) -> str:
        return self.module.code_for_node(node)

    def starting_on(self, line: int, kind: type | tuple[type, ...]) -> list[Any]:
        """Nodes of ``kind`` whose code starts on ``line``, outermost first."""
        return [node for node, pos in self.positions.items() if isinstance(node, kind) and pos.start.line == line]

    def replace(self, replacements: dict[cst.CSTNode, cst.CSTNode]) -> str | None:
        """The cell's code with each node (by identity) replaced; None when replacements nest."""
        for node in replacements:
            parent = self.parents.get(node)
            while parent is not None:
                if parent in replacements:
                    return None
                parent = self.parents.get(parent)
        return self.module.visit(_Replace(replacements)).code

    def is_store(self, node: cst.CSTNode) -> bool:
        return self.contexts.get(node) in (ExpressionContext.STORE, ExpressionContext.DEL)


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


def _reversed_slice(cell: _Cell, hazard: Any, line: int) -> tuple[str, bool] | None:
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
    if not replacements:
        return None
    code = cell.replace(replacements)
    return None if code is None else (code, True)


# ------------------------------------------------------------------------------------------
# numpy-scalar: np.array(value, dtype=...)
# ------------------------------------------------------------------------------------------

_SCALAR_TYPES = {
    "float16", "float32", "float64", "half", "single", "double", "longdouble", "int8", "int16", "int32",
    "int64", "uint8", "uint16", "uint32", "uint64", "intc", "intp", "uintp", "short", "ushort", "byte", "ubyte",
    "longlong", "ulonglong", "complex64", "complex128", "csingle", "cdouble", "bool_",
}


def _numpy_scalar(cell: _Cell, hazard: Any, line: int) -> tuple[str, bool] | None:
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
    if not replacements:
        return None
    code = cell.replace(replacements)
    return None if code is None else (code, True)


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


def _value_extraction(cell: _Cell, hazard: Any, line: int) -> tuple[str, bool] | None:
    found = [(call, value) for call in cell.starting_on(line, cst.Call) if (value := _extracted(call)) is not None]
    if len(found) != 1:
        return None
    call, value = found[0]
    if _arithmetic_operand(cell, call) is None and not _only_arithmetic_uses(cell, call):
        return None
    code = cell.replace({call: _expr(_primary(cell, value), call)})
    return None if code is None else (code, False)


def _only_arithmetic_uses(cell: _Cell, call: cst.Call) -> bool:
    """``name = float(...)`` assigned once in the cell, every later use an operand of arithmetic."""
    assign = cell.parents.get(call)
    if not (isinstance(assign, cst.Assign) and assign.value is call and len(assign.targets) == 1
            and isinstance(assign.targets[0].target, cst.Name)):
        return False
    name = assign.targets[0].target.value
    uses = [node for node in cell.positions if isinstance(node, cst.Name) and node.value == name]
    stores = [node for node in uses if cell.contexts.get(node) is not ExpressionContext.LOAD]
    loads = [node for node in uses if cell.contexts.get(node) is ExpressionContext.LOAD]
    return len(stores) == 1 and bool(loads) and all(_arithmetic_operand(cell, node) is not None for node in loads)


# ------------------------------------------------------------------------------------------
# broken-chain: keep an axis
# ------------------------------------------------------------------------------------------

def _kept_axis(index: int) -> str:
    if index == -1:
        return "-1:"
    return f"{index}:{index + 1}"


def _broken_chain(cell: _Cell, hazard: Any, line: int) -> tuple[str, bool] | None:
    for statement in cell.starting_on(line, (cst.For, cst.Assign)):
        if isinstance(statement, cst.For):
            return _unrolled_loop(cell, statement)
        if isinstance(statement.targets[0].target, cst.Tuple) and isinstance(statement.value, cst.Name):
            return _unpacking(cell, statement)
    replacements = {}
    for sub in cell.starting_on(line, cst.Subscript):
        keys = [element.slice for element in sub.slice]
        if not all(isinstance(key, cst.Index) and key.star is None and _int_literal(key.value) is not None
                   for key in keys):
            continue
        if cell.is_store(sub) or _arithmetic_operand(cell, sub) is None:
            return None  # a standalone scalar: keeping its axis changes the value's shape downstream
        slices = ", ".join(_kept_axis(_int_literal(key.value)) for key in keys)
        replacements[sub] = _expr(f"{cell.code(sub.value)}[{slices}]", sub)
    if not replacements:
        return None
    code = cell.replace(replacements)
    return None if code is None else (code, False)


_MAX_UNROLL = 16


def _unrolled_loop(cell: _Cell, loop: cst.For) -> tuple[str, bool] | None:
    """``for v in x[a:b]:`` -> ``for v in (x[a:a+1], ..., x[b-1:b]):`` (literal bounds only)."""
    sub = loop.iter
    if not (isinstance(sub, cst.Subscript) and len(sub.slice) == 1 and isinstance(sub.slice[0].slice, cst.Slice)):
        return None
    index = sub.slice[0].slice
    if index.step is not None and _int_literal(index.step) != 1:
        return None
    start = 0 if index.lower is None else _int_literal(index.lower)
    stop = None if index.upper is None else _int_literal(index.upper)
    if start is None or stop is None or not 0 <= start < stop or stop - start > _MAX_UNROLL:
        return None
    base = cell.code(sub.value)
    items = ", ".join(f"{base}[{i}:{i + 1}]" for i in range(start, stop))
    code = cell.replace({sub: _expr(f"({items},)" if stop - start == 1 else f"({items})")})
    return None if code is None else (code, False)


def _unpacking(cell: _Cell, assign: cst.Assign) -> tuple[str, bool] | None:
    """``a, b = x`` -> ``a, b = x[0:1], x[1:2]`` (one name per element, no starred target)."""
    if len(assign.targets) != 1:
        return None
    targets = assign.targets[0].target.elements
    if not targets or any(not isinstance(element, cst.Element) for element in targets) \
            or len(targets) > _MAX_UNROLL:
        return None
    base = cell.code(assign.value)
    items = ", ".join(f"{base}[{i}:{i + 1}]" for i in range(len(targets)))
    code = cell.replace({assign.value: _expr(items + ("," if len(targets) == 1 else ""))})
    return None if code is None else (code, False)


# ------------------------------------------------------------------------------------------
# untraced-call: split the node
# ------------------------------------------------------------------------------------------

def _annotate_call(node: cst.CSTNode, method: str) -> tuple[cst.Call, str] | None:
    """``(call, node name)`` when ``node`` is ``annotate.<method>("literal", ...)``."""
    if not (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)
            and isinstance(node.func.value, cst.Name) and node.func.value.value == "annotate"
            and node.func.attr.value == method and node.args):
        return None
    first = node.args[0]
    if first.keyword is not None and first.keyword.value != "node":
        return None
    if not isinstance(first.value, cst.SimpleString):
        return None
    return node, first.value.evaluated_value


def _calls_in(node: cst.CSTNode, method: str) -> list[tuple[cst.Call, str]]:
    found: list[tuple[cst.Call, str]] = []

    class Visitor(cst.CSTVisitor):
        def visit_Call(self, call: cst.Call) -> None:
            hit = _annotate_call(call, method)
            if hit is not None:
                found.append(hit)

    node.visit(Visitor())
    return found


def _names(node: cst.CSTNode, cell: _Cell, context: ExpressionContext) -> list[str]:
    found: list[str] = []

    class Visitor(cst.CSTVisitor):
        def visit_Name(self, name: cst.Name) -> None:
            if cell.contexts.get(name) is context and name.value not in found:
                found.append(name.value)

    node.visit(Visitor())
    return found


def _untraced_call(cell: _Cell, hazard: Any, line: int) -> tuple[str, bool] | None:
    node_name = getattr(hazard, "node", None)
    body = list(cell.module.body)
    at = [i for i, statement in enumerate(body) if cell.positions[statement].start.line == line]
    if not node_name or len(at) != 1 or not isinstance(body[at[0]], cst.SimpleStatementLine):
        return None
    split = at[0]
    statement = body[split]
    if len(statement.body) != 1 or not isinstance(statement.body[0], cst.Assign):
        return None
    assign = statement.body[0]
    if len(assign.targets) != 1 or not isinstance(assign.targets[0].target, cst.Name) \
            or not isinstance(assign.value, cst.Call):
        return None
    result = assign.targets[0].target.value
    opened = [i for i, s in enumerate(body) if any(n == node_name for _, n in _calls_in(s, "input_tensors"))]
    closed = [i for i, s in enumerate(body) if any(n == node_name for _, n in _calls_in(s, "output_tensors"))]
    if len(opened) != 1 or len(closed) != 1 or not opened[0] < split < closed[0]:
        return None
    first, last = opened[0], closed[0]
    if _calls_in(statement, "input_tensors") or _calls_in(statement, "output_tensors"):
        return None
    traced: list[str] = []
    for statement_before in body[first:split]:
        loads = _names(statement_before, cell, ExpressionContext.LOAD)
        if statement_before is body[first] or set(loads) & set(traced):
            traced += [n for n in _names(statement_before, cell, ExpressionContext.STORE) if n not in traced]
    used_from = [n for i in range(split, last + 1) for n in _names(body[i], cell, ExpressionContext.LOAD)]
    used_after = {n for i in range(split + 1, last + 1) for n in _names(body[i], cell, ExpressionContext.LOAD)}
    exported = [n for n in traced if n in used_from]
    carried = [n for n in traced if n in used_after and n != result] + [result]
    if not exported:
        return None

    taken = {n for _, n in _calls_in(cell.module, "input_tensors")} | \
        {n for _, n in _calls_in(cell.module, "output_tensors")}
    post = _fresh(f"{node_name}_post", taken)
    names_in_cell = set(_names(cell.module, cell, ExpressionContext.LOAD)) | \
        set(_names(cell.module, cell, ExpressionContext.STORE))
    output_call, _ = _calls_in(body[last], "output_tensors")[0]
    quote = output_call.args[0].value.quote if output_call.args[0].value.quote in ("'", '"') else '"'

    def literal(text: str) -> str:
        return quote + text.replace("\\", "\\\\").replace(quote, "\\" + quote) + quote

    def mapping(names: Sequence[str]) -> str:
        return "{" + ", ".join(f"{literal(n)}: {n}" for n in names) + "}"

    before = cst.parse_statement(f"annotate.output_tensors({literal(node_name)}, {mapping(exported)})\n")
    if len(carried) == 1:
        after = [cst.parse_statement(f"{result} = annotate.input_tensors({literal(post)}, {mapping(carried)})\n")]
    else:
        holder = re.sub(r"\W", "_", post)
        holder = _fresh(holder if holder.isidentifier() and not keyword.iskeyword(holder) else "post_inputs",
                        names_in_cell)
        unpacked = ", ".join(f"{holder}[{literal(n)}]" for n in carried)
        after = [cst.parse_statement(f"{holder} = annotate.input_tensors({literal(post)}, {mapping(carried)})\n"),
                 cst.parse_statement(f"{', '.join(carried)} = {unpacked}\n")]
    renamed = output_call.with_changes(args=[output_call.args[0].with_changes(
        value=cst.SimpleString(literal(post)))] + list(output_call.args[1:]))
    last_statement = body[last].visit(_Replace({output_call: renamed}))
    new_body = body[:split] + [before.with_changes(leading_lines=statement.leading_lines),
                               statement.with_changes(leading_lines=())] + after \
        + body[split + 1:last] + [last_statement] + body[last + 1:]
    return cell.module.with_changes(body=new_body).code, True


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


def _semantic_mismatch(cell: _Cell, hazard: Any, line: int) -> tuple[str, bool] | None:
    """``x.max()`` -> ``np.max(x)``; ``np.cumsum(x)`` -> ``np.cumsum(x.reshape(-1), axis=0)``.

    The hazard's message names the call LEAPP records wrongly (``ndarray.max is recorded ...``);
    only those calls, without an axis, are rewritten.
    """
    owner, _, name = str(getattr(hazard, "message", "")).split(" ", 1)[0].partition(".")
    if owner not in ("np", "ndarray") or name not in _REDUCTIONS | _SCANS:
        return None
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
    if not replacements:
        return None
    code = cell.replace(replacements)
    return None if code is None else (code, True)


_REWRITES: dict[str, Callable[[_Cell, Any, int], tuple[str, bool] | None]] = {
    "reversed-slice": _reversed_slice,
    "numpy-scalar": _numpy_scalar,
    "value-extraction": _value_extraction,
    "broken-chain": _broken_chain,
    "untraced-call": _untraced_call,
    "semantic-mismatch": _semantic_mismatch,
}


# ------------------------------------------------------------------------------------------
# checking a rewrite that changes shapes or promotion: the eager result must not change
# ------------------------------------------------------------------------------------------

_EAGER: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()


def _eager_outputs(trace: Any, source: str) -> dict[tuple[str, str], Any] | None:
    """``{(node, output): value}`` of ``source`` run eagerly like ``trace``'s cell (its namespace and inputs)."""
    from .trace import Trace

    try:
        replay = Trace([], source=source, namespace=trace._namespace, profile=trace.profile,
                       explicit=trace._explicit)
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()), \
                warnings.catch_warnings():
            warnings.simplefilter("ignore")
            outputs = replay.run_eager({})
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


def _equal(a: Any, b: Any) -> bool:
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
