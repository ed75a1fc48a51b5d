// Per-request cost of the built Go worker outside wrangler (docs/worker.md).
// Like syumai's shim.mjs, every request gets a fresh WebAssembly instance and
// Go runtime; this times the two halves separately on Node's V8:
//   start  = new WebAssembly.Instance + go.run until the handler is ready
//   handle = the Go handler answering the request
// Usage (after build_worker): node worker/bench.mjs [runs]
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const runs = Number(process.argv[2] || 40);
await import(join(root, 'build/worker/wasm_exec.js')); // defines globalThis.Go
const mod = new WebAssembly.Module(readFileSync(join(root, 'build/worker/app.wasm')));

async function start() {
  const go = new Go();
  let ready;
  const isReady = new Promise((r) => { ready = r; });
  const instance = new WebAssembly.Instance(mod, { ...go.importObject, workers: { ready: () => ready() } });
  const binding = {};
  go.run(instance, { env: {}, ctx: { waitUntil() {}, passThroughOnException() {} }, connect: null, binding });
  await isReady;
  return binding;
}

const trace = (n) => readFileSync(join(root, 'traces', n), 'utf8');
const ho = 'engine.workers.aggregated.kv_cache.host_offload';
const json = (path, body) => () => new Request('http://127.0.0.1' + path, {
  method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
const cases = {
  'GET /api/health': () => new Request('http://127.0.0.1/api/health'),
  'POST /api/replay §B': json('/api/replay', { config: trace('g2-restore.yaml'), name: 'g2-restore.yaml', trace: trace('g2-restore.jsonl') }),
  'POST /api/replay §A 2048 simple_cpu_v0_32': json('/api/replay', { config: trace('connectors.yaml'), name: 'connectors.yaml',
    trace: trace('delta-sessions.jsonl'), set: [ho + '.num_host_blocks=2048', ho + '.connector=simple_cpu_v0_32'] }),
  'POST /api/sweep point 23 of 24': json('/api/sweep', { example: 'connectors.yaml', point: 23,
    vary: ['host_offload.num_host_blocks=64,128,192,256,384,512,1024,2048', 'connector=offloading_v0_24,offloading_v0_32,simple_cpu_v0_32'] }),
};

const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1].toFixed(1);
for (const [name, request] of Object.entries(cases)) {
  const s = [], h = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    const binding = await start();
    const t1 = performance.now();
    const res = await binding.handleRequest(request());
    const text = await res.text();
    const t2 = performance.now();
    if (res.status !== 200) throw new Error(`${name}: ${res.status} ${text}`);
    if (i > 0) { s.push(t1 - t0); h.push(t2 - t1); } // run 0 includes tier-up
  }
  console.log(`${name}: start ${median(s)} ms + handle ${median(h)} ms (medians of ${runs - 1})`);
}
process.exit(0); // the Go programs never exit
