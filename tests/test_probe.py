"""The probe: fresh random inputs expose baked values that replaying the trace inputs cannot."""

import dataclasses

import numpy as np
import pytest
import torch
from conftest import SEED_INTERP_CELL, trace

import leapp_notebook as ln
from leapp_notebook.probe import draw_inputs, input_ranges
from leapp_notebook.tracing import ops

X = np.array([0.5, -0.3, 1.2, 0.8], np.float32)
POSITIVE = np.array([0.5, 0.3, 1.2, 0.8], np.float32)


def _reproduce(tr, mismatch, output):
    """The eager value and the graph's value on the inputs that exposed ``mismatch``."""
    node = tr.nodes["node"]
    eager = np.asarray(tr.run_eager(mismatch.inputs)["node"][output])
    got = node(*[mismatch.inputs["node"][spec.name] for spec in node.inputs])[0]
    return eager, got


# ------------------------------------------------------------------------------------------
# the seed's np.interp cell
# ------------------------------------------------------------------------------------------

def test_replaying_the_trace_inputs_cannot_catch_the_baked_interp(seed_namespace):
    tr = ln.trace_cell(SEED_INTERP_CELL, seed_namespace)
    node = tr.nodes["node"]
    replay = node(node.sample_inputs["state"])[0]
    np.testing.assert_array_equal(replay, node.sample_outputs["result"])


def test_seed_interp_probe_fails_and_names_the_baked_constant(seed_namespace):
    tr = ln.trace_cell(SEED_INTERP_CELL, seed_namespace)
    report = tr.probe(n=16, seed=0)
    assert report is tr.last_probe
    assert isinstance(report, ln.ProbeReport)
    assert not report.passed
    assert report.baked == ["result"]
    assert report.sensitivity == {"result": {"state": (True, False)}}
    [const] = report.baked_constants["result"]
    assert (const.node, const.kind, const.line, const.hazard_lines) == ("baked0", "constant", 3, (3,))
    np.testing.assert_allclose(const.traced, [0.4, 1.6, 5.2, 8.4], rtol=1e-6)
    assert not np.allclose(const.retraced, const.traced)
    check = report.outputs["result"]
    assert check.mismatches == 16 and check.shape_ok and check.dtype_ok
    assert check.max_abs_err > 0.1
    eager, got = _reproduce(tr, check.first_mismatch, "result")
    index = check.first_mismatch.index
    assert check.expected == pytest.approx(eager[index]) and check.got == pytest.approx(got[index])
    assert check.expected != pytest.approx(check.got)
    # The untraced-call hazard explains the mismatch: the probe adds no semantic-mismatch of its own.
    assert report.hazards == [] and [h.kind for h in tr.hazards] == ["untraced-call"]
    text = str(report)
    assert "FAILED" in text and "baked0" in text and "changes with 'state' in the eager cell" in text


def test_seed_interp_in_full_profile_probes_clean(seed_namespace):
    tr = ln.trace_cell(SEED_INTERP_CELL, seed_namespace, profile="full")
    report = tr.probe(n=16, seed=0)
    assert report.passed and report.baked == [] and report.baked_constants == {}
    assert report.sensitivity == {"result": {"state": (True, True)}}
    assert report.outputs["result"].max_abs_err < 1e-9
    assert "passed" in str(report)


def test_probe_is_deterministic_for_a_seed(seed_namespace):
    tr = ln.trace_cell(SEED_INTERP_CELL, seed_namespace)
    first, again, other = tr.probe(seed=7), tr.probe(seed=7), tr.probe(seed=8)
    assert first.outputs["result"].first_mismatch.expected == again.outputs["result"].first_mismatch.expected
    assert first.outputs["result"].max_abs_err == again.outputs["result"].max_abs_err
    assert first.outputs["result"].first_mismatch.expected != other.outputs["result"].first_mismatch.expected
    assert tr.probe().seed != tr.probe().seed  # no seed: a fresh one each time, reported for replay


