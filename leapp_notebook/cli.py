"""``leapp-notebook check``: run notebooks and scripts headless, trace their nodes, report, set the exit code.

Notebooks run as in Jupyter: code cells in order, in one namespace, with the notebook's folder as the
working directory. ``%%leapp_trace`` cells are traced with their own flags (through the magic's own
code); other IPython magics and shell lines are skipped. Scripts that declare nodes with ``annotate``
are traced whole. Exit status: 0 clean, 1 error hazards / failed probes / failing cells (a cell that
raises or calls ``sys.exit``), 2 usage (bad flags, a path it cannot read), 130 interrupted (Ctrl-C).
``check`` writes no file unless given ``--export DIR`` itself: a cell's own ``--export`` is ignored, unless given
``--cell-exports`` (then it writes where the cell says, as Jupyter does).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import re
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Iterator, Sequence

from rich.console import Console
from rich.padding import Padding
from rich.text import Text

from .export import chosen_formats
from .render.labels import printable
from .trace import PROFILES, message_of, trace_cell
from .tracing.types import EXPORT_WITH, CellError, ExportBlocked, Hazard, TraceError

EXIT_CLEAN, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130
SUMMARY_WIDTH = 80
MAGIC_PREFIX = "%%leapp_trace"


class UsageProblem(Exception):
    """The command line names something ``check`` cannot run."""


@dataclass
class CellReport:
    """One traced cell (or a whole script): its nodes, hazards, probe and export, or the error it raised."""

    cell: int | None
    nodes: list[str] = field(default_factory=list)
    profile: str = "leapp"
    hazards: list[Hazard] = field(default_factory=list)
    probe: Any = None
    exported: list[str] | None = None
    blocked: str | None = None
    error: str | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return (self.error is not None or self.blocked is not None
                or any(h.severity == "error" for h in self.hazards)
                or (self.probe is not None and not self.probe.passed))

    def to_dict(self) -> dict[str, Any]:
        return {
            "cell": self.cell, "nodes": self.nodes, "profile": self.profile, "failed": self.failed,
            "hazards": [h.to_dict() for h in self.hazards],
            "probe": None if self.probe is None else self.probe.to_dict(),
            "exported": self.exported, "export_blocked": self.blocked, "error": self.error, "notes": self.notes,
        }


@dataclass
class FileReport:
    """The cells checked in one notebook or script."""

    path: Path
    kind: str
    cells: list[CellReport] = field(default_factory=list)
    skipped: list[int] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return any(cell.failed for cell in self.cells)

    def to_dict(self) -> dict[str, Any]:
        return {"path": str(self.path), "kind": self.kind, "failed": self.failed,
                "cells": [cell.to_dict() for cell in self.cells], "skipped_magic_cells": self.skipped}


# ------------------------------------------------------------------------------------------
# running
# ------------------------------------------------------------------------------------------

class _ShellStub:
    """``get_ipython()`` for headless runs: every magic and shell command (``run_line_magic``, ``system``,
    ...) is a no-op returning None; ``loaded`` says whether the cells loaded this extension (``%load_ext``)."""

    def __init__(self) -> None:
        self.loaded = False
        self.cell_magic: Any = None  # (name, line, body) -> None: check's own handling of a cell magic

    def run_line_magic(self, name: str, line: str, *_: Any, **__: Any) -> None:
        if name in ("load_ext", "reload_ext") and "leapp_notebook" in line.split():
            self.loaded = True

    def run_cell_magic(self, name: str, line: str, cell: str) -> None:
        """``get_ipython().run_cell_magic('leapp_trace', ...)`` in a cell: traced as a ``%%leapp_trace`` cell is."""
        if self.cell_magic is not None:
            self.cell_magic(name, line, cell)

    def __getattr__(self, name: str) -> Any:
        return lambda *_, **__: None


@contextlib.contextmanager
def _running_in(directory: Path | None, import_path: Path) -> Iterator[None]:
    """Run with ``directory`` as working directory (when given) and ``import_path`` importable; the modules the run
    imported from ``import_path`` (the notebook's own ``utils.py``) are forgotten after it, so that the next file
    checked in the same process imports its own (two notebooks each with a ``utils.py``: the second ran the first's,
    and a CI run of both passed where the second alone failed). ``os._exit`` raises while it runs: a cell calling
    it ended the whole check with exit status 0 and no report."""
    previous = os.getcwd()
    before = set(sys.modules)
    sys.path.insert(0, str(import_path))
    exit_now = os._exit
    os._exit = _refuse_exit  # type: ignore[assignment]
    try:
        if directory is not None:
            os.chdir(directory)
        yield
    finally:
        os._exit = exit_now
        os.chdir(previous)
        with contextlib.suppress(ValueError):
            sys.path.remove(str(import_path))
        _forget_modules(set(sys.modules) - before, import_path)


def _refuse_exit(status: int = 0) -> None:
    raise SystemExit(f"os._exit({status}) called: the process would end here with no report")


def _forget_modules(added: set[str], folder: Path) -> None:
    """Remove from ``sys.modules`` the modules of ``added`` whose file lies under ``folder``."""
    root = str(folder.resolve())
    for name in added:
        module = sys.modules.get(name)
        location = getattr(module, "__file__", None)
        if location and os.path.abspath(location).startswith(root + os.sep):
            del sys.modules[name]


def _cell_magic(source: str) -> tuple[str, str, str]:
    """(the cell's first word, the rest of its line, the lines after it), as IPython reads a cell magic: blank lines
    before the magic's line do not count."""
    lines = source.splitlines(keepends=True)
    while lines and not lines[0].strip():
        lines.pop(0)
    first, _, body = "".join(lines).partition("\n")
    command, _, line = first.strip().partition(" ")
    return command, line, body


def traced_cell_numbers(notebook: Any) -> list[int]:
    """The numbers (1-based over all cells) of the notebook's ``%%leapp_trace`` cells, as ``check`` tells them."""
    return [number for number, cell in enumerate(notebook.cells, start=1)
            if cell.cell_type == "code" and _unwrapped(cell.source)[0] == MAGIC_PREFIX]


def _unwrapped(source: str) -> tuple[str, str, str, str]:
    """``_cell_magic`` of the cell IPython runs under ``%%time`` / ``%%capture`` (which run the rest of their cell
    as a cell of its own), with that cell's source last: (command, its line, its body, the cell's source)."""
    command, line, body = _cell_magic(source)
    while command in _TRANSPARENT:
        source = body
        command, line, body = _cell_magic(body)
    return command, line, body, source


# a call that declares a node in a script (check runs scripts that make one)
_DECLARES_NODE = re.compile(r"\bannotate\s*\.\s*(input|output)_tensors\s*\(")


@contextlib.contextmanager
def _stdout_descriptor_quiet() -> Iterator[None]:
    """What the cells write to the process's standard output itself (a subprocess, ``os.system``, compiled code)
    goes nowhere while they run: the report, and ``--json``'s document, own standard output."""
    sys.stdout.flush()
    try:
        saved = os.dup(1)
    except OSError:  # no descriptor 1 (a closed stdout): nothing to keep clean
        yield
        return
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, 1)
        yield
    finally:
        os.dup2(saved, 1)
        os.close(saved)
        os.close(null)


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """The user's prints do not belong in the report."""
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        yield


@dataclass(frozen=True)
class ExportRequest:
    """``check --export DIR [--format F]``: where every traced cell is exported (nothing is written
    without it)."""

    directory: Path
    formats: tuple[str, ...] | None = None  # None: each cell's own --format

    def folder(self, path: Path, cell: int | None) -> Path:
        return self.directory / (path.stem if cell is None else f"{path.stem}-cell{cell}")


def _exit_message(exc: SystemExit) -> str:
    return f"SystemExit: {exc.code!r}: the cell exited (sys.exit / exit()), the rest was not run"


def _export(result: CellReport, trace: Any, request: ExportRequest | None, folder: Path, formats: Any,
            force: bool, status: Any = None, where: str = "") -> None:
    if request is None:
        return

    def progress(done: int, total: int) -> None:
        if status is not None:
            status.update(f"{where}: exporting ({done} of {total} steps done)")

    if status is not None:
        status.update(f"{where}: exporting")
    try:
        paths = trace.export(folder, formats=request.formats or formats, force=force, progress=progress)
    except (ExportBlocked, TraceError) as exc:
        result.blocked = str(exc)
    else:
        result.exported = (result.exported or []) + [str(p) for p in paths]


def check_notebook(path: Path, *, probe: int | None, profile: str | None, status: Any = None,
                   export: ExportRequest | None = None, cell_exports: bool = False) -> FileReport:
    """Run the notebook's code cells in order; trace its ``%%leapp_trace`` cells. ``cell_exports``: honour each
    cell's own ``--export`` as Jupyter does (otherwise it is skipped, with a note, and a later cell that fails on
    what it would have written is told so)."""
    import nbformat
    from IPython.core.error import UsageError
    from IPython.core.inputtransformer2 import TransformerManager

    from .magic import TRACE_VARIABLE, parse_options, run_cell

    notebook = nbformat.read(path, as_version=4)
    report = FileReport(path, "notebook")
    shell = _ShellStub()
    namespace: dict[str, Any] = {"__name__": "__main__", "get_ipython": lambda: shell,
                                 "display": lambda *_, **__: None}
    transformer = TransformerManager()
    folder = path.resolve().parent
    skipped_exports: list[tuple[int, str]] = []  # (cell, its own --export) not honoured
    current = [0]

    def traced(number: int, line: str, body: str) -> CellReport | None:
        """Trace one ``%%leapp_trace`` cell (``line``: its options); its report, None for ``--help``."""
        result = CellReport(number)
        report.cells.append(result)
        if not shell.loaded:
            result.notes.append("no %load_ext leapp_notebook before this cell: Jupyter runs it only where "
                                "IPython's configuration loads the extension (else: Cell magic not found)")
        try:
            options = parse_options(line)
            if options.help:  # Jupyter prints the usage and runs nothing of the cell
                report.cells.remove(result)
                report.skipped.append(number)
                return None
            result.profile = profile or options.profile
            if options.export is not None and not cell_exports:
                result.notes.append(f"--export {options.export} ignored: check writes no file unless "
                                    "given --export DIR, or --cell-exports to honour the cells' own")
                skipped_exports.append((number, options.export))
                options = replace(options, export=None)
            options = replace(options, profile=result.profile)
            with _quiet():
                run = run_cell(options, body, namespace, line=line.strip(), probe=probe)
                namespace[TRACE_VARIABLE] = run.trace
                result.nodes = list(run.trace.nodes)
                result.hazards = run.trace.hazards
                result.probe = run.probe
                if run.export_error is not None:
                    result.blocked = str(run.export_error)
                elif run.exported is not None:  # (the notebook's folder is the working directory)
                    result.exported = [str(Path(p).resolve()) for p in run.exported]
                if export is not None:
                    _export(result, run.trace, export, export.folder(path, number), options.formats,
                            options.force, status, f"{path.name}: cell {number}")
        except UsageError as exc:
            result.error = f"bad {MAGIC_PREFIX} line: {exc}"
        except (TraceError, CellError) as exc:
            result.error = f"{type(exc).__name__}: {exc}"
        except SystemExit as exc:
            result.error = _exit_message(exc)
        if result.error is not None:
            result.notes.extend(_skipped_export_notes(result.error, skipped_exports, folder))
        return result

    def cell_magic(name: str, line: str, body: str) -> None:
        if f"%%{name}" == MAGIC_PREFIX:
            result = traced(current[0], line, body)
            if result is not None and result.error is not None:
                raise _MagicFailed(result.error)

    shell.cell_magic = cell_magic
    with _running_in(folder, folder):
        for number, cell in enumerate(notebook.cells, start=1):
            if cell.cell_type != "code" or not cell.source.strip():
                continue
            current[0] = number
            command, line, body, source = _unwrapped(cell.source)
            if status is not None:
                status.update(f"{path.name}: cell {number}")
            if command == MAGIC_PREFIX:
                result = traced(number, line, body)
                if result is not None and result.error is not None:
                    break
                continue
            if command.startswith("%%"):
                report.skipped.append(number)
                continue
            error = _run_plain(transformer.transform_cell(source), number, namespace)
            if error is not None and any(c.cell == number and c.error for c in report.cells):
                break  # a run_cell_magic('leapp_trace', ...) in the cell failed: reported as that cell
            if error is not None:
                report.cells.append(CellReport(number, error=error,
                                               notes=_skipped_export_notes(error, skipped_exports, folder)))
                break
    return report


# a cell that runs the magic itself: get_ipython().run_cell_magic('leapp_trace', ...) (in the notebook's JSON text)
_RUNS_THE_MAGIC = re.compile(r"run_cell_magic\(\s*\\?[\"']leapp_trace")
# Cell magics that run the rest of their cell as a cell of its own (a %%leapp_trace under them is traced)
_TRANSPARENT = frozenset({"%%time", "%%capture"})


class _MagicFailed(Exception):
    """A ``run_cell_magic('leapp_trace', ...)`` whose trace failed: ends the cell that called it (reported)."""


def _skipped_export_notes(error: str, skipped: list[tuple[int, str]], folder: Path) -> list[str]:
    """Why a failing cell may have failed: it names a folder an earlier cell's skipped ``--export`` would have
    written (the usual export-then-load-it-back notebook)."""
    notes = []
    for number, directory in skipped:
        resolved = (folder / directory).resolve()
        if resolved == folder:  # the notebook's own folder: any path there would match
            continue
        names = {directory.rstrip("/\\"), str(resolved)}
        # the folder as a whole path component: ``out`` in ``out/model.pt``, never in ``output`` or ``timeout``
        if any(re.search(rf"(?<![\w.-]){re.escape(name)}(?=[/\\'\"\s:,)]|$)", error) for name in names if name):
            notes.append(f"this cell reads {directory}, which cell {number}'s --export would have written: check "
                         "skips a cell's own --export; pass --cell-exports (pytest: --leapp-cell-exports) to "
                         "honour it as Jupyter does")
    return notes


def _run_plain(source: str, number: int, namespace: dict[str, Any]) -> str | None:
    """Run one ordinary cell; the error it raised (with its line), or None."""
    filename = f"<cell {number}>"
    try:
        code = compile(source, filename, "exec")
        with _quiet():
            exec(code, namespace)
    except SystemExit as exc:
        line = _line_in(exc, filename)
        return f"line {line}: {_exit_message(exc)}"
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # noqa: BLE001 - any failure of the user's cell is reported, not raised
        line = exc.lineno if isinstance(exc, SyntaxError) else _line_in(exc, filename)
        return f"line {line}: {type(exc).__name__}: {message_of(exc)}"
    return None





def _line_in(exc: BaseException, filename: str) -> int | None:
    tb, line = exc.__traceback__, None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == filename:
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


def check_script(path: Path, *, probe: int | None, profile: str | None, status: Any = None,
                 export: ExportRequest | None = None) -> FileReport:
    """Trace the whole script; its ``annotate`` calls declare the nodes."""
    report = FileReport(path, "script")
    result = CellReport(None, profile=profile or "leapp")
    report.cells.append(result)
    if status is not None:
        status.update(f"{path.name}: tracing")
    namespace: dict[str, Any] = {"__name__": "__main__", "__file__": str(path)}
    try:
        with _running_in(None, path.resolve().parent), _quiet():
            trace = trace_cell(path.read_text(), namespace, profile=result.profile)
            if probe:
                if status is not None:
                    status.update(f"{path.name}: probing")
                result.probe = trace.probe(n=probe)
            result.nodes = list(trace.nodes)
            result.hazards = trace.hazards
            _export(result, trace, export, export.folder(path, None) if export else path, ("jit",), False, status,
                    path.name)
    except (TraceError, CellError) as exc:
        result.error = f"{type(exc).__name__}: {exc}"
    except SystemExit as exc:
        result.error = _exit_message(exc)
    return report


# ------------------------------------------------------------------------------------------
# command line
# ------------------------------------------------------------------------------------------

def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="leapp-notebook", allow_abbrev=False,
                                     description="Trace NumPy notebooks and scripts into torch graphs and "
                                                 "report what lookup tracing loses.")
    commands = parser.add_subparsers(dest="command", required=True, metavar="command")
    check = commands.add_parser("check", help="run notebooks (.ipynb) and scripts (.py) and report hazards",
                                allow_abbrev=False,  # a prefix of --cell-exports or --export would write files
                                description="Run notebooks and scripts, trace their %%leapp_trace cells and "
                                            "annotate nodes, report hazards. Exit 0 clean, 1 error hazards, "
                                            "failed probes or failing cells, 2 usage errors, 130 interrupted. "
                                            "Writes no file unless given --export or --cell-exports.")
    check.add_argument("paths", nargs="+", metavar="PATH", type=Path, help=".ipynb notebooks and .py scripts")
    check.add_argument("--probe", type=int, metavar="N",
                       help="probe every node on N fresh random inputs (default: only cells that ask)")
    check.add_argument("--profile", choices=PROFILES,
                       help="trace every cell with this profile (default: each cell's own, else leapp)")
    check.add_argument("--json", action="store_true", help="print machine-readable results on stdout")
    check.add_argument("--export", metavar="DIR",
                       help="export every traced cell that passes into DIR/<file>-cell<N>/ (scripts: DIR/<file>/); "
                            "without it nothing is written (a cell's own --export only with --cell-exports)")
    check.add_argument("--cell-exports", action="store_true",
                       help="honour each cell's own --export as Jupyter does (writes where the cell says)")
    check.add_argument("--format", metavar="F", help="with --export: formats, comma separated, from "
                                                     f"{', '.join(EXPORT_WITH)} (default: each cell's own --format)")
    return parser


