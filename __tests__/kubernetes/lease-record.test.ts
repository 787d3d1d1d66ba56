/**
 * The Lease's fields as the elector reads them (issue 39, class 3): each one the way the API server
 * stores it, or an error naming it. A Lease with a field no API server would store (a
 * `leaseDurationSeconds` of NaN or "abc", a `leaseTransitions` of "5", a time that is no time) is
 * reported in `lastError` and never taken over, however expired it looks; the follower keeps
 * reading it every retry period. Against an in-memory Lease API (./fake-lease-api.ts).
 */
import { createLeaseElector, type LeaseApi, type LeaseElector, type LeaseElectorOptions, type LeaseObject } from '../../lib/kubernetes';
import { INT32_MAX, isRfc3339, readLeaseRecord } from '../../lib/kubernetes/lease-record';
import { eventually } from '../helpers/eventually';
import { FakeLeaseApi, testState } from '../helpers/fake-lease-api';

/** A 1 s lease of its own, retries every 20 ms: a follower reads the Lease many times in a test. */
const TIMING = { leaseDurationMs: 1000, renewDeadlineMs: 500, retryPeriodMs: 20 } as const;
const HUGE = 'x'.repeat(1_000_000);

const electors: LeaseElector[] = [];

afterEach(async () => {
  await Promise.all(electors.splice(0).map((e) => e.close()));
});

/** A valid Lease held by go-replica for 1 s, renewed in 2000 (a clock far behind: it must not matter). */
function heldLease(): LeaseObject & { metadata: Record<string, unknown>; spec: Record<string, unknown> } {
  return {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name: 'lease', namespace: 'ns', resourceVersion: '7' },
    spec: {
      holderIdentity: 'go-replica',
      leaseDurationSeconds: 1,
      acquireTime: '2000-01-01T00:00:00.000000Z',
      renewTime: '2000-01-01T00:00:00.000000Z',
      leaseTransitions: 4,
    },
  };
}

interface Follower {
  readonly api: FakeLeaseApi;
  readonly elector: LeaseElector;
  variable(): Promise<Record<string, unknown>>;
}

function follower(stored: unknown, options: Partial<LeaseElectorOptions> = {}, leaseApi?: LeaseApi): Follower {
  const api = new FakeLeaseApi();
  api.stored = stored;
  const state = testState();
  const elector = createLeaseElector(state, leaseApi ?? api, {
    namespace: 'ns',
    name: 'lease',
    identity: 'replica-a',
    ...TIMING,
    ...options,
  });
  electors.push(elector);
  return {
    api,
    elector,
    async variable() {
      const reading = await state.readVar('leader_election');
      return (reading as { value: Record<string, unknown> }).value;
    },
  };
}

type Change = (lease: ReturnType<typeof heldLease>) => unknown;
const spec =
  (field: string, value: unknown): Change =>
  (lease) => {
    lease.spec[field] = value;
    return lease;
  };
const metadata =
  (field: string, value: unknown): Change =>
  (lease) => {
    lease.metadata[field] = value;
    return lease;
  };
const without =
  (field: 'spec' | 'metadata'): Change =>
  (lease) => {
    delete lease[field];
    return lease;
  };

/** The cases of one spec field: a hostile Lease for each value, named. */
function specCases(field: string, values: ReadonlyArray<readonly [string, unknown]>): Array<[string, string, Change]> {
  return values.map(([name, value]) => [`${field} ${name}`, `spec.${field}`, spec(field, value)]);
}

