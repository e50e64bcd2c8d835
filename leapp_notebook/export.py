"""Export: a model file per node in every format LEAPP 0.7.2 accepts (TorchScript ``<node>.pt``, ONNX
``<node>.onnx``, torch.export ``<node>.pt2``) and the pipeline YAML in the layout LEAPP writes
(``<name>.yaml``), so ``leapp.InferenceManager`` loads it.

Nothing wrong leaves through here: export refuses (``ExportBlocked``) while an error hazard stands or the
probe failed, unless ``force=True`` (then the YAML says ``validated: false`` and lists the hazards).
Every model is serialized in memory, written into a staging folder, loaded back from disk and checked
against the eager cell on fresh inputs; only then is the whole export committed in one step (``_Commit``).
Any failure, a full disk or Ctrl-C included, leaves the previous export byte for byte and nothing partial.
"""

from __future__ import annotations

import contextlib
import copy
import errno
import hashlib
import io
import logging
import operator
import os
import platform
import re
import shutil
import signal
import stat
import sys
import tempfile
import threading
import warnings
from pathlib import Path
from typing import Any, Callable, Iterable

import numpy as np
import torch
import yaml

from .probe import _progress_callback, carried_precisions, compare, draw_inputs, graph_key, kept_module_state
from .tracing.types import EXPORT_WITH, CellError, ExportBlocked, Node, TraceError

__all__ = ["export", "FORMATS", "EXPORT_WITH"]

ONNX_OPSET = 20  # what LEAPP 0.7.2 writes
LEAPP_CONFIG_VERSION = "1.3"
RELOAD_CHECKS = 4  # fresh input sets each written model is checked on
_SAFE_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*")


# ------------------------------------------------------------------------------------------
# arguments
# ------------------------------------------------------------------------------------------

def chosen_formats(formats: Any) -> tuple[str, ...]:
    """The chosen formats as LEAPP's canonical backend names (``jit`` -> ``jit-script``), in order."""
    if isinstance(formats, str):
        formats = [f.strip() for f in formats.split(",") if f.strip()]
    try:
        given = tuple(dict.fromkeys(formats))
    except TypeError as exc:
        raise TraceError(f"formats must be a list of {', '.join(EXPORT_WITH)}; got {formats!r}") from exc
    unknown = [f for f in given if f not in FORMATS]
    if unknown or not given:
        raise TraceError(f"formats={formats!r}: choose from {', '.join(EXPORT_WITH)} ('jit' writes TorchScript "
                         "<node>.pt, 'onnx' <node>.onnx, 'pt2' a torch.export <node>.pt2)")
    chosen = tuple(dict.fromkeys(canonical(f) for f in given))
    by_suffix: dict[str, str] = {}
    for backend in chosen:
        other = by_suffix.setdefault(SUFFIX[backend], backend)
        if other != backend:
            raise TraceError(f"formats: {other} and {backend} both write <node>{SUFFIX[backend]}; choose one")
    if any(BACKEND[b] == "onnx" for b in chosen):
        try:
            import onnx  # noqa: F401
            import onnxruntime  # noqa: F401
        except ImportError as exc:
            raise TraceError("formats includes 'onnx', which needs the onnx extra: "
                             "pip install 'leapp_notebook[onnx]'") from exc
    return chosen


def _directory(directory: Any) -> Path:
    if directory is None or (isinstance(directory, (str, bytes)) and not directory.strip()):
        raise TraceError("directory is empty: name the folder to export into (it is created if missing)")
    try:
        path = Path(directory)
    except TypeError as exc:
        raise TraceError(f"directory must be a path, got {type(directory).__name__}") from exc
    with contextlib.suppress(OSError):
        if path.exists() and not path.is_dir():
            raise TraceError(f"directory {str(path)!r} is a file: give a directory to export into")
    return path


def _file_name(name: str, what: str) -> str:
    if not isinstance(name, str) or not _SAFE_NAME.fullmatch(name):
        raise TraceError(f"{what} {name!r} cannot be a file name: use letters, digits, '_', '-', '.'")
    return name


# ------------------------------------------------------------------------------------------
# gate
# ------------------------------------------------------------------------------------------

def _probe_needed(trace: Any) -> bool:
    """Whether export must probe first: no probe was made for these graphs."""
    report = trace.last_probe
    return report is None or report.graph_key != graph_key(trace)


def _blocking_reasons(trace: Any, report: Any) -> list[str]:
    reasons = [f"  node '{h.node}' line {h.line if h.line is not None else '?'} [{h.kind}]: {h.message}"
               for h in trace.hazards if h.severity == "error"]
    for key in report.failed:
        check = report.outputs[key]
        first = f": {check.first_mismatch.describe()}" if check.first_mismatch else ""
        reasons.append(f"  probe failed for output '{key}' in {check.mismatches}/{report.n} fresh inputs "
                       f"(seed {report.seed}){first}")
    return reasons


# ------------------------------------------------------------------------------------------
# writing models
# ------------------------------------------------------------------------------------------

@contextlib.contextmanager
def _quiet() -> Any:
    """Silence the exporters: torch's tracer warnings, the ONNX exporter's progress prints, its logger
    (whose handlers hold the real stderr) and the TorchScript ONNX exporter's C++ log, which dumps the
    whole IR graph to file descriptor 2 when a conversion fails."""
    onnx_logger = logging.getLogger("torch.onnx")
    level = onnx_logger.level
    onnx_logger.setLevel(logging.ERROR)
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    saved = [os.dup(1), os.dup(2)]
    try:
        with tempfile.TemporaryFile() as sink, warnings.catch_warnings(), \
                contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            warnings.simplefilter("ignore")
            os.dup2(sink.fileno(), 1)
            os.dup2(sink.fileno(), 2)
            try:
                yield
            finally:
                os.dup2(saved[0], 1)
                os.dup2(saved[1], 2)
    finally:
        for fd in saved:
            os.close(fd)
        onnx_logger.setLevel(level)


def _tensor_of(value: Any) -> torch.Tensor:
    """A fresh CPU tensor of a node input (a NumPy array or a torch tensor): the exporters must not share
    memory with the node's recorded sample inputs."""
    if isinstance(value, torch.Tensor):
        return value.detach().cpu().clone()
    return torch.from_numpy(np.array(value, copy=True))


