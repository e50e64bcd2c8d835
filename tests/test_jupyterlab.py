"""The real JupyterLab opening notebooks/quickstart.ipynb in headless Chromium: run it, see the graph.

Skips when Chromium, Playwright or JupyterLab is missing. ``LEAPP_SCREENSHOTS=docs/images`` also writes
the screenshots the README shows (``quickstart-trace.png``, ``quickstart-probe.png``).
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Iterator

import pytest
from lab_server import BUILT, built_load, loaded_build

CHROMIUM = Path("/usr/bin/chromium")
NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update"]

if not CHROMIUM.exists():
    pytest.skip("Chromium is not installed at /usr/bin/chromium", allow_module_level=True)
pytest.importorskip("jupyterlab")
sync_api = pytest.importorskip("playwright.sync_api")


# The SVG markup of every graph drawn in an output area, inline or as a data: URL image.
DRAWINGS = """area => [
    ...Array.from(area.querySelectorAll('svg')).map(svg => svg.outerHTML),
    ...Array.from(area.querySelectorAll("img[src^='data:image/svg+xml']")).map(img => {
        const data = img.src.slice(img.src.indexOf(',') + 1);
        return img.src.includes(';base64,') ? atob(data) : decodeURIComponent(data);
    }),
].join('\\n')"""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def lab(tmp_path_factory) -> Iterator[str]:
    """A JupyterLab server (no token, its own config and settings) serving a copy of notebooks/."""
    root = tmp_path_factory.mktemp("lab")
    shutil.copytree(NOTEBOOKS, root / "notebooks", ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    env = dict(os.environ)
    folders = {"JUPYTER_CONFIG_DIR": "config", "JUPYTER_RUNTIME_DIR": "runtime",
               "JUPYTERLAB_SETTINGS_DIR": "settings", "JUPYTERLAB_WORKSPACES_DIR": "workspaces"}
    for variable, folder in folders.items():
        (root / folder).mkdir()
        env[variable] = str(root / folder)
    # no "official Jupyter news?" toast over the outputs
    news = root / "settings" / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings"
    news.parent.mkdir(parents=True)
    news.write_text(json.dumps({"fetchNews": "false"}))
    # this checkout's built extension first (JUPYTER_PATH comes before sys.prefix), see lab_server.py
    (root / "share" / "labextensions").mkdir(parents=True)
    (root / "share" / "labextensions" / "leapp-notebook").symlink_to(BUILT, target_is_directory=True)
    env["JUPYTER_PATH"] = str(root / "share")
    port = _free_port()
    log = (root / "server.log").open("w")
    server = subprocess.Popen(
        [sys.executable, "-m", "jupyter", "lab", "--no-browser", "--allow-root", f"--port={port}",
         "--ServerApp.ip=127.0.0.1", "--ServerApp.token=", "--ServerApp.password=",
         f"--ServerApp.root_dir={root}"], env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                urllib.request.urlopen(f"{url}/api", timeout=2)
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    pytest.fail("JupyterLab did not start:\n" + (root / "server.log").read_text()[-3000:])
                time.sleep(0.5)
        yield url
    finally:
        server.terminate()
        try:
            server.wait(30)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()


@pytest.fixture(scope="module")
def page(lab) -> Iterator[object]:
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1500, "height": 2400})
        try:
            yield page
        finally:
            browser.close()


def _screenshot(page, locator, name: str, tmp_path: Path) -> Path:
    """The whole of ``locator`` (scrolled to the top of the viewport), into tmp_path and LEAPP_SCREENSHOTS."""
    locator.evaluate("element => element.scrollIntoView({block: 'start'})")
    page.wait_for_timeout(500)
    box = locator.bounding_box()
    viewport = page.viewport_size
    clip = {"x": box["x"], "y": box["y"], "width": min(box["width"], viewport["width"] - box["x"]),
            "height": min(box["height"], viewport["height"] - box["y"])}
    path = tmp_path / name
    page.screenshot(path=str(path), clip=clip)
    target = os.environ.get("LEAPP_SCREENSHOTS")
    if target:
        Path(target).mkdir(parents=True, exist_ok=True)
        shutil.copy(path, Path(target) / name)
    return path


def _accept_kernel(page) -> None:
    """Take the notebook's own kernel (python3) if JupyterLab asks, then wait until it is idle."""
    select = page.locator(".jp-Dialog").get_by_role("button", name="Select")
    try:
        select.wait_for(timeout=15_000)
        select.click()
    except sync_api.TimeoutError:
        pass
    page.get_by_text("Python 3 (ipykernel) | Idle").wait_for(timeout=120_000)


def test_quickstart_runs_in_jupyterlab_and_shows_the_baked_interp(lab, page, tmp_path):
    page.goto(f"{lab}/lab/tree/notebooks/quickstart.ipynb")
    page.wait_for_selector(".jp-Notebook .jp-CodeCell", timeout=60_000)
    _accept_kernel(page)
    if built_load() is not None:
        assert loaded_build(page) == built_load(), "JupyterLab loaded another checkout's build"

    page.get_by_role("menuitem", name="Run", exact=True).click()
    page.get_by_text("Run All Cells", exact=True).click()
    last = page.locator(".jp-Notebook .jp-CodeCell").last
    last.get_by_text("agree: True").wait_for(timeout=240_000)

    seed_cell = page.locator(".jp-Notebook .jp-CodeCell").nth(1)
    seed_cell.evaluate("element => element.scrollIntoView({block: 'start'})")
    output = seed_cell.locator(".jp-OutputArea")
    # Graphviz's drawing: inline (the labextension's live graph, or the HTML fallback) or an <img>
    output.locator("svg:has(g.graph), img[src^='data:image/svg+xml']").first.wait_for(timeout=60_000)
    text = output.inner_text()
    assert "untraced-call" in text and "calibrated = np.interp(state, CALIB_IN, CALIB_OUT)" in text
    drawing = output.evaluate(DRAWINGS)
    assert "BAKED" in drawing and "line 4: calibrated = np.interp" in drawing
    # the widget's buttons (graph nodes are buttons too, named after their content)
    probe_button = output.locator("button.widget-button", has_text="Probe")
    probe_button.wait_for(timeout=60_000)
    assert output.locator("button.widget-button", has_text="Export").count() == 1
    shot = _screenshot(page, seed_cell, "quickstart-trace.png", tmp_path)
    assert shot.stat().st_size > 20_000

    probe_button.click()
    output.get_by_text("probe FAILED").first.wait_for(timeout=120_000)
    assert "result" in output.inner_text()
    shot = _screenshot(page, seed_cell, "quickstart-probe.png", tmp_path)
    assert shot.stat().st_size > 20_000
