"""Builders for np.fft: NumPy 2 keeps float32/complex64 precision, as torch does."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import torch

from .context import _F64, BuildContext, _asarray
from .normalize import _one_axis, _static_int, norm_axes
from .row import reads


def fft_op(torch_fn: Any, *, many: bool = False) -> Callable[[BuildContext], Any]:
    """np.fft.*: NumPy 2 keeps float32/complex64 precision, as torch does; integers compute in float64."""

    @reads("a n s axis axes norm")
    def build(ctx: BuildContext) -> Any:
        arr = _asarray(ctx.eager["a"])
        x = ctx.tensor("a", _F64 if arr.dtype.kind in "biu" else None)
        norm = ctx.static("norm")
        if many:
            s = _static_int(ctx.static("s"))
            dims = norm_axes(ctx.static("axes", (-2, -1) if torch_fn in _FFT2 else None), arr.ndim)
            node = ctx.call(torch_fn, x, s=s, dim=dims, norm=norm)
        else:
            n = ctx.static("n")
            node = ctx.call(torch_fn, x, n=None if n is None else int(n),
                            dim=_one_axis(ctx, "axis", arr.ndim, -1), norm=norm)
        # torch may return a lazily conjugated view (conj bit), which .numpy() refuses.
        return ctx.call(torch.resolve_conj, node) if ctx.result_dtype.kind == "c" else node

    return build


_FFT2 = {torch.fft.fft2, torch.fft.ifft2, torch.fft.rfft2, torch.fft.irfft2}


def fft_shift(torch_fn: Any) -> Callable[[BuildContext], Any]:
    @reads("x axes")
    def build(ctx: BuildContext) -> Any:
        dims = norm_axes(ctx.static("axes"), np.ndim(ctx.eager["x"]))
        return ctx.call(torch_fn, ctx.tensor("x"), dims)

    return build
