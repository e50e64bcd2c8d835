"""pytest plugin: ``pytest --leapp notebooks/`` checks every traced cell as a test, as nbval does for notebooks.

Each ``%%leapp_trace`` cell of a notebook, and each script that declares nodes with ``annotate``, is one
test item; a notebook's other cells are one more (``other cells``), which fails when one of them raises. An
item fails when its cell has an error hazard, a failed probe, a refused export, or raises; the failure text
is ``leapp-notebook check``'s report of that cell (hazards with line, code, message and fix; the probe's
result). The run is the CLI's own (``cli.check_notebook`` / ``cli.check_script``): the
notebook's cells run once, in order, in one namespace, and each item reads its cell's result.

Without ``--leapp`` the plugin only adds its options: it collects nothing and changes no other test run.
Options: ``--leapp-probe N`` probes every node on N fresh inputs (default: only cells with ``--probe``),
``--leapp-profile leapp|full`` traces every cell with that profile (default: each cell's own),
``--leapp-cell-exports`` honours each cell's own ``--export`` as Jupyter does (the CLI's ``--cell-exports``).
"""

from __future__ import annotations

import fnmatch
import io
import warnings
from pathlib import Path
from typing import Any, Iterator

import pytest

MAGIC_PREFIX = "%%leapp_trace"
OTHER_CELLS = "other cells"  # the item of a notebook's cells that are not traced
REPORT_WIDTH = 100


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("leapp", "leapp_notebook: traced notebook cells as tests")
    group.addoption("--leapp", action="store_true", default=False,
                    help="collect each %%leapp_trace cell of .ipynb notebooks (and each .py script declaring "
                         "annotate nodes) as a test that fails on error hazards or failed probes")
    group.addoption("--leapp-probe", type=int, default=None, metavar="N",
                    help="probe every traced node on N fresh random inputs (default: only cells with --probe)")
    group.addoption("--leapp-profile", choices=("leapp", "full"), default=None,
                    help="trace every cell with this profile (default: each cell's own, else leapp)")
    group.addoption("--leapp-cell-exports", action="store_true", default=False,
                    help="honour each cell's own --export as Jupyter does (default: skipped, nothing written)")


def pytest_configure(config: pytest.Config) -> None:
    probe = config.getoption("leapp_probe", None)
    if probe is not None and probe < 1:
        raise pytest.UsageError(f"--leapp-probe {probe}: give the number of random inputs, at least 1")


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if not parent.config.getoption("leapp"):
        return None
    if file_path.suffix == ".ipynb" and ".ipynb_checkpoints" not in file_path.parts:
        try:
            traced = bool(_traced_cells(file_path))
        except Exception:  # noqa: BLE001 - unreadable: an error of the run if it may hold traced cells
            traced = _mentions_the_magic(file_path)
        if traced:
            return LeappNotebook.from_parent(parent, path=file_path)
    elif file_path.suffix == ".py" and _declares_nodes(file_path, parent.config):
        return LeappScript.from_parent(parent, path=file_path)
    return None


def _traced_cells(path: Path) -> list[int]:
    """The numbers (1-based over all cells, as the CLI counts them) of the notebook's traced cells; raises when the
    file is not a readable notebook."""
    import nbformat

    from .cli import traced_cell_numbers

    return traced_cell_numbers(nbformat.read(path, as_version=4))


def _mentions_the_magic(path: Path) -> bool:
    try:
        return MAGIC_PREFIX in path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False


def _declares_nodes(path: Path, config: pytest.Config) -> bool:
    """A script with annotate nodes, and not a test module or conftest pytest collects on its own."""
    if path.name == "conftest.py":
        return False
    patterns = config.getini("python_files") or ["test_*.py", "*_test.py"]
    if any(fnmatch.fnmatch(path.name, pattern) for pattern in patterns):
        return False
    text = path.read_text(encoding="utf-8", errors="replace")
    return "annotate.input_tensors(" in text and "annotate.output_tensors(" in text


class LeappCellFailed(Exception):
    """A traced cell failed its check; the message is the CLI's report of the cell."""


