'use strict';
// Benchmark 17 (issue 41): the fleet view over 50 replicas, from the host's side. A real
// kube-apiserver (bench/control-plane.js) holds 50 Pods of one Deployment's labels, their
// status.podIP 127.0.0.2 to 127.0.0.51. Three of them are replicas of the Kubernetes example
// (examples/dist/kubernetes/wiring.js, electing on one Lease); the other 47 are small replicas in a
// child process, each the package's own introspection router with its own state (no leader
// election of their own): 37 answer at once, 5 are slow (every answer 100 to 400 ms late, within
// the timeout), 4 hang (accept, never answer), and one answers 100 MB (a body that long for its
// pipeline variable).
//
// The host is this process: createFleetView with client-node's CoreV1Api, mounted on an Express app
// on loopback, asked GET /debug/fleet over HTTP (minIntervalMs 0, so every request gathers). In
// rounds that alternate the two (so drift in the machine's load hits both alike): the host's worst
// event-loop turn (the gap between setImmediate turns, bench/common.js's worstBlock) while it sits
// idle for as long as a gather takes, and while it gathers. Also: each gather's time against the
// documented bound (ceil(replicas / concurrency) × timeoutMs, plus timeoutMs for the list), what
// each hung replica cost (its read_ms against timeoutMs), what the 100 MB replica cost (bytes read
// are bounded by maxReplicaBytes), and the heap after a forced GC before and after 20 gathers.

const { fork, spawn } = require('node:child_process');
const http = require('node:http');
const path = require('node:path');
const express = require('express');
const { main, median, ms, ratio, report, row, sleep, worstBlock } = require('./common');
const { freePorts, startControlPlane } = require('./control-plane');

const REPO = path.resolve(__dirname, '..');
const WIRING = path.join(REPO, 'examples', 'dist', 'kubernetes', 'wiring.js');
const NS = 'fleet-bench';
const REPLICAS = 50;
const REAL = 3;
const SLOW = 5;
const HUNG = 4;
const ROUNDS = Number(process.env.BENCH_FLEET_ROUNDS || 5);
const TIMEOUT_MS = 3000;
const CONCURRENCY = 8;
const DELAY_BOUND_MS = 20;

/** The address of replica `i` (0-based). */
const addressOf = (i) => `127.0.0.${i + 2}`;
const podOf = (i) => `replica-${String(i).padStart(2, '0')}`;

// --- the small replicas, in a child process ------------------------------------------------------

async function serveSmallReplicas(port, first) {
  const { createIntrospectionRouter, createIntrospectionState } = require('../dist');
  const servers = [];
  for (let i = first; i < REPLICAS; i++) {
    const kind = i < first + SLOW ? 'slow' : i < first + SLOW + HUNG ? 'hung' : i === REPLICAS - 1 ? 'huge' : 'fast';
    const state = createIntrospectionState();
    state.setConfig({ templates: {}, watched_resources: [] }, '1');
    state.publishVar('pipeline', () => ({
      correlation_id: `c-${i}`,
      status: 'succeeded',
      started: new Date(Date.now() - 2000).toISOString(),
      ended: new Date(Date.now() - 1900).toISOString(),
      duration_ms: 100,
      failed_phase: null,
      cycles: { total: 10, succeeded: 10, failed: 0 },
    }));
    const app = express();
    // Slow, but within the view's timeout: each answer 100 to 400 ms late (7 answers, 2 at a time).
    if (kind === 'slow') app.use((_req, _res, next) => void setTimeout(next, 100 + Math.random() * 300));
    if (kind === 'hung') app.use(() => {});
    if (kind === 'huge')
      app.get('/debug/vars/pipeline', (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        const chunk = Buffer.alloc(64 * 1024, 0x20);
        let sent = 0;
        const pump = () => {
          while (!res.destroyed && sent < 100 * 1024 * 1024) {
            sent += chunk.length;
            if (!res.write(chunk)) return void res.once('drain', pump);
          }
          if (!res.destroyed) res.end();
        };
        pump();
      });
    app.use(createIntrospectionRouter(state, { pprof: false }));
    await new Promise((resolve) => servers.push(app.listen(port, addressOf(i), resolve)));
  }
  process.send({ ready: true });
}

// --- the host ------------------------------------------------------------------------------------

function getFleet(port) {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path: '/debug/fleet', agent: false }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        if (res.statusCode !== 200)
          return reject(new Error(`GET /debug/fleet: ${res.statusCode} ${Buffer.concat(chunks).toString().slice(0, 300)}`));
        resolve(JSON.parse(Buffer.concat(chunks).toString()));
      });
    });
    req.on('error', reject);
  });
}

function heapAfterGc() {
  global.gc();
  global.gc();
  return process.memoryUsage().heapUsed;
}

