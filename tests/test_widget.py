"""TraceWidget driven headless: its buttons call the Trace, and the widgets show what came back."""

import html
import importlib.util
import shutil
from pathlib import Path

import numpy as np
import pytest
from conftest import SEED_INTERP_CELL

import leapp_notebook as ln
from leapp_notebook import render
from leapp_notebook.render.html import hazard_table_html, summary_html
from leapp_notebook.render.look import PROBE_FAILED, SELECTED

HAS_DOT = shutil.which("dot") is not None
HAS_EXPORT = importlib.util.find_spec("leapp_notebook.export") is not None
needs_export = pytest.mark.skipif(not HAS_EXPORT, reason="leapp_notebook.export is not written yet")
PAYLOAD = "<img src=x onerror=alert(1)>"


@pytest.fixture
def widget(seed_namespace):
    def make(profile="leapp"):
        return ln.TraceWidget(ln.trace_cell(SEED_INTERP_CELL, dict(seed_namespace), profile=profile))
    return make


def test_widget_shows_summary_graph_and_one_row_per_hazard(widget):
    w = widget("leapp")
    assert isinstance(w, ln.TraceWidget)
    assert "1 node · 3 ops · ✖ 1 error · ⚠ 0 warnings · probe: not run" in w.summary.value
    assert "✖ not exportable as is: 1 error hazard" in w.summary.value
    assert ("<svg" in w.graph.value) == HAS_DOT and "BAKED baked0" in w.graph.value
    assert w.hazard_select.options == (("none", -1), ("1 · untraced-call · line 3", 0))
    table = w.hazard_table.value
    assert table.count("<tr class=\"leapp-hazard leapp-hazard-line\"") == 1
    assert "untraced-call" in table and ">3<" in table and "np.interp(state, CALIB_IN, CALIB_OUT)" in table
    assert "baked into the graph" in table and "split the node" in table


def test_widget_draws_with_the_html_renderers_pieces(widget):
    """One presentation source: the widget's summary and hazard table are the HTML renderer's."""
    w = widget("leapp")
    model = render.graph_model(w.trace)
    assert w.summary.value == summary_html(model)
    assert hazard_table_html(model["hazards"]) in w.hazard_table.value


def test_selecting_a_hazard_marks_its_graph_nodes_and_row_and_again_clears_it(widget):
    w = widget("leapp")
    assert SELECTED not in w.graph.value and "data-leapp-selected" not in w.hazard_table.value
    w.hazard_select.value = 0
    assert w.selected_hazard == 0 and "data-leapp-selected" in w.hazard_table.value
    if HAS_DOT:
        assert SELECTED in w.graph.value
    w.select_hazard(0)
    assert w.selected_hazard == -1 and w.hazard_select.value == -1 and SELECTED not in w.graph.value
    assert "data-leapp-selected" not in w.hazard_table.value


def test_probe_button_runs_the_probe_with_progress_and_shows_the_failing_output(widget):
    w = widget("leapp")
    w.probe_count.value = 5
    w.probe_seed.value = "7"
    w.probe_button.click()
    report = w.trace.last_probe
    assert report is not None and report.n == 5 and report.seed == 7 and not report.passed
    assert (w.probe_progress.value, w.probe_progress.max, w.probe_progress.bar_style) == (5, 5, "danger")
    assert "probe FAILED" in w.probe_result.value and "baked0" in w.probe_result.value
    assert "wrong in 5/5 probes" in w.probe_result.value
    assert "probe: ✖ FAILED" in w.summary.value and not w.probe_button.disabled
    if HAS_DOT:
        assert PROBE_FAILED in w.graph.value and "PROBE FAILED" in w.graph.value


def test_probe_passes_on_the_full_profile(widget):
    w = widget("full")
    w.probe_count.value = 4
    w.probe_button.click()
    assert w.trace.last_probe.passed and w.probe_progress.bar_style == "success"
    assert "✔ probe passed" in w.probe_result.value and "probe: ✔ passed" in w.summary.value


def test_a_bad_seed_is_reported_without_probing(widget):
    w = widget("leapp")
    w.probe_seed.value = "seven"
    w.probe_button.click()
    assert w.trace.last_probe is None and "non-negative integer" in w.probe_result.value


