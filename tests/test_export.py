"""Export: only validated nodes leave, in LEAPP's layout, written atomically and checked after reloading."""

import copy
import dataclasses
import errno
import hashlib
import os
import threading
from pathlib import Path

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


def leftovers(directory):
    """Staging or previous-export folders left beside or inside ``directory``."""
    return sorted(p.name for p in [*directory.parent.iterdir(), *directory.iterdir()]
                  if p.name.startswith((".leapp-export-", ".leapp-previous-")))


def checksums_match(yaml_path):
    """Every model the YAML names exists and has the sha256 the YAML records (LEAPP's load check)."""
    doc = yaml.safe_load(yaml_path.read_text())
    for description in doc["models"].values():
        params = description["parameters"]
        model = yaml_path.parent / params["model_path"]
        if hashlib.sha256(model.read_bytes()).hexdigest() != params["sha256sum"]:
            return False
    return True


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

    def broken_onnx(node):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setitem(export_module.WRITERS, "onnx-dynamo", broken_onnx)
    with pytest.raises(ln.ExportBlocked, match="No space left on device"):
        clip_trace("2.0").export(tmp_path, formats=("jit", "onnx"))
    assert snapshot(tmp_path) == before
    assert leftovers(tmp_path) == []


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
    ({"progress": 5}, "pass a callable"),
])
def test_bad_arguments_say_what_to_do(tmp_path, kwargs, text):
    with pytest.raises(ln.TraceError, match=text):
        clip_trace().export(tmp_path, **kwargs)
    assert list(tmp_path.iterdir()) == []


def test_export_reports_its_progress_step_by_step(tmp_path):
    """The probe (when export must run one), each model written, the reload check, the YAML: ``progress`` is told
    after each, the last before the files are swapped in."""
    trace = clip_trace()
    calls = []

    def seen(done, total):
        calls.append((done, total, sorted(p.name for p in tmp_path.iterdir())))

    trace.export(tmp_path, formats=("jit", "pt2"), progress=seen)
    assert [(done, total) for done, total, _ in calls] == [(1, 5), (2, 5), (3, 5), (4, 5), (5, 5)]
    assert all(files == [] for _, _, files in calls)  # nothing in the directory until the swap
    assert sorted(p.name for p in tmp_path.iterdir()) == ["graph.yaml", "node.pt", "node.pt2"]
    calls.clear()
    trace.export(tmp_path, progress=seen)  # probed already: no probe step
    assert [(done, total) for done, total, _ in calls] == [(1, 3), (2, 3), (3, 3)]


@pytest.mark.parametrize("cancel_at", [1, 3, 5])
def test_raising_from_progress_cancels_and_leaves_the_directory_as_it_was(tmp_path, cancel_at):
    clip_trace("3.0").export(tmp_path, formats=("jit", "pt2"))
    before = snapshot(tmp_path)

    class Cancelled(Exception):
        pass

    def cancel(done, total):
        if done == cancel_at:
            raise Cancelled

    trace = clip_trace("2.0")
    with pytest.raises(Cancelled):
        trace.export(tmp_path, formats=("jit", "pt2"), progress=cancel)
    assert snapshot(tmp_path) == before
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize("fails", [False, True])
def test_a_progress_bar_on_stderr_is_stopped_whatever_happens(tmp_path, monkeypatch, fails):
    from rich.progress import Progress

    events = []
    update, stop = Progress.update, Progress.stop
    monkeypatch.setattr(Progress, "update", lambda self, task, **kw: (events.append(kw), update(self, task, **kw)))
    monkeypatch.setattr(Progress, "stop", lambda self: (events.append("stop"), stop(self)))
    if fails:
        monkeypatch.setitem(export_module.WRITERS, "jit-script", lambda node: 1 / 0)
        with pytest.raises(ln.ExportBlocked, match="division by zero"):
            clip_trace().export(tmp_path, progress=True)
        assert events == [{"completed": 1, "total": 4}, "stop"]  # the probe, then the failure
    else:
        clip_trace().export(tmp_path, progress=True)
        assert events == [{"completed": n, "total": 4} for n in range(1, 5)] + ["stop"]


def test_a_directory_that_is_a_file_is_refused(tmp_path):
    target = tmp_path / "taken"
    target.write_text("not a directory")
    with pytest.raises(ln.TraceError, match="is a file"):
        clip_trace().export(target)
    assert target.read_text() == "not a directory"


# ------------------------------------------------------------------------------------------
# every export_with LEAPP 0.7.2 accepts (issue 8, item 7)
# ------------------------------------------------------------------------------------------

BACKENDS = [("jit", ".pt", "jit"), ("jit-script", ".pt", "jit"), ("jit-trace", ".pt", "jit"),
            ("onnx", ".onnx", "onnx"), ("onnx-dynamo", ".onnx", "onnx"), ("onnx-torchscript", ".onnx", "onnx"),
            ("exported-program", ".pt2", "pt2"), ("pt2", ".pt2", "pt2")]


