import express from 'express';
import { requestApp } from '../../helpers/http';
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
  const res = await requestApp(app, '/metrics');
  if (res.status !== 200) throw new Error(`scrape answered ${res.status}: ${res.text}`);
  return parseExposition(res.text);
}
