"""Renderers of a trace: one graph model (``graph_model``) and pure renderers of it.

``to_dot`` (Graphviz DOT), ``to_svg`` (via ``dot`` when installed), ``to_text`` and ``renderable``
(rich, for ``print(trace)`` and the CLI), ``to_html`` (escaped HTML, the notebook fallback) and
``mimebundle`` (what ``Trace._repr_mimebundle_`` returns; ``start_mimebundle`` starts its ``dot`` layout
and finishes it later). Every renderer accepts a ``Trace`` or a model dict and reads only the model.
"""

from .dot import svg_fragment, to_dot, to_svg
from .html import to_html
from .mime import mimebundle, start_mimebundle
from .model import MIME_TYPE, SCHEMA, export_entry, graph_model, hazard_vertices, verdict
from .text import renderable, summary_line, to_text

__all__ = ["MIME_TYPE", "SCHEMA", "export_entry", "graph_model", "hazard_vertices", "verdict", "mimebundle",
           "start_mimebundle", "renderable", "summary_line", "svg_fragment", "to_dot", "to_html", "to_svg",
           "to_text"]
