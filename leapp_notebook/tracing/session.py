"""The record of one trace: the nodes being recorded, and how every value the cell uses becomes a graph
value (its node when traced, a baked constant when it came from traced data some other way, a genuine
constant otherwise), with a hazard wherever information is lost.

``ACTIVE`` is the running session; the hooks of the traced types (tracing/array.py for NumPy,
tracing/tensor.py for torch) call into it. The session itself patches nothing: trace.py installs and
removes the hooks around the cell.
"""

from __future__ import annotations

import difflib
import dis
import math
import operator
import re
import sys
import weakref
from _thread import get_ident
from bisect import bisect_right
from itertools import islice
from typing import TYPE_CHECKING, Any, Callable

import numpy as np
import torch
import torch.fx
from numpy import ndarray  # not np.ndarray, torch.Tensor, torch.fx: their modules' __getattr__ defeats the lookup cache
from torch import Tensor, fx

from . import branches, leapp_defects, ops, provenance, replay, torch_impl
from . import hazards as hz
from .builder import NodeBuilder
from .dtypes import dtype_name, numpy_dtype, torch_dtype
from .facts import KEY, derive, facts, update
from .provenance import (
    C_WRAP,
    Outside,
    Pending,
    Provenance,
    builder_of,
    cell_lines,
    cell_site,
    fingerprint,
    hook_site_finder,
    iter_traced,
    library_caller,
    plain,
    rebuilt,
    root,
    site_finder,
    tensor_version,
)
from .types import Hazard, Node, TraceError

if TYPE_CHECKING:
    from .array import TracedArray

ACTIVE: "Session | None" = None
_VALUE_TYPES = (ndarray, Tensor)
_new_provenance = object.__new__

# Functions whose result is static metadata (shapes, dtypes), never a value derived from data.
METADATA_FUNCTIONS = {np.shape, np.ndim, np.size, np.result_type, np.may_share_memory, np.shares_memory,
                      np.iscomplexobj, np.isrealobj, np.min_scalar_type, np.can_cast}


def active() -> "Session | None":
    """The running session when called from the thread that runs the traced cell, else None: other threads
    see plain NumPy and torch."""
    sess = ACTIVE
    if sess is None or sess.thread != get_ident():
        return None
    return sess


# around the tracer's own reads of a tensor (its address, strides, storage), which the recorder would otherwise see
_OWN_READS = torch._C.DisableTorchFunction


def _covers(array: ndarray, tensor: Tensor) -> bool:
    """Whether ``array`` and ``tensor`` are the same values in memory: start, shape, strides and dtype."""
    return array.__array_interface__["data"][0] == tensor.data_ptr() and array.shape == tuple(tensor.shape) \
        and array.dtype == numpy_dtype(tensor.dtype) \
        and array.strides == tuple(step * array.itemsize for step in tensor.stride())


class SharedMemory:
    """One block of memory that arrays and tensors of a trace share across crossings: the arrays that own parts of
    it as NumPy sees it, the tensors' storage addresses, and the traced arrays and tensors made at the crossings
    (``Session._settle``). Held by weak reference, by id: the table never keeps a value alive (a loop of crossings
    would keep every step's arrays), and an entry whose value is gone is skipped (its id may be another's now)."""

    __slots__ = ("owners", "storages", "arrays", "tensors")

    def __init__(self) -> None:
        self.owners: dict[int, weakref.ref] = {}
        self.storages: set[int] = set()
        self.arrays: dict[int, weakref.ref] = {}
        self.tensors: dict[int, weakref.ref] = {}

    def add(self, owner: ndarray, address: int, array: Any, tensor: Tensor) -> None:
        self.owners[id(owner)] = weakref.ref(owner)
        self.storages.add(address)
        if array is not None:
            self.arrays[id(array)] = weakref.ref(array)
        if tensor is not None:
            self.tensors[id(tensor)] = weakref.ref(tensor)

    def merge(self, other: SharedMemory) -> None:
        self.owners.update(other.owners)
        self.storages |= other.storages
        self.arrays.update(other.arrays)
        self.tensors.update(other.tensors)

    @staticmethod
    def alive(table: dict[int, weakref.ref]) -> list[tuple[int, Any]]:
        """The (id, value) pairs of ``table`` whose value is still alive."""
        found = []
        for key, ref in table.items():
            value = ref()
            if value is not None and id(value) == key:
                found.append((key, value))
        return found