def _numpy_of(value: Any) -> np.ndarray:
    """A model output or an eager value as a NumPy array (tensors and arrays alike)."""
    if isinstance(value, torch.Tensor):
        return value.detach().cpu().numpy()
    return np.asarray(value)


def _example_inputs(node: Node) -> tuple[torch.Tensor, ...]:
    return tuple(_tensor_of(node.sample_inputs[spec.name]) for spec in node.inputs)


def _module(node: Node) -> torch.nn.Module:
    """The node's graph as a plain (not lazily recompiled) GraphModule in eval mode: ``torch.jit.script``
    cannot compile the lazy GraphModule's own class methods."""
    graph = node.graph
    return torch.fx.GraphModule(graph, graph.graph).eval()


def _first_line(exc: BaseException) -> str:
    text = re.sub(r"\x1b\[[0-9;]*m", "", str(exc)).strip()
    return f"{type(exc).__name__}: {text.splitlines()[0] if text else ''}".rstrip(": ")


def _saved_jit(module: Any) -> bytes:
    buffer = io.BytesIO()
    torch.jit.save(module, buffer)  # into memory: a full disk is an OSError at write time, not an abort
    return buffer.getvalue()


def _jit_script(node: Node) -> bytes:
    """TorchScript by scripting (LEAPP's ``jit`` / ``jit-script``); a graph scripting rejects (a helper
    TorchScript cannot compile) is traced instead: the graphs are static, so the two hold the same ops."""
    with _quiet(), torch.no_grad():
        try:
            return _saved_jit(torch.jit.script(_module(node)))
        except Exception:  # noqa: BLE001 - fall back to tracing; the reload check verifies either
            return _saved_jit(torch.jit.trace(_module(node), _example_inputs(node), check_trace=False,
                                              strict=False))


def _jit_trace(node: Node) -> bytes:
    """TorchScript by tracing (LEAPP's ``jit-trace``)."""
    with _quiet(), torch.no_grad():
        return _saved_jit(torch.jit.trace(_module(node), _example_inputs(node), check_trace=False, strict=False))


def onnx_names(node: Node) -> tuple[list[str], list[str]]:
    """The node's input and output names in its ONNX model and in the YAML that points at it, as LEAPP 0.7.2's ONNX
    backend names them (``onnx_export_backend._handle_duplicate_io_names``): ONNX has one namespace for a graph's
    inputs and outputs, so a name that is both (a recurrent state, ``hist`` in and ``hist`` out) becomes ``hist_in``
    and ``hist_out``; where one of those is taken as well, LEAPP refuses the node, and so does this."""
    inputs = [spec.name for spec in node.inputs]
    outputs = [spec.name for spec in node.outputs]
    overlaps = sorted(set(inputs) & set(outputs))
    if not overlaps:
        return inputs, outputs
    used = set(inputs) | set(outputs)
    renamed_in: dict[str, str] = {}
    renamed_out: dict[str, str] = {}
    for name in overlaps:
        new_in, new_out = f"{name}_in", f"{name}_out"
        if new_in in used or new_out in used:
            raise RuntimeError(f"input and output '{name}' share a name, which ONNX cannot hold, and the names LEAPP "
                               f"gives them instead, '{new_in}' and '{new_out}', are taken: rename one of them")
        renamed_in[name], renamed_out[name] = new_in, new_out
        used.discard(name)
        used.update((new_in, new_out))
    return [renamed_in.get(n, n) for n in inputs], [renamed_out.get(n, n) for n in outputs]


# Ops whose Python-number operands torch also takes as tensors, by name (a torch function, an ``operator`` function or
# a Tensor method of that name): the argument positions (a method's ``self`` is 0) and keywords of those operands.
# ``alpha`` (add, sub), ``rounding_mode`` (div) and every other parameter stay as they are.
_BINARY = ((0, 1), ("other", "exponent"))
_SCALAR_OPERANDS: dict[str, tuple[tuple[int, ...], tuple[str, ...]]] = {
    **dict.fromkeys(("add", "sub", "subtract", "rsub", "mul", "multiply", "div", "divide", "true_divide", "truediv",
                     "floor_divide", "floordiv", "remainder", "mod", "fmod", "pow", "eq", "ne", "not_equal", "lt",
                     "less", "le", "less_equal", "gt", "greater", "ge", "greater_equal"), _BINARY),
    "clamp": ((1, 2), ("min", "max")), "clip": ((1, 2), ("min", "max")),
    "where": ((1, 2), ("input", "other")),
}


def _scalar_operands(fx_node: torch.fx.Node) -> tuple[tuple[int, ...], tuple[str, ...]] | None:
    """The operand positions of ``fx_node``'s op that may hold a Python number, None for any other op."""
    if fx_node.op == "call_method":
        return _SCALAR_OPERANDS.get(fx_node.target) if isinstance(fx_node.target, str) else None
    if fx_node.op != "call_function":
        return None
    name = getattr(fx_node.target, "__name__", None)
    if name not in _SCALAR_OPERANDS:
        return None
    if fx_node.target is getattr(torch, name, None) or fx_node.target is getattr(operator, name, None) \
            or fx_node.target is getattr(torch.Tensor, name, None):
        return _SCALAR_OPERANDS[name]
    return None


