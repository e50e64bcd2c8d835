"""The catalogue of calls LEAPP 0.7.2 records wrongly (tracing/leapp_defects.py), one cause at a time.

For each cause: a cell LEAPP gets wrong is an ``error`` ``semantic-mismatch`` hazard at the line of the
call in ``profile="leapp"`` and a ``warning`` in ``profile="full"``, with the cause's text and a fix;
our own graph stays right; and the rewrite the fix suggests is clean. Each pair was measured against
real LEAPP 0.7.2 (benchmarks/leapp_gaps.py); these tests do not need leapp installed.
"""

import numpy as np
import pytest
import torch
from conftest import trace

import leapp_notebook as ln
from leapp_notebook.tracing import leapp_defects

F34 = np.array([[0.5, -0.3, 1.2, 0.8], [0.1, 0.9, -0.7, 0.4], [1.5, 0.2, 0.3, -0.2]], np.float32)
F4 = np.array([0.5, -0.3, 1.2, 0.8], np.float32)
I34 = np.array([[3, 1, 4, 2], [0, -2, 5, 1], [2, 2, -1, 3]], np.int32)
I34B = np.array([[1, 2, 0, 3], [2, 1, 1, 2], [3, 0, 1, 1]], np.int32)  # has zeros
NZ34 = np.array([[1, 2, 5, 3], [2, 1, 1, 2], [3, 4, 1, 1]], np.int32)
B34 = np.array([[True, False, True, True], [False, False, True, False], [True, True, False, True]])
B42 = np.array([[True, False], [False, True], [True, True], [False, False]])
F22 = np.array([[0.5, -1.5], [2.0, 0.25]], np.float32)

MARK = "LEAPP 0.7.2 records it wrongly"

