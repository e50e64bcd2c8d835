"""Run a cell with the real LEAPP 0.7.2 tracer, for comparison with ``leapp_notebook``.

``leapp_notebook``'s ``profile="leapp"`` must reproduce what LEAPP's NumPy lookup tracing records.
This module is the ground truth: it runs a cell source under the installed ``leapp`` package
exactly as a LEAPP user would (``leapp.start`` -> cell with ``annotate.input_tensors`` /
``annotate.output_tensors`` -> ``leapp.stop`` -> ``leapp.compile_graph``), captures what LEAPP logs,
and gives back a callable that runs the exported model (through ``leapp.InferenceManager``) on
new inputs. Benchmarks and the optional comparison tests use it; it is not part of the package.

    from benchmarks.leapp_harness import run_leapp, leapp_outputs_for
    src = '''
    x = annotate.input_tensors("node", {"x": x})
    y = np.interp(x, [0, 1], [0, 10]) + x
    annotate.output_tensors("node", {"y": y}, export_with="jit")
    '''
    res = run_leapp(src, {"x": np.zeros(4, np.float32)})
    res["raised"], res["warnings"]           # None, ['No torch equivalent for numpy function interp. ...']
    leapp_outputs_for(res, {"x": fresh})     # {'y': array(...)} from the exported model

The cell runs with ``np``, ``annotate`` and every entry of ``inputs`` bound in its namespace (a copy of
each: ``torch.Tensor`` inputs stay tensors, anything else becomes an ``np.ndarray``), plus ``objects``
(bound as they are: ``torch``, modules, policies).
Nothing is printed: LEAPP's console handler, stdout/stderr and Python warnings are captured.
LEAPP keeps process-global state (an ``ExportManager`` singleton, a tracing lock, module
patches of ``np.array``/``np.asarray``, the ``leapp`` logger); every run resets all of it, so
many runs work in one process. Artifacts stay in ``workdir`` (a fresh temporary directory by
default, ``result["workdir"]``), which the caller may delete.
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import re
import sys
import tempfile
import traceback
import warnings
from typing import Any

import numpy as np

__all__ = ["run_leapp", "leapp_outputs_for"]

_GRAPH = "graph"


class _ListHandler(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@contextlib.contextmanager
def _quiet(records: list[logging.LogRecord] | None = None):
    """Silence stdout/stderr/Python warnings; send the ``leapp`` logger's records to ``records``.

    LEAPP's console handler (installed by ``leapp.start``) is dropped for good; its log.txt file
    handler is kept, so the run's log also lands in ``<workdir>/graph/log.txt``.
    """
    logger = logging.getLogger("leapp")
    saved = list(logger.handlers)
    handler = _ListHandler()
    logger.handlers = [h for h in saved if isinstance(h, logging.FileHandler)] + [handler]
    # Other libraries' stream handlers (torch's loggers, e.g. the ONNX exporter's) hold the real
    # stderr from import time, so redirect_stderr alone does not silence them.
    sink = io.StringIO()
    swapped = []
    for lg in [logging.getLogger()] + [v for v in logging.root.manager.loggerDict.values()
                                       if isinstance(v, logging.Logger)]:
        for h in lg.handlers:
            if type(h) is logging.StreamHandler and h.stream in (sys.stderr, sys.stdout,
                                                                 sys.__stderr__, sys.__stdout__):
                swapped.append((h, h.setStream(sink)))
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()), \
                warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield handler
    finally:
        for h, stream in swapped:
            h.setStream(stream)
        if records is not None:
            records.extend(handler.records)
        from leapp.utils.logging import _get_logger
        console = _get_logger().console_handler
        # leapp.start() inside the block replaces the handler list; otherwise put back the old one.
        base = saved if handler in logger.handlers else logger.handlers
        logger.handlers = [h for h in base if h is not handler and h is not console] \
            or [logging.NullHandler()]


def _reset_leapp_state() -> None:
    """Undo every piece of process-global LEAPP state a (possibly failed) run can leave behind."""
    import leapp.leapp as _api
    from leapp.export_manager import ExportManager
    from leapp.utils.logging import _get_logger
    from leapp.utils.tracing_lock import TracingLock

    manager = _api._MANAGER
    TracingLock().reset()
    ExportManager.set_interpret_graph(False)
    try:
        manager.restore_pending_buffer_trackers()
    except Exception:
        pass
    if manager.patcher.installed:
        manager.patcher.uninstall()
    manager.reset_nodes()
    for attr in ("detected_nodes", "detected_pipeline"):
        if hasattr(manager, attr):
            delattr(manager, attr)
    lg = _get_logger()
    for h in list(lg.logger.handlers):
        h.close()
    lg.logger.handlers.clear()
    lg.logger.addHandler(logging.NullHandler())  # no "last resort" stderr output between runs
    lg.console_handler = None


def _exc_text(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


def _copy_input(value: Any) -> Any:
    """A private copy of one input: a torch tensor stays a tensor, anything else becomes an ndarray."""
    if type(value).__module__.startswith("torch") and hasattr(value, "detach"):
        return value.detach().clone()
    return np.array(value, copy=True)


def run_leapp(source: str, inputs: dict[str, Any], node: str = "node", workdir=None, *,
              validate: bool = True, strict: bool = False, visualize: bool = False,
              objects: dict[str, Any] | None = None) -> dict[str, Any]:
    """Trace ``source`` with real LEAPP, export it, and describe what happened.

    ``inputs`` (NumPy arrays or torch tensors) are bound by name in the cell's namespace (the cell passes
    them to ``annotate.input_tensors``); ``objects`` are bound as they are. ``node`` names the node whose
    model path is reported first and whose inputs bare names in :func:`leapp_outputs_for` refer to.
    ``validate``/``strict``/``visualize`` go to ``leapp.compile_graph``; ``strict=False`` (LEAPP's default
    is True) keeps a model whose replay validation fails, so it can still be run and compared.

    Returns a dict:
      ``raised``       exception text (``"Type: message"``) if the cell or ``leapp.stop`` raised, else None
      ``compile_raised`` exception text if ``leapp.compile_graph`` raised, else None
      ``stage``        "trace" | "compile" | "done": how far the run got
      ``exception``    the exception object (or None)
      ``warnings``     messages LEAPP logged at WARNING or above while tracing (cell + stop)
      ``log``          every (levelname, message) LEAPP logged in the whole run, compile included
      ``graphs``       {node: the fx graph text LEAPP compiled for it} (from its DEBUG log)
      ``validation``   compile_graph's replay validation: {node: True | False | Exception}
      ``yaml_path``    the exported pipeline YAML (None if export failed)
      ``model_paths``  {node: absolute model file path}
      ``namespace``    the cell's namespace after it ran
      ``workdir``      the directory holding everything LEAPP wrote
      ``run``          callable(new_inputs) -> {output name: np.ndarray}, or None (see leapp_outputs_for)
    """
    import leapp
    import leapp.leapp as _api

    workdir = tempfile.mkdtemp(prefix="leapp_harness_") if workdir is None else os.fspath(workdir)
    os.makedirs(workdir, exist_ok=True)
    records: list[logging.LogRecord] = []
    result: dict[str, Any] = dict(raised=None, compile_raised=None, stage="trace", exception=None,
                                  warnings=[], log=[], graphs={}, validation=None, yaml_path=None,
                                  model_paths={}, namespace=None, workdir=workdir, run=None)
    _reset_leapp_state()
    namespace: dict[str, Any] = {"np": np, "annotate": leapp.annotate, "__name__": "__leapp_cell__"}
    namespace.update(objects or {})
    namespace.update({k: _copy_input(v) for k, v in inputs.items()})
    result["namespace"] = namespace
    n_trace = None  # records logged up to the end of tracing
    try:
        with _quiet(records):
            leapp.start(_GRAPH, save_path=workdir, verbose=False)
        with _quiet(records):
            try:
                exec(compile(source, "<leapp-cell>", "exec"), namespace)
            except Exception as exc:  # noqa: BLE001 - reported in the result
                result["exception"], result["raised"] = exc, _exc_text(exc)
            try:
                leapp.stop()
            except Exception as exc:  # noqa: BLE001
                if result["exception"] is None:
                    result["exception"], result["raised"] = exc, _exc_text(exc)
        n_trace = len(records)
        if result["exception"] is not None:
            return result
        result["stage"] = "compile"
        with _quiet(records):
            try:
                result["validation"] = leapp.compile_graph(
                    visualize=visualize, validate=validate, strict=strict)
            except Exception as exc:  # noqa: BLE001
                result["exception"], result["compile_raised"] = exc, _exc_text(exc)
                result["compile_traceback"] = traceback.format_exc()
                return result
        result["stage"] = "done"
        yaml_path = os.path.join(workdir, _GRAPH, f"{_GRAPH}.yaml")
        if os.path.exists(yaml_path):
            result["yaml_path"] = yaml_path
            result["model_paths"] = {
                name: os.path.abspath(n.model_path)
                for name, n in _api._MANAGER.get_nodes().items() if n.model_path}
            result["run"] = _make_runner(yaml_path, node)
        return result
    finally:
        result["warnings"] = [_clean(r.getMessage()) for r in records[:n_trace]
                              if r.levelno >= logging.WARNING]
        result["log"] = [(r.levelname, _clean(r.getMessage())) for r in records]
        result["graphs"] = {m.group(1): m.group(2) for _, msg in result["log"]
                            if (m := re.match(r"Compiled graph module for (.+?):\n(.*)", msg, re.S))}
        _reset_leapp_state()


def _clean(msg: str) -> str:
    # LEAPP's console formatter may have wrapped the message in ANSI colour codes.
    return re.sub(r"\x1b\[[0-9;]*m", "", msg)


def _make_runner(yaml_path: str, default_node: str):
    """A callable running the exported pipeline through ``leapp.InferenceManager``."""
    import leapp
    import torch

    with _quiet():
        manager = leapp.InferenceManager(yaml_path)

    def run(new_inputs: dict[str, Any]) -> dict[str, np.ndarray]:
        feed = {}
        for key, value in new_inputs.items():
            full = key if "/" in key else f"{default_node}/{key}"
            feed[full] = (value.detach().clone() if isinstance(value, torch.Tensor)
                          else torch.from_numpy(np.asarray(value, order="C")))
        with _quiet(), torch.no_grad():
            out = manager(feed)
        single = len({k.split("/")[0] for k in out}) == 1
        return {(k.split("/", 1)[1] if single else k): v.detach().cpu().numpy() for k, v in out.items()}

    run.inference_manager = manager
    return run


def leapp_outputs_for(result: dict[str, Any], new_inputs: dict[str, Any]) -> dict[str, np.ndarray]:
    """Run the model LEAPP exported in ``result`` on ``new_inputs`` (NumPy arrays or torch tensors).

    Keys of ``new_inputs`` are input names of the default node, or ``"node/input"``. The returned
    keys are output names (``"node/output"`` when the pipeline has outputs from several nodes).
    Raises RuntimeError when the run produced no exported model.
    """
    if result.get("run") is None:
        why = result.get("raised") or result.get("compile_raised") or "no YAML was written"
        raise RuntimeError(f"LEAPP did not export a runnable model: {why}")
    return result["run"](new_inputs)
