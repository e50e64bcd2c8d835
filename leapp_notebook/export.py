"""Export: a model file per node (TorchScript ``<node>.pt``, ONNX ``<node>.onnx``) and the pipeline YAML
in the layout LEAPP 0.7.2 writes (``<name>.yaml``), so ``leapp.InferenceManager`` loads it.

Nothing wrong leaves through here: export refuses (``ExportBlocked``) while an error hazard stands or the
probe failed, unless ``force=True`` (then the YAML says ``validated: false`` and lists the hazards).
Files are written into a temporary directory inside the target, every model is loaded back from disk
and checked against the eager cell on fresh inputs, and only then are the files renamed into place:
a failure at any step leaves a previous export untouched and no partial file behind.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import logging
import os
import platform
import re
import shutil
import sys
import tempfile
import warnings
from pathlib import Path
from typing import Any, Callable, Iterable

import numpy as np
import torch
import yaml

from .probe import compare, draw_inputs, graph_key
from .tracing.types import ExportBlocked, Node, TraceError

__all__ = ["export", "FORMATS"]

FORMATS = {"jit": ".pt", "onnx": ".onnx"}
ONNX_OPSET = 20  # what LEAPP 0.7.2 writes
LEAPP_CONFIG_VERSION = "1.3"
RELOAD_CHECKS = 4  # fresh input sets each written model is checked on
_SAFE_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*")


# ------------------------------------------------------------------------------------------
# arguments
# ------------------------------------------------------------------------------------------

def _formats(formats: Any) -> tuple[str, ...]:
    if isinstance(formats, str):
        formats = [f.strip() for f in formats.split(",") if f.strip()]
    try:
        chosen = tuple(dict.fromkeys(formats))
    except TypeError as exc:
        raise TraceError(f"formats must be a list of {sorted(FORMATS)}, got {formats!r}") from exc
    unknown = [f for f in chosen if f not in FORMATS]
    if unknown or not chosen:
        raise TraceError(f"formats={formats!r}: choose from {sorted(FORMATS)} ('jit' writes TorchScript "
                         "<node>.pt, 'onnx' writes <node>.onnx)")
    if "onnx" in chosen:
        try:
            import onnx  # noqa: F401
            import onnxruntime  # noqa: F401
        except ImportError as exc:
            raise TraceError("formats includes 'onnx', which needs the onnx extra: "
                             "pip install 'leapp_notebook[onnx]'") from exc
    return chosen


def _directory(directory: Any) -> Path:
    try:
        path = Path(directory)
    except TypeError as exc:
        raise TraceError(f"directory must be a path, got {type(directory).__name__}") from exc
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

def _current_probe(trace: Any) -> Any:
    """The last probe if it was made for these graphs; otherwise a fresh one (seed 0)."""
    report = trace.last_probe
    if report is None or report.graph_key != graph_key(trace):
        report = trace.probe(seed=0)
    return report


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


def _example_inputs(node: Node) -> tuple[torch.Tensor, ...]:
    # Fresh copies: the exporters must not share memory with the node's recorded sample inputs.
    return tuple(torch.from_numpy(np.array(node.sample_inputs[spec.name], copy=True)) for spec in node.inputs)


def _write_jit(node: Node, path: Path) -> None:
    """TorchScript by tracing: the graphs are static, and scripting rejects the lookup's Python helpers."""
    with _quiet(), torch.no_grad():
        module = torch.jit.trace(node.graph.eval(), _example_inputs(node), check_trace=False, strict=False)
        torch.jit.save(module, str(path))


def _write_onnx(node: Node, path: Path) -> None:
    """ONNX with torch's default (dynamo) exporter, falling back to the TorchScript-based one (which is
    what LEAPP 0.7.2 uses) when the default cannot convert the graph."""
    args = _example_inputs(node)
    names = dict(input_names=[s.name for s in node.inputs], output_names=[s.name for s in node.outputs])
    failures = []
    for dynamo in (True, False):
        try:
            with _quiet():
                torch.onnx.export(node.graph.eval(), args, str(path), dynamo=dynamo, opset_version=ONNX_OPSET,
                                  verbose=False, **names)
            return
        except Exception as exc:  # noqa: BLE001 - try the other exporter, then report both
            text = re.sub(r"\x1b\[[0-9;]*m", "", str(exc)).strip()
            failures.append(f"{'dynamo' if dynamo else 'torchscript'} exporter: {type(exc).__name__}: "
                            f"{text.splitlines()[0] if text else ''}")
            path.unlink(missing_ok=True)
    raise RuntimeError("; ".join(failures))


