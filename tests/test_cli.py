"""`leapp-notebook check`: exit codes 0/1/2, the report (cell, line, code, fix), --json, scripts."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import numpy as np
import pytest
from conftest import SEED_INTERP_CELL
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from leapp_notebook.cli import SUMMARY_WIDTH, main, summary_line

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


def test_a_cells_own_export_flag_is_ignored_with_a_note_and_nothing_is_written(tmp_path, capsys):
    cell = CLEAN_CELL.replace("--outputs y", "--outputs y --export out")
    book = write_notebook(tmp_path / "export.ipynb", SETUP, cell)

    code, out, _ = check(str(book), capsys=capsys)

    assert code == 0
    assert ("note: --export out ignored: check writes no file unless given --export DIR, or --cell-exports to "
            "honour the cells' own") in " ".join(out.split())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["export.ipynb"]


LOAD_BACK = ('import torch\nmodel = torch.jit.load("out/scale.pt")\n'
             'assert model(torch.ones(4))[0].shape == (4,)\n')


def test_a_cell_that_reads_a_skipped_export_is_told_why_it_failed(tmp_path, capsys):
    """A notebook that exports and then loads the file back (the quickstart does): with the cell's own --export
    skipped the next cell fails, and its report says which cell's export it was reading and what to pass."""
    cell = CLEAN_CELL.replace("--outputs y", "--outputs y --export out")
    book = write_notebook(tmp_path / "export.ipynb", SETUP, cell, LOAD_BACK)

    code, out, _ = check(str(book), capsys=capsys)

    said = " ".join(out.split())
    assert code == 1 and "cell 4 · failed" in said
    assert ("note: this cell reads out, which cell 3's --export would have written: check skips a cell's own "
            "--export; pass --cell-exports (pytest: --leapp-cell-exports) to honour it as Jupyter does") in said
    assert sorted(p.name for p in tmp_path.iterdir()) == ["export.ipynb"]


def test_a_failing_cell_that_does_not_read_the_skipped_export_gets_no_note(tmp_path, capsys):
    cell = CLEAN_CELL.replace("--outputs y", "--outputs y --export out")
    book = write_notebook(tmp_path / "export.ipynb", SETUP, cell, "print(output_of_the_model)\n")

    code, out, _ = check(str(book), capsys=capsys)

    said = " ".join(out.split())
    assert code == 1 and "NameError: name 'output_of_the_model' is not defined" in said
    assert "which cell 3's --export would have written" not in said


def test_cell_exports_honours_the_cells_own_export_as_jupyter_does(tmp_path, capsys, monkeypatch):
    cell = CLEAN_CELL.replace("--outputs y", "--outputs y --export out")
    (tmp_path / "nb").mkdir()
    book = write_notebook(tmp_path / "nb" / "export.ipynb", SETUP, cell, LOAD_BACK)
    monkeypatch.chdir(tmp_path)  # the cell's path is the notebook folder's, as in Jupyter

    code, out, _ = check(str(book), "--cell-exports", "--json", capsys=capsys)

    assert code == 0, out
    (cell_report,) = json.loads(out)["files"][0]["cells"]
    folder = tmp_path / "nb" / "out"
    assert cell_report["exported"] == [str(folder / "scale.pt"), str(folder / "graph.yaml")]
    assert sorted(p.name for p in folder.iterdir()) == ["graph.yaml", "scale.pt"]
    assert not cell_report["notes"]


def test_a_refused_cell_export_fails_the_run_with_cell_exports(tmp_path, capsys):
    cell = ("%%leapp_trace --export out\nstate = annotate.input_tensors('node', {'state': raw_state})\n"
            "annotate.output_tensors('node', {'y': np.interp(state, [0.0, 1.0], [0.0, 5.0]) + state})\n")
    book = write_notebook(tmp_path / "refused.ipynb", SETUP, cell)

    code, out, _ = check(str(book), "--cell-exports", "--json", capsys=capsys)

    (cell_report,) = json.loads(out)["files"][0]["cells"]
    assert code == 1 and cell_report["export_blocked"].startswith("export refused: nothing was written.")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["refused.ipynb"]


