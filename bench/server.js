'use strict';
// The server under test: a controller host that mounts the built package the way a user does, in
// its own process, driven by the benchmark over IPC. Options (JSON in argv[2]):
//   pprof    pprof options of the introspection router, or false (default {})
//   mount    false: no introspection router at all (the baseline of always-on costs)
//   metrics  also serve /metrics three ways: the package's router, prom-client behind bare
//            node:http (the baseline), and that bare handler inside Express (context)
//
// Commands (see `commands` below) build the generated state, time JSON.stringify in this process,
// watch the event loop with monitorEventLoopDelay, force a GC and run the host's CPU-bound loop.

const http = require('node:http');
const { monitorEventLoopDelay, performance } = require('node:perf_hooks');
const express = require('express');
const promBundle = require('express-prom-bundle');
const { Writable } = require('node:stream');
const { JsonStreamStringify } = require('json-stream-stringify');
const { Gauge, Registry } = require('prom-client');
const {
  createIntrospectionState,
  createIntrospectionRouter,
  createMetricsRouter,
  createControllerMetrics,
  isProfiling,
} = require('controller-introspection');
const { writeJson } = require('../dist/json-stream/index.js');
const { worstBlock } = require('./common');
const { renderLoadBalancerConfig } = require('../examples/dist/controller/simulation');

const options = JSON.parse(process.argv[2] || '{}');
const state = createIntrospectionState();

// --- generated state ------------------------------------------------------------------------

// A fixed-size template set: field selection of a template must not depend on the state's size.
const TEMPLATES = {
  'haproxy.cfg': Array.from(
    { length: 120 },
    (_, i) => `backend {{ .Backends[${i}].Name }}\n  balance roundrobin\n  server {{ .Name }} {{ .Address }}:{{ .Port }} check`,
  ).join('\n'),
  'maps/hosts.map': '{{ range .Ingresses }}{{ .Host }} {{ .Backend }}\n{{ end }}',
  'errors/500.http': 'HTTP/1.0 500 Internal Server Error\r\nContent-Type: text/html\r\n\r\n<h1>500</h1>\r\n',
};

let endpoints = {};
state.publishVar('endpoints', () => endpoints);

/**
 * Fills the state with about `mb` MB of JSON, shaped like a big controller's: 55 % watched
 * resources (many small objects), 30 % rendered configuration (one long string), 15 % a custom
 * variable of endpoints per service (nested arrays), plus a full event ring.
 */
function setState({ mb }) {
  const budget = mb * 1e6;
  const watched = [];
  for (let i = 0, bytes = 0; bytes < budget * 0.55; i++) {
    watched.push({
      group: 'networking.k8s.io',
      version: 'v1',
      resource: 'ingresses',
      namespace: `team-${i % 97}`,
      name: `ingress-${i}`,
      labelSelector: `app=web-${i % 1000},tier=frontend`,
      annotations: { 'haproxy.org/timeout-server': `${30 + (i % 30)}s`, 'haproxy.org/check': i % 3 === 0 ? 'false' : 'true' },
      generation: i,
    });
    bytes += 270;
  }
  const lines = [];
  for (let i = 0, bytes = 0; bytes < budget * 0.3; i++) {
    const line = `  server svc-${i >> 4}-${i & 15} 10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}:8080 check inter 2s fall 3 rise 2`;
    lines.push(line);
    bytes += line.length + 1;
  }
  endpoints = {};
  for (let s = 0, bytes = 0; bytes < budget * 0.15; s++) {
    endpoints[`svc-${s}`] = Array.from({ length: 16 }, (_, e) => ({ ip: `10.1.${s & 255}.${e}`, port: 8080, ready: e % 5 !== 0 }));
    bytes += 16 * 42 + 12;
  }
  state.setConfig({ templates: TEMPLATES, watched_resources: watched, controller: { reconcile_interval_ms: 1000 } }, String(mb));
  state.setRendered(`${lines.join('\n')}\n`);
  state.setResourceCounts({
    ingresses: watched.length,
    services: Object.keys(endpoints).length,
    endpoints: Object.keys(endpoints).length * 16,
    'lb-pods': 3,
  });
  state.setCredentials({ dataplane: { username: 'admin', password: 'secret' } }, '1');
  state.setAuxFiles({ ssl_certificates: [{ name: 'default.pem', path: '/etc/haproxy/certs/default.pem', content: 'x'.repeat(3000) }] });
  for (let i = 0; i < 1000; i++) state.publishEvent('deployment.pod_updated', `lb-pod-${i % 3} updated (${i} bytes)`);
  if (global.gc) global.gc();
  return { watched: watched.length, renderedLines: lines.length, services: Object.keys(endpoints).length };
}

