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
from typing import Any, NamedTuple

import numpy as np
from numpy import flatiter, ndarray

from . import indexing
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
    else:
        sess.into_target = (written, text)  # for its key (_key): c[f > 5.0] = 1.0
    return target


builtins.__dict__.setdefault(INTO, into)

# A type test of a traced array (``type(x) is np.ndarray``, ``type(x) == np.ndarray``, ``type(x).__name__``): the
# cell's arrays are a subclass while it is traced, so the test went the other way than it does on the cell's plain
# arrays, and the graph held the other branch, silently. The cell's one-argument ``type(...)`` calls are compiled as
# ``__leapp_type__(...)``, which answers ``np.ndarray`` for a traced array.
TYPE = "__leapp_type__"


def type_(value: Any) -> type:
    """``type(value)``, with ``np.ndarray`` for a traced array (what the cell's own arrays are outside a trace)."""
    kind = type(value)
    sess = _session.ACTIVE
    if sess is not None and kind is sess.array_type:
        return ndarray
    return kind


builtins.__dict__.setdefault(TYPE, type_)


def _key(key: Any) -> Any:
    """The key of an item assignment (``BUF[k] = v``), after ``into`` saw its target: a key holding traced data
    writes into a plain array the tracer cannot follow (``c = ZEROS.copy(); c[f > 5.0] = 1.0``), whatever the value,
    and the array is baked wherever it is used."""
    sess = _session.ACTIVE
    if sess is None or sess.suspended or sess.thread != get_ident():
        return key
    target = sess.into_target
    if target is not None:
        sess.into_target = None
        builder = builder_of(key if type(key) is tuple else (key,))
        if builder is not None and not builder.closed:
            sess.written_into_plain(builder, target[0], target[1], item=True)
    return key


KEY = "__leapp_key__"
builtins.__dict__.setdefault(KEY, _key)


# Reads: a plain ndarray indexed with traced data (``ACTIONS[np.argmax(q)]``, a gain schedule ``KP[bin]``) runs in C
# too, and its result was a genuine constant: silently wrong for every other input. The cell's subscripts of the names
# bound to a plain ndarray when the trace starts are compiled as ``__leapp_from__(KP)[key]``: outside a trace, and for
# anything but a plain ndarray, the hook gives the object back; for a plain ndarray it gives a ``_Table``, whose
# indexing records ``getitem(constant, key)`` when the key holds traced data and indexes the array otherwise.
FROM = "__leapp_from__"


class _Table:
    """A plain ndarray about to be indexed inside a trace (see ``FROM``)."""

    __slots__ = ("table", "text")

    def __init__(self, table: ndarray, text: str | None):
        self.table = table
        self.text = text  # the cell's spelling of the table (``KP``, ``cfg.KP``, ``KP[0]``)

    def __getitem__(self, key: Any) -> Any:
        sess = _session.ACTIVE
        if sess is None or sess.suspended or sess.thread != get_ident() \
                or builder_of(key if type(key) is tuple else (key,)) is None:
            return self.table[key]
        return indexing.getitem_constant(sess, self.table, key, name=self.text)

    # the other methods of a plain ndarray that take arrays and run in C without dispatching on them: NumPy's
    # functions of the same name dispatch (a traced argument is recorded, or reported where the lookup has no row)
    def searchsorted(self, v: Any, side: str = "left", sorter: Any = None) -> Any:
        return np.searchsorted(self.table, v, side=side, sorter=sorter)

    def dot(self, b: Any, out: Any = None) -> Any:
        return self.table.dot(b, out) if out is not None else np.dot(self.table, b)

    def compress(self, condition: Any, axis: Any = None, out: Any = None) -> Any:
        return self.table.compress(condition, axis, out) if out is not None else \
            np.compress(condition, self.table, axis=axis)

    def choose(self, choices: Any, out: Any = None, mode: str = "raise") -> Any:
        return self.table.choose(choices, out, mode) if out is not None else np.choose(self.table, choices, mode=mode)

    def take(self, indices: Any, axis: Any = None, out: Any = None, mode: str = "raise") -> Any:
        sess = _session.ACTIVE
        if sess is None or sess.suspended or sess.thread != get_ident() or out is not None \
                or builder_of((indices,)) is None:
            return self.table.take(indices, axis=axis, out=out, mode=mode)
        name = self.text or sess.name_of(self.table) or "a constant"
        return indexing.take_constant(sess, self.table, indices, axis, mode, f"{name}.take(...)")