def _validate(paths: Sequence[Path]) -> None:
    for path in paths:
        if not path.exists():
            raise UsageProblem(f"{path}: no such file")
        if path.is_dir():
            raise UsageProblem(f"{path}: is a directory; name the .ipynb notebooks and .py scripts to check")
        if not path.is_file():  # a named pipe or a device would be read forever
            raise UsageProblem(f"{path}: not a regular file")
        if path.suffix not in (".ipynb", ".py"):
            raise UsageProblem(f"{path}: cannot check a '{path.suffix}' file; give .ipynb notebooks or "
                               ".py scripts")
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            raise UsageProblem(f"{path}: not UTF-8 text (byte {exc.start})") from exc
        except OSError as exc:
            raise UsageProblem(f"{path}: cannot read it: {exc.strerror or exc}") from exc
        if path.suffix == ".ipynb" and not traced_cell_numbers(_read_notebook(path, text)) \
                and not _RUNS_THE_MAGIC.search(text):
            raise UsageProblem(f"{path}: no {MAGIC_PREFIX} cell, nothing to check")
        if path.suffix == ".py" and not _DECLARES_NODE.search(text):
            raise UsageProblem(f"{path}: declares no node; check traces scripts that call "
                               "annotate.input_tensors(...) and annotate.output_tensors(...)")


