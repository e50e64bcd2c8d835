"""``leapp-notebook check``: run notebooks and scripts headless, trace their nodes, report, set the exit code.

Notebooks run as in Jupyter: code cells in order, in one namespace, with the notebook's folder as the
working directory. ``%%leapp_trace`` cells are traced with their own flags (through the magic's own
code); other IPython magics and shell lines are skipped. Scripts that declare nodes with ``annotate``
are traced whole. Exit status: 0 clean, 1 error hazards / failed probes / failing cells, 2 usage.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Iterator, Sequence

from rich.console import Console
from rich.padding import Padding
from rich.text import Text

from .trace import PROFILES, trace_cell
from .tracing.types import CellError, Hazard, TraceError

EXIT_CLEAN, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
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

    @property
    def failed(self) -> bool:
        return (self.error is not None or self.blocked is not None
                or any(h.severity == "error" for h in self.hazards)
                or (self.probe is not None and not self.probe.passed))

    def to_dict(self) -> dict[str, Any]:
        return {
            "cell": self.cell, "nodes": self.nodes, "profile": self.profile, "failed": self.failed,
            "hazards": [h.to_dict() for h in self.hazards], "probe": _probe_dict(self.probe),
            "exported": self.exported, "export_blocked": self.blocked, "error": self.error,
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


def _probe_dict(report: Any) -> dict[str, Any] | None:
    if report is None:
        return None
    outputs = {}
    for name, check in report.outputs.items():
        outputs[name] = {key: _plain(getattr(check, key, None))
                         for key in ("max_abs_err", "max_rel_err", "mismatches", "shape_ok", "dtype_ok")}
    return {"passed": bool(report.passed), "n": report.n, "baked": list(report.baked), "outputs": outputs}


def _plain(value: Any) -> Any:
    """JSON-safe scalars (NumPy scalars, inf and nan as strings)."""
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        return str(value)
    return value


# ------------------------------------------------------------------------------------------
# running
# ------------------------------------------------------------------------------------------

class _ShellStub:
    """``get_ipython()`` for headless runs: every magic and shell command (``run_line_magic``, ``system``,
    ...) is a no-op returning None."""

    def __getattr__(self, name: str) -> Any:
        return lambda *_, **__: None


@contextlib.contextmanager
def _running_in(directory: Path | None, import_path: Path) -> Iterator[None]:
    """Run with ``directory`` as working directory (when given) and ``import_path`` importable."""
    previous = os.getcwd()
    sys.path.insert(0, str(import_path))
    try:
        if directory is not None:
            os.chdir(directory)
        yield
    finally:
        os.chdir(previous)
        with contextlib.suppress(ValueError):
            sys.path.remove(str(import_path))


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """The user's prints do not belong in the report."""
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        yield


def check_notebook(path: Path, *, probe: int | None, profile: str | None, status: Any = None) -> FileReport:
    """Run the notebook's code cells in order; trace its ``%%leapp_trace`` cells."""
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
    with _running_in(folder, folder):
        for number, cell in enumerate(notebook.cells, start=1):
            if cell.cell_type != "code" or not cell.source.strip():
                continue
            first, _, body = cell.source.partition("\n")
            command, _, line = first.strip().partition(" ")
            if status is not None:
                status.update(f"{path.name}: cell {number}")
            if command == MAGIC_PREFIX:
                result = CellReport(number)
                report.cells.append(result)
                try:
                    options = parse_options(line)
                    result.profile = profile or options.profile
                    options = replace(options, profile=result.profile)
                    with _quiet():
                        run = run_cell(options, body, namespace, line=line.strip(), probe=probe)
                except UsageError as exc:
                    result.error = f"bad {MAGIC_PREFIX} line: {exc}"
                except (TraceError, CellError) as exc:
                    result.error = f"{type(exc).__name__}: {exc}"
                else:
                    namespace[TRACE_VARIABLE] = run.trace
                    result.nodes = list(run.trace.nodes)
                    result.hazards = run.trace.hazards
                    result.probe = run.probe
                    result.blocked = None if run.export_error is None else str(run.export_error)
                    result.exported = [str(p) for p in run.exported] if run.exported else None
                if result.error is not None:
                    break
                continue
            if command.startswith("%%"):
                report.skipped.append(number)
                continue
            error = _run_plain(transformer.transform_cell(cell.source), number, namespace)
            if error is not None:
                report.cells.append(CellReport(number, error=error))
                break
    return report


def _run_plain(source: str, number: int, namespace: dict[str, Any]) -> str | None:
    """Run one ordinary cell; the error it raised (with its line), or None."""
    filename = f"<cell {number}>"
    try:
        code = compile(source, filename, "exec")
        with _quiet():
            exec(code, namespace)
    except Exception as exc:  # noqa: BLE001 - any failure of the user's cell is reported, not raised
        line = exc.lineno if isinstance(exc, SyntaxError) else _line_in(exc, filename)
        return f"line {line}: {type(exc).__name__}: {exc}"
    return None


def _line_in(exc: BaseException, filename: str) -> int | None:
    tb, line = exc.__traceback__, None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == filename:
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


def check_script(path: Path, *, probe: int | None, profile: str | None, status: Any = None) -> FileReport:
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
    except (TraceError, CellError) as exc:
        result.error = f"{type(exc).__name__}: {exc}"
        return report
    result.nodes = list(trace.nodes)
    result.hazards = trace.hazards
    return report


# ------------------------------------------------------------------------------------------
# command line
# ------------------------------------------------------------------------------------------

