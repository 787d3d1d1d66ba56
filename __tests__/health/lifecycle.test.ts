/**
 * One lifecycle: everything the package starts closes with `close(): Promise<void>`, idempotent
 * (the second call answers the same promise), bounded and never rejecting, and `drain` takes every
 * one of them in `close`.
 */
import https from 'node:https';
import express from 'express';
import { Registry } from 'prom-client';
import { drain, watchProgress, type Closable } from '../../lib/health';
import { createIntrospectionRouter } from '../../lib/introspection/router';
import { createKubeAuth, createLeaseElector, waitForCaches, type KubeAuthApi } from '../../lib/kubernetes';
import { createControllerMetrics, createKubeAuthMetrics } from '../../lib/metrics';
import { createPipeline, createWorkQueue } from '../../lib/pipeline';
import { createPprofRouter } from '../../lib/pprof';
import { createIntrospectionState } from '../../lib/state/store';
import { watchServingCertificate } from '../../lib/tls';
import { testCertificates } from '../helpers/certificates';
import { eventually } from '../helpers/eventually';
import { FakeLeaseApi } from '../helpers/fake-lease-api';
import { requestApp } from '../helpers/http';

const certificates = testCertificates('lifecycle-');
afterAll(() => certificates.remove());

const noApi: KubeAuthApi = {
  createTokenReview: () => Promise.reject(new Error('unused')),
  createSubjectAccessReview: () => Promise.reject(new Error('unused')),
};

/** A Lease elector that leads within milliseconds of its start. */
const ELECTION = { namespace: 'ns', name: 'lease', identity: 'a', retryPeriodMs: 50, renewDeadlineMs: 100, leaseDurationMs: 200 };

/** Whether `promise` has settled: a reaction to it runs before one queued after it. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  return Promise.race([promise.then(() => true), Promise.resolve().then(() => false)]);
}

/** One handle of every kind the package starts, on one state. */
function everyHandle() {
  const state = createIntrospectionState({ waitForConfig: false });
  const registry = new Registry();
  const metrics = createControllerMetrics(registry, state);
  const pipeline = createPipeline(state, { metrics });
  const queue = createWorkQueue({ metrics });
  const authMetrics = createKubeAuthMetrics(registry);
  certificates.install(certificates.leaf('lifecycle'));
  const handles = {
    introspection: createIntrospectionRouter(state, { pprof: { heapSamplingIntervalBytes: false } }),
    pprof: createPprofRouter(undefined, { heapSamplingIntervalBytes: false }),
    elector: createLeaseElector(state, new FakeLeaseApi(), ELECTION),
    auth: createKubeAuth(noApi, authMetrics),
    authMetrics,
    certificate: watchServingCertificate(https.createServer(), state, {
      certFile: certificates.served.cert,
      keyFile: certificates.served.key,
    }),
    metrics,
    gate: waitForCaches(state, { never: () => false }),
    processing: pipeline.processQueue(queue, { cycle: (key) => ({ trigger: key, render: () => key }) }),
    watchdog: watchProgress(state, { timeoutMs: 60_000 }),
  };
  return { state, registry, queue, handles };
}

describe('every handle the package starts', () => {
  it('is a Closable that drain closes: each one ends what it started', async () => {
    const { state, registry, queue, handles } = everyHandle();
    // Compile-time: every kind is a Closable.
    const targets: Closable[] = Object.values(handles);
    await eventually(() => handles.elector.isLeader(), { what: 'the elector to lead' });
    expect(state.healthChecks().map((c) => c.name)).toEqual(expect.arrayContaining(['leader-election', 'progress-reconciliation']));

    await drain(state, { delayMs: 0, close: targets });

    expect((await requestApp(express().use(handles.introspection), '/debug/pprof/')).status).toBe(503);
    expect((await requestApp(express().use(handles.pprof), '/')).status).toBe(503);
    expect(handles.elector.isLeader()).toBe(false);
    expect(((await state.readVar('leader_election')) as { value: { closed: boolean } }).value.closed).toBe(true);
    expect(state.healthChecks().map((c) => c.name)).toEqual([]);
    expect(state.readinessGates().map((g) => g.name)).not.toContain('caches-synced');
    expect(queue.shuttingDown).toBe(true);
    expect(registry.getMetricsAsArray()).toEqual([]);
    for (const handle of targets) await expect(settled(handle.close() as Promise<void>)).resolves.toBe(true);
  });

  it('answers every close() with the same promise, which never rejects', async () => {
    const { handles } = everyHandle();
    for (const [kind, handle] of Object.entries(handles)) {
      const closing = handle.close();
      expect({ kind, same: handle.close() === closing }).toEqual({ kind, same: true });
      await expect(closing).resolves.toBeUndefined();
    }
  });
});

describe('bounded close()', () => {
  it('the workers: settles after closeTimeoutMs while a cycle hangs, and the queue takes no other key', async () => {
    const state = createIntrospectionState({ waitForConfig: false });
    const pipeline = createPipeline(state);
    const queue = createWorkQueue();
    let started = 0;
    const processing = pipeline.processQueue(queue, {
      closeTimeoutMs: 100,
      cycle: (key) => ({ trigger: key, render: () => (started++, new Promise<string>(() => {})) }),
    });
    queue.add('a');
    queue.add('b');
    await eventually(() => started === 1, { what: 'the first cycle to hang' });
    const startedAt = performance.now();
    await processing.close();
    expect(performance.now() - startedAt).toBeGreaterThanOrEqual(90);
    expect(started).toBe(1);
    expect(queue.shuttingDown).toBe(true);
  });

  it('the elector: settles while the Lease API hangs, leadership ended before close() returned', async () => {
    const state = createIntrospectionState({ waitForConfig: false });
    const api = new FakeLeaseApi();
    const elector = createLeaseElector(state, api, ELECTION);
    await eventually(() => elector.isLeader(), { what: 'the elector to lead' });
    // Every call from now on hangs: the release included.
    const never = (): Promise<never> => new Promise(() => {});
    Object.assign(api, { readNamespacedLease: never, createNamespacedLease: never, replaceNamespacedLease: never });
    const signal = elector.leaderSignal();
    const closing = elector.close();
    expect(signal.aborted).toBe(true);
    const startedAt = performance.now();
    await closing;
    expect(performance.now() - startedAt).toBeLessThan(2 * ELECTION.renewDeadlineMs + 1000);
  });
});
