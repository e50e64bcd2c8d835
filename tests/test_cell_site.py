"""The cell line of a recorded call (tracing/provenance.py, ``cell_site``): read from a per-code-object line table,
not from ``frame.f_lineno``, which decodes the code's line table from its start on every read (quadratic over a long
straight-line cell). The table must give exactly the line ``f_lineno`` gives, wherever a call can stand."""

from __future__ import annotations

import sys

import numpy as np
import pytest

import leapp_notebook as ln
from leapp_notebook.tracing import provenance
from leapp_notebook.tracing.facts import facts

VARIED = '''\
def helper(v, k=2):
    w = v * k
    return [u for u in (w, w + 1)][0]
values = []
for i in range(3):
    values.append(probe(i))
    if i % 2:
        values.append(
            probe(
                i + 10))
    else:
        try:
            raise ValueError(probe(i + 20))
        except ValueError:
            values.append(probe(i + 30))
with open(__file__ if False else "/dev/null") as handle:
    values.append(probe(99))
total = sum(probe(j) for j in range(2)) + helper(probe(7))
f = lambda q: probe(q)
f(5); f(6)
''' + "".join(f"line_{n} = probe({n})\n" for n in range(400))


def test_the_line_table_gives_what_f_lineno_gives_at_every_call():
    seen: list[tuple[int | None, int]] = []

    def probe(value):
        frame = sys._getframe(1)
        seen.append((provenance.frame_line(frame), frame.f_lineno))
        return value

    exec(compile(VARIED, "<cell-site-varied>", "exec"), {"probe": probe, "__file__": "x"})
    assert len(seen) > 410
    assert all(ours == theirs for ours, theirs in seen), [pair for pair in seen if pair[0] != pair[1]][:5]




