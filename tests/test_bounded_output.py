"""Output a notebook can carry: large traces are compacted in the mime bundle, control characters from the
cell never reach a terminal, and characters that cannot be encoded are refused or replaced, never raised
while the output is sent."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from conftest import SEED_INTERP_CELL

import leapp_notebook as ln
from leapp_notebook.render import model as model_module
from leapp_notebook.render.model import COMPACT_ABOVE, MODEL_COMPACT_ABOVE, compact, graph_model, vertex_count

LOOP = ("h = x\nfor i in range(STEPS):\n    h = np.tanh(h * 0.5 + 1.0) - np.sin(h)\n"
        "    h = h[::-1] if i == STEPS // 2 else h\ny = h\n")


def bundle_sizes(bundle):
    return {key: len(value if isinstance(value, str) else json.dumps(value)) for key, value in bundle.items()}


def test_a_large_trace_is_compacted_and_its_bundle_stays_small():
    trace = ln.trace_cell(LOOP, {"np": np, "x": np.ones((4, 4)), "STEPS": 800}, inputs=["x"], outputs=["y"],
                          profile="full")
    full = graph_model(trace)
    assert vertex_count(full) > MODEL_COMPACT_ABOVE > COMPACT_ABOVE
    bundle = trace._repr_mimebundle_()
    model = bundle["application/vnd.leapp.trace+json"]
    assert model["compacted"] == {"vertices": vertex_count(full), "shown": vertex_count(model)}
    assert vertex_count(model) < 100
    assert sum(bundle_sizes(bundle).values()) < 2_000_000
    # the reversed slice stays visible, with the hazard that marks it
    (hazard,) = model["hazards"]
    marked = [v for node in model["nodes"] for v in node["vertices"] if hazard["id"] in v["hazards"]]
    assert marked and all(v["role"] == "op" for v in marked)
    # every edge joins vertices that exist in the compacted model
    ids = {v["id"] for node in model["nodes"] for v in node["vertices"]}
    assert all(e["source"] in ids and e["target"] in ids for node in model["nodes"] for e in node["edges"])
    summaries = [v for node in model["nodes"] for v in node["vertices"] if v["role"] == "collapsed"]
    assert sum(v["hidden"] for v in summaries) + vertex_count(model) - len(summaries) == vertex_count(full)


def _policy() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 2)).eval()


SEED_NS = {"raw_state": np.array([0.1, 0.4, 0.7, 0.9], np.float32), "CALIB_IN": np.array([0.0, 0.5, 1.0]),
           "CALIB_OUT": np.array([0.0, 2.0, 10.0])}
HELPERS = ("def smooth(v):\n    return np.tanh(v * 0.5) + v / 3.0\n"
           "h = x * 1.0\n" + "".join("h = smooth(h)\n" if i % 4 == 3 else
                                     f"h = np.maximum(h * 0.{1 + i % 7} - 0.25, h / 2.0)\n" for i in range(30))
           + "h = h + np.interp(h, CIN, COUT) * 0.0\n" + "h = smooth(h) + 1.0\ny = h\n")
TWO_NODES = ('a = annotate.input_tensors("pre", {"x": x})\n'
             'annotate.output_tensors("pre", {"b": np.interp(a, [0, 1], [0, 5]) + a, "c": a * 2.0})\n'
             'c = annotate.input_tensors("post", {"b": b_in})\n'
             'annotate.output_tensors("post", {"d": c + 1.0})\n')
POLICY = ('obs = annotate.input_tensors("node", {"obs": raw_obs})\n'
          'normed = (obs - MEAN) / STD\n'
          't = torch.from_numpy(normed.astype(np.float32))\n'
          'with torch.no_grad():\n    action = policy(t)\n'
          'scaled = torch.tanh(action) * 2.0\n'
          'annotate.output_tensors("node", {"action": scaled.numpy()})\n')
CASES = {
    # the seed's np.interp: a baked constant, and after a probe the output it fails and the constant it exposed
    "seed": (SEED_INTERP_CELL, SEED_NS, {}, 0),
    "seed-full-probed": (SEED_INTERP_CELL, SEED_NS, {"profile": "full"}, 4),
    "seed-probed": (SEED_INTERP_CELL, SEED_NS, {}, 4),
    # a reversed slice inside a loop: one marked op among hundreds
    "loop": (LOOP, {"x": np.ones((4, 4)), "STEPS": 60}, {"inputs": ["x"], "outputs": ["y"], "profile": "full"}, 0),
    # helper calls between lines, spans of groups folded with their helpers named
    "helpers": (HELPERS, {"x": np.linspace(-1, 1, 8, dtype=np.float32), "CIN": np.array([-1.0, 1.0]),
                          "COUT": np.array([0.0, 1.0])}, {"inputs": ["x"], "outputs": ["y"]}, 3),
    # a marked op with one unmarked op on its line (the fold shows that group whole), a genuine constant
    "one-hidden": ("a = x * 3.0 + 1.0\nb = a[::-1] * 2.0\nc = b + np.array([1.0, 2.0, 3.0])\ny = c - 1.0\n",
                   {"x": np.ones(3)}, {"inputs": ["x"], "outputs": ["y"]}, 0),
    # a hazard on a line a loop runs: a marked vertex on every pass, a baked constant on every pass, a module per pass
    "marked-loop": ("h = x\nfor i in range(40):\n    h = np.tanh(h * 0.5) - h[::-1]\n"
                    "    h = h + np.interp(h, CIN, COUT) * 0.0\ny = h\n",
                    {"x": np.ones(4), "CIN": np.array([-1.0, 1.0]), "COUT": np.array([0.0, 1.0])},
                    {"inputs": ["x"], "outputs": ["y"]}, 2),
    "module-loop": ('obs = annotate.input_tensors("node", {"obs": raw_obs})\n'
                    't = torch.from_numpy(obs.astype(np.float32))\n'
                    'for i in range(12):\n    t = torch.tanh(policy(t.repeat(2)[:4]) * 0.5).repeat(2)\n'
                    'annotate.output_tensors("node", {"a": t.detach().numpy()})\n',
                    {"torch": torch, "policy": torch.nn.Linear(4, 4).eval(), "raw_obs": np.linspace(0.1, 0.9, 4)},
                    {}, 0),
    # a tracer-inserted cast, a broken chain
    "cast": ("y0 = x + np.ones(2)\nz = y0.astype(np.float32)\ny = z * float(z[0])\n", {"x": np.ones(2, np.float32)},
             {"inputs": ["x"], "outputs": ["y"]}, 2),
    "two-nodes": (TWO_NODES, {"x": np.linspace(0, 1, 3).astype(np.float32), "b_in": np.ones(3, np.float32)}, {}, 5),
    "policy": (POLICY, {"torch": torch, "policy": _policy(), "raw_obs": np.linspace(0.1, 0.9, 4),
                        "MEAN": np.full(4, 0.5), "STD": np.full(4, 0.2)}, {}, 3),
}


def _traced(case):
    source, namespace, options, probes = CASES[case]
    trace = ln.trace_cell(source, {"np": np, **namespace}, **options)
    if probes:
        trace.probe(n=probes, seed=0)
    return trace


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_model_built_compacted_is_the_full_models_compaction(case):
    """``graph_model(trace, compact_above=n)`` makes the compacted model in one walk of the fx graphs, never the full
    model: it must equal ``compact(graph_model(trace))`` byte for byte, on every kind of vertex, fold and edge."""
    trace = _traced(case)
    full = graph_model(trace)
    assert json.dumps(graph_model(trace, compact_above=0)) == json.dumps(compact(full))
    assert graph_model(trace, compact_above=vertex_count(full)) == full  # not above it: the full model
    assert graph_model(trace, compact_above=vertex_count(full) - 1)["compacted"]["vertices"] == vertex_count(full)


def test_the_compacted_path_makes_vertices_only_for_what_it_shows(monkeypatch):
    made = []
    vertex = model_module._vertex

    def counted(*args, **kwargs):
        made.append(args[2].name)
        return vertex(*args, **kwargs)

    monkeypatch.setattr(model_module, "_vertex", counted)
    trace = ln.trace_cell(LOOP, {"np": np, "x": np.ones((4, 4)), "STEPS": 800}, inputs=["x"], outputs=["y"],
                          profile="full")
    model = trace._repr_mimebundle_()["application/vnd.leapp.trace+json"]
    assert model["compacted"]["vertices"] > 3000
    # the input, the reversed slice's op and the output (and the ops on its line the fold shows), not 4,000
    assert len(made) <= vertex_count(model) <= 10, made
    assert compact(model) is model  # compacting a compacted model changes nothing


@pytest.mark.parametrize("build", ["as built", "compacted after"])
def test_a_hazard_in_a_long_loop_shows_its_first_vertices_and_counts_the_rest(build):
    """A reversed slice on a line a loop runs 2,000 times marks 2,000 vertices: the compacted model shows the first
    MARKED_SHOWN and folds the rest into collapsed vertices that say how many marked vertices they hold; the bundle
    stays small (before: 2,000 vertices shown, 10 MB at 1,000 passes, minutes of drawing at 5,000)."""
    cell = "h = x\nfor i in range(STEPS):\n    h = np.tanh(h * 0.5 + 1.0) - np.sin(h)\n    h = h[::-1]\ny = h\n"
    trace = ln.trace_cell(cell, {"np": np, "x": np.ones((4, 4)), "STEPS": 2000}, inputs=["x"], outputs=["y"])
    full = graph_model(trace)
    model = graph_model(trace, compact_above=MODEL_COMPACT_ABOVE) if build == "as built" else compact(full)
    (hazard,) = model["hazards"]
    assert hazard["line"] == 4
    vertices = [v for node in model["nodes"] for v in node["vertices"]]
    marked = [v for v in vertices if hazard["id"] in v["hazards"]]
    assert [v["id"] for v in marked] == [v["id"] for v in vertices if v["numpy"] == "x[::-1]"]
    assert len(marked) == model_module.MARKED_SHOWN
    assert [v["name"] for v in marked] == [v["name"] for v in full["nodes"][0]["vertices"]
                                           if hazard["id"] in v["hazards"]][:model_module.MARKED_SHOWN]
    folded = [v for v in vertices if v["role"] == "collapsed"]
    assert sum(v["marked"] for v in folded) == 2000 - model_module.MARKED_SHOWN
    assert any(v["name"].endswith(f" · {v['marked']} marked") for v in folded if v["marked"])
    assert len(vertices) < 20
    # the groups still say they hold marked vertices, with the hazard: the hazard table and the live graph read them
    assert sum(g["marked"] for g in model["nodes"][0]["groups"]) >= 2
    assert all(g["hazards"] == [hazard["id"]] for g in model["nodes"][0]["groups"] if g["marked"])
    if build == "as built":
        bundle = trace._repr_mimebundle_()
        assert sum(bundle_sizes(bundle).values()) < 200_000
        assert bundle["application/vnd.leapp.trace+json"] == model


def test_text_and_dot_of_a_hazard_in_a_long_loop_show_its_first_vertices_and_count_the_rest():
    """print(trace), the CLI and to_dot/to_svg fold a large full model themselves: the same budget per mark."""
    from leapp_notebook import render

    cell = "h = x\nfor i in range(STEPS):\n    h = np.tanh(h * 0.5 + 1.0) - np.sin(h)\n    h = h[::-1]\ny = h\n"
    trace = ln.trace_cell(cell, {"np": np, "x": np.ones((4, 4)), "STEPS": 900}, inputs=["x"], outputs=["y"])
    shown = model_module.MARKED_SHOWN
    text = str(trace)
    assert text.count("x[::-1] → getitem") == shown and len(text.splitlines()) < 60
    assert f"5382 ops ({900 - shown} marked, like those above)" in text
    dot = render.to_dot(trace)
    drawn = [line for line in dot.splitlines() if "x[::-1]" in line]  # one line per DOT vertex
    assert len(drawn) == shown and f"· {900 - shown} marked" in dot
    # the hazard's vertices the widget highlights are drawn, whatever the budget
    highlighted = [v["id"] for v in graph_model(trace)["nodes"][0]["vertices"] if v["numpy"] == "x[::-1]"][-2:]
    dot = render.to_dot(trace, highlight=highlighted)
    assert len([line for line in dot.splitlines() if "x[::-1]" in line]) == shown + 2


FOLDED = ["loop", "helpers", "marked-loop"]  # CASES the text and DOT renderers fold themselves (above 120 vertices)


@pytest.mark.parametrize("case", FOLDED + ["module-loop"])
def test_text_and_dot_draw_a_compacted_model_as_they_draw_their_own_fold_of_the_full_one(case):
    """The bundle draws the static SVG and text/plain from the compacted model: a collapsed vertex is drawn as the
    renderer's own fold of the full model draws that stretch (count, calls, line), never as an op of shape ``?``
    (before: ``▸ np.multiply ×401, … → ? · line 3`` in the SVG, ``2005 ops: … →   ?`` in the text)."""
    from leapp_notebook.render import to_dot, to_html, to_text

    trace = _traced(case)
    full, compacted = graph_model(trace), graph_model(trace, compact_above=0)
    assert to_text(compacted) == to_text(full)  # every node above the text's 60 listed ops
    if case in FOLDED:
        assert to_dot(compacted) == to_dot(full)
    assert "collapsed group of unmarked ops" in to_dot(compacted)  # the legend explains the folds
    assert "collapsed group of unmarked ops" in to_dot(full, collapse=True)
    # no op of unknown shape: what a collapsed vertex drawn as an op showed in each rendering
    assert "→   ?" not in to_text(compacted) and "? · line" not in to_dot(compacted)
    assert ">? </td>" not in to_html(compacted) and "→  <small>" not in to_html(compacted)
    summary = next(v for node in compacted["nodes"] for v in node["vertices"] if v["role"] == "collapsed")
    assert f"<b>{summary['name']}</b>" in to_html(compacted)


def test_print_and_to_dot_of_a_large_trace_are_drawn_from_its_compacted_model(monkeypatch):
    """``str(trace)`` and ``trace.to_dot()`` of a trace above MODEL_COMPACT_ABOVE vertices fold everything: they are
    drawn from the compacted model, built as the graph is walked (the full model of a 5,000-pass loop took 0.46 s
    to print), and say exactly what the full model's drawing says."""
    from leapp_notebook.render import to_dot, to_text

    trace = ln.trace_cell(LOOP, {"np": np, "x": np.ones((4, 4)), "STEPS": 800}, inputs=["x"], outputs=["y"])
    full = graph_model(trace)
    expected_text, expected_dot = to_text(full), to_dot(full)

    def refused(*args, **kwargs):
        raise AssertionError("the full model was built")

    monkeypatch.setattr(model_module, "_node_model", refused)
    assert str(trace) == expected_text and to_dot(trace) == expected_dot
    assert "▸ 2005 unmarked ops: np.multiply ×401" in expected_text
    # a small trace, and a drawing that keeps chosen vertices, still read the full model
    with pytest.raises(AssertionError, match="full model"):
        to_dot(trace, highlight=["0/mul"])
    small = ln.trace_cell(LOOP, {"np": np, "x": np.ones(3), "STEPS": 3}, inputs=["x"], outputs=["y"])
    with pytest.raises(AssertionError, match="full model"):
        str(small)


