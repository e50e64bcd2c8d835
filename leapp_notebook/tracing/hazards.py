"""The hazard catalogue: each kind, its severity per profile, the fix text written for a line, and the one
:func:`add` every producer (the engine, the probe, the LEAPP-defects check) reports through.

Kinds are stable strings (docs/hazards.md). Fix texts are templates filled with the offending line's code
and the names involved, so the user reads a rewrite for *their* line, not a generic rule. A hazard is
reported once per kind, line and node: :func:`add` merges a second report on the same line into the
first (its graph nodes, its message, the stronger severity).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .types import Hazard


@dataclass(frozen=True)
class HazardKind:
    """One kind: its title, its severity in each profile, and its fix template (``{split}`` is the node-split
    advice for the line, ``{name}`` the call or module involved). untraced-call's fix depends on the call."""

    kind: str
    title: str
    leapp_severity: str
    full_severity: str
    fix: str = ""


CATALOGUE: dict[str, HazardKind] = {
    k.kind: k
    for k in [
        HazardKind("untraced-call", "Untraced call baked as a constant", "error", "error"),
        HazardKind("broken-chain", "Indexing or iteration leaves the graph", "error", "warning",
                   fix="keep at least one axis in the key, e.g. x[0:1] instead of x[0], x[0:1, 0:1] instead "
                   "of x[0, 0]; instead of iterating or unpacking, slice: a, b = x[0:1], x[1:2] (or "
                   "np.split(x, n))"),
        HazardKind("reversed-slice", "Reversed slice", "error", "warning",
                   fix="index with an index array instead of a negative step, e.g. x[np.arange(x.shape[0] - "
                   "1, -1, -1)], or use np.flip(x, axis=0)"),
        HazardKind("numpy-scalar", "NumPy scalar operand", "error", "warning",
                   fix="use a Python scalar (2.0) or a 0-d array (np.array(2.0, np.float32)) instead of a "
                   "NumPy scalar type; for a scalar returned by a NumPy call, keep an axis "
                   "(keepdims=True) so it stays an array"),
        HazardKind("value-extraction", "Python value extracted from traced data", "error", "error",
                   fix="keep the value as an array (x[0:1] instead of x.item()/float(x)); if a Python value "
                   "is truly needed, {split}"),
        HazardKind("data-dependent-branch", "Branch on traced data", "error", "error",
                   fix="the graph records only the branch taken. For element-wise choices use np.where(cond, "
                   "a, b); for a real decision, {split}"),
        HazardKind("untraced-output", "Node output is not traced", "error", "error",
                   fix="pass a value computed from the node's inputs with traced operations; a constant "
                   "output belongs in the deployment config, not the graph"),
        HazardKind("semantic-mismatch", "Graph disagrees with NumPy", "error", "error",
                   fix="the recorded torch op disagrees with NumPy here; rewrite the call with operations "
                   "whose results match (check axis, dtype and ddof arguments)"),
        HazardKind("data-dependent-shape", "Output shape depends on the input values", "warning", "warning",
                   fix="where the consumer needs one shape, keep it fixed: mask instead of selecting "
                   "(np.where(cond, x, 0.0) instead of x[cond], torch.where for tensors), or pad the selection "
                   "to a fixed length; or {split}"),
        HazardKind("training-mode", "Module called in training mode", "error", "error",
                   fix="call `.eval()` on the module before tracing (and keep it in eval mode for export): in "
                   "training mode {name} behaves differently on every call"),
        HazardKind("nondeterministic", "Random op inside a node", "error", "error",
                   fix="a random op gives a different value on every run, so the graph cannot match the eager "
                   "cell; draw the random values outside the node and pass them in as an input "
                   "(annotate.input_tensors), or remove the op for deployment"),
    ]
}

@dataclass(frozen=True)
class LibraryCheck:
    """A branch a library takes on its arguments' values to refuse bad ones (``if not valid.all(): raise``), known
    by the file (relative to the library's parent folder) and the function that branches: what to call it, and how
    to switch the check off for the trace."""

    library: str
    fix: str


_DISTRIBUTION_FIX = ("pass validate_args=False to the distribution (or call torch.distributions.Distribution."
                     "set_default_validate_args(False) once, before the cell): the exported graph cannot raise, so "
                     "check the values outside the node where they must be valid")
LIBRARY_CHECKS = {
    ("torch/distributions/distribution.py", "__init__"): LibraryCheck("torch.distributions", _DISTRIBUTION_FIX),
    ("torch/distributions/distribution.py", "_validate_sample"): LibraryCheck("torch.distributions",
                                                                              _DISTRIBUTION_FIX),
}


