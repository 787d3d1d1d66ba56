'use strict';
// Shared helpers of the benchmark suite: statistics, a timed HTTP client, a /healthz prober, the
// server under test (a separate process driven over IPC) and result reporting.
//
// The client side runs in the benchmark's own process; the server under test is always a forked
// child, so the client's work never shows up in the server's timings and vice versa.

const http = require('node:http');
const path = require('node:path');
const { execFileSync, fork } = require('node:child_process');

// --- statistics -----------------------------------------------------------------------------

function sorted(values) {
  return [...values].sort((a, b) => a - b);
}

/** Nearest-rank percentile (p in 0..100) of a non-empty list. */
function percentile(values, p) {
  const s = sorted(values);
  if (s.length === 0) return NaN;
  const rank = Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1));
  return s[rank];
}

function median(values) {
  const s = sorted(values);
  if (s.length === 0) return NaN;
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

function ms(value, digits = 1) {
  return `${value.toFixed(digits)} ms`;
}

function ratio(value, digits = 2) {
  return `${value.toFixed(digits)}×`;
}

function sleep(delayMs) {
  return new Promise((resolve) => setTimeout(resolve, delayMs));
}

function nowMs() {
  return Number(process.hrtime.bigint()) / 1e6;
}

/**
 * Runs `work` and resolves with its result, its time and the longest gap between consecutive
 * event-loop turns (setImmediate) meanwhile and for `tailMs` after: the longest stretch the loop
 * could not run anything else. The one stall probe of the benchmarks and their fixtures.
 */
async function worstBlock(work, tailMs = 0) {
  let worst = 0;
  let last = performance.now();
  let running = true;
  const turn = () => {
    const now = performance.now();
    worst = Math.max(worst, now - last);
    last = now;
    if (running) setImmediate(turn);
  };
  setImmediate(turn);
  const started = performance.now();
  const result = await work();
  const totalMs = performance.now() - started;
  if (tailMs > 0) await new Promise((resolve) => setTimeout(resolve, tailMs));
  running = false;
  return { result, totalMs, worstMs: Math.max(worst, performance.now() - last) };
}

// --- HTTP client ----------------------------------------------------------------------------

// Keep-alive, as Prometheus and the kubelet's prober reuse connections; concurrent requests get
// their own sockets.
const agent = new http.Agent({ keepAlive: true, maxSockets: 32 });

/**
 * GETs http://127.0.0.1:<port><path>, reading and discarding the body. Resolves with the status,
 * the body size and the time from sending to the last byte, in ms.
 */
function get(port, urlPath, headers = {}, via = agent) {
  return new Promise((resolve, reject) => {
    const start = nowMs();
    const req = http.get({ host: '127.0.0.1', port, path: urlPath, agent: via, headers }, (res) => {
      let bytes = 0;
      res.on('data', (chunk) => {
        bytes += chunk.length;
      });
      res.on('end', () => resolve({ status: res.statusCode, bytes, ms: nowMs() - start }));
      res.on('error', reject);
    });
    req.on('error', reject);
  });
}

/** Like {@link get}, but fails unless the answer is 200. */
async function get200(port, urlPath, headers, via) {
  const r = await get(port, urlPath, headers, via);
  if (r.status !== 200) throw new Error(`GET ${urlPath} answered ${r.status}`);
  return r;
}

/**
 * Probes GET /healthz one request at a time, `gapMs` apart, like a kubelet with a very short
 * period. `stop()` resolves with every latency (ms) and the number of non-200 answers.
 */
function startProber(port, gapMs = 5) {
  const latencies = [];
  let failures = 0;
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const r = await get(port, '/healthz');
      latencies.push(r.ms);
      if (r.status !== 200) failures++;
      await sleep(gapMs);
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
      return { latencies, failures };
    },
  };
}

// --- server under test ----------------------------------------------------------------------

/**
 * Forks bench/server.js with `options` and waits until it listens. `call(cmd, args)` runs a
 * command in the server (see the commands in server.js); `close()` ends it.
 */
