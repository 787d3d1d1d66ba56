/**
 * The client-node wiring of docs/kubernetes.md (examples/kubernetes/wiring.ts, as `npm run build`
 * compiles it), run as its own process in front of a fake API server: client-node's real informer
 * LISTs and watches over real sockets, and readiness, resource counts, events and the leader
 * metric are read from the example's own endpoints.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { requireFreshDist } from '../helpers/dist';
import { eventually } from '../helpers/eventually';
import { request } from '../helpers/http';
import { FakeKubeApi, statusBody } from '../helpers/kube-api';

const REPO = path.resolve(__dirname, '..', '..');
const SOURCE = path.join(REPO, 'examples', 'kubernetes', 'wiring.ts');
const COMPILED = path.join(REPO, 'examples', 'dist', 'kubernetes', 'wiring.js');
const LIST = /^GET \/api\/v1\/namespaces\/demo\/services$/;
const WATCH = /^GET \/api\/v1\/namespaces\/demo\/services\?watch=true/;
// The restarts wait 20 ms, then twice as long after each failure in a row (up to 30 s): a LIST that
// failed for a second or two is asked again within a few seconds.
const RECOVERY_MS = 30_000;
const LEASE_GET = /^GET \/apis\/coordination\.k8s\.io\/v1\/namespaces\/demo\/leases\/wiring-example$/;

interface Wiring {
  url: string;
  child: ChildProcess;
  output(): string;
}

const running: ChildProcess[] = [];
const apis: FakeKubeApi[] = [];

/** Starts the compiled example against `api`, and waits until it listens. */
async function startWiring(api: FakeKubeApi, env: Record<string, string> = {}): Promise<Wiring> {
  const server = await api.listen();
  const child = spawn(process.execPath, [COMPILED], {
    cwd: REPO,
    env: {
      ...process.env,
      KUBE_API_SERVER: server,
      POD_NAMESPACE: 'demo',
      POD_NAME: 'replica-a',
      PORT: '0',
      BIND_ADDRESS: '127.0.0.1',
      RESTART_BACKOFF_MS: '20',
      LEASE_DURATION_SECONDS: '1',
      RENEW_INTERVAL_MS: '100',
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

function newApi(): FakeKubeApi {
  const api = new FakeKubeApi('demo');
  apis.push(api);
  return api;
}

beforeAll(() => {
  requireFreshDist();
  if (!fs.existsSync(COMPILED) || fs.statSync(COMPILED).mtimeMs < fs.statSync(SOURCE).mtimeMs) {
    throw new Error(`${path.relative(REPO, COMPILED)} is missing or older than its source; run npm run build`);
  }
});

afterEach(async () => {
  for (const child of running.splice(0)) {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
    }
  }
  await Promise.all(apis.splice(0).map((api) => api.close()));
});

describe('examples/kubernetes/wiring.ts against a fake API server', () => {
  it('answers 503 with the LIST error while LIST fails, and turns ready only after a LIST succeeds', async () => {
    const api = newApi();
    api.addService('web');
    api.addService('db');
    api.listMode = { status: 500, body: statusBody(500, 'etcdserver: leader changed') };
    const wiring = await startWiring(api);

    const failing = await syncFailure(wiring);
    expect(failing.status).toBe(503);
    expect(failing.text).toContain(
      '[-]caches-synced failed: not open: cache "services" failed to sync: HTTP 500: etcdserver: leader changed\n',
    );
    // The informer is started again: LIST keeps being asked, and readiness keeps failing.
    const lists = api.count(LIST);
    await eventually(() => api.count(LIST) >= lists + 2, { what: 'more LISTs' });
    expect((await readyz(wiring)).status).toBe(503);
    expect(await resources(wiring)).toEqual({ services: 0 });

    api.listMode = 'ok';
    await eventually(async () => (await readyz(wiring)).status === 200, {
      what: 'readiness after a successful LIST',
      timeoutMs: RECOVERY_MS,
    });
    expect(await resources(wiring)).toEqual({ services: 2 });
  });

  it('follows add and delete events with the resource counts and the event ring, one event for a whole LIST', async () => {
    const api = newApi();
    for (let i = 0; i < 12; i++) api.addService(`svc-${i}`);
    const wiring = await startWiring(api);
    await eventually(async () => (await readyz(wiring)).status === 200 && api.openWatches === 1, { what: 'a synced cache with its watch' });
    expect(await resources(wiring)).toEqual({ services: 12 });
    api.addService('cache');
    api.addService('queue');
    await eventually(async () => JSON.stringify(await resources(wiring)) === '{"services":14}', {
      what: 'the count after two ADDED events',
    });
    api.deleteService('svc-0');
    await eventually(async () => JSON.stringify(await resources(wiring)) === '{"services":13}', {
      what: 'the count after a DELETED event',
    });
    const events = await request(`${wiring.url}/debug/vars/events?type=services.`);
    expect(events.json<{ type: string; summary: string }[]>().map((e) => `${e.type}: ${e.summary}`)).toEqual([
      'services.resynced: services: 12 added, 0 deleted at once; 12 in the cache',
      'services.added: services demo/cache added',
      'services.added: services demo/queue added',
      'services.deleted: services demo/svc-0 deleted',
    ]);
    const metrics = (await request(`${wiring.url}/metrics`)).text;
    expect(metrics).toContain('ctl_resource_count{type="services"} 13\n');
  });

  it('keeps a LIST that hangs waiting, with a reason, while the process serves on', async () => {
    const api = newApi();
    api.listMode = 'hang';
    const wiring = await startWiring(api);
    await eventually(() => api.count(LIST) === 1, { what: 'the LIST to be asked' });
    const res = await readyz(wiring);
    expect(res.status).toBe(503);
    expect(res.text).toContain('[-]caches-synced failed: not open: waiting for caches to sync: services\n');
    expect((await request(`${wiring.url}/livez`)).status).toBe(200);
    // One LIST, still waiting: nothing restarts an informer that has not failed.
    expect(api.count(LIST)).toBe(1);
  });

  it('reports a LIST answered with invalid JSON, and turns ready once LIST is fixed', async () => {
    const api = newApi();
    api.listMode = { status: 200, body: '{"kind":"ServiceList","items":[' };
    const wiring = await startWiring(api);
    const failing = await syncFailure(wiring);
    expect(failing.status).toBe(503);
    expect(failing.text).toMatch(/cache "services" failed to sync: .*JSON/);
    expect(failing.text.split('\n').filter((l) => l.startsWith('[-]'))).toHaveLength(1);
    api.listMode = 'ok';
    await eventually(async () => (await readyz(wiring)).status === 200, { what: 'readiness after a good LIST', timeoutMs: RECOVERY_MS });
  });

  it('stays ready when the server cuts the watch after sync, and the informer is started again', async () => {
    const api = newApi();
    api.addService('web');
    const wiring = await startWiring(api);
    await eventually(async () => (await readyz(wiring)).status === 200 && api.openWatches === 1, { what: 'a synced cache with its watch' });
    const [watches, lists] = [api.count(WATCH), api.count(LIST)];
    api.cutWatches();
    expect((await readyz(wiring)).status).toBe(200);
    await eventually(() => api.count(WATCH) > watches && api.openWatches === 1, { what: 'a new watch after the cut' });
    expect((await readyz(wiring)).status).toBe(200);
    // Restarted from the last resourceVersion: a watch, no new LIST.
    expect(api.count(LIST)).toBe(lists);
    // The new watch delivers: the informer works again.
    api.addService('after-the-cut');
    await eventually(async () => JSON.stringify(await resources(wiring)) === '{"services":2}', { what: 'the count from the new watch' });
  });

  it('leads through the Lease: waits while another replica renews it, takes it over once it lapses', async () => {
    const api = newApi();
    const renewedByOther = (): void =>
      void api.leases.set('wiring-example', {
        metadata: { name: 'wiring-example', namespace: 'demo', resourceVersion: String(Date.now()) },
        spec: { holderIdentity: 'replica-b', leaseDurationSeconds: 3, renewTime: new Date().toISOString(), leaseTransitions: 0 },
      });
    renewedByOther();
    const other = setInterval(renewedByOther, 100);
    try {
      const wiring = await startWiring(api);
      const reads = api.count(LEASE_GET);
      await eventually(() => api.count(LEASE_GET) >= reads + 3, { what: 'the example to read the held Lease a few times' });
      expect((await request(`${wiring.url}/metrics`)).text).toContain('ctl_leader_election_is_leader 0\n');
      expect(api.count(/^PUT /)).toBe(0);

      clearInterval(other);
      await eventually(async () => (await request(`${wiring.url}/metrics`)).text.includes('ctl_leader_election_is_leader 1\n'), {
        what: 'the example to take the Lease once it lapsed (3 s after the last renewal)',
        timeoutMs: 15_000,
      });
      expect(api.leases.get('wiring-example')?.spec).toMatchObject({ holderIdentity: 'replica-a', leaseTransitions: 1 });
      const events = (await request(`${wiring.url}/debug/vars/events?type=leader.`)).json<{ summary: string }[]>();
      expect(events.map((e) => e.summary)).toEqual(['replica-a leads']);
    } finally {
      clearInterval(other);
    }
  });

  it('creates the Lease when there is none, and renews it', async () => {
    const api = newApi();
    const wiring = await startWiring(api);
    await eventually(async () => (await request(`${wiring.url}/metrics`)).text.includes('ctl_leader_election_is_leader 1\n'), {
      what: 'leadership from a new Lease',
    });
    expect(api.count(/^POST \/apis\/coordination\.k8s\.io\/v1\/namespaces\/demo\/leases$/)).toBe(1);
    const first = api.leases.get('wiring-example')!.spec.renewTime;
    await eventually(() => api.leases.get('wiring-example')!.spec.renewTime !== first, { what: 'a renewal' });
    expect(api.leases.get('wiring-example')!.spec).toMatchObject({ holderIdentity: 'replica-a' });
    // MicroTime, as the API server parses it.
    expect(api.leases.get('wiring-example')!.spec.renewTime).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
  });
});
