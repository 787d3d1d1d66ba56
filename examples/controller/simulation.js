'use strict';
// The simulated controller: it watches resources that change over time, renders a load-balancer
// configuration from templates, validates it and deploys it to simulated load-balancer pods,
// pushing everything it does into the introspection state and the controller metrics.

const crypto = require('node:crypto');

const TEMPLATES = {
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

function randomInt(min, max) {
  return min + Math.floor(Math.random() * (max - min + 1));
}

/** Stands in for the informers: the watched resources drift a little on every cycle. */
function observeCluster(previous, lbPods) {
  const drift = (n, lo, hi) => Math.max(lo, Math.min(hi, n + randomInt(-1, 1)));
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
function renderLoadBalancerConfig(counts, cpuBurnMs) {
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

const renderHistory = [];

/**
 * Keeps the last rendered configurations, split into lines, for "diff against previous" debugging.
 * With a large `historySize` this is the example's known heap holder (`retainRenderHistory` shows
 * up in `go tool pprof` heap profiles).
 */
function retainRenderHistory(text, historySize) {
  if (historySize <= 0) return;
  renderHistory.push(text.split('\n').map((line) => ({ line, length: line.length })));
  while (renderHistory.length > historySize) renderHistory.shift();
}

/** A stand-in for `haproxy -c`: fails now and then, as real validation sometimes does. */
function validateConfig(text, failureRate) {
  if (!text.startsWith('global')) throw new Error('config must start with a global section');
  if (Math.random() < failureRate)
    throw new Error("haproxy -c: [ALERT] parsing [haproxy.cfg:12]: unknown keyword 'maxconnn' in 'global' section");
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Deploys to one simulated pod; a pod fails now and then, as a real dataplane API does. */
async function deployToPod(endpoint, failureRate) {
  await sleep(randomInt(5, 25));
  if (Math.random() < failureRate) throw new Error(`${endpoint}: dataplane API answered 503 Service Unavailable`);
}

/** Generates `n` extra watched-resource definitions, for large-state demos and benchmarks. */
function extraWatchedResources(n) {
  const out = [];
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

/**
 * Starts the reconcile loop. Returns `stop()`. `isLeader()` decides whether this replica deploys;
 * followers render and validate (to keep their view warm) but never deploy.
 */
function startController({ state, pipeline, simulation, isLeader, log }) {
  const config = {
    templates: TEMPLATES,
    watched_resources: [
      { group: 'networking.k8s.io', version: 'v1', resource: 'ingresses' },
      { group: '', version: 'v1', resource: 'services' },
      { group: 'discovery.k8s.io', version: 'v1', resource: 'endpointslices' },
      ...extraWatchedResources(simulation.extraWatchedResources),
    ],
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

  // A component that follows the event stream (as a webhook notifier or audit log would).
  const seen = { count: 0 };
  const unsubscribe = state.subscribe(() => {
    seen.count++;
  });
  state.publishVar('simulation', () => ({ cycles: cycle, leader: isLeader(), events_seen_by_subscriber: seen.count }));

  let counts = { ingresses: 3, services: 5, endpoints: 7, 'lb-pods': simulation.lbPods };
  let cycle = 0;
  let stopped = false;
  let frozen = false;
  let timer;

  // The informers: each cache syncs after its initial list (simulated by a delay).
  const listed = (ms) => (ms <= 0 ? Promise.resolve() : new Promise((resolve) => setTimeout(resolve, ms).unref()));
  const caches = {
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
  async function reconcile() {
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
      log({ msg: 'reconciliation failed', error: err.message });
    }
  }

  function tick() {
    // An idle cluster gives the loop nothing to do: it ticks the heartbeat so that the progress
    // watchdog does not take an idle controller for a stuck one.
    if (simulation.idle) {
      state.recordProgress();
      return Promise.resolve();
    }
    return reconcile();
  }

  function schedule() {
    if (stopped || frozen) return;
    timer = setTimeout(() => {
      tick().finally(schedule);
    }, simulation.reconcileIntervalMs);
  }
  tick().finally(schedule);

  return {
    caches,
    /** Simulates a reconcile loop that silently stopped: no more cycles, no heartbeat. */
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

module.exports = { startController, renderLoadBalancerConfig };
