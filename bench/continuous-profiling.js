'use strict';
// Benchmark 18 (issue 42): being profiled continuously, as Grafana Alloy's pyroscope.scrape and
// Parca do it. Two replicas of the example controller (examples/dist/controller/main.js, default
// pprof options, its reconcile loop under load: a cycle every 100 ms burning 2 ms of CPU) run side
// by side for BENCH_CONTINUOUS_SECONDS (default 300), so that the machine's drift hits both alike.
// Both are scraped for /metrics every 15 s; one of them is also profiled on Alloy's schedule: every
// 15 s, /debug/pprof/profile?seconds=14 and the paths the shipped scrape configuration enables
// (examples/monitoring/alloy-pyroscope-scrape.alloy; /allocs, /goroutine, /mutex and /block when
// it names none), each at the same interval. After a 30 s warm-up, from each process's
// /proc/<pid>/stat and /status: its CPU time over the run as a share of one core, its resident
// memory every 15 s (first and last, and the largest); and from each host's own event-loop delay
// monitor (/debug/pprof/block?debug=1, started on both at the start): its worst turn. Also each
// path's cost: the median time of its answers, and their status.

const { spawn } = require('node:child_process');
const fs = require('node:fs');
const http = require('node:http');
const os = require('node:os');
const path = require('node:path');
const { main, median, ms, report, row, sleep } = require('./common');
const { freePorts } = require('./control-plane');

const REPO = path.resolve(__dirname, '..');
const EXAMPLE = path.join(REPO, 'examples', 'dist', 'controller', 'main.js');
const ALLOY = path.join(REPO, 'examples', 'monitoring', 'alloy-pyroscope-scrape.alloy');
const SECONDS = Number(process.env.BENCH_CONTINUOUS_SECONDS || 300);
const WARMUP_MS = 30_000;
const INTERVAL_MS = 15_000;
const TICKS = 100; // USER_HZ on Linux: /proc/<pid>/stat counts CPU time in hundredths of a second

/** The paths the shipped Alloy configuration enables, besides the CPU profile; Alloy's defaults when it has none. */
function scrapedPaths() {
  const fallback = ['/debug/pprof/allocs', '/debug/pprof/goroutine', '/debug/pprof/mutex', '/debug/pprof/block'];
  if (!fs.existsSync(ALLOY)) return fallback;
  const text = fs.readFileSync(ALLOY, 'utf8');
  const paths = [];
  for (const block of text.matchAll(/profile\.(\w+)\s*\{([^}]*)\}/g)) {
    if (block[1] === 'process_cpu') continue;
    if (/enabled\s*=\s*false/.test(block[2])) continue;
    const p = /path\s*=\s*"([^"]+)"/.exec(block[2]);
    if (p) paths.push(p[1]);
  }
  return paths.length > 0 ? paths : fallback;
}