# ------------------------------------------------------------------------------------------
# one test per hazard kind
# ------------------------------------------------------------------------------------------

def test_untraced_call_is_exposed():
    tr = trace("y = x * 0.1 + np.interp(x, [0, 1], [0, 10])", x=X)
    report = tr.probe(seed=0)
    assert report.baked == ["y"]
    assert [(c.node, c.kind, c.line) for c in report.baked_constants["y"]] == [("baked0", "constant", 1)]


def test_broken_chain_is_exposed():
    tr = trace("s = x[0]\ny = x * s", x=X)
    assert [h.kind for h in tr.hazards] == ["broken-chain"]
    report = tr.probe(seed=0)
    assert report.baked == ["y"]
    assert [(c.node, c.line, c.hazard_lines) for c in report.baked_constants["y"]] == [("baked0", 1, (1,))]
    m = report.outputs["y"].first_mismatch
    x = m.inputs["node"]["x"]
    assert m.expected == pytest.approx(float(x[m.index] * x[0]))  # the eager cell uses the new x[0]
    assert m.got == pytest.approx(float(x[m.index] * X[0]))  # the graph multiplies by the traced one


def test_iteration_bakes_every_element():
    tr = trace("acc = x * 0\nfor v in x:\n    acc = acc + v\ny = acc", x=X)
    report = tr.probe(seed=0)
    assert report.baked == ["y"]
    assert sorted(c.node for c in report.baked_constants["y"]) == ["baked0", "baked1", "baked2", "baked3"]


def test_reversed_slice_is_exposed_in_the_wrong_order():
    tr = trace("y = x[::-1] * 2", x=X)
    report = tr.probe(seed=0)
    assert not report.passed
    assert report.baked == []  # nothing is frozen: the graph reads the input in the wrong order
    m = report.outputs["y"].first_mismatch
    x = m.inputs["node"]["x"]
    assert m.expected == pytest.approx(float((x[::-1] * 2)[m.index]))
    assert m.got == pytest.approx(float((x * 2)[m.index]))
    assert report.hazards == []  # explained by the reversed-slice hazard on that getitem
    assert full_probe_passes("y = x[::-1] * 2")


def test_value_extraction_is_exposed_as_an_inlined_literal():
    tr = trace("y = x * x[0:1].item()", x=X)
    assert [h.kind for h in tr.hazards] == ["value-extraction"]
    report = tr.probe(seed=0)
    assert report.baked == ["y"]
    [const] = report.baked_constants["y"]
    assert (const.node, const.kind, const.line, const.hazard_lines) == ("mul", "literal", 1, (1,))
    assert "0.5" in const.traced and "0.5" not in const.retraced


def test_data_dependent_branch_is_exposed_by_an_input_taking_the_other_branch():
    src = "if x.sum() > 0:\n    y = x * 2\nelse:\n    y = x - 1"
    tr = trace(src, x=POSITIVE)
    assert "data-dependent-branch" in [h.kind for h in tr.hazards]
    assert tr.probe(seed=0, ranges={"x": (0.1, 1.0)}).passed  # the traced branch alone looks fine
    report = tr.probe(seed=0, ranges={"x": (-2.0, -1.0)})
    assert report.baked == ["y"]
    assert [(c.kind, c.line) for c in report.baked_constants["y"]] == [("branch", 1)]
    m = report.outputs["y"].first_mismatch
    x = m.inputs["node"]["x"]
    assert m.expected == pytest.approx(float(x[m.index] - 1))
    assert m.got == pytest.approx(float(x[m.index] * 2))
    assert report.hazards == []


def test_untraced_output_is_exposed():
    tr = trace("y = np.interp(x, [0, 1], [0, 10])", x=X)
    assert "untraced-output" in [h.kind for h in tr.hazards]
    report = tr.probe(seed=0)
    assert report.baked == ["y"]
    assert report.sensitivity["y"]["x"] == (True, False)
    assert [c.node for c in report.baked_constants["y"]] == ["baked0"]


