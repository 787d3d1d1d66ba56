/**
 * Three replicas of examples/kubernetes/wiring.ts electing a leader on a real Lease of a real
 * kube-apiserver, each through its own fault proxy, scraped by the real Prometheus. Leadership is
 * judged three ways: Prometheus' samples of `ctl_leader_election_is_leader`, each replica's own
 * `leader.*` events (their timestamps), and the Lease itself.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import yaml from 'js-yaml';
import { describeWithControlPlane, startControlPlane, type ControlPlane, type KubeObject } from '../helpers/control-plane';
import { requireFreshDist } from '../helpers/dist';
import { eventually } from '../helpers/eventually';
import { FaultProxy } from '../helpers/fault-proxy';
import { request } from '../helpers/http';
import { freePorts } from '../helpers/ports';
import { describeWithPeer } from '../helpers/peers';
import { findBinary, startPrometheus, type PrometheusServer } from '../peer/prometheus-harness';

const REPO = path.resolve(__dirname, '..', '..');
const COMPILED = path.join(REPO, 'examples', 'dist', 'kubernetes', 'wiring.js');
const NAMESPACE = 'replicas';
const LEASE = `/apis/coordination.k8s.io/v1/namespaces/${NAMESPACE}/leases/wiring-example`;
const LEASE_MS = 3000;
const RENEW_DEADLINE_MS = 2000;
const RETRY_MS = 300;
/** client-go's jitter: a retry waits between the period and 1.2 times it. */
const JITTER = 1.2;
/** What a takeover may take beyond its bound here: API calls, timers, polling by the test. */
const SLACK_MS = 1500;

const prometheusBinary = findBinary('prometheus');
const describeReplicas =
  prometheusBinary === undefined ? describeWithPeer('prometheus (Debian package `prometheus`)') : describeWithControlPlane;

interface Replica {
  readonly identity: string;
  readonly port: number;
  readonly proxy: FaultProxy;
  /** The proxy's URL: the API server as this replica reaches it. */
  readonly server: string;
  child?: ChildProcess;
  output: string;
}

interface LeaderEvent {
  timestamp: string;
  type: string;
  summary: string;
}

let plane: ControlPlane;
let prometheus: PrometheusServer | undefined;
let token: string;
const replicas: Replica[] = [];