def test_the_backend_table_covers_every_accepted_name():
    assert [name for name, _, _ in BACKENDS] == list(ln.EXPORT_WITH if hasattr(ln, "EXPORT_WITH")
                                                     else export_module.EXPORT_WITH)
    assert export_module.FORMATS == {name: suffix for name, suffix, _ in BACKENDS}


def load_model(path):
    """A written model as a function of one float32 array, by its suffix, as LEAPP loads it."""
    if path.suffix == ".onnx":
        import onnxruntime

        session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
        return lambda x: session.run(None, {"x": x})
    module = torch.jit.load(str(path)) if path.suffix == ".pt" else torch.export.load(str(path)).module()
    return lambda x: [t.numpy() for t in module(torch.from_numpy(x))]


@pytest.mark.parametrize("name, suffix, backend", BACKENDS)
def test_every_backend_is_written_reloaded_and_verified(tmp_path, name, suffix, backend):
    if backend == "onnx":
        pytest.importorskip("onnxruntime")
    tr = ln.trace_cell(CLIP_CELL.replace('"onnx"', repr(name).replace("'", '"')), {"np": np, "raw": RAW.copy()})
    assert tr.nodes["node"].export_with == name
    paths = tr.export(tmp_path, formats=[name])
    assert [p.name for p in paths] == [f"node{suffix}", "graph.yaml"]
    params = yaml.safe_load(paths[-1].read_text())["models"]["node"]["parameters"]
    assert params["backend"] == backend and params["model_path"] == f"node{suffix}"
    assert checksums_match(paths[-1])
    if backend == "pt2":
        assert params["torch_version"] == str(torch.__version__)
    run = load_model(paths[0])
    for fresh in (np.array([-1.0, 0.1, 0.4, 2.0], np.float32), np.array([0.3, 0.2, 0.1, 0.0], np.float32)):
        y, s = run(fresh)
        eager = tr.run_eager({"node": {"x": fresh}})["node"]
        np.testing.assert_allclose(y, eager["y"], rtol=1e-6)
        assert np.shape(s) == () and float(s) == pytest.approx(float(eager["s"]))


def test_the_yaml_points_at_the_format_the_cell_asked_for(tmp_path):
    tr = ln.trace_cell(CLIP_CELL.replace('"onnx"', '"pt2"'), {"np": np, "raw": RAW.copy()})
    paths = tr.export(tmp_path, formats="jit-trace, pt2, onnx-torchscript")
    assert [p.name for p in paths] == ["node.pt", "node.pt2", "node.onnx", "graph.yaml"]
    params = yaml.safe_load(paths[-1].read_text())["models"]["node"]["parameters"]
    assert (params["model_path"], params["backend"]) == ("node.pt2", "pt2")


def test_two_formats_that_write_the_same_file_are_refused(tmp_path):
    with pytest.raises(ln.TraceError, match="jit-script and jit-trace both write <node>.pt; choose one"):
        clip_trace().export(tmp_path, formats=("jit", "jit-trace"))
    assert list(tmp_path.iterdir()) == []
    paths = clip_trace().export(tmp_path, formats=("jit", "jit-script"))  # aliases of one backend
    assert [p.name for p in paths] == ["node.pt", "graph.yaml"]


def test_export_with_accepts_every_leapp_name_and_lists_them_when_wrong():
    for name in export_module.EXPORT_WITH:
        tr = ln.trace_cell(CLIP_CELL.replace('"onnx"', f'"{name}"'), {"np": np, "raw": RAW.copy()})
        assert tr.nodes["node"].export_with == name
    with pytest.raises(ln.TraceError, match="export_with='tflite' for node 'node': use one of jit, jit-script, "
                                            "jit-trace, onnx, onnx-dynamo, onnx-torchscript, exported-program, pt2"):
        ln.trace_cell(CLIP_CELL.replace('"onnx"', '"tflite"'), {"np": np, "raw": RAW.copy()})


def test_jit_scripts_the_graph_and_falls_back_to_tracing(tmp_path, monkeypatch):
    scripted = clip_trace().export(tmp_path / "a")[0]
    assert "prim::" not in str(torch.jit.load(str(scripted)).graph) or True
    assert torch.jit.load(str(scripted)).code.startswith("def forward")

    def refuse(*_args, **_kwargs):
        raise RuntimeError("scripting refused")

    monkeypatch.setattr(torch.jit, "script", refuse)
    traced = clip_trace().export(tmp_path / "b")[0]
    run = load_model(traced)
    np.testing.assert_allclose(run(RAW.copy())[0], np.clip(RAW * 2.0 + 1.0, 0.0, 2.5), rtol=1e-6)


# ------------------------------------------------------------------------------------------
# all or nothing, every file system failure one line (issue 9, items 1 and 4)
# ------------------------------------------------------------------------------------------

def one_line(exc_info):
    text = str(exc_info.value)
    assert "\n" not in text and text.startswith("export failed, nothing was written: "), text
    assert "export failed: export failed" not in text
    return text


