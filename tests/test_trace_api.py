"""The public API contract (DESIGN.md) and tracing hygiene: NumPy is left exactly as it was."""

import numpy as np
import pytest
import torch

import leapp_notebook as ln
from leapp_notebook.tracing.array import TracedArray
from leapp_notebook.tracing.facts import facts

X = np.array([0.5, -0.3, 1.2, 0.8], np.float32)
NUMPY_NAMES = ("zeros", "ones", "empty", "full", "eye", "identity", "array", "asarray", "ascontiguousarray")


def numpy_state():
    return {name: getattr(np, name) for name in NUMPY_NAMES}


def test_numpy_is_restored_after_a_trace_and_after_a_failing_one():
    before = numpy_state()
    ln.trace_cell("y = x * 2", {"np": np, "x": X}, inputs=["x"], outputs=["y"])
    assert numpy_state() == before
    with pytest.raises(ln.CellError):
        ln.trace_cell("y = x * 2\nraise ValueError('boom')", {"np": np, "x": X}, inputs=["x"], outputs=["y"])
    assert numpy_state() == before
    with pytest.raises(ln.TraceError):
        ln.trace_cell("y = x * 2", {"np": np, "x": X}, inputs=["x"], outputs=["missing"])
    assert numpy_state() == before
    assert type(np.zeros(3)) is np.ndarray


def test_no_traced_array_is_left_in_the_namespace():
    ns = {"np": np, "x": X}
    ln.trace_cell("y = x * 2\npair = (x, [x + 1, {'k': x[0:2]}])\nmid = y[1:]", ns, inputs=["x"], outputs=["y"])
    for value in (ns["x"], ns["y"], ns["mid"], ns["pair"][0], ns["pair"][1][0], ns["pair"][1][1]["k"]):
        assert type(value) is np.ndarray
    np.testing.assert_allclose(ns["y"], X * 2)


def test_numpy_scalars_the_cell_made_stay_numpy_scalars_in_the_namespace():
    """The tracer holds a NumPy scalar as a 0-d array while the cell runs; the namespace gets the scalar back."""
    ns = {"np": np, "x": X}
    ln.trace_cell("s = np.sum(x)\nfirst = x[0]\nboth = [s, (first,)]\ny = x * s", ns, inputs=["x"], outputs=["y"])
    for value, kind in ((ns["s"], np.float32), (ns["first"], np.float32), (ns["both"][0], np.float32),
                        (ns["both"][1][0], np.float32)):
        assert type(value) is kind
    assert ns["s"] == X.sum() and type(ns["y"]) is np.ndarray


def test_cell_error_carries_the_cell_line_and_chains_the_original():
    source = "a = x * 2\nb = a.reshape(3, 3)\ny = b"
    with pytest.raises(ln.CellError) as info:
        ln.trace_cell(source, {"np": np, "x": X}, inputs=["x"], outputs=["y"])
    assert info.value.line == 2
    assert "line 2" in str(info.value) and "ValueError" in str(info.value)
    assert isinstance(info.value.__cause__, ValueError)


def test_nested_trace_is_refused_with_a_clear_message():
    source = "import leapp_notebook as ln\ninner = ln.trace_cell('y = 1', {})\ny = x"
    with pytest.raises(ln.TraceError, match="line 2: a trace is already running.*nested"):
        ln.trace_cell(source, {"np": np, "x": X}, inputs=["x"], outputs=["y"])


@pytest.mark.parametrize("kwargs,message", [
    ({"inputs": ["x"], "outputs": None}, "both inputs= and outputs="),
    ({"inputs": ["xx"], "outputs": ["y"]}, "Did you mean 'x'"),
    ({"inputs": ["x"], "outputs": ["y"], "profile": "fast"}, "profile='fast'"),
    ({"inputs": [3], "outputs": ["y"]}, "not a variable name"),
])
def test_bad_arguments_raise_trace_error_saying_what_to_do(kwargs, message):
    with pytest.raises(ln.TraceError, match=message):
        ln.trace_cell("y = x * 2", {"np": np, "x": X}, **kwargs)


@pytest.mark.filterwarnings("ignore:the matrix subclass:PendingDeprecationWarning")
def test_non_array_inputs_are_refused_with_how_to_convert():
    with pytest.raises(ln.TraceError, match="not a NumPy array or torch tensor.*np.asarray"):
        ln.trace_cell("y = x", {"np": np, "x": {"a": 1}}, inputs=["x"], outputs=["y"])
    for value in ([1.0, 2.0], 2.0, (1, 2)):
        with pytest.raises(ln.TraceError, match="np.asarray"):
            ln.trace_cell("y = x + x", {"np": np, "x": value}, inputs=["x"], outputs=["y"])
    with pytest.raises(ln.TraceError, match="ndarray subclass"):
        ln.trace_cell("y = x * x", {"np": np, "x": np.matrix([[1.0, 2.0]])}, inputs=["x"], outputs=["y"])
    with pytest.raises(ln.TraceError, match="ndarray subclass"):
        ln.trace_cell("y = x.sum()", {"np": np, "x": np.ma.masked_array([1.0, 3.0], mask=[0, 1])}, inputs=["x"],
                      outputs=["y"])


