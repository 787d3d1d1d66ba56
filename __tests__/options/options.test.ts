import express from 'express';
import { Registry } from 'prom-client';
import { createIntrospectionRouter } from '../../lib/introspection/router';
import { createMetricsRouter } from '../../lib/metrics';
import { booleanOption, checkOptionObject, didYouMean, integerOption } from '../../lib/options';
import { createIntrospectionState } from '../../lib/state/store';
import { listen, request } from '../helpers/http';

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
});

describe('wrong options throw at creation, never at request time', () => {
  const state = createIntrospectionState();

  it.each([
    [
      { jsonPath: { maxSteps: 1.5 } },
      'createIntrospectionRouter: jsonPath.maxSteps must be an integer from 1 to 9,007,199,254,740,991, got 1.5',
    ],
    [
      { jsonPath: { maxStep: 5 } },
      'createIntrospectionRouter: unknown option "jsonPath.maxStep" (did you mean "maxSteps"?); known options of jsonPath: maxTemplateLength, maxNodes, maxResults, maxSteps, maxOutputBytes, maxDepth',
    ],
    [{ acess: { token: 'a-long-enough-token-1234' } }, 'createIntrospectionRouter: unknown option "acess" (did you mean "access"?)'],
    [
      { access: { tokn: 'a-long-enough-token-1234' } },
      'access guard: unknown option "access.tokn" (did you mean "token"?); known options of access: allow, token',
    ],
    [{ debug: 'no' }, 'createIntrospectionRouter: debug must be true or false, got "no"'],
    [{ jsonPath: 'fast' }, 'createIntrospectionRouter: jsonPath must be an object (or omitted), got "fast"'],
  ])('createIntrospectionRouter(state, %j)', (options, message) => {
    expect(() => createIntrospectionRouter(state, { pprof: false, ...(options as object) })).toThrow(TypeError);
    expect(() => createIntrospectionRouter(state, { pprof: false, ...(options as object) })).toThrow(message);
  });

  it('answers a field request with valid limits (the bug: a bad limit surfaced as a 500 on every request)', async () => {
    const ok = createIntrospectionRouter(state, { pprof: false, jsonPath: { maxSteps: 5 } });
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