def test_a_large_trace_with_a_small_node_prints_the_small_node_whole():
    """The text lists a node of at most 60 ops op by op: a trace whose small node the compacted model would fold is
    printed from its full model."""
    cell = ('a = annotate.input_tensors("pre", {"x": x})\n'
            'annotate.output_tensors("pre", {"b": a * 2.0 + 1.0})\n'
            'h = annotate.input_tensors("post", {"b": b_in})\n'
            'for i in range(800):\n    h = np.tanh(h * 0.5) - np.sin(h)\n'
            'annotate.output_tensors("post", {"y": h})\n')
    trace = ln.trace_cell(cell, {"np": np, "x": np.ones(3), "b_in": np.ones(3)})
    assert vertex_count(graph_model(trace)) > MODEL_COMPACT_ABOVE
    text = str(trace)
    assert "mul: np.multiply → torch.mul" in text and "add: np.add → torch.add" in text  # node 'pre', op by op
    assert "▸ 3200 unmarked ops" in text


def test_a_small_trace_is_not_compacted():
    trace = ln.trace_cell(LOOP, {"np": np, "x": np.ones(3), "STEPS": 3}, inputs=["x"], outputs=["y"])
    assert "compacted" not in trace._repr_mimebundle_()["application/vnd.leapp.trace+json"]


