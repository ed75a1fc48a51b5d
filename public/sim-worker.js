// sim-worker.js runs sim.wasm (the kvsim bridge, wasm/) off the page's main
// thread. Every message, both ways, is an envelope {json, bin?, text?}: json
// is one wasm/proto Request or Reply, encoded once; bin and text hold the
// Uint8Arrays and strings it names (docs/ui.md, "How the page and the
// worker talk"). The page first posts the init request with the compiled
// sim.wasm beside it ({json, module}); the worker answers "ready", then
// serves requests with kvsimHandle, which posts progress replies while a
// job runs and returns one reply per request. Cancelling a job means
// terminating this worker (the page starts another).
importScripts('../wasm_exec.js');

let ready = null;

// reply posts an envelope; its binary payloads move instead of being copied.
function reply(env) {
  const transfer = Array.isArray(env.bin) ? env.bin.map((b) => b.buffer) : [];
  postMessage(env, transfer);
}

// failure is the reply to a request that kvsimHandle could not answer (an
// exception here, or sim.wasm that did not start): the reply type of the
// request's op, with the error.
function failure(m, err) {
  let op = '', id = 0;
  try {
    const r = JSON.parse(m.json);
    op = r.op || '';
    id = r.id || 0;
  } catch (e) { /* not a request: answer as a failed run */ }
  const type = { run: 'result', check: 'checked', file: 'file', index: 'index', seek: 'frame', init: 'ready' }[op] || op || 'result';
  return { json: JSON.stringify({ type, id, error: { kind: 'internal', msg: String(err) } }) };
}

function start(module) {
  const go = new Go();
  const instance = module
    ? WebAssembly.instantiate(module, go.importObject)
    : fetch('../sim.wasm').then((r) => r.arrayBuffer())
        .then((b) => WebAssembly.instantiate(b, go.importObject)).then((r) => r.instance);
  ready = instance.then((inst) => {
    go.run(inst); // main registers kvsimHandle, then parks
    // the ready reply carries what the page needs before any run (the
    // connector profiles' policies)
    let r;
    try {
      r = self.kvsimHandle({ json: JSON.stringify({ op: 'init', id: 0 }) });
      delete r.next;
    } catch (e) {
      r = { json: JSON.stringify({ type: 'ready', id: 0 }) };
    }
    reply(r);
  });
  ready.catch((e) => reply(failure({ json: '{"op":"run"}' }, 'sim.wasm did not start: ' + e)));
}

// After a run that kept per-pass records, the worker indexes their passes
// for the timeline in steps of about 15 ms, yielding between steps so that
// the page's seeks are answered meanwhile. A reply's "next" names the run
// to index (the bridge sets it on every run reply, 0 for none, and on each
// index reply but the last); a newer run stops the loop.
let indexing = 0;
const tick = new MessageChannel();
tick.port1.onmessage = () => {
  const id = indexing;
  if (!id) return;
  const m = { json: JSON.stringify({ op: 'index', id, index: {} }) };
  let r;
  try {
    r = self.kvsimHandle(m);
  } catch (err) {
    r = failure(m, err);
  }
  const next = r.next;
  delete r.next;
  reply(r);
  if (next === id && indexing === id) {
    tick.port2.postMessage(0);
  } else if (indexing === id) {
    indexing = 0;
  }
};

onmessage = async (e) => {
  const m = e.data;
  if (m && m.module) {
    start(m.module);
    return;
  }
  if (!ready) start(null);
  await ready;
  let out;
  try {
    out = self.kvsimHandle(m, (p) => reply(p));
  } catch (err) {
    out = failure(m, err);
  }
  const next = out.next;
  delete out.next;
  reply(out);
  if (next !== undefined) {
    indexing = next;
    if (indexing) tick.port2.postMessage(0);
  }
};
