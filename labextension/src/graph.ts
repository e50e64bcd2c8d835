/**
 * The live graph: the trace's graph laid out in the browser by Graphviz compiled to WebAssembly,
 * with pan and zoom, hover cards, folding groups, search and selection.
 *
 * Graphviz (`@hpcc-js/wasm-graphviz`) is bundled in its own chunk, loaded on the first graph, so no
 * system Graphviz is needed. The SVG it writes from our DOT is parsed as XML and filtered to plain
 * drawing elements before it joins the page; every user string in it was escaped in the DOT.
 *
 * DOM hooks (stable, for tests and users' CSS): `.leapp-trace-graph` (the whole view),
 * `[data-leapp-node]` (a drawn vertex, with `data-leapp-status`, `data-leapp-line`, `data-leapp-kinds`),
 * `[data-leapp-fold]` (a folded box: click to unfold), `[data-leapp-cluster]` (an open group: click its
 * frame to fold), `.leapp-graph-card` (the hover card), `.leapp-graph-search`.
 */
import {
  DotWriter,
  FOLD_ABOVE,
  FoldMode,
  IDrawing,
  IFoldItem,
  hazardVertices,
  previewText,
  probeText,
  vertexStatus
} from './dot';
import { IGraphNode, IHazard, ITraceModel, IVertex, moduleLabel, plural } from './model';

type GraphvizModule = typeof import('@hpcc-js/wasm-graphviz');
type Graphviz = Awaited<ReturnType<GraphvizModule['Graphviz']['load']>>;

let graphvizLoading: Promise<Graphviz> | null = null;

/** Graphviz, loaded (and its WebAssembly compiled) once per page. */
export function loadGraphviz(): Promise<Graphviz> {
  if (!graphvizLoading) {
    graphvizLoading = import('@hpcc-js/wasm-graphviz').then(module => module.Graphviz.load());
    graphvizLoading.catch(() => (graphvizLoading = null));
  }
  return graphvizLoading;
}

const SVG_NS = 'http://www.w3.org/2000/svg';
const SVG_ELEMENTS = new Set([
  'svg', 'g', 'title', 'polygon', 'path', 'ellipse', 'polyline', 'text', 'tspan', 'defs', 'linearGradient',
  'radialGradient', 'stop'
]);
const MAX_VIEW_HEIGHT = 900;
/** The smallest scale a fit draws at: a tall graph is drawn at least this big and panned, its text readable. */
const MIN_FIT_SCALE = 0.8;
const PT = 4 / 3;

/** Only Graphviz's drawing elements, with no event handlers or links, survive into the page. */
function sanitize(element: Element): void {
  for (const child of [...element.children]) {
    if (child.namespaceURI !== SVG_NS || !SVG_ELEMENTS.has(child.localName)) {
      child.remove();
      continue;
    }
    sanitize(child);
  }
  for (const attribute of [...element.attributes]) {
    const name = attribute.name.toLowerCase();
    if (name.startsWith('on') || name.endsWith('href') || name === 'style' || name === 'id') {
      element.removeAttribute(attribute.name);
    }
  }
}

function el<K extends keyof HTMLElementTagNameMap>(tag: K, className = '', content = ''): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  node.className = className;
  node.textContent = content;
  return node;
}

export interface ILiveGraphOptions {
  /** The kernel's Graphviz SVG, drawn as an image if WebAssembly Graphviz cannot load. */
  fallbackSvg: string | null;
  /** When the renderer started, for the time-to-graph figure (`data-leapp-render-ms`). */
  started: number;
}

export class LiveGraph {
  readonly node: HTMLElement;

  constructor(
    private readonly model: ITraceModel,
    private readonly options: ILiveGraphOptions
  ) {
    this.collapse = model.summary.ops > FOLD_ABOVE;
    this.node = el('div', 'leapp-trace-graph');
    this.node.dataset.leappState = 'loading';
    this.toolbar = this.makeToolbar();
    this.viewport = el('div', 'leapp-graph-viewport');
    this.canvas = el('div', 'leapp-graph-canvas');
    this.viewport.append(this.canvas);
    this.card = el('div', 'leapp-graph-card');
    this.card.hidden = true;
    this.status = el('div', 'leapp-graph-status', 'laying out the graph…');
    this.node.append(this.toolbar, this.status, this.viewport, this.card, this.legend());
    this.listen();
    // Refit when the output's width changes (window, side bars), unless the user panned or zoomed.
    let width = 0;
    this.resizing = new ResizeObserver(() => {
      const now = this.viewport.clientWidth;
      if (now !== width && width && !this.moved && this.drawing) {
        this.fit();
      }
      width = now;
    });
    this.resizing.observe(this.viewport);
  }

