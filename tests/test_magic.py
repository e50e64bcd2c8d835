"""%%leapp_trace through a real IPython InteractiveShell: arguments, outputs, errors, probe, export."""

from __future__ import annotations

import os

import numpy as np
import pytest
from conftest import SEED_INTERP_CELL
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output

import leapp_notebook as ln
from leapp_notebook import magic
from leapp_notebook.tracing import session
from leapp_notebook.tracing.array import TracedArray

MIME_TYPE = "application/vnd.leapp.trace+json"
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
SEED_MAGIC_CELL = "%%leapp_trace\n" + SEED_INTERP_CELL


@pytest.fixture
def shell():
    """The IPython shell with the extension loaded and the seed's arrays defined."""
    ipython = InteractiveShell.instance()
    ipython.reset()
    ipython.run_cell("%load_ext leapp_notebook")
    ipython.run_cell("import numpy as np\n"
                     "raw_state = np.array([0.1, 0.4, 0.7, 0.9], np.float32)\n"
                     "CALIB_IN = np.array([0.0, 0.5, 1.0])\n"
                     "CALIB_OUT = np.array([0.0, 2.0, 10.0])\n")
    return ipython


def run(shell, cell):
    with capture_output() as captured:
        result = shell.run_cell(cell)
    return result, captured


def keep_controls(monkeypatch) -> list:
    """Have the magic show its widget controls (as under a kernel); returns the list they are kept in."""
    monkeypatch.setattr(magic, "_widget_front_end", lambda _shell: True)
    made: list = []
    controls = magic._controls

    def keep(trace, handle, options, model=None):
        made.append(controls(trace, handle, options, model))
        return made[-1]

    monkeypatch.setattr(magic, "_controls", keep)
    return made


def test_seed_cell_shows_the_trace_bundle_and_leaves_plain_arrays(shell):
    result, captured = run(shell, SEED_MAGIC_CELL)

    assert result.success, captured.stdout + captured.stderr
    bundles = [out.data for out in captured.outputs if MIME_TYPE in out.data]
    assert len(bundles) == 1
    model = bundles[0][MIME_TYPE]
    assert {"text/plain", "text/html"} <= set(bundles[0])
    assert [(h["kind"], h["line"]) for h in model["hazards"]] == [("untraced-call", 4)]
    for name in ("state", "calibrated", "result"):
        assert type(shell.user_ns[name]) is np.ndarray, name
    raw = shell.user_ns["raw_state"]
    np.testing.assert_allclose(shell.user_ns["result"],
                               raw * 0.1 + np.interp(raw, [0.0, 0.5, 1.0], [0.0, 2.0, 10.0]), rtol=1e-6)
    trace = shell.user_ns["_leapp_trace"]
    assert isinstance(trace, ln.Trace) and list(trace.nodes) == ["node"]


def test_hazard_lines_are_editor_lines_counting_the_magic_line(shell):
    shell.run_cell(SEED_MAGIC_CELL)

    hazard = shell.user_ns["_leapp_trace"].hazards[0]
    assert hazard.line == 4
    assert hazard.code.strip() == SEED_MAGIC_CELL.splitlines()[3]


def test_no_widget_without_a_kernel(shell):
    _, captured = run(shell, SEED_MAGIC_CELL)

    assert not [out for out in captured.outputs if WIDGET_MIME in out.data]


def test_widget_controls_are_shown_beside_the_bundle_where_a_front_end_runs(shell, monkeypatch):
    made = keep_controls(monkeypatch)

    _, captured = run(shell, SEED_MAGIC_CELL)

    kinds = [next((m for m in (MIME_TYPE, WIDGET_MIME) if m in out.data), None) for out in captured.outputs]
    assert kinds == [MIME_TYPE, WIDGET_MIME]
    widget = made[0]
    assert widget.probe_button in widget.children[1].children and widget.export_button is not None
    assert widget.graph not in widget.children and widget.hazard_table not in widget.children, \
        "the graph is drawn once, by the bundle above"


def test_probe_button_redraws_the_bundle_with_the_probe_result(shell, monkeypatch):
    made = keep_controls(monkeypatch)
    run(shell, SEED_MAGIC_CELL)

    with capture_output() as captured:
        made[0].probe_count.value = 6
        made[0].probe_seed.value = "0"
        made[0].probe_button.click()

    updates = [out for out in captured.outputs if out.update and MIME_TYPE in out.data]
    assert len(updates) == 1
    probe = updates[0].data[MIME_TYPE]["probe"]
    assert probe["passed"] is False and probe["baked"] == ["result"] and probe["n"] == 6


