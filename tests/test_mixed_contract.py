"""The mixed NumPy/torch node contract (DESIGN.md, "Mixed NumPy and torch nodes"; issue 8), through the public
API only: torch inputs and outputs with their kind, one graph across the crossings, modules as submodules,
and the torch-side hazards at their cell line."""

import numpy as np
import pytest
import torch
from torch import nn

import leapp_notebook as ln


class _PassThrough:
    """``annotate`` for the plain eager run of a cell."""

    @staticmethod
    def input_tensors(node, tensors):
        return next(iter(tensors.values()))

    @staticmethod
    def output_tensors(node, tensors, **kwargs):
        return tensors


def _mlp(train: bool = False, dropout: bool = False) -> nn.Module:
    torch.manual_seed(0)
    layers = [nn.Linear(4, 8), nn.Tanh()] + ([nn.Dropout(0.5)] if dropout else []) + [nn.Linear(8, 2)]
    return nn.Sequential(*layers).train(train)


def _eager(source: str, namespace: dict) -> dict:
    ns = {**namespace, "annotate": _PassThrough()}
    exec(compile(source, "<eager>", "exec"), ns)
    return ns


POLICY_CELL = '''\
x = annotate.input_tensors("node", {"x": x})
obs = (x - 0.1) / 0.5
t = torch.from_numpy(obs)
with torch.no_grad():
    a = policy(t)
y = np.clip(a.detach().numpy() * 2.0, -1.0, 1.0)
annotate.output_tensors("node", {"y": y}, export_with="jit")
'''


def test_inputs_and_outputs_keep_their_kind_and_the_namespace_holds_plain_values():
    source = ('x = annotate.input_tensors("node", {"x": x})\n'
              'o = annotate.input_tensors("node", {"o": o})\n'
              't = torch.from_numpy(o) + x\n'
              'y = t * 2\n'
              'z = t.numpy() - 1.0\n'
              'annotate.output_tensors("node", {"y": y, "z": z}, export_with="jit")\n')
    x = torch.tensor([0.5, -0.3, 1.2, 0.8])
    o = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
    ns = {"np": np, "torch": torch, "x": x, "o": o}
    trace = ln.trace_cell(source, ns)
    node = trace.nodes["node"]
    assert [(s.name, s.kind, tuple(s.shape)) for s in node.inputs] == [("x", "torch", (4,)), ("o", "numpy", (4,))]
    assert [(s.name, s.kind) for s in node.outputs] == [("y", "torch"), ("z", "numpy")]
    assert trace.hazards == []
    for name, kind in (("x", torch.Tensor), ("o", np.ndarray), ("t", torch.Tensor), ("y", torch.Tensor),
                       ("z", np.ndarray)):
        assert type(ns[name]) is kind, name  # never a traced subclass
    assert torch.equal(x, torch.tensor([0.5, -0.3, 1.2, 0.8]))  # the caller's tensor is unchanged
    y, z = node.graph(torch.tensor([1.0, 0.0, -1.0, 2.0]), torch.from_numpy(np.ones(4, np.float32)))
    assert torch.allclose(y, torch.tensor([4.0, 2.0, 0.0, 6.0]))
    assert torch.allclose(torch.as_tensor(z), torch.tensor([1.0, 0.0, -1.0, 2.0]))


def test_policy_node_graph_on_tensors_equals_the_eager_cell_and_keeps_the_module():
    policy = _mlp()
    x = np.array([0.5, -0.3, 1.2, 0.8], np.float32)
    trace = ln.trace_cell(POLICY_CELL, {"np": np, "torch": torch, "policy": policy, "x": x})
    assert trace.hazards == []
    graph = trace.nodes["node"].graph
    assert any(n.op == "call_module" for n in graph.graph.nodes), "the policy is one call_module node"
    n_params = sum(p.numel() for p in policy.parameters())
    assert n_params == 58 and sum(p.numel() for p in graph.parameters()) == n_params  # weights stay parameters
    rng = np.random.default_rng(0)
    for _ in range(4):
        fresh = rng.uniform(-1.5, 2.0, 4).astype(np.float32)
        want = _eager(POLICY_CELL, {"np": np, "torch": torch, "policy": policy, "x": fresh.copy()})["y"]
        got = graph(torch.from_numpy(fresh))
        assert isinstance(got, tuple) and len(got) == 1 and isinstance(got[0], torch.Tensor)
        np.testing.assert_allclose(got[0].numpy(), want, rtol=1e-5, atol=1e-6)
    assert trace.probe(n=8, seed=0).passed


