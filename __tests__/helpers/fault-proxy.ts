/**
 * A proxy in front of the real API server that injects the faults it will not produce on demand:
 * a LIST answered with an error, a request that never gets an answer, a watch held open that sends
 * nothing, a connection cut mid-stream, and a partition. Clients talk plain HTTP to it on loopback
 * (their bearer token passes through untouched); it talks HTTPS to the API server, or plain HTTP to
 * an `http:` upstream (a replica's introspection server, for the fleet view's tests).
 */

import http from 'node:http';
import https from 'node:https';
import type { AddressInfo, Socket } from 'node:net';

/**
 * What the proxy does with one request:
 * - `pass`: forwards it and streams the answer back;
 * - `hang`: never answers (the connection stays open);
 * - `silence`: forwards it and sends the answer's headers, then nothing more (a watch gone silent);
 * - `cut`: destroys the client's connection at once;
 * - `{ status, body }`: answers that, without asking the server.
 */
export type Fault = 'pass' | 'hang' | 'silence' | 'cut' | { status: number; body: string };

/** One request as the rules see it: `GET /api/v1/namespaces/demo/services?watch=true…`. */
export interface ProxiedRequest {
  readonly method: string;
  readonly url: string;
  /** `METHOD url`, what {@link FaultProxy.count} matches. */
  readonly line: string;
}

/** A Kubernetes Status body, as the API server answers errors. */
export function statusBody(code: number, message: string): string {
  return JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, code });
}

export class FaultProxy {
  /** Decides each request's fate; default: everything passes. */
  rule: (req: ProxiedRequest) => Fault = () => 'pass';
  readonly #upstream: URL;
  readonly #server: http.Server;
  readonly #lines: string[] = [];
  readonly #sockets = new Set<Socket>();
  /** Watches streaming to a client now: the client's side, and the server's answer feeding it. */
  readonly #watches = new Map<http.ServerResponse, http.IncomingMessage>();
  #partitioned = false;
  readonly #hung = new Set<http.ServerResponse>();

  constructor(upstream: string) {
    this.#upstream = new URL(upstream);
    this.#server = http.createServer((req, res) => this.#handle(req, res));
    this.#server.on('connection', (socket) => {
      this.#sockets.add(socket);
      socket.once('close', () => this.#sockets.delete(socket));
    });
  }

  /** Starts listening (by default on a free port of 127.0.0.1); answers the proxy's URL. */
  async listen(host = '127.0.0.1', port = 0): Promise<string> {
    await new Promise<void>((resolve, reject) => {
      this.#server.once('error', reject);
      this.#server.listen(port, host, resolve);
    });
    return `http://${host}:${(this.#server.address() as AddressInfo).port}`;
  }

  /** How many requests so far matched `pattern` (against `METHOD url`). */
  count(pattern: RegExp): number {
    return this.#lines.filter((line) => pattern.test(line)).length;
  }

  /** Every request so far, `METHOD url`, oldest first. */
  requests(): readonly string[] {
    return [...this.#lines];
  }

  /** Watches whose answer is streaming to a client now. */
  get openWatches(): number {
    return this.#watches.size;
  }

  /** Cuts every watch mid-stream. */
  cutWatches(): void {
    for (const res of this.#watches.keys()) res.socket?.destroy();
  }

  /** Keeps every open watch open but passes nothing more of it on: the watches go silent. */
  silenceWatches(): void {
    for (const answer of this.#watches.values()) {
      answer.unpipe();
      answer.resume();
    }
  }

  /** Cuts the connections of requests left unanswered (by a `hang` rule or a partition). */
  cutHung(): void {
    for (const res of this.#hung) res.socket?.destroy();
    this.#hung.clear();
  }

  /** Cuts every connection and leaves new requests unanswered until {@link FaultProxy.heal}. */
  partition(): void {
    this.#partitioned = true;
    for (const socket of this.#sockets) socket.destroy();
  }

  /** Ends a partition. */
  heal(): void {
    this.#partitioned = false;
  }

  /** Stops listening and cuts every connection. */
  async close(): Promise<void> {
    for (const socket of this.#sockets) socket.destroy();
    await new Promise((resolve) => this.#server.close(resolve));
  }

  #handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const url = req.url ?? '/';
    const line = `${req.method ?? 'GET'} ${url}`;
    this.#lines.push(line);
    const fault = this.#partitioned ? 'hang' : this.rule({ method: req.method ?? 'GET', url, line });
    if (fault === 'hang') {
      this.#hung.add(res);
      res.once('close', () => this.#hung.delete(res));
      return;
    }
    if (fault === 'cut') {
      req.socket.destroy();
      return;
    }
    if (typeof fault === 'object') {
      res.writeHead(fault.status, { 'content-type': 'application/json' }).end(fault.body);
      return;
    }
    const headers = { ...req.headers, host: this.#upstream.host };
    const send = this.#upstream.protocol === 'http:' ? http.request : https.request;
    const upstream = send(new URL(url, this.#upstream), { method: req.method, headers, rejectUnauthorized: false }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      res.flushHeaders();
      const watch = /[?&]watch=(true|1)/.test(url);
      if (watch) {
        this.#watches.set(res, answer);
        res.once('close', () => this.#watches.delete(res));
      }
      if (fault === 'silence') {
        // Read and drop the server's events, so the server sees a healthy client.
        answer.resume();
        return;
      }
      answer.pipe(res);
    });
    upstream.on('error', () => req.socket.destroy());
    res.once('close', () => upstream.destroy());
    req.pipe(upstream);
  }
}