function startExample(dir, name, debugPort, metricsPort) {
  const config = {
    controller: {
      debugPort,
      healthPort: debugPort,
      config: { controller: { metrics_port: metricsPort } },
      leaderElection: { enabled: false },
      probes: { drainDelayMs: 0 },
      simulation: { reconcileIntervalMs: 100, lbPods: 2, cpuBurnMs: 2, cacheSyncMs: 0 },
    },
  };
  const file = path.join(dir, `${name}.json`);
  fs.writeFileSync(file, JSON.stringify(config));
  return spawn(process.execPath, [EXAMPLE, '--config', file], {
    env: { ...process.env, BIND_ADDRESS: '127.0.0.1', REPLICA_ID: name },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

function fetch(port, urlPath) {
  return new Promise((resolve) => {
    const started = performance.now();
    const req = http.get({ host: '127.0.0.1', port, path: urlPath, agent: false }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () =>
        resolve({
          status: res.statusCode,
          type: res.headers['content-type'],
          body: Buffer.concat(chunks),
          ms: performance.now() - started,
        }),
      );
    });
    req.on('error', (err) => resolve({ status: 0, type: '', body: Buffer.from(String(err)), ms: performance.now() - started }));
  });
}

/** CPU seconds (user + system) and resident bytes of a process, from /proc. */
function usage(pid) {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const cpuSeconds = (Number(fields[11]) + Number(fields[12])) / TICKS;
  const rss = Number(/VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) * 1024;
  return { cpuSeconds, rss };
}

async function worstTurnMs(port) {
  const res = await fetch(port, '/debug/pprof/block?debug=1');
  const text = res.body.toString();
  const max = /^max=([0-9.]+)\s*(ms|s|µs|ns)?$/m.exec(text);
  if (!max) return { ms: NaN, text: text.slice(0, 300) };
  const unit = { ms: 1, s: 1000, µs: 0.001, ns: 1e-6 }[max[2] ?? 'ms'] ?? 1;
  return { ms: Number(max[1]) * unit, text: '' };
}

async function until(port) {
  for (let i = 0; i < 200; i++) {
    if ((await fetch(port, '/healthz')).status === 200) return;
    await sleep(100);
  }
  throw new Error(`the example on port ${port} never answered /healthz`);
}

async function run() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-continuous-'));
  const [aDebug, aMetrics, bDebug, bMetrics] = await freePorts(4);
  const plain = startExample(dir, 'unprofiled', aDebug, aMetrics);
  const profiled = startExample(dir, 'profiled', bDebug, bMetrics);
  const paths = scrapedPaths();
  const costs = new Map(['/debug/pprof/profile?seconds=14', ...paths].map((p) => [p, { ms: [], statuses: new Map(), types: new Set() }]));
  try {
    await Promise.all([until(aDebug), until(bDebug)]);
    // Both hosts' event-loop delay monitors start now.
    await Promise.all([worstTurnMs(aDebug), worstTurnMs(bDebug)]);
    let stop = false;
    const scrapeMetrics = (async () => {
      while (!stop) {
        await Promise.all([fetch(aMetrics, '/metrics'), fetch(bMetrics, '/metrics')]);
        await sleep(INTERVAL_MS);
      }
    })();
    const record = (p, res) => {
      const c = costs.get(p);
      c.ms.push(res.ms);
      c.statuses.set(res.status, (c.statuses.get(res.status) ?? 0) + 1);
      c.types.add(res.type);
    };
    const profile = (async () => {
      while (!stop) {
        const started = Date.now();
        const cpu = fetch(bDebug, '/debug/pprof/profile?seconds=14').then((res) => record('/debug/pprof/profile?seconds=14', res));
        await Promise.all(paths.map((p) => fetch(bDebug, p).then((res) => record(p, res))));
        await cpu;
        await sleep(Math.max(0, INTERVAL_MS - (Date.now() - started)));
      }
    })();
    await sleep(WARMUP_MS);
    const startA = usage(plain.pid);
    const startB = usage(profiled.pid);
    const rss = { a: [startA.rss], b: [startB.rss] };
    const runMs = SECONDS * 1000;
    for (let t = 0; t < runMs; t += INTERVAL_MS) {
      await sleep(INTERVAL_MS);
      rss.a.push(usage(plain.pid).rss);
      rss.b.push(usage(profiled.pid).rss);
    }
    const endA = usage(plain.pid);
    const endB = usage(profiled.pid);
    stop = true;
    await Promise.all([scrapeMetrics, profile]);
    const [turnA, turnB] = await Promise.all([worstTurnMs(aDebug), worstTurnMs(bDebug)]);

    const seconds = runMs / 1000;
    const shareA = (endA.cpuSeconds - startA.cpuSeconds) / seconds;
    const shareB = (endB.cpuSeconds - startB.cpuSeconds) / seconds;
    const mb = (bytes) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
    const growth = (list) => list[list.length - 1] - list[Math.min(2, list.length - 1)];
    const perPath = [...costs.entries()]
      .map(
        ([p, c]) => `${p.replace('/debug/pprof/', '')} ${ms(median(c.ms), 0)} (${[...c.statuses].map(([s, n]) => `${n}×${s}`).join(' ')})`,
      )
      .join('; ');
    const allOctet = [...costs.values()].every((c) => c.types.size === 1 && [...c.types][0] === 'application/octet-stream');
    const rows = [
      row(
        '18a',
        `CPU over ${SECONDS} s, profiled on Alloy's schedule / unprofiled (share of one core)`,
        `${(shareB * 100).toFixed(1)} % / ${(shareA * 100).toFixed(1)} %: +${((shareB - shareA) * 100).toFixed(2)} points`,
        '≤ +3 points',
        shareB - shareA <= 0.03,
      ),
      row(
        '18b',
        'worst event-loop turn, profiled / unprofiled (each host’s own delay monitor)',
        `${ms(turnB.ms)} / ${ms(turnA.ms)}`,
        '≤ unprofiled + 20 ms',
        turnB.ms <= turnA.ms + 20,
      ),
      row(
        '18c',
        'resident memory after the warm-up, growth over the run, profiled / unprofiled',
        `${mb(growth(rss.b))} / ${mb(growth(rss.a))} (largest ${mb(Math.max(...rss.b))} / ${mb(Math.max(...rss.a))})`,
        '≤ unprofiled + 16 MB',
        growth(rss.b) <= growth(rss.a) + 16 * 1024 * 1024,
      ),
      row(
        '18d',
        'each path: median answer time (statuses)',
        perPath,
        'all 200, octet-stream',
        allOctet && [...costs.values()].every((c) => c.statuses.size === 1 && c.statuses.has(200)),
      ),
    ];
    report(rows, { shareA, shareB, rss, turnA, turnB, paths });
  } finally {
    plain.kill('SIGKILL');
    profiled.kill('SIGKILL');
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main(run);
