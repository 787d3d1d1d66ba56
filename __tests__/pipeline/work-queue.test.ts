/**
 * The work queue: keys deduplicated while queued and never handed to two workers, a per-key
 * exponential backoff for retries, delays, shutdown; and the `workqueue_*` families it feeds as
 * client-go's queue does (util/workqueue/metrics.go).
 */
import { Registry } from 'prom-client';
import { createControllerMetrics } from '../../lib/metrics';
import { createWorkQueue, WORK_QUEUE_DEFAULTS } from '../../lib/pipeline';
import { sampleValue } from '../metrics/helpers/exposition-parser';
import { FakeClock } from '../metrics/helpers/fake-state';
import { metricsApp, scrape } from '../metrics/helpers/server';

/** Resolves with what `next` (a `get()`) gives if it settles within a few turns, else `'pending'`. */
async function settled(next: Promise<string | undefined>): Promise<string | undefined | 'pending'> {
  return Promise.race([next, new Promise<'pending'>((resolve) => setTimeout(() => resolve('pending'), 20))]);
}

afterEach(() => {
  jest.useRealTimers();
});

describe('work queue', () => {
  it('holds a waiting key once however often it is added, in first-added order', async () => {
    const queue = createWorkQueue();
    for (const key of ['a', 'b', 'a', 'c', 'b', 'a']) queue.add(key);
    expect(queue.len()).toBe(3);
    expect([await queue.get(), await queue.get(), await queue.get()]).toEqual(['a', 'b', 'c']);
    expect(queue.len()).toBe(0);
  });

  it('never hands a key to two workers: added while worked on, it comes back once done', async () => {
    const queue = createWorkQueue();
    queue.add('a');
    expect(await queue.get()).toBe('a');
    queue.add('a');
    queue.add('a');
    expect(queue.len()).toBe(0);
    const second = queue.get();
    expect(await settled(second)).toBe('pending');
    queue.done('a');
    expect(await second).toBe('a');
    queue.done('a');
    expect(await settled(queue.get())).toBe('pending');
    queue.shutDown();
  });

  it('hands a key to a worker already waiting for one', async () => {
    const queue = createWorkQueue();
    const waiting = queue.get();
    queue.add('late');
    expect(await waiting).toBe('late');
  });

  it('retries a failed key after a backoff that doubles per failure, up to maxDelayMs, until forgotten', async () => {
    jest.useFakeTimers();
    const queue = createWorkQueue({ baseDelayMs: 10, maxDelayMs: 35 });
    const delays: number[] = [];
    for (let attempt = 0; attempt < 4; attempt++) {
      queue.addRateLimited('a');
      let waited = 0;
      while (queue.len() === 0) {
        jest.advanceTimersByTime(1);
        waited += 1;
      }
      delays.push(waited);
      expect(await queue.get()).toBe('a');
      queue.done('a');
    }
    expect(delays).toEqual([10, 20, 35, 35]);
    expect(queue.numRequeues('a')).toBe(4);
    queue.forget('a');
    expect(queue.numRequeues('a')).toBe(0);
  });

  it('keeps the sooner of two delays for a key, and adds at once for a delay <= 0', () => {
    jest.useFakeTimers();
    const queue = createWorkQueue();
    queue.addAfter('a', 100);
    queue.addAfter('a', 50);
    queue.addAfter('a', 500);
    jest.advanceTimersByTime(49);
    expect(queue.len()).toBe(0);
    jest.advanceTimersByTime(1);
    expect(queue.len()).toBe(1);
    jest.advanceTimersByTime(1000);
    expect(queue.len()).toBe(1);
    queue.addAfter('b', 0);
    expect(queue.len()).toBe(2);
  });

  it('shuts down: waiting workers get undefined, queued keys and pending retries are dropped, adds are ignored', async () => {
    jest.useFakeTimers();
    const queue = createWorkQueue();
    const waiting = createWorkQueue();
    const worker = waiting.get();
    waiting.shutDown();
    expect(await worker).toBeUndefined();
    queue.add('a');
    queue.addRateLimited('b');
    queue.shutDown();
    queue.shutDown();
    expect(queue.shuttingDown).toBe(true);
    expect(jest.getTimerCount()).toBe(0);
    queue.add('c');
    expect(queue.len()).toBe(0);
    expect(await queue.get()).toBeUndefined();
  });

  it('checks its keys and options', () => {
    const queue = createWorkQueue();
    expect(() => queue.add('')).toThrow('workQueue.add(key) needs a non-empty string key');
    expect(() => queue.add(7 as unknown as string)).toThrow(TypeError);
    expect(() => queue.addAfter('a', NaN)).toThrow('needs a number of milliseconds');
    expect(() => createWorkQueue({ baseDelay: 5 } as never)).toThrow(
      'createWorkQueue: unknown option "baseDelay" (did you mean "baseDelayMs"?)',
    );
    expect(() => createWorkQueue({ baseDelayMs: 0 })).toThrow('createWorkQueue: baseDelayMs must be an integer from 1');
    expect(() => createWorkQueue({ baseDelayMs: 100, maxDelayMs: 50 })).toThrow('createWorkQueue: maxDelayMs must be an integer from 100');
    expect(() => createWorkQueue({ metrics: {} as never })).toThrow(
      'createWorkQueue: option "metrics" must be the result of createControllerMetrics(), or a PipelineMetrics: recordValidation, recordDeployment and a driver with recordReconciliation',
    );
    expect(() => createWorkQueue({ name: '' })).toThrow('createWorkQueue: name must be a non-empty string');
    expect(WORK_QUEUE_DEFAULTS).toEqual({ name: 'queue', baseDelayMs: 5, maxDelayMs: 1_000_000 });
    expect(Object.isFrozen(WORK_QUEUE_DEFAULTS)).toBe(true);
    expect(createWorkQueue().name).toBe('queue');
  });
});

