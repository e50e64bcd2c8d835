"""The trace's mime bundle: the graph model as JSON plus every rendering that applies."""

from __future__ import annotations

import threading
from typing import Any, Callable

import graphviz

from .dot import svg_fragment, to_svg
from .html import to_html
from .model import COMPACT_ABOVE, MIME_TYPE, MODEL_COMPACT_ABOVE, compact, graph_model, vertex_count
from .text import to_text


def mimebundle(trace_or_model: Any, *, svg: bool = True) -> dict[str, Any]:
    """``application/vnd.leapp.trace+json`` (the graph model), ``text/plain``, ``text/html`` and, when
    ``dot`` is installed, ``image/svg+xml``. The HTML embeds the SVG, since notebook front ends
    prefer HTML; the SVG entry serves front ends that do not render HTML. Above ``COMPACT_ABOVE`` vertices the
    static renderings are drawn from the compacted model (unmarked stretches folded), above
    ``MODEL_COMPACT_ABOVE`` the JSON model is compacted too, so the bundle's size stays bounded."""
    return start_mimebundle(trace_or_model, svg=svg)()


def start_mimebundle(trace_or_model: Any, *, svg: bool = True) -> Callable[[], dict[str, Any]]:
    """:func:`mimebundle` in two steps: this one starts ``dot`` on the graph (in a thread, which waits for the
    ``dot`` process: the layout runs beside whatever the caller does next, on a core of its own); the function
    returned draws the text, waits for the SVG, and returns the bundle. ``%%leapp_trace`` makes its widget
    controls in between; the text is drawn while ``dot`` runs either way (together about half of a warm cell)."""
    # Bounded output: Jupyter carries every byte of a bundle into the saved notebook. A trace above
    # MODEL_COMPACT_ABOVE is compacted as its model is built; a model passed in is compacted here.
    model = graph_model(trace_or_model, compact_above=MODEL_COMPACT_ABOVE)
    count = model["compacted"]["vertices"] if "compacted" in model else vertex_count(model)
    shown = compact(model) if count > COMPACT_ABOVE else model
    drawn: list[Any] = []
    drawing = None
    if svg:
        drawing = threading.Thread(target=_draw, args=(shown, drawn), name="leapp_notebook-dot", daemon=True)
        drawing.start()

    def finish() -> dict[str, Any]:
        text = to_text(shown)
        document = None  # without dot, or when dot fails: the static renderings still show every hazard
        if drawing is not None:
            drawing.join()
            if not isinstance(drawn[0], BaseException):
                document = drawn[0]
            elif not isinstance(drawn[0], graphviz.CalledProcessError):
                raise drawn[0]
        bundle: dict[str, Any] = {
            MIME_TYPE: shown if count > MODEL_COMPACT_ABOVE else model,
            "text/plain": text,
            "text/html": to_html(shown, svg=svg_fragment(document) if document else None),
        }
        if document:
            bundle["image/svg+xml"] = document
        return bundle

    return finish


def _draw(model: dict[str, Any], drawn: list[Any]) -> None:
    try:
        drawn.append(to_svg(model))
    except BaseException as exc:  # noqa: BLE001 - handed to the thread that waits for the drawing
        drawn.append(exc)
