'use strict';
// Benchmark 5: a /metrics scrape through the package's router (Express) against prom-client's own
// registry.metrics() behind bare node:http and against the peer express-prom-bundle, on one registry holding the 14 controller metric
// families and 1 000 extra labelled series. Requests alternate between the two servers so that
// drift (other load, CPU frequency) hits both alike. Uncompressed, so both produce the same bytes;
// the gzip scrape Prometheus actually makes is shown as context.
//
// Then the same three at 1 000, 20 000 and 100 000 series (issue 27): one gauge with N label sets
// (a controller labelling per object: the worst case, as V8 lists one object's keys in one step,
// which every scrape does, in a turn of its own) and a histogram with N/10, each
// size in a fresh server process (this file, forked with --serve), measuring each scrape's total
// time and the server's longest event-loop turn meanwhile.
// express-prom-bundle serves the same registry at every size, in the same run.
//
// Rows 5m-5o (issue 30) are scrapes at once and scrapes nobody waits for: 20 scrapes of 100 000
// series at the same time (the server's longest turn), 50 scrapers at 20 000 series that hang up
// 4 ms after asking (the server's CPU after they left, against one full scrape), and 1 200 scrapes
// timed out on a collect() that never settles (the server's heap after a full GC).
//
// Row 5l is the host's side: what one recordReconciliation costs with the cycle's correlation id
// kept as exemplar and controller-runtime's families on, against the spec's families alone.

const { fork } = require('node:child_process');
const http = require('node:http');
const net = require('node:net');
const { answerCommands, get, get200, main, median, ms, ratio, report, row, sleep, startServer } = require('./common');

const WARMUP = 300;
const REQUESTS = 1000;

async function run() {
  // BENCH_METRICS=scaling runs rows 5f-5k and 5p-5u alone (both clients, text, OpenMetrics and protobuf).
  if (process.env.BENCH_METRICS === 'scaling') {
    const scaling = await runScaling();
    report(scaling.rows, { scaling: scaling.details });
    return;
  }
  const server = await startServer({ metrics: true, pprof: false });
  const times = { ours: [], bare: [], express: [], bundle: [], gzip: [] };
  const bytes = {};
  try {
    const { metrics, bareMetrics, expressMetrics, bundleMetrics } = server.ports;
    const scrape = {
      ours: () => get200(metrics, '/metrics'),
      bare: () => get200(bareMetrics, '/metrics'),
      express: () => get200(expressMetrics, '/metrics'),
      bundle: () => get200(bundleMetrics, '/metrics'),
      gzip: () => get200(metrics, '/metrics', { 'Accept-Encoding': 'gzip' }),
    };
    for (let i = 0; i < WARMUP; i++) for (const name of Object.keys(scrape)) await scrape[name]();
    for (let i = 0; i < REQUESTS; i++) {
      // Alternate which goes first, so neither always follows the other.
      for (const name of i % 2 === 0 ? ['ours', 'bare', 'bundle', 'express', 'gzip'] : ['bundle', 'bare', 'ours', 'gzip', 'express']) {
        const r = await scrape[name]();
        times[name].push(r.ms);
        bytes[name] = r.bytes;
      }
    }
  } finally {
    await server.close();
  }
  // Same registry, so the same text, give or take a changing value (seconds as leader).
  if (Math.abs(bytes.ours - bytes.bare) > 64)
    throw new Error(`the two servers answered different bodies (${bytes.ours} vs ${bytes.bare} bytes)`);
  const ours = times.ours;
  const bare = times.bare;
  const gzip = times.gzip;
  const oursMs = median(ours);
  const bareMs = median(bare);
  const expressMs = median(times.express);
  const bundleMs = median(times.bundle);
  const worst = (name) => Math.max(...times[name]);
  const best = bundleMs < bareMs ? { name: 'express-prom-bundle', ms: bundleMs } : { name: 'bare prom-client', ms: bareMs };
  console.log(`[5] /metrics: ${REQUESTS} scrapes each, alternating (medians); exposition ${(bytes.ours / 1024).toFixed(0)} KiB`);
  const rows = [
    row(
      '5a',
      '/metrics via router / bare prom-client + node:http',
      `${ratio(oursMs / bareMs, 3)} (${ms(oursMs, 2)} / ${ms(bareMs, 2)})`,
      '≤ 1.05×',
      oursMs / bareMs <= 1.05,
      { baseline: 'HTTP' },
    ),
    row(
      '5e',
      '/metrics via router / the peer express-prom-bundle (same registry), median',
      `${ratio(oursMs / bundleMs, 3)} (${ms(oursMs, 2)} / ${ms(bundleMs, 2)}; worst ${ms(worst('ours'), 2)} / ${ms(worst('bundle'), 2)}); best peer: ${best.name}, ${ratio(oursMs / best.ms, 3)}`,
      '-',
      null,
      { baseline: 'HTTP' },
    ),
    row('5b', 'context: the same bare handler in Express / bare', `${ratio(expressMs / bareMs, 3)} (${ms(expressMs, 2)})`, '-', null),
    row('5c', 'context: router / the bare handler in Express', ratio(oursMs / expressMs, 3), '-', null),
    row('5d', 'context: /metrics gzip (what Prometheus asks for)', ms(median(gzip), 2), '-', null),
  ];
  const recording = measureRecording();
  rows.push(
    row(
      '5l',
      "context: a cycle's record with its exemplar and controller-runtime's families / without",
      `${ratio(recording.fullNs / recording.plainNs)} (${recording.fullNs.toFixed(0)} ns / ${recording.plainNs.toFixed(0)} ns per recordReconciliation)`,
      '-',
      null,
    ),
  );
  const scaling = await runScaling();
  const together = await runTogether();
  report([...rows, ...scaling.rows, ...together.rows], {
    oursMs,
    bareMs,
    expressMs,
    gzipMs: median(gzip),
    bytes: bytes.ours,
    recording,
    scaling: scaling.details,
    together: together.details,
  });
}

