/**
 * The parts of the "leapp-trace-graph/1" model (leapp_notebook/render/model.py) this front end reads.
 *
 * Output data comes from notebook files, which anyone can edit, so every field is read defensively:
 * a malformed model yields empty lists and strings instead of an exception in the output area.
 */
export const MIME_TYPE = 'application/vnd.leapp.trace+json';
export const SVG_MIME_TYPE = 'image/svg+xml';

export type Severity = 'error' | 'warning';

/** A mechanical rewrite of cell lines `line`..`endLine` (1-based, inclusive) from `old` to `new`. */
export interface IEdit {
  line: number;
  endLine: number;
  old: string;
  new: string;
}

export interface IHazard {
  id: number;
  kind: string;
  severity: Severity;
  node: string;
  line: number | null;
  code: string;
  /** the library or helper line that made the call, when not the cell's own (empty otherwise) */
  location: string;
  message: string;
  fix: string;
  category: string;
  edit: IEdit | null;
}

export interface IProbeCheck {
  passed: boolean;
  baked: boolean;
  mismatches: number;
  n: number | null;
  maxAbsErr: string;
  shapeOk: boolean;
  dtypeOk: boolean;
  firstMismatch: string;
}

export interface IVertex {
  id: string;
  name: string;
  role: string;
  numpy: string;
  torch: string;
  line: number | null;
  helper: string;
  location: string;
  shape: string;
  dtype: string;
  cast: boolean;
  category: string;
  hazards: number[];
  group: string;
  constant: string;
  origin: string;
  preview: Array<number | string>;
  code: string;
  probe: IProbeCheck | null;
  probeBaked: string[];
  /** `role: "module"`: the nn.Module this vertex calls. */
  module: IModule | null;
  /** `role: "collapsed"` (a compacted model): how many vertices it stands for. */
  hidden: number;
}

export interface IModule {
  name: string;
  type: string;
  params: number;
  training: boolean;
  inShape: string;
  ops: string[];
}

export interface IEdge {
  source: string;
  target: string;
  shape: string;
  kind: string;
}

export interface IGroup {
  id: string;
  kind: string;
  line: number | null;
  helper: string;
  label: string;
  vertices: string[];
}

export interface IGraphNode {
  index: number;
  name: string;
  exportWith: string;
  ops: number;
  vertices: IVertex[];
  edges: IEdge[];
  groups: IGroup[];
  /** Source vertex ids by target vertex id; "not recorded" inputs are kept apart. */
  inputs: Map<string, { data: string[]; notRecorded: string[] }>;
}

export interface ILook {
  category: string;
  fill: string;
  border: string;
  icon: string;
  tag: string;
  label: string;
}

export interface ITraceModel {
  profile: string;
  ok: boolean;
  summary: {
    nodes: number;
    ops: number;
    errors: number;
    warnings: number;
    probe: string | null;
    /** The counts in words as the kernel wrote them (`summary.text`), '' in older models. */
    text: string;
  };
  /** The verdict the kernel wrote (`model.verdict`), or null in models saved before it existed. */
  verdict: { state: 'error' | 'warning' | 'ok'; text: string } | null;
  source: string;
  nodes: IGraphNode[];
  hazards: IHazard[];
  looks: Map<string, ILook>;
  /** Graphviz SVG, if the model itself carries one (the bundle's image/svg+xml is read separately). */
  svg: string | null;
  /** A compacted model (a large trace): the full model's vertex count and the count shown, else null. */
  compacted: { vertices: number; shown: number } | null;
  /** The last probe's report as the kernel wrote it (`model.probe`), else null. */
  probeReport: IProbeReport | null;
  /** The last export as the kernel wrote it (`model.export`), else null. */
  exported: { state: string; files: string[]; message: string } | null;
}

export interface IProbeReport {
  passed: boolean;
  n: number;
  /** As the kernel wrote it (a JSON number: exact below 2**53, which drawn seeds are). */
  seed: string;
  outputs: Array<{ key: string; passed: boolean; maxAbsErr: string; firstMismatch: string; varyingShape: string }>;
}