async function startServer(options = {}, execArgv = []) {
  const child = fork(path.join(__dirname, 'server.js'), [JSON.stringify(options)], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    execArgv,
  });
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  const pending = new Map();
  let seq = 0;
  child.on('message', (message) => {
    const waiter = pending.get(message.id);
    if (!waiter) return;
    pending.delete(message.id);
    if (message.error) waiter.reject(new Error(`server: ${message.error}`));
    else waiter.resolve(message.result);
  });
  child.on('exit', (code, signal) => {
    for (const waiter of pending.values()) waiter.reject(new Error(`server exited (${signal || code})`));
    pending.clear();
  });
  function call(cmd, args = {}) {
    return new Promise((resolve, reject) => {
      const id = ++seq;
      pending.set(id, { resolve, reject });
      child.send({ id, cmd, args });
    });
  }
  const ports = await call('ports');
  return {
    ports,
    call,
    async close() {
      process.removeListener('exit', killOnExit);
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      // Disconnecting lets the server exit on its own (and write --cpu-prof output, if asked).
      child.disconnect();
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/**
 * The host side of the IPC the benchmark hosts speak: answers each `{ id, cmd, args }` message
 * with `{ id, result }` (or `{ id, error }`) from `commands[cmd](args)`, and exits when the
 * benchmark disconnects.
 */
function answerCommands(commands) {
  process.on('message', async ({ id, cmd, args }) => {
    try {
      process.send({ id, result: await commands[cmd](args) });
    } catch (err) {
      process.send({ id, error: err && err.stack ? err.stack : String(err) });
    }
  });
  process.on('disconnect', () => process.exit(0));
}

// --- reporting ------------------------------------------------------------------------------

/**
 * One line of the final table. `met` is true/false against the target, 'inconclusive' when the
 * measurement's noise straddles the target, or null for figures that are context only.
 */
function row(id, benchmark, measured, target, met, extra = {}) {
  return { id, benchmark, measured, target, met, ...extra };
}

function verdict(met) {
  if (met === null) return 'info';
  if (met === 'inconclusive') return 'inconclusive';
  return met ? 'met' : 'NOT MET';
}

function printRows(rows) {
  for (const r of rows) {
    console.log(`  ${r.benchmark.padEnd(62)} ${r.measured.padEnd(40)} target ${r.target.padEnd(14)} ${verdict(r.met)}`);
  }
}

/**
 * Prints a benchmark's rows and hands them to bench/run.js when it started us (over IPC), so the
 * final table and .bench-results/latest.json are built in one place.
 */
function report(rows, details = {}) {
  printRows(rows);
  if (typeof process.send === 'function') process.send({ type: 'result', rows, details });
}

/** Runs a benchmark's main function, turning a failure into a non-zero exit with the stack. */
function main(fn) {
  fn().then(
    () => {
      agent.destroy();
      if (typeof process.send === 'function') process.disconnect();
    },
    (err) => {
      console.error(err && err.stack ? err.stack : err);
      process.exit(1);
    },
  );
}

// --- Node lines -----------------------------------------------------------------------------

/**
 * The Node lines a per-line benchmark runs on: this process's own, then each of
 * BENCH_NODE_LINES (default 22 24 26), fetched from the npm registry by scripts/fetch-node.sh.
 */
function nodeLines() {
  const others = (process.env.BENCH_NODE_LINES || '22 24 26').split(/\s+/).filter(Boolean);
  const fetchNode = path.join(__dirname, '..', 'scripts', 'fetch-node.sh');
  return [
    { major: process.versions.node.split('.')[0], node: process.execPath },
    ...others.map((major) => ({ major, node: execFileSync('bash', [fetchNode, major], { encoding: 'utf8' }).trim() })),
  ];
}

module.exports = {
  answerCommands,
  nodeLines,
  percentile,
  median,
  ms,
  ratio,
  sleep,
  nowMs,
  worstBlock,
  get,
  get200,
  startProber,
  startServer,
  row,
  verdict,
  printRows,
  report,
  main,
};
