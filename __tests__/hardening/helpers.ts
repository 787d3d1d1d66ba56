import express from 'express';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createIntrospectionRouter, type IntrospectionRouter, type IntrospectionRouterOptions } from '../../lib/introspection/router';
import type { IntrospectionState } from '../../lib/state/types';
import { closeServer } from '../helpers/ports';

/** How long any single request may take before the test counts it as a hang. Generous on purpose. */
export const HANG_TIMEOUT_MS = 5000;

/** A real listening server on 127.0.0.1 with the introspection router mounted. */
export interface HardeningServer {
  router: IntrospectionRouter;
  server: http.Server;
  app: express.Express;
  port: number;
  base: string;
  /** A keep-alive agent for batches of requests; destroyed by close(). */
  agent: http.Agent;
  close(): Promise<void>;
}

/** Options of {@link startServer}. */
export interface StartOptions {
  router?: IntrospectionRouterOptions;
  /** Mounts more routes (e.g. /metrics) after the introspection router. */
  extra?: (app: express.Express) => void;
  /**
   * Node's parser answers 431 above 16 KiB of request head before any router runs. Fuzz tests raise
   * it so that huge templates reach the router and its own limits are what is tested.
   */
  maxHeaderSize?: number;
  /** Accept-queue length, for tests that open a thousand connections at once. */
  backlog?: number;
}

export async function startServer(state: IntrospectionState, options: StartOptions = {}): Promise<HardeningServer> {
  const router = createIntrospectionRouter(state, options.router);
  const app = express();
  app.use(router);
  options.extra?.(app);
  const server = http.createServer({ maxHeaderSize: options.maxHeaderSize }, app);
  await new Promise<void>((resolve) => server.listen({ port: 0, host: '127.0.0.1', backlog: options.backlog ?? 511 }, resolve));
  const { port } = server.address() as AddressInfo;
  const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });
  let closed = false;
  return {
    router,
    server,
    app,
    port,
    base: `http://127.0.0.1:${port}`,
    agent,
    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      agent.destroy();
      await router.close();
      await closeServer(server);
    },
  };
}

/** A complete response. */
export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  text: string;
}

/** Options of {@link send}. */
export interface SendOptions {
  method?: string;
  headers?: Record<string, string>;
  agent?: http.Agent | false;
  timeoutMs?: number;
}

/**
 * One request over a real socket. `path` is sent exactly as given (no normalisation, no
 * re-encoding), so tests control every byte of the request target. Rejects on a hang (no complete
 * answer within `timeoutMs`) or a cut connection.
 */
export function send(port: number, path: string, options: SendOptions = {}): Promise<RawResponse> {
  const timeoutMs = options.timeoutMs ?? HANG_TIMEOUT_MS;
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: '127.0.0.1', port, path, method: options.method ?? 'GET', headers: options.headers, agent: options.agent ?? false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          clearTimeout(timer);
          const body = Buffer.concat(chunks);
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body, text: body.toString('utf8') });
        });
        res.on('error', (err) => {
          clearTimeout(timer);
          reject(err);
        });
        res.on('aborted', () => {
          clearTimeout(timer);
          reject(new Error(`${options.method ?? 'GET'} ${path.slice(0, 200)}: connection cut mid-response`));
        });
      },
    );
    const timer = setTimeout(() => {
      req.destroy(new Error(`${options.method ?? 'GET'} ${path.slice(0, 200)}: no answer within ${timeoutMs} ms (hang)`));
    }, timeoutMs);
    req.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    req.end();
  });
}

/** Parses a JSON body, failing with the body in the message when it is not JSON. */
export function jsonBody(res: RawResponse): unknown {
  try {
    return JSON.parse(res.text) as unknown;
  } catch {
    throw new Error(`expected a JSON body, got status ${res.status}: ${res.text.slice(0, 300)}`);
  }
}

/** Runs `worker` over `items` with at most `concurrency` in flight; results in input order. */
export async function mapConcurrent<T, R>(
  items: readonly T[],
  concurrency: number,
  worker: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  async function lane(): Promise<void> {
    while (next < items.length) {
      const i = next++;
      results[i] = await worker(items[i] as T, i);
    }
  }
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, lane));
  return results;
}

export { prng } from '../helpers/prng';

/** Percent-encodes every byte of `bytes`, so that raw and invalid UTF-8 reach the query parser as is. */
export function encodeBytes(bytes: Uint8Array): string {
  let out = '';
  for (const b of bytes) out += `%${b.toString(16).padStart(2, '0').toUpperCase()}`;
  return out;
}

/**
 * A query-string value for a template. Lone surrogates cannot be percent-encoded as UTF-8; they are
 * sent as the bytes Node would write for them (U+FFFD), which is what a client can send at best.
 */
export function q(template: string): string {
  try {
    return encodeURIComponent(template);
  } catch {
    return encodeBytes(Buffer.from(template, 'utf8'));
  }
}

/** Waits for `ms` milliseconds. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