class _Checked(pytest.File):
    """A file whose cells the CLI checks once; its items read their cell's result."""

    _report: Any = None

    def checked(self) -> Any:
        if self._report is None:
            from . import cli

            options = {"probe": self.config.getoption("leapp_probe"),
                       "profile": self.config.getoption("leapp_profile")}
            check = cli.check_notebook if self.path.suffix == ".ipynb" else cli.check_script
            if check is cli.check_notebook:
                options["cell_exports"] = self.config.getoption("leapp_cell_exports")
            with warnings.catch_warnings():
                # torch deprecates TorchScript, which the export of a cell with --export writes and reloads
                warnings.filterwarnings("ignore", message=r"`torch\.jit\.\w+` is deprecated",
                                        category=DeprecationWarning)
                self._report = check(self.path, **options)
        return self._report


class LeappNotebook(_Checked):
    """A notebook: one item per ``%%leapp_trace`` cell, and one for its other cells (``other cells``), which fails
    when one of them raised: a notebook that exports and then loads its export back fails in such a cell."""

    def collect(self) -> Iterator[pytest.Item]:
        try:
            traced = _traced_cells(self.path)
        except Exception as exc:  # noqa: BLE001 - nbformat raises JSON, schema and key errors alike
            reason = " ".join(str(exc).split())[:160] or type(exc).__name__
            raise self.CollectError(f"{self.path}: not a readable notebook ({type(exc).__name__}: {reason}); "
                                    f"it mentions {MAGIC_PREFIX}, so its cells would be checked") from exc
        for number in traced:
            yield LeappCell.from_parent(self, name=f"cell {number}", number=number)
        yield LeappOtherCells.from_parent(self, name=OTHER_CELLS, traced=frozenset(traced))


class LeappScript(_Checked):
    """A script traced whole: one item."""

    def collect(self) -> Iterator[pytest.Item]:
        yield LeappCell.from_parent(self, name="script", number=None)


class _LeappItem(pytest.Item):
    """An item whose failure text is the CLI's report (``LeappCellFailed``), named by the cells it checks."""

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, LeappCellFailed):
            return f"{self.path.name}: {excinfo.value}"
        return super().repr_failure(excinfo)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, self.name


class LeappCell(_LeappItem):
    """One traced cell (or script): passes when the CLI finds it clean."""

    def __init__(self, *, number: int | None, **kwargs: Any):
        super().__init__(**kwargs)
        self.number = number

    def runtest(self) -> None:
        report = self.parent.checked()
        cell = next((c for c in report.cells if c.cell == self.number), None)
        if cell is None:
            earlier = next((c for c in report.cells if c.error is not None), None)
            why = (f"cell {earlier.cell} failed before it: {earlier.error}" if earlier is not None
                   else "the notebook stopped before it")
            raise LeappCellFailed(f"cell {self.number} did not run: {why}")
        if cell.failed:
            raise LeappCellFailed(_cell_report(cell))


class LeappOtherCells(_LeappItem):
    """A notebook's cells that are not traced: passes when none of them raised (the CLI stops at the first that
    does, and fails the run)."""

    def __init__(self, *, traced: frozenset[int], **kwargs: Any):
        super().__init__(**kwargs)
        self.traced = traced  # the notebook's traced cells, which have items of their own

    def runtest(self) -> None:
        report = self.parent.checked()
        # (a cell that traces through get_ipython().run_cell_magic('leapp_trace', ...) has no item of its own)
        failed = next((c for c in report.cells if c.failed and c.cell not in self.traced), None)
        if failed is not None:
            raise LeappCellFailed(_cell_report(failed))


def _cell_report(cell: Any) -> str:
    """The CLI's report of one cell, as plain text."""
    from rich.console import Console

    from .cli import _print_cell

    buffer = io.StringIO()
    console = Console(file=buffer, width=REPORT_WIDTH, color_system=None, no_color=True, highlight=False,
                      emoji=False, force_terminal=False, force_jupyter=False)
    _print_cell(console, cell)
    return "\n".join(line.rstrip() for line in buffer.getvalue().splitlines()).strip()
