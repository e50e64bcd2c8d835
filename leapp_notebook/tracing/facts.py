"""Typed per-node facts: one frozen record under one ``node.meta`` key, as torch.fx's ShapeProp keeps
``tensor_meta``. Every analysis and renderer reads a node's facts through :func:`facts`.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
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


def derive(base: NodeFacts, changes: dict[str, Any]) -> NodeFacts:
    """``dataclasses.replace(base, **changes)`` for the recording path: the record is copied field by field
    without running the frozen ``__init__`` (a few times faster; this runs for every recorded op)."""
    new = object.__new__(NodeFacts)
    state = new.__dict__
    state.update(base.__dict__)
    state.update(changes)
    return new


def make(**values: Any) -> NodeFacts:
    """New facts: ``values`` (field names as in :class:`NodeFacts`); the other fields read the class's
    defaults (a dataclass keeps each field's default as a class attribute), so only what is given is stored."""
    new = object.__new__(NodeFacts)
    new.__dict__.update(values)
    return new


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
