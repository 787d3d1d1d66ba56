'use strict';
/**
 * A real Kubernetes control plane for the tests and the benchmarks: etcd and kube-apiserver, built
 * from their Go modules by `scripts/build-peers.sh` into the peers cache, started on loopback with
 * RBAC on and stopped by PID. Plain CommonJS, since the benchmarks run under `node` without a
 * TypeScript loader; `control-plane.d.ts` beside it gives the tests its types, and
 * `__tests__/helpers/control-plane.ts` adds what belongs to Jest (the `describe` that skips without
 * the binaries). Not in the package (`files` in package.json).
 */

const { spawn } = require('node:child_process');
const { generateKeyPairSync, randomBytes } = require('node:crypto');
const fs = require('node:fs');
const https = require('node:https');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');

/** @typedef {import('./control-plane').ApiAnswer} ApiAnswer */
/** @typedef {import('./control-plane').ControlPlane} ControlPlane */
/** @typedef {import('./control-plane').KubeObject} KubeObject */
/** @typedef {import('./control-plane').PeerName} PeerName */

const REPO = path.resolve(__dirname, '..');
const PEERS_DIR = process.env.PEERS_DIR || path.join(os.homedir(), '.cache', 'controller-introspection', 'peers');
const START_TIMEOUT_MS = 60_000;

/**
 * The version a peer's module pins in `scripts/peers/<peer>/go.mod`.
 * @param {string} peer
 * @param {string} module
 * @returns {string}
 */
function pinned(peer, module) {
  const gomod = fs.readFileSync(path.join(REPO, 'scripts', 'peers', peer, 'go.mod'), 'utf8');
  const match = new RegExp(`^\\s*(?:require\\s+)?${module.replace(/[.]/g, '\\.')}\\s+(v\\S+)`, 'm').exec(gomod);
  if (!match) throw new Error(`scripts/peers/${peer}/go.mod pins no ${module}`);
  return match[1];
}

/**
 * Where `scripts/build-peers.sh` puts each binary: a folder per peer and pinned version under
 * `PEERS_DIR` (default `~/.cache/controller-introspection/peers`).
 * @param {PeerName} peer
 * @returns {string}
 */
function peerBinary(peer) {
  const [dir, module] = {
    'kube-apiserver': ['kube-apiserver', 'k8s.io/kubernetes'],
    'leader-election': ['kube-apiserver', 'k8s.io/kubernetes'],
    etcd: ['etcd', 'go.etcd.io/etcd/server/v3'],
    prometheus: ['prometheus', 'github.com/prometheus/prometheus'],
    promtool: ['prometheus', 'github.com/prometheus/prometheus'],
    // client_golang's native histograms and prometheus/common's decoder, built with Prometheus 3.
    'native-reference': ['prometheus', 'github.com/prometheus/prometheus'],
  }[peer];
  return path.join(PEERS_DIR, `${dir}-${pinned(dir, module)}`, peer);
}

/**
 * Asks the kernel for `count` distinct free loopback ports. Every listener stays open until all
 * ports are known: asked one after another, each closed before the next, the kernel may hand out
 * the same port twice (an example app then got one port for its debug and its metrics endpoint).
 * @param {number} count
 * @returns {Promise<number[]>}
 */
async function freePorts(count) {
  /** @type {net.Server[]} */
  const servers = [];
  try {
    const ports = [];
    for (let i = 0; i < count; i++) {
      const server = net.createServer();
      server.unref();
      servers.push(server);
      await new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(0, '127.0.0.1', () => resolve(undefined));
      });
      ports.push(/** @type {net.AddressInfo} */ (server.address()).port);
    }
    return ports;
  } finally {
    await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  }
}

/**
 * Why the control plane cannot start here, or undefined when both binaries are built.
 * @returns {string | undefined}
 */
function controlPlaneMissing() {
  /** @type {PeerName[]} */
  const peers = ['etcd', 'kube-apiserver'];
  const missing = peers.map(peerBinary).filter((bin) => !fs.existsSync(bin));
  if (missing.length === 0) return undefined;
  return `no Kubernetes control plane (${missing.join(', ')} missing); build it with \`bash scripts/build-peers.sh etcd kube-apiserver\` (needs Go 1.26 and the Go module proxy; see CONTRIBUTING.md)`;
}

/** @type {Set<import('node:child_process').ChildProcess>} */
const started = new Set();
process.once('exit', () => {
  for (const child of started) child.kill('SIGKILL');
});

/**
 * @param {string} bin
 * @param {string[]} args
 * @param {string} logFile
 */
function startProcess(bin, args, logFile) {
  const log = fs.openSync(logFile, 'a');
  const child = spawn(bin, args, { stdio: ['ignore', log, log] });
  fs.closeSync(log);
  started.add(child);
  child.once('exit', () => started.delete(child));
  return child;
}

/**
 * @param {import('node:child_process').ChildProcess} child
 * @param {number} [graceMs]
 * @returns {Promise<void>}
 */
async function stopProcess(child, graceMs = 5000) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

/** @param {string} file */
function tail(file) {
  try {
    return fs.readFileSync(file, 'utf8').split('\n').slice(-30).join('\n');
  } catch {
    return '(no log)';
  }
}

/**
 * One HTTPS request to the API server; TLS is not verified (the server's certificate is self-signed).
 * @param {https.Agent} agent
 * @param {string} url
 * @param {string} method
 * @param {string} urlPath
 * @param {string} token
 * @param {unknown} [body]
 * @param {number} [timeoutMs]
 * @returns {Promise<ApiAnswer>}
 */
