"""The probe's cost mechanics: inputs redrawn in place, chunked comparisons with the unchunked verdicts,
memory bounded by the input size. Structural checks only; the timings live in benchmarks/probe.py."""

import dataclasses
import math
import tracemalloc

import numpy as np
import pytest
import torch
from conftest import trace

import leapp_notebook as ln
from leapp_notebook import probe as probe_module
from leapp_notebook.probe import _compare, _in_step, _Outcome, _same, _Sampler, compare, tolerance
from leapp_notebook.tracing import ops

X = np.array([0.5, -0.3, 1.2, 0.8], np.float32)


# ------------------------------------------------------------------------------------------
# the unchunked reference: the probe's formulas applied to whole arrays
# ------------------------------------------------------------------------------------------

def _reference_scale(abs_values):
    scale = float(abs_values.max(initial=1.0))
    if not np.isfinite(scale):
        scale = float(np.nanmax(np.where(np.isfinite(abs_values), abs_values, 1.0), initial=1.0))
    return scale


def _reference_compare(expected, got, locate=True):
    if got.dtype != expected.dtype:
        got = got.astype(expected.dtype)
    if expected.dtype.kind in "biu":
        if np.array_equal(expected, got):
            return True, 0.0, 0.0, None
        diff = np.abs(got.astype(np.float64) - expected.astype(np.float64))
        rel = diff / np.maximum(np.abs(expected.astype(np.float64)), 1.0)
        first = tuple(int(i) for i in np.argwhere(got != expected)[0]) if locate else None
        return False, float(diff.max()), float(rel.max()), first
    rtol, atol = tolerance(expected.dtype)  # float16's own tolerance, computed in float32
    if expected.dtype == np.float16:
        expected, got = expected.astype(np.float32), got.astype(np.float32)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        abs_expected = np.abs(expected)
        scale = _reference_scale(abs_expected)
        diff = np.abs(got - expected)
        ok = diff <= rtol * abs_expected + atol * scale
        if not ok.all():
            same = (got == expected) | (np.isnan(got) & np.isnan(expected))
            ok |= same
            diff = np.where(same, 0.0, np.where(np.isnan(diff), np.inf, diff))
        rel = diff / np.maximum(abs_expected, atol)
        agree = bool(ok.all())
        first = tuple(int(i) for i in np.argwhere(~ok)[0]) if locate and not agree else None
        return agree, float(diff.max(initial=0.0)), float(rel.max(initial=0.0)), first


def _reference_error(expected, got):
    if expected.dtype.kind == "b" or got.dtype.kind == "b":
        return got.astype(bool) ^ expected.astype(bool)
    kind = np.complex128 if "c" in (expected.dtype.kind, got.dtype.kind) else np.float64
    with np.errstate(invalid="ignore", over="ignore"):
        return got.astype(kind) - expected.astype(kind)


def _reference_in_step(prev, cur):
    if prev.ok and cur.ok:
        return True
    if prev.got is None or cur.got is None or prev.got.shape != prev.expected.shape \
            or cur.got.shape != cur.expected.shape:
        return False
    err_prev, err_cur = _reference_error(prev.expected, prev.got), _reference_error(cur.expected, cur.got)
    if err_prev.shape != err_cur.shape:
        return False
    dtype = cur.expected.dtype
    if err_cur.dtype == bool or dtype.kind in "biu":
        return bool(np.array_equal(err_prev, err_cur))
    rtol, atol = tolerance(dtype)
    with np.errstate(invalid="ignore", over="ignore"):
        scale = max(_reference_scale(np.abs(prev.expected)), _reference_scale(np.abs(cur.expected)))
        close = np.abs(err_cur - err_prev) <= 2 * (atol + rtol) * scale
        return bool(close.all() or (close | (np.isnan(err_cur) & np.isnan(err_prev))).all())


def _same_result(a, b):
    """Tuples equal element by element, NaN equal to NaN (repr keeps -0.0 and the float's digits)."""
    return repr(a) == repr(b)


