"""The graph model and its renderers: DOT (parsed by Graphviz), SVG, rich text, escaped HTML, mime bundle."""

import html
import json
import re
import shutil

import graphviz
import numpy as np
import pytest
from conftest import SEED_INTERP_CELL, trace

import leapp_notebook as ln
from leapp_notebook import render
from leapp_notebook.render.look import LOOKS, PROBE_FAILED, SELECTED

HAS_DOT = shutil.which("dot") is not None
needs_dot = pytest.mark.skipif(not HAS_DOT, reason="Graphviz `dot` is not installed")
PAYLOAD = "<img src=x onerror=alert(1)>"


@pytest.fixture
def seed_trace(seed_namespace):
    def make(profile):
        return ln.trace_cell(SEED_INTERP_CELL, dict(seed_namespace), profile=profile)
    return make


def vertex(model, name, node=0):
    return next(v for v in model["nodes"][node]["vertices"] if v["name"] == name)


def dot_svg(source):
    return graphviz.Source(source).pipe(format="svg", encoding="utf-8")


# ------------------------------------------------------------------------------------------ model

def test_seed_model_marks_the_baked_interp_constant_at_its_line(seed_trace):
    model = render.graph_model(seed_trace("leapp"))
    assert model["schema"] == render.SCHEMA and model["profile"] == "leapp" and model["ok"] is False
    assert model["summary"] == {"nodes": 1, "ops": 3, "errors": 1, "warnings": 0, "probe": None,
                                "text": "1 node · 3 ops · ✖ 1 error · ⚠ 0 warnings · probe: not run"}
    assert model["verdict"] == {"state": "error", "text": "not exportable as is: 1 error hazard"}
    baked = vertex(model, "baked0")
    assert baked["role"] == "constant" and baked["constant"] == "baked" and baked["category"] == "baked"
    assert baked["line"] == 3 and "np.interp" in baked["code"] and baked["origin"] == "np.interp at line 3"
    assert baked["preview"] == pytest.approx([0.4, 1.6, 5.2, 8.4])
    hazard = model["hazards"][baked["hazards"][0]]
    assert (hazard["kind"], hazard["severity"], hazard["line"]) == ("untraced-call", "error", 3)
    assert render.hazard_vertices(model, hazard["id"]) == ["0/baked0"]


def test_inputs_and_outputs_are_their_own_vertices_and_edges_carry_shapes(seed_trace):
    model = render.graph_model(seed_trace("leapp"))
    node = model["nodes"][0]
    assert vertex(model, "state")["role"] == "input" and vertex(model, "result")["role"] == "output"
    assert [s["name"] for s in node["inputs"]] == ["state"] and node["outputs"][0]["dtype"] == "float64"
    edges = {(e["source"], e["target"]): e for e in node["edges"]}
    assert edges[("0/state", "0/mul")]["shape"] == [4] and edges[("0/state", "0/mul")]["kind"] == "data"
    assert edges[("0/add", "0/out:result")]["dtype"] == "float64"
    # the baked constant was computed from the input outside the graph: a dashed "not recorded" edge
    assert edges[("0/state", "0/baked0")]["kind"] == "not-recorded"
    add = vertex(model, "add")
    assert (add["numpy"], add["torch"], add["shape"], add["dtype"], add["line"]) == \
        ("np.add", "torch.add", [4], "float64", 4)


def test_full_profile_marks_the_interp_as_a_leapp_portability_warning(seed_trace):
    model = render.graph_model(seed_trace("full"))
    interp = vertex(model, "interp")
    assert interp["category"] == "portability" and interp["torch"] == "ln.interp"
    assert model["hazards"][interp["hazards"][0]]["severity"] == "warning"
    assert {vertex(model, "const0")["category"], vertex(model, "const1")["category"]} == {"constant"}
    assert [e["category"] for e in model["legend"]] == ["input", "output", "op", "constant", "portability"]


def test_groups_are_runs_of_one_line_or_one_helper_call(seed_namespace):
    source = ("def norm(v):\n    c = v - np.mean(v)\n    return c / 2.0\n"
              "a = norm(x)\nb = x * 3.0\ny = norm(a + b)\n")
    model = render.graph_model(trace(source, x=np.arange(4, dtype=np.float32)))
    labels = [g["label"] for g in model["nodes"][0]["groups"]]
    assert labels == ["norm() · lines 2–3", "line 5: b = x * 3.0", "line 6: y = norm(a + b)",
                      "norm() · lines 2–3"]
    first = model["nodes"][0]["groups"][0]
    assert first["ops"] == 3 and first["summary"] == "np.mean, np.subtract, np.divide"


