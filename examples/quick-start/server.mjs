// #region mount
import express from 'express';
import { Registry } from 'prom-client';
import {
  createIntrospectionState,
  createIntrospectionRouter,
  createControllerMetrics,
  createMetricsRouter,
  drain,
} from 'controller-introspection';

const state = createIntrospectionState();
const registry = new Registry();
const metrics = createControllerMetrics(registry, state, { prefix: 'ctl_' });

// Debug port: /healthz /livez /readyz, /debug/vars, /debug/pprof, and the console at /debug/.
const introspection = createIntrospectionRouter(state);
const debugApp = express();
debugApp.use(introspection);
const debugServer = debugApp.listen(Number(process.env.DEBUG_PORT ?? 8080));

// Metrics port: /metrics for Prometheus.
const metricsApp = express();
metricsApp.use(createMetricsRouter(registry));
const metricsServer = metricsApp.listen(Number(process.env.METRICS_PORT ?? 9090));
// #endregion

// #region reconcile
// Readiness holds until the first configuration arrives (the built-in gate "config-loaded").
const templates = { 'haproxy.cfg': 'backend web\n  server {{name}} {{address}}\n' };
state.setConfig({ templates, watched_resources: ['ingresses', 'services'] }, '1');

// One reconciliation: count what you watch, render, validate, and say what happened.
async function reconcile() {
  state.publishEvent('reconciliation.triggered');
  await metrics.timeReconciliation(async () => {
    state.setResourceCounts({ ingresses: 1, services: 2 });
    const rendered = templates['haproxy.cfg'].replace('{{name}}', 'web-1').replace('{{address}}', '10.0.0.7:80');
    state.setRendered(rendered);
    metrics.recordValidation(!rendered.includes('{{'));
  });
  state.publishEvent('reconciliation.completed');
}
await reconcile();
const loop = setInterval(() => void reconcile(), 10_000);
// #endregion

// #region shutdown
// SIGTERM: readiness fails at once, everything keeps answering for 5 s, then it all closes.
process.once('SIGTERM', () => {
  clearInterval(loop);
  void drain(state, { close: [introspection], servers: [debugServer, metricsServer] });
});
// #endregion
