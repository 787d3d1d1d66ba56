import { execFile } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startExample, type ExampleApp } from '../helpers/example-app';
import { GO, goAvailable, goPprofHome, goToolEnv, inCI } from '../helpers/peers';

/**
 * Peer test: a CPU profile of the example controller, whose cycles burn CPU in rendering, read by
 * the real `go tool pprof`: `-tags` lists `correlation_id` values that are cycles
 * `/debug/vars/events` knows, and `-tagfocus correlation_id=<one>` keeps a non-empty part of the
 * profile. Placing samples by time needs no AsyncContextFrame: it runs the same on Node 20 to 26.
 */
const run = promisify(execFile);

/** What `go tool pprof -top` shows ("Showing nodes accounting for 40ms, 4.03% of 991ms total"), in ms. */
function shownMs(top: string): number {
  const match = /accounting for ([\d.]+)(ms|s),/.exec(top);
  if (!match) return 0;
  return Number(match[1]) * (match[2] === 's' ? 1000 : 1);
}

describe('go tool pprof -tags and -tagfocus on a CPU profile of the example controller', () => {
  let app: ExampleApp | undefined;
  let home: string | undefined;
  let haveGo = false;

  beforeAll(async () => {
    haveGo = await goAvailable();
    if (!haveGo) return;
    home = goPprofHome('go-pprof-labels-');
    // One worker; each cycle renders for ~30 ms of CPU, a cycle every 20 ms.
    app = await startExample({ simulation: { reconcileIntervalMs: 20, cpuBurnMs: 30 } });
  }, 60_000);

  afterAll(async () => {
    await app?.stop();
    if (home) rmSync(home, { recursive: true, force: true });
  });

  it('lists correlation ids of cycles the events know, and isolates one', async () => {
    if (!haveGo || !app || !home) {
      if (inCI) throw new Error(`"${GO} version" failed: install golang-go or set GO_BIN`);
      console.warn(`skipped: ${GO} not found (install golang-go)`);
      return;
    }
    const env = goToolEnv(GO, home);
    const response = await fetch(`${app.debugUrl}/debug/pprof/profile?seconds=2`);
    expect(response.status).toBe(200);
    const file = join(home, 'cpu.pb.gz');
    writeFileSync(file, Buffer.from(await response.arrayBuffer()));

    const { stdout: tags } = await run(GO, ['tool', 'pprof', '-tags', file], { env, timeout: 45_000 });
    // e.g. " correlation_id: Total 1.23s\n   120ms (9.76%): 5f0c…"
    const section = /^ correlation_id: Total.*\n((?:\s+\S.*\n?)*)/m.exec(tags)?.[1] ?? '';
    const ids = [...section.matchAll(/: ([0-9a-f-]{36})$/gm)].map((m) => m[1] ?? '');
    expect(ids.length).toBeGreaterThan(0);
    expect(tags).toMatch(/^ trigger: Total/m);

    const events = await (await fetch(`${app.debugUrl}/debug/vars/events?limit=1000`)).text();
    const known = new Set([...events.matchAll(/"correlation_id":"([^"]+)"/g)].map((m) => m[1]));
    for (const id of ids) expect(known).toContain(id);

    const { stdout: whole } = await run(GO, ['tool', 'pprof', '-top', file], { env, timeout: 45_000 });
    const one = ids[0] ?? '';
    const { stdout: focused } = await run(GO, ['tool', 'pprof', '-top', `-tagfocus=correlation_id=${one}`, file], { env, timeout: 45_000 });
    expect(shownMs(focused)).toBeGreaterThan(0);
    expect(shownMs(focused)).toBeLessThan(shownMs(whole));
    expect(focused).toMatch(/\srenderLoadBalancerConfig$/m);
  }, 90_000);
});