// --- the host's path: what recording one cycle costs ---------------------------------------------

/**
 * Nanoseconds per `recordReconciliation` on the spec's families alone, and with the cycle's
 * correlation id kept as exemplar and controller-runtime's families on (what the pipeline records
 * per cycle): the median of 9 rounds of 20 000 calls each, the two alternating.
 */
function measureRecording() {
  const { Registry } = require('prom-client');
  const { createControllerMetrics } = require('controller-introspection');
  const plain = createControllerMetrics(new Registry());
  const full = createControllerMetrics(new Registry(), undefined, { controllerRuntime: { controller: 'ingress' } });
  const ids = Array.from({ length: 64 }, (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`);
  const CALLS = 20_000;
  const round = (record) => {
    const started = process.hrtime.bigint();
    for (let i = 0; i < CALLS; i++) record(i);
    return Number(process.hrtime.bigint() - started) / CALLS;
  };
  const samples = { plain: [], full: [] };
  for (let r = 0; r < 9; r++) {
    samples.plain.push(round((i) => plain.recordReconciliation((i % 100) * 0.003, i % 17 !== 0)));
    samples.full.push(round((i) => full.recordReconciliation((i % 100) * 0.003, i % 17 !== 0, ids[i % 64])));
  }
  return { plainNs: median(samples.plain), fullNs: median(samples.full) };
}

// --- scaling: 1 000, 20 000 and 100 000 series -----------------------------------------------

/** Series counts, and scrape rounds per server at each (a round scrapes every server once). */
const SIZES = [
  { series: 1_000, rounds: 60 },
  { series: 20_000, rounds: 8 },
  { series: 100_000, rounds: 4 },
];
/** The one-turn goal of the package (README: no event-loop stall past 20 ms). */
const STALL_GOAL_MS = 20;
const TEXT_ACCEPT = { Accept: 'text/plain;version=0.0.4' };
/** What Prometheus 3 asks for with `scrape_native_histograms: true`: protobuf first. */
const PROTOBUF_ACCEPT = {
  Accept:
    'application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited;q=0.7,application/openmetrics-text;version=1.0.0;q=0.6,text/plain;version=0.0.4;q=0.3,*/*;q=0.2',
  'Accept-Encoding': 'gzip',
};
const PROMETHEUS_ACCEPT = {
  Accept:
    'application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1',
  'Accept-Encoding': 'gzip',
};

/**
 * Forks this file as the server under test for `series` series (or, with `mode` '--serve-hung',
 * the hung-collect() server); resolves with `call(cmd)`, its ports and `close()`.
 */
function startScalingServer(series, mode = '--serve', execArgv = [], client = 'prom-client') {
  const child = fork(__filename, [mode, String(series), client], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], execArgv });
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  const pending = new Map();
  let seq = 0;
  child.on('message', ({ id, result, error }) => {
    const waiter = pending.get(id);
    pending.delete(id);
    if (!waiter) return;
    if (error) waiter.reject(new Error(`server: ${error}`));
    else waiter.resolve(result);
  });
  child.on('exit', (code) => {
    for (const waiter of pending.values()) waiter.reject(new Error(`server exited (${code})`));
    pending.clear();
  });
  const call = (cmd) =>
    new Promise((resolve, reject) => {
      const id = ++seq;
      pending.set(id, { resolve, reject });
      child.send({ id, cmd });
    });
  return call('ports').then((ports) => ({
    ports,
    call,
    async close() {
      process.removeListener('exit', killOnExit);
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.disconnect();
      await exited;
    },
  }));
}

/** One scrape, with the server's longest turn and its median turn while it ran. */
async function probedScrape(server, port, headers) {
  await server.call('probeStart');
  const r = await get200(port, '/metrics', headers);
  const probe = await server.call('probeStop');
  return { ms: r.ms, bytes: r.bytes, worstTurnMs: probe.worstMs, medianTurnMs: probe.medianMs };
}

async function measureSize({ series, rounds }, client) {
  const server = await startScalingServer(series, '--serve', [], client);
  const targets = {
    ours: [server.ports.ours, TEXT_ACCEPT],
    bare: [server.ports.bare, TEXT_ACCEPT],
    prometheus: [server.ports.ours, PROMETHEUS_ACCEPT],
    protobuf: [server.ports.ours, PROTOBUF_ACCEPT],
    ...(server.ports.bundle !== undefined && { bundle: [server.ports.bundle, TEXT_ACCEPT] }),
  };
  const samples = Object.fromEntries(Object.keys(targets).map((name) => [name, []]));
  let idle;
  try {
    // The machine's own noise: the server's longest turn over 2 s of doing nothing.
    await server.call('probeStart');
    await new Promise((resolve) => setTimeout(resolve, 2000));
    idle = await server.call('probeStop');
    const names = Object.keys(targets);
    for (const name of names) await probedScrape(server, ...targets[name]);
    for (let i = 0; i < rounds; i++) {
      // Rotate who goes first, so that none always follows the same neighbour.
      const order = names.map((_, k) => names[(i + k) % names.length]);
      for (const name of order) samples[name].push(await probedScrape(server, ...targets[name]));
    }
  } finally {
    await server.close();
  }
  const summary = {};
  for (const [name, list] of Object.entries(samples)) {
    summary[name] = {
      totalMs: median(list.map((s) => s.ms)),
      worstTurnMs: Math.max(...list.map((s) => s.worstTurnMs)),
      medianWorstTurnMs: median(list.map((s) => s.worstTurnMs)),
      medianTurnMs: median(list.map((s) => s.medianTurnMs)),
      bytes: list[list.length - 1].bytes,
    };
  }
  if (Math.abs(summary.ours.bytes - summary.bare.bytes) > 64) {
    throw new Error(
      `at ${series} series the router and bare ${client} answered different bodies (${summary.ours.bytes} vs ${summary.bare.bytes} bytes)`,
    );
  }
  return { series, rounds, client, idleWorstMs: idle.worstMs, indexMs: server.ports.indexMs, ...summary };
}

/** `met` for a stall: over the goal only counts when the idle server stayed under it in the same run. */
function stallVerdict(size) {
  if (size.ours.worstTurnMs <= STALL_GOAL_MS) return true;
  return size.idleWorstMs > STALL_GOAL_MS ? 'inconclusive' : false;
}

/**
 * Rows 5f-5k for prom-client 15 (whose series are listed in one step per metric), 5p-5u for
 * `@prometheus-io/client` 0.16 (walked one series per step), each against that client's own
 * `registry.metrics()` behind bare node:http, in the same run.
 */
const CLIENTS = [
  { client: 'prom-client', stall: 'fgh', time: 'ijk' },
  { client: '@prometheus-io/client', stall: 'pqr', time: 'stu' },
];

async function runScaling() {
  const rows = [];
  const details = [];
  for (const { client, stall, time } of CLIENTS) {
    const sizes = [];
    for (const size of SIZES) sizes.push(await measureSize(size, client));
    rows.push(...scalingRows(sizes, client, stall, time));
    details.push(...sizes);
  }
  return { rows, details };
}

function scalingRows(sizes, client, stallIds, timeIds) {
  const label = (n) => `${n.toLocaleString('en-US')} series`;
  const rows = [];
  const bundleText = (size, key) => (size.bundle === undefined ? '' : `, bundle ${ms(size.bundle[key])}`);
  for (const [i, size] of sizes.entries()) {
    const { ours, bare, prometheus, protobuf } = size;
    rows.push(
      row(
        `5${stallIds[i]}`,
        `/metrics stall at ${label(size.series)} (${client}): router's longest turn (median turn)`,
        `${ms(ours.worstTurnMs)} (${ms(ours.medianTurnMs)}); per scrape median ${ms(ours.medianWorstTurnMs)}; bare ${ms(bare.worstTurnMs)}${bundleText(size, 'worstTurnMs')}, OpenMetrics+gzip ${ms(prometheus.worstTurnMs)}, protobuf+gzip ${ms(protobuf.worstTurnMs)}; idle ${ms(size.idleWorstMs)}; once, at router creation: ${ms(size.indexMs)}`,
        `≤ ${STALL_GOAL_MS} ms`,
        stallVerdict(size),
      ),
    );
  }
  for (const [i, size] of sizes.entries()) {
    const { ours, bare, prometheus, protobuf } = size;
    const goal = size.series >= 100_000 ? 0.5 : size.series <= 1_000 ? 1 : null;
    rows.push(
      row(
        `5${timeIds[i]}`,
        `/metrics time at ${label(size.series)}: router / bare ${client} + node:http`,
        `${ratio(ours.totalMs / bare.totalMs)} (${ms(ours.totalMs)} / ${ms(bare.totalMs)})${bundleText(size, 'totalMs')}; OpenMetrics+gzip ${ms(prometheus.totalMs)}; protobuf+gzip ${ms(protobuf.totalMs)} (${ratio(protobuf.totalMs / prometheus.totalMs)} of OpenMetrics+gzip, ${(protobuf.bytes / 1e6).toFixed(1)} MB gzipped); ${(ours.bytes / 1e6).toFixed(1)} MB`,
        goal === null ? '-' : `≤ ${goal}×`,
        goal === null ? null : ours.totalMs / bare.totalMs <= goal,
        { baseline: 'HTTP' },
      ),
    );
  }
  return rows;
}

