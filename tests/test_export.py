"""Export: only validated nodes leave, in LEAPP's layout, written atomically and checked after reloading."""

import copy
import dataclasses
import hashlib

import numpy as np
import pytest
import torch
import yaml
from conftest import SEED_INTERP_CELL

import leapp_notebook as ln
from leapp_notebook import export as export_module

CLIP_CELL = '''\
x = annotate.input_tensors("node", {"x": raw})
y = np.clip(x * 2.0 + 1.0, 0.0, 2.5)
annotate.output_tensors("node", {"y": y, "s": np.sum(x)}, export_with="onnx")
'''
RAW = np.array([0.5, -0.3, 1.2, 0.8], np.float32)
pytestmark = pytest.mark.filterwarnings("ignore:`torch.jit.load` is deprecated:DeprecationWarning")


def clip_trace(scale="2.0"):
    return ln.trace_cell(CLIP_CELL.replace("2.0", scale), {"np": np, "raw": RAW.copy()})


def snapshot(directory):
    """Every file's bytes and every directory (a leftover staging directory counts too)."""
    return {p.relative_to(directory).as_posix(): p.read_bytes() if p.is_file() else None
            for p in directory.rglob("*")}


def test_blocked_export_raises_and_writes_nothing(seed_namespace, tmp_path):
    tr = ln.trace_cell(SEED_INTERP_CELL, seed_namespace)
    target = tmp_path / "out"
    with pytest.raises(ln.ExportBlocked) as info:
        tr.export(target)
    message = str(info.value)
    assert "line 3 [untraced-call]" in message and "probe failed for output 'result'" in message
    assert "force=True" in message
    assert not target.exists()
    target.mkdir()
    with pytest.raises(ln.ExportBlocked):
        tr.export(target, formats=("jit", "onnx"))
    assert list(target.iterdir()) == []


def test_forced_export_records_validated_false_and_the_hazards(seed_namespace, tmp_path):
    tr = ln.trace_cell(SEED_INTERP_CELL, seed_namespace)
    paths = tr.export(tmp_path, force=True)
    assert [p.name for p in paths] == ["node.pt", "graph.yaml"]
    doc = yaml.safe_load(paths[-1].read_text())
    assert doc["validated"] is False
    assert doc["probe"]["failed"] == ["result"] and doc["probe"]["baked"] == ["result"]
    assert [(h["kind"], h["severity"], h["line"]) for h in doc["hazards"]] == [("untraced-call", "error", 3)]
    # The file holds the traced graph, baked constant included.
    module = torch.jit.load(str(paths[0]))
    fresh = np.array([0.3, 0.05, 0.95, 0.6], np.float32)
    np.testing.assert_allclose(module(torch.from_numpy(fresh))[0].numpy(), tr.nodes["node"](fresh)[0])


