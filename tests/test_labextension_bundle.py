"""The prebuilt JupyterLab extension cannot drift from its sources (no Node needed).

scripts/build_labextension.sh (jlpm build:prod) writes ``leappSourceHash``, a sha256 over labextension's
src/**, style/**, package.json and tsconfig.json, into leapp_notebook/labextension/package.json. This
recomputes it from the checkout and fails when a source changed without a rebuild.
"""

import hashlib
import json
from pathlib import Path

import pytest

import leapp_notebook as ln

SOURCES = Path(__file__).resolve().parents[1] / "labextension"
BUILT = Path(ln.__file__).resolve().parent / "labextension"


def source_hash(root: Path) -> str:
    """labextension/scripts/source-hash.mjs in Python: sha256 over src/**, style/**, package.json and
    tsconfig.json in sorted POSIX relative paths; per file: path, NUL, byte length, NUL, bytes."""
    files = [p for folder in ("src", "style") for p in (root / folder).rglob("*") if p.is_file()]
    files += [root / "package.json", root / "tsconfig.json"]
    digest = hashlib.sha256()
    for name, path in sorted((p.relative_to(root).as_posix(), p) for p in files):
        data = path.read_bytes()
        digest.update(name.encode() + f"\0{len(data)}\0".encode() + data)
    return digest.hexdigest()


@pytest.mark.skipif(not (SOURCES / "package.json").exists(), reason="no labextension/ sources (installed package)")
def test_committed_bundle_was_built_from_the_committed_sources():
    built = json.loads((BUILT / "package.json").read_text())
    assert "leappSourceHash" in built, "rebuild with scripts/build_labextension.sh"
    assert built["leappSourceHash"] == source_hash(SOURCES), (
        "labextension/ changed since leapp_notebook/labextension was built: run scripts/build_labextension.sh "
        "and commit the rebuilt bundle")
    entry = built["jupyterlab"]["_build"]["load"]
    assert entry.startswith("static/remoteEntry.") and (BUILT / entry).exists()


def test_source_hash_changes_with_any_source_file(tmp_path):
    root = tmp_path / "ext"
    (root / "src").mkdir(parents=True)
    (root / "style").mkdir()
    for name, text in {"src/a.ts": "a", "style/index.css": "b", "package.json": "{}", "tsconfig.json": "{}"}.items():
        (root / name).write_text(text)
    first = source_hash(root)
    (root / "src" / "a.ts").write_text("a ")
    assert source_hash(root) != first
    (root / "src" / "a.ts").write_text("a")
    assert source_hash(root) == first
    (root / "src" / "b.ts").write_text("")
    assert source_hash(root) != first
    (root / "src" / "b.ts").unlink()
    (root / "src" / "c.ts").write_text("a")  # same bytes, another name
    (root / "src" / "a.ts").unlink()
    assert source_hash(root) != first
