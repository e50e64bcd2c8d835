"""Every row in every dtype the Array API names, and on hypothesis-drawn shapes; the generated docs table.

``benchmarks/lookup_table.py`` re-runs each row's first parity case with every input in bool, int8-int64,
uint8-uint64, float32/64 and complex64/128: each (row, dtype) must be recorded faithfully, reported with an
error hazard, or refused by NumPy itself, never silently wrong. The hypothesis tests draw 0-d, empty and
broadcasting shapes for the ufunc and reduction rows in the same dtypes.
"""

from __future__ import annotations

import warnings

import numpy as np
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from test_parity import assert_same

import leapp_notebook as ln
from benchmarks import lookup_table
from leapp_notebook.tracing import ops

ARRAY_API_DTYPES = [np.dtype(d) for d in lookup_table.DTYPES]
SETTINGS = settings(max_examples=300, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


def test_every_row_in_every_array_api_dtype_is_recorded_or_reported():
    failures = {f"{name} {dt}": outcome for name, outcomes in lookup_table.coverage().items()
                for dt, outcome in outcomes.items()
                if outcome.startswith(("silent", "crash"))}
    assert failures == {}


def test_the_sweep_covers_every_row_and_dtype():
    results = lookup_table.coverage()
    assert len(results) == len(ops.all_rows())
    assert all(set(outcomes) == set(lookup_table.DTYPES) for outcomes in results.values())
    recorded = {dt for outcomes in results.values() for dt, o in outcomes.items() if o == "recorded"}
    assert recorded == set(lookup_table.DTYPES)  # each dtype is recorded somewhere, uint64 and complex too


def test_unsigned_and_complex_routes_are_recorded_where_exact():
    results = lookup_table.coverage()
    assert results["np.add"]["u8"] == results["np.add"]["u4"] == results["np.add"]["u2"] == "recorded"
    assert results["np.floor_divide"]["u4"] == "recorded" and results["np.floor_divide"]["u8"] == "reported"
    assert results["np.less"]["c16"] in ("reported", "numpy") and results["np.rint"]["c16"] == "recorded"


def test_docs_table_is_the_generated_one():
    text = lookup_table.DOC.read_text()
    assert lookup_table.rewrite(text, lookup_table.table(lookup_table.coverage())) == text, \
        "docs/lookup.md is stale: run python benchmarks/lookup_table.py"


# ------------------------------------------------------------------ hypothesis shapes
UNARY = sorted((r for r in ops.UFUNC_ROWS.values() if r.key.nin == 1), key=lambda r: r.numpy)
BINARY = sorted((r for r in ops.UFUNC_ROWS.values() if r.key.nin == 2 and r.key.signature is None),
                key=lambda r: r.numpy)
REDUCTIONS = ["np.sum", "np.prod", "np.mean", "np.std", "np.var", "np.max", "np.min", "np.all", "np.any",
              "np.argmax", "np.argmin", "np.count_nonzero", "np.cumulative_sum"]


def _draw(rng: np.random.Generator, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    if dtype.kind == "b":
        return np.asarray(rng.random(shape) < 0.5)
    if dtype.kind in "iu":
        return rng.integers(0 if dtype.kind == "u" else -5, 6, size=shape).astype(dtype)
    values = rng.uniform(-3, 3, shape)
    if dtype.kind == "c":
        values = values + 1j * rng.uniform(-3, 3, shape)
    return np.asarray(values.astype(dtype))


def _check(source: str, inputs: dict[str, tuple[tuple[int, ...], np.dtype]], seed: int) -> None:
    rng = np.random.default_rng(seed)
    first = {k: _draw(rng, s, d) for k, (s, d) in inputs.items()}
    fresh = {k: _draw(rng, s, d) for k, (s, d) in inputs.items()}
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            for values in (first, fresh):
                namespace = {"np": np, **values}
                exec(source, namespace)
            want = namespace["y"]
        except Exception:  # noqa: BLE001 - NumPy refuses (no loop for the dtype, an axis out of range)
            assume(False)
        trace = ln.trace_cell(source, {"np": np}, inputs=first, outputs=["y"], profile="full")
        if any(h.severity == "error" for h in trace.hazards):
            assert all(h.line == 1 for h in trace.hazards if h.severity == "error")
            return
        (have,) = trace.nodes["node"](*fresh.values())
    assert_same(want, have, f"{source} {inputs}", inputs=tuple(fresh.values()))


@SETTINGS
@given(st.sampled_from(UNARY), hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=3),
       st.sampled_from(ARRAY_API_DTYPES), st.integers(0, 2**16))
def test_unary_ufunc_rows_on_drawn_shapes_and_dtypes(row, shape, dtype, seed):
    name = row.key.__name__
    source = f"y = np.{name}(x)" if row.key.nout == 1 else f"y = np.{name}(x)[0]"
    _check(source, {"x": (shape, dtype)}, seed)


@SETTINGS
@given(st.sampled_from(BINARY), hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, max_side=3),
       st.sampled_from(ARRAY_API_DTYPES), st.sampled_from(ARRAY_API_DTYPES), st.integers(0, 2**16))
def test_binary_ufunc_rows_on_broadcast_shapes_and_dtypes(row, shapes, dtype_a, dtype_b, seed):
    name = row.key.__name__
    source = f"y = np.{name}(a, b)" if row.key.nout == 1 else f"y = np.{name}(a, b)[0]"
    _check(source, {"a": (shapes.input_shapes[0], dtype_a), "b": (shapes.input_shapes[1], dtype_b)}, seed)


@SETTINGS
@given(st.sampled_from(REDUCTIONS), hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=3),
       st.sampled_from(ARRAY_API_DTYPES), st.sampled_from(["None", "0", "-1", "(0, -1)", "()"]), st.booleans(),
       st.integers(0, 2**16))
def test_reduction_rows_on_drawn_shapes_axes_and_dtypes(fn, shape, dtype, axis, keepdims, seed):
    if fn in ("np.argmax", "np.argmin") and axis in ("(0, -1)", "()"):
        axis = "None"
    source = f"y = {fn}(x, axis={axis})" if fn == "np.cumulative_sum" else \
        f"y = {fn}(x, axis={axis}, keepdims={keepdims})"
    if fn == "np.cumulative_sum" and axis in ("(0, -1)", "()", "None"):
        axis = "0"
        source = f"y = {fn}(x, axis=0, include_initial={keepdims})"
    _check(source, {"x": (shape, dtype)}, seed)