@dataclass(frozen=True)
class Cause:
    """One way a hazard of ``kind`` arises: its message template (``str.format`` fields named by the producer)
    and, where the kind's fix does not fit, its own fix template."""

    kind: str
    message: str
    fix: str | None = None


# A step computed between two nodes, from the first one's values (Session.outside)
_OUTSIDE_FIX = ("give its result to node '{node}' through annotate.input_tensors(\"{node}\", ...), so the step stays "
                "between the nodes for the deploying runtime to fill; or move this line into a node: into node "
                "'{producer}' before its annotate.output_tensors, or into node '{node}' after its "
                "annotate.input_tensors, computed from the values that call returns")

# broken-chain fixes for a 0-d value made by a call, and for Python's iteration over a 1-D array (the kind's own fix
# is about an index)
_KEEP_AN_AXIS = ("keep an axis on the call that made the 0-d value, so it stays an array: keepdims=True on the "
                 "reduction (np.sum(x, keepdims=True), x.max(keepdims=True)); x[i:i+1] instead of x[i]")
_WHOLE_ARRAY = ("work on the whole array instead of its elements: np.sum(x, keepdims=True) for sum(x), np.min(x, "
                "keepdims=True) and np.max(x, keepdims=True) for min(x) and max(x), array operations for a loop over "
                "x; to take elements apart, slice: a, b = x[0:1], x[1:2] (or np.split(x, n))")

_BAKED = "its result is computed once, from the trace-time inputs, and baked into the graph as constant {const}."

# Every message the engine, the probe and the LEAPP-defects check report, by cause.
# a failing output the probe found, whatever explains it
_PROBE_DIFFERS = "the probe found output '{output}' of node '{node}' differs from the eager cell on fresh inputs: " \
                 "{what}."
# the lookup of a plain table by a traced index, as LEAPP 0.7.2 records it (measured: benchmarks/leapp_cases.py)
_TABLE_FIX = ("select with np.where on the index instead, which LEAPP 0.7.2 records (np.where(i == 0, T[0], "
              "np.where(i == 1, T[1], T[2])) for a table T of three rows)")