class Session:
    """One running trace of one cell."""

    def __init__(self, source: str, filename: str, code: Any, profile: str, array_type: "type[TracedArray]",
                 on_first_tensor: Callable[[], None] | None = None):
        self.source = source
        self.code = code  # the cell's code object
        self.lines = cell_lines(source)
        self.filename = filename
        self.profile = profile
        self.array_type = array_type
        self.on_first_tensor = on_first_tensor  # called once, when the first traced tensor appears
        self.thread = get_ident()
        self.namespace: dict[str, Any] = {}
        # where(): the cell line that led here, the library location when a library made the call, and the
        # helper function the call happened in (a closure, not a method: it runs for every recorded call); the
        # calls of ``code``'s own top level (the cell's code object) are found without a frame walk
        self.where = site_finder(code, filename)
        self.where_below = site_finder(code, filename, 3)  # Session.where for a function the hook calls
        self.where_hook = hook_site_finder(code, filename)  # ... for the C ufunc hook, which has no frame
        self.where_method = site_finder(code, filename, 4)  # ... called by the method hook, under its wrapper
        self.builders: dict[str, NodeBuilder] = {}
        self.suspended = 0
        self._suspend = _Suspended(self)
        # Plain arrays written with traced data (written_into_plain): the memory each write reached, per owner of
        # the written array's memory (root()), with how it was written. An array over those bytes (the one written,
        # its base, another view of it) is tainted: baked wherever used (taint_of). Empty in almost every trace: the
        # hot path asks that alone.
        self.tainted: dict[int, tuple[Any, list[tuple[Layout, str]]]] = {}
        # Write counters per memory owner: a view whose counter is behind was taken before a write
        # through another view, so its graph value is stale (the eager value changed).
        self.versions: dict[int, int] = {}
        # The last writes counted per owner, by the same key: (count before, count after, where the bytes written
        # lie (``_layout``), or None for all of the owner's). A view found behind its owner's count is still current
        # when every write since it was taken is here and missed its bytes (``_untouched``): ``a = h[:3]; h[3:] = 0``,
        # or a column written beside another (``c = h[:, 0]; h[:, 1:] = 0``).
        # A gap (a write not logged, or dropped as older than the last _WRITES_KEPT) keeps it stale. torch's
        # counters, per tensor base, have theirs in ``tensor_writes``, guarded by a weak reference to the base (a
        # counter restarts at 0 on a new tensor that may take a dead one's id).
        self.writes: dict[int, list[tuple[int, int, Layout | None]]] = {}
        self.tensor_writes: dict[int, tuple[weakref.ref, list[tuple[int, int, Layout | None]]]] = {}
        self.inference_writes: dict[int, list[tuple[int, int, Layout | None]]] = {}
        # Writes through a traced NumPy view (``v = a[:, :2]; v *= 0.5``), per owner as in ``writes``: the count
        # after the write -> (the keys the view was indexed with (``_basic_view``), the view's new node, the view's
        # layout, the write's site and the view's name). The array indexed, read after such writes, takes them as
        # ``setitem`` nodes (``_written_back``) instead of being baked as a stale view. Empty unless the cell writes
        # through a view.
        self.write_backs: dict[int, dict[int, tuple[list[Any], Any, Layout, tuple[Any, Any, Any, str | None]]]] = {}
        # The traced NumPy array written last, per owner as in ``writes``: (the owner's count after the write, a weak
        # reference to the array). A view taken before a write into its base by another name (``v = z[:, :2]; z[1] +=
        # 1``) takes its elements again from it (``_reindexed``) while it is current. Empty unless the cell writes.
        self.last_written: dict[int, tuple[int, weakref.ref]] = {}
        # the global generators the cell seeded so far (np.random.seed, torch.manual_seed): a draw from one after that
        # is the same on every run (``seeded-random``)
        self.seeded: set[str] = set()
        # the plain array an item assignment is about to write (tracing/stores.py: into, then the key's hook)
        self.into_target: tuple[Any, str] | None = None
        # ids of the tensors nn.Module.load_state_dict filled during the trace (tensor._load_state_dict)
        self.loaded: set[int] = set()
        # whether the cell made a selection by the data yet (a traced boolean mask as a key, np.nonzero, np.unique,
        # torch.nonzero, ...): until it does, a read of a traced value's size is not looked into (``size_read``)
        self.selected = False
        provenance.INFERENCE_COUNTS.clear()  # (by storage address: the last session's are not this one's)
        # Arrays and tensors that share memory across crossings (``torch.from_numpy(a)``, ``t.numpy()``): one
        # SharedMemory per block of memory, by the id of each array that owns part of it (``root``: ``t.numpy()``
        # owns its memory as NumPy sees it, though x does too) and by each tensor's storage address. A write on
        # one side makes what the other side holds stale (``bump``, ``shared_write``).
        self.shared: dict[int, SharedMemory] = {}
        self.shared_storage: dict[int, SharedMemory] = {}
        # not yet in those two (``link``): weak references, as there
        # (array, its owner, tensor, the tensor's storage address: the owner's memory is part of that block even when
        # the tensor, a temporary view, is gone by the first write)
        self.crossings: list[tuple[weakref.ref, weakref.ref, weakref.ref, int]] = []
        # id of a traced tensor that shares another's memory with no ``_base`` to find it by (``t.detach()``,
        # ``t.data``, a view of an inference tensor) -> (it, [the tensors it shares memory with]), weakly: a crossing
        # made from it links those too (``link``): ``t.detach().numpy()`` is the usual way out of torch, and ``t``
        # outlives the temporary (``detached_from``)
        self.detached: dict[int, tuple[weakref.ref, list[weakref.ref]]] = {}
        # The memory of each node input, the caller's own array or tensor (a write into it is an ``input-written``
        # hazard, whichever side writes), found by the id of the array that owns a NumPy input's memory (``root``)
        # or by a torch input's storage address: the inputs there, each as (first byte, end, its node, its
        # placeholder's name, "array" or "tensor", kept alive: the array that owns the memory, or the tensor the
        # input is bound to). Two inputs may be parts of one array. That tensor joins the shared memory of its
        # storage when a crossing makes one (``_settle``), so that a write through another tensor or array there
        # reaches it as it reaches the tensors of the crossings.
        self.input_owners: dict[int, list[_InputMemory]] = {}
        self.input_storages: dict[int, list[_InputMemory]] = {}
        self.inputs_written: set[tuple[int, str]] = set()  # (id of the node, input name) reported input-written
        # Python values taken from a closed node's values while no node was open (``float(t1.sum())`` between two
        # nodes): (line, library location, hazard kind, what, the node's name); the next node declared reports them
        # (``builder``)
        self.taken_outside: list[tuple[int | None, str | None, str, str, str]] = []
        # the NumPy scalars among them (not bools: NumPy keeps one of each), by id, kept alive so that the id stays
        # theirs -> (the scalar, its line, what, the node's name): a node that takes one as an operand has it as a
        # literal, reported there as an error (``scalar_used``)
        self.outside_scalars: dict[int, tuple[Any, int | None, str, str]] = {}

    def bump(self, array: Any, region: Any = None) -> int:
        """Record an in-place write into ``array``'s memory; returns the owner's new write count. ``region``: the
        view of ``array`` written, when a key picked one (``a[3:] = v``); None: all of ``array``."""
        owner = root(array)
        key = id(owner)
        before = self.versions.get(key, 0)
        version = self.versions[key] = before + 1
        if region is None:
            region = array
        # the bytes written; None (all the owner's) costs nothing, a part costs a byte-bounds read (2 us)
        log_write(self.writes, key, before, version, None if region.nbytes >= owner.nbytes else _layout(region))
        inputs = self.input_owners.get(key)
        if inputs is not None:
            self.input_written(inputs, region)
        if self.crossings:
            self._settle()
        if self.shared:
            memory = self._memory_of(owner)
            if memory is not None:
                self._written(memory, key, None, region)
        return version

    def tensor_wrote(self, tensor: Tensor, before: int, span: Layout | None) -> None:
        """A write into ``tensor``'s memory (``span``: where the bytes written lie, None for all of it) moved its write
        counter from ``before`` (the tracer moves an inference tensor's own count here): logged for
        :meth:`_untouched`, by the tensor's base (whose counter its views share), or by an inference tensor's
        storage address (its count's key)."""
        with _OWN_READS():
            if tensor.is_inference():
                address = tensor.untyped_storage().data_ptr()
                after = provenance.INFERENCE_COUNTS[address] = provenance.INFERENCE_COUNTS.get(address, 0) + 1
                log_write(self.inference_writes, address, after - 1, after, span)
                return
            base = tensor._base
            if base is None:
                base = tensor
            after = tensor._version
            if after == before:
                return
        key = id(base)
        entry = self.tensor_writes.get(key)
        if entry is None or entry[0]() is not base:
            # dropped with the tensor (a loop of writes into new tensors keeps no log of each)
            entry = self.tensor_writes[key] = (weakref.ref(base, lambda _, logs=self.tensor_writes, key=key:
                                                           logs.pop(key, None)), [])
        log_write(None, entry[1], before, after, span)

    def written_since(self, value: Any, prov: Provenance) -> bool:
        """Whether the cell wrote into ``value``'s bytes since it took its provenance ``prov`` (a write count moved
        since, and not only by writes that missed them)."""
        is_tensor = isinstance(value, Tensor)
        current = tensor_version(value) if is_tensor else self.versions.get(id(root(value)), 0)
        return prov.version != current and not self._untouched(value, prov.version, current, is_tensor)

    def _untouched(self, value: Any, since: int, current: int, is_tensor: bool) -> bool:
        """Whether every write into ``value``'s memory from its count ``since`` to ``current`` is logged and
        missed ``value``'s bytes: its graph value, taken before them, is still its value."""
        if is_tensor:
            with _OWN_READS():
                if value.is_inference():
                    log = self.inference_writes.get(value.untyped_storage().data_ptr())
                else:
                    base = value._base if value._base is not None else value
                    entry = self.tensor_writes.get(id(base))
                    log = entry[1] if entry is not None and entry[0]() is base else None
        else:
            log = self.writes.get(id(root(value)))
        if not log:
            return False
        mine = _layout(value)
        if mine[0] == mine[1]:
            return False
        bytes_of = _memory_once(value)  # read only if a strided layout needs them
        count = since
        for before, after, written in islice(log, bisect_right(log, count, key=_AFTER), None):
            if before != count or written is None or not _apart(mine, written, bytes_of):
                return False  # a gap, or a write into its bytes
            count = after
            if count == current:
                return True
        return False

    def wrote_through(self, array: Any, before: Provenance | None) -> None:
        """``array``, a traced NumPy array, was just written in place (its provenance now the write's, its owner's
        count moved by one); ``before``: its provenance until then. When ``array`` was a current basic-indexing view
        of another traced value (``v = a[:, :2]``), the write is kept for ``a``'s next read (``_written_back``)."""
        now = array._lp
        if now is not None and now.lost is None and now._node is not None:
            self.last_written[id(root(array))] = (now.version, weakref.ref(array))
        if before is None or now is None or before.builder is not now.builder or before.lost is not None \
                or before._node is None or now.lost is not None or now.version != before.version + 1:
            return
        view, new = before.node, now.node
        backs = self.write_backs.get(id(root(array)))
        if _basic_view(view):
            # the keys from the outermost view it was indexed from (``u = y[:, :3][1:]``: both), one of which
            # ``_written_back`` finds fitting the array read
            keys = [view.args[1]]
            source = view.args[0]
            while len(keys) < 4 and _basic_view(source):
                keys.insert(0, source.args[1])
                source = source.args[0]
        else:  # a view written before (``v *= 0.5``, then ``v += s``): the keys of that write
            keys = next((back[0] for back in reversed(backs.values()) if back[1] is view), None) if backs else None
            if keys is None:
                return
        if backs is None:
            backs = self.write_backs[id(root(array))] = {}
        backs[now.version] = (keys, new, _layout(array), (*self.where(), self.name_of(array)))
        if len(backs) > _WRITES_KEPT:
            del backs[next(iter(backs))]

    def _written_back(self, builder: NodeBuilder, value: Any, prov: Provenance, current: int) -> fx.Node | None:
        """``value``'s node, brought up to date with the writes made since ``prov`` through views indexed from it
        (``wrote_through``): ``setitem(node, key, the view's new node)`` for each; the writes that missed its bytes
        are skipped. None when some write since is neither (then it is a stale view, as before)."""
        key = id(root(value))
        backs, log = self.write_backs.get(key), self.writes.get(key)
        if not backs or not log:
            return None
        mine, bytes_of, eager = _layout(value), _memory_once(value), ndarray.view(value, ndarray)
        node, count, writes = prov.node, prov.version, []
        for before, after, written in islice(log, bisect_right(log, count, key=_AFTER), None):
            if before != count:
                return None  # a write not logged
            back = backs.get(after)
            if back is not None:  # (a view current when written, of these very elements: its key fits ``value``)
                keys, new, view_layout, site = back
                fitting = _fitting_keys(eager, keys, view_layout)
                if fitting is None:
                    return None
                writes.append((fitting, new, site))
            elif written is None or not _apart(mine, written, bytes_of):
                return None  # a write into its bytes that no view of it made
            count = after
            if count == current:
                break
        if count != current or not writes:
            return None
        finding = leapp_defects.find_torch(leapp_defects.NUMPY_VIEW_WRITE, (), {})
        base = self.name_of(value)
        for keys, new, (line, location, helper, view) in writes:
            node = _nested_setitem(builder, node, eager, keys, new, line, location, helper)
            if new.op == "get_attr":
                continue  # a value baked where it was made (a call not recorded), and reported there
            through = f"The write through '{view}'" if view else "A write through a view"
            # LEAPP 0.7.2 records the write on the view alone: an error where the new value reaches an output
            builder.report("leapp-records-wrongly", line, [node.name], location=location, pending_reach=True,
                           name=f"{through} into '{base}'" if base else f"{through} into its base", fix=finding.fix,
                           what=finding.message, severity="error" if self.profile == "leapp" else "warning")
        value._lp = Provenance(builder, node, current)
        return node

    def _reindexed(self, builder: NodeBuilder, value: Any, current: int, line: int | None, helper: str | None
                   ) -> fx.Node | None:
        """``value``'s node for a basic-indexing view (``v = z[:, :2]``) read after a write into its memory by another
        name (``z[1] += 1``): its elements indexed again from the array written last (``last_written``), when that
        array is current and ``value``'s keys (those it was indexed with, the last ones first) pick its elements out
        of it. None otherwise (then it is a stale view, as before). LEAPP 0.7.2 keeps the view as it was taken."""
        held = self.last_written.get(id(root(value)))
        if held is None or held[0] != current:
            return None
        written = held[1]()
        if written is None or written is value:
            return None
        now = written._lp
        if now is None or now.builder is not builder or now.lost is not None or now._node is None \
                or now.version != current:
            return None
        view = value._lp.node
        keys = [view.args[1]]
        source = view.args[0]
        while len(keys) < 4 and _basic_view(source):
            keys.insert(0, source.args[1])
            source = source.args[0]
        region = ndarray.view(written, ndarray)
        fitting = _fitting_keys(region, keys, _layout(value))
        if fitting is None:
            return None
        location = self.where()[1] if helper is not None else None
        node = now.node
        for key in fitting:
            region = region[key]
            node = builder.emit("call_function", operator.getitem, (node, key), line=line,
                                numpy=leapp_defects.NUMPY_VIEW_READ, location=location, helper=helper)
            update(node, shape=region.shape, dtype=dtype_name(region.dtype), view=True)
        self._report_view_read(builder, node, value, written, line, location, leapp_defects.NUMPY_VIEW_READ)
        value._lp = Provenance(builder, node, current)
        return node

    def _reindexed_tensor(self, builder: NodeBuilder, value: Tensor, current: int, line: int | None,
                          helper: str | None) -> fx.Node | None:
        """``value``'s node for a view of a tensor (``head = t[:2]``) read after a write into its base (``t[0] += 1``,
        ``t.mul_(2)``): its elements indexed again from the base's current value, the key read from where the view
        lies in the base's memory. None when the base is not current or no basic key picks the view out of it (then it
        is a stale view, as before). LEAPP 0.7.2 keeps the view as it was taken (``_reindexed``, for NumPy's)."""
        with _OWN_READS():
            base = value._base
        held = getattr(base, "_lp", None) if base is not None else None
        if held is None or held.builder is not builder or held.lost is not None or held._node is None \
                or held.version != current:
            return None
        from .tensor import _region_key  # (the tensor module imports this one)
        key = _region_key(base, value)
        if key is None:
            return None
        location = self.where()[1] if helper is not None else None
        node = builder.emit("call_function", operator.getitem, (held.node, key if len(key) != 1 else key[0]),
                            line=line, numpy=leapp_defects.TORCH_VIEW_READ, location=location, helper=helper)
        self._report_view_read(builder, node, value, base, line, location, leapp_defects.TORCH_VIEW_READ)
        self.wrap(builder, value, node)
        return node

    def _report_view_read(self, builder: NodeBuilder, node: fx.Node, value: Any, base: Any, line: int | None,
                          location: str | None, name: str) -> None:
        """The ``view-read-stale`` finding of a view indexed again after a write into its base: an error in ``leapp``
        where it reaches an output, else a warning."""
        finding = leapp_defects.find_torch(name, (), {})
        view, written = self.name_of(value), self.name_of(base)
        builder.report("leapp-records-wrongly", line, [node.name], location=location, pending_reach=True,
                       name=f"'{view}'" if view else "A view", fix=finding.fix,
                       what=finding.message + (f" ('{written}' written after '{view}' was taken)" if view and written
                                               else ""),
                       severity="error" if self.profile == "leapp" else "warning")

    def _memory_of(self, owner: ndarray) -> SharedMemory | None:
        """The shared memory ``owner`` (an array that owns its memory as NumPy sees it) is part of, if any."""
        memory = self.shared.get(id(owner))
        return memory if memory is not None and memory.owners[id(owner)]() is owner else None

    def link(self, array: Any, tensor: Tensor, shares: bool | None = None) -> None:
        """``array`` (a traced array) and ``tensor`` were made one from the other at a crossing. When they share
        memory (``shares``: known from the crossing, ``torch.from_numpy`` and ``t.numpy()`` always do; None:
        looked at), a write through either is a write into the other (:meth:`bump`, :meth:`shared_write`), and a
        stale value takes the other's where it covers the same memory (:meth:`_shared_value`). Kept as it is until
        a write needs it (:meth:`_settle`): most cells cross without writing."""
        if shares is None:
            with _OWN_READS():
                start = array.__array_interface__["data"][0]
                if tensor.device.type != "cpu" or not start <= tensor.data_ptr() < start + max(array.nbytes, 1):
                    return
        # the owner now: the traced array may be gone by the first write (``torch.from_numpy(np.asarray(x))``: the
        # tensor keeps only the plain array under it), the memory and its owner are not
        array_ref, owner_ref = weakref.ref(array), weakref.ref(root(array))
        with _OWN_READS():
            address = tensor.untyped_storage().data_ptr()
        self.crossings.append((array_ref, owner_ref, weakref.ref(tensor), address))
        # ... and the tensors the crossed one shares its memory with without a crossing: the tensor it is a view of
        # (``x[0:1].numpy()``), the one it was detached from (``x.detach().numpy()``), and theirs. A temporary view
        # or detached tensor is gone by the first write; the tensor it came from is read after it.
        for source in self._sources(tensor):
            self.crossings.append((array_ref, owner_ref, weakref.ref(source), address))

    def detached_from(self, result: Tensor, source: Tensor) -> None:
        """``result`` is ``source.detach()`` (or ``source.data``): remembered with ``source`` and the tensors
        ``source`` shares its memory with, for :meth:`link` (weakly: ``source`` may be a temporary view that is
        gone before ``result`` crosses, ``p[1:].detach().numpy()``)."""
        chain = [source, *self._sources(source)]
        self.detached[id(result)] = (weakref.ref(result), [weakref.ref(t) for t in chain])

    def _sources(self, tensor: Tensor) -> list[Tensor]:
        """The tensors ``tensor`` shares its memory with that are not crossings: its view base (torch keeps the
        root base), or what it was detached from (:meth:`detached_from`), still alive."""
        with _OWN_READS():
            base = tensor._base
        if base is not None:
            return [base, *self._sources(base)] if id(base) in self.detached else [base]
        entry = self.detached.get(id(tensor))
        if entry is None or entry[0]() is not tensor:
            return []
        return [t for t in (ref() for ref in entry[1]) if t is not None]

    def _settle(self) -> None:
        """The crossings made since the last write, into ``shared`` and ``shared_storage``."""
        crossings = self.crossings[:]
        self.crossings.clear()
        with _OWN_READS():
            for array_ref, owner_ref, tensor_ref, address in crossings:
                array, owner, tensor = array_ref(), owner_ref(), tensor_ref()
                if owner is None:  # gone: nothing reads it any more
                    continue
                # the tensor may be gone (a temporary view of an inference tensor, which has no ``_base``): its
                # storage is not, and the owner's memory is part of it
                memory = self._memory_of(owner)
                known = self.shared_storage.get(address)
                if memory is None:
                    memory = known if known is not None else SharedMemory()
                elif known is not None and known is not memory:  # one block reached from two owners: one memory
                    memory.merge(known)
                    for key in known.owners:
                        self.shared[key] = memory
                    for key in known.storages:
                        self.shared_storage[key] = memory
                memory.add(owner, address, array, tensor)  # None: the traced array or the tensor is gone
                for *_, alias in self.input_storages.get(address, ()):
                    memory.tensors[id(alias)] = weakref.ref(alias)
                self.shared[id(owner)] = memory
                self.shared_storage[address] = memory

    def shared_write(self, tensor: Tensor, builder: NodeBuilder, node: Any) -> None:
        """``tensor`` was written in place, and ``node`` is its new value (it takes it next). Arrays sharing its
        memory, and the other tensors made on it, hold values the graph has not: those that cover exactly the same
        memory (start, shape, strides, dtype) take ``node`` now (they may be read after ``tensor`` is gone); the
        others are stale (``Session.graph_value`` bakes them, with a hazard)."""
        memory = self._tensor_written_through(tensor)
        if memory is None:
            return
        with _OWN_READS():
            for _, array in memory.alive(memory.arrays):
                if _covers(array, tensor):
                    array._lp = Provenance(builder, node, self.versions.get(id(root(array)), 0))
            for _, other in memory.alive(memory.tensors):
                if other is not tensor and getattr(other, "_lp", None) is not None \
                        and other.data_ptr() == tensor.data_ptr() and other.dtype == tensor.dtype \
                        and other.shape == tensor.shape and other.stride() == tensor.stride():
                    other._lp = Provenance(builder, node, tensor_version(other))

    def outside_write(self, tensor: Tensor) -> None:
        """``tensor`` was written in place while no node is open (recorded by none): a node input in its memory is
        written, and what shares the memory sees the write, as for a write inside a node (:meth:`shared_write`, with
        no node to hand on): a node output written so, then declared by the next node, is reported there."""
        if self.input_storages:
            self.tensor_written(tensor)
        self._tensor_written_through(tensor)

    def _tensor_written_through(self, tensor: Tensor) -> SharedMemory | None:
        """A write through ``tensor`` into the shared memory it is part of, if any (returned): the write reaches
        every owner and tensor there (:meth:`_written`)."""
        if self.crossings:
            self._settle()
        if not self.shared_storage:
            return None
        with _OWN_READS():
            memory = self.shared_storage.get(tensor.untyped_storage().data_ptr())
            if memory is not None:
                self._written(memory, None, tensor, tensor)
        return memory

    def _written(self, memory: SharedMemory, counted: int | None, written: Any, writer: Any) -> None:
        """A write into ``memory`` through ``writer`` (an array or a tensor): every owner's write count moves (but
        ``counted``'s, moved already), and every tensor's (so their views', which share them) but ``written``'s; a
        node input in that memory is written."""
        span = _layout(writer)  # where the bytes written lie, for the write logs (Session.writes)
        for key, _ in memory.alive(memory.owners):
            if key != counted:
                before = self.versions.get(key, 0)
                self.versions[key] = before + 1
                log_write(self.writes, key, before, before + 1, span)
                inputs = self.input_owners.get(key)
                if inputs is not None:
                    self.input_written(inputs, writer)
        if self.input_storages:
            for address in memory.storages:
                inputs = self.input_storages.get(address)
                if inputs is not None and (written is None or address != _storage_address(written)):
                    self.input_written(inputs, writer)  # (a torch write found its own storage's already)
        # an inference tensor (torch.from_numpy inside torch.inference_mode()) keeps no write counter: the tracer's
        # count of its storage moves, once per storage (its views share it; the written tensor's moved already)
        counted_storages = set()
        if written is not None and written.is_inference():
            counted_storages.add(_storage_address(written))
        for _, tensor in memory.alive(memory.tensors):
            if tensor is not written:
                if not tensor.is_inference():
                    before = tensor_version(tensor)
                    torch.autograd.graph.increment_version(tensor)
                    self.tensor_wrote(tensor, before, span)
                elif (address := _storage_address(tensor)) not in counted_storages:
                    counted_storages.add(address)
                    self.tensor_wrote(tensor, 0, span)

    def _shared_value(self, builder: NodeBuilder, value: Any, is_tensor: bool) -> Any:
        """The node of a current value on the other side of a crossing that covers exactly ``value``'s memory (the
        same start, shape, strides and dtype), for a stale ``value``; None when there is none. ``value`` takes that
        node and the current write count."""
        if is_tensor:
            memory = self.shared_storage.get(value.untyped_storage().data_ptr())
        else:
            memory = self._memory_of(root(value))
        if memory is None:
            return None
        for _, other in memory.alive(memory.arrays if is_tensor else memory.tensors):
            array, tensor = (other, value) if is_tensor else (value, other)
            prov = getattr(other, "_lp", None)
            if prov is None or prov.builder is not builder or prov._node is None or prov.lost is not None \
                    or prov.version != (self.versions.get(id(root(other)), 0) if is_tensor else tensor_version(other)):
                continue
            if not _covers(array, tensor):
                continue
            node = prov.node
            value._lp = Provenance(builder, node, tensor_version(value) if is_tensor
                                   else self.versions.get(id(root(value)), 0))
            return node
        return None

    # -------------------------------------------------------------- helpers
    def runs_last(self, line: int | None, helper: str | None) -> bool:
        """Whether nothing the cell runs after the current call can change a value: called after the cell (no cell
        line), or by the cell's own top level where every instruction left to run is one that changes no object
        (``_QUIET``: storing the call's result in a name, dropping it, returning). Read from the cell's bytecode
        after the frame's current instruction, so a second statement on the call's line (``...; y[:] = 0``), a
        loop's next iteration, a ``with`` block's exit, a ``finally`` all count as code that follows."""
        if line is None:
            return True
        if helper is not None:
            return False
        frame = sys._getframe(1)
        while frame is not None and frame.f_code is not self.code:
            frame = frame.f_back
        if frame is None:
            return False
        code = self.code.co_code
        for offset in range(frame.f_lasti + 2, len(code), 2):
            if code[offset] not in _QUIET:
                return False
        return True

    def line_text(self, line: int | None) -> str:
        if line is None or not 1 <= line <= len(self.lines):
            return ""
        return self.lines[line - 1]


    def eager(self) -> "_Suspended":
        """``with sess.eager():`` runs NumPy untraced (a plain object: this sits on every recorded call)."""
        return self._suspend

    def builder(self, name: str) -> NodeBuilder:
        if not isinstance(name, str) or not name:
            raise TraceError(f"node name must be a non-empty string, got {name!r}")
        existing = self.builders.get(name)
        if existing is not None:
            if existing.closed:
                raise TraceError(f"node '{name}' already received its outputs; declare inputs before "
                                 "output_tensors, or use a new node name")
            return existing
        builder = NodeBuilder(self, name)
        self.builders[name] = builder
        for line, location, kind, what, producer in self.taken_outside:
            builder.report("branch-between" if kind == "data-dependent-branch" else "extracted-between", line, [],
                           location=location, severity="warning", what=what, producer=producer)
        self.taken_outside.clear()
        return builder

    def bind_input(self, builder: NodeBuilder, value: Any, placeholder: fx.Node, kind: str) -> Any:
        """The traced value a cell computes with for a node input: a TracedArray view of the array, or an
        alias of the tensor (a new tensor object on the same memory: the caller's object is untouched)."""
        if kind == "torch":
            address = _storage_address(value)
            alias = self.wrap(builder, value.detach(), placeholder)
            self.input_storages.setdefault(address, []).append((*_span(value), builder, placeholder.name, "tensor",
                                                                alias))
            memory = self.shared_storage.get(address)
            if memory is not None:
                memory.tensors[id(alias)] = weakref.ref(alias)
            return alias
        owner = root(value)
        self.input_owners.setdefault(id(owner), []).append((*_span(value), builder, placeholder.name, "array", owner))
        traced = value.view(self.array_type)
        traced._lp = Provenance(builder, placeholder, self.versions.get(id(root(value)), 0) if self.versions else 0)
        return traced

    def tensor_written(self, tensor: Tensor) -> None:
        """``tensor`` was written in place: an ``input-written`` hazard where that is a torch node
        input's memory (a NumPy input's, reached across a crossing, is found by ``shared_write``)."""
        inputs = self.input_storages.get(_storage_address(tensor))
        if inputs is not None:
            self.input_written(inputs, tensor)

    def input_written(self, inputs: list[_InputMemory], writer: Any) -> None:
        """The cell wrote through ``writer`` (an array or a tensor) into memory that holds node ``inputs``: each
        input it overlaps is changed for the caller by the eager cell, not by the graph. Reported by the node being
        recorded (the input's own, or a later one that writes into it), at the line of the write. No graph node is
        marked: none is wrong (the graph follows the write, or reports what it cannot follow), the caller's value
        is; and a marked node is drawn as one LEAPP would bake."""
        low, high = _span(writer)
        for first, end, builder, name, kind, _ in inputs:
            if not (first < high and low < end):
                continue
            self.inputs_written.add((id(builder), name))
            reporter = builder if not builder.closed else self.open_builder()
            if reporter is None:
                continue
            line, location, _ = self.where()
            reporter.report("input-written", line, [], location=location, severity="warning", input=name, kind=kind,
                            copy="clone" if kind == "tensor" else "copy")

    def open_builder(self) -> NodeBuilder | None:
        """The node being recorded now (the last declared one still open), if any."""
        for builder in reversed(self.builders.values()):
            if not builder.closed:
                return builder
        return None

    def reopen(self, builder: NodeBuilder) -> NodeBuilder:
        """The node that records an op on values of ``builder``, a node that already received its outputs: the
        node open now (the closed node's values are baked there, each reported as ``other-node``: a later node
        must declare them with ``input_tensors``), or ``builder`` itself when no node is open (still closed: the
        caller then has :meth:`outside` mark the result)."""
        current = self.open_builder()
        return current if current is not None else builder

    def outside(self, builder: NodeBuilder, result: Any, name: str) -> Any:
        """``result`` of ``name``, computed from values of ``builder`` (a node that received its outputs) while no
        node is open: not recorded, and marked lost, so that a node declared later that uses it bakes it and says
        where it came from (``lost-used``). Arrays and tensors, and those in a list or tuple, are marked; a NumPy
        scalar or a Python number cannot be, and is remembered instead (as ``float()`` of a marked value is, by
        ``extracted``) for the next node declared to report: the cell's code after its last node (a metric it
        prints) gets exactly the eager types, and no hazard."""
        if isinstance(result, (list, tuple)):
            return rebuilt(result, [self.outside(builder, item, name) for item in result])
        if isinstance(result, (np.generic, bool, int, float, complex)):  # cannot be marked: remembered
            if isinstance(result, _TRUTHS) and branches.outcome(provenance.user_frame(2), bool(result)) is not None:
                return result  # assert np.isfinite(normed).all() between two nodes: a check no node depends on
            line, location, _ = self.where()
            what = f"{name}() = {_short(result)}"
            self.taken_outside.append((line, location, "value-extraction", what, builder.name))
            if isinstance(result, np.generic) and not isinstance(result, np.bool_):
                self.outside_scalars[id(result)] = (result, line, what, builder.name)
            return result
        if not isinstance(result, (ndarray, Tensor)):
            return result
        line = self.where()[0]
        reason = Outside(f"computed by {name} at line {line}, outside any node, from values of node "
                         f"'{builder.name}'")
        if isinstance(result, ndarray):
            result = result.view(self.array_type)
        result._lp = Provenance.lost_in(builder, reason, line)
        return result

    def name_of(self, obj: Any) -> str | None:
        """The cell's variable name for ``obj`` (a module, say), if it has one."""
        for key, value in self.namespace.items():
            if value is obj and not key.startswith("_"):
                return key
        return None

    def watch(self, result: Any) -> Any:
        """``result`` (an array created inside the cell) as a watch array."""
        return self.array_type.watch(result)

    # -------------------------------------------------------------- values into the graph
    def graph_value(self, builder: NodeBuilder, value: Any, line: int | None, *, as_tensor: bool = False,
                    helper: str | None = None) -> Any:
        """A graph value for ``value`` as used inside ``builder``'s node: its node when traced there;
        a baked constant when it came from traced data some other way; a genuine constant otherwise."""
        prov = getattr(value, "_lp", None) if isinstance(value, _VALUE_TYPES) else None
        if prov is not None:
            if prov.builder is builder and prov._node is not None:
                # the common cases, kept short: an array traced in this node with no writes yet, a tensor traced in
                # this node whose write counter has not moved since (what _traced_value checks)
                kind = type(value)
                if kind is self.array_type and not self.versions \
                        or kind is Tensor and prov.version == tensor_version(value):
                    return prov.node
            return self._traced_value(builder, value, prov, line, helper)
        if isinstance(value, Tensor):
            return builder.const(value, baked=False, origin=None, line=line, helper=helper)
        if isinstance(value, ndarray):
            origin = self.taint_of(value) if self.tainted else None
            if origin is not None:
                node = builder.const(value, baked=True, origin=origin, line=line, helper=helper)
                builder.report("tainted-plain", line, [node.name], pending_reach=True, origin=origin,
                               const=node.name)
                return node
            return builder.const(value, baked=False, origin=None, line=line, helper=helper)
        if isinstance(value, np.generic):
            return builder.const(np.asarray(value), baked=False, origin=None, line=line, helper=helper)
        if as_tensor and isinstance(value, (bool, int, float, complex, list, tuple)):
            return builder.const(np.asarray(value), baked=False, origin=None, line=line, helper=helper)
        return value

    def _traced_value(self, builder: NodeBuilder, value: Any, prov: Provenance, line: int | None,
                      helper: str | None) -> Any:
        is_tensor = isinstance(value, Tensor)
        eager = value if is_tensor else ndarray.view(value, ndarray)
        if prov.traced_in(builder):
            if is_tensor:
                current = tensor_version(value)
            else:
                current = self.versions.get(id(root(value)), 0) if self.versions else 0
            if prov.version == current:
                return prov.node
            if self._untouched(value, prov.version, current, is_tensor):  # each write since missed its bytes
                value._lp = Provenance(builder, prov._node, current)
                return prov.node
            if self.write_backs and not is_tensor:
                node = self._written_back(builder, value, prov, current)
                if node is not None:
                    return node
            if self.last_written and not is_tensor and _basic_view(prov.node):
                node = self._reindexed(builder, value, current, line, helper)
                if node is not None:
                    return node
            if is_tensor:
                node = self._reindexed_tensor(builder, value, current, line, helper)
                if node is not None:
                    return node
            if self.crossings:
                self._settle()
            if self.shared:
                with _OWN_READS():  # the tensors' addresses and strides, not recorded
                    node = self._shared_value(builder, value, is_tensor)
                if node is not None:
                    return node
            node = builder.const(eager, baked=True, origin="a view taken before a write into its memory",
                                 line=line, source_nodes=[prov.node.name], helper=helper)
            builder.report("stale-view", line, [node.name], pending_reach=True, const=node.name,
                           target=self.name_of(value) or "this value")
            return node
        if prov.builder is not None and prov.builder.session is not self:
            # traced by an earlier trace and kept since (``self.mean = 0.9 * self.mean + ...`` on an object that
            # outlives the cell): data now, as a plain array is
            return builder.const(eager, baked=False, origin=None, line=line, helper=helper)
        if prov.builder is not None and prov.node is not None:
            origin = f"value traced in node '{prov.builder.name}', used in node '{builder.name}' without " \
                     "input_tensors"
            node = builder.const(eager, baked=True, origin=origin, line=line, helper=helper)
            builder.report("other-node", line, [node.name], pending_reach=True, producer=prov.builder.name,
                           const=node.name)
            return node
        if prov.lost is not None:
            lost_line = prov.line if prov.line is not None else line
            node = builder.const(eager, baked=True, origin=prov.lost, line=lost_line, helper=helper)
            if type(prov.lost) is Outside:
                builder.report("outside-used", lost_line, [node.name], pending_reach=True, origin=prov.lost,
                               producer=prov.builder.name, const=node.name,
                               at=f" at line {line}" if line != lost_line else "")
            else:
                builder.report("lost-used", lost_line, [node.name], pending_reach=True, origin=prov.lost,
                               const=node.name, at=f" (at line {line})" if line != lost_line else "")
            return node
        if prov.fingerprint is not None and not is_tensor:
            if fingerprint(eager) != prov.fingerprint:
                origin = "array written by code the tracer cannot see (compiled code?)"
                line = prov.line if prov.line is not None else line
                node = builder.const(eager, baked=True, origin=origin, line=line, helper=helper)
                builder.report("hidden-write", line, [node.name], pending_reach=True, const=node.name)
                return node
            # an array the cell made that holds no traced data: one constant per array and contents (a write into
            # it gives it a new fingerprint, so a new constant), as for a plain array
            return builder.const(eager, baked=False, origin=None, line=line, helper=helper, owner=value,
                                 contents=prov.fingerprint)
        return builder.const(eager, baked=False, origin=None, line=line, helper=helper)

    # -------------------------------------------------------------- recording calls
    def record(self, builder: NodeBuilder, row: ops.Row | None, name: str, params: dict[str, Any],
               eager_params: dict[str, Any], result: Any, extra: dict[str, Any] | None = None,
               alias: Any = None) -> Any:
        """Record NumPy's call ``name`` (``row``: its lookup row, None when the lookup has none) with ``params``
        (the traced arguments; ``eager_params`` NumPy's) and its eager ``result``; returns the traced result.
        ``alias``: a second cache key for the call (the ufunc or function hook's own, read from its operands), given
        the call's template too."""
        if builder.closed:
            builder = self.reopen(builder)
            if builder.closed:
                return self.outside(builder, plain(result, depth=0), name)
        site = self.where()
        line, location, helper = site
        recorded = row is not None and (self.profile == "full" or row.leapp)
        scalar_result = recorded and extra is not None and "call" in extra and isinstance(result, np.generic)
        if scalar_result and self.profile == "leapp":
            self._check_numpy_scalars(builder, params, line, location, name)
            traced = list(iter_traced(params.values(), builder))
            sources = [v._lp.node.name for v in traced]
            node = builder.const(np.asarray(result), baked=True, origin=f"{name} at line {line}: a NumPy "
                                 "scalar, no longer traced", line=line, source_nodes=sources, helper=helper)
            # Scalars that are already baked constants (an element from iteration, say) broke the chain
            # where they were made; that hazard covers everything computed from them.
            if not all(facts(v._lp.node).const == "baked" for v in traced):
                builder.report("scalar-result-baked", line, [node.name], name=name, location=location,
                               type=type(result).__name__, const=node.name, pending_reach=True)
            return self.wrap(builder, result, node)
        key = replay.signature(self, builder, row, name, params, extra, result) if recorded else None
        template = replay.TEMPLATES.get(key) if key is not None else None
        if template is None and recorded and row.build in replay.NUMBER_SLOTS:  # as the function hook does
            template = replay.for_any_float(key, params, row.build)
        if template is replay.NO_TEMPLATE:
            template = key = None
        elif template is not None and template.aliases is not None and not replay.fits(template, params, builder):
            template = None  # made from operands that share a node, unlike these: built, and a template made of it
        if template is not None:
            # a described signature holds no NumPy scalar, so nothing to report for one
            return self.replayed(builder, template, row, name, params, eager_params, result, scalar_result, site)
        scalar_operand = self._check_numpy_scalars(builder, params, line, location, name)
        reason = ""
        nodes: Any = None
        start, reports = len(builder.fresh), builder.n_reports
        if recorded:
            if extra is None:
                extra = {}  # the builder's own notes (any_number), after the key was made
            ctx = ops.BuildContext(params, eager_params, result, extra, session=self, builder=builder,
                                   line=line, location=location, helper=helper, name=name)
            try:
                nodes = row.build(ctx)
            except ops.Unsupported as exc:
                recorded = False
                reason = f" with these arguments ({exc})"
        if not recorded:
            if key is not None:
                replay.store(key, None)
            return self.untraced(builder, row, name, params, result, line, location, helper, reason)
        finding = None
        if row.leapp:
            # A call LEAPP's own lookup records wrongly (tracing/leapp_defects.py: one dict lookup by name,
            # predicates only for names with defects): our graph is right, LEAPP's export would not be.
            try:
                finding = leapp_defects.find(name, eager_params, result)
            except Exception as exc:  # noqa: BLE001 - a catalogue defect must not stop the user's trace
                finding = None
                key = None
                builder.report("leapp-check-failed", line, [], name=name, location=location, severity="warning",
                               error=f"{type(exc).__name__}: {exc}")
        built_reports = builder.n_reports
        self._after_build(builder, row, name, nodes, result, scalar_result, line, location, finding)
        traced = self.wrap(builder, result, nodes)
        if scalar_operand is not None:  # the call's nodes: the scalar's constant and the op it is an operand of
            hz.merge_names(scalar_operand, [n.name for n in builder.fresh[start:]])
        casts = replay.settle(self, builder, start, params.values(), traced)
        if key is not None:
            template = None
            if casts is not None and reports == built_reports and builder.n_reports == built_reports + (
                    finding is not None) + (self.profile == "full" and not row.leapp) + (
                    scalar_result and isinstance(nodes, fx.Node)):
                template = replay.capture(builder, params, nodes, casts,
                                          replay.NO_TEMPLATE if name in leapp_defects.DYNAMIC or row.leapp and
                                          leapp_defects.dtype_per_call(name, eager_params, result) else finding)
            replay.store(key, template)
            number = extra.get("any_number") if extra is not None and template is not None else None
            if alias is not None:
                replay.store(alias, template)
            if type(number) is tuple:  # a function's numbers (np.clip's bounds), read by the fallback above
                replay.store_for_any_float(key, template, number, params, row.build)
            elif number is not None and alias is not None and alias[0] is replay.UFUNC:
                # a ufunc's: the builder passed a Python number through and decided nothing on it
                generic = replay.with_number(template, number, params[number])
                if generic is not None:
                    replay.store(replay.any_number(alias), generic)
        return traced

    def replayed(self, builder: NodeBuilder, template: replay.Template, row: ops.Row, name: str,
                 params: dict[str, Any], eager_params: dict[str, Any], result: Any, scalar_result: bool,
                 site: tuple[int | None, str | None, str | None]) -> Any:
        """A call whose signature was recorded before (the hooks take Template.direct when it reports nothing): its
        nodes again (pending) for this call's operands and ``site`` (``where()``: line, location, helper;
        tracing/replay.py), with the hazards the call's row and LEAPP's lookup give it."""
        nodes, marked = (template.fn or replay.compiled(template))(builder, params, site)
        finding = template.finding
        if finding is replay.NO_TEMPLATE:
            finding = leapp_defects.find(name, eager_params, result)
        if finding is not None or scalar_result or (self.profile == "full" and not row.leapp):
            self._after_build(builder, row, name, replay.built(builder, marked), result, scalar_result, site[0],
                              site[1], finding)
        return self.wrap(builder, result, nodes)

    def _after_build(self, builder: NodeBuilder, row: ops.Row, name: str, nodes: Any, result: Any,
                     scalar_result: bool, line: int | None, location: str | None, finding: Any) -> None:
        """The hazards of a recorded call: a NumPy scalar result kept traced, what LEAPP records wrongly, and
        (in ``full``) that LEAPP does not record the call at all."""
        if scalar_result and isinstance(nodes, fx.Node):
            builder.report("scalar-result-kept", line, [nodes.name], name=name, location=location,
                           type=type(result).__name__, pending_reach=True)
        if finding is not None:
            last = nodes[-1] if isinstance(nodes, list) else nodes
            hazard = builder.report("leapp-records-wrongly", line, [last.name] if isinstance(last, fx.Node) else [],
                                    name=name, location=location, pending_reach=True,
                                    severity="error" if self.profile == "leapp" else "warning", fix=finding.fix,
                                    what=finding.message)
            have = _LEAPP_DTYPE.search(finding.message) if finding.defect.cause == "torch-dtype" else None
            if have is not None and isinstance(last, fx.Node) and torch_dtype(have.group(1)) is not None:
                builder.cast_back.setdefault((hazard.kind, line), []).append((last.name, torch_dtype(have.group(1))))
        if self.profile == "full" and not row.leapp:
            last = nodes[-1] if isinstance(nodes, list) else nodes
            builder.report("leapp-does-not-record", line, [last.name] if isinstance(last, fx.Node) else [],
                           name=name, location=location, severity="warning")

    def wrap(self, builder: NodeBuilder, result: Any, nodes: Any) -> Any:
        """The traced value of ``result`` (NumPy's or torch's eager result), bound to ``nodes``; lists and tuples
        of results pair up with lists of nodes."""
        if type(nodes) is Pending and type(result) is ndarray:
            # a replayed call's array (the hot path): its node will hold the result's facts when built (the
            # call's signature fixes them). In C where the extension is built (the same steps)
            if C_WRAP is not None:
                return C_WRAP(builder, nodes, result)
            traced = result.view(self.array_type)
            traced._lp = prov = _new_provenance(Provenance)  # Provenance(builder, nodes, version), spelled out
            prov.builder, prov._node = builder, nodes
            prov.version = self.versions.get(id(root(result)), 0) if self.versions else 0
            prov.lost = prov.line = prov.fingerprint = None
            prov.plain = result
            return traced
        if isinstance(nodes, list):
            return rebuilt(result, (self.wrap(builder, r, n) for r, n in zip(result, nodes, strict=False)))
        if isinstance(result, Tensor):
            if self.on_first_tensor is not None:
                self.on_first_tensor()
                self.on_first_tensor = None
            result._lp = Provenance(builder, nodes, tensor_version(result))
            if isinstance(nodes, fx.Node):
                _set_value_facts(nodes, tuple(result.shape), dtype_name(result.dtype), "torch", False)
            return result
        scalar = False
        if isinstance(result, ndarray):
            array = ndarray.view(result, ndarray) if type(result) is not ndarray else result
        elif isinstance(result, (np.generic, bool, int, float, complex)):
            array, scalar = np.asarray(result), True
        else:
            return result
        traced = array.view(self.array_type)
        if scalar:
            traced._scalar = True  # a NumPy scalar held as a 0-d array: x += y rebinds x (array._in_place)
        traced._lp = prov = Provenance(builder, nodes, self.versions.get(id(root(array)), 0) if self.versions else 0)
        prov.plain = array
        if isinstance(nodes, fx.Node):
            _set_value_facts(nodes, array.shape, dtype_name(array.dtype), "numpy", False)
        return traced

    def untraced(self, builder: NodeBuilder, row: ops.Row | None, name: str, params: dict[str, Any],
                 result: Any, line: int | None, location: str | None, helper: str | None, reason: str = "") -> Any:
        sources = [v._lp.node.name for v in iter_traced(params.values(), builder)]
        out = "argument out=" in reason  # neither lookup records a write through out=: assigning the result does
        in_full = row is not None and not out
        fix = None
        if out:
            target = self.name_of(params.get("out"))
            call = name if name.startswith("np.") else f"x.{name.split('.')[-1]}"
            assign = f"assign its result: {target} = {call}(...)" if target else \
                "assign its result where out= pointed (v[...] = ... for a view v of another array)"
            fix = f"call {name} without out= and {assign}; or {hz.SPLIT_FIX.format(line=line)}"
        lookup = "LEAPP 0.7.2's lookup" if self.profile == "leapp" else "the lookup"
        inner = hz.LEAPP_LOGS.get(name) if not reason else None  # np.full(2, n): LEAPP sees NumPy's np.copyto
        why = f"{name} is not in {lookup}{reason or (inner[1] if inner else '')}"
        if self.profile == "leapp" and not reason and name.startswith(("np.", "ndarray.")):
            # the function's own name, as LEAPP takes it from the function: ``np.asarray([...])`` logs ``asarray``
            logged = inner[0] if inner else name.split('(')[0].split('.')[-1]
            why += f" (LEAPP logs: \"No torch equivalent for numpy function {logged}. Operation will not be traced.\")"
        where = f" (called from {location})" if location else ""
        if isinstance(result, (tuple, list)) and all(isinstance(r, (ndarray, np.generic)) for r in result):
            parts = []
            wrapped = []
            for item in result:
                node = builder.const(np.asarray(item), baked=True, origin=f"{name} at line {line}", line=line,
                                     source_nodes=sources, helper=helper)
                parts.append(node.name)
                wrapped.append(self.wrap(builder, item, node))
            builder.report("not-in-lookup-many", line, parts, name=name, location=location, pending_reach=True,
                           recorded_by_full=in_full and self.profile == "leapp", why=why, where=where,
                           const=", ".join(parts))
            return rebuilt(result, wrapped)
        if isinstance(result, (ndarray, np.generic)):
            array = np.asarray(plain(result, depth=0))
            if array.dtype.kind not in "biufc":  # np.frompyfunc's or np.vectorize's objects, strings: no constant
                builder.report("python-objects", line, sources, name=name, location=location, why=why, where=where,
                               dtype=array.dtype.name)
                return plain(result, depth=0)
            node = builder.const(array, baked=True, origin=f"{name} at line {line}", line=line,
                                 source_nodes=sources, helper=helper)
            builder.report("not-in-lookup", line, [node.name], name=name, location=location, pending_reach=True,
                           recorded_by_full=in_full and self.profile == "leapp", why=why, where=where,
                           const=node.name, fix=fix)
            return self.wrap(builder, result, node)
        if result is None:
            for value in iter_traced(params.values()):
                modified_in_place(value, name, line=line, report=False)
            builder.report("not-in-lookup-in-place", line, sources, name=name, location=location, why=why,
                           where=where)
            return result
        if type(result) in _TRUTHS and _decided(builder, result, line, location, f"{name}(...) = {result}") \
                or _logged(builder, line, location, f"{name}(...) = {_short(result)}", sources):
            return result  # np.allclose(...) in an assert, np.array2string(x) in a print: not frozen in the graph
        builder.report("python-value", line, sources, name=name, location=location,
                       recorded_by_full=in_full and self.profile == "leapp", why=why, where=where,
                       value=_short(result))
        return result

    def scalar_used(self, builder: NodeBuilder, value: Any, line: int | None) -> None:
        """``value``, a NumPy scalar operand of a call node ``builder`` records, is a literal there: an error when it
        was computed between two nodes from the first one's values (``outside``)."""
        found = self.outside_scalars.get(id(value))
        if found is None or found[0] is not value:
            return
        _, step_line, what, producer = found
        # merged into the warning the node gave that line when it was declared (``builder``): an error now
        builder.report("outside-scalar-used", step_line, [], severity="error", what=what, producer=producer,
                       at=f" at line {line}" if line != step_line else "")

    def _check_numpy_scalars(self, builder: NodeBuilder, params: dict[str, Any], line: int | None,
                             location: str | None, name: str) -> Hazard | None:
        if self.outside_scalars:
            for value in params.values():
                if isinstance(value, np.generic):
                    self.scalar_used(builder, value, line)
        for value in params.values():
            if isinstance(value, np.generic) and not isinstance(value, np.bool_):
                return builder.report("numpy-scalar-operand", line, [], location=location,
                                      scalar=f"{type(value).__name__}({value.item()!r})", call=name,
                                      recorded=". Recorded here with NumPy's dtype." if self.profile == "full"
                                      else ".")
        return None

    def written_into_plain(self, builder: NodeBuilder, target: Any, name: str, item: bool = False) -> None:
        """A plain ndarray received traced data through ``out=`` of the call ``name``, or, with ``item``, by item
        assignment to ``name`` (``BUF[:3] = h``: tracing/stores.py): remember it, bake it where used."""
        line, location, _ = self.where()
        origin = f"written by {name}[...] = ... at line {line}" if item else \
            f"written by {name}(..., out=...) at line {line}"
        owner = root(target)
        held = self.tainted.get(id(owner))
        if held is None or held[0]() is not owner:
            held = self.tainted[id(owner)] = (weakref.ref(owner), [])
        written = (_layout(target), origin)
        if written not in held[1]:  # (a loop writing the same bytes at one line: BUF[:] = h every step)
            held[1].append(written)
        builder.report("item-into-plain" if item else "out-into-plain", line, [], name=name, location=location)

    def taint_of(self, value: ndarray) -> str | None:
        """How a plain array received traced data (``written_into_plain``'s origin), or None when it did not: a write
        reached some of its bytes (into the array itself, its base, or another view of the same memory). Ask only
        when ``tainted`` is not empty."""
        owner = root(value)
        held = self.tainted.get(id(owner))
        if held is None or held[0]() is not owner:
            return None
        mine = _layout(value)
        if mine[0] == mine[1]:  # no bytes: nothing written
            return None
        bytes_of = _memory_once(value)
        for written, origin in held[1]:
            if not _apart(mine, written, bytes_of):
                return origin
        return None

    # -------------------------------------------------------------- finishing
    def finish(self) -> list[Node]:
        open_nodes = [b.name for b in self.builders.values() if not b.closed]
        if open_nodes:
            raise TraceError(f"node(s) {', '.join(repr(n) for n in open_nodes)} received inputs but no "
                             "annotate.output_tensors(...) call")
        return [builder.finish() for builder in self.builders.values()]


