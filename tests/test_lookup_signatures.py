"""Every lookup row against NumPy's own signature: positional names, and every keyword handled or refused.

A row binds positional arguments by the names NumPy's ``inspect.signature`` gives; each keyword NumPy
accepts is either read by the row's builder (``@reads``) or declared on the row in ``rejects`` (refused
unless harmless). Any other argument a call passes is refused before the builder runs, so a keyword the
lookup does not implement is reported at its cell line, never silently dropped.
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import leapp_notebook as ln
from leapp_notebook.tracing import ops
from leapp_notebook.tracing.lookup.context import Unsupported
from leapp_notebook.tracing.lookup.row import Checked, keyword_names, positional_names, reads, rejects

FUNCTION_ROWS = sorted(ops.FUNCTION_ROWS.values(), key=lambda r: r.numpy)
# Rows whose positional binding differs from NumPy's signature on purpose, with the reason.
BOUND_APART = {"np.einsum": "the subscripts string is bound apart from the operands (*operands)"}


def _signature(func):
    return inspect.signature(func).parameters.values()


@pytest.mark.parametrize("row", FUNCTION_ROWS, ids=lambda r: r.numpy)
def test_function_row_binds_positional_arguments_by_numpys_names(row):
    if row.numpy in BOUND_APART:
        assert row.names != positional_names(row.key)
        return
    assert row.names == positional_names(row.key)


@pytest.mark.parametrize("row", FUNCTION_ROWS, ids=lambda r: r.numpy)
def test_every_keyword_of_numpys_signature_is_handled_or_refused(row):
    unhandled = [name for name in keyword_names(row.key) if name not in row.reads and name not in row.rejects]
    assert unhandled == [], f"{row.numpy}: NumPy accepts {unhandled}, which the row neither reads nor rejects"


@pytest.mark.parametrize("row", FUNCTION_ROWS, ids=lambda r: r.numpy)
def test_refused_arguments_exist_in_numpys_signature(row):
    params = {p.name: p for p in _signature(row.key)}
    has_kwargs = any(p.kind is p.VAR_KEYWORD for p in params.values())
    stale = [name for name in row.rejects if name not in params]
    assert has_kwargs or stale == [], f"{row.numpy} declares rejected arguments NumPy does not take: {stale}"


@pytest.mark.parametrize("row", FUNCTION_ROWS, ids=lambda r: r.numpy)
def test_builder_reads_every_required_argument_under_numpys_name(row):
    required = [p.name for p in _signature(row.key)
                if p.default is p.empty and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)]
    if row.numpy in BOUND_APART:
        required = [n.lstrip("*") for n in row.names]
    assert [n for n in required if n not in row.reads] == [], row.numpy


@pytest.mark.parametrize("row", sorted(ops.METHOD_ROWS.values(), key=lambda r: r.numpy), ids=lambda r: r.numpy)
def test_every_keyword_of_the_method_signature_is_handled_or_refused(row):
    try:
        params = list(_signature(getattr(np.ndarray, row.key)))[1:]
    except (TypeError, ValueError):
        assert row.key in ("T", "real", "imag")  # properties
        return
    keywords = [p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    unhandled = [name for name in keywords if name not in row.reads and name not in row.rejects]
    assert unhandled == [], f"{row.numpy}: NumPy accepts {unhandled}, which the row neither reads nor rejects"
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if row.key not in ("reshape", "transpose", "fill"):  # TracedArray normalizes these arguments
        assert len(row.names) == 1 + len(positional), row.numpy


def test_every_row_declares_what_its_builder_reads():
    assert [r.numpy for r in ops.all_rows() if r.reads is None] == []


# ------------------------------------------------------------------ the check itself
class _Ctx:
    def __init__(self, **eager):
        self.eager = eager


def test_checked_refuses_an_argument_the_builder_does_not_read():
    built = []
    check = Checked(reads("a axis")(lambda ctx: built.append(ctx) or "node"), rejects("out where=True"))
    assert check(_Ctx(a=1, axis=0, out=None, where=True)) == "node"
    with pytest.raises(Unsupported, match="where=False"):
        check(_Ctx(a=1, where=False))
    with pytest.raises(Unsupported, match="correction=2"):
        check(_Ctx(a=1, correction=2))
    assert len(built) == 1


def test_rejects_spec_parses_harmless_values():
    spec = rejects("out where=True order=C,K kind=* subok=False")
    assert spec["out"] == () and spec["where"] == (True,) and spec["order"] == ("C", "K")
    assert spec["subok"] == (False,) and repr(spec["kind"][0]) == "ANY"


# ------------------------------------------------------------------ behaviour through a trace
def _trace(source, profile="full", **inputs):
    return ln.trace_cell(source, {"np": np}, inputs=inputs, outputs=["y"], profile=profile)


def _errors(trace):
    return [h for h in trace.hazards if h.severity == "error"]


def test_empty_like_binds_numpys_prototype_keyword():
    x = np.arange(6.0).reshape(2, 3)
    trace = _trace("y = np.empty_like(prototype=x, dtype=np.float32) + x", x=x)
    assert _errors(trace) == []
    (have,) = trace.nodes["node"](np.ones((2, 3)))
    assert have.shape == (2, 3) and have.dtype == np.float64


@pytest.mark.parametrize("source", ["y = np.std(x, axis=0, correction=2)", "y = np.var(x, correction=1)",
                                    "y = np.std(x, axis=1, keepdims=True, correction=1.5)"])
def test_correction_is_numpys_ddof(source):
    rng = np.random.default_rng(0)
    trace = _trace(source, x=rng.normal(size=(5, 4)))
    assert _errors(trace) == []
    fresh = rng.normal(size=(5, 4))
    (have,) = trace.nodes["node"](fresh)
    want = eval(source.split("= ", 1)[1], {"np": np, "x": fresh})
    np.testing.assert_allclose(have, want, rtol=1e-12)


@pytest.mark.parametrize("source, refused", [
    ("y = np.quantile(x, 0.5, method='inverted_cdf', weights=np.ones(8))", "weights="),
    ("y = np.std(x, mean=np.mean(x, keepdims=True))", "mean="),
    ("y = np.clip(x, 0, 1, dtype=np.float32)", "dtype="),
    ("y = np.pad(x, 1, mode='linear_ramp', end_values=3)", "end_values="),
    ("y = np.std(x, where=x > 0)", "where="),
])
def test_an_argument_the_row_does_not_implement_is_reported_not_dropped(source, refused):
    trace = _trace(source, x=np.linspace(-1.0, 2.0, 8))
    errors = _errors(trace)
    assert errors and errors[0].kind == "untraced-call" and errors[0].line == 1
    assert refused in errors[0].message


def test_harmless_values_of_refused_arguments_are_recorded():
    trace = _trace("y = np.sum(x, where=True) + np.zeros_like(x, order='F') + np.sort(x, kind='heapsort')",
                   x=np.arange(4.0))
    assert _errors(trace) == []


def test_a_python_int_beyond_the_dtype_a_builder_asks_for_is_refused_not_raised():
    """A builder that asks for a Python number as a tensor of a dtype it does not fit (an int NumPy took where the
    row's conversion cannot) gets ``Unsupported``, so the call is reported at its line, instead of NumPy's
    OverflowError ending the whole trace as if the cell had failed."""
    from leapp_notebook.tracing.lookup.context import BuildContext

    session = type("Session", (), {"graph_value": lambda self, builder, value, line, helper=None: value})()
    ctx = BuildContext({"v": 300}, {"v": 300}, np.zeros(3, np.uint8), {}, session=session, builder=None, line=1,
                       location=None, helper=None, name="np.test")
    with pytest.raises(Unsupported, match="300 does not fit uint8"):
        ctx.as_tensor(300, 300, np.dtype(np.uint8))
    with pytest.raises(Unsupported, match="does not fit int8"):
        ctx.as_tensor(-200, -200, np.dtype(np.int8))


MASKED = ["np.sum(x, where=x > 0)", "np.sum(x, axis=-1, initial=1.5)", "np.max(x, axis=0, initial=0.25)",
          "np.max(x, initial=0.0, where=x < 1)", "np.mean(x, where=x > 0)",
          "np.mean(x, axis=0, where=x > 0, keepdims=True)", "np.prod(x, initial=2.0)",
          "x.sum(where=x > 0, axis=0, keepdims=True)", "np.min(x, axis=-1, where=x > -0.5, initial=9)",
          "np.any(x, where=x > 1)", "np.all(x, axis=0, where=x > 0)", "np.add.reduce(x, where=x > 0)",
          "np.maximum.reduce(x, initial=0.5, axis=-1)", "np.sum(x, axis=(), where=x > 0)",
          "np.mean(x, axis=(), where=x > 0)", "np.max(x, axis=(), where=x > 0, initial=3)", "np.sum(x, where=[True])",
          "x.max(initial=-1, where=x != 0)", "np.prod(x, axis=-1, where=x > 0.5, initial=3)",
          "np.mean(x, dtype=np.float32, where=x > 0)"]


@pytest.mark.parametrize("dtype", ["float32", "float16", "int8", "uint8", "bool"])
@pytest.mark.parametrize("shape", [(2, 3), (), (2, 0)])
def test_where_and_initial_of_the_reductions_are_recorded_as_numpy_computes_them(dtype, shape):
    """``full`` records each as NumPy computes it (value, dtype, shape, on other inputs; nan where a masked mean keeps
    nothing, initial= alone over an empty axis); ``leapp`` reports it, since LEAPP 0.7.2 passes both arguments on to
    a torch reduction that has neither."""
    rng = np.random.default_rng(1)
    x, fresh = (np.asarray(rng.standard_normal(shape) * 3).astype(dtype) for _ in range(2))
    for expr in MASKED:
        try:
            with np.errstate(all="ignore"):
                eval(expr, {"np": np, "x": x})
                want = np.asarray(eval(expr, {"np": np, "x": fresh}))
        except (TypeError, ValueError, OverflowError):  # NumPy refuses (a mask that does not broadcast, -1 for uint8)
            continue
        with np.errstate(all="ignore"):
            trace = _trace(f"y = {expr}", x=x)
            assert _errors(trace) == [], expr
            (have,) = trace.nodes["node"](fresh)
        assert have.dtype == want.dtype and have.shape == want.shape, expr
        np.testing.assert_allclose(have.astype(np.float64), want.astype(np.float64),
                                   rtol=1e-2 if dtype == "float16" else 1e-6, err_msg=expr)
        leapp = _trace(f"y = {expr}", profile="leapp", x=x)
        assert any(h.severity == "error" and h.line == 1 for h in leapp.hazards), expr
