"""The hazard catalogue: each kind, its severity per profile, the fix text written for a line, and the one
:func:`add` every producer (the engine, the probe, the LEAPP-defects check) reports through.

Kinds are stable strings (DESIGN.md). Fix texts are templates filled with the offending line's code
and the names involved, so the user reads a rewrite for *their* line, not a generic rule. A hazard is
reported once per kind, line and node: :func:`add` merges a second report on the same line into the
first (its graph nodes, its message, the stronger severity).
"""

from __future__ import annotations

from dataclasses import dataclass

from .types import Hazard


@dataclass(frozen=True)
class HazardKind:
    kind: str
    title: str
    leapp_severity: str
    full_severity: str


CATALOGUE: dict[str, HazardKind] = {
    k.kind: k
    for k in [
        HazardKind("untraced-call", "Untraced call baked as a constant", "error", "error"),
        HazardKind("broken-chain", "Indexing or iteration leaves the graph", "error", "warning"),
        HazardKind("reversed-slice", "Reversed slice", "error", "warning"),
        HazardKind("numpy-scalar", "NumPy scalar operand", "error", "warning"),
        HazardKind("value-extraction", "Python value extracted from traced data", "error", "error"),
        HazardKind("data-dependent-branch", "Branch on traced data", "error", "error"),
        HazardKind("untraced-output", "Node output is not traced", "error", "error"),
        HazardKind("semantic-mismatch", "Graph disagrees with NumPy", "error", "error"),
        HazardKind("training-mode", "Module called in training mode", "error", "error"),
        HazardKind("nondeterministic", "Random op inside a node", "error", "error"),
    ]
}

# Rewrites in traced operations for calls LEAPP 0.7.2 does not record.
REWRITES: dict[str, str] = {
    "np.linalg.norm": "np.sqrt(np.sum(v * v, axis=-1, keepdims=True))",
    "np.append": "np.concatenate([a, b])",
    "np.pad": "np.concatenate([np.zeros_like(x[:1]), x, np.zeros_like(x[:1])])",
    "np.cross": "np.stack([a[..., 1]*b[..., 2] - a[..., 2]*b[..., 1], a[..., 2]*b[..., 0] - a[..., 0]*b[..., 2], "
                "a[..., 0]*b[..., 1] - a[..., 1]*b[..., 0]], axis=-1)",
    "np.asarray": "use the traced array itself (drop np.asarray), or x.astype(dtype) to convert",
    "np.array": "use the traced array itself, or np.stack([...], axis=0) / np.concatenate for lists of "
                "traced values",
    "np.array([...])": "np.stack([...]) or np.concatenate([...]) of slices that keep an axis",
    "np.ravel": "x.reshape(-1)",
    "np.amax": "np.max(x, axis=...)",
    "np.amin": "np.min(x, axis=...)",
    "np.atleast_1d": "x.reshape(-1) or np.expand_dims",
    "np.atleast_2d": "np.expand_dims(x, 0)",
    "np.fliplr": "np.flip(x, axis=1)",
    "np.flipud": "np.flip(x, axis=0)",
    "np.copy": "x.copy()",
    "ndarray.prod": "np.prod(x, axis=...)",
    "ndarray.dot": "np.dot(a, b) or a @ b",
    "ndarray.argsort": "np.argsort(x, axis=...)",
    "ndarray.nonzero": "np.nonzero(x)",
    "ndarray.diagonal": "np.diagonal(x)",
    "ndarray.trace": "np.trace(x)",
    "ndarray.sort": "x = np.sort(x, axis=...)",
}

SPLIT_FIX = ("split the node: call annotate.output_tensors(...) with the values just before line {line} "
             "and annotate.input_tensors(...) with its result after it, so the gap becomes an explicit "
             "graph boundary that the deploying runtime fills")


