import { spawn } from 'node:child_process';
import path from 'node:path';
import { isProfiling } from '../../lib/pprof';
import { v8HeapSampling } from '../helpers/heap-sampling';
import { createIntrospectionState } from '../../lib/state/store';
import { requireFreshDist } from '../helpers/dist';
import { eventually } from '../helpers/eventually';
import { open, request } from '../helpers/http';
import { startServer, type HardeningServer } from './helpers';

/*
 * `router.close()` is the documented shutdown: readiness flips (traffic drains) while liveness
 * stays green, profilers and heap sampling stop, requests already running finish, and nothing the
 * package started keeps the process alive afterwards.
 */

const REPO = path.resolve(__dirname, '..', '..');
const MEGABYTE = 1024 * 1024;

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
    expect(await v8HeapSampling()).toBe(true);
    // A long CPU profile is running…
    const profile = request(`${server.base}/debug/pprof/profile?seconds=60`, { timeoutMs: 10_000 });
    await eventually(isProfiling, { intervalMs: 20, what: 'the CPU profile to start' });
    // …and a multi-megabyte dump is half-way, held back by a client that stopped reading.
    const dumpRes = await open(`${server.base}/debug/vars/config`);
    const chunks: Buffer[] = [];
    const started = new Promise<void>((resolve) =>
      dumpRes.once('data', (c: Buffer) => {
        chunks.push(c);
        dumpRes.pause();
        resolve();
        dumpRes.on('data', (more: Buffer) => chunks.push(more));
      }),
    );
    const dump = new Promise<{ status: number; body: Buffer }>((resolve, reject) => {
      dumpRes.on('end', () => resolve({ status: dumpRes.statusCode ?? 0, body: Buffer.concat(chunks) }));
      dumpRes.on('error', reject);
    });
    await started;

    await server.router.close();

    // The profile request ended at once with a clear answer, and nothing is being recorded or sampled.
    const cpu = await profile;
    expect(cpu.status).toBe(503);
    expect(cpu.json()).toEqual({ error: 'the pprof router was closed while the CPU profile was being recorded' });
    expect(isProfiling()).toBe(false);
    expect(await v8HeapSampling()).toBe(false);

    // Readiness drains traffic; liveness stays green so the pod is not restarted while it exits.
    const [readyz, livez, healthz, pprof] = await Promise.all(
      ['/readyz?verbose', '/livez', '/healthz', '/debug/pprof/heap'].map((p) => request(`${server.base}${p}`)),
    );
    expect(readyz.status).toBe(503);
    expect(readyz.text).toContain('[-]shutdown failed: shutting down');
    expect(livez.status).toBe(200);
    expect(healthz.status).toBe(503);
    expect(pprof.status).toBe(503);

    // The server stops accepting; the dump that was already running still completes, whole.
    const closed = new Promise<void>((resolve) => server.server.close(() => resolve()));
    dumpRes.resume();
    const done = await dump;
    expect(done.status).toBe(200);
    expect(done.body.length).toBeGreaterThan(3 * MEGABYTE);
    expect((JSON.parse(done.body.toString('utf8')) as { version: string }).version).toBe('v9');
    await closed;
    await expect(request(`${server.base}/healthz`)).rejects.toThrow(/ECONNREFUSED/);
    // Idempotent.
    await expect(server.router.close()).resolves.toBeUndefined();
  });
});

/** A host of dist/ that uses every surface, closes everything, and must then exit by itself. */
const HOST = path.join(__dirname, 'fixtures', 'shutdown-host.js');

describe('after close(), nothing keeps the process alive', () => {
  beforeAll(requireFreshDist);

  it('lets a host process that used every surface exit by itself', async () => {
    const child = spawn(process.execPath, [HOST], { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] });
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
    expect({ code, stdout, stderr }).toEqual({ code: 0, stdout: expect.stringContaining('"closed":true') as unknown, stderr: '' });
    const report = JSON.parse(stdout.trim().split('\n')[0] as string) as { statuses: number[]; running: number };
    expect(report.statuses).toEqual(Array(11).fill(200));
    expect(report.running).toBe(503);
  });
});
