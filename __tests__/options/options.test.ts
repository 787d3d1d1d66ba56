import { Writable } from 'node:stream';
import express from 'express';
import { Registry } from 'prom-client';
import * as api from '../../lib';
import { createAccessGuard } from '../../lib/http/access-guard';
import { CACHE_WAIT_DEFAULTS, resolveCacheWaitOptions, waitForCaches } from '../../lib/kubernetes/caches';
import { DRAIN_DEFAULTS, drain, resolveDrainOptions } from '../../lib/health/drain';
import { WATCHDOG_DEFAULTS, resolveWatchdogOptions, watchProgress } from '../../lib/health/watchdog';
import { INTROSPECTION_ROUTER_DEFAULTS, createIntrospectionRouter, resolveRouterOptions } from '../../lib/introspection/router';
import {
  DEFAULT_JSON_BOUNDS,
  JSON_STREAM_DEFAULTS,
  measureJson,
  serializeAtOnce,
  stringifyAtOnce,
  writeJson,
} from '../../lib/json-stream/index';
import { DEFAULT_JSONPATH_LIMITS } from '../../lib/jsonpath';
import { createMetricsRouter } from '../../lib/metrics';
import {
  arrayOption,
  booleanOption,
  checkOptionObject,
  checkStateArgument,
  choiceOption,
  describeValue,
  didYouMean,
  integerOption,
  numberOption,
  resultCheckedOption,
  stringOption,
} from '../../lib/options';
import { createPprofRouter } from '../../lib/pprof';
import { PPROF_DEFAULTS, TRACE_DEFAULTS, resolvePprofOptions, type PprofOptions } from '../../lib/pprof/options';
import { STATE_DEFAULTS, createIntrospectionState, resolveStateOptions } from '../../lib/state/store';
import type { IntrospectionState } from '../../lib/state/types';
import { listen, request } from '../helpers/http';

/** Every object reachable from `value` is frozen. */
function deeplyFrozen(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return true;
  return Object.isFrozen(value) && Object.values(value).every(deeplyFrozen);
}

/** A writable that keeps the length of every write. */
function writeSizes(): { out: Writable; sizes: number[] } {
  const sizes: number[] = [];
  const out = new Writable({
    write(chunk: Buffer, _encoding, done) {
      sizes.push(chunk.length);
      done();
    },
  });
  return { out, sizes };
}

