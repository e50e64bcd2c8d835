"""Random whole nodes: NumPy pre-processing, the crossing into torch (``torch.from_numpy``, ``torch.as_tensor``,
``torch.tensor``), torch ops and ``nn.Module`` calls, and back to NumPy (``.numpy()``, ``np.asarray``), traced in
``full`` or ``leapp`` and held to the eager run on fresh inputs (hypothesis), as test_property_programs.py holds
NumPy-only programs.

Each line draws a value of either kind and an operation of that kind: torch element-wise functions and operators
with tensors, arrays or Python numbers (signed zeros and ones among them), reductions with ``dim``/``keepdim``,
shape ops, ``clamp`` and ``where`` with numbers, indexing, casts, modules (ReLU, Softmax, Linear, a Sequential),
and in-place writes: to a clone, into part of a tensor a view of which was taken before, and to a tensor that
shares its memory with an array (``torch.from_numpy``), which the array then shows. Half of the programs of two
lines or more run three times as a loop body. The graph must equal the eager run in value, shape and dtype, or the
trace must carry an error hazard that names its line; each program is traced twice (the second from the recording
cache).

Cells of two and of three chained nodes (``chained_nodes``) add steps and writes between the nodes, values used by
a later node without declaring them, and a node that declares its input before the node before it closes.

The default (CI) profile runs 600 derandomized examples (300 two-node cells, 150 three-node ones);
``HYPOTHESIS_PROFILE=dev`` runs 20000 random ones of each.
Each shrunk failure found so far is a regression test at the end of this file.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import pytest
import torch
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from test_property_programs import DTYPES, NUMBERS, PROFILE, SHAPES, check_program

import leapp_notebook as ln

# The modules a program may call: made once, so that the eager runs and the traces call the same weights.
torch.manual_seed(0)
_LINEARS = {n: torch.nn.Linear(n, 2) for n in (1, 3)}
OBJECTS: dict[str, Any] = {
    "torch": torch, "F": torch.nn.functional,
    "relu": torch.nn.ReLU(), "softmax": torch.nn.Softmax(dim=-1), "policy": torch.nn.Sequential(
        torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 3)),
    "lin1": _LINEARS[1], "lin3": _LINEARS[3], "flatten": torch.nn.Flatten(0),
}

INTO_TORCH = ["torch.from_numpy({v})", "torch.as_tensor({v})", "torch.tensor({v})",
              "torch.from_numpy(np.ascontiguousarray({v}))", "torch.as_tensor({v}, dtype=torch.float32)",
              "torch.as_tensor({v}).float()", "torch.tensor([np.sum({v}), np.prod({v})])",
              "torch.as_tensor(np.sum({v}, axis=-1) * 2.0)"]
INTO_NUMPY = ["{v}.numpy()", "np.asarray({v})", "{v}.detach().numpy()", "{v}.numpy().astype(np.float64)",
              "{v}.cpu().numpy()", "np.asarray({v}, dtype=np.float32)", "np.array({v})"]
T_UNARY = ["torch.tanh", "torch.relu", "torch.abs", "torch.neg", "torch.sqrt", "torch.exp", "torch.sign",
           "torch.floor", "torch.sigmoid", "torch.square", "torch.logical_not", "torch.isnan", "torch.round",
           "torch.log1p", "torch.reciprocal", "torch.bitwise_not", "F.relu", "F.silu", "torch.trunc", "torch.sin"]
T_BINARY = ["+", "-", "*", "/", "//", "%", "**", ">", "<=", "==", "&", "|", "torch.maximum", "torch.minimum",
            "torch.atan2", "torch.remainder", "torch.fmod", "torch.add", "torch.mul", "torch.sub", "torch.div",
            "torch.pow", "torch.eq"]
T_REDUCE = ["{v}.sum()", "{v}.sum(dim=-1)", "{v}.mean(dim=0, keepdim=True)", "{v}.float().mean()",
            "{v}.amax(dim=-1)", "torch.cumsum({v}, dim=0)", "{v}.max()", "{v}.argmax(dim=-1)", "{v}.prod()",
            "{v}.any()", "{v}.all(dim=0)", "torch.sum({v}, dim=(0,), keepdim=True)", "{v}.min(dim=-1).values",
            "{v}.float().std()", "torch.count_nonzero({v})", "{v}.norm()"]
T_SHAPE = ["{v}.reshape(-1)", "{v}.flip(0)", "{v}.unsqueeze(0)", "{v}.transpose(0, -1)",
           "torch.cat([{v}, {v}], dim=-1)", "torch.stack([{v}, {v}])", "{v}.clamp(min={lo})",
           "torch.clamp({v}, {lo}, {hi})",
           "torch.where({v} > 0, {v}, {k})", "{v}.flatten()", "{v}.squeeze()", "{v}.roll(1)",
           "torch.zeros_like({v}) + {v}", "{v}.expand(2, *{v}.shape)", "{v}.clone()", "{v}.contiguous()",
           "{v}.view(-1)", "{v}.permute(*reversed(range({v}.dim())))", "torch.full_like({v}, {k})",
           "{v}.masked_fill({v} > 0, {k})", "torch.nan_to_num({v} / 0.0, nan={k}, posinf={hi}, neginf={lo})",
           "{v}.clamp(max={hi})"]
T_INDEX = ["{v}[1:]", "{v}[..., 0]", "{v}[None]", "{v}[{v} > 0]", "{v}[torch.tensor([0, -1])]", "{v}[-1:]",
           "{v}[..., 1::2]", "{v}[0]"]
T_CAST = ["{v}.to(torch.float32)", "{v}.float()", "{v}.double()", "{v}.long()", "{v}.int()", "{v}.bool()",
          "{v}.half()", "{v}.to(torch.uint8)", "{v}.to(torch.int16)", "{v}.type(torch.float64)"]
T_MODULE = ["relu({v})", "softmax({v}.float())", "lin1({v}.float())", "lin3({v}.float())", "policy({v}.float())",
            "flatten({v})", "F.softmax({v}.float(), dim=0)", "F.layer_norm({v}.float(), {v}.shape[-1:])"]
# in-place writes, on a line of their own after the value is made (``t{i}`` is the line's own name)
T_IN_PLACE = ["{v}.clone(); t{i}.add_({r})", "{v}.clone(); t{i} += {r}", "{v}.clone(); t{i}.mul_({r})",
              "{v}.clone(); t{i}[..., 0] = {r}", "{v}.clone(); t{i}.clamp_(min={r})", "{v}.clone(); t{i}.zero_()",
              "{v}.float(); t{i}.sub_({r}).div_(2)", "{v}.clone(); t{i}[t{i} > 0] = {r}",
              "{v}.clone(); t{i}.copy_({v} * 2)", "{v}.clone(); t{i}.masked_fill_(t{i} < 0, {r})",
              # through NumPy, into the tensor's own memory: the tensor shows the write
              "{v}.detach().numpy(); t{i} *= {r}; t{i} = {v} * 1",
              "{v}.detach()[..., :1].numpy(); t{i}[...] = {r}; t{i} = {v} + 0",
              # a view taken before a write into part of its tensor: the same bytes, others, or ones a key cannot
              # name (the view stays traced only where the write missed its bytes)
              "{v}.clone(); h{i} = t{i}[..., :1]; t{i}[..., 1:] = {r}; t{i} = h{i} * 1",
              "{v}.clone(); h{i} = t{i}[:1]; t{i}[1:] *= {r}; t{i} = h{i} + t{i}.sum()",
              "{v}.clone(); h{i} = t{i}[..., 1::2]; t{i}[..., ::2] += {r}; t{i} = h{i} * 1",
              "{v}.clone(); h{i} = t{i}[-1:]; t{i}[:-1].mul_({r}); t{i} = h{i} + 0",
              "{v}.clone(); h{i} = t{i}[..., 0]; t{i}[t{i} > 0] = {r}; t{i} = h{i} * 1"]
# a tensor sharing its memory with an array, written in place: the array shows the write
SHARED = ["torch.from_numpy({v}); t{i}.add_({r}); t{i} = {v} * 1",
          "torch.from_numpy({v}); t{i}.mul_({r}); t{i} = {v} + t{i}.numpy()",
          "torch.from_numpy({v}); t{i}[..., 0] = {r}; t{i} = np.sum({v}, axis=-1)",
          "torch.as_tensor({v}); t{i} += {r}; t{i} = {v} - 1",
          "torch.from_numpy({v}); t{i}.zero_(); t{i} = {v} * 1"]


def _inputs(draw: Any, shape: tuple[int, ...]) -> dict[str, tuple[tuple[int, ...], str]]:
    """A node's inputs' (shape, dtype): ``x``, and ``w`` one time in two; each a NumPy array, or a tensor (a dtype
    ``torch.<name>``) one time in four."""
    kind = st.sampled_from(["", "", "", "torch."])
    inputs = {"x": (shape, draw(kind) + draw(st.sampled_from(DTYPES)))}
    if draw(st.booleans()):
        other = draw(st.sampled_from([shape, shape[-1:], (), (1,) + shape[1:] if shape else ()]))
        inputs["w"] = (tuple(other), draw(kind) + draw(st.sampled_from(DTYPES)))
    return inputs


def _lines(draw: Any, kinds: dict[str, str], first: int, usable: list[str] | None = None) -> tuple[list[str], str]:
    """One to five lines ``t{first} = ...``, ``t{first + 1} = ...``, each an operation of the kind (``"np"`` or
    ``"torch"``) of a value drawn from ``usable`` (default: every name in ``kinds``) and the lines before it; the
    lines run three times as a loop one time in four, under ``no_grad``/``inference_mode`` one time in four.
    ``kinds`` gains each line's name and kind. Returns the lines and the last line's name."""
    names = list(usable if usable is not None else kinds)
    lines = []
    i = first
    for i in range(first, first + draw(st.integers(1, 5))):
        v = draw(st.sampled_from(names))
        number = st.sampled_from(NUMBERS)
        if kinds[v] == "np":
            # NumPy values: into torch, mostly (test_property_programs.py draws NumPy's own operations)
            family = draw(st.sampled_from(["into", "into", "into", "shared", "np"]))
            if family == "into":
                expr, kind = draw(st.sampled_from(INTO_TORCH)).format(v=v), "torch"
            elif family == "shared":
                expr, kind = draw(st.sampled_from(SHARED)).format(v=v, i=i, r=draw(number)), "np"
            else:
                rhs = draw(st.sampled_from(names + NUMBERS))
                expr, kind = f"np.tanh({v}) * {rhs}" if draw(st.booleans()) else f"np.maximum({v}, {rhs})", "np"
        else:
            family = draw(st.sampled_from(["unary", "binary", "reduce", "shape", "index", "cast", "module",
                                           "in-place", "numpy"]))
            kind = "torch"
            if family == "unary":
                expr = f"{draw(st.sampled_from(T_UNARY))}({v})"
            elif family == "binary":
                op = draw(st.sampled_from(T_BINARY))
                rhs = draw(st.sampled_from(names + NUMBERS))  # an array operand meets the tensor's own operator
                expr = f"{op}({v}, {rhs})" if op.startswith("torch.") else f"({v} {op} {rhs})"
            elif family == "reduce":
                expr = draw(st.sampled_from(T_REDUCE)).format(v=v)
            elif family == "shape":
                expr = draw(st.sampled_from(T_SHAPE)).format(v=v, lo=draw(number), hi=draw(number), k=draw(number))
            elif family == "index":
                pattern = draw(st.sampled_from(T_INDEX))
                expr = pattern.format(v=v)
            elif family == "cast":
                expr = draw(st.sampled_from(T_CAST)).format(v=v)
            elif family == "module":
                expr = draw(st.sampled_from(T_MODULE)).format(v=v)
            elif family == "in-place":
                expr = draw(st.sampled_from(T_IN_PLACE)).format(v=v, i=i, r=draw(st.sampled_from(names + NUMBERS)))
            else:
                expr, kind = draw(st.sampled_from(INTO_NUMPY)).format(v=v), "np"
        lines.append(f"t{i} = {expr}")
        kinds[f"t{i}"] = kind
        names.append(f"t{i}")
        if "> 0]" in expr:
            break  # a masked selection's data-dependent length ends the program (test_property_programs.py)
    if len(lines) > 1 and draw(st.booleans()):
        lines = ["for _step in range(3):", *[f"    {line}" for line in lines]]
    if draw(st.integers(0, 3)) == 0:  # a policy's call site: under no_grad (or inference_mode)
        block = draw(st.sampled_from(["torch.no_grad()", "torch.inference_mode()"]))
        lines = [f"with {block}:", *[f"    {line}" for line in lines]]
    return lines, f"t{i}"


def _kinds(inputs: dict[str, tuple[tuple[int, ...], str]]) -> dict[str, str]:
    return {name: "torch" if dtype.startswith("torch.") else "np" for name, (_, dtype) in inputs.items()}


@st.composite
def nodes(draw: Any) -> tuple[str, dict[str, tuple[tuple[int, ...], str]]]:
    """A whole node's program (source text) and its inputs' (shape, dtype)."""
    inputs = _inputs(draw, draw(st.sampled_from(SHAPES)))
    lines, last = _lines(draw, _kinds(inputs), 0)
    return "\n".join([*lines, f"y = {last}"]), inputs


# What a cell may do between two nodes, on the first node's output: a step no node records
BETWEEN = {"np": ["{n} = {v} * 2", "{n} = np.tanh({v})", "{n} = {v}[..., ::-1]"],
           "torch": ["{n} = {v} * 2", "{n} = torch.tanh({v})", "{n} = {v}.flip(-1)", "{n} = relu({v})"]}
# ... and a write into the first node's output through memory it shares, the name left as it is (node post then
# declares a value that is no longer what node pre output)
WRITES_BETWEEN = {"np": ["torch.from_numpy({v}).add_(1)", "{v}.view()[...] += 1"],
                  "torch": ["{v}.detach().numpy()[...] += 1", "{v}.detach().add_(1)"]}


@st.composite
def chained_nodes(draw: Any, names: tuple[str, ...] = ("pre", "post")) -> tuple[str, dict[str, Any]]:
    """A cell of nodes chained as LEAPP pipelines chain them: the first (``pre``) from the cell's inputs to its one
    output, each next one from the one before's output to its own, the last to ``y``. At each gap, one time in four
    a step runs on the output (recorded by no node) and the next node may use its result without declaring it, and
    one time in four the next node may also read earlier nodes' values without declaring them (``other-node``):
    both must be reported where they reach ``y``. One time in eight the output is written at the gap through memory
    it shares, and must be reported too; one time in eight the next node declares its input before the node before
    it declares that value its output. (A step between the nodes whose result the next node declares as its input
    is the split the hazards' fixes recommend, the deploying runtime's to compute: the chained graphs cannot be
    compared with the cell there, so it is not drawn.) The source declares the nodes itself (annotate); its inputs
    are the cell's names ``x``/``w``."""
    inputs = _inputs(draw, draw(st.sampled_from(SHAPES)))
    kinds = _kinds(inputs)
    declared = ", ".join(f'"{name}": {name}' for name in inputs)
    head = [f'x = annotate.input_tensors("{names[0]}", {{{declared}}})'] if len(inputs) == 1 else \
        [f'_pre = annotate.input_tensors("{names[0]}", {{{declared}}})', *[f'{n} = _pre["{n}"]' for n in inputs]]
    body, out = _lines(draw, kinds, 0)
    lines = [*head, *body]
    for k, node in enumerate(names[1:], 1):
        # a masked selection's data-dependent length ends a node's program; as the next node's input it would be
        # a shape that changes from run to run, which node inputs do not have
        assume(not any("> 0]" in line for line in body))
        lines.append(f'annotate.output_tensors("{names[k - 1]}", {{"mid": {out}}})')
        given = "m" if k == 1 else f"m{k}"
        declare = f'{given} = annotate.input_tensors("{node}", {{"mid": {out}}})'
        kinds[given] = kinds[out]
        usable = [given] if draw(st.integers(0, 3)) else list(kinds)  # earlier values too: used without declaring
        between = draw(st.integers(0, 7))
        if between < 2:
            step = "between" if k == 1 else f"between{k}"
            lines.append(draw(st.sampled_from(BETWEEN[kinds[out]])).format(n=step, v=out))
            kinds[step] = kinds[out]
            usable.append(step)
        elif between == 2:
            lines.append(draw(st.sampled_from(WRITES_BETWEEN[kinds[out]])).format(v=out))
        elif between == 3:
            # interleaved: the next node declares its input while the one before is still open, which then declares
            # the same value its output
            lines.insert(-1, declare)
            declare = None
        if declare is not None:
            lines.append(declare)
        body, out = _lines(draw, kinds, len(kinds), usable)
        lines += body
    lines += [f'annotate.output_tensors("{names[-1]}", {{"y": {out}}})', f"y = {out}"]
    return "\n".join(lines), inputs