// --- scrapes at once, and scrapes nobody waits for (issue 30) --------------------------------

/** Twenty scrapes of the largest size, all at once: every turn must hold the goal with all of them running. */
const TOGETHER = { series: 100_000, scrapes: 20, rounds: 3 };
/** Scrapers that ask and hang up before the answer: the server's CPU after they left. */
const LEAVING = { series: 20_000, clients: 50, leaveAfterMs: 4, pollMs: 250, maxWaitMs: 30_000, rounds: 3 };
/** Scrapes timed out on a collect() that never settles: the server's heap after them. */
const HUNG = { scrapes: 1200, timeoutMs: 5, concurrency: 20 };

/** The server's longest turn while `scrapes` scrapes of `series` series run at once, each on its own connection. */
async function measureTogether() {
  const { series, scrapes, rounds } = TOGETHER;
  const server = await startScalingServer(series);
  const results = [];
  let idle;
  try {
    await server.call('probeStart');
    await sleep(2000);
    idle = await server.call('probeStop');
    await get200(server.ports.ours, '/metrics', TEXT_ACCEPT);
    for (let i = 0; i < rounds; i++) {
      const via = new http.Agent({ keepAlive: false, maxSockets: scrapes });
      await server.call('probeStart');
      const started = performance.now();
      const answers = await Promise.all(Array.from({ length: scrapes }, () => get(server.ports.ours, '/metrics', TEXT_ACCEPT, via)));
      const totalMs = performance.now() - started;
      const probe = await server.call('probeStop');
      via.destroy();
      const times = answers.map((a) => a.ms).sort((a, b) => a - b);
      results.push({
        worstMs: probe.worstMs,
        medianMs: probe.medianMs,
        totalMs,
        firstMs: times[0],
        lastMs: times[times.length - 1],
        ok: answers.filter((a) => a.status === 200).length,
      });
    }
  } finally {
    await server.close();
  }
  return { series, scrapes, idleWorstMs: idle.worstMs, rounds: results };
}

