"""The torch side of a traced cell: torch functions, Tensor methods and operators, the NumPy<->torch
crossings, and ``nn.Module`` calls, recorded into the same fx graph as the NumPy ops.

Why a ``TorchFunctionMode`` and not a Tensor subclass (LEAPP's choice): a mode sees every torch call made
while the cell runs — factory and random functions with no tensor argument, ``torch.as_tensor`` of a traced
array, functions on plain tensors that received traced data — and it is thread-local, so another thread
never records into the graph. The user's tensors stay plain ``torch.Tensor`` objects: a traced tensor is a
plain tensor with a provenance in its ``_lp`` attribute (the same :class:`Provenance` a TracedArray carries),
dropped when the trace ends. ``torch.from_numpy`` is not overridable, so it is patched for the trace, and so
is ``nn.Module._call_impl`` (what ``nn.Module.__call__`` runs): a module called on traced data is one
``call_module`` node whose weights stay parameters of the exported module.
"""

from __future__ import annotations

import inspect
import linecache
import operator
import os
import sys
from threading import get_ident
from typing import Any, Callable, Iterator

import numpy as np
import torch
import torch.fx
from numpy import ndarray  # not np.ndarray, torch.Tensor, torch.fx: their modules' __getattr__ defeats the lookup cache
from torch import Tensor, fx
from torch.overrides import TorchFunctionMode

from . import indexing, leapp_calls, leapp_defects, provenance, replay, torch_impl
from . import session as _session
from .builder import base_name, target_display
from .dtypes import dtype_name, numpy_dtype
from .facts import ModuleFacts, SharedState, update
from .provenance import (
    Pending,
    Provenance,
    builder_of,
    iter_traced,
    library_caller,
    pend,
    plain,
    rebuilt,
    tensor_version,
)

_ORIGINAL: dict[str, Any] = {}
_new = object.__new__
# Around the tracer's own work where the recorder is on (the patched entry points: torch.from_numpy, the array
# conversions, nn.Module calls): a tensor's shape, dtype or write counter read there would otherwise go through
# the recorder's dispatch, 1-2 us each. (Inside TorchRecorder.__torch_function__ torch has taken the mode off.)
_OWN_READS = _session._OWN_READS

# Tensor attributes that are static metadata: read, never recorded.
_METADATA_ATTRS = frozenset({"shape", "dtype", "device", "requires_grad", "is_leaf", "grad_fn", "layout", "ndim",
                             "names", "is_cuda", "is_sparse", "is_quantized", "is_meta", "grad", "_version",
                             "output_nr", "_base", "itemsize", "nbytes", "is_nested"})
_METADATA_METHODS = frozenset({"size", "dim", "numel", "ndimension", "nelement", "element_size", "is_floating_point",
                               "is_complex", "is_contiguous", "stride", "storage_offset", "__len__", "__repr__",
                               "__str__", "__format__", "__hash__", "get_device", "is_signed", "__reduce_ex__",
                               "__deepcopy__", "__sizeof__", "__dir__", "type", "is_shared", "is_pinned",
                               "has_names", "_is_view", "is_inference", "requires_grad_", "retain_grad",
                               "register_hook", "__setstate__", "__getstate__"})
# torch's calls whose result is as long as a count of the data (Session.selected, size_read): these always (off the
# fast path, seen on the general one); an index and torch.where only for some arguments (``_selecting``, checked for
# every call of them, fast path or not)
_SELECTING = frozenset({torch.nonzero, Tensor.nonzero, torch.argwhere, Tensor.argwhere, torch.masked_select,
                        Tensor.masked_select, torch.unique, Tensor.unique, torch.unique_consecutive,
                        Tensor.unique_consecutive})
_GETITEM, _WHERE = Tensor.__getitem__, torch.where
_ARRAYS = (Tensor, ndarray)
_BOOLS = (torch.bool, np.dtype(bool))


def _selecting(func: Any, args: tuple[Any, ...]) -> bool:
    """Whether an index (``_GETITEM``) or ``torch.where`` selects by the data: a boolean tensor or array in the key,
    one argument to ``torch.where``."""
    if func is _WHERE:
        return len(args) == 1
    key = args[1] if len(args) > 1 else None  # (every torch index passes here: slices and ints cost a type check)
    for part in key if type(key) is tuple else (key,):
        kind = type(part)
        if kind is slice or kind is int or part is None or part is Ellipsis:
            continue  # (isinstance against torch.Tensor goes through its metaclass: ~0.2 us)
        if isinstance(part, _ARRAYS) and part.dtype in _BOOLS:
            return True
    return False


# Gradients taken inside a node: the graph records neither requires_grad_ (metadata) nor a grad mode
_AUTOGRAD = frozenset({torch.autograd.grad, torch.Tensor.backward, torch.autograd.backward})
# The methods that read a tensor's length or number of elements (a count of the data, for a selection)
_SIZE_READS = frozenset({"size", "numel", "nelement", "__len__"})
# Values that leave the graph as Python values.
_EXTRACTIONS = {"item": "value-extraction", "__float__": "value-extraction", "__int__": "value-extraction",
                "__index__": "value-extraction", "__complex__": "value-extraction", "tolist": "value-extraction",
                "__bool__": "data-dependent-branch"}
_UNRECORDABLE = frozenset({"data_ptr", "untyped_storage", "storage", "__array_wrap__", "__dlpack__", "share_memory_",
                           "pin_memory", "set_", "resize_", "resize_as_", "as_strided_"})
_OPERATORS: dict[str, Callable[..., Any]] = {
    "__add__": operator.add, "__sub__": operator.sub, "__mul__": operator.mul, "__truediv__": operator.truediv,
    "__floordiv__": operator.floordiv, "__mod__": operator.mod, "__pow__": operator.pow,
    "__matmul__": operator.matmul, "__and__": operator.and_, "__or__": operator.or_, "__xor__": operator.xor,
    "__lshift__": operator.lshift, "__rshift__": operator.rshift, "__neg__": operator.neg,
    "__pos__": operator.pos, "__abs__": operator.abs, "__invert__": operator.invert, "__eq__": operator.eq,
    "__ne__": operator.ne, "__lt__": operator.lt, "__le__": operator.le, "__gt__": operator.gt,
    "__ge__": operator.ge, "__getitem__": operator.getitem,
}
# Augmented assignment (``t += 1``): recorded as the operator, and ``t`` rebound to the result.
_AUGMENTED = frozenset(f"__i{op[2:]}" for op in _OPERATORS if op not in ("__getitem__", "__neg__", "__pos__",
                                                                          "__abs__", "__invert__", "__eq__",
                                                                          "__ne__", "__lt__", "__le__",
                                                                          "__gt__", "__ge__"))
_RANDOM = frozenset({"rand", "rand_like", "randn", "randn_like", "randint", "randint_like", "randperm", "bernoulli",
                     "multinomial", "normal", "poisson", "uniform_", "normal_", "bernoulli_", "exponential_",
                     "geometric_", "log_normal_", "cauchy_", "random_"})
_DROPOUTS = frozenset({"dropout", "alpha_dropout", "feature_alpha_dropout", "dropout1d", "dropout2d", "dropout3d",
                       "rrelu"})
_VIEW_PROPERTIES = {"T": lambda t: ("permute", tuple(reversed(range(t.ndim)))),
                    "mT": lambda t: ("transpose", (-2, -1)), "H": lambda t: ("adjoint", ()),
                    "mH": lambda t: ("adjoint", ())}


def _name(func: Any) -> str:
    return getattr(func, "__name__", "") or type(func).__name__


def _is_method(func: Any, name: str) -> bool:
    """Whether ``func`` is the Tensor method ``name``: the method itself, or the Python wrapper torch/_tensor.py
    puts in front of some of them (``t ** u`` reaches the recorder as ``TensorBase.pow`` of that module, a
    function the graph's generated code could not name)."""
    if getattr(Tensor, name, None) is func:
        return True
    return getattr(func, "__module__", None) == "torch._tensor" and hasattr(Tensor, name) \
        and getattr(func, "__qualname__", "").partition(".")[0] in ("Tensor", "TensorBase")


_DISPLAY: dict[Any, str] = {}  # per torch callable: a torch call asks for it up to three times


def display(func: Any) -> str:
    try:
        return _DISPLAY[func]
    except KeyError:
        shown = _DISPLAY[func] = _display(func)
        return shown
    except TypeError:  # an unhashable callable
        return _display(func)