# instructions that change no object: what may follow a call for nothing after it to change the call's values
_QUIET = frozenset(dis.opmap[name] for name in (
    "CACHE", "NOP", "EXTENDED_ARG", "POP_TOP", "STORE_NAME", "STORE_GLOBAL", "STORE_FAST", "LOAD_CONST",
    "RETURN_VALUE", "RETURN_CONST") if name in dis.opmap)


def elsewhere(values: Any, result: Any, name: str) -> Any:
    """An op on traced data outside the recording thread while a trace runs (a thread the cell started): it is
    not recorded, so its result is marked lost (baked, with a hazard, wherever the cell uses it)."""
    sess = ACTIVE
    if sess is None:
        return result
    builder = builder_of(values)
    if builder is None or builder.closed or builder.session is not sess:
        return result
    line, location, _ = cell_site(sess.filename, 2)
    reason = f"computed by {name} in another thread at line {line}"
    builder.report("other-thread", line, [], name=name, location=location)
    if isinstance(result, ndarray):
        lost = result.view(sess.array_type)
        lost._lp = Provenance.lost_in(builder, reason, line)
        return lost
    return result


# a node input's memory, as Session.input_owners / input_storages hold it
_InputMemory = tuple[int, int, NodeBuilder, str, str, Any]


def _storage_address(tensor: Tensor) -> int:
    with _OWN_READS():  # the tracer's own read: not a call of the cell's to record
        return tensor.untyped_storage().data_ptr()