def test_a_mid_sized_trace_keeps_its_full_model_for_the_live_graph_and_compacts_the_static_renderings():
    trace = ln.trace_cell(LOOP, {"np": np, "x": np.ones(2), "STEPS": 300}, inputs=["x"], outputs=["y"])
    full = graph_model(trace)
    assert COMPACT_ABOVE < vertex_count(full) <= MODEL_COMPACT_ABOVE
    bundle = trace._repr_mimebundle_()
    assert vertex_count(bundle["application/vnd.leapp.trace+json"]) == vertex_count(full)
    assert sum(bundle_sizes(bundle).values()) < 2_000_000
    assert "vertices" not in bundle["application/vnd.leapp.trace+json"].get("compacted", {})


def test_the_full_model_can_be_saved(tmp_path):
    trace = ln.trace_cell(LOOP, {"np": np, "x": np.ones(2), "STEPS": 300}, inputs=["x"], outputs=["y"])
    path = trace.save_graph_model(tmp_path / "graph.json")
    saved = json.loads(path.read_text(encoding="utf-8"))
    assert vertex_count(saved) == vertex_count(graph_model(trace)) > COMPACT_ABOVE
    assert not list(tmp_path.glob(".*.tmp"))


def test_terminal_escape_codes_in_the_cell_do_not_reach_text_output():
    cell = ("x = annotate.input_tensors('n', {'x': a})\ny = x[0]  # \x1b[31mred\x1b[0m \x07\n"
            "annotate.output_tensors('n', {'y': y})\n")
    trace = ln.trace_cell(cell, {"np": np, "a": np.ones(3)})
    text = str(trace)
    assert "\x1b" not in text and "\x07" not in text and "\ufffd[31mred" in text
    assert "\x1b" not in trace._repr_mimebundle_()["text/plain"]


