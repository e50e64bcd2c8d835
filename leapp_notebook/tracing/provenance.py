"""Where a traced value comes from: one small object per traced array or tensor, and the walkers over it.

Every traced value (a ``TracedArray`` or a ``torch.Tensor`` seen by the tracer) carries a
:class:`Provenance` in its ``_lp`` attribute. It is in one of three states:

* **traced**: ``builder`` (the node being recorded) and ``node`` (its fx node) are set;
* **watch**: no builder yet, ``fingerprint`` set: an array created inside the cell that holds no traced
  data, watched so that a write of traced data into it (or by compiled code) is noticed;
* **lost**: ``builder`` set, ``node`` None, ``lost`` says how the value left the graph (an in-place
  method the tracer does not record, say) and ``line`` where; it is baked wherever it is used.

``version`` is the write count of the value's memory when it got its node: a view whose count is
behind was taken before a write through another view, so its graph value is stale.

The walkers here are the only code that looks into containers for traced values
(:func:`iter_traced`, :func:`plain`), the only frame walker that finds the cell line
(:func:`cell_site`), and the graph walks every analysis shares (:func:`ancestors`,
:func:`depends_on_inputs`).
"""

from __future__ import annotations

import dis
import itertools
import os
import re
import sys
from typing import Any, Callable, Iterable, Iterator

import numpy as np
import torch
import torch.fx
from numpy import ndarray  # not np.ndarray, torch.Tensor, torch.fx: their modules' __getattr__ defeats the lookup cache
from torch import Tensor, fx

_VALUE_TYPES = (ndarray, Tensor)
_SCALARS = frozenset({int, float, bool, complex, str, type(None), slice, type(Ellipsis)})
# NumPy's own readers of an array's shape and dtype: TracedArray's properties (which catch an assignment) add a
# Python call to every read, so the tracer's hot path reads through these
array_shape, array_dtype = ndarray.shape.__get__, ndarray.dtype.__get__


class Pending:
    """A graph node recorded but not built yet: a replayed call appends one per node to its graph's log
    (tracing/replay.py), and the graph builds them all, in order, in one pass (``RecordingGraph.flush``) before
    anything else reads or extends the graph. ``spec`` is the template's (op, target, name stem, facts, argument
    fixer, constant kwargs, the facts records it made: [last site, its record, {site: record} or None]),
    ``args``/``kwargs`` the call's arguments (earlier pending nodes among them), ``site`` its (line, location,
    helper), ``node`` the fx node once built. No ``__init__``: the recording path makes one per replayed node with
    :func:`pend`. Where the C extension is built, ``Pending`` and ``pend`` are its C forms (below)."""

    __slots__ = ("spec", "args", "kwargs", "site", "node")


def pend(log: list[Any], spec: tuple[Any, ...], args: tuple[Any, ...], site: Any) -> Any:
    """A new pending record of ``spec``, ``args`` and ``site`` (``kwargs`` unset, ``node`` None), appended to ``log``:
    what a replayed call does for each of its nodes."""
    pending = Pending()
    pending.spec, pending.args, pending.site, pending.node = spec, args, site, None
    log.append(pending)
    return pending


# The C forms of both (tracing/_flush.c, built by pip install where a C compiler is), which the C flush reads without
# an attribute lookup; the Python ones without it, or with LEAPP_NOTEBOOK_PURE_FLUSH=1.
PURE = os.environ.get("LEAPP_NOTEBOOK_PURE_FLUSH", "") not in ("", "0")
if not PURE:
    try:
        from . import _flush
    except ImportError:
        pass
    else:
        Pending = _flush.Pending  # type: ignore[misc]  # noqa: F811
        pend = _flush.pend  # noqa: F811
# Session.wrap's first case in C (_flush.wrap, set up with the C ufunc hook by tracing/array.py): a replayed call's
# eager array made traced; None: the Python statements run (replay.compile_template writes them out).
C_WRAP = getattr(_flush, "wrap", None) if not PURE and "_flush" in globals() else None


class Outside(str):
    """Why a value is lost (``Provenance.lost``) when it was computed between nodes, from the values of a node that
    had received its outputs (``Session.outside``): a node that uses it says so, and where to move the step."""


