"""Output a notebook can carry: large traces are compacted in the mime bundle, control characters from the
cell never reach a terminal, and characters that cannot be encoded are refused or replaced, never raised
while the output is sent."""

from __future__ import annotations

import json

import numpy as np
import pytest

import leapp_notebook as ln
from leapp_notebook.render.model import COMPACT_ABOVE, MODEL_COMPACT_ABOVE, graph_model, vertex_count

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
