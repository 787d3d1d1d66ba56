'use strict';
// Benchmark 8: event watches must cost the host nothing it can feel. publishEvent's rate with no
// watcher and with 10 watches open over real sockets (9 reading, 1 stalled: it never reads), in
// bursts that let the watches run between them; heap after GC with the stalled watch over 1 M
// events; and the latency from publishEvent to the event's bytes arriving at a watching client on
// an idle host. Needs --expose-gc (bench/run.js passes it).

const http = require('node:http');
const net = require('node:net');
const { performance } = require('node:perf_hooks');
const express = require('express');
const { createIntrospectionState, createIntrospectionRouter } = require('controller-introspection');
const { main, median, percentile, report, row } = require('./common');

const BURST = 10_000;
const BURSTS = 200; // 2 M events per measurement
const TYPES = [
  'reconciliation.triggered',
  'config.validated',
  'deployment.started',
  'deployment.endpoint_updated',
  'deployment.completed',
  'reconciliation.completed',
];

const turn = () => new Promise((resolve) => setImmediate(resolve));

/** publishEvent rate, counting only the time inside publishEvent bursts (the watches run between). */
async function burstRate(state, bursts = BURSTS) {
  let spent = 0;
  for (let b = 0; b < bursts; b++) {
    const start = performance.now();
    for (let i = 0; i < BURST; i++) state.publishEvent(TYPES[i % 6], TYPES[(i + 1) % 6]);
    spent += performance.now() - start;
    await turn();
  }
  return (bursts * BURST) / (spent / 1000);
}

function heapAfterGc() {
  global.gc();
  global.gc();
  return process.memoryUsage().heapUsed;
}

async function serve(state) {
  const router = createIntrospectionRouter(state, { pprof: false, watch: { maxWatchers: 64 } });
  const app = express();
  app.use(router);
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return { router, server, port: server.address().port };
}

/** A watch that reads (and counts bytes), or one that never reads. */
function openWatch(port, stalled) {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1', () => {
      socket.write('GET /debug/vars/events?watch=1 HTTP/1.1\r\nHost: bench\r\n\r\n');
      if (stalled) setTimeout(() => socket.pause(), 20);
      let bytes = 0;
      socket.on('data', (chunk) => (bytes += chunk.length));
      setTimeout(() => resolve({ socket, bytes: () => bytes }), 50);
    });
  });
}

/**
 * Publish → bytes leaving: the server side of the watch's socket is instrumented, so the time is
 * taken when the event's bytes are handed to the socket (what the host pays), and, separately,
 * when a client in this process has read them (loopback and the client's own turn included).
 */
async function latency(state, server, port) {
  const leaving = [];
  const arriving = [];
  const pending = new Map();
  const seqOf = (text) => Number(/"seq":(\d+)/.exec(text)?.[1]);
  server.once('connection', (socket) => {
    const write = socket.write;
    socket.write = function timedWrite(chunk, ...rest) {
      const text = typeof chunk === 'string' ? chunk : Buffer.isBuffer(chunk) ? chunk.toString('latin1') : '';
      const seq = seqOf(text);
      if (pending.has(seq)) leaving.push(performance.now() - pending.get(seq));
      return write.call(this, chunk, ...rest);
    };
  });
  await new Promise((resolve) => {
    http.get({ host: '127.0.0.1', port, path: '/debug/vars/events?watch=1&type=bench.latency', agent: false }, (res) => {
      res.setEncoding('utf8');
      res.on('data', (chunk) => {
        const seq = seqOf(chunk);
        if (pending.has(seq)) arriving.push(performance.now() - pending.get(seq));
      });
      setTimeout(resolve, 50);
    });
  });
  for (let i = 0; i < 300; i++) {
    await new Promise((resolve) => setTimeout(resolve, 3));
    state.publishEvent('bench.latency', String(i));
    pending.set(state.eventStats().published, performance.now());
  }
  await new Promise((resolve) => setTimeout(resolve, 100));
  return { leaving, arriving };
}

async function run() {
  if (typeof global.gc !== 'function') throw new Error('run with node --expose-gc (npm run bench does)');
  const none = createIntrospectionState();
  await burstRate(none, 50); // warm-up

  const watched = createIntrospectionState();
  const { router, server, port } = await serve(watched);
  const watches = [];
  for (let i = 0; i < 9; i++) watches.push(await openWatch(port, false));
  const stalled = await openWatch(port, true);
  await burstRate(watched, 50); // warm-up

  // Alternate, so drift on a shared machine hits both alike.
  const rateNone = [];
  const rateWatched = [];
  for (let r = 0; r < 3; r++) {
    rateNone.push(await burstRate(none));
    rateWatched.push(await burstRate(watched));
  }
  const readers = watches.map((w) => w.bytes());

  // Memory with the stalled watch: 100 k then 1 M more events.
  await burstRate(watched, 10);
  const heapBefore = heapAfterGc();
  await burstRate(watched, 100);
  const heapAfter = heapAfterGc();

  const { leaving: latencies, arriving } = await latency(watched, server, port);
  for (const w of [...watches, stalled]) w.socket.destroy();
  await router.close();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  if (readers.some((b) => b === 0)) throw new Error('a reading watch received nothing');

  const mps = (n) => `${(n / 1e6).toFixed(1)} M/s`;
  const growth = heapAfter - heapBefore;
  const rn = median(rateNone);
  const rw = median(rateWatched);
  const p50 = median(latencies);
  const worst = Math.max(...latencies);
  console.log(
    `[8] event watches: publishEvent in bursts of ${BURST} (median of 3 × ${(BURST * BURSTS) / 1e6} M), 10 watches over loopback (1 stalled)`,
  );
  const rows = [
    row('8a', 'publishEvent rate, no watch', mps(rn), '≥ 5 M/s', rn >= 5e6),
    row(
      '8b',
      'publishEvent rate, 10 watches (1 stalled)',
      `${mps(rw)} (${((rw / rn) * 100).toFixed(0)} % of no watch)`,
      '≥ 5 M/s',
      rw >= 5e6,
    ),
    row(
      '8c',
      'heap growth over 1 M events with a stalled watch (after GC)',
      `${(growth / 1024).toFixed(0)} KiB`,
      '≤ 1 MiB',
      growth <= 1048576,
    ),
    row(
      '8d',
      'publish → bytes leaving for a watcher (idle host)',
      `median ${p50.toFixed(2)} ms, p99 ${percentile(latencies, 99).toFixed(2)} ms, worst ${worst.toFixed(2)} ms (${latencies.length})`,
      '≤ 1 ms',
      percentile(latencies, 99) <= 1,
    ),
    row(
      '8e',
      'context: publish → read by a client in the same process',
      `median ${median(arriving).toFixed(2)} ms, p99 ${percentile(arriving, 99).toFixed(2)} ms, worst ${Math.max(...arriving).toFixed(2)} ms`,
      '-',
      null,
    ),
  ];
  report(rows, { rateNone, rateWatched, heapBefore, heapAfter, latencies, arriving });
}

main(run);