def two_nodes() -> Any:
    """:func:`chained_nodes` of two nodes, ``pre`` and ``post``."""
    return chained_nodes(("pre", "post"))


def _property(programs: Any, examples: int, outcomes: dict[str, int], declared: tuple[str, ...] = ()) -> Any:
    """A property test over ``programs``: each drawn program, in either profile, is faithful or reported
    (check_program), tallied in ``outcomes``; ``examples`` derandomized in CI, the dev profile's count otherwise."""

    @pytest.mark.filterwarnings("ignore")
    @settings(PROFILE, max_examples=PROFILE.max_examples if os.environ.get("HYPOTHESIS_PROFILE") == "dev" else examples)
    @given(programs, st.sampled_from(["full", "leapp"]))
    def test(program: tuple[str, dict[str, Any]], profile: str) -> None:
        source, spec = program
        outcome = check_program(source, spec, profile=profile, objects=OBJECTS, declared=declared)
        assume(outcome != "numpy-refuses")
        outcomes[outcome] = outcomes.get(outcome, 0) + 1

    return test


OUTCOMES: dict[str, int] = {}
TWO_NODE_OUTCOMES: dict[str, int] = {}
test_random_node_graph_equals_the_eager_run_or_is_reported = _property(nodes(), 600, OUTCOMES)
test_random_two_node_cell_equals_the_eager_run_or_is_reported = _property(two_nodes(), 300, TWO_NODE_OUTCOMES,
                                                                          declared=("pre", "post"))