class Provenance:
    """The origin of one traced value (see the module docstring for its three states)."""

    __slots__ = ("builder", "_node", "version", "lost", "line", "fingerprint", "plain")

    def __init__(self, builder: Any = None, node: Any = None, version: int = 0):
        self.builder = builder
        self._node = node  # an fx node, a Pending one (the recording path reads _node as it is), or None
        self.version = version
        self.lost: str | None = None
        self.line: int | None = None
        self.fingerprint: int | None = None
        # the plain ndarray the traced array is a view of, same shape, strides and dtype (a replayed call's eager
        # result), for the ufunc hook to compute with instead of a new view per call; None: make the view. An
        # assignment to the array's shape, dtype or strides clears it.
        self.plain: Any = None

    @classmethod
    def watch(cls, fingerprint: int | None, line: int | None = None) -> "Provenance":
        """An array created in the cell with no traced data yet; ``fingerprint`` of its known contents."""
        prov = cls()
        prov.fingerprint = fingerprint
        prov.line = line
        return prov

    @classmethod
    def lost_in(cls, builder: Any, reason: str, line: int | None) -> "Provenance":
        prov = cls(builder)
        prov.lost = reason
        prov.line = line
        return prov

    @property
    def node(self) -> Any:
        """The value's fx node (a pending one is built first, with every node recorded before it)."""
        node = self._node
        if type(node) is Pending:
            self.builder.graph.flush()
            node = self._node = node.node
        return node

    @node.setter
    def node(self, node: Any) -> None:
        self._node = node

    def traced_in(self, builder: Any) -> bool:
        """Whether the value has a node in ``builder``'s graph."""
        return self.builder is builder and self._node is not None


def provenance(value: Any) -> Provenance | None:
    """The provenance of a traced array or tensor, None for anything else."""
    return getattr(value, "_lp", None) if isinstance(value, _VALUE_TYPES) else None


def iter_traced(values: Iterable[Any], builder: Any = None) -> Iterator[Any]:
    """Traced values (arrays and tensors with a provenance) in ``values`` and their nested lists/tuples.

    With ``builder``, only values that have a node in that builder's graph.
    """
    for value in values:
        prov = getattr(value, "_lp", None) if isinstance(value, _VALUE_TYPES) else None
        if prov is not None:
            if builder is None or prov.traced_in(builder):
                yield value
        elif type(value) is list or type(value) is tuple:
            yield from iter_traced(value, builder)


def builder_of(values: Iterable[Any]) -> Any:
    """The node builder of the first traced (or lost) value among ``values``, else None (a plain loop, not
    :func:`iter_traced`: this runs for every NumPy and torch call)."""
    for value in values:
        if isinstance(value, _VALUE_TYPES):
            prov = getattr(value, "_lp", None)
            if prov is not None and prov.builder is not None:
                return prov.builder
        elif type(value) is list or type(value) is tuple:
            found = builder_of(value)
            if found is not None:
                return found
    return None


def has_traced(values: Iterable[Any]) -> bool:
    """Whether any value in ``values`` (or its nested lists/tuples) is a traced or watched value."""
    return next(iter_traced(values), None) is not None


def plain(value: Any, *, depth: int = 16, in_place: bool = False, scalars: bool = False) -> Any:
    """The value without tracing: traced arrays become plain ndarrays, in lists and tuples ``depth`` levels deep.

    With ``in_place`` (cleaning a namespace after a trace) dicts and lists are changed in place, so other
    references to them see plain values too, and tensors lose their provenance. With ``scalars`` (and with
    ``in_place``) a NumPy scalar the tracer holds as a marked 0-d array is that scalar again (what torch is given:
    it takes a NumPy scalar as a number, and refuses a 0-d array in a list).
    """
    kind = type(value)
    if kind in _SCALARS:
        return value
    if isinstance(value, ndarray):
        if (in_place or scalars) and getattr(value, "_scalar", False):  # the NumPy scalar the cell made
            return ndarray.view(value, ndarray)[()]
        return ndarray.view(value, ndarray) if kind is not ndarray else value
    if isinstance(value, Tensor):
        if in_place and "_lp" in getattr(value, "__dict__", ()):
            del value._lp
        return value
    if depth <= 0:
        return value
    if kind is tuple or (kind is list and not in_place):
        for item in value:  # the same sequence when it holds nothing traced (spelled out: every call passes here)
            item_kind = type(item)
            if item_kind is not ndarray and item_kind not in _SCALARS and _needs_plain(item, in_place):
                return kind([plain(v, depth=depth - 1, in_place=in_place, scalars=scalars) for v in value])
        return value
    if in_place and isinstance(value, tuple) and hasattr(kind, "_make"):  # a named tuple
        if any(_needs_plain(v, in_place) for v in value):
            return kind._make(plain(v, depth=depth - 1, in_place=True) for v in value)
        return value
    if kind is list:
        for i, item in enumerate(value):
            value[i] = plain(item, depth=depth - 1, in_place=True)
    elif kind is dict and in_place:
        for key, item in list(value.items()):
            value[key] = plain(item, depth=depth - 1, in_place=True)
    return value


