"""docs/hazards.md agrees with the catalogue in tracing/hazards.py: every kind documented, the severities right."""

from __future__ import annotations

import re
import string
from pathlib import Path

import pytest

from leapp_notebook.tracing import hazards as hz

DOC = Path(__file__).resolve().parents[1] / "docs" / "hazards.md"


def documented_kinds() -> dict[str, tuple[str, str]]:
    """kind -> (leapp column, full column) from the table in docs/hazards.md."""
    rows = {}
    for line in DOC.read_text(encoding="utf-8").splitlines():
        match = re.match(r"^\| `([a-z-]+)` \|(.*)\|(.*)\|(.*)\|$", line)
        if match:
            rows[match.group(1)] = (match.group(3), match.group(4))
    return rows


def first_severity(text: str) -> str:
    return re.search(r"error|warning", text).group(0)


def test_every_kind_in_the_catalogue_is_documented_and_nothing_else():
    assert set(documented_kinds()) == set(hz.CATALOGUE)


@pytest.mark.parametrize("kind", sorted(hz.CATALOGUE))
def test_documented_severities_match_the_catalogue(kind):
    leapp_column, full_column = documented_kinds()[kind]
    entry = hz.CATALOGUE[kind]
    assert first_severity(leapp_column) == entry.leapp_severity
    assert first_severity(full_column) == entry.full_severity


def test_every_cause_belongs_to_a_kind_and_has_a_fix():
    for cause, entry in hz.CAUSES.items():
        assert entry.kind in hz.CATALOGUE, cause
        fields = {name for _, name, _, _ in string.Formatter().parse(entry.message) if name}
        values = {name: f"<{name}>" for name in fields | {"name", "node"}}
        message = entry.message.format(**values)
        assert "{" not in message, cause
        if entry.fix is not None:  # a cause's own fix template, filled from the same fields
            fields = {name for _, name, _, _ in string.Formatter().parse(entry.fix) if name}
            assert "{" not in entry.fix.format(**{name: f"<{name}>" for name in fields | {"name", "node"}}), cause
        fix = hz.fix_for(entry.kind, line=3, code="y = f(x)", name="f")
        assert "line 3" in fix and "`y = f(x)`" in fix, cause


def test_a_fix_with_no_cell_line_names_none():
    """An output given to trace_cell has no cell line: its fix text neither points at one nor quotes empty code."""
    for kind in hz.CATALOGUE:
        fix = hz.fix_for(kind, line=None, code="", name="f")
        assert "line None" not in fix and "``" not in fix and "this line" not in fix, kind
        assert fix[:1].isupper(), kind
    assert hz.fix_for("untraced-call", line=4, code="", name="f").startswith("At line 4: ")


def test_each_kind_has_at_least_one_cause():
    assert {entry.kind for entry in hz.CAUSES.values()} == set(hz.CATALOGUE)
