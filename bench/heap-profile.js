'use strict';
// Benchmark 9: what a heap profile costs the host. A host holding an ~85 MB live heap serves
// /debug/pprof/heap with each heap reader (@datadog/pprof, the default; node:inspector, the
// fallback), and the peer @datadog/pprof serves the same profile (heap.profile() and encode) from an
// Express route, fetched the same way, every request after a full collection. Reported: the longest
// event-loop block while one profile is served, and its total time, worst of all runs beside the
// median. Each reader runs in its own process, on every Node line (this one, then 22, 24 and 26 from
// the npm registry); the inspector reader, context only, on this line. Ours and the peer each run in
// two host processes, in the order peer, ours, ours, peer, so that drift of the machine hits both
// alike; medians are over all their requests.

const { execFile } = require('node:child_process');
const path = require('node:path');
const { main, median, ms, nodeLines, report, row } = require('./common');

// Requests per host process. Six per line let one slow request move the median by half (the ratio
// read 0.87-2.21x between runs with no change); with 2 x 10 per side it moved by 0.3x at most.
const RUNS = 10;
const HOST = `
const express = require(${JSON.stringify(require.resolve('express'))});
const http = require('node:http');
const { createPprofRouter } = require(${JSON.stringify(path.join(__dirname, '..', 'dist', 'index.js'))});
const mode = process.argv[1];
const held = [];
// Allocated once the sampler runs, as a host's heap is: the profile then holds the live heap's
// samples (allocated before it started, they were not in the profile at all).
function fillLiveHeap() {
  // Until 85 MB survive a full collection: heapUsed before one counts garbage too.
  for (;;) {
    while (process.memoryUsage().heapUsed < 85e6) for (let i = 0; i < 10000; i++) held.push({ id: held.length, name: 'obj-' + held.length, tags: [i] });
    global.gc();
    if (process.memoryUsage().heapUsed >= 85e6) return;
  }
}
const { worstBlock } = require(${JSON.stringify(path.join(__dirname, 'common.js'))});
async function measured(work) {
  const { worstMs, totalMs } = await worstBlock(work, 5);
  return { worst: worstMs, total: totalMs };
}
function get(port) {
  return new Promise((resolve, reject) => http.get({ host: '127.0.0.1', port, path: '/debug/pprof/heap', agent: false }, (res) => { res.resume(); res.on('end', resolve); }).on('error', reject));
}
(async () => {
  const results = [];
  // Ours and the peer are served the same way: an Express route on loopback, fetched by a client
  // in this process, each request after a full collection.
  const app = express();
  let router;
  if (mode === 'peer') {
    const { heap, encode } = require('@datadog/pprof');
    heap.start(512 * 1024, 64);
    app.get('/debug/pprof/heap', async (req, res) => {
      const body = await encode(heap.profile());
      res.set('Content-Type', 'application/octet-stream').end(body);
    });
  } else {
    router = createPprofRouter(undefined, { heapProfiler: mode, heapSamplingIntervalBytes: 512 * 1024 });
    app.use('/debug/pprof', router);
  }
  fillLiveHeap();
  const server = app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  // The router's start-up work (the code-log walk, reported as router creation by benchmark 7, and
  // the conversion's warm-up) runs on the turns after its creation. Measuring at once charged it to
  // the first request (8-12 ms on Node 22); a host has been up a moment before a profile is taken.
  // Both hosts wait the same.
  await new Promise((r) => setTimeout(r, 500));
  for (let i = 0; i < ${RUNS}; i++) {
    global.gc();
    await new Promise((r) => setTimeout(r, 20));
    results.push(await measured(() => get(server.address().port)));
  }
  if (router) await router.close();
  server.close();
  const samples = mode === 'peer' ? require('@datadog/pprof').heap.profile().sample.length : undefined;
  process.stdout.write(JSON.stringify({ heapMB: Math.round(process.memoryUsage().heapUsed / 1e6), results, held: held.length, samples }) + '\\n');
})().catch((err) => { console.error(err); process.exit(1); });
`;

function runHost(mode, node = process.execPath) {
  return new Promise((resolve, reject) => {
    execFile(node, ['--expose-gc', '-e', HOST, mode], { timeout: 120_000, maxBuffer: 1 << 20 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${mode} on ${node}: ${err.message}\n${stderr}`));
      else resolve(JSON.parse(stdout.trim().split('\n').pop()));
    });
  });
}

/** Two host processes' requests as one set of results. */
function merged(first, second) {
  return { ...first, results: [...first.results, ...second.results] };
}

function stat(r) {
  return {
    worst: Math.max(...r.results.map((x) => x.worst)),
    medianBlock: median(r.results.map((x) => x.worst)),
    medianTotal: median(r.results.map((x) => x.total)),
    worstTotal: Math.max(...r.results.map((x) => x.total)),
  };
}

async function run() {
  const lines = [];
  for (const { major, node } of nodeLines()) {
    const peerFirst = await runHost('peer', node);
    const oursFirst = await runHost('@datadog/pprof', node);
    const oursSecond = await runHost('@datadog/pprof', node);
    const peerSecond = await runHost('peer', node);
    const peer = merged(peerFirst, peerSecond);
    const ours = merged(oursFirst, oursSecond);
    lines.push({ major, peer, ours, p: stat(peer), o: stat(ours) });
  }
  const inspector = await runHost('inspector');
  const i = stat(inspector);
  const each = (f) => lines.map((l) => `${l.major}: ${f(l)}`).join('; ');
  console.log(
    `[9] heap profile with a ~${lines[0].ours.heapMB} MB live heap, ${2 * RUNS} requests per side (two host processes each) on Node ${lines.map((l) => l.major).join(', ')}, ${lines[0].peer.samples} samples in the profile (worst block of the event loop, median beside it)`,
  );
  const rows = [
    row(
      '9a',
      '/debug/pprof/heap (default reader @datadog/pprof): stall per Node line, worst (median)',
      each((l) => `${ms(l.o.worst)} (${ms(l.o.medianBlock)})`),
      '≤ 10 ms',
      lines.every((l) => l.o.worst <= 10),
    ),
    row(
      '9b',
      '/debug/pprof/heap / the peer @datadog/pprof (heap.profile() + encode behind Express), median time per Node line',
      each(
        (l) =>
          `${(l.o.medianTotal / l.p.medianTotal).toFixed(2)}× (${ms(l.o.medianTotal)} / ${ms(l.p.medianTotal)}; worst ${ms(l.o.worstTotal)} / ${ms(l.p.worstTotal)})`,
      ),
      '≤ 2×',
      lines.every((l) => l.o.medianTotal <= 2 * l.p.medianTotal),
      { baseline: 'HTTP' },
    ),
    row(
      '9c',
      'context: the peer @datadog/pprof over HTTP: stall per Node line, worst (median)',
      each((l) => `${ms(l.p.worst)} (${ms(l.p.medianBlock)})`),
      '-',
      null,
      { baseline: 'HTTP' },
    ),
    row(
      '9d',
      'context: heapProfiler inspector (forced GC per read): stall',
      `worst ${ms(i.worst)}, median ${ms(i.medianBlock)}`,
      '-',
      null,
    ),
  ];
  report(rows, { lines: lines.map(({ major, peer, ours }) => ({ major, peer, ours })), inspector });
}

main(run);
