/**
 * The Lease leader elector: its options, and its election against a real kube-apiserver (skipped
 * outside CI when the control plane is not built). The Lease API under test is a small node:https
 * client (client-node is ESM-only; Jest here runs CommonJS) whose errors carry a numeric `code`,
 * as client-node's ApiException does.
 */
import fs from 'node:fs';
import https from 'node:https';
import { Registry } from 'prom-client';
import { drain } from '../../lib/health';
import { createControllerMetrics } from '../../lib/metrics';
import { createIntrospectionState } from '../../lib/state/store';
import type { IntrospectionState } from '../../lib/state/types';
import {
  createLeaseElector,
  LEASE_ELECTOR_DEFAULTS,
  type LeaseApi,
  type LeaseElector,
  type LeaseElectorOptions,
  type LeaseObject,
  type LeaderReporter,
} from '../../lib/kubernetes';
import * as pkg from '../../lib';
import type { CoordinationV1Api } from '@kubernetes/client-node' with { 'resolution-mode': 'import' };
import { describeWithControlPlane, startControlPlane, type ControlPlane } from '../helpers/control-plane';
import { eventually } from '../helpers/eventually';
import { FakeLeaseApi } from '../helpers/fake-lease-api';

const NS = 'election';
/** Small durations: 2 s lease, 1.5 s renew deadline, 300 ms retries (client-go's ratios, shrunk). */
const TIMING = { leaseDurationMs: 2000, renewDeadlineMs: 1500, retryPeriodMs: 300 } as const;
/** What a loaded 2-core CI machine may add to a bound. */
const SLACK_MS = 1000;

/** Compile-time: client-node's CoordinationV1Api (the devDependency, 1.x) is a LeaseApi. */
export const clientNodeFits = (coordination: CoordinationV1Api): LeaseApi => coordination;

const noApi: LeaseApi = {
  readNamespacedLease: () => Promise.reject(Object.assign(new Error('unused'), { code: 500 })),
  createNamespacedLease: () => Promise.reject(Object.assign(new Error('unused'), { code: 500 })),
  replaceNamespacedLease: () => Promise.reject(Object.assign(new Error('unused'), { code: 500 })),
};

describe('createLeaseElector options', () => {
  /** The option rows below hold the API too; the call takes it second, the options third. */
  const base: LeaseElectorOptions & { api: LeaseApi } = { api: noApi, namespace: 'ns', name: 'lease', identity: 'a' };
  const create = (given: unknown, state: unknown = createIntrospectionState()): LeaseElector => {
    if (given === undefined) return createLeaseElector(state as IntrospectionState, noApi, undefined as never);
    const { api, ...options } = given as { api?: unknown };
    return createLeaseElector(state as IntrospectionState, api as LeaseApi, options as LeaseElectorOptions);
  };

  it('exports the elector and client-go defaults from the package', () => {
    expect(pkg.createLeaseElector).toBe(createLeaseElector);
    expect(pkg.LEASE_ELECTOR_DEFAULTS).toBe(LEASE_ELECTOR_DEFAULTS);
    expect(LEASE_ELECTOR_DEFAULTS).toEqual({
      leaseDurationMs: 15_000,
      renewDeadlineMs: 10_000,
      retryPeriodMs: 2000,
      varName: 'leader_election',
      healthCheckName: 'leader-election',
    });
    expect(Object.isFrozen(LEASE_ELECTOR_DEFAULTS)).toBe(true);
  });

  it.each([
    [undefined, /options are required/],
    [{ ...base, api: undefined }, /api must be a Lease API/],
    [{ ...base, api: { readNamespacedLease() {} } }, /api must be a Lease API/],
    [{ ...base, namespace: '' }, /namespace must be a string of at least 1 characters/],
    [{ ...base, name: undefined }, /name is required/],
    [{ ...base, identity: 7 }, /identity must be a string/],
    [{ ...base, leaseDurationMs: 1.5 }, /leaseDurationMs/],
    [{ ...base, retryPeriodMs: 0 }, /retryPeriodMs/],
    [{ ...base, renewDeadlineMs: 15_000 }, /leaseDurationMs \(15000\) must be greater than renewDeadlineMs \(15000\)/],
    [{ ...base, renewDeadlineMs: 2400 }, /renewDeadlineMs \(2400\) must be greater than retryPeriodMs × 1.2 \(2400\)/],
    [{ ...base, metrics: {} }, /metrics must be the ControllerMetrics/],
    [{ ...base, onNewLeader: 'x' }, /onNewLeader must be a function/],
    [{ ...base, leaseDuration: 2000 }, /unknown option "leaseDuration" \(did you mean "leaseDurationMs"\?\)/],
  ])('rejects %p', (options, message) => {
    expect(() => create(options)).toThrow(TypeError);
    expect(() => create(options)).toThrow(message);
  });

  it('names the state argument when it is not one', () => {
    expect(() => create(base, {})).toThrow(/createLeaseElector: the first argument must be the IntrospectionState/);
  });

  it('refuses options given second, where the API goes (the 0.1 call shape), saying where they go', () => {
    expect(() => createLeaseElector(createIntrospectionState(), base as never, undefined as never)).toThrow(
      new TypeError(
        "createLeaseElector: the second argument is the Lease API (client-node's CoordinationV1Api); " +
          'options come third: createLeaseElector(state, api, { namespace, name, identity })',
      ),
    );
  });
});

