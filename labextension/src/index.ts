/**
 * Editor-marks plugin: marks the lines of each code cell that its leapp trace output reports hazards at.
 *
 * The marks are derived from the cell's saved outputs only, so they appear on reopen without a kernel,
 * follow re-execution, and vanish when the output is cleared.
 */
import { JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { CodeCell } from '@jupyterlab/cells';
import {
  CodeMirrorEditor,
  EditorExtensionRegistry,
  IEditorExtensionRegistry
} from '@jupyterlab/codemirror';
import { INotebookTracker, Notebook, NotebookPanel } from '@jupyterlab/notebook';
import { IOutputAreaModel } from '@jupyterlab/outputarea';

import { hazardMarks, lineMarks, setHazardMarks } from './marks';
import { IHazard, MIME_TYPE, readHazards } from './model';

/** All hazards of all traces among the outputs: every node traced in a cell marks that cell. */
function hazardsIn(outputs: IOutputAreaModel): IHazard[] {
  const found: IHazard[] = [];
  for (let index = 0; index < outputs.length; index++) {
    found.push(...readHazards(outputs.get(index).data[MIME_TYPE]));
  }
  return found;
}

async function markCell(cell: CodeCell): Promise<void> {
  // Windowed notebooks create a cell's editor only when it is first rendered.
  await cell.ready;
  if (cell.isDisposed || !(cell.editor instanceof CodeMirrorEditor)) {
    return;
  }
  if (cell.editor.state.field(hazardMarks, false) === undefined) {
    // An editor made before this plugin registered the field (or by another editor factory).
    cell.editor.injectExtension(hazardMarks);
  }
  const marks = lineMarks(hazardsIn(cell.model.outputs));
  cell.editor.editor.dispatch({ effects: setHazardMarks.of(marks) });
}

function watchNotebook(panel: NotebookPanel): void {
  const notebook: Notebook = panel.content;
  const watched = new WeakSet<CodeCell>();
  const watchNewCells = (): void => {
    for (const cell of notebook.widgets) {
      if (cell instanceof CodeCell && !watched.has(cell)) {
        watched.add(cell);
        const update = (): void => void markCell(cell);
        // `changed` covers add/remove/clear; `stateChanged` covers update_display_data in place.
        cell.model.outputs.changed.connect(update);
        cell.model.outputs.stateChanged.connect(update);
        update();
      }
    }
  };
  void panel.context.ready.then(() => {
    watchNewCells();
    notebook.model?.cells.changed.connect(watchNewCells);
  });
}

const plugin: JupyterFrontEndPlugin<void> = {
  id: 'leapp-notebook:hazard-marks',
  description: 'Marks the cell lines a leapp trace reports hazards at.',
  autoStart: true,
  requires: [INotebookTracker, IEditorExtensionRegistry],
  activate: (_app: JupyterFrontEnd, tracker: INotebookTracker, editors: IEditorExtensionRegistry) => {
    // Every editor gets the (initially empty) field, so a mark can be dispatched to any cell.
    editors.addExtension({
      name: 'leapp-notebook:hazard-marks',
      factory: () => EditorExtensionRegistry.createImmutableExtension(hazardMarks)
    });
    tracker.forEach(watchNotebook);
    tracker.widgetAdded.connect((_tracker, panel) => watchNotebook(panel));
  }
};

export default plugin;
