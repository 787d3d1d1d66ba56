// The simulated controller: it watches resources that change over time, queues the load-balancer
// configuration's key on every change, and its worker renders the configuration from templates,
// validates it and deploys it to simulated load-balancer pods, pushing everything it does into the
// introspection state and the controller metrics. Changes that arrive while the key waits make no
// extra cycle (the work queue holds a key once); a failed cycle is retried after a backoff.

import crypto from 'node:crypto';
import type {
  CacheSync,
  ControllerConfig,
  CycleSpec,
  IntrospectionState,
  QueueProcessing,
  ReconciliationPipeline,
  WorkQueue,
} from 'controller-introspection';

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
  /** Where changes queue the configuration's key; the pipeline's worker takes it from there. */
  queue: WorkQueue;
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

/** The one key this controller reconciles: everything it watches feeds one load-balancer configuration. */
export const CONFIG_KEY = 'haproxy/config';

function auxFiles(): Parameters<IntrospectionState['setAuxFiles']>[0] {
  return {
    ssl_certificates: [
      {
        name: 'default.pem',
        path: '/etc/haproxy/certs/default.pem',
        content: process.env.TLS_KEY_PEM || '-----BEGIN PRIVATE KEY-----\nsimulated\n-----END PRIVATE KEY-----\n',
      },
    ],
    map_files: [{ name: 'hosts.map', path: '/etc/haproxy/maps/hosts.map', content: `example.com svc-0\n` }],
    general_files: [{ name: '500.http', path: '/etc/haproxy/errors/500.http', content: 'HTTP/1.0 500 Internal Server Error\r\n\r\n' }],
  };
}

/**
 * Starts the informers and the worker. Returns `stop()`. `isLeader()` decides whether this replica
 * deploys; followers render and validate (to keep their view warm) but never deploy.
 */
export function startController({ state, pipeline, queue, simulation, isLeader, log }: ControllerHost): SimulatedController {
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
   * The cycle that reconciles the configuration's key, described once: the pipeline records the
   * metrics, the correlated events, the rendered and validated configurations and the errors.
   * Followers render and validate (to keep their view warm) but never deploy.
   */
  function describeCycle(key: string): CycleSpec {
    cycle++;
    if (cycle % 10 === 0) pipeline.configLoaded(config, String(++version));
    const leading = isLeader();
    const retries = queue.numRequeues(key);
    return {
      trigger: cycle === 1 ? 'startup' : retries > 0 ? 'retry' : 'resource-change',
      reason: `${key}: ingresses=${counts.ingresses} services=${counts.services} endpoints=${counts.endpoints}${retries > 0 ? ` (retry ${retries})` : ''}`,
      render: () => {
        const text = renderLoadBalancerConfig(counts, simulation.cpuBurnMs);
        retainRenderHistory(text, simulation.renderHistory);
        return text;
      },
      validate: (text) => validateConfig(text, simulation.validationFailureRate),
      endpoints: leading ? endpoints : [],
      deploy: async (endpoint) => {
        await deployToPod(endpoint, simulation.deployFailureRate);
        // The certificates and map files go out with the configuration.
        state.setAuxFiles(auxFiles());
      },
    };
  }

  // One worker: there is one key, and the queue never hands one key to two workers anyway.
  const worker: QueueProcessing = pipeline.processQueue(queue, {
    workers: 1,
    cycle: describeCycle,
    onError: (err, key) => log({ msg: 'reconciliation failed', key, error: errorMessage(err), retries: queue.numRequeues(key) }),
  });

  /** What the informers do on every watch event: the cluster moved, so the configuration is queued again. */
  function observe(): void {
    // An idle cluster gives the loop nothing to do: it ticks the heartbeat so that the progress
    // watchdog does not take an idle controller for a stuck one.
    if (simulation.idle) {
      state.recordProgress();
      return;
    }
    counts = observeCluster(counts, simulation.lbPods);
    state.setResourceCounts(counts);
    queue.add(CONFIG_KEY);
  }

  observe();
  timer = setInterval(observe, simulation.reconcileIntervalMs);

  const halt = (): void => {
    clearInterval(timer);
    timer = undefined;
    void worker.close();
  };
  return {
    caches,
    freeze: halt,
    stop() {
      halt();
      unsubscribe();
    },
  };
}
