import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import request from 'supertest';
import type { Registry, RegistryContentType } from 'prom-client';
import { createMetricsRouter, type MetricsRouterOptions } from '../../../lib/metrics';
import { parseExposition, type Exposition } from './exposition-parser';

/** An Express app serving `registry` at `/metrics` through the router under test. */
export function metricsApp(registry: Registry<RegistryContentType>, options?: MetricsRouterOptions): express.Express {
  const app = express();
  app.use(createMetricsRouter(registry, options));
  return app;
}

/** Scrapes `/metrics` over a real socket, asserts a 200 and returns the parsed exposition. */
export async function scrape(app: express.Express): Promise<Exposition> {
  const res = await request(app).get('/metrics');
  if (res.status !== 200) throw new Error(`scrape answered ${res.status}: ${res.text}`);
  return parseExposition(res.text);
}

/** A listening server on 127.0.0.1 with an ephemeral port. */
export interface Listening {
  readonly origin: string;
  close(): Promise<void>;
}

/** Starts `app` on 127.0.0.1:0. */
export function listen(app: express.Express): Promise<Listening> {
  return new Promise((resolve, reject) => {
    const server = http.createServer(app);
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      resolve({
        origin: `http://127.0.0.1:${port}`,
        close: () =>
          new Promise<void>((done, fail) => {
            server.closeAllConnections();
            server.close((err) => (err ? fail(err) : done()));
          }),
      });
    });
  });
}

/** The raw answer of {@link rawRequest}: bytes exactly as sent, nothing decoded. */
export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/** One request with node:http, so compressed bodies and HEAD answers are seen exactly as sent. */
export function rawRequest(url: string, method: string, headers: Record<string, string> = {}): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}
