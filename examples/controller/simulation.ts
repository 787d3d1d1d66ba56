// The simulated controller: it watches resources that change over time, renders a load-balancer
// configuration from templates, validates it and deploys it to simulated load-balancer pods,
// pushing everything it does into the introspection state and the controller metrics.

import crypto from 'node:crypto';
import type { CacheSync, ControllerConfig, IntrospectionState, ReconciliationPipeline } from 'controller-introspection';

/** The `controller.simulation` settings of the example's config file, defaults filled in. */
export interface SimulationSettings {
  reconcileIntervalMs: number;
  lbPods: number;
  cpuBurnMs: number;
  extraWatchedResources: number;
  renderHistory: number;
  /** How often validation fails (0 to 1). */
  validationFailureRate: number;
  /** How often a deployment to one pod fails (0 to 1). */
  deployFailureRate: number;
  /** How long the simulated informers take to list before their caches have synced. */
  cacheSyncMs: number;
  /** The cluster never changes: the loop only ticks its heartbeat. */
  idle: boolean;
}

/** One structured log line's fields. */
export type LogFields = Readonly<Record<string, unknown>>;

/** What {@link startController} needs from its host. */
export interface ControllerHost {
  state: IntrospectionState;
  pipeline: ReconciliationPipeline;
  simulation: SimulationSettings;
  /** Whether this replica holds the lease (and so deploys). */
  isLeader: () => boolean;
  log: (fields: LogFields) => void;
}

/** The running simulated controller. */
export interface SimulatedController {
  /** Cache name → its informer's initial sync, for `waitForCaches`. */
  caches: Readonly<Record<string, CacheSync>>;
  /** Simulates a reconcile loop that silently stopped: no more cycles, no heartbeat. */
  freeze(): void;
  stop(): void;
}

/** The watched resources' counts (a type alias, so that it is a `Record<string, number>`). */
type ClusterCounts = {
  ingresses: number;
  services: number;
  endpoints: number;
  'lb-pods': number;
};

/** A watched-resource definition, in the example's own shape. */
interface WatchedResource {
  group: string;
  version: string;
  resource: string;
  namespace?: string;
  labelSelector?: string;
}

/** One line of a retained rendered configuration. */
interface RenderedLine {
  line: string;
  length: number;
}

const TEMPLATES: Record<string, string> = {
  'haproxy.cfg': [
    'global',
    '  maxconn {{maxconn}}',
    'defaults',
    '  timeout connect 5s',
    '{{#each backends}}backend {{name}}',
    '  server {{name}}-{{index}} {{address}}:{{port}} check',
    '{{/each}}',
  ].join('\n'),
  'maps/hosts.map': '{{#each ingresses}}{{host}} {{backend}}\n{{/each}}',
};

function randomInt(min: number, max: number): number {
  return min + Math.floor(Math.random() * (max - min + 1));
}

/** Stands in for the informers: the watched resources drift a little on every cycle. */
function observeCluster(previous: ClusterCounts, lbPods: number): ClusterCounts {
  const drift = (n: number, lo: number, hi: number): number => Math.max(lo, Math.min(hi, n + randomInt(-1, 1)));
  return {
    ingresses: drift(previous.ingresses, 1, 12),
    services: drift(previous.services, 1, 15),
    endpoints: drift(previous.endpoints, 1, 30),
    'lb-pods': lbPods,
  };
}

/**
 * Renders the configuration. `cpuBurnMs` makes rendering deliberately expensive so that a CPU
 * profile of the example has a known hot function (`renderLoadBalancerConfig`).
 */
export function renderLoadBalancerConfig(counts: Readonly<ClusterCounts>, cpuBurnMs: number): string {
  const lines = ['global', `  maxconn ${1000 * counts['lb-pods']}`, 'defaults', '  timeout connect 5s'];
  for (let b = 0; b < counts.services; b++) {
    lines.push(`backend svc-${b}`);
    for (let e = 0; e < Math.max(1, Math.floor(counts.endpoints / counts.services)); e++) {
      lines.push(`  server svc-${b}-${e} 10.0.${b}.${e + 10}:8080 check`);
    }
  }
  if (cpuBurnMs > 0) {
    const until = Date.now() + cpuBurnMs;
    let digest = '';
    while (Date.now() < until)
      digest = crypto
        .createHash('sha256')
        .update(lines.join('\n') + digest)
        .digest('hex');
    lines.push(`# digest ${digest.slice(0, 16)}`);
  }
  return `${lines.join('\n')}\n`;
}

const renderHistory: RenderedLine[][] = [];

/**
 * Keeps the last rendered configurations, split into lines, for "diff against previous" debugging.
 * With a large `historySize` this is the example's known heap holder (`retainRenderHistory` shows
 * up in `go tool pprof` heap profiles).
 */
function retainRenderHistory(text: string, historySize: number): void {
  if (historySize <= 0) return;
  renderHistory.push(text.split('\n').map((line) => ({ line, length: line.length })));
  while (renderHistory.length > historySize) renderHistory.shift();
}

