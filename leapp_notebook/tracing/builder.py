"""One node being recorded: its fx graph, constants, inputs, outputs and hazards (``NodeBuilder``), and
what happens when it closes: reachability of untraced results, the dtype pass, the GraphModule.
"""

from __future__ import annotations

import builtins
import dis
import keyword
import operator
import re
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
import torch.fx
from numpy import ndarray  # not np.ndarray, torch.Tensor, torch.fx: their modules' __getattr__ defeats the lookup cache
from torch import Tensor, fx
from torch.fx.immutable_collections import immutable_dict

from . import hazards as hz
from . import leapp_defects, ops, torch_impl
from .dtypes import dtype_name, numpy_dtype, torch_dtype
from .facts import KEY, NodeFacts, SitedFacts, facts, make, update
from .provenance import PURE, Outside, Pending, _contents, ancestors, depends_on_inputs, output_node, tensor_version
from .types import EXPORT_WITH, Hazard, Node, TensorSpec, TraceError

if TYPE_CHECKING:
    from .session import Session

_TARGET_NAMES: dict[Any, str] = {}  # fx's snake-cased base name per target, computed once
_BASE_NAMES: dict[Any, str | None] = {}  # base_name() per target
_NAME = re.compile(r"^([a-zA-Z_][0-9a-zA-Z_]*?)(?:_(\d+))?$")  # fx's own name pattern (torch/fx/graph.py)
# names fx never gives a node as they are (keywords, builtins, the builtins its generated code imports): it numbers
# them from 1 (sum_1, sum_2); its table maps each to an object, and one mapped to None it does give bare
_FX_ILLEGAL: Any = getattr(fx.graph, "_illegal_names", None)
_NEVER_BARE = frozenset(name for name, obj in _FX_ILLEGAL.items() if obj is not None) \
    if isinstance(_FX_ILLEGAL, dict) else frozenset(keyword.kwlist) | frozenset(builtins.__dict__)
_Node = fx.Node
# NumPy's and torch's own functions, bound before a trace installs its wrappers of them (the tracer's own copies are
# not the cell's arrays), and torch's table of hooks on registering a buffer (NodeBuilder.const)
_array, _asarray, _from_numpy = np.array, np.asarray, torch.from_numpy
# (a stand-in that is never empty where torch keeps no such table: register_buffer always)
_BUFFER_HOOKS = getattr(torch.nn.modules.module, "_global_buffer_registration_hooks", (None,))
_new_node = fx.Node.__new__
_init_node = torch._C._NodeBase.__init__
# The kwargs of every node recorded without keyword arguments (most of them): fx keeps an empty immutable_dict it is
# given as it is, and makes a new one (one more object for the collector to walk) from anything else. Nothing can
# change it in place (fx replaces a node's kwargs, never edits them).
_NO_KWARGS = immutable_dict()
# A SitedFacts record's __dict__ (the template op's SharedState) and its site, set without the frozen
# dataclass's __setattr__ (a Python function)
_SET_STATE = NodeFacts.__dict__["__dict__"].__set__
_SET_SITE = SitedFacts._site.__set__
# made by RecordingGraph._make (fx's create_node adds only checks and a scan for symbolic values to it)
_FAST_OPS = frozenset({"call_function", "call_method", "call_module", "placeholder", "get_attr", "output"})
_CONVERSIONS = frozenset({"ndarray.astype", "np.astype", "np.asarray", "np.array", "np.ascontiguousarray"})


