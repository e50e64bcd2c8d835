"""One-click fixes: each rewrite removes its hazard, gives a graph whose probe passes and a cell whose
eager result is unchanged; the edit touches only its lines; no edit where the rewrite is not certain."""

import dataclasses

import numpy as np
import pytest
from conftest import SEED_INTERP_CELL

import leapp_notebook as ln
from leapp_notebook import fixes
from leapp_notebook.fixes import Edit
from leapp_notebook.render.model import graph_model

X1 = np.array([0.5, -0.3, 1.2, 0.8], np.float32)
X2 = (np.arange(12, dtype=np.float32).reshape(3, 4) - 5) / 7
X8 = np.arange(8, dtype=np.float32) / 3


def seed_namespace():
    return {"np": np, "raw_state": np.array([0.1, 0.4, 0.7, 0.9], np.float32),
            "CALIB_IN": np.array([0.0, 0.5, 1.0]), "CALIB_OUT": np.array([0.0, 2.0, 10.0])}


def trace_xy(source, x, profile="leapp"):
    return ln.trace_cell(source, {"np": np, "x": x}, inputs=["x"], outputs=["y"], profile=profile)


def only(trace, kind, line=None):
    found = [h for h in trace.hazards if h.kind == kind and (line is None or h.line == line)]
    assert len(found) == 1, f"expected one {kind} hazard, got {trace.hazards}"
    return found[0]


def eager(source, namespace, name):
    """Run ``source`` as plain Python (annotate passes values through) and return variable ``name``."""
    namespace = dict(namespace, annotate=ln.annotate)
    exec(compile(source, "<cell>", "exec"), namespace)
    return namespace[name]


