"""The probe: each node's graph against the eager cell on fresh random inputs.

Replaying the inputs a graph was traced with cannot expose a baked constant: the constant was computed
from exactly those inputs, so the replay agrees by construction. The probe draws new inputs of each
traced input's shape and dtype, re-runs the cell untraced and runs the graph on the same inputs, and
compares value, shape and dtype.

Consecutive probes differ in exactly one input (probe 0 draws every input, probe j redraws input
(j-1) mod k), so every pair of neighbours tells, at no extra cost, whether an output moves with that
input in the eager code and whether the graph moves *the same way*. An output that follows an input
eagerly while the graph does not is a baking candidate; one retrace of the cell on inputs that
exposed it names the graph values that depend on the inputs (constants and inlined literals that
differ between the two traces, or a changed graph structure: a data-dependent branch). Mismatches no
standing error hazard explains become ``semantic-mismatch`` hazards on the node.
"""

from __future__ import annotations

import math
import sys
import time
import weakref
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator, Mapping

import numpy as np
import torch
import torch.fx

from .tracing import hazards as hz
from .tracing.facts import facts
from .tracing.provenance import ancestors, cell_lines, line_text, output_node
from .tracing.types import CellError, Hazard, Node, TraceError

__all__ = ["probe", "ProbeReport", "OutputCheck", "Mismatch", "BakedConstant", "draw_inputs", "input_ranges"]

# (rtol, atol) per dtype; atol is scaled by max(1, max|expected|) so large outputs are not held to an
# absolute bound below their own rounding. float32 uses LEAPP's own validation tolerance: torch and NumPy
# kernels differ in the last bits, and a few hundred chained ops carry that to ~1e-4 relative.
_TOLERANCE = {"f2": (1e-2, 1e-3), "f4": (1e-3, 1e-5), "f8": (1e-7, 1e-10), "c8": (1e-3, 1e-5),
              "c16": (1e-7, 1e-10)}
_PAD = 0.1  # fraction of the traced range added on each side
# Elements per chunk when drawing and comparing: large arrays are processed chunk by chunk, so the
# probe's temporaries stay a few chunks in size (cache-sized) whatever the size of the cell's arrays.
_CHUNK = 1 << 16
_SMALL = 1 << 12  # up to this many elements, comparisons allocate their few temporaries instead of reusing scratch
_F32 = np.dtype(np.float32)
_REAL = {"F": np.dtype(np.float32), "D": np.dtype(np.float64), "G": np.dtype(np.longdouble)}
_ZERO = np.float64(0.0)


def tolerance(dtype: np.dtype) -> tuple[float, float]:
    """(rtol, atol) used to compare values of ``dtype``; integers and booleans compare exactly."""
    return _TOLERANCE.get(f"{dtype.kind}{dtype.itemsize}", (0.0, 0.0))


# ------------------------------------------------------------------------------------------
# the report
# ------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Mismatch:
    """The first probe where an output disagreed. ``inputs`` ({node: {input: array}}) reproduce it
    with ``trace.run_eager(inputs)`` and ``trace.retrace(inputs)``."""

    probe: int
    what: str  # "value" | "shape" | "dtype" | "error"; "varying shape" for OutputCheck.varying_shape
    index: tuple[int, ...] | None
    expected: Any
    got: Any
    inputs: dict[str, dict[str, np.ndarray]] = field(repr=False)

    def describe(self) -> str:
        if self.what == "value":
            return f"value at index {self.index}: the eager cell gives {self.expected!r}, the graph gives {self.got!r}"
        if self.what == "error":
            return f"the graph raises: {self.got}"
        if self.what == "varying shape":  # the graph agrees with NumPy; the node's declared shape does not
            return f"shape: the eager cell gives {self.expected} on these inputs (and so does the graph), where the " \
                   f"node declares {self.got}, its shape when traced"
        return f"{self.what}: the eager cell gives {self.expected}, the graph gives {self.got}"


@dataclass
class OutputCheck:
    """One output over all probes. ``mismatches`` counts the probes in which it disagreed."""

    node: str
    output: str
    shape: tuple[int, ...]
    dtype: str
    mismatches: int = 0
    max_abs_err: float = 0.0
    max_rel_err: float = 0.0
    shape_ok: bool = True
    dtype_ok: bool = True
    first_mismatch: Mismatch | None = None
    # the first probe whose eager value took another shape than the node declares, the graph's agreeing (a shape
    # that depends on the input values: a ``data-dependent-shape`` warning, not a failure)
    varying_shape: Mismatch | None = None

    @property
    def passed(self) -> bool:
        return self.mismatches == 0

    @property
    def expected(self) -> Any:
        return None if self.first_mismatch is None else self.first_mismatch.expected

    @property
    def got(self) -> Any:
        return None if self.first_mismatch is None else self.first_mismatch.got


@dataclass(frozen=True)
class BakedConstant:
    """A graph value that depends on the inputs although the graph holds it fixed.

    ``kind``: "constant" (a ``get_attr`` tensor), "literal" (a number inlined in the op ``node``),
    "branch" (the graph's structure changed on retrace: only one branch was recorded).
    ``hazard_lines``: cell lines of the node's hazards that name this graph node or its line.
    """

    node: str
    line: int | None
    kind: str
    hazard_lines: tuple[int, ...] = ()
    traced: Any = None
    retraced: Any = None


@dataclass
class ProbeReport:
    """What ``Trace.probe`` found. Output keys are output names, or "node/output" for several nodes.

    ``sensitivity[output][input] = (eager_follows, graph_follows)``: whether the eager output changed
    when only that input changed, and whether the graph's output moved with it the same way.
    """

    passed: bool
    n: int
    seed: int
    outputs: dict[str, OutputCheck]
    baked: list[str]
    sensitivity: dict[str, dict[str, tuple[bool, bool]]]
    baked_constants: dict[str, list[BakedConstant]]
    ranges: dict[str, tuple[float, float] | None]
    hazards: list[Hazard] = field(default_factory=list)  # the hazards this probe added (semantic-mismatch,
    # data-dependent-shape)
    seconds: float = 0.0
    graph_key: tuple[Any, ...] = field(default=(), repr=False)

    @property
    def failed(self) -> list[str]:
        return [key for key, check in self.outputs.items() if not check.passed]

    def to_dict(self) -> dict[str, Any]:
        """The one JSON-safe projection of the report (the CLI's JSON, the graph model, the export YAML):
        non-finite and complex numbers become strings. An output baked by the probe does not pass."""
        outputs = {}
        for key, check in self.outputs.items():
            outputs[str(key)] = {
                "passed": bool(check.passed) and key not in self.baked,
                "max_abs_err": _json_number(check.max_abs_err),
                "max_rel_err": _json_number(check.max_rel_err),
                "mismatches": int(check.mismatches),
                "shape_ok": bool(check.shape_ok),
                "dtype_ok": bool(check.dtype_ok),
                "baked": key in self.baked,
                "baked_constants": [str(c.node or "") for c in self.baked_constants.get(key, ())],
                "first_mismatch": None if check.first_mismatch is None else check.first_mismatch.describe(),
                "varying_shape": None if check.varying_shape is None else check.varying_shape.describe(),
                "n": self.n,
            }
        return {"passed": bool(self.passed), "n": self.n, "seed": self.seed, "failed": [str(k) for k in self.failed],
                "baked": [str(k) for k in self.baked], "outputs": outputs}

    def __str__(self) -> str:
        verdict = "passed" if self.passed else "FAILED"
        lines = [f"Probe of {self.n} fresh inputs (seed {self.seed}): {verdict} in {self.seconds:.3f} s"]
        for key, check in self.outputs.items():
            shape = _shape_text(check.shape)
            status = "ok" if check.passed else f"FAIL in {check.mismatches}/{self.n} probes"
            lines.append(f"  {key}: {check.dtype} {shape} {status}, max abs err {check.max_abs_err:.3g}, "
                         f"max rel err {check.max_rel_err:.3g}")
            if check.first_mismatch is not None:
                lines.append(f"    first mismatch, probe {check.first_mismatch.probe}: "
                             f"{check.first_mismatch.describe()}")
            if check.varying_shape is not None:
                lines.append(f"    the shape depends on the input values, probe {check.varying_shape.probe}: "
                             f"{check.varying_shape.describe()}")
            for name, (eager, graph) in self.sensitivity.get(key, {}).items():
                if eager and not graph:
                    lines.append(f"    changes with '{name}' in the eager cell; the graph does not change the same way")
            for const in self.baked_constants.get(key, []):
                where = f"line {const.line}" if const.line is not None else "unknown line"
                hazard = ", no hazard reported it"
                if const.hazard_lines:
                    hazard = ", hazard at line " + ", ".join(map(str, const.hazard_lines))
                lines.append(f"    baked {const.kind} {const.node or '(graph structure)'} ({where}{hazard})")
        for hazard in self.hazards:
            lines.append(f"  added: line {hazard.line} [{hazard.severity}] {hazard.kind}: {hazard.message}")
        return "\n".join(lines)