describe('createLeaseElector reporting to a LeaderReporter the host wrote, with no metrics at all', () => {
  it("tells it each change of leadership, with the term's own check while it leads; a throw of it is recorded, not thrown", async () => {
    const changes: Array<{ leading: boolean; stillLeading: (() => boolean) | undefined }> = [];
    const reporter: LeaderReporter = { setLeader: (leading, stillLeading) => void changes.push({ leading, stillLeading }) };
    const timing = { retryPeriodMs: 50, renewDeadlineMs: 100, leaseDurationMs: 200 };
    const elector = createLeaseElector(createIntrospectionState(), new FakeLeaseApi(), {
      namespace: 'ns',
      name: 'lease',
      identity: 'a',
      ...timing,
      metrics: reporter,
    });
    await eventually(() => elector.isLeader(), { what: 'the elector to lead' });
    expect(changes.map((c) => c.leading)).toEqual([true]);
    expect(changes[0]!.stillLeading?.()).toBe(true);
    await elector.close();
    expect(changes.map((c) => c.leading)).toEqual([true, false]);
    expect(changes[0]!.stillLeading?.()).toBe(false);

    const state = createIntrospectionState();
    const throwing = createLeaseElector(state, new FakeLeaseApi(), {
      namespace: 'ns',
      name: 'lease',
      identity: 'b',
      ...timing,
      metrics: {
        setLeader: () => {
          throw new Error('broken reporter');
        },
      },
    });
    await eventually(() => throwing.isLeader(), { what: 'the second elector to lead' });
    const reading = (await state.readVar('leader_election')) as { value: { leading: boolean; lastError?: string } };
    expect(reading.value).toMatchObject({ leading: true, lastError: expect.stringContaining('broken reporter') });
    await throwing.close();
  });
});

/** An ApiException-like error: the HTTP status as a numeric code, the body as text, a message over lines. */
class ApiError extends Error {
  constructor(
    readonly code: number,
    readonly body: string,
  ) {
    super(`HTTP-Code: ${code}\nMessage: Unknown API Status Code!\nBody: ${body}\nHeaders: {}`);
  }
}

/** A Lease API over node:https with the admin token; `broken` makes every call fail, `hanging` never answer. */
interface TestLeaseApi extends LeaseApi {
  broken: boolean;
  hanging: boolean;
}