class RecordingGraph(fx.Graph):
    """An fx Graph for recording: without the per-node scan for symbolic values, which the tracer never creates,
    and with a log of pending nodes.

    Graph.create_node walks every argument with pytree looking for SymInts; on the tracing path that walk costs
    more than the rest of recording a NumPy call. A replayed call (tracing/replay.py) does not build its fx nodes:
    it appends a :class:`Pending` per node to ``log``, and :meth:`flush` builds them in one pass, in order. Every
    way of reading or extending the graph flushes first (creating a node, ``nodes``, ``find_nodes``, a pending
    node read through ``Provenance.node``), so the graph is always the one the calls made in order would have
    built: the same nodes, names and order.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.log: list[Pending] = []
        self._find_nodes_lookup_table = _FindNodes(self)
        self._graph_namespace._obj_to_name = _Names(self)

    @property
    def nodes(self) -> Any:  # noqa: D102 - fx's own, after the pending nodes are built
        if self.log:
            self.flush()
        return fx.Graph.nodes.fget(self)

    def find_nodes(self, *, op: str, target: Any = None, sort: bool = True) -> Any:  # noqa: D102 - fx's own
        if self.log:
            self.flush()
        return super().find_nodes(op=op, target=target, sort=sort)

    def create_node(self, op, target, args=None, kwargs=None, name=None, type_expr=None):  # noqa: ANN001
        if self.log:
            self.flush()
        if op not in _FAST_OPS or self.owning_module is not None or type_expr is not None:
            return super().create_node(op, target, args, kwargs, name, type_expr)
        return self._make(op, target, args or (), kwargs or {},
                          None if name is not None else base_name(op, target), name)

    def flush(self) -> None:
        """Build the pending nodes, in the order they were recorded, at the graph's end (nothing was made after
        them: making a node flushes first), each with its facts: ``_make`` with its lookups hoisted out of the
        loop (this builds every replayed op). The loop runs in C (``tracing/_flush.c``) where the extension was
        built; ``_flush_python`` is the same loop in Python, the reference and the fallback."""
        log = self.log[:]
        self.log.clear()  # the same list: a replay function holds it
        namespace = self._graph_namespace
        self._find_nodes_lookup_table.stale = True  # (fx's name map answers for the graph's nodes: _Names)
        try:
            if _C_FLUSH is not None:
                _C_FLUSH(log, self, namespace._used_names, namespace._base_count, self._root._prepend)
            else:
                self._flush_python(log)
        except BaseException:  # the nodes built before the error are in the graph: its length counts them
            self._len += sum(pending.node is not None for pending in log)
            raise
        self._len += len(log)

    def _flush_python(self, log: list[Pending]) -> None:
        """``flush``'s loop in Python (tracing/_flush.c does the same steps in the same order)."""
        namespace = self._graph_namespace
        used, counts = namespace._used_names, namespace._base_count
        append = self._root._prepend  # before the root: at the end
        for pending in log:
            op, target, base, state, fix, kwargs, memo = pending.spec
            if kwargs is None:
                kwargs = pending.kwargs
            args = pending.args
            if fix is not None:
                args, kwargs = fix(args, kwargs)
            if not kwargs:
                kwargs = _NO_KWARGS
            name = _unique(used, counts, base) if base is not None else self._name_for(target)
            node = _new_node(_Node)
            _init_node(node, self, name, op, target, None)
            node._update_args_kwargs(args, kwargs)
            append(node)
            # Facts are frozen and hold nothing of the node itself, only the template op's state and the site:
            # the nodes one template op makes at one cell site (a loop's iterations) share one record, a
            # SitedFacts whose __dict__ is the op's state itself (read-only). (The template is process-wide: its
            # memo holds the record and the site, never the graph.)
            # A re-trace finds the records of a straight-line cell's sites (each op at a line of its own) in the
            # op's own table of its sites (``memo[2]``; ``_SITE_MEMOS``).
            site = pending.site
            if memo[0] is site or memo[0] == site:
                record = memo[1]
            else:
                by_site = memo[2]
                record = by_site.get(site) if type(by_site) is dict else None
                if record is None:
                    record = _new_record(memo, state, site)
                memo[0] = site
                memo[1] = record
            node.meta[KEY] = record
            pending.node = node

    def _name_for(self, target: Any) -> str:
        """fx's own name for a node of ``target`` (one with no plain name stem, ``base_name``)."""
        return self._graph_namespace.create_name(_TARGET_NAMES.get(target) or self._target_to_str(target), None)

    def _make(self, op: str, target: Any, args: tuple[Any, ...], kwargs: dict[str, Any],
              base: str | None, name: str | None = None) -> fx.Node:
        """A node of a graph no module owns yet (``create_node`` sends the others to fx). ``base``: the name
        stem (``base_name``), named as fx would without its sanitizing; None: fx's own naming, from ``name`` or
        the target."""
        namespace = self._graph_namespace
        if base is None:
            candidate = name if name is not None else _TARGET_NAMES.get(target)
            if candidate is None:
                candidate = _TARGET_NAMES[target] = self._target_to_str(target)
            name = namespace.create_name(candidate, None)
        else:
            name = _unique(namespace._used_names, namespace._base_count, base)
        # torch.fx.Node(...) without its Python-level argument checks (op and target come from the lookup or
        # from torch's own dispatch); fx's name map and find_nodes table answer for it (_Names, _FindNodes): this
        # runs for every recorded op
        node = _new_node(_Node)
        _init_node(node, self, name, op, target, None)
        node._update_args_kwargs(args, kwargs or _NO_KWARGS)
        self._insert(node)
        self._find_nodes_lookup_table.stale = True
        self._len += 1
        return node


class _FindNodes(fx.graph._FindNodesLookupTable):
    """fx's find_nodes table of a :class:`RecordingGraph`. The nodes the recording path builds (``flush``, ``_make``)
    are not entered one by one (a dictionary write per op into tables that grow to the size of the cell: at 100,000
    ops the flush's time grew by about a fifth with its two tables, this and fx's name map); the graph marks the table
    ``stale`` and the next use of it (fx's ``find_nodes``, ``in``, ``insert``, ``remove``: a lint, a node created by fx,
    an erased node, an attribute set on a node) enters every node of the graph first, in the graph's order."""

    def __init__(self, graph: fx.Graph) -> None:
        super().__init__()
        self.graph = graph
        self.stale = False

    def fresh(self) -> None:
        """Enter every node of the graph (built ones: a caller flushes first where it needs the pending ones)."""
        self.stale = False
        table = self.table
        table.clear()
        key = self._key
        for node in fx.Graph.nodes.fget(self.graph):
            table[key(node)][node] = None

    def __contains__(self, node: Any) -> bool:
        if self.stale:
            self.fresh()
        return super().__contains__(node)

    def insert(self, node: Any) -> None:  # noqa: D102 - fx's own
        if self.stale:
            self.fresh()  # (the node is in the graph already: entered here, and again below, once)
        super().insert(node)

    def remove(self, node: Any) -> None:  # noqa: D102 - fx's own
        if self.stale:
            self.fresh()  # (still in the graph when fx removes it from the table)
        super().remove(node)

    def find_nodes(self, *, op: str, target: Any = None) -> list[Any]:  # noqa: D102 - fx's own
        if self.stale:
            self.fresh()
        return super().find_nodes(op=op, target=target)


class _Names(dict):
    """fx's map of named objects (``_Namespace._obj_to_name``) of a :class:`RecordingGraph`: the nodes the recording
    path builds are not entered (fx reads the map to rename a node and to name an object again); a node of the graph
    answers its own name. fx's own writes (``associate_name_with_obj``, a rename) go in as before."""

    __slots__ = ("graph",)

    def __init__(self, graph: fx.Graph) -> None:
        super().__init__()
        self.graph = graph

    def __contains__(self, obj: Any) -> bool:
        return dict.__contains__(self, obj) or (type(obj) is _Node and obj.graph is self.graph)

    def __getitem__(self, obj: Any) -> Any:
        try:
            return dict.__getitem__(self, obj)
        except KeyError:
            if type(obj) is _Node and obj.graph is self.graph:
                return obj.name
            raise

    def get(self, obj: Any, default: Any = None) -> Any:  # noqa: D102 - dict's own
        return self[obj] if obj in self else default