type Json = { [key: string]: unknown };

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);
const text = (value: unknown): string =>
  typeof value === 'string' ? value : value === null || value === undefined ? '' : String(value);
const count = (value: unknown): number =>
  typeof value === 'number' && Number.isFinite(value) ? value : 0;
const lineOf = (value: unknown): number | null =>
  typeof value === 'number' && Number.isInteger(value) && value >= 1 ? value : null;
/** A shape as NumPy prints it: `(4,)`, `(2, 3)`, `()`; '' when the model has none. */
const shapeOf = (value: unknown): string =>
  Array.isArray(value) ? `(${value.map(text).join(', ')}${value.length === 1 ? ',' : ''})` : '';

function readEdit(value: unknown): IEdit | null {
  if (!isObject(value)) {
    return null;
  }
  const line = lineOf(value.line);
  const endLine = lineOf(value.end_line) ?? line;
  if (line === null || endLine === null || endLine < line) {
    return null;
  }
  if (typeof value.old !== 'string' || typeof value.new !== 'string') {
    return null;
  }
  return { line, endLine, old: value.old, new: value.new };
}

/** The hazards of a model, or none when `data` is not a leapp trace model. */
export function readHazards(data: unknown): IHazard[] {
  if (!isObject(data) || !text(data.schema).startsWith('leapp-trace-graph/')) {
    return [];
  }
  return list(data.hazards)
    .filter(isObject)
    .map((hazard, index) => ({
      id: typeof hazard.id === 'number' ? hazard.id : index,
      kind: text(hazard.kind),
      severity: hazard.severity === 'warning' ? 'warning' : 'error',
      node: text(hazard.node),
      line: lineOf(hazard.line),
      code: text(hazard.code),
      location: text(hazard.location),
      message: text(hazard.message),
      fix: text(hazard.fix),
      category: text(hazard.category),
      edit: readEdit(hazard.edit)
    }));
}

function readVerdict(value: unknown): ITraceModel['verdict'] {
  if (!isObject(value) || typeof value.text !== 'string' || !value.text) {
    return null;
  }
  const state = value.state === 'error' || value.state === 'warning' ? value.state : 'ok';
  return { state, text: value.text };
}

/** The whole model for the renderer, or null when `data` is not a leapp trace model. */
export function readModel(data: unknown): ITraceModel | null {
  if (!isObject(data) || !text(data.schema).startsWith('leapp-trace-graph/')) {
    return null;
  }
  const summary = isObject(data.summary) ? data.summary : {};
  const looks = new Map<string, ILook>();
  for (const look of list(data.legend).filter(isObject)) {
    looks.set(text(look.category), {
      category: text(look.category),
      fill: text(look.fill),
      border: text(look.border),
      icon: text(look.icon),
      tag: text(look.tag),
      label: text(look.label)
    });
  }
  return {
    profile: text(data.profile),
    ok: data.ok === true,
    summary: {
      nodes: count(summary.nodes),
      ops: count(summary.ops),
      errors: count(summary.errors),
      warnings: count(summary.warnings),
      probe: typeof summary.probe === 'string' ? summary.probe : null,
      text: text(summary.text)
    },
    verdict: readVerdict(data.verdict),
    source: text(data.source),
    nodes: list(data.nodes).filter(isObject).map(readNode),
    hazards: readHazards(data),
    looks,
    svg: typeof data.svg === 'string' ? data.svg : null,
    compacted: isObject(data.compacted)
      ? { vertices: count(data.compacted.vertices), shown: count(data.compacted.shown) }
      : null,
    probeReport: readProbeReport(data.probe),
    exported: isObject(data.export)
      ? { state: text(data.export.state), files: list(data.export.files).map(text), message: text(data.export.message) }
      : null
  };
}

function readProbeReport(value: unknown): IProbeReport | null {
  if (!isObject(value) || !isObject(value.outputs)) {
    return null;
  }
  return {
    passed: value.passed === true,
    n: count(value.n),
    seed: text(value.seed),
    outputs: Object.entries(value.outputs)
      .filter(([, check]) => isObject(check))
      .map(([key, check]) => {
        const found = check as Json;
        return {
          key,
          passed: found.passed === true,
          maxAbsErr: text(found.max_abs_err),
          firstMismatch: text(found.first_mismatch),
          varyingShape: text(found.varying_shape)
        };
      })
  };
}

