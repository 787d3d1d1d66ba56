/**
 * Exemplars that lead to the cycle: the reconciliation and deployment histograms and counters carry
 * the cycle's correlation id, kept per registry beside prom-client (a text registry, as hosts use),
 * written in OpenMetrics answers only, within OpenMetrics' 128-character limit.
 */
import { Registry } from 'prom-client';
import { createControllerMetrics, MAX_CORRELATION_ID_LENGTH } from '../../lib/metrics';
import { createPipeline } from '../../lib/pipeline';
import { createIntrospectionState } from '../../lib/state/store';
import { requestApp } from '../helpers/http';
import { parseExposition, type Exposition, type Sample } from './helpers/exposition-parser';
import { metricsApp } from './helpers/server';

const OPENMETRICS = { Accept: 'application/openmetrics-text; version=1.0.0' };
const TEXT = { Accept: 'text/plain; version=0.0.4' };

async function scrapeAs(registry: Registry, headers: Record<string, string>): Promise<{ text: string; exposition: Exposition }> {
  const res = await requestApp(metricsApp(registry), '/metrics', { headers });
  expect(res.status).toBe(200);
  return { text: res.text, exposition: parseExposition(res.text) };
}

function samples(exposition: Exposition, name: string): Sample[] {
  return [...exposition.families.values()].flatMap((family) => family.samples.filter((sample) => sample.name === name));
}

/** The exemplar ids on `name`'s samples, keyed by their `le` (or `''` for a counter). */
function exemplarIds(exposition: Exposition, name: string): Record<string, string> {
  const ids: Record<string, string> = {};
  for (const sample of samples(exposition, name)) {
    if (sample.exemplar !== undefined) ids[sample.labels['le'] ?? ''] = sample.exemplar.labels['correlation_id']!;
  }
  return ids;
}