describe('the option helpers', () => {
  it.each([
    ['maxStep', ['maxSteps', 'maxNodes'], ' (did you mean "maxSteps"?)'],
    ['acess', ['debug', 'access', 'pprof'], ' (did you mean "access"?)'],
    ['Debug', ['debug'], ' (did you mean "debug"?)'],
    ['completelyDifferent', ['debug', 'access'], ''],
  ])('suggests for %s', (key, known, hint) => {
    expect(didYouMean(key, known)).toBe(hint);
  });

  it.each([
    [1.5, 'x: n must be an integer from 1 to 10, got 1.5'],
    [0, 'x: n must be an integer from 1 to 10, got 0'],
    [11, 'x: n must be an integer from 1 to 10, got 11'],
    ['5', 'x: n must be an integer from 1 to 10, got "5"'],
    [Number.NaN, 'x: n must be an integer from 1 to 10, got NaN'],
  ])('rejects the integer %p', (value, message) => {
    expect(() => integerOption('x', 'n', value, 5, 1, 10)).toThrow(new TypeError(message));
  });

  it('fills defaults, and checks objects and booleans', () => {
    expect(integerOption('x', 'n', undefined, 5, 1, 10)).toBe(5);
    expect(booleanOption('x', 'b', undefined, true)).toBe(true);
    expect(() => booleanOption('x', 'b', 'yes', true)).toThrow(new TypeError('x: b must be true or false, got "yes"'));
    expect(() => checkOptionObject('x', 'sub', [], ['a'])).toThrow(new TypeError('x: sub must be an object (or omitted), got an array'));
    expect(checkOptionObject('x', '', undefined, ['a'])).toEqual({});
  });

  it('makes an option without a fallback required, and says what it means', () => {
    expect(() => integerOption('x', 'timeoutMs', undefined, undefined, 1, 1000, 'milliseconds, required')).toThrow(
      new TypeError('x: timeoutMs must be an integer from 1 to 1,000 (milliseconds, required), got undefined'),
    );
    expect(integerOption('x', 'timeoutMs', 7, undefined, 1, 1000)).toBe(7);
  });

  it('checks numbers with fractions, Infinity only where it means "no limit"', () => {
    expect(numberOption('x', 'n', 0.5, 1, { min: 0, max: 1 })).toBe(0.5);
    expect(numberOption('x', 'n', Infinity, 1, { min: 0, max: Infinity })).toBe(Infinity);
    expect(() => numberOption('x', 'n', Infinity, 1, { min: 0, max: 1000 })).toThrow(
      new TypeError('x: n must be a number from 0 to 1,000, got Infinity'),
    );
    expect(() => numberOption('x', 'n', Number.NaN, 1, { min: 1, max: Infinity })).toThrow(
      new TypeError('x: n must be a number >= 1 (Infinity for no limit), got NaN'),
    );
    expect(() => numberOption('x', 'n', 0, 1, { min: 0, max: 1000, minExcluded: true })).toThrow(
      new TypeError('x: n must be a number greater than 0 and at most 1,000, got 0'),
    );
  });

  it('checks choices, strings, arrays, with a hint for a near miss and no echo of a short secret', () => {
    expect(choiceOption('x', 'mode', undefined, 'auto', ['auto', 'inspector'])).toBe('auto');
    expect(() => choiceOption('x', 'mode', 'inspecter', 'auto', ['auto', 'inspector'])).toThrow(
      new TypeError('x: mode must be one of auto, inspector, got "inspecter" (did you mean "inspector"?)'),
    );
    expect(() => stringOption('x', 'token', 'hunter2', undefined, 16)).toThrow(
      new TypeError('x: token must be a string of at least 16 characters, got 7 characters'),
    );
    expect(stringOption('x', 'token', undefined, undefined, 16)).toBeUndefined();
    const isNumber = (v: unknown): v is number => typeof v === 'number';
    expect(() => arrayOption('x', 'list', [1, 'two'], [], isNumber, 'numbers')).toThrow(
      new TypeError('x: list must be an array of numbers; entry 1 is "two"'),
    );
    expect(() => arrayOption('x', 'list', 'one', [], isNumber, 'numbers')).toThrow(
      new TypeError('x: list must be an array of numbers, got "one"'),
    );
  });

  describe('a function option that is tried at creation and checked at each call (resultCheckedOption)', () => {
    const isFinite = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
    const CHECK = { valid: isFinite, expected: 'a finite number' };
    const fallback = (): number => 1;

    it('answers the default itself, uncalled and unwrapped, when the option is not given', () => {
      const counted = jest.fn(fallback);
      expect(resultCheckedOption('make', 'now', undefined, counted, 'a clock', CHECK)).toBe(counted);
      expect(counted).not.toHaveBeenCalled();
    });

    it('calls a given function once at creation and answers it checked', () => {
      const given = jest.fn(() => 5);
      const checked = resultCheckedOption('make', 'now', given, fallback, 'a clock', CHECK);
      expect(given).toHaveBeenCalledTimes(1);
      expect(checked()).toBe(5);
      expect(given).toHaveBeenCalledTimes(2);
    });

    it.each<[string, unknown, string]>([
      ['NaN', NaN, 'NaN'],
      ['Infinity', Infinity, 'Infinity'],
      ['a string', '5', '"5"'],
      ['undefined', undefined, 'undefined'],
      ['null', null, 'null'],
      ['an object', { ms: 5 }, 'an object'],
      ['a promise', Promise.resolve(5), 'a promise'],
      ['a BigInt', 5n, 'the BigInt 5n'],
    ])('refuses at creation a function returning %s, naming the option and the value', (_label, result, shown) => {
      expect(() => resultCheckedOption('make', 'now', () => result, fallback, 'a clock', CHECK)).toThrow(
        new TypeError(`make: now() returned ${shown}; expected a finite number`),
      );
    });

    it('refuses at creation a function that throws, and a value that is no function', () => {
      const failure = new Error('clock unplugged');
      let thrown: unknown;
      try {
        resultCheckedOption(
          'make',
          'now',
          () => {
            throw failure;
          },
          fallback,
          'a clock',
          CHECK,
        );
      } catch (err) {
        thrown = err;
      }
      expect(thrown).toEqual(new Error('make: now() threw: clock unplugged'));
      expect((thrown as Error).cause).toBe(failure);
      expect(() => resultCheckedOption('make', 'now', 5, fallback, 'a clock', CHECK)).toThrow(
        new TypeError('make: now must be a clock, got 5'),
      );
    });

    it('names the option when a function that passed at creation goes wrong later', () => {
      let reading: unknown = 1;
      const checked = resultCheckedOption('make', 'now', () => reading, fallback, 'a clock', CHECK);
      reading = NaN;
      expect(() => checked()).toThrow(new TypeError('make: now() returned NaN; expected a finite number'));
      reading = 2;
      expect(checked()).toBe(2);
    });
  });

  it('describes any value without throwing, a revoked or hostile Proxy included', () => {
    const { proxy, revoke } = Proxy.revocable([], {});
    revoke();
    const hostile = new Proxy(
      {},
      {
        getPrototypeOf() {
          throw new Error('trap');
        },
      },
    );
    expect([proxy, hostile, new Map(), new Set(), Promise.resolve(), [], {}].map(describeValue)).toEqual([
      'an object',
      'an object',
      'a Map',
      'a Set',
      'a promise',
      'an array',
      'an object',
    ]);
  });

  it.each([
    [undefined, 'undefined'],
    [{}, 'an empty object'],
    [{ delayMs: 5, servers: [] }, 'an object with delayMs, servers'],
    [{ a: 1, b: 2, c: 3, d: 4, e: 5, f: 6 }, 'an object with a, b, c, d, e, …'],
    [{ listVars: () => [] }, 'an object without readVar'],
  ])('names a wrong state argument %j', (state, got) => {
    expect(() => checkStateArgument('x', state, ['listVars', 'readVar'])).toThrow(
      new TypeError(`x: the first argument must be the IntrospectionState (from createIntrospectionState()), got ${got}`),
    );
  });
});