def _exact_float64_scalars(module: torch.fx.GraphModule, args: tuple[torch.Tensor, ...]) -> torch.fx.GraphModule:
    """A copy of ``module`` whose Python-float operands of float64 ops (``x * 0.1`` of a float64 ``x``, the bounds of
    ``np.clip``, the scalar of ``np.where``) are 0-d float64 tensors (buffers), for torch's dynamo ONNX exporter.

    That exporter writes a Python float as a float32 constant cast to the op's dtype (its type promotion wraps the
    number in ``aten.scalar_tensor(v, dtype=float64)``, and the builder gives a Python float of an unbound type
    constraint ONNX's FLOAT), so ``0.1`` became ``0.10000000149011612`` in a float64 model: ``x * 0.1 + 0.3``
    disagreed with the graph by ~1e-8 relative, ``x * 1e-300`` was 0. A float64 tensor is written as it is.

    Only where every floating tensor operand is float64, and the result float64 (or a comparison's bool), does the
    number become a tensor: there a 0-d float64 tensor promotes exactly as the Python float does (the result stays
    float64, the number is taken at double precision either way). A Python float with a float32 tensor stays a
    float32 operation, untouched; so do integer operands (the exporter writes them as int64, exactly). ``module`` and
    its graph are not changed: the copy shares their submodules and buffers."""
    dtypes: dict[torch.fx.Node, torch.dtype] = {}

    class _Dtypes(torch.fx.Interpreter):
        def run_node(self, fx_node: torch.fx.Node) -> Any:
            result = super().run_node(fx_node)
            if isinstance(result, torch.Tensor):
                dtypes[fx_node] = result.dtype
            return result

    graph = copy.deepcopy(module.graph)
    copied = torch.fx.GraphModule(module, graph)
    with torch.no_grad():
        _Dtypes(copied).run(*args)  # the graphs are static: the dtypes are those of every input
    constants: dict[str, torch.fx.Node] = {}  # by float.hex(): 0.0 and -0.0 are two constants
    changed = False
    for fx_node in list(graph.nodes):
        operands = _scalar_operands(fx_node)
        if operands is None or dtypes.get(fx_node) not in (torch.float64, torch.bool):
            continue
        floating = [dtypes.get(arg) for arg in fx_node.all_input_nodes]
        floating = [dtype for dtype in floating if dtype is not None and dtype.is_floating_point]
        if any(arg not in dtypes for arg in fx_node.all_input_nodes) or not floating \
                or any(dtype != torch.float64 for dtype in floating):
            continue
        positions, keywords = operands
        slots = [(i, fx_node.args[i]) for i in positions if i < len(fx_node.args)]
        slots += [(k, fx_node.kwargs[k]) for k in keywords if k in fx_node.kwargs]
        for slot, value in slots:
            if not isinstance(value, float):  # a Python float (np.float64 too); never a bool or an int
                continue
            key = float(value).hex()
            constant = constants.get(key)
            if constant is None:
                name = f"_onnx_float64_{len(constants)}"
                while hasattr(copied, name):
                    name += "_"
                copied.register_buffer(name, torch.tensor(float(value), dtype=torch.float64))
                with graph.inserting_before(fx_node):  # before its first user; the nodes are in order
                    constant = constants[key] = graph.get_attr(name)
            if isinstance(slot, int):
                fx_node.update_arg(slot, constant)
            else:
                fx_node.update_kwarg(slot, constant)
            changed = True
    if not changed:
        return module
    graph.lint()
    copied.recompile()
    return copied


def _onnx(node: Node, exporters: tuple[bool, ...]) -> bytes:
    """ONNX through torch's exporters in order (dynamo: True, the TorchScript-based one: False). The dynamo exporter
    gets the graph with exact float64 scalars (``_exact_float64_scalars``); the TorchScript-based one writes a
    Python float as a double already, and gets the graph as it is."""
    args = _example_inputs(node)
    input_names, output_names = onnx_names(node)
    names = dict(input_names=input_names, output_names=output_names)
    failures = []
    for dynamo in exporters:
        buffer = io.BytesIO()
        try:
            with _quiet():
                module = _exact_float64_scalars(_module(node), args) if dynamo else _module(node)
                program = torch.onnx.export(module, args, None if dynamo else buffer, dynamo=dynamo,
                                            opset_version=ONNX_OPSET, verbose=False, **names)
                if dynamo:
                    program.save(buffer)
            return buffer.getvalue()
        except Exception as exc:  # noqa: BLE001 - try the other exporter, then report both
            failures.append(f"{'dynamo' if dynamo else 'torchscript'} exporter: {_first_line(exc)}")
    raise RuntimeError("; ".join(failures))


def _onnx_dynamo(node: Node) -> bytes:
    """LEAPP's ``onnx`` / ``onnx-dynamo``: torch's default (dynamo) exporter, falling back to the
    TorchScript-based one when the default cannot convert the graph."""
    return _onnx(node, (True, False))


def _onnx_torchscript(node: Node) -> bytes:
    """LEAPP's ``onnx-torchscript``: the TorchScript-based exporter only (``dynamo=False``)."""
    return _onnx(node, (False,))


def _exported_program(node: Node) -> bytes:
    """LEAPP's ``exported-program`` / ``pt2``: ``torch.export`` (strict=False, as LEAPP's default)."""
    with _quiet(), torch.no_grad():
        program = torch.export.export(_module(node), _example_inputs(node), strict=False)
        buffer = io.BytesIO()
        torch.export.save(program, buffer)
    return buffer.getvalue()


# canonical export_with -> (model bytes of a node, file suffix, the YAML's ``backend``)
WRITERS: dict[str, Callable[[Node], bytes]] = {
    "jit-script": _jit_script, "jit-trace": _jit_trace, "onnx-dynamo": _onnx_dynamo,
    "onnx-torchscript": _onnx_torchscript, "exported-program": _exported_program,
}
SUFFIX = {"jit-script": ".pt", "jit-trace": ".pt", "onnx-dynamo": ".onnx", "onnx-torchscript": ".onnx",
          "exported-program": ".pt2"}
BACKEND = {"jit-script": "jit", "jit-trace": "jit", "onnx-dynamo": "onnx", "onnx-torchscript": "onnx",
           "exported-program": "pt2"}
ALIASES = {"jit": "jit-script", "onnx": "onnx-dynamo", "pt2": "exported-program"}
assert set(EXPORT_WITH) == set(WRITERS) | set(ALIASES)
FORMATS = {name: SUFFIX[ALIASES.get(name, name)] for name in EXPORT_WITH}  # every accepted name -> its suffix


def canonical(name: str) -> str:
    """LEAPP's canonical backend name of an ``export_with`` (``jit`` -> ``jit-script``)."""
    return ALIASES.get(name, name)


