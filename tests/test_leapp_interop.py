"""The exported YAML is a LEAPP pipeline: ``leapp.InferenceManager`` loads it and matches the eager cell."""

import contextlib
import io
import logging

import numpy as np
import pytest
import torch
from conftest import SEED_INTERP_CELL

import leapp_notebook as ln

leapp = pytest.importorskip("leapp")
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def inference_manager(yaml_path):
    # LEAPP's logger may print while loading; keep the test output clean and its handlers untouched.
    logger = logging.getLogger("leapp")
    handlers = list(logger.handlers)
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            return leapp.InferenceManager(str(yaml_path))
    finally:
        logger.handlers = handlers


def run(manager, feed):
    with torch.no_grad():
        out = manager({key: torch.from_numpy(np.ascontiguousarray(value)) for key, value in feed.items()})
    return {key: value.numpy() for key, value in out.items()}


def test_exported_seed_node_runs_in_leapp_like_the_eager_cell(seed_namespace, tmp_path):
    tr = ln.trace_cell(SEED_INTERP_CELL, seed_namespace, profile="full")
    yaml_path = tr.export(tmp_path)[-1]
    manager = inference_manager(yaml_path)
    assert manager.inputs == ["node/state"] and manager.outputs == ["node/result"]
    rng = np.random.default_rng(0)
    for _ in range(4):
        fresh = rng.uniform(-0.2, 1.2, 4).astype(np.float32)
        expected = tr.run_eager({"node": {"state": fresh}})["node"]["result"]
        got = run(manager, {"node/state": fresh})["node/result"]
        assert got.dtype == expected.dtype
        np.testing.assert_allclose(got, expected, rtol=1e-12)


def test_exported_onnx_node_with_a_0d_output_runs_in_leapp(tmp_path):
    cell = '''\
x = annotate.input_tensors("node", {"x": raw})
annotate.output_tensors("node", {"y": np.clip(x * 2.0 + 1.0, 0.0, 2.5), "s": np.sum(x)}, export_with="onnx")
'''
    tr = ln.trace_cell(cell, {"np": np, "raw": np.array([0.5, -0.3, 1.2, 0.8], np.float32)})
    manager = inference_manager(tr.export(tmp_path, formats=["onnx"])[-1])
    fresh = np.array([-1.0, 0.1, 0.4, 2.0], np.float32)
    expected = tr.run_eager({"node": {"x": fresh}})["node"]
    got = run(manager, {"node/x": fresh})
    np.testing.assert_allclose(got["node/y"], expected["y"], rtol=1e-6)
    assert got["node/s"].shape == () and got["node/s"] == pytest.approx(float(expected["s"]))


def test_exported_two_node_pipeline_runs_in_leapp(tmp_path):
    cell = '''\
a = annotate.input_tensors("pre", {"x": x_in, "k": k_in})
annotate.output_tensors("pre", {"y": a["x"] * 2.0 + a["k"].astype(np.float32)})
b = annotate.input_tensors("post", {"z": z_in})
annotate.output_tensors("post", {"w": np.tanh(b) - np.mean(b, axis=0, keepdims=True)})
'''
    namespace = {"np": np, "x_in": np.array([0.1, 0.5, 0.9], np.float32),
                 "k_in": np.array([1, 2, 3], np.int32),
                 "z_in": np.array([[0.2, -0.4], [1.0, 0.3]], np.float32)}
    tr = ln.trace_cell(cell, namespace)
    manager = inference_manager(tr.export(tmp_path, name="pipeline")[-1])
    assert manager.inputs == ["pre/x", "pre/k", "post/z"]
    inputs = {"pre": {"x": np.array([0.7, -0.2, 0.3], np.float32), "k": np.array([4, 0, 2], np.int32)},
              "post": {"z": np.array([[0.5, 0.1], [-0.9, 0.8]], np.float32)}}
    expected = tr.run_eager(inputs)
    feed = {f"{node}/{name}": value for node, values in inputs.items() for name, value in values.items()}
    got = run(manager, feed)
    np.testing.assert_allclose(got["pre/y"], expected["pre"]["y"], rtol=1e-12)
    np.testing.assert_allclose(got["post/w"], expected["post"]["w"], rtol=1e-6)


