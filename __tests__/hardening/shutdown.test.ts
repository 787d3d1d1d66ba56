import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { isProfiling } from '../../lib/pprof';
import { isHeapSampling } from '../../lib/pprof/heap/sampler';
import { createIntrospectionState } from '../../lib/state/store';
import { jsonBody, send, sleep, startServer, type HardeningServer } from './helpers';

/*
 * `router.close()` is the documented shutdown: readiness flips (traffic drains) while liveness
 * stays green, profilers and heap sampling stop, requests already running finish, and nothing the
 * package started keeps the process alive afterwards.
 */

const REPO = path.resolve(__dirname, '..', '..');
const MEGABYTE = 1024 * 1024;

async function waitFor(check: () => boolean, timeoutMs: number): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await sleep(20);
  }
}

describe('shutdown with router.close()', () => {
  let server: HardeningServer;

  beforeAll(async () => {
    const state = createIntrospectionState();
    const templates: Record<string, string> = {};
    for (let i = 0; i < 200; i++) templates[`t${i}.cfg`] = `backend b${i}\n${'  server s 10.0.0.1:80 check\n'.repeat(600)}`;
    state.setConfig({ templates, watched_resources: [] }, 'v9');
    server = await startServer(state);
  });
  afterAll(() => server.close());

  it('stops a running CPU profile and heap sampling, flips readiness, and lets an in-flight dump finish', async () => {
    expect(isHeapSampling()).toBe(true);
    // A long CPU profile is running…
    const profile = send(server.port, '/debug/pprof/profile?seconds=60', { timeoutMs: 10_000 });
    await waitFor(isProfiling, 5000);
    // …and a multi-megabyte dump is half-way, held back by a client that stopped reading.
    let dumpStarted: () => void = () => undefined;
    let resumeDump: () => void = () => undefined;
    const started = new Promise<void>((resolve) => (dumpStarted = resolve));
    const dump = new Promise<{ status: number; body: Buffer }>((resolve, reject) => {
      http
        .get({ host: '127.0.0.1', port: server.port, path: '/debug/vars/config', agent: false }, (res) => {
          const chunks: Buffer[] = [];
          res.once('data', (c: Buffer) => {
            chunks.push(c);
            res.pause();
            dumpStarted();
            res.on('data', (more: Buffer) => chunks.push(more));
          });
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) }));
          res.on('error', reject);
          resumeDump = () => res.resume();
        })
        .on('error', reject);
    });
    await started;

    await server.router.close();

    // The profile request ended at once with a clear answer, and nothing is being recorded or sampled.
    const cpu = await profile;
    expect(cpu.status).toBe(503);
    expect(jsonBody(cpu)).toEqual({ error: 'the pprof router was closed while the CPU profile was being recorded' });
    expect(isProfiling()).toBe(false);
    expect(isHeapSampling()).toBe(false);

    // Readiness drains traffic; liveness stays green so the pod is not restarted while it exits.
    const [readyz, livez, healthz, pprof] = await Promise.all(
      ['/readyz?verbose', '/livez', '/healthz', '/debug/pprof/heap'].map((p) => send(server.port, p)),
    );
    expect(readyz.status).toBe(503);
    expect(readyz.text).toContain('[-]shutdown failed: shutting down');
    expect(livez.status).toBe(200);
    expect(healthz.status).toBe(503);
    expect(pprof.status).toBe(503);

    // The server stops accepting; the dump that was already running still completes, whole.
    const closed = new Promise<void>((resolve) => server.server.close(() => resolve()));
    resumeDump();
    const done = await dump;
    expect(done.status).toBe(200);
    expect(done.body.length).toBeGreaterThan(3 * MEGABYTE);
    expect((JSON.parse(done.body.toString('utf8')) as { version: string }).version).toBe('v9');
    await closed;
    await expect(send(server.port, '/healthz')).rejects.toThrow(/ECONNREFUSED/);
    // Idempotent.
    await expect(server.router.close()).resolves.toBeUndefined();
  });
});

/**
 * The host script: state, introspection router, metrics, two servers, a round of requests through
 * every surface (a CPU profile still running), then close everything. It must then exit on its own;
 * if something still holds the event loop after 5 s, an unref()ed timer reports what and exits 3.
 */
