"""A plain table reduced under a traced mask in its method form (``W.sum(where=f > 1.0)``, ``np.add.reduce(W,
where=m)``), and ``np.full`` / ``np.full_like`` of a traced fill value: what the graph computes and what the hazards
name."""

import numpy as np
import pytest

import leapp_notebook as ln
from leapp_notebook.tracing import stores

W = np.arange(6, dtype=np.float32).reshape(2, 3)
H = np.array([[0.9, 0.2, 0.7], [0.1, 0.6, 0.4]], np.float32)


def _trace(body, profile, namespace=None):
    return ln.trace_cell("f = h * 2.0\n" + body, {"np": np, "W": W, **(namespace or {})}, inputs={"h": H},
                         outputs=["y"], profile=profile)


def _agrees_on_fresh_inputs(t, count=6):
    rng = np.random.default_rng(7)
    for _ in range(count):
        fresh = rng.uniform(0.0, 1.0, H.shape).astype(np.float32)
        eager = np.asarray(t.run_eager({"node": {"h": fresh}})["node"]["y"])
        got = np.asarray(t.nodes["node"](fresh)[0])
        if eager.shape != got.shape or not np.allclose(eager.astype(np.float64), got.astype(np.float64),
                                                       equal_nan=True):
            return False
    return True


def _summary(t):
    return sorted((h.kind, h.severity, h.line) for h in t.hazards)


METHODS = [  # (the method form, the function form the cell could have written)
    ("y = h * W.sum(where=f > 1.0, keepdims=True)", "y = h * np.sum(W, where=f > 1.0, keepdims=True)"),
    ("y = h * W.sum(axis=0, where=f > 1.0)", "y = h * np.sum(W, axis=0, where=f > 1.0)"),
    ("y = h - W.mean(where=f > 1.0, keepdims=True)", "y = h - np.mean(W, where=f > 1.0, keepdims=True)"),
    ("y = h * W.prod(1, where=f > 1.0, keepdims=True)", "y = h * np.prod(W, 1, where=f > 1.0, keepdims=True)"),
    ("y = h + W.max(where=f > 1.0, initial=-1.0, keepdims=True)",
     "y = h + np.max(W, where=f > 1.0, initial=-1.0, keepdims=True)"),
    ("y = h + W.min(axis=1, where=f > 1.0, initial=9.0, keepdims=True)",
     "y = h + np.min(W, axis=1, where=f > 1.0, initial=9.0, keepdims=True)"),
    ("y = h * W.any(where = f > 1.0, keepdims=True)", "y = h * np.any(W, where = f > 1.0, keepdims=True)"),
    ("y = h * W.all(axis=0, where=f > 1.0, keepdims=True)", "y = h * np.all(W, axis=0, where=f > 1.0, keepdims=True)"),
]


def _recorded_in_full(t, profile):
    """No output baked; in ``full`` no error at all, and the probe passes."""
    assert not [h for h in t.hazards if h.kind == "untraced-output"]
    if profile == "full":
        assert not [h for h in t.hazards if h.severity == "error"], t.hazards
        assert t.probe(n=8, seed=0).passed


@pytest.mark.parametrize("profile", ["full", "leapp"])
@pytest.mark.parametrize("method, function", METHODS)
def test_a_tables_reduction_under_a_traced_mask_is_its_function_form(method, function, profile):
    """``W.sum(where=f > 1.0)`` of a plain W: NumPy reads where= in C (or hands it to the ufunc's reduce, which took
    the mask for a constant), so the masked sum was a constant, silently wrong for every other input (the function
    form was fixed before). It is now NumPy's function of the same name: the masked reduction is in the graph, with
    the function form's own hazards at the line."""
    t = _trace(method, profile)
    assert _agrees_on_fresh_inputs(t), t.nodes["node"].graph.code
    assert _summary(t) == _summary(_trace(function, profile))
    _recorded_in_full(t, profile)


@pytest.mark.parametrize("profile", ["full", "leapp"])
@pytest.mark.parametrize("body", ["y = h * np.add.reduce(W, axis=None, where=f > 1.0, keepdims=True)",
                                  "y = h + np.maximum.reduce(W, axis=1, where=f > 1.0, initial=0.0, keepdims=True)",
                                  "y = h * table().sum(where=f > 1.0, keepdims=True)"])
