"""notebooks/policy-node.ipynb, executed on a real kernel: the whole-node story end to end, outputs asserted."""

from __future__ import annotations

import shutil
from pathlib import Path

import nbformat
import pytest

nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

NOTEBOOK = Path(__file__).resolve().parents[1] / "notebooks" / "policy-node.ipynb"
MIME_TYPE = "application/vnd.leapp.trace+json"


@pytest.fixture(scope="module")
def book(tmp_path_factory) -> nbformat.NotebookNode:
    root = tmp_path_factory.mktemp("policy")
    (root / "notebooks").mkdir()
    path = root / "notebooks" / NOTEBOOK.name
    shutil.copy(NOTEBOOK, path)
    notebook = nbformat.read(path, as_version=4)
    nbclient.NotebookClient(notebook, timeout=600, kernel_name="python3",
                            resources={"metadata": {"path": str(path.parent)}}).execute()
    nbformat.write(notebook, path)
    book = nbformat.read(path, as_version=4)
    book.metadata["root"] = str(root)
    return book


def text_of(cell) -> str:
    return "".join(out.get("text", "") for out in cell.outputs if out.get("output_type") == "stream")


def models(book):
    return [out["data"][MIME_TYPE] for cell in book.cells if cell.cell_type == "code"
            for out in cell.outputs if MIME_TYPE in out.get("data", {})]


def test_first_trace_finds_training_mode_and_the_frozen_scale_at_their_lines(book):
    first, _ = models(book)
    found = {(h["kind"], h["line"], h["severity"]) for h in first["hazards"]}
    assert found == {("training-mode", 5, "error"), ("value-extraction", 6, "error")}
    modules = [v for node in first["nodes"] for v in node["vertices"] if v["role"] == "module"]
    assert len(modules) == 1 and modules[0]["module"]["type"] == "Sequential"
    assert modules[0]["module"]["params"] == 4 * 32 + 32 + 32 * 32 + 32 + 32 * 2 + 2
    hazards_cell = next(c for c in book.cells if c.cell_type == "code" and c.source.startswith("first ="))
    assert text_of(hazards_cell).splitlines() == ["line 5: error training-mode", "line 6: error value-extraction"]


def test_probe_fails_before_the_fix(book):
    cell = next(c for c in book.cells if c.cell_type == "code" and c.source.startswith("report ="))
    assert text_of(cell).startswith("passed: False")


def test_fixed_node_is_clean_probes_and_exports_and_leapp_agrees(book):
    _, fixed = models(book)
    assert fixed["hazards"] == [] and fixed["summary"]["probe"] == "passed"
    cell = next(c for c in book.cells if c.cell_type == "code" and c.source.startswith("fixed ="))
    assert text_of(cell).strip() == "hazards: 0 | probe passed: True"
    exports = Path(book.metadata["root"]) / "exports" / "policy-node"
    assert (exports / "policy_node.pt").is_file() and (exports / "graph.yaml").is_file()
    last = book.cells[-1]
    expected = "LEAPP agrees with the eager cell: True"
    try:
        import leapp  # noqa: F401
    except ImportError:
        expected = "leapp is not installed"
    assert expected in text_of(last)
