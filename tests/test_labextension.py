"""The prebuilt JupyterLab extension in a real JupyterLab (Playwright + Chromium): a saved notebook with the
seed trace's output shows the trace renderer's hazard table, the hazard line is marked in the cell editor,
marks follow the outputs (cleared, restored), and an injected payload stays text. No node is needed: the
test serves the committed build in leapp_notebook/labextension.

The screenshot goes to a temporary directory, or to docs/images with LEAPP_UPDATE_SCREENSHOTS=1.
Skips cleanly when Playwright, Chromium, JupyterLab or the built extension is missing.
"""


import nbformat
import numpy as np
import pytest
from conftest import SEED_INTERP_CELL, screenshot

import leapp_notebook as ln
from leapp_notebook.render import MIME_TYPE

PAYLOAD = "<img src=x onerror=alert(1)>"
PAYLOAD_CELL = SEED_INTERP_CELL.replace("CALIB_OUT)\n", f"CALIB_OUT)  # {PAYLOAD}\n")
# the hazard line made longer than the editor is wide (a long expression, or a comment after it)
LONG_CELL = SEED_INTERP_CELL.replace("CALIB_OUT)\n",
                                     "CALIB_OUT)  # " + "calibrated against the bench rig, " * 12 + "\n")
TIMEOUT_MS = 120_000
TOKEN = "leapp-labextension-test"


sync_api = pytest.importorskip("playwright.sync_api")
pytest.importorskip("jupyterlab")
from lab_server import BUILT, CHROMIUM_ARGS, SHOTS, built_load, chromium_path, jupyter_lab, loaded_build  # noqa: E402

if chromium_path() is None:
    pytest.skip("Chromium not found", allow_module_level=True)
if built_load() is None:
    pytest.skip(f"the built extension is missing from {BUILT} (scripts/build_labextension.sh)", allow_module_level=True)


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


LOCATION = f"scipy/interpolate/_x.py:3 in interp {PAYLOAD}"


def located_output(source):
    """The output of ``source`` with its hazard made by a library's line (``Hazard.location``), one that holds the
    payload too."""
    output = traced_output(source)
    output["data"][MIME_TYPE]["hazards"][0]["location"] = LOCATION
    return output


def legacy_output():
    """The seed's output as saved by an older leapp_notebook: no SVG (no dot then), no verdict or summary words."""
    output = traced_output(SEED_INTERP_CELL, svg=False)
    model = output["data"][MIME_TYPE]
    model.pop("verdict", None)
    model["summary"].pop("text", None)
    return output


def future_output():
    """The seed's output as a newer kernel could write it: a verdict in the model's own words and a hazard
    kind (with its look in the legend) this front end has never heard of."""
    output = traced_output(SEED_INTERP_CELL, svg=False)
    model = output["data"][MIME_TYPE]
    model["verdict"] = {"state": "warning", "text": "words from the model"}
    model["hazards"][0].update(kind="some-future-kind", category="future")
    model["legend"].append({"category": "future", "label": "a future look", "fill": "#ccfbf1", "border": "#0f766e",
                            "icon": "⚙", "tag": "FUTURE"})
    for vertex in model["nodes"][0]["vertices"]:
        if vertex["hazards"]:
            vertex["category"] = "future"
    return output


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """A JupyterLab server over a tmp dir holding seed.ipynb, isolated from the user's workspaces and
    settings, that finds this checkout's built extension first (JUPYTER_PATH)."""
    root = tmp_path_factory.mktemp("lab")
    notebook = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell(SEED_INTERP_CELL.rstrip("\n"), outputs=[traced_output(SEED_INTERP_CELL)]),
        nbformat.v4.new_code_cell(PAYLOAD_CELL.rstrip("\n"), outputs=[located_output(PAYLOAD_CELL)]),
        nbformat.v4.new_code_cell(SEED_INTERP_CELL.rstrip("\n"), outputs=[legacy_output()]),
        nbformat.v4.new_code_cell(SEED_INTERP_CELL.rstrip("\n"), outputs=[future_output()]),
        nbformat.v4.new_code_cell(LONG_CELL.rstrip("\n"), outputs=[traced_output(LONG_CELL)]),
    ])
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(notebook, root / "seed.ipynb")
    with jupyter_lab(root, tmp_path_factory.mktemp("lab-state"), token=TOKEN) as url:
        yield url


@pytest.fixture(scope="module")
def page(lab):
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium_path(), headless=True, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1800}, device_scale_factor=1)
        page.dialogs = []
        page.on("dialog", lambda dialog: (page.dialogs.append(dialog.message), dialog.dismiss()))
        page.set_default_timeout(TIMEOUT_MS)
        page.goto(f"{lab}/lab/tree/seed.ipynb?reset&token={TOKEN}")
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
    assert row.locator(".leapp-hazard-lineno").inner_text() == "3"
    assert "error" in row.locator(".leapp-hazard-severity").inner_text()
    assert "np.interp" in row.locator(".leapp-hazard-code").inner_text()
    summary = cell(page, 0).locator(".leapp-trace-summary").inner_text()
    assert "1 error" in summary and "3 ops" in summary
    # The graph is laid out in the page (WebAssembly Graphviz), not the bundle's SVG image.
    graph = cell(page, 0).locator(".leapp-trace-graph[data-leapp-state=ready]")
    graph.wait_for()
    assert graph.locator("img").count() == 0
    assert graph.locator("[data-leapp-node][data-leapp-status=baked]").count() == 1
    # the page loaded this checkout's build, not another checkout linked into sys.prefix
    assert loaded_build(page) == built_load()


