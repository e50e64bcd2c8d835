"""The torch recorder's fast path (tracing/tensor.py ``_fast``): a torch call on tensors traced in the open node at
their current value is recorded as a pending node. Each cell here is traced with the fast path and without it (every
call through the general ``_record``), and the two traces must be the same: the same nodes, names, targets,
arguments, facts and hazards, and graphs that compute the eager values."""

from __future__ import annotations

import operator
import sys

import numpy as np
import pytest
import torch

import leapp_notebook as ln
from leapp_notebook.tracing import tensor as tensor_module
from leapp_notebook.tracing.facts import facts

PLAIN = """\
x = annotate.input_tensors("node", {{"x": x_in}})
t = torch.from_numpy(x)
{body}
annotate.output_tensors("node", {{"y": y}}, export_with="jit")
"""

BODIES = {
    "unary and binary": "a = torch.tanh(t)\nb = a + t\nc = b * 0.5\ny = torch.sigmoid(c - a)",
    "reflected and numbers": "a = 2.0 - t\nb = 0.5 * a\nc = 1 / (b + 3)\ny = -c ** 2",
    "methods with keywords": "a = t.sum(dim=1, keepdim=True)\nb = t.mean(0)\ny = (t - a) * b",
    "indexing": "a = t[:, :2]\nb = t[..., 1:3]\nc = t[0]\nd = t[None, :, 0]\ny = a * b + c[:2] + d[0, :, None]",
    "lists of tensors": "a = torch.cat([t, t * 2], dim=1)\nb = torch.stack((t, t), 0)\ny = a.sum(1) + b.mean(0).sum(1)",
    "strings and dtypes": "a = torch.einsum('ij->ji', t)\nb = a.to(torch.float64)\ny = b.T * 2",
    "tuple results (handed over)": "v, i = torch.max(t, 1)\ny = v + i.to(v.dtype)",
    "a method returning its tensor": "a = t.contiguous()\nb = a.float()\ny = a + b",
    "loop": "y = t\nfor step in range(5):\n    y = torch.clamp(y * 0.9 + 0.1, -1.0, 1.0)",
    "numpy around": "a = torch.tanh(t)\nn = np.sin(a.numpy())\nb = torch.from_numpy(n) * 2\ny = torch.relu(b)",
    "a helper": "def step(u):\n    return torch.tanh(u) * 0.5\ny = step(step(t))",
    "an untraced tensor": "y = t + W",
    "a parameter": "y = t * P",
    "written in place": "a = t * 1\nb = a[0]\na.add_(1)\ny = b * 2 + a[0]",
    "inference mode": "with torch.inference_mode():\n    a = t * 2\n    b = a[0]\n    a.mul_(3)\n    y = b + a[1]",
    "a policy": "with torch.no_grad():\n    y = torch.tanh(policy(t[:, :4])) * 2.0",
    "a random op": "y = t + torch.randn(3, 6) * 0",
    "a NumPy scalar": "y = t * np.float32(2.0)",
    "out=": "y = torch.zeros(3, 6)\ntorch.add(t, t, out=y)",
}


def namespace():
    torch.manual_seed(0)
    return {"np": np, "torch": torch, "x_in": np.random.default_rng(0).standard_normal((3, 6)).astype(np.float32),
            "W": torch.ones(3, 6), "P": torch.nn.Parameter(torch.full((3, 6), 2.0)),
            "policy": torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 6)).eval()}


def _described(trace):
    out = []
    for node in trace.nodes.values():
        graph = []
        for n in node.graph.graph.nodes:
            args = torch.fx.node.map_arg(n.args, lambda a: ("node", a.name))
            kwargs = torch.fx.node.map_arg(dict(n.kwargs), lambda a: ("node", a.name))
            graph.append((n.name, n.op, str(n.target), repr(args), repr(kwargs), facts(n)))
        out.append((node.name, graph))
    hazards = sorted((h.kind, h.line, tuple(h.graph_nodes), h.message, h.fix, h.severity, h.location or "")
                     for h in trace.hazards)
    return out, hazards