THREE_NODE_OUTCOMES: dict[str, int] = {}
test_random_three_node_cell_equals_the_eager_run_or_is_reported = _property(
    chained_nodes(("pre", "mid", "post")), 150, THREE_NODE_OUTCOMES, declared=("pre", "mid", "post"))


# ------------------------------------------------------------------ shrunk failures, kept as regressions
@pytest.mark.parametrize("source, spec", [
    # a tensor written in place through torch.from_numpy: the array shows the write (the graph kept the old value)
    ("t0 = torch.from_numpy(x); t0.add_(2); t0 = x * 1\ny = t0", {"x": ((), "int8")}),
    # ... with three tensors on one array, only the last one written
    ("t0 = torch.from_numpy(x)\nt1 = torch.from_numpy(x)\nt2 = torch.from_numpy(x); t2[..., 0] = 2; "
     "t2 = np.sum(x, axis=-1)\ny = t2", {"x": ((3,), "bool")}),
    # ... through an array that t0.numpy() made on the same memory (NumPy sees it as an owner of its own)
    ("t0 = torch.from_numpy(x)\nt2 = t0.numpy()\nt3 = torch.from_numpy(t2); t3.add_(2); t3 = t2 * 1\n"
     "t4 = torch.from_numpy(x)\ny = t4", {"x": ((), "int8")}),
    # t ** u reached the recorder as torch/_tensor.py's wrapper of Tensor.pow: a graph target it could not name
    ("t0 = torch.from_numpy(x)\nt1 = (t0 ** 2)\ny = t1", {"x": ((), "bool")}),
    ("t0 = torch.as_tensor(x, dtype=torch.float32)\nt2 = (t0 ** t0)\ny = t2", {"x": ((), "bool")}),
    # t.type(dtype) converts (only t.type() names the type): it was left unrecorded
    ("t0 = torch.from_numpy(x)\nt1 = t0.type(torch.float64)\ny = t1", {"x": ((), "bool")}),
    # x.zero_() was recorded as itself: the graph zeroed the array it was called with
    ("t0 = np.maximum(x, x)\nt1 = torch.from_numpy(x); t1.zero_(); t1 = x * 1\nt2 = np.maximum(x, t0)\ny = t2",
     {"x": ((), "bool")}),
    # a NumPy scalar times a tensor: torch takes the scalar as a number (a float16 one does not make the product
    # float16); the graph multiplied by a 0-d float16 tensor
    ("t0 = torch.from_numpy(x)\nt1 = np.tanh(x) * t0\ny = t1", {"x": ((), "bool")}),
    # NumPy scalars in a list given to torch.tensor: torch refused the 0-d arrays the tracer holds them in
    ("t0 = torch.tensor([np.sum(x), np.prod(x)])\ny = t0 * 2", {"x": ((3,), "int8")}),
    # torch.from_numpy inside torch.inference_mode() makes an inference tensor, which keeps no write counter: the
    # crossing was not followed either way
    ("with torch.inference_mode():\n    t0 = torch.from_numpy(w); t0.add_(2); t0 = w * 1\n"
     "    t3 = torch.from_numpy(w)\ny = t3", {"x": ((), "bool"), "w": ((), "int8")}),
    ("with torch.inference_mode():\n    a = x * 1\n    t0 = torch.from_numpy(a)\n    a += 5\n    y = t0 * 1",
     {"x": ((2,), "int8")}),
    # np.asarray(t, dtype=...) of a 0-d tensor: the tracer sliced the 0-d array for its torch dtype, and raised
    ("with torch.no_grad():\n    t0 = torch.from_numpy(x)\n    t1 = np.asarray(t0, dtype=np.float32)\ny = t1",
     {"x": ((), "bool")}),
    # a write through NumPy into a tensor's memory, the array made by t.detach().numpy(): t did not show it (the
    # detached tensor, gone by then, was the only one known to share the memory)
    ("for _step in range(3):\n    t7 = x.detach().numpy()\n    t8 = torch.from_numpy(t7); t8.add_(2); t8 = t7 * 1\n"
     "y = t8", {"x": ((), "torch.float32")}),
    ("t0 = x * 3\nt1 = t0.detach().numpy(); t1 *= 2; t1 = t0 + 1\ny = t1", {"x": ((2,), "torch.float32")}),
    ("t0 = x * 3\nt1 = t0.data.numpy(); t1 *= 2; t1 = t0 + 1\ny = t1", {"x": ((2,), "torch.float32")}),
    # a tensor assigned into an array (a[...] = t): the tensor itself went into the graph's arguments, which fx
    # wrote as torch.Tensor(size=..., dtype=float32): the graph raised NameError when run
    ("with torch.no_grad():\n    t0 = w.detach()[..., :1].numpy(); t0[...] = w; t0 = w + 0\ny = t0",
     {"x": ((), "bool"), "w": ((), "torch.int8")}),
    ("t0 = x * 1\nt0[0] = w[0]\ny = t0", {"x": ((3,), "float64"), "w": ((3,), "torch.float32")}),
    ("t0 = x * 1\nt0[...] = torch.tensor(2.5)\ny = t0", {"x": ((3,), "float64")}),
    # np.ascontiguousarray of a reversed view copies it; the tracer returned the view, which torch.from_numpy
    # refuses (negative strides), ending the trace where the eager cell runs
    ("t0 = x[::-1]\nt1 = torch.from_numpy(np.ascontiguousarray(t0))\ny = t1 * 2", {"x": ((3,), "float32")}),
    ("t1 = torch.from_numpy(np.ascontiguousarray(x.T))\ny = t1", {"x": ((2, 3), "int8")}),
    # np.ascontiguousarray gives a 0-d array one axis; the graph kept it 0-d
    ("t2 = torch.from_numpy(np.ascontiguousarray(x))\nt3 = torch.as_tensor(x).float()\ny = t2 * t3",
     {"x": ((), "float32")}),
    # ... and of a 0-d tensor, or a tensor given ndmin: the conversion gave NumPy's array the tensor's node, of the
    # tensor's shape (seed 4117: np.maximum of an array and a tensor is a tensor, through its __array_wrap__)
    ("with torch.no_grad():\n    t0 = torch.from_numpy(x)\n    t1 = torch.from_numpy(x)\n    t2 = np.maximum(x, t0)\n"
     "    t3 = torch.from_numpy(np.ascontiguousarray(t2))\ny = t3", {"x": ((), "bool"), "w": ((), "bool")}),
    ("t0 = torch.from_numpy(x) * 2\nt1 = torch.from_numpy(np.ascontiguousarray(t0))\ny = t1 + 1",
     {"x": ((), "float32")}),
    ("t0 = torch.from_numpy(x) * 2\nt1 = np.array(t0, ndmin=3)\ny = torch.from_numpy(t1) + 1",
     {"x": ((3,), "float32")}),
])
def test_regression_recorded_faithfully(source: str, spec: dict[str, Any]) -> None:
    assert check_program(source, spec, objects=OBJECTS) == "faithful"
    assert check_program(source, spec, objects=OBJECTS, profile="leapp") in ("faithful", "reported")