def test_name_and_explicit_inputs_outputs_make_one_named_node(shell):
    result, _ = run(shell, "%%leapp_trace calibrate --inputs raw_state --outputs y,z\n"
                           "y = raw_state * 2.0\nz = y + 1.0\n")

    assert result.success
    trace = shell.user_ns["_leapp_trace"]
    assert list(trace.nodes) == ["calibrate"]
    assert [spec.name for spec in trace.nodes["calibrate"].outputs] == ["y", "z"]
    assert trace.hazards == [] and type(shell.user_ns["z"]) is np.ndarray


def test_profile_full_records_interp_as_a_portability_warning(shell):
    shell.run_cell("%%leapp_trace --profile full\n" + SEED_INTERP_CELL)

    trace = shell.user_ns["_leapp_trace"]
    assert trace.profile == "full"
    assert [(h.kind, h.severity, h.line) for h in trace.hazards] == [("untraced-call", "warning", 4)]


def test_help_prints_usage_and_traces_nothing(shell):
    shell.user_ns.pop("_leapp_trace", None)

    result, captured = run(shell, "%%leapp_trace --help\ny = 1\n")

    assert result.success
    assert "--inputs" in captured.stdout and "--profile" in captured.stdout and "--export" in captured.stdout
    assert "_leapp_trace" not in shell.user_ns and "y" not in shell.user_ns


@pytest.mark.parametrize("line, message", [
    ("--bogus", "unknown flag --bogus; the flags are --inputs, --outputs, --probe,"),
    ("--profile fast", "invalid choice: 'fast'"),
    ("--probe many", "invalid int value: 'many'"),
    ("--probe 0", "--probe 0"),
    ("--export out --format jit,tflite", "--format jit,tflite: give one or more of jit, jit-script, jit-trace"),
    ("--inputs raw_state", "give both --inputs and --outputs, or neither"),
    ("calibrate", "'calibrate' would name a node made by --inputs/--outputs"),
])
def test_bad_flags_give_one_usage_line(shell, line, message):
    result, captured = run(shell, f"%%leapp_trace {line}\ny = raw_state * 2\n")

    assert isinstance(result.error_in_exec, UsageError)
    assert message in captured.stderr
    assert "Traceback" not in captured.stdout + captured.stderr
    assert "y" not in shell.user_ns


@pytest.mark.parametrize("line, meant", [
    ("--probes 4", "--probe"),   # the widget labels its field "probes"
    ("--prob 4", "--probe"),     # an abbreviation is not taken for the flag
    ("--forc", "--force"),
    ("--seeds=3", "--seed"),
    ("--proflie full", "--profile"),
])
def test_unknown_or_abbreviated_flags_are_refused_with_the_closest_real_flag(shell, line, meant):
    result, captured = run(shell, f"%%leapp_trace {line}\n" + SEED_INTERP_CELL)

    assert isinstance(result.error_in_exec, UsageError)
    flag = line.split()[0].partition("=")[0]
    assert f"unknown flag {flag}; did you mean {meant}?" in captured.stderr
    assert "_leapp_trace" not in shell.user_ns or shell.user_ns["_leapp_trace"] is None


def test_abbreviations_are_refused_by_the_parser_itself():
    assert magic.LeappMagics.leapp_trace.parser.allow_abbrev is False
    with pytest.raises(UsageError, match="unrecognized arguments: --forc"):
        magic.LeappMagics.leapp_trace.parser.parse_args(["--forc"])


def test_the_widget_starts_with_the_magics_probe_count_and_seed(shell, monkeypatch):
    made = keep_controls(monkeypatch)

    run(shell, "%%leapp_trace --probe 8 --seed 0\n" + SEED_INTERP_CELL)

    assert (made[0].probe_count.value, made[0].probe_seed.value) == (8, "0")
    assert shell.user_ns["_leapp_controls"] is made[0]
    made[0].probe_button.click()
    assert shell.user_ns["_leapp_trace"].last_probe.n == 8 and shell.user_ns["_leapp_trace"].last_probe.seed == 0


def test_without_flags_the_widget_starts_with_16_probes_and_a_random_seed(shell, monkeypatch):
    made = keep_controls(monkeypatch)

    run(shell, SEED_MAGIC_CELL)

    assert (made[0].probe_count.value, made[0].probe_seed.value) == (16, "")