const HOST_SCRIPT = `
'use strict';
const http = require('node:http');
const { createRequire } = require('node:module');
const repoRequire = createRequire(${JSON.stringify(path.join(REPO, 'package.json'))});
const express = repoRequire('express');
const { Registry } = repoRequire('prom-client');
const ci = repoRequire('./dist/index.js');

function get(port, path) {
  return new Promise((resolve, reject) => {
    http.get({ host: '127.0.0.1', port, path, agent: false }, (res) => {
      let bytes = 0;
      res.on('data', (c) => (bytes += c.length));
      res.on('end', () => resolve({ status: res.statusCode, bytes }));
      res.on('error', reject);
    }).on('error', reject);
  });
}
function listen(app) {
  return new Promise((resolve) => { const s = app.listen(0, '127.0.0.1', () => resolve(s)); });
}

(async () => {
  const state = ci.createIntrospectionState();
  state.setConfig({ templates: { 'haproxy.cfg': 'global\\n'.repeat(100000) }, watched_resources: [] }, 'v1');
  state.addHealthCheck('cache', async () => true);
  state.publishVar('slow', () => new Promise((r) => setTimeout(() => r({ ok: true }), 50)));
  state.subscribe(() => undefined);
  const registry = new Registry();
  const metrics = ci.createControllerMetrics(registry, { prefix: 'ctl_', state });
  metrics.setLeader(true);
  const router = ci.createIntrospectionRouter(state);
  const debugApp = express();
  debugApp.use(router);
  const metricsApp = express();
  metricsApp.use(ci.createMetricsRouter(registry));
  const debug = await listen(debugApp);
  const scrape = await listen(metricsApp);
  const port = debug.address().port;
  const results = await Promise.all([
    get(port, '/healthz'), get(port, '/readyz'), get(port, '/debug/vars/state'), get(port, '/debug/vars/slow'),
    get(port, '/debug/vars/config?field={.version}'), get(port, '/debug/pprof/'), get(port, '/debug/pprof/heap'),
    get(port, '/debug/pprof/goroutine?debug=2'), get(port, '/debug/pprof/block'), get(port, '/debug/pprof/profile?seconds=1'),
    get(scrape.address().port, '/metrics'),
  ]);
  const running = get(port, '/debug/pprof/profile?seconds=60');
  await new Promise((r) => setTimeout(r, 300));
  await router.close();
  const ended = await running;
  await new Promise((r) => debug.close(r));
  await new Promise((r) => scrape.close(r));
  process.stdout.write(JSON.stringify({ closed: true, statuses: results.map((r) => r.status), running: ended.status }) + '\\n');
  setTimeout(() => {
    process.stdout.write(JSON.stringify({ stillAlive: process.getActiveResourcesInfo() }) + '\\n');
    process.exit(3);
  }, 5000).unref();
})().catch((err) => {
  process.stderr.write(String(err && err.stack || err) + '\\n');
  process.exit(2);
});
`;

describe('after close(), nothing keeps the process alive', () => {
  it('lets a host process that used every surface exit by itself', async () => {
    if (!fs.existsSync(path.join(REPO, 'dist', 'index.js')))
      throw new Error('dist/ is missing: run `npm run build` first (`npm test` does)');
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ci-shutdown-'));
    const script = path.join(dir, 'host.js');
    fs.writeFileSync(script, HOST_SCRIPT);
    const child = spawn(process.execPath, [script], { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const code = await new Promise<number | null>((resolve) => {
      const kill = setTimeout(() => child.kill('SIGKILL'), 30_000);
      child.on('exit', (exitCode) => {
        clearTimeout(kill);
        resolve(exitCode);
      });
    });
    fs.rmSync(dir, { recursive: true, force: true });
    expect({ code, stdout, stderr }).toEqual({ code: 0, stdout: expect.stringContaining('"closed":true') as unknown, stderr: '' });
    const report = JSON.parse(stdout.trim().split('\n')[0] as string) as { statuses: number[]; running: number };
    expect(report.statuses).toEqual(Array(11).fill(200));
    expect(report.running).toBe(503);
  });
});
