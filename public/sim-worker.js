// sim-worker.js runs sim.wasm (the kvsim bridge, wasm/) off the page's main
// thread. The page posts {type: "init", module} with the compiled sim.wasm,
// then jobs ({op: "run" | "check", id, ...}); the worker answers with
// progress messages while a job runs and one result message per job.
// Cancelling a job means terminating this worker (the page starts another).
importScripts('../wasm_exec.js');

let ready = null;

function start(module) {
  const go = new Go();
  const instance = module
    ? WebAssembly.instantiate(module, go.importObject)
    : fetch('../sim.wasm').then((r) => r.arrayBuffer())
        .then((b) => WebAssembly.instantiate(b, go.importObject)).then((r) => r.instance);
  ready = instance.then((inst) => {
    go.run(inst); // main registers kvsimHandle, then parks
    postMessage({ type: 'ready' });
  });
  ready.catch((e) => postMessage({ type: 'result', id: 0, error: { kind: 'internal', msg: 'sim.wasm did not start: ' + e } }));
}

// After a run that kept per-pass records, the worker indexes their passes
// for the timeline in steps of about 15 ms, yielding between steps so that
// the page's seeks are answered meanwhile. A newer run stops the loop.
let indexing = 0;
const tick = new MessageChannel();
tick.port1.onmessage = () => {
  const id = indexing;
  if (!id) return;
  let r;
  try {
    r = self.kvsimHandle({ op: 'index', id });
  } catch (err) {
    r = { type: 'index', id, done: true, error: { kind: 'internal', msg: String(err) } };
  }
  postMessage(r);
  if (r.done) {
    if (indexing === id) indexing = 0;
  } else {
    tick.port2.postMessage(0);
  }
};

onmessage = async (e) => {
  const m = e.data;
  if (m && m.type === 'init') {
    start(m.module);
    return;
  }
  if (!ready) start(null);
  await ready;
  let out;
  try {
    out = self.kvsimHandle(m, (p) => postMessage(p));
  } catch (err) {
    out = { type: m && m.op === 'check' ? 'checked' : 'result', id: m && m.id, error: { kind: 'internal', msg: String(err) } };
  }
  postMessage(out);
  if (m && m.op === 'run') {
    indexing = out && out.index ? out.id : 0;
    if (indexing) tick.port2.postMessage(0);
  }
};
