"""Dtype names shared by both traced types: NumPy dtypes and torch dtypes under one vocabulary (NumPy's
names, ``"float32"``; torch's own name for a torch dtype NumPy lacks, ``"bfloat16"``)."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from .ops import _NP_TO_TORCH, _TORCH_TO_NP

_NAMES: dict[Any, str] = {}  # dtype.name is a slow Python property in NumPy


def dtype_name(dtype: Any) -> str:
    """``"float32"`` for np.float32 and torch.float32 alike."""
    name = _NAMES.get(dtype)
    if name is None:
        if isinstance(dtype, torch.dtype):
            mapped = _TORCH_TO_NP.get(dtype)
            name = mapped.name if mapped is not None else str(dtype).replace("torch.", "")
        else:
            name = np.dtype(dtype).name
        _NAMES[dtype] = name
    return name


_TORCH_BY_NAME: dict[str, torch.dtype | None] = {}


def torch_dtype(name: str) -> torch.dtype | None:
    """The torch dtype of a dtype name (NumPy's or torch's), None when torch has none."""
    try:
        return _TORCH_BY_NAME[name]
    except KeyError:
        pass
    try:
        found = _NP_TO_TORCH.get(np.dtype(name))
    except TypeError:
        found = getattr(torch, name, None)
        found = found if isinstance(found, torch.dtype) else None
    _TORCH_BY_NAME[name] = found
    return found


def numpy_dtype(dtype: torch.dtype) -> np.dtype | None:
    """The NumPy dtype of a torch dtype, None when NumPy has none (bfloat16, say)."""
    return _TORCH_TO_NP.get(dtype)