@pytest.mark.parametrize("profile,severity", [("leapp", "error"), ("full", "warning")])
def test_reversed_slices_are_purple_and_broken_chains_orange(profile, severity):
    t = trace("r = x[::-1]\nc = x[0]\ny = r * c", profile=profile, x=np.arange(4, dtype=np.float32))
    model = render.graph_model(t)
    categories = {model["hazards"][i]["kind"]: v["category"] for v in model["nodes"][0]["vertices"]
                  for i in v["hazards"]}
    broken = "baked" if profile == "leapp" else "broken"  # LEAPP bakes the scalar; full keeps a 0-d value
    assert categories == {"reversed-slice": "reversed", "broken-chain": broken}
    assert {h["severity"] for h in model["hazards"]} == {severity}


def test_model_is_json_and_every_renderer_reads_only_the_model(seed_trace):
    t = seed_trace("leapp")
    t.probe(n=4, seed=0)
    model = json.loads(json.dumps(render.graph_model(t), allow_nan=False))
    assert render.to_dot(model) == render.to_dot(t)
    assert render.to_text(model) == render.to_text(t)
    assert render.to_html(model) == render.to_html(t)


def test_probe_marks_the_failing_output_and_the_constant_it_exposed(seed_trace):
    t = seed_trace("leapp")
    t.probe(n=6, seed=1)
    model = render.graph_model(t)
    assert model["summary"]["probe"] == "failed"
    result = vertex(model, "result")["probe"]
    assert result["passed"] is False and result["baked"] is True and result["mismatches"] == 6
    assert vertex(model, "baked0")["probe_baked"] == ["result"]
    dot = render.to_dot(model)
    output_line = next(line for line in dot.splitlines() if "OUT result" in line)
    assert f'color="{PROBE_FAILED}"' in output_line and "PROBE FAILED" in output_line


def test_probe_pass_is_shown_on_the_output(seed_trace):
    t = seed_trace("full")
    t.probe(n=4, seed=1)
    model = render.graph_model(t)
    assert model["summary"]["probe"] == "passed" and vertex(model, "result")["probe"]["passed"] is True
    assert "✔ probe passed" in render.to_dot(model)


# ------------------------------------------------------------------------------------------ DOT / SVG

@needs_dot
@pytest.mark.parametrize("profile", ["leapp", "full"])
def test_dot_of_the_seed_parses_with_graphviz(seed_trace, profile):
    svg = dot_svg(render.to_dot(seed_trace(profile)))
    assert svg.lstrip().startswith("<?xml") and "<svg" in svg


def test_dot_draws_looks_with_a_cue_besides_colour(seed_trace):
    leapp_dot = render.to_dot(seed_trace("leapp"))
    baked_line = next(line for line in leapp_dot.splitlines() if "BAKED baked0" in line)
    assert f'fillcolor="{LOOKS["baked"].fill}"' in baked_line and "diagonals" in baked_line
    assert "✖ BAKED" in baked_line and 'penwidth="2.5"' in baked_line and "line 3: calibrated" in baked_line
    assert re.search(r"v\d+ -> v\d+ \[style=dashed, .*not recorded", leapp_dot)
    assert "subgraph cluster_" in leapp_dot and "Legend" in leapp_dot and 'label=" (4,)"' in leapp_dot
    full_dot = render.to_dot(seed_trace("full"))
    interp_line = next(line for line in full_dot.splitlines() if "→ ln.interp" in line)
    assert "dashed" in interp_line and "⚠" in interp_line and LOOKS["portability"].fill in interp_line


def test_highlight_emphasises_the_selected_hazards_vertices(seed_trace):
    model = render.graph_model(seed_trace("leapp"))
    dot = render.to_dot(model, highlight=render.hazard_vertices(model, 0))
    baked_line = next(line for line in dot.splitlines() if "BAKED baked0" in line)
    assert f'color="{SELECTED}"' in baked_line
    assert SELECTED not in render.to_dot(model)


@needs_dot
def test_to_svg_gives_an_svg_document_and_none_without_dot(seed_trace, monkeypatch):
    t = seed_trace("leapp")
    svg = render.to_svg(t)
    assert svg is not None and "<svg" in svg and "BAKED baked0" in svg
    fragment = render.svg_fragment(svg)
    assert fragment.startswith("<svg") and "<!--" not in fragment
    monkeypatch.setenv("PATH", "")
    assert render.to_svg(t) is None


