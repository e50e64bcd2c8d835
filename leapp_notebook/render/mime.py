"""The trace's mime bundle: the graph model as JSON plus every rendering that applies."""

from __future__ import annotations

from typing import Any

import graphviz

from .dot import svg_fragment, to_svg
from .html import to_html
from .model import COMPACT_ABOVE, MIME_TYPE, compact, graph_model, vertex_count
from .text import to_text


def mimebundle(trace_or_model: Any, *, svg: bool = True) -> dict[str, Any]:
    """``application/vnd.leapp.trace+json`` (the graph model), ``text/plain``, ``text/html`` and, when
    ``dot`` is installed, ``image/svg+xml``. The HTML embeds the SVG, since notebook front ends
    prefer HTML; the SVG entry serves front ends that do not render HTML. Above ``COMPACT_ABOVE`` vertices
    the bundle carries the compacted model (unmarked stretches folded), so its size stays bounded."""
    model = graph_model(trace_or_model)
    if vertex_count(model) > COMPACT_ABOVE:
        model = compact(model)  # bounded output: Jupyter carries every byte of a bundle into the saved notebook
    document = None
    if svg:
        try:
            document = to_svg(model)
        except graphviz.CalledProcessError:
            document = None  # the static renderings still show every hazard
    bundle: dict[str, Any] = {
        MIME_TYPE: model,
        "text/plain": to_text(model),
        "text/html": to_html(model, svg=svg_fragment(document) if document else None),
    }
    if document:
        bundle["image/svg+xml"] = document
    return bundle
