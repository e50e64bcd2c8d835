/**
 * The CodeMirror 6 side of the hazard marks: a state field of line decorations set by an effect.
 *
 * A field (not a view plugin) because the marks come from outside the editor (the cell's outputs)
 * and must follow edits: decorations are mapped through every change until the next trace replaces them.
 */
import { StateEffect, StateField, Text } from '@codemirror/state';
import { Decoration, DecorationSet, EditorView, WidgetType } from '@codemirror/view';

import { IHazard, Severity } from './model';

/** Everything traced at one cell line, merged: the worst severity wins the colour. */
export interface ILineMark {
  line: number;
  severity: Severity;
  kinds: string[];
  title: string;
}

export function lineMarks(hazards: IHazard[]): ILineMark[] {
  const byLine = new Map<number, IHazard[]>();
  for (const hazard of hazards) {
    if (hazard.line !== null) {
      byLine.set(hazard.line, [...(byLine.get(hazard.line) ?? []), hazard]);
    }
  }
  return [...byLine].map(([line, found]) => ({
    line,
    severity: found.some(h => h.severity === 'error') ? 'error' : 'warning',
    kinds: [...new Set(found.map(h => h.kind))],
    title: found
      .map(h => `${h.kind} (${h.severity}${h.node ? `, node ${h.node}` : ''}): ${h.message}\nFix: ${h.fix}`)
      .join('\n\n')
  }));
}

/** The ✖/⚠ badge at the end of a marked line, so colour is never the only cue. */
class HazardBadge extends WidgetType {
  constructor(readonly mark: ILineMark) {
    super();
  }

  eq(other: HazardBadge): boolean {
    const { mark } = other;
    return mark.severity === this.mark.severity && mark.title === this.mark.title;
  }

  toDOM(): HTMLElement {
    const badge = document.createElement('span');
    badge.className = `leapp-hazard-badge leapp-hazard-badge-${this.mark.severity}`;
    badge.textContent = `${this.mark.severity === 'error' ? '✖' : '⚠'} ${this.mark.kinds.join(', ')}`;
    badge.title = this.mark.title;
    badge.setAttribute('aria-label', this.mark.title);
    return badge;
  }
}

function decorations(doc: Text, marks: readonly ILineMark[]): DecorationSet {
  // A trace of an older version of the cell may name lines that no longer exist.
  const present = marks.filter(mark => mark.line <= doc.lines);
  return Decoration.set(
    present.flatMap(mark => {
      const line = doc.line(mark.line);
      return [
        Decoration.line({
          class: `leapp-hazard leapp-hazard-${mark.severity}`,
          attributes: { title: mark.title }
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
