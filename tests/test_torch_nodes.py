"""Whole LEAPP nodes: NumPy pre-processing, torch.from_numpy, an nn.Module policy, post-processing in torch or
NumPy, all in one traced graph; the crossings, module calls and torch-side hazards at their cell lines."""

from __future__ import annotations

import tempfile
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch

import leapp_notebook as ln
from leapp_notebook.tracing.facts import facts


def mlp(seed: int = 0, dropout: float = 0.0) -> torch.nn.Module:
    torch.manual_seed(seed)
    layers: list[torch.nn.Module] = [torch.nn.Linear(4, 16), torch.nn.Tanh()]
    if dropout:
        layers.append(torch.nn.Dropout(dropout))
    layers.append(torch.nn.Linear(16, 2))
    return torch.nn.Sequential(*layers).eval()


POLICY_CELL = """\
obs = annotate.input_tensors("node", {"obs": raw_obs})
normed = (obs - MEAN) / STD
t = torch.from_numpy(normed.astype(np.float32))
with torch.no_grad():
    action = policy(t)
scaled = torch.tanh(action) * 2.0
out = scaled.detach().numpy()
annotate.output_tensors("node", {"action": out}, export_with="jit")
"""


def namespace(**extra):
    ns = {"np": np, "torch": torch, "policy": mlp(), "raw_obs": np.linspace(0.1, 0.9, 4),
          "MEAN": np.full(4, 0.5), "STD": np.full(4, 0.2)}
    ns.update(extra)
    return ns


def eager_policy_cell(obs: np.ndarray, policy: torch.nn.Module) -> np.ndarray:
    t = torch.from_numpy(((obs - 0.5) / 0.2).astype(np.float32))
    with torch.no_grad():
        return (torch.tanh(policy(t)) * 2.0).numpy()


@pytest.mark.parametrize("profile", ["leapp", "full"])
def test_numpy_torch_numpy_node_is_one_graph_with_the_policy_as_a_module(profile):
    ns = namespace()
    trace = ln.trace_cell(POLICY_CELL, ns, profile=profile)
    assert trace.hazards == []
    node = trace.nodes["node"]
    modules = [n for n in node.graph.graph.nodes if n.op == "call_module"]
    assert len(modules) == 1 and facts(modules[0]).line == 5
    assert facts(modules[0]).module.type == "Sequential" and facts(modules[0]).module.params == 4 * 16 + 16 + 16 * 2 + 2
    # the weights are parameters of the node's module, not baked constants
    assert {name for name, _ in node.graph.named_parameters()} == {"policy.0.weight", "policy.0.bias",
                                                                  "policy.2.weight", "policy.2.bias"}
    fresh = np.random.default_rng(1).uniform(0, 1, 4)
    (got,) = node(fresh)
    np.testing.assert_allclose(got, eager_policy_cell(fresh, ns["policy"]), rtol=1e-6)
    assert trace.probe(seed=0).passed
    assert isinstance(ns["out"], np.ndarray) and type(ns["out"]) is np.ndarray
    assert type(ns["t"]) is torch.Tensor and not hasattr(ns["t"], "_lp")


def test_torch_inputs_and_outputs_keep_their_kind():
    x = torch.linspace(-1, 1, 6).reshape(2, 3)
    cell = "t = annotate.input_tensors('n', {'t': x})\ny = torch.relu(t).sum(dim=1) + t.mean()\n" \
           "annotate.output_tensors('n', {'y': y})\n"
    trace = ln.trace_cell(cell, {"np": np, "torch": torch, "x": x})
    node = trace.nodes["n"]
    assert [s.kind for s in node.inputs] == ["torch"] and [s.kind for s in node.outputs] == ["torch"]
    assert node.inputs[0].dtype == "float32"
    fresh = torch.rand(2, 3)
    (got,) = node(fresh)
    assert isinstance(got, torch.Tensor)
    torch.testing.assert_close(got, torch.relu(fresh).sum(dim=1) + fresh.mean())
    report = trace.probe(seed=3)
    assert report.passed and report.sensitivity["y"]["t"] == (True, True)


def test_an_output_that_requires_grad_does_not_crash_trace_probe_or_node():
    policy = mlp()
    policy.train()  # no dropout: training mode does not change its behaviour
    cell = "t = annotate.input_tensors('n', {'t': x})\na = policy(t)\nannotate.output_tensors('n', {'a': a})\n"
    trace = ln.trace_cell(cell, {"torch": torch, "policy": policy, "x": torch.rand(4)})
    assert trace.ok and trace.probe(seed=0).passed
    (got,) = trace.nodes["n"](torch.rand(4))
    assert not got.requires_grad


@pytest.mark.parametrize("crossing, expected", [
    ("torch.as_tensor(x, dtype=torch.float64)", "float64"),
    ("torch.tensor(x)", "float32"),
    ("torch.from_numpy(x).double()", "float64"),
    ("torch.from_numpy(x).to(torch.float16).float()", "float32"),
    ("torch.from_numpy(x).clone().cpu().detach()", "float32"),
])
def test_crossings_into_torch_keep_the_chain(crossing, expected):
    cell = f"x = annotate.input_tensors('n', {{'x': raw}})\nt = {crossing}\ny = t * 3\n" \
           "annotate.output_tensors('n', {'y': y})\n"
    trace = ln.trace_cell(cell, {"np": np, "torch": torch, "raw": np.arange(4, dtype=np.float32)}, profile="full")
    assert [h for h in trace.hazards if h.severity == "error"] == [], [h.message for h in trace.hazards]
    node = trace.nodes["n"]
    assert node.outputs[0].dtype == expected and node.outputs[0].kind == "torch"
    (got,) = node(np.array([1.0, -2.0, 0.5, 4.0], np.float32))
    np.testing.assert_allclose(got.numpy(), np.array([3.0, -6.0, 1.5, 12.0]), rtol=1e-3)
    # no separate graph runs for the same generated code: the graph is callable and jit-traceable
    torch.jit.trace(node.graph, (torch.zeros(4),), check_trace=False)


@pytest.mark.parametrize("crossing", ["t.numpy()", "np.asarray(t)", "t.detach().numpy()", "np.asarray(t.cpu())"])
def test_crossings_back_to_numpy_keep_the_chain(crossing):
    cell = f"t = annotate.input_tensors('n', {{'t': x}})\na = {crossing}\ny = np.clip(a, 0, 1) + 1\n" \
           "annotate.output_tensors('n', {'y': y})\n"
    trace = ln.trace_cell(cell, {"np": np, "torch": torch, "x": torch.linspace(-1, 2, 5)}, profile="full")
    assert [h for h in trace.hazards if h.severity == "error"] == []
    assert trace.nodes["n"].outputs[0].kind == "numpy"
    assert trace.probe(seed=0).passed


def test_training_mode_is_an_error_at_the_call_line_with_the_module_marked():
    cell = "t = annotate.input_tensors('n', {'t': x})\npolicy.train()\na = policy(t)\n" \
           "annotate.output_tensors('n', {'a': a})\n"
    for profile in ("leapp", "full"):
        trace = ln.trace_cell(cell, {"torch": torch, "policy": mlp(dropout=0.5), "x": torch.rand(4)},
                              profile=profile)
        (hazard,) = [h for h in trace.hazards if h.kind == "training-mode"]
        assert hazard.severity == "error" and hazard.line == 3 and hazard.code == "a = policy(t)"
        assert "Dropout" in hazard.message and ".eval()" in hazard.fix
        (module,) = hazard.graph_nodes
        assert trace.nodes["n"].graph.graph.find_nodes(op="call_module")[0].name == module
        assert not trace.probe(n=8, seed=0).passed  # dropout masks differ between the graph and the cell
        assert "random dropout masks" in hazard.message and "batch" not in hazard.message


def test_training_mode_of_a_batch_norm_says_what_training_changes():
    """A BatchNorm in training mode was said to give "random dropout masks, batch statistics" and to differ "from run
    to run": it is deterministic; what it does is normalize each batch by its own statistics."""
    policy = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.BatchNorm1d(4))
    cell = "t = annotate.input_tensors('n', {'t': x})\na = policy(t)\nannotate.output_tensors('n', {'a': a})\n"
    trace = ln.trace_cell(cell, {"torch": torch, "policy": policy, "x": torch.rand(5, 4)})
    (hazard,) = [h for h in trace.hazards if h.kind == "training-mode"]
    assert "normalized by its own statistics" in hazard.message and "dropout" not in hazard.message
    assert "from run to run" not in hazard.message and ".eval()" in hazard.fix


