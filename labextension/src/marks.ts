/**
 * The CodeMirror 6 side of the hazard marks: a state field of line decorations set by an effect.
 *
 * A field (not a view plugin) because the marks come from outside the editor (the cell's outputs)
 * and must follow edits: decorations are mapped through every change until the next trace replaces them.
 */
import { EditorState, StateEffect, StateField, Text } from '@codemirror/state';
import { Decoration, DecorationSet, EditorView, WidgetType } from '@codemirror/view';

import { IEdit, IHazard, Severity } from './model';

/** Everything traced at one cell line, merged: the worst severity wins the colour. */
export interface ILineMark {
  /** The line as the trace numbers it (the cell's text as the kernel ran it). */
  line: number;
  /** The line in the editor when the marks were set (the trace's line past blank lines before the magic). */
  docLine: number;
  severity: Severity;
  kinds: string[];
  title: string;
  /** The one-click fixes of the hazards at this line (hazards with an `edit`). */
  edits: IEdit[];
}

export function lineMarks(hazards: IHazard[], offset = 0): ILineMark[] {
  const byLine = new Map<number, IHazard[]>();
  for (const hazard of hazards) {
    if (hazard.line !== null) {
      byLine.set(hazard.line, [...(byLine.get(hazard.line) ?? []), hazard]);
    }
  }
  return [...byLine].map(([line, found]) => ({
    line,
    docLine: line + offset,
    severity: found.some(h => h.severity === 'error') ? 'error' : 'warning',
    kinds: [...new Set(found.map(h => h.kind))],
    title: found
      .map(h => `${h.kind} (${h.severity}${h.node ? `, node ${h.node}` : ''}): ${h.message}\nFix: ${h.fix}`)
      .join('\n\n'),
    edits: found.flatMap(h => (h.edit ? [h.edit] : [])).filter(
      (edit, index, all) => all.findIndex(other => JSON.stringify(other) === JSON.stringify(edit)) === index
    )
  }));
}

/**
 * The ✖/⚠ badge at the end of a marked line, so colour is never the only cue. Clicking it selects the
 * line's hazards in the cell's trace output (`leapp:select-line`); its "Apply fix" buttons ask the
 * notebook to apply the hazard's edit (`leapp:apply-fix`).
 */
class HazardBadge extends WidgetType {
  constructor(readonly mark: ILineMark) {
    super();
  }

  eq(other: HazardBadge): boolean {
    const { mark } = other;
    return (
      mark.severity === this.mark.severity &&
      mark.title === this.mark.title &&
      mark.line === this.mark.line &&
      mark.docLine === this.mark.docLine &&
      JSON.stringify(mark.edits) === JSON.stringify(this.mark.edits)
    );
  }

  toDOM(): HTMLElement {
    const badge = document.createElement('span');
    badge.className = `leapp-hazard-badge leapp-hazard-badge-${this.mark.severity}`;
    badge.dataset.leappSeverity = this.mark.severity;
    badge.dataset.leappKind = this.mark.kinds.join(' ');
    const label = document.createElement('span');
    label.className = 'leapp-hazard-badge-label';
    label.textContent = `${this.mark.severity === 'error' ? '✖' : '⚠'} ${this.mark.kinds.join(', ')}`;
    label.title = `${this.mark.title}\n\n(click: select its graph nodes)`;
    label.setAttribute('role', 'button');
    label.setAttribute('aria-label', this.mark.title);
    label.addEventListener('click', () =>
      badge.dispatchEvent(new CustomEvent('leapp:select-line', { bubbles: true, detail: { line: this.mark.line } }))
    );
    badge.append(label);
    for (const edit of this.mark.edits) {
      const button = document.createElement('button');
      button.type = 'button';
      button.className = 'leapp-fix-apply';
      button.textContent = 'Apply fix';
      button.title = `replace with:\n${edit.new}\nthen re-run the cell (Ctrl-Z undoes it)`;
      button.addEventListener('click', () => {
        const report = (message: string): void => {
          let status = badge.querySelector<HTMLElement>('.leapp-fix-status');
          if (!status) {
            status = document.createElement('span');
            status.className = 'leapp-fix-status';
            status.setAttribute('role', 'status');
            badge.append(status);
          }
          status.textContent = message;
        };
        const event = new CustomEvent('leapp:apply-fix', { bubbles: true, cancelable: true, detail: { edit, report } });
        badge.dispatchEvent(event);
      });
      badge.append(button);
    }
    return badge;
  }

