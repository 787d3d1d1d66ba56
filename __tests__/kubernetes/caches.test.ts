import { eventually } from '../helpers/eventually';
import { requestApp } from '../helpers/http';
import { closeIntrospectionApps, introspectionApp } from '../helpers/introspection-app';
import { waitForCaches } from '../../lib/kubernetes';
import { createIntrospectionState } from '../../lib/state/store';
import type { IntrospectionState } from '../../lib/state/types';
import { deferred } from '../helpers/deferred';

afterAll(closeIntrospectionApps);

const appFor = (state: IntrospectionState) => introspectionApp(state);

describe('waitForCaches', () => {
  it('names the caches still syncing and opens the gate when the last one has', async () => {
    const state = createIntrospectionState({ waitForConfig: false });
    const services = deferred();
    let endpointsSynced = false;
    const gate = waitForCaches(state, { services: services.promise, endpoints: () => endpointsSynced }, { pollIntervalMs: 10 });
    const app = appFor(state);
    expect(gate.name).toBe('caches-synced');
    expect((await requestApp(app, '/readyz/caches-synced')).text).toBe(
      '[-]caches-synced failed: not open: waiting for caches to sync: services, endpoints\nreadyz check failed\n',
    );

    services.resolve();
    await new Promise((r) => setTimeout(r, 20));
    expect((await requestApp(app, '/readyz?verbose')).text).toContain(
      '[-]caches-synced failed: not open: waiting for caches to sync: endpoints\n',
    );
    expect(gate.isOpen).toBe(false);

    endpointsSynced = true;
    await gate.synced;
    expect(gate.isOpen).toBe(true);
    expect((await requestApp(app, '/readyz')).status).toBe(200);
  });

  it('keeps the gate closed with the error when a sync fails, and polls a throwing function again', async () => {
    const state = createIntrospectionState({ waitForConfig: false });
    const pods = deferred();
    let calls = 0;
    const gate = waitForCaches(
      state,
      {
        pods: pods.promise,
        secrets: () => {
          calls++;
          if (calls < 3) throw new Error('list failed');
          return true;
        },
      },
      { name: 'informers', pollIntervalMs: 5 },
    );
    pods.reject(new Error('forbidden: cannot list pods'));
    await eventually(() => calls >= 3, { what: 'the throwing function to be polled until it syncs' });
    expect(calls).toBeGreaterThanOrEqual(3);
    const res = await requestApp(appFor(state), '/readyz/informers');
    expect(res.status).toBe(503);
    expect(res.text).toBe('[-]informers failed: not open: cache "pods" failed to sync: forbidden: cannot list pods\nreadyz check failed\n');
    await gate.close();
    expect(state.readinessGates()).toEqual([]);
  });

  it('stops polling once removed, and opens at once with nothing to wait for', async () => {
    const state = createIntrospectionState({ waitForConfig: false });
    let calls = 0;
    const gate = waitForCaches(state, { never: () => (calls++, false) }, { pollIntervalMs: 5 });
    await eventually(() => calls >= 3, { what: 'a few polls before the gate is removed' });
    await gate.close();
    const after = calls;
    await new Promise((r) => setTimeout(r, 30));
    expect(calls).toBe(after);
    const empty = waitForCaches(state, {}, { name: 'nothing' });
    await empty.synced;
    expect(empty.isOpen).toBe(true);
  });

  it('rejects wrong arguments at the call', () => {
    const state = createIntrospectionState();
    expect(() => waitForCaches(state, { a: 5 as never })).toThrow(
      'waitForCaches: cache "a" must be an informer (with start() and on()), a promise or a function returning a boolean',
    );
    expect(() => waitForCaches(state, {}, { pollMs: 5 } as never)).toThrow('waitForCaches: unknown option "pollMs"');
    expect(() => waitForCaches(state, {}, { pollIntervalMs: 0 })).toThrow('pollIntervalMs must be an integer from 1 to 3,600,000');
  });
});