def test_inputs_keep_their_identity_and_kind_in_the_namespace():
    x, t = np.arange(3.0), torch.arange(3.0)
    namespace = {"np": np, "torch": torch, "x": x, "t": t}
    trace = ln.trace_cell("y = x * 2\nz = t + 1", namespace, inputs=["x", "t"], outputs=["y", "z"])
    assert namespace["x"] is x and namespace["t"] is t
    assert type(namespace["y"]) is np.ndarray and type(namespace["z"]) is torch.Tensor
    assert not hasattr(namespace["z"], "_lp") and not hasattr(t, "_lp")
    assert [s.kind for s in trace.nodes["node"].inputs] == ["numpy", "torch"]
    assert [s.kind for s in trace.nodes["node"].outputs] == ["numpy", "torch"]


def test_cell_without_nodes_is_refused():
    with pytest.raises(ln.TraceError, match="declared no node"):
        ln.trace_cell("y = 1", {"np": np})


def test_node_graph_runs_on_tensors_and_returns_a_tuple_in_output_order():
    t = ln.trace_cell("s = x.sum(keepdims=True)\ny = x * 2", {"np": np, "x": X}, inputs=["x"],
                      outputs=["y", "s"])
    node = t.nodes["node"]
    assert [spec.name for spec in node.outputs] == ["y", "s"]
    assert node.inputs == [ln.TensorSpec("x", (4,), "float32")]
    out = node.graph(torch.from_numpy(X))
    assert isinstance(out, tuple) and len(out) == 2
    np.testing.assert_allclose(out[0].numpy(), X * 2)
    np.testing.assert_allclose(out[1].numpy(), X.sum(keepdims=True), rtol=1e-6)


def test_graph_is_traceable_by_torch_jit():
    t = ln.trace_cell("y = np.clip(x[::-1] * 2, 0, 1) + np.interp(x, [0.0, 1.0], [1.0, 3.0])",
                      {"np": np, "x": X}, inputs=["x"], outputs=["y"], profile="full")
    graph = t.nodes["node"].graph
    scripted = torch.jit.trace(graph, (torch.from_numpy(X),))
    fresh = np.array([0.9, 0.1, -0.2, 0.4], np.float32)
    np.testing.assert_allclose(scripted(torch.from_numpy(fresh))[0].numpy(),
                               t.run_eager({"node": {"x": fresh}})["node"]["y"], rtol=1e-6)


def test_constants_are_copies_held_as_buffers_of_the_node_module_and_buffer_hooks_see_them():
    """A plain array the cell uses is a buffer of the node's GraphModule (a copy: changing the array after the trace
    changes nothing in the graph), made once per array and contents; torch's hooks on registering a buffer are
    honoured (their replacement is what the graph holds), and the tracer's own copy is no value of the cell."""
    mean = np.array([0.5, 1.0, 1.5, 2.0], np.float32)
    source = "y = (x - MEAN) * SCALE\ny = y - MEAN"
    seen = []

    def hook(module, name, buffer):
        seen.append((name, buffer.numpy().copy()))
        # the node's own module only (its GraphModule registers the buffers it copies from it again)
        return buffer * 10 if name == "_const1" and type(module) is torch.nn.Module else None

    for hooked in (False, True):
        handle = torch.nn.modules.module.register_module_buffer_registration_hook(hook) if hooked else None
        try:
            t = ln.trace_cell(source, {"np": np, "x": X, "MEAN": mean, "SCALE": np.float32(3.0)},
                              inputs=["x"], outputs=["y"])
        finally:
            if handle is not None:
                handle.remove()
        module = t.nodes["node"].graph
        consts = [n for n in module.graph.nodes if n.op == "get_attr"]
        assert [(n.name, n.target) for n in consts] == [("const0", "_const0"), ("const1", "_const1")]
        assert sorted(dict(module.named_buffers())) == ["_const0", "_const1"]
        np.testing.assert_array_equal(module._const0.numpy(), mean)
        assert not np.shares_memory(module._const0.numpy(), mean)
        assert type(module._const0) is torch.Tensor
        scale = 30.0 if hooked else 3.0
        np.testing.assert_allclose(module(torch.from_numpy(X))[0].numpy(), (X - mean) * scale - mean, rtol=1e-6)
    assert [name for name, _ in seen] == ["_const0", "_const1"] * 2  # the node's module and its GraphModule
    np.testing.assert_array_equal(seen[0][1], mean)
    kept = mean.copy()
    mean[:] = 0  # the graph keeps its copy
    np.testing.assert_allclose(module(torch.from_numpy(X))[0].numpy(), (X - kept) * 30.0 - kept, rtol=1e-6)


def test_annotate_passes_values_through_outside_a_trace():
    value = ln.annotate.input_tensors("n", {"a": X})
    assert value is X
    both = ln.annotate.input_tensors("n", {"a": X, "b": X})
    assert set(both) == {"a", "b"}
    assert ln.annotate.output_tensors("n", {"y": X}) is None