class _ReadsTrainingAsMe(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.l = torch.nn.Linear(4, 2)

    def forward(me, x):  # noqa: N805 - the module called something else than self
        return torch.nn.functional.dropout(me.l(x), 0.5, training=me.training)


class _ReadsTrainingInAHelper(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.l = torch.nn.Linear(4, 2)

    def forward(self, x):
        def noisy(v):
            return torch.nn.functional.dropout(v, 0.5, training=self.training)
        return noisy(self.l(x))


@pytest.mark.parametrize("module", [_ReadsTrainingAsMe, _ReadsTrainingInAHelper])
def test_a_forward_reading_its_training_flag_by_any_name_is_training_mode(module):
    """The check reads the forward's code for a ``.training`` attribute (it searched the text for
    ``self.training``: ``me.training`` went unreported, and the probe blamed a semantic mismatch)."""
    cell = "t = annotate.input_tensors('n', {'t': x})\na = policy(t)\nannotate.output_tensors('n', {'a': a})\n"
    policy = module()
    trace = ln.trace_cell(cell, {"torch": torch, "policy": policy, "x": torch.rand(8, 4)})
    assert [(h.kind, h.line) for h in trace.hazards] == [("training-mode", 2)]
    policy.eval()
    assert ln.trace_cell(cell, {"torch": torch, "policy": policy, "x": torch.rand(8, 4)}).hazards == []


def test_an_eval_policy_under_no_grad_then_numpy_has_no_hazard():
    trace = ln.trace_cell(POLICY_CELL, namespace())
    assert trace.hazards == [] and trace.ok


def test_float_of_a_tensor_is_a_value_extraction_the_probe_exposes():
    cell = ("t = annotate.input_tensors('n', {'t': x})\n"
            "scale = float(t.abs().max())\n"
            "y = t / scale\n"
            "annotate.output_tensors('n', {'y': y})\n")
    trace = ln.trace_cell(cell, {"torch": torch, "x": torch.tensor([1.0, -4.0, 2.0])})
    (hazard,) = [h for h in trace.hazards if h.kind == "value-extraction"]
    assert hazard.severity == "error" and hazard.line == 2 and "__float__" in hazard.message
    assert hazard.graph_nodes and "keep the value as an array" in hazard.fix
    report = trace.probe(n=8, seed=0)
    assert not report.passed and report.baked == ["y"]


@pytest.mark.parametrize("extraction", ["t.sum().item()", "int(t.argmax())", "t.tolist()[0]"])
def test_item_int_and_tolist_are_value_extractions(extraction):
    cell = f"t = annotate.input_tensors('n', {{'t': x}})\nv = {extraction}\ny = t * v\n" \
           "annotate.output_tensors('n', {'y': y})\n"
    trace = ln.trace_cell(cell, {"torch": torch, "x": torch.tensor([1.0, 3.0, 2.0])})
    assert [(h.kind, h.line) for h in trace.hazards] == [("value-extraction", 2)]


@pytest.mark.parametrize("profile", ["leapp", "full"])
def test_branch_on_a_tensor_is_a_data_dependent_branch_the_probe_exposes(profile):
    cell = ("t = annotate.input_tensors('n', {'t': x})\n"
            "if t.sum() > 0:\n"
            "    t = t * 2\n"
            "annotate.output_tensors('n', {'y': t})\n")
    trace = ln.trace_cell(cell, {"torch": torch, "x": torch.tensor([1.0, -0.5, 0.2])}, profile=profile)
    (hazard,) = trace.hazards
    assert (hazard.kind, hazard.severity, hazard.line) == ("data-dependent-branch", "error", 2)
    assert hazard.graph_nodes and "np.where" in hazard.fix
    assert not trace.probe(n=16, seed=0, ranges={"t": (-1.0, 1.0)}).passed  # some draws take the other branch


@pytest.mark.parametrize("random_op, line", [("torch.rand(3)", 2), ("torch.randn_like(t)", 2),
                                             ("torch.nn.functional.dropout(t, 0.5, training=True)", 2)])
def test_random_ops_inside_a_node_are_nondeterministic(random_op, line):
    cell = f"t = annotate.input_tensors('n', {{'t': x}})\nnoise = {random_op}\ny = t + noise\n" \
           "annotate.output_tensors('n', {'y': y})\n"
    for profile in ("leapp", "full"):
        trace = ln.trace_cell(cell, {"torch": torch, "x": torch.ones(3)}, profile=profile)
        (hazard,) = [h for h in trace.hazards if h.kind == "nondeterministic"]
        assert hazard.severity == "error" and hazard.line == line and "input_tensors" in hazard.fix
    assert not trace.probe(n=4, seed=0).passed  # the graph and the eager cell draw different values


@pytest.mark.parametrize("draw, line", [
    ("noise = np.random.normal(0.0, 0.1, size=a.shape).astype(np.float32)\ny = a + noise", 2),
    ("y = a * (np.random.rand(*a.shape) > 0.5)", 2),  # a dropout-style mask
    ("y = a + torch.randn_like(torch.from_numpy(a)).numpy()", 2),
])
def test_numpy_and_torch_draws_inside_a_node_are_nondeterministic_and_explain_the_probe(draw, line):
    """NumPy's np.random.* is a random op as torch's are; the draw explains the failing probe (no second error,
    semantic-mismatch, with a lookup bug's fix); a torch random op's node is marked."""
    cell = f"a = annotate.input_tensors('n', {{'a': x}})\n{draw}\nannotate.output_tensors('n', {{'y': y}})\n"
    namespace = {"np": np, "torch": torch, "x": np.array([0.3, 0.8, 1.2, 2.5], np.float32)}
    for profile in ("leapp", "full"):
        trace = ln.trace_cell(cell, dict(namespace), profile=profile)
        assert [(h.kind, h.severity, h.line) for h in trace.hazards] == [("nondeterministic", "error", line)]
        (hazard,) = trace.hazards
        graph = {n.name: n for n in trace.nodes["n"].graph.graph.nodes}
        assert all(name in graph for name in hazard.graph_nodes)
        assert ("randn_like" in hazard.graph_nodes) == ("torch" in draw)
        report = trace.probe(n=8, seed=0)
        assert not report.passed and report.hazards == []
    assert np.random.normal.__module__ == "numpy.random"  # NumPy's own again after the trace


def test_dropout_with_training_false_is_not_random():
    cell = "t = annotate.input_tensors('n', {'t': x})\ny = torch.nn.functional.dropout(t, 0.5, training=False)\n" \
           "annotate.output_tensors('n', {'y': y})\n"
    assert ln.trace_cell(cell, {"torch": torch, "x": torch.ones(3)}).hazards == []


def test_in_place_ops_are_recorded_functionally_and_a_write_into_an_input_is_reported():
    cell = ("t = annotate.input_tensors('n', {'t': x})\n"
            "u = t * 2\n"
            "u.add_(1)\n"
            "u[0] = t[1]\n"
            "t.mul_(3)\n"
            "annotate.output_tensors('n', {'u': u, 't3': t})\n")
    x = torch.tensor([1.0, 2.0, 3.0])
    trace = ln.trace_cell(cell, {"torch": torch, "x": x})
    assert torch.equal(x, torch.tensor([3.0, 6.0, 9.0]))  # the cell ran as it does untraced: it wrote into x
    (hazard,) = trace.hazards
    assert hazard.kind == "untraced-call" and hazard.line == 5 and "clone()" in hazard.fix
    u, t3 = trace.nodes["n"](torch.tensor([5.0, 6.0, 7.0]))
    torch.testing.assert_close(u, torch.tensor([6.0, 13.0, 15.0]))
    torch.testing.assert_close(t3, torch.tensor([15.0, 18.0, 21.0]))


@pytest.mark.parametrize("kind, write, then", [
    # (the input's kind, the write at line 2, the hazards after it: a write through a view of part of x leaves x
    # itself stale, baked where it is read)
    ("numpy", "x += 1", []),
    ("numpy", "x[0] = 5", []),
    ("numpy", "np.multiply(x, 2, out=x)", []),
    ("numpy", "x[1:] *= 2", []),
    ("numpy", "torch.from_numpy(x).add_(1)", []),
    ("numpy", "torch.from_numpy(x[1:]).mul_(2)", ["untraced-call", "untraced-output"]),
    ("torch", "x.add_(1)", []),
    ("torch", "x[0] = 5", []),
    ("torch", "x[:2].mul_(2)", ["semantic-mismatch"]),  # followed into x (setitem); LEAPP 0.7.2 drops it
    ("torch", "a = x.detach().numpy()\na += 1", []),
    # the array written is a temporary, gone when x is read: nothing holds the write's value for x (reported)
    ("torch", "x.detach().numpy()[0] = 7", ["untraced-call", "untraced-output"]),
])
def test_a_write_into_a_node_input_is_reported_whichever_side_writes(kind, write, then):
    cell = (f"x = annotate.input_tensors('n', {{'x': raw}})\n{write}\ny = x * 2\n"
            "annotate.output_tensors('n', {'y': y})\n")
    raw = np.ones(3) if kind == "numpy" else torch.ones(3)
    trace = ln.trace_cell(cell, {"np": np, "torch": torch, "raw": raw})
    assert not np.array_equal(np.asarray(raw), np.ones(3))  # the cell wrote into the caller's value, as untraced
    (hazard,) = [h for h in trace.hazards if "node input 'x' is written in place" in h.message]
    others = [h for h in trace.hazards if h is not hazard]
    what, copy = ("array", "copy") if kind == "numpy" else ("tensor", "clone")
    assert (hazard.kind, hazard.severity, hazard.line) == ("untraced-call", "warning", 2 + write.count("\n"))
    assert f"node input 'x' is written in place: the eager cell changes the caller's {what}" in hazard.message
    assert f"(x = x.{copy}())" in hazard.fix
    assert hazard.graph_nodes == []  # nothing in the graph is wrong: the caller's value is (and no "would bake")
    assert [h.kind for h in others] == then
    if not then:
        assert trace.probe(4).passed  # the graph computes what the cell returns; only the caller's value differs


@pytest.mark.parametrize("make", [np.ones, torch.ones])
def test_two_inputs_in_one_array_are_told_apart_by_the_bytes_written(make):
    cell = ("d = annotate.input_tensors('n', {'a': big[0], 'b': big[1]})\nd['b'][1:] *= 2\ny = d['a'] + d['b']\n"
            "annotate.output_tensors('n', {'y': y})\n")
    trace = ln.trace_cell(cell, {"np": np, "torch": torch, "big": make((2, 3))})
    written = [h for h in trace.hazards if h.message.startswith("node input")]
    assert [(h.line, h.message.split(":")[0]) for h in written] == [(2, "node input 'b' is written in place")]


def test_reading_a_node_input_or_writing_a_copy_of_it_is_not_a_write_into_it():
    cell = ("x = annotate.input_tensors('n', {'x': raw})\nc = x.copy()\nc += 1\nv = x[1:]\nx = x + 1\n"
            "x += v.sum()\nt = torch.from_numpy(c)\nt.mul_(2)\nannotate.output_tensors('n', {'y': x, 't': t})\n")
    raw = np.ones(3)
    trace = ln.trace_cell(cell, {"np": np, "torch": torch, "raw": raw})
    assert trace.hazards == [] and np.array_equal(raw, np.ones(3))


def test_a_later_node_writing_into_an_earlier_nodes_input_reports_it():
    cell = ("x = annotate.input_tensors('pre', {'x': raw})\ny = x * 2\nannotate.output_tensors('pre', {'y': y})\n"
            "z = annotate.input_tensors('post', {'z': y})\nx[0] = 9\nw = z + 1\n"
            "annotate.output_tensors('post', {'w': w})\n")
    trace = ln.trace_cell(cell, {"np": np, "raw": np.ones(3)})
    (hazard,) = trace.hazards
    assert (hazard.node, hazard.line, hazard.graph_nodes) == ("post", 5, [])
    assert "node input 'x' is written in place" in hazard.message


def test_a_view_taken_before_an_in_place_write_takes_the_written_values():
    """``row = u[0]; u.add_(1); row * 2``: the view was baked (an error); it is indexed again from u's new value, with
    the finding that LEAPP 0.7.2 keeps the view as taken (its replay validation fails)."""
    cell = ("t = annotate.input_tensors('n', {'t': x})\n"
            "u = t * 1\n"
            "row = u[0]\n"
            "u.add_(1)\n"
            "y = row * 2\n"
            "annotate.output_tensors('n', {'y': y})\n")
    trace = ln.trace_cell(cell, {"torch": torch, "x": torch.ones(2, 2)})
    (finding,) = trace.hazards
    assert (finding.kind, finding.line) == ("semantic-mismatch", 5) and "a view once" in finding.message
    fresh = torch.rand(2, 2)
    torch.testing.assert_close(trace.nodes["n"](fresh)[0], (fresh[0] + 1) * 2)


@pytest.mark.parametrize("write", [
    "u[:, 1:] *= 2",                      # Python writes the changed view back: u[:, 1:] = u[:, 1:].__imul__(2)
    "u[:, 1:] += u[:, :1]",
    "u[1, :2] *= 3",
])
def test_a_torch_augmented_assignment_into_part_of_a_tensor_is_followed(write):
    """``action[:, :3] *= scale`` on a traced tensor: the write-back of the view changed in place used to find the
    tensor itself stale (written through that view), an error that blocked the export of a correct graph. The
    write-back now writes into the tensor's node from before, as NumPy's did."""
    cell = (f"t = annotate.input_tensors('n', {{'t': x}})\nu = t * 1\n{write}\n"
            "y = u * 2\nannotate.output_tensors('n', {'y': y})\n")
    trace = ln.trace_cell(cell, {"torch": torch, "x": torch.rand(2, 4)})
    assert trace.hazards == []
    fresh = torch.rand(2, 4) * 4 - 2
    want = trace.run_eager({"n": {"t": fresh}})["n"]["y"]
    torch.testing.assert_close(trace.nodes["n"](fresh)[0], torch.as_tensor(want))
    assert trace.probe(seed=0).passed


@pytest.mark.parametrize("write", [
    "u[1, 2:] = 0\nu[1, :2] *= 3",
    "u[1] = torch.clamp(u[1], -1, 1)",
    "u[1:].mul_(2)",
    "u[1, 3] = 5",
])
def test_a_torch_view_taken_before_a_write_into_other_bytes_stays_traced(write):
    """``row = u[0]``, then writes into row 1 only: the view's bytes did not change, so its node is still its value
    (the write counter is per tensor: this used to be a stale-view error)."""
    cell = (f"t = annotate.input_tensors('n', {{'t': x}})\nu = t * 1\nrow = u[0]\n{write}\n"
            "y = row * 2\nannotate.output_tensors('n', {'y': y})\n")
    trace = ln.trace_cell(cell, {"torch": torch, "x": torch.rand(2, 4)})
    # (u[1:].mul_(2): LEAPP 0.7.2 drops the write into u, a warning: u's new value reaches no output)
    assert [h for h in trace.hazards if h.severity == "error"] == []
    fresh = torch.rand(2, 4) * 4 - 2
    torch.testing.assert_close(trace.nodes["n"](fresh)[0], fresh[0] * 2)
    assert trace.probe(seed=0).passed


@pytest.mark.parametrize("write", ["u[:, 1:] = 0", "u[:, 2:] *= 2", "u[:, 1:].clamp_(0, 0.5)"])
def test_a_torch_column_taken_before_a_write_into_other_columns_stays_traced(write):
    """``quat = obs[:, 3:7]``, then a write into other columns: the column spans bytes of the others, but shares no
    element with them (compared where the spans meet)."""
    cell = (f"t = annotate.input_tensors('n', {{'t': x}})\nu = t * 1\ncol = u[:, 0]\n{write}\n"
            "y = col * 2\nannotate.output_tensors('n', {'y': y})\n")
    trace = ln.trace_cell(cell, {"torch": torch, "x": torch.rand(3, 4)})
    assert [h for h in trace.hazards if h.severity == "error"] == []  # (a warning for LEAPP's dropped write into u)
    fresh = torch.rand(3, 4)
    torch.testing.assert_close(trace.nodes["n"](fresh)[0], fresh[:, 0] * 2)


@pytest.mark.parametrize("write", ["u[:, 1::2] = 0", "u[0, 3] = 1", "u[[0, 1]] = 0", "u[u > 0.5] = 0", "u.add_(1)"])
def test_a_torch_view_is_indexed_again_when_a_write_since_reaches_its_bytes(write):
    """A write that reaches the view's bytes made it stale, baked with an error; it is indexed again from u's new
    value (``view-read-stale``: LEAPP 0.7.2 keeps it as taken), the graph right on fresh inputs."""
    cell = (f"t = annotate.input_tensors('n', {{'t': x}})\nu = t * 1\nrow = u[0]\n{write}\n"
            "y = row * 2\nannotate.output_tensors('n', {'y': y})\n")
    trace = ln.trace_cell(cell, {"torch": torch, "x": torch.rand(2, 4)})
    found = [h for h in trace.hazards if h.line == 5 and h.severity == "error"]
    assert found and found[0].kind == "semantic-mismatch" and "a view once" in found[0].message
    assert trace.probe(8, seed=0).passed


def test_a_view_taken_before_a_write_across_a_crossing_into_other_bytes_stays_traced():
    """The array is written through a tensor on its memory, in bytes the view does not span: still its node."""
    cell = "a = x * 1\nrow = a[:1]\nt = torch.from_numpy(a)\nt[1:].mul_(2)\ny = row * 2\n"
    trace = ln.trace_cell(cell, {"np": np, "torch": torch}, inputs={"x": SHARED_X.copy()}, outputs=["y"])
    assert [h for h in trace.hazards if h.severity == "error"] == []  # (LEAPP's dropped write into t: a warning)
    assert trace.probe(seed=0).passed


@pytest.mark.filterwarnings("ignore:__array_wrap__ must accept context:DeprecationWarning")  # torch's, not ours
def test_numpy_ufunc_on_a_tensor_cannot_silently_lose_the_chain():
    cell = "t = annotate.input_tensors('n', {'t': x})\ny = np.tanh(t)\nannotate.output_tensors('n', {'y': y})\n"
    trace = ln.trace_cell(cell, {"np": np, "torch": torch, "x": torch.ones(3)})
    errors = [h for h in trace.hazards if h.severity == "error"]
    assert errors and errors[0].line == 2


def test_gru_cell_policy_with_tuple_state():
    torch.manual_seed(0)
    gru = torch.nn.GRUCell(3, 5).eval()
    cell = ("x, h = annotate.input_tensors('n', {'x': obs, 'h': state}).values()\n"
            "h2 = gru(x, h)\n"
            "a = h2[:, :2].clamp(-1, 1)\n"
            "annotate.output_tensors('n', {'a': a, 'h2': h2})\n")
    trace = ln.trace_cell(cell, {"torch": torch, "gru": gru, "obs": torch.rand(1, 3), "state": torch.zeros(1, 5)})
    assert trace.hazards == []
    assert trace.probe(seed=0).passed


def test_other_threads_see_plain_torch_during_a_trace():
    import threading

    seen = []

    def worker():
        seen.append(type(torch.from_numpy(np.ones(2))).__name__)
        seen.append(hasattr(torch.ones(2) + 1, "_lp"))

    cell = ("t = annotate.input_tensors('n', {'t': x})\nth = threading.Thread(target=worker)\nth.start()\n"
            "th.join()\ny = t + 1\nannotate.output_tensors('n', {'y': y})\n")
    trace = ln.trace_cell(cell, {"torch": torch, "threading": threading, "worker": worker, "x": torch.ones(2)})
    assert seen == ["Tensor", False]
    assert len([n for n in trace.nodes["n"].graph.graph.nodes if n.op in ("call_function", "call_method")]) == 1


@pytest.mark.parametrize("cell, cause_text, fix_text", [
    ("t = torch.as_tensor(x, dtype=torch.float64)\ny = t * 2", "drop dtype=", "torch.from_numpy(x).to(torch.float64)"),
    ("t = torch.tensor(x, dtype=torch.float16)\ny = t * 2", "drop dtype=", "torch.from_numpy(x).to(torch.float16)"),
    ("t = torch.asarray(x, dtype=torch.int32)\ny = t * 2", "drop dtype=", "torch.from_numpy(x).to(torch.int32)"),
    ("t = torch.from_numpy(x)\ny = t + t.data * 2", "does not trace .data", "or .detach(), instead of .data"),
    ("m = torch.from_numpy(x) > 0\ny = ~m", "torch.jit.script rejects", "use torch.logical_not(m)"),
])
def test_torch_calls_leapp_records_wrongly_are_errors_in_leapp_and_warnings_in_full(cell, cause_text, fix_text):
    source = f"x = annotate.input_tensors('n', {{'x': raw}})\n{cell}\nannotate.output_tensors('n', {{'y': y}})\n"
    for profile, severity in (("leapp", "error"), ("full", "warning")):
        trace = ln.trace_cell(source, {"np": np, "torch": torch, "raw": np.array([1.0, -2.0], np.float32)},
                              profile=profile)
        (hazard,) = [h for h in trace.hazards if h.kind == "semantic-mismatch"]
        assert hazard.severity == severity and cause_text in hazard.message and hazard.line in (2, 3)
        assert fix_text in hazard.fix  # in the dtype the call asked for
        assert trace.probe(n=4, seed=0).passed  # our graph is right either way


@pytest.mark.parametrize("cell", [
    "t = torch.tensor(x, dtype=torch.float32)\ny = torch.tanh(t * 0.5)",
    "t = torch.as_tensor(x, dtype=torch.float32)\ny = t * 2",
    "t = torch.asarray(x, dtype=torch.float32)\ny = t * 2",
])
def test_a_conversion_to_the_arrays_own_dtype_is_no_leapp_defect(cell):
    # LEAPP 0.7.2 drops dtype=, which changes nothing here: measured faithful (benchmarks/leapp_torch_cases.py)
    source = f"x = annotate.input_tensors('n', {{'x': raw}})\n{cell}\nannotate.output_tensors('n', {{'y': y}})\n"
    trace = ln.trace_cell(source, {"np": np, "torch": torch, "raw": np.array([1.0, -2.0], np.float32)},
                          profile="leapp")
    assert [h.kind for h in trace.hazards] == []
    assert trace.probe(n=4, seed=0).passed


def test_a_numpy_scalar_operand_of_a_torch_op_is_flagged_like_leapp_refuses_it():
    cell = ("t = annotate.input_tensors('n', {'t': x})\ny = t * np.float32(2.0)\n"
            "annotate.output_tensors('n', {'y': y})\n")
    for profile, severity in (("leapp", "error"), ("full", "warning")):
        trace = ln.trace_cell(cell, {"np": np, "torch": torch, "x": torch.ones(3)}, profile=profile)
        (hazard,) = trace.hazards
        assert (hazard.kind, hazard.severity, hazard.line) == ("numpy-scalar", severity, 2)
        assert "NotImplementedError" in hazard.message


def test_inference_mode_blocks_are_recorded():
    cell = "t = annotate.input_tensors('n', {'t': x})\nwith torch.inference_mode():\n    a = policy(t) * 1.0\n" \
           "annotate.output_tensors('n', {'a': a})\n"
    trace = ln.trace_cell(cell, {"torch": torch, "policy": mlp(), "x": torch.rand(4)})
    assert trace.hazards == [] and trace.probe(seed=0).passed


@pytest.mark.parametrize("backend", ["jit", "pt2", "onnx"])
def test_torch_node_with_a_module_exports_and_loads_in_leapp(tmp_path, backend):
    leapp = pytest.importorskip("leapp")
    import contextlib
    import io

    cell = ("t = annotate.input_tensors('n', {'t': x})\nwith torch.no_grad():\n    a = policy(t * 2)\n"
            f"annotate.output_tensors('n', {{'a': a.clamp(-1, 1)}}, export_with='{backend}')\n")
    trace = ln.trace_cell(cell, {"torch": torch, "policy": mlp(), "x": torch.rand(4)})
    written = trace.export(tmp_path, formats=(backend,))
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        manager = leapp.InferenceManager(str(written[-1]))
    fresh = torch.rand(4)
    with torch.no_grad():
        got = manager({"n/t": fresh})["n/a"]
    expected = trace.run_eager({"n": {"t": fresh}})["n"]["a"]
    torch.testing.assert_close(got, expected)


def test_a_module_is_one_vertex_in_the_graph_model_and_expands_to_its_own_ops():
    policy = mlp()
    trace = ln.trace_cell("y = policy(t)", {"torch": torch, "policy": policy, "t": torch.rand(4)}, inputs=["t"],
                          outputs=["y"])
    bundle = trace._repr_mimebundle_()
    model = bundle["application/vnd.leapp.trace+json"]
    (vertex,) = [v for node in model["nodes"] for v in node["vertices"] if v["role"] == "module"]
    assert vertex["category"] == "module" and vertex["module"]["type"] == "Sequential"
    assert vertex["module"]["in_shape"] == [4] and vertex["shape"] == [2]
    assert [(op["target"], op["type"]) for op in vertex["module"]["ops"]] == [("0", "Linear"), ("1", "Tanh"),
                                                                              ("2", "Linear")]
    assert any(entry["category"] == "module" for entry in model["legend"])
    assert "policy: Sequential · 114 params · (4,) → (2,)" in bundle["text/plain"]


def test_the_one_click_fix_for_float_of_a_tensor_gives_a_clean_cell_that_probes():
    from leapp_notebook import fixes

    cell = ("t = annotate.input_tensors('n', {'t': x})\nscale = float(t.abs().max())\ny = t / scale\n"
            "annotate.output_tensors('n', {'y': y})\n")
    namespace = {"torch": torch, "x": torch.tensor([1.0, -4.0, 2.0])}
    trace = ln.trace_cell(cell, dict(namespace))
    (hazard,) = trace.hazards
    (edit,) = fixes.edits(trace)
    assert (edit.line, edit.old, edit.new) == (2, "scale = float(t.abs().max())", "scale = t.abs().max()")
    fixed = ln.trace_cell(fixes.apply(trace.source, hazard, trace), dict(namespace))
    assert fixed.hazards == [] and fixed.probe(seed=0).passed


def test_module_calls_are_watched_through_call_impl_and_restored():
    """The tracer patches ``nn.Module._call_impl`` (a plain attribute), never ``nn.Module.__call__``: assigning a
    special method on nn.Module makes Python update the call slot of every subclass, twice per trace
    (tensor.watch_modules)."""
    call, call_impl = torch.nn.Module.__call__, torch.nn.Module._call_impl
    seen = {}
    cell = POLICY_CELL.replace("scaled = ", "seen['call'] = type(policy).__call__\n"
                                            "seen['impl'] = torch.nn.Module._call_impl\nscaled = ")
    trace = ln.trace_cell(cell, namespace(seen=seen))
    assert seen["call"] is call
    assert seen["impl"] is not call_impl  # watched while the cell ran
    assert torch.nn.Module.__call__ is call and torch.nn.Module._call_impl is call_impl  # restored after
    assert [n.op for n in trace.nodes["node"].graph.graph.nodes].count("call_module") == 1


@pytest.mark.filterwarnings("ignore::UserWarning")  # dynamo notes that it does not trace the tracer's own hook
def test_a_module_compiled_in_place_is_recorded_through_its_submodules():
    """``module.compile()`` runs compiled code that skips ``_call_impl`` of the module itself; the submodules it calls
    are recorded, each as a call_module node, and the node stays faithful."""
    policy = mlp()
    policy.compile(backend="eager")
    try:
        trace = ln.trace_cell(POLICY_CELL, namespace(policy=policy))
    finally:
        torch._dynamo.reset()
    modules = [str(n.target) for n in trace.nodes["node"].graph.graph.nodes if n.op == "call_module"]
    assert len(modules) == 3  # Linear, Tanh, Linear
    fresh = np.random.default_rng(1).uniform(0, 1, 4)
    np.testing.assert_allclose(trace.nodes["node"](fresh)[0], eager_policy_cell(fresh, mlp()), rtol=1e-6)
    assert trace.probe(seed=0).passed


@pytest.mark.parametrize("expression", ["2.0 - t", "1.0 / (t + 3.0)", "2.0 ** t", "3 * t - 0.5",
                                        "(t > 0.5) | (t < 0.1)"])
def test_reflected_operators_on_tensors_keep_their_operand_order(expression):
    """``2.0 - t`` reaches the recorder as ``Tensor.__rsub__(t, 2.0)``: recorded as ``sub(2.0, t)``, not ``t - 2.0``."""
    cell = f"t = annotate.input_tensors('n', {{'t': x}})\ny = {expression}\nannotate.output_tensors('n', {{'y': y}})\n"
    trace = ln.trace_cell(cell, {"torch": torch, "x": torch.linspace(0.0, 1.0, 5)})
    assert trace.hazards == []
    fresh = torch.rand(5)
    expected = eval(expression, {"t": fresh})  # noqa: S307 - the test's own expression
    torch.testing.assert_close(trace.nodes["n"](fresh)[0], expected)
    assert trace.probe(seed=0).passed


SHARED_X = np.array([1.0, -2.0, 3.0])


@pytest.mark.parametrize("cell, want", [
    # a write through the tensor: the array is read after it
    ("a = x * 1\nt = torch.from_numpy(a)\nt.add_(2)\ny = a * 10", lambda x: (x + 2) * 10),
    ("a = x * 1\nt = torch.as_tensor(a)\nt[0] = 7.0\ny = a + 1", lambda x: np.r_[7.0, x[1:]] + 1),
    ("t = torch.from_numpy(x * 1)\na = t.numpy()\nt.clamp_(min=0.0)\ny = a - 1", lambda x: np.maximum(x, 0) - 1),
    # a write into the array: the tensor is read after it
    ("a = x * 1\nt = torch.from_numpy(a)\na *= 3\ny = (t + 1).numpy()", lambda x: x * 3 + 1),
    ("t = torch.from_numpy(x * 1)\na = t.numpy()\na[1] = 0.5\ny = (t * 2).numpy()",
     lambda x: np.r_[x[0], 0.5, x[2:]] * 2),
    # np.array(t) copies (the tracer gave the cell a view of t's memory: the write changed t under the trace)
    ("t = torch.from_numpy(x * 1)\na = np.array(t)\na += 1\ny = (t * 1).numpy() + a", lambda x: x + x + 1),
    ("a = x * 1\nt = torch.tensor(a)\nt += 1\ny = a * 1", lambda x: x),
])
@pytest.mark.filterwarnings("ignore:__array__ implementation doesn't accept a copy:DeprecationWarning")  # torch's
def test_a_write_through_one_side_of_a_crossing_is_seen_on_the_other(cell, want):
    """torch.from_numpy, torch.as_tensor and t.numpy() share memory: eager, a write through either is seen
    through the other. The graph follows it where the two cover the same memory."""
    for profile in ("leapp", "full"):
        trace = ln.trace_cell(cell, {"np": np, "torch": torch}, inputs={"x": SHARED_X.copy()}, outputs=["y"],
                              profile=profile)
        assert not [h for h in trace.hazards if h.severity == "error"], trace.hazards
        fresh = np.array([0.5, 4.0, -1.5])
        (y,) = trace.nodes["node"](fresh.copy())
        np.testing.assert_allclose(np.asarray(y), want(fresh))
        assert trace.probe(seed=0).passed


def test_a_view_taken_before_a_write_across_a_crossing_is_baked_and_reported():
    """A view of the tensor taken before the array was written is stale: the graph cannot follow it, so it is
    baked, an error at the line that reads it, and the probe catches it."""
    cell = "a = x * 1\nt = torch.from_numpy(a)\nrow = t[1:]\na += 1\ny = row * 2\n"
    trace = ln.trace_cell(cell, {"np": np, "torch": torch}, inputs={"x": SHARED_X.copy()}, outputs=["y"])
    stale = [h for h in trace.hazards if h.line == 5 and h.severity == "error"]
    assert stale and "shares memory" in stale[0].message and stale[0].graph_nodes
    assert not trace.probe(seed=0).passed


def test_an_in_place_method_with_no_functional_twin_leaves_what_the_graph_is_given_alone(tmp_path):
    """t.zero_() and t.fill_(v) have no functional Tensor method: recorded on a copy, so the graph never writes
    into its input (called with an array, it used to zero the caller's array)."""
    cell = ("t = torch.from_numpy(x)\nkeep = t * 1\nt.fill_(2.5)\nu = keep.clone()\nu.zero_()\n"
            "y = (keep + t + u).numpy()\n")
    trace = ln.trace_cell(cell, {"np": np, "torch": torch}, inputs={"x": SHARED_X.copy()}, outputs=["y"])
    assert all(h.severity != "error" for h in trace.hazards)
    given = np.array([4.0, 5.0, 6.0])
    (y,) = trace.nodes["node"](given)
    np.testing.assert_array_equal(given, [4.0, 5.0, 6.0])
    np.testing.assert_allclose(y, given + 2.5)
    assert {n.target for n in trace.nodes["node"].graph.graph.nodes if n.op == "call_function"} >= {
        ln.tracing.torch_impl.on_copy}
    written = trace.export(tmp_path, formats=("jit", "pt2", "onnx"))
    assert {p.suffix for p in written} >= {".pt", ".pt2", ".onnx"}


def test_a_traced_numpy_scalar_reaches_torch_as_the_number_it_stands_for():
    """x[0] and np.sum(x) are NumPy scalars, which torch takes as numbers; the tracer holds them as 0-d arrays,
    which torch's argument parser refused before the recorder saw the call (the trace ended with a TypeError)."""
    cell = "t = torch.from_numpy(x * 1)\nt.mul_(x[0])\ny = t * np.sum(x) + x[1] * t\n"
    ns = {"np": np, "torch": torch}
    leapp = ln.trace_cell(cell, ns, inputs={"x": SHARED_X.copy()}, outputs=["y"])
    assert {(h.kind, h.line) for h in leapp.hazards if h.severity == "error"} >= {("broken-chain", 2),
                                                                                  ("broken-chain", 3)}
    full = ln.trace_cell(cell, ns, inputs={"x": SHARED_X.copy()}, outputs=["y"], profile="full")
    assert all(h.severity != "error" for h in full.hazards)
    assert any(h.kind == "numpy-scalar" and h.line == 3 and "float64(2.0)" in h.message for h in full.hazards)
    assert full.probe(seed=0).passed


def test_a_torch_operator_given_a_traced_numpy_scalar_fails_as_it_does_eagerly():
    """t | np.any(x): torch's bitwise or of a bool tensor and a NumPy bool raises NotImplementedError eagerly. The
    trace, which now hands the traced scalar to torch as the scalar, must end the same way (a CellError naming it),
    and where eager NumPy and torch compute a value the trace must not report the call as a Python value."""
    cell = "t = torch.from_numpy(x > 0)\ns = np.any(x)\ny = t | s\n"
    ns = {"np": np, "torch": torch}
    x = SHARED_X.copy()
    eager: dict = dict(ns, x=x)
    try:
        exec(cell, eager)  # noqa: S102 - the test's own cell
        outcome = type(eager["y"])
    except Exception as exc:  # noqa: BLE001 - whatever NumPy and torch make of it, the trace must agree
        outcome = type(exc)
    if issubclass(outcome, Exception):
        with pytest.raises(ln.CellError, match=outcome.__name__):
            ln.trace_cell(cell, ns, inputs={"x": x}, outputs=["y"], profile="full")
    else:
        trace = ln.trace_cell(cell, ns, inputs={"x": x}, outputs=["y"], profile="full")
        assert not any("NotImplemented" in h.message for h in trace.hazards)


DISTRIBUTION_CELL = """\
t = annotate.input_tensors("node", {{"x": x}})
mu = torch.tanh(t)
dist = torch.distributions.Normal(mu, torch.ones_like(mu) * 0.5{options})
y = dist.mean * 2
lp = dist.log_prob(mu * 0.5)
annotate.output_tensors("node", {{"y": y, "lp": lp}})
"""


@pytest.fixture
def distributions_validate():
    """torch.distributions validating its arguments, as by default in a fresh process: torch._dynamo (torch.compile,
    torch.export, run by other tests) turns the checks off process-wide the first time it runs."""
    previous = torch.distributions.Distribution._validate_args
    torch.distributions.Distribution.set_default_validate_args(True)
    yield
    torch.distributions.Distribution.set_default_validate_args(previous)


@pytest.mark.usefixtures("distributions_validate")
@pytest.mark.parametrize("profile", ["leapp", "full"])
def test_an_argument_check_of_torch_distributions_is_named_with_its_switch(profile):
    """``Normal(mu, std)`` and ``dist.log_prob(a)`` branch on their values (``validate_args``, on by default): a
    data-dependent branch inside torch, which used to be reported as an anonymous ``Tensor.__bool__`` at the cell
    line with the generic "use np.where or split the node" fix. It now names torch.distributions, the library line,
    and the switch; with the switch the node is clean and its graph right on fresh inputs."""
    trace = ln.trace_cell(DISTRIBUTION_CELL.format(options=""), {"torch": torch, "x": torch.rand(3)}, profile=profile)
    checks = {h.line: h for h in trace.hazards}
    assert sorted(checks) == [3, 5]
    for line, function in ((3, "__init__"), (5, "_validate_sample")):
        hazard = checks[line]
        assert hazard.kind == "data-dependent-branch" and hazard.severity == "error"
        assert hazard.message.startswith("torch.distributions checks its arguments on traced data here")
        assert hazard.location.startswith("torch/distributions/distribution.py:")
        assert hazard.location.endswith(f" in {function}")
        assert "validate_args=False" in hazard.fix and hazard.fix.startswith(f"At line {line} (")
    fixed = ln.trace_cell(DISTRIBUTION_CELL.format(options=", validate_args=False"),
                          {"torch": torch, "x": torch.rand(3)}, profile=profile)
    assert fixed.hazards == []
    fresh = torch.rand(3) * 4 - 2
    want = fixed.run_eager({"node": {"x": fresh}})["node"]
    y, lp = fixed.nodes["node"](fresh)
    torch.testing.assert_close(y, torch.as_tensor(want["y"]))
    torch.testing.assert_close(lp, torch.as_tensor(want["lp"]))


def test_a_branch_inside_torch_code_names_the_library_line():
    """A branch in a torch function the table does not know has torch's own line as the hazard's location (the frame
    walk for the cell line skips torch's files); in torch's own assertion it decides only whether it raises: a
    check, a warning."""
    cell = ("t = annotate.input_tensors('node', {'x': x})\nu = t * 2\ntorch.testing.assert_close(u, t + t)\n"
            "annotate.output_tensors('node', {'y': u})\n")
    (hazard,) = ln.trace_cell(cell, {"torch": torch, "x": torch.rand(3)}).hazards
    assert hazard.kind == "data-dependent-branch" and hazard.line == 3 and hazard.severity == "warning"
    assert hazard.message.startswith("the truth value of traced data decides only whether the code raises here")
    assert hazard.location.startswith("torch/testing/") and " in " in hazard.location
    # a branch in the cell itself has no location
    cell = ("t = annotate.input_tensors('node', {'x': x})\nu = t * 2\nif u.sum() > 100:\n    u = u + 1\n"
            "annotate.output_tensors('node', {'y': u})\n")
    (hazard,) = ln.trace_cell(cell, {"torch": torch, "x": torch.rand(3)}).hazards
    assert hazard.line == 3 and hazard.location is None


@pytest.mark.parametrize("write, stale", [
    ("u.add_(1)", True),                 # a view taken before: written
    ("u[0, 1] = 5", True),
    ("u[1] = 0", False),                 # other bytes: the view stays traced
    ("u[1:].mul_(2)", False),
    ("u[:, 1:] *= 2", True),             # the write-back reaches row 0's bytes
])
def test_writes_inside_inference_mode_are_followed_as_outside_it(write, stale):
    """A tensor made inside ``torch.inference_mode()`` keeps no write counter, so a view taken before a write into
    its bytes was never found stale: the graph silently read the view as taken. The tracer keeps its own count for
    such tensors (by storage), moved by every write it records."""
    cell = (f"t = annotate.input_tensors('n', {{'t': x}})\nwith torch.inference_mode():\n    u = t * 1\n"
            f"    row = u[0]\n    {write}\n    y = row * 2\nannotate.output_tensors('n', {{'y': y}})\n")
    trace = ln.trace_cell(cell, {"torch": torch, "x": torch.rand(2, 4)})
    if stale:
        hazard = next(h for h in trace.hazards if h.kind == "untraced-call")
        assert hazard.severity == "error" and hazard.line == 6 and "shares memory" in hazard.message
        assert not trace.probe(seed=0).passed
    else:
        assert trace.hazards == []
        fresh = torch.rand(2, 4)
        torch.testing.assert_close(trace.nodes["n"](fresh)[0], fresh[0] * 2)
        assert trace.probe(seed=0).passed


@pytest.mark.parametrize("body", [
    'action = obs["table"][:, k]',          # a 0-d torch index into a NumPy array: an integer
    'action = obs["table"].T[k]',
    'action = obs["table"][:, k1]',         # a one-element index: NumPy takes it as an integer (__index__)
    'action = logits[np.argmax(obs["table"], axis=1)]',  # a traced NumPy index array into a tensor
])
def test_indices_crossing_between_numpy_and_torch_are_recorded_as_numpy_and_torch_take_them(body):
    """A discrete action picked from a table by the policy's argmax, and a tensor indexed by a NumPy argmax: each
    index taken as the eager code takes it (the first raised inside the tracer, the last was read element by
    element, a broken-chain error of the tracer's own making)."""
    torch.manual_seed(0)
    policy = torch.nn.Linear(4, 3).eval()
    cell = ('obs = annotate.input_tensors("n", {"obs": raw, "table": table})\nwith torch.no_grad():\n'
            '    logits = policy(torch.from_numpy(obs["obs"]))\nk = logits.argmax()\n'
            'k1 = logits.argmax(-1, keepdim=True)\n'
            + body + '\nannotate.output_tensors("n", {"action": action})\n')
    namespace = {"np": np, "torch": torch, "policy": policy, "raw": np.array([0.3, -0.2, 0.5, 1.0], np.float32),
                 "table": np.array([[0.0, 1.0, -1.0], [0.5, 0.5, 0.6]], np.float32)}
    for profile in ("leapp", "full"):
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # torch's "non-tuple sequence for indexing" warning: a key read as a list
            t = ln.trace_cell(cell, dict(namespace), profile=profile)
        assert t.hazards == [], t.hazards
        report = t.probe(24, seed=1)
        assert report.passed and report.hazards == [], report


@pytest.mark.parametrize("write", ["b[:, 1:].copy_(a)", "b[1:, ::2].copy_(a[:4, :2])", "b.view(-1)[:3].copy_(a[0])",
                                   "b[1:].add_(a[0].sum())"])
def test_an_in_place_op_on_a_view_of_a_plain_buffer_writes_the_buffer(write):
    """``b = torch.zeros(5, 4); b[:, 1:].copy_(action)``, the usual way to assemble a buffer: the view and its base
    hold no traced data, so the base stayed a plain tensor (an untraced-output error, the probe failing). The base's
    new value is now its present one with the view's recorded value written in (setitem at the write's line; the key
    read from where the view lies). LEAPP 0.7.2 keeps the base plain and raises at output_tensors (measured)."""
    torch.manual_seed(0)
    policy = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3)).eval()
    cell = ("obs = annotate.input_tensors('n', {'obs': raw})\nwith torch.no_grad():\n"
            f"    a = policy(torch.from_numpy(obs)) * 3\nb = torch.zeros(5, 4)\n{write}\n"
            "annotate.output_tensors('n', {'b': b})\n")
    namespace = {"np": np, "torch": torch, "policy": policy,
                 "raw": np.random.default_rng(0).normal(size=(5, 4)).astype(np.float32)}
    for profile, severity in (("full", "warning"), ("leapp", "error")):
        trace = ln.trace_cell(cell, dict(namespace), profile=profile)
        assert [(h.kind, h.severity, h.line) for h in trace.hazards] == [("semantic-mismatch", severity, 5)]
        assert "holds no traced data" in trace.hazards[0].message
        written = [n for n in trace.nodes["n"].graph.graph.nodes if n.name in trace.hazards[0].graph_nodes]
        assert [n.target for n in written] == [ln.tracing.torch_impl.setitem]
        fresh = np.random.default_rng(1).normal(size=(5, 4)).astype(np.float32) * 3
        with torch.no_grad():
            space = {"a": policy(torch.from_numpy(fresh)) * 3, "b": torch.zeros(5, 4)}
            exec(write, space)
            (got,) = trace.nodes["n"](torch.from_numpy(fresh))
        torch.testing.assert_close(got, space["b"])
        assert trace.probe(16, seed=0).passed
    # a view whose key cannot be read from where it lies (transposed) stays what it was: the buffer is untraced
    trace = ln.trace_cell(cell.replace(write, "b.T[1:].copy_(a.T)"), dict(namespace), profile="full")
    assert [(h.kind, h.severity) for h in trace.hazards] == [("untraced-output", "error")]


