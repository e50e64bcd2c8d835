"""Random programs built from the lookup, traced in ``full`` or ``leapp`` and held to NumPy on fresh inputs
(hypothesis).

A program is a few lines over one or two input arrays: element-wise ufuncs (unary, binary with a
broadcastable array or a Python number, signed zeros and ones among them), reductions with axis/keepdims, shape
ops (``np.clip`` and ``np.where`` with drawn numbers), indexing with negative steps, index arrays and masks, casts,
and copies written in place, over 0-d, empty and broadcastable shapes and the dtypes bool, int8-int64, uint8,
float16/32/64; half of the programs of two lines or more run three times as a loop body. Each program is traced
on one draw of its inputs and checked on another, so a value baked at trace time cannot pass: the graph must equal
NumPy in value, shape and dtype, or the trace must carry an error hazard that names its line. Each is traced
twice: the second trace comes from the recording cache (a re-run cell), and the cache is process-wide, so programs
also replay what earlier programs recorded.

The default (CI) profile runs 1000 derandomized examples (a few seconds); ``HYPOTHESIS_PROFILE=dev`` runs
20000 random ones.
Each shrunk failure found so far is a regression test at the end of this file.
"""

from __future__ import annotations

import os
import warnings
from typing import Any

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import leapp_notebook as ln