def test_a_ufunc_reduce_of_a_plain_array_under_a_traced_mask_follows_the_mask(body, profile):
    """``np.add.reduce(W, where=m)``, and a method of a table the cell does not name (``table().sum(where=m)``):
    NumPy hands the reduce to the mask's hook, which recorded it only when the reduced array was traced: a constant.
    The mask's builder records it."""
    t = _trace(body, profile, {"table": lambda: W})
    assert _agrees_on_fresh_inputs(t)
    _recorded_in_full(t, profile)


@pytest.mark.parametrize("profile", ["full", "leapp"])
@pytest.mark.parametrize("method", ["y = h * W.std(where=f > 1.0, keepdims=True)",
                                    "y = h * W.var(axis=1, where=f > 1.0, keepdims=True)"])
def test_a_masked_reduction_the_lookup_refuses_is_an_error_at_its_line(method, profile):
    """np.std / np.var refuse where= (not in the lookup): the method form is that error at its line, as the function
    form is, and the probe flags the baked result."""
    t = _trace(method, profile)
    errors = [h for h in t.hazards if h.severity == "error"]
    assert [(h.kind, h.line) for h in errors] == [("untraced-call", 2)], t.hazards
    assert "where=" in errors[0].message
    assert not t.probe(n=8, seed=0).passed


def test_the_method_routing_is_gated_on_where():
    """A cell without where= is not rewritten for its tables' reductions (it compiles from its text), nor are its
    reductions without where= in a cell that has one."""
    namespace = {"W": W}
    assert stores.tables("y = h * W.sum(axis=0)\nz = W.mean()", namespace) == frozenset()
    assert stores.tables("y = h * W.sum(where=h > 0)", namespace) == {"W"}
    code = stores.compile_cell("y = W.sum(axis=0) + W.sum(where=m)", "<t>", frozenset({"W"}))
    assert code.co_names.count(stores.FROM) == 1


# ----------------------------------------------------------------------------- np.full of a traced fill value

@pytest.mark.parametrize("body, call, line", [
    ("n = np.sum(h > 0.3)\ny = np.concatenate([h.ravel(), np.full(2, n)])", "np.full", 2),
    ("n = np.sum(h > 0.3)\nm = h * 1.0\ny = m * np.full((2, 3), n, dtype=np.float32)", "np.full", 3),
    ("y = h * np.full_like(W, np.max(h))", "np.full_like", 1),
])
def test_np_full_of_a_traced_fill_value_is_named_as_the_cell_calls_it(body, call, line):
    """``np.full(2, n)`` of a traced n is recorded as the fill broadcast to the shape; in ``leapp`` its hazard named
    ``np.broadcast_to``, a call the cell never made. It names the cell's call, LEAPP's own log line (NumPy copies the
    fill with np.copyto), and a rewrite LEAPP records. ``np.full_like(W, v)`` of a plain W was a baked np.copyto, in
    ``full`` too: it is recorded there now."""
    namespace = {"np": np, "W": W}
    t = ln.trace_cell(body, namespace, inputs={"h": H}, outputs=["y"], profile="leapp")
    [hazard] = [h for h in t.hazards if h.kind == "untraced-call"]
    assert (hazard.severity, hazard.line) == ("error", line)
    assert call in hazard.message and "broadcast_to" not in hazard.message + hazard.fix
    assert "numpy function copyto" in hazard.message
    assert f"rewrite {call} in traced operations" in hazard.fix and "zeros" in hazard.fix
    t = ln.trace_cell(body, namespace, inputs={"h": H}, outputs=["y"], profile="full")
    [hazard] = [h for h in t.hazards if h.kind == "untraced-call"]
    assert (hazard.severity, hazard.line) == ("warning", line) and call in hazard.message
    assert "broadcast_to" not in hazard.message + hazard.fix
    assert _agrees_on_fresh_inputs(t)


@pytest.mark.parametrize(("source", "writes"), [
    ("y = W.sum(where=m)", True), ("y = W.sum(where = m)", True), ("where=1", True),
    ("a.sum(axis=0,\n      where\t=m)", True), ("if where == 3:\n    pass", False), ("f(elsewhere=1)", False),
    ("y = np.where(a, b, c)", False), ("_where = 2", False),
])
def test_the_where_gate_reads_a_keyword_argument(source, writes):
    from leapp_notebook.tracing.stores import writes_where

    assert writes_where(source) is writes
