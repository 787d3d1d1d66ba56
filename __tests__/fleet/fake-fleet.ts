/**
 * Replicas for the fleet view's tests: small HTTP servers on real sockets, each on an address of
 * its own in 127.41.0.0/16 (Linux's loopback answers all of 127/8) and one port for them all, as
 * pods have one IP each and the view one port. A fake pods API lists them as Pods.
 */
import http from 'node:http';
import https from 'node:https';
import type { Socket } from 'node:net';
import type { PodLike, PodListLike, PodsApi } from '../../lib/kubernetes/replicas';
import { freePort } from '../helpers/ports';

/** What one fake replica answers; change it between gathers. */
export interface ReplicaState {
  name: string;
  uid?: string;
  /** The pod's `spec.serviceAccountName`; default `lb-controller`. */
  serviceAccount?: string;
  phase?: string;
  /** `null`: leader_election not published (404). */
  leading?: boolean | null;
  holder?: string;
  /** `null`: no configuration yet (503). */
  version?: string | null;
  ready?: boolean;
  failing?: Array<{ name: string; reason: string }>;
  /** The `pipeline` variable; `null`: not published (404). */
  pipeline?: Record<string, unknown> | null;
  uptime?: number;
  /** `null`: event_counts not published (404). */
  subscribers?: number | null;
  /** The bearer token the replica accepts; others get 401. Default: any. */
  token?: string;
  /** Answers a request itself when it returns true. */
  override?: (req: http.IncomingMessage, res: http.ServerResponse) => boolean;
}

/** A replica serving. */
export interface FakeReplica {
  readonly state: ReplicaState;
  readonly address: string;
  readonly server: http.Server | https.Server;
  /** Requests seen, by path. */
  readonly requests: string[];
  /** Authorization headers seen. */
  readonly authorizations: Array<string | undefined>;
  /** Sockets open now. */
  readonly sockets: Set<Socket>;
}

let nextAddress = 2;

/** A new loopback address for this test process. */
export function loopbackAddress(): string {
  const n = nextAddress++;
  return `127.41.${Math.floor(n / 250)}.${(n % 250) + 2}`;
}