@pytest.mark.parametrize("write", ["a[:, :2].clamp_(-1.0, 1.0)", "a[0].zero_()", "a[:, 1:].mul_(0.5)",
                                   "a.narrow(1, 0, 2).clamp_(-1.0, 1.0)", "a.view(-1)[:3].zero_()"])
def test_an_in_place_op_on_a_view_is_written_into_its_base(write):
    """``action[:, :2].clamp_(-1, 1)``: the base is written through the view. The graph records the base's new value
    (setitem), where the base was baked with an error at the line that read it and a fix that did not apply. LEAPP
    0.7.2 records the op on the view alone (its export returns the base unwritten, measured): an error in leapp."""
    torch.manual_seed(0)
    policy = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3)).eval()
    cell = ("obs = annotate.input_tensors('n', {'obs': raw})\nwith torch.no_grad():\n"
            f"    a = policy(torch.from_numpy(obs)) * 3\n{write}\nannotate.output_tensors('n', {{'a': a}})\n")
    namespace = {"np": np, "torch": torch, "policy": policy,
                 "raw": np.random.default_rng(0).normal(size=(5, 4)).astype(np.float32)}
    for profile, severity in (("full", "warning"), ("leapp", "error")):
        trace = ln.trace_cell(cell, dict(namespace), profile=profile)
        assert [(h.kind, h.severity, h.line) for h in trace.hazards] == [("semantic-mismatch", severity, 4)]
        assert "on the view alone" in trace.hazards[0].message and "a[:, :2] = a[:, :2].clamp" in trace.hazards[0].fix
        fresh = np.random.default_rng(1).normal(size=(5, 4)).astype(np.float32) * 3
        with torch.no_grad():
            a = policy(torch.from_numpy(fresh)) * 3
            exec(write, {"a": a})
            (got,) = trace.nodes["n"](torch.from_numpy(fresh))
        torch.testing.assert_close(got, a)
        assert trace.probe(16, seed=0).passed