def test_export_button_passes_directory_formats_and_force_to_the_trace(widget, tmp_path, monkeypatch):
    w = widget("full")
    calls = []

    def export(directory, *, formats, force, progress):
        calls.append((directory, formats, force))
        assert "exporting" in w.export_result.value and w.export_button.disabled  # said while it runs
        for done in range(1, 5):
            progress(done, 4)
            calls.append((w.export_progress.value, w.export_progress.max, w.export_progress.description))
        return [Path(directory) / "node.pt", Path(directory) / "node.yaml"]

    monkeypatch.setattr(w.trace, "export", export)
    w.export_directory.value = str(tmp_path)
    w.export_onnx.value = True
    w.export_force.value = True
    w.export_button.click()
    assert calls == [(str(tmp_path), ["jit", "onnx"], True)] + [(n, 4, f"{n}/4") for n in range(1, 5)]
    assert "exported 2 files" in w.export_result.value and "node.yaml" in w.export_result.value
    assert w.export_progress.bar_style == "success" and not w.export_button.disabled


def test_export_refusal_is_shown_with_its_reason(widget, monkeypatch):
    w = widget("leapp")

    def refuse(directory, *, formats, force, progress):
        raise ln.ExportBlocked(f"node 'node': untraced-call at line 3 {PAYLOAD}")

    monkeypatch.setattr(w.trace, "export", refuse)
    w.export_button.click()
    assert "export refused" in w.export_result.value and "untraced-call at line 3" in w.export_result.value
    assert PAYLOAD not in w.export_result.value and html.escape(PAYLOAD) in w.export_result.value
    assert not w.export_button.disabled and w.export_progress.bar_style == "danger"


def test_export_without_a_format_says_so(widget, monkeypatch):
    w = widget("full")
    monkeypatch.setattr(w.trace, "export", lambda *a, **k: pytest.fail("export must not run"))
    w.export_jit.value = False
    w.export_button.click()
    assert "at least one format" in w.export_result.value


@needs_export
def test_real_export_is_refused_while_the_baked_constant_stands(widget, tmp_path):
    w = widget("leapp")
    w.export_directory.value = str(tmp_path / "out")
    w.export_button.click()
    assert "export refused" in w.export_result.value
    out = tmp_path / "out"
    assert not out.exists() or not list(out.glob("*.pt"))


@needs_export
def test_real_export_after_a_passing_probe_lists_the_files(widget, tmp_path):
    w = widget("full")
    w.probe_button.click()
    w.export_directory.value = str(tmp_path)
    w.export_button.click()
    assert "exported" in w.export_result.value, w.export_result.value
    written = sorted(p.name for p in tmp_path.iterdir())
    assert "node.pt" in written
    assert all(name in w.export_result.value for name in written if name.endswith((".pt", ".yaml")))


def test_widget_escapes_user_strings_everywhere():
    source = (f'x = annotate.input_tensors("{PAYLOAD}", {{"x": raw}})\n'
              f'y = np.interp(x, CIN, COUT)  # {PAYLOAD}\n'
              f'annotate.output_tensors("{PAYLOAD}", {{"y": y + x}})\n')
    t = ln.trace_cell(source, {"np": np, "raw": np.array([0.2, 0.6], np.float32), "CIN": np.array([0.0, 1.0]),
                               "COUT": np.array([0.0, 5.0])})
    w = ln.TraceWidget(t)
    w.hazard_select.value = 0
    w.probe_count.value = 3
    w.probe_button.click()
    values = [w.summary.value, w.graph.value, w.probe_result.value, w.hazard_table.value]
    assert all("<img" not in value for value in values)
    assert any(html.escape(PAYLOAD) in value for value in values)


def test_a_clean_trace_says_it_has_no_hazards():
    t = ln.trace_cell("y = x * 2.0 + 1.0", {"np": np, "x": np.ones(3, np.float32)},
                      inputs=["x"], outputs=["y"])
    w = ln.TraceWidget(t)
    assert w.hazard_select.options == (("none", -1),) and "no hazards" in w.hazard_table.value
    assert "✖ 0 errors · ⚠ 0 warnings" in w.summary.value and "✔ no hazards; probe to confirm" in w.summary.value


def test_widget_starts_from_the_given_probe_count_and_seed(seed_namespace):
    t = ln.trace_cell(SEED_INTERP_CELL, dict(seed_namespace))
    w = ln.TraceWidget(t, probe=8, seed=0)
    assert (w.probe_count.value, w.probe_seed.value) == (8, "0")
    w.probe_button.click()
    assert (t.last_probe.n, t.last_probe.seed) == (8, 0) and w.results == 1


