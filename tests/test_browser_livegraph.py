"""The live graph in a real JupyterLab (Playwright + headless Chromium) whose kernel has no Graphviz `dot`.

JupyterLab is started by the test with a token, on a free localhost port, with a PATH on which `dot`
is not found (the kernel inherits it), and loads this checkout's build (tests/lab_server.py). The kernel
runs the `%%leapp_trace` cells; the graph is laid out in the browser by WebAssembly Graphviz. Checked:
the graph is drawn with no SVG in the output; the hover card's text; clicking a node moves the cell's
cursor to its line; folding and unfolding a cluster; selecting a hazard's nodes from its table row and
from its editor mark; "Apply fix" edits the cell (undoable) and re-runs it, after which the hazard is
gone and the probe passes; the hazard table fits the output at 1024 px; a 1,000-op cell opens folded
(its time to draw is printed, not asserted); the dark theme.

Screenshots go to test-screenshots/ (ignored by git); LEAPP_UPDATE_SCREENSHOTS=1 also copies the ones
the docs show to docs/images.
"""

import json
import os
import re
import shutil

import nbformat
import numpy as np
import pytest

import leapp_notebook as ln
from leapp_notebook.render import MIME_TYPE

sync_api = pytest.importorskip("playwright.sync_api")
pytest.importorskip("jupyterlab")
from conftest import DOCS_IMAGES, SEED_INTERP_CELL  # noqa: E402
from lab_server import (  # noqa: E402
    CHROMIUM_ARGS,
    SHOTS,
    built_load,
    chromium_path,
    jupyter_lab,
    loaded_build,
    path_without,
)

if chromium_path() is None:
    pytest.skip("Chromium not found", allow_module_level=True)
if built_load() is None:
    pytest.skip("the built extension is missing (scripts/build_labextension.sh)", allow_module_level=True)

TOKEN = "leapp-live-graph-test"
TIMEOUT_MS = 180_000
SETUP = """%load_ext leapp_notebook
import numpy as np
raw_state = np.array([0.1, 0.4, 0.7, 0.9], np.float32)
CALIB_IN = np.array([0.0, 0.5, 1.0])
CALIB_OUT = np.array([0.0, 2.0, 10.0])
raw = np.arange(4.0)"""
SEED = "%%leapp_trace\n" + SEED_INTERP_CELL.rstrip("\n")
REVERSED = """%%leapp_trace --probe 4 --seed 0
x = annotate.input_tensors("node", {"x": raw})
y = x[::-1] * 2
annotate.output_tensors("node", {"y": y})"""
STALE = REVERSED.replace("--seed 0", "--seed 1")
# 500 passes of a two-op line: 1,000 recorded ops, then the baked np.interp.
BIG = """%%leapp_trace
state = annotate.input_tensors("node", {"state": raw_state})
x = state
for _ in range(500):
    x = x * 1.001 + 0.5
calibrated = np.interp(x, CALIB_IN, CALIB_OUT)
annotate.output_tensors("node", {"result": x + calibrated})"""
# Several hazards with long code and messages, for the width of the hazard table.
WIDE = """%%leapp_trace --profile full
state = annotate.input_tensors("node", {"state": raw_state})
calibrated_state_with_a_long_name = np.interp(state, CALIB_IN, CALIB_OUT) + np.interp(state * 0.5, CALIB_IN, CALIB_OUT)
first_element_as_python_float_for_the_threshold = float(calibrated_state_with_a_long_name[0])
reversed_state_values_for_the_reverse_filter = (calibrated_state_with_a_long_name[::-1]
                                                * first_element_as_python_float_for_the_threshold)
annotate.output_tensors("node", {"result": reversed_state_values_for_the_reverse_filter})"""
# A hazard on a line a loop runs: 400 reversed slices, 802 vertices (the full model reaches the browser).
LOOPED = """%%leapp_trace
x = annotate.input_tensors("node", {"x": raw})
for _ in range(400):
    x = x[::-1] * 1.001
annotate.output_tensors("node", {"y": x})"""
# Two blank lines before the magic, as after a paste: IPython drops them, so the trace numbers its lines from the magic.
BLANK = "\n\n" + REVERSED.replace("--seed 0", "--seed 2")
CELLS = {"setup": 0, "seed": 1, "reversed": 2, "stale": 3, "big": 4, "wide": 5, "looped": 6, "blank": 7}


