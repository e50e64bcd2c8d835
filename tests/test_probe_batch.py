"""Small outputs are compared a batch of probes at a time (leapp_notebook/probe.py ``_fold_batch``): the report
must be exactly the one the probe-by-probe comparison gives, whatever the outputs do (agree, differ in the last
bits, fail, go NaN, change dtype, alias an input), and a mismatch must keep the inputs of its own probe."""

import dataclasses

import numpy as np
import pytest
import torch

import leapp_notebook as ln
from leapp_notebook import probe as probe_module
from leapp_notebook.probe import _compare, _compare_rows
from leapp_notebook.tracing import ops

pytestmark = pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")  # sqrt of negatives

RNG = np.random.default_rng(7)
F32 = RNG.standard_normal((3, 5)).astype(np.float32)
F64 = RNG.standard_normal(6)
I64 = RNG.integers(-5, 5, (2, 4))

# (cell, inputs, profile): outputs that agree, differ in the last bits (sums), carry a baked constant, go NaN on
# some draws, are integers or booleans, alias an input, change dtype, and a node with several outputs
CELLS = {
    "elementwise": ("y = np.maximum(x * 1.5 + 0.5, 0.0) - np.abs(x) * 0.25\ns = np.sum(y, axis=-1)",
                    {"x": F32}, "leapp"),
    "float64 sums": ("y = np.cumsum(np.tanh(x)) / 3.0\ns = np.sum(y * y)", {"x": F64}, "leapp"),
    "baked interp": ("y = x + np.interp(x, [-1.0, 0.0, 1.0], [0.0, 0.5, 2.0])\ns = np.mean(y, axis=0)",
                     {"x": F32}, "leapp"),
    "nan on some draws": ("y = np.sqrt(x - 0.2)\ns = np.log(np.abs(x) + 0.0) * 0.0", {"x": F64}, "full"),
    "integers and booleans": ("y = x * 3 - 1\ns = x > 0", {"x": I64}, "leapp"),
    "an input as output": ("y = x\ns = x[:, :2] * 2.0", {"x": F32}, "leapp"),
    "two inputs": ("y = a * b + 1.0\ns = np.sum(a, axis=0) - b[0]", {"a": F32, "b": F32[::-1].copy()}, "leapp"),
}


def _trace(name):
    source, arrays, profile = CELLS[name]
    namespace = {"np": np, **{k: v.copy() for k, v in arrays.items()}}
    return ln.trace_cell(source, namespace, inputs=list(arrays), outputs=["y", "s"], profile=profile)


def _report(tr, n, seed, monkeypatch, ranges=None, **settings):
    with monkeypatch.context() as patch:
        for setting, value in settings.items():
            patch.setattr(probe_module, setting, value)
        return probe_module.probe(tr, n=n, seed=seed, ranges=ranges)


def _same_report(a, b):
    assert a.to_dict() == b.to_dict()
    assert a.sensitivity == b.sensitivity and a.baked == b.baked and a.hazards == b.hazards
    assert {k: [c.node for c in v] for k, v in a.baked_constants.items()} == \
        {k: [c.node for c in v] for k, v in b.baked_constants.items()}
    for key, check in a.outputs.items():
        other = b.outputs[key]
        for field in ("mismatches", "max_abs_err", "max_rel_err", "shape_ok", "dtype_ok"):
            got, want = getattr(check, field), getattr(other, field)
            assert got == want or (got != got and want != want), (key, field, got, want)
        first, second = check.first_mismatch, other.first_mismatch
        assert (first is None) == (second is None), key
        if first is not None:
            assert (first.probe, first.what, first.index) == (second.probe, second.what, second.index)
            assert repr(first.expected) == repr(second.expected) and repr(first.got) == repr(second.got)
            for node, values in first.inputs.items():
                for name, value in values.items():
                    np.testing.assert_array_equal(np.asarray(value), np.asarray(second.inputs[node][name]))