def test_numpy_scalar_bakes_nothing_so_the_probe_passes():
    tr = trace("y = x * np.float32(2.0)", x=X)
    assert [(h.kind, h.severity) for h in tr.hazards] == [("numpy-scalar", "error")]
    report = tr.probe(seed=0)
    assert report.passed and report.baked == []


def full_probe_passes(src):
    return trace(src, profile="full", x=X).probe(seed=0).passed


def test_sensitivity_names_the_input_whose_dependence_was_baked():
    src = "y = a + np.interp(b, [0, 1], [0, 10])"
    tr = ln.trace_cell(src, {"np": np, "a": X.copy(), "b": POSITIVE.copy()}, inputs=["a", "b"], outputs=["y"])
    report = tr.probe(seed=0)
    assert report.sensitivity == {"y": {"a": (True, True), "b": (True, False)}}
    assert report.baked == ["y"]


def test_each_node_of_a_multi_node_cell_is_probed_on_its_own_inputs():
    cell = '''\
a = annotate.input_tensors("pre", {"x": x_in, "k": k_in})
y = a["x"] * 2.0 + a["k"]
annotate.output_tensors("pre", {"y": y})
b = annotate.input_tensors("post", {"z": y})
w = b + np.interp(b, [0, 1], [0, 10])
annotate.output_tensors("post", {"w": w, "m": np.mean(b, axis=0, keepdims=True)})
'''
    namespace = {"np": np, "x_in": POSITIVE.copy(), "k_in": np.array([1, 2, 3, 4], np.int32)}
    tr = ln.trace_cell(cell, namespace)
    report = tr.probe(seed=1, ranges={"k": (0, 5), "post/z": (0.0, 1.0)})
    assert list(report.outputs) == ["pre/y", "post/w", "post/m"]
    assert report.failed == ["post/w"] and report.baked == ["post/w"]
    assert report.sensitivity["pre/y"] == {"x": (True, True), "k": (True, True)}
    assert report.sensitivity["post/w"] == {"z": (True, False)}
    assert report.ranges["pre/k"] == (0, 5) and report.ranges["post/z"] == (0.0, 1.0)
    assert report.n == 16


# ------------------------------------------------------------------------------------------
# semantic mismatches: a wrong lookup row that only fresh inputs reveal
# ------------------------------------------------------------------------------------------

def _positive_only(t):
    return t[t > 0]


def _abs_promoting(t):
    return torch.abs(t) if bool((t >= 0).all()) else torch.abs(t).to(torch.float64)


def test_wrong_value_row_is_caught_as_semantic_mismatch(monkeypatch):
    wrong = dataclasses.replace(ops.UFUNC_ROWS[np.subtract], build=ops.elementwise(torch.add))
    monkeypatch.setitem(ops.UFUNC_ROWS, np.subtract, wrong)
    tr = trace("z = x * 3.0\ny = z - x", x=X)
    assert tr.ok  # nothing at trace time says the graph is wrong
    report = tr.probe(seed=0)
    assert not report.passed and report.baked == []
    [hazard] = report.hazards
    assert hazard in tr.nodes["node"].hazards and not tr.ok
    assert (hazard.kind, hazard.severity, hazard.line) == ("semantic-mismatch", "error", 2)
    assert hazard.code == "y = z - x"
    m = report.outputs["y"].first_mismatch
    x = m.inputs["node"]["x"]
    assert m.expected == pytest.approx(float(2 * x[m.index]))
    assert m.got == pytest.approx(float(4 * x[m.index]))
    assert f"the eager cell gives {m.expected!r}, the graph gives {m.got!r}" in hazard.message
    assert "line 2" in hazard.fix
    tr.probe(seed=1)
    assert [h.kind for h in tr.hazards].count("semantic-mismatch") == 1  # reported once per line