def test_several_nodes_in_one_cell_in_declaration_order():
    source = (
        'obs = annotate.input_tensors("pre", {"raw": raw})\n'
        "scaled = obs * 0.5\n"
        'annotate.output_tensors("pre", {"scaled": scaled})\n'
        'a, b = annotate.input_tensors("post", {"a": scaled, "b": bias}).values()\n'
        "act = np.tanh(a + b)\n"
        'annotate.output_tensors("post", {"act": act}, export_with="onnx")\n'
    )
    t = ln.trace_cell(source, {"np": np, "raw": X, "bias": np.ones(4, np.float32)})
    assert list(t.nodes) == ["pre", "post"]
    assert [s.name for s in t.nodes["post"].inputs] == ["a", "b"]
    assert t.nodes["post"].export_with == "onnx"
    assert t.hazards == []
    out = t.run_eager({"pre": {"raw": X * 3}})
    np.testing.assert_allclose(out["pre"]["scaled"], X * 1.5)


def test_using_another_nodes_value_without_input_tensors_is_baked():
    source = (
        'obs = annotate.input_tensors("pre", {"raw": raw})\n'
        "scaled = obs * 0.5\n"
        'annotate.output_tensors("pre", {"scaled": scaled})\n'
        'b = annotate.input_tensors("post", {"b": bias})\n'
        "act = b + scaled\n"
        'annotate.output_tensors("post", {"act": act})\n'
    )
    t = ln.trace_cell(source, {"np": np, "raw": X, "bias": np.ones(4, np.float32)})
    hazard = t.nodes["post"].hazards[0]
    assert hazard.kind == "untraced-call" and hazard.line == 5 and hazard.severity == "error"
    assert "node 'pre'" in hazard.message


TWO_NODES = (
    'a = annotate.input_tensors("pre", {"raw": raw})\n'
    "t0 = np.tanh(a) * 2\n"
    "t1 = torch.from_numpy(t0) * 3\n"
    'annotate.output_tensors("pre", {"mid": t1})\n'
    'b = annotate.input_tensors("post", {"mid": t1})\n'
    "{use}\n"
    'annotate.output_tensors("post", {"y": t2})\n'
)


@pytest.mark.parametrize("use", [
    # a closed node's value through a crossing, a torch call, a property, indexing, a module or a NumPy call: each
    # left the value untraced before, a plain constant in node post with nothing reported (a silent wrong graph)
    "t2 = b + torch.as_tensor(t0)", "t2 = b + torch.from_numpy(t0)", "t2 = b + torch.tensor(t0)",
    "t2 = torch.relu(t1) + b", "t2 = b + t1.T.T", "t2 = b + t1[0]", "t2 = b + torch.as_tensor(t0[0])",
    "t2 = b + torch.from_numpy(np.tanh(t0))", "t2 = b + torch.from_numpy(t1.numpy())", "t2 = lin(t1) + b",
    "t2 = torch.tensor(np.sum(t0)) + b", "t2 = b + float(t0.sum())",
    # ... and with the closed node's value first: the call was made untraced, its result an untraced output
    "t2 = t1 + b", "t2 = torch.maximum(t1, b)", "t2 = torch.stack([t1, b]).sum(0)",
    "t2 = torch.from_numpy(t0 + b.numpy())",
])
def test_another_nodes_value_used_through_any_call_is_baked_and_reported(use: str) -> None:
    source = TWO_NODES.replace("{use}", use)
    ns = {"np": np, "torch": torch, "raw": X, "lin": torch.nn.Linear(4, 4)}
    t = ln.trace_cell(source, ns)
    errors = [h for h in t.hazards if h.severity == "error"]
    assert errors and {h.node for h in errors} == {"post"} and {h.line for h in errors} == {6}, errors
    assert any("node 'pre'" in h.message for h in errors) or any(h.kind == "value-extraction" for h in errors)
    graph = {n.name: n for n in t.nodes["post"].graph.graph.nodes}
    marked = [graph[name] for h in errors for name in h.graph_nodes]
    assert marked and all(n.op == "get_attr" or n.op == "call_function" for n in marked)
    # the probe sees the baked value: node post given pre's output on fresh inputs is not the eager cell
    assert not t.probe(n=4, seed=0).passed
    # and the namespace holds plain values again
    assert type(ns["t0"]) is np.ndarray and type(ns["t2"]) is torch.Tensor and not hasattr(ns["t2"], "_lp")


def test_another_nodes_value_names_the_way_to_declare_it() -> None:
    t = ln.trace_cell(TWO_NODES.replace("{use}", "t2 = b + torch.as_tensor(t0)"), {"np": np, "torch": torch, "raw": X})
    (hazard,) = t.hazards
    assert hazard.message.startswith("a value traced in node 'pre', used in node 'post' without input_tensors")
    assert 'annotate.input_tensors("post", ...)' in hazard.fix and "output of node 'pre'" in hazard.fix
    assert hazard.fix.startswith("At line 6 (`t2 = b + torch.as_tensor(t0)`)")


