"""The record of one trace: one fx graph per node, its inputs and outputs, and the provenance of
every constant (genuine, or baked from traced data) and every hazard.

``ACTIVE`` is the running session; TracedArray hooks call into it. A session patches a few NumPy
creation functions while it runs (so arrays created inside the cell are watched) and restores them
when it ends, whatever happened.
"""

from __future__ import annotations

import difflib
import operator
import os
import sys
import weakref
from typing import Any, Iterator

import numpy as np
import torch
import torch.fx

from . import hazards as hz
from . import leapp_defects, ops, torch_impl
from .types import EXPORT_WITH, Hazard, Node, TensorSpec, TraceError

ACTIVE: "Session | None" = None

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_SKIP_PREFIXES = (_PACKAGE_DIR, os.path.dirname(os.path.abspath(np.__file__)),
                  os.path.dirname(os.path.abspath(torch.__file__)), "<frozen ", "<__array_function__")

# Functions whose result is static metadata (shapes, dtypes), never a value derived from data.
METADATA_FUNCTIONS = {np.shape, np.ndim, np.size, np.result_type, np.may_share_memory, np.shares_memory,
                      np.iscomplexobj, np.isrealobj, np.min_scalar_type, np.can_cast}


def fingerprint(array: np.ndarray) -> int:
    return hash(np.ascontiguousarray(array).tobytes())


_TARGET_NAMES: dict[Any, str] = {}  # fx's snake-cased base name per target, computed once
_DTYPE_NAMES: dict[np.dtype, str] = {}  # dtype.name is a slow Python property in NumPy


class _RecordingGraph(torch.fx.Graph):
    """An fx Graph without the per-node scan for symbolic values, which the tracer never creates.

    Graph.create_node walks every argument with pytree looking for SymInts; on the tracing path
    that walk costs more than the rest of recording a NumPy call.
    """

    def create_node(self, op, target, args=None, kwargs=None, name=None, type_expr=None):  # noqa: ANN001
        if op not in ("call_function", "call_method") or self.owning_module is not None:
            return super().create_node(op, target, args, kwargs, name, type_expr)
        args = args or ()
        kwargs = kwargs or {}
        candidate = name if name is not None else _TARGET_NAMES.get(target)
        if candidate is None:
            candidate = _TARGET_NAMES[target] = self._target_to_str(target)
        name = self._graph_namespace.create_name(candidate, None)
        node = torch.fx.Node(self, name, op, target, args, kwargs, type_expr)
        self._graph_namespace.associate_name_with_obj(name, node)
        self._insert(node)
        self._find_nodes_lookup_table.insert(node)
        self._len += 1
        return node


