'use strict';
// Runs the benchmark suite: `node bench/run.js [name ...]` (all when no name is given;
// `--table-only` rewrites the table of docs/benchmarks.md from the recorded runs without running
// any; `--readme-only` is its old name). Each
// benchmark runs in its own process (and starts its own server under test), prints its figures
// beside their targets, and hands its rows back here for the final table, which is also written
// to .bench-results/latest.json and .bench-results/latest.md; each benchmark's rows also go to
// .bench-results/<name>.json, from which the table of docs/benchmarks.md is regenerated (see
// updateTable).
// `npm run bench` builds first.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { fork } = require('node:child_process');
const { verdict } = require('./common');

const BENCHMARKS = [
  { name: 'dump', file: 'state-dump.js', title: '1. state dump at 1–200 MB with its peers', execArgv: [], timeoutMs: 1_200_000 },
  { name: 'field', file: 'field-select.js', title: '2. field selection' },
  { name: 'healthz', file: 'healthz-under-load.js', title: '3. /healthz under load' },
  { name: 'events', file: 'publish-event.js', title: '4. publishEvent', execArgv: ['--expose-gc'] },
  { name: 'metrics', file: 'metrics.js', title: '5. /metrics' },
  { name: 'profiling', file: 'profiling-overhead.js', title: '6. profiling overhead' },
  { name: 'watch', file: 'event-watch.js', title: '8. event watches', execArgv: ['--expose-gc'] },
  { name: 'heap', file: 'heap-profile.js', title: '9. heap profile stall' },
  { name: 'source-maps', file: 'source-maps.js', title: '10. source-mapped profiles', timeoutMs: 400_000 },
  {
    name: 'hostile',
    file: 'hostile-request.js',
    title: '11. worst stall from one hostile request',
    execArgv: ['--expose-gc'],
    timeoutMs: 300_000,
  },
  { name: 'watch-load', file: 'watch-load.js', title: '14. watches under hostile load', timeoutMs: 300_000 },
  { name: 'probe-under-dumps', file: 'probe-under-dumps.js', title: '12. probe p99 under 200 concurrent dumps', timeoutMs: 300_000 },
  // Four Node lines, three hosts each, every host loading a real dependency and a 50 MB heap.
  { name: 'profile-start', file: 'profile-start.js', title: '7. profile-start stall per Node line', timeoutMs: 600_000 },
  { name: 'trace', file: 'trace.js', title: '13. worst stall during a trace', timeoutMs: 300_000 },
  // 3 replicas of our elector and 3 of client-go's leaderelection against one real kube-apiserver.
  { name: 'takeover', file: 'takeover.js', title: '15. leader takeover, ours beside client-go', timeoutMs: 600_000 },
  // createKubeAuth against one real kube-apiserver: latency cached and cold, 10 000 garbage tokens.
  {
    name: 'kube-auth',
    file: 'kube-auth.js',
    title: '16. TokenReview + SubjectAccessReview in front of /metrics',
    execArgv: ['--expose-gc'],
    timeoutMs: 600_000,
  },
  // The fleet view over 50 replicas (3 of the example, 47 small), against one real kube-apiserver.
  { name: 'fleet', file: 'fleet.js', title: '17. fleet view over 50 replicas', execArgv: ['--expose-gc'], timeoutMs: 600_000 },
  // Two example replicas side by side for 5 minutes, one of them profiled on Alloy's schedule.
  { name: 'continuous', file: 'continuous-profiling.js', title: "18. continuous profiling on Alloy's schedule", timeoutMs: 900_000 },
];
const TIMEOUT_MS = 120_000;

function select(args) {
  if (args.length === 0) return BENCHMARKS;
  return args.map((arg) => {
    const found = BENCHMARKS.find((b, i) => b.name === arg || b.file === arg || String(i + 1) === arg);
    if (!found) {
      console.error(`unknown benchmark ${JSON.stringify(arg)}; choose from ${BENCHMARKS.map((b, i) => `${i + 1}|${b.name}`).join(', ')}`);
      process.exit(2);
    }
    return found;
  });
}