def big_cell(steps):
    lines = ["def smooth(v):", "    return np.tanh(v * 0.5) + v / 3.0", "h = x * 1.0"]
    for i in range(steps):
        lines.append("h = h + np.interp(h, CIN, COUT) * 0.0" if i == steps // 2 else
                     "h = smooth(h)" if i % 10 == 9 else f"h = np.maximum(h * 0.{1 + i % 7} - 0.25, h / 2.0)")
    return "\n".join(lines + ["y = h"])


def test_large_graphs_collapse_unmarked_runs_and_keep_hazards_visible():
    t = ln.trace_cell(big_cell(100), {"np": np, "x": np.linspace(-1, 1, 8, dtype=np.float32),
                                      "CIN": np.array([-1.0, 1.0]), "COUT": np.array([0.0, 1.0])},
                      inputs=["x"], outputs=["y"])
    model = render.graph_model(t)
    assert model["summary"]["ops"] == 400 and len(model["nodes"][0]["groups"]) > 90
    collapsed = render.to_dot(model)
    assert collapsed.count("->") < 12 and "BAKED baked0" in collapsed
    assert re.search(r"lines 3–5\d \(with smooth\(\)\)", collapsed) and "ops</B>" in collapsed
    expanded = render.to_dot(model, collapse=False)
    assert expanded.count("->") > 400
    if HAS_DOT:
        assert "BAKED baked0" in dot_svg(collapsed)
    text = render.to_text(model)
    assert "▸ " in text and "unmarked ops" in text and "baked0" in text and len(text.splitlines()) < 60


def test_several_nodes_are_separate_clusters_with_their_own_probe_marks():
    source = ('a = annotate.input_tensors("pre", {"x": x})\n'
              'annotate.output_tensors("pre", {"b": np.interp(a, [0, 1], [0, 5]) + a})\n'
              'c = annotate.input_tensors("post", {"b": b_in})\n'
              'annotate.output_tensors("post", {"d": c + 1.0})\n')
    t = ln.trace_cell(source, {"np": np, "x": np.linspace(0, 1, 3).astype(np.float32),
                               "b_in": np.ones(3, np.float32)})
    t.probe(n=5, seed=0)
    model = render.graph_model(t)
    assert [n["name"] for n in model["nodes"]] == ["pre", "post"]
    assert vertex(model, "b", node=0)["id"] == "0/out:b" and vertex(model, "d", node=1)["id"] == "1/out:d"
    assert set(model["probe"]["outputs"]) == {"pre/b", "post/d"}
    assert vertex(model, "b", node=0)["probe"]["passed"] is False
    assert vertex(model, "d", node=1)["probe"]["passed"] is True
    assert vertex(model, "baked0", node=0)["probe_baked"] == ["b"]
    dot = render.to_dot(model)
    assert "subgraph cluster_n0" in dot and "subgraph cluster_n1" in dot


# ------------------------------------------------------------------------------------------ text

def test_text_has_summary_hazard_table_and_ops_without_ansi(seed_trace):
    t = seed_trace("leapp")
    text = str(t)
    assert text == render.to_text(t) and "\x1b[" not in text
    assert "1 node · 3 ops · ✖ 1 error · ⚠ 0 warnings · probe: not run" in text
    assert "untraced-call" in text and "calibrated = np.interp(state, CALIB_IN, CALIB_OUT)" in text
    assert "fix:" in text and "split the node" in text
    assert "add: np.add → torch.add  (4,) float64" in text and "✖ BAKED baked0" in text
    assert "\x1b[" in render.to_text(t, color=True)


# ------------------------------------------------------------------------------------------ HTML and escaping

def payload_trace(profile="leapp"):
    source = (f'x = annotate.input_tensors("{PAYLOAD}", {{"x": raw}})\n'
              f'y = np.interp(x, CIN, COUT)  # {PAYLOAD} "quoted" & \'single\' \\N\n'
              f'annotate.output_tensors("{PAYLOAD}", {{"y": y + x}})\n')
    namespace = {"np": np, "raw": np.array([0.2, 0.6], np.float32), "CIN": np.array([0.0, 1.0]),
                 "COUT": np.array([0.0, 5.0])}
    return ln.trace_cell(source, namespace, profile=profile)