@pytest.mark.parametrize("ctor", ["torch.Tensor", "torch.FloatTensor"])
def test_a_legacy_tensor_constructor_of_a_traced_array_says_what_to_use_instead(ctor):
    """torch.Tensor(obs) / torch.FloatTensor(obs) run eagerly but raise inside torch on the tracer's array type
    ("not a storage 'TracedArray'"), and no wrapper can reach them. The cell error says what is recorded instead."""
    obs = np.arange(4, dtype=np.float32)
    cell = (f'obs = annotate.input_tensors("node", {{"obs": OBS}})\nt = {ctor}(obs)\ny = (t * 2).numpy()\n'
            'annotate.output_tensors("node", {"y": y})\n')
    with pytest.raises(ln.CellError, match=r"line 2: .*use torch\.from_numpy\(x\)") as caught:
        ln.trace_cell(cell, {"np": np, "torch": torch, "OBS": obs}, profile="full")
    assert caught.value.line == 2
    fixed = ln.trace_cell(cell.replace(f"{ctor}(obs)", "torch.from_numpy(obs)"), {"np": np, "torch": torch, "OBS": obs})
    assert fixed.hazards == [] and fixed.probe(8, seed=0).passed


class _NormLimited(torch.nn.Module):
    """An action-norm safety limit, written as robotics code writes it: a branch on the action inside forward."""

    def __init__(self, body: str = "branch"):
        super().__init__()
        torch.manual_seed(0)
        self.net = torch.nn.Sequential(torch.nn.Linear(4, 16), torch.nn.ELU(), torch.nn.Linear(16, 3))
        self.body, self.limit = body, 3.0

    def forward(self, x):
        a = self.net(x)
        if self.body == "branch":
            n = a.norm()
            if n > self.limit:
                a = a * (self.limit / n)
        elif self.body == "extraction":
            a = a / float(a.abs().max())
        elif self.body == "random":
            a = a + 0.1 * torch.randn_like(a)
        elif self.body == "where":  # the fix: select instead of branching
            a = a * torch.clamp(self.limit / a.norm(), max=1.0)
        elif self.body == "weights":  # a branch on the module's own weights, not on its input: no hazard
            if self.net[0].weight.abs().sum() > 0:
                a = a * 2
        return a


