#!/usr/bin/env node
// Wiring controller-introspection into @kubernetes/client-node, as docs/kubernetes.md walks through
// it: an informer's events drive the resource counts and the event ring, readiness waits for a
// cache whose LIST succeeded, and the package's Lease elector drives the leader metrics. The
// regions marked `#region` are the guide's code blocks (a test checks that they are identical).
// `npm run build` compiles it to examples/dist/kubernetes/ after the library:
//
//   node examples/dist/kubernetes/wiring.js
//
// It reads the kubeconfig (or the in-cluster service account) and watches the services of its
// namespace. Environment: POD_NAMESPACE (default `default`), POD_NAME (the lease identity; default
// the host name), PORT (default 8080; 0 picks a free one) and BIND_ADDRESS (default 0.0.0.0);
// CONFIG_VERSION (the version of the configuration it loads, default `1`); FLEET_SELECTOR (the
// Deployment's label selector: mounts the fleet view, docs/fleet.md) and FLEET_TOKEN_FILE (the token
// it reads its peers with; default the pod's ServiceAccount token); KUBE_AUTH=1 (guard everything
// but the probes with TokenReview and SubjectAccessReview); KUBECONFIG as kubectl reads it; for
// tests and local runs, RESTART_BACKOFF_MS, WATCH_IDLE_MS, LEASE_DURATION_MS, RENEW_DEADLINE_MS,
// RETRY_PERIOD_MS and DRAIN_DELAY_MS.

// #region imports
import os from 'node:os';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { Registry } from 'prom-client';
// client-node is an ES module only: a CommonJS host loads it with import() (see main), and takes
// its types from here.
import type * as k8s from '@kubernetes/client-node' with { 'resolution-mode': 'import' };
import {
  createControllerMetrics,
  createFleetView,
  createIntrospectionRouter,
  createKubeAuth,
  createKubeAuthMetrics,
  createIntrospectionState,
  createLeaseElector,
  createMetricsRouter,
  drain,
  waitForCaches,
  type ControllerMetrics,
  type FleetView,
  type IntrospectionState,
  type LeaseElector,
  type LeaseElectorOptions,
} from 'controller-introspection';

/** The client-node module, as `await import('@kubernetes/client-node')` gives it. */
type ClientNode = typeof k8s;
// #endregion

