/**
 * A real Kubernetes control plane for the tests: etcd and kube-apiserver, built from their Go
 * modules by `scripts/build-peers.sh` into the peers cache, started on loopback with RBAC on and
 * stopped by PID. Each test file that needs one starts its own (about 5 s) and stops it in
 * `afterAll`. On a machine without the binaries the tests skip with a message saying how to build
 * them; in CI a missing control plane fails.
 */

import { spawn, type ChildProcess } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { describeWithPeer } from './peers';
import { freePorts } from './ports';

const REPO = path.resolve(__dirname, '..', '..');
const PEERS_DIR = process.env.PEERS_DIR || path.join(os.homedir(), '.cache', 'controller-introspection', 'peers');
const START_TIMEOUT_MS = 60_000;

/** The version a peer's module pins in `scripts/peers/<peer>/go.mod`. */
function pinned(peer: string, module: string): string {
  const gomod = fs.readFileSync(path.join(REPO, 'scripts', 'peers', peer, 'go.mod'), 'utf8');
  const match = new RegExp(`^\\s*(?:require\\s+)?${module.replace(/[.]/g, '\\.')}\\s+(v\\S+)`, 'm').exec(gomod);
  if (!match) throw new Error(`scripts/peers/${peer}/go.mod pins no ${module}`);
  return match[1];
}

/** Where `scripts/build-peers.sh` puts each binary. */
export function peerBinary(peer: 'kube-apiserver' | 'etcd' | 'prometheus' | 'promtool' | 'leader-election' | 'native-reference'): string {
  const [dir, module] = {
    'kube-apiserver': ['kube-apiserver', 'k8s.io/kubernetes'],
    'leader-election': ['kube-apiserver', 'k8s.io/kubernetes'],
    etcd: ['etcd', 'go.etcd.io/etcd/server/v3'],
    prometheus: ['prometheus', 'github.com/prometheus/prometheus'],
    promtool: ['prometheus', 'github.com/prometheus/prometheus'],
    'native-reference': ['prometheus', 'github.com/prometheus/prometheus'],
  }[peer];
  return path.join(PEERS_DIR, `${dir}-${pinned(dir, module)}`, peer);
}

/** Why the control plane cannot start here, or undefined when both binaries are built. */
export function controlPlaneMissing(): string | undefined {
  const missing = (['etcd', 'kube-apiserver'] as const).map(peerBinary).filter((bin) => !fs.existsSync(bin));
  if (missing.length === 0) return undefined;
  return `no Kubernetes control plane (${missing.join(', ')} missing); build it with \`bash scripts/build-peers.sh etcd kube-apiserver\` (needs Go 1.26 and the Go module proxy; see CONTRIBUTING.md)`;
}

/**
 * `describe` for tests that need the control plane (and whatever else `missing` names), else a
 * skip with the reason (a failure in CI). A CI line that leaves the Kubernetes tests to the lines
 * that built the control plane sets `CI_CONTROL_PLANE=elsewhere`, and skips them with that said.
 */
export function describeNeedingControlPlane(missing: string | undefined): jest.Describe {
  if (process.env.CI_CONTROL_PLANE === 'elsewhere') {
    console.warn('skipping: this CI line leaves the Kubernetes tests to the lines that run them (CI_CONTROL_PLANE=elsewhere)');
    return describe.skip;
  }
  return describeWithPeer(missing);
}

/** `describe` with a real control plane, else a skip with the reason (a failure in CI). */
export const describeWithControlPlane: jest.Describe = describeNeedingControlPlane(controlPlaneMissing());

/** An answer of the API server, its body parsed when it is JSON. */
export interface ApiAnswer {
  status: number;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- test code reads whatever the server sent
  body: any;
}

/** A running etcd + kube-apiserver pair. */
export interface ControlPlane {
  /** The API server, `https://127.0.0.1:<port>`. */
  readonly url: string;
  /** A bearer token of a `system:masters` user. */
  readonly adminToken: string;
  /** The PEM file of the API server's self-signed serving certificate (and its CA). */
  readonly caFile: string;
  /** The folder holding the servers' files. */
  readonly dir: string;
  /** One request, as the admin unless another token is given; the body is sent as JSON. */
  request(method: string, path: string, body?: unknown, token?: string): Promise<ApiAnswer>;
  /** Creates the namespace unless it exists. */
  namespace(name: string): Promise<void>;
  /** Creates the ServiceAccount unless it exists, and answers a token for it (TokenRequest, 1 h). */
  serviceAccountToken(namespace: string, name: string, audiences?: readonly string[]): Promise<string>;
  /** Applies objects (create, or replace when they exist), failing on any refusal. */
  apply(objects: readonly KubeObject[]): Promise<void>;
  /** Writes a kubeconfig for `server` (default the API server itself) and `token`; answers its path. */
  kubeconfig(token: string, server?: string): string;
  /** Stops the API server only (etcd keeps its data); {@link ControlPlane.startApiServer} starts it again. */
  stopApiServer(): Promise<void>;
  /** Starts the API server again on the same port, and waits until it is ready. */
  startApiServer(): Promise<void>;
  /** Stops both servers and removes their files. */
  stop(): Promise<void>;
}

