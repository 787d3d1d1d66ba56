import { Registry } from 'prom-client';
import { closeAllListening, listen, request } from '../helpers/http';
import { closeIntrospectionApps, introspectionApp } from '../helpers/introspection-app';
import { watchProgress } from '../../lib/health';
import { createControllerMetrics } from '../../lib/metrics';
import { createIntrospectionState } from '../../lib/state/store';
import type { IntrospectionState } from '../../lib/state/types';

afterAll(closeIntrospectionApps);
afterEach(closeAllListening);

/** The introspection router on a real socket: its origin. */
const serve = async (state: IntrospectionState): Promise<string> => (await listen(introspectionApp(state))).origin;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function configured(): IntrospectionState {
  const state = createIntrospectionState();
  state.setConfig({ templates: {}, watched_resources: [] }, '1');
  return state;
}

describe('progress watchdog (liveness)', () => {
  it('passes during start-up grace, fails when progress stops, and recovers on the next heartbeat', async () => {
    const state = configured();
    watchProgress(state, { timeoutMs: 300, startupGraceMs: 200 });
    const origin = await serve(state);

    const early = await request(`${origin}/livez?verbose`);
    expect(early.status).toBe(200);
    expect(early.text).toMatch(
      /^\[\+\]ping ok\n\[\+\]progress-reconciliation ok \(no reconciliation progress yet; start-up grace ends in \d+ms\)\nlivez check passed\n$/,
    );

    await sleep(260);
    const noneYet = await request(`${origin}/livez/progress-reconciliation`);
    expect(noneYet.status).toBe(503);
    expect(noneYet.text).toMatch(
      /^\[-\]progress-reconciliation failed: no reconciliation progress since start-up \d+ms ago \(start-up grace 200ms\)\n/,
    );

    state.recordProgress();
    const fresh = await request(`${origin}/livez?verbose`);
    expect(fresh.status).toBe(200);
    expect(fresh.text).toMatch(/\[\+\]progress-reconciliation ok \(last reconciliation progress \d+ms ago\)/);

    await sleep(350);
    const stale = await request(`${origin}/livez`);
    expect(stale.status).toBe(503);
    expect(stale.text).toMatch(
      /\[-\]progress-reconciliation failed: no reconciliation progress for \d+ms \(timeout 300ms, last at \d{4}-\d\d-\d\dT[\d:.]+Z\)/,
    );
    // Readiness is not liveness: a stuck loop restarts the pod, it does not take it out of service.
    expect((await request(`${origin}/readyz`)).status).toBe(200);
    const healthz = await request(`${origin}/healthz`);
    expect(healthz.status).toBe(503);
    expect(healthz.json<{ checks: Record<string, { error: string }> }>().checks['progress-reconciliation']!.error).toMatch(
      /^no reconciliation progress for/,
    );

    state.recordProgress('reconciliation');
    expect((await request(`${origin}/livez`)).status).toBe(200);
  });

  it('keeps an idle controller alive when it ticks a heartbeat, and watches any named activity', async () => {
    const state = configured();
    const watchdog = watchProgress(state, { activity: 'idle-loop', timeoutMs: 200, startupGraceMs: 0, name: 'loop' });
    const origin = await serve(state);
    const ticker = setInterval(() => state.recordProgress('idle-loop'), 50);
    try {
      state.recordProgress('idle-loop');
      for (let i = 0; i < 4; i++) {
        await sleep(100);
        expect((await request(`${origin}/livez/loop`)).status).toBe(200);
      }
    } finally {
      clearInterval(ticker);
    }
    await sleep(260);
    expect((await request(`${origin}/livez/loop`)).status).toBe(503);
    expect(state.progress()).toEqual([
      { activity: 'idle-loop', at: expect.any(String), ageMs: expect.any(Number), count: expect.any(Number) },
    ]);
    await watchdog.close();
    expect((await request(`${origin}/livez`)).status).toBe(200);
  });

  it('counts completed reconciliation cycles recorded through createControllerMetrics, failed ones too', async () => {
    const state = configured();
    const metrics = createControllerMetrics(new Registry(), state);
    metrics.recordReconciliation(0.1, true);
    await expect(metrics.timeReconciliation(() => Promise.reject(new Error('render failed')))).rejects.toThrow('render failed');
    expect(state.progress()).toEqual([{ activity: 'reconciliation', at: expect.any(String), ageMs: expect.any(Number), count: 2 }]);
  });

  it('rejects wrong options at creation', () => {
    const state = configured();
    expect(() => watchProgress(state, {} as never)).toThrow(
      'watchProgress: timeoutMs must be an integer from 1 to 2,147,483,647 (milliseconds, required), got undefined',
    );
    expect(() => watchProgress(state, { timeoutMs: 1.5 })).toThrow(TypeError);
    expect(() => watchProgress(state, { timeoutMs: 100, startupGraceMs: -1 })).toThrow(
      'watchProgress: startupGraceMs must be an integer from 0 to 2,147,483,647 (milliseconds), got -1',
    );
    expect(() => watchProgress(state, { timeoutMs: 100, timeout: 5 } as never)).toThrow(
      'watchProgress: unknown option "timeout" (did you mean "timeoutMs"?)',
    );
    expect(() => state.recordProgress('bad name')).toThrow(TypeError);
  });
});