def test_wrong_shape_row_is_caught_as_semantic_mismatch(monkeypatch):
    wrong = dataclasses.replace(ops.UFUNC_ROWS[np.maximum], build=lambda ctx: ctx.call(_positive_only,
                                                                                        ctx.tensor("x0")))
    monkeypatch.setitem(ops.UFUNC_ROWS, np.maximum, wrong)
    tr = trace("y = np.maximum(x, 0.0)", x=POSITIVE)
    assert tr.ok  # on the all-positive trace inputs the shapes agree
    report = tr.probe(seed=0, ranges={"x": (-1.0, 1.0)})
    check = report.outputs["y"]
    assert not check.shape_ok and check.first_mismatch.what == "shape"
    assert check.first_mismatch.expected == (4,) and check.first_mismatch.got != (4,)
    [hazard] = report.hazards
    assert hazard.kind == "semantic-mismatch" and hazard.line == 1
    assert "shape: the eager cell gives (4,)" in hazard.message


def test_wrong_dtype_row_is_caught_as_semantic_mismatch(monkeypatch):
    wrong = dataclasses.replace(ops.UFUNC_ROWS[np.absolute], build=lambda ctx: ctx.call(_abs_promoting,
                                                                                         ctx.tensor("x0")))
    monkeypatch.setitem(ops.UFUNC_ROWS, np.absolute, wrong)
    tr = trace("y = np.abs(x) + 1.0", x=POSITIVE)
    assert tr.ok
    report = tr.probe(seed=0, ranges={"x": (-1.0, 1.0)})
    check = report.outputs["y"]
    assert check.shape_ok and not check.dtype_ok
    assert (check.first_mismatch.what, check.expected, check.got) == ("dtype", "float32", "float64")
    assert check.max_abs_err < 1e-6  # the values agree: only the dtype is wrong
    [hazard] = report.hazards
    assert hazard.kind == "semantic-mismatch" and "dtype: the eager cell gives float32, the graph gives float64" in \
        hazard.message


def _fails_on_negative(t):
    if bool((t < 0).any()):
        raise RuntimeError("negative input")
    return torch.sqrt(t)


def test_a_graph_that_raises_on_fresh_inputs_is_a_semantic_mismatch(monkeypatch):
    wrong = dataclasses.replace(ops.UFUNC_ROWS[np.sqrt], build=lambda ctx: ctx.call(_fails_on_negative,
                                                                                     ctx.tensor("x0")))
    monkeypatch.setitem(ops.UFUNC_ROWS, np.sqrt, wrong)
    tr = trace("y = np.sqrt(x)", x=POSITIVE)
    report = tr.probe(seed=0, ranges={"x": (-1.0, 1.0)})
    check = report.outputs["y"]
    assert check.first_mismatch.what == "error" and "RuntimeError: negative input" in check.got
    [hazard] = report.hazards
    assert "the graph raises: RuntimeError: negative input" in hazard.message


def test_two_outputs_broken_on_one_line_share_one_hazard(monkeypatch):
    wrong = dataclasses.replace(ops.UFUNC_ROWS[np.subtract], build=ops.elementwise(torch.add))
    monkeypatch.setitem(ops.UFUNC_ROWS, np.subtract, wrong)
    tr = ln.trace_cell("y, z = x - 1.0, x - 2.0", {"np": np, "x": X}, inputs=["x"], outputs=["y", "z"])
    report = tr.probe(seed=0)
    assert report.failed == ["y", "z"]
    # x + 1 moves with x exactly as x - 1 does: a wrong offset is not a baked value
    assert report.sensitivity == {"y": {"x": (True, True)}, "z": {"x": (True, True)}} and report.baked == []
    [hazard] = report.hazards
    assert hazard.line == 1 and "output 'y'" in hazard.message and "output 'z'" in hazard.message
    assert len(hazard.graph_nodes) == 2


# ------------------------------------------------------------------------------------------
# inputs, progress, arguments
# ------------------------------------------------------------------------------------------

