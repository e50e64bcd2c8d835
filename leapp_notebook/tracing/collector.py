"""The cyclic garbage collector around a trace.

A trace allocates many small objects that live as long as the trace does: about seven per recorded op (the
fx ``Node``, its ``meta``, ``users`` and input dicts, its arguments). The collector stays off while the cell
runs (its passes over the growing graph would cost more than the recording). When it is turned back on,
CPython would make a young-generation pass over every object the trace made, then a middle-generation pass
over the survivors: about 0.5 µs per recorded op for the first pass alone, 1 µs at 100,000 ops, for objects
that all survive.

``resume(promote=True)`` moves them straight to the oldest generation instead (``gc.freeze()`` then
``gc.unfreeze()``: two list splices, whatever the count). What CPython would have recorded for them, the
number of objects that reached the oldest generation since its last full collection, is counted here
instead, and ``pause()`` applies CPython's own rule before the next trace: a full collection once that
count exceeds a quarter of the long-lived objects. So dropped traces are freed on the same schedule as
before; only the two young passes over live objects are gone.

Nothing is promoted when the program froze objects itself (``gc.freeze()``: unfreezing would release
them), when it had turned the collector off, or when the trace failed (its objects are garbage: the
young pass frees them at once).
"""

from __future__ import annotations

import gc

# Promoted objects below this count are not worth measuring the heap for (about 3,000 recorded ops).
_CHECK_FLOOR = 20_000

_promoted = 0  # objects moved to the oldest generation by resume() since the last full collection
_full_seen = -1  # gc.get_stats()[-1]["collections"] when _promoted was last updated
_next_check = _CHECK_FLOOR  # the value of _promoted at which pause() measures the heap again


def _full_collections() -> int:
    return gc.get_stats()[-1]["collections"]


def promoted() -> int:
    """Objects promoted since the last full collection (0 once one ran)."""
    return _promoted if _full_collections() == _full_seen else 0


def pause() -> bool:
    """Before a trace: a full collection if CPython's rule says one is due for the promoted objects, then
    the collector off. Returns whether it was on (the argument of ``resume``)."""
    global _promoted, _next_check, _full_seen
    enabled = gc.isenabled()
    if enabled and _promoted >= _next_check:
        if _full_collections() != _full_seen:  # a full collection ran since: nothing is pending
            _promoted, _next_check = 0, _CHECK_FLOOR
        else:
            long_lived = max(len(gc.get_objects(generation=2)) - _promoted, 0)
            if 4 * _promoted > long_lived:  # CPython: long_lived_pending > long_lived_total / 4
                gc.collect()
                _promoted, _next_check = 0, _CHECK_FLOOR
            else:
                _next_check = _promoted + max(long_lived // 4 - _promoted, _CHECK_FLOOR)
    gc.disable()
    return enabled


def resume(was_enabled: bool, *, promote: bool) -> None:
    """After a trace: the collector back on if it was, its young objects promoted when ``promote``."""
    global _promoted, _full_seen, _next_check
    if not was_enabled:
        return
    if promote and gc.get_freeze_count() == 0:
        young = gc.get_count()[0]
        full = _full_collections()
        if full != _full_seen:
            _promoted, _full_seen, _next_check = 0, full, _CHECK_FLOOR
        gc.freeze()
        gc.unfreeze()
        _promoted += young
    gc.enable()
