'use strict';
// Benchmark 14: event watches under hostile load, measured in a host process of their own (the
// clients run here). (a) The longest event-loop stall while a 50 MB ring is replayed to a watch
// (`since=0`), beside the same events read through the sliced `/events?limit=` pages; (b) RSS per
// watcher for 64 watchers that replay from `since=0` and never read; (c) 1 M events published in
// bursts of 1 000 with 64 watchers whose sockets are full, beside the same bursts with none.

const http = require('node:http');
const net = require('node:net');
const path = require('node:path');
const { fork } = require('node:child_process');
const { main, report, row, sleep } = require('./common');

const RING = 100_000;
const EVENT_BYTES = 500; // ~50 MB of JSON in the ring
const WATCHERS = 64;

function startHost() {
  const child = fork(path.join(__dirname, 'fixtures', 'watch-host.js'), [], {
    execArgv: ['--expose-gc'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const pending = new Map();
  let seq = 0;
  let ready;
  const port = new Promise((resolve) => (ready = resolve));
  child.on('message', (m) => {
    if (m.port) return ready(m.port);
    const waiter = pending.get(m.id);
    pending.delete(m.id);
    if (m.error) waiter.reject(new Error(m.error));
    else waiter.resolve(m.result);
  });
  const call = (cmd, args = {}) =>
    new Promise((resolve, reject) => {
      const id = ++seq;
      pending.set(id, { resolve, reject });
      child.send({ id, cmd, args });
    });
  return { port, call, close: () => child.disconnect() };
}

/** A client that reads a body to its end (or until `needle` passed by), counting bytes only. */
function read(port, urlPath, needle) {
  return new Promise((resolve, reject) => {
    let tail = '';
    const req = http.get({ host: '127.0.0.1', port, path: urlPath, agent: false }, (res) => {
      res.setEncoding('latin1');
      res.on('data', (chunk) => {
        if (needle && (tail + chunk).includes(needle)) {
          req.destroy();
          resolve();
        }
        tail = chunk.slice(-64);
      });
      res.on('end', resolve);
    });
    req.on('error', (err) => (needle ? undefined : reject(err)));
  });
}

/** A watch over a raw socket that never reads once its headers came. */
async function stuckWatch(port, urlPath) {
  const socket = net.connect(port, '127.0.0.1');
  await new Promise((resolve) => socket.once('connect', resolve));
  await new Promise((resolve) => {
    socket.once('data', () => {
      socket.pause();
      resolve();
    });
    socket.write(`GET ${urlPath} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
  });
  return socket;
}

async function run() {
  const host = startHost();
  const port = await host.port;
  await host.call('fill', { events: RING, bytes: EVENT_BYTES });
  const last = `"seq":${RING},`;

  // (a) Baseline: the whole ring through /events pages, as the issue measured it; then the replay.
  await host.call('monitor');
  for (let since = 0; since < RING; since += 1000) await read(port, `/debug/vars/events?since=${since}&limit=1000`);
  const pages = await host.call('stop');
  const replays = [];
  for (let i = 0; i < 3; i++) {
    await host.call('monitor');
    await read(port, '/debug/vars/events?watch=1&since=0', last);
    replays.push(await host.call('stop'));
  }
  const replay = replays.reduce((a, b) => (b.worstMs > a.worstMs ? b : a));

  // (b) 64 watchers replaying the ring that never read.
  const rssBefore = await host.call('rss');
  await host.call('monitor');
  const stuck = [];
  for (let i = 0; i < WATCHERS; i++) stuck.push(await stuckWatch(port, '/debug/vars/events?watch=1&since=0'));
  await sleep(2000);
  const stuckStall = await host.call('stop');
  const perWatcher = ((await host.call('rss')) - rssBefore) / WATCHERS;

  // (c) Bursts with those 64 full sockets, beside the same bursts after they are gone.
  await host.call('monitor');
  const loaded = await host.call('publish', { total: 1_000_000, burst: 1000 });
  await sleep(500);
  const loadedLoop = await host.call('stop');
  for (const s of stuck) s.destroy();
  await sleep(500);
  await host.call('monitor');
  const idle = await host.call('publish', { total: 1_000_000, burst: 1000 });
  const idleLoop = await host.call('stop');
  host.close();

  const f = (v) => v.toFixed(1);
  console.log(
    `[14] watches under load: a ${RING.toLocaleString('en-US')}-event ring (~${(RING * EVENT_BYTES) / 1e6} MB), ${WATCHERS} stuck watchers`,
  );
  report(
    [
      row(
        '14a',
        'worst stall from a watch replay (since=0, 50 MB ring)',
        `${f(replay.worstMs)} ms worst of 3 (p99 ${f(replay.p99Ms)}); /events pages ${f(pages.worstMs)} ms`,
        '≤ 20 ms',
        replay.worstMs <= 20,
      ),
      row(
        '14b',
        `RSS per stuck watcher (${WATCHERS} replaying, never reading)`,
        `${(perWatcher / 1024).toFixed(0)} KiB (stall meanwhile ${f(stuckStall.worstMs)} ms)`,
        '≤ 512 KiB',
        perWatcher <= 512 * 1024,
      ),
      row(
        '14c',
        `1 M events in bursts of 1 000, ${WATCHERS} full watchers`,
        `loop p99 ${f(loadedLoop.p99Ms)} ms, worst ${f(loadedLoop.worstMs)} ms; publish ${(loaded.spentMs / idle.spentMs).toFixed(2)}× none (none: p99 ${f(idleLoop.p99Ms)}, worst ${f(idleLoop.worstMs)})`,
        '≤ 20 ms worst',
        loadedLoop.worstMs <= 20,
      ),
    ],
    { pages, replays, stuckStall, perWatcher, loaded, loadedLoop, idle, idleLoop },
  );
}

main(run);