@pytest.mark.parametrize("source, spec", [
    # np.ascontiguousarray of a 0-d array is a view with one axis (recorded as a copy); the tensor made on it, then
    # written through another tensor on the same memory, was read at its old value: the crossing was kept only
    # while its traced array lived, and that temporary was gone by the write
    ("t0 = torch.from_numpy(np.ascontiguousarray(x))\nt1 = torch.from_numpy(x); t1.zero_(); t1 = x * 1\n"
     "t2 = torch.from_numpy(x)\nt3 = torch.tanh(t0)\ny = t3", {"x": ((), "bool")}),
    # a write through the NumPy view of a temporary view's detached tensor (p[1:].detach().numpy()): the view and
    # the detached tensor are gone by the write, p covers more than the write: baked and reported, not silent
    ("t0 = x * 3\nt1 = t0[1:].detach().numpy(); t1 *= 2; t1 = t0 + 1\ny = t1", {"x": ((2,), "torch.float32")}),
    # ... and inside inference_mode, where a view of an inference tensor has no _base: the crossing's temporary view
    # was gone by the write, and the array made on it was not known to share x's memory
    ("with torch.inference_mode():\n    t0 = torch.from_numpy(x)\n    t1 = t0.detach()[..., :1].numpy(); t1[...] = 2"
     "\n    t4 = torch.from_numpy(x)\ny = torch.tanh(t4)", {"x": ((3,), "float32")}),
    # ... and for an inference tensor no crossing made: its view (no _base) was the only known link to it
    ("with torch.inference_mode():\n    t0 = torch.tensor([np.sum(x), np.prod(x)])\n"
     "    t1 = t0.detach()[..., :1].numpy(); t1[...] = w; t1 = t0 + 0\n    t4 = torch.tanh(t0)\ny = t4",
     {"x": ((), "bool"), "w": ((), "int8")}),
    ("with torch.inference_mode():\n    t0 = x * 3\n    t1 = t0[1:].numpy(); t1 *= 2\n    t4 = t0 + 1\ny = t4",
     {"x": ((3,), "torch.float32")}),
    # a view of an inference tensor taken before a NumPy write into the tensor's memory: the tensor was marked
    # stale, the view (no _base, no write counter) was not
    ("with torch.inference_mode():\n    t0 = torch.from_numpy(x * 1)\n    v = t0[1:]\n    a = t0.numpy()\n"
     "    a[2] = 100.0\n    y = v * 2", {"x": ((4,), "float32")}),
    # inside torch.inference_mode() a tensor keeps no write counter: a view taken before a write into its bytes was
    # never found stale (the graph read the view as taken), nor was a tensor written through a view of it
    ("with torch.inference_mode():\n    t0 = x.clone(); h0 = t0[..., 0]; t0[t0 > 0] = 2; t0 = h0 * 1\ny = t0",
     {"x": ((), "torch.uint8")}),
    ("with torch.inference_mode():\n    t0 = x.clone(); h0 = t0[0]; t0.add_(2); t0 = h0 * 1\ny = t0",
     {"x": ((3,), "torch.float32")}),
    ("with torch.inference_mode():\n    t0 = x.clone(); h0 = t0[:1]; t0[:1].mul_(3); t0 = t0 * 1\ny = t0",
     {"x": ((3,), "torch.float32")}),
])
def test_regression_not_silent(source: str, spec: dict[str, Any]) -> None:
    """Shrunk failures the graph cannot follow: they must be reported (an error at a line), never silent."""
    for profile in ("full", "leapp"):
        assert check_program(source, spec, objects=OBJECTS, profile=profile) in ("faithful", "reported")


