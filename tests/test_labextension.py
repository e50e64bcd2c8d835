"""The prebuilt JupyterLab extension in a real JupyterLab (Playwright + Chromium): a saved notebook with the
seed trace's output shows the trace renderer's hazard table, the hazard line is marked in the cell editor,
marks follow the outputs (cleared, restored), and an injected payload stays text. No node is needed: the
test serves the committed build in leapp_notebook/labextension.

The screenshot goes to a temporary directory, or to docs/images with LEAPP_UPDATE_SCREENSHOTS=1.
Skips cleanly when Playwright, Chromium, JupyterLab or the built extension is missing.
"""

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import nbformat
import numpy as np
import pytest
from conftest import SEED_INTERP_CELL, screenshot

import leapp_notebook as ln
from leapp_notebook.render import MIME_TYPE

sync_api = pytest.importorskip("playwright.sync_api")
pytest.importorskip("jupyterlab")
CHROMIUM = os.environ.get("LEAPP_CHROMIUM", "/usr/bin/chromium")
if not (os.path.exists(CHROMIUM) or shutil.which(CHROMIUM)):
    pytest.skip(f"Chromium not found at {CHROMIUM}", allow_module_level=True)
BUILT = Path(ln.__file__).resolve().parent / "labextension"
BUILT_MANIFEST = BUILT / "package.json"
if not BUILT_MANIFEST.exists() or "_build" not in json.loads(BUILT_MANIFEST.read_text())["jupyterlab"]:
    pytest.skip(f"the built extension is missing from {BUILT} (cd labextension && jlpm build:prod)",
                allow_module_level=True)

PAYLOAD = "<img src=x onerror=alert(1)>"
PAYLOAD_CELL = SEED_INTERP_CELL.replace("CALIB_OUT)\n", f"CALIB_OUT)  # {PAYLOAD}\n")
TIMEOUT_MS = 120_000


def traced_output(source, *, svg=True):
    """The display_data output the magic saves for ``source`` (the seed's namespace); without the
    SVG, as when Graphviz is missing on the kernel side."""
    namespace = {"np": np, "raw_state": np.array([0.1, 0.4, 0.7, 0.9], np.float32),
                 "CALIB_IN": np.array([0.0, 0.5, 1.0]), "CALIB_OUT": np.array([0.0, 2.0, 10.0])}
    bundle = ln.trace_cell(source, namespace)._repr_mimebundle_()
    assert MIME_TYPE in bundle
    if not svg:
        bundle.pop("image/svg+xml", None)
    return nbformat.v4.new_output("display_data", data=bundle)


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """A JupyterLab server over a tmp dir holding seed.ipynb, isolated from the user's workspaces and
    settings, that finds this checkout's built extension first (JUPYTER_PATH)."""
    root = tmp_path_factory.mktemp("lab")
    notebook = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell(SEED_INTERP_CELL.rstrip("\n"), outputs=[traced_output(SEED_INTERP_CELL)]),
        nbformat.v4.new_code_cell(PAYLOAD_CELL.rstrip("\n"), outputs=[traced_output(PAYLOAD_CELL)]),
        nbformat.v4.new_code_cell(SEED_INTERP_CELL.rstrip("\n"), outputs=[traced_output(SEED_INTERP_CELL, svg=False)]),
    ])
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(notebook, root / "seed.ipynb")
    state = tmp_path_factory.mktemp("lab-state")
    (state / "share" / "labextensions").mkdir(parents=True)
    (state / "share" / "labextensions" / "leapp-notebook").symlink_to(BUILT, target_is_directory=True)
    news = state / "settings" / "@jupyterlab" / "apputils-extension"
    news.mkdir(parents=True)
    (news / "notification.jupyterlab-settings").write_text(json.dumps({"fetchNews": "false"}))
    port = free_port()
    log = (state / "server.log").open("w")
    server = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab", "--no-browser", f"--port={port}", "--ServerApp.ip=127.0.0.1",
         "--ServerApp.token=", "--ServerApp.password=", f"--ServerApp.root_dir={root}", "--allow-root",
         "--LabApp.expose_app_in_browser=True", f"--LabApp.workspaces_dir={state / 'workspaces'}",
         f"--LabApp.user_settings_dir={state / 'settings'}"],
        stdout=log, stderr=subprocess.STDOUT, env={**os.environ, "JUPYTER_PATH": str(state / "share")})
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + TIMEOUT_MS / 1000
        while True:
            try:
                urllib.request.urlopen(f"{url}/api/status", timeout=2).close()
                break
            except (urllib.error.URLError, ConnectionError):
                if server.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"JupyterLab did not start:\n{(state / 'server.log').read_text()[-3000:]}")
                time.sleep(0.5)
        yield url
    finally:
        server.terminate()  # SIGTERM lets the server shut down the kernel it started
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        log.close()


