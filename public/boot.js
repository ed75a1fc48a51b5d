// boot.js starts the kvsim app (main.wasm, the vugu UI). The simulator
// itself runs in a Web Worker (sim-worker.js) that the app starts.
(function () {
  const mount = document.getElementById('vugu_mount_point');
  function fail(e) {
    mount.innerHTML = '';
    const p = document.createElement('p');
    p.className = 'boot-error';
    p.textContent = 'kvsim could not start: ' + e;
    mount.appendChild(p);
  }
  if (typeof WebAssembly !== 'object' || typeof Worker !== 'function') {
    fail('this browser lacks WebAssembly or Web Workers');
    return;
  }
  const go = new Go();
  fetch('main.wasm')
    .then((r) => { if (!r.ok) throw new Error('main.wasm: HTTP ' + r.status); return r.arrayBuffer(); })
    .then((b) => WebAssembly.instantiate(b, go.importObject))
    .then((r) => go.run(r.instance))
    .catch(fail);
})();
