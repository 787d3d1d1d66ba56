// The access restrictions of docs/security.md, on the Quick start's two ports. Run it with
// DEBUG_TOKEN set (`DEBUG_TOKEN=$(openssl rand -hex 32) node security.mjs`); `npm run typecheck`
// checks it.
import express from 'express';
import { Registry } from 'prom-client';
import {
  createIntrospectionState,
  createIntrospectionRouter,
  createControllerMetrics,
  createMetricsRouter,
  createAccessGuard,
} from 'controller-introspection';

const state = createIntrospectionState();
const registry = new Registry();
createControllerMetrics(registry, { prefix: 'ctl_', state });

// #region debug-off
// Debug port 0: only /healthz, /livez and /readyz, which the kubelet needs.
const healthOnly = createIntrospectionRouter(state, { debug: false });
// #endregion

// #region guard
// Fail at start-up when the token is missing: an undefined token means "no token check".
const token = process.env.DEBUG_TOKEN;
if (!token) throw new Error('DEBUG_TOKEN is not set');

const introspection = createIntrospectionRouter(state, {
  access: {
    allow: ['127.0.0.1', '::1'], // kubectl port-forward arrives on the pod's loopback
    token, // and every request carries Authorization: Bearer <token>
  },
  // Names /debug answers to besides IP literals, localhost, dotless names, *.svc and *.internal.
  allowedHosts: ['*.cluster.local', 'debug.example.com'],
});
// #endregion

// #region metrics-guard
// /metrics has no authentication by default (the Prometheus convention). To ask for a token:
const metricsApp = express();
const metricsGuard = createAccessGuard({ token });
if (metricsGuard) metricsApp.use(metricsGuard);
metricsApp.use(createMetricsRouter(registry));
// #endregion

const debugApp = express();
debugApp.use(process.env.DEBUG_ENDPOINTS === 'off' ? healthOnly : introspection);
debugApp.listen(Number(process.env.DEBUG_PORT ?? 8080));
metricsApp.listen(Number(process.env.METRICS_PORT ?? 9090));
state.setConfig({ templates: {}, watched_resources: [] }, '1');