TABLE_METHODS = frozenset({"take", "searchsorted", "dot", "compress", "choose"})  # (SUBSCRIPTED names them too)
# the reductions that take where=: hooked only in a call that passes where= (MASKED names them too)
WHERE_METHODS = frozenset({"sum", "mean", "prod", "max", "min", "any", "all", "std", "var"})
# a keyword argument where= (what the trace's reduction wrappers and this hook are gated on): the literal first, the
# word boundary checked by hand (``\bwhere`` makes the regex engine try every position: 0.5 ms on a 25 KB cell, on
# every trace)
_WHERE_EQUALS = re.compile(r"where\s*=(?!=)")


def writes_where(source: str) -> bool:
    """Whether ``source`` passes a keyword argument ``where=`` (``where=m``, ``where = m``; not ``where == m``, not
    ``elsewhere=``)."""
    for match in _WHERE_EQUALS.finditer(source):
        start = match.start()
        if start == 0 or not (source[start - 1].isalnum() or source[start - 1] == "_"):
            return True
    return False


def _reduction(name: str) -> Any:
    """A plain table's reduction under a traced mask (``W.sum(where=f > 1.0)``): NumPy reads ``where=`` in C, or
    dispatches it to the ufunc's reduce, which records a sum but not a mean's count of the masked items. NumPy's
    function of the same name takes the method's arguments in the same order and records the reduction with its mask
    (``trace._reducing``), as ``np.sum(W, where=m)`` is."""

    def reduce(self: _Table, *args: Any, **kwargs: Any) -> Any:
        return getattr(np, name)(self.table, *args, **kwargs)  # (the trace's wrapper while it runs)

    reduce.__name__ = name
    return reduce


for _name in WHERE_METHODS:
    setattr(_Table, _name, _reduction(_name))


def from_(value: Any, text: str | None = None) -> Any:
    """``value``, about to be indexed: a ``_Table`` for a plain ndarray inside a trace, else ``value`` itself.
    ``text``: the cell's spelling of it."""
    if type(value) is ndarray and _session.ACTIVE is not None:
        return _Table(value, text)
    return value


builtins.__dict__.setdefault(FROM, from_)
# the names a cell may index: a name or dotted name right before "[" or ".take(" (the trace keeps those bound to a
# plain ndarray)
SUBSCRIPTED = re.compile(r"([A-Za-z_][A-Za-z_0-9]*(?:\.[A-Za-z_][A-Za-z_0-9]*)*?)\s*"
                         r"(?:\[|\.\s*(?:take|searchsorted|dot|compress|choose)\s*\()")
# ... or reduced under a mask, in a cell that writes where= (``W.sum(where=m)``)
MASKED = re.compile(r"([A-Za-z_][A-Za-z_0-9]*(?:\.[A-Za-z_][A-Za-z_0-9]*)*?)\s*"
                    r"\.\s*(?:sum|mean|prod|max|min|any|all|std|var)\s*\(")
# ... or indexed through a method's result (``KP.copy()[i]``, ``KP.astype(np.float32)[i]``), or bound to another name
# in the cell (``T = KP``, then ``T[i]``: compile_cell follows the alias)
_DOTTED = r"[A-Za-z_][A-Za-z_0-9]*(?:\.[A-Za-z_][A-Za-z_0-9]*)*"
REACHED = re.compile(rf"({_DOTTED})(?:\s*\.\s*[A-Za-z_][A-Za-z_0-9]*\s*\([^()]*\))+\s*\["
                     rf"|^[ \t]*[A-Za-z_][A-Za-z_0-9]*\s*=\s*({_DOTTED})[ \t]*$", re.MULTILINE)


def tables(source: str, namespace: dict[str, Any]) -> frozenset[str]:
    """The names and dotted names (``cfg.KP``, read from instance and class dictionaries, no property run) that
    ``source`` may index and that are bound to a plain ndarray in ``namespace``."""
    names = _SUBSCRIPTED_NAMES.get(source)
    if names is None:
        if len(_SUBSCRIPTED_NAMES) >= 256:
            _SUBSCRIPTED_NAMES.pop(next(iter(_SUBSCRIPTED_NAMES)))
        reached = {name for pair in REACHED.findall(source) for name in pair if name}
        if writes_where(source):
            reached.update(MASKED.findall(source))
        names = _SUBSCRIPTED_NAMES[source] = tuple(set(SUBSCRIPTED.findall(source)) | reached)  # once per source
    found = set()
    for name in names:
        parts = name.split(".")
        value = namespace.get(parts[0], _MISSING)
        for attribute in parts[1:]:
            if value is _MISSING or isinstance(value, ndarray):
                break
            value = _static_attribute(value, attribute)
        if type(value) is ndarray or _holds_table(value):
            found.add(name)
    return frozenset(found)


def _holds_table(value: Any) -> bool:
    """Whether ``value`` is a dict, list or tuple with a plain ndarray among its first 64 items (``GAINS["kp"][i]``:
    the container is hooked, and its item indexed through the hook)."""
    kind = type(value)
    if kind is dict:
        items = value.values()
    elif kind is list or kind is tuple:
        items = value
    else:
        return False
    for count, item in enumerate(items):
        if type(item) is ndarray:
            return True
        if count >= 63:
            break
    return False