def test_export_flag_of_the_cli_writes_each_traced_cell_under_dir(tmp_path, capsys, monkeypatch):
    (tmp_path / "nb").mkdir()
    book = write_notebook(tmp_path / "nb" / "export.ipynb", SETUP, CLEAN_CELL)
    monkeypatch.chdir(tmp_path)  # DIR is relative to the caller, not to the notebook's folder

    code, out, _ = check(str(book), "--export", "deploy", "--format", "jit,pt2", capsys=capsys)

    folder = tmp_path / "deploy" / "export-cell3"
    assert code == 0, out
    assert sorted(p.name for p in folder.iterdir()) == ["graph.yaml", "scale.pt", "scale.pt2"]
    assert "exported:" in out
    assert sorted(p.name for p in (tmp_path / "nb").iterdir()) == ["export.ipynb"]


def test_the_status_line_follows_an_export_step_by_step(tmp_path):
    """``check --export`` keeps its status line moving through a long export (torch's ONNX exporter takes a minute
    on a large graph): each step of the export is shown as it is done."""
    from leapp_notebook.cli import ExportRequest, check_notebook

    book = write_notebook(tmp_path / "export.ipynb", SETUP, CLEAN_CELL)

    class Status:
        shown: list[str] = []

        def update(self, text):
            self.shown.append(text)

    status = Status()
    report = check_notebook(book, probe=4, profile=None, status=status,
                            export=ExportRequest(tmp_path / "deploy", ("jit", "pt2")))
    assert report.cells[0].exported
    exporting = [text for text in status.shown if "exporting" in text]
    assert exporting == ["export.ipynb: cell 3: exporting"] + [
        f"export.ipynb: cell 3: exporting ({n} of 4 steps done)" for n in range(1, 5)]


def test_cli_export_of_a_hazardous_cell_is_refused_exits_1_and_writes_nothing(tmp_path, capsys):
    book = write_notebook(tmp_path / "export.ipynb", SETUP, "%%leapp_trace\n" + SEED_INTERP_CELL)

    code, out, _ = check(str(book), "--export", str(tmp_path / "deploy"), capsys=capsys)

    assert code == 1 and "✗ export refused: nothing was written." in out
    assert "export refused: export refused" not in out
    assert not (tmp_path / "deploy").exists()
    assert out.rstrip().splitlines()[-1] == "1 file, 1 traced, 1 error, 1 blocked export: exit 1"


@pytest.mark.parametrize("argv, message", [
    (["--format", "jit"], "--format is for --export"),
    (["--export", "d", "--format", "tflite"], "--format tflite: give one or more of jit, jit-script"),
    (["--export", "", ], "--export: name the folder"),
])
def test_bad_export_flags_exit_2(tmp_path, capsys, argv, message):
    book = write_notebook(tmp_path / "clean.ipynb", SETUP, CLEAN_CELL)

    code, out, err = check(str(book), *argv, capsys=capsys)

    assert code == 2 and message in err and out == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["clean.ipynb"]


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


# ------------------------------------------------------------------------------------------
# exits, interrupts and unreadable input (issue 9, item 3)
# ------------------------------------------------------------------------------------------

MARK_CELL = "open('ran-after', 'w').close()\n"  # a later cell leaves this file if it ran


@pytest.mark.parametrize("call, shown", [
    ("import sys\nsys.exit(0)\n", "line 2: SystemExit: 0: the cell exited"),
    ("import sys\nsys.exit(3)\n", "line 2: SystemExit: 3: the cell exited"),
    ("exit()\n", "line 1: SystemExit: None: the cell exited"),
    ("raise SystemExit('bye')\n", "line 1: SystemExit: 'bye': the cell exited"),
])
def test_a_plain_cell_that_exits_is_a_failed_cell_and_the_run_stops(tmp_path, capsys, call, shown):
    book = write_notebook(tmp_path / "exits.ipynb", SETUP, call, CLEAN_CELL, MARK_CELL)

    code, out, _ = check(str(book), capsys=capsys)

    assert code == 1, out  # never 0 (nothing checked) nor the cell's own status
    assert "cell 3 · failed" in out and shown in out
    assert "node scale" not in out and not (tmp_path / "ran-after").exists()
    assert out.rstrip().splitlines()[-1] == "1 file, 0 traced, 1 failing cell: exit 1"


def test_a_traced_cell_that_exits_is_a_failed_cell(tmp_path, capsys):
    book = write_notebook(tmp_path / "exits.ipynb", SETUP,
                          "%%leapp_trace --inputs raw_state --outputs y\nimport sys\ny = raw_state * 2\nsys.exit(0)\n",
                          MARK_CELL)

    code, out, _ = check(str(book), "--json", capsys=capsys)

    cell = json.loads(out)["files"][0]["cells"][0]
    assert code == 1 and cell["failed"] is True and cell["error"].startswith("SystemExit: 0: the cell exited")
    assert not (tmp_path / "ran-after").exists()
    assert not hasattr(np.zeros, "__wrapped__")  # NumPy restored