# cause -> [(cell LEAPP gets wrong, the line it fails at, the rewrite LEAPP gets right, inputs)]
CASES = {
    "method-signature": [
        ("z = x * 2\ny = z.argmax(axis=1, keepdims=True)", 2, "z = x * 2\ny = np.argmax(z, axis=1, keepdims=True)",
         {"x": F34}),
        ("y = x.clip(max=1.5)", 1, "y = x.clip(None, 1.5)", {"x": F34}),
        ("y = x.cumsum(axis=0, dtype=np.float64)", 1, "y = x.astype(np.float64).cumsum(axis=0)", {"x": F34}),
        ("y = x.all(axis=0, keepdims=True)", 1, "y = np.all(x, axis=0, keepdims=True)", {"x": F34}),
        ("y = x.astype(np.float64, copy=True)", 1, "y = x.astype(np.float64)", {"x": F34}),
    ],
    "dtype-argument": [
        ("y = np.sum(x, axis=0, dtype=np.float64)", 1, "y = np.sum(x.astype(np.float64), axis=0)", {"x": F34}),
        ("y = x.mean(dtype=np.float64)", 1, "y = x.astype(np.float64).mean()", {"x": F34}),
    ],
    "ufunc-reduce": [("y = np.add.reduce(x)", 1, "y = np.sum(x, axis=0)", {"x": F34})],
    "lambda-ufunc": [
        ("y = np.exp2(x)", 1, "y = np.power(2.0, x)", {"x": F34}),
        ("y = np.positive(x) * 2", 1, "y = +x * 2", {"x": F34}),
    ],
    "bitwise-operator": [
        ("y = a & b", 1, "y = np.bitwise_and(a, b)", {"a": I34, "b": NZ34}),
        ("y = ~a", 1, "y = np.invert(a)", {"a": I34}),
    ],
    "python-scalar-operand": [
        ("y = np.hypot(x, 1.5)", 1, "y = np.hypot(x, np.full_like(x, 1.5))", {"x": F34}),
        ("y = np.logical_and(x > 0, True)", 1, "y = np.logical_and(x > 0, x > -1)", {"x": F34}),
        ("y = np.arctan2(1.5, x)", 1, "y = np.arctan2(np.full_like(x, 1.5), x)", {"x": F34}),
    ],
    "builtin-round": [
        ("s = x.sum()\ny = x * round(s, 2)", 2, "s = x.sum()\ny = x * np.round(s, decimals=2)", {"x": F34}),
        ("y = x * round(x.max(axis=1).sum(), 1)", 1, "y = x * np.round(x.max(axis=1).sum(), decimals=1)",
         {"x": F34}),
    ],
    "torch-rejects-arguments": [
        ("y = np.tril(x, k=-1)", 1, "y = np.tril(x, -1)", {"x": F34}),
        # measured: shift= by keyword fails to compile (torch.roll's is shifts=); positional is faithful
        ("y = np.roll(x, shift=-1, axis=0)", 1, "y = np.roll(x, -1, axis=0)", {"x": F34}),
        ("y = np.round(x, 2)", 1, "y = np.round(x, decimals=2)", {"x": F34}),
        ("y = x.round()", 1, "y = np.round(x)", {"x": F34}),
        ("y = np.rot90(x, 1, axes=(1, 0))", 1, "y = np.rot90(x, 1, (1, 0))", {"x": F34}),
        ("y = np.trace(x, 1)", 1, "y = np.sum(np.diagonal(x, 1), axis=-1)", {"x": F34}),
        ("y = np.tensordot(a, b, axes=(1, 0))", 1, "y = np.tensordot(a, b, axes=([1], [0]))",
         {"a": F34, "b": F34.T.copy()}),
        ("y = np.concatenate(x)", 1, "y = np.concatenate([x[0:1], x[1:2], x[2:3]], axis=1)", {"x": F34}),
        ("y = np.dot(a, b)", 1, "y = np.dot(a, b[0])", {"a": np.ones((2, 3, 4), np.float32),
                                                        "b": np.ones((5, 4, 2), np.float32)}),
    ],
    "multi-axis-dim": [
        ("y = np.expand_dims(x, (0, 2))", 1, "y = np.expand_dims(np.expand_dims(x, 0), 2)", {"x": F34}),
        ("y = np.prod(x, axis=(0, 1))", 1, "y = np.prod(np.prod(x, axis=1), axis=0)", {"x": F34}),
        ("y = np.argmax(x, keepdims=True)", 1, "y = np.argmax(x, axis=1, keepdims=True)", {"x": F34}),
    ],
    "axis-none-dim": [
        ("y = np.max(x, axis=None)", 1, "y = np.max(x)", {"x": F34}),
        ("y = x * x.max()", 1, "y = x * np.max(x)", {"x": F34}),
        ("y = np.cumsum(x)", 1, "y = np.cumsum(x.reshape(-1), axis=0)", {"x": F34}),
        ("y = (x * 2)[None].squeeze()", 1, "y = (x * 2)[None].squeeze(0)", {"x": F34}),
        ("y = np.concatenate([a, b], axis=None)", 1, "y = np.concatenate([a.reshape(-1), b.reshape(-1)])",
         {"a": F34, "b": F4}),
    ],
    "empty-axis-tuple": [("y = np.sum(x, axis=())", 1, "y = np.sum(x, axis=0)", {"x": F34}),
                         ("y = x.max(axis=(), keepdims=True)", 1, "y = np.all(x, axis=())", {"x": F34})],
    "masked-reduction": [
        ("y = np.sum(x, axis=0, where=x > 0)", 1, "y = np.sum(np.where(x > 0, x, np.zeros_like(x)), axis=0)",
         {"x": F34}),
        ("y = np.max(x, axis=0, initial=0.25)", 1, "y = np.maximum(np.max(x, axis=0), np.full_like(x[0], 0.25))",
         {"x": F34}),
        ("y = x.sum(axis=0, where=x > 0)", 1, "y = np.sum(x * (x > 0), axis=0)", {"x": F34}),
        ("y = np.sum(x, axis=0, initial=1.5)", 1, "y = np.sum(x, axis=0) + 1.5", {"x": F34}),
    ],
    "int-mean": [("y = np.mean(x, axis=0)", 1, "y = np.mean(x.astype(np.float64), axis=0)", {"x": I34})],
    "int-std-var": [("y = x.std()", 1, "y = x.astype(np.float64).std()", {"x": I34}),
                    ("y = np.var(x, axis=1)", 1, "y = np.var(x.astype(np.float64), axis=1)", {"x": B34})],
    "sort-axis-none": [("y = np.sort(x, axis=None)", 1, "y = np.sort(x.reshape(-1))", {"x": F34})],
    "unstable-argsort": [("y = np.argsort(x, kind='stable')", 1, "y = np.argsort(x)", {"x": I34})],
    "uninitialized-values": [("y = np.empty_like(x)", 1, "y = np.zeros_like(x)", {"x": F34})],
    "integer-division-by-zero": [("y = a % b", 1, "y = a % c", {"a": I34, "b": I34B, "c": NZ34})],
    "torch-kernel": [
        ("y = np.dot(a, b)", 1, "y = np.dot(a.astype(np.float32), b.astype(np.float32))", {"a": B34, "b": B42}),
        ("y = np.argmax(x, axis=1)", 1, "y = np.argmax(x.astype(np.int32), axis=1)", {"x": B34}),
        ("y = a @ b", 1, "y = a @ b.astype(np.float32)", {"a": F34, "b": np.ones((4, 2))}),
    ],
    "torch-dtype": [
        ("y = x / 2", 1, "y = x.astype(np.float64) / 2", {"x": I34}),
        ("y = np.clip(x, 0.5, 1.5)", 1, "y = np.clip(x, 0, 1)", {"x": I34}),
        ("y = np.where(x > 0, x, 0.5)", 1, "y = np.where(x > 0, x, 0)", {"x": I34}),
        ("y = np.sin(x)", 1, "y = np.sin(x.astype(np.float64))", {"x": I34}),
        ("y = x + np.array(1.5)", 1, "y = x + 1.5", {"x": F34}),
        ("y = np.concatenate([a, b], axis=1)", 1, "y = np.concatenate([a.astype(np.float32), b], axis=1)",
         {"a": I34, "b": F34}),
        # LEAPP's __isub__ keeps torch's float64 (replay validation fails); written into a subscript it is cast
        ("y = x.copy()\ny -= c", 2, "y = x.copy()\ny[...] -= c", {"x": F34, "c": np.linspace(0.1, 0.4, 4)}),
    ],
    "tensor-dtype": [
        ("y = (np.abs(x) * 1000).astype(np.uint16)", 1, "y = (np.abs(x) * 1000).astype(np.int32)", {"x": F34}),
    ],
    "output-aliases-input": [
        ("y = x.T", 1, "y = x.T.copy()", {"x": F4}),
        ("z = x * 2\ny = x[:]", 2, "z = x * 2\ny = x", {"x": F34}),
        ("y = x.reshape(3, 4)", 1, "y = x.reshape(4, 3)", {"x": F34}),
    ],
}
PARAMS = [pytest.param(cause, *case, id=f"{cause}-{i}") for cause, cases in CASES.items()
          for i, case in enumerate(cases)]