@pytest.mark.parametrize("body, kind, text", [
    ("branch", "data-dependent-branch", "if n > self.limit:"),
    ("extraction", "value-extraction", "a = a / float(a.abs().max())"),
    ("random", "nondeterministic", "a = a + 0.1 * torch.randn_like(a)"),
])
def test_what_a_module_forward_does_with_its_input_is_watched(body, kind, text):
    """The graph holds a module whole (one call_module node, run as it is), so the probe passes on a forward that
    branches on its input; jit-trace and ONNX exports kept the branch taken on the trace inputs, and said so nowhere
    (measured: an action norm of 5.2 where the cell limits it to 3). The forward is watched as it runs: a branch, a
    Python value or a random draw on data that comes from the call's inputs is a hazard at the call's line, naming
    the forward's own line."""
    policy = _NormLimited(body).eval()
    cell = ("obs = annotate.input_tensors('n', {'obs': raw})\nwith torch.no_grad():\n"
            "    action = policy(torch.from_numpy(obs))\nannotate.output_tensors('n', {'action': action})\n")
    namespace = {"np": np, "torch": torch, "policy": policy, "raw": np.zeros((1, 4), np.float32)}
    for profile in ("leapp", "full"):
        trace = ln.trace_cell(cell, dict(namespace), profile=profile)
        assert [(h.kind, h.severity, h.line) for h in trace.hazards] == [(kind, "error", 3)], trace.hazards
        hazard = trace.hazards[0]
        assert text in hazard.message and "test_torch_nodes.py:" in hazard.message
        assert [n.op for n in trace.nodes["n"].graph.graph.nodes if n.name in hazard.graph_nodes] == ["call_module"]
    # the fix the hazard gives, and a branch on the module's weights alone, are clean
    for clean in ("where", "weights"):
        namespace["policy"] = _NormLimited(clean).eval()
        trace = ln.trace_cell(cell, dict(namespace), profile="full")
        assert trace.hazards == [] and trace.probe(8, seed=0).passed, (clean, trace.hazards)