def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="leapp-notebook",
                                     description="Trace NumPy notebooks and scripts into torch graphs and "
                                                 "report what lookup tracing loses.")
    commands = parser.add_subparsers(dest="command", required=True, metavar="command")
    check = commands.add_parser("check", help="run notebooks (.ipynb) and scripts (.py) and report hazards",
                                description="Run notebooks and scripts, trace their %%leapp_trace cells and "
                                            "annotate nodes, report hazards. Exit 0 clean, 1 error hazards "
                                            "or failed probes, 2 usage errors.")
    check.add_argument("paths", nargs="+", metavar="PATH", type=Path, help=".ipynb notebooks and .py scripts")
    check.add_argument("--probe", type=int, metavar="N",
                       help="probe every node on N fresh random inputs (default: only cells that ask)")
    check.add_argument("--profile", choices=PROFILES,
                       help="trace every cell with this profile (default: each cell's own, else leapp)")
    check.add_argument("--json", action="store_true", help="print machine-readable results on stdout")
    return parser


def _validate(paths: Sequence[Path]) -> None:
    for path in paths:
        if not path.exists():
            raise UsageProblem(f"{path}: no such file")
        if path.is_dir():
            raise UsageProblem(f"{path}: is a directory; name the .ipynb notebooks and .py scripts to check")
        if path.suffix not in (".ipynb", ".py"):
            raise UsageProblem(f"{path}: cannot check a '{path.suffix}' file; give .ipynb notebooks or "
                               ".py scripts")
        text = path.read_text(encoding="utf-8", errors="replace")
        if path.suffix == ".ipynb" and MAGIC_PREFIX not in text:
            raise UsageProblem(f"{path}: no {MAGIC_PREFIX} cell, nothing to check")
        if path.suffix == ".py" and "annotate" not in text:
            raise UsageProblem(f"{path}: declares no node; check traces scripts that call "
                               "annotate.input_tensors(...) and annotate.output_tensors(...)")


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``leapp-notebook`` console script; returns the exit status."""
    args = _parser().parse_args(argv)
    if args.probe is not None and args.probe < 1:
        print(f"leapp-notebook: --probe {args.probe}: give the number of random inputs, at least 1",
              file=sys.stderr)
        return EXIT_USAGE
    try:
        _validate(args.paths)
    except UsageProblem as exc:
        print(f"leapp-notebook: {exc}", file=sys.stderr)
        return EXIT_USAGE
    reports = []
    # bound to the real stderr now: the cells' own output is redirected while they run
    progress = Console(file=sys.stderr, highlight=False, force_jupyter=False)
    with progress.status("checking") as status:
        for path in args.paths:
            check = check_notebook if path.suffix == ".ipynb" else check_script
            reports.append(check(path, probe=args.probe, profile=args.profile, status=status))
    code = EXIT_FAILED if any(report.failed for report in reports) else EXIT_CLEAN
    if args.json:
        print(json.dumps({"exit_code": code, "files": [r.to_dict() for r in reports]}, indent=2))
    else:
        _print_reports(Console(highlight=False, force_jupyter=False), reports, code)
    return code


# ------------------------------------------------------------------------------------------
# the rich report
# ------------------------------------------------------------------------------------------

_SEVERITY = {"error": ("✗", "bold red"), "warning": ("!", "bold yellow")}


def _print_reports(console: Console, reports: list[FileReport], code: int) -> None:
    for report in reports:
        console.rule(Text(str(report.path), style="bold"), align="left")
        for cell in report.cells:
            _print_cell(console, cell)
        if report.skipped:
            skipped = ", ".join(map(str, report.skipped))
            console.print(_indented(Text(f"cell magics skipped in cells {skipped}", style="dim"), 2))
    hazards = [h for r in reports for c in r.cells for h in c.hazards]
    cells = [c for r in reports for c in r.cells]
    failed_probes = sum(1 for c in cells if c.probe is not None and not c.probe.passed)
    errors = sum(h.severity == "error" for h in hazards)
    summary = (f"{_count(len(reports), 'file')}, {sum(bool(c.nodes) for c in cells)} traced, "
               f"{_count(errors, 'error')}, {_count(len(hazards) - errors, 'warning')}, "
               f"{_count(failed_probes, 'failed probe')}, "
               f"{_count(sum(c.error is not None for c in cells), 'failing cell')}: exit {code}")
    console.print(Text(summary, style="bold red" if code else "bold green"))


def _count(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _indented(text: Text, left: int) -> Padding:
    """Wrapped lines keep the indentation."""
    return Padding(text, (0, 0, 0, left), expand=False)


def _print_cell(console: Console, cell: CellReport) -> None:
    head = Text(f"cell {cell.cell}" if cell.cell is not None else "script", style="bold")
    if cell.nodes:
        nodes = "nodes" if len(cell.nodes) > 1 else "node"
        head.append(f" · {nodes} {', '.join(cell.nodes)} · {cell.profile}")
    if cell.error is not None:
        console.print(head + Text(" · failed", style="bold red"))
        console.print(_indented(Text(cell.error, style="red"), 4))
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
        line.append(hazard.code.strip(), style="cyan")
        if len(cell.nodes) > 1:
            line.append(f"  (node {hazard.node})", style="dim")
        console.print(_indented(line, 2))
        console.print(_indented(Text(hazard.message), 4))
        console.print(_indented(Text(f"fix: {hazard.fix}", style="green"), 4))
    if cell.probe is not None:
        console.print(_indented(_probe_line(cell.probe), 2))
    if cell.blocked is not None:
        console.print(_indented(Text(f"✗ {cell.blocked}", style="red"), 2))
    if cell.exported:
        console.print(_indented(Text(f"exported: {', '.join(cell.exported)}", style="green"), 2))


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