  dispose(): void {
    this.resizing.disconnect();
    ++this.drawToken; // a layout still running is dropped
  }

  /** Lay out and draw; resolves when the SVG (or a fallback) is in place. */
  async draw(): Promise<void> {
    const token = ++this.drawToken;
    const writer = new DotWriter(this.model, vertex => this.pinned(vertex), this.collapse, this.modes);
    const drawing = writer.write();
    let svgText: string;
    try {
      const graphviz = await loadGraphviz();
      // Graphviz lays out on this thread: say so, and let the browser paint it before the page stops (unfolding
      // a 2,000-op cell takes seconds)
      const ops = this.collapse ? 0 : this.model.summary.ops;
      this.status.textContent = ops > 500 ? `laying out ${plural(ops, 'op')}… (a few seconds)` : 'laying out the graph…';
      this.status.hidden = false;
      await new Promise(resolve => window.requestAnimationFrame(() => window.requestAnimationFrame(resolve)));
      if (token !== this.drawToken) {
        return;
      }
      svgText = graphviz.dot(drawing.dot);
    } catch (error) {
      if (token === this.drawToken) {
        this.fallback(String(error));
      }
      return;
    }
    if (token !== this.drawToken) {
      return;
    }
    const parsed = new DOMParser().parseFromString(svgText, 'image/svg+xml');
    const root = parsed.documentElement;
    if (root.localName !== 'svg') {
      this.fallback('Graphviz wrote no SVG');
      return;
    }
    const box = (root.getAttribute('viewBox') ?? '').split(/[\s,]+/).map(Number);
    sanitize(root);
    const svg = document.importNode(root, true) as unknown as SVGSVGElement;
    const [width, height] = box.length === 4 && box.every(Number.isFinite) ? [box[2], box[3]] : [400, 300];
    this.size = { width: width * PT, height: height * PT };
    svg.setAttribute('width', String(this.size.width));
    svg.setAttribute('height', String(this.size.height));
    this.annotate(svg, drawing);
    this.drawing = drawing;
    this.canvas.replaceChildren(svg);
    const compacted = this.model.compacted;
    // A compacted model (the kernel folded a large trace's unmarked stretches itself) is folded as it comes.
    this.status.hidden = compacted === null;
    if (compacted) {
      this.status.textContent =
        `${compacted.shown} of ${compacted.vertices} vertices: unmarked stretches are folded in this output ` +
        '(trace.save_graph_model(path) writes them all)';
    }
    this.node.dataset.leappState = 'ready';
    this.node.dataset.leappFolded = String(drawing.folds.size > 0 || compacted !== null);
    this.fit();
    this.applyMarks();
    this.node.dataset.leappRenderMs = (performance.now() - this.options.started).toFixed(1);
  }

  /** Highlight the vertices the hazards mark (unfolding the groups that hide them). */
  selectHazards(ids: number[]): void {
    this.selected = new Set(hazardVertices(this.model, ids));
    this.refresh();
    const first = [...this.selected].map(id => this.drawing?.drawnAs.get(id)).find(Boolean);
    const target = first ? this.canvas.querySelector(`[data-leapp-dot="${first}"]`) : null;
    target?.scrollIntoView({ block: 'nearest' });
  }

  selectedVertices(): string[] {
    return [...this.selected];
  }

  // ---------------------------------------------------------------- drawing

  private pinned(vertex: IVertex): boolean {
    return this.selected.has(vertex.id) || this.found.has(vertex.id);
  }

