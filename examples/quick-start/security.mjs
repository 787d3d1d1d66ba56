// The access restrictions of docs/security.md, on the Quick start's two ports. Run it with
// DEBUG_TOKEN set (`DEBUG_TOKEN=$(openssl rand -hex 32) node security.mjs`); `npm run typecheck`
// checks it.
import https from 'node:https';
import express from 'express';
import { Registry } from 'prom-client';
import {
  createIntrospectionState,
  createIntrospectionRouter,
  createControllerMetrics,
  createMetricsRouter,
  createAccessGuard,
  watchServingCertificate,
} from 'controller-introspection';

const state = createIntrospectionState();
const registry = new Registry();
createControllerMetrics(registry, state, { prefix: 'ctl_' });

// #region debug-off
// Debug port 0: only /healthz, /livez and /readyz, which the kubelet needs.
const healthOnly = createIntrospectionRouter(state, { debug: false });
// #endregion

// #region guard
// Fail at start-up when the token is missing: an undefined token means "no token check".
const token = process.env.DEBUG_TOKEN;
if (!token) throw new Error('DEBUG_TOKEN is not set');

// A guard is middleware, mounted in front of the router; it lets /healthz, /livez and /readyz
// through for the kubelet, and the console's page without the token.
const debugGuard = createAccessGuard({
  allow: ['127.0.0.1', '::1'], // kubectl port-forward arrives on the pod's loopback
  token, // and every request carries Authorization: Bearer <token>
});
const introspection = createIntrospectionRouter(state, {
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
if (process.env.DEBUG_ENDPOINTS === 'off') debugApp.use(healthOnly);
else if (debugGuard) debugApp.use(debugGuard, introspection);
debugApp.listen(Number(process.env.DEBUG_PORT ?? 8080));

// #region tls
/**
 * Serves `app` over TLS with the pair of a Secret volume that cert-manager keeps current (`tls.crt`,
 * `tls.key` in `dir`): both files are read every 10 s and a new pair serves the next handshake;
 * connections already open keep theirs.
 *
 * @param {express.Express} app
 * @param {string} dir
 * @param {number} port
 */
function listenWithTls(app, dir, port) {
  const server = https.createServer(app);
  // The state gets the events tls.reloaded and tls.reload_failed (undefined: no events).
  const certificate = watchServingCertificate(server, state, {
    certFile: `${dir}/tls.crt`,
    keyFile: `${dir}/tls.key`,
  });
  server.once('close', () => void certificate.close());
  return server.listen(port);
}
// #endregion

const metricsPort = Number(process.env.METRICS_PORT ?? 9090);
if (process.env.TLS_DIR) listenWithTls(metricsApp, process.env.TLS_DIR, metricsPort);
else metricsApp.listen(metricsPort);
state.setConfig({ templates: {}, watched_resources: [] }, '1');
