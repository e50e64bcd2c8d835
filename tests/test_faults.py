"""Faults injected into a trace, a probe and an export: a full disk (a real tmpfs and an injected ENOSPC),
a read-only file system, Ctrl-C and ``sys.exit`` at each stage, renames that fail. Each asserts what the
user keeps: NumPy restored, the namespace intact, the previous export byte-identical, a one-line message.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from conftest import SEED_INTERP_CELL

import leapp_notebook as ln
from leapp_notebook import export as export_module
from leapp_notebook.tracing import session

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

CLIP_CELL = '''\
x = annotate.input_tensors("node", {"x": raw})
y = np.clip(x * 2.0 + 1.0, 0.0, 2.5)
annotate.output_tensors("node", {"y": y, "s": np.sum(x)})
'''
RAW = np.array([0.5, -0.3, 1.2, 0.8], np.float32)


def clip_trace(scale="2.0"):
    return ln.trace_cell(CLIP_CELL.replace("2.0", scale), {"np": np, "raw": RAW.copy()})


def snapshot(directory: Path) -> dict[str, bytes | None]:
    return {p.relative_to(directory).as_posix(): p.read_bytes() if p.is_file() else None
            for p in sorted(directory.rglob("*"))}


def leftovers(directory: Path) -> list[str]:
    return sorted(p.name for p in [*directory.parent.iterdir(), *directory.iterdir()]
                  if p.name.startswith((".leapp-export-", ".leapp-previous-")))


def numpy_restored() -> bool:
    """No tracer wrapper left on NumPy, no trace left running."""
    names = ("zeros", "ones", "empty", "full", "eye", "identity", "array", "asarray", "ascontiguousarray")
    return session.ACTIVE is None and not any(hasattr(getattr(np, name), "__wrapped__") for name in names)


def plain(namespace: dict) -> bool:
    """Nothing of the tracer in the namespace: every array is a plain ndarray."""
    return all(type(v) is np.ndarray for v in namespace.values() if isinstance(v, np.ndarray))


# ------------------------------------------------------------------------------------------
# a real full disk and a real read-only file system (a small tmpfs; skipped where mount is not allowed)
# ------------------------------------------------------------------------------------------

@pytest.fixture
def tmpfs(tmp_path):
    """Mount a 256 KiB tmpfs at tmp_path/disk; yields (path, remount) where remount(options) remounts it."""
    disk = tmp_path / "disk"
    disk.mkdir()
    try:
        mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(disk)],
                                 capture_output=True, text=True)
    except OSError as exc:
        pytest.skip(f"no mount command: {exc}")
    if mounted.returncode != 0:
        pytest.skip(f"mounting a tmpfs is not permitted here: {mounted.stderr.strip()}")

    def remount(options: str) -> None:
        subprocess.run(["mount", "-o", f"remount,{options}", str(disk)], check=True, capture_output=True)

    try:
        yield disk, remount
    finally:
        subprocess.run(["umount", "-l", str(disk)], capture_output=True)


EXPORT_SCRIPT = textwrap.dedent('''\
    import json, sys
    import numpy as np
    import leapp_notebook as ln
    cell, target, formats = sys.argv[1], sys.argv[2], sys.argv[3].split(",")
    trace = ln.trace_cell(cell, {"np": np, "raw": np.array([0.5, -0.3, 1.2, 0.8], np.float32)})
    try:
        paths = trace.export(target, formats=formats)
    except ln.ExportBlocked as exc:
        print(json.dumps({"blocked": str(exc)}))
    else:
        print(json.dumps({"written": [str(p) for p in paths]}))
''')


def export_in_a_process(target: Path, scale: str = "2.0", formats: str = "jit,onnx") -> tuple[int, dict]:
    """Export in a child process: before this fix a full disk aborted the process (exit 134)."""
    run = subprocess.run([sys.executable, "-c", EXPORT_SCRIPT, CLIP_CELL.replace("2.0", scale), str(target),
                          formats], capture_output=True, text=True, timeout=600)
    lines = run.stdout.strip().splitlines()
    return run.returncode, json.loads(lines[-1]) if lines else {"stderr": run.stderr[-2000:]}


def fill(disk: Path, leave: int) -> None:
    """Fill the file system so that ``leave`` bytes (rounded down to whole blocks) stay free."""
    info = os.statvfs(disk)
    free = info.f_bavail * info.f_frsize
    size = max(0, (free - leave) // info.f_frsize * info.f_frsize)
    with open(disk / "filler", "wb") as handle:
        with contextlib.suppress(OSError):
            handle.write(b"\0" * size)


def blocks(size: int, block: int = 4096) -> int:
    return -(-size // block) * block


@pytest.mark.parametrize("room", ["nothing", "the models but not the YAML"])
def test_a_real_full_disk_is_one_line_not_an_abort_and_the_previous_export_stays(tmpfs, tmp_path, room):
    disk, _ = tmpfs
    target = disk / "deploy"
    code, first = export_in_a_process(target, "3.0")
    assert code == 0 and "written" in first, first
    before = snapshot(target)
    # the new export's sizes, measured on a roomy disk
    code, scratch = export_in_a_process(tmp_path / "scratch", "2.0")
    assert code == 0, scratch
    models = sum(blocks(Path(p).stat().st_size) for p in scratch["written"][:-1])
    fill(disk, 0 if room == "nothing" else models)

    code, result = export_in_a_process(target, "2.0")

    assert code == 0, result  # the process lives on
    message = result["blocked"]
    assert "\n" not in message and message.startswith("export failed, nothing was written: ")
    expected = "graph.yaml" if room != "nothing" else "node.pt"
    assert message.endswith(f"{target / expected}: No space left on device (ENOSPC)"), message
    assert snapshot(target) == before and leftovers(target) == []
    os.unlink(disk / "filler")
    code, result = export_in_a_process(target, "2.0")  # room again: the export goes through
    assert code == 0 and "written" in result


def test_a_read_only_file_system_is_one_line_and_the_previous_export_stays(tmpfs):
    disk, remount = tmpfs
    target = disk / "deploy"
    clip_trace("3.0").export(target)
    before = snapshot(target)
    remount("ro")

    with pytest.raises(ln.ExportBlocked) as info:
        clip_trace("2.0").export(target)
    text = str(info.value)
    assert "\n" not in text and text.endswith("Read-only file system (EROFS)"), text
    assert snapshot(target) == before
    with pytest.raises(ln.ExportBlocked, match=r"new: Read-only file system \(EROFS\)$"):
        clip_trace("2.0").export(disk / "new")
    assert sorted(p.name for p in disk.iterdir()) == ["deploy"]


# ------------------------------------------------------------------------------------------
# Ctrl-C and sys.exit in a trace, a probe and an export (issue 9, items 3 and 5)
# ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("stop", ["raise KeyboardInterrupt", "import sys; sys.exit(0)", "raise SystemExit(2)"])
def test_ctrl_c_and_exit_in_a_traced_cell_propagate_after_restoring_state(stop):
    x = np.array([1.0, 2.0, 3.0])
    namespace = {"np": np, "x": x, "keep": "mine"}
    cell = f"y = x * 2.0\nz = np.zeros(3) + y\n{stop}\nw = z + 1\n"
    expected = KeyboardInterrupt if "Keyboard" in stop else SystemExit

    with pytest.raises(expected):  # not CellError: `except Exception` must not swallow an interrupt
        ln.trace_cell(cell, namespace, inputs=["x"], outputs=["w"])

    assert numpy_restored()
    # identity of a traced input is issue 9 item 2 (input policy); its value and type are kept here
    assert namespace["keep"] == "mine" and "w" not in namespace
    np.testing.assert_array_equal(namespace["x"], [1.0, 2.0, 3.0])
    assert plain(namespace) and type(namespace["y"]) is np.ndarray
    np.testing.assert_array_equal(namespace["z"], [2.0, 4.0, 6.0])


def test_ctrl_c_during_a_probes_retrace_propagates(seed_namespace):
    armed = {"on": False}

    def tick():
        if armed["on"] and session.ACTIVE is not None:  # inside the probe's retrace of the cell
            raise KeyboardInterrupt

    namespace = dict(seed_namespace, tick=tick)
    cell = SEED_INTERP_CELL.replace("result = ", "tick()\nresult = ")
    trace = ln.trace_cell(cell, namespace)
    armed["on"] = True

    with pytest.raises(KeyboardInterrupt):
        trace.probe(n=4, seed=0)

    assert numpy_restored() and trace.last_probe is None
    assert plain(namespace) and namespace["raw_state"] is seed_namespace["raw_state"]  # not a traced input


def test_ctrl_c_during_a_probes_eager_run_propagates(seed_namespace):
    calls = {"n": 0}

    def tick():
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt

    namespace = dict(seed_namespace, tick=tick)
    trace = ln.trace_cell(SEED_INTERP_CELL.replace("result = ", "tick()\nresult = "), namespace, profile="full")
    with pytest.raises(KeyboardInterrupt):
        trace.probe(n=8, seed=0)
    assert numpy_restored() and trace.last_probe is None


@pytest.mark.parametrize("where", ["writing the second model", "reloading a model", "writing the YAML"])
def test_ctrl_c_during_an_export_leaves_the_previous_export(tmp_path, monkeypatch, where):
    target = tmp_path / "deploy"
    clip_trace("3.0").export(target, formats=("jit", "onnx"))
    before = snapshot(target)
    if where == "writing the second model":
        def interrupted(node):
            raise KeyboardInterrupt
        monkeypatch.setitem(export_module.WRITERS, "onnx-dynamo", interrupted)
    elif where == "reloading a model":
        def interrupted(backend, path, node):
            raise KeyboardInterrupt
        monkeypatch.setattr(export_module, "_load", interrupted)
    else:
        real = export_module._write_file

        def interrupted(path, data, shown):
            if path.suffix == ".yaml":
                path.write_bytes(data[:10])
                raise KeyboardInterrupt
            real(path, data, shown)
        monkeypatch.setattr(export_module, "_write_file", interrupted)

    with pytest.raises(KeyboardInterrupt):
        clip_trace("2.0").export(target, formats=("jit", "onnx"))

    assert snapshot(target) == before and leftovers(target) == []
    assert numpy_restored()


def test_ctrl_c_right_after_the_swap_leaves_the_complete_new_export(tmp_path, monkeypatch):
    target = tmp_path / "deploy"
    clip_trace("3.0").export(target, formats=("jit", "onnx"))
    before = snapshot(target)
    real = export_module._exchange

    def swapped_then_interrupted(a, b):
        real(a, b)
        raise KeyboardInterrupt

    monkeypatch.setattr(export_module, "_exchange", swapped_then_interrupted)
    with pytest.raises(KeyboardInterrupt):
        clip_trace("2.0").export(target, formats=("jit", "onnx"))

    after = snapshot(target)
    assert after != before and sorted(after) == sorted(before)  # the new export, whole
    import hashlib

    import yaml

    params = yaml.safe_load((target / "graph.yaml").read_text())["models"]["node"]["parameters"]
    assert hashlib.sha256((target / params["model_path"]).read_bytes()).hexdigest() == params["sha256sum"]
    assert leftovers(target) == []


def test_ctrl_c_between_the_two_fallback_renames_puts_the_previous_export_back(tmp_path, monkeypatch):
    target = tmp_path / "deploy"
    clip_trace("3.0").export(target)
    before = snapshot(target)
    real = export_module._rename
    calls = []

    def rename(source, destination):
        calls.append(destination)
        if len(calls) == 2:
            raise KeyboardInterrupt
        real(source, destination)

    def unsupported(a, b):
        raise NotImplementedError

    monkeypatch.setattr(export_module, "_exchange", unsupported)
    monkeypatch.setattr(export_module, "_rename", rename)
    with pytest.raises(KeyboardInterrupt):
        clip_trace("2.0").export(target)
    assert snapshot(target) == before and leftovers(target) == []


# ------------------------------------------------------------------------------------------
# the one line the user sees: the magic and the widget
# ------------------------------------------------------------------------------------------

def test_the_magic_shows_a_file_system_failure_as_one_line(tmp_path):
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.utils.capture import capture_output

    (tmp_path / "taken").write_text("a file")
    shell = InteractiveShell.instance()
    shell.reset()
    shell.run_cell("%load_ext leapp_notebook")
    shell.run_cell("import numpy as np\nraw_state = np.array([0.1, 0.4], np.float32)")
    with capture_output() as captured:
        result = shell.run_cell(f"%%leapp_trace scale --inputs raw_state --outputs y --export {tmp_path}/taken/sub\n"
                                "y = raw_state * 2.0\n")
    assert isinstance(result.error_in_exec, ln.ExportBlocked)
    shown = [line for line in (captured.stdout + captured.stderr).splitlines() if "ExportBlocked" in line]
    assert len(shown) == 1 and "Traceback" not in captured.stdout + captured.stderr
    assert shown[0].endswith(f"ExportBlocked\x1b[0m: export failed, nothing was written: {tmp_path}/taken: "
                             "is a file, not a folder")
    assert not hasattr(np.zeros, "__wrapped__")


def test_the_widget_shows_failures_and_refusals_once(tmp_path, seed_namespace):
    (tmp_path / "taken").write_text("a file")
    widget = ln.TraceWidget(clip_trace())
    widget.export_directory.value = str(tmp_path / "taken" / "sub")
    widget._on_export()
    text = widget.export_result.value
    assert "export failed, nothing was written:" in text and "is a file, not a folder" in text
    assert "export refused" not in text

    refused = ln.TraceWidget(ln.trace_cell(SEED_INTERP_CELL, dict(seed_namespace)))
    refused.export_directory.value = str(tmp_path / "out")
    refused._on_export()
    assert refused.export_result.value.count("export refused") == 1
    assert "export refused: nothing was written." in refused.export_result.value
    assert not (tmp_path / "out").exists()


def test_a_refusal_printed_the_quickstart_way_says_export_refused_once(seed_namespace, tmp_path):
    trace = ln.trace_cell(SEED_INTERP_CELL, dict(seed_namespace))
    with pytest.raises(ln.ExportBlocked) as info:
        trace.export(tmp_path / "out")
    assert str(info.value).startswith("export refused: nothing was written.\n")
    assert str(info.value).count("export refused") == 1
