/**
 * Every factory accepts its own documented defaults: each exported `*_DEFAULTS` object, spread back
 * in (and each of its values alone), is taken as it is and resolves to the same options as leaving
 * them out. A default refused by its own check (`requeueAfterMs: 0` against "from 1") fails here.
 */
import { Registry } from 'prom-client';
import { CACHE_WAIT_DEFAULTS, resolveCacheWaitOptions, waitForCaches } from '../../lib/kubernetes/caches';
import { DRAIN_DEFAULTS, drain, resolveDrainOptions } from '../../lib/health/drain';
import { WATCHDOG_DEFAULTS, resolveWatchdogOptions, watchProgress } from '../../lib/health/watchdog';
import { INTROSPECTION_ROUTER_DEFAULTS, createIntrospectionRouter, resolveRouterOptions } from '../../lib/introspection/router';
import { JSON_STREAM_DEFAULTS, measureJson, serializeAtOnce, writeJson } from '../../lib/json-stream/index';
import { DEFAULT_JSONPATH_LIMITS } from '../../lib/jsonpath';
import { CONTROLLER_METRICS_DEFAULTS, createControllerMetrics } from '../../lib/metrics';
import { createPipeline, createWorkQueue, QUEUE_PROCESSING_DEFAULTS, WORK_QUEUE_DEFAULTS } from '../../lib/pipeline';
import { createPprofRouter } from '../../lib/pprof';
import { PPROF_DEFAULTS, TRACE_DEFAULTS, resolvePprofOptions } from '../../lib/pprof/options';
import { STATE_DEFAULTS, createIntrospectionState, resolveStateOptions } from '../../lib/state/store';
import { Writable } from 'node:stream';

/** `[key, { [key]: value }]` for every own entry: each default fed back in alone. */
function eachAlone<T extends object>(defaults: T): Array<[string, Partial<T>]> {
  return Object.entries(defaults).map(([key, value]) => [key, { [key]: value } as Partial<T>]);
}

const closers: Array<() => unknown> = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