# a cell of two nodes with a step between them (line 5) and a use in the second node (line 7)
BETWEEN_NODES = (
    'a = annotate.input_tensors("pre", {{"raw": raw}})\n'
    "t0 = np.tanh(a) * 2\n"
    "t1 = torch.from_numpy(t0) * 3\n"
    'annotate.output_tensors("pre", {{"mid": t1}})\n'
    "{between}\n"
    'b = annotate.input_tensors("post", {{"mid": t1}})\n'
    "{post_line}\n"
    'annotate.output_tensors("post", {{"y": t2}})\n'
)


@pytest.mark.parametrize("between, post_line", [
    ("m = t0 * 2", "t2 = b + torch.from_numpy(m)"), ("m = t1 * 2", "t2 = b + m"), ("m = t1[0]", "t2 = b + m"),
    ("m = t1.T.T", "t2 = b + m"), ("m = t1.numpy()", "t2 = b + torch.as_tensor(m)"),
    ("m = np.split(t0, 2, axis=0)", "t2 = b + torch.from_numpy(m[0]).sum()"),
    ("m = lin(t1)", "t2 = b + m"),
])
def test_a_step_between_two_nodes_is_reported_at_its_line(between: str, post_line: str) -> None:
    """A value computed between nodes from the first node's values (no node records the step) and used in the
    next node: baked there, reported at the line that computed it, with the fix to move that line into a node."""
    source = BETWEEN_NODES.format(between=between, post_line=post_line)
    t = ln.trace_cell(source, {"np": np, "torch": torch, "raw": X, "lin": torch.nn.Linear(4, 4)})
    (hazard,) = t.hazards
    assert (hazard.kind, hazard.severity, hazard.node, hazard.line) == ("untraced-call", "error", "post", 5)
    assert hazard.message.startswith("a value computed by ") and "at line 5, outside any node, from values of " \
        "node 'pre', is used at line 7" in hazard.message
    assert hazard.fix.startswith(f"At line 5 (`{between}`): give its result to node 'post' through "
                                 'annotate.input_tensors("post", ...)')
    assert "or move this line into a node" in hazard.fix
    (baked,) = hazard.graph_nodes
    assert {n.name: n for n in t.nodes["post"].graph.graph.nodes}[baked].op == "get_attr"
    assert not t.probe(n=4, seed=0).passed


@pytest.mark.parametrize("between, post_line, what", [
    # a Python value taken between the nodes from the first node's values, or a NumPy scalar used through one: nothing
    # can follow it into node post (it carries no mark), so the next node declared says it may be a literal
    ("k = float(t1.sum())", "t2 = b * k", "Tensor.__float__() = "),
    ("k = t1.sum().item()", "t2 = b * k", "Tensor.item() = "),
    ("k = float(np.sum(t0))", "t2 = b * k", "np.sum() = "),
    ("k = t0.max()", "t2 = b * float(k)", "ndarray.max() = "),
    ("k = int(t1.argmax())", "t2 = b[k:] * 2", "Tensor.__int__() = "),
    ("k = 2.0 if bool(t1.sum() > 0) else -2.0", "t2 = b * k", "Tensor.__bool__() = "),
    ("k = 2.0 if t0.sum() > 0 else -2.0", "t2 = b * k", "ndarray.sum() = "),
])
def test_a_scalar_taken_between_two_nodes_is_reported_by_the_next_node(between: str, post_line: str,
                                                                        what: str) -> None:
    source = BETWEEN_NODES.format(between=between, post_line=post_line)
    t = ln.trace_cell(source, {"np": np, "torch": torch, "raw": X})
    (hazard,) = [h for h in t.hazards if h.line == 5]
    assert (hazard.node, hazard.severity) == ("post", "warning")
    assert hazard.kind == ("data-dependent-branch" if "__bool__" in what else "value-extraction")
    assert "of node 'pre' " in hazard.message and "outside any node (" + what in hazard.message
    assert "node 'post', declared after it" in hazard.message
    assert 'annotate.input_tensors("post", ...)' in hazard.fix and hazard.fix.startswith(f"At line 5 (`{between}`)")
    assert not t.probe(n=4, seed=0).passed  # it was used: the literal is wrong for other inputs


@pytest.mark.parametrize("post_line", ["t2 = b * k", "t2 = torch.relu(b) + k"])
def test_a_numpy_scalar_taken_between_two_nodes_and_used_as_an_operand_is_an_error(post_line: str) -> None:
    # the NumPy scalar itself is followed while it lives: used in node post (a NumPy or a torch call), the warning
    # of its line becomes an error
    t = ln.trace_cell(BETWEEN_NODES.format(between="k = t0.max()", post_line=post_line),
                      {"np": np, "torch": torch, "raw": X})
    (hazard,) = [h for h in t.hazards if h.line == 5]
    assert (hazard.node, hazard.kind, hazard.severity) == ("post", "value-extraction", "error")
    assert "Also on this line: a scalar computed outside any node from values of node 'pre' (ndarray.max() = " \
        in hazard.message and "is used at line 7" in hazard.message
    assert not t.probe(n=4, seed=0).passed