function leaseApi(cp: ControlPlane): TestLeaseApi {
  const ca = fs.readFileSync(cp.caFile);
  const agent = new https.Agent({ ca, keepAlive: true });
  const call = (method: string, path: string, body?: unknown): Promise<LeaseObject> => {
    if (self.broken)
      return Promise.reject(new ApiError(503, JSON.stringify({ kind: 'Status', message: 'the test broke the connection', code: 503 })));
    if (self.hanging) return new Promise(() => {});
    return new Promise((resolve, reject) => {
      const req = https.request(
        `${cp.url}${path}`,
        { method, agent, headers: { authorization: `Bearer ${cp.adminToken}`, 'content-type': 'application/json' } },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (text += chunk));
          res.on('end', () => {
            let parsed: { message?: string } & LeaseObject;
            try {
              parsed = JSON.parse(text) as typeof parsed;
            } catch {
              reject(new ApiError(res.statusCode ?? 0, text));
              return;
            }
            if ((res.statusCode ?? 0) >= 300) reject(new ApiError(res.statusCode ?? 0, text));
            else resolve(parsed);
          });
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(body === undefined ? undefined : JSON.stringify(body));
    });
  };
  const base = '/apis/coordination.k8s.io/v1/namespaces';
  const self: TestLeaseApi = {
    broken: false,
    hanging: false,
    readNamespacedLease: ({ name, namespace }) => call('GET', `${base}/${namespace}/leases/${name}`),
    createNamespacedLease: ({ namespace, body }) => call('POST', `${base}/${namespace}/leases`, body),
    replaceNamespacedLease: ({ name, namespace, body }) => call('PUT', `${base}/${namespace}/leases/${name}`, body),
  };
  return self;
}