/** Times JSON.stringify of exactly the object the `state` endpoint serves, `reps` times. */
async function stringify({ reps = 5, name = 'state' }) {
  const times = [];
  let bytes = 0;
  for (let i = 0; i < reps; i++) {
    const reading = await state.readVar(name);
    const start = performance.now();
    const text = JSON.stringify(reading.value);
    times.push(performance.now() - start);
    bytes = Buffer.byteLength(text);
    await new Promise((resolve) => setImmediate(resolve));
  }
  return { times, bytes };
}

/**
 * In-process, into a sink that discards what it is given: JSON.stringify of the `state` variable
 * against the package's streaming writer, each after a full collection, alternating. The writer's
 * longest slice is the longest gap between two event-loop turns while it runs.
 */
async function nullSink({ reps = 5 }) {
  const stringify = [];
  const streamed = [];
  const slices = [];
  const { value } = await state.readVar('state');
  for (let i = 0; i < reps; i++) {
    gc();
    await new Promise((resolve) => setTimeout(resolve, 20));
    let start = performance.now();
    JSON.stringify(value);
    stringify.push(performance.now() - start);
    gc();
    await new Promise((resolve) => setTimeout(resolve, 20));
    const sink = new Writable({ decodeStrings: false, write: (chunk, encoding, callback) => callback() });
    start = performance.now();
    const { worstMs } = await worstBlock(() => writeJson(sink, value));
    streamed.push(performance.now() - start);
    slices.push(worstMs);
  }
  return { stringify, streamed, slices };
}

// --- event-loop stalls ----------------------------------------------------------------------

let histogram;
let gapTimer;
let gapWorst = 0;

function monitorStart() {
  // 1 ms resolution: a stall shows as one delay sample of about its length (plus up to 1 ms).
  histogram = monitorEventLoopDelay({ resolution: 1 });
  histogram.enable();
  // The histogram misses a stall that begins before its first sample; a 1 ms interval that
  // measures the gaps between its own runs sees every one (at most 1 ms too long).
  gapWorst = 0;
  let last = performance.now();
  gapTimer = setInterval(() => {
    const now = performance.now();
    gapWorst = Math.max(gapWorst, now - last);
    last = now;
  }, 1);
}

function monitorStop() {
  histogram.disable();
  clearInterval(gapTimer);
  const result = {
    maxMs: Math.max(histogram.max / 1e6, gapWorst),
    histogramMaxMs: histogram.max / 1e6,
    gapMaxMs: gapWorst,
    p99Ms: histogram.percentile(99) / 1e6,
    meanMs: histogram.mean / 1e6,
    count: histogram.count,
  };
  histogram = undefined;
  return result;
}

// --- the host's own work --------------------------------------------------------------------

const COUNTS = { ingresses: 40, services: 60, endpoints: 600, 'lb-pods': 3 };
let sink = 0;

/**
 * Runs the example controller's render loop for `ms`, in 20 ms slices so the process keeps
 * serving (and the profile request can start and finish). With `waitForProfile`, measuring starts
 * once a CPU profile is recording.
 */
async function throughput({ ms: windowMs, waitForProfile = false }) {
  if (waitForProfile) {
    const deadline = Date.now() + 5000;
    while (!isProfiling()) {
      if (Date.now() > deadline) throw new Error('no CPU profile started within 5 s');
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
  }
  let renders = 0;
  const start = performance.now();
  const end = start + windowMs;
  for (;;) {
    const sliceEnd = Math.min(end, performance.now() + 20);
    while (performance.now() < sliceEnd) {
      sink ^= renderLoadBalancerConfig(COUNTS, 0).length;
      renders++;
    }
    if (performance.now() >= end) break;
    await new Promise((resolve) => setImmediate(resolve));
  }
  return { renders, perSec: renders / ((performance.now() - start) / 1000), profiling: isProfiling(), sink };
}

// --- HTTP surfaces --------------------------------------------------------------------------

function listen(server) {
  // Clients pause between phases; a socket must not be closed under a reused keep-alive request.
  server.keepAliveTimeout = 60_000;
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server.address().port)));
}