function apiRequest(agent, url, method, urlPath, token, body, timeoutMs = 10_000) {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = https.request(
      `${url}${urlPath}`,
      {
        method,
        agent,
        headers: {
          authorization: `Bearer ${token}`,
          accept: 'application/json',
          ...(payload === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }),
        },
        timeout: timeoutMs,
      },
      (res) => {
        /** @type {Buffer[]} */
        const chunks = [];
        res.on('data', (chunk) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          /** @type {unknown} */
          let parsed = text;
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

/**
 * @param {string} what
 * @param {() => Promise<boolean>} check
 * @param {import('node:child_process').ChildProcess} child
 * @param {string} logFile
 * @returns {Promise<void>}
 */
async function waitUntil(what, check, child, logFile) {
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

/** @type {Record<string, string | undefined>} */
const PLURALS = {
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

/**
 * The collection of an object in the REST API (`/apis/apps/v1/namespaces/x/deployments`), for the kinds the tests apply.
 * @param {KubeObject} obj
 * @returns {string}
 */
function resourcePathOf(obj) {
  const resource = PLURALS[obj.kind];
  if (resource === undefined) throw new Error(`control plane helper: no REST path known for kind ${obj.kind}`);
  const group = obj.apiVersion.includes('/') ? `/apis/${obj.apiVersion}` : `/api/${obj.apiVersion}`;
  const ns = obj.metadata.namespace === undefined ? '' : `/namespaces/${obj.metadata.namespace}`;
  return `${group}${ns}/${resource}`;
}

/**
 * The flags of kube-apiserver.
 * @param {string} dir
 * @param {number} etcdClient
 * @param {number} apiPort
 * @returns {string[]}
 */
function apiServerArgs(dir, etcdClient, apiPort) {
  return [
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
}

/**
 * Starts etcd and kube-apiserver on free loopback ports, with RBAC on, and waits until both are ready.
 * @returns {Promise<ControlPlane>}
 */
async function startControlPlane() {
  const missing = controlPlaneMissing();
  if (missing !== undefined) throw new Error(missing);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'control-plane-'));
  const [etcdClient, etcdPeer, apiPort] = await freePorts(3);
  const adminToken = randomBytes(24).toString('hex');
  fs.writeFileSync(path.join(dir, 'tokens.csv'), `${adminToken},admin,admin-uid,system:masters\n`, { mode: 0o600 });
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  fs.writeFileSync(path.join(dir, 'sa.key'), privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
  fs.writeFileSync(path.join(dir, 'sa.pub'), publicKey.export({ type: 'spki', format: 'pem' }));
  // Keep-alive, so that polling the API server every few ms costs one request, not a TLS handshake each.
  const agent = new https.Agent({ keepAlive: true, rejectUnauthorized: false });

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
  /** @type {import('node:child_process').ChildProcess | undefined} */
  let api;
  const ready = async () => (await apiRequest(agent, url, 'GET', '/readyz', adminToken, undefined, 2000)).status === 200;
  const startApiServer = async () => {
    api = startProcess(peerBinary('kube-apiserver'), apiServerArgs(dir, etcdClient, apiPort), apiLog);
    await waitUntil('kube-apiserver', ready, api, apiLog);
  };
  try {
    await waitUntil('etcd', async () => (await fetch(`http://127.0.0.1:${etcdClient}/health`)).ok, etcd, etcdLog);
    await startApiServer();
  } catch (err) {
    agent.destroy();
    if (api) await stopProcess(api);
    await stopProcess(etcd);
    throw err;
  }

  /** @type {ControlPlane['request']} */
  const request = (method, urlPath, body, token = adminToken) => apiRequest(agent, url, method, urlPath, token, body);
  /**
   * @param {string} collection
   * @param {KubeObject} body
   */
  const create = async (collection, body) => {
    const res = await request('POST', collection, body);
    if (res.status !== 201 && res.status !== 409) throw new Error(`POST ${collection}: ${res.status} ${JSON.stringify(res.body)}`);
  };
  /** @type {ControlPlane} */
  const plane = {
    url,
    adminToken,
    caFile: path.join(dir, 'certs', 'apiserver.crt'),
    dir,
    request,
    async namespace(name) {
      await create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    },
    async runningPod(namespace, name, ip, labels, serviceAccountName = 'default') {
      const created = await request('POST', `/api/v1/namespaces/${namespace}/pods`, {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name, labels },
        spec: { serviceAccountName, containers: [{ name: 'controller', image: 'controller:test' }] },
      });
      if (created.status !== 201) throw new Error(`creating pod ${namespace}/${name}: ${created.status} ${JSON.stringify(created.body)}`);
      // No kubelet runs here: the status subresource is written as one would, the object read with its status.
      const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
      const status = {
        phase: 'Running',
        podIP: ip,
        podIPs: [{ ip }],
        startTime: now,
        conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: now }],
      };
      const put = await request('PUT', `/api/v1/namespaces/${namespace}/pods/${name}/status`, { ...created.body, status });
      if (put.status !== 200) throw new Error(`status of pod ${namespace}/${name}: ${put.status} ${JSON.stringify(put.body)}`);
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
      return res.body.status.token;
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
      agent.destroy();
      if (api) await stopProcess(api);
      await stopProcess(etcd);
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
  return plane;
}

module.exports = { controlPlaneMissing, freePorts, peerBinary, resourcePathOf, startControlPlane };