def test_a_scalar_taken_after_the_last_node_is_the_cells_own_business() -> None:
    # a metric printed after the node: eager types, no hazard (no node follows that could use it)
    source = TWO_NODES.replace("{use}", "t2 = b * 2") + ("loss = float(t2.sum())\nm = t0.max()\n"
                                                           "ok = bool(t1.sum() > 0)\n")
    ns = {"np": np, "torch": torch, "raw": X}
    t = ln.trace_cell(source, ns)
    assert t.hazards == []
    assert type(ns["loss"]) is float and type(ns["m"]) is np.float32 and type(ns["ok"]) is bool


def test_a_value_of_a_closed_node_extracted_inside_the_next_one_is_an_error_there() -> None:
    t = ln.trace_cell(TWO_NODES.replace("{use}", "t2 = b * float(t1[0])"), {"np": np, "torch": torch, "raw": X})
    extraction = [h for h in t.hazards if h.kind == "value-extraction"]
    assert [(h.node, h.line, h.severity) for h in extraction] == [("post", 6, "error")]


def test_a_node_input_computed_between_the_nodes_is_the_split_the_fixes_recommend() -> None:
    """A step between two nodes whose result the next node declares as an input is the gap the deploying runtime
    fills (the untraced-call fix: output_tensors before the step, input_tensors after it): no hazard, and the input
    has no producing node in the pipeline."""
    source = (
        'a = annotate.input_tensors("pre", {"raw": raw})\n'
        "t1 = torch.from_numpy(np.tanh(a))\n"
        'annotate.output_tensors("pre", {"mid": t1})\n'
        "m = torch.relu(t1 - 0.5)\n"
        'b = annotate.input_tensors("post", {"mid": m})\n'
        'annotate.output_tensors("post", {"y": b * 2})\n'
    )
    t = ln.trace_cell(source, {"np": np, "torch": torch, "raw": X})
    assert t.hazards == [] and t.nodes["post"].sources == {}
    (y,) = t.nodes["post"](torch.tensor([1.0, -1.0]))
    np.testing.assert_allclose(y, [2.0, -2.0])


def test_values_computed_after_the_last_node_are_not_hazards() -> None:
    """Post-processing after the last node (printing a metric, say) is no part of any node: nothing reported,
    and the namespace holds what the eager cell makes."""
    ns = {"np": np, "torch": torch, "raw": X}
    t = ln.trace_cell('a = annotate.input_tensors("n", {"raw": raw})\ny = torch.from_numpy(np.tanh(a)) * 2\n'
                      'annotate.output_tensors("n", {"y": y})\n'
                      "total = float(y.sum())\nmean = np.mean(a)\nhalf = y[:2].numpy()\nsplit = np.split(a, 2)\n", ns)
    assert t.hazards == []
    assert type(ns["half"]) is np.ndarray and type(ns["mean"]) is np.float32 and type(ns["total"]) is float
    assert all(type(part) is np.ndarray for part in ns["split"])
    np.testing.assert_allclose(ns["half"], np.tanh(X[:2]) * 2, rtol=1e-6)


def test_a_numpy_scalar_given_as_a_node_input_is_refused_as_in_the_eager_cell() -> None:
    """``np.maximum(x, x)`` of a 0-d array is a NumPy scalar, which the tracer holds as a 0-d array: as a node input
    it is refused as the eager scalar is, not taken as an array (torch then computed with it differently)."""
    for made in ("np.maximum(a, a)", "np.float32(2.0)", "np.sum(a)"):
        source = (f'a = annotate.input_tensors("pre", {{"raw": raw}})\nt0 = {made}\n'
                  'annotate.output_tensors("pre", {"mid": a * 1})\n'
                  'm = annotate.input_tensors("post", {"mid": t0})\nannotate.output_tensors("post", {"y": m * 2})\n')
        with pytest.raises(ln.TraceError, match=r"line 4: input 'mid' of node 'post' is a NumPy scalar \((bool|"
                           r"float32)\), not a NumPy array or torch tensor; convert it with np.asarray"):
            ln.trace_cell(source, {"np": np, "raw": np.array(True) if "maximum" in made else X})


def test_outputs_without_inputs_and_open_nodes_are_errors():
    with pytest.raises(ln.TraceError, match="line 1: .*before any annotate.input_tensors"):
        ln.trace_cell('annotate.output_tensors("n", {"y": x})', {"np": np, "x": X})
    with pytest.raises(ln.TraceError, match="no annotate.output_tensors"):
        ln.trace_cell('x2 = annotate.input_tensors("n", {"x": x})', {"np": np, "x": X})


def test_meta_holds_shapes_and_dtypes_not_copies_of_intermediates():
    big = np.random.default_rng(0).normal(size=(64, 64)).astype(np.float32)
    t = ln.trace_cell("a = x * 2\nb = a + 1\ny = np.tanh(b)", {"np": np, "x": big}, inputs=["x"], outputs=["y"])
    for fx_node in t.nodes["node"].graph.graph.nodes:
        for value in fx_node.meta.values():
            assert not isinstance(value, (np.ndarray, torch.Tensor)), fx_node.name
        assert len(facts(fx_node).preview) <= 6