async function run() {
  if (typeof global.gc !== 'function') throw new Error('run with --expose-gc (bench/run.js does)');
  const { createFleetView } = require('../dist');
  const k8s = await import('@kubernetes/client-node');
  const plane = await startControlPlane();
  const children = [];
  const servers = [];
  try {
    await plane.namespace(NS);
    for (let i = 0; i < REPLICAS; i += 10)
      await Promise.all(
        Array.from({ length: Math.min(10, REPLICAS - i) }, (_, j) =>
          plane.runningPod(NS, podOf(i + j), addressOf(i + j), { app: 'lb-controller' }),
        ),
      );
    const [port] = await freePorts(1);

    const small = fork(__filename, ['replicas', String(port), String(REAL)], { stdio: 'inherit' });
    children.push(small);
    await new Promise((resolve, reject) => {
      small.once('message', resolve);
      small.once('exit', (code) => reject(new Error(`small replicas exited (${code})`)));
    });
    const kubeconfig = plane.kubeconfig(plane.adminToken);
    for (let i = 0; i < REAL; i++) {
      const child = spawn(process.execPath, [WIRING], {
        env: {
          ...process.env,
          KUBECONFIG: kubeconfig,
          POD_NAMESPACE: NS,
          POD_NAME: podOf(i),
          PORT: String(port),
          BIND_ADDRESS: addressOf(i),
          DRAIN_DELAY_MS: '0',
        },
        stdio: ['ignore', 'ignore', 'inherit'],
      });
      children.push(child);
    }

    const kc = new k8s.KubeConfig();
    kc.loadFromFile(kubeconfig);
    const view = createFleetView(kc.makeApiClient(k8s.CoreV1Api), {
      namespace: NS,
      selector: 'app=lb-controller',
      port,
      tokenFile: null,
      timeoutMs: TIMEOUT_MS,
      concurrency: CONCURRENCY,
      minIntervalMs: 0,
    });
    const app = express().use(view);
    const hostServer = await new Promise((resolve) => {
      const s = app.listen(0, '127.0.0.1', () => resolve(s));
    });
    servers.push(hostServer);
    const hostPort = hostServer.address().port;

    // Until the three real replicas answer.
    const deadline = Date.now() + 60_000;
    for (;;) {
      const r = await getFleet(hostPort);
      if (r.replicas.slice(0, REAL).every((x) => x.reachable && x.ready)) break;
      if (Date.now() > deadline) throw new Error(`the real replicas never answered: ${JSON.stringify(r.replicas.slice(0, REAL))}`);
      await sleep(500);
    }

    const gathers = [];
    const idle = [];
    let last;
    for (let round = 0; round < ROUNDS; round++) {
      const g = await worstBlock(() => getFleet(hostPort));
      gathers.push({ totalMs: g.totalMs, worstMs: g.worstMs });
      last = g.result;
      const b = await worstBlock(() => sleep(g.totalMs));
      idle.push({ worstMs: b.worstMs });
    }
    const heapBefore = heapAfterGc();
    for (let i = 0; i < 20; i++) await getFleet(hostPort);
    const heapAfter = heapAfterGc();

    const bound = Math.ceil(REPLICAS / CONCURRENCY) * TIMEOUT_MS + TIMEOUT_MS;
    const times = gathers.map((g) => g.totalMs);
    const worstGather = Math.max(...gathers.map((g) => g.worstMs));
    const worstIdle = Math.max(...idle.map((g) => g.worstMs));
    const hungPods = new Set(Array.from({ length: HUNG }, (_, k) => podOf(REAL + SLOW + k)));
    const hung = last.replicas.filter((r) => hungPods.has(r.pod));
    const slow = last.replicas.filter((r) => r.pod >= podOf(REAL) && r.pod < podOf(REAL + SLOW));
    const huge = last.replicas.find((r) => r.pod === podOf(REPLICAS - 1));
    const readable = last.replicas.filter((r) => r.reachable).length;
    console.log(`  findings: ${last.findings.map((f) => `${f.kind}(${f.replicas.length})`).join(', ')}`);
    const rows = [
      row(
        '17a',
        `GET /debug/fleet over ${REPLICAS} replicas (${REAL} real, ${SLOW} slow, ${HUNG} hung, one of 100 MB): time, median (worst)`,
        `${ms(median(times), 0)} (${ms(Math.max(...times), 0)}); ${readable} read`,
        `≤ ${ms(bound, 0)}`,
        Math.max(...times) <= bound,
      ),
      row(
        '17b',
        "the host's worst event-loop turn while gathering / while idle as long (same rounds)",
        `${ms(worstGather)} / ${ms(worstIdle)} (${ratio(worstGather / Math.max(worstIdle, 0.01))})`,
        `≤ idle + ${DELAY_BOUND_MS} ms`,
        worstGather <= worstIdle + DELAY_BOUND_MS,
      ),
      row(
        '17c',
        `what a hung replica cost: its read_ms, worst of ${hung.length}`,
        `${ms(Math.max(...hung.map((r) => r.read_ms)), 0)} (${hung.filter((r) => !r.reachable).length} of ${HUNG} named unreachable); slow ones read: ${slow.filter((r) => r.reachable).length} of ${SLOW}, worst ${ms(Math.max(...slow.map((r) => r.read_ms)), 0)}`,
        `≤ timeoutMs ${ms(TIMEOUT_MS, 0)} + 250`,
        hung.every((r) => !r.reachable) && Math.max(...hung.map((r) => r.read_ms)) <= TIMEOUT_MS + 250,
      ),
      row('17d', 'the replica answering 100 MB: read_ms, and why it was not read', `${ms(huge.read_ms, 0)}: ${huge.error}`, '-', null),
      row(
        '17e',
        'heap after a forced GC, after 20 gathers minus before',
        `${((heapAfter - heapBefore) / 1024 / 1024).toFixed(1)} MB`,
        '≤ 8 MB (concurrency × maxReplicaBytes)',
        heapAfter - heapBefore <= 8 * 1024 * 1024,
      ),
    ];
    report(rows, { gathers, idle, heapBefore, heapAfter, findings: last.findings });
    await view.close();
  } finally {
    for (const s of servers) {
      s.closeAllConnections();
      s.close();
    }
    for (const c of children) c.kill('SIGKILL');
    await plane.stop();
  }
}

if (process.argv[2] === 'replicas') {
  serveSmallReplicas(Number(process.argv[3]), Number(process.argv[4])).catch((err) => {
    console.error(err);
    process.exit(1);
  });
} else {
  main(run);
}
