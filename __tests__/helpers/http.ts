/**
 * The one HTTP client of the tests, over node:http against real sockets, and {@link listen} to put
 * an app on one. Nothing is normalised: the path and query of `url` go on the wire exactly as
 * written (a `Host` in `headers` replaces the one from `url`), and the answer's body is the bytes
 * sent (not decompressed, empty for HEAD).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { closeServer } from './ports';

/** How long a request may go without a complete answer before it counts as a hang. Generous on purpose. */
export const DEFAULT_TIMEOUT_MS = 5000;

/** Options of {@link request} and {@link open}. */
export interface RequestOptions {
  method?: string;
  headers?: http.OutgoingHttpHeaders;
  body?: string | Buffer;
  /** Default `false`: a connection of its own, closed after the answer. */
  agent?: http.Agent | false;
  /** Rejects when no complete answer (for {@link open}: no status line and headers) came in this long. */
  timeoutMs?: number;
  /** Aborting it hangs up, like a client that leaves. */
  signal?: AbortSignal;
}

/** A complete answer. */
export interface HttpResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  /** The body decoded as UTF-8. */
  text: string;
  /** The body parsed as JSON; throws with the status and the start of the body when it is not JSON. */
  json<T = Record<string, unknown>>(): T;
}

/** `http://host:port` and the request target after it, verbatim. */
function target(url: string): { host: string; port: number; path: string } {
  const match = /^http:\/\/([^/?#]+)(.*)$/s.exec(url);
  if (!match) throw new TypeError(`expected an http:// URL, got ${JSON.stringify(url.slice(0, 200))}`);
  const { hostname, port } = new URL(`http://${match[1]}`);
  const rest = match[2] ?? '';
  return { host: hostname.replace(/^\[(.*)\]$/, '$1'), port: Number(port || 80), path: rest.startsWith('/') ? rest : `/${rest}` };
}

function start(url: string, options: RequestOptions): { req: http.ClientRequest; label: string; timeoutMs: number } {
  const { host, port, path } = target(url);
  const method = options.method ?? 'GET';
  const req = http.request({
    host,
    port,
    path,
    method,
    headers: options.headers,
    agent: options.agent ?? false,
    signal: options.signal,
  });
  return { req, label: `${method} ${url.slice(0, 200)}`, timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS };
}

/**
 * Sends one request and resolves with the complete answer. Rejects on a hang (no complete answer
 * within `timeoutMs`), a refused or cut connection, or an abort.
 */
export function request(url: string, options: RequestOptions = {}): Promise<HttpResponse> {
  return new Promise((resolve, reject) => {
    const { req, label, timeoutMs } = start(url, options);
    const timer = setTimeout(() => req.destroy(new Error(`${label}: no complete answer within ${timeoutMs} ms (hang)`)), timeoutMs);
    const fail = (err: Error): void => {
      clearTimeout(timer);
      reject(err);
    };
    req.on('error', fail);
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('aborted', () => fail(new Error(`${label}: connection cut mid-response`)));
      res.on('error', fail);
      res.on('end', () => {
        clearTimeout(timer);
        const body = Buffer.concat(chunks);
        const text = body.toString('utf8');
        const status = res.statusCode ?? 0;
        resolve({
          status,
          headers: res.headers,
          body,
          text,
          json<T>(): T {
            try {
              return JSON.parse(text) as T;
            } catch {
              throw new Error(`${label}: expected a JSON body, got status ${status}: ${text.slice(0, 300)}`);
            }
          },
        });
      });
    });
    req.end(options.body);
  });
}

/**
 * Sends one request and resolves once the status line and headers are in, with the body still to
 * read: for streams (event watches) and for clients that stop reading or leave half-way.
 * `res.destroy()` hangs up.
 */
export function open(url: string, options: RequestOptions = {}): Promise<http.IncomingMessage> {
  return new Promise((resolve, reject) => {
    const { req, label, timeoutMs } = start(url, options);
    const timer = setTimeout(() => req.destroy(new Error(`${label}: no answer within ${timeoutMs} ms (hang)`)), timeoutMs);
    req.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    req.on('response', (res) => {
      clearTimeout(timer);
      resolve(res);
    });
    req.end(options.body);
  });
}

/** A server listening on 127.0.0.1 on a port of the kernel's choosing. */
export interface Listening {
  server: http.Server;
  port: number;
  /** `http://127.0.0.1:<port>` */
  origin: string;
  /** Closes the server, cutting open connections (keep-alive ones included). Idempotent. */
  close(): Promise<void>;
}

/** Options of {@link listen}. */
export interface ListenOptions {
  /** Node's limit on the request head (431 above it); its default is 16 KiB. */
  maxHeaderSize?: number;
  /** Accept-queue length, for tests that open a thousand connections at once. */
  backlog?: number;
}

const listening = new Set<Listening>();

/** Serves `app` (an Express app or any request listener) on 127.0.0.1. */
export async function listen(app: http.RequestListener, options: ListenOptions = {}): Promise<Listening> {
  const server = http.createServer({ maxHeaderSize: options.maxHeaderSize }, app);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port: 0, host: '127.0.0.1', backlog: options.backlog ?? 511 }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  let closed: Promise<void> | undefined;
  const served: Listening = {
    server,
    port,
    origin: `http://127.0.0.1:${port}`,
    close: () => {
      listening.delete(served);
      return (closed ??= closeServer(server));
    },
  };
  listening.add(served);
  return served;
}

/**
 * Serves `app` on a listener of its own for one request, then closes it: for apps a test builds
 * per case, without keeping a server around.
 */
export async function requestApp(app: http.RequestListener, path: string, options: RequestOptions = {}): Promise<HttpResponse> {
  const served = await listen(app);
  try {
    return await request(`${served.origin}${path}`, options);
  } finally {
    await served.close();
  }
}

/** Closes every server {@link listen} started that is still open: for afterEach/afterAll. */
export async function closeAllListening(): Promise<void> {
  await Promise.all([...listening].map((s) => s.close()));
}
