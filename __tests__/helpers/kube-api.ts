/**
 * A fake Kubernetes API server on 127.0.0.1, for what a client-node host does in one namespace:
 * LIST and watch services (an informer), and read, create and replace coordination.k8s.io/v1
 * Leases. Tests decide how LIST answers, add and delete services (streamed to open watches), and
 * cut watches.
 */
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** How the services LIST answers: the current list, a fixed status and body, or never. */
export type ListMode = 'ok' | 'hang' | { status: number; body: string };

/** A Lease as the fake server stores it (the JSON client-node writes, with the server's resourceVersion). */
export interface StoredLease {
  metadata: { name: string; namespace: string; resourceVersion: string };
  spec: { holderIdentity?: string; renewTime?: string; leaseTransitions?: number; leaseDurationSeconds?: number };
}

/** A Kubernetes Status body, as the API server answers errors. */
export function statusBody(code: number, message: string): string {
  return JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, code });
}

export class FakeKubeApi {
  /** How the next services LIST answers. */
  listMode: ListMode = 'ok';
  /** Every request, as `METHOD path?query`. */
  readonly requests: string[] = [];
  readonly leases = new Map<string, StoredLease>();
  private readonly services = new Map<string, object>();
  private readonly watches = new Set<http.ServerResponse>();
  private readonly sockets = new Set<Socket>();
  private revision = 100;
  private readonly server = http.createServer((req, res) => this.answer(req, res));

  constructor(readonly namespace: string) {
    this.server.on('connection', (socket: Socket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
    });
  }

  /** Listens on a free loopback port; resolves with the server URL. */
  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Closes the server and every connection (hung LISTs and open watches included). */
  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise((resolve) => this.server.close(resolve));
  }

  /** How many requests matched `pattern` so far. */
  count(pattern: RegExp): number {
    return this.requests.filter((r) => pattern.test(r)).length;
  }

  /** Watches currently open. */
  get openWatches(): number {
    return this.watches.size;
  }

  /** Adds a service, streamed to open watches as ADDED. */
  addService(name: string): void {
    const service = {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name, namespace: this.namespace, uid: `uid-${name}`, resourceVersion: String(++this.revision) },
      spec: { ports: [{ port: 80 }] },
    };
    this.services.set(name, service);
    this.stream('ADDED', service);
  }

  /** Deletes a service, streamed to open watches as DELETED. */
  deleteService(name: string): void {
    const service = this.services.get(name);
    if (!service) throw new Error(`no service ${name}`);
    this.services.delete(name);
    ++this.revision;
    this.stream('DELETED', service);
  }

  /** Cuts every open watch mid-stream, as a restarting API server or a dropped connection does. */
  cutWatches(): void {
    for (const res of this.watches) res.socket?.destroy();
    this.watches.clear();
  }

  private stream(type: string, object: object): void {
    for (const res of this.watches) res.write(`${JSON.stringify({ type, object })}\n`);
  }

  private answer(req: http.IncomingMessage, res: http.ServerResponse): void {
    this.requests.push(`${req.method} ${req.url}`);
    const url = new URL(req.url ?? '/', 'http://fake');
    const services = `/api/v1/namespaces/${this.namespace}/services`;
    const leases = `/apis/coordination.k8s.io/v1/namespaces/${this.namespace}/leases`;
    if (req.method === 'GET' && url.pathname === services) {
      if (url.searchParams.get('watch') === 'true') this.watch(res);
      else this.list(res);
      return;
    }
    if (url.pathname === leases || url.pathname.startsWith(`${leases}/`)) {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (chunk: string) => (body += chunk));
      req.on('end', () => this.lease(req.method ?? 'GET', url.pathname.slice(leases.length + 1), body, res));
      return;
    }
    send(res, 404, statusBody(404, `the server could not find the requested resource (${url.pathname})`));
  }

  private list(res: http.ServerResponse): void {
    const mode = this.listMode;
    if (mode === 'hang') return;
    if (mode !== 'ok') {
      send(res, mode.status, mode.body);
      return;
    }
    const list = {
      kind: 'ServiceList',
      apiVersion: 'v1',
      metadata: { resourceVersion: String(this.revision) },
      items: [...this.services.values()],
    };
    send(res, 200, JSON.stringify(list));
  }

  private watch(res: http.ServerResponse): void {
    res.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
    res.flushHeaders();
    this.watches.add(res);
    res.once('close', () => this.watches.delete(res));
  }

  private lease(method: string, name: string, body: string, res: http.ServerResponse): void {
    const stored = this.leases.get(name);
    if (method === 'GET') {
      if (stored) send(res, 200, JSON.stringify({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', ...stored }));
      else send(res, 404, statusBody(404, `leases.coordination.k8s.io "${name}" not found`));
      return;
    }
    const lease = JSON.parse(body) as StoredLease;
    const leaseName = method === 'POST' ? lease.metadata.name : name;
    if (method === 'POST' ? stored !== undefined : stored?.metadata.resourceVersion !== lease.metadata.resourceVersion) {
      send(res, 409, statusBody(409, `Operation cannot be fulfilled on leases.coordination.k8s.io "${leaseName}"`));
      return;
    }
    const next: StoredLease = {
      metadata: { name: leaseName, namespace: this.namespace, resourceVersion: String(++this.revision) },
      spec: lease.spec,
    };
    this.leases.set(leaseName, next);
    send(res, method === 'POST' ? 201 : 200, JSON.stringify({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', ...next }));
  }
}

function send(res: http.ServerResponse, status: number, body: string): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(body);
}