def test_the_site_table_holds_every_code_unit_line_and_one_site_per_line():
    """Every code unit of the module and of each function it defines gets its line's site, and a unit without a
    line gets None, as ``co_lines`` gives them; the units of one line share one site tuple (compared by
    identity by a replayed op)."""
    module = compile(VARIED, "<cell-site-table>", "exec")
    codes = [module, *(c for c in module.co_consts if hasattr(c, "co_lines"))]
    assert len(codes) > 2
    for code in codes:
        table = provenance.site_table(code)
        assert len(table) == len(code.co_code) // 2
        by_line: dict[int, object] = {}
        for start, end, line in code.co_lines():
            for unit in range(start // 2, end // 2):
                site = table[unit]
                if line is None:
                    assert site is None
                    continue
                assert site == (line, None, None)
                assert by_line.setdefault(line, site) is site

def test_a_session_that_knows_the_cell_finds_every_site_as_the_frame_walk_does():
    """``site_finder`` (a session's ``where``) takes the cell's top-level calls from its line table directly and
    walks the frames for the rest (helpers, lambdas, comprehensions, libraries): the same (line, location, helper)
    as ``cell_site`` at every call of the varied cell, and a library's call site names the library."""
    code = compile(VARIED + "import json\njson.loads('1', parse_int=probe)\n", "<cell-site-top>", "exec")
    where = provenance.site_finder(code, "<cell-site-top>")
    seen: list[tuple[object, object]] = []

    def probe(value):
        seen.append((where(),
                     provenance.cell_site("<cell-site-top>")))
        return value

    exec(code, {"probe": probe, "__file__": "x"})
    assert len(seen) > 410
    assert all(ours == walked for ours, walked in seen), [pair for pair in seen if pair[0] != pair[1]][:5]
    helpers = {site[2] for site, _ in seen}
    assert {None, "<lambda>", "<genexpr>"} <= helpers
    library = seen[-1][0]
    assert library[0] == VARIED.count("\n") + 2 and "json" in library[1] and library[2] is not None

def test_a_long_straight_line_cell_reports_every_line_where_it_stands():
    """Thousands of distinct lines: the recorded facts and a hazard far down the cell carry their own lines."""
    steps = 3000
    body = "".join(f"h = np.maximum(h * 0.{1 + i % 7} - 0.25, h / 2.0)\n" for i in range(steps))
    cell = ("h = annotate.input_tensors('n', {'x': x})\n" + body + "h = h[::-1]\n"
            + "annotate.output_tensors('n', {'y': h})\n")
    trace = ln.trace_cell(cell, {"np": np, "x": np.linspace(-1.0, 1.0, 8, dtype=np.float32)})
    graph = trace.nodes["n"].graph.graph
    lines = {}
    for node in graph.nodes:
        if node.op == "call_function" and node.target.__name__ == "maximum":
            lines[facts(node).line] = True
    assert sorted(lines) == list(range(2, steps + 2))
    reversed_slice = [h for h in trace.hazards if h.kind == "reversed-slice"]
    assert [h.line for h in reversed_slice] == [steps + 2]


def test_call_sites_of_a_long_cell_are_decoded_in_one_pass(monkeypatch):
    """How a call was spelled (keyword or positional, operator or function) is read from the caller's bytecode
    when a LEAPP-defect predicate asks (tracing/leapp_calls.py). Over 4,096 sites used to empty the cache and
    disassemble the whole cell again; now each code object is decoded once and every site still reads right."""
    from leapp_notebook.tracing import leapp_calls

    disassembled = []
    real = leapp_calls.dis.get_instructions

    def counting(code, *args, **kwargs):
        disassembled.append(code.co_name)
        return real(code, *args, **kwargs)

    monkeypatch.setattr(leapp_calls.dis, "get_instructions", counting)
    monkeypatch.setattr(leapp_calls, "_SITE_TABLES", {})
    lines = 5000
    body = "".join("y = np.round(x, 2)\n" if n % 2 else "y = np.round(x, decimals=2)\n" for n in range(lines))
    cell = "x = annotate.input_tensors('n', {'x': a})\n" + body + "annotate.output_tensors('n', {'y': y})\n"
    trace = ln.trace_cell(cell, {"np": np, "a": np.linspace(-1.0, 1.0, 8)})
    flagged = [h.line for h in trace.hazards if "decimals is passed positionally" in h.message]
    assert flagged == [n + 2 for n in range(lines) if n % 2]
    assert disassembled == ["<module>"]


def test_cell_lines_numbers_lines_as_python_does():
    """``cell_lines`` (the split the linecache entry, the renderers and the hazard lines read) against its definition:
    only \\n, \\r\\n and \\r end a line; with ``keepends`` each line keeps its ending and a last line without one is
    kept. Random texts of every ending, with form feeds and U+2028 (which str.splitlines would split at)."""
    import random
    import re

    def by_definition(source: str, keepends: bool) -> list[str]:
        if keepends:
            return [m.group(0) for m in re.finditer(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$", source)]
        lines = re.split(r"\r\n|\r|\n", source)
        return lines[:-1] if lines and lines[-1] == "" else lines

    rng = random.Random(7)
    alphabets = (["a", "b", "\n", "\x0c", "\u2028", " "], ["a", "\n", "\r", "\r\n", "\x85", " "])
    for n in range(4000):
        source = "".join(rng.choice(alphabets[n % 2]) for _ in range(rng.randint(0, 14)))
        for keepends in (False, True):
            assert provenance.cell_lines(source, keepends=keepends) == by_definition(source, keepends), repr(source)
    assert provenance.cell_lines("x = 1\ny = 2\n", keepends=True) == ["x = 1\n", "y = 2\n"]
    assert provenance.cell_lines("x = 1\r\ny = 2", keepends=True) == ["x = 1\r\n", "y = 2"]
    assert provenance.cell_lines("x\x0cy\nz") == ["x\x0cy", "z"]


@pytest.mark.parametrize("source, kind, line", [
    ("y = (\n    x\n    .reshape(2, 2)[::-1]\n    .sum(axis=1)\n)\n", "reversed-slice", 3),
    ("y = (\n    x * 2.0\n)[::-1]\n", "reversed-slice", 3),
    ("y = x * (\n    x\n    .reshape(4)[0]\n)\n", "broken-chain", 3),
])
def test_a_subscript_in_an_expression_over_several_lines_is_at_the_line_of_its_bracket(source, kind, line):
    """Python gives a subscript the line where its whole expression starts (`y = (`, `    x`); the hazard is at the
    line the user wrote the subscript on, as a call's is."""
    t = ln.trace_cell(source, {"np": np, "x": np.array([0.5, 1.0, 1.5, 2.0], np.float32)}, inputs=["x"],
                      outputs=["y"])
    (hazard,) = [h for h in t.hazards if h.kind == kind]
    assert hazard.line == line and "[" in hazard.code, hazard