def saved_output(source):
    """The trace output the magic would save for ``source``, computed here (no kernel, no SVG)."""
    namespace = {"np": np, "raw": np.arange(4.0), "raw_state": np.array([0.1, 0.4, 0.7, 0.9], np.float32),
                 "CALIB_IN": np.array([0.0, 0.5, 1.0]), "CALIB_OUT": np.array([0.0, 2.0, 10.0])}
    first, _, body = source.partition("\n")
    profile = "full" if "--profile full" in first else "leapp"
    bundle = ln.trace_cell(f"# {first}\n{body}\n", namespace, profile=profile)._repr_mimebundle_()
    bundle.pop("image/svg+xml", None)
    assert MIME_TYPE in bundle
    return nbformat.v4.new_output("display_data", data=bundle)


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    root = tmp_path_factory.mktemp("live")
    state = tmp_path_factory.mktemp("live-state")
    notebook = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell(SETUP),
        nbformat.v4.new_code_cell(SEED),
        nbformat.v4.new_code_cell(REVERSED),
        nbformat.v4.new_code_cell(STALE, outputs=[saved_output(STALE)]),
        nbformat.v4.new_code_cell(BIG, outputs=[saved_output(BIG)]),
        nbformat.v4.new_code_cell(WIDE, outputs=[saved_output(WIDE)]),
        nbformat.v4.new_code_cell(LOOPED, outputs=[saved_output(LOOPED)]),
        nbformat.v4.new_code_cell(BLANK),
    ])
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(notebook, root / "live.ipynb")
    no_dot = path_without("dot", state / "bin")
    with jupyter_lab(root, state, token=TOKEN, env={"PATH": no_dot}) as url:
        yield url


@pytest.fixture(scope="module")
def page(lab):
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium_path(), headless=True, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1400}, device_scale_factor=1)
        page.dialogs = []
        page.on("dialog", lambda dialog: (page.dialogs.append(dialog.message), dialog.dismiss()))
        page.set_default_timeout(TIMEOUT_MS)
        page.goto(f"{lab}/lab/tree/live.ipynb?reset&token={TOKEN}")
        page.locator(".jp-CodeCell").nth(CELLS["big"]).locator(".leapp-trace").wait_for()
        page.wait_for_function("() => window.jupyterapp.shell.currentWidget?.sessionContext?.session?.kernel")
        assert loaded_build(page) == built_load(), "JupyterLab loaded another checkout's build"
        for name in ("setup", "seed", "reversed"):
            run_cell(page, CELLS[name])
        yield page
        browser.close()


def cell(page, index):
    return page.locator(".jp-Notebook .jp-CodeCell").nth(index)


def run_cell(page, index):
    """Run one cell through the notebook's own command and wait until its kernel reply came back."""
    page.evaluate("""async index => {
        const panel = window.jupyterapp.shell.currentWidget;
        await panel.sessionContext.ready;
        panel.content.activeCellIndex = index;
        panel.content.deselectAll();
        await window.jupyterapp.commands.execute('notebook:run-cell');
    }""", index)
    page.wait_for_function("""index => {
        const cell = window.jupyterapp.shell.currentWidget.content.widgets[index];
        return cell.model.executionCount !== null && !cell.node.classList.contains('jp-mod-running')
            && !cell.node.querySelector('.jp-InputPrompt')?.textContent.includes('*');
    }""", arg=index)


def graph(page, name):
    found = cell(page, CELLS[name]).locator(".leapp-trace-graph[data-leapp-state=ready]")
    found.wait_for()
    return found


def output_data(page, index):
    return page.evaluate("""index => {
        const outputs = window.jupyterapp.shell.currentWidget.content.widgets[index].model.outputs;
        return Array.from({length: outputs.length}, (_, i) => outputs.get(i).toJSON());
    }""", index)


def shot(locator, name, docs=False):
    path = SHOTS / name
    locator.scroll_into_view_if_needed()
    locator.screenshot(path=str(path))
    if docs and os.environ.get("LEAPP_UPDATE_SCREENSHOTS") == "1":
        shutil.copyfile(path, DOCS_IMAGES / name)
    return path