def _assigned_line(code: Any, name: str) -> int | None:
    """The cell line of the last assignment to ``name`` at the cell's top level (an output read after the cell ran,
    made of no recorded op: the line that gave it its value), None when the top level assigns no such name."""
    line = None
    for instruction in dis.get_instructions(code):
        if instruction.opname == "STORE_NAME" and instruction.argval == name and instruction.positions.lineno:
            line = instruction.positions.lineno if line is None else max(line, instruction.positions.lineno)
    return line


# The facts records of each template op by cell site, across traces (RecordingGraph.flush): a template op's memo is
# [last site, its record, {site: record} or None]. The last site's record serves a loop's iterations; the table, a
# re-traced straight-line cell, where every op has a line of its own and would otherwise get a record made for
# every node on every trace. The tables hold at most _MAX_SITE_FACTS records in all (a SitedFacts, its site tuple
# and its table entry: about 0.2 KB, 4 MB in all; a copy of the facts took 0.6 KB before),
# counted in _SITE_MEMOS_KEPT; when full they all start over. Entries are the site tuples and records themselves:
# nothing the collector walks per op is added.
_SITE_MEMOS: list[list[Any]] = []  # the memos that have a table
_SITE_MEMOS_KEPT = [0]  # records in all the tables
_MAX_SITE_FACTS = 20_000


def forget_site_facts() -> None:
    """Drop every template op's table of records by site."""
    for held in _SITE_MEMOS:
        held[2] = None
    _SITE_MEMOS.clear()
    _SITE_MEMOS_KEPT[0] = 0


def _new_record(memo: list[Any], state: Any, site: Any) -> NodeFacts:
    """The facts record of a template op (its ``state``) at ``site``, kept in the op's table of its sites
    (``memo[2]``): the op's facts themselves, not a copy (a SitedFacts whose __dict__ is ``state``), and the site."""
    record = object.__new__(SitedFacts)
    _SET_STATE(record, state)
    _SET_SITE(record, site)
    by_site = memo[2]
    if by_site is None or _SITE_MEMOS_KEPT[0] >= _MAX_SITE_FACTS:
        by_site = _site_table(memo)
    by_site[site] = record
    _SITE_MEMOS_KEPT[0] += 1
    return record


def _site_table(memo: list[Any]) -> dict[Any, NodeFacts]:
    """A new, empty table of ``memo``'s records by site; every table is dropped first when they hold
    _MAX_SITE_FACTS records in all."""
    if _SITE_MEMOS_KEPT[0] >= _MAX_SITE_FACTS:
        forget_site_facts()
    if memo[2] is None:
        _SITE_MEMOS.append(memo)
    table: dict[Any, NodeFacts] = {}
    memo[2] = table
    return table


def _written_since(owner: Any, kept: Any) -> bool:
    """Whether a constant's object changed in place since its constant was made, for one known by identity alone
    (no ``contents``): ``kept`` is a tensor's write counter then, or the constant's own array for a larger array,
    compared bit for bit (NaN equal to the same NaN, -0.0 apart from 0.0) through an unsigned view of the same
    item size: about half the time of a matrix product by the array, where comparing values costs eight."""
    if isinstance(owner, Tensor):
        return tensor_version(owner) != kept
    if isinstance(owner, ndarray) and type(kept) is ndarray:
        current = np.ascontiguousarray(owner)
        if current.dtype != kept.dtype:
            current = current.astype(kept.dtype)
        if current.shape != kept.shape:
            return True
        bits = _BITS.get(kept.dtype.itemsize, np.uint8)
        return not np.array_equal(current.view(bits), kept.view(bits))
    return False


_BITS = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}  # an item's bits as one unsigned integer
_CHUNK = 1 << 20  # elements compared at a time (no temporary of the size of a large input)
_BYTES_COMPARED = 1 << 16  # an input up to this size is compared as two bytes objects


