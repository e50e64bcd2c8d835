"""leapp_notebook: trace NumPy cells into torch graphs and see everything lookup tracing loses.

    import leapp_notebook as ln
    trace = ln.trace_cell(source, namespace, profile="leapp")
    trace.hazards, trace.probe(), trace.export("out/")

In IPython: ``%load_ext leapp_notebook`` then ``%%leapp_trace`` on a cell.
"""

from .probe import ProbeReport
from .trace import PROFILES, Annotate, Trace, annotate, trace_cell
from .tracing.hazards import CATALOGUE as HAZARD_KINDS
from .tracing.types import EXPORT_WITH, CellError, ExportBlocked, Hazard, Node, TensorSpec, TraceError

__version__ = "0.1.0"

__all__ = [
    "trace_cell", "annotate", "Annotate", "Trace", "Node", "Hazard", "TensorSpec", "CellError", "TraceError",
    "ExportBlocked", "PROFILES", "HAZARD_KINDS", "load_ipython_extension", "__version__", "TraceWidget",
    "ProbeReport", "EXPORT_WITH",
]


def __getattr__(name: str):  # noqa: ANN202
    """``ln.TraceWidget``, imported on first use so the CLI does not load ipywidgets."""
    if name == "TraceWidget":
        from .widget import TraceWidget

        return TraceWidget
    raise AttributeError(f"module 'leapp_notebook' has no attribute {name!r}")


def load_ipython_extension(ipython):  # noqa: ANN001, ANN201
    """``%load_ext leapp_notebook``: registers the ``%%leapp_trace`` cell magic."""
    from .magic import register

    register(ipython)


def _jupyter_labextension_paths():  # noqa: ANN202
    """Where JupyterLab finds the prebuilt front end (trace renderer, hazard marks in cell editors)."""
    return [{"src": "labextension", "dest": "leapp-notebook"}]