def test_clean_export_loads_back_and_matches_the_eager_cell(seed_namespace, tmp_path):
    tr = ln.trace_cell(SEED_INTERP_CELL, seed_namespace, profile="full")
    assert tr.last_probe is None
    paths = tr.export(tmp_path)
    assert tr.last_probe is not None and tr.last_probe.passed  # export ran the probe itself
    assert paths == [tmp_path / "node.pt", tmp_path / "graph.yaml"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["graph.yaml", "node.pt"]  # no staging left
    module = torch.jit.load(str(paths[0]))
    for fresh in (np.array([0.3, 0.05, 0.95, 0.6], np.float32), np.array([0.0, 0.5, 1.0, 0.25], np.float32)):
        expected = tr.run_eager({"node": {"state": fresh}})["node"]["result"]
        got = module(torch.from_numpy(fresh))[0].numpy()
        assert got.dtype == expected.dtype == np.float64
        np.testing.assert_allclose(got, expected, rtol=1e-12)
    doc = yaml.safe_load(paths[-1].read_text())
    assert doc["validated"] is True
    assert doc["models"]["node"]["inputs"] == [{"name": "state", "dtype": "float32", "shape": [4],
                                                "type": "tensor"}]
    assert doc["models"]["node"]["outputs"] == [{"name": "result", "dtype": "float64", "shape": [4],
                                                 "type": "tensor"}]
    assert doc["models"]["node"]["parameters"]["backend"] == "jit"
    assert doc["pipeline"] == {"data_flow": {}, "feedback_flow": {}, "inputs": {"node": ["state"]},
                               "outputs": {"node": ["result"]}}
    assert doc["system information"]["leapp config version"] == "1.3"
    text = paths[-1].read_text()
    assert "    - name: state\n      dtype: float32\n      shape: [4]\n" in text  # LEAPP's block/flow mix


def test_checksums_in_the_yaml_match_the_files(tmp_path):
    paths = clip_trace().export(tmp_path, formats="jit, onnx", name="pipeline.yaml")
    assert [p.name for p in paths] == ["node.pt", "node.onnx", "pipeline.yaml"]
    params = yaml.safe_load(paths[-1].read_text())["models"]["node"]["parameters"]
    model = tmp_path / params["model_path"]
    assert params["model_path"] == "node.onnx" and params["backend"] == "onnx"  # the cell's export_with
    assert params["opset_version"] == 20
    assert params["sha256sum"] == hashlib.sha256(model.read_bytes()).hexdigest()
    assert params["md5sum"] == hashlib.md5(model.read_bytes()).hexdigest()


def test_onnx_model_runs_in_onnxruntime_like_the_eager_cell(tmp_path):
    onnxruntime = pytest.importorskip("onnxruntime")
    tr = clip_trace()
    [onnx_path, _] = tr.export(tmp_path, formats=["onnx"])
    session = onnxruntime.InferenceSession(str(onnx_path), providers=["CPUExecutionProvider"])
    fresh = np.array([-1.0, 0.1, 0.4, 2.0], np.float32)
    y, s = session.run(None, {"x": fresh})
    eager = tr.run_eager({"node": {"x": fresh}})["node"]
    np.testing.assert_allclose(y, eager["y"], rtol=1e-6)
    assert s.shape == () and s == pytest.approx(float(eager["s"]))


def test_a_failure_mid_write_leaves_the_previous_export_byte_identical(tmp_path, monkeypatch):
    clip_trace("3.0").export(tmp_path, formats=("jit", "onnx"))
    before = snapshot(tmp_path)

    def broken_onnx(node, path):
        path.write_bytes(b"half an onnx file")
        raise OSError("disk full")

    monkeypatch.setitem(export_module.WRITERS, "onnx", broken_onnx)
    with pytest.raises(ln.ExportBlocked, match="disk full"):
        clip_trace("2.0").export(tmp_path, formats=("jit", "onnx"))
    assert snapshot(tmp_path) == before


def test_a_model_that_disagrees_after_reloading_fails_the_export(tmp_path, monkeypatch):
    clip_trace("3.0").export(tmp_path)
    before = snapshot(tmp_path)
    real_load = export_module._load

    def corrupted(backend, path, node):
        run = real_load(backend, path, node)
        return lambda *arrays: tuple(out + 1 for out in run(*arrays))

    monkeypatch.setattr(export_module, "_load", corrupted)
    with pytest.raises(ln.ExportBlocked, match="loaded back from disk disagrees with the eager cell"):
        clip_trace("2.0").export(tmp_path)
    assert snapshot(tmp_path) == before


def test_an_onnx_conversion_failure_writes_nothing(seed_namespace, tmp_path, monkeypatch):
    pytest.importorskip("onnxruntime")
    tried = []

    def unconvertible(*args, dynamo, **kwargs):  # both of torch's exporters refuse an op
        tried.append(dynamo)
        raise RuntimeError("Unsupported ONNX conversion of operator aten::made_up_op")

    monkeypatch.setattr(torch.onnx, "export", unconvertible)
    tr = ln.trace_cell(SEED_INTERP_CELL, seed_namespace, profile="full")
    with pytest.raises(ln.ExportBlocked, match="aten::made_up_op"):
        tr.export(tmp_path / "new", formats=("jit", "onnx"))
    assert tried == [True, False]  # the default exporter, then LEAPP's TorchScript-based one
    assert list(tmp_path.iterdir()) == []  # not even the directory it created


def test_export_reprobes_when_the_graph_changed(tmp_path):
    tr = clip_trace()
    first = tr.probe(seed=3)
    tr.export(tmp_path / "a")
    assert tr.last_probe is first  # a probe of these graphs is reused
    tr.nodes["node"].graph = copy.deepcopy(tr.nodes["node"].graph)
    tr.export(tmp_path / "b")
    assert tr.last_probe is not first and tr.last_probe.seed == 0


def test_a_probe_added_semantic_mismatch_blocks_export(tmp_path, monkeypatch):
    from leapp_notebook.tracing import ops

    wrong = dataclasses.replace(ops.UFUNC_ROWS[np.subtract], build=ops.elementwise(torch.add))
    monkeypatch.setitem(ops.UFUNC_ROWS, np.subtract, wrong)
    tr = ln.trace_cell("y = x - 1.0", {"np": np, "x": RAW.copy()}, inputs=["x"], outputs=["y"])
    assert tr.ok
    with pytest.raises(ln.ExportBlocked, match="semantic-mismatch"):
        tr.export(tmp_path)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("kwargs, text", [
    ({"formats": ("tflite",)}, "choose from"),
    ({"formats": ()}, "choose from"),
    ({"formats": 3}, "list of"),
    ({"name": "../up"}, "cannot be a file name"),
    ({"force": "yes"}, "True or False"),
])
def test_bad_arguments_say_what_to_do(tmp_path, kwargs, text):
    with pytest.raises(ln.TraceError, match=text):
        clip_trace().export(tmp_path, **kwargs)
    assert list(tmp_path.iterdir()) == []


def test_a_directory_that_is_a_file_is_refused(tmp_path):
    target = tmp_path / "taken"
    target.write_text("not a directory")
    with pytest.raises(ln.TraceError, match="is a file"):
        clip_trace().export(target)
    assert target.read_text() == "not a directory"