def test_a_lone_surrogate_is_refused_in_source_and_replaced_in_names():
    with pytest.raises(ln.TraceError, match="lone surrogate"):
        ln.trace_cell("y = '\ud800'\n", {"np": np, "a": np.ones(3)}, inputs=["a"], outputs=["a"])
    cell = "x = annotate.input_tensors(name, {'x': a})\nannotate.output_tensors(name, {'y': x * 2})\n"
    trace = ln.trace_cell(cell, {"np": np, "a": np.ones(3), "name": "n\ud800"})
    bundle = trace._repr_mimebundle_()
    json.dumps(bundle["application/vnd.leapp.trace+json"]).encode("utf-8")
    bundle["text/html"].encode("utf-8")
    str(trace).encode("utf-8")


def test_lone_surrogates_from_library_paths_and_function_names_are_replaced(tmp_path):
    """The graph model checks only what can carry text from outside the cell (render/model.py, ``_text`` and
    ``_CLEAN_BY_CONSTRUCTION``): here a library's file path and function name, in the location and helper of the
    vertices it records, and a node name. Each reaches the model, replaced, and every rendering and the saved
    model encode. (Python refuses lone surrogates in class names and in a cell's text.)"""
    bad = "\udcff"
    library = compile("def scale(v):\n    return np.tanh(v) * 2.0\n", f"/opt/lib{bad}/helpers.py", "exec")
    scope = {"np": np}
    exec(library, scope)
    scale = scope["scale"]
    scale.__code__ = scale.__code__.replace(co_name=f"scale{bad}")
    cell = ("x = annotate.input_tensors(name, {'x': a})\n"
            "h = scale(x) + np.interp(x, [0.0, 1.0], [0.0, 1.0])\n"
            "annotate.output_tensors(name, {'y': h})\n")
    trace = ln.trace_cell(cell, {"np": np, "a": np.ones(3, np.float32), "name": f"n{bad}", "scale": scale})
    model = graph_model(trace)
    json.dumps(model, ensure_ascii=False).encode("utf-8")  # nothing left to raise
    vertices = [v for node in model["nodes"] for v in node["vertices"]]
    assert any(v["location"] == "/opt/lib?/helpers.py:2 in scale?" for v in vertices)
    assert any(v["helper"] == "scale?" for v in vertices)
    assert model["nodes"][0]["name"] == "n?"
    bundle = trace._repr_mimebundle_()
    json.dumps(bundle["application/vnd.leapp.trace+json"], ensure_ascii=False).encode("utf-8")
    bundle["text/html"].encode("utf-8")
    bundle["text/plain"].encode("utf-8")
    str(trace).encode("utf-8")
    trace.save_graph_model(tmp_path / "graph.json").read_text(encoding="utf-8")
