import { collectDefaultMetrics, Registry } from 'prom-client';
import { collectProcessMetrics, createControllerMetrics } from '../../lib/metrics';
import type { Exposition } from './helpers/exposition-parser';
import { family, sampleValue } from './helpers/exposition-parser';
import { metricsApp, scrape } from './helpers/server';

const processFamilies = (exposition: Exposition, prefix: string): string[] =>
  [...exposition.families.keys()].filter((name) => name.startsWith(`${prefix}process_`) || name.startsWith(`${prefix}nodejs_`));

describe('Node.js process metrics', () => {
  it('are off by default', async () => {
    const registry = new Registry();
    createControllerMetrics(registry);
    const e = await scrape(metricsApp(registry));
    // The 14 families and build_info.
    expect(e.families.size).toBe(15);
    expect(processFamilies(e, 'ctl_')).toEqual([]);
  });

  it('use the controller prefix when enabled with true', async () => {
    const registry = new Registry();
    createControllerMetrics(registry, undefined, { processMetrics: true });
    const e = await scrape(metricsApp(registry));
    expect(family(e, 'ctl_process_cpu_user_seconds_total').type).toBe('counter');
    expect(family(e, 'ctl_nodejs_heap_size_used_bytes').type).toBe('gauge');
    expect(sampleValue(e, 'ctl_nodejs_heap_size_used_bytes')).toBeGreaterThan(0);
    expect(family(e, 'ctl_reconciliation_total').type).toBe('counter');
  });

  it('use their own prefix when given one', async () => {
    const registry = new Registry();
    createControllerMetrics(registry, undefined, { processMetrics: { prefix: 'lbctl_' } });
    const e = await scrape(metricsApp(registry));
    expect(family(e, 'lbctl_process_cpu_user_seconds_total').type).toBe('counter');
    expect(processFamilies(e, 'ctl_')).toEqual([]);
    expect(() => createControllerMetrics(new Registry(), undefined, { processMetrics: { prefix: '9' } })).toThrow(
      /createControllerMetrics: processMetrics\.prefix must be a string matching/,
    );
  });

  it('are idempotent per registry and prefix, whoever collected them first', async () => {
    const registry = new Registry();
    expect(collectProcessMetrics(registry)).toBe(true);
    const once = processFamilies(await scrape(metricsApp(registry)), 'ctl_');
    expect(once.length).toBeGreaterThan(5);
    expect(collectProcessMetrics(registry)).toBe(false);
    expect(collectProcessMetrics(registry, { prefix: 'ctl_' })).toBe(false);
    createControllerMetrics(registry, undefined, { processMetrics: true });
    createControllerMetrics(registry, undefined, { prefix: 'b_', processMetrics: { prefix: 'ctl_' } });
    const e = await scrape(metricsApp(registry));
    expect(processFamilies(e, 'ctl_')).toEqual(once);
    expect(e.families.size).toBe(once.length + 2 * 15);

    const hostCollected = new Registry();
    collectDefaultMetrics({ register: hostCollected, prefix: 'ctl_' });
    expect(collectProcessMetrics(hostCollected)).toBe(false);
    expect(() => createControllerMetrics(hostCollected, undefined, { processMetrics: true })).not.toThrow();
  });

  it('collect again after registry.clear()', async () => {
    const registry = new Registry();
    collectProcessMetrics(registry);
    registry.clear();
    expect(collectProcessMetrics(registry)).toBe(true);
    expect(family(await scrape(metricsApp(registry)), 'ctl_process_cpu_user_seconds_total').type).toBe('counter');
  });

  it('stay registered when the controller metrics are removed', async () => {
    const registry = new Registry();
    const metrics = createControllerMetrics(registry, undefined, { processMetrics: true });
    await metrics.close();
    const e = await scrape(metricsApp(registry));
    expect(e.families.has('ctl_reconciliation_total')).toBe(false);
    expect(e.families.has('ctl_process_cpu_user_seconds_total')).toBe(true);
  });

  it('explain a partial clash instead of half-registering silently', () => {
    const registry = new Registry();
    collectDefaultMetrics({ register: registry, prefix: 'x_' });
    registry.removeSingleMetric('x_process_cpu_user_seconds_total');
    expect(() => collectProcessMetrics(registry, { prefix: 'x_' })).toThrow(
      /cannot add Node\.js process metrics with prefix "x_": .*already.*use another processMetrics\.prefix or another registry/,
    );
  });
});