def test_ranges_are_derived_from_the_traced_values(seed_namespace):
    tr = ln.trace_cell(SEED_INTERP_CELL, seed_namespace)
    lo, hi = input_ranges(tr)["state"]
    assert lo == pytest.approx(0.02) and hi == pytest.approx(0.98)  # [0.1, 0.9] padded by 10%, sign kept
    namespace = {"np": np, "c": np.full(3, 5.0), "i": np.array([3, 1, 4], np.int32), "f": np.array([True])}
    tr = ln.trace_cell("y = c * i + f", namespace, inputs=["c", "i", "f"], outputs=["y"])
    # a degenerate float range widened; integers (indices, ids, counts) within the traced ones, never past them
    assert input_ranges(tr) == {"c": (2.5, 7.5), "i": (1, 4), "f": None}
    drawn = draw_inputs(tr, np.random.default_rng(0), {"c": (-1, 1)})["node"]
    assert drawn["c"].dtype == np.float64 and drawn["i"].dtype == np.int32 and drawn["f"].dtype == np.bool_
    assert np.all(np.abs(drawn["c"]) <= 1) and np.all((drawn["i"] >= 1) & (drawn["i"] <= 4))


def test_an_integer_index_input_is_probed_and_exported_within_its_traced_values(tmp_path):
    """An index input traced up to 4 (an axis of 5) was drawn up to 5: the eager cell raised IndexError on the
    probe's inputs, so neither the probe nor the export (which raised CellError, advising a ranges= it does not
    take) could run; found by an exploration session. One traced value v draws 0..v."""
    cell = ('v = annotate.input_tensors("node", {"x": rx, "idx": ridx, "k": rk})\n'
            'y = np.take_along_axis(v["x"], v["idx"], axis=1) + np.take(v["x"], v["k"], axis=1)[:, None]\n'
            'annotate.output_tensors("node", {"y": y})\n')
    namespace = {"np": np, "rx": np.ones((3, 5), np.float32), "ridx": np.array([[0, 4], [2, 1], [3, 3]]),
                 "rk": np.array(3)}
    tr = ln.trace_cell(cell, namespace, profile="full")
    assert input_ranges(tr)["idx"] == (0, 4) and input_ranges(tr)["k"] == (0, 3)
    assert tr.probe(16, seed=0).passed
    assert [p.name for p in tr.export(tmp_path / "deploy")] == ["node.pt", "graph.yaml"]


def test_an_export_whose_probe_cannot_run_is_refused_with_what_to_do(tmp_path):
    """The cell raises on some fresh inputs: export refused (ExportBlocked, not the probe's CellError), naming
    trace.probe(ranges=...), which export then uses."""
    tr = ln.trace_cell("y = np.sqrt(x)\nassert (x < 0.9).all(), 'reading out of range'",
                       {"np": np, "x": np.array([0.1, 0.85], np.float32)}, inputs=["x"], outputs=["y"])
    with pytest.raises(ln.ExportBlocked, match=r"could not: .*reading out of range.*trace.probe\(ranges="):
        tr.export(tmp_path / "deploy")
    assert not (tmp_path / "deploy").exists()
    tr.probe(ranges={"x": (0.0, 0.85)})
    assert tr.export(tmp_path / "deploy")


def test_user_ranges_bound_every_probe_input():
    seen = []
    tr = trace("y = np.sqrt(x)", x=POSITIVE)
    real = tr.run_eager

    def spy(inputs, *rest, **options):
        seen.append(inputs["node"]["x"].copy())
        return real(inputs, *rest, **options)

    tr.run_eager = spy
    report = tr.probe(n=8, seed=0, ranges={"x": (4.0, 9.0)})
    assert report.passed and len(seen) == 8
    values = np.concatenate(seen)
    assert values.min() >= 4.0 and values.max() <= 9.0
    # consecutive probes differ in exactly one input: here the only one, redrawn every time
    assert all(not np.array_equal(a, b) for a, b in zip(seen, seen[1:], strict=False))


def test_progress_callback_counts_every_probe():
    calls = []
    report = trace("y = x * 2", x=X).probe(n=5, seed=0, progress=lambda *args: calls.append(args))
    assert calls == [(i, 5) for i in range(1, 6)] and report.n == 5
    assert trace("y = x * 2", x=X).probe(n=3, seed=0, progress=True).passed