@pytest.mark.parametrize("name", list(CELLS))
@pytest.mark.parametrize("batch", [64, 3])
def test_batched_comparison_gives_the_probe_by_probe_report(name, batch, monkeypatch):
    # a trace each: a report adds its semantic hazards to its trace once
    one_by_one = _report(_trace(name), 25, 11, monkeypatch, _BATCH_ELEMENTS=0)
    batched = _report(_trace(name), 25, 11, monkeypatch, _BATCH_PROBES=batch)
    _same_report(batched, one_by_one)


def test_the_cells_cover_what_the_batches_must_get_right(monkeypatch):
    """The equivalence above is only as strong as its cells: they pass, fail, bake, differ in the last bits."""
    reports = {name: _report(_trace(name), 25, 11, monkeypatch) for name in CELLS}
    assert reports["elementwise"].passed and reports["integers and booleans"].passed
    assert not reports["baked interp"].passed and reports["baked interp"].baked
    assert reports["float64 sums"].outputs["s"].max_abs_err > 0  # torch and NumPy sum in another order
    nan = reports["nan on some draws"].outputs["y"]
    assert nan.max_abs_err == 0 and nan.passed  # NaN where both give NaN agrees
    assert reports["an input as output"].passed


def test_a_graph_that_is_wrong_on_some_probes_fails_at_the_same_probe_with_that_probes_inputs(monkeypatch):
    """A row that is right for positive values only: the first mismatch is some way into the run, inside a
    batch, and its inputs are drawn again from the seed (the buffers were redrawn since)."""
    wrong = dataclasses.replace(ops.UFUNC_ROWS[np.absolute], build=lambda ctx: ctx.tensor("x0"))
    monkeypatch.setitem(ops.UFUNC_ROWS, np.absolute, wrong)
    def traced():
        return ln.trace_cell("y = np.abs(x) + 1.0\ns = np.abs(x[0])", {"np": np, "x": np.abs(F32)},
                             inputs=["x"], outputs=["y", "s"])

    ranges = {"x": (-0.05, 1.0)}  # a negative value now and then: the row is wrong on those probes only
    tr = traced()
    batched = _report(tr, 30, 5, monkeypatch, ranges, _BATCH_PROBES=8)
    one_by_one = _report(traced(), 30, 5, monkeypatch, ranges, _BATCH_ELEMENTS=0)
    _same_report(batched, one_by_one)
    assert 0 < batched.outputs["y"].mismatches < 30
    first = batched.outputs["y"].first_mismatch
    assert first is not None and first.what == "value"
    x = first.inputs["node"]["x"]
    assert (x < 0).any()  # the probe that failed drew a negative value: its own inputs, not the last ones
    rerun = tr.run_eager(first.inputs)["node"]["y"]
    assert float(np.asarray(rerun)[first.index]) == first.expected


def test_a_batch_gives_way_to_the_one_probe_path_when_a_probe_does_not_fit(monkeypatch):
    """Probes fold in order even when an output stops fitting its batch (here: the graph raises on some)."""
    calls = {"n": 0}

    def traced():
        tr = _trace("two inputs")
        module = tr.nodes["node"].graph
        module(*[torch.from_numpy(F32.copy())] * 2)  # compiles a lazily built module's forward first
        real = module.forward

        def sometimes_raises(*args):
            calls["n"] += 1
            if calls["n"] % 7 == 0:
                raise RuntimeError("broken on this probe")
            return real(*args)

        monkeypatch.setattr(tr.nodes["node"].graph, "forward", sometimes_raises)
        calls["n"] = 0
        return tr

    batched = _report(traced(), 20, 2, monkeypatch, _BATCH_PROBES=4)
    one_by_one = _report(traced(), 20, 2, monkeypatch, _BATCH_ELEMENTS=0)
    _same_report(batched, one_by_one)
    assert batched.outputs["y"].mismatches == 20 // 7 and batched.outputs["y"].first_mismatch.what == "error"


