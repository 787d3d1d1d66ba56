#!/usr/bin/env node
// A runnable controller host that mounts controller-introspection the way a real controller would:
// the introspection server on `controller.debugPort`, the metrics endpoint on
// `controller.config.controller.metrics_port`, state pushed in from a simulated reconcile loop.
// Written in TypeScript against the package's published types; `npm run build` compiles it to
// examples/dist/controller/ after the library:
//
//   node examples/dist/controller/main.js [--config examples/controller/config.json]
//
// Environment overrides (handy for tests and for running several replicas on one machine):
//   BIND_ADDRESS (default 0.0.0.0), REPLICA_ID (default hostname-pid), LEASE_FILE, and DEBUG_TOKEN
//   (a bearer token for /debug/*; the browser console at /debug/ asks for it once).
//
// Signals: SIGTERM/SIGINT drain (readiness fails at once, everything keeps serving for
// controller.probes.drainDelayMs, then it all closes and the process exits on its own); SIGUSR2
// freezes the reconcile loop, to watch the progress watchdog fail /livez.

import fs from 'node:fs';
import type { Server } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import express, { type Express } from 'express';
import { Registry } from 'prom-client';
// The package is imported by its published name, as users do (Node resolves it to this checkout,
// and tsc type-checks this file against its published declarations, dist/index.d.ts).
import {
  createIntrospectionState,
  createIntrospectionRouter,
  createAccessGuard,
  createMetricsRouter,
  createControllerMetrics,
  watchProgress,
  waitForCaches,
  drain,
  createPipeline,
  createWorkQueue,
  type ControllerMetrics,
  type IntrospectionRouter,
  type IntrospectionRouterOptions,
  type IntrospectionState,
  type PprofOptions,
  type ReconciliationPipeline,
} from 'controller-introspection';
import { errorMessage, startController, type LogFields, type SimulationSettings } from './simulation';
import * as lease from './lease';

/** The example's settings: its config file with defaults filled in, and the environment overrides. */
interface ExampleConfig {
  debugPort: number;
  healthPort: number;
  debugPathPrefix: string;
  debugToken: string | undefined;
  metricsPort: number;
  probes: { progressTimeoutMs: number; startupGraceMs: number; drainDelayMs: number };
  bindAddress: string;
  leaderElection: { enabled: boolean; leaseFile: string; leaseDurationMs: number; renewIntervalMs: number };
  profiling: { heapSamplingIntervalBytes: number | false | undefined; maxProfileSeconds: number | undefined };
  simulation: SimulationSettings;
}

/** A JSON object of the config file (any other JSON value stands for an empty section). */
type Section = Readonly<Record<string, unknown>>;

/** This controller's version, for `ctl_build_info` (a real controller reads its own package.json or a build argument). */
const EXAMPLE_VERSION = '1.0.0-example';

/** The sources live next to config.json; the compiled files run from examples/dist/controller/. */
const SOURCE_DIR = path.resolve(__dirname, '..', '..', 'controller');

const REPLICA_ID = process.env.REPLICA_ID || `${os.hostname()}-${process.pid}`;

function log(fields: LogFields): void {
  process.stdout.write(`${JSON.stringify({ time: new Date().toISOString(), replica: REPLICA_ID, ...fields })}\n`);
}

