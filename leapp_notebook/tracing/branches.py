"""What a branch on traced data decides, read from the bytecode around it: whether the cell raises (``assert
np.isfinite(x).all()``, ``if bad: raise ValueError(...)``) or whether it logs (``if x.max() > 10: print(...)``).

Either way the graph is the same whichever way the branch goes, for every input the cell accepts: a check's other
path ends in a ``raise`` (nothing after it runs), a log's block only calls ``print``, ``warnings.warn`` or a logger
and rejoins the code after it. Such a branch is not the error a real branch is (the graph holds one path of two):
``Session`` reports it as a warning that says what the export leaves out. Anything else, or anything this reading
cannot be sure of (an ``else``, ``and``/``or``, a loop, a raise some ``try`` around it catches, bytecode of a
Python it does not know), is a real branch.
"""

from __future__ import annotations

import dis
from typing import Any

# Conditional jumps that pop the truth value (3.11: forward/backward variants; 3.12 on: one of each)
_JUMPS_IF_TRUE = frozenset({"POP_JUMP_IF_TRUE", "POP_JUMP_FORWARD_IF_TRUE", "POP_JUMP_BACKWARD_IF_TRUE"})
_JUMPS_IF_FALSE = frozenset({"POP_JUMP_IF_FALSE", "POP_JUMP_FORWARD_IF_FALSE", "POP_JUMP_BACKWARD_IF_FALSE"})
_FORWARD = frozenset({"POP_JUMP_IF_TRUE", "POP_JUMP_FORWARD_IF_TRUE", "POP_JUMP_IF_FALSE",
                      "POP_JUMP_FORWARD_IF_FALSE"})
# What a log statement's block may hold besides its calls: loads, constants, formatting, operators, building
# arguments. No store, jump, import, function or class made, no return, raise or yield.
_LOG_BLOCK = frozenset({
    "NOP", "RESUME", "CACHE", "EXTENDED_ARG", "PUSH_NULL", "POP_TOP", "COPY", "SWAP",
    "LOAD_GLOBAL", "LOAD_NAME", "LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_DEREF", "LOAD_CONST", "LOAD_ATTR",
    "LOAD_METHOD", "LOAD_SMALL_INT", "LOAD_FAST_LOAD_FAST", "LOAD_FAST_BORROW", "LOAD_FAST_BORROW_LOAD_FAST_BORROW",
    "PRECALL", "CALL", "CALL_KW", "CALL_FUNCTION_EX", "KW_NAMES",
    "FORMAT_VALUE", "FORMAT_SIMPLE", "FORMAT_WITH_SPEC", "CONVERT_VALUE", "BUILD_STRING", "BUILD_TUPLE",
    "BUILD_LIST", "BUILD_MAP", "BUILD_CONST_KEY_MAP", "LIST_EXTEND", "BINARY_OP", "BINARY_SUBSCR",
    "COMPARE_OP", "UNARY_NEGATIVE", "UNARY_NOT", "UNARY_INVERT",
})
_NAME_LOADS = frozenset({"LOAD_GLOBAL", "LOAD_NAME", "LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_DEREF",
                         "LOAD_FAST_BORROW"})
_ATTRIBUTE_LOADS = frozenset({"LOAD_ATTR", "LOAD_METHOD"})
_CALLS = frozenset({"CALL", "CALL_KW", "CALL_FUNCTION_EX"})
_SKIPPED = frozenset({"NOP", "RESUME", "CACHE", "EXTENDED_ARG", "PUSH_NULL"})
# A log call: print(...), warn(...) (from warnings import warn), or a logging method of an object named as a logger
# or of the warnings module (logger.warning, logging.info, self.log.debug, warnings.warn)
_LOG_METHODS = frozenset({"warn", "warning", "info", "debug", "error", "critical", "exception", "log"})
_LOG_FUNCTIONS = frozenset({"print", "warn"})
# A raise's block: anything straight-line up to the raise (building the exception and its message)
_NOT_STRAIGHT = ("JUMP", "RETURN", "YIELD", "SEND", "FOR_ITER", "STORE_ATTR", "STORE_SUBSCR", "STORE_GLOBAL",
                 "STORE_DEREF", "DELETE_", "IMPORT_", "BEFORE_WITH", "SETUP_", "PUSH_EXC_INFO", "RERAISE")

CHECK = "check"
LOG = "log"

