/**
 * prom-client, loaded when the metrics first need it rather than when the package loads: a host that
 * mounts only the introspection router needs no prom-client installed. Every value the metrics
 * take from prom-client (its metric classes, `collectDefaultMetrics`) comes through here.
 */
import type * as PromClient from 'prom-client';

/** The prom-client major this package reads through its storage; another one is read through `get()`. */
export const TRUSTED_PROM_CLIENT_MAJOR = 15;

/** prom-client's module and its major version, once loaded. */
interface Loaded {
  readonly module: typeof PromClient;
  readonly major: number | undefined;
}

let loaded: Loaded | undefined | null;

/** prom-client as `require('prom-client')` resolves it from this package, or undefined when it is not installed. */
export function installedPromClient(): Loaded | undefined {
  if (loaded === undefined) {
    try {
      /* eslint-disable @typescript-eslint/no-require-imports -- loaded on first use so that introspection-only hosts need no prom-client */
      const module = require('prom-client') as typeof PromClient;
      const { version } = require('prom-client/package.json') as { version?: unknown };
      /* eslint-enable @typescript-eslint/no-require-imports */
      const major = typeof version === 'string' ? Number.parseInt(version, 10) : NaN;
      loaded = { module, major: Number.isInteger(major) ? major : undefined };
    } catch {
      loaded = null;
    }
  }
  return loaded ?? undefined;
}

/**
 * prom-client's module, for `where` (a function of this package) that cannot work without it.
 *
 * @throws Error saying what to install when prom-client cannot be loaded.
 */
export function promClient(where: string): typeof PromClient {
  const found = installedPromClient();
  if (found === undefined) {
    throw new Error(`${where} needs prom-client 15, a peer dependency of controller-introspection: npm install prom-client`);
  }
  return found.module;
}