# Writes logged per owner or tensor base (Session.writes), and writes through views kept per owner
# (Session.write_backs): a loop writing each row of a batch through a view (``for r in z: r -= r.mean()``) is followed
# up to this many rows. A log is read from the first write after a count on (``bisect_right`` on the counts after
# each write), so its length costs nothing per read.
_WRITES_KEPT = 1024
_AFTER = operator.itemgetter(1)


def log_write(logs: dict[int, list[Any]] | None, key: Any, before: int, after: int, span: Layout | None) -> None:
    """Append a write to the log of ``key`` in ``logs`` (or to the list ``key`` when ``logs`` is None), keeping the
    last _WRITES_KEPT."""
    if logs is None:
        log = key
    else:
        log = logs.get(key)
        if log is None:
            log = logs[key] = []
    log.append((before, after, span))
    if len(log) > _WRITES_KEPT:
        del log[0]


# Where an array's or a tensor's elements lie: (first byte, end, the first element's address, shape, strides in
# bytes, item size); first == end when it holds none
Layout = tuple[int, int, int, tuple[int, ...], tuple[int, ...], int]
_MAX_WORK = 10_000  # np.shares_memory's bound for two strided layouts; past it they count as touching


def _layout(value: Any) -> Layout:
    """Where ``value`` (an array or a tensor) lies in memory (one read of NumPy's ``__array_interface__``, ~2 us)."""
    if isinstance(value, ndarray):
        value = ndarray.view(value, ndarray)
        address, shape, itemsize = value.__array_interface__["data"][0], value.shape, value.itemsize
        strides = value.strides
    else:
        with _OWN_READS():
            address, shape, itemsize = value.data_ptr(), tuple(value.shape), value.element_size()
            strides = tuple(stride * itemsize for stride in value.stride())
    if 0 in shape:
        return address, address, address, shape, strides, itemsize
    low = high = 0
    for size, stride in zip(shape, strides, strict=True):
        if stride < 0:
            low += (size - 1) * stride
        else:
            high += (size - 1) * stride
    return address + low, address + high + itemsize, address, shape, strides, itemsize


