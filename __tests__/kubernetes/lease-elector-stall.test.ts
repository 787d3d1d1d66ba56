/**
 * The elector's leadership when the event loop stalls (issue 39, class 2): a leader whose loop is
 * blocked past its renew deadline must not answer "leading" when it wakes, in the very first
 * callback that runs, before the elector's own timer could step down; and each term's signal
 * aborts when the term ends. The stalls are real (a synchronous busy loop), against an in-memory
 * Lease API (./fake-lease-api.ts).
 */
import { Registry } from 'prom-client';
import { createControllerMetrics, type ControllerMetrics } from '../../lib/metrics';
import { createLeaseElector, type LeaseElector, type LeaseElectorOptions, type LeaseObject } from '../../lib/kubernetes';
import type { HealthCheckReport } from '../../lib/state/types';
import { eventually } from '../helpers/eventually';
import { FakeLeaseApi, stallEventLoop, testState } from '../helpers/fake-lease-api';

/** Small durations with client-go's ratios: 600 ms lease, 400 ms renew deadline, 100 ms retries. */
const TIMING = { leaseDurationMs: 600, renewDeadlineMs: 400, retryPeriodMs: 100 } as const;
/** Longer than the renew deadline. */
const STALL_MS = 700;

const electors: LeaseElector[] = [];

afterEach(async () => {
  await Promise.all(electors.splice(0).map((e) => e.close()));
});

interface Leader {
  readonly elector: LeaseElector;
  readonly api: FakeLeaseApi;
  readonly state: ReturnType<typeof testState>;
  readonly registry: Registry;
  readonly metrics: ControllerMetrics;
  readonly log: string[];
  /** The signal each term got in onStartedLeading. */
  readonly signals: AbortSignal[];
}

function candidate(options: Partial<LeaseElectorOptions> = {}, api = new FakeLeaseApi()): Leader {
  const state = testState();
  const registry = new Registry();
  const metrics = createControllerMetrics(registry, state, { controllerRuntime: { controller: 'lb', leaseName: 'lease' } });
  const log: string[] = [];
  const signals: AbortSignal[] = [];
  const elector = createLeaseElector(state, api, {
    namespace: 'ns',
    name: 'lease',
    identity: 'replica-a',
    metrics,
    ...TIMING,
    onStartedLeading: (signal) => {
      signals.push(signal);
      log.push('started');
    },
    onStoppedLeading: () => log.push('stopped'),
    ...options,
  });
  electors.push(elector);
  return { elector, api, state, registry, metrics, log, signals };
}

async function leader(options: Partial<LeaseElectorOptions> = {}): Promise<Leader> {
  const l = candidate(options);
  await eventually(() => l.elector.isLeader(), { what: 'replica-a leads' });
  return l;
}

/** The variable as read now (its provider runs at the read). */
async function variable(l: Leader): Promise<Record<string, unknown>> {
  const reading = await l.state.readVar('leader_election');
  if (!reading.ok) throw new Error('the variable has no value');
  return reading.value as Record<string, unknown>;
}

function check(l: Leader): HealthCheckReport {
  return l.state
    .healthChecks()
    .find((c) => c.name === 'leader-election')!
    .check() as HealthCheckReport;
}

async function scraped(l: Leader): Promise<{ isLeader: string | undefined; masterStatus: string | undefined }> {
  const text = await l.registry.metrics();
  return {
    isLeader: /^ctl_leader_election_is_leader (\d)$/m.exec(text)?.[1],
    masterStatus: /^leader_election_master_status\{name="lease"\} (\d)$/m.exec(text)?.[1],
  };
}

/** Where the stall starts, and which callback, queued before it, runs first after it. */
type Stall = 'a timer, then a setImmediate' | 'a microtask, then a microtask' | 'the turn after a renewal, then a timer';

/**
 * Stalls the event loop for `ms` from `where`, and resolves with what `probe` returned in the
 * first callback after the stall: one queued before the busy loop began, so nothing of the
 * elector's can run in between.
 */