/**
 * Sends `count` GET /metrics on connections of their own and hangs up on all of them `afterMs`
 * after the last was sent; resolves once every socket is closed.
 */
async function askAndLeave(port, count, afterMs) {
  const sockets = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise((resolve, reject) => {
          const socket = net.connect(port, '127.0.0.1', () => {
            socket.write('GET /metrics HTTP/1.1\r\nHost: bench\r\nAccept: text/plain;version=0.0.4\r\n\r\n', () => resolve(socket));
          });
          socket.on('error', reject);
        }),
    ),
  );
  await sleep(afterMs);
  await Promise.all(
    sockets.map((socket) => {
      socket.removeAllListeners('error');
      socket.on('error', () => undefined);
      const closed = new Promise((resolve) => socket.once('close', resolve));
      socket.destroy();
      return closed;
    }),
  );
}

/**
 * The server's CPU (ms, every thread) spent after scrapers left, against one full scrape's: from
 * when the last one hung up until the server is quiet again (a poll interval with no more CPU than
 * idle), less what it spends idle over as long.
 */
async function measureLeaving() {
  const { series, clients, leaveAfterMs, pollMs, maxWaitMs, rounds } = LEAVING;
  const server = await startScalingServer(series);
  const fullMs = [];
  const afterMs = [];
  let idleRate;
  try {
    const { ours } = server.ports;
    await get200(ours, '/metrics', TEXT_ACCEPT);
    for (let i = 0; i < 5; i++) {
      const before = await server.call('cpu');
      await get200(ours, '/metrics', TEXT_ACCEPT);
      fullMs.push((await server.call('cpu')) - before);
    }
    // The server's own CPU with nothing to do (the IPC, its timers), per ms.
    const idleBefore = await server.call('cpu');
    await sleep(1000);
    idleRate = ((await server.call('cpu')) - idleBefore) / 1000;
    for (let i = 0; i < rounds; i++) {
      await askAndLeave(ours, clients, leaveAfterMs);
      const left = await server.call('cpu');
      const leftAt = performance.now();
      let last = left;
      for (;;) {
        await sleep(pollMs);
        const now = await server.call('cpu');
        const quiet = now - last <= idleRate * pollMs + 2;
        last = now;
        if (quiet || performance.now() - leftAt > maxWaitMs) break;
      }
      afterMs.push(Math.max(0, last - left - idleRate * (performance.now() - leftAt)));
      await sleep(200);
    }
  } finally {
    await server.close();
  }
  return { series, clients, leaveAfterMs, fullScrapeMs: median(fullMs), idleRate, afterLeftMs: afterMs };
}