def test_editor_marks_the_hazard_line(page, tmp_path):
    line = editor_line(page, 0, 3)
    line.wait_for()
    page.wait_for_function(
        "line => line.classList.contains('leapp-hazard-error')", arg=line.element_handle())
    assert "np.interp" in line.inner_text()
    assert "untraced-call" in line.locator(".leapp-hazard-badge").inner_text()
    assert line.get_attribute("data-leapp-severity") == "error"
    assert line.get_attribute("data-leapp-kind") == "untraced-call"
    assert "leapp-hazard-line" in line.get_attribute("class")
    assert "Fix:" in line.get_attribute("title")
    for other in (1, 2, 4, 5):
        assert "leapp-hazard" not in (editor_line(page, 0, other).get_attribute("class") or "")
    screenshot(cell(page, 0), tmp_path, "labextension-seed.png")


def test_payload_in_cell_source_and_hazard_code_stays_text(page, tmp_path):
    cell(page, 1).scroll_into_view_if_needed()
    cell(page, 1).screenshot(path=str(tmp_path / "labextension-payload.png"))
    code = cell(page, 1).locator(".leapp-hazard-code")
    assert PAYLOAD in code.inner_text()
    # the library line that made the call, under the code (as the HTML and text renderers show it); a cell-level
    # hazard has none
    assert code.locator(".leapp-hazard-location").inner_text() == f"in {LOCATION}"
    assert cell(page, 0).locator(".leapp-hazard-location").count() == 0
    assert PAYLOAD in editor_line(page, 1, 3).inner_text()
    assert page.locator("img[src='x']").count() == 0
    assert page.dialogs == []


def test_graph_is_drawn_in_the_page_without_the_kernels_svg(page, tmp_path):
    """Cell 2's output has no image/svg+xml (Graphviz missing on the kernel side): the same graph is drawn."""
    graph = cell(page, 2).locator(".leapp-trace-graph[data-leapp-state=ready]")
    graph.scroll_into_view_if_needed()
    graph.screenshot(path=str(SHOTS / "labextension-no-svg.png"))
    baked = graph.locator("[data-leapp-node][data-leapp-status=baked]")
    assert "BAKED baked0" in baked.text_content()
    assert graph.locator("[data-leapp-node]").count() == 6
    assert "not recorded" in graph.locator("svg").text_content()


def test_verdict_words_and_unknown_hazard_kinds_come_from_the_model(page):
    future = cell(page, 3)
    future.scroll_into_view_if_needed()
    assert future.locator(".leapp-trace-status").inner_text() == "⚠ words from the model"
    # older models (no verdict field) keep the words derived in the front end
    assert cell(page, 2).locator(".leapp-trace-status").inner_text() == "✖ not exportable"
    assert "3 ops · 1 error · 0 warnings · probe not run" in cell(page, 2).locator(".leapp-trace-counts").inner_text()
    model = traced_output(SEED_INTERP_CELL)["data"][MIME_TYPE]
    if "verdict" in model:  # this kernel writes the verdict: shown as written, after its state's icon
        assert cell(page, 0).locator(".leapp-trace-status").inner_text() == "✖ " + model["verdict"]["text"]
    graph = future.locator(".leapp-trace-graph[data-leapp-state=ready]")
    node = graph.locator("[data-leapp-node][data-leapp-kinds=some-future-kind]")
    assert node.get_attribute("data-leapp-status") == "some-future-kind"
    assert "error: some-future-kind" in node.text_content()
    legend = graph.locator(".leapp-graph-legend")
    assert "⚙ FUTURE" in legend.locator("[data-leapp-legend=future]").inner_text()
    assert "some-future-kind" in legend.locator("[data-leapp-legend-kind=some-future-kind]").inner_text()
    mark = future.locator(".cm-line.leapp-hazard-line[data-leapp-kind=some-future-kind]")
    assert mark.count() == 1 and "some-future-kind" in mark.locator(".leapp-hazard-badge").inner_text()


def test_marks_follow_the_outputs(page):
    """Clearing the outputs removes the marks; putting the saved outputs back restores them."""
    marked = ".jp-CodeCell .cm-line.leapp-hazard-error"
    assert page.locator(marked).count() == 5
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
    page.wait_for_function(f"() => document.querySelectorAll('{marked}').length === 5")
    assert "leapp-hazard-error" in editor_line(page, 0, 3).get_attribute("class")
    assert cell(page, 0).locator(".leapp-hazard-row").count() == 1


def test_the_badge_of_a_line_wider_than_the_editor_stays_in_view(page, tmp_path):
    """On a line longer than the editor is wide, the badge (its kind and Apply fix) sat past the editor's right edge,
    out of sight without scrolling sideways: it keeps to the visible part of the line."""
    line = editor_line(page, 4, 3)
    badge = line.locator(".leapp-hazard-badge")
    badge.wait_for()
    scroller = cell(page, 4).locator(".cm-scroller").bounding_box()
    box = badge.bounding_box()
    assert line.bounding_box()["width"] > scroller["width"]  # the line is wider than the editor
    assert scroller["x"] <= box["x"] and box["x"] + box["width"] <= scroller["x"] + scroller["width"] + 1, \
        (box, scroller)
    # it is readable there: opaque, over the code it covers
    background = badge.evaluate("b => getComputedStyle(b).backgroundColor")
    assert background not in ("rgba(0, 0, 0, 0)", "transparent"), background
    screenshot(cell(page, 4).locator(".jp-InputArea"), tmp_path, "labextension-long-line-badge.png")