_MISSING = object()
_SUBSCRIPTED_NAMES: dict[str, tuple[str, ...]] = {}


def _static_attribute(value: Any, name: str) -> Any:
    """``value.name`` from the instance's or its class's dictionary (what ``getattr`` would find without running a
    property or ``__getattr__``), or ``_MISSING``."""
    own = getattr(value, "__dict__", None)
    if type(own) is dict and name in own:
        return own[name]
    for klass in type(value).__mro__:
        if name in klass.__dict__:
            found = klass.__dict__[name]
            return found if type(found) is ndarray else _MISSING
    return _MISSING


def _dotted(node: ast.expr) -> str | None:
    """``a`` or ``a.b.c`` as the cell spells it (None for any other expression)."""
    if type(node) is ast.Name:
        return node.id
    if type(node) is ast.Attribute:
        head = _dotted(node.value)
        return None if head is None else f"{head}.{node.attr}"
    return None


def _indexed_root(node: ast.expr, tables: frozenset[str]) -> bool:
    """Whether ``node`` is a table, or an index into one (``KP[0]`` of ``KP[0][mask]``), or a method's result on one
    (``KP.copy()``, ``KP.astype(np.float32)``)."""
    while True:
        if _dotted(node) in tables:
            return True
        kind = type(node)
        if kind is ast.Subscript:
            node = node.value
        elif kind is ast.Call and type(node.func) is ast.Attribute:
            node = node.func.value
        else:
            return False


def _aliases(tree: ast.AST, tables: frozenset[str]) -> frozenset[str]:
    """``tables`` with the names the cell binds to one of them (``T = KP``; ``U = T``), at its top level or in its
    functions: their subscripts are hooked too."""
    found = set(tables)
    assigns = [node for node in ast.walk(tree) if type(node) is ast.Assign and len(node.targets) == 1
               and type(node.targets[0]) is ast.Name]
    for _ in range(3):  # (an alias of an alias)
        before = len(found)
        for node in assigns:
            if _dotted(node.value) in found:
                found.add(node.targets[0].id)
        if len(found) == before:
            break
    return frozenset(found)


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
        target.slice = ast.copy_location(ast.Call(
            func=ast.copy_location(ast.Name(id=KEY, ctx=ast.Load()), target.slice),
            args=[_as_value(target.slice)], keywords=[]), target.slice)
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


def _as_value(key: ast.expr) -> ast.expr:
    """A subscript's key as an expression that evaluates to the same key: its slices as ``slice(...)`` calls (a
    slice's syntax is only valid inside the brackets), in a tuple too."""
    if type(key) is ast.Slice:
        parts = [part if part is not None else ast.copy_location(ast.Constant(value=None), key)
                 for part in (key.lower, key.upper, key.step)]
        return ast.copy_location(ast.Call(func=ast.copy_location(ast.Name(id="slice", ctx=ast.Load()), key),
                                          args=parts, keywords=[]), key)
    if type(key) is ast.Tuple:
        return ast.copy_location(ast.Tuple(elts=[_as_value(part) for part in key.elts], ctx=ast.Load()), key)
    return key


def _from(held: ast.expr) -> ast.expr:
    """``__leapp_from__(held, "<held as the cell spells it>")``, at ``held``'s place."""
    return ast.copy_location(ast.Call(func=ast.copy_location(ast.Name(id=FROM, ctx=ast.Load()), held),
                                      args=[held, ast.copy_location(ast.Constant(value=ast.unparse(held)), held)],
                                      keywords=[]), held)


_TYPE_CALL = re.compile(r"(?<![\w.])type\s*\(")  # a call of the builtin type (not x.astype(...))