async function start(replica: Replica): Promise<void> {
  const child = spawn(process.execPath, [COMPILED], {
    cwd: REPO,
    env: {
      ...process.env,
      KUBECONFIG: plane.kubeconfig(token, replica.server),
      POD_NAMESPACE: NAMESPACE,
      POD_NAME: replica.identity,
      PORT: String(replica.port),
      BIND_ADDRESS: '127.0.0.1',
      RESTART_BACKOFF_MS: '100',
      LEASE_DURATION_MS: String(LEASE_MS),
      RENEW_DEADLINE_MS: String(RENEW_DEADLINE_MS),
      RETRY_PERIOD_MS: String(RETRY_MS),
      DRAIN_DELAY_MS: '0',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  replica.child = child;
  replica.output = '';
  child.stdout!.on('data', (chunk: Buffer) => (replica.output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (replica.output += chunk.toString()));
  await eventually(
    () => {
      if (child.exitCode !== null) throw new Error(`${replica.identity} exited: ${replica.output}`);
      return replica.output.includes('"msg":"listening"');
    },
    { timeoutMs: 15_000, what: `${replica.identity} to listen` },
  );
}

async function stop(replica: Replica, signal: NodeJS.Signals): Promise<void> {
  const child = replica.child;
  if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill(signal);
  await exited;
}

async function isLeader(replica: Replica): Promise<boolean | undefined> {
  try {
    const res = await request(`http://127.0.0.1:${replica.port}/metrics`);
    return res.text.includes('ctl_leader_election_is_leader 1\n');
  } catch {
    return undefined;
  }
}

async function leaders(): Promise<Replica[]> {
  const alive = replicas.filter((r) => r.child?.exitCode === null && r.child.signalCode === null);
  const flags = await Promise.all(alive.map(isLeader));
  return alive.filter((_, i) => flags[i] === true);
}

async function holder(): Promise<string> {
  const res = await plane.request('GET', LEASE);
  return res.status === 200 ? ((res.body.spec?.holderIdentity as string | undefined) ?? '') : '';
}

async function leaderEvents(replica: Replica): Promise<LeaderEvent[]> {
  return (await request(`http://127.0.0.1:${replica.port}/debug/vars/events?type=leader.`)).json<LeaderEvent[]>();
}

async function oneLeader(what: string): Promise<Replica> {
  return eventually(
    async () => {
      const found = await leaders();
      return found.length === 1 && (await holder()) === found[0]!.identity && found[0];
    },
    { timeoutMs: 20_000, what },
  );
}

/** Terms of leadership from every replica's own events: [identity, elected at, lost at]. */
async function terms(of: readonly Replica[]): Promise<Array<[string, number, number]>> {
  const all: Array<[string, number, number]> = [];
  for (const replica of of) {
    let since: number | undefined;
    for (const event of await leaderEvents(replica)) {
      if (event.type === 'leader.elected') since = Date.parse(event.timestamp);
      if (event.type === 'leader.lost' && since !== undefined) {
        all.push([replica.identity, since, Date.parse(event.timestamp)]);
        since = undefined;
      }
    }
    if (since !== undefined) all.push([replica.identity, since, Infinity]);
  }
  return all.sort((a, b) => a[1] - b[1]);
}

describeReplicas('three replicas of the Kubernetes example, one Lease, a real API server and Prometheus', () => {
  beforeAll(async () => {
    requireFreshDist();
    plane = await startControlPlane();
    await plane.namespace(NAMESPACE);
    const rbac = yaml.loadAll(fs.readFileSync(path.join(REPO, 'examples', 'kubernetes', 'rbac.yaml'), 'utf8')) as KubeObject[];
    await plane.apply(
      rbac.map((obj) => {
        const moved = JSON.parse(JSON.stringify(obj)) as KubeObject & { subjects?: { namespace?: string }[] };
        moved.metadata.namespace = NAMESPACE;
        for (const subject of moved.subjects ?? []) subject.namespace = NAMESPACE;
        return moved;
      }),
    );
    token = await plane.serviceAccountToken(NAMESPACE, 'lb-controller');
    const ports = await freePorts(3);
    for (const [i, port] of ports.entries()) {
      const proxy = new FaultProxy(plane.url);
      replicas.push({ identity: `replica-${'abc'[i]}`, port, proxy, server: await proxy.listen(), output: '' });
    }
    await Promise.all(replicas.map(start));
    prometheus = await startPrometheus(
      prometheusBinary!,
      replicas.map((r) => new URL(`http://127.0.0.1:${r.port}/metrics`)),
    );
  }, 120_000);

  afterAll(async () => {
    await Promise.all(replicas.map((r) => stop(r, 'SIGKILL')));
    await Promise.all(replicas.map((r) => r.proxy.close()));
    await prometheus?.stop();
    await plane?.stop();
  });

  it('elects exactly one leader; Prometheus sums is_leader to 1 at every sample', async () => {
    const leader = await oneLeader('one leader among three replicas');
    const up = (): Promise<{ result: Array<{ value: [number, string] }> }> =>
      prometheus!.api(`/api/v1/query?query=${encodeURIComponent('sum(up)')}`);
    await eventually(async () => (await up()).result[0]?.value[1] === '3', { timeoutMs: 20_000, what: 'Prometheus to scrape all three' });
    // Let Prometheus take a few samples of the steady state.
    const since = Date.now() / 1000;
    await new Promise((r) => setTimeout(r, 4000));
    const until = Date.now() / 1000;
    const range = await prometheus!.api<{ result: Array<{ values: Array<[number, string]> }> }>(
      `/api/v1/query_range?query=${encodeURIComponent('sum(ctl_leader_election_is_leader)')}&start=${since}&end=${until}&step=1`,
    );
    const samples = range.result[0]?.values.map(([, v]) => v) ?? [];
    expect(samples.length).toBeGreaterThanOrEqual(3);
    expect(new Set(samples)).toEqual(new Set(['1']));
    expect((await up()).result[0]?.value[1]).toBe('3');
    // Every follower reads the leader in its variable.
    for (const replica of replicas) {
      const vars = (await request(`http://127.0.0.1:${replica.port}/debug/vars/leader_election`)).json<Record<string, unknown>>();
      expect(vars).toMatchObject({ identity: replica.identity, holder: leader.identity, leading: replica === leader });
    }
  });

  it('SIGTERM of the leader releases the Lease, and a follower leads within one retry period', async () => {
    const leader = await oneLeader('one leader before SIGTERM');
    const signalled = Date.now();
    await stop(leader, 'SIGTERM');
    const next = await eventually(
      async () => {
        const now = await holder();
        return now !== '' && now !== leader.identity && now;
      },
      { timeoutMs: 15_000, intervalMs: 20, what: 'a follower to hold the released Lease' },
    );
    const tookMs = Date.now() - signalled;
    expect(tookMs).toBeLessThan(RETRY_MS * JITTER + SLACK_MS);
    expect(leader.output).not.toContain('lease update failed');
    const follower = replicas.find((r) => r.identity === next)!;
    await eventually(async () => (await isLeader(follower)) === true, { what: 'the new holder to report itself leader' });
    await start(leader);
  });

  it('SIGKILL of the leader: a follower leads within leaseDuration + retryPeriod', async () => {
    const leader = await oneLeader('one leader before SIGKILL');
    const killed = Date.now();
    await stop(leader, 'SIGKILL');
    await eventually(
      async () => {
        const now = await holder();
        return now !== '' && now !== leader.identity;
      },
      { timeoutMs: 20_000, intervalMs: 20, what: 'a follower to take the unreleased Lease over' },
    );
    expect(Date.now() - killed).toBeLessThan(LEASE_MS + RETRY_MS * JITTER + SLACK_MS);
    await start(leader);
  });

  it('a leader cut off from the API server steps down before its renew deadline ends; no two replicas lead at once', async () => {
    const leader = await oneLeader('one leader before the partition');
    const transitionsBefore = (await plane.request('GET', LEASE)).body.spec.leaseTransitions as number;
    const cut = Date.now();
    leader.proxy.partition();
    try {
      await eventually(async () => (await isLeader(leader)) === false, {
        timeoutMs: 15_000,
        intervalMs: 20,
        what: 'the cut-off leader to step down',
      });
      const lost = (await leaderEvents(leader)).filter((e) => e.type === 'leader.lost').at(-1)!;
      // Its last renewal came before the cut, so it stepped down within renewDeadline of the cut.
      expect(Date.parse(lost.timestamp) - cut).toBeLessThanOrEqual(RENEW_DEADLINE_MS + 100);
      const next = await eventually(
        async () => {
          const now = await holder();
          return now !== '' && now !== leader.identity && now;
        },
        { timeoutMs: 20_000, what: 'another replica to take over' },
      );
      expect(next).not.toBe(leader.identity);
    } finally {
      leader.proxy.heal();
    }
    // Back on the network, it stays a follower of the new leader.
    await new Promise((r) => setTimeout(r, RETRY_MS * 4));
    expect(await leaders()).toHaveLength(1);
    expect(await isLeader(leader)).toBe(false);

    // No two terms overlap, by the replicas' own clocks (one machine here): each term ends before the next begins.
    const all = await terms(replicas);
    expect(all.length).toBeGreaterThanOrEqual(2);
    for (let i = 1; i < all.length; i++) {
      expect({ term: all[i], startsAfterTheEndOf: all[i - 1], ok: all[i]![1] >= all[i - 1]![2] }).toMatchObject({ ok: true });
    }
    // The Lease counted the takeover.
    const after = (await plane.request('GET', LEASE)).body.spec.leaseTransitions as number;
    expect(after).toBe(transitionsBefore + 1);
  });

  it("counts transitions on every replica: each replica's own gains and losses", async () => {
    for (const replica of replicas) {
      const events = (await leaderEvents(replica)).filter((e) => e.type === 'leader.elected' || e.type === 'leader.lost');
      const metrics = (await request(`http://127.0.0.1:${replica.port}/metrics`)).text;
      const match = /^ctl_leader_election_transitions_total (\d+)$/m.exec(metrics);
      expect(match).not.toBeNull();
      expect(Number(match![1])).toBe(events.length);
    }
    const total = await prometheus!.api<{ result: unknown[] }>(
      `/api/v1/query?query=${encodeURIComponent('ctl_leader_election_transitions_total')}`,
    );
    expect(total.result.length).toBeGreaterThanOrEqual(3);
  });
});
