/**
 * Mime renderer of `application/vnd.leapp.trace+json`: summary line, hazard table and graph.
 *
 * Pure output rendering (no kernel), so a saved notebook shows the same view when reopened.
 * Every string from the model goes through textContent: cell code and hazard messages are user data.
 */
import { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import { Widget } from '@lumino/widgets';

import { IGraphNode, ITraceModel, MIME_TYPE, SVG_MIME_TYPE, readModel } from './model';

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

const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;

function summaryLine(trace: ITraceModel): HTMLElement {
  const { summary } = trace;
  const state = summary.errors ? 'error' : summary.warnings ? 'warning' : 'ok';
  const line = el('div', `leapp-trace-summary leapp-trace-${state}`);
  // The status word repeats what the colour says, for readers who cannot tell the colours apart.
  const status = { error: '✖ not exportable', warning: '⚠ LEAPP caveats', ok: '✔ clean' }[state];
  line.append(
    el('span', 'leapp-trace-status', status),
    el(
      'span',
      'leapp-trace-counts',
      [
        `profile ${trace.profile || '?'}`,
        plural(summary.nodes, 'node'),
        plural(summary.ops, 'op'),
        plural(summary.errors, 'error'),
        plural(summary.warnings, 'warning'),
        `probe ${summary.probe ?? 'not run'}`
      ].join(' · ')
    )
  );
  return line;
}

function hazardTable(trace: ITraceModel): HTMLElement {
  if (!trace.hazards.length) {
    return el('p', 'leapp-trace-clean', 'No hazards: every construct was recorded in the graph.');
  }
  const table = el('table', 'leapp-trace-hazards');
  const head = table.createTHead().insertRow();
  for (const title of ['severity', 'kind', 'line', 'code', 'message', 'fix']) {
    head.append(el('th', '', title));
  }
  const body = table.createTBody();
  for (const hazard of trace.hazards) {
    const row = body.insertRow();
    row.className = `leapp-hazard-row leapp-hazard-row-${hazard.severity}`;
    const code = el('td', 'leapp-hazard-code');
    code.append(el('code', '', hazard.code.trim()));
    const kind = el('td', 'leapp-hazard-kind');
    kind.append(el('code', '', hazard.kind));
    row.append(
      el('td', 'leapp-hazard-severity', `${ICON[hazard.severity]} ${hazard.severity}`),
      kind,
      el('td', 'leapp-hazard-line', hazard.line === null ? '' : String(hazard.line)),
      code,
      el('td', 'leapp-hazard-message', hazard.message),
      el('td', 'leapp-hazard-fix', hazard.fix)
    );
  }
  return table;
}

/** The compact fallback when no SVG came with the bundle (Graphviz `dot` missing on the kernel side). */
function vertexList(trace: ITraceModel, node: IGraphNode): HTMLElement {
  const names = new Map(node.vertices.map(vertex => [vertex.id, vertex.name]));
  const nameOf = (id: string): string => names.get(id) ?? id;
  const section = el('div', 'leapp-trace-node');
  section.append(el('div', 'leapp-trace-node-name', `node '${node.name}'`));
  const items = el('ol', 'leapp-trace-vertices');
  for (const vertex of node.vertices) {
    const look = trace.looks.get(vertex.category);
    const item = el('li', `leapp-vertex leapp-vertex-${vertex.category}`);
    const mark = look && (look.icon || look.tag) ? `${look.icon} ${look.tag}`.trim() : '';
    if (mark) {
      const tag = el('span', 'leapp-vertex-tag', mark);
      // A CSSOM assignment: an invalid colour from the model is dropped, never parsed as markup.
      tag.style.color = look?.border ?? '';
      item.append(tag);
    }
    const call = vertex.role === 'op' ? `${vertex.numpy} → ${vertex.torch}` : vertex.role;
    item.append(el('span', 'leapp-vertex-name', vertex.name), el('span', 'leapp-vertex-call', call));
    const detail = [vertex.shape, vertex.dtype, vertex.line === null ? '' : `line ${vertex.line}`];
    item.append(el('span', 'leapp-vertex-detail', detail.filter(Boolean).join(' ')));
    const inputs = node.inputs.get(vertex.id);
    if (inputs?.data.length) {
      item.append(el('span', 'leapp-vertex-inputs', `← ${inputs.data.map(nameOf).join(', ')}`));
    }
    if (inputs?.notRecorded.length) {
      const from = inputs.notRecorded.map(nameOf).join(', ');
      item.append(el('span', 'leapp-vertex-not-recorded', `⇠ from ${from}, not recorded`));
    }
    items.append(item);
  }
  section.append(items);
  return section;
}

function graphView(trace: ITraceModel, svg: string | null): HTMLElement {
  const details = el('details', 'leapp-trace-graph');
  details.open = true;
  details.append(el('summary', '', 'graph'));
  if (svg) {
    // An <img> never runs scripts or loads resources from the SVG, so this is safe for untrusted output.
    const image = el('img', 'leapp-trace-svg');
    image.alt = `trace graph: ${plural(trace.summary.ops, 'recorded op')}`;
    image.src = `data:image/svg+xml,${encodeURIComponent(svg)}`;
    details.append(image);
  } else {
    details.append(...trace.nodes.map(node => vertexList(trace, node)));
  }
  return details;
}

export class TraceView extends Widget implements IRenderMime.IRenderer {
  constructor(options: IRenderMime.IRendererOptions) {
    super();
    this._mimeType = options.mimeType;
    this.addClass('leapp-trace');
  }

  async renderModel(model: IRenderMime.IMimeModel): Promise<void> {
    const trace = readModel(model.data[this._mimeType]);
    if (!trace) {
      this.node.replaceChildren(el('p', 'leapp-trace-invalid', 'Not a leapp trace graph model.'));
      return;
    }
    const bundled = model.data[SVG_MIME_TYPE];
    const svg = trace.svg ?? (typeof bundled === 'string' ? bundled : null);
    this.node.replaceChildren(summaryLine(trace), hazardTable(trace), graphView(trace, svg));
  }

  private _mimeType: string;
}

const extension: IRenderMime.IExtension = {
  id: 'leapp-notebook:trace-renderer',
  description: 'Renders leapp traces: summary, hazard table and graph.',
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
