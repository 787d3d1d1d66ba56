import { createIntrospectionState } from '../../lib/state/store';
import { UnknownVariableError, type VarReading } from '../../lib/state/types';

function value(reading: VarReading): unknown {
  if (!reading.ok) throw new Error(`expected a value, got ${reading.message}`);
  return reading.value;
}

describe('createIntrospectionState', () => {
  let clock = Date.UTC(2026, 10, 22, 12, 0, 0);
  const now = (): number => clock;

  it('reports config not loaded yet before setConfig, then the config with version and time', async () => {
    const state = createIntrospectionState({ now });
    expect(await state.readVar('config')).toEqual({ ok: false, reason: 'unavailable', message: 'config not loaded yet' });
    const config = { templates: { 'haproxy.cfg': 'global' }, watched_resources: [] };
    state.setConfig(config, '7');
    const body = value(await state.readVar('config')) as Record<string, unknown>;
    expect(body).toEqual({ config, version: '7', updated: '2026-11-22T12:00:00.000Z' });
    // A reference is kept, not a copy: pushing is cheap.
    expect(body['config']).toBe(config);
  });

  it('serves rendered text with its byte size and time', async () => {
    const state = createIntrospectionState({ now });
    state.setRendered('héllo');
    expect(value(await state.readVar('rendered'))).toEqual({ config: 'héllo', timestamp: '2026-11-22T12:00:00.000Z', size: 6 });
  });

  it('never serves auxiliary file contents', async () => {
    const state = createIntrospectionState({ now });
    const pem = '-----BEGIN PRIVATE KEY-----\nCANARY\n-----END PRIVATE KEY-----\n';
    state.setAuxFiles({ ssl_certificates: [{ name: 'a.pem', path: '/etc/a.pem', content: pem }], map_files: [{ name: 'm', path: '/m' }] });
    const body = value(await state.readVar('auxfiles'));
    expect(body).toEqual({
      files: {
        ssl_certificates: [{ name: 'a.pem', path: '/etc/a.pem', size: pem.length }],
        map_files: [{ name: 'm', path: '/m', size: null }],
        general_files: [],
      },
      timestamp: '2026-11-22T12:00:00.000Z',
      summary: { ssl_count: 1, map_count: 1, general_count: 0 },
    });
    expect(JSON.stringify(body)).not.toContain('CANARY');
  });

  it('rejects malformed auxiliary files on read with a message naming the entry', async () => {
    const state = createIntrospectionState({ now });
    state.setAuxFiles({ map_files: [{ name: 'x' } as never] });
    await expect(state.readVar('auxfiles')).rejects.toThrow(/map_files\[0\] needs string "name" and "path"/);
  });

  it('describes credentials by shape only', async () => {
    const state = createIntrospectionState({ now });
    state.setCredentials({ dataplane: { username: 'admin', password: 'CANARY-PW', ca: '' }, token: 'CANARY-TOKEN', unset: '' }, 'v3');
    const body = value(await state.readVar('credentials'));
    expect(body).toEqual({
      credentials: {
        dataplane: { set: true, fields_set: ['password', 'username'], fields_empty: ['ca'] },
        token: { set: true },
        unset: { set: false },
      },
      version: 'v3',
      updated: '2026-11-22T12:00:00.000Z',
    });
    expect(JSON.stringify(body)).not.toMatch(/CANARY|admin/);
  });

  it('keeps the newest events up to capacity and answers the newest 100 by default', async () => {
    const state = createIntrospectionState({ eventCapacity: 150, now });
    for (let i = 0; i < 200; i++) state.publishEvent(`e${i}`);
    const events = value(await state.readVar('events')) as { type: string; summary: string }[];
    expect(events).toHaveLength(100);
    expect(events[0]!.type).toBe('e100');
    expect(events[99]).toEqual({ seq: 200, timestamp: '2026-11-22T12:00:00.000Z', type: 'e199', summary: 'e199' });
    expect(value(await state.readVar('events', { limit: 1000 }))).toHaveLength(150);
    expect(value(await state.readVar('events', { limit: 3 }))).toHaveLength(3);
    expect(state.eventStats().published).toBe(200);
  });

  it('notifies subscribers, counts them, and survives a throwing one', () => {
    const state = createIntrospectionState({ now });
    const seen: string[] = [];
    const off1 = state.subscribe((e) => seen.push(e.type));
    const off2 = state.subscribe(() => {
      throw new Error('broken subscriber');
    });
    expect(state.eventStats().subscribers).toBe(2);
    state.publishEvent('config.validated', 'ok');
    expect(seen).toEqual(['config.validated']);
    off1();
    off1();
    expect(state.eventStats().subscribers).toBe(1);
    off2();
    expect(state.eventStats()).toEqual({ published: 1, subscribers: 0, watchers: 0 });
  });

  it('reports a rejecting async subscriber like a throwing one: the host never sees it', async () => {
    const state = createIntrospectionState({ now });
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown): void => void unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const seen: number[] = [];
      state.subscribe(async () => {
        throw new Error('async subscriber failed');
      });
      state.subscribe((e) => seen.push(e.seq));
      state.publishEvent('a');
      state.publishEvent('b');
      await new Promise((r) => setTimeout(r, 20));
      expect(seen).toEqual([1, 2]);
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });

  it('wakes watches once per event-loop turn, after publishing, and counts them apart from subscribers', async () => {
    const state = createIntrospectionState({ now });
    let wakes = 0;
    const stop = state.watchEvents(() => wakes++);
    state.subscribe(() => undefined);
    expect(state.eventStats()).toEqual({ published: 0, subscribers: 1, watchers: 1 });
    for (let i = 0; i < 1000; i++) state.publishEvent('burst', undefined, { correlationId: 'c', details: { i } });
    expect(wakes).toBe(0);
    await new Promise((r) => setImmediate(r));
    expect(wakes).toBe(1);
    const page = state.readEvents({ since: 998, correlationId: 'c' }, 10);
    expect(page.events).toEqual([
      { seq: 999, timestamp: expect.any(String), type: 'burst', summary: 'burst', correlation_id: 'c', details: { i: 998 } },
      expect.objectContaining({ seq: 1000 }),
    ]);
    stop();
    stop();
    expect(state.eventStats().watchers).toBe(0);
    state.publishEvent('after');
    await new Promise((r) => setImmediate(r));
    expect(wakes).toBe(1);
  });

  it('lists built-in then custom variables and reads custom providers, sync and async', async () => {
    const state = createIntrospectionState({ now });
    state.publishVar('queue', () => ({ depth: 3 }));
    state.publishVar('async', async () => 'later');
    expect(state.listVars()).toEqual([
      'config',
      'credentials',
      'rendered',
      'auxfiles',
      'resources',
      'events',
      'state',
      'uptime',
      'event_counts',
      'queue',
      'async',
    ]);
    expect(value(await state.readVar('queue'))).toEqual({ depth: 3 });
    expect(value(await state.readVar('async'))).toBe('later');
    await expect(state.readVar('nope')).rejects.toBeInstanceOf(UnknownVariableError);
  });

  it('refuses reused, built-in and malformed variable names', () => {
    const state = createIntrospectionState();
    state.publishVar('x', () => 1);
    expect(() => state.publishVar('x', () => 2)).toThrow(/reuse of variable name "x"/);
    expect(() => state.publishVar('config', () => 2)).toThrow(/built-in/);
    expect(() => state.publishVar('../etc', () => 2)).toThrow(/name must match/);
  });

  it('times out a provider that never answers', async () => {
    const state = createIntrospectionState({ providerTimeoutMs: 20 });
    state.publishVar('stuck', () => new Promise(() => undefined));
    await expect(state.readVar('stuck')).rejects.toThrow('variable "stuck" did not answer within 20 ms');
  });

  it('redacts configured keys in config and custom variables without touching the input', async () => {
    const state = createIntrospectionState({ redactKeys: ['password'], now });
    const config = { templates: {}, watched_resources: [], dataplane: { password: 'CANARY' } };
    state.setConfig(config, '1');
    state.publishVar('extra', () => ({ apiKey: 'CANARY2', n: 1 }), { redactKeys: ['apiKey'] });
    expect(JSON.stringify(value(await state.readVar('config')))).not.toContain('CANARY');
    expect(value(await state.readVar('extra'))).toEqual({ apiKey: '[REDACTED]', n: 1 });
    expect(config.dataplane.password).toBe('CANARY');
  });

  it('gathers every variable into state, with failing providers reported in place', async () => {
    const state = createIntrospectionState({ now });
    state.setResourceCounts({ ingresses: 3, 'lb-pods': 2 });
    state.publishVar('bad', () => {
      throw new Error('provider broke');
    });
    const body = value(await state.readVar('state')) as Record<string, unknown>;
    expect(Object.keys(body)).toEqual([
      'snapshot_time',
      'config',
      'credentials',
      'rendered',
      'auxfiles',
      'resources',
      'events',
      'uptime',
      'event_counts',
      'bad',
    ]);
    expect(body['config']).toBeNull();
    expect(body['resources']).toEqual({ ingresses: 3, 'lb-pods': 2 });
    expect(body['bad']).toEqual({ error: 'provider broke' });
  });

  it('reports uptime as seconds and a Go duration string', async () => {
    clock = Date.UTC(2026, 10, 22, 12, 0, 0);
    const state = createIntrospectionState({ now });
    clock += 3_723_500;
    expect(value(await state.readVar('uptime'))).toEqual({
      started: '2026-11-22T12:00:00.000Z',
      uptime_seconds: 3723.5,
      uptime_string: '1h2m3.5s',
    });
  });

  it('reports event counts: published events, subscribers and watchers, as eventStats() answers them', async () => {
    const state = createIntrospectionState({ now });
    expect(value(await state.readVar('event_counts'))).toEqual({ published: 0, subscribers: 0, watchers: 0 });
    const unsubscribe = state.subscribe(() => undefined);
    state.subscribe(() => undefined);
    const unwatch = state.watchEvents(() => undefined);
    state.publishEvent('x');
    expect(value(await state.readVar('event_counts'))).toEqual({ published: 1, subscribers: 2, watchers: 1 });
    unsubscribe();
    unwatch();
    expect(value(await state.readVar('event_counts'))).toEqual(state.eventStats());
    expect(state.eventStats()).toEqual({ published: 1, subscribers: 1, watchers: 0 });
  });

  it("keeps a copy of the resource counts: later changes to the host's object are not served", async () => {
    const state = createIntrospectionState();
    const counts: Record<string, number> = { ingresses: 1 };
    state.setResourceCounts(counts);
    counts['ingresses'] = -5;
    expect(value(await state.readVar('resources'))).toEqual({ ingresses: 1 });
    expect(state.resourceCounts()).toEqual({ ingresses: 1 });
  });

  it.each<[string, unknown, RegExp]>([
    ['NaN', NaN, /returned NaN; expected milliseconds since the epoch/],
    ['Infinity', Infinity, /returned Infinity; expected/],
    ['-Infinity', -Infinity, /returned -Infinity; expected/],
    ['beyond what a Date holds', 8.64e15 + 1, /returned 8640000000000001; expected .*within the range of a Date/],
    ['a numeric string', '1700000000000', /returned "1700000000000"; expected/],
    ['a Date', new Date(), /returned an object; expected/],
    ['undefined', undefined, /returned undefined; expected/],
  ])('refuses at creation a clock (option "now") returning %s', (_label, reading, message) => {
    expect(() => createIntrospectionState({ now: () => reading as number })).toThrow(TypeError);
    expect(() => createIntrospectionState({ now: () => reading as number })).toThrow(
      new RegExp(`^createIntrospectionState: now\\(\\) ${message.source}`),
    );
  });

  it('refuses at creation a clock that throws, and accepts one at the limits of a Date', () => {
    expect(() =>
      createIntrospectionState({
        now: () => {
          throw new Error('no time source');
        },
      }),
    ).toThrow('createIntrospectionState: now() threw: no time source');
    expect(createIntrospectionState({ now: () => -8.64e15 }).startedAt.toISOString()).toBe('-271821-04-20T00:00:00.000Z');
    expect(createIntrospectionState({ now: () => 0 }).startedAt.getTime()).toBe(0);
  });

  it('validates its options and inputs with messages that say how to fix them', () => {
    expect(() => createIntrospectionState({ eventCapacity: 0 })).toThrow(
      new TypeError('createIntrospectionState: eventCapacity must be an integer from 1 to 1,000,000, got 0'),
    );
    // An option with a memory cost has a ceiling: a billion preallocated slots would kill the host.
    expect(() => createIntrospectionState({ eventCapacity: 1e9 })).toThrow(
      new TypeError('createIntrospectionState: eventCapacity must be an integer from 1 to 1,000,000, got 1000000000'),
    );
    expect(() => createIntrospectionState({ eventCapacty: 10 } as never)).toThrow(
      new TypeError(
        'createIntrospectionState: unknown option "eventCapacty" (did you mean "eventCapacity"?); known options: eventCapacity, defaultEventLimit, redactKeys, providerTimeoutMs, now, waitForConfig',
      ),
    );
    const state = createIntrospectionState();
    expect(() => state.setResourceCounts({ a: Number.NaN })).toThrow('count for "a" must be a finite number');
    expect(() => state.setResourceCounts({ a: -1 })).toThrow('setResourceCounts: count for "a" must be a finite number >= 0, got -1');
    expect(() => state.setResourceCounts(new Map() as never)).toThrow(
      /^setResourceCounts: counts must be an object of counts .*, got a Map$/,
    );
    expect(() => state.setResourceCounts(Object.fromEntries(Array.from({ length: 10_001 }, (_, i) => [`t${i}`, 1])))).toThrow(
      /counts must be .*at most 10,000 types\), got an object of 10,001 types/,
    );
    expect(() => state.setConfig({ templates: {}, watched_resources: [] }, 1 as unknown as string)).toThrow('version must be a string');
    expect(() => state.addHealthCheck('shutdown', () => true)).toThrow(/already exists/);
  });
});