def test_export_result_is_kept_in_the_model_the_output_is_redrawn_from(widget, monkeypatch):
    w = widget("full")
    monkeypatch.setattr(w.trace, "export", lambda directory, **_: [Path(directory) / "node.pt"])
    w.export_directory.value = "out"
    w.export_button.click()
    assert w.results == 1 and w.model["export"] == {"state": "written", "files": [str(Path("out/node.pt"))],
                                                   "message": "exported 1 file"}
    w.probe_count.value = 2
    w.probe_button.click()
    assert w.model["export"]["state"] == "written", "a later probe keeps the export result"
    assert "exported 1 file" in render.to_html(w.model)


def test_fallback_controls_are_disabled_and_escape_the_directory(seed_namespace):
    from leapp_notebook.widget import CONTROLS_MIME_TYPE

    w = ln.TraceWidget(ln.trace_cell(SEED_INTERP_CELL, dict(seed_namespace)), directory=PAYLOAD)
    bundle = w._repr_mimebundle_()
    assert "<img" not in bundle["text/html"] and html.escape(PAYLOAD) in bundle["text/html"]
    assert "<fieldset disabled" in bundle["text/html"] and "re-run the cell" in bundle["text/plain"]
    assert bundle[CONTROLS_MIME_TYPE]["export"] == {"directory": PAYLOAD}
    assert bundle["application/vnd.jupyter.widget-view+json"]["model_id"] == w.model_id


def test_progress_true_in_a_kernel_draws_a_bar_only_for_slow_work_and_replaces_it_when_done(monkeypatch):
    """``progress=True`` where a kernel runs: no bar for the first ``AFTER`` seconds (a quick probe leaves nothing),
    then one redraw per ``EVERY`` seconds and the last step, and nothing left in the output when it stops."""
    import IPython
    import IPython.display

    from leapp_notebook import widget as widget_module
    from leapp_notebook.probe import _progress_callback

    clock = [100.0]
    shown = []

    class Handle:
        def update(self, data, raw=False):
            shown.append(("update", data, raw))

    def display(obj, display_id=False):
        shown.append(("display", obj, display_id))
        return Handle()

    monkeypatch.setattr(widget_module.time, "monotonic", lambda: clock[0])
    monkeypatch.setattr(IPython.display, "display", display)
    monkeypatch.setattr(IPython, "get_ipython", lambda: type("Kernel", (), {"kernel": object()})())

    callback, bar = _progress_callback(True, "probing")
    assert isinstance(bar, widget_module.ProgressBar)
    callback(1, 10)
    clock[0] += 0.4
    callback(2, 10)
    assert shown == []  # under half a second: nothing drawn
    clock[0] += 0.2
    callback(3, 10)
    ((what, drawn, display_id),) = shown
    assert what == "display" and display_id is True and (drawn.value, drawn.max, drawn.description) == (
        3, 10, "probing 3/10")
    clock[0] += 0.05
    callback(4, 10)
    assert drawn.value == 3  # redrawn at most every 0.1 s ...
    callback(10, 10)
    assert drawn.value == 10  # ... and at the last step
    bar.stop()
    assert shown[-1] == ("update", {"text/plain": ""}, True)
    quick_callback, quick = _progress_callback(True, "exporting")
    quick_callback(3, 3)
    quick.stop()
    assert len(shown) == 2  # done before half a second: never drawn, nothing to replace


def test_probe_and_export_do_not_repeat_the_cells_prints(tmp_path, capsys):
    """The probe and the export's check run the cell again and again: its prints showed once, when it was traced;
    a progress callback of the user's still prints."""
    cell = 'x = annotate.input_tensors("node", {"x": raw})\nprint("from the cell")\n' \
           'annotate.output_tensors("node", {"y": x * 2.0 + 1.0})\n'
    trace = ln.trace_cell(cell, {"np": np, "raw": np.ones(4, np.float32)})
    assert capsys.readouterr().out == "from the cell\n"
    trace.probe(n=6, seed=0, progress=lambda done, total: print(f"probe {done}/{total}"))
    assert capsys.readouterr().out == "".join(f"probe {n}/6\n" for n in range(1, 7))
    trace.export(tmp_path)
    assert capsys.readouterr().out == ""
    baked = ln.trace_cell(cell.replace("x * 2.0", "x * float(x[0])"), {"np": np, "raw": np.ones(4, np.float32)})
    capsys.readouterr()
    assert not baked.probe(n=6, seed=0).passed  # a failing probe re-traces the cell to name what is baked
    assert "from the cell" not in capsys.readouterr().out