def test_graph_is_drawn_in_the_browser_with_no_dot_on_the_kernels_path(page):
    outputs = output_data(page, CELLS["seed"])
    bundles = [o["data"] for o in outputs if o.get("output_type") == "display_data" and MIME_TYPE in o.get("data", {})]
    assert len(bundles) == 1 and "image/svg+xml" not in bundles[0], "the kernel found a dot after all"
    drawn = graph(page, "seed")
    assert drawn.locator("svg g.graph").count() == 1
    statuses = drawn.locator("[data-leapp-node]").evaluate_all("nodes => nodes.map(n => n.dataset.leappStatus)")
    assert sorted(statuses) == ["baked", "ok", "ok", "ok", "ok", "ok"]
    baked = drawn.locator("[data-leapp-node][data-leapp-status=baked]")
    assert "BAKED baked0" in baked.text_content() and "untraced-call" in baked.text_content()
    assert baked.get_attribute("data-leapp-kinds") == "untraced-call"
    # the legend comes from the model: its looks and every hazard kind of the hazard list
    legend = drawn.locator(".leapp-graph-legend")
    assert legend.locator("[data-leapp-legend=baked]").count() == 1
    assert legend.locator("[data-leapp-legend-kind=untraced-call]").count() == 1
    shot(cell(page, CELLS["seed"]), "labextension-live-graph.png")


def test_hover_card_shows_the_nodes_call_shape_dtype_value_and_line(page):
    drawn = graph(page, "seed")
    drawn.locator("[data-leapp-node][data-leapp-status=baked]").hover()
    card = drawn.locator(".leapp-graph-card")
    card.wait_for(state="visible")
    text = card.inner_text()
    assert "baked constant baked0" in text
    assert "from: np.interp at line 4" in text
    assert "shape: (4,)" in text and "dtype: float64" in text
    assert "value: [0.4, 1.6, 5.2, 8.4] (frozen at trace time)" in text
    assert "line 4: calibrated = np.interp(state, CALIB_IN, CALIB_OUT)" in text
    assert "✖ untraced-call:" in text
    shot(cell(page, CELLS["seed"]), "labextension-hover.png")

    multiply = drawn.locator("[data-leapp-node]", has_text="np.multiply")
    multiply.hover()
    page.wait_for_function("card => card.innerText.includes('np.multiply')", arg=card.element_handle())
    text = card.inner_text()
    assert "NumPy: np.multiply" in text and "torch: torch.mul" in text
    assert "shape: (4,)" in text and "dtype: float32" in text and "line 5: result = state * 0.1 + calibrated" in text


def test_clicking_a_node_moves_the_cells_cursor_to_its_line_and_flashes_it(page):
    drawn = graph(page, "seed")
    drawn.locator("[data-leapp-node]", has_text="np.multiply").click()
    page.wait_for_function("""index => {
        const panel = window.jupyterapp.shell.currentWidget;
        return panel.content.activeCellIndex === index
            && panel.content.activeCell.editor.getCursorPosition().line === 4;
    }""", arg=CELLS["seed"])
    flashed = cell(page, CELLS["seed"]).locator(".cm-line.leapp-flash")
    assert flashed.count() == 1 and "result = state * 0.1 + calibrated" in flashed.inner_text()
    assert drawn.locator("[data-leapp-selected]").count() == 1

    drawn.locator("[data-leapp-node][data-leapp-status=baked]").click()
    page.wait_for_function(
        "() => window.jupyterapp.shell.currentWidget.content.activeCell.editor.getCursorPosition().line === 3")


def test_a_cluster_folds_and_unfolds(page):
    drawn = graph(page, "seed")
    assert drawn.locator("[data-leapp-node]").count() == 6
    cluster = drawn.locator("[data-leapp-cluster]")
    assert cluster.count() == 1 and "line 5: result = state * 0.1 + calibrated" in cluster.text_content()
    cluster.locator("text").first.click()
    page.wait_for_function("g => g.querySelectorAll('[data-leapp-fold]').length === 1", arg=drawn.element_handle())
    assert drawn.locator("[data-leapp-node]").count() == 3  # state, baked0, result; the 3 ops in one box
    fold = drawn.locator("[data-leapp-fold]")
    assert "3 ops" in fold.text_content() and "np.add ×2" in fold.text_content()
    shot(drawn, "labextension-folded.png")
    fold.click()
    page.wait_for_function("g => g.querySelectorAll('[data-leapp-node]').length === 6", arg=drawn.element_handle())
    assert drawn.locator("[data-leapp-fold]").count() == 0


