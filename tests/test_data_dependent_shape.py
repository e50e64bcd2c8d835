"""A node output whose shape depends on the input values (``x[x > 0]``): the graph computes what NumPy does (the
probe passes, and LEAPP's InferenceManager runs the export for any count: tests/test_leapp_interop.py), but the node
declares its trace-time shape, which is what the pipeline YAML gives a consumer. The probe sees the eager output take
another shape on fresh inputs and warns, ``data-dependent-shape``, at the line where the shape starts to depend on
the values."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import leapp_notebook as ln
from leapp_notebook import probe as probe_module
from leapp_notebook import render
from leapp_notebook.render.look import LOOKS

# 7 of 16 values positive: the selection's length when traced; a fresh draw gives another count
X = np.random.default_rng(0).standard_normal(16).astype(np.float32)
assert int((X > 0).sum()) == 7


def cell(*body: str, node: str = "pre", out: str = "y") -> str:
    return "\n".join([f'x = annotate.input_tensors("{node}", {{"x": x}})', *body,
                      f'annotate.output_tensors("{node}", {{"{out}": {out}}})']) + "\n"


def traced(source: str, profile: str = "leapp") -> ln.Trace:
    return ln.trace_cell(source, {"np": np, "torch": torch, "x": X.copy()}, profile=profile)


def shape_hazards(t: ln.Trace) -> list[ln.Hazard]:
    return [h for h in t.hazards if h.kind == "data-dependent-shape"]


@pytest.mark.parametrize("profile", ["leapp", "full"])
def test_a_masked_selection_as_output_is_a_warning_at_its_line(profile):
    t = traced(cell("y = x[x > 0] * 2.0"), profile)
    assert t.ok and not t.hazards  # nothing to see in the trace: the graph records the selection right
    report = t.probe(n=8, seed=1)
    assert report.passed  # the graph follows NumPy on every fresh input, whatever the length
    check = report.outputs["y"]
    assert check.shape_ok and check.mismatches == 0 and check.first_mismatch is None
    varying = check.varying_shape
    assert varying.what == "varying shape" and varying.got == (7,) and varying.expected != (7,)
    assert f"the eager cell gives {varying.expected} on these inputs (and so does the graph), where the node " \
           "declares (7,)" in varying.describe()
    # the probe's inputs reproduce it: the eager cell and the graph give that shape there
    assert np.asarray(t.run_eager(varying.inputs)["pre"]["y"]).shape == varying.expected
    assert tuple(t.nodes["pre"](varying.inputs["pre"]["x"])[0].shape) == varying.expected
    [hazard] = shape_hazards(t)
    assert report.hazards == [hazard] and t.ok  # a warning
    assert (hazard.severity, hazard.line, hazard.code, hazard.node) == ("warning", 2, "y = x[x > 0] * 2.0", "pre")
    assert hazard.graph_nodes == ["getitem"]  # the selection, not the multiplication after it
    assert "the shape of output 'y' of node 'pre' depends on the input values: (7,) when traced" in hazard.message
    assert "the exported pipeline declares (7,)" in hazard.message
    assert hazard.fix.startswith("At line 2 (`y = x[x > 0] * 2.0`): where the consumer needs one shape, keep it fixed")
    assert "np.where(cond, x, 0.0)" in hazard.fix and "annotate.output_tensors" in hazard.fix
    assert "the shape depends on the input values, probe" in str(report) and "data-dependent-shape" in str(report)
    assert report.to_dict()["outputs"]["y"]["varying_shape"] == varying.describe()


@pytest.mark.parametrize("body, line, marked", [
    (["y = np.nonzero(x > 0)[0]"], 2, "getitem"),
    (["t = torch.from_numpy(x)", "y = t[t > 0] * 2"], 3, "getitem"),
    (["t = torch.from_numpy(x)", "y = torch.masked_select(t, t > 0)"], 3, "masked_select"),
    (["t = torch.from_numpy(x)", "y = torch.nonzero(t > 0)"], 3, "nonzero"),
])
def test_numpy_and_torch_selections_are_found_where_they_are_made(body, line, marked):
    t = traced(cell(*body))
    report = t.probe(n=8, seed=1)
    assert report.passed
    [hazard] = shape_hazards(t)
    assert hazard.line == line and marked in hazard.graph_nodes


def test_what_follows_a_selection_is_reported_at_the_selection_once():
    """``d = y[1:] - y[:-1]`` takes another shape too, because its operand does: the origin is the selection."""
    t = traced(cell("y = x[x > 0]", "d = y[1:] - y[:-1]", "s = np.sort(d)", out="s"))
    t.probe(n=8, seed=1)
    [hazard] = shape_hazards(t)
    assert hazard.line == 2 and hazard.graph_nodes == ["getitem"]
    assert "output 's'" in hazard.message


@pytest.mark.parametrize("body", [
    ["y = np.where(x > 0, x, 0.0) * 2.0"],            # the fix: every element kept
    ["y = np.sum(x[x > 0], keepdims=True)"],           # reduced to a fixed shape after the selection
    ["y = np.sum(x > 0, keepdims=True)"],
])
def test_fixed_shapes_pass(body):
    t = traced(cell(*body))
    report = t.probe(n=8, seed=1)
    assert report.passed and not shape_hazards(t) and report.outputs["y"].varying_shape is None


def test_a_selection_passed_to_the_next_node_is_exported_with_the_warning_in_the_yaml(tmp_path):
    """The whole pipeline: node 'pre' selects, node 'post' takes its output; the YAML declares (7,) for both ends of
    the connection, and says why that holds for the trace inputs only."""
    source = cell("y = x[x > 0] * 2.0") + (
        'z = annotate.input_tensors("post", {"y": y})\nw = np.tanh(z) + 1.0\n'
        'annotate.output_tensors("post", {"w": w})\n')
    t = traced(source)
    written = t.export(tmp_path / "out")  # probes first (seed 0)
    [hazard] = shape_hazards(t)
    assert hazard.node == "pre" and t.last_probe.passed
    yaml_text = next(p for p in written if p.suffix == ".yaml").read_text()
    assert "validated: true" in yaml_text and "kind: data-dependent-shape" in yaml_text
    assert "shape: [7]" in yaml_text


def test_the_graph_marks_the_selection_with_its_own_look():
    t = traced(cell("y = x[x > 0] * 2.0"))
    t.probe(n=8, seed=1)
    model = render.graph_model(t)
    [vertex] = [v for v in model["nodes"][0]["vertices"] if v["name"] == "getitem"]
    assert vertex["category"] == "shape"
    look = LOOKS["shape"]
    assert look.to_dict() in model["legend"]
    assert look.tag in render.to_dot(model) and look.fill in render.to_html(model)


def test_no_retrace_for_a_shape_the_graph_follows(monkeypatch):
    """Nothing is baked: the retrace that names baked values is not run for such an output."""
    t = traced(cell("y = x[x > 0] * 2.0"))
    calls = []
    monkeypatch.setattr(type(t), "retrace", lambda self, inputs: calls.append(inputs))
    report = t.probe(n=8, seed=1)
    assert report.passed and calls == [] and report.baked_constants == {} and shape_hazards(t)


def test_when_the_graph_cannot_be_run_op_by_op_the_output_line_is_marked(monkeypatch):
    def fails(self, *args, **kwargs):
        raise RuntimeError("no")

    t = traced(cell("y = x[x > 0]", "z = y * 2.0", out="z"))
    monkeypatch.setattr(torch.fx.Interpreter, "run", fails)
    t.probe(n=8, seed=1)
    [hazard] = shape_hazards(t)
    assert hazard.line == 3 and hazard.graph_nodes == ["mul"]


def test_the_origin_finder_reads_shapes_against_the_traced_ones():
    t = traced(cell("y = x[x > 0]", "z = np.tanh(y)", out="z"))
    node = t.nodes["pre"]
    fresh = {"x": np.ones(16, np.float32)}  # every value positive: 16 selected
    [origin] = probe_module._shape_origins(node, 0, fresh)
    assert origin.name == "getitem"
    assert probe_module._shape_origins(node, 0, {"x": X.copy()}) == []  # the trace inputs: nothing changes


BETWEEN = '''\
x = annotate.input_tensors("pre", {"x": x})
y = np.tanh(x) * 2.0
annotate.output_tensors("pre", {"y": y})
m = STEP
z = annotate.input_tensors("post", {"m": m})
w = z + 1.0
annotate.output_tensors("post", {"w": w})
'''


def test_a_selection_computed_between_nodes_is_a_warning_on_the_input_it_feeds():
    """The step between the nodes is the deploying runtime's to compute; the pipeline declares its trace-time
    length for the next node's input. No node's graph holds the step, so the eager run's own value tells: the
    shape the cell gives input_tensors on fresh inputs of node 'pre'."""
    t = traced(BETWEEN.replace("STEP", "y[y > 0]"))
    assert t.ok and not t.hazards
    report = t.probe(n=8, seed=1)
    assert report.passed
    [hazard] = shape_hazards(t)
    assert (hazard.node, hazard.line, hazard.severity, hazard.graph_nodes) == ("post", 5, "warning", ["m"])
    assert hazard.code == 'z = annotate.input_tensors("post", {"m": m})'
    assert "input 'm' of node 'post' was computed by indexing at line 4, outside any node" in hazard.message
    assert "(7,) when traced" in hazard.message and "the exported pipeline declares (7,)" in hazard.message.lower()
    assert "keep it fixed in the step that computes 'm'" in hazard.fix


def test_a_step_of_fixed_shape_between_nodes_is_not_reported():
    t = traced(BETWEEN.replace("STEP", "y[1:] * 2.0"))
    report = t.probe(n=8, seed=1)
    assert report.passed and not shape_hazards(t)


def test_an_input_fed_by_a_varying_output_is_reported_once_on_the_output():
    t = traced(cell("y = x[x > 0] * 2.0") + 'z = annotate.input_tensors("post", {"y": y})\n'
                                             'annotate.output_tensors("post", {"w": z + 1.0})\n')
    t.probe(n=8, seed=1)
    assert [(h.node, h.line) for h in shape_hazards(t)] == [("pre", 2)]


def test_run_eager_reports_the_shapes_the_cell_gave_each_node(monkeypatch):
    t = traced(BETWEEN.replace("STEP", "y[y > 0]"))
    given = {}
    fresh = np.ones(16, np.float32)
    t.run_eager({"pre": {"x": fresh}, "post": {"m": np.ones(7, np.float32)}}, given=given)
    assert given == {"pre": {"x": (16,)}, "post": {"m": (16,)}}  # tanh(1) * 2 > 0 everywhere: all 16 selected
    single = traced(cell("y = x * 2.0"))
    calls = []
    run_eager = type(single).run_eager
    def counted(self, inputs, given=None, **options):
        calls.append(given)
        return run_eager(self, inputs, given, **options)

    monkeypatch.setattr(type(single), "run_eager", counted)
    single.probe(n=3, seed=0)
    assert calls == [None, None, None]  # one node: nothing is computed between nodes, nothing collected


def test_probing_again_adds_no_second_warning():
    t = traced(BETWEEN.replace("STEP", "y[y > 0]").replace("y = np.tanh(x) * 2.0", "y = x[x > -0.5]"))
    first = t.probe(n=8, seed=1)
    assert sorted((h.node, h.line) for h in first.hazards) == [("post", 5), ("pre", 2)]
    again = t.probe(n=8, seed=2)
    assert again.hazards == [] and sorted((h.node, h.line) for h in shape_hazards(t)) == [("post", 5), ("pre", 2)]
