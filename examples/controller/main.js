#!/usr/bin/env node
'use strict';
// A runnable controller host that mounts controller-introspection the way a real controller would:
// the introspection server on `controller.debugPort`, the metrics endpoint on
// `controller.config.controller.metrics_port`, state pushed in from a simulated reconcile loop.
//
//   node examples/controller/main.js [--config examples/controller/config.json]
//
// Environment overrides (handy for tests and for running several replicas on one machine):
//   BIND_ADDRESS (default 0.0.0.0), REPLICA_ID (default hostname-pid), LEASE_FILE.

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
} = require('controller-introspection');
const { startController } = require('./simulation');
const lease = require('./lease');

function log(fields) {
  process.stdout.write(`${JSON.stringify({ time: new Date().toISOString(), replica: REPLICA_ID, ...fields })}\n`);
}

const REPLICA_ID = process.env.REPLICA_ID || `${os.hostname()}-${process.pid}`;

function loadConfig() {
  const flag = process.argv.indexOf('--config');
  const file = flag >= 0 ? process.argv[flag + 1] : path.join(__dirname, 'config.json');
  const raw = JSON.parse(fs.readFileSync(file, 'utf8'));
  const controller = raw.controller || {};
  const inner = (controller.config && controller.config.controller) || {};
  const portOf = (value, fallback, key) => {
    const port = value === undefined ? fallback : value;
    if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`${key} must be a port number from 0 to 65535, got ${JSON.stringify(value)}`);
    return port;
  };
  const sim = controller.simulation || {};
  const profiling = controller.profiling || {};
  const le = controller.leaderElection || {};
  return {
    debugPort: portOf(controller.debugPort, 8080, 'controller.debugPort'),
    // Where health checks answer when debugPort is 0 (the spec: "always on for health checks").
    healthPort: portOf(controller.healthPort, 8080, 'controller.healthPort'),
    metricsPort: portOf(inner.metrics_port, 9090, 'controller.config.controller.metrics_port'),
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
    },
  };
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
  const state = createIntrospectionState();
  const registry = new Registry();
  const metrics = createControllerMetrics(registry, { prefix: 'ctl_', state });

  // Leader election: replicas start as followers; the lease decides.
  let leader = false;
  function electionTick() {
    const holds = config.leaderElection.enabled ? lease.tryAcquire(config.leaderElection.leaseFile, REPLICA_ID, config.leaderElection.leaseDurationMs) : true;
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

  const stopController = startController({ state, metrics, simulation: config.simulation, isLeader: () => leader, log });

  // Debug port 0 removes the debug endpoints; health checks stay on, on the default port.
  const debugEnabled = config.debugPort !== 0;
  const pprof = {};
  if (config.profiling.heapSamplingIntervalBytes !== undefined) pprof.heapSamplingIntervalBytes = config.profiling.heapSamplingIntervalBytes;
  if (config.profiling.maxProfileSeconds !== undefined) pprof.maxProfileSeconds = config.profiling.maxProfileSeconds;
  const introspection = createIntrospectionRouter(state, { debug: debugEnabled, pprof });
  const debugApp = express();
  debugApp.disable('x-powered-by');
  debugApp.use(introspection);
  const servers = [await listen(debugApp, debugEnabled ? config.debugPort : config.healthPort, config.bindAddress, debugEnabled ? 'debug' : 'health')];

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
    log({ msg: 'shutting down', signal });
    clearInterval(electionTimer);
    stopController();
    if (config.leaderElection.enabled && leader) lease.release(config.leaderElection.leaseFile, REPLICA_ID);
    await introspection.close();
    await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
    log({ msg: 'stopped' });
  }
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

main().catch((err) => {
  log({ msg: 'failed to start', error: err.message });
  process.exit(1);
});