class _Recurrent(torch.nn.Module):
    """An rsl_rl-style recurrent policy that keeps its hidden state on itself."""

    def __init__(self, in_place: bool = False):
        super().__init__()
        torch.manual_seed(0)
        self.rnn, self.head, self.in_place = torch.nn.GRU(6, 8), torch.nn.Linear(8, 2), in_place
        self.hidden = None
        self.register_buffer("last", torch.zeros(1, 8))

    def forward(self, x):
        if self.in_place:
            out, h = self.rnn(x.unsqueeze(0), self.last.unsqueeze(0))
            self.last.copy_(h[0])
        else:
            out, self.hidden = self.rnn(x.unsqueeze(0), self.hidden)
        return self.head(out.squeeze(0))


@pytest.mark.parametrize("in_place", [False, True])
def test_a_module_that_keeps_state_between_calls_is_reported_and_the_probe_leaves_it_as_it_was(in_place):
    """The exported node is one call on its declared inputs: a hidden state kept on the module is lost. The probe
    failed with a lookup bug's fix; it is now an untraced-call error at the call, naming the forward's line, with the
    fix to pass the state in and out. The probe ran the user's policy 32 more times and left its state there: the
    modules the graphs call get their attributes, parameters and buffers back after the probe and export."""
    policy = _Recurrent(in_place).eval()
    cell = ("obs = annotate.input_tensors('n', {'obs': raw})\nwith torch.no_grad():\n"
            "    a = policy(torch.from_numpy(obs))\nannotate.output_tensors('n', {'a': a})\n")
    trace = ln.trace_cell(cell, {"np": np, "torch": torch, "policy": policy, "raw": np.ones((1, 6), np.float32)})
    hazard = only_hazard(trace)
    assert (hazard.kind, hazard.severity, hazard.line) == ("untraced-call", "error", 3)
    assert "keeps a value computed from its input on the module" in hazard.message
    assert ("self.last.copy_(h[0])" if in_place else "out, self.hidden = self.rnn(") in hazard.message
    assert "annotate.input_tensors and annotate.output_tensors" in hazard.fix
    hidden, last = policy.hidden, policy.last.clone()
    report = trace.probe(16, seed=0)
    assert not report.passed
    assert policy.hidden is hidden and torch.equal(policy.last, last)  # the probe left the policy as it was
    with pytest.raises(ln.ExportBlocked):
        trace.export(Path(tempfile.mkdtemp()) / "out")
    assert policy.hidden is hidden and torch.equal(policy.last, last)


