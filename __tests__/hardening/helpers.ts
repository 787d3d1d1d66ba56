import express from 'express';
import http from 'node:http';
import { createIntrospectionRouter, type IntrospectionRouter, type IntrospectionRouterOptions } from '../../lib/introspection/router';
import type { IntrospectionState } from '../../lib/state/types';
import { listen } from '../helpers/http';

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
  /** A guard mounted in front of the router, as a host mounts one (`createAccessGuard`, `createKubeAuth`). */
  guard?: express.RequestHandler;
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
  if (options.guard) app.use(options.guard);
  app.use(router);
  options.extra?.(app);
  const served = await listen(app, { maxHeaderSize: options.maxHeaderSize, backlog: options.backlog });
  const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });
  let closed = false;
  return {
    router,
    server: served.server,
    app,
    port: served.port,
    base: served.origin,
    agent,
    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      agent.destroy();
      await router.close();
      await served.close();
    },
  };
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