def test_html_escapes_every_user_string(seed_trace):
    t = payload_trace()
    assert t.nodes[PAYLOAD].name == PAYLOAD and PAYLOAD in t.hazards[0].code
    page = render.to_html(t)
    assert PAYLOAD not in page and "<img" not in page
    assert html.escape(PAYLOAD) in page and "&quot;quoted&quot; &amp; &#x27;single&#x27;" in page
    assert "untraced-call" in page and "<details" in page


@needs_dot
def test_dot_and_svg_keep_user_strings_as_text():
    t = payload_trace("full")
    svg = render.to_svg(t)
    assert "<img" not in svg and PAYLOAD not in svg and "onerror=alert(1)&gt;" in svg
    bundle = render.mimebundle(t)
    assert "<img" not in bundle["text/html"] and "<img" not in bundle["image/svg+xml"]


def test_html_without_svg_lists_ops_in_collapsible_groups_and_a_legend(seed_trace):
    page = render.to_html(seed_trace("leapp"))
    assert page.count("<details") >= 3 and "line 4: result = state * 0.1 + calibrated" in page
    assert "<details class=\"leapp-group\" style=\"margin-left:12px\" open>" in page  # the baked line is open
    assert "legend" in page and LOOKS["baked"].fill in page


# ------------------------------------------------------------------------------------------ mime bundle

def test_mimebundle_offers_the_model_text_html_and_svg(seed_trace):
    t = seed_trace("leapp")
    bundle = t._repr_mimebundle_()
    assert render.MIME_TYPE == "application/vnd.leapp.trace+json"
    assert bundle[render.MIME_TYPE] == render.graph_model(t)
    json.dumps(bundle[render.MIME_TYPE], allow_nan=False)
    assert "untraced-call" in bundle["text/plain"] and "\x1b[" not in bundle["text/plain"]
    assert "class=\"leapp-trace\"" in bundle["text/html"]
    if HAS_DOT:
        assert bundle["image/svg+xml"].lstrip().startswith("<?xml")
        assert "<svg" in bundle["text/html"] and "<?xml" not in bundle["text/html"]
    else:
        assert "image/svg+xml" not in bundle
    assert t.to_dot() == render.to_dot(t)
    without = render.mimebundle(t, svg=False)
    assert "image/svg+xml" not in without and "<svg" not in without["text/html"]


def test_a_started_bundle_lays_out_while_the_caller_works_and_a_failing_dot_leaves_the_svg_out(
        seed_trace, monkeypatch):
    """``start_mimebundle`` runs ``dot`` in a thread of its own, started before it returns; its finishing
    function gives what ``mimebundle`` gives. A ``dot`` that fails drops the SVG, as before the layout moved to
    a thread; any other error reaches the caller, not the thread's."""
    import threading

    from leapp_notebook.render import mime

    t = seed_trace("leapp")
    started, release = threading.Event(), threading.Event()
    draw = mime.to_svg

    def slow_svg(model):
        started.set()
        release.wait(30)
        return draw(model)

    monkeypatch.setattr(mime, "to_svg", slow_svg)
    finish = render.start_mimebundle(t)
    assert started.wait(30), "the layout starts before start_mimebundle returns"
    release.set()
    assert finish() == render.mimebundle(t)

    def failing(model):
        raise graphviz.CalledProcessError(1, ["dot"], stderr="Error: syntax error")

    monkeypatch.setattr(mime, "to_svg", failing)
    bundle = render.mimebundle(t)
    assert "image/svg+xml" not in bundle and "<svg" not in bundle["text/html"]
    assert "untraced-call" in bundle["text/plain"] and "untraced-call" in bundle["text/html"]

    def broken(model):
        raise KeyError("vertices")

    monkeypatch.setattr(mime, "to_svg", broken)
    with pytest.raises(KeyError, match="vertices"):
        render.mimebundle(t)


@needs_dot
def test_control_characters_and_backslashes_in_code_do_not_break_graphviz():
    t = trace("y = np.interp(x, CIN, COUT)  # bell \x01 \x07 and \\N \\l\n", x=np.ones(2, np.float32),
              CIN=np.array([0.0, 1.0]), COUT=np.array([0.0, 1.0]))
    svg = render.to_svg(t)
    assert "\x01" not in svg and "\ufffd" in svg and "\\N \\l" in render.to_html(t)


# ------------------------------------------------------------------------------------------ verdict and words