/** What one `start()` of a {@link FakeInformer} does, as client-node's informer would. */
type Outcome =
  | 'ok' // LIST and watch succeed: resolves.
  | 'fail' // LIST fails: calls the error callbacks, then resolves.
  | 'reject' // start() itself rejects (no cluster configured).
  | 'hang'; // LIST never answers.

/** An informer shaped like client-node's, whose starts follow a script (the last outcome repeats). */
class FakeInformer {
  starts = 0;
  private readonly callbacks = new Set<(err?: unknown) => void>();
  constructor(
    /** What each start does; tests may push to it while the informer runs. */
    readonly script: Outcome[],
    private readonly failure: unknown = listError(500, 'etcdserver: request timed out'),
  ) {}
  get listeners(): number {
    return this.callbacks.size;
  }
  /** Stops asked for (before a restart after silence). */
  stops = 0;
  /** Whether on() refuses the verbs other than `error`, as an informer-like of the host's own may. */
  refusesActivity = false;
  private readonly activity = new Set<() => void>();
  on(verb: string, cb: (err?: unknown) => void): void {
    if (verb === 'error') this.callbacks.add(cb);
    else if (this.refusesActivity) throw new Error(`Unknown verb: ${verb}`);
    else this.activity.add(cb);
  }
  off(verb: string, cb: (err?: unknown) => void): void {
    if (verb === 'error') this.callbacks.delete(cb);
    else this.activity.delete(cb);
  }
  stop(): void {
    this.stops++;
  }
  /** The API server sent something: an object added, say. */
  hear(): void {
    for (const cb of [...this.activity]) cb();
  }
  /** A watch that breaks: client-node calls the error callbacks and stops. */
  breakWatch(err: unknown = new Error('socket hang up')): void {
    for (const cb of [...this.callbacks]) cb(err);
  }
  start(): Promise<void> {
    const outcome = this.script[Math.min(this.starts, this.script.length - 1)]!;
    this.starts++;
    if (outcome === 'hang') return new Promise(() => undefined);
    if (outcome === 'reject') return Promise.reject(new Error('No currently active cluster'));
    if (outcome === 'fail') this.breakWatch(this.failure);
    return Promise.resolve();
  }
}

/** An error shaped like client-node's ApiException: four lines, the last with every response header. */
function listError(code: number, message: string): Error & { code: number; body: unknown } {
  const body = { kind: 'Status', status: 'Failure', message, code };
  const headers = { 'audit-id': 'b7d9', 'content-type': 'application/json' };
  const error = new Error(
    `HTTP-Code: ${code}\nMessage: Unknown API Status Code!\nBody: ${JSON.stringify(body)}\nHeaders: ${JSON.stringify(headers)}`,
  );
  return Object.assign(error, { code, body });
}

const fast = { restartBackoffMs: 1, maxRestartBackoffMs: 2 };

