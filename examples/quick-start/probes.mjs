// The Quick start with probes that mean something and a graceful drain: the code of
// docs/probes.md. Run it as the Quick start (`node probes.mjs`); `npm run typecheck` checks it.
import express from 'express';
import { Registry } from 'prom-client';
import {
  createIntrospectionState,
  createIntrospectionRouter,
  createControllerMetrics,
  createMetricsRouter,
  watchProgress,
  waitForCaches,
  drain,
} from 'controller-introspection';

const state = createIntrospectionState();
const registry = new Registry();
const metrics = createControllerMetrics(registry, state, { prefix: 'ctl_', healthMetrics: true });
const introspection = createIntrospectionRouter(state);
const debugApp = express();
debugApp.use(introspection);
const debugServer = debugApp.listen(Number(process.env.DEBUG_PORT ?? 8080));
const metricsApp = express();
metricsApp.use(createMetricsRouter(registry));
const metricsServer = metricsApp.listen(Number(process.env.METRICS_PORT ?? 9090));

/** Stands for the controller's first LIST of its templates: resolves once they are loaded. */
const templatesLoaded = new Promise((resolve) => setTimeout(resolve, 1000));
let secretsSynced = false;
setTimeout(() => (secretsSynced = true), 1500);

// #region liveness
// Liveness fails when no reconciliation cycle completed for 60 s, after 2 minutes of start-up
// grace. metrics.timeReconciliation() records every completed cycle (failed ones too) for it.
watchProgress(state, { timeoutMs: 60_000, startupGraceMs: 120_000 });
// #endregion

// #region readiness
// Readiness holds until every cache has synced: a promise that resolves, or a function polled
// until it returns true (client-node informers: pass the informer itself, see docs/kubernetes.md).
waitForCaches(state, { templates: templatesLoaded, secrets: () => secretsSynced });

// A gate of your own: readiness fails, with this reason, until the gate opens.
const election = state.addReadinessGate('leader-elected-or-standby', 'no election decided yet');
setTimeout(() => election.open(), 500);
// #endregion

// #region check
// A health check: true (or nothing) is healthy, false or a throw is not, { ok, detail } says why.
// This one counts for readiness only: a slow dependency must not get the pod restarted.
let lastDeployError = '';
state.addHealthCheck('load-balancer', () => ({ ok: lastDeployError === '', detail: lastDeployError || 'reachable' }), {
  livez: false,
});
// #endregion

state.setConfig({ templates: { 'haproxy.cfg': 'backend web\n' }, watched_resources: ['services'] }, '1');

async function reconcile() {
  await metrics.timeReconciliation(async () => {
    state.setResourceCounts({ services: 2 });
    state.setRendered('backend web\n  server web-1 10.0.0.7:80\n');
    lastDeployError = '';
  });
}
await reconcile();
// #region idle
// An idle controller is not a stuck one: a loop with nothing to do records a heartbeat.
const loop = setInterval(() => void reconcile(), 10_000);
const heartbeat = setInterval(() => state.recordProgress(), 30_000);
// #endregion

// #region shutdown
// SIGTERM: readiness fails at once while everything keeps answering for 5 s (endpoints and load
// balancers notice), then profiles stop, event watches end, the servers close, and nothing of
// ours keeps the process alive.
process.once('SIGTERM', () => {
  clearInterval(loop);
  clearInterval(heartbeat);
  void drain(state, { delayMs: 5000, close: [introspection], servers: [debugServer, metricsServer] });
});
// #endregion