/** Runs one benchmark file; resolves with its rows (or a failure row) and its details. */
function runOne(bench) {
  return new Promise((resolve) => {
    const started = Date.now();
    const child = fork(path.join(__dirname, bench.file), [], {
      execArgv: bench.execArgv || [],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    let result;
    child.on('message', (message) => {
      if (message && message.type === 'result') result = message;
    });
    const timeoutMs = bench.timeoutMs || TIMEOUT_MS;
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      const seconds = (Date.now() - started) / 1000;
      console.log(`  (${bench.name}: ${seconds.toFixed(1)} s)\n`);
      if (result && code === 0) {
        resolve({ name: bench.name, seconds, rows: result.rows, details: result.details });
        return;
      }
      const why = signal ? `killed (${signal}${signal === 'SIGKILL' ? `, over ${timeoutMs / 1000} s` : ''})` : `exited with code ${code}`;
      resolve({
        name: bench.name,
        seconds,
        failed: why,
        rows: [{ id: bench.name, benchmark: bench.title, measured: `FAILED: ${why}`, target: '-', met: false }],
      });
    });
  });
}

const TABLE_HEAD = ['| # | benchmark | measured | target | baseline | met? |', '| --- | --- | --- | --- | --- | --- |'];

/** One table line per row. */
function markdownRows(rows) {
  const cell = (text) => String(text).replace(/[\\|]/g, (c) => `\\${c}`);
  return rows.map(
    (r) => `| ${r.id} | ${cell(r.benchmark)} | ${cell(r.measured)} | ${cell(r.target)} | ${r.baseline || '-'} | ${verdict(r.met)} |`,
  );
}

/** The table: its head, then `lines`. */
function tableText(lines) {
  return `${[...TABLE_HEAD, ...lines].join('\n')}\n`;
}

function markdown(rows) {
  return tableText(markdownRows(rows));
}

/** The benchmark a table row belongs to: by its id's number (`5h` is benchmark 5), or its name for a failure row. */
function benchmarkOfRow(id) {
  const number = /^(\d+)/.exec(id);
  if (number) return BENCHMARKS.find((b) => Number.parseInt(b.title, 10) === Number(number[1]));
  return BENCHMARKS.find((b) => b.name === id);
}

/**
 * What the table shows now, per benchmark: its lines and its "last run" entry. A benchmark this
 * machine has no recorded run of keeps them, so a partial run on a fresh checkout (where
 * .bench-results/ holds only what ran here) replaces its own rows and nothing else.
 */
function shownTable(region) {
  const lines = new Map();
  for (const line of region.split('\n')) {
    const id = /^\| ([^|]+?) \|/.exec(line);
    const bench = id && id[1] !== '#' && id[1] !== '---' ? benchmarkOfRow(id[1]) : undefined;
    if (bench) lines.set(bench.name, [...(lines.get(bench.name) || []), line]);
  }
  const entries = new Map();
  const intro = /each benchmark's last run: (.*)\.$/m.exec(region);
  if (intro) for (const entry of intro[1].split('; ')) entries.set(entry.split(' ')[0], entry);
  return { lines, entries };
}

const RESULTS = path.join(__dirname, '..', '.bench-results');
/** Where the generated table lives, between its markers: the benchmarks guide, not the README (a front page). */
const TABLE_FILE = path.join(__dirname, '..', 'docs', 'benchmarks.md');
const START = '<!-- bench-table -->';
const END = '<!-- /bench-table -->';

/**
 * Rewrites the table of docs/benchmarks.md between its markers from the last recorded run of every benchmark
 * (.bench-results/<name>.json, written by each run): a partial run replaces the rows of the
 * benchmarks it ran and keeps the others' last figures, each benchmark's run date and machine said
 * above the table.
 */