def test_export_button_writes_its_result_into_the_trace_output(shell, monkeypatch, tmp_path):
    made = keep_controls(monkeypatch)
    run(shell, SEED_MAGIC_CELL)
    made[0].export_directory.value = str(tmp_path / "out")

    with capture_output() as captured:
        made[0].export_button.click()

    updates = [out.data[MIME_TYPE] for out in captured.outputs if out.update and MIME_TYPE in out.data]
    assert len(updates) == 1 and updates[0]["export"]["state"] == "refused"
    assert updates[0]["export"]["message"].startswith("export refused")
    assert "export refused" in next(out.data["text/html"] for out in captured.outputs if out.update)


def test_the_widget_bundle_says_to_re_run_the_cell_where_no_widget_can_be_drawn(shell, monkeypatch):
    from leapp_notebook.widget import CONTROLS_MIME_TYPE

    keep_controls(monkeypatch)
    _, captured = run(shell, "%%leapp_trace --probe 5 --seed 3\n" + SEED_INTERP_CELL)

    bundle = next(out.data for out in captured.outputs if WIDGET_MIME in out.data)
    assert "re-run the cell to probe or export" in bundle["text/plain"]
    assert "re-run the cell to probe or export" in bundle["text/html"] and "<fieldset disabled" in bundle["text/html"]
    assert 'value="5"' in bundle["text/html"] and 'value="3"' in bundle["text/html"]
    controls = bundle[CONTROLS_MIME_TYPE]
    assert controls["model_id"] == bundle[WIDGET_MIME]["model_id"]
    assert controls["probe"] == {"n": 5, "seed": 3} and controls["message"] == "re-run the cell to probe or export"


def test_missing_input_is_one_message_with_a_close_match(shell):
    result, captured = run(shell, "%%leapp_trace --inputs raw_stat --outputs y\ny = raw_stat * 2\n")

    assert isinstance(result.error_in_exec, ln.TraceError)
    shown = captured.stdout + captured.stderr
    assert "input 'raw_stat' is not defined" in shown and "Did you mean 'raw_state'?" in shown
    assert "Traceback" not in shown and len(shown.strip().splitlines()) == 1


def test_non_array_input_is_one_message(shell):
    shell.run_cell("label = 'calibration'")

    result, captured = run(shell, "%%leapp_trace --inputs label --outputs y\ny = label\n")

    assert isinstance(result.error_in_exec, ln.TraceError)
    shown = captured.stdout + captured.stderr
    assert "is a str, not a NumPy array" in shown and "Traceback" not in shown


def test_exception_in_cell_shows_its_line_and_restores_numpy(shell):
    originals = {name: getattr(np, name) for name in ("zeros", "ones", "array", "asarray")}

    result, captured = run(shell, "%%leapp_trace --inputs raw_state --outputs y\n"
                                  "doubled = raw_state * 2.0\n"
                                  "y = doubled / undefined_scale\n")

    error = result.error_in_exec
    assert isinstance(error, ln.CellError) and error.line == 3
    assert isinstance(error.__cause__, NameError)
    shown = captured.stdout + captured.stderr
    assert "line 3: NameError: name 'undefined_scale' is not defined" in shown
    assert "y = doubled / undefined_scale" in shown and "Traceback" not in shown
    assert session.ACTIVE is None
    assert {name: getattr(np, name) for name in originals} == originals
    assert type(shell.user_ns["doubled"]) is np.ndarray
    assert not isinstance(shell.user_ns["raw_state"], TracedArray)
    assert isinstance(np.zeros(2), np.ndarray) and not isinstance(np.zeros(2), TracedArray)
    again, _ = run(shell, "%%leapp_trace --inputs raw_state --outputs y\ny = raw_state * 2.0\n")
    assert again.success and shell.user_ns["_leapp_trace"].ok


def test_probe_flag_shows_the_baked_output(shell):
    result, captured = run(shell, "%%leapp_trace --probe 8 --seed 0\n" + SEED_INTERP_CELL)

    assert result.success
    report = shell.user_ns["_leapp_trace"].last_probe
    assert report.passed is False and list(report.baked) == ["result"]
    model = next(out.data[MIME_TYPE] for out in captured.outputs if MIME_TYPE in out.data)
    assert model["probe"]["passed"] is False and model["probe"]["baked"] == ["result"]