CAUSES: dict[str, Cause] = {
    # untraced-call: a value computed outside the graph is baked
    "tainted-plain": Cause("untraced-call", "a plain array that received traced data ({origin}) is used here: "
                           "it is baked as constant {const}.",
                           "change that write so that no plain array receives traced data: bind the result to a "
                           "name (`y = np.add(a, b)`, not `out=`), or write into an array the cell makes from "
                           "traced data (`np.zeros_like(h)`)"),
    "stale-view": Cause("untraced-call", "{target} shares memory with a value written in place after it was "
                        "taken (a view, the base of a written view, or a view across torch.from_numpy / .numpy()): "
                        "the eager value changed, the recorded one did not, so its trace-time value is baked as "
                        "constant {const}.",
                        "take the view after the write, or copy before writing (x = x.copy(), t = t.clone(), "
                        "torch.tensor(x) instead of torch.from_numpy(x))"),
    "other-node": Cause("untraced-call", "a value traced in node '{producer}', used in node '{node}' without "
                        "input_tensors: it is baked as constant {const}.",
                        fix="give the value to node '{node}' through annotate.input_tensors(\"{node}\", ...) and "
                        "compute with what that call returns (the value must be an output of node '{producer}', "
                        "or be computed inside node '{node}')"),
    "lost-used": Cause("untraced-call", "an array {origin} is used: it is baked as constant {const}{at}."),
    "outside-used": Cause("untraced-call", "a value {origin}, is used{at}: no node records that step, so the value "
                          "is baked as constant {const}.", fix=_OUTSIDE_FIX),
    "outside-scalar-used": Cause("value-extraction", "a scalar computed outside any node from values of node "
                                 "'{producer}' ({what}) is used{at}: node '{node}' has it as a literal, its "
                                 "trace-time value.", fix=_OUTSIDE_FIX + " (keep it an array: np.sum(x, "
                                 "keepdims=True), not np.sum(x))"),
    "hidden-write": Cause("untraced-call", "an array written by code the tracer cannot see (compiled code?) is used "
                          "here; its contents may depend on traced data and are baked as constant {const}."),
    "not-in-lookup": Cause("untraced-call", "{why}{where}: " + _BAKED),
    "not-in-lookup-many": Cause("untraced-call", "{why}{where}: its results are computed once, from the "
                                "trace-time inputs, and baked into the graph as constants {const}."),
    "not-in-lookup-in-place": Cause("untraced-call", "{why}{where}: it modifies its array arguments in place, which "
                                    "the tracer does not record; each modified array is baked as a constant "
                                    "wherever it is used."),
    "python-value": Cause("untraced-call", "{why}{where}: it returns a Python value ({value}) fixed at trace time; "
                          "whatever uses it is frozen in the graph."),
    "python-objects": Cause("untraced-call", "{why}{where}: it returns an array of {dtype} values, which no graph "
                            "holds: whatever is computed from it is fixed at trace time and frozen in the graph."),
    "leapp-does-not-record": Cause("untraced-call", "{name} is recorded here, but LEAPP 0.7.2's lookup does not "
                                   "record it: exported with LEAPP, its result would be baked as a constant."),
    "out-into-plain": Cause("untraced-call", "{name} writes traced data into a plain array through out=; the tracer "
                            "cannot follow it, so that array is baked wherever it is used."),
    "item-into-plain": Cause("untraced-call", "traced data is written into {name}[...], a plain array (made outside "
                             "the cell, or by code other than NumPy's own functions): the tracer cannot follow an "
                             "item assignment into it, so {name} is baked as a constant wherever it is used.",
                             "write into an array the cell makes from traced data instead (`{name} = "
                             "np.zeros_like(h)` for a traced h of its shape: writes into it are recorded in both "
                             "profiles), or build the value without a buffer (np.concatenate, np.stack)"),
    "in-place-method": Cause("untraced-call", "{name} modifies a traced array in place, which the tracer does not "
                             "record: the array is baked as a constant wherever it is used."),
    "attribute-assigned": Cause("untraced-call", "assigning {name} changes a traced array in place, which the tracer "
                                "does not record: the array is baked as a constant wherever it is used.",
                                "make a new array instead of changing this one: `x = x.reshape(shape)` for "
                                "`x.shape = shape` is recorded; a dtype assignment reinterprets the bytes, which no "
                                "graph records (`x = x.astype(dtype)` if a conversion was meant); a strides "
                                "assignment makes a view no graph records (slicing or `x.T` for what it meant)"),
    "write-into-untraced": Cause("untraced-call", "traced data is written into an untraced array ({target} = ...): "
                                 "LEAPP 0.7.2 does not record the write, so that array is baked as a constant "
                                 "wherever it is used (it logs nothing)."),
    "table-index-baked": Cause("untraced-call", "{expr} indexes a plain array with traced data: the array's own "
                               "indexing runs in C, which LEAPP 0.7.2 does not see, so it bakes the values looked up "
                               "on the trace inputs as constant {const} (measured: silently, its replay validation "
                               "passes).", _TABLE_FIX),
    "table-index-recorded": Cause("untraced-call", "{expr} indexes a plain array with traced data: recorded here as an "
                                  "index into the array's constant, but LEAPP 0.7.2 does not see the array's own "
                                  "indexing (it runs in C) and bakes the values looked up on the trace inputs "
                                  "(measured: silently, its replay validation passes).", _TABLE_FIX),
    "other-thread": Cause("untraced-call", "traced data is used in a thread the cell started ({name}): the tracer "
                          "records only the cell's own thread, so the result is baked wherever it is used.",
                          "compute it in the cell's own thread, or split the node around the threaded step"),
    "input-written": Cause("untraced-call", "node input '{input}' is written in place: the eager cell changes the "
                           "caller's {kind}, the exported graph does not, and any view of it taken before is baked.",
                           "copy the input before writing ({input} = {input}.{copy}())"),
    "output-changed-between": Cause("untraced-call", "node input '{input}' is output '{output}' of node '{producer}', "
                                    "written in place after that node received its outputs: a LEAPP pipeline gives "
                                    "node '{node}' what node '{producer}' outputs, the eager cell the value as "
                                    "written.",
                                    "make the change inside node '{producer}', before its annotate.output_tensors; "
                                    "or compute it into a new value (y = x + 2, not x += 2) and declare that as "
                                    "input '{input}'"),
    "input-hidden-write": Cause("untraced-call", "node input '{input}' changed while the node ran, by a write the "
                                "tracer did not see (into the array or tensor the input was made from, by plain "
                                "NumPy or compiled code): the eager cell reads the changed value after that write, "
                                "the graph the value the node was given.",
                                "declare a copy as input '{input}' (value.copy() in annotate.input_tensors, "
                                "value.clone() for a tensor), and make the write on the node's own values"),
    "torch-unrecordable": Cause("untraced-call", "{name} cannot be recorded: " + _BAKED),
    "numpy-on-tensor": Cause("untraced-call", "a NumPy function applied to a torch tensor is not recorded: NumPy "
                             "converts the tensor and wraps its result back; " + _BAKED,
                             "convert explicitly before the NumPy call (t.numpy(), which keeps the chain), or call "
                             "the torch function (torch.tanh(t) for np.tanh(t))"),
    # broken-chain: a value leaves the graph as a NumPy scalar
    "scalar-result-baked": Cause("broken-chain", "{name} on 0-d traced values returns a NumPy scalar ({type}), "
                                 "which LEAPP 0.7.2 does not trace (it logs nothing): its trace-time value is baked "
                                 "as constant {const}.", _KEEP_AN_AXIS),
    "scalar-result-kept": Cause("broken-chain", "{name} on 0-d traced values returns a NumPy scalar ({type}), which "
                                "LEAPP 0.7.2 does not trace (it logs nothing); recorded here as a 0-d tensor.",
                                _KEEP_AN_AXIS),
    "scalar-key-baked": Cause("broken-chain", "{what} a NumPy scalar ({type}), which is not traced: its "
                              "trace-time value is baked as constant {const}."),
    "scalar-key-kept": Cause("broken-chain", "{what} a NumPy scalar; recorded here as a 0-d tensor. LEAPP 0.7.2 "
                             "stops tracing there and bakes the value."),
    "scalar-iteration-baked": Cause("broken-chain", "iterating over a 1-D traced array (a for loop, unpacking, or "
                                    "Python's sum(), min(), max() over it) yields NumPy scalars ({type}), which are "
                                    "not traced: their trace-time values are baked as constant {const}.",
                                    _WHOLE_ARRAY),
    "scalar-iteration-kept": Cause("broken-chain", "iterating over a 1-D traced array (a for loop, unpacking, or "
                                   "Python's sum(), min(), max() over it) yields NumPy scalars; recorded here as 0-d "
                                   "tensors. LEAPP 0.7.2 stops tracing there and bakes the values.", _WHOLE_ARRAY),
    "flat": Cause("broken-chain", "{what}, which are not traced: whatever is computed from them is baked into the "
                  "graph."),
    # reversed-slice
    "reversed-with-index-arrays": Cause("reversed-slice", "{expr} mixes a reversed slice with index arrays, which "
                                        "the tracer cannot record; its trace-time value is baked as constant "
                                        "{const}."),
    "reversed-flipped": Cause("reversed-slice", "{expr} has a negative step; recorded here as a slice and a "
                              "torch.flip. LEAPP 0.7.2 records the slice unreversed (torch has no negative "
                              "strides), so its export would return the elements in the wrong order."),
    "reversed-unreversed": Cause("reversed-slice", "{expr} reverses the eager value, but the recorded graph slices "
                                 "without reversing (torch has no negative strides): the export returns these "
                                 "elements in the original order."),
    # numpy-scalar
    "numpy-scalar-operand": Cause("numpy-scalar", "a NumPy scalar ({scalar}) is an operand of {call}. LEAPP's "
                                  "documentation says NumPy scalar operands raise NotImplementedError while "
                                  "tracing; LEAPP 0.7.2 as measured records them, but torch treats them as weakly "
                                  "typed, so with a wider scalar (np.float64 on float32 data) the exported dtype "
                                  "differs from NumPy's{recorded}"),
    "numpy-scalar-on-tensor": Cause("numpy-scalar", "a NumPy scalar ({scalar}) is an operand of {call} on a torch "
                                    "tensor: LEAPP 0.7.2 raises NotImplementedError while tracing; recorded here as "
                                    "a Python number."),
    "script-function": Cause("untraced-call", "{name} is a TorchScript function: it runs in C++, where LEAPP 0.7.2 "
                             "sees none of its ops (it logs \"ScriptFunction.__call__ bypasses TracedTensor "
                             "tracing\"), so its result leaves the trace (measured: an export wrong by 0.91 once the "
                             "branch inside it goes the other way, and an output that is the function's own input "
                             "refused). Recorded here as one call of the function, its branches kept.",
                             "define the function without @torch.jit.script (LEAPP records its ops then), or call "
                             "torch.jit._state.disable() before it is scripted"),
    # values leaving the graph through Python
    "selection-size": Cause("value-extraction", "{what} reads how many elements a selection by the data ({selection}) "
                            "holds, as a Python number: it is fixed at its trace-time value, and whatever uses it (a "
                            "division, a branch, a loop's passes) is frozen in the graph.",
                            "count with the mask instead, which stays in the graph: n = np.sum(mask) (torch: "
                            "mask.sum()); a mean over the selection: np.sum(np.where(mask, x, 0)) / np.maximum(n, 1); "
                            "a branch on it: np.where(n > 0, a, b); a loop over the rows: "
                            "np.where(mask[:, None], f(x), ...) on every row"),
    "extracted": Cause("value-extraction", "a Python value is extracted from traced data ({what}): it is fixed at "
                       "its trace-time value and whatever uses it is frozen in the graph."),
    "extracted-logged": Cause("value-extraction", "a Python value is taken from traced data here only to be logged "
                              "({what}): nothing the node returns depends on it, and the exported node never logs.",
                              "nothing to change for the graph; to keep the message in deployment, log from the code "
                              "that calls the node"),
    "extracted-between": Cause("value-extraction", "a scalar is taken from values of node '{producer}' "
                               "outside any node ({what}): node '{node}', declared after it, has its trace-time value "
                               "as a literal wherever it uses it.",
                               fix="keep the value an array (without float(), int() or .item()) and give it to node "
                               "'{node}' through annotate.input_tensors(\"{node}\", ...); or compute it inside node "
                               "'{node}' from the values that call returns"),
    "branch-between": Cause("data-dependent-branch", "the truth value of values of node '{producer}' decides control "
                            "flow outside any node ({what}): node '{node}', declared after it, holds only what the "
                            "branch taken during tracing gave it.",
                            fix="give the values the condition reads to node '{node}' through "
                            "annotate.input_tensors(\"{node}\", ...), compute the condition there, and select with "
                            "np.where / torch.where instead of branching"),
    "branch": Cause("data-dependent-branch", "the truth value of traced data decides control flow here ({what}): "
                    "the graph holds only the branch taken during tracing{note}"),
    # a branch whose other path only raises, or whose body only logs: the graph is the same either way
    "branch-check": Cause("data-dependent-branch", "the truth value of traced data decides only whether the code "
                          "raises here ({what}): the graph keeps no such check, so the exported node returns values "
                          "for inputs on which the cell raises instead{note}",
                          "nothing to change for the inputs the check accepts; to keep the check in deployment, run "
                          "it on the node's inputs where the node is called, or make the graph's result defined for "
                          "the inputs it refuses (np.nan_to_num, np.clip)"),
    "branch-log": Cause("data-dependent-branch", "the truth value of traced data decides only whether the code logs "
                        "here ({what}): nothing the node returns depends on it, and the exported node never logs{note}",
                        "nothing to change for the graph; to keep the message in deployment, log from the code that "
                        "calls the node"),
    # a branch inside a library's own code that checks its arguments (LIBRARY_CHECKS): named, with its switch
    "library-check": Cause("data-dependent-branch", "{library} checks its arguments on traced data here ({what}): "
                           "the graph cannot hold the check, so a value it would refuse runs through the exported "
                           "graph instead of raising{note}"),
    "untraced-output": Cause("untraced-output", "output '{output}' of node '{node}' is not computed from the node's "
                             "inputs by traced operations ({type}); LEAPP raises \"output_tensors() for node "
                             "'{node}' received non-traced tensors\" for a plain value, and exports a constant "
                             "otherwise."),
    # semantic-mismatch: the graph (or LEAPP's) disagrees with the eager code
    "leapp-records-wrongly": Cause("semantic-mismatch", "{name} is recorded correctly here, but LEAPP 0.7.2 records "
                                   "it wrongly: {what}."),
    "leapp-check-failed": Cause("semantic-mismatch", "whether LEAPP 0.7.2 records {name} correctly here could not be "
                                "checked ({error}); our graph records it faithfully.",
                                "compare this call with LEAPP itself (benchmarks/leapp_comparison.py)"),
    "output-aliases-input": Cause("semantic-mismatch", "output '{output}' ({call} of input '{input}') is recorded "
                                  "correctly here, but LEAPP 0.7.2 records it wrongly: {what}."),
    "tie-order": Cause("semantic-mismatch", "np.argsort with NumPy's default kind orders equal values its own way "
                       "(the default sort is not stable), and the graph's sort is stable: on inputs with ties (clipped "
                       "or saturated readings, quantized values) the exported indices can differ from the cell's.",
                       "pass kind='stable' where ties can occur (the cell then orders ties as the graph does; LEAPP "
                       "0.7.2 drops kind=, see its own hazard), or break ties explicitly (x * n + np.arange(n) for "
                       "integers)"),
    "op-fails": Cause("semantic-mismatch", "the torch op recorded for {call} fails on the trace inputs: {error}"),
    "shape-differs": Cause("semantic-mismatch", "{call}: the graph computes shape {got} where the eager code gives "
                           "{want}"),
    "probe-differs": Cause("semantic-mismatch", _PROBE_DIFFERS),
    "probe-differs-baked": Cause("semantic-mismatch", _PROBE_DIFFERS,
                                 "the output depends on {consts}, which the trace holds fixed at its trace-time "
                                 "value (line {source_line}): compute it with traced operations there, or split "
                                 "the node at that line"),
    "probe-stateful": Cause("semantic-mismatch", _PROBE_DIFFERS,
                            "make the cell a function of its inputs: compute what a cache or a counter holds from "
                            "the inputs on every run, or make that state a node input and output "
                            "(annotate.input_tensors / annotate.output_tensors) that the deployment passes back"),
    "probe-shape-varies": Cause("data-dependent-shape", "the shape of output '{output}' of node '{node}' depends on "
                                "the input values: {declared} when traced, {got} on fresh inputs (probe {probe}). "
                                "The graph follows NumPy, and LEAPP's InferenceManager passes each run's value on "
                                "whatever its shape, but the exported pipeline declares {declared}: a consumer that "
                                "sizes its buffers from the declared shapes gets values of another length."),
    "probe-input-shape-varies": Cause("data-dependent-shape", "input '{input}' of node '{node}' {computed}, and its "
                                      "shape depends on the input values: {declared} when traced, {got} on fresh "
                                      "inputs (probe {probe}). The exported pipeline declares {declared} for it: the "
                                      "deploying runtime, which computes it, gives values of another length.",
                                      "where the consumer needs one shape, keep it fixed in the step that computes "
                                      "'{input}': mask instead of selecting (np.where(cond, x, 0.0) instead of "
                                      "x[cond], torch.where for tensors), or pad the selection to a fixed length"),
    # torch-side
    "training": Cause("training-mode", "{name} ({type}) is called in training mode, and {dependent} "
                      "{verb} differently in training ({how}): the graph differs from the deployed model, which runs "
                      "in eval mode."),
    "autograd": Cause("untraced-call", "{call} takes a gradient inside the node: the graph records neither "
                      "requires_grad_() nor the grad mode the cell runs in, and the probe and the exports run it "
                      "without autograd, so the graph raises (\"element 0 of tensors does not require grad\") on "
                      "every input.",
                      "compute the derivative in the cell with traced operations (3 * x ** 2 for the gradient of "
                      "(x ** 3).sum(); torch.func is not traced either), or take the gradient outside the node and "
                      "pass it in (annotate.input_tensors)"),
    "seeded-random": Cause("nondeterministic", "{call} draws from a generator the cell seeds first ({seed}): the same "
                           "values on every run, which the graph holds as a constant. The graph and the eager cell "
                           "agree; the exported node adds those fixed values, not fresh noise.",
                           "if the values are meant to change between runs, draw them outside the node and pass them "
                           "in (annotate.input_tensors); if they are meant to be fixed, compute them once, outside the "
                           "node, and use them as a constant"),
    "random": Cause("nondeterministic", "{call} draws random values inside node '{node}': the graph cannot match "
                    "the eager cell on any run, and the exported node is not deterministic."),
    # found inside a module's own forward, which the graph holds whole (one call_module node, run as it is)
    "exception-branch": Cause("data-dependent-branch", "the cell catches {caught} around traced operations "
                              "(lines {first}-{last}, the handler's included): an input that makes NumPy or torch "
                              "raise there (a zero divisor under np.errstate(divide='raise'), an index out of range, "
                              "a singular matrix) takes the handler at line {handler} in the cell, and one that does "
                              "not takes the try body, while the graph holds only the path the trace inputs took: it "
                              "raises there, or computes on with NaN or inf.",
                              "compute both paths and select with np.where (y = np.where(s == 0, fallback, x / "
                              "np.where(s == 0, 1, s))); clip an index instead of catching IndexError (np.clip(i, 0, "
                              "n - 1)); keep try/except for errors that do not depend on the data"),
    "module-branch": Cause("data-dependent-branch", "{module}'s forward decides control flow on traced data "
                           "({where}: `{text}`): the graph holds the module whole and runs its branch, but the "
                           "exports that trace it (jit-trace, ONNX) keep only the branch taken on the trace inputs, "
                           "torch.export refuses it, and LEAPP 0.7.2, which records the module's ops one by one, "
                           "freezes it.",
                           fix="select instead of branching inside forward: compute both results and pick with "
                           "torch.where(condition, a, b) (a norm limit: a * torch.clamp(limit / n, max=1.0)); or "
                           "export only with export_with='jit' (TorchScript keeps the branch)"),
    "module-extraction": Cause("value-extraction", "{module}'s forward takes a Python value from traced data "
                               "({where}: `{text}`): the exports that trace it (jit-trace, ONNX) and LEAPP 0.7.2 fix "
                               "it at its trace-time value.",
                               fix="keep the value a tensor inside forward (no .item(), float(), int() or .tolist())"),
    "module-object": Cause("untraced-call", "{module}(...) returns a {type}, not tensors: the graph holds what a "
                           "module call returns only as tensors, so whatever the cell takes from it is fixed at its "
                           "trace-time value.",
                           fix="return tensors from forward (one, a tuple or a dict of them; a Gaussian policy: "
                           "return mu, std) and build the "
                           "object in the cell from them (torch.distributions.Normal(mu, std, validate_args=False)), "
                           "which is recorded"),
    "module-state": Cause("untraced-call", "{module}'s forward keeps a value computed from its input on the module "
                          "({where}: `{text}`): the next call reads it, so its result depends on the calls before "
                          "it, which the exported node (one call, its declared inputs only) cannot carry.",
                          fix="pass the state in and out of the node: give the module's forward the state as an "
                          "argument and return the new one (a, h = policy(obs, h)), declare h with "
                          "annotate.input_tensors and annotate.output_tensors, and keep it between calls outside "
                          "the node"),
    "module-random": Cause("nondeterministic", "{module}'s forward draws random values ({call} at {where}: `{text}`): "
                           "the graph cannot match the eager cell on any run, and the exported node is not "
                           "deterministic.",
                           fix="draw the noise outside the node and pass it in with annotate.input_tensors, or "
                           "leave it out of the deployed forward"),
}