@pytest.mark.parametrize("name", list(BODIES))
@pytest.mark.parametrize("profile", ["leapp", "full"])
def test_the_fast_path_records_what_the_general_path_does(name, profile, monkeypatch):
    source = PLAIN.format(body=BODIES[name])
    with monkeypatch.context() as patch:
        patch.setattr(tensor_module, "_FAST", {})
        patch.setattr(tensor_module, "_fast_plan", lambda func: False)
        slow = ln.trace_cell(source, namespace(), profile=profile)
    fast = ln.trace_cell(source, namespace(), profile=profile)
    again = ln.trace_cell(source, namespace(), profile=profile)  # a re-trace, its specs and site facts found again
    assert _described(fast) == _described(slow)
    assert _described(again) == _described(slow)
    ns = namespace()
    node = fast.nodes["node"]
    (y,) = node(ns["x_in"])
    (want,) = slow.nodes["node"](ns["x_in"])
    np.testing.assert_array_equal(np.asarray(y), np.asarray(want))


def test_plain_torch_calls_take_the_fast_path(monkeypatch):
    """The general path is not reached by a loop of torch calls on the node's own tensors (so the equivalence test
    above compares two different paths), and is for what the fast path declines."""
    calls = []
    general = tensor_module._record

    def counted(sess, builder, func, name, *args, **kwargs):
        calls.append(name)
        return general(sess, builder, func, name, *args, **kwargs)

    monkeypatch.setattr(tensor_module, "_record", counted)
    ln.trace_cell(PLAIN.format(body=BODIES["loop"]), namespace())
    assert len(calls) <= 1  # the first tensor's call (it sets up the module hook) at most
    calls.clear()
    ln.trace_cell(PLAIN.format(body=BODIES["an untraced tensor"] + "\nz = y.add_(1)\nv, i = torch.max(y, 1)"),
                  namespace())
    assert {"add", "add_", "max"} <= set(calls)


def test_a_stale_view_is_still_caught_after_fast_calls():
    """The fast path takes a tensor only at its current write count: a view read after a write into its tensor goes
    the general way, and is reported at the line that reads it, indexed again from the tensor's new value
    (LEAPP 0.7.2 keeps the view as taken: view-read-stale)."""
    source = PLAIN.format(body="a = torch.tanh(t)\nb = a[0]\na.mul_(2)\nc = b * 3\ny = c + a[0]")
    trace = ln.trace_cell(source, namespace())
    (hazard,) = trace.hazards
    assert (hazard.kind, hazard.severity, hazard.line) == ("semantic-mismatch", "error", 6)
    assert "'b' is recorded correctly here" in hazard.message and "a view once" in hazard.message
    assert "take the view after the last write" in hazard.fix
    marked = [n for n in trace.nodes["node"].graph.graph.nodes if n.name in hazard.graph_nodes]
    assert [n.target for n in marked] == [operator.getitem] and facts(marked[0]).const is None


CROSSED = """\
x = annotate.input_tensors("node", {"x": x_in})
for i in range(3):
    a = {op}
    t = {crossing}
annotate.output_tensors("node", {"y": t})
"""
KEPT = """\
x = annotate.input_tensors("node", {"x": x_in})
for i in range(3):
    a = {op}
    b = a * 2
annotate.output_tensors("node", {"y": b})
"""


def _kinds(trace):
    return [facts(n).kind for n in trace.nodes["node"].graph.graph.nodes if n.op in ("call_function", "call_method")]


@pytest.mark.parametrize("op, crossing, kind", [
    ("np.tanh(x)", "torch.from_numpy(a)", "numpy"),  # a replayed NumPy call's node, crossed to torch
    ("torch.tanh(torch.from_numpy(x))", "a.numpy()", "torch"),  # a fast-path torch call's node, crossed to NumPy
])
def test_a_crossing_does_not_change_the_facts_other_nodes_share(op, crossing, kind):
    """The facts record of a replayed or fast-path node serves every node of its op at its site, in this trace and
    later ones (``RecordingGraph.flush``). A crossing gives its node a value of the other kind: that node gets a copy,
    and the other nodes, a later cell's at the same line among them, keep theirs. (Written in place, the crossing
    turned the nodes of a trace already returned to the other kind, and those of every later trace at that line.)"""
    ns = {"np": np, "torch": torch, "x_in": np.ones((2, 3), np.float32)}
    kept = ln.trace_cell(KEPT.replace("{op}", op), dict(ns))
    before = _kinds(kept)
    assert set(before) == {kind}
    crossed = ln.trace_cell(CROSSED.replace("{op}", op).replace("{crossing}", crossing), dict(ns))
    other = "torch" if kind == "numpy" else "numpy"
    assert other in _kinds(crossed)  # the crossed nodes
    assert _kinds(kept) == before  # a trace already returned
    assert _kinds(ln.trace_cell(KEPT.replace("{op}", op), dict(ns))) == before  # a later one at the same line