describe('waitForCaches with an informer', () => {
  it('stays closed with the LIST error while LIST fails, restarts the informer, and opens after a LIST succeeds', async () => {
    const state = createIntrospectionState({ waitForConfig: false });
    const services = new FakeInformer(['fail']);
    const gate = waitForCaches(state, { services }, fast);
    const app = appFor(state);
    await eventually(() => services.starts >= 3, { what: 'restarts after the failed LISTs' });
    const failing = await requestApp(app, '/readyz?verbose');
    expect(failing.status).toBe(503);
    expect(failing.text).toContain(
      '[-]caches-synced failed: not open: cache "services" failed to sync: HTTP 500: etcdserver: request timed out\n',
    );
    services.script.push('ok');
    await gate.synced;
    expect(services.starts).toBeGreaterThan(3);
    expect((await requestApp(app, '/readyz')).status).toBe(200);
  });

  it('never opens on an informer whose LIST keeps failing, where the informer.start() promise would', async () => {
    const state = createIntrospectionState({ waitForConfig: false });
    const started = new FakeInformer(['fail']);
    const promised = waitForCaches(state, { services: started.start() }, { name: 'promise-form' });
    await promised.synced;
    // The pitfall the informer form exists for: start() resolved after a failed LIST.
    expect(promised.isOpen).toBe(true);

    const services = new FakeInformer(['fail']);
    const gate = waitForCaches(state, { services }, { name: 'informer-form', ...fast });
    await eventually(() => services.starts >= 5, { what: 'several failed starts' });
    expect(gate.isOpen).toBe(false);
    expect(state.readinessGates().find((g) => g.name === 'informer-form')?.reason).toBe(
      'cache "services" failed to sync: HTTP 500: etcdserver: request timed out',
    );
    await gate.close();
  });

  it('keeps a synced cache synced when its watch breaks, and restarts the informer', async () => {
    const state = createIntrospectionState({ waitForConfig: false });
    const services = new FakeInformer(['ok', 'fail', 'ok']);
    const gate = waitForCaches(state, { services }, fast);
    await gate.synced;
    services.breakWatch();
    // The restart's LIST fails too (a 410 relist during an outage): readiness does not flap.
    await eventually(() => services.starts === 3, { what: 'two restarts after the broken watch' });
    expect(gate.isOpen).toBe(true);
    expect((await requestApp(appFor(state), '/readyz')).status).toBe(200);
    await gate.close();
  });

  it('shows a waiting reason while LIST hangs, and the error of a start() that rejects', async () => {
    const state = createIntrospectionState({ waitForConfig: false });
    const hanging = new FakeInformer(['hang']);
    const rejecting = new FakeInformer(['reject']);
    const gate = waitForCaches(state, { services: hanging, endpoints: rejecting }, fast);
    await eventually(() => rejecting.starts >= 3, { what: 'restarts of the informer whose start() rejects' });
    expect(hanging.starts).toBe(1);
    const res = await requestApp(appFor(state), '/readyz/caches-synced');
    expect(res.status).toBe(503);
    expect(res.text).toBe(
      '[-]caches-synced failed: not open: waiting for caches to sync: services; ' +
        'cache "endpoints" failed to sync: No currently active cluster\nreadyz check failed\n',
    );
    await gate.close();
  });

  it('says a failure in one line and cut, whatever the error', async () => {
    const state = createIntrospectionState({ waitForConfig: false });
    const noStatus = Object.assign(new Error('HTTP-Code: 502\nBody: undefined'), { code: 502 });
    const huge = new Error(`request failed,\n\treason: ${'x'.repeat(100_000)}`);
    const caches = {
      a: new FakeInformer(['fail'], noStatus),
      b: new FakeInformer(['fail'], huge),
      c: new FakeInformer(['fail'], { statusCode: 403, body: 'forbidden\nby policy' }),
      d: new FakeInformer(['fail'], 'a string'),
      // client-node hands a Status over as text when it could not parse it into its model.
      e: new FakeInformer(['fail'], { code: 500, body: '{"kind":"Status","message":"etcdserver: leader changed","code":500}' }),
      f: new FakeInformer(['fail'], { code: 502, body: '{"error":"bad gateway"}' }),
    };
    const gate = waitForCaches(state, caches, fast);
    await eventually(() => Object.values(caches).every((i) => i.starts >= 2), { what: 'every informer to have failed once' });
    const reason = state.readinessGates()[0]!.reason;
    expect(reason).not.toContain('\n');
    expect(reason).toContain('cache "a" failed to sync: HTTP 502;');
    // The 120 characters readiness gives one cache's reason, then the mark of the cut.
    expect(reason).toContain(`cache "b" failed to sync: request failed, reason: ${'x'.repeat(120 - 24)}…;`);
    expect(reason.length).toBeLessThanOrEqual(256);
    await gate.close();
    for (const [c, d] of [
      ['c', 'd'],
      ['e', 'f'],
    ] as const) {
      const [cBefore, dBefore] = [caches[c].starts, caches[d].starts];
      const pair = waitForCaches(state, { [c]: caches[c], [d]: caches[d] }, fast);
      await eventually(() => caches[c].starts > cBefore + 1 && caches[d].starts > dBefore + 1, { what: `${c} and ${d} to fail again` });
      expect(state.readinessGates()[0]!.reason).toBe(
        c === 'c'
          ? 'cache "c" failed to sync: HTTP 403: forbidden by policy; cache "d" failed to sync: a string'
          : 'cache "e" failed to sync: HTTP 500: etcdserver: leader changed; cache "f" failed to sync: HTTP 502: {"error":"bad gateway"}',
      );
      await pair.close();
    }
  });

  it('stops restarting and unregisters once the gate is removed', async () => {
    const state = createIntrospectionState({ waitForConfig: false });
    const services = new FakeInformer(['ok']);
    const gate = waitForCaches(state, { services }, fast);
    await gate.synced;
    expect(services.listeners).toBe(1);
    await gate.close();
    expect(services.listeners).toBe(0);
    const failing = new FakeInformer(['fail']);
    const other = waitForCaches(state, { failing }, { restartBackoffMs: 5, maxRestartBackoffMs: 5 });
    await eventually(() => failing.starts >= 2, { what: 'a restart' });
    await other.close();
    const after = failing.starts;
    failing.breakWatch();
    await new Promise((r) => setTimeout(r, 30));
    expect(failing.starts).toBe(after);
    expect(state.readinessGates()).toEqual([]);
  });

  it('leaves no gate behind when an informer cannot register its error callback', () => {
    const state = createIntrospectionState({ waitForConfig: false });
    const broken = {
      start: () => Promise.resolve(),
      on: () => {
        throw new Error('Unknown verb: error');
      },
    };
    expect(() => waitForCaches(state, { broken })).toThrow('Unknown verb: error');
    expect(state.readinessGates()).toEqual([]);
  });

  it('rejects wrong backoff options at the call, with "did you mean"', () => {
    const state = createIntrospectionState();
    expect(() => waitForCaches(state, {}, { restartBackofMs: 5 } as never)).toThrow(
      'waitForCaches: unknown option "restartBackofMs" (did you mean "restartBackoffMs"?)',
    );
    expect(() => waitForCaches(state, {}, { restartBackoffMs: 0 })).toThrow(
      'waitForCaches: restartBackoffMs must be an integer from 1 to 3,600,000',
    );
    expect(() => waitForCaches(state, {}, { restartBackoffMs: 500, maxRestartBackoffMs: 100 })).toThrow(
      'waitForCaches: maxRestartBackoffMs (100) must be at least restartBackoffMs (500)',
    );
    expect(() => waitForCaches(state, {}, { name: 'long-backoff', restartBackoffMs: 60_000 }).close()).not.toThrow();
  });
});

