"""The notebook HTML of the seed example in a real browser (Playwright + Chromium): it draws, its
sections fold, and an injected payload stays text. Screenshots go to a temporary directory, or to
docs/images with LEAPP_UPDATE_SCREENSHOTS=1.

Skips cleanly when Playwright or Chromium is missing (LEAPP_CHROMIUM names another binary).
"""

import os
import shutil

import numpy as np
import pytest
from conftest import SEED_INTERP_CELL, screenshot

import leapp_notebook as ln
from leapp_notebook import render

sync_api = pytest.importorskip("playwright.sync_api")
CHROMIUM = os.environ.get("LEAPP_CHROMIUM", "/usr/bin/chromium")
if not (os.path.exists(CHROMIUM) or shutil.which(CHROMIUM)):
    pytest.skip(f"Chromium not found at {CHROMIUM}", allow_module_level=True)

HAS_DOT = shutil.which("dot") is not None
PAYLOAD = "<img src=x onerror=alert(1)>"


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=shutil.which(CHROMIUM) or CHROMIUM, headless=True,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update"])
        yield browser
        browser.close()


@pytest.fixture
def page(browser):
    page = browser.new_page(viewport={"width": 1280, "height": 900}, device_scale_factor=1)
    dialogs = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    page.dialogs = dialogs
    yield page
    page.close()


def show(page, fragment):
    page.set_content(f"<!doctype html><html><head><meta charset='utf-8'></head>"
                     f"<body style='margin:12px;background:white'>{fragment}</body></html>")


def save(page, tmp_path, name):
    return screenshot(page, tmp_path, name, full_page=True)


def seed_trace(seed_namespace, profile):
    trace = ln.trace_cell(SEED_INTERP_CELL, dict(seed_namespace), profile=profile)
    trace.probe(n=8, seed=1)
    return trace


@pytest.mark.parametrize("profile", ["leapp", "full"])
def test_seed_html_draws_the_graph_hazards_and_probe_result(page, tmp_path, seed_namespace, profile):
    trace = seed_trace(seed_namespace, profile)
    show(page, render.mimebundle(trace)["text/html"])
    assert page.locator(".leapp-hazard").count() == 1
    assert page.get_by_text("untraced-call").first.is_visible()
    if HAS_DOT:
        graph = page.locator(".leapp-graph svg")
        assert graph.count() == 1 and graph.bounding_box()["width"] > 300
        assert page.locator("svg text", has_text="OUT result").count() == 1
    if profile == "leapp":
        assert page.get_by_text("✖ not exportable as is").is_visible()
        if HAS_DOT:
            assert page.locator("svg text", has_text="BAKED baked0").count() == 1
            assert page.locator("svg text", has_text="PROBE FAILED").count() >= 1
    else:
        assert page.get_by_text("⚠ ready to export; 1 warning to read").is_visible()
    assert save(page, tmp_path, f"graph-{profile}.png").stat().st_size > 10_000


def test_graph_only_svg_screenshot(page, tmp_path, seed_namespace):
    if not HAS_DOT:
        pytest.skip("Graphviz `dot` is not installed")
    for profile in ("leapp", "full"):
        show(page, render.svg_fragment(render.to_svg(seed_trace(seed_namespace, profile))))
        assert page.locator("svg").count() == 1
        save(page, tmp_path, f"svg-{profile}.png")


def test_ops_sections_fold_open_and_closed(page, seed_namespace):
    trace = ln.trace_cell(SEED_INTERP_CELL, dict(seed_namespace), profile="full")
    show(page, render.to_html(trace))
    group = page.locator("details.leapp-group").nth(1)
    assert group.get_attribute("open") is None
    row = group.locator("tr").first
    assert not row.is_visible()
    group.locator("summary").click()
    assert row.is_visible()