function json(res: http.ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/** The introspection endpoints the fleet view reads, answered from `state` as the package's router would. */
export function replicaListener(
  state: ReplicaState,
  seen?: { requests: string[]; authorizations: Array<string | undefined> },
): http.RequestListener {
  return (req, res) => {
    const url = req.url ?? '';
    seen?.requests.push(url);
    seen?.authorizations.push(req.headers.authorization);
    if (state.override?.(req, res)) return;
    if (state.token !== undefined && req.headers.authorization !== `Bearer ${state.token}`) {
      json(res, 401, { error: 'token rejected' });
      return;
    }
    const path = url.split('?')[0];
    const failing = state.failing ?? [];
    const ready = state.ready ?? failing.length === 0;
    switch (path) {
      case '/readyz': {
        const lines = [
          '[+]ping ok',
          ...failing.map((c) => `[-]${c.name} failed: ${c.reason}`),
          `readyz check ${ready ? 'passed' : 'failed'}`,
        ];
        res.writeHead(ready ? 200 : 503, { 'content-type': 'text/plain' });
        res.end(`${lines.join('\n')}\n`);
        return;
      }
      case '/healthz':
        json(res, 200, { status: 'ok', checks: { ping: { status: 'ok' } } });
        return;
      case '/debug/vars/leader_election':
        if (state.leading === null || state.leading === undefined) json(res, 404, { error: 'no variable' });
        else json(res, 200, { identity: state.name, is_leader: state.leading, holder: state.holder ?? '' });
        return;
      case '/debug/vars/config':
        if (url !== '/debug/vars/config?field=%7B.version%7D') json(res, 400, { error: `unexpected ${url}` });
        else if (state.version === null) json(res, 503, { error: 'config not loaded yet' });
        else json(res, 200, state.version ?? '1');
        return;
      case '/debug/vars/pipeline':
        if (state.pipeline === null || state.pipeline === undefined) json(res, 404, { error: 'no variable' });
        else json(res, 200, state.pipeline);
        return;
      case '/debug/vars/uptime':
        json(res, 200, { started: '2026-01-01T00:00:00.000Z', uptime_seconds: state.uptime ?? 60, uptime_string: '1m0s' });
        return;
      case '/debug/vars/event_counts':
        if (state.subscribers === null) json(res, 404, { error: 'no variable' });
        else json(res, 200, { published: 5, subscribers: state.subscribers ?? 2, watchers: 0 });
        return;
      default:
        json(res, 404, { error: 'not found' });
    }
  };
}

/** A pipeline variable whose last cycle ended `agoMs` ago with `status`. */
export function pipelineVar(
  status: 'succeeded' | 'failed' | 'running',
  agoMs = 1000,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  const ended = new Date(Date.now() - agoMs).toISOString();
  const started = new Date(Date.now() - agoMs - 120).toISOString();
  return {
    correlation_id: 'c-1',
    trigger: 'resync',
    status,
    started,
    ended: status === 'running' ? null : ended,
    duration_ms: status === 'running' ? null : 120,
    failed_phase: status === 'failed' ? 'validate' : null,
    cycles: { total: 3, succeeded: status === 'failed' ? 2 : 3, failed: status === 'failed' ? 1 : 0 },
    ...extra,
  };
}

/** A fleet of fake replicas on one port, and the pods API that lists them. */
export class FakeFleet {
  readonly replicas: FakeReplica[] = [];
  /** Extra pod entries the API lists (hostile ones, pods without an address). */
  readonly extraPods: unknown[] = [];
  /** Calls to listNamespacedPod. */
  readonly calls: Array<{ namespace: string; labelSelector?: string; limit?: number }> = [];
  /** Makes listNamespacedPod wait this long first. */
  listDelayMs = 0;
  /** Makes listNamespacedPod reject with this. */
  listError: unknown;

  private constructor(readonly port: number) {}

  static async create(): Promise<FakeFleet> {
    return new FakeFleet(await freePort());
  }

  /** Starts a replica (HTTP, or HTTPS with `tls`; `listener` answers in place of the fake endpoints). */
  async add(
    state: ReplicaState,
    options: { tls?: { cert: Buffer; key: Buffer }; address?: string; listener?: http.RequestListener } = {},
  ): Promise<FakeReplica> {
    const address = options.address ?? loopbackAddress();
    const seen = { requests: [] as string[], authorizations: [] as Array<string | undefined> };
    const listener = options.listener ?? replicaListener(state, seen);
    const server = options.tls === undefined ? http.createServer(listener) : https.createServer(options.tls, listener);
    const sockets = new Set<Socket>();
    server.on('connection', (socket: Socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, address, () => resolve());
    });
    const replica: FakeReplica = { state, address, server, sockets, ...seen };
    this.replicas.push(replica);
    return replica;
  }

  /** The pods API over the replicas (each a Running pod at its address), and {@link extraPods}. */
  readonly api: PodsApi = {
    listNamespacedPod: async (param) => {
      this.calls.push(param);
      if (this.listDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, this.listDelayMs));
      if (this.listError !== undefined) throw this.listError;
      const pods: PodLike[] = this.replicas.map(({ state, address }) => ({
        metadata: { name: state.name, uid: state.uid ?? `uid-${state.name}`, creationTimestamp: new Date('2026-01-01T00:00:00Z') },
        spec: { serviceAccountName: state.serviceAccount ?? 'lb-controller' },
        status: { phase: state.phase ?? 'Running', podIP: address, conditions: [{ type: 'Ready', status: 'True' }] },
      }));
      const list: PodListLike = { items: [...pods, ...(this.extraPods as PodLike[])] };
      return list;
    },
  };

  /** Closes every replica, cutting open connections. */
  async close(): Promise<void> {
    await Promise.all(
      this.replicas.splice(0).map(
        (r) =>
          new Promise<void>((resolve) => {
            r.server.closeAllConnections();
            r.server.close(() => resolve());
          }),
      ),
    );
  }
}