def test_inputs_drawn_again_are_the_inputs_each_probe_saw():
    tr = ln.trace_cell("y = a * 2.0\nw = b * 3.0", {"np": np, "a": F32, "b": torch.from_numpy(F32.copy())},
                       inputs=["a", "b"], outputs=["y", "w"])
    samplers = probe_module._samplers(tr, None)
    inputs = probe_module._Inputs(tr, samplers, 123)
    rng = np.random.default_rng(123)
    seen = []
    for j in range(9):
        for index in (range(len(samplers)) if j == 0 else [(j - 1) % len(samplers)]):
            inputs.draw(index, rng)
        seen.append({name: probe_module.as_numpy(value).copy() for name, value in inputs.arrays["node"].items()})
    for j in (0, 1, 4, 8):
        again = inputs.drawn_again(j)["node"]
        assert isinstance(again["b"], torch.Tensor) and isinstance(again["a"], np.ndarray)
        for name in ("a", "b"):
            value = probe_module.as_numpy(again[name])
            np.testing.assert_array_equal(value, seen[j][name])
            assert not np.shares_memory(value, inputs.arrays["node"]["a"])


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.bool_])
def test_row_comparison_matches_compare_row_by_row(dtype):
    """The vectorised comparison against ``_compare`` itself on rows that agree, differ within and beyond the
    tolerance, hold NaN on one or both sides, infinities, signed zeros and large magnitudes."""
    rng = np.random.default_rng(3)
    rows = []
    for i in range(12):
        want = (rng.standard_normal((2, 5)) * 10.0 ** (i % 4)).astype(dtype)
        have = want.copy()
        if dtype in (np.float32, np.float64):
            tweak = [None, 1e-7, 1e-3, np.nan, np.inf, -0.0][i % 6]
            if tweak is not None:
                have[0, i % 5] = want[0, i % 5] * (1 + tweak) if tweak not in (np.nan, np.inf, -0.0) else tweak
            if i % 5 == 4:
                want[1, 0] = have[1, 0] = np.nan  # NaN on both sides agrees
            if i % 7 == 6:
                want[1, 1], have[1, 1] = np.inf, np.nan
        elif i % 3:
            have[i % 2, i % 5] = ~have[i % 2, i % 5] if dtype is np.bool_ else have[i % 2, i % 5] + 1
        rows.append((want, have))
    if dtype in (np.float32, np.float64):
        # non-finite expected values: the scale must come from the finite ones (a NaN or infinite scale would
        # pass a difference beyond tolerance, or fail one within it)
        for special, tweak in ((np.nan, 1e-9), (np.inf, 1e-2), (-np.inf, 1e-9), (np.nan, 1e-2)):
            want = rng.standard_normal((2, 5)).astype(dtype)
            want[1, 3] = special
            have = want.copy()
            have[0, 2] = want[0, 2] * dtype(1 + tweak)
            rows.append((want, have))
    agree, max_abs, max_rel, first, scales = _compare_rows(np.array([w for w, _ in rows]),
                                                           np.array([h for _, h in rows]))
    for i, (want, have) in enumerate(rows):
        ok, abs_err, rel_err, where, _ = _compare(want, have, True)
        assert bool(agree[i]) == ok, i
        assert float(max_abs[i]) == abs_err or (np.isnan(max_abs[i]) and np.isnan(abs_err)), i
        assert float(max_rel[i]) == rel_err or (np.isnan(max_rel[i]) and np.isnan(rel_err)), i
        if not ok:
            assert np.unravel_index(int(first[i]), want.shape) == where, i


def test_an_output_the_cell_writes_in_place_every_probe_keeps_each_probes_values():
    """With outputs=[...] the eager output is read from the cell's namespace after each run: a cell that writes
    into an array of its namespace hands back the same object every probe (here the tracer cannot see the write,
    so the graph returns a constant and every probe fails). A batch keeps each probe's values, not the object."""
    source = "buf[...] = x * 2.0 + 1.0\ny = buf\n"

    def traced():
        namespace = {"np": np, "x": F32.copy(), "buf": np.zeros_like(F32)}
        return ln.trace_cell(source, namespace, inputs=["x"], outputs=["y"])

    patch = pytest.MonkeyPatch()
    batched = _report(traced(), 20, 4, patch)
    one_by_one = _report(traced(), 20, 4, patch, _BATCH_ELEMENTS=0)
    _same_report(batched, one_by_one)
    assert batched.outputs["y"].mismatches == 20 and batched.outputs["y"].first_mismatch.probe == 0