describe('every factory answers a typo with "did you mean"', () => {
  const informer = { start: () => Promise.resolve(), on: () => undefined };
  it.each<[string, () => unknown, string]>([
    [
      'createIntrospectionState',
      () => createIntrospectionState({ eventCapacty: 10 } as never),
      '"eventCapacty" (did you mean "eventCapacity"?)',
    ],
    [
      'createIntrospectionRouter',
      () => createIntrospectionRouter(createIntrospectionState(), { debg: true } as never),
      '"debg" (did you mean "debug"?)',
    ],
    [
      'createIntrospectionRouter watch',
      () => createIntrospectionRouter(createIntrospectionState(), { watch: { maxWatcher: 1 } } as never),
      'createIntrospectionRouter: unknown option "watch.maxWatcher" (did you mean "maxWatchers"?); known options of watch: heartbeatMs, maxWatchers, bufferBytes',
    ],
    [
      'createIntrospectionRouter limits',
      () => createIntrospectionRouter(createIntrospectionState(), { limits: { maxQueuedRead: 1 } } as never),
      'createIntrospectionRouter: unknown option "limits.maxQueuedRead" (did you mean "maxQueuedReads"?)',
    ],
    [
      'createIntrospectionRouter limits.jsonPath',
      () => createIntrospectionRouter(createIntrospectionState(), { limits: { jsonPath: { maxStep: 5 } } } as never),
      'createIntrospectionRouter: unknown option "limits.jsonPath.maxStep" (did you mean "maxSteps"?); known options of limits.jsonPath: maxTemplateLength, maxNodes, maxResults, maxSteps, maxOutputBytes, maxDepth',
    ],
    [
      'createAccessGuard token',
      () => createAccessGuard({ tokn: 'a-long-enough-token-1234' } as never),
      'createAccessGuard: unknown option "tokn" (did you mean "token"?); known options: allow, token, alwaysAllow',
    ],
    [
      'createIntrospectionRouter pprof, with debug off',
      () => createIntrospectionRouter(createIntrospectionState(), { debug: false, pprof: { maxProfileSecond: 5 } } as never),
      'createIntrospectionRouter: unknown option "pprof.maxProfileSecond" (did you mean "maxProfileSeconds"?)',
    ],
    [
      'createPprofRouter',
      () => createPprofRouter(undefined, { keepCodelog: true } as never),
      'createPprofRouter: unknown option "keepCodelog" (did you mean "keepCodeLog"?)',
    ],
    [
      'createIntrospectionRouter pprof, with debug on',
      () => createIntrospectionRouter(createIntrospectionState(), { pprof: { keepCodelog: true } } as never),
      'createIntrospectionRouter: unknown option "pprof.keepCodelog" (did you mean "keepCodeLog"?)',
    ],
    [
      'createPprofRouter trace',
      () => createPprofRouter(undefined, { trace: { maxSecs: 5 } } as never),
      'createPprofRouter: unknown option "trace.maxSecs" (did you mean "maxSeconds"?)',
    ],
    [
      'createPprofRouter of 0.1, options first',
      () => createPprofRouter({ heapSamplingIntervalBytes: false } as never),
      'createPprofRouter: the first argument is the state (or undefined); options come second: createPprofRouter(state, { heapSamplingIntervalBytes }) (or createPprofRouter(undefined, { … }) without cycle labels)',
    ],
    [
      'createPprofRouter profiler',
      () => createPprofRouter(undefined, { profiler: 'inspecter' } as never),
      'createPprofRouter: profiler must be one of auto, v8-profiler-next, inspector, got "inspecter" (did you mean "inspector"?)',
    ],
    [
      'watchProgress',
      () => watchProgress(createIntrospectionState(), { timeoutMs: 100, activty: 'x' } as never),
      '"activty" (did you mean "activity"?)',
    ],
    [
      'waitForCaches',
      () => waitForCaches(createIntrospectionState(), { informer }, { pollIntervalMS: 5 } as never),
      '(did you mean "pollIntervalMs"?)',
    ],
    ['drain', () => drain(createIntrospectionState(), { delay: 5 } as never), 'drain: unknown option "delay" (did you mean "delayMs"?)'],
    [
      'createAccessGuard',
      () => createAccessGuard({ alow: ['::1'] } as never),
      'createAccessGuard: unknown option "alow" (did you mean "allow"?)',
    ],
    [
      'serializeAtOnce',
      () => serializeAtOnce(1, { budgetMs: 1, maxByte: 1 } as never),
      'serializeAtOnce: unknown option "maxByte" (did you mean "maxBytes"?)',
    ],
    ['stringifyAtOnce', () => stringifyAtOnce(1, { budgetMs: 1, expectedByte: 1 } as never), '(did you mean "expectedBytes"?)'],
  ])('%s', (_name, create, message) => {
    expect(create).toThrow(TypeError);
    expect(create).toThrow(message);
  });

  it.each<[string, () => Promise<unknown>, string]>([
    [
      'writeJson',
      () => writeJson(writeSizes().out, 1, { chunkByte: 5 } as never),
      'writeJson: unknown option "chunkByte" (did you mean "chunkBytes"?)',
    ],
    [
      'measureJson',
      () => measureJson(1, { limitByte: 5 } as never),
      'measureJson: unknown option "limitByte" (did you mean "limitBytes"?)',
    ],
  ])('%s', async (_name, create, message) => {
    await expect(create()).rejects.toThrow(new TypeError(message).message);
  });
});

