// sim-worker.js runs sim.wasm (the kvsim bridge, wasm/) off the page's main
// thread. Every message, both ways, is an envelope {json, bin?, text?}: json
// is one wasm/proto Request or Reply, encoded once; bin and text hold the
// Uint8Arrays and strings it names (docs/ui.md, "How the page and the
// worker talk"). The page first posts the init request with the compiled
// sim.wasm beside it ({json, module}); the worker answers "ready", then
// serves requests with kvsimHandle, which posts progress replies while a
// job runs and returns one reply per request. Cancelling a job means
// terminating this worker (the page starts another).
//
// The Go program can stop for good: it exits (a fatal error such as
// running out of memory), or a call into it throws (a wasm trap; the bridge
// itself never throws). Then this worker answers nothing any more but one
// "dead" reply naming the request it was serving, and the page replaces
// it (docs/ui.md, "When the worker dies"). A call that returns nothing
// (the program exited during it) counts as a death too, and a death after
// the runtime wrote "fatal error: out of memory" is of kind "memory".
// Every envelope this worker posts carries "mem", the byte size of its
// wasm memory, so the page can retire a worker that grew big.
importScripts('../wasm_exec.js');

let ready = null;
let dead = ''; // why the Go program stopped ('' while it runs)
let mem = null; // the Go program's WebAssembly.Memory
let oom = false; // the Go runtime wrote "fatal error: out of memory"

// memBytes is the size of the wasm memory (it never shrinks); every reply
// carries it as "mem", so the page can retire a worker that grew big.
function memBytes() {
  try {
    return mem ? mem.buffer.byteLength : 0;
  } catch (e) {
    return 0;
  }
}

// The Go runtime writes its fatal errors to stderr (fd 2) through
// globalThis.fs.writeSync, then exits: the worker watches for the
// out-of-memory one, to tell the page what happened.
{
  const write = globalThis.fs.writeSync;
  const dec = new TextDecoder();
  let tail = '';
  globalThis.fs.writeSync = function (fd, buf) {
    if (fd === 2) {
      tail = (tail + dec.decode(buf)).slice(-512);
      if (tail.includes('fatal error: out of memory')) oom = true;
    }
    return write.call(this, fd, buf);
  };
}

// A timer the Go runtime set before it exited (wasm_exec.js's
// scheduleTimeoutEvent) still fires, and resuming the exited program
// throws "Go program has already exited" uncaught. That throw is part of
// the death: it is not reported to the page as a worker failure of its
// own (which raced the "dead" reply and hid the out-of-memory message);
// a death no call saw is reported here.
self.addEventListener('error', (e) => {
  if (dead || /Go program has already exited/.test(String(e.message))) {
    die('the simulator exited', 0);
    e.preventDefault();
  }
});

// die posts the one "dead" reply; id is the request being served (0: none).
function die(why, id) {
  if (dead) return;
  dead = why;
  indexing = 0;
  const kind = oom ? 'memory' : 'internal';
  if (oom) why = 'fatal error: out of memory';
  reply({ json: JSON.stringify({ type: 'dead', id, error: { kind, msg: why } }) });
}

// requestID is the id of a request envelope (0 when it has none).
function requestID(m) {
  try {
    return JSON.parse(m.json).id || 0;
  } catch (e) {
    return 0;
  }
}

// reply posts an envelope; its binary payloads move instead of being copied.
function reply(env) {
  env.mem = memBytes();
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
    mem = inst.exports.mem;
    // main registers kvsimHandle, then parks; the promise settles only
    // when the Go program exits
    go.run(inst).then(() => die('the simulator exited', 0), (e) => die('the simulator stopped: ' + e, 0));
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
// the page's seeks are answered meanwhile; then, for a single long run, it
// warms the checkpoints of later window moves the same way. A reply's
// "next" names the run to index (the bridge sets it on every run reply, 0
// for none, and on each index reply but the last); a newer run stops the
// loop. "wait" delays the next step by that many milliseconds (the
// warm-up waits while the user scrubs), and a "quiet" reply is not posted
// to the page.
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
    die('the simulator stopped: ' + err, id);
    return;
  }
  if (!r || typeof r !== 'object') {
    // the Go program exited during the call
    die('the simulator exited', id);
    return;
  }
  const next = r.next, wait = r.wait || 0, quiet = r.quiet;
  delete r.next;
  delete r.wait;
  delete r.quiet;
  if (!quiet) reply(r);
  if (next === id && indexing === id) {
    if (wait > 0) {
      setTimeout(() => { if (indexing === id) tick.port2.postMessage(0); }, wait);
    } else {
      tick.port2.postMessage(0);
    }
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
  if (dead) return; // the page has been told and replaces this worker
  let out;
  try {
    out = self.kvsimHandle(m, (p) => reply(p));
  } catch (err) {
    die('the simulator stopped: ' + err, requestID(m));
    return;
  }
  if (!out || typeof out !== 'object') {
    // the Go program exited during the call (it returns undefined then)
    die('the simulator exited', requestID(m));
    return;
  }
  const next = out.next;
  delete out.next;
  reply(out);
  if (next !== undefined) {
    indexing = next;
    if (indexing) tick.port2.postMessage(0);
  }
};