def only_hazard(trace):
    assert len(trace.hazards) == 1, trace.hazards
    return trace.hazards[0]


class _Heads(torch.nn.Module):
    def __init__(self, returns: str):
        super().__init__()
        torch.manual_seed(0)
        self.mu, self.v, self.returns = torch.nn.Linear(10, 4), torch.nn.Linear(10, 1), returns
        self.log_std = torch.nn.Parameter(torch.zeros(4) - 0.5)

    def forward(self, x):
        if self.returns == "dict":
            return {"mean": torch.tanh(self.mu(x)), "value": self.v(x)}
        return torch.distributions.Normal(self.mu(x), self.log_std.exp(), validate_args=False)


def test_a_module_returning_a_dict_of_tensors_is_recorded_and_one_returning_an_object_says_what_to_return():
    """A dict of tensors ({"mean": mu, "value": v}, actor-critic heads) was a Python value fixed at trace time (an
    error); each key is now a getitem of the call, and every backend exports it. A module returning an object (a
    torch.distributions.Normal) is still baked, with a fix that applies: return the tensors, build it in the cell."""
    obs = np.random.default_rng(0).normal(size=(2, 10)).astype(np.float32)
    cell = ('obs = annotate.input_tensors("node", {"obs": OBS})\nwith torch.no_grad():\n'
            '    out = heads(torch.from_numpy(obs))\n'
            'a = out["mean"] * 2\nannotate.output_tensors("node", {"a": a, "v": out["value"]})\n')
    namespace = {"np": np, "torch": torch, "OBS": obs, "heads": _Heads("dict").eval()}
    trace = ln.trace_cell(cell, namespace, profile="full")
    assert trace.hazards == [] and trace.probe(8, seed=0).passed
    trace.export(Path(tempfile.mkdtemp()) / "out", formats=("jit", "pt2"))
    namespace["heads"] = _Heads("normal").eval()
    trace = ln.trace_cell(cell.replace('out["mean"]', "out.mean").replace('out["value"]', "out.stddev"), namespace)
    hazard = next(h for h in trace.hazards if h.line == 3)
    assert hazard.kind == "untraced-call" and "returns a Normal, not tensors" in hazard.message
    assert "return mu, std" in hazard.fix and "torch.distributions.Normal(mu, std" in hazard.fix