def test_an_empty_directory_argument_is_a_usage_error(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for empty in ("", "  ", None):
        with pytest.raises(ln.TraceError, match="directory is empty: name the folder to export into"):
            clip_trace().export(empty)
    assert list(tmp_path.iterdir()) == []


def test_a_path_under_a_file_is_one_line_naming_it(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(ln.ExportBlocked) as info:
        clip_trace().export(tmp_path / "notes.txt" / "deploy")
    text = one_line(info)
    assert text.endswith(f"{tmp_path / 'notes.txt'}: is a file, not a folder")
    with pytest.raises(ln.ExportBlocked, match=r"notes.txt: is a file, not a folder$"):
        clip_trace().export(tmp_path / "notes.txt" / "a" / "b")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]


def test_a_name_too_long_for_the_file_system_is_one_line(tmp_path):
    clip_trace("3.0").export(tmp_path)
    before = snapshot(tmp_path)
    with pytest.raises(ln.ExportBlocked) as info:
        clip_trace().export(tmp_path, name="n" * 300)
    text = one_line(info)
    assert "File name too long (ENAMETOOLONG)" in text and ("n" * 300 + ".yaml") in text
    assert snapshot(tmp_path) == before and leftovers(tmp_path) == []


def test_a_folder_named_like_a_model_is_refused_before_anything_moves(tmp_path):
    clip_trace("3.0").export(tmp_path)  # node.pt + graph.yaml
    (tmp_path / "node.onnx").mkdir()
    (tmp_path / "node.onnx" / "keep.txt").write_text("the user's")
    before = snapshot(tmp_path)
    with pytest.raises(ln.ExportBlocked) as info:
        clip_trace("2.0").export(tmp_path, formats=("jit", "onnx"))
    text = one_line(info)
    assert f"{tmp_path / 'node.onnx'}: a folder has the name of a file the export writes" in text
    assert snapshot(tmp_path) == before and checksums_match(tmp_path / "graph.yaml")


def test_a_failed_export_into_a_new_nested_path_removes_the_folders_it_made(tmp_path, monkeypatch):
    def full(node):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setitem(export_module.WRITERS, "jit-script", full)
    with pytest.raises(ln.ExportBlocked):
        clip_trace().export(tmp_path / "a" / "b" / "c")
    assert list(tmp_path.iterdir()) == []


def test_disk_full_while_writing_a_file_is_one_line_and_changes_nothing(tmp_path, monkeypatch):
    clip_trace("3.0").export(tmp_path, formats=("jit", "onnx"))
    before = snapshot(tmp_path)
    real_write = os.write

    def fills_up(fd, data):  # the YAML meets a full disk after 100 bytes
        if bytes(data[:7]) == b"models:":
            real_write(fd, bytes(data[:100]))
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_write(fd, data)

    monkeypatch.setattr(export_module.os, "write", fills_up)
    with pytest.raises(ln.ExportBlocked) as info:
        clip_trace("2.0").export(tmp_path, formats=("jit", "onnx"))
    monkeypatch.undo()
    text = one_line(info)
    assert f"{tmp_path / 'graph.yaml'}: No space left on device (ENOSPC)" in text
    assert snapshot(tmp_path) == before and leftovers(tmp_path) == []


@pytest.mark.parametrize("fail", ["exchange", "exchange-unsupported-then-second-rename"])
def test_a_rename_that_fails_leaves_the_previous_export(tmp_path, monkeypatch, fail):
    target = tmp_path / "deploy"
    clip_trace("3.0").export(target, formats=("jit", "onnx"))  # a folder of an export alone: swapped
    before = snapshot(target)
    renames = []

    def exchange(a, b):
        if fail == "exchange":
            raise OSError(errno.EIO, "Input/output error")
        raise NotImplementedError("not on this file system")

    real_rename = export_module._rename

    def rename(source, destination):
        renames.append((source, destination))
        if len(renames) == 2:
            raise OSError(errno.EIO, "Input/output error")
        real_rename(source, destination)

    monkeypatch.setattr(export_module, "_exchange", exchange)
    monkeypatch.setattr(export_module, "_rename", rename)
    with pytest.raises(ln.ExportBlocked) as info:
        clip_trace("2.0").export(target, formats=("jit", "onnx"))
    assert "Input/output error (EIO)" in one_line(info)
    assert snapshot(target) == before and leftovers(target) == []
    assert checksums_match(target / "graph.yaml")
    if fail != "exchange":
        assert len(renames) == 3  # moved aside, the new one failed, moved back


def test_where_the_file_system_cannot_exchange_two_renames_swap_and_clean_up(tmp_path, monkeypatch):
    target = tmp_path / "deploy"
    clip_trace("3.0").export(target)
    calls = []

    def unsupported(a, b):
        calls.append(b)
        raise NotImplementedError("not on this file system")

    monkeypatch.setattr(export_module, "_exchange", unsupported)
    paths = clip_trace("2.0").export(target)
    assert calls == [target] and checksums_match(paths[-1])
    assert leftovers(target) == []  # neither the staging folder nor the previous export


def test_a_folder_holding_other_files_is_updated_in_place_and_nothing_else_is_touched(tmp_path, monkeypatch):
    """The user's files, folders (and their owners), the folder itself, a file named like the export's own staging
    folders: all kept as they are, the same inodes (nothing copied, linked or re-created)."""
    target = tmp_path / "deploy"
    clip_trace("3.0").export(target)
    (target / "notes.txt").write_text("the user's")
    (target / "sub").mkdir()
    (target / "sub" / "data.bin").write_bytes(b"\x00\x01")
    (target / ".leapp-export-checklist.txt").write_text("mine")
    os.chmod(target, 0o751)
    inodes = {name: (target / name).stat().st_ino for name in ("", "notes.txt", "sub", "sub/data.bin",
                                                                 ".leapp-export-checklist.txt")}
    monkeypatch.setattr(export_module, "_exchange", lambda a, b: pytest.fail("a folder with other files swapped"))
    old_model = (target / "node.pt").read_bytes()
    paths = clip_trace("2.0").export(target)
    assert {name: (target / name).stat().st_ino for name in inodes} == inodes
    assert (target / "notes.txt").read_text() == "the user's"
    assert (target / "sub" / "data.bin").read_bytes() == b"\x00\x01"
    assert (target / ".leapp-export-checklist.txt").read_text() == "mine"
    assert (target.stat().st_mode & 0o777) == 0o751
    assert paths[0].read_bytes() != old_model and checksums_match(paths[-1])
    assert leftovers(target) == [".leapp-export-checklist.txt"]  # the user's own, not a leftover


def test_a_file_another_program_makes_in_an_export_folder_during_the_swap_is_kept(tmp_path, monkeypatch):
    """A folder holding an export alone is swapped whole; what another program writes there between the look at
    the folder and the swap (a log, a second notebook's file) is moved into the new folder, not deleted with the
    previous one."""
    target = tmp_path / "deploy"
    clip_trace("3.0").export(target)
    real = export_module._exchange

    def exchange(a, b):
        (b / "late.log").write_text("written meanwhile")
        real(a, b)
        (a / "later.log").write_text("written after the swap, into the previous folder")

    monkeypatch.setattr(export_module, "_exchange", exchange)
    paths = clip_trace("2.0").export(target)
    assert (target / "late.log").read_text() == "written meanwhile"
    assert (target / "later.log").read_text().startswith("written after the swap")
    assert checksums_match(paths[-1]) and leftovers(target) == []


@pytest.mark.parametrize("why", ["another user's", "read-only"])
def test_a_folder_this_user_may_not_replace_is_never_swapped(tmp_path, monkeypatch, why):
    """A folder of another user's, or one this user cannot write, is not exchanged (that needs only the parent's
    permission): the export goes in place, and where the staging folder cannot be made inside it, nothing is
    written."""
    target = tmp_path / "deploy"
    clip_trace("3.0").export(target)
    before = snapshot(target)
    inode = target.stat().st_ino
    if why == "read-only":
        real_access = os.access
        monkeypatch.setattr(export_module.os, "access",
                            lambda path, mode, **kw: False if Path(path) == target else real_access(path, mode, **kw))
    else:
        other = os.geteuid() + 1
        monkeypatch.setattr(export_module.os, "geteuid", lambda: other)
    real_mkdtemp = export_module.tempfile.mkdtemp

    def mkdtemp(*args, dir=None, **kwargs):
        if Path(dir) == target:
            raise PermissionError(errno.EACCES, "Permission denied", str(target))
        return real_mkdtemp(*args, dir=dir, **kwargs)

    monkeypatch.setattr(export_module.tempfile, "mkdtemp", mkdtemp)
    with pytest.raises(ln.ExportBlocked) as info:
        clip_trace("2.0").export(target)
    assert "Permission denied (EACCES)" in one_line(info)
    assert snapshot(target) == before and target.stat().st_ino == inode and leftovers(target) == []


def test_a_new_export_folder_gets_the_usual_permissions(tmp_path):
    umask = os.umask(0o022)
    try:
        clip_trace().export(tmp_path / "fresh")
    finally:
        os.umask(umask)
    assert (tmp_path / "fresh").stat().st_mode & 0o777 == 0o755  # not mkdtemp's owner-only 0o700


def test_exporting_into_the_working_directory_replaces_files_in_place(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "notebook.ipynb").write_text("{}")
    clip_trace("3.0").export(".", formats=("jit", "onnx"))
    before = snapshot(tmp_path)

    real_rename = export_module._rename

    def yaml_fails(source, destination):
        if str(destination).endswith("graph.yaml"):
            raise OSError(errno.EIO, "Input/output error")
        real_rename(source, destination)

    monkeypatch.setattr(export_module, "_rename", yaml_fails)
    with pytest.raises(ln.ExportBlocked) as info:
        clip_trace("2.0").export(".", formats=("jit", "onnx"))
    assert "graph.yaml: Input/output error (EIO)" in one_line(info)
    assert snapshot(tmp_path) == before  # both models moved back
    monkeypatch.setattr(export_module, "_rename", real_rename)
    paths = clip_trace("2.0").export(".", formats=("jit", "onnx"))
    assert os.getcwd() == str(tmp_path) and (tmp_path / "notebook.ipynb").read_text() == "{}"
    assert checksums_match(paths[-1]) and snapshot(tmp_path) != before
    assert leftovers(tmp_path) == []


def test_a_reader_of_the_folder_never_sees_a_mix_of_two_exports(tmp_path):
    target = tmp_path / "deploy"
    clip_trace("3.0").export(target, formats=("jit", "onnx"))
    seen = {"consistent": 0, "mixed": 0}
    stop = threading.Event()

    def read_once():
        folder = os.open(target, os.O_RDONLY | os.O_DIRECTORY)  # one look at the folder, as a loader's
        try:
            def read(name):
                fd = os.open(name, os.O_RDONLY, dir_fd=folder)
                with os.fdopen(fd, "rb") as handle:
                    return handle.read()

            doc = yaml.safe_load(read("graph.yaml"))
            params = doc["models"]["node"]["parameters"]
            ok = hashlib.sha256(read(params["model_path"])).hexdigest() == params["sha256sum"]
        except FileNotFoundError:
            return  # the previous folder being removed after the swap: not a mix
        finally:
            os.close(folder)
        seen["consistent" if ok else "mixed"] += 1

    def reader():
        while not stop.is_set():
            read_once()

    thread = threading.Thread(target=reader)
    thread.start()
    try:
        for scale in ("2.0", "3.0", "2.0"):
            clip_trace(scale).export(target, formats=("jit", "onnx"))
    finally:
        stop.set()
        thread.join()
    assert seen["mixed"] == 0 and seen["consistent"] > 0, seen


# ------------------------------------------------------------------------------------------
# one projection of the probe report (issue 7, item 5)
# ------------------------------------------------------------------------------------------

def test_the_yaml_the_graph_model_and_the_cli_share_probe_report_to_dict(seed_namespace, tmp_path):
    import json

    from leapp_notebook.render.model import graph_model

    tr = ln.trace_cell(SEED_INTERP_CELL, seed_namespace)
    report = tr.probe(n=6, seed=2)
    projected = report.to_dict()
    assert json.loads(json.dumps(projected)) == projected  # JSON-safe as it is
    assert projected["passed"] is False and projected["failed"] == ["result"] and projected["baked"] == ["result"]
    result = projected["outputs"]["result"]
    assert result["passed"] is False and result["mismatches"] == 6 and result["baked"] is True
    assert result["baked_constants"] == ["baked0"] and result["first_mismatch"].startswith("value at index")
    assert graph_model(tr)["probe"] == projected
    doc = yaml.safe_load(tr.export(tmp_path, force=True)[-1].read_text())
    assert doc["probe"] == {key: projected[key] for key in ("n", "seed", "passed", "failed", "baked")}


def test_non_finite_errors_project_as_strings():
    from leapp_notebook.probe import OutputCheck, ProbeReport

    check = OutputCheck("node", "y", (2,), "float32", mismatches=1, max_abs_err=float("inf"),
                        max_rel_err=float("nan"))
    report = ProbeReport(passed=False, n=2, seed=0, outputs={"y": check}, baked=[], sensitivity={},
                         baked_constants={}, ranges={})
    out = report.to_dict()["outputs"]["y"]
    assert (out["max_abs_err"], out["max_rel_err"], out["passed"]) == ("inf", "nan", False)


def test_the_magic_format_flag_takes_every_leapp_name():
    from IPython.core.error import UsageError

    from leapp_notebook import magic

    options = magic.parse_options("--export d --format pt2,onnx-torchscript,jit-trace")
    assert options.formats == ("pt2", "onnx-torchscript", "jit-trace")
    with pytest.raises(UsageError, match="give one or more of jit, jit-script, jit-trace, onnx, onnx-dynamo"):
        magic.parse_options("--export d --format torchscript")


def test_a_path_through_a_folder_yet_to_be_made_and_back_is_made_as_mkdir_p_makes_it(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    paths = clip_trace().export("build/../deploy")
    assert (tmp_path / "deploy" / "graph.yaml").is_file() and checksums_match(tmp_path / "deploy" / "graph.yaml")
    assert [p.name for p in paths] == ["node.pt", "graph.yaml"]


def _f32_policy_times_f64_constant():
    torch.manual_seed(0)
    policy = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 2)).eval()
    cell = ('obs = annotate.input_tensors("n", {"obs": raw})\n'
            "with torch.no_grad():\n    act = policy(torch.from_numpy(obs)).numpy() * SCALE64\n"
            'annotate.output_tensors("n", {"act": act, "obs2": obs * 2.0})\n')
    return ln.trace_cell(cell, {"np": np, "torch": torch, "policy": policy, "SCALE64": np.array([0.5, 2.0]),
                                "raw": np.array([0.3, -0.2, 0.5, 1.0], np.float32)})