def _needs_plain(value: Any, in_place: bool) -> bool:
    if isinstance(value, ndarray):
        return type(value) is not ndarray
    if isinstance(value, Tensor):
        return in_place
    return type(value) in (list, tuple, dict)


def rebuilt(original: Any, items: Iterable[Any]) -> Any:
    """A sequence of ``original``'s type holding ``items``: a list, a tuple, a named tuple (NumPy's EighResult,
    ``_make``) or torch's return types (one sequence argument)."""
    kind = type(original)
    if hasattr(kind, "_make"):
        return kind._make(items)
    return kind(list(items)) if kind not in (list, tuple) else kind(items)


# The running session's own write counts of inference tensors' storages (torch keeps no counter for a tensor made
# inside ``torch.inference_mode()``, though it can be written there), by storage address: moved by each write the
# tracer sees (``Session.tensor_wrote``), read by :func:`tensor_version`; a new session starts them over
INFERENCE_COUNTS: dict[int, int] = {}


def tensor_version(tensor: Tensor) -> int:
    """The write counter of a tensor's memory: torch's own, or for an inference tensor (which keeps none) the
    tracer's count of the writes into its storage (``INFERENCE_COUNTS``)."""
    if tensor.is_inference():
        with torch._C.DisableTorchFunction():  # the tracer's own read
            return INFERENCE_COUNTS.get(tensor.untyped_storage().data_ptr(), 0)
    return tensor._version


def fingerprint(array: ndarray) -> int:
    return hash(np.ascontiguousarray(array).tobytes())


# ------------------------------------------------------------------------------------------
# constants known by their contents
# ------------------------------------------------------------------------------------------

_CONTENTS_KEPT = 1024  # elements: a plain constant array up to this size is told apart by its contents too


def _contents(value: Any) -> bytes | None:
    """The bytes of a plain array small enough to compare at every use (None for anything else)."""
    if type(value) is ndarray and value.size <= _CONTENTS_KEPT:
        return value.tobytes()
    return None


# One array object per dtype, shape and contents, process-wide, for the small constants builders compute from static
# arguments (a Python number as a tensor for an op torch takes no scalar for: np.maximum(h, -3.5)). A constant is
# made once per array object in a node, and a replayed call passes its template's object: so every call that
# computes the same value shares one constant node, whether it was built or replayed.
_COMPUTED: dict[tuple[str, tuple[int, ...], bytes], ndarray] = {}
_MAX_COMPUTED = 4_096


def computed(value: Any) -> Any:
    """The one array object standing for ``value``, a constant a builder computed (a read-only copy the first time: it
    is shared, and ``value`` may be the caller's); a larger array, or anything else, as it is."""
    contents = _contents(value)
    if contents is None:
        return value
    key = (value.dtype.str, value.shape, contents)
    found = _COMPUTED.get(key)
    if found is None:
        if len(_COMPUTED) >= _MAX_COMPUTED:
            _COMPUTED.clear()
        found = _COMPUTED[key] = value.copy()
        found.flags.writeable = False
    return found


def root(array: Any) -> Any:
    """The array that owns ``array``'s memory."""
    while isinstance(array.base, ndarray):
        array = array.base
    return array


def written_version(versions: dict[int, int], array: Any) -> int:
    """The count of writes ``versions`` (``Session.versions``) holds for ``array``'s memory owner."""
    return versions.get(id(root(array)), 0)


