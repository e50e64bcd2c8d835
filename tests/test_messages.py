"""Messages that must send the user the right way: the right variable, the right cause, the right function."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import leapp_notebook as ln


def trace(cell, profile="leapp", **namespace):
    return ln.trace_cell(cell, {"np": np, "torch": torch, **namespace}, profile=profile)


def test_broken_chain_names_the_users_array():
    cell = "grid = annotate.input_tensors('n', {'grid': g})\ny = grid * grid[0, 0]\n" \
           "annotate.output_tensors('n', {'y': y})\n"
    (hazard,) = trace(cell, g=np.ones((2, 2))).hazards
    assert hazard.kind == "broken-chain" and "grid[0, 0]" in hazard.message and "x[0, 0]" not in hazard.message


REVERSED = ("state = annotate.input_tensors('n', {'state': s})\ny = state[::-1]\n"
            "annotate.output_tensors('n', {'y': y})\n")


def test_reversed_slice_names_the_users_array():
    cell = REVERSED
    (hazard,) = trace(cell, s=np.arange(4.0)).hazards
    assert hazard.kind == "reversed-slice" and "state[::-1]" in hazard.message


def test_reversed_slice_probe_does_not_claim_the_graph_ignores_the_input():
    cell = REVERSED
    report = trace(cell, s=np.arange(4.0)).probe(n=6, seed=0)
    text = str(report)
    assert not report.passed and "changes with 'state' in the eager cell; the graph does not change the same way" \
        in text and "not in the graph" not in text


def test_scipy_ufunc_is_named_by_its_module():
    special = pytest.importorskip("scipy.special")
    cell = "x = annotate.input_tensors('n', {'x': a})\ny = special.expit(x)\nannotate.output_tensors('n', {'y': y})\n"
    hazards = trace(cell, a=np.linspace(-1, 1, 3), special=special).hazards
    untraced = next(h for h in hazards if h.kind == "untraced-call")
    assert "scipy.special.expit" in untraced.message and "np.expit" not in untraced.message


def test_branch_vertex_is_tagged_as_a_branch_not_a_broken_chain():
    cell = ("x = annotate.input_tensors('n', {'x': a})\nif x.any():\n    x = x * 2\n"
            "annotate.output_tensors('n', {'y': x})\n")
    model = trace(cell, a=np.ones(3))._repr_mimebundle_()["application/vnd.leapp.trace+json"]
    (marked,) = [v for node in model["nodes"] for v in node["vertices"] if v["hazards"]]
    assert marked["category"] == "branch"
    assert any(entry["tag"] == "BRANCH" for entry in model["legend"])


def test_dtype_cast_node_is_labelled_as_a_cast():
    cell = "x = annotate.input_tensors('n', {'x': a})\ny = x + np.arange(3)\nannotate.output_tensors('n', {'y': y})\n"
    node = trace(cell, profile="full", a=np.ones(3, np.float32)).nodes["n"]
    casts = [n for n in node.graph.graph.nodes if n.op == "call_method" and n.target == "to"]
    from leapp_notebook.tracing.facts import facts

    assert casts and all(facts(c).numpy == "np.add" and facts(c).cast for c in casts)
    model = ln.trace_cell(cell, {"np": np, "a": np.ones(3, np.float32)}, profile="full")._repr_mimebundle_()
    labels = [v for node in model["application/vnd.leapp.trace+json"]["nodes"] for v in node["vertices"]
              if v["cast"]]
    assert labels and all(v["numpy"] == "np.add" for v in labels)
    assert "cast to float64" in model["text/plain"]


def test_mismatch_behind_a_baked_value_names_that_value_not_axis_arguments():
    cell = ("x = annotate.input_tensors('n', {'x': a})\n"
            "total = np.zeros(3)\n"
            "value = np.asarray(lib_scale(x))\n"
            "total = total + value\n"
            "annotate.output_tensors('n', {'y': total + x})\n")

    def lib_scale(v):  # a library call that returns plain data computed from the input (its bytes, copied)
        return np.frombuffer(v.tobytes(), v.dtype) * 3.0

    tr = trace(cell, profile="full", a=np.ones(3), lib_scale=lib_scale)
    report = tr.probe(n=6, seed=0)
    assert not report.passed
    (added,) = [h for h in tr.hazards if h.kind == "semantic-mismatch"]
    assert "ddof" not in added.fix and "axis" not in added.fix
    assert "depends on const0, which the trace holds fixed" in added.fix and added.graph_nodes == ["const0"]
