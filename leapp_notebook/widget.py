"""``TraceWidget``: the graph widget (ipywidgets) — summary, graph view, hazard table, Probe and Export.

The widget holds a ``Trace`` and draws it through ``leapp_notebook.render`` (one graph model, the SVG
from ``dot`` or the escaped HTML fallback). Selecting a hazard row re-renders the graph with that
hazard's graph nodes emphasised. The buttons call ``Trace.probe`` and ``Trace.export``; their
handlers run synchronously, so tests drive the widget headless with ``button.click()`` and read the
widgets' values.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import ipywidgets as widgets
import traitlets

from .render import graph_model, hazard_vertices, svg_fragment, to_html, to_svg
from .render.html import SEVERITY_COLOUR, probe_table_html
from .render.labels import esc
from .render.look import PROBE_FAILED, PROBE_PASSED, SEVERITY_ICON
from .render.text import summary_line, verdict

_HAZARD_COLUMNS = "7.5em 10em 3em minmax(10em, 1.2fr) minmax(12em, 2fr) minmax(12em, 2fr)"


class TraceWidget(widgets.VBox):
    """A trace's graph with its hazards, and Probe and Export controls that call the ``Trace``.

    ``selected_hazard`` is the index (into ``trace.hazards``) of the hazard whose graph nodes are
    emphasised, or -1.
    """

    selected_hazard = traitlets.Int(-1)

    def __init__(self, trace: Any, *, directory: str = "leapp_export", controls_only: bool = False,
                 **kwargs: Any):
        self.trace = trace
        self.model: dict[str, Any] = {}
        self._redrawing = False
        self.summary = widgets.HTML()
        self.graph = widgets.HTML(layout=widgets.Layout(overflow="auto", max_height="840px",
                                                        border="1px solid #e5e7eb", padding="4px"))
        self.hazard_buttons: list[widgets.Button] = []
        self.hazard_table = widgets.GridBox(layout=widgets.Layout(grid_template_columns=_HAZARD_COLUMNS,
                                                                  grid_gap="2px 8px", width="100%"))
        self.probe_count = widgets.BoundedIntText(value=16, min=1, max=100_000, description="probes",
                                                  layout=widgets.Layout(width="11em"))
        self.probe_seed = widgets.Text(value="", placeholder="random", description="seed",
                                       layout=widgets.Layout(width="14em"))
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
        self.export_result = widgets.HTML()
        self.probe_button.on_click(self._on_probe)
        self.export_button.on_click(self._on_export)
        view = [
            self.summary,
            self.graph,
            widgets.HTML("<b>Hazards</b> <small>(select a row to mark its graph nodes)</small>"),
            self.hazard_table,
        ]
        # controls_only: the magic shows the graph and hazards in the trace's own output already.
        super().__init__(children=([] if controls_only else view) + [
            widgets.HTML("<b>Probe</b> <small>graph vs. eager cell on fresh random inputs</small>"),
            widgets.HBox([self.probe_count, self.probe_seed, self.probe_button, self.probe_progress]),
            self.probe_result,
            widgets.HTML("<b>Export</b>"),
            widgets.HBox([self.export_directory, self.export_jit, self.export_onnx, self.export_force,
                          self.export_button]),
            self.export_result,
        ], **kwargs)
        self.refresh()

    # -------------------------------------------------------------- drawing
    def refresh(self) -> None:
        """Rebuild the model from the trace and redraw summary, graph and hazard table."""
        before = self._hazard_key(self.selected_hazard)
        self.model = graph_model(self.trace)
        keys = [self._hazard_key(index) for index in range(len(self.model["hazards"]))]
        # The probe may add hazards: keep the same hazard selected, wherever it now is.
        self._redrawing = True
        try:
            self.selected_hazard = keys.index(before) if before is not None and before in keys else -1
        finally:
            self._redrawing = False
        good, words = verdict(self.model)
        colour = PROBE_PASSED if good else PROBE_FAILED
        self.summary.value = (f"<div style=\"font-size:13px\"><b>Trace</b> "
                              f"(profile {esc(self.model['profile'])}) · {esc(summary_line(self.model))} · "
                              f"<b style=\"color:{colour}\">{esc(words)}</b></div>")
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
        header = [widgets.HTML(f"<b>{title}</b>") for title in ("", "kind", "line", "code", "message", "fix")]
        cells: list[widgets.Widget] = list(header)
        self.hazard_buttons = []
        for index, hazard in enumerate(self.model["hazards"]):
            selected = index == self.selected_hazard
            button = widgets.Button(description="marked" if selected else "show", icon="crosshairs",
                                    button_style="info" if selected else "",
                                    tooltip="mark this hazard's graph nodes",
                                    layout=widgets.Layout(width="7.5em"))
            button.on_click(lambda _button, index=index: self.select_hazard(index))
            self.hazard_buttons.append(button)
            colour = SEVERITY_COLOUR.get(hazard["severity"], "#111827")
            icon = SEVERITY_ICON.get(hazard["severity"], "")
            line = "" if hazard["line"] is None else str(hazard["line"])
            where = f"<br><small>in {esc(hazard['location'])}</small>" if hazard.get("location") else ""
            cells.extend([
                button,
                widgets.HTML(_block(f"<span style=\"color:{colour}\"><b>{icon} {esc(hazard['kind'])}</b><br>"
                                    f"{esc(hazard['severity'])}</span>")),
                widgets.HTML(_block(esc(line))),
                widgets.HTML(_block(f"<code style=\"white-space:pre-wrap\">{esc(hazard['code'].strip())}"
                                    f"</code>{where}")),
                widgets.HTML(_block(esc(hazard["message"]))),
                widgets.HTML(_block(esc(hazard["fix"]))),
            ])
        if not self.model["hazards"]:
            cells = [widgets.HTML("<span style=\"color:#15803d\">✔ no hazards</span>")]
        self.hazard_table.children = cells

    def select_hazard(self, index: int) -> None:
        """Emphasise hazard ``index``'s graph nodes (selecting the selected row again clears it)."""
        self.selected_hazard = -1 if index == self.selected_hazard else index

    @traitlets.observe("selected_hazard")
    def _on_selected(self, _change: Any) -> None:
        if self._redrawing:
            return
        for index, button in enumerate(self.hazard_buttons):
            selected = index == self.selected_hazard
            button.description = "marked" if selected else "show"
            button.button_style = "info" if selected else ""
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
        self.probe_result.value = _block(self._probe_html())

    def _on_progress(self, done: int, total: int) -> None:
        self.probe_progress.max = max(total, 1)
        self.probe_progress.value = done
        self.probe_progress.description = f"{done}/{total}"

    def _probe_html(self) -> str:
        probe = self.model["probe"]
        if probe is None:
            return ""
        colour = PROBE_PASSED if probe["passed"] else PROBE_FAILED
        said = "✔ probe passed" if probe["passed"] else "✖ probe FAILED"
        head = (f"<b style=\"color:{colour}\">{said}</b> on {esc(probe['n'])} fresh inputs "
                f"(seed {esc(probe['seed'])})")
        checks = list(probe["outputs"].items())
        notes = []
        for name, check in checks:
            if check.get("first_mismatch"):
                notes.append(f"<li>{esc(name)}: first mismatch, {esc(check['first_mismatch'])}</li>")
            if check.get("baked_constants"):
                notes.append(f"<li>{esc(name)} follows an input in NumPy but not in the graph; baked: "
                             f"{esc(', '.join(check['baked_constants']))}</li>")
        return head + probe_table_html(checks) + (f"<ul>{''.join(notes)}</ul>" if notes else "")

    # -------------------------------------------------------------- export
    def _on_export(self, _button: Any = None) -> None:
        from .tracing.types import ExportBlocked

        formats = [name for name, box in (("jit", self.export_jit), ("onnx", self.export_onnx)) if box.value]
        directory = self.export_directory.value.strip()
        if not formats:
            self.export_result.value = _error("choose at least one format (jit, onnx)")
            return
        if not directory:
            self.export_result.value = _error("give a directory to export to")
            return
        self.export_button.disabled = True
        try:
            paths = self.trace.export(directory, formats=formats, force=self.export_force.value)
        except ExportBlocked as exc:
            reason = str(exc)  # export's own messages say "export refused" / "export failed": say it once
            self.export_result.value = _error(reason if reason.startswith(("export refused", "export failed"))
                                              else f"export refused: {reason}")
            return
        except Exception as exc:  # noqa: BLE001 - a missing onnx extra, a bad directory: said, not raised
            self.export_result.value = _error(f"export failed: {type(exc).__name__}: {exc}")
            return
        finally:
            self.export_button.disabled = False
        items = "".join(f"<li><code>{esc(Path(path))}</code></li>" for path in paths)
        self.export_result.value = _block(f"<b style=\"color:{PROBE_PASSED}\">✔ exported {len(paths)} "
                                          f"file{'s' * (len(paths) != 1)}</b><ul>{items}</ul>")


def _block(content: str) -> str:
    """HTML for a widget cell: ipywidgets' HTML widget sets a tall line height for one-line labels."""
    return f"<div style=\"line-height:1.35;padding:2px 0\">{content}</div>"


def _error(text: str) -> str:
    return _block(f"<div style=\"color:{PROBE_FAILED};white-space:pre-wrap\"><b>✖</b> {esc(text)}</div>")


__all__ = ["TraceWidget"]