/** A Kubernetes object as a manifest gives it. */
export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; [key: string]: unknown };
  [key: string]: unknown;
}

const started = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of started) child.kill('SIGKILL');
});

function startProcess(bin: string, args: string[], logFile: string): ChildProcess {
  const log = fs.openSync(logFile, 'a');
  const child = spawn(bin, args, { stdio: ['ignore', log, log] });
  fs.closeSync(log);
  started.add(child);
  child.once('exit', () => started.delete(child));
  return child;
}

async function stopProcess(child: ChildProcess, graceMs = 5000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

function tail(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8').split('\n').slice(-30).join('\n');
  } catch {
    return '(no log)';
  }
}

/** One HTTPS request to the API server; TLS is not verified (the server's certificate is self-signed). */
function apiRequest(url: string, method: string, urlPath: string, token: string, body?: unknown, timeoutMs = 10_000): Promise<ApiAnswer> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = https.request(
      `${url}${urlPath}`,
      {
        method,
        rejectUnauthorized: false,
        headers: {
          authorization: `Bearer ${token}`,
          accept: 'application/json',
          ...(payload === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }),
        },
        timeout: timeoutMs,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: unknown = text;
          try {
            parsed = JSON.parse(text);
          } catch {
            // not JSON: keep the text
          }
          resolve({ status: res.statusCode ?? 0, body: parsed });
        });
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${method} ${urlPath}: no answer in ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end(payload);
  });
}