def test_output_dtype_equals_the_eager_dtype():
    cases = {
        "y = x.astype(np.int32).mean() + x": "float64",
        "y = x * 2": "float32",
        "y = (x > 0).sum()": "int64",
        "y = x.astype(np.int32) // 2": "int32",
        "y = x.astype(np.int32) / 2": "float64",
    }
    for source, dtype in cases.items():
        t = ln.trace_cell(source, {"np": np, "x": X}, inputs=["x"], outputs=["y"], profile="full")
        got = t.nodes["node"](X * 3)[0]
        assert got.dtype == np.dtype(dtype), source
        np.testing.assert_allclose(got, t.run_eager({"node": {"x": X * 3}})["node"]["y"], rtol=1e-6)


def test_in_place_updates_are_recorded():
    source = "x += 1\nx[0:2] = 0\nx *= x\ny = x"
    t = ln.trace_cell(source, {"np": np, "x": X.copy()}, inputs=["x"], outputs=["y"])
    # recorded; each write changes the caller's array, which the exported graph does not: warnings, one per line
    assert [(h.kind, h.severity, h.line) for h in t.hazards] == [("untraced-call", "warning", n) for n in (1, 2, 3)]
    assert all("node input 'x' is written in place" in h.message for h in t.hazards)
    clean = ln.trace_cell("x = x.copy()\n" + source, {"np": np, "x": X.copy()}, inputs=["x"], outputs=["y"])
    assert clean.hazards == []  # the fix: a copy first
    fresh = np.array([2.0, 3.0, 4.0, 5.0], np.float32)
    np.testing.assert_allclose(t.nodes["node"](fresh)[0], [0, 0, 25, 36])


def test_printing_a_traced_array_records_nothing(capsys):
    t = ln.trace_cell("print(x)\ny = x * 2", {"np": np, "x": X}, inputs=["x"], outputs=["y"])
    assert "0.5" in capsys.readouterr().out
    ops = [n for n in t.nodes["node"].graph.graph.nodes if n.op == "call_function"]
    assert len(ops) == 1 and t.hazards == []


def test_traced_array_outside_a_trace_is_plain_numpy():
    leaked = X.view(TracedArray)
    assert type(leaked * 2) is np.ndarray or isinstance(leaked * 2, np.ndarray)
    np.testing.assert_allclose(np.asarray(leaked[::-1]), X[::-1])


def test_nothing_of_the_tracer_survives_the_trace():
    cell = '''\
from numpy import *
import collections
Pair = collections.namedtuple("Pair", "a b")
y = x * 2
pair = Pair(y, 1)
def scaled(v, k=y):
    return v * y + k
def make_closure():
    held = y * 1
    def inner(v):
        return v * held
    return inner
inner = make_closure()
class Box:
    def __init__(self, v):
        self.v = v
box = Box(y)
np.ones = my_ones
'''
    def my_ones(*args, **kwargs):
        return "mine"

    namespace = {"np": np, "x": np.arange(3.0), "my_ones": my_ones}
    original_ones = np.ones
    try:
        ln.trace_cell(cell, namespace, inputs=["x"], outputs=["y"])
        assert np.ones is my_ones  # the cell's own patch is kept
        assert namespace["zeros"] is np.zeros and namespace["asarray"] is np.asarray  # star-imports restored
        assert type(namespace["pair"].a) is np.ndarray and type(namespace["pair"]).__name__ == "Pair"
        fn = namespace["scaled"]
        assert type(fn.__defaults__[0]) is np.ndarray
        (held,) = namespace["inner"].__closure__
        assert type(held.cell_contents) is np.ndarray
        assert type(namespace["box"].v) is np.ndarray
    finally:
        np.ones = original_ones


def test_hazard_code_follows_python_line_numbering():
    source = ("x = annotate.input_tensors('n', {'x': a})\ny = x + 1  # a\x0cb\nz = y * 2  # c\u2028d\x85e\n"
              "w = z[0]\nannotate.output_tensors('n', {'w': w})\n")
    trace = ln.trace_cell(source, {"np": np, "a": np.ones(3)})
    broken = next(h for h in trace.hazards if h.kind == "broken-chain")
    assert (broken.line, broken.code) == (4, "w = z[0]")
    model = trace._repr_mimebundle_()["application/vnd.leapp.trace+json"]
    assert any(g.get("code") == "w = z[0]" for node in model["nodes"] for g in node["groups"])


def test_other_threads_get_plain_numpy_and_a_thread_the_cell_starts_is_reported():
    import threading

    seen = []
    stop = threading.Event()

    def bystander():
        while not stop.is_set():
            seen.append(type(np.zeros(2)))

    outside = threading.Thread(target=bystander)
    outside.start()
    cell = '''\
import threading
out = {}
def work():
    out["v"] = x * 3
t = threading.Thread(target=work)
t.start()
t.join()
y = out["v"] + x
'''
    try:
        counts = set()
        for _ in range(3):
            trace = ln.trace_cell(cell, {"np": np, "x": np.arange(3.0)}, inputs=["x"], outputs=["y"])
            counts.add(len(trace.nodes["node"].graph.graph.nodes))
            (hazard,) = [h for h in trace.hazards if h.kind == "untraced-call"]
            assert hazard.line == 4 and "thread" in hazard.message
    finally:
        stop.set()
        outside.join()
    assert seen and set(seen) == {np.ndarray}
    assert len(counts) == 1  # the same graph every run


