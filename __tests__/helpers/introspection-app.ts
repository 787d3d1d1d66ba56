import express from 'express';
import { createIntrospectionRouter, type IntrospectionRouterOptions } from '../../lib/introspection/router';
import type { IntrospectionState } from '../../lib/state/types';

const open: { close(): Promise<void> }[] = [];

/**
 * An Express app with the introspection router mounted (profiling off unless asked for), to serve
 * with `listen()` from ./http. Routers are closed by {@link closeIntrospectionApps}, which test
 * files call in afterAll.
 */
export function introspectionApp(state: IntrospectionState, options: IntrospectionRouterOptions = {}): express.Express {
  const router = createIntrospectionRouter(state, { pprof: false, ...options });
  open.push(router);
  const app = express();
  app.use(router);
  return app;
}

/** Closes every router {@link introspectionApp} made. */
export async function closeIntrospectionApps(): Promise<void> {
  await Promise.all(open.splice(0).map((r) => r.close()));
}