def _load(backend: str, path: Path, node: Node) -> Callable[..., tuple[np.ndarray, ...]]:
    """A model loaded back from disk, as a function of arrays (or tensors) in input order returning arrays."""
    kind = BACKEND[canonical(backend)]
    if kind in ("jit", "pt2"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # torch 2.13 steers towards torch.export
            if kind == "jit":
                module = torch.jit.load(str(path), map_location="cpu").eval()
            else:
                module = torch.export.load(str(path)).module()

        def run_torch(*arrays: Any) -> tuple[np.ndarray, ...]:
            with torch.no_grad():
                out = module(*[_tensor_of(a) for a in arrays])
            return tuple(_numpy_of(t) for t in (out if isinstance(out, (tuple, list)) else (out,)))

        return run_torch
    import onnxruntime

    session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    have = [i.name for i in session.get_inputs()]
    want = onnx_names(node)[0]
    if have != want:
        # LEAPP feeds ONNX inputs by position in YAML order: a dropped or reordered input is a wrong model.
        raise RuntimeError(f"the ONNX model's inputs are {have}, the node's are {want} (the exporter dropped "
                           "an input the graph does not use?)")

    def run_onnx(*arrays: Any) -> tuple[np.ndarray, ...]:
        return tuple(session.run(None, {name: np.asarray(_numpy_of(a), order="C")
                                        for name, a in zip(want, arrays, strict=True)}))

    return run_onnx


def _verify(trace: Any, report: Any, written: list[tuple[Node, str, Path]], forced: bool) -> None:
    """Every written model, loaded from disk, against the eager cell on fresh inputs (against the traced
    graph when forced: the eager cell is then known to disagree, but the file must hold the graph)."""
    ranges = {key: bounds for key, bounds in report.ranges.items() if bounds is not None}
    rng = np.random.default_rng(report.seed + 1)
    models = [(node, backend, path, _checked(backend, path, node, "cannot be loaded back", _load, backend, path, node))
              for node, backend, path in written]
    carried = {node.name: carried_precisions(node) for node, _, _ in written}
    for attempt in range(RELOAD_CHECKS):
        inputs = draw_inputs(trace, rng, ranges)
        eager = None if forced else trace.run_eager(inputs, quiet=True)
        for node, backend, path, run in models:
            arrays = [inputs[node.name][spec.name] for spec in node.inputs]
            got = _checked(backend, path, node, "loaded back from disk fails on fresh inputs", run, *arrays)
            if forced:
                expected = tuple(_numpy_of(v) for v in node(*arrays))
                against = "the traced graph"
            else:
                expected = tuple(_numpy_of(eager[node.name][spec.name]) for spec in node.outputs)
                against = "the eager cell"
            for index, (spec, want, have) in enumerate(zip(node.outputs, expected, got, strict=True)):
                problem = None
                if have.shape != want.shape:
                    problem = f"shape {have.shape}, expected {want.shape}"
                elif have.dtype != want.dtype:
                    problem = f"dtype {have.dtype}, expected {want.dtype}"
                else:
                    # A float64 output computed from float32 values (a float32 policy times a float64 NumPy constant)
                    # holds float32's precision: a backend's own float32 kernels (onnxruntime's matmul) round the
                    # last bit otherwise, and float64's tolerance would refuse a correct model for it
                    held = carried[node.name][index]
                    if held is not None and want.dtype.kind == "f" and held.itemsize < want.dtype.itemsize:
                        want, have = want.astype(held), have.astype(held)
                    agree, abs_err, _, first = compare(want, have)
                    if not agree:
                        problem = f"at index {first} {have[first].item()!r}, expected {want[first].item()!r}"
                if problem is not None:
                    if not forced and _graph_disagrees(node, arrays, index, want):
                        # the file holds the graph; the cell computes something else now than when it was traced
                        # (a constant it reads changed in place since: W[:] = ... in a later cell)
                        raise RuntimeError(f"the traced graph of node '{node.name}' no longer agrees with the cell "
                                           f"on fresh input set {attempt} (output '{spec.name}' {problem}): "
                                           "something the cell reads changed since it was traced (a constant "
                                           "written in place by a later cell?); re-run the cell to trace it again")
                    raise RuntimeError(f"{path.name} ({backend}) loaded back from disk disagrees with "
                                       f"{against} on fresh input set {attempt}: output '{spec.name}' "
                                       f"{problem}")




def _checked(backend: str, path: Path, node: Node, what: str, call: Callable[..., Any], *args: Any) -> Any:
    """``call(*args)``; a failure names the file, its backend and node (the converters' own words named none, or a
    staging file that is gone by the time it is read: found by an exploration session)."""
    try:
        return call(*args)
    except Exception as exc:  # noqa: BLE001 - onnxruntime, torch.jit and torch.export raise their own kinds
        text = _first_line(exc).replace(str(path), path.name).replace(str(path.parent) + os.sep, "")
        raise RuntimeError(f"{path.name} ({backend}) of node '{node.name}' {what}: {text}") from exc


def _copy_xattrs(source: Path, target: Path) -> None:
    """The folder's extended attributes, POSIX ACLs among them (``system.posix_acl_*``), onto the folder swapped in
    for it: they were lost with the previous folder (found by an exploration session). Where the file system or the
    user's rights refuse one, the others are still copied."""
    try:
        names = os.listxattr(source)
    except (AttributeError, OSError):  # no xattrs on this platform or file system
        return
    for name in names:
        with contextlib.suppress(OSError):
            os.setxattr(target, name, os.getxattr(source, name))


def _graph_disagrees(node: Node, arrays: list[Any], index: int, want: np.ndarray) -> bool:
    """Whether the traced graph itself (not the file written from it) disagrees with the eager cell's output."""
    try:
        have = _numpy_of(node(*arrays)[index])
    except Exception:  # noqa: BLE001 - a graph that fails here: the file's message is the one to give
        return False
    if have.shape != want.shape or have.dtype != want.dtype:
        return True
    return not compare(want, have.astype(want.dtype))[0]


# ------------------------------------------------------------------------------------------
# the YAML
# ------------------------------------------------------------------------------------------

class _Flow(list):
    """A list written inline (``shape: [4]``), as LEAPP writes shapes and pipeline name lists."""


class _Dumper(yaml.SafeDumper):
    pass


_Dumper.add_representer(_Flow, lambda dumper, data: dumper.represent_sequence(
    "tag:yaml.org,2002:seq", data, flow_style=True))


def _digests(path: Path) -> tuple[str, str]:
    data = path.read_bytes()
    return hashlib.md5(data).hexdigest(), hashlib.sha256(data).hexdigest()


def _tensor(spec: Any, name: str | None = None) -> dict[str, Any]:
    return {"name": spec.name if name is None else name, "dtype": spec.dtype,
            "shape": _Flow(int(d) for d in spec.shape), "type": "tensor"}


def _system_information() -> dict[str, Any]:
    try:
        release = platform.freedesktop_os_release()
        os_name = f"{release.get('NAME', '')} {release.get('VERSION_ID', '')}".strip()
    except OSError:
        os_name = platform.platform()
    try:
        from importlib.metadata import version

        leapp_version = version("leapp")
    except Exception:  # noqa: BLE001 - LEAPP is optional; the layout does not depend on it
        leapp_version = None
    from . import __version__

    return {"cuda version": str(torch.version.cuda), "leapp config version": LEAPP_CONFIG_VERSION,
            "leapp version": leapp_version, "os": os_name, "python version": platform.python_version(),
            "torch version": str(torch.__version__), "warp version": None,
            "exported by": f"leapp_notebook {__version__}"}


def _yaml_text(trace: Any, report: Any, models: dict[str, tuple[str, Path]], validated: bool) -> str:
    nodes = list(trace.nodes.values())
    described = {}
    renamed: dict[str, tuple[dict[str, str], dict[str, str]]] = {}  # node -> (its inputs', its outputs' YAML names)
    for node in nodes:
        backend, path = models[node.name]
        md5, sha256 = _digests(path)
        kind = BACKEND[canonical(backend)]
        parameters = {"model_path": path.name, "md5sum": md5, "sha256sum": sha256, "backend": kind,
                      "warp_segments": 0}
        if kind == "onnx":
            parameters["opset_version"] = ONNX_OPSET
        elif kind == "pt2":
            parameters["torch_version"] = str(torch.__version__)  # LEAPP's pt2 backend metadata
        # an ONNX model's names, which the YAML must use: LEAPP feeds and reads the model by them
        names = onnx_names(node) if kind == "onnx" else ([s.name for s in node.inputs], [s.name for s in node.outputs])
        renamed[node.name] = (dict(zip([s.name for s in node.inputs], names[0], strict=True)),
                              dict(zip([s.name for s in node.outputs], names[1], strict=True)))
        described[node.name] = {"inputs": [_tensor(s, n) for s, n in zip(node.inputs, names[0], strict=True)],
                                "outputs": [_tensor(s, n) for s, n in zip(node.outputs, names[1], strict=True)],
                                "parameters": parameters}
    # An input fed by another node's output in the same cell is a data_flow edge; the rest are pipeline
    # inputs. Outputs no node consumes are pipeline outputs (LEAPP's InferenceManager requires every
    # output to be routed one way or the other).
    data_flow: dict[str, list[str]] = {}
    consumed = set()
    for n in nodes:
        for input_name, source in getattr(n, "sources", {}).items():
            producer, output = source.split("/", 1)
            consumed.add(source)
            shown = f"{producer}/{renamed[producer][1].get(output, output)}" if producer in renamed else source
            data_flow.setdefault(shown, _Flow()).append(f"{n.name}/{renamed[n.name][0][input_name]}")
    inputs = {n.name: _Flow(renamed[n.name][0][s.name] for s in n.inputs if s.name not in getattr(n, "sources", {}))
              for n in nodes}
    outputs = {n.name: _Flow(renamed[n.name][1][s.name] for s in n.outputs if f"{n.name}/{s.name}" not in consumed)
               for n in nodes}
    pipeline = {"data_flow": data_flow, "feedback_flow": {},
                "inputs": {k: v for k, v in inputs.items() if v},
                "outputs": {k: v for k, v in outputs.items() if v}}
    projected = report.to_dict()
    probe = {key: _Flow(projected[key]) if isinstance(projected[key], list) else projected[key]
             for key in ("n", "seed", "passed", "failed", "baked")}
    hazards = [{key: value for key, value in h.to_dict().items() if key not in ("fix", "graph_nodes")}
               for h in trace.hazards]
    sections = [{"models": described}, {"pipeline": pipeline}, {"system information": _system_information()},
                {"validated": validated, "probe": probe, "hazards": hazards}]
    return "\n".join(yaml.dump(section, Dumper=_Dumper, default_flow_style=False, sort_keys=False, width=110)
                     for section in sections)


# ------------------------------------------------------------------------------------------
# the file system: staged, then committed in one step
# ------------------------------------------------------------------------------------------

_STAGING_PREFIX = ".leapp-export-"
_PREVIOUS_PREFIX = ".leapp-previous-"


def _failed(path: Any, cause: BaseException | str) -> ExportBlocked:
    """The one-line ``ExportBlocked`` of a file system failure: the path and the cause."""
    if isinstance(cause, OSError):
        reason = cause.strerror or str(cause)
        errno_name = errno.errorcode.get(cause.errno or 0)
        reason = f"{reason} ({errno_name})" if errno_name else reason
    else:
        reason = str(cause)
    text = f"export failed, nothing was written: {path}: {reason}"
    return ExportBlocked(" ".join(text.split()))


def _write_file(path: Path, data: bytes, shown: Path) -> None:
    """Write ``data`` to a new file and flush it to the disk; a full disk is an ``ExportBlocked``."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError as exc:
        raise _failed(shown, exc) from exc


def _fsync_directory(path: Path) -> None:
    with contextlib.suppress(OSError):  # not every file system lets a directory be opened for fsync
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _make_folders(path: Path) -> list[Path]:
    """Create ``path`` and its missing parents; return the folders created, outermost first."""
    missing = []
    probe = path
    while True:
        try:
            probe.lstat()
        except (FileNotFoundError, NotADirectoryError):  # missing, or under a file: look further up
            missing.append(probe)
            if probe.parent == probe:
                break
            probe = probe.parent
            continue
        except OSError as exc:
            raise _failed(probe, exc) from exc
        if probe.is_symlink() and not probe.exists():
            raise _failed(probe, f"a symbolic link to {os.readlink(probe)}, which does not exist")
        if not probe.is_dir():  # follows a symbolic link to a folder
            raise _failed(probe, "is a file, not a folder")
        break
    created: list[Path] = []
    try:
        for folder in reversed(missing):
            if folder.name in ("", ".", ".."):  # build/.. exists once build does (as mkdir -p takes it)
                continue
            try:
                folder.mkdir()
            except OSError as exc:
                raise _failed(folder, exc) from exc
            created.append(folder)
    except BaseException:
        _remove_folders(created)
        raise
    return created


def _remove_folders(created: list[Path]) -> None:
    for folder in reversed(created):
        with contextlib.suppress(OSError):
            folder.rmdir()


_RENAME_EXCHANGE = 2  # linux/fs.h


def _exchange(a: Path, b: Path) -> None:
    """Swap two directories in one atomic step (Linux ``renameat2(RENAME_EXCHANGE)``). Raises
    ``NotImplementedError`` where the platform or the file system cannot."""
    if not sys.platform.startswith("linux"):
        raise NotImplementedError("no renameat2 on this platform")
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    renameat2 = getattr(libc, "renameat2", None)
    if renameat2 is None:
        raise NotImplementedError("the C library has no renameat2")
    at_fdcwd = -100
    if renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), _RENAME_EXCHANGE) != 0:
        code = ctypes.get_errno()
        if code in (errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP):
            raise NotImplementedError(os.strerror(code))
        raise OSError(code, os.strerror(code), str(b))


def _rename(source: Path, destination: Path) -> None:
    os.replace(source, destination)  # a file: replaced in one step


def _umask() -> int:
    """The process umask, read without changing it where /proc tells it (``os.umask`` sets it, racing
    other threads that create files)."""
    with contextlib.suppress(OSError, ValueError, StopIteration):
        status = Path("/proc/self/status").read_text()
        return int(next(line for line in status.splitlines() if line.startswith("Umask:")).split()[1], 8)
    umask = os.umask(0o022)
    os.umask(umask)
    return umask


def _contains_cwd(folder: Path) -> bool:
    try:
        cwd = Path.cwd().resolve()
    except OSError:
        return False
    return cwd == folder or folder in cwd.parents


class _Commit:
    """One export's files, staged and then committed as one step.

    Swap, when the target holds nothing but a previous export (files of this export's names, nothing else: no
    file of the user's can be lost), belongs to this user and is writable: the files are staged in a new folder
    beside the target, which is exchanged with it in one ``renameat2(RENAME_EXCHANGE)`` (two renames where the
    file system cannot exchange, the previous folder kept until the second one succeeded). A reader sees the old
    export or the new one. Anything another program created in the previous folder meanwhile is moved into the new
    one before the previous folder is removed, and that folder is removed only once it is empty.

    In place, for every other existing target (it holds other files or folders, it belongs to another user, it is
    read-only, it holds the working directory or is a mount point): the files are staged inside the target, then
    each file replaces its namesake, previous files moved aside first and moved back if any step fails; the YAML
    is replaced last. Nothing but this export's own file names is touched, and a target this user cannot write
    stays as it is (the staging folder cannot be made there: ``ExportBlocked``).
    """

    def __init__(self, target: Path, names: list[str], stale: list[str] | None = None):
        self.shown = target
        self.names = names
        self.stale = stale or []  # the previous export's files this one does not rewrite: removed with it
        self.created: list[Path] = []
        self.staging: Path | None = None
        self.in_place = False
        self.real = target

    def stage(self) -> Path:
        target = self.shown
        if target.exists():
            self.real = target.resolve()
            for name in self.names:
                try:
                    info = (self.real / name).lstat()
                except FileNotFoundError:
                    continue
                except OSError as exc:  # a name too long for the file system, ...
                    raise _failed(target / name, exc) from exc
                if stat.S_ISDIR(info.st_mode):
                    raise _failed(target / name, "a folder has the name of a file the export writes")
            parent = self.real.parent
            self.in_place = not self._swappable()
        else:
            if target.is_symlink():
                raise _failed(target, f"a symbolic link to {os.readlink(target)}, which does not exist")
            self.created = _make_folders(target.absolute().parent)
            self.real = target.absolute()
            parent = self.real.parent
        if not self.in_place:
            try:
                self.staging = Path(tempfile.mkdtemp(prefix=_STAGING_PREFIX, dir=parent))
            except OSError as exc:
                if not self.real.exists():
                    self.abort()
                    raise _failed(target, exc) from exc
                self.in_place = True  # a read-only parent, a writable target
        if self.in_place:
            try:
                self.staging = Path(tempfile.mkdtemp(prefix=_STAGING_PREFIX, dir=self.real))
            except OSError as exc:
                raise _failed(target, exc) from exc
        return self.staging

    def commit(self) -> None:
        assert self.staging is not None
        if self.in_place:
            self._replace_files()
            shutil.rmtree(self.staging, ignore_errors=True)
            self.staging = None
        elif self.real.exists():
            self._swap()
        else:
            self._settle_mode(None)
            try:
                _rename(self.staging, self.real)
            except OSError as exc:
                raise _failed(self.shown, exc) from exc
            self.staging = None
            _fsync_directory(self.real.parent)

    def abort(self) -> None:
        """Remove what this export created (after a failure or an interrupt)."""
        if self.staging is not None:
            shutil.rmtree(self.staging, ignore_errors=True)
            self.staging = None
        _remove_folders(self.created)

    # ---------------------------------------------------------------- swap
    def _swappable(self) -> bool:
        """Whether the existing target may be exchanged whole (the class's docstring says when)."""
        real = self.real
        try:
            info = real.stat()
            if hasattr(os, "geteuid") and info.st_uid != os.geteuid():
                return False
            if not os.access(real, os.W_OK | os.X_OK):
                return False
            names = set(self.names) | set(self.stale)
            with os.scandir(real) as entries:
                if any(entry.name not in names or entry.is_dir(follow_symlinks=False) for entry in entries):
                    return False
        except OSError:
            return False
        return not (_contains_cwd(real) or os.path.ismount(real))

    def _settle_mode(self, like: Path | None) -> None:
        """The staged folder gets the target's permissions (``mkdtemp`` makes it owner-only)."""
        assert self.staging is not None
        try:
            if like is not None:
                info = like.stat()
                os.chmod(self.staging, stat.S_IMODE(info.st_mode))
                with contextlib.suppress(OSError):
                    os.chown(self.staging, info.st_uid, info.st_gid)
                _copy_xattrs(like, self.staging)
            else:
                os.chmod(self.staging, 0o777 & ~_umask())
        except OSError as exc:
            raise _failed(self.shown, exc) from exc
        _fsync_directory(self.staging)

    def _swap(self) -> None:
        assert self.staging is not None
        staging, real = self.staging, self.real
        self._settle_mode(real)
        try:
            _exchange(staging, real)  # the staging path now holds the previous export
        except NotImplementedError:
            self._swap_by_renames()
        except OSError as exc:
            raise _failed(self.shown, exc) from exc
        _fsync_directory(real.parent)
        self._retire(self.staging)  # the previous export, wherever the swap left it
        self.staging = None

    def _retire(self, previous: Path) -> None:
        """Remove the previous export's folder after a swap. An entry another program made there between the look
        at the target and the swap is moved into the new folder first; the folder itself goes only when empty
        (``rmdir``), so an entry made during the clean-up is moved too. Where an entry cannot be moved, the folder
        stays, with it."""
        names = set(self.names) | set(self.stale)
        for _ in range(16):
            try:
                with os.scandir(previous) as entries:
                    found = [(entry.name, entry.is_dir(follow_symlinks=False)) for entry in entries]
            except OSError:
                return
            for name, is_dir in found:
                source = previous / name
                try:
                    if name in names and not is_dir:
                        source.unlink()
                    elif not os.path.lexists(self.real / name):
                        _rename(source, self.real / name)
                    else:
                        return  # both folders hold it: nothing of it is removed
                except OSError:
                    return
            try:
                previous.rmdir()
                return
            except OSError:
                continue  # made meanwhile: moved on the next pass

    def _swap_by_renames(self) -> None:
        assert self.staging is not None
        previous = self.real.parent / (_PREVIOUS_PREFIX + self.staging.name.removeprefix(_STAGING_PREFIX))
        try:
            _rename(self.real, previous)
        except OSError as exc:
            raise _failed(self.shown, exc) from exc
        try:
            _rename(self.staging, self.real)
        except BaseException as exc:
            _rename(previous, self.real)  # the previous export back in place
            if isinstance(exc, OSError):
                raise _failed(self.shown, exc) from exc
            raise
        self.staging = previous  # removed by the caller

    # ---------------------------------------------------------------- in place
    def _replace_files(self) -> None:
        """Each new file replaces its namesake in one rename, so a name is never missing; the previous file is kept
        aside first (a hard link, or moved where it cannot be linked: another user's file) and put back if any step
        fails."""
        assert self.staging is not None
        previous = Path(tempfile.mkdtemp(prefix=_PREVIOUS_PREFIX, dir=self.real))
        kept: dict[str, bool] = {}  # previous files kept aside: name -> still in place too (linked, not moved)
        placed: list[str] = []  # new files in place
        try:
            for name in self.names:
                destination = self.real / name
                if os.path.lexists(destination):
                    try:
                        os.link(destination, previous / name, follow_symlinks=False)
                        kept[name] = True
                    except OSError:
                        try:
                            _rename(destination, previous / name)
                        except OSError as exc:
                            raise _failed(self.shown / name, exc) from exc
                        kept[name] = False
                try:
                    _rename(self.staging / name, destination)
                except OSError as exc:
                    raise _failed(self.shown / name, exc) from exc
                placed.append(name)
        except BaseException:
            for name in placed:
                with contextlib.suppress(OSError):
                    if name in kept:
                        _rename(previous / name, self.real / name)
                    else:
                        (self.real / name).unlink()
            for name, linked in kept.items():
                if name not in placed and not linked:
                    with contextlib.suppress(OSError):
                        _rename(previous / name, self.real / name)
            shutil.rmtree(previous, ignore_errors=True)
            raise
        for name in self.stale:  # the previous export's other models go with it (left as they are if they cannot)
            with contextlib.suppress(OSError):
                _rename(self.real / name, previous / name)
        shutil.rmtree(previous, ignore_errors=True)
        _fsync_directory(self.real)


# ------------------------------------------------------------------------------------------
# export
# ------------------------------------------------------------------------------------------

def export(trace: Any, directory: Any, *, formats: Iterable[str] = ("jit",), force: bool = False,
           name: str | None = None, progress: Any = None) -> list[Path]:
    """Write every node's model(s) and ``<name>.yaml`` (default ``graph.yaml``) into ``directory``.

    ``formats``: any ``export_with`` LEAPP 0.7.2 accepts (``EXPORT_WITH``): "jit"/"jit-script" and
    "jit-trace" write ``<node>.pt``, "onnx"/"onnx-dynamo" and "onnx-torchscript" ``<node>.onnx``,
    "pt2"/"exported-program" ``<node>.pt2``. The YAML points each node at the format its cell asked for
    (``export_with``) when a file of that kind was written, else at the first of ``formats``. Runs a probe
    (seed 0) first unless one was run on these graphs. Returns the written paths, models first, the YAML
    last. Every failure is ``ExportBlocked`` and leaves the directory as it was.

    ``progress``: a callable ``(done, total)``, called after each step (the probe when one is run, each model file
    written, loading them all back to check them, the YAML, the last just before the files are swapped into
    ``directory``); raise from it to cancel, which leaves the directory as it was. ``True`` shows a rich progress
    bar on stderr. Torch's ONNX exporter takes a minute and more on a graph of a few thousand ops.
    """
    chosen = chosen_formats(formats)
    target = _directory(directory)
    yaml_name = _file_name("graph" if name is None else name, "name").removesuffix(".yaml")
    for node_name in trace.nodes:
        _file_name(node_name, "node name")
    if not isinstance(force, bool):
        raise TraceError(f"force must be True or False, got {force!r}")
    report_progress, bar = _progress_callback(progress, "exporting")
    try:
        with kept_module_state(trace), _interrupts():  # the user's modules are left as is; Ctrl-C is kept
            return _export(trace, target, chosen, yaml_name, force, report_progress or (lambda done, total: None))
    finally:
        if bar is not None:
            bar.stop()


_INTERRUPTED = [False]  # a Ctrl-C arrived during the export (_interrupts)


@contextlib.contextmanager
def _interrupts() -> Any:
    """Remember a Ctrl-C that arrives during the export, as well as raising it: torch's TorchScript compiler calls
    back into Python (inspect) and swallows the KeyboardInterrupt raised there, so the export went on and replaced
    the previous one (found by an exploration session). ``_export`` raises it again at its next step. Only where
    Python's own handler is in place, in the main thread."""
    _INTERRUPTED[0] = False
    if threading.current_thread() is not threading.main_thread() or \
            signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        yield
        return

    def handler(signum: int, frame: Any) -> None:
        _INTERRUPTED[0] = True
        signal.default_int_handler(signum, frame)

    signal.signal(signal.SIGINT, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)
        _INTERRUPTED[0] = False


def _still_wanted() -> None:
    """Raise the Ctrl-C that arrived during the export, if something swallowed it."""
    if _INTERRUPTED[0]:
        raise KeyboardInterrupt


def _previous_export(trace: Any, target: Path, yaml_name: str, files: list[str], force: bool) -> list[str]:
    """What the folder holds of a previous export under the same YAML name: the previous export's model files of
    the names this export does not write (a re-export with fewer formats left the previous graph's ``node.onnx``
    beside the new ``node.pt``: stale models, found by an exploration session), to be removed with it. Refused
    without ``force``: a YAML this package did not write (a pipeline of yours would be replaced), and one that
    describes nodes this export does not hold (their models would be left out of the pipeline)."""
    path = target / f"{yaml_name}.yaml"
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:  # none there, or none this export could replace either (its own error says why)
        return []
    except UnicodeDecodeError:
        text = ""
    try:
        described = yaml.safe_load(text) if text else None
    except yaml.YAMLError:
        described = None
    ours = isinstance(described, dict) and "exported by: leapp_notebook" in text
    nodes = list(described.get("models") or {}) if ours and isinstance(described.get("models"), dict) else []
    others = [node for node in nodes if node not in trace.nodes]
    if not force and (not ours or others):
        why = (f"it describes node{'s' if len(others) > 1 else ''} {', '.join(repr(n) for n in others)}, which this "
               "export does not hold: its models would be left out of the pipeline" if ours else
               "it was not written by leapp_notebook's export, and would be replaced")
        raise ExportBlocked(f"export refused: nothing was written. {path} exists and {why}. Export every node from "
                            "one trace (one cell), choose another folder or another YAML name (name=...), or pass "
                            "force=True to replace it.")
    written = set(files)
    return sorted({f"{node}{suffix}" for node in nodes for suffix in SUFFIX.values()
                   if f"{node}{suffix}" not in written and (target / f"{node}{suffix}").is_file()})


def _export(trace: Any, target: Path, chosen: tuple[str, ...], yaml_name: str, force: bool,
            progress: Callable[[int, int], None]) -> list[Path]:
    plan = [(node, backend, f"{node.name}{SUFFIX[backend]}") for node in trace.nodes.values()
            for backend in chosen]
    files = [file for _, _, file in plan] + [f"{yaml_name}.yaml"]
    stale = _previous_export(trace, target, yaml_name, files, force)
    probing = _probe_needed(trace)
    steps = int(probing) + len(trace.nodes) * len(chosen) + 2  # the probe, the models, the check, the YAML
    done = 0

    def step() -> None:
        nonlocal done
        _still_wanted()
        done += 1
        progress(done, steps)

    try:
        report = trace.probe(seed=0) if probing else trace.last_probe  # a fresh one (seed 0) unless one is current
    except CellError as exc:  # the cell raised on the probe's inputs: export takes no ranges, the probe does
        raise ExportBlocked(f"export refused: nothing was written. The probe it runs first could not: {exc}. "
                            "Run trace.probe(ranges={name: (low, high)}) with ranges where the cell runs, then "
                            "export again: it uses that probe.") from exc
    if probing:
        step()
    reasons = _blocking_reasons(trace, report)
    if reasons and not force:
        # (a probe that fails with no error hazard has no fix to apply: it is what the mismatch says to look at)
        probed = report.hazards if report is not None else []
        errors = any(h.severity == "error" and not any(h is p for p in probed) for h in trace.hazards)
        advice = "Apply the fixes (each hazard has one)" if errors else \
            "Look at the first mismatch (trace.run_eager and trace.nodes[...] on its inputs reproduce it)"
        raise ExportBlocked("export refused: nothing was written.\n" + "\n".join(reasons) + f"\n{advice}, or pass "
                            "force=True to export anyway with `validated: false` and the hazards recorded in the "
                            "YAML.")

    commit = _Commit(target, files, stale)
    try:
        staging = commit.stage()
        written: list[tuple[Node, str, Path]] = []
        for node, backend, file in plan:
            try:
                data = WRITERS[backend](node)
            except Exception as exc:
                raise ExportBlocked(f"export failed, nothing was written: {backend} export of node "
                                    f"'{node.name}': {_first_line(exc)}") from exc
            _write_file(staging / file, data, target / file)
            written.append((node, backend, staging / file))
            step()
        try:
            _verify(trace, report, written, forced=bool(reasons))
        except Exception as exc:
            raise ExportBlocked(f"export failed, nothing was written: {_first_line(exc)}") from exc
        step()
        models = {}
        for node, backend, path in written:
            wanted = SUFFIX[canonical(node.export_with)] == SUFFIX[backend]
            if node.name not in models or (wanted and not models[node.name][2]):
                models[node.name] = (backend, path, wanted)
        try:
            text = _yaml_text(trace, report, {key: (backend, path) for key, (backend, path, _) in models.items()},
                              validated=not reasons)
        except OSError as exc:  # reading a staged model back for its checksums
            raise _failed(target / Path(exc.filename).name if exc.filename else target, exc) from exc
        _write_file(staging / files[-1], text.encode(), target / files[-1])
        step()  # the last chance to cancel: the swap into the directory follows
        _still_wanted()
        commit.commit()
    except BaseException:
        commit.abort()
        raise
    return [target / file for file in files]