def _target_display(op: str, target: Any) -> str:
    if op == "call_method":
        return f"Tensor.{target}"
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
        self.graph = _RecordingGraph()
        self.root = torch.nn.Module()
        self.inputs: list[TensorSpec] = []
        self.placeholders: list[torch.fx.Node] = []
        self.outputs: list[TensorSpec] = []
        self.output_nodes: list[torch.fx.Node] = []
        self.sample_inputs: dict[str, np.ndarray] = {}
        self.sample_outputs: dict[str, Any] = {}
        self.hazards: dict[tuple[str, int | None], Hazard] = {}
        self.pending_reach: set[tuple[str, int | None]] = set()
        self.genuine: dict[int, tuple[Any, torch.fx.Node]] = {}
        self.n_const = 0
        self.closed = False
        self.export_with = "jit"
        self.sources: dict[str, str] = {}
        self.node: Node | None = None

    # -------------------------------------------------------------- graph construction
    def add_input(self, name: str, value: Any) -> "Any":
        from .array import TracedArray

        if not isinstance(name, str) or not name.isidentifier():
            raise TraceError(f"input name {name!r} of node '{self.name}' must be a Python identifier")
        if any(spec.name == name for spec in self.inputs):
            raise TraceError(f"node '{self.name}' already has an input named '{name}'")
        array = _input_array(self.name, name, value)
        if isinstance(value, TracedArray) and value._lb is not None and value._lb is not self and value._lb.closed:
            producer = value._lb
            for spec, out_node in zip(producer.outputs, producer.output_nodes, strict=True):
                if out_node is value._ln:
                    self.sources[name] = f"{producer.name}/{spec.name}"
                    break
        placeholder = self.graph.placeholder(name)
        placeholder.meta.update(ln_input=name, ln_shape=array.shape, ln_dtype=array.dtype.name,
                                ln_numpy="input", ln_torch="input")
        if self.placeholders:
            # Keep inputs together, in declaration order, ahead of the ops recorded so far.
            self.placeholders[-1].append(placeholder)
        else:
            first = next(iter(self.graph.nodes))
            if first is not placeholder:
                first.prepend(placeholder)
        self.placeholders.append(placeholder)
        self.inputs.append(TensorSpec(name, tuple(array.shape), array.dtype.name))
        self.sample_inputs[name] = array.copy()
        traced = array.view(TracedArray)
        traced._lb, traced._ln = self, placeholder
        if self.session.versions:
            traced._lver = self.session.versions.get(id(_root(array)), 0)
        return traced

    def emit(self, op: str, target: Any, args: tuple[Any, ...], kwargs: dict[str, Any] | None = None,
             *, line: int | None, numpy: str, location: str | None, helper: str | None) -> torch.fx.Node:
        node = self.graph.create_node(op, target, tuple(args), dict(kwargs or {}))
        node.meta.update(ln_line=line, ln_numpy=numpy, ln_torch=_target_display(op, target),
                         ln_location=location, ln_helper=helper)
        return node

    def const(self, value: Any, *, baked: bool, origin: str | None, line: int | None,
              source_nodes: list[str] | None = None, helper: str | None = None) -> torch.fx.Node:
        array = np.asarray(value)
        if not baked:
            hit = self.genuine.get(id(value))
            if hit is not None and hit[0] is value:
                return hit[1]
        if array.dtype.kind not in "biufc":
            raise TraceError(f"cannot embed a constant of dtype {array.dtype} in the graph of node '{self.name}'")
        if array.dtype.kind in "iu" and array.dtype.itemsize < 8 and array.dtype not in ops._NP_TO_TORCH:
            array = array.astype(np.int64)
        attr = f"_baked{self.n_const}" if baked else f"_const{self.n_const}"
        self.n_const += 1
        tensor = torch.from_numpy(np.array(array, copy=True, order="C"))
        self.root.register_buffer(attr, tensor)
        node = self.graph.create_node("get_attr", attr, name=("baked" if baked else "const") + str(self.n_const - 1))
        preview = array.ravel()[:6].tolist() if array.size else []
        node.meta.update(ln_const="baked" if baked else "genuine", ln_origin=origin, ln_line=line,
                         ln_shape=array.shape, ln_dtype=array.dtype.name, ln_numpy="constant",
                         ln_torch="constant", ln_preview=preview, ln_from=source_nodes or [],
                         ln_helper=helper)
        if not baked:
            self.genuine[id(value)] = (value, node)
        return node

    # -------------------------------------------------------------- hazards
    def hazard(self, kind: str, line: int | None, message: str, graph_nodes: list[str], *,
               name: str = "", location: str | None = None, severity: str | None = None,
               pending_reach: bool = False, recorded_by_full: bool = False, fix: str | None = None) -> Hazard:
        key = (kind, line)
        existing = self.hazards.get(key)
        if existing is not None:
            for node_name in graph_nodes:
                if node_name not in existing.graph_nodes:
                    existing.graph_nodes.append(node_name)
            if name and name not in existing.message:
                existing.message += f" Also on this line: {message}"
            if severity == "error":
                existing.severity = "error"
                self.pending_reach.discard(key)
            return existing
        profile = self.session.profile
        code = self.session.line_text(line)
        hazard = Hazard(kind=kind, severity=severity or hz.severity(kind, profile), node=self.name, line=line,
                        code=code, message=message,
                        fix=(f"At line {line} (`{code.strip()}`): {fix}." if fix else
                             hz.fix_for(kind, line=line, code=code, name=name, profile=profile,
                                        recorded_by_full=recorded_by_full)),
                        graph_nodes=list(graph_nodes), location=location)
        self.hazards[key] = hazard
        if pending_reach:
            self.pending_reach.add(key)
        return hazard

    # -------------------------------------------------------------- closing
    def close(self, values: dict[str, Any], export_with: str) -> None:
        from .array import TracedArray

        sess = self.session
        line, location, helper = sess.where()
        if export_with not in EXPORT_WITH:
            raise TraceError(f"export_with={export_with!r} for node '{self.name}': use one of "
                             + ", ".join(EXPORT_WITH))
        self.export_with = export_with
        for out_name, value in values.items():
            if not isinstance(out_name, str) or not out_name.isidentifier():
                raise TraceError(f"output name {out_name!r} of node '{self.name}' must be a Python identifier")
            traced_here = isinstance(value, TracedArray) and value._lb is self and value._ln is not None
            if isinstance(value, TracedArray):
                eager = value.view(np.ndarray)
            else:
                eager = np.asarray(value)
                if eager.dtype.kind not in "biufc":
                    raise TraceError(f"output '{out_name}' of node '{self.name}' is a {type(value).__name__}, "
                                     "not a numeric array")
            node = sess.graph_value(self, value, line, as_tensor=True, helper=helper)
            out_line = line if line is not None else getattr(node, "meta", {}).get("ln_line")
            alias = leapp_defects.aliased_input(node) if traced_here else None
            if alias is not None:
                # LEAPP 0.7.2's output_tensors refuses an output that is a view of exactly a declared
                # input's memory (x.T of a 1-D x, x[:], x.reshape(x.shape)): reported at the view's line.
                view_line = node.meta.get("ln_line", out_line)
                self.hazard("semantic-mismatch", view_line,
                            f"output '{out_name}' ({node.meta.get('ln_numpy')} of input '{alias}') is recorded "
                            f"correctly here, but LEAPP 0.7.2 records it wrongly: {leapp_defects.ALIAS.what}.",
                            [node.name], name=f"output '{out_name}'", location=location,
                            severity="error" if sess.profile == "leapp" else "warning", fix=leapp_defects.ALIAS.fix)
            if not traced_here or not _depends_on_inputs(node):
                # With inputs=/outputs= the outputs are read after the cell ends (no cell line): report at
                # the line that produced the value.
                self.hazard("untraced-output", out_line,
                            f"output '{out_name}' of node '{self.name}' is not computed from the node's inputs "
                            f"by traced operations ({type(value).__name__}); LEAPP raises "
                            f"\"output_tensors() for node '{self.name}' received non-traced tensors\" for a plain "
                            "array, and exports a constant otherwise.",
                            [node.name], location=location)
            self.outputs.append(TensorSpec(out_name, tuple(eager.shape), eager.dtype.name))
            self.output_nodes.append(node)
            self.sample_outputs[out_name] = np.array(eager, copy=True)
        out = self.graph.output(tuple(self.output_nodes))
        out.meta.update(ln_outputs=[spec.name for spec in self.outputs], ln_line=line)
        self.closed = True

    def finish(self) -> Node:
        """Settle severities by reachability, fix dtypes against NumPy, and build the GraphModule."""
        reaching = _reaching_outputs(self.graph)
        for key in self.pending_reach:
            hazard = self.hazards[key]
            if not any(name in reaching for name in hazard.graph_nodes):
                hazard.severity = "warning"
                hazard.message += " Its result does not reach any output of the node."
        # The dtype pass runs on the bare graph, so fx generates the module's code once, after it.
        _DtypePass(self.root, self.graph, self).run(*[torch.from_numpy(np.asarray(a, order="C"))
                                                      for a in self.sample_inputs.values()])
        module = _graph_module(self.root, self.graph, f"LeappNode_{_identifier(self.name)}")
        hazards = sorted(self.hazards.values(), key=lambda h: (h.line or 0, h.kind))
        self.node = Node(name=self.name, graph=module, inputs=list(self.inputs), outputs=list(self.outputs),
                         hazards=hazards, sample_inputs=dict(self.sample_inputs),
                         sample_outputs=dict(self.sample_outputs), export_with=self.export_with,
                         sources=dict(self.sources))
        return self.node


