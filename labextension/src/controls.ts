/**
 * The Probe/Export controls of a `%%leapp_trace` output, when the notebook is reopened.
 *
 * The controls are an ipywidgets widget. In a saved notebook whose kernel is gone (or restarted), its model
 * no longer exists, and JupyterLab's widget renderer would show "Error displaying widget: model not
 * found" (or "Loading widget..." for good). The kernel also writes `application/vnd.leapp.controls+json`
 * beside the widget view; this renderer, ranked before the widget manager's, shows the controls disabled with
 * "re-run the cell to probe or export", and swaps in the live widget as soon as it renders a real view.
 */
import { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import { Panel, Widget } from '@lumino/widgets';

export const CONTROLS_MIME_TYPE = 'application/vnd.leapp.controls+json';
export const WIDGET_MIME_TYPE = 'application/vnd.jupyter.widget-view+json';
/** Before the widget manager's -10: JupyterLab renders the lowest rank among the bundle's types. */
export const CONTROLS_RANK = -20;
const GONE = /model not found/i;
const LOADING = /^\s*Loading widget/i;

/** What creates the widget view's own renderer: a notebook's rendermime registry. */
export interface IRendererSource {
  readonly mimeTypes: ReadonlyArray<string>;
  createRenderer(mimeType: string): IRenderMime.IRenderer;
}

interface IControls {
  probe?: { n?: unknown; seed?: unknown };
  export?: { directory?: unknown };
  message?: unknown;
}

function el<K extends keyof HTMLElementTagNameMap>(tag: K, className = '', text = ''): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  node.className = className;
  node.textContent = text;
  return node;
}

function field(label: string, value: unknown): HTMLElement {
  const wrap = el('label', 'leapp-controls-field', `${label} `);
  const input = el('input');
  input.value = value === null || value === undefined ? '' : String(value);
  input.disabled = true;
  wrap.append(input);
  return wrap;
}

/** The controls drawn disabled, with the reason (textContent only: no markup from the output). */
export function inactiveControls(data: IControls): HTMLElement {
  const box = el('div', 'leapp-controls leapp-controls-inactive');
  const probe = el('div', 'leapp-controls-row');
  probe.append(el('b', '', 'Probe '), field('probes', data.probe?.n), field('seed', data.probe?.seed));
  const probeButton = el('button', '', 'Probe');
  probeButton.disabled = true;
  probe.append(probeButton);
  const exportRow = el('div', 'leapp-controls-row');
  exportRow.append(el('b', '', 'Export '), field('directory', data.export?.directory));
  const exportButton = el('button', '', 'Export');
  exportButton.disabled = true;
  exportRow.append(exportButton);
  const message = typeof data.message === 'string' && data.message ? data.message : 're-run the cell to probe or export';
  box.append(probe, exportRow, el('div', 'leapp-controls-message', message));
  return box;
}

export class ControlsView extends Panel implements IRenderMime.IRenderer {
  constructor(
    private readonly source: IRendererSource,
    private readonly mimeType: string
  ) {
    super();
    this.addClass('leapp-controls-output');
  }

  async renderModel(model: IRenderMime.IMimeModel): Promise<void> {
    const data = (model.data[this.mimeType] ?? {}) as IControls;
    this.clear();
    const inactive = new Widget({ node: inactiveControls(data) });
    this.addWidget(inactive);
    if (model.data[WIDGET_MIME_TYPE] === undefined || !this.source.mimeTypes.includes(WIDGET_MIME_TYPE)) {
      return;
    }
    // The live widget is rendered hidden and shown once it is a real view: while the widget manager says
    // "Loading widget..." (no kernel yet, or one that never had this model) or "model not found", the
    // disabled controls stay.
    const live = this.source.createRenderer(WIDGET_MIME_TYPE);
    live.hide();
    this.addWidget(live);
    let shown = false;
    const settle = () => {
      if (shown) {
        // The kernel restarted or died: ipywidgets marks the views disconnected (a broken-link icon on each), and
        // a click would throw "Cannot send". The disabled controls come back, saying why.
        if (live.node.querySelector('.jupyter-widgets-disconnected') || live.node.matches('.jupyter-widgets-disconnected')) {
          watch.disconnect();
          live.dispose();
          this.addWidget(
            new Widget({ node: inactiveControls({ ...data, message: 'the kernel restarted: re-run the cell to probe or export' }) })
          );
        }
        return;
      }
      const text = live.node.textContent ?? '';
      if (GONE.test(text)) {
        watch.disconnect();
      } else if (!LOADING.test(text) && live.node.childElementCount > 0) {
        shown = true;
        inactive.dispose();
        live.show();
      }
    };
    const watch = new MutationObserver(settle);
    watch.observe(live.node, { childList: true, subtree: true, characterData: true, attributes: true,
                               attributeFilter: ['class'] });
    this.disconnectWatch = () => watch.disconnect();
    await live.renderModel(model);
    settle();
  }

  dispose(): void {
    this.disconnectWatch();
    super.dispose();
  }

  private clear(): void {
    this.disconnectWatch();
    for (const widget of [...this.widgets]) {
      widget.dispose();
    }
  }

  private disconnectWatch: () => void = () => undefined;
}

/** The renderer factory for one notebook's rendermime registry. */
export function controlsFactory(source: IRendererSource): IRenderMime.IRendererFactory {
  return {
    safe: true,
    mimeTypes: [CONTROLS_MIME_TYPE],
    createRenderer: options => new ControlsView(source, options.mimeType)
  };
}