def test_a_script_that_exits_is_a_failed_cell(tmp_path, capsys):
    script = tmp_path / "exits.py"
    script.write_text(SEED_SCRIPT.replace("annotate.output_tensors", "raise SystemExit(0)\nannotate.output_tensors"))

    code, out, _ = check(str(script), capsys=capsys)

    assert code == 1 and "SystemExit: 0: the cell exited" in out


@pytest.mark.parametrize("cell", [
    "raise KeyboardInterrupt\n",
    "%%leapp_trace --inputs raw_state --outputs y\ny = raw_state * 2\nraise KeyboardInterrupt\n",
])
def test_ctrl_c_in_a_cell_exits_130_and_runs_nothing_more(tmp_path, capsys, cell):
    book = write_notebook(tmp_path / "interrupted.ipynb", SETUP, cell, CLEAN_CELL, MARK_CELL)

    code, out, err = check(str(book), capsys=capsys)

    assert code == 130
    assert err.strip().splitlines()[-1] == "leapp-notebook: interrupted, nothing more was run"
    assert out == "" and not (tmp_path / "ran-after").exists()
    assert not hasattr(np.zeros, "__wrapped__")  # NumPy restored after an interrupted trace


def test_ctrl_c_sent_to_the_process_exits_130(tmp_path):
    started = tmp_path / "started"
    book = write_notebook(tmp_path / "slow.ipynb", SETUP,
                          f"import time\nopen({str(started)!r}, 'w').close()\ntime.sleep(60)\n", CLEAN_CELL)
    process = subprocess.Popen([sys.executable, "-m", "leapp_notebook", "check", str(book)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while not started.exists() and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.05)
        assert started.exists(), process.communicate()
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 130
    assert "leapp-notebook: interrupted, nothing more was run" in err and "Traceback" not in err
    assert "node scale" not in out


@pytest.mark.parametrize("content, message", [
    (b"this is not json", "not a readable notebook (NotJSONError"),
    (b"{}", "not a readable notebook"),
    (b"[1, 2]", "not a readable notebook"),
    (b'{"cells": "%%leapp_trace", \xff}', "not UTF-8 text"),
])
def test_an_unreadable_notebook_is_a_usage_error_in_one_line(tmp_path, capsys, content, message):
    book = tmp_path / "broken.ipynb"
    book.write_bytes(content)

    code, out, err = check(str(book), capsys=capsys)

    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and message in err and "Traceback" not in err


def test_a_file_it_cannot_read_is_a_usage_error(tmp_path, capsys, monkeypatch):
    book = write_notebook(tmp_path / "locked.ipynb", SETUP, CLEAN_CELL)
    real = Path.read_text

    def denied(self, *args, **kwargs):
        if self == book:
            raise PermissionError(13, "Permission denied", str(self))
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Path, "read_text", denied)

    code, out, err = check(str(book), capsys=capsys)

    assert code == 2 and err.strip() == f"leapp-notebook: {book}: cannot read it: Permission denied"


def test_an_unreadable_notebook_exits_2_from_the_console_script(tmp_path):
    book = tmp_path / "broken.ipynb"
    book.write_text("%%leapp_trace not json")
    run = subprocess.run([sys.executable, "-m", "leapp_notebook", "check", str(book)], capture_output=True,
                         text=True)
    assert run.returncode == 2 and len(run.stderr.strip().splitlines()) == 1 and run.stdout == ""


# ------------------------------------------------------------------------------------------
# the summary line (issue 12, item 7)
# ------------------------------------------------------------------------------------------

def test_summary_line_fits_80_columns_whatever_the_counts():
    full = summary_line(files=2, traced=2, errors=1, warnings=3, failed_probes=1, failing_cells=1, blocked=1,
                        code=1)
    assert full == "2 files, 2 traced, 1 err, 3 warn, 1 probe ✗, 1 cell ✗, 1 export ✗: exit 1"
    assert summary_line(files=1, traced=1, errors=0, warnings=0, failed_probes=0, failing_cells=0, blocked=0,
                        code=0) == "1 file, 1 traced: exit 0"
    for n in (1, 12, 345, 6789, 10**6):
        line = summary_line(files=n, traced=n, errors=n, warnings=n, failed_probes=n, failing_cells=n, blocked=n,
                            code=1)
        assert len(line) <= SUMMARY_WIDTH and line.endswith(": exit 1"), line
        assert str(n) in line