def test_a_node_fed_by_another_nodes_output_is_a_data_flow_edge_leapp_runs(tmp_path):
    cell = '''\
obs = annotate.input_tensors("pre", {"raw": raw})
scaled = (obs - 0.5) * 2.0
annotate.output_tensors("pre", {"scaled": scaled, "energy": np.sum(obs * obs, keepdims=True)})
act_in = annotate.input_tensors("post", {"obs": scaled})
annotate.output_tensors("post", {"action": np.tanh(act_in)})
'''
    tr = ln.trace_cell(cell, {"np": np, "raw": np.array([0.1, 0.5, 0.9], np.float32)})
    assert tr.nodes["post"].sources == {"obs": "pre/scaled"}
    yaml_path = tr.export(tmp_path, name="chain")[-1]
    text = yaml_path.read_text()
    assert "pre/scaled: [post/obs]" in text
    manager = inference_manager(yaml_path)
    assert manager.inputs == ["pre/raw"]
    assert sorted(manager.outputs) == ["post/action", "pre/energy"]
    fresh = np.array([0.3, -0.4, 1.1], np.float32)
    got = run(manager, {"pre/raw": fresh})
    np.testing.assert_allclose(got["post/action"], np.tanh((fresh - 0.5) * 2.0), rtol=1e-6)
    np.testing.assert_allclose(got["pre/energy"], np.sum(fresh * fresh, keepdims=True), rtol=1e-6)


@pytest.mark.parametrize("export_with", ["jit", "jit-script", "jit-trace", "onnx", "onnx-dynamo", "onnx-torchscript",
                                         "exported-program", "pt2"])
def test_every_export_with_loads_in_leapps_inference_manager(seed_namespace, tmp_path, export_with):
    if "onnx" in export_with:
        pytest.importorskip("onnxruntime")
    cell = SEED_INTERP_CELL.replace('export_with="jit"', f'export_with="{export_with}"')
    tr = ln.trace_cell(cell, seed_namespace, profile="full")
    yaml_path = tr.export(tmp_path, formats=[export_with])[-1]
    manager = inference_manager(yaml_path)
    assert manager.nodes["node"].model is not None
    rng = np.random.default_rng(1)
    for _ in range(3):
        fresh = rng.uniform(-0.2, 1.2, 4).astype(np.float32)
        expected = tr.run_eager({"node": {"state": fresh}})["node"]["result"]
        got = run(manager, {"node/state": fresh})["node/result"]
        assert got.dtype == expected.dtype and got.shape == expected.shape
        np.testing.assert_allclose(got, expected, rtol=1e-6 if "onnx" in export_with else 1e-12)


def test_a_selection_runs_in_leapp_for_any_count_and_the_yaml_says_its_shape_varies(tmp_path):
    """``x[x > 1.0]`` between two nodes: LEAPP's InferenceManager passes each run's tensor on as it is, so the export
    runs like the eager cell for every count (why ``data-dependent-shape`` is a warning), while the YAML declares the
    trace-time length (3) and carries the warning for a consumer that sizes buffers from it."""
    cell = '''\
x = annotate.input_tensors("pre", {"x": raw})
y = x[x > 1.0] * 2.0
annotate.output_tensors("pre", {"y": y})
z = annotate.input_tensors("post", {"y": y})
annotate.output_tensors("post", {"w": z + 1.0})
'''
    tr = ln.trace_cell(cell, {"np": np, "raw": np.array([0.5, 1.5, 2.5, 3.5], np.float32)})
    yaml_path = tr.export(tmp_path)[-1]
    text = yaml_path.read_text()
    assert "shape: [3]" in text and "kind: data-dependent-shape" in text and "validated: true" in text
    manager = inference_manager(yaml_path)
    for fresh in ([3.0, 0.0, 2.0, 1.5], [0.5, 0.5, 3.0, 0.5], [1.5, 2.5, 3.5, 4.5], [0.0, 0.0, 0.0, 0.0]):
        fresh = np.array(fresh, np.float32)
        expected = 2.0 * fresh[fresh > 1.0] + 1.0
        np.testing.assert_allclose(run(manager, {"pre/x": fresh})["post/w"], expected)


def test_an_onnx_node_with_an_input_and_an_output_of_one_name_runs_in_leapp(tmp_path):
    # ONNX holds one name once: the YAML names them hist_in / hist_out, as LEAPP 0.7.2's own ONNX export does
    cell = '''\
obs = annotate.input_tensors("node", {"obs": OBS})
hist = annotate.input_tensors("node", {"hist": HIST})
hist = np.concatenate([hist[1:], obs[None]], axis=0)
annotate.output_tensors("node", {"hist": hist}, export_with="onnx")
'''
    tr = ln.trace_cell(cell, {"np": np, "OBS": np.ones(3, np.float32), "HIST": np.zeros((4, 3), np.float32)})
    manager = inference_manager(tr.export(tmp_path, formats=["onnx"])[-1])
    assert manager.inputs == ["node/obs", "node/hist_in"] and manager.outputs == ["node/hist_out"]
    obs, hist = np.full(3, 2, np.float32), np.arange(12, dtype=np.float32).reshape(4, 3)
    got = run(manager, {"node/obs": obs, "node/hist_in": hist})["node/hist_out"]
    np.testing.assert_array_equal(got, np.concatenate([hist[1:], obs[None]], axis=0))