/** [the case, the field the error must name, the hostile Lease]. */
const HOSTILE: Array<[string, string, Change]> = [
  ...specCases('leaseDurationSeconds', [
    ['NaN', NaN],
    ['"abc"', 'abc'],
    ['"5"', '5'],
    ['1.5', 1.5],
    ['-1', -1],
    ['0', 0],
    ['-0', -0],
    ['1e12', 1e12],
    ['2147483648', 2_147_483_648],
    ['Infinity', Infinity],
    ['-Infinity', -Infinity],
    ['null', null],
    ['true', true],
    ['an object', {}],
    ['an array', [5]],
    ['a huge string', HUGE],
  ]),
  ...specCases('leaseTransitions', [
    ['"5"', '5'],
    ['-1', -1],
    ['1.5', 1.5],
    ['NaN', NaN],
    ['Infinity', Infinity],
    ['2147483648', 2_147_483_648],
    ['1e12', 1e12],
    ['null', null],
    ['an object', {}],
    ['an array', []],
    ['false', false],
  ]),
  ...specCases('holderIdentity', [
    ['5', 5],
    ['null', null],
    ['an object', { name: 'go-replica' }],
    ['an array', ['go-replica']],
    ['true', true],
    ['1025 characters', 'x'.repeat(1025)],
    ['a huge string', HUGE],
  ]),
  ...['renewTime', 'acquireTime'].flatMap((field) =>
    specCases(field, [
      ['"abc"', 'abc'],
      ['an empty string', ''],
      ['February 30th', '2024-02-30T00:00:00.000000Z'],
      ['month 13', '2024-13-01T00:00:00.000000Z'],
      ['hour 24', '2024-01-01T24:00:00Z'],
      ['second 60', '2024-01-01T23:59:60Z'],
      ['a space for T', '2024-01-01 00:00:00Z'],
      ['no offset', '2024-01-01T00:00:00'],
      ['lower-case t and z', '2024-01-01t00:00:00z'],
      ['ten fractional digits', '2024-01-01T00:00:00.1234567890Z'],
      ['an offset of 24 hours', '2024-01-01T00:00:00+24:00'],
      ['a number (milliseconds)', 1_700_000_000_000],
      ['an invalid Date', new Date(NaN)],
      ['null', null],
      ['an object', {}],
      ['an array', ['2024-01-01T00:00:00Z']],
      ['a huge string', `2024-01-01T00:00:00Z${HUGE}`],
    ]),
  ),
  ['spec missing', 'spec', without('spec')],
  ['spec null', 'spec', (lease) => ({ ...lease, spec: null })],
  ['spec a string', 'spec', (lease) => ({ ...lease, spec: 'go-replica' })],
  ['spec an array', 'spec', (lease) => ({ ...lease, spec: [lease.spec] })],
  ['preferredHolder 5', 'spec.preferredHolder', spec('preferredHolder', 5)],
  ['strategy an object', 'spec.strategy', spec('strategy', {})],
  ['metadata missing', 'metadata', without('metadata')],
  ['metadata an array', 'metadata', (lease) => ({ ...lease, metadata: [] })],
  ['resourceVersion missing', 'metadata.resourceVersion', metadata('resourceVersion', undefined)],
  ['resourceVersion empty', 'metadata.resourceVersion', metadata('resourceVersion', '')],
  ['resourceVersion a number', 'metadata.resourceVersion', metadata('resourceVersion', 7)],
  ['resourceVersion null', 'metadata.resourceVersion', metadata('resourceVersion', null)],
  ['resourceVersion huge', 'metadata.resourceVersion', metadata('resourceVersion', HUGE)],
  ['another name', 'metadata.name', metadata('name', 'other')],
  ['another namespace', 'metadata.namespace', metadata('namespace', 'other')],
  ['another apiVersion', 'apiVersion', (lease) => ({ ...lease, apiVersion: 'v1' })],
  ['another kind', 'kind', (lease) => ({ ...lease, kind: 'ConfigMap' })],
  ['the Lease null', 'not a Lease object', () => null],
  ['the Lease a string', 'not a Lease object', () => 'lease'],
  ['the Lease an array', 'not a Lease object', () => [heldLease()]],
  ['the Lease a number', 'not a Lease object', () => 42],
];