def test_probe_runs_at_least_once_per_input_plus_one():
    namespace = {"np": np, "a": X, "b": X, "c": X}
    tr = ln.trace_cell("y = a + b + c", namespace, inputs=["a", "b", "c"], outputs=["y"])
    report = tr.probe(n=1, seed=0)
    assert report.n == 4 and all(v == (True, True) for v in report.sensitivity["y"].values())


@pytest.mark.parametrize("kwargs, text", [
    ({"n": 0}, "positive int"),
    ({"seed": -1}, "non-negative"),
    ({"ranges": {"nope": (0, 1)}}, "not a traced input"),
    ({"ranges": {"x": (1, 0)}}, "low <= high"),
    ({"ranges": [("x", (0, 1))]}, "dict"),
    ({"progress": "yes"}, "callable"),
])
def test_bad_arguments_say_what_to_do(kwargs, text):
    with pytest.raises(ln.TraceError, match=text):
        trace("y = x * 2", x=X).probe(**kwargs)


def test_a_cell_that_raises_on_fresh_inputs_says_to_narrow_the_ranges():
    src = "if float(np.min(x)) <= 0:\n    raise ValueError('needs positive x')\ny = np.log(x)"
    tr = trace(src, x=POSITIVE)
    with pytest.raises(ln.CellError, match=r"probe 0 \(seed 0\).*needs positive x.*ranges=") as info:
        tr.probe(seed=0, ranges={"x": (-1.0, 0.0)})
    assert info.value.line == 2


def test_a_torchscript_policy_called_with_grad_probes_and_exports(tmp_path):
    """A policy shipped as TorchScript (torch.jit.load) records for autograd whatever the mode: run under
    torch.inference_mode it raises "Inference tensors cannot be saved for backward". The cell calls it without
    no_grad, the graph is right, so the probe passes (under no_grad from the first refusal on) and export follows."""
    torch.manual_seed(0)
    mlp = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 2)).eval()
    path = tmp_path / "policy.pt"
    torch.jit.save(torch.jit.script(mlp), str(path))
    policy = torch.jit.load(str(path))
    cell = ('obs = annotate.input_tensors("n", {"obs": raw})\na = policy(torch.from_numpy(obs))\n'
            'annotate.output_tensors("n", {"a": a.clamp(-0.5, 0.5)})\n')
    t = ln.trace_cell(cell, {"np": np, "torch": torch, "policy": policy,
                             "raw": np.array([0.3, -0.2, 0.5, 1.0], np.float32)})
    assert t.hazards == []
    graph = t.nodes["n"].graph
    with pytest.raises(RuntimeError, match="Inference tensors"), torch.inference_mode():
        for _ in range(3):  # TorchScript's executor specializes its plan on the first calls
            graph(torch.ones(4))
    report = t.probe(16, seed=0)
    assert report.passed and report.hazards == [], report
    t.export(tmp_path / "out", formats=("jit",))
    assert (tmp_path / "out").is_dir()


@pytest.mark.parametrize("source, line", [
    ("m = x.sum().item()\ny = x * m", 1),
    ("m = float(np.max(x))\ny = x / m", 1),
    ("k = int(x.sum())\ny = x * k", 1),
    ("def peak(u):\n    return float(np.max(u))\ny = x / peak(x)", 2),
    ("offset = round(x[0].item(), 2)\ny = x + offset", 1),
])
def test_a_value_extracted_on_one_line_and_used_on_another_is_explained_by_its_extraction(source, line):
    """The value-extraction error at the extraction line explains the failing output: the probe adds no second
    error (semantic-mismatch, at the line of the use, with a fix for a lookup bug) and names the extraction's line
    for the baked literal."""
    t = trace(source, x=np.array([0.3, 0.8, 1.2, 2.5], np.float32))
    errors = [(h.kind, h.line) for h in t.hazards if h.severity == "error"]
    assert ("value-extraction", line) in errors and {at for _, at in errors} == {line}, errors
    report = t.probe(16, seed=0)
    assert not report.passed and report.hazards == [], report.hazards
    (key,) = report.baked_constants
    assert [(c.kind, c.hazard_lines) for c in report.baked_constants[key]] == [("literal", (line,))]