# ------------------------------------------------------------------------------------------
# the cell line: the one frame walker, and the cell's lines as Python numbers them
# ------------------------------------------------------------------------------------------

_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_KEPT_BREAK = re.compile(r"(\r\n|\r|\n)")  # the same, kept by re.split


def cell_lines(source: str, keepends: bool = False) -> list[str]:
    """The cell's lines as Python numbers them: only ``\\n``, ``\\r\\n`` and ``\\r`` end a line
    (``str.splitlines`` also splits at form feeds, U+2028 and NEL, which would shift every later line)."""
    # str.split where only \n ends lines (the common case: the regex scans a long cell several times slower, and
    # every trace reads the lines)
    if not keepends:
        lines = source.split("\n") if "\r" not in source else _LINE_BREAK.split(source)
        return lines[:-1] if lines and lines[-1] == "" else lines
    if "\r" not in source:
        lines = source.split("\n")
        last = lines.pop()
        lines = [line + "\n" for line in lines]
    else:  # each line with its ending: re.split gives the endings as every other part
        parts = _KEPT_BREAK.split(source)
        lines = [parts[i] + parts[i + 1] for i in range(0, len(parts) - 1, 2)]
        last = parts[-1]
    if last:
        lines.append(last)
    return lines


def line_text(lines: list[str], line: int | None) -> str:
    """The text of cell line ``line`` (1-based) of ``lines`` (``cell_lines``), '' for none or one out of range."""
    if line is None or not 1 <= line <= len(lines):
        return ""
    return lines[line - 1]


_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SKIP_PREFIXES = (_PACKAGE_DIR, os.path.dirname(os.path.abspath(np.__file__)),
                 os.path.dirname(os.path.abspath(torch.__file__)), "<frozen ", "<__array_function__")


# Per code object of a cell (its module code and the functions it defines): the site of each code unit, as
# ``cell_site`` gives a call from the cell's top level (line, no library location, no helper: one tuple per line). A
# frame's ``f_lineno`` decodes the code's line table from its start at every read, so in a long straight-line cell
# each read costs in proportion to how far down the cell it is (at line 20,000, 170 us a read: tracing such a cell
# was quadratic). The table is made once per code object, one slice per range of units that share a line
# (``per_code``); a re-run cell reuses it.
_SITE_TABLES: dict[int, tuple[Any, list[tuple[int, None, None] | None]]] = {}
_MAX_SITE_TABLES = 1024


def per_code(cache: dict[int, tuple[Any, Any]], limit: int, code: Any, make: Callable[[Any], Any]) -> Any:
    """``make(code)``, kept in ``cache`` by the code object's id with the code beside it (the id cannot be reused
    while the entry lives; a code object used as a key would hash its constants at every lookup); ``cache`` starts
    over at ``limit`` entries."""
    entry = cache.get(id(code))
    if entry is not None and entry[0] is code:
        return entry[1]
    if len(cache) >= limit:
        cache.clear()
    value = make(code)
    cache[id(code)] = code, value
    return value


_SUBSCRIPTS = frozenset(dis.opmap[name] for name in ("BINARY_SUBSCR", "BINARY_SLICE", "STORE_SUBSCR", "STORE_SLICE")
                        if name in dis.opmap)
_SUBSCRIPT_MARKS = bytes(1 if op in _SUBSCRIPTS else 0 for op in range(256))  # opcode -> 1 for a subscript
_SUBSCRIPT_BYTE = re.compile(b"\x01")