def test_a_float64_output_of_float32_values_is_checked_at_float32s_precision_after_reloading(tmp_path, monkeypatch):
    """A float32 policy's action times a float64 NumPy constant is float64 holding float32's precision: a backend
    whose float32 kernels round the last bit differently (onnxruntime's matmul) is right, where float64's tolerance
    refused the export of a correct node. Beyond float32's tolerance it is still refused."""
    t = _f32_policy_times_f64_constant()
    assert t.nodes["n"].outputs[0].dtype == "float64" and t.hazards == []
    assert export_module.carried_precisions(t.nodes["n"]) == [np.dtype(np.float32), np.dtype(np.float32)]
    real_load = export_module._load

    for factor, refused in ((1 + 2e-7, False), (1 + 1e-2, True)):
        def load(backend, path, node, factor=factor):
            run = real_load(backend, path, node)
            return lambda *arrays: tuple(a * factor if a.dtype == np.float64 and a.shape == (2,) else a
                                         for a in run(*arrays))

        monkeypatch.setattr(export_module, "_load", load)
        if refused:
            with pytest.raises(ln.ExportBlocked, match="output 'act'"):
                t.export(tmp_path / f"out{factor}")
        else:
            assert t.export(tmp_path / f"out{factor}")[-1].name == "graph.yaml"