def test_export_is_refused_with_its_reason_and_writes_nothing(shell, tmp_path):
    target = tmp_path / "out"

    result, captured = run(shell, f"%%leapp_trace --export {target}\n" + SEED_INTERP_CELL)

    assert isinstance(result.error_in_exec, ln.ExportBlocked)
    shown = captured.stdout + captured.stderr
    assert "ExportBlocked" in shown and "Traceback" not in shown
    model = next(out.data[MIME_TYPE] for out in captured.outputs if MIME_TYPE in out.data)  # still shown
    assert model["export"]["state"] == "refused" and model["export"]["files"] == []
    assert not target.exists() or not any(target.iterdir())
    assert shell.user_ns["_leapp_trace"].hazards[0].kind == "untraced-call"


def test_export_writes_the_clean_node_and_lists_the_files(shell, tmp_path):
    target = tmp_path / "out"

    result, captured = run(shell, f"%%leapp_trace scale --inputs raw_state --outputs y --probe 4 --seed 1 "
                                  f"--export {target}\ny = raw_state * 2.0 + 1.0\n")

    assert result.success, captured.stdout + captured.stderr
    assert (target / "scale.pt").is_file()
    assert str(target / "scale.pt") in captured.stdout
    model = next(out.data[MIME_TYPE] for out in captured.outputs if MIME_TYPE in out.data)
    assert model["export"]["state"] == "written" and str(target / "scale.pt") in model["export"]["files"]


def test_options_parse_lists_and_defaults():
    options = magic.parse_options("calib --inputs a,b --outputs y --format jit,onnx --force")

    assert options.node == "calib" and options.inputs == ("a", "b") and options.outputs == ("y",)
    assert options.formats == ("jit", "onnx") and options.force and options.profile == "leapp"
    assert magic.parse_options("").node == "node" and magic.parse_options("").formats == ("jit",)


def test_a_probe_click_keeps_the_magics_export_result_in_the_redrawn_output(shell, monkeypatch, tmp_path):
    made = keep_controls(monkeypatch)
    run(shell, f"%%leapp_trace --export {tmp_path / 'out'}\n" + SEED_INTERP_CELL)

    with capture_output() as captured:
        made[0].probe_count.value = 3
        made[0].probe_button.click()

    model = next(out.data[MIME_TYPE] for out in captured.outputs if out.update and MIME_TYPE in out.data)
    assert model["probe"]["n"] == 3 and model["export"]["state"] == "refused"


def test_the_controls_beside_the_bundle_draw_nothing_it_already_shows(shell, monkeypatch):
    """Under a kernel the magic shows the trace's bundle, then Probe and Export controls. The controls take the
    magic's graph model instead of building a second one, and make none of the widget's view (each widget is a
    comm, the graph a run of dot): a warm cell spent more on those than on its trace."""
    from leapp_notebook import widget as widget_module
    from leapp_notebook.render import model as model_module

    made = keep_controls(monkeypatch)
    built, drawn = [], []
    build, draw = model_module._graph_model, widget_module.to_svg
    monkeypatch.setattr(model_module, "_graph_model", lambda trace, *a: built.append(trace) or build(trace, *a))
    monkeypatch.setattr(widget_module, "to_svg", lambda *a, **k: drawn.append(a) or draw(*a, **k))

    _, captured = run(shell, SEED_MAGIC_CELL)

    controls = made[0]
    assert len(built) == 1 and drawn == []
    assert (controls.summary, controls.graph, controls.hazard_select, controls.hazard_table) == (None,) * 4
    bundle = next(out.data[MIME_TYPE] for out in captured.outputs if MIME_TYPE in out.data)
    assert controls.model == bundle and controls.model is not bundle
    controls.select_hazard(0)  # no view to mark: nothing drawn
    assert drawn == []


