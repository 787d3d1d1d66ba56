/**
 * The example controller's probes, as a kubelet and an operator see them: not ready until its
 * caches sync, live while idle, not live once its reconcile loop stops, and a graceful drain on
 * SIGTERM (readiness fails while liveness answers, then the process exits on its own).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { eventually } from '../helpers/eventually';
import { EXAMPLE_MAIN, startExample, type ExampleApp } from '../helpers/example-app';
import { request } from '../helpers/http';

async function status(url: string): Promise<{ status: number; text: string }> {
  const res = await request(url);
  return { status: res.status, text: res.text };
}

// The example app is a child process that reconciles, syncs and drains on its own clock: generous deadlines.
const CHILD = { timeoutMs: 10_000, intervalMs: 50 };

const apps: ExampleApp[] = [];
afterAll(async () => {
  await Promise.all(apps.map((a) => a.stop()));
});

describe('example controller probes', () => {
  it('is not ready until its simulated caches sync, and live meanwhile', async () => {
    const app = await startExample({ simulation: { cacheSyncMs: 1500 } });
    apps.push(app);
    const early = await status(`${app.debugUrl}/readyz?verbose`);
    expect(early.status).toBe(503);
    expect(early.text).toMatch(
      /\[-\]caches-synced failed: not open: waiting for caches to sync: (ingresses, )?(services, )?endpointslices/,
    );
    expect((await status(`${app.debugUrl}/livez`)).status).toBe(200);
    await eventually(async () => (await status(`${app.debugUrl}/readyz`)).status === 200, {
      ...CHILD,
      what: 'readiness once the caches synced',
    });
    const verbose = await status(`${app.debugUrl}/readyz?verbose`);
    expect(verbose.text).toContain('[+]config-loaded ok\n[+]caches-synced ok\n');
    const metrics = (await request(`${app.metricsUrl}/metrics`)).text;
    expect(metrics).toContain('ctl_readiness_gate_open{gate="caches-synced"} 1');
  });

  it('stays live while idle, and fails /livez once its reconcile loop stops', async () => {
    const app = await startExample({ simulation: { idle: true }, probes: { progressTimeoutMs: 600, startupGraceMs: 300 } });
    apps.push(app);
    // Idle for several watchdog timeouts: no cycle runs, the heartbeat keeps it live.
    for (let i = 0; i < 4; i++) {
      await new Promise((r) => setTimeout(r, 400));
      const live = await status(`${app.debugUrl}/livez?verbose`);
      expect(live.status).toBe(200);
      expect(live.text).toMatch(
        /\[\+\]progress-reconciliation ok \((last reconciliation progress \d+ms ago|no reconciliation progress yet.*)\)/,
      );
    }
    const metrics = (await request(`${app.metricsUrl}/metrics`)).text;
    expect(metrics).toMatch(/^ctl_reconciliation_total 0$/m);

    app.child.kill('SIGUSR2');
    await app.waitForLog((l) => l['msg'] === 'reconcile loop frozen (SIGUSR2)');
    const dead = await eventually(
      async () => {
        const live = await status(`${app.debugUrl}/livez?verbose`);
        return live.status === 503 ? live : undefined;
      },
      { ...CHILD, what: 'liveness to fail' },
    );
    expect(dead.text).toMatch(/\[-\]progress-reconciliation failed: no reconciliation progress for \d+ms \(timeout 600ms, last at /);
    // Readiness does not depend on progress: the kubelet restarts the pod instead.
    expect((await status(`${app.debugUrl}/readyz`)).status).toBe(200);
  });

  it('drains on SIGTERM: readiness fails while liveness answers, then the process exits by itself', async () => {
    const app = await startExample({ probes: { drainDelayMs: 1500 } });
    apps.push(app); // stopped by afterAll only if the test fails before it exits on its own
    await eventually(async () => (await status(`${app.debugUrl}/readyz`)).status === 200, { ...CHILD, what: 'readiness' });
    const exited = new Promise<number | null>((resolve) => app.child.once('exit', (code) => resolve(code)));
    app.child.kill('SIGTERM');
    await app.waitForLog((l) => l['msg'] === 'draining');
    const ready = await status(`${app.debugUrl}/readyz?verbose`);
    expect(ready.status).toBe(503);
    expect(ready.text).toContain('[-]shutdown failed: SIGTERM: draining');
    expect((await status(`${app.debugUrl}/livez`)).status).toBe(200);
    expect((await status(`${app.metricsUrl}/metrics`)).status).toBe(200);
    expect(app.logs.some((l) => l['msg'] === 'stopped')).toBe(false);
    expect(await exited).toBe(0);
    expect(app.logs.some((l) => l['msg'] === 'stopped')).toBe(true);
  });
});

describe('example controller ports', () => {
  it('refuses a probe port that is also the metrics port, at start-up, with a clear message', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ci-ports-'));
    try {
      const file = path.join(dir, 'config.json');
      fs.writeFileSync(
        file,
        JSON.stringify({ controller: { debugPort: 0, healthPort: 9191, config: { controller: { metrics_port: 9191 } } } }),
      );
      const result = spawnSync(process.execPath, [EXAMPLE_MAIN, '--config', file], {
        encoding: 'utf8',
        env: { ...process.env, BIND_ADDRESS: '127.0.0.1' },
        timeout: 20_000,
      });
      expect(result.status).toBe(1);
      expect(result.stdout).toContain(
        'controller.healthPort (used because controller.debugPort is 0) and controller.config.controller.metrics_port are both 9191; give the metrics endpoint its own port',
      );
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