def _cause(hazard) -> str:
    found = [d.cause for d in leapp_defects.ALL_DEFECTS if d.what in hazard.message]
    assert found, hazard.message
    return found[0]


def _graph_matches_numpy(t, inputs, values=True) -> None:
    node = t.nodes["node"]
    eager = t.run_eager({"node": inputs})["node"]["y"]
    (got,) = node(*inputs.values())
    assert got.shape == np.shape(eager) and got.dtype == np.asarray(eager).dtype
    if not values:
        return
    if np.asarray(eager).dtype.kind in "fc":
        np.testing.assert_allclose(got, eager, rtol=1e-6, atol=1e-6)
    else:
        np.testing.assert_array_equal(got, eager)


@pytest.mark.filterwarnings("ignore:divide by zero:RuntimeWarning")
@pytest.mark.parametrize("cause, bad, line, good, inputs", PARAMS)
def test_leapp_failure_is_an_error_in_leapp_and_a_warning_in_full(cause, bad, line, good, inputs):
    for profile, severity in (("leapp", "error"), ("full", "warning")):
        t = trace(bad, profile=profile, **inputs)
        found = [h for h in t.hazards if h.kind == "semantic-mismatch" and MARK in h.message]
        assert len(found) == 1, (profile, t.hazards)
        hazard = found[0]
        assert (hazard.line, hazard.severity, _cause(hazard)) == (line, severity, cause), hazard
        assert hazard.code == bad.splitlines()[line - 1]
        assert hazard.fix.startswith(f"At line {line} (`") and len(hazard.fix) > 40
        assert hazard.graph_nodes, hazard
        if profile == "leapp":
            assert not t.ok
        # the hazard is about LEAPP's export: our graph is right
        _graph_matches_numpy(t, inputs, values=cause != "uninitialized-values")