def _span(value: Any) -> tuple[int, int]:
    """The bytes an array or a tensor spans in memory: (first, end); equal when it spans none."""
    first, end = _layout(value)[:2]
    return (0, 0) if first == end else (first, end)


def _basic_view(node: Any) -> bool:
    """Whether a graph value is a NumPy basic-indexing view of its source (``getitem`` with ``view`` facts)."""
    return isinstance(node, fx.Node) and node.op == "call_function" and node.target is operator.getitem \
        and facts(node).view


def _fitting_keys(eager: ndarray, keys: list[Any], layout: Layout) -> list[Any] | None:
    """The keys, among the last ones of ``keys`` (applied one after another), that index from ``eager`` the very
    elements of ``layout``; None when none do."""
    for start in range(len(keys)):
        region = eager
        try:
            for key in keys[start:]:
                region = region[key]
        except (IndexError, TypeError, ValueError):
            continue
        if isinstance(region, ndarray) and _same_elements(_layout(region), layout):
            return keys[start:]
    return None


def _nested_setitem(builder: NodeBuilder, node: fx.Node, eager: ndarray, keys: list[Any], new: Any,
                    line: int | None, location: str | None, helper: str | None) -> fx.Node:
    """``node`` (``eager``'s value) with ``node[k0][k1]... = new`` written, as nodes:
    ``setitem(node, k0, setitem(node[k0], k1, ...))``."""
    def emit(target: Any, args: tuple[Any, ...], value: ndarray) -> fx.Node:
        made = builder.emit("call_function", target, args, line=line, numpy=leapp_defects.NUMPY_VIEW_WRITE,
                            location=location, helper=helper)
        update(made, shape=value.shape, dtype=dtype_name(value.dtype))
        return made

    if len(keys) > 1:
        part = eager[keys[0]]
        new = _nested_setitem(builder, emit(operator.getitem, (node, keys[0]), part), part, keys[1:], new, line,
                              location, helper)
    return emit(torch_impl.setitem, (node, keys[0], new), eager)


