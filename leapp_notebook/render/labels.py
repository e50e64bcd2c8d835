"""How values are written in labels and tables: shapes, value previews, probe results, clipped code."""

from __future__ import annotations

import html
from typing import Any

CODE_WIDTH = 48


# Control characters are invalid in XML (Graphviz's HTML labels, SVG) and acted on by terminals (ESC sequences clear
# the screen or retitle it; C1's CSI is one byte in some): shown as U+FFFD instead. The C0 controls but tab, line feed
# and carriage return, DEL and the C1 controls.
CONTROL_CHARACTERS = {code: "\ufffd" for code in (*range(32), *range(0x7F, 0xA0)) if chr(code) not in "\t\n\r"}


def printable(value: Any) -> Any:
    """``value`` (a model, or any part of one) with every string's control characters shown as U+FFFD: cell
    text can hold terminal escape codes, which must not reach a terminal."""
    if isinstance(value, str):
        return value.translate(CONTROL_CHARACTERS) if not value.isprintable() else value
    if isinstance(value, dict):
        return {key: printable(item) for key, item in value.items()}
    if isinstance(value, list):
        return [printable(item) for item in value]
    return value


def esc(text: Any) -> str:
    """Text for an HTML-like label or an HTML page."""
    return html.escape(str(text).translate(CONTROL_CHARACTERS), quote=True)


def clip(text: str, width: int = CODE_WIDTH) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def shape_text(shape: list[int] | None) -> str:
    if shape is None:
        return "?"
    return "(" + ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"


def preview_text(values: list[Any], size: int | None = None) -> str:
    parts = [f"{v:.4g}" if isinstance(v, float) else str(v) for v in values[:4]]
    more = len(values) > 4 or (size is not None and size > len(values))
    return "[" + ", ".join(parts) + (", …" if more else "") + "]"


def call_text(vertex: dict[str, Any]) -> str:
    """What an op computes, in NumPy's words. A cast the tracer inserted to keep NumPy's dtypes carries
    the call it serves (``np.add``) in ``numpy``; it says it is a cast instead of posing as that call."""
    if vertex.get("cast"):
        return f"cast to {vertex['dtype']}"
    return vertex["numpy"]


def cast_note(vertex: dict[str, Any]) -> str:
    """Why a tracer-inserted cast is there ('' for any other vertex)."""
    return f"keeps NumPy's dtypes in {vertex['numpy']}" if vertex.get("cast") else ""


def probe_text(check: dict[str, Any]) -> str:
    """One line for an output's probe result."""
    if check["passed"]:
        return "✔ probe passed"
    reasons = []
    if check.get("baked"):
        reasons.append("baked: graph ignores an input")
    if not check.get("shape_ok", True):
        reasons.append("shape differs")
    if not check.get("dtype_ok", True):
        reasons.append("dtype differs")
    if check.get("mismatches"):
        of = f"/{check['n']}" if check.get("n") else ""
        reasons.append(f"wrong in {check['mismatches']}{of} probes")
    if check.get("max_abs_err") is not None:
        err = check["max_abs_err"]
        reasons.append(f"max |err| {err:.3g}" if isinstance(err, float) else f"max |err| {err}")
    return "✖ PROBE FAILED · " + " · ".join(reasons)


def module_label(vertex: dict[str, Any]) -> str:
    """``policy: Sequential · 114 params · (4,) → (2,)`` for an nn.Module vertex."""
    module = vertex.get("module") or {}
    shapes = f" · {shape_text(module.get('in_shape'))} → {shape_text(vertex.get('shape'))}"
    training = " · TRAINING" if module.get("training") else ""
    return (f"{module.get('name', vertex['name'])}: {module.get('type', vertex['torch'])} · "
            f"{module.get('params', 0):,} params{shapes}{training}")