def test_search_finds_nodes(page):
    drawn = graph(page, "seed")
    drawn.locator(".leapp-graph-search").fill("np.add")
    drawn.locator(".leapp-graph-search").press("Enter")
    page.wait_for_function("g => g.querySelectorAll('[data-leapp-found]').length === 2", arg=drawn.element_handle())
    assert drawn.locator(".leapp-graph-found").inner_text() == "2 found"
    # a baked constant is found by the call that made it (its origin), not only by its name
    drawn.locator(".leapp-graph-search").fill("np.interp")
    drawn.locator(".leapp-graph-search").press("Enter")
    page.wait_for_function("g => g.querySelectorAll('[data-leapp-found]').length === 1", arg=drawn.element_handle())
    assert drawn.locator("[data-leapp-found]").get_attribute("data-leapp-status") == "baked"
    drawn.locator(".leapp-graph-search").fill("")
    drawn.locator(".leapp-graph-search").press("Enter")
    page.wait_for_function("g => g.querySelectorAll('[data-leapp-found]').length === 0", arg=drawn.element_handle())


def test_hazard_row_and_editor_mark_select_the_hazards_nodes(page):
    seed = cell(page, CELLS["seed"])
    drawn = graph(page, "seed")
    seed.locator(".leapp-hazard-row").first.locator(".leapp-hazard-message").click()
    page.wait_for_function("g => g.querySelectorAll('[data-leapp-selected]').length === 1", arg=drawn.element_handle())
    assert drawn.locator("[data-leapp-selected]").get_attribute("data-leapp-status") == "baked"
    assert seed.locator(".leapp-hazard-row[data-leapp-selected]").count() == 1

    drawn.locator("[data-leapp-node]", has_text="np.multiply").click()  # select something else first
    page.wait_for_function("g => g.querySelector('[data-leapp-selected]')?.dataset.leappStatus === 'ok'",
                           arg=drawn.element_handle())
    mark = seed.locator(".cm-line.leapp-hazard-line[data-leapp-severity=error][data-leapp-kind=untraced-call]")
    assert mark.count() == 1 and "np.interp" in mark.inner_text()
    mark.locator(".leapp-hazard-badge-label").click()
    page.wait_for_function("g => g.querySelector('[data-leapp-selected]')?.dataset.leappStatus === 'baked'",
                           arg=drawn.element_handle())


def test_apply_fix_edits_the_cell_reruns_it_and_the_hazard_is_gone(page):
    reversed_cell = cell(page, CELLS["reversed"])
    row = reversed_cell.locator(".leapp-hazard-row[data-leapp-kind=reversed-slice]")
    assert row.count() == 1
    assert re.search(r"probe:? (✖ )?failed", reversed_cell.locator(".leapp-trace-summary").inner_text(), re.I)
    legend = reversed_cell.locator(".leapp-graph-legend")
    assert legend.locator("[data-leapp-legend=probe-failed]").count() == 1
    assert legend.locator("[data-leapp-legend-kind=reversed-slice]").count() == 1
    shot(reversed_cell, "labextension-apply-fix-before.png", docs=True)
    count_before = page.evaluate("i => window.jupyterapp.shell.currentWidget.content.widgets[i].model.executionCount",
                                 CELLS["reversed"])
    row.get_by_role("button", name="Apply fix").click()
    page.wait_for_function("""([i, before]) => {
        const cell = window.jupyterapp.shell.currentWidget.content.widgets[i];
        return cell.model.executionCount > before && cell.node.querySelector('.leapp-trace-summary');
    }""", arg=[CELLS["reversed"], count_before])
    source = page.evaluate("i => window.jupyterapp.shell.currentWidget.content.widgets[i].model.sharedModel.source",
                           CELLS["reversed"])
    assert "y = np.flip(x, axis=0) * 2" in source and "x[::-1]" not in source
    reversed_cell.locator(".leapp-trace-clean").wait_for()
    assert reversed_cell.locator(".leapp-hazard-row").count() == 0
    assert reversed_cell.locator(".cm-line.leapp-hazard-line").count() == 0
    summary = reversed_cell.locator(".leapp-trace-summary").inner_text()
    assert "0 errors" in summary and re.search(r"probe:? (✔ )?passed", summary, re.I)
    shot(reversed_cell, "labextension-apply-fix-after.png", docs=True)

    assert reversed_cell.locator(".leapp-trace[data-leapp-stale]").count() == 0
    # one undoable edit: Ctrl-Z in the editor restores the original line
    editor = reversed_cell.locator(".cm-content")
    editor.click()
    page.keyboard.press("Control+z")
    page.wait_for_function("i => window.jupyterapp.shell.currentWidget.content.widgets[i].model.sharedModel.source"
                           ".includes('y = x[::-1] * 2')", arg=CELLS["reversed"])
    source = page.evaluate("i => window.jupyterapp.shell.currentWidget.content.widgets[i].model.sharedModel.source",
                           CELLS["reversed"])
    assert source == REVERSED
    # the clean verdict below is the fixed text's: the output says the cell changed since
    reversed_cell.locator(".leapp-trace[data-leapp-stale]").wait_for()
    shot(reversed_cell, "labextension-undone-fix-stale.png")


