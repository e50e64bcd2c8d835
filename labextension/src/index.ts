/**
 * Editor-marks plugin: marks the lines of each code cell that its leapp trace output reports hazards at,
 * and links the cell's editor with its trace output.
 *
 * The marks are derived from the cell's saved outputs only, so they appear on reopen without a kernel,
 * follow re-execution, and vanish when the output is cleared. The links are DOM events that bubble
 * up to the notebook from the output (mime.ts, graph.ts) and from the marks (marks.ts):
 * - `leapp:goto-line`: a graph node was clicked: move the cell's cursor to its line and flash it;
 * - `leapp:select-line`: a hazard mark was clicked: select its nodes in the cell's trace outputs;
 * - `leapp:apply-fix`: apply a hazard's edit to the cell (one undoable change) and re-run the cell.
 */
import { JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { Cell, CodeCell } from '@jupyterlab/cells';
import {
  CodeMirrorEditor,
  EditorExtensionRegistry,
  IEditorExtensionRegistry
} from '@jupyterlab/codemirror';
import { INotebookTracker, Notebook, NotebookActions, NotebookPanel } from '@jupyterlab/notebook';
import { IOutputAreaModel } from '@jupyterlab/outputarea';
import { EditorView } from '@codemirror/view';

import { CONTROLS_MIME_TYPE, CONTROLS_RANK, controlsFactory } from './controls';
import {
  editorLine,
  flashLine,
  hazardMarks,
  leadingBlankLines,
  leappEditorExtension,
  lineMarks,
  setHazardMarks,
  setTraceLines
} from './marks';
import { IEdit, IHazard, MIME_TYPE, readHazards } from './model';

const FLASH_MS = 1500;

/** All hazards of all traces among the outputs: every node traced in a cell marks that cell. */
function hazardsIn(outputs: IOutputAreaModel): IHazard[] {
  const found: IHazard[] = [];
  for (let index = 0; index < outputs.length; index++) {
    found.push(...readHazards(outputs.get(index).data[MIME_TYPE]));
  }
  return found;
}

async function editorOf(cell: CodeCell): Promise<CodeMirrorEditor | null> {
  // Windowed notebooks create a cell's editor only when it is first rendered.
  await cell.ready;
  if (cell.isDisposed || !(cell.editor instanceof CodeMirrorEditor)) {
    return null;
  }
  if (cell.editor.state.field(hazardMarks, false) === undefined) {
    // An editor made before this plugin registered the fields (or by another editor factory).
    cell.editor.injectExtension(leappEditorExtension);
  }
  return cell.editor;
}

/** The hazards each cell's marks were last set from: an output updated in place (a probe) with the same hazards
 * leaves the marks, and the lines they follow through edits, as they are. */
const marked = new WeakMap<CodeCell, string>();

async function markCell(cell: CodeCell): Promise<void> {
  const editor = await editorOf(cell);
  const hazards = hazardsIn(cell.model.outputs);
  const key = JSON.stringify(hazards);
  if (editor && marked.get(cell) !== key) {
    marked.set(cell, key);
    // (the outputs arrive for the text the kernel ran: the lines are numbered from the magic line, past any blank
    // lines before it, which IPython dropped)
    const offset = leadingBlankLines(editor.editor.state.doc.toString());
    editor.editor.dispatch({
      effects: [setTraceLines.of(offset), setHazardMarks.of(lineMarks(hazards, offset))]
    });
  }
}

/** Put the cursor at the start of `line` (1-based) of the cell, scroll it into view and flash it. */
async function goToLine(notebook: Notebook, cell: CodeCell, line: number): Promise<void> {
  const editor = await editorOf(cell);
  if (!editor) {
    return;
  }
  const view = editor.editor;
  const target = Math.min(Math.max(1, editorLine(view.state, line)), view.state.doc.lines);
  notebook.activeCellIndex = notebook.widgets.indexOf(cell);
  notebook.mode = 'edit';
  editor.setCursorPosition({ line: target - 1, column: 0 });
  editor.focus();
  view.dispatch({
    effects: [flashLine.of(target), EditorView.scrollIntoView(view.state.doc.line(target).from, { y: 'center' })]
  });
  window.setTimeout(() => {
    if (!cell.isDisposed) {
      view.dispatch({ effects: flashLine.of(null) });
    }
  }, FLASH_MS);
}

/**
 * Replace lines `edit.line`..`edit.endLine` of the cell by `edit.new` if they still read `edit.old`,
 * as one undoable change, then run the cell. Returns a message for the user when it does nothing.
 */
async function applyFix(panel: NotebookPanel, cell: CodeCell, edit: IEdit): Promise<string> {
  const editor = await editorOf(cell);
  if (!editor) {
    return 'The cell editor is not ready.';
  }
  const view = editor.editor;
  const doc = view.state.doc;
  const stale = 'The cell changed since it was traced: re-run it, then apply the fix.';
  // the traced text's lines, where the editor has them now (blank lines before the magic, edits since)
  const first = editorLine(view.state, edit.line);
  const last = first + (edit.endLine - edit.line);
  if (last > doc.lines) {
    return stale;
  }
  const from = doc.line(first).from;
  const to = doc.line(last).to;
  if (doc.sliceString(from, to) !== edit.old) {
    return stale;
  }
  // Close the undo group before and after, so Ctrl-Z undoes exactly the fix.
  // YBaseCell has an undo manager; the ISharedCodeCell interface does not declare it.
  const shared = cell.model.sharedModel as { undoManager?: { stopCapturing(): void } | null };
  const undo = shared.undoManager;
  undo?.stopCapturing();
  view.dispatch({ changes: { from, to, insert: edit.new }, userEvent: 'input.leapp-fix' });
  undo?.stopCapturing();
  const notebook = panel.content;
  notebook.activeCellIndex = notebook.widgets.indexOf(cell);
  notebook.deselectAll();
  await NotebookActions.run(notebook, panel.sessionContext);
  return '';
}

/** The source a trace model says it traced (`# %%leapp_trace ...` then the cell's body), as the cell would read. */
function tracedText(data: unknown): string | null {
  const source = (data as { source?: unknown } | null)?.source;
  return typeof source === 'string' ? source.replace(/^# %%/, '%%') : null;
}

/** Whether text and traced text differ past blank lines around them and trailing spaces of the magic line. */
function differs(text: string, traced: string): boolean {
  const norm = (value: string): string =>
    value
      .split('\n')
      .map(line => line.trimEnd())
      .join('\n')
      .trim();
  return norm(text) !== norm(traced);
}

/**
 * Mark each trace output of the cell whose traced text is not the cell's text any more (an edit, an undone fix):
 * `data-leapp-stale` on `.leapp-trace`, which the stylesheet turns into a line saying to re-run the cell. The verdict
 * and the marks below it are the old text's.
 */
function markStale(cell: CodeCell): void {
  const text = cell.model.sharedModel.getSource();
  const outputs = cell.model.outputs;
  // (a trace displayed by code, `ln.trace_cell(source, ns)`, traced another text than its cell's)
  let stale = false;
  if (!text.trimStart().startsWith('%%leapp_trace')) {
    return;
  }
  for (let index = 0; index < outputs.length; index++) {
    const traced = tracedText(outputs.get(index).data[MIME_TYPE]);
    stale = stale || (traced !== null && differs(text, traced));
  }
  for (const output of cell.outputArea.node.querySelectorAll<HTMLElement>('.leapp-trace')) {
    if (stale) {
      output.dataset.leappStale = '';
    } else {
      delete output.dataset.leappStale;
    }
  }
}

function watchNotebook(panel: NotebookPanel): void {
  const notebook: Notebook = panel.content;
  const watched = new WeakSet<CodeCell>();
  const watchNewCells = (): void => {
    for (const cell of notebook.widgets) {
      if (cell instanceof CodeCell && !watched.has(cell)) {
        watched.add(cell);
        const update = (): void => {
          void markCell(cell);
          // (after the output area has rendered the new output)
          window.requestAnimationFrame(() => markStale(cell));
        };
        // `changed` covers add/remove/clear; `stateChanged` covers update_display_data in place.
        cell.model.outputs.changed.connect(update);
        cell.model.outputs.stateChanged.connect(update);
        cell.model.contentChanged.connect(() => markStale(cell));
        update();
      }
    }
  };
  const cellOf = (event: Event): CodeCell | null => {
    const found = notebook.widgets.find((cell: Cell) => cell.node.contains(event.target as Node));
    return found instanceof CodeCell ? found : null;
  };
  notebook.node.addEventListener('leapp:goto-line', event => {
    const cell = cellOf(event);
    const line = (event as CustomEvent).detail?.line;
    if (cell && typeof line === 'number') {
      void goToLine(notebook, cell, line);
    }
  });
  notebook.node.addEventListener('leapp:select-line', event => {
    const cell = cellOf(event);
    const line = (event as CustomEvent).detail?.line;
    if (cell && typeof line === 'number') {
      for (const output of cell.outputArea.node.querySelectorAll('.leapp-trace')) {
        output.dispatchEvent(new CustomEvent('leapp:select-hazards', { detail: { line } }));
      }
      cell.outputArea.node.querySelector('.leapp-trace')?.scrollIntoView({ block: 'nearest' });
    }
  });
  notebook.node.addEventListener('leapp:apply-fix', event => {
    const cell = cellOf(event);
    const detail = (event as CustomEvent).detail ?? {};
    if (!cell || !detail.edit) {
      return;
    }
    event.preventDefault();
    const report = typeof detail.report === 'function' ? detail.report : () => undefined;
    void applyFix(panel, cell, detail.edit as IEdit).then(message => report(message));
  });
  void panel.context.ready.then(() => {
    watchNewCells();
    notebook.model?.cells.changed.connect(watchNewCells);
  });
}

const plugin: JupyterFrontEndPlugin<void> = {
  id: 'leapp-notebook:hazard-marks',
  description: 'Marks the cell lines a leapp trace reports hazards at and links them with the trace output.',
  autoStart: true,
  requires: [INotebookTracker, IEditorExtensionRegistry],
  activate: (_app: JupyterFrontEnd, tracker: INotebookTracker, editors: IEditorExtensionRegistry) => {
    // Every editor gets the (initially empty) fields, so a mark can be dispatched to any cell.
    editors.addExtension({
      name: 'leapp-notebook:hazard-marks',
      factory: () => EditorExtensionRegistry.createImmutableExtension(leappEditorExtension)
    });
    const addControls = (panel: NotebookPanel) => {
      const rendermime = panel.content.rendermime;
      if (rendermime.getFactory(CONTROLS_MIME_TYPE) === undefined) {
        rendermime.addFactory(controlsFactory(rendermime), CONTROLS_RANK);
      }
    };
    tracker.forEach(panel => {
      addControls(panel);
      watchNotebook(panel);
    });
    tracker.widgetAdded.connect((_tracker, panel) => {
      addControls(panel);
      watchNotebook(panel);
    });
  }
};

export default plugin;
