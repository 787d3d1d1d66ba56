/**
 * client-go's own leader election (scripts/peers/kube-apiserver/leader-election: tools/leaderelection
 * on a LeaseLock, built by scripts/build-peers.sh), three replicas against a real kube-apiserver
 * under the rights of examples/kubernetes/rbac.yaml: one holder, a handover when the holder is
 * stopped (it releases the Lease) and a takeover when it is killed. Correctness only: the timings,
 * beside the package's elector, are bench/takeover.js's. It proves the peer the benchmark compares
 * with works; skipped outside CI when the control plane or the peer is not built.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import yaml from 'js-yaml';
import {
  controlPlaneMissing,
  describeNeedingControlPlane,
  peerBinary,
  startControlPlane,
  type ControlPlane,
  type KubeObject,
} from '../helpers/control-plane';
import { eventually } from '../helpers/eventually';

const REPO = path.resolve(__dirname, '..', '..');
const NS = 'takeover';
const LEASE = 'client-go-election';
/** Small durations with client-go's ratios: 2 s lease, 1.5 s renew deadline, 300 ms retries. */
const FLAGS = ['--lease-duration=2s', '--renew-deadline=1500ms', '--retry-period=300ms'];
/** Generous: a loaded 2-core CI machine, and a whole lease duration for a takeover. */
const WAIT_MS = 20_000;

function peerMissing(): string | undefined {
  const plane = controlPlaneMissing();
  if (plane !== undefined) return plane;
  const bin = peerBinary('leader-election');
  if (fs.existsSync(bin)) return undefined;
  return `no client-go leader-election peer (${bin} missing); build it with \`bash scripts/build-peers.sh kube-apiserver\``;
}

/** The objects of examples/kubernetes/rbac.yaml, moved to the test's namespace. */
function rbac(): KubeObject[] {
  const docs = yaml.loadAll(fs.readFileSync(path.join(REPO, 'examples', 'kubernetes', 'rbac.yaml'), 'utf8')) as KubeObject[];
  return docs.map((obj) => {
    const moved = JSON.parse(JSON.stringify(obj)) as KubeObject & { subjects?: { namespace?: string }[] };
    moved.metadata.namespace = NS;
    for (const subject of moved.subjects ?? []) subject.namespace = NS;
    return moved;
  });
}

interface PeerEvent {
  event: 'started' | 'stopped' | 'new-leader';
  identity: string;
  time: string;
}

interface Replica {
  identity: string;
  child: ChildProcess;
  output(): string;
  events(): PeerEvent[];
  exited: Promise<number | null>;
}

/** Whether a replica's own callbacks say it leads now: started, and not stopped since. */
function leads(replica: Replica): boolean {
  const own = replica.events().filter((e) => e.event !== 'new-leader');
  return own.length > 0 && own[own.length - 1]!.event === 'started';
}

describeNeedingControlPlane(peerMissing())("client-go's leaderelection against a real API server", () => {
  let plane: ControlPlane;
  let kubeconfig: string;
  const replicas = new Map<string, Replica>();

  function start(identity: string): Replica {
    const child = spawn(
      peerBinary('leader-election'),
      [`--kubeconfig=${kubeconfig}`, `--namespace=${NS}`, `--name=${LEASE}`, `--identity=${identity}`, ...FLAGS],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const replica: Replica = {
      identity,
      child,
      output: () => `${stdout}${stderr}`,
      events: () =>
        stdout
          .split('\n')
          .filter((line) => line.startsWith('{'))
          .map((line) => JSON.parse(line) as PeerEvent),
      exited,
    };
    replicas.set(identity, replica);
    void exited.then(() => replicas.delete(identity));
    return replica;
  }

  async function holder(): Promise<string> {
    const res = await plane.request('GET', `/apis/coordination.k8s.io/v1/namespaces/${NS}/leases/${LEASE}`);
    if (res.status === 404) return '';
    if (res.status !== 200) throw new Error(`GET lease: ${res.status} ${JSON.stringify(res.body)}`);
    return (res.body.spec?.holderIdentity as string | undefined) ?? '';
  }

  /** Waits until one running replica holds the Lease and it alone says it leads; answers it. */
  async function oneLeader(other?: string): Promise<Replica> {
    return eventually(
      async () => {
        const current = await holder();
        const leading = [...replicas.values()].filter(leads).map((r) => r.identity);
        if (current === '' || current === other || leading.length !== 1 || leading[0] !== current) {
          throw new Error(`holder ${JSON.stringify(current)}, leading by their callbacks: ${JSON.stringify(leading)}`);
        }
        return replicas.get(current);
      },
      { timeoutMs: WAIT_MS, what: `one leader${other === undefined ? '' : ` other than ${other}`}` },
    );
  }

  beforeAll(async () => {
    plane = await startControlPlane();
    await plane.namespace(NS);
    await plane.apply(rbac());
    kubeconfig = plane.kubeconfig(await plane.serviceAccountToken(NS, 'lb-controller'));
    for (const identity of ['replica-a', 'replica-b', 'replica-c']) start(identity);
  }, 90_000);

  afterAll(async () => {
    const left = [...replicas.values()];
    for (const replica of left) replica.child.kill('SIGKILL');
    await Promise.all(left.map((replica) => replica.exited));
    await plane?.stop();
  });

  it('elects exactly one holder, whom every replica reports as the leader', async () => {
    const leader = await oneLeader();
    await eventually(
      () =>
        [...replicas.values()].every(
          (r) =>
            r
              .events()
              .filter((e) => e.event === 'new-leader')
              .at(-1)?.identity === leader.identity,
        ),
      { timeoutMs: WAIT_MS, what: 'every replica to report the holder as the new leader' },
    );
  });

  it('hands the Lease over when the holder is stopped: it releases and exits, another replica takes it', async () => {
    const leader = await oneLeader();
    leader.child.kill('SIGTERM');
    await expect(leader.exited).resolves.toBe(0);
    expect(leader.events()).toContainEqual(expect.objectContaining({ event: 'stopped', identity: leader.identity }));
    const next = await oneLeader(leader.identity);
    expect(next.identity).not.toBe(leader.identity);
    start('replica-d');
  });

  it('takes the Lease over when the holder is killed', async () => {
    const leader = await oneLeader();
    leader.child.kill('SIGKILL');
    await leader.exited;
    const next = await oneLeader(leader.identity);
    expect(next.identity).not.toBe(leader.identity);
    expect(replicas.size).toBe(2);
  });
});
