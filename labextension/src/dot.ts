/**
 * Graph model -> Graphviz DOT for the live graph, mirroring leapp_notebook/render/dot.py's look.
 *
 * One cluster per traced node; inside it one cluster per source line or helper group. Each group is
 * open (every vertex drawn), folded (its unmarked vertices drawn as one summary box) or "auto":
 * folded, and merged with neighbouring auto groups that show nothing into one box. Large graphs
 * start with every group on auto, so a 1,000-op cell draws as a few boxes around its hazards.
 *
 * User strings reach DOT only inside HTML-like labels, escaped by `esc`, or quoted attributes
 * (`quote`); DOT identifiers are synthetic (`v12`, `cluster_c3`), never user names.
 */
import { IGraphNode, IGroup, IHazard, ILook, ITraceModel, IVertex, moduleLabel, plural } from './model';

/** Graphs with more ops than this open folded. */
export const FOLD_ABOVE = 150;
export const SELECTED = '#2563eb';
const PROBE_FAILED = '#dc2626';
const PROBE_PASSED = '#15803d';
// Graphviz in WebAssembly has no fonts: it measures text with built-in metrics, which it has for the
// exact names Helvetica (Arial's metrics) and Courier only (a list falls back to Times, too narrow).
// Browsers draw them with a metric-compatible face (Liberation Sans/Mono, Arial, Courier New).
const FONT = 'Helvetica';
const MONO = 'Courier';
/** Text colours the stylesheet maps to the JupyterLab theme's font colours. */
export const INK = '#111827';
export const SOFT_INK = '#4b5563';

const DEFAULT_LOOK: ILook = { category: 'op', fill: '#ffffff', border: '#6b7280', icon: '', tag: '', label: '' };
const COLLAPSED_LOOK: ILook = {
  category: 'collapsed',
  fill: '#f3f4f6',
  border: '#9ca3af',
  icon: '▸',
  tag: 'ops',
  label: 'collapsed group of unmarked ops'
};
const SEVERITY_ICON: Record<string, string> = { error: '✖', warning: '⚠' };
/** The hazard looks a vertex category stands for, as `data-leapp-status` words. */
const STATUS_OF_CATEGORY: Record<string, string> = {
  baked: 'baked',
  broken: 'broken-chain',
  reversed: 'reversed-slice',
  mismatch: 'mismatch',
  portability: 'warning'
};

export type FoldMode = 'auto' | 'folded' | 'open';

/** One box or cluster of the drawing: a group (or a run of merged groups) with what it shows. */
export interface IFoldItem {
  id: string;
  label: string;
  shown: IVertex[];
  hidden: IVertex[];
  groups: IGroup[];
  framed: boolean;
}

/** The DOT source and what each synthetic id in it stands for (read back from the SVG's titles). */
export interface IDrawing {
  dot: string;
  vertices: Map<string, IVertex>;
  /** Summary boxes: clicking one unfolds its groups. */
  folds: Map<string, IFoldItem>;
  /** Open clusters of two or more vertices: clicking the frame folds the group. */
  clusters: Map<string, IFoldItem>;
  /** Vertex id -> the DOT id that draws it (itself, or the summary box hiding it). */
  drawnAs: Map<string, string>;
}

// Control characters are invalid in XML (Graphviz's HTML labels, SVG): shown as U+FFFD instead.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f]/g;

export function esc(value: string): string {
  return value
    .replace(CONTROL, '\ufffd')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#x27;');
}