describe('waitForCaches freshness check', () => {
  it('stops and starts again a synced informer silent for watchIdleMs, failing readiness with the reason until the restart completes', async () => {
    const state = createIntrospectionState({ waitForConfig: false });
    const restart = deferred();
    const services = new FakeInformer(['ok']);
    const start = services.start.bind(services);
    // The first start syncs; the restart waits for the test.
    services.start = () => (services.starts === 0 ? start() : (services.starts++, restart.promise));
    const gate = waitForCaches(state, { services }, { ...fast, watchIdleMs: 200 });
    await gate.synced;
    const syncedAt = performance.now();
    await eventually(() => services.starts === 2, { what: 'the restart after silence', timeoutMs: 2000 });
    // Noticed after the bound, within 1.25 of it (plus the timer's slack).
    expect(performance.now() - syncedAt).toBeGreaterThanOrEqual(200 - 5);
    expect(performance.now() - syncedAt).toBeLessThan(250 + 500);
    expect(services.stops).toBe(1);
    expect(gate.isOpen).toBe(false);
    const res = await requestApp(appFor(state), '/readyz?verbose');
    expect(res.status).toBe(503);
    expect(res.text).toContain('[-]caches-synced failed: not open: cache "services" may be stale: watch silent for 0 s, restarted\n');
    // Still no answer a bound later: readiness says so.
    await eventually(() => /no answer for/.test(state.readinessGates()[0]?.reason ?? ''), { what: 'the pending restart reported' });
    restart.resolve();
    await eventually(() => gate.isOpen, { what: 'the gate to open once the restart completed' });
    await gate.close();
  });

  it('leaves an informer alone while it hears from the API server', async () => {
    const state = createIntrospectionState({ waitForConfig: false });
    const services = new FakeInformer(['ok']);
    // The bound is 12 times the interval it hears at, so that a loaded machine's late timer (CI
    // runs two workers on two cores) is not taken for silence.
    const gate = waitForCaches(state, { services }, { ...fast, watchIdleMs: 600 });
    await gate.synced;
    const heard = setInterval(() => services.hear(), 50);
    try {
      await new Promise((r) => setTimeout(r, 1500));
    } finally {
      clearInterval(heard);
    }
    expect(services.starts).toBe(1);
    expect(services.stops).toBe(0);
    expect(gate.isOpen).toBe(true);
    // Silent from now on: restarted once the bound passes.
    await eventually(() => services.starts === 2, { what: 'the restart once silent', timeoutMs: 4000 });
    await eventually(() => gate.isOpen, { what: 'the gate open again after the restart' });
    await gate.close();
  });

  it('does not judge the freshness of an informer without activity events', async () => {
    const state = createIntrospectionState({ waitForConfig: false });
    const services = new FakeInformer(['ok']);
    services.refusesActivity = true;
    const gate = waitForCaches(state, { services }, { ...fast, watchIdleMs: 100 });
    await gate.synced;
    await new Promise((r) => setTimeout(r, 400));
    expect(services.starts).toBe(1);
    expect(gate.isOpen).toBe(true);
    await gate.close();
  });

  it('rejects a bound below 100 ms at the call', () => {
    const state = createIntrospectionState();
    expect(() => waitForCaches(state, {}, { watchIdleMs: 50 })).toThrow('watchIdleMs must be an integer from 100 to 3,600,000');
    expect(() => waitForCaches(state, {}, { watchIdelMs: 500 } as never)).toThrow('did you mean "watchIdleMs"');
  });
});