def test_load_ext_prepares_what_the_first_traced_cell_loads_in_the_background():
    """``%load_ext`` starts a thread that imports the renderers and LibCST (ipywidgets too under a kernel) and
    runs dot once; the first %%leapp_trace then finds them loaded. In a fresh interpreter, with and without a
    widget front end, and with no ``dot`` on the path (the warm-up says nothing; the cell still draws)."""
    import os
    import subprocess
    import sys

    script = (
        "import sys, threading\n"
        "from IPython.core.interactiveshell import InteractiveShell\n"
        "from leapp_notebook import magic\n"
        "magic._widget_front_end = lambda shell: sys.argv[1] == 'kernel'\n"
        "shell = InteractiveShell.instance()\n"
        "shell.run_cell('%load_ext leapp_notebook')\n"
        "prepare = [t for t in threading.enumerate() if t.name == 'leapp_notebook-prepare']\n"
        "print(len(prepare), prepare[0].daemon)\n"
        "prepare[0].join(120)\n"
        "print(*[name in sys.modules for name in ('leapp_notebook.render', 'leapp_notebook.fixes', 'libcst',\n"
        "                                        'leapp_notebook.widget', 'ipywidgets')])\n"
        "shell.run_cell('import numpy as np\\nx = np.ones(3)')\n"
        "from IPython.utils.capture import capture_output\n"
        "with capture_output():  # the bundle's text, printed by a terminal shell\n"
        "    result = shell.run_cell('%%leapp_trace --inputs x --outputs y\\ny = x[::-1] * 2.0\\n')\n"
        "print(result.success and len(shell.user_ns['_leapp_trace'].hazards) == 1)\n"
    )

    def run_script(front_end: str, path: str | None = None) -> list[str]:
        env = dict(os.environ, **({"PATH": path} if path is not None else {}))
        out = subprocess.run([sys.executable, "-c", script, front_end], capture_output=True, text=True,
                             timeout=300, env=env)
        assert out.returncode == 0 and out.stderr == "", out.stderr
        return out.stdout.splitlines()

    assert run_script("terminal") == ["1 True", "True True True False False", "True"]
    assert run_script("kernel") == ["1 True", "True True True True True", "True"]
    no_dot = os.pathsep.join(p for p in os.environ["PATH"].split(os.pathsep)
                             if not os.path.exists(os.path.join(p, "dot")))
    assert run_script("terminal", no_dot) == ["1 True", "True True True False False", "True"]


def test_the_trace_is_shown_even_when_its_controls_cannot_be_made(shell, monkeypatch):
    """The magic starts the bundle's layout, makes the widget controls, then shows the bundle: a failure making
    the controls still shows the trace (and then reports the failure)."""
    monkeypatch.setattr(magic, "_widget_front_end", lambda _shell: True)

    def broken(*args):
        raise RuntimeError("no comm")

    monkeypatch.setattr(magic, "_controls", broken)
    result, captured = run(shell, SEED_MAGIC_CELL)

    assert not result.success and isinstance(result.error_in_exec, RuntimeError)
    bundles = [out.data for out in captured.outputs if MIME_TYPE in out.data]
    assert len(bundles) == 1 and bundles[0][MIME_TYPE]["hazards"][0]["kind"] == "untraced-call"


def test_an_export_folder_is_read_as_a_shell_reads_it():
    """Quotes group a folder with spaces (they were kept as part of the name); ~ is the home folder (a folder
    named ~ beside the notebook is a trap for a later rm -rf ~)."""
    assert magic.parse_options('--export "my exports/v1" --probe 4').export == "my exports/v1"
    assert magic.parse_options("--export 'it''s'").export == "its"
    assert magic.parse_options("--export ~/deploy").export == os.path.expanduser("~/deploy")
    with pytest.raises(UsageError, match="No closing quotation"):
        magic.parse_options('--export "my exports')
    with pytest.raises(UsageError, match="needs quotes"):
        magic.parse_options("--export my exports")


def test_on_windows_a_backslash_in_an_export_folder_is_a_separator(monkeypatch):
    monkeypatch.setattr(magic.os, "name", "nt")
    assert magic._words('--export "C:\\my exports\\v1" --probe 4') == ["--export", "C:\\my exports\\v1", "--probe", "4"]
    assert magic._words("--export C:\\data") == ["--export", "C:\\data"]


def test_a_hazard_in_a_function_of_an_earlier_cell_names_that_cell(shell):
    """A helper defined in an earlier cell runs from a file IPython made (/tmp/ipykernel_1234/2041.py): the hazard's
    location named that file; it names the cell, In[N]."""
    run(shell, "def rev(w):\n    return w[::-1]\n")
    number = shell.compile._filename_map[shell.user_ns["rev"].__code__.co_filename]
    run(shell, '%%leapp_trace\nx = annotate.input_tensors("node", {"x": raw_state})\ny = rev(x) * 2\n'
               'annotate.output_tensors("node", {"y": y})\n')
    (hazard,) = shell.user_ns["_leapp_trace"].hazards
    assert hazard.kind == "reversed-slice" and hazard.line == 3
    assert hazard.location == f"In[{number}]:2 in rev", hazard.location
