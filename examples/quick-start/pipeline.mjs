// The Quick start's reconcile loop written with the reconciliation pipeline, and the other things a
// controller pushes: the code of docs/getting-started.md. Run it as the Quick start
// (`node pipeline.mjs`); `npm run typecheck` checks it.
import express from 'express';
import { Registry } from 'prom-client';
import {
  createIntrospectionState,
  createIntrospectionRouter,
  createControllerMetrics,
  createMetricsRouter,
  createPipeline,
} from 'controller-introspection';

// #region state
const state = createIntrospectionState({
  eventCapacity: 1000, // events kept; the most ?limit= can read
  redactKeys: ['password', /token$/i], // served as "[REDACTED]" in config and custom variables
});
// #endregion
const registry = new Registry();
const metrics = createControllerMetrics(registry, state, { prefix: 'ctl_' });
const debugApp = express();
debugApp.use(createIntrospectionRouter(state));
debugApp.listen(Number(process.env.DEBUG_PORT ?? 8080));
const metricsApp = express();
metricsApp.use(createMetricsRouter(registry));
metricsApp.listen(Number(process.env.METRICS_PORT ?? 9090));

const templates = { 'haproxy.cfg': 'backend web\n{{servers}}\n' };
const pods = ['lb-0', 'lb-1'];
/**
 * Stands for the load balancer's API: pushes a configuration to one pod.
 * @param {string} pod
 * @param {string} text
 */
async function pushTo(pod, text) {
  if (text === '') throw new Error(`${pod}: empty configuration`);
}

// #region push
// The configuration, as loaded (opens the built-in readiness gate "config-loaded").
state.setConfig({ templates, watched_resources: ['ingresses', 'services'], backend: { password: 's3cret' } }, '42');
// Counts by type: /debug/vars/resources and the ctl_resource_count gauge.
state.setResourceCounts({ ingresses: 3, services: 5 });
// Files the configuration refers to: names, paths and sizes are served, never the contents.
state.setAuxFiles({ ssl_certificates: [{ name: 'web.pem', path: '/etc/haproxy/certs/web.pem', content: '-----BEGIN…' }] });
// Credentials: only which ones are set, and which of their fields are empty, is served.
state.setCredentials({ dataplane: { username: 'admin', password: 's3cret' } }, '7');
// A variable of your own, read at each request (like Go's expvar.Publish).
state.publishVar('queue', () => ({ depth: 0, oldest_seconds: null }));
// #endregion

// #region pipeline
const pipeline = createPipeline(state, { metrics });

/**
 * @param {string} trigger what started the cycle: resource-change, config-change, resync…
 * @param {string} reason why, in a sentence
 */
async function reconcile(trigger, reason) {
  // One cycle, described once: the pipeline records the metrics, the events (one correlation id
  // per cycle), the rendered configuration and the variables pipeline, validated and errors.
  await pipeline.run({
    trigger,
    reason,
    render: () => templates['haproxy.cfg'].replace('{{servers}}', '  server web-1 10.0.0.7:80'),
    validate: (text) => text.includes('backend'), // false or a throw: config.validation_failed
    endpoints: pods, // every endpoint is tried, even after one fails
    deploy: (pod, text) => pushTo(pod, text), // a throw fails that endpoint only
  });
}
// #endregion

// #region events
// Events of your own: a type, a summary, and optionally a correlation id and small details.
state.publishEvent('informer.resynced', 'services resynced', { details: { services: 5 } });
// #endregion

await reconcile('startup', 'first sync');
setInterval(() => {
  // A failed cycle is recorded (events, errors variable, metrics) and rethrown to you.
  reconcile('resync', 'periodic resync').catch((err) => console.error('reconciliation failed:', err));
}, 10_000);