def _graph_module(root: torch.nn.Module, graph: torch.fx.Graph, class_name: str) -> torch.fx.GraphModule:
    """A GraphModule whose Python code is generated on first use, not now: code generation is most of the
    cost of finishing a node, and many traces are only inspected (hazards, rendering) before any run."""
    try:
        from torch.fx._lazy_graph_module import _LazyGraphModule
    except ImportError:  # older torch: generate the code now
        return torch.fx.GraphModule(root, graph, class_name=class_name)
    return _LazyGraphModule(root, graph, class_name=class_name)


class _DtypePass(torch.fx.Interpreter):
    """Runs the graph once on the trace inputs; where torch's dtype differs from NumPy's, inserts a cast.

    Shapes are checked too: a shape torch gets differently is a lookup defect, reported as a
    ``semantic-mismatch`` hazard at the line that made the call.
    """

    def __init__(self, root: torch.nn.Module, graph: torch.fx.Graph, builder: NodeBuilder):
        super().__init__(root, graph=graph)
        self.builder = builder

    def run_node(self, n: torch.fx.Node) -> Any:
        try:
            value = super().run_node(n)
        except Exception as exc:  # a lookup row emitted something torch rejects: report, do not crash
            self.builder.hazard("semantic-mismatch", n.meta.get("ln_line"),
                                f"the torch op recorded for {n.meta.get('ln_numpy', n.name)} fails on the trace "
                                f"inputs: {type(exc).__name__}: {exc}", [n.name])
            raise _StopPass() from exc
        if isinstance(value, torch.Tensor):
            want = n.meta.get("ln_dtype")
            if want is not None and n.op != "placeholder":
                want_torch = ops._NP_TO_TORCH.get(np.dtype(want))
                if want_torch is not None and value.dtype != want_torch:
                    with self.graph.inserting_after(n):
                        cast = self.graph.call_method("to", (n, want_torch))
                    n.replace_all_uses_with(cast, delete_user_cb=lambda user: user is not cast)
                    cast.meta.update({k: v for k, v in n.meta.items() if k.startswith("ln_")})
                    cast.meta.update(ln_torch="Tensor.to", ln_cast=True)
                    n.meta["ln_dtype"] = ops.numpy_dtype(value.dtype).name if value.dtype in ops._TORCH_TO_NP \
                        else str(value.dtype)
                    value = value.to(want_torch)
            want_shape = n.meta.get("ln_shape")
            if want_shape is not None and tuple(value.shape) != tuple(want_shape):
                self.builder.hazard("semantic-mismatch", n.meta.get("ln_line"),
                                    f"{n.meta.get('ln_numpy', n.name)}: the graph computes shape "
                                    f"{tuple(value.shape)} where NumPy gives {tuple(want_shape)}", [n.name])
            n.meta["ln_val"] = (tuple(value.shape), str(value.dtype).replace("torch.", ""))
        return value

    def run(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return super().run(*args, **kwargs)
        except _StopPass:
            return None


class _StopPass(Exception):
    pass


def _depends_on_inputs(node: Any) -> bool:
    if not isinstance(node, torch.fx.Node):
        return False
    seen = set()
    stack = [node]
    while stack:
        current = stack.pop()
        if current.op == "placeholder":
            return True
        if current in seen:
            continue
        seen.add(current)
        stack.extend(current.all_input_nodes)
    return False


def _reaching_outputs(graph: torch.fx.Graph) -> set[str]:
    """Names of nodes whose value flows into the output node."""
    output = next(n for n in reversed(graph.nodes) if n.op == "output")
    seen: set[str] = set()
    stack = list(output.all_input_nodes)
    while stack:
        current = stack.pop()
        if current.name in seen:
            continue
        seen.add(current.name)
        stack.extend(current.all_input_nodes)
    return seen


def _identifier(name: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in name)


def _input_array(node: str, name: str, value: Any) -> np.ndarray:
    if isinstance(value, np.ndarray):
        array = value.view(np.ndarray) if type(value) is not np.ndarray else value
    elif isinstance(value, (list, tuple, int, float, bool, np.generic)):
        array = np.asarray(value)
    elif isinstance(value, torch.Tensor):
        raise TraceError(f"input '{name}' of node '{node}' is a torch.Tensor; pass a NumPy array "
                         "(tensor.numpy()) — this tool traces NumPy code")
    else:
        raise TraceError(f"input '{name}' of node '{node}' is a {type(value).__name__}, not a NumPy array")
    if array.dtype.kind not in "biufc" or array.dtype not in ops._NP_TO_TORCH:
        raise TraceError(f"input '{name}' of node '{node}' has dtype {array.dtype}, which torch cannot hold")
    return array


# ------------------------------------------------------------------------------------------
# the session
# ------------------------------------------------------------------------------------------

class Session:
    """One running trace of one cell."""

    def __init__(self, source: str, filename: str, profile: str):
        self.source = source
        self.lines = source.splitlines()
        self.filename = filename
        self.profile = profile
        self.builders: dict[str, NodeBuilder] = {}
        self.suspended = 0
        self._suspend = _Suspended(self)
        self.tainted: dict[int, tuple[Any, str]] = {}
        # Write counters per memory owner: a view whose counter is behind was taken before a write
        # through another view, so its graph value is stale (the eager value changed).
        self.versions: dict[int, int] = {}

    def bump(self, array: Any) -> int:
        """Record an in-place write into ``array``'s memory; returns the owner's new write count."""
        key = id(_root(array))
        version = self.versions.get(key, 0) + 1
        self.versions[key] = version
        return version

    # -------------------------------------------------------------- helpers
    def line_text(self, line: int | None) -> str:
        if line is None or not 1 <= line <= len(self.lines):
            return ""
        return self.lines[line - 1]

    def where(self) -> tuple[int | None, str | None, str | None]:
        """The cell line that led here, the library location when a library made the call, and the
        name of the helper function the call happened in (None at the cell's top level)."""
        frame = sys._getframe(2)  # the caller is always this package: start above it
        location = None
        helper = None
        filename = self.filename
        while frame is not None:
            code = frame.f_code
            fname = code.co_filename
            if fname == filename:
                if helper is None and code.co_name != "<module>":
                    helper = code.co_name
                return frame.f_lineno, location, helper
            if not fname.startswith(_SKIP_PREFIXES):
                if location is None:
                    location = f"{fname}:{frame.f_lineno} in {code.co_name}"
                    helper = code.co_name
            frame = frame.f_back
        return None, location, helper

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
        return builder

    # -------------------------------------------------------------- values into the graph
    def graph_value(self, builder: NodeBuilder, value: Any, line: int | None, *, as_tensor: bool = False,
                    helper: str | None = None) -> Any:
        """A graph value for ``value`` as used inside ``builder``'s node: its node when traced there;
        a baked constant when it came from traced data some other way; a genuine constant otherwise."""
        TracedArray = _array.TracedArray  # noqa: N806 - the class (array.py imports this module)

        if isinstance(value, TracedArray):
            if value._lb is builder and value._ln is not None:
                if not self.versions or value._lver == self.versions.get(id(_root(value)), 0):
                    return value._ln
                plain = value.view(np.ndarray)
                node = builder.const(plain, baked=True, origin="view of an array written through another view",
                                     line=line, source_nodes=[value._ln.name], helper=helper)
                builder.hazard("untraced-call", line,
                               "this array shares memory with an array written in place after it was taken "
                               "(a view, or the base of a written view): NumPy's value changed, the recorded one "
                               f"did not, so its trace-time value is baked as constant {node.name}.", [node.name],
                               pending_reach=True,
                               fix="take the view after the write, or copy before writing (x = x.copy())")
                return node
            plain = value.view(np.ndarray)
            if value._lb is not None and value._ln is not None:
                origin = f"value traced in node '{value._lb.name}', used in node '{builder.name}' without " \
                         "input_tensors"
                node = builder.const(plain, baked=True, origin=origin, line=line, helper=helper)
                builder.hazard("untraced-call", line, f"a {origin}: it is baked as constant {node.name}.",
                               [node.name], pending_reach=True)
                return node
            if value._lost is not None:
                lost_line = value._lost_line if value._lost_line is not None else line
                node = builder.const(plain, baked=True, origin=value._lost, line=lost_line, helper=helper)
                builder.hazard("untraced-call", lost_line, f"an array {value._lost} is used: it is baked as "
                               f"constant {node.name}" + (f" (at line {line})." if line != lost_line else "."),
                               [node.name], pending_reach=True)
                return node
            if value._lfp is not None and fingerprint(plain) != value._lfp:
                origin = "array written by code the tracer cannot see (compiled code?)"
                line = value._lost_line if value._lost_line is not None else line
                node = builder.const(plain, baked=True, origin=origin, line=line, helper=helper)
                builder.hazard("untraced-call", line, f"an {origin} is used here; its contents may depend on "
                               f"traced data and are baked as constant {node.name}.", [node.name],
                               pending_reach=True)
                return node
            return builder.const(plain, baked=False, origin=None, line=line, helper=helper)
        if isinstance(value, np.ndarray):
            taint = self.tainted.get(id(value))
            if taint is not None and taint[0]() is value:
                node = builder.const(value, baked=True, origin=taint[1], line=line, helper=helper)
                builder.hazard("untraced-call", line, f"a plain array that received traced data ({taint[1]}) "
                               f"is used here: it is baked as constant {node.name}.", [node.name],
                               pending_reach=True)
                return node
            return builder.const(value, baked=False, origin=None, line=line, helper=helper)
        if isinstance(value, np.generic):
            return builder.const(np.asarray(value), baked=False, origin=None, line=line, helper=helper)
        if as_tensor and isinstance(value, (bool, int, float, complex, list, tuple)):
            return builder.const(np.asarray(value), baked=False, origin=None, line=line, helper=helper)
        return value

    # -------------------------------------------------------------- recording calls
    def record(self, builder: NodeBuilder, row: ops.Row | None, name: str, params: dict[str, Any],
               eager_params: dict[str, Any], result: Any, extra: dict[str, Any] | None = None) -> Any:
        if builder.closed:
            return _strip(result)
        line, location, helper = self.where()
        self._check_numpy_scalars(builder, params, line, location, name)
        reason = ""
        recorded = row is not None and (self.profile == "full" or row.leapp)
        if recorded and extra is not None and "call" in extra and isinstance(result, np.generic):
            scalar_text = (f"{name} on 0-d traced values returns a NumPy scalar ({type(result).__name__}), "
                           "which LEAPP 0.7.2 does not trace (it logs nothing)")
            if self.profile == "leapp":
                traced = _traced_values(params.values(), builder)
                sources = [v._ln.name for v in traced]
                node = builder.const(np.asarray(result), baked=True, origin=f"{name} at line {line}: a NumPy "
                                     "scalar, no longer traced", line=line, source_nodes=sources, helper=helper)
                # Scalars that are already baked constants (an element from iteration, say) broke the chain
                # where they were made; that hazard covers everything computed from them.
                if not all(v._ln.op == "get_attr" and v._ln.meta.get("ln_const") == "baked" for v in traced):
                    builder.hazard("broken-chain", line, f"{scalar_text}: its trace-time value is baked as "
                                   f"constant {node.name}.", [node.name], name=name, location=location)
                return self.wrap(builder, result, node)
        else:
            scalar_text = None
        nodes: Any = None
        if recorded:
            ctx = ops.BuildContext(params, eager_params, result, extra or {}, session=self, builder=builder,
                                   line=line, location=location, helper=helper, name=name)
            try:
                nodes = row.build(ctx)
            except ops.Unsupported as exc:
                recorded = False
                reason = f" with these arguments ({exc})"
        if not recorded:
            return self.untraced(builder, row, name, params, result, line, location, helper, reason)
        if scalar_text is not None and isinstance(nodes, torch.fx.Node):
            builder.hazard("broken-chain", line, f"{scalar_text}; recorded here as a 0-d tensor.", [nodes.name],
                           name=name, location=location)
        if row.leapp:
            # A call LEAPP's own lookup records wrongly (tracing/leapp_defects.py: one dict lookup by name,
            # predicates only for names with defects): our graph is right, LEAPP's export would not be.
            try:
                finding = leapp_defects.find(name, eager_params, result)
            except Exception as exc:  # noqa: BLE001 - a catalogue defect must not stop the user's trace
                finding = None
                builder.hazard("semantic-mismatch", line,
                               f"whether LEAPP 0.7.2 records {name} correctly here could not be checked "
                               f"({type(exc).__name__}: {exc}); our graph records it faithfully.", [],
                               name=name, location=location, severity="warning",
                               fix="compare this call with LEAPP itself (benchmarks/leapp_comparison.py)")
            if finding is not None:
                last = nodes[-1] if isinstance(nodes, list) else nodes
                builder.hazard("semantic-mismatch", line,
                               f"{name} is recorded correctly here, but LEAPP 0.7.2 records it wrongly: "
                               f"{finding.message}.",
                               [last.name] if isinstance(last, torch.fx.Node) else [], name=name, location=location,
                               severity="error" if self.profile == "leapp" else "warning", fix=finding.fix)
        if self.profile == "full" and not row.leapp:
            last = nodes[-1] if isinstance(nodes, list) else nodes
            builder.hazard("untraced-call", line,
                           f"{name} is recorded here, but LEAPP 0.7.2's lookup does not record it: exported with "
                           "LEAPP, its result would be baked as a constant.",
                           [last.name] if isinstance(last, torch.fx.Node) else [], name=name, location=location,
                           severity="warning")
        return self.wrap(builder, result, nodes)

    def wrap(self, builder: NodeBuilder, result: Any, nodes: Any) -> Any:
        TracedArray = _array.TracedArray  # noqa: N806

        if isinstance(nodes, list):
            return type(result)(self.wrap(builder, r, n) for r, n in zip(result, nodes, strict=False))
        if isinstance(result, np.ndarray):
            array = result.view(np.ndarray) if isinstance(result, TracedArray) else result
        elif isinstance(result, (np.generic, bool, int, float, complex)):
            array = np.asarray(result)
        else:
            return result
        traced = array.view(TracedArray)
        traced._lb, traced._ln = builder, nodes
        if self.versions:
            traced._lver = self.versions.get(id(_root(array)), 0)
        if isinstance(nodes, torch.fx.Node):
            nodes.meta["ln_shape"] = array.shape
            dtype_name = _DTYPE_NAMES.get(array.dtype)
            if dtype_name is None:
                dtype_name = _DTYPE_NAMES[array.dtype] = array.dtype.name
            nodes.meta["ln_dtype"] = dtype_name
        return traced

    def untraced(self, builder: NodeBuilder, row: ops.Row | None, name: str, params: dict[str, Any],
                 result: Any, line: int | None, location: str | None, helper: str | None, reason: str = "") -> Any:
        sources = [v._ln.name for v in _traced_values(params.values(), builder)]
        in_full = row is not None
        lookup = "LEAPP 0.7.2's lookup" if self.profile == "leapp" else "the lookup"
        why = f"{name} is not in {lookup}{reason}"
        if self.profile == "leapp" and not reason:
            why += f" (LEAPP logs: \"No torch equivalent for numpy function {name.split('.')[-1]}. " \
                   "Operation will not be traced.\")"
        where = f" (called from {location})" if location else ""
        if isinstance(result, (tuple, list)) and all(isinstance(r, (np.ndarray, np.generic)) for r in result):
            parts = []
            wrapped = []
            for item in result:
                node = builder.const(np.asarray(item), baked=True, origin=f"{name} at line {line}", line=line,
                                     source_nodes=sources, helper=helper)
                parts.append(node.name)
                wrapped.append(self.wrap(builder, item, node))
            builder.hazard("untraced-call", line, f"{why}{where}: its results are computed once, from the "
                           f"trace-time inputs, and baked into the graph as constants {', '.join(parts)}.",
                           parts, name=name, location=location, pending_reach=True,
                           recorded_by_full=in_full and self.profile == "leapp")
            return type(result)(wrapped)
        if isinstance(result, (np.ndarray, np.generic)):
            array = np.asarray(_strip(result))
            if array.dtype.kind not in "biufc":
                return _strip(result)
            node = builder.const(array, baked=True, origin=f"{name} at line {line}", line=line,
                                 source_nodes=sources, helper=helper)
            builder.hazard("untraced-call", line, f"{why}{where}: its result is computed once, from the trace-time "
                           f"inputs, and baked into the graph as constant {node.name}.",
                           [node.name], name=name, location=location, pending_reach=True,
                           recorded_by_full=in_full and self.profile == "leapp")
            return self.wrap(builder, result, node)
        if result is None:
            for value in _arrays_in(params.values()):
                modified_in_place(value, name, line=line, report=False)
            builder.hazard("untraced-call", line, f"{why}{where}: it modifies its array arguments in place, which "
                           "the tracer does not record; each modified array is baked as a constant wherever it is "
                           "used.", sources, name=name, location=location)
            return result
        builder.hazard("untraced-call", line, f"{why}{where}: it returns a Python value ({_short(result)}) fixed "
                       "at trace time; whatever uses it is frozen in the graph.", sources, name=name,
                       location=location, recorded_by_full=in_full and self.profile == "leapp")
        return result

    def _check_numpy_scalars(self, builder: NodeBuilder, params: dict[str, Any], line: int | None,
                             location: str | None, name: str) -> None:
        for value in params.values():
            if isinstance(value, np.generic) and not isinstance(value, np.bool_):
                builder.hazard("numpy-scalar", line,
                               f"a NumPy scalar ({type(value).__name__}({value!r})) is an operand of {name}. LEAPP's "
                               "documentation says NumPy scalar operands raise NotImplementedError while tracing; "
                               "LEAPP 0.7.2 as measured records them, but torch treats them as weakly typed, so "
                               "with a wider scalar (np.float64 on float32 data) the exported dtype differs from "
                               "NumPy's" + (". Recorded here with NumPy's dtype." if self.profile == "full" else "."),
                               [], location=location)
                return

    def written_into_plain(self, builder: NodeBuilder, target: Any, name: str) -> None:
        """A plain ndarray received traced data through ``out=``: remember it, bake it where used."""
        line, location, _ = self.where()
        origin = f"written by {name}(..., out=...) at line {line}"
        self.tainted[id(target)] = (weakref.ref(target), origin)
        builder.hazard("untraced-call", line, f"{name} writes traced data into a plain array through out=; "
                       "the tracer cannot follow it, so that array is baked wherever it is used.", [],
                       name=name, location=location, pending_reach=False)

    # -------------------------------------------------------------- indexing
    def getitem(self, array: Any, key: Any, plain_key: Any, *, iterating: bool = False) -> Any:
        from .array import _as_watch, _find_builder

        key_tuple = key if type(key) is tuple else (key,)
        builder = array._lb if array._lb is not None else _find_builder(key_tuple)
        with self.eager():
            eager = array.view(np.ndarray)[plain_key]
        if builder is None:
            return _as_watch(eager) if isinstance(eager, np.ndarray) else eager
        if builder.closed:
            return _strip(eager)
        line, location, helper = self.where()
        text = _key_text(key_tuple)

        def emit(op: str, target: Any, args: tuple[Any, ...], kwargs: dict[str, Any] | None = None):
            return builder.emit(op, target, args, kwargs, line=line, numpy=f"x{text}", location=location,
                                helper=helper)

        source = self.graph_value(builder, array, line, as_tensor=True, helper=helper)
        scalar_result = not isinstance(eager, np.ndarray)
        if scalar_result and self.profile == "leapp":
            node = builder.const(np.asarray(eager), baked=True,
                                 origin=f"x{text} at line {line}: a NumPy scalar, no longer traced",
                                 line=line, source_nodes=[source.name], helper=helper)
            what = "iterating over a 1-D traced array yields" if iterating else f"x{text} removes every axis and gives"
            builder.hazard("broken-chain", line,
                           f"{what} a NumPy scalar ({type(eager).__name__}), which is not traced: its trace-time "
                           f"value is baked as constant {node.name}.", [node.name], location=location)
            return self.wrap(builder, eager, node)
        graph_key, reversed_dims, advanced = self._graph_key(builder, array, key_tuple, line, helper)
        if reversed_dims and advanced:
            node = builder.const(np.asarray(eager), baked=True, origin=f"x{text} at line {line}", line=line,
                                 source_nodes=[source.name], helper=helper)
            builder.hazard("reversed-slice", line,
                           f"x{text} mixes a reversed slice with index arrays, which the tracer cannot record; "
                           f"its trace-time value is baked as constant {node.name}.", [node.name],
                           location=location, severity="error")
            return self.wrap(builder, eager, node)
        node = emit("call_function", operator.getitem,
                    (source, graph_key if len(graph_key) != 1 else graph_key[0]))
        if reversed_dims:
            if self.profile == "full":
                node = emit("call_function", torch.flip, (node, tuple(reversed_dims)))
                builder.hazard("reversed-slice", line,
                               f"x{text} has a negative step; recorded here as a slice followed by torch.flip. "
                               "LEAPP 0.7.2 records the slice unreversed (torch has no negative strides), so "
                               "its export would return the elements in the wrong order.", [node.name],
                               location=location)
            else:
                builder.hazard("reversed-slice", line,
                               f"x{text} reverses the eager value, but the recorded graph slices without "
                               "reversing (torch has no negative strides): the export returns these elements in "
                               "the original order.", [node.name], location=location)
        if scalar_result:
            what = "iterating over a 1-D traced array yields" if iterating else f"x{text} removes every axis and gives"
            builder.hazard("broken-chain", line,
                           f"{what} a NumPy scalar; recorded here as a 0-d tensor. LEAPP 0.7.2 stops tracing "
                           "there and bakes the value.", [node.name], location=location)
        return self.wrap(builder, eager, node)

    def _graph_key(self, builder: NodeBuilder, array: Any, key_tuple: tuple[Any, ...], line: int | None,
                   helper: str | None, *, for_setitem: bool = False) -> tuple[tuple[Any, ...], list[int], bool]:
        """Translate a NumPy key: traced index arrays become int64 nodes, reversed slices positive ones
        (their output dims are returned so the caller can flip them), lists become constants."""
        from .array import TracedArray

        ndim = array.ndim
        consumed = 0
        for comp in key_tuple:
            if comp is None or comp is Ellipsis:
                continue
            if isinstance(comp, np.ndarray) and comp.dtype == np.bool_:
                consumed += max(comp.ndim, 1)
            else:
                consumed += 1
        graph_key: list[Any] = []
        reversed_dims: list[int] = []
        advanced = False
        in_dim = 0
        out_dim = 0
        for comp in key_tuple:
            if comp is None:
                graph_key.append(None)
                out_dim += 1
            elif comp is Ellipsis:
                graph_key.append(Ellipsis)
                in_dim += ndim - consumed
                out_dim += ndim - consumed
            elif isinstance(comp, slice):
                bounds = []
                for part in (comp.start, comp.stop, comp.step):
                    if isinstance(part, TracedArray):
                        part = int(part)  # reported as a value extraction by __int__
                    elif isinstance(part, np.integer):
                        part = int(part)
                    bounds.append(part)
                start, stop, step = bounds
                if step is not None and step < 0:
                    size = array.shape[in_dim]
                    idx = range(*slice(start, stop, step).indices(size))
                    if len(idx) == 0:
                        graph_key.append(slice(0, 0, None))
                    elif for_setitem:
                        graph_key.append(builder.const(np.asarray(list(idx), dtype=np.int64), baked=False,
                                                       origin=None, line=line, helper=helper))
                        advanced = True
                    else:
                        graph_key.append(slice(idx[-1], idx[0] + 1, -step if step != -1 else None))
                        reversed_dims.append(out_dim)
                else:
                    graph_key.append(slice(start, stop, step))
                in_dim += 1
                out_dim += 1
            elif isinstance(comp, (bool, np.bool_)):
                graph_key.append(bool(comp))
                out_dim += 1
            elif isinstance(comp, (int, np.integer)):
                graph_key.append(int(comp))
                in_dim += 1
            else:
                if isinstance(comp, TracedArray):
                    plain = comp.view(np.ndarray)
                    value = self.graph_value(builder, comp, line, as_tensor=True, helper=helper)
                else:
                    plain = np.asarray(comp)
                    if plain.dtype.kind in "iu" and plain.dtype != np.int64:
                        plain = plain.astype(np.int64)
                    value = builder.const(plain, baked=False, origin=None, line=line, helper=helper)
                if plain.dtype.kind in "iu" and plain.dtype != np.int64 and isinstance(value, torch.fx.Node) \
                        and value.op != "get_attr":
                    value = builder.emit("call_method", "to", (value, torch.int64), line=line,
                                         numpy="index array (int64 for torch)", location=None, helper=helper)
                graph_key.append(value)
                if plain.ndim > 0:
                    advanced = True
                in_dim += max(plain.ndim, 1) if plain.dtype == np.bool_ else 1
                out_dim += 1
        return tuple(graph_key), reversed_dims, advanced

    def setitem(self, array: Any, key: Any, value: Any) -> None:
        from .array import TracedArray, _find_builder, _plain

        key_tuple = key if type(key) is tuple else (key,)
        builder = array._lb if array._lb is not None else _find_builder((value,) + key_tuple)
        plain = array.view(np.ndarray)
        if builder is None or builder.closed:
            plain[_plain(key)] = _plain(value)
            if array._lb is None:
                array._lfp = fingerprint(plain)
            if self.versions or array._lb is not None:
                array._lver = self.bump(plain)
            return
        line, location, helper = self.where()
        if self.profile == "leapp" and (array._lb is None or array._lost is not None):
            # LEAPP 0.7.2 does not follow traced data written into an untraced array: it stays plain and
            # is baked wherever it meets traced data.
            with self.eager():
                plain[_plain(key)] = _plain(value)
            self.bump(plain)
            if array._lost is None:
                array._lb, array._ln, array._lfp, array._lost_line = builder, None, None, line
                array._lost = f"untraced array that received traced data at line {line}"
                builder.hazard("untraced-call", line,
                               f"traced data is written into an untraced array (x{_key_text(key_tuple)} = ...): "
                               "LEAPP 0.7.2 does not record the write, so that array is baked as a constant "
                               "wherever it is used (it logs nothing).", [], location=location)
            return
        if self._writes_back(array, plain, key, value):
            # `z[1:3] *= 2`: Python writes the modified view back; the only write since z got its node is
            # the one through that very view, and this assignment covers exactly its region.
            base = array._ln
        else:
            base = self.graph_value(builder, array, line, as_tensor=True, helper=helper)
        graph_key, _, _ = self._graph_key(builder, array, key_tuple, line, helper, for_setitem=True)
        if isinstance(value, (TracedArray, np.ndarray, np.generic)):
            graph_val = self.graph_value(builder, value, line, as_tensor=True, helper=helper)
        else:
            graph_val = value
        with self.eager():
            plain[_plain(key)] = _plain(value)
        array._lver = self.bump(plain)
        node = builder.emit("call_function", torch_impl.setitem,
                            (base, graph_key if len(graph_key) != 1 else graph_key[0], graph_val),
                            line=line, numpy=f"x{_key_text(key_tuple)} = ...", location=location, helper=helper)
        node.meta.update(ln_shape=plain.shape, ln_dtype=plain.dtype.name)
        array._lb, array._ln, array._lost, array._lfp = builder, node, None, None

    def _writes_back(self, array: Any, plain: np.ndarray, key: Any, value: Any) -> bool:
        from .array import TracedArray, _plain

        if not (isinstance(value, TracedArray) and array._ln is not None and array._lb is value._lb):
            return False
        current = self.versions.get(id(_root(plain)), 0)
        if not (value._lver == current == array._lver + 1):
            return False
        try:
            region = plain[_plain(key)]
        except (IndexError, TypeError):
            return False
        region_info = region.__array_interface__ if isinstance(region, np.ndarray) else None
        value_info = value.__array_interface__
        return (region_info is not None and region_info["data"][0] == value_info["data"][0]
                and region.shape == value.shape and region.strides == value.strides)

    def iterate(self, array: Any) -> Iterator[Any]:
        if array.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        return iter([self.getitem(array, i, i, iterating=True) for i in range(array.shape[0])])

    # -------------------------------------------------------------- finishing
    def finish(self) -> list[Node]:
        open_nodes = [b.name for b in self.builders.values() if not b.closed]
        if open_nodes:
            raise TraceError(f"node(s) {', '.join(repr(n) for n in open_nodes)} received inputs but no "
                             "annotate.output_tensors(...) call")
        return [builder.finish() for builder in self.builders.values()]


def extracted(array: Any, kind: str, what: str, severity: str | None = None) -> None:
    """A Python value left traced data (``kind`` is value-extraction or data-dependent-branch)."""
    sess = ACTIVE
    if sess is None or sess.suspended or array._lb is None or array._lb.closed or array._lb.session is not sess:
        return
    builder = array._lb
    line, location, _ = sess.where()
    nodes = [array._ln.name] if array._ln is not None else []
    if kind == "data-dependent-branch":
        message = (f"the truth value of traced data decides control flow here ({what}): the graph holds only "
                   "the branch taken during tracing" + (" (LEAPP logs an error for this)." if sess.profile == "leapp"
                                                        else "."))
    elif kind == "broken-chain":
        message = f"{what}, which are not traced: whatever is computed from them is baked into the graph."
    else:
        message = (f"a Python value is extracted from traced data ({what}): it is fixed at its trace-time value "
                   "and whatever uses it is frozen in the graph.")
    builder.hazard(kind, line, message, nodes, location=location, severity=severity)


def modified_in_place(array: Any, name: str, *, line: int | None = None, report: bool = True) -> None:
    """``array`` was changed by something the tracer does not record: it is baked wherever it is used."""
    sess = ACTIVE
    if sess is None or sess.suspended:
        return
    if line is None:
        line = sess.where()[0]
    sess.bump(array)
    if array._lb is None:
        array._lfp = -1  # a watch array whose new contents the tracer never saw: baked where used
        array._lost_line = line
        return
    if array._lb.closed:
        return
    array._lost = f"modified in place by {name} at line {line}"
    array._lost_line = line
    array._ln = None
    if report:
        array._lb.hazard("untraced-call", line, f"{name} modifies a traced array in place, which the tracer does "
                         "not record: the array is baked as a constant wherever it is used.", [], name=name)


def _arrays_in(values: Any) -> list[Any]:
    from .array import TracedArray

    found = []
    for value in values:
        if isinstance(value, TracedArray):
            found.append(value)
        elif type(value) in (list, tuple):
            found.extend(_arrays_in(value))
    return found


def rebind_in_place(array: Any, result: Any) -> None:
    """In-place methods (``x.sort()``, ``x.fill(v)``): the array takes the recorded result's value and node."""
    from .array import TracedArray

    if isinstance(result, TracedArray):
        array.view(np.ndarray)[...] = result.view(np.ndarray)
        array._lb, array._ln, array._lost, array._lfp = result._lb, result._ln, result._lost, result._lfp
        if ACTIVE is not None:
            array._lver = ACTIVE.bump(array)
    elif isinstance(result, np.ndarray):
        array.view(np.ndarray)[...] = result


def _root(array: Any) -> Any:
    """The array that owns ``array``'s memory."""
    while isinstance(array.base, np.ndarray):
        array = array.base
    return array


def _strip(value: Any) -> Any:
    from .array import TracedArray

    if isinstance(value, TracedArray):
        return value.view(np.ndarray)
    return value


def _traced_values(values: Any, builder: NodeBuilder) -> list[Any]:
    from .array import TracedArray

    found = []
    for value in values:
        if isinstance(value, TracedArray) and value._lb is builder and value._ln is not None:
            found.append(value)
        elif type(value) in (list, tuple):
            found.extend(_traced_values(value, builder))
    return found


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _key_text(key_tuple: tuple[Any, ...]) -> str:
    parts = []
    for comp in key_tuple:
        if comp is None:
            parts.append("None")
        elif comp is Ellipsis:
            parts.append("...")
        elif isinstance(comp, slice):
            text = ":".join("" if p is None else str(int(p)) if isinstance(p, (int, np.integer)) else "?"
                            for p in (comp.start, comp.stop, comp.step))
            parts.append(text.rstrip(":") if comp.step is None else text)
        elif isinstance(comp, (int, np.integer, bool)):
            parts.append(str(comp))
        elif isinstance(comp, np.ndarray):
            parts.append(f"<{comp.dtype.name} array {comp.shape}>")
        else:
            parts.append(type(comp).__name__)
    return "[" + ", ".join(p if p else ":" for p in parts) + "]"


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


from . import array as _array  # noqa: E402 - array.py imports this module; bound last to break the cycle