def _distinct_export_folders(paths: Sequence[Path]) -> None:
    """``--export DIR`` names each file's folders by its name (``DIR/<name>-cell<N>``): two files of one name would
    write into the same folders, the second replacing the first's models."""
    seen: dict[str, Path] = {}
    for path in paths:
        if path.suffix == ".ipynb":  # the folders of its traced cells (and of one of the same name's cells)
            numbers = traced_cell_numbers(_read_notebook(path, path.read_text(encoding="utf-8")))
            folders = [f"{path.stem}-cell{number}" for number in numbers] + [path.stem]
        else:
            folders = [path.stem]
        for folder in folders:
            first = seen.setdefault(folder, path)
            if first.resolve() != path.resolve():
                raise UsageProblem(f"{first} and {path} would export into the same folders (--export "
                                   f"DIR/{folder}): check them in separate runs, with a --export folder each")


def _read_notebook(path: Path, text: str) -> Any:
    """The notebook, or a ``UsageProblem`` saying in one line why it is not one."""
    import nbformat

    try:
        notebook = nbformat.reads(text, as_version=4)
        for number, cell in enumerate(notebook.cells, start=1):  # (nbformat reads a cell without a source)
            if not isinstance(cell.get("cell_type"), str) or not isinstance(cell.get("source"), str):
                raise ValueError(f"cell {number} has no source text")
        return notebook
    except Exception as exc:  # noqa: BLE001 - nbformat raises JSON, schema and key errors alike
        reason = " ".join(str(exc).split())[:160] or type(exc).__name__
        raise UsageProblem(f"{path}: not a readable notebook ({type(exc).__name__}: {reason})") from exc