async function waitUntil(what: string, check: () => Promise<boolean>, child: ChildProcess, logFile: string): Promise<void> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  let last = '';
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${what} exited (${child.exitCode}):\n${tail(logFile)}`);
    try {
      if (await check()) return;
    } catch (err) {
      last = String(err);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`${what} not ready in ${START_TIMEOUT_MS} ms (${last}):\n${tail(logFile)}`);
}

/** The collection of an object in the REST API (`/apis/apps/v1/namespaces/x/deployments`), for the kinds the tests apply. */
export function resourcePathOf(obj: KubeObject): string {
  const plural: Record<string, string> = {
    Namespace: 'namespaces',
    ServiceAccount: 'serviceaccounts',
    Service: 'services',
    ConfigMap: 'configmaps',
    Secret: 'secrets',
    Deployment: 'deployments',
    NetworkPolicy: 'networkpolicies',
    Role: 'roles',
    RoleBinding: 'rolebindings',
    ClusterRole: 'clusterroles',
    ClusterRoleBinding: 'clusterrolebindings',
    Lease: 'leases',
  };
  const resource = plural[obj.kind];
  if (resource === undefined) throw new Error(`control plane helper: no REST path known for kind ${obj.kind}`);
  const group = obj.apiVersion.includes('/') ? `/apis/${obj.apiVersion}` : `/api/${obj.apiVersion}`;
  const ns = obj.metadata.namespace === undefined ? '' : `/namespaces/${obj.metadata.namespace}`;
  return `${group}${ns}/${resource}`;
}

/** Starts etcd and kube-apiserver on free loopback ports, with RBAC on, and waits until both are ready. */
export async function startControlPlane(): Promise<ControlPlane> {
  const missing = controlPlaneMissing();
  if (missing !== undefined) throw new Error(missing);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'control-plane-'));
  const [etcdClient, etcdPeer, apiPort] = await freePorts(3);
  const adminToken = randomBytes(24).toString('hex');
  fs.writeFileSync(path.join(dir, 'tokens.csv'), `${adminToken},admin,admin-uid,system:masters\n`, { mode: 0o600 });
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  fs.writeFileSync(path.join(dir, 'sa.key'), privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
  fs.writeFileSync(path.join(dir, 'sa.pub'), publicKey.export({ type: 'spki', format: 'pem' }));

  const etcdLog = path.join(dir, 'etcd.log');
  const etcd = startProcess(
    peerBinary('etcd'),
    [
      '--name=test',
      `--data-dir=${path.join(dir, 'etcd')}`,
      `--listen-client-urls=http://127.0.0.1:${etcdClient}`,
      `--advertise-client-urls=http://127.0.0.1:${etcdClient}`,
      `--listen-peer-urls=http://127.0.0.1:${etcdPeer}`,
      `--initial-advertise-peer-urls=http://127.0.0.1:${etcdPeer}`,
      `--initial-cluster=test=http://127.0.0.1:${etcdPeer}`,
      '--unsafe-no-fsync',
      '--log-level=warn',
    ],
    etcdLog,
  );
  const url = `https://127.0.0.1:${apiPort}`;
  const apiLog = path.join(dir, 'kube-apiserver.log');
  const apiArgs = [
    `--etcd-servers=http://127.0.0.1:${etcdClient}`,
    '--bind-address=127.0.0.1',
    '--advertise-address=127.0.0.1',
    // A loopback address cannot be published in the kubernetes Service's endpoints.
    '--endpoint-reconciler-type=none',
    `--secure-port=${apiPort}`,
    `--cert-dir=${path.join(dir, 'certs')}`,
    '--authorization-mode=RBAC',
    `--token-auth-file=${path.join(dir, 'tokens.csv')}`,
    '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
    `--service-account-key-file=${path.join(dir, 'sa.pub')}`,
    `--service-account-signing-key-file=${path.join(dir, 'sa.key')}`,
    '--api-audiences=https://kubernetes.default.svc.cluster.local',
    '--service-cluster-ip-range=10.96.0.0/16',
    '--disable-admission-plugins=ServiceAccount',
    '--enable-priority-and-fairness=false',
    '--v=0',
  ];
  let api: ChildProcess | undefined;
  const ready = async (): Promise<boolean> => (await apiRequest(url, 'GET', '/readyz', adminToken, undefined, 2000)).status === 200;
  const startApiServer = async (): Promise<void> => {
    api = startProcess(peerBinary('kube-apiserver'), apiArgs, apiLog);
    await waitUntil('kube-apiserver', ready, api, apiLog);
  };
  try {
    await waitUntil(
      'etcd',
      async () => {
        const res = await fetch(`http://127.0.0.1:${etcdClient}/health`);
        return res.ok;
      },
      etcd,
      etcdLog,
    );
    await startApiServer();
  } catch (err) {
    if (api) await stopProcess(api);
    await stopProcess(etcd);
    throw err;
  }

  const request = (method: string, urlPath: string, body?: unknown, token = adminToken): Promise<ApiAnswer> =>
    apiRequest(url, method, urlPath, token, body);
  const create = async (collection: string, body: KubeObject): Promise<void> => {
    const res = await request('POST', collection, body);
    if (res.status !== 201 && res.status !== 409) throw new Error(`POST ${collection}: ${res.status} ${JSON.stringify(res.body)}`);
  };
  const plane: ControlPlane = {
    url,
    adminToken,
    caFile: path.join(dir, 'certs', 'apiserver.crt'),
    dir,
    request,
    async namespace(name) {
      await create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    },
    async serviceAccountToken(namespace, name, audiences) {
      await plane.namespace(namespace);
      await create(`/api/v1/namespaces/${namespace}/serviceaccounts`, {
        apiVersion: 'v1',
        kind: 'ServiceAccount',
        metadata: { name, namespace },
      });
      const res = await request('POST', `/api/v1/namespaces/${namespace}/serviceaccounts/${name}/token`, {
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'TokenRequest',
        spec: { expirationSeconds: 3600, ...(audiences === undefined ? {} : { audiences }) },
      });
      if (res.status !== 201) throw new Error(`TokenRequest for ${namespace}/${name}: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body.status.token as string;
    },
    async apply(objects) {
      for (const obj of objects) {
        if (obj.metadata.namespace !== undefined) await plane.namespace(obj.metadata.namespace);
        const collection = resourcePathOf(obj);
        const res = await request('POST', collection, obj);
        if (res.status === 201) continue;
        if (res.status !== 409) throw new Error(`create ${obj.kind} ${obj.metadata.name}: ${res.status} ${JSON.stringify(res.body)}`);
        const existing = await request('GET', `${collection}/${obj.metadata.name}`);
        const replaced = await request('PUT', `${collection}/${obj.metadata.name}`, {
          ...obj,
          metadata: { ...obj.metadata, resourceVersion: existing.body.metadata.resourceVersion },
        });
        if (replaced.status !== 200)
          throw new Error(`replace ${obj.kind} ${obj.metadata.name}: ${replaced.status} ${JSON.stringify(replaced.body)}`);
      }
    },
    kubeconfig(token, server = url) {
      const file = path.join(dir, `kubeconfig-${randomBytes(4).toString('hex')}.json`);
      const config = {
        apiVersion: 'v1',
        kind: 'Config',
        // The API server's certificate is self-signed; client-node also refuses a plain-HTTP server (the
        // fault proxy) with a token unless TLS checks are off.
        clusters: [{ name: 'test', cluster: { server, 'insecure-skip-tls-verify': true } }],
        users: [{ name: 'test', user: { token } }],
        contexts: [{ name: 'test', context: { cluster: 'test', user: 'test' } }],
        'current-context': 'test',
      };
      fs.writeFileSync(file, JSON.stringify(config), { mode: 0o600 });
      return file;
    },
    async stopApiServer() {
      if (api) await stopProcess(api);
    },
    startApiServer,
    async stop() {
      if (api) await stopProcess(api);
      await stopProcess(etcd);
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
  return plane;
}
