"use strict";(self.rspackChunkleapp_notebook=self.rspackChunkleapp_notebook||[]).push([[700],{646(e,r,a){var o=a(601),t=a.n(o),n=a(314),p=(a.n(n))()(t());p.push([e.id,`/* leapp_notebook: trace renderer (output area) and hazard marks (cell editors).
   Colours come from the JupyterLab theme variables so dark themes stay readable; every colour is
   paired with an icon or a word (✖ error, ⚠ warning). */

.leapp-trace {
  --leapp-error: var(--jp-error-color1, #d32f2f);
  --leapp-warning: var(--jp-warn-color1, #f57c00);
  --leapp-ok: var(--jp-success-color1, #388e3c);

  font-family: var(--jp-ui-font-family);
  font-size: var(--jp-ui-font-size1);
  color: var(--jp-ui-font-color1);
  padding: 4px 0;
  overflow-x: auto;
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

.leapp-trace-hazards {
  border-collapse: collapse;
  width: 100%;
  margin-bottom: 8px;
}

.leapp-trace-hazards th,
.leapp-trace-hazards td {
  text-align: left;
  vertical-align: top;
  padding: 4px 8px;
  border-bottom: 1px solid var(--jp-border-color2);
}

.leapp-trace-hazards th {
  font-weight: 600;
  border-bottom-width: 2px;
}

.leapp-trace-hazards code {
  font-family: var(--jp-code-font-family);
  font-size: var(--jp-code-font-size);
  white-space: pre-wrap;
}

.leapp-hazard-row-error {
  box-shadow: inset 3px 0 0 var(--leapp-error);
}

.leapp-hazard-row-warning {
  box-shadow: inset 3px 0 0 var(--leapp-warning);
}

.leapp-hazard-severity,
.leapp-hazard-kind,
.leapp-hazard-line {
  white-space: nowrap;
}

.leapp-hazard-row-error .leapp-hazard-severity {
  color: var(--leapp-error);
  font-weight: 600;
}

.leapp-hazard-row-warning .leapp-hazard-severity {
  color: var(--leapp-warning);
  font-weight: 600;
}

.leapp-hazard-kind code {
  white-space: nowrap;
}

.leapp-hazard-code {
  min-width: 18em;
}

.leapp-hazard-message,
.leapp-hazard-fix {
  min-width: 16em;
  line-height: 1.4;
}

.leapp-trace-graph > summary {
  cursor: pointer;
  color: var(--jp-ui-font-color2);
  margin-bottom: 4px;
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

.leapp-hazard-badge {
  margin-left: 1.5em;
  padding: 0 6px;
  border-radius: 3px;
  border: 1px solid currentcolor;
  font-family: var(--jp-ui-font-family);
  font-size: var(--jp-ui-font-size0);
  cursor: help;
  user-select: none;
}

.leapp-hazard-badge-error {
  color: var(--jp-error-color1, #d32f2f);
}

.leapp-hazard-badge-warning {
  color: var(--jp-warn-color1, #f57c00);
}
`,""]),a.d(r,{},{A:p})},314(e){e.exports=function(e){var r=[];return r.toString=function(){return this.map(function(r){var a="",o=void 0!==r[5];return r[4]&&(a+="@supports (".concat(r[4],") {")),r[2]&&(a+="@media ".concat(r[2]," {")),o&&(a+="@layer".concat(r[5].length>0?" ".concat(r[5]):""," {")),a+=e(r),o&&(a+="}"),r[2]&&(a+="}"),r[4]&&(a+="}"),a}).join("")},r.i=function(e,a,o,t,n){"string"==typeof e&&(e=[[null,e,void 0]]);var p={};if(o)for(var i=0;i<this.length;i++){var l=this[i][0];null!=l&&(p[l]=!0)}for(var c=0;c<e.length;c++){var s=[].concat(e[c]);o&&p[s[0]]||(void 0!==n&&(void 0===s[5]||(s[1]="@layer".concat(s[5].length>0?" ".concat(s[5]):""," {").concat(s[1],"}")),s[5]=n),a&&(s[2]&&(s[1]="@media ".concat(s[2]," {").concat(s[1],"}")),s[2]=a),t&&(s[4]?(s[1]="@supports (".concat(s[4],") {").concat(s[1],"}"),s[4]=t):s[4]="".concat(t)),r.push(s))}},r}},601(e){e.exports=function(e){return e[1]}},72(e){var r=[];function a(e){for(var a=-1,o=0;o<r.length;o++)if(r[o].identifier===e){a=o;break}return a}function o(e,o){for(var t={},n=[],p=0;p<e.length;p++){var i=e[p],l=o.base?i[0]+o.base:i[0],c=t[l]||0,s="".concat(l," ").concat(c);t[l]=c+1;var d=a(s),u={css:i[1],media:i[2],sourceMap:i[3],supports:i[4],layer:i[5]};if(-1!==d)r[d].references++,r[d].updater(u);else{var f=function(e,r){var a=r.domAPI(r);return a.update(e),function(r){r?(r.css!==e.css||r.media!==e.media||r.sourceMap!==e.sourceMap||r.supports!==e.supports||r.layer!==e.layer)&&a.update(e=r):a.remove()}}(u,o);o.byIndex=p,r.splice(p,0,{identifier:s,updater:f,references:1})}n.push(s)}return n}e.exports=function(e,t){var n=o(e=e||[],t=t||{});return function(e){e=e||[];for(var p=0;p<n.length;p++){var i=a(n[p]);r[i].references--}for(var l=o(e,t),c=0;c<n.length;c++){var s=a(n[c]);0===r[s].references&&(r[s].updater(),r.splice(s,1))}n=l}}},659(e){var r={};e.exports=function(e,a){var o=function(e){if(void 0===r[e]){var a=document.querySelector(e);if(window.HTMLIFrameElement&&a instanceof window.HTMLIFrameElement)try{a=a.contentDocument.head}catch(e){a=null}r[e]=a}return r[e]}(e);if(!o)throw Error("Couldn't find a style target. This probably means that the value for the 'insert' parameter is invalid.");o.appendChild(a)}},540(e){e.exports=function(e){var r=document.createElement("style");return e.setAttributes(r,e.attributes),e.insert(r,e.options),r}},56(e,r,a){e.exports=function(e){var r=a.nc;r&&e.setAttribute("nonce",r)}},825(e){e.exports=function(e){if("u"<typeof document)return{update:function(){},remove:function(){}};var r=e.insertStyleElement(e);return{update:function(a){var o,t,n;o="",a.supports&&(o+="@supports (".concat(a.supports,") {")),a.media&&(o+="@media ".concat(a.media," {")),(t=void 0!==a.layer)&&(o+="@layer".concat(a.layer.length>0?" ".concat(a.layer):""," {")),o+=a.css,t&&(o+="}"),a.media&&(o+="}"),a.supports&&(o+="}"),(n=a.sourceMap)&&"u">typeof btoa&&(o+="\n/*# sourceMappingURL=data:application/json;base64,".concat(btoa(unescape(encodeURIComponent(JSON.stringify(n))))," */")),e.styleTagTransform(o,r,e.options)},remove:function(){var e;null===(e=r).parentNode||e.parentNode.removeChild(e)}}}},113(e){e.exports=function(e,r){if(r.styleSheet)r.styleSheet.cssText=e;else{for(;r.firstChild;)r.removeChild(r.firstChild);r.appendChild(document.createTextNode(e))}}},959(e,r,a){var o=a(72),t=a.n(o),n=a(825),p=a.n(n),i=a(659),l=a.n(i),c=a(56),s=a.n(c),d=a(540),u=a.n(d),f=a(113),h=a.n(f),v=a(646),m={};m.styleTagTransform=h(),m.setAttributes=s(),m.insert=l().bind(null,"head"),m.domAPI=p(),m.insertStyleElement=u(),t()(v.A,m),v.A&&v.A.locals&&v.A.locals}}]);