def fix_for(kind: str, *, line: int | None, code: str, name: str = "", profile: str = "leapp",
            recorded_by_full: bool = False) -> str:
    """The fix text for one hazard at one line."""
    code = code.strip()
    where = f"line {line}" if line is not None else "this line"
    if kind == "untraced-call":
        rewrite = REWRITES.get(name)
        parts = []
        if rewrite:
            parts.append(f"rewrite {name} in traced operations: {rewrite}")
        if recorded_by_full and profile == "leapp":
            parts.append(f"trace with profile='full' to record {name} here (LEAPP 0.7.2 itself will still bake it)")
        parts.append(SPLIT_FIX.format(line=line))
        return f"At {where} (`{code}`): " + "; or ".join(parts) + "."
    if kind == "broken-chain":
        return (f"At {where} (`{code}`): keep at least one axis in the key, e.g. x[0:1] instead of x[0], "
                f"x[0:1, 0:1] instead of x[0, 0]; instead of iterating or unpacking, slice: "
                f"a, b = x[0:1], x[1:2] (or np.split(x, n)).")
    if kind == "reversed-slice":
        return (f"At {where} (`{code}`): index with an index array instead of a negative step, "
                f"e.g. x[np.arange(x.shape[0] - 1, -1, -1)], or use np.flip(x, axis=0).")
    if kind == "numpy-scalar":
        return (f"At {where} (`{code}`): use a Python scalar (2.0) or a 0-d array "
                f"(np.array(2.0, np.float32)) instead of a NumPy scalar type; for a scalar returned by a "
                f"NumPy call, keep an axis (keepdims=True) so it stays an array.")
    if kind == "value-extraction":
        return (f"At {where} (`{code}`): keep the value as an array (x[0:1] instead of x.item()/float(x)); "
                f"if a Python value is truly needed, " + SPLIT_FIX.format(line=line) + ".")
    if kind == "data-dependent-branch":
        return (f"At {where} (`{code}`): the graph records only the branch taken. For element-wise choices "
                f"use np.where(cond, a, b); for a real decision, " + SPLIT_FIX.format(line=line) + ".")
    if kind == "untraced-output":
        return (f"At {where} (`{code}`): pass a value computed from the node's inputs with traced "
                f"operations; a constant output belongs in the deployment config, not the graph.")
    if kind == "training-mode":
        return (f"At {where} (`{code}`): call `.eval()` on the module before tracing (and keep it in eval mode "
                f"for export): in training mode {name or 'it'} behaves differently on every call.")
    if kind == "nondeterministic":
        return (f"At {where} (`{code}`): a random op gives a different value on every run, so the graph cannot "
                f"match the eager cell; draw the random values outside the node and pass them in as an input "
                f"(annotate.input_tensors), or remove the op for deployment.")
    if kind == "semantic-mismatch":
        return (f"At {where} (`{code}`): the recorded torch op disagrees with NumPy here; rewrite the call "
                f"with operations whose results match (check axis, dtype and ddof arguments).")
    raise KeyError(kind)


def add(table: dict[tuple[str, int | None], Hazard], kind: str, line: int | None, message: str,
        graph_nodes: list[str], *, node: str, profile: str, code: str, name: str = "",
        location: str | None = None, severity: str | None = None, fix: str | None = None,
        recorded_by_full: bool = False) -> tuple[Hazard, bool]:
    """Report a hazard into ``table`` (one node's hazards by (kind, line)); returns it and whether it is new.

    A second report of the same kind on the same line merges into the first: its graph nodes are added,
    its message appended when it names something new (``name``), an ``error`` severity wins.
    """
    key = (kind, line)
    existing = table.get(key)
    if existing is not None:
        for node_name in graph_nodes:
            if node_name not in existing.graph_nodes:
                existing.graph_nodes.append(node_name)
        if name and name not in existing.message:
            existing.message += f" Also on this line: {message}"
        if severity == "error":
            existing.severity = "error"
        return existing, False
    if fix is not None:
        fix_text = f"At line {line} (`{code.strip()}`): {fix}."
    else:
        fix_text = fix_for(kind, line=line, code=code, name=name, profile=profile, recorded_by_full=recorded_by_full)
    hazard = Hazard(kind=kind, severity=severity or _severity(kind, profile), node=node, line=line, code=code,
                    message=message, fix=fix_text, graph_nodes=list(graph_nodes), location=location)
    table[key] = hazard
    return hazard, True


def _severity(kind: str, profile: str) -> str:
    entry = CATALOGUE[kind]
    return entry.leapp_severity if profile == "leapp" else entry.full_severity
