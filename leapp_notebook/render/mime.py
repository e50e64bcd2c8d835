"""The trace's mime bundle: the graph model as JSON plus every rendering that applies."""

from __future__ import annotations

from typing import Any

import graphviz

from .dot import svg_fragment, to_svg
from .html import to_html
from .model import MIME_TYPE, graph_model
from .text import to_text


def mimebundle(trace_or_model: Any, *, svg: bool = True) -> dict[str, Any]:
    """``application/vnd.leapp.trace+json`` (the graph model), ``text/plain``, ``text/html`` and, when
    ``dot`` is installed, ``image/svg+xml``. The HTML embeds the SVG, since notebook front ends
    prefer HTML; the SVG entry serves front ends that do not render HTML."""
    model = graph_model(trace_or_model)
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