WRITERS: dict[str, Callable[[Node, Path], None]] = {"jit": _write_jit, "onnx": _write_onnx}


def _load(backend: str, path: Path, node: Node) -> Callable[..., tuple[np.ndarray, ...]]:
    """A model loaded back from disk, as a function of NumPy arrays in input order."""
    if backend == "jit":
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # torch 2.13 steers towards torch.export
            module = torch.jit.load(str(path), map_location="cpu").eval()

        def run_jit(*arrays: np.ndarray) -> tuple[np.ndarray, ...]:
            with torch.no_grad():
                out = module(*[torch.from_numpy(np.ascontiguousarray(a)) for a in arrays])
            return tuple(t.numpy() for t in (out if isinstance(out, (tuple, list)) else (out,)))

        return run_jit
    import onnxruntime

    session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    have = [i.name for i in session.get_inputs()]
    want = [s.name for s in node.inputs]
    if have != want:
        # LEAPP feeds ONNX inputs by position in YAML order: a dropped or reordered input is a wrong model.
        raise RuntimeError(f"the ONNX model's inputs are {have}, the node's are {want} (the exporter dropped "
                           "an input the graph does not use?)")

    def run_onnx(*arrays: np.ndarray) -> tuple[np.ndarray, ...]:
        return tuple(session.run(None, {name: np.ascontiguousarray(a) for name, a in zip(want, arrays,
                                                                                          strict=True)}))

    return run_onnx


def _verify(trace: Any, report: Any, written: list[tuple[Node, str, Path]], forced: bool) -> None:
    """Every written model, loaded from disk, against the eager cell on fresh inputs (against the traced
    graph when forced: the eager cell is then known to disagree, but the file must hold the graph)."""
    ranges = {key: bounds for key, bounds in report.ranges.items() if bounds is not None}
    rng = np.random.default_rng(report.seed + 1)
    models = [(node, backend, path, _load(backend, path, node)) for node, backend, path in written]
    for attempt in range(RELOAD_CHECKS):
        inputs = draw_inputs(trace, rng, ranges)
        eager = None if forced else trace.run_eager(inputs)
        for node, backend, path, run in models:
            arrays = [inputs[node.name][spec.name] for spec in node.inputs]
            got = run(*arrays)
            if forced:
                expected = node(*arrays)
                against = "the traced graph"
            else:
                expected = tuple(np.asarray(eager[node.name][spec.name]) for spec in node.outputs)
                against = "the eager cell"
            for spec, want, have in zip(node.outputs, expected, got, strict=True):
                problem = None
                if have.shape != want.shape:
                    problem = f"shape {have.shape}, expected {want.shape}"
                elif have.dtype != want.dtype:
                    problem = f"dtype {have.dtype}, expected {want.dtype}"
                else:
                    agree, abs_err, _, first = compare(want, have)
                    if not agree:
                        problem = f"at index {first} {have[first].item()!r}, expected {want[first].item()!r}"
                if problem is not None:
                    raise RuntimeError(f"{path.name} ({backend}) loaded back from disk disagrees with "
                                       f"{against} on fresh input set {attempt}: output '{spec.name}' "
                                       f"{problem}")


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


