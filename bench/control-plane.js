'use strict';
// A real Kubernetes control plane for the benchmarks (etcd and kube-apiserver on loopback, RBAC on),
// built by `scripts/build-peers.sh etcd kube-apiserver`. It mirrors __tests__/helpers/control-plane.ts
// (same binaries, same flags) in plain JS, since the benchmarks run without a TypeScript loader; keep
// the two alike. Only what bench/takeover.js needs: start, requests as the admin, namespaces,
// ServiceAccount tokens, objects applied, kubeconfigs and stop.

const { spawn } = require('node:child_process');
const { generateKeyPairSync, randomBytes } = require('node:crypto');
const fs = require('node:fs');
const https = require('node:https');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');

const REPO = path.resolve(__dirname, '..');
const PEERS_DIR = process.env.PEERS_DIR || path.join(os.homedir(), '.cache', 'controller-introspection', 'peers');
const START_TIMEOUT_MS = 60_000;

/** The version a peer's module pins in `scripts/peers/<peer>/go.mod`. */
function pinned(peer, module) {
  const gomod = fs.readFileSync(path.join(REPO, 'scripts', 'peers', peer, 'go.mod'), 'utf8');
  const match = new RegExp(`^\\s*(?:require\\s+)?${module.replace(/[.]/g, '\\.')}\\s+(v\\S+)`, 'm').exec(gomod);
  if (!match) throw new Error(`scripts/peers/${peer}/go.mod pins no ${module}`);
  return match[1];
}

/** Where `scripts/build-peers.sh` puts each binary. */
function peerBinary(peer) {
  const [dir, module] = {
    'kube-apiserver': ['kube-apiserver', 'k8s.io/kubernetes'],
    'leader-election': ['kube-apiserver', 'k8s.io/kubernetes'],
    etcd: ['etcd', 'go.etcd.io/etcd/server/v3'],
  }[peer];
  return path.join(PEERS_DIR, `${dir}-${pinned(dir, module)}`, peer);
}

/** Distinct free loopback ports, every listener open until all are known. */
async function freePorts(count) {
  const servers = [];
  try {
    const ports = [];
    for (let i = 0; i < count; i++) {
      const server = net.createServer();
      server.unref();
      servers.push(server);
      await new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(0, '127.0.0.1', resolve);
      });
      ports.push(server.address().port);
    }
    return ports;
  } finally {
    await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  }
}

const started = new Set();
process.once('exit', () => {
  for (const child of started) child.kill('SIGKILL');
});

function startProcess(bin, args, logFile) {
  const log = fs.openSync(logFile, 'a');
  const child = spawn(bin, args, { stdio: ['ignore', log, log] });
  fs.closeSync(log);
  started.add(child);
  child.once('exit', () => started.delete(child));
  return child;
}

async function stopProcess(child, graceMs = 5000) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

function tail(file) {
  try {
    return fs.readFileSync(file, 'utf8').split('\n').slice(-30).join('\n');
  } catch {
    return '(no log)';
  }
}

// Keep-alive, so that polling the Lease every few ms costs one request, not a TLS handshake each.
const agent = new https.Agent({ keepAlive: true, rejectUnauthorized: false });

/** One HTTPS request to the API server (TLS not verified: the certificate is self-signed). */
function apiRequest(url, method, urlPath, token, body, timeoutMs = 10_000) {
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
        const chunks = [];
        res.on('data', (chunk) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed = text;
          try {
            parsed = JSON.parse(text);
          } catch {
            // not JSON: keep the text
          }
          resolve({ status: res.statusCode || 0, body: parsed });
        });
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${method} ${urlPath}: no answer in ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end(payload);
  });
}

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

const PLURALS = {
  Namespace: 'namespaces',
  ServiceAccount: 'serviceaccounts',
  Role: 'roles',
  RoleBinding: 'rolebindings',
  Lease: 'leases',
};

function resourcePath(obj) {
  const resource = PLURALS[obj.kind];
  if (resource === undefined) throw new Error(`bench control plane: no REST path known for kind ${obj.kind}`);
  const group = obj.apiVersion.includes('/') ? `/apis/${obj.apiVersion}` : `/api/${obj.apiVersion}`;
  const ns = obj.metadata.namespace === undefined ? '' : `/namespaces/${obj.metadata.namespace}`;
  return `${group}${ns}/${resource}`;
}

/** Starts etcd and kube-apiserver on free loopback ports, with RBAC on, and waits until both are ready. */
async function startControlPlane() {
  const missing = ['etcd', 'kube-apiserver'].map(peerBinary).filter((bin) => !fs.existsSync(bin));
  if (missing.length > 0) throw new Error(`${missing.join(', ')} missing: run \`bash scripts/build-peers.sh etcd kube-apiserver\``);
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
  let api;
  try {
    await waitUntil('etcd', async () => (await fetch(`http://127.0.0.1:${etcdClient}/health`)).ok, etcd, etcdLog);
    api = startProcess(
      peerBinary('kube-apiserver'),
      [
        `--etcd-servers=http://127.0.0.1:${etcdClient}`,
        '--bind-address=127.0.0.1',
        '--advertise-address=127.0.0.1',
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
      ],
      apiLog,
    );
    await waitUntil(
      'kube-apiserver',
      async () => (await apiRequest(url, 'GET', '/readyz', adminToken, undefined, 2000)).status === 200,
      api,
      apiLog,
    );
  } catch (err) {
    if (api) await stopProcess(api);
    await stopProcess(etcd);
    throw err;
  }

  const request = (method, urlPath, body, token = adminToken) => apiRequest(url, method, urlPath, token, body);
  const create = async (collection, body) => {
    const res = await request('POST', collection, body);
    if (res.status !== 201 && res.status !== 409) throw new Error(`POST ${collection}: ${res.status} ${JSON.stringify(res.body)}`);
  };
  const plane = {
    url,
    adminToken,
    dir,
    request,
    async namespace(name) {
      await create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    },
    async serviceAccountToken(namespace, name) {
      await plane.namespace(namespace);
      await create(`/api/v1/namespaces/${namespace}/serviceaccounts`, {
        apiVersion: 'v1',
        kind: 'ServiceAccount',
        metadata: { name, namespace },
      });
      const res = await request('POST', `/api/v1/namespaces/${namespace}/serviceaccounts/${name}/token`, {
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'TokenRequest',
        spec: { expirationSeconds: 3600 },
      });
      if (res.status !== 201) throw new Error(`TokenRequest for ${namespace}/${name}: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body.status.token;
    },
    async apply(objects) {
      for (const obj of objects) {
        const res = await request('POST', resourcePath(obj), obj);
        if (res.status !== 201 && res.status !== 409)
          throw new Error(`create ${obj.kind} ${obj.metadata.name}: ${res.status} ${JSON.stringify(res.body)}`);
      }
    },
    kubeconfig(token, server = url) {
      const file = path.join(dir, `kubeconfig-${randomBytes(4).toString('hex')}.json`);
      const config = {
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [{ name: 'test', cluster: { server, 'insecure-skip-tls-verify': true } }],
        users: [{ name: 'test', user: { token } }],
        contexts: [{ name: 'test', context: { cluster: 'test', user: 'test' } }],
        'current-context': 'test',
      };
      fs.writeFileSync(file, JSON.stringify(config), { mode: 0o600 });
      return file;
    },
    async stop() {
      agent.destroy();
      if (api) await stopProcess(api);
      await stopProcess(etcd);
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
  return plane;
}

module.exports = { peerBinary, startControlPlane };
