"""The shipped notebooks, executed with nbclient on a real kernel; their saved outputs are asserted."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import nbformat
import pytest

nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
MIME_TYPE = "application/vnd.leapp.trace+json"
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
ALL_KINDS = {"untraced-call", "broken-chain", "reversed-slice", "numpy-scalar", "value-extraction",
             "data-dependent-branch", "data-dependent-shape", "untraced-output", "training-mode", "nondeterministic"}


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    """A copy of notebooks/ in a fresh folder, so ``../exports`` lands in the temporary tree."""
    root = tmp_path_factory.mktemp("run")
    shutil.copytree(NOTEBOOKS, root / "notebooks", ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    return root


def execute(workdir: Path, name: str) -> nbformat.NotebookNode:
    """Run the notebook top to bottom, save it, and read the saved file back (outputs must survive)."""
    path = workdir / "notebooks" / name
    book = nbformat.read(path, as_version=4)
    nbclient.NotebookClient(book, timeout=600, kernel_name="python3",
                            resources={"metadata": {"path": str(path.parent)}}).execute()
    nbformat.write(book, path)
    saved = nbformat.read(path, as_version=4)
    nbformat.validate(saved)
    return saved


@pytest.fixture(scope="module")
def quickstart(workdir) -> nbformat.NotebookNode:
    return execute(workdir, "quickstart.ipynb")


@pytest.fixture(scope="module")
def tour(workdir) -> nbformat.NotebookNode:
    return execute(workdir, "hazards-tour.ipynb")


def traced_cells(book: nbformat.NotebookNode) -> list[tuple[Any, dict[str, Any]]]:
    """Each ``%%leapp_trace`` cell with the graph model of its (single) saved trace output."""
    found = []
    for cell in book.cells:
        if cell.cell_type == "code" and cell.source.startswith("%%leapp_trace"):
            models = [out["data"][MIME_TYPE] for out in cell.outputs if MIME_TYPE in out.get("data", {})]
            assert len(models) == 1, cell.source
            found.append((cell, models[0]))
    return found


def hazards(model: dict[str, Any]) -> list[tuple[str, int, str]]:
    return [(h["kind"], h["line"], h["severity"]) for h in model["hazards"]]


def stdout(cell: Any) -> str:
    return "".join(out.get("text", "") for out in cell.outputs if out.get("output_type") == "stream")


def cell_with(book: nbformat.NotebookNode, text: str) -> Any:
    return next(cell for cell in book.cells if cell.cell_type == "code" and text in cell.source)


def test_quickstart_shows_the_baked_interp_and_its_hazard_at_line_4(quickstart):
    cell, model = traced_cells(quickstart)[0]

    assert hazards(model) == [("untraced-call", 4, "error")]
    assert model["hazards"][0]["code"].strip() == "calibrated = np.interp(state, CALIB_IN, CALIB_OUT)"
    baked = [v for node in model["nodes"] for v in node["vertices"] if v["category"] == "baked"]
    assert [(v["line"], v["hazards"]) for v in baked] == [(4, [0])]
    bundle = next(out["data"] for out in cell.outputs if MIME_TYPE in out.get("data", {}))
    assert "untraced-call" in bundle["text/plain"] and "<svg" in bundle.get("image/svg+xml", "<svg")


def test_quickstart_probe_fails_with_result_baked_and_export_refuses(quickstart):
    assert "passed: False | baked: ['result']" in stdout(cell_with(quickstart, "baked_trace.probe("))
    assert "export refused:" in stdout(cell_with(quickstart, "baked_trace.export("))


def test_quickstart_split_node_gives_two_clean_nodes_that_pass_the_probe(quickstart):
    _, model = traced_cells(quickstart)[1]

    assert [node["name"] for node in model["nodes"]] == ["pre", "post"]
    assert hazards(model) == [] and model["probe"]["passed"] is True
    printed = stdout(cell_with(quickstart, "split_trace ="))
    assert "nodes: ['pre', 'post'] | hazards: 0 | probe passed: True" in printed


def test_quickstart_full_profile_records_interp_and_keeps_a_warning(quickstart):
    _, model = traced_cells(quickstart)[2]

    assert model["profile"] == "full"
    assert hazards(model) == [("untraced-call", 4, "warning")] and model["probe"]["passed"] is True


def test_quickstart_rewrite_passes_the_probe_and_exports_a_model_that_follows_its_input(quickstart, workdir):
    cell, model = traced_cells(quickstart)[3]

    assert hazards(model) == [] and model["probe"]["passed"] is True and model["probe"]["baked"] == []
    assert "exported:" in stdout(cell) and (workdir / "exports" / "quickstart" / "node.pt").is_file()
    assert "agree: True" in stdout(cell_with(quickstart, "torch.jit.load"))


def test_each_traced_cell_shows_one_trace_bundle_then_the_widget_controls(tour):
    """The contract of the magic's output: the bundle (saved, kernel-free) and the controls beside it;
    anything else a cell shows is printed text (probe summary), never a stray rich rendering."""
    for cell, _ in traced_cells(tour):
        shown = [next((m for m in (MIME_TYPE, WIDGET_MIME) if m in out["data"]), "+".join(out["data"]))
                 for out in cell.outputs if out["output_type"] == "display_data"]
        assert shown == [MIME_TYPE, WIDGET_MIME], (cell.source, shown)


TOUR_EXPECTED = [
    [("untraced-call", 3)],                                   # scipy.special.expit
    [],                                                       # sigmoid in traced operations
    [],                                                       # standardize helper
    [("broken-chain", 2)],                                    # grid[0, 0]
    [],                                                       # grid[0:1, 0:1]
    [("broken-chain", 3)],                                    # for value in x
    [],                                                       # np.sum(..., keepdims=True)
    [("reversed-slice", 2)],                                  # x[::-1]
    [],                                                       # index array
    [("numpy-scalar", 2)],                                    # np.float32(2.0)
    [],                                                       # 0-d array constant
    [("untraced-call", 2)],                                   # np.linalg.norm
    [],                                                       # traced norm
    [("value-extraction", 2)],                                # .item()
    [],                                                       # np.max keepdims
    [("data-dependent-branch", 2)],                           # if (x > 3).any()
    [],                                                       # np.where
    [("data-dependent-shape", 2)],                            # x[x > 1.0] as the output (found by the probe)
    [],                                                       # np.where(x > 1.0, x, 0.0)
    [("untraced-call", 3), ("untraced-output", 4)],           # np.pad as output
    [],                                                       # concatenate
    [("training-mode", 2)],                                   # policy with Dropout in training mode
    [],                                                       # policy.eval()
    [("nondeterministic", 3)],                                # torch.randn_like inside the node
    [],                                                       # the noise as an input
]


def test_tour_reports_each_example_at_its_line_and_each_fix_is_clean(tour):
    found = [[(kind, line) for kind, line, _ in hazards(model)] for _, model in traced_cells(tour)]

    assert found == TOUR_EXPECTED
    # every example is an error, but for a shape that depends on the values: the graph is right there
    assert all(severity == ("warning" if kind == "data-dependent-shape" else "error")
               for _, model in traced_cells(tour) for kind, _, severity in hazards(model))


def test_tour_has_a_section_for_every_hazard_kind(tour):
    sections = {cell.source.split(":")[0].removeprefix("## ").strip() for cell in tour.cells
                if cell.cell_type == "markdown" and cell.source.startswith("## ")}
    reported = {kind for _, model in traced_cells(tour) for kind, _, _ in hazards(model)}

    assert ALL_KINDS <= sections
    assert reported == ALL_KINDS


def test_tour_probe_exposes_the_reversed_slice_and_the_selections_varying_shape(tour):
    probes = [(cell.source.splitlines()[1], model["probe"]) for cell, model in traced_cells(tour)
              if model["probe"] is not None]

    assert [(code, probe["passed"]) for code, probe in probes] == [
        ("y = x[::-1]", False), ("y = x[np.arange(x.shape[0] - 1, -1, -1)]", True),
        ("y = x[x > 1.0] * 2.0", True), ("y = np.where(x > 1.0, x, 0.0) * 2.0", True)]
    assert probes[0][1]["outputs"]["y"]["max_abs_err"] > 0
    assert probes[2][1]["outputs"]["y"]["varying_shape"].startswith("shape: the eager cell gives (")
    assert probes[3][1]["outputs"]["y"]["varying_shape"] is None


# ------------------------------------------------------------------------------------------ saved and reopened

SEED_SETUP = ("%load_ext leapp_notebook\nimport numpy as np\n"
              "raw_state = np.array([0.1, 0.4, 0.7, 0.9], np.float32)\n"
              "CALIB_IN = np.array([0.0, 0.5, 1.0])\nCALIB_OUT = np.array([0.0, 2.0, 10.0])\n")
SEED_TRACE_CELL = ("%%leapp_trace --probe 3 --seed 2\n"
                   "state = annotate.input_tensors('node', {'state': raw_state})\n"
                   "calibrated = np.interp(state, CALIB_IN, CALIB_OUT)\n"
                   "result = state * 0.1 + calibrated\n"
                   "annotate.output_tensors('node', {'result': result})\n")
CLICKS = ("_leapp_controls.probe_count.value = 5\n_leapp_controls.probe_seed.value = '1'\n"
          "_leapp_controls.probe_button.click()\n"
          "_leapp_controls.export_directory.value = 'exports'\n_leapp_controls.export_button.click()\n")


@pytest.fixture(scope="module")
def reopened(tmp_path_factory) -> nbformat.NotebookNode:
    """A notebook whose trace was probed and exported through the widget's own methods, run, saved and
    read back from disk as a front end without a kernel would."""
    folder = tmp_path_factory.mktemp("reopen")
    book = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source) for source in
                                           (SEED_SETUP, SEED_TRACE_CELL, CLICKS)])
    nbclient.NotebookClient(book, timeout=600, kernel_name="python3",
                            resources={"metadata": {"path": str(folder)}}).execute()
    nbformat.write(book, folder / "probed.ipynb")
    return nbformat.read(folder / "probed.ipynb", as_version=4)


def test_widget_probe_and_export_results_are_saved_in_the_trace_output(reopened):
    outputs = reopened.cells[1].outputs
    traces = [out for out in outputs if MIME_TYPE in out.get("data", {})]
    assert len(traces) == 1, "the widget rewrote the trace's own output, it did not add one"
    model = traces[0]["data"][MIME_TYPE]
    assert (model["probe"]["n"], model["probe"]["seed"], model["probe"]["passed"]) == (5, 1, False)
    assert model["export"]["state"] == "refused" and model["export"]["message"].startswith("export refused")
    assert model["verdict"]["state"] == "error"
    page = traces[0]["data"]["text/html"]
    assert "✖ probe FAILED</b> on 5 fresh inputs (seed 1)" in page and 'data-leapp-export="refused"' in page
    assert "probe: ✖ FAILED" in traces[0]["data"]["text/plain"]
    assert [out.get("output_type") for out in reopened.cells[2].outputs if out.get("data")] == []


def test_saved_widget_output_falls_back_to_disabled_controls_saying_to_re_run(reopened):
    widget = next(out["data"] for out in reopened.cells[1].outputs if WIDGET_MIME in out.get("data", {}))
    assert "re-run the cell to probe or export" in widget["text/plain"]
    assert "<fieldset disabled" in widget["text/html"] and "re-run the cell to probe or export" in widget["text/html"]
    assert widget["application/vnd.leapp.controls+json"]["probe"] == {"n": 3, "seed": 2}


def test_a_slow_probe_and_export_show_a_bar_while_they_run_and_leave_none_in_the_saved_notebook(tmp_path):
    """In a kernel, ``%%leapp_trace --probe --export`` draws a progress bar for work that takes over half a second,
    then replaces it with nothing; a quick probe draws none. The cell's own print shows once, not once per probe."""
    book = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source) for source in (
        "%load_ext leapp_notebook\nimport time\nimport numpy as np\nraw = np.linspace(0, 1, 4).astype(np.float32)",
        "%%leapp_trace --probe 8\nx = annotate.input_tensors('node', {'x': raw})\nprint('quick cell')\n"
        "annotate.output_tensors('node', {'y': x * 2.0 + 1.0})",
        "%%leapp_trace --probe 8 --export out\nx = annotate.input_tensors('node', {'x': raw})\ntime.sleep(0.15)\n"
        "annotate.output_tensors('node', {'y': x * 2.0 + 1.0})",
    )])
    path = tmp_path / "progress.ipynb"
    nbformat.write(book, path)
    nbclient.NotebookClient(book, timeout=600, kernel_name="python3",
                            resources={"metadata": {"path": str(tmp_path)}}).execute()
    nbformat.write(book, path)
    saved = nbformat.read(path, as_version=4)
    quick, slow = saved.cells[1], saved.cells[2]

    def shown(cell):
        return [out for out in cell.outputs if out["output_type"] == "display_data"]

    assert stdout(quick).count("quick cell") == 1
    assert [list(out["data"]) for out in shown(quick)][0][0] == MIME_TYPE  # no bar before the trace's output
    bars = [out for out in shown(slow) if MIME_TYPE not in out["data"] and WIDGET_MIME not in out["data"]]
    assert [out["data"] for out in bars] == [{"text/plain": ""}, {"text/plain": ""}]  # the probe's, the export's
    assert all(WIDGET_MIME not in out["data"] or "application/vnd.leapp.controls+json" in out["data"]
               for out in shown(slow))  # the only widget left is the Probe and Export controls
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["graph.yaml", "node.pt"]
