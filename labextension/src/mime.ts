/**
 * Mime renderer of `application/vnd.leapp.trace+json`: summary line, hazard table and live graph.
 *
 * Pure output rendering (no kernel), so a saved notebook shows the same view when reopened.
 * Every string from the model goes through textContent: cell code and hazard messages are user data.
 *
 * The renderer talks to the notebook (index.ts) through bubbling DOM events, so it works, minus the
 * editor links, wherever JupyterLab renders the mime type:
 * - `leapp:goto-line` {line}: a graph node was clicked; the cell's editor moves its cursor there;
 * - `leapp:apply-fix` {edit, report}: a hazard's "Apply fix" was pressed;
 * - `leapp:select-hazards` {line | hazards} (received): an editor mark was clicked; select its nodes.
 */
import { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import { Widget } from '@lumino/widgets';

import { LiveGraph } from './graph';
import { IEdit, IHazard, ITraceModel, MIME_TYPE, SVG_MIME_TYPE, plural, readModel } from './model';

const ICON = { error: '✖', warning: '⚠' } as const;

function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  className = '',
  content = ''
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  node.className = className;
  node.textContent = content;
  return node;
}


const VERDICT_ICON = { error: '✖', warning: '⚠', ok: '✔' } as const;

/**
 * The verdict: the model's own words (`model.verdict`, one source for every renderer) after the state's
 * icon; models saved before the field existed get the words this renderer used to derive.
 */
export function verdictOf(trace: ITraceModel): { state: 'error' | 'warning' | 'ok'; text: string } {
  if (trace.verdict) {
    const { state, text } = trace.verdict;
    const icon = VERDICT_ICON[state];
    return { state, text: text.startsWith(icon) ? text : `${icon} ${text}` };
  }
  const { summary } = trace;
  const state = summary.errors ? 'error' : summary.warnings ? 'warning' : 'ok';
  return { state, text: { error: '✖ not exportable', warning: '⚠ LEAPP caveats', ok: '✔ clean' }[state] };
}

function summaryLine(trace: ITraceModel): HTMLElement {
  const { summary } = trace;
  const verdict = verdictOf(trace);
  const line = el('div', `leapp-trace-summary leapp-trace-${verdict.state}`);
  const counts = summary.text
    ? [`profile ${trace.profile || '?'}`, summary.text]
    : [
        `profile ${trace.profile || '?'}`,
        plural(summary.nodes, 'node'),
        plural(summary.ops, 'op'),
        plural(summary.errors, 'error'),
        plural(summary.warnings, 'warning'),
        `probe ${summary.probe ?? 'not run'}`
      ];
  // The status word repeats what the colour says, for readers who cannot tell the colours apart.
  line.append(el('span', 'leapp-trace-status', verdict.text), el('span', 'leapp-trace-counts', counts.join(' · ')));
  return line;
}

/**
 * The last probe's and export's results the kernel wrote into the model: what a reopened notebook still shows once
 * the kernel's live controls (and their printed results) are gone.
 */
function results(trace: ITraceModel): HTMLElement[] {
  const found: HTMLElement[] = [];
  const probe = trace.probeReport;
  if (probe) {
    const block = el('div', `leapp-trace-probe leapp-trace-probe-${probe.passed ? 'passed' : 'failed'}`);
    block.append(
      el('div', 'leapp-trace-result-head', `${probe.passed ? '✔' : '✖'} probe of ${plural(probe.n, 'fresh input')} ` +
        `(seed ${probe.seed}): ${probe.passed ? 'passed' : 'FAILED'}`)
    );
    const rows = el('ul', 'leapp-trace-result-list');
    for (const check of probe.outputs) {
      const detail = check.passed
        ? `ok, max abs err ${check.maxAbsErr}${check.varyingShape ? `; ${check.varyingShape}` : ''}`
        : check.firstMismatch || 'FAILED';
      rows.append(el('li', '', `${check.key}: ${detail}`));
    }
    block.append(rows);
    found.push(block);
  }
  const exported = trace.exported;
  if (exported) {
    const written = exported.state === 'written';
    const block = el('div', `leapp-trace-export leapp-trace-export-${written ? 'written' : 'refused'}`);
    block.dataset.leappExport = exported.state;
    block.append(el('div', 'leapp-trace-result-head', `${written ? '✔' : '✖'} ${exported.message}`));
    if (written && exported.files.length) {
      const files = el('ul', 'leapp-trace-result-list');
      for (const name of exported.files) {
        files.append(el('li', '', name));
      }
      block.append(files);
    }
    found.push(block);
  }
  return found;
}

/** Ask the notebook to apply a hazard's edit to this output's cell and re-run it. */
export function requestFix(origin: HTMLElement, edit: IEdit, report: (message: string) => void): void {
  const event = new CustomEvent('leapp:apply-fix', { bubbles: true, cancelable: true, detail: { edit, report } });
  if (origin.dispatchEvent(event)) {
    // Nobody handled it: the output is not in a notebook cell (e.g. a rendered output view).
    report('Apply fix works in a notebook cell only.');
  }
}

export class TraceView extends Widget implements IRenderMime.IRenderer {
  constructor(options: IRenderMime.IRendererOptions) {
    super();
    this._mimeType = options.mimeType;
    this.addClass('leapp-trace');
    this.node.addEventListener('leapp:select-hazards', event => {
      const detail = (event as CustomEvent).detail ?? {};
      this.selectHazards(typeof detail.line === 'number' ? detail.line : null, detail.hazards ?? null);
    });
  }