@pytest.fixture(scope="module")
def page(lab):
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=shutil.which(CHROMIUM) or CHROMIUM, headless=True,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update"])
        page = browser.new_page(viewport={"width": 1400, "height": 1800}, device_scale_factor=1)
        page.dialogs = []
        page.on("dialog", lambda dialog: (page.dialogs.append(dialog.message), dialog.dismiss()))
        page.set_default_timeout(TIMEOUT_MS)
        page.goto(f"{lab}/lab/tree/seed.ipynb?reset")
        page.locator(".jp-CodeCell .leapp-trace").first.wait_for()
        yield page
        browser.close()


def cell(page, index):
    return page.locator(".jp-Notebook .jp-CodeCell").nth(index)


def editor_line(page, index, line):
    return cell(page, index).locator(".cm-content .cm-line").nth(line - 1)


def test_renderer_shows_the_hazard_table_of_the_saved_output(page):
    row = cell(page, 0).locator(".leapp-trace .leapp-hazard-row").first
    assert row.locator(".leapp-hazard-kind").inner_text() == "untraced-call"
    assert row.locator(".leapp-hazard-line").inner_text() == "3"
    assert "error" in row.locator(".leapp-hazard-severity").inner_text()
    assert "np.interp" in row.locator(".leapp-hazard-code").inner_text()
    summary = cell(page, 0).locator(".leapp-trace-summary").inner_text()
    assert "1 error" in summary and "3 ops" in summary
    # The graph is the bundle's Graphviz SVG, drawn through an <img>.
    assert cell(page, 0).locator("img.leapp-trace-svg").evaluate("img => img.complete && img.naturalWidth > 0")


def test_editor_marks_the_hazard_line(page, tmp_path):
    line = editor_line(page, 0, 3)
    line.wait_for()
    page.wait_for_function(
        "line => line.classList.contains('leapp-hazard-error')", arg=line.element_handle())
    assert "np.interp" in line.inner_text()
    assert "untraced-call" in line.locator(".leapp-hazard-badge").inner_text()
    assert "Fix:" in line.get_attribute("title")
    for other in (1, 2, 4, 5):
        assert "leapp-hazard" not in (editor_line(page, 0, other).get_attribute("class") or "")
    screenshot(cell(page, 0), tmp_path, "labextension-seed.png")


def test_payload_in_cell_source_and_hazard_code_stays_text(page, tmp_path):
    cell(page, 1).scroll_into_view_if_needed()
    cell(page, 1).screenshot(path=str(tmp_path / "labextension-payload.png"))
    code = cell(page, 1).locator(".leapp-hazard-code")
    assert PAYLOAD in code.inner_text()
    assert PAYLOAD in editor_line(page, 1, 3).inner_text()
    assert page.locator("img[src='x']").count() == 0
    assert page.dialogs == []


def test_graph_falls_back_to_a_vertex_list_without_svg(page, tmp_path):
    graph = cell(page, 2).locator(".leapp-trace-graph")
    graph.scroll_into_view_if_needed()
    graph.screenshot(path=str(tmp_path / "labextension-vertex-list.png"))
    assert graph.locator("img").count() == 0
    baked = graph.locator(".leapp-vertex-baked")
    assert "BAKED" in baked.inner_text() and "baked0" in baked.inner_text()
    assert "from state, not recorded" in baked.locator(".leapp-vertex-not-recorded").inner_text()
    assert graph.locator(".leapp-vertex").count() == 6


def test_marks_follow_the_outputs(page):
    """Clearing the outputs removes the marks; putting the saved outputs back restores them."""
    marked = ".jp-CodeCell .cm-line.leapp-hazard-error"
    assert page.locator(marked).count() == 3
    saved = page.evaluate("""() => {
        const cells = window.jupyterapp.shell.currentWidget.content.widgets;
        const outputs = cells.map(cell => cell.model.outputs.get(0).toJSON());
        window.jupyterapp.commands.execute('notebook:clear-all-cell-outputs');
        return outputs;
    }""")
    page.wait_for_function(f"() => document.querySelectorAll('{marked}').length === 0")
    assert page.locator(".leapp-trace").count() == 0
    page.evaluate("""outputs => {
        const cells = window.jupyterapp.shell.currentWidget.content.widgets;
        outputs.forEach((output, index) => cells[index].model.outputs.add(output));
    }""", saved)
    page.wait_for_function(f"() => document.querySelectorAll('{marked}').length === 3")
    assert "leapp-hazard-error" in editor_line(page, 0, 3).get_attribute("class")
    assert cell(page, 0).locator(".leapp-hazard-row").count() == 1


