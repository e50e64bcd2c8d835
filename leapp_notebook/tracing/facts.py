"""Typed per-node facts: one frozen record under one ``node.meta`` key, as torch.fx's ShapeProp keeps
``tensor_meta``. Every analysis and renderer reads a node's facts through :func:`facts`.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from operator import attrgetter
from typing import Any

import torch.fx

KEY = "leapp"


@dataclass(frozen=True)
class ModuleFacts:
    """An ``nn.Module`` called as one graph node."""

    name: str            # the submodule's name in the node's GraphModule
    type: str            # its class name ("Sequential")
    params: int          # number of parameter elements
    training: bool       # called in training mode with submodules whose behaviour depends on it


@dataclass(frozen=True)
class NodeFacts:
    """What the tracer knows about one fx node.

    ``numpy`` is the call as the user wrote it (``np.add``, ``x[::-1]``, ``Tensor.clamp``), ``torch`` the
    torch op recorded for it. ``shape``/``dtype`` are the eager value's (NumPy dtype names; torch names for
    torch-only dtypes); ``graph_shape``/``graph_dtype`` what the graph computes on the trace inputs.
    ``const`` is ``"genuine"`` or ``"baked"`` for constants, with ``origin`` and the ``sources`` (graph nodes)
    a baked value was computed from outside the graph. ``view`` says the eager value shares memory with its
    input (a NumPy view), ``kind`` whether the eager value is a NumPy array or a torch tensor.
    """

    line: int | None = None
    numpy: str = ""
    torch: str = ""
    location: str | None = None
    helper: str | None = None
    shape: tuple[int, ...] | None = None
    dtype: str | None = None
    kind: str = "numpy"
    const: str | None = None
    origin: str | None = None
    sources: tuple[str, ...] = ()
    preview: tuple[Any, ...] = ()
    input: str | None = None
    cast: bool = False
    view: bool = False
    graph_shape: tuple[int, ...] | None = None
    graph_dtype: str | None = None
    module: ModuleFacts | None = None
    outputs: tuple[str, ...] = ()


_EMPTY = NodeFacts()
_FIELDS = frozenset(f.name for f in fields(NodeFacts))
_VALUES = attrgetter(*(f.name for f in fields(NodeFacts)))  # a record's field values, in order


class SharedState(dict):
    """The facts of one template op, shared by the :class:`SitedFacts` records of every node it makes: read-only,
    so that no change meant for one node reaches the others (a refused write is a bug in the tracer)."""

    def _refuse(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError("a template op's facts are shared by its nodes: derive() a record instead of editing one")

    __setitem__ = __delitem__ = update = setdefault = pop = popitem = clear = __ior__ = _refuse  # type: ignore


class SitedFacts(NodeFacts):
    """The facts of a replayed node (``RecordingGraph.flush``): its template op's facts, not copied (the record's
    ``__dict__`` is the op's :class:`SharedState`), and its cell site (line, location, helper) in a slot.

    A copy of the facts is a dict of about a dozen entries (464 bytes) and one more object for the collector to walk;
    a straight-line cell makes a record for every node (each has a line of its own), so at 100,000 ops the copies
    were a third of the trace's memory. Reads, equality and hashing are NodeFacts' (a record equals a plain one with
    the same values); ``derive``, ``dataclasses.replace``, ``copy`` and ``pickle`` give plain NodeFacts."""

    __slots__ = ("_site",)

    def __new__(cls, *args: Any, **kwargs: Any) -> NodeFacts:  # type: ignore[misc]
        # a call (dataclasses.replace does one): a plain record; the tracer makes these with object.__new__
        return NodeFacts(*args, **kwargs)

    @property
    def line(self) -> int | None:  # type: ignore[override]
        return self._site[0]

    @property
    def location(self) -> str | None:  # type: ignore[override]
        return self._site[1]

    @property
    def helper(self) -> str | None:  # type: ignore[override]
        return self._site[2]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, NodeFacts):
            return _VALUES(self) == _VALUES(other)
        return NotImplemented

    __hash__ = NodeFacts.__hash__  # the hash of the same values (a class that defines __eq__ loses its own)

    def __reduce__(self) -> tuple[Any, ...]:
        return _restored, (derive(self, {}).__dict__,)  # the values it holds, its site among them


def derive(base: NodeFacts, changes: dict[str, Any]) -> NodeFacts:
    """``dataclasses.replace(base, **changes)`` for the recording path: the record is copied field by field
    without running the frozen ``__init__`` (a few times faster; this runs for every recorded op)."""
    new = object.__new__(NodeFacts)
    state = new.__dict__
    state.update(base.__dict__)
    if type(base) is SitedFacts:
        state["line"], state["location"], state["helper"] = base._site
    state.update(changes)
    return new


def make(**values: Any) -> NodeFacts:
    """New facts: ``values`` (field names as in :class:`NodeFacts`); the other fields read the class's
    defaults (a dataclass keeps each field's default as a class attribute), so only what is given is stored."""
    new = object.__new__(NodeFacts)
    new.__dict__.update(values)
    return new


def _restored(held: dict[str, Any]) -> NodeFacts:
    """A plain record of ``held``'s values: how a copied or pickled :class:`SitedFacts` comes back."""
    return make(**held)


def facts(node: Any) -> NodeFacts:
    """The facts of an fx node (empty facts for anything else)."""
    if isinstance(node, torch.fx.Node):
        return node.meta.get(KEY, _EMPTY)
    return _EMPTY


def update(node: torch.fx.Node, **changes: Any) -> NodeFacts:
    """Replace some of ``node``'s facts; returns the new record."""
    assert _FIELDS.issuperset(changes), set(changes) - _FIELDS
    new = derive(node.meta.get(KEY, _EMPTY), changes)
    node.meta[KEY] = new
    return new
