"""`leapp-notebook check`: exit codes 0/1/2, the report (cell, line, code, fix), --json, scripts."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from conftest import SEED_INTERP_CELL
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from leapp_notebook.cli import main

SETUP = ("%load_ext leapp_notebook\n"
         "import numpy as np\n"
         "raw_state = np.array([0.1, 0.4, 0.7, 0.9], np.float32)\n"
         "CALIB_IN = np.array([0.0, 0.5, 1.0])\n"
         "CALIB_OUT = np.array([0.0, 2.0, 10.0])\n")
CLEAN_CELL = "%%leapp_trace scale --inputs raw_state --outputs y\ny = raw_state * 2.0 + 1.0\n"
SEED_SCRIPT = SETUP.replace("%load_ext leapp_notebook\n", "") + SEED_INTERP_CELL


def write_notebook(path: Path, *cells: str) -> Path:
    """A notebook of a markdown title then ``cells`` as code cells."""
    book = new_notebook(cells=[new_markdown_cell("# test"), *(new_code_cell(c) for c in cells)])
    nbformat.write(book, path)
    return path


def check(*argv: str, capsys) -> tuple[int, str, str]:
    code = main(["check", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_clean_notebook_exits_0_and_skips_magics_and_shell_lines(tmp_path, capsys):
    book = write_notebook(tmp_path / "clean.ipynb", SETUP + "%matplotlib inline\n!echo hello\n", CLEAN_CELL,
                          "%%bash\nexit 3\n",
                          "assert abs(float(y[0]) - 1.2) < 1e-6\nassert type(y).__name__ == 'ndarray'")

    code, out, _ = check(str(book), capsys=capsys)

    assert code == 0, out
    assert "cell 3 · node scale · leapp · clean" in out
    assert "cell magics skipped in cells 4" in out
    assert "exit 0" in out


def test_seed_notebook_exits_1_with_cell_line_code_and_fix(tmp_path, capsys):
    book = write_notebook(tmp_path / "seed.ipynb", SETUP, "%%leapp_trace\n" + SEED_INTERP_CELL)

    code, out, _ = check(str(book), capsys=capsys)

    assert code == 1
    assert "cell 3 · node node · leapp · 1 error, 0 warnings" in out
    assert "✗ line 4 untraced-call: calibrated = np.interp(state, CALIB_IN, CALIB_OUT)" in out
    assert "fix: At line 4" in out
    assert "exit 1" in out


def test_profile_full_turns_the_seed_hazard_into_a_warning_and_exits_0(tmp_path, capsys):
    book = write_notebook(tmp_path / "seed.ipynb", SETUP, "%%leapp_trace\n" + SEED_INTERP_CELL)

    code, out, _ = check(str(book), "--profile", "full", capsys=capsys)

    assert code == 0
    assert "! line 4 untraced-call" in out and "full · 0 errors, 1 warning" in out


def test_json_reports_hazards_and_the_failed_probe(tmp_path, capsys):
    book = write_notebook(tmp_path / "seed.ipynb", SETUP, "%%leapp_trace\n" + SEED_INTERP_CELL)

    code, out, _ = check(str(book), "--probe", "8", "--json", capsys=capsys)

    result = json.loads(out)
    assert code == 1 and result["exit_code"] == 1
    cell = result["files"][0]["cells"][0]
    assert cell["cell"] == 3 and cell["nodes"] == ["node"] and cell["failed"] is True
    assert [(h["kind"], h["line"], h["severity"]) for h in cell["hazards"]] == [("untraced-call", 4, "error")]
    assert cell["probe"]["passed"] is False and cell["probe"]["baked"] == ["result"]
    assert cell["probe"]["n"] == 8 and cell["probe"]["outputs"]["result"]["max_abs_err"] > 0


def test_cell_probe_flag_is_honoured_without_the_cli_flag(tmp_path, capsys):
    book = write_notebook(tmp_path / "probed.ipynb", SETUP,
                          CLEAN_CELL.replace("--outputs y", "--outputs y --probe 4 --seed 0"))

    code, out, _ = check(str(book), "--json", capsys=capsys)

    probe = json.loads(out)["files"][0]["cells"][0]["probe"]
    assert code == 0 and probe["passed"] is True and probe["n"] == 4


def test_refused_export_in_a_cell_exits_1_and_writes_nothing(tmp_path, capsys):
    book = write_notebook(tmp_path / "export.ipynb", SETUP, "%%leapp_trace --export out\n" + SEED_INTERP_CELL)

    code, out, _ = check(str(book), capsys=capsys)

    assert code == 1 and "export refused" in out
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_export_in_a_cell_writes_next_to_the_notebook(tmp_path, capsys):
    cell = CLEAN_CELL.replace("--outputs y", "--outputs y --export out")
    book = write_notebook(tmp_path / "export.ipynb", SETUP, cell)

    code, out, _ = check(str(book), capsys=capsys)

    assert code == 0 and (tmp_path / "out" / "scale.pt").is_file()
    assert "exported:" in out


def test_failing_plain_cell_exits_1_with_its_line(tmp_path, capsys):
    book = write_notebook(tmp_path / "broken.ipynb", SETUP, "value = 1\nvalue = value / 0\n", CLEAN_CELL)

    code, out, _ = check(str(book), capsys=capsys)

    assert code == 1
    assert "cell 3 · failed" in out and "line 2: ZeroDivisionError" in out
    assert "node scale" not in out, "cells after a failing cell do not run"


def test_exception_in_traced_cell_is_reported_at_its_editor_line(tmp_path, capsys):
    book = write_notebook(tmp_path / "raises.ipynb", SETUP,
                          "%%leapp_trace --inputs raw_state --outputs y\n"
                          "y = raw_state * 2\nz = y / missing\n")

    code, out, _ = check(str(book), capsys=capsys)

    assert code == 1 and "CellError: line 3: NameError" in out


def test_script_with_annotate_nodes_is_traced_whole(tmp_path, capsys):
    script = tmp_path / "seed_node.py"
    script.write_text(SEED_SCRIPT)

    code, out, _ = check(str(script), capsys=capsys)

    assert code == 1
    assert "script · node node · leapp" in out and "line 7 untraced-call" in out


def test_clean_script_exits_0(tmp_path, capsys):
    script = tmp_path / "clean_node.py"
    script.write_text(SEED_SCRIPT.replace("np.interp(state, CALIB_IN, CALIB_OUT)",
                                          "np.clip(state, 0.0, 1.0)"))

    code, out, _ = check(str(script), "--probe", "4", capsys=capsys)

    assert code == 0 and "probe (4 inputs): passed" in out


@pytest.mark.parametrize("make, message", [
    (lambda d: d / "missing.ipynb", "no such file"),
    (lambda d: d, "is a directory"),
    (lambda d: (d / "notes.txt", (d / "notes.txt").write_text("x"))[0], "cannot check a '.txt' file"),
    (lambda d: write_notebook(d / "plain.ipynb", "x = 1"), "no %%leapp_trace cell"),
    (lambda d: (d / "plain.py", (d / "plain.py").write_text("x = 1\n"))[0], "declares no node"),
])
def test_paths_it_cannot_check_exit_2_before_running_anything(tmp_path, capsys, make, message):
    path = make(tmp_path)
    clean = write_notebook(tmp_path / "clean.ipynb", SETUP, CLEAN_CELL)

    code, out, err = check(str(clean), str(path), capsys=capsys)

    assert code == 2 and message in err and out == ""


def test_bad_flags_exit_2(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["check", "--bogus", "x.ipynb"])
    assert exit_info.value.code == 2
    assert main(["check", "--probe", "0", "x.ipynb"]) == 2
    assert "--probe 0" in capsys.readouterr().err


def test_console_script_and_python_m_agree_on_exit_codes(tmp_path):
    seed = write_notebook(tmp_path / "seed.ipynb", SETUP, "%%leapp_trace\n" + SEED_INTERP_CELL)
    clean = write_notebook(tmp_path / "clean.ipynb", SETUP, CLEAN_CELL)
    executable = Path(sys.executable).with_name("leapp-notebook")
    script = [str(executable)] if executable.exists() else [sys.executable, "-m", "leapp_notebook"]

    runs = {
        "seed": subprocess.run([*script, "check", str(seed)], capture_output=True, text=True),
        "clean": subprocess.run([sys.executable, "-m", "leapp_notebook", "check", str(clean)],
                                capture_output=True, text=True),
        "usage": subprocess.run([sys.executable, "-m", "leapp_notebook", "check", str(tmp_path / "nope.py")],
                                capture_output=True, text=True),
    }

    assert {name: run.returncode for name, run in runs.items()} == {"seed": 1, "clean": 0, "usage": 2}
    assert "untraced-call" in runs["seed"].stdout and "nope.py: no such file" in runs["usage"].stderr
