'use strict';
// Benchmark 16 (issue 34): createKubeAuth (TokenReview + SubjectAccessReview) in front of /metrics,
// against a real kube-apiserver on loopback (bench/control-plane.js) under the RBAC of
// examples/kubernetes/metrics-rbac.yaml: the controller's ServiceAccount (lb-system/lb-controller,
// system:auth-delegator) reviews, Prometheus's (monitoring/prometheus) scrapes. The review API is a
// small node:https client over keep-alive, as __tests__/kubernetes/kube-auth.test.ts builds it, counting
// its calls.
//
// Three Express apps on loopback answer GET /metrics with a small text: (a) without the middleware,
// (b) behind it with the decision cached (allowedTtlMs 1 h, so no refresh falls inside the run),
// (c) behind it with allowedTtlMs 0, so that every request costs one TokenReview and one
// SubjectAccessReview. Each is asked one request at a time over one keep-alive connection, in
// rounds that interleave the three (so drift in the machine's load hits all alike), after a warm-up.
// Then (d) 1000 concurrent requests with one token on a fresh middleware: review calls made; and
// (e) 10 000 distinct garbage tokens (each a TokenReview answered "not authenticated", cached as a
// refusal for 1 h so every decision stays) with maxEntries 10 000 and 1 000: heap after a forced GC
// minus heap before, the entries kept, and the worst event-loop delay meanwhile
// (perf_hooks.monitorEventLoopDelay). The apps run in this process, beside the client: the delay
// of (e) includes the client's own work, so it is an upper bound for the middleware's.
// As context for that delay, the same 10 000 requests also run without the middleware, and through it
// with a review API answered in-process (row 16h).

const fs = require('node:fs');
const http = require('node:http');
const https = require('node:https');
const path = require('node:path');
const { monitorEventLoopDelay } = require('node:perf_hooks');
const express = require('express');
const yaml = require('js-yaml');
const { createKubeAuth } = require('../dist');
const { get, main, median, ms, percentile, ratio, report, row, sleep } = require('./common');
const { startControlPlane } = require('./control-plane');

const REPO = path.resolve(__dirname, '..');
const MANIFEST = path.join(REPO, 'examples', 'kubernetes', 'metrics-rbac.yaml');
const WARMUP = 50;
const ROUNDS = 5;
const PER_ROUND = { a: 100, b: 100, c: 40 };
const CONCURRENT = 1000;
const GARBAGE = 10_000;
const GARBAGE_CONCURRENCY = 32;
/** Target for (e): what 10 000 cached refusals may add to the heap. */
const HEAP_BOUND = 16 * 1024 * 1024;
/** Target for (e): the worst event-loop delay while 10 000 tokens are reviewed. */
const DELAY_BOUND_MS = 20;
const COLLECTIONS = { ClusterRole: 'clusterroles', ClusterRoleBinding: 'clusterrolebindings' };