function afterStall<T>(l: Leader, where: Stall, probe: () => T, ms = STALL_MS): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const run = (): void => {
      try {
        resolve(probe());
      } catch (err) {
        reject(err as Error);
      }
    };
    if (where === 'a timer, then a setImmediate') {
      setTimeout(() => {
        setImmediate(run);
        stallEventLoop(ms);
      }, 0);
    } else if (where === 'a microtask, then a microtask') {
      queueMicrotask(() => {
        queueMicrotask(run);
        stallEventLoop(ms);
      });
    } else {
      // The renewal's answer is handled in microtasks; this runs once they are done.
      l.api.onWrite = () => {
        l.api.onWrite = undefined;
        setImmediate(() => {
          setTimeout(run, 0);
          stallEventLoop(ms);
        });
      };
    }
  });
}

const STALLS: Stall[] = ['a timer, then a setImmediate', 'a microtask, then a microtask', 'the turn after a renewal, then a timer'];

/** Each reader, read first (before anything else of the elector) in the first callback after the stall: is it "leading"? */
const FIRST_READERS: Array<[string, (l: Leader, signal: AbortSignal) => boolean]> = [
  ['isLeader()', (l) => l.elector.isLeader()],
  ["the term's signal (aborted)", (_, signal) => !signal.aborted],
  [
    "the term's signal (throwIfAborted())",
    (_, signal) => {
      try {
        signal.throwIfAborted();
        return true;
      } catch {
        return false;
      }
    },
  ],
  ['leaderSignal()', (l) => !l.elector.leaderSignal().aborted],
  ['the liveness check', (l) => check(l).detail === 'leads ns/lease'],
];

describe.each(STALLS)('a stall of the event loop past the renew deadline, from %s', (where) => {
  it.each(FIRST_READERS)('%s, read first in the first callback after it, says not leading', async (_, read) => {
    const l = await leader();
    const signal = l.signals[0]!;
    expect(signal.aborted).toBe(false);
    const seen = await afterStall(l, where, () => ({
      leading: read(l, signal),
      // Then the rest, in the same callback.
      isLeader: l.elector.isLeader(),
      aborted: signal.aborted,
      metric: l.metrics.isLeader(),
      log: [...l.log],
    }));
    expect(seen).toEqual({ leading: false, isLeader: false, aborted: true, metric: false, log: ['started', 'stopped'] });
  });

  it('the variable, read first after it, says not leading; the metrics agree; the loss is reported with its reason', async () => {
    const l = await leader();
    const signal = l.signals[0]!;
    const reading = await afterStall(l, where, () => variable(l));
    expect(reading).toMatchObject({ leading: false });
    expect(signal.aborted).toBe(true);
    expect(await scraped(l)).toEqual({ isLeader: '0', masterStatus: '0' });
    const reason =
      /^renew deadline \(400 ms\) passed while the event loop was stalled for at least \d+ ms \(last renewal sent \d+ ms ago\)$/;
    expect(reading.lastError).toMatch(reason);
    expect((signal.reason as Error).message).toMatch(
      /^replica-a stopped leading ns\/lease: renew deadline \(400 ms\) passed while the event loop/,
    );
    const lost = l.state.readEvents({ type: 'leader.lost' }, 10).events;
    expect(lost.map((e) => e.summary)).toEqual([(signal.reason as Error).message]);
  });
});