# ------------------------------------------------------------------------------------------
# chunked comparison == whole-array comparison
# ------------------------------------------------------------------------------------------

def _pairs(dtype, rng):
    """(expected, got) pairs of one dtype over a few thousand elements: agreeing within tolerance,
    differing in one place past a chunk boundary, at the tolerance's edge, with NaN, inf on one or
    both sides, and in non-contiguous layouts."""
    dtype = np.dtype(dtype)
    shape = (41, 53)  # 2173 elements
    if dtype.kind == "b":
        base = rng.random(shape) < 0.5
    elif dtype.kind in "iu":
        base = rng.integers(0, 100, shape).astype(dtype)
    elif dtype.kind == "c":
        base = (rng.uniform(-3, 3, shape) + 1j * rng.uniform(-3, 3, shape)).astype(dtype)
    else:
        base = rng.uniform(-3, 3, shape).astype(dtype)
    pairs = [(base, base.copy())]
    one_off = base.copy()
    one_off[30, 7] = not one_off[30, 7] if dtype.kind == "b" else one_off[30, 7] + 1
    pairs.append((base, one_off))
    if dtype.kind in "fc":
        real = np.empty(0, dtype).real.dtype
        rtol, atol = tolerance(dtype)
        scale = float(np.abs(base).max())
        noisy = (base + (rng.uniform(-1, 1, shape) * rtol * np.abs(base)).astype(dtype)).astype(dtype)
        pairs.append((base, noisy))  # within tolerance almost everywhere, some elements near its edge
        edge = base.copy()
        flat = edge.reshape(-1)
        flat[100:110] += np.asarray(atol * scale, real)  # at the absolute floor
        flat[2000] += np.asarray(3 * atol * scale + 3 * rtol * abs(flat[2000]), real)  # beyond it
        pairs.append((base, edge))
        specials = base.copy()
        s = specials.reshape(-1)
        s[5], s[1500], s[1501], s[1800] = np.nan, np.inf, -np.inf, np.inf
        pairs.append((specials, specials.copy()))  # NaN and infinities in the same places: agree
        for index, value in ((1500, 1.0), (1900, np.nan), (1800, -np.inf), (5, 0.0)):
            got = specials.copy()  # inf on one side only, NaN on one side only (past the first chunks),
            got.reshape(-1)[index] = value  # opposite infinities, a number where NumPy gives NaN
            pairs.append((specials, got))
        ulp = base.copy()
        parts = ulp.reshape(-1).real if dtype.kind == "c" else ulp.reshape(-1)
        parts[::97] = np.nextafter(parts[::97], np.inf)  # last-bit differences only
        pairs.append((base, ulp))
        other = {"c": {8: np.complex128, 16: np.complex64}, "f": {8: np.float32}}[dtype.kind].get(dtype.itemsize,
                                                                                                np.float64)
        pairs.append((base, base.astype(other)))  # the graph's dtype differs
    pairs += [(e.T, g.T) for e, g in pairs[:3]]  # F-order
    pairs += [(e[::2, ::3], g[::2, ::3]) for e, g in pairs[:3]]  # strided
    pairs.append((base[:0], base[:0]))  # empty
    pairs.append((base[3, 4][()], one_off[3, 4][()]))  # 0-d
    return [(np.asarray(e), np.asarray(g)) for e, g in pairs]


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "complex64", "complex128", "int32", "uint8",
                                   "bool"])
def test_chunked_compare_gives_the_whole_array_verdict_errors_and_first_index(dtype, monkeypatch):
    monkeypatch.setattr(probe_module, "_CHUNK", 64)  # every array here spans many chunks
    monkeypatch.setattr(probe_module, "_SMALL", 16)  # and the chunks go through the scratch buffers
    rng = np.random.default_rng(5)
    verdicts = set()
    for expected, got in _pairs(dtype, rng):
        for locate in (True, False):
            want = _reference_compare(expected, got, locate)
            have = compare(expected, got, locate)
            assert _same_result(have, want), (expected.shape, want, have)
        verdicts.add(want[0])
    assert verdicts == {True, False}  # the pairs exercise both verdicts