/** The review API over node:https with `token`, counting its calls. */
function reviewApi(plane, token) {
  const agent = new https.Agent({ ca: fs.readFileSync(path.join(plane.dir, 'certs', 'apiserver.crt')), keepAlive: true, maxSockets: 64 });
  const post = (urlPath, body) =>
    new Promise((resolve, reject) => {
      const payload = JSON.stringify(body);
      const req = https.request(
        `${plane.url}${urlPath}`,
        {
          method: 'POST',
          agent,
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json' },
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (chunk) => (text += chunk));
          res.on('end', () => {
            if ((res.statusCode || 0) >= 300) reject(new Error(`HTTP ${res.statusCode}: ${text}`));
            else {
              try {
                resolve(JSON.parse(text));
              } catch (err) {
                reject(err);
              }
            }
          });
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(payload);
    });
  const calls = { tokenReviews: 0, subjectAccessReviews: 0 };
  return {
    calls,
    agent,
    createTokenReview: ({ body }) => {
      calls.tokenReviews++;
      return post('/apis/authentication.k8s.io/v1/tokenreviews', body);
    },
    createSubjectAccessReview: ({ body }) => {
      calls.subjectAccessReviews++;
      return post('/apis/authorization.k8s.io/v1/subjectaccessreviews', body);
    },
  };
}

/**
 * Applies the RBAC objects of metrics-rbac.yaml (its ServiceAccount is created with its token, as
 * `serviceAccountToken` does), creating what the control plane's apply does not know.
 */
async function applyManifest(plane) {
  for (const obj of yaml.loadAll(fs.readFileSync(MANIFEST, 'utf8'))) {
    if (COLLECTIONS[obj.kind] === undefined) continue;
    const res = await plane.request('POST', `/apis/rbac.authorization.k8s.io/v1/${COLLECTIONS[obj.kind]}`, obj);
    if (res.status !== 201 && res.status !== 409) throw new Error(`create ${obj.kind} ${obj.metadata.name}: ${res.status}`);
  }
}

/** Waits until RBAC lets `user` get `urlPath` (the bindings reach the authorizer through informers). */
async function untilAllowed(plane, user, urlPath) {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const res = await plane.request('POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SubjectAccessReview',
      spec: { user, nonResourceAttributes: { path: urlPath, verb: 'get' } },
    });
    if (res.body && res.body.status && res.body.status.allowed === true) return;
    if (Date.now() > deadline) throw new Error(`RBAC did not allow ${user} to get ${urlPath} within 30 s`);
    await sleep(200);
  }
}

/** An Express app answering GET /metrics with a small text, behind `auth` when given; resolves with its port and server. */
async function serve(auth) {
  const app = express();
  if (auth) app.use(auth);
  app.get('/metrics', (req, res) => {
    res.type('text/plain').send('# a small exposition\nup 1\n');
  });
  const server = http.createServer(app);
  await new Promise((resolve) => server.listen({ port: 0, host: '127.0.0.1', backlog: 2048 }, resolve));
  return { port: server.address().port, server };
}

function summary(values) {
  return { median: median(values), p99: percentile(values, 99), max: Math.max(...values), n: values.length };
}

async function timed(port, headers, agent, n, into) {
  for (let i = 0; i < n; i++) {
    const r = await get(port, '/metrics', headers, agent);
    if (r.status !== 200) throw new Error(`GET /metrics on ${port} answered ${r.status}`);
    if (into) into.push(r.ms);
  }
}

/**
 * (e): `GARBAGE` distinct garbage tokens through a fresh middleware keeping at most `maxEntries`
 * (`api` null: the same requests to the app without the middleware, for the delay's baseline).
 */
async function garbage(api, maxEntries) {
  const auth = api === null ? undefined : createKubeAuth(api, undefined, { maxEntries, deniedTtlMs: 3_600_000 });
  const { port, server } = await serve(auth);
  const agent = new http.Agent({ keepAlive: true, maxSockets: GARBAGE_CONCURRENCY });
  // One request first, so that the app's and the agent's own allocations are in the baseline.
  await get(port, '/metrics', { authorization: 'Bearer warm-up' }, agent);
  const callsBefore = api === null ? 0 : api.calls.tokenReviews;
  global.gc();
  global.gc();
  const heapBefore = process.memoryUsage().heapUsed;
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  const statuses = {};
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: GARBAGE_CONCURRENCY }, async () => {
      while (next < GARBAGE) {
        const i = next++;
        const r = await get(port, '/metrics', { authorization: `Bearer garbage-${i}-${'x'.repeat(64)}` }, agent);
        statuses[r.status] = (statuses[r.status] || 0) + 1;
      }
    }),
  );
  const elapsedMs = performance.now() - started;
  delay.disable();
  agent.destroy();
  await sleep(100);
  global.gc();
  global.gc();
  const heapDelta = process.memoryUsage().heapUsed - heapBefore;
  const stats = auth === undefined ? { entries: 0 } : auth.stats();
  const result = {
    maxEntries,
    heapDelta,
    entries: stats.entries,
    tokenReviews: api === null ? 0 : api.calls.tokenReviews - callsBefore,
    statuses,
    elapsedMs,
    delayMaxMs: delay.max / 1e6,
    delayP99Ms: delay.percentile(99) / 1e6,
  };
  if (auth !== undefined) await auth.close();
  await new Promise((resolve) => server.close(resolve));
  return result;
}