function isSection(value: unknown): value is Section {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function sectionOf(parent: Section, key: string): Section {
  const value = parent[key];
  return isSection(value) ? value : {};
}

/** A number setting, or undefined when it is not set. */
function numberOf(value: unknown, key: string): number | undefined {
  if (value === undefined || typeof value === 'number') return value;
  throw new Error(`${key} must be a number, got ${JSON.stringify(value)}`);
}

function stringOf(value: unknown, key: string): string | undefined {
  if (value === undefined || typeof value === 'string') return value;
  throw new Error(`${key} must be a string, got ${JSON.stringify(value)}`);
}

function pathPrefixOf(value: unknown): string {
  if (value === undefined || value === '') return '';
  if (typeof value !== 'string' || !/^(\/[A-Za-z0-9._~-]+)+$/.test(value)) {
    throw new Error(`controller.debugPathPrefix must be a path such as "/ops" (no trailing slash), got ${JSON.stringify(value)}`);
  }
  return value;
}

function portOf(value: unknown, fallback: number, key: string): number {
  const port = value === undefined ? fallback : value;
  if (typeof port !== 'number' || !Number.isInteger(port) || port < 0 || port > 65535)
    throw new Error(`${key} must be a port number from 0 to 65535, got ${JSON.stringify(value)}`);
  return port;
}

function simulationOf(sim: Section): SimulationSettings {
  const at = (key: string): number | undefined => numberOf(sim[key], `controller.simulation.${key}`);
  return {
    reconcileIntervalMs: at('reconcileIntervalMs') || 1000,
    lbPods: at('lbPods') || 2,
    cpuBurnMs: at('cpuBurnMs') || 0,
    extraWatchedResources: at('extraWatchedResources') || 0,
    renderHistory: at('renderHistory') ?? 10,
    // How often validation and a deployment to one pod fail, so every variable has real content.
    validationFailureRate: at('validationFailureRate') ?? 0.05,
    deployFailureRate: at('deployFailureRate') ?? 0.03,
    // How long the simulated informers take to list before their caches have synced.
    cacheSyncMs: at('cacheSyncMs') ?? 1000,
    // Idle: the cluster never changes, so the loop only ticks its heartbeat.
    idle: sim['idle'] === true,
  };
}

function heapSamplingOf(value: unknown): number | false | undefined {
  return value === false ? false : numberOf(value, 'controller.profiling.heapSamplingIntervalBytes');
}

function loadConfig(): ExampleConfig {
  const flag = process.argv.indexOf('--config');
  const file = flag >= 0 ? process.argv[flag + 1] : path.join(SOURCE_DIR, 'config.json');
  if (file === undefined) throw new Error('--config needs a file');
  const raw: unknown = JSON.parse(fs.readFileSync(file, 'utf8'));
  const controller = sectionOf(isSection(raw) ? raw : {}, 'controller');
  const inner = sectionOf(sectionOf(controller, 'config'), 'controller');
  const probes = sectionOf(controller, 'probes');
  const profiling = sectionOf(controller, 'profiling');
  const le = sectionOf(controller, 'leaderElection');
  const config: ExampleConfig = {
    debugPort: portOf(controller['debugPort'], 8080, 'controller.debugPort'),
    // Where health checks answer when debugPort is 0 (the spec: "always on for health checks").
    healthPort: portOf(controller['healthPort'], 8080, 'controller.healthPort'),
    // Mount the introspection router under a prefix (e.g. "/ops"), as a host with other routes does.
    debugPathPrefix: pathPrefixOf(controller['debugPathPrefix']),
    // A bearer token for /debug/* (the console asks for it once). From the environment, never
    // from the config file: DEBUG_TOKEN=$(openssl rand -hex 32).
    debugToken: process.env.DEBUG_TOKEN || undefined,
    metricsPort: portOf(inner['metrics_port'], 9090, 'controller.config.controller.metrics_port'),
    probes: {
      // Liveness fails when no reconciliation cycle (or idle heartbeat) happened for this long.
      progressTimeoutMs: numberOf(probes['progressTimeoutMs'], 'controller.probes.progressTimeoutMs') ?? 60000,
      startupGraceMs: numberOf(probes['startupGraceMs'], 'controller.probes.startupGraceMs') ?? 60000,
      // On SIGTERM: how long readiness fails while everything keeps serving.
      drainDelayMs: numberOf(probes['drainDelayMs'], 'controller.probes.drainDelayMs') ?? 5000,
    },
    bindAddress: process.env.BIND_ADDRESS || '0.0.0.0',
    leaderElection: {
      enabled: le['enabled'] !== false,
      leaseFile:
        process.env.LEASE_FILE ||
        stringOf(le['leaseFile'], 'controller.leaderElection.leaseFile') ||
        path.join(os.tmpdir(), 'controller-introspection-example.lease'),
      leaseDurationMs: numberOf(le['leaseDurationMs'], 'controller.leaderElection.leaseDurationMs') || 3000,
      renewIntervalMs: numberOf(le['renewIntervalMs'], 'controller.leaderElection.renewIntervalMs') || 1000,
    },
    profiling: {
      heapSamplingIntervalBytes: heapSamplingOf(profiling['heapSamplingIntervalBytes']),
      maxProfileSeconds: numberOf(profiling['maxProfileSeconds'], 'controller.profiling.maxProfileSeconds'),
    },
    simulation: simulationOf(sectionOf(controller, 'simulation')),
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

/** The port a listening TCP server is bound to. */
function boundPort(server: Server): number {
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error(`not a TCP server: ${String(address)}`);
  return address.port;
}

function listen(app: Express, port: number, host: string, surface: string): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = app.listen(port, host);
    server.once('error', reject);
    server.once('listening', () => {
      log({ msg: 'listening', surface, address: host, port: boundPort(server) });
      resolve(server);
    });
  });
}

