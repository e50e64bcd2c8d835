"""Which bytes a write reached: the layouts ``Session`` logs (``session._layout``) and its test of two layouts
sharing no byte (``session._apart``), held to ``np.shares_memory`` on random views of random arrays and tensors
(hypothesis). A wrong "apart" would leave a view traced that a write changed: a silent wrong graph."""

from __future__ import annotations

import numpy as np
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from leapp_notebook.tracing import session as S

SHAPES = [(6,), (3, 4), (4, 3), (2, 3, 4), (1, 5), (5, 1)]
DTYPES = ["float64", "float32", "int16", "uint8", "bool"]


def _part(draw, size):
    choice = draw(st.integers(0, 4))
    if choice == 0:
        return draw(st.integers(-size, size - 1))
    if choice == 4:
        return slice(None, None, draw(st.sampled_from([-1, -2])))
    first = draw(st.integers(0, size - 1))
    return slice(first, draw(st.integers(first + 1, size)), draw(st.sampled_from([1, 1, 2, 3])))


@st.composite
def basic_keys(draw, shape):
    """A key of ints, slices (steps of either sign) and Ellipsis for an array of ``shape``, picking at least one
    element (a row, a column, a block, every other one, reversed): parts for the first axes, then Ellipsis and
    parts for the last ones."""
    front = draw(st.integers(0, len(shape)))
    back = draw(st.integers(0, len(shape) - front))
    parts = [_part(draw, size) for size in shape[:front]]
    if back:
        parts += [Ellipsis, *[_part(draw, size) for size in shape[len(shape) - back:]]]
    return tuple(parts)


@st.composite
def two_views(draw):
    """An array (C- or F-contiguous) and two views of it (through ``.T`` or not, one time in five as uint8), the
    second one time in two the first's key with its last axis picked otherwise (beside columns: spans that meet,
    elements that may not)."""
    shape = draw(st.sampled_from(SHAPES))
    dtype = draw(st.sampled_from(DTYPES))
    owner = np.zeros(shape, dtype)
    if draw(st.booleans()):
        owner = np.asfortranarray(owner)
    transposed = draw(st.booleans())
    view = owner.T if transposed else owner
    key = draw(basic_keys(view.shape))
    keys = [key]
    if draw(st.booleans()) and view.ndim > 1:
        keys.append((*[slice(None)] * (view.ndim - 1), _part(draw, view.shape[-1])))
    else:
        transposed = draw(st.booleans())
        keys.append(draw(basic_keys((owner.T if transposed else owner).shape)))
    views = []
    for i, key in enumerate(keys):
        base = (owner.T if transposed else owner) if i else view
        picked = base[key if Ellipsis in key else (*key, Ellipsis)]
        if draw(st.integers(0, 4)) == 0 and picked.ndim and picked.shape[-1] % 2 == 0 and picked.itemsize > 1 \
                and picked.strides[-1] == picked.itemsize:
            picked = picked.view(np.uint8)  # the same bytes as another type: its items' bytes are compared
        views.append(picked)
    return owner, views


@settings(max_examples=400, deadline=None, derandomize=True, database=None)
@given(two_views())
def test_apart_is_true_exactly_when_numpy_finds_no_shared_byte(case):
    owner, (a, b) = case
    apart = S._apart(S._layout(a), S._layout(b), lambda: S._memory_bytes(a))
    if a.size == 0 or b.size == 0:
        return  # spans no byte: never logged or read as a write
    assert apart == (not np.shares_memory(a, b)), (owner.shape, owner.flags.f_contiguous, a.strides, b.strides)


@settings(max_examples=200, deadline=None, derandomize=True, database=None)
@given(two_views())
def test_the_same_on_tensors(case):
    owner, (a, b) = case
    if a.dtype != owner.dtype or b.dtype != owner.dtype or a.size == 0 or b.size == 0 or owner.dtype == bool \
            or not owner.flags.c_contiguous:
        return  # the same views of a tensor on the same memory: its own dtype, its C order
    if any(s < 0 for s in a.strides + b.strides):
        return  # torch has no negative strides
    base = torch.from_numpy(owner)
    views = []
    for v in (a, b):  # the same view of the tensor's memory: its offset and strides in elements
        offset = (v.__array_interface__["data"][0] - owner.__array_interface__["data"][0]) // owner.itemsize
        views.append(base.as_strided(v.shape, [s // owner.itemsize for s in v.strides], offset))
    apart = S._apart(S._layout(views[0]), S._layout(views[1]), lambda: S._memory_bytes(views[0]))
    assert apart == (not np.shares_memory(a, b))


def test_the_memory_cannot_be_had_counts_as_touching():
    a = np.zeros((3, 4))
    assert not S._apart(S._layout(a[:, 0]), S._layout(a[:, 1]), lambda: None)  # strided, spans meeting: touching
    assert S._apart(S._layout(a[0]), S._layout(a[1]), lambda: None)  # spans apart: no memory needed