# --- warnings NumPy and torch raise inside the tracer's hook: shown where the eager cell shows them ----------------

WARNING_CELL = '''\
x = annotate.input_tensors("n", {"x": raw})
y = np.log(x - x)
t = torch.from_numpy(y)
w = torch.nn.functional.softmax(t)
z = np.log(x - x) + w.numpy()
annotate.output_tensors("n", {"z": z})
'''


def warned(source, namespace, action="default"):
    """The warnings a trace of ``source`` shows, as (file, line, category, message, the line's text)."""
    shown = []

    def record(message, category, filename, lineno, file=None, line=None):
        import linecache
        shown.append((filename, lineno, category, str(message), linecache.getline(filename, lineno).strip()))

    with pytest.MonkeyPatch.context() as patch:
        import warnings
        patch.setattr(warnings, "filters", list(warnings.filters))
        warnings.simplefilter(action)
        patch.setattr(warnings, "showwarning", record)
        trace = ln.trace_cell(source, namespace)
        assert warnings.showwarning is record  # put back
    return trace, shown


@pytest.mark.parametrize("retrace", [False, True])
def test_a_warning_raised_in_the_hook_is_shown_at_the_cell_line(retrace):
    namespace = {"np": np, "torch": torch, "raw": np.ones(3)}
    if retrace:  # the second trace of a cell replays its calls (code the tracer generates)
        warned(WARNING_CELL, dict(namespace))
    _, shown = warned(WARNING_CELL, namespace)
    cell = shown[0][0]
    assert cell.startswith("<leapp-cell-")
    assert [(line, category, text) for _, line, category, _, text in shown] == [
        (2, RuntimeWarning, "y = np.log(x - x)"),
        (4, UserWarning, "w = torch.nn.functional.softmax(t)"),
        (5, RuntimeWarning, "z = np.log(x - x) + w.numpy()"),  # the same warning at another line: shown again
    ]
    assert all(filename == cell for filename, *_ in shown)
    assert "divide by zero encountered in log" in shown[0][3] and "softmax" in shown[1][3]


def test_the_users_warning_filters_still_apply_to_them():
    namespace = {"np": np, "torch": torch, "raw": np.ones(3)}
    _, shown = warned(WARNING_CELL, dict(namespace), action="ignore")
    assert shown == []
    _, shown = warned(WARNING_CELL, dict(namespace), action="once")
    assert [line for _, line, *_ in shown] == [2, 4]  # once per message, as in the eager run
    with pytest.raises(ln.CellError, match=r"line 2: RuntimeWarning: divide by zero encountered in log"):
        warned(WARNING_CELL, dict(namespace), action="error")


def test_a_warning_inside_a_helper_is_shown_at_the_helpers_line():
    # the cell calls a function of another file (a library's, a module's forward): eager shows the warning there
    source = ('x = annotate.input_tensors("n", {"x": raw})\ny = helper(x)\nt = policy(torch.from_numpy(y))\n'
              'annotate.output_tensors("n", {"t": t})\n')

    def helper(v):
        return np.log(v - v)

    class Soft(torch.nn.Module):
        def forward(self, t):
            return torch.nn.functional.softmax(t)

    _, shown = warned(source, {"np": np, "torch": torch, "raw": np.ones(3, np.float32), "helper": helper,
                               "policy": Soft().eval()})
    assert [(filename, category, text) for filename, _, category, _, text in shown] == [
        (__file__, RuntimeWarning, "return np.log(v - v)"),
        (__file__, UserWarning, "return torch.nn.functional.softmax(t)")]


def test_a_cell_that_sets_its_own_showwarning_keeps_it():
    import warnings
    before = warnings.showwarning

    def mine(*args, **kwargs):
        pass

    try:
        ln.trace_cell("import warnings\nwarnings.showwarning = mine\ny = x * 2",
                      {"np": np, "x": X, "mine": mine}, inputs=["x"], outputs=["y"])
        assert warnings.showwarning is mine
    finally:
        warnings.showwarning = before
    ln.trace_cell("y = x * 2", {"np": np, "x": X}, inputs=["x"], outputs=["y"])
    assert warnings.showwarning is before