def test_the_report_ends_in_one_line_at_80_columns(tmp_path):
    books = [write_notebook(tmp_path / f"seed{i}.ipynb", SETUP, "%%leapp_trace --probe 4 --seed 0\n" + SEED_INTERP_CELL)
             for i in range(3)]
    broken = write_notebook(tmp_path / "broken.ipynb", SETUP, "1 / 0\n", CLEAN_CELL)
    env = dict(os.environ, COLUMNS="80", TERM="dumb")
    run = subprocess.run([sys.executable, "-m", "leapp_notebook", "check", *map(str, books), str(broken)],
                         capture_output=True, text=True, env=env)
    last = run.stdout.rstrip("\n").splitlines()[-1]
    assert run.returncode == 1
    assert last == "4 files, 3 traced, 3 errors, 3 failed probes, 1 failing cell: exit 1"
    assert len(last) <= 80


# ------------------------------------------------------------------------------------------
# what a CI user relies on: no false pass, no file written by a typo, clean output
# ------------------------------------------------------------------------------------------

def test_a_traced_cell_after_blank_lines_is_checked_as_ipython_runs_it(tmp_path, capsys):
    book = write_notebook(tmp_path / "blank.ipynb", SETUP, "\n  \n%%leapp_trace\n" + SEED_INTERP_CELL)
    code, out, _ = check(str(book), capsys=capsys)
    assert code == 1 and "cell 3 · node node · leapp · 1 error" in out, out


def test_a_notebook_or_script_that_only_mentions_a_node_is_a_usage_error(tmp_path, capsys):
    book = write_notebook(tmp_path / "mention.ipynb", "x = 1  # %%leapp_trace comes later")
    script = tmp_path / "prep.py"
    script.write_text("# TODO: annotate the node\nprint('ran')\n")
    for path in (book, script):
        code, out, err = check(str(path), capsys=capsys)
        assert (code, out) == (2, ""), (path, out, err)
        assert "nothing to check" in err or "declares no node" in err


def test_json_stays_one_document_when_a_cell_writes_to_the_process_output(tmp_path, capfd):
    book = write_notebook(tmp_path / "noisy.ipynb", SETUP + "import os\nos.system('echo from-a-child-process')",
                          CLEAN_CELL)
    code = main(["check", "--json", str(book)])
    out, _ = capfd.readouterr()
    assert code == 0 and json.loads(out)["exit_code"] == 0 and "from-a-child-process" not in out


def test_two_files_of_one_name_exporting_into_one_folder_is_a_usage_error(tmp_path, capsys):
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        write_notebook(tmp_path / folder / "model.ipynb", SETUP, CLEAN_CELL)
    code, out, err = check(str(tmp_path / "a" / "model.ipynb"), str(tmp_path / "b" / "model.ipynb"),
                           "--export", str(tmp_path / "out"), capsys=capsys)
    assert code == 2 and "would export into the same folders" in err and not (tmp_path / "out").exists()


@pytest.mark.parametrize("flag", ["--cell", "--ex"])
def test_an_abbreviated_flag_is_refused_and_writes_nothing(tmp_path, capsys, flag):
    book = write_notebook(tmp_path / "nb.ipynb", SETUP, CLEAN_CELL.replace("y\n", "y --export out\n", 1))
    with pytest.raises(SystemExit) as info:
        main(["check", str(book), flag, *(["d"] if flag == "--ex" else [])])
    assert info.value.code == 2 and sorted(p.name for p in tmp_path.iterdir()) == ["nb.ipynb"]


def test_terminal_escapes_from_a_cell_or_a_file_name_are_never_printed(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "400")  # the file's whole name on its rule line, whatever the temporary path
    book = write_notebook(tmp_path / "\x1b[31mnamed.ipynb", SETUP,
                          "%%leapp_trace\n" + SEED_INTERP_CELL.replace("\n", "  # \x1b[2J\x1b]0;green\x07 \x9b2J\n", 1),
                          'raise ValueError("\\x1b[2Jboom")')
    code, out, _ = check(str(book), capsys=capsys)
    assert code == 1 and "\x1b" not in out and "\x07" not in out and "\x9b" not in out  # (C1's one-byte CSI)
    assert "\ufffd[31mnamed.ipynb" in out and "\ufffd[2Jboom" in out