/** A review API answered in this process, on the next turn: every token unauthenticated. */
function stubApi() {
  const calls = { tokenReviews: 0, subjectAccessReviews: 0 };
  return {
    calls,
    createTokenReview: () => {
      calls.tokenReviews++;
      return new Promise((resolve) => setImmediate(() => resolve({ status: { authenticated: false } })));
    },
    createSubjectAccessReview: () => {
      calls.subjectAccessReviews++;
      return Promise.reject(new Error('unused'));
    },
  };
}

/** Requests per hostile case, and how many at once. */
const HOSTILE = 400;
const HOSTILE_CONCURRENCY = 16;

/**
 * A review API answered in this process with what a hostile or broken API server could answer:
 * `answer(i)` gives the TokenReview answer (or throws, or waits). The SubjectAccessReview allows.
 */
function hostileApi(answer) {
  return {
    createTokenReview: () => answer(),
    createSubjectAccessReview: () => Promise.resolve({ status: { allowed: true } }),
  };
}

/**
 * (i): the worst event-loop delay while `HOSTILE` requests of one hostile kind go through a fresh
 * middleware (`api` null: the same requests without the middleware). Distinct tokens, so every
 * request is a decision of its own.
 */
async function hostileCase(api, header, options = {}) {
  const auth = api === null ? undefined : createKubeAuth(api, undefined, { deniedTtlMs: 0, allowedTtlMs: 0, ...options });
  const app = express();
  if (auth) app.use(auth);
  app.get('/metrics', (req, res) => void res.type('text/plain').send('up 1\n'));
  // A header limit the host may have raised, so that a 64 KB Authorization reaches the middleware.
  const server = http.createServer({ maxHeaderSize: 1024 * 1024 }, app);
  await new Promise((resolve) => server.listen({ port: 0, host: '127.0.0.1' }, resolve));
  const { port } = server.address();
  const agent = new http.Agent({ keepAlive: true, maxSockets: HOSTILE_CONCURRENCY });
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  const statuses = {};
  let next = 0;
  await Promise.all(
    Array.from({ length: HOSTILE_CONCURRENCY }, async () => {
      while (next < HOSTILE) {
        const r = await get(port, '/metrics', { authorization: header(next++) }, agent);
        statuses[r.status] = (statuses[r.status] || 0) + 1;
      }
    }),
  );
  delay.disable();
  agent.destroy();
  if (auth) await auth.close();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  return { maxMs: delay.max / 1e6, statuses };
}

/** Every hostile kind, each with and without the middleware: the worst delays and the statuses. */
async function hostileCases() {
  const hugeName = 'u'.repeat(1024 * 1024);
  const manyGroups = Array.from({ length: 100_000 }, (_, i) => `group-${i}`);
  const bearer = (i) => `Bearer hostile-${i}-${'x'.repeat(32)}`;
  const user = (u) => () => Promise.resolve({ status: { authenticated: true, user: u } });
  const kinds = {
    'Authorization of 64 KB': [hostileApi(user({ username: 'a' })), (i) => `Bearer ${'h'.repeat(64 * 1024)}${i}`],
    'a 1 MB user name': [hostileApi(user({ username: hugeName })), bearer],
    '100 000 groups': [hostileApi(user({ username: 'a', groups: manyGroups })), bearer],
    'a malformed answer': [hostileApi(() => Promise.resolve('<html>not a review</html>')), bearer],
    'a review answering after 1 s (timeoutMs 200)': [
      hostileApi(() => new Promise((resolve) => setTimeout(() => resolve({ status: { authenticated: false } }), 1000))),
      bearer,
      { timeoutMs: 200 },
    ],
  };
  const results = {};
  for (const [kind, [api, header, options]] of Object.entries(kinds)) {
    results[kind] = { with: await hostileCase(api, header, options), without: await hostileCase(null, header) };
  }
  return results;
}

/**
 * Met when the worst delay is within the bound; inconclusive when it is not but the same requests
 * without the middleware (16h) were not within it either: the machine, not the middleware, is then
 * what the figure shows.
 */
