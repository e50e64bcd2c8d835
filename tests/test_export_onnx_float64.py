"""ONNX export of float64 graphs with Python-float operands (``x * 0.1 + 0.3`` of a float64 ``x``).

torch's dynamo ONNX exporter wrote such a number as a float32 constant cast to float64 (0.1 became
0.10000000149011612): the model disagreed with the graph beyond float64's tolerance wherever the result cancels
(``x * 0.1 + 0.3`` near x = -3), ``x * 1e-300`` was 0, and the export's reload check refused the file. Export now
hands that exporter a copy of the graph whose such numbers are float64 tensors; float32 operations keep theirs.
"""

import numpy as np
import pytest
import torch
import yaml

import leapp_notebook as ln
from leapp_notebook import export as export_module
from leapp_notebook.probe import compare

onnx = pytest.importorskip("onnx")
onnxruntime = pytest.importorskip("onnxruntime")
from onnx import numpy_helper  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore:`torch.jit.load` is deprecated:DeprecationWarning")

RNG_RANGE = (-5.0, 5.0)  # x * 0.1 + 0.3 crosses 0 at x = -3: a float32-rounded 0.1 or 0.3 shows there
X64 = np.random.default_rng(7).uniform(*RNG_RANGE, size=(64,))
X64_2D = np.random.default_rng(8).uniform(*RNG_RANGE, size=(16, 8))

# (cell, its float64 input, the Python floats the ONNX model must hold exactly)
FLOAT64_CELLS = {
    "mul_add": ("y = x * 0.1 + 0.3", X64, {0.1, 0.3}),
    "sub_div": ("y = (x - 0.1) / 0.7", X64, {0.1, 0.7}),
    "clip": ("y = np.clip(x * 0.1 + 0.3, -0.2, 0.2)", X64, {0.1, 0.3, -0.2, 0.2}),
    "where": ("y = np.where(x > 0.2, x * 0.1 + 0.3, 0.1)", X64, {0.2, 0.1, 0.3}),
    "pow": ("y = np.abs(x) ** 1.7 - 0.3", X64, {1.7, 0.3}),
    "maximum": ("y = np.maximum(x * 0.1 + 0.3, 0.05)", X64, {0.1, 0.3, 0.05}),
    "tanh": ("y = np.tanh(x * 1.7) - 0.3", X64, {1.7, 0.3}),
    "tiny": ("y = x * 1e-300", X64, {1e-300}),
    "reduction": ("y = np.sum(x * 0.1, axis=1) + 0.3", X64_2D, {0.1, 0.3}),
    "mean": ("y = np.mean(x, axis=0) * 0.7 - 0.2", X64_2D, {0.7, 0.2}),
}


def only_node(trace):
    nodes = trace.nodes
    [node] = nodes.values() if isinstance(nodes, dict) else nodes
    return node


def double_scalars(model):
    """The values of every 0-d float64 initializer and Constant of an ONNX model."""
    tensors = list(model.graph.initializer)
    tensors += [a.t for n in model.graph.node if n.op_type == "Constant" for a in n.attribute if a.name == "value"]
    return {numpy_helper.to_array(t).item() for t in tensors
            if t.data_type == onnx.TensorProto.DOUBLE and numpy_helper.to_array(t).ndim == 0}


def onnx_agrees_with_graph(node, path, inputs_of, n=8, seed=123):
    """The reloaded ONNX model against the traced graph on ``n`` fresh random input sets, at the output's own
    tolerance (float64's: rtol 1e-7, atol 1e-10 scaled), same dtype and shape."""
    session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    names = [i.name for i in session.get_inputs()]
    rng = np.random.default_rng(seed)
    for _ in range(n):
        arrays = inputs_of(rng)
        got = session.run(None, {name: np.asarray(a) for name, a in zip(names, arrays, strict=True)})
        want = [np.asarray(v.detach().numpy() if isinstance(v, torch.Tensor) else v) for v in node(*arrays)]
        for have, expected in zip(got, want, strict=True):
            assert have.dtype == expected.dtype and have.shape == expected.shape
            agree, _, _, first = compare(expected, have)
            assert agree, f"at {first}: onnxruntime {have[first]!r}, graph {expected[first]!r}"


@pytest.mark.parametrize("case", sorted(FLOAT64_CELLS))
def test_float64_cell_with_python_floats_exports_onnx_exactly(case, tmp_path):
    src, x, floats = FLOAT64_CELLS[case]
    trace = ln.trace_cell(src, {"np": np}, inputs={"x": x}, outputs=["y"])
    node = only_node(trace)
    assert node.outputs[0].dtype == "float64"
    # the export's own reload check (4 fresh input sets against the eager cell) passes: before, it refused the file
    paths = trace.export(tmp_path, formats=("onnx",))
    assert [p.name for p in paths] == ["node.onnx", "graph.yaml"]
    doc = yaml.safe_load(paths[-1].read_text())
    assert doc["validated"] is True and doc["models"]["node"]["parameters"]["backend"] == "onnx"
    model = onnx.load(str(paths[0]))
    held = double_scalars(model)
    assert floats <= held, f"{sorted(floats - held)} not held at float64 precision; the model has {sorted(held)}"
    assert not {float(np.float32(v)) for v in floats if float(np.float32(v)) != v} & held  # no float32-rounded copy
    onnx_agrees_with_graph(node, paths[0], lambda rng: [rng.uniform(*RNG_RANGE, size=x.shape)])


