import type http from 'node:http';
import type net from 'node:net';
import express from 'express';
import { createIntrospectionRouter, type IntrospectionRouter, type IntrospectionRouterOptions } from '../../lib/introspection/router';
import { createIntrospectionState } from '../../lib/state/store';
import type { IntrospectionStateOptions } from '../../lib/state/store';
import type { IntrospectionState } from '../../lib/state/types';
import { eventually } from './eventually';
import { listen, open, request } from './http';

/** A state and an introspection router (without pprof) listening on a free port. */
export interface Served {
  state: IntrospectionState;
  router: IntrospectionRouter;
  port: number;
  /** The server's side of every connection accepted so far. */
  sockets: Set<net.Socket>;
  close(): Promise<void>;
}

const servers: Served[] = [];

/** Closes every server {@link serve} started (call from `afterAll`). */
export async function closeWatchServers(): Promise<void> {
  await Promise.all(servers.splice(0).map((s) => s.close()));
}

/** Serves a new state's router; stopped by {@link closeWatchServers}. */
export async function serve(
  routerOptions: IntrospectionRouterOptions = {},
  stateOptions: IntrospectionStateOptions = {},
  guard?: express.RequestHandler,
): Promise<Served> {
  const state = createIntrospectionState(stateOptions);
  const router = createIntrospectionRouter(state, { pprof: false, ...routerOptions });
  const app = express();
  if (guard) app.use(guard);
  app.use(router);
  const listening = await listen(app);
  const sockets = new Set<net.Socket>();
  listening.server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  const served: Served = {
    state,
    router,
    port: listening.port,
    sockets,
    close: async () => {
      await router.close();
      await listening.close();
    },
  };
  servers.push(served);
  return served;
}

/** An open watch: the lines (or SSE blocks) received so far, as they arrive. */
export interface Watch {
  status: number;
  headers: http.IncomingHttpHeaders;
  text(): string;
  lines(): unknown[];
  until(what: string, check: (text: string) => boolean, timeoutMs?: number): Promise<void>;
  ended: Promise<void>;
  destroy(): void;
}

/** Opens a watch (or any streaming GET) and collects what arrives. */
export async function watch(port: number, path: string, headers: Record<string, string> = {}): Promise<Watch> {
  const res = await open(`http://127.0.0.1:${port}${path}`, { headers });
  let body = '';
  res.setEncoding('utf8');
  res.on('data', (chunk: string) => (body += chunk));
  const ended = new Promise<void>((r) => res.on('close', () => r()));
  return {
    status: res.statusCode!,
    headers: res.headers,
    text: () => body,
    lines: () =>
      body
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => JSON.parse(l) as unknown),
    until: async (what, check, timeoutMs = 5000) => {
      await eventually(
        () => {
          if (!check(body)) throw new Error(`got ${JSON.stringify(body.slice(-500))}`);
          return true;
        },
        { timeoutMs, what },
      );
    },
    ended,
    destroy: () => res.destroy(),
  };
}

/** GET a path, parsed as JSON. */
export async function getJson(port: number, path: string): Promise<{ status: number; body: unknown }> {
  const res = await request(`http://127.0.0.1:${port}${path}`);
  return { status: res.status, body: res.json<unknown>() };
}