def _changed(live: Any, kept: Any) -> bool:
    """Whether a node input's memory (``live``) no longer holds the copy ``kept`` when the node was declared, bit
    for bit: an input up to _BYTES_COMPARED bytes as two bytes objects; a larger one through an unsigned view of
    the same item size (which any strides allow), a block of rows at a time: no temporary of the size of a large
    input, contiguous or not."""
    if isinstance(live, Tensor):
        with torch._C.DisableTorchFunction():  # the tracer's own read
            live, kept = live.numpy(), kept.numpy()
    if live.dtype != kept.dtype or live.shape != kept.shape:
        return True
    bits = _BITS.get(kept.dtype.itemsize)
    if bits is not None:
        if kept.nbytes <= _BYTES_COMPARED:  # (array_equal's Python-level checks: about 20 us a trace)
            return live.tobytes() != kept.tobytes()
        live, kept = live.view(bits), kept.view(bits)
    nan = bits is None and kept.dtype.kind in "fc"  # complex128 and longer: by value, NaN equal to NaN

    def differ(a: Any, b: Any) -> bool:
        return not np.array_equal(a, b, equal_nan=nan)

    if live.ndim == 0 or live.size <= _CHUNK:
        return differ(live, kept)
    rows = max(1, _CHUNK // (live.size // live.shape[0]))
    return any(differ(live[i:i + rows], kept[i:i + rows]) for i in range(0, live.shape[0], rows))


# The numbered names of each stem (``add_1``, ``add_2``, ...; index n is ``{stem}_{n}``, index 0 unused), made once
# for every graph: formatting a name and hashing the new string took about a third of naming a node (0.9 us at any
# size). At most _MAX_NUMBERED names in all (about 60 bytes each); past that, names are made as they are needed.
_NUMBERED: dict[str, list[str]] = {}
_NUMBERED_KEPT = [0]
_MAX_NUMBERED = 100_000


def _numbered(base: str, num: int) -> str:
    """``f"{base}_{num}"``, the same string object (its hash computed) for every graph while the table holds it."""
    names = _NUMBERED.get(base)
    if names is None:
        names = _NUMBERED[base] = [base]
    if num >= len(names):
        grown = min(max(num + 1, 2 * len(names)), len(names) + _MAX_NUMBERED - _NUMBERED_KEPT[0])
        if grown <= num:
            return f"{base}_{num}"
        added = [f"{base}_{n}" for n in range(len(names), grown)]
        for name in added:
            hash(name)  # computed once, kept in the string
        names.extend(added)
        _NUMBERED_KEPT[0] += len(added)
    return names[num]


def _unique(used: set[str], counts: dict[str, int], base: str) -> str:
    """The next free node name of stem ``base``, as fx's ``_Namespace.create_name`` gives it (builtin names are
    numbered from 1), recorded as used."""
    num = counts.get(base, 0)
    names = _NUMBERED.get(base)
    if base in _NEVER_BARE:
        num += 1
        name = names[num] if names is not None and num < len(names) else _numbered(base, num)
    else:
        name = base
    while name in used:
        num += 1
        name = names[num] if names is not None and num < len(names) else _numbered(base, num)
    used.add(name)
    counts[base] = num
    return name


def base_name(op: str, target: Any) -> str | None:
    """The name stem fx gives a node of ``target`` when it is a plain identifier without a numeric suffix, else
    None (names in ``_NEVER_BARE`` are numbered from 1, as fx does)."""
    if op not in ("call_function", "call_method"):
        return None
    try:
        return _BASE_NAMES[target]
    except KeyError:
        pass
    except TypeError:  # an unhashable target
        return None
    candidate = _TARGET_NAMES.get(target)
    if candidate is None:
        candidate = _TARGET_NAMES[target] = fx.Graph()._target_to_str(target)
    match = _NAME.match(candidate)
    base = None if match is None or match.group(2) is not None else candidate
    _BASE_NAMES[target] = base
    return base


def target_display(op: str, target: Any) -> str:
    if op == "call_method":
        return f"Tensor.{target}"
    if op == "call_module":
        return str(target)
    if target is operator.getitem:
        return "getitem"
    if target is torch_impl.setitem:
        return "setitem"
    return ops._display(target)


class NodeBuilder:
    """One node being recorded: its graph, constants, inputs, outputs and hazards."""

    def __init__(self, session: "Session", name: str):
        self.session = session
        self.name = name
        self.graph = RecordingGraph()
        self.root = torch.nn.Module()
        self.inputs: list[TensorSpec] = []
        self.placeholders: list[fx.Node] = []
        self.outputs: list[TensorSpec] = []
        self.output_nodes: list[fx.Node] = []
        self.sample_inputs: dict[str, Any] = {}
        self.live_inputs: dict[str, tuple[Any, int | None]] = {}  # each input's own memory, and its cell line
        self.sample_outputs: dict[str, Any] = {}
        self.hazards: dict[tuple[str, int | None], Hazard] = {}
        self.pending_reach: set[tuple[str, int | None]] = set()
        # LEAPP's dtype defects (torch-dtype) by hazard key: (the node, the torch dtype LEAPP's model computes it in);
        # settled when the node closes: no defect where every use casts the value to that dtype (finish)
        self.cast_back: dict[tuple[str, int | None], list[tuple[str, Any]]] = {}
        # nn.init's draws of a module's initial weights by hazard key (the tensors drawn into), and the keys of every
        # other random draw: a key only of initial weights load_state_dict replaced since is no hazard (finish)
        self.init_draws: dict[tuple[str, int | None], list[Tensor]] = {}
        self.random_other: set[tuple[str, int | None]] = set()
        self.genuine: dict[int, tuple[Any, fx.Node, Any, Any]] = {}  # const(): (array, node, contents, kept)
        self.modules: dict[int, str] = {}  # id(nn.Module) -> its submodule name in this node's root
        self.module_facts: dict[tuple[int, bool], tuple[Any, Any, list[str]]] = {}  # per module and training mode
        self.module_watched: dict[int, tuple[Any, bool]] = {}  # per module: whether its forward is watched
        self.module_names: dict[int, tuple[Any, str]] = {}  # id(nn.Module) -> (it, its cell name), on first call
        self.n_const = 0
        self.closed = False
        self.export_with = "jit"
        self.sources: dict[str, str] = {}
        self.node: Node | None = None
        # Nodes emitted but not yet checked against NumPy's dtype and shape (tracing/replay.py settles the
        # nodes of each recorded call; whatever is left here, the dtype pass checks when the node closes).
        self.fresh: list[fx.Node] = []
        self.settled: list[fx.Node] = []  # the nodes replay.settle checked last, from index settled_from
        self.settled_from = -1
        self.last_casts: dict[fx.Node, fx.Node] = {}
        self.n_reports = 0  # hazards reported so far (a call that reports one is not replayed)

    # -------------------------------------------------------------- graph construction
    def add_input(self, name: str, value: Any) -> Any:
        """Declare node input ``name``: returns the traced value the cell computes with (a TracedArray for a
        NumPy array, the tensor itself for a torch tensor)."""
        if not isinstance(name, str) or not name.isidentifier():
            raise TraceError(f"input name {name!r} of node '{self.name}' must be a Python identifier")
        if any(spec.name == name for spec in self.inputs):
            raise TraceError(f"node '{self.name}' already has an input named '{name}'")
        kind, sample = _input_value(self.name, name, value)
        prov = getattr(value, "_lp", None)
        changed = None  # (node, output) whose value this input is, when written in place after that node closed
        if prov is not None and prov.builder is not None and prov.builder is not self and prov.builder.closed:
            producer = prov.builder
            for spec, out_node in zip(producer.outputs, producer.output_nodes, strict=True):
                if out_node is prov.node:
                    self.sources[name] = f"{producer.name}/{spec.name}"
                    kept = producer.sample_outputs.get(spec.name)  # (the output itself when nothing could follow)
                    # by value, bit for bit; or by a write the tracer saw into the value's bytes, which may leave
                    # them as they were at trace time (NaN + 1) and not on other inputs
                    if kept is not None and (_changed(sample, kept) or self.session.written_since(value, prov)):
                        changed = (producer.name, spec.name)
                    break
        shape, dtype = tuple(sample.shape), dtype_name(sample.dtype)
        placeholder = self.graph.placeholder(name)
        line = self.session.where()[0]
        # the line of the input_tensors call; for a value computed between nodes, the step that computed it
        placeholder.meta[KEY] = make(numpy="input", torch="input", input=name, shape=shape, dtype=dtype, kind=kind,
                                     line=line, origin=prov.lost if prov is not None and
                                     isinstance(prov.lost, Outside) else None)
        if self.placeholders:
            # Keep inputs together, in declaration order, ahead of the ops recorded so far.
            self.placeholders[-1].append(placeholder)
        else:
            first = next(iter(self.graph.nodes))
            if first is not placeholder:
                first.prepend(placeholder)
        self.placeholders.append(placeholder)
        self.inputs.append(TensorSpec(name, shape, dtype, kind))
        self._leapp_dtype("input", name, dtype, line, placeholder.name, None)
        self.sample_inputs[name] = sample.clone() if kind == "torch" else sample.copy()
        self.live_inputs[name] = (sample, line)
        if changed is not None:
            # a step between the nodes wrote into the earlier node's output: the pipeline gives this node what that
            # node outputs, the eager cell the value as written
            self.report("output-changed-between", line, [placeholder.name], pending_reach=True, input=name,
                        producer=changed[0], output=changed[1])
        return self.session.bind_input(self, sample, placeholder, kind)

    def emit(self, op: str, target: Any, args: tuple[Any, ...], kwargs: dict[str, Any] | None = None,
             *, line: int | None, numpy: str, location: str | None, helper: str | None) -> fx.Node:
        node = self.graph.create_node(op, target, tuple(args), dict(kwargs or {}))
        self.fresh.append(node)
        if target == "to" and len(args) == 2 and isinstance(args[1], torch.dtype) \
                and numpy.startswith(("np.", "ndarray.")) and numpy not in _CONVERSIONS:
            # a cast the lookup inserted for NumPy's dtype rules (its facts name the call it serves)
            node.meta[KEY] = make(line=line, numpy=numpy, torch="Tensor.to", location=location, helper=helper,
                                  cast=True)
            return node
        node.meta[KEY] = make(line=line, numpy=numpy, torch=target_display(op, target), location=location,
                              helper=helper)
        return node

    def const(self, value: Any, *, baked: bool, origin: str | None, line: int | None,
              source_nodes: list[str] | None = None, helper: str | None = None, owner: Any = None,
              contents: Any = None) -> fx.Node:
        """A constant node holding ``value``. A genuine one is made once per array object and contents: an array
        or tensor the cell changes in place between two uses (STEP[0] += 1, W.add_(1)) gets a constant per value
        (up to _CONTENTS_KEPT elements an array is known by its bytes; above, its constant is compared with it at
        each use; a tensor by its write counter). ``owner``/``contents``: the object and contents to know it by,
        when ``value`` is a view of it (an array the cell made, known by its fingerprint: Session._traced_value)."""
        if not baked:
            if owner is None:
                owner, contents = value, _contents(value)
            found = self.known(owner, contents)
            if found is not None:
                return found
        kind = "torch" if isinstance(value, Tensor) else "numpy"
        if kind == "torch":
            with self.session.eager():  # the tracer's own torch calls are not the cell's
                array = value.detach().cpu().numpy()
        else:
            array = _asarray(value)
        dtype = array.dtype
        if dtype.kind not in "biufc":
            raise TraceError(f"cannot embed a constant of dtype {dtype} in the graph of node '{self.name}'")
        if dtype.kind in "iu" and dtype.itemsize < 8 and dtype not in ops._NP_TO_TORCH:
            array = array.astype(np.int64)
        number = self.n_const
        self.n_const += 1
        attr = f"_baked{number}" if baked else f"_const{number}"
        # NumPy's and torch's own functions, not the cell's wrappers of them (np.array watches what it makes), and
        # the buffer set as register_buffer sets it (its checks cannot fail here: the name is new and no submodule
        # is named with a leading underscore), unless someone registered a hook for buffers
        tensor = _from_numpy(_array(array, copy=True, order="C"))
        if _BUFFER_HOOKS:
            self.root.register_buffer(attr, tensor)
        else:
            self.root._buffers[attr] = tensor
        graph, name = self.graph, ("baked" if baked else "const") + str(number)
        if graph.owning_module is None:  # (a name fx keeps as it is: a stem and digits, no underscore)
            if graph.log:
                graph.flush()
            node = graph._make("get_attr", attr, (), _NO_KWARGS, name)
        else:
            node = graph.create_node("get_attr", attr, name=name)
        self.fresh.append(node)
        preview = tuple(array.ravel()[:6].tolist()) if array.size else ()
        node.meta[KEY] = make(line=line, numpy="constant", torch="constant", helper=helper, shape=array.shape,
                              dtype=dtype_name(array.dtype), kind=kind, const="baked" if baked else "genuine",
                              origin=origin, sources=tuple(source_nodes or ()), preview=preview)
        if not baked:
            kept = None
            if contents is None:
                kept = tensor_version(owner) if isinstance(owner, Tensor) else tensor.numpy()
            self.genuine[id(owner)] = (owner, node, contents, kept)
        return node

    def known(self, owner: Any, contents: bytes | None) -> fx.Node | None:
        """The genuine constant this node made for ``owner`` holding ``contents`` (its bytes, None for a larger array
        or a tensor: compared with the constant's own copy or write counter), if it has one."""
        hit = self.genuine.get(id(owner))
        if hit is not None and hit[0] is owner and hit[2] == contents and (
                contents is not None or not _written_since(owner, hit[3])):
            return hit[1]
        return None

    def module(self, module: torch.nn.Module, name: str) -> str:
        """The submodule name of ``module`` in this node's root (added on first use): its weights stay
        parameters and buffers of the exported module."""
        found = self.modules.get(id(module))
        if found is not None:
            return found
        base = "".join(c if c.isalnum() or c == "_" else "_" for c in name) or "module"
        if not base[0].isalpha():
            base = "m_" + base
        target, n = base, 1
        while hasattr(self.root, target):
            n += 1
            target = f"{base}_{n}"
        self.root.add_module(target, module)
        self.modules[id(module)] = target
        return target

    # -------------------------------------------------------------- hazards
    def report(self, cause: str, line: int | None, graph_nodes: list[str], *, name: str = "",
               location: str | None = None, severity: str | None = None, pending_reach: bool = False,
               recorded_by_full: bool = False, fix: str | None = None, **fields: Any) -> Hazard:
        """Report a hazard of ``cause`` (tracing/hazards.py ``CAUSES``) at cell ``line``; ``pending_reach``: an
        error only if its graph nodes reach an output (settled when the node closes)."""
        sess = self.session
        self.n_reports += 1
        hazard, new = hz.add(self.hazards, cause, line, graph_nodes, node=self.name, profile=sess.profile,
                             code=sess.line_text(line), name=name, location=location, severity=severity, fix=fix,
                             recorded_by_full=recorded_by_full, **fields)
        key = (hazard.kind, line)
        if new and pending_reach:
            self.pending_reach.add(key)
        elif severity == "error" and not pending_reach:  # (another pending report at the line keeps it pending)
            self.pending_reach.discard(key)
        return hazard

    def _leapp_dtype(self, role: str, name: str, dtype: str, line: int | None, node: str,
                     location: str | None) -> None:
        """A node input or output of a dtype LEAPP 0.7.2 cannot name (uint16, complex64): its input_tensors /
        output_tensors raise while tracing (an error in ``leapp``)."""
        finding = leapp_defects.tensor_dtype(role, dtype)
        if finding is not None:
            self.report("leapp-records-wrongly", line, [node], name=f"{role} '{name}' ({dtype})", location=location,
                        severity="error" if self.session.profile == "leapp" else "warning", fix=finding.fix,
                        what=finding.message)

    # -------------------------------------------------------------- closing
    def close(self, values: dict[str, Any], export_with: str) -> None:
        sess = self.session
        line, location, helper = sess.where()
        if line is None:  # read after the cell ran (inputs=/outputs=): whoever called trace_cell is not the cell's
            location = helper = None
        if export_with not in EXPORT_WITH:
            raise TraceError(f"export_with={export_with!r} for node '{self.name}': use one of "
                             + ", ".join(EXPORT_WITH))
        self.export_with = export_with
        for out_name, value in values.items():
            if not isinstance(out_name, str) or not out_name.isidentifier():
                raise TraceError(f"output name {out_name!r} of node '{self.name}' must be a Python identifier")
            prov = getattr(value, "_lp", None)
            traced_here = prov is not None and prov.traced_in(self)
            with sess.eager():
                # The eager output is kept as it is when nothing can change it afterwards (the declaration is the
                # cell's last statement, or comes after the cell ran): a large output is not held twice.
                kind, eager = _output_value(self.name, out_name, value, copy=not sess.runs_last(line, helper))
            # read after the cell ran (inputs=/outputs=): what the value reports is at the line that assigned it
            read_at = line if line is not None else _assigned_line(sess.code, out_name)
            node = sess.graph_value(self, value, read_at, as_tensor=True, helper=helper)
            out_line = line if line is not None else facts(node).line or read_at
            alias = leapp_defects.aliased_input(node) if traced_here and kind == "numpy" else None
            if alias is not None:
                # LEAPP 0.7.2's output_tensors refuses an output that is a view of exactly a declared
                # input's memory (x.T of a 1-D x, x[:], x.reshape(x.shape)): reported at the view's line.
                view_line = facts(node).line or out_line
                self.report("output-aliases-input", view_line, [node.name], name=f"output '{out_name}'",
                            location=location, severity="error" if sess.profile == "leapp" else "warning",
                            fix=leapp_defects.ALIAS.fix, output=out_name, call=facts(node).numpy, input=alias,
                            what=leapp_defects.ALIAS.what)
            if not traced_here or not depends_on_inputs(node):
                # With inputs=/outputs= the outputs are read after the cell ends (no cell line): report at
                # the line that produced the value.
                shown = "ndarray" if isinstance(value, ndarray) else type(value).__name__  # not TracedArray
                self.report("untraced-output", out_line, [node.name], location=location, output=out_name,
                            type=shown)
            self.outputs.append(TensorSpec(out_name, tuple(eager.shape), dtype_name(eager.dtype), kind))
            self._leapp_dtype("output", out_name, self.outputs[-1].dtype, line if line is not None else out_line,
                              node.name, location)
            self.output_nodes.append(node)
            self.sample_outputs[out_name] = eager
        out = self.graph.output(tuple(self.output_nodes))
        out.meta[KEY] = make(line=line, outputs=tuple(spec.name for spec in self.outputs))
        for placeholder, spec in zip(self.placeholders, self.inputs, strict=True):
            # an input changed while the node ran by a write the tracer did not see (into the array it was made
            # from, by plain NumPy; by compiled code): the graph reads the value the node was given
            live, input_line = self.live_inputs[spec.name]
            if (id(self), spec.name) not in sess.inputs_written and _changed(live, self.sample_inputs[spec.name]):
                self.report("input-hidden-write", input_line, [placeholder.name], pending_reach=True,
                            input=spec.name)
        self.closed = True

    def _settle_cast_back(self) -> None:
        """A LEAPP dtype defect (its model computes a value in float32 where NumPy gives float64) whose value is cast,
        at every use, to the dtype LEAPP's model computes it in (``np.where(c, 1.0, 0.0).astype(np.float32)``): both
        end in that dtype with the same values (one select, or one basic op rounded once more: innocuous from
        float64 to float32), and LEAPP's export is right (measured, found by an exploration session). A warning."""
        by_name = {node.name: node for node in self.graph.nodes}
        for key, uses in self.cast_back.items():
            hazard = self.hazards.get(key)
            if hazard is None or hazard.severity != "error":
                continue
            if all(name in by_name and _cast_to(by_name[name], dtype) for name, dtype in uses):
                hazard.severity = "warning"
                hazard.message += " Its value is cast to that dtype wherever it is used, so the export agrees."

    def finish(self) -> Node:
        """Settle severities by reachability, fix dtypes against the eager values, and build the GraphModule."""
        reaching = _reaching(self.graph) if self.pending_reach else {}
        for key in self.pending_reach:
            hazard = self.hazards[key]
            if not any(name in reaching for name in hazard.graph_nodes):
                hazard.severity = "warning"
                hazard.message += " Its result does not reach any output of the node."
        if self.cast_back:
            self._settle_cast_back()
        for key, drawn in self.init_draws.items():
            if key not in self.random_other and key in self.hazards \
                    and all(id(tensor) in self.session.loaded for tensor in drawn):
                # policy = MLP(); policy.load_state_dict(SD): nn.Linear's initial draws, replaced by the loaded
                # weights; the graph holds those (found by an exploration session: the probe passed, the error stood)
                del self.hazards[key]
        self.init_draws.clear()
        # Recorded calls were checked one by one as they were made (tracing/replay.py); the dtype pass runs
        # only when some node could not be (it runs on the bare graph, so fx generates code once, after it).
        if any(n.op != "get_attr" for n in self.fresh):  # constants need no check
            samples = [v if isinstance(v, Tensor) else torch.from_numpy(np.asarray(v, order="C"))
                       for v in self.sample_inputs.values()]
            with torch.no_grad():
                DtypePass(self.root, self.graph, self).run(*samples)
            self.fresh.clear()
        module = graph_module(self.root, self.graph, f"LeappNode_{_identifier(self.name)}")
        hazards = sorted(self.hazards.values(), key=lambda h: (h.line or 0, h.kind))
        self.node = Node(name=self.name, graph=module, inputs=list(self.inputs), outputs=list(self.outputs),
                         hazards=hazards, sample_inputs=dict(self.sample_inputs),
                         sample_outputs=dict(self.sample_outputs), export_with=self.export_with,
                         sources=dict(self.sources))
        return self.node


def _cast_to(node: fx.Node, dtype: Any) -> bool:
    """Whether every use of ``node`` is a cast of it to ``dtype`` (``.astype(np.float32)`` recorded as ``to``)."""
    return bool(node.users) and all(user.op == "call_method" and user.target == "to" and user.args[0] is node
                                    and user.args[1:] == (dtype,) and not user.kwargs for user in node.users)


def _reaching(graph: fx.Graph) -> dict[str, fx.Node]:
    """The nodes the node's outputs depend on, by name: through the graph, and through the trace-time values baked
    constants were computed from (their facts' ``sources``: in the ``leapp`` profile ``np.median(x) * 1`` bakes the
    product, computed from the baked median, with no edge between the two constants)."""
    by_name: dict[str, fx.Node] = {}

    def sources(node: fx.Node) -> list[fx.Node]:
        names = facts(node).sources
        if names and not by_name:
            by_name.update((n.name, n) for n in graph.nodes)
        return [by_name[name] for name in names if name in by_name]

    return ancestors(output_node(graph).all_input_nodes, sources)


def graph_module(root: torch.nn.Module, graph: fx.Graph, class_name: str) -> fx.GraphModule:
    """A GraphModule whose Python code is generated on first use, not now: code generation is most of the
    cost of finishing a node, and many traces are only inspected (hazards, rendering) before any run."""
    try:
        from torch.fx._lazy_graph_module import _LazyGraphModule
    except ImportError:  # older torch: generate the code now
        return fx.GraphModule(root, graph, class_name=class_name)
    return _LazyGraphModule(root, graph, class_name=class_name)


class DtypePass(fx.Interpreter):
    """Runs the graph once on the trace inputs; where torch's dtype differs from the eager value's, inserts a
    cast. Shapes are checked too: a shape torch gets differently is a lookup defect, reported as a
    ``semantic-mismatch`` hazard at the line that made the call.
    """

    def __init__(self, root: torch.nn.Module, graph: fx.Graph, builder: NodeBuilder):
        super().__init__(root, graph=graph)
        self.builder = builder

    def run_node(self, n: fx.Node) -> Any:
        info = facts(n)
        try:
            value = super().run_node(n)
        except Exception as exc:  # a lookup row emitted something torch rejects: report, do not crash
            self.builder.report("op-fails", info.line, [n.name], call=info.numpy or n.name,
                                error=f"{type(exc).__name__}: {exc}")
            raise _StopPass() from exc
        if isinstance(value, Tensor):
            if info.dtype is not None and n.op != "placeholder":
                want_torch = torch_dtype(info.dtype)
                if want_torch is not None and value.dtype != want_torch:
                    with self.graph.inserting_after(n):
                        cast = self.graph.call_method("to", (n, want_torch))
                    n.replace_all_uses_with(cast, delete_user_cb=lambda user: user is not cast)
                    cast.meta[KEY] = replace(info, torch="Tensor.to", cast=True)
                    info = update(n, dtype=dtype_name(value.dtype))
                    value = value.to(want_torch)
            shape = tuple(value.shape)
            if info.shape is not None and shape != tuple(info.shape):
                self.builder.report("shape-differs", info.line, [n.name], call=info.numpy or n.name,
                                    got=shape, want=tuple(info.shape))
            # replaced, not completed where it stands: replayed nodes share their records (RecordingGraph.flush)
            graph_dtype = dtype_name(value.dtype)
            if info.graph_shape != shape or info.graph_dtype != graph_dtype:
                update(n, graph_shape=shape, graph_dtype=graph_dtype)
        return value

    def run(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return super().run(*args, **kwargs)
        except _StopPass:
            return None


class _StopPass(Exception):
    pass


def _identifier(name: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in name)


_REFUSED_INPUT = ("convert it with np.asarray(value) (a list or scalar) or np.asarray(value).view(np.ndarray) "
                  "(an ndarray subclass), or pass a torch.Tensor")


def _a(word: str) -> str:
    """``word`` with its indefinite article: "an int64", "a list"."""
    return f"an {word}" if word[:1].lower() in "aeiou" else f"a {word}"


def _input_value(node: str, name: str, value: Any) -> tuple[str, Any]:
    """The kind (``"numpy"``/``"torch"``) and the plain value of a node input; refuses anything whose
    semantics differ from a plain ndarray or tensor."""
    prov = getattr(value, "_lp", None)
    if isinstance(value, Tensor):
        if value.device.type != "cpu":
            raise TraceError(f"input '{name}' of node '{node}' is on {value.device}; move it to the CPU (.cpu())")
        if value.is_sparse or value.layout != torch.strided:
            raise TraceError(f"input '{name}' of node '{node}' is a {value.layout} tensor; pass a dense tensor")
        if type(value) not in (Tensor, torch.nn.Parameter):
            raise TraceError(f"input '{name}' of node '{node}' is {_a(type(value).__name__)}, a tensor subclass; "
                             "pass a plain torch.Tensor (value.as_subclass(torch.Tensor))")
        with torch._C.DisableTorchFunction():  # the tracer's own read: not a call of the cell's to record
            tensor = value.detach()
        if numpy_dtype(tensor.dtype) is None:
            raise TraceError(f"input '{name}' of node '{node}' has dtype {tensor.dtype}, which NumPy cannot hold; "
                             "convert it (.float())")
        return "torch", tensor
    if isinstance(value, ndarray) and getattr(value, "_scalar", False):
        # a NumPy scalar (np.sum(x), say), which the tracer holds as a 0-d array: refused as the eager cell's is
        value = ndarray.view(value, ndarray)[()]
    if isinstance(value, np.generic):
        raise TraceError(f"input '{name}' of node '{node}' is a NumPy scalar ({type(value).__name__}), not a NumPy "
                         f"array or torch tensor; {_REFUSED_INPUT}")
    if isinstance(value, ndarray):
        if type(value) is not ndarray and prov is None:
            raise TraceError(f"input '{name}' of node '{node}' is {_a(type(value).__name__)}, an ndarray subclass "
                             f"with its own semantics; {_REFUSED_INPUT}")
        array = ndarray.view(value, ndarray) if type(value) is not ndarray else value
    else:
        raise TraceError(f"input '{name}' of node '{node}' is {_a(type(value).__name__)}, not a NumPy array or "
                         f"torch tensor; {_REFUSED_INPUT}")
    if array.dtype.kind not in "biufc" or torch_dtype(dtype_name(array.dtype)) is None:
        raise TraceError(f"input '{name}' of node '{node}' has dtype {array.dtype}, which torch cannot hold")
    return "numpy", array


def _output_value(node: str, name: str, value: Any, copy: bool = True) -> tuple[str, Any]:
    """The kind and the eager value of an output (a copy when ``copy``; tensors detached: an output may require
    grad)."""
    if isinstance(value, Tensor):
        return "torch", value.detach().clone() if copy else value.detach()
    if isinstance(value, ndarray):
        return "numpy", np.array(ndarray.view(value, ndarray), copy=True) if copy else ndarray.view(value, ndarray)
    try:
        eager = np.asarray(value)
    except ValueError:  # a tuple of arrays of different shapes, say
        eager = np.asarray(None)
    if eager.dtype.kind not in "biufc":
        raise TraceError(f"output '{name}' of node '{node}' is {_a(type(value).__name__)}, not a numeric array: "
                         "declare each array as an output of its own")
    return "numpy", np.array(eager, copy=True)



# RecordingGraph.flush's loop in C (tracing/_flush.c), built by `pip install` where a C compiler is found; without it,
# or with LEAPP_NOTEBOOK_PURE_FLUSH=1 in the environment, the Python loop (RecordingGraph._flush_python) runs.
def _c_flush() -> Any:
    if PURE:
        return None
    try:
        from . import _flush
    except ImportError:
        return None
    _flush.setup(_new_node, _Node, _init_node, _NO_KWARGS, KEY, _NEVER_BARE, _NUMBERED, _numbered, _new_record)
    return _flush.flush


_C_FLUSH = _c_flush()