def test_verdict_is_error_while_an_error_hazard_stands_then_names_the_failed_probe(seed_trace):
    t = seed_trace("leapp")
    t.probe(n=4, seed=0)
    model = render.graph_model(t)
    assert model["verdict"] == {"state": "error",
                                "text": "not exportable as is: 1 error hazard, the probe failed"}
    assert model["summary"]["text"].endswith("probe: ✖ FAILED")


def test_verdict_is_warning_with_warnings_and_ok_once_a_clean_probe_passed(seed_trace):
    full = seed_trace("full")
    assert render.graph_model(full)["verdict"] == {
        "state": "warning", "text": "no error hazards; 1 warning to read; probe to confirm"}
    full.probe(n=3, seed=0)
    assert render.graph_model(full)["verdict"] == {"state": "warning", "text": "ready to export; 1 warning to read"}
    clean = trace("y = x * 2.0", x=np.ones(3, np.float32))
    assert render.graph_model(clean)["verdict"] == {"state": "ok", "text": "no hazards; probe to confirm"}
    clean.probe(n=3, seed=0)
    assert render.graph_model(clean)["verdict"] == {"state": "ok",
                                                    "text": "ready to export: no hazards, the probe passed"}


def test_every_renderer_says_the_models_verdict_and_summary_words(seed_trace):
    model = render.graph_model(seed_trace("leapp"))
    model["verdict"] = {"state": "warning", "text": "words only the model holds"}
    model["summary"]["text"] = "summary only the model holds"
    text, page = render.to_text(model), render.to_html(model)
    assert "⚠ words only the model holds" in text and "summary only the model holds" in text
    assert "⚠ words only the model holds" in page and "summary only the model holds" in page
    assert 'data-leapp-verdict="warning"' in page


def test_a_model_saved_without_verdict_gets_one_when_rendered(seed_trace):
    model = render.graph_model(seed_trace("leapp"))
    del model["verdict"], model["summary"]["text"]
    assert "✖ not exportable as is: 1 error hazard" in render.to_text(model, width=200)


def test_export_entry_is_shown_by_text_and_html(seed_trace):
    model = render.graph_model(seed_trace("leapp"))
    model["export"] = render.export_entry(files=["out/node.pt", "out/node.yaml"])
    assert model["export"] == {"state": "written", "files": ["out/node.pt", "out/node.yaml"],
                               "message": "exported 2 files"}
    assert "✔ exported 2 files: out/node.pt, out/node.yaml" in render.to_text(model)
    assert 'data-leapp-export="written"' in render.to_html(model)
    refused = render.export_entry(error=ln.ExportBlocked("export refused: 1 error hazard stands"))
    assert refused == {"state": "refused", "files": [], "message": "export refused: 1 error hazard stands"}
    failed = render.export_entry(error=OSError(f"{PAYLOAD} read-only"))
    assert failed["state"] == "failed" and failed["message"] == f"export failed: OSError: {PAYLOAD} read-only"
    model["export"] = failed
    page = render.to_html(model)
    assert PAYLOAD not in page and html.escape(PAYLOAD) in page


def test_rich_consoles_lay_the_trace_out_at_their_own_width(seed_trace):
    from rich.console import Console

    t = seed_trace("leapp")
    widths = {}
    for width in (60, 160):
        console = Console(width=width, record=True, color_system=None, force_jupyter=False)
        console.print(t)
        text = console.export_text()
        widths[width] = max(len(line) for line in text.splitlines())
        assert "untraced-call" in text and "calibrated" in text
    assert widths[60] <= 60 < widths[160] <= 160
    assert str(t) == render.to_text(t)


@pytest.mark.parametrize("kind, category, tag", [("training-mode", "training", "TRAINING MODE"),
                                                 ("nondeterministic", "random", "NONDETERMINISTIC"),
                                                 ("data-dependent-branch", "branch", "BRANCH")])
def test_torch_hazard_kinds_have_their_own_look_and_legend_entry(seed_trace, kind, category, tag):
    t = seed_trace("full")
    node = t.nodes["node"]
    node.hazards.append(ln.Hazard(kind, "error", "node", 4, "result = state * 0.1 + calibrated", "m", "f",
                                  graph_nodes=["add"]))
    model = render.graph_model(t)
    assert vertex(model, "add")["category"] == category
    assert LOOKS[category].to_dict() in model["legend"]
    assert tag in render.to_dot(model) and LOOKS[category].fill in render.to_html(model)


# ------------------------------------------------------------------------------------------ width in a browser