function metricsRegistry() {
  const registry = new Registry();
  const metrics = createControllerMetrics(registry, state, { prefix: 'ctl_' });
  for (let i = 0; i < 200; i++) {
    metrics.recordReconciliation(0.01 * (i % 50), i % 20 !== 0);
    metrics.recordDeployment(0.05 * (i % 30), i % 33 !== 0);
    metrics.recordValidation(i % 25 !== 0);
  }
  metrics.setLeader(true);
  const extra = new Gauge({
    name: 'bench_extra_series',
    help: 'Extra labelled series of the host',
    labelNames: ['namespace', 'name'],
    registers: [registry],
  });
  for (let i = 0; i < 1000; i++) extra.set({ namespace: `team-${i % 40}`, name: `ingress-${i}` }, i);
  return registry;
}

async function startHttp() {
  const ports = {};
  const app = express();
  app.disable('x-powered-by');
  // The dump's peers, serving exactly the object the `state` endpoint serves: Express's own
  // res.json (one JSON.stringify, one write) and json-stream-stringify (a streaming serializer).
  app.get('/peer/res-json/state', async (req, res) => {
    const reading = await state.readVar('state');
    res.json(reading.value);
  });
  app.get('/peer/json-stream-stringify/state', async (req, res) => {
    const reading = await state.readVar('state');
    res.type('application/json');
    new JsonStreamStringify(reading.value).pipe(res);
  });
  // mount: false is the host without the package, the baseline of always-on costs.
  if (options.mount !== false) app.use(createIntrospectionRouter(state, { pprof: options.pprof === undefined ? {} : options.pprof }));
  ports.debug = await listen(http.createServer(app));

  if (options.metrics) {
    const registry = metricsRegistry();
    const metricsApp = express();
    metricsApp.disable('x-powered-by');
    metricsApp.use(createMetricsRouter(registry));
    ports.metrics = await listen(http.createServer(metricsApp));
    // The baseline: prom-client's own rendering behind plain node:http, nothing else.
    const bare = http.createServer(async (req, res) => {
      const body = await registry.metrics();
      res.writeHead(200, { 'Content-Type': registry.contentType, 'Content-Length': Buffer.byteLength(body) });
      res.end(body);
    });
    ports.bareMetrics = await listen(bare);
    // Context: the same bare handler inside Express, to tell Express's share from the router's.
    const plainExpress = express();
    plainExpress.get('/metrics', async (req, res) => {
      const body = await registry.metrics();
      res.writeHead(200, { 'Content-Type': registry.contentType, 'Content-Length': Buffer.byteLength(body) });
      res.end(body);
    });
    ports.expressMetrics = await listen(http.createServer(plainExpress));
    // The peer: express-prom-bundle serving the same registry (its own request histogram, which it
    // registers there, is then in every server's answer alike).
    const bundleApp = express();
    bundleApp.disable('x-powered-by');
    bundleApp.use(promBundle({ promRegistry: registry, includeUp: false, autoregister: true }));
    ports.bundleMetrics = await listen(http.createServer(bundleApp));
  }
  return ports;
}

/** A full collection, so that garbage left by one phase (a dump) is not collected in the next. */
function gc() {
  if (!global.gc) throw new Error('start the server with --expose-gc');
  global.gc();
}

/**
 * A custom variable of `count` annotations of `length` characters that share everything but
 * their last characters, so that comparing two of them reads them whole.
 */
function setAnnotations({ count, length }) {
  const items = Array.from({ length: count }, (_, i) => ({
    name: `ingress-${i}`,
    annotation: `${'a'.repeat(length - 8)}${String(i).padStart(8, '0')}`,
  }));
  state.publishVar('annotations', () => ({ items }));
  return { count };
}

const started = startHttp();
const commands = {
  setAnnotations,
  ports: () => started,
  gc,
  setState,
  stringify,
  nullSink,
  monitorStart,
  monitorStop,
  throughput,
};

process.on('message', async ({ id, cmd, args }) => {
  try {
    const command = commands[cmd];
    if (!command) throw new Error(`unknown command ${cmd}`);
    process.send({ id, result: await command(args) });
  } catch (err) {
    process.send({ id, error: err && err.stack ? err.stack : String(err) });
  }
});
process.on('disconnect', () => process.exit(0));
