/**
 * The client-node wiring of docs/kubernetes.md (examples/kubernetes/wiring.ts, as `npm run build`
 * compiles it), run as its own process against a real kube-apiserver with RBAC on, under the rights
 * of examples/kubernetes/rbac.yaml. Faults the server will not produce on demand (a LIST answered
 * 500 or with broken JSON, a LIST that hangs, a watch cut or gone silent) are injected by a proxy
 * in front of it. Readiness, resource counts, events and the leader metric are read from the
 * example's own endpoints.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import yaml from 'js-yaml';
import { describeWithControlPlane, startControlPlane, type ControlPlane, type KubeObject } from '../helpers/control-plane';
import { requireFreshDist } from '../helpers/dist';
import { eventually } from '../helpers/eventually';
import { FaultProxy, statusBody } from '../helpers/fault-proxy';
import { request } from '../helpers/http';

const REPO = path.resolve(__dirname, '..', '..');
const SOURCE = path.join(REPO, 'examples', 'kubernetes', 'wiring.ts');
const COMPILED = path.join(REPO, 'examples', 'dist', 'kubernetes', 'wiring.js');
const LIST = /^GET \/api\/v1\/namespaces\/[^/]+\/services(\?(?!.*watch=)|$)/;
const WATCH = /^GET \/api\/v1\/namespaces\/[^/]+\/services\?.*watch=true/;
// The restarts wait 20 ms, then twice as long after each failure in a row (up to 30 s): a LIST that
// failed for a second or two is asked again within a few seconds.
const RECOVERY_MS = 30_000;

/** The objects of examples/kubernetes/rbac.yaml, moved to `namespace`. */
function rbacFor(namespace: string, binding = true): KubeObject[] {
  const docs = yaml.loadAll(fs.readFileSync(path.join(REPO, 'examples', 'kubernetes', 'rbac.yaml'), 'utf8')) as KubeObject[];
  return docs
    .filter((obj) => binding || obj.kind !== 'RoleBinding')
    .map((obj) => {
      const moved = JSON.parse(JSON.stringify(obj)) as KubeObject & { subjects?: { namespace?: string }[] };
      moved.metadata.namespace = namespace;
      for (const subject of moved.subjects ?? []) subject.namespace = namespace;
      return moved;
    });
}

interface Wiring {
  url: string;
  child: ChildProcess;
  output(): string;
}

let plane: ControlPlane;
let namespaces = 0;
const running: ChildProcess[] = [];
const proxies: FaultProxy[] = [];

/** A namespace of its own for one test, with the example's ServiceAccount and (unless told) its binding. */
async function newNamespace(binding = true): Promise<{ namespace: string; token: string }> {
  const namespace = `wiring-${++namespaces}`;
  await plane.namespace(namespace);
  await plane.apply(rbacFor(namespace, binding));
  const token = await plane.serviceAccountToken(namespace, 'lb-controller');
  return { namespace, token };
}

async function addService(namespace: string, name: string): Promise<void> {
  const res = await plane.request('POST', `/api/v1/namespaces/${namespace}/services`, {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace },
    spec: { ports: [{ port: 80 }] },
  });
  if (res.status !== 201) throw new Error(`create service ${name}: ${res.status} ${JSON.stringify(res.body)}`);
}

async function deleteService(namespace: string, name: string): Promise<void> {
  const res = await plane.request('DELETE', `/api/v1/namespaces/${namespace}/services/${name}`);
  if (res.status !== 200) throw new Error(`delete service ${name}: ${res.status} ${JSON.stringify(res.body)}`);
}

async function newProxy(): Promise<{ proxy: FaultProxy; url: string }> {
  const proxy = new FaultProxy(plane.url);
  proxies.push(proxy);
  return { proxy, url: await proxy.listen() };
}