/** A stand-in for `haproxy -c`: fails now and then, as real validation sometimes does. */
function validateConfig(text: string, failureRate: number): void {
  if (!text.startsWith('global')) throw new Error('config must start with a global section');
  if (Math.random() < failureRate)
    throw new Error("haproxy -c: [ALERT] parsing [haproxy.cfg:12]: unknown keyword 'maxconnn' in 'global' section");
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Deploys to one simulated pod; a pod fails now and then, as a real dataplane API does. */
async function deployToPod(endpoint: string, failureRate: number): Promise<void> {
  await sleep(randomInt(5, 25));
  if (Math.random() < failureRate) throw new Error(`${endpoint}: dataplane API answered 503 Service Unavailable`);
}

/** Generates `n` extra watched-resource definitions, for large-state demos and benchmarks. */
function extraWatchedResources(n: number): WatchedResource[] {
  const out: WatchedResource[] = [];
  for (let i = 0; i < n; i++) {
    out.push({
      group: 'example.com',
      version: 'v1',
      resource: `widgets-${i}`,
      namespace: `ns-${i % 50}`,
      labelSelector: `app=widget-${i}`,
    });
  }
  return out;
}

/** The message of anything thrown. */
export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * Starts the reconcile loop. Returns `stop()`. `isLeader()` decides whether this replica deploys;
 * followers render and validate (to keep their view warm) but never deploy.
 */
export function startController({ state, pipeline, simulation, isLeader, log }: ControllerHost): SimulatedController {
  const watchedResources: WatchedResource[] = [
    { group: 'networking.k8s.io', version: 'v1', resource: 'ingresses' },
    { group: '', version: 'v1', resource: 'services' },
    { group: 'discovery.k8s.io', version: 'v1', resource: 'endpointslices' },
    ...extraWatchedResources(simulation.extraWatchedResources),
  ];
  const config: ControllerConfig = {
    templates: TEMPLATES,
    watched_resources: watchedResources,
    controller: { reconcile_interval_ms: simulation.reconcileIntervalMs },
  };
  let version = 1;
  pipeline.configLoaded(config, String(version));
  state.setCredentials(
    {
      dataplane: { username: 'admin', password: process.env.DATAPLANE_PASSWORD || crypto.randomBytes(12).toString('hex') },
      registry_token: process.env.REGISTRY_TOKEN || '',
    },
    '1',
  );

  let counts: ClusterCounts = { ingresses: 3, services: 5, endpoints: 7, 'lb-pods': simulation.lbPods };
  let cycle = 0;
  let stopped = false;
  let frozen = false;
  let timer: NodeJS.Timeout | undefined;

  // A component that follows the event stream (as a webhook notifier or audit log would).
  const seen = { count: 0 };
  const unsubscribe = state.subscribe(() => {
    seen.count++;
  });
  state.publishVar('simulation', () => ({ cycles: cycle, leader: isLeader(), events_seen_by_subscriber: seen.count }));

  // The informers: each cache syncs after its initial list (simulated by a delay).
  const listed = (ms: number): Promise<void> => (ms <= 0 ? Promise.resolve() : new Promise((resolve) => setTimeout(resolve, ms).unref()));
  const caches: Record<string, CacheSync> = {
    ingresses: listed(simulation.cacheSyncMs),
    services: listed(simulation.cacheSyncMs / 2),
    endpointslices: listed(simulation.cacheSyncMs),
  };

  const endpoints = Array.from({ length: simulation.lbPods }, (_, i) => `lb-pod-${i}`);

  /**
   * One reconciliation cycle, described once: the pipeline records the metrics, the correlated
   * events, the rendered and validated configurations and the errors. Followers render and
   * validate (to keep their view warm) but never deploy.
   */
  async function reconcile(): Promise<void> {
    cycle++;
    counts = observeCluster(counts, simulation.lbPods);
    state.setResourceCounts(counts);
    if (cycle % 10 === 0) pipeline.configLoaded(config, String(++version));
    const leading = isLeader();
    try {
      await pipeline.run({
        trigger: cycle === 1 ? 'startup' : 'resource-change',
        reason: `ingresses=${counts.ingresses} services=${counts.services} endpoints=${counts.endpoints}`,
        render: () => {
          const text = renderLoadBalancerConfig(counts, simulation.cpuBurnMs);
          retainRenderHistory(text, simulation.renderHistory);
          return text;
        },
        validate: (text) => validateConfig(text, simulation.validationFailureRate),
        endpoints: leading ? endpoints : [],
        deploy: (endpoint) => deployToPod(endpoint, simulation.deployFailureRate),
      });
      if (leading) {
        state.setAuxFiles({
          ssl_certificates: [
            {
              name: 'default.pem',
              path: '/etc/haproxy/certs/default.pem',
              content: process.env.TLS_KEY_PEM || '-----BEGIN PRIVATE KEY-----\nsimulated\n-----END PRIVATE KEY-----\n',
            },
          ],
          map_files: [{ name: 'hosts.map', path: '/etc/haproxy/maps/hosts.map', content: `example.com svc-0\n` }],
          general_files: [
            { name: '500.http', path: '/etc/haproxy/errors/500.http', content: 'HTTP/1.0 500 Internal Server Error\r\n\r\n' },
          ],
        });
      }
    } catch (err) {
      log({ msg: 'reconciliation failed', error: errorMessage(err) });
    }
  }

  function tick(): Promise<void> {
    // An idle cluster gives the loop nothing to do: it ticks the heartbeat so that the progress
    // watchdog does not take an idle controller for a stuck one.
    if (simulation.idle) {
      state.recordProgress();
      return Promise.resolve();
    }
    return reconcile();
  }

  function schedule(): void {
    if (stopped || frozen) return;
    timer = setTimeout(() => {
      void tick().finally(schedule);
    }, simulation.reconcileIntervalMs);
  }
  void tick().finally(schedule);

  return {
    caches,
    freeze() {
      frozen = true;
      clearTimeout(timer);
    },
    stop() {
      stopped = true;
      clearTimeout(timer);
      unsubscribe();
    },
  };
}