settings.register_profile("ci", max_examples=1000, deadline=None, derandomize=True, database=None,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
settings.register_profile("dev", max_examples=20000, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
PROFILE = settings.get_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci")
                               if os.environ.get("HYPOTHESIS_PROFILE") in ("ci", "dev") else "ci")

DTYPES = ("bool", "int8", "int16", "int32", "int64", "uint8", "float16", "float32", "float64")
SHAPES = [(), (0,), (3,), (1, 3), (2, 3), (3, 1), (2, 0), (2, 1, 3), (4,)]
UNARY = ["np.negative", "np.absolute", "np.square", "np.sqrt", "np.exp", "np.log1p", "np.sin", "np.floor",
         "np.ceil", "np.sign", "np.logical_not", "np.invert", "np.isnan", "np.rint", "np.tanh", "np.positive",
         "np.cbrt", "np.reciprocal", "np.trunc", "np.isfinite"]
BINARY = ["+", "-", "*", "/", "//", "%", "**", ">", "<=", "==", "&", "|", "^", "np.maximum", "np.minimum",
          "np.arctan2", "np.hypot", "np.fmod", "np.copysign", "np.logaddexp", "np.left_shift", "np.right_shift",
          "np.fmax", "np.heaviside"]
REDUCTIONS = ["np.sum", "np.prod", "np.mean", "np.max", "np.min", "np.any", "np.all", "np.std", "np.var",
              "np.argmax", "np.argmin", "np.cumsum", "np.median", "np.ptp", "np.count_nonzero"]
SHAPE_OPS = ["{v}.reshape(-1)", "{v}.T", "np.flip({v})", "np.expand_dims({v}, 0)", "np.squeeze({v})",
             "np.concatenate([{v}, {v}], axis=-1)", "np.stack([{v}, {v}])", "np.moveaxis({v}, 0, -1)",
             "np.atleast_2d({v})", "np.ravel({v})", "np.roll({v}, 1)", "np.tile({v}, 2)", "np.sort({v})",
             "np.cumulative_sum({v}, axis=0)", "np.where({v} > 0, {v}, 0)", "np.clip({v}, -1, 2)",
             "np.clip({v}, {lo}, {hi})", "np.where({v} > 0, {v}, {k})", "np.where({v} < 1, {k}, {v})",
             "np.clip({v}, {lo}, None)", "np.clip({v}, None, {hi})", "np.full_like({v}, {k})",
             "np.round({v}, {d})", "np.nan_to_num({v} / 0.0, nan={k}, posinf={hi}, neginf={lo})",
             "np.maximum({v}, {k}) - np.minimum({v}, {k})",
             "np.matrix_transpose(np.atleast_2d({v}))", "np.unstack(np.atleast_1d({v}))[0]",
             "np.pad(np.atleast_1d({v}), 1, constant_values={k})", "np.power({v}, {k})", "np.isclose({v}, {k})",
             "np.diff(np.atleast_1d({v}))", "np.cumprod({v})", "np.mean({v} > {k})", "np.sum({v} * {k}, axis=-1)",
             "np.linalg.norm(np.atleast_1d({v}), axis=-1)", "np.abs({v} - {k}) <= {hi}", "np.square({v}) + {k}",
             "np.sum({v}, axis=-1, where={v} > {k})", "np.max({v}, initial={k})",
             "np.min({v}, axis=0, where={v} != 0, initial={hi})", "np.mean({v}, where={v} > 0)",
             "np.prod({v}, axis=-1, initial={k})", "np.any({v}, where={v} < {k})"]
INDEXING = ["{v}[::-1]", "{v}[1::2]", "{v}[::-2]", "{v}[..., ::-1]", "{v}[{v} > 0]", "{v}[..., 0]",
            "{v}[np.array([0, -1])]", "{v}[np.array([2, 0, 1, 0]) % max({v}.shape[0], 1)]", "{v}[None]",
            "{v}[-1:]", "{v}[:, ::-1]", "{v}[np.array([True, False, True])]"]
VIEW_KEYS = ["[:1]", "[1:]", "[::2]", "[1::2]", "[-1]", "[0]", "[..., :1]", "[..., 1:]", "[...]", "[:]", "[..., -1]",
             "[:, 0]", "[::-1]"]
WRITE_ONLY_KEYS = ["[{t} > 0]", "[np.array([0])]"]
# Python numbers a line may use: a number is part of a replay key by value (a zero by its sign), and a recording is
# also kept for any number of its type; zeros and ones of both signs once shared a key
NUMBERS = ["2", "1.5", "True", "-3", "0.0", "-0.0", "1.0", "-1.0", "0", "1", "-0.25", "2**31", "-(2**40)", "1e300",
           "False"]
CASTS = ["bool", "int8", "int32", "int64", "uint8", "float16", "float32", "float64"]


def _draw_array(rng: np.random.Generator, shape: tuple[int, ...], dtype: str) -> Any:
    """An input of ``shape`` and ``dtype`` (``torch.<dtype>``: a tensor of it, drawn as the array is)."""
    if dtype.startswith("torch."):
        return torch.from_numpy(np.ascontiguousarray(_draw_array(rng, shape, dtype[len("torch."):])))
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return np.asarray(rng.random(shape) < 0.5)  # a 0-d array, not a NumPy scalar
    if dt.kind in "iu":
        lo = 0 if dt.kind == "u" else -6
        return rng.integers(lo, 7, size=shape).astype(dt)
    values = rng.uniform(-4, 4, size=shape)
    if values.size >= 3 and rng.random() < 0.3:
        values.reshape(-1)[rng.choice(values.size, 2, replace=False)] = [0.0, -0.5]
    return values.astype(dt)


@st.composite
def programs(draw: Any) -> tuple[str, dict[str, tuple[tuple[int, ...], str]]]:
    """A program (source text) and its inputs' (shape, dtype)."""
    shape = draw(st.sampled_from(SHAPES))
    inputs = {"x": (shape, draw(st.sampled_from(DTYPES)))}
    if draw(st.booleans()):
        # a second input of a broadcastable shape
        other = draw(st.sampled_from([shape, shape[-1:], (), (1,) + shape[1:] if shape else ()]))
        inputs["w"] = (tuple(other), draw(st.sampled_from(DTYPES)))
    names = list(inputs)
    lines = []
    for i in range(draw(st.integers(1, 4))):
        v = draw(st.sampled_from(names))
        family = draw(st.sampled_from(["unary", "binary", "reduce", "shape", "index", "cast", "in-place",
                                       "view-write"]))
        if family == "unary":
            expr = f"{draw(st.sampled_from(UNARY))}({v})"
        elif family == "binary":
            op = draw(st.sampled_from(BINARY))
            rhs = draw(st.sampled_from(names + NUMBERS))
            expr = f"{op}({v}, {rhs})" if op.startswith("np.") else f"({v} {op} {rhs})"
        elif family == "reduce":
            fn = draw(st.sampled_from(REDUCTIONS))
            axis = draw(st.sampled_from(["None", "0", "-1", "(0,)", "()"]))
            keep = draw(st.booleans())
            if fn in ("np.argmax", "np.argmin", "np.cumsum"):
                axis = "None" if axis in ("(0,)", "()") else axis
            if fn == "np.cumsum":
                expr = f"{fn}({v}, axis={axis})"
            else:
                expr = f"{fn}({v}, axis={axis}, keepdims={keep})"
        elif family == "in-place":
            # a copy written in place: the replay key of what reads it afterwards must follow the write; by an
            # operator, or through out= of a function or method (which the lookup may not record)
            form = draw(st.sampled_from(["op", "op", "op", "np.clip({t}, -1, 2, out={t})", "{t}.clip(-1, 2, out={t})",
                                         "np.round({t}, out={t})", "np.cumsum({t}, axis=-1, out={t})"]))
            if form == "op":
                op = draw(st.sampled_from(["+=", "-=", "*=", "/=", "//=", "|=", "&="]))
                write = f"t{i} {op} {draw(st.sampled_from(names + NUMBERS))}"
            else:
                write = form.format(t=f"t{i}")
            expr = f"{v} * 1; {write}; t{i} = t{i} - {draw(st.sampled_from(NUMBERS))}"
        elif family == "view-write":
            # a view of a copy taken before a write into part of the copy (the same bytes, others, or ones the key
            # cannot name), then read: it follows the graph only where the write missed its bytes
            taken, written = draw(st.sampled_from(VIEW_KEYS)), draw(st.sampled_from(VIEW_KEYS + WRITE_ONLY_KEYS))
            write = draw(st.sampled_from(["{t}{k} = {n}", "{t}{k} *= {n}", "{t}{k} += {t}{k}",
                                          "np.multiply({t}{k}, {n}, out={t}{k})"]))
            write = write.format(t=f"t{i}", k=written.format(t=f"t{i}"), n=draw(st.sampled_from(NUMBERS)))
            expr = f"{v} * 1; h{i} = t{i}{taken}; {write}; t{i} = h{i} * 1"
        elif family == "shape":
            expr = draw(st.sampled_from(SHAPE_OPS)).format(v=v, lo=draw(st.sampled_from(NUMBERS)),
                                                           hi=draw(st.sampled_from(NUMBERS)),
                                                           k=draw(st.sampled_from(NUMBERS)),
                                                           d=draw(st.sampled_from(["0", "1", "2", "-1"])))
        elif family == "index":
            pattern = draw(st.sampled_from(INDEXING))
            expr = pattern.format(v=v)
        else:
            to = draw(st.sampled_from(CASTS))
            # float -> int casts of nan/inf/out-of-range values are undefined (NumPy and torch differ)
            expr = f"np.nan_to_num(np.clip({v}, -100, 100)).astype(np.{to})" if to not in ("bool",) and \
                to[0] in "iu" else f"{v}.astype(np.{to})"
        target = f"t{i}"
        lines.append(f"{target} = {expr}")
        names.append(target)
        if family == "index" and "> 0]" in pattern:
            # A masked selection has a data-dependent length; the session's slicing of such a value is a
            # known engine defect (test_known_engine_defect_below), so a mask ends the program.
            break
    if len(lines) > 1 and draw(st.booleans()):
        # the lines run three times, as a loop body: each call after the first is replayed within the trace
        lines = ["for _step in range(3):", *[f"    {line}" for line in lines]]
    lines.append(f"y = {names[-1]}")
    return "\n".join(lines), inputs


def _run(source: str, inputs: dict[str, np.ndarray], objects: dict[str, Any] | None = None) -> Any:
    namespace: dict[str, Any] = {"np": np, **(objects or {}), **{k: _copy(v) for k, v in inputs.items()}}
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        exec(source, namespace)
    return _as_array(namespace["y"])


def _copy(value: Any) -> Any:
    return value.clone() if isinstance(value, torch.Tensor) else value.copy()


def _as_array(value: Any) -> np.ndarray:
    """A program's result as a NumPy array: a tensor's values and dtype (a module's output is detached)."""
    if isinstance(value, torch.Tensor):
        return value.detach().numpy()
    return np.asarray(value)


# The float precision a value may have passed through: NumPy computes bool/int8/uint8 in float16 loops and
# int16 in float32 ones (np.sqrt(int8) is float16), and the program may cast down.
_PRECISION = {"bool": "float16", "int8": "float16", "uint8": "float16", "int16": "float32", "float16": "float16",
              "float32": "float32"}
_TOL = {"float16": 1e-2, "float32": 1e-4, "float64": 1e-9}


def _tolerance(source: str, inputs: dict[str, np.ndarray]) -> float:
    """rtol for the least precise float the program may compute in: its inputs' dtypes and its casts (a float32
    ulp of arctan2 still shows after ``x + t`` promotes to float64)."""
    kinds = [_PRECISION.get(_as_array(a).dtype.name, "float64") for a in inputs.values()]
    kinds += [_PRECISION[name] for name in _PRECISION if f"np.{name})" in source]
    return max(_TOL[k] for k in kinds) if kinds else _TOL["float64"]


def _same(want: np.ndarray, have: np.ndarray, rtol: float) -> bool:
    if have.shape != want.shape or have.dtype != want.dtype:
        return False
    if want.dtype.kind not in "fc":
        if np.array_equal(have, want) or want.dtype.kind not in "iu":
            return bool(np.array_equal(have, want))
        # An integer beyond 2**24 may be a float32 cast (``(np.tanh(x) * 2**31).long()``): the float's last bit, which
        # NumPy and torch may round apart (tanh to one ulp), is worth 128 there. Such integers compare as that float
        # did; the others exactly.
        big = np.abs(want.astype(np.float64)) > 2.0 ** 24
        return bool(big.any() and np.array_equal(have[~big], want[~big]) and np.allclose(
            have[big].astype(np.float64), want[big].astype(np.float64), rtol=max(rtol, _TOL["float32"]), atol=0))
    rtol = max(rtol, _TOL.get(want.dtype.name, 1e-9))
    finite = want[np.isfinite(want)]
    scale = float(np.max(np.abs(finite), initial=1.0)) if finite.size else 1.0
    with np.errstate(all="ignore"):
        return bool(np.allclose(have, want, rtol=rtol, atol=rtol * scale, equal_nan=True))


def check_program(source: str, spec: dict[str, tuple[tuple[int, ...], str]], seed: int = 0,
                  profile: str = "full", objects: dict[str, Any] | None = None, *,
                  declared: tuple[str, ...] = ()) -> str:
    """Trace ``source`` on one draw and compare the graph with NumPy on another: "faithful", "reported" or
    "numpy-refuses" (NumPy, or torch, refuses to run it); raises AssertionError on a silent difference. The program
    is traced twice, so the second trace is made from the recording cache (what a re-run cell gets), and both
    graphs are checked. ``objects``: more names the program reads (``torch``, modules), the same objects in the
    eager runs and the traces. ``declared``: the cell declares these nodes itself (``annotate``), each taking the
    one output of the one before (the first takes the inputs); otherwise the trace names the inputs and ``y``."""
    rng = np.random.default_rng(seed)
    trace_inputs = {k: _draw_array(rng, s, d) for k, (s, d) in spec.items()}
    fresh = {k: _draw_array(rng, s, d) for k, (s, d) in spec.items()}
    eager_objects = {**(objects or {}), "annotate": ln.annotate} if declared else objects
    try:
        _run(source, trace_inputs, eager_objects)
        want = _run(source, fresh, eager_objects)
    except Exception:  # noqa: BLE001 - NumPy refuses the program (no loop for the dtype, bad shape)
        return "numpy-refuses"
    outcomes = set()
    for run in ("first trace", "re-trace"):
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            copies = {k: _copy(v) for k, v in trace_inputs.items()}
            try:
                trace = ln.trace_cell(source, {"np": np, **(objects or {}), **copies}, profile=profile) \
                    if declared else ln.trace_cell(source, {"np": np, **(objects or {})}, inputs=copies,
                                                   outputs=["y"], profile=profile)
            except ln.TraceError as exc:  # a node declared wrongly (a NumPy scalar as its input): said at its line
                assert declared and str(exc).startswith("line "), (source, exc)
                outcomes.add("reported")
                continue
        assert list(trace.nodes) == list(declared or ["node"]), (source, list(trace.nodes))
        errors = [h for h in trace.hazards if h.severity == "error"]
        if errors:
            assert all(h.line is not None for h in errors), (source, errors)
            outcomes.add("reported")
            continue
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            values = tuple(fresh.values())
            for node in trace.nodes.values():  # the nodes chained, as a pipeline runs them
                values = node(*values)
            (have,) = values
        have = _as_array(have)
        assert _same(want, have, _tolerance(source, fresh)), (
            f"{run}: {source}\ninputs {spec}\ngraph {have.dtype}{have.shape} {have!r}\n"
            f"NumPy {want.dtype}{want.shape} {want!r}")
        outcomes.add("faithful")
    assert len(outcomes) == 1, f"{source}: the re-trace reports what the first trace did not, or the reverse"
    return outcomes.pop()


OUTCOMES: dict[str, int] = {}
PROGRAMS: set[str] = set()


@pytest.mark.filterwarnings("ignore")
@PROFILE
@given(programs(), st.sampled_from(["full", "leapp"]))
def test_random_program_graph_equals_numpy_or_is_reported(program: tuple[str, dict[str, Any]], profile: str) -> None:
    source, spec = program
    outcome = check_program(source, spec, profile=profile)
    assume(outcome != "numpy-refuses")
    PROGRAMS.add(source + repr(spec))
    OUTCOMES[outcome] = OUTCOMES.get(outcome, 0) + 1


def test_the_checker_catches_a_silently_wrong_graph(monkeypatch: pytest.MonkeyPatch) -> None:
    """A lookup row made wrong on purpose (sin recorded as cos) fails the property check."""
    import dataclasses

    from leapp_notebook.tracing import ops

    wrong = dataclasses.replace(ops.UFUNC_ROWS[np.sin], build=ops.elementwise(torch.cos))
    monkeypatch.setitem(ops.UFUNC_ROWS, np.sin, wrong)
    with pytest.raises(AssertionError):
        check_program("t0 = np.sin(x)\ny = t0", {"x": ((2, 3), "float64")})


def test_the_checker_accepts_a_reported_program() -> None:
    source = "t0 = np.quantile(x, 0.5, method='inverted_cdf', weights=np.ones(4))\ny = t0"
    assert check_program(source, {"x": ((4,), "float32")}) == "reported"


def test_a_reversed_slice_of_a_masked_selection_follows_its_length() -> None:
    # the whole-axis reversal is recorded as flip-then-slice, which holds for any length of the selection
    assert check_program("t1 = x[x > 0]\nt2 = t1[::-1]\ny = t2", {"x": ((3,), "float16")}) in ("faithful", "reported")
    assert check_program("t1 = x[x > 0]\nt2 = t1[::-2]\ny = t2", {"x": ((5,), "float32")}) in ("faithful", "reported")


# ------------------------------------------------------------------ shrunk failures, kept as regressions
@pytest.mark.parametrize("source, spec", [
    # a NumPy scalar's ** is np.power (bool ** 2 is int64); the tracer holds the scalar as a 0-d array, whose ** 2
    # NumPy turns into np.square (int8): the traced cell computed another dtype than the eager one
    ("t0 = (x + x)\nt1 = (t0 ** 2)\ny = t1", {"x": ((), "bool")}),
    ("t0 = (x + x)\nt0 **= 2\ny = t0", {"x": ((), "bool")}),
    # np.clip of uint8 by -100: NumPy clips with the dtype's range; torch wrapped the bound to 156
    ("t0 = np.nan_to_num(np.clip(x, -100, 100)).astype(np.int8)\ny = t0", {"x": ((), "uint8")}),
    # torch.sign(nan) is 0, NumPy's nan
    ("t0 = np.sqrt(x)\nt1 = np.sign(t0)\ny = t1", {"x": ((3,), "int8")}),
    # np.cbrt of int8 computes in float16: torch's float16 pow was 1 ulp off NumPy's (float32, rounded once)
    ("t0 = np.cbrt(x)\nt3 = t0.astype(np.float32)\ny = t3", {"x": ((3,), "int8")}),
    # an empty integer array to a negative power: NumPy gives an empty array, torch raised while tracing
    ("t2 = (x ** -3)\ny = t2", {"x": ((0,), "bool")}),
    # torch.heaviside(nan, h) is 0, NumPy's nan
    ("t0 = np.sqrt(x)\nt1 = np.heaviside(t0, x)\ny = t1", {"x": ((3,), "int8")}),
    # uint8 > -3: NumPy compares with the int's true value; torch wrapped -3 to 253
    ("t0 = (x > -3)\ny = t0", {"x": ((), "uint8")}),
    # a reshape to the trace-time length of a masked selection raised on other inputs
    ("t0 = x[x > 0]\nt1 = t0.reshape(-1)\ny = np.atleast_2d(t1)", {"x": ((3,), "float32")}),
    # np.where of uint8 and the int -3: NumPy casts it to 253; the builder's conversion raised, ending the trace
    ("t0 = np.where(x > 0, x, -3)\ny = t0", {"x": ((), "uint8")}),
    ("t0 = np.where(x < 1, 300, x)\ny = t0", {"x": ((2, 3), "int8")}),
])
def test_regression(source: str, spec: dict[str, Any]) -> None:
    assert check_program(source, spec) in ("faithful", "reported")


@pytest.mark.parametrize("source, spec", [
    # int - True: torch refuses to subtract a bool, so the call was refused with an error; NumPy computes with 1
    ("t0 = (x - True)\ny = t0", {"x": ((3,), "int64")}),
    # a NumPy scalar written in place is a new value (x * 1 of a 0-d array is one): the 0-d array the tracer holds
    # it in was written in place, raising a casting error, failing to broadcast, or changing another name's value
    ("t1 = x * 1; t1 -= True; t1 = t1 - 1.5\ny = t1", {"x": ((), "bool")}),
    ("t1 = x * 1; t1 += 1.5; t1 = t1 - 2\ny = t1", {"x": ((), "bool")}),
    ("t0 = np.sum(x, axis=None, keepdims=False)\nt3 = t0 * 1; t3 += x; t3 = t3 - 2\ny = t3", {"x": ((3,), "float32")}),
    ("t0 = np.sum(x)\nt1 = t0\nt0 += 1\ny = t1 * 1", {"x": ((3,), "float64")}),
    ("t0 = np.sum(x)\nt1 = t0\nt0 //= 2\ny = t1 - t0", {"x": ((3,), "int64")}),
    # a bool array clipped by a bool: torch.clamp has no bool kernel (the graph raised, under a warning)
    ("t2 = np.clip(x, None, True)\ny = t2", {"x": ((), "bool")}),
    # a number beyond float16's range: NumPy casts it to inf first (0 * 2**31 is nan), torch computed with it
    ("t0 = (w * 2**31)\ny = t0", {"x": ((3,), "bool"), "w": ((3,), "float16")}),
    ("t0 = (x * 1e39)\ny = t0", {"x": ((2, 3), "float32")}),  # the same cast in float32 (torch agreed there)
    # np.median of [inf]: NumPy takes the middle value (the mean of the middle two); torch.quantile's interpolation
    # made nan of inf - inf
    ("t0 = (x / 0.0)\nt1 = np.median(t0, axis=None, keepdims=False)\ny = t1", {"x": ((), "bool")}),
    ("t0 = (x / 0.0)\nt1 = np.median(t0, axis=-1)\ny = t1", {"x": ((2, 3), "int8")}),
    # np.isclose(x16, -(2**40)): NumPy checks a Python b's finiteness as a float64 (finite), where the graph checked
    # b cast to float16 (-inf); NumPy says every x is close (the tolerance, cast to float16, is inf)
    ("t3 = np.isclose(x, -(2**40))\ny = t3", {"x": ((3,), "float16")}),
    # ... also where the recording for any float (made by x * 2.0) was taken for a float beyond the range
    ("t0 = (x * 2.0)\nt1 = (x * 0.0)\nt2 = (t1 * 1e6)\ny = t2", {"x": ((4,), "float16")}),
])
def test_regression_recorded_faithfully(source: str, spec: dict[str, Any]) -> None:
    """Shrunk failures the graph now records as NumPy computes them (no error hazard in their stead)."""
    assert check_program(source, spec) == "faithful"


def test_an_array_written_in_place_stays_in_place() -> None:
    """Only a NumPy scalar is rebound by ``x += y``: a 0-d *array* (an input, ``np.asarray``) and any other array
    are written in place, so another name for the same array sees the write, as in NumPy."""
    assert check_program("t0 = x * 1\nt1 = t0\nt0 += 2\ny = t1 * 1", {"x": ((3,), "float64")}) == "faithful"
    assert check_program("t0 = np.asarray(x)\nt1 = t0\nt0 += 2\ny = t1 * 1", {"x": ((), "float64")}) in (
        "faithful", "reported")