@pytest.mark.parametrize("cause, bad, line, good, inputs", PARAMS)
def test_the_rewrite_leapp_gets_right_is_clean(cause, bad, line, good, inputs):
    t = trace(good, profile="leapp", **inputs)
    assert [h for h in t.hazards if MARK in h.message] == [], t.hazards


def test_every_cause_of_the_catalogue_has_a_case():
    causes = [d.cause for d in leapp_defects.ALL_DEFECTS]
    assert len(causes) == len(set(causes))
    assert set(causes) == set(CASES)


def test_the_message_names_the_call_and_what_leapp_does():
    t = trace("y = x.argmax(axis=1, keepdims=True)", x=F34)
    (hazard,) = t.hazards
    assert hazard.message.startswith("ndarray.argmax is recorded correctly here, but LEAPP 0.7.2 records it wrongly")
    assert "TracedNpArray.argmax() has no keepdims= parameter, so tracing raises TypeError" in hazard.message
    assert "np.argmax(x, axis=..., keepdims=True)" in hazard.fix
    t = trace("y = x / 2", x=I34)
    assert "LEAPP's model returns float32 where NumPy gives float64" in t.hazards[0].message
    t = trace("y = x.T", x=F4)
    assert "output 'y' (ndarray.T of input 'x')" in t.hazards[0].message
    assert "shares memory with declared input" in t.hazards[0].message and ".copy()" in t.hazards[0].fix


@pytest.mark.parametrize("bad, good", [("y = x * x.max()", "y = x * np.max(x)"),
                                       ("y = np.min(x, axis=None)", "y = np.min(x)"),
                                       ("y = (x * 2)[None].squeeze()", "y = np.squeeze((x * 2)[None])")])
def test_the_fix_for_a_reduction_given_axis_none_is_the_function_without_axis(bad, good):
    """x.max() passes axis=None to LEAPP's torch op like np.max(x, axis=None); np.max(x) exports (measured). The fix
    said "leave axis out" to a cell that had left it out, and listed unrelated calls."""
    (hazard,) = trace(bad, x=F34).hazards
    name = good.split("np.")[1].split("(")[0]
    assert f"call the function with no axis: np.{name}(x), not x.{name}()" in hazard.fix, hazard.fix
    assert "leave axis out" not in hazard.fix and "concatenate" not in hazard.fix
    assert trace(good, x=F34).hazards == []


def test_keyword_and_positional_spellings_are_told_apart_inside_helpers():
    source = "def f(v):\n    return np.round(v, 2) + np.round(v, decimals=2)\ny = f(x)"
    t = trace(source, x=F34)
    (hazard,) = t.hazards
    assert hazard.line == 2 and "decimals is passed positionally" in hazard.message