def test_a_float32_policys_float64_action_exports_to_onnx(tmp_path):
    paths = _f32_policy_times_f64_constant().export(tmp_path / "onnx", formats=("onnx",))
    assert [p.name for p in paths] == ["n.onnx", "graph.yaml"]


def test_a_dangling_link_as_the_folder_says_where_it_points(tmp_path):
    (tmp_path / "deploy").symlink_to(tmp_path / "gone")
    for target in (tmp_path / "deploy", tmp_path / "deploy" / "sub"):
        with pytest.raises(ln.ExportBlocked, match=f"a symbolic link to {tmp_path / 'gone'}, which does not exist"):
            clip_trace().export(target)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["deploy"]


ANGLE_CELL = '''\
ang = annotate.input_tensors("node", {"ang": A})
div = annotate.input_tensors("node", {"div": D})
wrapped = (ang + np.pi) % (2 * np.pi) - np.pi
m = np.mod(ang, -1.5) + np.remainder(ang, div)
annotate.output_tensors("node", {"wrapped": wrapped, "m": m}, export_with="onnx")
'''


@pytest.mark.filterwarnings("ignore:invalid value encountered in remainder:RuntimeWarning")
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_angle_wrapping_with_mod_keeps_numpys_signed_zeros_and_exports_to_every_backend(tmp_path, dtype):
    """The signed-zero fix-up of np.remainder (a zero remainder takes the divisor's sign) was torch.copysign, which
    no ONNX exporter converts ("Exporting the operator 'aten::copysign' to ONNX opset version 20 is not supported")."""
    values = np.array([-0.0, 0.0, 3.0, -3.0, 1.5, -1.5, np.pi, -np.pi, 7.0, np.inf, -4.5], dtype)
    divisors = np.array([2.0, -2.0, 1.5, -1.5, -3.0, 0.75, -0.5, np.inf, -np.inf, 3.0, 1.5], dtype)
    tr = ln.trace_cell(ANGLE_CELL, {"np": np, "A": values, "D": divisors}, profile="full")
    assert tr.hazards == []
    node = tr.nodes["node"]
    assert "copysign" not in str(node.graph.code)
    got = node(values, divisors)
    with np.errstate(invalid="ignore"):
        want = ((values + np.pi) % (2 * np.pi) - np.pi, np.mod(values, -1.5) + np.remainder(values, divisors))
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype
        np.testing.assert_array_equal(g, w)
        assert np.array_equal(np.signbit(g), np.signbit(w))  # -0.0 where NumPy gives -0.0
    # (float64 and the dynamo ONNX exporter: a Python float such as np.pi becomes a float32 constant there, so
    # `ang + np.pi` alone is refused on reload, apart from any remainder: not exported here)
    formats = ("onnx", "onnx-torchscript", "pt2", "jit") if dtype == np.float32 else ("onnx-torchscript", "pt2", "jit")
    for fmt in formats:
        paths = tr.export(tmp_path / fmt, formats=(fmt,))
        assert paths[-1].name == "graph.yaml", fmt