function log(fields: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify({ time: new Date().toISOString(), ...fields })}\n`);
}

function numberFromEnv(name: string, fallback: number, min = 1): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) throw new Error(`${name} must be a whole number from ${min}, got ${JSON.stringify(raw)}`);
  return value;
}

// #region counts
/** More changes than this in one turn (a LIST, a relist) make one summary event instead of one each. */
const MAX_EVENTS_PER_TURN = 10;

/**
 * Keeps `kind`'s entry of the resource counts equal to the number of objects in the informer's
 * cache, and publishes an event per object added or deleted. client-node calls `add` for every
 * object of a LIST that its cache did not hold and `delete` for every one a relist no longer has,
 * so counting the calls stays exact without walking the cache. A LIST delivers all its objects in
 * one turn: the counts are stored once per turn, and a burst becomes one summary event, so ten
 * thousand services neither stall the loop nor push everything else out of the event ring.
 */
export function countResources(
  state: IntrospectionState,
  counts: Record<string, number>,
  kind: string,
  informer: k8s.Informer<k8s.KubernetesObject>,
): void {
  counts[kind] = 0;
  let burst: { added: number; deleted: number; first: Array<[string, k8s.KubernetesObject]> } | undefined;
  const flush = (): void => {
    const { added, deleted, first } = burst!;
    burst = undefined;
    // setResourceCounts keeps the object it is given: hand it a copy.
    state.setResourceCounts({ ...counts });
    if (added + deleted > MAX_EVENTS_PER_TURN) {
      const summary = `${kind}: ${added} added, ${deleted} deleted at once; ${counts[kind]} in the cache`;
      state.publishEvent(`${kind}.resynced`, summary, { details: { added, deleted, count: counts[kind] } });
      return;
    }
    for (const [verb, obj] of first) {
      const { namespace = '', name = '' } = obj.metadata ?? {};
      state.publishEvent(`${kind}.${verb}`, `${kind} ${namespace}/${name} ${verb}`, { details: { namespace, name } });
    }
  };
  const changed = (verb: 'added' | 'deleted', obj: k8s.KubernetesObject): void => {
    counts[kind] = (counts[kind] ?? 0) + (verb === 'added' ? 1 : -1);
    if (burst === undefined) {
      burst = { added: 0, deleted: 0, first: [] };
      queueMicrotask(flush);
    }
    burst[verb]++;
    if (burst.first.length < MAX_EVENTS_PER_TURN) burst.first.push([verb, obj]);
  };
  informer.on('add', (obj) => changed('added', obj));
  informer.on('delete', (obj) => changed('deleted', obj));
  state.setResourceCounts({ ...counts });
}
// #endregion

// #region caches
/**
 * An informer over the services of `namespace`, unstarted: `waitForCaches` starts it, counts it
 * synced once a LIST succeeded and its watch opened, and starts it again whenever it fails.
 */
export function serviceInformer(
  client: ClientNode,
  kc: k8s.KubeConfig,
  namespace: string,
): k8s.Informer<k8s.V1Service> & k8s.ObjectCache<k8s.V1Service> {
  const core = kc.makeApiClient(client.CoreV1Api);
  return client.makeInformer(kc, `/api/v1/namespaces/${namespace}/services`, () => core.listNamespacedService({ namespace }));
}

/**
 * Holds readiness until the services cache has synced. Pass the informer itself: the promise of
 * `informer.start()` resolves after a failed LIST too, so it is no sign of a synced cache.
 */
export function waitForServices(
  state: IntrospectionState,
  services: k8s.Informer<k8s.V1Service>,
  restartBackoffMs: number,
  watchIdleMs: number,
): { close(): Promise<void> } {
  const gate = waitForCaches(state, { services }, { restartBackoffMs, watchIdleMs });
  return {
    async close() {
      await gate.close();
      await services.stop();
    },
  };
}
// #endregion

// #region lease
/**
 * Leader election on the coordination.k8s.io/v1 Lease `name` of `namespace`, with client-go's
 * durations (15 s lease, 10 s renew deadline, 2 s retry by default): the elector reports
 * leadership to the metrics, publishes an event per change and the `leader_election` variable, and
 * adds a liveness check that fails when this replica believes it leads but could not renew.
 */
export function electLeader(
  client: ClientNode,
  kc: k8s.KubeConfig,
  state: IntrospectionState,
  metrics: ControllerMetrics,
  lease: { namespace: string; name: string; identity: string } & Partial<LeaseElectorOptions>,
): LeaseElector {
  return createLeaseElector(state, kc.makeApiClient(client.CoordinationV1Api), { metrics, ...lease });
}
// #endregion

// #region leader-work
/**
 * Work only the leader does, tied to its term: `onStartedLeading` gets the term's AbortSignal,
 * which aborts the moment leadership ends (renew deadline passed, another holder in the Lease,
 * renewals failing, `close()`), as controller-runtime cancels a leader-only runnable's context.
 * `step` runs every `everyMs` while the term lasts; check the signal again before any part of a
 * step that must not run twice (reading `signal.aborted` checks the renew deadline).
 */
export function leaderWork(everyMs: number, step: (signal: AbortSignal) => Promise<void>): (signal: AbortSignal) => void {
  return (signal) => {
    const timer = setInterval(() => {
      if (!signal.aborted) void step(signal).catch((err: unknown) => log({ msg: 'leader work stopped', error: String(err) }));
    }, everyMs);
    signal.addEventListener('abort', () => clearInterval(timer), { once: true });
  };
}

// Or, from any of the host's timers: runWhileLeading settles as the work does, and rejects if the
// term ended before the work did (so a fulfilled promise means it finished within one term).
export async function deployIfLeading(elector: LeaseElector, deploy: (signal: AbortSignal) => Promise<void>): Promise<boolean> {
  if (!elector.isLeader()) return false;
  await elector.runWhileLeading(async (signal) => {
    signal.throwIfAborted();
    await deploy(signal);
  });
  return true;
}
// #endregion

// #region fleet
/**
 * The fleet view beside the introspection router: `GET /debug/fleet` lists the pods of this
 * Deployment (`selector`, its `spec.selector`) and reads each replica's probes and variables with
 * this pod's own ServiceAccount token (examples/kubernetes/fleet-rbac.yaml), then names what is
 * wrong: no leader or two, holders that disagree, configuration skew, replicas not ready or
 * unreachable, a failed or missing cycle, stale caches, certificates about to expire.
 */
export function fleetView(client: ClientNode, kc: k8s.KubeConfig, namespace: string, selector: string, port: number): FleetView {
  const core = kc.makeApiClient(client.CoreV1Api);
  return createFleetView(core, {
    namespace,
    selector,
    port,
    // In a pod the default, /var/run/secrets/kubernetes.io/serviceaccount/token, reread as the kubelet rotates it.
    ...(process.env.FLEET_TOKEN_FILE ? { tokenFile: process.env.FLEET_TOKEN_FILE } : {}),
  });
}

/**
 * Everything but the probes (and the console's page) asks the API server: who is this token
 * (TokenReview), and may it GET this path (SubjectAccessReview, the `nonResourceURLs` of RBAC).
 */
export function kubeAuth(client: ClientNode, kc: k8s.KubeConfig, registry: Registry): express.RequestHandler & { close(): Promise<void> } {
  const authn = kc.makeApiClient(client.AuthenticationV1Api);
  const authz = kc.makeApiClient(client.AuthorizationV1Api);
  return createKubeAuth(
    {
      createTokenReview: (p) => authn.createTokenReview(p),
      createSubjectAccessReview: (p) => authz.createSubjectAccessReview(p),
    },
    createKubeAuthMetrics(registry), // ctl_auth_requests_total{outcome}
  );
}
// #endregion

// #region main
async function main(): Promise<void> {
  const client: ClientNode = await import('@kubernetes/client-node');
  // $KUBECONFIG or ~/.kube/config as kubectl reads them; in a pod, its service account.
  const kc = new client.KubeConfig();
  kc.loadFromDefault();
  const namespace = process.env.POD_NAMESPACE || 'default';
  const identity = process.env.POD_NAME || os.hostname();

  // Readiness waits for the configuration (the config-loaded gate) and the caches.
  const state = createIntrospectionState();
  const registry = new Registry();
  const metrics = createControllerMetrics(registry, state);

  // A real controller reads its configuration from a ConfigMap or a file; its version is what the
  // fleet view compares across replicas.
  state.setConfig(
    { templates: {}, watched_resources: [{ group: '', version: 'v1', resource: 'services' }] },
    process.env.CONFIG_VERSION || '1',
  );

  const services = serviceInformer(client, kc, namespace);
  countResources(state, {}, 'services', services);
  const caches = waitForServices(state, services, numberFromEnv('RESTART_BACKOFF_MS', 1000), numberFromEnv('WATCH_IDLE_MS', 300_000, 100));
  const elector = electLeader(client, kc, state, metrics, {
    namespace,
    name: 'wiring-example',
    identity,
    leaseDurationMs: numberFromEnv('LEASE_DURATION_MS', 15_000),
    renewDeadlineMs: numberFromEnv('RENEW_DEADLINE_MS', 10_000),
    retryPeriodMs: numberFromEnv('RETRY_PERIOD_MS', 2000),
  });

  const port = numberFromEnv('PORT', 8080, 0);
  const introspection = createIntrospectionRouter(state);
  const guard = process.env.KUBE_AUTH === '1' ? kubeAuth(client, kc, registry) : undefined;
  const fleet = process.env.FLEET_SELECTOR ? fleetView(client, kc, namespace, process.env.FLEET_SELECTOR, port) : undefined;
  const app = express();
  app.disable('x-powered-by');
  if (guard) app.use(guard);
  app.use(introspection);
  if (fleet) app.use(fleet);
  app.use(createMetricsRouter(registry));
  const server = app.listen(port, process.env.BIND_ADDRESS || '0.0.0.0', () => {
    log({ msg: 'listening', port: (server.address() as AddressInfo).port, namespace, identity });
  });

  process.once('SIGTERM', () => {
    // Hand the Lease over first, so a follower leads at its next retry rather than after a whole
    // lease duration; then fail readiness, let requests finish and close.
    void elector
      .close()
      .then(() =>
        drain(state, {
          delayMs: numberFromEnv('DRAIN_DELAY_MS', 5000, 0),
          close: [caches, introspection, ...(fleet ? [fleet] : []), ...(guard ? [guard] : [])],
          servers: [server],
        }),
      )
      .then(() => process.exit(0));
  });
}
// #endregion

if (require.main === module) {
  main().catch((err: unknown) => {
    log({ msg: 'failed to start', error: String(err) });
    process.exit(1);
  });
}