/** The hung-collect() server's live heap growth over `HUNG.scrapes` timed-out scrapes of `path`, after a full GC. */
async function measureHung() {
  const server = await startScalingServer(0, '--serve-hung', ['--expose-gc']);
  const results = {};
  try {
    const via = new http.Agent({ keepAlive: true, maxSockets: HUNG.concurrency });
    const scrapeMany = async (path, count) => {
      for (let done = 0; done < count; done += HUNG.concurrency) {
        const answers = await Promise.all(
          Array.from({ length: HUNG.concurrency }, () => get(server.ports.hung, path, PROMETHEUS_ACCEPT, via)),
        );
        for (const a of answers) if (a.status !== 503) throw new Error(`a scrape of a hung collect() answered ${a.status}, not 503`);
      }
    };
    for (const [name, path] of [
      ['shared', '/metrics'],
      ['fresh', '/fresh/metrics'],
    ]) {
      await scrapeMany(path, 100);
      const before = await server.call('heap');
      await scrapeMany(path, HUNG.scrapes);
      const after = await server.call('heap');
      results[name] = { deltaBytes: after - before, perScrapeBytes: (after - before) / HUNG.scrapes };
    }
    via.destroy();
  } finally {
    await server.close();
  }
  return { ...HUNG, ...results };
}