/** Leader election: replicas start as followers; the lease decides. Returns whether this replica leads. */
function startElection(
  config: ExampleConfig,
  state: IntrospectionState,
  metrics: ControllerMetrics,
): { isLeader: () => boolean; stop(): void } {
  const { enabled, leaseFile, leaseDurationMs, renewIntervalMs } = config.leaderElection;
  let leader = false;
  function electionTick(): void {
    const holds = enabled ? lease.tryAcquire(leaseFile, REPLICA_ID, leaseDurationMs) : true;
    if (holds !== leader) {
      leader = holds;
      metrics.setLeader(leader);
      state.publishEvent(leader ? 'leader.elected' : 'leader.lost', `${REPLICA_ID} ${leader ? 'became' : 'is no longer'} leader`);
      log({ msg: leader ? 'became leader' : 'lost leadership' });
    }
  }
  electionTick();
  const electionTimer = setInterval(electionTick, renewIntervalMs);
  state.publishVar('leader_election', () => ({
    identity: REPLICA_ID,
    is_leader: leader,
    holder: enabled ? lease.currentHolder(leaseFile) : REPLICA_ID,
  }));
  return {
    isLeader: () => leader,
    stop() {
      clearInterval(electionTimer);
      if (enabled && leader) lease.release(leaseFile, REPLICA_ID);
    },
  };
}

/** The probes below `prefix`, which a guard lets through for the kubelet (its paths are the request's own). */
function probePaths(prefix: string): string[] {
  return ['/healthz', '/livez', '/readyz'].flatMap((probe) => [`${prefix}${probe}`, `${prefix}${probe}/*`]);
}

function introspectionOptions(config: ExampleConfig): IntrospectionRouterOptions {
  // The trace endpoint is off by default (it costs the host memory and event-loop time while it
  // records); this example turns it on so that the console's trace button works.
  const pprof: PprofOptions = { trace: true };
  if (config.profiling.heapSamplingIntervalBytes !== undefined)
    pprof.heapSamplingIntervalBytes = config.profiling.heapSamplingIntervalBytes;
  if (config.profiling.maxProfileSeconds !== undefined) pprof.maxProfileSeconds = config.profiling.maxProfileSeconds;
  return {
    // Debug port 0 removes the debug endpoints; health checks stay on, on the default port.
    debug: config.debugPort !== 0,
    pprof,
  };
}