describe('work queue metrics', () => {
  function setup() {
    const clock = new FakeClock();
    const registry = new Registry();
    const metrics = createControllerMetrics(registry, undefined, { controllerRuntime: { controller: 'ingress' }, now: clock.now });
    return { clock, registry, metrics, app: metricsApp(registry) };
  }
  const labels = { name: 'ingress', controller: 'ingress' };

  it('feed the workqueue families as client-go does, labelled with the queue name (the controller name by default)', async () => {
    const { clock, metrics, app } = setup();
    const queue = createWorkQueue({ metrics });
    expect(queue.name).toBe('ingress');
    let e = await scrape(app);
    for (const name of ['workqueue_adds_total', 'workqueue_retries_total', 'workqueue_depth', 'workqueue_queue_duration_seconds_count']) {
      expect({ name, value: sampleValue(e, name, labels) }).toEqual({ name, value: 0 });
    }

    queue.add('default/a');
    queue.add('default/a');
    queue.add('default/b');
    clock.advance(250);
    const a = await queue.get();
    clock.advance(1500);
    e = await scrape(app);
    expect(sampleValue(e, 'workqueue_adds_total', labels)).toBe(2);
    expect(sampleValue(e, 'workqueue_depth', labels)).toBe(1);
    expect(sampleValue(e, 'workqueue_queue_duration_seconds_count', labels)).toBe(1);
    expect(sampleValue(e, 'workqueue_queue_duration_seconds_sum', labels)).toBe(0.25);
    expect(sampleValue(e, 'workqueue_queue_duration_seconds_bucket', { ...labels, le: '0.1' })).toBe(0);
    expect(sampleValue(e, 'workqueue_queue_duration_seconds_bucket', { ...labels, le: '1' })).toBe(1);
    expect(sampleValue(e, 'workqueue_unfinished_work_seconds', labels)).toBe(1.5);
    expect(sampleValue(e, 'workqueue_longest_running_processor_seconds', labels)).toBe(1.5);

    const b = await queue.get();
    clock.advance(500);
    e = await scrape(app);
    expect(sampleValue(e, 'workqueue_depth', labels)).toBe(0);
    expect(sampleValue(e, 'workqueue_unfinished_work_seconds', labels)).toBe(2.5);
    expect(sampleValue(e, 'workqueue_longest_running_processor_seconds', labels)).toBe(2);

    queue.done(a!);
    queue.addRateLimited(b!);
    queue.done(b!);
    e = await scrape(app);
    expect(sampleValue(e, 'workqueue_work_duration_seconds_count', labels)).toBe(2);
    expect(sampleValue(e, 'workqueue_work_duration_seconds_sum', labels)).toBe(2.5);
    expect(sampleValue(e, 'workqueue_retries_total', labels)).toBe(1);
    expect(sampleValue(e, 'workqueue_unfinished_work_seconds', labels)).toBe(0);
    expect(sampleValue(e, 'workqueue_longest_running_processor_seconds', labels)).toBe(0);
    queue.shutDown();
  });

  it('leave the metrics when the queue shuts down, freeing the name; two live queues may not share one', async () => {
    const { metrics, app } = setup();
    const first = createWorkQueue({ metrics, name: 'lb' });
    expect(() => createWorkQueue({ metrics, name: 'lb' })).toThrow(
      'a work queue named "lb" already reports workqueue metrics on this registry',
    );
    first.shutDown();
    expect(sampleValue(await scrape(app), 'workqueue_adds_total', { name: 'lb', controller: 'lb' })).toBeUndefined();
    const second = createWorkQueue({ metrics, name: 'lb' });
    second.add('x');
    expect(sampleValue(await scrape(app), 'workqueue_adds_total', { name: 'lb', controller: 'lb' })).toBe(1);
    await metrics.close();
    second.add('y');
    expect(second.len()).toBe(2);
  });

  it('record nothing with metrics whose controller-runtime families are off', async () => {
    const registry = new Registry();
    const metrics = createControllerMetrics(registry);
    const queue = createWorkQueue({ metrics });
    queue.add('a');
    expect(queue.name).toBe('queue');
    expect(await registry.metrics()).not.toContain('workqueue_');
  });
});

describe('work queue with a metrics clock that goes wrong', () => {
  it('keeps queueing, delaying and handing out keys; the scrape names the clock for the unfinished-work families only', async () => {
    const registry = new Registry();
    let reading: unknown = 0;
    const metrics = createControllerMetrics(registry, undefined, {
      controllerRuntime: { controller: 'ingress' },
      now: () => reading as number,
    });
    const queue = createWorkQueue({ metrics });
    reading = NaN;
    queue.add('default/a');
    queue.addAfter('default/b', 5);
    expect(await queue.get()).toBe('default/a');
    expect(await queue.get()).toBe('default/b');
    queue.done('default/a');

    const errors: unknown[] = [];
    const e = await scrape(metricsApp(registry, { onError: (err) => errors.push(err) }));
    const labels = { name: 'ingress', controller: 'ingress' };
    expect((errors as Array<{ family: string; message: string }>).map((err) => err.family)).toEqual([
      'workqueue_unfinished_work_seconds',
      'workqueue_longest_running_processor_seconds',
    ]);
    for (const err of errors as Error[]) expect(err.message).toMatch(/createControllerMetrics: now\(\) returned NaN/);
    expect(sampleValue(e, 'workqueue_adds_total', labels)).toBe(2);
    expect(sampleValue(e, 'workqueue_work_duration_seconds_sum', labels)).toBe(0);
    expect(sampleValue(e, 'workqueue_unfinished_work_seconds', labels)).toBeUndefined();
    queue.shutDown();
  });
});
