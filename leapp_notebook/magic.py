"""``%%leapp_trace``: the cell magic that traces a notebook cell (thin glue over ``trace_cell``).

The same option parsing and the same run (trace, then probe and export when asked) serve
``leapp-notebook check``, so a notebook checked in CI behaves as it does in Jupyter.

Cell lines are numbered as in the cell editor: the ``%%leapp_trace`` line is line 1 (the traced
source starts with it as a comment), so ``hazard.line`` is the line the user sees.
"""

from __future__ import annotations

import difflib
import importlib
import os
import shlex
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, cell_magic, magics_class, no_var_expand
from IPython.core.magic_arguments import argument, magic_arguments

from .trace import PROFILES, Trace, trace_cell
from .tracing.types import EXPORT_WITH, CellError, ExportBlocked, TraceError

MAGIC = "leapp_trace"
EXPORT_FORMATS = EXPORT_WITH
TRACE_VARIABLE = "_leapp_trace"
CONTROLS_VARIABLE = "_leapp_controls"  # the last cell's TraceWidget controls, to drive them from code


@dataclass(frozen=True)
class TraceOptions:
    """The parsed ``%%leapp_trace`` line."""

    node: str = "node"
    inputs: tuple[str, ...] | None = None
    outputs: tuple[str, ...] | None = None
    probe: int | None = None
    seed: int | None = None
    profile: str = "leapp"
    export: str | None = None
    formats: tuple[str, ...] = ("jit",)
    force: bool = False
    help: bool = False


@dataclass
class CellRun:
    """What running one ``%%leapp_trace`` cell produced."""

    trace: Trace
    probe: Any = None
    exported: list[Path] | None = None
    export_error: Exception | None = None  # ExportBlocked (refused) or TraceError (e.g. no onnx extra)


def _names(text: str | None) -> tuple[str, ...] | None:
    if text is None:
        return None
    return tuple(name.strip() for name in text.split(",") if name.strip())


@magics_class
class LeappMagics(Magics):
    """The ``%%leapp_trace`` cell magic."""

    @no_var_expand
    @magic_arguments("%leapp_trace")
    @argument("name", nargs="?", default="node",
              help="node name when --inputs/--outputs are given (default: node)")
    @argument("--inputs", metavar="a,b", help="arrays of the namespace to trace, comma separated")
    @argument("--outputs", metavar="y,z", help="variables read as the node's outputs after the cell runs")
    @argument("--probe", type=int, metavar="N",
              help="run the graph against the eager cell on N fresh random inputs")
    @argument("--seed", type=int, metavar="S", help="random seed of the probe")
    @argument("--profile", choices=PROFILES, default="leapp",
              help="leapp: record what LEAPP 0.7.2 records (default); full: record all it can")
    @argument("--export", metavar="DIR", help="export the node into DIR when it is safe to")
    @argument("--format", default="jit", metavar="jit,onnx,pt2",
              help="export formats, comma separated: " + ", ".join(EXPORT_WITH) + " (default: jit)")
    @argument("--force", action="store_true", help="export even with error hazards (marked unvalidated)")
    @argument("-h", "--help", action="store_true", help="show this help")
    @cell_magic
    def leapp_trace(self, line: str, cell: str) -> None:
        """Trace the cell's NumPy code into a torch.fx graph; show the graph and what tracing loses.

        Without --inputs/--outputs the cell declares its nodes with annotate.input_tensors(...) and
        annotate.output_tensors(...). The cell's variables land in the namespace as plain arrays; the
        Trace is kept as _leapp_trace.
        """
        options = parse_options(line)
        if options.help:
            print(self.leapp_trace.parser.format_help())
            return
        namespace = self.shell.user_ns
        try:
            # in a kernel, the probe and the export show a bar in the cell while they run
            run = run_cell(options, cell, namespace, line=line, progress=_widget_front_end(self.shell) or None)
        except (TraceError, CellError) as exc:
            _shown_briefly(exc)
            raise
        namespace[TRACE_VARIABLE] = run.trace
        _show(run, options, widget=_widget_front_end(self.shell), namespace=namespace)
        if run.export_error is not None:
            raise _shown_briefly(run.export_error)


# `--prob 4` is not `--probe 4`, `--forc` not `--force` (IPython's parser takes no allow_abbrev argument).
LeappMagics.leapp_trace.parser.allow_abbrev = False


