/**
 * The parts of the "leapp-trace-graph/1" model (leapp_notebook/render/model.py) this front end reads.
 *
 * Output data comes from notebook files, which anyone can edit, so every field is read defensively:
 * a malformed model yields empty lists and strings instead of an exception in the output area.
 */
export const MIME_TYPE = 'application/vnd.leapp.trace+json';
export const SVG_MIME_TYPE = 'image/svg+xml';

export type Severity = 'error' | 'warning';

export interface IHazard {
  kind: string;
  severity: Severity;
  node: string;
  line: number | null;
  code: string;
  message: string;
  fix: string;
}

export interface IVertex {
  id: string;
  name: string;
  role: string;
  numpy: string;
  torch: string;
  line: number | null;
  shape: string;
  dtype: string;
  category: string;
  hazards: number[];
}

export interface IGraphNode {
  name: string;
  vertices: IVertex[];
  /** Source vertex ids by target vertex id; "not recorded" inputs are kept apart. */
  inputs: Map<string, { data: string[]; notRecorded: string[] }>;
}

export interface ILook {
  border: string;
  icon: string;
  tag: string;
  label: string;
}

export interface ITraceModel {
  profile: string;
  ok: boolean;
  summary: { nodes: number; ops: number; errors: number; warnings: number; probe: string | null };
  nodes: IGraphNode[];
  hazards: IHazard[];
  looks: Map<string, ILook>;
  /** Graphviz SVG, if the model itself carries one (the bundle's image/svg+xml is read separately). */
  svg: string | null;
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

/** The hazards of a model, or none when `data` is not a leapp trace model. */
export function readHazards(data: unknown): IHazard[] {
  if (!isObject(data) || !text(data.schema).startsWith('leapp-trace-graph/')) {
    return [];
  }
  return list(data.hazards).filter(isObject).map(hazard => ({
    kind: text(hazard.kind),
    severity: hazard.severity === 'warning' ? 'warning' : 'error',
    node: text(hazard.node),
    line: lineOf(hazard.line),
    code: text(hazard.code),
    message: text(hazard.message),
    fix: text(hazard.fix)
  }));
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
      probe: typeof summary.probe === 'string' ? summary.probe : null
    },
    nodes: list(data.nodes).filter(isObject).map(readNode),
    hazards: readHazards(data),
    looks,
    svg: typeof data.svg === 'string' ? data.svg : null
  };
}

function readNode(node: Json): IGraphNode {
  const vertices = list(node.vertices).filter(isObject).map(vertex => ({
    id: text(vertex.id),
    name: text(vertex.name),
    role: text(vertex.role),
    numpy: text(vertex.numpy),
    torch: text(vertex.torch),
    line: lineOf(vertex.line),
    shape: Array.isArray(vertex.shape) ? `[${vertex.shape.map(text).join(', ')}]` : '',
    dtype: text(vertex.dtype),
    category: text(vertex.category),
    hazards: list(vertex.hazards).filter((id): id is number => typeof id === 'number')
  }));
  const inputs: IGraphNode['inputs'] = new Map();
  for (const edge of list(node.edges).filter(isObject)) {
    const target = text(edge.target);
    const entry = inputs.get(target) ?? { data: [], notRecorded: [] };
    (edge.kind === 'not-recorded' ? entry.notRecorded : entry.data).push(text(edge.source));
    inputs.set(target, entry);
  }
  return { name: text(node.name), vertices, inputs };
}