LONG_CELL = ('y = np.interp(x, CALIBRATION_POINTS_OF_THE_FRONT_LEFT_WHEEL_SENSOR_AS_MEASURED_IN_THE_LAB, COUT)'
             ' + x[0:1] * 0.0  # a comment_that_is_one_long_word_without_any_space_to_break_at_' + "x" * 60 + "\n")


@pytest.mark.parametrize("output_width", [620, 1000])
def test_hazard_table_fits_a_1024px_output_without_sideways_scroll(output_width):
    """620 px is JupyterLab's output area at a 1024 px window with the side bar open; 1000 px without it."""
    sync_api = pytest.importorskip("playwright.sync_api")
    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    if not shutil.os.path.exists(chromium):
        pytest.skip("Chromium is not installed")
    t = trace(LONG_CELL, x=np.linspace(0, 1, 4).astype(np.float32),
              CALIBRATION_POINTS_OF_THE_FRONT_LEFT_WHEEL_SENSOR_AS_MEASURED_IN_THE_LAB=np.array([0.0, 1.0]),
              COUT=np.array([0.0, 3.0]))
    t.nodes["node"].hazards[0].fix += " " + "a_fix_path/" * 30
    page_html = render.to_html(t, svg=None)
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, headless=True,
                                             args=["--no-sandbox", "--disable-gpu"])
        try:
            page = browser.new_page(viewport={"width": 1024, "height": 800})
            page.set_content(f"<!doctype html><meta charset='utf-8'><body style='margin:0'>"
                             f"<div id='out' style='width:{output_width}px;overflow:auto'>{page_html}</div>")
            measured = page.evaluate("""() => {
                const out = document.getElementById('out');
                const table = out.querySelector('table.leapp-hazards');
                const cells = [...table.querySelectorAll('td')];
                return {scroll: out.scrollWidth, client: out.clientWidth,
                        table: table.getBoundingClientRect().width,
                        overflowing: cells.filter(c => c.scrollWidth > c.clientWidth + 1).length,
                        rows: table.querySelectorAll('tr.leapp-hazard-line').length};
            }""")
        finally:
            browser.close()
    assert measured["rows"] >= 1
    assert measured["scroll"] <= measured["client"], measured
    assert measured["table"] <= output_width and measured["overflowing"] == 0, measured


def test_a_cast_the_tracer_inserted_says_it_is_a_cast_not_the_call_it_serves():
    t = trace("y = x + np.ones(2)\nz = y.astype(np.float32)\n", x=np.ones(2, np.float32))
    model = render.graph_model(t)
    operand, astype = vertex(model, "to"), vertex(model, "to_1")
    assert (operand["numpy"], operand["cast"]) == ("np.add", True)
    assert (astype["numpy"], astype["cast"]) == ("ndarray.astype", False), "the user's own cast is the call"
    text = render.to_text(t)
    assert "to: cast to float64 → Tensor.to (keeps NumPy's dtypes in np.add)" in text
    assert "to: np.add" not in text and "to_1: ndarray.astype → Tensor.to" in text
    assert "<B>cast to float64</B>" in render.to_dot(t) and "<b>cast to float64</b>" in render.to_html(t)
    assert model["nodes"][0]["groups"][0]["summary"] == "cast to float64, np.add"


def test_the_graph_model_is_built_with_the_cyclic_collector_off_and_restores_it(seed_trace, monkeypatch):
    """A model holds a few dozen acyclic dicts and lists per vertex: the collector's passes over them made the model's
    per-op cost grow with the cell (13.6 us/op at 2,000 ops, 28 at 20,000). It is off while the model is built and
    comes back as it was, after an error too."""
    import gc

    from leapp_notebook.render import model as model_module

    trace = seed_trace("leapp")
    seen = []
    node_model = model_module._node_model

    def watched(*args, **kwargs):
        seen.append(gc.isenabled())
        return node_model(*args, **kwargs)

    monkeypatch.setattr(model_module, "_node_model", watched)
    assert gc.isenabled()
    render.graph_model(trace)
    assert seen == [False] and gc.isenabled()
    gc.disable()
    try:
        render.graph_model(trace)
        assert not gc.isenabled()  # a caller that turned it off keeps it off
    finally:
        gc.enable()

    def broken(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(model_module, "_node_model", broken)
    with pytest.raises(RuntimeError, match="boom"):
        render.graph_model(trace)
    assert gc.isenabled()
