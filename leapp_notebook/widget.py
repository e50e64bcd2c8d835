"""``TraceWidget``: the graph widget (ipywidgets) — summary, graph view, hazard table, Probe and Export.

The widget holds a ``Trace`` and draws it with the renderers' own pieces (``leapp_notebook.render``:
the summary and verdict, the hazard table, the probe and export results, the SVG from ``dot`` or the
escaped HTML fallback), so it says exactly what the notebook output says. Choosing a hazard in
``hazard_select`` re-renders the graph with that hazard's graph nodes emphasised. The buttons call
``Trace.probe`` and ``Trace.export``; their handlers run synchronously, so tests drive the widget
headless with ``button.click()`` and read the widgets' values.

Shown in a saved notebook without its kernel, a widget has no model to draw: the widget's bundle
carries a static fallback (the controls, disabled, saying to re-run the cell) for front ends that show
``text/html`` or ``text/plain`` instead of a dead widget, and ``application/vnd.leapp.controls+json``
for the JupyterLab extension, which draws the same disabled controls when the widget model is gone.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import ipywidgets as widgets
import traitlets

from .render import export_entry, graph_model, hazard_vertices, svg_fragment, to_html, to_svg
from .render.html import export_html, hazard_table_html, probe_html, summary_html
from .render.labels import esc
from .render.look import PROBE_FAILED
from .render.model import MODEL_COMPACT_ABOVE

CONTROLS_MIME_TYPE = "application/vnd.leapp.controls+json"
RERUN = "re-run the cell to probe or export"
DEFAULT_PROBES = 16


class TraceWidget(widgets.VBox):
    """A trace's graph with its hazards, and Probe and Export controls that call the ``Trace``.

    ``probe`` and ``seed`` are the controls' starting values (the magic passes its ``--probe N --seed S``).
    ``selected_hazard`` is the index (into ``trace.hazards``) of the hazard whose graph nodes are
    emphasised, or -1. ``results`` counts the probes and exports run: observe it to redraw elsewhere (the
    magic rewrites the trace's own output with ``model`` after each).
    """

    selected_hazard = traitlets.Int(-1)
    results = traitlets.Int(0)

    def __init__(self, trace: Any, *, directory: str = "leapp_export", controls_only: bool = False,
                 probe: int | None = None, seed: int | None = None, model: dict[str, Any] | None = None,
                 **kwargs: Any):
        self.trace = trace
        self.model: dict[str, Any] = {}
        self.exported: dict[str, Any] | None = None
        self._redrawing = False
        self.controls_only = controls_only
        # controls_only: the magic shows the graph and hazards in the trace's own output already, so the view's
        # widgets are not made (each is a comm to the front end, and the graph a run of dot) and stay None
        self.summary = self.graph = self.hazard_select = self.hazard_table = None
        if not controls_only:
            self.summary = widgets.HTML()
            self.graph = widgets.HTML(layout=widgets.Layout(overflow="auto", max_height="840px",
                                                            border="1px solid #e5e7eb", padding="4px"))
            self.hazard_select = widgets.Dropdown(options=[("none", -1)], value=-1, description="mark",
                                                  layout=widgets.Layout(width="auto", max_width="100%"))
            self.hazard_table = widgets.HTML(layout=widgets.Layout(width="100%"))
        self.probe_count = widgets.BoundedIntText(value=probe or DEFAULT_PROBES, min=1, max=100_000,
                                                  description="probes", layout=widgets.Layout(width="11em"))
        self.probe_seed = widgets.Text(value="" if seed is None else str(seed), placeholder="random",
                                       description="seed", layout=widgets.Layout(width="14em"))
        self.probe_button = widgets.Button(description="Probe", icon="play", button_style="primary",
                                           tooltip="run the graph and the eager cell on fresh random inputs")
        self.probe_progress = widgets.IntProgress(value=0, min=0, max=1, description="",
                                                  layout=widgets.Layout(width="14em"))
        self.probe_result = widgets.HTML()
        self.export_directory = widgets.Text(value=directory, description="directory",
                                             layout=widgets.Layout(width="22em"))
        self.export_jit = widgets.Checkbox(value=True, description="jit", indent=False,
                                           layout=widgets.Layout(width="4em"))
        self.export_onnx = widgets.Checkbox(value=False, description="onnx", indent=False,
                                            layout=widgets.Layout(width="5em"))
        self.export_force = widgets.Checkbox(value=False, description="force", indent=False,
                                             layout=widgets.Layout(width="5em"))
        self.export_button = widgets.Button(description="Export", icon="download",
                                            tooltip="write TorchScript/ONNX and the pipeline YAML")
        self.export_progress = widgets.IntProgress(value=0, min=0, max=1, description="",
                                                   layout=widgets.Layout(width="14em"))
        self.export_result = widgets.HTML()
        self.probe_button.on_click(self._on_probe)
        self.export_button.on_click(self._on_export)
        view = []
        if not controls_only:
            self.hazard_select.observe(self._on_select, "value")
            view = [self.summary, self.graph, widgets.HBox([widgets.HTML("<b>Hazards</b>"), self.hazard_select]),
                    self.hazard_table]
        super().__init__(children=view + [
            widgets.HTML("<b>Probe</b> <small>graph vs. eager cell on fresh random inputs</small>"),
            widgets.HBox([self.probe_count, self.probe_seed, self.probe_button, self.probe_progress]),
            self.probe_result,
            widgets.HTML("<b>Export</b>"),
            widgets.HBox([self.export_directory, self.export_jit, self.export_onnx, self.export_force,
                          self.export_button, self.export_progress]),
            self.export_result,
        ], **kwargs)
        self.refresh(model)

    # -------------------------------------------------------------- drawing
    def refresh(self, model: dict[str, Any] | None = None) -> None:
        """Rebuild the model from the trace (compacted above ``MODEL_COMPACT_ABOVE`` vertices, as the notebook
        output; ``model``: the trace's graph model, just built by the caller, taken instead) and redraw summary,
        graph and hazard table (with ``controls_only``, the model alone: the magic redraws its output from it)."""
        before = self._hazard_key(self.selected_hazard)
        self.model = dict(model) if model is not None else graph_model(self.trace, compact_above=MODEL_COMPACT_ABOVE)
        self.model["export"] = self.exported
        if self.controls_only:
            return
        keys = [self._hazard_key(index) for index in range(len(self.model["hazards"]))]
        # The probe may add hazards: keep the same hazard selected, wherever it now is.
        self._redrawing = True
        try:
            self.hazard_select.options = [("none", -1)] + [
                (f"{index + 1} · {hazard['kind']}" + ("" if hazard["line"] is None else f" · line {hazard['line']}"),
                 index) for index, hazard in enumerate(self.model["hazards"])]
            self.selected_hazard = keys.index(before) if before is not None and before in keys else -1
            self.hazard_select.value = self.selected_hazard
        finally:
            self._redrawing = False
        self.summary.value = summary_html(self.model)
        self._draw_hazards()
        self._draw_graph()

    def _hazard_key(self, index: int) -> tuple[Any, ...] | None:
        hazards = self.model.get("hazards", [])
        if not 0 <= index < len(hazards):
            return None
        hazard = hazards[index]
        return hazard["node"], hazard["kind"], hazard["line"], hazard["message"]

    def _draw_graph(self) -> None:
        highlight = hazard_vertices(self.model, self.selected_hazard) if self.selected_hazard >= 0 else []
        svg = to_svg(self.model, highlight=highlight)
        if svg is None:
            self.graph.value = to_html(self.model)
        else:
            self.graph.value = svg_fragment(svg)

    def _draw_hazards(self) -> None:
        hazards = self.model["hazards"]
        selected = self.selected_hazard if self.selected_hazard >= 0 else None
        self.hazard_table.value = _block(hazard_table_html(hazards, selected=selected) if hazards
                                         else "<span style=\"color:#15803d\">✔ no hazards</span>")

    def select_hazard(self, index: int) -> None:
        """Emphasise hazard ``index``'s graph nodes (selecting the selected hazard again clears it)."""
        self.selected_hazard = -1 if index == self.selected_hazard else index

    def _on_select(self, change: Any) -> None:
        if not self._redrawing:
            self.selected_hazard = change["new"]

    @traitlets.observe("selected_hazard")
    def _on_selected(self, _change: Any) -> None:
        if self._redrawing or self.controls_only:
            return
        self._redrawing = True
        try:
            self.hazard_select.value = self.selected_hazard
        finally:
            self._redrawing = False
        self._draw_hazards()
        self._draw_graph()

    # -------------------------------------------------------------- probe
    def _on_probe(self, _button: Any = None) -> None:
        seed_text = self.probe_seed.value.strip()
        if seed_text and not seed_text.isdigit():
            self.probe_result.value = _error(f"seed {seed_text!r}: give a non-negative integer, "
                                             "or leave it empty")
            return
        self.probe_button.disabled = True
        self.probe_progress.value = 0
        self.probe_progress.bar_style = ""
        try:
            report = self.trace.probe(n=self.probe_count.value, seed=int(seed_text) if seed_text else None,
                                      progress=self._on_progress)
        except Exception as exc:  # noqa: BLE001 - shown to the user, who can fix the cell or the inputs
            self.probe_progress.bar_style = "danger"
            self.probe_result.value = _error(f"probe failed: {type(exc).__name__}: {exc}")
            return
        finally:
            self.probe_button.disabled = False
        self.refresh()
        self.probe_progress.bar_style = "success" if report.passed else "danger"
        self.probe_result.value = _block(probe_html(self.model, table=True))
        self.results += 1

    def _on_progress(self, done: int, total: int) -> None:
        _advance(self.probe_progress, done, total)

    # -------------------------------------------------------------- export
    def _on_export(self, _button: Any = None) -> None:
        formats = [name for name, box in (("jit", self.export_jit), ("onnx", self.export_onnx)) if box.value]
        directory = self.export_directory.value.strip()
        if not formats:
            self.export_result.value = _error("choose at least one format (jit, onnx)")
            return
        if not directory:
            self.export_result.value = _error("give a directory to export to")
            return
        self.export_button.disabled = True
        self.export_progress.value = 0
        self.export_progress.bar_style = ""
        self.export_result.value = _block("<i>exporting: writing each model, then loading it back to check it "
                                          "against the eager cell…</i>")
        try:
            paths = self.trace.export(directory, formats=formats, force=self.export_force.value,
                                      progress=self._on_export_progress)
        except Exception as exc:  # noqa: BLE001 - refused, a missing onnx extra, a bad directory: said, not raised
            self.exported = export_entry(error=exc)
            self.export_progress.bar_style = "danger"
        else:
            self.exported = export_entry(files=[Path(path) for path in paths])
            self.export_progress.bar_style = "success"
        finally:
            self.export_button.disabled = False
        self.model["export"] = self.exported
        self.export_result.value = _block(export_html(self.exported))
        self.results += 1

    def _on_export_progress(self, done: int, total: int) -> None:
        _advance(self.export_progress, done, total)

    # -------------------------------------------------------------- saved without a kernel
    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        """The widget view, plus what a front end shows when the widget model is gone (a saved notebook
        reopened without its kernel): the controls, disabled, saying to re-run the cell."""
        data = super()._repr_mimebundle_(**kwargs)
        if data is None:
            return data
        seed = self.probe_seed.value.strip()
        data["text/plain"] = f"Probe and Export controls ({RERUN})"
        data["text/html"] = fallback_html(self.probe_count.value, seed, self.export_directory.value)
        data[CONTROLS_MIME_TYPE] = {
            "model_id": self.model_id,
            "probe": {"n": self.probe_count.value, "seed": int(seed) if seed.isdigit() else None},
            "export": {"directory": self.export_directory.value},
            "message": RERUN,
        }
        return data


class ProgressBar:
    """``progress=True`` in a Jupyter kernel: a bar in the cell's output while a probe or an export runs
    (``label 3/16``). It appears only once the work has run for ``AFTER`` seconds (a quick probe shows nothing and
    leaves nothing), and is replaced by nothing when it stops, so the saved notebook keeps no bar."""

    AFTER = 0.5  # seconds of work before the bar appears
    EVERY = 0.1  # seconds between redraws

    def __init__(self, label: str):
        self.label = label
        self.started = time.monotonic()
        self.shown = float("-inf")  # when it was last redrawn
        self.bar: Any = None
        self.handle: Any = None

    def update(self, done: int, total: int) -> None:
        """Redrawn at most every ``EVERY`` seconds, and at the last step: each redraw is a message to the front end
        (about a millisecond; a small cell's probe takes less)."""
        now = time.monotonic()
        if self.bar is None:
            if done >= total or now - self.started < self.AFTER:
                return
            from IPython.display import display

            self.bar = widgets.IntProgress(value=0, min=0, max=1, description=self.label,
                                           style={"description_width": "initial"},
                                           layout=widgets.Layout(width="24em"))
            self.handle = display(self.bar, display_id=True)
        elif done < total and now - self.shown < self.EVERY:
            return
        self.shown = now
        _advance(self.bar, done, total, f"{self.label} ")

    def stop(self) -> None:
        if self.bar is None:
            return
        self.bar.close()
        if self.handle is not None:
            self.handle.update({"text/plain": ""}, raw=True)


def _advance(bar: widgets.IntProgress, done: int, total: int, label: str = "") -> None:
    """Draw ``done`` of ``total`` on ``bar``, said as ``{label}{done}/{total}``: one message to the front end."""
    with bar.hold_sync():
        bar.max = max(total, 1)
        bar.value = done
        bar.description = f"{label}{done}/{total}"


def fallback_html(probes: int, seed: str, directory: str) -> str:
    """The Probe and Export controls drawn disabled, with the reason: what a saved notebook shows."""
    field = "<label style=\"margin-right:10px\">{} <input value=\"{}\" size=\"{}\" disabled></label>"
    return (
        "<div class=\"leapp-controls leapp-controls-inactive\" style=\"font-family:sans-serif;font-size:13px\">"
        "<fieldset disabled style=\"border:1px solid #e5e7eb;padding:4px 8px;margin:0\">"
        f"<div><b>Probe</b> {field.format('probes', esc(probes), 6)}"
        f"{field.format('seed', esc(seed), 8)}<button disabled>Probe</button></div>"
        f"<div style=\"margin-top:4px\"><b>Export</b> {field.format('directory', esc(directory), 24)}"
        "<button disabled>Export</button></div></fieldset>"
        f"<div style=\"color:#6b7280\">{RERUN}</div></div>"
    )


def _block(content: str) -> str:
    """HTML for a widget cell: ipywidgets' HTML widget sets a tall line height and no wrapping, for
    one-line labels."""
    return f"<div style=\"line-height:1.35;padding:2px 0;white-space:normal\">{content}</div>"


def _error(text: str) -> str:
    return _block(f"<div style=\"color:{PROBE_FAILED};white-space:pre-wrap\"><b>✖</b> {esc(text)}</div>")


__all__ = ["TraceWidget", "CONTROLS_MIME_TYPE", "fallback_html"]