function updateTable({ resultsDir = RESULTS, tableFile = TABLE_FILE } = {}) {
  const runs = new Map();
  for (const b of BENCHMARKS) {
    const file = path.join(resultsDir, `${b.name}.json`);
    if (fs.existsSync(file)) runs.set(b.name, JSON.parse(fs.readFileSync(file, 'utf8')));
  }
  if (runs.size === 0) return;
  const text = fs.readFileSync(tableFile, 'utf8');
  // The markers count only on lines of their own: the method above the table names them in prose.
  const at = text.indexOf(`\n${START}\n`);
  const start = at + 1;
  const end = text.indexOf(`\n${END}`, start) + 1;
  if (at < 0 || end <= start) {
    console.log(`docs/benchmarks.md has no ${START} … ${END} markers; table not written`);
    return;
  }
  const shown = shownTable(text.slice(start, end));
  const when = (name, r) => `${name} ${r.date.slice(0, 10)} (Node ${r.machine.node.replace(/^v/, '')}, load ${r.machine.loadAverage[0]})`;
  const lines = [];
  const entries = [];
  for (const b of BENCHMARKS) {
    const run = runs.get(b.name);
    if (run) {
      lines.push(...markdownRows(run.rows));
      entries.push(when(b.name, run));
    } else {
      lines.push(...(shown.lines.get(b.name) || []));
      if (shown.entries.has(b.name)) entries.push(shown.entries.get(b.name));
    }
  }
  const first = runs.values().next().value.machine;
  const intro = [
    `Generated by \`npm run bench\` on ${first.cores} × ${first.cpu}; each benchmark's last run: ${entries.join('; ')}.`,
    'Stalls are the worst of all runs with the median beside it; "baseline" says how the figure it is compared with was measured.',
    '',
  ];
  fs.writeFileSync(tableFile, `${text.slice(0, start + START.length)}\n${intro.join('\n')}\n${tableText(lines)}${text.slice(end)}`);
  console.log('docs/benchmarks.md table regenerated');
}

async function main() {
  if (process.argv.includes('--table-only') || process.argv.includes('--readme-only')) {
    updateTable();
    return;
  }
  const chosen = select(process.argv.slice(2));
  const machine = {
    node: process.version,
    cpu: os.cpus()[0] ? os.cpus()[0].model : 'unknown',
    cores: os.cpus().length,
    loadAverage: os.loadavg().map((x) => Number(x.toFixed(2))),
  };
  console.log(
    `controller-introspection benchmarks: Node ${machine.node}, ${machine.cores} × ${machine.cpu}, load average ${machine.loadAverage.join(' ')}`,
  );
  if (machine.loadAverage[0] > machine.cores / 2) {
    console.log('warning: the machine is busy; timings and ratios will be noisier than usual');
  }
  console.log('');

  const results = [];
  for (const bench of chosen) results.push(await runOne(bench));

  const rows = results.flatMap((r) => r.rows);
  console.log('benchmark'.padEnd(66) + 'measured'.padEnd(44) + 'target'.padEnd(12) + 'met?');
  for (const r of rows)
    console.log(`${`${r.id} ${r.benchmark}`.padEnd(66)}${r.measured.padEnd(44)}${r.target.padEnd(12)}${verdict(r.met)}`);

  const dir = path.join(__dirname, '..', '.bench-results');
  fs.mkdirSync(dir, { recursive: true });
  const report = {
    date: new Date().toISOString(),
    machine,
    benchmarks: results.map((r) => r.name),
    rows,
    details: Object.fromEntries(results.map((r) => [r.name, r.details || { failed: r.failed }])),
  };
  fs.writeFileSync(path.join(dir, 'latest.json'), `${JSON.stringify(report, null, 2)}\n`);
  fs.writeFileSync(path.join(dir, 'latest.md'), markdown(rows));
  for (const r of results) {
    if (r.failed) continue;
    const record = { date: report.date, machine, rows: r.rows };
    fs.writeFileSync(path.join(dir, `${r.name}.json`), `${JSON.stringify(record, null, 2)}\n`);
  }
  updateTable();
  const missed = rows.filter((r) => r.met === false).length;
  const unsure = rows.filter((r) => r.met === 'inconclusive').length;
  const summary = missed === 0 && unsure === 0 ? 'every target met' : `${missed} target(s) not met, ${unsure} inconclusive`;
  console.log(`\n${summary}; written to .bench-results/latest.json and latest.md`);
  // A missed target is a finding, not a crash; only a benchmark that failed to run fails the command.
  process.exitCode = results.some((r) => r.failed) ? 1 : 0;
}

if (require.main === module) main();

module.exports = { updateTable };