def test_first_mismatch_is_located_across_chunks_in_c_order(monkeypatch):
    monkeypatch.setattr(probe_module, "_CHUNK", 100)
    expected = np.zeros((20, 30), np.float32)
    got = expected.copy()
    got[13, 29] = 1.0
    got[17, 0] = np.nan
    assert compare(expected, got) == (False, math.inf, math.inf, (13, 29))
    assert compare(expected.T, got.T)[3] == (0, 17)  # C order of the transposed view: column 0 first
    # a chunk boundary inside a row (rows of 300 > chunk of 100): the index is still the global one
    monkeypatch.setattr(probe_module, "_CHUNK", 7)
    wide = np.zeros((2, 300), np.float64)
    bad = wide.copy()
    bad[1, 123] = 5.0
    assert compare(wide[:, ::-1], bad[:, ::-1])[3] == (1, 176)


def test_the_absolute_floor_shortcut_passes_exactly_what_the_full_test_passes(monkeypatch):
    """Differences up to atol * scale pass without the relative test; one ulp above, the full test decides."""
    expected = np.full(4096, 2.0, np.float32)
    expected[0] = 1000.0  # scale 1000: floor 1e-2 in float32
    rtol, atol = tolerance(expected.dtype)
    floor = np.float32(atol * 1000.0)
    at_floor = expected + floor
    assert compare(expected, at_floor)[0] and _reference_compare(expected, at_floor)[0]
    beyond = expected.copy()
    beyond[1:] += np.nextafter(floor, np.float32(np.inf)) + np.float32(rtol * 2.0) * 2
    assert _same_result(compare(expected, beyond), _reference_compare(expected, beyond))
    assert not compare(expected, beyond)[0]


@pytest.mark.parametrize("chunk", [64, probe_module._CHUNK])  # chunked, and one chunk (errors kept)
@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "int32", "bool"])
def test_chunked_neighbour_comparison_matches_the_whole_array_one(dtype, chunk, monkeypatch):
    monkeypatch.setattr(probe_module, "_CHUNK", chunk)
    rng = np.random.default_rng(9)
    pairs = _pairs(dtype, rng)
    seen = set()
    for (e1, g1) in pairs[:6]:
        for (e2, g2) in pairs[:6]:
            if e1.shape != e2.shape:
                continue
            for ok1 in (True, False):
                prev, cur = _Outcome(e1, g1, ok1), _Outcome(e2, g2, False)
                ref_prev, ref_cur = _Outcome(e1, g1, ok1), _Outcome(e2, g2, False)
                want = _reference_in_step(ref_prev, ref_cur)
                assert _in_step(prev, cur) == want
                seen.add(want)
            equal_nan = e1.dtype.kind in "fc"
            assert _same(e1, e2) == bool(np.array_equal(e1, e2, equal_nan=equal_nan))
    assert seen == {True, False}


def test_the_scale_is_the_largest_finite_magnitude_and_comes_from_the_comparison(monkeypatch):
    monkeypatch.setattr(probe_module, "_CHUNK", 3)
    for values, scale in (([1.0, -40.0, np.nan, np.inf], 40.0), ([2.0, 3.0, -41.5, 7.0, 0.5], 41.5),
                          ([-np.inf, 0.25], 1.0), ([0.5, -0.25], 1.0)):
        expected = np.array(values, np.float32)
        got = expected.copy()
        got[-1] += 1e-3  # not equal: the tolerance needs the scale
        assert _compare(expected, got, True)[4] == scale
        assert _Outcome(expected, expected, True).scale == scale == _reference_scale(np.abs(expected))


# ------------------------------------------------------------------------------------------
# inputs drawn in place
# ------------------------------------------------------------------------------------------