describe('each factory takes its exported defaults back', () => {
  it('createIntrospectionState: STATE_DEFAULTS, spread and one by one', () => {
    // A clock given is wrapped so that each reading is checked; every other option resolves the same.
    const { now: given, ...fromDefaults } = resolveStateOptions({ ...STATE_DEFAULTS });
    const { now: omitted, ...fromNothing } = resolveStateOptions({});
    expect(fromDefaults).toEqual(fromNothing);
    expect(Math.abs(given() - omitted())).toBeLessThan(1000);
    for (const [, alone] of eachAlone(STATE_DEFAULTS)) expect(() => createIntrospectionState(alone)).not.toThrow();
    expect(() => createIntrospectionState({ ...STATE_DEFAULTS })).not.toThrow();
  });

  it('createIntrospectionRouter: INTROSPECTION_ROUTER_DEFAULTS with its nested watch, limits and jsonPath', async () => {
    const state = createIntrospectionState();
    const whole = { ...INTROSPECTION_ROUTER_DEFAULTS };
    expect(resolveRouterOptions(whole)).toEqual(resolveRouterOptions({}));
    const nested = {
      ...INTROSPECTION_ROUTER_DEFAULTS,
      watch: { ...INTROSPECTION_ROUTER_DEFAULTS.watch },
      limits: { ...INTROSPECTION_ROUTER_DEFAULTS.limits, jsonPath: { ...DEFAULT_JSONPATH_LIMITS } },
    };
    expect(resolveRouterOptions(nested)).toEqual(resolveRouterOptions({}));
    for (const [, alone] of eachAlone(INTROSPECTION_ROUTER_DEFAULTS)) {
      const router = createIntrospectionRouter(state, alone);
      closers.push(() => router.close());
    }
  });

  it('createPprofRouter: PPROF_DEFAULTS, and TRACE_DEFAULTS as its trace option', async () => {
    // Only where the profiler choice came from differs: given (`'option'`) rather than left out.
    expect(resolvePprofOptions({ ...PPROF_DEFAULTS }, {})).toEqual({ ...resolvePprofOptions(undefined, {}), profilerSource: 'option' });
    expect(resolvePprofOptions({ trace: { ...TRACE_DEFAULTS } }, {}).trace).toEqual(TRACE_DEFAULTS);
    for (const [, alone] of eachAlone(PPROF_DEFAULTS)) {
      const router = createPprofRouter(undefined, alone);
      closers.push(() => router.close());
    }
    for (const [, alone] of eachAlone(TRACE_DEFAULTS)) expect(() => resolvePprofOptions({ trace: alone }, {})).not.toThrow();
  });

  it('createControllerMetrics: CONTROLLER_METRICS_DEFAULTS with its nested groups', () => {
    expect(() =>
      createControllerMetrics(new Registry(), undefined, {
        ...CONTROLLER_METRICS_DEFAULTS,
        buckets: { ...CONTROLLER_METRICS_DEFAULTS.buckets },
        buildInfo: { ...(CONTROLLER_METRICS_DEFAULTS.buildInfo as object) },
      }),
    ).not.toThrow();
    for (const [, alone] of eachAlone(CONTROLLER_METRICS_DEFAULTS))
      expect(() => createControllerMetrics(new Registry(), undefined, alone)).not.toThrow();
  });

  it('createWorkQueue and processQueue: WORK_QUEUE_DEFAULTS and QUEUE_PROCESSING_DEFAULTS (requeueAfterMs 0 is "not requeued")', async () => {
    const pipeline = createPipeline(createIntrospectionState());
    for (const options of [{ ...WORK_QUEUE_DEFAULTS }, ...eachAlone(WORK_QUEUE_DEFAULTS).map(([, alone]) => alone)]) {
      const queue = createWorkQueue(options);
      queue.shutDown();
    }
    const cycle = (key: string) => ({ trigger: key, render: () => 'rendered' });
    for (const options of [{ ...QUEUE_PROCESSING_DEFAULTS }, ...eachAlone(QUEUE_PROCESSING_DEFAULTS).map(([, alone]) => alone)]) {
      const processing = pipeline.processQueue(createWorkQueue(), { cycle, ...options });
      expect(processing.workers).toBe(QUEUE_PROCESSING_DEFAULTS.workers);
      await processing.close();
    }
  });

  it('watchProgress, waitForCaches and drain: WATCHDOG_DEFAULTS, CACHE_WAIT_DEFAULTS and DRAIN_DEFAULTS', async () => {
    expect(resolveWatchdogOptions({ ...WATCHDOG_DEFAULTS, timeoutMs: 1000 })).toEqual(resolveWatchdogOptions({ timeoutMs: 1000 }));
    const watchdog = watchProgress(createIntrospectionState(), { ...WATCHDOG_DEFAULTS, timeoutMs: 1000 });
    closers.push(() => watchdog.close());
    expect(resolveCacheWaitOptions({ ...CACHE_WAIT_DEFAULTS })).toEqual(resolveCacheWaitOptions({}));
    for (const [, alone] of eachAlone(CACHE_WAIT_DEFAULTS)) {
      const gate = waitForCaches(createIntrospectionState(), { informer: () => true }, alone);
      closers.push(() => gate.close());
    }
    expect(resolveDrainOptions({ ...DRAIN_DEFAULTS })).toEqual(resolveDrainOptions({}));
    for (const [, alone] of eachAlone(DRAIN_DEFAULTS)) {
      await drain(createIntrospectionState(), { ...alone, delayMs: 0 });
    }
  });

  it('the JSON writer: JSON_STREAM_DEFAULTS, each function with the defaults it documents', async () => {
    const sink = new Writable({ write: (_chunk, _encoding, done) => done() });
    const { sliceMs, chunkBytes, limitBytes, maxBytes, expectedBytes, ...bounds } = JSON_STREAM_DEFAULTS;
    await expect(writeJson(sink, { a: 1 }, { sliceMs, chunkBytes, ...bounds })).resolves.toBe(7);
    await expect(measureJson({ a: 1 }, { limitBytes, ...bounds })).resolves.toMatchObject({ bytes: 7 });
    expect(serializeAtOnce({ a: 1 }, { budgetMs: 10, maxBytes, expectedBytes, ...bounds })).toBeDefined();
  });
});
