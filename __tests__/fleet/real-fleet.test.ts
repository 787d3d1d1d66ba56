/**
 * The fleet view end to end, with real parts: a real kube-apiserver and etcd with RBAC, and
 * replicas of the Kubernetes example (examples/kubernetes/wiring.ts as `npm run build` compiles it),
 * each its own process bound to its own loopback address, registered as Pods of one Deployment's
 * labels (the API server takes a Pod whose status.podIP is 127.0.0.x), electing on one Lease,
 * guarded by createKubeAuth, and reading each other with their own ServiceAccount token under the
 * rights of examples/kubernetes/{rbac,metrics-rbac,fleet-rbac}.yaml. The operator reads
 * `/debug/fleet` with a token of its own, and through the doctor.
 *
 * Faults, each named by the report: a replica started with an older configuration (skew); one
 * whose informer cannot list (a fault proxy in front of the API server: not ready, caches-synced);
 * one cut off behind a fault proxy (unreachable, within the view's timeout); the leader SIGKILLed
 * (unreachable and no leader, then a new leader).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import yaml from 'js-yaml';
import type { FleetReport, ReplicaReport } from '../../lib/fleet/report';
import { describeWithControlPlane, startControlPlane, type ControlPlane, type KubeObject } from '../helpers/control-plane';
import { requireFreshDist } from '../helpers/dist';
import { eventually } from '../helpers/eventually';
import { FaultProxy, statusBody } from '../helpers/fault-proxy';
import { request } from '../helpers/http';
import { freePorts } from '../helpers/ports';
import { untilAllowed } from '../helpers/rbac';

const REPO = path.resolve(__dirname, '..', '..');
const WIRING = path.join(REPO, 'examples', 'dist', 'kubernetes', 'wiring.js');
const DOCTOR = path.join(REPO, 'dist', 'cli', 'main.js');
const NS = 'fleet';
const SELECTOR = 'app=lb-controller';
/** A loaded 2-core CI machine: a takeover needs a lease duration and a few retries. */
const WAIT_MS = 30_000;

/** The objects of an example manifest (a path from the repository's root), moved to the test's namespace. */
function manifest(file: string): KubeObject[] {
  const docs = yaml.loadAll(fs.readFileSync(path.join(REPO, file), 'utf8')) as KubeObject[];
  return docs.map((obj) => {
    const moved = JSON.parse(JSON.stringify(obj)) as KubeObject & { subjects?: { namespace?: string }[] };
    if (moved.metadata.namespace !== undefined) moved.metadata.namespace = NS;
    for (const subject of moved.subjects ?? []) if (subject.namespace !== undefined) subject.namespace = NS;
    return moved;
  });
}

interface Replica {
  readonly pod: string;
  readonly child: ChildProcess;
  readonly exited: Promise<number | null>;
  output(): string;
}