  /** Redraw when a chosen vertex is folded away, else restyle in place. */
  private refresh(): void {
    const hidden = [...this.selected, ...this.found].some(id => {
      const drawn = this.drawing?.drawnAs.get(id);
      return drawn !== undefined && this.drawing!.folds.has(drawn);
    });
    if (hidden) {
      void this.draw();
    } else {
      this.applyMarks();
    }
  }

  private annotate(svg: SVGSVGElement, drawing: IDrawing): void {
    for (const group of svg.querySelectorAll('g.node, g.cluster')) {
      const title = group.querySelector(':scope > title');
      const name = title?.textContent ?? '';
      title?.remove();
      const vertex = drawing.vertices.get(name);
      const fold = drawing.folds.get(name);
      const cluster = drawing.clusters.get(name);
      if (vertex) {
        group.setAttribute('data-leapp-node', vertex.id);
        group.setAttribute('data-leapp-dot', name);
        group.setAttribute('data-leapp-status', vertexStatus(vertex, this.model.hazards));
        group.setAttribute('data-leapp-role', vertex.role);
        group.setAttribute('data-leapp-kinds', this.hazardsOf(vertex).map(h => h.kind).join(' '));
        if (vertex.line !== null) {
          group.setAttribute('data-leapp-line', String(vertex.line));
        }
        group.setAttribute('tabindex', '0');
        group.setAttribute('role', 'button');
        group.setAttribute('aria-label', cardLines(this.model, vertex).join('. '));
      } else if (fold) {
        group.setAttribute('data-leapp-fold', fold.id);
        group.setAttribute('data-leapp-dot', name);
        group.setAttribute('tabindex', '0');
        group.setAttribute('role', 'button');
        group.setAttribute('aria-label', `${fold.label}: ${fold.hidden.length} folded vertices, press to unfold`);
      } else if (cluster) {
        group.setAttribute('data-leapp-cluster', cluster.id);
        group.setAttribute('aria-label', `${cluster.label}: press to fold`);
      }
    }
    for (const title of svg.querySelectorAll('title')) {
      title.remove();
    }
  }

  private applyMarks(): void {
    if (!this.drawing) {
      return;
    }
    const mark = (ids: Set<string>, attribute: string): void => {
      for (const element of this.canvas.querySelectorAll(`[${attribute}]`)) {
        element.removeAttribute(attribute);
      }
      for (const id of ids) {
        const drawn = this.drawing!.drawnAs.get(id);
        this.canvas.querySelector(`[data-leapp-dot="${drawn}"]`)?.setAttribute(attribute, 'true');
      }
    };
    mark(this.selected, 'data-leapp-selected');
    mark(this.found, 'data-leapp-found');
  }

  private fallback(reason: string): void {
    this.node.dataset.leappState = 'fallback';
    this.status.hidden = false;
    this.status.textContent = `The interactive graph is not available (${reason}).`;
    this.viewport.hidden = true;
    this.toolbar.hidden = true;
    if (this.options.fallbackSvg) {
      // An <img> never runs scripts or loads resources from the SVG, so this is safe for untrusted output.
      const image = el('img', 'leapp-trace-svg');
      image.alt = `trace graph: ${plural(this.model.summary.ops, 'recorded op')}`;
      image.src = `data:image/svg+xml,${encodeURIComponent(this.options.fallbackSvg)}`;
      this.status.after(image);
    } else {
      this.status.after(...this.model.nodes.map(node => vertexList(this.model, node)));
    }
  }

  // ---------------------------------------------------------------- view: pan, zoom, fit

  /** Fit the graph to the view; `whole` (the Fit button): all of it, however small that draws it. */
  private fit(whole = false): void {
    const width = this.viewport.clientWidth || 800;
    // Fit the width; fit the height too unless that would shrink the graph below MIN_FIT_SCALE (at half size a
    // ten-op policy's node details were 5 px high): a taller graph is panned in a view of MAX_VIEW_HEIGHT.
    const tall = MAX_VIEW_HEIGHT / this.size.height;
    this.scale = Math.min(1, width / this.size.width, whole ? tall : Math.max(MIN_FIT_SCALE, tall));
    this.tx = Math.max(0, (width - this.size.width * this.scale) / 2);
    this.ty = 0;
    this.viewport.style.height = `${Math.min(MAX_VIEW_HEIGHT, Math.max(80, this.size.height * this.scale + 4))}px`;
    this.place();
  }