def _same_elements(a: Layout, b: Layout) -> bool:
    """Whether two layouts name the same elements in the same order (a size-1 axis's stride is no matter)."""
    return a[2] == b[2] and a[3] == b[3] and a[5] == b[5] \
        and all(size == 1 or x == y for size, x, y in zip(a[3], a[4], b[4], strict=True))


def _apart(a: Layout, b: Layout, memory: Callable[[], tuple[ndarray, int] | None]) -> bool:
    """Whether two layouts share no byte: their spans apart, or, strided (a column of a matrix and the other
    columns), no element of one among the other's, as ``np.shares_memory`` solves it on byte views of the memory
    both lie in (``memory()``: that memory as a uint8 array and its first address; None when it cannot be had: then
    they count as touching, as they do past _MAX_WORK)."""
    if a[1] <= b[0] or b[1] <= a[0]:
        return True
    if all(end - first == math.prod(shape) * itemsize for first, end, _, shape, _, itemsize in (a, b)):
        return False  # both dense: spans that meet share bytes
    found = memory()
    if found is None:
        return False
    flat, start = found
    if min(a[0], b[0]) < start or max(a[1], b[1]) > start + flat.size:
        return False
    try:
        views = [np.lib.stride_tricks.as_strided(flat[address - start:], shape=(*shape, itemsize),
                                                 strides=(*strides, 1), writeable=False)
                 for _, _, address, shape, strides, itemsize in (a, b)]
        return not np.shares_memory(views[0], views[1], max_work=_MAX_WORK)
    except (np.exceptions.TooHardError, ValueError):
        return False