def cursor_line(page):
    return page.evaluate("() => window.jupyterapp.shell.currentWidget.content.activeCell.editor"
                         ".getCursorPosition().line")


def test_lines_after_blank_lines_and_edits_are_the_traced_lines(page):
    """The trace numbers a cell's lines from its magic line (IPython drops blank lines before it): the marks, a node's
    click and Apply fix were two lines off in a cell pasted after blank lines, and the fix was refused for good. A
    node's click after an edit went to the line the traced text had, not where the editor has it now."""
    index = CELLS["blank"]
    run_cell(page, index)
    blank = cell(page, index)
    drawn = blank.locator(".leapp-trace-graph[data-leapp-state=ready]")
    drawn.wait_for()
    mark = blank.locator(".cm-line.leapp-hazard-line")
    assert mark.count() == 1 and mark.inner_text().startswith("y = x[::-1] * 2")
    drawn.locator("[data-leapp-node]", has_text="np.multiply").click()
    page.wait_for_function("() => window.jupyterapp.shell.currentWidget.content.activeCell.editor"
                           ".getCursorPosition().line === 4")
    # two lines typed under the magic line: the mark moves with its line, and so do a click and the fix
    page.evaluate("() => window.jupyterapp.shell.currentWidget.content.activeCell.editor"
                  ".setCursorPosition({line: 2, column: 0})")
    page.keyboard.press("End")
    page.keyboard.type("\n# a note\n# another", delay=10)
    assert mark.inner_text().startswith("y = x[::-1] * 2")
    drawn.locator("[data-leapp-node]", has_text="np.multiply").click()
    page.wait_for_function("() => window.jupyterapp.shell.currentWidget.content.activeCell.editor"
                           ".getCursorPosition().line === 6")
    count_before = page.evaluate("i => window.jupyterapp.shell.currentWidget.content.widgets[i].model.executionCount",
                                 index)
    blank.locator(".leapp-hazard-row").get_by_role("button", name="Apply fix").click()
    page.wait_for_function("""([i, before]) => {
        const cell = window.jupyterapp.shell.currentWidget.content.widgets[i];
        return cell.model.executionCount > before && cell.node.querySelector('.leapp-trace-summary');
    }""", arg=[index, count_before])
    source = page.evaluate("i => window.jupyterapp.shell.currentWidget.content.widgets[i].model.sharedModel.source",
                           index)
    assert source.startswith("\n\n%%leapp_trace") and "# a note\n# another\n" in source
    assert "y = np.flip(x, axis=0) * 2" in source and "x[::-1]" not in source