  async renderModel(model: IRenderMime.IMimeModel): Promise<void> {
    const started = performance.now();
    const trace = readModel(model.data[this._mimeType]);
    this._trace = trace;
    if (!trace) {
      this.node.replaceChildren(el('p', 'leapp-trace-invalid', 'Not a leapp trace graph model.'));
      return;
    }
    const bundled = model.data[SVG_MIME_TYPE];
    const svg = trace.svg ?? (typeof bundled === 'string' ? bundled : null);
    this._graph?.dispose();
    this._graph = new LiveGraph(trace, { fallbackSvg: svg, started });
    const details = el('details', 'leapp-trace-graph-section');
    details.open = true;
    details.append(el('summary', '', 'graph'), this._graph.node);
    this.node.replaceChildren(summaryLine(trace), this.hazardTable(trace), details, ...results(trace));
    await this._graph.draw();
  }

  /** Select the hazards at `line` (or with the given ids): highlight their rows and graph nodes. */
  selectHazards(line: number | null, ids: number[] | null): void {
    if (!this._trace) {
      return;
    }
    const chosen = this._trace.hazards.filter(h => (ids ? ids.includes(h.id) : h.line === line)).map(h => h.id);
    for (const row of this.node.querySelectorAll<HTMLElement>('.leapp-hazard-row')) {
      row.toggleAttribute('data-leapp-selected', chosen.includes(Number(row.dataset.leappHazard)));
    }
    this._graph?.selectHazards(chosen);
  }

  private hazardTable(trace: ITraceModel): HTMLElement {
    if (!trace.hazards.length) {
      return el('p', 'leapp-trace-clean', 'No hazards: every construct was recorded in the graph.');
    }
    const table = el('table', 'leapp-trace-hazards');
    const columns = el('colgroup');
    for (const name of ['severity', 'kind', 'line', 'code', 'message', 'fix']) {
      columns.append(el('col', `leapp-col-${name}`));
    }
    table.append(columns);
    const head = table.createTHead().insertRow();
    for (const title of ['severity', 'kind', 'line', 'code', 'message', 'fix']) {
      head.append(el('th', '', title));
    }
    const body = table.createTBody();
    for (const hazard of trace.hazards) {
      body.append(this.hazardRow(hazard));
    }
    return table;
  }

  private hazardRow(hazard: IHazard): HTMLTableRowElement {
    const row = el('tr', `leapp-hazard-row leapp-hazard-row-${hazard.severity}`);
    row.dataset.leappHazard = String(hazard.id);
    row.dataset.leappSeverity = hazard.severity;
    row.dataset.leappKind = hazard.kind;
    row.title = 'select the graph nodes of this hazard';
    const code = el('td', 'leapp-hazard-code');
    code.append(el('code', '', hazard.code.trim()));
    if (hazard.location) {
      code.append(el('div', 'leapp-hazard-location', `in ${hazard.location}`));
    }
    const kind = el('td', 'leapp-hazard-kind');
    kind.append(el('code', '', hazard.kind));
    const fix = el('td', 'leapp-hazard-fix');
    fix.append(el('span', 'leapp-hazard-fix-text', hazard.fix));
    if (hazard.edit) {
      fix.append(this.fixButton(hazard.edit));
    }
    row.append(
      el('td', 'leapp-hazard-severity', `${ICON[hazard.severity]} ${hazard.severity}`),
      kind,
      el('td', 'leapp-hazard-lineno', hazard.line === null ? '' : String(hazard.line)),
      code,
      el('td', 'leapp-hazard-message', hazard.message),
      fix
    );
    row.addEventListener('click', event => {
      if (!(event.target as HTMLElement).closest('button')) {
        this.selectHazards(null, [hazard.id]);
      }
    });
    return row;
  }

  private fixButton(edit: IEdit): HTMLElement {
    const box = el('span', 'leapp-fix');
    const button = el('button', 'leapp-fix-apply', 'Apply fix');
    button.type = 'button';
    const lines = edit.line === edit.endLine ? `line ${edit.line}` : `lines ${edit.line}–${edit.endLine}`;
    button.title = `replace ${lines} with:\n${edit.new}\nthen re-run the cell (Ctrl-Z undoes it)`;
    const status = el('span', 'leapp-fix-status');
    status.setAttribute('role', 'status');
    button.addEventListener('click', () => {
      status.textContent = '';
      requestFix(button, edit, message => (status.textContent = message));
    });
    box.append(button, status);
    return box;
  }

  dispose(): void {
    this._graph?.dispose();
    this._graph = null;
    super.dispose();
  }

  private _mimeType: string;
  private _trace: ITraceModel | null = null;
  private _graph: LiveGraph | null = null;
}

const extension: IRenderMime.IExtension = {
  id: 'leapp-notebook:trace-renderer',
  description: 'Renders leapp traces: summary, hazard table and live graph.',
  // safe: the view never injects markup, so untrusted (reopened) notebooks render it too.
  rendererFactory: {
    safe: true,
    mimeTypes: [MIME_TYPE],
    defaultRank: 0,
    createRenderer: options => new TraceView(options)
  },
  // Rank 0 wins over the bundle's text/html and image/svg+xml fallbacks.
  rank: 0,
  dataType: 'json'
};

export default extension;