async function main(): Promise<void> {
  const config = loadConfig();
  const state: IntrospectionState = createIntrospectionState(); // not ready until the first setConfig (gate config-loaded)
  const registry = new Registry();
  const metrics: ControllerMetrics = createControllerMetrics(registry, state, {
    prefix: 'ctl_',
    healthMetrics: true,
    // controller-runtime's families (off by default), so the dashboards and alerts people have for
    // Go controllers work on this one: reconcile counts and times by result, workers, the lease and
    // the work queue's families.
    controllerRuntime: { controller: 'loadbalancer', leaseName: 'controller-introspection-example' },
    buildInfo: { version: EXAMPLE_VERSION },
    // Native histograms beside the classic buckets, for a Prometheus 3 that scrapes with
    // `scrape_native_histograms: true` (protobuf); text and OpenMetrics answers are unchanged.
    nativeHistograms: true,
  });
  // Liveness: a reconcile loop that stopped is restarted by the kubelet. Completed cycles
  // (timeReconciliation) and the idle loop's heartbeat count as progress.
  watchProgress(state, { timeoutMs: config.probes.progressTimeoutMs, startupGraceMs: config.probes.startupGraceMs });

  const election = startElection(config, state, metrics);

  // Every reconciliation cycle goes through the pipeline, which records it once: metrics (with the
  // cycle's correlation id as their exemplar), events with that id, and the pipeline, validated and
  // errors variables. Changes queue a key; the pipeline's worker takes it from the work queue, which
  // holds a key once however many changes arrive, and retries a failed cycle after a backoff.
  const pipeline: ReconciliationPipeline = createPipeline(state, { metrics });
  const queue = createWorkQueue({ metrics });
  const controller = startController({ state, pipeline, queue, simulation: config.simulation, isLeader: election.isLeader, log });
  // Readiness: held until the simulated informers' caches have synced.
  waitForCaches(state, controller.caches);

  const debugEnabled = config.debugPort !== 0;
  const introspection: IntrospectionRouter = createIntrospectionRouter(state, introspectionOptions(config));
  const debugApp = express();
  debugApp.disable('x-powered-by');
  // A guard is middleware in front of the router, where the router is mounted; it lets the probes
  // and the console's page through (docs/security.md).
  const guard = config.debugToken
    ? createAccessGuard({ token: config.debugToken, alwaysAllow: probePaths(config.debugPathPrefix) })
    : undefined;
  const mounted = guard ? [guard, introspection] : [introspection];
  if (config.debugPathPrefix) debugApp.use(config.debugPathPrefix, ...mounted);
  else debugApp.use(...mounted);
  const debugServer = await listen(
    debugApp,
    debugEnabled ? config.debugPort : config.healthPort,
    config.bindAddress,
    debugEnabled ? 'debug' : 'health',
  );
  const servers: Server[] = [debugServer];
  if (debugEnabled) {
    const host = config.bindAddress === '0.0.0.0' ? 'localhost' : config.bindAddress;
    log({ msg: 'debug console', url: `http://${host}:${boundPort(debugServer)}${config.debugPathPrefix}/debug/` });
  }

  if (config.metricsPort !== 0) {
    const metricsApp = express();
    metricsApp.disable('x-powered-by');
    metricsApp.use(createMetricsRouter(registry));
    servers.push(await listen(metricsApp, config.metricsPort, config.bindAddress, 'metrics'));
  }

  let shuttingDown = false;
  async function shutdown(signal: NodeJS.Signals): Promise<void> {
    if (shuttingDown) return;
    shuttingDown = true;
    log({ msg: 'draining', signal, delayMs: config.probes.drainDelayMs });
    // Readiness fails now; the controller keeps reconciling and every endpoint keeps answering
    // until the delay is over, then profiles stop, servers close, and the process exits by itself.
    await drain(state, { delayMs: config.probes.drainDelayMs, reason: `${signal}: draining`, close: [introspection], servers });
    controller.stop();
    election.stop();
    log({ msg: 'stopped' });
  }
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGUSR2', () => {
    controller.freeze();
    log({ msg: 'reconcile loop frozen (SIGUSR2)' });
  });
}

main().catch((err: unknown) => {
  log({ msg: 'failed to start', error: errorMessage(err) });
  process.exit(1);
});