describe('an option name the router no longer takes', () => {
  it('is answered as any unknown option, with the known ones', () => {
    expect(() => createIntrospectionRouter(createIntrospectionState(), { maxWatchers: 1 } as never)).toThrow(
      new TypeError(
        'createIntrospectionRouter: unknown option "maxWatchers"; known options: debug, console, pprof, access, allowedHosts, healthCheckTimeoutMs, watch, limits',
      ),
    );
    expect(() => createIntrospectionRouter(createIntrospectionState(), { limits: { streamThresholdBytes: 1 } } as never)).toThrow(
      new TypeError(
        'createIntrospectionRouter: unknown option "limits.streamThresholdBytes"; known options of limits: atOnceBudgetMs, maxEventLimit, maxConcurrentReads, maxQueuedReads, jsonPath',
      ),
    );
  });
});

describe('the defaults objects', () => {
  it.each<[string, object]>([
    ['INTROSPECTION_ROUTER_DEFAULTS', INTROSPECTION_ROUTER_DEFAULTS],
    ['STATE_DEFAULTS', STATE_DEFAULTS],
    ['PPROF_DEFAULTS', PPROF_DEFAULTS],
    ['TRACE_DEFAULTS', TRACE_DEFAULTS],
    ['WATCHDOG_DEFAULTS', WATCHDOG_DEFAULTS],
    ['CACHE_WAIT_DEFAULTS', CACHE_WAIT_DEFAULTS],
    ['DRAIN_DEFAULTS', DRAIN_DEFAULTS],
    ['JSON_STREAM_DEFAULTS', JSON_STREAM_DEFAULTS],
  ])('%s is frozen all the way down', (_name, defaults) => {
    expect(deeplyFrozen(defaults)).toBe(true);
    expect(() => {
      'use strict';
      (defaults as Record<string, unknown>)['added'] = 1;
    }).toThrow(TypeError);
  });

  it('are exported by the package, as they are documented', () => {
    expect(api.INTROSPECTION_ROUTER_DEFAULTS).toBe(INTROSPECTION_ROUTER_DEFAULTS);
    expect(api.STATE_DEFAULTS).toBe(STATE_DEFAULTS);
    expect(api.PPROF_DEFAULTS).toBe(PPROF_DEFAULTS);
    expect(api.TRACE_DEFAULTS).toBe(TRACE_DEFAULTS);
    expect(api.WATCHDOG_DEFAULTS).toBe(WATCHDOG_DEFAULTS);
    expect(api.CACHE_WAIT_DEFAULTS).toBe(CACHE_WAIT_DEFAULTS);
    expect(api.DRAIN_DEFAULTS).toBe(DRAIN_DEFAULTS);
  });

  it('INTROSPECTION_ROUTER_DEFAULTS is what omitted router options resolve to', () => {
    const d = INTROSPECTION_ROUTER_DEFAULTS;
    expect(d.limits.jsonPath).toBe(DEFAULT_JSONPATH_LIMITS);
    expect(resolveRouterOptions({})).toEqual({
      debug: d.debug,
      console: d.console,
      pprof: d.pprof,
      allowedHosts: d.allowedHosts,
      healthCheckTimeoutMs: d.healthCheckTimeoutMs,
      vars: {
        watchHeartbeatMs: d.watch.heartbeatMs,
        maxWatchers: d.watch.maxWatchers,
        watchBufferBytes: d.watch.bufferBytes,
        atOnceBudgetMs: d.limits.atOnceBudgetMs,
        maxEventLimit: d.limits.maxEventLimit,
        maxConcurrentReads: d.limits.maxConcurrentReads,
        maxQueuedReads: d.limits.maxQueuedReads,
        jsonPathLimits: d.limits.jsonPath,
      },
    });
    // Empty groups resolve the same; given values are kept.
    expect(resolveRouterOptions({ watch: {}, limits: {} })).toEqual(resolveRouterOptions({}));
    expect(resolveRouterOptions({ watch: { maxWatchers: 3 }, limits: { atOnceBudgetMs: 0 } }).vars).toMatchObject({
      maxWatchers: 3,
      atOnceBudgetMs: 0,
    });
  });

  it('STATE_DEFAULTS is what omitted state options resolve to', () => {
    const resolved = resolveStateOptions({});
    expect(resolved).toMatchObject({
      eventCapacity: STATE_DEFAULTS.eventCapacity,
      defaultEventLimit: STATE_DEFAULTS.defaultEventLimit,
      providerTimeoutMs: STATE_DEFAULTS.providerTimeoutMs,
      waitForConfig: STATE_DEFAULTS.waitForConfig,
      // No keys: nothing to match.
      redactKeys: undefined,
    });
    expect(resolved.now).toBe(STATE_DEFAULTS.now);
    expect(Math.abs(STATE_DEFAULTS.now() - Date.now())).toBeLessThan(1000);
  });

  it('PPROF_DEFAULTS and TRACE_DEFAULTS are what omitted pprof options resolve to', () => {
    expect(resolvePprofOptions(undefined, {})).toMatchObject({ ...PPROF_DEFAULTS, profilerSource: 'default' });
    expect(resolvePprofOptions(INTROSPECTION_ROUTER_DEFAULTS.pprof as PprofOptions, {})).toEqual(resolvePprofOptions(undefined, {}));
    expect(resolvePprofOptions({ trace: true }, {}).trace).toEqual(TRACE_DEFAULTS);
    expect(resolvePprofOptions({ trace: {} }, {}).trace).toEqual(TRACE_DEFAULTS);
  });

  it('WATCHDOG_DEFAULTS, CACHE_WAIT_DEFAULTS and DRAIN_DEFAULTS are what omitted health options resolve to', () => {
    expect(resolveWatchdogOptions({ timeoutMs: 250 })).toEqual({
      activity: WATCHDOG_DEFAULTS.activity,
      timeoutMs: 250,
      startupGraceMs: 250,
      name: `progress-${WATCHDOG_DEFAULTS.activity}`,
    });
    expect(resolveCacheWaitOptions({})).toEqual(CACHE_WAIT_DEFAULTS);
    // A longer first wait raises the cap with it.
    expect(resolveCacheWaitOptions({ restartBackoffMs: 60_000 }).maxRestartBackoffMs).toBe(60_000);
    expect(resolveDrainOptions({})).toEqual(DRAIN_DEFAULTS);
  });

  it('JSON_STREAM_DEFAULTS is what the JSON writer uses when told nothing', async () => {
    expect(DEFAULT_JSON_BOUNDS).toEqual({
      maxDepth: JSON_STREAM_DEFAULTS.maxDepth,
      maxComputedDepth: JSON_STREAM_DEFAULTS.maxComputedDepth,
      maxComputedBytes: JSON_STREAM_DEFAULTS.maxComputedBytes,
    });
    const value = Array.from({ length: 30_000 }, (_, i) => `item-${i}`);
    const { out, sizes } = writeSizes();
    const written = await writeJson(out, value);
    expect(written).toBe(JSON.stringify(value).length);
    // ASCII: each write is at most one chunk, and all but the last are close to it.
    expect(Math.max(...sizes)).toBeLessThanOrEqual(JSON_STREAM_DEFAULTS.chunkBytes);
    expect(sizes.slice(0, -1).every((size) => size > JSON_STREAM_DEFAULTS.chunkBytes / 2)).toBe(true);
    expect(await measureJson(value)).toEqual({ exceeds: false, bytes: written });
  });
});