def test_apply_fix_refuses_when_the_cell_changed_since_its_trace(page):
    stale = cell(page, CELLS["stale"])
    page.evaluate("""i => {
        const model = window.jupyterapp.shell.currentWidget.content.widgets[i].model.sharedModel;
        model.setSource(model.source.replace('y = x[::-1] * 2', 'y = x[::-1] * 3'));
    }""", CELLS["stale"])
    row = stale.locator(".leapp-hazard-row[data-leapp-kind=reversed-slice]")
    before = output_data(page, CELLS["stale"])
    row.get_by_role("button", name="Apply fix").click()
    status = row.locator(".leapp-fix-status")
    status.wait_for()
    assert "changed since it was traced" in status.inner_text()
    assert "y = x[::-1] * 3" in page.evaluate(
        "i => window.jupyterapp.shell.currentWidget.content.widgets[i].model.sharedModel.source", CELLS["stale"])
    assert output_data(page, CELLS["stale"]) == before  # not re-run


def test_hazard_table_fits_the_output_at_1024_px(page):
    page.set_viewport_size({"width": 1024, "height": 1400})
    try:
        page.evaluate("() => window.jupyterapp.shell.expandLeft()")  # the file browser open, as by default
        wide = cell(page, CELLS["wide"])
        table = wide.locator(".leapp-trace-hazards")
        table.scroll_into_view_if_needed()
        page.wait_for_timeout(300)
        assert wide.locator(".leapp-hazard-row").count() >= 3
        sizes = wide.evaluate("""cell => [
            ...cell.querySelectorAll('.jp-OutputArea-output, .leapp-trace, .jp-OutputArea')]
            .map(e => [e.className, e.scrollWidth, e.clientWidth])""")
        for name, scroll_width, client_width in sizes:
            assert scroll_width <= client_width, f"{name}: {scroll_width} > {client_width}"
        box = table.bounding_box()
        area = wide.locator(".jp-OutputArea-output").first.bounding_box()
        assert box["x"] + box["width"] <= area["x"] + area["width"] + 1
        table.evaluate("t => t.scrollIntoView({block: 'start'})")
        page.screenshot(path=str(SHOTS / "labextension-table-1024.png"))
    finally:
        page.set_viewport_size({"width": 1400, "height": 1400})


def test_a_1000_op_cell_opens_folded(page):
    big = cell(page, CELLS["big"])
    drawn = graph(page, "big")
    assert drawn.get_attribute("data-leapp-folded") == "true"
    ops = int(re.search(r"(\d+) ops", big.locator(".leapp-trace-summary").inner_text()).group(1))
    assert ops >= 1000
    assert drawn.locator("[data-leapp-node]").count() + drawn.locator("[data-leapp-fold]").count() <= 8
    assert drawn.locator("[data-leapp-node][data-leapp-status=baked]").count() == 1
    at_load = float(drawn.get_attribute("data-leapp-render-ms"))  # with the page's WebAssembly start-up
    # time to draw the folded graph: the saved output put back, to the laid-out SVG (WebAssembly warm)
    elapsed = page.evaluate("""async index => {
        const cell = window.jupyterapp.shell.currentWidget.content.widgets[index];
        const saved = cell.model.outputs.get(0).toJSON();
        cell.model.outputs.clear();
        const start = performance.now();
        cell.model.outputs.add(saved);
        while (!cell.node.querySelector('.leapp-trace-graph[data-leapp-state=ready]')) {
            await new Promise(resolve => requestAnimationFrame(resolve));
        }
        const graph = cell.node.querySelector('.leapp-trace-graph');
        return [performance.now() - start, Number(graph.dataset.leappRenderMs)];
    }""", CELLS["big"])
    print(f"\n1,000-op cell: folded graph drawn {elapsed[0]:.0f} ms after its output was added "
          f"(renderer's own figure: {elapsed[1]:.0f} ms); at page load, WebAssembly Graphviz loading included: "
          f"{at_load:.0f} ms")
    shot(big, "labextension-1000-ops.png")
    fold = drawn.locator("[data-leapp-fold]").first
    fold.click()
    page.wait_for_function("g => g.querySelectorAll('[data-leapp-node]').length > 100", arg=drawn.element_handle())