describe('exemplars of the controller metrics', () => {
  it('put the id on the bucket the duration fell in and on the counters, in OpenMetrics answers only', async () => {
    const registry = new Registry();
    const metrics = createControllerMetrics(registry);
    const before = Date.now() / 1000;
    metrics.recordReconciliation(0.03, true, 'cycle-fast');
    metrics.recordReconciliation(0.7, false, 'cycle-slow');
    metrics.recordReconciliation(12, true, 'cycle-endless');
    metrics.recordDeployment(0.2, false, 'cycle-slow');

    const { exposition } = await scrapeAs(registry, OPENMETRICS);
    expect(exemplarIds(exposition, 'ctl_reconciliation_duration_seconds_bucket')).toEqual({
      '0.05': 'cycle-fast',
      '1': 'cycle-slow',
      '+Inf': 'cycle-endless',
    });
    // A counter keeps the last cycle that moved it, with the increment as value.
    expect(exemplarIds(exposition, 'ctl_reconciliation_total')).toEqual({ '': 'cycle-endless' });
    expect(exemplarIds(exposition, 'ctl_reconciliation_errors_total')).toEqual({ '': 'cycle-slow' });
    expect(exemplarIds(exposition, 'ctl_deployment_duration_seconds_bucket')).toEqual({ '0.25': 'cycle-slow' });
    expect(exemplarIds(exposition, 'ctl_deployment_total')).toEqual({ '': 'cycle-slow' });
    expect(exemplarIds(exposition, 'ctl_deployment_errors_total')).toEqual({ '': 'cycle-slow' });
    const slow = samples(exposition, 'ctl_reconciliation_duration_seconds_bucket').find((s) => s.labels['le'] === '1')!;
    expect(slow.exemplar!.value).toBe(0.7);
    expect(slow.exemplar!.timestamp).toBeGreaterThanOrEqual(before);
    expect(slow.exemplar!.timestamp).toBeLessThanOrEqual(Date.now() / 1000);
    expect(samples(exposition, 'ctl_reconciliation_total')[0]!.exemplar!.value).toBe(1);
    // Nothing else carries one.
    const carriers = [...exposition.families.values()].filter((f) => f.samples.some((s) => s.exemplar !== undefined)).map((f) => f.name);
    expect(carriers.sort()).toEqual([
      'ctl_deployment',
      'ctl_deployment_duration_seconds',
      'ctl_deployment_errors',
      'ctl_reconciliation',
      'ctl_reconciliation_duration_seconds',
      'ctl_reconciliation_errors',
    ]);

    const text = await scrapeAs(registry, TEXT);
    expect(text.text).not.toContain('cycle-');
    expect(text.text).not.toContain(' # {');
  });

  it('keep the last exemplar per bucket; calls without an id change none', async () => {
    const registry = new Registry();
    const metrics = createControllerMetrics(registry);
    metrics.recordReconciliation(0.3, true, 'first');
    metrics.recordReconciliation(0.4, true, 'second');
    metrics.recordReconciliation(0.45, true);
    const { exposition } = await scrapeAs(registry, OPENMETRICS);
    expect(exemplarIds(exposition, 'ctl_reconciliation_duration_seconds_bucket')).toEqual({ '0.5': 'second' });
    expect(exemplarIds(exposition, 'ctl_reconciliation_total')).toEqual({ '': 'second' });
  });

  it(`keep an id of ${MAX_CORRELATION_ID_LENGTH} characters and drop a longer one, leaving the previous exemplar`, async () => {
    expect(MAX_CORRELATION_ID_LENGTH).toBe(128 - 'correlation_id'.length);
    const registry = new Registry();
    const metrics = createControllerMetrics(registry);
    const longest = 'a'.repeat(MAX_CORRELATION_ID_LENGTH);
    metrics.recordReconciliation(0.3, true, longest);
    metrics.recordReconciliation(0.3, true, 'b'.repeat(MAX_CORRELATION_ID_LENGTH + 1));
    // Code points count, not UTF-16 units: 114 emoji are 228 units and still fit.
    metrics.recordDeployment(0.3, true, '😀'.repeat(MAX_CORRELATION_ID_LENGTH));
    metrics.recordDeployment(0.3, true, '😀'.repeat(MAX_CORRELATION_ID_LENGTH + 1));
    const { exposition } = await scrapeAs(registry, OPENMETRICS);
    expect(exemplarIds(exposition, 'ctl_reconciliation_duration_seconds_bucket')).toEqual({ '0.5': longest });
    expect(exemplarIds(exposition, 'ctl_deployment_duration_seconds_bucket')).toEqual({ '0.5': '😀'.repeat(MAX_CORRELATION_ID_LENGTH) });
  });

  it('refuse an id that is not a non-empty string, recording nothing', async () => {
    const registry = new Registry();
    const metrics = createControllerMetrics(registry);
    expect(() => metrics.recordReconciliation(1, true, 42 as unknown as string)).toThrow(/correlationId must be a non-empty string/);
    expect(() => metrics.recordDeployment(1, true, '')).toThrow(/got an empty string/);
    await expect(metrics.timeReconciliation(() => 1, {} as unknown as string)).rejects.toThrow(/timeReconciliation: correlationId/);
    const { exposition } = await scrapeAs(registry, OPENMETRICS);
    expect(samples(exposition, 'ctl_reconciliation_total')[0]!.value).toBe(0);
    expect(samples(exposition, 'ctl_deployment_total')[0]!.value).toBe(0);
  });

  it('are recorded by the time helpers when given an id', async () => {
    const registry = new Registry();
    const metrics = createControllerMetrics(registry);
    await metrics.timeReconciliation(() => 'done', 'timed-cycle');
    await expect(
      metrics.timeDeployment(() => {
        throw new Error('boom');
      }, 'timed-deploy'),
    ).rejects.toThrow('boom');
    const { exposition } = await scrapeAs(registry, OPENMETRICS);
    expect(exemplarIds(exposition, 'ctl_reconciliation_total')).toEqual({ '': 'timed-cycle' });
    expect(exemplarIds(exposition, 'ctl_deployment_errors_total')).toEqual({ '': 'timed-deploy' });
  });

  it("are recorded by the pipeline with the cycle's correlation id, the one its events carry", async () => {
    const state = createIntrospectionState();
    const registry = new Registry();
    const metrics = createControllerMetrics(registry, state);
    const pipeline = createPipeline(state, { metrics });
    const published: Array<{ type: string; correlation_id?: string }> = [];
    state.subscribe((event) => void published.push(event));
    const ok = await pipeline.run({ trigger: 'test', render: () => 'global\n', endpoints: ['a'], deploy: () => undefined });
    await expect(pipeline.run({ trigger: 'test', render: () => 'global\n', validate: () => false })).rejects.toThrow();
    const failed = published.find((event) => event.type === 'reconciliation.failed')!.correlation_id!;
    expect(failed).not.toBe(ok.correlationId);
    const { exposition } = await scrapeAs(registry, OPENMETRICS);
    expect(exemplarIds(exposition, 'ctl_deployment_total')).toEqual({ '': ok.correlationId });
    expect(exemplarIds(exposition, 'ctl_reconciliation_errors_total')).toEqual({ '': failed });
    expect(exemplarIds(exposition, 'ctl_reconciliation_total')).toEqual({ '': failed });
  });

  it("are on controller-runtime's reconciliation families too, per controller and result", async () => {
    const registry = new Registry();
    const metrics = createControllerMetrics(registry, undefined, { controllerRuntime: { controller: 'ingress' } });
    metrics.recordReconciliation(0.02, true, 'ok-cycle');
    metrics.recordReconciliation(3.2, false, 'bad-cycle');
    const { exposition } = await scrapeAs(registry, OPENMETRICS);
    const byResult = Object.fromEntries(
      samples(exposition, 'controller_runtime_reconcile_total').map((s) => [s.labels['result'], s.exemplar?.labels['correlation_id']]),
    );
    expect(byResult).toEqual({ success: 'ok-cycle', error: 'bad-cycle', requeue: undefined, requeue_after: undefined });
    expect(exemplarIds(exposition, 'controller_runtime_reconcile_errors_total')).toEqual({ '': 'bad-cycle' });
    expect(exemplarIds(exposition, 'controller_runtime_reconcile_time_seconds_bucket')).toEqual({
      '0.025': 'ok-cycle',
      '3.5': 'bad-cycle',
    });
    await metrics.close();
    const again = createControllerMetrics(registry, undefined, { controllerRuntime: { controller: 'ingress' } });
    again.recordReconciliation(0.02, true);
    expect((await scrapeAs(registry, OPENMETRICS)).text).not.toContain('-cycle');
  });

  it('are kept apart per registry, and leave with remove()', async () => {
    const a = new Registry();
    const b = new Registry();
    createControllerMetrics(a).recordReconciliation(0.3, true, 'only-a');
    const onB = createControllerMetrics(b);
    onB.recordReconciliation(0.3, true, 'only-b');
    expect((await scrapeAs(a, OPENMETRICS)).text).not.toContain('only-b');
    await onB.close();
    const again = createControllerMetrics(b);
    again.recordReconciliation(0.01, true);
    expect((await scrapeAs(b, OPENMETRICS)).text).not.toContain('only-b');
  });
});