describe('after a stall', () => {
  it('the liveness check fails until the election loop runs again, then the elector leads again in a new term', async () => {
    const l = await leader();
    const first = l.signals[0]!;
    const report = await afterStall(l, 'a timer, then a setImmediate', () => check(l));
    expect(report).toEqual({
      ok: false,
      detail: expect.stringMatching(
        /^stopped leading ns\/lease \d+ ms ago, found by a read before the election loop ran: renew deadline \(400 ms\) passed/,
      ),
    });
    // The Lease still names replica-a: its loop renews it and a new term starts, with a new signal.
    await eventually(() => l.elector.isLeader() && check(l).ok, { what: 'a new term' });
    expect(l.log).toEqual(['started', 'stopped', 'started']);
    expect(l.signals).toHaveLength(2);
    expect(first.aborted).toBe(true);
    expect(l.signals[1]!.aborted).toBe(false);
    expect(l.elector.leaderSignal()).toBe(l.signals[1]);
    expect(check(l)).toEqual({ ok: true, detail: 'leads ns/lease' });
  });

  it('with nothing read, the elector steps down by itself at its next tick: callbacks, event, lastError, metrics', async () => {
    const l = await leader();
    const signal = l.signals[0]!;
    const stopped = new Promise<number>((resolve) => signal.addEventListener('abort', () => resolve(performance.now()), { once: true }));
    // Nothing reads the elector after this stall: its own timer finds the deadline passed.
    await afterStall(l, 'a timer, then a setImmediate', () => undefined);
    await stopped;
    expect(l.log.slice(0, 2)).toEqual(['started', 'stopped']);
    const lost = l.state.readEvents({ type: 'leader.lost' }, 10).events[0];
    expect(lost?.summary).toMatch(
      /^replica-a stopped leading ns\/lease: renew deadline \(400 ms\) passed while the event loop was stalled/,
    );
    expect((await variable(l)).lastError).toMatch(/^renew deadline \(400 ms\) passed while the event loop was stalled for at least \d+ ms/);
  });

  it('a stall long after the last renewal (renewals failing) ends the term at the first read after it', async () => {
    const l = await leader();
    const signal = l.signals[0]!;
    // Renewals fail from now on; the deadline is 400 ms after the last one that succeeded.
    l.api.broken = true;
    await new Promise((resolve) => setTimeout(resolve, 250));
    const seen = await afterStall(
      l,
      'a timer, then a setImmediate',
      () => ({ aborted: signal.aborted, leading: l.elector.isLeader() }),
      300,
    );
    expect(seen).toEqual({ aborted: true, leading: false });
    expect(l.metrics.isLeader()).toBe(false);
  });

  it('a renewal sent before the stall and answered after it does not extend the term', async () => {
    const l = await leader();
    const signal = l.signals[0]!;
    l.api.delayMs = 20;
    const landed = l.api.written.length;
    // The next renewal is sent, then the loop stalls; its answer is handled after the stall.
    await new Promise<void>((resolve) => {
      l.api.onWrite = () => {
        l.api.onWrite = undefined;
        setImmediate(() => {
          stallEventLoop(STALL_MS);
          resolve();
        });
      };
    });
    await eventually(() => l.api.written.length > landed, { what: 'the renewal to land' });
    // It landed (the Lease names replica-a), but it was sent longer than the renew deadline ago.
    await new Promise((resolve) => setImmediate(resolve));
    expect((l.api.stored as LeaseObject).spec?.holderIdentity).toBe('replica-a');
    expect(signal.aborted).toBe(true);
    expect(l.log.slice(0, 2)).toEqual(['started', 'stopped']);
  });
});

describe("a term's signal", () => {
  it('is given to onStartedLeading and answered by leaderSignal(); an aborted one while not leading', async () => {
    const l = candidate();
    const before = l.elector.leaderSignal();
    expect(before.aborted).toBe(true);
    expect((before.reason as Error).message).toBe('replica-a does not lead ns/lease');
    await eventually(() => l.elector.isLeader(), { what: 'replica-a leads' });
    expect(l.elector.leaderSignal()).toBe(l.signals[0]);
    expect(l.signals[0]!.aborted).toBe(false);
  });

  it('aborts synchronously in close(), before it returns, and the metric says 0', async () => {
    const l = await leader();
    const signal = l.signals[0]!;
    const closing = l.elector.close();
    expect(signal.aborted).toBe(true);
    expect((signal.reason as Error).message).toBe('replica-a stopped leading ns/lease: the elector was closed');
    expect(l.metrics.isLeader()).toBe(false);
    await closing;
    expect(l.api.spec()).toMatchObject({ holderIdentity: '', leaseDurationSeconds: 1 });
  });

  it('aborts as soon as the Lease names another holder, not at the renew deadline', async () => {
    const l = await leader();
    const signal = l.signals[0]!;
    const aborted = new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
    // Another writer took the Lease (a replica that judged it expired).
    l.api.stored = l.api.lease({ ...l.api.spec(), holderIdentity: 'replica-b', renewTime: '2030-01-01T00:00:00.000000Z' });
    await aborted;
    expect((signal.reason as Error).message).toBe('replica-a stopped leading ns/lease: the Lease names "replica-b" as its holder');
    expect(l.elector.isLeader()).toBe(false);
    expect(l.metrics.isLeader()).toBe(false);
    expect((await variable(l)).holder).toBe('replica-b');
  });

  it('aborts when renewals fail until the renew deadline', async () => {
    const l = await leader();
    const signal = l.signals[0]!;
    const aborted = new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
    l.api.broken = true;
    await aborted;
    // A loaded machine may delay the elector's timer enough to call it a stall.
    expect((signal.reason as Error).message).toMatch(
      /^replica-a stopped leading ns\/lease: (could not renew within 400 ms|renew deadline \(400 ms\) passed while the event loop was stalled)/,
    );
    expect((await variable(l)).lastError).toMatch(/^(HTTP 503|renew deadline)/);
  });
});