def _site_table(code: Any) -> list[tuple[int, None, None] | None]:
    table: list[tuple[int, None, None] | None] = [None] * (len(code.co_code) // 2)
    by_line: dict[int, tuple[int, None, None]] = {}
    for start, end, line in code.co_lines():
        if line is not None:
            site = by_line.get(line)
            if site is None:
                site = by_line[line] = (line, None, None)
            table[start // 2:end // 2] = [site] * ((end - start) // 2)
    # A subscript is at the line of its closing bracket: Python gives it the line where its whole expression starts
    # (``(x\n .reshape(4, 3)[::-1])`` would be at ``(x``). The subscripts are found in C (a translated copy of the
    # opcodes), and the positions iterator skipped to each of them: a pass over every unit in Python doubled the
    # cost of the table of a long cell.
    positions, at = code.co_positions(), 0
    for found in _SUBSCRIPT_BYTE.finditer(code.co_code[::2].translate(_SUBSCRIPT_MARKS)):
        unit = found.start()
        line, end_line, _, _ = next(itertools.islice(positions, unit - at, None))
        at = unit + 1
        if end_line is not None and end_line != line:
            site = by_line.get(end_line)
            if site is None:
                site = by_line[end_line] = (end_line, None, None)
            table[unit] = site
    return table


def site_table(code: Any) -> list[tuple[int, None, None] | None]:
    """The site of every code unit of ``code`` (None where no line is known), kept per code object."""
    entry = _SITE_TABLES.get(id(code))
    return entry[1] if entry is not None and entry[0] is code else \
        per_code(_SITE_TABLES, _MAX_SITE_TABLES, code, _site_table)


def frame_line(frame: Any) -> int | None:
    """``frame.f_lineno`` of a frame running a cell's code, read from the code's site table."""
    table = site_table(frame.f_code)
    unit = frame.f_lasti // 2
    site = table[unit] if 0 <= unit < len(table) and frame.f_trace is None else None
    return site[0] if site is not None else frame.f_lineno


def site_finder(code: Any, filename: str, depth: int = 2) -> Callable[[], tuple[int | None, str | None, str | None]]:
    """:func:`cell_site` for a session that knows the cell's code: a function of no arguments, called by a hook
    (the frame two up is the caller's). A call made by the cell's own top level (most of them) is found without
    walking or looking anything up, and gets the one site tuple of its line (:func:`site_table`: nothing made per
    call; a replayed op compares the site of its last node by identity). A closure, not a partial or a method: the
    interpreter calls a plain function from Python without a C frame between. ``depth``: 3 for a function called by
    the hook (the frame three up is the hook's caller)."""
    sites = site_table(code)
    count = len(sites)
    getframe = sys._getframe
    walk_from = depth + 1

    def where() -> tuple[int | None, str | None, str | None]:
        frame = getframe(depth)
        if frame.f_code is code and frame.f_trace is None:
            unit = frame.f_lasti // 2
            if 0 <= unit < count:
                site = sites[unit]
                if site is not None:
                    return site
        return cell_site(filename, walk_from)

    return where


def hook_site_finder(code: Any, filename: str) -> Callable[[], tuple[int | None, str | None, str | None]]:
    """:func:`site_finder` for the C ufunc hook (tracing/_flush.c), which has no frame of its own: the site of the
    frame that called NumPy. Its C form (``_flush.SiteFinder``) where the extension has one: the hook calls it
    without a Python call, and it calls the Python finder for every frame its fast case does not take."""
    fallback = site_finder(code, filename, 1)
    finder = getattr(_flush, "SiteFinder", None) if not PURE and "_flush" in globals() else None
    return finder(code, site_table(code), fallback) if finder is not None else fallback


def cell_site(filename: str, depth: int = 2) -> tuple[int | None, str | None, str | None]:
    """The cell line that led here, the library location when a library made the call, and the name of the
    helper function the call happened in (None at the cell's top level). ``depth`` frames above the caller
    are skipped first (the caller is always this package)."""
    frame = sys._getframe(depth)
    location = None
    helper = None
    while frame is not None:
        code = frame.f_code
        fname = code.co_filename
        if fname == filename:
            if helper is None and code.co_name != "<module>":
                helper = code.co_name
            return frame_line(frame), location, helper
        if location is None and not fname.startswith(SKIP_PREFIXES):
            location = f"{shown_file(fname)}:{frame.f_lineno} in {code.co_name}"
            helper = code.co_name
        frame = frame.f_back
    return None, location, helper


def shown_file(filename: str) -> str:
    """``filename`` as a notebook user knows it: a function defined in an earlier cell runs from a file IPython made
    (``/tmp/ipykernel_1234/2041.py``), shown as the cell that made it, ``In[3]``."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    number = getattr(getattr(shell, "compile", None), "_filename_map", {}).get(filename) if shell else None
    return f"In[{number}]" if number is not None else filename


_LIBRARY_DIRS = tuple(os.path.dirname(os.path.abspath(module.__file__)) + os.sep for module in (np, torch))
# torch's own passing-on of a call to a mode (``Tensor.__bool__`` of a traced tensor reaches the recorder through
# them): never the code that made the call
_DISPATCH_FILES = tuple(os.path.join(os.path.dirname(os.path.abspath(torch.__file__)), name)
                        for name in ("_tensor.py", "overrides.py", os.path.join("utils", "_device.py")))


def library_caller(depth: int = 2) -> tuple[str, str, int] | None:
    """The innermost frame of NumPy's or torch's own code that led here (past this package and torch's dispatch to
    the recorder), as (its file relative to the libraries' folder, with ``/``; its function; its line); None when
    the first frame past them is the cell's or a user's. Walks the stack: for a hazard's report, not per call."""
    frame = sys._getframe(depth)
    while frame is not None:
        fname = frame.f_code.co_filename
        if fname.startswith(_PACKAGE_DIR) or fname.startswith(_DISPATCH_FILES):
            frame = frame.f_back
            continue
        if not fname.startswith(_LIBRARY_DIRS):
            return None
        library = next(d for d in _LIBRARY_DIRS if fname.startswith(d))
        relative = os.path.relpath(fname, os.path.dirname(library.rstrip(os.sep)))
        return relative.replace(os.sep, "/"), frame.f_code.co_name, frame.f_lineno
    return None


def read_by_user(depth: int = 2) -> bool:
    """Whether the frame ``depth`` up (past torch's passing-on of a call to a mode) is the cell's or a user's: not
    this package's, NumPy's or torch's own code."""
    frame = sys._getframe(depth)
    while frame is not None and frame.f_code.co_filename.startswith(_DISPATCH_FILES):
        frame = frame.f_back
    if frame is None:
        return False
    fname = frame.f_code.co_filename
    return not (fname.startswith(_PACKAGE_DIR) or fname.startswith(_LIBRARY_DIRS))


def user_frame(depth: int = 2) -> Any:
    """The first frame outside NumPy, torch and this package (the code that made the call), or None."""
    frame = sys._getframe(depth)
    while frame is not None and frame.f_code.co_filename.startswith(SKIP_PREFIXES):
        frame = frame.f_back
    return frame


# ------------------------------------------------------------------------------------------
# graph walks
# ------------------------------------------------------------------------------------------

def ancestors(nodes: Iterable[fx.Node],
              more: Callable[[fx.Node], Iterable[fx.Node]] | None = None) -> dict[str, fx.Node]:
    """Every node ``nodes`` depend on, themselves included, by name; ``more(node)``: the nodes a node depends on
    besides its graph inputs (one walk over both)."""
    seen: dict[str, fx.Node] = {}
    stack = [n for n in nodes if isinstance(n, fx.Node)]
    while stack:
        current = stack.pop()
        if current.name in seen:
            continue
        seen[current.name] = current
        stack.extend(current.all_input_nodes)
        if more is not None:
            stack.extend(more(current))
    return seen


def depends_on_inputs(node: Any) -> bool:
    """Whether ``node``'s value is computed from a placeholder (a node input)."""
    if not isinstance(node, fx.Node):
        return False
    # Two depth-first searches taking turns, sharing what they have seen, stopping at the first placeholder: one
    # goes down each node's last operand first, the other its first operand. A state carried through a loop is
    # one or the other (h = np.exp(g) + m reaches the input through m, h = h + g.sum() through h), and the other
    # order walks nearly the whole graph first: the pair stops when either finds the input (the constants cell of
    # benchmarks/trace_overhead.py: 35 nodes seen of 184, where the last-operand search alone saw 182).
    if node.op == "placeholder":
        return True
    seen = {node}
    last = list(node._input_nodes)
    first = last[::-1]
    searches = ((last, iter), (first, reversed))  # (a stack, the order its nodes' operands go on it)
    while last or first:
        for stack, order in searches:
            if stack:
                current = stack.pop()
                if current.op == "placeholder":
                    return True
                if current not in seen:
                    seen.add(current)
                    stack.extend(order(current._input_nodes))
    return False


def output_node(graph: fx.Graph) -> fx.Node:
    return next(n for n in reversed(graph.nodes) if n.op == "output")
