"use strict";(self.rspackChunkleapp_notebook=self.rspackChunkleapp_notebook||[]).push([[700],{646(e,a,r){var o=r(601),p=r.n(o),t=r(314),l=(r.n(t))()(p());l.push([e.id,`/* leapp_notebook: trace renderer (output area) and hazard marks (cell editors).
   Colours come from the JupyterLab theme variables so dark themes stay readable; every colour is
   paired with an icon or a word (✖ error, ⚠ warning). */

.leapp-trace {
  --leapp-error: var(--jp-error-color1, #d32f2f);
  --leapp-warning: var(--jp-warn-color1, #f57c00);
  --leapp-ok: var(--jp-success-color1, #388e3c);
  --leapp-selected: #2563eb;

  font-family: var(--jp-ui-font-family);
  font-size: var(--jp-ui-font-size1);
  color: var(--jp-ui-font-color1);
  padding: 4px 0;
  min-width: 0;
  max-width: 100%;
  position: relative;

  /* The hazard table reflows by the output's width, not the window's (side bars, split views). */
  container: leapp-trace / inline-size;
}

.leapp-trace-summary {
  display: flex;
  flex-wrap: wrap;
  align-items: baseline;
  gap: 0.75em;
  margin-bottom: 6px;
}

.leapp-trace-status {
  font-weight: 600;
  padding: 1px 8px;
  border-radius: 3px;
  border: 1px solid currentcolor;
}

.leapp-trace-error .leapp-trace-status {
  color: var(--leapp-error);
}

.leapp-trace-warning .leapp-trace-status {
  color: var(--leapp-warning);
}

.leapp-trace-ok .leapp-trace-status {
  color: var(--leapp-ok);
}

.leapp-trace-counts {
  color: var(--jp-ui-font-color2);
}

/* The hazard table fits the output width (no sideways scroll, even at 1024 px with the side bar open):
   a fixed layout with set widths for the short columns; code, message and fix wrap. */
.leapp-trace-hazards {
  border-collapse: collapse;
  table-layout: fixed;
  width: 100%;
  margin-bottom: 8px;
}

.leapp-col-severity {
  width: 6em;
}

.leapp-col-kind {
  width: 9em;
}

.leapp-col-line {
  width: 3.4em;
}

.leapp-col-code {
  width: 25%;
}

.leapp-trace-hazards th,
.leapp-trace-hazards td {
  text-align: left;
  vertical-align: top;
  padding: 4px 6px;
  border-bottom: 1px solid var(--jp-border-color2);
  overflow-wrap: anywhere;
  word-break: normal;
}

.leapp-trace-hazards th {
  font-weight: 600;
  border-bottom-width: 2px;
}

.leapp-trace-hazards code {
  font-family: var(--jp-code-font-family);
  font-size: var(--jp-code-font-size);
  white-space: pre-wrap;
  overflow-wrap: anywhere;
}

.leapp-hazard-location {
  margin-top: 2px;
  font-size: 0.85em;
  color: var(--jp-ui-font-color2);
  overflow-wrap: anywhere;
}

.leapp-hazard-row {
  cursor: pointer;
}

.leapp-hazard-row:hover {
  background: var(--jp-layout-color2);
}

.leapp-hazard-row[data-leapp-selected] {
  /* a tint over the theme's own background: readable under its text in light and dark themes alike
     (the brand colour was a light blue under the dark theme's white text) */
  background: rgb(37 99 235 / 18%);
  outline: 2px solid var(--leapp-selected);
  outline-offset: -2px;
}

.leapp-hazard-row-error {
  box-shadow: inset 3px 0 0 var(--leapp-error);
}

.leapp-hazard-row-warning {
  box-shadow: inset 3px 0 0 var(--leapp-warning);
}

.leapp-hazard-row-error .leapp-hazard-severity {
  color: var(--leapp-error);
  font-weight: 600;
}

.leapp-hazard-row-warning .leapp-hazard-severity {
  color: var(--leapp-warning);
  font-weight: 600;
}

.leapp-hazard-message,
.leapp-hazard-fix {
  line-height: 1.4;
}

/* Narrow outputs: each hazard becomes a block (severity, kind and line on one line; then code,
   message and fix at full width), so nothing is squeezed into a few characters per line. */
@container leapp-trace (max-width: 760px) {
  .leapp-trace-hazards,
  .leapp-trace-hazards tbody,
  .leapp-trace-hazards td {
    display: block;
    width: auto;
  }

  .leapp-trace-hazards thead,
  .leapp-trace-hazards colgroup {
    display: none;
  }

  .leapp-trace-hazards tr {
    display: grid;
    grid-template-columns: auto auto 1fr;
    column-gap: 10px;
    padding: 4px 0 6px 8px;
    border-bottom: 1px solid var(--jp-border-color2);
  }

  .leapp-trace-hazards td {
    border: none;
    padding: 2px 4px;
  }

  .leapp-hazard-code,
  .leapp-hazard-message,
  .leapp-hazard-fix {
    grid-column: 1 / -1;
  }

  .leapp-hazard-lineno:not(:empty)::before {
    content: 'line ';
  }

  .leapp-hazard-fix-text::before {
    content: 'Fix: ';
    font-weight: 600;
  }
}

.leapp-fix {
  display: flex;
  flex-wrap: wrap;
  align-items: baseline;
  gap: 6px;
  margin-top: 4px;
}

.leapp-fix-apply {
  font: inherit;
  font-size: var(--jp-ui-font-size0);
  padding: 1px 8px;
  border-radius: 3px;
  border: 1px solid var(--jp-brand-color1);
  background: var(--jp-layout-color1);
  color: var(--jp-brand-color1);
  cursor: pointer;
}

.leapp-fix-apply:hover {
  background: var(--jp-brand-color1);
  color: var(--jp-ui-inverse-font-color1);
}

.leapp-fix-status {
  color: var(--leapp-warning);
  font-size: var(--jp-ui-font-size0);
}

.leapp-trace-graph-section > summary {
  cursor: pointer;
  color: var(--jp-ui-font-color2);
  margin-bottom: 4px;
}

/* The live graph: toolbar, a pan-and-zoom viewport, the hover card and the legend. */
.leapp-trace-graph {
  position: relative;
}

.leapp-graph-toolbar {
  display: flex;
  flex-wrap: wrap;
  align-items: center;
  gap: 4px;
  margin-bottom: 4px;
}

.leapp-graph-search {
  font: inherit;
  width: 16em;
  max-width: 40%;
  padding: 2px 6px;
  color: var(--jp-ui-font-color1);
  background: var(--jp-input-background, var(--jp-layout-color1));
  border: 1px solid var(--jp-border-color1);
  border-radius: 3px;
}

.leapp-graph-found {
  color: var(--jp-ui-font-color2);
  min-width: 4em;
}

.leapp-graph-button {
  font: inherit;
  padding: 1px 8px;
  color: var(--jp-ui-font-color1);
  background: var(--jp-layout-color2);
  border: 1px solid var(--jp-border-color1);
  border-radius: 3px;
  cursor: pointer;
}

.leapp-graph-button:hover {
  background: var(--jp-layout-color3);
}

.leapp-graph-status {
  color: var(--jp-ui-font-color2);
  font-style: italic;
}

.leapp-graph-viewport {
  position: relative;
  overflow: hidden;
  border: 1px solid var(--jp-border-color2);
  border-radius: 3px;
  background: var(--jp-layout-color0);
  cursor: grab;
  touch-action: none;
}

.leapp-graph-viewport.leapp-graph-dragging {
  cursor: grabbing;
}

.leapp-graph-canvas {
  transform-origin: 0 0;
  width: max-content;
}

.leapp-graph-canvas svg {
  display: block;
}

.leapp-graph-canvas svg text {
  user-select: none;
}

/* Graphviz's default inks and white op boxes follow the theme. */
.leapp-graph-canvas text[fill='#111827'],
.leapp-graph-canvas text:not([fill]) {
  fill: var(--jp-ui-font-color1);
}

.leapp-graph-canvas text[fill='#4b5563'],
.leapp-graph-canvas text[fill='#374151'] {
  fill: var(--jp-ui-font-color2);
}

.leapp-graph-canvas polygon[fill='#ffffff'] {
  fill: var(--jp-layout-color1);
}

[data-jp-theme-light='false'] .leapp-graph-canvas g.node > polygon:not([fill='none']):not([fill='#ffffff']),
[data-jp-theme-light='false'] .leapp-graph-canvas g.node > path:not([fill='none']) {
  fill-opacity: 0.22;
}

/* Hazard and probe words drawn in the looks' dark inks: lighter on a dark background. */
[data-jp-theme-light='false'] .leapp-graph-canvas text[fill]:not([fill='#111827'], [fill='#4b5563'], [fill='#374151']) {
  filter: brightness(2.2);
}

[data-jp-theme-light='false'] .leapp-graph-canvas g.edge > path,
[data-jp-theme-light='false'] .leapp-graph-canvas g.edge > polygon {
  stroke: var(--jp-ui-font-color2);
}

.leapp-graph-canvas [data-leapp-node],
.leapp-graph-canvas [data-leapp-fold] {
  cursor: pointer;
}

.leapp-graph-canvas [data-leapp-cluster] > polygon,
.leapp-graph-canvas [data-leapp-cluster] > path,
.leapp-graph-canvas [data-leapp-cluster] > text {
  cursor: zoom-out;
}

.leapp-graph-canvas [data-leapp-node]:hover > polygon,
.leapp-graph-canvas [data-leapp-node]:hover > path,
.leapp-graph-canvas [data-leapp-fold]:hover > path,
.leapp-graph-canvas [data-leapp-fold]:hover > polygon,
.leapp-graph-canvas [data-leapp-node]:focus > polygon,
.leapp-graph-canvas [data-leapp-node]:focus > path {
  stroke-width: 3;
}

.leapp-graph-canvas [data-leapp-node]:focus,
.leapp-graph-canvas [data-leapp-fold]:focus {
  outline: none;
}

.leapp-graph-canvas [data-leapp-selected] > polygon,
.leapp-graph-canvas [data-leapp-selected] > path {
  stroke: var(--leapp-selected);
  stroke-width: 4.5;
}

.leapp-graph-canvas [data-leapp-found] > polygon,
.leapp-graph-canvas [data-leapp-found] > path {
  stroke: var(--jp-warn-color0, #e65100);
  stroke-width: 4;
  stroke-dasharray: 6 3;
}

.leapp-graph-card {
  position: absolute;
  z-index: 10;
  max-width: 320px;
  padding: 6px 8px;
  pointer-events: none;
  font-size: var(--jp-ui-font-size1);
  line-height: 1.4;
  color: var(--jp-ui-font-color1);
  background: var(--jp-layout-color1);
  border: 1px solid var(--jp-border-color1);
  border-radius: 4px;
  box-shadow: var(--jp-elevation-z4, 0 2px 6px rgb(0 0 0 / 25%));
  overflow-wrap: anywhere;
}

.leapp-graph-card > div:not(.leapp-graph-card-title) {
  font-family: var(--jp-code-font-family);
  font-size: var(--jp-code-font-size);
}

.leapp-graph-card-title {
  font-weight: 600;
  margin-bottom: 2px;
}

.leapp-graph-legend {
  display: flex;
  flex-wrap: wrap;
  gap: 4px 14px;
  margin-top: 6px;
  color: var(--jp-ui-font-color2);
  font-size: var(--jp-ui-font-size0);
}

.leapp-legend-entry {
  display: inline-flex;
  align-items: center;
  gap: 5px;
}

.leapp-legend-swatch {
  padding: 0 5px;
  border: 1.5px solid var(--jp-border-color1);
  border-radius: 3px;
  color: #111827;
  font-weight: 600;
  background: var(--jp-layout-color1);
}

.leapp-legend-error .leapp-legend-swatch {
  border-width: 2.5px;
  color: var(--leapp-error);
}

.leapp-legend-warning .leapp-legend-swatch {
  border-style: dashed;
  color: var(--leapp-warning);
}

.leapp-legend-probe-failed .leapp-legend-swatch {
  border: 2.5px solid #dc2626;
  color: #dc2626;
}

.leapp-legend-not-recorded {
  border: none;
  background: none;
  color: #b91c1c;
}

.leapp-trace-svg {
  display: block;
  max-width: 100%;
  height: auto;
  background: #fff;
}

.leapp-trace-node-name {
  font-weight: 600;
}

.leapp-trace-vertices {
  margin: 2px 0 6px;
  padding-left: 2.5em;
  font-family: var(--jp-code-font-family);
  font-size: var(--jp-code-font-size);
}

.leapp-vertex > span + span {
  margin-left: 0.6em;
}

.leapp-vertex-tag,
.leapp-vertex-name {
  font-weight: 600;
}

.leapp-vertex-detail,
.leapp-vertex-inputs {
  color: var(--jp-ui-font-color2);
}

.leapp-vertex-not-recorded {
  color: var(--jp-error-color1, #d32f2f);
}

/* Editor marks: an inset shadow draws the left border without shifting the line's text. */
.cm-line.leapp-hazard-error {
  box-shadow: inset 3px 0 0 var(--jp-error-color1, #d32f2f);
  background-color: rgb(211 47 47 / 12%);
}

.cm-line.leapp-hazard-warning {
  box-shadow: inset 3px 0 0 var(--jp-warn-color1, #f57c00);
  background-color: rgb(245 124 0 / 12%);
}

.cm-line.leapp-flash {
  animation: leapp-flash 1.5s ease-out;
}

@keyframes leapp-flash {
  0% {
    background-color: rgb(37 99 235 / 45%);
  }

  100% {
    background-color: transparent;
  }
}

.leapp-hazard-badge {
  display: inline-flex;
  align-items: baseline;
  gap: 6px;
  margin-left: 1.5em;
  padding: 0 6px;
  border-radius: 3px;
  border: 1px solid currentcolor;
  font-family: var(--jp-ui-font-family);
  font-size: var(--jp-ui-font-size0);
  user-select: none;
  /* On a line wider than the editor, the badge keeps to the visible part of the line (over the code it covers,
     opaque) instead of sitting past the editor's right edge. */
  position: sticky;
  right: 0;
  background: var(--jp-cell-editor-background, var(--jp-layout-color0));
}

.leapp-hazard-badge-label {
  cursor: pointer;
}

.leapp-hazard-badge .leapp-fix-apply {
  padding: 0 6px;
}

.leapp-hazard-badge-error {
  color: var(--jp-error-color1, #d32f2f);
}

.leapp-hazard-badge-warning {
  color: var(--jp-warn-color1, #f57c00);
}

/* The Probe/Export controls of a saved output whose widget model is gone (controls.ts). */
.leapp-controls-inactive {
  font-family: var(--jp-ui-font-family);
  font-size: var(--jp-ui-font-size1);
  color: var(--jp-ui-font-color1);
  border: 1px solid var(--jp-border-color2);
  border-radius: 3px;
  padding: 4px 8px;
  opacity: 0.85;
}

.leapp-controls-inactive .leapp-controls-row {
  margin: 2px 0;
}

.leapp-controls-inactive .leapp-controls-field {
  margin-right: 10px;
}

.leapp-controls-inactive .leapp-controls-message {
  color: var(--jp-ui-font-color2);
  margin-top: 2px;
}

/* The cell's text is not the traced text any more (an edit, an undone fix): what follows is the old text's. */
.leapp-trace[data-leapp-stale]::before {
  content: '⟳ the cell changed since this trace: the verdict, marks and graph below are the old text\\2019s. Re-run the cell before Probe or Export.';
  display: block;
  margin: 0 0 6px;
  padding: 4px 8px;
  border-left: 3px solid var(--jp-warn-color0, #f57c00);
  background: rgb(245 124 0 / 12%);
  color: var(--jp-ui-font-color0);
  font-size: var(--jp-ui-font-size1);
}

/* The last probe's and export's results, as the model holds them (a reopened notebook keeps them). */
.leapp-trace-probe,
.leapp-trace-export {
  margin: 6px 0 0;
  font-size: var(--jp-ui-font-size1);
  color: var(--jp-ui-font-color1);
  overflow-wrap: anywhere;
}

.leapp-trace-probe-passed > .leapp-trace-result-head,
.leapp-trace-export-written > .leapp-trace-result-head {
  color: var(--jp-success-color1, #15803d);
  font-weight: 600;
}

.leapp-trace-probe-failed > .leapp-trace-result-head,
.leapp-trace-export-refused > .leapp-trace-result-head {
  color: var(--jp-error-color1, #b91c1c);
  font-weight: 600;
  white-space: pre-wrap;
}

.leapp-trace-result-list {
  margin: 2px 0 0;
  padding-left: 20px;
  font-family: var(--jp-code-font-family);
  font-size: var(--jp-code-font-size);
}

/* While the kernel's live Probe/Export controls follow the trace, they print these results themselves. */
.jp-OutputArea:has(.jupyter-widgets .widget-button:not(:disabled)) .leapp-trace-probe,
.jp-OutputArea:has(.jupyter-widgets .widget-button:not(:disabled)) .leapp-trace-export {
  display: none;
}
`,""]),r.d(a,{},{A:l})},314(e){e.exports=function(e){var a=[];return a.toString=function(){return this.map(function(a){var r="",o=void 0!==a[5];return a[4]&&(r+="@supports (".concat(a[4],") {")),a[2]&&(r+="@media ".concat(a[2]," {")),o&&(r+="@layer".concat(a[5].length>0?" ".concat(a[5]):""," {")),r+=e(a),o&&(r+="}"),a[2]&&(r+="}"),a[4]&&(r+="}"),r}).join("")},a.i=function(e,r,o,p,t){"string"==typeof e&&(e=[[null,e,void 0]]);var l={};if(o)for(var n=0;n<this.length;n++){var i=this[n][0];null!=i&&(l[i]=!0)}for(var d=0;d<e.length;d++){var s=[].concat(e[d]);o&&l[s[0]]||(void 0!==t&&(void 0===s[5]||(s[1]="@layer".concat(s[5].length>0?" ".concat(s[5]):""," {").concat(s[1],"}")),s[5]=t),r&&(s[2]&&(s[1]="@media ".concat(s[2]," {").concat(s[1],"}")),s[2]=r),p&&(s[4]?(s[1]="@supports (".concat(s[4],") {").concat(s[1],"}"),s[4]=p):s[4]="".concat(p)),a.push(s))}},a}},601(e){e.exports=function(e){return e[1]}},72(e){var a=[];function r(e){for(var r=-1,o=0;o<a.length;o++)if(a[o].identifier===e){r=o;break}return r}function o(e,o){for(var p={},t=[],l=0;l<e.length;l++){var n=e[l],i=o.base?n[0]+o.base:n[0],d=p[i]||0,s="".concat(i," ").concat(d);p[i]=d+1;var c=r(s),h={css:n[1],media:n[2],sourceMap:n[3],supports:n[4],layer:n[5]};if(-1!==c)a[c].references++,a[c].updater(h);else{var f=function(e,a){var r=a.domAPI(a);return r.update(e),function(a){a?(a.css!==e.css||a.media!==e.media||a.sourceMap!==e.sourceMap||a.supports!==e.supports||a.layer!==e.layer)&&r.update(e=a):r.remove()}}(h,o);o.byIndex=l,a.splice(l,0,{identifier:s,updater:f,references:1})}t.push(s)}return t}e.exports=function(e,p){var t=o(e=e||[],p=p||{});return function(e){e=e||[];for(var l=0;l<t.length;l++){var n=r(t[l]);a[n].references--}for(var i=o(e,p),d=0;d<t.length;d++){var s=r(t[d]);0===a[s].references&&(a[s].updater(),a.splice(s,1))}t=i}}},659(e){var a={};e.exports=function(e,r){var o=function(e){if(void 0===a[e]){var r=document.querySelector(e);if(window.HTMLIFrameElement&&r instanceof window.HTMLIFrameElement)try{r=r.contentDocument.head}catch(e){r=null}a[e]=r}return a[e]}(e);if(!o)throw Error("Couldn't find a style target. This probably means that the value for the 'insert' parameter is invalid.");o.appendChild(r)}},540(e){e.exports=function(e){var a=document.createElement("style");return e.setAttributes(a,e.attributes),e.insert(a,e.options),a}},56(e,a,r){e.exports=function(e){var a=r.nc;a&&e.setAttribute("nonce",a)}},825(e){e.exports=function(e){if("u"<typeof document)return{update:function(){},remove:function(){}};var a=e.insertStyleElement(e);return{update:function(r){var o,p,t;o="",r.supports&&(o+="@supports (".concat(r.supports,") {")),r.media&&(o+="@media ".concat(r.media," {")),(p=void 0!==r.layer)&&(o+="@layer".concat(r.layer.length>0?" ".concat(r.layer):""," {")),o+=r.css,p&&(o+="}"),r.media&&(o+="}"),r.supports&&(o+="}"),(t=r.sourceMap)&&"u">typeof btoa&&(o+="\n/*# sourceMappingURL=data:application/json;base64,".concat(btoa(unescape(encodeURIComponent(JSON.stringify(t))))," */")),e.styleTagTransform(o,a,e.options)},remove:function(){var e;null===(e=a).parentNode||e.parentNode.removeChild(e)}}}},113(e){e.exports=function(e,a){if(a.styleSheet)a.styleSheet.cssText=e;else{for(;a.firstChild;)a.removeChild(a.firstChild);a.appendChild(document.createTextNode(e))}}},959(e,a,r){var o=r(72),p=r.n(o),t=r(825),l=r.n(t),n=r(659),i=r.n(n),d=r(56),s=r.n(d),c=r(540),h=r.n(c),f=r(113),u=r.n(f),g=r(646),v={};v.styleTagTransform=u(),v.setAttributes=s(),v.insert=i().bind(null,"head"),v.domAPI=l(),v.insertStyleElement=h(),p()(g.A,v),g.A&&g.A.locals&&g.A.locals}}]);