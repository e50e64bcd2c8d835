"""Torch and mixed NumPy/torch constructs measured against real LEAPP 0.7.2, as data.

Each :class:`TorchCase` is one LEAPP node: a cell body that reads its inputs by name and assigns its
outputs (``y`` unless stated), the trace inputs (``np.ndarray`` and/or ``torch.Tensor``, float, int or
bool), and how to draw fresh inputs. :func:`cell` wraps the body in ``annotate.input_tensors`` (one call
per input, so LEAPP's tuple and leapp_notebook's dict return conventions never matter) and
``annotate.output_tensors(..., export_with="jit")``. Every cell runs with ``np``, ``torch``, ``nn``,
``F`` and the policies of :func:`make_objects` bound (small ``nn.Module`` policies built with a fixed
seed, fresh for every run so a training-mode BatchNorm's running statistics never leak between runs).

Used by ``benchmarks/leapp_torch_comparison.py`` and ``tests/test_leapp_torch_comparison.py``; the
measured behaviour is written up in docs/leapp-0.7.2-behaviour.md, "Torch and mixed nodes".
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F  # noqa: N812 - the name every torch user writes

__all__ = ["CASES", "TorchCase", "EagerAnnotate", "cell", "make_objects", "fresh_inputs", "run_eager",
           "to_numpy", "agrees", "OBJECT_NAMES"]

N_FRESH = 4


@dataclass(frozen=True)
class TorchCase:
    name: str
    body: str
    inputs: dict[str, Any]
    outputs: tuple[str, ...] = ("y",)
    #: the node draws random numbers: eager cell and exported graph are compared under the same torch seed
    random: bool = False
    #: name -> (low, high) for fresh values of that input (ints: high exclusive); default float (-1.5, 2.0),
    #: int (0, 4)
    fresh: dict[str, tuple[float, float]] = field(default_factory=dict)
    #: names of extra fresh inputs appended to the random ones (e.g. "negate": -x), for branch cases
    extra: tuple[str, ...] = ()


def make_objects() -> dict[str, Any]:
    """The policies a cell may call, rebuilt with a fixed seed (identical weights every call)."""
    torch.manual_seed(0)
    mlp = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 2)).eval()
    mlp3 = nn.Sequential(nn.Linear(4, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 2)).eval()
    gru = nn.GRUCell(4, 3).eval()
    drop = nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.5), nn.Linear(8, 2))  # left in training mode
    drop_eval = nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.5), nn.Linear(8, 2)).eval()
    bn = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.Linear(8, 2))  # training mode
    bn_eval = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.Linear(8, 2))
    with torch.no_grad():  # non-trivial running statistics, so eval mode differs from batch statistics
        bn_eval[1].running_mean.uniform_(-0.5, 0.5)
        bn_eval[1].running_var.uniform_(0.5, 2.0)
    bn_eval.eval()
    norm = nn.Sequential(nn.LayerNorm(4), nn.Linear(4, 2)).eval()
    weight = torch.linspace(-1.0, 1.0, 8).reshape(4, 2)
    return {"policy": mlp, "policy3": mlp3, "gru": gru, "drop_policy": drop, "drop_eval": drop_eval,
            "bn_policy": bn, "bn_eval": bn_eval, "ln_policy": norm, "W": weight}


OBJECT_NAMES = tuple(make_objects())


class EagerAnnotate:
    """``annotate`` outside any tracer: inputs pass straight through, outputs are ignored."""

    @staticmethod
    def input_tensors(node: str, tensors: dict[str, Any]) -> Any:
        values = list(tensors.values())
        return values[0] if len(values) == 1 else tuple(values)

    @staticmethod
    def output_tensors(node: str, tensors: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        return tensors


def cell(case: TorchCase, export_with: str = "jit") -> str:
    """The case as one LEAPP node named ``node``."""
    head = "".join(f'{name} = annotate.input_tensors("node", {{"{name}": {name}}})\n' for name in case.inputs)
    outs = ", ".join(f'"{name}": {name}' for name in case.outputs)
    return f'{head}{case.body}\nannotate.output_tensors("node", {{{outs}}}, export_with="{export_with}")\n'


def namespace(case: TorchCase, inputs: dict[str, Any], annotate: Any) -> dict[str, Any]:
    """A fresh namespace for the cell: modules, fresh policies, copies of ``inputs``."""
    ns: dict[str, Any] = {"np": np, "torch": torch, "nn": nn, "F": F, "annotate": annotate}
    ns.update(make_objects())
    ns.update({k: copy_value(v) for k, v in inputs.items()})
    return ns


def copy_value(value: Any) -> Any:
    return value.detach().clone() if isinstance(value, torch.Tensor) else np.array(value, copy=True)


def _fresh_one(value: Any, rng: np.random.Generator, bounds: tuple[float, float] | None) -> Any:
    arr = value.detach().numpy() if isinstance(value, torch.Tensor) else np.asarray(value)
    if arr.dtype == np.bool_:
        new = rng.random(arr.shape) < 0.5
    elif arr.dtype.kind in "iu":
        lo, hi = bounds or (0, 4)
        new = rng.integers(int(lo), int(hi), arr.shape).astype(arr.dtype)
    else:
        lo, hi = bounds or (-1.5, 2.0)
        new = rng.uniform(lo, hi, arr.shape).astype(arr.dtype)
    return torch.from_numpy(np.ascontiguousarray(new)) if isinstance(value, torch.Tensor) else new


def fresh_inputs(case: TorchCase, n: int = N_FRESH, seed: int = 0) -> list[dict[str, Any]]:
    """``n`` fresh input sets of each input's kind, dtype and shape (plus the case's extra sets)."""
    rng = np.random.default_rng(seed)
    sets = [{k: _fresh_one(v, rng, case.fresh.get(k)) for k, v in case.inputs.items()} for _ in range(n)]
    for extra in case.extra:
        if extra == "negate":  # the trace input with its sign flipped: takes the other branch
            sets.append({k: (-copy_value(v) if k == "x" else copy_value(v)) for k, v in case.inputs.items()})
    return sets


def to_numpy(value: Any) -> np.ndarray:
    if isinstance(value, torch.Tensor):
        return value.detach().cpu().numpy()
    return np.asarray(value)


def run_eager(case: TorchCase, inputs: dict[str, Any], seed: int | None = None) -> dict[str, np.ndarray]:
    """The cell run plainly (no tracer) on ``inputs``; outputs as NumPy arrays."""
    ns = namespace(case, inputs, EagerAnnotate())
    if seed is not None:
        torch.manual_seed(seed)
    with warnings.catch_warnings():  # np.array(tensor): torch's __array__ has no copy keyword (NumPy 2 warns)
        warnings.simplefilter("ignore", DeprecationWarning)
        exec(compile(cell(case), "<eager-cell>", "exec"), ns)
    return {name: to_numpy(ns[name]) for name in case.outputs}


def agrees(got: Any, want: Any) -> bool:
    """Same shape, same dtype, values allclose (rtol/atol 1e-5, NaNs equal)."""
    got, want = to_numpy(got), to_numpy(want)
    if got.shape != want.shape or got.dtype != want.dtype:
        return False
    if got.dtype == np.bool_:
        return bool(np.array_equal(got, want))
    return bool(np.allclose(got.astype(np.float64), want.astype(np.float64), rtol=1e-5, atol=1e-5,
                            equal_nan=True))


# Trace inputs. NumPy observation (4,) float32, torch copies, a batch of 3 for BatchNorm, int and bool inputs.
XN = np.array([0.5, -0.3, 1.2, 0.8], np.float32)
XN64 = XN.astype(np.float64)
XT = torch.from_numpy(XN.copy())
XB = torch.tensor([[0.5, -0.3, 1.2, 0.8], [0.1, 0.9, -0.7, 0.4], [1.5, 0.2, 0.3, -0.2]])
XBN = XB.numpy().copy()
HT = torch.tensor([0.1, -0.2, 0.3])
IT = torch.tensor([3, 1, 0, 2])          # int64 index input
IT32 = torch.tensor([3, 1, 4, 2], dtype=torch.int32)
MT = torch.tensor([True, False, True, False])
MN = MT.numpy().copy()

_POLICY_NP = ("obs = (x - 0.1) / 0.5\nt = torch.from_numpy(obs)\nwith torch.no_grad():\n    a = policy(t)\n")

CASES: list[TorchCase] = [
    # --- whole nodes: NumPy pre-processing -> torch policy -> post-processing ---
    TorchCase("np norm -> from_numpy -> MLP (no_grad) -> tanh*2 -> .detach().numpy()",
              _POLICY_NP + "y = (torch.tanh(a) * 2.0).detach().numpy()", {"x": XN}),
    TorchCase("np norm -> from_numpy -> MLP -> np.asarray(t) -> np.clip",
              _POLICY_NP + "y = np.clip(np.asarray(a), -0.5, 0.5)", {"x": XN}),
    TorchCase("np norm -> from_numpy -> MLP -> torch output", _POLICY_NP + "y = a * 3.0", {"x": XN}),
    TorchCase("from_numpy -> 3-layer MLP -> .numpy() -> np.tanh * scale",
              "with torch.no_grad():\n    a = policy3(torch.from_numpy(x))\ny = np.tanh(a.numpy()) * np.float32(0.5)",
              {"x": XN}),
    TorchCase("torch obs -> .numpy() np pre -> from_numpy -> MLP",
              "o = np.clip(x.numpy(), -1.0, 1.0)\nwith torch.no_grad():\n    y = policy(torch.from_numpy(o))",
              {"x": XT}),
    TorchCase("np obs (batch 3,4) -> MLP -> softmax -> argmax (int64 out)",
              "with torch.no_grad():\n    p = torch.softmax(policy(torch.from_numpy(x)), dim=-1)\n"
              "y = torch.argmax(p, dim=-1)", {"x": XBN}),
    # --- crossings ---
    TorchCase("torch.from_numpy(x) * 2", "y = torch.from_numpy(x) * 2", {"x": XN}),
    TorchCase("torch.from_numpy(x).float() (float64 x)", "y = torch.from_numpy(x).float() + 1", {"x": XN64}),
    TorchCase("torch.as_tensor(x) * 2", "y = torch.as_tensor(x) * 2", {"x": XN}),
    TorchCase("torch.as_tensor(x, dtype=torch.float64) * 2", "y = torch.as_tensor(x, dtype=torch.float64) * 2",
              {"x": XN}),
    TorchCase("torch.tensor(x) * 2 (copy)", "y = torch.tensor(x) * 2", {"x": XN}),
    TorchCase("torch.tensor(x, dtype=torch.float32) * 2 (the array's own dtype)",
              "y = torch.tensor(x, dtype=torch.float32) * 2", {"x": XN}),
    TorchCase("torch.as_tensor(x, dtype=torch.float32) * 2 (the array's own dtype)",
              "y = torch.as_tensor(x, dtype=torch.float32) * 2", {"x": XN}),
    TorchCase("torch.tensor(x.tolist()) * 2", "y = torch.tensor(x.tolist()) * 2", {"x": XT}),
    TorchCase("x.float() on int64 torch input", "y = x.float() * 0.5", {"x": IT}),
    TorchCase("x.to(torch.float64)", "y = x.to(torch.float64) + 1", {"x": XT}),
    TorchCase("x.to(dtype=torch.int32)", "y = x.to(dtype=torch.int32)", {"x": XT}, fresh={"x": (-5.0, 5.0)}),
    TorchCase("x.clone() then add_ on the clone", "z = x.clone()\nz.add_(1.0)\ny = z * x", {"x": XT}),
    TorchCase("x.detach().cpu() * 2", "y = x.detach().cpu() * 2", {"x": XT}),
    TorchCase("x.numpy() -> np op -> torch.from_numpy",
              "a = x.numpy() * 2\ny = torch.from_numpy(np.abs(a)) + x", {"x": XT}),
    TorchCase("np.asarray(x) of a torch input", "y = np.asarray(x) - 1.0", {"x": XT}),
    TorchCase("np.array(x) (copy) of a torch input", "y = np.array(x) * 3.0", {"x": XT}),
    TorchCase("x.contiguous() * 2", "y = x.contiguous() * 2", {"x": XT}),
    TorchCase("x.data * 2 (.data bypass)", "y = x + x.data * 2", {"x": XT}),
    # --- grad modes ---
    TorchCase("MLP output requires grad (no no_grad)", "y = policy(x)", {"x": XT}),
    TorchCase("MLP under torch.inference_mode()", "with torch.inference_mode():\n    y = policy(x) * 1.0",
              {"x": XT}),
    TorchCase("MLP under no_grad, .detach().numpy() then NumPy",
              "with torch.no_grad():\n    a = policy(x)\ny = np.maximum(a.detach().numpy(), 0.0)", {"x": XT}),
    # --- torch functions and methods ---
    TorchCase("torch.clamp + torch.tanh", "y = torch.tanh(torch.clamp(x, -1.0, 1.0))", {"x": XT}),
    TorchCase("torch.cat / torch.stack", "y = torch.stack([torch.cat([x, x * 2]), torch.cat([x - 1, x])])",
              {"x": XT}),
    TorchCase("torch.where(x > 0, x, 0.1 * x)", "y = torch.where(x > 0, x, 0.1 * x)", {"x": XT}),
    TorchCase("x @ W (constant weight)", "y = x @ W", {"x": XT}),
    TorchCase("torch.matmul on a batch + bias", "y = torch.matmul(x, W) + torch.ones(2)", {"x": XB}),
    TorchCase("torch.softmax(x, dim=-1)", "y = torch.softmax(x, dim=-1)", {"x": XB}),
    TorchCase("x.argmax(dim=-1)", "y = x.argmax(dim=-1)", {"x": XB}),
    TorchCase("torch.gather(x, 0, i) (int64 index input)", "y = torch.gather(x, 0, i)", {"x": XT, "i": IT}),
    TorchCase("x[-1:] and x[..., 1:3] (negative/range indexing)", "y = torch.cat([x[-1:], x[..., 1:3]])", {"x": XT}),
    TorchCase("x[-1] (0-d) * x", "y = x * x[-1]", {"x": XT}),
    TorchCase("reshape + permute (2-D)", "y = x.reshape(2, 6).permute(1, 0) * 2", {"x": XB}),
    TorchCase("x.sum(dim=0, keepdim=True) / x.std()", "y = x.sum(dim=0, keepdim=True) / x.std()", {"x": XB}),
    TorchCase("in-place mul_ on a derived tensor", "z = x * 1.0\nz.mul_(3.0)\ny = z + x", {"x": XT}),
    TorchCase("in-place add_ on the input", "x.add_(1.0)\ny = x * 2", {"x": XT}),
    TorchCase("x += 1 (augmented, input)", "x += 1\ny = x * 2", {"x": XT}),
    TorchCase("z[1:3] = 0 (setitem on a derived tensor)", "z = x * 2\nz[1:3] = 0.0\ny = z", {"x": XT}),
    TorchCase("x.masked_fill(x < 0, 0)", "y = x.masked_fill(x < 0, 0.0)", {"x": XT}),
    TorchCase("x[x > 0] (boolean mask)", "y = x[x > 0]", {"x": XT}),
    TorchCase("torch.flip(x, [0])", "y = torch.flip(x, [0])", {"x": XT}),
    TorchCase("x * np.float32(2.0) (NumPy scalar operand)", "y = x * np.float32(2.0)", {"x": XT}),
    TorchCase("F.relu + F.normalize", "y = F.normalize(F.relu(x), dim=0)", {"x": XT}),
    TorchCase("x.max(dim=-1).values (named tuple)", "y = x.max(dim=-1).values", {"x": XB}),
    # --- int and bool inputs ---
    TorchCase("int32 torch input: i * 2 + 1", "y = i * 2 + 1", {"i": IT32}, fresh={"i": (-5, 10)}),
    TorchCase("bool torch mask input: torch.where(m, x, 0)", "y = torch.where(m, x, torch.zeros_like(x))",
              {"x": XT, "m": MT}),
    TorchCase("bool NumPy mask -> torch: ~m & (x > 0)", "y = ~torch.from_numpy(m) & (x > 0)", {"x": XT, "m": MN}),
    # --- value extraction ---
    TorchCase("float(t.max()) scaling", "y = x / float(x.abs().max())", {"x": XT}),
    TorchCase("t.item()", "y = x * x.sum().item()", {"x": XT}),
    TorchCase("t.tolist()", "vals = x.tolist()\ny = x * vals[0]", {"x": XT}),
    TorchCase("int(t.argmax()) as an index", "i = int(x.argmax())\ny = x * x[i]", {"x": XT}),
    TorchCase("float(x[0])", "y = x * float(x[0])", {"x": XT}),
    # --- branches ---
    TorchCase("if t.sum() > 0:", "if x.sum() > 0:\n    y = x * 2\nelse:\n    y = x - 1", {"x": XT},
              extra=("negate",)),
    TorchCase("bool(t) via `and`", "y = x * 2 if bool((x > 0).all()) else x + 1", {"x": XT},
              fresh={"x": (0.1, 2.0)}, extra=("negate",)),
    # --- random ops ---
    TorchCase("x + torch.rand(4)", "y = x + torch.rand(4)", {"x": XT}, random=True),
    TorchCase("x + torch.randn(4)", "y = x + torch.randn(4)", {"x": XT}, random=True),
    TorchCase("x + torch.randn_like(x)", "y = x + torch.randn_like(x)", {"x": XT}, random=True),
    TorchCase("F.dropout(x, 0.5, training=True)", "y = F.dropout(x, 0.5, training=True)", {"x": XT}, random=True),
    TorchCase("F.dropout(x, 0.5, training=False)", "y = F.dropout(x, 0.5, training=False)", {"x": XT}),
    # --- modules ---
    TorchCase("Dropout policy left in training mode", "y = drop_policy(x)", {"x": XT}, random=True),
    TorchCase("Dropout policy in eval mode, no_grad",
              "with torch.no_grad():\n    y = drop_eval(x)", {"x": XT}),
    TorchCase("BatchNorm policy in training mode (batch 3)", "y = bn_policy(x)", {"x": XB}),
    TorchCase("BatchNorm policy in eval mode (batch 3)", "with torch.no_grad():\n    y = bn_eval(x)", {"x": XB}),
    TorchCase("LayerNorm policy", "with torch.no_grad():\n    y = ln_policy(x)", {"x": XT}),
    TorchCase("GRUCell(x, h) with two outputs",
              "with torch.no_grad():\n    h2 = gru(x.unsqueeze(0), h.unsqueeze(0)).squeeze(0)\ny = h2 * 2",
              {"x": XT, "h": HT}, outputs=("y", "h2")),
    # --- in-place writes through views ---
    TorchCase("a = x * 3; a[:2].clamp_(-1, 1)", "a = x * 3\na[:2].clamp_(-1.0, 1.0)\ny = a", {"x": XT}),
    TorchCase("a = x * 3; a.narrow(0, 1, 2).mul_(0.5)", "a = x * 3\na.narrow(0, 1, 2).mul_(0.5)\ny = a", {"x": XT}),
    TorchCase("b = torch.zeros(6); b[2:].copy_(x)", "b = torch.zeros(6)\nb[2:].copy_(x)\ny = b", {"x": XT}),
    TorchCase("b = torch.zeros(6); b[2:] = x", "b = torch.zeros(6)\nb[2:] = x\ny = b", {"x": XT}),
    TorchCase("a = x * 3; v = a[:2]; v *= 0.5 (a named view)", "a = x * 3\nv = a[:2]\nv *= 0.5\ny = a", {"x": XT}),
    TorchCase("a = x * 3; head = a[:2]; a[0] += 1; head * 2 (a view read after a write into its base)",
              "a = x * 3\nhead = a[:2]\na[0] += 1.0\ny = head * 2", {"x": XT}),
    TorchCase("policy(x.unsqueeze(0)).squeeze(0) -> action scaling",
              "with torch.no_grad():\n    a = policy(x.unsqueeze(0)).squeeze(0)\ny = torch.clamp(a, -0.3, 0.3) * 10",
              {"x": XT}),
]
