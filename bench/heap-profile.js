'use strict';
// Benchmark 9: what a heap profile costs the host. A host holding an ~85 MB live heap serves
// /debug/pprof/heap with each heap reader (@datadog/pprof, the default; node:inspector, the
// fallback), and the peer @datadog/pprof is called directly in the same process (heap.profile() and
// encode: the same work without HTTP). Reported: the longest event-loop block while one profile is
// served, and its total time, worst of all runs beside the median. Each reader runs in its own process.

const { execFile } = require('node:child_process');
const path = require('node:path');
const { main, median, ms, report, row } = require('./common');

const RUNS = 6;
const HOST = `
const express = require(${JSON.stringify(require.resolve('express'))});
const http = require('node:http');
const { createPprofRouter } = require(${JSON.stringify(path.join(__dirname, '..', 'dist', 'index.js'))});
const mode = process.argv[1];
const held = [];
while (process.memoryUsage().heapUsed < 85e6) for (let i = 0; i < 10000; i++) held.push({ id: held.length, name: 'obj-' + held.length, tags: [i] });
async function worstBlock(work) {
  let worst = 0, last = performance.now(), running = true;
  const turn = () => { const now = performance.now(); worst = Math.max(worst, now - last); last = now; if (running) setImmediate(turn); };
  setImmediate(turn);
  const started = performance.now();
  await work();
  const total = performance.now() - started;
  await new Promise((r) => setTimeout(r, 5));
  running = false;
  return { worst, total };
}
function get(port) {
  return new Promise((resolve, reject) => http.get({ host: '127.0.0.1', port, path: '/debug/pprof/heap', agent: false }, (res) => { res.resume(); res.on('end', resolve); }).on('error', reject));
}
(async () => {
  const results = [];
  if (mode === 'peer') {
    const { heap, encode } = require('@datadog/pprof');
    heap.start(512 * 1024, 64);
    for (let i = 0; i < ${RUNS}; i++) results.push(await worstBlock(async () => { await encode(heap.profile()); }));
  } else {
    const router = createPprofRouter({ heapProfiler: mode, heapSamplingIntervalBytes: 512 * 1024 });
    const app = express();
    app.use('/debug/pprof', router);
    const server = app.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    for (let i = 0; i < ${RUNS}; i++) results.push(await worstBlock(() => get(server.address().port)));
    await router.close();
    server.close();
  }
  process.stdout.write(JSON.stringify({ heapMB: Math.round(process.memoryUsage().heapUsed / 1e6), results, held: held.length }) + '\\n');
})().catch((err) => { console.error(err); process.exit(1); });
`;

function runHost(mode) {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ['-e', HOST, mode], { timeout: 120_000, maxBuffer: 1 << 20 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${mode}: ${err.message}\n${stderr}`));
      else resolve(JSON.parse(stdout.trim().split('\n').pop()));
    });
  });
}

async function run() {
  const peer = await runHost('peer');
  const ours = await runHost('@datadog/pprof');
  const inspector = await runHost('inspector');
  const stat = (r) => ({
    worst: Math.max(...r.results.map((x) => x.worst)),
    medianBlock: median(r.results.map((x) => x.worst)),
    medianTotal: median(r.results.map((x) => x.total)),
  });
  const p = stat(peer);
  const o = stat(ours);
  const i = stat(inspector);
  console.log(`[9] heap profile with a ~${ours.heapMB} MB live heap, ${RUNS} runs each (worst block of the event loop, median beside it)`);
  const rows = [
    row(
      '9a',
      '/debug/pprof/heap (default reader @datadog/pprof): stall',
      `worst ${ms(o.worst)}, median ${ms(o.medianBlock)}`,
      '≤ 10 ms',
      o.worst <= 10,
    ),
    row(
      '9b',
      '/debug/pprof/heap over HTTP vs peer @datadog/pprof in-process: time',
      `${ms(o.medianTotal)} vs ${ms(p.medianTotal)} (${(o.medianTotal / p.medianTotal).toFixed(2)}×; ours includes HTTP)`,
      '≤ 2×',
      o.medianTotal <= 2 * p.medianTotal,
    ),
    row(
      '9c',
      'context: peer @datadog/pprof heap.profile() + encode: stall',
      `worst ${ms(p.worst)}, median ${ms(p.medianBlock)}`,
      '-',
      null,
    ),
    row(
      '9d',
      'context: heapProfiler inspector (forced GC per read): stall',
      `worst ${ms(i.worst)}, median ${ms(i.medianBlock)}`,
      '-',
      null,
    ),
  ];
  report(rows, { peer, ours, inspector });
}

main(run);