@pytest.mark.parametrize("profile", ["leapp", "full"])
def test_a_dropout_policy_in_training_mode_is_a_training_mode_error(profile):
    source = ('x = annotate.input_tensors("node", {"x": x})\n'
              'y = policy(x)\n'
              'annotate.output_tensors("node", {"y": y}, export_with="jit")\n')
    ns = {"np": np, "torch": torch, "policy": _mlp(train=True, dropout=True), "x": torch.ones(4)}
    trace = ln.trace_cell(source, ns, profile=profile)
    found = [h for h in trace.hazards if h.kind == "training-mode"]
    assert found, [h.kind for h in trace.hazards]
    hazard = found[0]
    assert (hazard.severity, hazard.line, hazard.code.strip()) == ("error", 2, "y = policy(x)")
    assert ".eval()" in hazard.fix
    assert hazard.graph_nodes
    assert not trace.ok


@pytest.mark.parametrize("profile", ["leapp", "full"])
def test_float_of_a_traced_max_is_a_value_extraction_error_at_its_line(profile):
    source = ('x = annotate.input_tensors("node", {"x": x})\n'
              'a = torch.tanh(x)\n'
              's = float(a.abs().max())\n'
              'y = a / s\n'
              'annotate.output_tensors("node", {"y": y}, export_with="jit")\n')
    trace = ln.trace_cell(source, {"np": np, "torch": torch, "x": torch.tensor([0.5, -0.3, 1.2, 0.8])},
                          profile=profile)
    found = [h for h in trace.hazards if h.kind == "value-extraction"]
    assert [(h.severity, h.line, h.code.strip()) for h in found] == [("error", 3, "s = float(a.abs().max())")]
    if profile == "leapp":  # LEAPP 0.7.2 inlines the trace-time max: the probe exposes it
        report = trace.probe(n=8, seed=0)
        assert not report.passed and report.outputs["y"].mismatches > 0 and "y" in report.baked


def test_an_eval_policy_under_no_grad_then_numpy_has_no_hazard():
    source = ('x = annotate.input_tensors("node", {"x": x})\n'
              'with torch.no_grad():\n'
              '    a = policy(x)\n'
              'y = np.maximum(a.detach().numpy(), 0.0)\n'
              'annotate.output_tensors("node", {"y": y}, export_with="jit")\n')
    for profile in ("leapp", "full"):
        ns = {"np": np, "torch": torch, "policy": _mlp(dropout=True), "x": torch.tensor([0.5, -0.3, 1.2, 0.8])}
        trace = ln.trace_cell(source, ns, profile=profile)
        assert trace.hazards == [], [(h.kind, h.line) for h in trace.hazards]
        assert type(ns["y"]) is np.ndarray
        assert trace.probe(n=8, seed=0).passed


def test_a_random_op_is_nondeterministic_and_an_output_that_requires_grad_does_not_crash():
    source = ('x = annotate.input_tensors("node", {"x": x})\n'
              'n = torch.randn_like(x)\n'
              'y = policy(x) + n[:2]\n'
              'annotate.output_tensors("node", {"y": y}, export_with="jit")\n')
    ns = {"np": np, "torch": torch, "policy": _mlp(), "x": torch.ones(4)}
    trace = ln.trace_cell(source, ns)
    assert [(h.kind, h.severity, h.line) for h in trace.hazards if h.kind == "nondeterministic"] == \
        [("nondeterministic", "error", 2)]
    assert type(ns["y"]) is torch.Tensor
    clean = source.replace("n = torch.randn_like(x)", "n = x * 0")
    trace = ln.trace_cell(clean, {"np": np, "torch": torch, "policy": _mlp(), "x": torch.ones(4)})
    assert trace.hazards == []
    assert trace.probe(n=4, seed=0).passed  # the policy output requires grad: probing it must not crash