describe('a forgotten or wrong state is named at the call', () => {
  const got = (what: string): TypeError =>
    new TypeError(`the first argument must be the IntrospectionState (from createIntrospectionState()), got ${what}`);

  it('drain({ delayMs: 5 }) says what the first argument must be', () => {
    expect(() => drain({ delayMs: 5 } as never)).toThrow(`drain: ${got('an object with delayMs').message}`);
    expect(() => drain(undefined as never, { delayMs: 5 })).toThrow(`drain: ${got('undefined').message}`);
  });

  it('watchProgress and waitForCaches name theirs', () => {
    expect(() => watchProgress({ timeoutMs: 100 } as never, undefined as never)).toThrow(
      `watchProgress: ${got('an object with timeoutMs').message}`,
    );
    const informer = { start: () => Promise.resolve(), on: () => undefined };
    expect(() => waitForCaches({ services: informer } as never, {})).toThrow(`waitForCaches: ${got('an object with services').message}`);
  });

  it('createIntrospectionRouter names the methods a host-written state lacks', () => {
    const { setShuttingDown: _omitted, ...reader } = Object.fromEntries(
      Object.getOwnPropertyNames(Object.getPrototypeOf(createIntrospectionState())).map((name) => [name, () => undefined]),
    ) as Record<string, () => undefined>;
    expect(() => createIntrospectionRouter(reader as unknown as IntrospectionState)).toThrow(
      `createIntrospectionRouter: ${got('an object without setShuttingDown').message}`,
    );
  });
});