def test_tiny_float64_constant_is_not_flushed_to_zero(tmp_path):
    trace = ln.trace_cell("y = x * 1e-300", {"np": np}, inputs={"x": X64}, outputs=["y"])
    [path, _] = trace.export(tmp_path, formats=("onnx",))
    session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    [got] = session.run(None, {"x": X64})
    np.testing.assert_array_equal(got, X64 * 1e-300)  # a float32 1e-300 is 0: the model returned zeros


def test_torch_float64_cell_operators_and_methods(tmp_path):
    """The torch path records ``operator.mul`` and Tensor methods (``x.mul(0.1)``): the same numbers, the same fix."""
    x = torch.from_numpy(X64.copy())
    src = "y = torch.clamp(x * 0.1, -0.2, 0.2) + x.mul(0.3).sub(0.05) + torch.where(x > 0.2, x, 0.1) - 3.0 * x / 7.0"
    trace = ln.trace_cell(src, {"torch": torch}, inputs={"x": x}, outputs=["y"])
    node = only_node(trace)
    [path, _] = trace.export(tmp_path, formats=("onnx",))
    assert {0.1, -0.2, 0.2, 0.3, 0.05, 7.0} <= double_scalars(onnx.load(str(path)))
    onnx_agrees_with_graph(node, path, lambda rng: [torch.from_numpy(rng.uniform(*RNG_RANGE, size=X64.shape))])


def test_float32_cell_is_unchanged(tmp_path):
    x32 = X64.astype(np.float32)
    trace = ln.trace_cell("y = np.clip(x * 0.1 + 0.3, -0.2, 0.2)", {"np": np}, inputs={"x": x32}, outputs=["y"])
    node = only_node(trace)
    module = export_module._module(node)
    # nothing to rewrite: the dynamo exporter gets the node's own graph
    assert export_module._exact_float64_scalars(module, export_module._example_inputs(node)) is module
    [path, _] = trace.export(tmp_path, formats=("onnx",))
    model = onnx.load(str(path))
    assert not double_scalars(model)
    assert all(t.data_type != onnx.TensorProto.DOUBLE for t in model.graph.initializer)
    assert not any(t.name.startswith("_onnx_float64") for t in model.graph.initializer)
    onnx_agrees_with_graph(node, path, lambda rng: [rng.uniform(*RNG_RANGE, size=x32.shape).astype(np.float32)])


def test_mixed_float32_and_float64_cell(tmp_path):
    """A Python float with a float32 tensor stays a float32 operation (NumPy's and torch's promotion); the one with
    the float64 tensor becomes an exact float64 constant."""
    x32 = X64[:16].astype(np.float32)
    w64 = X64[16:32].copy()
    src = "y = x * 0.1 + (w * 0.1 + 0.3)"
    trace = ln.trace_cell(src, {"np": np}, inputs={"x": x32, "w": w64}, outputs=["y"])
    node = only_node(trace)
    assert node.outputs[0].dtype == "float64"
    module = export_module._module(node)
    rewritten = export_module._exact_float64_scalars(module, export_module._example_inputs(node))
    assert rewritten is not module and module.graph is not rewritten.graph
    float32_ops = [n for n in rewritten.graph.nodes if n.op == "call_function" and n.args and n.args[0] is not None
                   and getattr(n.args[0], "target", None) == "x"]
    assert float32_ops and all(0.1 in n.args for n in float32_ops)  # x * 0.1 keeps its Python float
    assert [n.target for n in rewritten.graph.nodes if n.op == "get_attr" and n.target.startswith("_onnx_float64")]
    assert not [n for n in module.graph.nodes if n.op == "get_attr" and n.target.startswith("_onnx_float64")]
    [path, _] = trace.export(tmp_path, formats=("onnx",))
    assert {0.1, 0.3} <= double_scalars(onnx.load(str(path)))
    onnx_agrees_with_graph(node, path, lambda rng: [rng.uniform(*RNG_RANGE, size=16).astype(np.float32),
                                                    rng.uniform(*RNG_RANGE, size=16)])


def test_jit_and_pt2_exports_are_not_rewritten(tmp_path):
    trace = ln.trace_cell("y = x * 0.1 + 0.3", {"np": np}, inputs={"x": X64}, outputs=["y"])
    paths = trace.export(tmp_path, formats="jit, pt2, onnx")
    assert [p.name for p in paths] == ["node.pt", "node.pt2", "node.onnx", "graph.yaml"]
    program = torch.export.load(str(paths[1]))
    assert not any(name.startswith("_onnx_float64") for name in program.state_dict)
    assert not any(name.startswith("_onnx_float64") for name in program.constants)
    assert "_onnx_float64" not in program.graph_module.code
    scripted = torch.jit.load(str(paths[0]))
    assert not any(name.startswith("_onnx_float64") for name, _ in scripted.named_buffers())