@pytest.mark.parametrize("source, x", [
    ("y = x * 2.0 + 1", F34), ("y = x.T", F34), ("y = x", F34), ("y = np.asarray(x)", F34), ("y = x[0:2]", F34),
    ("y = x.T", F22), ("y = x + x.astype(np.float64)", F34), ("y = np.maximum(x, 0)", I34),
    ("y = np.argmax(x, axis=None, keepdims=True)", F34), ("y = np.sort(x, axis=None)", F4),
    ("y = x.sum(axis=0, keepdims=True) - x.mean()", F34), ("y = a & b", {"a": B34, "b": B34}),
    ("y = np.linspace(a, b, 5)", {"a": np.float32(0.0), "b": np.float32(1.0)}),
])
def test_common_calls_leapp_gets_right_are_clean(source, x):
    inputs = x if isinstance(x, dict) else {"x": x}
    inputs = {k: np.asarray(v) for k, v in inputs.items()}
    assert [h for h in trace(source, **inputs).hazards if MARK in h.message] == []


def test_find_looks_up_by_name_first():
    assert leapp_defects.find("np.interp", {}, None) is None       # no defect for the name: nothing runs
    x = np.ones(3, np.float32)
    assert leapp_defects.find("np.add", {"x0": x, "x1": 1.5}, x + 1.5) is None
    hit = leapp_defects.find("np.add", {"x0": x, "x1": np.array(1.5)}, x + np.array(1.5))
    assert hit is not None and hit.defect.cause == "torch-dtype"


@pytest.mark.parametrize("first, second", [("o[..., :3] -= c", "p -= c"), ("p -= c", "o[..., :3] -= c")])
def test_an_augmented_assignment_into_a_subscript_keeps_the_targets_dtype_in_leapp(first, second):
    # measured with LEAPP 0.7.2: o[..., :3] -= c (float32 o, float64 c) validates and returns float32, error 0;
    # p -= c returns float64 and fails replay validation. Both calls have one signature: judged at every call.
    source = (f"o = x.copy()\np = x[:, :3].copy()\n{first}\n{second}\ny = o[:, :3] + p")
    t = trace(source, x=F34, c=np.array([0.1, 0.2, 0.3]))
    found = [(h.line, h.severity) for h in t.hazards if MARK in h.message]
    assert found == [(3 if first.startswith("p") else 4, "error")], t.hazards
    (hazard,) = [h for h in t.hazards if MARK in h.message]
    assert "c.astype(o.dtype)" in hazard.fix
    _graph_matches_numpy(t, {"x": F34, "c": np.array([0.1, 0.2, 0.3])})
    t = trace("o = x.copy()\no[..., :3] -= c\ny = o", x=F34, c=np.array([0.1, 0.2, 0.3]))
    assert t.hazards == [] and t.ok


@pytest.mark.parametrize("value, clean", [
    (np.arange(12, dtype=np.uint16).reshape(3, 4), False), (np.arange(12, dtype=np.uint32).reshape(3, 4), False),
    (np.arange(12, dtype=np.complex64).reshape(3, 4), False), (torch.arange(12).reshape(3, 4).to(torch.uint16), False),
    (np.arange(12, dtype=np.uint8).reshape(3, 4), True), (np.arange(12, dtype=np.int16).reshape(3, 4), True),
    (np.arange(12, dtype=np.float16).reshape(3, 4), True), (torch.arange(12).reshape(3, 4).to(torch.int8), True),
])
def test_an_input_of_a_dtype_leapp_cannot_name_is_an_error_in_leapp(value, clean):
    # measured with LEAPP 0.7.2: input_tensors of a uint16 depth image raises KeyError: dtype('uint16')
    cell = ("d = annotate.input_tensors('node', {'d': D})\ny = d * 2\n"
            "annotate.output_tensors('node', {'y': y}, export_with='jit')\n")
    for profile, severity in (("leapp", "error"), ("full", "warning")):
        t = ln.trace_cell(cell, {"np": np, "torch": torch, "D": value}, profile=profile)
        found = [(h.line, h.severity, _cause(h)) for h in t.hazards if MARK in h.message]
        assert found == ([] if clean else [(1, severity, "tensor-dtype"), (3, severity, "tensor-dtype")]), t.hazards
        if not clean:
            assert ".astype(np." in t.hazards[0].fix or "np.real(z)" in t.hazards[0].fix
        assert t.probe(n=4, seed=0).passed
