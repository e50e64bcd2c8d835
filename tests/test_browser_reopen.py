"""A saved notebook reopened in JupyterLab: the probe result the user clicked for is still in the trace output,
and the Probe/Export controls, whose widget model died with the kernel, show disabled with "re-run the cell to
probe or export" instead of "Error displaying widget: model not found" (labextension/src/controls.ts)."""

from __future__ import annotations

import time

import nbformat
import pytest
from lab_server import CHROMIUM_ARGS, chromium_path, jupyter_lab

sync_api = pytest.importorskip("playwright.sync_api")
nbclient = pytest.importorskip("nbclient")
pytestmark = pytest.mark.skipif(chromium_path() is None, reason="no Chromium")

TOKEN = "leapp-reopen-test"
SETUP = ("%load_ext leapp_notebook\nimport numpy as np\n"
         "raw_state = np.array([0.1, 0.4, 0.7, 0.9], np.float32)\n"
         "CALIB_IN = np.array([0.0, 0.5, 1.0])\nCALIB_OUT = np.array([0.0, 2.0, 10.0])")
SEED = ('%%leapp_trace --probe 6 --seed 0\nstate = annotate.input_tensors("node", {"state": raw_state})\n'
        "calibrated = np.interp(state, CALIB_IN, CALIB_OUT)\nresult = state * 0.1 + calibrated\n"
        'annotate.output_tensors("node", {"result": result}, export_with="jit")')
CLICK = "_leapp_controls._on_probe()  # what a click on Probe does"


def test_reopened_notebook_keeps_the_probe_and_shows_inactive_controls(tmp_path):
    root, state = tmp_path / "root", tmp_path / "state"
    root.mkdir()
    state.mkdir()
    book = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in (SETUP, SEED, CLICK)])
    book.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbclient.NotebookClient(book, timeout=300, kernel_name="python3").execute()
    nbformat.write(book, root / "saved.ipynb")
    with jupyter_lab(root, state, token=TOKEN) as url, sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium_path(), headless=True, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 3000})
        page.goto(f"{url}/lab/tree/saved.ipynb?reset&token={TOKEN}")
        page.locator(".leapp-trace").first.wait_for(timeout=120_000)
        page.locator(".jp-CodeCell").nth(2).scroll_into_view_if_needed()
        inactive = page.locator(".leapp-controls-inactive")
        inactive.first.wait_for(timeout=120_000)
        # the widget manager restores (a new kernel): give it the time to say "model not found" if it would
        page.wait_for_function("() => window.jupyterapp?.shell.currentWidget?.sessionContext?.session?.kernel",
                               timeout=120_000)
        time.sleep(3)
        assert "model not found" not in page.locator(".jp-Notebook").inner_text()
        assert "re-run the cell to probe or export" in inactive.first.inner_text()
        assert inactive.first.locator("button[disabled]").count() == 2
        trace_text = page.locator(".jp-CodeCell").nth(1).locator(".leapp-trace").inner_text()
        assert "probe failed" in trace_text.lower()
        # the probe's details the live controls printed, from the saved model: its seed and first mismatch
        details = page.locator(".jp-CodeCell").nth(1).locator(".leapp-trace-probe")
        assert details.count() >= 1 and details.first.is_visible()
        text = details.first.inner_text()
        assert "(seed 0): FAILED" in text and "the eager cell gives" in text, text
        page.locator(".jp-CodeCell").nth(1).screenshot(path=str(tmp_path / "reopened.png"))
        browser.close()
