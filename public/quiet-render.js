// quiet-render.js: vugu 0.4's renderer (window.vuguRender) writes every
// text node, attribute and inner HTML of the page on every render,
// changed or not, and each write makes the browser recompute style and
// layout for it: on the Mooncake trace a scrub of the pass view rewrote
// about 2,000 nodes of the request table, the config form and the
// placement table, none of them changed (docs/ui.md, "Renders write only
// what changed"). kvsimQuietRender wraps vuguRender so that, while it
// runs, a text, attribute or inner HTML equal to what the node holds is
// left alone. Outside vuguRender nothing changes. main.wasm calls it once
// vugu has defined vuguRender.
window.kvsimQuietRender = function () {
  const render = window.vuguRender;
  if (typeof render !== 'function' || render.kvsimQuiet) {
    return;
  }
  const text = Object.getOwnPropertyDescriptor(Node.prototype, 'textContent');
  const html = Object.getOwnPropertyDescriptor(Element.prototype, 'innerHTML');
  const setAttribute = Element.prototype.setAttribute;
  let rendering = false;
  Object.defineProperty(Text.prototype, 'textContent', {
    configurable: true,
    get: text.get,
    set(v) {
      if (!rendering || this.data !== String(v)) {
        text.set.call(this, v);
      }
    },
  });
  // An element's inner HTML reads back as the browser serialises it,
  // which may differ from what was set (vugu escapes quotes in text), so
  // it is compared with what the last render set and what that left.
  const lastHTML = new WeakMap();
  Object.defineProperty(Element.prototype, 'innerHTML', {
    configurable: true,
    get: html.get,
    set(v) {
      if (!rendering) {
        html.set.call(this, v);
        return;
      }
      v = String(v);
      const last = lastHTML.get(this);
      const now = html.get.call(this);
      if (now === v || (last && last.set === v && last.left === now)) {
        return;
      }
      html.set.call(this, v);
      lastHTML.set(this, {set: v, left: html.get.call(this)});
    },
  });
  Element.prototype.setAttribute = function (name, value) {
    if (rendering && this.getAttribute(name) === String(value)) {
      return;
    }
    setAttribute.call(this, name, value);
  };
  const quiet = function () {
    rendering = true;
    try {
      return render.apply(this, arguments);
    } finally {
      rendering = false;
    }
  };
  quiet.kvsimQuiet = true;
  window.vuguRender = quiet;
};