  private zoom(factor: number, x = this.viewport.clientWidth / 2, y = this.viewport.clientHeight / 2): void {
    this.moved = true;
    const scale = Math.min(4, Math.max(0.05, this.scale * factor));
    this.tx = x - ((x - this.tx) * scale) / this.scale;
    this.ty = y - ((y - this.ty) * scale) / this.scale;
    this.scale = scale;
    this.place();
  }

  private place(): void {
    this.canvas.style.transform = `translate(${this.tx}px, ${this.ty}px) scale(${this.scale})`;
    this.node.dataset.leappScale = this.scale.toFixed(3);
  }

  // ---------------------------------------------------------------- controls and events

  private makeToolbar(): HTMLElement {
    const bar = el('div', 'leapp-graph-toolbar');
    const search = el('input', 'leapp-graph-search');
    search.type = 'search';
    search.placeholder = 'find: op, name, line';
    search.setAttribute('aria-label', 'find graph nodes by NumPy call, torch op, name or line');
    let timer = 0;
    search.addEventListener('input', () => {
      window.clearTimeout(timer);
      timer = window.setTimeout(() => this.search(search.value), 120);
    });
    search.addEventListener('keydown', event => {
      if (event.key === 'Enter') {
        window.clearTimeout(timer);
        this.search(search.value);
      }
    });
    this.foundCount = el('span', 'leapp-graph-found');
    const button = (action: string, label: string, title: string): HTMLButtonElement => {
      const node = el('button', 'leapp-graph-button', label);
      node.type = 'button';
      node.title = title;
      node.dataset.leappAction = action;
      return node;
    };
    bar.append(
      search,
      this.foundCount,
      button('fold-all', 'Fold all', 'fold every group to its hazards'),
      button('unfold-all', 'Unfold all', 'draw every op'),
      button('zoom-in', '+', 'zoom in (or Ctrl + wheel)'),
      button('zoom-out', '−', 'zoom out'),
      button('fit', 'Fit', 'fit the whole graph in the view')
    );
    bar.addEventListener('click', event => {
      const action = (event.target as HTMLElement).closest('button')?.dataset.leappAction;
      if (action === 'fold-all' || action === 'unfold-all') {
        this.collapse = action === 'fold-all';
        this.modes.clear();
        void this.draw();
      } else if (action === 'zoom-in' || action === 'zoom-out') {
        this.zoom(action === 'zoom-in' ? 1.25 : 0.8);
      } else if (action === 'fit') {
        this.moved = false;
        this.fit(true);
      }
    });
    return bar;
  }

  private search(query: string): void {
    const words = query.trim().toLowerCase();
    this.found = new Set();
    if (words) {
      for (const node of this.model.nodes) {
        for (const vertex of node.vertices) {
          // (a baked constant is found by the call that made it: its origin, "np.interp at line 4")
          const haystack = [vertex.name, vertex.numpy, vertex.torch, vertex.dtype, vertex.helper, vertex.origin,
            vertex.module?.name ?? '', vertex.module?.type ?? '',
            vertex.line === null ? '' : `line ${vertex.line}`].join(' ').toLowerCase();
          const byLine = /^\d+$/.test(words) && vertex.line === Number(words);
          if (byLine || haystack.includes(words)) {
            this.found.add(vertex.id);
          }
        }
      }
    }
    this.foundCount.textContent = words ? `${this.found.size} found` : '';
    this.refresh();
  }