describeWithControlPlane('the fleet view over three replicas of the example, against a real API server', () => {
  let plane: ControlPlane;
  let dir: string;
  let port: number;
  let operatorToken: string;
  let replicaKubeconfig: string;
  let replicaTokenFile: string;
  let listFaults: FaultProxy;
  let cutOff: FaultProxy;
  let faultyKubeconfig: string;
  const replicas = new Map<string, Replica>();

  const createPod = (name: string, ip: string): Promise<void> => plane.runningPod(NS, name, ip, { app: 'lb-controller' }, 'lb-controller');

  /** Starts a replica of the example bound to `address`, with `env` over the fleet's settings. */
  function start(pod: string, address: string, env: Record<string, string> = {}): Replica {
    const child = spawn(process.execPath, [WIRING], {
      cwd: REPO,
      env: {
        ...process.env,
        KUBECONFIG: replicaKubeconfig,
        POD_NAMESPACE: NS,
        POD_NAME: pod,
        PORT: String(port),
        BIND_ADDRESS: address,
        CONFIG_VERSION: 'v2',
        FLEET_SELECTOR: SELECTOR,
        FLEET_TOKEN_FILE: replicaTokenFile,
        KUBE_AUTH: '1',
        LEASE_DURATION_MS: '2000',
        RENEW_DEADLINE_MS: '1500',
        RETRY_PERIOD_MS: '300',
        RESTART_BACKOFF_MS: '200',
        DRAIN_DELAY_MS: '0',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => void (output += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => void (output += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const replica = { pod, child, exited, output: () => output.slice(-4000) };
    replicas.set(pod, replica);
    return replica;
  }

  async function fleet(address: string): Promise<FleetReport> {
    const res = await request(`http://${address}:${port}/debug/fleet`, {
      headers: { Authorization: `Bearer ${operatorToken}` },
      timeoutMs: 20_000,
    });
    if (res.status !== 200) throw new Error(`GET /debug/fleet on ${address}: ${res.status} ${res.text.slice(0, 500)}`);
    return res.json<FleetReport>();
  }

  function replicaOf(report: FleetReport, pod: string): ReplicaReport {
    const found = report.replicas.find((r) => r.pod === pod);
    if (!found) throw new Error(`no ${pod} in ${JSON.stringify(report.replicas.map((r) => r.pod))}`);
    return found;
  }

  const kinds = (report: FleetReport): string[] => report.findings.map((f) => f.kind);

  beforeAll(async () => {
    requireFreshDist();
    plane = await startControlPlane();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ci-fleet-'));
    await plane.namespace(NS);
    await plane.apply([
      ...manifest('examples/kubernetes/rbac.yaml'),
      ...manifest('examples/kubernetes/metrics-rbac.yaml'),
      ...manifest('examples/kubernetes/fleet-rbac.yaml'),
    ]);
    // The operator: a ServiceAccount bound to the debug reader of metrics-rbac.yaml.
    await plane.apply([
      { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'operator', namespace: NS } },
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: { name: 'fleet-operator' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'lb-controller-debug-reader' },
        subjects: [{ kind: 'ServiceAccount', name: 'operator', namespace: NS }],
      } as KubeObject,
    ]);
    await untilAllowed(plane, `system:serviceaccount:${NS}:operator`, '/debug/fleet');
    await untilAllowed(plane, `system:serviceaccount:${NS}:lb-controller`, '/debug/vars/leader_election');
    operatorToken = await plane.serviceAccountToken(NS, 'operator');
    const replicaToken = await plane.serviceAccountToken(NS, 'lb-controller');
    replicaTokenFile = path.join(dir, 'token');
    fs.writeFileSync(replicaTokenFile, replicaToken);
    replicaKubeconfig = plane.kubeconfig(replicaToken);
    [port] = await freePorts(1);

    // replica-c is reached through a proxy at its pod's address, which can cut it off.
    cutOff = new FaultProxy(`http://127.0.0.14:${port}`);
    await cutOff.listen('127.0.0.4', port);
    // The informer of replica-e cannot list its services: its API server answers 500 to that.
    listFaults = new FaultProxy(plane.url);
    listFaults.rule = (req) => (/\/services(\?|$)/.test(req.url) ? { status: 500, body: statusBody(500, 'etcd is sulking') } : 'pass');
    faultyKubeconfig = plane.kubeconfig(replicaToken, await listFaults.listen());

    await Promise.all([createPod('replica-a', '127.0.0.2'), createPod('replica-b', '127.0.0.3'), createPod('replica-c', '127.0.0.4')]);
    start('replica-a', '127.0.0.2');
    start('replica-b', '127.0.0.3');
    start('replica-c', '127.0.0.14');
  }, 120_000);

  afterAll(async () => {
    for (const replica of replicas.values()) replica.child.kill('SIGKILL');
    await Promise.all([...replicas.values()].map((r) => r.exited));
    await cutOff?.close();
    await listFaults?.close();
    await plane?.stop();
  }, 60_000);

  it(
    'is healthy: three replicas read, one leader all agree on, one configuration; the doctor says so',
    async () => {
      const report = await eventually(
        async () => {
          const r = await fleet('127.0.0.2');
          if (r.status === 'healthy' && r.replicas.length === 3) return r;
          throw new Error(
            `not yet: ${JSON.stringify({ findings: r.findings, replicas: r.replicas.map((x) => [x.pod, x.error, x.ready, x.leading]) })}`,
          );
        },
        { timeoutMs: WAIT_MS, intervalMs: 250, what: 'a healthy fleet of three' },
      ).catch((err: unknown) => {
        throw new Error(`${String(err)}\n${[...replicas.values()].map((r) => `${r.pod}: ${r.output()}`).join('\n')}`);
      });
      expect(report.source).toEqual({ namespace: NS, selector: SELECTOR });
      expect(report.observer).toBe('replica-a');
      expect(report.replicas.map((r) => r.pod)).toEqual(['replica-a', 'replica-b', 'replica-c']);
      expect(report.replicas.map((r) => r.address)).toEqual([
        `http://127.0.0.2:${port}`,
        `http://127.0.0.3:${port}`,
        `http://127.0.0.4:${port}`,
      ]);
      const leaders = report.replicas.filter((r) => r.leading);
      expect(leaders).toHaveLength(1);
      for (const r of report.replicas) {
        expect({ pod: r.pod, reachable: r.reachable, ready: r.ready, holder: r.holder, version: r.config_version, phase: r.phase }).toEqual(
          {
            pod: r.pod,
            reachable: true,
            ready: true,
            holder: leaders[0]!.pod,
            version: 'v2',
            phase: 'Running',
          },
        );
        expect(r.uptime_seconds).toBeGreaterThan(0);
        expect(r.event_subscribers).toEqual(expect.any(Number));
        expect(r.caches_fresh).toBe(true);
      }
      // Every replica answers the same fleet.
      const fromB = await fleet('127.0.0.3');
      expect(fromB.observer).toBe('replica-b');
      expect(fromB.replicas.map((r) => [r.pod, r.leading])).toEqual(report.replicas.map((r) => [r.pod, r.leading]));

      // The doctor, as an operator runs it after `kubectl port-forward`.
      const tokenFile = path.join(dir, 'operator-token');
      fs.writeFileSync(tokenFile, operatorToken);
      const doctor = await runDoctor([`http://127.0.0.2:${port}`, '--token-file', tokenFile]);
      expect({ code: doctor.code, stderr: doctor.stderr }).toEqual({ code: 0, stderr: '' });
      expect(doctor.stdout).toContain('replica-a');
      expect(doctor.stdout).not.toContain(operatorToken);
    },
    WAIT_MS + 30_000,
  );

  it('is behind the host guard: no token is a 401, a token without the right a 403', async () => {
    const url = `http://127.0.0.2:${port}/debug/fleet`;
    expect((await request(url)).status).toBe(401);
    const nobody = await plane.serviceAccountToken(NS, 'default');
    const refused = await request(url, { headers: { Authorization: `Bearer ${nobody}` } });
    expect(refused.status).toBe(403);
    expect(refused.text).not.toContain(nobody);
  });

  it(
    'names a replica on an older configuration, and one whose informer cannot list (not ready, caches-synced)',
    async () => {
      await Promise.all([createPod('replica-d', '127.0.0.5'), createPod('replica-e', '127.0.0.6')]);
      start('replica-d', '127.0.0.5', { CONFIG_VERSION: 'v1' });
      start('replica-e', '127.0.0.6', { KUBECONFIG: faultyKubeconfig });
      const report = await eventually(
        async () => {
          const r = await fleet('127.0.0.2');
          const e = r.replicas.find((x) => x.pod === 'replica-e');
          return kinds(r).includes('config_skew') && kinds(r).includes('not_ready') && e?.reachable ? r : undefined;
        },
        { timeoutMs: WAIT_MS, intervalMs: 250, what: 'config_skew and not_ready' },
      );
      const skew = report.findings.find((f) => f.kind === 'config_skew')!;
      expect(skew.replicas).toEqual(['replica-d']);
      expect(skew.message).toContain('v1');
      const notReady = report.findings.find((f) => f.kind === 'not_ready')!;
      expect(notReady.replicas).toEqual(['replica-e']);
      expect(notReady.message).toContain('caches-synced');
      expect(replicaOf(report, 'replica-e').failing_checks.map((c) => c.name)).toContain('caches-synced');
      expect(replicaOf(report, 'replica-d').config_version).toBe('v1');
      expect(report.status).not.toBe('healthy');

      const doctor = await runDoctor([`http://127.0.0.3:${port}`, '--token', operatorToken]);
      expect(doctor.code).toBe(1);
      expect(doctor.stdout).toMatch(/config_skew|configuration/);
      expect(doctor.stdout).not.toContain(operatorToken);

      for (const pod of ['replica-d', 'replica-e']) {
        replicas.get(pod)!.child.kill('SIGKILL');
        await replicas.get(pod)!.exited;
        replicas.delete(pod);
        await plane.request('DELETE', `/api/v1/namespaces/${NS}/pods/${pod}?gracePeriodSeconds=0`, undefined, plane.adminToken);
      }
    },
    WAIT_MS + 30_000,
  );

  it('names a replica cut off, within the view timeout, and reads the others meanwhile', async () => {
    cutOff.partition();
    try {
      // Past the view's minIntervalMs (1 s), so that this request gathers anew.
      await new Promise((resolve) => setTimeout(resolve, 1100));
      const started = performance.now();
      const report = await fleet('127.0.0.2');
      const took = performance.now() - started;
      const c = replicaOf(report, 'replica-c');
      expect({ reachable: c.reachable, error: c.error }).toEqual({ reachable: false, error: 'no complete answer within 3000 ms' });
      expect(report.findings.find((f) => f.kind === 'unreachable')?.replicas).toEqual(['replica-c']);
      expect(replicaOf(report, 'replica-a').reachable).toBe(true);
      expect(replicaOf(report, 'replica-b').reachable).toBe(true);
      // One replica's timeout (3 s by default) and the list, with room for a loaded machine.
      expect(took).toBeLessThan(3000 + 4000);
    } finally {
      cutOff.heal();
      cutOff.cutHung();
    }
  }, 30_000);

  it(
    'names the leader SIGKILLed: unreachable, no leader, then the new one',
    async () => {
      const before = await eventually(
        async () => {
          const r = await fleet('127.0.0.2');
          return r.replicas.filter((x) => x.leading).length === 1 && r.replicas.every((x) => x.reachable) ? r : undefined;
        },
        { timeoutMs: WAIT_MS, intervalMs: 250, what: 'one leader, every replica read' },
      );
      const leader = before.replicas.find((r) => r.leading)!.pod;
      const survivor = ['replica-a', 'replica-b'].find((p) => p !== leader)!;
      const survivorAddress = survivor === 'replica-a' ? '127.0.0.2' : '127.0.0.3';
      replicas.get(leader)!.child.kill('SIGKILL');
      await replicas.get(leader)!.exited;

      // At once: the leader is gone and nobody has taken its Lease yet (2 s lease duration).
      const gone = await eventually(
        async () => {
          const r = await fleet(survivorAddress);
          return kinds(r).includes('no_leader') ? r : undefined;
        },
        { timeoutMs: WAIT_MS, intervalMs: 100, what: 'no_leader right after the kill' },
      );
      expect(replicaOf(gone, leader).reachable).toBe(false);
      expect(gone.findings.find((f) => f.kind === 'unreachable')?.replicas).toContain(leader);
      expect(gone.findings.find((f) => f.kind === 'no_leader')?.severity).toBe('critical');

      // Then a follower takes over: a new leader, the dead one still named unreachable.
      const after = await eventually(
        async () => {
          const r = await fleet(survivorAddress);
          const leading = r.replicas.filter((x) => x.leading).map((x) => x.pod);
          // The followers see the new holder at their next retry: until then the view names the
          // disagreement (holder_disagreement), which is what it is.
          const settled = !kinds(r).includes('no_leader') && !kinds(r).includes('holder_disagreement');
          return leading.length === 1 && leading[0] !== leader && settled ? r : undefined;
        },
        { timeoutMs: WAIT_MS, intervalMs: 250, what: 'a new leader' },
      );
      expect(after.findings.find((f) => f.kind === 'unreachable')?.replicas).toEqual([leader]);
      const newLeader = after.replicas.find((r) => r.leading)!.pod;
      for (const r of after.replicas.filter((x) => x.reachable))
        expect({ pod: r.pod, holder: r.holder }).toEqual({ pod: r.pod, holder: newLeader });
    },
    2 * WAIT_MS + 10_000,
  );

  function runDoctor(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
    return new Promise((resolve) => {
      const child = spawn(process.execPath, [DOCTOR, 'doctor', ...args], { env: { ...process.env, NO_COLOR: '1' } });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (c: Buffer) => void (stdout += c.toString()));
      child.stderr.on('data', (c: Buffer) => void (stderr += c.toString()));
      child.once('exit', (code) => resolve({ code, stdout, stderr }));
    });
  }
});