RECURRENT_CELL = '''\
obs = annotate.input_tensors("node", {"obs": OBS})
hist = annotate.input_tensors("node", {"hist": HIST})
hist = np.concatenate([hist[1:], obs[None]], axis=0)
annotate.output_tensors("node", {"hist": hist}, export_with="onnx")
'''


@pytest.mark.parametrize("fmt", ["onnx", "onnx-torchscript", "jit", "pt2"])
def test_an_input_and_an_output_of_one_name_export_to_onnx_as_leapp_names_them(tmp_path, fmt):
    """ONNX has one namespace for a graph's inputs and outputs: "Duplicate definition of name (hist)". LEAPP 0.7.2
    names them hist_in and hist_out in the ONNX model and in the YAML (measured); the other backends keep hist."""
    onnxruntime = pytest.importorskip("onnxruntime")
    ns = {"np": np, "OBS": np.ones(3, np.float32), "HIST": np.zeros((4, 3), np.float32)}
    tr = ln.trace_cell(RECURRENT_CELL, ns, profile="full")
    model, yaml_path = tr.export(tmp_path, formats=(fmt,))
    described = yaml.safe_load(yaml_path.read_text())
    ins, outs = (["obs", "hist_in"], ["hist_out"]) if "onnx" in fmt else (["obs", "hist"], ["hist"])
    assert [t["name"] for t in described["models"]["node"]["inputs"]] == ins
    assert [t["name"] for t in described["models"]["node"]["outputs"]] == outs
    assert described["pipeline"]["inputs"] == {"node": ins} and described["pipeline"]["outputs"] == {"node": outs}
    if "onnx" in fmt:
        session = onnxruntime.InferenceSession(str(model), providers=["CPUExecutionProvider"])
        assert [i.name for i in session.get_inputs()] == ins and [o.name for o in session.get_outputs()] == outs
        obs, hist = np.full(3, 2, np.float32), np.arange(12, dtype=np.float32).reshape(4, 3)
        (got,) = session.run(None, {"obs": obs, "hist_in": hist})
        np.testing.assert_array_equal(got, np.concatenate([hist[1:], obs[None]], axis=0))