function readProbe(value: unknown): IProbeCheck | null {
  if (!isObject(value)) {
    return null;
  }
  return {
    passed: value.passed === true,
    baked: value.baked === true,
    mismatches: count(value.mismatches),
    n: typeof value.n === 'number' ? value.n : null,
    maxAbsErr: value.max_abs_err === null || value.max_abs_err === undefined ? '' : text(value.max_abs_err),
    shapeOk: value.shape_ok !== false,
    dtypeOk: value.dtype_ok !== false,
    firstMismatch: text(value.first_mismatch)
  };
}

function readVertex(vertex: Json): IVertex {
  return {
    id: text(vertex.id),
    name: text(vertex.name),
    role: text(vertex.role),
    numpy: text(vertex.numpy),
    torch: text(vertex.torch),
    line: lineOf(vertex.line),
    helper: text(vertex.helper),
    location: text(vertex.location),
    shape: shapeOf(vertex.shape),
    dtype: text(vertex.dtype),
    cast: vertex.cast === true,
    category: text(vertex.category),
    hazards: list(vertex.hazards).filter((id): id is number => typeof id === 'number'),
    group: text(vertex.group),
    constant: text(vertex.constant),
    origin: text(vertex.origin),
    preview: list(vertex.preview).map(value => (typeof value === 'number' ? value : text(value))),
    code: text(vertex.code),
    probe: readProbe(vertex.probe),
    probeBaked: list(vertex.probe_baked).map(text),
    module: readModule(vertex.module),
    hidden: typeof vertex.hidden === 'number' ? vertex.hidden : 0
  };
}

function readModule(value: unknown): IModule | null {
  if (!isObject(value)) {
    return null;
  }
  return {
    name: text(value.name),
    type: text(value.type),
    params: typeof value.params === 'number' ? value.params : 0,
    training: value.training === true,
    inShape: shapeOf(value.in_shape),
    ops: list(value.ops)
      .filter(isObject)
      .map(op => (text(op.type) && text(op.type) !== text(op.op) ? `${text(op.target)}: ${text(op.type)}` : text(op.target)))
  };
}

/** `policy: Sequential · 114 params · (4,) → (2,)`, as the Python renderers write it. */
export function moduleLabel(vertex: IVertex): string {
  const module = vertex.module;
  if (!module) {
    return vertex.numpy || vertex.name;
  }
  const params = module.params.toLocaleString('en-US');
  return `${module.name}: ${module.type} · ${params} params · ${module.inShape || '?'} → ${vertex.shape || '?'}${
    module.training ? ' · TRAINING' : ''
  }`;
}

function readNode(node: Json, index: number): IGraphNode {
  const vertices = list(node.vertices).filter(isObject).map(readVertex);
  const known = new Set(vertices.map(vertex => vertex.id));
  const edges = list(node.edges)
    .filter(isObject)
    .map(edge => ({
      source: text(edge.source),
      target: text(edge.target),
      shape: shapeOf(edge.shape),
      kind: text(edge.kind)
    }))
    .filter(edge => known.has(edge.source) && known.has(edge.target));
  const inputs: IGraphNode['inputs'] = new Map();
  for (const edge of edges) {
    const entry = inputs.get(edge.target) ?? { data: [], notRecorded: [] };
    (edge.kind === 'not-recorded' ? entry.notRecorded : entry.data).push(edge.source);
    inputs.set(edge.target, entry);
  }
  const groups = list(node.groups)
    .filter(isObject)
    .map(group => ({
      id: text(group.id),
      kind: text(group.kind),
      line: lineOf(group.line),
      helper: text(group.helper),
      label: text(group.label),
      vertices: list(group.vertices)
        .map(text)
        .filter(id => known.has(id))
    }));
  return {
    index: typeof node.index === 'number' ? node.index : index,
    name: text(node.name),
    exportWith: text(node.export_with),
    ops: count(node.ops),
    vertices,
    edges,
    groups,
    inputs
  };
}

/** `1 op`, `2 ops`. */
export function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}
