import { Registry } from 'prom-client';
import { createControllerMetrics } from '../../lib/metrics';
import { createIntrospectionState } from '../../lib/state/store';

describe('health metrics (healthMetrics: true)', () => {
  it('expose each readiness gate and the last progress per activity, read at scrape time', async () => {
    const registry = new Registry();
    const state = createIntrospectionState();
    const metrics = createControllerMetrics(registry, state, { prefix: 'ctl_', healthMetrics: true });
    const caches = state.addReadinessGate('caches-synced');
    let text = await registry.metrics();
    expect(text).toContain(
      '# TYPE ctl_readiness_gate_open gauge\nctl_readiness_gate_open{gate="config-loaded"} 0\nctl_readiness_gate_open{gate="caches-synced"} 0\n',
    );
    expect(text).toContain('# TYPE ctl_progress_last_timestamp_seconds gauge\n');
    expect(text).not.toMatch(/^ctl_progress_last_timestamp_seconds\{/m);

    state.setConfig({ templates: {}, watched_resources: [] }, '1');
    caches.remove();
    const before = Date.now() / 1000;
    metrics.recordReconciliation(0.2, true);
    text = await registry.metrics();
    expect(text).toContain('ctl_readiness_gate_open{gate="config-loaded"} 1\n');
    expect(text).not.toContain('caches-synced');
    const stamp = Number(/^ctl_progress_last_timestamp_seconds\{activity="reconciliation"\} (\S+)$/m.exec(text)?.[1]);
    expect(stamp).toBeGreaterThanOrEqual(Math.floor(before));
    expect(stamp).toBeLessThanOrEqual(Date.now() / 1000 + 1);

    await metrics.close();
    expect(await registry.metrics()).not.toContain('ctl_readiness_gate_open');
  });

  it('are off by default and need a full state', () => {
    const registry = new Registry();
    createControllerMetrics(registry, createIntrospectionState());
    expect(registry.getSingleMetric('ctl_readiness_gate_open')).toBeUndefined();
    expect(() => createControllerMetrics(new Registry(), undefined, { healthMetrics: true })).toThrow(
      'healthMetrics needs the state (the second argument) to be an IntrospectionState',
    );
    expect(() => createControllerMetrics(new Registry(), undefined, { healthMetrics: 1 as unknown as boolean })).toThrow(
      'createControllerMetrics: healthMetrics must be true or false, got 1',
    );
  });
});
