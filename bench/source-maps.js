'use strict';
// Benchmark 10: what source-mapped profiles cost the host. The host is bundled with
// @kubernetes/client-node into one minified script with a ~5.7 MB source map; it serves CPU
// (1 s) and heap profiles over HTTP with source mapping on and, as the baseline measured the same
// way in the same run, off. Reported: the longest event-loop block during each request (the first
// mapped request reads and decodes the whole map, in the worker thread), worst beside median, and
// the request time with mapping against without.

const { execFile } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const esbuild = require('esbuild');
const { main, median, ms, report, row } = require('./common');

const RUNS = 5;

function runHost(bundle, sourceMaps) {
  return new Promise((resolve, reject) => {
    const env = {
      ...process.env,
      NODE_PATH: path.join(__dirname, '..', 'node_modules'),
      SOURCE_MAPS: sourceMaps,
      RUNS: String(RUNS),
      PACKAGE_ENTRY: path.join(__dirname, '..', 'dist', 'index.js'),
    };
    execFile(process.execPath, [bundle], { env, timeout: 180_000, maxBuffer: 1 << 20 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`sourceMaps ${sourceMaps}: ${err.message}\n${stderr}`));
      else resolve(JSON.parse(stdout.trim().split('\n').pop()));
    });
  });
}

async function run() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-source-maps-'));
  const bundle = path.join(dir, 'host.js');
  await esbuild.build({
    entryPoints: [path.join(__dirname, 'fixtures', 'source-map-host.js')],
    bundle: true,
    minify: true,
    sourcemap: true,
    platform: 'node',
    external: ['express'],
    outfile: bundle,
    logLevel: 'error',
  });
  const mapMB = fs.statSync(`${bundle}.map`).size / 1e6;
  try {
    const off = await runHost(bundle, 'off');
    const on = await runHost(bundle, 'on');
    const stat = (runs) => ({
      first: runs[0].worst,
      worst: Math.max(...runs.map((r) => r.worst)),
      median: median(runs.map((r) => r.worst)),
      total: median(runs.map((r) => r.total)),
    });
    const cpuOn = stat(on.cpu);
    const cpuOff = stat(off.cpu);
    const heapOn = stat(on.heap);
    const heapOff = stat(off.heap);
    console.log(
      `[10] source-mapped profiles, a ${(fs.statSync(bundle).size / 1e6).toFixed(1)} MB bundle with a ${mapMB.toFixed(1)} MB source map, ${RUNS} runs each; mapped scripts: ${on.sourceMaps.mappedScripts}, failures: ${on.sourceMaps.failures.length}`,
    );
    const rows = [
      row(
        '10a',
        `CPU profile (1 s), ${mapMB.toFixed(1)} MB map: worst stall, mapping on (first request decodes the map)`,
        `worst ${ms(cpuOn.worst)} (first ${ms(cpuOn.first)}), median ${ms(cpuOn.median)}; off: worst ${ms(cpuOff.worst)}, median ${ms(cpuOff.median)}`,
        '≤ 20 ms',
        cpuOn.worst <= 20,
      ),
      row(
        '10b',
        'heap profile, mapped: worst stall',
        `worst ${ms(heapOn.worst)}, median ${ms(heapOn.median)}; off: worst ${ms(heapOff.worst)}, median ${ms(heapOff.median)}`,
        '≤ 20 ms',
        heapOn.worst <= 20,
      ),
      row(
        '10c',
        'request time, mapped vs unmapped (median)',
        `CPU ${ms(cpuOn.total)} vs ${ms(cpuOff.total)} (${(cpuOn.total / cpuOff.total).toFixed(2)}×); heap ${ms(heapOn.total)} vs ${ms(heapOff.total)} (${(heapOn.total / heapOff.total).toFixed(2)}×)`,
        '-',
        null,
      ),
      row(
        '10d',
        'frames mapped',
        `${on.sourceMaps.mappedScripts} script(s), ${on.sourceMaps.failures.length} failure(s)`,
        '≥ 1, 0',
        on.sourceMaps.mappedScripts >= 1 && on.sourceMaps.failures.length === 0,
      ),
    ];
    report(rows, { on, off, mapMB });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main(run);