# Calls LEAPP 0.7.2 never sees with traced data, where NumPy runs another function on it inside (measured): the
# function LEAPP's log names, and what the message says after "<call> is not in ...'s lookup"
LEAPP_LOGS: dict[str, tuple[str, str]] = {
    "np.full": ("copyto", " with a traced fill value, which NumPy copies in with np.copyto"),
    "np.full_like": ("copyto", " with a traced fill value, which NumPy copies in with np.copyto"),
}

# Rewrites in traced operations for calls LEAPP 0.7.2 does not record.
REWRITES: dict[str, str] = {
    "np.full": "np.zeros(shape, dtype) + fill, which LEAPP records (dtype: the one np.full gives, the fill value's "
               "own when none is given)",
    "np.full_like": "np.zeros_like(a) + fill, which LEAPP records (.astype(a.dtype) where the sum's dtype differs)",
    "np.linalg.norm": "np.sqrt(np.sum(v * v, axis=-1, keepdims=True))",
    "np.append": "np.concatenate([a, b])",
    "np.pad": "np.concatenate([np.zeros_like(x[:1]), x, np.zeros_like(x[:1])])",
    "np.cross": "np.stack([a[..., 1]*b[..., 2] - a[..., 2]*b[..., 1], a[..., 2]*b[..., 0] - a[..., 0]*b[..., 2], "
                "a[..., 0]*b[..., 1] - a[..., 1]*b[..., 0]], axis=-1)",
    "np.asarray": "use the traced array itself (drop np.asarray), or x.astype(dtype) to convert",
    "np.array": "use the traced array itself, or np.stack([...], axis=0) / np.concatenate for lists of "
                "traced values",
    "np.array([...])": "np.stack([...]) or np.concatenate([...]) of slices that keep an axis",
    "np.ravel": "x.reshape(-1)",
    "np.amax": "np.max(x, axis=...)",
    "np.amin": "np.min(x, axis=...)",
    "np.atleast_1d": "x.reshape(-1) or np.expand_dims",
    "np.atleast_2d": "np.expand_dims(x, 0)",
    "np.fliplr": "np.flip(x, axis=1)",
    "np.flipud": "np.flip(x, axis=0)",
    "np.copy": "x.copy()",
    "ndarray.prod": "np.prod(x, axis=...)",
    "ndarray.dot": "np.dot(a, b) or a @ b",
    "ndarray.argsort": "np.argsort(x, axis=...)",
    "ndarray.nonzero": "np.nonzero(x)",
    "ndarray.diagonal": "np.diagonal(x)",
    "ndarray.trace": "np.trace(x)",
    "ndarray.sort": "x = np.sort(x, axis=...)",
}