def test_two_formats_of_one_file_are_a_usage_error_before_anything_runs(tmp_path, capsys):
    book = write_notebook(tmp_path / "nb.ipynb", SETUP + "open('ran', 'w').close()", CLEAN_CELL)
    code, out, err = check(str(book), "--export", str(tmp_path / "out"), "--format", "jit,jit-trace", capsys=capsys)
    assert code == 2 and "both write <node>.pt" in err and not (tmp_path / "ran").exists()


def test_a_traced_cell_before_any_load_ext_gets_a_note(tmp_path, capsys):
    without = write_notebook(tmp_path / "bare.ipynb", SETUP.replace("%load_ext leapp_notebook\n", ""), CLEAN_CELL)
    code, out, _ = check(str(without), capsys=capsys)
    assert code == 0 and "note: no %load_ext leapp_notebook before this cell" in out
    code, out, _ = check(str(write_notebook(tmp_path / "loaded.ipynb", SETUP, CLEAN_CELL)), capsys=capsys)
    assert code == 0 and "%load_ext" not in out


def test_a_named_pipe_is_a_usage_error_not_a_wait_forever(tmp_path, capsys):
    fifo = tmp_path / "nb.ipynb"
    os.mkfifo(fifo)
    code, _, err = check(str(fifo), capsys=capsys)
    assert code == 2 and "not a regular file" in err


def test_a_help_cell_runs_nothing_as_in_jupyter(tmp_path, capsys):
    book = write_notebook(tmp_path / "help.ipynb", SETUP, "%%leapp_trace --help\n" + SEED_INTERP_CELL, CLEAN_CELL)
    code, out, _ = check(str(book), capsys=capsys)
    assert code == 0 and "cell magics skipped in cells 3" in out and "untraced-call" not in out


@pytest.mark.parametrize("wrap", ["%%time\n", "%%capture captured\n", "%%time\n%%capture captured\n"])
def test_a_traced_cell_under_time_or_capture_is_checked(tmp_path, capsys, wrap):
    """``%%time`` / ``%%capture`` run the rest of their cell as a cell of its own, so Jupyter traces a
    ``%%leapp_trace`` under them; check skipped the whole cell as an unknown magic and exited 0 on a notebook whose
    traced cell has an error (found by a helper: a CI false pass)."""
    book = write_notebook(tmp_path / "timed.ipynb", SETUP, wrap + "%%leapp_trace\n" + SEED_INTERP_CELL,
                          wrap + "z = raw_state * 2")
    code, out, _ = check(str(book), capsys=capsys)
    assert code == 1 and "1 error" in out and "cell 3" in out, out
    assert "cell magics skipped" not in out


def test_run_cell_magic_of_leapp_trace_in_a_cell_is_checked(tmp_path, capsys):
    """``get_ipython().run_cell_magic('leapp_trace', '', src)``: traced by Jupyter, silently skipped by check's
    stand-in shell before. Reported as its cell; the pytest plugin fails the notebook's other-cells item for it."""
    body = SEED_INTERP_CELL.replace("'", "\\'")
    book = write_notebook(tmp_path / "explicit.ipynb", SETUP,
                          f"get_ipython().run_cell_magic('leapp_trace', '', '''{body}''')")
    code, out, _ = check(str(book), capsys=capsys)
    assert code == 1 and "1 error" in out and "cell 3" in out, out


def test_two_notebooks_with_their_own_helper_modules_each_run_their_own(tmp_path, capsys):
    """Two notebooks in one check, each importing its folder's ``utils.py``: the second ran the first's module from
    ``sys.modules`` and passed where it alone fails (found by a helper: a CI false pass)."""
    for folder, body in (("a", "return x * 2.0 + 1.0"),
                         ("b", "return np.interp(x, np.array([0.0, 0.5, 1.0]), np.array([0.0, 2.0, 10.0])) + x")):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "utils.py").write_text(f"import numpy as np\n\ndef pre(x):\n    {body}\n")
        write_notebook(tmp_path / folder / "pipeline.ipynb", SETUP + "from utils import pre\n",
                       '%%leapp_trace\nx = annotate.input_tensors("node", {"x": raw_state})\ny = pre(x)\n'
                       'annotate.output_tensors("node", {"y": y})\n')
    code, out, _ = check(str(tmp_path / "a" / "pipeline.ipynb"), str(tmp_path / "b" / "pipeline.ipynb"),
                         capsys=capsys)
    assert code == 1 and "np.interp" in out and "1 error" in out, out
    assert "utils" not in sys.modules or not str(getattr(sys.modules["utils"], "__file__", "")).startswith(
        str(tmp_path))