describe('a Lease with a field no API server would store', () => {
  it.each(HOSTILE)('%s: reported, naming %s; never taken over, never written; read again every retry period', async (_, field, change) => {
    const f = follower(change(heldLease()));
    await eventually(() => f.api.reads >= 5, { what: 'five reads' });
    const value = await f.variable();
    expect(value.lastError).toMatch(/^invalid Lease, left alone: /);
    expect(value.lastError).toContain(field);
    expect(value).toMatchObject({ leading: false, holder: '' });
    expect(f.elector.isLeader()).toBe(false);
    expect(f.api.written).toEqual([]);
  });

  it.each([
    [spec('leaseDurationSeconds', NaN), 'spec.leaseDurationSeconds must be an integer from 1 to 2147483647, got NaN'],
    [spec('leaseDurationSeconds', 'abc'), 'spec.leaseDurationSeconds must be an integer from 1 to 2147483647, got "abc"'],
    [spec('leaseTransitions', '5'), 'spec.leaseTransitions must be an integer from 0 to 2147483647, got "5"'],
    [spec('holderIdentity', HUGE), 'spec.holderIdentity must be a string of at most 1024 characters, got a string of 1000000 characters'],
    [spec('renewTime', 1_700_000_000_000), 'spec.renewTime must be an RFC 3339 time (a MicroTime), got 1700000000000'],
    [without('spec'), 'spec must be an object, got undefined'],
    [
      (lease: ReturnType<typeof heldLease>) => ({ ...lease, spec: { ...lease.spec, leaseDurationSeconds: 0, leaseTransitions: -1 } }),
      'spec.leaseDurationSeconds must be an integer from 1 to 2147483647, got 0; spec.leaseTransitions must be an integer from 0 to 2147483647, got -1',
    ],
  ])('says what is wrong in one line: %#', async (change, problems) => {
    const f = follower(change(heldLease()));
    await eventually(() => f.api.reads >= 2, { what: 'two reads' });
    expect((await f.variable()).lastError).toBe(`invalid Lease, left alone: ${problems}`);
  });

  it('an expired-looking invalid Lease (NaN, "abc", 0) is not taken over after its own or any lease duration', async () => {
    const followers = [NaN, 'abc', 0].map((duration) => follower(spec('leaseDurationSeconds', duration)(heldLease())));
    // Longer than this replica's lease duration (1 s) and the holder's stated 1 s, from the first read.
    await new Promise((resolve) => setTimeout(resolve, TIMING.leaseDurationMs + 300));
    for (const f of followers) {
      expect(f.api.written).toEqual([]);
      expect(f.elector.isLeader()).toBe(false);
      expect(f.api.reads).toBeGreaterThan(5);
    }
  });

  it('once fixed, the holder gets a whole lease duration from then, and the takeover writes numbers', async () => {
    const f = follower(spec('leaseTransitions', '5')(heldLease()));
    await eventually(() => f.api.reads >= 3, { what: 'three reads' });
    const fixedAt = performance.now();
    f.api.stored = { ...heldLease(), spec: { ...heldLease().spec, leaseTransitions: 5 } };
    await eventually(() => f.elector.isLeader(), { timeoutMs: 5000, what: 'replica-a takes the fixed Lease over' });
    // Not before the holder's 1 s, counted from when the record became valid.
    expect(performance.now() - fixedAt).toBeGreaterThanOrEqual(1000);
    expect(f.api.written[0]?.spec).toMatchObject({ holderIdentity: 'replica-a', leaseTransitions: 6, leaseDurationSeconds: 1 });
    expect(typeof f.api.written[0]?.spec?.leaseTransitions).toBe('number');
  });

  it('a leader whose Lease turns invalid writes nothing over it and stops leading at its renew deadline', async () => {
    const signals: AbortSignal[] = [];
    const f = follower(undefined, { onStartedLeading: (signal) => signals.push(signal) });
    await eventually(() => f.elector.isLeader(), { what: 'replica-a leads' });
    const writes = f.api.written.length;
    f.api.stored = { ...(f.api.stored as LeaseObject), spec: { ...f.api.spec(), leaseDurationSeconds: 'abc' } };
    await eventually(() => signals[0]!.aborted, { what: 'the term to end' });
    // A loaded machine may delay the elector's timer enough to call it a stall.
    expect((signals[0]!.reason as Error).message).toMatch(
      /^replica-a stopped leading ns\/lease: (could not renew within 500 ms|renew deadline \(500 ms\) passed while the event loop was stalled)/,
    );
    expect(f.api.written).toHaveLength(writes);
    expect((await f.variable()).lastError).toContain('spec.leaseDurationSeconds');
  });

  it('an answer to its own write that is no Lease does not make it the leader', async () => {
    const api = new FakeLeaseApi();
    const noLease = async (answer: Promise<LeaseObject>): Promise<LeaseObject> =>
      ({ ...(await answer), spec: 'held' }) as unknown as LeaseObject;
    const f = follower(
      undefined,
      {},
      {
        readNamespacedLease: () => api.readNamespacedLease(),
        createNamespacedLease: (param) => noLease(api.createNamespacedLease(param)),
        replaceNamespacedLease: (param) => noLease(api.replaceNamespacedLease(param)),
      },
    );
    await eventually(async () => /spec must be an object/.test(String((await f.variable()).lastError)), { what: 'the error' });
    // It keeps trying (the Lease created names it, so it renews), and never leads on such answers.
    await eventually(() => api.written.length >= 3, { what: 'more writes' });
    expect(f.elector.isLeader()).toBe(false);
  });
});