def parse_options(line: str) -> TraceOptions:
    """Parse a ``%%leapp_trace`` argument line; raises ``UsageError`` with one clear message.

    Flags are never abbreviated; an unknown flag is named with the closest real one (``--probes`` ->
    ``--probe``).
    """
    try:
        argv = _words(line)
    except ValueError as exc:
        raise UsageError(f"{exc} in the %%leapp_trace line (quote a folder with spaces: --export \"my exports\")") \
            from None
    _refuse_unknown_flags(argv)
    args = LeappMagics.leapp_trace.parser.parse_args(argv)
    if args.probe is not None and args.probe < 1:
        raise UsageError(f"--probe {args.probe}: give the number of random inputs to try, at least 1")
    if (args.inputs is None) != (args.outputs is None):
        raise UsageError("give both --inputs and --outputs, or neither (the cell then declares its nodes "
                         "with annotate.input_tensors / annotate.output_tensors)")
    if args.inputs is None and args.name != "node":
        spaces = " (a folder name with spaces needs quotes: --export \"my exports\")" if args.export else ""
        raise UsageError(f"{args.name!r} would name a node made by --inputs/--outputs; a cell without them "
                         f"names its nodes in its annotate calls{spaces}")
    formats = _names(args.format) or ()
    unknown = sorted(set(formats) - set(EXPORT_FORMATS))
    if unknown or not formats:
        raise UsageError(f"--format {args.format}: give one or more of {', '.join(EXPORT_FORMATS)}, comma separated")
    export = args.export
    if export is not None:
        if not export.strip():
            raise UsageError("--export: name the folder to export into")
        export = os.path.expanduser(export)  # ~/deploy is the home's, as in a shell (never a folder named ~)
    return TraceOptions(node=args.name, inputs=_names(args.inputs), outputs=_names(args.outputs),
                        probe=args.probe, seed=args.seed, profile=args.profile, export=export,
                        formats=formats, force=args.force, help=args.help)


def flag_names() -> list[str]:
    """The ``%%leapp_trace`` flags, as written on the line (``--probe``, ``-h``, ...)."""
    parser = LeappMagics.leapp_trace.parser
    return [flag for action in parser._actions for flag in action.option_strings]


def _words(line: str) -> list[str]:
    """The words of a magic line as a shell reads them: quotes group a folder name with spaces. On Windows a backslash
    is a path's separator, not an escape: the quotes around a word are taken off instead."""
    if os.name != "nt":
        return shlex.split(line)
    return [word[1:-1] if len(word) > 1 and word[0] == word[-1] and word[0] in "\"'" else word
            for word in shlex.split(line, posix=False)]


def _refuse_unknown_flags(argv: list[str]) -> None:
    known = flag_names()
    for token in argv:
        if token == "--":
            break
        flag = token.partition("=")[0]
        if not flag.startswith("--") or flag in known:
            continue
        # compared without the dashes, which every flag shares and which would make any word look close
        names = [name[2:] for name in known if name.startswith("--")]
        close = difflib.get_close_matches(flag[2:], names, n=1, cutoff=0.6)
        hint = f"; did you mean --{close[0]}?" if close else f"; the flags are {', '.join(known)}"
        raise UsageError(f"unknown flag {flag}{hint} (see %%leapp_trace --help)")


def run_cell(options: TraceOptions, cell: str, namespace: dict[str, Any], *, line: str = "",
             probe: int | None = None, progress: Any = None) -> CellRun:
    """Trace ``cell`` in ``namespace``, then probe (``probe`` or ``options.probe`` inputs) and export
    as the options ask. Raises ``TraceError`` / ``CellError`` from the trace and the probe; an export that
    is refused or fails is returned as ``export_error``, not raised, so the trace can still be shown.
    ``progress``: handed to the probe and the export (the magic passes True in a kernel: a bar in the cell)."""
    source = f"# %%{MAGIC} {line}".rstrip() + "\n" + cell
    trace = trace_cell(source, namespace, inputs=options.inputs and list(options.inputs),
                       outputs=options.outputs and list(options.outputs), node=options.node,
                       profile=options.profile)
    run = CellRun(trace)
    count = probe or options.probe
    if count:
        run.probe = trace.probe(n=count, seed=options.seed, progress=progress)
    if options.export is not None:
        try:
            run.exported = trace.export(options.export, formats=options.formats, force=options.force,
                                        progress=progress)
        except (ExportBlocked, TraceError) as exc:
            run.export_error = exc
    return run