/** Starts the compiled example against `server` as the namespace's ServiceAccount, and waits until it listens. */
async function startWiring(server: string, ns: { namespace: string; token: string }, env: Record<string, string> = {}): Promise<Wiring> {
  const child = spawn(process.execPath, [COMPILED], {
    cwd: REPO,
    env: {
      ...process.env,
      KUBECONFIG: plane.kubeconfig(ns.token, server),
      POD_NAMESPACE: ns.namespace,
      POD_NAME: 'replica-a',
      PORT: '0',
      BIND_ADDRESS: '127.0.0.1',
      RESTART_BACKOFF_MS: '20',
      LEASE_DURATION_SECONDS: '2',
      RENEW_INTERVAL_MS: '200',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.push(child);
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const port = await eventually(
    () => {
      if (child.exitCode !== null) throw new Error(`the example exited: ${output}`);
      const match = /"msg":"listening","port":(\d+)/.exec(output);
      return match ? Number(match[1]) : undefined;
    },
    { timeoutMs: 15_000, what: 'the example to listen' },
  );
  return { url: `http://127.0.0.1:${port}`, child, output: () => output };
}

async function readyz(wiring: Wiring): Promise<{ status: number; text: string }> {
  const res = await request(`${wiring.url}/readyz?verbose`);
  return { status: res.status, text: res.text };
}

/** The first readiness answer that reports a failed sync (rather than still waiting for one). */
function syncFailure(wiring: Wiring): Promise<{ status: number; text: string }> {
  return eventually(
    async () => {
      const res = await readyz(wiring);
      return res.text.includes('failed to sync') && res;
    },
    { what: 'readiness to report the failed LIST' },
  );
}

async function resources(wiring: Wiring): Promise<unknown> {
  return (await request(`${wiring.url}/debug/vars/resources`)).json();
}

function countIs(wiring: Wiring, count: number, what: string): Promise<unknown> {
  return eventually(async () => JSON.stringify(await resources(wiring)) === JSON.stringify({ services: count }), { what });
}

describeWithControlPlane('examples/kubernetes/wiring.ts against a real API server', () => {
  beforeAll(async () => {
    requireFreshDist();
    if (!fs.existsSync(COMPILED) || fs.statSync(COMPILED).mtimeMs < fs.statSync(SOURCE).mtimeMs) {
      throw new Error(`${path.relative(REPO, COMPILED)} is missing or older than its source; run npm run build`);
    }
    plane = await startControlPlane();
  }, 90_000);

  afterAll(async () => {
    await plane?.stop();
  });

  afterEach(async () => {
    for (const child of running.splice(0)) {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGKILL');
        await exited;
      }
    }
    await Promise.all(proxies.splice(0).map((proxy) => proxy.close()));
  });

  it('answers 503 with the LIST error while LIST fails, and turns ready only after a LIST succeeds', async () => {
    const ns = await newNamespace();
    await addService(ns.namespace, 'web');
    await addService(ns.namespace, 'db');
    const { proxy, url } = await newProxy();
    let failing = true;
    proxy.rule = (req) => (failing && LIST.test(req.line) ? { status: 500, body: statusBody(500, 'etcdserver: leader changed') } : 'pass');
    const wiring = await startWiring(url, ns);

    const failure = await syncFailure(wiring);
    expect(failure.status).toBe(503);
    expect(failure.text).toContain(
      '[-]caches-synced failed: not open: cache "services" failed to sync: HTTP 500: etcdserver: leader changed\n',
    );
    // The informer is started again: LIST keeps being asked, and readiness keeps failing.
    const lists = proxy.count(LIST);
    await eventually(() => proxy.count(LIST) >= lists + 2, { what: 'more LISTs' });
    expect((await readyz(wiring)).status).toBe(503);
    expect(await resources(wiring)).toEqual({ services: 0 });

    failing = false;
    await eventually(async () => (await readyz(wiring)).status === 200, {
      what: 'readiness after a successful LIST',
      timeoutMs: RECOVERY_MS,
    });
    expect(await resources(wiring)).toEqual({ services: 2 });
  });

  it('is not ready while RBAC denies the LIST, says so, and turns ready once the binding grants it', async () => {
    const ns = await newNamespace(false);
    await addService(ns.namespace, 'web');
    const wiring = await startWiring(plane.url, ns);
    const failure = await syncFailure(wiring);
    expect(failure.status).toBe(503);
    expect(failure.text).toContain(
      `cache "services" failed to sync: HTTP 403: services is forbidden: User "system:serviceaccount:${ns.namespace}:lb-controller" cannot list`,
    );
    // The token never reaches readiness, the logs or the variables.
    expect(failure.text).not.toContain(ns.token.slice(-16));
    expect(wiring.output()).not.toContain(ns.token.slice(-16));

    await plane.apply(rbacFor(ns.namespace).filter((obj) => obj.kind === 'RoleBinding'));
    await eventually(async () => (await readyz(wiring)).status === 200, {
      what: 'readiness once the LIST is granted',
      timeoutMs: RECOVERY_MS,
    });
    expect(await resources(wiring)).toEqual({ services: 1 });
  });

  it('follows add and delete events with the resource counts and the event ring, one event for a whole LIST', async () => {
    const ns = await newNamespace();
    await Promise.all(Array.from({ length: 12 }, (_, i) => addService(ns.namespace, `svc-${i}`)));
    const { proxy, url } = await newProxy();
    const wiring = await startWiring(url, ns);
    await eventually(async () => (await readyz(wiring)).status === 200 && proxy.openWatches === 1, {
      what: 'a synced cache with its watch',
    });
    expect(await resources(wiring)).toEqual({ services: 12 });
    await addService(ns.namespace, 'cache');
    await countIs(wiring, 13, 'the count after an ADDED event');
    await addService(ns.namespace, 'queue');
    await countIs(wiring, 14, 'the count after another ADDED event');
    await deleteService(ns.namespace, 'svc-0');
    await countIs(wiring, 13, 'the count after a DELETED event');
    const events = await request(`${wiring.url}/debug/vars/events?type=services.`);
    expect(events.json<{ type: string; summary: string }[]>().map((e) => `${e.type}: ${e.summary}`)).toEqual([
      'services.resynced: services: 12 added, 0 deleted at once; 12 in the cache',
      `services.added: services ${ns.namespace}/cache added`,
      `services.added: services ${ns.namespace}/queue added`,
      `services.deleted: services ${ns.namespace}/svc-0 deleted`,
    ]);
    const metrics = (await request(`${wiring.url}/metrics`)).text;
    expect(metrics).toContain('ctl_resource_count{type="services"} 13\n');
  });

  it('keeps a LIST that hangs waiting, with a reason, while the process serves on', async () => {
    const ns = await newNamespace();
    const { proxy, url } = await newProxy();
    proxy.rule = (req) => (LIST.test(req.line) ? 'hang' : 'pass');
    const wiring = await startWiring(url, ns);
    await eventually(() => proxy.count(LIST) === 1, { what: 'the LIST to be asked' });
    const res = await readyz(wiring);
    expect(res.status).toBe(503);
    expect(res.text).toContain('[-]caches-synced failed: not open: waiting for caches to sync: services\n');
    expect((await request(`${wiring.url}/livez`)).status).toBe(200);
    // One LIST, still waiting: nothing restarts an informer that has not failed.
    expect(proxy.count(LIST)).toBe(1);
  });

  it('reports a LIST answered with invalid JSON, and turns ready once LIST is fixed', async () => {
    const ns = await newNamespace();
    const { proxy, url } = await newProxy();
    let broken = true;
    proxy.rule = (req) => (broken && LIST.test(req.line) ? { status: 200, body: '{"kind":"ServiceList","items":[' } : 'pass');
    const wiring = await startWiring(url, ns);
    const failure = await syncFailure(wiring);
    expect(failure.status).toBe(503);
    expect(failure.text).toMatch(/cache "services" failed to sync: .*JSON/);
    expect(failure.text.split('\n').filter((l) => l.startsWith('[-]'))).toHaveLength(1);
    broken = false;
    await eventually(async () => (await readyz(wiring)).status === 200, { what: 'readiness after a good LIST', timeoutMs: RECOVERY_MS });
  });

  it('stays ready when the watch is cut after sync, and resumes it from the last resourceVersion', async () => {
    const ns = await newNamespace();
    await addService(ns.namespace, 'web');
    const { proxy, url } = await newProxy();
    const wiring = await startWiring(url, ns);
    await eventually(async () => (await readyz(wiring)).status === 200 && proxy.openWatches === 1, {
      what: 'a synced cache with its watch',
    });
    const [watches, lists] = [proxy.count(WATCH), proxy.count(LIST)];
    proxy.cutWatches();
    expect((await readyz(wiring)).status).toBe(200);
    // A change made while no watch is open arrives through the new one.
    await addService(ns.namespace, 'during-the-cut');
    await eventually(() => proxy.count(WATCH) > watches && proxy.openWatches === 1, { what: 'a new watch after the cut' });
    expect((await readyz(wiring)).status).toBe(200);
    // Resumed from the last resourceVersion: a watch, no new LIST.
    expect(proxy.count(LIST)).toBe(lists);
    await countIs(wiring, 2, 'the count from the new watch');
  });

  it('notices a watch gone silent within 1.25 bounds, fails readiness until its restart opens, and loses no change', async () => {
    const ns = await newNamespace();
    await addService(ns.namespace, 'web');
    const { proxy, url } = await newProxy();
    const idleMs = 1500;
    const wiring = await startWiring(url, ns, { WATCH_IDLE_MS: String(idleMs) });
    await eventually(async () => (await readyz(wiring)).status === 200 && proxy.openWatches === 1, {
      what: 'a synced cache with its watch',
    });
    // The open watch goes silent; new watches get no answer at all.
    let hang = true;
    proxy.rule = (req) => (hang && WATCH.test(req.line) ? 'hang' : 'pass');
    const silencedAt = performance.now();
    proxy.silenceWatches();
    await addService(ns.namespace, 'held-back');
    const stale = await eventually(
      async () => {
        const res = await readyz(wiring);
        return res.status === 503 && res;
      },
      { what: 'readiness to report the silent watch', timeoutMs: 10_000 },
    );
    // Noticed within 1.25 bounds of the last sign of life (and at least one bound after it).
    const noticedMs = performance.now() - silencedAt;
    expect(noticedMs).toBeLessThan(idleMs * 1.25 + 1000);
    expect(stale.text).toMatch(/\[-\]caches-synced failed: not open: cache "services" may be stale: watch silent for \d+ s, restarted\n/);
    expect(await resources(wiring)).toEqual({ services: 1 });
    await eventually(() => proxy.count(WATCH) >= 2, { what: 'the restarted watch' });

    // The API server answers again: the hung watch is cut, the next one opens and replays the change.
    hang = false;
    proxy.cutHung();
    await eventually(async () => (await readyz(wiring)).status === 200, {
      what: 'readiness after the restart',
      timeoutMs: RECOVERY_MS,
    }).catch(async (err: Error) => {
      // What the cache went through, for a failure in CI.
      throw new Error(`${err.message}\nreadiness: ${(await readyz(wiring)).text}\nrequests:\n${proxy.requests().join('\n')}`);
    });
    await countIs(wiring, 2, 'the change the silent watch held back');
  });
});