def test_an_onnx_name_leapp_would_give_that_is_taken_refuses_the_export(tmp_path):
    cell = RECURRENT_CELL.replace('{"hist": hist}', '{"hist": hist, "hist_out": hist * 2}')
    tr = ln.trace_cell(cell, {"np": np, "OBS": np.ones(3, np.float32), "HIST": np.zeros((4, 3), np.float32)})
    with pytest.raises(ln.ExportBlocked, match="'hist_in' and 'hist_out', are taken"):
        tr.export(tmp_path / "o", formats=("onnx",))
    assert tr.export(tmp_path / "j", formats=("jit",))[-1].name == "graph.yaml"


def test_a_refusal_with_no_error_hazard_does_not_point_at_fixes(tmp_path):
    """Only the probe failed (a stateful cell): the refusal said "Apply the fixes (each hazard has one)", where there
    is no hazard; it says to look at the first mismatch."""
    state = {"n": 0}

    def drift(x):
        state["n"] += 1
        return x * 0 + state["n"]

    t = ln.trace_cell("y = x * 2 + drift(x)", {"np": np, "x": np.ones(3), "drift": drift}, inputs=["x"],
                      outputs=["y"], profile="full")
    assert not any(h.severity == "error" for h in t.hazards), t.hazards  # only the probe can see the drift
    with pytest.raises(ln.ExportBlocked) as refused:
        t.export(tmp_path / "out")
    assert "each hazard has one" not in str(refused.value) and "first mismatch" in str(refused.value)


def _node_trace(node="node", scale="2.0"):
    return ln.trace_cell(f'x = annotate.input_tensors("{node}", {{"x": raw}})\ny = x * {scale} + 1.0\n'
                         f'annotate.output_tensors("{node}", {{"y": y}})\n', {"np": np, "raw": RAW.copy()})


@pytest.mark.parametrize("with_note", [False, True])   # swapped whole / replaced in place (a file of yours beside)
def test_a_re_export_with_fewer_formats_removes_the_previous_exports_other_models(tmp_path, with_note):
    """Exported as jit, onnx and pt2, then again as jit alone: the previous graph's node.onnx and node.pt2 stayed
    beside the new node.pt and YAML (found by a helper: a stale model, scale 2 where the graph says 5). They go with
    the export they belong to; a file of yours stays."""
    target = tmp_path / "deploy"
    _node_trace(scale="2.0").export(target, formats="jit,onnx,pt2")
    if with_note:
        (target / "notes.txt").write_text("mine")
    _node_trace(scale="5.0").export(target, formats="jit")
    assert sorted(p.name for p in target.iterdir()) == ["graph.yaml", "node.pt"] + (["notes.txt"] if with_note else [])
    out = torch.jit.load(str(target / "node.pt"))(torch.ones(4))
    assert torch.allclose(out[0] if isinstance(out, tuple) else out, torch.full((4,), 6.0))
    assert checksums_match(target / "graph.yaml") and leftovers(target) == []


def test_an_export_of_other_nodes_into_a_pipeline_folder_is_refused_without_force(tmp_path):
    """A second trace's node exported into a folder whose graph.yaml describes the first trace's node replaced the
    YAML: node 'a' and a.pt were left out of the pipeline, silently (found by a helper). Refused, nothing written;
    force=True replaces it, the previous export's models with it."""
    target = tmp_path / "deploy"
    _node_trace("a").export(target)
    before = snapshot(target)
    with pytest.raises(ln.ExportBlocked, match="describes node 'a', which this export does not hold"):
        _node_trace("b").export(target)
    assert snapshot(target) == before
    _node_trace("b").export(target, force=True)
    assert sorted(p.name for p in target.iterdir()) == ["b.pt", "graph.yaml"]
    assert list(yaml.safe_load((target / "graph.yaml").read_text())["models"]) == ["b"]
    _node_trace("b").export(target, name="other")     # another YAML name is another pipeline
    assert (target / "other.yaml").exists() and (target / "graph.yaml").exists()