  private listen(): void {
    let drag: { x: number; y: number; tx: number; ty: number; moved: boolean } | null = null;
    this.viewport.addEventListener('pointerdown', event => {
      if (event.button !== 0) {
        return;
      }
      drag = { x: event.clientX, y: event.clientY, tx: this.tx, ty: this.ty, moved: false };
    });
    this.viewport.addEventListener('pointermove', event => {
      if (drag) {
        const dx = event.clientX - drag.x;
        const dy = event.clientY - drag.y;
        if (!drag.moved && Math.hypot(dx, dy) > 4) {
          drag.moved = true;
          this.viewport.setPointerCapture(event.pointerId);
          this.viewport.classList.add('leapp-graph-dragging');
        }
        if (drag.moved) {
          this.moved = true;
          this.tx = drag.tx + dx;
          this.ty = drag.ty + dy;
          this.place();
        }
      }
      this.hover(event);
    });
    const end = (event: PointerEvent): void => {
      if (drag?.moved) {
        this.dragged = true;
        this.viewport.releasePointerCapture(event.pointerId);
      }
      drag = null;
      this.viewport.classList.remove('leapp-graph-dragging');
    };
    this.viewport.addEventListener('pointerup', end);
    this.viewport.addEventListener('pointercancel', end);
    this.viewport.addEventListener('pointerleave', () => (this.card.hidden = true));
    this.viewport.addEventListener(
      'wheel',
      event => {
        // A plain wheel scrolls the notebook; Ctrl/⌘ + wheel (and pinch) zooms the graph.
        if (event.ctrlKey || event.metaKey) {
          event.preventDefault();
          const rect = this.viewport.getBoundingClientRect();
          this.zoom(Math.exp(-event.deltaY / 300), event.clientX - rect.left, event.clientY - rect.top);
        }
      },
      { passive: false }
    );
    this.viewport.addEventListener('click', event => {
      if (this.dragged) {
        this.dragged = false;
        return;
      }
      this.activate(event.target as Element);
    });
    this.viewport.addEventListener('keydown', event => {
      if (event.key === 'Enter' || event.key === ' ') {
        event.preventDefault();
        this.activate(event.target as Element);
      }
    });
    this.viewport.addEventListener('focusin', event => this.hover(event));
  }

  /** A click (or Enter) on a vertex, a folded box or an open cluster's frame. */
  private activate(target: Element): void {
    const vertexElement = target.closest('[data-leapp-node]');
    const foldElement = target.closest('[data-leapp-fold]');
    const clusterElement = target.closest('[data-leapp-cluster]');
    if (vertexElement && this.drawing) {
      const vertex = this.drawing.vertices.get(vertexElement.getAttribute('data-leapp-dot') ?? '');
      if (vertex) {
        this.selected = new Set([vertex.id]);
        this.applyMarks();
        if (vertex.line !== null) {
          this.node.dispatchEvent(
            new CustomEvent('leapp:goto-line', { bubbles: true, detail: { line: vertex.line } })
          );
        }
      }
    } else if (foldElement && this.drawing) {
      const item = this.drawing.folds.get(foldElement.getAttribute('data-leapp-dot') ?? '');
      if (item) {
        this.unfold(item);
      }
    } else if (clusterElement && this.drawing) {
      const item = [...this.drawing.clusters.values()].find(
        cluster => cluster.id === clusterElement.getAttribute('data-leapp-cluster')
      );
      if (item) {
        for (const group of item.groups) {
          this.modes.set(group.id, 'folded');
        }
        void this.draw();
      }
    }
  }

  /** A run of several groups splits into one box per group; a single group opens. */
  private unfold(item: IFoldItem): void {
    const mode: FoldMode = item.groups.length > 1 ? 'folded' : 'open';
    for (const group of item.groups) {
      this.modes.set(group.id, mode);
    }
    void this.draw();
  }

  private hover(event: Event): void {
    const target = event.target as Element;
    const vertexElement = target.closest?.('[data-leapp-node]');
    const foldElement = target.closest?.('[data-leapp-fold]');
    if (!this.drawing || (!vertexElement && !foldElement)) {
      this.card.hidden = true;
      return;
    }
    const name = (vertexElement ?? foldElement)!.getAttribute('data-leapp-dot') ?? '';
    const vertex = this.drawing.vertices.get(name);
    const fold = this.drawing.folds.get(name);
    const lines = vertex ? cardLines(this.model, vertex) : fold ? foldLines(fold) : [];
    const [title, ...rest] = lines;
    this.card.replaceChildren(el('div', 'leapp-graph-card-title', title ?? ''), ...rest.map(line => el('div', '', line)));
    this.card.hidden = false;
    const host = this.node.getBoundingClientRect();
    const anchor = (vertexElement ?? foldElement)!.getBoundingClientRect();
    const left = Math.min(anchor.right - host.left + 8, Math.max(0, host.width - 340));
    this.card.style.left = `${Math.max(0, left)}px`;
    this.card.style.top = `${anchor.top - host.top}px`;
  }

