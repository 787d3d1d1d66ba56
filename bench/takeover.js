'use strict';
// Benchmark 15 (issue 32): how long a Lease stays without a leader that runs, for the package's
// elector (createLeaseElector, in 3 replicas of examples/kubernetes/wiring.ts as `npm run build`
// compiles it) beside client-go's own k8s.io/client-go/tools/leaderelection (3 replicas of
// scripts/peers/kube-apiserver/leader-election, built by scripts/build-peers.sh), both against the
// same real kube-apiserver (bench/control-plane.js), each in its own namespace with its own Lease,
// under the rights of examples/kubernetes/rbac.yaml and with the same durations.
//
// A trial waits until 3 replicas run and one of them holds the Lease, then signals the holder and
// polls the Lease as the admin every 10 ms from the moment of the signal until its holderIdentity
// names another replica: the time of the answer that first shows it is the takeover time (so it
// includes up to one poll and one GET). SIGKILL: the holder cannot release, a follower takes over
// once the record it saw last is a lease duration old. SIGTERM: the holder releases the Lease
// (empty holder), a follower takes it at its next retry. A killed or stopped replica is replaced by
// a new one (a new identity) before the next trial. The two implementations alternate trial by
// trial, so drift in the machine's load hits both alike. BENCH_TAKEOVER_TRIALS (default 5) sets the
// trials per signal and implementation; BENCH_TAKEOVER_DURATIONS (ms: lease,renew,retry; default
// 4000,3000,500) the durations, e.g. client-go's defaults 15000,10000,2000 (run the file directly then:
// bench/run.js records the rows under the same ids).

const { spawn } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const yaml = require('js-yaml');
const { main, median, ms, ratio, report, row, sleep } = require('./common');
const { peerBinary, startControlPlane } = require('./control-plane');

const REPO = path.resolve(__dirname, '..');
const COMPILED = path.join(REPO, 'examples', 'dist', 'kubernetes', 'wiring.js');
const LEASE = 'wiring-example';
const REPLICAS = 3;
const TRIALS = Number(process.env.BENCH_TAKEOVER_TRIALS || 5);
/** Lease duration, renew deadline and retry period: BENCH_TAKEOVER_DURATIONS=15000,10000,2000 for client-go's defaults. */
const DURATIONS = (([leaseMs, renewMs, retryMs]) => ({ leaseMs, renewMs, retryMs }))(
  (process.env.BENCH_TAKEOVER_DURATIONS || '4000,3000,500').split(',').map(Number),
);
if (!(DURATIONS.leaseMs > DURATIONS.renewMs && DURATIONS.renewMs > DURATIONS.retryMs * 1.2 && DURATIONS.retryMs > 0))
  throw new Error(`BENCH_TAKEOVER_DURATIONS: lease > renew deadline > retry period × 1.2 > 0 expected, got ${JSON.stringify(DURATIONS)}`);
const POLL_MS = 10;
/** After a replica starts: long enough for every candidate to have read the Lease a few times. */
const SETTLE_MS = 4 * DURATIONS.retryMs;
/** What the bound allows for the poll and the GET that sees the new holder, beyond the elector's own timing. */
const API_ALLOWANCE_MS = 100;
/**
 * SIGKILL: a follower sees the holder's last renewal at its next read (up to a jittered retry after
 * it), takes over at its first read a lease duration after that (up to another retry): client-go's
 * algorithm and ours alike allow lease duration + 2 × retry period × 1.2 after the kill.
 */
const KILL_BOUND_MS = DURATIONS.leaseMs + 2 * DURATIONS.retryMs * 1.2;
/** SIGTERM: the Lease is released at once, a follower takes it at its next read. */
const TERM_BOUND_MS = DURATIONS.retryMs * 1.2;

const running = new Set();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/** The objects of examples/kubernetes/rbac.yaml, moved to `namespace`. */
function rbacFor(namespace) {
  const docs = yaml.loadAll(fs.readFileSync(path.join(REPO, 'examples', 'kubernetes', 'rbac.yaml'), 'utf8'));
  return docs.map((obj) => {
    const moved = JSON.parse(JSON.stringify(obj));
    moved.metadata.namespace = namespace;
    for (const subject of moved.subjects || []) subject.namespace = namespace;
    return moved;
  });
}