def _display(func: Any) -> str:
    name = _name(func)
    if _is_method(func, name):
        return f"Tensor.{name}"
    module = getattr(func, "__module__", None) or "torch"
    if module.startswith("torch.nn.functional"):
        return f"F.{name}"
    if module.startswith("torch._C") or module == "torch" or module.startswith("torch._VF"):
        return f"torch.{name}"
    return f"{module}.{name}"


class TorchRecorder(TorchFunctionMode):
    """Records the torch calls a traced cell makes on traced data (see the module docstring)."""

    def __torch_function__(self, func: Any, types: Any, args: tuple[Any, ...] = (), kwargs: Any = None) -> Any:
        sess = _session.ACTIVE
        if (func is _GETITEM or func is _WHERE) and sess is not None and not sess.selected and _selecting(func, args):
            sess.selected = True  # t[mask], torch.where(m): a result as long as a count of the data (fast path too)
        if sess is not None and not sess.suspended and sess.on_first_tensor is None and sess.thread == get_ident():
            # the common call (see _fast): recorded as a pending node, without the general path's dispatch
            try:
                fast = _FAST.get(func)
            except TypeError:  # an unhashable callable
                fast = False
            if fast is None:
                if len(_FAST) >= _MAX_PLANS:
                    _FAST.clear()
                fast = _FAST[func] = _fast_plan(func)
            if fast is not False:
                result = _fast(sess, fast, func, args, kwargs)
                if result is not _DECLINED:
                    return result
        kwargs = kwargs or {}
        sess = _session.active()
        if sess is None or sess.suspended:
            return func(*args, **kwargs)
        if not sess.selected and func in _SELECTING:  # torch.nonzero, ...: never on the fast path
            sess.selected = True
        name = _name(func)
        if name == "__get__":
            return _attribute(sess, func, args)
        if name in _METADATA_METHODS and (name != "type" or len(args) == 1 and not kwargs):
            result = func(*args, **kwargs)  # t.type() names the type; t.type(torch.float64) converts: recorded
            if sess.selected and name in _SIZE_READS and args and getattr(args[0], "_lp", None) is not None:
                # the cell reading a selection's length (t[m].numel(), len(t[m]), t[m].size(0))
                dim = args[1] if len(args) > 1 else kwargs.get("dim")
                _session.size_read(args[0], f".{name}({'' if dim is None else dim}) = {result}" if name != "__len__"
                                   else f"len() = {result}", 0 if name == "__len__" else dim)
            return result
        builder = builder_of(args) or (builder_of(kwargs.values()) if kwargs else None)
        if builder is None:
            return _untraced_call(sess, func, name, args, kwargs)
        if builder.session is not sess:
            return func(*args, **kwargs)
        if builder.closed:
            builder = sess.reopen(builder)
            if builder.closed and name not in _EXTRACTIONS:  # an extraction is remembered as one (extracted)
                result = func(*args, **kwargs)
                # not recorded, but a write through ``t.detach().numpy()`` between two nodes reaches ``t``, a node's
                # output the next node may declare: the memory is followed as inside a node
                if name == "detach" and isinstance(args[0], Tensor):
                    sess.detached_from(result, args[0])
                elif _plan(func, name).in_place and isinstance(args[0], Tensor):
                    sess.outside_write(args[0])
                outside = sess.outside(builder, result, display(func))
                if name == "numpy" and isinstance(args[0], Tensor) and isinstance(outside, ndarray):
                    sess.link(outside, args[0], shares=True)
                return outside
        # the site found from here (the frame above is the cell's for a C function), not from deeper in
        return _record(sess, builder, func, name, args, kwargs, sess.array_type in types, sess.where())


# ------------------------------------------------------------------------------------------
# the fast path: a torch call on tensors traced in the open node, at their current value
# ------------------------------------------------------------------------------------------

class _FastPlan:
    """What the fast path needs of one torch callable (made once per callable; False in ``_FAST`` for a callable
    the general path must take: anything that reports, writes, extracts, crosses to NumPy or keeps extra books)."""

    __slots__ = ("name", "op", "target", "base", "swap", "shown", "torch", "view", "specs")

    def __init__(self, name: str, plan: "_Plan"):
        self.name = name
        self.op, self.target, self.swap, self.shown = plan.op, plan.target, plan.swap, plan.shown
        self.base = base_name(plan.op, plan.target)
        self.torch = target_display(plan.op, plan.target)
        self.view = name in _VIEWS
        # per (result shape, result dtype): the pending node's spec (RecordingGraph.flush): its facts are fixed by
        # them, and its site facts are memoized per spec as a replayed NumPy op's are
        self.specs: dict[tuple[Any, Any], tuple[Any, ...]] = {}


_FAST: dict[Any, Any] = {}
_DECLINED = object()
# names the general path keeps books for (``__get__``: an attribute; ``detach``: the memory it shares)
_NOT_FAST = frozenset({"__get__", "numpy", "__array__", "__setitem__", "__iter__", "detach"})
# argument values passed to the graph as they are
_AS_IS = frozenset({int, float, bool, type(None), str, torch.dtype, type(Ellipsis)})
_MAX_SPECS = 256  # per callable: result shapes and dtypes kept
_MAX_PLANS = 4_096  # callables kept in _FAST (torch's own are a few hundred; then it starts over)


def _fast_plan(func: Any) -> Any:
    name = _name(func)
    if name in _NOT_FAST or name in _METADATA_METHODS or name in _EXTRACTIONS or name in _UNRECORDABLE \
            or func in _SELECTING:
        return False  # (a call that always selects by the data sets Session.selected on the general path)
    plan = _plan(func, name)
    if plan.in_place or plan.random or plan.dropout or plan.target is torch_impl.on_copy \
            or leapp_defects.torch_defect_named(plan.shown):
        return False
    return _FastPlan(name, plan)


def _fast(sess: Any, fast: _FastPlan, func: Any, args: tuple[Any, ...], kwargs: Any) -> Any:
    """A torch call whose tensors are all traced in the open node at their current value, with plain Python values
    beside them (numbers, None, dtypes, strings, slices and lists or tuples of these): what ``_record`` does for
    it (no constant, no hazard, no check: torch computes the eager value itself), with its node left pending for the
    graph's next flush, as a replayed NumPy call's is. ``_DECLINED`` for anything else, before the call runs."""
    graph_args, builder = _fast_values(args, None, True)
    if graph_args is None:
        return _DECLINED
    if builder is None or builder.closed or builder.session is not sess:
        return _DECLINED
    if kwargs:
        for value in kwargs.values():
            if type(value) not in _AS_IS:
                return _DECLINED
    site = sess.where_below()  # the frame above the recorder is the cell's for a C function: no walk
    result = func(*args, **kwargs) if kwargs else func(*args)
    if type(result) is not Tensor:  # NotImplemented, a tuple of tensors, a number: the general path's
        return _record(sess, builder, func, fast.name, args, kwargs or {}, False, site, result)
    if fast.swap:  # __radd__: other + self
        graph_args[0], graph_args[1] = graph_args[1], graph_args[0]
    shape, dtype = result.shape, result.dtype
    spec = fast.specs.get((shape, dtype))
    if spec is None:
        spec = _fast_spec(fast, shape, dtype)
    pending = pend(builder.graph.log, spec, tuple(graph_args), site)
    pending.kwargs = dict(kwargs) if kwargs else None
    if fast.view and result.is_inference() and type(args[0]) is Tensor \
            and result.untyped_storage().data_ptr() == args[0].untyped_storage().data_ptr():
        sess.detached_from(result, args[0])  # a view of an inference tensor has no ``_base`` to find it by
    prov = _new(Provenance)  # Provenance(builder, pending, version), spelled out
    prov.builder, prov._node = builder, pending
    prov.version = tensor_version(result) if result.is_inference() else result._version
    prov.lost = prov.line = prov.fingerprint = prov.plain = None
    result._lp = prov
    return result


def _current(tensor: Tensor, builder: Any) -> Any:
    """The provenance of ``tensor`` when it is traced in ``builder``'s node (in any node, for None) at its current write
    count: what the fast path takes; None otherwise."""
    prov = tensor.__dict__.get("_lp")
    if prov is None or prov._node is None or (builder is not None and prov.builder is not builder) \
            or prov.version != (tensor_version(tensor) if tensor.is_inference() else tensor._version):
        return None
    return prov


