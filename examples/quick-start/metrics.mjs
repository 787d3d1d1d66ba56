// The metrics options of docs/metrics.md. Run it as the Quick start (`node metrics.mjs`);
// `npm run typecheck` checks it.
import express from 'express';
import { Registry } from 'prom-client';
import { createIntrospectionState, createControllerMetrics, createMetricsRouter } from 'controller-introspection';

const state = createIntrospectionState();

// #region options
const registry = new Registry();
// The state: resource counts, events and watches are read from it at scrape time.
const metrics = createControllerMetrics(registry, state, {
  prefix: 'lbctl_', // your product's name; default ctl_
  buckets: { deployment: [0.1, 0.5, 1, 2.5, 5, 10, 30] }, // seconds; reconciliation keeps the default
  healthMetrics: true, // lbctl_readiness_gate_open{gate}, lbctl_progress_last_timestamp_seconds{activity}
  processMetrics: true, // prom-client's Node.js process metrics, with the same prefix
});
// #endregion

// #region record
// As work happens (createPipeline records all three for you):
await metrics.timeReconciliation(async () => {
  const started = performance.now();
  const ok = await deployEverywhere();
  metrics.recordDeployment((performance.now() - started) / 1000, ok);
  metrics.recordValidation(true);
});
// Leadership, from your leader election (see docs/kubernetes.md for a Lease):
metrics.setLeader(true);
// #endregion

// #region router
const metricsApp = express();
metricsApp.use(
  createMetricsRouter(registry, {
    scrapeTimeoutMs: 8000, // a collect() that never settles answers 503 after this
    onError: (err) => console.error('metrics', err), // a family left out of a scrape, or a failed scrape
  }),
);
metricsApp.listen(Number(process.env.METRICS_PORT ?? 9090));
// #endregion

/** Stands for deploying the rendered configuration to every load balancer. */
async function deployEverywhere() {
  return true;
}