SPLIT_FIX = ("split the node: call annotate.output_tensors(...) with the values just before line {line} "
             "and annotate.input_tensors(...) with its result after it, so the gap becomes an explicit "
             "graph boundary that the deploying runtime fills")


def fix_for(kind: str, *, line: int | None, code: str, name: str = "", profile: str = "leapp",
            recorded_by_full: bool = False) -> str:
    """The fix text for one hazard at one line (``line`` None: a hazard of no cell line, an output given to
    ``trace_cell``, say: the text names none)."""
    code = code.strip()
    split = SPLIT_FIX.format(line=line) if line is not None else SPLIT_FIX.replace("line {line}", "that value")
    if kind == "untraced-call":
        rewrite = REWRITES.get(name)
        parts = []
        if rewrite:
            parts.append(f"rewrite {name} in traced operations: {rewrite}")
        if recorded_by_full and profile == "leapp":
            parts.append(f"trace with profile='full' to record {name} here (LEAPP 0.7.2 itself will still bake it)")
        parts.append(split)
        text = "; or ".join(parts) + "."
    else:
        text = CATALOGUE[kind].fix.format(split=split, name=name or "it") + "."  # KeyError for an unknown kind
    if line is None:
        return text[:1].upper() + text[1:]
    return f"At line {line} (`{code}`): {text}" if code else f"At line {line}: {text}"