  ignoreEvent(): boolean {
    return true;
  }
}

function decorations(doc: Text, marks: readonly ILineMark[]): DecorationSet {
  // A trace of an older version of the cell may name lines that no longer exist.
  const present = marks.filter(mark => mark.docLine <= doc.lines);
  return Decoration.set(
    present.flatMap(mark => {
      const line = doc.line(mark.docLine);
      return [
        Decoration.line({
          class: `leapp-hazard leapp-hazard-line leapp-hazard-${mark.severity}`,
          attributes: {
            title: mark.title,
            'data-leapp-severity': mark.severity,
            'data-leapp-kind': mark.kinds.join(' '),
            'data-leapp-line': String(mark.line)
          }
        }).range(line.from),
        Decoration.widget({ widget: new HazardBadge(mark), side: 1 }).range(line.to)
      ];
    }),
    true
  );
}

export const setHazardMarks = StateEffect.define<readonly ILineMark[]>();

export const hazardMarks = StateField.define<DecorationSet>({
  create: () => Decoration.none,
  update(marks, transaction) {
    let next = marks.map(transaction.changes);
    for (const effect of transaction.effects) {
      if (effect.is(setHazardMarks)) {
        next = decorations(transaction.state.doc, effect.value);
      }
    }
    return next;
  },
  provide: field => EditorView.decorations.from(field)
});

/**
 * Blank lines before the magic line, which IPython drops before the kernel runs the cell: the trace numbers its lines
 * from the magic line, the editor from the first line of the cell.
 */
export function leadingBlankLines(text: string): number {
  const lines = text.split('\n');
  let count = 0;
  while (count < lines.length - 1 && lines[count].trim() === '') {
    count++;
  }
  return count;
}

/**
 * Where each line the trace numbers is now: the start of each of its lines when the marks were set (set by
 * `setTraceLines` with the number of blank lines before them), mapped through every edit since. A node clicked in
 * the graph, or a fix, names a line of the traced text; the editor may have moved it.
 */
export const setTraceLines = StateEffect.define<number>();

export const traceLines = StateField.define<readonly number[]>({
  create: () => [],
  update(starts, transaction) {
    let next = transaction.docChanged ? starts.map(pos => transaction.changes.mapPos(pos, -1)) : starts;
    for (const effect of transaction.effects) {
      if (effect.is(setTraceLines)) {
        const doc = transaction.state.doc;
        const offset = Math.min(effect.value, doc.lines - 1);
        next = Array.from({ length: doc.lines - offset }, (_, index) => doc.line(index + 1 + offset).from);
      }
    }
    return next;
  }
});

/** The editor's line (1-based) of the traced text's `line`, as it stands now. */
export function editorLine(state: EditorState, line: number): number {
  const starts = state.field(traceLines, false);
  const pos = starts?.[line - 1];
  return pos === undefined ? line : state.doc.lineAt(Math.min(pos, state.doc.length)).number;
}

/** Flash one line (1-based; null clears): where a clicked graph node came from. */
export const flashLine = StateEffect.define<number | null>();

export const flashMark = StateField.define<DecorationSet>({
  create: () => Decoration.none,
  update(marks, transaction) {
    let next = marks.map(transaction.changes);
    for (const effect of transaction.effects) {
      if (effect.is(flashLine)) {
        const line = effect.value;
        next =
          line !== null && line >= 1 && line <= transaction.state.doc.lines
            ? Decoration.set([
                Decoration.line({ class: 'leapp-flash' }).range(transaction.state.doc.line(line).from)
              ])
            : Decoration.none;
      }
    }
    return next;
  },
  provide: field => EditorView.decorations.from(field)
});

/** Everything the editors need: the hazard marks and the flash. */
export const leappEditorExtension = [hazardMarks, flashMark, traceLines];