_CODES: dict[Any, tuple[list[Any], dict[int, int], list[Any]]] = {}  # code -> (instructions, index by offset, table)
_OUTCOMES: dict[tuple[Any, int, bool], str | None] = {}


def _read(code: Any) -> tuple[list[Any], dict[int, int], list[Any]]:
    found = _CODES.get(code)
    if found is None:
        bytecode = dis.Bytecode(code)
        instructions = list(bytecode)
        found = (instructions, {ins.offset: i for i, ins in enumerate(instructions)},
                 list(getattr(bytecode, "exception_entries", None) or ()))
        if len(_CODES) >= 512:
            _CODES.clear()
            _OUTCOMES.clear()
        _CODES[code] = found
    return found


def _at(index: dict[int, int], at: int) -> int | None:
    """The instruction a frame's ``f_lasti`` is in: during a call it may point at the call's last inline cache
    entry (3.11), which ``dis`` does not list."""
    for offset in range(at, max(at - 64, -1), -2):
        found = index.get(offset)
        if found is not None:
            return found
    return None


def outcome(frame: Any, truth: bool) -> str | None:
    """``CHECK`` when the truth value ``truth`` the frame's current instruction is taking (a conditional jump, or a
    call whose result a conditional jump tests next: ``assert np.allclose(...)``) decides only whether the code
    raises, ``LOG`` when it decides only whether it logs, None for a real branch (or one this cannot read)."""
    code, at = frame.f_code, frame.f_lasti
    key = (code, at, truth)
    try:
        found = _OUTCOMES[key]
    except KeyError:
        found = _OUTCOMES[key] = _outcome(code, at, truth)
    if found == CHECK and _caught_above(frame):
        return None
    return found


def _outcome(code: Any, at: int, truth: bool) -> str | None:
    try:
        instructions, index, table = _read(code)
    except Exception:  # noqa: BLE001 - bytecode dis cannot read: a real branch
        return None
    i = _at(index, at)
    if i is None:
        return None
    if instructions[i].opname in _CALLS and i + 1 < len(instructions):  # a call whose result the jump tests
        i += 1
    if instructions[i].opname == "TO_BOOL" and i + 1 < len(instructions):  # 3.13: the conversion, then the jump
        i += 1
    jump = instructions[i]
    if jump.opname in _JUMPS_IF_TRUE:
        jumps = truth
    elif jump.opname in _JUMPS_IF_FALSE:
        jumps = not truth
    else:
        return None  # and/or, a conversion the cell made itself (bool(x)), a comparison chain, ...
    target = index.get(jump.argval)
    if target is None or i + 1 >= len(instructions):
        return None
    other = i + 1 if jumps else target
    if _raises(instructions, other, table):
        return CHECK
    if jump.opname in _FORWARD and target > i + 1 and _logs_only(_rejoined(instructions, i + 1, target)):
        return LOG
    return None


def _rejoined(instructions: list[Any], start: int, target: int) -> list[Any]:
    """An ``if`` body ``instructions[start:target]`` without the copy of the code's return it may end in (the last
    statement of a function or cell: the compiler writes its ``return None`` into the body too), when the code at
    ``target`` is the same return."""
    block = instructions[start:target]
    for size in (1, 2):
        tail = block[-size:] if len(block) > size else []
        if tail and tail[-1].opname in ("RETURN_VALUE", "RETURN_CONST") and \
                [(ins.opname, ins.argval) for ins in tail] == \
                [(ins.opname, ins.argval) for ins in instructions[target:target + size]]:
            return block[:-size]
    return block


def _raises(instructions: list[Any], start: int, table: list[Any]) -> bool:
    """Whether the code from ``start`` runs straight to a ``raise`` that no ``try`` of the same code catches."""
    for ins in instructions[start:start + 64]:
        name = ins.opname
        if name == "RAISE_VARARGS":
            return ins.arg != 0 and not any(entry.start <= ins.offset < entry.end and _catches(instructions, entry)
                                            for entry in table)
        if name.startswith(_NOT_STRAIGHT):
            return False
    return False