describe('wrong option values throw at creation, never at request time', () => {
  const state = createIntrospectionState();

  it.each([
    [
      { limits: { jsonPath: { maxSteps: 1.5 } } },
      'createIntrospectionRouter: limits.jsonPath.maxSteps must be an integer from 1 to 9,007,199,254,740,991, got 1.5',
    ],
    [{ debug: 'no' }, 'createIntrospectionRouter: debug must be true or false, got "no"'],
    [{ limits: { jsonPath: 'fast' } }, 'createIntrospectionRouter: limits.jsonPath must be an object (or omitted), got "fast"'],
    [{ watch: 5 }, 'createIntrospectionRouter: watch must be an object (or omitted), got 5'],
    [{ watch: { heartbeatMs: 5 } }, 'createIntrospectionRouter: watch.heartbeatMs must be an integer from 10 to 2,147,483,647, got 5'],
    [{ limits: { maxQueuedReads: -1 } }, 'createIntrospectionRouter: limits.maxQueuedReads must be an integer from 0 to 100,000, got -1'],
    // Removed: a host upgrading must not be left unguarded without knowing.
    [
      { access: { token: 'a-long-enough-token-1234' } },
      'createIntrospectionRouter: option "access" was removed: a guard is middleware mounted in front of the router',
    ],
    [{ debug: false, access: {} }, 'createIntrospectionRouter: option "access" was removed'],
    // Checked with debug off too, so that turning debug on never reveals a mistake.
    [
      { debug: false, limits: { maxEventLimit: 0 } },
      'createIntrospectionRouter: limits.maxEventLimit must be an integer from 1 to 1,000,000, got 0',
    ],
  ])('createIntrospectionRouter(state, %j)', (options, message) => {
    expect(() => createIntrospectionRouter(state, { pprof: false, ...(options as object) })).toThrow(TypeError);
    expect(() => createIntrospectionRouter(state, { pprof: false, ...(options as object) })).toThrow(message);
  });

  it('answers a field request with valid limits (the bug: a bad limit surfaced as a 500 on every request)', async () => {
    const ok = createIntrospectionRouter(state, { pprof: false, limits: { jsonPath: { maxSteps: 5 } } });
    const app = express();
    app.use(ok);
    state.setConfig({ templates: {}, watched_resources: [1, 2, 3, 4, 5, 6, 7, 8] }, '1');
    const { origin, close } = await listen(app);
    const small = await request(`${origin}/debug/vars/config?field={.version}`);
    expect(small.json()).toBe('1');
    const big = await request(`${origin}/debug/vars/config?field={.config.watched_resources[*]}`);
    expect(big.status).toBe(413);
    await ok.close();
    await close();
  });

  it('createMetricsRouter rejects unknown keys and bad timeouts', () => {
    expect(() => createMetricsRouter(new Registry(), { scrapeTimeout: 5 } as never)).toThrow(
      'createMetricsRouter: unknown option "scrapeTimeout" (did you mean "scrapeTimeoutMs"?)',
    );
    expect(() => createMetricsRouter(new Registry(), { scrapeTimeoutMs: 0 })).toThrow(
      'createMetricsRouter: scrapeTimeoutMs must be an integer from 1 to 600,000, got 0',
    );
  });
});