  private hazardsOf(vertex: IVertex): IHazard[] {
    return vertex.hazards.map(id => this.model.hazards.find(h => h.id === id)).filter((h): h is IHazard => !!h);
  }

  /** The looks the model's legend lists, then one entry per hazard kind in the hazard list. */
  private legend(): HTMLElement {
    const legend = el('div', 'leapp-graph-legend');
    for (const look of this.model.looks.values()) {
      const entry = el('span', 'leapp-legend-entry');
      entry.dataset.leappLegend = look.category;
      const swatch = el('span', 'leapp-legend-swatch', `${look.icon} ${look.tag}`.trim() || ' ');
      // CSSOM assignments: an invalid colour from the model is dropped, never parsed as markup.
      swatch.style.backgroundColor = look.fill;
      swatch.style.borderColor = look.border;
      entry.append(swatch, el('span', '', look.label));
      legend.append(entry);
    }
    const kinds = new Map<string, IHazard>();
    for (const hazard of this.model.hazards) {
      const key = `${hazard.severity} ${hazard.kind}`;
      if (!kinds.has(key)) {
        kinds.set(key, hazard);
      }
    }
    for (const hazard of kinds.values()) {
      const entry = el('span', `leapp-legend-entry leapp-legend-kind leapp-legend-${hazard.severity}`);
      entry.dataset.leappLegendKind = hazard.kind;
      entry.dataset.leappSeverity = hazard.severity;
      const look = this.model.looks.get(hazard.category);
      const swatch = el('span', 'leapp-legend-swatch', hazard.severity === 'error' ? '✖' : '⚠');
      swatch.style.borderColor = look?.border ?? '';
      entry.append(swatch, el('span', '', `${hazard.kind} (${hazard.severity}${hazard.severity === 'error' ? ': heavy border' : ': dashed border'})`));
      legend.append(entry);
    }
    const probed = this.model.nodes.flatMap(node => node.vertices).filter(v => v.probe);
    if (probed.some(v => !v.probe!.passed)) {
      const entry = el('span', 'leapp-legend-entry leapp-legend-probe-failed');
      entry.dataset.leappLegend = 'probe-failed';
      entry.append(el('span', 'leapp-legend-swatch', '✖ PROBE FAILED'), el('span', '', 'output failed the probe (red outline)'));
      legend.append(entry);
    }
    if (this.model.nodes.some(node => node.edges.some(edge => edge.kind === 'not-recorded'))) {
      const entry = el('span', 'leapp-legend-entry');
      entry.append(el('span', 'leapp-legend-swatch leapp-legend-not-recorded', '- - -▸'), el('span', '', 'computed outside the graph (not recorded)'));
      legend.append(entry);
    }
    return legend;
  }

  private collapse: boolean;
  private readonly modes = new Map<string, FoldMode>();
  private selected = new Set<string>();
  private found = new Set<string>();
  private drawing: IDrawing | null = null;
  private drawToken = 0;
  private size = { width: 400, height: 300 };
  private scale = 1;
  private tx = 0;
  private ty = 0;
  private dragged = false;
  /** The user panned or zoomed: keep their view when the width changes. */
  private moved = false;
  private readonly toolbar: HTMLElement;
  private readonly viewport: HTMLElement;
  private readonly canvas: HTMLElement;
  private readonly card: HTMLElement;
  private readonly status: HTMLElement;
  private foundCount!: HTMLElement;
  private readonly resizing: ResizeObserver;
}

