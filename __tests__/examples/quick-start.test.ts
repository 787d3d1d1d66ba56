/**
 * The README's Quick start, run as written: examples/quick-start/server.mjs (the README shows it
 * byte for byte, see __tests__/docs/code-blocks.test.ts) is started as its own process on free
 * ports, must turn ready within a few seconds and serve /metrics; the commands the documentation
 * runs against it (`<!-- run: quick-start -->`) are run; and on SIGTERM it drains and exits by itself.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { requireFreshDist } from '../helpers/dist';
import { eventually } from '../helpers/eventually';
import { request } from '../helpers/http';
import { blocksRunBy, REPO, shellCommands } from '../helpers/markdown';
import { freePorts } from '../helpers/ports';

const SERVER = path.join(REPO, 'examples/quick-start/server.mjs');

function sh(command: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile('bash', ['-o', 'pipefail', '-c', command], { timeout: 30_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? Number((err as { code?: unknown }).code ?? 1) || 1 : 0, stdout, stderr });
    });
  });
}

describe('the Quick start (examples/quick-start/server.mjs)', () => {
  let child: ChildProcess;
  let debugUrl: string;
  let metricsUrl: string;
  let started: number;
  let stderr = '';
  let exited: Promise<number | null>;

  beforeAll(async () => {
    requireFreshDist();
    const [debugPort, metricsPort] = (await freePorts(2)) as [number, number];
    debugUrl = `http://127.0.0.1:${debugPort}`;
    metricsUrl = `http://127.0.0.1:${metricsPort}`;
    started = performance.now();
    child = spawn(process.execPath, [SERVER], {
      cwd: REPO,
      env: { ...process.env, DEBUG_PORT: String(debugPort), METRICS_PORT: String(metricsPort) },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
  });
  afterAll(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await exited;
    }
  });

  it('answers 200 on /readyz within a few seconds', async () => {
    const ready = await eventually(async () => (await request(`${debugUrl}/readyz?verbose`)).status === 200, {
      timeoutMs: 5000,
      intervalMs: 50,
      what: `/readyz 200 (stderr: ${stderr})`,
    });
    expect(ready).toBe(true);
    expect(performance.now() - started).toBeLessThan(5000);
    expect((await request(`${debugUrl}/readyz?verbose`)).text).toContain('[+]config-loaded ok');
  });

  it('serves /metrics in the Prometheus text format', async () => {
    const metrics = await request(`${metricsUrl}/metrics`);
    expect(metrics.status).toBe(200);
    expect(metrics.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(metrics.text).toMatch(/^# HELP ctl_reconciliation_total /m);
    expect(metrics.text).toMatch(/^ctl_reconciliation_total [1-9]/m);
    expect(metrics.text).toContain('ctl_resource_count{type="services"} 2');
  });

  const commands = blocksRunBy('quick-start').flatMap(shellCommands);
  it('has the commands the documentation runs against it', () => {
    expect(commands.length).toBeGreaterThanOrEqual(3);
  });

  it.each(commands.map((c) => [c]))('%s', async (command) => {
    const run = command.replaceAll('localhost:8080', new URL(debugUrl).host).replaceAll('localhost:9090', new URL(metricsUrl).host);
    const result = await sh(run);
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
    expect(result.stdout.trim()).not.toBe('');
    expect(result.stdout).not.toMatch(/^\{"error"/);
  });

  it('drains on SIGTERM (not ready at once, still live) and exits by itself', async () => {
    child.kill('SIGTERM');
    await eventually(async () => (await request(`${debugUrl}/readyz`)).status === 503, { what: '/readyz 503 after SIGTERM' });
    expect((await request(`${debugUrl}/livez`)).status).toBe(200);
    const timeout = new Promise<'still running'>((resolve) => setTimeout(() => resolve('still running'), 20_000).unref());
    expect(await Promise.race([exited, timeout])).toBe(0);
    expect(stderr).toBe('');
  }, 30_000);
});