describeWithControlPlane('createLeaseElector against a kube-apiserver', () => {
  let cp: ControlPlane;
  let leaseCount = 0;
  const electors: LeaseElector[] = [];

  beforeAll(async () => {
    cp = await startControlPlane();
    await cp.namespace(NS);
  }, 120_000);

  afterEach(async () => {
    await Promise.all(electors.splice(0).map((e) => e.close()));
  });

  afterAll(async () => {
    await cp?.stop();
  });

  /** A fresh Lease name per test. */
  function leaseName(): string {
    leaseCount++;
    return `lease-${leaseCount}`;
  }

  interface Candidate {
    readonly elector: LeaseElector;
    readonly state: ReturnType<typeof createIntrospectionState>;
    readonly registry: Registry;
    readonly api: TestLeaseApi;
    readonly log: string[];
  }

  function candidate(name: string, identity: string, options: Partial<LeaseElectorOptions> = {}): Candidate {
    const state = createIntrospectionState({ waitForConfig: false });
    const registry = new Registry();
    // controller-runtime's families too: leader_election_master_status{name} follows the same calls.
    const metrics = createControllerMetrics(registry, state, { controllerRuntime: { controller: 'lb', leaseName: name } });
    const api = leaseApi(cp);
    const log: string[] = [];
    const elector = createLeaseElector(state, api, {
      namespace: NS,
      name,
      identity,
      metrics,
      ...TIMING,
      onStartedLeading: () => log.push('started'),
      onStoppedLeading: () => log.push('stopped'),
      onNewLeader: (who) => log.push(`new:${who}`),
      ...options,
    });
    electors.push(elector);
    return { elector, state, registry, api, log };
  }

  /** A candidate, once it leads. */
  async function leader(name: string, identity: string): Promise<Candidate> {
    const elected = candidate(name, identity);
    await eventually(() => elected.elector.isLeader(), { what: `${identity} leads` });
    return elected;
  }

  async function readLease(name: string): Promise<LeaseObject> {
    const answer = await cp.request('GET', `/apis/coordination.k8s.io/v1/namespaces/${NS}/leases/${name}`);
    expect(answer.status).toBe(200);
    return answer.body as LeaseObject;
  }

  async function isLeaderMetric(registry: Registry): Promise<string | undefined> {
    return /^ctl_leader_election_is_leader (\d)$/m.exec(await registry.metrics())?.[1];
  }

  it('creates the Lease, leads, and reports it (metrics, events, variable, callbacks)', async () => {
    const name = leaseName();
    const a = await leader(name, 'replica-a');
    expect(await isLeaderMetric(a.registry)).toBe('1');
    expect(await a.registry.metrics()).toContain(`leader_election_master_status{name="${name}"} 1\n`);
    const lease = await readLease(name);
    expect(lease.spec).toMatchObject({ holderIdentity: 'replica-a', leaseDurationSeconds: 2, leaseTransitions: 0 });
    expect(String(lease.spec?.renewTime)).toMatch(/\.\d{6}Z$/);
    expect(String(lease.spec?.acquireTime)).toMatch(/\.\d{6}Z$/);
    expect(a.log).toEqual(['new:replica-a', 'started']);
    const types = a.state.readEvents({}, 100).events.map((e) => `${e.type} ${e.summary}`);
    expect(types).toEqual(
      expect.arrayContaining([
        `leader.observed replica-a leads ${NS}/${name} (observed by replica-a)`,
        `leader.elected replica-a became the leader of ${NS}/${name}`,
      ]),
    );
    // It renews: renewTime moves, acquireTime and transitions stay.
    const first = await readLease(name);
    await eventually(async () => (await readLease(name)).spec?.renewTime !== first.spec?.renewTime, { what: 'a renewal' });
    const renewed = await readLease(name);
    expect(renewed.spec).toMatchObject({ acquireTime: first.spec?.acquireTime, leaseTransitions: 0, holderIdentity: 'replica-a' });

    const reading = await a.state.readVar('leader_election');
    expect(reading.ok).toBe(true);
    const value = (reading as { value: Record<string, unknown> }).value;
    expect(value).toMatchObject({
      lease: `${NS}/${name}`,
      identity: 'replica-a',
      leading: true,
      holder: 'replica-a',
      observedLeader: 'replica-a',
      transitions: 0,
      ...TIMING,
      closed: false,
    });
    expect(Date.now() - Date.parse(String(value.lastRenewal))).toBeLessThan(TIMING.renewDeadlineMs + SLACK_MS);
    expect(value).not.toHaveProperty('lastError');

    const check = a.state.healthChecks().find((c) => c.name === 'leader-election');
    expect(check).toMatchObject({ livez: true, readyz: false });
    expect(await check!.check()).toMatchObject({ ok: true });

    await a.elector.close();
    expect(a.elector.isLeader()).toBe(false);
    expect(await isLeaderMetric(a.registry)).toBe('0');
    expect(a.log).toEqual(['new:replica-a', 'started', 'stopped']);
    expect((await readLease(name)).spec).toMatchObject({ holderIdentity: '', leaseDurationSeconds: 1, leaseTransitions: 0 });
    expect(((await a.state.readVar('leader_election')) as { value: unknown }).value).toMatchObject({ leading: false, closed: true });
    expect(a.state.healthChecks().map((c) => c.name)).not.toContain('leader-election');
  });

  it('a follower waits while the leader renews, and takes over after it stops renewing (no release)', async () => {
    const name = leaseName();
    const a = await leader(name, 'replica-a');
    const b = candidate(name, 'replica-b');
    // Longer than a lease duration: b never takes a lease that is being renewed.
    const watchUntil = performance.now() + TIMING.leaseDurationMs + 2 * TIMING.retryPeriodMs;
    while (performance.now() < watchUntil) {
      expect(b.elector.isLeader()).toBe(false);
      expect(a.elector.isLeader()).toBe(true);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(b.log).toEqual(['new:replica-a']);
    expect(await isLeaderMetric(b.registry)).toBe('0');

    a.api.broken = true;
    const brokeAt = performance.now();
    await eventually(() => b.elector.isLeader(), {
      timeoutMs: TIMING.leaseDurationMs + TIMING.retryPeriodMs * 1.2 + SLACK_MS,
      intervalMs: 20,
      what: 'replica-b takes over',
    });
    const tookMs = performance.now() - brokeAt;
    // a saw that it could not renew before b could take over.
    expect(a.elector.isLeader()).toBe(false);
    expect(a.log).toEqual(['new:replica-a', 'started', 'stopped']);
    expect(tookMs).toBeGreaterThan(TIMING.leaseDurationMs - TIMING.retryPeriodMs * 1.2 - 200);
    expect(b.log).toEqual(['new:replica-a', 'new:replica-b', 'started']);
    expect((await readLease(name)).spec).toMatchObject({ holderIdentity: 'replica-b', leaseTransitions: 1 });
    expect(((await a.state.readVar('leader_election')) as { value: unknown }).value).toMatchObject({
      leading: false,
      lastError: 'HTTP 503: the test broke the connection',
    });
  });

  it('drain({ close: [elector] }) releases the Lease: the follower leads within about one retry period', async () => {
    const name = leaseName();
    const a = await leader(name, 'replica-a');
    const b = candidate(name, 'replica-b');
    await eventually(() => b.log.includes('new:replica-a'), { what: 'replica-b observes replica-a' });
    const closedAt = performance.now();
    await drain(a.state, { delayMs: 0, close: [a.elector] });
    expect(a.elector.isLeader()).toBe(false);
    await eventually(() => b.elector.isLeader(), {
      timeoutMs: TIMING.retryPeriodMs * 1.2 + SLACK_MS,
      intervalMs: 10,
      what: 'replica-b leads after the release',
    });
    expect(performance.now() - closedAt).toBeLessThan(TIMING.leaseDurationMs);
    expect((await readLease(name)).spec).toMatchObject({ holderIdentity: 'replica-b', leaseTransitions: 1, leaseDurationSeconds: 2 });
  });

  it('two candidates starting at once: exactly one leads (the other loses the 409)', async () => {
    for (let round = 0; round < 3; round++) {
      const name = leaseName();
      const a = candidate(name, 'replica-a');
      const b = candidate(name, 'replica-b');
      await eventually(() => a.elector.isLeader() || b.elector.isLeader(), { what: 'a leader' });
      const until = performance.now() + 4 * TIMING.retryPeriodMs;
      while (performance.now() < until) {
        expect(Number(a.elector.isLeader()) + Number(b.elector.isLeader())).toBe(1);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      const [leader, loser] = a.elector.isLeader() ? ['replica-a', b] : ['replica-b', a];
      expect((await readLease(name)).spec).toMatchObject({ holderIdentity: leader });
      // A lost race (both found no Lease and created one) reads as the API server's 409, on one line.
      const { lastError } = ((await loser.state.readVar('leader_election')) as { value: { lastError?: string } }).value;
      if (lastError !== undefined) expect(lastError).toMatch(/^HTTP 409: leases\.coordination\.k8s\.io "lease-\d+" already exists$/);
      await Promise.all(electors.splice(0).map((e) => e.close()));
    }
  });

  it('steps down before renewDeadline + retryPeriod when renewals fail, and its liveness check fails after a stall', async () => {
    const name = leaseName();
    const a = await leader(name, 'replica-a');
    const check = a.state.healthChecks().find((c) => c.name === 'leader-election')!;

    // A stalled loop: the check runs before any timer could renew or step down.
    const stallUntil = performance.now() + TIMING.renewDeadlineMs + 100;
    while (performance.now() < stallUntil) {
      // busy: the elector's timers cannot run
    }
    // The check is the first read after the stall: it finds the renew deadline passed, ends the
    // term there, and fails until the election loop runs again.
    const stuck = await check.check();
    expect(stuck).toMatchObject({
      ok: false,
      detail: expect.stringMatching(
        /^stopped leading election\/lease-\d+ \d+ ms ago, found by a read before the election loop ran: renew deadline \(1500 ms\) passed while the event loop was stalled for at least \d+ ms/,
      ),
    });
    expect(a.elector.isLeader()).toBe(false);
    // It takes its own Lease again.
    await eventually(async () => a.elector.isLeader() && ((await check.check()) as { ok: boolean }).ok, {
      what: 'replica-a leads and renews again',
    });

    a.api.broken = true;
    const brokeAt = performance.now();
    await eventually(() => !a.elector.isLeader(), {
      timeoutMs: TIMING.renewDeadlineMs + TIMING.retryPeriodMs * 1.2 + SLACK_MS,
      intervalMs: 10,
      what: 'replica-a steps down',
    });
    expect(performance.now() - brokeAt).toBeLessThan(TIMING.renewDeadlineMs + TIMING.retryPeriodMs * 1.2 + 200);
    expect(await isLeaderMetric(a.registry)).toBe('0');
    expect(await check.check()).toMatchObject({ ok: true });
    const lost = a.state
      .readEvents({}, 100)
      .events.filter((e) => e.type === 'leader.lost')
      .pop();
    // A loaded machine may delay the elector's last timer enough to call it a stall.
    expect(lost?.summary).toMatch(
      new RegExp(
        `^replica-a stopped leading ${NS}/${name}: (could not renew within ${TIMING.renewDeadlineMs} ms$|renew deadline \\(${TIMING.renewDeadlineMs} ms\\) passed while the event loop was stalled)`,
      ),
    );
    // It keeps trying, and leads again once the API answers (its own record, not yet expired).
    a.api.broken = false;
    await eventually(() => a.elector.isLeader(), { timeoutMs: 3000, what: 'replica-a leads again' });
  });

  it('a call that hangs is abandoned at the renew deadline: the leader steps down on time, and close() still settles', async () => {
    const name = leaseName();
    const a = await leader(name, 'replica-a');
    a.api.hanging = true;
    const hungAt = performance.now();
    await eventually(() => !a.elector.isLeader(), {
      timeoutMs: TIMING.renewDeadlineMs + SLACK_MS,
      intervalMs: 10,
      what: 'replica-a steps down',
    });
    expect(performance.now() - hungAt).toBeLessThan(TIMING.renewDeadlineMs + 200);
    expect(((await a.state.readVar('leader_election')) as { value: unknown }).value).toMatchObject({
      leading: false,
      lastError: expect.stringMatching(/^the Lease API did not answer within \d+ ms$/),
    });
    const closedAt = performance.now();
    await a.elector.close();
    // It was not leading: nothing to release, nothing to wait for.
    expect(performance.now() - closedAt).toBeLessThan(200);
    expect((await readLease(name)).spec).toMatchObject({ holderIdentity: 'replica-a' });
  });

  it('close() while leading with an API that hangs settles within the renew deadline', async () => {
    const name = leaseName();
    const a = await leader(name, 'replica-a');
    a.api.hanging = true;
    const closedAt = performance.now();
    await a.elector.close();
    expect(performance.now() - closedAt).toBeLessThan(TIMING.renewDeadlineMs + 300);
    expect(a.elector.isLeader()).toBe(false);
    expect(a.log).toEqual(['new:replica-a', 'started', 'stopped']);
  });

  it("never compares the holder's renewTime with its own clock: a stale-looking record is waited out for the holder's duration", async () => {
    const name = leaseName();
    const created = await cp.request('POST', `/apis/coordination.k8s.io/v1/namespaces/${NS}/leases`, {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name, namespace: NS },
      spec: {
        holderIdentity: 'go-replica',
        leaseDurationSeconds: 3,
        // A holder whose clock is far behind: taken at face value, the lease expired long ago.
        acquireTime: '2000-01-01T00:00:00.000000Z',
        renewTime: '2000-01-01T00:00:00.000000Z',
        leaseTransitions: 4,
      },
    });
    expect(created.status).toBe(201);
    const b = candidate(name, 'replica-b');
    const startedAt = performance.now();
    await eventually(() => b.log.includes('new:go-replica'), { what: 'replica-b observes go-replica' });
    // The holder's 3 s, from when b first saw the record (not b's own 2 s).
    while (performance.now() - startedAt < 2500) {
      expect(b.elector.isLeader()).toBe(false);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await eventually(() => b.elector.isLeader(), {
      timeoutMs: 500 + TIMING.retryPeriodMs * 1.2 + SLACK_MS,
      intervalMs: 20,
      what: 'replica-b takes over',
    });
    expect((await readLease(name)).spec).toMatchObject({ holderIdentity: 'replica-b', leaseTransitions: 5, leaseDurationSeconds: 2 });
  });

  it('the API server stores only what the elector accepts; the largest duration it stores is waited for, and shown', async () => {
    const name = leaseName();
    const create = (spec: Record<string, unknown>): Promise<{ status: number }> =>
      cp.request('POST', `/apis/coordination.k8s.io/v1/namespaces/${NS}/leases`, {
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: { name, namespace: NS },
        spec: { holderIdentity: 'go-replica', ...spec },
      });
    // What the elector refuses, the API server refuses too (it validates and decodes int32s, MicroTimes).
    for (const spec of [
      { leaseDurationSeconds: 0 },
      { leaseDurationSeconds: 'abc' },
      { leaseDurationSeconds: 2_147_483_648 },
      { leaseTransitions: -1 },
      { renewTime: 'yesterday' },
    ]) {
      expect([400, 422]).toContain((await create(spec)).status);
    }
    expect((await create({ leaseDurationSeconds: 2_147_483_647, leaseTransitions: 3 })).status).toBe(201);
    const b = candidate(name, 'replica-b');
    await eventually(() => b.log.includes('new:go-replica'), { what: 'replica-b observes go-replica' });
    await new Promise((resolve) => setTimeout(resolve, 3 * TIMING.retryPeriodMs));
    expect(b.elector.isLeader()).toBe(false);
    const { value } = (await b.state.readVar('leader_election')) as { value: Record<string, unknown> };
    expect(value).toMatchObject({ leading: false, holder: 'go-replica', holderLeaseDurationSeconds: 2_147_483_647 });
    expect(value).not.toHaveProperty('lastError');
    expect(Date.parse(String(value.holderLeaseExpiresAt)) - Date.now()).toBeGreaterThan(2_147_483_647_000 - 60_000);
    expect((await readLease(name)).spec).toMatchObject({ holderIdentity: 'go-replica', leaseTransitions: 3 });
  });

  it('a callback that throws or rejects is recorded in lastError, and the election goes on', async () => {
    const name = leaseName();
    const rejections: unknown[] = [];
    const onRejection = (reason: unknown): number => rejections.push(reason);
    process.on('unhandledRejection', onRejection);
    try {
      const a = candidate(name, 'replica-a', {
        onNewLeader: () => {
          throw new Error('onNewLeader failed');
        },
        onStartedLeading: () => Promise.reject(new Error('onStartedLeading failed\nwith a second line')),
      });
      await eventually(() => a.elector.isLeader(), { what: 'replica-a leads' });
      await eventually(
        async () =>
          ((await a.state.readVar('leader_election')) as { value: { lastError?: string } }).value.lastError ===
          'onStartedLeading failed with a second line',
        { what: 'the rejection recorded' },
      );
      // Still renewing.
      const renewed = (await readLease(name)).spec?.renewTime;
      await eventually(async () => (await readLease(name)).spec?.renewTime !== renewed, { what: 'a renewal' });
      expect(a.elector.isLeader()).toBe(true);
      expect(rejections).toEqual([]);
    } finally {
      process.off('unhandledRejection', onRejection);
    }
  });
});