@pytest.mark.parametrize("body", [
    "feat = np.sin(ang * 3.0) + OFFSET",                                 # a float32 sine widened by a float64 array
    "c, s = np.cos(ang), np.sin(ang)\nfeat = np.array([c, -s, s, c]).astype(np.float64) * 2.0",
    "feat = np.exp(ang).astype(np.float64) - OFFSET",
])
def test_a_float64_output_computed_in_float32_is_compared_at_float32(body, tmp_path):
    """torch's float32 sine differs from NumPy's in the last bit; widened to float64 (a float64 constant, as np.zeros
    gives) that bit failed float64's tolerance: an error semantic-mismatch that refused export of a correct node. The
    probe now compares such an output at the precision it was computed in, as export's reload check does."""
    cell = (f'ang = annotate.input_tensors("node", {{"ang": OBS}})\n{body}\n'
            'annotate.output_tensors("node", {"feat": feat})\n')
    namespace = {"np": np, "OBS": np.random.default_rng(0).normal(size=16).astype(np.float32),
                 "OFFSET": np.zeros(16)}
    t = ln.trace_cell(cell, namespace, profile="full")
    report = t.probe(32, seed=0)
    assert report.passed and report.hazards == [], report.outputs["feat"].first_mismatch
    assert report.outputs["feat"].dtype_ok
    t.export(tmp_path / "out", formats=("jit",))
    # a difference above float32's precision in such an output still fails
    baked = ln.trace_cell(cell.replace("np.sin(ang", "np.vectorize(np.sin)(ang"), namespace, profile="full")
    if "np.sin(ang" in body:  # (a sine to take out of the graph)
        assert not baked.probe(16, seed=0).passed


def test_a_drawn_seed_survives_a_round_trip_through_javascript_numbers():
    """JupyterLab saves the trace model through JavaScript numbers, exact up to 2**53: a drawn 63-bit seed was saved
    rounded, and could not reproduce its probe."""
    t = trace("y = x * 2", x=np.array([0.3, 0.8], np.float32))
    seeds = {t.probe(2).seed for _ in range(20)}
    assert all(0 <= seed < 2**53 and float(seed) == seed for seed in seeds) and len(seeds) > 1


class _Counter:
    n = 0


def test_a_probe_failure_of_a_cell_that_keeps_state_says_so():
    """``c.n += 1; y = x * c.n``: the graph holds the traced run's count, each eager run counts on. The failure said
    that a recorded torch op disagrees with NumPy, with the fix to check axis, dtype and ddof; re-run on the inputs it
    was traced with, the eager cell gives another output, which is what it now says, with the fix to make the state a
    node input or to compute it from the inputs."""
    x = np.array([[0.5, 1.5], [2.0, -1.0]], np.float32)
    trace = ln.trace_cell("c.n += 1\ny = x * c.n", {"np": np, "c": _Counter()}, inputs={"x": x}, outputs=["y"])
    report = trace.probe(8, seed=0)
    assert not report.passed
    (hazard,) = report.hazards
    assert (hazard.kind, hazard.line) == ("semantic-mismatch", 2)
    assert "it keeps state between runs" in hazard.message and "ddof" not in hazard.fix
    assert "node input and output" in hazard.fix
    # a cell that is a function of its inputs is not said to keep state
    trace = ln.trace_cell("y = np.interp(x, [0.0, 1.0], [1.0, 3.0])", {"np": np}, inputs={"x": x}, outputs=["y"],
                          profile="full")
    report = trace.probe(8, seed=0)
    assert all("keeps state" not in h.message for h in report.hazards + trace.hazards)