def _reference_draw(sampler, rng):
    """How the probe drew an input before buffers: a fresh array per draw."""
    if sampler.dtype.kind == "b":
        return rng.random(sampler.shape) < 0.5
    lo, hi = sampler.bounds
    if sampler.dtype.kind in "iu":
        return rng.integers(int(lo), int(hi), size=sampler.shape, dtype=sampler.dtype, endpoint=True)
    if sampler.dtype.kind == "c":
        return (rng.uniform(lo, hi, sampler.shape) + 1j * rng.uniform(lo, hi, sampler.shape)).astype(sampler.dtype)
    return rng.uniform(lo, hi, sampler.shape).astype(sampler.dtype)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "complex64", "complex128", "bool", "int8",
                                   "int32", "uint16", "int64"])
@pytest.mark.parametrize("shape", [(), (5,), (13, 11)])
def test_filling_a_buffer_draws_the_values_and_stream_of_a_fresh_draw(dtype, shape, monkeypatch):
    monkeypatch.setattr(probe_module, "_CHUNK", 7)  # several chunks and a remainder
    sample = np.asarray(np.arange(math.prod(shape)).reshape(shape) % 5 - 1).astype(dtype)
    sampler = _Sampler("x", sample, None if dtype == "bool" else (-2.5, 3.5))
    buffer = np.empty(shape, dtype)
    mine, theirs = np.random.default_rng(3), np.random.default_rng(3)
    for _ in range(3):
        sampler.fill(buffer, mine)
        np.testing.assert_array_equal(buffer, _reference_draw(sampler, theirs))
    assert mine.random() == theirs.random()  # the generator consumed exactly the same stream


def test_each_input_is_redrawn_in_its_own_buffer_and_mismatches_keep_a_copy():
    seen = []
    tr = ln.trace_cell("y = a * 0.5 + np.interp(b, [0, 1], [0, 10])",
                       {"np": np, "a": X.copy(), "b": np.abs(X)}, inputs=["a", "b"], outputs=["y"])
    real = tr.run_eager

    def spy(inputs, *rest, **options):
        values = inputs["node"]
        seen.append({name: (value.__array_interface__["data"][0], value.copy()) for name, value in values.items()})
        return real(inputs, *rest, **options)

    tr.run_eager = spy
    report = tr.probe(n=7, seed=0)
    for name in ("a", "b"):
        assert len({probe[name][0] for probe in seen}) == 1  # one buffer per input, every probe
    # probe j redraws input (j - 1) mod 2 alone: its values change, the other's stay
    for j in range(1, len(seen)):
        varied, kept = ("a", "b") if (j - 1) % 2 == 0 else ("b", "a")
        assert not np.array_equal(seen[j][varied][1], seen[j - 1][varied][1])
        np.testing.assert_array_equal(seen[j][kept][1], seen[j - 1][kept][1])
    m = report.outputs["y"].first_mismatch
    for name in ("a", "b"):  # the report kept that probe's inputs, not the buffers redrawn since
        np.testing.assert_array_equal(m.inputs["node"][name], seen[m.probe][name][1])
        assert m.inputs["node"][name].__array_interface__["data"][0] != seen[0][name][0]


def test_a_torch_input_is_redrawn_in_place_as_a_tensor():
    pointers = []
    tr = ln.trace_cell("y = t * 2", {"t": torch.tensor([0.5, 1.5, 2.5])}, inputs=["t"], outputs=["y"])
    real = tr.run_eager

    def spy(inputs, *rest, **options):
        value = inputs["node"]["t"]
        assert isinstance(value, torch.Tensor)
        pointers.append((value.data_ptr(), value.clone()))
        return real(inputs, *rest, **options)

    tr.run_eager = spy
    assert tr.probe(n=4, seed=0).passed
    assert len({p for p, _ in pointers}) == 1
    assert not torch.equal(pointers[0][1], pointers[1][1])


def test_draw_inputs_still_hands_out_fresh_arrays():
    tr = trace("y = x * 2", x=X)
    rng = np.random.default_rng(0)
    first, second = probe_module.draw_inputs(tr, rng), probe_module.draw_inputs(tr, rng)
    assert not np.shares_memory(first["node"]["x"], second["node"]["x"])
    assert not np.array_equal(first["node"]["x"], second["node"]["x"])