function delayVerdict(worstMs, withoutMs) {
  if (worstMs <= DELAY_BOUND_MS) return true;
  return withoutMs > DELAY_BOUND_MS ? 'inconclusive' : false;
}

function mb(bytes) {
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/** Rows 16e and 16f: the heap a run of garbage tokens left, and the entries kept, against the bound. */
function heapRow(id, e) {
  const label = e.maxEntries.toLocaleString('en-US').replace(/,/g, ' ');
  return row(
    id,
    `${GARBAGE} garbage tokens, maxEntries ${label}: heap after GC over before; entries`,
    `${mb(e.heapDelta)}; ${e.entries} entries`,
    `≤ ${mb(HEAP_BOUND)}, ≤ ${e.maxEntries} entries`,
    e.heapDelta <= HEAP_BOUND && e.entries <= e.maxEntries,
  );
}

async function run() {
  if (typeof global.gc !== 'function') throw new Error('run with --expose-gc (bench/run.js does)');
  const plane = await startControlPlane();
  const servers = [];
  try {
    await applyManifest(plane);
    const api = reviewApi(plane, await plane.serviceAccountToken('lb-system', 'lb-controller'));
    const token = await plane.serviceAccountToken('monitoring', 'prometheus');
    await untilAllowed(plane, 'system:serviceaccount:monitoring:prometheus', '/metrics');

    const headers = { authorization: `Bearer ${token}` };
    const cached = createKubeAuth(api, undefined, { allowedTtlMs: 3_600_000 });
    const cold = createKubeAuth(api, undefined, { allowedTtlMs: 0 });
    const apps = { a: await serve(), b: await serve(cached), c: await serve(cold) };
    servers.push(...Object.values(apps).map((s) => s.server));
    const agents = {
      a: new http.Agent({ keepAlive: true }),
      b: new http.Agent({ keepAlive: true }),
      c: new http.Agent({ keepAlive: true }),
    };
    for (const k of ['a', 'b', 'c']) await timed(apps[k].port, headers, agents[k], WARMUP);
    const samples = { a: [], b: [], c: [] };
    const coldCalls = { ...api.calls };
    for (let round = 0; round < ROUNDS; round++) {
      for (const k of round % 2 === 0 ? ['a', 'b', 'c'] : ['c', 'b', 'a'])
        await timed(apps[k].port, headers, agents[k], PER_ROUND[k], samples[k]);
    }
    const reviewsPerCold =
      (api.calls.tokenReviews - coldCalls.tokenReviews + api.calls.subjectAccessReviews - coldCalls.subjectAccessReviews) /
      samples.c.length;
    for (const agent of Object.values(agents)) agent.destroy();
    const fig = { a: summary(samples.a), b: summary(samples.b), c: summary(samples.c) };
    const cachedStats = cached.stats();
    await cached.close();
    await cold.close();

    // (d) one token, 1000 requests at once, fresh middleware.
    const fresh = createKubeAuth(api, undefined, { allowedTtlMs: 3_600_000 });
    const d = await serve(fresh);
    servers.push(d.server);
    const wide = new http.Agent({ keepAlive: false, maxSockets: Infinity });
    const before = { ...api.calls };
    const answers = await Promise.all(Array.from({ length: CONCURRENT }, () => get(d.port, '/metrics', headers, wide)));
    const concurrentCalls = api.calls.tokenReviews - before.tokenReviews + api.calls.subjectAccessReviews - before.subjectAccessReviews;
    const concurrentOk = answers.filter((r) => r.status === 200).length;
    wide.destroy();
    await fresh.close();

    // (e) 10 000 garbage tokens, maxEntries 10 000 (the default) then 1 000.
    const e10k = await garbage(api, 10_000);
    const e1k = await garbage(api, 1_000);
    // Context for the delay: the same requests without the middleware, and through it with a review
    // API answered in-process (no TLS, no kube-apiserver competing for the 2 cores).
    const eNone = await garbage(null, 0);
    const eStub = await garbage(stubApi(), 10_000);
    api.agent.destroy();
    // (i) hostile headers and review answers, each kind with and without the middleware.
    const hostile = await hostileCases();
    const worstHostile = Math.max(...Object.values(hostile).map((h) => h.with.maxMs));
    const worstWithout = Math.max(...Object.values(hostile).map((h) => h.without.maxMs));
    for (const [kind, h] of Object.entries(hostile)) console.log(`  i ${kind}: ${JSON.stringify(h)}`);

    const line = (f) => `median ${ms(f.median, 2)}, p99 ${ms(f.p99, 2)}, max ${ms(f.max, 2)} (n ${f.n})`;
    console.log(`[16] TokenReview + SubjectAccessReview in front of /metrics, real kube-apiserver on loopback`);
    console.log(`  a ${line(fig.a)}\n  b ${line(fig.b)}\n  c ${line(fig.c)}; reviews per cold request ${reviewsPerCold}`);
    console.log(`  d ${concurrentOk}/${CONCURRENT} answered 200, ${concurrentCalls} review calls`);
    for (const e of [e10k, e1k, eNone, eStub]) console.log(`  e ${JSON.stringify(e)}`);

    const http1 = { baseline: 'same app without the middleware' };
    const rows = [
      row('16a', 'GET /metrics without the middleware (sequential, keep-alive)', line(fig.a), '-', null),
      row(
        '16b',
        'with createKubeAuth, decision cached: / without, median (worst)',
        `${ratio(fig.b.median / fig.a.median)} (${ratio(fig.b.max / fig.a.max)}); ${line(fig.b)}`,
        '-',
        null,
        http1,
      ),
      row(
        '16c',
        'cold: one TokenReview + one SubjectAccessReview per request: / without, median (worst)',
        `${ratio(fig.c.median / fig.a.median)} (${ratio(fig.c.max / fig.a.max)}); ${line(fig.c)}; added ${ms(fig.c.median - fig.a.median, 2)} median`,
        '-',
        null,
        http1,
      ),
      row(
        '16d',
        `${CONCURRENT} concurrent requests, one token, fresh middleware: review calls`,
        `${concurrentCalls} (${concurrentOk} answered 200)`,
        '≤ 2',
        concurrentCalls <= 2 && concurrentOk === CONCURRENT,
      ),
      heapRow('16e', e10k),
      heapRow('16f', e1k),
      row(
        '16g',
        `worst event-loop delay while ${GARBAGE} garbage tokens are reviewed (10 000 / 1 000 entries)`,
        `${ms(e10k.delayMaxMs)} / ${ms(e1k.delayMaxMs)} (p99 ${ms(e10k.delayP99Ms)} / ${ms(e1k.delayP99Ms)})`,
        `≤ ${ms(DELAY_BOUND_MS, 0)}`,
        delayVerdict(Math.max(e10k.delayMaxMs, e1k.delayMaxMs), eNone.delayMaxMs),
      ),
      row(
        '16h',
        `context: the same ${GARBAGE} requests, worst event-loop delay without the middleware / with it and an in-process review API`,
        `${ms(eNone.delayMaxMs)} / ${ms(eStub.delayMaxMs)} (p99 ${ms(eNone.delayP99Ms)} / ${ms(eStub.delayP99Ms)})`,
        '-',
        null,
      ),
      row(
        '16i',
        `hostile: worst event-loop delay over ${HOSTILE} requests of each kind, with the middleware (without it)`,
        Object.entries(hostile)
          .map(
            ([kind, h]) =>
              `${kind} ${ms(h.with.maxMs)} (${ms(h.without.maxMs)}), answered ${Object.entries(h.with.statuses)
                .map(([st, n]) => `${n}×${st}`)
                .join(' ')}`,
          )
          .join('; '),
        `≤ ${ms(DELAY_BOUND_MS, 0)}`,
        delayVerdict(worstHostile, worstWithout),
      ),
    ];
    report(rows, {
      figures: fig,
      reviewsPerCold,
      cachedStats,
      concurrent: { calls: concurrentCalls, ok: concurrentOk },
      garbage: [e10k, e1k, eNone, eStub],
      hostile,
    });
  } finally {
    for (const server of servers) {
      server.closeAllConnections();
      server.close();
    }
    await plane.stop();
  }
}

main(run);
