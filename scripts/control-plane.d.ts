// The types of control-plane.js (plain CommonJS, so that the benchmarks run it under `node`), for the
// tests that import it through __tests__/helpers/control-plane.ts.

/** A binary `scripts/build-peers.sh` builds. */
export type PeerName = 'kube-apiserver' | 'etcd' | 'prometheus' | 'promtool' | 'leader-election' | 'native-reference';

/** Where `scripts/build-peers.sh` puts each binary. */
export function peerBinary(peer: PeerName): string;

/** Asks the kernel for `count` distinct free loopback ports, every listener open until all are known. */
export function freePorts(count: number): Promise<number[]>;

/** Why the control plane cannot start here, or undefined when both binaries are built. */
export function controlPlaneMissing(): string | undefined;

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
  /**
   * Creates a Pod and writes its status as a kubelet would: `Running`, ready, at `ip` (the API
   * server takes a loopback address, so a test's process bound to 127.0.0.x is that pod).
   */
  runningPod(
    namespace: string,
    name: string,
    ip: string,
    labels: Readonly<Record<string, string>>,
    serviceAccountName?: string,
  ): Promise<void>;
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

/** The collection of an object in the REST API (`/apis/apps/v1/namespaces/x/deployments`), for the kinds the tests apply. */
export function resourcePathOf(obj: KubeObject): string;

/** Starts etcd and kube-apiserver on free loopback ports, with RBAC on, and waits until both are ready. */
export function startControlPlane(): Promise<ControlPlane>;
