"""Calls LEAPP 0.7.2's lookup records, but records wrongly (measured: docs/leapp-0.7.2-behaviour.md,
benchmarks/leapp_gaps.py).

Our graph records these calls correctly; the hazard says that the same cell exported with LEAPP
itself would be wrong or fail, so the ``leapp`` profile still shows every way LEAPP's export breaks.
Each entry is data: a cause key, the call names it applies to, a predicate on the call (NumPy's eager
arguments and result; for a few causes how the call was spelled at its call site), what LEAPP does,
and the rewrite that avoids it.

What LEAPP 0.7.2 does with a NumPy call (read from its ``traced_np_array.py``): a ufunc or function in
its tables becomes one ``torch`` call with NumPy's arguments passed through (``axis`` renamed ``dim``,
``keepdims`` ``keepdim``; a NumPy dtype object left as it is; Python scalars inline in the graph code,
0-d arrays and NumPy scalars as 0-d tensor constants); its array methods are small Python wrappers
with fixed signatures around those functions. The graph is compiled with ``torch.jit.script`` and
replayed once on the trace inputs (``compile_graph(validate=True)``; with the default ``strict=True`` a
mismatch raises). So LEAPP fails where the wrapper signature rejects an argument, where TorchScript
rejects the torch call, where torch has no kernel for the dtype, or where torch's result dtype or
shape differs from NumPy's.

``find`` runs on every call the ``leapp`` lookup records, in both profiles: one dict lookup by name,
predicates only for names that have defects; the torch dtype check caches its answer per argument
signature. ``aliased_input`` runs once per node output when the node closes.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
import torch

from .facts import facts
from .leapp_calls import (
    METHOD_FORWARDS,
    METHOD_PARAMETERS,
    Call,
    forwarded_call,
    is_int,
    signature_errors,
    signature_fix,
)
from .leapp_predicates import (
    BOOL_NOT_FIRST,
    DIM_TORCH,
    JOINS,
    ONE_DIM,
    OPERATOR_UFUNC,
    ORACLE_NAMES,
    SCALAR_NEVER,
    SCALAR_NOT_FIRST,
    UFUNC_NAMES,
    axis_none,
    bitwise_operator,
    dtype_depends_on_site,
    dtype_fix,
    lambda_ufunc,
    multi_axis,
    multi_axis_fix,
    python_scalar_operand,
    rejected_arguments,
    rejected_fix,
    sort_axis_none,
    stable_argsort,
    torch_dtype,
    torch_kernel,
    zero_divisor,
)

# ------------------------------------------------------------------------------------------
# the catalogue's types
# ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Defect:
    """One cause of a wrong LEAPP export. ``applies(call)`` is falsy when LEAPP gets the call right;
    otherwise True, or a text with the details for this call. ``fix`` is a text or ``fix(call)``."""

    cause: str
    names: frozenset[str]
    applies: Callable[["Call"], Any]
    what: str
    fix: str | Callable[["Call"], str]
    # Names whose answer reads more than the call's signature (how the call was spelled at its call site, or
    # the data): judged on every call. Every other answer is kept with the call's recording template
    # (tracing/replay.py), so a predicate that reads ``call.site``, ``by_keyword`` or array values must list
    # the names it reads them for here.
    per_call: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Finding:
    defect: Defect
    detail: str
    fix: str

    @property
    def message(self) -> str:
        return f"{self.defect.what} ({self.detail})" if self.detail else self.defect.what


# ------------------------------------------------------------------------------------------
# the catalogue
# ------------------------------------------------------------------------------------------

_LEAPP_METHODS = frozenset(f"ndarray.{m}" for m in METHOD_PARAMETERS)
_REDUCTIONS = frozenset(f"{prefix}{name}" for prefix in ("np.", "ndarray.")
                        for name in ("sum", "prod", "mean", "std", "var", "max", "min"))
_WITH_DTYPE = frozenset({*(f"np.{n}" for n in ("sum", "prod", "mean", "std", "var", "max", "min", "all", "any",
                                                 "cumsum", "cumprod", "concatenate", "stack", "vstack", "hstack",
                                                 "trace", "einsum", "zeros_like", "ones_like", "empty_like",
                                                 "full_like", "linspace")),
                         *(f"ndarray.{n}" for n in ("sum", "mean", "std", "var", "max", "min")), *UFUNC_NAMES})

DEFECTS: tuple[Defect, ...] = (
    Defect("method-signature", _LEAPP_METHODS, signature_errors,
           "LEAPP's array method has a narrower signature than NumPy's",
           signature_fix),
    Defect("dtype-argument", _WITH_DTYPE, lambda c: c.p.get("dtype") is not None,
           "it passes the NumPy dtype= through to the torch call, and fx cannot record it: tracing raises "
           "NotImplementedError (\"argument of type: <class 'type'>\")",
           "drop dtype= and cast explicitly: x.astype(np.float64) before the call, or .astype(...) after it"),
    Defect("ufunc-reduce", frozenset(f"np.{n}.reduce" for n in ("add", "multiply", "maximum", "minimum",
                                                                  "logical_and", "logical_or")),
           lambda c: True,
           "ufunc.reduce raises a TypeError while LEAPP traces it (its __array_ufunc__ returns NotImplemented for "
           "every method but __call__)",
           "use the function: np.sum / np.prod / np.max / np.min / np.all / np.any with axis="),
    Defect("lambda-ufunc", frozenset({"np.exp2", "np.positive"}), lambda_ufunc,
           "its table maps this ufunc to a Python lambda, which the exported graph cannot spell: compile_graph "
           "raises SyntaxError (\"invalid syntax\")",
           "np.exp2(x) -> np.power(2.0, x); np.positive(x) -> x (or +x)",
           per_call=frozenset({"np.exp2", "np.positive"})),
    Defect("bitwise-operator", frozenset(OPERATOR_UFUNC.values()), bitwise_operator,
           "LEAPP's array type implements ~ & | ^ as logical operations",
           "call the bitwise function: np.invert(x), np.bitwise_and(a, b), np.bitwise_or(a, b), "
           "np.bitwise_xor(a, b)", per_call=frozenset(OPERATOR_UFUNC.values())),
    Defect("python-scalar-operand", frozenset(f"np.{n}" for n in SCALAR_NEVER | SCALAR_NOT_FIRST | BOOL_NOT_FIRST),
           python_scalar_operand,
           "the Python number stays a literal in the graph, where the compiled torch op needs a tensor: "
           "compile_graph or the exported model raises",
           "make the number an array of the data's dtype: np.full_like(x, 1.5), or np.asarray(1.5, x.dtype)"),
    Defect("builtin-round", frozenset({"np.round"}), lambda c: c.site == "round()",
           "it traces NumPy's scalars as arrays of its own, which define no __round__: round(x, n) raises "
           "TypeError in the cell under LEAPP",
           "call np.round instead: np.round(x, decimals=2) (decimals by keyword)", per_call=frozenset({"np.round"})),
    Defect("torch-rejects-arguments", frozenset({"np.tril", "np.triu", "np.rot90", "np.roll", "np.round",
                                                 "np.around", "np.trace", "np.tensordot", "np.linspace",
                                                 "np.full_like", "np.dot", *JOINS}),
           rejected_arguments,
           "it passes NumPy's arguments to the torch op unchanged, and TorchScript rejects them: compile_graph "
           "or the exported model raises",
           rejected_fix, per_call=frozenset({"np.tril", "np.triu", "np.rot90", "np.roll", "np.round", "np.around"})),
    Defect("multi-axis-dim", frozenset(ONE_DIM), multi_axis,
           "the torch op takes a single int dim: compile_graph raises (\"Arguments for call are not valid\")",
           multi_axis_fix),
    Defect("axis-none-dim", frozenset({*DIM_TORCH, "np.cumsum", "np.cumprod"}), axis_none,
           "axis=None is not a valid dim for the torch op: compile_graph raises (\"Arguments for call are not "
           "valid\" / \"Argument dim not provided\")",
           lambda c: (f"flatten explicitly: {c.name}(x.reshape(-1), axis=0)" if c.name in ("np.cumsum", "np.cumprod")
                      else "flatten explicitly: np.concatenate([a.reshape(-1), b.reshape(-1)])"
                      if c.name == "np.concatenate"
                      # measured: np.max(x) exports; x.max() and np.max(x, axis=None) do not
                      else f"call the function with no axis: {c.name}(x), not x.{c.name[3:]}() (the method passes "
                           f"axis=None) nor {c.name}(x, axis=None)")),
    Defect("empty-axis-tuple", _REDUCTIONS, lambda c: isinstance(c.p.get("axis"), tuple) and c.p.get("axis") == (),
           "it passes dim=() to torch, which reduces every axis, where NumPy's axis=() reduces none",
           "drop the reduction: axis=() does nothing in NumPy"),
    Defect("masked-reduction", frozenset(f"{prefix}{name}" for prefix in ("np.", "ndarray.")
                                         for name in ("sum", "prod", "mean", "max", "min", "all", "any")),
           lambda c: ", ".join(f"{k}=" for k in ("where", "initial")
                               if c.p.get(k) is not None and c.p[k] is not np._NoValue and c.p[k] is not True),
           "it passes where=/initial= on to the torch reduction, which has no such argument: compile_graph raises "
           "(\"Keyword argument where unknown\")",
           "mask and combine explicitly: np.sum(np.where(mask, x, np.zeros_like(x)), axis=...) + initial; "
           "np.max(np.where(mask, x, np.full_like(x, initial)), axis=...); np.maximum(np.max(x, axis=...), "
           "np.full_like(..., initial))"),
    Defect("int-mean", frozenset({"np.mean"}), lambda c: is_int(c.p.get("a")) and c.p.get("dtype") is None,
           "it records torch.mean on the integer tensor, and the exported model raises \"mean(): could not infer "
           "output dtype\"",
           "cast first: x.astype(np.float64).mean(...)"),
    Defect("int-std-var", frozenset({"np.std", "np.var"}), lambda c: is_int(c.p.get("a")) and c.p.get("dtype") is None,
           "it records torch.std/torch.var on the integer tensor, and the exported model raises \"std and var only "
           "support floating point and complex dtypes\"",
           "cast first: x.astype(np.float64).std(...)"),
    Defect("sort-axis-none", frozenset({"np.sort", "np.argsort"}), sort_axis_none,
           "it records torch.topk along the last axis for axis=None, so the export sorts each row instead of "
           "the flattened array (wrong shape)",
           "flatten explicitly: np.sort(x.reshape(-1))"),
    Defect("unstable-argsort", frozenset({"np.argsort"}), stable_argsort,
           "it records torch.topk, which does not keep equal elements in their original order: kind='stable' is "
           "not honoured",
           "break ties explicitly, e.g. sort x * n + np.arange(n) (integers), or do without stability"),
    Defect("uninitialized-values", frozenset({"np.empty_like"}), lambda c: True,
           "it records torch.empty_like, and compile_graph's replay validation compares two uninitialized "
           "buffers: with strict=True (LEAPP's default) it raises \"Model validation failed\"",
           "use np.zeros_like(x) (the values of np.empty_like are undefined anyway)"),
    Defect("torch-kernel", frozenset(ORACLE_NAMES), torch_kernel,
           "the torch op LEAPP records does not run on these dtypes or operands, so the exported model raises",
           "cast the operands first, e.g. x.astype(np.float32) (or np.int64 for integer ops on bool)"),
    Defect("torch-dtype", frozenset(ORACLE_NAMES), torch_dtype,
           "torch's type promotion differs from NumPy's for these operands, so LEAPP's model returns another dtype "
           "than the YAML declares and replay validation fails (\"Float did not match Double\")",
           dtype_fix),
    Defect("integer-division-by-zero", frozenset({"np.remainder", "np.floor_divide", "np.fmod"}), zero_divisor,
           "torch raises ZeroDivisionError for an integer division by zero, where NumPy returns 0 (the trace "
           "inputs have a zero divisor)",
           "guard the divisor: np.where(b == 0, 1, b), and select the NumPy result for zeros with np.where",
           per_call=frozenset({"np.remainder", "np.floor_divide", "np.fmod"})),
)

# Output-aliases-input: checked when the node closes (aliased_input), not per call. The torch defects are below.
ALIAS = Defect("output-aliases-input", frozenset(), lambda c: False,
               "the output is a view covering exactly the memory of a declared input (same shape, strides and dtype), "
               "and LEAPP's output_tensors raises \"output '...' of node '...' shares memory with declared input "
               "'...', but they carry different tracing roots\"",
               "copy the view before declaring it (y = x.T.copy()), or declare the input itself as the output")

# The dtypes LEAPP 0.7.2 has a name for (leapp_graph/datatypes/numpy/traced_np_array.py _NUMPY_DTYPE_TO_NAME, and
# the torch codec's): input_tensors/output_tensors of any other dtype raise KeyError while tracing (measured: NumPy
# uint16, uint32, uint64, complex64; torch.uint16, torch.uint32, torch.complex64 inputs, a uint16 output).
LEAPP_DTYPES = frozenset({"bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64"})
_WIDER = {"uint16": "int32", "uint32": "int64", "uint64": "int64"}


def _tensor_dtype_fix(call: Call) -> str:
    dtype, role = call.p["dtype"], call.p["role"]
    if dtype.startswith("complex"):
        return f"declare the real and imaginary parts as two float {role}s: np.real(z), np.imag(z)"
    wider = _WIDER.get(dtype, "float32")
    return f"convert the {role} to a dtype LEAPP names, e.g. .astype(np.{wider}) (torch: .to(torch.{wider})), " \
           f"before it is declared ({', '.join(sorted(LEAPP_DTYPES))})"


# Node inputs and outputs of a dtype LEAPP cannot name: checked when they are declared (builder.py), not per call.
TENSOR_DTYPE = Defect("tensor-dtype", frozenset(), lambda c: c.p["dtype"] not in LEAPP_DTYPES,
                      "its input_tensors/output_tensors have no name for this dtype and raise KeyError "
                      "(\"dtype('uint16')\", \"torch.uint16\") while tracing",
                      _tensor_dtype_fix)


def tensor_dtype(role: str, dtype: str) -> Finding | None:
    """What LEAPP 0.7.2 does with a node ``role`` ("input" or "output") of dtype ``dtype`` (a dtype name), if wrong."""
    if dtype in LEAPP_DTYPES:
        return None
    call = Call("input_tensors" if role == "input" else "output_tensors", {"dtype": dtype, "role": role}, None)
    return Finding(TENSOR_DTYPE, "", _tensor_dtype_fix(call))


ALL_DEFECTS: tuple[Defect, ...] = DEFECTS + (ALIAS, TENSOR_DTYPE)

_BY_NAME: dict[str, list[Defect]] = {}
for _defect in DEFECTS:
    for _name in _defect.names:
        _BY_NAME.setdefault(_name, []).append(_defect)
# Predicates that read more than a call's signature (how the call was spelled at its call site, or the data):
# their names are judged on every call; every other answer is kept with the call's recording template
# (tracing/replay.py).
DYNAMIC = frozenset(name for defect in DEFECTS for name in defect.per_call)
_TORCH_DTYPE_NAMES = frozenset(name for name in UFUNC_NAMES
                               if any(d.cause == "torch-dtype" for d in _BY_NAME.get(name, ())))
def dtype_per_call(name: str, params: dict[str, Any], result: Any) -> bool:
    """Whether LEAPP's answer for a ufunc call (``params``: NumPy's eager arguments) must be asked again on every call
    of its signature, like the names in ``DYNAMIC``: torch's dtype differs from NumPy's, which an augmented
    assignment into a subscript casts back (``torch_dtype`` reads the call site). Asked once per signature, when
    its template is kept."""
    return name in _TORCH_DTYPE_NAMES and dtype_depends_on_site(Call(name, params, result))


# A method is also judged by the function call LEAPP's wrapper makes.
_METHOD_NAMES = frozenset(f"ndarray.{m}" for m in METHOD_FORWARDS) | _LEAPP_METHODS


def _first(call: Call, defects: list[Defect]) -> Finding | None:
    for defect in defects:
        hit = defect.applies(call)
        if hit:  # rare: everything below runs only for a call LEAPP gets wrong
            fix = defect.fix(call) if callable(defect.fix) else defect.fix
            return Finding(defect, hit if isinstance(hit, str) else "", fix)
    return None


def find(name: str, params: dict[str, Any], result: Any) -> Finding | None:
    """What LEAPP 0.7.2 gets wrong about this call (``params``: NumPy's eager arguments), if anything."""
    defects = _BY_NAME.get(name)
    if defects is None and name not in _METHOD_NAMES:
        return None
    call = Call(name, params, result)
    if defects:
        for defect in defects:
            if defect.applies(call):
                return _first(call, [defect])
    if name in _METHOD_NAMES:
        forwarded = forwarded_call(call)
        if forwarded is not None and forwarded.name in _BY_NAME:
            return _first(forwarded, _BY_NAME[forwarded.name])
    return None


# ------------------------------------------------------------------------------------------
# torch calls LEAPP 0.7.2 records wrongly (measured: benchmarks/leapp_torch_comparison.py)
# ------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class TorchCall:
    """A torch call as the torch defects see it: the name the graph shows, positional and keyword arguments."""

    name: str
    args: tuple[Any, ...]
    kwargs: dict[str, Any]


def _bool_tensor_operand(call: TorchCall) -> bool:
    return any(isinstance(a, torch.Tensor) and a.dtype == torch.bool for a in call.args[:1])


def _dtype_dropped(call: TorchCall) -> bool:
    """Whether dropping the conversion's dtype= changes the result: the requested dtype is not the one torch gives
    the traced array by itself (``torch.tensor(obs, dtype=torch.float32)`` on a float32 ``obs`` is measured
    faithful: benchmarks/leapp_torch_cases.py). A list of traced values is always reported."""
    dtype = call.kwargs.get("dtype", call.args[1] if len(call.args) > 1 else None)
    if dtype is None:
        return False
    data = call.args[0] if call.args else None
    if not isinstance(data, np.ndarray) or not isinstance(dtype, torch.dtype):
        return True
    try:
        return torch.from_numpy(np.empty(0, data.dtype)).dtype != dtype
    except TypeError:  # a dtype torch has no tensor for
        return True


def _convert_after(call: TorchCall) -> str:
    """The conversion-dtype-dropped fix, in the dtype the call asked for."""
    dtype = call.kwargs.get("dtype", call.args[1] if len(call.args) > 1 else None)
    return f"convert after the crossing instead: torch.from_numpy(x).to({dtype})"


# how the tracer names the write an in-place op on a view makes into its base (tensor._write_back_view), and a
# write through a NumPy view (``v = a[:, :2]; v *= 0.5``) when its base is read next (Session._written_back)
VIEW_WRITE = "Tensor.__setitem__ (an in-place op on a view, written into its base)"
NUMPY_VIEW_WRITE = "ndarray.__setitem__ (a write through a view, written into its base)"
# a NumPy view read after a write into its base by another name (``v = z[:, :2]; z[1] += 1; v * 1``: Session._reindexed)
NUMPY_VIEW_READ = "ndarray.__getitem__ (a view read after a write into its base)"
TORCH_VIEW_READ = "Tensor.__getitem__ (a view read after a write into its base)"  # (Session._reindexed_tensor)


def _view_write_detail(call: TorchCall) -> Any:
    if call.kwargs.get("untraced_base"):  # b = torch.zeros(5, 4); b[:, 1:].copy_(a): measured
        return "here the base holds no traced data, so it stays a plain tensor and output_tensors() raises " \
               "\"received non-traced tensors\" where it is an output"
    return True


def _view_write_fix(call: TorchCall) -> str:
    if call.name == NUMPY_VIEW_WRITE:
        return "write through the base's own subscript: a[:, :2] *= 0.5, or a[:, :2] = np.clip(a[:, :2], lo, hi) " \
               "instead of out=a[:, :2]"
    return "write the result back into the base explicitly: a[:, :2] = a[:, :2].clamp(-1, 1)"

TORCH_DEFECTS: tuple[Defect, ...] = (
    Defect("conversion-dtype-dropped", frozenset({"torch.as_tensor", "torch.tensor", "torch.asarray"}),
           _dtype_dropped,
           "its patched torch.as_tensor/torch.tensor keep the traced array's graph value and drop dtype=, so the "
           "export computes in the array's dtype and its replay validation fails (\"Float did not match Double\")",
           _convert_after),
    Defect("data-bypass", frozenset({"Tensor.data"}), lambda c: True,
           "it does not trace .data: the value is baked into the export as a constant, with nothing logged",
           "use the tensor itself, or .detach(), instead of .data"),
    Defect("view-write-lost", frozenset({VIEW_WRITE, NUMPY_VIEW_WRITE}), _view_write_detail,
           "it records an in-place write through a view (a[:, :2].clamp_(-1, 1); v = a[:, :2] then v *= 0.5) on the "
           "view alone: the base keeps its old values in the export",
           _view_write_fix),
    Defect("view-read-stale", frozenset({NUMPY_VIEW_READ, TORCH_VIEW_READ}), lambda c: True,
           "it records a view once, where it is taken (v = z[:, :2]), so a write into its base after that (z[1] += 1) "
           "does not reach the view: the export reads the values from before the write (measured: its replay "
           "validation fails, so compile_graph raises \"Model validation failed\" with its default strict=True)",
           "take the view after the last write into its base, or index the base where the value is used "
           "(z[:, :2] * 2 instead of v * 2)"),
    Defect("bool-invert-script", frozenset({"Tensor.__invert__", "Tensor.bitwise_not"}), _bool_tensor_operand,
           "it records ~ of a bool tensor as Tensor.__invert__, which torch.jit.script rejects, so an export with "
           "export_with='jit' fails to compile",
           "use torch.logical_not(m) (and torch.logical_and / torch.logical_or for & and |)"),
)
_TORCH_BY_NAME: dict[str, Defect] = {name: defect for defect in TORCH_DEFECTS for name in defect.names}



def torch_defect_named(name: str) -> bool:
    """Whether some defect of LEAPP 0.7.2's may apply to a torch call shown as ``name`` (``find_torch`` decides it
    for the call's arguments)."""
    return name in _TORCH_BY_NAME


def find_torch(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Finding | None:
    """What LEAPP 0.7.2 gets wrong about a torch call (``name`` as the graph shows it), if anything."""
    defect = _TORCH_BY_NAME.get(name)
    if defect is None:
        return None
    call = TorchCall(name, args, kwargs)
    applies = defect.applies(call)
    if not applies:
        return None
    return Finding(defect, applies if isinstance(applies, str) else "",
                   defect.fix if isinstance(defect.fix, str) else defect.fix(call))


# ------------------------------------------------------------------------------------------
# outputs that alias a declared input
# ------------------------------------------------------------------------------------------

# NumPy names whose result LEAPP computes as a NumPy view of the argument (its methods forward to
# these: flatten/ravel to np.reshape, T to np.transpose); basic getitem keys are views too.
VIEW_OPS = frozenset({"ndarray.T", "np.transpose", "ndarray.transpose", "np.reshape", "ndarray.reshape",
                      "ndarray.flatten", "ndarray.ravel", "np.squeeze", "ndarray.squeeze", "np.expand_dims",
                      "np.swapaxes", "ndarray.swapaxes", "np.moveaxis", "np.split", "np.array_split"})


def _is_view(node: torch.fx.Node) -> bool:
    """Whether NumPy's value of ``node`` is a view of its one input in the same layout: a view function, or
    basic indexing without a reversed slice (the indexing code records that fact)."""
    info = facts(node)
    return info.numpy in VIEW_OPS or (info.view and node.target is operator.getitem)


def aliased_input(node: Any) -> str | None:
    """The declared input whose memory the output ``node`` covers exactly, as LEAPP's view would.

    LEAPP refuses an output whose eager array has the same data pointer, shape, strides and dtype as a
    declared input but is a different traced object. The output's graph is followed back through view
    operations to a placeholder; the chain is replayed on an index tensor, and it aliases exactly when
    it maps every element to itself.
    """
    if not isinstance(node, torch.fx.Node):
        return None
    chain = []
    current = node
    while current.op != "placeholder":
        if current.op not in ("call_function", "call_method") or not _is_view(current):
            return None
        inputs = current.all_input_nodes
        if len(inputs) != 1:
            return None
        chain.append(current)
        current = inputs[0]
    if not chain:
        return None  # the input itself: LEAPP's carrier, not an alias
    shape = tuple(facts(current).shape or ())
    if tuple(facts(node).shape or ()) != shape or facts(node).dtype != facts(current).dtype:
        return None
    size = int(np.prod(shape)) if shape else 1
    if size == 0:
        return None  # LEAPP does not compare empty arrays
    index = torch.arange(size).reshape(shape)
    env = {current: index}
    try:
        for step in reversed(chain):
            args = torch.fx.node.map_arg(step.args, lambda n: env[n])
            kwargs = torch.fx.node.map_arg(step.kwargs, lambda n: env[n])
            if step.op == "call_method":
                env[step] = getattr(args[0], step.target)(*args[1:], **kwargs)
            else:
                env[step] = step.target(*args, **kwargs)
    except Exception:  # noqa: BLE001 - a step that does not replay is not judged
        return None
    out = env[node]
    if not isinstance(out, torch.Tensor) or tuple(out.shape) != shape or not torch.equal(out, index):
        return None
    return facts(current).input or current.name