@pytest.mark.parametrize("source, declared, x", [
    # the next node's input is an inference tensor on x's memory (made in node pre, which keeps no write counter),
    # written through another tensor on that memory: the tensor the input is bound to was in no shared memory, so
    # the write did not reach it and node post read the value it was given
    ('x = annotate.input_tensors("pre", {"x": x})\nwith torch.inference_mode():\n    t1 = torch.from_numpy(x)\n'
     'annotate.output_tensors("pre", {"mid": t1})\nm = annotate.input_tensors("post", {"mid": t1})\n'
     'torch.from_numpy(x).add_(2)\ny = m * 1\nannotate.output_tensors("post", {"y": y})', ("pre", "post"),
     ((3,), "float32")),
    # ... and without inference_mode
    ('x = annotate.input_tensors("pre", {"x": x})\nt1 = torch.from_numpy(x)\n'
     'annotate.output_tensors("pre", {"mid": t1})\nm = annotate.input_tensors("post", {"mid": t1})\n'
     'torch.from_numpy(x).add_(2)\ny = m * 1\nannotate.output_tensors("post", {"y": y})', ("pre", "post"),
     ((3,), "float32")),
    # a node input made on a plain array's memory, the array then written by plain NumPy (no traced value: the
    # tracer sees no write at all); found when the node closes: its input no longer holds what it was given
    ('m = annotate.input_tensors("post", {"mid": torch.from_numpy(x)})\nx += 2\ny = m * 1\n'
     'annotate.output_tensors("post", {"y": y})', ("post",), ((3,), "float32")),
    ('m = annotate.input_tensors("post", {"mid": x[1:]})\nx[1] = 7\ny = m * 2\n'
     'annotate.output_tensors("post", {"y": y})', ("post",), ((3,), "float32")),
    # the first node's output written in place between the nodes, then declared as the next node's input: the
    # pipeline gives node post what node pre output, the eager cell the value as written
    ('x = annotate.input_tensors("pre", {"x": x})\nt1 = torch.from_numpy(x)\n'
     'annotate.output_tensors("pre", {"mid": t1})\ntorch.from_numpy(x).add_(2)\n'
     'm = annotate.input_tensors("post", {"mid": t1})\ny = m * 1\nannotate.output_tensors("post", {"y": y})',
     ("pre", "post"), ((3,), "float32")),
    # a NumPy scalar computed between the nodes (a 0-d array times 2) and used in node post: a literal there
    ('x = annotate.input_tensors("pre", {"x": x})\nt0 = torch.from_numpy(x)\nt2 = t0.numpy()\n'
     'annotate.output_tensors("pre", {"mid": t2})\nbetween = t2 * 2\nm = annotate.input_tensors("post", {"mid": t2})\n'
     'with torch.no_grad():\n    t9 = torch.from_numpy(m) + between\n'
     'annotate.output_tensors("post", {"y": t9})\ny = t9',
     ("pre", "post"), ((), "bool")),
    ('x = annotate.input_tensors("pre", {"x": x})\nt1 = torch.from_numpy(x * 2)\n'
     'annotate.output_tensors("pre", {"mid": t1})\nt1.numpy()[1:] += 2\n'
     'm = annotate.input_tensors("post", {"mid": t1})\ny = m * 1\nannotate.output_tensors("post", {"y": y})',
     ("pre", "post"), ((3,), "float32")),
    # seed 4105, three nodes: node mid's output, NaN at trace time (sqrt of a negative), written between the nodes
    # through t5.detach().numpy(): NaN + 1 is NaN, so the value compared bit for bit had not changed, and the write,
    # made outside any node, was counted nowhere
    ('x = annotate.input_tensors("pre", {"x": x})\nwith torch.no_grad():\n    t0 = torch.from_numpy(x)\n'
     '    t1 = torch.neg(t0)\nannotate.output_tensors("pre", {"mid": t1})\nbetween = t1 * 2\n'
     'm = annotate.input_tensors("mid", {"mid": t1})\nwith torch.no_grad():\n    t5 = torch.sqrt(m)\n'
     'annotate.output_tensors("mid", {"mid": t5})\nt5.detach().numpy()[...] += 1\n'
     'm2 = annotate.input_tensors("post", {"mid": t5})\nwith torch.no_grad():\n    t7 = torch.tanh(m2)\n'
     'annotate.output_tensors("post", {"y": t7})\ny = t7', ("pre", "mid", "post"), ((), "float16")),
    # ... the same through each way a write between two nodes can reach an array output's memory
    *[(f'x = annotate.input_tensors("pre", {{"x": x}})\nt5 = np.sqrt(-x) + np.zeros(1)\n'
       f'annotate.output_tensors("pre", {{"mid": t5}})\n{write}\n'
       'm = annotate.input_tensors("post", {"mid": t5})\ny = np.tanh(m)\nannotate.output_tensors("post", {"y": y})',
       ("pre", "post"), ((), "float64"))
      for write in ("torch.from_numpy(t5).add_(1)", "a = torch.as_tensor(t5)\na.mul_(2)", "t5.view()[...] += 1",
                    "np.add(t5.view(), 1, out=t5.view())")],
    *[(f'x = annotate.input_tensors("pre", {{"x": x}})\nt5 = torch.sqrt(-x)\n'
       f'annotate.output_tensors("pre", {{"mid": t5}})\n{write}\n'
       'm = annotate.input_tensors("post", {"mid": t5})\ny = torch.tanh(m)\n'
       'annotate.output_tensors("post", {"y": y})', ("pre", "post"), ((), "torch.float64"))
      for write in ("t5.detach().numpy()[...] += 1", "a = t5.detach().numpy()\na += 1", "t5.numpy()[...] *= 2",
                    "np.add(t5.numpy(), 1, out=t5.numpy())")],
    # seed 4115, three nodes: a float32 tanh times 2**31, summed and cast to int64 in the last node: NumPy's and
    # torch's tanh one float32 ulp apart, 128 after the cast (the harness compares such integers as the float was)
    ('x = annotate.input_tensors("pre", {"x": x})\nt0 = np.tanh(x) * 2**31\nt1 = torch.as_tensor(t0)\n'
     't2 = torch.from_numpy(x)\nt3 = t1.reshape(-1)\nm = annotate.input_tensors("mid", {"mid": t3})\n'
     'annotate.output_tensors("pre", {"mid": t3})\nt6 = m.sum()\nm2 = annotate.input_tensors("post", {"mid": t6})\n'
     'annotate.output_tensors("mid", {"mid": t6})\nwith torch.no_grad():\n    t8 = m2.long()\n'
     'annotate.output_tensors("post", {"y": t8})\ny = t8', ("pre", "mid", "post"), ((), "float32")),
])
def test_regression_two_nodes_not_silent(source: str, declared: tuple[str, ...], x: tuple[Any, str]) -> None:
    """Shrunk failures of cells that declare their nodes (writes into a node's input through other memory, values
    carried between the nodes): reported (an error at a line) or faithful, never silent."""
    for profile in ("full", "leapp"):
        assert check_program(source, {"x": x}, objects=OBJECTS, profile=profile,
                             declared=declared) in ("faithful", "reported")