def _fast_values(values: Any, builder: Any, nested: bool) -> tuple[list[Any] | None, Any]:
    """The graph values of a fast-path call's arguments (``nested``: lists and tuples among them too, one level) and
    the builder of their tensors (``builder``, or the first tensor's when None); None for the values when one of them
    is not for the fast path: a tensor not traced in that node at its current write count, a slice of anything but
    plain values, any other object."""
    parts: list[Any] = []
    for value in values:
        kind = type(value)
        if kind is Tensor:
            prov = _current(value, builder)
            if prov is None:
                return None, builder
            builder = prov.builder
            parts.append(prov._node)
        elif kind in _AS_IS or kind is slice and type(value.start) in _AS_IS and type(value.stop) in _AS_IS \
                and type(value.step) in _AS_IS:
            parts.append(value)
        elif nested and (kind is list or kind is tuple):
            inner, builder = _fast_values(value, builder, False)
            if inner is None:
                return None, builder
            parts.append(kind(inner))
        else:
            return None, builder
    return parts, builder


def _fast_spec(fast: _FastPlan, shape: Any, dtype: Any) -> tuple[Any, ...]:
    """The pending-node spec of ``fast``'s calls with a result of ``shape`` and ``dtype`` (``RecordingGraph.flush``
    reads it): the facts ``_record`` and ``Session.wrap`` give such a node, the argument fixer that puts the built
    nodes in place of pending ones, and the template op's memo of its facts by site."""
    if len(fast.specs) >= _MAX_SPECS:
        fast.specs.clear()
    state = SharedState(numpy=fast.shown, torch=fast.torch, shape=tuple(shape), dtype=dtype_name(dtype),
                        kind="torch", view=False)
    spec = fast.specs[(shape, dtype)] = (fast.op, fast.target, fast.base, state, _built_args, None,
                                         [None, None, None])
    return spec


def _built_args(args: tuple[Any, ...], kwargs: Any) -> tuple[tuple[Any, ...], Any]:
    """A fast-path node's arguments with the fx nodes of the pending ones among them (built by then: the flush
    builds in order), in lists and tuples too."""
    fixed = []
    for value in args:
        kind = type(value)
        if kind is Pending:
            value = value.node
        elif kind is list or kind is tuple:
            value = kind([v.node if type(v) is Pending else v for v in value])
        fixed.append(value)
    return tuple(fixed), kwargs