export function quote(value: string): string {
  const body = value
    .replace(CONTROL, '\ufffd')
    .replace(/\\/g, '\\\\')
    .replace(/"/g, '\\"')
    .replace(/\n/g, '\\n');
  return `"${body}"`;
}

export function clip(value: string, width = 48): string {
  const flat = value.split(/\s+/).filter(Boolean).join(' ');
  return flat.length <= width ? flat : `${flat.slice(0, width - 1)}…`;
}

function number(value: number | string): string {
  if (typeof value === 'string') {
    return value;
  }
  return Number.isInteger(value) ? String(value) : String(Number(value.toPrecision(4)));
}

export function previewText(values: Array<number | string>): string {
  return `[${values.slice(0, 4).map(number).join(', ')}${values.length > 4 ? ', …' : ''}]`;
}

export function probeText(vertex: IVertex): string {
  const probe = vertex.probe;
  if (!probe) {
    return '';
  }
  if (probe.passed) {
    return '✔ probe passed';
  }
  const reasons: string[] = [];
  if (probe.baked) {
    reasons.push('baked: graph ignores an input');
  }
  if (!probe.shapeOk) {
    reasons.push('shape differs');
  }
  if (!probe.dtypeOk) {
    reasons.push('dtype differs');
  }
  if (probe.mismatches) {
    reasons.push(`wrong in ${probe.mismatches}${probe.n ? `/${probe.n}` : ''} probes`);
  }
  if (probe.maxAbsErr) {
    const err = Number(probe.maxAbsErr);
    reasons.push(`max |err| ${Number.isFinite(err) ? Number(err.toPrecision(3)) : probe.maxAbsErr}`);
  }
  return ['✖ PROBE FAILED', ...reasons].join(' · ');
}

/** The `data-leapp-status` word of a vertex: ok, baked, broken-chain, reversed-slice, mismatch,
 * warning, probe-failed, or the hazard kind itself for a kind this front end has no look for. */
export function vertexStatus(vertex: IVertex, hazards: IHazard[]): string {
  if (vertex.probe && !vertex.probe.passed) {
    return 'probe-failed';
  }
  const status = STATUS_OF_CATEGORY[vertex.category];
  if (status) {
    return status;
  }
  const marking = vertex.hazards.map(id => hazards.find(h => h.id === id)).filter((h): h is IHazard => !!h);
  if (marking.length) {
    return marking.some(h => h.severity === 'error') ? marking.find(h => h.severity === 'error')!.kind : 'warning';
  }
  return 'ok';
}

export function severityOf(vertex: IVertex, hazards: IHazard[]): 'error' | 'warning' | null {
  const severities = new Set(vertex.hazards.map(id => hazards.find(h => h.id === id)?.severity));
  if (severities.has('error')) {
    return 'error';
  }
  if (severities.has('warning')) {
    return 'warning';
  }
  return vertex.constant === 'baked' ? 'error' : null;
}

/** Whether a vertex carries something the user must see (it stays drawn when its group folds). */
export function isMarked(vertex: IVertex): boolean {
  return (
    vertex.hazards.length > 0 ||
    !['op', 'constant'].includes(vertex.category) ||
    vertex.probeBaked.length > 0 ||
    (vertex.probe !== null && !vertex.probe.passed)
  );
}

/** How many vertices of one mark (category, hazards, line) a node draws when folded, as the Python side's
 * `MARKED_SHOWN`: a hazard on a line a loop runs marks a vertex on every pass; the others are counted in the
 * summaries. */
export const MARKED_SHOWN = 3;

/** A node's budget of marked vertices: true for the first `MARKED_SHOWN` of each mark, in the order asked. */
export function markBudget(): (vertex: IVertex) => boolean {
  const counts = new Map<string, number>();
  return vertex => {
    const key = JSON.stringify([vertex.category, vertex.hazards, vertex.line]);
    const shown = counts.get(key) ?? 0;
    if (shown >= MARKED_SHOWN) {
      return false;
    }
    counts.set(key, shown + 1);
    return true;
  };
}

function callSummary(vertices: IVertex[]): { ops: number; constants: number; top: string } {
  const calls = new Map<string, number>();
  for (const vertex of vertices) {
    if (vertex.role === 'op') {
      calls.set(vertex.numpy, (calls.get(vertex.numpy) ?? 0) + 1);
    }
  }
  const ranked = [...calls].sort((a, b) => b[1] - a[1]);
  const top = ranked
    .slice(0, 3)
    .map(([name, n]) => (n > 1 ? `${name} ×${n}` : name))
    .join(', ');
  return {
    ops: ranked.reduce((sum, [, n]) => sum + n, 0),
    constants: vertices.filter(v => v.role === 'constant').length,
    top: top + (ranked.length > 3 ? ', …' : '')
  };
}

function spanLabel(groups: IGroup[]): string {
  const lines = groups.filter(g => g.kind === 'line' && g.line !== null).map(g => g.line as number);
  const helpers = [...new Set(groups.map(g => g.helper).filter(Boolean))].sort();
  const where = lines.length
    ? `lines ${Math.min(...lines)}–${Math.max(...lines)}`
    : `${groups.length} groups`;
  return where + (helpers.length ? ` (with ${helpers.map(h => `${h}()`).join(', ')})` : '');
}

/**
 * A node's groups as drawn. `modes` overrides a group's mode (default: `auto` when `collapse`, else
 * `open`); `keep` says which vertices a folded group still draws (marked, selected or found ones).
 */
export function fold(
  node: IGraphNode,
  keep: (vertex: IVertex) => boolean,
  collapse: boolean,
  modes: Map<string, FoldMode>
): IFoldItem[] {
  const byId = new Map(node.vertices.map(v => [v.id, v]));
  const items: IFoldItem[] = [];
  const run: IGroup[] = [];
  const closeRun = (): void => {
    if (run.length) {
      const hidden = run.flatMap(g => g.vertices.map(id => byId.get(id)!));
      const label = run.length === 1 ? run[0].label : spanLabel(run);
      items.push({ id: run[0].id, label, shown: [], hidden, groups: [...run], framed: false });
      run.length = 0;
    }
  };
  for (const group of node.groups) {
    const members = group.vertices.map(id => byId.get(id)!);
    const mode = modes.get(group.id) ?? (collapse ? 'auto' : 'open');
    let shown = mode === 'open' ? members : members.filter(keep);
    if (!shown.length && mode === 'auto') {
      run.push(group);
      continue;
    }
    closeRun();
    let hidden = members.filter(v => !shown.includes(v));
    if (hidden.length === 1) {
      shown = members;
      hidden = [];
    }
    items.push({ id: group.id, label: group.label, shown, hidden, groups: [group], framed: false });
  }
  closeRun();
  for (const item of items) {
    item.framed = item.shown.length + (item.hidden.length ? 1 : 0) > 1;
  }
  return items;
}

function table(rows: string[]): string {
  const body = rows.map(row => `<TR><TD ALIGN="LEFT">${row}</TD></TR>`).join('');
  return `<<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="0" CELLPADDING="1">${body}</TABLE>>`;
}

const small = (content: string, colour = SOFT_INK): string =>
  `<FONT POINT-SIZE="9" COLOR="${colour}">${content}</FONT>`;

export class DotWriter {
  /** `pinned`: vertices drawn even in a folded group (selected or found ones); marked ones are drawn too, the first
   * `MARKED_SHOWN` of each mark per node. */
  constructor(
    private readonly model: ITraceModel,
    private readonly pinned: (vertex: IVertex) => boolean,
    private readonly collapse: boolean,
    private readonly modes: Map<string, FoldMode>
  ) {}

  write(): IDrawing {
    this.drawing = { dot: '', vertices: new Map(), folds: new Map(), clusters: new Map(), drawnAs: new Map() };
    this.count = 0;
    const out = [
      'digraph leapp {',
      `  graph [rankdir=TB, fontname=${quote(FONT)}, fontsize=11, fontcolor="${INK}", nodesep=0.3, ` +
        'ranksep=0.35, bgcolor="transparent", newrank=true];',
      `  node [fontname=${quote(FONT)}, fontsize=11, fontcolor="${INK}", margin="0.12,0.05"];`,
      `  edge [fontname=${quote(FONT)}, fontsize=9, color="#6b7280", fontcolor="${SOFT_INK}", arrowsize=0.7];`
    ];
    for (const node of this.model.nodes) {
      out.push(...this.node(node));
    }
    out.push('}');
    this.drawing.dot = out.join('\n') + '\n';
    return this.drawing;
  }

  private newId(prefix = 'v'): string {
    return `${prefix}${this.count++}`;
  }

  private look(category: string): ILook {
    return this.model.looks.get(category) ?? DEFAULT_LOOK;
  }

  private node(node: IGraphNode): string[] {
    const title =
      `<<B>node '${esc(node.name)}'</B> · <FONT POINT-SIZE="9">` +
      `export_with=${esc(node.exportWith)} · ${plural(node.ops, 'op')}</FONT>>`;
    const out = [
      `  subgraph cluster_n${node.index} {`,
      `    label=${title}; labeljust=l; labelloc=t; style="rounded"; color="#9ca3af"; margin=10;`
    ];
    const rep = new Map(node.vertices.map(v => [v.id, '']));
    const grouped = new Set<string>();
    const budget = markBudget();
    const keep = (vertex: IVertex): boolean =>
      this.pinned(vertex) || (isMarked(vertex) && (vertex.role === 'collapsed' || budget(vertex)));
    for (const item of fold(node, keep, this.collapse, this.modes)) {
      out.push(...this.item(item, rep, grouped));
    }
    for (const vertex of node.vertices) {
      if (!grouped.has(vertex.id)) {
        out.push('    ' + this.vertex(vertex, rep));
      }
    }
    out.push(...this.edges(node, rep));
    out.push('  }');
    return out;
  }

  private item(item: IFoldItem, rep: Map<string, string>, grouped: Set<string>): string[] {
    const out: string[] = [];
    let indent = '    ';
    if (item.framed) {
      const name = this.newId('c');
      if (!item.hidden.length) {
        this.drawing.clusters.set(`cluster_${name}`, item);
      }
      out.push(`    subgraph cluster_${name} {`);
      const label = esc(clip(item.label, 60)) + (item.hidden.length ? '' : '  ▾');
      out.push(
        `      label=<<FONT POINT-SIZE="10" COLOR="#374151">${label}</FONT>>; ` +
          'labeljust=l; labelloc=t; style="rounded,dashed"; color="#9ca3af"; margin=8;'
      );
      indent = '      ';
    }
    for (const vertex of item.shown) {
      grouped.add(vertex.id);
      out.push(indent + this.vertex(vertex, rep));
    }
    if (item.hidden.length) {
      const id = this.newId();
      for (const vertex of item.hidden) {
        grouped.add(vertex.id);
        rep.set(vertex.id, id);
        this.drawing.drawnAs.set(vertex.id, id);
      }
      this.drawing.folds.set(id, item);
      out.push(indent + this.summary(id, item));
    }
    if (item.framed) {
      out.push('    }');
    }
    return out;
  }

  private summary(id: string, item: IFoldItem): string {
    const look = COLLAPSED_LOOK;
    const { ops, constants, top } = callSummary(item.hidden);
    const marked = item.hidden.filter(isMarked).length;
    const rows = [
      `<B>${look.icon} ${plural(ops, 'op')}</B>` +
        (constants ? ` <FONT POINT-SIZE="9">+ ${plural(constants, 'constant')}</FONT>` : '') +
        (marked ? ` <FONT POINT-SIZE="9">· ${marked} marked</FONT>` : ''),
      small(esc(clip(top, 56)))
    ];
    if (!item.framed) {
      rows.unshift(small(esc(clip(item.label, 56))));
    }
    return (
      `${id} [shape=box, style="rounded,filled", fillcolor="${look.fill}", color="${look.border}", ` +
      `label=${table(rows)}];`
    );
  }

  private vertex(vertex: IVertex, rep: Map<string, string>): string {
    const id = this.newId();
    rep.set(vertex.id, id);
    this.drawing.vertices.set(id, vertex);
    this.drawing.drawnAs.set(vertex.id, id);
    const look = this.look(vertex.category);
    const severity = severityOf(vertex, this.model.hazards);
    const baked = vertex.constant === 'baked';
    const styles = baked ? ['filled', 'diagonals'] : ['filled', 'rounded'];
    const attrs: Record<string, string> = {
      shape: 'box',
      fillcolor: look.fill || DEFAULT_LOOK.fill,
      color: look.border || DEFAULT_LOOK.border,
      penwidth: '1.2'
    };
    if (severity === 'error') {
      attrs.penwidth = '2.5';
    } else if (severity === 'warning') {
      styles.push('dashed');
      attrs.penwidth = '2';
    }
    if (vertex.role === 'output') {
      attrs.peripheries = '2';
      if (vertex.probe && !vertex.probe.passed) {
        Object.assign(attrs, { color: PROBE_FAILED, penwidth: '3.5' });
      } else if (vertex.probe) {
        Object.assign(attrs, { color: PROBE_PASSED, penwidth: '2' });
      }
    }
    attrs.style = styles.join(',');
    const parts = Object.entries(attrs).map(([key, value]) => `${key}=${quote(value)}`);
    parts.push(`label=${table(this.rows(vertex, look))}`);
    return `${id} [${parts.join(', ')}];`;
  }

  private rows(vertex: IVertex, look: ILook): string[] {
    const where = vertex.line !== null && vertex.role !== 'output' ? ` · line ${vertex.line}` : '';
    const typed = `${vertex.shape || '?'} ${vertex.dtype}`.trim();
    let rows: string[];
    if (vertex.role === 'input') {
      rows = [`<B>${esc(look.icon)} IN ${esc(vertex.name)}</B>`, small(esc(typed))];
    } else if (vertex.role === 'output') {
      rows = [`<B>${esc(look.icon || '◉')} OUT ${esc(vertex.name)}</B>`, small(esc(typed))];
      const probe = probeText(vertex);
      if (probe) {
        rows.push(small(`<B>${esc(probe)}</B>`, vertex.probe?.passed ? PROBE_PASSED : PROBE_FAILED));
      }
    } else if (vertex.role === 'constant' && vertex.constant === 'baked') {
      rows = [`<B>${esc(look.icon)} BAKED ${esc(vertex.name)}</B>`];
      if (vertex.origin) {
        rows.push(small(esc(clip(vertex.origin))));
      }
      if (vertex.code) {
        rows.push(`<FONT POINT-SIZE="9" FACE="${MONO}">line ${vertex.line}: ${esc(clip(vertex.code.trim(), 44))}</FONT>`);
      }
      rows.push(small(esc(`${typed} = ${previewText(vertex.preview)}`)));
      if (vertex.probeBaked.length) {
        rows.push(small(`<B>✖ probe: ${esc(vertex.probeBaked.join(', '))} should follow the input</B>`, PROBE_FAILED));
      }
    } else if (vertex.role === 'constant') {
      rows = [`${esc(look.icon)} ${esc(vertex.name)} ${small(esc(previewText(vertex.preview)))}`, small(esc(typed + where))];
    } else if (vertex.role === 'module') {
      rows = [`<B>${esc(`${look.icon} ${moduleLabel(vertex)}`.trim())}</B>`, small(esc(where.replace(/^ · /, '')))];
    } else if (vertex.role === 'collapsed') {
      rows = [`<B>${esc(`${look.icon} ${vertex.name}`.trim())}</B>`, small(esc(clip(vertex.numpy, 56)))];
    } else if (vertex.cast) {
      // a cast the tracer inserted to keep NumPy's dtypes: it says so instead of posing as the call it serves
      rows = [
        `<B>${esc(`${look.icon} cast to ${vertex.dtype}`.trim())}</B>`,
        small(esc(`→ ${vertex.torch} · keeps NumPy's dtypes in ${vertex.numpy}`)),
        small(esc(typed + where))
      ];
    } else {
      const icon = look.icon ? `${look.icon} ` : '';
      const torch = vertex.torch + (vertex.torch === 'Tensor.to' ? ` (cast to ${vertex.dtype})` : '');
      rows = [`<B>${esc(icon + vertex.numpy)}</B>`, small('→ ' + esc(torch)), small(esc(typed + where))];
    }
    rows.push(...this.hazardRows(vertex, vertex.constant === 'baked'));
    return rows;
  }

  /** One row per hazard kind marking the vertex: severity icon and word, category tag and kind. */
  private hazardRows(vertex: IVertex, titled: boolean): string[] {
    const rows: string[] = [];
    const seen = new Set<string>();
    for (const id of vertex.hazards) {
      const hazard = this.model.hazards.find(h => h.id === id);
      if (!hazard || seen.has(`${hazard.kind}/${hazard.severity}`)) {
        continue;
      }
      seen.add(`${hazard.kind}/${hazard.severity}`);
      const look = this.model.looks.get(hazard.category);
      const colour = look?.border || (hazard.severity === 'error' ? '#b91c1c' : '#b45309');
      const tag = !look?.tag || (titled && hazard.category === vertex.category) ? '' : `${look.tag} · `;
      const words = `${SEVERITY_ICON[hazard.severity] ?? ''} ${tag}${hazard.severity}: ${hazard.kind}`;
      rows.push(`<FONT POINT-SIZE="9" COLOR="${esc(colour)}"><B>${esc(words)}</B></FONT>`);
    }
    return rows;
  }

  private edges(node: IGraphNode, rep: Map<string, string>): string[] {
    const out: string[] = [];
    const seen = new Set<string>();
    for (const edge of node.edges) {
      const source = rep.get(edge.source);
      const target = rep.get(edge.target);
      if (!source || !target || source === target || seen.has(`${source}>${target}>${edge.kind}`)) {
        continue;
      }
      seen.add(`${source}>${target}>${edge.kind}`);
      const aggregated = this.drawing.folds.has(source) || this.drawing.folds.has(target);
      let attrs = '';
      if (edge.kind === 'not-recorded') {
        attrs = 'style=dashed, color="#b91c1c", fontcolor="#b91c1c", label=" not recorded"';
      } else if (!aggregated) {
        attrs = `label=${quote(' ' + (edge.shape || '?'))}`;
      }
      out.push(`    ${source} -> ${target}${attrs ? ` [${attrs}]` : ''};`);
    }
    return out;
  }

  private drawing!: IDrawing;
  private count = 0;
}

/** The vertex ids a hazard marks (what a selected hazard row or editor mark highlights). */
export function hazardVertices(model: ITraceModel, hazardIds: number[]): string[] {
  const wanted = new Set(hazardIds);
  return model.nodes.flatMap(node => node.vertices.filter(v => v.hazards.some(id => wanted.has(id))).map(v => v.id));
}