@pytest.mark.parametrize("write, line", [
    # a function or method the lookup does not record with out= wrote into a traced array: the array kept its old
    # node, so the graph read the value from before the write with no hazard (a silent wrong graph)
    ("np.clip(h, 0, 1, out=h)", 3), ("h.clip(0, 1, out=h)", 3), ("h.round(out=h)", 3), ("h.cumsum(out=h)", 3),
    ("np.cumsum(h, out=h)", 3), ("h.max(axis=0, keepdims=True, out=h[:1])", 3),
])
@pytest.mark.parametrize("profile", ["leapp", "full"])
def test_a_write_through_out_of_an_unrecorded_call_is_reported_where_the_array_is_read(write, line, profile):
    source = (f'x = annotate.input_tensors("n", {{"x": raw}})\nh = x * 1\n{write}\ny = h * 2\n'
              'annotate.output_tensors("n", {"y": y})\n')
    t = ln.trace_cell(source, {"np": np, "raw": np.array([3.0, -1.0, 0.5])}, profile=profile)
    errors = [(h.kind, h.line) for h in t.hazards if h.severity == "error"]
    assert ("untraced-call", line) in errors
    # (out= a view of h: h's new value is followed, with the call's baked result written in at the call's line)
    assert ("untraced-output", 5) in errors or "h[:1]" in write
    assert not t.probe(n=4, seed=0).passed  # the graph is wrong: reported, not silent


def test_a_call_with_out_returns_the_out_array_as_numpy_does():
    ns = {"np": np, "raw": np.array([3.0, -1.0, 0.5])}
    ln.trace_cell('x = annotate.input_tensors("n", {"x": raw})\nh = x * 1\nr = np.clip(h, 0, 1, out=h)\n'
                  'same = r is h\nannotate.output_tensors("n", {"y": h * 2})\n', ns)
    assert ns["same"] is True


@pytest.mark.parametrize("steps", [1, 40])
def test_whether_an_output_depends_on_the_inputs_is_found_whichever_operand_carries_the_state(steps):
    """``depends_on_inputs`` (the untraced-output check of every output): the state carried through a loop as the
    first operand, as the last, or through both; outputs computed from constants alone do not depend on them,
    even when they hang off a graph that does."""
    from torch import fx

    from leapp_notebook.tracing.provenance import depends_on_inputs

    graph = fx.Graph()
    x = graph.placeholder("x")
    const = graph.get_attr("c")
    states = {}
    for order in ("first", "last", "middle"):
        h = x
        for _ in range(steps):
            side = graph.call_function(torch.tanh, (graph.call_function(torch.mul, (const, 2.0)),))
            args = {"first": (h, side), "last": (side, h), "middle": (side, h, side)}[order]
            h = graph.call_function(torch.stack, (list(args),))
        states[order] = h
    only_constants = graph.call_function(torch.add, (graph.call_function(torch.neg, (const,)), const))
    mixed = graph.call_function(torch.sub, (only_constants, states["last"]))
    for order, node in states.items():
        assert depends_on_inputs(node), order
    assert depends_on_inputs(mixed) and depends_on_inputs(x)
    assert not depends_on_inputs(only_constants) and not depends_on_inputs(const)
    assert not depends_on_inputs(None) and not depends_on_inputs(2.0)


def test_every_name_the_docs_use_on_the_package_exists():
    """``ln.NAME`` in the README and docs/ is what users type: each must be there (``ln.EXPORT_WITH`` was not)."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    texts = [root / "README.md", *sorted((root / "docs").glob("*.md"))]
    # constants, and what is called (docs/lookup.md names the graph's own targets ln.interp, ln.cbrt: not the API)
    pattern = r"\bln\.([A-Z][A-Z0-9_]+)\b|\bln\.([A-Za-z_][A-Za-z0-9_]*)\("
    used = {a or b for path in texts for a, b in re.findall(pattern, path.read_text())}
    assert "EXPORT_WITH" in used and "trace_cell" in used
    assert sorted(name for name in used if not hasattr(ln, name)) == []


def test_an_array_kept_from_an_earlier_trace_is_data_in_the_next_one(tmp_path):
    """A normalizer updated inside a traced cell (``self.mean = 0.9 * self.mean + 0.1 * x.mean(0)``) keeps the
    tracer's array type after the trace. The next trace of an unrelated cell that reads it took it for a value of
    another node: an error (used without input_tensors) that refused export of a correct node. It is a constant."""
    class Normalizer:
        def __init__(self):
            self.mean = np.zeros(3)

        def update(self, x):
            self.mean = 0.9 * self.mean + 0.1 * x.mean(axis=0)

    norm = Normalizer()
    obs = np.random.default_rng(0).normal(size=(4, 3)).astype(np.float32)
    namespace = {"np": np, "OBS": obs, "norm": norm}
    ln.trace_cell('obs = annotate.input_tensors("node", {"obs": OBS})\nnorm.update(obs)\nout = obs - norm.mean\n'
                  'annotate.output_tensors("node", {"out": out})\n', namespace, profile="full")
    for body in ("out = obs - norm.mean", "m = norm.mean * 2\nout = obs - m", "out = obs[:, 1:] - norm.mean[1:]"):
        t = ln.trace_cell(f'obs = annotate.input_tensors("node", {{"obs": OBS}})\n{body}\n'
                          'annotate.output_tensors("node", {"out": out})\n', namespace, profile="full")
        assert t.hazards == [], (body, t.hazards)
        assert t.probe(8, seed=0).passed
    t.export(tmp_path / "out", formats=("jit",))
