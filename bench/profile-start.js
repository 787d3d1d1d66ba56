'use strict';
// Benchmark 7: the event-loop stall when a CPU profile starts, per Node line and backend, in a host
// that has loaded and used a real controller dependency and holds a ~50 MB heap
// (fixtures/profile-start-host.js). Lines: the machine's Node plus Node 22, 24 and 26 from the npm
// registry (scripts/fetch-node.sh). Backends: the native addon where this tree's build loads (the
// Node that ran `npm ci`), and node:inspector with the code log kept (keepCodeLog, the default) and
// without it (every start walks the heap), beside the peer @datadog/pprof serving the same route.
// Also: the stall at router creation (the one walk) and the host throughput lost while the code log
// is kept on.

const { execFile } = require('node:child_process');
const path = require('node:path');
const { main, median, ms, nodeLines, report, row } = require('./common');

const ROOT = path.resolve(__dirname, '..');
const STARTS = 5;
const GOAL_MS = 20;

function measure(node, profiler, keepCodeLog) {
  return new Promise((resolve, reject) => {
    const env = {
      ...process.env,
      PROFILE_START: JSON.stringify({ root: ROOT, profiler, keepCodeLog, starts: STARTS }),
      CONTROLLER_INTROSPECTION_PROFILER: '',
    };
    execFile(
      node,
      [path.join(__dirname, 'fixtures', 'profile-start-host.js')],
      { env, timeout: 120_000, maxBuffer: 1 << 20 },
      (err, stdout, stderr) => {
        if (err) reject(new Error(`${node} ${profiler}: ${err.message}\n${stderr}`));
        else resolve(JSON.parse(stdout.trim().split('\n').pop()));
      },
    );
  });
}

async function run() {
  const lines = nodeLines();
  const rows = [];
  const details = [];
  for (const { major, node } of lines) {
    const configs = [
      ['inspector', true, 'inspector, code log kept'],
      ['inspector', false, 'inspector, keepCodeLog: false'],
      ['peer', true, 'the peer @datadog/pprof over HTTP'],
    ];
    if (node === process.execPath) configs.unshift(['v8-profiler-next', true, 'v8-profiler-next addon']);
    for (const [profiler, keep, label] of configs) {
      const result = await measure(node, profiler, keep);
      details.push({ major, label, ...result });
      const worst = Math.max(...result.startMs);
      const met = keep && profiler !== 'peer' ? worst <= GOAL_MS : null;
      rows.push(
        row(
          `7-${major}-${profiler}${keep ? '' : '-cold'}`,
          `Node ${major} (${result.node}), ${label}: profile-start stall`,
          `worst ${ms(worst)}, median ${ms(median(result.startMs))} (${STARTS} starts)`,
          met === null ? 'context' : `≤ ${GOAL_MS} ms`,
          met,
          { baseline: 'HTTP' },
        ),
      );
      if (keep) {
        rows.push(
          row(
            `7-${major}-${profiler}-cost`,
            `Node ${major}, ${label}: router creation stall / host throughput with router`,
            `${ms(result.creationMs)} / ${(result.throughputLoss * 100).toFixed(1)} % loss`,
            'context',
            null,
          ),
        );
      }
    }
  }
  console.log(`[7] profile-start stall: host with @kubernetes/client-node loaded and a ~50 MB heap; worst block of the event loop`);
  report(rows, { lines: details });
}

main(run);