async function runTogether() {
  const together = await measureTogether();
  const leaving = await measureLeaving();
  const hung = await measureHung();
  const worst = Math.max(...together.rounds.map((r) => r.worstMs));
  const mb = (bytes) => `${bytes >= 0 ? '+' : ''}${(bytes / 1e6).toFixed(2)} MB`;
  const rows = [
    row(
      '5m',
      `/metrics stall with ${together.scrapes} scrapes at once at ${together.series.toLocaleString('en-US')} series: longest turn (median turn)`,
      `${ms(worst)} (${ms(median(together.rounds.map((r) => r.medianMs)))}); per round ${together.rounds.map((r) => ms(r.worstMs)).join(', ')}; answers 200 ${together.rounds.map((r) => r.ok).join('/')} of ${together.scrapes}, first after ${ms(median(together.rounds.map((r) => r.firstMs)), 0)}, last after ${ms(median(together.rounds.map((r) => r.lastMs)), 0)} (median round); idle ${ms(together.idleWorstMs)}`,
      `≤ ${STALL_GOAL_MS} ms`,
      worst <= STALL_GOAL_MS ? true : together.idleWorstMs > STALL_GOAL_MS ? 'inconclusive' : false,
    ),
    row(
      '5n',
      `/metrics scrapes nobody reads: server CPU after ${leaving.clients} scrapers at ${leaving.series.toLocaleString('en-US')} series hung up ${leaving.leaveAfterMs} ms after asking`,
      `${ms(median(leaving.afterLeftMs))} (rounds ${leaving.afterLeftMs.map((x) => ms(x)).join(', ')}; until the server was quiet, idle CPU taken off); one full scrape ${ms(leaving.fullScrapeMs)}`,
      '≤ one full scrape',
      median(leaving.afterLeftMs) <= leaving.fullScrapeMs,
    ),
    row(
      '5o',
      `/metrics memory after ${hung.scrapes.toLocaleString('en-US')} scrapes timed out on a collect() that never settles: live heap growth after GC`,
      `one promise shared by every scrape: ${mb(hung.shared.deltaBytes)} (${hung.shared.perScrapeBytes.toFixed(0)} B per scrape); a fresh promise per scrape, all kept by the host: ${mb(hung.fresh.deltaBytes)} (${hung.fresh.perScrapeBytes.toFixed(0)} B per scrape, the host's promises included)`,
      '≤ 1 MB (shared promise)',
      hung.shared.deltaBytes <= 1e6,
    ),
  ];
  return { rows, details: { together, leaving, hung } };
}

// --- the server under test, when forked with --serve N -----------------------------------------

/**
 * Serves one registry of `series` gauge series and series/10 histograms, made with `client`, three
 * ways (express-prom-bundle only for prom-client, which it is written for); answers IPC commands.
 */
