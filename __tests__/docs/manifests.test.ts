/**
 * The Kubernetes manifests the guides show (examples/kubernetes/*.yaml), read by
 * @kubernetes/client-node's own model of each object: every field must survive its round trip (a
 * misspelled or misplaced field would be dropped), and each must do what its guide says for the
 * example controller (examples/controller/config.json): the NetworkPolicy of docs/security.md
 * opens the metrics port to the monitoring namespace and nothing else; the Deployment of
 * docs/probes.md probes /livez and /readyz on the debug port and outlasts the drain. Then all of
 * them, with the RBAC of docs/kubernetes.md, are applied to a real API server.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import yaml from 'js-yaml';
import { describeWithControlPlane, resourcePathOf, startControlPlane, type ControlPlane, type KubeObject } from '../helpers/control-plane';
import { REPO, readRepoFile } from '../helpers/markdown';

const POLICY = 'examples/kubernetes/network-policy.yaml';
const DEPLOYMENT = 'examples/kubernetes/deployment.yaml';

/** client-node is an ES module only: it is loaded in a child process, as the example does. */
const READ_MANIFEST = `
import fs from 'node:fs';
import { createRequire } from 'node:module';
import * as k8s from '@kubernetes/client-node';
const yaml = createRequire(import.meta.resolve('@kubernetes/client-node'))('js-yaml');
const text = fs.readFileSync(process.argv[1], 'utf8');
const model = k8s.loadYaml(text);
process.stdout.write(JSON.stringify({ kind: model.constructor.name, raw: yaml.load(text), roundTrip: yaml.load(k8s.dumpYaml(model)) }));
`;

interface Read<T> {
  kind: string;
  raw: T;
  roundTrip: T;
}

async function readManifest<T>(file: string): Promise<Read<T>> {
  const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', READ_MANIFEST, file], {
    cwd: REPO,
    timeout: 30_000,
  });
  return JSON.parse(stdout) as Read<T>;
}

/**
 * Reads a manifest once for its describe block and checks that client-node models it as `kind`
 * with every field kept; returns the parsed manifest for the guide-specific checks.
 */
function manifestRead<T>(file: string, kind: string): () => T {
  let read: Read<T>;
  beforeAll(async () => {
    read = await readManifest<T>(file);
  });
  it(`is a ${kind.replace(/^V1/, '')} whose every field client-node knows`, () => {
    expect(read.kind).toBe(kind);
    expect(read.roundTrip).toEqual(read.raw);
  });
  return () => read.raw;
}

const example = (
  JSON.parse(readRepoFile('examples/controller/config.json')) as {
    controller: { debugPort: number; probes: { drainDelayMs: number }; config: { controller: { metrics_port: number } } };
  }
).controller;

interface Policy {
  spec: { policyTypes: string[]; ingress: unknown[] };
}

describe(POLICY, () => {
  const policy = manifestRead<Policy>(POLICY, 'V1NetworkPolicy');

  it("opens the example's metrics port to the monitoring namespace, and no other port", () => {
    const { spec } = policy();
    expect(spec.policyTypes).toEqual(['Ingress']);
    expect(spec.ingress).toEqual([
      {
        from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } }],
        ports: [{ protocol: 'TCP', port: example.config.controller.metrics_port }],
      },
    ]);
    expect(JSON.stringify(spec)).not.toContain(String(example.debugPort));
  });
});

interface Probe {
  httpGet: { path: string; port: string | number };
}
interface Deployment {
  spec: {
    template: {
      spec: {
        terminationGracePeriodSeconds: number;
        containers: { ports: { name: string; containerPort: number }[]; livenessProbe: Probe; readinessProbe: Probe }[];
      };
    };
  };
}

describe(DEPLOYMENT, () => {
  const deployment = manifestRead<Deployment>(DEPLOYMENT, 'V1Deployment');

  it("probes /livez and /readyz on the example's debug port, and outlasts its drain", () => {
    const pod = deployment().spec.template.spec;
    const [container] = pod.containers;
    const portNumber = (port: string | number): number | undefined =>
      typeof port === 'number' ? port : container!.ports.find((p) => p.name === port)?.containerPort;
    expect(container!.livenessProbe.httpGet.path).toBe('/livez');
    expect(container!.readinessProbe.httpGet.path).toBe('/readyz');
    expect(portNumber(container!.livenessProbe.httpGet.port)).toBe(example.debugPort);
    expect(portNumber(container!.readinessProbe.httpGet.port)).toBe(example.debugPort);
    expect(container!.ports.map((p) => p.containerPort)).toContain(example.config.controller.metrics_port);
    // drain(): delayMs of failing readiness, then up to closeTimeoutMs (default 10 s) for requests in flight.
    expect(pod.terminationGracePeriodSeconds * 1000).toBeGreaterThan(example.probes.drainDelayMs + 10_000);
  });
});

const MANIFESTS = ['examples/kubernetes/rbac.yaml', POLICY, DEPLOYMENT];

describeWithControlPlane('the manifests of examples/kubernetes/ on a real API server', () => {
  let plane: ControlPlane;
  beforeAll(async () => {
    plane = await startControlPlane();
  }, 90_000);
  afterAll(async () => {
    await plane?.stop();
  });

  it('are accepted by a real apply, and read back with every field they set', async () => {
    const objects = MANIFESTS.flatMap((file) => yaml.loadAll(readRepoFile(file)) as KubeObject[]);
    expect(objects.map((o) => o.kind).sort()).toEqual(['Deployment', 'NetworkPolicy', 'Role', 'RoleBinding', 'ServiceAccount']);
    await plane.namespace('lb-system');
    await plane.apply(objects);
    for (const obj of objects) {
      const res = await plane.request('GET', `${resourcePathOf(obj)}/${obj.metadata.name}`);
      expect(res.status).toBe(200);
      // The server keeps what the manifest says (it adds defaults beside it).
      const { apiVersion, kind, metadata, ...rest } = obj;
      expect(res.body).toMatchObject({ apiVersion, kind, ...rest });
      expect(res.body.metadata).toMatchObject(metadata);
    }
  });

  it('give the ServiceAccount what the example does, and nothing more', async () => {
    const token = await plane.serviceAccountToken('lb-system', 'lb-controller');
    const can = async (path: string, method = 'GET', body?: unknown): Promise<number> =>
      (await plane.request(method, path, body, token)).status;
    expect(await can('/api/v1/namespaces/lb-system/services')).toBe(200);
    expect(await can('/api/v1/namespaces/lb-system/services?watch=true&timeoutSeconds=1')).toBe(200);
    expect(await can('/apis/coordination.k8s.io/v1/namespaces/lb-system/leases')).toBe(403);
    const lease = { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'probe', namespace: 'lb-system' }, spec: {} };
    expect(await can('/apis/coordination.k8s.io/v1/namespaces/lb-system/leases', 'POST', lease)).toBe(201);
    expect(await can('/apis/coordination.k8s.io/v1/namespaces/lb-system/leases/probe')).toBe(200);
    expect(await can('/apis/coordination.k8s.io/v1/namespaces/lb-system/leases/probe', 'DELETE')).toBe(403);
    expect(await can('/api/v1/namespaces/lb-system/secrets')).toBe(403);
    expect(await can('/api/v1/namespaces/default/services')).toBe(403);
  });
});