def _json_number(value: Any) -> Any:
    """A number JSON can hold: NumPy scalars become Python ones, non-finite and complex ones strings."""
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, bool) or value is None or isinstance(value, int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    return str(value)


# ------------------------------------------------------------------------------------------
# fresh inputs
# ------------------------------------------------------------------------------------------

def _derived_range(sample: np.ndarray) -> tuple[float, float]:
    """The traced values' range, padded by 10% on each side without crossing zero (cells often rely
    on the sign: sqrt, log, indices); a degenerate range is widened around its value."""
    values = sample.real if sample.dtype.kind == "c" else sample
    if values.size == 0:
        return (-1.0, 1.0)
    lo, hi = float(values.min()), float(values.max())
    if not (math.isfinite(lo) and math.isfinite(hi)):  # NaN or infinities: the range of the finite values
        finite = values[np.isfinite(values)]
        if finite.size == 0:
            return (-1.0, 1.0)
        lo, hi = float(finite.min()), float(finite.max())
    span = hi - lo
    if span <= 1e-6 * max(abs(lo), abs(hi), 1.0):
        center = (lo + hi) / 2
        half = abs(center) / 2 if center else 1.0
        lo, hi = center - half, center + half
        return (max(lo, 0.0) if center > 0 else lo, min(hi, 0.0) if center < 0 else hi)
    pad = _PAD * span
    new_lo, new_hi = lo - pad, hi + pad
    if lo >= 0:
        new_lo = max(new_lo, 0.0)
    if hi <= 0:
        new_hi = min(new_hi, 0.0)
    return (new_lo, new_hi)


class _Sampler:
    """Draws one input: its traced shape and dtype, values within ``bounds``."""

    def __init__(self, key: str, sample: Any, bounds: tuple[float, float] | None):
        self.key = key
        self.kind = "torch" if isinstance(sample, torch.Tensor) else "numpy"
        sample = as_numpy(sample)
        self.shape = sample.shape
        self.dtype = sample.dtype
        if self.dtype.kind == "b":
            self.bounds = None
        elif bounds is not None:
            self.bounds = (float(bounds[0]), float(bounds[1]))
        elif self.dtype.kind in "iu" and sample.size:
            # integers are often indices, ids or counts: drawn within what the trace gave (one value v: 0..v),
            # never past it (an index input traced up to 4 was drawn up to 5, out of range for an axis of 5, so the
            # probe and the export could never run: found by an exploration session)
            lo, hi = int(sample.min()), int(sample.max())
            self.bounds = (float(min(lo, 0)), float(max(hi, 0))) if lo == hi else (float(lo), float(hi))
        else:
            self.bounds = _derived_range(sample)
        if self.dtype.kind in "iu":
            info = np.iinfo(self.dtype)
            lo, hi = self.bounds
            lo, hi = int(np.floor(lo)), int(np.ceil(hi))
            self.bounds = (max(lo, info.min), min(hi, info.max))

    def draw(self, rng: np.random.Generator) -> Any:
        """A fresh input of the traced input's kind: an ndarray, or a tensor for a torch input."""
        array = np.empty(self.shape, self.dtype)
        self.fill(array, rng)
        return torch.from_numpy(array) if self.kind == "torch" else array

    def fill(self, out: np.ndarray, rng: np.random.Generator) -> None:
        """Draw into ``out`` (C-contiguous, the traced shape and dtype) in place.

        The values are exactly NumPy's ``rng.uniform(lo, hi, shape).astype(dtype)`` (complex: real parts,
        then imaginary parts), ``rng.random(shape) < 0.5`` for booleans and ``rng.integers`` for
        integers, but floats and booleans go through one float64 scratch chunk of at most ``_CHUNK``
        values instead of a float64 array of the input's size.
        """
        kind = self.dtype.kind
        if kind in "iu":
            # Bounded integers take no out=, and drawing them by chunks would change 8- and 16-bit values
            # (NumPy buffers their 32-bit draws per call): drawn whole, then copied in.
            lo, hi = self.bounds
            np.copyto(out, rng.integers(int(lo), int(hi), size=self.shape, dtype=self.dtype, endpoint=True))
            return
        flat = out.reshape(-1)
        parts = (flat.real, flat.imag) if kind == "c" else (flat,)
        scratch = np.empty(min(flat.size, _CHUNK), np.float64)
        lo, hi = self.bounds if self.bounds is not None else (0.0, 1.0)
        span = hi - lo
        for part in parts:
            for start in range(0, flat.size, _CHUNK):
                stop = min(start + _CHUNK, flat.size)
                values = scratch[:stop - start]
                rng.random(out=values)
                if kind == "b":
                    np.less(values, 0.5, out=part[start:stop])
                else:  # lo + (hi - lo) * u, as Generator.uniform computes it
                    values *= span
                    values += lo
                    part[start:stop] = values


class _Inputs:
    """The probe's inputs: one buffer per traced input, allocated once and redrawn in place, and the
    tensor sharing its memory that the graph runs on. ``arrays`` is what ``run_eager`` takes (which
    copies what it hands to the cell, so the cell cannot write into the buffers)."""

    def __init__(self, trace: Any, samplers: list[tuple[Node, str, _Sampler]], seed: int = 0):
        self.samplers = samplers
        self.seed = seed  # the probe's generator is default_rng(seed), used for nothing but these draws
        self.buffers: list[np.ndarray] = []
        self.arrays: dict[str, dict[str, Any]] = {name: {} for name in trace.nodes}
        self.tensors: dict[str, dict[str, torch.Tensor]] = {name: {} for name in trace.nodes}
        for node, name, sampler in samplers:
            buffer = np.empty(sampler.shape, sampler.dtype)
            tensor = torch.from_numpy(buffer)
            self.buffers.append(buffer)
            self.arrays[node.name][name] = tensor if sampler.kind == "torch" else buffer
            self.tensors[node.name][name] = tensor
        self._snapshot: tuple[int, dict[str, dict[str, Any]]] | None = None
        self._ranges: list[tuple[int, int]] | None = None  # the buffers' address ranges (holds_tensor)

    def draw(self, index: int, rng: np.random.Generator) -> None:
        """Redraw input ``index`` (in ``samplers`` order) in place."""
        self.samplers[index][2].fill(self.buffers[index], rng)
        self._snapshot = None

    def snapshot(self, probe: int) -> dict[str, dict[str, Any]]:
        """A copy of the current inputs (a report keeps it past the next draw), one per probe."""
        if self._snapshot is None or self._snapshot[0] != probe:
            self._snapshot = (probe, {node: {name: _copy(value) for name, value in values.items()}
                                      for node, values in self.arrays.items()})
        return self._snapshot[1]

    def drawn_again(self, probe: int) -> dict[str, dict[str, Any]]:
        """The inputs of an earlier probe, drawn again from the seed in the probe's order (every input on
        probe 0, then input (j-1) mod k on probe j): what ``snapshot(probe)`` gave then, for a batch of
        outputs compared after their inputs were redrawn. New arrays, nothing shared with the buffers."""
        if self._snapshot is not None and self._snapshot[0] == probe:
            return self._snapshot[1]
        rng = np.random.default_rng(self.seed)
        buffers = [np.empty(sampler.shape, sampler.dtype) for _, _, sampler in self.samplers]
        count = len(self.samplers)
        for index in [*range(count), *((j - 1) % count for j in range(1, probe + 1))]:
            self.samplers[index][2].fill(buffers[index], rng)
        arrays: dict[str, dict[str, Any]] = {name: {} for name in self.arrays}
        for (node, name, sampler), buffer in zip(self.samplers, buffers, strict=True):
            arrays[node.name][name] = torch.from_numpy(buffer) if sampler.kind == "torch" else buffer
        self._snapshot = (probe, arrays)
        return arrays

    def holds_tensor(self, tensor: torch.Tensor) -> bool:
        """Might a graph output share memory with an input buffer (an input returned as it is, or a view of one)?
        By address: a graph output is a new allocation or a view of an input or a constant, so it shares an
        input's memory exactly when its data starts inside that input."""
        ranges = self._ranges
        if ranges is None:
            ranges = self._ranges = [(b.ctypes.data, b.ctypes.data + b.nbytes) for b in self.buffers]
        address = tensor.data_ptr()
        for start, end in ranges:  # a loop, not any(): this runs for every output of every probe
            if start <= address < end:
                return True
        return tensor.numel() == 0


def _copy(value: Any) -> Any:
    return value.detach().clone() if isinstance(value, torch.Tensor) else np.array(value, copy=True)


def as_numpy(value: Any) -> np.ndarray:
    """An eager value (array, tensor, possibly requiring grad) as an ndarray."""
    if isinstance(value, torch.Tensor):
        return value.detach().cpu().numpy()
    return np.asarray(value)


def as_tensor(value: Any) -> torch.Tensor:
    return value if isinstance(value, torch.Tensor) else torch.from_numpy(np.asarray(value))


def _input_keys(trace: Any) -> list[tuple[Node, str, str]]:
    """(node, input name, report key) for every traced input, in declaration order."""
    multi = len(trace.nodes) > 1
    return [(node, spec.name, f"{node.name}/{spec.name}" if multi else spec.name)
            for node in trace.nodes.values() for spec in node.inputs]


def _samplers(trace: Any, ranges: Mapping[str, Any] | None) -> list[tuple[Node, str, _Sampler]]:
    keys = _input_keys(trace)
    ranges = dict(ranges or {})
    known = {key for _, _, key in keys} | {name for _, name, _ in keys}
    for key, bounds in ranges.items():
        if key not in known:
            raise TraceError(f"ranges: {key!r} is not a traced input; inputs are {sorted(known)}")
        ok = isinstance(bounds, (tuple, list)) and len(bounds) == 2 and \
            all(isinstance(b, (int, float, np.integer, np.floating)) and np.isfinite(b) for b in bounds)
        if not ok or bounds[0] > bounds[1]:
            raise TraceError(f"ranges[{key!r}] = {bounds!r}: give (low, high) with finite low <= high")
    out = []
    for node, name, key in keys:
        bounds = ranges.get(key, ranges.get(f"{node.name}/{name}", ranges.get(name)))
        out.append((node, name, _Sampler(key, node.sample_inputs[name], bounds)))
    return out


def input_ranges(trace: Any, ranges: Mapping[str, Any] | None = None
                 ) -> dict[str, tuple[float, float] | None]:
    """The value range the probe draws each input from (None for booleans)."""
    return {sampler.key: sampler.bounds for _, _, sampler in _samplers(trace, ranges)}


def draw_inputs(trace: Any, rng: np.random.Generator,
                ranges: Mapping[str, Any] | None = None) -> dict[str, dict[str, np.ndarray]]:
    """One fresh set of inputs for every node, ``{node: {input: array}}`` (what ``run_eager`` takes)."""
    drawn: dict[str, dict[str, np.ndarray]] = {name: {} for name in trace.nodes}
    for node, name, sampler in _samplers(trace, ranges):
        drawn[node.name][name] = sampler.draw(rng)
    return drawn


# ------------------------------------------------------------------------------------------
# comparing one output
# ------------------------------------------------------------------------------------------

def compare(expected: np.ndarray, got: np.ndarray, locate: bool = True
            ) -> tuple[bool, float, float, tuple[int, ...] | None]:
    """(agree, max abs err, max rel err, first differing index) of a graph value against NumPy's.

    Shapes must match; dtypes may differ (the caller reports that separately): ``got`` is compared
    in ``expected``'s dtype. The index is looked for only when ``locate``. Large arrays are compared
    chunk by chunk: the temporaries are a few chunks, never arrays of the output's size.
    """
    return _compare(expected, got, locate)[:4]


def _compare(expected: np.ndarray, got: np.ndarray, locate: bool
             ) -> tuple[bool, float, float, tuple[int, ...] | None, float | None]:
    """``compare``, plus the scale its absolute tolerance used (None when it needed none)."""
    if expected.dtype.kind in "biu":
        return (*_compare_exact(expected, got, locate), None)
    return _compare_close(expected, got, locate)


def _chunks(*arrays: np.ndarray) -> Iterable[tuple[int, list[np.ndarray]]]:
    """(flat offset, 1-d chunks of every array) over arrays of one shape, in C order, at most ``_CHUNK``
    elements each: views of C-contiguous arrays, chunk-sized copies of other layouts."""
    if all(a.flags.c_contiguous for a in arrays):
        size = arrays[0].size
        if size <= _CHUNK:  # one chunk: no generator
            return [(0, [a.reshape(-1) for a in arrays])] if size else []
        return _flat_chunks([a.reshape(-1) for a in arrays])
    return _blocks(arrays, 0)


def _flat_chunks(flats: list[np.ndarray]) -> Iterator[tuple[int, list[np.ndarray]]]:
    for start in range(0, flats[0].size, _CHUNK):
        yield start, [f[start:start + _CHUNK] for f in flats]


def _blocks(arrays: Any, offset: int) -> Iterator[tuple[int, list[np.ndarray]]]:
    first = arrays[0]
    if first.ndim == 0:
        yield offset, [a.reshape(1) for a in arrays]
        return
    rows, row = first.shape[0], math.prod(first.shape[1:])
    if rows == 0 or row == 0:
        return
    if row <= _CHUNK:
        step = _CHUNK // row
        for i in range(0, rows, step):
            yield offset + i * row, [np.ravel(a[i:i + step]) for a in arrays]
    else:
        for i in range(rows):
            yield from _blocks([a[i] for a in arrays], offset + i * row)


def _index(flat: int, shape: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(int(i) for i in np.unravel_index(flat, shape)) if shape else ()


def _compare_exact(expected: np.ndarray, got: np.ndarray, locate: bool
                   ) -> tuple[bool, float, float, tuple[int, ...] | None]:
    """Integers and booleans: equal or not; the errors are taken in float64 where they differ."""
    agree, max_abs, max_rel, first = True, 0.0, 0.0, None
    for offset, (want, have) in _chunks(expected, got):
        if have.dtype != want.dtype:
            have = have.astype(want.dtype)
        if np.array_equal(want, have):
            continue
        agree = False
        diff = np.abs(have.astype(np.float64) - want.astype(np.float64))
        rel = diff / np.maximum(np.abs(want.astype(np.float64)), 1.0)
        max_abs, max_rel = max(max_abs, float(diff.max())), max(max_rel, float(rel.max()))
        if locate and first is None:
            first = offset + int(np.flatnonzero(have != want)[0])
    if agree:
        return True, 0.0, 0.0, None
    return False, max_abs, max_rel, None if first is None else _index(first, expected.shape)


def _compare_close(expected: np.ndarray, got: np.ndarray, locate: bool
                   ) -> tuple[bool, float, float, tuple[int, ...] | None, float | None]:
    """Floats and complex numbers within tolerance; NaN agrees with NaN, equal infinities agree.

    Elementwise, exactly: ``|got - expected| <= rtol * |expected| + atol * scale`` (float16 compared in
    float32), the errors ``|got - expected|`` and that over ``max(|expected|, atol)``. A chunk whose
    largest difference is within ``atol * scale`` passes without the relative test (which cannot fail
    there); a chunk that is bitwise equal has no relative error either. The scale is None when the
    arrays matched exactly (nothing needed it).
    """
    if expected.size <= _SMALL and got.dtype == expected.dtype and bool((expected == got).all()):
        return True, 0.0, 0.0, None, None  # equal everywhere (no NaN): no error at all
    work = _F32 if expected.dtype == np.float16 else expected.dtype
    rtol, atol = tolerance(expected.dtype)  # float16's own tolerance, computed in float32
    real = _REAL.get(work.char, work)  # the dtype |values| come in
    scale = floor = None  # taken over the whole array when a chunk first differs
    agree, first = True, None
    max_abs = max_rel = _ZERO
    large = expected.size > _SMALL  # scratch for the chunks; small arrays just allocate
    diff_buf = np.empty(min(expected.size, _CHUNK), real) if large else None
    abs_buf = np.empty(min(expected.size, _CHUNK), real) if large else None
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        for offset, (want, have) in _chunks(expected, got):
            if have.dtype != expected.dtype:
                have = have.astype(expected.dtype)
            if work is not expected.dtype:
                want, have = want.astype(work), have.astype(work)
            count = want.size
            diff = diff_buf[:count] if large else None
            if work.kind == "c":
                diff = np.abs(have - want, out=diff)
            else:
                diff = np.subtract(have, want, out=diff)
                np.abs(diff, out=diff)
            largest = diff.max()
            if largest == 0:  # bitwise equal up to signed zeros: no error at all
                continue
            if scale is None:
                scale = _scale_of(expected)
                floor = real.type(atol * scale)  # the absolute bound as the arrays hold it
            abs_expected = np.abs(want, out=abs_buf[:count] if large else None)
            if not largest <= floor:  # NaN, or beyond the absolute floor: the full test
                bound = np.multiply(abs_expected, rtol)
                bound += atol * scale
                ok = diff <= bound
                if not ok.all():
                    # Equal infinities and NaN in both places agree; NaN on one side only is as wrong as it gets.
                    same = (have == want) | (np.isnan(have) & np.isnan(want))
                    ok |= same
                    np.copyto(diff, np.inf, where=np.isnan(diff))
                    np.copyto(diff, 0.0, where=same)
                    if not ok.all():
                        agree = False
                        if locate and first is None:
                            first = offset + int(np.argmin(ok))
                    largest = diff.max()
            max_abs = np.maximum(max_abs, largest)
            np.maximum(abs_expected, atol, out=abs_expected)
            np.divide(diff, abs_expected, out=abs_expected)
            max_rel = np.maximum(max_rel, abs_expected.max())
    return agree, float(max_abs), float(max_rel), None if first is None else _index(first, expected.shape), scale


def _scale_of(values: np.ndarray) -> float:
    """max(1, max |value|) over the finite values, chunk by chunk: what absolute tolerances are relative to."""
    scale = 1.0
    real = values.dtype.kind in "fiu"
    for _, (chunk,) in _chunks(values):
        if real:  # max |v| without |v|: the largest and the negated smallest
            top = max(float(chunk.max()), -float(chunk.min()))
            if math.isfinite(top):
                scale = max(scale, top)
                continue
        with np.errstate(invalid="ignore", over="ignore"):
            scale = max(scale, _scale(np.abs(chunk)))
    return scale


def _scale(abs_values: np.ndarray) -> float:
    """max(1, max |value|) over the finite values of ``abs_values`` (one chunk)."""
    scale = float(abs_values.max(initial=1.0))
    if not np.isfinite(scale):
        scale = float(np.nanmax(np.where(np.isfinite(abs_values), abs_values, 1.0), initial=1.0))
    return scale


class _Outcome:
    """One output on one probe: what the next probe compares against. Graph minus eager, the quantity
    that stays put while the graph follows the cell, is computed chunk by chunk when a neighbouring
    probe needs it (one of the two failed), never stored."""

    __slots__ = ("expected", "got", "ok", "_scale", "_error")

    def __init__(self, expected: np.ndarray, got: np.ndarray | None, ok: bool, scale: float | None = None):
        self.expected, self.got, self.ok = expected, got, ok
        self._scale = scale
        self._error: np.ndarray | None = None

    @property
    def small_error(self) -> np.ndarray:
        """Graph minus eager of an output of at most one chunk, kept: the next probe compares against it too."""
        if self._error is None:
            self._error = _error(self.expected, self.got)
        return self._error

    @property
    def comparable(self) -> bool:
        return self.got is not None and self.got.shape == self.expected.shape

    @property
    def scale(self) -> float:
        if self._scale is None:
            self._scale = _scale_of(self.expected)
        return self._scale


def _error(expected: np.ndarray, got: np.ndarray) -> np.ndarray:
    """Graph minus eager for one chunk: exclusive-or for booleans, float64 (complex128) otherwise."""
    if expected.dtype.kind == "b" or got.dtype.kind == "b":
        return got.astype(bool) ^ expected.astype(bool)
    kind = np.complex128 if "c" in (expected.dtype.kind, got.dtype.kind) else np.float64
    return got.astype(kind) - expected.astype(kind)


def _in_step(prev: _Outcome, cur: _Outcome) -> bool:
    """Did the graph's output change by what the eager output changed by between two probes?"""
    if prev.ok and cur.ok:
        return True
    if not prev.comparable or not cur.comparable or prev.expected.shape != cur.expected.shape:
        return False
    dtype = cur.expected.dtype
    exact = dtype.kind in "biu" or cur.got.dtype.kind == "b"
    if not exact:
        rtol, atol = tolerance(dtype)
        bound = 2 * (atol + rtol) * max(prev.scale, cur.scale)
    with np.errstate(invalid="ignore", over="ignore"):
        if cur.expected.size <= _CHUNK:
            pairs: Iterable[tuple[np.ndarray, np.ndarray]] = [(prev.small_error, cur.small_error)]
        else:
            pairs = ((_error(pe, pg), _error(ce, cg))
                     for _, (pe, pg, ce, cg) in _chunks(prev.expected, prev.got, cur.expected, cur.got))
        for err_prev, err_cur in pairs:
            if exact:
                if not np.array_equal(err_prev, err_cur):
                    return False
            elif not ((np.abs(err_cur - err_prev) <= bound) | (np.isnan(err_cur) & np.isnan(err_prev))).all():
                return False
    return True


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal shapes and values (NaN equal to NaN for floats), stopping at the first chunk that differs."""
    if a.shape != b.shape:
        return False
    equal_nan = a.dtype.kind in "fc"
    return all(np.array_equal(x, y, equal_nan=equal_nan) for _, (x, y) in _chunks(a, b))


# ------------------------------------------------------------------------------------------
# naming baked values by retracing
# ------------------------------------------------------------------------------------------

def _ancestors(graph: torch.fx.Graph, index: int) -> set[str]:
    return set(ancestors([output_node(graph).args[0][index]]))


def _producer(graph: torch.fx.Graph, index: int) -> list[str]:
    producer = output_node(graph).args[0][index]
    return [producer.name] if isinstance(producer, torch.fx.Node) else []


def _producer_line(graph: torch.fx.Graph, index: int) -> int | None:
    output = output_node(graph)
    line = facts(output.args[0][index]).line
    return line if line is not None else facts(output).line


def _literals(node: torch.fx.Node) -> str:
    # repr keeps NaN comparable and floats exact; graph nodes count by name.
    named = torch.fx.node.map_arg((node.args, node.kwargs), lambda n: f"%{n.name}")
    return repr(named)


def _preview(tensor: torch.Tensor) -> list[Any]:
    return tensor.detach().reshape(-1)[:6].tolist()


def _same_tensor(a: torch.Tensor, b: torch.Tensor) -> bool:
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if torch.equal(a, b):
        return True
    return a.is_floating_point() and bool(((a == b) | (a.isnan() & b.isnan())).all())


def _input_dependent(original: torch.fx.GraphModule, retraced: torch.fx.GraphModule
                     ) -> tuple[dict[str, tuple[str, Any, Any]], bool]:
    """Graph values that differ between two traces of one cell: {node: (kind, traced, retraced)}, and
    whether the structure itself changed (then nothing can be paired up)."""
    a, b = list(original.graph.nodes), list(retraced.graph.nodes)
    if len(a) != len(b) or any(x.op != y.op or (x.op != "get_attr" and x.target != y.target)
                               for x, y in zip(a, b, strict=True)):
        return {}, True
    found: dict[str, tuple[str, Any, Any]] = {}
    for x, y in zip(a, b, strict=True):
        if x.op == "get_attr":
            tx, ty = getattr(original, x.target), getattr(retraced, y.target)
            if not _same_tensor(tx, ty):
                found[x.name] = ("constant", _preview(tx), _preview(ty))
        elif x.op in ("call_function", "call_method") and _literals(x) != _literals(y):
            found[x.name] = ("literal", _literals(x), _literals(y))
    return found, False


# hazards by which a Python value leaves traced data (and comes back as a literal wherever the cell uses it)
_VALUE_LEAVES = frozenset({"value-extraction", "broken-chain"})
_DRAWN = frozenset({"nondeterministic"})  # hazards of values drawn at random (a constant of each trace's own draw)


def _baked_values(node: Node, index: int, dependent: dict[str, tuple[str, Any, Any]] | None,
                  structure_changed: bool) -> list[BakedConstant]:
    """The graph values behind one output that a retrace showed to depend on the inputs; without a
    retrace (it failed), the constants the tracer itself marked as baked."""
    behind = _ancestors(node.graph.graph, index)
    by_name = {n.name: n for n in node.graph.graph.nodes}

    def hazard_lines(name: str, line: int | None, kind: str = "constant") -> tuple[int, ...]:
        named = tuple(sorted({h.line for h in node.hazards
                              if h.line is not None and h.kind != "semantic-mismatch"
                              and (name in h.graph_nodes or (line is not None and h.line == line))}))
        if named:
            return named
        # A Python number in an op that varies with the inputs left the graph somewhere: where the node's hazards
        # say a value did (m = x.sum().item() at one line, y = x * m at the next: the literal is m). A constant that
        # differs from trace to trace may be a random draw (noise = np.random.normal(...) at one line, used later)
        kinds = _VALUE_LEAVES if kind == "literal" else _DRAWN
        return tuple(sorted({h.line for h in node.hazards if h.line is not None and h.kind in kinds}))

    if structure_changed:
        branches = [h for h in node.hazards if h.kind == "data-dependent-branch"]
        return [BakedConstant(h.graph_nodes[0] if h.graph_nodes else "", h.line, "branch",
                              (h.line,) if h.line is not None else ()) for h in branches] \
            or [BakedConstant("", None, "branch")]
    found = []
    if dependent is None:
        dependent = {name: ("constant", list(facts(by_name[name]).preview), None) for name in behind
                     if facts(by_name[name]).const == "baked"}
    for name, (kind, traced, retraced) in dependent.items():
        if name in behind:
            line = facts(by_name[name]).line
            found.append(BakedConstant(name, line, kind, hazard_lines(name, line, kind), traced, retraced))
    return found


# ------------------------------------------------------------------------------------------
# the probe
# ------------------------------------------------------------------------------------------

def _progress_callback(progress: Any, what: str = "probing") -> tuple[Callable[[int, int], None] | None, Any]:
    """``progress``: None, a callable ``(done, total)``, or True for a progress bar (``what``: its label): in a
    Jupyter kernel a widget in the cell's output, removed when done (``widget.ProgressBar``), elsewhere a rich bar
    on stderr. Returns the callback and the bar to ``stop()``."""
    if progress is None or progress is False:
        return None, None
    if callable(progress):
        return progress, None
    if progress is True:
        shell = sys.modules["IPython"].get_ipython() if "IPython" in sys.modules else None
        if shell is not None:
            from .magic import _widget_front_end

            if _widget_front_end(shell):  # a kernel: a front end draws widgets, rich draws nothing
                from .widget import ProgressBar

                widget_bar = ProgressBar(what)
                return widget_bar.update, widget_bar
        from rich.console import Console
        from rich.progress import Progress

        bar = Progress(console=Console(stderr=True, force_jupyter=False), transient=True)
        task = bar.add_task(what, total=None)
        bar.start()
        return (lambda done, total: bar.update(task, completed=done, total=total)), bar
    raise TraceError(f"progress={progress!r}: pass a callable (done, total), True for a progress bar, "
                     "or None")


@dataclass
class _Evidence:
    eager_moves: bool = False
    graph_in_step: bool = True  # every pair where the eager output moved, the graph moved the same way
    graph_moves_alone: bool = False


def probe(trace: Any, n: int = 16, seed: int | None = None, ranges: Mapping[str, Any] | None = None,
          progress: Any = None) -> ProbeReport:
    """Run every node's graph and the eager cell on ``n`` fresh inputs; see the module docstring.

    Runs at least one probe more than there are inputs, so each input is varied alone at least once.
    ``ranges`` maps an input name (or "node/input") to ``(low, high)``. ``progress`` is called with
    ``(done, total)`` after each probe (raise from it to cancel); ``True`` shows a rich progress bar.
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise TraceError(f"n={n!r}: give the number of probes as a positive int")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0):
        raise TraceError(f"seed={seed!r}: give a non-negative int, or None for a random seed")
    if ranges is not None and not isinstance(ranges, Mapping):
        raise TraceError(f"ranges must be a dict input -> (low, high), got {type(ranges).__name__}")
    with kept_module_state(trace):  # the eager cell and the graphs run the user's own modules many times
        return _probe(trace, n, seed, ranges, progress)


def _probe(trace: Any, n: int, seed: int | None, ranges: Mapping[str, Any] | None, progress: Any) -> ProbeReport:
    started = time.perf_counter()
    # a drawn seed below 2**53: the saved notebook's JSON is read by JavaScript, whose numbers hold integers up to
    # there exactly (a larger seed was rounded in the saved trace model and reproduced another probe)
    seed = int(np.random.SeedSequence().entropy % 2**53) if seed is None else int(seed)
    rng = np.random.default_rng(seed)
    samplers = _samplers(trace, ranges)
    total = max(int(n), len(samplers) + 1)
    nodes = list(trace.nodes.values())
    multi = len(nodes) > 1
    keys = {node.name: [f"{node.name}/{s.name}" if multi else s.name for s in node.outputs] for node in nodes}
    checks = {key: OutputCheck(node.name, spec.name, spec.shape, spec.dtype)
              for node in nodes for key, spec in zip(keys[node.name], node.outputs, strict=True)}
    evidence = {key: {name: _Evidence() for name in (s.name for s in node.inputs)}
                for node in nodes for key in keys[node.name]}

    inputs = _Inputs(trace, samplers, seed)
    for index in range(len(samplers)):
        inputs.draw(index, rng)
    previous: dict[str, _Outcome] = {}
    state = _State(checks, evidence, previous, inputs, getattr(trace, "_explicit", None) is not None)
    # Node inputs the cell computes itself between nodes (no other node's output feeds them): the shapes it gives
    # them on fresh inputs, against the declared ones; the first probe of another shape per input
    between = [(node, spec) for node in nodes[1:] for spec in node.inputs
               if spec.name not in getattr(node, "sources", {})] if multi else []
    given: dict[str, dict[str, tuple[int, ...]]] | None = {} if between else None
    varying_inputs: dict[tuple[str, str], Mismatch] = {}
    report_progress, bar = _progress_callback(progress)
    try:
        # Fresh inputs stray into NaN territory (sqrt, log of drawn values); the comparison handles
        # that, so NumPy's floating-point warnings from the eager re-runs are only noise.
        with torch.no_grad(), np.errstate(all="ignore"):
            for j in range(total):
                varied_node, varied = None, None
                if j > 0:
                    index = (j - 1) % len(samplers)
                    varied_node, varied, _ = samplers[index]
                    inputs.draw(index, rng)
                try:
                    eager = _eager_run(trace, inputs.arrays, given, state)
                except CellError as exc:
                    raise CellError(f"probe {j} (seed {seed}): the cell raised on fresh inputs: {exc}. "
                                    "Narrow the inputs with ranges={name: (low, high)}", exc.line,
                                    exc.code) from exc
                for node in nodes:
                    _check_node(node, keys[node.name], j, eager.get(node.name, {}), state,
                                varied if node is varied_node else None)
                del eager
                for node, spec in between:
                    shape = given.get(node.name, {}).get(spec.name)
                    declared = tuple(spec.shape)
                    if shape is not None and shape != declared and (node.name, spec.name) not in varying_inputs:
                        varying_inputs[node.name, spec.name] = Mismatch(j, "varying shape", None, shape, declared,
                                                                        inputs.snapshot(j))
                if report_progress is not None:
                    report_progress(j + 1, total)
            state.flush()
    finally:
        if bar is not None:
            bar.stop()
    del previous, inputs, state

    sensitivity = {key: {name: (ev.eager_moves, ev.graph_in_step if ev.eager_moves else ev.graph_moves_alone)
                         for name, ev in per_input.items()}
                   for key, per_input in evidence.items()}
    candidates = [key for key, per_input in sensitivity.items()
                  if any(eager and not graph for eager, graph in per_input.values())]
    failing = [key for key, check in checks.items() if not check.passed]
    baked_constants = _name_baked(trace, nodes, keys, checks, failing)
    added = _semantic_hazards(trace, nodes, keys, checks, baked_constants)
    added += _shape_hazards(trace, nodes, keys, checks)
    added += _input_shape_hazards(trace, nodes, varying_inputs)
    return ProbeReport(
        passed=all(check.passed for check in checks.values()), n=total, seed=seed, outputs=checks,
        baked=[key for key in candidates if baked_constants.get(key)], sensitivity=sensitivity,
        baked_constants={key: value for key, value in baked_constants.items() if value},
        ranges={sampler.key: sampler.bounds for _, _, sampler in samplers}, hazards=added,
        seconds=time.perf_counter() - started, graph_key=graph_key(trace))


class kept_module_state:  # noqa: N801 - a context manager, named as the statement reads
    """While entered, the modules the trace's graphs call (the cell's own objects: a policy) may change their state
    (``self.hidden = h``, a running statistic written in place); on leaving, every one of them and their submodules
    has its attributes, parameters and buffers back as they were. The probe and export's checks run the cell and
    the graphs many times: the user's policy is left as the trace left it."""

    def __init__(self, trace: Any):
        self.trace = trace
        self.saved: list[tuple[torch.nn.Module, dict[str, Any], list[tuple[torch.Tensor, torch.Tensor]]]] = []

    def __enter__(self) -> None:
        seen: set[int] = set()
        for node in self.trace.nodes.values():
            graph = node.graph
            for module in graph.modules():
                if module is graph or id(module) in seen:
                    continue
                seen.add(id(module))
                script = isinstance(module, torch.jit.ScriptModule)  # (its attributes are TorchScript's own)
                attributes = {} if script else {
                    key: dict(value) if key in ("_parameters", "_buffers", "_modules") else value
                    for key, value in vars(module).items()}
                tensors = [(t, t.detach().clone()) for t in (*module.parameters(recurse=False),
                                                             *module.buffers(recurse=False), *attributes.values())
                           if isinstance(t, torch.Tensor) and not t.is_inference()]
                self.saved.append((module, attributes, tensors))

    def __exit__(self, *exc: Any) -> None:
        with torch.no_grad():
            for module, attributes, tensors in self.saved:
                state = vars(module) if attributes else {}
                for key in [key for key in state if key not in attributes]:
                    del state[key]
                for key, value in attributes.items():
                    if key in ("_parameters", "_buffers", "_modules"):
                        state[key].clear()
                        state[key].update(value)
                    else:
                        state[key] = value
                for tensor, copy in tensors:
                    if not torch.equal(tensor, copy):
                        tensor.copy_(copy)
        self.saved.clear()


_BATCH_ELEMENTS = _SMALL  # outputs up to this size are compared in batches of probes ...
_BATCH_PROBES = 64  # ... of up to this many, holding up to _BATCH_BYTES of outputs: one set of NumPy calls for all
_BATCH_BYTES = 1 << 18  # of them (for small arrays the calls cost more than the work); nothing grows with n


class _Batch:
    """Probes of one output waiting to be compared together: one shape, one dtype pair, ``limit`` probes."""

    __slots__ = ("rows", "shape", "expected_dtype", "got_dtype", "limit")

    def __init__(self, expected: np.ndarray, got: np.ndarray):
        self.rows: list[tuple[int, np.ndarray, np.ndarray, str | None]] = []
        self.shape, self.expected_dtype, self.got_dtype = expected.shape, expected.dtype, got.dtype
        self.limit = max(1, min(_BATCH_PROBES, _BATCH_BYTES // (expected.nbytes + got.nbytes)))

    def takes(self, expected: np.ndarray, got: np.ndarray) -> bool:
        shape = self.shape
        return expected.shape == shape and got.shape == shape and expected.dtype == self.expected_dtype \
            and got.dtype == self.got_dtype


class _State:
    """What the probe loop folds every output into: the checks, the evidence, each output's previous outcome,
    the inputs, and the batch of probes waiting for comparison per output."""

    def __init__(self, checks: dict[str, OutputCheck], evidence: dict[str, dict[str, _Evidence]],
                 previous: dict[str, _Outcome], inputs: _Inputs, reused_outputs: bool):
        self.checks, self.evidence, self.previous, self.inputs = checks, evidence, previous, inputs
        # outputs=[...]: run_eager reads the outputs from the cell's namespace, where they may be arrays the cell
        # writes in place every run (annotate.output_tensors hands back copies)
        self.reused_outputs = reused_outputs
        self.batches: dict[str, _Batch] = {}
        self.inference = torch.inference_mode()  # entered around every graph run (one object, reused)
        self.inference_mode = True  # False once a graph refused inference tensors: no_grad from then on
        self.eager_grad = False  # True once the eager cell needed grad mode (autograd in the cell)

    def flush(self, key: str | None = None) -> None:
        """Compare and fold the waiting probes of output ``key`` (every output's when None), in probe order."""
        for name in [key] if key is not None else list(self.batches):
            batch = self.batches.get(name)
            if batch is not None and batch.rows:
                rows, batch.rows = batch.rows, []
                _fold_batch(name, rows, self)


def _batchable(expected: np.ndarray, got: np.ndarray | None) -> bool:
    """Whether this output can start a batch: small, real or integer or boolean (float16 and complex take the
    one-probe path), the graph's value of the same shape."""
    if got is None or got.shape != expected.shape or not 0 < expected.size <= _BATCH_ELEMENTS:
        return False
    dtype = expected.dtype
    return dtype.kind in "fiub" and dtype != np.float16 and got.dtype.kind in "fiub"


# float dtypes by precision, as the facts name them (torch's name for bfloat16): the lowest one behind an output
_FLOAT_PRECISION = {"float16": np.dtype(np.float16), "bfloat16": np.dtype(np.float16), "float32": np.dtype(np.float32),
                    "complex64": np.dtype(np.float32)}


_CARRIED: weakref.WeakKeyDictionary[Any, list[np.dtype | None]] = weakref.WeakKeyDictionary()  # by graph module


def carried_precisions(node: Node) -> list[np.dtype | None]:
    """Per output of ``node``, the lowest float precision among the graph values it is computed from (float16 or
    float32; None when nothing below float64 is behind it). A float64 output computed from float32 values (a
    float32 sine widened by a float64 constant, a float32 policy's action times one) holds float32's precision:
    the probe and export's reload check compare it at that precision, where float64's tolerance would refuse a
    correct graph for a last-bit difference of torch's float32 kernels from NumPy's."""
    known = _CARRIED.get(node.graph)
    if known is None:
        known = _CARRIED[node.graph] = _carried(node)
    return known


def _carried(node: Node) -> list[np.dtype | None]:
    graph = node.graph.graph
    output = next(n for n in reversed(graph.nodes) if n.op == "output")
    results = output.args[0] if isinstance(output.args[0], (tuple, list)) else (output.args[0],)
    lowest: dict[Any, np.dtype | None] = {}
    for fx_node in graph.nodes:  # in order: every input before its users
        known = facts(fx_node)
        names = (known.graph_dtype, known.dtype) if known is not None else ()
        found = [_FLOAT_PRECISION[name] for name in names if name in _FLOAT_PRECISION]
        found += [lowest[arg] for arg in fx_node.all_input_nodes if lowest.get(arg) is not None]
        lowest[fx_node] = min(found, key=lambda d: d.itemsize) if found else None
    return [lowest.get(result) if isinstance(result, torch.fx.Node) else None for result in results]


def _check_node(node: Node, keys: list[str], j: int, eager: Mapping[str, Any], state: _State,
                varied: str | None) -> None:
    """Run one node's graph on probe ``j`` and fold the result into its outputs' checks and evidence.

    Only the previous probe's outcome per output is kept (the neighbour comparison needs it), and the
    inputs are copied only for an output's first mismatch: nothing grows with the number of probes.
    Small outputs wait in a batch of probes and are compared together (``_fold_batch``): the same results."""
    error = None
    inputs = state.inputs
    tensors = inputs.tensors[node.name]
    try:
        with state.inference:  # forward itself: the module-call wrappers (hooks, fx's error printer) add nothing here
            results = node.graph.forward(*[tensors[spec.name] for spec in node.inputs])
    except Exception as exc:  # the graph failing on fresh inputs is a finding, not a crash
        results, error = None, f"{type(exc).__name__}: {exc}"
        if state.inference_mode:
            # A module that records for autograd whatever the mode (a TorchScript policy, torch.jit.load) refuses
            # inference tensors ("Inference tensors cannot be saved for backward"), where the cell ran it under
            # no_grad or with grad: the graph runs under no_grad from then on, as export's checks run it
            try:
                with torch.no_grad():
                    results = node.graph.forward(*[tensors[spec.name] for spec in node.inputs])
            except Exception:
                pass
            else:
                error = None
                state.inference, state.inference_mode = torch.no_grad(), False
    batches = state.batches
    reused_outputs = state.reused_outputs
    held_precisions = carried_precisions(node)
    for index, (key, spec) in enumerate(zip(keys, node.outputs, strict=True)):
        value = eager.get(spec.name, _MISSING)
        if value is _MISSING:
            raise CellError(f"probe {j}: re-run eagerly, the cell did not produce output '{spec.name}' of "
                            f"node '{node.name}' (a branch on the inputs?)", None)
        expected = value if type(value) is np.ndarray else as_numpy(value)
        if reused_outputs and expected.size <= _SMALL:
            # a copy of a small output (cheap): a cell run with outputs=[...] can hand back the same array every
            # probe, one it writes in place, and a batch compares its probes later, the neighbour test after the
            # next run (a large output is kept as it is: its previous values are then lost for that test)
            expected = expected.copy()
        got = None
        if results is not None:
            tensor = results[index]
            got = (tensor.detach() if tensor.requires_grad else tensor).numpy()
            if inputs.holds_tensor(tensor):
                got = got.copy()  # the graph handed back (a view of) an input buffer, which the next probe redraws
            held = held_precisions[index]
            if held is not None and got.dtype == expected.dtype and expected.dtype.kind in "fc" \
                    and held.itemsize < _REAL.get(expected.dtype.char, expected.dtype).itemsize:
                # computed at a lower precision than its dtype's (carried_precisions): compared at that precision
                want = np.dtype(f"c{2 * held.itemsize}") if expected.dtype.kind == "c" else held
                expected, got = expected.astype(want), got.astype(want)
        batch = batches.get(key)
        if batch is not None and got is not None and batch.takes(expected, got):
            rows = batch.rows
            rows.append((j, expected, got, varied))
            if len(rows) >= batch.limit:
                state.flush(key)
            continue
        if batch is not None:
            state.flush(key)  # the earlier probes first: outcomes fold in probe order
            del batches[key]
        declared = tuple(spec.shape)
        if _batchable(expected, got) and expected.shape == declared:  # a batch keeps the declared shape
            batches[key] = batch = _Batch(expected, got)
            batch.rows.append((j, expected, got, varied))
            if batch.limit == 1:
                state.flush(key)
            continue
        check = state.checks[key]
        compared = None
        if got is not None and got.shape == expected.shape:
            compared = _compare(expected, got, locate=check.first_mismatch is None)
        _fold(key, j, expected, got, compared, error, varied, state, inputs.snapshot, declared)


_MISSING = object()


def _fold(key: str, j: int, expected: np.ndarray, got: np.ndarray | None,
          compared: tuple[bool, float, float, tuple[int, ...] | None, float | None] | None, error: str | None,
          varied: str | None, state: _State, snapshot: Callable[[int], dict[str, dict[str, Any]]],
          declared: tuple[int, ...] | None = None) -> None:
    """Fold one output of probe ``j`` into its check and evidence; ``compared``: ``_compare``'s answer (None when
    the graph raised or gave another shape), ``snapshot(j)``: the probe's inputs. ``declared``: the node's shape of
    the output (its trace-time shape, what the pipeline YAML declares): an eager value of another shape, which the
    graph matches, is kept as the check's ``varying_shape`` (a batch of probes keeps the declared shape, so it
    passes none)."""
    check = state.checks[key]
    mismatch, scale = None, None
    if got is None:
        mismatch = ("error", None, None, error)
        check.shape_ok = False
    elif compared is None:
        mismatch = ("shape", None, expected.shape, got.shape)
        check.shape_ok = False
    else:
        agree, abs_err, rel_err, first, scale = compared
        check.max_abs_err = max(check.max_abs_err, abs_err)
        check.max_rel_err = max(check.max_rel_err, rel_err)
        if got.dtype != expected.dtype:
            check.dtype_ok = False
            mismatch = ("dtype", None, expected.dtype.name, got.dtype.name)
        if not agree:
            mismatch = ("value", first, None if first is None else expected[first].item(),
                        None if first is None else got[first].item())
        if declared is not None and expected.shape != declared and check.varying_shape is None:
            check.varying_shape = Mismatch(j, "varying shape", None, expected.shape, declared, snapshot(j))
    outcome = _Outcome(expected, got, mismatch is None, scale)
    if mismatch is not None:
        check.mismatches += 1
        if check.first_mismatch is None:
            what, where, want, have = mismatch
            check.first_mismatch = Mismatch(j, what, where, want, have, snapshot(j))
    previous = state.previous
    if varied is not None and key in previous:
        before = previous[key]
        ev = state.evidence[key][varied]
        in_step = _in_step(before, outcome)
        if in_step and ev.eager_moves:
            pass  # nothing this pair could change: the eager output is known to move, the graph moved with it
        elif not _same(before.expected, expected):
            ev.eager_moves = True
            ev.graph_in_step = ev.graph_in_step and in_step
        elif not in_step:
            ev.graph_moves_alone = True
    previous[key] = outcome


def _fold_batch(key: str, rows: list[tuple[int, np.ndarray, np.ndarray, str | None]], state: _State) -> None:
    """Compare a batch of probes of one output at once (``_compare_rows``), then fold each in probe order."""
    agree, max_abs, max_rel, first, scales = _compare_rows(np.array([r[1] for r in rows]),
                                                           np.array([r[2] for r in rows]))
    check, previous, evidence = state.checks[key], state.previous, state.evidence[key]
    # every row's errors go into the check's maxima, on either path below (no NaN: _compare_rows makes it inf)
    check.max_abs_err = max(check.max_abs_err, float(max_abs.max()))
    check.max_rel_err = max(check.max_rel_err, float(max_rel.max()))
    agree, max_abs, max_rel = agree.tolist(), max_abs.tolist(), max_rel.tolist()
    scales = scales.tolist() if scales is not None else [None] * len(rows)
    same_dtype = rows[0][1].dtype == rows[0][2].dtype  # one dtype pair per batch
    last_ok = None  # the row index of an agreeing probe whose outcome is not made yet (made only when needed)
    for i, (j, expected, got, varied) in enumerate(rows):
        if agree[i] and same_dtype:
            before_ok = True if last_ok is not None else (previous[key].ok if key in previous else None)
            if varied is None or before_ok is None or (before_ok and evidence[varied].eager_moves):
                last_ok = i  # what _fold does for an agreeing probe whose pair with the previous one can change nothing
                continue
        if last_ok is not None:  # the previous probe's outcome, for the pair test
            previous[key] = _Outcome(rows[last_ok][1], rows[last_ok][2], True, scales[last_ok])
            last_ok = None
        compared = (agree[i], max_abs[i], max_rel[i], None if agree[i] else _index(int(first[i]), expected.shape),
                    scales[i])
        _fold(key, j, expected, got, compared, None, varied, state, state.inputs.drawn_again)
    if last_ok is not None:
        previous[key] = _Outcome(rows[last_ok][1], rows[last_ok][2], True, scales[last_ok])


def _compare_rows(expected: np.ndarray, got: np.ndarray) -> tuple[np.ndarray, ...]:
    """``_compare`` of every row (one probe each) of two stacks of small arrays: (agree, max abs err, max rel err,
    first differing flat index, scale or None), each per row. Element by element the same arithmetic in the same
    dtypes as ``_compare_close`` / ``_compare_exact`` (the tolerance's absolute part rounded to the arrays' dtype
    per row, as adding a Python float does), so the figures are identical; tests/test_probe_cost.py holds the
    two to that."""
    rows = expected.shape[0]
    want = expected.reshape(rows, -1)
    have = got.reshape(rows, -1)
    if have.dtype != want.dtype:
        have = have.astype(want.dtype)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        equal = have == want
        if equal.all():  # every probe agrees exactly (no NaN): no error at all, as _compare's first test
            zeros = np.zeros(rows)
            return np.ones(rows, bool), zeros, zeros, np.zeros(rows, np.intp), None
        if want.dtype.kind in "biu":
            differs = ~equal
            wide_want = want.astype(np.float64)
            diff = np.abs(have.astype(np.float64) - wide_want)
            rel = diff / np.maximum(np.abs(wide_want), 1.0)
            return ~differs.any(axis=1), diff.max(axis=1), rel.max(axis=1), np.argmax(differs, axis=1), None
        rtol, atol = tolerance(want.dtype)
        scales = _row_scales(want)
        diff = np.abs(have - want)
        abs_want = np.abs(want)
        bound = np.multiply(abs_want, rtol)
        bound += (atol * scales).astype(want.dtype)[:, None]
        ok = diff <= bound
        same = equal | (np.isnan(have) & np.isnan(want))
        ok |= same
        np.copyto(diff, np.inf, where=np.isnan(diff))
        np.copyto(diff, 0.0, where=same)
        np.maximum(abs_want, atol, out=abs_want)
        rel = np.divide(diff, abs_want)
        return ok.all(axis=1), diff.max(axis=1), rel.max(axis=1), np.argmin(ok, axis=1), scales


def _row_scales(values: np.ndarray) -> np.ndarray:
    """``_scale_of`` of every row of ``values`` (2-d), as float64."""
    with np.errstate(invalid="ignore"):
        top = np.maximum(values.max(axis=1).astype(np.float64), -values.min(axis=1).astype(np.float64))
    scales = np.maximum(top, 1.0)
    for i in np.flatnonzero(~np.isfinite(top)):  # NaN or an infinity in the row: the finite values only
        scales[i] = _scale_of(values[i])
    return scales


def graph_key(trace: Any) -> tuple[Any, ...]:
    """Identifies the graphs a report was made for, so export can tell when a probe is stale."""
    return tuple((node.name, id(node.graph), node.graph.code) for node in trace.nodes.values())


def _name_baked(trace: Any, nodes: list[Node], keys: dict[str, list[str]], checks: dict[str, OutputCheck],
                failing: list[str]) -> dict[str, list[BakedConstant]]:
    """One retrace, on the inputs of the first failing probe, names the input-dependent graph values
    behind each failing output."""
    if not failing:
        return {}
    exposing = min((checks[key].first_mismatch for key in failing), key=lambda m: m.probe)
    try:
        with np.errstate(all="ignore"):
            retraced = trace.retrace(exposing.inputs, quiet=True)
    except Exception:  # noqa: BLE001 - fall back to the tracer's own provenance marks
        retraced = None
    named: dict[str, list[BakedConstant]] = {}
    for node in nodes:
        dependent, changed = None, False
        other = None if retraced is None else retraced.nodes.get(node.name)
        if other is not None:
            dependent, changed = _input_dependent(node.graph, other.graph)
        for index, key in enumerate(keys[node.name]):
            if key in failing:
                named[key] = _baked_values(node, index, dependent, changed)
    return named


def _shape_origins(node: Node, index: int, inputs: dict[str, Any]) -> list[torch.fx.Node]:
    """The graph nodes behind output ``index`` whose value takes another shape on ``inputs`` than when traced
    while none of their operands does: where the shape starts to depend on the input values (a boolean mask's
    selection, ``nonzero``, ``unique``). Read from one run of the graph, node by node; none when it raises."""
    graph = node.graph
    behind = _ancestors(graph.graph, index)
    shapes: dict[torch.fx.Node, tuple[int, ...]] = {}

    class _Shapes(torch.fx.Interpreter):
        def run_node(self, n: torch.fx.Node) -> Any:
            value = super().run_node(n)
            if isinstance(value, torch.Tensor):
                shapes[n] = tuple(value.shape)
            return value

    try:
        with torch.no_grad():
            _Shapes(graph).run(*[as_tensor(inputs[spec.name]) for spec in node.inputs])
    except Exception:  # noqa: BLE001 - the graph failing here is the probe's own finding; the output is marked
        return []
    changed: set[torch.fx.Node] = set()
    origins = []
    for n in graph.graph.nodes:
        upstream = any(operand in changed for operand in n.all_input_nodes)
        if n not in shapes:  # not a tensor (a tuple of results, np.sort's): it carries its operands' change
            if upstream:
                changed.add(n)
            continue
        info = facts(n)
        traced = info.graph_shape if info.graph_shape is not None else info.shape
        if traced is None or shapes[n] == tuple(traced):
            continue
        changed.add(n)
        if not upstream and n.name in behind:
            origins.append(n)
    return origins


def _shape_hazards(trace: Any, nodes: list[Node], keys: dict[str, list[str]], checks: dict[str, OutputCheck]
                   ) -> list[Hazard]:
    """A ``data-dependent-shape`` warning for each output whose eager value took another shape than the node
    declares while the graph agreed, at the line where its shape starts to depend on the input values (the
    output's own line when that is not found)."""
    lines = cell_lines(trace.source)
    added: list[Hazard] = []
    for node in nodes:
        table = _standing(node)
        for index, key in enumerate(keys[node.name]):
            check = checks[key]
            mismatch = check.varying_shape
            if mismatch is None:
                continue
            origins = _shape_origins(node, index, mismatch.inputs.get(node.name, {}))
            by_line: dict[int | None, list[str]] = {}
            for origin in origins:
                by_line.setdefault(facts(origin).line, []).append(origin.name)
            if not by_line:
                by_line = {_producer_line(node.graph.graph, index): _producer(node.graph.graph, index)}
            for line, graph_nodes in by_line.items():
                _report(trace, lines, node, table, added, "probe-shape-varies", line, graph_nodes,
                        name=f"output '{check.output}'", output=check.output, declared=_shape_text(mismatch.got),
                        got=_shape_text(mismatch.expected), probe=mismatch.probe)
    return added


def _input_shape_hazards(trace: Any, nodes: list[Node], varying: dict[tuple[str, str], Mismatch]) -> list[Hazard]:
    """A ``data-dependent-shape`` warning for each node input the cell computes between nodes whose shape
    depends on the input values, at its ``input_tensors`` line, marking its placeholder."""
    lines = cell_lines(trace.source)
    added: list[Hazard] = []
    for node in nodes:
        table = _standing(node)
        for placeholder in node.graph.graph.find_nodes(op="placeholder"):
            mismatch = varying.get((node.name, placeholder.target))
            if mismatch is None:
                continue
            info = facts(placeholder)  # its line: the input_tensors call; its origin: the step, when the tracer saw it
            _report(trace, lines, node, table, added, "probe-input-shape-varies", info.line, [placeholder.name],
                    name=f"input '{placeholder.target}'", input=placeholder.target,
                    computed=f"was {info.origin}" if info.origin else "is computed between the nodes",
                    declared=_shape_text(mismatch.got), got=_shape_text(mismatch.expected), probe=mismatch.probe)
    return added


def _report(trace: Any, lines: list[str], node: Node, table: dict[tuple[str, int | None], Hazard],
            added: list[Hazard], cause: str, line: int | None, graph_nodes: list[str], **fields: Any) -> None:
    """Report ``cause`` at ``line`` of ``node`` through ``hz.add`` (``table``: the node's hazards by kind and line);
    a hazard that is new joins the node's hazards and ``added``, the probe's report of them (one per line and node:
    a second report on the line merges into the first)."""
    hazard, new = hz.add(table, cause, line, graph_nodes, node=node.name, profile=trace.profile,
                         code=line_text(lines, line), **fields)
    if new:
        node.hazards.append(hazard)
        added.append(hazard)


def _standing(node: Node) -> dict[tuple[str, int | None], Hazard]:
    """The node's hazards by kind and line, for ``hz.add``: a probe run again reports into the warning an earlier
    one added (once per line and node), not a second one."""
    return {(h.kind, h.line): h for h in node.hazards}


def _shape_text(shape: tuple[int, ...]) -> str:
    return "(" + ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"


def _eager_run(trace: Any, arrays: Any, given: Any, state: Any) -> dict[str, dict[str, Any]]:
    """The eager cell on ``arrays``, as the probe runs it: under ``torch.no_grad`` (the probe's own work needs no
    autograd), unless the cell needs it (``torch.autograd.grad`` of a tensor it made ``requires_grad_``: it raised
    under no_grad, where the user's kernel runs it with grad), then with grad from that run on."""
    if state.eager_grad:
        with torch.enable_grad():
            return trace.run_eager(arrays, given, quiet=True)
    try:
        return trace.run_eager(arrays, given, quiet=True)
    except CellError:
        with torch.enable_grad():
            result = trace.run_eager(arrays, given, quiet=True)  # (raises again for a cell that fails either way)
        state.eager_grad = True
        return result


def _kept_state(trace: Any, nodes: list[Node]) -> str | None:
    """What shows that the cell keeps state between runs, or None: re-run on the very inputs it was traced with, the
    eager cell gives other outputs than it gave when traced (a cache a helper filled, a counter, an object's attribute
    the trace's run changed). One eager run, only where a probe failure needs explaining."""
    try:
        again = trace.run_eager({node.name: node.sample_inputs for node in nodes}, quiet=True)
    except CellError:
        return None
    for node in nodes:
        for name, before in node.sample_outputs.items():
            now = again.get(node.name, {}).get(name)
            before_array, now_array = _as_array(before), _as_array(now)
            if before_array is None or now_array is None:
                continue
            if before_array.shape != now_array.shape or not np.array_equal(before_array, now_array, equal_nan=True):
                return (f"Re-run on the inputs it was traced with, the eager cell gives another '{name}' than it gave "
                        "when traced: it keeps state between runs (a cache a helper fills, a counter, a random "
                        "generator, an attribute of an object) that the traced run changed, and the graph holds that "
                        "run's computation")
    return None


def _as_array(value: Any) -> np.ndarray | None:
    if isinstance(value, torch.Tensor):
        return value.detach().cpu().numpy()
    if isinstance(value, np.ndarray):
        return np.ndarray.view(value, np.ndarray)
    return None


def _semantic_hazards(trace: Any, nodes: list[Node], keys: dict[str, list[str]],
                      checks: dict[str, OutputCheck], baked: dict[str, list[BakedConstant]]) -> list[Hazard]:
    """A ``semantic-mismatch`` hazard for each failing output no standing error hazard explains."""
    lines = cell_lines(trace.source)
    added: list[Hazard] = []
    tables: dict[str, dict[tuple[str, int | None], Hazard]] = {}
    state: list[str | None] = []  # what _kept_state found, once, when a failure needs explaining
    for node in nodes:
        for index, key in enumerate(keys[node.name]):
            check = checks[key]
            if check.passed:
                continue
            behind = _ancestors(node.graph.graph, index)
            found = baked.get(key, [])
            baked_lines = {c.line for c in found if c.line is not None} | {n for c in found for n in c.hazard_lines}
            branch = any(c.kind == "branch" for c in found)
            # (a random draw in the node makes the graph and the eager cell differ on any run, whichever value the
            # draw reaches: the retrace may even have drawn the same mask)
            if any(h.severity == "error" and (set(h.graph_nodes) & behind or h.line in baked_lines
                                              or (branch and h.kind == "data-dependent-branch")
                                              or h.kind in _DRAWN)
                   for h in node.hazards):
                continue
            unnamed = [c for c in found if not c.hazard_lines and c.node]
            line = unnamed[0].line if unnamed else _producer_line(node.graph.graph, index)
            mismatch = check.first_mismatch
            what = "it disagrees" if mismatch is None else f"{mismatch.describe()} (probe {mismatch.probe})"
            consts = ", ".join(c.node for c in unnamed)
            if unnamed:
                what += f"; it depends on {consts}, which the trace holds fixed"
            graph_nodes = [c.node for c in unnamed] or _producer(node.graph.graph, index)
            if not state:
                state.append(_kept_state(trace, nodes))
            cause = "probe-differs-baked" if unnamed else "probe-differs"
            if state[0] is not None:  # the eager cell is not a function of its inputs: say that, not a wrong op
                cause, what = "probe-stateful", f"{what}. {state[0]}"
            # one hazard per line and node, naming every output it breaks
            _report(trace, lines, node, tables.setdefault(node.name, {}), added, cause, line, graph_nodes,
                    name=f"output '{check.output}'", severity="error", output=check.output, what=what, consts=consts,
                    source_line=line)
    return added