describe('waitForCaches restart backoff', () => {
  beforeEach(() => {
    jest.useFakeTimers();
    // The shortest draw: each wait is half its ceiling, so the test knows every delay.
    jest.spyOn(Math, 'random').mockReturnValue(0);
  });
  afterEach(() => {
    jest.useRealTimers();
    jest.restoreAllMocks();
  });

  /** Advances the fake clock by `ms` and answers how many starts the informer has seen. */
  async function startsAfter(informer: FakeInformer, ms: number): Promise<number> {
    await jest.advanceTimersByTimeAsync(ms);
    return informer.starts;
  }

  it('doubles the wait after each failure in a row up to the cap, and starts over after a long healthy run', async () => {
    const state = createIntrospectionState({ waitForConfig: false });
    const services = new FakeInformer(['fail', 'fail', 'fail', 'fail', 'ok', 'fail', 'ok']);
    const gate = waitForCaches(state, { services }, { restartBackoffMs: 100, maxRestartBackoffMs: 400 });
    expect(await startsAfter(services, 0)).toBe(1);
    // Waits of 50, 100, 200, then 200 (the cap of 400, halved).
    expect(await startsAfter(services, 49)).toBe(1);
    expect(await startsAfter(services, 1)).toBe(2);
    expect(await startsAfter(services, 99)).toBe(2);
    expect(await startsAfter(services, 1)).toBe(3);
    expect(await startsAfter(services, 199)).toBe(3);
    expect(await startsAfter(services, 1)).toBe(4);
    expect(await startsAfter(services, 199)).toBe(4);
    expect(await startsAfter(services, 1)).toBe(5);
    expect(gate.isOpen).toBe(true);
    // Healthy for longer than the cap: the next failure waits the first wait again.
    await jest.advanceTimersByTimeAsync(400);
    services.breakWatch();
    expect(await startsAfter(services, 49)).toBe(5);
    expect(await startsAfter(services, 1)).toBe(6);
    // That restart failed: the wait after it doubles.
    expect(await startsAfter(services, 99)).toBe(6);
    expect(await startsAfter(services, 1)).toBe(7);
    await gate.close();
  });
});