async function serve(series, client) {
  const express = require('express');
  const { Gauge, Histogram, Registry } = require(client);
  const { createControllerMetrics, createMetricsRouter } = require('controller-introspection');

  const registry = new Registry();
  const metrics = createControllerMetrics(registry, undefined, { prefix: 'ctl_', nativeHistograms: true });
  metrics.recordReconciliation(0.2, true);
  metrics.setLeader(true);
  const objects = new Gauge({
    name: 'bench_objects',
    help: 'One series per watched object',
    labelNames: ['namespace', 'name'],
    registers: [registry],
  });
  for (let i = 0; i < series; i++) objects.set({ namespace: `team-${i % 40}`, name: `ingress-${i}` }, i * 1.5);
  const sync = new Histogram({
    name: 'bench_object_sync_seconds',
    help: 'Sync time per object',
    labelNames: ['namespace', 'name'],
    registers: [registry],
  });
  for (let i = 0; i < series / 10; i++)
    for (let k = 0; k < 3; k++) sync.observe({ namespace: `team-${i % 40}`, name: `ingress-${i}` }, (i % 100) * 0.01 * k);

  const listen = (server) => {
    server.keepAliveTimeout = 60_000;
    return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server.address().port)));
  };
  const ours = express();
  ours.disable('x-powered-by');
  // Creating the router: reported beside the scrapes' stalls (it lists nothing since the series
  // index went; each scrape lists the series instead).
  const indexStarted = performance.now();
  ours.use(createMetricsRouter(registry));
  const indexMs = performance.now() - indexStarted;
  let bundle;
  if (client === 'prom-client') {
    bundle = express();
    bundle.disable('x-powered-by');
    bundle.use(require('express-prom-bundle')({ promRegistry: registry, includeUp: false, autoregister: true }));
  }
  const ports = {
    ours: await listen(http.createServer(ours)),
    bare: await listen(
      http.createServer(async (req, res) => {
        const body = await registry.metrics();
        res.writeHead(200, { 'Content-Type': registry.contentType, 'Content-Length': Buffer.byteLength(body) });
        res.end(body);
      }),
    ),
    bundle: bundle === undefined ? undefined : await listen(http.createServer(bundle)),
  };

  // The probe: a 1 ms interval whose gaps are the event loop's turns (resolution 1 ms).
  let gaps = [];
  let timer;
  const commands = {
    ports: () => ({ ...ports, indexMs }),
    /** This process's CPU so far, every thread, in ms. */
    cpu: () => {
      const { user, system } = process.cpuUsage();
      return (user + system) / 1000;
    },
    probeStart: () => {
      gaps = [];
      let last = performance.now();
      timer = setInterval(() => {
        const now = performance.now();
        gaps.push(now - last);
        last = now;
      }, 1);
      // Counts the turn that ends the probe too.
      commands.last = () => performance.now() - last;
      return true;
    },
    probeStop: () => {
      clearInterval(timer);
      gaps.push(commands.last());
      return { worstMs: Math.max(...gaps), medianMs: median(gaps), turns: gaps.length };
    },
  };
  answerCommands(commands);
}

/**
 * Serves two registries whose collect() never settles, with a short scrape timeout: one hands every
 * scrape the same promise (a refresh in flight), the other a fresh one per scrape, all of them kept
 * (`/fresh/metrics`). `heap` answers the live heap after a full GC (forked with --expose-gc).
 */
async function serveHung() {
  const express = require('express');
  const { Gauge, Registry } = require('prom-client');
  const { createControllerMetrics, createMetricsRouter } = require('controller-introspection');
  const hungRegistry = (collect) => {
    const registry = new Registry();
    createControllerMetrics(registry, undefined, { prefix: 'ctl_' }).recordReconciliation(0.2, true);
    new Gauge({ name: 'bench_hung', help: 'collect() that never settles', registers: [registry], collect });
    return registry;
  };
  const shared = new Promise(() => undefined);
  const kept = [];
  const app = express();
  app.use(
    createMetricsRouter(
      hungRegistry(() => shared),
      { scrapeTimeoutMs: HUNG.timeoutMs },
    ),
  );
  app.use(
    '/fresh',
    createMetricsRouter(
      hungRegistry(() => {
        const fresh = new Promise(() => undefined);
        kept.push(fresh);
        return fresh;
      }),
      { scrapeTimeoutMs: HUNG.timeoutMs },
    ),
  );
  const server = http.createServer(app);
  server.keepAliveTimeout = 60_000;
  const port = await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server.address().port)));
  answerCommands({
    ports: () => ({ hung: port }),
    heap: () => {
      global.gc();
      global.gc();
      return process.memoryUsage().heapUsed;
    },
  });
}

if (process.argv[2] === '--serve') serve(Number(process.argv[3]), process.argv[4] ?? 'prom-client');
else if (process.argv[2] === '--serve-hung') serveHung();
else main(run);