def test_payload_in_names_and_code_stays_text_in_the_browser(page, tmp_path):
    source = (f'x = annotate.input_tensors("{PAYLOAD}", {{"x": raw}})\n'
              f'y = np.interp(x, CIN, COUT)  # {PAYLOAD}\n'
              f'annotate.output_tensors("{PAYLOAD}", {{"y": y + x}})\n')
    trace = ln.trace_cell(source, {"np": np, "raw": np.array([0.2, 0.6], np.float32),
                                   "CIN": np.array([0.0, 1.0]), "COUT": np.array([0.0, 5.0])})
    show(page, render.mimebundle(trace)["text/html"])
    page.wait_for_timeout(200)
    assert page.locator("img").count() == 0 and page.dialogs == []
    assert page.get_by_text(PAYLOAD).first.is_visible()


WIDGET_CELL = '''import numpy as np
import leapp_notebook as ln
CELL = """{cell}"""
namespace = {{"np": np, "raw_state": np.array([0.1, 0.4, 0.7, 0.9], np.float32),
             "CALIB_IN": np.array([0.0, 0.5, 1.0]), "CALIB_OUT": np.array([0.0, 2.0, 10.0])}}
w = ln.TraceWidget(ln.trace_cell(CELL, namespace, profile="leapp"), directory="export")
w.probe_count.value = 8
w.probe_seed.value = "1"
w'''


@pytest.mark.skipif(os.environ.get("LEAPP_UPDATE_SCREENSHOTS") != "1",
                    reason="starts JupyterLab: runs with LEAPP_UPDATE_SCREENSHOTS=1")
def test_widget_in_jupyterlab_probes_marks_and_refuses_export(browser, tmp_path):
    """The widget in a real JupyterLab: clicks in the page reach the Python handlers through the kernel."""
    import socket
    import subprocess
    import sys
    import time
    import urllib.request

    nbformat = pytest.importorskip("nbformat")
    notebook = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell(WIDGET_CELL.format(cell=SEED_INTERP_CELL))],
        metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}})
    nbformat.write(notebook, tmp_path / "widget.ipynb")
    with socket.socket() as probe_socket:
        probe_socket.bind(("127.0.0.1", 0))
        port = probe_socket.getsockname()[1]
    with open(tmp_path / "lab.log", "w") as log:
        lab = subprocess.Popen(
            [sys.executable, "-m", "jupyter", "lab", "--no-browser", f"--port={port}", "--ip=127.0.0.1",
             "--ServerApp.token=", "--ServerApp.password=", "--ServerApp.disable_check_xsrf=True",
             f"--ServerApp.root_dir={tmp_path}", "--LabApp.expose_app_in_browser=True",
             "--ServerApp.allow_root=True"],
            stdout=log, stderr=subprocess.STDOUT)
    try:
        for _ in range(240):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/api", timeout=1)
                break
            except OSError:
                time.sleep(0.5)
        page = browser.new_page(viewport={"width": 1300, "height": 2300})
        page.goto(f"http://127.0.0.1:{port}/lab/tree/widget.ipynb")
        page.wait_for_function("window.jupyterapp?.shell.currentWidget?.sessionContext?.session?.kernel?.status"
                               " === 'idle'", timeout=120_000)
        page.evaluate("window.jupyterapp.commands.execute('notebook:run-all-cells')")
        page.wait_for_selector(".jupyter-widgets .widget-button", timeout=120_000)
        page.evaluate("window.jupyterapp.commands.execute('application:toggle-left-area')")
        page.get_by_role("button", name="Probe").click()
        page.wait_for_selector("text=probe FAILED", timeout=60_000)
        page.locator(".jupyter-widgets select").first.select_option(index=1)  # mark the first hazard
        page.wait_for_selector("svg text:has-text('selected')", timeout=30_000)
        page.get_by_role("button", name="Export").click()
        page.wait_for_selector("text=export refused", timeout=60_000)
        if page.get_by_role("button", name="No", exact=True).count():
            page.get_by_role("button", name="No", exact=True).click()  # the "Jupyter news?" toast
        page.evaluate("window.jupyterapp.commands.execute('notebook:hide-cell-code')")
        page.wait_for_timeout(800)
        output = page.locator(".jp-OutputArea-output").first
        output.scroll_into_view_if_needed()
        assert output.locator("svg text", has_text="PROBE FAILED").count() >= 1
        screenshot(output, tmp_path, "widget-leapp.png")
        page.close()
    finally:
        lab.terminate()
        lab.wait(30)