def test_a_cell_calling_os_exit_is_a_failure_not_a_silent_exit_0(tmp_path, capsys):
    """``os._exit(0)`` in a cell ended the whole check with status 0 and no report, after a traced cell with an
    error (found by a helper). It raises while check runs: the cell fails, the report is printed."""
    book = write_notebook(tmp_path / "exits.ipynb", SETUP, "%%leapp_trace\n" + SEED_INTERP_CELL,
                          "import os\nos._exit(0)")
    code, out, _ = check(str(book), capsys=capsys)
    assert code == 1 and "os._exit(0) called" in out, out
    assert os._exit.__module__ == "posix" or os._exit.__name__ == "_exit"


@pytest.mark.parametrize("cell", [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None},
                                  {"cell_type": "code", "source": 5, "metadata": {}, "outputs": [],
                                   "execution_count": None}])
def test_a_notebook_cell_without_source_text_is_a_usage_error_in_one_line(tmp_path, capsys, cell):
    """A code cell with no ``source`` (or a number) crashed check with a traceback and exit 1 (found by a helper)."""
    path = tmp_path / "broken.ipynb"
    path.write_text(json.dumps({"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    code, _, err = check(str(path), capsys=capsys)
    assert code == 2 and "not a readable notebook" in err and "cell 1 has no source text" in err
    assert "Traceback" not in err


@pytest.mark.parametrize("raised, shown", [
    ("class Stop(BaseException):\n    pass\nraise Stop('stop here')", "Stop: stop here"),
    ("raise GeneratorExit()", "GeneratorExit"),
    ("class E(Exception):\n    def __str__(self):\n        return 1 / 0\nraise E()", "its message could not be made"),
])
@pytest.mark.parametrize("traced", [False, True])
def test_any_exception_of_a_cell_is_a_failed_cell_not_a_traceback(tmp_path, capsys, raised, shown, traced):
    """A BaseException subclass, GeneratorExit, or an exception whose message fails escaped check as a traceback of
    its own code, with no report (found by a helper)."""
    body = raised + "\n"
    cells = [SETUP, CLEAN_CELL]
    if traced:
        cells.append('%%leapp_trace\nx = annotate.input_tensors("node", {"x": raw_state})\n' + body +
                     'annotate.output_tensors("node", {"y": x * 2})\n')
    else:
        cells.append(body)
    code, out, err = check(str(write_notebook(tmp_path / "raises.ipynb", *cells)), capsys=capsys)
    assert code == 1 and shown in " ".join(out.split()) and "Traceback" not in err, (out, err)


def test_a_clean_check_read_by_head_exits_0(tmp_path):
    """``check clean.ipynb | head -c 10``: the closed pipe made rich exit with status 1, the "hazards found"
    status, under ``set -o pipefail`` (found by a helper)."""
    book = write_notebook(tmp_path / "clean.ipynb", SETUP, CLEAN_CELL)
    for extra in ([], ["--json"]):
        process = subprocess.Popen([sys.executable, "-m", "leapp_notebook", "check", str(book), *extra],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        process.stdout.close()  # before the report is written: its first write finds the pipe closed
        err = process.stderr.read().decode()
        assert process.wait(timeout=300) == 0 and "Traceback" not in err, err


def test_a_notebook_cell_and_a_script_of_its_folder_name_are_a_usage_error(tmp_path, capsys):
    """``check nb.ipynb nb-cell3.py --export DIR``: the notebook's cell 3 and the script both export into
    DIR/nb-cell3, the script's replacing the notebook's pipeline (found by a helper: exit 0). Refused before
    anything runs."""
    book = write_notebook(tmp_path / "nb.ipynb", SETUP, CLEAN_CELL)  # the traced cell is cell 3
    script = tmp_path / "nb-cell3.py"
    script.write_text("import numpy as np\nraw = np.ones(3)\nx = annotate.input_tensors('other', {'x': raw})\n"
                      "annotate.output_tensors('other', {'y': x * 5})\n")
    code, _, err = check(str(book), str(script), "--export", str(tmp_path / "deploy"), capsys=capsys)
    assert code == 2 and "DIR/nb-cell3" in err and not (tmp_path / "deploy").exists(), err