def _catches(instructions: list[Any], entry: Any) -> bool:
    """Whether an exception table entry's handler is an ``except`` (typed or bare), not a ``with`` block's or a
    ``finally``'s cleanup (they raise again)."""
    position = next((i for i, ins in enumerate(instructions) if ins.offset == entry.target), None)
    if position is None:
        return True
    handler = instructions[position:position + 24]
    if handler[0].opname != "PUSH_EXC_INFO":
        return False  # the cleanup of a handler (COPY, POP_EXCEPT, RERAISE)
    if len(handler) > 1 and handler[1].opname == "POP_TOP":
        return True  # except:
    for ins in handler[1:]:
        if ins.opname in ("CHECK_EXC_MATCH", "CHECK_EG_MATCH"):
            return True
        if ins.opname in ("RERAISE", "WITH_EXCEPT_START"):
            return False
    return True  # (not read to its end: caught, to be safe)


def uncaught(frame: Any) -> bool:
    """Whether what the frame's current call raises reaches the tracer uncaught (no ``try`` of the frame or of its
    callers in user code catches it): ``np.testing.assert_allclose(...)`` in a cell is a check, as an ``assert``."""
    try:
        instructions, _, table = _read(frame.f_code)
    except Exception:  # noqa: BLE001
        return False
    at = frame.f_lasti
    return not any(entry.start <= at < entry.end and _catches(instructions, entry) for entry in table) \
        and not _caught_above(frame)


def _caught_above(frame: Any) -> bool:
    """Whether a ``try`` of a caller up to the cell catches what the frame raises (the callers between the frame and
    the tracer, which runs the cell: its frames are the first in this package)."""
    from .provenance import SKIP_PREFIXES

    caller = frame.f_back
    for _ in range(64):
        if caller is None or caller.f_code.co_filename.startswith(SKIP_PREFIXES):
            return False
        try:
            instructions, _, table = _read(caller.f_code)
        except Exception:  # noqa: BLE001
            return True
        at = caller.f_lasti
        if any(entry.start <= at < entry.end and _catches(instructions, entry) for entry in table):
            return True
        caller = caller.f_back
    return True


_LOGGED: dict[tuple[Any, int], bool] = {}


def logged(frame: Any) -> bool:
    """Whether the frame's current instruction is inside the arguments of a log call whose value is dropped
    (``print(x.mean().item())``, ``logger.info("%.3f" % x.mean())``): a value taken there reaches only the log."""
    key = (frame.f_code, frame.f_lasti)
    found = _LOGGED.get(key)
    if found is None:
        found = _LOGGED[key] = _logged(*key)
        if len(_LOGGED) >= 4096:
            _LOGGED.clear()
    return found


def _logged(code: Any, at: int) -> bool:
    try:
        instructions, index, _ = _read(code)
    except Exception:  # noqa: BLE001 - bytecode dis cannot read
        return False
    i = _at(index, at)
    if i is None:
        return False
    end = i
    while end < len(instructions) and instructions[end].opname != "POP_TOP":
        if instructions[end].opname not in _LOG_BLOCK or end - i > 256:
            return False
        end += 1
    start = i
    while start > 0 and not instructions[start].is_jump_target and instructions[start - 1].opname != "POP_TOP" \
            and instructions[start - 1].opname in _LOG_BLOCK and i - start < 256:
        start -= 1
    if end >= len(instructions):
        return False
    return _logs_only(instructions[start:end + 1])


def _logs_only(block: list[Any]) -> bool:
    """Whether ``block`` (an ``if``'s body with no ``else``) is only log calls whose values are dropped."""
    if not block or block[-1].opname != "POP_TOP":
        return False
    statement: list[Any] = []
    for ins in block:
        if ins.opname not in _LOG_BLOCK:
            return False
        if ins.opname == "POP_TOP":
            if not _log_call(statement):
                return False
            statement = []
        elif ins.opname not in _SKIPPED:
            statement.append(ins)
    return True


def _log_call(statement: list[Any]) -> bool:
    """Whether one statement's instructions (without the POP_TOP) are a call of a log function or method."""
    if len(statement) < 2 or statement[0].opname not in _NAME_LOADS or statement[-1].opname not in _CALLS:
        return False
    chain = [statement[0].argval]
    for ins in statement[1:]:
        if ins.opname not in _ATTRIBUTE_LOADS:
            break
        chain.append(ins.argval)
    if len(chain) == 1:
        return chain[0] in _LOG_FUNCTIONS
    return chain[-1] in _LOG_METHODS and any("log" in part.lower() or part == "warnings" for part in chain[:-1])