def assert_same_value(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert (a.shape, a.dtype) == (b.shape, b.dtype)
    np.testing.assert_array_equal(a, b)


def check_fix(source, kind, line, retrace, namespace, output, only_error=True, clean=None):
    """Apply the fix of the ``kind`` hazard at ``line``; check it is gone, the probe passes, eager is unchanged.

    ``only_error``: the hazard is the original's only error; ``clean`` (default: the same): the fixed
    cell has no hazard at all.
    """
    before = retrace(source)
    hazard = only(before, kind, line)
    edit = fixes.edit_for(before.source, hazard, before)
    assert isinstance(edit, Edit), f"no edit for {hazard}"
    fixed = edit.apply(before.source)
    assert fixes.apply(before.source, hazard, before) == fixed
    after = retrace(fixed)
    assert not [h for h in after.hazards if h.kind == kind], after.hazards
    if only_error:
        assert [h for h in before.hazards if h.severity == "error"] == [hazard]
    if only_error if clean is None else clean:
        assert after.ok and after.hazards == [], after.hazards
    assert after.probe(seed=0).passed
    assert_same_value(eager(fixed, namespace, output), eager(source, namespace, output))
    return edit, fixed


def check_xy(source, kind, line, x, only_error=True):
    return check_fix(source, kind, line, lambda s: trace_xy(s, x), {"np": np, "x": x}, "y", only_error)


# ----------------------------------------------------------------------------- reversed-slice

@pytest.mark.parametrize("source,x,new", [
    ("y = x[::-1]", X1, "y = np.flip(x, axis=0)"),
    ("flipped = x[::-1]\ny = flipped * 2", X1, "flipped = np.flip(x, axis=0)"),
    ("y = x[5:1:-2]", X8, "y = np.flip(x[2:6], axis=0)[::2]"),
    ("y = x[6::-3]", X8, "y = np.flip(x[:7], axis=0)[::3]"),
    ("y = x[:2:-1]", X8, "y = np.flip(x[3:], axis=0)"),
    ("y = x[::-1, ::2]", X2, "y = np.flip(x[:, ::2], axis=0)"),
    ("y = x[:, ::-2]", X2, "y = np.flip(x, axis=1)[:, ::2]"),
    ("y = x[::-1, ::-1]", X2, "y = np.flip(x, axis=(0, 1))"),
    ("y = x[1, ::-1]", X2, "y = np.flip(x[1, :], axis=0)"),
    ("y = x[1:3][::-1] * 2", X1, "y = np.flip(x[1:3], axis=0) * 2"),
    ("y = x[::-1] + x[::-1] * x[::-1]", X1, "y = np.flip(x, axis=0) + np.flip(x, axis=0) * np.flip(x, axis=0)"),
])
def test_reversed_slice_becomes_np_flip_with_the_same_values(source, x, new):
    edit, _ = check_xy(source, "reversed-slice", 1, x)
    assert (edit.line, edit.end_line) == (1, 1)
    assert edit.old == source.splitlines()[0] and edit.new == new


def test_reversed_slice_edit_needs_no_trace():
    t = trace_xy("y = x[::-1]", X1)
    assert fixes.edit_for(t.source, t.hazards[0]) == Edit(1, 1, "y = x[::-1]", "y = np.flip(x, axis=0)")


@pytest.mark.parametrize("source,x", [
    ("y = x[-1:-4:-1]", X8),          # bounds from the end: the forward slice would differ
    ("y = x[s::-1]", X8),             # a bound that is not a literal
    ("y = x[::step]", X8),            # a step that is not a literal
    ("y = x[None, ::-1]", X8),        # None / ... / index arrays shift the output axes
    ("y = x[..., ::-1]", X2),
])
def test_reversed_slice_without_a_certain_rewrite_gets_no_edit(source, x):
    t = ln.trace_cell(source, {"np": np, "x": x, "s": 5, "step": -1}, inputs=["x"], outputs=["y"])
    hazard = only(t, "reversed-slice")
    assert fixes.edit_for(t.source, hazard, t) is None


def test_a_reversed_python_list_on_the_line_is_checked_by_the_eager_result():
    t = ln.trace_cell("y = x[::-1] * len(names[::-1])", {"np": np, "x": X1, "names": ["a", "b"]},
                      inputs=["x"], outputs=["y"])
    hazard = only(t, "reversed-slice")
    assert len(hazard.graph_nodes) == 1        # the list's reversal is not in the graph
    assert fixes.edit_for(t.source, hazard) is None     # two rewrites, one graph node: not certain alone
    edit = fixes.edit_for(t.source, hazard, t)
    assert edit.new == "y = np.flip(x, axis=0) * len(np.flip(names, axis=0))"  # same length: same result


def test_reversed_slice_in_an_assignment_target_gets_no_edit():
    hazard = ln.Hazard("reversed-slice", "error", "node", 1, "x[::-1] = z", "", "", graph_nodes=["getitem"])
    assert fixes.edit_for("x[::-1] = z\n", hazard) is None


# ----------------------------------------------------------------------------- value-extraction

@pytest.mark.parametrize("source,new", [
    ("scale = float(x.max())\ny = x / scale", "scale = x.max()"),
    ("y = x * x.max().item()", "y = x * x.max()"),
    ("y = x * float(x.sum())", "y = x * x.sum()"),
    ("y = (x - float(np.mean(x))) / 2", "y = (x - np.mean(x)) / 2"),
    ("scale = x.sum().item()\ny = x * scale - scale", "scale = x.sum()"),
])
def test_value_extraction_keeps_the_array(source, new):
    before = trace_xy(source, X1)
    edit, fixed = check_xy(source, "value-extraction", 1, X1, only_error=False)
    assert edit.new == new and edit.line == edit.end_line == 1
    others = sorted((h.kind, h.line) for h in before.hazards if h.kind != "value-extraction")
    assert sorted((h.kind, h.line) for h in trace_xy(fixed, X1).hazards) == others


def test_value_extraction_of_an_expression_keeps_its_parentheses():
    # 0-d arithmetic leaves LEAPP's trace (broken-chain), so this one is checked in the full profile
    source = "y = x * float(x[1:] @ x[:-1]) + x"
    edit, _ = check_fix(source, "value-extraction", 1, lambda s: trace_xy(s, X1, "full"), {"np": np, "x": X1}, "y",
                        only_error=False)
    assert edit.new == "y = x * (x[1:] @ x[:-1]) + x"


def test_float_of_the_max_then_the_max_rewrite_gives_a_clean_cell():
    source = "scale = float(x.max())\ny = x / scale"
    t = trace_xy(source, X1)
    fixed = fixes.apply(source, only(t, "value-extraction"), t)
    t2 = trace_xy(fixed, X1)
    mismatch = only(t2, "semantic-mismatch")   # LEAPP 0.7.2 records x.max() wrongly: its own fix follows
    edit = fixes.edit_for(fixed, mismatch, t2)
    assert edit == Edit(1, 1, "scale = x.max()", "scale = np.max(x)")
    clean = trace_xy(edit.apply(fixed), X1)
    assert clean.hazards == [] and clean.probe(seed=0).passed
    assert_same_value(eager(edit.apply(fixed), {"np": np, "x": X1}, "y"), eager(source, {"np": np, "x": X1}, "y"))


@pytest.mark.parametrize("source", [
    "n = int(np.argmax(x))\ny = x[:n + 1]",                    # int() truncates: not the same value
    "y = x * float(x.max()) + float(x.min())",                 # two extractions on one line
    "scale = float(x.sum())\ny = x[:2] * scale + len(x[:int(scale)])",   # used as a Python number
    "y = x * len(x.tolist())",
])
def test_value_extraction_that_is_not_only_arithmetic_gets_no_edit(source):
    t = trace_xy(source, X1)
    for hazard in t.hazards:
        if hazard.kind == "value-extraction":
            assert fixes.edit_for(t.source, hazard, t) is None, hazard


@pytest.mark.parametrize("source", [
    "scale = float(x.max())\nscale = scale * 2\ny = x / scale",           # bound again
    "scale = float(x.max())\ny = x / scale\nprint(scale)",                # used outside arithmetic
    "scale = float(x.max())\ny = x[scale > 0.5:]",
])
def test_value_extraction_with_other_uses_of_its_name_gets_no_edit(source):
    t = trace_xy(source, X1)
    assert fixes.edit_for(t.source, only(t, "value-extraction", 1), t) is None


def test_value_extraction_edit_needs_the_trace_to_check_the_eager_result():
    t = trace_xy("y = x * x.max().item()", X1)
    hazard = only(t, "value-extraction")
    assert fixes.edit_for(t.source, hazard) is None
    assert fixes.edit_for(t.source, hazard, t) is not None


def test_value_extraction_whose_array_would_change_the_dtype_gets_no_edit():
    # float(.) of a float64 value multiplies float32 data as a weak Python float; the 0-d float64 array
    # would promote y to float64: the eager check refuses the rewrite.
    t = trace_xy("y = x * x.astype(np.float64).sum().item()", X1)
    assert fixes.edit_for(t.source, only(t, "value-extraction"), t) is None


# ----------------------------------------------------------------------------- broken-chain

@pytest.mark.parametrize("source,x,new", [
    ("y = x * x[0]", X1, "y = x * x[0:1]"),
    ("y = x + x[0, 0]", X2, "y = x + x[0:1, 0:1]"),
    ("y = x * x[-1, 2]", X2, "y = x * x[-1:, 2:3]"),
    ("y = x - x[-2]", X1, "y = x - x[-2:-1]"),
])
def test_scalar_key_keeps_an_axis(source, x, new):
    edit, _ = check_xy(source, "broken-chain", 1, x)
    assert edit.new == new


def test_the_seeds_corner_bound_to_a_name_keeps_an_axis():
    source = "corner = grid[0, 0]\ny = grid * corner"
    edit, _ = check_fix(source, "broken-chain", 1,
                        lambda s: ln.trace_cell(s, {"np": np, "grid": X2}, inputs=["grid"], outputs=["y"]),
                        {"np": np, "grid": X2}, "y")
    assert edit == Edit(1, 1, "corner = grid[0, 0]", "corner = grid[0:1, 0:1]")


def test_loop_over_a_slice_iterates_over_kept_axis_slices():
    source = "total = 0\nfor v in x[:2]:\n    total = total + v\ny = x * total"
    edit, fixed = check_xy(source, "broken-chain", 2, X1)
    assert edit == Edit(2, 2, "for v in x[:2]:", "for v in (x[0:1], x[1:2]):")
    assert fixed == "total = 0\nfor v in (x[0:1], x[1:2]):\n    total = total + v\ny = x * total"


def test_loop_over_a_slice_in_the_full_profile():
    source = "total = 0\nfor v in x[1:3]:\n    total = total + v * 2\ny = x * total"
    edit, _ = check_fix(source, "broken-chain", 2, lambda s: trace_xy(s, X1, "full"), {"np": np, "x": X1}, "y",
                        only_error=False)
    assert edit.new == "for v in (x[1:2], x[2:3]):"


@pytest.mark.parametrize("source,new", [
    ("total = 0\nfor v in x:\n    total = total + v\ny = x * total",
     "for v in (x[i:i + 1] for i in range(len(x))):"),
    ("i = 2\ntotal = 0\nfor v in x:\n    total = total + v * i\ny = x * total",
     "for v in (x[i2:i2 + 1] for i2 in range(len(x))):"),
    ("total = 0\nfor v in X[0:20]:\n    total = total + v\ny = x * total",
     "for v in (X[0:20][i:i + 1] for i in range(len(X[0:20]))):"),
])
def test_loop_over_an_array_iterates_over_kept_axis_slices(source, new):
    namespace = {"np": np, "x": X1, "X": np.arange(24, dtype=np.float32) / 5}
    line = next(i for i, text in enumerate(source.splitlines(), 1) if text.startswith("for "))
    edit, _ = check_fix(source, "broken-chain", line,
                        lambda s: ln.trace_cell(s, dict(namespace), inputs=["x", "X"], outputs=["y"]), namespace, "y")
    assert edit.new == new


def test_unpacking_a_slice_becomes_slices_of_it():
    source = "a, b = x[1:3]\ny = x * a + b"
    edit, _ = check_xy(source, "broken-chain", 1, X1)
    assert edit.new == "a, b = x[1:3][0:1], x[1:3][1:2]"


def test_unpacking_becomes_slices():
    source = "w, a, b, c = x\ny = x * a + w - b * c"
    edit, _ = check_xy(source, "broken-chain", 1, X1)
    assert edit.new == "w, a, b, c = x[0:1], x[1:2], x[2:3], x[3:4]"


@pytest.mark.parametrize("source,line", [
    ("y = x[0] * 2", 1),                                  # the output itself would become (1,)
    ("corner = x[0]\ny = x * corner\nz = int(corner)", 1),   # the name is also used as a Python number
    ("corner = x[0]\ny = corner", 1),                      # the output would become (1,)
    ("total = 0\nfor v in x[:n]:\n    total = total + v\ny = x * total", 2),  # bound not a literal
    ("total = 0\nfor v in x[:2]:\n    total = total + v\ny = total", 2),      # output shape would change
])
def test_broken_chain_without_a_certain_rewrite_gets_no_edit(source, line):
    t = ln.trace_cell(source, {"np": np, "x": X1, "n": 2}, inputs=["x"], outputs=["y"])
    hazard = only(t, "broken-chain", line)
    assert fixes.edit_for(t.source, hazard, t) is None


# ----------------------------------------------------------------------------- numpy-scalar

@pytest.mark.parametrize("source,new", [
    ("y = x * np.float32(2.0)", "y = x * np.array(2.0, dtype=np.float32)"),
    ("y = (x - np.float32(0.5)) * np.float32(3)",
     "y = (x - np.array(0.5, dtype=np.float32)) * np.array(3, dtype=np.float32)"),
])
def test_numpy_scalar_becomes_a_0d_array(source, new):
    edit, _ = check_xy(source, "numpy-scalar", 1, X1)
    assert edit.new == new


def test_numpy_scalar_of_another_dtype_keeps_numpys_promotion():
    # float64 on float32 data: NumPy gives float64, LEAPP's torch model float32. The 0-d array keeps
    # NumPy's result; LEAPP's promotion defect is its own semantic-mismatch, before and after.
    source = "y = x * np.float64(2.5)"
    edit, fixed = check_xy(source, "numpy-scalar", 1, X1, only_error=False)
    assert eager(fixed, {"np": np, "x": X1}, "y").dtype == np.float64
    assert [h.kind for h in trace_xy(fixed, X1).hazards] == ["semantic-mismatch"]


def test_numpy_scalar_with_keyword_arguments_gets_no_edit():
    hazard = ln.Hazard("numpy-scalar", "error", "node", 1, "", "", "")
    assert fixes.edit_for("y = x * np.float32(*args)\n", hazard) is None


# ----------------------------------------------------------------------------- untraced-call: split the node

SPLIT_SEED = '''\
state = annotate.input_tensors("node", {"state": raw_state})
# np.interp has no torch equivalent, so this line is not recorded.
annotate.output_tensors("node", {"state": state})
calibrated = np.interp(state, CALIB_IN, CALIB_OUT)
node_post = annotate.input_tensors("node_post", {"state": state, "calibrated": calibrated})
state, calibrated = node_post["state"], node_post["calibrated"]
result = state * 0.1 + calibrated
annotate.output_tensors("node_post", {"result": result}, export_with="jit")
'''


def test_seed_interp_is_split_into_two_nodes_around_the_call():
    edit, fixed = check_fix(SEED_INTERP_CELL, "untraced-call", 3, lambda s: ln.trace_cell(s, seed_namespace()),
                            seed_namespace(), "result")
    assert fixed == SPLIT_SEED
    assert (edit.line, edit.end_line) == (3, 5)
    assert edit.old == "\n".join(SEED_INTERP_CELL.splitlines()[2:5])
    assert list(ln.trace_cell(fixed, seed_namespace()).nodes) == ["node", "node_post"]


def test_split_carries_only_the_values_used_after_the_call():
    source = (
        "s = annotate.input_tensors('pre', {'s': raw_state})\n"
        "scaled = s * 2.0  # traced\n"
        "table = np.interp(scaled, CALIB_IN, CALIB_OUT)\n"
        "out = table + 1.0\n"
        "annotate.output_tensors('pre', {'out': out})\n"
    )
    before = ln.trace_cell(source, seed_namespace())
    assert {h.kind for h in before.hazards} == {"untraced-call", "untraced-output"}   # out comes from the baked call
    edit, fixed = check_fix(source, "untraced-call", 3, lambda s: ln.trace_cell(s, seed_namespace()),
                            seed_namespace(), "out", only_error=False, clean=True)
    assert fixed.splitlines() == [
        "s = annotate.input_tensors('pre', {'s': raw_state})",
        "scaled = s * 2.0  # traced",
        "annotate.output_tensors('pre', {'scaled': scaled})",
        "table = np.interp(scaled, CALIB_IN, CALIB_OUT)",
        "table = annotate.input_tensors('pre_post', {'table': table})",
        "out = table + 1.0",
        "annotate.output_tensors('pre_post', {'out': out})",
    ]


def test_split_picks_a_node_name_the_cell_does_not_use():
    source = SEED_INTERP_CELL + 'other = annotate.input_tensors("node_post", {"o": raw_state})\n' \
        'annotate.output_tensors("node_post", {"o2": other * 2})\n'
    t = ln.trace_cell(source, seed_namespace())
    fixed = fixes.apply(t.source, only(t, "untraced-call"), t)
    assert 'annotate.input_tensors("node_post2", {"state": state, "calibrated": calibrated})' in fixed
    t2 = ln.trace_cell(fixed, seed_namespace())
    assert t2.ok and set(t2.nodes) == {"node", "node_post2", "node_post"}


@pytest.mark.parametrize("source", [
    "y = x + np.interp(x, [0.0, 1.0], [0.0, 2.0])",                        # no annotate: nothing to split
    "for i in range(2):\n    z = np.interp(x, [0.0, 1.0], [0.0, 2.0])\ny = x + z",   # inside a loop
])
def test_untraced_call_without_a_node_to_split_gets_no_edit(source):
    t = trace_xy(source, X1)
    for hazard in t.hazards:
        assert fixes.edit_for(t.source, hazard, t) is None


def test_split_is_offered_only_with_the_trace_that_checks_it():
    t = ln.trace_cell(SEED_INTERP_CELL, seed_namespace())
    assert fixes.edit_for(t.source, only(t, "untraced-call")) is None
    assert fixes.edit_for(t.source, only(t, "untraced-call"), t) is not None


def test_split_that_would_export_a_python_number_gets_no_edit():
    # n = len(state) is computed from the node's data, so the split would export it: not an array,
    # the re-trace reports a new error and no edit is offered.
    source = SEED_INTERP_CELL.replace("calibrated = np.interp", "n = len(state)\ncalibrated = np.interp") \
        .replace("result = state * 0.1 + calibrated", "result = state * 0.1 + calibrated * n")
    t = ln.trace_cell(source, seed_namespace())
    hazard = only(t, "untraced-call")
    assert hazard.line == 4
    assert fixes.edit_for(t.source, hazard, t) is None


def test_untraced_call_not_alone_on_its_line_gets_no_edit():
    source = SEED_INTERP_CELL.replace("calibrated = np.interp(state, CALIB_IN, CALIB_OUT)",
                                      "calibrated = np.interp(state, CALIB_IN, CALIB_OUT); z = 1")
    t = ln.trace_cell(source, seed_namespace())
    assert fixes.edit_for(t.source, only(t, "untraced-call"), t) is None


def test_hazard_inside_a_library_gets_no_edit():
    pytest.importorskip("scipy")
    t = trace_xy("import scipy.special\ny = scipy.special.expit(x[::-1]) + x", X1)
    for hazard in t.hazards:
        if hazard.location:
            assert fixes.edit_for(t.source, hazard, t) is None


# ----------------------------------------------------------------------------- edits keep the rest of the cell

def test_the_edit_changes_only_its_lines_and_keeps_comments_and_spacing():
    source = (
        "# reverse, then scale   (odd   spacing kept)\n"
        "scale  =  2.0   # a comment\n"
        "\n"
        "y = x[::-1]*scale    # flip here\n"
        "y = y  +  1  # trailing\n"
    )
    t = trace_xy(source, X1)
    edit = fixes.edit_for(t.source, only(t, "reversed-slice"), t)
    assert edit == Edit(4, 4, "y = x[::-1]*scale    # flip here", "y = np.flip(x, axis=0)*scale    # flip here")
    fixed = edit.apply(source)
    assert fixed.splitlines()[:3] == source.splitlines()[:3] and fixed.splitlines()[4:] == source.splitlines()[4:]
    assert fixed.endswith("# trailing\n")


def test_a_hazard_inside_a_loop_body_edits_that_line_only():
    source = "y = x * 0\nfor i in range(2):\n    # reversed on purpose\n    y = y + x[::-1] * i\n"
    edit, fixed = check_xy(source, "reversed-slice", 4, X1)
    assert edit == Edit(4, 4, "    y = y + x[::-1] * i", "    y = y + np.flip(x, axis=0) * i")


def test_multi_line_statement_edits_the_line_holding_the_construct():
    source = "y = (x[::-1]\n     + 1)  # two lines\n"
    t = trace_xy(source, X1)
    edit = fixes.edit_for(t.source, only(t, "reversed-slice"), t)
    assert edit == Edit(1, 1, "y = (x[::-1]", "y = (np.flip(x, axis=0)")


def test_windows_line_breaks_survive_an_edit():
    source = "a = 1\r\ny = x[::-1]\r\nz = 2\r\n"
    hazard = ln.Hazard("reversed-slice", "error", "node", 2, "y = x[::-1]", "", "", graph_nodes=["getitem"])
    edit = fixes.edit_for(source, hazard)
    assert edit.apply(source) == "a = 1\r\ny = np.flip(x, axis=0)\r\nz = 2\r\n"


def test_an_edit_of_a_changed_source_is_refused():
    edit = Edit(1, 1, "y = x[::-1]", "y = np.flip(x, axis=0)")
    with pytest.raises(ValueError, match="changed"):
        edit.apply("y = x[::-2]\n")
    with pytest.raises(ValueError, match="does not fit"):
        edit.apply("")


def test_magic_cells_are_numbered_with_the_magic_line():
    from leapp_notebook.magic import parse_options, run_cell

    cell = "# flip it\ny = x[::-1]  # keep\n"
    trace = run_cell(parse_options("--inputs x --outputs y"), cell, {"np": np, "x": X1}).trace
    (edit,) = fixes.edits(trace)
    hazard = only(trace, "reversed-slice")
    assert edit.line == hazard.line == 3    # line 1 is %%leapp_trace, as in the cell editor
    assert edit.old == cell.splitlines()[edit.line - 2]


def test_edits_lists_one_entry_per_hazard():
    t = trace_xy("y = x[::-1] * np.float32(2.0)\nif x.any():\n    y = y + 1", X1)
    found = dict(zip([h.kind for h in t.hazards], fixes.edits(t), strict=True))
    assert found["reversed-slice"].new == "y = np.flip(x, axis=0) * np.float32(2.0)"
    assert found["numpy-scalar"].new == "y = x[::-1] * np.array(2.0, dtype=np.float32)"
    assert found["data-dependent-branch"] is None


def test_a_cell_that_does_not_parse_gets_no_edit():
    hazard = ln.Hazard("reversed-slice", "error", "node", 1, "", "", "", graph_nodes=["getitem"])
    assert fixes.edit_for("y = x[::-1]\n", hazard) is not None
    assert fixes.edit_for("y = x[::-1\n", hazard) is None
    assert fixes.edit_for("y = x[::-1]\n", dataclasses.replace(hazard, line=7)) is None


# ----------------------------------------------------------------------------- the graph model

def test_graph_model_carries_the_edit_of_the_reversed_slice_seed_cell():
    source = "flipped = x[::-1]                                  # reversed-slice\ny = flipped + 0"
    model = graph_model(trace_xy(source, X1))
    (hazard,) = model["hazards"]
    assert hazard["kind"] == "reversed-slice"
    assert hazard["edit"] == {"line": 1, "end_line": 1, "old": source.splitlines()[0],
                              "new": "flipped = np.flip(x, axis=0)                                  # reversed-slice"}


def test_graph_model_has_no_edit_where_no_rewrite_is_offered():
    model = graph_model(trace_xy("if x.any():\n    y = x * 2\nelse:\n    y = x", X1))
    assert [h["kind"] for h in model["hazards"]] == ["data-dependent-branch"]
    assert "edit" not in model["hazards"][0]


def test_graph_model_carries_the_split_of_the_interp_seed():
    model = graph_model(ln.trace_cell(SEED_INTERP_CELL, seed_namespace()))
    edit = model["hazards"][0]["edit"]
    assert Edit(**edit).apply(SEED_INTERP_CELL) == SPLIT_SEED


# ----------------------------------------------------------------------------- semantic-mismatch (LEAPP's axis=None)

@pytest.mark.parametrize("source,new", [
    ("y = x * x.max()", "y = x * np.max(x)"),
    ("y = x - x.min(axis=None)", "y = x - np.min(x)"),
    ("y = x * np.max(x, axis=None)", "y = x * np.max(x)"),
    ("y = np.cumsum(x)", "y = np.cumsum(x.reshape(-1), axis=0)"),
    ("y = (x * 2).cumprod()", "y = np.cumprod((x * 2).reshape(-1), axis=0)"),
])
def test_axis_none_defect_is_rewritten_without_an_axis(source, new):
    edit, _ = check_xy(source, "semantic-mismatch", 1, X1)
    assert edit.new == new


@pytest.mark.parametrize("source", [
    "y = np.squeeze(x)",                 # a view of the input: not an axis=None rewrite
    "y = np.round(x, 2)",                # np.round(x * 100) / 100 is not bit-identical
    "y = x + np.array(1.0)",
])
def test_other_semantic_mismatches_get_no_edit(source):
    t = trace_xy(source, X1)
    assert fixes.edit_for(t.source, only(t, "semantic-mismatch"), t) is None


def test_hazards_a_probe_adds_later_get_their_own_entry(monkeypatch):
    import torch

    from leapp_notebook.tracing import ops

    # a wrong lookup row (as in test_probe): only the probe sees it, and adds a semantic-mismatch
    wrong = dataclasses.replace(ops.UFUNC_ROWS[np.subtract], build=ops.elementwise(torch.add))
    monkeypatch.setitem(ops.UFUNC_ROWS, np.subtract, wrong)
    t = trace_xy("w = x[::-1] * 3.0\nz = x * 3.0\ny = z - x", X1)
    assert [m["kind"] for m in graph_model(t)["hazards"]] == ["reversed-slice"]
    t.probe(seed=0)
    model = graph_model(t)
    assert [m["kind"] for m in model["hazards"]] == ["reversed-slice", "semantic-mismatch"]
    assert model["hazards"][0]["edit"]["new"] == "w = np.flip(x, axis=0) * 3.0"
    assert "edit" not in model["hazards"][1]
    assert len(fixes.edits(t)) == 2


def test_checking_a_rewrite_leaves_the_users_input_arrays_alone():
    x = X1.copy()
    namespace = {"np": np, "x": x}
    t = ln.trace_cell("x *= 2\ny = x * x[0]", namespace, inputs=["x"], outputs=["y"])
    after_the_cell = x.copy()   # the cell itself doubled x, as running it does in a notebook
    assert fixes.edit_for(t.source, only(t, "broken-chain"), t).new == "y = x * x[0:1]"
    np.testing.assert_array_equal(x, after_the_cell)   # the eager re-runs worked on copies


@pytest.mark.parametrize("source,x,new", [
    ("y = x / np.sqrt(np.sum(x * x))", X1, "y = x / np.sqrt(np.sum(x * x, keepdims=True))"),
    ("y = x / np.sqrt(np.sum(x * x))", X2, "y = x / np.sqrt(np.sum(x * x, keepdims=True))"),
    ("y = x * (x.sum() + x.mean()) + x", X1, "y = x * (x.sum(keepdims=True) + x.mean(keepdims=True)) + x"),
    ("y = x - (x.max() - x.min())", X1, "y = x - (np.max(x, keepdims=True) - np.min(x, keepdims=True))"),
    ("y = x / (np.sum( x ,) + 1)", X1, "y = x / (np.sum( x , keepdims=True) + 1)"),
])
def test_arithmetic_on_a_full_reduction_keeps_its_axes(source, x, new):
    edit, _ = check_xy(source, "broken-chain", 1, x, only_error=False)
    assert edit.new == new


def test_a_reduction_whose_0d_result_is_the_output_gets_no_edit():
    t = trace_xy("y = np.sqrt(np.sum(x * x))", X1)
    for hazard in t.hazards:
        assert fixes.edit_for(t.source, hazard, t) is None


# ----------------------------------------------------------------------------- a write into a node input

@pytest.mark.parametrize("source,line,new", [
    ('x = annotate.input_tensors("n", {"x": raw})\nx += 1\ny = x * 2\nannotate.output_tensors("n", {"y": y})\n',
     2, "x = x.copy()\nx += 1"),
    ('obs = annotate.input_tensors("n", {"x": raw})  # the observation\nh = obs * 1\nobs[0] = 5\ny = obs * h\n'
     'annotate.output_tensors("n", {"y": y})\n', 3, "obs = obs.copy()\nh = obs * 1\nobs[0] = 5"),
    ('t = annotate.input_tensors("n", {"t": torch.from_numpy(raw)})\nt.mul_(3)\ny = t * 1\n'
     'annotate.output_tensors("n", {"y": y})\n', 2, "t = t.clone()\nt.mul_(3)"),
    ('t = annotate.input_tensors("n", {"t": torch.from_numpy(raw)})\na = t.detach().numpy()\na -= 0.5\n'
     'y = t * 2\nannotate.output_tensors("n", {"y": y})\n', 3, "t = t.clone()\na = t.detach().numpy()\na -= 0.5"),
])
def test_a_write_into_a_node_input_gets_a_copy_first(source, line, new):
    import torch

    def retrace(text):
        return ln.trace_cell(text, {"np": np, "torch": torch, "raw": X1.copy()})

    edit, fixed = check_fix(source, "untraced-call", line, retrace, {"np": np, "torch": torch, "raw": X1.copy()},
                            "y", only_error=False, clean=True)
    assert edit.new == new and edit.end_line == line
    raw = X1.copy()
    ln.trace_cell(fixed, {"np": np, "torch": torch, "raw": raw})
    np.testing.assert_array_equal(raw, X1)  # the fixed cell leaves the caller's array alone


def test_a_write_into_an_input_named_on_the_magics_line_gets_a_copy_at_the_top():
    x = X1.copy()
    t = ln.trace_cell("x += 1\ny = x * 2", {"np": np, "x": x}, inputs=["x"], outputs=["y"])
    edit = fixes.edit_for(t.source, only(t, "untraced-call"), t)
    assert edit == Edit(1, 1, "x += 1", "x = x.copy()\nx += 1")
    assert trace_xy(edit.apply(t.source), X1.copy()).hazards == []


@pytest.mark.parametrize("source", [
    # several inputs bound to one name, or the binding sharing its line: no certain place for the copy
    'd = annotate.input_tensors("n", {"x": raw, "z": raw2})\nx = d["x"]\nx += 1\n'
    'annotate.output_tensors("n", {"y": x * d["z"]})\n',
    'x = annotate.input_tensors("n", {"x": raw}); x += 1\nannotate.output_tensors("n", {"y": x * 2})\n',
])
def test_a_write_into_an_input_without_a_certain_place_for_the_copy_gets_no_edit(source):
    t = ln.trace_cell(source, {"np": np, "raw": X1.copy(), "raw2": X1.copy()})
    hazard = only(t, "untraced-call")
    assert "is written in place" in hazard.message and fixes.edit_for(t.source, hazard, t) is None


def test_a_clean_trace_draws_without_loading_libcst():
    """LibCST takes about a third of a second to import: a trace without hazards has no fix to compute, so its
    model (the first thing %%leapp_trace draws) does not load it; a trace with a hazard does, and gets its edit."""
    import subprocess
    import sys

    script = (
        "import sys, numpy as np, leapp_notebook as ln\n"
        "from leapp_notebook.render import graph_model, mimebundle\n"
        "clean = ln.trace_cell('h = annotate.input_tensors(\"n\", {\"x\": x})\\ny = np.cos(h) * 3\\n'\n"
        "                      'annotate.output_tensors(\"n\", {\"y\": y})\\n', {'np': np, 'x': np.ones(3)})\n"
        "mimebundle(graph_model(clean))\n"
        "print('clean', 'libcst' in sys.modules)\n"
        "hazard = ln.trace_cell('h = annotate.input_tensors(\"n\", {\"x\": x})\\ny = h[::-1] * 3\\n'\n"
        "                       'annotate.output_tensors(\"n\", {\"y\": y})\\n', {'np': np, 'x': np.ones(3)})\n"
        "model = graph_model(hazard)\n"
        "print('hazard', 'libcst' in sys.modules, [h.get('edit') is not None for h in model['hazards']])\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, check=True)
    assert out.stdout.splitlines() == ["clean False", "hazard True [True]"], out.stdout + out.stderr
