#!/usr/bin/env node
'use strict';
// A runnable controller host that mounts controller-introspection the way a real controller would:
// the introspection server on `controller.debugPort`, the metrics endpoint on
// `controller.config.controller.metrics_port`, state pushed in from a simulated reconcile loop.
//
//   node examples/controller/main.js [--config examples/controller/config.json]
//
// Environment overrides (handy for tests and for running several replicas on one machine):
//   BIND_ADDRESS (default 0.0.0.0), REPLICA_ID (default hostname-pid), LEASE_FILE, and DEBUG_TOKEN
//   (a bearer token for /debug/*; the browser console at /debug/ asks for it once).
//
// Signals: SIGTERM/SIGINT drain (readiness fails at once, everything keeps serving for
// controller.probes.drainDelayMs, then it all closes and the process exits on its own); SIGUSR2
// freezes the reconcile loop, to watch the progress watchdog fail /livez.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const express = require('express');
const { Registry } = require('prom-client');
// The package is imported by its published name, as users do (Node resolves it to this checkout).
const {
  createIntrospectionState,
  createIntrospectionRouter,
  createMetricsRouter,
  createControllerMetrics,
  watchProgress,
  waitForCaches,
  drain,
  createPipeline,
} = require('controller-introspection');
const { startController } = require('./simulation');
const lease = require('./lease');

function log(fields) {
  process.stdout.write(`${JSON.stringify({ time: new Date().toISOString(), replica: REPLICA_ID, ...fields })}\n`);
}

const REPLICA_ID = process.env.REPLICA_ID || `${os.hostname()}-${process.pid}`;

function pathPrefixOf(value) {
  if (value === undefined || value === '') return '';
  if (typeof value !== 'string' || !/^(\/[A-Za-z0-9._~-]+)+$/.test(value)) {
    throw new Error(`controller.debugPathPrefix must be a path such as "/ops" (no trailing slash), got ${JSON.stringify(value)}`);
  }
  return value;
}

function loadConfig() {
  const flag = process.argv.indexOf('--config');
  const file = flag >= 0 ? process.argv[flag + 1] : path.join(__dirname, 'config.json');
  const raw = JSON.parse(fs.readFileSync(file, 'utf8'));
  const controller = raw.controller || {};
  const inner = (controller.config && controller.config.controller) || {};
  const portOf = (value, fallback, key) => {
    const port = value === undefined ? fallback : value;
    if (!Number.isInteger(port) || port < 0 || port > 65535)
      throw new Error(`${key} must be a port number from 0 to 65535, got ${JSON.stringify(value)}`);
    return port;
  };
  const sim = controller.simulation || {};
  const probes = controller.probes || {};
  const profiling = controller.profiling || {};
  const le = controller.leaderElection || {};
  const config = {
    debugPort: portOf(controller.debugPort, 8080, 'controller.debugPort'),
    // Where health checks answer when debugPort is 0 (the spec: "always on for health checks").
    healthPort: portOf(controller.healthPort, 8080, 'controller.healthPort'),
    // Mount the introspection router under a prefix (e.g. "/ops"), as a host with other routes does.
    debugPathPrefix: pathPrefixOf(controller.debugPathPrefix),
    // A bearer token for /debug/* (the console asks for it once). From the environment, never
    // from the config file: DEBUG_TOKEN=$(openssl rand -hex 32).
    debugToken: process.env.DEBUG_TOKEN || undefined,
    metricsPort: portOf(inner.metrics_port, 9090, 'controller.config.controller.metrics_port'),
    probes: {
      // Liveness fails when no reconciliation cycle (or idle heartbeat) happened for this long.
      progressTimeoutMs: probes.progressTimeoutMs === undefined ? 60000 : probes.progressTimeoutMs,
      startupGraceMs: probes.startupGraceMs === undefined ? 60000 : probes.startupGraceMs,
      // On SIGTERM: how long readiness fails while everything keeps serving.
      drainDelayMs: probes.drainDelayMs === undefined ? 5000 : probes.drainDelayMs,
    },
    bindAddress: process.env.BIND_ADDRESS || '0.0.0.0',
    leaderElection: {
      enabled: le.enabled !== false,
      leaseFile: process.env.LEASE_FILE || le.leaseFile || path.join(os.tmpdir(), 'controller-introspection-example.lease'),
      leaseDurationMs: le.leaseDurationMs || 3000,
      renewIntervalMs: le.renewIntervalMs || 1000,
    },
    profiling: {
      heapSamplingIntervalBytes: profiling.heapSamplingIntervalBytes,
      maxProfileSeconds: profiling.maxProfileSeconds,
    },
    simulation: {
      reconcileIntervalMs: sim.reconcileIntervalMs || 1000,
      lbPods: sim.lbPods || 2,
      cpuBurnMs: sim.cpuBurnMs || 0,
      extraWatchedResources: sim.extraWatchedResources || 0,
      renderHistory: sim.renderHistory === undefined ? 10 : sim.renderHistory,
      // How often validation and a deployment to one pod fail, so every variable has real content.
      validationFailureRate: sim.validationFailureRate === undefined ? 0.05 : sim.validationFailureRate,
      deployFailureRate: sim.deployFailureRate === undefined ? 0.03 : sim.deployFailureRate,
      // How long the simulated informers take to list before their caches have synced.
      cacheSyncMs: sim.cacheSyncMs === undefined ? 1000 : sim.cacheSyncMs,
      // Idle: the cluster never changes, so the loop only ticks its heartbeat.
      idle: sim.idle === true,
    },
  };
  // The port that answers probes (debugPort, or healthPort when debugPort is 0) and the metrics port
  // are two servers: one port cannot be both.
  const probePort = config.debugPort !== 0 ? config.debugPort : config.healthPort;
  if (config.metricsPort !== 0 && probePort === config.metricsPort) {
    const which = config.debugPort !== 0 ? 'controller.debugPort' : 'controller.healthPort (used because controller.debugPort is 0)';
    throw new Error(`${which} and controller.config.controller.metrics_port are both ${probePort}; give the metrics endpoint its own port`);
  }
  return config;
}