describe('runWhileLeading', () => {
  it('runs the work with the term signal and resolves with its result', async () => {
    const l = await leader();
    await expect(l.elector.runWhileLeading((signal) => (signal === l.signals[0] ? 'done' : 'other signal'))).resolves.toBe('done');
  });

  it('rejects without calling the work when this replica does not lead', async () => {
    const l = candidate({}, Object.assign(new FakeLeaseApi(), { broken: true }));
    const work = jest.fn();
    await expect(l.elector.runWhileLeading(work)).rejects.toThrow('replica-a does not lead ns/lease');
    expect(work).not.toHaveBeenCalled();
  });

  it('rejects with the reason when the term ends before the work resolves, even if it resolves', async () => {
    const l = await leader();
    const done = l.elector.runWhileLeading(async () => {
      await new Promise((resolve) => setTimeout(resolve, 10));
      stallEventLoop(STALL_MS);
      return 'deployed';
    });
    await expect(done).rejects.toThrow(
      /^replica-a stopped leading ns\/lease: renew deadline \(400 ms\) passed while the event loop was stalled/,
    );
  });

  it('passes the work’s own rejection through', async () => {
    const l = await leader();
    await expect(l.elector.runWhileLeading(() => Promise.reject(new Error('deploy failed')))).rejects.toThrow('deploy failed');
    await expect(
      l.elector.runWhileLeading(() => {
        throw new Error('sync throw');
      }),
    ).rejects.toThrow('sync throw');
  });

  it('rejects a work that is no function', async () => {
    const l = await leader();
    await expect(l.elector.runWhileLeading('deploy' as unknown as () => void)).rejects.toThrow(
      'runWhileLeading(fn) needs a function, got "deploy"',
    );
  });
});

describe('known gap: the leader metrics hold a flag that only setLeader() changes (lib/metrics)', () => {
  // ControllerMetrics keeps leadership as a flag set by setLeader(); the elector flips it when it,
  // or a read of it, notices the loss. A scrape that is the very first thing to run after a stall,
  // before anything reads the elector, still finds 1: fixing that needs lib/metrics to read a
  // leadership source at collect time. Marked failing so that it is noticed when that lands.
  it('a scrape that runs first after a stall, before any read of the elector, says 0', async () => {
    const l = await leader();
    // After a renewal: the elector's own timer is due after the probe's, so the probe runs first.
    const metric = await afterStall(l, 'the turn after a renewal, then a timer', () => l.metrics.isLeader());
    expect(metric).toBe(false);
    expect(l.signals[0]!.aborted).toBe(true);
  });

  it('a /metrics scrape that runs first after a stall says 0 (is_leader and master_status)', async () => {
    const l = await leader();
    const text = await afterStall(l, 'the turn after a renewal, then a timer', () => l.registry.metrics());
    expect(await text).toMatch(/^ctl_leader_election_is_leader 0$/m);
    expect(await text).toMatch(/^leader_election_master_status\{name="lease"\} 0$/m);
    expect(l.signals[0]!.aborted).toBe(true);
  });
});
