"""Torch implementations of NumPy functions torch lacks, used as graph targets.

Each is a plain function of tensors, so ``torch.jit.trace`` and ONNX export see ordinary torch ops.
"""

from __future__ import annotations

import torch


def interp(x: torch.Tensor, xp: torch.Tensor, fp: torch.Tensor, left: float | None = None,
           right: float | None = None) -> torch.Tensor:
    """``np.interp`` for increasing ``xp``: piecewise-linear, clamped to ``fp``'s ends (or left/right)."""
    n = xp.shape[0]
    # The count of breakpoints <= x is searchsorted(xp, x, right=True) for increasing xp; written as a
    # comparison and a sum so the ONNX exporters, which have no searchsorted, can convert it.
    idx = (x.unsqueeze(-1) >= xp).sum(-1).clamp(1, n - 1)
    x0 = xp[idx - 1]
    x1 = xp[idx]
    y0 = fp[idx - 1]
    y1 = fp[idx]
    slope = (y1 - y0) / (x1 - x0)
    y = y0 + slope * (x - x0)
    # NumPy returns fp[i] exactly at xp[i], including the right end.
    y = torch.where(x == x1, y1, y)
    low = fp[0] if left is None else torch.tensor(left, dtype=fp.dtype)
    high = fp[-1] if right is None else torch.tensor(right, dtype=fp.dtype)
    y = torch.where(x < xp[0], low, y)
    y = torch.where(x > xp[-1], high, y)
    return y


def cbrt(x: torch.Tensor) -> torch.Tensor:
    """``np.cbrt``: the real cube root, negative for negative input (torch.pow gives nan there). float16 is
    computed in float32 and rounded once, as NumPy's float16 loop does."""
    work = x.float() if x.dtype == torch.float16 else x
    return (torch.sign(work) * torch.pow(torch.abs(work), 1.0 / 3.0)).to(x.dtype)


def modf(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``np.modf``: (fractional part, integral part), both with the sign of ``x``; inf -> (+-0, inf)."""
    whole = torch.trunc(x)
    fraction = torch.where(torch.isinf(x), torch.zeros_like(x), x - whole)
    return torch.copysign(fraction, x), whole


def setitem(x: torch.Tensor, key: object, value: torch.Tensor | float) -> torch.Tensor:
    """Functional ``x[key] = value``: returns a new tensor, leaves ``x`` untouched."""
    out = x.clone()
    out[key] = value
    return out


def copy_into(x: torch.Tensor, src: torch.Tensor) -> torch.Tensor:
    """``x.copy_(src)`` as a value: ``src`` broadcast to ``x``'s shape, in ``x``'s dtype."""
    return src.to(x.dtype).expand_as(x).clone()


def on_copy(x: torch.Tensor, method: str, *args: object, **kwargs: object) -> torch.Tensor:
    """An in-place Tensor method with no functional twin (``x.zero_()``, ``x.fill_(v)``) as a value: run on a copy,
    so the graph never writes into a tensor it was given."""
    return getattr(x.clone(), method)(*args, **kwargs)