def _export_request(args: argparse.Namespace) -> ExportRequest | None:
    if args.format is not None and args.export is None:
        raise UsageProblem("--format is for --export: give --export DIR too")
    if args.export is None:
        return None
    if not args.export.strip():
        raise UsageProblem("--export: name the folder to export into")
    formats = None
    if args.format is not None:
        formats = tuple(f.strip() for f in args.format.split(",") if f.strip())
        unknown = [f for f in formats if f not in EXPORT_WITH]
        if unknown or not formats:
            raise UsageProblem(f"--format {args.format}: give one or more of {', '.join(EXPORT_WITH)}, "
                               "comma separated")
        try:
            chosen_formats(formats)  # two formats of one file (jit and jit-trace both write <node>.pt), a missing extra
        except TraceError as exc:
            raise UsageProblem(f"--format {args.format}: {exc}") from exc
    # cells run with their notebook's folder as working directory: DIR is the caller's
    return ExportRequest(Path(args.export).absolute(), formats)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``leapp-notebook`` console script; returns the exit status."""
    args = _parser().parse_args(argv)
    try:
        return _main(args)
    except KeyboardInterrupt:
        print("leapp-notebook: interrupted, nothing more was run", file=sys.stderr)
        return EXIT_INTERRUPTED


def _main(args: argparse.Namespace) -> int:
    if args.probe is not None and args.probe < 1:
        print(f"leapp-notebook: --probe {args.probe}: give the number of random inputs, at least 1",
              file=sys.stderr)
        return EXIT_USAGE
    try:
        export = _export_request(args)
        _validate(args.paths)
        if export is not None:
            _distinct_export_folders(args.paths)
    except UsageProblem as exc:
        print(f"leapp-notebook: {printable(str(exc))}", file=sys.stderr)
        return EXIT_USAGE
    reports = []
    # bound to the real stderr now: the cells' own output is redirected while they run
    progress = Console(file=sys.stderr, highlight=False, force_jupyter=False)
    with progress.status("checking") as status, _stdout_descriptor_quiet():
        for path in args.paths:
            check = check_notebook if path.suffix == ".ipynb" else check_script
            options = {"cell_exports": args.cell_exports} if check is check_notebook else {}
            reports.append(check(path, probe=args.probe, profile=args.profile, status=status, export=export,
                                 **options))
    code = EXIT_FAILED if any(report.failed for report in reports) else EXIT_CLEAN
    try:
        if args.json:
            print(json.dumps({"exit_code": code, "files": [r.to_dict() for r in reports]}, indent=2))
        else:
            _print_reports(_ReportConsole(highlight=False, force_jupyter=False), reports, code)
        sys.stdout.flush()
    except BrokenPipeError:
        # the reader stopped reading (check ... | head): the status is the check's, not 1 for a broken pipe (a clean
        # run gave the "hazards found" status under `set -o pipefail`); nothing more is written
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return code


# ------------------------------------------------------------------------------------------
# the rich report
# ------------------------------------------------------------------------------------------

class _ReportConsole(Console):
    """rich's Console, but a closed pipe is the caller's to handle (rich exits with status 1 on one)."""

    def on_broken_pipe(self) -> None:
        self.quiet = True
        raise BrokenPipeError


_SEVERITY = {"error": ("✗", "bold red"), "warning": ("!", "bold yellow")}


def _print_reports(console: Console, reports: list[FileReport], code: int) -> None:
    for report in reports:
        console.rule(Text(printable(str(report.path)), style="bold"), align="left")
        for cell in report.cells:
            _print_cell(console, cell)
        if report.skipped:
            skipped = ", ".join(map(str, report.skipped))
            console.print(_indented(Text(f"cell magics skipped in cells {skipped}", style="dim"), 2))
    hazards = [h for r in reports for c in r.cells for h in c.hazards]
    cells = [c for r in reports for c in r.cells]
    failed_probes = sum(1 for c in cells if c.probe is not None and not c.probe.passed)
    errors = sum(h.severity == "error" for h in hazards)
    summary = summary_line(files=len(reports), traced=sum(bool(c.nodes) for c in cells), errors=errors,
                           warnings=len(hazards) - errors, failed_probes=failed_probes,
                           failing_cells=sum(c.error is not None for c in cells),
                           blocked=sum(c.blocked is not None for c in cells), code=code)
    console.print(Text(summary, style="bold red" if code else "bold green"), no_wrap=True, overflow="fold")


def summary_line(*, files: int, traced: int, errors: int, warnings: int, failed_probes: int, failing_cells: int,
                 blocked: int, code: int) -> str:
    """The report's last line, at most ``SUMMARY_WIDTH`` characters: counts that are zero are left out
    (files and traced always shown), and words shorten when the counts are long."""
    counts = [(files, "file", "files"), (traced, "traced", "traced"), (errors, "error", "err"),
              (warnings, "warning", "warn"), (failed_probes, "failed probe", "probe ✗"),
              (failing_cells, "failing cell", "cell ✗"), (blocked, "blocked export", "export ✗")]
    for short in (False, True):
        parts = []
        for index, (n, word, brief) in enumerate(counts):
            if n or index < 2:
                parts.append(f"{n} {brief}" if short else _count(n, word) if word != "traced" else f"{n} traced")
        line = f"{', '.join(parts)}: exit {code}"
        if len(line) <= SUMMARY_WIDTH:
            return line
    return line[:SUMMARY_WIDTH - len(f"…: exit {code}")] + f"…: exit {code}"


def _count(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _indented(text: Text, left: int) -> Padding:
    """Wrapped lines keep the indentation."""
    return Padding(text, (0, 0, 0, left), expand=False)


def _print_cell(console: Console, cell: CellReport) -> None:
    head = Text(f"cell {cell.cell}" if cell.cell is not None else "script", style="bold")
    if cell.nodes:
        nodes = "nodes" if len(cell.nodes) > 1 else "node"
        head.append(printable(f" · {nodes} {', '.join(cell.nodes)} · {cell.profile}"))
    if cell.error is not None:
        console.print(head + Text(" · failed", style="bold red"))
        console.print(_indented(Text(printable(cell.error), style="red"), 4))
        for note in cell.notes:
            console.print(_indented(Text(printable(f"note: {note}"), style="dim"), 2))
        return
    errors = sum(h.severity == "error" for h in cell.hazards)
    if cell.hazards:
        head.append(f" · {_count(errors, 'error')}, {_count(len(cell.hazards) - errors, 'warning')}",
                    style="red" if errors else "yellow")
    else:
        head.append(" · clean", style="green")
    console.print(head)
    for hazard in cell.hazards:
        icon, style = _SEVERITY.get(hazard.severity, ("?", "bold"))
        line = Text(f"{icon} ", style=style)
        line.append(f"line {hazard.line} " if hazard.line is not None else "", style="bold")
        line.append(f"{hazard.kind}: ", style=style)
        line.append(printable(hazard.code.strip()), style="cyan")
        if len(cell.nodes) > 1:
            line.append(printable(f"  (node {hazard.node})"), style="dim")
        console.print(_indented(line, 2))
        console.print(_indented(Text(printable(hazard.message)), 4))
        console.print(_indented(Text(printable(f"fix: {hazard.fix}"), style="green"), 4))
    if cell.probe is not None:
        console.print(_indented(_probe_line(cell.probe), 2))
    for note in cell.notes:
        console.print(_indented(Text(printable(f"note: {note}"), style="dim"), 2))
    if cell.blocked is not None:
        console.print(_indented(Text(printable(f"✗ {cell.blocked}"), style="red"), 2))
    if cell.exported:
        console.print(_indented(Text(printable(f"exported: {', '.join(cell.exported)}"), style="green"), 2))


def _probe_line(report: Any) -> Text:
    text = Text(f"probe ({_count(report.n, 'input')}): ")
    if report.passed:
        text.append("passed", style="bold green")
        return text
    text.append("FAILED", style="bold red")
    if report.baked:
        text.append(f" · baked: {', '.join(report.baked)}", style="red")
    for name, check in report.outputs.items():
        err = getattr(check, "max_abs_err", None)
        if err:
            text.append(f" · {name} max abs err {float(err):.3g}")
    return text


if __name__ == "__main__":
    sys.exit(main())
