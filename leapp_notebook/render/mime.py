"""The trace's mime bundle: the graph model as JSON plus every rendering that applies."""

from __future__ import annotations

from typing import Any

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
    model = graph_model(trace_or_model)
    # Bounded output: Jupyter carries every byte of a bundle into the saved notebook.
    count = vertex_count(model)
    shown = compact(model) if count > COMPACT_ABOVE else model
    document = None
    if svg:
        try:
            document = to_svg(shown)
        except graphviz.CalledProcessError:
            document = None  # the static renderings still show every hazard
    bundle: dict[str, Any] = {
        MIME_TYPE: shown if count > MODEL_COMPACT_ABOVE else model,
        "text/plain": to_text(shown),
        "text/html": to_html(shown, svg=svg_fragment(document) if document else None),
    }
    if document:
        bundle["image/svg+xml"] = document
    return bundle