def _tensor(spec: Any) -> dict[str, Any]:
    return {"name": spec.name, "dtype": spec.dtype, "shape": _Flow(int(d) for d in spec.shape),
            "type": "tensor"}


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
    for node in nodes:
        backend, path = models[node.name]
        md5, sha256 = _digests(path)
        parameters = {"model_path": path.name, "md5sum": md5, "sha256sum": sha256, "backend": backend,
                      "warp_segments": 0}
        if backend == "onnx":
            parameters["opset_version"] = ONNX_OPSET
        described[node.name] = {"inputs": [_tensor(s) for s in node.inputs],
                                "outputs": [_tensor(s) for s in node.outputs], "parameters": parameters}
    # An input fed by another node's output in the same cell is a data_flow edge; the rest are pipeline
    # inputs. Outputs no node consumes are pipeline outputs (LEAPP's InferenceManager requires every
    # output to be routed one way or the other).
    data_flow: dict[str, list[str]] = {}
    for n in nodes:
        for input_name, source in getattr(n, "sources", {}).items():
            data_flow.setdefault(source, _Flow()).append(f"{n.name}/{input_name}")
    inputs = {n.name: _Flow(s.name for s in n.inputs if s.name not in getattr(n, "sources", {})) for n in nodes}
    outputs = {n.name: _Flow(s.name for s in n.outputs if f"{n.name}/{s.name}" not in data_flow) for n in nodes}
    pipeline = {"data_flow": data_flow, "feedback_flow": {},
                "inputs": {k: v for k, v in inputs.items() if v},
                "outputs": {k: v for k, v in outputs.items() if v}}
    probe = {"n": report.n, "seed": report.seed, "passed": report.passed, "failed": _Flow(report.failed),
             "baked": _Flow(report.baked)}
    hazards = [{key: value for key, value in h.to_dict().items() if key not in ("fix", "graph_nodes")}
               for h in trace.hazards]
    sections = [{"models": described}, {"pipeline": pipeline}, {"system information": _system_information()},
                {"validated": validated, "probe": probe, "hazards": hazards}]
    return "\n".join(yaml.dump(section, Dumper=_Dumper, default_flow_style=False, sort_keys=False, width=110)
                     for section in sections)


# ------------------------------------------------------------------------------------------
# export
# ------------------------------------------------------------------------------------------

def export(trace: Any, directory: Any, *, formats: Iterable[str] = ("jit",), force: bool = False,
           name: str | None = None) -> list[Path]:
    """Write every node's model(s) and ``<name>.yaml`` (default ``graph.yaml``) into ``directory``.

    ``formats``: model files per node, "jit" (``<node>.pt``) and/or "onnx" (``<node>.onnx``). The YAML
    points each node at the format its cell asked for (``export_with``) when that was written, else at
    the first of ``formats``. Runs a probe (seed 0) first unless one was run on these graphs. Returns
    the written paths, models first, the YAML last.
    """
    chosen = _formats(formats)
    target = _directory(directory)
    yaml_name = _file_name("graph" if name is None else name, "name").removesuffix(".yaml")
    for node_name in trace.nodes:
        _file_name(node_name, "node name")
    if not isinstance(force, bool):
        raise TraceError(f"force must be True or False, got {force!r}")

    report = _current_probe(trace)
    reasons = _blocking_reasons(trace, report)
    if reasons and not force:
        raise ExportBlocked("export refused, nothing was written:\n" + "\n".join(reasons) + "\nApply the "
                            "fixes (each hazard has one), or pass force=True to export anyway with "
                            "`validated: false` and the hazards recorded in the YAML.")

    created = not target.exists()
    target.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".leapp-export-", dir=target))
    done = False
    try:
        written: list[tuple[Node, str, Path]] = []
        for node in trace.nodes.values():
            for backend in chosen:
                path = staging / f"{node.name}{FORMATS[backend]}"
                try:
                    WRITERS[backend](node, path)
                except Exception as exc:
                    raise ExportBlocked(f"export failed, nothing was written: {backend} export of node "
                                        f"'{node.name}': {exc}") from exc
                written.append((node, backend, path))
        try:
            _verify(trace, report, written, forced=bool(reasons))
        except Exception as exc:
            raise ExportBlocked(f"export failed, nothing was written: {exc}") from exc
        models = {}
        for node, backend, path in written:
            if node.name not in models or backend == node.export_with:
                models[node.name] = (backend, path)
        yaml_path = staging / f"{yaml_name}.yaml"
        yaml_path.write_text(_yaml_text(trace, report, models, validated=not reasons))
        final = []
        # Models first, the YAML last: the YAML names each model by checksum, so it must not point
        # at files that are not in place yet.
        for path in [p for _, _, p in written] + [yaml_path]:
            destination = target / path.name
            os.replace(path, destination)
            final.append(destination)
        done = True
        return final
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        if created and not done:
            with contextlib.suppress(OSError):
                target.rmdir()
