"""A lookup row and what it declares about its arguments.

A row's positional names come from NumPy's own ``inspect.signature`` (``np.empty_like(prototype, ...)``
binds ``prototype``, as NumPy does). Every argument a call passes is either read by the row's builder
(the builder declares the names it reads with :func:`reads`) or declared on the row in ``rejects`` with
the values that are harmless there (``order='C'``, ``where=True``); any other value is refused with
:class:`Unsupported` before the builder runs, so the call is reported, never recorded with an argument
silently dropped. ``tests/test_lookup_signatures.py`` holds every row to NumPy's signature.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from importlib import resources
from typing import Any, Callable, Mapping

import numpy as np

from .context import BuildContext, Unsupported


class _Any:
    """The marker for "any value is harmless here" (``kind=`` of a sort, ``device='cpu'``)."""

    def __repr__(self) -> str:
        return "ANY"


ANY = _Any()


def reads(names: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Declare the argument names a builder reads (space separated); the row refuses any other."""

    def mark(build: Callable[..., Any]) -> Callable[..., Any]:
        build.reads = frozenset(names.split())  # type: ignore[attr-defined]
        return build

    return mark


def rejects(spec: str) -> dict[str, tuple[Any, ...]]:
    """``"out where=True order=C,K,A kind=*"``: each argument with the values that are harmless (none for a
    bare name: any value is refused; ``*`` accepts any value)."""
    parsed: dict[str, tuple[Any, ...]] = {}
    words = {"True": True, "False": False, "None": None, "*": ANY}
    for item in spec.split():
        name, _, values = item.partition("=")
        parsed[name] = tuple(words.get(v, v) for v in values.split(",")) if values else ()
    return parsed


def _harmless(value: Any, allowed: tuple[Any, ...]) -> bool:
    for ok in allowed:
        if ok is ANY or value is ok or (type(value) is str and value == ok):
            return True
    return False


def _short(value: Any) -> str:
    if isinstance(value, np.ndarray):
        return f"<{value.dtype} array of shape {value.shape}>"
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


class Checked:
    """A row's builder behind its argument check: passed arguments the builder does not read and the row
    does not declare harmless are refused (``Unsupported``) before anything is recorded."""

    __slots__ = ("raw", "reads", "rejects", "uint64", "orders")

    def __init__(self, raw: Callable[[BuildContext], Any], rejects: Mapping[str, tuple[Any, ...]],
                 uint64: str = "", orders: bool = False):
        self.raw = raw
        # A builder without a declaration (a test's stand-in) reads whatever it is given.
        self.reads = getattr(raw, "reads", None)
        self.rejects = rejects
        self.uint64 = uint64
        self.orders = orders

    def __call__(self, ctx: BuildContext) -> Any:
        known, rejected = self.reads, self.rejects
        eager = ctx.eager
        if known is not None and known.issuperset(eager):  # the common case: every argument is read
            eager = {}
        for name, value in eager.items():
            if value is None or value is np._NoValue or (known is None and name not in rejected):
                continue
            if known is not None and name in known:
                continue
            allowed = rejected.get(name, ())
            if not _harmless(value, allowed):
                raise Unsupported(f"argument {name}={_short(value)} is not recorded")
        if self.uint64:
            ctx.extra["uint64"] = self.uint64
        if self.orders:
            ctx.extra["orders"] = True
        return self.raw(ctx)


@dataclass(frozen=True)
class Row:
    """One lookup row. ``names`` binds positional arguments; ``key`` is the NumPy callable.

    ``build`` is the builder behind the row's argument check (:class:`Checked`); ``rejects`` maps the
    arguments the builder does not implement to the values that are harmless (any other is refused).
    ``uint64="wrap"``: the row's arithmetic is exact modulo 2**64 in int64, so uint64 computes there (torch has
    few uint64 kernels); other rows refuse uint64 operands. ``orders``: the row compares values (max, sort,
    ``<``), which torch cannot do for complex numbers (NumPy orders them lexicographically): refused.
    """

    key: Any
    numpy: str
    torch: str
    build: Callable[[BuildContext], Any]
    names: tuple[str, ...]
    leapp: bool
    kind: str  # "ufunc" | "function" | "method"
    rejects: Mapping[str, tuple[Any, ...]] = field(default_factory=dict)
    uint64: str = ""  # "wrap": exact modulo 2**64 when computed in int64 (BuildContext.compute_dtype)
    orders: bool = False  # compares values: complex operands are refused (torch cannot order complex numbers)

    def __post_init__(self) -> None:
        raw = self.build.raw if isinstance(self.build, Checked) else self.build
        object.__setattr__(self, "build", Checked(raw, self.rejects, self.uint64, self.orders))

    @property
    def reads(self) -> frozenset[str] | None:
        """The argument names the row's builder reads (None: undeclared)."""
        return self.build.reads  # type: ignore[attr-defined]


def positional_names(func: Any) -> tuple[str, ...] | None:
    """The names NumPy binds positional arguments to (``*name`` for a ``*args`` parameter), from its
    signature; None when NumPy publishes none."""
    try:
        params = inspect.signature(func).parameters.values()
    except (TypeError, ValueError):
        return None
    names = []
    for p in params:
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            names.append(p.name)
        elif p.kind is p.VAR_POSITIONAL:
            names.append("*" + p.name)
    return tuple(names)


def keyword_names(func: Any) -> tuple[str, ...] | None:
    """Every named parameter of NumPy's signature (``**kwargs`` excluded: the row check refuses those)."""
    try:
        params = inspect.signature(func).parameters.values()
    except (TypeError, ValueError):
        return None
    return tuple(p.name for p in params if p.kind is not p.VAR_KEYWORD)


def _leapp_names() -> dict[str, set[str]]:
    text = resources.files(__package__.rsplit(".", 1)[0]).joinpath("leapp_0_7_2_names.txt").read_text()
    sections: dict[str, set[str]] = {}
    current = ""
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("["):
            current = line.strip("[]")
            sections[current] = set()
        else:
            sections[current].add(line)
    return sections


LEAPP_NAMES = _leapp_names()


def renamed(build: Callable[[BuildContext], Any], **names: str) -> Callable[[BuildContext], Any]:
    """``build`` for a function spelling its arguments otherwise: ``renamed(build_outer, x1="a", x2="b")``
    reads NumPy's ``x1``/``x2`` (np.linalg.outer) as the ``a``/``b`` the builder reads (np.outer)."""

    def run(ctx: BuildContext) -> Any:
        ctx.params = {names.get(k, k): v for k, v in ctx.params.items()}
        ctx.eager = {names.get(k, k): v for k, v in ctx.eager.items()}
        return build(ctx)

    inner = getattr(build, "reads", frozenset())
    run.reads = frozenset(names) | (inner - set(names.values()))  # type: ignore[attr-defined]
    run.__name__ = getattr(build, "__name__", "build")
    return run