@torch.jit.script
def _limit(t: torch.Tensor) -> torch.Tensor:
    m = t.abs().max()
    if bool(m > 2.0):
        return t * (2.0 / m)
    return t


class _Affine(torch.nn.Module):
    def forward(self, t):
        return t * 2.0 + 1.0


_SCRIPTED_AFFINE = torch.jit.script(_Affine())


@pytest.mark.parametrize("body", ["y = _limit(t * 1)", "y = _limit(t)"])
def test_a_torchscript_function_on_traced_data_is_one_call_with_its_branches(body):
    """A ``@torch.jit.script`` function runs in C++, where no mode sees its ops: its result was a plain tensor, or,
    where it returned its input, the input itself (the graph ``return (x,)``), with no hazard, and the probe passed
    while its draws stayed under the limit. It is one call of the function in the graph, branches kept; LEAPP 0.7.2
    sees none of its ops (an error in leapp, a warning in full)."""
    x = torch.tensor([[0.5, -0.25, 1.0], [0.75, 0.125, -1.5]])
    over = x * 3  # over the limit: the other branch
    cell = f"t = annotate.input_tensors('n', {{'t': x}})\n{body}\nannotate.output_tensors('n', {{'y': y}})\n"
    for profile, severity in (("leapp", "error"), ("full", "warning")):
        trace = ln.trace_cell(cell, {"torch": torch, "x": x.clone(), "_limit": _limit}, profile=profile)
        assert [(h.kind, h.severity, h.line) for h in trace.hazards] == [("untraced-call", severity, 2)]
        assert "_limit is a TorchScript function" in trace.hazards[0].message
        assert trace.hazards[0].graph_nodes
        torch.testing.assert_close(trace.nodes["n"](over)[0], _limit(over))
    assert torch.jit.ScriptFunction.__call__ is torch._C.ScriptFunction.__call__  # put back after the trace


def test_a_scripted_module_is_recorded_whole():
    """``torch.jit.script(module)`` called on traced data raised inside the tracer (AttributeError '_CachedForward'
    looking up its class's forward): one call_module node, no hazard (LEAPP 0.7.2 records it faithfully, measured)."""
    x = torch.tensor([[0.5, -0.25, 1.0], [0.75, 0.125, -1.5]])
    cell = "t = annotate.input_tensors('n', {'t': x})\ny = affine(t)\nannotate.output_tensors('n', {'y': y})\n"
    trace = ln.trace_cell(cell, {"torch": torch, "x": x.clone(), "affine": _SCRIPTED_AFFINE})
    assert trace.hazards == []
    fresh = torch.rand(2, 3)
    torch.testing.assert_close(trace.nodes["n"](fresh)[0], fresh * 2 + 1)


def test_a_gradient_taken_inside_a_node_is_an_error_and_the_probe_runs_the_cell_with_grad():
    """``torch.autograd.grad`` of a tensor the cell made ``requires_grad_``: the graph records neither and raises on
    every input, with no hazard; the probe ran the eager cell under no_grad, where it raised too, and blamed the
    fresh inputs ("narrow the inputs with ranges="). The gradient is an error at its line; the probe runs an eager
    cell that needs grad with grad, and reports the graph's failure."""
    cell = ("t = torch.from_numpy(x).clone().requires_grad_(True)\nout = (t ** 3).sum()\n"
            "g, = torch.autograd.grad(out, t)\ny = g.detach().numpy()")
    x = np.array([[0.5, -1.0], [2.0, 0.25]], np.float32)
    trace = ln.trace_cell(cell, {"np": np, "torch": torch}, inputs={"x": x}, outputs=["y"])
    (hazard,) = trace.hazards
    assert (hazard.kind, hazard.severity, hazard.line) == ("untraced-call", "error", 3)
    assert "takes a gradient inside the node" in hazard.message and "3 * x ** 2" in hazard.fix
    report = trace.probe(8, seed=0)  # it raised CellError before
    assert not report.passed and "the graph raises" in str(report)
    np.testing.assert_allclose(trace.run_eager({"node": {"x": x}})["node"]["y"], 3 * x ** 2)


@pytest.mark.parametrize("load, random", [
    ("policy.load_state_dict(SD)", False),                                      # every drawn weight replaced
    ("", True),                                                                 # the initial weights are the policy
    ("policy.load_state_dict({k: v for k, v in SD.items() if k != '2.bias'}, strict=False)", True),  # one kept
])
def test_a_policy_built_in_the_node_and_loaded_is_not_random(load, random):
    """``policy = nn.Sequential(...); policy.load_state_dict(SD)`` inside the node: nn.Linear's initial draws were a
    nondeterministic error, though load_state_dict replaces them and the graph holds the loaded weights (found by an
    exploration session: the probe passed while the error stood). Draws that stay in the policy are still one."""
    nn = torch.nn
    torch.manual_seed(0)
    state = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 3)).state_dict()
    cell = ("obs = annotate.input_tensors('node', {'obs': obs})\n"
            "policy = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 3))\n"
            f"{load}\npolicy.eval()\nwith torch.no_grad():\n    a = policy(torch.from_numpy(obs))\n"
            "annotate.output_tensors('node', {'a': a.numpy()})\n")
    t = ln.trace_cell(cell, {"np": np, "torch": torch, "nn": nn, "SD": state,
                             "obs": np.ones((2, 8), np.float32)})
    found = [(h.kind, h.line, h.severity) for h in t.hazards if h.kind == "nondeterministic"]
    assert found == ([("nondeterministic", 2, "error")] if random else []), t.hazards
    if not random:
        assert t.ok and t.probe(8, seed=0).passed


def test_a_check_between_two_nodes_is_no_hazard():
    """``assert np.isfinite(normed).all()`` between node 'pre' and node 'policy': it was a value-extraction warning
    saying node 'policy' holds the value as a literal, though no node uses it (found by an exploration session).
    A check or a log between nodes decides nothing any node computes; a value taken there and used still is one."""
    torch.manual_seed(0)
    policy = torch.nn.Sequential(torch.nn.Linear(8, 4)).eval()
    cell = ('obs = annotate.input_tensors("pre", {"obs": obs})\nnormed = np.clip(obs / 2.0, -5, 5)\n'
            'annotate.output_tensors("pre", {"normed": normed})\nCHECK\n'
            'inp = annotate.input_tensors("policy", {"normed": normed})\nwith torch.no_grad():\n'
            '    a = policy(torch.from_numpy(inp)).numpy() * SCALE\n'
            'annotate.output_tensors("policy", {"a": a})\n')
    namespace = {"np": np, "torch": torch, "policy": policy, "obs": np.ones((2, 8), np.float32)}
    for check in ("assert np.isfinite(normed).all()", "if not (normed < 4).all():\n    print('large')"):
        t = ln.trace_cell(cell.replace("CHECK", check).replace("SCALE", "2.0"), dict(namespace))
        assert t.hazards == [], t.hazards
    t = ln.trace_cell(cell.replace("CHECK", "s = normed.max()").replace("SCALE", "s"), dict(namespace))
    assert [h.kind for h in t.hazards if h.line == 4] == ["value-extraction"], t.hazards