def _untraced_call(sess: Any, func: Any, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """A torch call on no traced data: runs as is; a random op inside an open node is still a hazard."""
    result = func(*args, **kwargs)
    if (name in _RANDOM or (name in _DROPOUTS and _dropout_active(func, args, kwargs))) and sess.open_builder():
        builder = sess.open_builder()
        line, location, _ = sess.where()
        generator = kwargs.get("generator")
        if "torch.manual_seed" in sess.seeded and (generator is None or generator is torch.default_generator):
            # a draw from the seeded global generator, on no traced data: baked, the same on every run
            builder.report("seeded-random", line, [], name=name, location=location, call=display(func),
                           seed="torch.manual_seed", severity="warning")
        else:
            hazard = builder.report("random", line, [], name=name, location=location, call=display(func))
            target = args[0] if args else kwargs.get("tensor")  # (nn.init passes it by keyword)
            if isinstance(target, Tensor) and (getattr(func, "__module__", None) == "torch.nn.init"
                                               or name.endswith("_") and _in_init()):
                # nn.init drawing a module's initial weights in place: settled when the node closes, by whether
                # load_state_dict replaced them since (builder.finish)
                builder.init_draws.setdefault((hazard.kind, line), []).append(target)
            else:
                builder.random_other.add((hazard.kind, line))
    return result


def _dropout_active(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    try:
        bound = inspect.signature(func).bind(*args, **kwargs)
    except (TypeError, ValueError):
        return True
    bound.apply_defaults()
    return bool(bound.arguments.get("training", True)) and bound.arguments.get("p", 1) != 0


def _attribute(sess: Any, func: Any, args: tuple[Any, ...]) -> Any:
    """``t.shape``, ``t.T``, ``t.data``, ...: properties reach a mode as ``__get__``."""
    descriptor = getattr(func, "__self__", None)
    attr = getattr(descriptor, "__name__", "")
    value = func(*args)
    tensor = args[0] if args else None
    prov = getattr(tensor, "_lp", None)
    if attr == "shape" and prov is not None and sess.selected:  # the cell reading a selection's length
        _session.size_read(tensor, f".shape = {tuple(value)}", None, 4)
    if attr in _METADATA_ATTRS or prov is None or prov.builder is None or not isinstance(value, Tensor):
        return value
    builder = prov.builder
    if builder.closed:
        builder = sess.reopen(builder)
        if builder.closed:
            if attr == "data":
                sess.detached_from(value, tensor)  # as ``t.detach()`` between two nodes
            return sess.outside(builder, value, f"Tensor.{attr}")
    line, location, helper = sess.where()
    start = len(builder.fresh)
    source = sess.graph_value(builder, tensor, line, as_tensor=True, helper=helper)
    if attr == "data":
        _leapp_portability(sess, builder, "Tensor.data", (tensor,), {}, [source.name], line, location)
        sess.detached_from(value, tensor)  # its memory, not a view of it
        return sess.wrap(builder, value, source)
    if attr in _VIEW_PROPERTIES:
        method, extra = _VIEW_PROPERTIES[attr](tensor)
        node = builder.emit("call_method", method, (source, *extra), line=line, numpy=f"Tensor.{attr}",
                            location=location, helper=helper)
    elif attr in ("real", "imag"):
        node = builder.emit("call_function", getattr(torch, attr), (source,), line=line, numpy=f"Tensor.{attr}",
                            location=location, helper=helper)
    else:
        return _unrecorded(sess, builder, f"Tensor.{attr}", value, line, location, helper, [source.name])
    replay.trusted(builder, start)
    return sess.wrap(builder, value, node)


class _Plan:
    """What recording a torch callable takes that depends on the callable alone (made once per callable:
    ``_record`` runs for every torch call on traced data)."""

    __slots__ = ("method", "in_place", "random", "dropout", "op", "target", "swap", "shown")

    def __init__(self, func: Any, name: str):
        self.method = _is_method(func, name)
        self.in_place = (self.method and name.endswith("_") and not name.endswith("__")) or name in _AUGMENTED
        self.random = name in _RANDOM
        self.dropout = name in _DROPOUTS
        self.op, self.target, self.swap = _target(func, name, self.method, self.in_place)
        self.shown = display(func)


_PLANS: dict[Any, _Plan] = {}
# Torch calls whose result can be a view of their first argument (for inference tensors, which keep no ``_base``)
_VIEWS = frozenset({"__getitem__", "view", "view_as", "reshape", "reshape_as", "transpose", "permute", "squeeze",
                    "unsqueeze", "flatten", "unflatten", "expand", "expand_as", "narrow", "select", "t", "movedim",
                    "moveaxis", "swapaxes", "swapdims", "diagonal", "as_strided", "unfold", "real", "imag"})


def _plan(func: Any, name: str) -> _Plan:
    try:
        plan = _PLANS.get(func)
    except TypeError:  # an unhashable callable
        return _Plan(func, name)
    if plan is None:
        plan = _PLANS[func] = _Plan(func, name)
    return plan


def _plain_arrays(sess: Any, key: Any) -> Any:
    """An indexing key with the tracer's arrays as plain NumPy views of the same data."""
    if type(key) is sess.array_type:
        return ndarray.view(key, ndarray)
    if type(key) is tuple:
        return tuple(ndarray.view(k, ndarray) if type(k) is sess.array_type else k for k in key)
    return key


def _record(sess: Any, builder: Any, func: Any, name: str, args: tuple[Any, ...], kwargs: dict[str, Any],
            arrays: bool = False, site: Any = None, result: Any = _DECLINED) -> Any:
    """Record a torch call on traced data; ``arrays``: traced arrays are among its arguments (torch lists the
    TracedArray type among the call's overloaded ones). ``site``: the call's, found by the recorder (None: found
    here). ``result``: the call's eager result when the fast path ran it and hands the call over (its result is not
    one tensor; such a call is neither in place nor one the first checks below take)."""
    line, location, helper = site if site is not None else sess.where()
    kind = _EXTRACTIONS.get(name)
    if kind is not None:
        value = func(*args, **kwargs)
        _session.extracted(args[0], kind, f"{display(func)}() = {_short(value)}",
                           truth=value if name == "__bool__" else None)
        return value
    if name in ("numpy", "__array__"):
        dtype = args[1] if len(args) > 1 else kwargs.get("dtype")
        return to_numpy(sess, args[0], display(func), dtype, eager=func(*args, **kwargs), site=(line, location, helper))
    if name in _UNRECORDABLE:
        value = func(*args, **kwargs)
        sources = [v._lp.node.name for v in iter_traced(args, builder)]
        if name == "__array_wrap__":  # np.tanh(t): NumPy converted the tensor and wraps its result back
            return _unrecorded(sess, builder, "Tensor.__array_wrap__", value, line, location, helper, sources,
                               cause="numpy-on-tensor")
        return _unrecorded(sess, builder, display(func), value, line, location, helper, sources)
    if name == "__setitem__":
        return _setitem(sess, builder, args, line, location, helper)
    plan = _plan(func, name)
    shown = plan.shown
    in_place = plan.in_place
    target = args[0] if in_place else None
    before = None
    if in_place and getattr(target, "_lp", None) is None:
        before = target.detach().clone()  # an untraced tensor receiving traced data: its old value is a constant
    random = plan.random or (plan.dropout and _dropout_active(func, args, kwargs))
    # graph values first: an in-place op bumps its tensor's version, which would make it look stale
    start = len(builder.fresh)
    graph_args = [_graph_arg(sess, builder, a, line, helper) for a in args]
    if before is not None:
        graph_args[0] = builder.const(before, baked=False, origin=None, line=line, helper=helper)
    graph_kwargs = {k: _graph_arg(sess, builder, v, line, helper) for k, v in kwargs.items()} if kwargs else {}
    version = _counter(target) if in_place else 0
    if result is _DECLINED:
        if name == "__getitem__" and arrays:
            # a traced NumPy index (logits[np.argmax(...)]): torch would read the tracer's array type as a sequence,
            # element by element (a broken chain of the tracer's own making); it reads a plain array as one index
            result = func(args[0], _plain_arrays(sess, args[1]))
        else:
            result = func(*args, **kwargs)
    if result is NotImplemented:  # an operator declining (``t @ np.float32(2)``): Python asks the other operand
        return result
    if arrays:
        _as_numbers(sess, builder, args, kwargs, graph_args, graph_kwargs, line, location, helper)
    if plan.swap:  # __radd__: other + self
        graph_args[0], graph_args[1] = graph_args[1], graph_args[0]
    elif plan.target is torch_impl.on_copy:
        graph_args.insert(1, name)
    if name == "__iter__":
        if args[0].dim():  # a loop over a selection's rows: as many passes as it held at trace time
            _session.size_read(args[0], f"a loop over it ({len(args[0])} passes)", 0, 4)
        return _iterate(sess, builder, args[0], graph_args[0], line, location, helper)
    node = builder.emit(plan.op, plan.target, tuple(graph_args), graph_kwargs, line=line, numpy=shown,
                        location=location, helper=helper)
    if random:
        builder.random_other.add((builder.report("random", line, [node.name], name=name, location=location,
                                                 call=shown).kind, line))
    if func in _AUTOGRAD:  # a gradient taken inside the node (a Jacobian of the cell's own ops)
        builder.report("autograd", line, [node.name], name=name, location=location, call=shown)
    _leapp_portability(sess, builder, shown, args, kwargs, [node.name], line, location)
    if in_place:
        prior = getattr(target, "_lp", None)  # the view's value before the op, should its base be written too
        rebound = _rebind(sess, builder, target, node, line, location, version)
        if prior is not None and prior.builder is builder or before is not None:
            _write_back_view(sess, builder, target, prior, node, version, line, location, helper, shown)
        return rebound
    if isinstance(result, Tensor):
        replay.trusted(builder, start)
        if name == "detach" and isinstance(args[0], Tensor):  # the memory and write counter of args[0]
            sess.detached_from(result, args[0])
        elif name in _VIEWS and isinstance(args[0], Tensor) and result.is_inference() \
                and result.untyped_storage().data_ptr() == args[0].untyped_storage().data_ptr():
            sess.detached_from(result, args[0])  # a view of an inference tensor has no ``_base`` to find it by
        return sess.wrap(builder, result, node)
    if isinstance(result, (tuple, list)) and all(isinstance(r, Tensor) for r in result):
        parts = [builder.emit("call_function", operator.getitem, (node, i), line=line, numpy=shown,
                              location=location, helper=helper) for i in range(len(result))]
        replay.trusted(builder, start)
        return rebuilt(result, [sess.wrap(builder, r, p) for r, p in zip(result, parts, strict=True)])
    node.graph.erase_node(node)
    del builder.fresh[start:]
    sources = [v._lp.node.name for v in iter_traced(args, builder)]
    return _unrecorded(sess, builder, shown, result, line, location, helper, sources)


def _as_numbers(sess: Any, builder: Any, args: tuple[Any, ...], kwargs: dict[str, Any], graph_args: list[Any],
                graph_kwargs: dict[str, Any], line: int | None, location: str | None, helper: str | None) -> None:
    """Traced NumPy scalars among a torch call's arguments (``t * x[0]``, ``t.clamp(min=np.min(x))``; the tracer
    holds one as a marked 0-d array): torch takes a NumPy scalar as a Python number, which does not decide the
    result's dtype within its kind, where the graph's 0-d tensor would (``t16 * np.float64(2)`` is float16, a
    float16 tensor times a 0-d float64 one float64 when both are 0-d; a bool tensor times a float16 scalar is
    float32). Its graph value is cast to the dtype torch gives the call's first tensor and that number."""
    other = next((a for a in args if isinstance(a, Tensor)), None)
    if other is None:
        return
    for values, graph_values in ((dict(enumerate(args)), graph_args), (kwargs, graph_kwargs)):
        for key, value in values.items():
            node = graph_values[key]
            if type(value) is not sess.array_type or not getattr(value, "_scalar", False) \
                    or not isinstance(node, fx.Node):
                continue
            number = ndarray.view(value, ndarray)[()].item()
            want = torch.result_type(other, number)
            if want != torch.from_numpy(ndarray.view(value, ndarray)).dtype:
                graph_values[key] = builder.emit("call_method", "to", (node, want), line=line,
                                                 numpy="a NumPy scalar as torch takes it", location=location,
                                                 helper=helper)


def _leapp_portability(sess: Any, builder: Any, what: str, args: tuple[Any, ...], kwargs: dict[str, Any],
                       nodes: list[str], line: int | None, location: str | None) -> None:
    """What LEAPP 0.7.2 would get wrong about a torch call recorded faithfully here (an error in ``leapp``)."""
    for value in args:
        if isinstance(value, ndarray) and getattr(value, "_scalar", False):
            value = ndarray.view(value, ndarray)[()]  # a NumPy scalar the tracer holds as a marked 0-d array
        if isinstance(value, np.generic) and not isinstance(value, np.bool_):
            builder.report("numpy-scalar-on-tensor", line, [], location=location, call=what,
                           scalar=f"{type(value).__name__}({value.item()!r})")
            break
    finding = leapp_defects.find_torch(what, args, kwargs)
    if finding is not None:
        builder.report("leapp-records-wrongly", line, nodes, name=what, location=location,
                       severity="error" if sess.profile == "leapp" else "warning", fix=finding.fix,
                       what=finding.message)


def _target(func: Any, name: str, method: bool, in_place: bool) -> tuple[str, Any, bool]:
    """The fx op and target recording ``func`` (in-place forms as their functional twins), and whether its first two
    arguments swap places (``__radd__``: other + self)."""
    if name.startswith("__r") and f"__{name[3:]}" in _OPERATORS:
        return "call_function", _OPERATORS[f"__{name[3:]}"], True
    if in_place and name.startswith("__i"):
        return "call_function", _OPERATORS[f"__{name[3:]}"], False
    if name in _OPERATORS:
        return "call_function", _OPERATORS[name], False
    if method:
        if in_place:
            functional = name[:-1]
            if functional == "copy":  # t.copy_(src): the value becomes src, in t's dtype and shape
                return "call_function", torch_impl.copy_into, False
            if hasattr(Tensor, functional):
                return "call_method", functional, False
            return "call_function", torch_impl.on_copy, False  # ``_record`` passes the method's name
        return "call_method", name, False
    return "call_function", func, False


def _graph_arg(sess: Any, builder: Any, value: Any, line: int | None, helper: str | None) -> Any:
    if isinstance(value, (Tensor, ndarray)):
        return sess.graph_value(builder, value, line, as_tensor=True, helper=helper)
    if type(value) in (list, tuple):
        return type(value)(_graph_arg(sess, builder, v, line, helper) for v in value)
    if isinstance(value, slice):
        return slice(*(_graph_arg(sess, builder, p, line, helper) for p in (value.start, value.stop, value.step)))
    if isinstance(value, np.generic):
        if sess.outside_scalars:
            sess.scalar_used(builder, value, line)
        return value.item()
    return value


def _rebind(sess: Any, builder: Any, target: Tensor, node: fx.Node, line: int | None,
            location: str | None, version: int, region: Tensor | None = None) -> Tensor:
    """An in-place op: ``target`` (``region``: the view of it written, None: all of it) now holds the recorded
    value, and its write counter moved from ``version``; a write into a node input is reported."""
    with _OWN_READS():
        # (a view of an inference tensor keeps no ``_base``: its bytes are read whatever it is)
        written = region if region is not None else \
            target if target._base is not None or target.is_inference() else None
    sess.tensor_wrote(target, version, _session._layout(written) if written is not None else None)
    if sess.input_storages:
        sess.tensor_written(target)
    if sess.shared_storage or sess.crossings:
        sess.shared_write(target, builder, node)
    return sess.wrap(builder, target, node)


def _write_back_view(sess: Any, builder: Any, view: Tensor, prior: Any, written: fx.Node, version: int,
                     line: int | None, location: str | None, helper: str | None, shown: str) -> None:
    """An in-place op on a view (``a[:, :2].clamp_(-1, 1)``) writes its base too: where the view is an index of the
    base's current value (recorded ``getitem(base, key)``, the base unchanged since), the base's new value is
    recorded as ``setitem(base, key, written)``, as ``a[:, :2] = a[:, :2].clamp(-1, 1)`` is. Otherwise the base stays
    as it was recorded, and its next use reports it as changed by a write the graph does not hold. An augmented
    assignment on a subscript (``u[1, :2] *= 3``) is left alone: Python writes that view back itself
    (``u.__setitem__``); one on a name (``for r in t: r -= r.mean()``) is not."""
    with _OWN_READS():
        base = view._base
    if base is None:
        return
    base_prov = getattr(base, "_lp", None)
    if base_prov is None:
        # a view of a tensor that holds no traced data (``b = torch.zeros(5, 4); b[:, 1:].copy_(a)``): the base's
        # new value is its present one (all but the view as it was) with the view's recorded value written in
        if prior is not None or leapp_calls.augmented_subscript():
            return
        key = _region_key(base, view)
        if key is None:
            return
        with _OWN_READS():
            present = base.detach().clone()
        base_node = builder.const(present, baked=False, origin=None, line=line, helper=helper)
    else:
        if base_prov.builder is not builder or base_prov.lost is not None or base_prov.version != version \
                or prior is None or leapp_calls.augmented_subscript():
            return
        base_node = base_prov.node
        view_node = prior.node  # (the view's provenance before the op)
        if view_node is not None and view_node.op == "call_function" and view_node.target is operator.getitem \
                and view_node.args[0] is base_node:
            key = view_node.args[1]
        else:  # a view made some other way (``a.narrow(1, 0, 2)``, ``a.T[0]``): its key read from where it lies
            key = _region_key(base, view)
            if key is None:
                return
    new_base = builder.emit("call_function", torch_impl.setitem, (base_node, key, written),
                            line=line, numpy=leapp_defects.VIEW_WRITE, location=location, helper=helper)
    sess.wrap(builder, base, new_base)  # the write's own bookkeeping (its region, shared memory) was the view's
    finding = leapp_defects.find_torch(leapp_defects.VIEW_WRITE, (), {"untraced_base": base_prov is None})
    # an error where the base's new value reaches an output (LEAPP's export then returns the old one), else a warning
    builder.report("leapp-records-wrongly", line, [new_base.name], name=shown, location=location, pending_reach=True,
                   severity="error" if sess.profile == "leapp" else "warning", fix=finding.fix, what=finding.message)


def _region_key(base: Tensor, view: Tensor) -> tuple[Any, ...] | None:
    """A basic key (ints and slices) with ``base[key]`` the very elements of ``view`` in the same order, read from
    where both lie in memory; None when no such key is found (a transposed or broadcast view, another dtype)."""
    with _OWN_READS():
        if view.dtype != base.dtype or view.untyped_storage().data_ptr() != base.untyped_storage().data_ptr():
            return None
        shape, strides = tuple(base.shape), base.stride()
        view_shape, view_strides = tuple(view.shape), view.stride()
        offset = view.storage_offset() - base.storage_offset()
        if offset < 0 or any(stride <= 0 for stride in strides):
            return None
        starts = [0] * len(shape)
        for dim in sorted(range(len(shape)), key=lambda d: -strides[d]):  # the offset, axis by axis
            if shape[dim] > 1:
                starts[dim], offset = divmod(offset, strides[dim])
        if offset:
            return None
        key: list[Any] = []
        axis = 0
        for dim, (size, stride) in enumerate(zip(shape, strides, strict=True)):
            # a view axis for this axis of the base (a whole multiple of its stride), else an int drops the axis
            fits = axis < len(view_shape) and len(shape) - dim >= len(view_shape) - axis and (
                view_shape[axis] == 1 or view_strides[axis] % stride == 0 and view_strides[axis] // stride > 0)
            if fits:
                step = view_strides[axis] // stride if view_shape[axis] > 1 else 1
                stop = starts[dim] + step * (view_shape[axis] - 1) + 1
                key.append(slice(None) if step == 1 and starts[dim] == 0 and stop == size else
                           slice(starts[dim] or None, None if stop == size else stop, None if step == 1 else step))
                axis += 1
            else:
                key.append(starts[dim])
        if axis != len(view_shape):
            return None
        try:
            region = Tensor.__getitem__(base, tuple(key))
        except (IndexError, RuntimeError):
            return None
        same = region.data_ptr() == view.data_ptr() and tuple(region.shape) == view_shape and all(
            n == 1 or a == b for n, a, b in zip(view_shape, region.stride(), view_strides, strict=True))
    return tuple(key) if same else None


def _setitem(sess: Any, builder: Any, args: tuple[Any, ...], line: int | None, location: str | None,
             helper: str | None) -> None:
    target, key, value = args
    prov = getattr(target, "_lp", None)
    version = _counter(target)
    region = _written_region(target, key)
    if prov is None:
        base = builder.const(target.detach().clone(), baked=False, origin=None, line=line, helper=helper)
    elif _writes_back(builder, prov, version, region, value):
        base = prov.node
    else:
        base = sess.graph_value(builder, target, line, as_tensor=True, helper=helper)
    graph_key = _graph_arg(sess, builder, key, line, helper)
    graph_value = _graph_arg(sess, builder, value, line, helper)
    Tensor.__setitem__(target, key, value)
    node = builder.emit("call_function", torch_impl.setitem, (base, graph_key, graph_value), line=line,
                        numpy="Tensor.__setitem__", location=location, helper=helper)
    _rebind(sess, builder, target, node, line, location, version, region)


def _writes_back(builder: Any, prov: Any, version: int, region: Tensor | None, value: Any) -> bool:
    """``t[:, 1:] *= 2``: Python writes the view it changed in place back (``t.__setitem__(key, view)``). When the
    only write into ``t`` since it got its node (``version``: its counter now) is the one through that very view,
    and ``region`` (what this assignment writes) is exactly the view's memory, ``t``'s node from before is the base
    the assignment writes into: nothing else of ``t`` changed (as NumPy's, ``indexing._writes_back``)."""
    value_prov = getattr(value, "_lp", None)
    if region is None or not isinstance(value, Tensor) or value_prov is None or value_prov.lost is not None \
            or not value_prov.traced_in(builder) or not prov.traced_in(builder) or prov.lost is not None \
            or not value_prov.version == version == prov.version + 1:
        return False
    with _OWN_READS():
        return region.data_ptr() == value.data_ptr() and region.dtype == value.dtype \
            and region.shape == value.shape and region.stride() == value.stride()


def _counter(tensor: Tensor) -> int:
    """``tensor``'s write counter (0 for an inference tensor), read as the tracer's own."""
    with _OWN_READS():
        return tensor_version(tensor)


def _written_region(target: Tensor, key: Any) -> Tensor | None:
    """The view of ``target`` that ``target[key] = v`` wrote, for a basic key (``indexing.basic_key``); None for any
    other key (all of ``target`` counts as written)."""
    if not indexing.basic_key(key if type(key) is tuple else (key,)):
        return None
    with _OWN_READS():
        try:
            return Tensor.__getitem__(target, key)
        except (IndexError, TypeError, RuntimeError):
            return None


def _iterate(sess: Any, builder: Any, tensor: Tensor, source: Any, line: int | None, location: str | None,
             helper: str | None) -> Any:
    items = []
    with sess.eager():
        rows = tensor.detach().unbind(0)
    for i, row in enumerate(rows):
        node = builder.emit("call_function", operator.getitem, (source, i), line=line, numpy="iter(Tensor)",
                            location=location, helper=helper)
        items.append(sess.wrap(builder, row, node))
    return iter(items)


def _unrecorded(sess: Any, builder: Any, what: str, value: Any, line: int | None, location: str | None,
                helper: str | None, sources: list[str], cause: str = "torch-unrecordable") -> Any:
    """A torch call on traced data whose result cannot be recorded: a tensor is baked, a Python value frozen."""
    if isinstance(value, Tensor):
        node = builder.const(value, baked=True, origin=f"{what} at line {line}", line=line, source_nodes=sources,
                             helper=helper)
        builder.report(cause, line, [node.name], name=what, location=location, pending_reach=True, const=node.name)
        return sess.wrap(builder, value, node)
    if type(value) is bool and _session._decided(builder, value, line, location, f"{what}(...) = {value}") \
            or _session._logged(builder, line, location, f"{what}(...) = {_short(value)}", sources):
        return value  # torch.allclose(...) in an assert, a value printed: not frozen in the graph
    builder.report("python-value", line, sources, name=what, location=location, why=what, where="",
                   value=_short(value))
    return value


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


# ------------------------------------------------------------------------------------------
# crossings
# ------------------------------------------------------------------------------------------

def to_numpy(sess: Any, tensor: Tensor, what: str, dtype: Any = None, eager: Any = None,
             site: Any = None) -> Any:
    """``t.numpy()``, ``np.asarray(t)``: a TracedArray on the tensor's graph value (the chain is kept). ``site``:
    the call's, when the caller found it."""
    with _OWN_READS():
        return _to_numpy(sess, tensor, what, dtype, eager, site)


def _to_numpy(sess: Any, tensor: Tensor, what: str, dtype: Any, eager: Any, site: Any) -> Any:
    prov = tensor._lp
    if eager is None:
        with sess.eager():
            eager = np.asarray(tensor.detach().numpy(), dtype=dtype)
    builder = prov.builder
    if builder is None:
        return eager
    if builder.closed:
        builder = sess.reopen(builder)
        if builder.closed:  # between two nodes: not recorded, but a write through either side reaches the other
            outside = sess.outside(builder, eager, what)
            sess.link(outside, tensor, shares=True if what == "Tensor.numpy" else None)
            return outside
    line, location, helper = site if site is not None else sess.where()
    start = len(builder.fresh)
    node = sess.graph_value(builder, tensor, line, as_tensor=True, helper=helper)
    if dtype is not None and np.dtype(dtype) != eager.dtype or eager.dtype != numpy_dtype(tensor.dtype):
        node = builder.emit("call_method", "to", (node, torch.from_numpy(eager.reshape(-1)[:0]).dtype), line=line,
                            numpy=what, location=location, helper=helper)
    if eager.shape != tuple(tensor.shape) and eager.size == tensor.numel():
        # ``np.ascontiguousarray(t)``, ``np.array(t, ndmin=2)``: NumPy gives the array at least that many dimensions
        node = builder.emit("call_method", "reshape", (node, eager.shape), line=line, numpy=what, location=location,
                            helper=helper)
    traced = sess.wrap(builder, eager, node)
    replay.settle(sess, builder, start, (tensor,), traced)
    sess.link(traced, tensor, shares=True if what == "Tensor.numpy" else None)
    return traced


def _from_array(sess: Any, value: Any, what: str, dtype: Any, eager: Tensor) -> Tensor:
    """``torch.from_numpy(x)``, ``torch.as_tensor(x, dtype=)``, ``torch.tensor(x)`` of a traced array (called by the
    patched function, whose caller is the cell's frame for a call the cell makes: ``Session.where_below``)."""
    builder = builder_of((value,))
    if builder is None:
        return eager
    if builder.closed:
        builder = sess.reopen(builder)
        if builder.closed:  # between two nodes: not recorded, but a write through either side reaches the other
            outside = sess.outside(builder, eager, what)
            if isinstance(value, ndarray):
                sess.link(value, outside, shares=True if what == "torch.from_numpy" else None)
            return outside
    line, location, helper = sess.where_below()
    start = len(builder.fresh)
    if isinstance(value, ndarray):
        node = sess.graph_value(builder, value, line, as_tensor=True, helper=helper)
    else:  # a list of traced values: stacked
        parts = [sess.graph_value(builder, v, line, as_tensor=True, helper=helper) for v in value]
        node = builder.emit("call_function", torch.stack, (parts,), line=line, numpy=what, location=location,
                            helper=helper)
    node = builder.emit("call_method", "to", (node, eager.dtype), line=line, numpy=what, location=location,
                        helper=helper) if dtype is not None or not isinstance(value, ndarray) else node
    _leapp_portability(sess, builder, what, (value,), {"dtype": dtype}, [node.name], line, location)
    traced = sess.wrap(builder, eager, node)
    replay.settle(sess, builder, start, (value,), traced)
    if isinstance(value, ndarray) and what != "torch.tensor":  # torch.tensor copies; from_numpy never does
        sess.link(value, traced, shares=True if what == "torch.from_numpy" else None)
    return traced


def _from_numpy(array: Any) -> Tensor:
    original = _ORIGINAL["from_numpy"]
    sess = _session.active()
    if sess is None or sess.suspended or getattr(array, "_lp", None) is None:
        return original(plain(array, depth=0))
    with _OWN_READS():
        eager = original(ndarray.view(array, ndarray))
        return _from_array(sess, array, "torch.from_numpy", None, eager)


def _conversion(name: str) -> Callable[..., Any]:
    original = getattr(torch, name)

    def convert(data: Any, *args: Any, **kwargs: Any) -> Any:
        sess = _session.active()
        if sess is None or sess.suspended or not isinstance(data, (ndarray, list, tuple)) \
                or builder_of((data,)) is None:
            return original(plain(data, scalars=True), *args, **kwargs)
        with sess.eager():
            eager = original(plain(data, scalars=True), *args, **kwargs)
        with _OWN_READS():
            return _from_array(sess, data, f"torch.{name}", kwargs.get("dtype", args[0] if args else None), eager)

    convert.__wrapped__ = original  # type: ignore[attr-defined]
    convert.__name__ = name
    return convert


# ------------------------------------------------------------------------------------------
# nn.Module calls
# ------------------------------------------------------------------------------------------

_MODE_DEPENDENT = (torch.nn.modules.dropout._DropoutNd, torch.nn.modules.batchnorm._NormBase, torch.nn.RReLU)
_TRAINING_EFFECTS = {
    torch.nn.modules.dropout._DropoutNd: "random dropout masks: the output differs from run to run",
    torch.nn.modules.batchnorm._NormBase: "each batch normalized by its own statistics, the running statistics "
                                          "updated on every call: the output depends on the rest of the batch",
    torch.nn.RReLU: "random negative slopes: the output differs from run to run"}


def _mode_dependent(module: torch.nn.Module) -> tuple[list[str], str]:
    """Submodules (by name) that behave differently while ``training`` is true, and what they do differently."""
    found, effects = [], []
    for sub_name, sub in module.named_modules():
        if not sub.training:
            continue
        label = f"{sub_name} ({type(sub).__name__})" if sub_name else type(sub).__name__
        if isinstance(sub, _MODE_DEPENDENT):
            found.append(label)
            effects.append(_TRAINING_EFFECTS[next(kind for kind in _MODE_DEPENDENT if isinstance(sub, kind))])
        elif isinstance(sub, torch.jit.ScriptModule):
            continue  # TorchScript: no Python forward to read (its class's forward raises when looked up)
        elif type(sub).forward is not torch.nn.Module.forward and (type(sub).__module__ or "").split(".")[0] != "torch":
            code = getattr(type(sub).forward, "__code__", None)
            if code is not None and _reads_training(code):
                found.append(label)
                effects.append("a forward that reads self.training")
    return found, "; ".join(dict.fromkeys(effects))


def _reads_training(code: Any) -> bool:
    """Whether a forward reads a ``.training`` attribute, whatever it calls the module (``self``, ``me``), in its
    own code or a function or comprehension nested in it."""
    return "training" in code.co_names or any(_reads_training(const) for const in code.co_consts
                                              if isinstance(const, type(code)))


def _traced_call(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, Any] | None:
    """(the session, the builder of the first traced argument) for a call on data traced in the running session,
    else None (the call runs as it is)."""
    sess = _session.active()
    if sess is None or sess.suspended:
        return None
    builder = builder_of(args) or (builder_of(kwargs.values()) if kwargs else None)
    if builder is None or builder.session is not sess:
        return None
    return sess, builder


def _module_call(module: torch.nn.Module, *args: Any, **kwargs: Any) -> Any:
    original = _ORIGINAL["Module._call_impl"]
    traced = _traced_call(args, kwargs)
    if traced is None:
        return original(module, *args, **kwargs)
    sess, builder = traced
    if builder.closed:
        builder = sess.reopen(builder)
        if builder.closed:
            with _OWN_READS():
                return sess.outside(builder, original(module, *args, **kwargs), f"{type(module).__name__}(...)")
    # The module runs as it would untraced; torch's function dispatch skips the recorder inside it (each of
    # its torch calls would only pass through), and so do the tracer's own reads of its tensors.
    with _OWN_READS():
        return _record_module_call(sess, builder, original, module, args, kwargs)


def _record_module_call(sess: Any, builder: Any, original: Any, module: torch.nn.Module, args: tuple[Any, ...],
                        kwargs: dict[str, Any]) -> Any:
    line, location, helper = sess.where()
    named = builder.module_names.get(id(module))
    if named is None or named[0] is not module:  # the cell's name for it, looked up once (a policy runs every step)
        named = builder.module_names[id(module)] = (module, sess.name_of(module) or type(module).__name__.lower())
    name = named[1]
    watched = builder.module_watched.get(id(module))
    if watched is None or watched[0] is not module:
        watched = builder.module_watched[id(module)] = (module, _own_forward(module))
    if watched[1]:
        result, found = _watched_call(sess, original, module, args, kwargs)
    else:
        with sess.eager():
            result = original(module, *args, **kwargs)
        found = ()
    target = builder.module(module, name)
    start = len(builder.fresh)
    graph_args = [_graph_arg(sess, builder, a, line, helper) for a in args]
    graph_kwargs = {k: _graph_arg(sess, builder, v, line, helper) for k, v in kwargs.items()}
    node = builder.emit("call_module", target, tuple(graph_args), graph_kwargs, line=line, numpy=f"{name}(...)",
                        location=location, helper=helper)
    # what a module call's facts say, once per module and training mode (a policy is called at every step)
    known = builder.module_facts.get((id(module), module.training))
    if known is None or known[0] is not module:
        dependent, how = _mode_dependent(module)
        facts_ = ModuleFacts(target, type(module).__name__, sum(p.numel() for p in module.parameters()),
                             bool(dependent))
        known = builder.module_facts[(id(module), module.training)] = (module, facts_, dependent, how)
    _, module_facts, dependent, how = known
    update(node, torch=type(module).__name__, module=module_facts)
    if dependent:
        builder.report("training", line, [node.name], name=name, location=location, type=type(module).__name__,
                       dependent=", ".join(dependent), verb="behaves" if len(dependent) == 1 else "behave", how=how)
    for cause, call, where, text in found:
        if dependent and cause == "module-random" and call.rpartition(".")[2] in _DROPOUTS:
            continue  # a dropout of a module in training mode: the training-mode hazard says it
        builder.report(cause, line, [node.name], name=f"{name}:{where}", location=location, module=name,
                       call=call, where=where, text=text)
    if isinstance(result, Tensor):
        replay.trusted(builder, start)
        wrapped = sess.wrap(builder, result, node)
    elif isinstance(result, (tuple, list)) and all(isinstance(r, Tensor) for r in result):
        parts = [builder.emit("call_function", operator.getitem, (node, i), line=line, numpy=f"{name}(...)[{i}]",
                              location=location, helper=helper) for i in range(len(result))]
        replay.trusted(builder, start)
        wrapped = rebuilt(result, [sess.wrap(builder, r, p) for r, p in zip(result, parts, strict=True)])
    elif type(result) is dict and result and all(type(k) is str and isinstance(v, Tensor) for k, v in result.items()):
        # a dict of tensors ({"mean": mu, "value": v}): one getitem per key, the dict rebuilt around them
        wrapped = {key: sess.wrap(builder, value, builder.emit("call_function", operator.getitem, (node, key),
                                                                line=line, numpy=f"{name}(...)[{key!r}]",
                                                                location=location, helper=helper))
                   for key, value in result.items()}
        replay.trusted(builder, start)
    else:
        # an object (a torch.distributions.Normal of a Gaussian policy): the graph holds a module call's tensors only
        builder.report("module-object", line, [node.name], name=f"{name}(...)", location=location, module=name,
                       type=type(result).__name__)
        return result
    return wrapped


_TORCH_DIR = os.path.dirname(torch.__file__) + os.sep


def _own_forward(module: torch.nn.Module) -> bool:
    """Whether ``module`` (or a submodule) runs a forward written outside torch, in Python: what ``_watched_call``
    watches (torch's own modules take no branch on their inputs' values; TorchScript runs no Python)."""
    if isinstance(module, (torch.jit.ScriptModule, _ScriptCall)):
        return False
    for sub in module.modules():
        if isinstance(sub, (torch.jit.ScriptModule, _ScriptCall)):
            continue  # (a scripted module's class raises when its forward is looked up)
        forward = type(sub).forward
        if forward is not torch.nn.Module.forward \
                and not (getattr(forward, "__module__", None) or "").startswith("torch."):  # (None: exec'd in a dict)
            return True
    return False


class _ScriptCall(torch.nn.Module):
    """A TorchScript function (``@torch.jit.script def limit(t): ...``) called on traced data, held as a module: it
    runs in C++, where no mode sees its ops, so the graph calls it whole as one ``call_module`` node (fx's generated
    code cannot name a ScriptFunction as a global), its branches kept (``_script_function_call``)."""

    def __init__(self, function: Any):
        super().__init__()
        self.function = function

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        return self.function(*args, **kwargs)


_SCRIPT_CALLS: dict[int, _ScriptCall] = {}  # a ScriptFunction's module, by the function's id (kept with it)


def _script_function_call(function: Any, *args: Any, **kwargs: Any) -> Any:
    """``ScriptFunction.__call__`` during a trace: a call on traced data is recorded as a call of the function's
    module (``_ScriptCall``), with the ``script-function`` finding (LEAPP 0.7.2 sees none of its ops)."""
    original = _ORIGINAL["ScriptFunction.__call__"]
    traced = _traced_call(args, kwargs)
    if traced is None:
        return original(function, *args, **kwargs)
    sess, builder = traced
    held = _SCRIPT_CALLS.get(id(function))
    if held is None or held.function is not function:
        if len(_SCRIPT_CALLS) >= 256:
            _SCRIPT_CALLS.clear()
        held = _SCRIPT_CALLS[id(function)] = _ScriptCall(function)
    name = getattr(function, "name", None) or "script_function"
    builder.module_names[id(held)] = (held, name)
    result = _module_call(held, *args, **kwargs)
    if not builder.closed:
        line, location, _ = sess.where()
        node = getattr(getattr(result, "_lp", None), "_node", None)
        builder.report("script-function", line, [node.name] if isinstance(node, fx.Node) else [], location=location,
                       name=name, severity="error" if sess.profile == "leapp" else "warning")
    return result


_TAKES_VALUE = {"__bool__": "module-branch", "item": "module-extraction", "__float__": "module-extraction",
                "__int__": "module-extraction", "__index__": "module-extraction", "tolist": "module-extraction",
                "__complex__": "module-extraction", "numpy": "module-extraction"}


class _ModuleWatch(TorchFunctionMode):
    """Watches a module's forward, run eagerly and unrecorded (the graph holds the module as one call_module node),
    for what that node holds but the exports that trace it do not: a branch or a Python value taken on data that
    comes from the call's inputs (followed from op to op), and random draws. Each op runs as it would untraced."""

    def __init__(self, inputs: list[Tensor]):
        super().__init__()
        self.kept = list(inputs)  # alive while watched: their ids stay theirs
        self.tainted = {id(t) for t in inputs}
        self.found: dict[tuple[str, str], tuple[str, str, str, str]] = {}
        self.state: set[int] = set()  # ids of the module's own tensors (parameters, buffers, attributes)

    def __torch_function__(self, func: Any, types: Any, args: tuple[Any, ...] = (), kwargs: Any = None) -> Any:
        kwargs = kwargs or {}
        with _OWN_READS():
            result = func(*args, **kwargs)
        name = _name(func)
        tainted = self.tainted
        hit = any(id(value) in tainted for value in _tensors_in(args, kwargs))
        cause = _TAKES_VALUE.get(name) if hit else None
        if cause is None and (name in _RANDOM or name in _DROPOUTS and _dropout_active(func, args, kwargs)):
            cause = "module-random"
        if cause is None and hit and args and isinstance(args[0], Tensor) and id(args[0]) in self.state \
                and _plan(func, name).in_place:
            cause = "module-state"  # self.buf.copy_(h): the input's data written into the module's own tensor
        if cause is not None:
            where, text = _forward_site()
            self.found.setdefault((cause, where), (cause, display(func), where, text))
        if hit:
            for value in _tensors_in((result,), {}):
                tainted.add(id(value))
                self.kept.append(value)
        return result


def _tensors_in(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Iterator[Tensor]:
    for value in (*args, *kwargs.values()):
        if isinstance(value, Tensor):
            yield value
        elif type(value) in (list, tuple):
            yield from (v for v in value if isinstance(v, Tensor))


def _forward_site() -> tuple[str, str]:
    """The first frame outside torch and the tracer, as ``file:line``, and its line's text."""
    frame = sys._getframe(2)
    here = os.path.dirname(__file__)
    while frame is not None and (frame.f_code.co_filename.startswith(_TORCH_DIR)
                                 or frame.f_code.co_filename.startswith(here)):
        frame = frame.f_back
    if frame is None:
        return "?", ""
    filename, line = frame.f_code.co_filename, frame.f_lineno
    shown = provenance.shown_file(filename)  # a notebook cell's own file as In[N]
    return f"{os.path.basename(shown) if shown == filename else shown}:{line}", \
        linecache.getline(filename, line).strip()


def _watched_call(sess: Any, original: Any, module: torch.nn.Module, args: tuple[Any, ...],
                  kwargs: dict[str, Any]) -> tuple[Any, list[tuple[str, str, str, str]]]:
    """``module(*args, **kwargs)`` run as untraced, under ``_ModuleWatch``; its result and what the watch found. A
    value from the call's inputs kept on a module (``self.hidden = h``, an assignment; ``self.buf.copy_(h)``, a write
    into its tensors) is state the next call reads: found here too (``module-state``)."""
    watch = _ModuleWatch([t for t in _tensors_in(args, kwargs) if getattr(t, "_lp", None) is not None])
    watch.state = {id(t) for sub in module.modules() for t in (*sub._parameters.values(), *sub._buffers.values(),
                                                                 *vars(sub).values()) if isinstance(t, Tensor)}
    setattr_ = torch.nn.Module.__setattr__

    def kept(target: torch.nn.Module, name: str, value: Any) -> None:
        if any(id(v) in watch.tainted for v in _tensors_in((value,), {})):
            where, text = _forward_site()
            watch.found.setdefault(("module-state", where), ("module-state", f"self.{name} = ...", where, text))
        setattr_(target, name, value)

    torch.nn.Module.__setattr__ = kept
    try:
        with sess.eager(), torch._C._EnableTorchFunction(), watch:
            result = original(module, *args, **kwargs)
    finally:
        torch.nn.Module.__setattr__ = setattr_
    return result, list(watch.found.values())


# ------------------------------------------------------------------------------------------
# install / uninstall
# ------------------------------------------------------------------------------------------

_CONVERTED = ("as_tensor", "tensor", "asarray")


def _manual_seed(seed: Any) -> Any:
    """``torch.manual_seed`` during a trace: the draws from the global generator after it are the same on every run
    of the cell (``seeded-random``, where a draw would be ``random``)."""
    sess = _session.active()
    if sess is not None and not sess.suspended:
        sess.seeded.add("torch.manual_seed")
    return _ORIGINAL["manual_seed"](seed)


def _in_init() -> bool:
    """Whether torch's nn.init made the call (``tensor.uniform_`` inside ``init.kaiming_uniform_``)."""
    caller = library_caller(3)
    return caller is not None and caller[0] == "torch/nn/init.py"


def _load_state_dict(self: torch.nn.Module, state_dict: Any, *args: Any, **kwargs: Any) -> Any:
    """``nn.Module.load_state_dict`` during a trace: the tensors it filled are remembered (``Session.loaded``): the
    initial weights nn.init drew into them are replaced, not random in the graph."""
    result = _ORIGINAL["load_state_dict"](self, state_dict, *args, **kwargs)
    sess = _session.active()
    if sess is not None:
        missing = set(getattr(result, "missing_keys", ()) or ())
        for key, value in self.state_dict(keep_vars=True).items():
            if key in state_dict and key not in missing and isinstance(value, Tensor):
                sess.loaded.add(id(value))
    return result


def install() -> None:
    """Patch what a mode cannot see: ``torch.from_numpy`` and the array conversions. ``nn.Module._call_impl``
    is patched by :func:`watch_modules` when the first traced tensor appears (a module can only be called on
    traced data after that)."""
    _ORIGINAL["from_numpy"] = torch.from_numpy
    torch.from_numpy = _from_numpy
    _ORIGINAL["manual_seed"] = torch.manual_seed
    torch.manual_seed = _manual_seed
    _ORIGINAL["load_state_dict"] = torch.nn.Module.load_state_dict
    torch.nn.Module.load_state_dict = _load_state_dict
    for name in _CONVERTED:
        _ORIGINAL[name] = getattr(torch, name)
        setattr(torch, name, _conversion(name))


def watch_modules() -> None:
    """Record ``nn.Module`` calls on traced data from now until :func:`uninstall` (idempotent).

    ``Module._call_impl`` is patched, not ``Module.__call__`` (which calls it): assigning a special method on
    ``nn.Module`` makes Python update the call slot of each of its hundreds of subclasses, 45 us warm and 0.35
    ms after a full collection, twice per trace; a plain attribute costs under 1 us and 10 us. (A module
    compiled in place, ``module.compile()``, skips ``_call_impl`` and runs its compiled code, which calls its
    submodules: each of those is recorded as a ``call_module`` node instead of the whole.)"""
    if "Module._call_impl" not in _ORIGINAL:
        _ORIGINAL["Module._call_impl"] = torch.nn.Module._call_impl
        torch.nn.Module._call_impl = _module_call
        _ORIGINAL["ScriptFunction.__call__"] = torch.jit.ScriptFunction.__call__
        torch.jit.ScriptFunction.__call__ = _script_function_call


def uninstall() -> dict[int, Any]:
    """Undo :func:`install` (leaving alone anything the cell patched itself); {id(wrapper): original}."""
    restored: dict[int, Any] = {}
    for name in ("from_numpy", "manual_seed", *_CONVERTED):
        if name in _ORIGINAL:
            original = _ORIGINAL.pop(name)
            wrapper = getattr(torch, name)
            if wrapper is _from_numpy or wrapper is _manual_seed or getattr(wrapper, "__wrapped__", None) is original:
                setattr(torch, name, original)
                restored[id(wrapper)] = original
    if "load_state_dict" in _ORIGINAL:
        original = _ORIGINAL.pop("load_state_dict")
        if torch.nn.Module.load_state_dict is _load_state_dict:
            torch.nn.Module.load_state_dict = original
            restored[id(_load_state_dict)] = original
    if "Module._call_impl" in _ORIGINAL:
        original = _ORIGINAL.pop("Module._call_impl")
        if torch.nn.Module._call_impl is _module_call:
            torch.nn.Module._call_impl = original
    if "ScriptFunction.__call__" in _ORIGINAL:
        original = _ORIGINAL.pop("ScriptFunction.__call__")
        if torch.jit.ScriptFunction.__call__ is _script_function_call:
            torch.jit.ScriptFunction.__call__ = original
    return restored