def _show(run: CellRun, options: TraceOptions, *, widget: bool, namespace: dict[str, Any]) -> None:
    """The trace's own mime bundle always (it survives a save without a kernel); beside it, where a widget
    front end runs, the widget's Probe and Export controls, which rewrite that bundle with every result."""
    from IPython.display import DisplayHandle, display

    from .render import export_entry, graph_model, start_mimebundle
    from .render.model import MODEL_COMPACT_ABOVE

    model = graph_model(run.trace, compact_above=MODEL_COMPACT_ABOVE)  # what the bundle carries
    if run.exported is not None or run.export_error is not None:
        model["export"] = export_entry(files=run.exported, error=run.export_error)
    bundle = start_mimebundle(model)  # dot lays the graph out while the controls are made
    handle = DisplayHandle()
    controls = None
    try:
        if widget:
            controls = _controls(run.trace, handle, options, model)
            controls.exported = controls.model["export"] = model["export"]  # kept when a click redraws
            namespace[CONTROLS_VARIABLE] = controls
    finally:  # the trace is shown even when its controls cannot be made
        handle.display(bundle(), raw=True)
    if controls is not None:
        display(controls)
    if run.probe is not None:
        print(run.probe)
    if run.exported:
        print("exported:", *(str(path) for path in run.exported), sep="\n  ")


def _controls(trace: Trace, handle: Any, options: TraceOptions, model: dict[str, Any] | None = None) -> Any:
    """``TraceWidget``'s Probe and Export rows, starting from the magic's ``--probe`` and ``--seed``. The
    graph and hazards are already on screen in the bundle above; after each probe or export that bundle
    is rewritten (update_display_data on its display id) with the result, so a saved notebook keeps it."""
    from .render import mimebundle
    from .widget import TraceWidget

    widget = TraceWidget(trace, controls_only=True, probe=options.probe, seed=options.seed, model=model)

    def redraw(_change: Any) -> None:
        handle.update(mimebundle(widget.model), raw=True)

    widget.observe(redraw, "results")
    return widget


def _widget_front_end(shell: Any) -> bool:
    """Widgets need a kernel (a comm channel to a front end); a terminal IPython has none."""
    return getattr(shell, "kernel", None) is not None


def _shown_briefly(exc: Exception) -> Exception:
    """Make IPython show ``exc`` as one short message, not a traceback wall (its ``_render_traceback_``
    hook); the original exception stays chained for ``%tb`` and debuggers."""
    name = type(exc).__name__
    lines = str(exc).splitlines() or [""]
    shown = [f"\x1b[1;31m{name}\x1b[0m: {lines[0]}", *lines[1:]]
    exc._render_traceback_ = lambda: shown  # type: ignore[attr-defined]
    return exc


def register(ipython: Any) -> None:
    """Register ``%%leapp_trace`` with an IPython shell (``%load_ext leapp_notebook`` calls this), and start
    preparing what its first run needs (:func:`prepare`)."""
    ipython.register_magics(LeappMagics)
    prepare(widget=_widget_front_end(ipython))


# What a kernel's first %%leapp_trace loads beyond the tracer: the renderers, LibCST (the one-click fixes of a
# trace with hazards) and, where a widget front end runs, ipywidgets: 0.5-0.8 s together on a first cell,
# against the few milliseconds of its trace. In the order the magic imports them.
PREPARED_MODULES = ("leapp_notebook.render", "leapp_notebook.fixes")
WIDGET_MODULES = ("leapp_notebook.widget",)
_WARM_DOT = 'digraph {{ node [fontname={font}]; a [label=<<font face={mono}>warm</font>>]; a -> b; }}'


def prepare(*, widget: bool) -> threading.Thread:
    """Load, in a background thread, what the first ``%%leapp_trace`` of a kernel needs beyond the tracer
    (``PREPARED_MODULES``, ``WIDGET_MODULES`` when ``widget``), and run Graphviz's ``dot`` once on a graph in the
    renderer's fonts (its first run in a session loads its plugins and font cache). The user's time between
    ``%load_ext`` and the first traced cell pays for it; a cell run at once waits for what it needs, as it
    would have loaded it itself (an import in progress holds its module's lock). Nothing here traces: a trace
    belongs to the thread that runs the cell. Failures are left for the cell itself to meet and report (a
    module that fails to import is not kept; ``dot`` missing is how the renderer already degrades)."""
    thread = threading.Thread(target=_prepare, args=(widget,), name="leapp_notebook-prepare", daemon=True)
    thread.start()
    return thread


def _prepare(widget: bool) -> None:
    for name in PREPARED_MODULES + (WIDGET_MODULES if widget else ()):
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001, S112 - the cell imports it again and reports what fails
            continue
    try:
        import graphviz

        from .render.dot import FONT, MONO, quote

        graphviz.Source(_WARM_DOT.format(font=quote(FONT), mono=quote(MONO))).pipe(format="svg")
    except Exception:  # noqa: BLE001, S110 - no dot, or a broken one: the cell's own rendering reports it
        pass


__all__ = ["LeappMagics", "TraceOptions", "CellRun", "parse_options", "run_cell", "register",
           "TRACE_VARIABLE", "CONTROLS_VARIABLE", "EXPORT_FORMATS"]