def test_a_hazard_in_a_loop_draws_its_first_vertices_and_counts_the_rest(page):
    """The browser folds the full model itself (up to 3,000 vertices): like the Python renderers, it draws the first
    three vertices of one mark and counts the others in the folded boxes, instead of laying out 400 of them."""
    looped = cell(page, CELLS["looped"])
    looped.scroll_into_view_if_needed()
    drawn = graph(page, "looped")
    assert drawn.get_attribute("data-leapp-folded") == "true"
    assert drawn.locator("[data-leapp-node][data-leapp-kinds~=reversed-slice]").count() == 3
    assert drawn.locator("[data-leapp-node]").count() + drawn.locator("[data-leapp-fold]").count() <= 12
    assert "397 marked" in drawn.locator("[data-leapp-fold]").last.text_content()
    print(f"\n400 reversed slices in a loop: folded graph drawn in {drawn.get_attribute('data-leapp-render-ms')} ms")
    shot(looped, "labextension-hazard-in-a-loop.png")


def test_dark_theme(page):
    page.evaluate("() => window.jupyterapp.commands.execute('apputils:change-theme', {theme: 'JupyterLab Dark'})")
    try:
        page.wait_for_function("() => document.body.dataset.jpThemeLight === 'false'")
        page.wait_for_timeout(500)
        drawn = graph(page, "seed")
        colours = drawn.evaluate("""g => {
            const text = g.querySelector('[data-leapp-node] text');
            const viewport = g.querySelector('.leapp-graph-viewport');
            return [getComputedStyle(text).fill, getComputedStyle(viewport).backgroundColor];
        }""")
        # light ink on a dark background
        ink = [int(c) for c in colours[0][colours[0].index("(") + 1:-1].split(",")[:3]]
        ground = [int(c) for c in colours[1][colours[1].index("(") + 1:-1].split(",")[:3]]
        assert sum(ink) > 500 and sum(ground) < 200, colours
        shot(cell(page, CELLS["seed"]), "labextension-dark.png", docs=True)
    finally:
        page.evaluate("() => window.jupyterapp.commands.execute('apputils:change-theme', {theme: 'JupyterLab Light'})")


def test_apply_fix_from_the_editor_mark_splits_the_node(page):
    """The badge's Apply fix on the seed's np.interp: the split-node rewrite, re-run: two clean nodes."""
    seed = cell(page, CELLS["seed"])
    count_before = page.evaluate("i => window.jupyterapp.shell.currentWidget.content.widgets[i].model.executionCount",
                                 CELLS["seed"])
    badge = seed.locator(".cm-line.leapp-hazard-line[data-leapp-kind=untraced-call] .leapp-hazard-badge")
    badge.get_by_role("button", name="Apply fix").click()
    page.wait_for_function("""([i, before]) => {
        const cell = window.jupyterapp.shell.currentWidget.content.widgets[i];
        return cell.model.executionCount > before && cell.node.querySelector('.leapp-trace-clean');
    }""", arg=[CELLS["seed"], count_before])
    source = page.evaluate("i => window.jupyterapp.shell.currentWidget.content.widgets[i].model.sharedModel.source",
                           CELLS["seed"])
    assert 'annotate.input_tensors("node_post"' in source and source.count("calibrated = np.interp(") == 1
    assert seed.locator(".cm-line.leapp-hazard-line").count() == 0
    drawn = graph(page, "seed")
    titles = drawn.locator("svg g.cluster > text").all_text_contents()
    assert any("node 'node'" in t for t in titles) and any("node 'node_post'" in t for t in titles)
    assert drawn.locator("[data-leapp-node][data-leapp-status=baked]").count() == 0
    shot(seed, "labextension-split-node.png")


def test_no_dialog_or_injected_element(page):
    assert page.dialogs == []
    assert json.dumps(page.dialogs) == "[]"


def test_after_a_kernel_restart_the_controls_say_to_re_run_the_cell(page):
    """(Last in the module: it restarts the kernel.) ipywidgets marks the live controls disconnected after a restart
    (a broken-link icon on each, cut labels), and a click on Probe threw an uncaught 'Cannot send'. The disabled
    controls come back, saying why."""
    seed = cell(page, CELLS["seed"])
    seed.locator(".widget-button", has_text="Probe").wait_for()
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.evaluate("async () => { await window.jupyterapp.shell.currentWidget.sessionContext.session.kernel"
                  ".restart(); }")
    inactive = seed.locator(".leapp-controls-inactive")
    inactive.wait_for()
    assert "the kernel restarted: re-run the cell to probe or export" in inactive.inner_text()
    assert seed.locator(".widget-button").count() == 0 and inactive.locator("button[disabled]").count() == 2
    assert errors == []