function listen(app, port, host, surface) {
  return new Promise((resolve, reject) => {
    const server = app.listen(port, host);
    server.once('error', reject);
    server.once('listening', () => {
      log({ msg: 'listening', surface, address: host, port: server.address().port });
      resolve(server);
    });
  });
}

async function main() {
  const config = loadConfig();
  const state = createIntrospectionState(); // not ready until the first setConfig (gate config-loaded)
  const registry = new Registry();
  const metrics = createControllerMetrics(registry, { prefix: 'ctl_', state, healthMetrics: true });
  // Liveness: a reconcile loop that stopped is restarted by the kubelet. Completed cycles
  // (timeReconciliation) and the idle loop's heartbeat count as progress.
  watchProgress(state, { timeoutMs: config.probes.progressTimeoutMs, startupGraceMs: config.probes.startupGraceMs });

  // Leader election: replicas start as followers; the lease decides.
  let leader = false;
  function electionTick() {
    const holds = config.leaderElection.enabled
      ? lease.tryAcquire(config.leaderElection.leaseFile, REPLICA_ID, config.leaderElection.leaseDurationMs)
      : true;
    if (holds !== leader) {
      leader = holds;
      metrics.setLeader(leader);
      state.publishEvent(leader ? 'leader.elected' : 'leader.lost', `${REPLICA_ID} ${leader ? 'became' : 'is no longer'} leader`);
      log({ msg: leader ? 'became leader' : 'lost leadership' });
    }
  }
  electionTick();
  const electionTimer = setInterval(electionTick, config.leaderElection.renewIntervalMs);
  state.publishVar('leader_election', () => ({
    identity: REPLICA_ID,
    is_leader: leader,
    holder: config.leaderElection.enabled ? lease.currentHolder(config.leaderElection.leaseFile) : REPLICA_ID,
  }));

  // Every reconciliation cycle goes through the pipeline, which records it once: metrics, events
  // with a correlation id, and the pipeline, validated and errors variables.
  const pipeline = createPipeline({ state, metrics });
  const controller = startController({ state, pipeline, simulation: config.simulation, isLeader: () => leader, log });
  // Readiness: held until the simulated informers' caches have synced.
  waitForCaches(state, controller.caches);

  // Debug port 0 removes the debug endpoints; health checks stay on, on the default port.
  const debugEnabled = config.debugPort !== 0;
  const pprof = {};
  if (config.profiling.heapSamplingIntervalBytes !== undefined)
    pprof.heapSamplingIntervalBytes = config.profiling.heapSamplingIntervalBytes;
  if (config.profiling.maxProfileSeconds !== undefined) pprof.maxProfileSeconds = config.profiling.maxProfileSeconds;
  const introspection = createIntrospectionRouter(state, {
    debug: debugEnabled,
    pprof,
    ...(config.debugToken ? { access: { token: config.debugToken } } : {}),
  });
  const debugApp = express();
  debugApp.disable('x-powered-by');
  if (config.debugPathPrefix) debugApp.use(config.debugPathPrefix, introspection);
  else debugApp.use(introspection);
  const servers = [
    await listen(debugApp, debugEnabled ? config.debugPort : config.healthPort, config.bindAddress, debugEnabled ? 'debug' : 'health'),
  ];
  if (debugEnabled) {
    const host = config.bindAddress === '0.0.0.0' ? 'localhost' : config.bindAddress;
    log({ msg: 'debug console', url: `http://${host}:${servers[0].address().port}${config.debugPathPrefix}/debug/` });
  }

  if (config.metricsPort !== 0) {
    const metricsApp = express();
    metricsApp.disable('x-powered-by');
    metricsApp.use(createMetricsRouter(registry));
    servers.push(await listen(metricsApp, config.metricsPort, config.bindAddress, 'metrics'));
  }

  let shuttingDown = false;
  async function shutdown(signal) {
    if (shuttingDown) return;
    shuttingDown = true;
    log({ msg: 'draining', signal, delayMs: config.probes.drainDelayMs });
    // Readiness fails now; the controller keeps reconciling and every endpoint keeps answering
    // until the delay is over, then profiles stop, servers close, and the process exits by itself.
    await drain(state, { delayMs: config.probes.drainDelayMs, reason: `${signal}: draining`, close: [introspection], servers });
    clearInterval(electionTimer);
    controller.stop();
    if (config.leaderElection.enabled && leader) lease.release(config.leaderElection.leaseFile, REPLICA_ID);
    log({ msg: 'stopped' });
  }
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGUSR2', () => {
    controller.freeze();
    log({ msg: 'reconcile loop frozen (SIGUSR2)' });
  });
}

main().catch((err) => {
  log({ msg: 'failed to start', error: err.message });
  process.exit(1);
});
