"""The public value types of a trace: tensor specs, hazards, nodes, and the errors users see."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
import torch.fx


class TraceError(Exception):
    """Bad arguments to the tracer; the message says what to do instead."""


class CellError(Exception):
    """The user's cell raised while it was traced. ``line`` is the 1-based cell line."""

    def __init__(self, message: str, line: int | None, code: str | None = None):
        super().__init__(message)
        self.line = line
        self.code = code


class ExportBlocked(Exception):
    """Export refused (an error hazard stands or the probe failed) or failed (a converter, a model that
    disagrees after reloading, the file system); nothing was written. The message is one line for a failure."""


# Every ``export_with`` LEAPP 0.7.2 accepts (``annotate.output_tensors``, ``Trace.export(formats=)``,
# ``%%leapp_trace --format``). Aliases as in LEAPP: jit = jit-script, onnx = onnx-dynamo, pt2 = exported-program.
EXPORT_WITH = ("jit", "jit-script", "jit-trace", "onnx", "onnx-dynamo", "onnx-torchscript", "exported-program",
               "pt2")


@dataclass(frozen=True)
class TensorSpec:
    """One node input or output: its name, shape, dtype name (``"float32"``, NumPy's names) and kind:
    ``"numpy"`` for an ``np.ndarray``, ``"torch"`` for a ``torch.Tensor``."""

    name: str
    shape: tuple[int, ...]
    dtype: str
    kind: str = "numpy"


@dataclass
class Hazard:
    """One place where tracing loses information.

    ``line`` is the 1-based line in the cell that made the call (when the construct happens inside
    a helper or library, ``location`` names that file and line). ``graph_nodes`` are the fx node
    names to highlight.
    """

    kind: str
    severity: str
    node: str
    line: int | None
    code: str
    message: str
    fix: str
    graph_nodes: list[str] = field(default_factory=list)
    location: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "severity": self.severity,
            "node": self.node,
            "line": self.line,
            "code": self.code,
            "message": self.message,
            "fix": self.fix,
            "graph_nodes": list(self.graph_nodes),
            "location": self.location,
        }


@dataclass
class Node:
    """One traced node: a ``torch.fx.GraphModule`` taking tensors in input order, returning a tuple.

    ``sample_inputs`` are the arrays the node was traced with (the probe derives its ranges from
    them); ``sample_outputs`` the eager outputs of that run.
    """

    name: str
    graph: torch.fx.GraphModule
    inputs: list[TensorSpec]
    outputs: list[TensorSpec]
    hazards: list[Hazard] = field(default_factory=list)
    sample_inputs: dict[str, np.ndarray] = field(default_factory=dict, repr=False)
    sample_outputs: dict[str, Any] = field(default_factory=dict, repr=False)
    export_with: str = "jit"
    # input name -> "node/output" when that input received another node's output in the same cell
    sources: dict[str, str] = field(default_factory=dict)

    def __call__(self, *values: Any) -> tuple[Any, ...]:
        """Run the graph on arrays or tensors (in input order); each output comes back as its kind
        (a NumPy array for a ``"numpy"`` output, a tensor for a ``"torch"`` one)."""
        tensors = [v if isinstance(v, torch.Tensor) else torch.from_numpy(np.asarray(v, order="C"))
                   for v in values]  # keeps 0-d arrays 0-d
        with torch.no_grad():
            results = self.graph(*tensors)
        return tuple(t.detach() if spec.kind == "torch" else t.detach().numpy()
                     for spec, t in zip(self.outputs, results, strict=True))