def _memory_once(value: Any) -> Callable[[], tuple[ndarray, int] | None]:
    """``_memory_bytes(value)`` as ``_apart`` asks for it: read on the first call, kept for the next."""
    memory: list[Any] = []

    def bytes_of() -> tuple[ndarray, int] | None:
        if not memory:
            memory.append(_memory_bytes(value))
        return memory[0]

    return bytes_of


def _memory_bytes(value: Any) -> tuple[ndarray, int] | None:
    """The memory ``value`` lies in as a uint8 array, with its first address: a NumPy owner's (a contiguous one),
    or a tensor's storage; None otherwise."""
    if isinstance(value, ndarray):
        owner = ndarray.view(root(value), ndarray)
        if not owner.flags.c_contiguous:  # an F-contiguous owner (``a.T * 2``) is a C-contiguous one transposed
            owner = owner.T
        try:
            flat = np.frombuffer(owner, np.uint8)
        except (BufferError, ValueError, TypeError):  # neither
            return None
    else:
        with _OWN_READS():
            flat = torch.empty(0, dtype=torch.uint8).set_(value.untyped_storage()).numpy()
    return flat, flat.__array_interface__["data"][0]


# What makes a result as long as a count of the data: a mask's True elements, the nonzero entries, the distinct values
_SELECTING = frozenset({"nonzero", "argwhere", "masked_select", "unique", "unique_consecutive", "flatnonzero"})
# ... and NumPy's, as a baked constant's origin names them (``np.unique at line 2``: a call neither lookup records)
# (array.py's _SELECTING_FUNCTIONS are NumPy's functions of these names: what sets Session.selected)
SELECTING_NUMPY = ("unique", "unique_values", "unique_counts", "unique_inverse", "unique_all", "flatnonzero", "nonzero",
                   "argwhere", "extract", "compress", "intersect1d", "union1d", "setdiff1d", "setxor1d", "trim_zeros")
_SELECTING_ORIGINS = tuple(f"np.{name} " for name in SELECTING_NUMPY)


_SHAPE_ONLY = frozenset({"ones_like", "zeros_like", "full_like", "empty_like"})  # values of the input's shape alone


def _reads_values(node: Any, budget: list[int]) -> bool:
    """Whether ``node``'s value may depend on the values of the node's inputs: a path up the graph to an input or a
    baked constant that does not pass through a call that reads only its argument's shape (``np.ones_like(x[0],
    dtype=bool)`` with constants written into it is a constant mask). True past ``budget`` nodes."""
    stack = [node]
    seen: set[int] = set()
    while stack:
        current = stack.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        budget[0] -= 1
        if budget[0] < 0 or current.op == "placeholder" or current.op == "call_module":
            return True
        if current.op == "get_attr":
            if facts(current).const == "baked":
                return True
            continue
        target = current.target
        if (target if isinstance(target, str) else getattr(target, "__name__", "")) in _SHAPE_ONLY:
            continue
        stack.extend(current.all_input_nodes)
    return False


def _selection(node: Any, budget: list[int]) -> tuple[fx.Node, int | None] | None:
    """(the node that selects by the data, the axis of ``node``'s value whose length is that count) when ``node``'s
    value is such a selection (``x[x > 2]``, ``np.nonzero(m)[0]``, ``torch.masked_select``), or is made from one
    element-wise (``v * 2``) or by basic indexing that keeps the axis (``v[:, 0]``); None otherwise, or past
    ``budget`` nodes (a walk up the graph from a size read in user code: never on the recording path)."""
    if not isinstance(node, fx.Node) or budget[0] <= 0:
        return None
    if node.op == "get_attr":  # baked from traced data by a selecting call (y = x * len(np.unique(x)))
        record = facts(node)
        return (node, 0) if record.const == "baked" and (record.origin or "").startswith(_SELECTING_ORIGINS) else None
    if node.op not in ("call_function", "call_method"):
        return None
    budget[0] -= 1
    target = node.target
    name = target if isinstance(target, str) else getattr(target, "__name__", "")
    if name in _SELECTING or name == "where" and len(node.args) == 1 and not node.kwargs:
        return node, 0
    if target is operator.getitem:
        source, key = node.args[0], node.args[1]
        parts = key if type(key) is tuple else (key,)
        axis = 0
        for part in parts:  # a traced mask selects along the axis it stands at
            if isinstance(part, fx.Node) and facts(part).dtype == "bool" and (
                    part.op != "get_attr" or facts(part).const == "baked") \
                    and _reads_values(part, [48]):  # a mask of the data, not a constant's nor one of its shape
                return node, axis
            if part is Ellipsis:
                return None
            if part is not None:
                axis += 1
        found = _selection(source, budget)
        if found is None or found[1] is None:
            return None
        chosen, selected = found
        if facts(source).shape is None:  # an item of a tuple of selections (np.nonzero(m)[0])
            return (chosen, 0) if type(key) is int else None
        if any(isinstance(part, fx.Node) or type(part) not in (slice, int, type(None)) for part in parts):
            return None
        into, out = 0, 0  # where the selected axis of the source lies in the result of a basic key
        for part in parts:
            if part is None:
                out += 1
                continue
            if into == selected:
                return (chosen, out) if type(part) is slice else None
            into += 1
            out += 1
        return chosen, out + selected - into
    shape = facts(node).shape
    if shape is None:
        return None
    for arg in node.args:  # an op of one of its inputs' shape (element-wise): that input's selected axis
        if isinstance(arg, fx.Node) and facts(arg).shape == shape:
            found = _selection(arg, budget)
            if found is not None:
                return found
    return None