def add(table: dict[tuple[str, int | None], Hazard], cause: str, line: int | None, graph_nodes: list[str], *,
        node: str, profile: str, code: str, name: str = "", location: str | None = None,
        severity: str | None = None, fix: str | None = None, recorded_by_full: bool = False,
        **fields: Any) -> tuple[Hazard, bool]:
    """Report a hazard of ``cause`` (a key of :data:`CAUSES`) into ``table`` (one node's hazards by kind and line);
    ``fields`` fill the cause's templates. Returns the hazard and whether it is new.

    A second report of the same kind on the same line merges into the first: its graph nodes are added,
    its message appended when it names something new (``name``) or makes the hazard an error, and an ``error``
    severity wins, given or the kind's own in ``profile`` (an op that fails on the trace inputs, after a warning
    that LEAPP records the same call wrongly, is an error, and says why).
    """
    entry = CAUSES[cause]
    kind = entry.kind
    message = entry.message.format(name=name, node=node, **fields)
    if fix is None and entry.fix is not None:
        fix = entry.fix.format(name=name, node=node, **fields)
    key = (kind, line)
    existing = table.get(key)
    if existing is not None:
        merge_names(existing, graph_nodes)
        error = (severity or _severity(kind, profile)) == "error"
        if (name and name not in existing.message) or (error and existing.severity != "error"):
            existing.message += f" Also on this line: {message}"
        if error:
            existing.severity = "error"
        return existing, False
    if fix is not None:
        fix_text = f"At line {line} (`{code.strip()}`): {fix}."
    else:
        fix_text = fix_for(kind, line=line, code=code, name=name, profile=profile, recorded_by_full=recorded_by_full)
    hazard = Hazard(kind=kind, severity=severity or _severity(kind, profile), node=node, line=line, code=code,
                    message=message, fix=fix_text, graph_nodes=list(graph_nodes), location=location)
    table[key] = hazard
    return hazard, True


def merge_names(hazard: Hazard, names: list[str]) -> None:
    """Append to ``hazard.graph_nodes`` the ``names`` it does not list yet. A loop repeats a hazard on every pass,
    so the list grows with the cell: membership is asked of a set kept beside it (``_listed``: the list, its length
    when they were last in step, and the set; not a field of the dataclass), made again when the list was replaced
    or changed length without it (a scan of the list on every report made a 10,000-pass loop's trace 4x slower)."""
    listed = hazard.graph_nodes
    kept = hazard.__dict__.get("_listed")
    if kept is None or kept[0] is not listed or kept[1] != len(listed):
        kept = [listed, len(listed), set(listed)]
        hazard.__dict__["_listed"] = kept
    seen = kept[2]
    for name in names:
        if name not in seen:
            seen.add(name)
            listed.append(name)
    kept[1] = len(listed)


def _severity(kind: str, profile: str) -> str:
    entry = CATALOGUE[kind]
    return entry.leapp_severity if profile == "leapp" else entry.full_severity