/** How each implementation starts one replica, and the output line saying it runs. */
const IMPLEMENTATIONS = {
  ours: {
    label: 'createLeaseElector',
    ready: /"msg":"listening"/,
    spawn: (kubeconfig, namespace, identity) =>
      spawn(process.execPath, [COMPILED], {
        cwd: REPO,
        env: {
          ...process.env,
          KUBECONFIG: kubeconfig,
          POD_NAMESPACE: namespace,
          POD_NAME: identity,
          PORT: '0',
          BIND_ADDRESS: '127.0.0.1',
          LEASE_DURATION_MS: String(DURATIONS.leaseMs),
          RENEW_DEADLINE_MS: String(DURATIONS.renewMs),
          RETRY_PERIOD_MS: String(DURATIONS.retryMs),
          DRAIN_DELAY_MS: '0',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
  },
  'client-go': {
    label: "client-go's leaderelection",
    // OnNewLeader: it has read the Lease and seen a holder (possibly itself).
    ready: /"event":"new-leader"/,
    spawn: (kubeconfig, namespace, identity) =>
      spawn(
        peerBinary('leader-election'),
        [
          `--kubeconfig=${kubeconfig}`,
          `--namespace=${namespace}`,
          `--name=${LEASE}`,
          `--identity=${identity}`,
          `--lease-duration=${DURATIONS.leaseMs}ms`,
          `--renew-deadline=${DURATIONS.renewMs}ms`,
          `--retry-period=${DURATIONS.retryMs}ms`,
        ],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      ),
  },
};

async function until(what, probe, timeoutMs = 30_000) {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (performance.now() > deadline) throw new Error(`no ${what} within ${timeoutMs} ms`);
    await sleep(POLL_MS);
  }
}

/** One implementation's replicas, namespace and Lease. */
class Group {
  constructor(plane, impl, namespace, kubeconfig) {
    Object.assign(this, { plane, impl, namespace, kubeconfig });
    this.replicas = new Map();
    this.started = 0;
  }

  static async create(plane, impl) {
    const namespace = `takeover-${impl}`;
    await plane.namespace(namespace);
    await plane.apply(rbacFor(namespace));
    const token = await plane.serviceAccountToken(namespace, 'lb-controller');
    return new Group(plane, impl, namespace, plane.kubeconfig(token));
  }

  /** The Lease's holder as the admin reads it now; '' when nobody holds it or it does not exist yet. */
  async holder() {
    const res = await this.plane.request('GET', `/apis/coordination.k8s.io/v1/namespaces/${this.namespace}/leases/${LEASE}`);
    if (res.status === 404) return '';
    if (res.status !== 200) throw new Error(`GET lease: ${res.status} ${JSON.stringify(res.body)}`);
    return (res.body.spec && res.body.spec.holderIdentity) || '';
  }

  async spawnReplica() {
    const identity = `${this.impl}-${++this.started}`;
    const child = IMPLEMENTATIONS[this.impl].spawn(this.kubeconfig, this.namespace, identity);
    running.add(child);
    const replica = { identity, child, output: '', exited: new Promise((resolve) => child.once('exit', resolve)) };
    child.once('exit', () => {
      running.delete(child);
      this.replicas.delete(identity);
    });
    const keep = (chunk) => {
      replica.output = (replica.output + chunk.toString()).slice(-20_000);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    this.replicas.set(identity, replica);
    await until(`${identity} ready`, () => {
      if (child.exitCode !== null) throw new Error(`${identity} exited (${child.exitCode}): ${replica.output}`);
      return IMPLEMENTATIONS[this.impl].ready.test(replica.output);
    });
    return replica;
  }

  /** Tops the group up to REPLICAS, then waits until one of them holds the Lease. */
  async ready() {
    let added = false;
    while (this.replicas.size < REPLICAS) {
      await this.spawnReplica();
      added = true;
    }
    if (added) await sleep(SETTLE_MS);
    return until(`${this.impl} leader`, async () => {
      const holder = await this.holder();
      return this.replicas.has(holder) ? holder : undefined;
    });
  }

  /**
   * Signals the holder and measures, from the signal, until another replica holds the Lease; for
   * SIGTERM also until it was released (the holder emptied).
   */
  async trial(signal) {
    const leader = await this.ready();
    const { child, exited } = this.replicas.get(leader);
    const t0 = performance.now();
    child.kill(signal);
    let releasedMs;
    const next = await until(`${this.impl} takeover after ${signal}`, async () => {
      const holder = await this.holder();
      const at = performance.now() - t0;
      if (holder === '' && releasedMs === undefined) releasedMs = at;
      return holder !== '' && holder !== leader ? { holder, ms: at } : undefined;
    });
    await exited;
    const exitedMs = performance.now() - t0;
    if (!this.replicas.has(next.holder)) throw new Error(`${this.impl}: the Lease went to ${next.holder}, not a running replica`);
    // From the release seen (from the signal when no poll caught the Lease empty): the followers' part.
    const afterReleaseMs = next.ms - (releasedMs ?? 0);
    return { signal, leader, next: next.holder, ms: next.ms, releasedMs, afterReleaseMs, exitedMs };
  }

  async stop() {
    await Promise.all(
      [...this.replicas.values()].map(({ child, exited }) => {
        child.kill('SIGKILL');
        return exited;
      }),
    );
  }
}

/** Whole milliseconds: the poll is 10 ms apart. */
function ms0(value) {
  return ms(value, 0);
}

function spread(values) {
  return { median: median(values), worst: Math.max(...values) };
}

async function run() {
  const plane = await startControlPlane();
  const groups = {};
  const trials = { ours: [], 'client-go': [] };
  try {
    groups.ours = await Group.create(plane, 'ours');
    groups['client-go'] = await Group.create(plane, 'client-go');
    for (let i = 0; i < TRIALS; i++) {
      for (const signal of ['SIGKILL', 'SIGTERM']) {
        for (const impl of i % 2 === 0 ? ['ours', 'client-go'] : ['client-go', 'ours']) {
          const trial = await groups[impl].trial(signal);
          trials[impl].push(trial);
          console.log(
            `  ${impl.padEnd(9)} ${signal}: ${trial.leader} → ${trial.next} in ${trial.ms.toFixed(0)} ms` +
              (trial.releasedMs === undefined ? '' : ` (released at ${trial.releasedMs.toFixed(0)} ms)`),
          );
        }
      }
    }
  } finally {
    for (const group of Object.values(groups)) await group.stop();
    await plane.stop();
  }

  const of = (impl, signal, key = 'ms') =>
    spread(trials[impl].filter((t) => t.signal === signal && t[key] !== undefined).map((t) => t[key]));
  const figures = {};
  for (const impl of Object.keys(trials))
    figures[impl] = {
      kill: of(impl, 'SIGKILL'),
      term: of(impl, 'SIGTERM'),
      released: of(impl, 'SIGTERM', 'releasedMs'),
      afterRelease: of(impl, 'SIGTERM', 'afterReleaseMs'),
    };
  const ours = figures.ours;
  const go = figures['client-go'];
  const durations = `lease ${DURATIONS.leaseMs / 1000} s, renew ${DURATIONS.renewMs / 1000} s, retry ${DURATIONS.retryMs} ms`;
  console.log(`[15] leader takeover, 3 replicas each, ${TRIALS} trials per signal, ${durations}`);
  const line = (a, b) => `${ratio(a.median / b.median)} (${ms0(a.median)} / ${ms0(b.median)}; worst ${ms0(a.worst)} / ${ms0(b.worst)})`;
  const baseline = { baseline: 'client-go leaderelection, same API server' };
  const rows = [
    row(
      '15a',
      `SIGKILL of the leader: until another holds the Lease, ours / client-go, median (${durations})`,
      line(ours.kill, go.kill),
      `≤ ${ms0(KILL_BOUND_MS + API_ALLOWANCE_MS)} worst`,
      ours.kill.worst <= KILL_BOUND_MS + API_ALLOWANCE_MS,
      baseline,
    ),
    row(
      '15b',
      'SIGTERM of the leader (it releases the Lease): until another holds it, ours / client-go, median',
      `${line(ours.term, go.term)}; worst from the release seen ${ms0(ours.afterRelease.worst)} / ${ms0(go.afterRelease.worst)}`,
      `≤ ${ms0(TERM_BOUND_MS + API_ALLOWANCE_MS)} worst from the release`,
      ours.afterRelease.worst <= TERM_BOUND_MS + API_ALLOWANCE_MS,
      baseline,
    ),
    row(
      '15c',
      'context: SIGTERM to the released (empty) Lease, ours / client-go, median (worst)',
      `${ms0(ours.released.median)} (${ms0(ours.released.worst)}) / ${ms0(go.released.median)} (${ms0(go.released.worst)})`,
      '-',
      null,
    ),
  ];
  report(rows, { durations: DURATIONS, figures, trials });
}

main(run);