class SelectionShape(tuple):
    """A selection's shape as the cell reads it (``v.shape`` of ``v = x[x > 2]``): reading the length of its selected
    axis (``v.shape[0]``, ``n, d = v.shape``) is a ``selection-size`` read; the other axes are static."""

    def __getitem__(self, index: Any) -> Any:
        item = tuple.__getitem__(self, index)
        if self.axis in (range(len(self))[index] if type(index) is slice else (index % len(self),)):
            size_read(self.value, f".shape[{index if type(index) is not slice else '...'}] = {item}", None, 3)
        return item

    def __iter__(self) -> Any:  # unpacking reads every axis
        size_read(self.value, f".shape = {tuple.__repr__(self)}", None, 3)
        return tuple.__iter__(self)

    def __repr__(self) -> str:
        return tuple.__repr__(self)


def selection_shape(value: Any, shape: tuple[int, ...]) -> tuple[int, ...]:
    """``value.shape`` for the cell: a ``SelectionShape`` when ``value`` is a selection by the data (read in user
    code), else the shape itself."""
    prov = value._lp
    if prov.builder is None or prov._node is None or prov.lost is not None or not shape \
            or not prov.builder.session.selected or not provenance.read_by_user(3):
        return shape
    found = _selection(prov.node, [24])
    if found is None or found[1] is None or found[1] >= len(shape):
        return shape
    held = SelectionShape(shape)
    held.value, held.axis = value, found[1]
    return held


def size_read(value: Any, what: str, axis: int | None = None, depth: int = 3) -> None:
    """The cell read the size of ``value`` as a Python number (``what``: ``len()``, ``.size``, ``.shape[0]``, a loop
    over it); ``axis``: the axis whose length was read (None: the number of elements, or every axis). Where that length
    is a count of the data (``_selection``), it is fixed at its trace-time value in the graph: ``selection-size``.
    ``depth``: the frame of the code that read it, counted from :func:`provenance.read_by_user`'s."""
    sess = active()
    if sess is None or not sess.selected:
        return
    prov = getattr(value, "_lp", None)
    if sess.suspended or prov is None or prov.builder is None or prov.builder.session is not sess \
            or prov._node is None or prov.lost is not None or not provenance.read_by_user(depth):
        return
    found = _selection(prov.node, [24])
    if axis is not None and axis < 0:
        axis += value.ndim
    if found is None or axis is not None and found[1] is not None and axis != found[1]:
        return
    builder = prov.builder
    if builder.closed:
        builder = sess.reopen(builder)
        if builder.closed:
            return
    line, location, _ = sess.where()
    chosen = facts(found[0])
    builder.report("selection-size", line, [prov.node.name], location=location, what=what,
                   selection=chosen.origin.split(" at line")[0] if chosen.const == "baked" and chosen.origin
                   else chosen.numpy or found[0].name)


def tie_order(sess: Session, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """``np.argsort`` with NumPy's default kind on traced data: NumPy orders equal values its own way (its default
    sort is not stable, and its SIMD sorts order ties otherwise than the input order); the graph's sort is stable, so
    an input with ties gives other indices (found by an exploration session: the nearest beams of a clipped lidar
    scan). A warning at the call's line; ``kind='stable'`` makes the cell agree with the graph."""
    kind = kwargs.get("kind", args[2] if len(args) > 2 else None)
    if kind not in (None, "quicksort", "heapsort") or not args:
        return
    prov = getattr(args[0], "_lp", None)
    builder = prov.builder if prov is not None else None
    if builder is None or builder.session is not sess or builder.closed:
        return
    line, location, _ = sess.where()
    builder.report("tie-order", line, [], location=location, severity="warning")


def extracted(array: Any, kind: str, what: str, severity: str | None = None, truth: bool | None = None) -> None:
    """A Python value left traced data (``kind`` is value-extraction or data-dependent-branch; ``truth``: the truth
    value a branch took, when the conversion is a truth test)."""
    sess = active()
    prov = getattr(array, "_lp", None)
    if sess is None or sess.suspended or prov is None or prov.builder is None or prov.builder.session is not sess:
        return
    builder = prov.builder
    line, location, _ = sess.where()
    if builder.closed:  # a value of a node that received its outputs: used by the node open now, or by a later one
        builder = sess.reopen(builder)
        if builder.closed:
            sess.taken_outside.append((line, location, kind, what, builder.name))
            return
    nodes = [prov.node.name] if prov.node is not None else []
    cause = {"data-dependent-branch": "branch", "broken-chain": "flat"}.get(kind, "extracted")
    note = " (LEAPP logs an error for this)." if sess.profile == "leapp" else "."
    if location is None and kind == "data-dependent-branch":
        # a branch in NumPy's or torch's own code (where() names user code and other libraries only): where, and
        # the switch of a known argument check
        caller = library_caller()
        if caller is not None:
            path, function, at = caller
            location = f"{path}:{at} in {function}"
            if path.startswith(_TESTING) and branches.uncaught(provenance.user_frame(2)):
                # np.testing.assert_allclose(z, x): NumPy's own check, which only raises
                builder.report("branch-check", line, nodes, location=location, severity="warning", what=what,
                               note=note)
                return
            check = hz.LIBRARY_CHECKS.get((path, function))
            if check is not None:
                builder.report("library-check", line, nodes, location=location, severity=severity, what=what,
                               note=note, library=check.library, fix=check.fix)
                return
    if truth is not None and severity is None and _decided(builder, truth, line, location, what, nodes):
        return  # a branch that decides only whether the code raises or logs: the graph is the same either way
    if kind == "value-extraction" and severity is None and _logged(builder, line, location, what, nodes):
        return  # print(x.mean().item()): the value reaches only the log
    builder.report(cause, line, nodes, location=location, severity=severity, what=what, note=note)


_TRUTHS = (bool, np.bool_)
# a float narrower than NumPy's float result (leapp_predicates._torch_outcome's text): cast back, the values agree
_LEAPP_DTYPE = re.compile(r"LEAPP's model returns (float16|float32) where NumPy gives float(?:32|64)\b")
_TESTING = ("numpy/testing/", "torch/testing/")  # the libraries' assertions: a branch there only decides a raise


def _logged(builder: NodeBuilder, line: int | None, location: str | None, what: str,
            nodes: list[str] | None = None) -> bool:
    """Report an ``extracted-logged`` warning when the user's code takes the value inside a log call's arguments
    (``branches.logged``); whether it did."""
    if not branches.logged(provenance.user_frame(3)):
        return False
    builder.report("extracted-logged", line, nodes or [], location=location, severity="warning", what=what)
    return True


def _decided(builder: NodeBuilder, truth: Any, line: int | None, location: str | None, what: str,
             nodes: list[str] | None = None) -> bool:
    """Report a ``branch-check`` or ``branch-log`` warning when the truth value ``truth`` the user's code is testing
    decides only whether it raises or logs (``branches.outcome``); whether it did."""
    decided = branches.outcome(provenance.user_frame(3), bool(truth))
    if decided is None:
        return False
    note = " (LEAPP logs an error for this)." if builder.session.profile == "leapp" else "."
    builder.report("branch-check" if decided == branches.CHECK else "branch-log", line, nodes or [],
                   location=location, severity="warning", what=what, note=note)
    return True


def modified_in_place(array: Any, name: str, *, line: int | None = None, report: bool = True,
                      cause: str = "in-place-method") -> None:
    """``array`` was changed by something the tracer does not record (``cause``: the hazard's, a key of
    ``hazards.CAUSES``): it is baked wherever it is used."""
    sess = active()
    if sess is None or sess.suspended:
        return
    if line is None:
        line = sess.where()[0]
    sess.bump(array)
    prov = array._lp
    if prov is None or prov.builder is None:
        array._lp = Provenance.watch(-1, line)  # a watch array whose new contents the tracer never saw: baked
        return
    if prov.builder.closed:
        return
    builder = prov.builder
    array._lp = Provenance.lost_in(builder, f"modified in place by {name} at line {line}", line)
    if report:
        builder.report(cause, line, [], name=name)


def rebind_in_place(array: Any, result: Any) -> None:
    """In-place methods (``x.sort()``, ``x.fill(v)``): the array takes the recorded result's value and node."""
    prov = getattr(result, "_lp", None)
    if prov is not None:
        ndarray.view(array, ndarray)[...] = ndarray.view(result, ndarray)
        sess, before = active(), array._lp
        array._lp = Provenance(prov.builder, prov.node, sess.bump(array) if sess is not None else 0)
        array._lp.lost, array._lp.line = prov.lost, prov.line
        if sess is not None:
            sess.wrote_through(array, before)
    elif isinstance(result, ndarray):
        ndarray.view(array, ndarray)[...] = result


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


class _Suspended:
    """The context manager ``Session.eager`` returns: NumPy calls inside it are not recorded."""

    __slots__ = ("session",)

    def __init__(self, session: Session):
        self.session = session

    def __enter__(self) -> None:
        self.session.suspended += 1

    def __exit__(self, *exc: Any) -> None:
        self.session.suspended -= 1


def close_matches(name: str, candidates: Any) -> str:
    matches = difflib.get_close_matches(name, [c for c in candidates if isinstance(c, str)], n=3)
    return f" Did you mean {', '.join(repr(m) for m in matches)}?" if matches else ""



def _set_value_facts(node: fx.Node, shape: tuple[int, ...], dtype: str, kind: str, view: bool) -> None:
    """The eager value's shape, dtype, kind and view-ness on the node that records it. A record ``emit`` has just
    made (it has no ``kind`` yet) is completed where it stands (no copy: this runs for every recorded op that is not
    replayed), as only its node reaches it. A completed one may be shared: the record a replayed or fast-path node
    got at flush serves every node of its op at its site, in this trace and later ones (``RecordingGraph.flush``),
    so a node given a value again (a crossing: ``t.numpy()`` of a tensor recorded by the fast path) gets a copy."""
    record = node.meta[KEY]
    values = record.__dict__
    if "kind" not in values and type(values) is dict:  # not a SitedFacts: its __dict__ is its template op's
        values.update(shape=shape, dtype=dtype, kind=kind, view=view)
    elif record.kind != kind or record.shape != shape or record.dtype != dtype or record.view != view:
        # a replayed call's node holds its signature's facts already
        node.meta[KEY] = derive(record, {"shape": shape, "dtype": dtype, "kind": kind, "view": view})