describe('valid but unusual Leases', () => {
  it('an int32-max lease duration is waited for, and the variable says for what and until when', async () => {
    const f = follower(spec('leaseDurationSeconds', INT32_MAX)(heldLease()));
    await eventually(() => f.api.reads >= 5, { what: 'five reads' });
    const value = await f.variable();
    expect(value).toMatchObject({ leading: false, holder: 'go-replica', holderLeaseDurationSeconds: INT32_MAX });
    expect(value).not.toHaveProperty('lastError');
    const expires = Date.parse(String(value.holderLeaseExpiresAt));
    // About 68 years from now.
    expect(expires - Date.now()).toBeGreaterThan(INT32_MAX * 1000 - 60_000);
    expect(expires - Date.now()).toBeLessThanOrEqual(INT32_MAX * 1000);
    expect(f.api.written).toEqual([]);
  });

  it('the variable shows when a normal holder lease runs out', async () => {
    const f = follower(heldLease());
    await eventually(() => f.api.reads >= 1, { what: 'a read' });
    const value = await f.variable();
    expect(value.holderLeaseDurationSeconds).toBe(1);
    expect(Date.parse(String(value.holderLeaseExpiresAt)) - Date.now()).toBeLessThanOrEqual(1000);
  });

  it.each([
    ['in the future', '3000-01-01T00:00:00.000000Z'],
    ['far in the past', '1970-01-01T00:00:00.000000Z'],
    ['a Date object (a client that parses times)', new Date('2000-01-01T00:00:00Z')],
  ])('a renewTime %s neither delays nor hastens a takeover: the holder’s duration from when it was seen', async (_, renewTime) => {
    const startedAt = performance.now();
    const f = follower(spec('renewTime', renewTime)(heldLease()));
    await eventually(() => f.elector.isLeader(), { timeoutMs: 5000, what: 'replica-a takes over' });
    expect(performance.now() - startedAt).toBeGreaterThanOrEqual(1000);
    expect(f.api.written[0]?.spec).toMatchObject({ holderIdentity: 'replica-a', leaseTransitions: 5 });
    expect(String(f.api.written[0]?.spec?.renewTime)).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
  });

  it('a Date acquireTime of its own Lease is renewed as a MicroTime with six fractional digits', async () => {
    const f = follower({
      ...heldLease(),
      spec: { ...heldLease().spec, holderIdentity: 'replica-a', acquireTime: new Date('2020-05-06T07:08:09.123Z') },
    });
    await eventually(() => f.elector.isLeader(), { what: 'replica-a renews its Lease' });
    expect(f.api.written[0]?.spec).toMatchObject({ acquireTime: '2020-05-06T07:08:09.123000Z', leaseTransitions: 4 });
  });

  it('a leaseTransitions at int32 max stays there on a takeover (the API server stores no more)', async () => {
    const f = follower({ ...heldLease(), spec: { holderIdentity: '', leaseTransitions: INT32_MAX } });
    await eventually(() => f.elector.isLeader(), { what: 'replica-a takes the free Lease' });
    expect(f.api.written[0]?.spec?.leaseTransitions).toBe(INT32_MAX);
  });

  it('absent optional fields are no error: a free Lease with an empty spec is taken at once', async () => {
    const f = follower({ ...heldLease(), spec: {} });
    await eventually(() => f.elector.isLeader(), { what: 'replica-a takes the free Lease' });
    expect(f.api.written[0]?.spec).toMatchObject({ holderIdentity: 'replica-a', leaseTransitions: 1, leaseDurationSeconds: 1 });
    expect((await f.variable()).lastError).toBeUndefined();
  });

  it('rejects an identity longer than a holder it would accept', () => {
    expect(() => follower(undefined, { identity: 'x'.repeat(1025) })).toThrow(
      'createLeaseElector: identity must be a string of at most 1024 characters, got 1025 characters',
    );
  });
});

describe('readLeaseRecord', () => {
  it.each([
    ['2024-01-01T00:00:00Z', true],
    ['2024-01-01T00:00:00.123456Z', true],
    ['2024-01-01T00:00:00.1Z', true],
    ['2024-01-01T00:00:00.123456789Z', true],
    ['2024-02-29T23:59:59+05:30', true],
    ['2024-12-31T00:00:00-12:00', true],
    ['0001-01-01T00:00:00Z', true],
    ['2023-02-29T00:00:00Z', false],
    ['2024-04-31T00:00:00Z', false],
    ['2024-00-10T00:00:00Z', false],
    ['2024-01-00T00:00:00Z', false],
    ['2024-01-01T00:60:00Z', false],
    ['+002024-01-01T00:00:00Z', false],
  ])('%s is an RFC 3339 time: %s', (text, valid) => {
    expect(isRfc3339(text)).toBe(valid);
  });

  it('only reads what it is given', () => {
    const lease = Object.freeze({ ...heldLease(), spec: Object.freeze(heldLease().spec), metadata: Object.freeze(heldLease().metadata) });
    expect(readLeaseRecord(lease, { namespace: 'ns', name: 'lease' })).toMatchObject({
      holder: 'go-replica',
      durationSeconds: 1,
      transitions: 4,
    });
  });
});