def test_a_node_input_written_after_its_last_read_is_reported_where_it_reaches_an_output() -> None:
    # the write the tracer does not see comes after the node read its input: the graph is right, but the tracer
    # cannot tell, so the input's hazard is an error where the input reaches an output (the probe passes)
    source = ('m = annotate.input_tensors("post", {"mid": torch.from_numpy(x)})\ny = m * 1\nx += 2\n'
              'annotate.output_tensors("post", {"y": y})')
    trace = ln.trace_cell(source, {"np": np, "torch": torch, "x": np.ones(3, np.float32)})
    (hazard,) = trace.hazards
    assert (hazard.kind, hazard.severity, hazard.line, hazard.graph_nodes) == ("untraced-call", "error", 1, ["mid"])
    assert hazard.message.startswith("node input 'mid' changed while the node ran, by a write the tracer did not see")
    assert trace.probe(4, seed=0).passed
    clean = ln.trace_cell(source.replace("torch.from_numpy(x)", "torch.from_numpy(x.copy())"),
                          {"np": np, "torch": torch, "x": np.ones(3, np.float32)})
    assert clean.hazards == []  # the fix: a copy


def test_an_output_written_between_the_nodes_is_reported_at_the_next_nodes_input() -> None:
    source = ('x = annotate.input_tensors("pre", {"x": raw})\nt1 = torch.from_numpy(x * 2)\n'
              'annotate.output_tensors("pre", {"mid": t1})\nt1.numpy()[1:] += 2\n'
              'm = annotate.input_tensors("post", {"mid": t1})\ny = m * 1\nannotate.output_tensors("post", {"y": y})')
    trace = ln.trace_cell(source, {"np": np, "torch": torch, "raw": np.ones(3, np.float32)})
    (hazard,) = trace.hazards
    assert (hazard.node, hazard.kind, hazard.severity, hazard.line, hazard.graph_nodes) == \
        ("post", "untraced-call", "error", 5, ["mid"])
    assert hazard.message.startswith("node input 'mid' is output 'mid' of node 'pre', written in place after")
    assert "before its annotate.output_tensors" in hazard.fix and trace.nodes["post"].sources == {"mid": "pre/mid"}
    # a write through the name itself (t1.add_(2), t1 += 2 on an array) makes it a value computed between the nodes,
    # declared: the split the catalogue recommends (the deploying runtime fills the gap: no source, no hazard)
    for step in ("t1.add_(2)", "t1 += 2"):
        split = ln.trace_cell(source.replace("t1.numpy()[1:] += 2", step),
                              {"np": np, "torch": torch, "raw": np.ones(3, np.float32)})
        assert split.hazards == [] and split.nodes["post"].sources == {}, step


@pytest.mark.parametrize("make", [np.ones, torch.ones])
def test_a_hidden_write_into_a_strided_node_input_is_found_without_copying_it(make) -> None:
    # the input is a transposed view of the caller's array, written afterwards through the caller's own (untraced)
    # name: found by comparing the input's memory with the copy kept, row blocks at a time (strides and all)
    source = ('m = annotate.input_tensors("post", {"mid": big.T})\nbig[2, 1] = 9\ny = m * 2\n'
              'annotate.output_tensors("post", {"y": y})')
    trace = ln.trace_cell(source, {"np": np, "torch": torch, "big": make((4, 3))})
    (hazard,) = [h for h in trace.hazards if h.line == 1]
    assert (hazard.severity, hazard.graph_nodes) == ("error", ["mid"])
    assert "changed while the node ran, by a write the tracer did not see" in hazard.message
    # (torch's write counter, which the tensor's view shares, also shows the input's value stale where it is read)
    assert [h.line for h in trace.hazards[1:]] == ([] if make is np.ones else [3, 4])