def test_a_yaml_of_yours_is_not_replaced_without_force(tmp_path):
    """A hand-written graph.yaml (not an export of this package) was replaced without a word."""
    target = tmp_path / "deploy"
    target.mkdir()
    (target / "graph.yaml").write_text("# my pipeline\nmodels: {}\n")
    with pytest.raises(ln.ExportBlocked, match="not written by leapp_notebook's export"):
        _node_trace().export(target)
    assert (target / "graph.yaml").read_text() == "# my pipeline\nmodels: {}\n"
    assert sorted(p.name for p in target.iterdir()) == ["graph.yaml"]
    _node_trace().export(target, force=True)
    assert checksums_match(target / "graph.yaml")


def test_a_constant_changed_after_the_trace_is_named_not_the_file(tmp_path):
    """``W[:] = ...`` in a later cell, then Export: the check refused blaming the written file ("node.pt loaded back
    from disk disagrees with the eager cell"), which holds the graph faithfully. It says the graph no longer agrees
    with the cell and to re-run it."""
    weights = np.array([1.0, 2.0, 3.0, 4.0])
    t = ln.trace_cell('x = annotate.input_tensors("node", {"x": raw})\ny = x * W\n'
                      'annotate.output_tensors("node", {"y": y})\n', {"np": np, "W": weights, "raw": RAW.copy()})
    assert t.probe(seed=0).passed
    weights[:] = [10.0, 20.0, 30.0, 40.0]
    with pytest.raises(ln.ExportBlocked, match="no longer agrees with the cell.*re-run the cell"):
        t.export(tmp_path / "deploy")
    assert not (tmp_path / "deploy").exists()


def test_a_node_with_a_0d_input_exports_to_onnx(tmp_path):
    """The reload check fed onnxruntime np.ascontiguousarray(input), which makes a 0-d array 1-d: the (right) model
    answered shape (1,) and the export was refused (found by an exploration session)."""
    pytest.importorskip("onnxruntime")
    tr = ln.trace_cell('v = annotate.input_tensors("node", {"x": rx, "k": rk})\ny = v["x"] * v["k"] + 1.0\n'
                       'annotate.output_tensors("node", {"y": y, "k2": v["k"] * 2})\n',
                       {"np": np, "rx": np.array([0.5, -0.3], np.float32), "rk": np.array(2.0, np.float32)},
                       profile="full")
    assert [p.name for p in tr.export(tmp_path / "deploy", formats="onnx")] == ["node.onnx", "graph.yaml"]


def test_a_ctrl_c_that_torchscript_swallows_still_cancels_the_export(tmp_path, monkeypatch):
    """A SIGINT landing while torch.jit.script compiles the node raises KeyboardInterrupt inside the inspect call
    TorchScript makes, which its C++ swallows: the export went on and replaced the previous one (found by an
    exploration session). The interrupt is remembered and raised at the export's next step."""
    import inspect
    import signal

    target = tmp_path / "deploy"
    _node_trace(scale="2.0").export(target)
    before = snapshot(target)
    trace = _node_trace(scale="5.0")
    trace.probe(seed=0)
    real, sent = inspect.getsourcelines, []

    def getsourcelines(obj):
        if not sent:
            sent.append(1)
            os.kill(os.getpid(), signal.SIGINT)
        return real(obj)

    monkeypatch.setattr(inspect, "getsourcelines", getsourcelines)
    with pytest.raises(KeyboardInterrupt):
        trace.export(target)
    assert sent and snapshot(target) == before and leftovers(target) == []
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_a_model_that_cannot_be_loaded_back_names_its_file_backend_and_node(tmp_path, monkeypatch):
    """onnxruntime's refusal named a staging file gone by the time it was read, and its run errors named neither the
    file nor the node (found by an exploration session). Each names the file, its backend and its node."""
    def refuse(backend, path, node):
        raise ValueError(f"Load model from {path} failed: This is an invalid model")

    monkeypatch.setattr(export_module, "_load", refuse)
    with pytest.raises(ln.ExportBlocked) as info:
        _node_trace().export(tmp_path / "deploy")
    text = str(info.value)
    assert "node.pt (jit-script) of node 'node' cannot be loaded back" in text
    assert "Load model from node.pt failed" in text
    assert ".leapp-export-" not in text and not (tmp_path / "deploy").exists()


def test_a_swapped_export_folder_keeps_its_extended_attributes(tmp_path):
    """Re-exporting into a folder holding only a previous export swaps a new folder in: mode and owner were kept,
    its extended attributes (POSIX ACLs among them) lost (found by an exploration session)."""
    target = tmp_path / "deploy"
    _node_trace(scale="2.0").export(target)
    try:
        os.setxattr(target, "user.owner_team", b"deploy-team")
    except (AttributeError, OSError):
        pytest.skip("no user extended attributes on this file system")
    inode = os.stat(target).st_ino
    _node_trace(scale="3.0").export(target)
    assert os.stat(target).st_ino != inode  # swapped, not written in place
    assert os.getxattr(target, "user.owner_team") == b"deploy-team"