SITES = """\
x = annotate.input_tensors("node", {"x": x_in})
def to_torch(a):
    return torch.from_numpy(a * 1.0)
def post(u):
    return torch.tanh(u) * 2.0
t = to_torch(x)
y = post(t)
z = [torch.relu(v) for v in (y,)][0]
w = postlib.double(z)
out = (w - 1).numpy()
annotate.output_tensors("node", {"y": out})
"""


@pytest.mark.parametrize("fast", [True, False])
def test_torch_calls_are_placed_at_their_cell_line_helper_and_library_line(fast, tmp_path, monkeypatch):
    """Where each torch call was made, however it reaches the recorder: a torch function or a Tensor operator from
    a helper the cell defines, from a comprehension, from a library module (its file and line as the location),
    and the crossings; the same with the fast path and without it, on a first trace and a re-trace."""
    (tmp_path / "postlib.py").write_text("import torch\n\n\ndef double(u):\n    return torch.sigmoid(u) + u\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "postlib", raising=False)
    import postlib

    if not fast:
        monkeypatch.setattr(tensor_module, "_FAST", {})
        monkeypatch.setattr(tensor_module, "_fast_plan", lambda func: False)
    lib = f"{tmp_path / 'postlib.py'}:5 in double"
    for _ in range(2):
        trace = ln.trace_cell(SITES, {"np": np, "torch": torch, "postlib": postlib,
                                      "x_in": np.ones((2, 3), np.float32)})
        placed = [(n.name, facts(n).line, facts(n).helper, facts(n).location, facts(n).numpy)
                  for n in trace.nodes["node"].graph.graph.nodes if n.op not in ("placeholder", "output")]
        assert placed == [("mul", 3, "to_torch", None, "np.multiply"), ("tanh", 5, "post", None, "torch.tanh"),
                          ("mul_1", 5, "post", None, "Tensor.mul"), ("relu", 8, "<listcomp>", None, "torch.relu"),
                          ("sigmoid", 9, "double", lib, "torch.sigmoid"), ("add", 9, "double", lib, "Tensor.add"),
                          ("sub", 10, None, None, "Tensor.sub")]


def test_a_crossing_is_placed_at_its_cell_line_and_helper():
    """``torch.as_tensor`` (a patched function, which finds the site for the recorder) from a helper and from the
    cell's top level, on a first trace and a re-trace."""
    source = """\
x = annotate.input_tensors("node", {"x": x_in})
def to_double(a):
    return torch.as_tensor(a, dtype=torch.float64)
d = to_double(x)
e = torch.as_tensor(x, dtype=torch.float64)
y = d + e
annotate.output_tensors("node", {"y": y})
"""
    for _ in range(2):
        trace = ln.trace_cell(source, {"np": np, "torch": torch, "x_in": np.ones((2, 3), np.float32)})
        assert [(n.name, facts(n).line, facts(n).helper, facts(n).numpy)
                for n in trace.nodes["node"].graph.graph.nodes if n.op not in ("placeholder", "output")] == [
            ("to", 3, "to_double", "torch.as_tensor"), ("to_1", 5, None, "torch.as_tensor"),
            ("add", 6, None, "Tensor.add")]


def test_the_table_of_fast_path_plans_is_bounded(monkeypatch):
    """One plan per torch callable, kept across traces: a full table starts over, and the trace is the same."""
    full = {object(): False for _ in range(tensor_module._MAX_PLANS)}
    monkeypatch.setattr(tensor_module, "_FAST", full)
    source = PLAIN.format(body=BODIES["loop"])
    trace = ln.trace_cell(source, namespace())
    assert 0 < len(full) < 50
    assert _described(trace) == _described(ln.trace_cell(source, namespace()))