/** The hover card of a vertex: title, then NumPy call, torch op, shape, dtype, value, line, hazards. */
export function cardLines(model: ITraceModel, vertex: IVertex): string[] {
  const lines: string[] = [];
  const role = { input: 'input', output: 'output', constant: vertex.constant === 'baked' ? 'baked constant' : 'constant' }[
    vertex.role
  ];
  lines.push(role ? `${role} ${vertex.name}` : vertex.role === 'module' ? moduleLabel(vertex) : vertex.numpy || vertex.name);
  if (vertex.role === 'module' && vertex.module) {
    lines.push(`nn.Module ${vertex.module.type}, called as one node: its weights stay parameters`);
    if (vertex.module.ops.length) {
      lines.push(`inside: ${vertex.module.ops.join(', ')}`);
    }
  } else if (vertex.role === 'collapsed') {
    lines.push(`${vertex.hidden} vertices folded in this output (trace.save_graph_model writes them all)`);
  } else if (vertex.role === 'op') {
    lines.push(`NumPy: ${vertex.numpy}`);
    lines.push(`torch: ${vertex.torch}${vertex.cast || vertex.torch === 'Tensor.to' ? ` (cast to ${vertex.dtype})` : ''}`);
  } else if (vertex.role === 'constant' && vertex.origin) {
    lines.push(`from: ${vertex.origin}`);
  }
  lines.push(`shape: ${vertex.shape || '?'}`, `dtype: ${vertex.dtype || '?'}`);
  if (vertex.role === 'constant') {
    lines.push(`value: ${previewText(vertex.preview)}${vertex.constant === 'baked' ? ' (frozen at trace time)' : ''}`);
  } else if (vertex.role === 'output') {
    lines.push(`value: ${probeText(vertex) || 'not probed yet'}`);
  } else if (vertex.role === 'op') {
    lines.push(`value: ${vertex.shape && vertex.shape !== '()' ? 'a tensor' : 'a scalar'} computed by the graph at run time`);
  }
  if (vertex.line !== null) {
    const code = (model.source.split('\n')[vertex.line - 1] ?? '').trim();
    lines.push(`line ${vertex.line}${code ? `: ${code}` : ''}`);
  }
  if (vertex.helper) {
    lines.push(`in ${vertex.helper}()${vertex.location ? ` at ${vertex.location}` : ''}`);
  }
  for (const id of vertex.hazards) {
    const hazard = model.hazards.find(h => h.id === id);
    if (hazard) {
      lines.push(`${hazard.severity === 'error' ? '✖' : '⚠'} ${hazard.kind}: ${hazard.message}`);
    }
  }
  if (vertex.probeBaked.length) {
    lines.push(`✖ probe: ${vertex.probeBaked.join(', ')} should follow the input`);
  }
  return lines;
}

function foldLines(item: IFoldItem): string[] {
  const ops = item.hidden.filter(v => v.role === 'op').length;
  const calls = new Map<string, number>();
  for (const vertex of item.hidden) {
    if (vertex.role === 'op') {
      calls.set(vertex.numpy, (calls.get(vertex.numpy) ?? 0) + 1);
    }
  }
  const top = [...calls].sort((a, b) => b[1] - a[1]).slice(0, 6).map(([name, n]) => `${name} ×${n}`);
  return [
    `${item.label}`,
    `${plural(ops, 'op')} folded${item.groups.length > 1 ? ` in ${item.groups.length} groups` : ''}`,
    ...top,
    'click to unfold'
  ];
}

/** The compact fallback when Graphviz cannot run in this browser and the bundle has no SVG. */
export function vertexList(model: ITraceModel, node: IGraphNode): HTMLElement {
  const names = new Map(node.vertices.map(vertex => [vertex.id, vertex.name]));
  const nameOf = (id: string): string => names.get(id) ?? id;
  const section = el('div', 'leapp-trace-node');
  section.append(el('div', 'leapp-trace-node-name', `node '${node.name}'`));
  const items = el('ol', 'leapp-trace-vertices');
  for (const vertex of node.vertices) {
    const look = model.looks.get(vertex.category);
    const item = el('li', `leapp-vertex leapp-vertex-${vertex.category}`);
    const mark = look && (look.icon || look.tag) ? `${look.icon} ${look.tag}`.trim() : '';
    if (mark) {
      const tag = el('span', 'leapp-vertex-tag', mark);
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
      item.append(el('span', 'leapp-vertex-not-recorded', `⇠ from ${inputs.notRecorded.map(nameOf).join(', ')}, not recorded`));
    }
    items.append(item);
  }
  section.append(items);
  return section;
}