def test_a_graph_output_that_is_an_input_buffer_is_copied_before_the_next_draw(monkeypatch):
    """A wrong row returns the input itself for x + 1: graph minus eager is -1 on every probe, so the graph
    moves with x. Kept as a view of the buffer, the previous outcome would change with the next draw."""
    wrong = dataclasses.replace(ops.UFUNC_ROWS[np.add], build=lambda ctx: ctx.tensor("x0"))
    monkeypatch.setitem(ops.UFUNC_ROWS, np.add, wrong)
    tr = trace("y = x + 1.0", x=X)
    assert "return (x,)" in tr.nodes["node"].graph.code
    report = tr.probe(n=6, seed=0)
    assert not report.passed and report.outputs["y"].mismatches == 6
    assert report.sensitivity == {"y": {"x": (True, True)}} and report.baked == []


# ------------------------------------------------------------------------------------------
# memory: a small multiple of the input, whatever the number of probes
# ------------------------------------------------------------------------------------------

BIG = np.random.default_rng(0).random((2048, 1024)).astype(np.float32)  # 8 MiB


def _traced_peak(run):
    tracemalloc.start()
    try:
        run()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_probe_memory_on_an_8_mb_input_stays_a_small_multiple_of_it():
    """The probe holds one buffer per input and the previous probe's outputs on top of one eager run
    (which copies the input and makes the output): about 4x the input here, never a float64 copy or
    whole-array temporaries of the comparison."""
    tr = ln.trace_cell("y = x * 2.0", {"np": np, "x": BIG}, inputs=["x"], outputs=["y"])
    tr.probe(n=2, seed=1)
    peak = _traced_peak(lambda: tr.probe(n=8, seed=0))
    assert tr.last_probe.passed
    assert peak < 6 * BIG.nbytes
    assert _traced_peak(lambda: tr.probe(n=24, seed=0)) < 6 * BIG.nbytes  # the same bound for 3x the probes


def test_a_failing_probe_explains_itself_without_float64_copies_of_the_output(monkeypatch):
    """Graph minus eager is compared chunk by chunk for the sensitivity of a failing output."""
    wrong = dataclasses.replace(ops.UFUNC_ROWS[np.subtract], build=ops.elementwise(torch.add))
    monkeypatch.setitem(ops.UFUNC_ROWS, np.subtract, wrong)
    tr = ln.trace_cell("y = x - 0.25", {"np": np, "x": BIG}, inputs=["x"], outputs=["y"])
    tr.probe(n=2, seed=1)
    peak = _traced_peak(lambda: tr.probe(n=6, seed=0))
    report = tr.last_probe
    assert not report.passed and report.sensitivity == {"y": {"x": (True, True)}}
    assert peak < 6 * BIG.nbytes


def test_the_derived_range_ignores_nan_and_infinities_without_filtering_finite_samples():
    sample = np.array([0.5, np.nan, 2.0, np.inf, -np.inf, 1.0], np.float32)
    tr = ln.trace_cell("y = x * 2", {"np": np, "x": sample}, inputs=["x"], outputs=["y"])
    lo, hi = probe_module.input_ranges(tr)["x"]
    assert (lo, hi) == pytest.approx((0.35, 2.15))  # [0.5, 2.0] padded by 10%, sign kept
    clean = trace("y = x * 2", x=X)
    assert probe_module.input_ranges(clean)["x"] == pytest.approx((-0.45, 1.35))
    nothing_finite = ln.trace_cell("y = x * 2", {"np": np, "x": np.array([np.nan, np.inf])}, inputs=["x"],
                                   outputs=["y"])
    assert probe_module.input_ranges(nothing_finite)["x"] == (-1.0, 1.0)


def test_float16_outputs_are_held_to_float16s_tolerance():
    """docs/probe.md: (1e-2, 1e-3) for float16 (computed in float32): half a percent apart passes, 5% fails."""
    expected = np.linspace(1.0, 2.0, 50).astype(np.float16)
    assert compare(expected, (expected.astype(np.float32) * 1.005).astype(np.float16))[0]
    assert not compare(expected, (expected.astype(np.float32) * 1.05).astype(np.float16))[0]
