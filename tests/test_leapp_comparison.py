"""Against real LEAPP 0.7.2 (optional): wherever LEAPP's export is wrong or fails, profile="leapp"
shows an error hazard, and profile="full" is either faithful or shows one too."""

import sys
from pathlib import Path

import pytest

pytest.importorskip("leapp")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.leapp_cases import CASES  # noqa: E402
from benchmarks.leapp_comparison import leapp_verdict, ours  # noqa: E402


@pytest.mark.parametrize("name,body,x", CASES, ids=[c[0] for c in CASES])
def test_no_construct_is_exported_wrong_silently(name, body, x):
    theirs = leapp_verdict(body, x)
    mine = ours(body, x, "leapp")
    if theirs != "faithful":
        assert mine["errors"], f"LEAPP 0.7.2 is {theirs} on {name!r} but profile='leapp' shows no error hazard"
    full = ours(body, x, "full")
    if full["verdict"] != "faithful":
        assert full["errors"], f"profile='full' is {full['verdict']} on {name!r} without an error hazard"
