"""The pytest plugin run by pytest itself (``pytester``): traced cells become items that fail on hazards."""

from __future__ import annotations

import sys
from importlib.metadata import entry_points
from pathlib import Path

import nbformat
import pytest

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[1]
SETUP = ("import numpy as np\nraw = np.array([0.1, 0.4, 0.7, 0.9], np.float32)\n"
         "CALIB_IN = np.array([0.0, 0.5, 1.0])\nCALIB_OUT = np.array([0.0, 2.0, 10.0])\n")
CLEAN = "%%leapp_trace scale --inputs raw --outputs y\ny = raw * 2.0 + 1.0\n"
HAZARDOUS = ("%%leapp_trace\n"
             "state = annotate.input_tensors('node', {'state': raw})\n"
             "calibrated = np.interp(state, CALIB_IN, CALIB_OUT)\n"
             "annotate.output_tensors('node', {'result': state * 0.1 + calibrated})\n")


def plugin_args() -> list[str]:
    """Load the plugin by name unless its entry point already does (registering it twice is an error)."""
    installed = any(ep.value == "leapp_notebook.pytest_plugin" for ep in entry_points(group="pytest11"))
    return [] if installed else ["-p", "leapp_notebook.pytest_plugin"]


def notebook(path: Path, *sources: str) -> Path:
    book = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# checked by pytest --leapp")]
                                    + [nbformat.v4.new_code_cell(source) for source in sources])
    nbformat.write(book, path)
    return path


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest(*plugin_args(), "-p", "no:cacheprovider", *args)


@pytest.fixture
def checked(pytester: pytest.Pytester) -> Path:
    return notebook(pytester.path / "cells.ipynb", SETUP, CLEAN, HAZARDOUS)


def test_each_traced_cell_is_an_item_failing_on_an_error_hazard_with_the_report(pytester, checked):
    result = run(pytester, "--leapp", "-v", str(checked))

    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(["*cells.ipynb::cell 3 PASSED*", "*cells.ipynb::cell 4 FAILED*",
                                 "*cells.ipynb::other cells PASSED*"])
    text = result.stdout.str()
    assert "cell 4 · node node · leapp · 1 error, 0 warnings" in text
    assert "line 3 untraced-call: calibrated = np.interp(state, CALIB_IN, CALIB_OUT)" in text
    assert "fix: " in text and "Traceback" not in text


def test_leapp_probe_probes_every_cell_and_the_report_shows_the_result(pytester, checked):
    without = run(pytester, "--leapp", str(checked))
    probed = run(pytester, "--leapp", "--leapp-probe", "4", str(checked))

    without.assert_outcomes(passed=2, failed=1)
    probed.assert_outcomes(passed=2, failed=1)
    assert "probe (" not in without.stdout.str()
    probed.stdout.fnmatch_lines(["*probe (4 inputs): FAILED · baked: result*"])


def test_a_cell_that_raises_fails_and_the_cells_after_it_say_why(pytester):
    path = notebook(pytester.path / "broken.ipynb", SETUP, "undefined_name + 1\n", CLEAN)

    result = run(pytester, "--leapp", str(path))

    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(["*cell 4 did not run: cell 3 failed before it: line 1: NameError*",
                                 "*broken.ipynb: cell 3 · failed*"])


def test_a_cell_after_the_last_traced_cell_that_raises_fails_the_other_cells_item(pytester):
    """The cell that loads an export back comes after the traced cells: when it raises, the notebook fails (as
    ``leapp-notebook check`` does), with the reason and the note on the skipped export."""
    load_back = 'import torch\nmodel = torch.jit.load("out/scale.pt")\n'
    path = notebook(pytester.path / "tail.ipynb", SETUP, CLEAN.replace("--outputs y", "--outputs y --export out"),
                    load_back)

    result = run(pytester, "--leapp", "-v", str(path))

    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*tail.ipynb::cell 3 PASSED*", "*tail.ipynb::other cells FAILED*"])
    text = " ".join(result.stdout.str().split())
    assert "cell 4 · failed" in text and "which cell 3's --export would have written" in text
    run(pytester, "--leapp", "--leapp-cell-exports", str(path)).assert_outcomes(passed=2)


def test_scripts_with_annotate_nodes_are_items_and_test_modules_are_left_alone(pytester):
    (pytester.path / "pipeline.py").write_text(SETUP + HAZARDOUS.partition("\n")[2] + "\n")
    (pytester.path / "test_pipeline.py").write_text(
        "from leapp_notebook import annotate\n\ndef test_plain():\n"
        "    assert annotate.output_tensors is not None  # annotate.input_tensors( annotate.output_tensors(\n")

    result = run(pytester, "--leapp", "-v", str(pytester.path))

    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*pipeline.py::script FAILED*", "*test_pipeline.py::test_plain PASSED*"])
    assert "untraced-call" in result.stdout.str()


def test_without_leapp_the_plugin_collects_nothing(pytester, checked):
    (pytester.path / "pipeline.py").write_text(SETUP + HAZARDOUS.partition("\n")[2] + "\n")

    result = run(pytester, str(pytester.path))

    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED
    result.assert_outcomes()


def test_bad_probe_count_is_a_usage_error(pytester, checked):
    result = run(pytester, "--leapp", "--leapp-probe", "0", str(checked))

    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--leapp-probe 0: give the number of random inputs, at least 1*"])


def test_the_plugin_is_registered_as_a_pytest11_entry_point():
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        tomllib = pytest.importorskip("tomli")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert project["project"]["entry-points"]["pytest11"] == {"leapp_notebook": "leapp_notebook.pytest_plugin"}


def test_leapp_cell_exports_honours_a_cells_own_export(pytester):
    path = notebook(pytester.path / "exports.ipynb", SETUP, CLEAN.replace("--outputs y", "--outputs y --export out"))

    skipped = run(pytester, "--leapp", str(path))
    assert not (pytester.path / "out").exists()
    honoured = run(pytester, "--leapp", "--leapp-cell-exports", str(path))

    skipped.assert_outcomes(passed=2)
    honoured.assert_outcomes(passed=2)
    assert sorted(p.name for p in (pytester.path / "out").iterdir()) == ["graph.yaml", "scale.pt"]


def test_a_notebook_that_cannot_be_read_is_an_error_of_the_run_not_skipped(pytester):
    """A leftover merge conflict makes a notebook invalid JSON; it mentions %%leapp_trace, so its cells would be
    checked: a collection error (non-zero exit), never a run that passes without it."""
    notebook(pytester.path / "clean.ipynb", SETUP, CLEAN)
    broken = pytester.path / "broken.ipynb"
    broken.write_text("<<<<<<< HEAD\n" + (pytester.path / "clean.ipynb").read_text())
    result = run(pytester, "--leapp", str(pytester.path))
    result.assert_outcomes(errors=1)  # pytest stops at a collection error, as for any file it cannot collect
    assert result.ret != 0 and "broken.ipynb: not a readable notebook" in result.stdout.str()