def compile_cell(source: str, filename: str, tables: frozenset[str] = frozenset()) -> Any:
    """The code of ``source`` with every item assignment passing its value through :func:`into` (line numbers kept:
    the hazards, tracebacks and the cell's sites read them): ``x[k] = v``, ``x[k] = y[k] = v``, ``x[a], y[b] = u,
    v``, ``x[k]: T = v``, whatever the target's object (``d["k"][a] = v``, ``get()[a] = v``), and its key through
    :func:`_key` after it (positions the data chooses). Not hooked: a tuple of targets given one value to unpack
    (``x[a], y[b] = pair``: the pairing is the value's own). Also: the subscripts and array methods of plain tables
    (``tables``: through :func:`from_`), and one-argument ``type(...)`` calls (through :func:`type_`)."""
    if not tables and not _may_assign_items(source) and not _TYPE_CALL.search(source):
        return compile(source, filename, "exec")
    tree = ast.parse(source, filename, "exec")
    if tables:
        tables = _aliases(tree, tables)
    names: list[str] = []
    for node in ast.walk(tree):
        if type(node) is ast.Subscript and type(node.ctx) is ast.Load and _indexed_root(node.value, tables):
            node.value = _from(node.value)
        elif type(node) is ast.Call and type(node.func) is ast.Attribute and (
                node.func.attr in TABLE_METHODS or node.func.attr in WHERE_METHODS
                and any(keyword.arg == "where" for keyword in node.keywords)) \
                and _indexed_root(node.func.value, tables):  # KP.take(i): NumPy does not dispatch on the indices
            node.func.value = _from(node.func.value)
        elif type(node) is ast.Call and type(node.func) is ast.Name and node.func.id == "type" \
                and len(node.args) == 1 and not node.keywords:
            node.func = ast.copy_location(ast.Name(id=TYPE, ctx=ast.Load()), node.func)
        if type(node) is ast.Assign:
            for target in node.targets:
                node.value = _hooked(node.value, target, names)
        elif type(node) is ast.AnnAssign and node.value is not None:
            node.value = _hooked(node.value, node.target, names)
    return compile(tree, filename, "exec")


# Exceptions NumPy and torch raise on some values of the data (a zero divisor under np.errstate(divide="raise"), an
# index out of range, a singular matrix, a warning turned into an error), and the handlers that catch them all
_DATA_EXCEPTIONS = frozenset({"FloatingPointError", "ArithmeticError", "ZeroDivisionError", "OverflowError",
                              "IndexError", "ValueError", "LinAlgError", "RuntimeWarning", "Warning", "RuntimeError",
                              "Exception", "BaseException"})
_GUARDED: dict[str, tuple["Guard", ...]] = {}
# exceptions only values raise (a shape mismatch raises ValueError, RuntimeError, IndexError or TypeError)
_VALUE_EXCEPTIONS = frozenset({"FloatingPointError", "ArithmeticError", "ZeroDivisionError", "OverflowError",
                               "LinAlgError", "RuntimeWarning", "Warning"})
# a cell that makes NumPy raise on values, or warnings into errors
RAISES_ON_VALUES = re.compile(r"\b(?:errstate|seterr)\s*\(|(?:simplefilter|filterwarnings)\s*\(\s*[\"']error")


def raised_by_values(caught: str) -> bool:
    """Whether a handler's exceptions (as ``Guard.caught`` spells them) include one only values raise."""
    return any(name.strip().split(".")[-1] in _VALUE_EXCEPTIONS for name in caught.split(","))


class Guard(NamedTuple):
    """A ``try`` block of a cell whose handler catches an exception of the data (``guarded``)."""

    line: int  # the ``try`` statement's
    lines: range  # the try body's and the handler's lines: a recorded op there ran under the guard
    handler: int  # the handler's line
    caught: str  # what it catches, as the cell spells it
    function: str | None  # the function of the cell it is in (its ops are recorded at the call's line)


def guarded(source: str) -> tuple[Guard, ...]:
    """The ``try`` blocks of ``source`` (in the functions the cell defines too) whose handlers catch an exception that
    depends on the data and do not raise again. Found once per source; a cell with no ``try`` is not parsed."""
    found = _GUARDED.get(source)
    if found is not None:
        return found
    result: list[Guard] = []
    if "try" in source and "except" in source:
        try:
            tree: ast.AST | None = ast.parse(source)
        except SyntaxError:
            tree = None
        if tree is not None:
            _find_guards(tree, None, result)
    if len(_GUARDED) >= 256:
        _GUARDED.pop(next(iter(_GUARDED)))
    found = _GUARDED[source] = tuple(result)
    return found


def _find_guards(tree: ast.AST, function: str | None, result: list[Guard]) -> None:
    for node in ast.iter_child_nodes(tree):
        if type(node) in (ast.FunctionDef, ast.AsyncFunctionDef):
            _find_guards(node, node.name, result)
            continue
        if type(node) is ast.Try and node.body:
            for handler in node.handlers:
                if any(type(statement) is ast.Raise for statement in handler.body):
                    continue  # (a handler that raises again takes no other path)
                caught = [] if handler.type is None else \
                    handler.type.elts if type(handler.type) is ast.Tuple else [handler.type]
                names = ["except:"] if handler.type is None else \
                    [ast.unparse(c) for c in caught if (c.attr if type(c) is ast.Attribute else getattr(c, "id", ""))
                     in _DATA_EXCEPTIONS]
                if names:
                    end = max(h.end_lineno or h.lineno for h in node.handlers)
                    result.append(Guard(node.lineno, range(node.body[0].lineno, end + 1), handler.lineno,
                                        ", ".join(names), function))
                    break
        _find_guards(node, function, result)
